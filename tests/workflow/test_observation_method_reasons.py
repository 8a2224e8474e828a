"""An observation says why two rows were judged by their medians, and writes its metrics
with their digits."""

from __future__ import annotations

from kernelopt.catalog import Catalog, render_entry
from kernelopt.workflow import derive_anti_pattern, observe_rows

from .conftest import bench_row


def test_too_few_samples_on_one_side_is_said_as_such() -> None:
    before = bench_row("v1", 100.0, samples=8)
    after = bench_row("v2", 80.0, samples=3, seed=1)
    method = observe_rows(before, after, source="a vs b").method
    assert "no raw samples kept" not in method
    assert "raw samples kept: before 8, after 3" in method
    assert "at least 4 on each side (after 3)" in method


def test_rows_without_samples_still_say_none_were_kept() -> None:
    method = observe_rows(bench_row("v1", 100.0), bench_row("v2", 80.0), source="x").method
    assert method.endswith("(no raw samples kept)")


def test_samples_of_two_rows_are_judged_unpaired() -> None:
    before = bench_row("v1", 100.0, samples=8)
    after = bench_row("v2", 80.0, samples=8, seed=1)
    method = observe_rows(before, after, source="x").method
    assert method.startswith("unpaired bootstrap of 8 before and 8 after samples")


def test_a_derived_anti_pattern_writes_metrics_with_their_digits() -> None:
    before = bench_row("v1", 80.0, metrics={"gbps": 3230.0, "tflops": 96.9})
    after = bench_row("v2", 100.0, metrics={"gbps": 3110.0, "tflops": 93.2})
    applied = Catalog.builtin().get("split-kv-flash-decoding")
    entry = derive_anti_pattern(applied, observe_rows(before, after, source="x"))
    text = render_entry(entry)
    assert "gbps 3230 -> 3110" in text
    assert "e+0" not in text
