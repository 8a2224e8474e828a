"""check_close and check_equal: an output against its reference, by float64 relative error or
exactly, each failure named."""

from __future__ import annotations

import re

import pytest
import torch

from kernelopt import InputError
from kernelopt.bench import check_close, check_equal


def _ref() -> torch.Tensor:
    return torch.randn(4, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))


def test_close_output_passes_and_returns_the_float64_relative_error() -> None:
    ref = _ref()
    out = ref.float()
    error = check_close(out, ref, tol=1e-5)
    expected = float((out.double() - ref).norm() / ref.norm())
    assert error == pytest.approx(expected, rel=1e-12) and 0 < error < 1e-6


def test_far_output_fails_naming_the_error_and_the_worst_element() -> None:
    ref = _ref()
    out = ref.float()
    out[3, 1] += 1.0
    with pytest.raises(InputError) as caught:
        check_close(out, ref, tol=1e-2)
    message = str(caught.value)
    assert message.startswith(
        "Expected a relative error <= 0.01 against the float64 reference, got "
    )
    assert "(‖out − ref‖ / ‖ref‖); the worst element out[3, 1] = " in message
    assert message.endswith(f"against ref {ref[3, 1].item():.6g}")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_nan_or_inf_in_the_output_never_passes(bad: float) -> None:
    ref = _ref()
    out = ref.float()
    out[1, 2] = bad
    with pytest.raises(InputError, match=r"got 1 non-finite element in out of shape \[4, 8\], "):
        check_close(out, ref, tol=1e6)  # no tolerance lets it through
    with pytest.raises(InputError, match=re.escape(f"the first at out[1, 2] = {bad:.6g}")):
        check_close(out, ref, tol=1e6)


def test_a_reference_with_nan_is_refused() -> None:
    ref = _ref()
    ref[0, 3] = float("nan")
    with pytest.raises(
        InputError,
        match=re.escape(
            "ref: Expected a reference with every element finite, got 1 non-finite element "
            "in ref of shape [4, 8], the first at ref[0, 3] = nan"
        ),
    ):
        check_close(ref.float().nan_to_num(), ref, tol=1e-2)


def test_shapes_must_match_without_broadcasting() -> None:
    ref = torch.randn(8, dtype=torch.float64)
    with pytest.raises(
        InputError, match=re.escape("out: Expected out of the shape of ref [8], got [8, 1]")
    ):
        check_close(ref.float()[:, None], ref, tol=1e-2)
    with pytest.raises(InputError, match=re.escape("got [7]")):
        check_equal(torch.arange(7), torch.arange(8))


def test_a_reference_of_zeros_is_judged_by_the_absolute_error() -> None:
    zeros = torch.zeros(4, 8, dtype=torch.float64)
    assert check_close(torch.zeros(4, 8), zeros, tol=1e-6) == 0.0
    assert check_close(torch.full((4, 8), 1e-9), zeros, tol=1e-6) == pytest.approx(32**0.5 * 1e-9)
    out = torch.zeros(4, 8)
    out[2, 5] = 0.5
    with pytest.raises(
        InputError,
        match=re.escape(
            "Expected an absolute error <= 1e-06 (ref is all zeros), got 0.5 (‖out − ref‖); "
            "the worst element out[2, 5] = 0.5 against ref 0"
        ),
    ):
        check_close(out, zeros, tol=1e-6)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool])
def test_integer_outputs_are_refused_with_a_pointer_to_check_equal(dtype: torch.dtype) -> None:
    # Half the ids 30 off in a 152064-token vocabulary: a relative norm reads 2e-4.
    ids = torch.randint(0, 152064, (1024,), generator=torch.Generator().manual_seed(0))
    wrong = ids.clone()
    wrong[::2] += 30
    assert float((wrong.double() - ids.double()).norm() / ids.double().norm()) < 1e-3
    with pytest.raises(InputError, match=r"out: Expected a real floating output, got torch\.") as e:
        check_close(wrong.to(dtype), ids, tol=1e-2)
    assert "checked with check_equal(out, ref)" in str(e.value)


def test_tol_must_be_a_finite_number_above_zero() -> None:
    ref = _ref()
    for tol in (0, -1e-3, float("nan"), float("inf"), True, "1e-2"):
        with pytest.raises(InputError, match="tol: Expected a finite number > 0"):
            check_close(ref, ref, tol=tol)  # type: ignore[arg-type]


def test_non_tensors_are_refused() -> None:
    ref = _ref()
    with pytest.raises(InputError, match=r"out: Expected a torch tensor, got ndarray \(pass "):
        check_close(ref.numpy(), ref, tol=1e-2)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="ref: Expected a torch tensor, got list"):
        check_equal(torch.arange(3), [0, 1, 2])  # type: ignore[arg-type]


def test_low_precision_outputs_are_compared_in_float64() -> None:
    ref = torch.linspace(-1, 1, 64, dtype=torch.float64)
    assert check_close(ref.to(torch.bfloat16), ref, tol=1e-2) < 1e-2
    assert check_close(ref.to(torch.float8_e4m3fn), ref, tol=1e-1) < 1e-1


def test_equal_outputs_pass_across_integer_dtypes() -> None:
    ids = torch.tensor([[3, 1], [4, 1]])
    assert check_equal(ids.to(torch.int32), ids) is None


def test_unequal_outputs_fail_with_the_count_and_the_first_mismatch() -> None:
    ids = torch.arange(152064)
    wrong = ids.clone()
    wrong[1::2] += 30
    with pytest.raises(
        InputError,
        match=re.escape(
            "Expected out equal to ref, got 76032 of 152064 elements different in out of shape "
            "[152064], the first at out[1] = 31 against ref 1"
        ),
    ):
        check_equal(wrong, ids)


def test_a_nan_equals_nothing_in_check_equal() -> None:
    ref = torch.tensor([1.0, float("nan")])
    with pytest.raises(InputError, match=r"got 1 of 2 elements different .* out\[1\] = nan"):
        check_equal(ref.clone(), ref)
