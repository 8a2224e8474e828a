"""A benchmark row's roofline floor is above 0: a floor of 0 would be a kernel that costs
nothing, and every share of it would read as 0 %; a row without a floor holds None."""

from __future__ import annotations

import math

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import BenchRow


def _row(floor: object) -> BenchRow:
    return BenchRow(
        op="mla_decode", impl="triton", config={"b": 32}, median=50.0, unit="us", floor=floor
    )


@pytest.mark.parametrize("floor", [0, 0.0, -0.0, -1.0, math.inf, math.nan])
def test_a_floor_of_no_cost_or_no_number_is_refused_naming_the_field(floor: float) -> None:
    with pytest.raises(InputError, match=r"floor: Expected a finite number > 0 or None, got"):
        _row(floor)


@pytest.mark.parametrize("floor", [None, 1e-9, 35.7])
def test_a_floor_above_zero_or_none_is_kept(floor: float | None) -> None:
    assert _row(floor).floor == floor
