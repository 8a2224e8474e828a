"""What read_log counts as profiling data, advice and pass markers; `until` past the end;
traces of calls; typed errors from the records and entry points; a complete __all__."""

from __future__ import annotations

import json
import math
import types
from pathlib import Path

import pytest

import kernelopt.experiments as experiments_pkg
from kernelopt._errors import FormatError, InputError
from kernelopt.experiments import (
    Correctness,
    ReadLimits,
    ResultRecord,
    ResultRow,
    Status,
    Tagger,
    append_lesson,
    experiment_dir,
    parse_result,
    read_log,
    render_result,
    write_plan,
)
from kernelopt.experiments.readers._metrics import is_profiling_line

SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | baseline | 100 | us | PASS | BASELINE |
| 2 | split the keys | 80 | us | PASS | KEPT |
"""
# What kernelopt diagnose writes (kernelopt/diagnose/plan.py): a verdict, not a record.
PLAN = """# Plan: log — clean-context diagnosis

Read 2 experiments (exp 1–2; 2 attempted) from log [seed].

## Pathology checklist

- [x] 4. Wrong bottleneck — No profiling data: instrument with CUDA events (L2 flushed) first.
- [ ] 7. Ignored prior research — No note with recommendations found, so nothing was ignored.
- [x] 9. Overlooked shortcut — The workload profile shows s_q = 1 in 88% of calls (ncu: 42 us).

## Plan

1. Time each stage with CUDA events (L2 flushed, median of many runs) and record it.
"""


def _log(root: Path) -> Path:
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "line",
    [
        "<!-- kernelopt workload-profile v1 -->",
        "- Time with kernelopt.bench (CUDA events, L2 flushed, median).",
        "Profile with ncu on the H200 at b=32 s=1 h=128",
        "see profile.md:12 for the profiler output",
        "- Date: 2026-04-21 (ncu profile run)",
    ],
)
def test_a_profiler_named_next_to_a_digit_is_no_measurement(line: str) -> None:
    assert not is_profiling_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "Timed with CUDA events: median 412.3 us",
        "ncu: sm__throughput.avg.pct_of_peak_sustained_elapsed 45.2",
        "ncu achieved_occupancy=0.41",
        "| cuda-events | `16.452` | `2.686` | `1.406` |",
        "NCU showed 76,800 spill requests",
        "DRAM throughput 81%",
    ],
)
def test_a_profiler_next_to_a_measurement_is_profiling_data(line: str) -> None:
    assert is_profiling_line(line)


def test_files_about_the_log_are_not_profiling_data(tmp_path: Path) -> None:
    root = _log(tmp_path / "log")
    (root / "CLAUDE.md").write_text("# K\n\n- Time with CUDA events: 3 runs, L2 flushed\n")
    (root / "experiments" / "workload_profile.md").write_text(
        "<!-- kernelopt workload-profile v1 -->\n# Workload profile\n\n- Time (us): 71075.4\n"
    )
    (root / "experiments" / "diagnosis.md").write_text(PLAN, encoding="utf-8")
    entry = root / "docs" / "knowledge" / "anti-patterns" / "slow.md"
    entry.parent.mkdir(parents=True)
    entry.write_text("# Slow\n\n- id: slow\n- kind: anti-pattern\n\nncu: 2.4e+05 us per call\n")
    for until in (None, 2, 3, 99):
        assert read_log(root, until=until).profiling == (), until
    # A note that measures is read; under a cut only when it can be placed before it, and a
    # loose note names no experiment (an until past them all is no cut).
    (root / "experiments" / "notes.md").write_text("Profiled with ncu: DRAM 81%, 412 us\n")
    assert [f.source.path for f in read_log(root).profiling] == ["experiments/notes.md"]
    assert [f.source.path for f in read_log(root, until=99).profiling] == ["experiments/notes.md"]
    assert read_log(root, until=2).profiling == ()


def test_until_past_the_last_experiment_is_no_cut(tmp_path: Path) -> None:
    root = _log(tmp_path / "log")
    (root / "experiments" / "ideas.md").write_text(
        "# Ideas\n\n## Next steps\n\n- Try split-KV flash decoding\n"
    )
    calls = [{"op": "softmax", "args": {"x": {"shape": [8, 128]}}, "duration_us": 5.0}] * 3
    (root / "runs").mkdir()
    (root / "runs" / "trace.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    whole = read_log(root)
    for until in (3, 99):
        assert read_log(root, until=until) == whole
    cut = read_log(root, until=2)
    assert cut.until == 2 and [e.number for e in cut.experiments] == [1]


def test_a_trace_of_calls_is_a_series_of_calls_never_the_primary_one(tmp_path: Path) -> None:
    root = tmp_path / "log"
    (root / "runs").mkdir(parents=True)
    calls = [{"op": "mla_decode", "args": {"q": {"shape": [2, 1, 16, 576]}}, "duration_us": 9.0}]
    (root / "runs" / "trace.jsonl").write_text(json.dumps(calls[0]) + "\n" + json.dumps(calls[0]))
    log = read_log(root)
    assert log.experiments == ()
    (trace,) = log.series
    assert trace.kind == "trace" and not any(e.attempted for e in trace.experiments)
    _log(root)
    log = read_log(root)
    assert [e.number for e in log.experiments] == [1, 2]
    assert [s.kind for s in log.series][-1] == "trace"


def test_a_plan_kernelopt_wrote_is_neither_advice_nor_an_experiments_change(
    tmp_path: Path,
) -> None:
    root = _log(tmp_path / "log")
    (root / "experiments" / "diagnosis.md").write_text(PLAN, encoding="utf-8")
    (root / "experiments" / "exp_2").mkdir()
    (root / "experiments" / "exp_2" / "plan.md").write_text(PLAN, encoding="utf-8")
    log = read_log(root)
    assert log.recommendations == ()
    assert log.experiment(2).tags == ()  # type: ignore[union-attr]
    # The same checklist line in a note of the user's is read as advice.
    (root / "experiments" / "next.md").write_text(PLAN.replace("# Plan: log", "# My plan"))
    assert read_log(root).recommendations


@pytest.mark.parametrize(("marker", "verdict"), [("12/12", "PASS"), ("11/12", "FAIL")])
def test_a_pass_field_is_a_correctness_verdict(tmp_path: Path, marker: str, verdict: str) -> None:
    root = tmp_path / "log"
    folder = root / "experiments" / "exp_1"
    folder.mkdir(parents=True)
    (folder / "result.md").write_text(f"# Exp 1: baseline\n\n- Latency: 100 us\n- Pass: {marker}\n")
    assert read_log(root).experiments[0].correctness is Correctness(verdict)
    devlog = tmp_path / "devlog"
    devlog.mkdir()
    (devlog / "optimization_log.md").write_text(
        "# Log\n\n## 2026-04-20 - Baseline (ACCEPTED)\n\n- Result: 100 us\n- Pass: 12/12\n\n"
        f"## 2026-04-21 - Split keys (ACCEPTED)\n\n- Result: 80 us\n- Pass: {marker}\n"
    )
    assert read_log(devlog).experiments[-1].correctness is Correctness(verdict)


def _row(**fields: object) -> ResultRow:
    values: dict[str, object] = {"point": "b=1", "impl": "k", "median": 1.0, "unit": "us"}
    values.update(fields)
    return ResultRow(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: ReadLimits(max_files=0), "max_files"),
        (lambda: ReadLimits(max_depth=-1), "max_depth"),
        (lambda: ReadLimits(max_file_bytes=True), "max_file_bytes"),
        (lambda: _row(unit="sec"), "unit"),
        (lambda: _row(point=None), "point"),
        (lambda: _row(median="fast"), "median"),
        (lambda: _row(speedup=math.inf), "speedup"),
        (
            lambda: ResultRecord(experiment=-1, title="t", status="KEPT", correctness="PASS"),
            "experiment",
        ),
        (
            lambda: ResultRecord(
                experiment=1, title="t", status="KEPT", correctness="PASS", rows=[1.0]
            ),
            "rows",
        ),
        (
            lambda: ResultRecord(
                experiment=1, title="t", status="KEPT", correctness="PASS", knobs=None
            ),
            "knobs",
        ),
    ],
)
def test_records_refuse_bad_fields_with_an_input_error(build: object, field: str) -> None:
    with pytest.raises(InputError, match=rf"^{field}: Expected "):
        build()  # type: ignore[operator]


def test_a_lone_tag_is_one_tag() -> None:
    record = ResultRecord(experiment=1, title="t", status=Status.KEPT, correctness="PASS", tags="x")
    assert record.tags == ("x",)


def test_entry_points_refuse_wrong_types(tmp_path: Path) -> None:
    root = _log(tmp_path / "log")
    with pytest.raises(InputError, match="path: Expected a path"):
        read_log(123)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="limits: Expected limits as a ReadLimits"):
        read_log(root, limits={})  # type: ignore[arg-type]
    with pytest.raises(InputError, match="catalog: Expected catalog as a Catalog"):
        read_log(root, catalog=42)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="catalog: Expected catalog entries"):
        read_log(root, catalog=["split-kv"])  # type: ignore[list-item]
    with pytest.raises(InputError, match=r"Expected an experiment number in 0\.\.99999"):
        experiment_dir(root, "3")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="record: Expected a ResultRecord"):
        render_result(None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"text: Expected result\.md text"):
        parse_result(None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="text: Expected plan text"):
        write_plan(root, 1, None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="text: Expected the lesson as a str, got NoneType"):
        append_lesson(root, None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="entries: Expected catalog entries"):
        Tagger(42)  # type: ignore[arg-type]
    with pytest.raises(FormatError, match="Expected '# Experiment N: title', got '# Experiment 1'"):
        parse_result("# Experiment 1\n")


def _public_names(module: types.ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and getattr(value, "__module__", "") != "__future__"
        and type(value).__name__ != "_Feature"
    }


def test_all_is_complete() -> None:
    assert _public_names(experiments_pkg) == set(experiments_pkg.__all__)
    assert all(getattr(experiments_pkg, name) is not None for name in experiments_pkg.__all__)


@pytest.mark.parametrize("named", ["./kernels/mla_decode.py", "`./kernels/mla_decode.py`"])
def test_a_kernel_named_from_the_current_folder_is_read(tmp_path: Path, named: str) -> None:
    root = _log(tmp_path)
    (root / "kernels").mkdir()
    (root / "kernels" / "mla_decode.py").write_text("import triton\n", encoding="utf-8")
    (root / "CLAUDE.md").write_text(f"# Rules\n\nKernel: {named}\n", encoding="utf-8")

    log = read_log(root)

    assert log.kernel_path is not None and log.kernel_path.text == "kernels/mla_decode.py"
    assert [k.path for k in log.current_kernels] == ["kernels/mla_decode.py"]


def test_a_kernel_named_above_the_folder_is_still_not_followed(tmp_path: Path) -> None:
    root = _log(tmp_path)
    (root / "CLAUDE.md").write_text("# Rules\n\nKernel: ../kernels/k.py\n", encoding="utf-8")

    log = read_log(root)

    # The path is what CLAUDE.md says (kept), but no file outside the log is read by it:
    # the user is told why the kernel was not.
    assert log.kernel_path is not None and log.kernel_path.text == "../kernels/k.py"
    assert not log.kernels
    assert [(u.path, u.reason) for u in log.unread] == [
        (
            "../kernels/k.py",
            "named as the kernel in CLAUDE.md:3, climbs out of the log with '..'; not followed",
        )
    ]
