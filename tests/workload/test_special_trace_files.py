"""A trace, profile or definition path where a FIFO stands is named as one, not as missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernelopt import InputError
from kernelopt.cli import main
from kernelopt.workload import profile_trace, read_profile_md


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "trace.jsonl"
    os.mkfifo(path)  # never opened here: opening a FIFO waits for a writer
    return path


def test_a_trace_that_is_a_fifo_is_named_as_one(fifo: Path) -> None:
    with pytest.raises(InputError, match=f"got a FIFO at {fifo}$"):
        profile_trace(str(fifo))


def test_a_profile_that_is_a_fifo_is_named_as_one(tmp_path: Path) -> None:
    path = tmp_path / "workload_profile.md"
    os.mkfifo(path)
    with pytest.raises(InputError, match=f"got a FIFO at {path}$"):
        read_profile_md(path)


def test_the_inspector_names_a_fifo_and_a_missing_file_apart(
    fifo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(fifo)]) == 2
    assert f"got a FIFO at {fifo}" in capsys.readouterr().err
    missing = tmp_path / "gone.jsonl"
    assert main(["inspect", str(missing)]) == 2
    assert f"got no file at {missing}" in capsys.readouterr().err
