"""Table cells of ``workload_profile.md``: one escape convention for the writer and both readers.

The writer escapes each cell with markdown's backslash escapes (``\\|`` a pipe, ``\\\\`` a
backslash, as GitHub shows them), through :mod:`kernelopt._table_cells`; the exact reader and
the tolerant reader of edited or hand-written files read them back the same way, so a cell
holding ``|``, ``\\`` or backticks comes back as it was written from either. Files written
before read as they did: the written form is unchanged.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelopt._table_cells import escape_cell, split_row
from kernelopt.workload import (
    Call,
    TensorArg,
    WorkloadProfile,
    profile_calls,
    read_profile_md,
    render_profile_md,
    write_profile_md,
)
from kernelopt.workload.handwritten import read_handwritten_md

# Each a cell value the table must carry: a pipe, a backslash, a backslash before a pipe,
# a trailing backslash, backticks around and inside the text, a code span holding a pipe.
ODD_TEXTS = (
    "a|b",
    "a\\b",
    "a\\|b",
    "ends in \\",
    "`x | y`",
    "x=`a|b`:f16",
    "\\\\|",
    "|",
    "\\",
    "``a`` | `",
)


def _profile(
    args: tuple[str, ...], sources: tuple[str, str], op: str = "softmax"
) -> WorkloadProfile:
    """A softmax profile of ``len(args)`` shapes labelled ``args``, its two axes read from
    ``sources``."""
    lengths = [64 * (index + 1) for index in range(len(args))]
    calls = [
        Call(
            op="softmax",
            args=(TensorArg(name="x", shape=(4, n), dtype="float16"),),
            duration_us=10.0,
        )
        for n in [lengths[0], *lengths]
    ]
    profile = profile_calls(calls)
    (stats,) = profile.ops
    assert len(stats.shapes) == len(args) and len(stats.axes) == len(sources)
    shapes = tuple(attrs.evolve(s, args=a) for s, a in zip(stats.shapes, args, strict=True))
    axes = tuple(attrs.evolve(a, source=s) for a, s in zip(stats.axes, sources, strict=True))
    edited = attrs.evolve(stats, op=op, shapes=shapes, axes=axes)
    return attrs.evolve(profile, ops=(edited,), notes=("a note | with \\ and `ticks`",))


def _odd_profile() -> WorkloadProfile:
    return _profile(ODD_TEXTS, ("x.shape[-1] | \\", "a\\|b`c`"), op="soft|max\\v2")


def test_every_odd_cell_round_trips_through_the_exact_reader(tmp_path: Path) -> None:
    profile = _odd_profile()
    path = write_profile_md(profile, tmp_path / "workload_profile.md")
    assert read_profile_md(path) == profile


def _tolerant_shapes_and_sources(read: WorkloadProfile) -> tuple[list[str], list[tuple[str, str]]]:
    (op,) = read.ops
    return sorted(s.args for s in op.shapes), [(a.name, a.source) for a in op.axes]


def test_every_odd_cell_round_trips_through_the_hand_edit_reader() -> None:
    profile = _odd_profile()
    text = render_profile_md(profile)
    read = read_handwritten_md(text, kernelopt_layout=True)
    shapes, sources = _tolerant_shapes_and_sources(read)
    assert shapes == sorted(ODD_TEXTS)
    assert sources == [(a.name, a.source) for a in profile.ops[0].axes]
    assert read.ops[0].op == "soft|max\\v2"


def test_an_edited_profile_read_tolerantly_keeps_its_odd_cells(tmp_path: Path) -> None:
    profile = _odd_profile()
    path = write_profile_md(profile, tmp_path / "workload_profile.md")
    text = path.read_text(encoding="utf-8")
    # A field no longer in the exact layout sends the file to the tolerant reader.
    path.write_text(text.replace("- Skipped: 0", "- Skipped: none"), encoding="utf-8")
    read = read_profile_md(path)
    assert read.notes[0].startswith("not in kernelopt's exact layout")
    shapes, sources = _tolerant_shapes_and_sources(read)
    assert shapes == sorted(ODD_TEXTS)
    assert sources == [(a.name, a.source) for a in profile.ops[0].axes]


def test_the_written_form_is_markdowns_escapes_as_before() -> None:
    # The layout files were written in: a backslash doubled, a pipe escaped. Kept, so that
    # every workload_profile.md written before reads as it did.
    text = render_profile_md(_profile(("a|b", "a\\b", "a\\|b"), ("x.shape[-1]", "x.numel() / n")))
    lines = text.split("\n")
    assert "| 1 | 2 | 50.0% | 20 | 50.0% | n=64 rows=4 | a\\|b |" in lines
    assert "| 2 | 1 | 25.0% | 10 | 25.0% | n=128 rows=4 | a\\\\b |" in lines
    assert "| 3 | 1 | 25.0% | 10 | 25.0% | n=192 rows=4 | a\\\\\\|b |" in lines


@pytest.mark.parametrize(
    "name",
    [
        "examples/logs/mla-decode-plateau/experiments/workload_profile.md",
        "docs/kernels/mla_decode/experiments/workload_profile.md",
    ],
)
def test_shipped_profiles_read_exactly_and_write_back_byte_for_byte(name: str) -> None:
    path = Path(__file__).resolve().parents[2] / name
    text = path.read_text(encoding="utf-8")
    profile = read_profile_md(path)
    assert not any("read tolerantly" in note for note in profile.notes)
    assert render_profile_md(profile) == text


def test_a_hand_written_escaped_pipe_is_a_pipe_in_the_shape_label() -> None:
    text = "# Workload profile: softmax\n\n| Axes | Args | Calls |\n|---|---|---:|\n"
    text += "| n=64 | x=a\\|b | 30 |\n| n=128 | C:\\\\runs | 10 |\n"
    (op,) = read_handwritten_md(text).ops
    assert [(s.args, s.axes, s.calls) for s in op.shapes] == [
        ("x=a|b", (("n", 64.0),), 30),
        ("C:\\runs", (("n", 128.0),), 10),
    ]


def test_a_hand_written_header_with_an_escaped_underscore_names_its_axis() -> None:
    # "s\_q" is how markdown keeps an underscore from starting emphasis; shown as s_q.
    text = "# Workload profile: mla_decode\n\n| b | s\\_q | Calls |\n|---|---|---|\n"
    text += "| 32 | 1 | 90 |\n| 32 | 2 | 10 |\n"
    (op,) = read_handwritten_md(text).ops
    assert [dict(s.axes) for s in op.shapes] == [{"b": 32, "s_q": 1}, {"b": 32, "s_q": 2}]


def test_a_pipe_inside_a_code_span_keeps_a_hand_written_row_in_its_columns() -> None:
    text = "# Workload profile: softmax\n\n| Comment (free text) | n | Calls |\n|---|---|---|\n"
    text += "| `a | b` | 64 | 30 |\n| plain | 128 | 10 |\n"
    read = read_handwritten_md(text)
    (op,) = read.ops
    assert [(dict(s.axes), s.calls) for s in op.shapes] == [({"n": 64}, 30), ({"n": 128}, 10)]
    assert not any("not read" in note for note in read.notes)


_TEXT = st.text(alphabet="ab |\\`_*", max_size=12).map(str.strip)


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=5))
def test_any_cells_escaped_with_backslashes_split_back_as_written(cells: list[str]) -> None:
    row = "| " + " | ".join(escape_cell(c, backslash_escapes=True) for c in cells) + " |"
    assert split_row(row, backslash_escapes=True) == cells
    assert split_row(row, len(cells), backslash_escapes=True) == cells


@pytest.mark.parametrize(
    ("row", "cells"),
    [
        ("| a\\\\|", ["a\\"]),  # an escaped backslash, then the closing pipe
        ("| a\\|", ["a|"]),  # an escaped pipe: the row is not closed
        ("| a\\\\\\| | b |", ["a\\|", "b"]),
        ("| C:\\tmp | \\_ |", ["C:\\tmp", "_"]),  # before a letter, a backslash is itself
        ("a | b", ["a", "b"]),
    ],
)
def test_backslash_escapes_read_as_markdown_reads_them(row: str, cells: list[str]) -> None:
    assert split_row(row, backslash_escapes=True) == cells


@pytest.mark.parametrize(
    ("row", "cells"),
    [
        ("| a\\\\|b | c |", ["a\\|b", "c"]),
        ("| a\\\\b | C:\\tmp\\ |", ["a\\\\b", "C:\\tmp\\"]),
        ("| a\\| b |", ["a| b"]),
        ("| `x | y` | z |", ["`x", "y`", "z"]),
    ],
)
def test_without_backslash_escapes_only_the_escaped_pipe_is_read(
    row: str, cells: list[str]
) -> None:
    # The convention of the experiment files and the devlog, which this module serves too.
    assert split_row(row) == cells
    assert split_row("| " + " | ".join(escape_cell(c) for c in cells) + " |") == cells
