"""Rows of one benchmark run that share their commit are a comparison, not a history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt.experiments import read_log


def _rows(commits: list[str | None]) -> str:
    impls = ["torch_eager", "triton_naive", "torch_eager", "triton_naive"]
    points = [{"b": 2, "s": 1}, {"b": 2, "s": 1}, {"b": 2, "s": 4}, {"b": 2, "s": 4}]
    rows = [
        {
            "op": "mla_decode",
            "impl": impl,
            "config": point,
            "median": 10.0 + i,
            "unit": "us",
            "mode": "cold",
            "commit": commit,
        }
        for i, (impl, point, commit) in enumerate(zip(impls, points, commits, strict=True))
    ]
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.mark.parametrize("commit", [None, "5017b82"])
def test_one_runs_rows_are_set_aside_as_benchmark_rows(tmp_path: Path, commit: str | None) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "bench.jsonl").write_text(_rows([commit] * 4))
    log = read_log(tmp_path)
    assert log.experiments == ()
    assert [u.reason for u in log.unread] == [
        "benchmark rows (2 implementations at 2 points), not an experiment history; not read as one"
    ]


def test_rows_that_each_name_their_own_commit_are_still_a_history(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "bench.jsonl").write_text(_rows(["a1", "b2", "c3", "d4"]))
    assert len(read_log(tmp_path).experiments) == 4
