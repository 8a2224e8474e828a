"""A hand-written ``Verdict:`` line holding an A/B verdict is read as one, not as a status."""

from __future__ import annotations

from pathlib import Path

import kernelopt.experiments as experiments
from kernelopt.experiments import ABVerdict, DeclinedOption, Status, read_log


def _log(root: Path, verdict_line: str) -> Path:
    (root / "experiments" / "exp_1").mkdir(parents=True)
    (root / "experiments" / "exp_2").mkdir()
    (root / "experiments" / "exp_1" / "result.md").write_text(
        "# Exp 1: baseline\n\n- Status: BASELINE\n- Latency: 100 us\n", encoding="utf-8"
    )
    (root / "experiments" / "exp_2" / "result.md").write_text(
        f"# Exp 2: bigger tiles\n\n- Latency: 60 us\n- {verdict_line}\n", encoding="utf-8"
    )
    return root


def test_an_ab_verdict_naming_the_baseline_is_no_baseline_status(tmp_path: Path) -> None:
    # Its words "the baseline's time" once made experiment 2 a BASELINE, which diagnose
    # never contests.
    line = "Verdict: FAST 0.600x [0.590, 0.610] the baseline's time, speedup 1.667x"
    second = read_log(_log(tmp_path, line)).experiments[1]
    assert second.status is not Status.BASELINE
    assert (second.verdict, second.verdict_speedup) == (ABVerdict.FAST, 1.667)


def test_a_verdict_in_other_words_is_still_a_status(tmp_path: Path) -> None:
    second = read_log(_log(tmp_path, "Verdict: reverted, slower")).experiments[1]
    assert second.status is Status.REVERTED and second.verdict is None


def test_the_new_record_types_are_part_of_the_package() -> None:
    assert {"ABVerdict", "DeclinedOption"} <= set(experiments.__all__)
    assert DeclinedOption.__module__ == "kernelopt.experiments.log"
