"""The typed result of timing one function: samples, their quantiles and how they were taken."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import attrs

from kernelopt._checks import finite
from kernelopt._errors import InputError, expected
from kernelopt.bench._samples import sample_array, sample_floats
from kernelopt.bench._stats import COMPARE_STOP_REASONS, STOP_REASONS, median_ci, quantile
from kernelopt.bench.device import DeviceState

__all__ = [
    "BACKENDS",
    "CACHE_STATES",
    "MODES",
    "UNIT_SECONDS",
    "Measurement",
    "as_samples",
    "at_least",
    "boolean",
    "number_text",
    "one_of",
    "rescale",
]

MODES = ("cold", "hot", "graph")
CACHE_STATES = ("flush", "rotate", "none")
BACKENDS = ("cuda-events", "cpu-perf-counter")
UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# The power of ten of each unit: a rescale by an exact integer power of ten rounds once,
# where a factor such as 1e-6 / 1e-9 (999.9999999999999) made 3 us 2999.9999999999995 ns.
_UNIT_EXPONENT = {"ns": -9, "us": -6, "ms": -3, "s": 0}
_SAMPLE_VALUES = "finite samples >= 0"  # what _check_samples takes


def rescale(value: float, unit: str, to: str) -> float:
    """``value``, a time in ``unit``, as a time in ``to``, correctly rounded.

    Parameters
    ----------
    value : float
        The time, in ``unit``.
    unit, to : {"ns", "us", "ms", "s"}
        The units from and to.

    Returns
    -------
    float
        The time in ``to``: 3 us is 3000.0 ns and 5 us 5e-06 s (multiplied or divided by
        an exact power of ten, so rounded once).
    """
    shift = _UNIT_EXPONENT[unit] - _UNIT_EXPONENT[to]
    factor = float(10 ** abs(shift))  # exact: every power of ten up to 1e22 is a float
    return value * factor if shift >= 0 else value / factor


def number_text(value: float) -> str:
    """``value`` to 4 significant digits, but with all its integer digits (``12346``, not
    ``1.235e+04``), as the devlog's tables write numbers."""
    return f"{value:.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


def as_samples(value: Iterable[float]) -> tuple[float, ...]:
    """An attrs converter: samples to a tuple of floats (InputError naming ``samples``
    otherwise).

    Parameters
    ----------
    value : iterable of float, numpy.ndarray or torch.Tensor
        ``[n]`` times: numbers (no bool, no str) in any iterable, a 1-D numpy array of ints
        or floats, or a 1-D dense tensor on the CPU (any floating dtype, read as float64).

    Returns
    -------
    tuple of float
        ``[n]`` samples, in the order given.
    """
    array = sample_array(value, "samples", _SAMPLE_VALUES)
    if array is not None:
        return tuple(array.tolist())
    # float("123") would read a string as digits, and float("a") raise a bare ValueError.
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InputError(expected("samples as a sequence of numbers", repr(value), where="samples"))
    return sample_floats(tuple(value), "samples", _SAMPLE_VALUES)


def one_of(*allowed: str) -> Callable[[object, attrs.Attribute[str], str], None]:
    """An attrs validator: the value must be one of ``allowed`` (InputError naming the field)."""

    def check(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
        if value not in allowed:
            raise InputError(
                expected(f"one of {', '.join(allowed)}", repr(value), where=attribute.name)
            )

    return check


def at_least(minimum: int) -> Callable[[object, attrs.Attribute[int], int], None]:
    """An attrs validator: an integer >= ``minimum`` (InputError naming the field)."""

    def check(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            # repr: a "5" given for 5 must show its quotes, or the message reads as nonsense.
            raise InputError(
                expected(f"an integer >= {minimum}", repr(value), where=attribute.name)
            )

    return check


def _bool_or_none(
    _instance: object, attribute: attrs.Attribute[bool | None], value: object
) -> None:
    # 1 or "yes" read as settled by every ``if m.settled``, and a JSON line then holds a
    # number or text where its readers take true, false or null.
    if value is not None and not isinstance(value, bool):
        raise InputError(expected("True, False or None", repr(value), where=attribute.name))


def boolean(_instance: object, attribute: attrs.Attribute[bool], value: object) -> None:
    """An attrs validator: True or False, never 0, 1 or text (InputError naming the field)."""
    # 0 or "no" would be written to a JSON line where its readers take true or false, and
    # "no" reads as true in every ``if m.clocks_moved``.
    if not isinstance(value, bool):
        raise InputError(expected("True or False", repr(value), where=attribute.name))


def _stop_reason(_instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    # The timer writes one of STOP_REASONS, compare() one of COMPARE_STOP_REASONS; "" is a
    # measurement made without a stopping rule (samples given by hand). A misspelt reason
    # would read as none of them.
    if value not in ("", *STOP_REASONS, *COMPARE_STOP_REASONS):
        allowed = ", ".join(repr(reason) for reason in (*STOP_REASONS, *COMPARE_STOP_REASONS))
        raise InputError(
            expected(f"one of {allowed} or '' (none)", repr(value), where=attribute.name)
        )


def _notes(value: Iterable[str] | str) -> tuple[str, ...]:
    # A str is a sequence of str too: a lone note would become its letters.
    if isinstance(value, str):
        return (value,)
    if isinstance(value, bytes) or not isinstance(value, Iterable):
        raise InputError(
            expected("notes as a str or a sequence of str", type(value).__name__, where="notes")
        )
    notes = tuple(value)
    wrong = [note for note in notes if not isinstance(note, str)]
    if wrong:
        raise InputError(expected("notes as str", repr(wrong[0]), where="notes"))
    return notes


def _text(_instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    # A label or GPU name of another type was stored as given and written to JSON lines
    # whose readers take a string.
    if not isinstance(value, str):
        raise InputError(expected("a str", repr(value), where=attribute.name))


def _device_state(
    _instance: object, attribute: attrs.Attribute[DeviceState | None], value: object
) -> None:
    if value is not None and not isinstance(value, DeviceState):
        raise InputError(
            expected("a DeviceState or None", type(value).__name__, where=attribute.name)
        )


def _check_samples(_instance: object, _attribute: object, value: tuple[float, ...]) -> None:
    if not value:
        raise InputError(expected("at least one sample", "none", where="samples"))
    bad = [v for v in value if not math.isfinite(v) or v < 0]
    if bad:
        raise InputError(expected(_SAMPLE_VALUES, bad[0], where="samples"))


@attrs.frozen(kw_only=True)
class Measurement:
    """Per-call times of one function and the conditions they were taken in.

    Parameters
    ----------
    samples : tuple of float
        Per-call times in ``unit``, in the order taken. In graph mode each sample is one
        graph replay divided by ``calls_per_sample``.
    unit : str
        ``"us"`` unless converted.
    mode : str
        ``"cold"`` (L2 cleared or inputs rotated before each call), ``"hot"``
        (back-to-back calls on the same inputs) or ``"graph"`` (CUDA-graph replays).
    cache : str
        What was done about caches: ``"flush"`` (a buffer larger than L2 written
        before each call), ``"rotate"`` (input sets whose bytes provably exceed L2) or
        ``"none"``.
    backend : str
        ``"cuda-events"`` or ``"cpu-perf-counter"`` (no CUDA here: host clock).
    gpu : str
        Device name, ``"cpu"`` for the CPU backend.
    device, device_after : DeviceState, optional
        NVML readings when sampling started and ended; None without NVML.
    clocks_moved : bool
        True when a clock moved past tolerance or a slowdown was active (see ``notes``);
        a bool, never 0, 1 or text.
    calls_per_sample : int
        Calls per sample (the graph length in graph mode, else 1).
    warmup_calls : int
        Calls made before sampling.
    warmup_time_ms : float
        Host time warm-up took, settling windows included, ms: a finite number >= 0.
    settled : bool, optional
        True when warm-up ended because two consecutive windows of calls agreed (the
        steady state, power cap included, was reached); False when it stopped at
        ``settle_ms`` first (``notes`` says what still moved); None when settling was off.
    stop_reason : str
        Why sampling stopped, as the timer writes it: ``"precision"`` (the median known
        to ``rel_precision``), ``"max_samples"`` or ``"time_cap"``; as
        :func:`~kernelopt.bench.compare` writes it: ``"decided"`` (a verdict reached) or
        ``"cap"`` (the pair or time cap); ``""`` (the default) for samples given without
        a stopping rule. Any other value is refused.
    overhead : float, optional
        Median time of an empty timed region with the same backend, in ``unit``: the
        floor under which samples mean nothing. Not subtracted.
    label : str
        A name for the timed function, used in NVTX ranges and reports.
    notes : tuple of str
        Warnings about this measurement (clocks moved, caches not flushed, ...); a lone
        str is one note.
    """

    samples: tuple[float, ...] = attrs.field(converter=as_samples, validator=_check_samples)
    unit: str = attrs.field(default="us", validator=one_of(*UNIT_SECONDS))
    mode: str = attrs.field(default="cold", validator=one_of(*MODES))
    cache: str = attrs.field(default="flush", validator=one_of(*CACHE_STATES))
    backend: str = attrs.field(default="cuda-events", validator=one_of(*BACKENDS))
    gpu: str = attrs.field(default="", validator=_text)
    device: DeviceState | None = attrs.field(default=None, validator=_device_state)
    device_after: DeviceState | None = attrs.field(default=None, validator=_device_state)
    clocks_moved: bool = attrs.field(default=False, validator=boolean)
    calls_per_sample: int = attrs.field(default=1, validator=at_least(1))
    warmup_calls: int = attrs.field(default=0, validator=at_least(0))
    # A host time like the samples: finite, never negative.
    warmup_time_ms: float = attrs.field(default=0.0, validator=finite(minimum=0))
    settled: bool | None = attrs.field(default=None, validator=_bool_or_none)
    stop_reason: str = attrs.field(default="", validator=_stop_reason)
    # A time like the samples: finite, never negative (a NaN compared below every floor).
    overhead: float | None = attrs.field(default=None, validator=finite(minimum=0, optional=True))
    label: str = attrs.field(default="", validator=_text)
    notes: tuple[str, ...] = attrs.field(default=(), converter=_notes)

    @property
    def n(self) -> int:
        """Number of samples."""
        return len(self.samples)

    @property
    def median(self) -> float:
        """Median per-call time, in ``unit``."""
        return quantile(self.samples, 0.5)

    @property
    def p20(self) -> float:
        """20th percentile, in ``unit``."""
        return quantile(self.samples, 0.2)

    @property
    def p80(self) -> float:
        """80th percentile, in ``unit``."""
        return quantile(self.samples, 0.8)

    @property
    def iqr(self) -> float:
        """Interquartile range (p75 - p25), in ``unit``."""
        return quantile(self.samples, 0.75) - quantile(self.samples, 0.25)

    @property
    def rel_iqr(self) -> float:
        """IQR over median: the spread of one sample (0.02 = 2 %)."""
        median = self.median
        return self.iqr / median if median > 0 else math.inf

    @property
    def median_ci(self) -> tuple[float, float]:
        """95 % distribution-free interval of the median, in ``unit``."""
        return median_ci(self.samples)

    @property
    def mean(self) -> float:
        """Mean per-call time, in ``unit`` (pulled up by outliers; prefer the median)."""
        return sum(self.samples) / len(self.samples)

    @property
    def min(self) -> float:
        """Fastest sample, in ``unit``."""
        return min(self.samples)

    @property
    def seconds(self) -> float:
        """The median in seconds."""
        return rescale(self.median, self.unit, "s")

    def to_unit(self, unit: str) -> Measurement:
        """The same measurement with samples (and overhead) expressed in another unit.

        Parameters
        ----------
        unit : {"ns", "us", "ms", "s"}
            The new unit.

        Returns
        -------
        Measurement
            A copy with rescaled samples and overhead and the new unit.

        Raises
        ------
        InputError
            For any other unit.
        """
        if not isinstance(unit, str) or unit not in UNIT_SECONDS:
            raise InputError(expected(f"a unit in {tuple(UNIT_SECONDS)}", repr(unit), where="unit"))
        overhead = None if self.overhead is None else rescale(self.overhead, self.unit, unit)
        samples = [rescale(sample, self.unit, unit) for sample in self.samples]
        return attrs.evolve(self, samples=samples, unit=unit, overhead=overhead)

    def summary(self) -> str:
        """One line: ``median [p20, p80] unit (mode, n=…, backend)``, times to 4
        significant digits and every integer digit (``12346``, never ``1.235e+04``).

        A cold timing whose caches were neither flushed nor rotated out reads as what it
        was: ``host, no flush`` on the host clock, ``cold asked, no flush`` on CUDA (input
        sets that do not wrap the L2), never ``cold``.
        """
        median, p20, p80 = (number_text(v) for v in (self.median, self.p20, self.p80))
        mode = self.mode
        if mode == "cold" and self.cache == "none":
            host = self.backend == "cpu-perf-counter"
            mode = "host, no flush" if host else "cold asked, no flush"
        return f"{median} [{p20}, {p80}] {self.unit} ({mode}, n={self.n}, {self.backend})"
