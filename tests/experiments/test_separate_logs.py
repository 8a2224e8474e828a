"""A directory holding several experiment logs is refused, not merged into one history."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import InputError
from kernelopt.experiments import read_log
from kernelopt.experiments.readers.seed import separate_logs

from ..conftest import write_files


def _result(title: str, median: float) -> str:
    return f"# {title}\n\n- Status: KEPT\n- Correctness: PASS\n\nLatency: {median} us\n"


def test_two_logs_that_number_the_same_experiments_are_refused(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "softmax/experiments/exp_1/result.md": _result("softmax base", 10.0),
            "softmax/experiments/exp_2/result.md": _result("softmax tiles", 8.0),
            "gemm/experiments/exp_1/result.md": _result("gemm base", 100.0),
        },
    )
    with pytest.raises(InputError) as refused:
        read_log(tmp_path)
    assert str(refused.value) == (
        f"Expected one experiment log in {tmp_path}, got 2, whose exp_N folders give the "
        "same numbers: gemm/ and softmax/; read each on its own"
    )
    # Each log on its own reads as before.
    assert [e.number for e in read_log(tmp_path / "softmax").experiments] == [1, 2]


def test_one_series_split_over_folders_with_numbers_of_their_own_is_one_log(
    tmp_path: Path,
) -> None:
    write_files(
        tmp_path,
        {
            "experiments/exp_1/result.md": _result("base", 10.0),
            "experiments/archive/exp_2/result.md": _result("tiles", 8.0),
        },
    )
    assert [e.number for e in read_log(tmp_path).experiments] == [1, 2]


def test_the_roots_named_are_the_folders_holding_each_experiments_folder() -> None:
    folders = {"a/experiments/exp_1": 1, "b/runs/exp_1": 1, "experiments/exp_1": 1}
    assert separate_logs(folders) == [".", "a", "b/runs"]
    assert separate_logs({"experiments/exp_1": 1, "experiments/exp_01": 1}) == []
