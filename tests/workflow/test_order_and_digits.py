"""A devlog's numbers stay short and read back; LEARN takes the before/after order given."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from kernelopt.workflow import (
    Action,
    PerfRow,
    learn,
    observe_files,
    parse_performance,
    read_performance,
    update_devlog,
)

from .conftest import anchor_row, write_rows

HEADER = "| Version | Point | Time | TFLOP/s | GB/s | Of floor | GPU | Date |"


def _time_cell(time: float) -> str:
    return PerfRow(version="v9", point="b=1", time=time, unit="us").cells()[2]


@pytest.mark.parametrize(
    ("time", "cell"),
    [
        (1e300, "1e+300 us"),
        (12345678.9, "1.235e+07 us"),
        (999999.6, "1e+06 us"),
        (123456.4, "123456 us"),
        (69932.79, "69933 us"),
        (1.2345e-05, "0.00001234 us"),
        (1.2345e-300, "1.234e-300 us"),
    ],
)
def test_a_time_keeps_four_significant_digits_however_large(time: float, cell: str) -> None:
    # 1e300 was written with all 301 of its integer digits, 12345678.9 as 12345679.
    assert _time_cell(time) == cell


def test_every_number_cell_of_a_huge_row_is_short() -> None:
    row = PerfRow(
        version="v9",
        point="b=1",
        time=1e300,
        unit="us",
        tflop_s=2.5e20,
        gb_s=1e-300,
        floor_pct=3.5e12,
    )
    assert row.cells()[2:6] == ("1e+300 us", "2.5e+20", "1e-300", "3.5e+12%")
    assert max(len(cell) for cell in row.cells()) <= 10


@pytest.mark.parametrize("time", [1e300, 12345678.9, 999999.6, 1.2345e-300])
def test_a_large_or_tiny_time_reads_back_as_written(tmp_path: Path, time: float) -> None:
    devlog = tmp_path / "k.md"
    row = PerfRow(version="v9", point="b=1", time=time, unit="us", tflop_s=time, gb_s=time)
    first = update_devlog(devlog, [row])
    assert first.created
    [back] = read_performance(devlog)
    shown = float(row.cells()[3])
    assert (back.time, back.tflop_s, back.gb_s) == (shown, shown, shown)
    # The row as read back is the row the file holds: writing it again changes nothing,
    # and writing the original again finds it (one row, replaced in place, not added).
    assert update_devlog(devlog, [back]).unchanged
    again = update_devlog(devlog, [row])
    assert (again.unchanged, len(again.replaced), again.added) == (True, 1, ())
    assert len(read_performance(devlog)) == 1


def test_an_exponent_cell_parses_from_text() -> None:
    text = (
        "## Performance\n\n### v9\n\n" + HEADER + "\n|---|---|---|---|---|---|---|---|\n"
        "| v9 | b=1 | 1.235e+07 us | 2.5e+20 | - | 3.5e+12% | - | - |\n"
    )
    [row] = parse_performance(text)
    assert (row.time, row.tflop_s, row.floor_pct) == (1.235e7, 2.5e20, 3.5e12)


# LEARN and the order of --before and --after.


def test_learn_takes_before_and_after_as_given_whenever_each_was_timed(
    tmp_path: Path, knowledge: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A row's timestamp says when it was timed, not which version is the newer: the old
    # version timed again today (its "before" row dated after the "after" row) is a
    # measurement like any other, recorded in the order given, the date the after row's.
    monkeypatch.chdir(tmp_path)
    old = attrs.evolve(
        anchor_row("splits16", samples=40, seed=1), timestamp="2026-12-05T09:00:00+00:00"
    )
    new = attrs.evolve(
        anchor_row("splits8", samples=40, seed=2), timestamp="2026-11-20T09:00:00+00:00"
    )
    write_rows(tmp_path / "old.jsonl", old)
    write_rows(tmp_path / "new.jsonl", new)
    outcome = learn(
        observe_files("old.jsonl", "new.jsonl"),
        entry_id="split-kv-flash-decoding",
        knowledge=knowledge,
    )
    assert outcome.action is Action.EVIDENCE and outcome.row is not None
    assert outcome.row.change.endswith("(FAST)")
    assert outcome.row.config.endswith("splits16 -> splits8, NVIDIA H200, 2026-11-20")
