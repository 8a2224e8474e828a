"""Evidence cells that hold ``|`` and ``\\`` round-trip through an entry's markdown.

The evidence table is split and escaped as every kernelopt table is
(:mod:`kernelopt._table_cells`): a ``|`` in a cell is written ``\\|``, a backslash is
itself, and a hand-written pipe inside a code span stays in its cell when the row would
otherwise have a cell too many. The shipped entries hold no escape, so they read as the
plain split read them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelopt import FormatError
from kernelopt._table_cells import split_row
from kernelopt.catalog import (
    Catalog,
    Entry,
    Evidence,
    EvidenceRow,
    KnowledgeTree,
    lint_tree,
    load_tree,
    parse_entry,
    render_entry,
)

from .conftest import make_entry

_ODD_CELLS = (
    "a | b",
    "a\\b",
    "a\\|b",
    "ends in \\",
    "`x | y`",
    "|",
    "\\",
    "\\\\|\\",
    "`a` | ``b | c``",
)


def _entry_with(*rows: EvidenceRow) -> Entry:
    block = Evidence(
        source_type="local experiment", source="experiments/exp_1/result.md", rows=rows
    )
    return make_entry(evidence=(block,))


def _rows_of(cells: tuple[str, ...]) -> tuple[EvidenceRow, ...]:
    """One row per cell value, the value in each column in turn."""
    rows = []
    for index, value in enumerate(cells):
        fields = ["b=32", "10 us", "8 us", "-20 %"]
        fields[index % 4] = value
        rows.append(
            EvidenceRow(config=fields[0], before=fields[1], after=fields[2], change=fields[3])
        )
    return tuple(rows)


def test_cells_with_pipes_backslashes_and_backticks_round_trip() -> None:
    entry = _entry_with(*_rows_of(_ODD_CELLS))
    text = render_entry(entry)
    assert "| a \\| b | 10 us | 8 us | -20 % |" in text.split("\n")
    assert "| b=32 | a\\b | 8 us | -20 % |" in text.split("\n")
    assert "| b=32 | 10 us | a\\\\|b | -20 % |" in text.split("\n")
    assert parse_entry(text) == entry
    assert render_entry(parse_entry(text)) == text


_CELL_TEXT = st.text(alphabet="ab |\\`", min_size=1, max_size=12).filter(lambda t: t == t.strip())


@settings(max_examples=200, deadline=None)
@given(st.tuples(_CELL_TEXT, _CELL_TEXT, _CELL_TEXT, _CELL_TEXT))
def test_any_cell_text_round_trips(cells: tuple[str, str, str, str]) -> None:
    row = EvidenceRow(config=cells[0], before=cells[1], after=cells[2], change=cells[3])
    entry = _entry_with(row)
    text = render_entry(entry)
    assert parse_entry(text) == entry
    assert render_entry(parse_entry(text)) == text


def test_an_escaped_pipe_written_by_hand_is_a_pipe_in_its_cell() -> None:
    text = render_entry(make_entry()).replace("| b=32 s=1 |", "| b=32 \\| s=1 |")
    (row,) = parse_entry(text).evidence[0].rows
    assert (row.config, row.before, row.after, row.change) == (
        "b=32 | s=1",
        "10 us",
        "8 us",
        "-20 %",
    )


def test_a_pipe_inside_a_code_span_stays_in_its_cell_and_is_written_escaped() -> None:
    text = render_entry(make_entry()).replace("| b=32 s=1 |", "| `b=32 | s=1` |")
    entry = parse_entry(text)
    assert entry.evidence[0].rows[0].config == "`b=32 | s=1`"
    canonical = render_entry(entry)
    assert "| `b=32 \\| s=1` | 10 us | 8 us | -20 % |" in canonical.split("\n")
    assert parse_entry(canonical) == entry


def test_a_row_whose_closing_pipe_is_escaped_is_an_open_row() -> None:
    text = render_entry(make_entry())
    edited = text.replace("| -20 % |", "| -20 % \\|")
    with pytest.raises(FormatError) as caught:
        parse_entry(edited, path="optimizations/demo-trick.md")
    error = caught.value
    line = edited.split("\n").index("| b=32 s=1 | 10 us | 8 us | -20 % \\|") + 1
    assert (error.line, error.section) == (line, "Performance Evidence")
    assert "Expected a table row '| a | b | c | d |'" in str(error)


def test_a_row_with_a_cell_too_many_says_how_a_pipe_is_written() -> None:
    text = render_entry(make_entry()).replace("| b=32 s=1 |", "| b=32 | s=1 |")
    with pytest.raises(FormatError) as caught:
        parse_entry(text, path="optimizations/demo-trick.md")
    message = str(caught.value)
    assert "Expected 4 cells: Config | Before | After | Change" in message
    assert "(a '|' inside a cell written '\\|'), got 5 cells" in message


def test_an_entry_with_piped_cells_is_recorded_loaded_and_linted_clean(tmp_path: Path) -> None:
    root = tmp_path / "knowledge"
    tree = KnowledgeTree(root)
    tree.add(make_entry())
    row = EvidenceRow(config="b=32 | s=1", before="C:\\runs\\a", after="`x | y`", change="-20 %")
    written = tree.record_evidence(
        "demo-trick", row, source_type="local experiment", source="experiments/exp_2/result.md"
    )
    assert row in written.evidence[-1].rows
    (loaded,) = load_tree(root).entries
    assert loaded == written
    assert [p for p in lint_tree(root) if p.path.endswith("demo-trick.md")] == []


def _evidence_rows(text: str) -> list[str]:
    """The table lines of an entry's Performance Evidence section."""
    section = text.split("\n## Performance Evidence\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.split("\n") if line.startswith("|")]


def test_builtin_table_rows_split_as_the_plain_split_read_them() -> None:
    # The shipped entries read the same under the escape-aware splitter: no row of theirs
    # holds a backslash, and each splits into the cells a split at every pipe gave.
    rows = 0
    for entry in Catalog.builtin():
        source = Catalog.builtin().source(entry.id)
        assert source is not None
        for line in _evidence_rows(source.read_text(encoding="utf-8")):
            rows += 1
            assert "\\" not in line, (entry.id, line)
            plain = [cell.strip() for cell in line.strip()[1:-1].split("|")]
            assert split_row(line, width=4) == plain, (entry.id, line)
        assert parse_entry(source.read_text(encoding="utf-8")) == entry
    assert rows > 0
