"""A match reason shows a measured fact to a few digits, never less than tell it from the
bound it was compared with."""

from __future__ import annotations

from kernelopt.catalog import parse_condition


def _describe(condition: str, facts: dict[str, float]) -> list[str]:
    return [c.describe(facts) for c in parse_condition(condition).comparisons]


def test_a_share_is_shown_to_four_digits() -> None:
    shown = _describe("dominant_shape_share >= 0.5", {"dominant_shape_share": 0.6279067562048819})
    assert shown == ["dominant_shape_share >= 0.5 (dominant_shape_share=0.6279)"]


def test_a_value_a_hair_from_the_bound_keeps_the_digits_that_tell_them_apart() -> None:
    shown = _describe("dominant_shape_share >= 0.5", {"dominant_shape_share": 0.49999999})
    assert shown == ["dominant_shape_share >= 0.5 (dominant_shape_share=0.49999999)"]


def test_whole_numbers_and_metric_bounds_read_as_before() -> None:
    assert _describe("dram_pct > 60", {"dram_pct": 85.0}) == ["dram_pct > 60 (dram_pct=85)"]
    shown = _describe("dram_pct > sm_pct", {"dram_pct": 85.123456, "sm_pct": 85.12349})
    assert shown == ["dram_pct > sm_pct (dram_pct=85.12346, sm_pct=85.12349)"]
