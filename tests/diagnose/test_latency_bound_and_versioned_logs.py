"""Logs of small launch-bound kernels (a KV-cache append, a RoPE, a per-token FP8 quant, a
grouped GEMM) as diagnose reads them: the family a cache write names, tuning inside a
latency-bound kernel, a correctness fix after a failure, floors the log already records,
versions kept in files of their own, a shape condition the workload never meets, a
launcher that allocates only what the caller leaves out, and points of other bounds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.diagnose.detectors.wrong_bottleneck import _latency_aim
from kernelopt.diagnose.family import infer_family
from kernelopt.diagnose.model import Diagnosis
from kernelopt.experiments import read_log
from kernelopt.workload import Call, parse_call_record, profile_calls, render_profile_md

from .conftest import exp

P = Pathology
MEASURED = (
    "| Point | Impl | Median | P20 | P80 | Unit | Floor | Of floor | Speedup | Mode | Bound |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def _result(number: int, title: str, status: str, correct: str, tags: str, rows: str) -> str:
    """A result.md as kernelopt.bench writes it; ``rows`` the Measurements rows."""
    lines = [
        f"# Experiment {number}: {title}",
        "",
        f"- Status: {status}",
        f"- Correctness: {correct}",
        "- Date: 2026-12-07",
        "- GPU: NVIDIA H100 80GB HBM3",
    ]
    if tags:
        lines.append(f"- Tags: {tags}")
    text = "\n".join(lines) + "\n"
    if rows:
        text += "\n## Measurements\n" + MEASURED + rows
    return text


def _summary(rows: Sequence[tuple[int, str, str, str, str, str]]) -> str:
    """summary.md of (number, title, latency, correct, status, tags) rows."""
    head = (
        "# Experiments Summary\n\n"
        "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {n} | 2026-12-07 | {title} | {latency} | {'us' if latency else ''} |  | {correct} "
        f"| {status} | {tags} |\n"
        for n, title, latency, correct, status, tags in rows
    )
    return head + body


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _sentence(diagnosis: Diagnosis, pathology: Pathology) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is pathology)


# --- a RoPE log: latency-bound, CUDA graphs remove 47 % --------------------------------

ROPE_PROFILE = """## Profile: rope v2 | b=32, s=1, t=4096, h=16
### Stages
| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
|-------|----------|-----|-------|------|------------|-----------|
| rope | 3.633 us | 0.0043 | 1.3 | n/a (no counters) | Latency-bound | 1% of roofline floor |
### Bottleneck: Latency-bound
Root cause: Arithmetic intensity 0.708 FLOP/B is below the ridge 223 FLOP/B, so bytes set \
the floor (0.04887 us at 3.02 TB/s), 1% of the measured time. It reaches only 41 GB/s (1% of \
the copy bandwidth) and 0.0287 TFLOP/s (0.0043% of the matmul rate), so it waits on latency \
(too little work in flight, serial dependences or launches); CUDA graphs remove 47% of the time.
### Top 3 Opportunities (ranked by estimated impact)
1. Software Pipelining of Loads and Compute (`software-pipelining`) -- est. 52% gain
2. Vectorized, Coalesced Loads (`vectorized-coalesced-loads`) -- est. 52% gain
3. Roofline Floor Before Choosing an Optimization (`roofline-analysis`) -- est. 52% gain
"""
ROPE_ROWS = [
    (1, "torch eager RoPE (baseline)", "38.6281", "PASS", "BASELINE", ""),
    (2, "Triton v1: one program per token", "6.92497", "PASS", "KEPT", ""),
    (3, "v2: fuse q and k into one launch", "3.63308", "PASS", "KEPT", "kernel-fusion"),
    (4, "v3: BLOCK_T=4 tokens per program", "", "FAIL", "REVERTED", "persistent-grid"),
    (
        5,
        "v4: BLOCK_T=4 tokens per program, positions per token (fixed)",
        "3.60785",
        "PASS",
        "NEUTRAL",
        "persistent-grid",
    ),
    (6, "v5: BLOCK_T=8, num_warps=2", "3.60989", "PASS", "NEUTRAL", "persistent-grid"),
]


def _rope_log(root: Path, profile: str = ROPE_PROFILE) -> Path:
    files = {
        "CLAUDE.md": "# CLAUDE.md - in-place RoPE\n\n- Family: elementwise\n",
        "experiments/summary.md": _summary(ROPE_ROWS),
        "experiments/profile.md": profile,
    }
    for number, title, latency, correct, status, tags in ROPE_ROWS:
        rows = ""
        if latency:
            rows = (
                f"| b=32 s=1 t=4096 h=16 | v{number} | {latency} | {latency} | {latency} | us "
                "| 0.0488689 | 1.4% | 1.0 | cold | memory |\n"
                f"| b=8 s=512 t=512 h=16 | v{number} | 9.75 | 9.7 | 9.8 | us | 6.25522 | 64.2% "
                "| 1.0 | cold | memory |\n"
            )
        note = (
            "PASS (rel err 3.7e-08 vs float64)" if correct == "PASS" else "FAIL (rel err 9.9e-01)"
        )
        files[f"experiments/exp_{number}/result.md"] = _result(
            number, title, status, note, tags, rows
        )
    return _write(root, files)


def test_tuning_inside_a_launch_bound_kernel_is_the_wrong_bottleneck(tmp_path: Path) -> None:
    diagnosis = diagnose(_rope_log(tmp_path / "rope"))
    finding = diagnosis.finding(P.WRONG_BOTTLENECK)
    assert finding is not None
    # Token blocks and warps tagged persistent-grid do not remove the launch the graph
    # share measures; exp 4 failed, exps 5 and 6 tuned.
    assert finding.experiments == (4, 5, 6)
    assert "'CUDA graphs remove 47% of the time', experiments/profile.md:" in finding.summary
    assert "tune inside the kernel" in finding.summary
    ids = [a.catalog_id for a in finding.actions]
    assert ids[:2] == ["cuda-graphs", "kernel-fusion"]
    # Exp 3 fused q and k: the plan says so beside the fusion item.
    assert "tried before (exp 3" in finding.actions[1].text


def test_a_persistent_grid_counts_as_latency_work_where_no_launch_cost_is_stated(
    tmp_path: Path,
) -> None:
    quiet = ROPE_PROFILE.replace("; CUDA graphs remove 47% of the time", "")
    rows = [
        *ROPE_ROWS[:3],
        (4, "persistent grid over the SMs", "3.62", "PASS", "NEUTRAL", "persistent-grid"),
        (5, "split-KV over more programs", "3.61", "PASS", "NEUTRAL", ""),
        (6, "num_warps=2", "3.62", "PASS", "NEUTRAL", ""),
    ]
    root = tmp_path / "grid"
    _rope_log(root, quiet)
    (root / "experiments" / "summary.md").write_text(_summary(rows), encoding="utf-8")
    for number in (4, 5, 6):
        path = root / "experiments" / f"exp_{number}" / "result.md"
        path.write_text(
            _result(number, rows[number - 1][1], "NEUTRAL", "PASS", rows[number - 1][5], ""),
            encoding="utf-8",
        )
    sentence = _sentence(diagnose(root), P.WRONG_BOTTLENECK)
    assert "1 of the 3 recent attempts judged tune inside the kernel" in sentence


def test_what_an_attempt_on_a_latency_bound_kernel_works_on() -> None:
    def aim(title: str, *tags: str) -> str | None:
        return _latency_aim(exp(1, 5.0, description=title, tags=tags))

    # A title's words outrank its tags: a token block tagged persistent-grid is tuning.
    assert aim("4 tokens per program", "persistent-grid") == "in-kernel"
    assert aim("persistent grid over 132 SMs") == "parallelism"
    assert aim("capture the decode step in a CUDA graph") == "launch"
    assert aim("evict_first on k/v loads") == "in-kernel"
    assert aim("k and v in one kernel", "kernel-fusion") == "launch"


def test_a_fix_of_a_failed_attempt_is_no_repeat(tmp_path: Path) -> None:
    loop = _sentence(diagnose(_rope_log(tmp_path / "rope")), P.REPETITION_LOOP)
    assert "repeats exp 4" not in loop
    assert "Exp 5 retries exp 4 (BLOCK_T=4), which failed correctness: a fix, not a repeat." in (
        loop
    )


def test_no_roofline_analysis_is_asked_of_a_log_that_records_floors_and_bounds(
    tmp_path: Path,
) -> None:
    diagnosis = diagnose(_rope_log(tmp_path / "rope"))
    research = diagnosis.finding(P.IGNORED_PRIOR_RESEARCH)
    assert research is not None
    assert "named `software-pipelining` and `vectorized-coalesced-loads` (`roofline-analysis` " in (
        research.summary
    )
    assert "left out: exp 6 records every row's roofline floor and bound" in research.summary
    assert all("roofline-analysis" not in a.text for a in research.actions)


def test_points_that_read_another_bound_are_named(tmp_path: Path) -> None:
    sentence = _sentence(diagnose(_rope_log(tmp_path / "rope")), P.WRONG_BOTTLENECK)
    assert sentence.endswith(
        "Not every trial point of exp 6 reads so: b=8 s=512 t=512 h=16 reads memory-bound at "
        "64.2% of its roofline floor (experiments/exp_6/result.md:13)."
    )


# --- the family a KV-cache append names -------------------------------------------------


def _family(root: Path, heading: str) -> str | None:
    rows = [(1, "torch eager baseline", "37.98", "PASS", "BASELINE", "")]
    _write(root, {"CLAUDE.md": heading + "\n", "experiments/summary.md": _summary(rows)})
    return infer_family(read_log(root)).family


def test_a_kv_cache_append_is_no_attention_kernel(tmp_path: Path) -> None:
    append = "# CLAUDE.md — paged KV-cache append (reshape_and_cache), Triton"
    assert _family(tmp_path / "append", append) is None
    attention = "# Paged decode attention over a KV cache, Triton"
    assert _family(tmp_path / "attention", attention) == "decode-attention"
    # A KV cache beside attention words, and a cache write fused into attention, still
    # count.
    beside = "# KV-cache attention kernel for one query token"
    assert _family(tmp_path / "beside", beside) == "decode-attention"
    fused = "# Decode attention with a fused KV-cache append"
    assert _family(tmp_path / "fused", fused) == "decode-attention"


# --- versions in files of their own ----------------------------------------------------

KERNEL_V1 = """import torch


def quant(x, q=None, scale=None):
    tokens, hidden = x.shape
    if q is None:
        q = torch.empty(tokens, hidden, device=x.device)
    if scale is None:
        scale = torch.empty(tokens, device=x.device)
    _k[(tokens,)](x, q, scale)
    return q, scale
"""
QUANT_ROWS = [
    (1, "torch eager baseline", "118.196", "PASS", "BASELINE", ""),
    (2, "Triton v1: one token per program", "41.4391", "PASS", "KEPT", ""),
    (3, "v2: 4 tokens per program, multiply by 448/amax", "", "FAIL", "REVERTED", "multi-row"),
    (4, "v3: v2 with the minimum absmax restored", "39.8707", "PASS", "KEPT", "multi-row"),
    (5, "v4: num_warps=8", "39.9043", "PASS", "REVERTED", ""),
    (6, "v4: 1024-wide chunks", "39.7751", "PASS", "REVERTED", ""),
    (7, "v3 with evict_first on the x loads", "39.5276", "PASS", "REVERTED", ""),
]


def _quant_log(root: Path) -> Path:
    kernel = KERNEL_V1.replace("import torch", "import torch, triton")
    files = {
        "CLAUDE.md": "# fp8 quant\n\n- Kernel: kernels/quant_v1.py\n",
        "kernels/quant_v1.py": kernel,
        "experiments/summary.md": _summary(QUANT_ROWS),
        "experiments/exp_2/quant_v1.py": kernel,
        "experiments/exp_3/quant_v2.py": kernel + "\n# v2\n",
        "experiments/exp_4/quant_v3.py": kernel + "\n# v3\n",
        "experiments/exp_5/quant_v4.py": kernel + "\n# v4\n",
    }
    for number, title, latency, correct, status, tags in QUANT_ROWS:
        rows = ""
        if latency:
            rows = (
                f"| hidden=7168 tokens=4096 | v{number} | {latency} | {latency} | {latency} | us "
                "| 29.1711 | 73.2% | 1.0 | cold | memory |\n"
                f"| hidden=7168 tokens=32 | v{number} | 3.9 | 3.8 | 4.0 | us | 0.227899 | 5.8% "
                "| 1.0 | cold | memory |\n"
            )
        note = (
            "PASS"
            if correct == "PASS"
            else "FAIL (all-zero token: scale 0 (ref 2.2e-13), q 124 e4m3 steps off; NaN from "
            "0*inf not caught by poison on CPU)"
        )
        files[f"experiments/exp_{number}/result.md"] = _result(
            number, title, status, note, tags, rows
        )
    return _write(root, files)


def test_later_versions_in_files_of_their_own_are_named(tmp_path: Path) -> None:
    sentence = _sentence(diagnose(_quant_log(tmp_path / "quant")), P.OVER_ENGINEERING)
    assert "latest snapshot of quant_v1.py (exp 2)" in sentence
    assert (
        "only quant_v1.py, the kernel CLAUDE.md names, was measured: the later kept exp 4 "
        "snapshots quant_v3.py instead"
    ) in sentence


def test_the_latest_kept_snapshot_says_later_ones_were_not_kept(tmp_path: Path) -> None:
    root = _quant_log(tmp_path / "quant")
    (root / "CLAUDE.md").write_text("# fp8 quant\n", encoding="utf-8")
    for name in ("exp_3/quant_v2.py", "exp_4/quant_v3.py", "exp_5/quant_v4.py"):
        (root / "experiments" / name).unlink()
    for number in (3, 4, 5):
        (root / "experiments" / f"exp_{number}" / "quant_v1.py").write_text(
            KERNEL_V1 + f"\n# v{number}\n", encoding="utf-8"
        )
    sentence = _sentence(diagnose(root), P.OVER_ENGINEERING)
    assert (
        "latest kept snapshot (exp 4; exp 5 was reverted, so its snapshot is not the current "
        "kernel)"
    ) in sentence
    # A snapshot of a change not kept is no later kernel: without one, "latest" is said alone.
    (root / "experiments" / "exp_5" / "quant_v1.py").unlink()
    assert "latest snapshot (exp 4)" in _sentence(diagnose(root), P.OVER_ENGINEERING)


def test_a_launcher_that_allocates_what_the_caller_leaves_out_says_so(tmp_path: Path) -> None:
    sentence = _sentence(diagnose(_quant_log(tmp_path / "quant")), P.BUFFER_PERSISTENCE)
    assert sentence.startswith(
        "The launcher in kernels/quant_v1.py takes q= and scale= from its caller and allocates "
        "them only when left out (kernels/quant_v1.py:7: q = torch.empty("
    )
    assert "allocates no buffer per call" not in sentence


def test_an_untimed_failure_reads_as_one(tmp_path: Path) -> None:
    diagnosis = diagnose(_quant_log(tmp_path / "quant"))
    wall = _sentence(diagnosis, P.CORRECTNESS_WALL)
    # The clause that says what went wrong leads, not the aside on how it was caught.
    assert "(exp 3: 'all-zero token: scale 0 (ref 2.2e-13), q 124 e4m3 steps off;" in wall
    plateau = diagnosis.finding(P.LOCAL_MINIMUM)
    quotes = [e.quote for e in plateau.evidence] if plateau is not None else []
    assert "exp 3: failed correctness, not timed" in quotes
    assert not any("no number" in q for q in quotes)


def test_a_point_far_under_its_floor_is_named_beside_a_memory_bound_headline(
    tmp_path: Path,
) -> None:
    root = _quant_log(tmp_path / "quant")
    profile = "## Profile: fp8_quant v3 | b=1, s=4096, t=7168\n### Bottleneck: Memory-bound\n"
    (root / "experiments" / "profile.md").write_text(profile, encoding="utf-8")
    sentence = _sentence(diagnose(root), P.WRONG_BOTTLENECK)
    assert sentence.startswith("The kernel is memory-bound")
    assert (
        "Not every trial point of exp 7 reads so: hidden=7168 tokens=32 reads latency-bound at "
        "5.8% of its roofline floor (experiments/exp_7/result.md:"
    ) in sentence


# --- a shape condition the workload never meets ----------------------------------------


def test_a_fundamental_whose_condition_fails_at_every_recorded_call_is_not_needed(
    tmp_path: Path,
) -> None:
    def call(m: int) -> Call:
        args = {
            "a": {"shape": [m, 2048], "dtype": "float16"},
            "b": {"shape": [2048, 1536], "dtype": "float16"},
        }
        return parse_call_record({"op": "mm", "args": args})[0]

    # Rows of 8 to 4096, but n = 1536 at every call: grouped-tile-order needs n >= 2048.
    profile = render_profile_md(profile_calls([call(m) for m in (8, 16, 4096)]))
    rows = [
        (1, "baseline", "211.7", "PASS", "BASELINE", ""),
        (2, "BLOCK_M from rows", "171.2", "PASS", "KEPT", ""),
    ]
    root = _write(
        tmp_path / "gemm",
        {
            "CLAUDE.md": "# grouped GEMM\n\n- Family: gemm\n",
            "experiments/summary.md": _summary(rows),
            "experiments/workload_profile.md": profile,
        },
    )
    sentence = _sentence(diagnose(root), P.MISSING_FUNDAMENTAL)
    assert "grouped-tile-order: not needed, it applies where m >= 2048 and n >= 2048" in sentence
    assert "n is 1536 in every call recorded (experiments/workload_profile.md)" in sentence
