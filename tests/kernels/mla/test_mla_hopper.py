"""The Hopper-tuned split-KV kernel against the float64 reference."""

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
from kernelopt.kernels.mla import MLADecodePlan, SplitKVConfig, mla_decode_ref
from kernelopt.kernels.mla.hopper import default_config

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim > 0:DeprecationWarning"
)
SCALE = 192**-0.5

# (seqlens, s_q, h_q, page, num_splits): lengths off the tile grid exercise the last-tile
# descriptor (cache rows past each sequence hold NaN); forced splits exercise pieces whose
# rows see no key (s_q > 1) and the merge.
CASES = [
    ([33, 17, 63, 130], 1, 33, 16, None),
    ([130, 64, 5], 5, 16, 64, None),
    ([63, 130], 2, 17, 16, 3),
    ([130], 3, 16, 64, 5),
]


@pytest.mark.parametrize(("seqlens", "s_q", "h_q", "page", "num_splits"), CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_hopper_matches_reference(request, seqlens, s_q, h_q, page, num_splits, dtype) -> None:
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=h_q, page=page, dtype=dtype, seed=seed_of(request)
    )
    # 16-key tiles fit every page size of these cases on the CPU interpreter.
    config = SplitKVConfig(block_m=16, block_n=16, num_warps=4, num_stages=1)
    plan = MLADecodePlan(
        sl,
        s_q=s_q,
        h_q=h_q,
        page_size=page,
        softmax_scale=SCALE,
        dtype=dtype,
        strategy="hopper",
        config=config,
        num_splits=num_splits,
        num_sms=4,
    )
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, dtype)


def test_hopper_default_tiles_on_page_64(request) -> None:
    # The default 16-bit configuration: 64-key tiles read as whole boxes of a page.
    q, kv, bt, sl = make_inputs(
        [70, 2, 129], s_q=2, h_q=3, page=64, dtype=torch.float16, seed=seed_of(request)
    )
    plan = MLADecodePlan(
        sl,
        s_q=2,
        h_q=3,
        page_size=64,
        softmax_scale=SCALE,
        dtype=torch.float16,
        strategy="hopper",
        num_sms=2,
    )
    assert plan.config.block_n == 64
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.float16)


def test_small_row_counts_run_split_kv(request) -> None:
    # 16 rows per sequence: the 16-row split-KV kernel, any page size.
    q, kv, bt, sl = make_inputs(
        [40, 9], s_q=1, h_q=16, page=1, dtype=torch.float16, seed=seed_of(request)
    )
    plan = MLADecodePlan(
        sl,
        s_q=1,
        h_q=16,
        page_size=1,
        softmax_scale=SCALE,
        dtype=torch.float16,
        strategy="hopper",
        num_sms=2,
    )
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.float16)


def test_hopper_refuses_pages_smaller_than_a_tile() -> None:
    with pytest.raises(InputError, match="Expected a page size that is a multiple of 64"):
        MLADecodePlan(
            [32],
            s_q=1,
            h_q=64,
            page_size=16,
            softmax_scale=SCALE,
            dtype=torch.float16,
            strategy="hopper",
        )


def test_hopper_refuses_a_strided_cache(request) -> None:
    q, kv, bt, sl = make_inputs(
        [40], s_q=1, h_q=40, page=16, dtype=torch.float16, seed=seed_of(request)
    )
    config = SplitKVConfig(block_m=16, block_n=16, num_warps=4, num_stages=1)
    plan = MLADecodePlan(
        sl,
        s_q=1,
        h_q=40,
        page_size=16,
        softmax_scale=SCALE,
        dtype=torch.float16,
        strategy="hopper",
        config=config,
    )
    wide = torch.zeros(kv.shape[0], 16, 1, 640, dtype=kv.dtype)[..., :576]
    wide.copy_(kv)
    with pytest.raises(InputError, match="Expected a contiguous, 16-byte aligned kv_cache"):
        plan.run(q, wide, bt)


def test_default_config() -> None:
    assert default_config(128, torch.bfloat16).block_m == 64
    assert default_config(128, torch.bfloat16).block_n == 64
    assert default_config(128, torch.float32).block_n == 16


@pytest.mark.gpu
@pytest.mark.parametrize(("s_q", "h_q"), [(1, 128), (16, 128), (1, 16), (16, 16)])
def test_hopper_bf16_trial_matrix(request, s_q, h_q) -> None:
    q, kv, bt, sl = make_inputs(
        [4096] * 32,
        s_q=s_q,
        h_q=h_q,
        page=64,
        dtype=torch.bfloat16,
        seed=seed_of(request),
        device="cuda",
    )
    plan = MLADecodePlan(
        sl,
        s_q=s_q,
        h_q=h_q,
        page_size=64,
        softmax_scale=SCALE,
        dtype=torch.bfloat16,
        strategy="hopper",
    )
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)


@pytest.mark.gpu
def test_hopper_bf16_varlen_and_graph(request) -> None:
    seed = seed_of(request)
    plan = MLADecodePlan(
        graph_batch_lengths(seed),
        s_q=2,
        h_q=64,
        page_size=64,
        softmax_scale=SCALE,
        dtype=torch.bfloat16,
        device="cuda",
        strategy="hopper",
    )
    assert_graph_replay_matches(plan, seed)
