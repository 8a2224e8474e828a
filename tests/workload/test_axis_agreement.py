"""An axis a signature names in two tensors takes one size only when both give it.

``mla_decode`` reads ``b`` from ``q.shape[0]``, ``block_table.shape[0]`` and
``cache_seqlens.shape[0]``; ``attention`` reads ``s_kv`` from ``k`` and ``v``. A call whose
tensors give one axis two sizes is malformed, or the signature does not fit it: read as the
first tensor's size, a query of one row beside a block table of 16 sequences would make a
size-1 ``b`` rule fire. Such a call keeps its argument names, and the profile's notes say
which axis, which tensors and which sizes, on every path that reads axes: per call, per
layout (a plan shared by the calls of one layout), and from a JSONL trace read through its
shape templates or decoded line by line.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kernelopt._strict_json import loads, once_each
from kernelopt.workload import (
    Call,
    OpSignature,
    TensorArg,
    WorkloadProfile,
    find_shortcuts,
    profile_calls,
    read_jsonl,
    register_signature,
)
from kernelopt.workload.calls import CallAggregator, CallGroup, ValuesSummary, parse_call_record
from kernelopt.workload.jsonl import MAX_LISTED_PROBLEMS
from kernelopt.workload.signatures import AxisReader, extract_axes, find_signature

_B_CLASH = (
    "signature mla_decode: Expected axis b the same in q.shape[0] and "
    "block_table.shape[0], got {q} and {table}"
)
_FALLBACK = "; its axes keep their argument names"


def _tensor(name: str, *shape: int, values: ValuesSummary | None = None) -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype="bfloat16", values=values)


def _decode(q_rows: int, table_rows: int, lengths_rows: int | None = None) -> Call:
    """An MLA decode call whose query, block table and lengths give ``b`` as they say."""
    lengths = table_rows if lengths_rows is None else lengths_rows
    return Call(
        op="mla_decode",
        args=(
            _tensor("q", q_rows, 1, 128, 576),
            _tensor("kv_cache", 512, 64, 1, 576),
            _tensor("block_table", table_rows, 8),
            _tensor("cache_seqlens", lengths),
        ),
    )


def _sdpa(query: tuple[int, ...], key: tuple[int, ...], value: tuple[int, ...]) -> Call:
    return Call(
        op="aten::scaled_dot_product_attention",
        args=(_tensor("query", *query), _tensor("key", *key), _tensor("value", *value)),
    )


def _named(call: Call) -> tuple[dict[str, float], str | None]:
    axes, problem = extract_axes(call, find_signature(call.op))
    return {a.name: a.value for a in axes}, problem


def test_a_batch_the_query_and_the_block_table_give_differently_is_named_in_a_note() -> None:
    axes, problem = _named(_decode(32, 16, 32))
    assert problem == _B_CLASH.format(q=32, table=16) + _FALLBACK
    # Which of 32 and 16 is the batch is not known: neither is read as b.
    assert "b" not in axes
    assert (axes["q[0]"], axes["block_table[0]"], axes["cache_seqlens[0]"]) == (32, 16, 32)


def test_every_tensor_that_differs_from_the_first_is_named() -> None:
    _, problem = _named(_decode(32, 16))
    assert problem == (
        _B_CLASH.format(q=32, table=16)
        + "; Expected axis b the same in q.shape[0] and cache_seqlens.shape[0], got 32 and 16"
        + _FALLBACK
    )


def test_a_lengths_tensor_that_alone_differs_is_named() -> None:
    _, problem = _named(_decode(32, 32, 31))
    assert problem == (
        "signature mla_decode: Expected axis b the same in q.shape[0] and "
        "cache_seqlens.shape[0], got 32 and 31" + _FALLBACK
    )


def test_sizes_that_agree_read_as_before() -> None:
    axes, problem = _named(_decode(32, 32))
    assert problem is None
    assert (axes["b"], axes["s_q"], axes["h_q"], axes["max_blocks"]) == (32, 1, 128, 8)
    assert not any("[" in name for name in axes)
    profile = profile_calls([_decode(32, 32), _decode(1, 1)])
    assert profile.notes == ()
    b = profile.op().axis("b")
    assert b is not None and b.size1_share == 0.5


def test_the_profile_notes_the_call_and_keeps_the_agreeing_calls_named() -> None:
    calls = [_decode(32, 32)] * 3 + [_decode(1, 16)]
    profile = profile_calls(calls)
    assert profile.notes == (
        "mla_decode: "
        + _B_CLASH.format(q=1, table=16)
        + "; Expected axis b the same in q.shape[0] and cache_seqlens.shape[0], got 1 and 16"
        + _FALLBACK,
    )
    op = profile.op()
    b = op.axis("b")
    assert b is not None
    assert [(v.value, v.calls) for v in b.values] == [(32, 3)]
    q_rows = op.axis("q[0]")
    assert q_rows is not None and [(v.value, v.calls) for v in q_rows.values] == [(1, 1)]


def test_a_query_of_one_row_beside_a_table_of_many_is_no_single_sequence() -> None:
    # Read as the query's size, b would be 1 in every call: "a single sequence".
    profile = profile_calls([_decode(1, 16), _decode(1, 8)])
    op = profile.op()
    assert op.axis("b") is None
    assert not [s for s in find_shortcuts(profile) if s.axis == "b"]
    assert len(profile.notes) == 2  # one per distinct pair of sizes


def test_keys_and_values_of_other_lengths_are_no_attention_over_one_key() -> None:
    # k of one key beside v of 64: s_kv read from k alone would claim a single key.
    call = _sdpa((2, 8, 16, 64), (2, 8, 1, 64), (2, 8, 64, 64))
    axes, problem = _named(call)
    assert problem == (
        "signature attention: Expected axis s_kv the same in key.shape[2] and "
        "value.shape[2], got 1 and 64" + _FALLBACK
    )
    assert "s_kv" not in axes
    profile = profile_calls([call])
    assert not [s for s in find_shortcuts(profile) if s.rule == "single-key-attention"]


def test_a_batch_of_one_beside_a_larger_one_is_a_difference_not_a_broadcast() -> None:
    _, problem = _named(_sdpa((1, 8, 1, 64), (4, 8, 32, 64), (4, 8, 32, 64)))
    assert problem == (
        "signature attention: Expected axis b the same in query.shape[0] and key.shape[0], "
        "got 1 and 4; Expected axis b the same in query.shape[0] and value.shape[0], "
        "got 1 and 4" + _FALLBACK
    )


def test_a_query_read_from_the_right_is_compared_on_the_dims_it_has() -> None:
    # An unbatched [h, s, d] query: d_qk is compared with the key's, b is not.
    agreeing, problem = _named(_sdpa((8, 1, 64), (2, 8, 32, 64), (2, 8, 32, 64)))
    assert problem is None
    assert (agreeing["b"], agreeing["h_q"], agreeing["d_qk"]) == (2, 8, 64)
    _, problem = _named(_sdpa((8, 1, 128), (2, 8, 32, 64), (2, 8, 32, 64)))
    assert problem == (
        "signature attention: Expected axis d_qk the same in query.shape[2] and "
        "key.shape[3], got 128 and 64" + _FALLBACK
    )


def test_an_axis_named_twice_in_one_tensor_of_a_registered_signature_is_checked() -> None:
    register_signature(
        OpSignature(name="square", ops=("square_op",), tensors={"x": ("n", "n")}, reduced="n")
    )
    square = Call(op="square_op", args=(_tensor("x", 4, 4),))
    oblong = Call(op="square_op", args=(_tensor("x", 4, 5),))
    assert _named(square) == ({"n": 4}, None)
    assert _named(oblong) == (
        {"x[0]": 4, "x[1]": 5},
        "signature square: Expected axis n the same in x.shape[0] and x.shape[1], got 4 and 5"
        + _FALLBACK,
    )


def test_a_layout_read_before_does_not_lend_its_plan_to_a_call_that_disagrees() -> None:
    # The plan of a layout is made from its first call; a later call of the same layout
    # (same arguments, same ranks) whose sizes differ must not be read through it.
    reader = AxisReader(find_signature("mla_decode"))
    agreeing, disagreeing = _decode(32, 32), _decode(32, 16, 32)
    shared = reader.plan(agreeing)
    assert shared is not None and shared.shared and shared.problem is None
    own = reader.plan(disagreeing)
    assert own is not None and not own.shared
    assert own.problem == _B_CLASH.format(q=32, table=16) + _FALLBACK
    axes, problem = extract_axes(disagreeing, find_signature("mla_decode"))
    rows = [(a.name, a.value, a.source, a.kind) for a in axes]
    assert reader.rows(disagreeing) == (rows, problem)
    assert reader.plan(_decode(8, 8)) is shared  # the layout's plan still serves the others


# A JSONL trace mixing calls that agree with calls that do not, in the layouts the reader
# builds from a shape template (the first line of a layout) as well as decoded lines.


def _mla_record(rng: random.Random) -> dict[str, Any]:
    b = rng.randint(1, 48)
    table, lengths = b, b
    draw = rng.random()
    if draw < 0.15:
        table = rng.randint(1, 48)
    elif draw < 0.25:
        lengths = rng.randint(1, 48)
    elif draw < 0.3:
        table = lengths = 1 if b > 1 else 2
    top = rng.randint(1, 4096)
    low = rng.randint(1, top)
    args: dict[str, Any] = {
        "q": {"shape": [b, rng.choice((1, 1, 2)), 16, 576], "dtype": "bfloat16"},
        "kv_cache": {"shape": [rng.randint(1, 3000), 64, 1, 576], "dtype": "bf16"},
        "block_table": {"shape": [table, rng.randint(1, 32)], "dtype": "int32"},
        "cache_seqlens": {
            "shape": [lengths],
            "dtype": "int32",
            "values": {"min": low, "max": top, "mean": (low + top) / 2},
        },
        "softmax_scale": 0.0417,
    }
    return {"op": "mla_decode", "args": args}


def _sdpa_record(rng: random.Random) -> dict[str, Any]:
    b, h, keys = rng.randint(1, 4), rng.choice((1, 8)), rng.randint(1, 256)
    values_keys = keys if rng.random() < 0.8 else rng.randint(1, 256)
    return {
        "op": "sdpa",
        "args": {
            "query": {"shape": [b, h, rng.choice((1, 16)), 64], "dtype": "float16"},
            "key": {"shape": [b, h, keys, 64], "dtype": "float16"},
            "value": {"shape": [b, h, values_keys, 64], "dtype": "float16"},
        },
    }


def _seeded_trace(path: Path, lines: int, seed: int = 11) -> Path:
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(lines):
        record = _mla_record(rng) if rng.random() < 0.7 else _sdpa_record(rng)
        if rng.random() < 0.8:
            record["duration_us"] = round(rng.uniform(1, 300), 3)
        compact = rng.random() >= 0.3
        out.append(json.dumps(record, separators=(",", ":")) if compact else json.dumps(record))
        if rng.random() < 0.1:
            out.append(out[-1])
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _decoded_line_by_line(path: Path) -> list[CallGroup]:
    """Every line decoded in full, as the reader does for a line it has no template for."""
    aggregator = CallAggregator()
    for line in path.read_bytes().splitlines():
        if line.strip():
            call, duration = parse_call_record(loads(line, object_pairs_hook=once_each))
            aggregator.add(call, duration)
    return aggregator.groups()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _seeded_trace(tmp_path_factory.mktemp("agreement") / "calls.jsonl", 3000)


def test_templates_and_full_decodes_give_the_same_disagreeing_calls(seeded: Path) -> None:
    trace = read_jsonl(seeded)
    assert trace.skipped == 0
    assert trace.groups == tuple(_decoded_line_by_line(seeded))
    clashing = [g for g in trace.groups if _named(g.call)[1] is not None]
    assert 300 < len(clashing) < len(trace.groups) // 2


def test_axes_read_by_layout_equal_axes_read_per_call_where_sizes_disagree(
    seeded: Path,
) -> None:
    trace = read_jsonl(seeded)
    readers: dict[str, AxisReader] = {}
    outcomes: dict[bool, int] = defaultdict(int)
    for group in trace.groups:
        call = group.call
        sig = find_signature(call.op)
        reader = readers.setdefault(call.op, AxisReader(sig))
        axes, problem = extract_axes(call, sig)
        assert reader.rows(call) == ([(a.name, a.value, a.source, a.kind) for a in axes], problem)
        plan = reader.plan(call)
        assert plan is not None
        assert plan.values(call) == [a.value for a in axes]
        # A plan shared by a layout never serves a call whose sizes disagree.
        assert plan.shared == (problem is None or "the same in" not in problem)
        outcomes[problem is None] += 1
    assert outcomes[True] > 1000 and outcomes[False] > 300


def _without_source(profile: WorkloadProfile) -> tuple[Any, ...]:
    return (profile.ops, profile.notes)


@pytest.mark.parametrize("op", ["mla_decode", "sdpa"])
def test_profiles_of_both_paths_and_of_calls_read_one_by_one_are_equal(
    seeded: Path, op: str
) -> None:
    trace = read_jsonl(seeded)
    groups = _decoded_line_by_line(seeded)
    profile = profile_calls(trace, op=op, max_values=5)
    assert _without_source(profile) == _without_source(profile_calls(groups, op=op, max_values=5))
    # The notes: one per distinct disagreement, each as extract_axes words it, the first
    # MAX_LISTED_PROBLEMS listed and the calls of the rest counted.
    sig = find_signature(op)
    noted = [
        (group.calls, f"{op}: {problem}")
        for group in trace.groups
        if group.call.op == op
        for problem in [extract_axes(group.call, sig)[1]]
        if problem is not None
    ]
    problems = {note for _, note in noted}
    listed, more = profile.notes[:-1], profile.notes[-1]
    # A note met by several shapes says how many calls it stands for.
    listed = tuple(re.sub(r" \(\d+ calls? of \d+ shapes\)$", "", note) for note in listed)
    assert len(listed) == len(set(listed)) == MAX_LISTED_PROBLEMS < len(problems)
    assert set(listed) <= problems
    unlisted = sum(calls for calls, note in noted if note not in listed)
    assert more == f"... and {unlisted} more calls of {op} whose signature did not fit"
    # Each axis counts the calls that name it, as read call by call.
    counts: dict[str, dict[float, int]] = defaultdict(lambda: defaultdict(int))
    for group in trace.groups:
        if group.call.op == op:
            for name, value in _named(group.call)[0].items():
                counts[name][value] += group.calls
    checked = 0
    for axis in profile.op().axes:
        if axis.kind != "shape":
            continue
        bins = counts[axis.name]
        assert (axis.min, axis.max, axis.distinct) == (min(bins), max(bins), len(bins))
        assert sum(v.calls or 0 for v in axis.values) <= sum(bins.values())
        checked += 1
    assert checked > 5


def test_a_trace_whose_every_call_disagrees_lists_the_first_pairs_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    line = (
        '{"op": "mla_decode", "args": {"q": {"shape": [%d, 1, 16, 576], "dtype": "bf16"}, '
        '"block_table": {"shape": [%d, 4], "dtype": "int32"}}, "duration_us": 2.0}'
    )
    pairs = [(q, q + 1) for q in range(1, 400)]
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(line % pair for pair in pairs * 2) + "\n", encoding="utf-8")
    profile = profile_calls(read_jsonl(path))
    assert profile.calls == 2 * len(pairs)
    in_label_order = sorted(pairs, key=lambda pair: f"q=[{pair[0]},")
    assert profile.notes == (
        *(
            "mla_decode: " + _B_CLASH.format(q=q, table=table) + _FALLBACK
            for q, table in in_label_order[:MAX_LISTED_PROBLEMS]
        ),
        f"... and {2 * (len(pairs) - MAX_LISTED_PROBLEMS)} more calls of mla_decode "
        "whose signature did not fit",
    )
    assert profile.op().axis("b") is None
