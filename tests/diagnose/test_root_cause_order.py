"""The most likely root cause is the most severe cause, whatever its kind; symptoms come
after every cause, and a correctness wall is still named alone."""

from __future__ import annotations

import shutil
from pathlib import Path

from kernelopt.catalog import Catalog
from kernelopt.diagnose import Diagnosis, Pathology, Severity, diagnose_log
from kernelopt.experiments import ExperimentLog, Fact, SourceRef
from kernelopt.experiments.records import Correctness, Status

from .conftest import UNRELATED_TITLES, exp, kernel, log_of

_PROFILE = SourceRef(path="experiments/profile.md", line=1)

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "examples/logs/mla-decode-plateau/experiments/workload_profile.md"
# A decode kernel that loops over the query tokens and never tests for one of them.
DECODE = "def mla(q, kv):\n    b, s_q, h, d = q.shape\n    for i in range(s_q):\n        pass\n"


def _with_shortcut(tmp_path: Path, experiments: list[object]) -> ExperimentLog:
    """A log of ``experiments`` whose workload profile shows s_q = 1 in every call."""
    (tmp_path / "experiments").mkdir()
    shutil.copy(PROFILE, tmp_path / "experiments" / "workload_profile.md")
    return log_of(
        experiments,  # type: ignore[arg-type]
        root=str(tmp_path),
        workload_profile="experiments/workload_profile.md",
        kernels=(kernel(DECODE),),
    )


def _severity(diagnosis: Diagnosis, pathology: Pathology) -> Severity:
    found = diagnosis.finding(pathology)
    assert found is not None, [f.pathology for f in diagnosis.findings]
    return found.severity


def test_a_high_shortcut_comes_before_a_medium_bottleneck(tmp_path: Path, catalog: Catalog) -> None:
    # No profiling data: a MEDIUM wrong bottleneck; s_q = 1 in every call: a HIGH shortcut.
    log = _with_shortcut(tmp_path, [exp(1, 5.0), exp(2, 4.0), exp(3, 3.5)])
    diagnosis = diagnose_log(log, catalog=catalog)

    assert _severity(diagnosis, Pathology.OVERLOOKED_SHORTCUT) is Severity.HIGH
    assert _severity(diagnosis, Pathology.WRONG_BOTTLENECK) is Severity.MEDIUM
    first, second = diagnosis.root_causes
    assert first.startswith("Overlooked shortcut: ")
    assert second.startswith("Wrong bottleneck: ")
    # The ranked findings and the root causes agree on what comes first.
    assert diagnosis.findings[0].pathology is Pathology.OVERLOOKED_SHORTCUT


def test_a_high_symptom_never_comes_before_a_medium_cause(catalog: Catalog) -> None:
    # Ten attempts that gain nothing: a HIGH local minimum; no profiling data: a MEDIUM
    # wrong bottleneck. The plateau is what the blind tuning looks like, not its cause.
    titles = [*UNRELATED_TITLES, "tweak constants", "reorder stores", "drop a branch", "retry"]
    stalled = [
        exp(n, 5.0 - 0.001 * n, description=title) for n, title in enumerate(titles[:10], start=2)
    ]
    diagnosis = diagnose_log(log_of([exp(1, 5.0), *stalled]), catalog=catalog)

    assert _severity(diagnosis, Pathology.LOCAL_MINIMUM) is Severity.HIGH
    assert _severity(diagnosis, Pathology.WRONG_BOTTLENECK) is Severity.MEDIUM
    assert diagnosis.root_causes[0].startswith("Wrong bottleneck: ")
    assert diagnosis.root_causes[-1].startswith("The plateau (exps ")
    assert not any(s.startswith("Local minimum: ") for s in diagnosis.root_causes)


def test_of_symptoms_alone_the_most_severe_is_named(catalog: Catalog) -> None:
    # Six reverted num_stages tries after a kept kernel, with a profile: a HIGH repetition
    # loop and a MEDIUM local minimum, and no cause. The loop names the lever being
    # repeated; the plateau says only that nothing moved.
    profile_text = "memory-bound: 80% of DRAM bandwidth (ncu)"
    tries = [
        exp(
            n,
            72.0 + n / 10,
            status=Status.REVERTED,
            description=f"num_stages={stages}",
            knobs={"num_stages": str(stages)},
            text=profile_text,
        )
        for n, stages in zip(range(3, 9), (3, 4, 3, 4, 5, 2), strict=True)
    ]
    experiments = [exp(1, 116.4, status=Status.BASELINE), exp(2, 68.6), *tries]
    diagnosis = diagnose_log(
        log_of(experiments, profiling=(Fact(text=profile_text, source=_PROFILE),)),
        catalog=catalog,
    )

    assert _severity(diagnosis, Pathology.REPETITION_LOOP) is Severity.HIGH
    assert _severity(diagnosis, Pathology.LOCAL_MINIMUM) is Severity.MEDIUM
    assert {f.pathology for f in diagnosis.findings} == {
        Pathology.REPETITION_LOOP,
        Pathology.LOCAL_MINIMUM,
    }
    assert len(diagnosis.root_causes) == 1
    assert diagnosis.root_causes[0].startswith("Repetition loop: ")


def test_a_correctness_wall_is_still_named_alone(tmp_path: Path, catalog: Catalog) -> None:
    # Three wrong attempts in a row beside a HIGH shortcut: wrong results come first.
    failing = [exp(n, 3.0, status=Status.REVERTED, correctness=Correctness.FAIL) for n in (3, 4, 5)]
    log = _with_shortcut(tmp_path, [exp(1, 5.0), exp(2, 4.0), *failing])
    diagnosis = diagnose_log(log, catalog=catalog)

    assert _severity(diagnosis, Pathology.CORRECTNESS_WALL) is Severity.HIGH
    assert _severity(diagnosis, Pathology.OVERLOOKED_SHORTCUT) is Severity.HIGH
    assert len(diagnosis.root_causes) == 1
    assert diagnosis.root_causes[0].startswith("Correctness wall: ")
