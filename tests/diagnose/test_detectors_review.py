"""Measuring attempts in the repetition loop, partial quotes answering a recommendation,
and the no-profile finding of a log with no change in it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kernelopt.catalog import Catalog
from kernelopt.diagnose import Pathology, diagnose, diagnose_log
from kernelopt.diagnose.detectors.ignored_prior_research import shares_quote
from kernelopt.experiments.records import Status
from tests.diagnose.conftest import exp, log_of

P = Pathology

_HEADER = (
    "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
)


def _summary_log(root: Path, rows: list[tuple[str, float, str]]) -> Path:
    """A log whose summary.md holds ``rows`` (title, latency in us, status), numbered from 1."""
    (root / "experiments").mkdir(parents=True)
    lines = "".join(
        f"| {n} | 2026-12-01 | {title} | {latency:g} | us |  | PASS | {status} |  |\n"
        for n, (title, latency, status) in enumerate(rows, start=1)
    )
    (root / "experiments" / "summary.md").write_text(_HEADER + lines, encoding="utf-8")
    return root


def _sentence(root: Path, pathology: Pathology) -> str:
    return next(c.sentence for c in diagnose(root).checks if c.pathology is pathology)


_START = [("baseline", 100.0, "BASELINE"), ("first kernel", 90.0, "KEPT")]


@pytest.mark.parametrize(
    "titles",
    [
        (
            "roofline analysis of the kernel",
            "roofline analysis with ncu again",
            "roofline analysis per stage",
        ),
        (
            "time each stage with CUDA events",
            "time each stage with CUDA events at b=1",
            "time each stage with CUDA events at b=128",
        ),
        ("profile the kernel with ncu", "profiling run at b=1", "diagnostic timing of the stages"),
    ],
)
def test_profiling_again_is_no_repetition_loop(tmp_path: Path, titles: tuple[str, ...]) -> None:
    rows = _START + [(title, 89.0 + i / 4, "NEUTRAL") for i, title in enumerate(titles)]
    root = _summary_log(tmp_path / "log", rows)
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.REPETITION_LOOP) is None
    sentence = _sentence(root, P.REPETITION_LOOP)
    assert sentence == (
        "The 3 attempts since the last 5% gain measured the kernel (profiling, timing) "
        "rather than changed it (exps 3, 4, 5): no idea to repeat."
    )
    assert not any("Stop iterating" in a.text for f in diagnosis.findings for a in f.actions)


def test_a_measuring_run_beside_changes_is_named_apart(tmp_path: Path) -> None:
    rows = [
        *_START,
        ("roofline analysis of the kernel", 89.0, "NEUTRAL"),
        ("hoist reciprocal", 89.5, "REVERTED"),
        ("swap loop nest", 89.2, "REVERTED"),
    ]
    root = _summary_log(tmp_path / "log", rows)
    assert _sentence(root, P.REPETITION_LOOP) == (
        "The 3 attempts since the last 5% gain try different ideas (no catalog tag, knob or "
        "term shared by 3 or more of them); exp 3 measured the kernel rather than changed it."
    )


def test_a_knob_changed_while_profiling_is_still_an_axis(tmp_path: Path) -> None:
    # Profiled, but each run also set BLOCK_N: a change of the kernel, one value at a time.
    rows = _START + [
        (f"profile with BLOCK_N={block}", 89.0 + i / 4, "REVERTED")
        for i, block in enumerate((32, 128, 256))
    ]
    found = diagnose(_summary_log(tmp_path / "log", rows)).finding(P.REPETITION_LOOP)
    assert found is not None
    assert "vary the knob BLOCK_N" in found.summary


def test_a_measuring_title_with_another_technique_is_a_change(catalog: Catalog) -> None:
    # Tagged with split-KV too: the attempts changed the kernel, and the tag is their axis.
    log = log_of(
        [
            exp(1, 100.0, status=Status.BASELINE),
            exp(2, 90.0),
            *(
                exp(
                    3 + i,
                    89.0,
                    status=Status.NEUTRAL,
                    description=f"split-KV with {splits} splits, profiled with ncu",
                    tags=("split-kv-flash-decoding", "cuda-event-instrumentation"),
                )
                for i, splits in enumerate((2, 4, 8))
            ),
        ]
    )
    found = diagnose_log(log, catalog=catalog).finding(P.REPETITION_LOOP)
    assert found is not None
    assert "(split-kv-flash-decoding)" in found.summary


_RECOMMENDATION = "Split the KV sequence across programs (split-KV flash decoding) to fill the SMs."


def _advice_log(root: Path, note: str) -> Path:
    """exp 2's plan recommends split-KV; exp 4's result says ``note`` about it."""
    _summary_log(
        root,
        [
            ("baseline", 100.0, "BASELINE"),
            ("first triton kernel", 90.0, "KEPT"),
            ("BLOCK_N=64", 89.0, "KEPT"),
            ("num_warps=8", 89.5, "REVERTED"),
            ("num_stages=3", 89.2, "REVERTED"),
        ],
    )
    plan = root / "experiments" / "exp_2" / "plan.md"
    plan.parent.mkdir()
    plan.write_text(
        f"# Plan: first triton kernel\n\n## Next steps\n- {_RECOMMENDATION}\n", encoding="utf-8"
    )
    result = root / "experiments" / "exp_4" / "result.md"
    result.parent.mkdir()
    result.write_text(
        "# Experiment 4: num_warps=8\n\nStatus: REVERTED\n\n- Latency: 89.5 us\n\n"
        f"## Notes\n{note}\n",
        encoding="utf-8",
    )
    return root


@pytest.mark.parametrize(
    "note",
    [
        # 63 characters of the recommendation, not all of it.
        'Re the plan\'s "Split the KV sequence across programs (split-KV flash decoding)": '
        "not now, b=32 already fills the SMs.",
        # Exactly 24 characters, in other case and spacing.
        'Skipped "sequence  across Programs": b=32 fills the machine.',
    ],
)
def test_a_partial_quote_answers_a_recommendation(tmp_path: Path, note: str) -> None:
    root = _advice_log(tmp_path / "log", note)
    assert diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _sentence(root, P.IGNORED_PRIOR_RESEARCH).startswith(
        "The 1 recommendation followed by 3+ attempts was acted on"
    )


@pytest.mark.parametrize(
    "note",
    [
        'Re "Split the KV sequence": later.',  # 21 characters
        'Re "sequence across programmes": later.',  # 23 in common: "sequence across program"
    ],
)
def test_a_quote_under_24_characters_does_not_answer(tmp_path: Path, note: str) -> None:
    # Too short to name the idea rather than share a phrase by chance.
    root = _advice_log(tmp_path / "log", note)
    found = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert found is not None
    assert "Split the KV sequence across programs" in found.summary


def _longest_common_run(words: str, text: str) -> int:
    return max(
        (
            length
            for start in range(len(words))
            for length in range(1, len(words) - start + 1)
            if words[start : start + length] in text
        ),
        default=0,
    )


def test_shares_quote_finds_every_run_of_the_size() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        words = "".join(rng.choice("ab ") for _ in range(rng.randint(0, 30)))
        text = "".join(rng.choice("ab ") for _ in range(rng.randint(0, 40)))
        size = rng.randint(1, 10)
        expected = _longest_common_run(words, text) >= size
        assert shares_quote(words, text, size) is expected, (words, text, size)


def _no_change(tmp_path: Path, layout: str) -> Path:
    root = tmp_path / "log"
    if layout == "baseline only":
        _summary_log(root, [("baseline", 100.0, "BASELINE")])
    else:  # a plan for the first experiment, nothing run yet
        plan = root / "experiments" / "exp_1" / "plan.md"
        plan.parent.mkdir(parents=True)
        plan.write_text("# Plan: split-KV\n\nTry split-KV.\n", encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("layout", "why"),
    [("baseline only", "only a baseline was run"), ("planned", "nothing was attempted yet")],
)
def test_no_profile_before_any_change_is_no_finding(tmp_path: Path, layout: str, why: str) -> None:
    diagnosis = diagnose(_no_change(tmp_path, layout))
    assert diagnosis.finding(P.WRONG_BOTTLENECK) is None
    check = next(c for c in diagnosis.checks if c.pathology is P.WRONG_BOTTLENECK)
    assert check.sentence == (
        f"No profiling data in any result or profile.md, but no change was made ({why}), "
        "so none was chosen blind: profile the kernel before the first change."
    )
    assert "experiments/profile.md or profiling metrics in result.md" in check.missing


def test_no_profile_counts_the_changes_not_the_baseline(catalog: Catalog) -> None:
    log = log_of([exp(1, 100.0, status=Status.BASELINE), exp(2, 90.0)])
    found = diagnose_log(log, catalog=catalog).finding(P.WRONG_BOTTLENECK)
    assert found is not None
    assert found.summary.startswith(
        "No profiling data in any result or profile.md across 1 attempt: "
    )
    assert found.experiments == (2,)
