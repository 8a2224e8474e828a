"""A second summary.md row of one experiment is written, and the writer says so."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from kernelopt.experiments import ResultRecord, append_summary, log_result, read_log
from kernelopt.experiments.canonical import RepeatedRowWarning


def _logged(tmp_path: Path) -> Path:
    root = tmp_path / "experiments"
    for number in (1, 2, 3):
        log_result(
            root,
            ResultRecord(experiment=number, title=f"e{number}", status="KEPT", correctness="PASS"),
        )
    return root


def _repeat(experiment: int = 2) -> ResultRecord:
    return ResultRecord(experiment=experiment, title="x", status="REVERTED", correctness="PASS")


def test_a_second_row_of_an_experiment_is_written_with_a_warning(tmp_path: Path) -> None:
    root = _logged(tmp_path)
    summary = root / "summary.md"
    with pytest.warns(RepeatedRowWarning) as caught:
        append_summary(root, _repeat())
    [warning] = caught
    message = str(warning.message)
    assert message.startswith(f"{summary}: experiment 2 already has a row (line 6); ")
    assert "the new row was written beside it at line 8" in message
    assert "Pass replace=True to write the row in place of the existing one." in message
    # The warning points at the caller's line, not at kernelopt's.
    assert warning.filename == __file__
    # Never lose a write: the row is there, where the warning says.
    lines = summary.read_text(encoding="utf-8").splitlines()
    assert re.match(r"^\| 2 \|.*\| x \|.*\| REVERTED \|", lines[7])
    assert re.match(r"^\| 2 \|.*\| e2 \|.*\| KEPT \|", lines[5])


def test_the_warning_is_a_user_warning_and_names_every_earlier_row(tmp_path: Path) -> None:
    root = _logged(tmp_path)
    with pytest.warns(RepeatedRowWarning):
        append_summary(root, _repeat())
    with pytest.warns(UserWarning, match=r"already has a row \(lines 6, 8\); .* at line 9, "):
        append_summary(root, _repeat())


def test_no_warning_for_a_new_experiment_or_a_replaced_row(tmp_path: Path) -> None:
    root = _logged(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        append_summary(root, _repeat(4))
        append_summary(root, _repeat(2), replace=True)
    text = (root / "summary.md").read_text(encoding="utf-8")
    assert len(re.findall(r"^\| 2 \|", text, flags=re.MULTILINE)) == 1


def test_the_repeated_row_is_still_read_as_the_same_experiment(tmp_path: Path) -> None:
    root = _logged(tmp_path)
    with pytest.warns(RepeatedRowWarning):
        append_summary(root, _repeat())
    log = read_log(tmp_path)
    assert [e.number for e in log.experiments] == [1, 2, 3]
    assert any("line 8 repeats exp 2 of line 6" in u.reason for u in log.unread)
