"""A trace whose calls mostly have shapes of their own reads and profiles as it always did.

The JSONL reader builds the call of a line whose sizes are new from the first line of the
same layout, without decoding JSON, and the profile reads the axes of all calls of one
layout through one plan. Both are checked here against the plain paths on a seeded trace
that mixes every kind of line: distinct and repeated shapes, values summaries with and
without a std, strides, dims in and out of range, a packed query of lower rank, both JSON
spacings, lines without a duration and malformed lines.
"""

from __future__ import annotations

import gc
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import InputError, KernelOptError
from kernelopt._strict_json import loads, once_each
from kernelopt.workload import Call, TensorArg, profile_calls, read_jsonl
from kernelopt.workload.calls import CallAggregator, Trace, parse_call_record, paused_gc
from kernelopt.workload.signatures import AxisReader, extract_axes, find_signature


def _mla(rng: random.Random) -> dict[str, Any]:
    b, s, top = rng.randint(1, 64), rng.choice((1, 1, 1, 2, 4)), rng.randint(1, 4096)
    low = rng.randint(1, top)
    lengths: dict[str, Any] = {"min": low, "max": top, "mean": (low + top) / 2}
    if rng.random() < 0.5:
        lengths["std"] = (top - low) / 4
    query = [b, s, 16, 576] if rng.random() < 0.8 else [b * s, 16, 576]
    return {
        "op": rng.choice(("mla_decode", "Attention.mla_decode")),
        "args": {
            "q": {"shape": query, "dtype": "bfloat16"},
            "kv_cache": {"shape": [rng.randint(1, 5000), 64, 1, 576], "dtype": "bf16"},
            "block_table": {"shape": [b, rng.randint(1, 64)], "dtype": "int32"},
            "cache_seqlens": {"shape": [b], "dtype": "int32", "values": lengths},
            "softmax_scale": 0.0417,
        },
    }


def _reduction(rng: random.Random) -> dict[str, Any]:
    shape = [rng.randint(1, 8) for _ in range(rng.randint(1, 4))]
    args: dict[str, Any] = {"x": {"shape": shape, "dtype": "float16"}}
    if rng.random() < 0.7:
        args["dim"] = rng.randint(-len(shape), len(shape))  # len(shape): out of range
    return {"op": rng.choice(("aten::softmax", "sum", "my_op")), "args": args}


def _topk(rng: random.Random) -> dict[str, Any]:
    x = {"shape": [rng.randint(1, 8), rng.randint(1, 64)], "dtype": "float32"}
    return {"op": "topk", "args": {"x": x, "k": rng.randint(1, 80), "dim": -1}}


def _gather(rng: random.Random) -> dict[str, Any]:
    rows, n, k = rng.randint(1, 8), rng.randint(1, 64), rng.randint(1, 80)
    index = {"shape": [rows, k], "dtype": "int64", "stride": [rng.choice((0, k)), 1]}
    return {
        "op": "gather",
        "args": {"x": {"shape": [rows, n], "dtype": "float32"}, "dim": 1, "index": index},
    }


def _sdpa(rng: random.Random) -> dict[str, Any]:
    b, h, keys = rng.randint(1, 4), rng.choice((1, 8)), rng.randint(1, 512)
    lengths = {"min": 1, "max": keys, "mean": (1 + keys) / 2}
    return {
        "op": "sdpa",
        "args": {
            "query": {"shape": [b, h, rng.choice((1, 16)), 64], "dtype": "float16"},
            "key": {"shape": [b, h, keys, 64], "dtype": "float16"},
            "kv_lens": {"shape": [b], "dtype": "int32", "values": lengths},
        },
    }


_MALFORMED = (
    '{"op": "x", "args": {"a": {"shape": [-1], "dtype": "f32"}}}',
    '{"op": "softmax"',
    '{"op": "sum", "op": "mean", "args": {}}',
    '{"op": "mla_decode", "args": {"q": {"shape": [1, 2], "dtype": "bfloat16"}}, '
    '"duration_us": -3}',
    '{"op": "sum", "args": {"x": {"shape": [1, 2], "dtype": "f32"}, "dim": 0}, '
    '"duration_us": 2e12}',
    '{"op": "sum", "args": {"x": {"shape": [1, 1099511627777], "dtype": "f32"}}}',
)


def _seeded_trace(path: Path, lines: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    makers = ((0.5, _mla), (0.65, _reduction), (0.8, _topk), (0.9, _gather), (0.95, _sdpa))
    out: list[str] = []
    for _ in range(lines):
        draw = rng.random()
        maker = next((make for bound, make in makers if draw < bound), None)
        if maker is None:
            out.append(rng.choice(_MALFORMED))
            continue
        record = maker(rng)
        if rng.random() < 0.8:
            record["duration_us"] = round(rng.uniform(1, 300), 3)
        compact = rng.random() >= 0.3
        out.append(json.dumps(record, separators=(",", ":")) if compact else json.dumps(record))
        if rng.random() < 0.1:
            out.append(out[-1])  # the same line again
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _decoded_line_by_line(path: Path) -> tuple[CallAggregator, int, int]:
    """Every line decoded in full, as the reader does for a line it has no cache for."""
    aggregator = CallAggregator()
    records = skipped = 0
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        records += 1
        try:
            record = loads(line, object_pairs_hook=once_each)
            call, duration = parse_call_record(record)
        except (KernelOptError, ValueError):
            skipped += 1
            continue
        aggregator.add(call, duration)
    return aggregator, records, skipped


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _seeded_trace(tmp_path_factory.mktemp("seeded") / "calls.jsonl", 4000)


def test_reader_groups_equal_a_full_decode_of_every_line(seeded: Path) -> None:
    trace = read_jsonl(seeded)
    aggregator, records, skipped = _decoded_line_by_line(seeded)
    assert (trace.records, trace.skipped) == (records, skipped)
    assert trace.skipped > 100  # the trace does hold malformed lines
    expected = aggregator.groups()
    assert len(trace.groups) == len(expected) > 2000  # most calls have a shape of their own
    # Equal groups in the same order: calls, counts, summed times (added in the same
    # order) and values histograms alike.
    assert trace.groups == tuple(expected)


def test_axes_read_by_layout_equal_axes_read_per_call(seeded: Path) -> None:
    trace = read_jsonl(seeded)
    readers: dict[str, AxisReader] = {}
    checked = 0
    for group in trace.groups:
        call = group.call
        sig = find_signature(call.op)
        reader = readers.setdefault(call.op, AxisReader(sig))
        axes, problem = extract_axes(call, sig)
        expected = [(a.name, a.value, a.source, a.kind) for a in axes]
        assert reader.rows(call) == (expected, problem), call.label
        plan = reader.plan(call)
        if plan is not None:
            assert plan.values(call) == [a.value for a in axes]
            checked += 1
    assert checked > 2000


def _per_call_axes(trace: Trace, op: str) -> list[tuple[dict[str, float], int, float, int]]:
    """(shape axes, calls, time, timed calls) per group of ``op``, read per call."""
    sig = find_signature(op)
    out = []
    for group in trace.groups:
        if group.call.op == op:
            axes, _ = extract_axes(group.call, sig)
            named = {a.name: a.value for a in axes}
            out.append((named, group.calls, group.time_us, group.timed_calls))
    return out


def _lower_median(pairs: list[tuple[float, float]]) -> float | None:
    total = sum(weight for _, weight in pairs)
    if total <= 0:
        return None
    running = 0.0
    for value, weight in sorted(pairs):
        running += weight
        if running >= total / 2:
            return value
    return sorted(pairs)[-1][0]


@pytest.mark.parametrize("op", ["mla_decode", "Attention.mla_decode", "topk", "sdpa"])
def test_profile_axes_equal_statistics_taken_call_by_call(seeded: Path, op: str) -> None:
    trace = read_jsonl(seeded)
    profile = profile_calls(trace, op=op, max_values=5).op()
    groups = _per_call_axes(trace, op)
    assert profile.calls == sum(calls for _, calls, _, _ in groups)
    labels = {group.call.label for group in trace.groups if group.call.op == op}
    assert profile.distinct_shapes == len(labels) > 100
    checked = 0
    for axis in profile.axes:
        if axis.kind not in ("shape", "scalar", "derived"):
            continue
        bins: dict[float, list[float]] = defaultdict(lambda: [0, 0, 0.0])
        for named, calls, time, timed in groups:
            if axis.name in named:
                slot = bins[named[axis.name]]
                slot[0] += calls
                slot[1] += timed
                slot[2] += time
        assert axis.min == min(bins) and axis.max == max(bins), axis.name
        assert axis.distinct == len(bins)
        assert axis.median == _lower_median([(v, s[0]) for v, s in bins.items()])
        present = sum(s[0] for s in bins.values())
        mean = sum(v * s[0] for v, s in bins.items()) / present
        assert axis.mean == pytest.approx(round(mean, 6), rel=1e-12, abs=1e-6)
        timed_pairs = [(v, s[2]) for v, s in bins.items() if s[1]]
        assert axis.time_median == (_lower_median(timed_pairs) if timed_pairs else None)
        top = sorted(bins.items(), key=lambda kv: (-kv[1][0], kv[0]))[:5]
        listed = [(v.value, v.calls) for v in axis.values]
        assert listed[: len(top)] == [(value, slot[0]) for value, slot in top], axis.name
        checked += 1
    assert checked >= 3
    # Shapes: most calls, then most time, then label; the most timed listed too.
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for group in trace.groups:
        if group.call.op == op:
            totals[group.call.label][0] += group.calls
            totals[group.call.label][1] += group.time_us
    ranked = sorted(totals, key=lambda label: (-totals[label][0], -totals[label][1], label))
    by_time = sorted(ranked, key=lambda label: -totals[label][1])[:32]
    listed = set(ranked[:32]) | {label for label in by_time if totals[label][1] > 0}
    assert [s.args for s in profile.shapes] == [label for label in ranked if label in listed]
    assert profile.other is not None
    assert profile.other.calls == sum(totals[label][0] for label in ranked if label not in listed)


def test_a_line_of_a_known_layout_with_sizes_no_tensor_has_is_refused_as_before(
    tmp_path: Path,
) -> None:
    good = '{"op": "sum", "args": {"x": {"shape": [2, 3], "stride": [3, 1], "dtype": "f32"}}}'
    lines = [
        good,
        good.replace("[2, 3]", f"[2, {2**41}]"),  # beyond 2**40
        good.replace("[3, 1]", "[3, 1, 1]"),  # a stride per dim, and one more
        good.replace("[2, 3]", "[2, 1" + "0" * 5000 + "]"),  # more digits than int reads
        good.replace("[2, 3]", "[4, 5]"),
    ]
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    trace = read_jsonl(path)
    assert (trace.records, trace.skipped) == (5, 3)
    assert [g.call.args[0].shape for g in trace.groups] == [(2, 3), (4, 5)]  # type: ignore[union-attr]
    assert trace.notes[0].startswith("line 2: args.x.shape: Expected dims in [0, 2**40]")
    assert trace.notes[1].startswith("line 3: args.x.stride: Expected 2 strides, one per dim")
    assert trace.notes[2].startswith("line 4: ")
    aggregator, records, skipped = _decoded_line_by_line(path)
    assert (records, skipped) == (5, 3)
    assert trace.groups == tuple(aggregator.groups())


def test_sizes_and_tensors_replaced_are_checked_as_when_built() -> None:
    call, _ = parse_call_record(
        {"op": "sum", "args": {"x": {"shape": [2, 3], "dtype": "float32"}, "dim": 1}}
    )
    tensor = call.args[0]
    assert isinstance(tensor, TensorArg)
    assert tensor.with_sizes((4, 5), None) == TensorArg(name="x", shape=(4, 5), dtype="float32")
    with pytest.raises(InputError, match=r"x\.shape: Expected dims in \[0, 2\*\*40\]"):
        tensor.with_sizes((4, -1), None)
    with pytest.raises(InputError, match=r"x\.stride: Expected 2 strides, one per dim"):
        tensor.with_sizes((4, 5), (1,))
    wider = call.with_tensors({0: tensor.with_sizes((4, 5), (5, 1))})
    assert wider == Call(
        op="sum",
        args=(
            TensorArg(name="x", shape=(4, 5), dtype="float32", stride=(5, 1)),
            call.args[1],
        ),
    )
    with pytest.raises(InputError, match=r"args\[1\]: Expected a TensorArg named dim"):
        call.with_tensors({1: tensor})
    renamed = TensorArg(name="y", shape=(1,), dtype="float32")
    with pytest.raises(InputError, match=r"args\[0\]: Expected a TensorArg named x"):
        call.with_tensors({0: renamed})


def test_the_collector_is_paused_only_for_the_pass() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():  # a pass inside another leaves it paused
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # paused by its caller: left so
    finally:
        gc.enable()


@pytest.mark.parametrize("space", ["\f", "\v"])
def test_a_values_summary_spaced_by_what_no_json_holds_is_refused_as_a_decode_does(
    tmp_path: Path, space: str
) -> None:
    # \f and \v are whitespace to a regex's \s but not to JSON: a line of a layout seen
    # before must not be taken from the cache when a decode of it would fail.
    line = (
        '{"op": "mla_decode", "args": {"cache_seqlens": {"shape": [2], "dtype": "int32", '
        '"values": {"min": 1, "max": %d, "mean": 2.0%s}}}, "duration_us": 3.0}'
    )
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join([line % (3, ""), line % (4, space)]) + "\n", encoding="utf-8")
    trace = read_jsonl(path)
    assert (trace.records, trace.skipped) == (2, 1)
    assert trace.notes[0].startswith("line 2: ")
    aggregator, records, skipped = _decoded_line_by_line(path)
    assert (records, skipped) == (2, 1)
    assert trace.groups == tuple(aggregator.groups())


@pytest.mark.parametrize("space", ["\f", "\v"])
@pytest.mark.parametrize("size", [4, 7])  # the cached line's own layout, and new sizes
def test_a_duration_spaced_by_what_no_json_holds_is_refused_as_a_decode_does(
    tmp_path: Path, space: str, size: int
) -> None:
    line = '{"op": "sum", "args": {"x": {"shape": [%d], "dtype": "float32"}}, "duration_us":%s5.0}'
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join([line % (4, " "), line % (size, space)]) + "\n", encoding="utf-8")
    trace = read_jsonl(path)
    assert (trace.records, trace.skipped) == (2, 1)
    assert trace.notes[0].startswith("line 2: ")
    aggregator, records, skipped = _decoded_line_by_line(path)
    assert (records, skipped) == (2, 1)
    assert trace.groups == tuple(aggregator.groups())
