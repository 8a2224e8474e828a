"""A version that failed correctness is never written KEPT, and a benchmark row can say
whether the version it timed was correct.

``write_experiment(status="KEPT", correctness="FAIL")`` was written without a word (a
KEPT with a SLOW verdict at least warned), and a :class:`BenchRow` had no place for the
verdict, so every row read as the time of a working version.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.bench import (
    BenchRow,
    Measurement,
    append_rows,
    read_rows,
    row_from_measurement,
    to_result_row,
    write_experiment,
)
from kernelopt.experiments import Correctness, Status, read_log

TIMING = Measurement(samples=[66.1, 66.5, 66.3], gpu="NVIDIA H200")
KEPT_FAILING = (
    "status: Expected status REVERTED or FAILED for a version that failed correctness "
    "(BASELINE for a failing reference kept as the point to compare with; KEPT only with "
    "correctness PASS or UNKNOWN), got status KEPT with correctness FAIL"
)


def _row() -> object:
    return to_result_row(TIMING, point="rows=64 hidden=512", impl="v6")


# --- write_experiment: KEPT with correctness FAIL -------------------------------------


@pytest.mark.parametrize(
    ("status", "correctness"),
    [("KEPT", "FAIL"), (Status.KEPT, Correctness.FAIL)],
    ids=["words", "members"],
)
def test_a_kept_version_that_failed_correctness_is_refused_before_anything_is_written(
    tmp_path: Path, status: object, correctness: object
) -> None:
    root = tmp_path / "experiments"
    kernel = tmp_path / "ln_bwd.py"
    kernel.write_text("x = 1\n")
    with pytest.raises(InputError) as refused:
        write_experiment(
            root, experiment=6, title="persistent partial sums", rows=[_row()],  # type: ignore[list-item]
            status=status, correctness=correctness,  # type: ignore[arg-type]
            correctness_detail="dgamma rel err 3e-01", snapshot=kernel,
        )  # fmt: skip
    assert str(refused.value) == KEPT_FAILING
    assert not root.exists()


def test_a_kept_failing_version_without_rows_is_refused_the_same_way(tmp_path: Path) -> None:
    with pytest.raises(InputError) as refused:
        write_experiment(
            tmp_path, experiment=2, title="fused", rows=[], status="KEPT", correctness="FAIL"
        )
    assert str(refused.value) == KEPT_FAILING
    assert list(tmp_path.iterdir()) == []


def test_an_existing_result_is_left_as_it_was_when_overwritten_kept_and_failing(
    tmp_path: Path,
) -> None:
    write_experiment(
        tmp_path, experiment=3, title="split", rows=[_row()],  # type: ignore[list-item]
        status="REVERTED", correctness="FAIL", date="2026-12-05",
    )  # fmt: skip
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*.md")}
    with pytest.raises(InputError, match="got status KEPT with correctness FAIL"):
        write_experiment(
            tmp_path, experiment=3, title="split", rows=[_row()],  # type: ignore[list-item]
            status="KEPT", correctness="FAIL", date="2026-12-05", overwrite=True,
        )  # fmt: skip
    assert {p.name: p.read_bytes() for p in tmp_path.rglob("*.md")} == before


@pytest.mark.parametrize(
    ("status", "correctness"),
    [
        ("KEPT", "PASS"),
        ("KEPT", "UNKNOWN"),
        ("BASELINE", "FAIL"),  # a failing reference kept as the point to compare with
        ("REVERTED", "FAIL"),
        ("FAILED", "FAIL"),
    ],
)
def test_the_other_pairs_are_written(tmp_path: Path, status: str, correctness: str) -> None:
    record = write_experiment(
        tmp_path, experiment=1, title="try", rows=[_row()],  # type: ignore[list-item]
        status=status, correctness=correctness, date="2026-12-05",
    )  # fmt: skip
    assert (record.status.value, record.correctness.value) == (status, correctness)
    (experiment,) = read_log(tmp_path).experiments
    assert experiment.correctness is not None and experiment.correctness.value == correctness


# --- BenchRow.correctness ---------------------------------------------------------------


@pytest.mark.parametrize("verdict", ["PASS", "FAIL", "UNKNOWN", Correctness.FAIL])
def test_a_rows_correctness_reads_back_through_the_file(tmp_path: Path, verdict: object) -> None:
    row = row_from_measurement(TIMING, op="ln_bwd", impl="v6", correctness=verdict)  # type: ignore[arg-type]
    path = append_rows(tmp_path / "bench.jsonl", [row])
    (read,) = read_rows(path)
    assert read == row and read.correctness == str(Correctness(verdict).value)
    assert type(read.correctness) is str  # a member is stored as its word
    assert json.loads(path.read_text())["correctness"] == read.correctness


def test_a_row_without_a_verdict_is_written_as_rows_always_were(tmp_path: Path) -> None:
    row = BenchRow(op="ln_bwd", impl="v6", median=66.3, gpu="cpu", timestamp="t")
    path = append_rows(tmp_path / "bench.jsonl", [row])
    assert "correctness" not in json.loads(path.read_text())
    assert read_rows(path) == [row] and row.correctness is None


def test_a_row_written_before_rows_held_a_verdict_reads_back_without_one(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(
        '{"op": "ln_bwd", "impl": "v6", "median": 66.3, "unit": "us", "mode": "cpu", '
        '"backend": "cpu-perf-counter", "cache": "none", "gpu": "cpu", "note": ""}\n'
    )
    (row,) = read_rows(path)
    assert row.correctness is None and row.median == 66.3


@pytest.mark.parametrize("word", ["pass", "OK", ""])
def test_a_verdict_other_than_the_three_words_is_refused(word: str, tmp_path: Path) -> None:
    message = f"correctness: Expected one of PASS, FAIL, UNKNOWN or None, got {word!r}"
    with pytest.raises(InputError) as made:
        BenchRow(op="ln_bwd", impl="v6", correctness=word)
    assert str(made.value) == message
    with pytest.raises(InputError) as measured:
        row_from_measurement(TIMING, op="ln_bwd", impl="v6", correctness=word)
    assert str(measured.value) == message
    path = tmp_path / "edited.jsonl"
    path.write_text(json.dumps({"op": "ln_bwd", "impl": "v6", "correctness": word}) + "\n")
    with pytest.raises(FormatError) as read:
        read_rows(path)
    assert str(read.value) == f"{path}:1: {message}"


def test_a_verdict_of_another_type_in_a_file_is_refused_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "edited.jsonl"
    path.write_text('{"op": "ln_bwd", "impl": "v6", "correctness": true}\n')
    with pytest.raises(FormatError, match=r"BenchRow\.correctness: Expected .*, got True"):
        read_rows(path)
