"""FlashInfer-Bench workloads: definition axes bound by workloads, three file shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import detect_format, find_shortcuts, profile_calls, read_trace

NAME = "mla_paged_decode_h16_ckv512_kpe64_ps64"


def _workloads(data: Path) -> Path:
    return data / "flashinfer" / "workloads" / "mla_paged" / f"{NAME}.jsonl"


def test_dataset_layout_finds_the_definition(data: Path) -> None:
    path = _workloads(data)
    assert detect_format(path) == "flashinfer-bench"
    trace = read_trace(path)
    assert (trace.format, trace.records, trace.skipped, trace.calls) == (
        "flashinfer-bench",
        6,
        0,
        6,
    )
    assert [s.name for s in trace.signatures] == [NAME]
    op = profile_calls(trace).op()
    assert op.op == NAME and op.family == "mla-decode" and op.signature == NAME
    names = [a.name for a in op.axes]
    assert names[:4] == ["batch_size", "num_qo_heads", "head_dim_ckv", "head_dim_kpe"]
    batch = op.axis("batch_size")
    assert batch is not None and (batch.min, batch.median, batch.max) == (1, 1, 64)
    assert batch.source == "q_nope.shape[0]" and batch.size1_share == 0.5
    heads = op.axis("num_qo_heads")
    assert heads is not None and heads.distinct == 1 and heads.min == 16
    first = op.shapes[0]
    assert "sm_scale=0.07216878364870323" in first.args
    assert "ckv_cache=[64,64,512]:bfloat16" in first.args
    (hit,) = [s for s in find_shortcuts(profile_calls(trace)) if s.rule == "size1-axis"]
    assert hit.axis == "batch_size" and hit.guard == "q_nope.shape[0] == 1"


def test_bundle_carries_definition_and_latencies(data: Path) -> None:
    trace = read_trace(data / "flashinfer" / "bundle.json")
    assert trace.calls == 4 and trace.skipped == 0
    op = profile_calls(trace).op()
    assert op.timed_calls == 4 and op.time_us == pytest.approx(82.0)  # 10+10+12+50 us
    assert op.axis("batch_size").share_of(1).calls == 3  # type: ignore[union-attr]


def test_explicit_definition_and_missing_definition(tmp_path: Path, data: Path) -> None:
    lone = tmp_path / "w.jsonl"
    lone.write_text(_workloads(data).read_text())
    trace = read_trace(lone)
    assert trace.calls == 6
    assert any("not found; axes come from the workloads' var axes only" in n for n in trace.notes)
    op = profile_calls(trace).op()
    assert {a.name for a in op.axes} == {"batch_size", "num_pages", "len_indptr", "num_kv_indices"}
    definition = data / "flashinfer" / "definitions" / "mla_paged" / f"{NAME}.json"
    named = profile_calls(read_trace(lone, definition=definition)).op()
    assert named.axis("head_dim_ckv") is not None


def test_malformed_workloads_are_skipped_with_their_line(tmp_path: Path, data: Path) -> None:
    good = _workloads(data).read_text().splitlines()
    record = json.loads(good[0])
    del record["workload"]["axes"]["num_pages"]
    extra = json.loads(good[0])
    extra["workload"]["axes"]["bogus"] = 3
    root = tmp_path / "workloads" / "mla_paged"
    root.mkdir(parents=True)
    (tmp_path / "definitions").symlink_to(data / "flashinfer" / "definitions")
    path = root / f"{NAME}.jsonl"
    path.write_text(
        "\n".join([good[0], json.dumps(record), "{oops", json.dumps(extra), good[1]]) + "\n"
    )
    trace = read_trace(path)
    assert (trace.calls, trace.skipped, trace.records) == (2, 3, 5)
    assert any(n.startswith("line 2:") and "var axis num_pages" in n for n in trace.notes)
    assert any(n.startswith("line 3:") and "invalid JSON" in n for n in trace.notes)
    assert any(n.startswith("line 4:") and "bogus" in n for n in trace.notes)


def test_bad_definition_is_an_input_error(tmp_path: Path, data: Path) -> None:
    definition = tmp_path / "d.json"
    definition.write_text(json.dumps({"name": "x", "axes": {"a": {"type": "both"}}, "inputs": {}}))
    with pytest.raises(InputError, match="axis type 'const' or 'var'"):
        read_trace(_workloads(data), definition=definition)


@pytest.mark.parametrize(
    "name",
    ["*", f"*/{NAME}", f"../mla_paged/{NAME}", "[m]*", "a" * 5000],
    ids=["star", "star-slash", "dot-dot", "bracket", "long"],
)
def test_a_definition_name_is_no_path_or_pattern(data: Path, tmp_path: Path, name: str) -> None:
    # The name is looked up as a file stem in the dataset layout: as a glob pattern or a
    # path it would bind the workloads to another definition; too long, the lookup raised
    # OSError.
    root = tmp_path / "dataset"
    (root / "definitions" / "mla_paged").mkdir(parents=True)
    definition = data / "flashinfer" / "definitions" / "mla_paged" / f"{NAME}.json"
    (root / "definitions" / "mla_paged" / definition.name).write_text(definition.read_text())
    workloads = root / "workloads" / "mla_paged" / "w.jsonl"
    workloads.parent.mkdir(parents=True)
    lines = _workloads(data).read_text().splitlines()
    hostile = json.loads(lines[0])
    hostile["definition"] = name
    workloads.write_text(json.dumps(hostile) + "\n" + lines[1] + "\n")
    trace = read_trace(workloads, format="flashinfer-bench")
    assert [g.call.op for g in trace.groups] == [NAME]
    assert trace.skipped == 1
    assert any("definition: Expected a " in note for note in trace.notes), trace.notes
