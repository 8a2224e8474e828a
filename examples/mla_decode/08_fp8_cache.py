"""Step 8 (optional): the FP8 cache: 656 bytes a token instead of 1152.

Decode reads the whole cache once per call, so at a memory-bound point the cache's bytes
set the floor. FlashMLA's FP8 layout (``kernelopt.kernels.mla.fp8``) packs a token's 512
latent values as e4m3 bytes with one float32 scale per 128 values, and keeps the 64 RoPE
values in bfloat16: 0.57 of a bfloat16 cache's bytes.

This step measures the two things that decide whether to use it, separately:

1. What quantizing costs. The float64 reference reads the packed bytes exactly, so
   ``ref(packed)`` against ``ref(cache)`` is the quantization error alone, with no kernel
   rounding in it (a few percent of the output's norm on random normal data).
2. What the kernel does with the bytes. The split-KV strategy planned with
   ``kv_fp8=True`` dequantizes each tile in registers; it is checked against
   ``ref(packed)`` (the bytes it reads) with the same bound as every other kernel, then
   A/B'd with ``compare`` against the same strategy on the 16-bit cache.

The result is written at its own trial point (``… kv=fp8``): a new cache format is a new
quantity, not a faster or slower version of the 16-bit kernel, and ``diagnose`` reads it
that way (last section).

Run: ``python examples/mla_decode/08_fp8_cache.py [--log DIR] [--gpu|--cpu]``.
"""

from __future__ import annotations

import statistics

import _steps

S = _steps.setup(8, __doc__ or "")

from kernelopt.bench import append_rows, compare, to_result_row, write_experiment
from kernelopt.catalog import Catalog
from kernelopt.diagnose import diagnose
from kernelopt.kernels.mla import FP8_KV_BYTES, mla_decode_ref, quantize_kv_fp8

# Quantizing moves outputs by a few percent on random data (e4m3 keeps three mantissa bits):
# more than this means the layout or the scales are wrong, not that FP8 is coarse.
QUANTIZATION_BOUND = 0.06

ceilings = S.ceilings()
rows, bench, speedups, verdicts, compared, costs = [], [], [], [], [], []
entry = Catalog.builtin().get("fp8-kv-cache")
print(f"   catalog: {entry.name} ({entry.id}); when to apply:")
for context in entry.contexts[:2]:
    print(f"     - {context}")

for index, point in enumerate(S.points()):
    name = f"{point} kv=fp8"
    _steps.banner(f"{point.name} {name} (page {S.page})")
    x = _steps.make_inputs(S, point, seed=1000 + index)
    packed = quantize_kv_fp8(x["kv_cache"])  # [pages, page, 1, 656] uint8
    x8 = {**x, "kv_cache": packed}
    ref = mla_decode_ref(
        x["q"], x["kv_cache"], x["block_table"], x["cache_seqlens"],
        softmax_scale=_steps.SOFTMAX_SCALE,
    )  # fmt: skip
    ref8 = mla_decode_ref(
        x["q"], packed, x["block_table"], x["cache_seqlens"], softmax_scale=_steps.SOFTMAX_SCALE
    )
    cost = _steps.rel_err(ref8[0], ref[0])
    costs.append(cost)
    print(
        f"   cache: {x['kv_cache'].element_size() * x['kv_cache'].shape[-1]} → "
        f"{packed.shape[-1]} bytes a token; quantizing moves the float64 output by "
        f"{cost:.2%} of its norm"
    )
    if not cost <= QUANTIZATION_BOUND:
        raise SystemExit(
            f"Expected the FP8 cache within {QUANTIZATION_BOUND:.0%} of the 16-bit cache's "
            f"output at {name}, got {cost:.2%}"
        )
    dense = _steps.check_plan(
        S, point, x, ref, strategy="split_kv", impl="triton_split_kv", ceilings=ceilings,
        time=False,
    )  # fmt: skip
    fp8 = _steps.check_plan(
        S, point, x8, ref8, strategy="split_kv", impl="triton_split_kv_fp8", ceilings=ceilings,
        time=False, kv_fp8=True, kv_row_bytes=FP8_KV_BYTES,
    )  # fmt: skip
    print(
        f"   correct: 16-bit out {dense.err_out:.1e} lse {dense.err_lse:.1e} (vs ref(cache)); "
        f"FP8 out {fp8.err_out:.1e} lse {fp8.err_lse:.1e} (vs ref(packed))"
    )
    print(f"   FP8 config {fp8.plan.config}")
    result = compare(
        dense.run,
        fp8.run,
        timer=S.timer(),
        outputs=dense.outputs,
        candidate_outputs=fp8.outputs,
        label=f"{name} ",
        **S.compare_limits(),
    )
    assert result.baseline is not None and result.candidate is not None
    print(f"   {_steps.verdict_words(result, candidate='FP8', baseline='16-bit')}")
    speedups.append(result.speedup)
    verdicts.append(result.verdict)
    compared.append(point)
    if fp8.roofline is not None:
        placed = fp8.roofline.place(result.candidate)
        print(
            f"   FP8: {placed.bytes_per_s / 1e9:.0f} GB/s, {placed.floor_pct:.1f}% of the FP8 "
            f"floor ({fp8.roofline.floor('us'):.1f} us)"
        )
    _steps.cpu_note(S)
    # The row states a speedup only where the A/B found one (FAST or SLOW): a SAME or
    # UNCLEAR ratio is noise, and diagnose would read it as this new point's gain.
    rows.append(
        to_result_row(
            result.candidate, point=name, impl="triton_split_kv_fp8", floor=fp8.roofline,
            speedup=_steps.judged_speedup(result),
        )
    )  # fmt: skip
    bench += [
        _steps.bench_row(S, dense, result.baseline, impl="triton_split_kv"),
        _steps.bench_row(
            S, fp8, result.candidate, impl="triton_split_kv_fp8", config={"kv": "fp8"}
        ),
    ]

append_rows(S.bench_rows, bench)

# %% ------------------------------------------------------------------------------------
# The log. The FP8 path is an option (plans with kv_fp8=True read it; the 16-bit kernel in
# kernels/mla_decode.py does not change); the status says what its A/Bs found, by the rule
# of steps 4 and 6 (_steps.status_of): KEPT when some point is FAST and none SLOW, NEUTRAL
# when every point is SAME or UNCLEAR, else the geometric mean decides.
_steps.banner("Writing the log")
gain = statistics.geometric_mean(speedups)
status = _steps.status_of(verdicts, speedups)
write_experiment(
    S.experiments,
    experiment=_steps.EXP_FP8,
    title="FP8 cache (656 bytes a token) read by the split-KV kernel",
    rows=rows,
    status=status,
    correctness="PASS",
    correctness_detail=(
        f"{_steps.correctness_words(S)}, against float64 on the same FP8 bytes; quantizing "
        f"itself moves the output by {min(costs):.2%}-{max(costs):.2%}"
    ),
    gpu=S.where,
    kernel="kernelopt/kernels/mla/split_kv.py (kv_fp8=True)",
    baseline="triton_split_kv on the 16-bit cache (exp 3)",
    tags=["fp8-kv-cache"],
    knobs={"BLOCK_N": fp8.plan.config.block_n, "num_warps": fp8.plan.config.num_warps},
    verdict=_steps.verdict_line(compared, verdicts),
    notes=(
        f"kernelopt.bench.compare against the same strategy on the 16-bit cache; "
        f"geometric-mean speedup {gain:.3g}x. A row states its speedup only where its "
        "verdict is FAST or SLOW. The FP8 cache is an option (kv_fp8=True): the 16-bit "
        "kernel is unchanged."
        + ("" if S.gpu else " CPU path: interpreter speeds, float16 queries.")
    ),
)
print(
    f"   verdicts: {_steps.verdict_line(compared, verdicts)}; "
    f"geometric-mean speedup {gain:.3g}x → {status}"
)
print(f"   wrote experiments/exp_{_steps.EXP_FP8}/result.md")

# %% ------------------------------------------------------------------------------------
# What diagnose makes of it. Exp 6's headline is at the kv=fp8 point, so it is never
# compared with the 16-bit headlines. Kept, its gain is what its own A/B row states over
# the 16-bit kernel it started from (a speedup S saves 1 - 1/S of the time): a speedup
# above 1 is a gain at the new point; none (an A/B inside the noise) or one at or below 1
# makes the experiment a new capability, neither a new best nor an attempt that failed to
# move one, so it does not lengthen a stall. Neutral or reverted, it is an attempt that
# moved nothing.
_steps.banner("Diagnosis with the FP8 experiment in the log")
summary = diagnose(S.log, catalog=S.knowledge).summary
gains = {t.experiment: t.gain for t in summary.trajectory}
best = summary.best
if best is not None:
    print(f"   best so far: exp {best.experiment} {best.value:g} {best.unit} at {best.point}")
exp = _steps.EXP_FP8
if exp in gains:
    print(f"   exp {exp}: a gain of {gains[exp] or 0.0:+.1%} at its own point (its A/B row)")
elif exp in summary.stall:
    print(f"   exp {exp}: counted as an attempt without a gain")
else:
    print(
        f"   exp {exp}: a new trial point without a gain of its own: the first result there, "
        "not an attempt in the stall"
    )
print(f"   attempts in the trailing stall: {list(summary.stall) or 'none'}")

_steps.finish(S)  # last: later steps build on this log from here on
