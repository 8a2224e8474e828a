"""Step 6: the Hopper strategy: the same schedule and merge, a kernel shaped for the H100/H200.

``MLADecodePlan(strategy="hopper")`` (``kernelopt/kernels/mla/hopper.py``) keeps split-KV's
pieces and LSE merge and changes how a program walks its keys; its module docstring gives
the H200 measurements behind each change:

1. Key tiles through tensor descriptors (the tensor memory accelerator copies a
   ``BLOCK_N × 576`` box of the cache, viewed as ``[pages · page, 576]``, into shared
   memory). The pointer version kept a 64 × 512 tensor of 64-bit addresses per tile in
   registers. A tile must lie in one page: the page size is a multiple of ``BLOCK_N``.
2. QKᵀ computed once per 64-row tile instead of by both warpgroups of the program.
3. 64-key tiles with two pipeline stages, filling the shared memory a program may use.

It needs a full 64-row tile: with fewer than 33 query rows per sequence (s_q · h_q, e.g.
h_q = 16 at s_q = 1) the plan runs the split-KV kernel instead. On the CPU path this step
uses h_q = 40 and page 64 so that the tensor-descriptor code runs in the interpreter.

Run: ``python examples/mla_decode/06_hopper_kernel.py [--log DIR] [--gpu|--cpu]``.
"""

from __future__ import annotations

import statistics

import _steps

S = _steps.setup(6, __doc__ or "")

from kernelopt.bench import (
    TrialPoint,
    append_rows,
    compare,
    to_result_row,
    write_experiment,
)
from kernelopt.kernels.mla import mla_decode_ref
from kernelopt.kernels.mla.hopper import MIN_ROWS

ceilings = S.ceilings()
if S.gpu:
    points, page = S.points(), S.page
else:
    points, page = (TrialPoint(name="hopper-cpu", b=1, s=1, t=128, extra={"h": 40}),), 64
rows, bench, verdicts, speedups, compared = [], [], [], [], []

for index, point in enumerate(points):
    _steps.banner(f"{point.name} {point} (page {page})")
    query_rows = point.s * point.extra["h"]
    if query_rows < MIN_ROWS:
        print(
            f"   {query_rows} query rows per sequence < {MIN_ROWS}: strategy 'hopper' runs the "
            "split-KV kernel here (16-row tiles use mma.sync, where nothing is replicated): "
            "nothing to compare."
        )
        continue
    x = _steps.make_inputs(S, point, seed=900 + index, page=page)
    ref = mla_decode_ref(
        x["q"],
        x["kv_cache"],
        x["block_table"],
        x["cache_seqlens"],
        softmax_scale=_steps.SOFTMAX_SCALE,
    )
    split = _steps.check_plan(
        S, point, x, ref, strategy="split_kv", impl="triton_split_kv", ceilings=ceilings, time=False
    )
    hopper = _steps.check_plan(
        S, point, x, ref, strategy="hopper", impl="triton_hopper", ceilings=ceilings, time=False
    )
    print(
        f"   correct: split-KV out {split.err_out:.1e} lse {split.err_lse:.1e}; hopper out "
        f"{hopper.err_out:.1e} lse {hopper.err_lse:.1e} (vs float64)"
    )
    print(f"   split-KV config {split.plan.config}\n   hopper   config {hopper.plan.config}")
    result = compare(
        split.run,
        hopper.run,
        timer=S.timer(),
        outputs=split.outputs,
        candidate_outputs=hopper.outputs,
        label=f"{point} ",
        **S.compare_limits(),
    )
    assert result.baseline is not None and result.candidate is not None
    verdicts.append(result.verdict)
    speedups.append(result.speedup)
    compared.append(point)
    print(f"   {_steps.verdict_words(result, candidate='hopper', baseline='split-KV')}")
    if hopper.roofline is not None:
        placed = hopper.roofline.place(result.candidate)
        print(
            f"   hopper: {placed.flop_per_s / 1e12:.1f} TFLOP/s, "
            f"{placed.bytes_per_s / 1e9:.0f} GB/s, {placed.floor_pct:.1f}% of the floor "
            f"({hopper.roofline.floor('us'):.1f} us)"
        )
    _steps.cpu_note(S)
    # The row states a speedup only where the A/B found one (FAST or SLOW): a SAME or
    # UNCLEAR ratio is noise, and diagnose would read it as this point's gain.
    rows.append(
        to_result_row(
            result.candidate,
            point=point,
            impl="triton_hopper",
            floor=hopper.roofline,
            speedup=_steps.judged_speedup(result),
        )
    )
    bench += [
        _steps.bench_row(S, split, result.baseline, impl="triton_split_kv"),
        _steps.bench_row(S, hopper, result.candidate, impl="triton_hopper"),
    ]

append_rows(S.bench_rows, bench)

_steps.banner("Writing the log")
gain = statistics.geometric_mean(speedups)
status = _steps.status_of(verdicts, speedups)
verdict_text = _steps.verdict_line(compared, verdicts)
write_experiment(
    S.experiments,
    experiment=_steps.EXP_HOPPER,
    title="Hopper kernel: tensor-descriptor key tiles, QK^T computed once, 64-key tiles",
    rows=rows,
    status=status,
    correctness="PASS",
    correctness_detail=_steps.correctness_words(S),
    gpu=S.where,
    kernel="kernels/mla_decode.py",
    baseline="triton_split_kv (exp 3)",
    tags=["block-pointers-tma"],
    knobs={"BLOCK_N": hopper.plan.config.block_n, "page": page},
    verdict=verdict_text,
    notes=f"kernelopt.bench.compare against split-KV; geometric-mean speedup {gain:.3g}x."
    + (
        ""
        if S.gpu
        else " CPU path: h_q=40 and page 64 so the tensor-descriptor code runs; interpreter speeds."
    ),
)
_steps.snapshot_kernel(
    "kernelopt.kernels.mla.hopper",
    [S.experiments / f"exp_{_steps.EXP_HOPPER}" / "mla_decode.py"]
    + ([S.log / "kernels" / "mla_decode.py"] if status == "KEPT" else []),
    experiment=_steps.EXP_HOPPER,
)
print(f"   verdicts: {verdict_text}; geometric-mean speedup {gain:.3g}x → {status}")
print(f"   wrote experiments/exp_{_steps.EXP_HOPPER}/result.md")

_steps.finish(S)  # last: later steps build on this log from here on
