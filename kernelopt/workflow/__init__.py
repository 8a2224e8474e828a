"""The optimization workflow's hand-offs as data, the kernel devlog, and the LEARN step.

The loop kernelopt serves passes three hand-offs between its roles, each with a fixed
markdown form; here each is a typed record that renders to exactly that form and parses
back from it (prose around it tolerated), so tools and agents exchange data, not prose:

- Profiler → Orchestrator: :class:`~kernelopt.bench.ProfileReport` (rendered by its own
  ``render()``), read by :func:`parse_profile` (every one of a text: :func:`parse_profiles`);
  built from benchmark rows by :func:`profile_from_rows`. What the reader leaves out of
  a hand-off it says in a :class:`ProfileWarning` (a ``UserWarning``), which filters
  name as ``kernelopt.workflow.ProfileWarning``.
- Orchestrator → Designer: :class:`OptimizationTask` / :func:`parse_task`, whose
  :class:`Change` items link catalog entries by id (``validate(catalog)``). Prose under a
  list section that no item holds is said in a :class:`HandoffWarning`, of which
  ``ProfileWarning`` is one.
- Designer → Orchestrator: :class:`NewVersion` / :func:`parse_version`.

The orchestrator starts its agents with :class:`ProfilerPrompt` and
:class:`DesignerPrompt` (the launch templates). The devlog's ``## Performance`` section
is updated in place by :func:`update_devlog` from :class:`PerfRow` records. EVALUATE
(:func:`evaluate`) checks a :class:`Target` against benchmark rows. LEARN (:func:`learn`)
turns a judged before/after measurement (:class:`Observation`) into a knowledge-base
update by the protocol.

Importing this package imports neither torch, triton nor numpy, and no name loads before
it is used: ``from kernelopt.workflow import parse_task`` reads no benchmark code.
"""

import importlib
import sys
import types
import typing

if typing.TYPE_CHECKING:  # pragma: no cover - for type checkers; at run time names load on use
    from kernelopt.bench.report import ProfileReport
    from kernelopt.workflow._markdown import HandoffWarning
    from kernelopt.workflow.changes import (
        KNOWLEDGE_BASE,
        CatalogEntry,
        Change,
        knowledge_link,
        parse_change,
    )
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
    from kernelopt.workflow.profile import (
        ProfileWarning,
        parse_point,
        parse_profile,
        parse_profiles,
    )
    from kernelopt.workflow.prompts import (
        DESIGN_LANGUAGES,
        DesignerPrompt,
        ProfilerPrompt,
        parse_designer_prompt,
        parse_profiler_prompt,
    )
    from kernelopt.workflow.target import (
        Check,
        Criterion,
        Evaluation,
        NextStep,
        PointResult,
        Status,
        Target,
        evaluate,
    )
    from kernelopt.workflow.task import Constraints, OptimizationTask, parse_task
    from kernelopt.workflow.version import NewVersion, TrialCheck, parse_version

# Where each public name lives. A name's module loads on its first use, so that reading a
# hand-off does not load benchmark rows, the catalog and the diagnosis rules.
_HOMES: dict[str, str] = {
    name: module
    for module, names in {
        "kernelopt.bench.report": ("ProfileReport",),
        "kernelopt.workflow.changes": (
            "KNOWLEDGE_BASE",
            "CatalogEntry",
            "Change",
            "knowledge_link",
            "parse_change",
        ),
        "kernelopt.workflow.devlog": (
            "DevlogUpdate",
            "PerfRow",
            "parse_performance",
            "perf_row_from_profile",
            "perf_rows_from_bench",
            "read_performance",
            "update_devlog",
        ),
        "kernelopt.workflow.from_rows": ("profile_from_rows",),
        "kernelopt.workflow.handoff": (
            "Handoff",
            "parse_handoff",
        ),
        "kernelopt.workflow.jsonio": (
            "from_dict",
            "to_dict",
        ),
        "kernelopt.workflow.learn": (
            "Action",
            "LearnOutcome",
            "derive_anti_pattern",
            "evidence_row",
            "learn",
        ),
        "kernelopt.workflow.observe": (
            "Observation",
            "observe_comparison",
            "observe_files",
            "observe_rows",
            "select_row",
        ),
        "kernelopt.workflow._markdown": ("HandoffWarning",),
        "kernelopt.workflow.profile": (
            "ProfileWarning",
            "parse_point",
            "parse_profile",
            "parse_profiles",
        ),
        "kernelopt.workflow.prompts": (
            "DESIGN_LANGUAGES",
            "DesignerPrompt",
            "ProfilerPrompt",
            "parse_designer_prompt",
            "parse_profiler_prompt",
        ),
        "kernelopt.workflow.target": (
            "Check",
            "Criterion",
            "Evaluation",
            "NextStep",
            "PointResult",
            "Status",
            "Target",
            "evaluate",
        ),
        "kernelopt.workflow.task": (
            "Constraints",
            "OptimizationTask",
            "parse_task",
        ),
        "kernelopt.workflow.version": (
            "NewVersion",
            "TrialCheck",
            "parse_version",
        ),
    }.items()
    for name in names
}

__all__ = [
    "DESIGN_LANGUAGES",
    "KNOWLEDGE_BASE",
    "Action",
    "CatalogEntry",
    "Change",
    "Check",
    "Constraints",
    "Criterion",
    "DesignerPrompt",
    "DevlogUpdate",
    "Evaluation",
    "Handoff",
    "HandoffWarning",
    "LearnOutcome",
    "NewVersion",
    "NextStep",
    "Observation",
    "OptimizationTask",
    "PerfRow",
    "PointResult",
    "ProfileReport",
    "ProfileWarning",
    "ProfilerPrompt",
    "Status",
    "Target",
    "TrialCheck",
    "derive_anti_pattern",
    "evaluate",
    "evidence_row",
    "from_dict",
    "knowledge_link",
    "learn",
    "observe_comparison",
    "observe_files",
    "observe_rows",
    "parse_change",
    "parse_designer_prompt",
    "parse_handoff",
    "parse_performance",
    "parse_point",
    "parse_profile",
    "parse_profiler_prompt",
    "parse_profiles",
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


def __getattr__(name: str) -> typing.Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups find it without coming here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """This package, keeping each public name bound to its object."""

    def __setattr__(self, name: str, value: typing.Any) -> None:
        # Importing the submodule kernelopt.workflow.learn binds it here under the name of
        # the function learn, which it would then hide; the function keeps the name.
        if name in _HOMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
