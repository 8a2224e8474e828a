"""3. Correctness wall: the latest attempts keep failing correctness.

Counts trailing consecutive correctness failures (attempts whose correctness is unknown are
skipped; a pass ends the run), then checks the kernel text (the kernel CLAUDE.md names, else
the latest failing attempt's snapshot) for the seed's numeric suspects:
a ``tl.dot`` at tf32 (set so, or float32 operands at the default), an LSE base mismatch
(exp2 vs ln), -inf masking without a fully-masked-row guard, and bf16/fp16 accumulation.
For the dot the seed's ladder is tf32x3 → tf32 → ieee; a dot found at tf32 skips the
middle rung, since tf32 is the setting that fails (tf32x3, then ieee). The finding calls
the failures numerical only when one of those shows in the text; otherwise it says so and
points at the failing changes themselves (an attempt that drops needed work fails for
reasons no precision setting fixes). The generic checks of the suspects are listed only
when no kernel text could be read: a text that was read and shows none has answered them.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernelopt.diagnose.context import Context, experiments_text, quote
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import CorrectnessWallParams
from kernelopt.diagnose.source import precision_suspects
from kernelopt.experiments.log import Experiment, KernelSource
from kernelopt.experiments.records import Correctness

__all__ = ["detect", "trailing_failures"]

_PATHOLOGY = Pathology.CORRECTNESS_WALL
_GENERIC = (
    (
        "dot-input-precision",
        "If a tl.dot takes float32 operands, walk the ladder input_precision='tf32x3' → "
        "'tf32' → 'ieee' and compare each (skip the rung the kernel already runs; tf32 "
        "settings do not change bf16/fp16 dots).",
    ),
    (
        "lse-base-mismatch",
        "Check the LSE base: exp2 with a log2(e)-folded scale needs lse = m*ln2 + log(l).",
    ),
    (
        "unguarded-fully-masked-rows",
        "Check softmax masking: fully masked rows must not compute exp(-inf - -inf).",
    ),
    ("bf16-accumulation", "Check accumulators: keep them fp32 and cast once at the store."),
)


def trailing_failures(experiments: tuple[Experiment, ...]) -> list[Experiment]:
    """The most recent consecutive correctness failures (unknowns skipped, a pass stops)."""
    failures: list[Experiment] = []
    for experiment in reversed(experiments):
        if not experiment.attempted or experiment.correctness is Correctness.UNKNOWN:
            continue
        if experiment.correctness is Correctness.PASS:
            break
        failures.append(experiment)
    failures.reverse()
    return failures


def _wall_kernels(ctx: Context, failures: Sequence[Experiment]) -> tuple[KernelSource, ...]:
    """The kernel text to look for the numeric suspects in: the kernel CLAUDE.md names when
    it stands, else the full snapshots of the latest failing attempt that left any (the
    numbers went wrong there; the kept kernel before the wall never failed), else the kernel
    as it stands."""
    standing = ctx.kernels
    if any(k.role == "kernel" for k in standing):
        return standing
    for experiment in reversed(failures):
        found = ctx.snapshots.get(experiment.number)
        if found:
            return found
    return standing


def _last_pass(experiments: tuple[Experiment, ...], first_failure: Experiment) -> Experiment | None:
    """The latest attempt before ``first_failure`` that passed correctness."""
    before = experiments[: experiments.index(first_failure)]
    return next(
        (e for e in reversed(before) if e.attempted and e.correctness is Correctness.PASS), None
    )


def detect(ctx: Context, params: CorrectnessWallParams) -> Outcome:
    """Report ``min_failures`` trailing correctness failures, with the suspects found."""
    experiments = ctx.experiments
    known = [e for e in experiments if e.correctness is not Correctness.UNKNOWN]
    if not known:
        return not_found(
            _PATHOLOGY,
            "No experiment records a correctness verdict, so a correctness wall cannot be ruled "
            "in or out.",
            ["correctness per experiment (PASS/FAIL in summary.md or result.md)"],
        )
    failures = trailing_failures(experiments)
    all_failures = [e for e in experiments if e.correctness is Correctness.FAIL]
    if len(failures) < params.min_failures:
        detail = (
            f"{len(all_failures)} failure(s) in the log "
            f"({experiments_text([e.number for e in all_failures])}), "
            if all_failures
            else "No correctness failures in the log; "
        )
        return not_found(
            _PATHOLOGY,
            detail
            + f"{len(failures)} among the latest attempts: no wall (needs {params.min_failures} "
            f"in a row).",
        )
    numbers = [e.number for e in failures]
    kernels = _wall_kernels(ctx, failures)
    missing: list[str] = []
    suspects = precision_suspects(kernels) if kernels else []
    if not kernels:
        missing.append(
            "kernel source (CLAUDE.md kernel path or exp_N snapshot) to check the numeric suspects"
        )
    hits = [s for s in suspects if s.found]
    evidence: list[Evidence] = [
        ctx.evidence(e, f"{e.label}: {e.description} — FAIL", "correctness") for e in failures[:6]
    ]
    evidence += [Evidence(quote=quote(s.text), source=f"{s.path}:{s.line}") for s in hits]
    actions = [ctx.action(f"{s.name}: {s.advice}.", s.catalog_id) for s in hits]
    last_pass = _last_pass(experiments, failures[0])
    reference = f"{last_pass.label}, the last that passed" if last_pass else "the reference"
    actions.append(
        ctx.action(
            f"Diff each failing change against {reference}: a change that skips, replaces or "
            "reorders work the result needs fails whatever the precision; restore that work "
            "first, then bisect what is left."
        )
    )
    # A kernel text that was read and shows no suspect has answered the generic checks;
    # they are advice only when nothing could be read.
    for catalog_id, text in () if kernels else _GENERIC:
        actions.append(ctx.action(text, catalog_id))
    if hits:
        cause = "Numeric suspects in the kernel text: " + ", ".join(s.name for s in hits) + "."
    elif kernels:
        cause = (
            "No numeric suspect (a tf32 dot on float32 operands, a mismatched log base, "
            "unguarded -inf masking, a low-precision accumulator) shows in the kernel text: "
            "check what the failing changes do before their precision."
        )
    else:
        cause = "The kernel text could not be checked for numeric suspects."
    # Attempts without a verdict neither join nor break the run, but "the last N attempts"
    # must not hide them.
    silent = [
        e.number
        for e in experiments
        if e.attempted and e.correctness is Correctness.UNKNOWN and e.number > numbers[0]
    ]
    summary = (
        f"The latest {len(failures)} attempts with a verdict ({experiments_text(numbers)}) "
        f"all fail correctness ({experiments_text(silent)} "
        f"record{'s' if len(silent) == 1 else ''} none). "
        if silent
        else f"The last {len(failures)} attempts ({experiments_text(numbers)}) all fail "
        "correctness. "
    ) + cause
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=numbers,
        severity=Severity.HIGH,
        confidence=round(
            min(0.95, 0.7 + 0.05 * (len(failures) - params.min_failures) + (0.1 if hits else 0)), 2
        ),
        evidence=evidence,
        actions=actions,
        missing=missing,
    )
    return found(finding)
