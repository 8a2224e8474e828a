"""The experiment-log writers as an optimization loop uses them: concurrent appends, crashes,
stale locks, hand-edited summaries written again, and arguments that must be refused."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.experiments import (
    ResultRecord,
    ResultRow,
    append_lesson,
    append_summary,
    log_result,
    read_log,
    write_plan,
    write_result,
)


def _record(experiment: int, median: float = 50.0, **changes: object) -> ResultRecord:
    base: dict[str, object] = dict(
        experiment=experiment,
        title=f"try {experiment}",
        status="KEPT",
        correctness="PASS",
        date="2026-11-17",
        rows=(ResultRow(point="b=32 s=1", impl="k", median=median, unit="us"),),
    )
    base.update(changes)
    return ResultRecord(**base)  # type: ignore[arg-type]


def _log_many(root: str, start: int, count: int, go: Any) -> None:
    go.wait(60)
    for experiment in range(start, start + count):
        log_result(root, _record(experiment, median=1.0 + experiment))
        append_lesson(root, f"lesson {experiment}", experiment=experiment)


def test_two_processes_logging_at_once_lose_no_row_or_lesson(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    go = context.Barrier(2)
    workers = [
        context.Process(target=_log_many, args=(str(tmp_path), start, 200, go))
        for start in (1, 1001)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(180)
        assert worker.exitcode == 0
    wanted = [*range(1, 201), *range(1001, 1201)]
    rows = (tmp_path / "summary.md").read_text().splitlines()[4:]
    numbers = [int(row.split(" | ")[0].strip("| ")) for row in rows if row]
    assert sorted(numbers) == wanted
    # Each writer's rows stay in the order it wrote them.
    assert [n for n in numbers if n < 1000] == list(range(1, 201))
    lessons = (tmp_path / "LESSONS.md").read_text().splitlines()[2:]
    assert sorted(lessons) == sorted(f"- [exp {n}] lesson {n}" for n in wanted)
    log = read_log(tmp_path, catalog=[])
    assert [e.number for e in log.experiments] == wanted
    assert all(e.latency == 1.0 + e.number for e in log.experiments)
    assert not log.warnings and not log.unread


def test_a_write_that_fails_midway_leaves_every_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_result(tmp_path, _record(1))
    append_lesson(tmp_path, "first")
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*.md")}

    def fail(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    # The rename that puts a written file in place fails (a full disk, a kill).
    monkeypatch.setattr(os, "replace", fail)
    writes: list[Callable[[], object]] = [
        lambda: log_result(tmp_path, _record(1, median=2.0), overwrite=True),
        lambda: append_summary(tmp_path, _record(2)),
        lambda: append_lesson(tmp_path, "second"),
    ]
    for write in writes:
        with pytest.raises(OSError, match="No space"):
            write()
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in tmp_path.rglob("*.md")} == before
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_a_lock_left_by_a_killed_writer_does_not_block_the_next(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from kernelopt._fileio import locked\n"
            f"with locked({str(summary)!r}):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(120)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(30)
    started = time.monotonic()
    append_summary(tmp_path, _record(1))
    assert time.monotonic() - started < 10
    assert [e.number for e in read_log(tmp_path, catalog=[]).experiments] == [1]


_HEADER = (
    "| Notes | Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|---|---|---|\n"
)


@pytest.mark.parametrize(
    ("note", "exp"),
    [("a \\| b", "5"), ("`a | b`", "5"), ("rerun", "5 (rerun)"), ("", "exp 5 ✓")],
)
def test_a_row_the_readers_take_as_the_experiments_is_found(
    tmp_path: Path, note: str, exp: str
) -> None:
    # The row is experiment 5 to the readers; missed by the writer, a second row went in
    # beside it and the old one, read first, hid the result written again.
    row = f"| {note} | {exp} | 2026-11-01 | old | 90.0 | us |  | PASS | KEPT |  |\n"
    (tmp_path / "summary.md").write_text(_HEADER + row, encoding="utf-8")
    with pytest.raises(InputError, match=r"no summary\.md row for experiment 5"):
        log_result(tmp_path, _record(5, median=40.0))
    assert not (tmp_path / "exp_5").exists()
    log_result(tmp_path, _record(5, median=40.0), overwrite=True)
    log = read_log(tmp_path, catalog=[])
    assert [(e.number, e.latency) for e in log.experiments] == [(5, 40.0)]
    assert not log.warnings


def test_a_row_written_again_keeps_the_users_own_cells(tmp_path: Path) -> None:
    text = (
        "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags "
        "| Who | Why |\r\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\r\n"
        "| 5 | 2026-11-01 | old | 90.0 | us |  | PASS | KEPT |  | ana | L2 \\| DRAM |\r\n"
    )
    (tmp_path / "summary.md").write_bytes(text.encode("utf-16"))
    append_summary(tmp_path, _record(5, median=40.0), replace=True)
    data = (tmp_path / "summary.md").read_bytes()
    assert data.startswith(b"\xff\xfe")
    assert data.decode("utf-16").splitlines()[2] == (
        "| 5 | 2026-11-17 | try 5 | 40.0 | us |  | PASS | KEPT |  | ana | L2 \\| DRAM |"
    )


@pytest.mark.parametrize("flag", ["no", 0, 1, None])
def test_a_flag_that_is_no_bool_is_refused_and_nothing_is_written(
    tmp_path: Path, flag: Any
) -> None:
    log_result(tmp_path, _record(1))
    write_plan(tmp_path, 1, "plan")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.md")}
    # overwrite="no" used to replace the logged result: any truthy value did.
    writes: list[tuple[Callable[[], object], str]] = [
        (lambda: log_result(tmp_path, _record(1, median=9.0), overwrite=flag), "overwrite"),
        (lambda: write_result(tmp_path, _record(1, median=9.0), overwrite=flag), "overwrite"),
        (lambda: write_plan(tmp_path, 1, "other", overwrite=flag), "overwrite"),
        (lambda: append_summary(tmp_path, _record(1, median=9.0), replace=flag), "replace"),
    ]
    for write, name in writes:
        with pytest.raises(InputError, match=f"^{name}: Expected a bool, got {flag!r}"):
            write()
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.md")} == before


def test_a_plan_holding_a_nul_is_refused(tmp_path: Path) -> None:
    # The readers skip a file with a NUL as binary: the whole plan would be unread.
    with pytest.raises(InputError, match=r"^text: Expected text without NUL characters, got one"):
        write_plan(tmp_path, 1, "# Plan\n\n1. num_warps=8\x00\n")
    assert not (tmp_path / "exp_1").exists()


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_a_lesson_after_an_unclosed_code_block_is_refused(tmp_path: Path, ending: str) -> None:
    # Written there, the bullet is code to the readers: a lesson on disk and never read.
    text = ending.join(["# Lessons", "", "- old", "", "```", "x = 1", ""])
    (tmp_path / "LESSONS.md").write_text(text, encoding="utf-8", newline="")
    with pytest.raises(FormatError, match="a code block opened at line 5 and never closed"):
        append_lesson(tmp_path, "new")
    assert (tmp_path / "LESSONS.md").read_bytes() == text.encode()
    (tmp_path / "LESSONS.md").write_text(text + "```" + ending, encoding="utf-8", newline="")
    append_lesson(tmp_path, "new")
    assert [f.text for f in read_log(tmp_path, catalog=[]).lessons] == ["old", "new"]


_CRLF_TABLE = (
    b"| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\r\n"
    b"|---|---|---|---|---|---|---|---|---|\r\n"
    b"| 5 | 2026-11-01 | old | 90.0 | us |  | PASS | KEPT |  |"
)


@pytest.mark.parametrize("tail", [b"", b"\r"])
def test_rows_after_a_crlf_tables_last_line_stay_in_the_table(tmp_path: Path, tail: bytes) -> None:
    # A last row without its newline, written again, ended the file in a lone "\r"; the
    # next row then came after "\r\r\n", a blank line that ends the table: never read.
    (tmp_path / "summary.md").write_bytes(_CRLF_TABLE + tail)
    append_summary(tmp_path, _record(5, median=40.0), replace=True)
    append_summary(tmp_path, _record(6, median=30.0))
    data = (tmp_path / "summary.md").read_bytes()
    assert b"\r\r" not in data and data.endswith(b" |\r\n")
    log = read_log(tmp_path, catalog=[])
    assert [(e.number, e.latency) for e in log.experiments] == [(5, 40.0), (6, 30.0)]


def test_a_row_in_an_earlier_table_is_the_one_written_again(tmp_path: Path) -> None:
    # One table per phase: a row of experiment 2 left in the first, read before the new
    # one in the second, hid the result written again.
    table = (
        "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )
    text = (
        "## Phase 1\n\n" + table + "| 1 | 2026-11-01 | a | 90.0 | us |  | PASS | KEPT |  |\n"
        "| 2 | 2026-11-02 | b | 80.0 | us |  | PASS | KEPT |  |\n\n"
        "## Phase 2\n\n" + table + "| 3 | 2026-11-03 | c | 70.0 | us |  | PASS | KEPT |  |\n"
    )
    (tmp_path / "summary.md").write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=r"no summary\.md row for experiment 2"):
        log_result(tmp_path, _record(2, median=60.0))
    log_result(tmp_path, _record(2, median=60.0), overwrite=True)
    log_result(tmp_path, _record(4, median=50.0))
    lines = (tmp_path / "summary.md").read_text(encoding="utf-8").splitlines()
    assert lines[5] == "| 2 | 2026-11-17 | try 2 | 60.0 | us |  | PASS | KEPT |  |"
    assert lines[-1] == "| 4 | 2026-11-17 | try 4 | 50.0 | us |  | PASS | KEPT |  |"
    log = read_log(tmp_path, catalog=[])
    assert [(e.number, e.latency) for e in log.experiments] == [
        (1, 90.0),
        (2, 60.0),
        (3, 70.0),
        (4, 50.0),
    ]
