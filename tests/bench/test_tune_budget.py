"""What ``tune``'s budget counts: the search, not the timer's one-time setup of a process.

The first timing of a process imports torch to look for a CUDA device (a second or
more), starts CUDA on the device with its first query, and starts NVML. Counted in the
budget, a small budget went to that setup, and the first search of a process tried one
config where the next tried them all.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from kernelopt.bench import Timer, timer, tune

FakeGPUFactory = Callable[..., Any]  # the fake_gpu fixture of conftest

SETUP_S = 1.0  # the slow one-time setup, longer than the whole budget
BUDGET_S = 0.6
SPACE = {"block": [16, 32, 64, 128], "warps": [2, 4]}


def _slow_once(call: Callable[..., Any], seconds: float) -> Callable[..., Any]:
    """``call``, taking ``seconds`` more the first time only (as an import does)."""
    done: list[bool] = []

    def slow(*args: Any, **kwargs: Any) -> Any:
        if not done:
            done.append(True)
            time.sleep(seconds)
        return call(*args, **kwargs)

    return slow


def _build(config: dict[str, Any]) -> Callable[[], None]:
    return lambda: None


def test_a_slow_import_on_the_first_timing_leaves_the_budget_to_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No CUDA device here, found only after a slow import of torch.
    monkeypatch.setattr(timer, "cuda_available", _slow_once(lambda: False, SETUP_S))
    quick = Timer(warmup_ms=0.5, settle_ms=0.0, max_time_ms=2.0, min_samples=3)
    result = tune(_build, SPACE, budget_s=BUDGET_S, patience=100, timer=quick)
    assert (result.stop_reason, result.evaluated) == ("exhausted", 8)
    assert all(trial.median is not None for trial in result.trials)
    assert result.elapsed_s < SETUP_S  # the setup is not part of the search's time


def test_a_slow_first_device_query_and_nvml_start_leave_the_budget_to_the_search(
    monkeypatch: pytest.MonkeyPatch, fake_gpu: FakeGPUFactory
) -> None:
    fake_gpu(fast_us=20.0, capped_us=20.0)
    torch, nvml = sys.modules["torch"], sys.modules["pynvml"]
    # The first query of a device starts CUDA there; NVML's start reads every GPU.
    properties = _slow_once(torch.cuda.get_device_properties, SETUP_S)
    monkeypatch.setattr(torch.cuda, "get_device_properties", properties)
    monkeypatch.setattr(nvml, "nvmlInit", _slow_once(nvml.nvmlInit, SETUP_S))
    on_gpu = Timer(warmup_ms=0.5, settle_ms=0.0, max_time_ms=2.0, min_samples=3, mode="hot")
    result = tune(_build, SPACE, budget_s=BUDGET_S, patience=100, timer=on_gpu)
    assert (result.stop_reason, result.evaluated) == ("exhausted", 8)
    assert result.best is not None and result.best.gpu == "Fake H200"


def test_a_setup_that_fails_is_recorded_by_each_config_not_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken() -> bool:
        raise RuntimeError("CUDA driver too old")

    monkeypatch.setattr(timer, "cuda_available", broken)
    result = tune(_build, {"block": [16, 32]}, budget_s=BUDGET_S, timer=Timer(settle_ms=0.0))
    assert [trial.error for trial in result.trials] == ["RuntimeError: CUDA driver too old"] * 2
    assert result.best_config is None


def test_the_budget_still_ends_a_search_whose_configs_are_slow() -> None:
    def slow(config: dict[str, Any]) -> Callable[[], None]:
        time.sleep(0.1)  # a compile: the search's own work, inside the budget
        return lambda: None

    host = Timer(backend="cpu-perf-counter", warmup_ms=0.5, max_time_ms=2.0, min_samples=3)
    result = tune(slow, SPACE, budget_s=0.25, patience=100, timer=host)
    assert result.stop_reason == "budget" and 1 <= result.evaluated < 8
