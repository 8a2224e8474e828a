"""read_log on the seed layout and its real-world variants, built in temporary directories."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from kernelopt._errors import InputError
from kernelopt.experiments import (
    Correctness,
    ReadLimits,
    ResultRecord,
    ResultRow,
    Status,
    append_lesson,
    append_summary,
    read_log,
    write_plan,
    write_result,
)

from ..conftest import write_files


def _record(n: int, median: float, status: str = "KEPT", correctness: str = "PASS") -> ResultRecord:
    return ResultRecord(
        experiment=n,
        title=f"BLOCK_N={16 * n} tile",
        status=status,
        correctness=correctness,
        date=f"2026-11-0{n}",
        tags=("online-softmax",) if n == 1 else (),
        knobs={"BLOCK_N": str(16 * n)},
        rows=(
            ResultRow(
                point="b=32 s=1", impl="triton", median=median, p20=median, p80=median, unit="us"
            ),
        ),
    )


def test_canonical_layout_reads_exactly(tmp_path: Path) -> None:
    root = tmp_path / "experiments"
    for n, median, status in ((1, 100.0, "BASELINE"), (2, 80.0, "KEPT"), (3, 81.5, "REVERTED")):
        record = _record(n, median, status)
        write_result(root, record)
        append_summary(root, record)
    write_plan(root, 3, "# Plan\n\n## Next\n- try split-KV flash-decoding to fill the SMs\n")
    append_lesson(root, "BLOCK_N=64 spills", experiment=3)
    log = read_log(tmp_path, catalog=())
    assert [e.number for e in log.experiments] == [1, 2, 3]
    second = log.experiment(2)
    assert second is not None
    assert (second.latency, second.unit, second.status, second.correctness) == (
        80.0,
        "us",
        Status.KEPT,
        Correctness.PASS,
    )
    assert second.knobs == {"BLOCK_N": "32"}
    assert log.experiment(1).tags == ("online-softmax",)  # type: ignore[union-attr]
    # Every fact keeps its file and line: the summary row comes first.
    assert str(second.refs["latency"]).startswith("experiments/summary.md:")
    assert log.lessons and log.lessons[0].text.startswith("[exp 3]")
    assert [r.text for r in log.recommendations] == ["try split-KV flash-decoding to fill the SMs"]
    assert log.recommendations[0].after == 3  # a plan's items are for its own experiment onwards
    assert "seed" in log.layouts and not log.unread


def test_next_steps_in_a_results_notes_are_recommendations(tmp_path: Path) -> None:
    root = tmp_path / "experiments"
    record = ResultRecord(
        experiment=4,
        title="causal flag off for one query token",
        status="KEPT",
        correctness="PASS",
        rows=(ResultRow(point="b=32 s=1", impl="triton", median=73.9, unit="us"),),
        notes="Neutral at equal lengths.\n\nNext steps:\n- a benchmark run of the new tree\n"
        "- a cluster sharing each key tile through a multicast copy",
    )
    write_result(root, record)
    log = read_log(tmp_path, catalog=())
    assert [(r.text, r.after) for r in log.recommendations] == [
        ("a benchmark run of the new tree", 5),
        ("a cluster sharing each key tile through a multicast copy", 5),
    ]
    # Notes without such a list recommend nothing.
    write_result(root, attrs.evolve(record, notes="Neutral at equal lengths."), overwrite=True)
    assert read_log(tmp_path, catalog=()).recommendations == ()


def test_hand_written_results_and_summary_variants(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "CLAUDE.md": "# Project\n\n## Rules\n- One change per experiment\n\n"
            "Agent edits ONLY: `src/kernel.cl`\nRead-only reference: `src/baseline.cl`\n",
            "src/kernel.cl": "__kernel void k(__global float* x) { x[0] = 1.0f; }\n",
            "experiments/summary.md": (
                "| Exp | Date | Description | Kernel_ms | Total_ms | Pass | Notes |\n"
                "|---|---|---|---|---|---|---|\n"
                "| 1 | 2026-05-26 | Initial port baseline | 0.411 | 0.879 | PASS | New best |\n"
                "| 5 | 2026-05-26 | image2d_t path | 0.090 | 0.579 | FAIL | ROLLBACK: DEAD END |\n"
                "| 8 | 2026-05-26 | loop unroll | 0.311 | 0.603 | ✓ | NEW BEST |\n"
                "| 9 | 2026-05-26 | vload3 | 0.310 | 0.584 | ✓ | NEW BEST |\n"
            ),
            "experiments/exp_9/result.md": (
                "# Experiment 9: vload3 in transpose\nDate: 2026-05-26\nStatus: PASS — NEW BEST\n\n"
                "## Results\n| Resolution | Exp 8 Total | Exp 9 Total | Delta "
                "|\n|---|---|---|---|\n"
                "| 320x240 | 0.603ms | 0.584ms | -3.1% |\n"
            ),
            "experiments/exp_9/kernel.cl": "__kernel void k2() {}\n",
        },
    )
    log = read_log(tmp_path, catalog=())
    by = {e.number: e for e in log.experiments}
    assert sorted(by) == [1, 5, 8, 9]
    # Total_ms is the column the log's own NEW BEST claims agree with.
    assert by[8].latency == 0.603 and by[9].latency == 0.584 and by[8].unit == "ms"
    assert by[1].status is Status.BASELINE
    assert by[5].correctness is Correctness.FAIL and by[5].status is Status.FAILED
    assert by[8].correctness is Correctness.PASS and by[9].status is Status.KEPT
    assert [p.name for p in by[9].points] == ["Kernel_ms", "Total_ms"]
    assert log.kernel_path is not None and log.kernel_path.text == "src/kernel.cl"
    assert {k.role for k in log.kernels} == {"kernel", "snapshot"}
    # The baseline CLAUDE.md names is not there: reported, not fatal.
    assert any(u.path == "src/baseline.cl" and "CLAUDE.md:7" in u.reason for u in log.unread)
    assert any(r.text == "One change per experiment" for r in log.rules)


def test_named_kernel_from_the_repository_root(tmp_path: Path) -> None:
    claude = "# k\n\n- Kernel under optimization: `src/kernels/k.py`\n- Baseline: `bench/base.py`\n"
    repo = write_files(
        tmp_path / "repo",
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "src/kernels/k.py": "import triton\n",
            "docs/log/CLAUDE.md": claude,
            "docs/log/experiments/summary.md": (
                "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
                "| 1 | first | 5.0 | us | KEPT |\n"
            ),
        },
    )
    # Above the repository's root: never looked at.
    write_files(tmp_path, {"bench/base.py": "print('outside')\n"})
    log = read_log(repo / "docs" / "log", catalog=())
    named = [k for k in log.kernels if k.role == "kernel"]
    assert [k.path for k in named] == ["../../src/kernels/k.py"]
    assert named[0].text == "import triton\n"
    assert [k.path for k in log.current_kernels] == ["../../src/kernels/k.py"]
    assert any(u.path == "bench/base.py" and "repository" in u.reason for u in log.unread)
    # A path that climbs, and a link that leaves the repository, are not followed.
    (repo / "docs/log/CLAUDE.md").write_text(claude.replace("src/kernels/k.py", "../k.py"))
    assert not [k for k in read_log(repo / "docs/log", catalog=()).kernels if k.role == "kernel"]
    (repo / "src/kernels/k.py").unlink()
    (repo / "src/kernels/k.py").symlink_to(tmp_path / "bench/base.py")
    (repo / "docs/log/CLAUDE.md").write_text(claude)
    assert not [k for k in read_log(repo / "docs/log", catalog=()).kernels if k.role == "kernel"]
    # Outside any repository nothing above the log is read.
    markers = (".git", "pyproject.toml", "setup.py", "setup.cfg", "CMakeLists.txt")
    if any((folder / m).exists() for folder in tmp_path.parents for m in markers):
        return  # the temporary folder itself lies in a repository here
    (repo / "pyproject.toml").unlink()
    (repo / "src/kernels/k.py").unlink()
    (repo / "src/kernels/k.py").write_text("import triton\n")
    assert not [k for k in read_log(repo / "docs/log", catalog=()).kernels if k.role == "kernel"]


def test_declared_tags_are_not_extended_from_the_title(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "experiments/summary.md": (
                "| Exp | Description | Latency | Unit | Status | Tags |\n"
                "|---|---|---|---|---|---|\n"
                "| 1 | FP8 cache read by the split-KV kernel | 9.0 | us | KEPT | fp8-kv-cache |\n"
                "| 2 | FP8 cache read by the split-KV kernel | 8.0 | us | KEPT |  |\n"
            ),
        },
    )
    by = {e.number: e for e in read_log(tmp_path).experiments}
    assert by[1].tags == ("fp8-kv-cache",)
    # Without a declaration the title's words tag it.
    assert "split-kv-flash-decoding" in by[2].tags


def test_devlog_newest_first(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "logs/optimization_log.md": (
                "# Kernel log\n\n"
                "## 2026-04-22 - Warp-cooperative kernel (ACCEPTED)\n\n"
                "- **Result**: 0.2031 -> **0.1969ms (-3.1%)**\n- **Correctness**: 100/100 pass\n\n"
                "## 2026-04-21 - Cache keyed by shape (REVERTED — correctness failure)\n\n"
                "- **Result**: Mean 0.1917ms on 98 workloads, 2 RUNTIME_ERROR\n\n"
                "## 2026-04-21 - Profiling pass (no code change)\n\nRan ncu: occupancy 6.2%.\n\n"
                "## 2026-04-20 - L1 broadcast (ACCEPTED)\n\n- **Result**: 0.2228ms -> "
                "**0.2098ms**\n"
                "- **Future directions**:\n  1. Hand-written chunked kernel for medium sequences\n"
            ),
        },
    )
    log = read_log(tmp_path, catalog=())
    titles = [e.description for e in log.experiments]
    assert titles == [
        "L1 broadcast",
        "Profiling pass",
        "Cache keyed by shape",
        "Warp-cooperative kernel",
    ]
    first, profiling, failed, last = log.experiments
    assert (first.latency, first.status) == (0.2098, Status.KEPT)
    assert not profiling.attempted
    assert failed.correctness is Correctness.FAIL and failed.status is Status.FAILED
    assert last.number == 4 and last.latency == 0.1969 and last.correctness is Correctness.PASS
    assert log.layouts == ("devlog",)
    assert log.recommendations[0].text.startswith("Hand-written chunked kernel")
    assert log.recommendations[0].after == 2


def test_step_log_and_step_table_merge(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "OPTIMIZATION_LOG.md": (
                "# Log\n\n## 1. Where the time goes\n\nprofile text\n\n## 3. Changes\n\n"
                "| step | change | geomean vs bar | accuracy |\n|---|---|---|---|\n"
                "| — | unmodified | 0.80x | 5/5 |\n| 1 | fused QKV | 0.699x | 5/5 |\n"
                "| 2 | CUDA graph capture | 1.001x | 5/5 |\n\n"
                "### Step 1 — fused QKV\n\nOne GEMM for q/k/v.\n\n### Step 2 — CUDA "
                "graphs\n\nReplay.\n"
            ),
            "agent/experiments/18-decoding/hypothesis.md": "# Step 18: decoding\n\n- Status: "
            "SELECTED\n",
            "agent/experiments/18-decoding/result.md": "# Step 18 result: decoding\n\n- Outcome: "
            "DISCARDED\n",
        },
    )
    log = read_log(tmp_path, catalog=())
    assert [e.number for e in log.experiments] == [0, 1, 2, 18]
    assert log.experiment(0).status is Status.BASELINE  # type: ignore[union-attr]
    assert log.experiment(2).speedup == 1.001  # type: ignore[union-attr]
    assert log.experiment(2).correctness is Correctness.PASS  # type: ignore[union-attr]
    assert log.experiment(18).status is Status.REVERTED  # type: ignore[union-attr]
    assert {"step-log", "experiment-folders"} <= set(log.layouts)


def test_machine_histories(tmp_path: Path) -> None:
    records = [
        {
            "timestamp": "2026-04-18T05:19",
            "mean_latency_ms": 0.2732,
            "status": "pass",
            "notes": "cached stream",
        },
        {
            "timestamp": "2026-04-18T06:00",
            "mean_latency_ms": 0.41,
            "status": "pass",
            "git_hash": "ab12+maxsqT-FAILED",
        },
    ]
    header = "uuid\ttotal_seq_len\tlatency_us\n"
    write_files(
        tmp_path,
        {
            "bench_history.jsonl": "\n".join(json.dumps(r) for r in records) + "\nnot json\n",
            "bench/run_20260410_merge_98of100.tsv": header + "a\t6\t9.5\nb\t134\t\nc\t134\t58.0\n",
            "bench/run_20260412_opt_100of100.tsv": header
            + "a\t6\t9.0\nb\t134\t50.0\nc\t134\t56.0\n",
            "archive/tiny__trackA.json": json.dumps(
                {
                    "elite": {},
                    "log": [
                        {
                            "id": "g0_1",
                            "speedup": 1.3,
                            "applied": ["G0.1"],
                            "ts": "2026-08-26T10:12",
                        }
                    ],
                }
            ),
        },
    )
    log = read_log(tmp_path, catalog=())
    kinds = {s.kind: s for s in log.series}
    assert set(kinds) == {"jsonl", "tsv", "archive-json"}
    jsonl = kinds["jsonl"].experiments
    assert [e.latency for e in jsonl] == [0.2732, 0.41] and jsonl[1].status is Status.FAILED
    tsv = kinds["tsv"].experiments
    assert tsv[0].correctness is Correctness.FAIL and tsv[1].correctness is Correctness.PASS
    assert tsv[1].latency == pytest.approx((9.0 + 50.0 + 56.0) / 3) and tsv[1].unit == "us"
    assert kinds["archive-json"].experiments[0].speedup == 1.3
    assert any("not JSON" in u.reason for u in log.unread)


def test_until_reads_the_directory_as_it_stood(tmp_path: Path) -> None:
    root = tmp_path / "experiments"
    for n in range(1, 6):
        write_result(root, _record(n, 100.0 - n))
        (root / f"exp_{n}" / "kernel.py").write_text(f"BLOCK_N = {n}\n")
    log = read_log(tmp_path, until=4, catalog=())
    assert [e.number for e in log.experiments] == [1, 2, 3]
    assert {k.experiment for k in log.kernels} == {1, 2, 3}
    assert [k.path for k in log.current_kernels] == ["experiments/exp_3/kernel.py"]
    with pytest.raises(InputError, match="Expected until as an experiment number >= 0, got -1"):
        read_log(tmp_path, until=-1)


@pytest.mark.parametrize("below", ["", "docs", "logs/prefill"])
def test_layout_found_below_the_root(tmp_path: Path, below: str) -> None:
    folder = tmp_path / below if below else tmp_path
    write_files(
        folder,
        {
            "experiments/summary.md": "| Exp | Description | Latency | Status "
            "|\n|---|---|---|---|\n| 1 | a | 5 us | KEPT |\n"
        },
    )
    log = read_log(tmp_path, catalog=())
    assert [e.latency for e in log.experiments] == [5.0]


def test_reading_never_imports_or_runs_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    payload = f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(3)\n"
    write_files(
        tmp_path,
        {
            "CLAUDE.md": "Kernel: `kernel.py`\n",
            "kernel.py": payload,
            "experiments/exp_1/kernel.py": payload,
            "experiments/exp_1/__init__.py": payload,
            "experiments/exp_1/result.md": "# Experiment 1: x\n\nStatus: KEPT\n",
        },
    )
    log = read_log(tmp_path, catalog=())
    assert not marker.exists()
    assert any(k.path == "kernel.py" for k in log.kernels)


def test_bad_input_is_reported_not_raised(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="Expected an existing log directory"):
        read_log(tmp_path / "missing")
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(InputError, match="Expected a directory"):
        read_log(tmp_path / "file.md")
    root = tmp_path / "log"
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_bytes(b"")
    (root / "experiments" / "LESSONS.md").write_bytes(b"\x00\x01binary\x00")
    (root / "experiments" / "profile.md").write_bytes("caf\xe9 latency".encode("latin-1"))
    (root / "notes.md").write_text(
        "| Exp | Latency |\n|---|---|\n| 1 | 3 us | extra | cells |\n| x |\n"
    )
    log = read_log(root, catalog=())
    reasons = {u.path: u.reason for u in log.unread}
    assert reasons["experiments/summary.md"] == "empty file"
    assert reasons["experiments/LESSONS.md"].startswith("binary file")
    assert reasons["experiments/profile.md"].startswith("not all UTF-8 (byte 0xe9 at offset 3)")
    assert [e.latency for e in log.experiments] == [3.0]  # ragged table rows read what they can


def test_a_stray_latin1_byte_does_not_cost_the_table(tmp_path: Path) -> None:
    summary = tmp_path / "experiments" / "summary.md"
    summary.parent.mkdir()
    rows = "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
    rows += "| 1 | baseline | 10 | us | BASELINE |\n| 2 | tiles by Andr\xe9 | 8 | us | KEPT |\n"
    summary.write_bytes(rows.encode("latin-1"))
    log = read_log(tmp_path, catalog=())
    assert [e.latency for e in log.experiments] == [10.0, 8.0]
    assert "\ufffd" in log.experiments[1].description
    assert any(u.path == "experiments/summary.md" for u in log.unread)


def test_large_file_is_capped(tmp_path: Path) -> None:
    row = "| 1 | 2026-01-01 | tile sweep | 10 | us | PASS | KEPT |\n"
    header = "| Exp | Date | Description | Latency | Unit | Correct | Status |\n"
    header += "|---|---|---|---|---|---|---|\n"
    path = tmp_path / "experiments" / "summary.md"
    path.parent.mkdir()
    with open(path, "w") as handle:
        handle.write(header)
        chunk = row * 20_000
        while handle.tell() < 100 * 1024 * 1024:
            handle.write(chunk)
    log = read_log(tmp_path, catalog=())
    assert any("read the first 2.0 MiB of 10" in u.reason for u in log.unread)
    assert log.experiments[0].latency == 10.0


def test_symlinks_out_of_the_tree_and_deep_trees(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_files(
        outside, {"summary.md": "| Exp | Latency | Status |\n|---|---|---|\n| 1 | 1 us | KEPT |\n"}
    )
    root = tmp_path / "log"
    root.mkdir()
    (root / "linked.md").symlink_to(outside / "summary.md")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    (root / "loop").symlink_to(root, target_is_directory=True)
    deep = root.joinpath(*[f"d{i}" for i in range(12)])
    write_files(
        deep, {"summary.md": "| Exp | Latency | Status |\n|---|---|---|\n| 2 | 2 us | KEPT |\n"}
    )
    log = read_log(root, catalog=(), limits=ReadLimits(max_depth=4))
    assert log.experiments == ()
    reasons = " ".join(f"{u.path}: {u.reason}" for u in log.unread)
    assert "linked.md: symbolic link to outside" in reasons and "linkdir: symbolic link" in reasons
    assert "deeper than 4 folders" in reasons


def test_hand_written_knobs_lines(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "experiments/exp_1/result.md": (
                "# Experiment 1: tile sweep\n\n- Status: KEPT\n"
                "- Knobs: BLOCK_N=64, num_stages=2\n- Latency: 57.9 us\n"
            ),
            "experiments/exp_2/result.md": (
                "# Deeper pipeline\n\nKnobs: num_warps 8, BLOCK_N=128\nStatus: REVERTED\n"
                "Result: 60.1 us\n"
            ),
        },
    )
    first, second = read_log(tmp_path, catalog=()).experiments
    assert first.knobs == {"BLOCK_N": "64", "num_stages": "2"}
    assert str(first.ref("knobs")) == "experiments/exp_1/result.md:4"
    assert second.knobs == {"BLOCK_N": "128", "num_warps": "8"}
    assert (first.latency, second.latency, second.status) == (57.9, 60.1, Status.REVERTED)


def test_diff_snapshots_are_read_and_malformed_ones_reported(tmp_path: Path) -> None:
    good = "--- a/k.py\n+++ b/k.py\n@@ -1 +1,2 @@\n x = 1\n+BLOCK: tl.constexpr = 64\n"
    write_files(
        tmp_path,
        {
            "experiments/exp_1/result.md": "# Experiment 1: base\n\nStatus: KEPT\n",
            "experiments/exp_1/k.py": "x = 1\n",
            "experiments/exp_2/result.md": "# Experiment 2: block knob\n\nStatus: KEPT\n",
            "experiments/exp_2/block.diff": good,
            "experiments/exp_3/result.md": "# Experiment 3: cut short\n\nStatus: KEPT\n",
            "experiments/exp_3/cut.patch": good.rsplit("\n", 2)[0] + "\n",
            "loose.diff": good,  # outside every experiment folder: not a snapshot
        },
    )
    log = read_log(tmp_path, catalog=())
    by_path = {k.path: k for k in log.kernels}
    diff = by_path["experiments/exp_2/block.diff"]
    assert (diff.language, diff.role, diff.experiment) == ("diff", "snapshot", 2)
    assert diff.is_diff
    assert diff.text == good
    second = log.experiment(2)
    assert second is not None and second.kernel_files == ("experiments/exp_2/block.diff",)
    assert "experiments/exp_3/cut.patch" not in by_path and "loose.diff" not in by_path
    reasons = {u.path: u.reason for u in log.unread}
    assert reasons["experiments/exp_3/cut.patch"].startswith("not a unified diff (line 3: ")
    # A diff shows only the lines it changed: the kernel as it stands is a full source.
    assert [k.path for k in log.current_kernels] == ["experiments/exp_1/k.py"]


def test_profile_heading_names_its_trial_point(tmp_path: Path) -> None:
    from kernelopt.experiments.points import point_terms, points_differ

    profile = (
        "## Profile: mla_decode exp 5 (seesaw) | b=32, s=1, t=4096, h_q=128\n"
        "### Bottleneck: Compute-bound\n"
    )
    root = write_files(tmp_path, {"experiments/profile.md": profile})
    read = read_log(root).profile
    assert read is not None and read.bottleneck == "compute"
    assert read.point == "b=32, s=1, t=4096, h_q=128"
    assert point_terms(read.point) == {"b": "32", "s": "1", "t": "4096", "h": "128"}
    assert points_differ(read.point, "b=32 s=1 t=4096 h=16")
    assert not points_differ(read.point, "b=32 s=1 t=4096 h=128 kv=fp8")
    assert not points_differ(read.point, "decode")  # no axis in common: not another point
    assert point_terms("b=128 s=1 t~4096 h=16")["t"] == "~4096"
    # No point in the heading, or the point inside a code block: none read.
    for text in ("## Profile: mla_decode\n", "```\n## Profile: k | b=1, s=1, t=1\n```\n"):
        (root / "experiments" / "profile.md").write_text(text, encoding="utf-8")
        found = read_log(root).profile
        assert found is not None and found.point == ""


def test_the_profilers_compact_report_reads_with_each_line_cited_once(tmp_path: Path) -> None:
    # The seed's profiler contract, saved as experiments/profile.md.
    profile = (
        "## Profile: mla_decode v2 | b=32, s=1, t=4096\n"
        "### Stages\n"
        "| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n"
        "|-------|----------|-----|-------|------|------------|-----------|\n"
        "| decode | 66.5 us | 9.9 | 53.8 | 25 | Memory-bound | half the bandwidth |\n"
        "### Bottleneck: Memory-bound\n"
        "Root cause: Bytes set the floor. The grid is small.\n"
    )
    read = read_log(write_files(tmp_path, {"experiments/profile.md": profile})).profile
    assert read is not None and read.bottleneck == "memory"
    assert read.metrics == {"tc_pct": 9.9, "dram_pct": 53.8, "occupancy_pct": 25.0}
    lines = [fact.source.line for fact in read.facts]
    assert sorted(lines) == sorted(set(lines)) and 5 in lines and 6 in lines


def test_decimal_commas_thousands_and_repeated_rows(tmp_path: Path) -> None:
    summary = tmp_path / "experiments" / "summary.md"
    summary.parent.mkdir()
    summary.write_text(
        "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
        "| 1 | baseline | 1,024 | us | BASELINE |\n"
        "| 2 | tiles | 0,075 | ms | KEPT |\n"
        "| 3 | stages | 3,5 | us | KEPT |\n"
        "| 3 | stages again | 2.5 | us | KEPT |\n"
    )
    log = read_log(tmp_path, catalog=())
    assert [e.latency for e in log.experiments] == [1024.0, 0.075, 3.5]
    (repeat,) = [u for u in log.unread if "repeats" in u.reason]
    assert repeat.path == "experiments/summary.md"
    assert repeat.reason == "line 6 repeats exp 3 of line 5: only the first row's values were read"


def test_benchmark_rows_are_not_an_experiment_history(tmp_path: Path) -> None:
    rows = [
        {"impl": impl, "shape_name": shape, "median_us": us}
        for impl, base in (("torch.empty", 4.0), ("pool.get", 0.9))
        for shape, us in (("tiny", base), ("large", base * 2))
    ]
    (tmp_path / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    log = read_log(tmp_path, catalog=())
    assert log.experiments == ()
    (note,) = log.unread
    assert note.reason.startswith("benchmark rows (2 implementations at 2 points)")
    # The same keys with an attempt number are a history after all.
    numbered = [dict(r, exp=i) for i, r in enumerate(rows, start=1)]
    (tmp_path / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in numbered))
    assert len(read_log(tmp_path, catalog=()).experiments) == 4


def test_csv_quoted_cells_and_line_numbers(tmp_path: Path) -> None:
    # A CSV cell holding the delimiter is quoted (as csv.writer and spreadsheets write it);
    # blank lines still count when facts cite their line.
    write_files(
        tmp_path,
        {
            "experiments/summary.csv": (
                "Exp,Description,Latency,Status\n"
                '1,"baseline, eager",10 us,BASELINE\n'
                "\n"
                '2,"BLOCK_N=64, num_warps=4",9 us,KEPT\n'
                '3,"say ""fast""",8 us,KEPT\n'
                '4,"unclosed quote,7 us,KEPT\n'
                "5,last,6 us,REVERTED\n"
            )
        },
    )
    first, second, third, fourth, fifth = read_log(tmp_path, catalog=()).experiments
    assert (first.description, first.latency, first.status) == (
        "baseline, eager",
        10.0,
        Status.BASELINE,
    )
    assert (second.latency, second.status, second.knobs) == (
        9.0,
        Status.KEPT,
        {"BLOCK_N": "64", "num_warps": "4"},
    )
    assert str(second.ref("latency")) == "experiments/summary.csv:4"
    assert third.description == 'say "fast"'
    # An unclosed quote is split as written and does not swallow the next row.
    assert (fourth.latency, fifth.latency, fifth.status) == (7.0, 6.0, Status.REVERTED)
    # A cell longer than the csv module's field limit is still read, not an error.
    long_cell = "x" * 200_000
    write_files(
        tmp_path,
        {"experiments/summary.csv": f"Exp,Description,Latency,Status\n1,{long_cell},7 us,KEPT\n"},
    )
    (only,) = read_log(tmp_path, catalog=()).experiments
    assert (only.latency, only.status) == (7.0, Status.KEPT)


def test_folders_named_as_files_and_dead_links_are_reported(tmp_path: Path) -> None:
    # A folder where the layout expects a file, and a link that resolves to nothing (a
    # loop, a dangling target), are skipped and said so rather than passed over silently.
    root = write_files(
        tmp_path,
        {"experiments/exp_1/result.md": "# Experiment 1: base\n\n- Status: KEPT\n"},
    )
    (root / "experiments/summary.md").mkdir()
    (root / "experiments/exp_2/result.md").mkdir(parents=True)
    (root / "experiments/loop.md").symlink_to(root / "experiments/loop.md")
    (root / "experiments/gone.md").symlink_to(root / "experiments/missing.md")
    log = read_log(root, catalog=())
    reasons = {u.path: u.reason for u in log.unread}
    assert reasons["experiments/summary.md"] == "Expected a file, got a folder; not read"
    assert reasons["experiments/exp_2/result.md"] == "Expected a file, got a folder; not read"
    assert "loop" in reasons["experiments/loop.md"]
    assert "not there" in reasons["experiments/gone.md"]
    assert [e.number for e in log.experiments] == [1]
