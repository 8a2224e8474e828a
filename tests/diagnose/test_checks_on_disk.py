"""Checklist items on logs written to disk: profiling data with and without `until`, a
diagnosis kept in the log, buffers a launcher takes, stale and time-dominant workload
profiles, branch growth, the plan's header, logs with nothing to judge."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.catalog import Catalog
from kernelopt.diagnose import (
    DiagnoseParams,
    OverEngineeringParams,
    Pathology,
    diagnose,
    diagnose_log,
    render_plan,
)
from kernelopt.experiments import Correctness, Status

from .conftest import exp, kernel, log_of

P = Pathology
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"

CLAUDE = """# MLA decode kernel (Triton)

Kernel: kernels/mla_decode.py

## Rules

- Time with kernelopt.bench (CUDA events, L2 flushed, median).
"""
SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | torch eager baseline | 1159 | us | PASS | BASELINE |
| 2 | naive Triton MLA decode with an online softmax | 2290 | us | PASS | REVERTED |
"""
# A launcher taking caller-owned outputs, allocating them only when none is given.
LAUNCHER = """import torch
import triton
import triton.language as tl


@triton.jit
def _kernel(Q, O, n: tl.constexpr):
    pass


def mla_decode(q, out: torch.Tensor | None = None):
    if out is None:
        out = torch.empty_like(q)
    _kernel[(1,)](q, out, 4)
    return out
"""


def _seed_log(root: Path) -> Path:
    (root / "experiments").mkdir(parents=True)
    (root / "kernels").mkdir()
    (root / "CLAUDE.md").write_text(CLAUDE, encoding="utf-8")
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    (root / "kernels" / "mla_decode.py").write_text(LAUNCHER, encoding="utf-8")
    return root


def _sentence(root: Path, pathology: Pathology, **kwargs: object) -> str:
    diagnosis = diagnose(root, **kwargs)  # type: ignore[arg-type]
    return next(c.sentence for c in diagnosis.checks if c.pathology is pathology)


def test_no_profiling_data_fires_with_and_without_until(tmp_path: Path) -> None:
    root = _seed_log(tmp_path / "log")
    (root / "experiments" / "workload_profile.md").write_text(
        "<!-- kernelopt workload-profile v1 -->\n# Workload profile\n"
    )
    entry = root / "docs" / "knowledge" / "anti-patterns" / "slow.md"
    entry.parent.mkdir(parents=True)
    entry.write_text("# Slow\n\n- id: slow\n- kind: anti-pattern\n\nncu: 2.4e+05 us per call\n")
    plans = {until: diagnose(root, until=until).render_plan() for until in (None, 3, 99)}
    assert plans[None] == plans[3] == plans[99]
    for until in (None, 2, 3, 99):
        assert "chosen blind" in _sentence(root, P.WRONG_BOTTLENECK, until=until), until


def test_a_diagnosis_in_the_log_is_not_ignored_advice(tmp_path: Path) -> None:
    root = _seed_log(tmp_path / "log")
    first = diagnose(root)
    (root / "experiments" / "diagnosis.md").write_text(first.render_plan(), encoding="utf-8")
    rows = [f"| {n} | variant {n} | {2000 - n} | us | PASS | REVERTED |" for n in range(3, 7)]
    with (root / "experiments" / "summary.md").open("a", encoding="utf-8") as summary:
        summary.write("\n".join(rows) + "\n")
    assert diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH) is None


def test_a_note_of_unknown_date_is_not_said_to_precede_the_attempts(tmp_path: Path) -> None:
    root = _seed_log(tmp_path / "log")
    rows = [f"| {n} | variant {n} | {2000 - n} | us | PASS | REVERTED |" for n in range(3, 7)]
    with (root / "experiments" / "summary.md").open("a", encoding="utf-8") as summary:
        summary.write("\n".join(rows) + "\n")
    (root / "experiments" / "ideas.md").write_text(
        "# Ideas\n\n## Next steps\n\n- Persistent grid scheduling over tiles\n"
    )
    finding = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert "that followed" not in finding.summary
    assert "where the note stands among them is not recorded" in finding.summary


def test_a_plans_own_experiment_acts_on_it(tmp_path: Path) -> None:
    # exp_N/plan.md is written before experiment N runs: N is the first that can act on
    # it, so the idea N carried out was not ignored, and nothing was "made after" N.
    root = _seed_log(tmp_path / "log")
    rows = [
        "| 3 | warp specialized producer consumer pipeline | 1100 | us | PASS | KEPT |",
        *(f"| {n} | variant {n} | {1100 - n} | us | PASS | REVERTED |" for n in range(4, 7)),
    ]
    with (root / "experiments" / "summary.md").open("a", encoding="utf-8") as summary:
        summary.write("\n".join(rows) + "\n")
    plan = root / "experiments" / "exp_3" / "plan.md"
    plan.parent.mkdir()
    plan.write_text(
        "# Plan for experiment 3\n\n## Next steps\n\n"
        "- Warp specialized producer consumer pipeline with a dedicated loader warp\n",
        encoding="utf-8",
    )
    assert diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH) is None
    plan.write_text(
        "# Plan for experiment 3\n\n## Next steps\n\n"
        "- Persistent grid scheduling over the output tiles\n",
        encoding="utf-8",
    )
    finding = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert "the 3+ attempts that followed (made in exp 3's plan)" in finding.summary


def test_missing_fundamental_agrees_with_buffer_persistence_on_out(tmp_path: Path) -> None:
    root = _seed_log(tmp_path / "log")
    diagnosis = diagnose(root)
    buffers = next(c for c in diagnosis.checks if c.pathology is P.BUFFER_PERSISTENCE)
    assert not buffers.checked and "mla_decode() takes out=" in buffers.sentence
    missing = diagnosis.finding(P.MISSING_FUNDAMENTAL)
    assert missing is not None
    assert "buffer-persistence" not in [a.catalog_id for a in missing.actions]
    assert "split-kv-flash-decoding" in [a.catalog_id for a in missing.actions]


def _workload(root: Path, *, heavy: int = 3, light: int = 7) -> Path:
    """A softmax trace where ``heavy`` calls of one shape take 96 % of the time."""
    from kernelopt.workload import profile_trace, write_profile_md

    trace = root / "runs" / "trace.jsonl"
    trace.parent.mkdir(parents=True, exist_ok=True)
    call = {"op": "softmax", "args": {"x": {"shape": [4096, 1024], "dtype": "float16"}}}
    small = {"op": "softmax", "args": {"x": {"shape": [8, 128], "dtype": "float16"}}}
    lines = [json.dumps({**call, "duration_us": 320.0})] * heavy
    lines += [json.dumps({**small, "duration_us": 5.0})] * light
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    profile = root / "experiments" / "workload_profile.md"
    write_profile_md(profile_trace(str(trace)), str(profile))
    return trace


def test_a_shape_dominating_the_time_is_a_shortcut(tmp_path: Path) -> None:
    root = _seed_log(tmp_path / "log")
    _workload(root)  # the 4096 x 1024 shape: 30 % of the calls, 96 % of the time
    finding = diagnose(root).finding(P.OVERLOOKED_SHORTCUT)
    assert finding is not None and "30% of calls, 96% of time" in finding.summary
    assert [a.catalog_id for a in finding.actions] == ["dominant-shape-specialization"]
    assert finding.severity.value == "high"


def test_a_stale_workload_profile_asks_for_the_inspector(tmp_path: Path) -> None:
    root = _seed_log(tmp_path / "log")
    trace = _workload(root)
    assert "may be stale" not in diagnose(root).render_plan()
    with trace.open("a", encoding="utf-8") as more:  # calls recorded after the profile
        more.write(trace.read_text(encoding="utf-8"))
    finding = diagnose(root).finding(P.OVERLOOKED_SHORTCUT)
    assert finding is not None and "may be stale" in finding.summary
    assert "runs/trace.jsonl holds 20 records, the profile read 10" in finding.summary
    assert finding.actions[0].text.startswith("Re-run the workload inspector")
    assert "kernelopt inspect runs/trace.jsonl" in finding.actions[0].text
    # Same records, written an hour after the profile: stale too.
    _workload(root)
    profile = root / "experiments" / "workload_profile.md"
    stamp = profile.stat().st_mtime
    os.utime(trace, (stamp + 3600, stamp + 3600))
    assert "written 60 min after the profile" in diagnose(root).render_plan()


def _snapshot(number: int, branches: int) -> object:
    body = "\n".join(f"    if x > {i}:\n        x = {i}" for i in range(branches))
    text = f"import triton\n\n\ndef launch(x):\n    x = 0\n{body}\n    return x\n" + "\n".join(
        f"y{i} = {i}" for i in range(40)
    )
    return kernel(text, path=f"experiments/exp_{number}/k.py", role="snapshot", experiment=number)


@pytest.mark.parametrize(("added", "fires"), [(6, True), (5, False)])
def test_over_engineering_counts_new_branches(catalog: Catalog, added: int, fires: bool) -> None:
    experiments = [
        exp(n, 50.0 - (5 if n == 2 else 0) - 0.1 * n, status=Status.KEPT) for n in range(1, 7)
    ]
    kernels = (_snapshot(2, 2), _snapshot(5, 2 + added))
    log = log_of(experiments, kernels=kernels)
    finding = diagnose_log(log, catalog=catalog).finding(P.OVER_ENGINEERING)
    assert (finding is not None) is fires
    if finding is not None:
        assert f"branches 2 → {2 + added}" in finding.summary
    strict = DiagnoseParams(over_engineering=OverEngineeringParams(min_new_branches=100))
    assert diagnose_log(log, catalog=catalog, params=strict).finding(P.OVER_ENGINEERING) is None


def test_a_clean_kernel_text_answers_the_generic_suspects(catalog: Catalog) -> None:
    fp32 = "acc = tl.zeros((16, 16), dtype=tl.float32)\nacc += tl.dot(p.to(tl.bfloat16), v)\n"
    failing = [
        exp(1, 10.0, status=Status.BASELINE),
        *(exp(n, 9.0, status=Status.FAILED, correctness=Correctness.FAIL) for n in (2, 3, 4)),
    ]
    wall = diagnose_log(log_of(failing, kernels=(kernel(fp32),)), catalog=catalog).finding(
        P.CORRECTNESS_WALL
    )
    assert wall is not None and "No numeric suspect" in wall.summary
    assert [a.catalog_id for a in wall.actions] == [None]  # only: diff against the last pass
    # Without kernel text the suspects stay to check, the tf32 ladder in the seed's order.
    blind = diagnose_log(log_of(failing), catalog=catalog).finding(P.CORRECTNESS_WALL)
    assert blind is not None
    ids = [a.catalog_id for a in blind.actions]
    assert ids[1:] == [
        "dot-input-precision",
        "lse-base-mismatch",
        "unguarded-fully-masked-rows",
        "bf16-accumulation",
    ]
    assert "'tf32x3' → 'tf32' → 'ieee'" in blind.actions[1].text


def test_the_header_names_the_best_at_its_point_without_calling_it_new() -> None:
    diagnosis = diagnose(EXAMPLES / "mla-decode-plateau")
    import attrs

    best = attrs.evolve(diagnosis.summary.best, point="b=2 s=1 kv=fp8")  # type: ignore[misc]
    summary = attrs.evolve(diagnosis.summary, best=best)
    plan = render_plan(attrs.evolve(diagnosis, summary=summary))
    assert "Best so far at b=2 s=1 kv=fp8: 273.2 us (exp 5)." in plan
    assert "Latest new best" not in plan


def test_the_header_names_the_best_by_the_number_the_new_bests_use() -> None:
    # The new bests are listed as "exp N": the best must read so too, whether its label is
    # a bare row number or a devlog entry's title.
    diagnosis = diagnose(EXAMPLES / "mla-decode-plateau")
    import attrs

    for label, shown in (
        ("5", "(exp 5)."),
        ("2026-12-02 BLOCK_N=64", "(exp 5: 2026-12-02 BLOCK_N=64)."),
        ("step 5", "(step 5)."),
        # A date holding the number is not the number.
        ("2026-04-05 BLOCK_N=64", "(exp 5: 2026-04-05 BLOCK_N=64)."),
    ):
        best = attrs.evolve(diagnosis.summary.best, label=label)  # type: ignore[misc]
        plan = render_plan(
            attrs.evolve(diagnosis, summary=attrs.evolve(diagnosis.summary, best=best))
        )
        assert f"Best so far: 273.2 us {shown}" in plan


def test_a_log_of_no_attempt_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["diagnose", str(EXAMPLES / "measurements")]) == 2
    captured = capsys.readouterr()
    assert "Nothing to judge" in captured.out and "No pathology found" not in captured.out
    assert "got 49 experiments read, none of them an attempt" in captured.err


def test_a_trace_of_calls_is_named_as_calls(tmp_path: Path) -> None:
    root = _seed_log(tmp_path / "log")
    _workload(root)
    (line,) = [s for s in diagnose(root).summary.other_series if "trace" in s]
    assert line == "runs/trace.jsonl [trace]: 10 calls"


def _bench_log(root: Path, backend: str) -> None:
    """A log written with kernelopt.bench only: six experiments, no profile.md."""
    from kernelopt.bench import Measurement, to_result_row, write_experiment

    root.mkdir()
    (root / "CLAUDE.md").write_text("# Row softmax kernel (Triton)\n", encoding="utf-8")
    for number, median in enumerate((100.0, 99.5, 99.8, 99.0, 99.9, 99.2), start=1):
        m = Measurement(samples=[median] * 5, gpu="NVIDIA H200", backend=backend)
        write_experiment(
            root / "experiments",
            experiment=number,
            title="first kernel" if number == 1 else f"num_warps={2**number}",
            rows=[to_result_row(m, point="rows=32 n=256", impl=f"v{number}")],
            status="BASELINE" if number == 1 else "REVERTED",
            correctness="PASS",
            date="2026-12-05",
        )


def test_rows_kernelopt_timed_on_the_device_count_as_per_kernel_timing(tmp_path: Path) -> None:
    # kernelopt.bench's timer is the CUDA-event instrumentation the catalog recommends: a
    # log it wrote is not "chosen blind", nor missing cuda-event-instrumentation.
    _bench_log(tmp_path / "gpu", "cuda-events")
    diagnosis = diagnose(tmp_path / "gpu", family="softmax")
    missing = diagnosis.finding(P.MISSING_FUNDAMENTAL)
    assert missing is None or "cuda-event-instrumentation" not in missing.summary
    assert diagnosis.finding(P.WRONG_BOTTLENECK) is None
    assert diagnosis.finding(P.LOCAL_MINIMUM) is not None
    # Host-clock rows (the interpreter on a CPU) time no kernel: still flagged.
    _bench_log(tmp_path / "cpu", "cpu-perf-counter")
    diagnosis = diagnose(tmp_path / "cpu", family="softmax")
    wrong = diagnosis.finding(P.WRONG_BOTTLENECK)
    assert wrong is not None and "No profiling data" in wrong.summary


def test_the_plan_title_names_the_directory_when_diagnosed_as_dot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _bench_log(tmp_path / "row-softmax", "cuda-events")
    monkeypatch.chdir(tmp_path / "row-softmax")
    plan = diagnose(".").render_plan()
    assert plan.startswith("# Plan: row-softmax — clean-context diagnosis\n")
