"""Readings a log's author would not expect, set right.

An explicit PASS is not turned into a failure by the words of its note; summary headers
are matched as words (``Duration`` names no ratio); blanks at the end of a canonical
``result.md``'s lines change nothing it says; ``dram_pct`` is read under its own name and
as ncu prints it; a hand-written result whose heading numbers another experiment is named;
a ``TFLOPS`` column is a throughput; a range is no latency; a small read limit is said in
bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.experiments import (
    Correctness,
    ResultRecord,
    ResultRow,
    Status,
    parse_result,
    read_log,
    render_result,
)
from kernelopt.experiments.readers._files import ReadLimits
from kernelopt.experiments.readers._values import correctness_of

from ..conftest import write_files

# --- an explicit PASS and the words of its note ------------------------------------------

_PASS_NOTES = [
    "PASS (NaN-free)",
    "PASS (cache rows past each end NaN)",
    "PASS (rel err 2e-3; cache rows past each end NaN)",
    "PASS (after fixing a failing mask)",
    "PASS (the previous run failed)",
    "PASS (incorrect results fixed)",
    "PASS — NaN-free",
    "✓ (no longer wrong at the tail)",
]


@pytest.mark.parametrize("text", _PASS_NOTES)
def test_an_opening_pass_is_not_turned_by_its_note(text: str) -> None:
    assert correctness_of(text) is Correctness.PASS


@pytest.mark.parametrize(
    "text",
    [
        # Two verdicts in one text: the failure wins, as before.
        "PASS at fp32; fails at bf16",
        "PASS (fp32) / FAIL (bf16)",
        "PASS for t=128, FAILED for t=4096",
        "PASS ✗",
        "zero-scale pass; nonzero kernel fail under 1e-2",
        "FAIL (passes at fp32)",
        "PASS → FAIL",
        "Pass: 11/12",
    ],
)
def test_a_text_that_states_a_failure_as_its_verdict_still_fails(text: str) -> None:
    assert correctness_of(text) is Correctness.FAIL


@pytest.mark.parametrize("note", _PASS_NOTES[:6])
def test_a_hand_written_result_and_a_summary_cell_keep_their_pass(
    tmp_path: Path, note: str
) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": (
                "| Exp | Description | Latency | Unit | Correct | Status |\n"
                "|---|---|---|---|---|---|\n"
                "| 1 | baseline | 100 | us | PASS | BASELINE |\n"
                f"| 2 | split-KV | 80 | us | {note} | KEPT |\n"
            ),
            "experiments/exp_3/result.md": (
                f"# Experiment 3: persistent grid\n\nStatus: KEPT\nCorrectness: {note}\n\n"
                "## Result\n\n- Latency: 60 us\n"
            ),
        },
    )
    log = read_log(root, catalog=())
    by = {e.number: e for e in log.experiments}
    assert by[2].correctness is Correctness.PASS
    assert by[3].correctness is Correctness.PASS
    assert by[3].kept


# --- summary headers are matched as words --------------------------------------------------


def _timed(tmp_path: Path, header: str) -> Path:
    return write_files(
        tmp_path,
        {
            "experiments/summary.md": (
                f"| Exp | Description | {header} | Correct | Status |\n|---|---|---|---|---|\n"
                "| 1 | baseline | 100 | PASS | BASELINE |\n"
                "| 2 | split-KV | 50 | PASS | KEPT |\n"
                "| 3 | BLOCK_N=64 | 49 | PASS | KEPT |\n"
            )
        },
    )


@pytest.mark.parametrize(
    ("header", "unit"),
    [
        ("Duration", None),
        ("Duration (us)", "us"),
        ("Total duration (ms)", "ms"),
        ("Iteration time (ms)", "ms"),
        ("Generation time (ms)", "ms"),
        ("Time per launch (us)", "us"),
        ("Launch latency (us)", "us"),
        ("Latency after change (us)", "us"),
    ],
)
def test_a_time_column_is_read_as_the_latency(
    tmp_path: Path, header: str, unit: str | None
) -> None:
    log = read_log(_timed(tmp_path, header), catalog=())
    assert [(e.latency, e.speedup) for e in log.experiments] == [
        (100.0, None),
        (50.0, None),
        (49.0, None),
    ]
    assert {e.unit for e in log.experiments} == {unit}
    assert list(log.warnings) == []


def test_a_launch_time_beside_the_kernel_time_is_not_the_latency(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": (
                "| Exp | Description | Launch overhead (us) | Kernel (us) | Status |\n"
                "|---|---|---|---|---|\n"
                "| 1 | baseline | 5 | 100 | BASELINE |\n"
                "| 2 | split-KV | 6 | 50 | KEPT |\n"
            )
        },
    )
    assert [e.latency for e in read_log(root, catalog=()).experiments] == [100.0, 50.0]


def test_a_change_of_a_time_is_no_latency_and_is_named(tmp_path: Path) -> None:
    log = read_log(_timed(tmp_path, "Time change (us)"), catalog=())
    assert [e.latency for e in log.experiments] == [None, None, None]
    assert list(log.warnings) == [
        "experiments/summary.md:1: the column 'Time change (us)' was not read as a latency "
        "('change' names no time measured); the table gives no latency"
    ]


# --- blanks at the end of a canonical result's lines ---------------------------------------

_RECORD = ResultRecord(
    experiment=52,
    title="uniform merge",
    status="KEPT",
    correctness="PASS",
    correctness_detail="rel err 1.8e-03 <= 1e-2",
    date="2026-11-17",
    kernel="kernels/mla.py",
    gpu="NVIDIA H100 80GB HBM3",
    tags=("split-kv",),
    knobs={"BLOCK_N": "64"},
    rows=(ResultRow(point="b=32 s=1", impl="triton", median=59.23, p20=59.0, unit="us"),),
    verdict="FAST 0.62x ±1.1%\nconfirmed twice",
)


@pytest.mark.parametrize("blanks", ["  ", "\t", " \t "])
def test_trailing_blanks_change_nothing_a_canonical_result_says(blanks: str) -> None:
    text = render_result(_RECORD)
    padded = "\n".join(line + blanks for line in text.split("\n"))
    assert parse_result(padded) == _RECORD
    assert parse_result(padded.replace("\n", "\r\n")) == _RECORD


def test_a_canonical_result_with_hard_breaks_is_read_as_written(tmp_path: Path) -> None:
    text = render_result(_RECORD)
    root = write_files(
        tmp_path,
        {"experiments/exp_52/result.md": "".join(f"{line}  \n" for line in text.splitlines())},
    )
    log = read_log(root, catalog=())
    (experiment,) = log.experiments
    assert list(log.warnings) == []
    assert (experiment.status, experiment.correctness) == (Status.KEPT, Correctness.PASS)
    assert (experiment.latency, experiment.description) == (59.23, "uniform merge")


def test_the_notes_keep_their_trailing_blanks() -> None:
    record = ResultRecord(
        experiment=1, title="t", status="KEPT", correctness="PASS", notes="line one  \nline two"
    )
    assert parse_result(render_result(record)) == record


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "uniform merge "),
        ("kernel", "kernels/mla.py\t"),
        ("gpu", "H100  "),
        ("verdict", "FAST 0.62x \nconfirmed"),
    ],
)
def test_a_field_ending_its_line_in_a_blank_is_refused(field: str, value: str) -> None:
    # Its blank would be read back as none: the record could not be read back equal.
    base: dict[str, object] = dict(experiment=1, title="t", status="KEPT", correctness="PASS")
    base[field] = value
    with pytest.raises(InputError, match=f"{field}: Expected no space or tab at the end of a line"):
        ResultRecord(**base)  # type: ignore[arg-type]


# --- dram_pct and tc_pct under their own names, and as ncu prints them --------------------

_SUMMARY = (
    "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
    "| 1 | 2026-12-01 | baseline | 100 | us |  | PASS | BASELINE |  |\n"
    "| 2 | 2026-12-01 | first kernel | 90 | us |  | PASS | KEPT |  |\n"
)


def _profile(tmp_path: Path, text: str) -> dict[str, float]:
    root = write_files(
        tmp_path, {"experiments/summary.md": _SUMMARY, "experiments/profile.md": text}
    )
    return read_log(root, catalog=()).profile.metrics


@pytest.mark.parametrize(
    "text",
    [
        "dram_pct=85",
        "- dram_pct: 85",
        "dram_pct = 85%",
        "DRAM%: 85",
        "| Metric | Value |\n|---|---|\n| dram_pct | 85 |",
        "| Metric | Value |\n|---|---|\n| DRAM% | 85 |",
        "- DRAM: 85%",
        "```\n    DRAM Throughput                   %        85\n```",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed  85",
    ],
)
def test_dram_pct_is_read_as_it_is_written(tmp_path: Path, text: str) -> None:
    assert _profile(tmp_path, f"# Profile\n\n{text}\n")["dram_pct"] == 85.0


@pytest.mark.parametrize("text", ["tc_pct=12", "- tc_pct: 12%", "TC%: 12", "| tc_pct | 12 |"])
def test_tc_pct_is_read_as_it_is_written(tmp_path: Path, text: str) -> None:
    assert _profile(tmp_path, f"# Profile\n\n{text}\n")["tc_pct"] == 12.0


@pytest.mark.parametrize(
    "text",
    [
        # ncu's busiest memory unit and busiest SM pipe: neither is a DRAM or tensor share.
        "```\n    Memory Throughput          %     85.21\n"
        "    Compute (SM) Throughput    %     20.13\n```",
        # Wanted, not measured.
        "target: dram_pct=90, tc_pct=60",
    ],
)
def test_other_shares_and_wanted_values_are_not_read(tmp_path: Path, text: str) -> None:
    metrics = _profile(tmp_path, f"# Profile\n\n{text}\n")
    assert "dram_pct" not in metrics
    assert "tc_pct" not in metrics


# --- the heading of a hand-written result -------------------------------------------------


def test_a_hand_written_heading_that_numbers_another_experiment_is_named(
    tmp_path: Path,
) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/exp_5/result.md": (
                "# Experiment 55: split-KV\n\n**Status**: KEPT\n\n- Latency: 60 us\n"
            ),
            "experiments/exp_6/result.md": "# Exp 6 — tiles\n\n**Status**: KEPT\n",
        },
    )
    log = read_log(root, catalog=())
    assert [e.number for e in log.experiments] == [5, 6]
    assert list(log.warnings) == [
        "experiments/exp_5/result.md: its heading says 'Experiment 55', its folder says 5; "
        "read as experiment 5"
    ]


# --- a throughput column, a range, a small limit -------------------------------------------


@pytest.mark.parametrize(("header", "unit"), [("TFLOPS", "TFLOPS"), ("Perf (TFLOPS)", "TFLOPS")])
def test_a_tflops_column_is_a_throughput(tmp_path: Path, header: str, unit: str) -> None:
    log = read_log(_timed(tmp_path, header), catalog=())
    assert [(e.throughput, e.throughput_unit, e.latency) for e in log.experiments] == [
        (100.0, unit, None),
        (50.0, unit, None),
        (49.0, unit, None),
    ]


def test_a_share_of_peak_flops_is_no_throughput(tmp_path: Path) -> None:
    log = read_log(_timed(tmp_path, "% of peak TFLOPS"), catalog=())
    assert [e.throughput for e in log.experiments] == [None, None, None]


@pytest.mark.parametrize("cell", ["270-276", "270 - 276", "270–276 us"])
def test_a_range_is_no_latency(tmp_path: Path, cell: str) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": (
                "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
                "| 1 | baseline | 300 | us | BASELINE |\n"
                f"| 2 | tiles | {cell} | us | KEPT |\n"
            )
        },
    )
    log = read_log(root, catalog=())
    assert [e.latency for e in log.experiments] == [300.0, None]
    assert list(log.warnings) == [
        f"experiments/summary.md:4: Expected one number, not a range, got {cell!r}; not read"
    ]


def test_a_date_is_no_range(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": (
                "| Exp | Date | Description | Latency | Unit | Status |\n"
                "|---|---|---|---|---|---|\n"
                "| 1 | 2026-12-01 | baseline | 300 | us | BASELINE |\n"
            )
        },
    )
    log = read_log(root, catalog=())
    assert (log.experiments[0].date, list(log.warnings)) == ("2026-12-01", [])


def test_a_small_read_limit_is_said_in_bytes(tmp_path: Path) -> None:
    summary = (
        "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
        "| 1 | baseline | 300 | us | BASELINE |\n| 2 | tiles | 250 | us | KEPT |\n"
    )
    root = write_files(tmp_path, {"experiments/summary.md": summary})
    log = read_log(root, catalog=(), limits=ReadLimits(max_file_bytes=10))
    reasons = [u.reason for u in log.unread if u.path == "experiments/summary.md"]
    size = len(summary.encode())
    assert reasons == [f"read the first 10 bytes of {size} bytes; the rest was not read"]


def test_a_limit_in_kibibytes_is_said_in_kib(tmp_path: Path) -> None:
    root = write_files(tmp_path, {"experiments/LESSONS.md": "- [exp 1] lesson\n" * 300})
    log = read_log(root, catalog=(), limits=ReadLimits(max_file_bytes=2048))
    reasons = [u.reason for u in log.unread if u.path == "experiments/LESSONS.md"]
    assert reasons == ["read the first 2.0 KiB of 5.0 KiB; the rest was not read"]
