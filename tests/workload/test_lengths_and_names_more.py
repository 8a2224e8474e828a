"""Lengths tensors named by the argument a signature reads, query lengths that are all equal,
and MLA op names that never get SDPA's layout."""

from __future__ import annotations

import pytest

from kernelopt.workload import (
    UNIFORM_LENGTH_FAST_PATH,
    Call,
    OpSignature,
    Shortcut,
    TensorArg,
    ValuesSummary,
    find_shortcuts,
    find_signature,
    profile_calls,
    register_signature,
    shape_facts,
)
from kernelopt.workload.handwritten import read_handwritten_md

_BUCKETS = (64, 128, 256, 512)


def _t(name: str, *shape: int, values: ValuesSummary | None = None) -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype="float16", values=values)


def _lens(
    name: str, batch: int, low: int, high: int, mean: float, std: float | None = None
) -> TensorArg:
    summary = ValuesSummary(min=low, max=high, mean=mean, std=std)
    return TensorArg(name=name, shape=(batch,), dtype="int32", values=summary)


def _rule(found: list[Shortcut], rule: str) -> dict[str | None, Shortcut]:
    return {s.axis: s for s in found if s.rule == rule}


def _bucketed_sdpa(*extra: TensorArg) -> list[Call]:
    """SDPA calls whose query and key lengths sit on a power-of-two bucket grid
    (q, k, v ``[2, 8, s, 64]``), with no values summary of real lengths."""
    return [
        Call(
            op="sdpa",
            args=(_t("q", 2, 8, s, 64), _t("k", 2, 8, s, 64), _t("v", 2, 8, s, 64), *extra),
        )
        for s in _BUCKETS
        for _ in range(2)
    ]


def test_the_padding_estimate_names_the_lengths_tensor_the_signature_reads() -> None:
    found = _rule(find_shortcuts(profile_calls(_bucketed_sdpa())), "bucket-padding")
    assert "record the kv_lens values (values=['kv_lens'])" in found["s_kv"].message
    assert "record the seqlens_q values (values=['seqlens_q'])" in found["s_q"].message
    for item in found.values():
        assert "record kv values" not in item.message
        assert "record q values" not in item.message


def test_the_padding_estimate_names_the_lengths_tensor_as_the_calls_passed_it() -> None:
    # The calls pass their query lengths, without a values summary, as seqused_q.
    calls = _bucketed_sdpa(_t("seqused_q", 2), _t("seqused_k", 2))
    found = _rule(find_shortcuts(profile_calls(calls)), "bucket-padding")
    assert "record the seqused_q values (values=['seqused_q'])" in found["s_q"].message
    assert "record the seqused_k values (values=['seqused_k'])" in found["s_kv"].message


def test_the_padding_estimate_of_a_softmax_names_its_lengths_tensor() -> None:
    calls = [Call(op="softmax", args=(_t("x", 4, n),)) for n in _BUCKETS for _ in range(2)]
    (item,) = _rule(find_shortcuts(profile_calls(calls)), "bucket-padding").values()
    assert "record the lengths values (values=['lengths'])" in item.message


def _varlen_prefill(q_lens: tuple[int, int, float]) -> Call:
    """An SDPA prefill of 4 sequences padded to 128 queries and 512 keys, with ragged key
    lengths and query lengths ``(min, max, mean)``."""
    return Call(
        op="attention",
        args=(
            _t("q", 4, 8, 128, 64),
            _t("k", 4, 8, 512, 64),
            _t("v", 4, 8, 512, 64),
            _lens("seqlens_q", 4, *q_lens),
            _lens("kv_lens", 4, 100, 500, 300.0, std=150.0),
        ),
    )


def test_equal_query_lengths_of_a_varlen_prefill_give_a_uniform_lengths_finding() -> None:
    op = profile_calls([_varlen_prefill((100, 100, 100.0))] * 4).op()
    found = _rule(find_shortcuts(op), "uniform-lengths")
    assert set(found) == {"q_len"}  # the key lengths are ragged
    item = found["q_len"]
    assert item.guard == "seqlens_q.min() == seqlens_q.max()"
    assert item.call_share == 1.0
    assert "the same q_len in 100% of calls; every call has q_len = 100" in item.message
    assert item.catalog_ids == (UNIFORM_LENGTH_FAST_PATH,)


def test_ragged_query_lengths_give_no_uniform_lengths_finding() -> None:
    op = profile_calls([_varlen_prefill((60, 128, 100.0))] * 4).op()
    assert _rule(find_shortcuts(op), "uniform-lengths") == {}


def test_equal_key_and_query_lengths_give_one_finding_each() -> None:
    call = Call(
        op="attention",
        args=(
            _t("q", 4, 8, 128, 64),
            _t("k", 4, 8, 512, 64),
            _t("v", 4, 8, 512, 64),
            _lens("seqlens_q", 4, 100, 100, 100.0),
            _lens("kv_lens", 4, 400, 400, 400.0),
        ),
    )
    found = _rule(find_shortcuts(profile_calls([call] * 4).op()), "uniform-lengths")
    assert found["kv_len"].guard == "kv_lens.min() == kv_lens.max()"
    assert found["q_len"].guard == "seqlens_q.min() == seqlens_q.max()"


def test_seqlen_cv_stays_the_spread_of_the_key_lengths() -> None:
    # Equal query lengths beside ragged key lengths: the fact is the keys' spread, not 0.
    facts = shape_facts(profile_calls([_varlen_prefill((100, 100, 100.0))] * 4).op())
    assert facts["seqlen_cv"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    "op",
    [
        "mla_decode_attention",
        "mla_decode_attn",
        "paged_mla_decode_attn_fwd",
        "decode_mla_attention",
        "Attention.mla_decode_attention",
        "vllm::mla_decode_attention",
    ],
)
def test_an_mla_decode_attention_of_ones_own_gets_the_mla_decode_signature(op: str) -> None:
    found = find_signature(op)
    assert found is not None
    assert found.name == "mla_decode"


@pytest.mark.parametrize(
    "op",
    [
        "mla_attention",
        "mla_prefill_attention",
        "flash_mla_attn",
        "_mla_attn_fwd",
        "my_mla_attention",
    ],
)
def test_other_mla_names_get_no_signature_rather_than_sdpa(op: str) -> None:
    assert find_signature(op) is None


@pytest.mark.parametrize("op", ["causal_attention", "Mla.attention", "mlp_attention", "attn_fwd"])
def test_names_without_mla_as_a_word_part_keep_the_attention_signature(op: str) -> None:
    found = find_signature(op)
    assert found is not None
    assert found.name == "attention"


def test_an_mla_decode_attention_call_is_read_with_the_mla_layout() -> None:
    call = Call(
        op="mla_decode_attention",
        args=(
            _t("q", 32, 1, 16, 576),
            _t("kv_cache", 1024, 64, 1, 576),
            TensorArg(name="block_table", shape=(32, 16), dtype="int32"),
            _lens("cache_seqlens", 32, 100, 900, 500.0),
        ),
    )
    op = profile_calls([call]).op()
    assert op.signature == "mla_decode"
    for axis, size in (("b", 32), ("s_q", 1), ("h_q", 16), ("d_qk", 576), ("seqlen", 900)):
        stat = op.axis(axis)
        assert stat is not None, axis
        assert stat.max == size, axis


def test_a_signature_of_ones_own_for_an_mla_name_is_tried_first() -> None:
    register_signature(
        OpSignature(
            name="my_mla_prefill",
            ops=("mla_prefill_attention",),
            family="attention",
            tensors={"q": ("tokens", "h_q", "d_qk")},
        )
    )
    found = find_signature("mla_prefill_attention")
    assert found is not None
    assert found.name == "my_mla_prefill"


def test_excludes_refuse_a_name_the_ops_match() -> None:
    sig = OpSignature(name="mine", ops=("*_attention",), excludes=("*_mla_*", "mla_*"))
    assert sig.matches("causal_attention")
    assert not sig.matches("mla_attention")
    assert not sig.matches("aten::flash_mla_attention")


def _handwritten(name: str) -> str | None:
    text = f"# Workload profile: {name}\n\n| b | s_q | Count |\n|---|---|---|\n| 32 | 1 | 100 |\n"
    (op,) = read_handwritten_md(text).ops
    return op.signature


def test_a_handwritten_profile_names_mla_ops_as_find_signature_does() -> None:
    assert _handwritten("MLA decode attention") == "mla_decode"
    assert _handwritten("MLA prefill attention") is None
    assert _handwritten("causal attention") == "attention"
