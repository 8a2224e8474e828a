"""Bad input to the public workflow functions: an Expected-message, never a raw error."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelopt import FormatError, InputError, KernelOptError
from kernelopt.bench import Comparison
from kernelopt.workflow import (
    Change,
    Constraints,
    DesignerPrompt,
    NewVersion,
    OptimizationTask,
    PerfRow,
    Target,
    TrialCheck,
    from_dict,
    knowledge_link,
    learn,
    observe_comparison,
    observe_rows,
    parse_change,
    parse_handoff,
    parse_performance,
    parse_point,
    parse_profile,
    parse_task,
    parse_version,
    perf_row_from_profile,
    perf_rows_from_bench,
    profile_from_rows,
    read_performance,
    select_row,
    to_dict,
    update_devlog,
)

from .conftest import bench_row

ROW = bench_row("v2", 66.53)
JUDGED = Comparison(
    verdict="FAST", ratio=0.9, ratio_low=0.89, ratio_high=0.91, noise=0.0, threshold=0.01
)


CASES: list[tuple[str, Callable[[], Any], str]] = [
    (
        "Change.of(id)",
        lambda: Change.of("split-kv-flash-decoding"),
        "the id 'split-kv-flash-decoding' \\(pass catalog.get",
    ),
    ("Change.of(int)", lambda: Change.of(123), "Expected a catalog entry .*, got int"),
    ("knowledge_link(None)", lambda: knowledge_link(None), "entry: Expected a catalog entry"),
    (
        "perf_row_from_profile",
        lambda: perf_row_from_profile("x"),
        "report: Expected a ProfileReport",
    ),
    (
        "perf_rows_from_bench",
        lambda: perf_rows_from_bench([{"median": 1}]),
        "rows: Expected BenchRow rows",
    ),
    (
        "observe_rows(None)",
        lambda: observe_rows(None, ROW, source="x"),
        "before: Expected a BenchRow",
    ),
    (
        "observe_rows(knobs)",
        lambda: observe_rows(ROW, ROW, source="x", knobs="num_splits"),
        "knobs as a list",
    ),
    (
        "observe_comparison",
        lambda: observe_comparison(None, point="b=1", source="x"),
        "comparison: Expected a Comparison",
    ),
    (
        "observe_comparison point",
        lambda: observe_comparison(JUDGED, point=1.5, source="x"),
        "point: Expected a point",
    ),
    (
        "learn(None)",
        lambda: learn(None, entry_id="cuda-graphs"),
        "observation: Expected an Observation",
    ),
    (
        "profile_from_rows([1])",
        lambda: profile_from_rows([1], kernel="k", version="v"),
        "rows: Expected BenchRow rows",
    ),
    (
        "profile_from_rows(str)",
        lambda: profile_from_rows("rows.jsonl", kernel="k", version="v"),
        "a sequence of BenchRow",
    ),
    (
        "profile_from_rows baseline",
        lambda: profile_from_rows([ROW], kernel="k", version="v", baseline=[None]),
        "baseline: Expected BenchRow",
    ),
    ("select_row", lambda: select_row([None]), "Expected BenchRow rows"),
    ("to_dict(42)", lambda: to_dict(42), "record: Expected a kernelopt record"),
    ("to_dict(dict)", lambda: to_dict({"what": "x"}), "got dict"),
    ("parse_task(None)", lambda: parse_task(None), "text: Expected markdown text"),
    ("parse_version(bytes)", lambda: parse_version(b"## New Version: k v"), "got bytes"),
    ("parse_profile(None)", lambda: parse_profile(None), "Expected markdown text"),
    ("parse_handoff(None)", lambda: parse_handoff(None), "Expected markdown text"),
    ("parse_performance(None)", lambda: parse_performance(None), "Expected markdown text"),
    ("parse_change(None)", lambda: parse_change(None), "Expected an item's text"),
    ("parse_point(None)", lambda: parse_point(None), "Expected a trial point's text"),
    (
        "from_profile",
        lambda: OptimizationTask.from_profile(
            "x", new_version="v3", optimizations=[Change(what="y")]
        ),
        "report: Expected a ProfileReport",
    ),
    ("from_task", lambda: DesignerPrompt.from_task(None), "task: Expected an OptimizationTask"),
    ("update_devlog", lambda: update_devlog("d.md", [ROW]), "rows: Expected PerfRow rows"),
    # Records given the wrong kind of value: refused when made, not at render time.
    ("TrialCheck no axis", lambda: TrialCheck(point={}, why="w"), "at least one axis"),
    ("TrialCheck str axis", lambda: TrialCheck(point={"b": "x", "s": 1, "t": 1}, why="w"), "'x'"),
    ("TrialCheck None", lambda: TrialCheck(point=None, why="w"), "got None"),
    (
        "NewVersion str changes",
        lambda: NewVersion(kernel="k", version="v", changes=["fuse"]),
        "changes: Expected Change items",
    ),
    (
        "OptimizationTask str changes",
        lambda: OptimizationTask(
            kernel="k", current="a", new_version="b", bottleneck="x", optimizations=["fuse"]
        ),
        "optimizations: Expected Change items",
    ),
    (
        "OptimizationTask dict constraints",
        lambda: OptimizationTask(
            kernel="k",
            current="a",
            new_version="b",
            bottleneck="x",
            optimizations=[Change(what="x")],
            constraints={"language": "triton"},
        ),
        "constraints: Expected a Constraints",
    ),
    (
        "NewVersion str trials",
        lambda: NewVersion(kernel="k", version="v", changes=[Change(what="x")], trials=["decode"]),
        "trials: Expected TrialCheck items",
    ),
    ("Constraints str", lambda: Constraints(target_occupancy_pct="50"), "got '50'"),
    ("PerfRow str time", lambda: PerfRow(version="v", point="p", time="fast"), "got 'fast'"),
    ("PerfRow None time", lambda: PerfRow(version="v", point="p", time=None), "got None"),
    ("PerfRow str rate", lambda: PerfRow(version="v", point="p", time=1, gb_s="2"), "got '2'"),
]


@pytest.mark.parametrize(("call", "match"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_an_input_error(call: Callable[[], Any], match: str) -> None:
    with pytest.raises(InputError, match=match) as caught:
        call()
    assert "Expected " in str(caught.value)


VERSION = {"kernel": "k", "version": "v", "changes": [{"what": "fuse"}]}
TASK = {
    "kernel": "k", "current": "a", "new_version": "b", "bottleneck": "x",
    "optimizations": [{"what": "fuse"}],
}  # fmt: skip


@pytest.mark.parametrize(
    ("data", "cls", "got"),
    [
        # A string is no list of paths: it read as ('a', '.', 'p', 'y').
        ({**VERSION, "created": "a.py"}, NewVersion, "'a.py'"),
        ({**VERSION, "devlog": ["docs/k.md"]}, NewVersion, "['docs/k.md']"),
        ({**VERSION, "changes": [{"what": 5}]}, NewVersion, "5"),
        ({**TASK, "constraints": {"register_budget": 128.7}}, OptimizationTask, "128.7"),
        ({**TASK, "constraints": {"register_budget": "128"}}, OptimizationTask, "'128'"),
        ({**TASK, "constraints": {"target_occupancy_pct": True}}, OptimizationTask, "True"),
        ({"floor_pct": "80"}, Target, "'80'"),
    ],
)
def test_json_values_are_not_coerced(data: dict[str, Any], cls: type, got: str) -> None:
    with pytest.raises(InputError, match=f"got {re.escape(got)}"):
        from_dict(data, cls)


def test_a_json_value_refused_is_named_by_its_field() -> None:
    with pytest.raises(InputError, match=r"^optimizations\.what: Expected a string, got 5$"):
        from_dict({**TASK, "optimizations": [{"what": 5}]}, OptimizationTask)


def test_json_numbers_read_as_their_fields_type() -> None:
    task = from_dict({**TASK, "constraints": {"target_occupancy_pct": 25}}, OptimizationTask)
    assert task.constraints.target_occupancy_pct == 25.0
    assert from_dict(to_dict(task), OptimizationTask) == task


def test_a_missing_devlog_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "missing.md"
    with pytest.raises(InputError, match=f"path: Expected a devlog file, got no file at {missing}"):
        read_performance(missing)
    with pytest.raises(KernelOptError):
        read_performance(tmp_path)  # a folder is no devlog either
    broken = tmp_path / "k.md"
    broken.write_text("## Performance\n\n### v2\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", "utf-8")
    with pytest.raises(FormatError):
        read_performance(broken)


@pytest.mark.slow
def test_mypy_catches_wrong_arguments(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    code = """
from kernelopt.bench import Comparison
from kernelopt.catalog import Catalog
from kernelopt.workflow import (
    Change, OptimizationTask, knowledge_link, observe_comparison, perf_row_from_profile, to_dict,
)
Change.of(Catalog.builtin().get("cuda-graphs"))
knowledge_link(Catalog.builtin().get("cuda-graphs"))
Change.of(123)
Change.of("split-kv-flash-decoding")
knowledge_link(None)
perf_row_from_profile("x")
to_dict(42)
OptimizationTask.from_profile("x", new_version="v3", optimizations=[])
def judged(c: Comparison) -> None:
    observe_comparison(c, point=1.5, source="x")
"""
    # pytest's cache keeps mypy's between runs; without the cache plugin, a fresh folder.
    store = getattr(request.config, "cache", None)
    cache = store.mkdir("mypy") if store is not None else tmp_path
    config = cache / "strict.ini"
    config.write_text("[mypy]\nstrict = True\n")
    # mypy raises the process's recursion limit (to 2**14) and leaves it there: other
    # tests read how deep Python follows nested JSON, so give the old limit back.
    limit = sys.getrecursionlimit()
    try:
        args = [f"--config-file={config}", f"--cache-dir={cache}", "--follow-imports=silent"]
        out, err, _status = api.run([*args, "-c", code])
    finally:
        sys.setrecursionlimit(limit)
    flagged = sorted(
        int(line.split(":")[1]) for line in out.splitlines() if line.startswith("<string>:")
    )
    # Lines 9 to 14 and 16 pass what the signatures refuse; 7 and 8 pass a real entry.
    assert flagged == [9, 10, 11, 12, 13, 14, 16], out + err
