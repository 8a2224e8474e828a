"""What the plan says about a log must be what the log holds: counts, gains and the
experiments a comparison could not use."""

from __future__ import annotations

from pathlib import Path

import attrs

from kernelopt.diagnose import Pathology, diagnose, diagnose_log
from kernelopt.experiments import Experiment, Fact, Point, SourceRef
from kernelopt.experiments.records import Correctness, Status

from .conftest import FakeCatalog, exp, log_of


def _sentence(diagnosis: object, pathology: Pathology) -> str:
    return next(c for c in diagnosis.checks if c.pathology is pathology).sentence  # type: ignore[attr-defined]


def test_a_log_without_numbers_has_no_best_to_count_attempts_from(
    fake_catalog: FakeCatalog,
) -> None:
    # Notes with no comparable number, one of which failed: there is no best, so "1 attempt
    # since the best last moved" would count from a best the log never had.
    notes = [
        exp(n, None, status=None, correctness=Correctness.UNKNOWN, description=f"note {n}")
        for n in range(1, 7)
    ]
    notes[1] = exp(2, None, status=Status.FAILED, correctness=Correctness.FAIL)
    diagnosis = diagnose_log(log_of(notes), catalog=fake_catalog)
    sentence = _sentence(diagnosis, Pathology.REPETITION_LOOP)
    assert not _checked(diagnosis, Pathology.REPETITION_LOOP)
    assert "since the best last moved" not in sentence
    assert "No experiment reports a comparable number" in sentence
    assert "1 attempt with a known outcome" in sentence


def _checked(diagnosis: object, pathology: Pathology) -> bool:
    return next(c for c in diagnosis.checks if c.pathology is pathology).checked  # type: ignore[attr-defined]


def test_the_new_bests_line_says_it_shows_only_the_latest(fake_catalog: FakeCatalog) -> None:
    # Eight new bests, each 10% faster: the header shows six of them and must say so, or
    # exp 3 reads as the first gain of the effort.
    steps = [exp(1, 100.0, status=Status.BASELINE)]
    steps += [exp(n, 100.0 * 0.9 ** (n - 1)) for n in range(2, 10)]
    plan = diagnose_log(log_of(steps), catalog=fake_catalog).render_plan()
    line = next(text for text in plan.splitlines() if text.startswith("New bests"))
    assert line.startswith("New bests (the latest 6 of 8): exp 4 +10.0%, exp 5 +10.0%")
    few = diagnose_log(log_of(steps[:4]), catalog=fake_catalog).render_plan()
    assert "New bests: exp 2 +10.0%, exp 3 +10.0%, exp 4 +10.0%;" in few


def _at(experiment: Experiment, point: str) -> Experiment:
    return attrs.evolve(experiment, headline_point=point)


def test_a_headline_without_its_trial_point_is_named_not_dropped_silently(
    fake_catalog: FakeCatalog,
) -> None:
    # Headlines compared point by point; the latest names no point (its record lost it),
    # so it is compared with nothing: a 2x faster kernel would leave the verdicts unmoved.
    steps = [
        _at(exp(1, 100.0, status=Status.BASELINE), "h=128"),
        _at(exp(2, 80.0), "h=128"),
        _at(exp(3, 60.0), "h=16"),
        _at(exp(4, 59.0, status=Status.REVERTED), "h=16"),
        exp(5, 30.0),
    ]
    diagnosis = diagnose_log(log_of(steps), catalog=fake_catalog)
    assert diagnosis.warnings == (
        "exp 5: its headline (30 us) names no trial point, while the log compares headlines "
        "point by point (h=128, h=16); it was compared with nothing (no gain, no new best)",
    )
    assert "## Warnings" in diagnosis.render_plan()
    # Where every headline names its point (or none does), there is nothing to warn about.
    named = diagnose_log(log_of([*steps[:4], _at(exp(5, 30.0), "h=16")]), catalog=fake_catalog)
    assert named.warnings == ()
    assert diagnose_log(log_of(PLAIN), catalog=fake_catalog).warnings == ()


PLAIN = [exp(1, 100.0, status=Status.BASELINE), exp(2, 90.0), exp(3, 85.0)]


def test_a_loop_says_when_it_lists_only_some_of_its_numbers(fake_catalog: FakeCatalog) -> None:
    steps = [exp(1, 100.0, status=Status.BASELINE), exp(2, 50.0)]
    steps += [
        exp(n, 50.0 + n / 10, status=Status.REVERTED, description=f"BLOCK_N={2**n}")
        for n in range(3, 11)
    ]
    loop = diagnose_log(log_of(steps), catalog=fake_catalog).finding(Pathology.REPETITION_LOOP)
    assert loop is not None and len(loop.experiments) == 8
    assert loop.summary.endswith("(50.3 us, 50.4 us, 50.5 us, 50.6 us, 50.7 us, 50.8 us, …).")


def test_a_bound_stated_in_a_result_is_the_kernels_bound(fake_catalog: FakeCatalog) -> None:
    # No profile.md, but a result's profiler notes say what bounds the kernel: "states no
    # bound" would misread the log.
    profiling = (
        Fact(text="Achieved Occupancy | 6.21%", source=SourceRef(path="log.md", line=170)),
        Fact(
            text="Diagnosis: Kernel is latency-bound with low achieved occupancy (6.2%).",
            source=SourceRef(path="log.md", line=178),
        ),
        Fact(text="Memory throughput is not memory-bound at 1%.", source=_REF),
    )
    log = log_of(PLAIN, profiling=profiling)
    sentence = _sentence(diagnose_log(log, catalog=fake_catalog), Pathology.WRONG_BOTTLENECK)
    assert sentence == (
        "The kernel is latency-bound (log.md:178); no recent attempt is left to judge "
        "(exps 2, 3, new bests by 5% or more, not counted)."
    )
    # Under ``until`` a log's notes are those read_log placed before the cut: they state
    # the bound then too (a later entry's notes are not in the log; see test_until_notes).
    cut = log_of(PLAIN[:2], profiling=profiling, until=3)
    assert _sentence(diagnose_log(cut, catalog=fake_catalog), Pathology.WRONG_BOTTLENECK) == (
        "The kernel is latency-bound (log.md:178); no recent attempt is left to judge "
        "(exp 2, a new best by 10.0%, not counted)."
    )
    # Notes that disagree on the bound make no verdict, and name both bounds with their lines.
    memory = Fact(text="The kernel is memory-bound.", source=_REF)
    torn = log_of(PLAIN, profiling=(*profiling, memory))
    disputed = _sentence(diagnose_log(torn, catalog=fake_catalog), Pathology.WRONG_BOTTLENECK)
    assert disputed.startswith(
        "The profiling notes state different bounds: latency-bound (log.md:178"
    )
    assert "memory-bound (log.md:9: 'The kernel is memory-bound.')" in disputed


_REF = SourceRef(path="log.md", line=9)


SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | eager baseline | 100.0 | us | PASS | BASELINE |
| 2 | first fused version | 60.0 | us | PASS | KEPT |
"""
TWO_SHORTCUTS = """# Workload profile

## Op: rowscale

- Calls: 100

### Size-1 axes

- n = 1 in 60% of calls
- m = 1 in 55% of calls
"""
GUARDED = """import torch


def launch(x, out):
    if n == 1:
        return out
    if m == 1:
        return out
    op_kernel[(x.shape[0],)](x, out)
    return out
"""


def test_every_handled_shortcut_is_named(tmp_path: Path) -> None:
    # Two common shortcuts, both with a path in the kernel: naming only the first reads
    # as if the workload had one.
    files = {
        "CLAUDE.md": "# Rules\n\nKernel: kernels/op.py\n",
        "kernels/op.py": GUARDED,
        "experiments/summary.md": SUMMARY,
        "experiments/workload_profile.md": TWO_SHORTCUTS,
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    sentence = _sentence(diagnose(tmp_path), Pathology.OVERLOOKED_SHORTCUT)
    assert sentence == (
        "The kernel already has a path for each of the 2 shortcuts covering 50% of calls or "
        "of time: n == 1 in `if n == 1:` (kernels/op.py:5), m == 1 in `if m == 1:` "
        "(kernels/op.py:7)."
    )


def test_a_loops_numbers_name_their_points(fake_catalog: FakeCatalog) -> None:
    # 47 us at h=16 beside 74 us at h=128 in "none moved the best" would read as a 36 %
    # gain the sentence denies: each number names the point it was timed at.
    steps = [
        _at(exp(1, 100.0, status=Status.BASELINE), "h=128"),
        _at(exp(2, 75.0), "h=128"),
        _at(exp(3, 60.0, status=Status.BASELINE), "h=16"),
        _at(exp(4, 47.0), "h=16"),
    ]
    steps += [
        _at(exp(5, 74.5, status=Status.REVERTED, description="BLOCK_N=32"), "h=128"),
        _at(exp(6, 47.5, status=Status.REVERTED, description="BLOCK_N=128"), "h=16"),
        _at(exp(7, 74.9, status=Status.REVERTED, description="BLOCK_N=16"), "h=128"),
    ]
    loop = diagnose_log(log_of(steps), catalog=fake_catalog).finding(Pathology.REPETITION_LOOP)
    assert loop is not None and loop.experiments == (5, 6, 7)
    assert "(74.5 us at h=128, 47.5 us at h=16, 74.9 us at h=128)" in loop.summary


def _regimes(experiment: Experiment, **speedups: float) -> Experiment:
    """``experiment`` reporting a speedup per named regime (no headline)."""
    points = tuple(
        Point(name=name, value=value, unit="x", kind="speedup", source=SourceRef(path="p.md"))
        for name, value in speedups.items()
    )
    return attrs.evolve(experiment, latency=None, unit=None, points=points)


def test_the_best_of_a_regime_log_is_the_best_at_its_regime(fake_catalog: FakeCatalog) -> None:
    # Step 3 is flat on tiny (2.58x after 2.64x) and edges default up: the best at tiny is
    # still step 2's 2.64x, whatever regime the latest step lists first.
    steps = [
        _regimes(exp(1, 1.0), tiny=1.5, default=1.2),
        _regimes(exp(2, 1.0), tiny=2.64, default=1.397),
        _regimes(exp(3, 1.0), tiny=2.585, default=1.398),
    ]
    best = diagnose_log(log_of(steps), catalog=fake_catalog).summary.best
    assert best is not None
    assert (best.experiment, best.point, best.value) == (2, "tiny", 2.64)


def test_plateau_evidence_names_the_point_of_each_number(fake_catalog: FakeCatalog) -> None:
    # Headlines at two points: 47 us at h=16 "before the plateau" and 74 us at h=128 in it
    # are different quantities, and the evidence must not read as 74 failing to beat 47.
    steps = [
        _at(exp(1, 100.0, status=Status.BASELINE), "h=128"),
        _at(exp(2, 75.0), "h=128"),
        _at(exp(3, 60.0, status=Status.BASELINE), "h=16"),
        _at(exp(4, 47.0), "h=16"),
    ]
    steps += [_at(exp(n, 74.0 + n / 10, status=Status.REVERTED), "h=128") for n in range(5, 10)]
    plateau = diagnose_log(log_of(steps), catalog=fake_catalog).finding(Pathology.LOCAL_MINIMUM)
    assert plateau is not None and plateau.experiments == (5, 6, 7, 8, 9)
    quotes = [e.quote for e in plateau.evidence]
    assert quotes[0] == "best before the plateau: exp 4 47 us at h=16"
    assert quotes[1] == "exp 5: 74.5 us at h=128 REVERTED (+0.0%)"
    # A log of one quantity names no point.
    plain = [exp(1, 100.0, status=Status.BASELINE), exp(2, 75.0)]
    plain += [exp(n, 74.0 + n / 10, status=Status.REVERTED) for n in range(3, 8)]
    flat = diagnose_log(log_of(plain), catalog=fake_catalog).finding(Pathology.LOCAL_MINIMUM)
    assert flat is not None and flat.evidence[1].quote == "exp 3: 74.3 us REVERTED (+0.0%)"


def test_a_latency_in_a_unit_progress_does_not_know_is_not_compared() -> None:
    from kernelopt.diagnose.progress import analyze

    # 5 "cycles" is no time in us: read as 5 us it would be the best of the log by far.
    experiments = (
        exp(1, 100.0, status=Status.BASELINE),
        exp(2, 80.0),
        attrs.evolve(exp(3, 5.0), unit="cycles"),
        exp(4, 79.0, status=Status.REVERTED),
    )
    progress = analyze(experiments)
    best = progress.best()
    assert best is not None and best.experiment.number == 2
    assert progress.steps[2].values == {} and progress.steps[2].gain is None


def test_a_point_in_a_unit_progress_does_not_know_is_not_compared() -> None:
    from kernelopt.diagnose.progress import analyze
    from kernelopt.experiments import MetricKind

    def timed(number: int, value: float, unit: str) -> Experiment:
        ref = SourceRef(path="experiments/summary.md", line=2 + number)
        point = Point(name="tiny", value=value, unit=unit, kind=MetricKind.LATENCY, source=ref)
        return attrs.evolve(exp(number, None), points=(point,))

    progress = analyze((timed(1, 100.0, "us"), timed(2, 0.08, "ms"), timed(3, 5.0, "cycles")))
    assert [s.values for s in progress.steps] == [
        {"tiny|latency": -100.0},
        {"tiny|latency": -80.0},
        {},
    ]
    best = progress.best()
    assert best is not None and best.experiment.number == 2
