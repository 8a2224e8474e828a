"""One test says whether a selecting op is a gather (k == n selects everything) or a top-k
(k >= n): the profile's flag axes and the select-all rule agree, also on a profile read
back from JSON or markdown."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import (
    Call,
    OpSignature,
    ScalarArg,
    Shortcut,
    TensorArg,
    WorkloadProfile,
    find_shortcuts,
    parse_profile_md,
    profile_calls,
    profile_from_json,
    profile_to_json,
    register_signature,
    render_profile_md,
)
from kernelopt.workload.signatures import is_gather


def _same(profile: WorkloadProfile) -> WorkloadProfile:
    return profile


def _json(profile: WorkloadProfile) -> WorkloadProfile:
    return profile_from_json(profile_to_json(profile))


def _markdown(profile: WorkloadProfile) -> WorkloadProfile:
    return parse_profile_md(render_profile_md(profile))


ROUND_TRIPS = pytest.mark.parametrize(
    "round_trip", [_same, _json, _markdown], ids=["profiled", "json", "markdown"]
)


def _select(profile: WorkloadProfile) -> list[Shortcut]:
    return [s for s in find_shortcuts(profile) if s.rule in ("select-all", "select-one")]


@pytest.mark.parametrize(
    ("signature", "op", "gather"),
    [
        ("gather", "aten::gather", True),
        ("gather", "aten::index_select.out", True),
        ("gather", "Model.take_along_dim", True),
        ("row_pick", "my_index_select", True),
        ("paged_gather", "paged_rows", True),
        ("topk", "aten::topk", False),
        # DeepSeek's top-k indexer: "index" in its name makes no gather.
        ("topk", "topk_indexer", False),
        # A class name says nothing about the op.
        ("topk", "Gatherer.topk", False),
        (None, "index_add", False),
    ],
)
def test_is_gather_reads_the_signature_and_the_op(
    signature: str | None, op: str, gather: bool
) -> None:
    assert is_gather(signature, op) is gather


def test_is_gather_refuses_what_is_no_name() -> None:
    with pytest.raises(InputError, match="op: Expected an op name"):
        is_gather("gather", None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="signature: Expected a signature name"):
        is_gather(1, "gather")  # type: ignore[arg-type]


@ROUND_TRIPS
def test_topk_indexer_is_a_top_k(round_trip: Callable[[WorkloadProfile], WorkloadProfile]) -> None:
    # topk_indexer has the built-in topk signature; its name has "index" but no "gather".
    calls = [
        Call(
            op="topk_indexer",
            args=(
                TensorArg(name="x", shape=(16, 4), dtype="float16"),
                ScalarArg(name="k", value=4),
            ),
        ),
        Call(
            op="topk_indexer",
            args=(
                TensorArg(name="x", shape=(16, 64), dtype="float16"),
                ScalarArg(name="k", value=1),
            ),
        ),
    ]
    profile = round_trip(profile_calls(calls))
    op = profile.op("topk_indexer")
    assert op is not None and op.signature == "topk"
    assert op.axis("k_ge_n") is not None and op.axis("k_eq_n") is None
    found = {s.rule: s for s in _select(profile)}
    assert set(found) == {"select-all", "select-one"}
    assert found["select-all"].message.startswith("top-k with k >= n")
    assert ">=" in (found["select-all"].guard or "")


def _register_row_pick() -> None:
    """A signature whose name has no "gather", for an op named as an index select."""
    register_signature(
        OpSignature(
            name="row_pick",
            ops=("my_index_select",),
            tensors={"x": ("n", "d"), "index": ("k",)},
            select=("k", "n"),
        )
    )


def _pick(k: int, n: int) -> Call:
    """A call of the index select picking ``k`` of ``n`` rows."""
    return Call(
        op="my_index_select",
        args=(
            TensorArg(name="x", shape=(n, 8), dtype="float16"),
            TensorArg(name="index", shape=(k,), dtype="int64"),
        ),
    )


@ROUND_TRIPS
def test_index_select_of_a_user_signature_is_a_gather(
    round_trip: Callable[[WorkloadProfile], WorkloadProfile],
) -> None:
    _register_row_pick()

    profile = round_trip(profile_calls([_pick(32, 32)] * 3 + [_pick(1, 32)]))
    op = profile.op("my_index_select")
    assert op is not None and op.signature == "row_pick"
    assert op.axis("k_eq_n") is not None
    # k = 1 of a gather is no argmax: no select-one.
    (found,) = _select(profile)
    assert found.rule == "select-all"
    assert found.message.startswith("gather with k == n")
    assert (found.guard or "").endswith("== arange(n)")


@ROUND_TRIPS
def test_longer_index_of_a_gather_selects_nothing(
    round_trip: Callable[[WorkloadProfile], WorkloadProfile],
) -> None:
    # k > n repeats rows: a top-k reading (k >= n) would call it a copy of the input.
    _register_row_pick()
    assert _select(round_trip(profile_calls([_pick(9, 4)]))) == []
