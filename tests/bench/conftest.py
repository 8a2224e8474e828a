"""A power-capped GPU in miniature, behind fake ``torch`` and ``pynvml`` modules.

The CUDA paths of the timer (events, flush, NVML probes during warm-up) and of
``measure_ceilings`` run on the CPU against :class:`FakeGPU`: a device timeline that
CUDA events read, kernels that run at full clock until enough heavy work has been done,
then slower with NVML reporting ``sw_power_cap`` (what an H200 did with an 8192³ bf16
matmul: 1383 µs per call for the first ~80 ms, 1588-1601 µs after). Each kernel also
busy-waits its duration on the host, so host-timed warm-up windows and device-timed
samples see the same time, as they do on a GPU that the host waits for.
"""

from __future__ import annotations

import contextlib
import math
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kernelopt.bench import _nvtx, device, timer

_SW_POWER_CAP = 0x4


class FakeGPU:
    """A device clock and a power cap that engages after ``cap_after_ms`` of heavy work.

    Parameters
    ----------
    fast_us, capped_us : float
        Time of one heavy kernel before and after the cap engages, µs.
    cap_after_ms : float
        Heavy work (device time) after which the cap engages, ms.
    heavy_w, limit_w, light_w : float
        Instantaneous power while heavy kernels run uncapped, the enforced limit (also
        the draw once capped), and the draw of light work, W.
    instant_power : bool
        Whether NVML reports instantaneous power (else only the slow average does).
    """

    def __init__(
        self,
        *,
        fast_us: float = 100.0,
        capped_us: float = 116.0,
        cap_after_ms: float = 80.0,
        heavy_w: float = 820.0,
        limit_w: float = 700.0,
        light_w: float = 300.0,
        instant_power: bool = True,
    ) -> None:
        self.fast_us = fast_us
        self.capped_us = capped_us
        self.cap_after_ms = cap_after_ms
        self.heavy_w = heavy_w
        self.limit_w = limit_w
        self.light_w = light_w
        self.instant_power = instant_power
        self.clock_us = 0.0  # the device timeline CUDA events read
        self.heavy_us = 0.0
        self.last_heavy = False
        self.probes = 0
        self.host_reads = 0

    @property
    def capped(self) -> bool:
        return self.heavy_us >= self.cap_after_ms * 1000.0

    def run(self, us: float, *, heavy: bool) -> None:
        """One kernel of ``us`` µs at full clock (heavy kernels slow down once capped)."""
        if heavy and self.capped:
            us *= self.capped_us / self.fast_us
        # No waiting: the timer's host clock is this device clock (see host_clock), so a
        # test reads the same times however busy the machine running it is.
        self.clock_us += us
        self.last_heavy = heavy
        if heavy:
            self.heavy_us += us

    def host_clock_ns(self) -> int:
        """The host clock the timer reads: the device timeline plus 1 µs a read (a read
        takes time, so a loop waiting on the clock always ends)."""
        self.host_reads += 1
        return int((self.clock_us + self.host_reads) * 1000.0)

    def heavy(self) -> None:
        """The timed kernel: a matmul-like call."""
        self.run(self.fast_us, heavy=True)

    def power_w(self) -> float:
        if self.capped:
            return self.limit_w
        return self.heavy_w if self.last_heavy else self.light_w


class _Event:
    def __init__(self, gpu: FakeGPU) -> None:
        self.gpu = gpu
        self.at_us = 0.0

    def record(self, stream: object = None) -> None:
        self.at_us = self.gpu.clock_us

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: _Event) -> float:
        return (end.at_us - self.at_us) / 1000.0  # ms, as torch returns it


class _Tensor:
    """Enough of a tensor for the flush buffer, the copy and the matmul operands."""

    def __init__(self, gpu: FakeGPU, numel: int, itemsize: int = 4) -> None:
        self.gpu = gpu
        self.nbytes = numel * itemsize
        self.itemsize = itemsize

    def data_ptr(self) -> int:
        return id(self)

    def zero_(self) -> _Tensor:
        self.gpu.run(1.0, heavy=False)
        return self

    def copy_(self, other: _Tensor) -> _Tensor:
        self.gpu.run(50.0, heavy=False)
        return self


def fake_torch(gpu: FakeGPU) -> Any:
    """A ``torch`` module whose CUDA device is ``gpu``."""
    torch: Any = types.ModuleType("torch")
    torch.__version__ = "0.0-fake"
    torch.int32, torch.uint8, torch.bfloat16 = "int32", "uint8", "bfloat16"
    props = types.SimpleNamespace(name="Fake H200", L2_cache_size=1 << 20, uuid="fake-0")
    cuda: Any = types.SimpleNamespace(
        is_available=lambda: True,
        current_device=lambda: 0,
        get_device_name=lambda index=0: props.name,
        get_device_properties=lambda index=0: props,
        current_stream=lambda index=0: "stream",
        synchronize=lambda index=0: None,
        empty_cache=lambda: None,
        Event=lambda enable_timing=True: _Event(gpu),
        device=lambda index: contextlib.nullcontext(),
    )
    torch.cuda = cuda
    torch.empty = lambda *shape, dtype=None, device=None: _Tensor(gpu, math.prod(shape))
    torch.empty_like = lambda t: _Tensor(gpu, t.nbytes, 1)
    torch.randint = lambda low, high, shape, dtype=None, device=None: _Tensor(gpu, shape[0], 1)
    torch.randn = lambda *shape, dtype=None, device=None: _Tensor(gpu, shape[0] * shape[1], 2)

    def matmul(a: _Tensor, b: _Tensor, out: _Tensor | None = None) -> _Tensor | None:
        gpu.heavy()
        return out

    torch.matmul = matmul
    return torch


class FakeNVML(types.ModuleType):
    """The NVML calls kernelopt.bench.device makes, answered from ``gpu``."""

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0
    NVML_FI_DEV_POWER_INSTANT = 186

    def __init__(self, gpu: FakeGPU) -> None:
        super().__init__("pynvml")
        self.gpu = gpu

    def nvmlInit(self) -> None:  # noqa: N802 - NVML names
        pass

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> str:  # noqa: N802 - NVML names
        return "handle"

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802 - NVML names
        return "handle"

    def nvmlDeviceGetName(self, handle: str) -> str:  # noqa: N802 - NVML names
        return "Fake H200"

    def nvmlDeviceGetClockInfo(self, handle: str, kind: int) -> int:  # noqa: N802 - NVML names
        sm = 1755 if self.gpu.capped else 1980
        return {1: sm, 2: 3201}[kind]

    def nvmlDeviceGetMaxClockInfo(self, handle: str, kind: int) -> int:  # noqa: N802 - NVML names
        return {1: 1980, 2: 3201}[kind]

    def nvmlDeviceGetTemperature(self, handle: str, sensor: int) -> int:  # noqa: N802 - NVML names
        return 50

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:  # noqa: N802 - NVML names
        return int(self.gpu.light_w * 1000)  # a one-second average: slow to show the load

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: str) -> int:  # noqa: N802 - NVML names
        return int(self.gpu.limit_w * 1000)

    def nvmlDeviceGetFieldValues(self, handle: str, fields: list[int]) -> list[Any]:  # noqa: N802 - NVML names
        self.gpu.probes += 1
        supported = self.gpu.instant_power and fields == [186]
        milliwatts = int(self.gpu.power_w() * 1000)
        return [
            types.SimpleNamespace(
                nvmlReturn=0 if supported else 3,  # 3: NVML_ERROR_NOT_SUPPORTED
                valueType=1,  # unsigned int
                value=types.SimpleNamespace(uiVal=milliwatts),
            )
        ]

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: str) -> int:  # noqa: N802 - NVML names
        return _SW_POWER_CAP if self.gpu.capped else 0


def install_fake_gpu(monkeypatch: pytest.MonkeyPatch, gpu: FakeGPU, *, nvml: bool = True) -> None:
    """Make ``gpu`` the CUDA device and (with ``nvml``) the NVML device, for one test."""
    monkeypatch.setitem(sys.modules, "torch", fake_torch(gpu))
    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML(gpu) if nvml else None)
    monkeypatch.setattr(device, "_NVML_READY", [])
    monkeypatch.setattr(timer, "_FLUSH_BUFFERS", {})
    monkeypatch.setattr(_nvtx, "_RESOLVED", [None])
    clock = types.SimpleNamespace(
        perf_counter=lambda: gpu.host_clock_ns() / 1e9, perf_counter_ns=gpu.host_clock_ns
    )
    monkeypatch.setattr(timer, "time", clock)


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FakeGPU]]:
    """Install a :class:`FakeGPU` (keyword arguments as its own, plus ``nvml=True``)."""

    def make(*, nvml: bool = True, **settings: Any) -> FakeGPU:
        gpu = FakeGPU(**settings)
        install_fake_gpu(monkeypatch, gpu, nvml=nvml)
        return gpu

    yield make
