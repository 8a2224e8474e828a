"""What a user meets: LEARN run twice at once, a devlog given as the rows file, a devlog
row cut short, and hand-offs holding long runs of spaces or digits."""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelopt import CatalogError, FormatError
from kernelopt.catalog import parse_entry
from kernelopt.cli import main
from kernelopt.workflow import (
    DesignerPrompt,
    OptimizationTask,
    ProfilerPrompt,
    learn,
    observe_rows,
    parse_designer_prompt,
    parse_performance,
    parse_profile,
    parse_profiler_prompt,
    parse_task,
    parse_version,
    perf_rows_from_bench,
    profile_from_rows,
    update_devlog,
)

from .conftest import anchor_row, write_rows
from .test_task import TASK
from .test_version import TEXT as VERSION_TEXT

ENTRY = "split-kv-flash-decoding"


def test_two_learn_runs_at_once_record_one_measurement_once(
    knowledge: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each run has read the tree and found the row missing before either writes: without
    # one lock over finding and writing, both write it and the measurement counts twice.
    module = importlib.import_module("kernelopt.workflow.learn")
    both_read = threading.Barrier(2, timeout=5)
    read = module._holds

    def holds_then_wait(*args: Any) -> bool:
        found = read(*args)
        if threading.current_thread() is not threading.main_thread():
            # The second run cannot get here while the first holds the lock: no wait then.
            with contextlib.suppress(threading.BrokenBarrierError):
                both_read.wait()
        return bool(found)

    monkeypatch.setattr(module, "_holds", holds_then_wait)
    observation = observe_rows(
        anchor_row("splits16"), anchor_row("splits8"), source="runs/v1.jsonl vs runs/v2.jsonl"
    )
    outcomes: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            outcomes.append(learn(observation, entry_id=ENTRY, knowledge=knowledge))
        except BaseException as error:  # reported below, from the main thread
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert sorted(o.recorded_before for o in outcomes) == [False, True]
    entry = parse_entry((knowledge / "optimizations" / f"{ENTRY}.md").read_text("utf-8"))
    rows = [row for block, row in entry.evidence_rows if block.source == observation.source]
    assert len(rows) == 1


def test_learn_refused_by_a_foreign_folder_leaves_no_lock_beside_it(tmp_path: Path) -> None:
    # A project's own docs/knowledge page is not a tree: refused before any lock is made.
    folder = tmp_path / "docs" / "knowledge"
    folder.mkdir(parents=True)
    (folder / "index.md").write_text("# Our knowledge pages\n", encoding="utf-8")
    observation = observe_rows(anchor_row("splits16"), anchor_row("splits8"), source="runs/a")
    with pytest.raises(CatalogError, match="Expected a knowledge tree at"):
        learn(observation, entry_id=ENTRY, knowledge=folder)
    assert sorted(p.name for p in folder.parent.iterdir()) == ["knowledge"]


@pytest.mark.parametrize("flag", ["--rows", "--baseline"])
def test_report_refuses_a_devlog_that_is_a_rows_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str
) -> None:
    # The devlog's table would be appended to the JSONL, which then no longer reads.
    rows = write_rows(tmp_path / "v2.jsonl", anchor_row("splits8"))
    baseline = write_rows(tmp_path / "v1.jsonl", anchor_row("splits16"))
    kept = {path: path.read_bytes() for path in (rows, baseline)}
    devlog = rows if flag == "--rows" else baseline
    code = main(
        [
            "report",
            "profile",
            "--rows",
            str(rows),
            "--baseline",
            str(baseline),
            "--kernel",
            "mla_decode",
            "--version",
            "splits8",
            "--devlog",
            str(tmp_path / "." / devlog.name),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert f"Expected a devlog file other than the rows files, got {tmp_path}" in err
    assert f"the {flag} file" in err
    assert {path: path.read_bytes() for path in kept} == kept


DEVLOG_HEAD = (
    "# mla_decode\n\n## Performance\n\n### splits8\n\n"
    "| Version | Point | Time | TFLOP/s | GB/s | Of floor | GPU | Date |\n"
    "|---------|-------|------|---------|------|----------|-----|------|\n"
)


@pytest.mark.parametrize(
    ("row", "cells"),
    [
        ("| splits8 | b=32 s=1 t=4096 h=16 | 70 us | - | - | 50% | NVIDIA H200 |", 7),
        (
            "| splits8 | b=32 s=1 t=4096 h=16 | 70 us | - | - | 50% | NVIDIA H200 | 2026-12-01"
            " | rerun |",
            9,
        ),
    ],
)
def test_update_devlog_refuses_a_row_without_one_cell_per_column(
    tmp_path: Path, row: str, cells: int
) -> None:
    # Cut short, the row is not found as the one to replace and a second row of the point
    # joins it; with a cell too many it is replaced and the cell lost. Either way the
    # devlog would no longer read: refused, naming the line, the file as it was.
    devlog = tmp_path / "mla_decode.md"
    devlog.write_text(DEVLOG_HEAD + row + "\n", encoding="utf-8")
    before = devlog.read_bytes()
    with pytest.raises(FormatError, match=f"Expected a row of 8 cells .*, got {cells} cells"):
        update_devlog(devlog, perf_rows_from_bench([anchor_row("splits8")]))
    assert devlog.read_bytes() == before
    with pytest.raises(FormatError) as read:
        parse_performance(before.decode("utf-8"))
    assert read.value.line == 9


def _seconds(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    # What the text says is not the point here, but the time it takes to say it.
    with contextlib.suppress(FormatError, ValueError):
        call()
    return time.perf_counter() - start


SPACES = " " * 60_000
DIGITS = "1" * 60_000


def _profile_text() -> str:
    [report] = profile_from_rows(
        [anchor_row("splits8")],
        kernel="mla_decode",
        version="v2",
        baseline=[anchor_row("splits16")],
    )
    return report.render()


@pytest.mark.parametrize(
    ("name", "read"),
    [
        # A heading with a run of spaces inside it, such as a pasted or padded line.
        (
            "heading",
            lambda: parse_task(TASK.render().replace("### Constraints", "### Con" + SPACES + "x")),
        ),
        (
            "task heading",
            lambda: parse_task(TASK.render().replace(" -> v3", SPACES + "v3", 1)),
        ),
        (
            "constraint",
            lambda: parse_task(TASK.render().replace("- Language:", "- Lang" + SPACES + "x:")),
        ),
        (
            "devlog heading",
            lambda: parse_performance("# k\n\n## Perf" + SPACES + "x\n"),
        ),
        (
            "baseline cell",
            lambda: parse_profile(_profile_text().replace("| 53.8 |", "| " + DIGITS + " 53.8 |")),
        ),
        (
            "devlog time cell",
            lambda: parse_performance(
                DEVLOG_HEAD + "| splits8 | b=32 | " + DIGITS + " us x | - | - | - | - | - |\n"
            ),
        ),
        (
            "opportunity",
            lambda: parse_profile(_profile_text().replace("1. Shared", "1. Sh" + SPACES + "x")),
        ),
        (
            "trial",
            lambda: parse_version(VERSION_TEXT.replace("1. decode", "1. de" + SPACES + "x")),
        ),
        (
            "profiler prompt",
            lambda: parse_profiler_prompt(
                "Profile mla_decode v2" + SPACES + "x\n" + _profiler_prompt()
            ),
        ),
        (
            "designer prompt",
            lambda: parse_designer_prompt(
                "Create mla_decode v3" + SPACES + "x\n" + DesignerPrompt.from_task(TASK).render()
            ),
        ),
        (
            "optimization item",
            lambda: parse_task(TASK.render().replace("1. [", "1. x" + "[" * 60_000 + " [", 1)),
        ),
    ],
)
def test_a_long_run_in_a_line_reads_in_linear_time(name: str, read: Callable[[], object]) -> None:
    # A pasted line or a column padded by hand: the patterns that read the line took time
    # quadratic in the run (minutes for a few hundred kilobytes), stalling the reader.
    assert _seconds(read) < 2.0, name


def _profiler_prompt() -> str:
    from kernelopt.bench import DEFAULT_POINTS

    return ProfilerPrompt(kernel="mla_decode", version="v2", point=DEFAULT_POINTS[0]).render()


def test_the_faster_readers_read_what_they_read_before() -> None:
    # The patterns changed for speed; what they read did not.
    text = TASK.render()
    assert parse_task(text) == TASK
    padded = text.replace(" -> ", "   ->   ").replace("### Constraints", "###   Constraints  ##")
    assert parse_task(padded) == TASK
    task = OptimizationTask.from_profile(
        parse_profile(_profile_text()), new_version="v3", optimizations=TASK.optimizations
    )
    assert parse_task(task.render()) == task
    profile = _profile_text()
    assert parse_profile(profile).render() == profile
    assert parse_version(VERSION_TEXT).render() == parse_version(VERSION_TEXT).render()
