"""Small readings of the log and the bench: a hyphenated knob read whole, the summary's Date
as a day, judge's minimum said once, and an fp32 matrix product on a bf16 matmul ceiling."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import (
    Ceilings,
    Cost,
    MatmulPrecisionWarning,
    Roofline,
    judge,
    matmul_cost,
    write_experiment,
)
from kernelopt.experiments import ResultRow, read_log
from kernelopt.experiments.readers._values import knobs_of

H200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.2497501e12, matmul_flop_per_s=693.66e12)
HOST = Ceilings(gpu="cpu", copy_bytes_per_s=2e10, matmul_flop_per_s=1e12)

# --- a hyphenated knob name is read whole ------------------------------------------------


@pytest.mark.parametrize(
    ("title", "knobs"),
    [
        ("split-K=8 GEMV", {"split-K": "8"}),
        ("split-K=4 GEMV for M=1", {"split-K": "4", "M": "1"}),
        ("split-k: 16 with atomic reduction", {"split-k": "16"}),
        ("split-KV=4", {"split-KV": "4"}),
        ("tile-M=128", {"tile-M": "128"}),
        ("split-K = 2 -> 4", {"split-K": "4"}),
    ],
)
def test_a_hyphenated_knob_is_read_whole(title: str, knobs: dict[str, str]) -> None:
    assert knobs_of(title) == knobs


@pytest.mark.parametrize(
    ("title", "knobs"),
    [
        # K alone is the GEMM's reduction size, as before.
        ("K=4096 BLOCK_K=64", {"K": "4096", "BLOCK_K": "64"}),
        # A word hyphenated before a knob that is no knob itself leaves the knob as before.
        ("v2-BLOCK_T=64", {"BLOCK_T": "64"}),
        # Phrases keep their snake_case names, and are not read a second time whole.
        ("--block-size=64", {"block_size": "64"}),
        ("fp32-accumulate=1", {}),
    ],
)
def test_other_readings_stay_as_they_were(title: str, knobs: dict[str, str]) -> None:
    assert knobs_of(title) == knobs


def test_a_summary_title_with_split_k_gives_the_knob_split_k(tmp_path: Path) -> None:
    (tmp_path / "summary.md").write_text(
        "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        "| 1 | 2026-11-17 | baseline GEMV, M=1 | 40.0 | us |  | PASS | BASELINE |  |\n"
        "| 2 | 2026-11-17 | split-K=8 GEMV | 30.0 | us |  | PASS | KEPT |  |\n"
    )
    log = read_log(tmp_path, catalog=[])
    second = log.experiment(2)
    assert second is not None
    assert second.knobs.get("split-K") == "8"
    assert "K" not in second.knobs


# --- the summary's Date is a day --------------------------------------------------------

_ROW = ResultRow(point="m=1 n=4096 k=4096", impl="triton", median=30.0, unit="us")


def test_write_experiment_dates_the_row_with_the_day(tmp_path: Path) -> None:
    write_experiment(
        tmp_path, experiment=1, title="split-K=8", rows=[_ROW], status="KEPT", correctness="PASS"
    )
    summary = (tmp_path / "summary.md").read_text()
    [row] = [line for line in summary.splitlines() if line.startswith("| 1 |")]
    date = row.split(" | ")[1]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", date), row
    result = (tmp_path / "exp_1" / "result.md").read_text()
    assert f"- Date: {date}\n" in result


def test_a_date_given_is_written_as_given(tmp_path: Path) -> None:
    stamp = "2026-12-07T13:05:11+00:00"
    record = write_experiment(
        tmp_path,
        experiment=1,
        title="split-K=8",
        rows=[_ROW],
        status="KEPT",
        correctness="PASS",
        date=stamp,
    )
    assert record.date == stamp
    assert f"| 1 | {stamp} |" in (tmp_path / "summary.md").read_text()


@pytest.mark.parametrize(
    "date", ["yesterday", "20261207", "2026-W49-3", "07/12/2026", "2026-13-01"]
)
def test_a_date_that_is_no_iso_date_is_refused_before_anything_is_written(
    tmp_path: Path, date: str
) -> None:
    with pytest.raises(
        InputError, match=r"^date: Expected an ISO date \(2026-11-17\) or timestamp"
    ):
        write_experiment(
            tmp_path,
            experiment=1,
            title="split-K=8",
            rows=[_ROW],
            status="KEPT",
            correctness="PASS",
            date=date,
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("written", "read"),
    [("2026-11-17", "2026-11-17"), ("2026-12-07T13:05:11+00:00", "2026-12-07T13:05:11+00:00")],
)
def test_the_reader_takes_a_day_or_a_timestamp(tmp_path: Path, written: str, read: str) -> None:
    (tmp_path / "summary.md").write_text(
        "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        f"| 1 | {written} | baseline | 40.0 | us |  | PASS | BASELINE |  |\n"
    )
    first = read_log(tmp_path, catalog=[]).experiment(1)
    assert first is not None and first.date == read


# --- judge says its minimum once ----------------------------------------------------------

_MINIMUM = (
    r"^Expected at least 4 paired samples \(baseline and candidate; 2 with baseline_again\) "
    r"to estimate noise, got "
)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_too_few_pairs_name_the_real_minimum_first(n: int) -> None:
    samples = [1.0 + i for i in range(n)]
    with pytest.raises(InputError, match=_MINIMUM + f"{n}$"):
        judge(samples, samples)


def test_lists_of_other_lengths_name_the_minimum_before_their_lengths() -> None:
    with pytest.raises(InputError, match=_MINIMUM + "1 and 5$"):
        judge([1.0], [1.0, 2.0, 3.0, 4.0, 5.0])


def test_with_a_second_baseline_two_pairs_are_the_minimum() -> None:
    with pytest.raises(
        InputError,
        match=r"^Expected at least 2 paired samples \(baseline, candidate and baseline_again\) "
        r"to estimate noise, got 1$",
    ):
        judge([1.0], [1.0], baseline_again=[1.0])
    assert judge([1.0, 2.0], [1.0, 2.0], baseline_again=[1.0, 2.0]).pairs == 2


def test_four_pairs_are_judged_without_a_second_baseline() -> None:
    assert judge([1.0, 2.0, 1.5, 2.5], [1.0, 2.0, 1.5, 2.5]).pairs == 4


# --- an fp32 matrix product on the bf16 matmul ceiling ------------------------------------


def test_matmul_cost_records_its_element_size() -> None:
    wide, narrow = matmul_cost(4096, 4096, 4096, elt_bytes=4), matmul_cost(4096, 4096, 4096)
    assert (wide.elt_bytes, narrow.elt_bytes) == (4.0, 2.0)
    # The FLOPs, so the compute floor, are the same: the warning is all that tells them apart.
    assert wide.flops == narrow.flops


def test_an_fp32_product_on_a_gpu_ceiling_warns() -> None:
    with pytest.warns(MatmulPrecisionWarning, match=r"^matmul 4096x4096x4096: .*bf16"):
        line = Roofline(ceilings=H200, cost=matmul_cost(4096, 4096, 4096, elt_bytes=4))
    assert line.floor("us") == Roofline(ceilings=H200, cost=matmul_cost(4096, 4096, 4096)).floor()


@pytest.mark.parametrize(
    ("ceilings", "cost"),
    [
        (H200, matmul_cost(4096, 4096, 4096)),
        (H200, matmul_cost(4096, 4096, 4096, elt_bytes=1)),
        (H200, Cost(flops=2e9, bytes=1e6)),
        (HOST, matmul_cost(512, 512, 512, elt_bytes=4)),
    ],
    ids=["bf16", "fp8", "no size", "host ceilings"],
)
def test_no_warning_where_the_ceiling_fits(ceilings: Ceilings, cost: Cost) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", MatmulPrecisionWarning)
        Roofline(ceilings=ceilings, cost=cost).place(100.0)


def test_a_sum_keeps_the_widest_element() -> None:
    total = matmul_cost(64, 64, 64) + matmul_cost(64, 64, 64, elt_bytes=4) + Cost(flops=1, bytes=1)
    assert total.elt_bytes == 4.0
    assert (Cost(flops=1, bytes=1) + Cost(flops=1, bytes=1)).elt_bytes is None


@pytest.mark.parametrize("value", [0, -2, float("nan"), "4", True])
def test_an_element_size_that_is_no_size_is_refused(value: object) -> None:
    with pytest.raises(InputError, match=r"^elt_bytes: Expected a finite number > 0 or None"):
        Cost(flops=1, bytes=1, elt_bytes=value)  # type: ignore[arg-type]
