"""Norms fused with a quantization, the inspect report's signature and size-1 columns, and
the built-in signature of packed varlen attention."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.workload import (
    Call,
    ScalarArg,
    TensorArg,
    ValuesSummary,
    find_shortcuts,
    find_signature,
    profile_calls,
    shape_facts,
)


@pytest.mark.parametrize(
    "op",
    [
        "fused_add_layer_norm_fp8",
        "rms_norm_static_fp8_quant",
        "fused_add_rms_norm_static_fp8_quant",
        "rms_norm_dynamic_per_token_quant",
        "rms_norm_fwd_int8",
        "layernorm_quant",
    ],
)
def test_a_norm_fused_with_a_quantization_is_a_normalization(op: str) -> None:
    sig = find_signature(op)
    assert sig is not None and sig.name == "normalization"


@pytest.mark.parametrize(
    ("op", "name"),
    [
        ("layer_norm_fp8_bwd", "normalization_backward"),
        ("layer_norm_stats", None),
        ("rms_norm_weight_grad", None),
        ("layer_norm_fp8x", None),
    ],
)
def test_other_words_after_a_norm_name_are_not_read_as_one(op: str, name: str | None) -> None:
    sig = find_signature(op)
    assert (None if sig is None else sig.name) == name


def _trace(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_inspect_names_a_signature_of_its_familys_name_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = {"shape": [1, 4096], "dtype": "float16"}
    trace = _trace(tmp_path, [{"op": "fused_add_layer_norm_fp8", "args": {"x": x}}])
    cli.main(["inspect", str(trace)])
    out = capsys.readouterr().out
    assert "op fused_add_layer_norm_fp8 [normalization]: 1 call" in out
    assert "[normalization, normalization]" not in out


def test_the_size1_column_leaves_out_value_statistics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    top_p = {
        "shape": [4],
        "dtype": "float32",
        "values": {"min": 0.9, "max": 1.0, "mean": 0.95, "std": 0.05},
    }
    logits = {"shape": [4, 1000], "dtype": "float16"}
    trace = _trace(tmp_path, [{"op": "top_p_sampling", "args": {"logits": logits, "top_p": top_p}}])
    cli.main(["inspect", str(trace)])
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines() if line}
    # Before: top_p.max showed 100% in the size-1 column, a value of 1.0 read as a size.
    assert rows["top_p.max"][-1] == "-"
    assert rows["top_p.uniform"][-1] == "-"


def _varlen(step: int) -> Call:
    """A chunked prefill of one 512-token chunk and 8 decodes over a paged cache."""
    lens = ValuesSummary(min=1, max=512, mean=(512 + 8) / 9, std=160.0)
    kv = ValuesSummary(min=300 + step, max=2000, mean=1200.0, std=500.0)
    return Call(
        op="paged_prefill_attention",
        args=(
            TensorArg(name="q", shape=(520, 32, 128), dtype="float16"),
            TensorArg(name="k_cache", shape=(4096, 16, 8, 128), dtype="float16"),
            TensorArg(name="v_cache", shape=(4096, 16, 8, 128), dtype="float16"),
            TensorArg(name="block_table", shape=(9, 128 + step), dtype="int32"),
            TensorArg(name="cu_seqlens_q", shape=(10,), dtype="int32"),
            TensorArg(name="seqlens_q", shape=(9,), dtype="int32", values=lens),
            TensorArg(name="kv_lens", shape=(9,), dtype="int32", values=kv),
            ScalarArg(name="max_seqlen_q", value=512),
        ),
    )


def test_packed_varlen_attention_has_a_built_in_signature() -> None:
    profile = profile_calls([_varlen(step) for step in range(4)])
    op = profile.op()
    # Before: the attention signature read no axis of it (q [tokens, h, d] is no
    # [b, h, s, d]), and the profile noted "register a signature naming its 3 dims".
    assert op.signature == "varlen_attention"
    assert not profile.notes
    names = [axis.name for axis in op.axes]
    for name in ("tokens", "h_q", "d_qk", "pages", "page", "h_kv", "b", "q_len", "kv_len"):
        assert name in names, name
    facts = shape_facts(profile)
    assert facts["b"] == 9 and facts["h_q"] == 32 and facts["h_kv"] == 8
    assert facts["s_q"] == 512 and facts["seqlen_k"] == 2000
    assert facts["seqlen_cv"] == pytest.approx(500 / 1200, abs=1e-3)
    assert facts["padding_pct"] == pytest.approx(100 * (1 - (520 / 9) / 512), abs=0.1)
    assert "bucket-padding" in {s.rule for s in find_shortcuts(profile)}


@pytest.mark.parametrize(
    "op",
    [
        "flash_attn_varlen_func",
        "varlen_attention",
        "my_varlen_attn_fwd",
        "chunked_prefill_attention",
    ],
)
def test_varlen_names_get_the_varlen_signature(op: str) -> None:
    sig = find_signature(op)
    assert sig is not None and sig.name == "varlen_attention"
    assert find_signature("mla_varlen_attention") is None or (
        find_signature("mla_varlen_attention").name != "varlen_attention"  # type: ignore[union-attr]
    )
