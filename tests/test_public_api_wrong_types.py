"""Wrong-type and wrong-value arguments to the public API get ``Expected X, got Y``.

Each case below hands one public callable one wrong argument, the others valid, and
expects a kernelopt error (InputError, or FormatError for decoded content) whose message
reads ``Expected ...``: never a TypeError, AttributeError, KeyError or ValueError from
deep inside, and never a silent success. Writers must also leave the target untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import torch

import kernelopt.bench as bench
import kernelopt.buffers as buffers
import kernelopt.catalog as catalog
import kernelopt.diagnose as diagnose
import kernelopt.experiments as experiments
import kernelopt.kernels.mla as mla
import kernelopt.workflow as workflow
import kernelopt.workload as workload
from kernelopt._errors import FormatError, InputError

REFUSED = (InputError, FormatError)

# ------------------------------------------------------------------ valid arguments


@functools.cache
def _entry() -> catalog.Entry:
    return catalog.Entry(
        id="demo-trick",
        name="Demo Trick",
        kind=catalog.Kind.OPTIMIZATION,
        scope="shared",
        families=("decode-attention",),
        keywords=("demo trick",),
        contexts=("Decode attention with long KV caches.",),
        triggers=(catalog.parse_condition("dram_pct > 60"),),
        mechanism="It works because of reasons.",
        affected_metrics=("DRAM throughput",),
        implementation="```python\nx = 1\n```",
        generalization="Do the thing when it applies.",
        pitfalls=("It can fail.",),
        evidence=(
            catalog.Evidence(
                source_type="local experiment",
                source="experiments/exp_1/result.md",
                rows=(
                    catalog.EvidenceRow(
                        config="b=32 s=1", before="10 us", after="8 us", change="-20 %"
                    ),
                ),
            ),
        ),
    )


@functools.cache
def _catalog() -> catalog.Catalog:
    return catalog.Catalog.builtin()


def _tree(root: Path) -> catalog.KnowledgeTree:
    tree = catalog.KnowledgeTree(root / "kb", with_builtin=True)
    tree.add(_entry())
    return tree


@functools.cache
def _measurement() -> bench.Measurement:
    return bench.Measurement(samples=[50.0, 51.0, 49.0], backend="cpu-perf-counter")


@functools.cache
def _result_row() -> experiments.ResultRow:
    return bench.to_result_row(_measurement(), point="b=1 s=1 t=64", impl="k")


@functools.cache
def _bench_row() -> bench.BenchRow:
    return bench.row_from_measurement(
        _measurement(), op="mla_decode", impl="k", config={"b": 1, "s": 1, "t": 64}
    )


@functools.cache
def _ceilings() -> bench.Ceilings:
    return bench.Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.8e12, matmul_flop_per_s=9.9e14)


@functools.cache
def _roofline() -> bench.Roofline:
    return bench.Roofline(ceilings=_ceilings(), cost=bench.Cost(flops=1e9, bytes=1e6))


def _rows_pair() -> tuple[bench.BenchRow, bench.BenchRow]:
    def row(impl: str, median: float, splits: int) -> bench.BenchRow:
        return bench.BenchRow(
            op="mla_decode",
            impl=impl,
            median=median,
            p20=median * 0.996,
            p80=median * 1.004,
            gpu="NVIDIA H200",
            timestamp="2026-12-02T10:00:00+00:00",
            config={"b": 32, "s": 1, "t": 4096, "h": 16, "num_splits": splits},
            metrics={
                "dram_pct": 50.0,
                "floor_pct": 50.0,
                "tc_pct": 5.0,
                "arith_intensity": 10.0,
                "ridge": 206.25,
            },
        )

    return row("v1", 74.08, 16), row("v2", 66.53, 8)


@functools.cache
def _observation() -> workflow.Observation:
    before, after = _rows_pair()
    return workflow.observe_rows(before, after, source="a vs b", knobs=["num_splits"])


@functools.cache
def _profile_report() -> workflow.ProfileReport:
    after = _rows_pair()[1]
    [report] = workflow.profile_from_rows([after], kernel="mla_decode", version="v2")
    return report


@functools.cache
def _task_text() -> str:
    change = workflow.Change(what="fuse the split combine", rationale="one launch less")
    task = workflow.OptimizationTask(
        kernel="mla_decode",
        current="v2",
        new_version="v3",
        bottleneck="Memory-bound",
        optimizations=[change],
    )
    return task.render()


def _profile_from_rows(**wrong: Any) -> object:
    _, after = _rows_pair()
    return workflow.profile_from_rows([after], kernel="mla_decode", version="v2", **wrong)


def _experiment(**wrong: Any) -> experiments.Experiment:
    return experiments.Experiment(number=1, label="exp 1", **wrong)


def _log(**wrong: Any) -> experiments.ExperimentLog:
    return experiments.ExperimentLog(root=".", **wrong)


def _finding(**wrong: Any) -> diagnose.Finding:
    return diagnose.Finding(pathology=next(iter(diagnose.Pathology)), summary="s", **wrong)


def _cache_seqlens() -> torch.Tensor:
    return torch.tensor([20, 7], dtype=torch.int32)


def _launcher(**wrong: Any) -> buffers.PersistentLauncher[Any, Any]:
    def launch(scope: buffers.BufferScope, x: torch.Tensor) -> torch.Tensor:
        return x

    given: dict[str, Any] = {"scope": buffers.BufferScope("wrong-types", pool=buffers.BufferPool())}
    given.update(wrong)
    fn = given.pop("fn", launch)
    return buffers.PersistentLauncher(fn, **given)


# ------------------------------------------------------------------ calls without files

Call = Callable[[], object]

CASES: list[Any] = [
    # kernelopt.catalog
    pytest.param(lambda: catalog.normalize_text(None), id="catalog.normalize_text(None)"),
    pytest.param(lambda: catalog.normalize_text(b"x"), id="catalog.normalize_text(bytes)"),
    pytest.param(lambda: catalog.entry_from_json(None), id="catalog.entry_from_json(None)"),
    pytest.param(lambda: catalog.entry_from_json(5), id="catalog.entry_from_json(5)"),
    pytest.param(lambda: catalog.entry_to_dict(None), id="catalog.entry_to_dict(None)"),
    pytest.param(lambda: catalog.entry_to_json(5), id="catalog.entry_to_json(5)"),
    pytest.param(lambda: catalog.entry_to_json(object()), id="catalog.entry_to_json(object)"),
    pytest.param(
        lambda: catalog.render_index([_entry()], links=5), id="catalog.render_index(links=5)"
    ),
    pytest.param(lambda: catalog.Catalog(None), id="catalog.Catalog(entries=None)"),
    pytest.param(lambda: catalog.Catalog([_entry()], sources=5), id="catalog.Catalog(sources=5)"),
    pytest.param(lambda: catalog.Catalog([], problems=5), id="catalog.Catalog(problems=5)"),
    pytest.param(lambda: _catalog().get([]), id="catalog.Catalog.get(list)"),
    pytest.param(lambda: _catalog().source([]), id="catalog.Catalog.source(list)"),
    pytest.param(lambda: _catalog().source(5), id="catalog.Catalog.source(5)"),
    # kernelopt.experiments
    pytest.param(
        lambda: experiments.parse_result(
            experiments.render_result(
                experiments.ResultRecord(experiment=1, title="t", status="KEPT", correctness="PASS")
            ),
            warnings=5,
        ),
        id="experiments.parse_result(warnings=5)",
    ),
    pytest.param(lambda: _experiment(tags=5), id="experiments.Experiment(tags=5)"),
    pytest.param(lambda: _experiment(knobs=5), id="experiments.Experiment(knobs=5)"),
    pytest.param(lambda: _experiment(knobs="x"), id="experiments.Experiment(knobs=str)"),
    pytest.param(lambda: _experiment(metrics=5), id="experiments.Experiment(metrics=5)"),
    pytest.param(lambda: _experiment(points=5), id="experiments.Experiment(points=5)"),
    pytest.param(lambda: _experiment(floors=5), id="experiments.Experiment(floors=5)"),
    pytest.param(
        lambda: experiments.Experiment(number="x", label="exp 1"),
        id="experiments.Experiment(number=str)",
    ),
    pytest.param(
        lambda: experiments.SourceRef(path="a.md", line="x"), id="experiments.SourceRef(line=str)"
    ),
    pytest.param(
        lambda: experiments.Series(name="s", kind="latency", experiments=5),
        id="experiments.Series(experiments=5)",
    ),
    pytest.param(
        lambda: experiments.FloorRow(
            point="b=1", fraction=0.5, source=experiments.SourceRef(path="a.md"), ceiling=[]
        ),
        id="experiments.FloorRow(ceiling=list)",
    ),
    pytest.param(
        lambda: experiments.Recommendation(
            text="t", source=experiments.SourceRef(path="a.md"), catalog_ids=5
        ),
        id="experiments.Recommendation(catalog_ids=5)",
    ),
    pytest.param(
        lambda: experiments.ProfileFacts(bottleneck="memory", metrics=5),
        id="experiments.ProfileFacts(metrics=5)",
    ),
    pytest.param(lambda: _log(experiments=5), id="experiments.ExperimentLog(experiments=5)"),
    pytest.param(lambda: _log(warnings=5), id="experiments.ExperimentLog(warnings=5)"),
    # kernelopt.diagnose
    pytest.param(lambda: _finding(evidence=5), id="diagnose.Finding(evidence=5)"),
    pytest.param(lambda: _finding(actions=5), id="diagnose.Finding(actions=5)"),
    pytest.param(
        lambda: diagnose.LogSummary(root=".", trajectory=5), id="diagnose.LogSummary(trajectory=5)"
    ),
    pytest.param(lambda: diagnose.Diagnosis(findings=5), id="diagnose.Diagnosis(findings=5)"),
    pytest.param(lambda: diagnose.Diagnosis(checks=5), id="diagnose.Diagnosis(checks=5)"),
    pytest.param(
        lambda: diagnose.entry_links(diagnose.Diagnosis(), "plan.md", knowledge=5),
        id="diagnose.entry_links(knowledge=5)",
    ),
    # kernelopt.workload
    pytest.param(lambda: workload.profile_from_dict("x"), id="workload.profile_from_dict(str)"),
    pytest.param(lambda: workload.profile_from_dict([]), id="workload.profile_from_dict(list)"),
    pytest.param(lambda: workload.shortcut_from_dict("x"), id="workload.shortcut_from_dict(str)"),
    pytest.param(lambda: workload.read_jsonl(""), id="workload.read_jsonl(empty path)"),
    pytest.param(
        lambda: workload.read_jsonl("no-such-dir/no-such.jsonl"),
        id="workload.read_jsonl(missing file)",
    ),
    pytest.param(
        lambda: workload.parse_call_record(
            {"op": "s", "args": {"x": {"shape": [2], "dtype": "weird"}}}, unknown_dtypes=5
        ),
        id="workload.parse_call_record(unknown_dtypes=5)",
    ),
    # kernelopt.bench
    pytest.param(lambda: bench.clock_changes(5, None), id="bench.clock_changes(before=5)"),
    pytest.param(
        lambda: bench.clock_changes(
            bench.DeviceState(name="g", sm_clock_mhz=1000),
            bench.DeviceState(name="g", sm_clock_mhz=900),
            tolerance="x",
        ),
        id="bench.clock_changes(tolerance=str)",
    ),
    pytest.param(
        lambda: bench.mla_decode_cost(b=None, s_q=1, h_q=16, seqlens=64),
        id="bench.mla_decode_cost(b=None)",
    ),
    pytest.param(
        lambda: bench.judge([100.0, 101.0, 99.0] * 5, [80.0, 81.0, 79.0] * 5, seed=-1),
        id="bench.judge(seed=-1)",
    ),
    pytest.param(lambda: bench.load_ceilings([]), id="bench.load_ceilings(gpu=list)"),
    pytest.param(lambda: bench.load_ceilings(5), id="bench.load_ceilings(gpu=5)"),
    pytest.param(lambda: bench.load_ceilings("H100", path=5), id="bench.load_ceilings(path=5)"),
    pytest.param(lambda: bench.environment(directory=5), id="bench.environment(directory=5)"),
    pytest.param(
        lambda: bench.compare(lambda: None, lambda: None, timer=5), id="bench.compare(timer=5)"
    ),
    pytest.param(
        lambda: bench.check_responds_to_inputs(None, [[torch.ones(3)], [torch.zeros(3)]]),
        id="bench.check_responds_to_inputs(fn=None)",
    ),
    pytest.param(
        lambda: bench.profile_report(
            kernel="k",
            version="v1",
            point={"b": 1, "s": 1, "t": 64},
            measurement=_measurement(),
            roofline=_roofline(),
            catalog=5,
        ),
        id="bench.profile_report(catalog=5)",
    ),
    pytest.param(
        lambda: bench.profile_report(
            kernel="k",
            version="v1",
            point={"b": 1, "s": 1, "t": 64},
            measurement=_measurement(),
            roofline=_roofline(),
            stages=5,
        ),
        id="bench.profile_report(stages=5)",
    ),
    pytest.param(
        lambda: bench.profile_report(
            kernel="k",
            version="v1",
            point={"b": 1, "s": 1, "t": 64},
            measurement=_measurement(),
            roofline=_roofline(),
            extra_metrics=5,
        ),
        id="bench.profile_report(extra_metrics=5)",
    ),
    pytest.param(lambda: bench.roofline_layout(5), id="bench.roofline_layout(points=5)"),
    pytest.param(
        lambda: bench.roofline_layout(
            [bench.RooflinePoint(roofline=_roofline(), time_s=5e-5)], labels=5
        ),
        id="bench.roofline_layout(labels=5)",
    ),
    pytest.param(
        lambda: bench.row_from_measurement(_measurement(), op="o", impl="i", config=5),
        id="bench.row_from_measurement(config=5)",
    ),
    pytest.param(
        lambda: bench.row_from_measurement(_measurement(), op="o", impl="i", config="x"),
        id="bench.row_from_measurement(config=str)",
    ),
    pytest.param(
        lambda: bench.row_from_measurement(_measurement(), op="o", impl="i", note=5),
        id="bench.row_from_measurement(note=5)",
    ),
    pytest.param(
        lambda: bench.row_from_measurement(_measurement(), op="o", impl="i", directory=5),
        id="bench.row_from_measurement(directory=5)",
    ),
    pytest.param(
        lambda: bench.BaselineMetric(metric="m", previous=1.0, current=2.0, unit=[]),
        id="bench.BaselineMetric(unit=list)",
    ),
    pytest.param(
        lambda: bench.DeviceState(name="g", throttle_reasons=5),
        id="bench.DeviceState(throttle_reasons=5)",
    ),
    pytest.param(
        lambda: bench.Measurement(samples=[1.0, 2.0], notes=5), id="bench.Measurement(notes=5)"
    ),
    pytest.param(
        lambda: bench.Ceilings(gpu=None, copy_bytes_per_s=1e12, matmul_flop_per_s=1e14),
        id="bench.Ceilings(gpu=None)",
    ),
    pytest.param(
        lambda: bench.measure(lambda: None, mode="hot", warmup_ms=1, max_time_ms=5, label=object()),
        id="bench.measure(label=object)",
    ),
    # kernelopt.buffers
    pytest.param(
        lambda: buffers.check_out(torch.empty(2, 3), (2, 3), torch.float32, "cpu", inputs=5),
        id="buffers.check_out(inputs=5)",
    ),
    pytest.param(
        lambda: buffers.resolve_out(None, (2, 3), torch.float32, "cpu", scope=5),
        id="buffers.resolve_out(scope=5)",
    ),
    pytest.param(lambda: _launcher(scope=None), id="buffers.PersistentLauncher(scope=None)"),
    pytest.param(lambda: _launcher(fn=None), id="buffers.PersistentLauncher(fn=None)"),
    # kernelopt.workflow
    pytest.param(
        lambda: workflow.derive_anti_pattern(None, _observation()),
        id="workflow.derive_anti_pattern(applied=None)",
    ),
    pytest.param(
        lambda: workflow.derive_anti_pattern(_catalog().get("split-kv-flash-decoding"), None),
        id="workflow.derive_anti_pattern(observation=None)",
    ),
    pytest.param(
        lambda: workflow.derive_anti_pattern(
            _catalog().get("split-kv-flash-decoding"), _observation(), family=5
        ),
        id="workflow.derive_anti_pattern(family=5)",
    ),
    pytest.param(lambda: workflow.evidence_row(None), id="workflow.evidence_row(None)"),
    pytest.param(
        lambda: workflow.evidence_row(_observation(), kernel=5),
        id="workflow.evidence_row(kernel=5)",
    ),
    pytest.param(
        lambda: workflow.knowledge_link(_catalog().get("split-kv-flash-decoding"), base=5),
        id="workflow.knowledge_link(base=5)",
    ),
    pytest.param(
        lambda: workflow.observe_rows(*_rows_pair(), source="s", knobs=None),
        id="workflow.observe_rows(knobs=None)",
    ),
    pytest.param(
        lambda: workflow.parse_task(_task_text(), path=5), id="workflow.parse_task(path=5)"
    ),
    pytest.param(
        lambda: workflow.parse_profile(_profile_report().render(), path=5),
        id="workflow.parse_profile(path=5)",
    ),
    pytest.param(
        lambda: workflow.perf_row_from_profile(_profile_report(), ceilings=5),
        id="workflow.perf_row_from_profile(ceilings=5)",
    ),
    pytest.param(
        lambda: workflow.perf_rows_from_bench([_rows_pair()[1]], ceilings=5),
        id="workflow.perf_rows_from_bench(ceilings=5)",
    ),
    pytest.param(lambda: _profile_from_rows(point=5), id="workflow.profile_from_rows(point=5)"),
    pytest.param(lambda: _profile_from_rows(point=[]), id="workflow.profile_from_rows(point=list)"),
    pytest.param(
        lambda: _profile_from_rows(ceilings=5), id="workflow.profile_from_rows(ceilings=5)"
    ),
    pytest.param(lambda: _profile_from_rows(catalog=5), id="workflow.profile_from_rows(catalog=5)"),
    pytest.param(
        lambda: _profile_from_rows(latency_below_pct=None),
        id="workflow.profile_from_rows(latency_below_pct=None)",
    ),
    pytest.param(
        lambda: _profile_from_rows(present=None), id="workflow.profile_from_rows(present=None)"
    ),
    pytest.param(
        lambda: workflow.select_row(list(_rows_pair()), point=5),
        id="workflow.select_row(point=5)",
    ),
    pytest.param(lambda: workflow.Change(what="w", entry_id=5), id="workflow.Change(entry_id=5)"),
    pytest.param(
        lambda: workflow.Change(what="w", entry_id="dot-input-precision", link=5),
        id="workflow.Change(link=5)",
    ),
    pytest.param(lambda: workflow.Constraints(other=5), id="workflow.Constraints(other=5)"),
    pytest.param(lambda: workflow.Target(floor_pct=80, unit=[]), id="workflow.Target(unit=list)"),
    pytest.param(lambda: workflow.Target(floor_pct=80, points=5), id="workflow.Target(points=5)"),
    pytest.param(
        lambda: workflow.PerfRow(version="v", point="b=1", time=5.0, unit=[]),
        id="workflow.PerfRow(unit=list)",
    ),
    pytest.param(
        lambda: attrs.evolve(_observation(), metrics_before=5),
        id="workflow.Observation(metrics_before=5)",
    ),
    pytest.param(
        lambda: attrs.evolve(_observation(), knob_changes=5),
        id="workflow.Observation(knob_changes=5)",
    ),
    pytest.param(
        lambda: workflow.OptimizationTask(
            kernel="k", current="v1", new_version="v2", bottleneck=None, optimizations=[]
        ),
        id="workflow.OptimizationTask(bottleneck=None)",
    ),
    pytest.param(
        lambda: workflow.NewVersion(kernel="k", version="v2", changes=[], created=5),
        id="workflow.NewVersion(created=5)",
    ),
    pytest.param(
        lambda: attrs.evolve(_profile_report(), stages=None),
        id="workflow.ProfileReport(stages=None)",
    ),
    pytest.param(
        lambda: workflow.OptimizationTask(
            kernel="mla_decode",
            current="v2",
            new_version="v3",
            bottleneck="Memory-bound",
            optimizations=[
                workflow.Change.of(_catalog().get("dot-input-precision"), "bf16 inputs")
            ],
        ).validate(5),
        id="workflow.OptimizationTask.validate(catalog=5)",
    ),
    # kernelopt.kernels.mla
    pytest.param(
        lambda: mla.plan_schedule(None, block_n=32, m_tiles=1, num_slots=4),
        id="mla.plan_schedule(seqlens=None)",
    ),
    pytest.param(
        lambda: mla.plan_schedule(b"x", block_n=32, m_tiles=1, num_slots=4),
        id="mla.plan_schedule(seqlens=bytes)",
    ),
    pytest.param(
        lambda: attrs.evolve(
            mla.plan_schedule([64], block_n=32, m_tiles=1, num_slots=4), block_n=None
        ),
        id="mla.Schedule(block_n=None)",
    ),
    pytest.param(
        lambda: attrs.evolve(
            mla.plan_schedule([64], block_n=32, m_tiles=1, num_slots=4), block_n=True
        ),
        id="mla.Schedule(block_n=True)",
    ),
    pytest.param(
        lambda: mla.get_mla_metadata(_cache_seqlens(), 16, 1, num_heads_q="x"),
        id="mla.get_mla_metadata(num_heads_q=str)",
    ),
]


@pytest.mark.parametrize("call", CASES)
def test_wrong_argument_is_refused_with_expected_message(call: Call) -> None:
    with pytest.raises(REFUSED, match="Expected"):
        call()


# ------------------------------------------------------------------ calls that write files


def _left_behind(root: Path) -> list[str]:
    """Every file or folder under ``root`` but the lock files a refused write may leave."""
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.suffix != ".lock")


WRITES: list[Any] = [
    pytest.param(
        lambda root: lambda: bench.append_rows(None, [_bench_row()]),
        id="bench.append_rows(path=None)",
    ),
    pytest.param(
        lambda root: (
            lambda: bench.write_experiment(
                None,
                experiment=1,
                title="t",
                rows=[_result_row()],
                status="KEPT",
                correctness="PASS",
            )
        ),
        id="bench.write_experiment(root=None)",
    ),
    pytest.param(
        lambda root: (
            lambda: bench.write_experiment(
                root / "experiments",
                experiment=1,
                title="t",
                rows=[_result_row()],
                status="KEPT",
                correctness="PASS",
                knobs=5,
            )
        ),
        id="bench.write_experiment(knobs=5)",
    ),
    pytest.param(
        lambda root: (
            lambda: bench.write_experiment(
                root / "experiments",
                experiment=1,
                title="t",
                rows=[_result_row()],
                status="KEPT",
                correctness="PASS",
                verdict=object(),
            )
        ),
        id="bench.write_experiment(verdict=object)",
    ),
    pytest.param(
        lambda root: (
            lambda: bench.write_experiment(
                root / "experiments",
                experiment=1,
                title="t",
                rows=[_result_row()],
                status="KEPT",
                correctness="PASS",
                directory=5,
            )
        ),
        id="bench.write_experiment(directory=5)",
    ),
    pytest.param(
        lambda root: (
            lambda: workflow.learn(
                _observation(), entry_id="split-kv-flash-decoding", knowledge=None
            )
        ),
        id="workflow.learn(knowledge=None)",
    ),
    pytest.param(
        lambda root: functools.partial(_tree(root).refine_applicability, "demo-trick", triggers=5),
        id="catalog.KnowledgeTree.refine_applicability(triggers=5)",
    ),
    pytest.param(
        lambda root: functools.partial(_tree(root).refine_applicability, [], contexts=["c"]),
        id="catalog.KnowledgeTree.refine_applicability(entry_id=list)",
    ),
    pytest.param(
        lambda root: functools.partial(
            _tree(root).record_evidence,
            [],
            catalog.EvidenceRow(config="b=1", before="10 us", after="8 us", change="-20 %"),
            source_type="local experiment",
            source="x",
        ),
        id="catalog.KnowledgeTree.record_evidence(entry_id=list)",
    ),
    pytest.param(
        lambda root: functools.partial(_tree(root).flip, [], reason="slower"),
        id="catalog.KnowledgeTree.flip(entry_id=list)",
    ),
    pytest.param(
        lambda root: functools.partial(_tree(root).add_optimization, None),
        id="catalog.KnowledgeTree.add_optimization(None)",
    ),
    pytest.param(
        lambda root: functools.partial(_tree(root).path_of, None),
        id="catalog.KnowledgeTree.path_of(None)",
    ),
]


@pytest.mark.parametrize("write", WRITES)
def test_wrong_argument_to_a_writer_is_refused_and_writes_nothing(
    write: Callable[[Path], Call], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    call = write(tmp_path)
    before = _left_behind(tmp_path)
    with pytest.raises(REFUSED, match="Expected"):
        call()
    assert _left_behind(tmp_path) == before
