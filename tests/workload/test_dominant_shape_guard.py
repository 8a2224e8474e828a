"""The dominant-shape guard tells the dominant shape apart from the others.

Each guard is run as written, on stand-ins for the recorded tensors, against every call of
the trace: the dominant shape's calls pass it, and some other call does not.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from kernelopt.workload import (
    Call,
    ScalarArg,
    Shortcut,
    TensorArg,
    WorkloadProfile,
    find_shortcuts,
    profile_calls,
    profile_from_json,
    profile_to_json,
    profile_trace,
    read_profile_md,
    write_profile_md,
)
from kernelopt.workload.report import render_report

NO_GUARD = "no cheap test of its sizes tells it apart"


class _Tensor:
    """What a guard reads of a tensor: its shape and element count."""

    def __init__(self, shape: Sequence[int]) -> None:
        self.shape = tuple(shape)

    def numel(self) -> int:
        return math.prod(self.shape)


def _passes(guard: str, call: Call) -> bool:
    """Run ``guard`` as a kernel's wrapper would, with the call's arguments in scope."""
    scope: dict[str, object] = {}
    for arg in call.args:
        if isinstance(arg, TensorArg):
            scope[arg.name] = _Tensor(arg.shape)
        elif isinstance(arg, ScalarArg):
            scope[arg.name] = arg.value
    return bool(eval(guard, {"__builtins__": {}}, scope))


def _dominant(profile: WorkloadProfile) -> Shortcut:
    (found,) = [s for s in find_shortcuts(profile) if s.rule == "dominant-shape"]
    return found


def _softmax(*shape: int, dtype: str = "float32") -> Call:
    return Call(
        op="softmax",
        args=(TensorArg(name="x", shape=shape, dtype=dtype), ScalarArg(name="dim", value=-1)),
    )


def _gather(rows: int) -> Call:
    return Call(
        op="gather",
        args=(
            TensorArg(name="x", shape=(rows, 4096), dtype="float32"),
            ScalarArg(name="dim", value=1),
            TensorArg(name="index", shape=(rows, 64), dtype="int64"),
        ),
    )


def _topk(rows: int) -> Call:
    return Call(
        op="topk",
        args=(
            TensorArg(name="x", shape=(rows, 4096), dtype="float32"),
            ScalarArg(name="k", value=8),
        ),
    )


def test_rows_alone_set_the_dominant_shape_apart(tmp_path: Path) -> None:
    # A row softmax whose calls differ only in their number of rows: every 5th call has 64
    # rows and takes 80% of the time.
    path = tmp_path / "softmax.jsonl"
    lines = []
    for i in range(20):
        rows = 64 if i % 5 == 0 else 4
        x = {"shape": [rows, 4096], "dtype": "float32"}
        lines.append(
            json.dumps({"op": "softmax", "args": {"x": x, "dim": -1}, "duration_us": 16 * rows})
        )
    path.write_text("\n".join(lines) + "\n")
    found = _dominant(profile_trace(path))
    assert found.guard == "x.numel() // x.shape[dim] == 64"
    assert "(rows=64)" in found.message and "n=4096" not in found.message
    assert found.call_share == 0.2 and found.time_share == pytest.approx(0.8)
    assert _passes(found.guard, _softmax(64, 4096))
    assert not _passes(found.guard, _softmax(4, 4096))


def test_a_3d_input_without_durations_is_told_apart_by_its_rows() -> None:
    calls = [_softmax(4, 16, 4096) if i % 5 == 0 else _softmax(1, 16, 4096) for i in range(20)]
    found = _dominant(profile_calls(calls))
    assert found.guard == "x.numel() // x.shape[dim] == 16"
    assert found.call_share == 0.8 and found.time_share is None
    assert "80.0% of calls (rows=16)" in found.message


def test_rows_join_the_sizes_only_where_the_sizes_do_not_tell_the_shape_apart() -> None:
    # n = 4096 also fits the 4-row calls: the rows are needed besides it.
    mixed = [_softmax(64, 4096)] * 6 + [_softmax(4, 4096)] * 2 + [_softmax(64, 1024)] * 2
    found = _dominant(profile_calls(mixed))
    assert found.guard == "x.shape[dim] == 4096 and x.numel() // x.shape[dim] == 64"
    assert "(n=4096, rows=64)" in found.message
    # n = 4096 alone sets the shape apart: the guard stays as short as it was.
    apart = [_softmax(64, 4096)] * 6 + [_softmax(4, 1024)] * 4
    assert _dominant(profile_calls(apart)).guard == "x.shape[dim] == 4096"


@pytest.mark.parametrize("call", [_gather, _topk], ids=["gather", "topk"])
def test_rows_of_other_ops_are_written_with_their_own_sources(call: Callable[[int], Call]) -> None:
    found = _dominant(profile_calls([call(64)] * 7 + [call(4)] * 3))
    source = "x.shape[dim]" if call is _gather else "x.shape[-1]"
    assert found.guard == f"x.numel() // {source} == 64"


def test_shapes_that_differ_in_no_size_get_no_guard() -> None:
    # Same sizes, other dtype: no size test singles the float32 calls out.
    calls = [_softmax(4, 4096)] * 8 + [_softmax(4, 4096, dtype="float16")] * 2
    found = _dominant(profile_calls(calls))
    assert found.guard == ""
    assert NO_GUARD in found.message and "x=[4,4096]:float32" in found.message
    assert found.call_share == 0.8
    # The report shows the missing guard as a dash, never as an empty field.
    report = render_report(profile_calls(calls), [found])
    assert "    guard: -   catalog: " in report and "guard:    " not in report


def test_a_guard_that_also_admits_other_shapes_says_how_many() -> None:
    calls = (
        [_softmax(64, 4096)] * 6 + [_softmax(64, 4096, dtype="float16")] + [_softmax(4, 4096)] * 3
    )
    found = _dominant(profile_calls(calls))
    assert found.guard == "x.numel() // x.shape[dim] == 64"
    assert "its guard also admits 1 other shape that differs from it" in found.message
    assert "(10.0% of calls)" in found.message


def test_the_only_shape_keeps_its_sizes_as_the_guard() -> None:
    found = _dominant(profile_calls([_softmax(4, 4096)] * 3))
    assert found.guard == "x.shape[dim] == 4096"
    assert found.message.startswith("the only shape (n=4096)")


# Per trace: the dominant shape's call, repeated, and the calls of the other shapes.
TRACES = {
    "rows": (_softmax(4, 4096), [_softmax(64, 4096)] * 2),
    "3-d rows": (_softmax(1, 16, 4096), [_softmax(4, 16, 4096)] * 2),
    "rows and n": (_softmax(64, 4096), [_softmax(4, 4096)] * 2 + [_softmax(64, 1024)] * 2),
    "dtype": (_softmax(4, 4096), [_softmax(4, 4096, dtype="float16")] * 2),
    "gather rows": (_gather(64), [_gather(4)] * 3),
    "topk rows": (_topk(64), [_topk(4)] * 3),
}


@pytest.mark.parametrize(("top", "rest"), list(TRACES.values()), ids=list(TRACES))
def test_no_guard_claiming_one_shape_takes_every_call(top: Call, rest: list[Call]) -> None:
    calls = [top] * 8 + rest
    found = _dominant(profile_calls(calls))
    if not found.guard:
        assert NO_GUARD in found.message
        return
    assert _passes(found.guard, top), found.guard
    assert not all(_passes(found.guard, call) for call in rest), found.guard


@pytest.mark.parametrize(("top", "rest"), list(TRACES.values()), ids=list(TRACES))
def test_profiles_read_back_give_the_same_guard(
    tmp_path: Path, top: Call, rest: list[Call]
) -> None:
    profile = profile_calls([top] * 8 + rest)
    write_profile_md(profile, tmp_path / "workload_profile.md")
    expected = _dominant(profile)
    for again in (
        read_profile_md(tmp_path / "workload_profile.md"),
        profile_from_json(profile_to_json(profile)),
    ):
        assert _dominant(again) == expected
