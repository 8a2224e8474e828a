"""The benchmark scripts' arguments: a value they cannot use is a usage error (exit 2)
before anything runs, and a run that times part of a results file never replaces it."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from kernelopt.bench.timer import no_cuda_reason

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    if str(BENCHMARKS) not in sys.path:  # run as files, the scripts find _common beside them
        sys.path.append(str(BENCHMARKS))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _usage_error(run: object, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        run()  # type: ignore[operator]
    assert stopped.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--calls", "0"], "argument --calls: Expected an int >= 1, got 0"),
        (["--repeats", "1"], "argument --repeats: Expected an int >= 2, got 1"),
        (["--repeats", "x"], "argument --repeats: Expected an int >= 2, got 'x'"),
    ],
)
def test_buffers_overhead_refuses_counts_it_cannot_time(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --calls 0 divided by zero and --repeats 1 left one sample for two quantiles: both
    # ended in a traceback.
    main = _script("buffers_overhead").main
    out = tmp_path / "rows.jsonl"
    err = _usage_error(lambda: main(["--device", "cpu", *args, "--out", str(out)]), capsys)
    assert message in err and not out.exists()


def test_buffers_overhead_on_one_device_leaves_the_results_file_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The default --out holds rows of both devices: a CPU-only run used to replace them.
    monkeypatch.chdir(tmp_path)
    main = _script("buffers_overhead").main
    assert main(["--device", "cpu", "--calls", "2", "--repeats", "2"]) == 0
    assert list(tmp_path.iterdir()) == []
    assert "rows not written (--device cpu without --out)" in capsys.readouterr().out
    out = tmp_path / "cpu.jsonl"
    assert main(["--device", "cpu", "--calls", "2", "--repeats", "2", "--out", str(out)]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 15  # 3 shapes x 5 ways


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rounds", "0"], "argument --rounds: Expected an int >= 1, got 0"),
        (["--heat-ms", "-5"], "argument --heat-ms: Expected a finite number >= 0, got '-5'"),
        (["--rest-s", "nan"], "argument --rest-s: Expected a finite number >= 0, got 'nan'"),
    ],
)
def test_bench_verify_refuses_settings_it_would_change_or_cannot_use(
    args: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --rounds 0 ran one round, silently.
    monkeypatch.setattr(sys, "argv", ["bench_verify.py", *args])
    assert message in _usage_error(_script("bench_verify").main, capsys)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-time-ms", "0"], "argument --max-time-ms: Expected a finite number > 0, got '0'"),
        (["--max-time-ms", "-1"], "argument --max-time-ms: Expected a finite number > 0, got '-1'"),
        (["--modes", "cold,fast"], "Expected modes among ['cold', 'hot', 'graph'], got 'fast'"),
        (["--modes", ","], "Expected modes among ['cold', 'hot', 'graph'], got none"),
    ],
)
def test_mla_decode_refuses_timer_settings_before_it_runs(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # --max-time-ms 0 was read as "the default"; a bad mode failed every timing on the GPU.
    main = _script("mla_decode").main
    assert message in _usage_error(lambda: main(args), capsys)


# Each script, with sizes small enough that a run that ignored a bad --out would end
# quickly (in a traceback at the write, after the timings).
_CPU_RUNS = {
    "catalog_load": ["--repeat", "1"],
    "diagnose_speed": ["--experiments", "1", "--repeat", "1"],
    "workload_profile": ["--calls", "10", "--shapes", "1", "--recorder-calls", "10"],
    "buffers_overhead": ["--device", "cpu", "--calls", "1", "--repeats", "2"],
    "mla_decode": ["--smoke", "--strategies", "naive", "--peers", ""],
    "judge_host": ["--sizes", "1000", "--repeat", "1"],
    "workload_host": ["--sizes", "200", "--repeat", "1"],
}
_GPU_ONLY = ("bench_verify", "gather_index_select", "mla_buffers", "mla_host_cost")


def _run_script(name: str, args: list[str], monkeypatch: pytest.MonkeyPatch) -> object:
    main = _script(name).main
    # Some of the scripts read sys.argv themselves.
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *args])
    return lambda: main(args) if main.__code__.co_argcount else main()


def _unwritable_outs(tmp_path: Path) -> list[tuple[Path, str]]:
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder\n", encoding="utf-8")
    read_only = tmp_path / "read_only"
    read_only.mkdir()
    read_only.chmod(0o500)
    outs = [
        (a_file / "rows.jsonl", f"{a_file} is not a folder"),
        (tmp_path, f"{tmp_path} is a folder"),
    ]
    if not os.access(read_only, os.W_OK):  # root writes anywhere
        outs.append((read_only / "rows.jsonl", f"{read_only} is not writable"))
    return outs


@pytest.mark.parametrize("name", sorted(_CPU_RUNS))
def test_an_out_that_cannot_be_written_is_refused_before_the_run(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each of these ran its timings, then ended in a traceback when it wrote the rows.
    for out, reason in _unwritable_outs(tmp_path):
        run = _run_script(name, [*_CPU_RUNS[name], "--out", str(out)], monkeypatch)
        err = _usage_error(run, capsys)
        assert f"argument --out: Expected a file that rows can be written to, got {out}" in err
        assert reason in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "read_only"]


@pytest.mark.parametrize("name", _GPU_ONLY)
def test_a_gpu_benchmark_refuses_an_unwritable_out_before_it_touches_the_gpu(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # On a GPU these timed for minutes, then lost the rows at the write. Here the GPU is
    # said to be present: the first CUDA call after the refusal would raise.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    out, reason = _unwritable_outs(tmp_path)[0]
    err = _usage_error(_run_script(name, ["--out", str(out)], monkeypatch), capsys)
    assert f"argument --out: Expected a file that rows can be written to, got {out}" in err
    assert reason in err, err


@pytest.mark.parametrize("name", [*sorted(_CPU_RUNS), *_GPU_ONLY])
def test_an_out_in_a_folder_yet_to_be_made_is_taken_and_made_only_to_write(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    out = tmp_path / "new" / "rows.jsonl"
    code = _run_script(name, [*_CPU_RUNS.get(name, []), "--out", str(out)], monkeypatch)()  # type: ignore[operator]
    capsys.readouterr()
    if name in _GPU_ONLY:  # refused for want of a GPU: nothing made
        assert code == 2 and list(tmp_path.iterdir()) == []
    else:
        assert code == 0 and out.read_text(encoding="utf-8").count("\n") >= 1


_NO_CUDA = f"got none: {no_cuda_reason()}"
# What each script that times on a GPU says without one, after the arguments it needs.
_WITHOUT_CUDA = {
    "bench_verify": ([], f"bench_verify: Expected a CUDA device, {_NO_CUDA}"),
    "gather_index_select": ([], f"gather_index_select: Expected a CUDA device, {_NO_CUDA}"),
    "mla_buffers": ([], f"mla_buffers: Expected a CUDA device, {_NO_CUDA}"),
    "mla_host_cost": (
        [],
        f"mla_host_cost: Expected a CUDA device to time kernel launches on, {_NO_CUDA}",
    ),
    "buffers_overhead": (
        [],
        f"buffers_overhead: Expected a CUDA device for --device all, {_NO_CUDA}; or time the "
        "CPU alone with --device cpu",
    ),
    "mla_decode": (
        ["--strategies", "naive", "--peers", ""],
        f"mla_decode: Expected a CUDA device, {_NO_CUDA}; or check the script on the CPU "
        "with --smoke",
    ),
}


@pytest.mark.parametrize("name", sorted(_WITHOUT_CUDA))
def test_a_gpu_benchmark_without_cuda_says_what_it_expected(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # They printed "<script>: needs a CUDA device", unlike every other error of the project.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    args, message = _WITHOUT_CUDA[name]
    out = tmp_path / "rows.jsonl"
    code = _run_script(name, [*args, "--out", str(out)], monkeypatch)()  # type: ignore[operator]
    assert (code, capsys.readouterr().err) == (2, message + "\n")
    assert list(tmp_path.iterdir()) == []


def test_mla_decode_refuses_a_workload_path_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It ended in an InputError traceback.
    main = _script("mla_decode").main
    err = _usage_error(lambda: main(["--workload", str(tmp_path)]), capsys)
    expected = "argument --workload: Expected a file that rows can be written to"
    assert f"{expected}, got {tmp_path} ({tmp_path} is a folder)" in err


def _head() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=BENCHMARKS, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.parametrize("name", sorted(_CPU_RUNS))
def test_a_row_carries_the_commit_of_the_scripts_run_from_anywhere(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Rows named no commit at all (the CPU benchmarks), or the commit of whatever folder
    # the script ran in: from outside a checkout, none.
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "rows.jsonl"
    assert _run_script(name, [*_CPU_RUNS[name], "--out", str(out)], monkeypatch)() == 0  # type: ignore[operator]
    capsys.readouterr()
    lines = out.read_text(encoding="utf-8").splitlines()
    commits = {json.loads(line).get("commit") for line in lines}
    assert len(commits) == 1, commits
    (commit,) = commits
    assert isinstance(commit, str) and commit.removesuffix("-dirty") == _head()


def test_smoke_runs_on_the_cpu_on_a_gpu_machine_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # --smoke switches the Triton interpreter on, which reads host tensors only: on a GPU
    # machine the kernels failed in the interpreter ("only 0-dimensional arrays ...") and
    # nothing was timed.
    script = _script("mla_decode")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(sys, "argv", ["mla_decode.py", "--smoke"])
    made: list[str] = []
    real = script.make_inputs

    def on_device(point: object, device: str, dtype: torch.dtype, seed: int) -> object:
        made.append(device)
        return real(point, device, dtype, seed)

    monkeypatch.setattr(script, "make_inputs", on_device)
    out_file = tmp_path / "smoke.jsonl"
    args = ["--smoke", "--strategies", "split_kv", "--peers", "", "--out", str(out_file)]
    assert script.main(args) == 0
    out = capsys.readouterr().out
    assert made and set(made) == {"cpu"}
    assert "failed" not in out and "ceilings:" not in out
    rows = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert rows and {row["backend"] for row in rows} == {"cpu-perf-counter"}
