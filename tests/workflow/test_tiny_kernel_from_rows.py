"""A hand-off built from rows keeps a tiny kernel's shares non-zero, as profile_report does."""

from __future__ import annotations

import warnings

from kernelopt.workflow import parse_profile, profile_from_rows

from .conftest import bench_row

# A launch-bound router: 44 us a call for 0.0037 % of its floor, next to nothing moved.
TINY = {
    "dram_pct": 0.0026,
    "tc_pct": 0.00009,
    "floor_pct": 0.0037,
    "arith_intensity": 0.5,
    "ridge": 163.2,
    "launch_overhead_pct": 84.5,
}


def test_tiny_shares_keep_their_digits() -> None:
    # Written with no decimals they read "0% of roofline floor" and "0% of the copy
    # bandwidth": a reader cannot tell them from a count that is broken.
    [report] = profile_from_rows([bench_row("v1", 44.16, metrics=TINY)], kernel="k", version="v1")
    text = report.render()
    assert "0.0037% of roofline floor" in text
    assert "0.0026% of the copy bandwidth and 0.00009% of the matmul rate" in text
    assert " 0% " not in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_profile(text).render() == text


def test_shares_of_a_percent_or_more_read_as_before() -> None:
    [report] = profile_from_rows([bench_row("v1", 74.0)], kernel="k", version="v1")
    text = report.render()
    assert "54% of roofline floor" in text and "54% of the copy bandwidth and 10% of" in text
