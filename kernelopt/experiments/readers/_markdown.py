"""Tolerant markdown structure: headings, sections, tables, ``Key: value`` fields, bullets.

Hand-written logs break every rule a strict parser would rely on (ragged tables, bold
keys, headings inside code fences), so these helpers take what they can and never raise.
Line numbers are 1-based, as editors show them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from kernelopt._table_cells import split_row

__all__ = [
    "Bullet",
    "Heading",
    "Row",
    "Section",
    "Table",
    "bullets",
    "code_mask",
    "fields",
    "headings",
    "is_separator",
    "section_ends",
    "sections",
    "strip_md",
    "tables",
    "tables_without_separator",
]

# The title is cut of its closing hashes in code: a lazy title before ``\s*#*\s*$`` tries
# every length, each against the rest of the line, which is quadratic on a long line.
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# Each run of spaces is followed by something that is not a space (``\s*\|?\s*`` would try
# every split of a long run of spaces between the two, quadratic on a line of them).
# One dash per cell is enough (``|-|-|``), as GitHub renders it; a line of one cell and
# no pipe needs two, so that a lone ``-`` (an empty list item) starts no table.
_SEPARATOR = re.compile(r"^\s*(?:\|\s*)?:?-+:?\s*(?:\|\s*:?-+:?\s*)*(?:\|\s*)?$")
_FIELD = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?([A-Za-z][A-Za-z0-9 "
    r"_/%()-]{0,40}?)(?::(?:\*\*|__)|(?:\*\*|__)?:)\s*(.*)$"
)
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
# Neither part of a link spans a "[": a line of 200,000 "[" (or of "[a](") would otherwise be
# scanned to its end from each of them.
_LINK = re.compile(r"\[([^\[\]]*)\]\([^)\[]*\)")


@attrs.frozen(kw_only=True)
class Heading:
    """A markdown heading: level (1–6), title text and 1-based line."""

    level: int
    title: str
    line: int


@attrs.frozen(kw_only=True)
class Section:
    """A heading and the 1-based line range [start, end] of its body (end inclusive)."""

    heading: Heading
    start: int
    end: int


@attrs.frozen(kw_only=True)
class Row:
    """One table row: stripped cells (as many as the header's), its 1-based line, the
    cells past the header's width that a bare ``|`` split off (``spilled``), and how many
    cells the line lacked, padded with empty ones at the end (``missing``)."""

    cells: tuple[str, ...]
    line: int
    spilled: tuple[str, ...] = ()
    missing: int = 0


@attrs.frozen(kw_only=True)
class Table:
    """A pipe table: header cells, rows padded/cut to the header width, header line."""

    header: tuple[str, ...]
    rows: tuple[Row, ...]
    line: int


@attrs.frozen(kw_only=True)
class Bullet:
    """A list item (continuation lines joined) and the 1-based line it starts on."""

    text: str
    line: int
    indent: int


def strip_md(text: str) -> str:
    """Drop inline markdown (bold, code ticks, links) and squeeze spaces."""
    text = _LINK.sub(r"\1", text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    return " ".join(text.split())


def code_mask(lines: Sequence[str]) -> list[bool]:
    """For each line, True when it sits inside (or opens/closes) a fenced code block."""
    mask: list[bool] = []
    inside = False
    for line in lines:
        if _FENCE.match(line):
            mask.append(True)
            inside = not inside
        else:
            mask.append(inside)
    return mask


def headings(lines: Sequence[str], mask: Sequence[bool] | None = None) -> list[Heading]:
    """Every ATX heading outside code fences."""
    mask = code_mask(lines) if mask is None else mask
    found = []
    for index, line in enumerate(lines):
        if mask[index] or not line.startswith("#"):
            continue
        match = _HEADING.match(line)
        title = match.group(2).rstrip().rstrip("#").rstrip() if match else ""
        if match and title:
            found.append(Heading(level=len(match.group(1)), title=title, line=index + 1))
    return found


def section_ends(heads: Sequence[Heading], last: int) -> list[int]:
    """For each of ``heads`` (in line order), the last line of its body: the line before the
    next heading of the same or a higher level, else ``last``.

    One pass over a stack of the headings still open: looking ahead from each heading for
    the one that closes it was quadratic in a log of thousands of entries.
    """
    ends = [last] * len(heads)
    open_heads: list[int] = []  # their levels increase from the bottom up
    for index, head in enumerate(heads):
        while open_heads and heads[open_heads[-1]].level >= head.level:
            ends[open_heads.pop()] = head.line - 1
        open_heads.append(index)
    return ends


def sections(
    lines: Sequence[str], heads: Sequence[Heading], *, level: int | None = None
) -> list[Section]:
    """Sections of the given headings (only ``level`` when set): a body runs to the next
    heading of the same or a higher level."""
    return [
        Section(heading=heading, start=heading.line + 1, end=end)
        for heading, end in zip(heads, section_ends(heads, len(lines)), strict=True)
        if level is None or heading.level == level
    ]


def _row(line: str, width: int, number: int) -> Row:
    """Row ``number`` (1-based), padded with empty cells or cut to the header's ``width``."""
    cells = split_row(line, width)
    return Row(
        cells=tuple((cells + [""] * width)[:width]),
        line=number,
        spilled=tuple(cells[width:]),
        missing=max(width - len(cells), 0),
    )


def is_separator(line: str) -> bool:
    """Whether ``line`` is the ``|---|`` row that makes the line above it a table header."""
    return bool(_SEPARATOR.match(line)) and ("|" in line or "--" in line)


def tables(
    lines: Sequence[str], start: int = 1, end: int | None = None, mask: Sequence[bool] | None = None
) -> list[Table]:
    """Pipe tables between 1-based lines ``start`` and ``end`` (inclusive).

    A table is a ``|``-line followed by a ``|---|`` separator; rows run while lines keep
    containing ``|``. Ragged rows are padded with empty cells or cut to the header width.
    """
    mask = code_mask(lines) if mask is None else mask
    last = len(lines) if end is None else min(end, len(lines))
    found = []
    index = max(start, 1) - 1
    while index < last - 1:
        line = lines[index]
        if mask[index] or "|" not in line or not is_separator(lines[index + 1]):
            index += 1
            continue
        header = split_row(line)
        rows = []
        cursor = index + 2
        while cursor < last and "|" in lines[cursor] and lines[cursor].strip() and not mask[cursor]:
            if not is_separator(lines[cursor]):
                rows.append(_row(lines[cursor], len(header), cursor + 1))
            cursor += 1
        found.append(Table(header=tuple(header), rows=tuple(rows), line=index + 1))
        index = cursor
    return found


def tables_without_separator(
    lines: Sequence[str], found: Sequence[Table], mask: Sequence[bool] | None = None
) -> list[Table]:
    """Runs of two or more ``|``-led lines that :func:`tables` did not take (``found``)
    because no ``|---|`` row follows their first line: what a writer meant as a table.

    Every line of a run starts with ``|`` and splits into as many cells as the first, at
    least two, so that prose holding a pipe starts none; the first line is the header.
    """
    mask = code_mask(lines) if mask is None else mask
    taken = set()
    for table in found:
        taken.add(table.line - 1)
        taken.update(range(table.line, max((r.line for r in table.rows), default=table.line)))

    def cells(index: int) -> list[str] | None:
        line = lines[index]
        if index in taken or mask[index] or not line.lstrip().startswith("|"):
            return None
        return None if is_separator(line) else split_row(line)

    result = []
    index = 0
    while index < len(lines):
        header = cells(index)
        end = index + 1
        if header is not None and len(header) >= 2:
            while end < len(lines) and len(cells(end) or ()) == len(header):
                end += 1
        if end - index >= 2 and header is not None:
            rows = tuple(_row(lines[i], len(header), i + 1) for i in range(index + 1, end))
            result.append(Table(header=tuple(header), rows=rows, line=index + 1))
        index = end
    return result


def fields(
    lines: Sequence[str], start: int = 1, end: int | None = None, mask: Sequence[bool] | None = None
) -> dict[str, tuple[str, int]]:
    """``Key: value`` lines (also ``- Key: value``, ``**Key**: value``), keys lower-cased.

    The first occurrence of a key wins; values keep their inline markdown.
    """
    mask = code_mask(lines) if mask is None else mask
    last = len(lines) if end is None else min(end, len(lines))
    found: dict[str, tuple[str, int]] = {}
    for index in range(max(start, 1) - 1, last):
        if mask[index]:
            continue
        line = lines[index]
        if line.startswith("#") or line.lstrip().startswith("|") or ":" not in line:
            continue
        match = _FIELD.match(line)
        if not match:
            continue
        key = " ".join(match.group(1).lower().split())
        if key and key not in found:
            found[key] = (match.group(2).strip(), index + 1)
    return found


def bullets(
    lines: Sequence[str], start: int = 1, end: int | None = None, mask: Sequence[bool] | None = None
) -> list[Bullet]:
    """List items between lines ``start`` and ``end``; indented continuation lines join."""
    mask = code_mask(lines) if mask is None else mask
    last = len(lines) if end is None else min(end, len(lines))
    items: list[Bullet] = []
    for index in range(max(start, 1) - 1, last):
        if mask[index]:
            continue
        line = lines[index]
        match = _BULLET.match(line)
        if match:
            items.append(
                Bullet(text=match.group(2).strip(), line=index + 1, indent=len(match.group(1)))
            )
        elif (
            items
            and line.strip()
            and line.startswith(" ")
            and not line.lstrip().startswith(("|", "#"))
        ):
            previous = items[-1]
            if index + 1 - previous.line < 12:
                items[-1] = attrs.evolve(previous, text=previous.text + " " + line.strip())
        elif not line.strip():
            continue
    return items
