"""What kernelopt.bench writes reads back as written: benchmark rows (JSONL) edited by
hand or made from numpy values, and result.md files that ``kernelopt diagnose`` reads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.bench import (
    BenchRow,
    Ceilings,
    Cost,
    Measurement,
    Roofline,
    TrialPoint,
    append_rows,
    judge,
    read_rows,
    row_from_measurement,
    to_result_row,
    write_experiment,
)
from kernelopt.cli import main
from kernelopt.experiments import parse_result, read_log

H200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.25e12, matmul_flop_per_s=694e12)


def write_lines(path: Path, *rows: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


# --- benchmark rows ----------------------------------------------------------------------


@pytest.mark.parametrize("median", [20.0, 1.0])
def test_a_median_outside_its_band_is_refused_naming_the_line(
    tmp_path: Path, median: float
) -> None:
    # A digit typed twice (20 for 10.2) read back as a row whose median no sample was near.
    good = {"op": "x", "impl": "y", "median": 10.2, "p20": 9.0, "p80": 11.0, "n": 5}
    path = write_lines(tmp_path / "rows.jsonl", good, {**good, "median": median})
    with pytest.raises(FormatError) as raised:
        read_rows(path)
    assert str(raised.value) == (
        f"{path}:2: median: Expected p20 <= median <= p80, got median={median!r} outside "
        "[9.0, 11.0]"
    )


def test_a_row_with_its_median_alone_still_reads(tmp_path: Path) -> None:
    # p20 and p80 left at 0: no band was recorded, so there is nothing to lie outside.
    path = write_lines(tmp_path / "rows.jsonl", {"op": "x", "impl": "y", "median": 10.0})
    assert read_rows(path)[0].median == 10.0


def test_a_median_at_either_end_of_its_band_reads(tmp_path: Path) -> None:
    rows = [
        BenchRow(op="x", impl="y", median=9.0, p20=9.0, p80=11.0, min=9.0),
        BenchRow(op="x", impl="y", median=11.0, p20=9.0, p80=11.0),
    ]
    path = append_rows(tmp_path / "rows.jsonl", rows)
    assert read_rows(path) == rows


def test_numpy_config_values_are_stored_as_json_numbers(tmp_path: Path) -> None:
    # A point swept with np.arange was refused: "config['b']: Expected an int, finite
    # float, str or bool, got np.int64(32)".
    measured = Measurement(samples=[74.2, 74.0, 74.5], gpu="NVIDIA H200")
    config = {"b": np.int64(32), "s": np.int32(1), "scale": np.float32(0.5), "dtype": "bf16"}
    row = row_from_measurement(measured, op="mla_decode", impl="split_kv", config=config)
    assert row.config == {"b": 32, "s": 1, "scale": 0.5, "dtype": "bf16"}
    assert [type(value) for value in row.config.values()] == [int, int, float, str]
    path = append_rows(tmp_path / "rows.jsonl", [row])
    assert read_rows(path) == [row]


@pytest.mark.parametrize("value", [np.bool_(True), np.float64("nan"), [1, 2], None])
def test_a_config_value_json_cannot_hold_as_written_is_still_refused(value: object) -> None:
    with pytest.raises(InputError, match=r"config\['flag'\]: Expected an int, finite float"):
        BenchRow(op="x", impl="y", config={"flag": value})


def test_metrics_given_as_the_placed_point_are_refused_naming_metrics() -> None:
    # A RooflinePoint in place of its metrics() failed with "'RooflinePoint' object has no
    # attribute 'items'".
    measured = Measurement(samples=[2.0, 2.1, 2.2])
    placed = Roofline(ceilings=H200, cost=Cost(flops=1e9, bytes=1e7)).place(measured)
    with pytest.raises(InputError) as raised:
        row_from_measurement(measured, op="x", impl="y", metrics=placed)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "metrics: Expected metrics as a mapping (RooflinePoint.metrics()), got RooflinePoint"
    )
    row = row_from_measurement(measured, op="x", impl="y", metrics=placed.metrics())
    assert row.metrics["floor_pct"] == placed.floor_pct


# --- result.md, written by kernelopt.bench and read by diagnose (already right) -----------


def write_log(root: Path) -> dict[int, Measurement]:
    """Three experiments at one point, timed in us, ms and ns, into ``root/experiments``."""
    point = TrialPoint(b=32, s=1, t=4096, extra={"h": 16})
    line = Roofline(ceilings=H200, cost=Cost(flops=4.5e9, bytes=1.5e8))
    timed = {
        1: Measurement(samples=[100.0, 101.0, 102.0], gpu="NVIDIA H200"),
        2: Measurement(samples=[0.0900, 0.0905, 0.0910], unit="ms", gpu="NVIDIA H200"),
        3: Measurement(samples=[95000.0, 95100.0, 95200.0], unit="ns", gpu="NVIDIA H200"),
    }
    verdict = judge([101.0] * 10, [90.5] * 10)
    titles = {1: "baseline | torch", 2: "split-KV `BLOCK_N`=64", 3: "**wider tiles**"}
    for number, measured in timed.items():
        row = to_result_row(measured, point=point, impl=f"v{number}", floor=line, speedup=timed[1])
        write_experiment(
            root / "experiments",
            experiment=number,
            title=titles[number].replace("|", "/"),
            rows=[row],
            status="BASELINE" if number == 1 else "KEPT",
            correctness="PASS",
            gpu=measured,
            kernel="kernels/mla.py",
            verdict=verdict if number == 2 else None,
            notes="impl | with a pipe\n## not a section",
            date="2026-12-06",
            directory=root,
            # The timing run's versions: written on a CPU host, the record would otherwise
            # end its notes saying its versions are not the H200 run's.
            versions={"torch": "2.11.0+cu130", "triton": "3.6.0"},
        )
    return timed


def test_result_md_reads_back_as_the_record_written(tmp_path: Path) -> None:
    write_log(tmp_path)
    for number in (1, 2, 3):
        text = (tmp_path / "experiments" / f"exp_{number}" / "result.md").read_text()
        record = parse_result(text)
        assert record.rows[0].point == "b=32 s=1 t=4096 h=16"
        assert record.notes == "impl | with a pipe\n## not a section"


def test_diagnose_cites_the_numbers_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    timed = write_log(tmp_path)
    log = read_log(tmp_path)
    read = {e.number: (e.latency, e.unit, e.speedup, e.headline_point) for e in log.experiments}
    assert read == {
        1: (101.0, "us", 1.0, "b=32 s=1 t=4096 h=16"),
        2: (0.0905, "ms", 1.116, "b=32 s=1 t=4096 h=16"),
        3: (95100.0, "ns", 1.062, "b=32 s=1 t=4096 h=16"),
    }
    assert timed[2].median == 0.0905
    assert main(["diagnose", str(tmp_path), "--json"]) in (0, 1)
    best = json.loads(capsys.readouterr().out)["summary"]["best"]
    assert (best["experiment"], best["value"], best["unit"]) == (2, 0.0905, "ms")
