"""Tensors recorded with fewer dims than their signature declares: named only as declared.

A vLLM-style MLA query is ``[tokens, h, d]`` (the tokens of every sequence packed), recorded
beside a 4-D ``kv_cache``. Read from the right against ``q: (b, s_q, h_q, d_qk)`` it would
claim ``s_q = tokens``, and a size-1 or dominant-shape finding on a query length the trace
never holds.
"""

from __future__ import annotations

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import (
    Call,
    OpSignature,
    TensorArg,
    find_shortcuts,
    find_signature,
    profile_calls,
    register_signature,
    shape_facts,
)
from kernelopt.workload.calls import ValuesSummary
from kernelopt.workload.signatures import extract_axes


def _tensor(name: str, *shape: int, values: ValuesSummary | None = None) -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype="bfloat16", values=values)


def _packed_decode(tokens: int) -> Call:
    """An MLA decode call with a packed query ``q: [tokens, 16, 576]`` of 32 sequences."""
    return Call(
        op="mla_decode",
        args=(
            _tensor("q", tokens, 16, 576),
            _tensor("kv_cache", 64, 64, 1, 576),
            _tensor("block_table", 32, 8),
            _tensor("cache_seqlens", 32, values=ValuesSummary(min=900, max=1000, mean=950)),
        ),
    )


def test_packed_query_is_no_query_length() -> None:
    axes, problem = extract_axes(_packed_decode(32), find_signature("mla_decode"))
    named = {a.name: (a.value, a.source) for a in axes}
    assert "s_q" not in named and "h_q" not in named and "d_qk" not in named
    assert named["q[0]"] == (32, "q.shape[0]")
    assert named["q[1]"] == (16, "q.shape[1]")
    # The tensors of the declared rank keep their names.
    assert named["b"] == (32, "block_table.shape[0]")
    assert named["page"] == (64, "kv_cache.shape[1]")
    assert named["seqlen"] == (1000, "cache_seqlens.max()")
    assert problem is not None
    assert "Expected q with 4 dims (b, s_q, h_q, d_qk), got 3" in problem
    assert "q[0], q[1], q[2]" in problem


def test_profile_notes_the_layout_once_and_claims_no_query_length() -> None:
    # One token per sequence in most calls: read from the right, s_q would be 32 or 64,
    # and with tokens = 1 a plain-decode size-1 finding on s_q.
    calls = [_packed_decode(1) for _ in range(8)] + [_packed_decode(t) for t in (32, 64, 96)]
    profile = profile_calls(calls)
    op = profile.op()
    assert op.axis("s_q") is None
    assert op.axis("q[0]") is not None and op.axis("q[0]").size1_share == pytest.approx(8 / 11)
    notes = [n for n in profile.notes if "Expected q with 4 dims" in n]
    assert len(notes) == 1, profile.notes  # one note per layout, not one per shape
    assert notes[0].startswith("mla_decode: signature mla_decode: ")
    assert "s_q" not in shape_facts(profile)
    guards = [s.guard for s in find_shortcuts(profile)]
    assert not any("q.shape[1]" in guard for guard in guards)
    assert any("q.shape[0] == 1" in guard for guard in guards)


def test_declared_layout_names_the_packed_query() -> None:
    register_signature(
        OpSignature(
            name="packed_mla_decode",
            ops=("mla_decode",),
            family="mla-decode",
            tensors={
                "q": ("tokens", "h_q", "d_qk"),
                "kv_cache": ("num_blocks", "page", "h_kv", "d"),
                "block_table": ("b", "max_blocks"),
                "cache_seqlens": ("b",),
            },
            values={"cache_seqlens": "seqlen"},
        )
    )
    profile = profile_calls([_packed_decode(32)])
    op = profile.op()
    assert op.signature == "packed_mla_decode"
    assert (op.axis("tokens").source, op.axis("tokens").max) == ("q.shape[0]", 32)
    assert op.axis("h_q").max == 16
    assert profile.notes == ()


def test_align_right_is_what_a_signature_declares() -> None:
    call = Call(op="my_attn", args=(_tensor("q", 8, 1, 64),))
    declared = OpSignature(
        name="my_attn", ops=("my_attn",), tensors={"q": ("b", "h", "s", "d")}, align_right=True
    )
    axes, problem = extract_axes(call, declared)
    assert problem is None
    assert {a.name: a.value for a in axes} == {"h": 8, "s": 1, "d": 64}
    plain = OpSignature(name="my_attn", ops=("my_attn",), tensors={"q": ("b", "h", "s", "d")})
    axes, problem = extract_axes(call, plain)
    assert problem is not None and "Expected q with 4 dims (b, h, s, d), got 3" in problem
    assert [a.name for a in axes] == ["q[0]", "q[1]", "q[2]"]


def test_sdpa_keeps_reading_leading_dims_as_left_out() -> None:
    # torch's SDPA takes (N, ..., L, E): its signature declares right alignment.
    call = Call(op="sdpa", args=(_tensor("query", 4, 1, 8), _tensor("key", 4, 16, 8)))
    axes, problem = extract_axes(call, find_signature("sdpa"))
    assert problem is None
    assert {a.name: a.value for a in axes} == {"h_q": 4, "s_q": 1, "d_qk": 8, "h_kv": 4, "s_kv": 16}


def test_align_right_must_be_a_bool() -> None:
    with pytest.raises(InputError, match="Expected True or False"):
        OpSignature(name="x", ops=("x",), align_right="yes")  # type: ignore[arg-type]
