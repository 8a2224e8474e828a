"""Steady-state warm-up: windows that agree, a pending power cap, and the timer reaching
the sustained state on a (fake) power-capped GPU."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.bench import Ceilings, DeviceState, Timer, measure, measure_ceilings
from kernelopt.bench._settle import (
    Window,
    approaching_power_cap,
    settle_verdict,
    windows_agree,
)
from kernelopt.bench.roofline import save_ceilings

# The fake_gpu fixture (conftest.py) builds and installs a FakeGPU.
FakeGPUFactory = Callable[..., Any]


def spin(us: float) -> None:
    end = time.perf_counter_ns() + int(us * 1000)
    while time.perf_counter_ns() < end:
        pass


def state(power: float | None, *, limit: float | None = 700.0, capped: bool = False) -> DeviceState:
    return DeviceState(
        name="NVIDIA H200",
        power_instant_w=power,
        power_limit_w=limit,
        throttle_reasons=("sw_power_cap",) if capped else (),
    )


def window(median: float, reading: DeviceState | None = None) -> Window:
    return Window(samples=[median] * 5, elapsed_ms=20.0, state=reading)


def test_windows_agree_within_the_tolerance_or_the_event_resolution() -> None:
    assert windows_agree(1600.0, 1610.0, tolerance=0.01)
    assert not windows_agree(1383.0, 1588.0, tolerance=0.01)  # the H200's cap, 14.8 %
    assert not windows_agree(1523.0, 1557.0, tolerance=0.01)  # 2.2 %: still moving
    assert windows_agree(2.0, 2.4, tolerance=0.01)  # 0.4 us apart: below the resolution
    assert not windows_agree(20.0, 21.0, tolerance=0.01)


def test_a_pending_power_cap_is_named() -> None:
    assert approaching_power_cap(state(650.0), margin=0.9) == (
        "power 650 W is 93% of the 700 W limit with no power cap active yet"
    )
    assert approaching_power_cap(state(600.0), margin=0.9) is None  # headroom left
    assert approaching_power_cap(state(700.0, capped=True), margin=0.9) is None  # capping
    assert approaching_power_cap(state(None), margin=0.9) is None  # nothing to judge on
    assert approaching_power_cap(state(800.0, limit=None), margin=0.9) is None
    assert approaching_power_cap(None, margin=0.9) is None
    average_only = DeviceState(name="g", power_w=690.0, power_limit_w=700.0)
    assert approaching_power_cap(average_only, margin=0.9) is not None


def test_settle_verdict() -> None:
    one = settle_verdict([window(100.0)], tolerance=0.01, power_margin=0.9)
    assert not one.settled and not one.agree
    # The H200 case: two windows at full clock agree, but the draw says a cap is coming.
    fast = [window(1383.0, state(820.0)), window(1384.0, state(820.0))]
    pending = settle_verdict(fast, tolerance=0.01, power_margin=0.9)
    assert pending.agree and not pending.settled
    assert "no power cap active yet" in pending.reason
    capped = [*fast, window(1590.0, state(700.0, capped=True))]
    moving = settle_verdict(capped, tolerance=0.01, power_margin=0.9)
    assert not moving.agree and "differ by +14.9%" in moving.reason
    steady = settle_verdict(
        [*capped, window(1596.0, state(700.0, capped=True))], tolerance=0.01, power_margin=0.9
    )
    assert steady.settled and "agree" in steady.reason
    # Once the cap engaged, a reading with the reason off near the limit is the cap at work.
    flicker = settle_verdict(
        [*capped, window(1596.0, state(690.0))], tolerance=0.01, power_margin=0.9
    )
    assert flicker.settled
    light = settle_verdict(
        [window(10.0, state(300.0)), window(10.05, state(310.0))],
        tolerance=0.01,
        power_margin=0.9,
    )
    assert light.settled


def test_measure_reaches_the_power_capped_state(fake_gpu: FakeGPUFactory) -> None:
    gpu = fake_gpu()
    m = measure(gpu.heavy, backend="cuda-events", max_time_ms=200.0)
    assert m.backend == "cuda-events" and m.cache == "flush"
    assert m.settled is True
    assert m.median == pytest.approx(116.0, rel=0.03)  # the sustained time, not 100
    assert m.device is not None and m.device.throttle_reasons == ("sw_power_cap",)
    assert m.device.power_instant_w == 700.0 and m.device.power_limit_w == 700.0
    assert m.warmup_time_ms >= 80.0  # it ran until the cap engaged (fake: 80 ms of work)
    assert m.warmup_calls > 800


def test_without_settling_the_first_state_is_timed(fake_gpu: FakeGPUFactory) -> None:
    # What the H200 run showed: warm-up by time alone times the GPU before its cap.
    gpu = fake_gpu(cap_after_ms=400.0)
    m = measure(gpu.heavy, backend="cuda-events", settle_ms=0, max_time_ms=100.0)
    assert m.settled is None
    assert m.median == pytest.approx(100.0, rel=0.03)


def test_windows_alone_catch_a_cap_that_engages_during_warm_up(
    fake_gpu: FakeGPUFactory,
) -> None:
    gpu = fake_gpu(nvml=False, cap_after_ms=40.0)  # no NVML: no power to read
    m = measure(gpu.heavy, backend="cuda-events", max_time_ms=100.0)
    assert m.device is None
    assert m.settled is True
    assert m.median == pytest.approx(116.0, rel=0.03)


def test_a_cap_that_never_comes_is_reported(fake_gpu: FakeGPUFactory) -> None:
    gpu = fake_gpu(cap_after_ms=1e9)  # draws 820 W of 700 W forever, never caps
    m = measure(gpu.heavy, backend="cuda-events", settle_ms=150.0, max_time_ms=50.0)
    assert m.settled is False
    note = next(n for n in m.notes if n.startswith("warm-up did not settle"))
    assert "settle_ms 150" in note and "117% of the 700 W limit" in note


def test_probes_read_power_during_warm_up_only_with_clocks(fake_gpu: FakeGPUFactory) -> None:
    gpu = fake_gpu(cap_after_ms=1e9, heavy_w=400.0)
    m = measure(gpu.heavy, backend="cuda-events", read_clocks=False, max_time_ms=20.0)
    assert m.settled is True and m.device is None
    assert gpu.probes == 0
    measure(gpu.heavy, backend="cuda-events", max_time_ms=20.0)
    assert gpu.probes >= 2


def test_ceilings_are_sustained_rates(fake_gpu: FakeGPUFactory, tmp_path: Path) -> None:
    gpu = fake_gpu()
    found = measure_ceilings(path=tmp_path / "c.json", copy_bytes=1 << 20, matmul_n=256)
    assert found.gpu == "Fake H200"
    assert found.copy_bytes_per_s == pytest.approx(2 * (1 << 20) / 50e-6, rel=0.03)
    # 2·n³ over the capped 116 us, not over the 100 us of a cool GPU
    assert found.matmul_flop_per_s == pytest.approx(2 * 256**3 / 116e-6, rel=0.03)
    assert gpu.capped


def test_cached_ceilings_of_other_sizes_are_measured_again(
    fake_gpu: FakeGPUFactory, tmp_path: Path
) -> None:
    # A quick check at small sizes must not stand in, from then on, for the full-size
    # ceilings every later call asks for.
    fake_gpu()
    path = tmp_path / "c.json"
    small = measure_ceilings(path=path, copy_bytes=1 << 20, matmul_n=256, settle_ms=0)
    again = measure_ceilings(path=path, copy_bytes=1 << 21, matmul_n=256, settle_ms=0)
    assert (again.copy_bytes, again.matmul_n) == (1 << 21, 256)
    assert again.measured_at >= small.measured_at and again != small
    assert measure_ceilings(path=path, copy_bytes=1 << 21, matmul_n=256) == again
    # Ceilings saved by hand, sizes unknown (0), are read as they are.
    typed = Ceilings(gpu="Fake H200", copy_bytes_per_s=4.25e12, matmul_flop_per_s=694e12)
    save_ceilings(typed, path=path)
    assert measure_ceilings(path=path) == typed


def test_settle_settings_are_checked() -> None:
    assert Timer(settle_ms=0).settle_ms == 0
    with pytest.raises(InputError, match="settle_ms: Expected a number >= 0"):
        Timer(settle_ms=-1.0)
    with pytest.raises(InputError, match="settle_tolerance: Expected a positive number"):
        Timer(settle_tolerance=0.0)
    with pytest.raises(InputError, match="settle_window_ms"):
        Timer(settle_window_ms=float("inf"))


def test_a_broken_cache_is_refused_before_the_ceilings_are_measured(
    fake_gpu: FakeGPUFactory, tmp_path: Path
) -> None:
    # With refresh=True the cache was first read to save the result: the seconds of
    # measurement ended in this error and were lost.
    gpu = fake_gpu()
    path = tmp_path / "ceilings.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(FormatError, match=r"ceilings\.json:1"):
        measure_ceilings(refresh=True, path=path, copy_bytes=1 << 20, matmul_n=256, settle_ms=0)
    assert gpu.clock_us == 0.0  # nothing ran on the device
    assert path.read_text(encoding="utf-8") == "{not json"


def test_the_settle_reason_keeps_every_integer_digit_of_long_windows() -> None:
    # A 12 ms call's windows read "1.235e+04 and 1.3e+04 us" in the measurement's notes.
    moving = settle_verdict([window(12345.0), window(13000.0)], tolerance=0.01, power_margin=0.9)
    assert moving.reason == "the last two window medians 12345 and 13000 us differ by +5.3%"
