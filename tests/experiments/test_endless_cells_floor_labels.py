"""Table cells the readers cannot take are said, and a floor row is called by what it is.

A number too large for a float (``1e999``) in a summary, result or Of-floor cell is named
with its file and line, as a number of no sure reading (``1_000``) is, instead of going
missing unsaid. A hand-written floor table whose first column is no name column (``| Floor
| Time | Bound |``) calls its row by its time, never by its floor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.diagnose.floors import floors_of
from kernelopt.experiments import Experiment, read_log
from kernelopt.experiments.readers._values import endless_number, number_at

from ..conftest import write_files

SUMMARY = "experiments/summary.md"
RESULT = "experiments/exp_2/result.md"
LONG = "1" + "0" * 400


def _summary(latency: str, speedup: str = "1.00") -> str:
    return (
        "# Experiments Summary\n\n"
        "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status |\n"
        "|---|---|---|---|---|---|---|---|\n"
        "| 1 | 2026-12-02 | eager baseline | 100.0 | us | 1.00 | PASS | BASELINE |\n"
        f"| 2 | 2026-12-02 | fused kernel | {latency} | us | {speedup} | PASS | KEPT |\n"
    )


def _experiment(root: Path, number: int) -> Experiment:
    experiment = read_log(root, catalog=()).experiment(number)
    assert experiment is not None
    return experiment


# --- a number too large for a float ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("1e999", "1e999"),
        ("-1e400", "-1e400"),
        ("1e999 us", "1e999"),
        ("**1e999**", "1e999"),
        ("`1e999`", "1e999"),
        ("~1,000e999", "1,000e999"),
        (LONG, LONG[:40]),
    ],
)
def test_a_number_too_large_for_a_float_is_named_not_read(text: str, shown: str) -> None:
    warnings: list[str] = []

    assert number_at(text, "experiments/summary.md:9", warnings) is None
    said = f"experiments/summary.md:9: Expected a finite number, got {shown}; not read"
    assert warnings == [said]
    assert endless_number(text) == shown


@pytest.mark.parametrize("text", ["1e300", "12.5 us", "", "n/a", "1_000", "1.234,5", "0x10"])
def test_a_finite_or_unclear_number_is_no_endless_one(text: str) -> None:
    assert endless_number(text) is None


def test_an_unclear_number_is_named_once_however_large() -> None:
    warnings: list[str] = []

    assert number_at("1e999_000", "s.md:3", warnings) is None
    assert warnings == [
        "s.md:3: Expected a number such as 1234.5, 1,234.5 or 0,075, got '1e999_000'; not read"
    ]


def test_a_caller_that_names_an_endless_number_itself_gets_no_second_warning() -> None:
    warnings: list[str] = []

    assert number_at("1e999", "s.md:3", warnings, finite=None) is None
    assert warnings == []


@pytest.mark.parametrize(
    ("latency", "speedup", "shown"),
    [("1e999", "1.00", "1e999"), ("1e999 us", "1.00", "1e999"), ("50.0", "1e999", "1e999")],
)
def test_a_summary_cell_too_large_for_a_float_is_named_with_its_line(
    tmp_path: Path, latency: str, speedup: str, shown: str
) -> None:
    root = write_files(tmp_path, {SUMMARY: _summary(latency, speedup)})

    log = read_log(root, catalog=())

    assert f"{SUMMARY}:6: Expected a finite number, got {shown}; not read" in log.warnings


def test_an_endless_summary_cell_is_said_as_the_unclear_ones_are(tmp_path: Path) -> None:
    unclear = read_log(write_files(tmp_path / "a", {SUMMARY: _summary("1_000")}), catalog=())
    endless = read_log(write_files(tmp_path / "b", {SUMMARY: _summary("1e999")}), catalog=())

    (said_unclear,) = [w for w in unclear.warnings if w.startswith(f"{SUMMARY}:6:")]
    (said_endless,) = [w for w in endless.warnings if w.startswith(f"{SUMMARY}:6:")]
    assert said_unclear.endswith("; not read")
    assert said_endless.endswith("; not read")
    for log in (unclear, endless):
        experiment = log.experiment(2)
        assert experiment is not None
        assert experiment.latency is None


def test_a_result_table_cell_too_large_for_a_float_is_named_with_its_line(
    tmp_path: Path,
) -> None:
    result = (
        "# Experiment 2: fused kernel\n\nStatus: KEPT\n\n## Result\n\n"
        "| Shape | Latency (us) |\n|---|---|\n| b=32 | 1e999 |\n| b=1 | 50 |\n"
    )
    root = write_files(tmp_path, {SUMMARY: _summary("50.0"), RESULT: result})

    log = read_log(root, catalog=())

    assert f"{RESULT}:9: Expected a finite number, got 1e999; not read" in log.warnings


def test_a_metric_cell_too_large_for_a_float_is_named_with_its_line(tmp_path: Path) -> None:
    result = (
        "# Experiment 2: fused kernel\n\nStatus: KEPT\n\n## Result\n\n"
        "| Shape | Latency (us) | DRAM % |\n|---|---|---|\n| b=32 | 50 | 1e400 |\n"
    )
    root = write_files(tmp_path, {SUMMARY: _summary("50.0"), RESULT: result})

    log = read_log(root, catalog=())

    assert f"{RESULT}:9: Expected a finite number, got 1e400; not read" in log.warnings
    assert "dram_pct" not in _experiment(root, 2).metrics


def test_an_endless_of_floor_cell_is_named_once_in_its_own_words(tmp_path: Path) -> None:
    result = (
        "# Experiment 2: fused kernel\n\nStatus: KEPT\n\n## Result\n\n"
        "| Point | Of floor |\n|---|---|\n| b=32 | 1e400 % |\n"
    )
    root = write_files(tmp_path, {SUMMARY: _summary("50.0"), RESULT: result})

    log = read_log(root, catalog=())

    said = [w for w in log.warnings if w.startswith(f"{RESULT}:9:")]
    assert said == [f"{RESULT}:9: Expected Of floor as a finite share, got 1e400 %; not read"]


def test_diagnose_shows_an_endless_cell_and_exits_as_with_a_plain_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = write_files(tmp_path / "plain", {SUMMARY: _summary("100.0")})
    endless = write_files(tmp_path / "endless", {SUMMARY: _summary("1e999")})

    plain_code = cli.main(["diagnose", str(plain)])
    capsys.readouterr()
    endless_code = cli.main(["diagnose", str(endless)])
    shown = capsys.readouterr().out

    assert endless_code == plain_code
    assert f"- {SUMMARY}:6: Expected a finite number, got 1e999; not read" in shown


# --- a floor row's label -----------------------------------------------------------------


def _floor_text(tmp_path: Path, table: str) -> str:
    result = f"# Experiment 2: fused kernel\n\nStatus: KEPT\n\n## Result\n\n{table}"
    root = write_files(tmp_path, {SUMMARY: _summary("49.8"), RESULT: result})
    (reading,) = floors_of(_experiment(root, 2))
    return reading.text()


@pytest.mark.parametrize(
    ("table", "text"),
    [
        (
            "| Floor | Time | Bound |\n|---|---|---|\n| 40 us | 49.8 us | memory |\n",
            "exp 2: 49.8 us at 80.3% of its roofline floor (40 us, set by memory)",
        ),
        (
            "| Floor | Time |\n|---|---|\n| 40 us | 49.8 us |\n",
            "exp 2: 49.8 us at 80.3% of its roofline floor (40 us)",
        ),
        (
            "| Floor (us) | Time (us) |\n|---|---|\n| 40 | 49.8 |\n",
            "exp 2: 49.8 us at 80.3% of its roofline floor (40 us)",
        ),
        (
            "| Unit | Floor | Median |\n|---|---|---|\n| us | 40 | 49.8 |\n",
            "exp 2: 49.8 us at 80.3% of its roofline floor (40 us)",
        ),
        (
            "| Of floor | Time |\n|---|---|\n| 80.3% | 49.8 us |\n",
            "exp 2: 49.8 us at 80.3% of its roofline floor",
        ),
        (
            "| DRAM % | Floor (us) | Time (us) |\n|---|---|---|\n| 85 | 40 | 49.8 |\n",
            "exp 2: 49.8 us at 80.3% of its roofline floor (40 us)",
        ),
    ],
)
def test_a_floor_row_without_a_name_column_is_called_by_its_time(
    tmp_path: Path, table: str, text: str
) -> None:
    assert _floor_text(tmp_path, table) == text


def test_a_floor_row_without_a_name_or_a_time_is_called_the_kernel(tmp_path: Path) -> None:
    table = "| Floor (us) | Of floor |\n|---|---|\n| 40 | 80.3% |\n"

    text = "exp 2: the kernel at 80.3% of its roofline floor (40 us)"
    assert _floor_text(tmp_path, table) == text


@pytest.mark.parametrize(
    ("table", "text"),
    [
        (
            "| Shape | Floor (us) | Time (us) |\n|---|---|---|\n| b=32 | 40 | 49.8 |\n",
            "exp 2: b=32 at 80.3% of its roofline floor (40 us)",
        ),
        (
            "| Config | Floor (us) | Time (us) |\n|---|---|---|\n|  | 40 | 49.8 |\n",
            "exp 2: 49.8 us at 80.3% of its roofline floor (40 us)",
        ),
    ],
)
def test_a_floor_row_with_a_name_column_keeps_its_name(
    tmp_path: Path, table: str, text: str
) -> None:
    assert _floor_text(tmp_path, table) == text
