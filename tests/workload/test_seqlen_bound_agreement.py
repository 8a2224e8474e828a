"""A length bound beside the lengths themselves: ``max_seqlen`` and ``cache_seqlens``.

``mla_decode`` reads its ``seqlen`` axis from the values summary of ``cache_seqlens`` (the
lengths of the call) and from a ``max_seqlen`` scalar (a bound of them). Where the lengths
were recorded they are the axis, each call counted once at its longest length; a bound
above them is what a bound is, and a bound below them contradicts the call: the profile
notes it, capped per op like the notes of calls its signature did not fit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.workload import (
    Call,
    OpProfile,
    ScalarArg,
    TensorArg,
    WorkloadProfile,
    find_signature,
    profile_calls,
    read_jsonl,
)
from kernelopt.workload.calls import ValuesSummary
from kernelopt.workload.jsonl import MAX_LISTED_PROBLEMS
from kernelopt.workload.signatures import extract_axes

from .conftest import mla_call_record

_NOTE = (
    "mla_decode: signature mla_decode: Expected max_seqlen >= cache_seqlens.max(), got "
    "max_seqlen = {bound} and cache_seqlens.max() = {longest}; axis seqlen is read from "
    "cache_seqlens.max()"
)
_MORE = "... and {calls} more calls of mla_decode whose length bound is below their longest length"


def _profile(tmp_path: Path, records: list[str]) -> WorkloadProfile:
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(records) + "\n")
    return profile_calls(read_jsonl(path))


def _seqlen_calls(op: OpProfile) -> dict[float, int]:
    axis = op.axis("seqlen")
    assert axis is not None
    return {share.value: share.calls for share in axis.values}


@pytest.mark.parametrize("bound", [400, 8192])
def test_recorded_lengths_are_the_axis_and_a_bound_at_or_above_them_adds_no_note(
    tmp_path: Path, bound: int
) -> None:

    profile = _profile(
        tmp_path,
        [mla_call_record(bound, [100, 400, 200, 300]), mla_call_record(bound, [50, 60, 70, 80])],
    )

    op = profile.op("mla_decode")
    seqlen = op.axis("seqlen")
    assert seqlen is not None
    assert (seqlen.source, seqlen.kind) == ("cache_seqlens.max()", "values")
    # Each call counted once, at its longest length: the bound is no second value of it.
    assert _seqlen_calls(op) == {80.0: 1, 400.0: 1}
    assert sum(share.call_share for share in seqlen.values) == 1.0
    assert sum(share.time_us or 0.0 for share in seqlen.values) == op.time_us == 20.0
    # The shape lists no length: the bound is none, and the lengths vary within it.
    assert [shape.axis("seqlen") for shape in op.shapes] == [None]
    assert profile.notes == ()


def test_a_bound_below_the_longest_length_is_noted_and_the_lengths_stay_the_axis(
    tmp_path: Path,
) -> None:
    profile = _profile(
        tmp_path,
        [
            mla_call_record(300, [100, 400, 200, 300]),
            mla_call_record(300, [100, 500, 200, 300]),
            mla_call_record(300, [10, 20, 30, 40]),  # within its bound, in the same shape
        ],
    )

    op = profile.op("mla_decode")
    assert _seqlen_calls(op) == {40.0: 1, 400.0: 1, 500.0: 1}
    assert op.axis("seqlen").source == "cache_seqlens.max()"  # type: ignore[union-attr]
    # One note for the shape, naming the longest length above the bound.
    assert profile.notes == (_NOTE.format(bound=300, longest=500),)


def test_a_call_read_alone_names_a_bound_below_its_lengths_and_reads_the_lengths() -> None:
    def decode(bound: int) -> Call:
        return Call(
            op="flash_mla_with_kvcache",
            args=(
                TensorArg(name="q", shape=(2, 1, 16, 576), dtype="bfloat16"),
                TensorArg(
                    name="cache_seqlens_k",
                    shape=(2,),
                    dtype="int32",
                    values=ValuesSummary(min=64.0, max=1000.0, mean=532.0),
                ),
                ScalarArg(name="max_seqlen", value=bound),
            ),
        )

    sig = find_signature("flash_mla_with_kvcache")
    below, problem = extract_axes(decode(999), sig)
    above, no_problem = extract_axes(decode(4096), sig)

    assert problem == (
        "signature mla_decode: Expected max_seqlen >= cache_seqlens_k.max(), got max_seqlen "
        "= 999 and cache_seqlens_k.max() = 1000; axis seqlen is read from cache_seqlens_k.max()"
    )
    assert no_problem is None
    for axes in (below, above):
        seqlen = {a.name: (a.value, a.source) for a in axes}["seqlen"]
        assert seqlen == (1000.0, "cache_seqlens_k.max()")


def test_calls_without_recorded_lengths_keep_the_bound_as_their_axis(tmp_path: Path) -> None:
    # One shape: two calls carry their lengths, one does not; only that one reads the bound.
    profile = _profile(
        tmp_path,
        [
            mla_call_record(2048, [100, 400, 200, 300], duration_us=10.0),
            mla_call_record(2048, [10, 20, 30, 40], duration_us=20.0),
            mla_call_record(2048, None, duration_us=40.0),
        ],
    )

    op = profile.op("mla_decode")
    seqlen = op.axis("seqlen")
    assert seqlen is not None
    assert _seqlen_calls(op) == {40.0: 1, 400.0: 1, 2048.0: 1}
    assert {share.value: share.time_us for share in seqlen.values} == {
        40.0: 20.0,
        400.0: 10.0,
        2048.0: 40.0,
    }
    assert profile.notes == ()


def test_the_notes_of_bounds_below_their_lengths_are_capped_per_op(tmp_path: Path) -> None:
    # Each shape its own bound below its lengths, two calls apiece: a note per shape past the cap
    # was a note per shape of the trace.
    shapes = MAX_LISTED_PROBLEMS + 5
    records = [
        mla_call_record(bound, [bound + 1, bound + 7])
        for bound in range(1, shapes + 1)
        for _ in range(2)
    ]

    profile = _profile(tmp_path, records)

    listed = [note for note in profile.notes if note.startswith("mla_decode: ")]
    assert len(listed) == len(set(listed)) == MAX_LISTED_PROBLEMS
    assert all(" is read from cache_seqlens.max()" in note for note in listed)
    assert profile.notes[-1] == _MORE.format(calls=2 * (shapes - MAX_LISTED_PROBLEMS))
    assert len(profile.notes) == MAX_LISTED_PROBLEMS + 1
