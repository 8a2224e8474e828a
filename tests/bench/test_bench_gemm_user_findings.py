"""A GEMM user's run (bias + GELU epilogue, compute-bound): a kept regression, the roofline's
bound on its way into result.md, one ``floor=`` for both row makers, and budgeted tuning
around a manual start config."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import (
    Ceilings,
    Comparison,
    KeptSlowerWarning,
    Measurement,
    Roofline,
    UnsureGainWarning,
    matmul_cost,
    row_from_measurement,
    to_result_row,
    tune,
    write_experiment,
)
from kernelopt.experiments import ResultRecord, ResultRow
from kernelopt.experiments.canonical import measurement_rows, parse_result, render_result

H100 = Ceilings(gpu="NVIDIA H100", copy_bytes_per_s=3.0e12, matmul_flop_per_s=700e12)
GEMM = Roofline(ceilings=H100, cost=matmul_cost(4096, 4096, 4096))  # compute-bound
TIMED = Measurement(samples=[289.0, 290.0, 291.0], gpu="NVIDIA H100")
POINT = {"m": 4096, "n": 4096, "k": 4096}


def _comparison(verdict: str, ratio: float) -> Comparison:
    return Comparison(
        verdict=verdict,
        ratio=ratio,
        ratio_low=ratio * 0.99,
        ratio_high=ratio * 1.01,
        noise=0.002,
        threshold=0.01,
    )


def _write(root: Path, status: str, verdict: Comparison, **extra: Any) -> list[str]:
    """Write one experiment, and the KeptSlowerWarning messages it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        write_experiment(
            root,
            experiment=1,
            title="slower version",
            rows=[to_result_row(TIMED, point=POINT, impl="v2", speedup=verdict)],
            status=status,
            correctness="PASS",
            gpu=TIMED,
            verdict=verdict,
            **extra,
        )
    return [str(w.message) for w in caught if w.category is KeptSlowerWarning]


# --- 1. KEPT with a SLOW verdict ---------------------------------------------------------


def test_kept_with_its_own_slow_verdict_warns_with_the_ratio_and_what_to_record(
    tmp_path: Path,
) -> None:
    said = _write(tmp_path, "KEPT", _comparison("SLOW", 2.0), baseline="v1")
    assert len(said) == 1
    assert "exp_1 is written KEPT although its own verdict says it is slower" in said[0]
    assert "the baseline 'v1'" in said[0] and "SLOW 2.000x" in said[0]
    assert "status='REVERTED'" in said[0] and "notes" in said[0]
    # Warned, not refused: the result is written as given.
    assert "- Status: KEPT" in (tmp_path / "exp_1" / "result.md").read_text()


@pytest.mark.parametrize(
    ("status", "verdict"),
    [("REVERTED", "SLOW"), ("NEUTRAL", "SLOW"), ("KEPT", "FAST"), ("KEPT", "SAME")],
)
def test_no_warning_where_status_and_verdict_agree(
    tmp_path: Path, status: str, verdict: str
) -> None:
    ratio = 2.0 if verdict == "SLOW" else 0.5 if verdict == "FAST" else 1.0
    assert _write(tmp_path, status, _comparison(verdict, ratio)) == []


# --- 2. the roofline's bound in result.md --------------------------------------------------


def test_a_roofline_floor_gives_the_row_its_bound_and_result_md_a_bound_column() -> None:
    row = to_result_row(TIMED, point=POINT, impl="v3", floor=GEMM)
    assert GEMM.bound == "compute" and row.bound == "compute"
    assert to_result_row(TIMED, point=POINT, impl="v3", floor=GEMM.place(TIMED)) == row
    record = ResultRecord(
        experiment=3, title="tiles", status="KEPT", correctness="PASS", rows=(row,)
    )
    text = render_result(record)
    assert "| Speedup | Mode | Bound |" in text and "| cold | compute |" in text
    assert parse_result(text) == record
    assert measurement_rows(text) == (row,)


def test_a_bare_floor_gives_no_bound_and_the_ten_columns_read_as_before() -> None:
    row = to_result_row(TIMED, point=POINT, impl="v3", floor=196.341)
    assert row.bound is None
    record = ResultRecord(
        experiment=3, title="tiles", status="KEPT", correctness="PASS", rows=(row,)
    )
    text = render_result(record)
    assert "| Speedup | Mode |\n" in text and "Bound" not in text
    assert parse_result(text) == record


def test_rows_without_a_bound_beside_one_leave_their_bound_cell_empty() -> None:
    bound = to_result_row(TIMED, point=POINT, impl="v3", floor=GEMM)
    bare = to_result_row(TIMED, point=POINT, impl="torch")
    record = ResultRecord(
        experiment=3, title="tiles", status="KEPT", correctness="PASS", rows=(bound, bare)
    )
    text = render_result(record)
    assert "| cold |  |" in text
    assert parse_result(text).rows == (bound, bare)


def test_a_bound_needs_a_floor_and_is_memory_or_compute() -> None:
    with pytest.raises(InputError, match="bound: Expected a floor with the bound"):
        ResultRow(point="m=1", impl="v", median=1.0, unit="us", bound="compute")
    with pytest.raises(InputError, match="bound: Expected one of 'memory', 'compute'"):
        ResultRow(point="m=1", impl="v", median=1.0, unit="us", floor=0.5, bound="latency")


# --- 3. one floor= for both row makers -------------------------------------------------------


def test_row_from_measurement_takes_the_floors_to_result_row_takes() -> None:
    shown = to_result_row(TIMED, point=POINT, impl="v3", floor=GEMM).floor
    row = row_from_measurement(TIMED, op="gemm", impl="v3", config=POINT, floor=GEMM)
    assert row.floor == pytest.approx(GEMM.floor("us"))
    assert shown == pytest.approx(row.floor, rel=1e-5)  # result.md shows 6 digits
    # Without metrics=, the row carries the measurement's own place on the roofline.
    assert row.metrics["tc_pct"] == pytest.approx(GEMM.place(TIMED).tc_pct)
    placed = row_from_measurement(TIMED, op="gemm", impl="v3", floor=GEMM.place(TIMED))
    assert placed.floor == row.floor
    given = row_from_measurement(TIMED, op="gemm", impl="v3", floor=GEMM, metrics={"x": 1.0})
    assert given.metrics == {"x": 1.0}
    assert row_from_measurement(TIMED, op="gemm", impl="v3", floor=196.0).floor == 196.0


def test_row_from_measurement_refuses_a_roofline_of_another_device() -> None:
    cpu = Measurement(samples=[1.0, 2.0, 3.0], backend="cpu-perf-counter", gpu="cpu")
    with pytest.raises(InputError, match="floor"):
        row_from_measurement(cpu, op="gemm", impl="v3", floor=GEMM)


# --- 4. budgeted tuning ------------------------------------------------------------------------


class CostTimer:
    """Times a call by what it returns (its cost in us), with a tight band on a GPU clock."""

    def __init__(self, backend: str = "cuda-events") -> None:
        self.backend = backend

    def measure(self, fn: Callable[[], object], **_: Any) -> Measurement:
        cost = fn()
        assert isinstance(cost, float)
        return Measurement(samples=[cost * 0.999, cost, cost * 1.001], backend=self.backend)


def _gemm_cost(config: Mapping[str, Any]) -> Callable[[], float]:
    """Best at BLOCK_M = BLOCK_N = 128, BLOCK_K = 64; warps and stages matter little."""
    cost = (
        50
        + 200 / (config["BLOCK_M"] // 16)
        + 200 / (config["BLOCK_N"] // 16)
        + 20 / (config["BLOCK_K"] // 16)
        + 2 * config["num_stages"]
    )
    return lambda: float(cost)


SPACE = {
    "BLOCK_M": [16, 32, 64, 128],
    "BLOCK_N": [16, 32, 64, 128],
    "BLOCK_K": [16, 32, 64],
    "num_warps": [2, 4, 8],
    "num_stages": [1, 2, 3, 4],
}
START = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2}


def test_the_given_order_walks_around_the_start_before_the_smallest_corner() -> None:
    result = tune(
        _gemm_cost,
        SPACE,
        start=START,
        patience=10,
        sane_size=1000,  # 576 configs: no explosion to warn of here
        timer=CostTimer(),  # type: ignore[arg-type]
    )
    # The start's nearest neighbours first (BLOCK_M one step down, then one step up), not
    # the product's first corner, every knob at its smallest.
    assert result.trials[1].config == {**START, "BLOCK_M": 32}
    assert result.trials[2].config == {**START, "BLOCK_M": 128}
    assert result.best_config is not None
    assert (result.best_config["BLOCK_M"], result.best_config["BLOCK_N"]) == (128, 128)
    assert result.best_config["BLOCK_K"] == 64 and result.gain_over_start > 0.2
    assert result.stop_reason == "patience" and result.warnings == ()


def test_the_walk_tries_each_config_once_and_then_the_rest_of_the_space() -> None:
    small = {"a": [1, 2, 3], "b": [1, 2]}
    result = tune(
        lambda c: lambda: float(c["a"] + c["b"]),
        small,
        start={"a": 2, "b": 2},
        patience=100,
        timer=CostTimer(),  # type: ignore[arg-type]
    )
    configs = [tuple(t.config.values()) for t in result.trials]
    # Around the start, then around each new best, then the rest in product order.
    assert configs == [(2, 2), (1, 2), (1, 1), (2, 1), (3, 1), (3, 2)]
    assert result.best_config == {"a": 1, "b": 1} and result.stop_reason == "exhausted"


def test_a_gain_timed_with_the_host_clock_says_so() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = tune(
            lambda c: lambda: float(100 - 10 * c["num_warps"]),
            {"num_warps": [2, 4, 8]},
            start={"num_warps": 2},
            timer=CostTimer(backend="cpu-perf-counter"),  # type: ignore[arg-type]
        )
    assert result.gain_over_start > 0.5
    assert len(result.warnings) == 1 and "timed with the host clock" in result.warnings[0]
    assert [str(w.message) for w in caught if w.category is UnsureGainWarning] == list(
        result.warnings
    )


class NoisyTimer:
    """A wide band around each cost: ±10 % of the median."""

    def measure(self, fn: Callable[[], object], **_: Any) -> Measurement:
        cost = fn()
        assert isinstance(cost, float)
        return Measurement(samples=[cost * 0.9, cost, cost * 1.1])


def test_a_gain_within_the_timings_noise_says_so() -> None:
    result = tune(
        lambda c: lambda: {1: 100.0, 2: 97.0}[c["x"]],
        {"x": [1, 2]},
        start={"x": 1},
        timer=NoisyTimer(),  # type: ignore[arg-type]
    )
    assert result.best_config == {"x": 2}
    assert len(result.warnings) == 1 and "within the timings' noise" in result.warnings[0]
