"""Experiments that measure the kernel rather than change it.

An effort that times copies of its kernel with a stage removed (no loads, no products, no
merge) records those copies as failing correctness, and says why: "wrong by construction;
timing only". Three such diagnostics in a row are measurements, not a correctness wall
(item 3). Profiling the kernel again is no variant of an idea either (item 1).
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from kernelopt.catalog import Catalog
from kernelopt.diagnose import Pathology, diagnose, diagnose_log
from kernelopt.diagnose.detectors.correctness_wall import deliberate_failure, fails_on_purpose
from kernelopt.experiments import Experiment, SourceRef
from kernelopt.experiments.records import Correctness, Status

from .conftest import UNRELATED_TITLES, exp, log_of

P = Pathology
REPO = Path(__file__).resolve().parents[2]
MLA_LOG = REPO / "docs" / "kernels" / "mla_decode"

ROWS = [
    (1, "eager baseline", 100.0, "PASS", "BASELINE"),
    (2, "first fused version", 60.0, "PASS", "KEPT"),
    (3, "hoist reciprocal", 59.5, "PASS", "KEPT"),
    (4, "copy without the key loads", 41.0, "FAIL", "NEUTRAL"),
    (5, "copy without the QK products", 48.0, "FAIL", "NEUTRAL"),
    (6, "copy without the merge", 55.0, "FAIL", "NEUTRAL"),
]


def _log(root: Path, verdicts: dict[int, str], encoding: str = "utf-8") -> Path:
    """A seed-layout log of :data:`ROWS` with an ``exp_N/result.md`` for each verdict (in
    ``encoding``)."""
    (root / "experiments").mkdir(parents=True)
    table = [
        "# Experiments Summary",
        "",
        "| Exp | Description | Latency | Unit | Correct | Status |",
        "|---|---|---|---|---|---|",
        *(f"| {n} | {title} | {lat} | us | {ok} | {st} |" for n, title, lat, ok, st in ROWS),
    ]
    (root / "experiments" / "summary.md").write_text("\n".join(table) + "\n", encoding="utf-8")
    (root / "experiments" / "profile.md").write_text(
        "## Profile: op v2 | b=32, s=1, t=4096\n### Bottleneck: Latency-bound\n", encoding="utf-8"
    )
    for number, verdict in verdicts.items():
        folder = root / "experiments" / f"exp_{number}"
        folder.mkdir()
        title = ROWS[number - 1][1]
        (folder / "result.md").write_text(
            f"# Experiment {number}: {title}\n\n- Status: NEUTRAL\n- Correctness: {verdict}\n",
            encoding=encoding,
        )
    return root


def test_three_timing_variants_in_a_row_are_no_wall(tmp_path: Path) -> None:
    variants = "FAIL (the stage-removal copies are wrong by construction; timing only)"
    root = _log(tmp_path / "variants", {n: variants for n in (4, 5, 6)})
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.CORRECTNESS_WALL) is None
    wall = next(c for c in diagnosis.checks if c.pathology is P.CORRECTNESS_WALL)
    assert "exps 4, 5, 6 fail by construction (timing variants), not counted" in wall.sentence
    # Result files written in UTF-16 (with its mark) say the same.
    wide = diagnose(_log(tmp_path / "utf16", {n: variants for n in (4, 5, 6)}, "utf-16"))
    assert wide.finding(P.CORRECTNESS_WALL) is None
    # The same three rows failing for a reason of their own are a wall.
    real = "FAIL (rel err 0.6 on the GPU for the tail tile)"
    wall_found = diagnose(_log(tmp_path / "real", {n: real for n in (4, 5, 6)}))
    found = wall_found.finding(P.CORRECTNESS_WALL)
    assert found is not None and found.experiments == (4, 5, 6)


def test_a_real_failure_beside_timing_variants_still_counts(tmp_path: Path) -> None:
    verdicts = {
        4: "FAIL (right at b=32; wrong on the GPU for the tail tile)",
        5: "FAIL (bf16 partials right; the removal variants are wrong by construction)",
        6: "FAIL (no key loads: timing only)",
    }
    diagnosis = diagnose(_log(tmp_path / "log", verdicts))
    wall = next(c for c in diagnosis.checks if c.pathology is P.CORRECTNESS_WALL)
    assert wall.sentence.startswith(
        "1 failure in the log (exp 4: 'wrong on the GPU for the tail tile'), 1 among the latest"
    )
    assert "exps 5, 6 fail by construction" in wall.sentence


def test_a_wall_names_the_timing_variants_inside_it(catalog: Catalog) -> None:
    # A devlog entry states its verdict in its own text.
    variant = "- Correctness: FAIL (the copies are wrong by construction, timing only)"
    experiments = [
        exp(1, 10.0, status=Status.BASELINE),
        exp(2, 9.0),
        exp(3, 9.1, status=Status.REVERTED, correctness=Correctness.FAIL),
        exp(4, 8.0, status=Status.NEUTRAL, correctness=Correctness.FAIL, text=variant),
        exp(5, 9.2, status=Status.REVERTED, correctness=Correctness.FAIL),
        exp(6, 9.3, status=Status.REVERTED, correctness=Correctness.FAIL),
    ]
    wall = diagnose_log(log_of(experiments), catalog=catalog).finding(P.CORRECTNESS_WALL)
    assert wall is not None and wall.experiments == (3, 5, 6)
    assert wall.summary.startswith(
        "The latest 3 attempts with a verdict (exps 3, 5, 6) all fail correctness (exp 4 "
        "fails by construction, not counted)."
    )


def test_a_deliberate_failure_is_read_from_the_record(catalog: Catalog) -> None:
    # The verdict's words live in the record alone (no file on disk states them), as a
    # reader of any layout leaves them.
    def variant(number: int, note: str) -> Experiment:
        where = SourceRef(path=f"experiments/exp_{number}/result.md", line=4)
        base = exp(number, 8.0, status=Status.NEUTRAL, correctness=Correctness.FAIL)
        refs = {**base.refs, "correctness": where, "correctness_note": where}
        return attrs.evolve(base, correctness_note=note, refs=refs)

    copies = "the stage-removal copies are wrong by construction; timing only"
    experiments = [
        exp(1, 10.0, status=Status.BASELINE),
        exp(2, 9.0),
        *(variant(n, copies) for n in (3, 4, 5)),
    ]
    log = log_of(experiments, root="/nonexistent/log")
    diagnosis = diagnose_log(log, catalog=catalog)
    assert diagnosis.finding(P.CORRECTNESS_WALL) is None
    wall = next(c for c in diagnosis.checks if c.pathology is P.CORRECTNESS_WALL)
    assert "exps 3, 4, 5 fail by construction (timing variants), not counted" in wall.sentence
    evidence = deliberate_failure(log.experiments[2])
    assert evidence is not None
    assert evidence.source == "experiments/exp_3/result.md:4"
    assert evidence.quote == copies and evidence.experiments == (3,)
    # The same record failing for a reason of its own is a wall.
    real = [*experiments[:2], *(variant(n, "rel err 0.6 for the tail tile") for n in (3, 4, 5))]
    walled = diagnose_log(log_of(real, root="/nonexistent/log"), catalog=catalog)
    found = walled.finding(P.CORRECTNESS_WALL)
    assert found is not None and found.experiments == (3, 4, 5)


@pytest.mark.parametrize(
    ("verdict", "deliberate"),
    [
        ("FAIL (variants are wrong by construction; timing only)", True),
        ("FAIL (bf16 partials right (rel err 2.3e-03); the removal variants are wrong by "
         "construction (timing only))", True),
        ("**FAIL** — timing-only copies, NaN outputs", True),
        ("FAIL (right at b=32 t=4096; wrong on the GPU for the unpipelined tail tile)", False),
        ("FAIL (rel err 0.6)", False),
        ("FAIL", False),
        ("FAIL (timing only; NaN in the shipped kernel too)", False),
        ("FAIL (the merge is wrong by construction: it drops the last piece)", False),
        ("FAIL (deliberately wrong: stores removed to time the loop)", True),
    ],
)  # fmt: skip
def test_what_a_deliberate_failure_says(verdict: str, deliberate: bool) -> None:
    assert fails_on_purpose(verdict) is deliberate


def test_the_mla_log_counts_only_its_real_failure() -> None:
    # Exps 3, 8, 35 and 43 time stage-removal copies ("wrong by construction; timing only");
    # exp 6 (keys in M, wrong on the GPU for the tail tile) is the one real failure.
    diagnosis = diagnose(MLA_LOG)
    wall = next(c for c in diagnosis.checks if c.pathology is P.CORRECTNESS_WALL)
    counted = wall.sentence.split(" among the latest")[0]
    assert re.match(r"\d+ failures? in the log \(exps? 6\b", counted), counted
    assert not any(f" {n}," in counted or f" {n})" in counted for n in (3, 8, 35, 43))
    assert "exps 3, 8, 35, 43 fail by construction (timing variants), not counted" in wall.sentence


def test_profiling_again_is_no_repetition_loop(tmp_path: Path) -> None:
    # Three of the stalled attempts profile the kernel (tagged with the catalog's roofline
    # entry); profiling is what item 2 asks for, not a variant of an idea.
    root = tmp_path / "log"
    (root / "experiments").mkdir(parents=True)
    rows = [
        (1, "eager baseline", 100.0, "PASS", "BASELINE", ""),
        (2, "first fused version", 60.0, "PASS", "KEPT", ""),
        (3, "stage timeline", 60.0, "PASS", "NEUTRAL", "roofline-analysis"),
        (4, "hoist reciprocal", 59.8, "PASS", "KEPT", ""),
        (5, "Nsight Compute pipes and stalls", 59.8, "PASS", "NEUTRAL", "roofline-analysis"),
        (6, "reorder argument checks", 59.7, "PASS", "KEPT", ""),
        (7, "copies with stages removed", 59.7, "PASS", "NEUTRAL", "roofline-analysis"),
    ]
    table = [
        "# Experiments Summary",
        "",
        "| Exp | Description | Latency | Unit | Correct | Status | Tags |",
        "|---|---|---|---|---|---|---|",
        *(f"| {n} | {t} | {lat} | us | {ok} | {st} | {tags} |" for n, t, lat, ok, st, tags in rows),
    ]
    (root / "experiments" / "summary.md").write_text("\n".join(table) + "\n", encoding="utf-8")
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.LOCAL_MINIMUM) is not None  # five attempts, 0.5 % in all
    assert diagnosis.finding(P.REPETITION_LOOP) is None


_SMALL = """import triton
import triton.language as tl


@triton.jit
def k(X, O, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(O + offs, tl.load(X + offs))
"""
# The next design, planned and snapshotted but not yet run: three times the code.
_PLANNED = _SMALL + "".join(
    f"""

@triton.jit
def stage{i}(X, O, A{i}: tl.constexpr, B{i}: tl.constexpr, C{i}: tl.constexpr):
    offs = tl.arange(0, A{i})
    if B{i} > 0:
        x = tl.load(X + offs)
    else:
        x = tl.zeros([A{i}], tl.float32)
    if C{i} > 1:
        x = x * 2
    tl.store(O + offs, x)
"""
    for i in range(4)
)


def test_a_planned_experiment_is_not_the_kernel_growing(tmp_path: Path) -> None:
    # Exps 3-7 stall on the kernel exp 2 kept; exp 8 is only a plan with the prototype it
    # will time. Nothing of it has run, so it is not the kernel the effort stands on.
    root = tmp_path / "log"
    (root / "experiments").mkdir(parents=True)
    rows = [
        (1, "eager baseline", 100.0, "BASELINE"),
        (2, "first fused version", 60.0, "KEPT"),
        *(
            (n, t, 60.0 - 0.1 * n, "KEPT")
            for n, t in zip(range(3, 8), UNRELATED_TITLES, strict=False)
        ),
    ]
    table = [
        "| Exp | Description | Latency | Unit | Correct | Status |",
        "|---|---|---|---|---|---|",
        *(f"| {n} | {t} | {lat:.1f} | us | PASS | {st} |" for n, t, lat, st in rows),
    ]
    (root / "experiments" / "summary.md").write_text("\n".join(table) + "\n", encoding="utf-8")
    for number, text in ((2, _SMALL), (8, _PLANNED)):
        folder = root / "experiments" / f"exp_{number}"
        folder.mkdir()
        (folder / "k.py").write_text(text, encoding="utf-8")
    (root / "experiments" / "exp_8" / "plan.md").write_text(
        "Split the kernel into four stages behind compile-time switches.\n", encoding="utf-8"
    )
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.LOCAL_MINIMUM) is not None
    assert diagnosis.finding(P.OVER_ENGINEERING) is None
    item6 = next(c for c in diagnosis.checks if c.pathology is P.OVER_ENGINEERING)
    assert "latest snapshot (exp 2)" in item6.sentence
