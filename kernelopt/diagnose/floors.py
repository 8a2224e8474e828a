"""Roofline floors stated in a log's results: a timed row's floor and the share of it reached.

The log readers read them with each result (``kernelopt.bench``'s Measurements table with
its ``Floor`` and ``Of floor`` columns, or a hand-written table with a floor column, an
of-floor column or both, and maybe a ``Bound`` column or a floor header naming the ceiling:
see :mod:`kernelopt.experiments.readers.floors`) and carry them on the record as
:attr:`Experiment.floors <kernelopt.experiments.Experiment.floors>`. This module places
them in the log: the rows of the latest result that states any, each with its experiment.

The readers leave out a row timed on the host clock (``Mode`` ``cpu``: a CPU or the
Triton interpreter), whose floor places no GPU kernel. :func:`host_clock_floors` reads
those back from the experiments' result files, so that an item saying no floor places
the kernel can say which floors it set aside, and why.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import attrs

from kernelopt._errors import KernelOptError
from kernelopt.experiments.canonical import measurement_rows, parse_result
from kernelopt.experiments.log import Experiment, ExperimentLog, FloorRow
from kernelopt.experiments.readers.floors import COMPUTE, MEMORY, ceiling_of
from kernelopt.experiments.records import ResultRow

__all__ = [
    "COMPUTE",
    "MEMORY",
    "FloorReading",
    "HostClockFloors",
    "ceiling_of",
    "floors_of",
    "host_clock_floors",
    "latest_floors",
    "result_rows",
]

# A result file larger than this is no result.md kernelopt.bench wrote: not read again.
_MAX_RESULT_BYTES = 1 << 20


@attrs.frozen(kw_only=True)
class FloorReading(FloorRow):
    """One timed row of a result with its roofline floor, and the experiment it is of.

    Parameters
    ----------
    experiment : Experiment
        The experiment whose result holds the row.
    point, impl, fraction, floor, unit, ceiling, source
        The row as the log readers read it: see
        :class:`~kernelopt.experiments.FloorRow` (``fraction`` is floor over the row's
        time, 0.784 being 78.4 % of the roofline).
    """

    experiment: Experiment

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


def floors_of(experiment: Experiment) -> list[FloorReading]:
    """The rows with a roofline floor in ``experiment``'s result files, in file order.

    Parameters
    ----------
    experiment : Experiment
        An experiment of the log; its :attr:`~kernelopt.experiments.Experiment.floors`
        are the rows the readers read from its results.

    Returns
    -------
    list of FloorReading
        Empty where no result of it holds a floor.
    """
    return [
        FloorReading(experiment=experiment, **attrs.asdict(row, recurse=False))
        for row in experiment.floors
    ]


def latest_floors(
    log: ExperimentLog, experiments: Sequence[Experiment] | None = None
) -> list[FloorReading]:
    """The floor rows of the latest of ``experiments`` whose result states any: the kernel
    as the log last placed it on the roofline (an older floor is an older kernel's).

    Parameters
    ----------
    log : ExperimentLog
        The log; its primary series is looked through when ``experiments`` is None.
    experiments : sequence of Experiment, optional
        The experiments to look through, in log order (under ``until``, those before the
        cut).

    Returns
    -------
    list of FloorReading
        That experiment's rows with a floor, its headline row first as written; empty
        where no result states a floor.
    """
    for experiment in reversed(log.experiments if experiments is None else experiments):
        found = floors_of(experiment)
        if found:
            return found
    return []


@attrs.frozen(kw_only=True)
class HostClockFloors:
    """Roofline floors the log's results state on rows timed on the host clock.

    Parameters
    ----------
    results : tuple of str
        The result files (relative to the log root) with such a row, in log order.
    first : str
        Where the first one is: ``"experiments/exp_1/result.md:14"``.
    bounded : bool
        Whether a row also names the ceiling that sets its floor (a ``Bound`` cell).
    """

    results: tuple[str, ...]
    first: str
    bounded: bool


def _rows_of(text: str) -> tuple[ResultRow, ...]:
    """The Measurements rows of a result's text, canonical or edited by hand; none where
    neither reading takes it."""
    try:
        return tuple(parse_result(text).rows)
    except KernelOptError:
        pass
    try:
        return tuple(measurement_rows(text))
    except KernelOptError:
        return ()


def result_rows(root: str, experiment: Experiment, *, at_least: int = 1) -> tuple[ResultRow, ...]:
    """The Measurements rows of ``experiment``'s first ``result.md`` that has any, in file
    order (its headline row first); empty where none is read.

    Parameters
    ----------
    root : str
        The log directory the experiment's source paths are relative to.
    experiment : Experiment
        An experiment of the log; its ``result.md`` sources are read.
    at_least : int
        Read a file only where its Measurements table has this many rows or more (its
        lines are counted before anything is parsed: most results of a long log time one
        point, and a caller after the other points need not parse them). Keyword-only.

    Returns
    -------
    tuple of ResultRow
        The rows as written, canonical or edited by hand.
    """
    for path in dict.fromkeys(s.path for s in experiment.sources):
        text = _result_text(root, path)
        if text is None or (at_least > 1 and _table_lines(text) < at_least + 2):
            continue
        rows = _rows_of(text)
        if rows:
            return rows
    return ()


def _table_lines(text: str) -> int:
    """How many table lines (``|`` first) follow ``## Measurements`` in ``text``, up to
    the next heading: its header and separator, then one per row."""
    start = text.find("## Measurements")
    if start < 0:
        return 0
    count = 0
    for line in text[start:].split("\n")[1:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            break
        count += stripped.startswith("|")
    return count


def _result_text(root: str, path: str) -> str | None:
    """The text of ``root/path`` where ``path`` is a ``result.md`` the readers take (not
    over their size limit, readable); None otherwise."""
    if os.path.basename(path) != "result.md":
        return None
    full = os.path.join(root, path)
    try:
        if os.path.getsize(full) > _MAX_RESULT_BYTES:
            return None
        with open(full, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _measurement_line(text: str) -> int:
    """The 1-based line of the ``## Measurements`` header in ``text`` (1 where none is)."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.rstrip() == "## Measurements":
            return number
    return 1


def host_clock_floors(root: str, experiments: Sequence[Experiment]) -> HostClockFloors | None:
    """The roofline floors of host-clock rows (``Mode`` ``cpu``) in the result files of
    ``experiments``: the rows the floor readers leave out, since a host clock times an
    interpreter around the kernel, not the kernel.

    Parameters
    ----------
    root : str
        The log directory the experiments' source paths are relative to.
    experiments : sequence of Experiment
        The experiments whose ``result.md`` files (their sources) are read.

    Returns
    -------
    HostClockFloors or None
        Where such floors are, or None where no result states one.
    """
    found: list[str] = []
    first = ""
    bounded = False
    for experiment in experiments:
        for path in dict.fromkeys(s.path for s in experiment.sources):
            text = None if path in found else _result_text(root, path)
            if text is None:
                continue
            rows = [r for r in _rows_of(text) if r.mode == "cpu" and r.floor is not None]
            if not rows:
                continue
            found.append(path)
            first = first or f"{path}:{_measurement_line(text)}"
            bounded = bounded or any(r.bound for r in rows)
    if not found:
        return None
    return HostClockFloors(results=tuple(found), first=first, bounded=bounded)
