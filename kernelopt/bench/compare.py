"""Is the candidate faster than the baseline? Paired, interleaved runs and an honest verdict.

Two versions timed one after the other see different clocks, temperatures and
neighbours; timed in alternation (baseline, candidate, baseline again, round after round)
they see the same ones. The verdict (:func:`judge`, a pure function of the samples):

- ``ratio`` = median(candidate) / median(baseline); its confidence interval comes from
  a paired bootstrap (pairs of one round are resampled together, so drift shared by the
  pair cancels).
- The *same-version spread* comes from the baseline timed twice in the same rounds
  (A vs A): how far from 1 the ratio of two timings of one version can land.
- ``threshold`` = max(same-version spread, ``min_effect``). FAST when the whole interval
  lies below ``1 - threshold``, SLOW when above ``1 + threshold``, SAME when it lies
  within ``1 ± threshold`` and the same-version spread is at most ``max_noise`` (a run
  too noisy to see a 5 % change cannot vouch that two versions are the same), UNCLEAR
  otherwise. A difference smaller than A vs A is never a win.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, expected
from kernelopt._words import and_list
from kernelopt.bench.measurement import Measurement
from kernelopt.bench.timer import ArgSet, Timer

__all__ = ["Comparison", "Verdict", "compare", "judge"]


class Verdict(TextEnum):
    """The candidate against the baseline."""

    FAST = "FAST"  # faster by more than the same-version spread, with confidence
    SLOW = "SLOW"  # slower by more than the same-version spread, with confidence
    SAME = "SAME"  # any difference is within the threshold, and the run was quiet
    UNCLEAR = "UNCLEAR"  # the interval straddles the threshold: measure longer


@attrs.frozen(kw_only=True)
class Comparison:
    """The verdict of one comparison and the numbers behind it.

    Parameters
    ----------
    verdict : Verdict
        FAST, SLOW, SAME or UNCLEAR, for the candidate.
    ratio : float
        Candidate time over baseline time (medians); 0.8 means 20 % less time.
    ratio_low, ratio_high : float
        Confidence interval of ``ratio`` (paired bootstrap).
    noise : float
        Same-version spread, relative (0.01 = the same version lands within ±1 %).
    threshold : float
        max(noise, min_effect): the smallest change that counts.
    confidence : float
        Level of the interval (0.95).
    pairs : int
        Paired samples judged: the length of each sample list.
    baseline, candidate : Measurement, optional
        The measurements, when :func:`compare` timed them.
    """

    verdict: Verdict = attrs.field(converter=Verdict)
    ratio: float
    ratio_low: float
    ratio_high: float
    noise: float
    threshold: float
    confidence: float = 0.95
    pairs: int = 0
    baseline: Measurement | None = None
    candidate: Measurement | None = None

    @property
    def speedup(self) -> float:
        """Baseline time over candidate time (> 1 is faster)."""
        return 1.0 / self.ratio if self.ratio > 0 else math.inf

    def summary(self) -> str:
        """``FAST 0.62x [0.61, 0.63], same-version spread ±0.4%, threshold ±1.0%``."""
        interval = f"[{self.ratio_low:.3f}, {self.ratio_high:.3f}]"
        return (
            f"{self.verdict.value} {self.ratio:.3f}x {interval}, "
            f"same-version spread ±{self.noise:.1%}, threshold ±{self.threshold:.1%}"
        )

    def __str__(self) -> str:
        return self.summary()


def _check(values: Sequence[float], name: str) -> None:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InputError(
            expected("a sequence of samples (a list)", type(values).__name__, where=name)
        )
    if len(values) < 2:
        raise InputError(expected("at least 2 samples", len(values), where=name))
    # numbers.Real, as Measurement takes them: a float32 array's items are samples too.
    wrong = [v for v in values if isinstance(v, bool) or not isinstance(v, numbers.Real)]
    if wrong:
        raise InputError(expected("numeric samples", repr(wrong[0]), where=name))
    bad = [v for v in values if not math.isfinite(v) or v <= 0]
    if bad:
        raise InputError(expected("finite positive samples", repr(float(bad[0])), where=name))


def _check_fraction(value: float, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(expected("a finite number", repr(value), where=name))
    if value < 0:
        raise InputError(expected(f"{name} >= 0", value, where=name))


def _check_min_effect(value: float) -> None:
    _check_fraction(value, "min_effect")
    # A change of 100 % or more is no speedup a time can show (a candidate would have to
    # take no time): FAST could never be reached, and a real speedup read as noise.
    if value >= 1:
        raise InputError(expected("min_effect in [0, 1)", value, where="min_effect"))


def _check_confidence(value: float) -> None:
    # A str or None failed the comparison with a TypeError naming neither the argument
    # nor what it takes.
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and 0.5 <= value < 1.0):
        raise InputError(expected("a confidence in [0.5, 1)", repr(value), where="confidence"))


_BOOTSTRAP_BLOCK = 1 << 20  # resampled values held at once, per array


def _paired_ratios(rng: Any, top: Any, bottom: Any, resamples: int) -> Any:
    """``median(top[i]) / median(bottom[i])`` for ``resamples`` index draws ``i``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The bootstrap's generator.
    top, bottom : numpy.ndarray
        ``[n]`` paired samples: one draw picks the same indices in both.
    resamples : int
        Number of draws.

    Returns
    -------
    numpy.ndarray
        ``[resamples]`` ratios.
    """
    import numpy as np

    # Drawn in blocks of whole resamples: all at once, the indices and the two gathered
    # copies take resamples x n values each (16 GB each for 10^6 samples and 2000
    # resamples). The generator yields the same numbers in blocks as in one call, so a
    # seed keeps its interval.
    n = len(top)
    rows = max(1, _BOOTSTRAP_BLOCK // n)
    parts = []
    for start in range(0, resamples, rows):
        index = rng.integers(0, n, size=(min(rows, resamples - start), n))
        parts.append(np.median(top[index], axis=1) / np.median(bottom[index], axis=1))
    return np.concatenate(parts)


def judge(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    baseline_again: Sequence[float] | None = None,
    min_effect: float = 0.01,
    max_noise: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Judge paired samples: candidate vs baseline, against the same-version spread.

    Parameters
    ----------
    baseline, candidate : sequence of float
        Per-call times, paired by index (sample i of each taken in the same round), so
        of equal length: the bootstrap resamples whole pairs, and a sample without its
        pair has nothing to be judged against.
    baseline_again : sequence of float, optional
        A second timing of the baseline in the same rounds (A vs A), as long as
        ``baseline``. Without it the same-version spread is estimated by splitting
        ``baseline`` into its even- and odd-indexed samples.
    min_effect : float
        Smallest relative change that counts even with perfect measurements (0.01), in
        [0, 1): a change of 100 % or more no speedup can show.
    max_noise : float
        Largest same-version spread under which SAME may be declared (0.05).
    confidence : float
        Level of the intervals.
    resamples : int
        Bootstrap resamples.
    seed : int
        Seed of the bootstrap: the same samples always give the same verdict.

    Returns
    -------
    Comparison
        With ``pairs`` the number of pairs judged, the length of each sample list.

    Raises
    ------
    InputError
        If a sample list is not a sequence of at least 2 finite positive numbers, the
        lists differ in length (``Expected two sample lists of equal length, got 12 and
        9``), fewer than 4 pairs are given without ``baseline_again``, or an option is
        out of its range.
    """
    import numpy as np

    _check(baseline, "baseline")
    _check(candidate, "candidate")
    _check_confidence(confidence)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError(expected("seed as an int", repr(seed), where="seed"))
    _check_min_effect(min_effect)
    _check_fraction(max_noise, "max_noise")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InputError(expected("resamples as an int >= 1", repr(resamples), where="resamples"))
    lists = [baseline, candidate]
    if baseline_again is not None:
        _check(baseline_again, "baseline_again")
        lists.append(baseline_again)
    lengths = [len(values) for values in lists]
    if len(set(lengths)) > 1:
        # The statistics are paired: judging the first n of each would drop samples
        # without a word, and pair samples of different rounds once one list lost some.
        count = "two" if len(lists) == 2 else "three"
        got = and_list([str(n) for n in lengths])
        raise InputError(expected(f"{count} sample lists of equal length", got))
    n = lengths[0]
    base = np.asarray(baseline, dtype=float)
    b = np.asarray(candidate, dtype=float)
    if baseline_again is not None:
        a, a2 = base, np.asarray(baseline_again, dtype=float)
    else:
        half = n // 2
        a, a2 = base[0 : 2 * half : 2], base[1 : 2 * half : 2]
    rng = np.random.default_rng(seed)
    tail = (1.0 - confidence) / 2.0

    ratios = _paired_ratios(rng, b, base, resamples)
    low, high = (float(v) for v in np.quantile(ratios, [tail, 1.0 - tail]))

    m = len(a)
    if m < 2:
        raise InputError(
            expected("at least 4 paired samples (baseline and candidate) to estimate noise", n)
        )
    aa = _paired_ratios(rng, a2, a, resamples)
    aa_low, aa_high = (float(v) for v in np.quantile(aa, [tail, 1.0 - tail]))
    noise = max(abs(aa_low - 1.0), abs(aa_high - 1.0))
    threshold = max(noise, min_effect)

    if high < 1.0 - threshold:
        verdict = Verdict.FAST
    elif low > 1.0 + threshold:
        verdict = Verdict.SLOW
    elif low >= 1.0 - threshold and high <= 1.0 + threshold and noise <= max_noise:
        verdict = Verdict.SAME
    else:
        verdict = Verdict.UNCLEAR
    return Comparison(
        verdict=verdict,
        ratio=float(np.median(b) / np.median(base)),
        ratio_low=low,
        ratio_high=high,
        noise=noise,
        threshold=threshold,
        confidence=confidence,
        pairs=n,
    )


def compare(
    baseline: Callable[..., object],
    candidate: Callable[..., object],
    *,
    timer: Timer | None = None,
    inputs: Sequence[ArgSet] | None = None,
    candidate_inputs: Sequence[ArgSet] | None = None,
    outputs: Any = None,
    candidate_outputs: Any = None,
    min_pairs: int = 20,
    max_pairs: int = 400,
    max_time_ms: float = 5000.0,
    min_effect: float = 0.01,
    max_noise: float = 0.05,
    confidence: float = 0.95,
    label: str = "",
) -> Comparison:
    """Time ``baseline`` and ``candidate`` in alternation and judge the candidate.

    Each round takes the same number of samples from the baseline, the candidate and
    the baseline again (the order alternates between rounds, ``A B A'`` then
    ``A' B A``). After ``min_pairs`` pairs the verdict is computed after every round;
    sampling stops at the first verdict other than UNCLEAR, at ``max_pairs`` or at
    ``max_time_ms``.

    Parameters
    ----------
    baseline, candidate : callable
        One call each, as for :meth:`Timer.measure`.
    timer : Timer, optional
        Timing settings (mode, warm-up, backend); default ``Timer()`` (cold).
    inputs, candidate_inputs : sequence of argument sets, optional
        Input sets to rotate; ``candidate_inputs`` defaults to ``inputs``.
    outputs, candidate_outputs : Tensor or sequence of Tensor, optional
        Buffers each function must overwrite (poisoned and checked).
    min_pairs, max_pairs : int
        Bounds on paired samples.
    max_time_ms : float
        Cap on sampling time, ms.
    min_effect, max_noise, confidence : float
        See :func:`judge`.
    label : str
        Prefix of the measurements' labels.

    Returns
    -------
    Comparison
        With ``baseline`` and ``candidate`` measurements attached.

    Examples
    --------
    >>> import time
    >>> from kernelopt.bench import Timer, compare
    >>> def spin(us):
    ...     end = time.perf_counter_ns() + us * 1000
    ...     while time.perf_counter_ns() < end:
    ...         pass
    >>> result = compare(lambda: spin(200), lambda: spin(100),
    ...                  timer=Timer(backend="cpu-perf-counter", warmup_ms=1))
    >>> result.verdict.value
    'FAST'
    """
    timer = timer or Timer()
    # Checked before anything runs: a bound of another type would fail mid-run, or (a
    # NaN time cap) never stop the rounds.
    if isinstance(min_pairs, bool) or not isinstance(min_pairs, int) or min_pairs < 2:
        raise InputError(expected("an int >= 2", repr(min_pairs), where="min_pairs"))
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or max_pairs < min_pairs:
        raise InputError(
            expected(f"an int >= min_pairs ({min_pairs})", repr(max_pairs), where="max_pairs")
        )
    number = isinstance(max_time_ms, int | float) and not isinstance(max_time_ms, bool)
    if not (number and math.isfinite(max_time_ms) and max_time_ms > 0):
        raise InputError(expected("a finite number > 0", repr(max_time_ms), where="max_time_ms"))
    _check_min_effect(min_effect)
    _check_fraction(max_noise, "max_noise")
    # Checked before the rounds: judge would refuse it only after the first of them ran.
    _check_confidence(confidence)
    notes_a: list[str] = []
    notes_b: list[str] = []
    run_a = timer._runner(baseline, inputs, outputs, notes_a)
    run_b = timer._runner(
        candidate,
        inputs if candidate_inputs is None else candidate_inputs,
        candidate_outputs,
        notes_b,
    )
    run_a.prepare()
    run_b.prepare()
    before = run_a.device_state()
    per_round = max(1, min(run_a.batch_size(max_pairs), run_b.batch_size(max_pairs), 10))
    a: list[float] = []
    b: list[float] = []
    a2: list[float] = []
    began = time.perf_counter()
    result: Comparison | None = None
    round_index = 0
    while True:
        first, last = (a, a2) if round_index % 2 == 0 else (a2, a)
        first.extend(run_a.sample(per_round))
        b.extend(run_b.sample(per_round))
        last.extend(run_a.sample(per_round))
        run_a.check_outputs()
        run_b.check_outputs()
        round_index += 1
        elapsed_ms = (time.perf_counter() - began) * 1000.0
        # Two rounds at least, so that a very slow call still yields pairs to judge.
        done = (len(b) >= max_pairs or elapsed_ms >= max_time_ms) and len(b) >= 2
        if len(b) >= min_pairs or done:
            result = judge(
                a,
                b,
                baseline_again=a2,
                min_effect=min_effect,
                max_noise=max_noise,
                confidence=confidence,
            )
            if result.verdict is not Verdict.UNCLEAR:
                break
        if done:
            break
    after = run_a.device_state()
    reason = "decided" if result is not None and result.verdict is not Verdict.UNCLEAR else "cap"
    measured_a = timer._finish(run_a, a + a2, reason, before, after, notes_a, f"{label}baseline")
    measured_b = timer._finish(run_b, b, reason, before, after, notes_b, f"{label}candidate")
    if result is None:  # unreachable: the loop judges before it may stop
        raise InputError(expected("at least 2 paired samples", len(b)))
    return attrs.evolve(result, baseline=measured_a, candidate=measured_b)
