"""What a new user met running the loop on the CPU, and what docs/bench.md told them:
failed experiments need ``status`` and ``correctness`` both, a CPU timing has no place on a
GPU's roofline, the two speedup conventions are named, the benchmark scripts refuse a bad
``--out`` before they time anything, and every option of theirs says what it does."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from kernelopt._errors import FormatError, InputError
from kernelopt.bench import (
    Ceilings,
    Comparison,
    Cost,
    Measurement,
    Roofline,
    profile_report,
    to_result_row,
    write_experiment,
)
from kernelopt.bench.records import check_appendable

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "bench.md"
BENCHMARKS = ROOT / "benchmarks"

H200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.2497501e12, matmul_flop_per_s=693.66e12)
HOST = Ceilings(gpu="cpu", copy_bytes_per_s=2e10, matmul_flop_per_s=1e12)
# The user's RMSNorm: 4 rows of 4097, read and written in bf16, and a weight row.
RMSNORM = Cost(flops=4 * 4 * 4097, bytes=2 * 4 * 4097 * 2 + 4097 * 2)
CPU_TIMING = Measurement(
    samples=[44000.0, 44440.0, 44880.0], gpu="cpu", backend="cpu-perf-counter", mode="hot"
)


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


# --- A. a failed experiment: both required keywords, on the page as in the signature -----


def test_the_page_says_status_and_correctness_are_both_required_for_a_failed_version() -> None:
    # It said "pass rows=[] with correctness="FAIL" (or status="FAILED")", and the call
    # written that way raised "missing 1 required keyword-only argument: 'status'".
    page = " ".join(_page().split())
    assert 'pass `rows=[]` with `correctness="FAIL"` (or `status="FAILED"`)' not in page
    assert "`status` and `correctness` are required keywords of every call" in page


def test_the_pages_failed_experiment_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = [b for b in _python_blocks(_page()) if "rows=[]" in b and "write_experiment" in b]
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], str(PAGE), "exec"), {})
    assert capsys.readouterr().out == "REVERTED FAIL ()\n"


def test_status_stays_a_required_keyword(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="required keyword-only argument: 'status'"):
        write_experiment(  # type: ignore[call-arg]
            tmp_path / "experiments", experiment=1, title="x", rows=[], correctness="FAIL"
        )
    assert not (tmp_path / "experiments").exists()


# --- B. a CPU timing on a GPU's roofline ------------------------------------------------


def test_a_cpu_timing_is_not_placed_on_a_gpus_roofline() -> None:
    # It gave floor_pct=3.9e-05 without a word.
    line = Roofline(ceilings=H200, cost=RMSNORM)
    with pytest.raises(InputError) as refused:
        line.place(CPU_TIMING)
    assert str(refused.value).startswith(
        "measured: Expected a timing made on a GPU, as the ceilings of 'NVIDIA H200' are, "
        "got one made on 'cpu' (Measurement.gpu): "
    )
    assert "gpu='cpu'" in str(refused.value)


def test_a_cpu_timing_gets_no_gpu_floor_in_result_md(tmp_path: Path) -> None:
    # to_result_row(..., floor=line) wrote "Of floor 5.8e-05%" into result.md.
    line = Roofline(ceilings=H200, cost=RMSNORM)
    with pytest.raises(InputError, match=r"^floor: Expected a timing made on a GPU"):
        to_result_row(CPU_TIMING, point={"rows": 4, "hidden": 4097}, impl="triton", floor=line)


def test_a_profile_of_a_cpu_timing_on_gpu_ceilings_is_refused_by_argument() -> None:
    line = Roofline(ceilings=H200, cost=RMSNORM)
    common = {"kernel": "rmsnorm", "version": "v1", "point": {"b": 4, "s": 1, "t": 4097}}
    with pytest.raises(InputError, match=r"^measurement: Expected a timing made on a GPU"):
        profile_report(**common, measurement=CPU_TIMING, roofline=line)  # type: ignore[arg-type]
    gpu = Measurement(samples=[10.0, 10.5, 11.0], gpu="NVIDIA H200")
    with pytest.raises(InputError, match=r"^baseline: Expected a timing made on a GPU"):
        profile_report(  # type: ignore[arg-type]
            **common, measurement=gpu, baseline=CPU_TIMING, roofline=line
        )


def test_a_gpu_timing_is_not_placed_on_the_hosts_ceilings() -> None:
    line = Roofline(ceilings=HOST, cost=RMSNORM)
    with pytest.raises(InputError, match="Expected a timing made on the host, as the ceilings"):
        line.place(Measurement(samples=[10.0], gpu="NVIDIA H200"))


def test_timings_of_the_ceilings_kind_of_device_and_unnamed_ones_are_placed_as_before() -> None:
    gpu_line = Roofline(ceilings=H200, cost=RMSNORM)
    for measured in (
        Measurement(samples=[10.0], gpu="NVIDIA H200"),
        Measurement(samples=[10.0], gpu="NVIDIA H100"),  # GPU on GPU: unchanged
        Measurement(samples=[10.0]),  # samples given by hand name no device
    ):
        assert gpu_line.place(measured).floor_pct == pytest.approx(gpu_line.place(10.0).floor_pct)
    host_line = Roofline(ceilings=HOST, cost=RMSNORM)
    placed = host_line.place(CPU_TIMING)
    assert placed.floor_pct == pytest.approx(100 * host_line.floor("us") / CPU_TIMING.median)


# --- C. the time ratio and the speedup, named -------------------------------------------


def test_the_printed_verdict_names_the_time_ratio_and_the_speedup() -> None:
    # It printed "FAST 0.284x" while result.speedup was 3.522: two conventions, unnamed.
    result = Comparison(
        verdict="FAST", ratio=0.284, ratio_low=0.28, ratio_high=0.29, noise=0.004, threshold=0.01
    )
    assert str(result) == (
        "FAST 0.284x [0.280, 0.290] the baseline's time, speedup 3.521x, "
        "same-version spread ±0.4%, threshold ±1.0%"
    )
    slower = Comparison(
        verdict="SLOW", ratio=1.25, ratio_low=1.2, ratio_high=1.3, noise=0.004, threshold=0.01
    )
    assert "1.250x [1.200, 1.300] the baseline's time, speedup 0.8x," in str(slower)


def test_a_5758x_speedup_prints_its_digits_both_ways() -> None:
    result = Comparison(
        verdict="FAST",
        ratio=0.00017366,
        ratio_low=0.0001729,
        ratio_high=0.0001745,
        noise=0.004,
        threshold=0.01,
    )
    assert str(result).startswith(
        "FAST 0.0001737x [0.0001729, 0.0001745] the baseline's time, speedup 5758x, "
    )


def test_the_page_defines_the_time_ratio_and_the_speedup() -> None:
    page = " ".join(_page().split())
    assert "the **time ratio**, `result.ratio`: the candidate's time over the baseline's" in page
    assert "the **speedup**, `result.speedup`: the baseline's time over the candidate's" in page
    # It called the time ratio 0.0001737x "a 5759x speedup".
    assert "a 5759x speedup prints `FAST 0.0001737x" not in page


# --- D. a bad --out refused before any timing -------------------------------------------


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    if str(BENCHMARKS) not in sys.path:  # run as files, the scripts find _common beside them
        sys.path.append(str(BENCHMARKS))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _run(name: str, args: list[str], monkeypatch: pytest.MonkeyPatch) -> object:
    """Run a script's main with ``args``; its exit code, or the SystemExit's."""
    main = _script(name).main
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *args])  # some read sys.argv themselves
    try:
        return main(args) if main.__code__.co_argcount else main()
    except SystemExit as stopped:
        return stopped.code


def _cut_file(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b'{"op": "a", "impl": "b", "med')
    return path, f"argument --out: {path}:1: Expected a whole row as the last line to append"


def _utf16_file(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "u16.jsonl"
    path.write_text("", encoding="utf-16")  # a byte-order mark alone
    return path, (
        f"argument --out: {path}: Expected a UTF-8 JSONL file of benchmark rows, got a "
        "UTF-16-LE file (its byte-order mark)"
    )


# Each script that appends to --out, with sizes small enough that a run that ignored a bad
# file ends quickly: in a traceback at the append, or appending to it.
_APPENDING_ON_CPU = {
    "judge_host": ["--sizes", "100", "--repeat", "1"],
    "workload_host": ["--sizes", "200", "--repeat", "1"],
    "catalog_load": ["--repeat", "1"],
    "diagnose_speed": ["--experiments", "1", "--repeat", "1"],
    "workload_profile": ["--calls", "10", "--shapes", "1", "--recorder-calls", "10"],
    "mla_decode": ["--smoke", "--strategies", "naive", "--peers", ""],
}
_GPU_ONLY = ("bench_verify", "gather_index_select", "mla_buffers", "mla_host_cost")


@pytest.mark.parametrize("bad", [_cut_file, _utf16_file], ids=["cut-line", "utf-16"])
@pytest.mark.parametrize("name", sorted(_APPENDING_ON_CPU))
def test_a_script_refuses_an_out_it_could_not_append_to_before_timing(
    name: str,
    bad: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # judge_host timed every size, then ended in a FormatError traceback (rc 1); the
    # scripts appending their own JSON rows appended UTF-8 to a UTF-16 file.
    out, message = bad(tmp_path)  # type: ignore[operator]
    before = out.read_bytes()
    code = _run(name, [*_APPENDING_ON_CPU[name], "--out", str(out)], monkeypatch)
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err
    assert out.read_bytes() == before


@pytest.mark.parametrize("name", _GPU_ONLY)
def test_a_gpu_script_refuses_an_out_it_could_not_append_to_before_the_gpu(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Said to be there: past the refusal, the first CUDA call would raise.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    out, message = _cut_file(tmp_path)
    code = _run(name, ["--out", str(out)], monkeypatch)
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_script_of_its_own_json_rows_appends_after_a_whole_row_without_its_newline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An earlier row of the script's own (no BenchRow), its newline lost to an editor: taken,
    # and the new rows start on a line of their own instead of being glued to it.
    out = tmp_path / "catalog_load.jsonl"
    out.write_text('{"series": "cold_process", "median": 41.0}', encoding="utf-8")
    assert _run("catalog_load", ["--repeat", "1", "--out", str(out)], monkeypatch) == 0
    capsys.readouterr()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["series"] for line in lines] == [
        "cold_process",
        "cold_process",
        "parse_only",
    ]


def test_a_script_that_replaces_its_file_takes_one_it_would_not_append_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # buffers_overhead writes its file anew: a UTF-16 file there is replaced, not refused.
    out, _ = _utf16_file(tmp_path)
    args = ["--device", "cpu", "--calls", "1", "--repeats", "2", "--out", str(out)]
    assert _run("buffers_overhead", args, monkeypatch) == 0
    capsys.readouterr()
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and all(row["device"] == "cpu" for row in rows)


def test_check_appendable_reads_the_last_line_as_the_file_holds_it(tmp_path: Path) -> None:
    own = tmp_path / "own.jsonl"
    own.write_text('{"series": "a"}\n{"series": "b"}\n', encoding="utf-8")
    assert check_appendable(own, rows="json") == own
    with pytest.raises(FormatError, match=r"own\.jsonl:2: Expected a whole row"):
        check_appendable(own)  # no BenchRow
    own.write_text('{"series": "a"}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"Expected a JSON object, got list"):
        check_appendable(own, rows="json")
    with pytest.raises(InputError, match=r"^rows: Expected rows 'bench' or 'json', got 'csv'"):
        check_appendable(own, rows="csv")  # type: ignore[arg-type]


# --- E. help text for every option -------------------------------------------------------


class _StopAtParseError(Exception):
    """Raised in place of parsing: the parser the script built, its options all added."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def _parser_of(name: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    def stop(self: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        raise _StopAtParseError(self)

    main = _script(name).main
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop)
    with pytest.raises(_StopAtParseError) as parsed:
        main([]) if main.__code__.co_argcount else main()
    return parsed.value.parser


SCRIPTS = sorted(path.stem for path in BENCHMARKS.glob("*.py"))


def test_every_script_is_checked() -> None:
    assert set(SCRIPTS) == {*_APPENDING_ON_CPU, *_GPU_ONLY, "buffers_overhead"}


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_option_of_every_script_says_what_it_does(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # workload_profile.py --help and workload_host.py --help listed bare option names.
    parser = _parser_of(name, monkeypatch)
    bare = [
        "/".join(action.option_strings)
        for action in parser._actions
        if action.option_strings and not (action.help and action.help.strip())
    ]
    assert bare == [], f"{name}: options without help: {bare}"


@pytest.mark.parametrize("name", ["workload_profile", "workload_host"])
def test_help_describes_each_option(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(name, ["--help"], monkeypatch) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "is appended to (default: write no file)" in text
    assert "calls in the generated trace" in text or "lines of each generated trace" in text
