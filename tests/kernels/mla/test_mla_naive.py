"""The naive Triton kernel against the float64 reference (interpreter on CPU, or a GPU)."""

from __future__ import annotations

import pytest
import torch
from mla_testing import assert_matches, make_inputs, poisoned_outputs, seed_of

from kernelopt import InputError
from kernelopt.kernels.mla import mla_decode_naive, mla_decode_ref

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim > 0:DeprecationWarning"
)
# (seqlens, s_q, h_q, page): mixed and awkward lengths, every page size, masks on heads;
# 4097 keys (one past 64 pages of 64) beside the shortest a sequence can be.
CASES = [
    ([1, 17, 63], 1, 3, 1),
    ([130, 5], 5, 1, 16),
    ([64, 70], 2, 17, 64),
    ([4097, 2, 17], 2, 3, 64),
]


@pytest.mark.parametrize(("seqlens", "s_q", "h_q", "page"), CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_naive_matches_reference(request, seqlens, s_q, h_q, page, dtype) -> None:
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=h_q, page=page, dtype=dtype, seed=seed_of(request)
    )
    out, lse = poisoned_outputs(q)
    mla_decode_naive(q, kv, bt, sl, softmax_scale=192**-0.5, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=192**-0.5)
    assert_matches(out, lse, ref_out, ref_lse, dtype)


def test_naive_non_causal_and_sharp_softmax(request) -> None:
    q, kv, bt, sl = make_inputs(
        [40, 9], s_q=3, h_q=4, page=16, dtype=torch.float32, seed=seed_of(request)
    )
    out, lse = poisoned_outputs(q)
    mla_decode_naive(q, kv, bt, sl, softmax_scale=0.5, causal=False, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=0.5, causal=False)
    assert_matches(out, lse, ref_out, ref_lse, torch.float32)


@pytest.mark.gpu
@pytest.mark.parametrize(("s_q", "h_q"), [(1, 16), (1, 128), (16, 16), (16, 128)])
def test_naive_bf16_trial_matrix_gpu(request, s_q, h_q) -> None:
    q, kv, bt, sl = make_inputs(
        [4096] * 8,
        s_q=s_q,
        h_q=h_q,
        page=64,
        dtype=torch.bfloat16,
        seed=seed_of(request),
        device="cuda",
    )
    out, lse = poisoned_outputs(q)
    mla_decode_naive(q, kv, bt, sl, softmax_scale=192**-0.5, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=192**-0.5)
    assert_matches(out, lse, ref_out, ref_lse, torch.bfloat16)


@pytest.mark.parametrize(
    ("lengths", "message"),
    [
        ([0, 17], r"cache_seqlens\[0\]: Expected cache_seqlens >= s_q = 2, got 0"),
        ([30, -3], r"cache_seqlens\[1\]: Expected cache_seqlens >= s_q = 2, got -3"),
        ([1, 17], r"cache_seqlens\[0\]: Expected cache_seqlens >= s_q = 2, got 1"),
        # 191 keys need 12 pages of 16; the table has 3 columns.
        ([191, 17], "block_table: Expected a block table of at least 12 columns"),
    ],
)
def test_naive_refuses_lengths_it_cannot_attend(request, lengths, message) -> None:
    # Short lengths left rows with no key (NaN out), a long one read pages past the block
    # table (a crash in the interpreter); both are refused before the launch.
    q, kv, bt, _ = make_inputs(
        [30, 17], s_q=2, h_q=3, page=16, dtype=torch.float32, seed=seed_of(request)
    )
    out, lse = poisoned_outputs(q)
    bad = torch.tensor(lengths, dtype=torch.int32)
    with pytest.raises(InputError, match=message):
        mla_decode_naive(q, kv, bt, bad, softmax_scale=192**-0.5, out=out, lse=lse)
    assert torch.isnan(out).all() and torch.isnan(lse).all()  # nothing written
