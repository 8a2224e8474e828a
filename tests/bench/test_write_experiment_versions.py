"""The versions a result records are the timing's, or it says they are not.

A result written with ``gpu="NVIDIA H100 ..."`` on a host without CUDA recorded that
host's ``torch=2.13.0+cpu`` beside the GPU's name, and the commit of the repository around
a kernel file it ignores, as if either were the timing's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import BenchRow, Measurement, to_result_row, write_experiment
from kernelopt.bench import records as bench_records

H100 = "NVIDIA H100 80GB HBM3"
TIMING = Measurement(samples=[10.0, 10.1, 10.2], gpu=H100)
ROW = to_result_row(TIMING, point="tokens=64", impl="v2")


def _host(monkeypatch: pytest.MonkeyPatch, torch: str) -> None:
    here = bench_records.Environment(python="3.12.0", torch=torch, triton="3.6.0")
    monkeypatch.setattr(bench_records, "_versions", lambda: here)


def _write(root: Path, **options: object) -> bench_records.ResultRecord:
    fields: dict[str, object] = {
        "experiment": 1,
        "title": "vectorized loads",
        "rows": [ROW],
        "status": "KEPT",
        "correctness": "PASS",
        "gpu": TIMING,
        "notes": "Two loads a thread.",
    }
    return write_experiment(root, **{**fields, **options})  # type: ignore[arg-type]


def test_a_cpu_build_beside_a_gpu_name_is_said_in_the_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _host(monkeypatch, "2.13.0+cpu")
    record = _write(tmp_path / "experiments", directory=tmp_path)
    assert record.versions["torch"] == "2.13.0+cpu"
    assert record.notes == (
        "Two loads a thread.\n\nThe versions are those of the host that wrote this record "
        f"(torch 2.13.0+cpu, a CPU build), not of the one that timed it on {H100}."
    )


def test_a_gpu_build_adds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _host(monkeypatch, "2.11.0+cu130")
    assert _write(tmp_path / "experiments", directory=tmp_path).notes == "Two loads a thread."


@pytest.mark.parametrize(
    ("given", "written"),
    [
        (
            BenchRow(op="q", impl="v2", torch="2.11.0+cu130", triton="3.6.0", commit="5017b82" * 3),
            {"torch": "2.11.0+cu130", "triton": "3.6.0", "commit": "5017b825017b"},
        ),
        ({"torch": "2.11.0+cu130"}, {"torch": "2.11.0+cu130"}),
    ],
)
def test_the_timing_runs_versions_are_written_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: object, written: dict[str, str]
) -> None:
    _host(monkeypatch, "2.13.0+cpu")
    record = _write(tmp_path / "experiments", versions=given)
    assert record.versions == written and record.notes == "Two loads a thread."


def test_versions_of_another_type_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^versions: Expected a BenchRow, a mapping"):
        _write(tmp_path / "experiments", versions="2.11.0")


def test_a_snapshot_git_ignores_is_said_in_the_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _host(monkeypatch, "2.11.0+cu130")
    repo = tmp_path / "project"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    (repo / ".gitignore").write_text("scratch/\n")
    git("add", ".gitignore")
    git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", "start")
    (repo / "scratch").mkdir()
    kernel = repo / "scratch" / "quant_v2.py"
    kernel.write_text("x = 1\n")
    record = _write(repo / "experiments", snapshot=kernel, directory=repo)
    commit = record.versions["commit"]
    assert record.notes.endswith(
        f"The commit {commit} holds no version of quant_v2.py (git ignores it there): the "
        "copy beside this result is the kernel timed."
    )
    tracked = repo / "quant_v3.py"
    tracked.write_text("x = 2\n")
    again = _write(repo / "experiments", experiment=2, snapshot=tracked, directory=repo)
    assert again.notes == "Two loads a thread."
