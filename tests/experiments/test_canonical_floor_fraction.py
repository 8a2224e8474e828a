"""A row's share of its roofline floor (floor over median, the Of floor cell) is finite and
above zero wherever a canonical result holds one: a floor of 0, or one whose share of the
median overflows or underflows, is refused when the row is made, naming its point and
implementation, so nothing is written; a hand-edited Of floor cell at or below 0, NaN or
infinite is named with its file and line when the result is read, and its row not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.bench import Measurement, to_result_row
from kernelopt.bench.records import write_experiment
from kernelopt.experiments import read_log
from kernelopt.experiments.canonical import (
    log_result,
    measurement_rows,
    parse_result,
    render_result,
)
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status

POINT = "b=32 s=1 t=4096"
RESULT = "experiments/exp_1/result.md"


def _row(floor: float | None = 35.0, median: float = 50.0, point: str = POINT) -> ResultRow:
    return ResultRow(point=point, impl="triton", median=median, unit="us", floor=floor)


def _record(*rows: ResultRow) -> ResultRecord:
    return ResultRecord(
        experiment=1,
        title="split the key loop",
        status=Status.KEPT,
        correctness=Correctness.PASS,
        date="2026-01-01",
        rows=rows,
    )


def _line_of(text: str, needle: str) -> int:
    """The 1-based line of ``text`` that holds ``needle``."""
    return next(n for n, line in enumerate(text.split("\n"), start=1) if needle in line)


@pytest.mark.parametrize(
    ("floor", "median", "share"),
    [
        (0.0, 50.0, "0.0"),  # a roofline of a call that moves nothing and computes nothing
        (1e300, 1e-300, "inf"),  # floor over median overflows
        (1e-300, 1e300, "0.0"),  # floor over median underflows
    ],
)
def test_a_row_whose_floor_share_is_zero_or_endless_is_refused_naming_the_row(
    floor: float, median: float, share: str
) -> None:
    with pytest.raises(InputError) as raised:
        _row(floor=floor, median=median)
    assert str(raised.value) == (
        "floor: Expected a floor above 0 whose share of the median (floor / median) is "
        f"finite, got floor={floor!r} over median={median!r} ({share}) "
        f"for point {POINT!r}, impl 'triton'"
    )


def test_a_floor_of_zero_refuses_the_row_before_anything_is_written(tmp_path: Path) -> None:
    # A floor worked out by hand from bytes that came out 0 (a shape multiplied out
    # wrong): the result showed the kernel at "0.0%" of it, as if it reached none of it.
    bytes_moved, bytes_per_us = 0 * 4096 * 576 * 2, 3.0e6
    floor = bytes_moved / bytes_per_us
    timed = Measurement(samples=[49.0, 50.0, 51.0], backend="cpu-perf-counter")
    root = tmp_path / "experiments"

    with pytest.raises(InputError, match=r"got floor=0\.0 over median=50\.0 \(0\.0\) for point"):
        write_experiment(
            root,
            experiment=1,
            title="split the key loop",
            rows=[to_result_row(timed, point=POINT, impl="triton", floor=floor)],
            status="KEPT",
            correctness="PASS",
        )
    assert not root.exists()


def test_a_share_below_a_tenth_of_a_percent_is_not_written_as_zero() -> None:
    tiny = _row(floor=0.0105, median=50.0)  # 0.021 % of the floor

    text = render_result(_record(tiny))

    assert "| 0.0105 | 0.021% |" in text
    assert "0.0%" not in text
    assert parse_result(text) == _record(tiny)
    # The "0.0%" such a row was written with before reads as written: no row is lost.
    assert parse_result(text.replace("0.021%", "0.0%")) == _record(tiny)


@pytest.mark.parametrize("cell", ["0.0%", "0%", "-3.5%", "nan%", "inf%", "-inf%"])
def test_a_hand_edited_of_floor_cell_of_no_share_is_refused_naming_the_line_and_row(
    cell: str,
) -> None:
    other = _row(floor=30.0, point="b=1 s=1 t=4096")  # 60.0% of its floor
    text = render_result(_record(_row(), other)).replace("| 70.0% |", f"| {cell} |")
    line = _line_of(text, f"| {cell} |")
    message = (
        f"exp_1/result.md:{line} [Measurements]: Expected Of floor as a finite share "
        f"above 0, got {cell!r} for point {POINT!r}, impl 'triton'"
    )

    with pytest.raises(FormatError) as raised:
        parse_result(text, path="exp_1/result.md")
    assert str(raised.value) == message

    refused: list[FormatError] = []
    assert parse_result(text, path="exp_1/result.md", refused=refused).rows == (other,)
    assert [str(error) for error in refused] == [message]
    refused.clear()
    assert measurement_rows(text, path="exp_1/result.md", refused=refused) == (other,)
    assert [error.line for error in refused] == [line]


def test_read_log_names_a_hand_edited_zero_of_floor_with_its_file_and_line(
    tmp_path: Path,
) -> None:
    log_result(tmp_path / "experiments", _record(_row()))
    result = tmp_path / RESULT
    text = result.read_text().replace("| 70.0% |", "| 0.0% |")
    result.write_text(text)

    log = read_log(tmp_path, catalog=())

    line = _line_of(text, "| 0.0% |")
    assert log.warnings == (
        f"{RESULT}:{line} [Measurements]: Expected Of floor as a finite share above 0, "
        f"got '0.0%' for point {POINT!r}, impl 'triton'; the row was not read",
    )


def test_read_log_names_a_hand_edited_floor_of_zero_with_its_file_and_line(
    tmp_path: Path,
) -> None:
    log_result(tmp_path / "experiments", _record(_row()))
    result = tmp_path / RESULT
    text = result.read_text().replace("| 35.0 | 70.0% |", "| 0.0 | 70.0% |")
    result.write_text(text)

    log = read_log(tmp_path, catalog=())

    line = _line_of(text, "| 0.0 | 70.0% |")
    assert log.warnings == (
        f"{RESULT}:{line} [Measurements]: floor: Expected a floor above 0 whose share of the "
        f"median (floor / median) is finite, got floor=0.0 over median=50.0 (0.0) "
        f"for point {POINT!r}, impl 'triton'; the row was not read",
    )
