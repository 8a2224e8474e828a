"""The profile from benchmark rows says where the intensity sits against the ridge in the
words the profile report uses: "at the ridge" for a call there, and as many digits as it
takes the two numbers to differ for one near it ("163 FLOP/B is below the ridge 163
FLOP/B" was written for an intensity of 163.16 under a ridge of 163.2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kernelopt.bench import Bottleneck, Ceilings, Cost, Measurement, Roofline, profile_report
from kernelopt.workflow import profile_from_rows

from .conftest import bench_row


class NoMatches:
    """A catalog that matches nothing: the root cause alone is under test."""

    def match_metrics(self, metrics: Any) -> Sequence[Any]:
        return ()


def root_cause(arith_intensity: float, ridge: float, *, dram_pct: float = 53.0) -> str:
    metrics = {
        "dram_pct": dram_pct,
        "tc_pct": 40.0,
        "floor_pct": 50.0,
        "arith_intensity": arith_intensity,
        "ridge": ridge,
    }
    row = bench_row("v1", 70.0, config={"b": 32, "s": 1, "t": 4096}, metrics=metrics)
    [report] = profile_from_rows([row], kernel="k", version="v1", catalog=NoMatches())
    return report.root_cause


def test_an_intensity_equal_to_the_ridge_is_at_the_ridge() -> None:
    assert root_cause(160.0, 160.0).startswith(
        "Arithmetic intensity 160 FLOP/B is at the ridge, so bytes and FLOPs set the same "
        "floor, 50% of the measured time."
    )


def test_an_intensity_a_rounding_away_from_the_ridge_is_at_the_ridge() -> None:
    # flops / bytes against peak / bandwidth of a balanced call differ in the last bit.
    ridge = 163.2
    above = ridge * (1.0 + 2.0**-52)
    assert above != ridge
    assert "is at the ridge, so bytes and FLOPs set the same floor" in root_cause(above, ridge)


@pytest.mark.parametrize(
    ("arith_intensity", "ridge", "side"),
    [
        (163.16, 163.2, "163.16 FLOP/B is below the ridge 163.2 FLOP/B, so bytes set the floor"),
        (163.3, 163.2, "163.3 FLOP/B is above the ridge 163.2 FLOP/B, so FLOPs set the floor"),
        (30.0, 163.2, "30 FLOP/B is below the ridge 163 FLOP/B, so bytes set the floor"),
    ],
)
def test_an_intensity_near_the_ridge_reads_apart_from_it(
    arith_intensity: float, ridge: float, side: str
) -> None:
    assert root_cause(arith_intensity, ridge).startswith(f"Arithmetic intensity {side}, ")


def test_the_words_are_the_profile_reports_own() -> None:
    # A balanced call through profile_report and its row through profile_from_rows open
    # with the same clause.
    ceilings = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4e12, matmul_flop_per_s=640e12)
    line = Roofline(ceilings=ceilings, cost=Cost(flops=160e9, bytes=1e9))
    assert line.memory_s == line.compute_s
    measured = Measurement(samples=[500.0, 505.0, 510.0], gpu="NVIDIA H200")
    direct = profile_report(
        kernel="k",
        version="v1",
        point={"b": 32, "s": 1, "t": 4096},
        measurement=measured,
        roofline=line,
    )
    placed = line.place(measured).metrics()
    from_row = root_cause(placed["arith_intensity"], placed["ridge"], dram_pct=placed["dram_pct"])
    clause = (
        "Arithmetic intensity 160 FLOP/B is at the ridge, so bytes and FLOPs set the same floor"
    )
    assert direct.root_cause.startswith(clause)
    assert from_row.startswith(clause)
    assert direct.bottleneck is Bottleneck.MEMORY
