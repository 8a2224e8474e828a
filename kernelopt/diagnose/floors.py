"""Roofline floors stated in a log's results: a timed row's floor and the share of it reached.

The log readers read them with each result (``kernelopt.bench``'s Measurements table with
its ``Floor`` and ``Of floor`` columns, or a hand-written table with a floor column, an
of-floor column or both, and maybe a ``Bound`` column or a floor header naming the ceiling:
see :mod:`kernelopt.experiments.readers.floors`) and carry them on the record as
:attr:`Experiment.floors <kernelopt.experiments.Experiment.floors>`. This module places
them in the log: the rows of the latest result that states any, each with its experiment.
No file is read here.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from kernelopt.experiments.log import Experiment, ExperimentLog, FloorRow
from kernelopt.experiments.readers.floors import COMPUTE, MEMORY, ceiling_of

__all__ = ["COMPUTE", "MEMORY", "FloorReading", "ceiling_of", "floors_of", "latest_floors"]


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
