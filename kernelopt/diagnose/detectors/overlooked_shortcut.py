"""9. Overlooked shortcut: the workload makes the kernel trivial in the common case.

``experiments/workload_profile.md`` is read through :func:`kernelopt.workload.read_profile_md`
and its shortcuts through :func:`kernelopt.workload.find_shortcuts` (size-1 axes, attention
over one key, a dominant shape, uniform lengths). A shortcut covering ``min_call_share`` of
the calls or of the time is overlooked when no experiment tried it and the kernel source
never tests its guard (``s_q == 1``, or the negated ``s_q > 1``, under the usual spellings
of the axis). A guard indexing a shape (``x.shape[dim] == 1``) also shows with the index
the profile's shape rows record for it, as recorded or counted from the other end
(``x.shape[-1] == 1`` and ``x.shape[1] == 1`` where every row records ``dim=-1`` of a
rank-2 ``x``), and under the name of the axis the profile reads from that size
(``hidden == 1`` where the Axes table reads ``hidden`` from ``x.shape[1]``), alike for
every shortcut of one guard. Only code counts: a guard in a comment, a docstring or a
one-line string is no path. As the ignored-research item does, a plan not yet run that is
tagged with a shortcut's entry takes it up: it is named as planned, not recommended again.

Each guard is one action: shortcuts that share one (a size-1 axis that is also the
dominant shape) are one path in the kernel, and their action keeps each reason and links
each catalog entry.

Padding past the real lengths has no guard: a kernel loop bounded by a length the kernel
loads for its own program handles it (:func:`kernelopt.diagnose.source.length_bounded_loop`),
and where none is, the action asks for one. Padded queries (``max_q_len``, ``s_q``) are
spread over the launch grid, a program per query tile: what handles them is an early
return of the programs whose tile starts past the length (``if mblk * BLOCK_M >= q_len:
return``), quoted where the kernel has one; a loop over the keys says nothing of them.

Generic size-1 axes of one op that name one quantity (``h_q`` and ``h_kv``) over the same
calls are one fact and one action; where the launch grid spans the size
(:func:`kernelopt.diagnose.source.grid_sizes`), the item says what a size of 1 costs there
(fewer programs) instead of the inspector's generic words. A reason is cut only at a
sentence end in the checklist and kept whole in the plan.

The shortcuts include those a rule of the user's found when the profile was written
(``WorkloadProfile.written_shortcuts``): the process that diagnoses has not registered it.
The inspector's size-1 rules count calls; a size-1 axis that takes ``min_call_share`` of
the time in fewer of the calls is found too, as the item's line is a share of calls or of
time. Where no shortcut reaches the line, the item names the size-1 axis nearest to it
and its share (``rows = 1 in 48.0% of calls, under the 50% line``).

A profile is stale when the trace it names (``- Source:``) is in the log and was written
after it, or holds another number of records (``- Records:``): the checklist item then
says so and the plan's first action for it is to re-run the inspector, the way the
profile was made where it names an op signature that is not built in (registered in
Python, unknown to ``kernelopt inspect``).
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
from collections.abc import Sequence
from typing import Any, NamedTuple

import attrs

from kernelopt._words import count_text
from kernelopt.diagnose.context import Context, quote
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Action, Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import OverlookedShortcutParams
from kernelopt.diagnose.presence import present_in
from kernelopt.diagnose.source import (
    early_exit,
    grid_sizes,
    guard_present,
    length_bounded_loop,
)
from kernelopt.experiments.log import KernelSource

__all__ = ["STALE_AFTER_S", "detect", "stale_profile"]

_PATHOLOGY = Pathology.OVERLOOKED_SHORTCUT


def _shortcuts(ctx: Context, min_share: float) -> tuple[list[Any], str | None, Any]:
    """The workload's shortcuts down to ``min_share`` of the calls (or of the time), or a
    reason they could not be read, and the profile."""
    path = ctx.log.workload_profile
    if path is None:
        return (
            [],
            "experiments/workload_profile.md (run `kernelopt inspect` on a call trace to write it)",
            None,
        )
    try:
        from kernelopt.workload import Thresholds, find_shortcuts, read_profile_md
    except ImportError as error:  # the workload inspector is optional for reading logs
        return [], f"kernelopt.workload ({error})", None
    full = os.path.join(ctx.log.root, path)
    try:
        profile = read_profile_md(full)
        # The inspector's rules stop at half the calls by default: a lower min_call_share
        # must reach the rarer shortcuts too (a higher one is applied by the caller, which
        # also counts a share of the time). Its size-1 rules count calls only: a size 1
        # in 48% of the calls and 53% of the time must reach the caller as well.
        defaults = Thresholds()
        thresholds = Thresholds(
            often=min(defaults.often, min_share, *_size1_by_time(profile, min_share)),
            dominant=min(defaults.dominant, min_share),
            uniform=min(defaults.uniform, min_share),
            padding=defaults.padding,
        )
        return list(find_shortcuts(profile, thresholds=thresholds)), None, profile
    except Exception as error:  # a workload profile that cannot be read is reported, not fatal
        problem = f"a readable {path} ({error.__class__.__name__}: {quote(str(error), 100)})"
        return [], problem, None


def _size1_by_time(profile: Any, min_share: float) -> list[float]:
    """The call shares of the size-1 axes of ``profile`` that take ``min_share`` of the
    time (but maybe fewer of the calls)."""
    return [
        item.call_share
        for op in profile.ops
        for item in op.size1_axes(threshold=1e-12)
        if item.time_share is not None and item.time_share >= min_share
    ]


def _closest_size1(profile: Any, min_share: float) -> str:
    """The size-1 axis of ``profile`` nearest to the item's line, in words, for an item
    that found no shortcut: ``rows = 1 in 48.0% of calls (40.0% of time), under the 50%
    line``, or ``no size-1 axis`` where no axis is ever 1."""
    found = [item for op in profile.ops for item in op.size1_axes(threshold=1e-12)]
    if not found:
        return "no size-1 axis"
    best = max(found, key=lambda item: max(item.call_share, item.time_share or 0.0))
    time = "" if best.time_share is None else f" ({best.time_share:.1%} of time)"
    where = f" of {best.op}" if len(profile.ops) > 1 else ""
    return (
        f"{best.axis}{where} = 1 in {best.call_share:.1%} of calls{time}, under the "
        f"{min_share:.0%} line"
    )


# A trace newer than its profile by less than this was written with it, or copied or
# checked out with it (which sets both times seconds apart in either order).
STALE_AFTER_S = 60.0


def _trace_in_log(root: str, profile_path: str, source: str) -> str | None:
    """The profile's source trace as a path relative to the log root, when it is a file in
    the log: named from the root, from the profile's folder, or absolute inside the log."""
    if not source or source == "-":
        return None
    real_root = os.path.realpath(root)
    folder = os.path.dirname(os.path.join(root, profile_path))
    candidates = (
        [source]
        if os.path.isabs(source)
        else [
            os.path.join(root, source),
            os.path.join(folder, source),
        ]
    )
    for candidate in candidates:
        real = os.path.realpath(candidate)
        if real.startswith(real_root + os.sep) and os.path.isfile(real):
            return os.path.relpath(real, real_root).replace(os.sep, "/")
    return None


def _records(path: str) -> int | None:
    """Non-blank lines of a JSONL trace (what the inspector counts as its records)."""
    try:
        with open(path, "rb") as handle:
            return sum(1 for line in handle if line.strip())
    except OSError:
        return None


def stale_profile(root: str, profile_path: str, profile: Any) -> tuple[str, str] | None:
    """The source trace of the workload profile at ``profile_path`` and why the profile is
    stale against it, or None: the trace is in the log and was written more than
    :data:`STALE_AFTER_S` after the profile, or (for a JSONL trace) holds another number of
    records than the profile read.

    Parameters
    ----------
    root : str
        The log directory.
    profile_path : str
        The workload profile, relative to ``root``.
    profile : WorkloadProfile
        The profile as read (its ``source``, ``format`` and ``records``).
    """
    trace = _trace_in_log(root, profile_path, str(getattr(profile, "source", "") or ""))
    if trace is None:
        return None
    trace_file = os.path.join(root, trace)
    try:
        newer = os.path.getmtime(trace_file) - os.path.getmtime(os.path.join(root, profile_path))
    except OSError:
        return None
    reasons = []
    recorded = getattr(profile, "records", None)
    if getattr(profile, "format", "") == "jsonl" and recorded is not None:
        now = _records(trace_file)
        if now is not None and now != recorded:
            reasons.append(
                f"{trace} holds {count_text(now, 'record')}, the profile read {recorded}"
            )
    if newer > STALE_AFTER_S:
        reasons.append(f"{trace} was written {_age(newer)} after the profile")
    return (trace, "; ".join(reasons)) if reasons else None


def _age(seconds: float) -> str:
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


# A size read from a shape in a guard: ``x.shape[dim]`` (indexed by an argument) or
# ``q.shape[1]`` (the index written out).
_SHAPE_INDEX = re.compile(
    r"(?<![\w.])(?P<tensor>[A-Za-z_]\w*)\.shape\[(?P<index>[A-Za-z_]\w*|-?\d+)\]"
)
# A tensor argument's value opens with its sizes (``x=[64,1]:float16``).
_TENSOR_SIZES = re.compile(r"\[(?P<dims>[^\]]*)\]:")
_INT = re.compile(r"-?\d+")
# Each shape index of a guard has at most three spellings; a guard that conjoins many
# sizes is tried under a bounded number of them.
_MAX_SPELLINGS = 32


def _row_indices(tensor: str, index: str, args: dict[str, str]) -> set[int] | None:
    """The indices into ``tensor``'s shape that read the axis ``index`` names in one shape
    row: the recorded index (``dim=-1``; ``index`` itself where written out) and, where
    the row records the tensor's sizes, its form counted from the other end. None where
    the row records no int for ``index``, or one out of the tensor's range."""
    raw = index if _INT.fullmatch(index) else args.get(index)
    if raw is None or not _INT.fullmatch(raw):
        return None  # not recorded, or a list of dims (``dim=[1,2]``): no one index
    dim = int(raw)
    sizes = _TENSOR_SIZES.match(args.get(tensor, ""))
    if sizes is None:
        return {dim}
    rank = len(sizes["dims"].split(",")) if sizes["dims"] else 0
    if not -rank <= dim < rank:
        return None
    return {dim, dim % rank, dim % rank - rank}


def _recorded_indices(tensor: str, index: str, rows: Sequence[str]) -> set[str]:
    """The spellings of ``tensor.shape[index]`` that read the same axis in every shape row
    (each row's Args text); empty where a row does not record the index."""
    from kernelopt.workload.shortcuts import shape_arguments  # read with the profile

    common: set[int] | None = None
    for text in rows:
        args = shape_arguments(text)
        indices = None if args is None else _row_indices(tensor, index, args)
        if indices is None:
            return set()
        common = indices if common is None else common & indices
    return {str(i) for i in common or ()}


def _recorded_spellings(guard: str, op: str, profile: Any) -> list[str]:
    """``guard`` with its shape indices spelled as the profile's shape rows of ``op``
    record them (``x.shape[-1] == 1`` and ``x.shape[1] == 1`` for ``x.shape[dim] == 1``
    where every row records ``dim=-1`` of a rank-2 ``x``), the guard as written left out.

    Only what the rows record counts: a row that records no int for the index, or rows
    that read different axes, leave the index as written.
    """
    refs = list(dict.fromkeys((m["tensor"], m["index"]) for m in _SHAPE_INDEX.finditer(guard)))
    rows = [
        shape.args
        for entry in getattr(profile, "ops", ())
        if entry.op == op
        for shape in entry.shapes
    ]
    if not refs or not rows:
        return []
    choices = [
        [index, *sorted(_recorded_indices(tensor, index, rows) - {index})] for tensor, index in refs
    ]
    # The first pick keeps every index as written: the guard itself, tried already.
    picks = itertools.islice(itertools.product(*choices), 1, _MAX_SPELLINGS + 1)
    return [_respelled(guard, dict(zip(refs, picked, strict=True))) for picked in picks]


def _respelled(guard: str, indices: dict[tuple[str, str], str]) -> str:
    """``guard`` with each ``tensor.shape[index]`` indexed by ``indices[(tensor, index)]``."""

    def spell(match: re.Match[str]) -> str:
        return f"{match['tensor']}.shape[{indices[(match['tensor'], match['index'])]}]"

    return _SHAPE_INDEX.sub(spell, guard)


class _Handled(NamedTuple):
    """Where a shortcut was handled: the kernel's line that tests its guard, an experiment
    that tried it, or the plan of one not yet run that takes it up."""

    what: str
    """The kernel's line, or the experiment's label and title."""
    at: str
    """``path:line``."""
    tried: str = ""
    """The experiment that tried it (``"exp 4 (REVERTED)"``); ``""`` for a kernel path."""
    planned: bool = False
    """Whether ``tried`` names an experiment planned and not yet run."""
    bounded: bool = False
    """Whether the kernel's line is a loop bounded by each sequence's length (padding)."""
    exits: bool = False
    """Whether the kernel's line is an early return of the programs past each sequence's
    length (padding of an axis spread over the launch grid)."""


def _axis_names(guard: str, op: str, profile: Any, axes: Sequence[str]) -> list[str]:
    """``guard`` spelled with the names of the axes its sizes are: each term ``REF ==
    VALUE`` also as ``NAME == VALUE`` for every axis of ``op`` the profile reads from
    ``REF`` (``hidden == 1`` for ``x.shape[1] == 1`` where the Axes table reads ``hidden``
    from ``x.shape[1]``), and a single ``REF == 1`` also with each of ``axes`` (the
    axes the shortcuts of this guard name). The guard as written is left out."""
    by_source: dict[str, list[str]] = {}
    for entry in getattr(profile, "ops", ()) if profile is not None else ():
        if entry.op == op:
            for axis in entry.axes:
                for source in axis.sources:
                    by_source.setdefault(source, []).append(axis.name)
    terms = [term.strip() for term in guard.split(" and ")]
    choices: list[list[str]] = []
    for term in terms:
        sides = [side.strip() for side in term.split("==")]
        names = by_source.get(sides[0], []) if len(sides) == 2 and all(sides) else []
        if len(terms) == 1 and len(sides) == 2 and sides[1] == "1":
            names = [*names, *axes]
        spelled = [f"{name} == {sides[1]}" for name in dict.fromkeys(names)]
        choices.append([term, *(t for t in spelled if t != term)])
    # The first pick keeps every term as written: the guard itself, tried already.
    picks = itertools.islice(itertools.product(*choices), 1, _MAX_SPELLINGS + 1)
    return [" and ".join(picked) for picked in picks]


def _experiment_with(ctx: Context, ids: set[str], *, attempted: bool) -> _Handled | None:
    """The first experiment tagged with one of ``ids`` that was run (``attempted``), or
    planned and not yet run, as the place that handled the shortcut."""
    for experiment in ctx.experiments:
        if ids & set(experiment.tags) and experiment.attempted is attempted:
            fate = f" ({experiment.status.value})" if experiment.status is not None else ""
            return _Handled(
                what=f"{experiment.label}: {experiment.description}",
                at=str(experiment.source or ""),
                # A plan's folder names it (``exp_7``): numbered as item 7 names plans.
                tried=experiment.label + fate if attempted else f"exp {experiment.number}",
                planned=not attempted,
            )
    return None


def _present(
    ctx: Context, shortcut: Any, profile: Any = None, axes: Sequence[str] = ()
) -> _Handled | None:
    """Where ``shortcut`` was handled, or None where it was overlooked: an experiment that
    tried it, the kernel's line that tests its guard, or else the plan of an experiment
    not yet run that takes it up (by its catalog entry). A guard counts also under the
    names of the axes it tests (:func:`_axis_names`; ``axes`` are those the shortcuts of
    the same guard name, so that shortcuts sharing a guard share its spellings) and the
    shape indices ``profile``'s rows record (:func:`_recorded_spellings`)."""
    ids = set(getattr(shortcut, "catalog_ids", ()))
    tried = _experiment_with(ctx, ids, attempted=True)
    if tried is not None:
        return tried
    kernels = ctx.kernels
    if _padding(shortcut):
        # Padding costs nothing where the loop stops at each sequence's own length: no
        # guard to test, the bound is the path. Queries are spread over the launch grid
        # (a program per query tile), keys looped over: padded queries cost nothing where
        # the programs past the length return at once, and a loop over the keys says
        # nothing of them.
        if _query_axis(shortcut):
            exit_ = early_exit(kernels)
            if exit_ is not None:
                return _Handled(
                    what=exit_[2], at=f"{exit_[0].path}:{exit_[1]}", bounded=True, exits=True
                )
        else:
            loop = length_bounded_loop(kernels)
            if loop is not None:
                return _Handled(what=loop[2], at=f"{loop[0].path}:{loop[1]}", bounded=True)
    guard = getattr(shortcut, "guard", "") or ""
    op = getattr(shortcut, "op", "")
    guards = [guard]
    if guard:
        guards += _axis_names(guard, op, profile, axes)
    if guard and profile is not None:
        guards += _recorded_spellings(guard, op, profile)
    for spelling in dict.fromkeys(guards):
        if spelling:
            hit = guard_present(spelling, kernels)
            if hit is not None:
                return _Handled(what=hit[2], at=f"{hit[0].path}:{hit[1]}")
    if not getattr(shortcut, "axis", None):
        for entry_id in ids:
            entry = ctx.entry(entry_id)
            if entry is not None:
                hit = present_in(entry, kernels)
                if hit is not None:
                    return _Handled(what=hit[2], at=f"{hit[0].path}:{hit[1]}")
    # A plan not yet run answers the shortcut as it answers a recommendation (item 7):
    # it is taken up, though nothing is measured yet.
    return _experiment_with(ctx, ids, attempted=False)


def _share(shortcut: Any) -> float:
    """The larger of the shares of calls and of time a shortcut covers: a shape taking 96 %
    of the time in 30 % of the calls dominates what the kernel costs."""
    calls = float(getattr(shortcut, "call_share", 0.0) or 0.0)
    time = getattr(shortcut, "time_share", None)
    return max(calls, float(time)) if time is not None else calls


def _coverage(shortcut: Any) -> str:
    """``"88% of calls"``, or ``"30% of calls, 96% of time"`` when time is what dominates."""
    calls = f"{shortcut.call_share:.0%} of calls"
    time = getattr(shortcut, "time_share", None)
    if time is None or f"{time:.0%}" == f"{shortcut.call_share:.0%}" or time < shortcut.call_share:
        return calls
    return f"{calls}, {time:.0%} of time"


def _code(text: str) -> str:
    """``text`` as an inline code span, cut to one line of 80 characters: fenced with one
    backtick more than its longest run of them, so a backtick in the code ends nothing."""
    line = quote(text, 80)
    longest = max((len(run) for run in re.findall(r"`+", line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{fence}{pad}{line}{pad}{fence}"


def _kernel_path(guard: str, what: str, at: str) -> str:
    """A shortcut's guard with the kernel line that tests it, as the kernel spells it, and
    where: ``x.shape[dim] == 1 in `if x.shape[-1] == 1:` (kernels/softmax.py:5)``. The
    guard is the profile's words; the line is what the reader will find in the file."""
    return f"{guard} in {_code(what)} ({at})" if what else f"{guard} ({at})"


def _handled_item(guard: str, handled: _Handled) -> str:
    """One handled shortcut in words: the kernel's path, the experiment that tried it, or
    the plan that takes it up."""
    if handled.planned:
        return f"{guard} is planned in {handled.tried}, not yet measured ({handled.at})"
    if handled.tried:
        return f"{guard} was tried in {handled.tried} ({handled.at})"
    if handled.bounded:
        return _bounded_words(guard, handled)
    return f"the kernel has a path for {_kernel_path(guard, handled.what, handled.at)}"


def _bounded_words(guard: str, handled: _Handled) -> str:
    """The padding a loop bounded by each sequence's length skips, or an early return of
    the programs past it, in words."""
    if handled.exits:
        return (
            f"the kernel's programs past each sequence's length return at once, past the "
            f"padding of {guard}, in {_code(handled.what)} ({handled.at})"
        )
    return (
        f"the kernel's loop stops at each sequence's length, past the padding of {guard}, "
        f"in {_code(handled.what)} ({handled.at})"
    )


def _handled_text(handled: list[tuple[Any, _Handled]], min_share: float) -> str:
    """The sentence for shortcuts none of which is overlooked: each one, not the first (one
    named alone reads as the workload's only shortcut), and whether the kernel has its
    path, quoting the kernel's line that tests it, an experiment tried it (a reverted
    try left no path in the kernel) or a plan not yet run takes it up. Shortcuts that
    share a guard and where it was found (a size-1 axis that is also the dominant shape)
    are named once."""

    def guard(shortcut: Any) -> str:
        return getattr(shortcut, "guard", "") or shortcut.rule

    distinct = list(dict.fromkeys((guard(s), where) for s, where in handled))
    shown = distinct[:4]
    more = ", …" if len(distinct) > 4 else ""
    if all(not where.tried and not where.bounded for _g, where in shown):
        paths = ", ".join(_kernel_path(g, where.what, where.at) for g, where in shown) + more
        which = (
            f"each of the {len(handled)} shortcuts covering {min_share:.0%} of calls or of time: "
            if len(handled) > 1
            else ""
        )
        return f"The kernel already has a path for {which}{paths}."
    items = ", ".join(_handled_item(g, where) for g, where in shown)
    return (
        f"No shortcut covering {min_share:.0%} of calls or of time was overlooked: {items}{more}."
    )


def _planned_text(handled: list[tuple[Any, _Handled]]) -> str:
    """A sentence naming the shortcuts only a plan not yet run takes up, beside ones
    overlooked, or ``""``: they are not recommended again."""
    planned = list(
        dict.fromkeys(
            _handled_item(getattr(s, "guard", "") or s.rule, where)
            for s, where in handled
            if where.planned
        )
    )
    return f" Not recommended again: {'; '.join(planned)}." if planned else ""


def _shared_axes(shortcuts: Sequence[Any]) -> dict[tuple[str, str], list[str]]:
    """The axes the shortcuts of each guard name, by (op, guard): a size-1 axis that is
    also the dominant shape is one test in the kernel, so both are looked for under the
    axis's name."""
    axes: dict[tuple[str, str], list[str]] = {}
    for shortcut in shortcuts:
        guard = getattr(shortcut, "guard", "") or ""
        axis = getattr(shortcut, "axis", None)
        if guard and axis:
            names = axes.setdefault((getattr(shortcut, "op", ""), guard), [])
            if axis not in names:
                names.append(axis)
    return axes


def _by_guard(shortcuts: Sequence[Any]) -> list[list[Any]]:
    """``shortcuts`` grouped by the guard of one op that takes their calls, in order of
    first appearance: a size-1 axis that is also the dominant shape is one path in the
    kernel. A shortcut without a guard (a dominant shape no cheap test tells apart)
    stands alone."""
    groups: dict[object, list[Any]] = {}
    for index, shortcut in enumerate(shortcuts):
        guard = getattr(shortcut, "guard", "") or ""
        key: object = (getattr(shortcut, "op", ""), guard) if guard else index
        groups.setdefault(key, []).append(shortcut)
    return list(groups.values())


def _special_path(ctx: Context, group: Sequence[Any], spread: frozenset[str]) -> Action:
    """One action for the shortcuts of one guard: what the first (the largest) covers,
    every shortcut's reason, whole, and the catalog entry of each, in order. Padding asks
    for a loop bounded by each sequence's length, and a size-1 axis of the launch grid
    (``spread`` holds such shortcuts' guards) for a grid spread over another axis: neither
    is a special path."""
    lead = group[0]
    guard = getattr(lead, "guard", "") or lead.rule
    # Whole: a caveat cut off (a causal mask's) is advice lost.
    reasons = "; and ".join(" ".join(shortcut.message.split()) for shortcut in group)
    ids = list(dict.fromkeys(s.catalog_ids[0] for s in group if getattr(s, "catalog_ids", ())))
    if _padding(lead) and _query_axis(lead):
        what = (
            f"Return at once from the programs whose tile of {lead.axis} starts past each "
            "sequence's real length (load the length per sequence and compare the tile's "
            "start with it), or loop over the queries only to that length"
        )
    elif _padding(lead):
        what = (
            f"Loop over {lead.axis} only to each sequence's real length (load the length "
            "per sequence and bound the loop by it), or skip the tiles past it"
        )
    elif guard in spread:
        what = f"Spread the launch grid over another axis where `{guard}`"
    else:
        what = f"Add a special path for `{guard}`"
    return ctx.action(f"{what} ({_coverage(lead)}): {reasons}", ids[0] if ids else None, ids[1:])


# A padded axis of queries (``s_q``, ``max_q_len``, ``seqlen_q``), as signatures name it.
_QUERY_AXIS = re.compile(r"(?:^|_)(?:q|query|qo)(?:_|$)")


def _query_axis(shortcut: Any) -> bool:
    """Whether a padding shortcut pads the queries (a query axis), not the keys."""
    return bool(_QUERY_AXIS.search(getattr(shortcut, "axis", None) or ""))


def _padding(shortcut: Any) -> bool:
    """Whether ``shortcut`` is padding past the real lengths along an axis (the
    inspector's ``bucket-padding`` rule): work a loop bounded by each sequence's length
    skips, with no guard to test."""
    return getattr(shortcut, "rule", "") == "bucket-padding" and bool(
        getattr(shortcut, "axis", None)
    )


# The inspector's rule for any axis often 1: what it says is generic, so one axis value
# under several names (h_q = h_kv = 1) is one fact.
_SIZE1_AXIS = "size1-axis"
# ``h_kv = 1 in 100% of calls (100% of time): ...``: the fact, then what to do.
_SIZE1_FACT = re.compile(
    r"^(?P<axis>\S+(?: = \S+)*) = 1 (?P<coverage>in [^:]*?): (?P<advice>.*)$", re.S
)
# The inspector's advice for an axis with no words of its own: what a kernel that walks the
# axis saves. Other advice (``one query row per head``) says more and is kept.
_GENERIC_ADVICE = "a path without this axis"
# ``q.shape[1] == 1``: the size a one-term guard tests.
_ONE_SIZE = re.compile(r"^\s*(?P<size>[A-Za-z_]\w*\.shape\[-?\d+\])\s*==\s*1\s*$")


def _axis_stem(axis: str) -> str:
    """The quantity an axis name counts: ``h`` of ``h_q`` and ``h_kv``."""
    return axis.split("_", 1)[0]


def _merged_size1(overlooked: Sequence[Any]) -> list[Any]:
    """``overlooked`` with the generic size-1 shortcuts of one op that name one quantity
    (``h_q`` and ``h_kv``) and cover the same share of calls and of time made one: one
    value under two names is one fact, and one item of the plan. Their guards are
    conjoined and their names joined (``h_kv = h_q = 1``)."""
    groups: dict[object, list[Any]] = {}
    for index, shortcut in enumerate(overlooked):
        axis = getattr(shortcut, "axis", None)
        fact = _SIZE1_FACT.match(getattr(shortcut, "message", ""))
        key: object = index
        if getattr(shortcut, "rule", "") == _SIZE1_AXIS and axis and fact is not None:
            key = (
                getattr(shortcut, "op", ""),
                _axis_stem(axis),
                shortcut.call_share,
                getattr(shortcut, "time_share", None),
            )
        groups.setdefault(key, []).append(shortcut)
    merged = []
    for group in groups.values():
        if len(group) == 1 or not attrs.has(type(group[0])):
            merged += group
            continue
        lead = group[0]
        axes = " = ".join(dict.fromkeys(s.axis for s in group))
        guards = " and ".join(dict.fromkeys(s.guard for s in group if s.guard))
        fact = _SIZE1_FACT.match(lead.message)
        assert fact is not None  # grouped on it
        merged.append(
            attrs.evolve(
                lead,
                message=f"{axes} = 1 {fact['coverage']}: {fact['advice']}",
                guard=guards,
            )
        )
    return merged


def _grid_spread(
    shortcuts: Sequence[Any], kernels: Sequence[KernelSource]
) -> tuple[list[Any], frozenset[str]]:
    """``shortcuts`` with each generic size-1 shortcut whose sizes a launch grid spans
    saying what a size of 1 costs there: fewer programs, not a loop to skip (the
    inspector's words, ``no loop over it``, are for an axis the kernel walks). The guards
    of those rewritten are returned with them."""
    grids = grid_sizes(kernels) if kernels else {}
    rewritten: list[Any] = []
    spread: set[str] = set()
    for shortcut in shortcuts:
        terms = [t for t in getattr(shortcut, "guard", "").split(" and ") if t]
        sizes = [_ONE_SIZE.match(t) for t in terms]
        fact = _SIZE1_FACT.match(getattr(shortcut, "message", ""))
        spanned = [m["size"] for m in sizes if m is not None and m["size"] in grids]
        if (
            getattr(shortcut, "rule", "") != _SIZE1_AXIS
            or fact is None
            or not fact["advice"].startswith(_GENERIC_ADVICE)
            or not spanned
            or not attrs.has(type(shortcut))
        ):
            rewritten.append(shortcut)
            continue
        source, line, text = grids[spanned[0]]
        advice = (
            f"the launch grid spans it ({_code(text)}, {source.path}:{line}), so at 1 the "
            "kernel launches fewer programs, not a loop to skip: spread the grid over "
            "another axis (more, smaller blocks of a longer one) to keep every SM busy"
        )
        shortcut = attrs.evolve(shortcut, message=shortcut.message[: fact.start("advice")] + advice)
        spread.add(shortcut.guard)
        rewritten.append(shortcut)
    return rewritten, frozenset(spread)


# A sentence ends at a full stop before a space and a capital or an opening bracket.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def _whole_sentences(text: str, limit: int) -> str:
    """``text`` on one line, cut at the last sentence end within ``limit`` characters, or
    its first sentence whole where that is longer: never mid-sentence."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    ends = [m.start() for m in _SENTENCE_END.finditer(line)]
    within = [end for end in ends if end <= limit]
    if within:
        return line[: within[-1]]
    return line[: ends[0]] if ends else line


def _registered_signatures(profile: Any) -> list[str]:
    """The op signatures ``profile`` names that are not built in (``- Signature:
    rmsnorm``): registered in Python where it was made, and unknown to a fresh
    ``kernelopt inspect``, which would name those ops' axes after their arguments."""
    from kernelopt.workload.signatures import BUILTIN_SIGNATURES  # read with the profile

    builtin = {signature.name for signature in BUILTIN_SIGNATURES}
    names = (getattr(entry, "signature", None) for entry in getattr(profile, "ops", ()))
    return sorted({name for name in names if name and name not in builtin})


def _signature_words(names: Sequence[str]) -> str:
    """``"the signature `rmsnorm`"`` or ``"the signatures `a`, `b`"``."""
    listed = ", ".join(f"`{name}`" for name in names)
    return f"the signature{'s' if len(names) > 1 else ''} {listed}"


def _remake_text(trace: str, profile_path: str, reason: str, registered: Sequence[str]) -> str:
    """The action that re-makes a stale profile from its trace: ``kernelopt inspect`` where
    the profile names only built-in signatures, else the way it was made. A profile made
    in Python with a signature registered loses it under the command line, which knows
    the built-in signatures only: its axes would be named after the arguments (``x[1]``)
    and the shortcuts the signature's roles find (a size-1 reduction) would be lost."""
    if not registered:
        # Quoted: the command is meant to be pasted, and log paths may hold spaces.
        command = f"kernelopt inspect {shlex.quote(str(trace))} --write " + shlex.quote(
            str(profile_path)
        )
        return (
            f"Re-run the workload inspector on the current trace before acting on its "
            f"shortcuts (`{command}`): {reason}."
        )
    # No command to paste: the one that would re-make the file drops the signature.
    return (
        f"Re-make the workload profile from the current trace the way it was made, with "
        f"{_signature_words(registered)} registered (`register_signature`, then "
        f"`profile_trace` and `write_profile_md` in Python), before acting on its "
        f"shortcuts: {reason}. `kernelopt inspect` knows only the built-in signatures: "
        f"writing {profile_path} with it would name the axes of {', '.join(registered)} "
        "after their arguments (`x[1]`) and drop the shortcuts the signature's roles find."
    )


def detect(ctx: Context, params: OverlookedShortcutParams) -> Outcome:
    """Report common-case shortcuts the kernel has no special path for."""
    shortcuts, problem, profile = _shortcuts(ctx, params.min_call_share)
    if problem is not None:
        return not_found(
            _PATHOLOGY, f"No workload profile could be read ({problem.split(' (')[0]}).", [problem]
        )
    profile_path = ctx.log.workload_profile or ""
    # The seed: a profile stale against a changed trace set is re-made before it is trusted.
    stale = stale_profile(ctx.log.root, profile_path, profile)
    stale_note = f" The profile may be stale ({stale[1]}): re-run the inspector." if stale else ""
    registered = _registered_signatures(profile)
    stale_missing = (
        [
            f"a workload profile re-made from {stale[0]} "
            + (
                f"as it was made, with {_signature_words(registered)} registered"
                if registered
                else "(`kernelopt inspect`)"
            )
        ]
        if stale
        else []
    )
    common = [s for s in shortcuts if _share(s) >= params.min_call_share]
    if not common:
        return not_found(
            _PATHOLOGY,
            f"The workload profile ({ctx.log.workload_profile}) shows no shortcut covering "
            f"{params.min_call_share:.0%} of calls or of time "
            f"({_closest_size1(profile, params.min_call_share)}; no dominant shape)." + stale_note,
            stale_missing,
        )
    kernels = ctx.kernels
    missing = [] if kernels else ["kernel source, to look for a special path"]
    overlooked = []
    handled = []
    axes = _shared_axes(common)
    for shortcut in common:
        key = (getattr(shortcut, "op", ""), getattr(shortcut, "guard", "") or "")
        where = (
            _present(ctx, shortcut, profile, axes.get(key, ()))
            if kernels or ctx.experiments
            else None
        )
        if where is None:
            overlooked.append(shortcut)
        else:
            handled.append((shortcut, where))
    if not overlooked:
        return not_found(
            _PATHOLOGY,
            _handled_text(handled, params.min_call_share) + stale_note,
            [*missing, *stale_missing],
        )
    overlooked, spread = _grid_spread(_merged_size1(overlooked), kernels)
    lead = overlooked[0]
    guard = getattr(lead, "guard", "") or getattr(lead, "rule", "")
    paths = ", ".join(k.path for k in kernels[:2]) if kernels else "the kernel (source not found)"
    never = (
        f"{paths} bounds no loop by each sequence's length"
        if _padding(lead)
        else f"{paths} never tests `{guard}` to spread its grid over another axis"
        if guard in spread
        else f"{paths} never tests `{guard}`"
    )
    summary = (
        f"The workload profile shows {_whole_sentences(lead.message, 150).rstrip('.')} "
        f"({_coverage(lead)}), "
        f"but no experiment tried it and {never}." + _planned_text(handled) + stale_note
    )
    evidence = [
        Evidence(quote=_whole_sentences(f"{s.rule}: {s.message}", 160), source=profile_path)
        for s in overlooked[:4]
    ]
    actions = []
    if stale:
        trace, reason = stale
        evidence.append(Evidence(quote=quote(f"stale workload profile: {reason}"), source=trace))
        actions.append(ctx.action(_remake_text(trace, profile_path, reason, registered)))
    actions += [_special_path(ctx, group, spread) for group in _by_guard(overlooked)[:3]]
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=(),
        severity=Severity.HIGH if _share(lead) >= 0.9 else Severity.MEDIUM,
        # Shares from a stale profile may no longer hold.
        confidence=(0.8 if kernels else 0.55) - (0.2 if stale else 0.0),
        evidence=evidence,
        actions=actions,
        missing=[*missing, *stale_missing],
    )
    return found(finding)
