"""A log whose numbers all come from one experiment: the plan says that one experiment
reports a number and a gain needs two, not that no experiment reports one."""

from __future__ import annotations

from pathlib import Path

import attrs

from kernelopt.bench import Measurement, to_result_row, write_experiment
from kernelopt.diagnose import Diagnosis, Pathology, diagnose, diagnose_log
from kernelopt.experiments import Point, SourceRef
from kernelopt.experiments.records import Correctness, Status

from .conftest import FakeCatalog, exp, log_of

NO_NUMBER = "No experiment reports a comparable number (latency, speedup or throughput)"
LATENCY_COLUMN = (
    "measured latency or speedup per experiment (summary.md Latency column or result.md)"
)
SECOND = "a second experiment measuring the same number (a gain compares two)"


def _check(diagnosis: Diagnosis, pathology: Pathology) -> tuple[str, tuple[str, ...]]:
    check = next(c for c in diagnosis.checks if c.pathology is pathology)
    assert not check.checked
    return check.sentence, check.missing


def test_one_written_experiment_reports_its_latency(tmp_path: Path) -> None:
    # The log write_experiment makes for one measured version: summary.md holds 66.3 us.
    root = tmp_path / "onexp"
    row = to_result_row(
        Measurement(samples=[66.1, 66.5, 66.3], gpu="NVIDIA H200"),
        point="b=32 s=1 t=4096 h=16",
        impl="split_kv",
    )
    write_experiment(root, experiment=1, title="x", rows=[row], status="KEPT", correctness="PASS")
    diagnosis = diagnose(root)
    sentence, missing = _check(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence == (
        "Only exp 1 reports a latency (66.3 us): a gain needs the same number from two "
        "experiments, so none can be tracked yet."
    )
    assert missing == (SECOND,)
    loop, _ = _check(diagnosis, Pathology.REPETITION_LOOP)
    assert loop.startswith(
        "Only exp 1 reports a latency (66.3 us), and a gain needs the same number from two "
        "experiments, so none can be tracked yet; no attempt with a known outcome"
    )
    plan = diagnosis.render_plan()
    assert NO_NUMBER not in plan
    assert "Latency column" not in plan
    assert f"- {SECOND}" in plan.split("## Missing data", 1)[1]


def test_one_measured_experiment_beside_a_failed_one(fake_catalog: FakeCatalog) -> None:
    # The failed version measured nothing: exp 1's number is still the only one.
    experiments = [
        exp(1, 40.0),
        exp(2, None, status=Status.FAILED, correctness=Correctness.FAIL),
    ]
    diagnosis = diagnose_log(log_of(experiments), catalog=fake_catalog)
    sentence, missing = _check(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence.startswith("Only exp 1 reports a latency (40 us):")
    assert LATENCY_COLUMN not in missing
    loop, _ = _check(diagnosis, Pathology.REPETITION_LOOP)
    assert loop.startswith("Only exp 1 reports a latency (40 us), and a gain needs")
    assert "1 attempt with a known outcome" in loop


def test_one_experiment_with_two_kinds_of_number_names_both(fake_catalog: FakeCatalog) -> None:
    # Named regimes and no headline: one speedup and one latency, both of exp 1 alone.
    ref = SourceRef(path="experiments/summary.md", line=3)
    points = (
        Point(name="tiny", value=2.5, unit="x", kind="speedup", source=ref),
        Point(name="causal", value=12.0, unit="us", kind="latency", source=ref),
    )
    only = attrs.evolve(exp(1, None), points=points)
    diagnosis = diagnose_log(log_of([only]), catalog=fake_catalog)
    sentence, _ = _check(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence.startswith("Only exp 1 reports a speedup and a latency: a gain needs")


def test_no_experiment_keeps_its_words(fake_catalog: FakeCatalog) -> None:
    diagnosis = diagnose_log(log_of([]), catalog=fake_catalog)
    sentence, missing = _check(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence.startswith(NO_NUMBER)
    assert missing == (LATENCY_COLUMN,)


def test_experiments_each_with_a_number_of_its_own_keep_their_words(
    fake_catalog: FakeCatalog,
) -> None:
    # Two experiments, two different regimes: no number is reported twice, and no single
    # experiment is "the only one" to report one.
    ref = SourceRef(path="experiments/summary.md", line=3)
    experiments = [
        attrs.evolve(
            exp(n, None),
            points=(Point(name=name, value=1.5, unit="x", kind="speedup", source=ref),),
        )
        for n, name in ((1, "tiny"), (2, "causal"))
    ]
    diagnosis = diagnose_log(log_of(experiments), catalog=fake_catalog)
    sentence, missing = _check(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence.startswith(
        "No two experiments report the same metric at the same point (exp 1: a speedup at "
        "tiny; exp 2: a speedup at causal): a gain needs"
    )
    assert missing == (
        "two experiments measuring the same metric at the same point (a gain compares two)",
    )


def test_two_measured_experiments_keep_their_words(fake_catalog: FakeCatalog) -> None:
    diagnosis = diagnose_log(log_of([exp(1, 40.0), exp(2, 39.9)]), catalog=fake_catalog)
    sentence, missing = _check(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence == "2 attempts since the best last moved by 5% or more: no plateau (needs 5)."
    assert missing == ()
    loop, _ = _check(diagnosis, Pathology.REPETITION_LOOP)
    assert loop.startswith("2 attempts since the best last moved by 5% or more")
