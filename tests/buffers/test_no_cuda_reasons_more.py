"""Where a buffer, the workload recorder or the timer needs a CUDA device and torch sees
none, the refusal says why_no_cuda and what to do: graph capture and a pool request for a
``"cuda"`` device said only "got none (torch.cuda.is_available() is False)", the L2 size
"got none (no torch CUDA device)", and ``Recorder(time="cuda")`` "got none; use
time='host'" (and, without torch, failed with a bare ModuleNotFoundError)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from no_cuda_words import NOT_INSTALLED

from kernelopt import DeviceError
from kernelopt.bench.timer import device_l2_bytes
from kernelopt.buffers import BufferPool, capture_graph
from kernelopt.workload import Recorder


def refusal(call: Callable[[], object]) -> str:
    """The message of the DeviceError that ``call`` raises."""
    with pytest.raises(DeviceError) as caught:
        call()
    return str(caught.value)


def test_graph_capture_says_why_and_what_to_do(why_no_cuda: str) -> None:
    assert refusal(lambda: capture_graph(lambda: None)) == (
        f"Expected a CUDA device for graph capture, got none: {why_no_cuda}"
    )


def test_a_pool_request_for_a_cuda_device_says_why_and_what_to_do(why_no_cuda: str) -> None:
    pool = BufferPool()
    assert refusal(lambda: pool.get((2,), torch.float32, "cuda:1")) == (
        f"Expected a CUDA device for 'cuda:1', got none: {why_no_cuda}"
    )
    assert len(pool) == 0


def test_the_l2_size_says_why_and_what_to_do(why_no_cuda: str) -> None:
    assert refusal(device_l2_bytes) == (
        f"Expected a CUDA device to read the L2 size of, got none: {why_no_cuda}"
    )


def test_cuda_timing_in_the_recorder_says_why_and_what_to_do(
    tmp_path: Path, why_no_cuda: str
) -> None:
    path = tmp_path / "calls.jsonl"
    assert refusal(lambda: Recorder(path, time="cuda")) == (
        f"time: Expected a CUDA device for time='cuda', got none: {why_no_cuda}; or use time='host'"
    )
    assert not path.exists()


def test_cuda_timing_in_the_recorder_without_torch_refuses_in_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    path = tmp_path / "calls.jsonl"
    assert refusal(lambda: Recorder(path, time="cuda")) == (
        f"time: Expected a CUDA device for time='cuda', got none: {NOT_INSTALLED}; or use "
        "time='host'"
    )
    assert not path.exists()
