"""A LEARN run that would create a new anti-pattern is refused, before anything is written,
for what stands where the new entry would go: a folder, a FIFO, or a file whose id line
names another entry. The dry run and the real run refuse in the same words, and neither
leaves a lock beside the tree.

A folder there was the gap: the dry run said "Would create", and the real run refused
only once the tree's add had made ``<tree>.lock``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kernelopt._errors import CatalogError
from kernelopt.workflow import Action, Observation, learn, observe_rows

from .conftest import anchor_row, snapshot

APPLIED = "split-kv-flash-decoding"
NEW_ID = f"{APPLIED}-regression"
# The canonical place of the new anti-pattern, and another place the tree may keep it
# (a language's folder), which the tree's add refuses as well.
PLACES = (
    f"anti-patterns/{NEW_ID}.md",
    f"languages/triton/anti-patterns/{NEW_ID}.md",
)


def _folder(path: Path) -> None:
    path.mkdir(parents=True)


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def _file_of_another_entry(path: Path, knowledge: Path) -> None:
    # An existing entry copied to start the new one, its id line not yet changed.
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((knowledge / "anti-patterns" / "too-many-kv-splits.md").read_bytes())


def _regression() -> Observation:
    """A SLOW observation of the applied optimization: LEARN creates ``NEW_ID`` for it."""
    return observe_rows(anchor_row("splits8"), anchor_row("splits32"), source="runs/x.jsonl")


def _refusals(knowledge: Path) -> tuple[str, str]:
    """The dry run's and the real run's refusal, in that order."""
    errors = []
    for dry_run in (True, False):
        with pytest.raises(CatalogError) as caught:
            learn(_regression(), entry_id=APPLIED, knowledge=knowledge, dry_run=dry_run)
        errors.append(str(caught.value))
    return errors[0], errors[1]


def test_the_run_creates_the_anti_pattern_where_nothing_stands(knowledge: Path) -> None:
    # The premise of the cases below: the observation makes a new anti-pattern at PLACES[0].
    outcome = learn(_regression(), entry_id=APPLIED, knowledge=knowledge, dry_run=True)
    assert outcome.action is Action.NEW_ANTI_PATTERN
    assert outcome.path == knowledge / PLACES[0]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("make", [_folder, _fifo], ids=["folder", "fifo"])
def test_a_special_file_at_the_new_entry_path_is_refused_before_writing(
    knowledge: Path, place: str, make: Callable[[Path], None]
) -> None:
    path = knowledge / place
    make(path)
    files = snapshot(knowledge)
    dry, real = _refusals(knowledge)
    assert dry == real
    assert str(path) in real and "Expected a regular file" in real
    # Nothing written: no entry, no index change, no <tree>.lock or <tree>.learn.lock.
    assert snapshot(knowledge) == files
    assert sorted(p.name for p in knowledge.parent.iterdir()) == ["knowledge"]


def test_a_folder_at_the_new_entry_path_reads_as_the_tree_add_refuses_it(
    knowledge: Path,
) -> None:
    path = knowledge / PLACES[0]
    path.mkdir(parents=True)
    dry, real = _refusals(knowledge)
    assert dry == real == f"Expected a regular file at {path}, got a folder (nothing was written)"


@pytest.mark.parametrize("place", PLACES)
def test_a_file_of_another_entry_at_the_new_entry_path_is_refused_before_writing(
    knowledge: Path, place: str
) -> None:
    path = knowledge / place
    _file_of_another_entry(path, knowledge)
    files = snapshot(knowledge)
    dry, real = _refusals(knowledge)
    assert dry == real
    assert str(path) in real and "Expected the file named after the id" in real
    assert snapshot(knowledge) == files
    assert sorted(p.name for p in knowledge.parent.iterdir()) == ["knowledge"]
