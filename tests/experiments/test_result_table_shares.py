"""A result's own table holds shares under the same rule as profile.md: a TC% or DRAM% below
0, or an occupancy above 100, is skipped with a warning naming the value and the file, and
the rest of the row is read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import read_log

from ..conftest import write_files

_SUMMARY = (
    "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
    "| 1 | baseline | 100 | us | BASELINE |\n"
    "| 2 | tiles | 90 | us | KEPT |\n"
)
_ROW_LINE = 7


def _result(tc: str, dram: str, occ: str) -> str:
    return (
        "# Experiment 2: tiles\n\n"
        "Status: KEPT\n\n"
        "| Point | Latency (us) | TC% | DRAM% | Occ% |\n"
        "|---|---|---|---|---|\n"
        f"| b=32 s=1 | 90 | {tc} | {dram} | {occ} |\n"
    )


def _read(tmp_path: Path, result: str) -> tuple[dict[str, float], tuple[str, ...]]:
    root = write_files(
        tmp_path, {"experiments/summary.md": _SUMMARY, "experiments/exp_2/result.md": result}
    )
    log = read_log(root, catalog=())
    return dict(log.experiment(2).metrics), log.warnings


@pytest.mark.parametrize(
    ("cells", "name", "said"),
    [
        (("-5", "48.3", "60"), "tc_pct", "TC% as a percentage >= 0, got -5"),
        (("10", "-1", "60"), "dram_pct", "DRAM% as a percentage >= 0, got -1"),
        (("10", "48.3", "130"), "occupancy_pct", "Occ% as a percentage in [0, 100], got 130"),
    ],
)
def test_a_share_no_percentage_can_be_is_not_taken_from_a_result_table(
    tmp_path: Path, cells: tuple[str, str, str], name: str, said: str
) -> None:
    metrics, warnings = _read(tmp_path, _result(*cells))
    assert name not in metrics
    assert len(metrics) == 2  # the row's other shares are read
    assert any(
        w.startswith(f"experiments/exp_2/result.md:{_ROW_LINE}: Expected {said}") for w in warnings
    ), warnings


def test_a_dram_share_past_the_measured_copy_rate_is_taken(tmp_path: Path) -> None:
    metrics, warnings = _read(tmp_path, _result("10", "104.2", "60"))
    assert metrics["dram_pct"] == 104.2
    assert not any("DRAM%" in w for w in warnings)
