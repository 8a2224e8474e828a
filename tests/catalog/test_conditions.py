"""Metric triggers and shape conditions: parsing, text form, evaluation."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelopt import InputError
from kernelopt.catalog import Comparison, Condition, Op, parse_condition
from kernelopt.catalog.conditions import format_number


def test_parse_number_and_metric_comparisons() -> None:
    cond = parse_condition("dram_pct > 60 and arith_intensity<ridge", note="memory-bound")
    assert [str(c) for c in cond.comparisons] == ["dram_pct > 60", "arith_intensity < ridge"]
    assert cond.comparisons[0].value == 60.0 and cond.comparisons[1].other == "ridge"
    assert str(cond) == "dram_pct > 60 and arith_intensity < ridge"
    assert cond.names == ("dram_pct", "arith_intensity", "ridge")


@pytest.mark.parametrize(
    ("text", "facts", "result"),
    [
        ("dram_pct > 60", {"dram_pct": 85.0}, True),
        ("dram_pct > 60", {"dram_pct": 60.0}, False),
        ("dram_pct >= 60", {"dram_pct": 60.0}, True),
        ("s_q == 1", {"s_q": 1}, True),
        ("s_q != 1", {"s_q": 1}, False),
        ("arith_intensity < ridge", {"arith_intensity": 30.0, "ridge": 163.0}, True),
        ("arith_intensity < ridge", {"arith_intensity": 30.0}, None),
        ("dram_pct > 60 and tc_pct < 20", {"dram_pct": 85.0, "tc_pct": 10.0}, True),
        ("dram_pct > 60 and tc_pct < 20", {"dram_pct": 85.0, "tc_pct": 30.0}, False),
        # One false comparison decides even when another metric is missing.
        ("dram_pct > 60 and tc_pct < 20", {"dram_pct": 10.0}, False),
        ("dram_pct > 60", {"dram_pct": math.nan}, None),
    ],
)
def test_evaluate(text: str, facts: dict[str, float], result: bool | None) -> None:
    assert parse_condition(text).evaluate(facts) is result


def test_describe_shows_the_values_tested() -> None:
    cond = parse_condition("arith_intensity < ridge")
    assert cond.describe({"arith_intensity": 30, "ridge": 163.2}) == (
        "arith_intensity < ridge (arith_intensity=30, ridge=163.2)"
    )


@pytest.mark.parametrize(
    "bad", ["dram_pct >", "60 > dram_pct", "dram_pct => 60", "", "a > 1 or b < 2"]
)
def test_malformed_conditions_raise_expected_got(bad: str) -> None:
    with pytest.raises(InputError, match="Expected a comparison"):
        parse_condition(bad)


def test_comparison_needs_exactly_one_right_side() -> None:
    with pytest.raises(InputError, match="exactly one of value and other"):
        Comparison(name="a", op=Op.GT)
    with pytest.raises(InputError, match="exactly one of value and other"):
        Comparison(name="a", op=Op.GT, value=1.0, other="b")
    with pytest.raises(InputError, match="finite"):
        Comparison(name="a", op=Op.GT, value=math.inf)
    with pytest.raises(InputError, match="identifier"):
        Comparison(name="1a", op=Op.GT, value=1.0)
    with pytest.raises(InputError, match="at least one comparison"):
        Condition(comparisons=())


def test_a_comparison_holds_any_real_number_as_a_float() -> None:
    np = pytest.importorskip("numpy")
    for value in (np.int64(60), np.float32(60), Fraction(60)):
        comparison = Comparison(name="dram_pct", op=Op.GT, value=value)
        assert comparison == Comparison(name="dram_pct", op=Op.GT, value=60.0)
        assert type(comparison.value) is float
    with pytest.raises(InputError, match="value: Expected a finite number, got True"):
        Comparison(name="a", op=Op.GT, value=True)
    with pytest.raises(InputError, match="value: Expected a finite number, got '60'"):
        Comparison(name="a", op=Op.GT, value="60")  # type: ignore[arg-type]


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_round_trip_through_text(value: float) -> None:
    cond = parse_condition(f"x > {format_number(value)}")
    assert cond.comparisons[0].value == value


@pytest.mark.parametrize(
    "make",
    [
        lambda: Comparison(name="and", op=">", value=1),
        lambda: Comparison(name="x", op=">", other="and"),
    ],
)
def test_the_joining_word_is_not_a_name(make: Callable[[], Comparison]) -> None:
    # "x > and and y < 1" would split at the first " and ": the text reads back as "x >".
    with pytest.raises(InputError, match=r"Expected an identifier other than 'and'"):
        make()


@given(
    st.lists(
        st.builds(
            Comparison,
            name=st.sampled_from(["x", "and_x", "x_and", "andx", "AND"]),
            op=st.sampled_from(list(Op)),
            other=st.sampled_from(["y", "andy", "AND"]),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_names_near_the_joining_word_round_trip(comparisons: list[Comparison]) -> None:
    condition = Condition(comparisons=tuple(comparisons))
    assert parse_condition(str(condition)) == condition
