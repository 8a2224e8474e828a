"""An ``Of floor`` cell with a ``%`` sign beside the row's own floor and time: read as
written, and named where no rounding of the three cells' digits explains the difference
(a hand edit: ``90 %`` beside a floor of 35.76 us and a time of 45.60 us, 78.4 %); never
named for a row ``kernelopt.bench`` wrote, at any share.

And a share of the floor of 0 or endless reaches neither ``Experiment.metrics`` nor
``Experiment.floors`` by any path a result or profile is read by: an Of floor cell, a
floor over a time, a ``floor_pct`` line, a value in words, in a result's body, in a
canonical result's notes, in profile.md; each is named, "not read".
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kernelopt.bench import Measurement, to_result_row
from kernelopt.experiments import SourceRef, read_log
from kernelopt.experiments.canonical import render_result
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import tables
from kernelopt.experiments.readers._metrics import table_metric
from kernelopt.experiments.readers.floors import result_floors, row_floor_over_time
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status

from ..conftest import FUSED_SUMMARY, write_files

SUMMARY = FUSED_SUMMARY
RESULT = "experiments/exp_2/result.md"
PROFILE = "experiments/exp_2/profile.md"
HAND_HEAD = "# Experiment 2: fused kernel\n\n- Status: KEPT\n\n"
# The first table row is line 7 of a hand-written result (heading, blank, status, blank,
# header, rule).
FIRST_ROW = 7
TIMED = "| Point | Median (us) | Floor (us) | Of floor |\n|---|---|---|---|\n"


def _timed_row(median: str, floor: str, share: str) -> str:
    return TIMED + f"| b=32 | {median} | {floor} | {share} |\n"


def _read_result(tmp_path: Path, body: str) -> tuple[dict[str, float], list[float], list[str]]:
    """floor_pct, the floor rows' fractions and the warnings of a log whose exp 2 result is
    ``body`` under a hand-written heading."""
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, RESULT: HAND_HEAD + body})
    log = read_log(root, catalog=())
    experiment = log.experiment(2)
    assert experiment is not None
    return (
        dict(experiment.metrics),
        [row.fraction for row in experiment.floors],
        list(log.warnings),
    )


def _of_floor_warnings(warnings: list[str]) -> list[str]:
    return [warning for warning in warnings if "Of floor" in warning]


# --- a % cell beside its row's floor and time ----------------------------------------------


def test_a_hand_edited_share_beside_its_floor_and_time_is_named_and_read_as_written(
    tmp_path: Path,
) -> None:
    metrics, fractions, warnings = _read_result(tmp_path, _timed_row("45.60", "35.76", "90 %"))

    assert metrics["floor_pct"] == 90.0
    assert fractions == [pytest.approx(0.9)]
    assert _of_floor_warnings(warnings) == [
        f"{RESULT}:{FIRST_ROW}: Expected Of floor near the row's floor over its time, "
        "78.4% to 78.44%, got 90 %; read as written"
    ]


@pytest.mark.parametrize(
    ("median", "floor", "share"),
    [
        ("45.60", "35.76", "78 %"),  # 78.42 rounds to 78
        ("45.60", "35.76", "78.4 %"),
        ("45.60", "35.76", "78.42%"),
        ("100.00", "78.44", "78.4 %"),  # 78.44 rounds to 78.4
        ("46", "36", "80 %"),  # 36 / 46 is 78.3 %, but 36.4 / 45.5 is 80 %
        ("45.6 us", "35.76 us", "**78.4%**"),
        ("45,6", "35,76", "78,4 %"),  # decimal commas
    ],
)
def test_a_share_its_digits_round_to_is_not_named(
    tmp_path: Path, median: str, floor: str, share: str
) -> None:
    metrics, fractions, warnings = _read_result(tmp_path, _timed_row(median, floor, share))

    assert _of_floor_warnings(warnings) == []
    assert fractions == [pytest.approx(metrics["floor_pct"] / 100.0)]


@pytest.mark.parametrize(
    ("median", "floor", "share", "allowed"),
    [
        ("45.60", "35.76", "78.5 %", "78.4% to 78.44%"),  # one digit more: 78.45 at least
        ("45.60", "35.76", "79 %", "78.4% to 78.44%"),
        ("46.00", "36.00", "80 %", "78.24% to 78.28%"),  # the same 80 % beside exact digits
        ("45.60", "35.76", "1 %", "78.4% to 78.44%"),
    ],
)
def test_a_share_no_rounding_explains_is_named(
    tmp_path: Path, median: str, floor: str, share: str, allowed: str
) -> None:
    metrics, _, warnings = _read_result(tmp_path, _timed_row(median, floor, share))

    assert metrics["floor_pct"] == float(share.rstrip(" %"))
    assert _of_floor_warnings(warnings) == [
        f"{RESULT}:{FIRST_ROW}: Expected Of floor near the row's floor over its time, "
        f"{allowed}, got {share}; read as written"
    ]


def test_a_zero_share_beside_its_floor_and_time_is_named_and_theirs_is_read(
    tmp_path: Path,
) -> None:
    # Before, the row's floor over its time replaced the 0 % without a word.
    metrics, fractions, warnings = _read_result(tmp_path, _timed_row("45.60", "35.76", "0 %"))

    assert metrics["floor_pct"] == pytest.approx(78.42, abs=0.01)
    assert fractions == [pytest.approx(35.76 / 45.6)]
    assert _of_floor_warnings(warnings) == [
        f"{RESULT}:{FIRST_ROW}: Expected Of floor near the row's floor over its time, "
        "78.4% to 78.44%, got 0 %; the floor over time is read instead"
    ]


def test_only_the_row_that_disagrees_is_named_on_a_later_row(tmp_path: Path) -> None:
    body = TIMED + "| b=32 | 45.60 | 35.76 | 78.4 % |\n| b=64 | 80.00 | 40.00 | 60.0 % |\n"

    metrics, fractions, warnings = _read_result(tmp_path, body)

    assert metrics["floor_pct"] == 78.4
    assert fractions == [pytest.approx(0.784), pytest.approx(0.6)]
    assert _of_floor_warnings(warnings) == [
        f"{RESULT}:{FIRST_ROW + 1}: Expected Of floor near the row's floor over its time, "
        "49.99% to 50.01%, got 60.0 %; read as written"
    ]


def test_a_profile_table_names_it_too(tmp_path: Path) -> None:
    profile = "## Profile: mla v2 | b=32\n" + _timed_row("45.60", "35.76", "90 %")
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, PROFILE: profile})

    log = read_log(root, catalog=())

    assert log.profile is not None
    assert log.profile.metrics["floor_pct"] == 90.0
    assert f"{PROFILE}:4: Expected Of floor near the row's floor over its time" in "\n".join(
        log.warnings
    )


# --- the rows kernelopt.bench writes -------------------------------------------------------

# Shares in percent, from a floor a thousandth of the time to one past a loose floor.
BENCH_SHARES = (0.001, 0.0049, 0.021, 0.05, 0.5, 9.96, 50.0, 78.4, 78.45, 99.95, 100.2, 140.0)


def _bench_row(point: str, median: float, share_pct: float) -> ResultRow:
    """A row as ``kernelopt.bench`` makes it: its times to 6 significant digits."""
    measurement = Measurement(samples=[median * 0.99, median, median * 1.01], unit="us")
    return to_result_row(
        measurement, point=point, impl="triton", floor=measurement.median * share_pct / 100.0
    )


def _bench_result(rows: tuple[ResultRow, ...]) -> TextFile:
    record = ResultRecord(
        experiment=2,
        title="fused kernel",
        status=Status.KEPT,
        correctness=Correctness.PASS,
        date="2026-01-01",
        rows=rows,
    )
    text = render_result(record)
    return TextFile(path=RESULT, text=text, lines=tuple(text.split("\n")))


def _hand_readings(file: TextFile) -> tuple[list[float], list[str]]:
    """Each row's floor_pct as the metric readers read its Measurements row, and the
    warnings of both readers, the floor readers reading it as a hand-written table."""
    warnings: list[str] = []
    shares: list[float] = []
    (table,) = tables(file.lines)
    column = table.header.index("Of floor")
    for row in table.rows:
        measured = row_floor_over_time(table.header, row.cells)
        where = SourceRef(path=file.path, line=row.line)
        share = table_metric(
            "floor_pct", "Of floor", row.cells[column], where, warnings, floor_over_time=measured
        )
        assert share is not None
        shares.append(share)
    assert len(result_floors(file, (), warnings=warnings)) == len(table.rows)
    return shares, warnings


def test_every_share_kernelopt_bench_writes_reads_back_without_a_warning() -> None:
    rows = tuple(
        _bench_row(f"b={index}", median, share)
        for index, share in enumerate(BENCH_SHARES)
        for median in (0.0123456, 45.6, 45.6789, 1234.5678, 98765.4321)
    )
    file = _bench_result(rows)
    assert "| 78.4% |" in file.text and "| 100.2% |" in file.text and "| 9.96" not in file.text

    shares, warnings = _hand_readings(file)

    assert warnings == []
    for row, share in zip(rows, shares, strict=True):
        assert row.floor is not None
        assert share == pytest.approx(100.0 * row.floor / row.median, abs=0.05)


def test_many_rows_kernelopt_bench_writes_read_back_without_a_warning() -> None:
    # Medians and shares over many orders of magnitude, the share's last digit on each side
    # of a rounding boundary among them.
    chance = random.Random(20261207)
    rows = tuple(
        _bench_row(
            f"b={index}",
            10.0 ** chance.uniform(-3.0, 6.0),
            10.0 ** chance.uniform(-3.0, 2.2),
        )
        for index in range(600)
    )

    _, warnings = _hand_readings(_bench_result(rows))

    assert warnings == []


def test_a_bench_table_under_a_hand_written_heading_reads_without_a_warning(
    tmp_path: Path,
) -> None:
    # Outside the canonical layout the result's Measurements table is read by its headers:
    # floor_pct from its first row.
    rows = tuple(_bench_row(f"b={i}", 45.6789, s) for i, s in enumerate((9.96, 0.5, 100.2)))
    rendered = _bench_result(rows).text
    body = rendered[rendered.index("## Measurements") :]

    metrics, fractions, warnings = _read_result(tmp_path, body)

    assert _of_floor_warnings(warnings) == []
    assert metrics["floor_pct"] == 10.0  # "10.0%": 9.96 % to one decimal
    assert fractions == [pytest.approx(r.floor / r.median) for r in rows if r.floor]


def test_a_row_the_canonical_parser_refused_is_no_floor_and_named_once(tmp_path: Path) -> None:
    # A hand edit to 0.0% beside a floor of 35 and a median of 50: the parser names the row
    # "not read"; the floor readers, reading the table by its headers since the file has no
    # canonical row left, carried it all the same, from its floor over its time.
    row = ResultRow(point="b=32", impl="triton", median=50.0, unit="us", floor=35.0)
    text = _bench_result((row,)).text.replace("| 70.0% |", "| 0.0% |")
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, RESULT: text})

    log = read_log(root, catalog=())

    experiment = log.experiment(2)
    assert experiment is not None
    assert experiment.floors == ()
    assert len(_of_floor_warnings(list(log.warnings))) == 1
    assert "the row was not read" in _of_floor_warnings(list(log.warnings))[0]


def test_a_refused_row_outside_the_canonical_layout_gives_no_metric(tmp_path: Path) -> None:
    # Under a hand-written heading the result's tables are read by their headers too: the
    # metric readers took floor_pct 70 from the refused row's floor over its time.
    refused = ResultRow(point="b=32", impl="triton", median=50.0, unit="us", floor=35.0)
    kept = ResultRow(point="b=64", impl="triton", median=50.0, unit="us", floor=30.0)
    rendered = _bench_result((refused, kept)).text.replace("| 70.0% |", "| 0.0% |")
    body = rendered[rendered.index("## Measurements") :]

    metrics, fractions, warnings = _read_result(tmp_path, body)

    assert metrics["floor_pct"] == 60.0
    assert fractions == [0.6]
    (said,) = _of_floor_warnings(warnings)
    assert said.endswith("the row was not read")


# --- a share of 0 or endless reaches no metric and no floor --------------------------------

ENDLESS = "1" + "0" * 400


@pytest.mark.parametrize(
    ("body", "said"),
    [
        # Already refused: pinned here with the rest.
        ("floor_pct: 0\n", f"{RESULT}: Expected floor_pct as a share above 0, got 0"),
        ("- floor_pct: 0.0\n", f"{RESULT}: Expected floor_pct as a share above 0, got 0"),
        (
            "Measured floor_pct=0 at b=32.\n",
            f"{RESULT}: Expected floor_pct as a share above 0, got 0",
        ),
        ("It ran at 0% of the floor.\n", f"{RESULT}: Expected floor_pct as a share above 0"),
        (f"floor_pct: {ENDLESS}\n", f"{RESULT}: Expected floor_pct as a finite share, got inf"),
        (
            "| Metric | Value |\n|---|---|\n| floor_pct | 0 |\n",
            f"{RESULT}: Expected floor_pct as a share above 0, got 0",
        ),
        (
            "| Point | Of floor |\n|---|---|\n| b=32 | 0 % |\n",
            f"{RESULT}:{FIRST_ROW}: Expected Of floor as a share above 0, got 0 %",
        ),
        # Read as its mantissa, 1, before.
        ("floor_pct: 1e400\n", f"{RESULT}: Expected floor_pct as a finite share, got inf"),
        # Passed over unsaid before: a number past the largest float is none.
        (
            "| Point | Of floor |\n|---|---|\n| b=32 | 1e400 % |\n",
            f"{RESULT}:{FIRST_ROW}: Expected Of floor as a finite share, got 1e400 %",
        ),
        (
            f"| Point | Of floor |\n|---|---|\n| b=32 | {ENDLESS}% |\n",
            f"{RESULT}:{FIRST_ROW}: Expected Of floor as a finite share, got {ENDLESS}%",
        ),
        (
            "| Point | Median (us) | Floor (us) |\n|---|---|---|\n| b=32 | 1e-300 | 1e300 |\n",
            f"{RESULT}:{FIRST_ROW}: Expected Of floor as a finite share, "
            "got a floor over time of inf",
        ),
        (
            "| Point | Median (us) | Floor (us) |\n|---|---|---|\n| b=32 | 1e300 | 1e-300 |\n",
            f"{RESULT}:{FIRST_ROW}: Expected Of floor as a share above 0, "
            "got a floor over time of 0",
        ),
    ],
)
def test_a_result_states_no_share_of_zero_or_endless(tmp_path: Path, body: str, said: str) -> None:
    metrics, fractions, warnings = _read_result(tmp_path, body)

    assert "floor_pct" not in metrics
    assert fractions == []
    assert [w for w in warnings if w.startswith(said)] == [
        w for w in warnings if "floor" in w.lower()
    ]
    assert any(w.startswith(said) and w.endswith("; not read") for w in warnings), warnings


@pytest.mark.parametrize(
    "notes", ["floor_pct: 0", "floor_pct: 1e400", "It reached 0% of the roofline.", "floor_pct=0"]
)
def test_a_canonical_results_notes_state_no_share_of_zero_or_endless(
    tmp_path: Path, notes: str
) -> None:
    record = ResultRecord(
        experiment=2,
        title="fused kernel",
        status=Status.KEPT,
        correctness=Correctness.PASS,
        date="2026-01-01",
        notes=notes,
    )
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, RESULT: render_result(record)})

    log = read_log(root, catalog=())

    experiment = log.experiment(2)
    assert experiment is not None
    assert "floor_pct" not in experiment.metrics
    assert any(
        w.startswith(f"{RESULT}: Expected floor_pct as a") and w.endswith("; not read")
        for w in log.warnings
    ), log.warnings


@pytest.mark.parametrize(
    "body",
    [
        "floor_pct: 0\n",
        "floor_pct: 1e400\n",
        "The kernel is at 0% of the floor.\n",
        "| Point | Of floor |\n|---|---|\n| b=32 | 0 |\n",
        "| Point | Of floor |\n|---|---|\n| b=32 | 1e400% |\n",
    ],
)
def test_a_profile_states_no_share_of_zero_or_endless(tmp_path: Path, body: str) -> None:
    profile = "## Profile: mla v2 | b=32\n" + body
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, PROFILE: profile})

    log = read_log(root, catalog=())

    assert log.profile is not None
    assert "floor_pct" not in log.profile.metrics
    experiment = log.experiment(2)
    assert experiment is None or "floor_pct" not in experiment.metrics
    assert any(
        w.startswith(PROFILE) and "floor" in w and w.endswith("; not read") for w in log.warnings
    ), log.warnings


def test_a_floor_pct_with_an_exponent_is_read_whole(tmp_path: Path) -> None:
    # "7.8e1" was read as its mantissa, 7.8.
    metrics, _, warnings = _read_result(tmp_path, "Measured floor_pct: 7.8e1 at b=32.\n")

    assert metrics["floor_pct"] == 78.0
    assert not any("floor" in w for w in warnings)


def test_an_endless_metric_of_another_name_is_not_read(tmp_path: Path) -> None:
    metrics, _, warnings = _read_result(tmp_path, "Measured dram_pct: 1e400 at b=32.\n")

    assert "dram_pct" not in metrics
    assert f"{RESULT}: Expected dram_pct as a finite number, got inf; not read" in warnings
