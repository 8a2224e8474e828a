"""A source that holds ``"; "`` itself stays one source, written and read back.

An axis that calls read from different arguments names each source, joined by ``"; "``.
An argument name may hold ``"; "`` too (a trace's keys are free text), so a source built
from it is written with the separator escaped (``a\\; b.shape[0]``) and reads back whole,
from the profile, its markdown and its JSON alike; a source without ``"; "`` is written as
it is.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from kernelopt.workload import (
    AxisStat,
    Call,
    OpProfile,
    OpSignature,
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
from kernelopt.workload.handwritten import read_handwritten_md
from kernelopt.workload.profile import _join_sources, _split_sources

ODD = "a; b"


def _read_backs(profile: WorkloadProfile) -> list[WorkloadProfile]:
    return [
        profile_from_json(profile_to_json(profile)),
        read_profile_md(render_profile_md(profile)),
    ]


def test_an_argument_named_with_the_separator_gives_one_source(tmp_path: Path) -> None:
    # An op of no signature: its axes are named after the argument, read from its shape.
    record = {"op": "scale", "args": {ODD: {"shape": [1, 8], "dtype": "float32"}}}
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(record) + "\n")
    profile = profile_calls(read_jsonl(path))

    for each in [profile, *_read_backs(profile)]:
        assert each == profile
        axis = each.op("scale").axis(f"{ODD}[0]")
        assert axis is not None
        assert axis.sources == (f"{ODD}.shape[0]",)
        assert axis.source == "a\\; b.shape[0]"
        guards = {s.rule: s.guard for s in find_shortcuts(each)}
        assert guards["size1-axis"] == f"{ODD}.shape[0] == 1"


def test_an_alias_with_the_separator_is_one_of_two_sources() -> None:
    # A signature that reads x under a second name, one that holds "; ".
    sig = OpSignature(
        name="scale_sig", ops=("scale",), tensors={"x": ("b", "n")}, aliases={"x": (ODD,)}
    )
    calls = [
        *[Call(op="scale", args=(TensorArg(name=ODD, shape=(4, 8), dtype="float32"),))] * 3,
        *[Call(op="scale", args=(TensorArg(name="x", shape=(2, 8), dtype="float32"),))] * 2,
    ]
    profile = profile_calls(calls, signatures=[sig])

    for each in [profile, *_read_backs(profile)]:
        assert each == profile
        axis = each.op("scale").axis("b")
        assert axis is not None
        assert axis.sources == (f"{ODD}.shape[0]", "x.shape[0]")
    assert "| b | shape | a\\\\; b.shape[0]; x.shape[0] |" in render_profile_md(profile)


def test_a_hand_written_source_with_an_escaped_separator_reads_as_one() -> None:
    axis = AxisStat(name="b", source="q.shape[0]; a\\; b.shape[0]", min=1, max=4)
    profile = WorkloadProfile(
        source="hand", format="jsonl", ops=(OpProfile(op="scale", calls=4, axes=(axis,)),)
    )

    for each in _read_backs(profile):
        assert each == profile
        assert each.op("scale").axis("b").sources == ("q.shape[0]", f"{ODD}.shape[0]")  # type: ignore[union-attr]
    # Read tolerantly, as a hand edit of kernelopt's layout would be.
    tolerant = read_handwritten_md(render_profile_md(profile), kernelopt_layout=True)
    assert tolerant.op("scale").axis("b").sources == ("q.shape[0]", f"{ODD}.shape[0]")  # type: ignore[union-attr]


@pytest.mark.parametrize("source", ["x.shape[0]", "cache_seqlens.max()", "a;b", "a\\b", "a ;b"])
def test_a_source_without_the_separator_is_written_as_it_is(source: str) -> None:
    assert _join_sources([source]) == source
    assert AxisStat(name="b", source=source).sources == (source,)


def test_joining_then_splitting_gives_back_every_source() -> None:
    # Every source of up to three of the characters an escape is made of, alone and in
    # pairs: a backslash before the separator, ending a source, or before another.
    alphabet = ["a", ";", " ", "\\"]
    texts = [
        "".join(chars)
        for size in range(1, 4)
        for chars in itertools.product(alphabet, repeat=size)
        if "".join(chars).strip()
    ]
    for parts in itertools.chain(([text] for text in texts), itertools.product(texts, repeat=2)):
        joined = _join_sources(list(parts))
        assert _split_sources(joined) == tuple(parts), (parts, joined)
