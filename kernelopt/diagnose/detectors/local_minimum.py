"""2. Local minimum: five or more recent attempts, each under 5 % better, on the same design.

The stall is the longest trailing run of attempts over which the best result improved by
less than ``min_gain`` in total; a structural change that gains ``min_gain`` ends it (that
is how "same design" is recognized from numbers alone). The best is the headline's (a
result's first row); a kept attempt that made another trial point of its result
``min_gain`` or more faster than the best kept time there
(:meth:`kernelopt.diagnose.context.Context.point_moves`) ends it as well, and is named.
"""

from __future__ import annotations

from kernelopt._words import count_text
from kernelopt.diagnose.context import Context, attempts_text, experiments_text
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Finding, Pathology, Severity
from kernelopt.diagnose.params import LocalMinimumParams
from kernelopt.diagnose.progress import Step, is_reference, own_ab_reading, same_point
from kernelopt.experiments.log import ABVerdict, Experiment
from kernelopt.experiments.records import Correctness

__all__ = ["detect", "recorded_ab_gain"]

_PATHOLOGY = Pathology.LOCAL_MINIMUM

SAME_TWICE = "two experiments measuring the same metric at the same point (a gain compares two)"


def _largest_own_step(attempts: tuple[Step, ...]) -> tuple[float, Experiment] | None:
    """The largest gain of an attempt over the best of the kernel's own experiments before
    it (baselines left out), with that attempt; None where no attempt has one."""
    own = [(s.own_gain, s.experiment) for s in attempts if s.own_gain is not None]
    if not own:
        return None
    # The first of equal gains: the step that got there.
    return max(own, key=lambda pair: (pair[0], -pair[1].number))


def recorded_ab_gain(step: Step) -> float | None:
    """A kept attempt's gain as its own A/B recorded it: a FAST verdict with the speedup it
    states (:attr:`Experiment.verdict_speedup`, else the result's :attr:`Experiment.speedup`),
    as the share of time saved where the attempt has a latency, else the share of rate
    gained; None for an attempt not kept or with no such verdict.

    The verdict compared the attempt with the kernel it replaced in one run; the headlines
    around it may not (a first time on a GPU after host-clock times), so it is the only word
    on that step's gain."""
    experiment = step.experiment
    speedup = experiment.verdict_speedup or experiment.speedup
    if not step.eligible or experiment.verdict is not ABVerdict.FAST:
        return None
    if speedup is None or speedup <= 1.0:
        return None
    return 1.0 - 1.0 / speedup if experiment.latency is not None else speedup - 1.0


def _single_gain(step: Step) -> float | None:
    """An attempt's gain: the larger of what its headline gained over the best and what its
    own A/B recorded (:func:`recorded_ab_gain`)."""
    gains = [g for g in (step.gain, recorded_ab_gain(step)) if g is not None]
    return max(gains, default=None)


def _ab_words(step: Step, gain: float) -> str:
    """Where a kept attempt moved the best by its own A/B: ``"exp 4 moved it by 10.3% by
    its own A/B: FAST, speedup 1.115x"``."""
    experiment = step.experiment
    speedup = experiment.verdict_speedup or experiment.speedup or 1.0
    return (
        f"{experiment.mention} moved it by {gain:.1%} by its own A/B: FAST, speedup {speedup:.4g}x"
    )


def _best_of(steps: list[Step], key: str) -> Step | None:
    """The step of ``steps`` with the best number under value key ``key``; None where none
    measured it."""
    measured = [s for s in steps if s.eligible and key in s.values]
    return max(measured, key=lambda s: s.values[key]) if measured else None


def _baseline(ctx: Context) -> Step | None:
    """The best baseline step (a reference, not a change of the kernel) on the number the
    best is kept on; None where no baseline measured it."""
    steps = [s for s in ctx.progress.steps if is_reference(s.experiment)]
    return _best_of(steps, ctx.progress.best_key())


def _kernel_best(ctx: Context) -> Step | None:
    """The kernel's own best step (baselines left out) on the number the best is kept on."""
    steps = [s for s in ctx.progress.steps if not is_reference(s.experiment)]
    return _best_of(steps, ctx.progress.best_key())


def _named(ctx: Context, step: Step) -> str:
    """A step named with its number: ``"exp 1, 274.1 us"``."""
    value = ctx.value_at(step.experiment)
    return f"{step.experiment.mention}, {value}" if value else step.experiment.mention


def _contested_words(step: Step) -> str:
    """Why a kernel time below the baseline's is no gain over it, where its own A/B does
    not show it faster (:attr:`Step.contested`): ``"; timed in another run, and its own
    A/B reads 0.84x"`` (``"... its own A/B verdict is UNCLEAR (speedup 1.19x)"`` with a
    verdict); ``""`` otherwise."""
    reading = own_ab_reading(step.experiment) if step.contested is not None else ""
    return f"; timed in another run, and its own A/B {reading}" if reading else ""


def _over_own(experiment: Experiment) -> str:
    """Whose gain the largest own step is: ``"exp 5 over the kernel's best before it"``."""
    return f"{experiment.mention} over the kernel's best before it"


def _behind_text(
    ctx: Context,
    stalled: str,
    baseline: Step,
    own: tuple[float, Experiment] | None,
    min_gain: float,
) -> str:
    """The summary where the baseline still holds the best: the kernel is behind it, which
    is not the same state as a kernel whose gains stalled, and the sentence says so."""
    kernel = _kernel_best(ctx)
    text = f"{stalled} left the best with the baseline ({_named(ctx, baseline)})"
    text += ": the kernel has not beaten it" + (
        f" (its best: {_named(ctx, kernel)}{_contested_words(kernel)})"
        if kernel is not None
        else ""
    )
    if own is None:
        return text + ", and no step of its own improved on an earlier kernel number yet."
    if own[0] >= min_gain:
        return (
            f"{text}, though its own steps gained up to {own[0]:.1%} ({_over_own(own[1])}): "
            "it is still behind its baseline and catching up, not at a plateau of its own gains."
        )
    return (
        f"{text}, and its own steps gained at most {own[0]:.1%} ({_over_own(own[1])}): "
        "the design is at a local minimum below its baseline."
    )


def _since_words(attempts: tuple[Step, ...], recorded: bool, min_gain: float) -> str:
    """The attempts counted since the best last moved, in words: ``"4 attempts since the
    best last moved by 5% or more"``; where the log records no best (every attempt
    reverted), there is none to have moved: ``"4 attempts, none kept, and no best recorded
    to move"``."""
    counted = attempts_text(len(attempts))
    if recorded:
        return f"{counted} since the best last moved by {min_gain:.0%} or more"
    if not attempts:
        return f"{counted}, and no best recorded to move"
    # An attempt counts once its outcome is known: measured (and so a best, had it been
    # kept) or reverted, neutral or failed. With no best, none of them was kept.
    return f"{counted}, none kept, and no best recorded to move"


def _caught_up_text(
    ctx: Context,
    stalled: str,
    baseline: Step | None,
    own: tuple[float, Experiment],
    min_gain: float,
) -> str:
    """The summary where the kernel's own steps gained more than the best moved: a baseline
    held the best, and the kernel came level with it but not past it by ``min_gain``."""
    held = f" ({_named(ctx, baseline)})" if baseline is not None else ""
    return (
        f"{stalled} improved the best by less than {min_gain:.0%} in total: the baseline{held} "
        f"held the best before them, and the kernel's own steps (largest single gain "
        f"{own[0]:.1%}, {_over_own(own[1])}) brought it level with the baseline but not past "
        f"it by {min_gain:.0%}; against the best so far, the design is at a local minimum."
    )


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
    recorded = progress.best() is not None
    # A kept attempt whose own A/B recorded a gain of min_gain or more moved the best, even
    # where no headline before it is comparable: the plateau starts after it.
    movers = [
        (i, ab_gain)
        for i, ab_gain in enumerate(recorded_ab_gain(s) for s in attempts)
        if ab_gain is not None and ab_gain >= params.min_gain
    ]
    moved = ""
    if movers:
        index, moved_by = movers[-1]
        moved = f" ({_ab_words(attempts[index], moved_by)})"
        attempts = attempts[index + 1 :]
    # The headline is one point of a result; a kept attempt that made another point the
    # experiments share min_gain or more faster moved the design there (a prefill row
    # beside a decode headline): the plateau starts after it too.
    best = progress.best()
    at = same_point(best.experiment.headline_point) if best is not None else ""
    window = {id(s.experiment): i for i, s in enumerate(attempts)}
    elsewhere = [
        m
        for m in ctx.point_moves(params.min_gain)
        if id(m.experiment) in window and same_point(m.point) != at
    ]
    if elsewhere:
        last = elsewhere[-1]
        moved += f" ({last.text()}, a trial point other than the headline's)"
        attempts = attempts[window[id(last.experiment)] + 1 :]
    if len(attempts) < params.min_experiments:
        return not_found(
            _PATHOLOGY,
            f"{_since_words(attempts, recorded, params.min_gain)}{moved}: "
            f"no plateau (needs {params.min_experiments}).",
        )
    numbers = [s.experiment.number for s in attempts]
    best_before = None
    first_index = (
        progress.steps.index(attempts[0]) if movers or elsewhere else progress.steps.index(stall[0])
    )
    for step in reversed(progress.steps[:first_index]):
        if step.eligible and step.values:
            best_before = step.experiment
            break
    gains = [g for g in (_single_gain(s) for s in attempts) if g is not None]
    largest = max(gains, default=0.0)
    kept = [s.experiment for s in attempts if s.eligible and (s.gain or 0) > 0]
    stalled = f"{count_text(len(attempts), 'consecutive attempt')} ({experiments_text(numbers)})"
    own = _largest_own_step(attempts)
    if not recorded:
        summary = (
            f"{stalled}, none kept: the log records no best for them to move, "
            "and the design has not improved on where it started: it is at a local minimum."
        )
    elif best is not None and is_reference(best.experiment):
        summary = _behind_text(ctx, stalled, best, own, params.min_gain)
    elif own is not None and own[0] > largest:
        summary = _caught_up_text(ctx, stalled, _baseline(ctx), own, params.min_gain)
    else:
        summary = (
            f"{stalled} improved the best by less than {params.min_gain:.0%} in total "
            f"(largest single gain {largest:.1%})"
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
        if step.gain is not None and step.own_gain is not None and step.own_gain > step.gain:
            # Behind a baseline that holds the best, the step's own gain is the news.
            gain += f"; {step.own_gain:+.1%} over the kernel's best before it"
        gain += ", in its own run)" if step.same_run else ")" if gain else ""
        status = e.status.value if e.status is not None else "?"
        value = ctx.value_at(e)
        if not value:
            # An attempt with no time has no gain to show, and a failed check is the
            # reason it has none (the readers file a reverted failure as FAILED).
            failed = e.correctness is Correctness.FAIL
            said = "failed correctness, not timed" if failed else f"not timed, {status}"
            evidence.append(ctx.evidence(e, f"{e.label}: {said}", "latency"))
            continue
        evidence.append(ctx.evidence(e, f"{e.label}: {value} {status}{gain}", "latency"))
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
