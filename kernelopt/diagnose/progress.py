"""Where an effort stands: gains over the best so far, new bests, the trailing stall.

Numbers are compared only with numbers of the same kind and unit: the headline metric the
log mostly reports (latency, speedup or throughput), or — for logs that report several
regimes per experiment (``tiny``, ``default``, ``causal``) — each named point with itself;
an experiment's gain is then its best gain over any point. Headlines measured at different
trial points (``Experiment.headline_point``: an effort that moved from the 128-head point
to the 16-head one) are different quantities too, and are compared point by point. Only
experiments that were kept (or whose fate the log does not say) and did not fail
correctness can set a new best: a reverted change, however fast, is not the kernel the next
experiment starts from.
"""

from __future__ import annotations

from collections import Counter

import attrs

from kernelopt.experiments.log import Experiment, MetricKind
from kernelopt.experiments.records import Correctness, Status

__all__ = ["HEADLINE", "Progress", "Step", "analyze", "headline_key"]

HEADLINE = "headline"

_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
_NOT_BEST = (Status.REVERTED, Status.NEUTRAL, Status.FAILED)


@attrs.frozen(kw_only=True)
class Step:
    """One experiment as progress sees it.

    ``counted``: an attempt that could have moved the best and whose outcome is known
    (measured, or reverted/neutral/failed). ``gain``: relative improvement over the best
    before it (0 when it did not improve, None when unknown). ``values``: its comparable
    numbers, higher-is-better (latencies negated, in microseconds).
    """

    experiment: Experiment
    counted: bool
    eligible: bool
    gain: float | None
    values: dict[str, float]


def headline_key(key: str) -> bool:
    """Whether a value key names a headline number (at one trial point or without one)."""
    return key == HEADLINE or key.startswith(HEADLINE + " @ ")


def _values(experiment: Experiment, kind: MetricKind | None, by_point: bool) -> dict[str, float]:
    """Higher-is-better numbers keyed by what they measure (comparable across experiments)."""
    found: dict[str, float] = {}
    head = HEADLINE
    if by_point and experiment.headline_point:
        head = f"{HEADLINE} @ {experiment.headline_point}"
    if kind is MetricKind.LATENCY and experiment.latency is not None and experiment.latency > 0:
        scale = _TO_US.get(experiment.unit or "", 1.0)
        found[head] = -experiment.latency * scale
    elif kind is MetricKind.SPEEDUP and experiment.speedup is not None and experiment.speedup > 0:
        found[head] = experiment.speedup
    elif (
        kind is MetricKind.THROUGHPUT
        and experiment.throughput is not None
        and experiment.throughput > 0
    ):
        found[head] = experiment.throughput
    if found:
        return found
    for point in experiment.points:
        if point.value <= 0:
            continue
        if point.kind is MetricKind.LATENCY:
            found[f"{point.name}|latency"] = -point.value * _TO_US.get(point.unit, 1.0)
        else:
            found[f"{point.name}|{point.kind.value}|{point.unit}"] = point.value
    return found


def _relative(new: float, old: float) -> float:
    """Relative improvement of higher-is-better ``new`` over ``old`` (latencies are negative)."""
    if old == 0:
        return 0.0
    return (new - old) / abs(old)


def headline_kind(experiments: tuple[Experiment, ...]) -> MetricKind | None:
    """The headline metric most experiments report (ties: latency, speedup, throughput)."""
    counts: Counter[MetricKind] = Counter()
    for e in experiments:
        if e.latency is not None:
            counts[MetricKind.LATENCY] += 1
        if e.speedup is not None:
            counts[MetricKind.SPEEDUP] += 1
        if e.throughput is not None:
            counts[MetricKind.THROUGHPUT] += 1
    if not counts:
        return None
    order = [MetricKind.LATENCY, MetricKind.SPEEDUP, MetricKind.THROUGHPUT]
    return max(order, key=lambda k: (counts[k], -order.index(k)))


@attrs.frozen(kw_only=True)
class Progress:
    """The steps of the primary series with their gains, and the queries detectors ask."""

    steps: tuple[Step, ...]
    kind: MetricKind | None

    def stall(self, min_gain: float) -> tuple[Step, ...]:
        """The longest trailing run of steps over which the best improved by less than
        ``min_gain`` in total (every step in it was < ``min_gain`` better, too)."""
        best_after = self._bests()
        count = len(self.steps)
        start = count
        for index in range(count - 1, -1, -1):
            before = best_after[index - 1] if index > 0 else {}
            end = best_after[count - 1] if count else {}
            total = max((_relative(end[k], before[k]) for k in end if k in before), default=0.0)
            step = self.steps[index]
            single = step.gain or 0.0
            if total >= min_gain or single >= min_gain:
                break
            start = index
        return self.steps[start:]

    def counted(self, steps: tuple[Step, ...] | None = None) -> tuple[Step, ...]:
        """The counted attempts among ``steps`` (all steps by default)."""
        return tuple(s for s in (self.steps if steps is None else steps) if s.counted)

    def _bests(self) -> list[dict[str, float]]:
        bests: list[dict[str, float]] = []
        current: dict[str, float] = {}
        for step in self.steps:
            if step.eligible:
                for key, value in step.values.items():
                    if key not in current or value > current[key]:
                        current[key] = value
            bests.append(dict(current))
        return bests

    def trajectory(self, min_gain: float = 0.0) -> list[tuple[Step, float]]:
        """Steps that set a new best by at least ``min_gain``, with that gain."""
        return [
            (s, s.gain)
            for s in self.steps
            if s.gain is not None and s.gain > min_gain and s.eligible
        ]

    def best(self) -> Step | None:
        """The step holding the best headline (or best on most points).

        With headlines at several trial points, the best at the point of the latest
        measured headline (kept or not) that a kept experiment also measured: where the
        effort stands now.
        """
        held = {k for s in self.steps if s.eligible for k in s.values if headline_key(k)}
        # The point the latest attempt measured, kept or not, if anything kept was measured
        # there: a reverted try at the 16-head point means the effort works on that point.
        latest = [k for s in self.steps for k in s.values if k in held]
        key = latest[-1] if latest else HEADLINE
        best: Step | None = None
        best_value: float | None = None
        for step in self.steps:
            if not step.eligible or key not in step.values:
                continue
            if best_value is None or step.values[key] > best_value:
                best, best_value = step, step.values[key]
        if best is None:
            scored = [s for s in self.steps if s.eligible and s.values]
            return scored[-1] if scored else None
        return best


def analyze(experiments: tuple[Experiment, ...]) -> Progress:
    """Compute every experiment's gain over the best before it.

    A number counts only when the same quantity (the headline, or one named point) is
    reported by at least two experiments: a one-off ablation table measures something else.
    """
    kind = headline_kind(experiments)
    # One trial point for every headline that names one (or none named): one quantity.
    by_point = len({e.headline_point for e in experiments if e.headline_point}) > 1
    raw = [_values(e, kind, by_point) for e in experiments]
    occurrences = Counter(key for values in raw for key in values)
    best: dict[str, float] = {}
    seen: set[str] = set()
    steps = []
    for experiment, found in zip(experiments, raw, strict=True):
        # A headline at its own trial point counts even as the first there.
        values = {
            k: v for k, v in found.items() if occurrences[k] >= 2 or k.startswith(HEADLINE + " @ ")
        }
        eligible = (
            (experiment.attempted or experiment.status is Status.BASELINE)
            and experiment.status not in _NOT_BEST
            and experiment.correctness is not Correctness.FAIL
        )
        gains = [_relative(v, best[k]) for k, v in values.items() if k in best]
        gain: float | None
        if not experiment.attempted or experiment.status is Status.BASELINE:
            gain = None
        elif not eligible:
            gain = 0.0  # a reverted or failed change moved nothing
        elif gains:
            gain = max(0.0, max(gains))
        elif by_point and experiment.headline_point and (experiment.speedup or 0.0) > 0:
            # The first kept headline at its point: the log's own A/B against the kernel it
            # started from (a result row's speedup over its baseline) is the gain.
            gain = max(0.0, (experiment.speedup or 1.0) - 1.0)
        else:
            gain = None  # first number of its kind: nothing to compare with
        measured = bool(values)
        # A kept change measured at a trial point no earlier experiment measured (a new
        # cache format, a new shape) opens that point; unless its own A/B shows a gain it
        # is not an attempt on the best, so it neither gains nor stalls.
        heads = [k for k in values if headline_key(k)]
        opens_point = (
            eligible
            and by_point
            and bool(experiment.headline_point)
            and bool(heads)
            and not any(k in seen for k in heads)
            and not gain
        )
        if opens_point:
            gain = None
        seen.update(values)
        counted = (
            experiment.attempted
            and experiment.status is not Status.BASELINE
            and not opens_point
            and (
                measured
                or experiment.status in _NOT_BEST
                or experiment.correctness is Correctness.FAIL
            )
        )
        if eligible:
            for key, value in values.items():
                if key not in best or value > best[key]:
                    best[key] = value
        steps.append(
            Step(
                experiment=experiment,
                counted=counted,
                eligible=eligible and measured,
                gain=gain,
                values=values,
            )
        )
    return Progress(steps=tuple(steps), kind=kind)
