"""Shortcut findings hold only where their guards can, and large traces read in linear time."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import (
    Call,
    ScalarArg,
    Shortcut,
    TensorArg,
    ValuesSummary,
    find_shortcuts,
    profile_calls,
    read_trace,
)
from kernelopt.workload.calls import CallAggregator, GroupTally, parse_call_record


def _by_rule(found: Iterable[Shortcut]) -> dict[str, list[Shortcut]]:
    out: dict[str, list[Shortcut]] = {}
    for item in found:
        out.setdefault(item.rule, []).append(item)
    return out


def _x(*shape: int) -> TensorArg:
    return TensorArg(name="x", shape=shape, dtype="float32")


def _gather(k: int, n: int, rows: int = 32) -> Call:
    source = _x(rows, n)
    index = TensorArg(name="index", shape=(rows, k), dtype="int64")
    return Call(op="gather", args=(source, ScalarArg(name="dim", value=1), index))


def test_gather_select_all_needs_k_equal_to_n() -> None:
    # index == arange(n) needs as many entries as the axis: 64 entries never are arange(16).
    (hit,) = _by_rule(find_shortcuts(profile_calls([_gather(16, 16)] * 10)))["select-all"]
    assert hit.call_share == 1.0
    assert hit.guard == "index.shape[dim] == x.shape[dim] and index == arange(n)"
    assert "k == n" in hit.message
    assert "select-all" not in _by_rule(find_shortcuts(profile_calls([_gather(64, 16)] * 10)))
    assert "select-all" not in _by_rule(find_shortcuts(profile_calls([_gather(8, 16)] * 10)))


def test_gather_select_all_counts_only_the_calls_with_k_equal_to_n() -> None:
    calls = [_gather(16, 16)] * 6 + [_gather(64, 16)] * 4
    (hit,) = _by_rule(find_shortcuts(profile_calls(calls)))["select-all"]
    assert hit.call_share == pytest.approx(0.6)
    few = [_gather(16, 16)] * 2 + [_gather(64, 16)] * 8
    assert "select-all" not in _by_rule(find_shortcuts(profile_calls(few)))


def test_top_k_select_all_still_counts_k_above_n() -> None:
    calls = [Call(op="topk", args=(_x(4, 8), ScalarArg(name="k", value=16)))]
    (hit,) = _by_rule(find_shortcuts(profile_calls(calls)))["select-all"]
    assert hit.call_share == 1.0 and hit.guard == "k >= x.shape[-1]"


def _line(op: str, args: dict[str, object], **extra: object) -> str:
    return json.dumps({"op": op, "args": args, **extra}) + "\n"


def test_a_shape_of_more_than_64_dims_is_skipped_with_a_note(tmp_path: Path) -> None:
    good = _line("softmax", {"x": {"shape": [4, 8], "dtype": "float32"}})
    deep = _line("softmax", {"x": {"shape": [1] * 65, "dtype": "float32"}})
    rank64 = _line("softmax", {"x": {"shape": [1] * 64, "dtype": "float32"}})
    strided = _line("softmax", {"x": {"shape": [4], "dtype": "float32", "stride": [1] * 65}})
    path = tmp_path / "t.jsonl"
    path.write_text(good + deep + rank64 + strided, encoding="utf-8")
    trace = read_trace(path)
    assert trace.calls == 2 and trace.skipped == 2
    assert any("line 2: args.x.shape: Expected at most 64 dims, got 65" in n for n in trace.notes)
    assert any("line 4: args.x.stride: Expected at most 64 dims, got 65" in n for n in trace.notes)
    with pytest.raises(InputError, match="Expected at most 64 dims, got 65"):
        _x(*[1] * 65)
    with pytest.raises(InputError, match="Expected at most 64 strides, got 65"):
        TensorArg(name="x", shape=(4,), dtype="float32", stride=(1,) * 65)


def test_fast_checks_refuse_what_the_per_item_checks_refused() -> None:
    for op in ("soft\x01max", "soft\x7fmax", "soft\ud800max"):
        with pytest.raises(InputError):
            parse_call_record({"op": op, "args": {}})
        with pytest.raises(InputError):
            parse_call_record({"op": "softmax", "args": {op: 1}})
    parse_call_record({"op": "softmax", "args": {"s": "soft max \U0001f600"}})
    with pytest.raises(InputError, match="lone surrogates"):
        parse_call_record({"op": "softmax", "args": {"s": "a" * 100_000 + "\udc80"}})
    for bad in ([1, True], [1, math.inf], [1, 10**400], [1, "2"], [1, None]):
        with pytest.raises(InputError):
            parse_call_record({"op": "softmax", "args": {"l": bad}})
    call, _ = parse_call_record({"op": "softmax", "args": {"l": [1, 2.5, -3], "m": [4, 5]}})
    assert call.label == "l=[1,2.5,-3] m=[4,5]"


def _summary_lines() -> list[str]:
    lines = []
    for i in range(400):
        low = (i * 37) % 900
        high = low + (i * 11) % 300
        values: dict[str, float] = {"min": low, "max": high, "mean": (low + high) / 2}
        if i % 3:
            values["std"] = (high - low) / 4
        if i % 5 == 0:
            values = {"min": 1000, "max": 1000, "mean": 1000, "std": 0}
        args = {
            "q": {"shape": [(1, 8, 32)[i % 3], 1, 16, 576], "dtype": "bfloat16"},
            "cache_seqlens": {"shape": [8], "dtype": "int32", "values": values},
        }
        extra = {"duration_us": 10 + i % 7} if i % 4 else {}
        if i % 2:
            extra["ts"] = i
        lines.append(_line("mla_decode", args, **extra))
    return lines


def test_summaries_land_in_the_same_bins_whichever_way_they_are_read(tmp_path: Path) -> None:
    lines = _summary_lines()
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    trace = read_trace(path)
    assert trace.calls == len(lines) and trace.skipped == 0
    # The bins computed here, one call at a time, from the records themselves.
    want: dict[str, Counter[float]] = {s: Counter() for s in ("max", "min", "mean", "cv")}
    for line in lines:
        values = json.loads(line)["args"]["cache_seqlens"]["values"]
        want["max"][float(values["max"])] += 1
        want["min"][float(values["min"])] += 1
        want["mean"][float(f"{values['mean']:.4g}")] += 1
        if values.get("std") is not None and values["mean"] > 0:
            want["cv"][float(f"{values['std'] / values['mean']:.3g}")] += 1
    got: dict[str, Counter[float]] = {s: Counter() for s in want}
    for group in trace.groups:
        (hist,) = group.values
        for stat, counts in got.items():
            for item in getattr(hist, stat):
                counts[item.value] += item.calls
    assert got == want
    # The same calls built in memory, and the file read again: the same groups.
    direct = CallAggregator()
    for line in lines:
        call, duration = parse_call_record(json.loads(line))
        direct.add(call, duration)
    assert set(direct.groups()) == set(trace.groups) == set(read_trace(path).groups)


def test_a_negative_zero_summary_keeps_its_own_bins() -> None:
    groups = []
    for low in (0.0, -0.0):
        tally = GroupTally()
        summary = ValuesSummary(min=low, max=low, mean=low, std=low)
        tally.bump((("lens", summary),), 1, 0, 0.0)
        (hist,) = tally.histograms()
        groups.append(math.copysign(1.0, hist.min[0].value))
    assert groups == [1.0, -1.0]


def test_a_trace_of_distinct_shapes_lists_them_by_calls_then_label(tmp_path: Path) -> None:
    lines = [
        _line("softmax", {"x": {"shape": [n, 128], "dtype": "float32"}, "dim": 1})
        for n in [*range(1, 300), 7, 7, 250]
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    op = profile_calls(read_trace(path), max_shapes=1000).op()
    assert op.calls == len(lines) and op.distinct_shapes == 299
    want = sorted(
        (
            (lines.count(line), f"x=[{n},128]:float32 dim=1")
            for n, line in enumerate(lines, 1)
            if n < 300
        ),
        key=lambda cl: (-cl[0], cl[1]),
    )
    assert [(s.calls, s.args) for s in op.shapes] == want
    rows = op.axis("rows")
    assert rows is not None and (rows.min, rows.max) == (1, 299)
