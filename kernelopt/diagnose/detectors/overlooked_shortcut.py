"""9. Overlooked shortcut: the workload makes the kernel trivial in the common case.

``experiments/workload_profile.md`` is read through :func:`kernelopt.workload.read_profile_md`
and its shortcuts through :func:`kernelopt.workload.find_shortcuts` (size-1 axes, attention
over one key, a dominant shape, uniform lengths). A shortcut covering ``min_call_share`` of
the calls is overlooked when no experiment tried it and the kernel source never tests its
guard (``s_q == 1``, or the negated ``s_q > 1``, under the usual spellings of the axis).
"""

from __future__ import annotations

import os
from typing import Any

from kernelopt.diagnose.context import Context, quote
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import OverlookedShortcutParams
from kernelopt.diagnose.presence import present_in
from kernelopt.diagnose.source import guard_present

__all__ = ["detect"]

_PATHOLOGY = Pathology.OVERLOOKED_SHORTCUT


def _shortcuts(ctx: Context) -> tuple[list[Any], str | None]:
    """The workload's shortcuts, or a reason they could not be read."""
    path = ctx.log.workload_profile
    if path is None:
        return (
            [],
            "experiments/workload_profile.md (run `kernelopt inspect` on a call trace to write it)",
        )
    try:
        from kernelopt.workload import find_shortcuts, read_profile_md
    except ImportError as error:  # the workload inspector is optional for reading logs
        return [], f"kernelopt.workload ({error})"
    full = os.path.join(ctx.log.root, path)
    try:
        profile = read_profile_md(full)
        return list(find_shortcuts(profile)), None
    except Exception as error:  # a workload profile that cannot be read is reported, not fatal
        return [], f"a readable {path} ({error.__class__.__name__}: {quote(str(error), 100)})"


def _present(ctx: Context, shortcut: Any) -> tuple[str, str] | None:
    """Where the kernel (or an experiment) already handles ``shortcut``."""
    ids = set(getattr(shortcut, "catalog_ids", ()))
    for experiment in ctx.experiments:
        if ids & set(experiment.tags) and experiment.attempted:
            return f"{experiment.label}: {experiment.description}", str(experiment.source or "")
    kernels = ctx.kernels
    guards = [getattr(shortcut, "guard", "") or ""]
    axis = getattr(shortcut, "axis", None)
    if axis and "== 1" in guards[0]:
        guards.append(f"{axis} == 1")
    for guard in guards:
        if guard:
            hit = guard_present(guard, kernels)
            if hit is not None:
                return hit[2], f"{hit[0].path}:{hit[1]}"
    if not axis:
        for entry_id in ids:
            entry = ctx.entry(entry_id)
            if entry is not None:
                hit = present_in(entry, kernels)
                if hit is not None:
                    return hit[2], f"{hit[0].path}:{hit[1]}"
    return None


def detect(ctx: Context, params: OverlookedShortcutParams) -> Outcome:
    """Report common-case shortcuts the kernel has no special path for."""
    shortcuts, problem = _shortcuts(ctx)
    if problem is not None:
        return not_found(
            _PATHOLOGY, f"No workload profile could be read ({problem.split(' (')[0]}).", [problem]
        )
    common = [s for s in shortcuts if getattr(s, "call_share", 0.0) >= params.min_call_share]
    if not common:
        return not_found(
            _PATHOLOGY,
            f"The workload profile ({ctx.log.workload_profile}) shows no shortcut covering "
            f"{params.min_call_share:.0%} of calls (no size-1 axis, no dominant shape).",
        )
    kernels = ctx.kernels
    missing = [] if kernels else ["kernel source, to look for a special path"]
    overlooked = []
    handled = []
    for shortcut in common:
        where = _present(ctx, shortcut) if kernels or ctx.experiments else None
        if where is None:
            overlooked.append(shortcut)
        else:
            handled.append((shortcut, where))
    if not overlooked:
        first = handled[0]
        return not_found(
            _PATHOLOGY,
            f"The kernel already has a path for {getattr(first[0], 'guard', '') or first[0].rule} "
            f"({first[1][1]}).",
            missing,
        )
    lead = overlooked[0]
    guard = getattr(lead, "guard", "") or getattr(lead, "rule", "")
    paths = ", ".join(k.path for k in kernels[:2]) if kernels else "the kernel (source not found)"
    summary = (
        f"The workload profile shows {quote(lead.message, 150)} ({lead.call_share:.0%} of calls), "
        f"but no experiment "
        f"tried it and {paths} never tests `{guard}`."
    )
    evidence = [
        Evidence(quote=quote(f"{s.rule}: {s.message}"), source=ctx.log.workload_profile or "")
        for s in overlooked[:4]
    ]
    actions = []
    for shortcut in overlooked[:3]:
        catalog_id = shortcut.catalog_ids[0] if getattr(shortcut, "catalog_ids", ()) else None
        actions.append(
            ctx.action(
                f"Add a special path for `{getattr(shortcut, 'guard', '') or shortcut.rule}` "
                f"({shortcut.call_share:.0%} of calls): {quote(shortcut.message, 140)}",
                catalog_id,
            )
        )
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=(),
        severity=Severity.HIGH if lead.call_share >= 0.9 else Severity.MEDIUM,
        confidence=0.8 if kernels else 0.55,
        evidence=evidence,
        actions=actions,
        missing=missing,
    )
    return found(finding)
