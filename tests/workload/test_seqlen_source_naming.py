"""The dominant shape's guard tests what that shape's calls read each axis from.

An axis that calls read from different arguments names each source, most calls first
(``cache_seqlens.max(); max_seqlen``). A shape row lists ``seqlen`` only where its calls
read it from the ``max_seqlen`` scalar, so where the lengths tensor gave more calls over
the trace, the first source is not what the dominant shape's value came from: its guard
tests the source of its own calls, in the profile and as read back.
"""

from __future__ import annotations

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
    read_jsonl,
    read_profile_md,
    render_profile_md,
)

from .conftest import mla_call_record


def _dominant(profile: WorkloadProfile) -> Shortcut:
    (found,) = [s for s in find_shortcuts(profile) if s.rule == "dominant-shape"]
    return found


def _read_backs(profile: WorkloadProfile) -> list[WorkloadProfile]:
    return [
        profile,
        profile_from_json(profile_to_json(profile)),
        read_profile_md(render_profile_md(profile)),
    ]


def test_the_dominant_shape_guard_names_the_bound_its_calls_read_seqlen_from(
    tmp_path: Path,
) -> None:

    # Four slow calls of batch 4 read seqlen from max_seqlen alone (no lengths recorded);
    # six quick calls of two other batches carry their lengths, which give seqlen.
    records = [
        *[mla_call_record(2048, None, batch=4, duration_us=100.0) for _ in range(4)],
        *[
            mla_call_record(
                2048, [100, 400, 200, 300, 100, 400, 200, 300], batch=8, duration_us=1.0
            )
            for _ in range(3)
        ],
        *[mla_call_record(1024, [50] * 16, batch=16, duration_us=1.0) for _ in range(3)],
    ]
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(records) + "\n")
    profile = profile_calls(read_jsonl(path))

    for each in _read_backs(profile):
        op = each.op("mla_decode")
        seqlen = op.axis("seqlen")
        assert seqlen is not None
        # The lengths tensor gave more calls over the trace: it is named first.
        assert seqlen.sources == ("cache_seqlens.max()", "max_seqlen")
        top = op.top_shapes(1, by="time")[0]
        assert top.axis("seqlen") == 2048 and top.axis("b") == 4
        found = _dominant(each)
        assert found.guard == "q.shape[0] == 4 and max_seqlen == 2048"
        assert "cache_seqlens" not in found.guard


def _softmax(name: str, rows: int, calls: int, duration_us: float) -> list[Call]:
    return [
        Call(
            op="softmax",
            args=(
                TensorArg(name=name, shape=(rows, 128), dtype="float16"),
                ScalarArg(name="dim", value=-1),
            ),
            duration_us=duration_us,
        )
        for _ in range(calls)
    ]


def test_the_dominant_shape_guard_names_the_tensor_its_calls_passed() -> None:
    # x's one shape takes most of the time; input's two shapes give more calls.
    calls = [
        *_softmax("x", 64, 3, 100.0),
        *_softmax("input", 32, 2, 1.0),
        *_softmax("input", 16, 2, 1.0),
    ]
    profile = profile_calls(calls)

    for each in _read_backs(profile):
        op = each.op("softmax")
        assert op.axis("rows").sources == ("input.numel() / n", "x.numel() / n")  # type: ignore[union-attr]
        assert _dominant(each).guard == "x.numel() // x.shape[dim] == 64"


def _softmax_dim(dim: int | None, rows: int, calls: int, duration_us: float) -> list[Call]:
    dims = () if dim is None else (ScalarArg(name="dim", value=dim),)
    x = TensorArg(name="x", shape=(rows, 128), dtype="float16")
    return [Call(op="softmax", args=(x, *dims), duration_us=duration_us) for _ in range(calls)]


@pytest.mark.parametrize("dim", [-1, 1])
def test_the_dominant_shape_guard_names_the_dim_its_calls_passed(dim: int) -> None:
    # The calls that leave dim to its default are the more; the dominant shape passes it.
    calls = [
        *_softmax_dim(dim, 64, 3, 100.0),
        *_softmax_dim(None, 32, 2, 1.0),
        *_softmax_dim(None, 16, 2, 1.0),
    ]
    profile = profile_calls(calls)

    for each in _read_backs(profile):
        op = each.op("softmax")
        assert op.axis("n").sources == ("x.shape[-1]", "x.shape[dim]")  # type: ignore[union-attr]
        assert _dominant(each).guard == "x.numel() // x.shape[dim] == 64"
