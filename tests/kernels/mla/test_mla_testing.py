"""The checks every kernel test relies on: they fail on NaN and on near misses."""

from __future__ import annotations

import pytest
import torch
from mla_testing import LSE_TOLERANCE, TOLERANCE, assert_matches, make_inputs, seed_of

from kernelopt.kernels.mla import mla_decode_ref


def _reference(request: pytest.FixtureRequest) -> tuple[torch.Tensor, torch.Tensor]:
    q, kv, bt, sl = make_inputs(
        [40, 17], s_q=2, h_q=3, page=16, dtype=torch.float16, seed=seed_of(request)
    )
    return mla_decode_ref(q, kv, bt, sl, softmax_scale=192**-0.5)


def test_the_reference_itself_passes(request) -> None:
    ref_out, ref_lse = _reference(request)
    for dtype in TOLERANCE:
        assert_matches(ref_out.to(dtype), ref_lse.float(), ref_out, ref_lse, dtype)


def test_nan_never_passes(request) -> None:
    ref_out, ref_lse = _reference(request)
    out, lse = ref_out.half(), ref_lse.float()
    out[1, 0, 2, 7] = float("nan")
    with pytest.raises(AssertionError, match="out has NaN"):
        assert_matches(out, lse, ref_out, ref_lse, torch.float16)
    lse[0, 1, 1] = float("nan")
    with pytest.raises(AssertionError, match="lse has NaN"):
        assert_matches(ref_out.half(), lse, ref_out, ref_lse, torch.float16)


def test_an_lse_from_a_half_precision_scale_fails(request) -> None:
    # The scale rounded to bfloat16 (off by up to 2^-9) moves every LSE by about that
    # fraction: within the bfloat16 output bound, far outside the LSE's.
    ref_out, ref_lse = _reference(request)
    off = ref_lse.float() * (1 + 2.0**-10)
    assert float((off.double() - ref_lse).norm() / ref_lse.norm()) < TOLERANCE[torch.bfloat16]
    with pytest.raises(AssertionError, match="lse relative error"):
        assert_matches(ref_out.bfloat16(), off, ref_out, ref_lse, torch.bfloat16)
    assert LSE_TOLERANCE < 2.0**-10


def test_an_output_rounded_twice_through_bfloat16_fails_the_float16_bound(request) -> None:
    # A float16 kernel that went through bfloat16 somewhere (P or the output) is 8 times
    # less precise than float16: the float16 bound must see it.
    ref_out, ref_lse = _reference(request)
    out = ref_out.bfloat16().half()
    with pytest.raises(AssertionError, match="out relative error"):
        assert_matches(out, ref_lse.float(), ref_out, ref_lse, torch.float16)
