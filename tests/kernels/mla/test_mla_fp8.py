"""The FP8 cache layout (656 bytes a token) and the split-KV kernel that reads it."""

from __future__ import annotations

import pytest
import torch
from mla_testing import (
    assert_graph_replay_matches,
    assert_matches,
    graph_batch_lengths,
    make_inputs,
    poisoned_outputs,
    rel_err,
    seed_of,
)

from kernelopt import InputError
from kernelopt.kernels.mla import (
    FP8_KV_BYTES,
    MLADecodePlan,
    dequantize_kv_fp8,
    get_mla_metadata,
    mla_decode_bytes,
    mla_decode_naive,
    mla_decode_ref,
    mla_decode_split_kv,
    mla_decode_with_kvcache,
    quantize_kv_fp8,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim > 0:DeprecationWarning"
)
SCALE = 192**-0.5
# e4m3 keeps three mantissa bits: random cache rows move the output by about 3 % against the
# unquantized cache. A kernel that misread the layout (a scale on the wrong group, the RoPE
# bytes as e4m3) lands near 100 %.
QUANTIZATION_BOUND = 0.06


def _rows(n: int, seed: int, spread: float = 4.0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    # Groups of 128 at very different magnitudes, so each needs its own scale.
    mags = torch.exp2(torch.randint(-12, 12, (n, 4), generator=gen).float())
    latent = torch.randn(n, 4, 128, generator=gen) * mags[..., None] * spread
    return torch.cat([latent.reshape(n, 512), torch.randn(n, 64, generator=gen)], dim=1)


def test_layout_is_latent_then_scales_then_rope() -> None:
    kv = _rows(9, seed=1).to(torch.bfloat16)
    packed = quantize_kv_fp8(kv)
    assert packed.dtype == torch.uint8 and packed.shape == (9, FP8_KV_BYTES) == (9, 656)
    scales = packed[:, 512:528].contiguous().view(torch.float32)
    assert scales.shape == (9, 4) and (scales > 0).all()
    # Powers of two, just large enough for the group's largest value.
    assert torch.equal(torch.exp2(torch.log2(scales).round()), scales)
    amax = kv[:, :512].float().reshape(9, 4, 128).abs().amax(-1)
    assert (amax <= 448 * scales).all() and (amax > 224 * scales).all()
    rope = packed[:, 528:].contiguous().view(torch.bfloat16)
    assert torch.equal(rope, kv[:, 512:])
    latent = packed[:, :512].contiguous().view(torch.float8_e4m3fn).float()
    assert torch.equal(
        (latent.reshape(9, 4, 128) * scales[..., None]).reshape(9, 512),
        dequantize_kv_fp8(packed)[:, :512],
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_round_trip_error_is_e4m3_rounding(dtype) -> None:
    kv = _rows(64, seed=2).to(dtype)
    back = dequantize_kv_fp8(quantize_kv_fp8(kv), torch.float64)
    assert back.shape == kv.shape and back.dtype == torch.float64
    x = kv.double()
    scales = quantize_kv_fp8(kv)[:, 512:528].contiguous().view(torch.float32).double()
    step = torch.repeat_interleave(scales, 128, dim=1)  # each value's group scale
    err = (back[:, :512] - x[:, :512]).abs()
    normal = x[:, :512].abs() >= step * 2.0**-6
    # Normal e4m3 values: half an ulp of three mantissa bits; subnormal ones: half a step.
    assert (err[normal] <= x[:, :512].abs()[normal] * 2.0**-4).all()
    assert (err[~normal] <= step[~normal] * 2.0**-10).all()
    assert torch.equal(back[:, 512:], x[:, 512:].to(torch.bfloat16).double())


def test_zero_and_nan_groups() -> None:
    kv = _rows(3, seed=3)
    kv[0, :128] = 0.0
    kv[1, 300] = float("nan")
    back = dequantize_kv_fp8(quantize_kv_fp8(kv))
    assert torch.equal(back[0, :128], torch.zeros(128))
    assert torch.isnan(back[1, 256:384]).all()  # the poisoned group, and only it
    assert torch.isfinite(back[1, :256]).all() and torch.isfinite(back[1, 384:]).all()
    assert torch.isfinite(back[2]).all()
    kv[2, 0] = float("-inf")
    back = dequantize_kv_fp8(quantize_kv_fp8(kv))
    assert torch.isnan(back[2, :128]).all() and torch.isfinite(back[2, 128:]).all()


def test_extreme_magnitudes_keep_the_round_trip_bound() -> None:
    # "Nothing overflows": a group near float32's largest value comes back within e4m3's
    # rounding, and one far below the amax floor (1e-4) within half a subnormal step.
    kv = torch.zeros(2, 576)
    kv[0, :512] = torch.linspace(-1.0, 1.0, 512) * 3.0e38
    kv[1, :512] = torch.linspace(1.0, 2.0, 512) * 1e-9
    packed = quantize_kv_fp8(kv)
    back = dequantize_kv_fp8(packed, torch.float64)
    assert torch.isfinite(back).all()
    x = kv[:, :512].double()
    step = torch.repeat_interleave(packed[:, 512:528].contiguous().view(torch.float32), 128, 1)
    err = (back[:, :512] - x).abs()
    normal = x.abs() >= step.double() * 2.0**-6
    assert normal[0].sum() > 500 and not normal[1].any()
    assert (err[normal] <= x.abs()[normal] * 2.0**-4).all()
    assert (err[~normal] <= step.double()[~normal] * 2.0**-10).all()


def test_bad_inputs_are_named() -> None:
    with pytest.raises(InputError, match="Expected rows of 576 values"):
        quantize_kv_fp8(torch.zeros(4, 512))
    with pytest.raises(InputError, match="Expected bfloat16, float16 or float32"):
        quantize_kv_fp8(torch.zeros(4, 576, dtype=torch.int32))
    with pytest.raises(InputError, match=r"Expected a torch\.uint8 tensor"):
        dequantize_kv_fp8(torch.zeros(4, 656))
    with pytest.raises(InputError, match=r"Expected a torch\.uint8 tensor"):
        dequantize_kv_fp8(torch.zeros(4, 576, dtype=torch.uint8))


def test_dequantize_refuses_a_result_dtype_that_is_not_floating() -> None:
    # An integer dtype truncated every value silently; a dtype's name was read by torch as
    # a device ("Invalid device string").
    packed = quantize_kv_fp8(_rows(2, seed=4))
    for dtype in (torch.int32, torch.uint8, "float16"):
        with pytest.raises(InputError, match=r"dtype: Expected a floating torch\.dtype"):
            dequantize_kv_fp8(packed, dtype)  # type: ignore[arg-type]
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        assert dequantize_kv_fp8(packed, dtype).dtype == dtype


# (seqlens, s_q, h_q, page, num_splits), as for the bfloat16 cache: one-piece and split
# sequences, pieces that end mid-page, draft tokens that see no key of a piece.
CASES = [
    ([1, 17, 63, 130], 1, 1, 1, None),
    ([130, 17], 2, 3, 16, None),
    ([63, 130], 2, 17, 16, 3),
    ([130], 1, 16, 64, 9),
]


@pytest.mark.parametrize(("seqlens", "s_q", "h_q", "page", "num_splits"), CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_split_kv_reads_the_fp8_cache(request, seqlens, s_q, h_q, page, num_splits, dtype) -> None:
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=h_q, page=page, dtype=dtype, seed=seed_of(request)
    )
    packed = quantize_kv_fp8(kv)  # stale rows stay NaN through the quantizer
    out, lse = poisoned_outputs(q)
    mla_decode_split_kv(
        q, packed, bt, sl, softmax_scale=SCALE, num_splits=num_splits, out=out, lse=lse
    )
    ref_out, ref_lse = mla_decode_ref(q, packed, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, dtype)
    dense_out, _ = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert rel_err(out, dense_out) < QUANTIZATION_BOUND


def test_plan_for_fp8_runs_it_and_nothing_else(request) -> None:
    q, kv, bt, sl = make_inputs(
        [40, 17], s_q=1, h_q=4, page=16, dtype=torch.float16, seed=seed_of(request)
    )
    packed = quantize_kv_fp8(kv)
    plan = MLADecodePlan(
        sl,
        s_q=1,
        h_q=4,
        page_size=16,
        softmax_scale=SCALE,
        dtype=torch.float16,
        num_sms=4,
        kv_fp8=True,
    )
    ref_out, ref_lse = mla_decode_ref(q, packed, bt, sl, softmax_scale=SCALE)
    out, lse = poisoned_outputs(q)
    for _ in range(2):  # the same plan, cache format unchanged between calls
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        plan.run(q, packed, bt, out=out, lse=lse)
        assert_matches(out, lse, ref_out, ref_lse, torch.float16)
    with pytest.raises(InputError, match="planned with kv_fp8=True"):
        plan.run(q, kv, bt)
    dense = MLADecodePlan(sl, s_q=1, h_q=4, page_size=16, softmax_scale=SCALE, dtype=torch.float16)
    with pytest.raises(InputError, match=r"an FP8 cache is read by MLADecodePlan\(kv_fp8=True\)"):
        dense.run(q, packed, bt)
    want = "strategy: Expected strategy 'split_kv' or 'seesaw' for an FP8"
    with pytest.raises(InputError, match=want):
        MLADecodePlan(sl, s_q=1, h_q=4, page_size=16, softmax_scale=SCALE, strategy="naive",
                      dtype=torch.float16, kv_fp8=True)  # fmt: skip
    with pytest.raises(InputError, match=r"an FP8 cache is read by MLADecodePlan\(kv_fp8=True\)"):
        mla_decode_naive(q, packed, bt, sl, softmax_scale=SCALE)
    with pytest.raises(InputError, match="Expected rows of 656 bytes"):
        plan.run(q, packed[..., :576].contiguous(), bt)


def _padded(packed: torch.Tensor, row_bytes: int) -> torch.Tensor:
    """The same FP8 rows in a cache whose rows are ``row_bytes`` apart."""
    storage = torch.zeros(*packed.shape[:3], row_bytes, dtype=torch.uint8)
    storage[..., :FP8_KV_BYTES] = packed
    return storage[..., :FP8_KV_BYTES]


def test_fp8_rows_must_start_on_4_byte_boundaries(request) -> None:
    q, kv, bt, sl = make_inputs(
        [40, 17], s_q=1, h_q=4, page=16, dtype=torch.float16, seed=seed_of(request)
    )
    packed = quantize_kv_fp8(kv)
    ref_out, ref_lse = mla_decode_ref(q, packed, bt, sl, softmax_scale=SCALE)
    # Padded rows on a 4-byte stride are read in place.
    out, lse = poisoned_outputs(q)
    mla_decode_split_kv(q, _padded(packed, 672), bt, sl, softmax_scale=SCALE, out=out, lse=lse)
    assert_matches(out, lse, ref_out, ref_lse, torch.float16)
    # Rows 658 bytes apart put every other row's float32 scales off their boundary.
    with pytest.raises(InputError, match=r"FP8 rows starting on 4-byte boundaries.*658"):
        mla_decode_split_kv(q, _padded(packed, 658), bt, sl, softmax_scale=SCALE)
    shifted = torch.zeros(packed.numel() + 4, dtype=torch.uint8)[2:-2].view(packed.shape)
    shifted.copy_(packed)
    with pytest.raises(InputError, match="address offset 2"):
        mla_decode_with_kvcache(
            q, shifted, bt, sl, 512, *get_mla_metadata(sl, 4, 1, is_fp8_kvcache=True),
            softmax_scale=SCALE, is_fp8_kvcache=True,
        )  # fmt: skip


def test_flashmla_signature_with_fp8(request) -> None:
    q, kv, bt, sl = make_inputs(
        [70, 33], s_q=2, h_q=3, page=16, dtype=torch.float16, seed=seed_of(request)
    )
    packed = quantize_kv_fp8(kv)
    meta, splits = get_mla_metadata(sl, 2 * 3, 1, is_fp8_kvcache=True)
    out, lse = mla_decode_with_kvcache(
        q, packed, bt, sl, 512, meta, splits, softmax_scale=SCALE, causal=True, is_fp8_kvcache=True
    )
    ref_out, ref_lse = mla_decode_ref(q, packed, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.float16)
    with pytest.raises(InputError, match=r"mla_decode_with_kvcache\(is_fp8_kvcache=True\)"):
        mla_decode_with_kvcache(q, packed, bt, sl, 512, meta, splits)
    with pytest.raises(InputError, match="Expected a uint8 cache"):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, meta, splits, is_fp8_kvcache=True)


def test_fp8_launch_knobs() -> None:
    from kernelopt.kernels.mla.split_kv import default_config

    for rows, block_m in ((1, 16), (16, 16), (128, 64), (2048, 64)):
        config = default_config(rows, torch.bfloat16, kv_fp8=True)
        assert (config.block_m, config.block_n, config.num_warps) == (block_m, 64, 8)
        assert config.ctas_per_sm == 1  # 158-189 KB of shared memory a program
    # The interpreter's float32 runs keep their small tiles.
    assert default_config(16, torch.float32, kv_fp8=True) == default_config(16, torch.float32)


def test_cost_counts_656_byte_rows() -> None:
    dense = mla_decode_bytes([100, 28], batch=2, s_q=1, h_q=16, elt_bytes=2)
    fp8 = mla_decode_bytes([100, 28], batch=2, s_q=1, h_q=16, elt_bytes=2, kv_row_bytes=656)
    assert dense - fp8 == 128 * (576 * 2 - 656)
    with pytest.raises(InputError, match="Expected a positive cache row size"):
        mla_decode_bytes([1], batch=1, s_q=1, h_q=1, elt_bytes=2, kv_row_bytes=0)


@pytest.mark.gpu
@pytest.mark.parametrize(("s_q", "h_q"), [(1, 128), (1, 16), (16, 16)])
def test_fp8_bf16_trial_points(request, s_q, h_q) -> None:
    q, kv, bt, sl = make_inputs(
        [4096] * 31 + [4097],
        s_q=s_q,
        h_q=h_q,
        page=64,
        dtype=torch.bfloat16,
        seed=seed_of(request),
        device="cuda",
    )
    packed = quantize_kv_fp8(kv)
    plan = MLADecodePlan(sl, s_q=s_q, h_q=h_q, page_size=64, softmax_scale=SCALE,
                         dtype=torch.bfloat16, kv_fp8=True)  # fmt: skip
    out, lse = poisoned_outputs(q)
    plan.run(q, packed, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, packed, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)


@pytest.mark.gpu
def test_fp8_varlen_graph_replay(request) -> None:
    seed = seed_of(request)
    plan = MLADecodePlan([1, 17, *graph_batch_lengths(seed)], s_q=1, h_q=16, page_size=64,
                         softmax_scale=SCALE, dtype=torch.bfloat16, device="cuda",
                         kv_fp8=True)  # fmt: skip
    assert_graph_replay_matches(plan, seed, pack=quantize_kv_fp8)


def test_benchmark_smoke_with_fp8_cache(tmp_path) -> None:
    # The decode benchmark's own check on tiny shapes (CPU, interpreter): the FP8 rows are
    # labelled, checked against the reference on the same bytes, and count 656-byte rows.
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    out = tmp_path / "rows.jsonl"
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(root))
    done = subprocess.run(
        [sys.executable, "benchmarks/mla_decode.py", "--smoke", "--kv", "fp8", "--out", str(out)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["impl"] for r in rows} == {"kernelopt_split_kv", "torch_eager"}
    assert all(r["config"]["kv"] == "fp8" and "kv=fp8" in r["config"]["point"] for r in rows)
    assert all(r["metrics"]["rel_err"] < 1e-4 for r in rows)
    point = next(r for r in rows if r["config"]["point"].startswith("smoke s=1 h=16"))
    seqlens, q_bytes = [70, 33], 4  # the smoke point's lengths; float32 queries on the CPU
    nbytes = sum(seqlens) * 656 + 2 * 16 * (576 + 512) * q_bytes
    assert abs(point["metrics"]["gbps"] - nbytes / (point["median"] * 1e3)) < 1e-6 * nbytes
