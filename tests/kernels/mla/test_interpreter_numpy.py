"""Triton 3.6's interpreter cannot run the kernels with numpy 2.4: a CPU plan says so.

The interpreter turns one-element arrays into ints with ``int()``, which numpy 2.4 refuses,
so every kernel failed inside it with "only 0-dimensional arrays can be converted to Python
scalars", naming neither package nor the way out.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy
import pytest
import torch
import triton

from kernelopt import DeviceError
from kernelopt.kernels.mla import MLADecodePlan, _validate


@pytest.fixture(autouse=True)
def _fresh_check(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The check reads both versions once a process.
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    _validate._interpreter_numpy_refusal.cache_clear()
    yield
    _validate._interpreter_numpy_refusal.cache_clear()


def _cpu_plan() -> MLADecodePlan:
    seqlens = torch.tensor([9, 5], dtype=torch.int32)
    return MLADecodePlan(
        seqlens,
        s_q=1,
        h_q=16,
        page_size=16,
        softmax_scale=576**-0.5,
        device="cpu",
        dtype=torch.float32,
    )


def test_numpy_2_4_under_triton_3_6_is_named_with_the_way_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(numpy, "__version__", "2.4.6")
    monkeypatch.setattr(triton, "__version__", "3.6.0")
    with pytest.raises(DeviceError) as refused:
        _cpu_plan()
    message = str(refused.value)
    assert "Expected numpy < 2.4 for Triton 3.6.0's interpreter" in message
    assert "pip install 'numpy<2.4'" in message
    assert message.endswith("got numpy 2.4.6")


@pytest.mark.parametrize(
    ("numpy_version", "triton_version"), [("2.3.5", "3.6.0"), ("2.4.0", "3.7.1")]
)
def test_other_pairs_plan_as_before(
    monkeypatch: pytest.MonkeyPatch, numpy_version: str, triton_version: str
) -> None:
    monkeypatch.setattr(numpy, "__version__", numpy_version)
    monkeypatch.setattr(triton, "__version__", triton_version)
    assert _cpu_plan().batch_size == 2


def test_a_cuda_plan_is_not_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    # GPU runs compile the kernels: the interpreter's numpy does not matter there.
    monkeypatch.setattr(numpy, "__version__", "2.4.6")
    monkeypatch.setattr(triton, "__version__", "3.6.0")
    _validate.check_runnable_device(torch.device("cuda"))


@pytest.mark.parametrize(
    ("version", "release"),
    [("2.4.0rc1", (2, 4)), ("3.6.0", (3, 6)), ("3", (3, 0)), ("dev", (0, 0))],
)
def test_versions_are_read_by_their_release(version: str, release: tuple[int, int]) -> None:
    assert _validate._release(version) == release
