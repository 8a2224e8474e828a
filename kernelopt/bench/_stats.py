"""Order statistics and the noise-based stopping rule, in plain Python.

Everything here is a pure function of a list of samples, so the timer's decisions can be
tested without timing anything. No numpy: ``import kernelopt.bench`` stays cheap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

__all__ = [
    "COMPARE_STOP_REASONS",
    "STOP_REASONS",
    "StopRule",
    "median_ci",
    "quantile",
    "relative_halfwidth",
    "stop_reason",
]

STOP_REASONS = ("precision", "max_samples", "time_cap")
"""Why sampling stopped, as :func:`stop_reason` says it: the median known to the precision
asked, the sample cap, or the time cap."""
COMPARE_STOP_REASONS = ("decided", "cap")
"""Why :func:`~kernelopt.bench.compare` stopped its interleaved rounds, as the measurements
it returns say it: a verdict other than UNCLEAR reached, or the pair or time cap."""

# Two-sided 95 % normal quantile: the confidence of the distribution-free median interval.
_Z95 = 1.959963984540054
# Fewest samples whose widest interval, [min, max], holds the median with 95 %
# (1 - 2 / 2**n): 96.9 % at 6, 93.8 % at 5. Fewer samples know the median to no precision.
_MIN_INTERVAL_SAMPLES = 6


def quantile(values: Sequence[float], q: float) -> float:
    """Return the ``q``-quantile of ``values`` by linear interpolation.

    The same definition as numpy's default (``method="linear"``), so numbers agree with
    ``numpy.quantile`` and ``triton.testing.do_bench``'s quantiles.

    Parameters
    ----------
    values : sequence of float
        The samples, in any order; at least one.
    q : float
        The quantile, in [0, 1].
    """
    if not values:
        raise ValueError("quantile of no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile level {q} outside [0, 1]")
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    weight = position - low
    return ordered[low] + (ordered[high] - ordered[low]) * weight


def median_ci(values: Sequence[float], *, z: float = _Z95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median (order statistics).

    The ranks ``n/2 ± z·sqrt(n)/2`` bound the population median with the confidence of
    ``z`` whatever the shape of the distribution; timing samples are skewed and
    heavy-tailed, so no normal assumption is made.

    Parameters
    ----------
    values : sequence of float
        The samples; at least one.
    z : float
        Normal quantile of the confidence level (1.96 for 95 %).

    Returns
    -------
    (low, high) : tuple of float
        In the unit of ``values``.
    """
    if not values:
        raise ValueError("median interval of no values")
    ordered = sorted(values)
    n = len(ordered)
    half = z * math.sqrt(n) / 2.0
    # 1-based ranks floor(n/2 - half) and ceil(1 + n/2 + half), the textbook bounds: one
    # step further in on each side (as before) covers 92-94 %, not 95 %, for n = 21-100.
    low_rank = max(0, math.floor(n / 2.0 - half) - 1)
    high_rank = min(n - 1, math.ceil(n / 2.0 + half))
    return ordered[low_rank], ordered[max(low_rank, high_rank)]


def relative_halfwidth(values: Sequence[float]) -> float:
    """Half the width of the median's 95 % interval over the median (0.01 = ±1 %).

    ``inf`` under 6 samples, where no interval of order statistics reaches 95 % (one
    sample would otherwise be an interval of width 0), and for a median of 0.
    """
    if len(values) < _MIN_INTERVAL_SAMPLES:
        return math.inf
    low, high = median_ci(values)
    middle = quantile(values, 0.5)
    if middle <= 0:
        return math.inf
    return (high - low) / 2.0 / middle


@attrs.frozen(kw_only=True)
class StopRule:
    """When to stop sampling: precision reached, sample cap, or time cap.

    Parameters
    ----------
    min_samples : int
        Samples taken before precision may stop the run.
    max_samples : int
        Hard cap on samples.
    max_time_ms : float
        Cap on time spent sampling (host wall clock), in milliseconds.
    rel_precision : float
        Stop once the median's 95 % interval is within ``± rel_precision`` of it.
    """

    min_samples: int
    max_samples: int
    max_time_ms: float
    rel_precision: float


def stop_reason(samples: Sequence[float], elapsed_ms: float, rule: StopRule) -> str | None:
    """Return why sampling should stop now, or None to keep going.

    Parameters
    ----------
    samples : sequence of float
        Samples so far.
    elapsed_ms : float
        Host time spent sampling so far, in milliseconds.
    rule : StopRule
        The limits.

    Returns
    -------
    str or None
        One of :data:`STOP_REASONS`: ``"precision"`` (the median is known to
        ``rule.rel_precision``), ``"max_samples"``, ``"time_cap"``; or None.
    """
    n = len(samples)
    if n >= rule.max_samples:
        return "max_samples"
    if n >= rule.min_samples and relative_halfwidth(samples) <= rule.rel_precision:
        return "precision"
    # The time cap wins over min_samples: a 50 ms kernel must not hold the loop for minutes.
    if n > 0 and elapsed_ms >= rule.max_time_ms:
        return "time_cap"
    return None
