"""When warm-up is over: two windows of calls that agree, on a GPU not about to cap its power.

A GPU under a power limit runs a heavy kernel at full clocks until its averaged power
reaches the limit, then lowers the clocks and stays lower. On an H200, an 8192³ bf16
matmul read 1383 µs for the first ~80 ms of calls and 1588–1601 µs once the power cap
was active. A kernel inside a model runs in that sustained state, so the timer keeps
warming up, in windows of calls, until two consecutive windows give the same median
per-call time, and, where NVML reports the power draw and limit, until a GPU drawing
close to its limit has actually started to cap (before that, two windows at full clock
agree and say nothing about the state that follows).

Everything here is a pure function of samples and NVML readings, so the decision is
tested without a GPU.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from kernelopt.bench._stats import quantile
from kernelopt.bench.device import DeviceState
from kernelopt.bench.measurement import number_text

__all__ = [
    "RESOLUTION_US",
    "SettleVerdict",
    "Window",
    "approaching_power_cap",
    "settle_verdict",
    "windows_agree",
]

# CUDA events time with a resolution of about 0.5 µs (cudaEventElapsedTime): medians
# closer than this are the same time, whatever the relative tolerance says of tiny calls.
RESOLUTION_US = 0.5


def _floats(values: Iterable[float]) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


@attrs.frozen(kw_only=True)
class Window:
    """One window of warm-up calls.

    Parameters
    ----------
    samples : tuple of float
        Per-call times, µs, taken exactly as the measurement takes them.
    elapsed_ms : float
        Host time the window took, ms.
    state : DeviceState, optional
        An NVML reading taken while the window's calls ran; None without NVML.
    """

    samples: tuple[float, ...] = attrs.field(converter=_floats)
    elapsed_ms: float = 0.0
    state: DeviceState | None = None

    @property
    def median(self) -> float:
        """Median per-call time of the window, µs."""
        return quantile(self.samples, 0.5)


@attrs.frozen(kw_only=True)
class SettleVerdict:
    """Whether warm-up may stop, and why (a sentence for the measurement's notes).

    Parameters
    ----------
    settled : bool
        True when the last two windows agree and no power cap is pending.
    agree : bool
        True when the last two windows' medians agree (even if a cap is pending).
    reason : str
        What was seen, in words.
    """

    settled: bool
    agree: bool
    reason: str


def windows_agree(previous: float, current: float, *, tolerance: float) -> bool:
    """True when two window medians (µs) are within ``tolerance`` of each other.

    Parameters
    ----------
    previous, current : float
        Median per-call times of two consecutive windows, µs.
    tolerance : float
        Relative difference accepted (0.01 = 1 %), of the larger median; medians
        within :data:`RESOLUTION_US` always agree.
    """
    return abs(current - previous) <= tolerance * max(previous, current) + RESOLUTION_US


def approaching_power_cap(state: DeviceState | None, *, margin: float) -> str | None:
    """A sentence when the GPU draws at least ``margin`` of its limit with no slowdown yet.

    At full clocks and close to the limit, the GPU is about to lower its clocks as its
    averaged power catches up: the calls so far are faster than the ones that follow.

    Parameters
    ----------
    state : DeviceState or None
        A reading taken while calls ran.
    margin : float
        Share of the enforced power limit (0.9 = 90 %) from which a cap is expected.

    Returns
    -------
    str or None
        None when the reading lacks power or limit, a slowdown is already active, or
        the draw is below ``margin`` of the limit.
    """
    if state is None or state.throttled:
        return None
    share = state.power_share
    if share is None or share < margin:
        return None
    return (
        f"power {state.power_draw_w:.0f} W is {share:.0%} of the {state.power_limit_w:.0f} W "
        "limit with no power cap active yet"
    )


def settle_verdict(
    windows: Sequence[Window], *, tolerance: float, power_margin: float
) -> SettleVerdict:
    """Decide whether warm-up is over after the windows so far.

    Parameters
    ----------
    windows : sequence of Window
        The warm-up windows in order; the last two are compared.
    tolerance : float
        See :func:`windows_agree`.
    power_margin : float
        See :func:`approaching_power_cap`.

    Returns
    -------
    SettleVerdict
        ``settled`` once the last two windows agree and the last reading shows no
        pending power cap. Once any window saw a slowdown, the cap has engaged and
        its reason may flicker off while the draw hovers near the limit: the windows
        alone decide from then on.
    """
    if len(windows) < 2:
        return SettleVerdict(settled=False, agree=False, reason="fewer than two windows")
    before, last = windows[-2], windows[-1]
    a, b = before.median, last.median
    agree = windows_agree(a, b, tolerance=tolerance)
    engaged = any(w.state is not None and w.state.throttled for w in windows)
    pending = None if engaged else approaching_power_cap(last.state, margin=power_margin)
    # Every integer digit: a 12 ms call's windows would read "1.235e+04" otherwise.
    shown = f"the last two window medians {number_text(a)} and {number_text(b)} us"
    if not agree:
        change = (b - a) / a if a > 0 else float("inf")
        reason = f"{shown} differ by {change:+.1%}"
    elif pending is not None:
        reason = pending
    else:
        reason = f"{shown} agree"
    return SettleVerdict(settled=agree and pending is None, agree=agree, reason=reason)
