"""compare's ratio is of the measurements it returns: candidate.median / baseline.median.

The baseline is timed twice a round (A, B, A' then A', B, A). The verdict judges B against
A, with the spread of A' against A as its threshold; the baseline measurement it returned
held A and A' together, so its median (and the slowdown a log records from it) was another
number than the verdict's, at times outside the verdict's own interval. The timings here
are scripted: a runner that hands out given samples, so the two baseline timings differ
as much as a test asks and no clock or device takes part.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from kernelopt.bench import Comparison, Measurement, Timer, Verdict, compare, judge
from kernelopt.bench.timer import _Runner

PER_ROUND = 5  # samples a batch: one batch of A, of B and of A' a round


class _ScriptedRunner(_Runner):
    """A runner whose samples come from ``next_batch(k)`` instead of a clock.

    Parameters
    ----------
    timer : Timer
        The timer whose settings the measurement reports.
    next_batch : callable
        ``next_batch(k)`` gives the next ``k`` samples, µs.
    """

    def __init__(self, timer: Timer, next_batch: Callable[[int], list[float]]) -> None:
        super().__init__(timer, [lambda: None], None, "none")
        self.next_batch = next_batch

    def prepare(self) -> None:
        """Nothing to warm up: the samples are given."""

    def batch_size(self, remaining: int) -> int:
        return PER_ROUND

    def sample(self, k: int, probe: Callable[[], None] | None = None) -> list[float]:
        return self.next_batch(k)


def _baseline_batches(first_us: float, again_us: float, seed: int) -> Callable[[int], list[float]]:
    """Batches of a baseline whose timing A lands at ``first_us`` and A' at ``again_us``.

    compare takes the baseline's batches in the order A, A' in even rounds and A', A in
    odd ones; the batches follow that order, log-normal around their centre (1 % spread).
    """
    rng = np.random.default_rng(seed)
    taken = [0]

    def next_batch(k: int) -> list[float]:
        round_index, second = divmod(taken[0], 2)
        taken[0] += 1
        is_again = second == (round_index % 2 == 0)
        centre = again_us if is_again else first_us
        return [float(v) for v in centre * rng.lognormal(0.0, 0.01, k)]

    return next_batch


def _candidate_batches(centre_us: float, seed: int) -> Callable[[int], list[float]]:
    rng = np.random.default_rng(seed)
    return lambda k: [float(v) for v in centre_us * rng.lognormal(0.0, 0.01, k)]


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Comparison]]:
    """compare() over scripted samples: ``scripted(first_us, again_us, candidate_us)``."""

    def run(first_us: float, again_us: float, candidate_us: float, **options: Any) -> Comparison:
        runners = iter(
            [
                _baseline_batches(first_us, again_us, seed=1),
                _candidate_batches(candidate_us, seed=2),
            ]
        )

        def runner(
            self: Timer, fn: object, inputs: object, outputs: object, notes: object, *more: object
        ) -> Any:
            return _ScriptedRunner(self, next(runners))

        monkeypatch.setattr(Timer, "_runner", runner)
        timer = Timer(backend="cpu-perf-counter")
        return compare(lambda: None, lambda: None, timer=timer, **options)

    yield run


def _measurements(result: Comparison) -> tuple[Measurement, Measurement]:
    assert result.baseline is not None
    assert result.candidate is not None
    return result.baseline, result.candidate


def test_the_ratio_is_the_returned_candidate_over_the_returned_baseline(
    scripted: Callable[..., Comparison],
) -> None:
    # A at 100 us, A' at 80 us: A and A' together have a median near 90, 10 % off A's.
    result = scripted(100.0, 80.0, 200.0)
    baseline, candidate = _measurements(result)
    assert result.verdict is Verdict.SLOW
    assert result.ratio == pytest.approx(candidate.median / baseline.median, rel=1e-12)
    assert result.ratio == pytest.approx(2.0, rel=0.02)


def test_the_interval_is_that_of_the_returned_measurements(
    scripted: Callable[..., Comparison],
) -> None:
    result = scripted(100.0, 80.0, 200.0)
    baseline, candidate = _measurements(result)
    stated = candidate.median / baseline.median
    assert result.ratio_low <= stated <= result.ratio_high
    # The verdict is judge's on the very samples returned: nothing else entered it.
    again = judge(baseline.samples, candidate.samples)
    assert result.ratio == again.ratio


def test_each_measurement_holds_one_sample_a_pair_and_the_second_baseline_timing(
    scripted: Callable[..., Comparison],
) -> None:
    result = scripted(100.0, 80.0, 200.0)
    baseline, candidate = _measurements(result)
    baseline_again = result.baseline_again
    assert baseline_again is not None
    assert baseline.n == candidate.n == baseline_again.n == result.pairs
    assert baseline.median == pytest.approx(100.0, rel=0.01)
    assert baseline_again.median == pytest.approx(80.0, rel=0.01)
    assert baseline.label == "baseline" and baseline_again.label == "baseline_again"
    assert baseline.stop_reason == baseline_again.stop_reason == "decided"


def test_the_two_baseline_timings_drifting_apart_still_keep_a_small_gain_from_a_win(
    scripted: Callable[..., Comparison],
) -> None:
    # A' lands 3 % above A: the same-version spread is at least that, and a candidate
    # 2 % faster than A is within it. The numbers stated are those of what is returned.
    result = scripted(100.0, 103.0, 98.0, min_effect=0.0, max_pairs=100, max_time_ms=60_000.0)
    baseline, candidate = _measurements(result)
    assert result.noise > 0.02
    assert result.verdict is not Verdict.FAST
    assert result.ratio == pytest.approx(candidate.median / baseline.median, rel=1e-12)
    assert result.ratio_low <= candidate.median / baseline.median <= result.ratio_high
    baseline_again = result.baseline_again
    assert baseline_again is not None
    assert judge(
        baseline.samples, candidate.samples, baseline_again=baseline_again.samples
    ).noise == pytest.approx(result.noise, rel=1e-12)
