"""NVML readings: reason decoding, clock-change flags, and reading through a fake pynvml."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from kernelopt.bench import device
from kernelopt.bench.device import DeviceState, clock_changes, decode_throttle_reasons


def test_decode_names_each_bit_and_keeps_unknown_bits() -> None:
    assert decode_throttle_reasons(0) == ()
    assert decode_throttle_reasons(0x1 | 0x4) == ("gpu_idle", "sw_power_cap")
    assert decode_throttle_reasons(0x40 | 0x1000) == ("hw_thermal_slowdown", "0x1000")


def test_only_power_and_thermal_reasons_count_as_throttled() -> None:
    assert not DeviceState(name="g", throttle_reasons=("gpu_idle", "sync_boost")).throttled
    assert DeviceState(name="g", throttle_reasons=("sw_thermal_slowdown",)).throttled


def _state(sm: int, mem: int = 3201, reasons: tuple[str, ...] = ()) -> DeviceState:
    return DeviceState(
        name="NVIDIA H200", sm_clock_mhz=sm, mem_clock_mhz=mem, throttle_reasons=reasons
    )


def test_steady_clocks_report_nothing() -> None:
    assert clock_changes(_state(1980), _state(1965)) == ()
    assert clock_changes(None, None) == ()
    assert clock_changes(_state(1980), None) == ()


def test_moved_clock_and_slowdown_are_reported() -> None:
    problems = clock_changes(_state(1980), _state(1500, reasons=("sw_power_cap",)))
    assert problems[0] == "SM clock moved 1980 -> 1500 MHz (-24%)"
    assert problems[1] == "slowdown active at end: sw_power_cap"
    assert clock_changes(_state(1980, 3201), _state(1980, 1593))[0].startswith("memory clock")


def test_tolerance_is_a_parameter() -> None:
    assert clock_changes(_state(1000), _state(1080), tolerance=0.05)
    assert not clock_changes(_state(1000), _state(1080), tolerance=0.10)


class _FakeNVML(types.ModuleType):
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def __init__(self, *, fail_init: bool = False) -> None:
        super().__init__("pynvml")
        self.fail_init = fail_init
        self.asked_uuid: str | None = None

    def nvmlInit(self) -> None:  # noqa: N802 - NVML names
        if self.fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> str:  # noqa: N802 - NVML names
        self.asked_uuid = uuid
        return "handle"

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802 - NVML names
        return "handle"

    def nvmlDeviceGetName(self, handle: str) -> bytes:  # noqa: N802 - NVML names
        return b"NVIDIA H200"

    def nvmlDeviceGetClockInfo(self, handle: str, kind: int) -> int:  # noqa: N802 - NVML names
        return {1: 1980, 2: 3201}[kind]

    def nvmlDeviceGetMaxClockInfo(self, handle: str, kind: int) -> int:  # noqa: N802 - NVML names
        return {1: 1980, 2: 3201}[kind]

    def nvmlDeviceGetTemperature(self, handle: str, sensor: int) -> int:  # noqa: N802 - NVML names
        return 41

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:  # noqa: N802 - NVML names
        raise RuntimeError("Not Supported")  # a field the device does not report

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: str) -> int:  # noqa: N802 - NVML names
        return 0x4


class _PowerNVML(_FakeNVML):
    """A driver that reports instantaneous power and the enforced limit."""

    NVML_FI_DEV_POWER_INSTANT = 186

    def __init__(self, *, field_status: int = 0) -> None:
        super().__init__()
        self.field_status = field_status
        self.asked_fields: list[int] = []

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:  # noqa: N802 - NVML names
        return 512_000  # one-second average, mW

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: str) -> int:  # noqa: N802 - NVML names
        return 700_000

    def nvmlDeviceGetFieldValues(self, handle: str, fields: list[int]) -> list[object]:  # noqa: N802 - NVML names
        self.asked_fields = list(fields)
        value = types.SimpleNamespace(uiVal=0, ullVal=689_500, dVal=0.0)
        return [types.SimpleNamespace(nvmlReturn=self.field_status, valueType=3, value=value)]


@pytest.fixture
def fresh_nvml(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(device, "_NVML_READY", [])
    yield


def test_reads_a_state_through_nvml(monkeypatch: pytest.MonkeyPatch, fresh_nvml: None) -> None:
    fake = _FakeNVML()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    state = device.read_device_state(0, uuid="58b2d6c2-0000")
    assert fake.asked_uuid == "GPU-58b2d6c2-0000"
    assert state == DeviceState(
        name="NVIDIA H200",
        index=0,
        sm_clock_mhz=1980,
        mem_clock_mhz=3201,
        sm_clock_max_mhz=1980,
        mem_clock_max_mhz=3201,
        temperature_c=41,
        power_w=None,
        throttle_reasons=("sw_power_cap",),
    )
    assert state.throttled


def test_no_nvml_means_no_state(monkeypatch: pytest.MonkeyPatch, fresh_nvml: None) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    assert device.read_device_state() is None


def test_failed_init_means_no_state(monkeypatch: pytest.MonkeyPatch, fresh_nvml: None) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _FakeNVML(fail_init=True))
    assert device.read_device_state() is None


def test_reads_instant_power_and_the_limit(
    monkeypatch: pytest.MonkeyPatch, fresh_nvml: None
) -> None:
    fake = _PowerNVML()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    state = device.read_device_state(0)
    assert state is not None
    assert fake.asked_fields == [186]
    assert (state.power_w, state.power_instant_w, state.power_limit_w) == (512.0, 689.5, 700.0)
    assert state.power_draw_w == 689.5  # the instant reading wins over the average
    assert state.power_share == pytest.approx(0.985)


def test_unsupported_instant_power_falls_back_to_the_average(
    monkeypatch: pytest.MonkeyPatch, fresh_nvml: None
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _PowerNVML(field_status=3))  # NOT_SUPPORTED
    state = device.read_device_state(0)
    assert state is not None and state.power_instant_w is None
    assert state.power_draw_w == 512.0 and state.power_share == pytest.approx(512 / 700)
    assert DeviceState(name="g", power_w=500.0).power_share is None  # no limit known
