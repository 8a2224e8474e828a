"""The cells of a markdown pipe-table row, split as every kernelopt reader splits them.

One splitter for the tolerant log readers, the canonical experiment files and the workflow's
devlog and hand-offs, so that column N of a row is the same column to each of them. It
lives here, beside the package's other leaf modules, because it imports nothing of
kernelopt: the canonical writer and the readers import each other, and either can import
this without a cycle.

A ``\\|`` is a pipe inside a cell (as GitHub renders it), read back as ``|``; the writers
put one there with :func:`escape_cell`, so that a cell holding a pipe reads back as written.
Any other backslash is kept as it stands.

Files written with markdown's own backslash escapes (the workload profile) are read and
written with ``backslash_escapes=True``: a backslash before an ASCII punctuation character
is that character (``\\|`` a pipe, ``\\\\`` one backslash, ``\\_`` an underscore, as
GitHub shows them), before anything else it is itself, and :func:`escape_cell` doubles
each backslash besides escaping each pipe.
"""

from __future__ import annotations

import re

__all__ = ["escape_cell", "share_cell", "split_row"]

_TICKS = re.compile(r"`+")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
# Markdown's escapes: a backslash and an ASCII punctuation character (``!`` to ``/``,
# ``:`` to ``@``, ``[`` to a backtick, ``{`` to ``~``), the backslash itself among them.
_PUNCTUATION = r"[!-/:-@\[-`{-~]"
_ESCAPE_OR_PIPE = re.compile(rf"\\{_PUNCTUATION}|\|")
_ESCAPE = re.compile(rf"\\({_PUNCTUATION})")


def share_cell(percent: float) -> str:
    """A share of the roofline floor as a table cell: to one decimal (``61.2%``), or to two
    significant digits where one decimal would show a share above 0 as ``0.0%``
    (``0.021%``), which reads as a floor of zero, the mark of a roofline computed wrong.

    Parameters
    ----------
    percent : float
        The share in percent (61.2 for a floor 61.2 % of the time).

    Returns
    -------
    str
        The cell, ending in ``%``.
    """
    shown = f"{percent:.1f}%"
    return shown if float(shown[:-1]) != 0 or percent == 0 else f"{percent:.2g}%"


def escape_cell(text: str, *, backslash_escapes: bool = False) -> str:
    """``text`` as a table cell: each ``|`` written ``\\|``, so :func:`split_row` keeps it.

    Parameters
    ----------
    text : str
        The cell's text, one line.
    backslash_escapes : bool, optional
        Write markdown's escapes: each ``\\`` doubled as well, for a reader that takes
        ``\\\\`` as one backslash (``split_row(..., backslash_escapes=True)``).

    Returns
    -------
    str
        The text to write between the row's pipes; :func:`split_row`, given the same
        ``backslash_escapes``, reads it back as ``text`` (stripped). Without it, a ``\\``
        before a ``|`` is kept too, since only the one backslash added here is taken back.

    Examples
    --------
    >>> escape_cell("A|B")
    'A\\\\|B'
    >>> split_row("| " + escape_cell("A|B") + " | c |")
    ['A|B', 'c']
    >>> print(escape_cell(r"C:\\tmp|x", backslash_escapes=True))
    C:\\\\tmp\\|x
    """
    if backslash_escapes:
        text = text.replace("\\", "\\\\")
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


def _ends_in_separator(body: str, *, backslash_escapes: bool) -> bool:
    """Whether ``body`` ends in a pipe that closes the row rather than one escaped."""
    if not body.endswith("|"):
        return False
    before = body[:-1]
    if not backslash_escapes:
        return not before.endswith("\\")
    # "\\|" is an escaped backslash before the closing pipe: only an odd run escapes it.
    return (len(before) - len(before.rstrip("\\"))) % 2 == 0


def _row_body(line: str, *, backslash_escapes: bool) -> str:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if _ends_in_separator(body, backslash_escapes=backslash_escapes):
        body = body[:-1]
    return body


def _pipes(body: str, *, backslash_escapes: bool) -> list[int]:
    """Where ``body``'s unescaped pipes are; with ``backslash_escapes``, read left to
    right, each escape taking its two characters (``\\\\|`` ends in a bare pipe)."""
    if backslash_escapes:
        return [m.start() for m in _ESCAPE_OR_PIPE.finditer(body) if m.group() == "|"]
    return [m.start() for m in _UNESCAPED_PIPE.finditer(body)]


def _unescape(cell: str, *, backslash_escapes: bool) -> str:
    if backslash_escapes:
        return _ESCAPE.sub(r"\1", cell)
    return cell.replace("\\|", "|")


def _split_cells(body: str, *, keep_code: bool, backslash_escapes: bool) -> list[str]:
    """Cells of a row body split at its pipes; an escaped pipe is a pipe inside a cell,
    and so, with ``keep_code``, is one inside a code span."""
    spans = iter(_code_spans(body) if keep_code else [])
    span = next(spans, None)
    cells = []
    start = 0
    for at in _pipes(body, backslash_escapes=backslash_escapes):
        while span is not None and span[1] <= at:
            span = next(spans, None)
        if span is not None and span[0] <= at:
            continue
        cells.append(body[start:at])
        start = at + 1
    cells.append(body[start:])
    return [_unescape(cell.strip(), backslash_escapes=backslash_escapes) for cell in cells]


def split_row(line: str, width: int | None = None, *, backslash_escapes: bool = False) -> list[str]:
    """The stripped cells of a table row (outer pipes optional), ``\\|`` read as ``|``.

    Parameters
    ----------
    line : str
        One row of a pipe table, its header or separator included.
    width : int, optional
        The header's number of cells. Given, a row that splits into more cells than that
        keeps the pipes of its code spans (`` `a | b` ``) inside them, when that makes it
        fit: markdown would split there, but a log's writer meant one cell. Without it,
        only an escaped pipe keeps its cell.
    backslash_escapes : bool, optional
        Read markdown's escapes: a backslash before an ASCII punctuation character is that
        character (``\\\\`` one backslash, ``\\_`` an underscore), before anything else
        itself; what ``escape_cell(..., backslash_escapes=True)`` writes reads back as it
        was. Without it, only the backslash of ``\\|`` is taken away.

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
    >>> split_row(r"| C:\\\\tmp\\|x | s\\_q | a\\b |", backslash_escapes=True)
    ['C:\\\\tmp|x', 's_q', 'a\\\\b']
    """
    body = _row_body(line, backslash_escapes=backslash_escapes)
    cells = _split_cells(body, keep_code=False, backslash_escapes=backslash_escapes)
    if width is not None and len(cells) > width and "`" in body:
        kept = _split_cells(body, keep_code=True, backslash_escapes=backslash_escapes)
        if len(kept) <= width:
            return kept
    return cells
