"""Is the candidate faster than the baseline? Paired, interleaved runs and an honest verdict.

Two versions timed one after the other see different clocks, temperatures and
neighbours; timed in alternation (baseline, candidate, baseline again, round after round)
they see the same ones. The verdict (:func:`judge`, a pure function of the samples):

- ``ratio`` = median(candidate) / median(baseline); its confidence interval comes from
  a paired bootstrap (pairs of one round are resampled together, so drift shared by the
  pair cancels).
- The *same-version spread* comes from the baseline timed twice in the same rounds
  (A vs A): how far from 1 the ratio of two timings of one version can land. The ratio
  is of B over A, the spread of A' over A: one statistic, so the spread is what the
  ratio of a candidate no faster than the baseline would show. :func:`compare` returns
  A as ``baseline`` and A' as ``baseline_again``.
- ``threshold`` = max(same-version spread, ``min_effect``). FAST when the whole interval
  lies below ``1 - threshold``, SLOW when above ``1 + threshold``, SAME when it lies
  within ``1 ± threshold`` and the same-version spread is at most ``max_noise`` (a run
  too noisy to see a 5 % change cannot vouch that two versions are the same), UNCLEAR
  otherwise. A difference smaller than A vs A is never a win.
- Rounds too few for any verdict to hold the confidence are UNCLEAR: two rounds of A, B, A'
  at 95 % (no rule that treats the two versions alike can promise 5 % there; see
  :func:`_too_few_rounds`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from kernelopt._checks import finite
from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, expected
from kernelopt._numbers_text import readable, significant
from kernelopt._words import and_list
from kernelopt.bench._samples import sample_array, sample_floats
from kernelopt.bench.measurement import Measurement
from kernelopt.bench.timer import ArgSet, Timer
from kernelopt.experiments._validators import integer, optional_instance_of

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from typing import TypeAlias

    import numpy
    import torch

    Samples: TypeAlias = Sequence[float] | numpy.ndarray[Any, Any] | torch.Tensor

__all__ = ["Comparison", "Verdict", "compare", "judge"]


class Verdict(TextEnum):
    """The candidate against the baseline."""

    FAST = "FAST"  # faster by more than the same-version spread, with confidence
    SLOW = "SLOW"  # slower by more than the same-version spread, with confidence
    SAME = "SAME"  # any difference is within the threshold, and the run was quiet
    UNCLEAR = "UNCLEAR"  # the interval straddles the threshold: measure longer


# A Comparison's measurements, when compare attached them; a number in their place failed
# only where a log read its samples.
_optional_measurement = optional_instance_of(Measurement, "a Measurement")


@attrs.frozen(kw_only=True)
class Comparison:
    """The verdict of one comparison and the numbers behind it.

    Parameters
    ----------
    verdict : Verdict
        FAST, SLOW, SAME or UNCLEAR, for the candidate.
    ratio : float
        Candidate time over baseline time (medians); 0.8 means 20 % less time. Where
        :func:`compare` timed them, ``candidate.median / baseline.median``. Its inverse,
        baseline time over candidate time, is :attr:`speedup`.
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
        The measurements, when :func:`compare` timed them: the samples ``ratio`` and its
        interval were judged on (of the baseline's two timings in each round, A: before the
        candidate in one round, after it in the next).
    baseline_again : Measurement, optional
        The baseline's second timing in the same rounds (A'), when :func:`compare` timed
        it: the same-version spread (``noise``) is of it against ``baseline``.
    """

    verdict: Verdict = attrs.field(converter=Verdict)
    ratio: float = attrs.field(validator=finite(minimum=0))
    ratio_low: float = attrs.field(validator=finite(minimum=0))
    ratio_high: float = attrs.field(validator=finite(minimum=0))
    noise: float = attrs.field(validator=finite(minimum=0))
    threshold: float = attrs.field(validator=finite(minimum=0))
    confidence: float = attrs.field(default=0.95, validator=finite(above=0))
    pairs: int = attrs.field(default=0, validator=integer(minimum=0))
    baseline: Measurement | None = attrs.field(default=None, validator=_optional_measurement)
    candidate: Measurement | None = attrs.field(default=None, validator=_optional_measurement)
    baseline_again: Measurement | None = attrs.field(default=None, validator=_optional_measurement)

    @property
    def speedup(self) -> float:
        """Baseline time over candidate time, the inverse of ``ratio`` (> 1 is faster:
        a ``ratio`` of 0.284 is a speedup of 3.52)."""
        return 1.0 / self.ratio if self.ratio > 0 else math.inf

    def summary(self) -> str:
        """``FAST 0.620x [0.610, 0.630], same-version spread ±0.4%, threshold ±1.0%``: the
        compact line, whose ``x`` number is ``ratio``, the candidate's time over the
        baseline's (below 1 is faster); ``str()`` says so in words.

        The ratio and its bounds are written as :func:`_ratio_text` writes them: a 5759x
        speedup reads ``FAST 0.0001737x [0.0001729, 0.0001745]``, not ``0.000x``.
        """
        interval = f"[{_ratio_text(self.ratio_low)}, {_ratio_text(self.ratio_high)}]"
        return (
            f"{self.verdict.value} {_ratio_text(self.ratio)}x {interval}, "
            f"same-version spread ±{self.noise:.1%}, threshold ±{self.threshold:.1%}"
        )

    def __str__(self) -> str:
        """The printed line, saying which ratio is which: ``FAST 0.284x [0.280, 0.290]
        the baseline's time, speedup 3.521x, same-version spread ±0.4%, threshold
        ±1.0%``: :meth:`summary` with the words.

        ``ratio`` (candidate time over baseline time) and ``speedup`` (its inverse) are
        both named: a bare ``0.284x`` beside a ``speedup`` of 3.522 read as two
        conventions of one number.
        """
        interval = f"[{_ratio_text(self.ratio_low)}, {_ratio_text(self.ratio_high)}]"
        return (
            f"{self.verdict.value} {_ratio_text(self.ratio)}x {interval} the baseline's time, "
            f"speedup {_speedup_text(self.speedup)}, "
            f"same-version spread ±{self.noise:.1%}, threshold ±{self.threshold:.1%}"
        )


# Three decimals keep three significant digits of a ratio from 0.1 up; below it they would
# keep fewer, down to none (a 5759x speedup is a ratio of 0.0001737, "0.000" in three).
_THREE_DECIMALS_FROM = 0.1
_SMALL_RATIO_DIGITS = 4


def _ratio_text(ratio: float) -> str:
    """A time ratio (or a bound of its interval) as the library's messages write it.

    From 0.1 up, three decimals (``0.934``, ``1.250``, ``5759.123``): three significant
    digits or more. Below 0.1, four significant digits, positionally (``0.0001737``), so
    that no ratio, however small, reads as ``0.000``; below 1e-6, beyond the range
    measurements take, in exponent form (``1.737e-07``), where positional digits would
    bury the value in zeros.

    Parameters
    ----------
    ratio : float
        Candidate time over baseline time, or a bound of its interval.

    Returns
    -------
    str
        The ratio's text, without the ``x``.

    Examples
    --------
    >>> _ratio_text(0.93412), _ratio_text(1.25), _ratio_text(0.05123), _ratio_text(0.00017366)
    ('0.934', '1.250', '0.05123', '0.0001737')
    """
    three_decimals = f"{ratio:.3f}"
    if not math.isfinite(ratio) or abs(float(three_decimals)) >= _THREE_DECIMALS_FROM:
        return three_decimals
    return readable(ratio, _SMALL_RATIO_DIGITS)


def _speedup_text(speedup: float) -> str:
    """A speedup as the printed verdict writes it: four significant digits and every
    integer digit, with its ``x`` (``3.521x``, ``5758x``, ``0.8x``); ``infinite`` for the
    speedup of a candidate time of 0."""
    return f"{significant(speedup, _SMALL_RATIO_DIGITS)}x" if math.isfinite(speedup) else "infinite"


# What judge takes: a time of 0 says the clock saw nothing, and a ratio of it means nothing.
_POSITIVE = "finite positive samples"


# What a Measurement passed as samples is told: judge pairs sample i of each list as taken
# in one round, which compare does, and both lists must hold one unit.
_MEASUREMENT_HINT = (
    " (pass m.samples, the two timings in one unit and taken in the same rounds, or use "
    "compare, which times them in alternating rounds)"
)


def _samples(values: object, name: str) -> Any:
    """The samples of ``values`` as a float64 array, or InputError naming ``name``.

    Parameters
    ----------
    values : sequence of float, numpy.ndarray or torch.Tensor
        ``[n]`` per-call times: a list or tuple of numbers, a 1-D numpy array of ints or
        floats (or what numpy reads as one), or a 1-D dense tensor on the CPU (any
        floating dtype, bfloat16 included, read as float64).
    name : str
        The argument, named in errors.

    Returns
    -------
    numpy.ndarray
        ``[n]`` float64, every sample finite and positive; how many :func:`judge` needs,
        :func:`_check_pairs` says.
    """
    import numpy as np

    array = sample_array(values, name, _POSITIVE)
    if array is None:
        # A generator would be used up by a first look, and a set holds no order to pair.
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            got = type(values).__name__
            if isinstance(values, Measurement):
                # Not taken for its samples: two measure() calls are not paired by round,
                # and two Measurements may hold different units.
                got += _MEASUREMENT_HINT
            raise InputError(
                expected("a sequence of samples (a list, a 1-D array)", got, where=name)
            )
        array = np.asarray(sample_floats(values, name, _POSITIVE), dtype=float)
    bad = ~(np.isfinite(array) & (array > 0))
    if bad.any():
        first = float(array[int(np.argmax(bad))])
        raise InputError(expected(_POSITIVE, repr(first), where=name))
    return array


def _check_pairs(lengths: Sequence[int], *, second_baseline: bool) -> None:
    """Refuse too few pairs for :func:`judge`, with the minimum it needs, in one message.

    Without a second baseline timing the same-version spread comes from the baseline's
    even- and odd-indexed halves, two samples each at least: 4 pairs. With
    ``baseline_again`` 2 pairs do. Checked before the lengths are compared, so that the
    first message about the count already names the real minimum.

    Parameters
    ----------
    lengths : sequence of int
        The length of each sample list, baseline first.
    second_baseline : bool
        Whether ``baseline_again`` was given.

    Raises
    ------
    InputError
        ``Expected at least 4 paired samples (baseline and candidate; 2 with
        baseline_again) to estimate noise, got 1`` (``got 1 and 5`` where the lists differ).
    """
    if second_baseline:
        minimum, what = 2, "baseline, candidate and baseline_again"
    else:
        minimum, what = 4, "baseline and candidate; 2 with baseline_again"
    if min(lengths) >= minimum:
        return
    got = str(lengths[0]) if len(set(lengths)) == 1 else and_list([str(n) for n in lengths])
    raise InputError(expected(f"at least {minimum} paired samples ({what}) to estimate noise", got))


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
# Ranks either side of the middle whose draws a resample counts one by one. The middle of
# n draws lands within about sqrt(n) / 2 ranks of rank n / 2 (a binomial's spread), so 6
# sqrt(n) ranks are twelve such spreads; a resample whose middle lies outside them (none
# in practice) is taken by np.median, so no draw changes the answer.
_WINDOW_SPREADS = 6.0
# Resamples of a block up to which each is counted on its own (16 384 samples or more).
_ROWS_ONE_BY_ONE = 64
# Keys of the draws that no rank counted one by one names, in either array: below or above
# the counted ranks of the first array (bit 0) and of the second (bit 1).
_OUTER_KEYS = 4
# Counting both arrays' bins from one count of keys pays where the keys are half the
# samples or fewer (from about 2 000 samples a side): with more, the work on each
# resample's keys costs more than the second gather and count it saves.
_MOST_KEYS_PER_SAMPLE = 1 / 2


class _Middles:
    """Medians of resamples of one sample array, by counting ranks instead of sorting.

    A resample's median is an order statistic of the samples themselves: the one whose
    rank is that of the middle draw. Counting the draws that fall on each rank near the
    middle finds it in one pass over the draws, where np.median partitions every resample
    (17 ms a million draws against 5), and gives the same float: the same sample (or the
    mean of the same two, added and halved as np.median does).

    Parameters
    ----------
    values : numpy.ndarray
        ``[n]`` float64 samples.
    """

    def __init__(self, values: Any) -> None:
        import numpy as np

        n = len(values)
        order = np.argsort(values, kind="stable")
        self.values = values
        self.ordered = values[order]
        self.low_rank, self.high_rank = (n - 1) // 2, n // 2  # equal for an odd n
        reach = int(_WINDOW_SPREADS * math.sqrt(n)) + 1
        self.first = max(0, self.low_rank - reach)  # the lowest rank counted one by one
        last = min(n - 1, self.high_rank + reach)
        # Bin 0 holds the draws below the counted ranks, the last bin those above them.
        self.bins = last - self.first + 3
        rank = np.empty(n, dtype=np.intp)
        rank[order] = np.arange(n, dtype=np.intp)
        self.bin_of = np.minimum(np.maximum(rank - self.first + 1, 0), self.bins - 1)

    def of(self, index: Any) -> Any:
        """The median of ``values[index[r]]`` for every row ``r``.

        Parameters
        ----------
        index : numpy.ndarray
            ``[rows, n]`` indices into ``values``.

        Returns
        -------
        numpy.ndarray
            ``[rows]`` medians, equal to ``np.median(values[index], axis=1)``.
        """
        import numpy as np

        rows = index.shape[0]
        if rows <= _ROWS_ONE_BY_ONE:
            # A row's bins stay in cache between gathering and counting them: a third
            # faster than one count over the whole block, once rows are few and long.
            counts = np.stack([np.bincount(self.bin_of[row], minlength=self.bins) for row in index])
        else:
            bins = self.bin_of[index]
            bins += (np.arange(rows, dtype=np.intp) * self.bins)[:, None]
            counts = np.bincount(bins.ravel(), minlength=rows * self.bins)
        return self.from_counts(counts.reshape(rows, self.bins), index)

    def from_counts(self, counts: Any, index: Any) -> Any:
        """The medians of resamples whose draws per bin are ``counts``.

        Parameters
        ----------
        counts : numpy.ndarray
            ``[rows, bins]`` draws of each resample per bin: bin 0 below the ranks counted
            one by one, bin ``1 + k`` rank ``first + k``, the last bin above them.
        index : numpy.ndarray
            ``[rows, n]`` the draws counted, indices into ``values``: the rows whose middle
            lies outside the counted ranks are taken from them by np.median.

        Returns
        -------
        numpy.ndarray
            ``[rows]`` medians, equal to ``np.median(values[index], axis=1)``.
        """
        import numpy as np

        at_or_below = np.cumsum(counts, axis=1)
        # The bin of the k-th smallest draw (from 0): the first whose running count passes k.
        low_bin = np.count_nonzero(at_or_below <= self.low_rank, axis=1)
        high_bin = np.count_nonzero(at_or_below <= self.high_rank, axis=1)
        outside = (low_bin == 0) | (high_bin == self.bins - 1)
        # Rows outside the counted ranks index a neighbour here and are replaced below.
        low = self.ordered[np.maximum(self.first - 1 + low_bin, 0)]
        if self.low_rank == self.high_rank:
            middles = low
        else:
            high = self.ordered[np.minimum(self.first - 1 + high_bin, len(self.values) - 1)]
            middles = (low + high) / 2.0
        if outside.any():
            middles[outside] = np.median(self.values[index[outside]], axis=1)
        return middles


class _BinsOfKeys:
    """Where the keys of :class:`_PairedCounts` fall among the bins of one array.

    Parameters
    ----------
    middles : _Middles
        The array's ranks and bins.
    counted : numpy.ndarray
        ``[slots]`` the indices with a key of their own, ascending: key
        ``_OUTER_KEYS + s`` is index ``counted[s]``.
    bit : int
        The bit of an outer key that says "above" for this array (0 or 1).
    """

    def __init__(self, middles: _Middles, counted: Any, bit: int) -> None:
        import numpy as np

        outer = (np.arange(_OUTER_KEYS) >> bit) & 1  # 1: above the counted ranks
        bin_of_key = np.concatenate([outer * (middles.bins - 1), middles.bin_of[counted]])
        self.bins = middles.bins
        self.below = np.flatnonzero(bin_of_key == 0)
        self.above = np.flatnonzero(bin_of_key == middles.bins - 1)
        # Each counted rank is one index, and that index has a key of its own.
        self.at_rank = np.empty(middles.bins - 2, dtype=np.intp)
        inner = np.flatnonzero((bin_of_key > 0) & (bin_of_key < middles.bins - 1))
        self.at_rank[bin_of_key[inner] - 1] = inner

    def counts(self, by_key: Any) -> Any:
        """``[rows, bins]`` draws per bin of the array from ``[rows, keys]`` draws per key."""
        import numpy as np

        counts = np.empty((by_key.shape[0], self.bins), dtype=by_key.dtype)
        counts[:, 0] = by_key[:, self.below].sum(axis=1)
        # mode='clip' writes straight into ``out`` (every index is in range; 'raise'
        # would first copy to a buffer).
        by_key.take(self.at_rank, axis=1, out=counts[:, 1:-1], mode="clip")
        counts[:, -1] = by_key[:, self.above].sum(axis=1)
        return counts


class _PairedCounts:
    """The bins of two paired arrays' resamples, counted in one pass over the draws.

    A draw picks one index of both arrays. Most indices lie outside the ranks counted one
    by one in either array: for those, only whether they lie below or above in each array
    matters, four keys in all. Each index inside the counted ranks of either array gets a
    key of its own. One gather of the key and one count per draw then give both arrays'
    bins (about 12 sqrt(n) keys a side beside n draws), where counting each array's bins
    on its own takes a gather and a count per draw and array.

    Parameters
    ----------
    top, bottom : _Middles
        The two arrays, of one length ``n``.
    """

    def __init__(self, top: _Middles, bottom: _Middles) -> None:
        import numpy as np

        def inner(middles: _Middles) -> Any:
            return (middles.bin_of > 0) & (middles.bin_of < middles.bins - 1)

        counted = np.flatnonzero(inner(top) | inner(bottom))
        key = (top.bin_of == top.bins - 1).astype(np.intp)
        key += 2 * (bottom.bin_of == bottom.bins - 1)
        key[counted] = _OUTER_KEYS + np.arange(len(counted), dtype=np.intp)
        self.key = key
        self.keys = _OUTER_KEYS + len(counted)
        # The keys a row at a time are gathered from a table of n entries: as uint16 (up to
        # about 7 million samples a side) it stays in cache, a quarter of its intp size.
        fits = self.keys <= np.iinfo(np.uint16).max + 1
        self.short_key = key.astype(np.uint16) if fits else key
        self.top = _BinsOfKeys(top, counted, bit=0)
        self.bottom = _BinsOfKeys(bottom, counted, bit=1)

    def counts(self, index: Any) -> tuple[Any, Any]:
        """Draws per bin of both arrays.

        Parameters
        ----------
        index : numpy.ndarray
            ``[rows, n]`` indices, each into both arrays.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            ``[rows, top.bins]`` and ``[rows, bottom.bins]`` draws per bin.
        """
        import numpy as np

        # A row at a time: its keys, and the counts they land on, stay in cache. Used
        # where the keys are half the samples or fewer, so n >= 599 (both arrays' counted
        # ranks on the same indices) and a block holds 1 750 rows at most.
        by_key = np.stack(
            [np.bincount(self.short_key.take(row), minlength=self.keys) for row in index]
        )
        return self.top.counts(by_key), self.bottom.counts(by_key)


def _draw_dtype(n: int) -> Any:
    """The integer type of the bootstrap's draws below ``n``.

    numpy draws any bound under 2**32 from the same 32-bit stream whatever the type asked
    for, so int32 draws equal the int64 ones where they fit, and take half the memory and
    two thirds of the time to draw.
    """
    import numpy as np

    return np.int32 if n <= np.iinfo(np.int32).max else np.int64


def _interval_verdict(
    low: float, high: float, *, threshold: float, noise: float, max_noise: float
) -> Verdict:
    """The verdict a ratio interval ``[low, high]`` (candidate time over baseline time)
    gives against ``threshold``: FAST or SLOW when the whole interval lies beyond it,
    SAME when it lies within it and the baseline's own spread ``noise`` is at most
    ``max_noise``, UNCLEAR otherwise. One rule for every judge, paired or not."""
    if high < 1.0 - threshold:
        return Verdict.FAST
    if low > 1.0 + threshold:
        return Verdict.SLOW
    if low >= 1.0 - threshold and high <= 1.0 + threshold and noise <= max_noise:
        return Verdict.SAME
    return Verdict.UNCLEAR


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
    top_middles, bottom_middles = _Middles(top), _Middles(bottom)
    paired = _PairedCounts(top_middles, bottom_middles)
    pays = paired.keys <= _MOST_KEYS_PER_SAMPLE * n
    # int32 draws (the same numbers) feed the key gather a tenth sooner; numpy's fancy
    # indexing of each array's bins is the faster for int64 ones.
    dtype = _draw_dtype(n) if pays else np.int64
    parts = []
    for start in range(0, resamples, rows):
        index = rng.integers(0, n, size=(min(rows, resamples - start), n), dtype=dtype)
        if pays:
            top_counts, bottom_counts = paired.counts(index)
            top_middle = top_middles.from_counts(top_counts, index)
            parts.append(top_middle / bottom_middles.from_counts(bottom_counts, index))
        else:
            parts.append(top_middles.of(index) / bottom_middles.of(index))
    return np.concatenate(parts)


def _too_few_rounds(pairs: int, confidence: float) -> bool:
    """Whether ``pairs`` rounds of A, B, A' are too few for any verdict at ``confidence``.

    The three timings of one round of one version (B as fast as A) come in any of their
    3! = 6 orders, each as likely, and ``pairs`` rounds in ``6 ** pairs``. A rule that
    treats the two versions alike and gives a verdict at all says FAST on some order of
    some times and SLOW on its mirror (A and B swapped); for a version whose rounds take
    those times, it is wrong on 2 of the ``6 ** pairs`` orders: 5.6 % at two pairs, over
    the 5 % of confidence 0.95 (the bootstrap, whose interval at two pairs spans the two
    pairs' ratios, called 6.8 % of 3 %-noisy runs of one version FAST or SLOW). From
    three pairs on, 2 in 216.
    """
    # In logarithms: 6.0 ** pairs overflows a float from 397 pairs on.
    return math.log(2.0) - pairs * math.log(6.0) > math.log(1.0 - confidence)


def judge(
    baseline: Samples,
    candidate: Samples,
    *,
    baseline_again: Samples | None = None,
    min_effect: float = 0.01,
    max_noise: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Judge paired samples: candidate vs baseline, against the same-version spread.

    Parameters
    ----------
    baseline, candidate : sequence of float, numpy.ndarray or torch.Tensor
        ``[n]`` per-call times, paired by index (sample i of each taken in the same
        round), so of equal length: the bootstrap resamples whole pairs, and a sample
        without its pair has nothing to be judged against. A list or tuple of numbers, a
        1-D numpy array of ints or floats, or a 1-D tensor on the CPU.
    baseline_again : sequence of float, numpy.ndarray or torch.Tensor, optional
        ``[n]`` a second timing of the baseline in the same rounds (A vs A). Without it
        the same-version spread is estimated by splitting ``baseline`` into its even- and
        odd-indexed samples. Too few rounds for any verdict to hold ``confidence`` (two
        at 0.95: their 36 orders of A, B, A' leave a rule that gives verdicts wrong on 2,
        5.6 %, for some version) are UNCLEAR, with their numbers.
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
        If a sample list is not a 1-D sequence of finite positive numbers
        (``baseline: Expected a 1-D sequence of samples, got an array of shape (3, 4)``;
        a Measurement is told to pass its ``.samples`` or to use :func:`compare`),
        a tensor is not on the CPU, an option is out of its range, fewer than 4 pairs
        are given without ``baseline_again`` or 2 with it (:func:`_check_pairs`), or the
        lists differ in length (``Expected two sample lists of equal length, got 12 and
        9``).
    """
    import numpy as np

    base = _samples(baseline, "baseline")
    candidate_times = _samples(candidate, "candidate")
    _check_confidence(confidence)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError(expected("seed as an int", repr(seed), where="seed"))
    if seed < 0:
        # numpy refuses a negative seed with a ValueError of its own wording.
        raise InputError(expected("seed as an int >= 0", repr(seed), where="seed"))
    _check_min_effect(min_effect)
    _check_fraction(max_noise, "max_noise")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InputError(expected("resamples as an int >= 1", repr(resamples), where="resamples"))
    arrays = [base, candidate_times]
    if baseline_again is not None:
        arrays.append(_samples(baseline_again, "baseline_again"))
    lengths = [len(values) for values in arrays]
    _check_pairs(lengths, second_baseline=baseline_again is not None)
    if len(set(lengths)) > 1:
        # The statistics are paired: judging the first n of each would drop samples
        # without a word, and pair samples of different rounds once one list lost some.
        count = "two" if len(arrays) == 2 else "three"
        got = and_list([str(n) for n in lengths])
        raise InputError(expected(f"{count} sample lists of equal length", got))
    n = lengths[0]
    if baseline_again is not None:
        a, a2 = base, arrays[2]
    else:
        half = n // 2
        a, a2 = base[0 : 2 * half : 2], base[1 : 2 * half : 2]
    rng = np.random.default_rng(seed)
    tail = (1.0 - confidence) / 2.0

    ratios = _paired_ratios(rng, candidate_times, base, resamples)
    low, high = (float(v) for v in np.quantile(ratios, [tail, 1.0 - tail]))

    aa = _paired_ratios(rng, a2, a, resamples)
    aa_low, aa_high = (float(v) for v in np.quantile(aa, [tail, 1.0 - tail]))
    noise = max(abs(aa_low - 1.0), abs(aa_high - 1.0))
    threshold = max(noise, min_effect)

    if baseline_again is not None and _too_few_rounds(n, confidence):
        verdict = Verdict.UNCLEAR  # the numbers stand; no verdict can hold its confidence
    else:
        verdict = _interval_verdict(
            low, high, threshold=threshold, noise=noise, max_noise=max_noise
        )
    return Comparison(
        verdict=verdict,
        ratio=float(np.median(candidate_times) / np.median(base)),
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
    written: Any = None,
    candidate_written: Any = None,
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
        Buffers each function must overwrite (poisoned and checked, as
        :meth:`Timer.measure` does: their contents are lost).
    min_pairs, max_pairs : int
        Bounds on paired samples.
    max_time_ms : float
        Cap on sampling time, ms.
    min_effect, max_noise, confidence : float
        See :func:`judge`.
    label : str
        Prefix of the measurements' labels.
    written, candidate_written : optional
        The region of each output the function writes, as
        :func:`~kernelopt.bench.guards.check_written` takes it.

    Returns
    -------
    Comparison
        With ``baseline`` (A), ``candidate`` (B) and ``baseline_again`` (A') measurements
        attached, ``pairs`` samples each: ``ratio`` is ``candidate.median /
        baseline.median`` and its interval is of those samples.

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
    timer = _timer(timer)
    _check_callables(baseline, candidate, label)
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
    run_a = timer._runner(baseline, inputs, outputs, notes_a, written)
    run_b = timer._runner(
        candidate,
        inputs if candidate_inputs is None else candidate_inputs,
        candidate_outputs,
        notes_b,
        candidate_written,
        ("candidate_outputs", "candidate_written"),
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
    if result is None:  # unreachable: the loop judges before it may stop
        raise InputError(expected("at least 2 paired samples", len(b)))
    # The baseline returned is A alone, the samples the ratio was judged on: with A' in
    # it too, its median (so the slowdown a log records from it) was another number than
    # the verdict's, at times outside the verdict's own interval. A' goes back on its own.
    measured_a = timer._finish(run_a, a, reason, before, after, notes_a, f"{label}baseline")
    measured_again = timer._finish(
        run_a, a2, reason, before, after, notes_a, f"{label}baseline_again"
    )
    measured_b = timer._finish(run_b, b, reason, before, after, notes_b, f"{label}candidate")
    return attrs.evolve(
        result, baseline=measured_a, candidate=measured_b, baseline_again=measured_again
    )


def _timer(timer: object) -> Timer:
    """``timer``, or a default ``Timer()`` for None; anything else is refused by name.

    ``compare`` drives the timer's rounds itself, so a stand-in with only ``measure`` will
    not do: ``5`` failed with "'int' object has no attribute '_runner'", and a falsy
    object (``0``, ``""``) was silently replaced by the default.
    """
    if timer is None:
        return Timer()
    if not isinstance(timer, Timer):
        raise InputError(expected("a Timer or None", type(timer).__name__, where="timer"))
    return timer


def _check_callables(baseline: object, candidate: object, label: object) -> None:
    """Refuse, before anything is timed, a version that cannot be called or a label
    that is not text (it prefixes the measurements' labels)."""
    for name, value in (("baseline", baseline), ("candidate", candidate)):
        if not callable(value):
            raise InputError(expected("a callable", type(value).__name__, where=name))
    if not isinstance(label, str):
        raise InputError(expected("a str", type(label).__name__, where="label"))
