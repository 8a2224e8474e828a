"""Roofline floors stated in a log's results: a timed row's floor and the share of it reached.

``kernelopt.bench`` writes them into result.md's Measurements table (``Floor``, ``Of floor``):
those rows are read with :func:`kernelopt.experiments.canonical.parse_result` (or, in a
result edited by hand, :func:`~kernelopt.experiments.canonical.measurement_rows`) into
:class:`~kernelopt.experiments.ResultRow`, whose ``floor`` and ``fraction_of_floor`` are
the numbers used here: the canonical parser, not a second reading of its table. A result
table written by hand is read by its headers: a floor column (``Floor``, ``Floor (us)``),
an of-floor column (``Of floor``, ``% of floor``) or both, beside the time.

Which ceiling sets the floor (bytes or FLOPs) is what makes a floor a bound. The canonical
row does not say it; a hand-written row may, in a column of its own (``Bound``,
``Bottleneck``, ``Ceiling``, ``Floor set by``: ``memory``, ``bytes``, ``compute``,
``FLOPs``) or in the floor's header (``Memory floor``, ``Floor (FLOPs)``).

The files are those the log readers read as each experiment's result (its ``sources``),
under the log's root, bounded as they are: a file missing or grown past the readers' byte
limit since is passed over.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence

import attrs

from kernelopt._errors import KernelOptError
from kernelopt._fileio import read_text_and_encoding
from kernelopt._table_cells import split_row
from kernelopt.experiments.canonical import measurement_rows, parse_result
from kernelopt.experiments.log import Experiment, ExperimentLog, SourceRef
from kernelopt.experiments.readers import ReadLimits
from kernelopt.experiments.readers._markdown import Table, code_mask, strip_md, tables
from kernelopt.experiments.readers._metrics import metric_of_header
from kernelopt.experiments.readers._values import (
    LATENCY_UNITS,
    first_stated,
    latency_tokens,
    number,
    unit_of_header,
)
from kernelopt.experiments.records import ResultRow

__all__ = ["COMPUTE", "MEMORY", "FloorReading", "ceiling_of", "floors_of", "latest_floors"]

MEMORY = "memory"
COMPUTE = "compute"

# The result files of an experiment folder, as the folder reader names them.
_RESULT_STEMS = frozenset({"result", "results"})
_MAX_BYTES = ReadLimits().max_file_bytes


@attrs.frozen(kw_only=True)
class FloorReading:
    """One timed row of a result with its roofline floor.

    Parameters
    ----------
    experiment : Experiment
        The experiment whose result holds the row.
    point, impl : str
        The trial point and the implementation timed (``impl`` may be empty in a
        hand-written table).
    fraction : float
        Floor over the row's time: 1.0 is at the roofline, 0.784 is 78.4 % of it.
    floor : float, optional
        The floor itself, in ``unit``, where the row gives it.
    unit : str
        The floor's unit (``"us"``), or ``""``.
    ceiling : {"memory", "compute"} or None
        Which ceiling sets the floor, where the row says so (bytes: memory, FLOPs:
        compute); None where it does not.
    source : SourceRef
        The row's file and line.
    """

    experiment: Experiment
    point: str
    impl: str
    fraction: float
    floor: float | None
    unit: str
    ceiling: str | None
    source: SourceRef

    def text(self) -> str:
        """The row in words: ``"exp 53: b=32 s=1 h=16 seesaw at 78.4% of its roofline floor
        (35.76 us)"``, with the ceiling where the row names it."""
        what = " ".join(part for part in (self.point, self.impl) if part)
        floor = f"{self.floor:g} {self.unit}".strip() if self.floor is not None else ""
        setter = f"set by {self.ceiling}" if self.ceiling else ""
        aside = ", ".join(part for part in (floor, setter) if part)
        return f"{self.experiment.label}: {what} at {self.fraction:.1%} of its roofline floor" + (
            f" ({aside})" if aside else ""
        )


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


def _result_paths(experiment: Experiment) -> list[str]:
    """The result files the readers read for ``experiment``, relative to the log root."""
    paths = [ref.path for ref in experiment.sources]
    return [
        path
        for path in dict.fromkeys(paths)
        if path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower() in _RESULT_STEMS
        and path.lower().endswith((".md", ".markdown"))
    ]


def _read(root: str, path: str) -> str | None:
    """The text of ``path`` under ``root``, or None when it is gone, no regular file, over
    the readers' byte limit or not text (the readers already reported such a file)."""
    full = os.path.join(root, path)
    try:
        status = os.stat(full)
        if not stat.S_ISREG(status.st_mode) or status.st_size > _MAX_BYTES:
            return None
        # Told by its byte-order mark, as the readers and writers tell it.
        text, _encoding = read_text_and_encoding(full, what="a result file")
    except (OSError, KernelOptError):
        return None
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _canonical_rows(text: str, path: str) -> tuple[ResultRow, ...]:
    """The rows of a result's canonical Measurements table, as kernelopt wrote them; a row
    whose values the parser refuses is left out (the readers named it already)."""
    try:
        return parse_result(text, path=path, refused=[]).rows
    except KernelOptError:
        pass
    try:
        return measurement_rows(text, path=path, refused=[])
    except KernelOptError:
        return ()


def _row_lines(text: str, rows: Sequence[ResultRow]) -> list[int]:
    """The 1-based line of each of ``rows`` in the Measurements table of ``text``: the
    first line not yet taken whose point, implementation and median are the row's (a row
    the parser refused is no row here, so lines are matched, not counted); 0 where none
    is."""
    lines = text.split("\n")
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


def _from_canonical(
    experiment: Experiment, path: str, text: str, rows: Sequence[ResultRow]
) -> list[FloorReading]:
    found = []
    for row, line in zip(rows, _row_lines(text, rows), strict=True):
        fraction = row.fraction_of_floor
        # A host-clock row times an interpreter around the kernel, not the kernel.
        if fraction is None or fraction <= 0 or row.mode == "cpu":
            continue
        found.append(
            FloorReading(
                experiment=experiment,
                point=row.point,
                impl=row.impl,
                fraction=fraction,
                floor=row.floor,
                unit=row.unit,
                ceiling=None,
                source=SourceRef(path=path, line=line),
            )
        )
    return found


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
    row's Unit column."""
    tokens = latency_tokens(cell)
    if tokens:
        return tokens[0].value, tokens[0].unit
    return number(cell), unit_of_header(header) or row_unit


def _hand_fraction(
    cells: Sequence[str], header: Sequence[str], columns: _Columns
) -> tuple[float | None, float | None, str]:
    """A hand-written row's fraction of its floor, its floor and the floor's unit.

    An of-floor cell with a ``%`` (``78.4%``) is a percent. Otherwise a row with a floor
    and a time in one unit gives floor over time (through the shared :class:`ResultRow`,
    whose ``fraction_of_floor`` the canonical rows give too): a bare ``0.78`` or ``78`` is
    read the way the row's own numbers say. Without them, a bare share up to
    :data:`_LARGEST_FRACTION` is a fraction (``0.78``), above it a percent (``78``).
    """
    row_unit = ""
    if columns.unit is not None:
        row_unit = LATENCY_UNITS.get(cells[columns.unit].strip().lower(), "")
    floor, floor_unit = (None, "")
    if columns.floor is not None:
        floor, floor_unit = _value_and_unit(cells[columns.floor], header[columns.floor], row_unit)
    cell = cells[columns.of_floor] if columns.of_floor is not None else ""
    share = number(cell.strip().rstrip("% "))
    if share is not None and share <= 0:
        share = None
    if share is not None and "%" in cell:
        return share / 100.0, floor, floor_unit
    measured = _floor_over_time(cells, header, columns, floor, floor_unit, row_unit)
    if measured is not None:
        return measured, floor, floor_unit
    if share is None:
        return None, floor, floor_unit
    return (share if share <= _LARGEST_FRACTION else share / 100.0), floor, floor_unit


# A bare of-floor share up to this is a fraction (0.78, or 1.2 past a loose floor), above
# it a percent (78): a kernel runs near its floor or under it, never at 150 % of it.
_LARGEST_FRACTION = 1.5


def _floor_over_time(
    cells: Sequence[str],
    header: Sequence[str],
    columns: _Columns,
    floor: float | None,
    floor_unit: str,
    row_unit: str,
) -> float | None:
    """The row's floor over its time, where it states both in one time unit, or both
    without a unit (the table states none, so none sets them apart); else None."""
    if floor is None or floor <= 0 or columns.time is None:
        return None
    time, time_unit = _value_and_unit(cells[columns.time], header[columns.time], row_unit)
    if time is None or time <= 0 or time_unit != floor_unit:
        return None
    if not floor_unit:
        return floor / time
    if floor_unit not in LATENCY_UNITS:
        return None
    try:
        row = ResultRow(point="row", impl="row", median=time, unit=floor_unit, floor=floor)
    except KernelOptError:
        return None
    return row.fraction_of_floor


def _from_table(experiment: Experiment, path: str, table: Table) -> list[FloorReading]:
    columns = _columns(table.header)
    if columns is None:
        return []
    header = [strip_md(cell) for cell in table.header]
    found = []
    for row in table.rows:
        cells = [strip_md(cell) for cell in row.cells]
        fraction, floor, unit = _hand_fraction(cells, header, columns)
        if fraction is None or fraction <= 0:
            continue
        ceiling = columns.floor_ceiling
        if columns.ceiling is not None:
            ceiling = ceiling_of(cells[columns.ceiling]) or ceiling
        if columns.floor is not None:
            ceiling = ceiling_of(cells[columns.floor]) or ceiling
        found.append(
            FloorReading(
                experiment=experiment,
                point=cells[0],
                impl="",
                fraction=fraction,
                floor=floor,
                unit=unit,
                ceiling=ceiling,
                source=SourceRef(path=path, line=row.line),
            )
        )
    return found


def floors_of(root: str, experiment: Experiment) -> list[FloorReading]:
    """The rows with a roofline floor in ``experiment``'s result files, in file order.

    Parameters
    ----------
    root : str
        The log directory (``ExperimentLog.root``).
    experiment : Experiment
        An experiment of the log; its ``sources`` name the files its result was read from.

    Returns
    -------
    list of FloorReading
        Empty where no result file of it holds a floor, or none can be read again.
    """
    found: list[FloorReading] = []
    for path in _result_paths(experiment):
        text = _read(root, path)
        if text is None:
            continue
        rows = _canonical_rows(text, path)
        if rows:
            found += _from_canonical(experiment, path, text, rows)
            continue
        lines = text.split("\n")
        for table in tables(lines, mask=code_mask(lines)):
            found += _from_table(experiment, path, table)
    return found


def latest_floors(log: ExperimentLog, experiments: Sequence[Experiment]) -> list[FloorReading]:
    """The floor rows of the latest of ``experiments`` whose result states any: the kernel
    as the log last placed it on the roofline (an older floor is an older kernel's).

    Parameters
    ----------
    log : ExperimentLog
        The log, for its root.
    experiments : sequence of Experiment
        The experiments to look through, in log order (under ``until``, those before the
        cut).

    Returns
    -------
    list of FloorReading
        That experiment's rows with a floor, its headline row first as written; empty
        where no result states a floor.
    """
    for experiment in reversed(experiments):
        found = floors_of(log.root, experiment)
        if found:
            return found
    return []
