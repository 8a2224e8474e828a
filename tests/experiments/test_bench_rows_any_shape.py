"""Rows ``kernelopt.bench`` writes are benchmark rows whatever their number of
implementations and points.

Five implementations timed at one point were read as five experiments of a history, while
the same writer's rows at two points were set aside as benchmark rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt.bench import BenchRow, append_rows
from kernelopt.experiments import read_log

IMPLS = ("quant_v1", "quant_v2", "quant_v3", "quant_v4", "group")


def _rows(tokens: tuple[int, ...], impls: tuple[str, ...] = IMPLS) -> list[BenchRow]:
    return [
        BenchRow(
            op="fp8_quant",
            impl=impl,
            config={"hidden": 7168, "tokens": t},
            median=10.0 + i,
            gpu="NVIDIA H100",
            commit="dc2d0c8-dirty",
        )
        for t in tokens
        for i, impl in enumerate(impls)
    ]


@pytest.mark.parametrize(
    ("tokens", "impls", "held"),
    [
        ((37,), IMPLS, "5 implementations at 1 point"),
        ((37, 4096), IMPLS, "5 implementations at 2 points"),
        ((37,), IMPLS[:1], "1 implementation at 1 point"),
    ],
)
def test_the_bench_writers_rows_are_benchmark_rows(
    tmp_path: Path, tokens: tuple[int, ...], impls: tuple[str, ...], held: str
) -> None:
    append_rows(tmp_path / "bench_cpu.jsonl", _rows(tokens, impls))
    log = read_log(tmp_path, catalog=())
    assert log.experiments == ()
    assert [u.reason for u in log.unread] == [
        f"benchmark rows ({held}), not an experiment history; not read as one"
    ]


def test_the_bench_writers_rows_with_experiment_numbers_are_a_history(tmp_path: Path) -> None:
    append_rows(tmp_path / "bench.jsonl", _rows((37,), IMPLS[:3]))
    lines = (tmp_path / "bench.jsonl").read_text(encoding="utf-8").splitlines()
    numbered = [{**json.loads(line), "exp": n} for n, line in enumerate(lines, start=1)]
    (tmp_path / "bench.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in numbered), encoding="utf-8"
    )
    assert len(read_log(tmp_path, catalog=()).experiments) == 3
