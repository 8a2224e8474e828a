"""The cells of a markdown pipe-table row, split as every kernelopt reader splits them.

One splitter for the tolerant log readers, the canonical experiment files and the workflow's
devlog and hand-offs, so that column N of a row is the same column to each of them. It
lives here, beside the package's other leaf modules, because it imports nothing of
kernelopt: the canonical writer and the readers import each other, and either can import
this without a cycle.

A ``\\|`` is a pipe inside a cell (as GitHub renders it), read back as ``|``; the writers
put one there with :func:`escape_cell`, so that a cell holding a pipe reads back as written.
"""

from __future__ import annotations

import re

__all__ = ["escape_cell", "split_row"]

_TICKS = re.compile(r"`+")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def escape_cell(text: str) -> str:
    """``text`` as a table cell: each ``|`` written ``\\|``, so :func:`split_row` keeps it.

    Parameters
    ----------
    text : str
        The cell's text, one line.

    Returns
    -------
    str
        The text to write between the row's pipes; :func:`split_row` reads it back as
        ``text`` (stripped): a ``\\`` before a ``|`` is kept too, since only the one
        backslash added here is taken back.

    Examples
    --------
    >>> escape_cell("A|B")
    'A\\\\|B'
    >>> split_row("| " + escape_cell("A|B") + " | c |")
    ['A|B', 'c']
    """
    return text.replace("|", "\\|")


def _code_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each code span's content: a run of backticks opens one and
    the next run of exactly as many closes it; a run that nothing closes is literal.

    One pass over the runs: a pattern looking ahead from each run for its closer would
    scan a long line once per run.
    """
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    closer: list[int | None] = [None] * len(runs)
    seen: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        size = runs[index][1] - runs[index][0]
        closer[index] = seen.get(size)
        seen[size] = index
    spans = []
    index = 0
    while index < len(runs):
        close = closer[index]
        if close is None:
            index += 1
            continue
        spans.append((runs[index][1], runs[close][0]))
        index = close + 1
    return spans


def _row_body(line: str) -> str:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return body


def _split_cells(body: str, *, keep_code: bool) -> list[str]:
    """Cells of a row body split at its pipes; ``\\|`` is a pipe inside a cell, and so,
    with ``keep_code``, is one inside a code span."""
    spans = iter(_code_spans(body) if keep_code else [])
    span = next(spans, None)
    cells = []
    start = 0
    for match in _UNESCAPED_PIPE.finditer(body):
        at = match.start()
        while span is not None and span[1] <= at:
            span = next(spans, None)
        if span is not None and span[0] <= at:
            continue
        cells.append(body[start:at])
        start = at + 1
    cells.append(body[start:])
    return [cell.strip().replace("\\|", "|") for cell in cells]


def split_row(line: str, width: int | None = None) -> list[str]:
    """The stripped cells of a table row (outer pipes optional), ``\\|`` read as ``|``.

    Parameters
    ----------
    line : str
        One row of a pipe table, its header or separator included.
    width : int, optional
        The header's number of cells. Given, a row that splits into more cells than that
        keeps the pipes of its code spans (`` `a | b` ``) inside them, when that makes it
        fit: markdown would split there, but a log's writer meant one cell. Without it,
        only ``\\|`` keeps a pipe in its cell.

    Returns
    -------
    list of str
        The cells, left to right; as many as the row has, whatever ``width`` is.

    Examples
    --------
    >>> split_row(r"| v2 | A\\|B | - |")
    ['v2', 'A|B', '-']
    >>> split_row("| a | `x | y` |", width=2)
    ['a', '`x | y`']
    """
    body = _row_body(line)
    cells = _split_cells(body, keep_code=False)
    if width is not None and len(cells) > width and "`" in body:
        kept = _split_cells(body, keep_code=True)
        if len(kept) <= width:
            return kept
    return cells
