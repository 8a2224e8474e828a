"""What needs CUDA says why torch sees no GPU, and what to do, where it refuses: the
timer's ``backend='cuda-events'``, the stream check and the measured ceilings said only
"Expected a CUDA device ..., got none"."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import kernelopt.bench.timer as bench_timer
from kernelopt import DeviceError
from kernelopt.bench import measure, measure_ceilings
from kernelopt.bench.guards import check_timed_stream

BUILT_WITHOUT = (
    f"torch {torch.__version__} is built without CUDA; install a CUDA build of torch on a "
    "machine with an NVIDIA GPU"
)
SEES_NO_GPU = (
    f"torch {torch.__version__} (CUDA 12.8) sees no GPU (torch.cuda.is_available() is "
    "False); run it on a machine with an NVIDIA GPU, its driver loaded and the GPU visible "
    "to the process (nvidia-smi, CUDA_VISIBLE_DEVICES)"
)


@pytest.fixture
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where torch sees no CUDA device, whatever this one has."""
    monkeypatch.setattr(bench_timer, "cuda_available", lambda: False)


def refusal(call: Callable[[], object]) -> str:
    with pytest.raises(DeviceError) as caught:
        call()
    return str(caught.value)


@pytest.mark.usefixtures("no_cuda")
@pytest.mark.parametrize(("cuda", "why"), [(None, BUILT_WITHOUT), ("12.8", SEES_NO_GPU)])
def test_the_cuda_events_backend_says_why_and_what_to_do(
    monkeypatch: pytest.MonkeyPatch, cuda: str | None, why: str
) -> None:
    monkeypatch.setattr(torch.version, "cuda", cuda)
    assert refusal(lambda: measure(lambda: None, backend="cuda-events")) == (
        f"Expected a CUDA device for backend='cuda-events', got none: {why}; or time on the "
        "host clock with backend='cpu-perf-counter'"
    )


@pytest.mark.usefixtures("no_cuda")
@pytest.mark.parametrize(("cuda", "why"), [(None, BUILT_WITHOUT), ("12.8", SEES_NO_GPU)])
def test_the_stream_check_says_why_and_what_to_do(
    monkeypatch: pytest.MonkeyPatch, cuda: str | None, why: str
) -> None:
    monkeypatch.setattr(torch.version, "cuda", cuda)
    assert refusal(lambda: check_timed_stream(lambda: None)) == (
        f"Expected a CUDA device to check streams, got none: {why}"
    )


@pytest.mark.usefixtures("no_cuda")
@pytest.mark.parametrize(("cuda", "why"), [(None, BUILT_WITHOUT), ("12.8", SEES_NO_GPU)])
def test_the_measured_ceilings_say_why_and_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cuda: str | None, why: str
) -> None:
    monkeypatch.setattr(torch.version, "cuda", cuda)
    path = tmp_path / "ceilings.json"
    assert refusal(lambda: measure_ceilings(path=path)) == (
        f"Expected a CUDA device to measure ceilings, got none: {why}"
    )
    assert not path.exists()


def test_without_torch_the_stream_check_refuses_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    # It imported torch first, and failed with a bare ModuleNotFoundError.
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert refusal(lambda: check_timed_stream(lambda: None)) == (
        "Expected a CUDA device to check streams, got none: torch is not installed; install "
        "a CUDA build of torch"
    )
