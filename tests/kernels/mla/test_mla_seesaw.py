"""The seesaw kernel (Gluon, Hopper): compiled for sm_90a here, checked on the GPU."""

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

from kernelopt import DeviceError, InputError
from kernelopt.kernels.mla import MLADecodePlan, mla_decode_ref, split_kv_resources
from kernelopt.kernels.mla.seesaw import check_seesaw_target, default_config

SCALE = 192**-0.5
# A program may hold 227 KiB of shared memory on Hopper.
SMEM_LIMIT = 227 * 1024


def _plan(seqlens, *, s_q, h_q, dtype=torch.bfloat16, page=64, device="cuda", **kw):
    return MLADecodePlan(
        seqlens,
        s_q=s_q,
        h_q=h_q,
        page_size=page,
        softmax_scale=SCALE,
        dtype=dtype,
        device=device,
        strategy="seesaw",
        **kw,
    )


# (1, 16) and (2, 8) have at most 16 query rows: they compile the ring kernel.
@pytest.mark.parametrize(
    ("s_q", "h_q", "causal"), [(1, 128, False), (16, 16, True), (1, 16, False), (2, 8, True)]
)
def test_seesaw_compiles_for_sm90a_within_shared_memory(s_q, h_q, causal) -> None:
    r = split_kv_resources(s_q=s_q, h_q=h_q, strategy="seesaw", causal=causal)
    assert r.target == "sm_90a" and r.uses_wgmma and r.uses_async_copy and not r.uses_mma_sync
    # Two consumer warpgroups and a loader warp (padded to a warpgroup).
    assert r.num_warps == 12
    assert r.shared_bytes <= SMEM_LIMIT, r.shared_bytes
    assert r.programs_per_sm() == 1
    # Hoisted shared-memory descriptors spilled 712 bytes a thread; at most one value
    # (the causal limit, outside the key loop) may spill now.
    assert r.spill_store_bytes <= 4 and r.stack_bytes <= 8, r


@pytest.mark.parametrize("causal", [False, True])
def test_seesaw_that_merges_pairs_compiles_within_shared_memory(causal) -> None:
    r = split_kv_resources(s_q=1, h_q=128, strategy="seesaw", causal=causal, pair_merge=True)
    assert r.shared_bytes <= SMEM_LIMIT and r.programs_per_sm() == 1, r
    # The merge's pointers and weights live across the key loop: a few words spill around
    # it (stored before the loop, reloaded after), none inside (SASS checked; 28 bytes in
    # the causal build since the draft-token limits are computed at the boundary tiles).
    assert r.spill_store_bytes <= 28 and r.stack_bytes <= 24, r


def test_pair_merge_is_a_seesaw_kernel_variant() -> None:
    with pytest.raises(InputError, match="Expected strategy 'seesaw' for pair_merge=True"):
        split_kv_resources(s_q=1, h_q=128, strategy="hopper", pair_merge=True)


def test_seesaw_needs_a_hopper_gpu() -> None:
    want = r"Expected a Hopper GPU \(compute capability 9.x\) for strategy 'seesaw', got cpu"
    with pytest.raises(DeviceError, match=want):
        _plan([64], s_q=1, h_q=64, device="cpu")


def test_seesaw_refuses_float32() -> None:
    with pytest.raises(InputError, match="dtype: Expected dtype bfloat16 or float16"):
        check_seesaw_target(torch.device("cpu"), torch.float32)


def test_seesaw_config_is_fixed_tiles() -> None:
    config = default_config(16, torch.bfloat16)
    assert (config.block_m, config.block_n) == (64, 64)


def test_ring_plans_merge_sixteen_rows_a_program() -> None:
    # Exp 52: 16 x 128 programs of 8 warps for the ring kernel's merge; 64-row plans keep
    # the split-KV default shape.
    ring_config = default_config(16, torch.bfloat16)
    assert (ring_config.combine_block_r, ring_config.combine_block_d) == (16, 128)
    assert ring_config.combine_num_warps == 8
    wide = default_config(17, torch.bfloat16)
    assert (wide.combine_block_r, wide.combine_block_d, wide.combine_num_warps) == (8, 128, 4)


def test_resources_refuse_seesaw_for_float32() -> None:
    with pytest.raises(InputError, match="Expected a 16-bit dtype and capability 90"):
        split_kv_resources(s_q=1, h_q=16, strategy="seesaw", dtype="float32")


# ------------------------------------------------------------------------------ on the GPU

# (seqlens, s_q, h_q, num_splits): lengths off the 64-key grid (cache rows past each end
# hold NaN), odd tile counts (the last pair has no odd tile), 16 and 80 rows (padded
# tiles), causal draft tokens, forced splits whose early rows see no key.
GPU_CASES = [
    ([1, 17, 4097, 130], 1, 128, None),
    ([64, 192, 100], 1, 64, None),
    ([4, 70, 300], 4, 16, None),
    ([500, 129], 16, 16, [3, 2]),
    ([333, 77], 2, 40, None),
    # 80 rows in forced pieces: a 64-row tile's masked rows fall in the next partial slot.
    ([700, 300], 2, 40, [3, 2]),
    ([4096, 1000], 1, 128, [3, 2]),
    ([1, 17, 4097, 130, 64], 1, 16, None),
    # At most 16 rows (the ring kernel): 15 causal rows with forced splits, 16, one.
    ([700, 5, 4097], 3, 5, [3, 1, 4]),
    ([333, 64, 2], 2, 8, None),
    ([4096, 77], 1, 1, None),
]


@pytest.mark.gpu
@pytest.mark.parametrize(("seqlens", "s_q", "h_q", "num_splits"), GPU_CASES)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_seesaw_matches_reference(request, seqlens, s_q, h_q, num_splits, dtype) -> None:
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=h_q, page=64, dtype=dtype, seed=seed_of(request), device="cuda"
    )
    plan = _plan(sl, s_q=s_q, h_q=h_q, dtype=dtype, num_splits=num_splits)
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize(("s_q", "h_q"), [(1, 128), (16, 128), (1, 16), (16, 16)])
def test_seesaw_bf16_trial_matrix(request, s_q, h_q) -> None:
    q, kv, bt, sl = make_inputs(
        [4096] * 32, s_q=s_q, h_q=h_q, page=64, dtype=torch.bfloat16, seed=seed_of(request),
        device="cuda",
    )  # fmt: skip
    plan = _plan(sl, s_q=s_q, h_q=h_q)
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)


@pytest.mark.gpu
@pytest.mark.parametrize(("s_q", "h_q"), [(2, 64), (1, 16)])
def test_seesaw_strided_query_uses_pointer_loads(request, s_q, h_q) -> None:
    q, kv, bt, sl = make_inputs(
        [700, 64, 4097], s_q=s_q, h_q=h_q, page=64, dtype=torch.bfloat16,
        seed=seed_of(request), device="cuda",
    )  # fmt: skip
    wide = torch.zeros(*q.shape[:3], 640, dtype=q.dtype, device=q.device)[..., :576]
    wide.copy_(q)
    assert not wide.is_contiguous()
    out, lse = poisoned_outputs(q)
    _plan(sl, s_q=s_q, h_q=h_q).run(wide, kv, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)


@pytest.mark.gpu
@pytest.mark.parametrize(("s_q", "h_q", "num_splits"), [(2, 64, None), (1, 128, [2, 3, 1])])
def test_seesaw_strided_output_uses_pointer_stores(request, s_q, h_q, num_splits) -> None:
    # An unsplit sequence's 64-row tiles normally leave by TMA; an output that is not one
    # contiguous matrix must take pointer stores and leave the columns around it alone.
    q, kv, bt, sl = make_inputs(
        [700, 64, 4097], s_q=s_q, h_q=h_q, page=64, dtype=torch.bfloat16,
        seed=seed_of(request), device="cuda",
    )  # fmt: skip
    wide = torch.full((*q.shape[:3], 640), float("nan"), dtype=q.dtype, device=q.device)
    out = wide[..., :512]
    assert not out.is_contiguous()
    _, lse = poisoned_outputs(q)
    _plan(sl, s_q=s_q, h_q=h_q, num_splits=num_splits).run(q, kv, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)
    assert torch.isnan(wide[..., 512:]).all()


@pytest.mark.gpu
def test_seesaw_varlen_batch_in_a_cuda_graph(request) -> None:
    seed = seed_of(request)
    assert_graph_replay_matches(_plan(graph_batch_lengths(seed), s_q=2, h_q=64), seed)


# Sequences in exactly two pieces are merged by the second piece in the seesaw kernel:
# the default split of the b=32 trial point, a varlen batch mixing one and two pieces, and
# causal draft tokens whose early rows see no key of a piece (65 keys, s_q=4), and 800
# programs in six waves, where a sequence's first piece can finish before its second starts.
PAIR_CASES = [
    ([4096] * 32, 1, 128, None),
    ([4097, 17, 1000, 64], 2, 64, [2, 1, 2, 1]),
    ([65, 700], 4, 32, [2, 2]),
    ([1000] * 200, 1, 128, [2] * 200),
]


def _cuda_kernel_names(fn) -> list[str]:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


@pytest.mark.gpu
@pytest.mark.parametrize(("seqlens", "s_q", "h_q", "num_splits"), PAIR_CASES)
def test_seesaw_merges_two_piece_sequences_in_the_kernel(
    request, seqlens, s_q, h_q, num_splits
) -> None:
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=h_q, page=64, dtype=torch.bfloat16, seed=seed_of(request),
        device="cuda",
    )  # fmt: skip
    plan = _plan(sl, s_q=s_q, h_q=h_q, num_splits=num_splits)
    assert plan.schedule is not None and max(plan.schedule.splits) == 2
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    out, lse = poisoned_outputs(q)
    names = _cuda_kernel_names(lambda: plan.run(q, kv, bt, out=out, lse=lse))
    assert any("seesaw" in n for n in names), names
    assert not any("combine" in n for n in names), names  # no merge kernel
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)
    # The counters are back at zero, so the next call (or a graph replay) merges again.
    for _ in range(3):
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        plan.run(q, kv, bt, out=out, lse=lse)
        assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)
    assert int(plan._counters.abs().sum()) == 0
    assert_graph_replay_matches(plan, seed_of(request))


@pytest.mark.gpu
def test_seesaw_keeps_the_merge_kernel_for_three_pieces(request) -> None:
    q, kv, bt, sl = make_inputs(
        [4096, 1000], s_q=1, h_q=128, page=64, dtype=torch.bfloat16, seed=seed_of(request),
        device="cuda",
    )  # fmt: skip
    plan = _plan(sl, s_q=1, h_q=128, num_splits=[3, 2])
    out, lse = poisoned_outputs(q)
    names = _cuda_kernel_names(lambda: plan.run(q, kv, bt, out=out, lse=lse))
    assert any("combine" in n for n in names), names
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_ring_plans_keep_sixteen_bit_partials_by_default(request, dtype) -> None:
    # At most 16 rows the ring kernel stores its partials in the output's type (exp 50);
    # float32 stays available, and the 64-row kernel refuses anything else.
    seqlens = [1, 17, 4097, 64]
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=1, h_q=16, page=64, dtype=dtype, seed=seed_of(request), device="cuda"
    )
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    splits = [1, 2, 4, 2]
    default = _plan(sl, s_q=1, h_q=16, dtype=dtype, num_splits=splits)
    full = _plan(sl, s_q=1, h_q=16, dtype=dtype, num_splits=splits, partial_dtype=torch.float32)
    assert default.partial_dtype == dtype and full.partial_dtype == torch.float32
    assert default.workspace_bytes < full.workspace_bytes
    outs = []
    for plan in (default, full):
        out, lse = poisoned_outputs(q)
        plan.run(q, kv, bt, out=out, lse=lse)
        assert_matches(out, lse, ref_out, ref_lse, dtype)
        outs.append(out)
    assert float((outs[0] - outs[1]).double().norm() / ref_out.norm()) < 4e-3
    with pytest.raises(InputError, match=r"partial_dtype: Expected torch.float32 for the"):
        _plan(sl, s_q=1, h_q=64, dtype=dtype, partial_dtype=dtype)
