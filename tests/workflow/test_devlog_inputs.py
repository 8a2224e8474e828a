"""The devlog as docs/kernels/README.md describes it: numbers never in exponent form, calls
with wrong arguments refused before the file or its lock is touched, ISO dates, annotated
section headings, and no update without rows."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kernelopt import FormatError, InputError
from kernelopt.bench import BenchRow
from kernelopt.workflow import PerfRow, perf_rows_from_bench, read_performance, update_devlog

POINT = "b=32 s=1 t=4096 h=16"
HEADER = "| Version | Point | Time | TFLOP/s | GB/s | Of floor | GPU | Date |"


def _row(time: float = 66.53, **fields: object) -> PerfRow:
    return PerfRow(version="v2", point=POINT, time=time, **fields)  # type: ignore[arg-type]


def _cells(row: PerfRow) -> list[str]:
    return [cell.strip() for cell in row.render().strip("|").split("|")]


# 1. Numbers: at most four significant digits, every integer digit from 10 000 on, no
#    exponent form (rounded before the form is picked).


@pytest.mark.parametrize(
    ("time", "cell"),
    [
        (9999.95, "10000 us"),
        (9999.4, "9999 us"),
        (69933.2, "69933 us"),
        (1.2345e-05, "0.00001234 us"),
        (66.53, "66.53 us"),
        (75.0, "75 us"),
    ],
)
def test_a_time_is_never_written_in_exponent_form(time: float, cell: str) -> None:
    assert _cells(_row(time))[2] == cell


def test_rates_are_written_as_times_are() -> None:
    cells = _cells(_row(tflop_s=9999.7, gb_s=68.6))
    assert cells[3:5] == ["10000", "68.6"]
    assert not any(re.search(r"\de[-+]\d", cell) for cell in cells)


def test_a_time_near_ten_thousand_reads_back_as_written(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    update_devlog(devlog, [_row(9999.95, tflop_s=1.2345e-05)])
    assert "| 10000 us | 0.00001234 |" in devlog.read_text(encoding="utf-8")
    [back] = read_performance(devlog)
    assert (back.time, back.tflop_s) == (10000.0, 1.234e-05)


# 2. Wrong arguments: refused in the library's words, nothing written, no lock left.


@pytest.mark.parametrize("path", [3, None, b"k.md"])
def test_read_performance_refuses_a_path_that_is_no_path(path: object) -> None:
    with pytest.raises(InputError, match=r"^path: Expected a path \(str or path-like\), got "):
        read_performance(path)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "rows", "message"),
    [
        (3, [], r"^path: Expected a path \(str or path-like\), got 3$"),
        (None, [_row()], r"^path: Expected a path \(str or path-like\), got None$"),
        ("", [_row()], r"^path: Expected a path, got an empty path$"),
        ("k.md", None, r"^rows: Expected an iterable of PerfRow rows, got NoneType$"),
        ("k.md", 3, r"^rows: Expected an iterable of PerfRow rows, got int$"),
        ("k.md", _row(), r"^rows: Expected an iterable of PerfRow rows, got one PerfRow$"),
        ("k.md", [_row(), "v3"], r"^rows: Expected PerfRow rows, got str$"),
        ("k.md", [], r"^rows: Expected at least one PerfRow, got none$"),
        ("k.md", iter(()), r"^rows: Expected at least one PerfRow, got none$"),
    ],
)
def test_update_devlog_refuses_wrong_arguments_before_touching_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: object, rows: object, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=message):
        update_devlog(path, rows)  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == []


def test_no_rows_leave_an_existing_devlog_and_its_folder_as_they_were(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    devlog.write_text("# k\n\nnotes\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"^rows: Expected at least one PerfRow, got none$"):
        update_devlog(devlog, [])
    assert devlog.read_text(encoding="utf-8") == "# k\n\nnotes\n"
    assert os.listdir(tmp_path) == ["k.md"]


# 3. Dates: a row built by a caller holds an ISO date; a file's Date cell reads back as is.


@pytest.mark.parametrize(
    "date", ["yesterday", "12/02/2026", "20261202", "2026-W49-3", "2026-13-45"]
)
def test_a_row_refuses_a_date_that_is_not_iso(date: str) -> None:
    message = f"^PerfRow.date: Expected an ISO date \\(2026-12-02\\), got {re.escape(repr(date))}$"
    with pytest.raises(InputError, match=message):
        _row(date=date)


@pytest.mark.parametrize("date", ["2026-12-02", ""])
def test_a_row_takes_an_iso_date_or_none(date: str) -> None:
    assert _row(date=date).date == date


def test_a_date_a_file_already_holds_is_read_back_and_kept(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    old = f"| v2 | {POINT} | 70 us | - | - | - | NVIDIA H200 | 12/02/2026 |"
    devlog.write_text(
        f"# k\n\n## Performance\n\n### v2\n\n{HEADER}\n|-|-|-|-|-|-|-|-|\n{old}\n",
        encoding="utf-8",
    )
    assert [row.date for row in read_performance(devlog)] == ["12/02/2026"]
    update_devlog(devlog, [_row(gpu="NVIDIA H100", date="2026-12-03")])
    assert [row.date for row in read_performance(devlog)] == ["12/02/2026", "2026-12-03"]
    # The check is lifted only while the file is read.
    with pytest.raises(InputError, match="ISO date"):
        _row(date="12/02/2026")


def test_a_benchmark_row_whose_timestamp_is_no_date_is_named(tmp_path: Path) -> None:
    row = BenchRow(
        op="mla_decode",
        impl="v2",
        config={"b": 32, "s": 1, "t": 4096},
        median=66.53,
        timestamp="2026-13-45T10:00:00+00:00",
    )
    with pytest.raises(
        InputError,
        match=r"^rows: Expected rows whose timestamp starts with an ISO date \(2026-12-02\), "
        r"got '2026-13-45T10:00:00\+00:00' for v2 at b=32 s=1 t=4096$",
    ):
        perf_rows_from_bench([row])


def test_a_point_that_is_not_all_terms_is_kept_as_free_text() -> None:
    assert _row().point == POINT
    assert PerfRow(version="v2", point="b32  garbage words", time=1.0).point == "b32 garbage words"


def test_the_page_says_what_the_cells_hold() -> None:
    page = (Path(__file__).parents[2] / "docs" / "kernels" / "README.md").read_text("utf-8")
    assert "at most 4 significant digits (trailing zeros dropped" in page
    assert "free text, kept as written" in page
    assert "`## Performance(H200)`" in page
    assert "`rows: Expected at least one PerfRow, got none`" in page


# 4. A section heading with its note right after the name, no space between.


@pytest.mark.parametrize("heading", ["## Performance(H200)", "## Performance (H200)"])
def test_a_note_in_parentheses_without_a_space_keeps_the_section(
    tmp_path: Path, heading: str
) -> None:
    devlog = tmp_path / "k.md"
    devlog.write_text(f"# k\n\n{heading}\n\nCUDA-graph medians.\n", encoding="utf-8")
    update_devlog(devlog, [_row(date="2026-12-02")])
    text = devlog.read_text(encoding="utf-8")
    assert len(re.findall(r"^## Performance", text, flags=re.MULTILINE)) == 1
    assert text.startswith(f"# k\n\n{heading}\n\nCUDA-graph medians.\n\n### v2\n")
    assert [row.time for row in read_performance(devlog)] == [66.53]


def test_an_unspaced_note_counts_as_the_section_when_two_are_refused(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    text = "# k\n\n## Performance(H200)\n\n## Performance\n"
    devlog.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match=r"two: line 3 '## Performance\(H200\)' and line 5"):
        update_devlog(devlog, [_row()])
    assert devlog.read_text(encoding="utf-8") == text


def test_an_unspaced_note_keeps_a_version_table(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    first = f"| v2 | {POINT} | 70 us | - | - | - | - | - |"
    devlog.write_text(
        f"# k\n\n## Performance\n\n### v2(split-KV)\n\n{HEADER}\n|-|-|-|-|-|-|-|-|\n{first}\n",
        encoding="utf-8",
    )
    update = update_devlog(devlog, [_row()])
    assert [row.time for row in update.replaced] == [66.53]
    assert devlog.read_text(encoding="utf-8").count("### v2") == 1
