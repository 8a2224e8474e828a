"""Roofline floors stated in a result file: each timed row's floor and the share of it reached.

``kernelopt.bench`` writes them into result.md's Measurements table (``Floor``, ``Of floor``):
those rows are the :class:`~kernelopt.experiments.ResultRow` that
:func:`kernelopt.experiments.canonical.parse_result` (or, in a result edited by hand,
:func:`~kernelopt.experiments.canonical.measurement_rows`) reads, whose ``floor`` and
``fraction_of_floor`` are the numbers used here: the canonical parser, not a second reading
of its table. A result table written by hand is read by its headers: a floor column
(``Floor``, ``Floor (us)``), an of-floor column (``Of floor``, ``% of floor``) or both,
beside the time.

Which ceiling sets the floor (bytes or FLOPs) is what makes a floor a bound. The canonical
row says it in its ``Bound`` column when ``kernelopt.bench`` placed the time on a roofline
(:attr:`ResultRow.bound <kernelopt.experiments.ResultRow.bound>`); a hand-written row may,
in a column of its own (``Bound``,
``Bottleneck``, ``Ceiling``, ``Floor set by``: ``memory``, ``bytes``, ``compute``,
``FLOPs``) or in the floor's header (``Memory floor``, ``Floor (FLOPs)``).

A hand-written row is called by its first cell where the first column names the rows
(``Point``, ``Shape``); in a table that opens with a value (``| Floor | Time | Bound |``),
by its time (``49.8 us``), and without a time column, ``the kernel``: never by its floor.

The readers carry the rows on the experiment (:attr:`Experiment.floors
<kernelopt.experiments.Experiment.floors>`), read once with the file.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Collection, Sequence

import attrs

from kernelopt._errors import FormatError, KernelOptError
from kernelopt._table_cells import split_row
from kernelopt.experiments.canonical import measurement_rows, parse_result
from kernelopt.experiments.log import FloorRow, SourceRef
from kernelopt.experiments.readers._files import TextFile, suffix_of
from kernelopt.experiments.readers._markdown import Table, code_mask, strip_md, tables
from kernelopt.experiments.readers._metrics import (
    FloorOverTime,
    metric_of_header,
    read_floor_share,
    written_half_unit,
)
from kernelopt.experiments.readers._values import (
    LATENCY_UNITS,
    cycle_tokens,
    first_stated,
    latency_tokens,
    number,
    unit_of_header,
)
from kernelopt.experiments.records import ResultRow

__all__ = [
    "COMPUTE",
    "MEMORY",
    "ceiling_of",
    "is_result_file",
    "refused_measurement_lines",
    "result_floors",
    "row_floor_over_time",
]

MEMORY = "memory"
COMPUTE = "compute"

# The result files of an experiment, as the folder reader names them.
_RESULT_STEMS = frozenset({"result", "results"})
_RESULT_SUFFIXES = frozenset({".md", ".markdown"})


def is_result_file(path: str) -> bool:
    """Whether ``path`` names a result file the floors are read from (``result.md``,
    ``results.md``, ``Result.markdown``)."""
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0].lower() in _RESULT_STEMS and suffix_of(path) in _RESULT_SUFFIXES


# The words that name a ceiling: bytes at the copy bandwidth, or FLOPs at the matmul rate.
_MEMORY_WORDS = re.compile(
    r"\b(?:memory|mem|bytes?|dram|hbm|bandwidth|copy)\b|\bmemory[- ]bound\b|\bTB/s\b",
    re.IGNORECASE,
)
_COMPUTE_WORDS = re.compile(
    r"\b(?:compute|flops?|tensor(?:[- ]cores?)?|matmul|mma|math)\b|\bcompute[- ]bound\b"
    r"|\bT?FLOP/s\b",
    re.IGNORECASE,
)


def ceiling_of(text: str) -> str | None:
    """The ceiling ``text`` names as the floor's setter.

    Parameters
    ----------
    text : str
        A cell or header of a result table (``"memory"``, ``"FLOPs"``, ``"Floor (us,
        bytes)"``, ``"not memory-bound"``).

    Returns
    -------
    str or None
        :data:`MEMORY` where it names bytes, DRAM or bandwidth, :data:`COMPUTE` where it
        names FLOPs, tensor cores or the matmul rate; None where it names neither, both
        (``"balanced"``, ``"memory or compute"``), or only rules one out (``"not
        memory-bound"``, ``"no tensor cores"``): a ceiling ruled out sets no floor.
    """
    memory = first_stated(_MEMORY_WORDS, text) is not None
    compute = first_stated(_COMPUTE_WORDS, text) is not None
    if memory == compute:
        return None
    return MEMORY if memory else COMPUTE


def result_floors(
    file: TextFile,
    rows: Sequence[ResultRow] | None = None,
    warnings: list[str] | None = None,
) -> tuple[FloorRow, ...]:
    """The rows of the result ``file`` that state a roofline floor, in file order.

    Parameters
    ----------
    file : TextFile
        A result file as the readers read it.
    rows : sequence of ResultRow, optional
        The rows of its canonical Measurements table as the caller already read them
        (empty where it has none); None to read them here. A row whose values the parser
        refused is no row (the readers named it already).
    warnings : list of str, optional
        Appended to, as the metric readers append to theirs for the same cell and in the
        same words (:func:`~kernelopt.experiments.readers._metrics.read_floor_share`): a
        hand-written row's of-floor share of no sure reading (``1.234,5``) or at or below 0,
        each "not read". None: not said.

    Returns
    -------
    tuple of FloorRow
        The canonical rows timed on the device that give a floor; where the file has no
        canonical row, the rows of its hand-written tables that give a floor or the share
        of one, less the Measurements rows the canonical parser refused (named where it
        refused them, and not read: a hand edit such as an ``Of floor`` of ``0.0%``). Empty
        where none does.
    """
    if rows is None:
        rows = _canonical_rows(file, [])
    if rows:
        return tuple(_from_canonical(file, rows))
    not_read = refused_measurement_lines(file)
    said = [] if warnings is None else warnings
    found: list[FloorRow] = []
    for table in tables(file.lines, mask=code_mask(file.lines)):
        found += _from_table(file.path, table, said, not_read)
    return tuple(found)


# The file :func:`refused_measurement_lines` read last, and its lines: the metric readers
# ask for each row of a metric column, in each range of lines they describe (a devlog's
# entries), the floor readers once more. A weak reference keeps no file's text alive.
_LAST_REFUSED: list[tuple[weakref.ref[TextFile], frozenset[int]]] = []


def refused_measurement_lines(file: TextFile) -> frozenset[int]:
    """The 1-based lines of the Measurements rows of the result ``file`` whose values the
    canonical parser refuses (a hand-edited ``Of floor`` of ``0.0%``, a P20 above its P80).

    The readers name such a row where they refuse it ("the row was not read"); a reader
    of the file's tables by their headers leaves it out too, so that no share of the floor
    is read from a row said not to be.

    Parameters
    ----------
    file : TextFile
        A result file as the readers read it.

    Returns
    -------
    frozenset of int
        The lines; empty where the file has no canonical Measurements table, or none of
        its rows is refused.
    """
    # One look at the cache, kept locally: another thread may replace it meanwhile.
    cached = _LAST_REFUSED[0] if _LAST_REFUSED else None
    if cached is not None and cached[0]() is file:
        return cached[1]
    refused: list[FormatError] = []
    if "## Measurements" in file.text:
        _canonical_rows(file, refused)
    lines = frozenset(error.line for error in refused if error.line is not None)
    _LAST_REFUSED[:] = [(weakref.ref(file), lines)]
    return lines


def _canonical_rows(file: TextFile, refused: list[FormatError]) -> tuple[ResultRow, ...]:
    """The rows of a result's canonical Measurements table, as kernelopt wrote them; a row
    whose values the parser refuses is left out, and added to ``refused``."""
    try:
        return parse_result(file.text, path=file.path, refused=refused).rows
    except KernelOptError:
        refused.clear()
    try:
        return measurement_rows(file.text, path=file.path, refused=refused)
    except KernelOptError:
        refused.clear()
        return ()


def _row_lines(lines: Sequence[str], rows: Sequence[ResultRow]) -> list[int]:
    """The 1-based line of each of ``rows`` in the Measurements table of ``lines``: the
    first line not yet taken whose point, implementation and median are the row's (a row
    the parser refused is no row here, so lines are matched, not counted); 0 where none
    is."""
    start = next((i for i, line in enumerate(lines) if line.rstrip() == "## Measurements"), None)
    if start is None:
        return [0] * len(rows)
    candidates: list[tuple[int, list[str]]] = []
    for index in range(start + 1, len(lines)):
        if lines[index].startswith("## "):
            break
        if lines[index].lstrip().startswith("|"):
            candidates.append((index + 1, split_row(lines[index])))
    found = []
    taken: set[int] = set()
    for row in rows:
        line = next(
            (
                number
                for number, cells in candidates
                if number not in taken
                and len(cells) > 2
                and (cells[0], cells[1]) == (row.point, row.impl)
                and _same_number(cells[2], row.median)
            ),
            0,
        )
        taken.add(line)
        found.append(line)
    return found


def _same_number(cell: str, value: float) -> bool:
    try:
        return float(cell) == value
    except ValueError:
        return False


def _from_canonical(file: TextFile, rows: Sequence[ResultRow]) -> list[FloorRow]:
    found = []
    for row, line in zip(rows, _row_lines(file.lines, rows), strict=True):
        fraction = row.fraction_of_floor
        # A host-clock row times an interpreter around the kernel, not the kernel.
        if fraction is None or not _placed(fraction) or row.mode == "cpu":
            continue
        found.append(
            FloorRow(
                point=row.point,
                impl=row.impl,
                fraction=fraction,
                floor=row.floor,
                unit=row.unit,
                # Written by kernelopt.bench from the roofline (memory or compute), else None.
                ceiling=row.bound,
                source=SourceRef(path=file.path, line=line),
            )
        )
    return found


def _placed(fraction: float) -> bool:
    """Whether ``fraction`` places a row on the roofline: above zero, and finite (a floor
    of 1e308 over a time of 1e-308 places nothing)."""
    return math.isfinite(fraction) and fraction > 0


_TIME_HEADER = re.compile(r"^(?:median|mean|latency|time|avg|average)\b", re.IGNORECASE)
_CEILING_HEADER = re.compile(
    r"^(?:bound|bottleneck|ceiling|binding ceiling|limit(?:ed)? by|(?:floor )?set by)$",
    re.IGNORECASE,
)
_UNIT_HEADER = re.compile(r"^units?$", re.IGNORECASE)


@attrs.frozen(kw_only=True)
class _Columns:
    """Where a hand-written table keeps what a floor reading needs (None: not there)."""

    floor: int | None
    of_floor: int | None
    time: int | None
    ceiling: int | None
    unit: int | None
    floor_ceiling: str | None  # the ceiling the floor's header names


def _columns(header: Sequence[str]) -> _Columns | None:
    names = [strip_md(cell) for cell in header]
    of_floor = next((i for i, h in enumerate(names) if metric_of_header(h) == "floor_pct"), None)
    floor = next(
        (
            i
            for i, h in enumerate(names)
            if i != of_floor and "%" not in h and re.search(r"\bfloor\b", h, re.IGNORECASE)
        ),
        None,
    )
    if floor is None and of_floor is None:
        return None
    return _Columns(
        floor=floor,
        of_floor=of_floor,
        time=next((i for i, h in enumerate(names) if _TIME_HEADER.match(h)), None),
        ceiling=next((i for i, h in enumerate(names) if _CEILING_HEADER.match(h)), None),
        unit=next((i for i, h in enumerate(names) if _UNIT_HEADER.match(h)), None),
        floor_ceiling=None if floor is None else ceiling_of(names[floor]),
    )


def _value_and_unit(cell: str, header: str, row_unit: str) -> tuple[float | None, str]:
    """A time cell's number and unit: the cell's own unit, else its header's, else the
    row's Unit column. A bare ``s`` is seconds in such a cell (``1.5 s``)."""
    tokens = latency_tokens(cell, allow_seconds=True)
    if tokens:
        return tokens[0].value, tokens[0].unit
    return number(cell), unit_of_header(header) or row_unit


def _digits_range(cell: str, value: float) -> tuple[float, float]:
    """The least and the most the floor or time ``cell`` writes as ``value`` can be, half a
    unit in its last digit either side (``35.76``: 35.755 to 35.765); 0 to endless where
    the cell writes no number that reads as ``value``."""
    half_unit = written_half_unit(cell, value)
    if half_unit is None:
        return 0.0, math.inf
    return max(value - half_unit, 0.0), value + half_unit


def _row_unit(cells: Sequence[str], columns: _Columns) -> str:
    """The time unit the row's Unit column names (``us``), or ``""``."""
    if columns.unit is None:
        return ""
    return LATENCY_UNITS.get(cells[columns.unit].strip().lower(), "")


def _floor_reading(
    cells: Sequence[str], header: Sequence[str], columns: _Columns
) -> tuple[float | None, str, FloorOverTime | None]:
    """The row's floor, the floor's unit, and floor over the row's time where the row
    states both in one unit (None where the table has no such column or the row no such
    pair)."""
    row_unit = _row_unit(cells, columns)
    floor, floor_unit = (None, "")
    floor_cell = "" if columns.floor is None else cells[columns.floor]
    if columns.floor is not None:
        floor, floor_unit = _value_and_unit(floor_cell, header[columns.floor], row_unit)
    measured = _floor_over_time(cells, header, columns, floor, floor_cell, floor_unit, row_unit)
    return floor, floor_unit, measured


def row_floor_over_time(header: Sequence[str], cells: Sequence[str]) -> FloorOverTime | None:
    """A hand-written result row's floor over its time, where it states both in one unit.

    What the metric readers pass to
    :func:`~kernelopt.experiments.readers._metrics.table_metric` for an ``Of floor`` cell,
    so that its ``floor_pct`` is the share the floor readers carry for the same row.

    Parameters
    ----------
    header : sequence of str
        The table's header cells, as written.
    cells : sequence of str
        The row's cells, as written, one per header cell.

    Returns
    -------
    FloorOverTime or None
        Floor over time (0.783 for a floor of 35.7 us beside a time of 45.6 us), with the
        least and the most the two cells' digits allow (0.7809 to 0.7849: each half a unit
        in its last digit off), which an ``Of floor`` cell with a ``%`` is held to; None
        where the table has no floor or time column, or the row no floor and time in one
        unit.
    """
    names = [strip_md(cell) for cell in header]
    columns = _columns(names)
    if columns is None:
        return None
    return _floor_reading([strip_md(cell) for cell in cells], names, columns)[2]


def _hand_fraction(
    cells: Sequence[str],
    header: Sequence[str],
    columns: _Columns,
    where: SourceRef,
    warnings: list[str],
) -> tuple[float | None, float | None, str]:
    """A hand-written row's fraction of its floor, its floor and the floor's unit.

    The share is read by :func:`~kernelopt.experiments.readers._metrics.floor_share`, as the
    metric readers read ``floor_pct``: an of-floor cell with a ``%`` (``78.4%``) is a
    percent; otherwise a row with a floor and a time in one unit gives floor over time
    (through the shared :class:`ResultRow`, whose ``fraction_of_floor`` the canonical rows
    give too), whatever a bare ``7.8``, ``0.78`` or ``78`` beside them says; without them a
    bare share up to 1.5 is a fraction (``0.78``), above it a percent (``78``). A share of
    no sure reading, at or below 0 or endless is none, said in ``warnings`` as the metric
    readers say it (:func:`~kernelopt.experiments.readers._metrics.read_floor_share`), and
    so is a ``%`` cell the row's floor over its time contradicts beyond the rounding of the
    three cells' digits (the cell is still read, as written).
    """
    floor, floor_unit, measured = _floor_reading(cells, header, columns)
    of_floor = columns.of_floor
    cell, named = ("", "") if of_floor is None else (cells[of_floor], header[of_floor])
    share = read_floor_share(named, cell, where, warnings, measured)
    return (None if share is None else share.fraction), floor, floor_unit


def _floor_over_time(
    cells: Sequence[str],
    header: Sequence[str],
    columns: _Columns,
    floor: float | None,
    floor_cell: str,
    floor_unit: str,
    row_unit: str,
) -> FloorOverTime | None:
    """The row's floor over its time, where it states both in one time unit, or both
    without a unit (the table states none, so none sets them apart); else None. With it,
    the least and the most the floor and time cells' written digits allow."""
    if floor is None or floor <= 0 or columns.time is None:
        return None
    time_cell = cells[columns.time]
    time, time_unit = _value_and_unit(time_cell, header[columns.time], row_unit)
    if time is None or time <= 0 or time_unit != floor_unit:
        return None
    if floor_unit and floor_unit not in LATENCY_UNITS:
        return None
    fraction = _fraction_of_floor(floor, time, floor_unit)
    least_floor, most_floor = _digits_range(floor_cell, floor)
    least_time, most_time = _digits_range(time_cell, time)
    return FloorOverTime(
        fraction=fraction,
        low=least_floor / most_time,
        # A time whose digits are not known may have been near 0: no most.
        high=math.inf if least_time <= 0 else most_floor / least_time,
    )


def _fraction_of_floor(floor: float, time: float, unit: str) -> float:
    """Floor over time, as the canonical rows give it (through the shared
    :class:`ResultRow`) where it is a finite share above 0; else the bare quotient (0 or
    endless), for the share readers to refuse and name."""
    if not unit:
        return floor / time
    try:
        row = ResultRow(point="row", impl="row", median=time, unit=unit, floor=floor)
    except KernelOptError:
        return floor / time
    fraction = row.fraction_of_floor
    return floor / time if fraction is None else fraction


# What a hand-written floor row is called where its table gives it no name and no time.
_UNNAMED_ROW = "the kernel"


def _names_rows(header: Sequence[str], columns: _Columns) -> bool:
    """Whether the first column of a hand-written floor table names its rows (``Point``,
    ``Shape``, ``Config``): it holds none of the values a floor reading uses, and no
    metric (``| Floor | Time |`` opens with the floor, ``| DRAM % | Floor |`` with a
    share)."""
    values = (columns.floor, columns.of_floor, columns.time, columns.ceiling, columns.unit)
    return 0 not in values and metric_of_header(header[0]) is None


def _row_label(cells: Sequence[str], header: Sequence[str], columns: _Columns) -> str:
    """What a hand-written floor row is called: its first cell where the first column names
    the rows; else its time as written, with the unit its header or Unit column gives a
    bare number (``49.8 us``); else ``"the kernel"``. Never the floor: ``40 us at 80.3%
    of its roofline floor (40 us)`` reads as the time of a row at its floor."""
    if _names_rows(header, columns) and cells[0]:
        return cells[0]
    if columns.time is None or not cells[columns.time].strip():
        return _UNNAMED_ROW
    time = cells[columns.time].strip()
    if latency_tokens(time) or cycle_tokens(time):
        return time
    unit = unit_of_header(header[columns.time]) or _row_unit(cells, columns)
    return f"{time} {unit}".strip()


def _from_table(
    path: str, table: Table, warnings: list[str], not_read: Collection[int] = ()
) -> list[FloorRow]:
    """The floor rows of the hand-written ``table``, less those on the lines ``not_read``
    (the Measurements rows the canonical parser refused, named there)."""
    columns = _columns(table.header)
    if columns is None:
        return []
    header = [strip_md(cell) for cell in table.header]
    found = []
    for row in table.rows:
        if row.line in not_read:
            continue
        cells = [strip_md(cell) for cell in row.cells]
        where = SourceRef(path=path, line=row.line)
        fraction, floor, unit = _hand_fraction(cells, header, columns, where, warnings)
        if fraction is None or not _placed(fraction):
            continue
        ceiling = columns.floor_ceiling
        if columns.ceiling is not None:
            ceiling = ceiling_of(cells[columns.ceiling]) or ceiling
        if columns.floor is not None:
            ceiling = ceiling_of(cells[columns.floor]) or ceiling
        found.append(
            FloorRow(
                point=_row_label(cells, header, columns),
                impl="",
                fraction=fraction,
                floor=floor,
                unit=unit,
                ceiling=ceiling,
                source=SourceRef(path=path, line=row.line),
            )
        )
    return found
