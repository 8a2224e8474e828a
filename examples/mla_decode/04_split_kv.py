"""Step 4: split-KV (flash-decoding), the fundamental the diagnosis named, verified and A/B'd.

The plan of step 3 (``experiments/exp_3/plan.md``) says: split each sequence's keys into
pieces so that more programs run, and merge their partial results by their LSEs. The
split-KV strategy (``MLADecodePlan(strategy="split_kv")``, ``kernelopt/kernels/mla/
split_kv.py``) does both:

    programs  = Σ_i pieces_i · ceil(s_q · h_q / BLOCK_M)      (pieces chosen by a wave model)
    piece j of sequence i → o_j [rows, 512] (fp32, normalized) and lse_j [rows] (base 2)
    merge:  lse = log2 Σ_j 2^lse_j ,   o = Σ_j 2^(lse_j − lse) · o_j

Extra traffic for the merge, per call: 2 · pieces · rows · (512 + 1) · 4 bytes of fp32
partials, written once and read once; small next to Σ seqlen · 576 · 2 bytes of cache.

VERIFY: each version checked against the float64 reference (outputs NaN-poisoned), then
``kernelopt.bench.compare`` times the two in alternation and judges FAST / SLOW / SAME /
UNCLEAR against the spread of the baseline timed twice (A, B, A'). LEARN: the verdict
becomes evidence in the knowledge tree of the log (``LOG/docs/knowledge``), never in the
built-in catalog.

Run: ``python examples/mla_decode/04_split_kv.py [--log DIR] [--gpu|--cpu]``.
"""

from __future__ import annotations

import statistics

import _steps

S = _steps.setup(4, __doc__ or "")

from kernelopt.bench import append_rows, compare, to_result_row, write_experiment
from kernelopt.kernels.mla import mla_decode_ref
from kernelopt.workflow import learn, observe_comparison

POINTS = S.points()
ceilings = S.ceilings()
rows, bench, verdicts, speedups, knobs = [], [], [], [], {}
learned = []

for index, point in enumerate(POINTS):
    _steps.banner(f"{point.name} {point}")
    x = _steps.make_inputs(S, point, seed=100 + index)
    ref = mla_decode_ref(
        x["q"],
        x["kv_cache"],
        x["block_table"],
        x["cache_seqlens"],
        softmax_scale=_steps.SOFTMAX_SCALE,
    )
    # VERIFY, part 1: both versions correct on the same inputs, before any timing.
    naive = _steps.check_plan(
        S, point, x, ref, strategy="naive", impl="triton_naive", ceilings=ceilings, time=False
    )
    split = _steps.check_plan(
        S, point, x, ref, strategy="split_kv", impl="triton_split_kv", ceilings=ceilings, time=False
    )
    schedule = split.plan.schedule
    assert schedule is not None
    print(
        f"   correct: naive out {naive.err_out:.1e} lse {naive.err_lse:.1e}; "
        f"split-KV out {split.err_out:.1e} lse {split.err_lse:.1e} (vs float64)"
    )
    print(
        f"   schedule: {schedule.num_units} pieces for {schedule.batch_size} sequences "
        f"(splits per sequence {sorted(set(schedule.splits))}), {schedule.m_tiles} row "
        f"tile(s) each, workspace {split.plan.workspace_bytes / 1e6:.2f} MB"
    )
    print(f"   config {split.plan.config}")
    knobs[f"splits@{point.name}-h{point.extra['h']}"] = max(schedule.splits)

    # VERIFY, part 2: faster? Paired, alternating timings; outputs poisoned and checked.
    result = compare(
        naive.run,
        split.run,
        timer=S.timer(),
        outputs=naive.outputs,
        candidate_outputs=split.outputs,
        label=f"{point} ",
        **S.compare_limits(),
    )
    verdicts.append(result.verdict)
    speedups.append(result.speedup)
    # The verdict, the time ratio with its 95 % interval, the A vs A spread; the speedup.
    print(f"   {_steps.verdict_words(result, candidate='split-KV', baseline='naive')}")
    if not S.gpu:
        print(
            "   [CPU] This verdict compares interpreter speeds: the interpreter runs programs one "
            "after another, so more programs and a merge kernel cost time here (on a GPU they run "
            "side by side)."
        )
    assert result.baseline is not None and result.candidate is not None
    metrics_before, metrics_after = {}, {}
    if split.roofline is not None:
        placed = split.roofline.place(result.candidate)
        metrics_before = naive.roofline.place(result.baseline).metrics() if naive.roofline else {}
        metrics_after = {**placed.metrics(), **_steps.schedule_metrics(split.plan)}
        print(
            f"   split-KV: {placed.flop_per_s / 1e12:.1f} TFLOP/s, "
            f"{placed.bytes_per_s / 1e9:.0f} GB/s, {placed.floor_pct:.1f}% of the floor "
            f"({split.roofline.floor('us'):.1f} us)"
        )

    # The row states a speedup only where the A/B found one (FAST or SLOW): a SAME or
    # UNCLEAR ratio is noise, and diagnose would read it as this point's gain.
    rows.append(
        to_result_row(
            result.candidate,
            point=point,
            impl="triton_split_kv",
            floor=split.roofline,
            speedup=_steps.judged_speedup(result),
        )
    )
    bench += [
        _steps.bench_row(S, naive, result.baseline),
        _steps.bench_row(S, split, result.candidate),
    ]

    # LEARN: FAST → an evidence row on split-kv-flash-decoding; SLOW → an anti-pattern
    # derived from it; SAME / UNCLEAR → nothing (a change inside the noise teaches nothing).
    observation = observe_comparison(
        result,
        point=point,
        source=f"runs/bench.jsonl (exp {_steps.EXP_SPLIT_KV}, kernelopt.bench.compare)",
        gpu=S.where,
        before_label="naive",
        after_label="split_kv",
        metrics_before=metrics_before,
        metrics_after=metrics_after,
    )
    outcome = learn(
        observation,
        entry_id="split-kv-flash-decoding",
        knowledge=S.knowledge,
        family="mla-decode",
        language="triton",
        kernel="mla_decode",
        # The CPU path records interpreter timings into this scratch log's own tree, on
        # purpose and labelled (CPU); a real tree takes GPU timings only.
        allow_host_clock=not S.gpu,
    )
    learned.append(outcome)
    print(
        f"   LEARN: {outcome.action.value}"
        + (f" → {outcome.path.relative_to(S.log)}" if outcome.path else "")
    )

append_rows(S.bench_rows, bench)

# %% ------------------------------------------------------------------------------------
# EVALUATE and record (_steps.status_of, as steps 6 and 8 do). Kept when some point is
# FAST and none is SLOW; neutral when every point is SAME or UNCLEAR; when the verdicts
# disagree, the geometric mean of the speedups decides.
_steps.banner("Writing the log")
gain = statistics.geometric_mean(speedups)
status = _steps.status_of(verdicts, speedups)
verdict_text = _steps.verdict_line(POINTS, verdicts)
write_experiment(
    S.experiments,
    experiment=_steps.EXP_SPLIT_KV,
    title="split-KV flash-decoding with an LSE merge (scheduler picks the pieces)",
    rows=rows,
    status=status,
    correctness="PASS",
    correctness_detail=_steps.correctness_words(S),
    gpu=S.where,
    kernel="kernels/mla_decode.py",
    baseline="triton_naive (exp 2)",
    tags=["split-kv-flash-decoding", "split-kv-lse-combine"],
    knobs=knobs,
    verdict=verdict_text,
    notes=f"kernelopt.bench.compare against the naive kernel; geometric-mean speedup {gain:.3g}x."
    + (
        ""
        if S.gpu
        else " CPU path: the verdicts compare Triton-interpreter speeds, not GPU speeds."
    ),
)
_steps.snapshot_kernel(
    "kernelopt.kernels.mla.split_kv",
    [S.experiments / f"exp_{_steps.EXP_SPLIT_KV}" / "mla_decode.py"]
    + ([S.log / "kernels" / "mla_decode.py"] if status == "KEPT" else []),
    experiment=_steps.EXP_SPLIT_KV,
)
print(f"   verdicts: {verdict_text}; geometric-mean speedup {gain:.3g}x → {status}")
print(f"   wrote experiments/exp_{_steps.EXP_SPLIT_KV}/result.md")
for outcome in learned:
    print(f"   {_steps.clip(outcome.summary(), 300)}")
if any(o.path for o in learned):
    print(
        f"   knowledge tree: {S.knowledge.relative_to(S.log)} (index.md regenerated by each write)"
    )
    if not S.gpu:
        print(
            "   [CPU] What LEARN wrote is about interpreter speed and says so in its Config "
            "column: keep this tree in the scratch log, never in your docs/knowledge."
        )

_steps.finish(S)  # last: later steps build on this log from here on
