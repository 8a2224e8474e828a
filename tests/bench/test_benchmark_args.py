"""The benchmark scripts' arguments: a value they cannot use is a usage error (exit 2)
before anything runs, and a run that times part of a results file never replaces it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
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
