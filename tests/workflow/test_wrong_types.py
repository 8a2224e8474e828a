"""Wrong-type arguments to kernelopt.workflow get one ``InputError`` naming them.

The cases of tests/test_public_api_wrong_types.py cover one wrong value per callable; these
cover the other arguments and values of the same callables (a path given as a number,
a single str for a list of them, a mapping of text for metrics), each refused before any
file is read or written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from kernelopt import InputError
from kernelopt.bench import Comparison
from kernelopt.catalog import Catalog
from kernelopt.workflow import (
    Change,
    Constraints,
    NewVersion,
    Observation,
    OptimizationTask,
    Target,
    derive_anti_pattern,
    evidence_row,
    learn,
    observe_comparison,
    observe_files,
    observe_rows,
    parse_designer_prompt,
    parse_handoff,
    parse_performance,
    parse_profiler_prompt,
    parse_profiles,
    parse_version,
    perf_rows_from_bench,
    profile_from_rows,
    select_row,
)
from kernelopt.workflow.changes import check_links

from .conftest import anchor_row, memory_bound_report, snapshot, write_rows

ENTRY = "split-kv-flash-decoding"


def _observation() -> Observation:
    return observe_rows(anchor_row("splits16"), anchor_row("splits8"), source="a vs b")


def _comparison() -> Comparison:
    return Comparison(
        verdict="FAST", ratio=0.9, ratio_low=0.89, ratio_high=0.91, noise=0.004, threshold=0.01
    )


def _profile(**wrong: Any) -> object:
    return profile_from_rows([anchor_row("splits8")], kernel="mla_decode", version="v2", **wrong)


CASES: list[Any] = [
    # learn.py
    pytest.param(
        lambda: derive_anti_pattern(Catalog.builtin().get(ENTRY), _observation(), kernel=5),
        "kernel: Expected a str, got int",
        id="derive_anti_pattern(kernel=5)",
    ),
    pytest.param(
        lambda: derive_anti_pattern(Catalog.builtin().get(ENTRY), _observation(), entry_id=5),
        "entry_id: Expected a str or None, got int",
        id="derive_anti_pattern(entry_id=5)",
    ),
    pytest.param(
        lambda: evidence_row(_observation(), language=5),
        "language: Expected a str or None, got int",
        id="evidence_row(language=5)",
    ),
    # observe.py
    pytest.param(
        lambda: observe_rows(anchor_row("splits16"), anchor_row("splits8"), source="s", knobs=5),
        "knobs: Expected knobs as a list of config keys, got 5",
        id="observe_rows(knobs=5)",
    ),
    pytest.param(
        lambda: observe_rows(
            anchor_row("splits16"), anchor_row("splits8"), source="s", knobs=["num_splits", 5]
        ),
        "knobs[1]: Expected a str, got int",
        id="observe_rows(knobs=[str, int])",
    ),
    pytest.param(
        lambda: select_row([anchor_row("splits8")], point=[]),
        "point: Expected a point as text",
        id="select_row(point=list)",
    ),
    pytest.param(
        lambda: attrs.evolve(_observation(), metrics_after=5),
        "Observation.metrics_after: Expected a mapping of metric names to numbers, got int",
        id="Observation(metrics_after=5)",
    ),
    pytest.param(
        lambda: attrs.evolve(_observation(), metrics_after={"dram_pct": "50"}),
        "Observation.metrics_after['dram_pct']: Expected a number, got str",
        id="Observation(metrics_after=text value)",
    ),
    pytest.param(
        lambda: attrs.evolve(_observation(), metrics_before={"dram_pct": True}),
        "Observation.metrics_before['dram_pct']: Expected a number, got bool",
        id="Observation(metrics_before=bool value)",
    ),
    pytest.param(
        lambda: attrs.evolve(_observation(), knob_changes="num_splits 8 -> 16"),
        "Observation.knob_changes: Expected a sequence of str, got str",
        id="Observation(knob_changes=str)",
    ),
    pytest.param(
        lambda: attrs.evolve(_observation(), knob_changes=[5]),
        "Observation.knob_changes[0]: Expected a str, got int",
        id="Observation(knob_changes=[int])",
    ),
    pytest.param(
        lambda: observe_comparison(_comparison(), point="b=1", source="s", metrics_before=5),
        "metrics_before: Expected a mapping of metric names to numbers, got int",
        id="observe_comparison(metrics_before=5)",
    ),
    pytest.param(
        lambda: observe_comparison(_comparison(), point="b=1", source="s", metrics_after="x"),
        "metrics_after: Expected a mapping of metric names to numbers, got str",
        id="observe_comparison(metrics_after=str)",
    ),
    # readers: the path named in their messages
    pytest.param(
        lambda: parse_version("## New Version: k v2\n", path=5),
        "path: Expected a path (str or path-like) or None, got int",
        id="parse_version(path=5)",
    ),
    pytest.param(
        lambda: parse_handoff("no heading", path=5),
        "path: Expected a path (str or path-like) or None, got int",
        id="parse_handoff(path=5)",
    ),
    pytest.param(
        lambda: parse_profiles(memory_bound_report().render(), path=b"p.md"),
        "path: Expected a path (str or path-like) or None, got bytes",
        id="parse_profiles(path=bytes)",
    ),
    pytest.param(
        lambda: parse_designer_prompt("x", path=5),
        "path: Expected a path (str or path-like) or None, got int",
        id="parse_designer_prompt(path=5)",
    ),
    pytest.param(
        lambda: parse_profiler_prompt("x", path=5),
        "path: Expected a path (str or path-like) or None, got int",
        id="parse_profiler_prompt(path=5)",
    ),
    pytest.param(
        lambda: parse_performance("x", path=5),
        "path: Expected a path (str or path-like) or None, got int",
        id="parse_performance(path=5)",
    ),
    # from_rows.py and devlog.py
    pytest.param(
        lambda: _profile(kernel_source=5),
        "kernel_source: Expected kernel_source as text (or a list of texts), got int",
        id="profile_from_rows(kernel_source=5)",
    ),
    pytest.param(
        lambda: _profile(present=5),
        "present: Expected present as a collection of entry ids, got 5",
        id="profile_from_rows(present=5)",
    ),
    pytest.param(
        lambda: _profile(latency_below_pct=True),
        "latency_below_pct: Expected a finite number, got True",
        id="profile_from_rows(latency_below_pct=True)",
    ),
    pytest.param(
        lambda: _profile(latency_below_pct=float("nan")),
        "latency_below_pct: Expected a finite number, got nan",
        id="profile_from_rows(latency_below_pct=nan)",
    ),
    pytest.param(
        lambda: perf_rows_from_bench([anchor_row("splits8")], ceilings="H200"),
        "ceilings: Expected Ceilings (kernelopt.bench.load_ceilings) or None, got str",
        id="perf_rows_from_bench(ceilings=str)",
    ),
    # records
    pytest.param(
        lambda: NewVersion(kernel="k", version="v2", changes=[], modified=5),
        "NewVersion.modified: Expected a sequence of str, got int",
        id="NewVersion(modified=5)",
    ),
    pytest.param(
        lambda: NewVersion(kernel="k", version="v2", changes=[], created="kernel.py"),
        "NewVersion.created: Expected a sequence of str, got str",
        id="NewVersion(created=str)",
    ),
    pytest.param(
        lambda: Constraints(other="registers <= 128"),
        "Constraints.other: Expected a sequence of str, got str",
        id="Constraints(other=str)",
    ),
    pytest.param(
        lambda: Target(floor_pct=80, points=None),
        "Target.points: Expected points as a list of point terms or trial names, got None",
        id="Target(points=None)",
    ),
    pytest.param(
        lambda: OptimizationTask(
            kernel="k", current="v1", new_version="v2", bottleneck=5, optimizations=[]
        ),
        "OptimizationTask.bottleneck: Expected one non-empty line",
        id="OptimizationTask(bottleneck=5)",
    ),
    pytest.param(
        lambda: check_links([], 5),
        "catalog: Expected a catalog (kernelopt.catalog.Catalog), got int",
        id="check_links(catalog=5)",
    ),
]


@pytest.mark.parametrize(("call", "message"), CASES)
def test_a_wrong_type_is_refused_by_name(call: Callable[[], object], message: str) -> None:
    with pytest.raises(InputError) as refused:
        call()
    assert str(refused.value).startswith(message)


def test_a_bottleneck_is_still_read_as_one_line() -> None:
    task = OptimizationTask(
        kernel="k",
        current="v1",
        new_version="v2",
        bottleneck="Memory-bound --\n  DRAM at 54 %",
        optimizations=[Change(what="fuse the split combine")],
    )
    assert task.bottleneck == "Memory-bound -- DRAM at 54 %"


@pytest.mark.parametrize(
    ("wrong", "message"),
    [
        ({"knowledge": 5}, "knowledge: Expected a path (str or path-like), got 5"),
        ({"knowledge": b"kb"}, "knowledge: Expected a path (str or path-like), got b'kb'"),
        ({"kernel": 5}, "kernel: Expected a str, got int"),
        ({"family": 5}, "family: Expected a str or None, got int"),
        ({"language": ["triton"]}, "language: Expected a str or None, got list"),
    ],
)
def test_learn_refuses_a_wrong_type_before_writing(
    knowledge: Path, wrong: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {"knowledge": knowledge, **wrong}
    before = snapshot(knowledge)
    with pytest.raises(InputError) as refused:
        learn(_observation(), entry_id=ENTRY, **arguments)
    assert str(refused.value) == message
    assert snapshot(knowledge) == before


@pytest.mark.parametrize(
    ("wrong", "message"),
    [
        (
            {"before": None},
            "before: Expected a BenchRow JSONL file (a str or path-like), got NoneType",
        ),
        ({"after": 5}, "after: Expected a BenchRow JSONL file (a str or path-like), got int"),
        ({"knobs": None}, "knobs: Expected knobs as a list of config keys, got None"),
        (
            {"knobs": "num_splits"},
            "knobs: Expected knobs as a list of config keys, got 'num_splits'",
        ),
        ({"point": 5}, "point: Expected a point as text"),
        ({"point": ["b=32"]}, "point: Expected a point as text"),
    ],
)
def test_observe_files_refuses_a_wrong_type_by_name(
    tmp_path: Path, wrong: dict[str, Any], message: str
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", anchor_row("splits16"), anchor_row("splits8"))
    arguments: dict[str, Any] = {
        "before": rows,
        "after": rows,
        "before_impl": "splits16",
        "after_impl": "splits8",
        **wrong,
    }
    with pytest.raises(InputError) as refused:
        observe_files(**arguments)
    assert str(refused.value).startswith(message)


def test_observe_files_still_takes_knobs_as_any_sequence(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", anchor_row("splits16"), anchor_row("splits8"))
    seen = observe_files(
        rows, rows, before_impl="splits16", after_impl="splits8", knobs=["num_splits"]
    )
    assert seen.before_label == "splits16" and seen.after_label == "splits8"
