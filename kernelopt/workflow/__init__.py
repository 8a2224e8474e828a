"""The optimization workflow's hand-offs as data, the kernel devlog, and the LEARN step.

The loop kernelopt serves passes three hand-offs between its roles, each with a fixed
markdown form; here each is a typed record that renders to exactly that form and parses
back from it (prose around it tolerated), so tools and agents exchange data, not prose:

- Profiler → Orchestrator: :class:`~kernelopt.bench.ProfileReport` (rendered by its own
  ``render()``), read by :func:`parse_profile`; built from benchmark rows by
  :func:`profile_from_rows`.
- Orchestrator → Designer: :class:`OptimizationTask` / :func:`parse_task`, whose
  :class:`Change` items link catalog entries by id (``validate(catalog)``).
- Designer → Orchestrator: :class:`NewVersion` / :func:`parse_version`.

The devlog's ``## Performance`` section is updated in place by :func:`update_devlog`
from :class:`PerfRow` records. LEARN (:func:`learn`) turns a judged before/after
measurement (:class:`Observation`) into a knowledge-base update by the protocol.

Importing this package imports neither torch, triton nor numpy.
"""

from __future__ import annotations

from kernelopt.bench.report import ProfileReport
from kernelopt.workflow.changes import KNOWLEDGE_BASE, Change, knowledge_link, parse_change
from kernelopt.workflow.devlog import (
    DevlogUpdate,
    PerfRow,
    parse_performance,
    perf_row_from_profile,
    perf_rows_from_bench,
    read_performance,
    update_devlog,
)
from kernelopt.workflow.from_rows import profile_from_rows
from kernelopt.workflow.handoff import Handoff, parse_handoff
from kernelopt.workflow.jsonio import from_dict, to_dict
from kernelopt.workflow.learn import (
    Action,
    LearnOutcome,
    derive_anti_pattern,
    evidence_row,
    learn,
)
from kernelopt.workflow.observe import (
    Observation,
    observe_comparison,
    observe_files,
    observe_rows,
    select_row,
)
from kernelopt.workflow.profile import parse_point, parse_profile
from kernelopt.workflow.task import Constraints, OptimizationTask, parse_task
from kernelopt.workflow.version import NewVersion, TrialCheck, parse_version

__all__ = [
    "KNOWLEDGE_BASE",
    "Action",
    "Change",
    "Constraints",
    "DevlogUpdate",
    "Handoff",
    "LearnOutcome",
    "NewVersion",
    "Observation",
    "OptimizationTask",
    "PerfRow",
    "ProfileReport",
    "TrialCheck",
    "derive_anti_pattern",
    "evidence_row",
    "from_dict",
    "knowledge_link",
    "learn",
    "observe_comparison",
    "observe_files",
    "observe_rows",
    "parse_change",
    "parse_handoff",
    "parse_performance",
    "parse_point",
    "parse_profile",
    "parse_task",
    "parse_version",
    "perf_row_from_profile",
    "perf_rows_from_bench",
    "profile_from_rows",
    "read_performance",
    "select_row",
    "to_dict",
    "update_devlog",
]
