"""The Not read line of a repeated summary row says what was used of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import ResultRecord, append_summary, log_result, read_log
from kernelopt.experiments.canonical import RepeatedRowWarning


def test_a_repeated_row_whose_status_was_used_is_named_so(tmp_path: Path) -> None:
    root = tmp_path / "experiments"
    for number in (1, 2, 3):
        log_result(
            root,
            ResultRecord(experiment=number, title=f"e{number}", status="KEPT", correctness="PASS"),
        )
    with pytest.warns(RepeatedRowWarning):
        append_summary(
            root, ResultRecord(experiment=2, title="x", status="REVERTED", correctness="PASS")
        )
    log = read_log(tmp_path)
    [repeat] = [u for u in log.unread if "repeats" in u.reason]
    # It said "only the first row's values were read" while the status came from line 8.
    assert repeat.reason == (
        "line 8 repeats exp 2 of line 6: its status REVERTED was used; its other values were "
        "not read"
    )
    [exp2] = [e for e in log.experiments if e.number == 2]
    assert exp2.status.value == "REVERTED" and exp2.description == "e2"
