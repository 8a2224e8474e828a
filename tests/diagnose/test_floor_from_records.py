"""Diagnose places the kernel on the roofline from the experiments' records
(``Experiment.floors``), as the log readers read them: it opens no result file again."""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs

from kernelopt.diagnose import diagnose_log
from kernelopt.diagnose.floors import floors_of, latest_floors
from kernelopt.diagnose.model import Pathology
from kernelopt.experiments import FloorRow, SourceRef, read_log
from kernelopt.experiments.canonical import log_result
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status

from .conftest import exp, log_of

POINT = "b=32 s=1 t=4096 h=16"


def _canonical_log(root: Path) -> Path:
    """Two results kernelopt.bench would write, each row with its roofline floor."""
    for number, median in ((1, 60.0), (2, 58.8)):
        row = ResultRow(point=POINT, impl="kernel", median=median, unit="us", floor=35.28)
        record = ResultRecord(
            experiment=number,
            title=f"change {number}",
            status=Status.KEPT,
            correctness=Correctness.PASS,
            date=f"2026-01-0{number}",
            rows=(row,),
        )
        log_result(root / "experiments", record)
    return root


def test_the_floors_stand_when_the_result_files_are_gone(tmp_path: Path) -> None:
    log = read_log(_canonical_log(tmp_path), catalog=())
    shutil.rmtree(tmp_path / "experiments")

    (reading,) = latest_floors(log, log.experiments)

    assert reading.experiment.number == 2
    assert reading.text() == f"exp 2: {POINT} kernel at 60.0% of its roofline floor (35.28 us)"
    assert str(reading.source) == "experiments/exp_2/result.md:10"


def test_the_latest_floors_default_to_the_logs_experiments(tmp_path: Path) -> None:
    log = read_log(_canonical_log(tmp_path), catalog=())

    assert latest_floors(log) == latest_floors(log, log.experiments)
    assert [r.experiment.number for r in latest_floors(log, log.experiments[:1])] == [1]


def _floor(ceiling: str | None) -> FloorRow:
    return FloorRow(
        point="b=32 h=16",
        fraction=0.7,
        floor=35.07,
        unit="us",
        ceiling=ceiling,
        source=SourceRef(path="experiments/exp_5/result.md", line=7),
    )


def test_a_floor_row_of_a_log_held_in_memory_states_the_bound() -> None:
    # No file of this log exists: the bound comes from the record alone.
    titles = (
        (1, 60.0, "eager baseline", Status.BASELINE),
        (2, 50.0, "fused kernel", Status.KEPT),
        (3, 50.4, "bigger MMA tiles for the tensor cores", Status.REVERTED),
        (4, 50.2, "unroll the dot loop, more FMA per instruction", Status.REVERTED),
        (5, 50.1, "tf32 dot precision for the MMA", Status.REVERTED),
    )
    experiments = [
        exp(number, latency, status=status, description=title)
        for number, latency, title, status in titles
    ]
    # The share of the floor is the profiling data the readers take from the Of-floor column.
    experiments[-1] = attrs.evolve(
        experiments[-1], floors=(_floor("memory"),), metrics={"floor_pct": 70.0}
    )
    log = log_of(experiments, root=str(Path("no-such-log-directory")))

    (reading,) = floors_of(log.experiments[-1])
    assert (reading.ceiling, reading.fraction, reading.floor) == ("memory", 0.7, 35.07)

    finding = diagnose_log(log, catalog=None).finding(Pathology.WRONG_BOTTLENECK)
    assert finding is not None
    assert finding.summary.startswith(
        "The kernel is memory-bound (exp 5: b=32 h=16 at 70.0% of its roofline floor (35.07 "
        "us, set by memory))"
    )
    assert finding.evidence[0].source == "experiments/exp_5/result.md:7"
