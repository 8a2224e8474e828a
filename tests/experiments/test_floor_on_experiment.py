"""The readers carry a result's roofline floors on the experiment (``Experiment.floors``), and
read a hand-written Of-floor share by one rule wherever it is read: a bare share up to 1.5
is a fraction of the floor, one with a ``%`` sign or above 1.5 a percent."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.experiments import Experiment, ExperimentLog, FloorRow, SourceRef, read_log
from kernelopt.experiments.canonical import log_result
from kernelopt.experiments.readers.floors import COMPUTE, MEMORY
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status

from ..conftest import FUSED_SUMMARY, write_files

POINT = "b=32 s=1 t=4096 h=16"
SUMMARY = FUSED_SUMMARY


def _hand_log(root: Path, table: str) -> Path:
    """A log whose exp 2 result is ``table``, written by hand."""
    result = f"# Experiment 2: fused kernel\n\n- Status: KEPT\n\n{table}"
    return write_files(
        root, {"experiments/summary.md": SUMMARY, "experiments/exp_2/result.md": result}
    )


def _numbered(log: ExperimentLog, number: int) -> Experiment:
    experiment = log.experiment(number)
    assert experiment is not None
    return experiment


def test_a_canonical_result_carries_its_timed_rows_with_a_floor(tmp_path: Path) -> None:
    rows = (
        ResultRow(point=POINT, impl="kernel", median=60.0, unit="us", floor=35.28),
        ResultRow(point=POINT, impl="eager", median=90.0, unit="us"),
        # The host clock around an interpreter times no kernel: no place on the roofline.
        ResultRow(point=POINT, impl="reference", median=900.0, unit="us", floor=35.28, mode="cpu"),
        ResultRow(point=POINT, impl="kernel", median=70.0, unit="us", floor=35.28, mode="graph"),
    )
    record = ResultRecord(
        experiment=1,
        title="split the key loop",
        status=Status.KEPT,
        correctness=Correctness.PASS,
        date="2026-01-01",
        rows=rows,
    )
    log_result(tmp_path / "experiments", record)

    (experiment,) = read_log(tmp_path, catalog=()).experiments

    path = "experiments/exp_1/result.md"
    assert experiment.floors == (
        FloorRow(
            point=POINT,
            impl="kernel",
            fraction=35.28 / 60.0,
            floor=35.28,
            unit="us",
            source=SourceRef(path=path, line=10),
        ),
        FloorRow(
            point=POINT,
            impl="kernel",
            fraction=35.28 / 70.0,
            floor=35.28,
            unit="us",
            source=SourceRef(path=path, line=13),
        ),
    )


def test_a_hand_written_table_carries_its_floor_share_and_ceiling(tmp_path: Path) -> None:
    table = (
        "| Point | Median (us) | Memory floor (us) | Of floor |\n"
        "|---|---|---|---|\n"
        "| b=32 h=16 | 50.0 | 35.0 | 70% |\n"
        "| b=32 h=128 | 80.0 |  |  |\n"
    )
    log = read_log(_hand_log(tmp_path, table), catalog=())

    assert _numbered(log, 2).floors == (
        FloorRow(
            point="b=32 h=16",
            fraction=0.7,
            floor=35.0,
            unit="us",
            ceiling=MEMORY,
            source=SourceRef(path="experiments/exp_2/result.md", line=7),
        ),
    )
    assert _numbered(log, 1).floors == ()


@pytest.mark.parametrize(
    ("bound", "ceiling"),
    [("FLOPs", COMPUTE), ("bytes at 3.35 TB/s", MEMORY), ("not memory-bound", None)],
)
def test_a_bound_column_names_the_ceiling(tmp_path: Path, bound: str, ceiling: str | None) -> None:
    table = f"| Point | Of floor | Bound |\n|---|---|---|\n| b=1 | 70% | {bound} |\n"
    (row,) = _numbered(read_log(_hand_log(tmp_path, table), catalog=()), 2).floors
    assert row.ceiling == ceiling


def test_a_loose_result_file_is_carried_by_the_experiment_it_records(tmp_path: Path) -> None:
    note = (
        "# Experiment 4: fused kernel\n\n## Result\n\n"
        "| Point | Time | Of floor |\n|---|---|---|\n| b=1 | 45.6 us | 78% |\n"
    )
    log = read_log(write_files(tmp_path, {"notes/results.md": note}), catalog=())

    (experiment,) = log.experiments
    assert [(row.point, row.fraction, str(row.source)) for row in experiment.floors] == [
        ("b=1", 0.78, "notes/results.md:7")
    ]


SHARE_ONLY = "| Point | Of floor | Bound |\n|---|---|---|\n| b=1 | {share} | memory |\n"


@pytest.mark.parametrize(
    ("share", "percent"),
    [("0.78", 78.0), ("0.57", 57.0), ("1.2", 120.0), ("78", 78.0), ("78%", 78.0), ("0.5%", 0.5)],
)
def test_an_of_floor_share_reads_the_same_as_a_metric_and_as_a_floor(
    tmp_path: Path, share: str, percent: float
) -> None:
    # A bare 0.78 was floor_pct 0.78 to the metric readers but 78 % to the floor readers.
    log = read_log(_hand_log(tmp_path, SHARE_ONLY.format(share=share)), catalog=())
    exp_2 = _numbered(log, 2)

    assert exp_2.metrics["floor_pct"] == percent
    (row,) = exp_2.floors
    assert row.fraction == pytest.approx(percent / 100.0)


def test_an_of_floor_share_below_zero_is_named_and_not_read(tmp_path: Path) -> None:
    log = read_log(_hand_log(tmp_path, SHARE_ONLY.format(share="-0.5")), catalog=())

    exp_2 = _numbered(log, 2)
    assert "floor_pct" not in exp_2.metrics
    assert exp_2.floors == ()
    assert (
        "experiments/exp_2/result.md:7: Expected Of floor as a share above 0, got -0.5; not read"
        in log.warnings
    )


def test_profile_md_reads_a_bare_of_floor_fraction_as_a_share(tmp_path: Path) -> None:
    profile = (
        "# Profile\n\n| Stage | Duration | Of floor |\n|---|---|---|\n| main | 45 us | 0.78 |\n"
    )
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, "profile.md": profile})

    log = read_log(root, catalog=())

    assert log.profile is not None
    assert log.profile.metrics["floor_pct"] == 78.0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"fraction": 0.0}, "fraction: Expected a finite number > 0, got 0.0"),
        ({"fraction": float("inf")}, "fraction: Expected a finite number > 0, got inf"),
        ({"floor": float("nan")}, "floor: Expected None or a finite number, got nan"),
        ({"ceiling": "bytes"}, "ceiling: Expected None, 'memory' or 'compute', got 'bytes'"),
    ],
)
def test_a_floor_row_refuses_what_places_nothing(fields: dict[str, object], message: str) -> None:
    given: dict[str, object] = {"point": "b=1", "fraction": 0.7, "source": SourceRef(path="r.md")}
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        FloorRow(**{**given, **fields})  # type: ignore[arg-type]
