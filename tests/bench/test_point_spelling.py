"""A trial point has one spelling wherever bench writes it: b, s and t first, then the other
axes sorted, as the devlog and ``evaluate`` write it, whatever order it was given in."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.bench import (
    Measurement,
    ProfileReport,
    Stage,
    TrialPoint,
    to_result_row,
    write_experiment,
)
from kernelopt.bench.records import point_text
from kernelopt.bench.trials import TrialResult
from kernelopt.experiments import read_log
from kernelopt.workflow import PerfRow, update_devlog
from kernelopt.workflow._points import point_words

M = Measurement(samples=[10.0, 11.0, 12.0])
ONE = "b=2 s=1 t=8 cols=4096 rows=4"

# The same point, given in other axis orders and forms.
SPELLINGS = [
    "b=2 s=1 t=8 rows=4 cols=4096",
    "rows=4 cols=4096 t=8 s=1 b=2",
    "b=2, s=1, t=8, rows=4, cols=4096",
    {"rows": 4, "cols": 4096, "b": 2, "s": 1, "t": 8},
    {"t": 8, "cols": 4096, "s": 1, "rows": 4, "b": 2},
    TrialPoint(b=2, s=1, t=8, extra={"rows": 4, "cols": 4096}),
    TrialPoint(b=2, s=1, t=8, extra={"cols": 4096, "rows": 4}),
]


@pytest.mark.parametrize("point", SPELLINGS, ids=str)
def test_a_result_row_spells_a_point_one_way(point: object) -> None:
    row = to_result_row(M, point=point, impl="k")
    assert row.point == ONE
    # The spelling the devlog and evaluate key rows by.
    assert (
        row.point
        == point_words(row.point)
        == PerfRow(version="v1", point=point_text(point), time=1.0).point
    )


def test_a_point_without_b_s_t_sorts_its_axes() -> None:
    assert to_result_row(M, point="rows=4 cols=4096", impl="k").point == "cols=4096 rows=4"
    assert to_result_row(M, point={"rows": 4, "cols": 4096}, impl="k").point == "cols=4096 rows=4"


def test_a_named_point_is_kept_as_written() -> None:
    assert to_result_row(M, point="decode  large", impl="k").point == "decode large"


@pytest.mark.parametrize("point", SPELLINGS[-2:], ids=str)
def test_a_trial_point_prints_and_labels_in_one_spelling(point: TrialPoint) -> None:
    assert str(point) == ONE


def test_a_halved_batch_keeps_the_spelling_before_its_note() -> None:
    requested = TrialPoint(b=32, s=1, t=8, extra={"rows": 4, "cols": 4096})
    trial = TrialResult(requested=requested, point=requested.with_b(16), impl="k", measurement=M)
    assert trial.result_row().point == (
        "b=16 s=1 t=8 cols=4096 rows=4 (b halved 32 -> 16 after CUDA OOM)"
    )


@pytest.mark.parametrize("point", SPELLINGS[-2:], ids=str)
def test_a_profile_report_names_its_point_in_one_order(point: TrialPoint) -> None:
    text = ProfileReport(
        kernel="k",
        version="v1",
        point=point,
        stages=[Stage(name="kernel", duration=1.0)],
        bottleneck="Latency-bound",
        root_cause="r",
    ).render()
    assert text.splitlines()[0] == "## Profile: k v1 | b=2, s=1, t=8, cols=4096, rows=4"


def test_result_tables_and_the_log_read_back_one_spelling(tmp_path: Path) -> None:
    for number, point in enumerate(SPELLINGS):
        write_experiment(
            tmp_path,
            experiment=number,
            title=f"version {number}",
            rows=[to_result_row(M, point=point, impl="k")],
            status="BASELINE" if number == 0 else "KEPT",
            correctness="PASS",
        )
    for number in range(len(SPELLINGS)):
        text = (tmp_path / f"exp_{number}" / "result.md").read_text(encoding="utf-8")
        assert f"| {ONE} | k |" in text
    log = read_log(tmp_path)
    assert {e.headline_point for e in log.experiments} == {ONE}


def test_a_devlog_row_in_an_old_spelling_is_the_same_point(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    update_devlog(devlog, [PerfRow(version="v1", point="b=2 s=1 t=8 rows=4 cols=4096", time=2.0)])
    # A devlog row written by hand in the order bench once wrote.
    text = devlog.read_text(encoding="utf-8")
    devlog.write_text(text.replace(ONE, "b=2 s=1 t=8 rows=4 cols=4096"), encoding="utf-8")
    row = to_result_row(M, point=SPELLINGS[3], impl="k")
    update = update_devlog(devlog, [PerfRow(version="v1", point=row.point, time=1.0)])
    assert len(update.replaced) == 1
    rows = [line for line in devlog.read_text(encoding="utf-8").splitlines() if "| v1 |" in line]
    assert len(rows) == 1 and f"| {ONE} |" in rows[0]
