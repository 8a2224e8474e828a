"""A LEARN run refused for what stands at the tree's ``index.md``, or at the path of the
entry it records in, leaves nothing behind: no ``<tree>.learn.lock``, no ``<tree>.lock``;
and the dry run says the same words."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kernelopt._errors import CatalogError
from kernelopt.workflow import learn, observe_rows

from .conftest import anchor_row, snapshot

# (applied entry, before, after): a FAST row on an optimization, a SLOW row on an
# anti-pattern applied (both under LEARN's lock) and a SLOW one making a new anti-pattern.
CASES = [
    ("split-kv-flash-decoding", "splits16", "splits8"),
    ("too-many-kv-splits", "splits8", "splits32"),
    ("split-kv-flash-decoding", "splits8", "splits32"),
]


def _folder_at_index(index: Path) -> None:
    index.mkdir()


def _fifo_at_index(index: Path) -> None:
    os.mkfifo(index)


@pytest.mark.parametrize("place", [_folder_at_index, _fifo_at_index], ids=["folder", "fifo"])
@pytest.mark.parametrize(("entry_id", "before", "after"), CASES)
def test_a_run_refused_at_index_md_leaves_no_lock(
    knowledge: Path, place: Callable[[Path], None], entry_id: str, before: str, after: str
) -> None:
    # The real run made <tree>.learn.lock, then the tree refused the folder at index.md.
    index = knowledge / "index.md"
    place(index)
    files = snapshot(knowledge)
    seen = observe_rows(anchor_row(before), anchor_row(after), source="runs/x.jsonl")
    errors = []
    for dry_run in (True, False):
        with pytest.raises(CatalogError) as caught:
            learn(seen, entry_id=entry_id, knowledge=knowledge, dry_run=dry_run)
        errors.append(str(caught.value))
    dry, real = errors
    assert dry == real and real.startswith(f"Expected a regular file at {index}, got a ")
    assert sorted(p.name for p in knowledge.parent.iterdir()) == ["knowledge"]
    assert snapshot(knowledge) == files


@pytest.mark.parametrize("place", [_folder_at_index, _fifo_at_index], ids=["folder", "fifo"])
@pytest.mark.parametrize(("entry_id", "before", "after"), CASES[:2])
def test_a_run_refused_at_the_entry_path_leaves_no_lock(
    knowledge: Path, place: Callable[[Path], None], entry_id: str, before: str, after: str
) -> None:
    # The real run made both locks, then the tree refused the folder at the entry's path;
    # the dry run said "Would record" there.
    entry = next(knowledge.rglob(f"{entry_id}.md"))
    entry.unlink()
    place(entry)
    files = snapshot(knowledge)
    seen = observe_rows(anchor_row(before), anchor_row(after), source="runs/x.jsonl")
    errors = []
    for dry_run in (True, False):
        with pytest.raises(CatalogError) as caught:
            learn(seen, entry_id=entry_id, knowledge=knowledge, dry_run=dry_run)
        errors.append(str(caught.value))
    dry, real = errors
    # (A FIFO there is refused when the catalog is read, a folder when the entry is.)
    assert dry == real and str(entry) in real and "Expected a regular file" in real
    assert sorted(p.name for p in knowledge.parent.iterdir()) == ["knowledge"]
    assert snapshot(knowledge) == files
