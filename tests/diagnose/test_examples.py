"""The example logs shipped in examples/logs/ diagnose as they were written to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.experiments import read_log

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"
EXAMPLE_LOGS = sorted(p.name for p in EXAMPLES.iterdir() if (p / "experiments").is_dir())
P = Pathology


def _found(name: str, **kwargs: object) -> dict[Pathology, object]:
    diagnosis = diagnose(EXAMPLES / name, **kwargs)  # type: ignore[arg-type]
    assert len(diagnosis.checks) == 9 and not diagnosis.unread
    assert all("internal error" not in c.sentence for c in diagnosis.checks)
    return {f.pathology: f for f in diagnosis.findings}


def test_mla_decode_plateau() -> None:
    diagnosis = diagnose(EXAMPLES / "mla-decode-plateau")
    found = {f.pathology: f for f in diagnosis.findings}
    assert set(found) == {
        P.REPETITION_LOOP,
        P.LOCAL_MINIMUM,
        P.MISSING_FUNDAMENTAL,
        P.IGNORED_PRIOR_RESEARCH,
        P.BUFFER_PERSISTENCE,
        P.OVERLOOKED_SHORTCUT,
        # Latency-bound at 19% of its floor, yet exps 2, 3 and 5 tune tiles and stages.
        P.WRONG_BOTTLENECK,
    }
    assert found[P.WRONG_BOTTLENECK].experiments == (2, 3, 5)
    loop = found[P.REPETITION_LOOP]
    assert "num_stages" in loop.summary and loop.experiments == (3, 4, 6)
    assert found[P.LOCAL_MINIMUM].experiments == (2, 3, 4, 5, 6)
    missing = [a.catalog_id for a in found[P.MISSING_FUNDAMENTAL].actions]
    assert "split-kv-flash-decoding" in missing and "split-kv-lse-combine" in missing
    assert "online-softmax" not in missing and "head-grouping-mma-tile" not in missing
    assert [e.source for e in found[P.BUFFER_PERSISTENCE].evidence] == [
        "kernels/mla_decode.py:89",
        "kernels/mla_decode.py:90",
    ]
    assert "s_q = 1" in found[P.OVERLOOKED_SHORTCUT].summary
    assert (
        found[P.IGNORED_PRIOR_RESEARCH].evidence[0].source.startswith("experiments/exp_3/plan.md:")
    )
    # The design gap is the root cause; the plateau is its symptom.
    assert diagnosis.root_causes[0].startswith("Missing fundamental")
    assert any("symptom" in s for s in diagnosis.root_causes)
    summary = diagnosis.summary
    assert (summary.family, summary.best.experiment, summary.best.value) == ("mla-decode", 5, 273.2)  # type: ignore[union-attr]
    assert summary.stall == (2, 3, 4, 5, 6)


def test_mla_decode_plateau_before_the_plateau() -> None:
    found = _found("mla-decode-plateau", until=4)
    assert P.LOCAL_MINIMUM not in found and P.REPETITION_LOOP not in found
    assert P.MISSING_FUNDAMENTAL in found  # the design gap was there from the start


def test_healthy_run_has_no_finding() -> None:
    assert _found("healthy-run") == {}


def test_repetition_loop() -> None:
    found = _found("repetition-loop")
    assert set(found) == {P.REPETITION_LOOP, P.LOCAL_MINIMUM, P.IGNORED_PRIOR_RESEARCH}
    # profile.md, written after exp 3, ranks vectorized, coalesced loads first; exps 4-9
    # only vary num_stages: its Top 3 was ignored, and the plan takes its idea from there.
    ignored = found[P.IGNORED_PRIOR_RESEARCH]
    assert [e.source for e in ignored.evidence] == ["experiments/profile.md:9"]  # type: ignore[attr-defined]
    assert [a.catalog_id for a in ignored.actions] == ["vectorized-coalesced-loads"]  # type: ignore[attr-defined]
    assert ignored.experiments == (4, 5, 6, 7, 8, 9)  # type: ignore[attr-defined]
    plan = diagnose(EXAMPLES / "repetition-loop").render_plan()
    assert "Take the next idea from the prior-research items of this plan." in plan
    assert "num_stages" in found[P.REPETITION_LOOP].summary  # type: ignore[attr-defined]
    assert found[P.REPETITION_LOOP].experiments == (4, 5, 6, 7, 8, 9)  # type: ignore[attr-defined]
    assert found[P.LOCAL_MINIMUM].experiments == (4, 5, 6, 7, 8, 9)  # type: ignore[attr-defined]


def test_correctness_wall() -> None:
    found = _found("correctness-wall")
    # The v2 kernel installs a triton.set_allocator lambda that calls torch.empty at every
    # launch needing global scratch (its TMA descriptors): a per-launch allocation.
    # profile.md, written after exp 2, ranks warp specialization; exps 3-5 cut stages
    # instead: its Top 3 was ignored.
    assert set(found) == {P.CORRECTNESS_WALL, P.BUFFER_PERSISTENCE, P.IGNORED_PRIOR_RESEARCH}
    ignored = found[P.IGNORED_PRIOR_RESEARCH]
    assert [a.catalog_id for a in ignored.actions] == ["warp-specialization"]  # type: ignore[attr-defined]
    assert ignored.experiments == (3, 4, 5)  # type: ignore[attr-defined]
    wall = found[P.CORRECTNESS_WALL]
    assert wall.experiments == (3, 4, 5)  # type: ignore[attr-defined]
    # The kernel converts its LSE with ln 2, guards fully masked rows and accumulates in
    # fp32: none of those suspects may be named. Its dots take bf16 tiles, which tf32
    # settings do not touch, and the attempts removed work: no "numerical" verdict.
    for cleared in (
        "LSE base",
        "softmax masking",
        "bf16 accumulator",
        "fp16 accumulator",
        "numerical",
    ):
        assert cleared not in wall.summary  # type: ignore[attr-defined]
    ids = [a.catalog_id for a in wall.actions]  # type: ignore[attr-defined]
    assert "dot-input-precision" not in ids
    assert "exp 2, the last that passed" in wall.actions[0].text  # type: ignore[attr-defined]
    scratch = found[P.BUFFER_PERSISTENCE]
    assert [e.source for e in scratch.evidence] == ["kernels/mla_decode.py:28"]  # type: ignore[attr-defined]
    assert "set_allocator" in scratch.summary  # type: ignore[attr-defined]
    diagnosis = diagnose(EXAMPLES / "correctness-wall")
    assert len(diagnosis.root_causes) == 1  # wrong results first: the wall stands alone


def test_wrong_bottleneck() -> None:
    found = _found("wrong-bottleneck")
    assert set(found) == {P.WRONG_BOTTLENECK}
    wrong = found[P.WRONG_BOTTLENECK]
    assert "compute-bound" in wrong.summary and "optimize memory" in wrong.summary  # type: ignore[attr-defined]
    # exp 2 (split-KV, +42.6 %, a new best) fit the kernel; exp 3 adds splits (parallelism);
    # exp 4's warp specialization is the catalog's remedy for compute-bound kernels whose
    # tensor cores wait. Deeper prefetch and smaller tiles (exps 5, 6) are memory-side.
    assert wrong.experiments == (5, 6)  # type: ignore[attr-defined]
    assert "exp 2, a new best by 42.6%, not counted" in wrong.summary  # type: ignore[attr-defined]
    ids = [a.catalog_id for a in wrong.actions]  # type: ignore[attr-defined]
    # The kernel already has exp2 with the folded scale, head grouping and a
    # warp_specialize switch: none of them is recommended again.
    assert ids[0] == "block-pointers-tma"
    assert not {"exp2-folded-scale", "head-grouping-mma-tile", "warp-specialization"} & set(ids)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
def test_every_example_is_documented(name: str) -> None:
    assert f"`{name}`" in (EXAMPLES / "README.md").read_text()


def _measured() -> set[float]:
    """Every time (us, one decimal) in the measurement files the examples quote."""
    runs = EXAMPLES / "measurements"
    times: set[float] = set()
    for line in (runs / "sweep1_v1.jsonl").read_text().splitlines():
        row = json.loads(line)
        times |= {round(row["us"], 1), round(row["us_graph"], 1)}
    for line in (runs / "sweep2_v2.txt").read_text().splitlines():
        if line.count("|") == 3:  # s h bm bn ... | err | us graph | frac
            cells = line.split("|")[2].split()
            if cells and cells[0] != "us":
                times |= {float(cells[0]), float(cells[1])}
    for row in json.loads((runs / "anchors-h200-2026-12-02.json").read_text())["rows"]:
        times |= {round(row["us_events"], 1), round(row["us_graph"], 1)}
    return times


@pytest.mark.parametrize("name", EXAMPLE_LOGS)
def test_every_latency_is_a_measured_row(name: str) -> None:
    measured = _measured()
    log = read_log(EXAMPLES / name)
    assert log.experiments
    for experiment in log.experiments:
        assert experiment.unit == "us" and experiment.latency in measured, experiment.label


def test_the_workload_profile_is_recorded_by_its_script(tmp_path: Path) -> None:
    script = EXAMPLES / "mla-decode-plateau" / "record_workload.py"
    out = tmp_path / "workload_profile.md"
    done = subprocess.run(
        [sys.executable, str(script), "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    shipped = EXAMPLES / "mla-decode-plateau" / "experiments" / "workload_profile.md"
    assert out.read_text() == shipped.read_text()


def test_readme_counts_the_snapshots_as_diagnose_does() -> None:
    """The over-engineering paragraph quotes the detector's own counts of each snapshot."""
    from kernelopt.diagnose.context import build_context
    from kernelopt.diagnose.detectors.over_engineering import total_complexity

    def counts(name: str, number: int) -> tuple[int, int, int]:
        ctx = build_context(read_log(EXAMPLES / name), None, family=None)
        c = total_complexity(ctx, number)
        return c.lines, c.branches, c.constexprs

    v1, v2, switch = (
        counts("healthy-run", 5),
        counts("correctness-wall", 2),
        counts("correctness-wall", 3),
    )
    text = " ".join((EXAMPLES / "README.md").read_text().split())
    assert (
        f"grow from {v1[0]} to {v2[0]} code lines, from {v1[1]} to {v2[1]} branches and from "
        f"{v1[2]} to {v2[2]} constexpr knobs" in text
    )
    assert f"({switch[0]} code lines, {switch[1]} branches, {switch[2]} knobs)" in text
