"""A share stated in a result's prose is held to the rule a table's share is: "0% of the
floor" or "occupancy 140%" is no reading of the kernel, named in the warnings, not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import read_log

from ..conftest import write_files
from .test_floor_metric_agreement import RESULT, SUMMARY


@pytest.mark.parametrize(
    ("sentence", "metric", "said"),
    [
        ("The kernel ran at 0% of the floor.", "floor_pct", "floor_pct as a share above 0"),
        ("Achieved occupancy 140% on the run.", "occupancy_pct", "occupancy_pct as a percentage"),
    ],
)
def test_a_share_no_percentage_can_be_is_not_read_from_a_results_prose(
    tmp_path: Path, sentence: str, metric: str, said: str
) -> None:
    result = f"# Experiment 2: fused kernel\n\n- Status: KEPT\n\n{sentence}\n"
    log = read_log(write_files(tmp_path, {"experiments/summary.md": SUMMARY, RESULT: result}))
    experiment = log.experiment(2)
    assert experiment is not None
    assert metric not in experiment.metrics
    assert any(said in warning and "not read" in warning for warning in log.warnings), log.warnings


def test_a_share_a_percentage_can_be_is_read_from_the_prose(tmp_path: Path) -> None:
    result = "# Experiment 2: fused kernel\n\n- Status: KEPT\n\nIt ran at 78% of the floor.\n"
    log = read_log(write_files(tmp_path, {"experiments/summary.md": SUMMARY, RESULT: result}))
    experiment = log.experiment(2)
    assert experiment is not None
    assert experiment.metrics["floor_pct"] == 78.0
