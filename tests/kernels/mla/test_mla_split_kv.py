"""The split-KV kernel and its LSE merge against the float64 reference."""

from __future__ import annotations

import pytest
import torch
from mla_testing import assert_matches, make_inputs, poisoned_outputs, seed_of

from kernelopt import InputError
from kernelopt.kernels.mla import SplitKVConfig, mla_decode_ref, mla_decode_split_kv
from kernelopt.kernels.mla.split_kv import default_config

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim > 0:DeprecationWarning"
)
SCALE = 192**-0.5

# (seqlens, s_q, h_q, page, num_splits): None lets the scheduler choose (8 nominal slots on
# the CPU, so long sequences split); forced counts exercise pieces that end mid-page, rows
# that see no key of a piece (s_q > 1), and one-piece sequences beside split ones.
CASES = [
    ([1, 17, 63, 130], 1, 1, 1, None),
    ([130, 17], 2, 3, 16, None),
    ([130, 64, 5], 5, 16, 64, None),
    ([63, 130], 2, 17, 16, 3),
    ([100, 5], 5, 3, 1, 4),
    ([130], 1, 16, 64, 9),
    # 4097 keys, scheduled: the long sequence splits, the short ones stay whole.
    ([4097, 1, 17], 1, 16, 16, None),
]


@pytest.mark.parametrize(("seqlens", "s_q", "h_q", "page", "num_splits"), CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_split_kv_matches_reference(request, seqlens, s_q, h_q, page, num_splits, dtype) -> None:
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=h_q, page=page, dtype=dtype, seed=seed_of(request)
    )
    out, lse = poisoned_outputs(q)
    mla_decode_split_kv(q, kv, bt, sl, softmax_scale=SCALE, num_splits=num_splits, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, dtype)


@pytest.mark.parametrize("page", [1, 16, 64])
@pytest.mark.parametrize("s_q", [1, 2, 5])
@pytest.mark.parametrize("h_q", [1, 3, 16, 17])
def test_split_kv_shape_grid(request, page, s_q, h_q) -> None:
    # Every page size × draft tokens × heads, mixed lengths (shortest = s_q, lengths off
    # the page and tile grids), scheduled over 4 nominal SMs so that long sequences split.
    q, kv, bt, sl = make_inputs(
        [s_q, 17, 63, 130],
        s_q=s_q,
        h_q=h_q,
        page=page,
        dtype=torch.float16,
        seed=seed_of(request),
    )
    out, lse = poisoned_outputs(q)
    mla_decode_split_kv(q, kv, bt, sl, softmax_scale=SCALE, num_sms=4, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.float16)


@pytest.mark.parametrize("causal", [False, True])
def test_lse_is_natural_log_with_a_sharp_softmax(request, causal) -> None:
    # A large scale makes log2 vs ln and a missing scale factor obvious in the LSE.
    q, kv, bt, sl = make_inputs(
        [90, 33], s_q=2, h_q=4, page=16, dtype=torch.float32, seed=seed_of(request)
    )
    out, lse = poisoned_outputs(q)
    mla_decode_split_kv(
        q, kv, bt, sl, softmax_scale=0.4, causal=causal, num_splits=3, out=out, lse=lse
    )
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=0.4, causal=causal)
    assert_matches(out, lse, ref_out, ref_lse, torch.float32)
    torch.testing.assert_close(lse.double(), ref_lse, rtol=1e-5, atol=1e-4)


def test_one_key_sequence_returns_its_value(request) -> None:
    q, kv, bt, sl = make_inputs(
        [1], s_q=1, h_q=2, page=16, dtype=torch.float32, seed=seed_of(request)
    )
    out, lse = poisoned_outputs(q)
    mla_decode_split_kv(q, kv, bt, sl, softmax_scale=0.3, out=out, lse=lse)
    row = kv[bt[0, 0], 0, 0]
    torch.testing.assert_close(out[0, 0], row[:512].expand(2, 512))
    torch.testing.assert_close(lse[0, :, 0], 0.3 * (q[0, 0] @ row), rtol=1e-5, atol=1e-5)


def test_strided_views_are_read_and_written_in_place(request) -> None:
    # q and the cache as column slices of wider buffers, out and lse as views too.
    seed = seed_of(request)
    q, kv, bt, sl = make_inputs([70, 20], s_q=2, h_q=3, page=16, dtype=torch.float32, seed=seed)
    wide_q = torch.zeros(*q.shape[:3], 640)
    wide_q[..., :576] = q
    wide_kv = torch.zeros(*kv.shape[:3], 640)
    wide_kv[..., :576] = kv
    out_buf = torch.full((2, 2, 3, 600), float("nan"))
    lse_buf = torch.full((2, 3, 2 * 2), float("nan"))
    out, lse = out_buf[..., :512], lse_buf[..., ::2]
    mla_decode_split_kv(
        wide_q[..., :576],
        wide_kv[..., :576],
        bt,
        sl,
        softmax_scale=SCALE,
        num_splits=2,
        out=out,
        lse=lse,
    )
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.float32)
    assert torch.isnan(out_buf[..., 512:]).all() and torch.isnan(lse_buf[..., 1::2]).all()


def test_swept_configs_agree(request) -> None:
    # The knobs a tuning sweep varies must not change the function.
    q, kv, bt, sl = make_inputs(
        [100, 47], s_q=2, h_q=9, page=16, dtype=torch.float16, seed=seed_of(request)
    )
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    for config in (
        SplitKVConfig(block_m=16, block_n=16, num_warps=4, combine_block_r=1, combine_block_d=512),
        SplitKVConfig(block_m=32, block_n=32, num_warps=4, combine_block_r=16, combine_block_d=64),
        SplitKVConfig(block_m=64, block_n=64, num_warps=8, num_stages=3),
    ):
        out, lse = poisoned_outputs(q)
        mla_decode_split_kv(
            q, kv, bt, sl, softmax_scale=SCALE, config=config, num_sms=4, out=out, lse=lse
        )
        assert_matches(out, lse, ref_out, ref_lse, torch.float16)


def test_default_config_heuristics() -> None:
    big = default_config(128, torch.bfloat16)
    assert (big.block_m, big.block_n, big.num_warps, big.ctas_per_sm) == (64, 32, 8, 1)
    small = default_config(16, torch.bfloat16)
    assert (small.block_m, small.block_n, small.num_warps, small.ctas_per_sm) == (16, 64, 4, 2)
    assert default_config(3).block_m == 16
    assert default_config(17).block_m == 32
    assert default_config(128, torch.float32).block_n == 16


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"block_m": 48}, "block_m: Expected a power of two in \\[16, 128\\], got 48"),
        ({"block_n": 8}, "block_n: Expected a power of two in \\[16, 256\\], got 8"),
        ({"num_stages": 0}, "num_stages: Expected an integer of at least 1, got 0"),
        # Fractions were taken: Triton was handed 2.5 stages, the scheduler 1.5 programs
        # a multiprocessor (refused there as "num_slots", a name no caller passed).
        ({"num_stages": 2.5}, "num_stages: Expected an integer of at least 1, got 2.5"),
        ({"ctas_per_sm": 1.5}, "ctas_per_sm: Expected an integer of at least 1, got 1.5"),
        ({"ctas_per_sm": True}, "ctas_per_sm: Expected an integer of at least 1, got True"),
        ({"combine_block_d": 1024}, "combine_block_d: Expected a power of two"),
    ],
)
def test_config_rejects_bad_knobs(kwargs, message) -> None:
    with pytest.raises(InputError, match=message):
        SplitKVConfig(**kwargs)


@pytest.mark.gpu
@pytest.mark.parametrize(("s_q", "h_q"), [(1, 16), (1, 128), (16, 16), (16, 128)])
def test_split_kv_bf16_trial_matrix_gpu(request, s_q, h_q) -> None:
    q, kv, bt, sl = make_inputs(
        [4096] * 32,
        s_q=s_q,
        h_q=h_q,
        page=64,
        dtype=torch.bfloat16,
        seed=seed_of(request),
        device="cuda",
    )
    out, lse = poisoned_outputs(q)
    mla_decode_split_kv(q, kv, bt, sl, softmax_scale=SCALE, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)


@pytest.mark.gpu
@pytest.mark.parametrize("page", [1, 16, 64])
@pytest.mark.parametrize(("s_q", "h_q"), [(1, 128), (4, 16), (16, 17), (2, 3)])
def test_split_kv_bf16_varlen_gpu(request, page, s_q, h_q) -> None:
    gen = torch.Generator().manual_seed(seed_of(request))
    drawn = torch.randint(s_q, 6000, (10,), generator=gen).tolist()
    seqlens = [4097, s_q, 1 + s_q, 63, 64, 65, *drawn]
    q, kv, bt, sl = make_inputs(
        seqlens,
        s_q=s_q,
        h_q=h_q,
        page=page,
        dtype=torch.bfloat16,
        seed=seed_of(request),
        device="cuda",
    )
    for dtype_case in (torch.bfloat16, torch.float16):
        qc, kvc = q.to(dtype_case), kv.to(dtype_case)
        out, lse = poisoned_outputs(qc)
        mla_decode_split_kv(qc, kvc, bt, sl, softmax_scale=SCALE, out=out, lse=lse)
        ref_out, ref_lse = mla_decode_ref(qc, kvc, bt, sl, softmax_scale=SCALE)
        assert_matches(out, lse, ref_out, ref_lse, dtype_case)


def test_merge_computes_uniform_slots_as_it_reads_them() -> None:
    # Three sequences of four pieces: the merge with slots b · 4 + j computed gives the
    # outputs of the merge that reads split_offsets, bit for bit, NaN rows included.
    from kernelopt.kernels.mla.split_kv import launch_merge, split_workspace, workspace_numel

    gen = torch.Generator().manual_seed(11)
    batch, h_q, pieces = 3, 17, 4
    o_part, lse_part = split_workspace(
        torch.empty(workspace_numel(batch * pieces, h_q)), batch * pieces, h_q
    )
    o_part.copy_(torch.randn(o_part.shape, generator=gen))
    lse_part.copy_(torch.randn(lse_part.shape, generator=gen) * 4)
    lse_part[5, 3] = float("-inf")  # a row that saw no key of one piece
    lse_part[8:12, 0] = float("-inf")  # a row that saw no key at all: NaN, as before
    offsets = torch.arange(0, batch * pieces + 1, pieces, dtype=torch.int32)
    results = []
    for uniform in (0, pieces):
        out = torch.full((batch, 1, h_q, 512), float("nan"))
        lse = torch.full((batch, h_q, 1), float("nan"))
        launch_merge(
            o_part, lse_part, offsets, out, lse, config=SplitKVConfig(), uniform_pieces=uniform
        )
        results.append((out, lse))
    (out_read, lse_read), (out_uniform, lse_uniform) = results
    assert torch.isfinite(out_read[:2]).all() and torch.isnan(out_read[2, 0, 0]).all()
    assert torch.equal(out_read.nan_to_num(7.0), out_uniform.nan_to_num(7.0))
    assert torch.equal(lse_read.nan_to_num(7.0), lse_uniform.nan_to_num(7.0))


@pytest.mark.parametrize(("uniform", "slots"), [(1, 3), (-2, 6), (4, 11)])
def test_merge_refuses_uniform_pieces_its_workspace_cannot_hold(uniform, slots) -> None:
    from kernelopt.kernels.mla.split_kv import launch_merge, split_workspace, workspace_numel

    o_part, lse_part = split_workspace(torch.zeros(workspace_numel(slots, 16)), slots, 16)
    out = torch.zeros(3, 1, 16, 512)
    lse = torch.zeros(3, 16, 1)
    offsets = torch.zeros(4, dtype=torch.int32)
    with pytest.raises(InputError, match=r"Expected 0, or n >= 2 pieces a sequence .* got"):
        launch_merge(
            o_part, lse_part, offsets, out, lse, config=SplitKVConfig(), uniform_pieces=uniform
        )
    assert torch.equal(out, torch.zeros_like(out))


@pytest.mark.parametrize("partial_dtype", [torch.bfloat16, torch.float16])
def test_merge_widens_sixteen_bit_partials(partial_dtype) -> None:
    # The same partials held in 16 bits and, rounded the same way, in float32 merge to the
    # same outputs: the merge combines in float32 whatever the workspace holds.
    from kernelopt.kernels.mla.split_kv import launch_merge, split_workspace, workspace_numel

    gen = torch.Generator().manual_seed(50)
    batch, h_q, pieces = 2, 5, 3
    slots = batch * pieces
    offsets = torch.arange(0, slots + 1, pieces, dtype=torch.int32)
    values = torch.randn(slots, h_q, 512, generator=gen).to(partial_dtype)
    lses = torch.randn(slots, h_q, generator=gen) * 4
    results = []
    for ty in (partial_dtype, torch.float32):
        o_part, lse_part = split_workspace(
            torch.empty(workspace_numel(slots, h_q, ty)), slots, h_q, ty
        )
        o_part.copy_(values)
        lse_part.copy_(lses)
        out = torch.full((batch, 1, h_q, 512), float("nan"), dtype=partial_dtype)
        lse = torch.full((batch, h_q, 1), float("nan"))
        launch_merge(o_part, lse_part, offsets, out, lse, config=SplitKVConfig())
        results.append((out, lse))
    (out_16, lse_16), (out_32, lse_32) = results
    assert torch.isfinite(out_16).all() and torch.isfinite(lse_16).all()
    assert torch.equal(out_16, out_32) and torch.equal(lse_16, lse_32)


def test_merge_refuses_partials_of_another_type() -> None:
    from kernelopt.kernels.mla.split_kv import launch_merge

    out = torch.zeros(1, 1, 4, 512, dtype=torch.float16)
    lse = torch.zeros(1, 4, 1)
    offsets = torch.tensor([0, 2], dtype=torch.int32)
    for bad in (torch.bfloat16, torch.float64):
        o_part = torch.zeros(2, 4, 512, dtype=bad)
        with pytest.raises(
            InputError, match=r"o_part: Expected partial outputs in torch.float32 or torch.float16"
        ):
            launch_merge(o_part, torch.zeros(2, 4), offsets, out, lse, config=SplitKVConfig())
    assert not out.any()
