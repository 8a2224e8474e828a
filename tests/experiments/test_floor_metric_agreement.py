"""The floor readers (``Experiment.floors``) and the metric readers (``floor_pct``) read one
hand-written ``Of floor`` cell alike: the same share, or none, and the same warning.

A share of 0 was ``floor_pct`` 0 to the metric readers and no floor row to the floor readers;
a share of no sure reading (``1.234,5``) was named by the metric readers and passed over in
silence by the floor readers. A row at 0 % of its floor measured nothing of it: both refuse
it now, in the same words, and both name a number they cannot read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import Experiment, ExperimentLog, SourceRef, read_log
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._metrics import table_metric
from kernelopt.experiments.readers.floors import result_floors

from ..conftest import FUSED_SUMMARY, write_files

SUMMARY = FUSED_SUMMARY
RESULT = "experiments/exp_2/result.md"
HEADER = "| Point | Of floor | Bound |\n|---|---|---|\n"
# The first table row is line 7 of the result (heading, blank, status, blank, header, rule).
FIRST_ROW = 7


def _rows(*shares: str) -> str:
    return HEADER + "".join(f"| b={at} | {share} | memory |\n" for at, share in enumerate(shares))


def _hand_log(root: Path, table: str) -> Path:
    """A log whose exp 2 result is ``table``, written by hand."""
    result = f"# Experiment 2: fused kernel\n\n- Status: KEPT\n\n{table}"
    return write_files(root, {"experiments/summary.md": SUMMARY, RESULT: result})


def _numbered(log: ExperimentLog, number: int) -> Experiment:
    experiment = log.experiment(number)
    assert experiment is not None
    return experiment


def _result_file(table: str) -> TextFile:
    text = f"# Experiment 2: fused kernel\n\n- Status: KEPT\n\n{table}"
    return TextFile(path=RESULT, text=text, lines=tuple(text.split("\n")))


@pytest.mark.parametrize("share", ["0", "0%", "0.0", "0 %", "-0.5", "-3%"])
def test_a_share_at_or_below_zero_is_no_metric_and_no_floor_and_is_named(
    tmp_path: Path, share: str
) -> None:
    log = read_log(_hand_log(tmp_path, _rows(share)), catalog=())

    exp_2 = _numbered(log, 2)
    assert "floor_pct" not in exp_2.metrics
    assert exp_2.floors == ()
    assert (
        f"{RESULT}:{FIRST_ROW}: Expected Of floor as a share above 0, got {share}; not read"
        in log.warnings
    )


def test_a_zero_share_leaves_the_next_row_to_both_readers(tmp_path: Path) -> None:
    # The metric readers took the 0 as floor_pct and the floor readers the 0.78 as the row.
    log = read_log(_hand_log(tmp_path, _rows("0", "0.78")), catalog=())

    exp_2 = _numbered(log, 2)
    assert exp_2.metrics["floor_pct"] == 78.0
    assert [(row.point, row.fraction) for row in exp_2.floors] == [("b=1", 0.78)]


@pytest.mark.parametrize(
    "share", ["0", "0%", "-1", "1.234,5", "270-276", "", "n/a", "0.78", "78", "78%", "1.2"]
)
def test_both_readers_read_one_cell_alike_and_say_the_same(share: str) -> None:
    table = _rows(share)
    where = SourceRef(path=RESULT, line=FIRST_ROW)
    metric_warnings: list[str] = []
    percent = table_metric("floor_pct", "Of floor", share, where, metric_warnings)
    floor_warnings: list[str] = []

    floors = result_floors(_result_file(table), (), warnings=floor_warnings)

    assert floor_warnings == metric_warnings
    if percent is None:
        assert floors == ()
    else:
        (row,) = floors
        assert row.fraction * 100.0 == pytest.approx(percent)


def test_the_floor_reader_names_a_share_of_no_sure_reading_on_any_row() -> None:
    # The metric readers take the first row with a share and read no further; the floor
    # readers read every row, so a later row's unreadable share is theirs to name.
    warnings: list[str] = []

    floors = result_floors(_result_file(_rows("0.78", "1.234,5", "0")), (), warnings=warnings)

    assert [(row.point, row.fraction) for row in floors] == [("b=0", 0.78)]
    assert warnings == [
        f"{RESULT}:{FIRST_ROW + 1}: Expected a number such as 1234.5, 1,234.5 or 0,075, "
        "got '1.234,5'; not read",
        f"{RESULT}:{FIRST_ROW + 2}: Expected Of floor as a share above 0, got 0; not read",
    ]


def test_a_floor_beside_its_time_needs_no_share_and_warns_of_none() -> None:
    table = "| Point | Median (us) | Floor (us) |\n|---|---|---|\n| b=1 | 45.6 | 35.7 |\n"
    warnings: list[str] = []

    (row,) = result_floors(_result_file(table), (), warnings=warnings)

    assert row.fraction == pytest.approx(35.7 / 45.6)
    assert warnings == []
