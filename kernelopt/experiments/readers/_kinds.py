"""Markdown files in a log that are not a record of experiments, and how to tell them.

A log directory also holds what tools and people wrote *about* the effort: kernelopt's own
diagnosis (``# Plan: <log> — clean-context diagnosis``), a workload profile, agent rule
files (``CLAUDE.md``) and knowledge trees of catalog entries. Their words name profilers
("CUDA events, L2 flushed") and techniques ("re-run the inspector") without measuring or
recommending anything for this log, so the readers keep them out of the profiling lines
and the recommendations.

A kernel's devlog (``docs/kernels/<kernel>.md``) measures, but versions of the kernel, not
experiments: the tables ``kernelopt.workflow.update_devlog`` writes under its
``## Performance`` heading (:func:`is_performance_table`) are kept out of the experiments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import strip_md

__all__ = [
    "PERFORMANCE_HEADER",
    "PLAN_TITLE",
    "is_knowledge_entry",
    "is_performance_table",
    "is_plan_output",
    "is_rule_file",
    "is_workload_profile",
]

# The first line of the plan kernelopt.diagnose renders (kernelopt/diagnose/plan.py).
PLAN_TITLE = re.compile(r"^# Plan: .* — clean-context diagnosis\s*$")
# Instruction files agents and editors read: rules for the work, not results of it.
_RULE_FILES = frozenset(
    {"claude.md", "agents.md", "gemini.md", "copilot-instructions.md", "cursor.md"}
)
# The header of the tables kernelopt.workflow.update_devlog writes under a kernel devlog's
# ``## Performance`` heading (``kernelopt.workflow.devlog.COLUMNS``, folded to lower case):
# one table per version, one row per trial point. Written here, not imported: the workflow
# builds on the readers, and reading a log does not load it.
PERFORMANCE_HEADER = ("version", "point", "time", "tflop/s", "gb/s", "of floor", "gpu", "date")
# A catalog entry's typed fields, as every knowledge tree writes them under its title.
_ENTRY_FIELD = re.compile(r"^- (id|kind):\s*\S")


def is_plan_output(file: TextFile) -> bool:
    """Whether ``file`` is a plan ``kernelopt diagnose`` wrote (its title line says so)."""
    first = next((line for line in file.lines[:5] if line.strip()), "")
    return bool(PLAN_TITLE.match(first.strip()))


def is_rule_file(name: str) -> bool:
    """Whether a file name is an agent or editor rule file (``CLAUDE.md``, ``AGENTS.md``)."""
    return name.lower() in _RULE_FILES


def is_workload_profile(name: str) -> bool:
    """Whether a file name is a workload profile (``workload_profile.md``)."""
    return name.lower().startswith("workload_profile")


def is_knowledge_entry(file: TextFile) -> bool:
    """Whether ``file`` belongs to a knowledge tree: it lies under a ``knowledge/`` folder,
    or it is a catalog entry (``- id:`` and ``- kind:`` fields under its title)."""
    folders = file.path.lower().split("/")[:-1]
    if "knowledge" in folders:
        return True
    found = {m.group(1) for line in file.lines[:12] if (m := _ENTRY_FIELD.match(line))}
    return found == {"id", "kind"}


def is_performance_table(header: Sequence[str]) -> bool:
    """Whether a table's ``header`` cells are those of a kernel devlog's Performance table.

    Parameters
    ----------
    header : sequence of str
        The table's header cells, as written (``Version``, ``Point``, ``Time``, ...).

    Returns
    -------
    bool
        True for the header :data:`PERFORMANCE_HEADER` names, whatever its case, inline
        markdown or spacing: its rows are versions of a kernel timed at trial points, not
        experiments.
    """
    folded = tuple(" ".join(strip_md(cell).lower().split()) for cell in header)
    return folded == PERFORMANCE_HEADER
