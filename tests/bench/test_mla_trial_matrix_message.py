"""``mla_trial_matrix`` called from Python where torch sees no CUDA device says why_no_cuda (torch
built without CUDA, or a CUDA build that sees no GPU) and what to do, as ``kernelopt bench
mla`` does; it said "Expected a CUDA device for the MLA trial matrix, got none"."""

from __future__ import annotations

import sys

import pytest
import torch
from no_cuda_words import BUILT_WITHOUT

from kernelopt import DeviceError
from kernelopt.bench import TrialPoint, mla_trial_matrix
from kernelopt.bench.mla import no_cuda_error
from kernelopt.bench.timer import no_cuda_reason

POINT = TrialPoint(b=2, s=1, t=256, extra={"h": 16})


def test_a_python_caller_is_told_why_and_what_to_do(why_no_cuda: str) -> None:
    with pytest.raises(DeviceError) as caught:
        mla_trial_matrix(points=[POINT])
    assert str(caught.value) == (
        f"Expected a CUDA device to time the MLA decode kernels at 1 point, got none: {why_no_cuda}"
    )


@pytest.mark.usefixtures("no_cuda")
def test_the_default_matrix_counts_its_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.version, "cuda", None)
    with pytest.raises(DeviceError) as caught:
        mla_trial_matrix(heads=(16,))  # the decode and speculative points at h=16
    assert str(caught.value) == (
        f"Expected a CUDA device to time the MLA decode kernels at 2 points, got none: "
        f"{BUILT_WITHOUT}"
    )


def test_without_torch_the_reason_says_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert no_cuda_reason() == "torch is not installed; install a CUDA build of torch"


def test_the_caller_may_name_the_points_in_its_own_words(monkeypatch: pytest.MonkeyPatch) -> None:
    # The command line names the options that asked for the points.
    monkeypatch.setattr(torch.version, "cuda", None)
    error = no_cuda_error(3, asked="the trial matrix and --extra-point 'b=64,s=1,t=8192'")
    assert isinstance(error, DeviceError)
    assert str(error) == (
        "Expected a CUDA device to time the MLA decode kernels at 3 points (the trial matrix "
        f"and --extra-point 'b=64,s=1,t=8192'), got none: {BUILT_WITHOUT}"
    )
