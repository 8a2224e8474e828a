"""2. Local minimum: five or more recent attempts, each under 5 % better, on the same design.

The stall is the longest trailing run of attempts over which the best result improved by
less than ``min_gain`` in total; a structural change that gains ``min_gain`` ends it (that
is how "same design" is recognized from numbers alone).
"""

from __future__ import annotations

from kernelopt._words import count_text
from kernelopt.diagnose.context import Context, attempts_text, experiments_text
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Finding, Pathology, Severity
from kernelopt.diagnose.params import LocalMinimumParams

__all__ = ["detect"]

_PATHOLOGY = Pathology.LOCAL_MINIMUM

SAME_TWICE = "two experiments measuring the same metric at the same point (a gain compares two)"


def detect(ctx: Context, params: LocalMinimumParams) -> Outcome:
    """Report a trailing stall of at least ``min_experiments`` attempts."""
    progress = ctx.progress
    measured = [s for s in progress.steps if s.values]
    lone = ctx.lone_number()
    if not measured and lone:
        # A number is there, but a gain compares two: the column is not missing.
        return not_found(
            _PATHOLOGY,
            f"Only {lone}: a gain needs the same number from two experiments, so none can "
            "be tracked yet.",
            ["a second experiment measuring the same number (a gain compares two)"],
        )
    unshared = ctx.unshared_numbers()
    if not measured and unshared:
        # Numbers are there, from several experiments, but never the same one twice.
        return not_found(
            _PATHOLOGY,
            f"No two experiments report the same metric at the same point ({unshared}): a "
            "gain needs the same number from two experiments, so none can be tracked yet.",
            [SAME_TWICE],
        )
    if not measured:
        return not_found(
            _PATHOLOGY,
            "No experiment reports a comparable number (latency, speedup or throughput), so gains "
            "cannot be tracked.",
            ["measured latency or speedup per experiment (summary.md Latency column or result.md)"],
        )
    stall = progress.stall(params.min_gain)
    attempts = progress.counted(stall)
    if len(attempts) < params.min_experiments:
        return not_found(
            _PATHOLOGY,
            f"{attempts_text(len(attempts))} since the best last moved by {params.min_gain:.0%} "
            f"or more: "
            f"no plateau (needs {params.min_experiments}).",
        )
    numbers = [s.experiment.number for s in attempts]
    best_before = None
    first_index = progress.steps.index(stall[0])
    for step in reversed(progress.steps[:first_index]):
        if step.eligible and step.values:
            best_before = step.experiment
            break
    gains = [s.gain for s in attempts if s.gain is not None]
    largest = max(gains, default=0.0)
    kept = [s.experiment for s in attempts if s.eligible and (s.gain or 0) > 0]
    summary = (
        f"{count_text(len(attempts), 'consecutive attempt')} ({experiments_text(numbers)}) "
        "improved the best by "
        f"less than "
        f"{params.min_gain:.0%} in total (largest single gain {largest:.1%})"
        + (
            f"; the best still comes from {best_before.mention}"
            if best_before is not None and not kept
            else ""
        )
        + ": the design is at a local minimum."
    )
    evidence = []
    if best_before is not None:
        evidence.append(
            ctx.evidence(
                best_before,
                f"best before the plateau: {best_before.mention} {ctx.value_at(best_before)}",
                "latency",
            )
        )
    for step in attempts[-6:]:
        e = step.experiment
        gain = "" if step.gain is None else f" ({step.gain:+.1%}"
        gain += ", in its own run)" if step.same_run else ")" if gain else ""
        status = e.status.value if e.status is not None else "?"
        evidence.append(
            ctx.evidence(
                e, f"{e.label}: {ctx.value_at(e) or 'no number'} {status}{gain}", "latency"
            )
        )
    actions = [
        ctx.action(
            "Stop tuning this design; re-profile the current best (time per stage, DRAM% and TC% "
            "against the "
            "roofline) and choose a structural change that attacks the measured bottleneck.",
            "roofline-analysis",
        )
    ]
    # Profiling data as every item counts it: a plan must not call a kernel it placed on
    # the roofline unprofiled.
    if not ctx.profiled:
        actions.append(
            ctx.action(
                "Instrument with CUDA events first: no profile was found.",
                "cuda-event-instrumentation",
            )
        )
    severity = Severity.HIGH if len(attempts) >= 2 * params.min_experiments else Severity.MEDIUM
    confidence = min(
        0.95,
        0.6
        + 0.05 * (len(attempts) - params.min_experiments)
        + (0.1 if len(gains) >= params.min_experiments else 0),
    )
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=numbers,
        severity=severity,
        confidence=round(confidence, 2),
        evidence=evidence,
        actions=actions,
    )
    return found(finding)
