"""A latency counted in clock cycles keeps its unit: it is no time in the column's unit, and
diagnose compares cycle counts only with cycle counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import diagnose
from kernelopt.experiments import read_log

TIMES = (
    "| 1 | torch baseline | 120.0 | PASS | BASELINE |\n"
    "| 2 | Triton kernel | 100.0 | PASS | KEPT |\n"
    "| 3 | locked-clock count | 1520 cycles | PASS | KEPT |\n"
    "| 4 | BLOCK_N=64 | 98.0 | PASS | KEPT |\n"
)
SEPARATOR = "|---|---|---|---|---|\n"


def _write(tmp_path: Path, header: str, rows: str) -> Path:
    (tmp_path / "experiments").mkdir()
    summary = f"# Experiments Summary\n\n{header}{SEPARATOR}{rows}"
    (tmp_path / "experiments" / "summary.md").write_text(summary, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("cell", ["1520 cycles", "1,520 cycles", "1520 clk", "1520cycles"])
def test_a_cycle_count_in_a_latency_cell_keeps_its_unit(tmp_path: Path, cell: str) -> None:
    # Read in the column's unit, 1520 cycles would be 1520 us, the slowest row by far.
    rows = TIMES.replace("| 1520 cycles |", f"| {cell} |")
    header = "| Exp | Description | Latency (us) | Correct | Status |\n"
    log = read_log(_write(tmp_path, header, rows))

    assert [(e.latency, e.unit) for e in log.experiments] == [
        (120.0, "us"),
        (100.0, "us"),
        (1520.0, "cycles"),
        (98.0, "us"),
    ]
    assert [p.unit for p in log.experiments[2].points] == ["cycles"]


def test_a_cycle_count_wins_over_the_unit_column(tmp_path: Path) -> None:
    header = "| Exp | Description | Latency | Unit | Correct | Status |\n"
    rows = "| 1 | first kernel | 1520 cycles | us | PASS | KEPT |\n"
    log = read_log(_write(tmp_path, header, rows))

    assert [(e.latency, e.unit) for e in log.experiments] == [(1520.0, "cycles")]


def test_a_header_in_cycles_names_the_unit_of_its_bare_numbers(tmp_path: Path) -> None:
    header = "| Exp | Description | Latency (cycles) | Correct | Status |\n"
    rows = "| 1 | first kernel | 1800 | PASS | KEPT |\n| 2 | BLOCK_N=64 | 1520 | PASS | KEPT |\n"
    log = read_log(_write(tmp_path, header, rows))

    assert [(e.latency, e.unit) for e in log.experiments] == [
        (1800.0, "cycles"),
        (1520.0, "cycles"),
    ]


def test_a_cycle_count_among_times_is_compared_with_none_of_them(tmp_path: Path) -> None:
    header = "| Exp | Description | Latency (us) | Correct | Status |\n"
    diagnosis = diagnose(_write(tmp_path, header, TIMES), catalog=None)

    best = diagnosis.summary.best
    assert best is not None and (best.experiment, best.value, best.unit) == (4, 98.0, "us")
    # Only exp 4 is an attempt since the best last moved (exp 2's 16.7%): exp 3's count
    # is no attempt on a time.
    assert diagnosis.summary.since_best == 1
    assert (
        "exp 3: its latency, 1520 cycles, is a count of clock cycles, not a time, while the "
        "log's latencies are times; no clock converts one into the other here, so it is "
        "compared with none of them"
    ) in diagnosis.warnings


def test_a_log_of_cycle_counts_compares_them_with_each_other(tmp_path: Path) -> None:
    header = "| Exp | Description | Latency | Correct | Status |\n"
    rows = (
        "| 1 | first kernel | 1800 cycles | PASS | KEPT |\n"
        "| 2 | BLOCK_N=64 | 1520 cycles | PASS | KEPT |\n"
        "| 3 | timed once with events | 0.9 us | PASS | KEPT |\n"
        "| 4 | num_warps=8 | 1500 cycles | PASS | KEPT |\n"
    )
    diagnosis = diagnose(_write(tmp_path, header, rows), catalog=None)

    best = diagnosis.summary.best
    assert best is not None and (best.experiment, best.value, best.unit) == (4, 1500.0, "cycles")
    assert [step.experiment for step in diagnosis.summary.trajectory] == [2, 4]
    assert (
        "exp 3: its latency, 0.9 us, is a time, while the log's latencies are cycle counts; "
        "no clock converts one into the other here, so it is compared with none of them"
    ) in diagnosis.warnings
    assert "Best so far: 1500 cycles (exp 4)." in diagnosis.render_plan()
