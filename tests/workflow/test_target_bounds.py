"""A target's bounds below zero are refused in the words of the bound they miss."""

from __future__ import annotations

import pytest

from kernelopt import InputError
from kernelopt.workflow import Target


@pytest.mark.parametrize("share", [-1.0, 0.0, 101.0])
def test_a_floor_share_outside_its_range_names_the_range(share: float) -> None:
    with pytest.raises(InputError) as refused:
        Target(floor_pct=share)
    assert str(refused.value) == (
        f"Target.floor_pct: Expected a share of the floor in (0, 100] %, got {share!r}"
    )


@pytest.mark.parametrize(("field", "value"), [("median", -1.0), ("speedup", -2.0)])
def test_a_negative_bound_is_told_it_must_be_above_zero(field: str, value: float) -> None:
    with pytest.raises(InputError) as refused:
        Target(**{field: value})
    assert str(refused.value) == f"Target.{field}: Expected a number > 0 or None, got {value!r}"
