"""LEARN reads the paths an entry cites from the knowledge tree, not from the folder it
runs in: the rows of one measurement are found from any folder, and files named alike in
another folder are another measurement."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kernelopt.catalog import parse_entry
from kernelopt.cli import main
from kernelopt.workflow import Action, learn, observe_files

from .conftest import anchor_row, snapshot, write_rows

ENTRY = "split-kv-flash-decoding"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder, made the working directory, with a FAST pair (v1 -> v2) and a
    SLOW one (v2 -> v3) under ``runs/``."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "runs"
    write_rows(folder / "v1.jsonl", anchor_row("splits16", samples=40, seed=1))
    write_rows(folder / "v2.jsonl", anchor_row("splits8", samples=40, seed=2))
    write_rows(folder / "v3.jsonl", anchor_row("splits32", samples=40, seed=3))
    return folder


def _sources(path: Path) -> list[str]:
    return [block.source for block in parse_entry(path.read_text("utf-8")).evidence]


@pytest.mark.parametrize(("before", "after"), [("v1", "v2"), ("v2", "v3")])
def test_rows_recorded_from_another_folder_are_found(
    runs: Path, knowledge: Path, monkeypatch: pytest.MonkeyPatch, before: str, after: str
) -> None:
    # Recorded from the project folder as runs/v1.jsonl, the row was looked for from
    # runs/ as runs/runs/v1.jsonl, not found, and written a second time (FAST: on the
    # applied entry; SLOW: on the anti-pattern the first run created).
    first = learn(
        observe_files(f"runs/{before}.jsonl", f"runs/{after}.jsonl"),
        entry_id=ENTRY,
        knowledge=knowledge,
    )
    assert first.action in (Action.EVIDENCE, Action.NEW_ANTI_PATTERN)
    written = snapshot(knowledge)
    monkeypatch.chdir(runs)
    again = observe_files(f"{before}.jsonl", f"{after}.jsonl")
    for dry_run in (True, False):
        outcome = learn(again, entry_id=ENTRY, knowledge=knowledge, dry_run=dry_run)
        assert outcome.action is Action.EVIDENCE and outcome.recorded_before, outcome.summary()
    assert snapshot(knowledge) == written


def test_files_named_alike_in_another_folder_are_another_measurement(
    runs: Path, knowledge: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Recorded from runs/ as v1.jsonl, the row was looked for from copy/ as copy/v1.jsonl:
    # two other files, with the same rows, read as the same measurement and not recorded.
    copy = tmp_path / "copy"
    shutil.copytree(runs, copy)
    monkeypatch.chdir(runs)
    first = learn(observe_files("v1.jsonl", "v2.jsonl"), entry_id=ENTRY, knowledge=knowledge)
    assert first.path is not None and not first.recorded_before
    monkeypatch.chdir(copy)
    other = learn(observe_files("v1.jsonl", "v2.jsonl"), entry_id=ENTRY, knowledge=knowledge)
    assert not other.recorded_before
    assert _sources(first.path)[-2:] == [
        "../../runs/v1.jsonl vs ../../runs/v2.jsonl",
        "../../copy/v1.jsonl vs ../../copy/v2.jsonl",
    ]


def test_the_citation_is_written_from_the_tree(runs: Path, knowledge: Path) -> None:
    # The entry names the files a reader finds from the tree's folder, whatever folder
    # LEARN ran in; the outcome keeps the paths as they were given.
    outcome = learn(
        observe_files("./runs/v1.jsonl", "runs/v2.jsonl"), entry_id=ENTRY, knowledge=knowledge
    )
    assert outcome.path is not None
    cited = _sources(outcome.path)[-1]
    assert cited == "../../runs/v1.jsonl vs ../../runs/v2.jsonl"
    named = [(knowledge / part).resolve() for part in cited.split(" vs ")]
    assert named == [runs / "v1.jsonl", runs / "v2.jsonl"]
    assert outcome.observation.source == "runs/v1.jsonl vs runs/v2.jsonl"
    assert "(source: runs/v1.jsonl vs runs/v2.jsonl)" in outcome.summary()


def test_a_new_anti_pattern_cites_its_files_from_the_tree(runs: Path, knowledge: Path) -> None:
    outcome = learn(
        observe_files("runs/v2.jsonl", "runs/v3.jsonl"), entry_id=ENTRY, knowledge=knowledge
    )
    assert outcome.action is Action.NEW_ANTI_PATTERN and outcome.path is not None
    assert _sources(outcome.path) == ["../../runs/v2.jsonl vs ../../runs/v3.jsonl"]


def test_the_command_writes_the_same_tree_from_any_folder(
    runs: Path, knowledge: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `kernelopt learn` from the project folder, then from runs/ with the paths from
    # there: one row, one citation.
    learn_v1_v2 = ["learn", "--entry", ENTRY, "--before", "{}v1.jsonl", "--after", "{}v2.jsonl"]
    here = [arg.format("runs/") for arg in learn_v1_v2]
    assert main([*here, "--knowledge", "docs/knowledge"]) == 0
    written = snapshot(knowledge)
    monkeypatch.chdir(runs)
    there = [arg.format("") for arg in learn_v1_v2]
    assert main([*there, "--knowledge", os.path.join("..", "docs", "knowledge")]) == 0
    assert snapshot(knowledge) == written
    assert _sources(knowledge / "optimizations" / f"{ENTRY}.md")[-1] == (
        "../../runs/v1.jsonl vs ../../runs/v2.jsonl"
    )
