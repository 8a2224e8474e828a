"""The tree's writers refuse a named pipe where an entry file or ``index.md`` is.

The reader leaves a ``.md`` name that is not a regular file out of the catalog; a writer
that went on would start from the built-in entry and write beside the pipe, or replace it.
No test here opens a pipe: opening one waits for the other end, which never comes.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from kernelopt import CatalogError
from kernelopt.catalog import EvidenceRow, Interaction, Kind, KnowledgeTree

from .conftest import make_entry, write_entry

# A built-in anti-pattern: the operations on it start from the built-in entry.
BUILTIN_ID = "too-many-kv-splits"

ROW = EvidenceRow(config="8 -> 16 splits", before="74 us", after="83 us", change="+12 %")

OPERATIONS: dict[str, Callable[[KnowledgeTree, str], object]] = {
    "record_evidence": lambda tree, entry_id: tree.record_evidence(
        entry_id, ROW, source_type="local experiment", source="experiments/exp_7/result.md"
    ),
    "refine_applicability": lambda tree, entry_id: tree.refine_applicability(
        entry_id, keywords=["split-kv"]
    ),
    "record_interaction": lambda tree, entry_id: tree.record_interaction(
        entry_id, Interaction(target=entry_id, relation="related", note="Itself.")
    ),
    "flip": lambda tree, entry_id: tree.flip(entry_id, reason="Measured faster."),
}


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if not p.is_dir())


def _is_fifo(path: Path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)


def _refusal(path: Path, what: str = "a FIFO") -> str:
    return "^" + re.escape(f"Expected a regular file at {path}, got {what} (nothing was written)")


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_an_update_refuses_a_fifo_at_the_entrys_path(tmp_path: Path, operation: str) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    pipe = tree.root / "anti-patterns" / f"{BUILTIN_ID}.md"
    pipe.parent.mkdir(parents=True)
    os.mkfifo(pipe)
    with pytest.raises(CatalogError, match=_refusal(pipe)):
        OPERATIONS[operation](tree, BUILTIN_ID)
    # Before, a flip wrote optimizations/<id>.md from the built-in beside the pipe.
    assert _is_fifo(pipe)
    assert _files(tree.root) == [f"anti-patterns/{BUILTIN_ID}.md"]


def test_a_flip_refuses_a_fifo_where_the_flipped_entry_goes(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    entry = make_entry(interactions=())
    kept = write_entry(root, entry)
    text = kept.read_text(encoding="utf-8")
    pipe = root / "anti-patterns" / f"{entry.id}.md"
    pipe.parent.mkdir(parents=True)
    os.mkfifo(pipe)
    tree = KnowledgeTree(root, with_builtin=False)
    with pytest.raises(CatalogError, match=_refusal(pipe)):
        tree.flip(entry.id, reason="Measured slower.", to=Kind.ANTI_PATTERN)
    assert _is_fifo(pipe)
    assert kept.read_text(encoding="utf-8") == text


def test_add_refuses_a_fifo_where_the_new_entry_goes(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge", with_builtin=False)
    entry = make_entry(interactions=())
    pipe = tree.path_of(entry)
    pipe.parent.mkdir(parents=True)
    os.mkfifo(pipe)
    with pytest.raises(CatalogError, match=_refusal(pipe)):
        tree.add(entry)
    assert _is_fifo(pipe)
    assert _files(tree.root) == [f"optimizations/{entry.id}.md"]


def test_an_update_refuses_a_link_to_a_fifo_at_the_entrys_path(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    link = tree.root / "anti-patterns" / f"{BUILTIN_ID}.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(pipe)
    with pytest.raises(CatalogError, match=_refusal(link, "a link to a FIFO")):
        OPERATIONS["record_evidence"](tree, BUILTIN_ID)
    assert link.is_symlink() and _is_fifo(pipe)


def test_an_update_refuses_a_fifo_at_index_md_before_writing_the_entry(tmp_path: Path) -> None:
    # Before, the entry was saved and only the index failed: half an update, and an
    # error telling the user not to repeat it.
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.root.mkdir()
    pipe = tree.root / "index.md"
    os.mkfifo(pipe)
    with pytest.raises(CatalogError, match=_refusal(pipe)):
        OPERATIONS["record_evidence"](tree, BUILTIN_ID)
    with pytest.raises(CatalogError, match=_refusal(pipe)):
        tree.write_index()
    assert _is_fifo(pipe)
    assert _files(tree.root) == ["index.md"]
