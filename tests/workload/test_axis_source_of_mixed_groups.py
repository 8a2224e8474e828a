"""The source of an axis that calls read from different arguments names each of them.

``mla_decode`` reads ``seqlen`` from the values summary of ``cache_seqlens`` where a call
carries one and from a ``max_seqlen`` scalar where it does not; an axis a signature reads
from a tensor under another name (``x`` or ``input``) or from another scalar (``max_seqlen``
or ``t``) is one axis too. Its source names every argument that gave some of its calls, the
one that gave the most first (``cache_seqlens.max(); max_seqlen``), in the profile, its
markdown and its JSON alike; a guard tests that first one, as one expression.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose.source import guard_present
from kernelopt.experiments.log import KernelSource
from kernelopt.workload import (
    AxisStat,
    Call,
    ScalarArg,
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


def _profile(tmp_path: Path, records: list[str]) -> WorkloadProfile:
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(records) + "\n")
    return profile_calls(read_jsonl(path))


def _axis(profile: WorkloadProfile, op: str, name: str) -> AxisStat:
    axis = profile.op(op).axis(name)
    assert axis is not None
    return axis


# Groups of calls are met most calls first: the largest group is the first met, though
# the other source gives more calls over its smaller groups.
_LENGTHS_FIRST_BOUNDS_MORE = [
    *[mla_call_record(2048, [100, 400, 200, 300]) for _ in range(3)],
    *[mla_call_record(1024, None) for _ in range(2)],
    *[mla_call_record(512, None) for _ in range(2)],
]
_BOUNDS_FIRST_LENGTHS_MORE = [
    *[mla_call_record(2048, None) for _ in range(3)],
    *[mla_call_record(2048, [100, 400, 200, 300], batch=4) for _ in range(2)],
    *[mla_call_record(2048, [50, 60, 70, 80, 90, 100, 110, 120], batch=8) for _ in range(2)],
]
# As many calls of either source: the one met first is named first.
_AS_MANY_OF_EACH = [
    *[mla_call_record(2048, [100, 400, 200, 300]) for _ in range(3)],
    *[mla_call_record(1024, None) for _ in range(2)],
    mla_call_record(512, None),
]


@pytest.mark.parametrize(
    ("records", "source", "kind", "calls"),
    [
        (_LENGTHS_FIRST_BOUNDS_MORE, "max_seqlen; cache_seqlens.max()", "scalar", 7),
        (_BOUNDS_FIRST_LENGTHS_MORE, "cache_seqlens.max(); max_seqlen", "values", 7),
        (_AS_MANY_OF_EACH, "cache_seqlens.max(); max_seqlen", "values", 6),
    ],
    ids=["lengths-first-bounds-more", "bounds-first-lengths-more", "as-many-of-each"],
)
def test_seqlen_of_groups_with_and_without_lengths_names_both_sources_most_calls_first(
    tmp_path: Path, records: list[str], source: str, kind: str, calls: int
) -> None:
    profile = _profile(tmp_path, records)

    seqlen = _axis(profile, "mla_decode", "seqlen")
    # The kind is that of the source named first: a scalar's, or a values summary's.
    assert (seqlen.source, seqlen.kind) == (source, kind)
    assert seqlen.sources == tuple(source.split("; "))
    # The values were right before: every call is counted once.
    assert sum(share.calls or 0 for share in seqlen.values) == calls


def test_one_shape_whose_calls_carry_their_lengths_or_not_names_both_sources(
    tmp_path: Path,
) -> None:
    # One group: two calls carry their lengths, one does not and reads the bound. The
    # bound's calls were counted first, and named the axis of all three.
    profile = _profile(
        tmp_path,
        [
            mla_call_record(2048, [100, 400, 200, 300]),
            mla_call_record(2048, [10, 20, 30, 40]),
            mla_call_record(2048, None),
        ],
    )

    seqlen = _axis(profile, "mla_decode", "seqlen")
    assert (seqlen.source, seqlen.kind) == ("cache_seqlens.max(); max_seqlen", "values")
    assert {share.value: share.calls for share in seqlen.values} == {40.0: 1, 400.0: 1, 2048.0: 1}
    # Summaries of the lengths themselves have one source: only calls that carry them.
    assert _axis(profile, "mla_decode", "seqlen_min").source == "cache_seqlens.min()"


def test_a_label_of_two_sources_reads_back_from_json_and_markdown(tmp_path: Path) -> None:
    profile = _profile(tmp_path, _BOUNDS_FIRST_LENGTHS_MORE)

    for read in (
        profile_from_json(profile_to_json(profile)),
        read_profile_md(render_profile_md(profile)),
    ):
        assert read == profile
        seqlen = _axis(read, "mla_decode", "seqlen")
        assert seqlen.sources == ("cache_seqlens.max()", "max_seqlen")
    markdown = render_profile_md(profile)
    assert "| seqlen | values | cache_seqlens.max(); max_seqlen |" in markdown


def test_a_guard_tests_the_source_of_most_calls_in_the_profile_and_as_read_back(
    tmp_path: Path,
) -> None:
    # Every call attends to one key. Three calls of one shape carry their lengths (all 1)
    # and are met first; four of two shapes read a bound of 1.
    one_key = [
        *[mla_call_record(2048, [1, 1, 1, 1]) for _ in range(3)],
        *[mla_call_record(1, None, batch=4) for _ in range(2)],
        *[mla_call_record(1, None, batch=8) for _ in range(2)],
    ]
    profile = _profile(tmp_path, one_key)
    read = read_profile_md(render_profile_md(profile))
    kernel = KernelSource(
        path="kernels/mla.py",
        text="def mla(q, cache_seqlens, max_seqlen):\n    if max_seqlen == 1:\n        return v\n",
        language="python",
        role="kernel",
    )

    for each in (profile, read):
        assert _axis(each, "mla_decode", "seqlen").source == "max_seqlen; cache_seqlens.max()"
        guards = {s.rule: s.guard for s in find_shortcuts(each)}
        # One expression a kernel can test, not the label of both sources: the overlooked
        # shortcut detector finds it in a kernel that tests the bound.
        assert guards["single-key-attention"] == "max_seqlen == 1"
        assert guard_present(guards["single-key-attention"], [kernel]) is not None


def _softmax(name: str, rows: int, calls: int) -> list[Call]:
    return [
        Call(
            op="softmax",
            args=(
                TensorArg(name=name, shape=(rows, 128), dtype="float16"),
                ScalarArg(name="dim", value=-1),
            ),
            duration_us=1.0,
        )
        for _ in range(calls)
    ]


def test_an_axis_read_from_a_tensor_under_two_names_names_both_most_calls_first() -> None:
    # x's one shape is met first (3 calls); input's two shapes give 4 calls.
    calls = [*_softmax("x", 64, 3), *_softmax("input", 32, 2), *_softmax("input", 16, 2)]

    profile = profile_calls(calls)

    assert _axis(profile, "softmax", "n").source == "input.shape[dim]; x.shape[dim]"
    rows = _axis(profile, "softmax", "rows")
    assert rows.source == "input.numel() / n; x.numel() / n"
    assert rows.sources == ("input.numel() / n", "x.numel() / n")


def test_a_derived_guard_reads_the_first_source_of_a_label_of_two() -> None:
    # One dominant shape of x; input's calls give the rows of another shape.
    calls = [*_softmax("x", 64, 9), *_softmax("input", 32, 1)]

    profile = profile_calls(calls)

    assert _axis(profile, "softmax", "rows").source == "x.numel() / n; input.numel() / n"
    guards = {s.rule: s.guard for s in find_shortcuts(profile)}
    assert guards["dominant-shape"] == "x.numel() // x.shape[dim] == 64"


def test_an_axis_read_from_two_scalars_and_two_tensor_names_names_each() -> None:
    def decode(q: str, scalar: str, bound: int) -> Call:
        return Call(
            op="mla_decode",
            args=(
                TensorArg(name=q, shape=(4, 1, 16, 576), dtype="bfloat16"),
                TensorArg(name="cache_seqlens", shape=(4,), dtype="int32"),
                ScalarArg(name=scalar, value=bound),
            ),
            duration_us=1.0,
        )

    # The query and max_seqlen shape is met first (3 calls); t's two shapes give 4 calls.
    calls = [
        *[decode("q", "max_seqlen", 512) for _ in range(3)],
        *[decode("query", "t", 256) for _ in range(2)],
        *[decode("query", "t", 128) for _ in range(2)],
    ]

    profile = profile_calls(calls)

    assert _axis(profile, "mla_decode", "seqlen").source == "t; max_seqlen"
    assert _axis(profile, "mla_decode", "b").source == "query.shape[0]; q.shape[0]"
    guards = {s.rule: s.guard for s in find_shortcuts(profile)}
    assert guards["size1-axis"] == "query.shape[1] == 1"


def test_an_axis_read_with_its_dim_given_or_left_to_its_default_names_both() -> None:
    def softmax(rows: int, dim: int | None) -> Call:
        dims = () if dim is None else (ScalarArg(name="dim", value=dim),)
        x = TensorArg(name="x", shape=(rows, 128), dtype="float16")
        return Call(op="softmax", args=(x, *dims), duration_us=1.0)

    # The shape with its dim given is met first (3 calls); two shapes without give 4.
    calls = [
        *[softmax(64, -1) for _ in range(3)],
        *[softmax(32, None) for _ in range(2)],
        *[softmax(16, None) for _ in range(2)],
    ]

    profile = profile_calls(calls)

    assert _axis(profile, "softmax", "n").source == "x.shape[-1]; x.shape[dim]"


def test_sources_splits_only_between_sources_not_inside_an_expression() -> None:
    # A gather's test that its index is expanded holds an ``or`` of its own: one source.
    expanded = (
        "index.shape[dim] <= x.shape[dim] and "
        "all(index.stride(d) == 0 or index.shape[d] == 1 for d != dim)"
    )

    assert AxisStat(name="k_le_n_shared", kind="flag", source=expanded).sources == (expanded,)
    assert AxisStat(name="seqlen", source="max_seqlen; cache_seqlens.max()").sources == (
        "max_seqlen",
        "cache_seqlens.max()",
    )
    assert AxisStat(name="b", source="").sources == ()
