"""A small shortfall keeps the loop in its language: 1 us short of a 50 us target (2 %)
was sent "back to SELECT (step 3): choose the language and control level again"."""

from __future__ import annotations

import pytest

from kernelopt.bench import BenchRow
from kernelopt.workflow import NextStep, Target, evaluate, from_dict, to_dict
from kernelopt.workflow.target import SMALL_SHORTFALL_PCT, Evaluation


def _row(median: float, tokens: int = 64) -> BenchRow:
    return BenchRow(
        op="fp8_quant",
        impl="v3",
        config={"tokens": tokens, "hidden": 7168},
        median=median,
        gpu="NVIDIA H100",
        metrics={"floor_pct": 50.0},
    )


def test_a_small_shortfall_stays_in_the_language() -> None:
    result = evaluate(Target(median=50, unit="us"), [_row(51.0)])
    assert result.points[0].checks[0].shortfall_pct == pytest.approx(2.0)
    assert result.next_step is NextStep.TUNE
    assert result.render().endswith(
        "Next step: stay in this language and control level (step 4, STRATEGIZE): take the "
        "profile's next opportunity or tune the configuration; every shortfall is within 5 % "
        "of its target; short at hidden=7168 tokens=64.\n"
    )
    assert from_dict(to_dict(result), Evaluation) == result


def test_a_large_shortfall_goes_back_to_select() -> None:
    result = evaluate(Target(median=50, unit="us"), [_row(51.0), _row(60.0, tokens=4096)])
    assert result.next_step is NextStep.SELECT
    assert "Next step: back to SELECT (step 3)" in result.render()


def test_the_threshold_is_a_share_of_the_target() -> None:
    at = 50 * (1 + SMALL_SHORTFALL_PCT / 100)
    assert evaluate(Target(median=50, unit="us"), [_row(at)]).next_step is NextStep.TUNE
    assert evaluate(Target(median=50, unit="us"), [_row(at + 0.01)]).next_step is NextStep.SELECT
    # A floor share short by 1 pp of 51 % is 2 % of its target.
    assert evaluate(Target(floor_pct=51), [_row(10.0)]).next_step is NextStep.TUNE
