"""8. Buffer persistence: outputs and workspaces allocated on every call.

The host launcher of the current kernel is parsed (``ast`` for Python, regex for C++/CUDA)
for ``torch.empty``/``zeros``/``ones``/``full``/``*_like``/``new_*`` calls that run on every
call: not behind an ``is None`` check, not stored into a cache, in a file with no
persistent-buffer pool. A launcher that takes ``out``/``workspace`` arguments is read the
same way: an unused ``out=None``, or scratch allocated beside a real ``out``, still
allocates every call. Behind an ``is None`` check on a parameter, what the caller receives
does not count (``if out is None: out = torch.empty(...)``, returned): scratch the result
does not return does (``if partials is None: pg = torch.empty(...)``), since every call
that leaves the parameter out allocates it. Functions off every launch path (no kernel
launched, none called or calling one) that are named as a reference or compute in float64
are references the kernel is checked against, not the launcher: their allocations do not
count.
An allocator handed to ``triton.set_allocator`` (a lambda or a function, at module level
or anywhere) counts too: Triton calls it at every launch of a kernel that needs global
scratch, so a ``torch.empty`` in it allocates per launch. For the fixed shapes a decode
loop repeats, those buffers can be allocated once and reused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kernelopt._words import and_list, count_text
from kernelopt.diagnose.context import HOST_LAUNCHER, Context, quote
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import BufferPersistenceParams
from kernelopt.diagnose.source import (
    Allocation,
    allocated_when_omitted,
    allocations,
    device_only,
    persistent_buffers,
)

__all__ = ["detect"]

_PATHOLOGY = Pathology.BUFFER_PERSISTENCE
# Allocators whose buffers start from a value (torch.zeros, x.new_full, at::ones, ...).
_FILLED = re.compile(r"(?:zeros|ones|full)")


def _defaults(per_call: Sequence[Allocation]) -> list[str]:
    """The parameters whose defaults are allocated per call, in the order first met."""
    return list(dict.fromkeys(a.default_of for a in per_call if a.default_of))


def _defaults_text(per_call: Sequence[Allocation]) -> str:
    """``"; ln_bwd.py:60, 61 allocate the default of partials= on every call that leaves
    it out"``, or ``""`` where no allocation is a parameter's default: scratch the
    launcher makes when the caller leaves the parameter out."""
    places = [a for a in per_call if a.default_of]
    if not places:
        return ""
    names = _defaults(per_call)
    by_path: dict[str, list[str]] = {}
    for place in places:
        by_path.setdefault(place.path, []).append(str(place.line))
    where = ", ".join(f"{path}:{', '.join(lines[:4])}" for path, lines in by_path.items())
    verb = "allocates" if len(places) == 1 else "allocate"
    what = "default" if len(names) == 1 else "defaults"
    them = "it" if len(names) == 1 else "them"
    listed = ", ".join(f"{name}=" for name in names)
    return f"; {where} {verb} the {what} of {listed} on every call that leaves {them} out"


def _pass_defaults_text(per_call: Sequence[Allocation]) -> str:
    """The first words of the action where scratch is a parameter's default: have the
    callers pass it, or keep the default across calls."""
    names = ", ".join(f"{p}=" for p in _defaults(per_call))
    if not names:
        return ""
    return (
        f"Pass {names} from every caller (allocated once per shape and kept), or keep the "
        "default across calls instead of allocating it each time. "
    )


def detect(ctx: Context, params: BufferPersistenceParams) -> Outcome:
    """Report per-call allocations in the kernel's host code."""
    kernels = ctx.kernels
    tried = [e for e in ctx.experiments if "buffer-persistence" in e.tags]
    if not kernels:
        return not_found(
            _PATHOLOGY,
            "No kernel source was found, so the launcher's allocations could not be checked.",
            ["kernel source (CLAUDE.md kernel path or exp_N snapshot)"],
        )
    found_allocations = allocations(kernels)
    if len(found_allocations) < params.min_allocations:
        paths = ", ".join(k.path for k in kernels[:2])
        kept = persistent_buffers(kernels)
        if kept is not None:
            source, line, text = kept
            omitted = allocated_when_omitted(source, line)
            if omitted:
                # Both halves: a caller that passes the buffers gets no allocation, one
                # that leaves them out gets fresh ones on every call.
                names = and_list([f"{name}=" for name in omitted])
                return not_found(
                    _PATHOLOGY,
                    f"The launcher in {paths} takes {names} from its caller and allocates "
                    f"{'it' if len(omitted) == 1 else 'them'} only when left out "
                    f"({source.path}:{line}: {quote(text, 80)}): a caller that passes "
                    f"{'it' if len(omitted) == 1 else 'them'} allocates nothing per call.",
                )
            return not_found(
                _PATHOLOGY,
                f"The launcher in {paths} allocates no buffer per call: it keeps or takes "
                f"its buffers ({source.path}:{line}: {quote(text, 80)}).",
            )
        if device_only(kernels):
            # Kernels alone say nothing of what their caller allocates on every call.
            return not_found(
                _PATHOLOGY,
                f"The kernel source read ({paths}) holds kernels only, no host code that "
                "launches them, so its per-call allocations could not be checked.",
                [HOST_LAUNCHER],
            )
        return not_found(_PATHOLOGY, f"No per-call allocation shows in the host code of {paths}.")
    per_call = [a for a in found_allocations if not a.per_launch]
    # Buffers kept or taken beside the per-call ones (a real out= and fresh scratch):
    # the summary says so rather than "no out= plumbing". Only per-call ones need it.
    kept = persistent_buffers(kernels) if per_call else None
    per_launch = [a for a in found_allocations if a.per_launch]
    parts = []
    if per_call:
        functions = sorted({a.function for a in per_call if a.function})
        parts.append(
            f"the host launcher allocates {count_text(len(per_call), 'buffer')} on every call "
            f"({', '.join(sorted({a.call for a in per_call}))}"
            + (f" in {', '.join(functions[:3])}" if functions else "")
            + _defaults_text(per_call)
            + ")"
        )
    if per_launch:
        where = ", ".join(f"{a.path}:{a.line}" for a in per_launch[:2])
        parts.append(
            f"the allocator given to triton.set_allocator calls "
            f"{', '.join(sorted({a.call for a in per_launch}))} at every launch that needs "
            f"global scratch ({where})"
        )
    text = "; ".join(parts)
    omitted = allocated_when_omitted(kept[0], kept[1]) if kept is not None else ()
    beside = (
        f"the {and_list([f'{name}=' for name in omitted])} it takes from its caller "
        "(allocated only when left out"
        if omitted
        else "the buffers it keeps or takes ("
    )
    summary = (
        text[0].upper()
        + text[1:]
        + (
            (
                f", beside {beside}{': ' if omitted else ''}{kept[0].path}:{kept[1]}: "
                f"{quote(kept[2], 80)})"
                if kept is not None
                else ", with no persistent buffers or out= plumbing"
            )
            if per_call
            else ""
        )
        + (
            (
                f"; experiment {tried[0].number} mentions it"
                if len(tried) == 1
                else f"; experiments {', '.join(str(e.number) for e in tried)} mention it"
            )
            + " but the kernel still does it"
            if tried
            else ""
        )
        + "."
    )
    evidence = [
        Evidence(quote=quote(a.text or a.call), source=f"{a.path}:{a.line}")
        for a in found_allocations[:6]
    ]
    # The seed persists a buffer only as long as every call recalculates its contents; a
    # zeros/ones/full buffer starts each call from its fill (atomics, accumulators), so
    # reused as it is it would carry the last call's values.
    filled = sorted({a.call for a in per_call if _FILLED.search(a.call)})
    fill_note = (
        f" A buffer made by {', '.join(filled)} needs its fill every call: write it in the "
        "kernel (not a separate memset) before reusing the buffer."
        if filled
        else ""
    )
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=[e.number for e in tried],
        severity=Severity.MEDIUM,
        confidence=0.75 if len(found_allocations) > 1 else 0.65,
        evidence=evidence,
        actions=[
            *(
                [
                    ctx.action(
                        _pass_defaults_text(per_call)
                        + "Allocate outputs and workspaces once per shape and dtype and reuse "
                        "them across calls, as long as every call recalculates their contents "
                        "(a buffer, not a cache of an earlier call's results), or take "
                        "out=/workspace= from the caller." + fill_note,
                        "buffer-persistence",
                    )
                ]
                if per_call
                else []
            ),
            *(
                [
                    ctx.action(
                        "Give triton.set_allocator an allocator that returns one scratch "
                        "buffer kept across launches (grown when a launch asks for more, one "
                        "per stream) instead of a new tensor each launch.",
                        "buffer-persistence",
                    )
                ]
                if per_launch
                else []
            ),
            ctx.action(
                "Once nothing allocates per call, capture the call (a decode step, a layer) "
                "in a CUDA graph.",
                "cuda-graphs",
            ),
        ],
    )
    return found(finding)
