"""What a reader walking through examples/ meets: the records step 2 writes for its eager
baseline, the log's marker read back, the lines a step prints about earlier steps, the help
of each step, how step 8 records an A/B inside the noise, and the READMEs' claims.

The functions of examples/mla_decode/_steps.py are called directly, and one step runs only
as far as its refusal of a broken log; the eight steps on one log are tests/test_examples.py's.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "mla_decode"
WRONG_BOTTLENECK = REPO / "examples" / "logs" / "wrong-bottleneck"
STEP_SCRIPTS = sorted(EXAMPLES.glob("0*.py"))


def _load_steps() -> types.ModuleType:
    """examples/mla_decode/_steps.py as a module (the examples' directory is no package)."""
    spec = importlib.util.spec_from_file_location("mla_decode_steps", EXAMPLES / "_steps.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module


steps = _load_steps()


def _cpu_setup(log: Path, step: int) -> Any:
    """The Setup a step makes on the CPU path with ``--log log``."""
    return steps.Setup(
        step=step,
        log=log,
        gpu=False,
        device="cpu",
        dtype_name="float16",
        page=16,
        args=argparse.Namespace(log=log, gpu=False, cpu=True),
    )


def _run(script: str, log: Path) -> subprocess.CompletedProcess[str]:
    """Run one step on the CPU path with ``--log log``, the repository importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--cpu", "--log", str(log)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
        check=False,
    )


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by its relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _log_after_step1(root: Path, marker: bytes) -> Path:
    """A log with step 1's product in it and ``marker`` as its marker file."""
    log = root / "log"
    (log / "experiments").mkdir(parents=True)
    (log / steps.PRODUCTS[1]).write_text("# Workload profile\n", encoding="utf-8")
    (log / steps.MARKER).write_bytes(marker)
    return log


def _cpu_marker(**fields: object) -> bytes:
    return json.dumps({"device": "cpu", "dtype": "float16", **fields}).encode()


def _docstring(script: Path) -> str:
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8")), clean=False)
    assert doc is not None, script.name
    return doc


def _call(script: Path, function: str) -> ast.Call:
    """The one call of ``function`` (a name or ``module.name``) in ``script``."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == function
    ]
    assert len(calls) == 1, (script.name, function, len(calls))
    return calls[0]


def _keyword(call: ast.Call, name: str) -> str:
    """The source of keyword argument ``name`` of ``call``."""
    found = [ast.unparse(k.value) for k in call.keywords if k.arg == name]
    assert found, name
    return found[0]


# ---------------------------------------------------------------------------- step 1 and 2


def test_the_reference_snapshot_is_not_headed_as_an_experiment(tmp_path: Path) -> None:
    # No experiment 0 exists: the reference is what every experiment is checked against.
    step1 = STEP_SCRIPTS[0]
    snapshot = _call(step1, "_steps.snapshot_kernel")
    assert ast.unparse(snapshot.args[0]) == "'kernelopt.kernels.mla.ref'"
    assert _keyword(snapshot, "experiment") == "None"
    written = tmp_path / "mla_ref.py"
    steps.snapshot_kernel("kernelopt.kernels.mla.ref", [written], experiment=None)
    assert written.read_text(encoding="utf-8").splitlines()[0] == (
        '"""kernelopt.kernels.mla.ref, the float64 reference every experiment is checked '
        'against (module documentation left out)."""'
    )


def test_the_eager_baseline_names_the_code_it_timed_and_the_cpu(tmp_path: Path) -> None:
    from kernelopt.bench import Measurement, TrialPoint, to_result_row
    from kernelopt.experiments import parse_result

    setup = _cpu_setup(tmp_path, 2)
    point = TrialPoint(name="decode", b=2, s=1, t=128, extra={"h": 16})
    timing = Measurement(samples=[1200.0, 1150.0, 1170.0], backend="cpu-perf-counter")
    row = to_result_row(timing, point=point, impl=steps.EAGER_IMPL)
    steps.write_eager_baseline(setup, [row], notes="The cache is gathered outside the timing.")
    record = parse_result((tmp_path / "experiments" / "exp_1" / "result.md").read_text("utf-8"))
    assert (record.kernel, record.gpu) == (steps.EAGER_KERNEL, "CPU")
    # The kernel it names is the code step 2 times, not the float64 reference; step 2
    # writes its record through this function.
    named = re.fullmatch(r"(\S+) \((\w+),.*\)", steps.EAGER_KERNEL)
    assert named is not None
    assert f"def {named[2]}(" in (REPO / named[1]).read_text(encoding="utf-8")
    step2 = EXAMPLES / "02_naive_kernel.py"
    assert f"_steps.{named[2]}(" in step2.read_text(encoding="utf-8")
    _call(step2, "_steps.write_eager_baseline")


def test_timing_rows_name_the_cpu_for_eager_and_the_interpreter_for_triton(
    tmp_path: Path,
) -> None:
    from kernelopt.bench import Measurement, TrialPoint

    setup = _cpu_setup(tmp_path, 2)
    point = TrialPoint(name="decode", b=2, s=1, t=128, extra={"h": 16})
    timing = Measurement(samples=[1200.0, 1150.0, 1170.0], backend="cpu-perf-counter")
    rows = {
        impl: steps.timing_row(setup, timing, impl=impl, point=point, line=None)
        for impl in ("torch_eager", "triton_naive")
    }
    assert rows["torch_eager"].gpu == "CPU"  # ordinary torch, never the interpreter
    assert rows["triton_naive"].gpu == "CPU (Triton interpreter)"
    assert setup.where == "CPU (Triton interpreter)"


# ---------------------------------------------------------------------------- the marker


@pytest.mark.parametrize(
    ("marker", "got"),
    [
        (b"{bad", "got '{bad' (Expecting property name enclosed in double quotes at line 1"),
        (b"[1, 2]", "got a JSON list instead of an object"),
        (b"\xff\xfe{", "got bytes that are not UTF-8 text"),
        (_cpu_marker(finished="1"), 'got finished = "1" instead of a list of step numbers'),
        (_cpu_marker(finished=[1], started=[2, "x"]), "got started = [2, "),
    ],
)
def test_a_marker_that_is_not_json_is_refused_before_anything_is_written(
    tmp_path: Path, marker: bytes, got: str
) -> None:
    log = _log_after_step1(tmp_path, marker)
    before = _files(log)
    with pytest.raises(SystemExit) as stopped:
        steps._prepare_log(_cpu_setup(log, 3))
    message = str(stopped.value.code)
    assert message.startswith(f"Expected the examples' marker JSON at {log / steps.MARKER}, ")
    assert got in message and "\n" not in message
    assert _files(log) == before


def test_a_step_on_a_log_with_a_broken_marker_says_so_without_a_traceback(
    tmp_path: Path,
) -> None:
    log = _log_after_step1(tmp_path, b"{bad")
    done = _run("03_diagnose.py", log)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("Expected the examples' marker JSON at ")
    assert sorted(_files(log)) == [steps.MARKER, steps.PRODUCTS[1]]


# ---------------------------------------------------------------------------- earlier steps


def test_a_step_needing_one_that_did_not_finish_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log_after_step1(tmp_path, _cpu_marker(finished=[1], started=[2]))
    before = _files(log)

    def run_step(*args: object) -> None:
        raise AssertionError("step 2 would write what it wrote before it stopped twice")

    monkeypatch.setattr(steps, "run_step", run_step)
    with pytest.raises(SystemExit) as stopped:
        steps._prepare_log(_cpu_setup(log, 6))
    message = str(stopped.value.code)
    assert "\n" not in message
    assert message.startswith(
        "Expected a log where step 2 has not started yet (so that step 6 runs it first) or "
        "has finished, got one where it started and did not finish"
    )
    assert "has not run on this log" not in capsys.readouterr().out
    assert _files(log) == before


@pytest.mark.parametrize(
    ("marker", "line"),
    [
        # Step 1 writes the marker first: with one, step 1 started and did not finish.
        (_cpu_marker(finished=[]), "(step 1 did not finish on this log: running "),
        (None, "(step 1 has not run on this log yet: running "),
    ],
)
def test_the_line_before_an_earlier_step_runs_says_how_far_it_got(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    marker: bytes | None,
    line: str,
) -> None:
    log = tmp_path / "log"
    log.mkdir()
    if marker is not None:
        (log / steps.MARKER).write_bytes(marker)
    ran: list[list[str]] = []

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        ran.append(command)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(steps, "subprocess", types.SimpleNamespace(run=run))
    steps._prepare_log(_cpu_setup(log, 2))
    assert f"{line}{STEP_SCRIPTS[0].name} first)" in capsys.readouterr().out
    assert [Path(c[1]).name for c in ran] == [STEP_SCRIPTS[0].name]


# ---------------------------------------------------------------------------- --help


@pytest.mark.parametrize("script", STEP_SCRIPTS, ids=lambda p: p.name)
def test_help_shows_the_whole_docstring_of_the_step(
    script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _docstring(script)
    with pytest.raises(SystemExit) as stopped:
        steps.setup(int(script.name[:2]), doc, ["--help"])
    assert stopped.value.code == 0
    out = capsys.readouterr().out
    assert doc.strip() in out
    assert "--log" in out and "--gpu" in out and "--cpu" in out


# ---------------------------------------------------------------------------- step 8


def _comparison(verdict: str, ratio: float) -> Any:
    from kernelopt.bench import Comparison

    return Comparison(
        verdict=verdict,
        ratio=ratio,
        ratio_low=ratio * 0.8,
        ratio_high=ratio * 1.4,
        noise=0.285,
        threshold=0.285,
        pairs=8,
    )


@pytest.mark.parametrize(
    ("verdict", "recorded"), [("FAST", True), ("SLOW", True), ("SAME", False), ("UNCLEAR", False)]
)
def test_a_row_states_a_speedup_only_where_the_a_b_found_one(verdict: str, recorded: bool) -> None:
    from kernelopt.bench import Measurement, to_result_row

    result = _comparison(verdict, 0.934)  # the noise-level A/B a CPU run gave: 1.07x
    timing = Measurement(samples=[900.0, 910.0, 920.0], backend="cpu-perf-counter")
    row = to_result_row(
        timing, point="b=2 s=1 t=128 h=16 kv=fp8", impl="triton_split_kv_fp8",
        speedup=steps.judged_speedup(result),
    )  # fmt: skip
    assert (row.speedup is not None) is recorded
    if recorded:
        assert row.speedup == pytest.approx(1 / 0.934, rel=1e-3)


def test_the_status_follows_the_verdicts() -> None:
    from kernelopt.bench import Verdict

    fast, slow, same, unclear = Verdict.FAST, Verdict.SLOW, Verdict.SAME, Verdict.UNCLEAR
    assert steps.status_of([unclear, fast], [1.07, 1.56]) == "KEPT"
    assert steps.status_of([unclear, same], [1.07, 0.98]) == "NEUTRAL"
    assert steps.status_of([fast, slow], [1.5, 0.8]) == "KEPT"
    assert steps.status_of([fast, slow], [1.1, 0.5]) == "REVERTED"
    assert steps.status_of([slow, same], [0.7, 1.0]) == "REVERTED"


def test_step8_records_its_status_and_speedups_as_the_other_a_b_steps_do() -> None:
    # Every A/B step states a row's speedup only where its verdict found one.
    for script in ("04_split_kv.py", "06_hopper_kernel.py", "08_fp8_cache.py"):
        row = _call(EXAMPLES / script, "to_result_row")
        assert _keyword(row, "speedup") == "_steps.judged_speedup(result)", script
    fp8 = EXAMPLES / "08_fp8_cache.py"
    record = _call(fp8, "write_experiment")
    assert _keyword(record, "status") == "status"
    for script in ("04_split_kv.py", "06_hopper_kernel.py", "08_fp8_cache.py"):
        _call(EXAMPLES / script, "_steps.status_of")
        assert "status = _steps.status_of(verdicts, speedups)" in (EXAMPLES / script).read_text(
            "utf-8"
        ), script


# ---------------------------------------------------------------------------- the READMEs


def test_the_wrong_bottleneck_readme_calls_memory_side_what_diagnose_does() -> None:
    from kernelopt.diagnose import diagnose

    text = (WRONG_BOTTLENECK / "README.md").read_text(encoding="utf-8")
    opening = " ".join(text[: text.index("```")].split())
    before, memory_side = opening.split("on the memory side", 1)
    assert re.findall(r"exp (\d+)", memory_side) == ["5", "6"]
    assert re.findall(r"exp (\d+)", before) == ["3", "4"]
    checks = {c.pathology.value: c for c in diagnose(WRONG_BOTTLENECK).checks}
    assert checks["wrong_bottleneck"].checked
    assert "(exps 5, 6) optimize memory" in checks["wrong_bottleneck"].sentence


def test_the_readme_names_the_one_file_a_later_step_writes_again() -> None:
    text = " ".join((EXAMPLES / "README.md").read_text(encoding="utf-8").split())
    assert (
        "a log never rewrites a result; the one file a later step writes again is "
        "`experiments/profile.md`, the profile hand-off, which step 7 replaces on the GPU path"
    ) in text
    # Steps 2 and 7 are the two that write it.
    writers = [
        script.name
        for script in STEP_SCRIPTS
        if '(S.experiments / "profile.md").write_text(' in script.read_text(encoding="utf-8")
    ]
    assert writers == ["02_naive_kernel.py", "07_learn.py"]


@pytest.mark.parametrize("spelling", ["1", "true", "ON"])
def test_the_gpu_path_refuses_every_spelling_of_the_interpreter_switch(
    spelling: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Triton takes 1, true, on and yes alike: a GPU run with any of them set would time
    # the interpreter, so the step stops before it starts.
    import torch

    steps = _load_steps()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("TRITON_INTERPRET", spelling)
    with pytest.raises(SystemExit):
        steps.setup(2, "step", ["--gpu", "--log", "unused"])
    assert (
        f"TRITON_INTERPRET={spelling} is set: unset it for the GPU path" in capsys.readouterr().err
    )
