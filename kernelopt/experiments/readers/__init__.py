"""Tolerant readers of optimization logs: the seed layout and the real variants.

:func:`read_log` is the entry point; the modules here each read one layout (summary
tables, experiment folders, devlogs, step logs, notes, machine histories) into drafts that
:mod:`~kernelopt.experiments.readers._assemble` merges into one
:class:`~kernelopt.experiments.log.ExperimentLog`.
"""

from kernelopt.experiments.readers._files import ReadLimits
from kernelopt.experiments.readers._metrics import bottleneck_of, stated_bottleneck
from kernelopt.experiments.readers._values import knobs_of
from kernelopt.experiments.readers.kernels import is_source, language_of
from kernelopt.experiments.readers.read import read_log

__all__ = [
    "ReadLimits",
    "bottleneck_of",
    "is_source",
    "knobs_of",
    "language_of",
    "read_log",
    "stated_bottleneck",
]
