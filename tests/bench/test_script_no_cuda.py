"""A benchmark script run without CUDA says why torch sees none and what to do, in the
library's words: the scripts said only "got none (torch.cuda.is_available() is False)",
the same for a CPU build of torch as for a CUDA build that sees no GPU."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

# Each script that times a GPU: the arguments it needs to get as far as the device, what
# it expected, and what it offers instead.
SCRIPTS = {
    "bench_verify": ([], "a CUDA device", ""),
    "gather_index_select": ([], "a CUDA device", ""),
    "mla_buffers": ([], "a CUDA device", ""),
    "mla_host_cost": ([], "a CUDA device to time kernel launches on", ""),
    "buffers_overhead": (
        [],
        "a CUDA device for --device all",
        "; or time the CPU alone with --device cpu",
    ),
    "mla_decode": (
        ["--strategies", "naive", "--peers", ""],
        "a CUDA device",
        "; or check the script on the CPU with --smoke",
    ),
}


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    if str(BENCHMARKS) not in sys.path:  # run as files, the scripts find _common beside them
        sys.path.append(str(BENCHMARKS))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_gpu_benchmark_without_cuda_says_why_and_what_to_do(
    name: str,
    why_no_cuda: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args, what, instead = SCRIPTS[name]
    main = script(name).main
    argv = [*args, "--out", str(tmp_path / "rows.jsonl")]
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *argv])  # some scripts read it
    code = main(argv) if main.__code__.co_argcount else main()
    err = capsys.readouterr().err
    assert (code, err) == (2, f"{name}: Expected {what}, got none: {why_no_cuda}{instead}\n")
    assert list(tmp_path.iterdir()) == []


def test_without_torch_a_script_says_torch_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The check imported torch itself, and failed with a bare ModuleNotFoundError.
    script("gather_index_select")  # the script imports torch, as it times with it
    from _common import no_cuda

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert no_cuda("gather_index_select") is True
    assert capsys.readouterr().err == (
        "gather_index_select: Expected a CUDA device, got none: torch is not installed; "
        "install a CUDA build of torch\n"
    )
