"""An escaped pipe (``\\|``) is a pipe inside its table cell, for every reader of a table.

The devlog's Performance tables, the hand-offs' tables and the canonical experiment files
split a row as the tolerant log readers do; the writers escape a ``|`` in a cell, so a
cell holding one reads back as written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import FormatError
from kernelopt.experiments import ResultRecord, ResultRow, append_summary, read_log
from kernelopt.experiments.canonical import measurement_rows, parse_result
from kernelopt.workflow import (
    PerfRow,
    parse_performance,
    parse_profile,
    perf_rows_from_bench,
    read_performance,
    update_devlog,
)

from .conftest import bench_row

HEADER = "| Version | Point | Time | TFLOP/s | GB/s | Of floor | GPU | Date |"
SEPARATOR = "|---|---|---|---|---|---|---|---|"
PIPE_GPU = "GPU A|B"


def devlog(*rows: str) -> str:
    return "# k\n\n## Performance\n\n### v2\n\n" + "\n".join((HEADER, SEPARATOR, *rows)) + "\n"


def test_an_escaped_pipe_in_a_devlog_cell_stays_in_the_cell() -> None:
    text = devlog(r"| v2 | b=1 s=1 t=1 | 3 us | - | - | - | GPU A\|B | 2026-12-02 |")
    [row] = parse_performance(text)
    assert row.gpu == PIPE_GPU
    assert row.date == "2026-12-02"


def test_a_gpu_name_holding_a_pipe_round_trips_through_the_devlog(tmp_path: Path) -> None:
    path = tmp_path / "k.md"
    row = PerfRow(version="v2", point="b=1 s=1 t=1", time=3.0, gpu=PIPE_GPU)
    update_devlog(path, [row])
    assert r"| GPU A\|B |" in path.read_text(encoding="utf-8")
    assert read_performance(path) == [row]
    # Written again, the row is found by its GPU as read back: replaced, not doubled.
    newer = PerfRow(version="v2", point="b=1 s=1 t=1", time=2.0, gpu=PIPE_GPU)
    update = update_devlog(path, [newer])
    assert update.replaced == (newer,) and update.added == ()
    assert read_performance(path) == [newer]


def test_bench_rows_keep_a_gpu_name_holding_a_pipe() -> None:
    [row] = perf_rows_from_bench([bench_row("v2", 66.53, gpu=PIPE_GPU)])
    assert row.gpu == PIPE_GPU


def test_a_hand_written_devlog_row_with_an_escaped_pipe_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "k.md"
    old = r"| v2 | b=1 s=1 t=1 | 3 us | - | - | - | GPU A\|B | 2026-12-01 |"
    path.write_text(devlog(old), encoding="utf-8")
    row = PerfRow(version="v2", point="b=1 s=1 t=1", time=2.0, gpu=PIPE_GPU, date="2026-12-02")
    update = update_devlog(path, [row])
    assert update.replaced == (row,)
    assert path.read_text(encoding="utf-8") == devlog(row.render())


def test_a_profile_stage_cell_may_hold_an_escaped_pipe() -> None:
    text = (
        "## Profile: mla_decode v2 | b=32, s=1, t=4096\n"
        "### Stages\n"
        "| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n"
        "|---|---|---|---|---|---|---|\n"
        r"| main | 66.5 us | 9.9% | 53.8% | 30.0% | memory | loads a\|b overlap |" + "\n"
        "### Bottleneck: Memory-bound\n"
        "Root cause: The KV reads bind. Nothing else waits.\n"
        "### Top 3 Opportunities (ranked by estimated impact)\n"
        "1. Split KV (`split-kv-flash-decoding`) -- est. 20% gain -- trigger: dram_pct=53.8\n"
    )
    [stage] = parse_profile(text).stages
    assert stage.key_issue == "loads a|b overlap"


MEASUREMENTS = (
    "# Experiment 3: BLOCK_N=64\n\n- Status: KEPT\n- Correctness: PASS\n\n## Measurements\n"
    "| Point | Impl | Median | P20 | P80 | Unit | Floor | Of floor | Speedup | Mode |\n"
    "|---|---|---|---|---|---|---|---|---|---|\n"
    "| b=1 s=1 t=1 | triton | 5.0 |  |  | us |  |  |  | cold |\n"
    "| b=2 s=1 t=1 | tri\\|ton | 6.0 |  |  | us |  |  |  | cold |\n"
)


def test_the_canonical_measurements_split_at_unescaped_pipes_only() -> None:
    # The row's impl holds a pipe, which no result row may (it is refused as a value, at
    # its line), not a cell too many, which would refuse the whole table.
    refused: list[FormatError] = []
    rows = measurement_rows(MEASUREMENTS, refused=refused)
    assert [row.point for row in rows] == ["b=1 s=1 t=1"]
    [error] = refused
    assert error.line == 10 and "tri|ton" in str(error)
    with pytest.raises(FormatError, match="tri\\|ton"):
        parse_result(MEASUREMENTS)


def test_read_log_keeps_the_rows_beside_one_holding_an_escaped_pipe(tmp_path: Path) -> None:
    folder = tmp_path / "experiments" / "exp_3"
    folder.mkdir(parents=True)
    (folder / "result.md").write_text(MEASUREMENTS, encoding="utf-8")
    [experiment] = read_log(tmp_path).experiments
    assert experiment.latency == 5.0


def test_a_summary_row_written_again_keeps_a_users_cell_holding_a_pipe(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text(
        "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags | Note |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
        "| 3 |  | old |  |  |  | PASS | KEPT |  | a \\| b |\n",
        encoding="utf-8",
    )
    record = ResultRecord(
        experiment=3,
        title="BLOCK_N=64",
        status="KEPT",
        correctness="PASS",
        rows=(ResultRow(point="b=1 s=1 t=1", impl="triton", median=5.0, unit="us"),),
    )
    append_summary(tmp_path, record, replace=True)
    last = summary.read_text(encoding="utf-8").splitlines()[-1]
    assert last == "| 3 |  | BLOCK_N=64 | 5.0 | us |  | PASS | KEPT |  | a \\| b |"
