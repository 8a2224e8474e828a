"""The roofline: what a call must cost, what the device can do, and how far a timing is from it.

Two numbers per call, counted by the caller (:class:`Cost`): floating-point operations
and the fewest bytes it must move through device memory (each input read once, each
output written once). Two ceilings per device, measured once and cached
(:func:`measure_ceilings`): the bandwidth of a large device-to-device copy, counting
bytes read plus bytes written, and the rate of a bf16 matrix product of 8192³ on random
data. Then::

    floor = max(flops / matmul rate, bytes / copy bandwidth)

No version of the call runs much faster than its floor; the larger term says whether the
problem is moving bytes (memory-bound) or arithmetic (compute-bound). A timing placed
on the roofline (:meth:`Roofline.place`) gives the metrics catalog triggers read:
``dram_pct``, ``tc_pct``, ``arith_intensity``, ``ridge``, ``floor_pct``.
"""

from __future__ import annotations

import datetime
import json
import math
import numbers
import operator
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from kernelopt._checks import as_path, finite
from kernelopt._errors import DeviceError, FormatError, InputError, expected
from kernelopt._fileio import atomic_write_text, file_in_the_way, locked
from kernelopt._strict_json import loads
from kernelopt.bench import _serde
from kernelopt.bench.measurement import UNIT_SECONDS, Measurement, number_text, rescale

__all__ = [
    "CACHE_ENV",
    "Ceilings",
    "Cost",
    "MatmulPrecisionWarning",
    "Roofline",
    "RooflineLayout",
    "RooflinePoint",
    "cache_dir",
    "ceilings_path",
    "check_same_device",
    "copy_cost",
    "elementwise_cost",
    "launch_overhead_pct",
    "load_ceilings",
    "matmul_cost",
    "measure_ceilings",
    "measured_on",
    "plot_roofline",
    "roofline_layout",
    "save_ceilings",
]

CACHE_ENV = "KERNELOPT_CACHE_DIR"
_CACHE_FORMAT = 1


def _as_number(value: Any) -> Any:
    """``value`` as a float when it is a number (int, numpy or torch scalar); anything
    else as given, for the validator to refuse by name. ``float("1e9")`` would read text
    as a count, and ``float(True)`` a flag as 1."""
    if value is None or isinstance(value, str | bytes | bool):
        return value
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return value


def _non_negative(_instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (isinstance(value, float) and math.isfinite(value) and value >= 0):
        raise InputError(expected("a finite number >= 0", repr(value), where=attribute.name))


def _element_bytes(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if not (isinstance(value, float) and math.isfinite(value) and value > 0):
        raise InputError(expected("a finite number > 0 or None", repr(value), where=attribute.name))


def _as_number_or_none(value: Any) -> Any:
    return None if value is None else _as_number(value)


def _text(_instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    # A name or a version of another type went into the JSON cache, where the reader
    # refused the whole entry (and every later load of that GPU) instead of this call.
    if not isinstance(value, str):
        raise InputError(expected("a str", repr(value), where=attribute.name))


def _as_int(value: Any) -> Any:
    """``value`` as a Python int when it is an integer of any kind (NumPy's too, which JSON
    cannot write); anything else as given, for the validator to refuse by name."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return value


def _size(_instance: object, attribute: attrs.Attribute[int], value: object) -> None:
    # Never a bool or a float: 1.07e9 bytes is no size the cache reads back.
    if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        raise InputError(expected("an integer >= 0", repr(value), where=attribute.name))


def _positive(_instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    # bool is an int to Python, but True is no rate.
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and value > 0):
        raise InputError(expected("a finite number > 0", repr(value), where=attribute.name))


@attrs.frozen(kw_only=True)
class Cost:
    """The work of one call: floating-point operations and bytes of device memory moved.

    Parameters
    ----------
    flops : float
        Floating-point operations per call (a multiply-add counts 2).
    bytes : float
        Fewest bytes per call through device memory: inputs read once, outputs written
        once.
    name : str
        What the cost is of (``"mla decode b=32 s=1 h=128 t=4096"``).
    elt_bytes : float, optional
        Bytes per input element of the matrix product the FLOPs are of (:func:`matmul_cost`
        sets it: 2 for bf16 and fp16, 4 for fp32); None where not known. A
        :class:`Roofline` warns of 4 or more: its compute ceiling is a 16-bit
        tensor-core rate (:class:`MatmulPrecisionWarning`).
    """

    flops: float = attrs.field(converter=_as_number, validator=_non_negative)
    bytes: float = attrs.field(converter=_as_number, validator=_non_negative)
    name: str = attrs.field(default="", validator=_text)
    elt_bytes: float | None = attrs.field(
        default=None, converter=_as_number_or_none, validator=_element_bytes
    )

    @property
    def arith_intensity(self) -> float:
        """FLOP per byte: 0 for a call with no FLOPs (a copy, or no work at all), ``inf``
        for one with FLOPs that moves no bytes."""
        if self.flops == 0:
            return 0.0
        return self.flops / self.bytes if self.bytes > 0 else math.inf

    # numpy's integers (np.int64(32) * cost) hand the product to __rmul__ instead of
    # making an array of the Cost.
    __array_ufunc__ = None

    def __add__(self, other: object) -> Cost:
        """The cost of running both calls (stages of one kernel, say)."""
        if not isinstance(other, Cost):
            # Python then raises its TypeError naming both types (a number added to a
            # Cost has no FLOPs or bytes to add).
            return NotImplemented
        name = " + ".join(n for n in (self.name, other.name) if n)
        # The widest element of the two: an fp32 product in the sum is what sets a floor
        # too low against a 16-bit matmul ceiling.
        widths = [width for width in (self.elt_bytes, other.elt_bytes) if width is not None]
        return Cost(
            flops=self.flops + other.flops,
            bytes=self.bytes + other.bytes,
            name=name,
            elt_bytes=max(widths) if widths else None,
        )

    def __radd__(self, other: object) -> Cost:
        """``0 + cost``: the cost itself, so that ``sum(costs)`` (which starts from the int
        0) adds costs; any other number added to a Cost is still a TypeError."""
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        return NotImplemented

    def __mul__(self, count: object) -> Cost:
        """The cost of ``count`` identical calls: FLOPs and bytes times ``count``.

        Parameters
        ----------
        count : int
            Calls, an integer >= 0 (Python's or numpy's); ``32 * cost`` reads the same.

        Returns
        -------
        Cost
            Named ``32 x <name>`` (a sum's name in parentheses); the cost itself for 1.

        Raises
        ------
        InputError
            For a count that is no integer >= 0 (a float, a flag, a Cost, text): a
            fraction of a call, or a negative one, costs nothing a kernel does.
        """
        try:
            calls = None if isinstance(count, bool) else operator.index(count)  # type: ignore[arg-type]
        except TypeError:
            calls = None
        if calls is None or calls < 0:
            shown = type(count).__name__ if isinstance(count, Cost) else repr(count)
            raise InputError(
                expected(
                    "a count of identical calls (an integer >= 0) to multiply a Cost by", shown
                )
            )
        if calls == 1:
            return self
        name = f"({self.name})" if " + " in self.name else self.name
        return Cost(
            flops=self.flops * calls,
            bytes=self.bytes * calls,
            name=f"{calls} x {name}" if name else "",
            elt_bytes=self.elt_bytes,
        )

    __rmul__ = __mul__

    @classmethod
    def of(cls, spec: Cost | Mapping[str, Any] | Callable[[], Any]) -> Cost:
        """Build a Cost from a Cost, a mapping with ``flops`` and ``bytes``, or a function.

        Parameters
        ----------
        spec : Cost, mapping or callable
            A Cost, returned as is; a mapping with ``flops`` and ``bytes`` (and optionally
            ``name``); or a function called with no arguments that returns one of the
            other two: the caller's own cost model
            (``lambda: mla_decode_cost(b=32, s_q=1, ...)``).

        Returns
        -------
        Cost
            The cost.

        Raises
        ------
        InputError
            For a mapping without ``flops`` or ``bytes``, a function that returns a
            callable, or anything else.
        """
        if isinstance(spec, Cost):
            return spec
        if isinstance(spec, Mapping):
            missing = {"flops", "bytes"} - set(spec)
            if missing:
                # Name what was given too: {"flop": 1} is one letter off, not empty.
                keys = ", ".join(repr(key) for key in list(spec)[:8])
                got = (
                    f"one without {' or '.join(sorted(missing))} (its keys: {keys})"
                    if keys
                    else "an empty mapping"
                )
                raise InputError(expected("a mapping with flops and bytes", got))
            return cls(flops=spec["flops"], bytes=spec["bytes"], name=str(spec.get("name", "")))
        if callable(spec):
            result = spec()
            if callable(result) and not isinstance(result, (Cost, Mapping)):
                raise InputError(
                    expected("a Cost or a mapping from the cost function", "a callable")
                )
            return cls.of(result)
        raise InputError(expected("a Cost, a mapping or a function", type(spec).__name__))


def _sizes(**sizes: Any) -> None:
    """Refuse a size or byte width that is no number >= 0, naming the argument.

    ``matmul_cost("4096", ...)`` failed with "can't multiply sequence by non-int", and a
    negative size was named as the cost's ``flops``, an argument no caller passed.
    """
    for name, value in sizes.items():
        # As Cost reads its numbers: ints, floats, numpy and torch scalars.
        number = _as_number(value)
        if not (isinstance(number, float) and math.isfinite(number) and number >= 0):
            raise InputError(expected("a finite number >= 0", repr(value), where=name))


def matmul_cost(
    m: int, n: int, k: int, *, elt_bytes: int = 2, out_bytes: int | None = None
) -> Cost:
    """Cost of ``[m, k] @ [k, n]``: 2·m·n·k FLOPs, inputs and output moved once.

    Parameters
    ----------
    m, n, k : int
        The product's sizes.
    elt_bytes : int
        Bytes per input element (2 for bfloat16).
    out_bytes : int, optional
        Bytes per output element; ``elt_bytes`` when None.

    Returns
    -------
    Cost
        Named ``matmul MxNxK``, with ``elt_bytes``: the FLOPs are the same for every
        element size, and a :class:`Roofline` warns where the ceilings' bf16 matmul rate
        does not fit them (:class:`MatmulPrecisionWarning`).

    Raises
    ------
    InputError
        For a size or byte width that is not a finite number >= 0 (text, a flag, NaN),
        naming the argument.
    """
    out = elt_bytes if out_bytes is None else out_bytes
    _sizes(m=m, n=n, k=k, elt_bytes=elt_bytes, out_bytes=out)
    return Cost(
        flops=2.0 * m * n * k,
        bytes=float((m * k + k * n) * elt_bytes + m * n * out),
        name=f"matmul {m}x{n}x{k}",
        elt_bytes=elt_bytes,
    )


def copy_cost(nbytes: int) -> Cost:
    """Cost of a memory copy: no FLOPs, every byte read once and written once.

    Parameters
    ----------
    nbytes : int
        Bytes copied.

    Returns
    -------
    Cost
        ``flops=0``, ``bytes=2·nbytes``, named ``"copy <nbytes> B"``.

    Raises
    ------
    InputError
        For a size or byte width that is not a finite number >= 0 (text, a flag, NaN),
        naming the argument.
    """
    _sizes(nbytes=nbytes)
    return Cost(flops=0.0, bytes=2.0 * nbytes, name=f"copy {nbytes} B")


def elementwise_cost(
    numel: int,
    *,
    inputs: int = 1,
    outputs: int = 1,
    elt_bytes: int = 4,
    flops_per_element: float = 1.0,
) -> Cost:
    """Cost of an elementwise op over ``numel`` elements with ``inputs`` and ``outputs`` tensors.

    Parameters
    ----------
    numel : int
        Elements of each tensor.
    inputs, outputs : int
        Tensors read and written, each moved once.
    elt_bytes : int
        Bytes per element (4 for float32).
    flops_per_element : float
        FLOPs per element.

    Returns
    -------
    Cost
        Named ``elementwise N``.

    Raises
    ------
    InputError
        For a size or byte width that is not a finite number >= 0 (text, a flag, NaN),
        naming the argument.
    """
    _sizes(
        numel=numel,
        inputs=inputs,
        outputs=outputs,
        elt_bytes=elt_bytes,
        flops_per_element=flops_per_element,
    )
    return Cost(
        flops=flops_per_element * numel,
        bytes=float(numel * elt_bytes * (inputs + outputs)),
        name=f"elementwise {numel}",
    )


@attrs.frozen(kw_only=True)
class Ceilings:
    """What one device can do, measured on it.

    Parameters
    ----------
    gpu : str
        Device name, the cache key (``"NVIDIA H200"``).
    copy_bytes_per_s : float
        Device-to-device copy bandwidth counting bytes read plus written, B/s.
    matmul_flop_per_s : float
        bf16 matrix-product rate on random data, FLOP/s.
    measured_at : str
        ISO-8601 timestamp of the measurement.
    torch : str
        torch version used.
    copy_bytes : int
        Size of the copied buffer, bytes.
    matmul_n : int
        Matrix size n of the n³ product.
    source : str
        ``"measured"`` or where the numbers came from.

    Raises
    ------
    InputError
        For a text field that is not a str, a rate that is not a finite number > 0, or a
        size that is not an integer >= 0, naming the field.
    """

    gpu: str = attrs.field(validator=_text)
    # A rate worked out with numpy (np.float32, np.int64) is a number too: without the
    # converter it was refused as "Expected a finite number > 0, got np.float32(4e+12)".
    copy_bytes_per_s: float = attrs.field(converter=_as_number, validator=_positive)
    matmul_flop_per_s: float = attrs.field(converter=_as_number, validator=_positive)
    measured_at: str = attrs.field(default="", validator=_text)
    torch: str = attrs.field(default="", validator=_text)
    copy_bytes: int = attrs.field(default=0, converter=_as_int, validator=_size)
    matmul_n: int = attrs.field(default=0, converter=_as_int, validator=_size)
    source: str = attrs.field(default="measured", validator=_text)

    @property
    def ridge(self) -> float:
        """Arithmetic intensity where the two ceilings meet, FLOP/byte."""
        return self.matmul_flop_per_s / self.copy_bytes_per_s

    @property
    def copy_tb_s(self) -> float:
        """Copy bandwidth in TB/s (10¹² B/s)."""
        return self.copy_bytes_per_s / 1e12

    @property
    def matmul_tflop_s(self) -> float:
        """Matrix-product rate in TFLOP/s."""
        return self.matmul_flop_per_s / 1e12


def launch_overhead_pct(events: Measurement, graph: Measurement) -> float:
    """Share of the per-call time that CUDA graphs remove, % (never negative).

    Parameters
    ----------
    events : Measurement
        Per-call time with events around each launch (mode ``"cold"`` or ``"hot"``).
    graph : Measurement
        Per-call time from graph replays of the same call.
    """
    for name, value in (("events", events), ("graph", graph)):
        if not isinstance(value, Measurement):
            raise InputError(expected("a Measurement", type(value).__name__, where=name))
    if events.seconds <= 0:
        return 0.0
    return max(0.0, 100.0 * (events.seconds - graph.seconds) / events.seconds)


def _of_kind(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """Refuse a field of another type when the Roofline is made, not at its first read."""
    kind = Ceilings if attribute.name == "ceilings" else Cost
    if not isinstance(value, kind):
        # A mapping or a cost function is what Cost.of turns into a Cost.
        what = "a Cost (Cost.of reads a mapping)" if kind is Cost else "Ceilings"
        raise InputError(expected(what, type(value).__name__, where=attribute.name))
    # A call with no FLOPs and no bytes has a floor of 0: every time is "0 % of the
    # floor" and its bound is neither memory nor compute.
    if isinstance(value, Cost) and value.flops == 0 and value.bytes == 0:
        raise InputError(
            expected("a cost with FLOPs or bytes > 0", "0 FLOPs and 0 bytes", where="cost")
        )


@attrs.frozen(kw_only=True)
class Roofline:
    """One call's cost against one device's ceilings.

    Parameters
    ----------
    ceilings : Ceilings
        The device.
    cost : Cost
        The call.

    Examples
    --------
    >>> from kernelopt.bench import Ceilings, Cost, Roofline
    >>> h200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.25e12, matmul_flop_per_s=694e12)
    >>> line = Roofline(ceilings=h200, cost=Cost(flops=0, bytes=8e9))
    >>> round(line.floor("ms"), 3), line.bound
    (1.882, 'memory')
    """

    ceilings: Ceilings = attrs.field(validator=_of_kind)
    cost: Cost = attrs.field(validator=_of_kind)

    def __attrs_post_init__(self) -> None:
        _warn_wide_matmul(self.cost, self.ceilings)

    @property
    def compute_s(self) -> float:
        """Time the FLOPs take at the matmul rate, s."""
        return self.cost.flops / self.ceilings.matmul_flop_per_s

    @property
    def memory_s(self) -> float:
        """Time the bytes take at the copy bandwidth, s."""
        return self.cost.bytes / self.ceilings.copy_bytes_per_s

    @property
    def floor_s(self) -> float:
        """The floor: the larger of the two times, s."""
        return max(self.compute_s, self.memory_s)

    @property
    def bound(self) -> str:
        """``"memory"`` when bytes set the floor (intensity below the ridge), else
        ``"compute"``; a balanced call (bytes and FLOPs take the same time, intensity at
        the ridge) is ``"memory"``."""
        return "memory" if self.memory_s >= self.compute_s else "compute"

    @property
    def arith_intensity(self) -> float:
        """FLOP per byte of the call."""
        return self.cost.arith_intensity

    @property
    def ridge(self) -> float:
        """FLOP per byte where the device's ceilings meet."""
        return self.ceilings.ridge

    def floor(self, unit: str = "us") -> float:
        """The time floor in a given unit.

        Parameters
        ----------
        unit : {"ns", "us", "ms", "s"}
            The unit to express the floor in.

        Returns
        -------
        float
            The floor in ``unit``.

        Raises
        ------
        InputError
            For any other unit.
        """
        _check_unit(unit)
        return rescale(self.floor_s, "s", unit)

    def place(
        self,
        measured: Measurement | float,
        *,
        unit: str = "us",
        launch_overhead_pct: float | None = None,
    ) -> RooflinePoint:
        """Place a timing on the roofline.

        Parameters
        ----------
        measured : Measurement or float
            A measurement (its median is used) or a time in ``unit``.
        unit : str
            Unit of a bare float.
        launch_overhead_pct : float, optional
            Share of the time graphs remove (:func:`launch_overhead_pct`), carried into
            the metrics.

        Returns
        -------
        RooflinePoint
            The timing against this roofline.

        Raises
        ------
        InputError
            For a measurement made on another device than the ceilings' (see
            :func:`check_same_device`), a bare time that is no number, a unit that is no
            unit of time, or a time that is not above 0.
        """
        if isinstance(measured, Measurement):
            check_same_device(measured, self.ceilings, where="measured")
            value, unit = measured.median, measured.unit
        else:
            _check_unit(unit)
            # Text and flags are no times (float("5") would read digits as 5 us).
            number = _as_number(measured)
            if not isinstance(number, float):
                raise InputError(
                    expected("a Measurement or a number", repr(measured), where="measured")
                )
            value = number
        seconds = rescale(value, unit, "s")
        if not (math.isfinite(seconds) and seconds > 0):
            # Named as given: a time in seconds would read as another number.
            raise InputError(
                expected("a positive time", f"{number_text(value)} {unit}", where="measured")
            )
        return RooflinePoint(roofline=self, time_s=seconds, launch_overhead_pct=launch_overhead_pct)


class MatmulPrecisionWarning(UserWarning):
    """A matrix product of 32-bit elements placed on a 16-bit tensor-core matmul ceiling.

    :func:`measure_ceilings` times a bf16 product only, so a GPU's compute ceiling is the
    bf16/fp16 tensor-core rate. An fp32 product (tf32 or IEEE) runs at half that rate or
    less: against it, its compute floor is too low and its ``tc_pct`` too high, by 2x or
    more.
    """


# Bytes of the element the measured matmul rate is of (bf16).
_CEILING_ELT_BYTES = 2


def _warn_wide_matmul(cost: Cost, ceilings: Ceilings) -> None:
    """Warn when ``cost`` is a matrix product of wider elements than the GPU's matmul rate
    was measured with: its floor and ``tc_pct`` would be off by 2x or more, silently."""
    wide = cost.elt_bytes is not None and cost.elt_bytes > _CEILING_ELT_BYTES
    if not wide or cost.flops == 0 or _is_cpu(ceilings.gpu):
        return
    what = cost.name or "the cost"
    warnings.warn(
        f"{what}: a product of {number_text(cost.elt_bytes or 0.0)}-byte elements placed on "
        f"the matmul ceiling of {ceilings.gpu!r}, a bf16 tensor-core rate "
        f"({ceilings.matmul_tflop_s:.0f} TFLOP/s): an fp32 product (tf32 or IEEE) runs at "
        "half that rate or less, so its compute floor is 2x or more too low and its tc_pct "
        "2x or more too high: it is the floor of the product done in bf16",
        MatmulPrecisionWarning,
        stacklevel=4,
    )


def measured_on(measurement: Measurement) -> str:
    """The device a measurement was made on, as it records it; ``""`` where unknown.

    Parameters
    ----------
    measurement : Measurement
        The timing.

    Returns
    -------
    str
        ``measurement.gpu`` (``"cpu"`` for the timer's host clock), else the name NVML
        read (``measurement.device.name``), else ``""``: samples given by hand name no
        device unless told.
    """
    if measurement.gpu:
        return measurement.gpu
    return measurement.device.name if measurement.device is not None else ""


def _is_cpu(name: str) -> bool:
    """Whether a device name is the host's: the timer names it ``"cpu"``."""
    return name.strip().lower() == _CPU


_CPU = "cpu"


def check_same_device(measurement: Measurement, ceilings: Ceilings, *, where: str) -> None:
    """Refuse a CPU timing against a GPU's ceilings, and a GPU timing against the CPU's.

    A floor holds for the device its ceilings were measured on: a host-clock timing
    placed on an H200's roofline read as 0.00004 % of its floor. The CPU is named
    ``"cpu"`` (``Measurement.gpu`` of the timer's host clock, ``Ceilings.gpu`` of ceilings
    given for the host); any other name is a GPU's. GPU timings on GPU ceilings are
    placed as before, whatever their names, and a measurement that names no device
    (samples given by hand, ``gpu=""``) is taken as it is.

    Parameters
    ----------
    measurement : Measurement
        The timing to place.
    ceilings : Ceilings
        The device's ceilings.
    where : str
        The argument that gave the measurement, first in the message.

    Raises
    ------
    InputError
        ``measured: Expected a timing made on a GPU, as the ceilings of 'NVIDIA H200'
        are, got one made on 'cpu' (Measurement.gpu) ...``.
    """
    device = measured_on(measurement)
    if not device or _is_cpu(device) == _is_cpu(ceilings.gpu):
        return
    if _is_cpu(device):
        what = f"a timing made on a GPU, as the ceilings of {ceilings.gpu!r} are"
        fix = f"place it on Ceilings of the host (gpu={_CPU!r}), or time it on the GPU"
    else:
        what = f"a timing made on the host, as the ceilings of {ceilings.gpu!r} are"
        fix = f"place it on Ceilings of {device!r} (measure_ceilings() there)"
    raise InputError(
        expected(
            what,
            f"one made on {device!r} (Measurement.gpu): a floor holds only for the device "
            f"its ceilings were measured on; {fix}",
            where=where,
        )
    )


def _check_unit(unit: object) -> None:
    """Refuse a ``unit`` that is no unit of time, by name (a list in place of one failed
    with "unhashable type: 'list'")."""
    if not isinstance(unit, str) or unit not in UNIT_SECONDS:
        raise InputError(expected(f"a unit in {tuple(UNIT_SECONDS)}", repr(unit), where="unit"))


def _a_roofline(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, Roofline):
        raise InputError(expected("a Roofline", type(value).__name__, where=attribute.name))


def _a_time(_instance: object, attribute: attrs.Attribute[float], value: object) -> None:
    # Every rate and share divides by the time: 0 raised ZeroDivisionError at the first
    # read, and NaN gave NaN metrics that no JSONL row can hold.
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and value > 0)
    ):
        raise InputError(expected("a positive time, s", repr(value), where=attribute.name))


@attrs.frozen(kw_only=True)
class RooflinePoint:
    """A timing of a call, placed against its roofline.

    Parameters
    ----------
    roofline : Roofline
        The call's cost and the device.
    time_s : float
        Measured time per call, s.
    launch_overhead_pct : float, optional
        Share of the time CUDA graphs remove, %.
    """

    roofline: Roofline = attrs.field(validator=_a_roofline)
    time_s: float = attrs.field(validator=_a_time)
    launch_overhead_pct: float | None = attrs.field(
        default=None, validator=finite(minimum=0, optional=True)
    )

    @property
    def flop_per_s(self) -> float:
        """Achieved FLOP/s."""
        return self.roofline.cost.flops / self.time_s

    @property
    def bytes_per_s(self) -> float:
        """Achieved bytes/s (of the counted minimum bytes)."""
        return self.roofline.cost.bytes / self.time_s

    @property
    def tc_pct(self) -> float:
        """Achieved FLOP/s over the measured bf16 matmul rate, %."""
        return 100.0 * self.flop_per_s / self.roofline.ceilings.matmul_flop_per_s

    @property
    def dram_pct(self) -> float:
        """Achieved bytes/s over the measured copy bandwidth, %."""
        return 100.0 * self.bytes_per_s / self.roofline.ceilings.copy_bytes_per_s

    @property
    def floor_pct(self) -> float:
        """Floor over measured time, % (100 = at the roofline)."""
        return 100.0 * self.roofline.floor_s / self.time_s

    @property
    def gap_s(self) -> float:
        """Time above the floor, s (0 when at or under it)."""
        return max(0.0, self.time_s - self.roofline.floor_s)

    @property
    def gap_pct(self) -> float:
        """Time above the floor as a share of the measured time, %: the most any change
        that keeps the same work could save."""
        return 100.0 * self.gap_s / self.time_s

    def metrics(self) -> dict[str, float]:
        """The catalog trigger metrics and the achieved rates.

        ``dram_pct``, ``tc_pct``, ``arith_intensity``, ``ridge``, ``floor_pct`` (and
        ``launch_overhead_pct`` when known), plus ``flop_per_s`` and ``bytes_per_s``: the
        absolute rates, so a row that carries them can be placed again against other
        ceilings.
        """
        values = {
            "dram_pct": self.dram_pct,
            "tc_pct": self.tc_pct,
            "arith_intensity": self.roofline.arith_intensity,
            "ridge": self.roofline.ridge,
            "floor_pct": self.floor_pct,
            "flop_per_s": self.flop_per_s,
            "bytes_per_s": self.bytes_per_s,
        }
        if self.launch_overhead_pct is not None:
            values["launch_overhead_pct"] = float(self.launch_overhead_pct)
        return values


# --- ceilings: measured once per device, cached -------------------------------------------


def cache_dir() -> Path:
    """The user cache directory: ``$KERNELOPT_CACHE_DIR``, else ``$XDG_CACHE_HOME/kernelopt``,
    else ``~/.cache/kernelopt``."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kernelopt"


def ceilings_path() -> Path:
    """The ceilings cache file, ``cache_dir()/ceilings.json``."""
    return cache_dir() / "ceilings.json"


def _cache_file(path: str | os.PathLike[str] | None) -> Path:
    """The cache file ``path`` names, :func:`ceilings_path` for None; anything but a str or
    path-like (a number, bytes) is refused by name before a file is opened."""
    return ceilings_path() if path is None else as_path(path, "path")


def _check_cache_folder(path: Path) -> None:
    """Refuse a cache file whose folder cannot be made because a file stands on its way
    (``$KERNELOPT_CACHE_DIR`` naming a file): found when the result was saved, it cost
    the whole measurement.

    Raises
    ------
    InputError
        Naming the cache file and the file in the way.
    """
    blocker = file_in_the_way(path)
    if blocker is not None:
        raise InputError(
            expected(
                "a ceilings cache file whose folder can be created",
                f"{path}, under the file {blocker}",
            )
        )


def _read_cache(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(
            expected("a UTF-8 JSON ceilings cache", f"byte {error.start} not UTF-8"), path=path
        ) from None
    except OSError as error:
        raise InputError(
            expected("a readable ceilings cache file", f"{path}: {error.strerror}")
        ) from None
    try:
        data = loads(text)
    except json.JSONDecodeError as error:
        raise FormatError(
            expected("JSON", f"{error.msg} at line {error.lineno}"), path=path, line=error.lineno
        ) from None
    except FormatError as error:  # too deep, or an integer longer than Python converts
        raise FormatError(error.message, path=path) from None
    if not isinstance(data, dict) or data.get("format") != _CACHE_FORMAT:
        raise FormatError(
            expected(f"a kernelopt ceilings cache (format {_CACHE_FORMAT})", "other JSON"),
            path=path,
        )
    devices = data.get("devices", {})
    if not isinstance(devices, dict):
        raise FormatError(expected("an object under 'devices'", type(devices).__name__), path=path)
    return devices


def load_ceilings(gpu: str, *, path: str | os.PathLike[str] | None = None) -> Ceilings | None:
    """The cached ceilings of ``gpu``, or None when none were cached.

    Parameters
    ----------
    gpu : str
        Device name as :func:`measure_ceilings` recorded it (``"NVIDIA H200"``).
    path : path-like, optional
        The cache file; ``ceilings.json`` in the user cache directory
        (``$KERNELOPT_CACHE_DIR``, else ``$XDG_CACHE_HOME/kernelopt`` or
        ``~/.cache/kernelopt``) when None.

    Returns
    -------
    Ceilings or None
        The ceilings cached for ``gpu``.

    Raises
    ------
    InputError
        For a ``gpu`` that is not a str, or a ``path`` that is neither a str nor a
        path-like.
    FormatError
        When the cache file is not a ceilings cache (it is never silently replaced).
    """
    if not isinstance(gpu, str):
        # A list failed as unhashable, and a number read as a GPU never cached (None).
        raise InputError(expected("a GPU name as a str", repr(gpu), where="gpu"))
    target = _cache_file(path)
    entry = _read_cache(target).get(gpu)
    if entry is None:
        return None
    try:
        return _serde.structure(entry, Ceilings)
    except InputError as error:
        raise FormatError(str(error), path=target, section=gpu) from None


def save_ceilings(ceilings: Ceilings, *, path: str | os.PathLike[str] | None = None) -> Path:
    """Store ``ceilings`` in the cache under its GPU name (atomic, locked) and return the path.

    Parameters
    ----------
    ceilings : Ceilings
        The device's ceilings.
    path : path-like, optional
        The cache file; :func:`ceilings_path` when None.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    InputError
        For anything but Ceilings, ceilings :func:`load_ceilings` would not read back,
        naming the field, or a ``path`` that is neither a str nor a path-like; the cache
        is left as it was.
    FormatError
        When the file is not a ceilings cache (it is never replaced).
    """
    if not isinstance(ceilings, Ceilings):
        raise InputError(expected("Ceilings", type(ceilings).__name__, where="ceilings"))
    entry = _serde.unstructure(ceilings)
    # Saved, such an entry made every later load_ceilings (and measure_ceilings) of this
    # GPU fail on the cache: refused now, before the file is touched.
    _serde.structure(entry, Ceilings)
    target = _cache_file(path)
    with locked(target):
        devices = _read_cache(target)
        devices[ceilings.gpu] = entry
        text = json.dumps({"format": _CACHE_FORMAT, "devices": devices}, indent=1, sort_keys=True)
        atomic_write_text(target, text + "\n")
    return target


def measure_ceilings(
    *,
    refresh: bool = False,
    device: int | None = None,
    copy_bytes: int = 1 << 30,
    matmul_n: int = 8192,
    path: str | os.PathLike[str] | None = None,
    max_time_ms: float = 2000.0,
    settle_ms: float = 3000.0,
    heat_ms: float = 2000.0,
) -> Ceilings:
    """Measure the device's copy bandwidth and bf16 matmul rate, or read them from the cache.

    The copy moves ``copy_bytes`` from one device buffer to another (``2·copy_bytes``
    counted); the matmul multiplies two random ``matmul_n``² bf16 matrices (never zeros:
    a matrix unit runs faster on zeros than on real data). Both are timed hot: their
    working sets are far beyond any L2.

    Both are sustained rates: the timer warms up until two consecutive windows of calls
    agree and a GPU drawing close to its power limit has started to cap (``settle_ms``).
    A matmul timed in its first tens of milliseconds on a cool GPU runs at full clocks and
    reads faster than any kernel can sustain (an H200 read 795 TFLOP/s that way, against
    686-694 TFLOP/s sustained), which would put real kernels' ``tc_pct`` too low.

    Parameters
    ----------
    refresh : bool
        Measure again even when the cache holds this GPU. Ceilings cached at other
        ``copy_bytes`` or ``matmul_n`` are measured again too (and replace them).
    device : int, optional
        CUDA device index; None for the current one.
    copy_bytes : int
        Bytes per copy (1 GiB).
    matmul_n : int
        Matrix size (8192).
    path : Path, optional
        Cache file; default :func:`ceilings_path`.
    max_time_ms : float
        Sampling time cap per ceiling, ms.
    settle_ms : float
        Cap on the warm-up that reaches the sustained (power-capped) state, per ceiling,
        ms. A ceiling whose warm-up did not settle is measured anyway, with a warning.
    heat_ms : float
        Wall time the matmul runs back to back before it is timed. On an H200 the settle
        windows could agree while the card was still drawing well under its power limit
        (298 W of 700 W), reading 789 TFLOP/s against 673 sustained; seconds of load
        bring it to the power-capped state a long run sees.

    Raises
    ------
    DeviceError
        Without a CUDA device, saying why torch sees none and what to do.
    InputError
        For a ``path`` that is neither a str nor a path-like, or that lies under a file
        (``$KERNELOPT_CACHE_DIR`` naming a file), before anything is measured.
    FormatError
        When the cache file is not a ceilings cache, before anything is measured (it is
        never replaced).
    """
    from kernelopt.bench.timer import Timer, cuda_available, no_cuda_reason

    cache = _cache_file(path)  # a path of another type is refused before any device work
    _check_cache_folder(cache)
    if not cuda_available():
        raise DeviceError(
            expected("a CUDA device to measure ceilings", f"none: {no_cuda_reason()}")
        )
    import torch

    index = torch.cuda.current_device() if device is None else device
    gpu = str(torch.cuda.get_device_name(index))
    if not refresh:
        cached = load_ceilings(gpu, path=cache)
        if cached is not None and _same_sizes(cached, copy_bytes, matmul_n):
            return cached
    else:
        # The result is saved into the cache: one that save_ceilings refuses is refused
        # now, not after the seconds of measurement, which would be lost with the error.
        _read_cache(cache)
    timer = Timer(
        mode="hot",
        device=index,
        max_time_ms=max_time_ms,
        rel_precision=0.002,
        settle_ms=settle_ms,
    )
    with torch.cuda.device(index):
        copy = _time_copy(timer, torch, index, copy_bytes)
        matmul = _time_matmul(timer, torch, index, matmul_n, heat_ms)
        torch.cuda.empty_cache()
    for measured in (copy, matmul):
        if measured.settled is False:
            warnings.warn(
                f"{measured.label}: " + "; ".join(measured.notes), RuntimeWarning, stacklevel=2
            )
    ceilings = Ceilings(
        gpu=gpu,
        copy_bytes_per_s=2.0 * copy_bytes / copy.seconds,
        matmul_flop_per_s=2.0 * matmul_n**3 / matmul.seconds,
        measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        torch=str(torch.__version__),
        copy_bytes=copy_bytes,
        matmul_n=matmul_n,
    )
    save_ceilings(ceilings, path=cache)
    return ceilings


def _same_sizes(cached: Ceilings, copy_bytes: int, matmul_n: int) -> bool:
    """Whether ``cached`` was measured at the sizes asked for (0: not recorded, as in
    ceilings saved by hand). A 256³ matmul reads far below the 8192³ rate: a quick check
    at small sizes must not answer every later call for the full-size ceilings."""
    return cached.copy_bytes in (0, copy_bytes) and cached.matmul_n in (0, matmul_n)


def _time_copy(timer: Any, torch: Any, index: int, nbytes: int) -> Measurement:
    # Buffers live in this frame only, so they are freed before the matmul allocates.
    source = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device=index)
    target = torch.empty_like(source)
    measured: Measurement = timer.measure(lambda: target.copy_(source), label="ceiling-copy")
    return measured


def _time_matmul(timer: Any, torch: Any, index: int, n: int, heat_ms: float) -> Measurement:
    # Random operands: a matrix unit runs measurably faster on zeros than on real data.
    a = torch.randn(n, n, dtype=torch.bfloat16, device=index)
    b = torch.randn(n, n, dtype=torch.bfloat16, device=index)
    product = torch.empty(n, n, dtype=torch.bfloat16, device=index)
    began = time.perf_counter()
    while (time.perf_counter() - began) * 1000.0 < heat_ms:
        for _ in range(8):
            torch.matmul(a, b, out=product)
        torch.cuda.synchronize(index)
    measured: Measurement = timer.measure(
        lambda: torch.matmul(a, b, out=product), label="ceiling-matmul"
    )
    return measured


@attrs.frozen(kw_only=True)
class RooflineLayout:
    """Where :func:`plot_roofline` puts things on its log-log axes.

    Parameters
    ----------
    low, high : float
        Range of the intensity axis, FLOP/byte; both > 0.
    drawn : tuple of (float, float, str)
        Each drawn point: intensity (FLOP/byte; ``high`` for a call that moves no
        bytes), achieved TFLOP/s, legend label.
    skipped : tuple of str
        Points a log axis cannot show (no FLOPs, so intensity and rate are 0), one
        sentence each.
    """

    low: float
    high: float
    drawn: tuple[tuple[float, float, str], ...]
    skipped: tuple[str, ...]


def _roofline_points(points: object) -> list[RooflinePoint]:
    """``points`` as a list: a sequence of RooflinePoint, at least one."""
    if isinstance(points, str | bytes) or not isinstance(points, Sequence):
        raise InputError(
            expected("a sequence of RooflinePoint", type(points).__name__, where="points")
        )
    if not points:
        raise InputError(expected("at least one roofline point", "none", where="points"))
    for index, point in enumerate(points):
        if not isinstance(point, RooflinePoint):
            raise InputError(
                expected("a RooflinePoint", type(point).__name__, where=f"points[{index}]")
            )
    return list(points)


def _point_labels(labels: object, count: int) -> list[str]:
    """One label per point: the ``labels`` given, or ``point 1``, ``point 2``... for None.

    A lone str is refused: ``"x"`` for one point was taken as its one letter, and
    ``"gemm"`` refused as 4 labels.
    """
    if labels is None:
        return [f"point {i + 1}" for i in range(count)]
    if isinstance(labels, str | bytes) or not isinstance(labels, Sequence):
        raise InputError(
            expected("a sequence of str, one per point", type(labels).__name__, where="labels")
        )
    if len(labels) != count:
        raise InputError(
            expected(
                f"{count} label{'s' if count != 1 else ''}, one per point",
                len(labels),
                where="labels",
            )
        )
    for index, label in enumerate(labels):
        if not isinstance(label, str):
            raise InputError(expected("a str", repr(label), where=f"labels[{index}]"))
    return list(labels)


def roofline_layout(
    points: Sequence[RooflinePoint], *, labels: Sequence[str] | None = None
) -> RooflineLayout:
    """The axis range and the points of a roofline plot, without drawing (no matplotlib).

    A point with no FLOPs (a copy) has intensity 0 and rate 0: nowhere on a log axis. It
    is left out of the range and of the drawing, and named in ``skipped``; its place is
    its ``dram_pct``, not the roofline picture.

    Parameters
    ----------
    points : sequence of RooflinePoint
        Placed timings against one device's ceilings.
    labels : sequence of str, optional
        One label per point; default ``point 1``, ``point 2``...

    Raises
    ------
    InputError
        When ``points`` is not a sequence of RooflinePoint or is empty, the points come
        from different devices, or ``labels`` is not a sequence of str (a lone str is
        refused) with one label per point.
    """
    points = _roofline_points(points)
    names = _point_labels(labels, len(points))
    ceilings = points[0].roofline.ceilings
    if any(p.roofline.ceilings != ceilings for p in points):
        raise InputError(expected("points measured against one device's ceilings", "several"))
    finite = [
        p.roofline.arith_intensity
        for p in points
        if math.isfinite(p.roofline.arith_intensity) and p.roofline.arith_intensity > 0
    ]
    low = min([ceilings.ridge / 100.0, *finite]) / 2.0
    high = max([ceilings.ridge * 10.0, *finite]) * 2.0
    drawn: list[tuple[float, float, str]] = []
    skipped: list[str] = []
    for name, point in zip(names, points, strict=True):
        intensity = point.roofline.arith_intensity
        rate = point.flop_per_s / 1e12
        if not intensity > 0 or not rate > 0:
            skipped.append(
                f"{name} (0 FLOP: {point.dram_pct:.0f}% of the copy bandwidth, "
                f"{point.floor_pct:.0f}% of floor)"
            )
            continue
        x = intensity if math.isfinite(intensity) else high
        drawn.append((x, rate, f"{name} ({point.floor_pct:.0f}% of floor)"))
    return RooflineLayout(low=low, high=high, drawn=tuple(drawn), skipped=tuple(skipped))


def plot_roofline(
    points: Sequence[RooflinePoint],
    path: str | os.PathLike[str],
    *,
    labels: Sequence[str] | None = None,
    title: str = "",
) -> Path:
    """Draw the roofline and the measured points as a PNG (needs matplotlib).

    Points with no FLOPs (a copy) cannot sit on the log axes; they are named under the
    plot instead (see :func:`roofline_layout`).

    Parameters
    ----------
    points : sequence of RooflinePoint
        Placed timings; all must share one device's ceilings.
    path : path-like
        The PNG to write.
    labels : sequence of str, optional
        One label per point.
    title : str
        Plot title; default the GPU name.

    Raises
    ------
    DeviceError
        When matplotlib is not installed (``pip install 'kernelopt[plot]'``): this
        machine lacks what drawing needs, as it lacks a GPU for a timing.
    InputError
        When the points, labels or ``path`` are refused as :func:`roofline_layout` says,
        or ``title`` is not a str.
    """
    layout = roofline_layout(points, labels=labels)
    target = as_path(path, "path")
    if not isinstance(title, str):
        raise InputError(expected("a str", repr(title), where="title"))
    ceilings = points[0].roofline.ceilings
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        raise DeviceError(
            expected(
                "matplotlib to draw the roofline (pip install 'kernelopt[plot]')",
                "no module named 'matplotlib'",
            )
        ) from None
    xs = [layout.low * (layout.high / layout.low) ** (i / 200.0) for i in range(201)]
    roof = [min(ceilings.matmul_flop_per_s, x * ceilings.copy_bytes_per_s) / 1e12 for x in xs]
    figure, axes = pyplot.subplots(figsize=(7, 4.5))
    axes.loglog(xs, roof, color="black", label="roofline (measured ceilings)")
    axes.axvline(
        ceilings.ridge, color="gray", linestyle=":", label=f"ridge {ceilings.ridge:.0f} FLOP/B"
    )
    for x, y, label in layout.drawn:
        axes.scatter([x], [y], zorder=3, label=label)
    axes.set_xlabel("arithmetic intensity (FLOP/byte)")
    axes.set_ylabel("TFLOP/s")
    axes.set_title(title or ceilings.gpu)
    axes.legend(fontsize=8)
    if layout.skipped:
        figure.text(0.01, -0.02, "not drawn: " + "; ".join(layout.skipped), fontsize=7, va="top")
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, dpi=120, bbox_inches="tight")
    pyplot.close(figure)
    return target
