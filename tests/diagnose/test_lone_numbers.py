"""Logs whose numbers are never reported twice: several experiments, each measuring a
metric at a point no other measured, say so (not that nobody reports a number), and a log
whose only measurement comes from one experiment still shows it in the plan's header."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.bench import Measurement, to_result_row, write_experiment
from kernelopt.diagnose import (
    Diagnosis,
    Pathology,
    diagnose,
    diagnosis_from_json,
    diagnosis_to_dict,
    diagnosis_to_json,
)

NO_NUMBER = "No experiment reports a comparable number"
SAME_TWICE = "two experiments measuring the same metric at the same point (a gain compares two)"
GAIN_NEEDS_TWO = "a gain needs the same number from two experiments, so none can be tracked yet"


def _regime_log(
    root: Path,
    regimes: Sequence[Sequence[tuple[str, float]]],
    statuses: Sequence[str] = (),
) -> Path:
    """A log of ``experiments/summary.md`` and one ``exp_N/result.md`` per experiment, each
    result a table of speedups per named regime (``regimes[N - 1]``)."""
    rows = "".join(
        f"| {n} | change {n} | PASS | {statuses[n - 1] if statuses else 'KEPT'} |\n"
        for n in range(1, len(regimes) + 1)
    )
    folder = root / "experiments"
    folder.mkdir(parents=True)
    (folder / "summary.md").write_text(
        "# Experiments Summary\n\n| Exp | Description | Correct | Status |\n|---|---|---|---|\n"
        + rows,
        encoding="utf-8",
    )
    for number, points in enumerate(regimes, start=1):
        table = "".join(f"| {name} | {value}x |\n" for name, value in points)
        (folder / f"exp_{number}").mkdir()
        (folder / f"exp_{number}" / "result.md").write_text(
            "# Result\n\nCorrectness: PASS\n\n| shape | speedup |\n|---|---|\n" + table,
            encoding="utf-8",
        )
    return root


def _check(diagnosis: Diagnosis, pathology: Pathology) -> tuple[str, tuple[str, ...]]:
    check = next(c for c in diagnosis.checks if c.pathology is pathology)
    assert not check.checked
    return check.sentence, check.missing


def _one_written_experiment(root: Path) -> Path:
    # The log write_experiment makes for one measured version: 66.3 us at one point.
    row = to_result_row(
        Measurement(samples=[66.1, 66.5, 66.3], gpu="NVIDIA H200"),
        point="b=32 s=1 t=4096 h=16",
        impl="split_kv",
    )
    write_experiment(root, experiment=1, title="x", rows=[row], status="KEPT", correctness="PASS")
    return root


def test_experiments_that_share_no_number_are_named_with_their_points(tmp_path: Path) -> None:
    root = _regime_log(
        tmp_path / "log",
        [[("tiny", 1.3)], [("causal", 1.2)], [("long_seq", 2.1), ("padded", 1.1)]],
    )
    diagnosis = diagnose(root)
    shown = "exp 1: a speedup at tiny; exp 2: a speedup at causal; exp 3: speedups at long_seq "
    shown += "and padded"
    sentence, missing = _check(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence == (
        f"No two experiments report the same metric at the same point ({shown}): {GAIN_NEEDS_TWO}."
    )
    assert missing == (SAME_TWICE,)
    loop, _ = _check(diagnosis, Pathology.REPETITION_LOOP)
    assert loop.startswith(
        f"No two experiments report the same metric at the same point ({shown}), so no best "
        "can be tracked yet; no attempt with a known outcome"
    )
    plan = diagnosis.render_plan()
    assert NO_NUMBER not in plan
    assert "Latency column" not in plan
    # Three experiments measured: none is the only measurement, and none is a best yet.
    assert "Only measurement so far" not in plan and "Best so far" not in plan
    assert diagnosis.summary.best is None


def test_many_experiments_and_points_are_cut(tmp_path: Path) -> None:
    regimes = [[(f"p{n}_{k}", 1.0 + k / 10) for k in range(1, 6 if n == 1 else 2)] for n in (1, 2)]
    regimes += [[(f"q{n}", 1.5)] for n in (3, 4, 5)]
    diagnosis = diagnose(_regime_log(tmp_path / "log", regimes, ["KEPT"] * 4 + ["REVERTED"]))
    sentence, _ = _check(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence.startswith(
        "No two experiments report the same metric at the same point (exp 1: speedups at "
        "p1_1, p1_2, p1_3, …; exp 2: a speedup at p2_1; exp 3: a speedup at q3; "
        "2 more experiments): "
    )
    loop, _ = _check(diagnosis, Pathology.REPETITION_LOOP)
    assert "; 1 attempt with a known outcome (reverted, neutral or failed)" in loop


def test_the_json_of_unshared_numbers_reads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _regime_log(tmp_path / "log", [[("tiny", 1.3)], [("causal", 1.2)]])
    assert cli.main(["diagnose", "--json", str(root)]) in (0, 1)
    out = capsys.readouterr().out
    data = json.loads(out)
    check = next(c for c in data["checks"] if c["pathology"] == "local_minimum")
    assert check["sentence"].startswith("No two experiments report the same metric")
    assert check["missing"] == [SAME_TWICE]
    assert data["summary"]["best"] is None
    assert diagnosis_from_json(out) == diagnose(root)


def test_one_measured_experiment_is_the_only_measurement_in_the_plan(tmp_path: Path) -> None:
    diagnosis = diagnose(_one_written_experiment(tmp_path / "onexp"))
    plan = diagnosis.render_plan()
    assert "Only measurement so far at b=32 s=1 t=4096 h=16: 66.3 us (exp 1)." in plan
    assert "Best so far" not in plan
    best = diagnosis.summary.best
    assert best is not None and best.only and best.experiment == 1
    # The checks still say a gain needs a second number: the header names no gain.
    sentence, _ = _check(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence.startswith("Only exp 1 reports a latency (66.3 us):")
    assert "New bests" not in plan


def test_one_experiment_of_named_regimes_shows_its_first(tmp_path: Path) -> None:
    root = _regime_log(tmp_path / "log", [[("tiny", 1.3), ("causal", 2.5)]])
    plan = diagnose(root).render_plan()
    assert "Only measurement so far at tiny: 1.3x (exp 1)." in plan


def test_a_reverted_only_measurement_is_no_best(tmp_path: Path) -> None:
    # A reverted change is not the kernel the next experiment starts from.
    root = _regime_log(tmp_path / "log", [[("tiny", 1.3)]], ["REVERTED"])
    diagnosis = diagnose(root)
    assert diagnosis.summary.best is None
    plan = diagnosis.render_plan()
    assert "Only measurement so far" not in plan and "Best so far" not in plan


def test_the_json_says_only_where_it_is_true(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _one_written_experiment(tmp_path / "onexp")
    assert cli.main(["diagnose", "--json", str(root)]) in (0, 1)
    out = capsys.readouterr().out
    best = json.loads(out)["summary"]["best"]
    assert best["only"] is True and best["value"] == 66.3
    assert best["point"] == "b=32 s=1 t=4096 h=16"
    assert diagnosis_from_json(out) == diagnose(root)
    # Two measurements: the best keeps the keys it always had, and reads back the same.
    two = _regime_log(tmp_path / "two", [[("tiny", 1.3)], [("tiny", 1.4)]])
    diagnosis = diagnose(two)
    data = diagnosis_to_dict(diagnosis)
    assert data["summary"]["best"] is not None and "only" not in data["summary"]["best"]
    assert diagnosis_from_json(diagnosis_to_json(diagnosis)) == diagnosis
    assert "Best so far at tiny: 1.4x (exp 2)." in diagnosis.render_plan()
