"""What the checklist sentences of items 3 and 4 name.

Item 4: a profile whose DRAM% and TC% decide no bound (both under their thresholds, or
too close to call) is quoted with its numbers, where they were read and the rule each
misses, and the plan does not ask for the metrics the log has. Item 3: every numeric
suspect a correctness wall names carries the file and line that show it, as an
accumulator does."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kernelopt.diagnose import Diagnosis, Pathology, diagnose, diagnose_log
from kernelopt.experiments.log import Fact, ProfileFacts, SourceRef

from .conftest import FakeCatalog, exp, log_of

_CLAUDE = "# CLAUDE.md — softmax kernel (Triton)\n\n- Kernel under optimization: `kernels/k.py`\n"
_SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | torch eager baseline | 100.0 | us | PASS | BASELINE |
| 2 | Triton kernel | 50.0 | us | PASS | KEPT |
| 3 | warp specialization | 49.9 | us | {verdict} | REVERTED |
| 4 | MMA tile 128x128 | 49.8 | us | {verdict} | REVERTED |
| 5 | unroll the row loop | 49.7 | us | {verdict} | REVERTED |
"""
_KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    {line}
    x = tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
    tl.store(y_ptr + i * BLOCK + tl.arange(0, BLOCK), x)


def launch(x, out):
    k[(x.numel() // 1024,)](x, out, x.numel(), BLOCK=1024)
    return out
"""
_PROFILE = """## Profile: k | b=1

| Stage | Duration | TC% | DRAM% |
|---|---|---|---|
| k | 50 us | {tc} | {dram} |
"""
_NO_NUMBERS = (
    "Profiling data exists but states no bound (memory/compute) and no DRAM%/TC% to derive one."
)
_ASKED = "a bottleneck statement in profile.md or dram_pct/tc_pct metrics"


def _write(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text, dedented) under ``root``."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def _check(diagnosis: Diagnosis, pathology: Pathology) -> tuple[str, tuple[str, ...]]:
    """The sentence and missing data of ``pathology``'s checklist item."""
    check = next(c for c in diagnosis.checks if c.pathology is pathology)
    return check.sentence, check.missing


def _profiled(root: Path, profile: str) -> Diagnosis:
    """The diagnosis of a log whose attempts all pass, with ``profile`` as profile.md."""
    files = {
        "CLAUDE.md": _CLAUDE,
        "kernels/k.py": _KERNEL.replace("{line}", "pass"),
        "experiments/summary.md": _SUMMARY.replace("{verdict}", "PASS"),
        "experiments/profile.md": profile,
    }
    return diagnose(_write(root, files))


@pytest.mark.parametrize(
    ("dram", "tc", "why"),
    [
        (
            "59",
            "10",
            "DRAM% is under the 60% a memory bound needs; "
            "TC% is under the 60% a compute bound needs",
        ),
        (
            "70",
            "40",
            "DRAM% reaches 60% but TC% is not under half of DRAM% (35), too close to call; "
            "TC% is under the 60% a compute bound needs",
        ),
        (
            "80",
            "70",
            "DRAM% reaches 60% but TC% is not under half of DRAM% (40), too close to call; "
            "TC% reaches 60% but DRAM% is not under it, too close to call",
        ),
    ],
    ids=["both-under", "memory-too-close", "both-too-close"],
)
def test_metrics_that_decide_no_bound_are_named_with_the_rule_they_miss(
    tmp_path: Path, dram: str, tc: str, why: str
) -> None:
    diagnosis = _profiled(tmp_path / "log", _PROFILE.format(dram=dram, tc=tc))
    assert diagnosis.finding(Pathology.WRONG_BOTTLENECK) is None
    sentence, missing = _check(diagnosis, Pathology.WRONG_BOTTLENECK)
    assert sentence == (
        f"Profiling data states no bound (memory/compute); its measured DRAM% {dram} and "
        f"TC% {tc} (experiments/profile.md:5) decide none: {why}."
    )
    # The log has both metrics: the plan must not ask for them.
    assert missing == ()
    assert "dram_pct/tc_pct" not in diagnosis.render_plan()


def test_a_lone_metric_names_the_one_still_missing(tmp_path: Path) -> None:
    profile = (
        "## Profile: k | b=1\n\n| Stage | Duration | DRAM% |\n|---|---|---|\n| k | 50 us | 59 |\n"
    )
    diagnosis = _profiled(tmp_path / "log", profile)
    sentence, missing = _check(diagnosis, Pathology.WRONG_BOTTLENECK)
    assert sentence == (
        "Profiling data states no bound (memory/compute); its measured DRAM% 59 "
        "(experiments/profile.md:5) decides none: DRAM% is under the 60% a memory bound "
        "needs; no TC% was measured."
    )
    assert missing == ("a bottleneck statement in profile.md or a tc_pct metric (TC%)",)


def test_metrics_from_two_places_are_each_cited(fake_catalog: FakeCatalog) -> None:
    # profile.md measured DRAM% on its line 5; the latest result measured TC% over it.
    profile = ProfileFacts(
        bottleneck=None,
        metrics={"dram_pct": 59.0},
        facts=(
            Fact(text="k | 50 us | 59", source=SourceRef(path="experiments/profile.md", line=5)),
        ),
        source=SourceRef(path="experiments/profile.md"),
    )
    experiments = [
        exp(1, 100.0),
        exp(2, 50.0, description="Triton kernel"),
        exp(3, 49.0, description="wider tiles", metrics={"tc_pct": 12.0}),
    ]
    diagnosis = diagnose_log(log_of(experiments, profile=profile), catalog=fake_catalog)
    sentence, missing = _check(diagnosis, Pathology.WRONG_BOTTLENECK)
    assert sentence.startswith(
        "Profiling data states no bound (memory/compute); its measured DRAM% 59 "
        "(experiments/profile.md:5) and TC% 12 (experiments/summary.md:5) decide none: "
    )
    assert missing == ()


def test_a_profile_with_no_numbers_keeps_its_sentence(tmp_path: Path) -> None:
    profile = "## Profile: k | b=1\n\nProfiled with ncu: 50 us per call.\n"
    sentence, missing = _check(_profiled(tmp_path / "log", profile), Pathology.WRONG_BOTTLENECK)
    assert sentence == _NO_NUMBERS
    assert missing == (_ASKED,)


@pytest.mark.parametrize(
    ("line", "said", "catalog_id"),
    [
        (
            'a = tl.dot(x_ptr, y_ptr, input_precision="tf32")',
            "dot input precision (experiments/exp_5/k.py:8)",
            "dot-input-precision",
        ),
        (
            "s = tl.where(i < n, x_ptr, float('-inf'))",
            "softmax masking (experiments/exp_5/k.py:8)",
            "unguarded-fully-masked-rows",
        ),
        (
            "p = tl.exp2(x_ptr); lse = i + tl.log(n)",
            "LSE base (experiments/exp_5/k.py:8)",
            "lse-base-mismatch",
        ),
        (
            "acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float16)",
            "an fp16 accumulator (experiments/exp_5/k.py:8)",
            "bf16-accumulation",
        ),
    ],
    ids=["tf32-dot", "masking", "lse-base", "accumulator"],
)
def test_every_suspect_of_a_wall_names_where_it_shows(
    tmp_path: Path, line: str, said: str, catalog_id: str
) -> None:
    failing = _KERNEL.replace("{line}", line)
    files = {
        "CLAUDE.md": _CLAUDE,
        "kernels/k.py": _KERNEL.replace("{line}", "pass"),
        "experiments/summary.md": _SUMMARY.replace("{verdict}", "FAIL"),
        "experiments/exp_5/k.py": failing,
    }
    wall = diagnose(_write(tmp_path / "log", files)).finding(Pathology.CORRECTNESS_WALL)
    assert wall is not None and wall.experiments == (3, 4, 5)
    assert wall.summary.endswith(f"Numeric suspects in the kernel text: {said}.")
    # The plan's step says where too, in the same words.
    action = next(a for a in wall.actions if a.catalog_id == catalog_id)
    assert action.text.startswith(f"{said}: ")


def test_a_bound_measured_in_profile_md_cites_its_row(tmp_path: Path) -> None:
    # The row that holds the numbers is cited, as the undecided sentence cites it.
    diagnosis = _profiled(tmp_path / "log", _PROFILE.format(dram="85", tc="4"))
    wrong = diagnosis.finding(Pathology.WRONG_BOTTLENECK)
    assert wrong is not None and wrong.experiments == (3, 4, 5)
    assert wrong.evidence[0].quote == "dram_pct=85, tc_pct=4"
    assert wrong.evidence[0].source == "experiments/profile.md:5"
