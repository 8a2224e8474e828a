"""Hand edits and failures a user of a knowledge tree meets: what the reader accepts, what
its errors say, and what an update that stops half way tells the user."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelopt import CatalogError, FormatError, InputError
from kernelopt._errors import expected
from kernelopt.catalog import (
    Catalog,
    EvidenceRow,
    Kind,
    KnowledgeTree,
    lint_tree,
    parse_entry,
    render_entry,
    store,
)
from kernelopt.catalog.markdown import parse_entry_with_warnings

from .conftest import make_entry, write_entry


def _builtin_text(entry_id: str) -> str:
    source = Catalog.builtin().source(entry_id)
    assert source is not None
    return source.read_bytes().decode("utf-8")


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        (lambda t: t.replace("## Pitfalls\n- ", "## Pitfalls\n-\t", 1), "a tab after the dash"),
        (lambda t: t.replace("\n- id: ", "\n-\tid: ", 1), "a tab after a metadata dash"),
    ],
)
def test_a_tab_after_a_bullets_dash_reads_as_the_bullet(
    edit: Callable[[str], str], what: str
) -> None:
    text = _builtin_text("online-softmax")
    edited = edit(text)
    assert edited != text, what
    entry, _ = parse_entry_with_warnings(edited, path="optimizations/online-softmax.md")
    assert entry == parse_entry(text)
    assert render_entry(entry) == text


@pytest.mark.parametrize("indent", ["\t", " ", "    "])
def test_a_bullet_wrapped_onto_a_line_indented_by_a_tab_or_a_space_continues_it(
    indent: str,
) -> None:
    entry = make_entry(pitfalls=("It can fail when the cache is cold.", "Another one."))
    text = render_entry(entry)
    wrapped = text.replace(
        "- It can fail when the cache is cold.", f"- It can fail when\n{indent}the cache is cold."
    )
    wrapped = wrapped.replace("(complements): Both help.", f"(complements): Both\n{indent}help.")
    assert wrapped != text
    assert parse_entry(wrapped) == entry


def test_an_escaped_pipe_in_an_evidence_cell_is_a_pipe_in_that_cell() -> None:
    text = render_entry(make_entry())
    edited = text.replace("| b=32 s=1 |", "| b=32 \\| s=1 |")
    entry = parse_entry(edited, path="optimizations/demo-trick.md")
    assert entry.evidence[0].rows[0].config == "b=32 | s=1"
    assert render_entry(entry) == edited


def test_every_builtin_entry_round_trips_and_reads_the_same_with_tabs_after_its_dashes() -> None:
    # Every shipped entry round-trips; tabs an editor puts into its bullets change nothing.
    for entry in Catalog.builtin():
        text = _builtin_text(entry.id)
        assert render_entry(parse_entry(text)) == text
        tabbed = "\n".join(
            f"-\t{line[2:]}" if line.startswith("- ") else line for line in text.split("\n")
        )
        assert parse_entry(tabbed) == entry, entry.id


@pytest.mark.parametrize("operation", ["record_evidence", "flip"])
def test_an_index_that_cannot_be_written_says_the_update_is_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    root = tmp_path / "knowledge"
    tree = KnowledgeTree(root)
    tree.add(make_entry())
    write = store.atomic_write_text

    def index_refused(path: str | os.PathLike[str], text: str, **kwargs: Any) -> None:
        if Path(path).name == "index.md":
            # What atomic_write_text says of a root folder this user may not write in.
            raise InputError(
                expected("a folder kernelopt may write in", f"{root}: Permission denied")
            )
        write(path, text, **kwargs)

    monkeypatch.setattr(store, "atomic_write_text", index_refused)
    row = EvidenceRow(config="b=8", before="9 us", after="7 us", change="-22 %")
    # Both change the index: a built-in entry enters the tree, a flipped one moves.
    entry_id = "too-many-kv-splits" if operation == "record_evidence" else "demo-trick"
    with pytest.raises(InputError) as caught:
        if operation == "record_evidence":
            tree.record_evidence(entry_id, row, source_type="local experiment", source="exp/2.md")
        else:
            tree.flip(entry_id, reason="It regressed.")
    message = str(caught.value)
    assert "Permission denied" in message
    assert "the update is saved in" in message and "so do not repeat it" in message
    assert f"kernelopt catalog index {root}" in message
    # The update is indeed saved: repeating it would have doubled it.
    monkeypatch.setattr(store, "atomic_write_text", write)
    entry = tree.catalog().get(entry_id)
    assert tree.catalog().source(entry_id) == root / entry.relative_path
    if operation == "record_evidence":
        assert [r.config for _, r in entry.evidence_rows][-1] == "b=8"
    else:
        assert entry.kind is Kind.ANTI_PATTERN
    tree.write_index()
    assert entry.relative_path in (root / "index.md").read_text(encoding="utf-8")


def _row(config: str) -> EvidenceRow:
    return EvidenceRow(config=config, before="10 us", after="9 us", change="-10 %")


def test_an_update_of_a_copied_file_whose_id_line_names_another_entry_writes_nothing(
    tmp_path: Path,
) -> None:
    # Copying an entry's file is how a new entry is often started; until its id line is
    # changed, an update by the new name must not be saved over the entry it came from.
    root = tmp_path / "knowledge"
    tree = KnowledgeTree(root)
    original = tree.add(make_entry())
    tree.record_evidence(
        "demo-trick", _row("only in the original"), source_type="local experiment", source="a"
    )
    copy = original.with_name("demo-trick-two.md")
    copy.write_text(
        original.read_text(encoding="utf-8").replace("# Demo Trick", "# Demo Trick Two"),
        encoding="utf-8",
    )
    before = {p: p.read_bytes() for p in (original, copy)}
    with pytest.raises(CatalogError) as caught:
        tree.record_evidence(
            "demo-trick-two", _row("for the copy"), source_type="local experiment", source="b"
        )
    message = str(caught.value)
    assert f"Expected '- id: demo-trick-two' in {copy}" in message
    assert "got 'demo-trick'" in message and "nothing was written" in message
    assert {p: p.read_bytes() for p in (original, copy)} == before


def test_an_update_never_replaces_another_copy_where_a_misplaced_file_belongs(
    tmp_path: Path,
) -> None:
    # Two copies of one anti-pattern, one of them hand-edited in optimizations/: moving it
    # to anti-patterns/ would replace the copy there, and the rows only that one holds.
    root = tmp_path / "knowledge"
    tree = KnowledgeTree(root)
    tree.add(make_entry(kind=Kind.ANTI_PATTERN))
    placed = root / "anti-patterns" / "demo-trick.md"
    tree.record_evidence(
        "demo-trick", _row("only in anti-patterns"), source_type="local experiment", source="a"
    )
    misplaced = root / "optimizations" / "demo-trick.md"
    misplaced.parent.mkdir()
    misplaced.write_text(render_entry(make_entry(kind=Kind.ANTI_PATTERN)), encoding="utf-8")
    before = {p: p.read_bytes() for p in (placed, misplaced)}
    with pytest.raises(CatalogError) as caught:
        tree.record_evidence("demo-trick", _row("new"), source_type="local experiment", source="b")
    message = str(caught.value)
    assert "Expected one file for 'demo-trick'" in message
    assert str(placed) in message and str(misplaced) in message
    assert {p: p.read_bytes() for p in (placed, misplaced)} == before


def test_lint_of_a_folder_whose_index_md_is_a_page_of_its_own_does_not_advise_index(
    tmp_path: Path,
) -> None:
    root = tmp_path / "knowledge"
    write_entry(root, make_entry())
    (root / "index.md").write_text(
        "# Our knowledge\n\nA page of the project's docs.\n", encoding="utf-8"
    )
    # `kernelopt catalog index` refuses this folder: lint must not send the user there.
    with pytest.raises(CatalogError):
        KnowledgeTree(root).write_index()
    problems = [p for p in lint_tree(root) if p.path == str(root / "index.md")]
    assert len(problems) == 1
    assert not problems[0].is_error
    assert "run `kernelopt catalog index`" not in problems[0].message
    assert problems[0].message.startswith(f"Expected a knowledge tree at {root}")
    assert "which would be replaced" in problems[0].message


_BLANKS = " " * 100_000


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda t: t.replace("- kind: optimization", f"- kind{_BLANKS}x"), "metadata"),
        (lambda t: t.replace("## Mechanism", f"## Mech{_BLANKS}anism"), "section heading"),
        (
            lambda t: t.replace(
                "## Interactions\n", f"## Interactions\n- `cuda-graphs`{_BLANKS}x\n"
            ),
            "interaction",
        ),
        (
            lambda t: t.replace(
                "- Metric: `dram_pct > 60`", f"- Metric: `dram_pct{_BLANKS}x > 60`"
            ),
            "condition",
        ),
    ],
)
def test_a_line_with_a_long_run_of_blanks_is_read_in_linear_time(
    edit: Callable[[str], str], where: str
) -> None:
    # Reading such a line took time growing with the square of its blanks (seconds for
    # 20 000 of them): a pasted, padded line stalled every load of the tree.
    text = render_entry(make_entry())
    edited = edit(text)
    assert edited != text, where
    start = time.perf_counter()
    try:
        parse_entry_with_warnings(edited, path="optimizations/demo-trick.md")
    except FormatError as error:
        message = str(error)
    else:
        message = ""
    assert time.perf_counter() - start < 2.0, where
    # An error shows the start of the line, not all of it.
    assert len(message) < 400, where
