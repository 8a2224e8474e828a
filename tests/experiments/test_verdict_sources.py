"""A summary row and a result.md that disagree on an experiment's fate: the one that says
the change was dropped (or failed correctness) is used, and a warning names both."""

from __future__ import annotations

import shutil
from pathlib import Path

from kernelopt.diagnose import diagnose
from kernelopt.experiments import ResultRecord, read_log, write_result
from kernelopt.experiments.records import Correctness, Status

_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "logs" / "repetition-loop"

_SUMMARY = (
    "| Exp | Description | Latency | Unit | Correct | Status |\n|---|---|---|---|---|---|\n"
    "| 1 | baseline | 500 | us | PASS | BASELINE |\n"
    "| 2 | tiles | 400 | us | {correct} | {status} |\n"
)


def _result(status: str, correctness: str) -> str:
    return (
        f"# Experiment 2: tiles\n\nStatus: {status}\nCorrectness: {correctness}\n\n"
        "- Latency: 400 us\n"
    )


def _log(root: Path, summary: tuple[str, str], result: tuple[str, str]) -> Path:
    (root / "experiments/exp_2").mkdir(parents=True)
    correct, status = summary
    (root / "experiments/summary.md").write_text(
        _SUMMARY.format(status=status, correct=correct), encoding="utf-8"
    )
    (root / "experiments/exp_2/result.md").write_text(_result(*result), encoding="utf-8")
    return root


def test_a_result_that_reverts_what_the_summary_keeps_wins_with_a_warning(
    tmp_path: Path,
) -> None:
    log = read_log(_log(tmp_path, ("PASS", "KEPT"), ("REVERTED", "PASS")), catalog=())
    second = log.experiment(2)
    assert second is not None and second.status is Status.REVERTED and not second.kept
    assert log.warnings == (
        "exp 2: the status is KEPT in experiments/summary.md:4 but REVERTED in "
        "experiments/exp_2/result.md:3; REVERTED (experiments/exp_2/result.md:3) was used: "
        "a change either source says was dropped is not kept",
    )


def test_a_summary_that_reverts_what_the_result_keeps_wins_with_a_warning(
    tmp_path: Path,
) -> None:
    log = read_log(_log(tmp_path, ("PASS", "REVERTED"), ("KEPT", "PASS")), catalog=())
    second = log.experiment(2)
    assert second is not None and second.status is Status.REVERTED
    assert log.warnings == (
        "exp 2: the status is REVERTED in experiments/summary.md:4 but KEPT in "
        "experiments/exp_2/result.md:3; REVERTED (experiments/summary.md:4) was used: "
        "a change either source says was dropped is not kept",
    )


def test_a_failing_verdict_from_either_source_wins_with_a_warning(tmp_path: Path) -> None:
    log = read_log(_log(tmp_path, ("PASS", "KEPT"), ("KEPT", "FAIL")), catalog=())
    second = log.experiment(2)
    assert second is not None and second.correctness is Correctness.FAIL and not second.kept
    assert log.warnings == (
        "exp 2: the correctness is PASS in experiments/summary.md:4 but FAIL in "
        "experiments/exp_2/result.md:4; FAIL (experiments/exp_2/result.md:4) was used: "
        "a check either source says failed is not a pass",
    )


def test_sources_that_agree_or_leave_the_fate_unsaid_give_no_warning(tmp_path: Path) -> None:
    agreeing = read_log(_log(tmp_path / "a", ("PASS", "KEPT"), ("KEPT", "PASS")), catalog=())
    assert agreeing.warnings == ()
    # Two outcomes that both drop the change are one fate in other words: the first stands.
    dropped = read_log(_log(tmp_path / "b", ("PASS", "NEUTRAL"), ("REVERTED", "PASS")), catalog=())
    assert dropped.experiment(2).status is Status.NEUTRAL  # type: ignore[union-attr]
    assert dropped.warnings == ()
    # A canonical result's UNKNOWN states no verdict: it disagrees with none.
    root = _log(tmp_path / "c", ("FAIL", "KEPT"), ("KEPT", "PASS"))
    record = ResultRecord(experiment=2, title="tiles", status="KEPT", correctness="UNKNOWN")
    write_result(root / "experiments", record, overwrite=True)
    unknown = read_log(root, catalog=())
    assert unknown.experiment(2).correctness is Correctness.FAIL  # type: ignore[union-attr]
    assert unknown.warnings == ()


def test_the_diagnosis_of_a_result_that_failed_does_not_call_it_the_best(tmp_path: Path) -> None:
    root = tmp_path / "log"
    shutil.copytree(_EXAMPLE, root)
    result = root / "experiments/exp_3/result.md"
    text = result.read_text(encoding="utf-8")
    text = text.replace("Status: KEPT", "Status: REVERTED").replace(
        "Correctness: PASS", "Correctness: FAIL"
    )
    result.write_text(text, encoding="utf-8")
    diagnosis = diagnose(root)
    assert "Best so far: 72.4 us (exp 2)." in diagnosis.render_plan()
    assert any(
        w.startswith("exp 3: the status is KEPT in experiments/summary.md:7 but REVERTED in ")
        for w in diagnosis.warnings
    )
    assert any(
        w.startswith("exp 3: the correctness is PASS in experiments/summary.md:7 but FAIL in ")
        for w in diagnosis.warnings
    )


def test_a_verifier_that_refutes_a_kept_result_wins_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path
    (root / "experiments/exp_2").mkdir(parents=True)
    (root / "experiments/exp_2/result.md").write_text(_result("KEPT", "PASS"), encoding="utf-8")
    (root / "experiments/exp_2/verifier.md").write_text(
        "REFUTED\n\nThe speedup does not reproduce.\n", encoding="utf-8"
    )
    log = read_log(root, catalog=())
    second = log.experiment(2)
    assert second is not None and second.status is Status.REVERTED and not second.kept
    assert log.warnings == (
        "exp 2: the status is KEPT in experiments/exp_2/result.md:3 but REVERTED in "
        "experiments/exp_2/verifier.md:1; REVERTED (experiments/exp_2/verifier.md:1) was "
        "used: a change either source says was dropped is not kept",
    )
