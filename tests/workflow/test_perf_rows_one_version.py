"""One version for rows of several implementations would keep only the last of each point."""

from __future__ import annotations

import pytest

from kernelopt import InputError
from kernelopt.bench import BenchRow
from kernelopt.workflow import perf_rows_from_bench


def _row(impl: str, median: float) -> BenchRow:
    return BenchRow(
        op="softmax", impl=impl, config={"rows": 16, "cols": 128}, median=median,
        gpu="NVIDIA H200", timestamp="2026-12-02T10:00:00+00:00",
    )  # fmt: skip


def test_a_version_over_rows_of_two_implementations_is_refused() -> None:
    rows = [_row("fused", 22.4), _row("fused_shortcut", 7.8)]
    with pytest.raises(InputError) as refused:
        perf_rows_from_bench(rows, version="v3")
    assert str(refused.value) == (
        "rows: Expected rows of one implementation for version='v3', got 2 (fused, "
        "fused_shortcut): pass the rows of one, or no version to name each row's table "
        "after its impl"
    )
    # Without a version each row keeps its own table; one implementation takes the name.
    assert [r.version for r in perf_rows_from_bench(rows)] == ["fused", "fused_shortcut"]
    assert [r.version for r in perf_rows_from_bench(rows[:1], version="v3")] == ["v3"]
