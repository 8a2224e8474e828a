"""The GPU's state around a measurement: name, clocks, power and throttle reasons from NVML.

A timing taken while the clocks fell (power cap, heat) is a timing of the clock, not of
the kernel; a GPU drawing close to its power limit without a cap yet is about to lower
them (the timer's warm-up reads this, :mod:`kernelopt.bench._settle`).
:func:`read_device_state` reads what NVML (the ``nvidia-ml-py`` package, imported as
``pynvml``) reports, and :func:`clock_changes` says in words what moved between two
readings. Both degrade to ``None`` / nothing where NVML is absent (CPU
machines, containers without the driver library), never to an error.
"""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import attrs

from kernelopt._checks import finite
from kernelopt._errors import InputError, expected

__all__ = [
    "SLOWDOWN_REASONS",
    "THROTTLE_REASONS",
    "DeviceState",
    "clock_changes",
    "decode_throttle_reasons",
    "read_device_state",
]

# NVML's clocks-event (formerly "throttle") reason bits, named as in nvml.h.
THROTTLE_REASONS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# The reasons that mean the chip ran slower than it could: the others (idle, a clock the
# operator set, sync boost) say nothing about a timing being degraded.
SLOWDOWN_REASONS = frozenset(
    {
        "sw_power_cap",
        "hw_slowdown",
        "sw_thermal_slowdown",
        "hw_thermal_slowdown",
        "hw_power_brake_slowdown",
    }
)

_NVML_LOCK = threading.Lock()
_NVML_READY: list[bool] = []  # filled once: [True] after nvmlInit succeeded, [False] if not


def _str_tuple(value: Iterable[str]) -> tuple[str, ...]:
    """Throttle reasons as a tuple of str; a lone str would become its letters, and
    anything but a sequence of str failed deep inside ``tuple()`` or at the first read."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InputError(
            expected("a sequence of str", type(value).__name__, where="throttle_reasons")
        )
    reasons = tuple(value)
    for reason in reasons:
        if not isinstance(reason, str):
            raise InputError(
                expected("a sequence of str", f"an item {reason!r}", where="throttle_reasons")
            )
    return reasons


def _text(_instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str):
        raise InputError(expected("a str", repr(value), where=attribute.name))


def _is_count(value: object) -> bool:
    # Any integer (NumPy's too), not a bool: True MHz is no clock.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _as_int(value: Any) -> Any:
    """``value`` as a Python int when it is an integer of any kind (NumPy's too, which JSON
    cannot write); anything else as given, for the validator to refuse by name."""
    return int(value) if _is_count(value) else value


def _count(_instance: object, attribute: attrs.Attribute[int], value: object) -> None:
    if not (_is_count(value) and value >= 0):  # type: ignore[operator]
        raise InputError(expected("an integer >= 0", repr(value), where=attribute.name))


def _optional_count(_instance: object, attribute: attrs.Attribute[int], value: object) -> None:
    if value is not None and not _is_count(value):
        raise InputError(expected("an integer or None", repr(value), where=attribute.name))


def _reading(value: Any) -> Any:
    """An NVML integer reading, or None for anything else a binding may hand back."""
    return int(value) if _is_count(value) else None


def decode_throttle_reasons(mask: int) -> tuple[str, ...]:
    """Name the bits set in an NVML clocks-event reason mask (unknown bits as hex)."""
    names = [name for bit, name in THROTTLE_REASONS.items() if mask & bit]
    unknown = mask & ~sum(THROTTLE_REASONS)
    if unknown:
        names.append(f"0x{unknown:x}")
    return tuple(names)


@attrs.frozen(kw_only=True)
class DeviceState:
    """One NVML reading of a GPU.

    Parameters
    ----------
    name : str
        The GPU's marketing name (``"NVIDIA H200"``).
    index : int
        NVML's index of the GPU.
    sm_clock_mhz, mem_clock_mhz : int, optional
        Current SM and memory clocks, MHz.
    sm_clock_max_mhz, mem_clock_max_mhz : int, optional
        The highest clocks the GPU may run, MHz.
    temperature_c : int, optional
        GPU die temperature, °C.
    power_w : float, optional
        Board power draw as NVML's ``nvmlDeviceGetPowerUsage`` reports it, W (an
        average over the last second on Ampere and newer GPUs, except GA100).
    power_instant_w : float, optional
        Instantaneous board power draw (NVML field ``NVML_FI_DEV_POWER_INSTANT``), W;
        None where the driver does not report it.
    power_limit_w : float, optional
        The power limit the GPU enforces, W.
    throttle_reasons : tuple of str
        Active clocks-event reasons (see :data:`THROTTLE_REASONS`).
    """

    name: str = attrs.field(validator=_text)
    index: int = attrs.field(default=0, converter=_as_int, validator=_count)
    sm_clock_mhz: int | None = attrs.field(
        default=None, converter=_as_int, validator=_optional_count
    )
    mem_clock_mhz: int | None = attrs.field(
        default=None, converter=_as_int, validator=_optional_count
    )
    sm_clock_max_mhz: int | None = attrs.field(
        default=None, converter=_as_int, validator=_optional_count
    )
    mem_clock_max_mhz: int | None = attrs.field(
        default=None, converter=_as_int, validator=_optional_count
    )
    temperature_c: int | None = attrs.field(
        default=None, converter=_as_int, validator=_optional_count
    )
    power_w: float | None = attrs.field(default=None, validator=finite(optional=True))
    power_instant_w: float | None = attrs.field(default=None, validator=finite(optional=True))
    power_limit_w: float | None = attrs.field(default=None, validator=finite(optional=True))
    throttle_reasons: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)

    @property
    def throttled(self) -> bool:
        """True when a power or thermal slowdown is active."""
        return bool(SLOWDOWN_REASONS.intersection(self.throttle_reasons))

    @property
    def power_draw_w(self) -> float | None:
        """The best reading of the draw now, W: instantaneous where known, else NVML's."""
        return self.power_instant_w if self.power_instant_w is not None else self.power_w

    @property
    def power_share(self) -> float | None:
        """Draw now over the enforced limit (0.95 = 95 %); None when either is unknown."""
        draw, limit = self.power_draw_w, self.power_limit_w
        if draw is None or limit is None or limit <= 0:
            return None
        return draw / limit


def _pynvml() -> ModuleType | None:
    try:
        import pynvml
    except ImportError:
        return None
    with _NVML_LOCK:
        if not _NVML_READY:
            try:
                pynvml.nvmlInit()
                _NVML_READY.append(True)
            except Exception:  # no driver library, no GPU, or a container without NVML
                _NVML_READY.append(False)
    return pynvml if _NVML_READY[0] else None


def _handle(nvml: Any, index: int, uuid: str | None) -> Any:
    # CUDA and NVML may number GPUs differently (CUDA_VISIBLE_DEVICES, PCI order), so the
    # UUID that CUDA reports is the reliable key; the index is the fallback.
    if uuid:
        key = uuid if uuid.startswith(("GPU-", "MIG-")) else f"GPU-{uuid}"
        try:
            return nvml.nvmlDeviceGetHandleByUUID(key)
        except Exception:
            pass
    return nvml.nvmlDeviceGetHandleByIndex(index)


def _read(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except Exception:  # a field this GPU or driver does not report
        return None


# nvmlValue_t's member for each NVML_VALUE_TYPE_* of a field value.
_VALUE_MEMBERS = {
    0: "dVal",
    1: "uiVal",
    2: "ulVal",
    3: "ullVal",
    4: "sllVal",
    5: "siVal",
    6: "usVal",
}
_FI_DEV_POWER_INSTANT = 186  # nvml.h's NVML_FI_DEV_POWER_INSTANT, for bindings that lack it


def _instant_power_mw(nvml: Any, handle: Any) -> float | None:
    # nvmlDeviceGetPowerUsage averages over a second on recent GPUs: too slow to see a
    # heavy kernel approach the power limit within a warm-up of tens of milliseconds.
    getter = getattr(nvml, "nvmlDeviceGetFieldValues", None)
    if getter is None:
        return None
    field = getattr(nvml, "NVML_FI_DEV_POWER_INSTANT", _FI_DEV_POWER_INSTANT)
    values = _read(getter, handle, [field])
    if not values:
        return None
    value = values[0]
    if getattr(value, "nvmlReturn", None) != 0:  # NVML_SUCCESS
        return None
    member = _VALUE_MEMBERS.get(getattr(value, "valueType", -1))
    reading = getattr(getattr(value, "value", None), member, None) if member else None
    # A NaN or infinite reading is no power: the state records None, as for no reading.
    if isinstance(reading, (int, float)) and math.isfinite(reading):
        return float(reading)
    return None


def _milliwatts(nvml: Any, name: str, handle: Any) -> float | None:
    call = getattr(nvml, name, None)
    reading = _read(call, handle) if call is not None else None
    if isinstance(reading, (int, float)) and math.isfinite(reading):
        return float(reading) / 1000.0
    return None


def read_device_state(index: int = 0, *, uuid: str | None = None) -> DeviceState | None:
    """Read the GPU's clocks, temperature, power and throttle reasons through NVML.

    Parameters
    ----------
    index : int
        NVML index of the GPU, used when ``uuid`` is not given or not found.
    uuid : str, optional
        The GPU's UUID as CUDA reports it (``torch.cuda.get_device_properties(i).uuid``),
        with or without the ``GPU-`` prefix.

    Returns
    -------
    DeviceState or None
        None when NVML is not available here.

    Raises
    ------
    InputError
        For an ``index`` that is not an integer >= 0 or a ``uuid`` that is neither a str
        nor None (checked whether or not NVML is there).
    """
    if not (_is_count(index) and index >= 0):
        raise InputError(expected("an integer >= 0", repr(index), where="index"))
    if uuid is not None and not isinstance(uuid, str):
        raise InputError(expected("a str or None", repr(uuid), where="uuid"))
    nvml = _pynvml()
    if nvml is None:
        return None
    try:
        handle = _handle(nvml, index, uuid)
    except Exception:
        return None
    name = _read(nvml.nvmlDeviceGetName, handle)
    if isinstance(name, bytes):  # older nvidia-ml-py returned bytes
        name = name.decode()
    reasons_call = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )
    mask = _read(reasons_call, handle) if reasons_call is not None else None
    instant_mw = _instant_power_mw(nvml, handle)
    sm, mem = nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM
    return DeviceState(
        name=str(name or "unknown GPU"),
        index=int(index),
        sm_clock_mhz=_reading(_read(nvml.nvmlDeviceGetClockInfo, handle, sm)),
        mem_clock_mhz=_reading(_read(nvml.nvmlDeviceGetClockInfo, handle, mem)),
        sm_clock_max_mhz=_reading(_read(nvml.nvmlDeviceGetMaxClockInfo, handle, sm)),
        mem_clock_max_mhz=_reading(_read(nvml.nvmlDeviceGetMaxClockInfo, handle, mem)),
        temperature_c=_reading(
            _read(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
        ),
        power_w=_milliwatts(nvml, "nvmlDeviceGetPowerUsage", handle),
        power_instant_w=None if instant_mw is None else instant_mw / 1000.0,
        power_limit_w=_milliwatts(nvml, "nvmlDeviceGetEnforcedPowerLimit", handle),
        throttle_reasons=decode_throttle_reasons(int(mask)) if mask is not None else (),
    )


def _moved(label: str, before: int | None, after: int | None, tolerance: float) -> str | None:
    if before is None or after is None or before <= 0:
        return None
    change = (after - before) / before
    if abs(change) <= tolerance:
        return None
    return f"{label} clock moved {before} -> {after} MHz ({change:+.0%})"


def clock_changes(
    before: DeviceState | None, after: DeviceState | None, *, tolerance: float = 0.05
) -> tuple[str, ...]:
    """Say what moved between two readings that could make a timing untrustworthy.

    Parameters
    ----------
    before, after : DeviceState or None
        Readings taken when sampling started and when it ended.
    tolerance : float
        Relative clock change tolerated (0.05 = 5 %).

    Returns
    -------
    tuple of str
        One sentence per problem: a clock that moved by more than ``tolerance``, a
        slowdown reason active at either reading. Empty when the state was steady or
        when NVML could not be read.

    Raises
    ------
    InputError
        For a reading that is neither a DeviceState nor None, or a ``tolerance`` that is
        not a finite number >= 0 (a bool or text), naming the argument.
    """
    for where, state in (("before", before), ("after", after)):
        if state is not None and not isinstance(state, DeviceState):
            raise InputError(expected("a DeviceState or None", type(state).__name__, where=where))
    number = isinstance(tolerance, numbers.Real) and not isinstance(tolerance, bool)
    if not (number and math.isfinite(tolerance) and tolerance >= 0):
        raise InputError(expected("a finite number >= 0", repr(tolerance), where="tolerance"))
    problems: list[str] = []
    if before is not None and after is not None:
        for label, b, a in (
            ("SM", before.sm_clock_mhz, after.sm_clock_mhz),
            ("memory", before.mem_clock_mhz, after.mem_clock_mhz),
        ):
            moved = _moved(label, b, a, tolerance)
            if moved:
                problems.append(moved)
    for when, state in (("start", before), ("end", after)):
        if state is not None and state.throttled:
            active = sorted(SLOWDOWN_REASONS.intersection(state.throttle_reasons))
            problems.append(f"slowdown active at {when}: {', '.join(active)}")
    return tuple(problems)
