"""The plan's header and plan on gains the log cannot resolve and on logs with no best, and
the wrong-bottleneck item on profiling notes that state a bound beside a latency cue, or
two bounds that disagree."""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Diagnosis, Pathology, diagnose, diagnose_log
from kernelopt.diagnose.jsonio import diagnosis_from_json, diagnosis_to_json
from kernelopt.diagnose.model import LogSummary, TrajectoryPoint
from kernelopt.diagnose.plan import render_plan
from kernelopt.experiments import Fact, SourceRef
from kernelopt.experiments.records import Status

from .conftest import UNRELATED_TITLES, exp, log_of


def _line(plan: str, lead: str) -> str:
    """The plan's line that starts with ``lead``."""
    found = [line for line in plan.splitlines() if line.startswith(lead)]
    assert len(found) == 1, plan
    return found[0]


# A profiling note that reads as latency-bound: item 4 judges no compute/memory side.
_STALLED = (
    Fact(text="Dominant stall reason: long scoreboard", source=SourceRef(path="notes.md", line=3)),
)


def _noisy() -> Diagnosis:
    """100 us, then 99.96 us (0.04 % faster: the drift of two runs), then 90 us (10 %), on
    a profiled kernel: no check fires, so the plan is to keep going."""
    experiments = [
        exp(1, 100.0, description=UNRELATED_TITLES[0]),
        exp(2, 99.96, description=UNRELATED_TITLES[1]),
        exp(3, 89.964, description=UNRELATED_TITLES[2]),
    ]
    return diagnose_log(log_of(experiments, profiling=_STALLED), catalog=None)


def test_a_gain_under_the_noise_shows_its_digits_and_reads_within_noise() -> None:
    line = _line(render_plan(_noisy()), "New bests")

    assert "+0.0%" not in line
    assert "exp 2 +0.04% (within noise)" in line
    # A 10 % gain is a change the log resolves: no mark.
    assert "exp 3 +10.0%;" in line


def test_a_gain_of_one_percent_is_no_noise() -> None:
    experiments = [
        exp(1, 100.0, description=UNRELATED_TITLES[0]),
        exp(2, 99.0, description=UNRELATED_TITLES[1]),
    ]
    line = _line(render_plan(diagnose_log(log_of(experiments), catalog=None)), "New bests")

    assert "exp 2 +1.0%;" in line
    assert "noise" not in line


def test_a_same_run_gain_under_the_noise_says_both_in_one_parenthesis() -> None:
    summary = LogSummary(
        root="experiments",
        experiments=2,
        attempted=2,
        first=1,
        last=2,
        trajectory=(
            TrajectoryPoint(experiment=2, value=99.1, unit="us", gain=0.009, same_run=True),
        ),
    )
    line = _line(render_plan(Diagnosis(summary=summary)), "New bests")

    assert line.startswith("New bests: exp 2 +0.9% (in its own run, within noise);")


def test_the_noise_mark_survives_the_json_round_trip() -> None:
    # The mark follows from the gain JSON keeps: a plan rendered from the JSON says the same.
    diagnosis = _noisy()

    assert render_plan(diagnosis_from_json(diagnosis_to_json(diagnosis))) == render_plan(diagnosis)


def test_the_corpus_gemm_log_marks_its_flat_fold_as_noise(corpus: Path) -> None:
    # G1.2 (exp 11): long_seq 2.300x -> 2.301x, a fold the log itself calls "flat, within noise".
    line = _line(render_plan(diagnose(corpus / "gemm-flipfloppers", catalog=None)), "New bests")

    assert "exp 11 +0.043% at long_seq (within noise)" in line
    assert line.count("within noise") == 1


def _all_reverted() -> Diagnosis:
    """Every attempt reverted, each slower than its own baseline run, on a profiled
    kernel: no check fires, so the plan is to keep going."""
    experiments = [
        exp(n, latency, status=Status.REVERTED, description=title)
        for n, (latency, title) in enumerate(
            zip((3.789, 4.15, 9.369), UNRELATED_TITLES, strict=False), start=1
        )
    ]
    return diagnose_log(log_of(experiments, profiling=_STALLED), catalog=None)


def test_a_log_without_a_best_says_so_in_its_header() -> None:
    plan = render_plan(_all_reverted())

    assert "Best so far" not in plan
    assert _line(plan, "No best recorded").startswith(
        "No best recorded: no experiment that can hold one (kept, or of unknown fate, and not "
        "failing correctness) measured a number to compare."
    )


def test_a_log_without_a_best_is_told_to_time_the_baseline_first() -> None:
    plan = render_plan(_all_reverted())

    assert "against the current best" not in plan
    assert (
        "Keep going: the log records no best to measure against, so time the baseline first, "
        "then measure the next idea against it."
    ) in plan


def test_a_log_with_a_best_measures_against_it() -> None:
    plan = render_plan(_noisy())

    assert "No best recorded" not in plan
    assert "Keep going: measure the next idea against the current best." in plan


def _bottleneck_item(*notes: str) -> str:
    """Item 4's sentence for a log whose profiling notes are ``notes`` (one line each)."""
    experiments = [
        exp(n, 100.0 - n, description=title)
        for n, title in enumerate(UNRELATED_TITLES[:3], start=1)
    ]
    profiled = tuple(
        Fact(text=note, source=SourceRef(path="notes.md", line=line))
        for line, note in enumerate(notes, start=10)
    )
    diagnosis = diagnose_log(log_of(experiments, profiling=profiled), catalog=None)
    (check,) = [c for c in diagnosis.checks if c.pathology is Pathology.WRONG_BOTTLENECK]
    return check.sentence


def test_a_stated_bound_outranks_a_scoreboard_stall() -> None:
    sentence = _bottleneck_item(
        "Bottleneck analysis: the kernel is memory-bound at 81% of peak DRAM bandwidth.",
        "Dominant stall reason: long scoreboard",
    )

    assert "states no bound" not in sentence
    assert sentence.startswith("The kernel is memory-bound (Bottleneck analysis: the kernel is")


def test_a_stated_bound_outranks_an_underfilled_kernel() -> None:
    sentence = _bottleneck_item(
        "The kernel is underfilled at the GPU level.",
        "Diagnosis: the kernel is compute-bound.",
    )

    assert "states no bound" not in sentence
    assert sentence.startswith("The kernel is compute-bound (Diagnosis: the kernel is")


def test_two_stated_bounds_that_disagree_are_both_named() -> None:
    sentence = _bottleneck_item(
        "Stage 1 is memory-bound.",
        "Dominant stall reason: long scoreboard",
        "Stage 2 is compute-bound.",
    )

    assert sentence.startswith("The profiling notes state different bounds: ")
    assert "memory-bound (notes.md:10: 'Stage 1 is memory-bound.')" in sentence
    assert "compute-bound (notes.md:12: 'Stage 2 is compute-bound.')" in sentence
    # The stall cue is outranked by both statements: not named as a third bound.
    assert "latency" not in sentence
