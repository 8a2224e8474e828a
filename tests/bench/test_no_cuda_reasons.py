"""What needs CUDA says why_no_cuda torch sees no GPU, and what to do, where it refuses: the
timer's ``backend='cuda-events'``, the stream check and the measured ceilings said only
"Expected a CUDA device ..., got none"."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kernelopt import DeviceError
from kernelopt.bench import measure, measure_ceilings
from kernelopt.bench.guards import check_timed_stream


def refusal(call: Callable[[], object]) -> str:
    with pytest.raises(DeviceError) as caught:
        call()
    return str(caught.value)


def test_the_cuda_events_backend_says_why_and_what_to_do(why_no_cuda: str) -> None:
    assert refusal(lambda: measure(lambda: None, backend="cuda-events")) == (
        f"Expected a CUDA device for backend='cuda-events', got none: {why_no_cuda}; or time "
        "on the host clock with backend='cpu-perf-counter'"
    )


def test_the_stream_check_says_why_and_what_to_do(why_no_cuda: str) -> None:
    assert refusal(lambda: check_timed_stream(lambda: None)) == (
        f"Expected a CUDA device to check streams, got none: {why_no_cuda}"
    )


def test_the_measured_ceilings_say_why_and_what_to_do(tmp_path: Path, why_no_cuda: str) -> None:
    path = tmp_path / "ceilings.json"
    assert refusal(lambda: measure_ceilings(path=path)) == (
        f"Expected a CUDA device to measure ceilings, got none: {why_no_cuda}"
    )
    assert not path.exists()


def test_without_torch_the_stream_check_refuses_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    # It imported torch first, and failed with a bare ModuleNotFoundError.
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert refusal(lambda: check_timed_stream(lambda: None)) == (
        "Expected a CUDA device to check streams, got none: torch is not installed; install "
        "a CUDA build of torch"
    )
