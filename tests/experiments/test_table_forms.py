"""Summary tables as people write them: the shortest separator row markdown allows, and
the spellings of a Unit column, read into the records' one spelling per unit."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import read_log

HEADER = "| Exp | Description | Latency | Unit | Speedup | Correct | Status |\n"
ROWS = (
    "| 1 | baseline | 10.5 | us | 1.0 | PASS | BASELINE |\n"
    "| 2 | tile the keys | 8.2 | us | 1.28 | PASS | KEPT |\n"
)


def _read(tmp_path: Path, summary: str):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "summary.md").write_text(summary, encoding="utf-8")
    return read_log(tmp_path)


@pytest.mark.parametrize(
    "separator",
    ["|-|-|-|-|-|-|-|", "|:-|-:|:-:|-|-|-|-|", "| - | - | - | - | - | - | - |", "-|-|-|-|-|-|-"],
)
def test_a_separator_of_one_dash_per_cell_starts_a_table(tmp_path: Path, separator: str) -> None:
    log = _read(tmp_path, f"# Summary\n\n{HEADER}{separator}\n{ROWS}")

    assert [(e.number, e.latency, e.status.value) for e in log.experiments] == [
        (1, 10.5, "BASELINE"),
        (2, 8.2, "KEPT"),
    ]


def test_a_lone_dash_under_a_line_with_a_pipe_is_no_table(tmp_path: Path) -> None:
    # An empty list item under prose that mentions a pipe: no separator of a table.
    text = "Use a | b for the join.\n-\nplain text\n"
    (tmp_path / "notes.md").write_text(text, encoding="utf-8")

    from kernelopt.experiments.readers._markdown import tables

    assert tables(text.split("\n")) == []


@pytest.mark.parametrize(
    ("written", "unit"),
    [
        ("us", "us"),
        ("µs", "us"),  # U+00B5, the micro sign
        ("μs", "us"),  # U+03BC, the Greek mu
        ("usec", "us"),
        ("US", "us"),
        ("msec", "ms"),
        ("MS", "ms"),
        ("**ms**", "ms"),
        ("ns", "ns"),
        ("sec", "s"),
    ],
)
def test_a_unit_column_reads_in_the_canonical_spelling(
    tmp_path: Path, written: str, unit: str
) -> None:
    rows = ROWS.replace("| us |", f"| {written} |")
    log = _read(tmp_path, f"{HEADER}|---|---|---|---|---|---|---|\n{rows}")

    assert [(e.latency, e.unit) for e in log.experiments] == [(10.5, unit), (8.2, unit)]
    assert all(p.unit == unit for e in log.experiments for p in e.points)


def test_a_unit_column_naming_cycles_keeps_the_unit(tmp_path: Path) -> None:
    # "cycles" is no time: read as microseconds, 8.2 cycles would compare with 10.5 us.
    rows = ROWS.replace("| 2 | tile the keys | 8.2 | us |", "| 2 | tile the keys | 8.2 | cycles |")
    log = _read(tmp_path, f"{HEADER}|---|---|---|---|---|---|---|\n{rows}")

    assert [(e.latency, e.unit) for e in log.experiments] == [(10.5, "us"), (8.2, "cycles")]


def test_a_unit_column_naming_neither_time_nor_cycles_leaves_the_unit_unread_and_says_so(
    tmp_path: Path,
) -> None:
    rows = ROWS.replace("| 2 | tile the keys | 8.2 | us |", "| 2 | tile the keys | 8.2 | flops |")
    log = _read(tmp_path, f"{HEADER}|---|---|---|---|---|---|---|\n{rows}")

    assert [(e.latency, e.unit) for e in log.experiments] == [(10.5, "us"), (8.2, None)]
    assert any(
        "experiments/summary.md:4" in warning
        and "Expected a time unit" in warning
        and "'flops'" in warning
        for warning in log.warnings
    ), log.warnings


def test_a_table_without_its_separator_row_is_read_and_named(tmp_path: Path) -> None:
    # Markdown renders no table here, but the rows are the log's experiments: losing them
    # unsaid would read as an empty log.
    log = _read(tmp_path, f"# Summary\n\n{HEADER}{ROWS}\nNotes below.\n")

    assert [(e.number, e.latency, e.unit, e.status.value) for e in log.experiments] == [
        (1, 10.5, "us", "BASELINE"),
        (2, 8.2, "us", "KEPT"),
    ]
    assert [(e.refs["latency"].line) for e in log.experiments] == [4, 5]
    assert any(
        warning.startswith("experiments/summary.md:3: Expected a |---| row under the header")
        for warning in log.warnings
    ), log.warnings


def test_pipe_lines_of_no_experiment_table_stay_unread_without_a_warning(tmp_path: Path) -> None:
    text = f"{HEADER}|---|---|---|---|---|---|---|\n{ROWS}\n| a | b |\n| c | d |\n"
    log = _read(tmp_path, text)

    assert [e.number for e in log.experiments] == [1, 2]
    assert log.warnings == ()


def test_a_table_in_a_code_block_without_a_separator_is_not_read(tmp_path: Path) -> None:
    text = (
        f"{HEADER}|---|---|---|---|---|---|---|\n{ROWS}\n```\n{HEADER}| 3 | x | 1.0 | us |\n```\n"
    )
    log = _read(tmp_path, text)

    assert [e.number for e in log.experiments] == [1, 2]
    assert log.warnings == ()


SPEEDUPS = (
    "| Exp | Description | Latency | Speedup | Status |\n|---|---|---|---|---|\n"
    "| 1 | baseline | 10 us | 1.0 | BASELINE |\n| 2 | tile the keys | 8 us | {} | KEPT |\n"
)


@pytest.mark.parametrize(
    ("cell", "speedup"),
    [("1.25x", 1.25), ("×1.25", 1.25), ("x1.25", 1.25), ("× 1.25", 1.25), ("1.25", 1.25)],
)
def test_a_speedup_cell_reads_its_ratio(tmp_path: Path, cell: str, speedup: float) -> None:
    log = _read(tmp_path, SPEEDUPS.format(cell))

    assert log.experiments[1].speedup == speedup
    assert log.warnings == ()


@pytest.mark.parametrize("cell", ["+25%", "25% faster", "125%", "25 %", "-5%"])
def test_a_percentage_in_a_speedup_column_is_no_ratio(tmp_path: Path, cell: str) -> None:
    # "+25%" read as a speedup of 25 would pass for a 25x best; as a ratio it could be
    # 1.25x (rate) or 1.33x (time 25% shorter): no one reading is sure.
    log = _read(tmp_path, SPEEDUPS.format(cell))

    assert log.experiments[1].speedup is None
    assert log.experiments[1].latency == 8.0
    assert any(
        warning.startswith("experiments/summary.md:4: Expected a speedup ratio such as 1.25x")
        and repr(cell) in warning
        for warning in log.warnings
    ), log.warnings


def test_a_bare_pipe_in_a_description_keeps_the_rest_of_the_row(tmp_path: Path) -> None:
    # "a | b" splits the row into one cell more than its header: cut at the header's
    # width, every value after the description would move one column to the left.
    rows = ROWS.replace("| tile the keys |", "| tile the keys | then the values |")
    log = _read(tmp_path, f"{HEADER}|---|---|---|---|---|---|---|\n{rows}")

    second = log.experiments[1]
    assert second.description == "tile the keys | then the values"
    assert (second.latency, second.unit, second.speedup) == (8.2, "us", 1.28)
    assert (second.correctness.value, second.status.value) == ("PASS", "KEPT")
    assert any(
        w.startswith("experiments/summary.md:4: Expected 7 cells as in the header, got 8")
        for w in log.warnings
    ), log.warnings


def test_a_row_too_wide_for_any_reading_is_named(tmp_path: Path) -> None:
    header = "| Exp | Latency | Status |\n|---|---|---|\n"
    log = _read(tmp_path, f"{header}| 1 | 10 us | KEPT |\n| 2 | 9 us | KEPT | extra |\n")

    assert [(e.number, e.latency) for e in log.experiments] == [(1, 10.0), (2, 9.0)]
    assert any(
        w.startswith("experiments/summary.md:4: Expected 3 cells as in the header, got 4")
        for w in log.warnings
    ), log.warnings


def test_rows_too_wide_are_named_up_to_a_bound(tmp_path: Path) -> None:
    header = "| Exp | Latency | Status |\n|---|---|---|\n"
    rows = "".join(f"| {n} | {10 + n} us | KEPT | extra |\n" for n in range(1, 31))
    log = _read(tmp_path, header + rows)

    assert len(log.experiments) == 30
    wide = [w for w in log.warnings if "cells as in the header" in w]
    assert len(wide) == 20
    assert "experiments/summary.md:1: 10 more rows hold more cells than the header" in " ".join(
        log.warnings
    )


@pytest.mark.parametrize(
    ("header", "unit"),
    [("Kernel (ns)", "ns"), ("Kernel_ns", "ns"), ("Kernel (μs)", "us"), ("Kernel (µs)", "us")],
)
def test_a_column_named_by_its_time_unit_is_a_latency(
    tmp_path: Path, header: str, unit: str
) -> None:
    text = (
        f"| Exp | Description | {header} | Status |\n|---|---|---|---|\n"
        "| 1 | baseline | 12.5 | BASELINE |\n| 2 | tile the keys | 10 | KEPT |\n"
    )
    log = _read(tmp_path, text)

    assert [(e.latency, e.unit) for e in log.experiments] == [(12.5, unit), (10.0, unit)]


def test_experiment_ids_with_a_mark_or_a_remark_are_read(tmp_path: Path) -> None:
    ids = ["1", "7 (rerun)", "11*", "exp 12 ✓", "E13"]
    rows = "".join(f"| {cell} | try {n} | {20 - n} us | KEPT |\n" for n, cell in enumerate(ids))
    log = _read(tmp_path, "| Exp | Description | Latency | Status |\n|---|---|---|---|\n" + rows)

    assert [(e.number, e.description) for e in log.experiments] == [
        (1, "try 0"),
        (7, "try 1"),
        (11, "try 2"),
        (12, "try 3"),
        (13, "try 4"),
    ]
    assert log.warnings == ()


def test_a_row_whose_id_names_no_experiment_number_is_named(tmp_path: Path) -> None:
    ids = ["1", "3a", "8.1", "—", "4"]
    rows = "".join(f"| {cell} | try {n} | {20 - n} us | KEPT |\n" for n, cell in enumerate(ids))
    log = _read(tmp_path, "| Exp | Description | Latency | Status |\n|---|---|---|---|\n" + rows)

    assert [e.number for e in log.experiments] == [1, 4]
    named = [w for w in log.warnings if "Expected an experiment number" in w]
    assert [w.split(": Expected")[0] for w in named] == [
        "experiments/summary.md:4",
        "experiments/summary.md:5",
    ]
    assert "got '3a'; the row was not read" in named[0]
