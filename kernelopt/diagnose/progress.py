"""Where an effort stands: gains over the best so far, new bests, the trailing stall.

Numbers are compared only with numbers of the same kind and unit: the headline metric the
log mostly reports (latency, speedup or throughput), or — for logs that report several
regimes per experiment (``tiny``, ``default``, ``causal``) — each named point with itself;
an experiment's gain is then its best gain over any point. Headlines measured at different
trial points (``Experiment.headline_point``: an effort that moved from the 128-head point
to the 16-head one) are different quantities too, and are compared point by point. A
count of clock cycles is no time, and no time converts to it without the clock: a log
that counts most of its latencies in ``cycles`` compares its cycle counts with each other
and its times with nothing, any other compares its times and no cycle count
(``Progress.set_aside`` names what was left out). A log with as many of each sort goes
by its headline latencies' sort, or by its times where those tie too, and says so
(``Progress.unit_tie``). Only
experiments that were kept (or whose fate the log does not say) and did not fail
correctness can set a new best: a reverted change, however fast, is not the kernel the next
experiment starts from.

The baseline (``torch`` eager, a reference implementation) holds the best until the kernel
beats it, so a kernel still behind its baseline gains nothing over "the best" however much
its own steps improve it; each step's gain over the best of the kernel's own experiments
before it (baselines left out) is kept beside it (``Step.own_gain``).

Numbers from different runs drift (clocks under a power cap, another GPU, another day), so
where an experiment timed the kernel it started from in its own run, that A/B is its gain:
a headline latency with a speedup whose implied baseline time (latency × speedup) is the
best so far within ``SAME_KERNEL_TOLERANCE`` is read as a same-run comparison with that
kernel, and the gain is the time it saves there, not the difference between two runs.
Where the experiment names its GPU (``Experiment.gpu``) and the best was timed on another,
the implied baseline is compared with the best kept time on the experiment's own GPU
instead: a log that moved from one GPU to another keeps counting its A/Bs. A kept
experiment whose headline beats a best timed in another run while its own A/B does not
show it faster (a verdict other than FAST, ``Experiment.verdict``; without one, a speedup
below 1) claims no new best: the runs drifted (``Step.contested``).
"""

from __future__ import annotations

import math
from collections import Counter

import attrs

from kernelopt._numbers_text import significant
from kernelopt.experiments.log import ABVerdict, Experiment, MetricKind, Point
from kernelopt.experiments.points import canonical_axis, split_terms
from kernelopt.experiments.readers._values import CYCLES, LATENCY_UNITS, TO_US
from kernelopt.experiments.records import Correctness, Status

__all__ = [
    "HEADLINE",
    "NOISE_GAIN",
    "SAME_KERNEL_TOLERANCE",
    "Progress",
    "Regression",
    "Step",
    "UnitTie",
    "analyze",
    "contest_words",
    "headline_key",
    "is_reference",
    "own_ab_reading",
    "point_key",
    "same_point",
    "within_noise",
]

HEADLINE = "headline"

_NOT_BEST = (Status.REVERTED, Status.NEUTRAL, Status.FAILED)

SAME_KERNEL_TOLERANCE = 0.05
"""How far (relative) the baseline time an experiment's speedup implies may be from the
best so far for the speedup to be read as an A/B against that kernel in the same run."""

NOISE_GAIN = 0.01
"""The smallest gain (a fraction: 0.01 is 1 %) a new best shows beyond the noise of its
timing. The readers record no spread of a result, so no log states its own: a result's
A/B verdict is the only word on it, and a verdict other than FAST already claims no new
best (:attr:`Step.contested`). A gain under this share of the time (or of a rate) is the
size of the drift between two runs of one kernel, not a change the log can resolve, unless
its own A/B verdict is FAST (:func:`within_noise`)."""


def within_noise(gain: float | None, verdict: ABVerdict | None = None) -> bool:
    """Whether a new best's ``gain`` (a fraction) is within the noise of its timing: under
    :data:`NOISE_GAIN`, and not shown faster by the experiment's own A/B (``verdict``,
    :attr:`Experiment.verdict`, is not FAST). A FAST verdict compared the two kernels in
    one run with confidence, so its gain is measured, however small. A gain too large for
    a float (None) is no such gain."""
    return gain is not None and gain < NOISE_GAIN and verdict is not ABVerdict.FAST


@attrs.frozen(kw_only=True)
class Step:
    """One experiment as progress sees it.

    ``counted``: an attempt that could have moved the best and whose outcome is known
    (measured, or reverted/neutral/failed). ``gain``: relative improvement over the best
    before it (0 when it did not improve, None when unknown): for latencies the share of
    time saved, for rates the share gained, infinite when that share is more than a float
    holds (a rate from 5e-324 to 1e300). ``values``: its comparable numbers,
    higher-is-better (latencies negated, in microseconds, or in cycles in a log of cycle
    counts). ``gains``: the gain on each of
    those numbers that had a best before it. ``same_run``: the headline's gain is the
    experiment's own A/B against the best kernel, timed in its run. ``own_gain``: like
    ``gain``, over the best of the kernel's own experiments before it, baselines left out
    (None for a baseline, or the kernel's first number); it differs from ``gain`` only
    while a baseline holds the best. ``contested``: the gain its headline shows over the
    best, timed in another run, where its own A/B against the baseline it was timed with
    does not show it faster (its verdict, :attr:`Experiment.verdict`, is SLOW, SAME or
    UNCLEAR; without a verdict, a speedup below 1): numbers of two runs that its own
    comparison does not back are no new best, so ``gain`` and ``gains`` hold 0 for it
    (None when nothing was contested).
    """

    experiment: Experiment
    counted: bool
    eligible: bool
    gain: float | None
    values: dict[str, float]
    gains: dict[str, float] = attrs.field(factory=dict)
    same_run: bool = False
    own_gain: float | None = None
    contested: float | None = None


def is_reference(experiment: Experiment) -> bool:
    """Whether ``experiment`` measures a reference rather than a change of the kernel: a
    baseline, or an experiment that attempted nothing."""
    return not experiment.attempted or experiment.status is Status.BASELINE


def _us_per(unit: str | None, cycles: bool = False) -> float | None:
    """Microseconds in one ``unit`` of time; 1.0 for no unit (a log that states none
    compares its bare numbers with each other), None for a word that names no time
    (``cycles``), whose number is no latency to compare.

    In a log of ``cycles`` (a log that counts its latencies in clock cycles), the other
    way round: 1.0 for a cycle count or no unit, None for a time."""
    if not unit:
        return 1.0
    if cycles:
        return 1.0 if unit == CYCLES else None
    canonical = LATENCY_UNITS.get(unit.strip().lower())
    return TO_US[canonical] if canonical else None


@attrs.frozen(kw_only=True)
class UnitTie:
    """A log that states as many latencies in clock cycles as in time units.

    ``each``: how many of each sort it states (headlines and named points together).
    ``by_headline``: the headline latencies alone have more of one sort, and that sort is
    the one compared (False: they tie too, or the log has none, and its times are
    compared). Either way the reading is a choice the user should be told of.
    """

    each: int
    by_headline: bool


def _cycle_share(units: list[str]) -> tuple[int, int]:
    """How many of ``units`` are :data:`CYCLES`, and how many are something else."""
    counted = sum(unit == CYCLES for unit in units)
    return counted, len(units) - counted


def _counts_cycles(experiments: tuple[Experiment, ...]) -> tuple[bool, UnitTie | None]:
    """Whether the log counts most of its latencies in clock cycles (more stated units are
    :data:`CYCLES` than times), and the tie when as many are of each sort.

    A tie is broken by the headline latencies, the numbers the log reports first: their
    majority sort is compared. Where they tie too, or the log states none, its times are
    compared; the :class:`UnitTie` returned says which of the two happened."""
    headlines = [e.unit for e in experiments if e.latency is not None and e.unit]
    points = [
        p.unit for e in experiments for p in e.points if p.kind is MetricKind.LATENCY and p.unit
    ]
    cycles, times = _cycle_share(headlines + points)
    if cycles != times:
        return cycles > times, None
    if not cycles:
        return False, None
    head_cycles, head_times = _cycle_share(headlines)
    if head_cycles != head_times:
        return head_cycles > head_times, UnitTie(each=cycles, by_headline=True)
    return False, UnitTie(each=cycles, by_headline=False)


def headline_key(key: str) -> bool:
    """Whether a value key names a headline number (at one trial point or without one)."""
    return key == HEADLINE or key.startswith(HEADLINE + " @ ")


def same_point(text: str) -> str:
    """``text`` with its ``key=value`` terms sorted (axes by canonical name) before its other
    words: one key for a point however its axes are ordered (``rows=4 cols=4096`` and
    ``cols=4096 rows=4``). A key to compare by, not a spelling to show."""
    terms: list[str] = []
    words: list[str] = []
    for key, sep, value in split_terms(text):
        if sep:
            terms.append(f"{canonical_axis(key)}={value}")
        else:
            words.append(key)
    return " ".join(sorted(terms) + words)


def _values(
    experiment: Experiment,
    kind: MetricKind | None,
    by_point: bool,
    units_stated: bool = False,
    at: str = "",
    cycles: bool = False,
) -> dict[str, float]:
    """Higher-is-better numbers keyed by what they measure (comparable across experiments).

    With ``units_stated`` (other latencies of the log name their unit), a latency without a
    unit is not comparable with them: 40 next to 90 us and 0.05 ms could be either. ``at``
    is the headline's trial point as the log first spelled it."""
    found: dict[str, float] = {}
    head = HEADLINE
    if by_point and at:
        head = f"{HEADLINE} @ {at}"
    unknown_unit = units_stated and not experiment.unit
    scale = _us_per(experiment.unit, cycles)
    if (
        kind is MetricKind.LATENCY
        and experiment.latency is not None
        and experiment.latency > 0
        and not unknown_unit
        and scale is not None
    ):
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
        if point.kind is not MetricKind.LATENCY:
            found[point_key(point)] = point.value
            continue
        per_us = _us_per(point.unit, cycles)
        if per_us is not None:  # a cycle count is no time to compare with times
            found[point_key(point)] = -per_us * point.value
    return found


def _other_kinds(
    experiment: Experiment, kind: MetricKind | None, cycles: bool = False
) -> tuple[MetricKind, ...]:
    """The headline numbers ``experiment`` reports of kinds other than the log's headline
    ``kind`` (a speedup in a log of latencies), by kind: numbers :func:`_values` does not
    compare, since the log's headlines are of another kind. A latency of the other sort
    than the log's (a cycle count in a log of times, or the reverse) is none."""
    reported = (
        (MetricKind.LATENCY, experiment.latency, _us_per(experiment.unit, cycles) is not None),
        (MetricKind.SPEEDUP, experiment.speedup, True),
        (MetricKind.THROUGHPUT, experiment.throughput, True),
    )
    return tuple(
        metric
        for metric, value, timed in reported
        if metric is not kind and value is not None and value > 0 and timed
    )


def point_key(point: Point) -> str:
    """The key of a named point's number among a step's values (``"tiny|speedup|x"``,
    ``"causal|latency"``: latencies of any unit are one quantity)."""
    # Rows of one point written with their axes in another order are one number.
    name = same_point(point.name)
    if point.kind is MetricKind.LATENCY:
        return f"{name}|latency"
    return f"{name}|{point.kind.value}|{point.unit}"


def _key_kind(experiment: Experiment, key: str, headline: MetricKind | None) -> MetricKind:
    """What ``experiment``'s number under value key ``key`` measures: the log's
    ``headline`` kind for its headline, else the kind of the named point it came from."""
    if headline_key(key) and headline is not None:
        return headline
    return next(p.kind for p in experiment.points if point_key(p) == key)


def _can_be_best(experiment: Experiment) -> bool:
    """Whether ``experiment`` can hold the best: measured or changed something (or is the
    baseline), was not reverted, neutral or failed, and did not fail correctness."""
    return (
        (experiment.attempted or experiment.status is Status.BASELINE)
        and experiment.status not in _NOT_BEST
        and experiment.correctness is not Correctness.FAIL
    )


def _key_point(experiment: Experiment, key: str) -> Point:
    """The named point of ``experiment`` whose number is stored under value key ``key``
    (the first, where the log wrote the point twice)."""
    return next(p for p in experiment.points if point_key(p) == key)


def _rate_gain(kept: float) -> float:
    """The gain on a rate that keeps ``kept`` of its new value as the old one: infinite when
    ``kept`` is 0 (a gain too large for a float, or factors whose product underflowed)."""
    return 1.0 / kept - 1.0 if kept > 0.0 else math.inf


def _relative(new: float, old: float) -> float:
    """Relative improvement of higher-is-better ``new`` over ``old`` (latencies are negative)."""
    if old == 0:
        return 0.0
    return (new - old) / abs(old)


def _same_run_gain(experiment: Experiment, best_us: float, cycles: bool = False) -> float | None:
    """The share of time ``experiment`` saves over the best kernel in its own run, when its
    speedup is an A/B against that kernel (the implied baseline time is the best so far,
    ``best_us``, within :data:`SAME_KERNEL_TOLERANCE`); None otherwise. In a log of
    ``cycles``, ``best_us`` and the implied baseline are cycle counts."""
    latency, speedup = experiment.latency, experiment.speedup
    per_us = _us_per(experiment.unit, cycles)
    if (
        latency is None
        or latency <= 0
        or speedup is None
        or speedup <= 0
        or best_us <= 0
        or per_us is None
    ):
        return None
    latency_us = latency * per_us
    baseline_us = latency_us * speedup
    drift = abs(baseline_us - best_us)
    # A speedup that is the best's time over this headline, rounded as the log writes it
    # (0.52 for 274.1 / 531.4), is the log's own arithmetic on two headlines that already
    # say the same thing, unless it points the other way (slower by its A/B, faster by the
    # headlines): then it was timed, not computed. Beyond the tolerance it is against
    # another kernel.
    ratio = best_us / latency_us
    rounded = any(abs(round(ratio, digits) - speedup) <= 1e-9 for digits in (1, 2, 3, 4))
    computed = (speedup >= 1.0) == (latency_us <= best_us)
    near = drift <= 5e-3 * best_us or rounded
    if (near and computed) or drift > SAME_KERNEL_TOLERANCE * best_us:
        return None
    return _speedup_gain(speedup, MetricKind.LATENCY)


def _implied_baseline(experiment: Experiment, cycles: bool = False) -> float | None:
    """The baseline time ``experiment``'s speedup implies (its latency times its speedup,
    in microseconds, or cycles in a log of cycle counts); None without both numbers."""
    latency, speedup = experiment.latency, experiment.speedup
    per_us = _us_per(experiment.unit, cycles)
    if latency is None or latency <= 0 or speedup is None or speedup <= 0 or per_us is None:
        return None
    return latency * per_us * speedup


def _fixed_reference(
    experiment: Experiment, experiments: tuple[Experiment, ...], cycles: bool = False
) -> bool:
    """Whether ``experiment``'s speedup is against a fixed reference (torch eager, a
    baseline row) rather than the kernel it started from: the baseline time it implies is,
    within :data:`SAME_KERNEL_TOLERANCE`, the one another experiment's speedup implies or
    a baseline experiment's own time. Speedups over one reference keep implying its time."""
    implied = _implied_baseline(experiment, cycles)
    if implied is None:
        return False
    others: list[float | None] = []
    for other in experiments:
        if other is experiment:
            continue
        others.append(_implied_baseline(other, cycles))
        per_us = _us_per(other.unit, cycles)
        if is_reference(other) and other.latency is not None and per_us is not None:
            others.append(other.latency * per_us)
    return any(
        time is not None and abs(time - implied) <= SAME_KERNEL_TOLERANCE * implied
        for time in others
    )


def _contradicted(
    experiment: Experiment, experiments: tuple[Experiment, ...], cycles: bool = False
) -> bool:
    """Whether ``experiment``'s own A/B does not show it faster than the baseline it was
    timed with: a gain its headline shows over a best timed in another run is then the
    drift between runs, not the change.

    Its verdict decides where it has one (:attr:`Experiment.verdict`, the A/B against the
    previous best that :func:`kernelopt.bench.write_experiment` records): SLOW, SAME and
    UNCLEAR do not show it faster, whatever speedup they state (an UNCLEAR 1.19x is within
    the noise), and FAST does. Without one, a speedup below 1 says it is slower, unless it
    implies the time of a fixed reference (:func:`_fixed_reference`): a speedup column
    over torch eager is no A/B against the kernel it started from.
    """
    if experiment.verdict is not None:
        return experiment.verdict is not ABVerdict.FAST
    speedup = experiment.speedup
    return (
        speedup is not None
        and 0.0 < speedup < 1.0
        and not _fixed_reference(experiment, experiments, cycles)
    )


# What a verdict other than FAST says of the experiment against its baseline.
_NOT_FASTER = {
    ABVerdict.SLOW: "slower",
    ABVerdict.SAME: "no faster",
    ABVerdict.UNCLEAR: "not shown faster",
}


def own_ab_reading(experiment: Experiment) -> str:
    """What a contested experiment's own A/B reads (:attr:`Step.contested`), as the words
    after "its own A/B": its verdict with the speedup it states (``"verdict is UNCLEAR
    (speedup 1.19x)"``, ``"verdict is SAME"``), or without one its speedup (``"reads
    0.8367x"``); ``""`` where it states neither."""
    verdict = experiment.verdict
    if verdict is not None:
        speedup = experiment.verdict_speedup
        # Four significant digits, as compare writes a speedup: the inverse of a ratio
        # written as 0.840x is 1.19, not 1.190476.
        return f"verdict is {verdict.value}" + (
            f" (speedup {significant(speedup, 4)}x)" if speedup is not None else ""
        )
    return f"reads {experiment.speedup:g}x" if experiment.speedup is not None else ""


def contest_words(experiment: Experiment) -> str:
    """What a contested experiment's own A/B says of it against the baseline it was timed
    with: ``"slower"`` (a SLOW verdict, or a speedup below 1 without one), ``"no faster"``
    (SAME) or ``"not shown faster"`` (UNCLEAR)."""
    return _NOT_FASTER.get(experiment.verdict, "slower") if experiment.verdict else "slower"


def _speedup_gain(speedup: float, kind: MetricKind | None) -> float:
    """A speedup as a gain in the log's terms: the share of time saved for latencies, the
    share gained for rates (never below zero)."""
    if kind is MetricKind.LATENCY:
        return max(0.0, 1.0 - 1.0 / speedup)
    return max(0.0, speedup - 1.0)


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


def slowdown(new: float, old: float) -> float:
    """How much slower higher-is-better ``new`` is than ``old``, as a share of time:
    ``new``'s time over ``old``'s, less one (0.312 for 328 us against 250 us; for rates,
    ``old`` over ``new`` less one). Both are of one sign (latencies are negative)."""
    if new == 0.0 or old == 0.0:
        return 0.0
    return new / old - 1.0 if old < 0.0 else old / new - 1.0


@attrs.frozen(kw_only=True)
class Regression:
    """A kept regression: the kernel as it stands is slower than one of its own before it.

    ``latest``: the latest kept experiment of the kernel (status ``KEPT``), the version
    the next experiment starts from. ``best``: the fastest of the kernel's own kept
    experiments before it (baselines left out) on the number ``key``, timed on the same
    GPU where the log has one there. ``slower``: ``latest``'s time over ``best``'s, less
    one (:func:`slowdown`). ``kept``: the kept experiments after ``best`` up to
    ``latest``, the ones kept on top of the slower kernel.
    """

    latest: Step
    best: Step
    key: str
    slower: float
    kept: tuple[Step, ...]


def _own_best_before(own: list[Step], latest: Step, key: str) -> Step | None:
    """The fastest of ``own`` (kept steps of the kernel before ``latest``) on ``key``: the
    highest number, or a later step whose same-run A/B showed it faster than that one
    (numbers from two runs drift; the A/B does not). Steps timed on ``latest``'s GPU only,
    where the log has any there: another GPU's time says nothing of this one's kernel."""
    timed = [s for s in own if key in s.values]
    gpu = latest.experiment.gpu
    same_gpu = [s for s in timed if gpu and s.experiment.gpu == gpu]
    best: Step | None = None
    for step in same_gpu or timed:
        ahead = step.same_run and step.gains.get(key, 0.0) > 0.0
        if best is None or ahead or step.values[key] > best.values[key]:
            best = step
    return best


@attrs.frozen(kw_only=True)
class Progress:
    """The steps of the primary series with their gains, and the queries detectors ask."""

    steps: tuple[Step, ...]
    kind: MetricKind | None
    points: tuple[str, ...] = ()
    """The trial points headlines are compared at, in log order (empty when the log
    compares its headlines as one quantity)."""
    unplaced: tuple[Experiment, ...] = ()
    """Experiments whose headline names no trial point while the log compares headlines
    point by point: their headline is compared only with others that name none."""
    lone: tuple[tuple[Experiment, MetricKind], ...] = ()
    """Numbers left out because no other experiment reports the same quantity: each
    experiment with the kind of such a number, in log order. An experiment that reports no
    number of the log's headline kind counts its headline of another kind here (a speedup
    in a log of latencies). A log whose numbers all come from one experiment has no gain to
    show yet, though it measured something."""
    unshared: tuple[tuple[Experiment, MetricKind, Point | None], ...] = ()
    """The numbers :attr:`lone` counts by kind, one by one: each with its experiment, its
    kind and its named point (None for a headline), in log order. Where they come from
    several experiments, the log measured things, just never the same one twice."""
    cycles: bool = False
    """Whether the log counts its latencies in clock cycles (see :func:`analyze`)."""
    unit_tie: UnitTie | None = None
    """Set where the log states as many latencies in cycles as in time units: how
    :attr:`cycles` was chosen then (the headlines' sort, or times where they tie too)."""
    set_aside: tuple[Experiment, ...] = ()
    """Experiments with a latency of the other sort than the log's: a cycle count in a log
    of times, or a time in a log of cycle counts. No clock converts one into the other, so
    those latencies are compared with nothing."""

    def stall(self, min_gain: float) -> tuple[Step, ...]:
        """The longest trailing run of steps over which the best improved by less than
        ``min_gain`` in total (every step in it was < ``min_gain`` better, too).

        The total on each number chains the steps' gains on it, so a same-run A/B counts
        for what it measured and the drift between runs for nothing."""
        count = len(self.steps)
        start = count
        kept: dict[str, float] = {}  # per number: the share of the time (or rate) kept
        for index in range(count - 1, -1, -1):
            step = self.steps[index]
            for key, gain in step.gains.items():
                factor = 1.0 - gain if self._is_time(key) else 1.0 / (1.0 + gain)
                kept[key] = kept.get(key, 1.0) * factor
            total = max(
                (1.0 - f if self._is_time(k) else _rate_gain(f) for k, f in kept.items()),
                default=0.0,
            )
            if total >= min_gain or (step.gain or 0.0) >= min_gain:
                break
            start = index
        return self.steps[start:]

    def _is_time(self, key: str) -> bool:
        """Whether ``key`` names a time (its gains are shares of time saved)."""
        if key.endswith("|latency"):
            return True
        return headline_key(key) and self.kind is MetricKind.LATENCY

    def counted(self, steps: tuple[Step, ...] | None = None) -> tuple[Step, ...]:
        """The counted attempts among ``steps`` (all steps by default)."""
        return tuple(s for s in (self.steps if steps is None else steps) if s.counted)

    def trajectory(self, min_gain: float = 0.0) -> list[tuple[Step, float]]:
        """Steps that set a new best by at least ``min_gain``, with that gain."""
        return [
            (s, s.gain)
            for s in self.steps
            if s.gain is not None and s.gain > min_gain and s.eligible
        ]

    def best_key(self) -> str:
        """The number :meth:`best` is the best on: the headline at the point the latest
        attempt measured (kept or not) that a kept experiment also measured, else, in a
        log of named points, the first point of the latest kept measurement."""
        held = {k for s in self.steps if s.eligible for k in s.values if headline_key(k)}
        # The point the latest attempt measured, kept or not, if anything kept was measured
        # there: a reverted try at the 16-head point means the effort works on that point.
        latest = [k for s in self.steps for k in s.values if k in held]
        if latest:
            return latest[-1]
        # Named points (regimes): each is its own quantity, and the best on one is the
        # latest step that gained on it, not whatever the latest step measured there.
        measured = [s for s in self.steps if s.eligible and s.values]
        if measured and not any(headline_key(k) for k in measured[-1].values):
            return next(iter(measured[-1].values))
        return HEADLINE

    def best(self) -> Step | None:
        """The step holding the best on :meth:`best_key` (the headline, or one named
        point): the latest that gained on it.

        With headlines at several trial points, the best at the point of the latest
        measured headline (kept or not) that a kept experiment also measured: where the
        effort stands now.
        """
        key = self.best_key()
        best: Step | None = None
        for step in self.steps:
            if not step.eligible or key not in step.values:
                continue
            # The latest step that gained on this number: with headlines from one run that is
            # the fastest; where a same-run A/B decided the gain, it is the kernel it named.
            if best is None or step.gains.get(key, 0.0) > 0.0:
                best = step
        if best is None:
            scored = [s for s in self.steps if s.eligible and s.values]
            return scored[-1] if scored else None
        return best

    def kept_regression(self, min_loss: float) -> Regression | None:
        """The kernel as it stands, where it is ``min_loss`` or more slower than the
        fastest of its own kept versions before it, on a number both measured; None
        otherwise.

        Only an experiment the log marks ``KEPT`` is "the kernel as it stands": in a log
        without statuses every measured experiment may be a try, and a slower try is no
        regression. It must be the latest kernel experiment that can hold the best (a
        later one of unknown fate may be the kernel now). Baselines are left out: a kernel
        behind its torch baseline has regressed from nothing of its own. Its number is the
        one of the latest kept step whose slowdown is the largest (a headline at its
        trial point, or a named regime); a step that gained ``min_loss`` or more on
        another number it shares with that best traded one regime for another, and is
        no regression. Nor is one whose own same-run A/B showed it faster.
        """
        own = [s for s in self.steps if s.eligible and not is_reference(s.experiment)]
        if len(own) < 2 or own[-1].experiment.status is not Status.KEPT:
            return None
        latest, before = own[-1], own[:-1]
        if latest.same_run and any(g > 0.0 for g in latest.gains.values()):
            return None
        heads = [k for k in latest.values if headline_key(k)]
        found: Regression | None = None
        for key in heads or list(latest.values):
            best = _own_best_before(before, latest, key)
            if best is None:
                continue
            slower = slowdown(latest.values[key], best.values[key])
            traded = any(
                slowdown(best.values[k], v) >= min_loss
                for k, v in latest.values.items()
                if k != key and k in best.values
            )
            if slower < min_loss or traded or (found is not None and slower <= found.slower):
                continue
            at = own.index(best)
            found = Regression(
                latest=latest, best=best, key=key, slower=slower, kept=tuple(own[at + 1 :])
            )
        return found

    def only(self) -> tuple[Experiment, MetricKind, Point | None] | None:
        """The first number of the one experiment that measured anything, where no other
        reports a comparable number at all (so :meth:`best` has nothing to compare and is
        None) and that experiment can hold the best (kept, or its fate unknown; correctness
        not failed): its experiment, kind and named point (None for its headline). None
        otherwise."""
        if not self.unshared or any(s.values for s in self.steps):
            return None
        first = self.unshared[0]
        if any(e is not first[0] for e, _, _ in self.unshared) or not _can_be_best(first[0]):
            return None
        return first


def _own_gain(
    experiment: Experiment,
    eligible: bool,
    opens_point: bool,
    values: dict[str, float],
    key_gains: dict[str, float],
    best: dict[str, float],
    own_best: dict[str, float],
) -> float | None:
    """``experiment``'s gain over the best of the kernel's own experiments before it
    (``own_best``, baselines left out), as :attr:`Step.own_gain` defines it.

    Where the kernel itself holds the best (``own_best`` equals ``best``) its gain over the
    best (``key_gains``, a same-run A/B included) is its own gain.
    """
    if is_reference(experiment) or opens_point:
        return None
    if not eligible:
        return 0.0  # a reverted or failed change moved nothing
    gains = {k: max(0.0, _relative(v, own_best[k])) for k, v in values.items() if k in own_best}
    gains.update({k: g for k, g in key_gains.items() if own_best.get(k) == best.get(k)})
    return max(gains.values(), default=None)


def _set_aside(experiment: Experiment, cycles: bool) -> bool:
    """Whether ``experiment`` states a latency of the other sort than the log's (a cycle
    count in a log of times, or a time in a log of cycle counts)."""
    units = [p.unit for p in experiment.points if p.kind is MetricKind.LATENCY]
    if experiment.latency is not None:
        units.append(experiment.unit or "")
    return any(
        _us_per(unit, cycles) is None and _us_per(unit, not cycles) is not None for unit in units
    )


def analyze(experiments: tuple[Experiment, ...]) -> Progress:
    """Compute every experiment's gain over the best before it.

    A number counts only when the same quantity (the headline, or one named point) is
    reported by at least two experiments: a one-off ablation table measures something else.
    """
    kind = headline_kind(experiments)
    # A point is named as the log first spelled it: result tables written with its axes in
    # another order hold the same point.
    spellings: dict[str, str] = {}
    for e in experiments:
        if e.headline_point:
            spellings.setdefault(same_point(e.headline_point), e.headline_point)
    at = [spellings[same_point(e.headline_point)] if e.headline_point else "" for e in experiments]
    # One trial point for every headline that names one (or none named): one quantity.
    by_point = len(spellings) > 1
    units_stated = any(e.unit for e in experiments if e.latency is not None)
    cycles, unit_tie = _counts_cycles(experiments)
    raw = [
        _values(e, kind, by_point, units_stated, point, cycles)
        for e, point in zip(experiments, at, strict=True)
    ]
    occurrences = Counter(key for values in raw for key in values)
    # An experiment with no number of the headline's kind (a speedup where the others time
    # the kernel) still measured something: its own headline is a number no other shares,
    # not silence.
    other = [
        () if found else _other_kinds(e, kind, cycles)
        for e, found in zip(experiments, raw, strict=True)
    ]
    others = Counter(k for kinds in other for k in kinds)
    lone: list[tuple[Experiment, MetricKind]] = []
    unshared: list[tuple[Experiment, MetricKind, Point | None]] = []
    for e, found, kinds in zip(experiments, raw, other, strict=True):
        numbers = [
            (_key_kind(e, key, kind), None if headline_key(key) else _key_point(e, key))
            for key in found
            if occurrences[key] < 2 and not key.startswith(HEADLINE + " @ ")
        ]
        # Two of another kind are one quantity reported twice, though not the log's: no
        # lone number, and no gain either (only the headline kind is compared).
        numbers += [(k, None) for k in kinds if others[k] < 2]
        for metric, point in numbers:
            unshared.append((e, metric, point))
            if not any(e is seen and metric is k for seen, k in lone):
                lone.append((e, metric))
    best: dict[str, float] = {}
    # The GPU each best was timed on, and the best each GPU has seen: an A/B's implied
    # baseline is a time on the experiment's own GPU, so where a log moved between GPUs it
    # is compared with the kernels timed there.
    best_gpu: dict[str, str | None] = {}
    best_on: dict[tuple[str, str], float] = {}
    # The best of the kernel's own experiments, baselines left out: a kernel behind its
    # baseline still gains over its own previous best.
    own_best: dict[str, float] = {}
    seen: set[str] = set()
    steps = []
    for experiment, found in zip(experiments, raw, strict=True):
        # A headline at its own trial point counts even as the first there.
        values = {
            k: v for k, v in found.items() if occurrences[k] >= 2 or k.startswith(HEADLINE + " @ ")
        }
        eligible = _can_be_best(experiment)
        key_gains = {k: max(0.0, _relative(v, best[k])) for k, v in values.items() if k in best}
        same_run = False
        contested: float | None = None
        contested_key: str | None = None
        if eligible and kind is MetricKind.LATENCY:
            head = next((k for k in key_gains if headline_key(k)), None)
            ab = _same_run_gain(experiment, -best[head], cycles) if head is not None else None
            gpu = experiment.gpu
            if head is not None and ab is None and gpu:
                on = best_on.get((head, gpu))
                if on is not None and best_gpu.get(head) not in (None, gpu):
                    # Timed on another GPU than the best: its A/B, or else its headline,
                    # is compared with the best kept time on its own GPU.
                    ab = _same_run_gain(experiment, -on, cycles)
                    if ab is None:
                        key_gains[head] = max(0.0, _relative(values[head], on))
            if head is not None and ab is not None:
                key_gains[head], same_run = ab, True
            elif (
                head is not None
                and key_gains[head] > 0.0
                and _contradicted(experiment, experiments, cycles)
            ):
                # Faster than a best timed in another run, not shown faster by its own
                # A/B: the runs drifted, and the change is no new best (nor does it end a
                # stall).
                contested, key_gains[head] = key_gains[head], 0.0
                contested_key = head
        gain: float | None
        if is_reference(experiment):
            gain = None
        elif not eligible:
            gain = 0.0  # a reverted or failed change moved nothing
        elif key_gains:
            gain = max(key_gains.values())
        elif by_point and experiment.headline_point and (experiment.speedup or 0.0) > 0:
            # The first kept headline at its point: the log's own A/B against the kernel it
            # started from (a result row's speedup over its baseline) is the gain.
            gain = _speedup_gain(experiment.speedup or 1.0, kind)
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
        own_gain = _own_gain(experiment, eligible, opens_point, values, key_gains, best, own_best)
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
                # A contested time claims no new best: later experiments are compared with
                # the best it did not displace, not with its drifted time.
                displaces = key != contested_key
                if displaces and (key not in best or value > best[key]):
                    best[key] = value
                    best_gpu[key] = experiment.gpu
                if experiment.gpu and displaces:
                    slot = (key, experiment.gpu)
                    best_on[slot] = max(best_on.get(slot, value), value)
                if not is_reference(experiment):
                    own_best[key] = max(own_best.get(key, value), value)
        steps.append(
            Step(
                experiment=experiment,
                counted=counted,
                eligible=eligible and measured,
                gain=gain,
                values=values,
                gains=key_gains if eligible else {},
                same_run=same_run,
                own_gain=own_gain,
                contested=contested,
            )
        )
    points = tuple(dict.fromkeys(point for point in at if point))
    unplaced = tuple(
        e for e, found in zip(experiments, raw, strict=True) if by_point and HEADLINE in found
    )
    return Progress(
        steps=tuple(steps),
        kind=kind,
        points=points if by_point else (),
        unplaced=unplaced,
        lone=tuple(lone),
        unshared=tuple(unshared),
        cycles=cycles,
        unit_tie=unit_tie,
        set_aside=tuple(e for e in experiments if _set_aside(e, cycles)),
    )
