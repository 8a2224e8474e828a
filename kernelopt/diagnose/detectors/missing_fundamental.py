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
Online softmax is not needed where the kernel reads each row whole in one tile, with no loop
over the reduced axis (:func:`kernelopt.diagnose.presence.one_tile_row`): it only saves a
second pass over a row that takes several tiles, so such a kernel is not told to add it.
The measuring techniques (:data:`kernelopt.diagnose.context.MEASUREMENT`) show in the log,
not in code; where every timing names a CPU as its device they are left to the
wrong-bottleneck item, which says what such a log lacks, rather than reported twice.
"""

from __future__ import annotations

from typing import Any

from kernelopt._words import count_text
from kernelopt.diagnose.context import HOST_LAUNCHER, MEASUREMENT, Context, quote
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import MissingFundamentalParams
from kernelopt.diagnose.presence import CODE_PATTERNS, one_tile_row, present_in
from kernelopt.diagnose.source import device_only, persistent_buffers

__all__ = ["CODE_PATTERNS", "detect", "present_in"]

_PATHOLOGY = Pathology.MISSING_FUNDAMENTAL

_BUFFERS = "buffer-persistence"
_ONLINE_SOFTMAX = "online-softmax"


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
        if entry_id in MEASUREMENT and profiled:
            present.append(entry_id)
            continue
        # Host-clock timings time no GPU kernel: item 4 says what to measure and where,
        # and the kernel's source lacks nothing a GPU is needed for.
        if entry_id in MEASUREMENT and host_clock:
            deferred.append(entry_id)
            continue
        if entry_id in unseen:
            unchecked.append(entry_id)
            continue
        # A row read in one tile has no second pass for online softmax to fold away.
        row = one_tile_row(kernels) if entry_id == _ONLINE_SOFTMAX and kernels else None
        if row is not None:
            needless[entry_id] = (
                f"{entry_id}: not needed, the kernel reads each row in one tile "
                f"({row[0].path}:{row[1]})."
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
    needless_text = "".join(f" {text}" for text in needless.values())
    deferred_text = (
        f" {', '.join(deferred)} {'is' if len(deferred) == 1 else 'are'} left to item 4 (wrong "
        f"bottleneck), which says what a log timed only on a CPU lacks: every timing names a "
        f"CPU as its device ({host_clock})."
        if deferred
        else ""
    )
    if not absent:
        excepted = [*unchecked, *needless, *deferred]
        tried = (
            f"Every fundamental of '{family}'"
            + (f" but {', '.join(excepted)}" if excepted else "")
            + f" is tried or in the kernel ({', '.join(present)})."
            if present or not (needless or deferred)
            else ""
        )
        sentence = tried + needless_text + deferred_text + unchecked_text
        return not_found(_PATHOLOGY, sentence.strip(), missing_data)
    names = ", ".join(f"{getattr(e, 'name', e.id)} ({e.id})" for e in absent)
    where = (
        f"in {', '.join(k.path for k in kernels[:2])}" if kernels else "(kernel source not found)"
    )
    summary = (
        f"For the {family} family, {names} {'is' if len(absent) == 1 else 'are'} standard, but no "
        f"experiment "
        f"tried {'it' if len(absent) == 1 else 'them'} and the kernel {where} shows no trace."
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
        confidence=0.8 if kernels else 0.55,
        evidence=evidence,
        actions=actions,
        missing=missing_data,
    )
    return found(finding)
