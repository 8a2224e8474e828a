"""A canonical result's ``%`` Of floor cell that its row's floor over its median
contradicts is named by the parser (never for a row ``render_result`` wrote); a profiler's
own output is held to the rules of the other metric readers; a value before a sentence's
full stop, and a share in words past the largest float, are read or named, never passed
over.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from kernelopt._errors import FormatError
from kernelopt.experiments import read_log
from kernelopt.experiments.canonical import measurement_rows, parse_result, render_result
from kernelopt.experiments.readers._metrics import metrics_of, prose_metrics, tool_metrics
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status

from ..conftest import write_files

RESULT = "experiments/exp_2/result.md"
# The first Measurements row of a rendered result with no date: heading, blank, Status,
# Correctness, blank, "## Measurements", header, rule.
FIRST_ROW = 9


def _record(*rows: ResultRow) -> ResultRecord:
    return ResultRecord(
        experiment=2,
        title="fused kernel",
        status=Status.KEPT,
        correctness=Correctness.PASS,
        rows=rows,
    )


def _row(median: float, floor: float | None, point: str = "b=32") -> ResultRow:
    return ResultRow(point=point, impl="triton", median=median, unit="us", floor=floor)


# A floor of 35.76 over a median of 45.6: 78.42 %, written "78.4%".
ROW = _row(45.6, 35.76)


def _edited(cell: str, row: ResultRow = ROW, written: str = "| 78.4% |") -> str:
    text = render_result(_record(row))
    assert written in text
    return text.replace(written, f"| {cell} |")


def _said(cell: str, allowed: str, line: int = FIRST_ROW, point: str = "b=32") -> str:
    return (
        f"{RESULT}:{line} [Measurements]: Expected Of floor near the row's floor over its "
        f"median, {allowed}, got {cell!r} for point {point!r}, impl 'triton'; "
        "the floor over median is read"
    )


# --- 1. a canonical row's hand-edited % Of floor cell --------------------------------------


def test_a_hand_edited_share_is_named_and_the_floor_over_median_read() -> None:
    warnings: list[str] = []

    record = parse_result(_edited("90.0%"), path=RESULT, warnings=warnings)

    assert record == _record(ROW)
    assert warnings == [_said("90.0%", "78.42%")]


@pytest.mark.parametrize("cell", ["78.4%", "78%", "78.42%", "78.421%", "78.4 %", "78.4211%"])
def test_a_share_its_digits_round_to_is_not_named(cell: str) -> None:
    warnings: list[str] = []

    parse_result(_edited(cell), path=RESULT, warnings=warnings)

    assert warnings == []


@pytest.mark.parametrize("cell", ["78.5%", "79%", "7.8%", "78.43%", "78.35%", "784%"])
def test_a_share_no_rounding_of_its_digits_explains_is_named(cell: str) -> None:
    warnings: list[str] = []

    parse_result(_edited(cell), path=RESULT, warnings=warnings)

    assert warnings == [_said(cell, "78.42%")]


def test_a_tiny_share_and_one_past_the_floor_are_held_to_their_own_digits() -> None:
    tiny = _row(10.0, 0.0021)  # 0.021 %, written to two significant digits
    past = _row(10.0, 14.0, point="b=64")  # 140 %, past a loose floor
    text = render_result(_record(tiny, past))
    assert "| 0.021% |" in text and "| 140.0% |" in text
    warnings: list[str] = []

    parse_result(text, path=RESULT, warnings=warnings)
    assert warnings == []

    edited = text.replace("| 0.021% |", "| 0.03% |").replace("| 140.0% |", "| 104.0% |")
    parse_result(edited, path=RESULT, warnings=warnings)

    assert warnings == [
        _said("0.03%", "0.021%"),
        _said("104.0%", "140%", line=FIRST_ROW + 1, point="b=64"),
    ]


def test_the_measurements_of_a_result_out_of_the_layout_name_it_too() -> None:
    text = _edited("90.0%") + "\n## My own section\nmore\n"
    with pytest.raises(FormatError):
        parse_result(text, path=RESULT)
    warnings: list[str] = []

    rows = measurement_rows(text, path=RESULT, warnings=warnings)

    assert rows == (ROW,)
    assert warnings == [_said("90.0%", "78.42%")]


def test_a_text_refused_as_a_whole_names_no_row() -> None:
    # A caller then reads its Measurements table alone: each row is named once, there.
    warnings: list[str] = []

    with pytest.raises(FormatError):
        parse_result(_edited("90.0%") + "\n## My own section\n", path=RESULT, warnings=warnings)

    assert warnings == []


def test_a_refused_row_is_named_once_as_refused() -> None:
    refused: list[FormatError] = []
    warnings: list[str] = []

    record = parse_result(_edited("0%"), path=RESULT, refused=refused, warnings=warnings)

    assert record.rows == ()
    assert len(refused) == 1
    assert warnings == []


def test_without_a_path_the_line_is_named() -> None:
    warnings: list[str] = []

    parse_result(_edited("90.0%"), warnings=warnings)

    assert warnings == [_said("90.0%", "78.42%").replace(f"{RESULT}:", "line ")]


def _random_row(chance: random.Random, index: int) -> ResultRow | None:
    """A row of a random median and a floor at a random share of it, from a floor far
    under the median to one past it, the share's last written digit on each side of a
    rounding boundary among them; None where that floor is no float a row takes (past the
    largest, or its share in percent endless or 0)."""
    median = 10.0 ** chance.uniform(-6.0, 9.0)
    exponent = chance.choice((chance.uniform(-8.0, 3.0), chance.uniform(-300.0, 300.0)))
    floor = median * 10.0**exponent
    if chance.random() < 0.3:  # a floor of few digits, as a roofline worked out by hand
        floor = float(f"{floor:.3g}")
    percent = 100.0 * (floor / median)
    if not (math.isfinite(floor) and math.isfinite(percent) and percent > 0):
        return None
    return _row(median, floor, point=f"b={index}")


def test_no_row_render_result_writes_is_named() -> None:
    chance = random.Random(20261207)
    rows: list[ResultRow] = []
    while len(rows) < 2000:
        row = _random_row(chance, len(rows))
        if row is not None:
            rows.append(row)
    record = _record(*rows)
    text = render_result(record)
    assert "e-" in text and "| 0.0" in text  # tiny shares among them
    warnings: list[str] = []

    assert parse_result(text, path=RESULT, warnings=warnings) == record
    assert warnings == []


@pytest.mark.parametrize(
    ("median", "share_pct"),
    [(45.6, s) for s in (0.001, 0.0049, 0.021, 0.05, 0.049999, 0.5, 9.96, 78.45, 99.95, 140.0)]
    + [(m, 78.45) for m in (1e-300, 1e-6, 3.0, 1e300)],
)
def test_a_share_at_a_rounding_boundary_is_not_named(median: float, share_pct: float) -> None:
    record = _record(_row(median, median * share_pct / 100.0))
    warnings: list[str] = []

    parse_result(render_result(record), path=RESULT, warnings=warnings)

    assert warnings == []


# --- 2. a profiler's own output ------------------------------------------------------------

ENDLESS_DRAM = "DRAM Throughput   %   " + "9" * 309


def test_an_endless_tool_value_is_not_read_and_named() -> None:
    warnings: list[str] = []

    found = tool_metrics(ENDLESS_DRAM, "experiments/profile.md", warnings)

    assert found == {}
    assert warnings == [
        "experiments/profile.md: Expected dram_pct as a finite number, got inf; not read"
    ]


def test_an_endless_tool_value_is_not_read_without_a_warnings_list() -> None:
    assert tool_metrics(ENDLESS_DRAM) == {}
    assert tool_metrics("DRAM Throughput   %   85.21") == {"dram_pct": 85.21}


def test_a_tool_value_a_table_already_gave_is_left_out_unsaid() -> None:
    warnings: list[str] = []

    assert tool_metrics(ENDLESS_DRAM, "p.md", warnings, known={"dram_pct"}) == {}
    assert warnings == []


def test_an_endless_tool_value_in_a_code_block_reaches_no_metric(tmp_path: Path) -> None:
    summary = (
        "# Experiments Summary\n\n| Exp | Description | Latency | Unit | Correct | Status |\n"
        "|---|---|---|---|---|---|\n| 1 | eager | 60.0 | us | PASS | BASELINE |\n"
    )
    profile = f"## Profile: mla v2 | b=32\n\n```\n{ENDLESS_DRAM}\n```\n"
    root = write_files(
        tmp_path, {"experiments/summary.md": summary, "experiments/profile.md": profile}
    )

    log = read_log(root, catalog=())

    assert log.profile is not None
    assert "dram_pct" not in log.profile.metrics


# --- 3. a value before a full stop, an endless share in words ------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Measured floor_pct=78.", {"floor_pct": 78.0}),
        ("We reached dram_pct=85. Then we fused.", {"dram_pct": 85.0}),
        ("It ran at tc_pct: 10.5.", {"tc_pct": 10.5}),
        ("DRAM%: 85.", {"dram_pct": 85.0}),
        ("It ran at 1e-3% of the floor.", {"floor_pct": 0.001}),  # read as 3 before
        ("TC%: 2e1", {"tc_pct": 20.0}),  # read as its mantissa, 2, before
        ("version 1.2.3 of floor_pct 1.2.3", {}),  # no value
    ],
)
def test_a_value_is_read_whole_up_to_a_full_stop(text: str, found: dict[str, float]) -> None:
    warnings: list[str] = []

    assert prose_metrics(text, "notes.md", warnings) == found
    assert warnings == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Measured floor_pct=0.", "Expected floor_pct as a share above 0, got 0"),
        ("It ran at 1e400% of the floor.", "Expected floor_pct as a finite share, got inf"),
        ("It ran at 1e400 % of the roofline", "Expected floor_pct as a finite share, got inf"),
        ("DRAM%: 1e400", "Expected dram_pct as a finite number, got inf"),  # read as 1 before
        ("occupancy 1e400%", "Expected occupancy_pct as a percentage in [0, 100], got inf"),
    ],
)
def test_a_share_no_measurement_can_be_is_named(text: str, said: str) -> None:
    warnings: list[str] = []

    assert prose_metrics(text, "notes.md", warnings) == {}
    assert warnings == [f"notes.md: {said}; not read"]


def test_a_zero_share_before_a_full_stop_in_a_result_is_named(tmp_path: Path) -> None:
    summary = (
        "# Experiments Summary\n\n| Exp | Description | Latency | Unit | Correct | Status |\n"
        "|---|---|---|---|---|---|\n| 2 | fused kernel | 50.0 | us | PASS | KEPT |\n"
    )
    record = ResultRecord(
        experiment=2,
        title="fused kernel",
        status=Status.KEPT,
        correctness=Correctness.PASS,
        notes="Measured floor_pct=0.",
    )
    root = write_files(tmp_path, {"experiments/summary.md": summary, RESULT: render_result(record)})

    log = read_log(root, catalog=())

    experiment = log.experiment(2)
    assert experiment is not None
    assert "floor_pct" not in experiment.metrics
    assert f"{RESULT}: Expected floor_pct as a share above 0, got 0; not read" in log.warnings


def test_a_value_with_an_exponent_before_a_full_stop_is_read_whole() -> None:
    assert metrics_of("floor_pct: 7.8e1.") == {"floor_pct": 78.0}
