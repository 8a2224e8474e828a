"""Roofline floor rows as the readers carry them and diagnose reads them: a floor beside a
time is profiling data, an Of-floor cell reads the same to the metric and the floor readers,
and each experiment of a loose results.md holds the rows of its own lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import diagnose_log
from kernelopt.diagnose.floors import latest_floors
from kernelopt.diagnose.model import Pathology
from kernelopt.experiments import Experiment, ExperimentLog, read_log
from tests.conftest import write_files

# Five experiments, the last three aimed at compute: work a memory-bound kernel wastes.
SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | eager baseline | 60.0 | us | PASS | BASELINE |
| 2 | fused kernel | 50.0 | us | PASS | KEPT |
| 3 | bigger MMA tiles for the tensor cores | 50.4 | us | PASS | REVERTED |
| 4 | unroll the dot loop, more FMA per instruction | 50.2 | us | PASS | REVERTED |
| 5 | tf32 dot precision for the MMA | 50.1 | us | PASS | REVERTED |
"""


def _numbered(log: ExperimentLog, number: int) -> Experiment:
    experiment = log.experiment(number)
    assert experiment is not None
    return experiment


# --- a floor beside a time is profiling data ----------------------------------------------


def test_a_floor_time_and_bound_table_is_profiling_data(tmp_path: Path) -> None:
    # No Of floor column: the row places the kernel through its floor and time alone.
    result = (
        "# Experiment 5: tf32 dot precision for the MMA\n\n- Status: REVERTED\n\n"
        "| Point | Time (us) | Floor (us) | Bound |\n|---|---|---|---|\n"
        "| b=32 h=16 | 50.1 | 35.07 | memory |\n"
    )
    root = write_files(
        tmp_path, {"experiments/summary.md": SUMMARY, "experiments/exp_5/result.md": result}
    )
    log = read_log(root, catalog=())
    (row,) = _numbered(log, 5).floors
    assert (row.ceiling, row.fraction) == ("memory", pytest.approx(0.7))
    assert not any(e.metrics for e in log.experiments)

    finding = diagnose_log(log, catalog=None).finding(Pathology.WRONG_BOTTLENECK)

    assert finding is not None
    assert finding.summary.startswith(
        "The kernel is memory-bound (exp 5: b=32 h=16 at 70.0% of its roofline floor (35.07 "
        "us, set by memory))"
    )
    assert "No profiling data" not in finding.summary


# --- one share for one row ----------------------------------------------------------------

FLOOR_TIME_SHARE = (
    "| Point | Time (us) | Floor (us) | Of floor | Bound |\n|---|---|---|---|---|\n"
    "| b=32 h=16 | 45.6 | 35.7 | {share} | memory |\n"
)


def _result_log(root: Path, table: str) -> ExperimentLog:
    result = f"# Experiment 2: fused kernel\n\n- Status: KEPT\n\n{table}"
    files = {"experiments/summary.md": SUMMARY, "experiments/exp_2/result.md": result}
    return read_log(write_files(root, files), catalog=())


@pytest.mark.parametrize("share", ["7.8", "0.78", "78", ""])
def test_a_bare_share_beside_a_floor_and_a_time_reads_as_floor_over_time(
    tmp_path: Path, share: str
) -> None:
    # "7.8" was floor_pct 7.8 to the metric readers, 78.3 % (floor over time) to the floors.
    exp_2 = _numbered(_result_log(tmp_path, FLOOR_TIME_SHARE.format(share=share)), 2)

    (row,) = exp_2.floors
    assert row.fraction == 35.7 / 45.6
    assert exp_2.metrics["floor_pct"] == pytest.approx(100 * 35.7 / 45.6)


def test_a_share_with_a_percent_sign_reads_as_written_by_both(tmp_path: Path) -> None:
    exp_2 = _numbered(_result_log(tmp_path, FLOOR_TIME_SHARE.format(share="78.4%")), 2)

    (row,) = exp_2.floors
    assert row.fraction == pytest.approx(0.784)
    assert exp_2.metrics["floor_pct"] == 78.4


def test_profile_md_reads_a_share_beside_a_floor_and_a_time_as_the_floors_do(
    tmp_path: Path,
) -> None:
    profile = "# Profile\n\n" + FLOOR_TIME_SHARE.format(share="7.8")
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, "profile.md": profile})

    log = read_log(root, catalog=())

    assert log.profile is not None
    assert log.profile.metrics["floor_pct"] == pytest.approx(100 * 35.7 / 45.6)


def test_a_share_in_another_unit_than_the_time_is_read_alone(tmp_path: Path) -> None:
    # A floor in ms beside a time in us is no floor over time: the cell speaks for itself.
    table = (
        "| Point | Time (us) | Floor (ms) | Of floor |\n|---|---|---|---|\n"
        "| b=32 h=16 | 45.6 | 0.0357 | 7.8 |\n"
    )
    exp_2 = _numbered(_result_log(tmp_path, table), 2)

    (row,) = exp_2.floors
    assert row.fraction == pytest.approx(0.078)
    assert exp_2.metrics["floor_pct"] == 7.8


# --- each experiment of a loose results.md holds its own rows ------------------------------

DEVLOG = """# Results

## 2026-01-01: fused kernel

| Point | Time (us) | Floor (us) | Bound |
|---|---|---|---|
| b=32 h=16 | 50.0 | 35.0 | memory |

## 2026-01-02: bigger MMA tiles

Correctness: PASS. Reverted.
"""


def test_a_devlog_entry_holds_only_the_floor_rows_of_its_own_lines(tmp_path: Path) -> None:
    log = read_log(write_files(tmp_path, {"results.md": DEVLOG}), catalog=())

    first, second = log.experiments
    assert [str(row.source) for row in first.floors] == ["results.md:7"]
    # The latest entry states no floor: the kernel was last placed by the first entry.
    assert second.floors == ()
    (reading,) = latest_floors(log)
    assert reading.experiment == first


TABLE = """# Results

| Exp | Description | Time (us) | Floor (us) | Bound | Status |
|---|---|---|---|---|---|
| 1 | eager baseline | 60.0 | 30.0 | compute | BASELINE |
| 2 | fused kernel | 50.0 | 35.0 | memory | KEPT |
| 3 | bigger MMA tiles | 49.0 |  |  | KEPT |
"""


def test_a_table_row_holds_only_its_own_floor(tmp_path: Path) -> None:
    log = read_log(write_files(tmp_path, {"results.md": TABLE}), catalog=())

    rows = {
        e.number: [(r.point, r.ceiling, str(r.source)) for r in e.floors] for e in log.experiments
    }
    assert rows == {
        1: [("1", "compute", "results.md:5")],
        2: [("2", "memory", "results.md:6")],
        3: [],
    }
    (reading,) = latest_floors(log)
    assert (reading.experiment.number, reading.ceiling) == (2, "memory")


def test_a_table_row_and_its_section_hold_the_rows_of_both(tmp_path: Path) -> None:
    text = TABLE + (
        "\n## fused kernel\n\n| Point | Time (us) | Floor (us) | Bound |\n|---|---|---|---|\n"
        "| b=32 h=128 | 80.0 | 60.0 | compute |\n"
    )
    log = read_log(write_files(tmp_path, {"results.md": text}), catalog=())

    assert [str(row.source) for row in _numbered(log, 2).floors] == [
        "results.md:6",
        "results.md:13",
    ]
    assert [str(row.source) for row in _numbered(log, 1).floors] == ["results.md:5"]


STEPS = """# Results

| Step | Description | Time (us) | Floor (us) | Bound |
|---|---|---|---|---|
| 1 | eager baseline | 60.0 | 30.0 | compute |
| 2 | fused kernel | 50.0 | 35.0 | memory |

## Step 1: eager baseline

Kept as the baseline.

## Step 2: fused kernel

| Point | Time (us) | Floor (us) | Bound |
|---|---|---|---|
| b=32 h=128 | 80.0 | 60.0 | compute |
"""


def test_a_step_read_from_its_row_and_its_section_holds_the_rows_of_both(
    tmp_path: Path,
) -> None:
    # The row and the section are read apart and merged into one experiment: it keeps both.
    log = read_log(write_files(tmp_path, {"results.md": STEPS}), catalog=())

    assert [str(row.source) for row in _numbered(log, 2).floors] == [
        "results.md:6",
        "results.md:16",
    ]
    assert [str(row.source) for row in _numbered(log, 1).floors] == ["results.md:5"]


def test_a_repeated_table_row_adds_no_floor_of_its_own(tmp_path: Path) -> None:
    # Only the first row of a repeated experiment is read, its floor with the rest.
    text = TABLE + "| 2 | fused kernel, again | 55.0 | 35.0 | compute | KEPT |\n"
    log = read_log(write_files(tmp_path, {"results.md": text}), catalog=())

    (row,) = _numbered(log, 2).floors
    assert (str(row.source), row.ceiling) == ("results.md:6", "memory")
    assert any("line 8 repeats exp 2" in unread.reason for unread in log.unread)
