"""5. Missing fundamental: a standard technique for this kernel family never tried.

The catalog marks entries ``fundamental_for`` families (split-KV flash-decoding for decode
attention, online softmax for attention, ...). An entry is missing when no experiment is
tagged with it and the current kernel source shows neither its keywords nor its code
pattern (``num_splits``, ``m_i``/``l_i`` running max and sum, ``block_table``, ...), as
:func:`kernelopt.diagnose.presence.present_in` checks it. Buffer persistence also
shows the way the buffer-persistence item reads the launcher: a buffer pool, ``out``/
``workspace`` parameters, an allocation behind ``is None`` or kept in a cache
(:func:`kernelopt.diagnose.source.persistent_buffers`), so the two items agree; sources
that hold kernels alone (:func:`kernelopt.diagnose.source.device_only`) show neither it
nor its absence, so it is left unchecked and the launcher is named as missing data.
A technique is not needed where the kernel's code leaves it nothing to do
(:func:`kernelopt.diagnose.presence.needless_in`): online softmax where the kernel reads each
row whole in one tile, with no loop over the reduced axis (it only saves a second pass over a
row that takes several tiles); causal tile skipping where the kernel shows no causal mask (no
key tile is wholly masked). Nor is one whose every shape condition fails at every call the
workload profile recorded, on the facts a family's name fixes
(:data:`kernelopt.catalog.vocabulary.FAMILY_SHAPES`: ``s_q``): the catalog leaves causal tile
skipping (``s_q >= 128``) out of the decode families, and a log read as plain attention whose
calls all have one or a few query rows is decode all the same. Such a kernel is not told to
add it; the item says why. A technique made of two halves of which the kernel shows one
(:func:`kernelopt.diagnose.presence.partly_in`: a causal key loop that stops at the diagonal
but masks every tile) is no missing fundamental either: the item names the half that shows
and the half that does not.
The measuring techniques (:data:`kernelopt.diagnose.context.MEASUREMENT`) show in the log,
not in code; where every timing names a CPU as its device they are left to the
wrong-bottleneck item, which says what such a log lacks, rather than reported twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelopt._words import and_list, count_text
from kernelopt.catalog.conditions import Comparison, Op, format_number
from kernelopt.catalog.vocabulary import FAMILY_SHAPES, family_ancestors, shape_fact_for_axis
from kernelopt.diagnose.context import HOST_LAUNCHER, MEASUREMENT, Context, quote
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import MissingFundamentalParams
from kernelopt.diagnose.presence import (
    CODE_PATTERNS,
    RecordedRows,
    needless_in,
    partly_in,
    present_in,
)
from kernelopt.diagnose.source import device_only, persistent_buffers

__all__ = ["CODE_PATTERNS", "detect", "present_in"]

_PATHOLOGY = Pathology.MISSING_FUNDAMENTAL

_BUFFERS = "buffer-persistence"
# The shape facts that set families apart (decode attention is attention at s_q = 1): what
# a workload records of them says which family its calls are, whatever family was named.
# Other facts (key lengths, batch sizes) vary with the calls a trace happened to record,
# so a short recorded cache does not rule out what a long one needs.
_FAMILY_FACTS = frozenset(fact for shape in FAMILY_SHAPES.values() for fact in shape)
# Facts that vary with the calls a trace caught (a batch, a cache's length): a workload
# that records an axis of one of these names rules nothing out by it.
_TRACE_FACTS = frozenset({"b", "seqlen_k", "seqlen_cv"})
# Comparisons that hold on one side of a threshold: failing at the least and the greatest
# recorded value, they fail at every value between.
_MONOTONE = frozenset({Op.LT, Op.LE, Op.GT, Op.GE})


def workload_ops(ctx: Context, family: str) -> tuple[list[Any], str | None, bool]:
    """The ops of the log's workload profile that are ``family``'s kernel, the profile's
    path, and whether an op's own family is related to ``family``; no ops where the log
    has no readable profile.

    Ops of a family related to ``family`` (one its ancestor or descendant) are kept; where
    none is, every op (a profile of one unnamed op is the kernel's)."""
    path = ctx.log.workload_profile
    profile = ctx.workload
    if profile is None:
        return [], None, False
    ops = list(profile.ops)

    def related(op: Any) -> bool:
        try:
            return family in family_ancestors(op.family) or op.family in family_ancestors(family)
        except Exception:  # a family the vocabulary does not know
            return False

    kin = [op for op in ops if related(op)]
    return kin or ops, path, bool(kin)


def _recorded(comparison: Comparison, op: Any) -> str | None:
    """The values ``op``'s calls recorded for the fact ``comparison`` reads, written out,
    when the comparison fails at every one of them; None when it holds at one, or the
    profile cannot tell.

    A fact that sets families apart (``s_q``) is read under any name its axis goes by; any
    other fact only from an axis of its own name (a GEMM's ``n``), and never one that
    varies with the calls a trace caught (:data:`_TRACE_FACTS`)."""
    if comparison.other is not None or comparison.name in _TRACE_FACTS:
        return None
    if comparison.name in _FAMILY_FACTS:
        axis = op.axis(comparison.name) or next(
            (a for a in op.axes if shape_fact_for_axis(a.name) == comparison.name), None
        )
    else:
        axis = op.axis(comparison.name)
    if axis is None:
        return None
    listed = [v.value for v in axis.values]
    if listed and axis.distinct is not None and len(listed) >= axis.distinct:
        values = sorted(set(listed))
        text = " or ".join(format_number(float(v)) for v in values)
    elif comparison.op in _MONOTONE and axis.min is not None and axis.max is not None:
        values = [axis.min, axis.max]
        text = f"{format_number(float(axis.min))} to {format_number(float(axis.max))}"
    else:
        return None
    if any(comparison.evaluate({comparison.name: float(v)}) is not False for v in values):
        return None
    return f"{comparison.name} is {text}"


def ruled_out_by_workload(entry: Any, ops: Sequence[Any], path: str | None) -> str | None:
    """Why the recorded workload has no use for ``entry``: each of its shape conditions
    fails at every call of every op, on a fact that sets families apart; else None."""
    conditions = tuple(getattr(entry, "shape_conditions", ()))
    if not conditions or not ops:
        return None
    facts: list[str] = []
    for condition in conditions:
        for op in ops:
            failing = next(
                (t for t in (_recorded(c, op) for c in condition.comparisons) if t), None
            )
            if failing is None:
                return None
            facts.append(f"{op.op}: {failing}" if len(ops) > 1 else failing)
    wanted = " or ".join(str(c) for c in conditions)
    recorded = "; ".join(dict.fromkeys(facts))
    return f"it applies where {wanted}, and {recorded} in every call recorded ({path})"


def _recorded_rows(ops: Sequence[Any], path: str | None) -> list[RecordedRows]:
    """The softmax row lengths the workload profile recorded, one per op and row axis: the
    axes an op reduces over (a softmax's ``n``, a user signature's ``experts``), or, for an
    op that reduces none but selects k of n (a router's top-k), the axis it picks from.

    Attention's reduced axis is its key length, which grows with the cache a trace happened
    to catch, so attention ops give none. Empty where any other op records no row length,
    or no profile was read: the rows then cannot all be said to fit."""
    rows: list[RecordedRows] = []
    for op in ops:
        try:
            attention = "attention" in family_ancestors(op.family)
        except Exception:  # a family the vocabulary does not know
            attention = False
        if attention:
            continue
        names = tuple(op.reduced) or ((op.select[1],) if op.select is not None else ())
        axes = [op.axis(name) for name in names]
        if not axes or any(a is None or a.min is None or a.max is None for a in axes):
            return []
        rows.extend(
            RecordedRows(
                op=op.op, axis=a.name, least=float(a.min), most=float(a.max), path=path or ""
            )
            for a in axes
        )
    return rows


def detect(ctx: Context, params: MissingFundamentalParams) -> Outcome:
    """Report fundamentals of the family that were neither tried nor present in the kernel."""
    family = params.family or ctx.family
    if ctx.catalog is None:
        reason = ctx.catalog_problem or "no catalog"
        return not_found(
            _PATHOLOGY,
            f"The catalog could not be used ({reason}).",
            ["the catalog of fundamentals"],
        )
    if family is None:
        return not_found(
            _PATHOLOGY,
            "The kernel family is not clear from CLAUDE.md, kernel names or experiment titles; "
            "pass --family to check fundamentals.",
            ["kernel family (CLAUDE.md naming the kernel, or --family)"],
        )
    try:
        fundamentals = list(ctx.catalog.fundamentals(family))
    except Exception as error:  # an unknown family in a user catalog
        return not_found(
            _PATHOLOGY, f"The catalog has no fundamentals for '{family}' ({error}).", []
        )
    if not fundamentals:
        return not_found(
            _PATHOLOGY, f"The catalog lists no fundamental technique for the '{family}' family."
        )
    kernels = ctx.kernels
    missing_data = (
        []
        if kernels
        else [
            "kernel source (CLAUDE.md kernel path or exp_N snapshot) to check which techniques it "
            "has"
        ]
    )
    # Kernels alone (no launcher) cannot show what the host code does with its buffers.
    unseen = (
        {_BUFFERS}
        if kernels and not persistent_buffers(kernels) and device_only(kernels)
        else set()
    )
    unchecked: list[str] = []
    tried_ids = {tag for e in ctx.experiments for tag in e.tags}
    # Measurement techniques show as profiles in the log rather than in kernel code.
    profiled = ctx.profiled
    absent: list[Any] = []
    present: list[str] = []
    host_clock = ctx.host_clock_devices
    deferred: list[str] = []  # measuring techniques left to the wrong-bottleneck item
    needless: dict[str, str] = {}  # entry id: why it is not needed
    unjudged: list[str] = []  # measuring techniques a profiled log may or may not have used
    partial: dict[str, str] = {}  # entry id: the half the kernel shows and the half it lacks
    ops, profile_path, op_named = workload_ops(ctx, family)
    rows = _recorded_rows(ops, profile_path)
    for entry in fundamentals:
        entry_id = getattr(entry, "id", "")
        if entry_id in tried_ids:
            present.append(entry_id)
            continue
        # The buffer-persistence item reads the launcher's code; this item agrees with it
        # (``out: Tensor | None = None`` filled behind ``if out is None:`` takes out=).
        if kernels and (
            present_in(entry, kernels) is not None
            or (entry_id == _BUFFERS and persistent_buffers(kernels) is not None)
        ):
            present.append(entry_id)
            continue
        # A profile shows the kernel was measured, not which way: a measuring technique
        # is then neither missing nor tried, and the item says it was not judged.
        if entry_id in MEASUREMENT and profiled:
            unjudged.append(entry_id)
            continue
        # Host-clock timings time no GPU kernel: item 4 says what to measure and where,
        # and the kernel's source lacks nothing a GPU is needed for.
        if entry_id in MEASUREMENT and host_clock:
            deferred.append(entry_id)
            continue
        if entry_id in unseen:
            unchecked.append(entry_id)
            continue
        # Calls of one query row have no tile past the diagonal, a row read in one tile no
        # second pass to fold away, a kernel without a causal mask no tile to skip. What
        # the calls recorded comes first: it does not depend on which file was read.
        why = ruled_out_by_workload(entry, ops, profile_path) or needless_in(entry, kernels, rows)
        if why is not None:
            needless[entry_id] = f"{entry_id}: not needed, {why}."
            continue
        half = partly_in(entry, kernels)
        if half is not None:
            source, line, _text = half.where
            partial[entry_id] = (
                f"{entry_id}: partly in the kernel, {half.shown} ({source.path}:{line}), but "
                f"not {half.lacking}."
            )
            continue
        absent.append(entry)
    if unchecked:
        missing_data.append(HOST_LAUNCHER)
    unchecked_text = (
        f" {', '.join(unchecked)} could not be checked: the kernel source read holds kernels "
        "only, no host code."
        if unchecked
        else ""
    )
    needless_text = "".join(f" {text}" for text in (*partial.values(), *needless.values()))
    deferred_text = (
        f" {', '.join(deferred)} {'is' if len(deferred) == 1 else 'are'} left to item 4 (wrong "
        f"bottleneck), which says what a log timed only on a CPU lacks: every timing names a "
        f"CPU as its device ({host_clock})."
        if deferred
        else ""
    )
    unjudged_text = (
        f" {and_list(unjudged)}: {'a way' if len(unjudged) == 1 else 'ways'} of measuring the "
        "kernel, not judged (the log holds profiling data, but no experiment is tagged with "
        f"{'it' if len(unjudged) == 1 else 'them'})."
        if unjudged
        else ""
    )
    if not absent:
        excepted = [*unchecked, *partial, *needless, *deferred, *unjudged]
        tried = (
            f"Every fundamental of '{family}'"
            + (f" but {', '.join(excepted)}" if excepted else "")
            + f" is tried or in the kernel ({', '.join(present)})."
            if present or not (needless or deferred or partial or unjudged)
            else ""
        )
        sentence = tried + needless_text + deferred_text + unchecked_text + unjudged_text
        return not_found(_PATHOLOGY, sentence.strip(), missing_data)
    names = ", ".join(f"{getattr(e, 'name', e.id)} ({e.id})" for e in absent)
    where = (
        f"in {', '.join(k.path for k in kernels[:2])}" if kernels else "(kernel source not found)"
    )
    # A family named only in prose (a word of CLAUDE.md) may describe a step of the kernel
    # rather than the kernel: its fundamentals are less surely the kernel's.
    by_words = ctx.family_by_words if params.family is None and not op_named else ""
    words_text = (
        f" The {family} family is read from words alone ({by_words}), not from the kernel's "
        "name or a profiled op: pass the family if the kernel is of another."
        if by_words
        else ""
    )
    summary = (
        f"For the {family} family, {names} {'is' if len(absent) == 1 else 'are'} standard, but no "
        f"experiment "
        f"tried {'it' if len(absent) == 1 else 'them'} and the kernel {where} shows no trace."
        + words_text
        + needless_text
        + deferred_text
        + unchecked_text
    )
    evidence = list(ctx.family_evidence[:2])
    evidence.append(
        Evidence(
            quote=f"{count_text(len(ctx.experiments), 'experiment')} read; none tagged "
            f"{', '.join(e.id for e in absent)}"
        )
    )
    for source in kernels[:1]:
        evidence.append(
            Evidence(
                quote=quote(
                    f"{source.path}: {count_text(len(source.text.splitlines()), 'line')}, no match"
                ),
                source=source.path,
            )
        )
    actions = []
    for entry in absent:
        when = quote(getattr(entry, "summary", "") or "", 140)
        text = f"Add {getattr(entry, 'name', entry.id)}" + (
            f" (applies to: {when})" if when else ""
        )
        actions.append(ctx.action(text, entry.id))
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=(),
        severity=Severity.HIGH,
        confidence=round((0.8 if kernels else 0.55) - (0.2 if by_words else 0.0), 2),
        evidence=evidence,
        actions=actions,
        missing=missing_data,
    )
    return found(finding)
