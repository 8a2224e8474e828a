"""Step 2: the naive Triton kernel: correct first, then timed and placed on the roofline.

The naive kernel (``MLADecodePlan(strategy="naive")``, ``kernelopt/kernels/mla/naive.py``)
is the simplest kernel worth trusting: one program per (tile of up to 64 query rows, one
sequence) walks all keys of its sequence through the block table with an online softmax.
Its memory traffic, per call::

    every program reads its whole sequence: Σ seqlen · 576 · elt · ceil(s_q · h_q / 64)
    programs started: b · ceil(s_q · h_q / 64)       (b = 32 → 32 to 1024 programs)

so at s_q · h_q ≤ 64 only b = 32 programs run, on a GPU with 132 multiprocessors.

This step writes experiments 1 (torch eager, the baseline) and 2 (the naive kernel) with
``kernelopt.bench.write_experiment``, keeps every timing as a ``BenchRow`` in
``runs/bench.jsonl``, and on a GPU writes the profile hand-off to ``experiments/profile.md``.

Run: ``python examples/mla_decode/02_naive_kernel.py [--log DIR] [--gpu|--cpu]``.
"""

from __future__ import annotations

import statistics

import _steps

S = _steps.setup(2, __doc__ or "")

from kernelopt.bench import (
    BenchRow,
    Ceilings,
    Measurement,
    Roofline,
    TrialPoint,
    append_rows,
    check_written,
    mla_decode_cost,
    profile_report,
    to_result_row,
    write_experiment,
)
from kernelopt.experiments import ResultRow
from kernelopt.kernels.mla import MLADecodePlan, mla_decode_ref

POINTS = S.points()
SCALE = _steps.SOFTMAX_SCALE
BOUND = _steps.ERR_BOUND[S.dtype_name]

# %% ------------------------------------------------------------------------------------
# Ceilings: what this device can do, measured on it (a 1 GiB device-to-device copy and a
# bf16 8192³ matmul on random data; cached per GPU). The roofline floor of a call is
#
#     floor = max(FLOPs / matmul rate, bytes / copy bandwidth)
#
# and no version doing the same work runs much faster. On the CPU there is no GPU to
# measure: no ceilings, no fraction of the floor. For scale only, the floors below use this
# project's H200 ceilings, labelled as such.
_steps.banner("Ceilings")
ceilings = S.ceilings()
if ceilings is not None:
    print(
        f"   {ceilings.gpu}: copy {ceilings.copy_tb_s:.2f} TB/s, matmul "
        f"{ceilings.matmul_tflop_s:.0f} TFLOP/s, ridge {ceilings.ridge:.0f} FLOP/byte "
        "(measured on this device)"
    )
    reference = ceilings
else:
    reference = Ceilings(
        gpu="NVIDIA H200 (reference values)",
        copy_bytes_per_s=_steps.H200_COPY_BYTES_PER_S,
        matmul_flop_per_s=_steps.H200_MATMUL_FLOP_PER_S,
        source=_steps.H200_SOURCE,
    )
    print("   [CPU] No ceilings: there is no GPU here, so no time below is placed on a roofline.")
    print(
        f"   For scale only: an H200 ({reference.copy_tb_s:.2f} TB/s, "
        f"{reference.matmul_tflop_s:.0f} TFLOP/s; {_steps.H200_SOURCE}) would need at least:"
    )
for point in POINTS:
    cost = mla_decode_cost(b=point.b, s_q=point.s, h_q=point.extra["h"], seqlens=point.t)
    scale = Roofline(ceilings=reference, cost=cost)
    print(
        f"     {point}: {cost.flops / 1e9:8.3g} GFLOP, {cost.bytes / 1e6:7.3g} MB, "
        f"{cost.arith_intensity:5.0f} FLOP/B → floor {scale.floor('us'):8.3g} us "
        f"({scale.bound}-bound)"
    )


# %% ------------------------------------------------------------------------------------
# One trial point: random inputs with shuffled pages, the float64 reference, then each
# implementation checked before it is timed. The outputs are caller-owned and poisoned
# with NaN before the call (check_written): a kernel that skips a row leaves NaN behind and
# fails, instead of passing on what the previous call happened to leave there.
def evaluate(point: TrialPoint, seed: int) -> tuple[Measurement, Measurement, Roofline | None]:
    """Check and time torch eager and the naive kernel at ``point``; print what was found."""
    x = _steps.make_inputs(S, point, seed=seed)
    ref_out, ref_lse = mla_decode_ref(
        x["q"], x["kv_cache"], x["block_table"], x["cache_seqlens"], softmax_scale=SCALE
    )
    cost = mla_decode_cost(
        b=point.b, s_q=point.s, h_q=point.extra["h"], seqlens=point.t, elt_bytes=S.dtype.itemsize
    )
    line = None if ceilings is None else Roofline(ceilings=ceilings, cost=cost)

    # The baseline: torch eager over the cache gathered densely beforehand (outside the
    # timing, as the anchors' eager peer does: this flatters eager a little).
    dense, visible = _steps.dense_kv(x)
    eager_err = _steps.rel_err(_steps.eager_decode(x["q"], dense, visible, SCALE), ref_out)
    eager = S.timer().measure(
        lambda: _steps.eager_decode(x["q"], dense, visible, SCALE), label="torch_eager"
    )

    # The naive kernel. Plan once (it reads the lengths on the host), run per call.
    plan = MLADecodePlan(
        x["cache_seqlens"],
        s_q=point.s,
        h_q=point.extra["h"],
        page_size=S.page,
        softmax_scale=SCALE,
        dtype=S.dtype,
        device=S.device,
        strategy="naive",
    )
    out, lse = _steps.outputs_for(x)

    def run() -> object:
        return plan.run(x["q"], x["kv_cache"], x["block_table"], out=out, lse=lse)

    check_written(run, (out, lse))
    err_out, err_lse = _steps.rel_err(out, ref_out), _steps.rel_err(lse, ref_lse)
    print(
        f"   correctness: naive out {err_out:.1e}, lse {err_lse:.1e}; eager out {eager_err:.1e} "
        f"(‖x − ref‖ / ‖ref‖ vs float64, bound {BOUND:.0e})"
    )
    assert err_out <= BOUND and err_lse <= BOUND and eager_err <= BOUND

    naive = S.timer().measure(run, outputs=(out, lse), label="triton_naive")
    for name, m in (("torch_eager", eager), ("triton_naive", naive)):
        text = f"   {name:13} {m.summary()}"
        if line is not None:
            placed = line.place(m)
            text += (
                f"  {placed.flop_per_s / 1e12:6.1f} TFLOP/s  {placed.bytes_per_s / 1e9:6.0f} "
                f"GB/s  {placed.floor_pct:4.1f}% of floor"
            )
        print(text)
    print(f"   naive vs eager: {eager.seconds / naive.seconds:.3g}x")
    _steps.cpu_note(S)
    for impl, m, err in (("torch_eager", eager, eager_err), ("triton_naive", naive, err_out)):
        note = f"rel err {err:.1e} vs float64"
        bench.append(_steps.timing_row(S, m, impl=impl, point=point, line=line, note=note))
    return eager, naive, line


eager_rows: list[ResultRow] = []
naive_rows: list[ResultRow] = []
bench: list[BenchRow] = []
speedups: list[float] = []
for index, point in enumerate(POINTS):
    _steps.banner(f"{point.name} {point}")
    eager, naive, line = evaluate(point, seed=10 + index)
    speedups.append(eager.seconds / naive.seconds)
    eager_rows.append(to_result_row(eager, point=point, impl="torch_eager", floor=line))
    naive_rows.append(
        to_result_row(naive, point=point, impl="triton_naive", floor=line, speedup=eager)
    )
    if line is not None and index == 0:
        # PROFILE: the hand-off a profiler returns (roofline, bottleneck, the catalog's
        # opportunities for these metrics), kept as the log's experiments/profile.md.
        report = profile_report(
            kernel="mla_decode",
            version="naive",
            point=point,
            measurement=naive,
            roofline=line,
            baseline=eager,
        )
        (S.experiments / "profile.md").write_text(report.render(), encoding="utf-8")

append_rows(S.bench_rows, bench)

# %% ------------------------------------------------------------------------------------
# The log. Experiment 1 is the baseline; experiment 2 is kept when the naive kernel beats
# it on the geometric mean over the trial points, reverted otherwise. Its tags name the
# catalog techniques the naive kernel already uses (a careful log says what was tried):
# an online softmax, the paged cache walked through the block table, all s_q·h_q rows of
# a sequence stacked into one MMA tile, and one key tile serving as both K and V.
_steps.banner("Writing the log")
gain = statistics.geometric_mean(speedups)
status = "KEPT" if gain > 1.0 else "REVERTED"
cpu_words = "" if S.gpu else " CPU path: Triton-interpreter timings, meaningless for GPU speed."
# Experiment 1 names the code it timed (_steps.eager_decode; kernels/mla_ref.py is the
# reference it is checked against) and, on the CPU path, the CPU: torch eager runs as
# ordinary torch there, not in the Triton interpreter.
_steps.write_eager_baseline(
    S,
    eager_rows,
    notes="The cache is gathered densely outside the timing."
    + ("" if S.gpu else " CPU path: torch on the CPU, meaningless for GPU speed."),
)
write_experiment(
    S.experiments,
    experiment=_steps.EXP_NAIVE,
    title="naive Triton MLA decode: one program per row tile and sequence, online softmax",
    rows=naive_rows,
    status=status,
    correctness="PASS",
    correctness_detail=f"out and lse rel err <= {BOUND:.0e} vs float64, outputs NaN-poisoned",
    gpu=S.where,
    kernel="kernels/mla_decode.py",
    baseline="torch_eager",
    tags=["online-softmax", "paged-kv-cache", "head-grouping-mma-tile", "kv-tile-shared-load"],
    knobs={"BLOCK_N": 32, "max_BLOCK_M": 64},  # BLOCK_M = min(64, s_q·h_q rounded up)
    notes=f"Geometric-mean speedup over torch eager: {gain:.3g}x." + cpu_words,
)
# The kernel as it stands, and as experiment 2 ran it: what a reader of the log checks.
_steps.snapshot_kernel(
    "kernelopt.kernels.mla.naive",
    [S.log / "kernels" / "mla_decode.py", S.experiments / "exp_2" / "mla_decode.py"],
    experiment=_steps.EXP_NAIVE,
)
print(f"   naive vs eager, geometric mean over {len(POINTS)} points: {gain:.3g}x → {status}")
if not S.gpu:
    print(
        "   [CPU] The interpreter runs each Triton program in Python: eager torch wins here, "
        "which says nothing about a GPU."
    )
print("   wrote experiments/exp_1/result.md, experiments/exp_2/result.md, summary.md")
if ceilings is not None:
    print("   wrote experiments/profile.md:\n")
    print((S.experiments / "profile.md").read_text(encoding="utf-8"))
else:
    print("   [CPU] No experiments/profile.md: a profile needs ceilings, and there are none here.")

_steps.finish(S)  # last: later steps build on this log from here on
