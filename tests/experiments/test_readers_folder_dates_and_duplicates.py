"""A folder named by a date written with underscores (``exp_2026_05_26/``) or run together
(``exp_20260526/``) is no experiment's and is named in the unread list, as
``exp_2026-05-26/`` is; and an ``exp_N/`` folder's experiment stays the log's own when a
loose note says the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import ExperimentLog, read_log
from kernelopt.experiments.readers.seed import folder_number

from ..conftest import write_files

_RESULT = "# Experiment 1: Retile the KV loop\n\n- Latency: 97 us\n- Status: KEPT\n"


def _log(root: Path, files: dict[str, str]) -> ExperimentLog:
    return read_log(write_files(root, files), catalog=())


def _dated_reason(name: str) -> str:
    return (
        f"Expected a folder named exp_N (N a number of up to five digits), got {name} "
        "(a date numbers no experiment); not read as an experiment"
    )


# --- 1. a date written with underscores --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "number"),
    [
        ("exp_2026_05_26", None),
        ("exp_2026_05_26_retile", None),
        ("exp_2026_05_26-retile", None),
        ("Step_2026_12_01", None),
        ("exp2026_01_31", None),
        # No plausible date: a month past 12, a day past 31, a year of other than four
        # digits, a part of one digit, or more digits after the day.
        ("exp_2026_13_26", 2026),
        ("exp_2026_05_32", 2026),
        ("exp_2026_5_26", 2026),
        ("exp_202_05_26", 202),
        ("exp_12026_05_26", 12026),
        ("exp_2026_05_261", 2026),
        ("exp_2026_00_26", 2026),
        ("exp_2026_05_00", 2026),
        # A number with words or a second number after it stays the experiment it names.
        ("exp_12_tiles", 12),
        ("exp_7_2", 7),
        ("exp_7_02_03", 7),
        ("exp_2026_05", 2026),
        ("exp_7_2026_05_26", 7),
        ("exp_2026", 2026),
    ],
)
def test_a_number_then_an_underscored_month_and_day_is_a_date(
    name: str, number: int | None
) -> None:
    assert folder_number(name) == number


def test_an_underscore_dated_folder_is_no_experiment_and_is_named_in_the_unread(
    tmp_path: Path,
) -> None:
    result = "# Exp 2026: retile the KV loop\n\n- Latency: 97 us\n- Status: KEPT\n"
    log = _log(tmp_path, {"experiments/exp_2026_05_26/result.md": result})
    assert log.experiment(2026) is None
    reasons = {u.path: u.reason for u in log.unread}
    assert reasons == {"experiments/exp_2026_05_26": _dated_reason("exp_2026_05_26")}


def test_an_underscore_dated_folder_does_not_clash_with_its_year(tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        {
            "experiments/exp_2026/result.md": "# Exp 2026: retile\n\n- Latency: 97 us\n",
            "experiments/exp_2026_05_26/result.md": "# Split the KV sequence\n\n- Latency: 95 us\n",
        },
    )
    experiment = log.experiment(2026)
    assert experiment is not None and experiment.latency == 97
    assert not [w for w in log.warnings if "hold experiment" in w]
    assert [u.path for u in log.unread] == ["experiments/exp_2026_05_26"]


def test_a_folder_of_an_experiment_with_words_after_its_number_is_still_read(
    tmp_path: Path,
) -> None:
    log = _log(
        tmp_path,
        {
            "experiments/exp_12_tiles/result.md": "# Exp 12: tiles\n\n- Latency: 80 us\n",
            "experiments/exp_7_2/result.md": "# Exp 7: second try\n\n- Latency: 90 us\n",
        },
    )
    assert [(e.number, e.label) for e in log.experiments] == [(7, "exp_7_2"), (12, "exp_12_tiles")]
    assert log.unread == ()


# --- 2. a date run together ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["exp_20260526", "exp-20261231-retile", "step_20260101_b", "EXP20260412"]
)
def test_a_run_of_eight_digits_that_reads_as_a_date_is_named_in_the_unread(
    tmp_path: Path, name: str
) -> None:
    log = _log(tmp_path, {f"experiments/{name}/result.md": _RESULT})
    assert folder_number(name) is None
    assert log.experiment(20260526) is None
    assert {u.path: u.reason for u in log.unread} == {f"experiments/{name}": _dated_reason(name)}


@pytest.mark.parametrize(
    "name",
    [
        "exp_123456",  # six digits: no date, and no number the readers take
        "exp_1234567",
        "exp_20261326",  # month 13
        "exp_20260532",  # day 32
        "exp_202605261",  # nine digits
    ],
)
def test_other_long_digit_runs_stay_unnamed(tmp_path: Path, name: str) -> None:
    log = _log(tmp_path, {f"experiments/{name}/notes.md": "Some notes.\n"})
    assert folder_number(name) is None
    assert log.unread == ()


def test_a_five_digit_number_is_still_an_experiment(tmp_path: Path) -> None:
    log = _log(tmp_path, {"experiments/exp_20260/result.md": "# Exp 20260\n\n- Latency: 9 us\n"})
    experiment = log.experiment(20260)
    assert experiment is not None and experiment.latency == 9
    assert log.unread == ()


# --- 3. a loose note that repeats an experiment folder's result ----------------------------------


@pytest.mark.parametrize("note", ["notes/x.md", "experiments/x.md", "a.md"])
def test_a_loose_note_equal_to_a_folder_result_does_not_replace_the_experiment(
    tmp_path: Path, note: str
) -> None:
    log = _log(tmp_path, {"experiments/exp_1/result.md": _RESULT, note: _RESULT})
    # The folder's experiment is the log's, read from its own result.md ...
    assert [(e.number, e.label) for e in log.experiments] == [(1, "exp_1")]
    assert [str(ref) for ref in log.experiments[0].sources] == ["experiments/exp_1/result.md:1"]
    # ... and the note stays a note, in its own series.
    notes = [s for s in log.series if s.kind == "notes"]
    assert [[str(ref) for ref in e.sources] for s in notes for e in s.experiments] == [
        [f"{note}:1"]
    ]


def test_loose_notes_as_many_as_the_folders_do_not_replace_them(tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        {
            "experiments/exp_1/result.md": _RESULT,
            "experiments/exp_2/result.md": "# Experiment 2: Split KV\n\n- Latency: 90 us\n",
            "notes/a.md": "# Experiment: fuse the softmax\n\n- Latency: 50 us\n- Status: KEPT\n",
            "notes/b.md": "# Experiment: wider tiles\n\n- Latency: 40 us\n- Status: KEPT\n",
        },
    )
    assert [(e.number, e.label, e.latency) for e in log.experiments] == [
        (1, "exp_1", 97.0),
        (2, "exp_2", 90.0),
    ]


def test_more_loose_notes_than_folders_are_still_the_primary_series(tmp_path: Path) -> None:
    # The rule that picks the primary series is unchanged where the series differ: the
    # one with the most attempted experiments.
    log = _log(
        tmp_path,
        {
            "experiments/exp_1/result.md": _RESULT,
            "notes/a.md": "# Experiment: fuse the softmax\n\n- Latency: 50 us\n- Status: KEPT\n",
            "notes/b.md": "# Experiment: wider tiles\n\n- Latency: 40 us\n- Status: KEPT\n",
        },
    )
    assert [e.label for e in log.experiments] == ["a", "b"]
