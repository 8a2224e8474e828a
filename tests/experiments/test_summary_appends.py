"""summary.md appends: no lost rows under concurrent writers, users' tables kept as written."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.experiments import (
    RepeatedRowWarning,
    ResultRecord,
    ResultRow,
    append_lesson,
    append_summary,
    read_log,
    write_result,
)


def _record(experiment: int, **changes: object) -> ResultRecord:
    base: dict[str, object] = dict(
        experiment=experiment,
        title=f"try {experiment}",
        status="KEPT",
        correctness="PASS",
        date="2026-11-17",
        tags=("split-kv-flash-decoding",),
        rows=(ResultRow(point="b=32 s=1", impl="k", median=50.0 + experiment, unit="us"),),
    )
    base.update(changes)
    return ResultRecord(**base)  # type: ignore[arg-type]


def _append_many(root: str, start: int, count: int, go: Any) -> None:
    go.wait(60)
    for experiment in range(start, start + count):
        append_summary(root, _record(experiment))


def test_concurrent_appends_lose_no_row(tmp_path: Path) -> None:
    # Spawned writers take most of a second to import; without a common start they ran
    # one after another and a summary written with no lock at all passed. The barrier lets
    # the writers go once all are ready, so their read-modify-write cycles overlap.
    context = multiprocessing.get_context("spawn")
    go = context.Barrier(4)
    workers = [
        context.Process(target=_append_many, args=(str(tmp_path), 1 + 25 * i, 25, go))
        for i in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    lines = (tmp_path / "summary.md").read_text().splitlines()
    rows = [line for line in lines[4:] if line]
    assert sorted(int(row.split(" | ")[0].strip("| ")) for row in rows) == list(range(1, 101))
    assert all(
        row.startswith("| ") and row.endswith(" |") and row.count(" | ") == 8 for row in rows
    )
    log = read_log(tmp_path, catalog=[])
    assert [e.number for e in log.experiments] == list(range(1, 101))


_HAND = (
    "# My experiments\r\n"
    "\r\n"
    "| Status | Exp | Description | Latency | Unit | Speedup | Correct | Date | Tags | Who |\r\n"
    "|:--|--:|---|---|---|---|---|---|---|---|\r\n"
    "| KEPT | 1 | baseline  (eager) | 90.0 | us |  | PASS | 2026-11-01 |  | ana |\r\n"
    "| REVERTED | 2 | BLOCK_N=32 | 95.5 | us |  | PASS | 2026-11-02 |  | bo |\r\n"
    "\r\n"
    "Numbers are medians of 100 calls."
)


def test_hand_written_table_gets_a_row_in_its_own_columns(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_bytes(_HAND.encode())
    append_summary(tmp_path, _record(3))
    text = path.read_bytes().decode()
    # The user's lines are kept byte for byte; the row goes at the end of the table.
    row = "| KEPT | 3 | try 3 | 53.0 | us |  | PASS | 2026-11-17 | split-kv-flash-decoding |  |\r\n"
    head, tail = _HAND.split("\r\n\r\nNumbers")
    assert text == head + "\r\n" + row + "\r\nNumbers" + tail
    log = read_log(tmp_path, catalog=[])
    assert [(e.number, e.latency) for e in log.experiments] == [(1, 90.0), (2, 95.5), (3, 53.0)]
    assert log.experiment(3).tags == ("split-kv-flash-decoding",)  # type: ignore[union-attr]


def test_table_at_the_end_without_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    hand = _HAND.split("\r\n\r\nNumbers")[0]
    path.write_bytes(hand.encode())
    append_summary(tmp_path, _record(3))
    text = path.read_bytes().decode()
    assert text.startswith(hand + "\r\n| KEPT | 3 | try 3 |")
    assert text.endswith(" |\r\n") and "\n" not in text.replace("\r\n", "")
    assert [e.number for e in read_log(tmp_path, catalog=[]).experiments] == [1, 2, 3]


def test_canonical_rows_are_read_after_append(tmp_path: Path) -> None:
    write_result(tmp_path, _record(1))
    append_summary(tmp_path, _record(1))
    append_summary(tmp_path, _record(2))
    log = read_log(tmp_path, catalog=[])
    assert [(e.number, e.latency) for e in log.experiments] == [(1, 51.0), (2, 52.0)]


@pytest.mark.parametrize(
    "text",
    [
        "| id | change |\r\n|---|---|\r\n| 1 | x |",
        "| Exp | Date | Description |\n|---|---|---|\n| 1 | d | x |\n",
    ],
)
def test_refused_row_leaves_the_file_byte_identical(tmp_path: Path, text: str) -> None:
    path = tmp_path / "summary.md"
    path.write_bytes(text.encode())
    with pytest.raises(FormatError, match="Expected a table with columns"):
        append_summary(tmp_path, _record(3))
    with pytest.raises(InputError, match="record: Expected a ResultRecord, got str"):
        append_summary(tmp_path, "not a record")  # type: ignore[arg-type]
    assert path.read_bytes() == text.encode()


def test_lessons_keep_the_files_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "LESSONS.md"
    path.write_bytes(b"# Lessons\r\n\r\n- [exp 1] first")
    append_lesson(tmp_path, "second", experiment=2)
    assert path.read_bytes() == b"# Lessons\r\n\r\n- [exp 1] first\r\n- [exp 2] second\r\n"


@pytest.mark.parametrize("text", ["two\rlines", "two\u2028lines", "nul\x00"])
def test_lessons_on_two_lines_are_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError, match="Expected a one-line lesson"):
        append_lesson(tmp_path, text)
    assert not (tmp_path / "LESSONS.md").exists()


def test_replace_puts_the_row_in_place_of_the_experiments_rows(tmp_path: Path) -> None:
    for experiment in (1, 2, 3):
        append_summary(tmp_path, _record(experiment))
    append_summary(tmp_path, _record(2, title="try 2 again", status="REVERTED"), replace=True)
    lines = [line for line in (tmp_path / "summary.md").read_text().splitlines() if line]
    rows = lines[3:]
    assert [row.split(" | ")[0] for row in rows] == ["| 1", "| 2", "| 3"]
    assert "try 2 again" in rows[1] and "REVERTED" in rows[1]
    # An experiment the table does not hold yet is added at the end, as without replace.
    append_summary(tmp_path, _record(4), replace=True)
    log = read_log(tmp_path, catalog=[])
    assert [e.number for e in log.experiments] == [1, 2, 3, 4]
    # Without replace, a second row is added beside the first, as before, with a warning.
    with pytest.warns(RepeatedRowWarning, match="experiment 4 already has a row"):
        append_summary(tmp_path, _record(4))
    text = (tmp_path / "summary.md").read_text()
    assert text.count("| 4 |") == 2


_HEADER = (
    "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
)
_FIRST = "| 1 | 2026-11-16 | baseline | 90.0 | us |  | PASS | BASELINE |  |\n"


@pytest.mark.parametrize("fence", ["```", "~~~", "```markdown"])
def test_a_table_shown_in_a_code_block_gets_no_row(tmp_path: Path, fence: str) -> None:
    # The readers skip code blocks: a row written into an example of the format would be
    # on disk and never read.
    example = f"{fence}\n{_HEADER}| 9 |  | example | 1.0 | us |  | PASS | KEPT |  |\n{fence[:3]}\n"
    text = f"# Summary\n\n{_HEADER}{_FIRST}\n## Format\n\n{example}"
    (tmp_path / "summary.md").write_text(text, encoding="utf-8")

    append_summary(tmp_path, _record(3))

    written = (tmp_path / "summary.md").read_text(encoding="utf-8")
    row = "| 3 | 2026-11-17 | try 3 | 53.0 | us |  | PASS | KEPT | split-kv-flash-decoding |\n"
    assert written == f"# Summary\n\n{_HEADER}{_FIRST}{row}\n## Format\n\n{example}"
    log = read_log(tmp_path)
    assert [(e.number, e.latency) for e in log.experiments] == [(1, 90.0), (3, 53.0)]


@pytest.mark.parametrize("fence", ["```", "~~~"])
def test_a_file_whose_only_table_is_in_a_code_block_is_refused(tmp_path: Path, fence: str) -> None:
    text = f"# Summary\n\n{fence}\n{_HEADER}{fence}\n"
    (tmp_path / "summary.md").write_text(text, encoding="utf-8")

    with pytest.raises(FormatError, match="Expected a table with columns"):
        append_summary(tmp_path, _record(3))
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == text


def test_a_header_line_without_its_separator_row_is_no_table(tmp_path: Path) -> None:
    # Under a header line, a blank line ends what never became a table: a row written
    # below it would stand alone, read by no one.
    text = f"# Summary\n\n{_HEADER.splitlines()[0]}\n\nsome text\n"
    (tmp_path / "summary.md").write_text(text, encoding="utf-8")

    with pytest.raises(FormatError, match="Expected a table with columns"):
        append_summary(tmp_path, _record(3))
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == text


@pytest.mark.parametrize("text", ["", "\n", "\ufeff", "  \r\n"])
def test_an_empty_summary_takes_the_canonical_table(tmp_path: Path, text: str) -> None:
    # A summary.md created empty (``touch``) holds no row that a new table could hurt.
    (tmp_path / "summary.md").write_text(text, encoding="utf-8", newline="")

    append_summary(tmp_path, _record(3))

    log = read_log(tmp_path)
    assert [(e.number, e.latency) for e in log.experiments] == [(3, 53.0)]
    written = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert written.lstrip("\ufeff").startswith("# Experiments Summary\n\n| Exp | Date |")


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_utf16_summary_and_lessons_file_stay_utf16(tmp_path: Path, encoding: str) -> None:
    # PowerShell's `>` saves UTF-16 with a byte-order mark; a rewrite keeps both.
    mark = "\ufeff".encode(encoding)
    append_summary(tmp_path, _record(1))
    summary = tmp_path / "summary.md"
    first = summary.read_text(encoding="utf-8")
    summary.write_bytes(mark + first.encode(encoding))
    lessons = tmp_path / "LESSONS.md"
    lessons.write_bytes(mark + "# Lessons\r\n\r\n- [exp 1] 1 µs\r\n".encode(encoding))

    append_summary(tmp_path, _record(2))
    append_lesson(tmp_path, "BLOCK_N=128 spills", experiment=2)

    row = summary.read_bytes()[len(mark) :].decode(encoding).splitlines()[-1]
    assert summary.read_bytes().startswith(mark) and row.startswith("| 2 | 2026-11-17 |")
    assert lessons.read_bytes() == mark + (
        "# Lessons\r\n\r\n- [exp 1] 1 µs\r\n- [exp 2] BLOCK_N=128 spills\r\n".encode(encoding)
    )
    assert [e.number for e in read_log(tmp_path).experiments] == [1, 2]


@pytest.mark.parametrize("cell", ["2\u00b2", "\uff12"])
def test_an_exp_cell_of_other_digits_is_no_experiment_number(tmp_path: Path, cell: str) -> None:
    # "2²" passes str.isdigit() and int() refuses it; "２" int() reads as 2, which would let
    # replace=True put the row in place of a row the user never numbered 2.
    row = _FIRST.replace("| 1 |", f"| {cell} |", 1)
    (tmp_path / "summary.md").write_text(_HEADER + row, encoding="utf-8")
    append_summary(tmp_path, _record(2), replace=True)
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert row in text and "| 2 | 2026-11-17 | try 2 |" in text
