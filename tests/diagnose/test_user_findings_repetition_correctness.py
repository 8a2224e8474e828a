"""What two efforts timed on a CPU read in their plans: a repetition finding whose words
agree with its numbers (attempts that timed faster than the best but were reverted or
failed correctness), an attempt that repeats an earlier one named as such, knobs carried
over from the attempt before not blamed as varied, a kept experiment whose own A/B says it
is slower not counted as a new best, and latest attempts failing correctness put first in
the plan below the wall, with the words each failure was recorded with."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest

from kernelopt.diagnose import Diagnosis, Pathology, diagnose, render_plan
from kernelopt.diagnose.detectors.repetition_loop import changed_knobs
from kernelopt.experiments import Experiment
from kernelopt.experiments.records import Correctness, Status

P = Pathology

KERNEL = "rowsum.py"
SOURCE = """import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    for r in range(ROWS):
        row = pid * ROWS + r
        x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + row, tl.sum(x, axis=0))
"""


@attrs.frozen(kw_only=True)
class Row:
    """One experiment as the log writes it: summary row, result.md and plan.md."""

    number: int
    title: str
    latency: float | None
    speedup: float | None = None
    correct: str = "PASS"
    detail: str = "rel err 2.1e-04 vs float64"
    status: str = "REVERTED"
    tags: str = ""
    knobs: str = ""


def _write(root: Path, rows: Sequence[Row]) -> Path:
    """A log of ``rows`` under ``root``: experiments/summary.md, and per experiment its
    result.md, plan.md and a snapshot of the kernel, all timed on a CPU."""
    experiments = root / "experiments"
    experiments.mkdir(parents=True)
    (root / "CLAUDE.md").write_text(f"# Row sum\nKernel: {KERNEL}\n")
    (root / KERNEL).write_text(SOURCE)
    lines = [
        "# Experiments Summary",
        "",
        "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        latency = "" if row.latency is None else f"{row.latency}"
        unit = "" if row.latency is None else "us"
        speedup = "" if row.speedup is None else f"{row.speedup}"
        lines.append(
            f"| {row.number} | 2026-01-05 | {row.title} | {latency} | {unit} | {speedup} | "
            f"{row.correct} | {row.status} | {row.tags} |"
        )
        folder = experiments / f"exp_{row.number}"
        folder.mkdir()
        (folder / KERNEL).write_text(SOURCE)
        (folder / "plan.md").write_text(f"# Plan\n\n{row.title}.\n")
        result = [
            f"# Experiment {row.number}: {row.title}",
            "",
            f"- Status: {row.status}",
            f"- Correctness: {row.correct} ({row.detail})",
            "- Date: 2026-01-05",
            f"- Kernel: {KERNEL}",
            "- GPU: cpu",
        ]
        result += [f"- Tags: {row.tags}"] if row.tags else []
        result += [f"- Knobs: {row.knobs}"] if row.knobs else []
        if row.latency is not None:
            result += [
                "",
                "## Measurements",
                "| Point | Impl | Median | P20 | P80 | Unit | Floor | Of floor | Speedup | Mode |",
                "|---|---|---|---|---|---|---|---|---|---|",
                f"| rows=64 | v{row.number} | {row.latency} | {row.latency} | {row.latency} | us "
                f"| {row.latency / 1000} | 0.1% | {'' if row.speedup is None else row.speedup} "
                "| cpu |",
            ]
        (folder / "result.md").write_text("\n".join(result) + "\n")
    (experiments / "summary.md").write_text("\n".join(lines) + "\n")
    return root


def _sentence(diagnosis: Diagnosis, pathology: Pathology) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is pathology)


def _checked(diagnosis: Diagnosis, pathology: Pathology) -> bool:
    return next(c.checked for c in diagnosis.checks if c.pathology is pathology)


# Row grouping tried four times after a baseline, every time faster on the CPU's clock than
# the baseline's separately timed median, none kept: exp 3 failed correctness on one
# output, exp 5 runs exp 2's knobs again.
GROUPING = [
    Row(number=1, title="baseline: one row per program", latency=962305.0, status="KEPT",
        knobs="ROWS=1"),
    Row(number=2, title="group 8 rows per program", latency=264871.0, speedup=1.391,
        tags="row-grouping", knobs="ROWS=8"),
    Row(number=3, title="group 8 rows and fold the scaling", latency=331812.0, speedup=1.333,
        correct="FAIL",
        detail="dx rel err 2.1e-04, dgamma rel err 2.1e-04, dbeta rel err 5.0e-01 vs float64",
        tags="row-grouping", knobs="ROWS=4"),
    Row(number=4, title="group 16 rows per program", latency=548044.0, speedup=1.543,
        tags="row-grouping", knobs="ROWS=16"),
    Row(number=5, title="group 8 rows per program again", latency=571089.0, speedup=1.801,
        tags="row-grouping", knobs="ROWS=8"),
]  # fmt: skip


@pytest.fixture
def grouping(tmp_path: Path) -> Diagnosis:
    return diagnose(_write(tmp_path / "grouping", GROUPING))


def test_repetition_loop_says_why_faster_attempts_are_no_new_best(grouping: Diagnosis) -> None:
    """Every attempt timed faster than the best: "none moved the best" would contradict the
    numbers beside it; the sentence says they were reverted or failed correctness."""
    sentence = _sentence(grouping, P.REPETITION_LOOP)
    assert _checked(grouping, P.REPETITION_LOOP)
    assert "none moved the best" not in sentence
    assert "none is a new best over exp 1's 962305 us" in sentence
    assert "exps 2, 4, 5 timed faster (264871 us, 548044 us, 571089 us) but were reverted" in (
        sentence
    )
    assert "exp 3 timed faster (331812 us) but failed correctness" in sentence


def test_repetition_loop_keeps_its_words_where_none_timed_faster(tmp_path: Path) -> None:
    """Attempts all slower than the best: "none moved the best by 5%" is true, and stays."""
    rows = [attrs.evolve(GROUPING[0], latency=100.0)] + [
        attrs.evolve(row, latency=120.0 + row.number, speedup=None, correct="PASS", detail="ok")
        for row in GROUPING[1:]
    ]
    sentence = _sentence(diagnose(_write(tmp_path / "slower", rows)), P.REPETITION_LOOP)
    assert "none moved the best by 5% (122 us, 123 us, 124 us, 125 us)." in sentence


def test_repetition_loop_names_an_attempt_that_repeats_an_earlier_one(
    grouping: Diagnosis,
) -> None:
    """Exp 5 sets exp 2's knobs with exp 2's tags on the same kernel text: a repeat."""
    sentence = _sentence(grouping, P.REPETITION_LOOP)
    assert "Exp 5 repeats exp 2: the same knob values (ROWS=8) and tags." in sentence
    # Exp 3's knobs are its own: no repeat of anything.
    assert "Exp 3 repeats" not in sentence and "Exps 3, 5" not in sentence


def _experiment(number: int, status: Status, knobs: dict[str, str]) -> Experiment:
    return Experiment(
        number=number,
        label=f"exp {number}",
        description=f"attempt {number}",
        status=status,
        correctness=Correctness.PASS,
        knobs=knobs,
    )


def test_knob_carried_over_from_the_attempt_before_is_not_varied() -> None:
    """Exp 4 kept the tiles of exp 3 (reverted) and changed only mask_shift: BLOCK_M is
    carried, not varied, though it differs from the kept exp 1."""
    tiles = {"BLOCK_M": "64", "BLOCK_N": "32"}
    experiments = (
        _experiment(1, Status.KEPT, {"BLOCK_M": "16", "BLOCK_N": "16", "mask_shift": "0"}),
        _experiment(2, Status.REVERTED, {"BLOCK_M": "16", "BLOCK_N": "16", "mask_shift": "0"}),
        _experiment(3, Status.REVERTED, {**tiles, "mask_shift": "0"}),
        _experiment(4, Status.REVERTED, {**tiles, "mask_shift": "1"}),
        _experiment(5, Status.REVERTED, {**tiles, "mask_shift": "2"}),
        # Back to the kept tiles: a value the kept kernel has is no variation either.
        _experiment(6, Status.REVERTED, {"BLOCK_M": "16", "BLOCK_N": "16", "mask_shift": "2"}),
    )
    changed = changed_knobs(experiments)
    assert changed[3] == {"block_m", "block_n"}
    assert changed[4] == {"mask_shift"}
    assert changed[5] == {"mask_shift"}
    assert changed[6] == set()


# A prefill effort: exp 3 retiled (reverted, faster than the baseline on the CPU's clock),
# exps 4 and 5 kept its tiles and tried the same mask change twice, failing the same way.
PREFILL = [
    Row(number=1, title="baseline BLOCK_M=16 BLOCK_N=16", latency=94418.0, status="BASELINE",
        tags="online-softmax", knobs="BLOCK_M=16, BLOCK_N=16"),
    Row(number=2, title="exp2 with folded softmax scale", latency=108045.0, speedup=1.019,
        tags="exp2-folded-scale", knobs="use_exp2=True"),
    Row(number=3, title="tiles BLOCK_M=64 BLOCK_N=32 from tune", latency=32207.4,
        speedup=2.365, tags="pruned-autotuning",
        knobs="use_exp2=True, BLOCK_M=64, BLOCK_N=32"),
    Row(number=4, title="diagonal-only causal mask", latency=None, correct="FAIL",
        detail="rel err 5.2e-01 vs float64 (mask off by one)", tags="causal-mask",
        knobs="use_exp2=True, BLOCK_M=64, BLOCK_N=32, mask_shift=1"),
    Row(number=5, title="diagonal-only causal mask, retry", latency=None, correct="FAIL",
        detail="rel err 5.2e-01 vs float64 (mask off by one)", tags="causal-mask",
        knobs="use_exp2=True, BLOCK_M=64, BLOCK_N=32, mask_shift=1"),
]  # fmt: skip


@pytest.fixture
def prefill(tmp_path: Path) -> Diagnosis:
    return diagnose(_write(tmp_path / "prefill", PREFILL))


def test_repetition_loop_does_not_blame_tiles_the_attempts_carried(prefill: Diagnosis) -> None:
    """Exps 4 and 5 changed the mask, not the tiles exp 3 set: no loop over BLOCK_M, and
    the repeat of exp 4 by exp 5 is named."""
    sentence = _sentence(prefill, P.REPETITION_LOOP)
    assert not _checked(prefill, P.REPETITION_LOOP)
    assert "the knob BLOCK_M" not in sentence
    assert "Exp 5 repeats exp 4" in sentence
    assert not any("BLOCK_M one value at a time" in line for line in _plan(prefill))


def _plan(diagnosis: Diagnosis) -> list[str]:
    """The numbered steps of the rendered plan."""
    text = render_plan(diagnosis).split("## Plan\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in text.splitlines() if line[:1].isdigit()]


def test_latest_failures_below_the_wall_lead_the_plan(prefill: Diagnosis) -> None:
    """Two failures in a row, the same way: no wall (needs 3), but the plan's first step
    is to fix them, diffed against the kernel they started from; no root cause claims a
    wall."""
    sentence = _sentence(prefill, P.CORRECTNESS_WALL)
    assert not _checked(prefill, P.CORRECTNESS_WALL)
    assert "no wall (needs 3 in a row)" in sentence
    assert "fail correctness the same way: fix that before the next speed idea" in sentence
    first = _plan(prefill)[0]
    assert first.startswith("1. Fix correctness before the next speed idea: exps 4, 5 fail the ")
    assert "'rel err 5.2e-01 vs float64 (mask off by one)'" in first
    assert "against exp 1" in first
    assert not any(cause.startswith("Correctness wall") for cause in prefill.root_causes)


def test_failures_with_an_attempt_between_them_are_not_stuck(tmp_path: Path) -> None:
    """A failure, a kept change without a verdict, a failure: the effort moved on between
    them, and the plan does not stop it for them."""
    rows = [
        *PREFILL[:4],
        Row(number=5, title="persistent scratch", latency=90000.0, correct="UNKNOWN",
            detail="not checked", status="KEPT"),
        attrs.evolve(PREFILL[4], number=6),
    ]  # fmt: skip
    diagnosis = diagnose(_write(tmp_path / "between", rows))
    assert diagnosis.finding(P.CORRECTNESS_WALL) is None
    assert not any("Fix correctness" in line for line in _plan(diagnosis))


def test_correctness_line_quotes_what_the_failure_recorded(grouping: Diagnosis) -> None:
    """The one failure of the log with the output that went wrong, as its result says it."""
    sentence = _sentence(grouping, P.CORRECTNESS_WALL)
    assert "1 failure in the log (exp 3: 'dbeta rel err 5.0e-01 vs float64')" in sentence


# Exp 6 is kept at a time below the baseline's median from another run, while its own A/B
# against the baseline it was timed with reads 0.8367x.
CONTESTED = [
    *GROUPING,
    Row(
        number=6,
        title="persistent partial-sum scratch",
        latency=390132.0,
        speedup=0.8367,
        status="KEPT",
        tags="buffer-persistence",
        knobs="ROWS=8",
    ),
]


def test_kept_experiment_slower_by_its_own_ab_is_no_new_best(tmp_path: Path) -> None:
    """No new best is claimed for exp 6, a warning says why, and the attempts since the
    best last moved (the repetition window) go on through it."""
    diagnosis = diagnose(_write(tmp_path / "contested", CONTESTED))
    summary = diagnosis.summary
    assert summary.best is not None and summary.best.experiment == 1
    assert not summary.trajectory
    assert list(summary.stall) == [2, 3, 4, 5, 6]
    assert _checked(diagnosis, P.REPETITION_LOOP)
    assert any(
        w.startswith("exp 6: its time (390132 us) is 59.5% below the best before it")
        and "its own A/B reads 0.8367x" in w
        for w in diagnosis.warnings
    )


def test_local_minimum_says_why_a_faster_kept_time_beats_nothing(tmp_path: Path) -> None:
    """Behind a baseline, the kernel's best named is exp 6's time: the sentence says it was
    timed in another run and its own A/B reads slower, so "has not beaten it" stands."""
    rows = [attrs.evolve(CONTESTED[0], status="BASELINE"), *CONTESTED[1:]]
    sentence = _sentence(diagnose(_write(tmp_path / "behind", rows)), P.LOCAL_MINIMUM)
    assert (
        "the kernel has not beaten it (its best: exp 6, 390132 us; timed in another run, and "
        "its own A/B reads 0.8367x)"
    ) in sentence


def test_speedups_over_a_fixed_reference_still_count_gains(tmp_path: Path) -> None:
    """Speedups against one reference (torch eager at 100 us) below 1 while the kernel's
    own times fall: each implies the same reference time, so they contradict no gain."""
    rows = [
        Row(number=1, title="first kernel", latency=200.0, speedup=0.5, status="KEPT"),
        Row(number=2, title="vectorized loads", latency=160.0, speedup=0.625, status="KEPT"),
        Row(number=3, title="two rows per program", latency=125.0, speedup=0.8, status="KEPT"),
    ]
    diagnosis = diagnose(_write(tmp_path / "reference", rows))
    assert [p.experiment for p in diagnosis.summary.trajectory] == [2, 3]
    assert not any("own A/B" in w for w in diagnosis.warnings)
