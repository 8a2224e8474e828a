"""`kernelopt bench mla` without a CUDA device names what was asked, why torch sees no
device, and what to do; it said "for the MLA trial matrix" to a run of one extra point."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kernelopt import cli


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(["bench", "mla", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err


@pytest.mark.usefixtures("no_cuda")
def test_an_extra_point_without_cuda_is_not_called_the_trial_matrix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(torch.version, "cuda", None)
    out = tmp_path / "mla.jsonl"
    err = _run(capsys, "--extra-point", "b=2,s=1,t=256", "--heads", "16", "--out", str(out))
    assert err == (
        "kernelopt bench: error: Expected a CUDA device to time the MLA decode kernels at 1 "
        "point (--extra-point 'b=2,s=1,t=256'), got none: torch "
        f"{torch.__version__} is built without CUDA; install a CUDA build of torch on a "
        "machine with an NVIDIA GPU\n"
    )
    assert "trial matrix" not in err and not out.exists()


@pytest.mark.usefixtures("no_cuda")
def test_a_cuda_build_that_sees_no_gpu_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    err = _run(capsys, "--trial-matrix", "--heads", "16", "--extra-point", "b=64,s=1,t=8192")
    assert (
        "Expected a CUDA device to time the MLA decode kernels at 3 points (the trial matrix "
        "and --extra-point 'b=64,s=1,t=8192'), got none: torch "
        f"{torch.__version__} (CUDA 12.8) sees no GPU (torch.cuda.is_available() is False); "
        "run it on a machine with an NVIDIA GPU, its driver loaded and the GPU visible to the "
        "process (nvidia-smi, CUDA_VISIBLE_DEVICES)\n"
    ) in err


@pytest.mark.usefixtures("no_cuda")
def test_a_bad_point_is_still_named_before_the_device(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Usage errors come first: they are the user's to fix whatever machine runs it.
    err = _run(capsys, "--extra-point", "b=2,s=1")
    assert "Expected a point with b, s and t" in err and "CUDA" not in err
