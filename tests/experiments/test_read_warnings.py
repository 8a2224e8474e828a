"""What is read but may not be what the log meant is said: the log's warnings.

Two sources that disagree on a latency, two folders of one experiment, a number whose form
has no single sure reading (refused, not read as a prefix of it), and JSON no float or no
parser can hold (listed as unread, not a traceback).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt._errors import FormatError
from kernelopt.diagnose import diagnose
from kernelopt.diagnose.jsonio import diagnosis_from_dict, diagnosis_from_json
from kernelopt.experiments import read_log
from kernelopt.experiments.readers._values import latency_tokens, number, unclear_number

from ..conftest import write_files

_SUMMARY = (
    "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
    "| 1 | baseline | 500 | us | BASELINE |\n"
    "| 2 | tiles | {second} | us | KEPT |\n"
)


def _result(number: int, latency: str, status: str = "KEPT") -> str:
    return f"# Experiment {number}: change\n\nStatus: {status}\n\n- Latency: {latency}\n"


def test_a_latency_two_sources_disagree_on_is_a_warning(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _SUMMARY.format(second="400"),
            "experiments/exp_2/result.md": _result(2, "100.0 us"),
        },
    )
    log = read_log(root, catalog=())
    second = log.experiment(2)
    assert second is not None and second.latency == 400.0
    assert log.warnings == (
        "exp 2: the latency is 400 us in experiments/summary.md:4 but 100 us in "
        "experiments/exp_2/result.md:5; 400 us (experiments/summary.md:4) was used",
    )
    # The same time in another unit, or rounded, is no disagreement.
    for same in ("0.4 ms", "401.5 us"):
        (root / "experiments/exp_2/result.md").write_text(_result(2, same), encoding="utf-8")
        assert read_log(root, catalog=()).warnings == ()


def test_two_folders_of_one_experiment_are_a_warning(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/exp_1/result.md": _result(1, "100.0 us", "BASELINE"),
            "experiments/exp_2/result.md": _result(2, "90.0 us"),
            "experiments/exp_002/result.md": _result(2, "90.1 us", "REVERTED"),
        },
    )
    log = read_log(root, catalog=())
    assert [e.number for e in log.experiments] == [1, 2]
    assert log.warnings == (
        "exp 2: the folders experiments/exp_002/ and experiments/exp_2/ both hold experiment "
        "2; they were read as one experiment, experiments/exp_002/ first (its values win "
        "where two give one, unless the other says the change was dropped or failed)",
        "exp 2: the status is REVERTED in experiments/exp_002/result.md:3 but KEPT in "
        "experiments/exp_2/result.md:3; REVERTED (experiments/exp_002/result.md:3) was used: "
        "a change either source says was dropped is not kept",
    )
    # A cut before the experiment does not read either folder: nothing to say.
    assert read_log(root, catalog=(), until=2).warnings == ()


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.234,5", None),
        ("1 234,5", None),
        ("10 000", None),
        ("1_000", None),
        ("1'000", None),
        ("0x10", None),
        ("1,2,3", None),
        ("1.2.3", None),
        ("0,075 ms", 0.075),
        ("3,5", 3.5),
        ("1,024", 1024.0),
        ("1,234.5", 1234.5),
        ("1,23,456", 123456.0),
        ("~5.47 us", 5.47),
        ("12 34", 12.0),
        ("0.5 100", 0.5),
        ("2026-04-22", 2026.0),
    ],
)
def test_a_number_form_without_one_reading_is_refused(text: str, value: float | None) -> None:
    assert number(text) == value
    assert (unclear_number(text) is not None) is (value is None)


def test_numbers_in_prose_read_their_commas_as_a_whole() -> None:
    def read(text: str) -> list[tuple[float, str]]:
        return [(q.value, q.unit) for q in latency_tokens(text)]

    assert read("took 0,075 ms") == [(0.075, "ms")]
    assert read("took 1,024 us") == [(1024.0, "us")]
    assert read("took 1.234,5 us, then 1 234,5 us") == []  # not 5 us, not 234.5 us
    assert read("exp 3 12 us") == [(12.0, "us")]


def test_a_refused_number_is_a_warning_with_its_line(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _SUMMARY.format(second="1.234,5")
            + "| 3 | stages | 0,075 | ms | KEPT |\n| 4 | warps | 0x10 | us | KEPT |\n"
        },
    )
    log = read_log(root, catalog=())
    assert [e.latency for e in log.experiments] == [500.0, None, 0.075, None]
    assert log.warnings == (
        "experiments/summary.md:4: Expected a number such as 1234.5, 1,234.5 or 0,075, got "
        "'1.234,5'; not read",
        "experiments/summary.md:6: Expected a number such as 1234.5, 1,234.5 or 0,075, got "
        "'0x10'; not read",
    )


def test_the_plan_and_its_json_carry_the_warnings(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _SUMMARY.format(second="1_000")
            + "| 3 | stages | 450 | us | KEPT |\n"
        },
    )
    diagnosis = diagnose(root)
    (warning,) = diagnosis.warnings
    assert "'1_000'; not read" in warning
    assert f"## Warnings\n\n- {warning}\n" in diagnosis.render_plan()
    data = diagnosis.to_dict()
    assert data["warnings"] == [warning]
    assert diagnosis_from_json(diagnosis.to_json()) == diagnosis
    del data["warnings"]  # written before warnings existed: still a diagnosis
    assert diagnosis_from_dict(data).warnings == ()


def test_json_no_float_can_hold_is_unread_not_a_traceback(tmp_path: Path) -> None:
    huge = "1" + "0" * 400
    lines = [
        '{"exp": 1, "latency_us": 500}',
        f'{{"exp": 2, "latency_us": {huge}}}',
        '{"exp": 3, "latency_us": 1e400}',
        '{"exp": 4, "latency_us": NaN, "status": "FAIL"}',
        '{"exp": 5, "latency_us": 450, "speedup": ' + huge + "}",
        '{"exp": 6, "latency_us": 440}',
    ]
    write_files(tmp_path, {"history.jsonl": "\n".join(lines) + "\n"})
    log = read_log(tmp_path, catalog=())
    assert [e.latency for e in log.experiments] == [500.0, None, 440.0]
    (unread,) = log.unread
    assert unread.path == "history.jsonl"
    assert unread.reason == (
        "line 2: Expected latency_us within the float range, got 401 digits (and 2 more); skipped"
    )


def test_json_nested_too_deep_is_unread_not_a_traceback(tmp_path: Path) -> None:
    deep = "[" * 10_000 + "]" * 10_000
    write_files(
        tmp_path,
        {
            "experiments/history.json": deep,
            "runs/history.jsonl": deep + "\n" + json.dumps({"exp": 1, "latency_us": 5}) + "\n",
        },
    )
    log = read_log(tmp_path, catalog=())
    reasons = {u.path: u.reason for u in log.unread}
    assert reasons["experiments/history.json"].startswith(
        "not valid JSON (ValueError: Expected JSON nested less deeply"
    )
    assert reasons["runs/history.jsonl"] == "1 line is not JSON; skipped"
    assert [e.latency for e in log.experiments] == [5.0]
    with pytest.raises(FormatError, match="Expected JSON nested less deeply"):
        diagnosis_from_json(deep)
