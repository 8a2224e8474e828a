"""A devlog row's Of floor cell keeps a small share readable: never ``0.0%``."""

from __future__ import annotations

import pytest

from kernelopt._table_cells import share_cell
from kernelopt.experiments.canonical import render_result
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status
from kernelopt.workflow.devlog import PerfRow, parse_performance


@pytest.mark.parametrize(
    ("percent", "cell"),
    [(61.23, "61.2%"), (100.04, "100.0%"), (0.5, "0.5%"), (0.021, "0.021%"), (0.0449, "0.045%")],
)
def test_a_share_reads_to_one_decimal_or_two_significant_digits(percent: float, cell: str) -> None:
    assert share_cell(percent) == cell


def test_a_small_share_in_a_devlog_row_is_written_and_read_back_above_zero() -> None:
    row = PerfRow(version="v1", point="b=32", time=250.0, floor_pct=0.021, gpu="H200")
    assert row.cells()[5] == "0.021%"
    text = (
        "# k\n\n## Performance\n\n### v1\n\n"
        "| Version | Point | Time | TFLOP/s | GB/s | Of floor | GPU | Date |\n"
        "|---|---|---|---|---|---|---|---|\n" + row.render() + "\n"
    )
    (read,) = parse_performance(text)
    assert read.floor_pct == pytest.approx(0.021)


def test_the_devlog_and_the_canonical_result_write_one_share_the_same_way() -> None:
    # A floor 0.021 % of the median: both writers show the same cell.
    row = ResultRow(point="p", impl="triton", median=1000.0, unit="us", floor=0.21)
    record = ResultRecord(
        experiment=1,
        title="t",
        status=Status.KEPT,
        correctness=Correctness.PASS,
        date="2026-01-01",
        rows=(row,),
    )
    perf = PerfRow(version="v1", point="p", time=1000.0, floor_pct=0.021)
    assert f"| {perf.cells()[5]} |" in render_result(record)
