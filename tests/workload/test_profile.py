"""WorkloadProfile: shares, medians, size-1 axes, skew and views, computed by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import (
    Call,
    CallGroup,
    OpProfile,
    ScalarArg,
    TensorArg,
    WorkloadProfile,
    find_shortcuts,
    profile_calls,
    profile_trace,
)


@pytest.fixture
def mla(data: Path) -> OpProfile:
    return profile_trace(data / "mla_decode_calls.jsonl").op("mla_decode")


def test_totals_and_shapes(mla: OpProfile) -> None:
    assert (mla.calls, mla.timed_calls, mla.time_us, mla.distinct_shapes) == (10, 10, 585.0, 4)
    assert mla.signature == "mla_decode" and mla.family == "mla-decode"
    assert [s.calls for s in mla.shapes] == [6, 2, 1, 1]
    top = mla.shapes[0]
    assert top.call_share == 0.6 and top.time_us == 240.0 and top.time_share == 240 / 585
    assert top.axis("s_q") == 1 and top.axis("h_kv") == 1
    # Lengths vary within a shape: they are summarized per axis, not per shape.
    assert top.axis("seqlen") is None and "cache_seqlens=[32]:int32 " in top.args
    assert top.args.startswith("q=[32,1,128,576]:bfloat16 kv_cache=[2048,64,1,576]:bfloat16")


def test_axis_statistics(mla: OpProfile) -> None:
    s_q = mla.axis("s_q")
    assert s_q is not None
    assert (s_q.min, s_q.median, s_q.max, s_q.distinct) == (1, 1, 16, 2)
    assert s_q.source == "q.shape[1]" and s_q.kind == "shape"
    # Time-weighted median: 265 us at s_q=1, 320 us at s_q=16.
    assert s_q.time_median == 16
    one = s_q.share_of(1)
    assert one is not None and (one.calls, one.call_share, one.time_us) == (8, 0.8, 265.0)
    assert one.time_share == 265 / 585
    seqlen = mla.axis("seqlen")
    assert seqlen is not None and seqlen.kind == "values" and seqlen.source == "cache_seqlens.max()"
    assert (seqlen.min, seqlen.median, seqlen.max, seqlen.distinct) == (1, 4096, 4096, 3)
    mean = mla.axis("seqlen_mean")
    # Means are binned to 4 significant digits so that their histogram stays small.
    assert mean is not None and mean.share_of(1200) is not None and mean.share_of(1200.5) is None
    uniform = mla.axis("seqlen_uniform")
    assert uniform is not None and uniform.kind == "flag" and uniform.mean == 0.9
    assert uniform.source == "cache_seqlens.min() == cache_seqlens.max()"
    b = mla.axis("b")
    assert b is not None and [v.value for v in b.values] == [32, 4]
    assert mla.axis("no_such_axis") is None


def test_size1_axes_always_and_often(mla: OpProfile) -> None:
    always = {s.axis for s in mla.size1_axes(threshold=1.0)}
    assert always == {"h_kv"}
    often = {s.axis: s for s in mla.size1_axes(threshold=0.5)}
    assert set(often) == {"h_kv", "s_q"}
    assert often["s_q"].always is False and often["h_kv"].always is True
    assert often["s_q"].call_share == 0.8 and often["s_q"].source == "q.shape[1]"
    rare = {s.axis for s in mla.size1_axes(threshold=0.05)}
    assert {"seqlen", "max_blocks"} <= rare  # the single-key call
    # The min and mean of the lengths are statistics of a tensor's values, no sizes.
    assert not {"seqlen_min", "seqlen_mean"} & rare


@pytest.mark.parametrize("threshold", [0, -0.5, 1.5, 90, float("nan"), float("inf")])
def test_size1_axes_refuse_a_threshold_outside_0_1(mla: OpProfile, threshold: float) -> None:
    # 90 (a percent) found nothing and NaN found every axis that is ever 1, silently.
    with pytest.raises(InputError, match=r"threshold: Expected a threshold number in \(0, 1\]"):
        mla.size1_axes(threshold=threshold)


def test_skew_and_weighted_views(mla: OpProfile) -> None:
    assert mla.skew(1).call_share == 0.6
    assert mla.skew(1).time_share == 320 / 585  # the top shape by time is a different one
    assert mla.skew(4).call_share == pytest.approx(1.0)
    assert mla.top_shapes(1, by="calls")[0].axis("s_q") == 1
    assert mla.top_shapes(1, by="time")[0].axis("s_q") == 16
    with pytest.raises(InputError, match="by='calls' or by='time'"):
        mla.top_shapes(1, by="bytes")
    with pytest.raises(InputError, match="k: Expected an integer >= 1"):
        mla.skew(0)


def test_rare_shapes_fold_into_other_but_axes_cover_every_call(data: Path) -> None:
    op = profile_trace(data / "mla_decode_calls.jsonl", max_shapes=2).op()
    assert len(op.shapes) == 2 and op.distinct_shapes == 4
    assert op.other is not None
    assert (op.other.calls, op.other.time_us, op.other.args) == (2, 25.0, "2 more shapes")
    b = op.axis("b")
    assert b is not None and b.min == 4 and b.share_of(4) is not None


def test_a_rare_shape_that_takes_most_of_the_time_is_listed_not_folded() -> None:
    # 50 calls of 1 us, 30 of 10 us, 20 of 100 us: the rarest shape takes 85% of the time.
    def call(n: int, us: float) -> Call:
        return Call(
            op="f", args=(TensorArg(name="x", shape=(n,), dtype="float32"),), duration_us=us
        )

    calls = [call(1, 1.0)] * 50 + [call(2, 10.0)] * 30 + [call(3, 100.0)] * 20
    full = profile_calls(calls).op()
    op = profile_calls(calls, max_shapes=1).op()
    assert op.skew(1) == full.skew(1)
    assert (op.skew(1).call_share, op.skew(1).time_share) == (0.5, 2000 / 2350)
    assert [s.args for s in op.shapes] == ["x=[1]:float32", "x=[3]:float32"]
    assert op.other is not None and (op.other.calls, op.other.time_us) == (30, 300.0)
    (dominant,) = [s for s in find_shortcuts(op) if s.rule == "dominant-shape"]
    assert dominant.guard == "x.shape[0] == 3"


def test_values_list_is_capped_but_keeps_one() -> None:
    calls = [Call(op="f", args=(ScalarArg(name="n", value=v),)) for v in range(2, 40)] * 2
    calls += [Call(op="f", args=(ScalarArg(name="n", value=1),))]
    n = profile_calls(calls, max_values=3).op().axis("n")
    assert n is not None and n.distinct == 39 and len(n.values) == 4
    assert [v.value for v in n.values] == [2, 3, 4, 1]
    assert n.min == 1 and n.max == 39 and n.median == 20


def test_calls_groups_and_trace_give_the_same_profile(data: Path) -> None:
    import json

    from kernelopt._errors import KernelOptError
    from kernelopt.workload import parse_call_record, read_trace

    trace = read_trace(data / "mla_decode_calls.jsonl")
    from_trace = profile_calls(trace, source="x")
    assert profile_calls(list(trace.groups), source="x").ops == from_trace.ops
    # One Call per valid line, values summaries and duration included.
    calls = []
    for line in (data / "mla_decode_calls.jsonl").read_text().splitlines():
        try:
            call, duration = parse_call_record(json.loads(line))
        except (ValueError, KernelOptError):
            continue
        calls.append(Call(op=call.op, args=call.args, duration_us=duration))
    assert len(calls) == 10
    assert profile_calls(calls, source="x").ops == from_trace.ops


def test_op_selection_and_errors() -> None:
    calls = [
        Call(
            op="aten::softmax",
            args=(
                TensorArg(name="self", shape=(4, 1), dtype="float32"),
                ScalarArg(name="dim", value=1),
            ),
        ),
        Call(
            op="aten::topk",
            args=(
                TensorArg(name="self", shape=(4, 8), dtype="float32"),
                ScalarArg(name="k", value=8),
            ),
        ),
    ]
    profile = profile_calls(calls)
    assert [o.op for o in profile.ops] == ["aten::softmax", "aten::topk"]
    assert profile.calls == 2 and profile.distinct_shapes == 2
    assert profile.op("softmax").op == "aten::softmax"  # without namespace and case
    assert profile.op("ATEN::TOPK").op == "aten::topk"
    assert [o.op for o in profile_calls(calls, op="topk").ops] == ["aten::topk"]
    with pytest.raises(InputError, match=r"an op of the trace \(aten::softmax, aten::topk\)"):
        profile_calls(calls, op="gemm")
    with pytest.raises(InputError, match="an op of the profile"):
        profile.op("gemm")
    with pytest.raises(InputError, match="max_shapes: Expected an integer >= 1"):
        profile_calls(calls, max_shapes=0)
    with pytest.raises(InputError, match="Call or CallGroup"):
        profile_calls(["not a call"])  # type: ignore[list-item]


def test_empty_and_untimed_profiles() -> None:
    empty = profile_calls([])
    assert empty == WorkloadProfile(source="calls", format="calls", ops=(), records=0)
    with pytest.raises(InputError, match="at least one op"):
        empty.op()
    op = profile_calls([CallGroup(call=Call(op="f"), calls=3)]).op()
    assert op.calls == 3 and op.time_us is None and not op.timed
    assert op.shapes[0].time_share is None and op.skew(1).time_share is None


def test_share_validation() -> None:
    from kernelopt.workload import ShapeStat

    with pytest.raises(InputError, match=r"call_share: Expected a number in \[0, 1\]"):
        ShapeStat(args="x", call_share=1.5)


def test_counts_computed_with_numpy_are_taken(data: Path, mla: OpProfile) -> None:
    # np.int64(1) was refused ("Expected an integer >= 1, got a int64"), though a k or a
    # limit computed with numpy is an integer like any other.
    import numpy as np

    assert mla.skew(np.int64(1)) == mla.skew(1)
    assert type(mla.skew(np.int32(2)).k) is int
    assert mla.top_shapes(np.int64(1), by="time") == mla.top_shapes(1, by="time")
    trace = data / "mla_decode_calls.jsonl"
    assert profile_trace(trace, max_shapes=np.int64(2)) == profile_trace(trace, max_shapes=2)
    wrongs = ((np.int64(0), "an int64"), (np.float64(1.0), "np.float64(1.0)"), (True, "True"))
    for wrong, shown in wrongs:
        with pytest.raises(
            InputError, match=re.escape(f"k: Expected an integer >= 1, got {shown}")
        ):
            mla.skew(wrong)
    with pytest.raises(InputError, match="k: Expected an integer >= 1, got a list"):
        mla.skew([1])  # type: ignore[arg-type]
