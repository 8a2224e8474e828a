"""An experiment's own A/B verdict, as its result.md states it, read and weighed.

``kernelopt.bench.write_experiment(..., verdict=compare(...))`` writes a ``## Verdict``
section (``UNCLEAR 0.840x [0.661, 1.188] the baseline's time, speedup 1.19x, ...``); the
log readers carry its word and speedup on the experiment (``Experiment.verdict``,
``Experiment.verdict_speedup``), and diagnose counts no new best for a kept experiment
whose time beats a best timed in another run while its own verdict is not FAST.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest

from kernelopt._errors import InputError
from kernelopt.bench import Comparison, Measurement, to_result_row, write_experiment
from kernelopt.diagnose import Diagnosis, Pathology, diagnose
from kernelopt.experiments import read_log
from kernelopt.experiments.canonical import ab_verdict, render_result
from kernelopt.experiments.log import ABVerdict, Experiment
from kernelopt.experiments.records import ResultRecord, ResultRow

_KERNEL = "ln_bwd.py"
_SOURCE = """import triton
import triton.language as tl


@triton.jit
def ln_bwd_kernel(dy_ptr, dx_ptr, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    for r in range(ROWS):
        row = pid * ROWS + r
        dy = tl.load(dy_ptr + row * n + offs, mask=offs < n, other=0.0)
        tl.store(dx_ptr + row * n + offs, dy, mask=offs < n)
"""


@attrs.frozen(kw_only=True)
class Attempt:
    """One experiment as a user's script writes it with write_experiment."""

    title: str
    median: float
    status: str
    speedup: float | None = None
    verdict: Comparison | str | None = None
    tags: tuple[str, ...] = ()


def _comparison(word: str, speedup: float) -> Comparison:
    """A compare verdict of ``word`` whose candidate runs ``speedup`` times faster."""
    ratio = 1.0 / speedup
    return Comparison(
        verdict=word,
        ratio=ratio,
        ratio_low=ratio * 0.8,
        ratio_high=ratio * 1.2,
        noise=0.489,
        threshold=0.489,
        pairs=9,
    )


def _write(root: Path, attempts: Sequence[Attempt]) -> Path:
    """A log of ``attempts`` numbered from 1, written by kernelopt.bench, each timed in a
    run of its own (its speedup is over the baseline of that run, not the best before)."""
    root.mkdir(parents=True)
    (root / "CLAUDE.md").write_text(f"# LayerNorm backward\nKernel: {_KERNEL}\n")
    (root / _KERNEL).write_text(_SOURCE)
    for number, attempt in enumerate(attempts, start=1):
        measured = Measurement(
            samples=[attempt.median] * 5, gpu="NVIDIA H100 80GB HBM3", backend="cuda-events"
        )
        write_experiment(
            root / "experiments",
            experiment=number,
            title=attempt.title,
            rows=[
                to_result_row(
                    measured, point="hidden=512 rows=64", impl=f"v{number}", speedup=attempt.speedup
                )
            ],
            status=attempt.status,
            correctness="PASS",
            tags=attempt.tags,
            verdict=attempt.verdict,
            date="2026-12-07",
            directory=root,
        )
    return root


_BASELINE = Attempt(title="baseline: one row per program", median=962305.0, status="BASELINE")


def _scratch(verdict: Comparison | str | None, speedup: float) -> Attempt:
    """Exp 2: kept at a time 59.5% below the baseline's, timed in another run."""
    return Attempt(
        title="persistent partial-sum scratch",
        median=390132.0,
        status="KEPT",
        speedup=speedup,
        verdict=verdict,
    )


def _contest_warnings(diagnosis: Diagnosis) -> list[str]:
    return [w for w in diagnosis.warnings if "own A/B" in w]


# Reading.


def test_a_verdict_written_by_write_experiment_is_read(tmp_path: Path) -> None:
    """The word and the speedup of the ``## Verdict`` section, with where they were read."""
    root = _write(tmp_path / "log", [_BASELINE, _scratch(_comparison("UNCLEAR", 0.8367), 0.8367)])
    baseline, scratch = read_log(root).experiments
    assert scratch.verdict is ABVerdict.UNCLEAR
    assert scratch.verdict_speedup == 0.8367
    result = root / "experiments" / "exp_2" / "result.md"
    line = result.read_text().splitlines().index("## Verdict") + 2
    assert str(scratch.refs["verdict"]) == f"experiments/exp_2/result.md:{line}"
    # A result without a verdict reads as before.
    assert baseline.verdict is None and baseline.verdict_speedup is None
    assert "verdict" not in baseline.refs


@pytest.mark.parametrize(
    ("text", "read"),
    [
        (
            "UNCLEAR 0.840x [0.661, 1.188] the baseline's time, speedup 1.19x, "
            "same-version spread ±48.9%, threshold ±48.9%",
            (ABVerdict.UNCLEAR, 1.19),
        ),
        # Comparison.summary()'s form states the ratio the other way round.
        ("FAST 0.500x [0.490, 0.510], same-version spread ±0.4%", (ABVerdict.FAST, 2.0)),
        ("SLOW 1.250x [1.200, 1.300] the baseline's time, speedup 0.8x", (ABVerdict.SLOW, 0.8)),
        ("SAME", (ABVerdict.SAME, None)),
        ("**FAST** (speedup 1.3x)", (ABVerdict.FAST, 1.3)),
        # A bare x number does not say which way round it is.
        ("FAST 1.19x", (ABVerdict.FAST, None)),
        (
            "FAST 0.000x [0.000, 0.000] the baseline's time, speedup infinite",
            (ABVerdict.FAST, None),
        ),
        # Verdicts in other words are no A/B verdict.
        ("vs exp 1 (graph medians): s=1 h=128 151.3 -> 114.7 us", None),
        ("Promote. Capacity streaming now uses an 85% ceiling.", None),
        ("Same as exp 3", None),
        ("FAST-PATH kept", None),
    ],
)
def test_the_verdict_words_read(text: str, read: tuple[ABVerdict, float | None] | None) -> None:
    assert ab_verdict(text) == read


def _hand_written(root: Path, result: str) -> Experiment:
    """The experiment of a log whose one experiment has the hand-written ``result``."""
    folder = root / "experiments" / "exp_1"
    folder.mkdir(parents=True)
    (folder / "result.md").write_text(result)
    (experiment,) = read_log(root).experiments
    return experiment


def test_a_hand_written_verdict_line_is_read(tmp_path: Path) -> None:
    experiment = _hand_written(
        tmp_path / "field",
        "# Exp 1 — vectorized loads\n\n- Latency: 300 us\n- Verdict: **FAST** (speedup 1.3x)\n",
    )
    assert experiment.verdict is ABVerdict.FAST
    assert experiment.verdict_speedup == 1.3
    assert str(experiment.refs["verdict"]) == "experiments/exp_1/result.md:4"


def test_a_hand_written_verdict_section_is_read(tmp_path: Path) -> None:
    experiment = _hand_written(
        tmp_path / "section",
        "# Exp 1 — vectorized loads\n\n- Latency: 300 us\n\n## Verdict\n\n"
        "SAME 0.990x [0.970, 1.010] the baseline's time, speedup 1.01x\n",
    )
    assert experiment.verdict is ABVerdict.SAME
    assert experiment.verdict_speedup == 1.01
    assert str(experiment.refs["verdict"]) == "experiments/exp_1/result.md:7"


def test_a_verdict_in_other_words_is_none(tmp_path: Path) -> None:
    experiment = _hand_written(
        tmp_path / "prose",
        "# Exp 1 — streaming autotune\n\n- Latency: 300 us\n\n## Verdict\n\n"
        "Promote. Capacity streaming now uses an 85% ceiling.\n",
    )
    assert experiment.verdict is None and experiment.verdict_speedup is None


def test_a_canonical_verdict_in_other_words_is_none(tmp_path: Path) -> None:
    """A result kernelopt wrote with a verdict of the user's own words (as the MLA decode
    log's exp 2 does) states no A/B verdict."""
    record = ResultRecord(
        experiment=1,
        title="split-KV",
        status="KEPT",
        correctness="PASS",
        rows=(ResultRow(point="s=1", impl="v1", median=114.7, unit="us", mode="graph"),),
        verdict="vs exp 1 (graph medians): s=1 h=128 151.3 -> 114.7 us",
    )
    experiment = _hand_written(tmp_path / "canonical", render_result(record))
    assert experiment.verdict is None and experiment.verdict_speedup is None


def test_the_experiment_record_checks_its_verdict() -> None:
    assert Experiment(number=1, label="exp_1", verdict="FAST").verdict is ABVerdict.FAST
    with pytest.raises(InputError, match="verdict: Expected None or one of 'FAST'"):
        Experiment(number=1, label="exp_1", verdict="FASTER")
    with pytest.raises(InputError, match="verdict_speedup: Expected None or a finite number > 0"):
        Experiment(number=1, label="exp_1", verdict="SAME", verdict_speedup=0.0)


# Diagnosing.


@pytest.mark.parametrize(
    ("word", "speedup", "words"),
    [("UNCLEAR", 1.19, "not shown faster"), ("SAME", 1.02, "no faster")],
)
def test_a_kept_experiment_not_shown_faster_by_its_verdict_is_no_new_best(
    tmp_path: Path, word: str, speedup: float, words: str
) -> None:
    """Its speedup is above 1, but its verdict does not back a gain: the 59.5% its time
    shows over the baseline's median of another run is the drift between runs."""
    root = _write(tmp_path / "log", [_BASELINE, _scratch(_comparison(word, speedup), speedup)])
    diagnosis = diagnose(root)
    assert diagnosis.summary.best is not None and diagnosis.summary.best.experiment == 1
    assert not diagnosis.summary.trajectory
    assert _contest_warnings(diagnosis) == [
        "exp 2: its time (390132 us) is 59.5% below the best before it, timed in another "
        f"run, but its own A/B verdict is {word} (speedup {speedup:g}x) against the baseline "
        f"it was timed with ({words}): not counted as a new best, and the attempts since "
        "the best last moved go on through it"
    ]


def test_a_fast_verdict_keeps_its_new_best(tmp_path: Path) -> None:
    root = _write(tmp_path / "log", [_BASELINE, _scratch(_comparison("FAST", 1.19), 1.19)])
    diagnosis = diagnose(root)
    assert [p.experiment for p in diagnosis.summary.trajectory] == [2]
    assert not _contest_warnings(diagnosis)


def test_a_fast_verdict_outweighs_a_row_speedup_over_another_reference(tmp_path: Path) -> None:
    """The row's speedup (0.9x, over a library kernel) is no A/B against the kernel it
    started from; its FAST verdict is, and its new best stands."""
    root = _write(tmp_path / "log", [_BASELINE, _scratch(_comparison("FAST", 1.19), 0.9)])
    diagnosis = diagnose(root)
    assert [p.experiment for p in diagnosis.summary.trajectory] == [2]
    assert not _contest_warnings(diagnosis)


def test_a_verdict_written_as_text_is_weighed_too(tmp_path: Path) -> None:
    """write_experiment takes a verdict str as well: ``Comparison.summary()``'s line."""
    summary = _comparison("UNCLEAR", 1.19).summary()
    root = _write(tmp_path / "log", [_BASELINE, _scratch(summary, 1.19)])
    diagnosis = diagnose(root)
    assert not diagnosis.summary.trajectory
    (warning,) = _contest_warnings(diagnosis)
    assert "its own A/B verdict is UNCLEAR (speedup 1.19x)" in warning


def _unclear(number: int) -> Attempt:
    """A kept attempt 40-60% faster than the baseline by another run's clock, whose own
    A/B is UNCLEAR."""
    return Attempt(
        title=f"group {2**number} rows per program",
        median=390000.0 + 1000.0 * number,
        status="KEPT",
        speedup=1.19,
        verdict=_comparison("UNCLEAR", 1.19),
        tags=("row-grouping",),
    )


def test_the_loop_says_its_attempts_are_not_shown_faster(tmp_path: Path) -> None:
    root = _write(tmp_path / "log", [_BASELINE, *(_unclear(n) for n in range(2, 5))])
    found = diagnose(root).finding(Pathology.REPETITION_LOOP)
    assert found is not None
    assert (
        "exps 2, 3, 4 timed faster (392000 us, 393000 us, 394000 us) but are not shown "
        "faster by their own A/B"
    ) in found.summary


def test_the_local_minimum_names_the_verdict_of_the_kernels_best(tmp_path: Path) -> None:
    root = _write(tmp_path / "log", [_BASELINE, *(_unclear(n) for n in range(2, 7))])
    found = diagnose(root).finding(Pathology.LOCAL_MINIMUM)
    assert found is not None
    assert (
        "the kernel has not beaten it (its best: exp 2, 392000 us; timed in another run, "
        "and its own A/B verdict is UNCLEAR (speedup 1.19x))"
    ) in found.summary
