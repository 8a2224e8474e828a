"""A user's own attention kernel, recorded under its own name, read as attention.

A causal prefill recorded as ``attention`` (or ``attn_fwd``, ``flash_attention``...) gets
the built-in ``attention`` signature (SDPA layout ``[b, h, s, d]``), as a user's ``gemm``
op gets ``gemm``'s; its query and key lengths are read under the names FlashAttention,
FlashInfer and vLLM give them; and a length parameter left at its default is no typo for
the Recorder to warn about.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import torch

from kernelopt.workload import (
    Call,
    Recorder,
    RecorderWarning,
    TensorArg,
    ValuesSummary,
    find_shortcuts,
    find_signature,
    profile_calls,
    profile_trace,
    shape_facts,
    signatures,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "workload.md"


def _qkv(b: int, h: int, s_q: int, s_kv: int, d: int = 64) -> tuple[TensorArg, ...]:
    """q ``[b, h, s_q, d]``, k and v ``[b, h, s_kv, d]`` in SDPA layout."""
    return (
        TensorArg(name="q", shape=(b, h, s_q, d), dtype="float16"),
        TensorArg(name="k", shape=(b, h, s_kv, d), dtype="float16"),
        TensorArg(name="v", shape=(b, h, s_kv, d), dtype="float16"),
    )


def _lengths(name: str, low: int, high: int, mean: float) -> TensorArg:
    """A ``[3]`` lengths tensor with a values summary."""
    summary = ValuesSummary(min=low, max=high, mean=mean)
    return TensorArg(name=name, shape=(3,), dtype="int32", values=summary)


@pytest.mark.parametrize(
    "op",
    [
        "attention",
        "flash_attention",
        "attn_fwd",
        "_attn_fwd",
        "causal_attention",
        "prefill_attention",
        "attention_fwd",
        "self_attn",
        "Model.attention",
    ],
)
def test_a_users_attention_op_gets_the_attention_signature(op: str) -> None:
    profile = profile_calls([Call(op=op, args=_qkv(2, 2, 1, 1))] * 4)
    axes = [axis.name for axis in profile.op().axes]
    assert axes[:4] == ["b", "h_q", "s_q", "d_qk"]
    facts = shape_facts(profile)
    assert facts["s_q"] == 1
    assert facts["seqlen_k"] == 1
    rules = {shortcut.rule for shortcut in find_shortcuts(profile)}
    assert "single-key-attention" in rules


def test_an_op_recorded_as_attention_reads_s_q_and_s_kv(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, append=False)

    @recorder(op="attention")
    def attention(q: object, k: object, v: object) -> None:
        del q, k, v

    with recorder:
        for _ in range(4):
            attention(*(torch.zeros(2, 2, 1, 64) for _ in range(3)))
    facts = shape_facts(profile_trace(path))
    assert (facts["s_q"], facts["seqlen_k"], facts["b"], facts["h_q"]) == (1, 1, 2, 2)


@pytest.mark.parametrize(
    ("op", "signature"),
    [
        ("flash_attn_func", "flash_attn"),
        ("flash_attn", "flash_attn"),
        ("mla_decode", "mla_decode"),
        ("flash_mla_with_kvcache", "mla_decode"),
        ("sdpa", "attention"),
        ("aten::scaled_dot_product_attention", "attention"),
    ],
)
def test_names_with_a_signature_of_their_own_keep_it(op: str, signature: str) -> None:
    found = find_signature(op)
    assert found is not None
    assert found.name == signature


@pytest.mark.parametrize(
    "op", ["attention_mask_builder", "attention_mask", "build_attention_bias", "attention_backward"]
)
def test_names_that_run_no_attention_forward_get_no_signature(op: str) -> None:
    assert find_signature(op) is None


def test_the_unknown_op_note_names_the_builtin_op_names() -> None:
    call = Call(op="row_softmax", args=(TensorArg(name="x", shape=(8, 1), dtype="float32"),))
    (note,) = profile_calls([call]).notes
    for name in ("attention", "flash_attn", "mla_decode", "softmax", "gemm", "layer_norm"):
        assert re.search(rf"\b{name}\b", note), name
    assert "docs/workload.md" in note


def test_each_builtin_op_name_gets_its_signature() -> None:
    names = signatures.builtin_op_names()
    assert "attention" in names
    for name in names:
        found = find_signature(name)
        assert found is not None
        assert name in found.ops


def test_the_docs_name_sdpa_and_quote_the_note_as_given() -> None:
    text = " ".join(DOCS.read_text(encoding="utf-8").split())
    call = Call(op="row_softmax", args=(TensorArg(name="x", shape=(8, 1), dtype="float32"),))
    (note,) = profile_calls([call]).notes
    assert f"`{note}`" in text
    assert "`sdpa`" in text
    for name in ("seqlens_q", "cu_seqlens_q", "q_lens", "seqlens_k", "cu_seqlens_k"):
        assert f"`{name}`" in text, name


@pytest.mark.parametrize("name", ["seqlens_q", "q_lens", "query_lens", "seqused_q"])
def test_query_lengths_are_read_under_their_common_names(name: str) -> None:
    call = Call(op="attention", args=(*_qkv(3, 2, 24, 24), _lengths(name, 3, 24, 12.0)))
    op = profile_calls([call]).op()
    q_len = op.axis("q_len")
    assert q_len is not None
    assert q_len.max == 24
    fill = op.axis("s_q_fill")
    assert fill is not None
    assert fill.mean == pytest.approx(0.5)
    padded = [s for s in find_shortcuts(profile_calls([call])) if s.rule == "bucket-padding"]
    assert [s.axis for s in padded] == ["s_q"]


@pytest.mark.parametrize(
    "name", ["kv_lens", "seqlens_k", "seq_lens", "seqused_k", "cache_seqlens", "kv_len"]
)
def test_key_lengths_are_read_under_their_common_names(name: str) -> None:
    call = Call(op="sdpa", args=(*_qkv(3, 2, 24, 24), _lengths(name, 3, 24, 12.0)))
    op = profile_calls([call]).op()
    kv_len = op.axis("kv_len")
    assert kv_len is not None
    assert kv_len.max == 24
    fill = op.axis("s_kv_fill")
    assert fill is not None
    assert fill.mean == pytest.approx(0.5)


def test_flash_attn_reads_query_lengths_too() -> None:
    q = TensorArg(name="q", shape=(3, 24, 2, 64), dtype="float16")
    k = TensorArg(name="k", shape=(3, 24, 2, 64), dtype="float16")
    v = TensorArg(name="v", shape=(3, 24, 2, 64), dtype="float16")
    call = Call(op="flash_attn_func", args=(q, k, v, _lengths("seqlens_q", 3, 24, 12.0)))
    fill = profile_calls([call]).op().axis("s_q_fill")
    assert fill is not None
    assert fill.mean == pytest.approx(0.5)


def test_cumulative_offsets_are_no_lengths_and_mark_a_packed_layout() -> None:
    # Offsets [0, 5, 29, 40]: their summary holds the total (40), no sequence's length.
    offsets = TensorArg(
        name="cu_seqlens_q",
        shape=(4,),
        dtype="int32",
        values=ValuesSummary(min=0, max=40, mean=18.5),
    )
    packed = TensorArg(name="q", shape=(40, 2, 64), dtype="float16")
    key = TensorArg(name="k", shape=(40, 2, 64), dtype="float16")
    # prefill_attention: the attention signature's name ([b, h, s, d]); varlen_attention
    # gets a signature of its own, for packed queries.
    profile = profile_calls([Call(op="prefill_attention", args=(packed, key, offsets))])
    names = [axis.name for axis in profile.op().axes]
    assert "h_q" not in names  # 40 tokens are no 40 heads
    assert "q_len" not in names
    assert names[:3] == ["q[0]", "q[1]", "q[2]"]
    packed_note, offsets_note = profile.notes
    assert "beside cu_seqlens_q (cumulative offsets) it is packed" in packed_note
    assert offsets_note.startswith("prefill_attention: the values of cu_seqlens_q are cumulative")


def test_an_unbatched_query_without_offsets_still_reads_from_the_right() -> None:
    q = TensorArg(name="q", shape=(2, 16, 64), dtype="float16")
    k = TensorArg(name="k", shape=(2, 16, 64), dtype="float16")
    profile = profile_calls([Call(op="attention", args=(q, k))])
    assert [axis.name for axis in profile.op().axes][:3] == ["h_q", "s_q", "d_qk"]
    assert profile.notes == ()


def _record_decode_loop(path: Path, values: tuple[str, ...]) -> list[warnings.WarningMessage]:
    """Record 3 calls of a function whose length parameters are left at None."""
    recorder = Recorder(path, values=values, append=False)

    @recorder(op="sdpa")
    def attention(
        q: object, k: object, v: object, seqlens_q: object = None, kv_lens: object = None
    ) -> None:
        del q, k, v, seqlens_q, kv_lens

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with recorder:
            for _ in range(3):
                attention(*(torch.zeros(2, 2, 1, 64) for _ in range(3)))
    return [w for w in caught if issubclass(w.category, RecorderWarning)]


def test_length_parameters_left_at_their_default_are_no_typo(tmp_path: Path) -> None:
    assert _record_decode_loop(tmp_path / "calls.jsonl", ("seqlens_q", "kv_lens")) == []


def test_a_misspelled_name_is_still_warned_beside_a_defaulted_one(tmp_path: Path) -> None:
    caught = _record_decode_loop(tmp_path / "calls.jsonl", ("kv_lens", "kv_len"))
    (warning,) = caught
    message = str(warning.message)
    assert "got kv_len, which no recorded call had" in message
    assert "kv_lens" not in message.split("got", 1)[1]


def test_a_name_only_variadic_keywords_could_take_is_still_warned(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "calls.jsonl", values=("kv_lens",), append=False)

    @recorder(op="sdpa")
    def attention(q: object, **kwargs: object) -> None:
        del q, kwargs

    with (
        pytest.warns(RecorderWarning, match="got kv_lens, which no recorded call had"),
        recorder,
    ):
        attention(torch.zeros(2, 2, 1, 64))
