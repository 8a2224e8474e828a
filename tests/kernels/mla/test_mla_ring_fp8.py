"""The FP8 ring kernel (Gluon, Hopper): compiled for sm_90a here, checked on the GPU."""

from __future__ import annotations

import pytest
import torch
from mla_testing import (
    assert_graph_replay_matches,
    assert_matches,
    graph_batch_lengths,
    make_inputs,
    poisoned_outputs,
    seed_of,
)

from kernelopt import InputError
from kernelopt.kernels.mla import MLADecodePlan, mla_decode_ref, quantize_kv_fp8, split_kv_resources

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim > 0:DeprecationWarning"
)
SCALE = 192**-0.5
SMEM_LIMIT = 227 * 1024


def _plan(seqlens, *, s_q, h_q, device="cuda", **kw):
    return MLADecodePlan(
        seqlens, s_q=s_q, h_q=h_q, page_size=64, softmax_scale=SCALE, dtype=torch.bfloat16,
        device=device, strategy="seesaw", kv_fp8=True, **kw,
    )  # fmt: skip


@pytest.mark.parametrize(("s_q", "h_q", "causal"), [(1, 16, False), (2, 8, True), (16, 1, True)])
def test_ring_fp8_compiles_for_sm90a_within_shared_memory(s_q, h_q, causal) -> None:
    r = split_kv_resources(s_q=s_q, h_q=h_q, strategy="seesaw", causal=causal, kv_fp8=True)
    assert r.target == "sm_90a" and r.uses_wgmma and r.uses_async_copy and not r.uses_mma_sync
    # Two consumer warpgroups, the dequantizing warpgroup and a loader warp (padded).
    assert r.num_warps == 16
    assert r.shared_bytes <= SMEM_LIMIT, r.shared_bytes
    assert r.programs_per_sm() == 1
    assert r.spill_store_bytes == 0 and r.stack_bytes == 0, r


def test_fp8_seesaw_takes_at_most_16_bfloat16_rows() -> None:
    with pytest.raises(InputError, match=r"Expected at most 16 query rows .* got 32"):
        _plan([64], s_q=2, h_q=16)
    with pytest.raises(InputError, match="dtype: Expected dtype bfloat16 for strategy 'seesaw'"):
        MLADecodePlan([64], s_q=1, h_q=16, page_size=64, softmax_scale=SCALE,
                      dtype=torch.float16, strategy="seesaw", kv_fp8=True)  # fmt: skip
    with pytest.raises(InputError, match="Expected strategy 'split_kv' or 'seesaw' for an FP8"):
        MLADecodePlan([64], s_q=1, h_q=16, page_size=64, softmax_scale=SCALE,
                      strategy="hopper", kv_fp8=True)  # fmt: skip
    with pytest.raises(InputError, match="at most 16 query rows for 'seesaw' with an FP8"):
        split_kv_resources(s_q=1, h_q=32, strategy="seesaw", kv_fp8=True)


# One-piece and split sequences (the merge kernel), tails mid-tile, causal draft tokens.
GPU_CASES = [
    ([1, 17, 4097, 130, 64], 1, 16, None),
    ([4097, 77], 1, 16, [3, 2]),
    ([700, 5, 4097], 3, 5, [3, 1, 4]),
    ([333, 64, 2], 2, 8, None),
    ([4096, 77], 16, 1, [7, 1]),
    ([4096, 65], 1, 1, None),
]


@pytest.mark.gpu
@pytest.mark.parametrize(("seqlens", "s_q", "h_q", "num_splits"), GPU_CASES)
def test_ring_fp8_matches_reference(request, seqlens, s_q, h_q, num_splits) -> None:
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=h_q, page=64, dtype=torch.bfloat16, seed=seed_of(request),
        device="cuda",
    )  # fmt: skip
    packed = quantize_kv_fp8(kv)
    plan = _plan(sl, s_q=s_q, h_q=h_q, num_splits=num_splits)
    ref_out, ref_lse = mla_decode_ref(q, packed, bt, sl, softmax_scale=SCALE)
    out, lse = poisoned_outputs(q)
    for _ in range(3):
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        plan.run(q, packed, bt, out=out, lse=lse)
        assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)


@pytest.mark.gpu
def test_ring_fp8_trial_point_and_strided_query(request) -> None:
    q, kv, bt, sl = make_inputs(
        [4096] * 31 + [4097], s_q=1, h_q=16, page=64, dtype=torch.bfloat16,
        seed=seed_of(request), device="cuda",
    )  # fmt: skip
    packed = quantize_kv_fp8(kv)
    ref_out, ref_lse = mla_decode_ref(q, packed, bt, sl, softmax_scale=SCALE)
    plan = _plan(sl, s_q=1, h_q=16)
    out, lse = poisoned_outputs(q)
    plan.run(q, packed, bt, out=out, lse=lse)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)
    wide = torch.zeros(*q.shape[:3], 640, dtype=q.dtype, device=q.device)[..., :576]
    wide.copy_(q)
    out, lse = poisoned_outputs(q)
    plan.run(wide, packed, bt, out=out, lse=lse)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)


@pytest.mark.gpu
def test_ring_fp8_varlen_graph_replay(request) -> None:
    seed = seed_of(request)
    plan = _plan([1, 17, *graph_batch_lengths(seed)], s_q=1, h_q=16)
    assert_graph_replay_matches(plan, seed, pack=quantize_kv_fp8)


def test_the_parts_the_kernel_copies_are_the_layout() -> None:
    # The loader's coordinates and the dequantizer's arithmetic, on the CPU: a tile built
    # from the kernel's views and constants as the staging buffer holds it (RoPE, then
    # latent chunks of 64 columns as e4m3 · their group's scale) equals the dequantized
    # cache.
    from kernelopt.kernels.mla import dequantize_kv_fp8, ring_fp8
    from kernelopt.kernels.mla.seesaw import fp8_cache_views

    gen = torch.Generator().manual_seed(38)
    mags = torch.exp2(torch.randint(-10, 10, (2, 64, 1, 4), generator=gen).float())
    rows = torch.randn(2, 64, 1, 4, 128, generator=gen) * mags[..., None]
    rope = torch.randn(2, 64, 1, 64, generator=gen)
    packed = quantize_kv_fp8(torch.cat([rows.flatten(-2), rope], dim=-1))
    kv8, kv32, kv16 = fp8_cache_views(packed)
    scale_col, rope_col = ring_fp8.SCALE_COL.value, ring_fp8.ROPE_COL.value
    want = dequantize_kv_fp8(packed, torch.float32).view(128, 576)
    for row in (0, 64):
        keys = slice(row, row + 64)
        scales = kv32[keys, scale_col : scale_col + 4]
        staged = [kv16[keys, rope_col : rope_col + 64].float()]
        for c in range(8):
            chunk = kv8[keys, c * 64 : (c + 1) * 64].float()
            staged.append(chunk * scales[:, c // 2 : c // 2 + 1])
        tile = torch.cat(staged[1:] + staged[:1], dim=1)  # latent 0-511, then RoPE
        assert torch.equal(tile, want[keys])
