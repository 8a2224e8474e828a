"""The MLA decode walk-through (examples/mla_decode/), the user guide's snippets, and the
browsable index of the built-in knowledge base (docs/knowledge/index.md).

The examples run as a user runs them: each script in its own process, on the CPU path
(Triton interpreter, tiny shapes), writing into one log directory that the next script
reads. The tests then read that log back with kernelopt's own readers.

``python tests/test_examples.py --write-knowledge-index`` regenerates docs/knowledge/index.md.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "mla_decode"
GUIDE = REPO / "docs" / "guide.md"
KNOWLEDGE_INDEX = REPO / "docs" / "knowledge" / "index.md"
STEPS = (
    "01_reference_and_workload.py",
    "02_naive_kernel.py",
    "03_diagnose.py",
    "04_split_kv.py",
    "05_buffers_and_graphs.py",
    "06_hopper_kernel.py",
    "07_learn.py",
    "08_fp8_cache.py",
)


def _env(*, interpret: bool = True) -> dict[str, str]:
    """The environment of a child process: the repo importable; the Triton interpreter on
    when ``interpret`` (the examples' CPU path), else as this process has it."""
    env = dict(os.environ)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def _run(script: str, log: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--cpu", "--log", str(log), *extra],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=REPO,
        timeout=600,
        check=False,
    )


# ---------------------------------------------------------------------------- the walk-through


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Run the eight steps in order on one log; return the log and each step's output."""
    log = tmp_path_factory.mktemp("mla") / "log"
    outputs: dict[str, str] = {}
    for script in STEPS:
        done = _run(script, log)
        outputs[script] = done.stdout
        assert done.returncode == 0, (
            f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return log, outputs


@pytest.mark.slow
def test_every_step_says_its_timings_are_cpu_timings(
    walkthrough: tuple[Path, dict[str, str]],
) -> None:
    _, outputs = walkthrough
    for script, text in outputs.items():
        assert "device: cpu (CPU path: Triton interpreter" in text, script
    for script in STEPS[1:2] + STEPS[3:6] + STEPS[7:]:
        assert "[CPU]" in outputs[script], script


@pytest.mark.slow
def test_step1_writes_a_workload_profile_with_the_decode_axes(
    walkthrough: tuple[Path, dict[str, str]],
) -> None:
    from kernelopt.workload import find_shortcuts, read_profile_md

    log, outputs = walkthrough
    profile = read_profile_md(log / "experiments" / "workload_profile.md")
    op = profile.op("mla_decode")
    s_q = op.axis("s_q")
    assert s_q is not None and 0.5 < s_q.size1_share < 1.0  # decode steps and verify steps
    assert [a.axis for a in op.size1_axes(threshold=1.0)] == ["h_kv"]
    assert {s.rule for s in find_shortcuts(profile)} >= {"size1-axis", "dominant-shape"}
    assert "Baseline reference: `kernels/mla_ref.py`" in (log / "CLAUDE.md").read_text()
    assert "one key: out = v, lse = score" in outputs[STEPS[0]]


@pytest.mark.slow
def test_result_files_parse_exactly_and_tell_the_story(
    walkthrough: tuple[Path, dict[str, str]],
) -> None:
    from kernelopt.experiments import Correctness, Status, parse_result

    log, _ = walkthrough
    records = {
        n: parse_result((log / "experiments" / f"exp_{n}" / "result.md").read_text("utf-8"))
        for n in range(1, 6)
    }
    assert records[1].status is Status.BASELINE
    assert all(r.correctness is Correctness.PASS for r in records.values())
    # Eager torch runs on the CPU itself; the Triton kernels through the interpreter.
    assert records[1].gpu == "CPU"
    assert all(r.gpu == "CPU (Triton interpreter)" for n, r in records.items() if n > 1)
    assert "split-kv-flash-decoding" in records[3].tags
    assert "buffer-persistence" in records[4].tags
    assert records[5].tags == ("block-pointers-tma",)
    assert {row.impl for row in records[2].rows} == {"triton_naive"}
    assert all(row.mode == "cpu" and row.floor is None for r in records.values() for row in r.rows)
    summary = (log / "experiments" / "summary.md").read_text("utf-8")
    assert [line.split("|")[1].strip() for line in summary.splitlines()[4:]] == [
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
    ]
    # The kernel snapshots are the strategies' code, with the module documentation left out.
    snapshot = (log / "experiments" / "exp_2" / "mla_decode.py").read_text("utf-8")
    assert "_mla_decode_naive_kernel" in snapshot and "split_kv" not in snapshot
    ast.parse(snapshot)


@pytest.mark.slow
def test_step3_names_split_kv_as_the_missing_fundamental(
    walkthrough: tuple[Path, dict[str, str]],
) -> None:
    from kernelopt.diagnose import diagnose
    from kernelopt.workflow import parse_task

    log, outputs = walkthrough
    # The diagnosis as step 3 made it: a diagnosis of the finished log reads the kernel as
    # it stands now, which step 6 replaces with the Hopper kernel when its A/B comes out
    # FAST (on the CPU, a matter of interpreter timings), whatever the cut.
    written = (log / "experiments" / "diagnosis.md").read_text("utf-8")
    assert re.search(
        r"^- \[x\] 5\. Missing fundamental — .*\(split-kv-flash-decoding\)", written, re.M
    )
    assert diagnose(log, until=3).summary.family == "mla-decode"
    text = outputs[STEPS[2]]
    assert "[x] missing_fundamental" in text and "# Split-KV Flash Decoding" in text
    assert re.search(r"^   actions link: split-kv-flash-decoding,", text, re.M)
    task = parse_task((log / "experiments" / "exp_3" / "plan.md").read_text("utf-8"))
    assert [c.entry_id for c in task.optimizations] == [
        "split-kv-flash-decoding",
        "split-kv-lse-combine",
    ]


def _unresolved_links(markdown: Path) -> list[str]:
    """Relative link targets of ``markdown`` that name no file beside it."""
    targets = re.findall(r"\]\(([^)\s]+\.md)\)", markdown.read_text("utf-8"))
    return [t for t in targets if "://" not in t and not (markdown.parent / t).is_file()]


@pytest.mark.slow
def test_step3_diagnosis_links_entries_from_where_it_is_written(
    walkthrough: tuple[Path, dict[str, str]],
) -> None:
    # As `kernelopt diagnose --write-plan` writes it: a reader of the log follows each
    # action's link to its catalog entry.
    log, _ = walkthrough
    diagnosis = log / "experiments" / "diagnosis.md"
    assert "](" in diagnosis.read_text("utf-8")
    assert _unresolved_links(diagnosis) == []


@pytest.mark.slow
def test_learn_writes_a_valid_tree_inside_the_log(
    walkthrough: tuple[Path, dict[str, str]],
) -> None:
    from kernelopt.catalog import BUILTIN_ROOT, Catalog, lint_tree

    log, outputs = walkthrough
    tree = log / "docs" / "knowledge"
    assert (tree / "index.md").is_file()
    assert not [p for p in lint_tree(tree) if p.is_error]
    written = sorted(p for p in tree.rglob("*.md") if p.name != "index.md")
    assert written, "LEARN wrote nothing"
    assert all("CPU (Triton interpreter)" in p.read_text("utf-8") for p in written)
    assert len(Catalog.load(tree)) >= len(Catalog.builtin())
    # The built-in tree is never written.
    assert not any(
        "CPU (Triton interpreter)" in p.read_text("utf-8") for p in BUILTIN_ROOT.rglob("*.md")
    )
    assert "LEARN" in outputs[STEPS[3]] and "index.md (regenerated)" in outputs[STEPS[6]]
    # The count of entries step 7 reports is the tree's, in words that agree with it.
    noun = "entry" if len(written) == 1 else "entries"
    assert f"   {len(written)} {noun} written here;" in outputs[STEPS[6]]


@pytest.mark.slow
def test_bench_rows_devlog_and_profile_handoff(walkthrough: tuple[Path, dict[str, str]]) -> None:
    from kernelopt.bench import read_rows
    from kernelopt.workflow import parse_profile, read_performance

    log, outputs = walkthrough
    rows = read_rows(log / "runs" / "bench.jsonl")
    assert {r.impl for r in rows} >= {
        "torch_eager",
        "triton_naive",
        "triton_split_kv",
        "triton_split_kv_alloc",
        "triton_split_kv_buffers",
        "triton_hopper",
    }
    assert all(
        r.gpu == ("CPU" if r.impl == "torch_eager" else "CPU (Triton interpreter)")
        and r.backend == "cpu-perf-counter"
        for r in rows
    )
    assert all(len(r.samples) == r.n >= 2 for r in rows)  # raw samples kept for later A/Bs
    perf = read_performance(log / "docs" / "kernels" / "mla_decode.md")
    assert {p.version for p in perf} >= {"torch_eager", "triton_naive", "triton_hopper"}
    assert all(p.floor_pct is None and p.tflop_s is None for p in perf)  # no roofline on a CPU
    text = outputs[STEPS[6]]
    handoff = text[text.index("## Profile:") : text.index("== Devlog")]
    assert parse_profile(handoff).kernel.startswith("mla_decode")
    assert "No ceilings here" in text  # the CPU path says the hand-off is the anchors'


@pytest.mark.slow
def test_step8_reads_the_fp8_cache_at_its_own_trial_point(
    walkthrough: tuple[Path, dict[str, str]],
) -> None:
    from kernelopt.bench import read_rows
    from kernelopt.diagnose.progress import analyze
    from kernelopt.experiments import Correctness, Status, parse_result, read_log

    log, outputs = walkthrough
    text = outputs[STEPS[7]]
    record = parse_result((log / "experiments" / "exp_6" / "result.md").read_text("utf-8"))
    verdicts = _point_verdicts(record.verdict or "")
    assert len(verdicts) == 2 and record.correctness is Correctness.PASS
    # Kept when a point is faster and none slower; neutral when the A/B found nothing.
    if "FAST" in verdicts and "SLOW" not in verdicts:
        assert record.status is Status.KEPT
    elif all(v in ("SAME", "UNCLEAR") for v in verdicts):
        assert record.status is Status.NEUTRAL
    assert record.tags == ("fp8-kv-cache",)
    assert [row.point for row in record.rows] == [
        "b=2 s=1 t=128 h=16 kv=fp8",
        "b=2 s=4 t=128 h=16 kv=fp8",
    ]
    assert all(row.impl == "triton_split_kv_fp8" for row in record.rows)
    # A row states a speedup only where its A/B found one beyond the noise.
    assert [row.speedup is not None for row in record.rows] == [
        v in ("FAST", "SLOW") for v in verdicts
    ]
    # Quantizing costs a few percent; the kernel matches the bytes it reads far closer.
    costs = [float(c) for c in re.findall(r"output by (\d+\.\d+)% of its norm", text)]
    assert len(costs) == 2 and all(1.0 < c < 6.0 for c in costs)
    errors = [float(e) for e in re.findall(r"FP8 out (\S+) lse", text)]
    assert len(errors) == 2 and all(e <= 2e-3 for e in errors)
    assert "1152 → 656 bytes a token" in text
    rows = read_rows(log / "runs" / "bench.jsonl")
    assert {"triton_split_kv_fp8", "triton_split_kv"} <= {r.impl for r in rows}
    # The cache format is part of the rows' point, as the benchmark writes it.
    assert {r.config.get("kv") for r in rows if r.impl == "triton_split_kv_fp8"} == {"fp8"}
    assert all("kv" not in r.config for r in rows if r.impl != "triton_split_kv_fp8")
    # Diagnose compares the FP8 headline only with its own A/B row, never with 16-bit ones.
    steps = {s.experiment.number: s for s in analyze(read_log(log).experiments).steps}
    fp8 = steps[6]
    assert fp8.experiment.headline_point.endswith("kv=fp8")
    speedup = record.rows[0].speedup or 0.0
    if record.status is not Status.KEPT:
        # Neutral or reverted: an attempt that moved nothing.
        assert fp8.counted and fp8.gain == 0.0
        assert "exp 6: counted as an attempt without a gain" in text
    elif speedup > 1.0:
        # A speedup S saves 1 - 1/S of the time.
        assert fp8.counted and fp8.gain == pytest.approx(1.0 - 1.0 / speedup, rel=1e-3)
        assert f"exp 6: a gain of {1.0 - 1.0 / speedup:+.1%}" in text
    else:
        assert (fp8.counted, fp8.gain) == (False, None)
        assert "exp 6: a new trial point without a gain of its own" in text
        assert "exp 6: counted as an attempt without a gain" not in text


@pytest.mark.slow
def test_a_b_steps_print_speedups_that_invert_their_time_ratios(
    walkthrough: tuple[Path, dict[str, str]],
) -> None:
    # A verdict line shows the candidate's time over the baseline's; the speedups and their
    # geometric mean that decide the status are the inverse, and must say which they are.
    _, outputs = walkthrough
    for script in (STEPS[3], STEPS[5], STEPS[7]):
        text = outputs[script]
        ratios = [float(r) for r in re.findall(r"^   [A-Z]+ (\d+\.\d+)x \[", text, re.M)]
        speedups = [float(s) for s in re.findall(r"; speedup (\S+)x\)$", text, re.M)]
        assert ratios and len(speedups) == len(ratios), script
        for ratio, speedup in zip(ratios, speedups, strict=True):
            assert speedup == pytest.approx(1.0 / ratio, rel=1e-2), script
        gain = re.search(r"geometric-mean speedup (\S+)x", text)
        assert gain is not None, script
        assert float(gain[1]) == pytest.approx(statistics.geometric_mean(speedups), rel=1e-2)


@pytest.mark.slow
def test_the_checklists_the_steps_print_end_whole_or_marked_as_cut(
    walkthrough: tuple[Path, dict[str, str]],
) -> None:
    _, outputs = walkthrough
    for script in (STEPS[2], STEPS[6]):
        checks = re.findall(r"^   \[[x ]\] .*$", outputs[script], re.M)
        assert len(checks) == 9, script
        for line in checks:
            assert line.endswith((".", "…")), line


@pytest.mark.slow
def test_a_step_refuses_to_run_twice_on_one_log(walkthrough: tuple[Path, dict[str, str]]) -> None:
    log, _ = walkthrough
    before = (log / "experiments" / "exp_5" / "result.md").read_text("utf-8")
    done = _run("06_hopper_kernel.py", log)
    assert done.returncode != 0
    assert "Expected a log where step 6 has not run yet" in done.stderr
    assert (log / "experiments" / "exp_5" / "result.md").read_text("utf-8") == before


@pytest.mark.slow
def test_a_later_step_runs_the_earlier_ones_first(tmp_path: Path) -> None:
    done = _run("03_diagnose.py", tmp_path / "log")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "running 01_reference_and_workload.py first" in done.stdout
    assert "running 02_naive_kernel.py first" in done.stdout
    assert (tmp_path / "log" / "experiments" / "exp_3" / "plan.md").is_file()
    # Step 3's docstring gives the same diagnosis from the shell, right after the step.
    doc = ast.get_docstring(ast.parse((EXAMPLES / STEPS[2]).read_text(encoding="utf-8")))
    shell = re.search(r"``kernelopt (diagnose LOG[^`]*)``", doc or "")
    assert shell is not None
    plan = tmp_path / "shell" / "diagnosis.md"
    words = [
        str(plan) if w.startswith("LOG/") else str(tmp_path / "log") if w == "LOG" else w
        for w in shell[1].split()
    ]
    from kernelopt.cli import main

    assert main(words) == 1

    def checklist(path: Path) -> list[str]:
        return [line for line in path.read_text("utf-8").splitlines() if line.startswith("- [")]

    written = tmp_path / "log" / "experiments" / "diagnosis.md"
    assert checklist(plan) == checklist(written) and len(checklist(written)) == 9


def test_step1_says_it_empties_a_log_it_wrote(tmp_path: Path) -> None:
    log = tmp_path / "log"
    assert _run(STEPS[0], log).returncode == 0
    (log / "experiments" / "exp_1").mkdir()
    done = _run(STEPS[0], log)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "emptied the log" in done.stdout
    assert not (log / "experiments" / "exp_1").exists()
    assert (log / "experiments" / "workload_profile.md").is_file()
    # On an empty directory there is nothing to empty, and it says nothing.
    assert "emptied" not in _run(STEPS[0], tmp_path / "fresh").stdout


@pytest.mark.slow
def test_a_step_that_did_not_finish_refuses_to_run_again(tmp_path: Path) -> None:
    # Step 2 appends its benchmark rows before it writes its results: stopped in between
    # and run again, it would append them twice. It refuses instead, and says why.
    log = tmp_path / "log"
    assert _run(STEPS[0], log).returncode == 0
    child = subprocess.Popen(
        [sys.executable, "-u", str(EXAMPLES / STEPS[1]), "--cpu", "--log", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(),
        cwd=REPO,
    )
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("== Ceilings"):  # past the log's checks: the step has started
            break
    child.kill()
    child.wait(timeout=60)
    assert not (log / "experiments" / "exp_2" / "result.md").exists()
    done = _run(STEPS[1], log)
    assert done.returncode != 0
    assert "Expected a log where step 2 has not started yet" in done.stderr
    assert not (log / "runs" / "bench.jsonl").exists()
    # A later step that needs step 2 stops too, showing why.
    later = _run(STEPS[2], log)
    assert later.returncode != 0
    assert "step 2 has not started yet" in later.stderr


@pytest.mark.slow
def test_an_interrupted_step_says_so_without_a_traceback(tmp_path: Path) -> None:
    log = tmp_path / "log"
    assert _run(STEPS[0], log).returncode == 0
    child = subprocess.Popen(
        [sys.executable, "-u", str(EXAMPLES / STEPS[1]), "--cpu", "--log", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=REPO,
    )
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("== Ceilings"):  # the step has started: Ctrl-C from here
            child.send_signal(signal.SIGINT)
            break
    _, err = child.communicate(timeout=120)
    assert child.returncode == 128 + signal.SIGINT, err[-2000:]
    assert "Traceback" not in err
    assert "Expected step 2 to run to its end, got an interrupt" in err
    assert "start over with step 1" in err


def _run_failing_to_write(script: str, log: Path, name: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` as :func:`_run` does, failing its first write of a file called ``name``
    the way a full disk (or a Ctrl-C in the middle) would."""
    hooks = log.parent / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(
        "import pathlib\n"
        "write_text = pathlib.Path.write_text\n"
        "def failing(self, *args, **kwargs):\n"
        f"    if self.name == {name!r}:\n"
        "        raise OSError('No space left on device')\n"
        "    return write_text(self, *args, **kwargs)\n"
        "pathlib.Path.write_text = failing\n",
        encoding="utf-8",
    )
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join((str(hooks), env["PYTHONPATH"]))
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--cpu", "--log", str(log)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
def test_a_step1_that_failed_is_run_again_by_the_next_step(tmp_path: Path) -> None:
    # Step 1 fails while writing CLAUDE.md: the next step must not take its log for a
    # finished one and build on a log without CLAUDE.md.
    log = tmp_path / "log"
    failed = _run_failing_to_write(STEPS[0], log, "CLAUDE.md")
    assert failed.returncode != 0 and "No space left on device" in failed.stderr
    done = _run(STEPS[1], log)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "running 01_reference_and_workload.py first" in done.stdout
    assert (log / "CLAUDE.md").is_file()


@pytest.mark.slow
def test_a_step_that_failed_after_its_result_stops_the_next_one(tmp_path: Path) -> None:
    # Step 2 writes exp_2/result.md, then fails to snapshot the kernel it timed: the log
    # has no kernels/mla_decode.py. Step 3 must not diagnose it as if step 2 had finished.
    log = tmp_path / "log"
    assert _run(STEPS[0], log).returncode == 0
    failed = _run_failing_to_write(STEPS[1], log, "mla_decode.py")
    assert failed.returncode != 0 and "No space left on device" in failed.stderr
    assert (log / "experiments" / "exp_2" / "result.md").is_file()
    later = _run(STEPS[2], log)
    assert later.returncode != 0
    assert "step 2 has not started yet" in later.stderr
    assert not (log / "experiments" / "exp_3").exists()
    again = _run(STEPS[1], log)
    assert again.returncode != 0
    assert "step 2 has not started yet" in again.stderr


def test_step1_refuses_to_clear_a_directory_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    done = _run(STEPS[0], tmp_path)
    assert done.returncode != 0
    assert "Expected an empty directory or a log these examples wrote" in done.stderr
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_help_of_every_step_names_its_options() -> None:
    for script in STEPS:
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / script), "--help"],
            capture_output=True,
            text=True,
            env=_env(),
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "--log" in done.stdout and "--gpu" in done.stdout and "--cpu" in done.stdout


# ---------------------------------------------------------------------------- benchmarks/

BENCHMARKS = REPO / "benchmarks"
# The scripts that time a GPU and nothing else: without one they must say so, exit 2 and
# write nothing.
GPU_BENCHMARKS = (
    "bench_verify.py",
    "gather_index_select.py",
    "mla_buffers.py",
    "mla_decode.py",
    "mla_host_cost.py",
    "buffers_overhead.py",  # its default, --device all, times the GPU and the CPU
)


def _bench(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``benchmarks/<script>`` from ``cwd`` as if no GPU were present."""
    env = _env(interpret=False)
    env["CUDA_VISIBLE_DEVICES"] = ""
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
        check=False,
    )


def test_every_benchmark_has_help(tmp_path: Path) -> None:
    scripts = sorted(p.name for p in BENCHMARKS.glob("*.py"))
    assert set(GPU_BENCHMARKS) < set(scripts)
    for script in scripts:
        done = _bench(script, "--help", cwd=tmp_path)
        assert done.returncode == 0, f"{script}: {done.stderr[-2000:]}"
        assert "--out" in done.stdout, script
        # The description is whole sentences, not a first line cut mid-phrase.
        description = done.stdout.split("\n\n")[1].strip()
        assert description.endswith("."), f"{script}: {description!r}"


@pytest.mark.parametrize("script", GPU_BENCHMARKS)
def test_a_gpu_benchmark_without_a_gpu_says_so_and_writes_nothing(
    script: str, tmp_path: Path
) -> None:
    out = tmp_path / "rows.jsonl"
    done = _bench(script, "--out", str(out), cwd=tmp_path)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "CUDA" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_buffers_overhead_times_the_cpu_alone_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    done = _bench(
        "buffers_overhead.py", "--device", "cpu", "--calls", "20", "--repeats", "3",
        "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and all(r["device"] == "cpu" and r["gpu"] is None for r in rows)


@pytest.mark.slow
def test_mla_decode_smoke_writes_rows_only_where_asked(tmp_path: Path) -> None:
    # Run from tmp_path: the default --out, benchmarks/results/mla_decode.jsonl, would land
    # under it. A smoke run's timings are no results: without --out they go nowhere.
    smoke = ("--smoke", "--strategies", "naive", "--peers", "")
    done = _bench("mla_decode.py", *smoke, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "rows not written (--smoke without --out)" in done.stdout
    assert list(tmp_path.iterdir()) == []
    out = tmp_path / "smoke.jsonl"
    done = _bench("mla_decode.py", *smoke, "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 and all(r["gpu"] == "cpu" for r in rows)


# ---------------------------------------------------------------------------- the guide


def _blocks(text: str, language: str) -> Iterator[str]:
    for match in re.finditer(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
        yield match.group(1)


def test_guide_python_blocks_run_in_order(tmp_path: Path) -> None:
    """Every ```python block of the guide runs, in order, in one session from the repo root;
    blocks whose first line is ``# needs CUDA`` must at least import what they name."""
    runnable, cuda_only = [], []
    for block in _blocks(GUIDE.read_text(encoding="utf-8"), "python"):
        (cuda_only if block.startswith("# needs CUDA") else runnable).append(block)
    assert len(runnable) >= 9
    script = tmp_path / "guide_session.py"
    # Where the DIAGNOSE snippet wrote its plan, for the link check below.
    runnable.append('print("guide plan:", work / "plan.md")')
    script.write_text("\n\n".join(runnable), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=_env(interpret=False),  # the guide sets it itself where there is no CUDA
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "missing_fundamental" in done.stdout
    plan = Path(re.findall(r"^guide plan: (.+)$", done.stdout, re.M)[-1])
    assert "](" in plan.read_text("utf-8")
    assert _unresolved_links(plan) == []
    for block in cuda_only:
        _assert_imports_exist(block)


def _assert_imports_exist(code: str) -> None:
    import importlib

    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kernelopt"):
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name), f"{node.module}.{alias.name}"


def test_guide_cli_commands_exist(capsys: pytest.CaptureFixture[str]) -> None:
    from kernelopt.cli import main

    text = GUIDE.read_text(encoding="utf-8")
    commands = re.findall(r"^\$ kernelopt (\w+(?: \w+)?)", text, re.MULTILINE)
    commands += re.findall(r"`kernelopt (\w+)[ `]", text)
    assert len(commands) >= 3
    for command in commands:
        words = [w for w in command.split() if not w.isupper()]
        with pytest.raises(SystemExit) as exited:
            main([*words, "--help"])
        assert exited.value.code == 0, command
    capsys.readouterr()


def test_guide_detector_table_matches_the_defaults() -> None:
    import attrs

    from kernelopt.diagnose import DiagnoseParams, Pathology

    text = GUIDE.read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d) \| `(\w+)` \| `(\w+)` \| (.+) \|$", text, re.MULTILINE)
    assert [int(r[0]) for r in rows] == list(range(1, 10))
    assert [r[1] for r in rows] == [p.value for p in Pathology]
    defaults = DiagnoseParams()
    for _, _, field, cell in rows:
        params = getattr(defaults, field)
        written = dict(re.findall(r"`(\w+)=([^`]+)`", cell))
        actual = {a.name: repr(getattr(params, a.name)) for a in attrs.fields(type(params))}
        assert written == actual, field


def test_guide_links_resolve() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (GUIDE.parent / target).exists(), target


# ---------------------------------------------------------------------------- docs/mla.md

MLA_DOC = REPO / "docs" / "mla.md"


@pytest.mark.slow
def test_mla_doc_examples_print_the_values_their_comments_promise(tmp_path: Path) -> None:
    """The quick start and its FP8 sequel, on the CPU: each ``print`` whose comment says
    ``~Xe-Y`` prints a value that rounds to it."""
    blocks = list(_blocks(MLA_DOC.read_text(encoding="utf-8"), "python"))
    fp8 = next(b for b in blocks if "quantize_kv_fp8(kv_cache)" in b)
    code = blocks[0] + "\n" + fp8
    script = tmp_path / "mla_doc.py"
    script.write_text(code, encoding="utf-8")
    env = _env()
    env["CUDA_VISIBLE_DEVICES"] = ""  # the comments' values are the CPU's float32 ones
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    prints = [line for line in code.splitlines() if line.startswith("print(")]
    printed = done.stdout.strip().splitlines()
    assert len(printed) == len(prints)
    promised = 0
    for line, value in zip(prints, printed, strict=True):
        claim = re.search(r"#.*~(\d(?:\.\d)?e-\d+)", line)
        if claim is None:
            continue
        promised += 1
        about = float(claim[1])
        digit = 10.0 ** math.floor(math.log10(about))
        assert abs(float(value) - about) <= digit / 2, f"{line.strip()} printed {value}"
    assert promised >= 2


def test_mla_doc_states_the_bounds_the_kernel_tests_hold() -> None:
    import importlib.util

    import torch

    path = REPO / "tests" / "kernels" / "mla" / "mla_testing.py"
    spec = importlib.util.spec_from_file_location("mla_testing_bounds", path)
    assert spec is not None and spec.loader is not None
    bounds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bounds)
    text = " ".join(MLA_DOC.read_text(encoding="utf-8").split())
    written = re.search(
        r"Bounds on the output: float32 `(\S+)`.*?float16 `(\S+)`.*?bfloat16 `(\S+)`\. "
        r"The LSE is float32 for every input dtype and is held to `(\S+)`",
        text,
    )
    assert written is not None
    tolerance = bounds.TOLERANCE
    assert [float(v) for v in written.groups()] == [
        tolerance[torch.float32],
        tolerance[torch.float16],
        tolerance[torch.bfloat16],
        bounds.LSE_TOLERANCE,
    ]


def _fp8_readers() -> set[str]:
    """The strategies whose plans take ``kv_fp8=True`` for some query dtype (on this CPU,
    seesaw then stops for want of a Hopper GPU, not for the cache)."""
    import torch

    from kernelopt._errors import DeviceError, InputError
    from kernelopt.kernels.mla import STRATEGIES, MLADecodePlan

    readers = set()
    for strategy in STRATEGIES:
        for dtype in (torch.float16, torch.bfloat16):
            try:
                MLADecodePlan(
                    [64], s_q=1, h_q=16, page_size=64, softmax_scale=0.1, dtype=dtype,
                    device="cpu", strategy=strategy, kv_fp8=True,
                )  # fmt: skip
            except InputError:
                continue
            except DeviceError:
                pass
            readers.add(strategy)
    return readers


def test_docs_name_every_strategy_that_reads_the_fp8_cache() -> None:
    readers = _fp8_readers()
    assert "split_kv" in readers and "naive" not in readers
    guide = GUIDE.read_text(encoding="utf-8")
    sentence = guide[guide.index("`quantize_kv_fp8` packs") :].split(". ")[0]
    assert {s for s in readers if f"`{s}`" in sentence} == readers, sentence
    # No sentence of docs/mla.md may say that a strategy which reads FP8 does not.
    text = " ".join(MLA_DOC.read_text(encoding="utf-8").split())
    denied = re.findall(r"`(\w+)` kernel[^.]*?which does not read FP8", text)
    assert not set(denied) & readers, denied


def test_mla_doc_names_the_strategies_the_benchmark_runs_on_the_fp8_cache() -> None:
    tree = ast.parse((BENCHMARKS / "mla_decode.py").read_text(encoding="utf-8"))
    [strategies] = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "FP8_STRATEGIES" for t in node.targets)
    ]
    text = " ".join(MLA_DOC.read_text(encoding="utf-8").split())
    sentence = text[text.index("`--kv fp8` runs the same points") :].split(". ")[0]
    named = set(re.findall(r"`(\w+)`", sentence[sentence.index("and only") :]))
    assert set(strategies) <= named, sentence


# ---------------------------------------------------------------------------- docs/knowledge


def render_knowledge_index() -> str:
    """docs/knowledge/index.md: every built-in catalog entry, linked to its file."""
    from kernelopt.catalog import BUILTIN_ROOT, Catalog
    from kernelopt.catalog.index import index_order

    catalog = Catalog.builtin()
    base = os.path.relpath(BUILTIN_ROOT, KNOWLEDGE_INDEX.parent).replace(os.sep, "/")
    lines = [
        "# Built-in knowledge base",
        "",
        f"The {len(catalog)} entries kernelopt ships, in `kernelopt/catalog/knowledge/`. Generated",
        "from the entries by `python tests/test_examples.py --write-knowledge-index` (a test",
        "fails when this page is stale); edit the entries, not this page. How a knowledge",
        "tree is laid out, and how to keep your own: [README.md](README.md).",
        "",
        "| Name | Kind | Scope | Families | When to Apply |",
        "|------|------|-------|----------|---------------|",
    ]
    for entry in sorted(catalog, key=index_order):
        when = entry.summary.replace("|", "\\|")
        lines.append(
            f"| [{entry.name}]({base}/{entry.relative_path}) | {entry.kind.value} | "
            f"{entry.scope} | {', '.join(entry.families)} | {when} |"
        )
    return "\n".join(lines) + "\n"


def test_knowledge_index_is_current() -> None:
    assert KNOWLEDGE_INDEX.read_text(encoding="utf-8") == render_knowledge_index(), (
        "docs/knowledge/index.md is stale: python tests/test_examples.py --write-knowledge-index"
    )


def test_knowledge_index_links_every_builtin_entry_file() -> None:
    from kernelopt.catalog import BUILTIN_ROOT

    text = KNOWLEDGE_INDEX.read_text(encoding="utf-8")
    links = {
        (KNOWLEDGE_INDEX.parent / target).resolve()
        for target in re.findall(r"\]\(([^)]+\.md)\)", text)
        if target != "README.md"
    }
    files = {p.resolve() for p in BUILTIN_ROOT.rglob("*.md") if p.name != "index.md"}
    assert links == files


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-knowledge-index"]:
        KNOWLEDGE_INDEX.write_text(render_knowledge_index(), encoding="utf-8")
        print(f"wrote {KNOWLEDGE_INDEX.relative_to(REPO)}")
    else:
        sys.exit("usage: python tests/test_examples.py --write-knowledge-index")


@pytest.mark.parametrize(
    ("script", "flag"),
    [
        ("catalog_load.py", "--repeat"),
        ("diagnose_speed.py", "--repeat"),
        ("diagnose_speed.py", "--experiments"),
        ("workload_profile.py", "--calls"),
        ("workload_profile.py", "--shapes"),
    ],
)
def test_a_count_of_zero_is_a_usage_error(script: str, flag: str, tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    done = _bench(script, flag, "0", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"argument {flag}: Expected an int >= 1, got 0" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()


def test_cpu_benchmark_quantiles_interpolate() -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import catalog_load
    finally:
        sys.path.remove(str(BENCHMARKS))
    row = catalog_load._row("s", [3.0, 1.0], entries=1)
    # Two samples: p20 and p80 lie between them, on either side of the median.
    assert (row["p20"], row["median"], row["p80"]) == (1.4, 2.0, 2.6)


def _point_verdicts(verdict: str) -> list[str]:
    """The verdict words of a result's ``Verdict`` line (``decode h=16: UNCLEAR,
    speculative h=16: FAST``), one per point."""
    return re.findall(r":\s*(FAST|SLOW|SAME|UNCLEAR)\b", verdict)
