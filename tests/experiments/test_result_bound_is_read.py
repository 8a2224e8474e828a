"""The bound kernelopt.bench writes in result.md's Bound column is the floor's ceiling the
readers hand to diagnose."""

from __future__ import annotations

from pathlib import Path

from kernelopt.experiments import ResultRecord, ResultRow, read_log
from kernelopt.experiments.canonical import render_result


def _result(bound: str | None) -> str:
    row = ResultRow(
        point="m=4096 n=4096 k=4096",
        impl="v3",
        median=250.0,
        unit="us",
        floor=196.3,
        mode="cold",
        bound=bound,
    )
    return render_result(
        ResultRecord(experiment=3, title="tiles", status="KEPT", correctness="PASS", rows=(row,))
    )


def _ceilings(tmp_path: Path, bound: str | None) -> list[str | None]:
    folder = tmp_path / "experiments" / "exp_3"
    folder.mkdir(parents=True)
    (folder / "result.md").write_text(_result(bound), encoding="utf-8")
    [experiment] = read_log(tmp_path).experiments
    return [floor.ceiling for floor in experiment.floors]


def test_a_written_bound_is_the_floors_ceiling(tmp_path: Path) -> None:
    assert _ceilings(tmp_path, "compute") == ["compute"]


def test_a_row_without_a_bound_names_no_ceiling(tmp_path: Path) -> None:
    assert _ceilings(tmp_path, None) == [None]
