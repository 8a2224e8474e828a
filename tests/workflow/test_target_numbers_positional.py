"""EVALUATE writes its bounds and values positionally: a CPU run's times in microseconds
run to five digits, and ``5e+04 us`` is no way to write them."""

from __future__ import annotations

from kernelopt.workflow import Target, evaluate

from .conftest import bench_row


def test_a_bound_of_fifty_thousand_us_is_written_out() -> None:
    target = Target(median=50000)
    assert target.describe() == "median <= 50000 us at every point"


def test_evaluate_writes_the_value_the_bound_and_the_gap_positionally() -> None:
    target = Target(median=40000)
    rendered = evaluate(target, [bench_row("mine", 43940.4)], impl="mine").render()
    assert "e+0" not in rendered
    assert "43940" in rendered and "40000" in rendered and "3940" in rendered


def test_a_value_is_still_told_from_its_bound() -> None:
    # 1.19999 against a speedup bound of 1.2 must not read "1.2 short of 1.2".
    target = Target(speedup=1.2, baseline="base")
    rows = [bench_row("base", 119.999), bench_row("mine", 100.0)]
    rendered = evaluate(target, rows, impl="mine").render()
    assert "1.19999" in rendered
