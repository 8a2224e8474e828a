"""Two names of one length, and weights packed into a narrower integer type.

A call that passes both ``kv_lens`` and ``context_lens`` (a prefix prefill: the cached
tokens before the new chunk beside the key lengths) reads ``kv_len`` from the first of the
signature's names it passes; the other keeps its own name, so that no call counts twice in
an axis. A gemm whose B is ``uint8 [N, K/2]`` (two int4 weights a byte) is no plain
``[K, N]`` B: its axes keep their argument names, with a note asking for a signature.
"""

from __future__ import annotations

import pytest

from kernelopt.workload import (
    Call,
    ScalarArg,
    TensorArg,
    ValuesSummary,
    find_shortcuts,
    profile_calls,
    read_profile_md,
    render_profile_md,
)


def _lengths(name: str, low: int, high: int, mean: float, b: int) -> TensorArg:
    return TensorArg(
        name=name, shape=(b,), dtype="int32", values=ValuesSummary(min=low, max=high, mean=mean)
    )


def _prefix_prefill(step: int) -> Call:
    """A packed prefill call that passes the cached lengths and the key lengths."""
    b = 2 + step % 3
    return Call(
        op="paged_prefill_attention",
        args=(
            TensorArg(name="q", shape=(512 + b, 32, 128), dtype="float16"),
            TensorArg(name="cu_seqlens_q", shape=(b + 1,), dtype="int32"),
            _lengths("context_lens", 100 + step, 1000 + step, 500.0, b),
            _lengths("kv_lens", 101 + step, 1512 + step, 700.0, b),
            ScalarArg(name="max_q_len", value=512),
        ),
    )


def test_a_call_with_two_names_of_the_key_length_counts_once_in_kv_len() -> None:
    # Before: both summaries gave kv_len, 2 values per call, and profiling raised
    # "call_share: Expected a number in [0, 1], got 2.0".
    profile = profile_calls([_prefix_prefill(step) for step in range(12)])
    op = profile.op("paged_prefill_attention")
    kv_len = op.axis("kv_len")
    assert sum(v.calls for v in kv_len.values) <= op.calls
    assert kv_len.source == "kv_lens.max()"
    assert op.axis("context_lens.max").source == "context_lens.max()"
    assert any(
        "kv_len is read from kv_lens" in note and "context_lens keeps its own name" in note
        for note in profile.notes
    )
    read = read_profile_md(render_profile_md(profile)).op("paged_prefill_attention")
    assert read.axis("kv_len").source == "kv_lens.max()"


def test_context_lens_alone_still_gives_kv_len() -> None:
    call = _prefix_prefill(0)
    alone = Call(op=call.op, args=tuple(a for a in call.args if a.name != "kv_lens"))
    profile = profile_calls([alone])
    assert profile.op("paged_prefill_attention").axis("kv_len").source == "context_lens.max()"
    assert not any("is read from" in note for note in profile.notes)


def _w4a16(m: int, k: int, n: int) -> Call:
    """A W4A16 call: x ``float16 [m, k]``, b ``uint8 [n, k / 2]`` (two int4 weights a byte)."""
    return Call(
        op="gemm_w4a16",
        args=(
            TensorArg(name="x", shape=(m, k), dtype="float16"),
            TensorArg(name="b", shape=(n, k // 2), dtype="uint8"),
            TensorArg(name="scales", shape=(n, k // 128), dtype="float16"),
        ),
    )


def test_a_packed_int4_b_is_not_read_as_a_plain_gemm_and_batch_1_is_one_finding() -> None:
    # Square calls ([4096, 2048] uint8 beside x [1, 4096]) were read as m=1 n=2048
    # k=4096, the others fell back to x[0]: batch 1 split into 4/7 and 3/7 of its calls,
    # both under the line, and no finding.
    layer = [(4096, 4096)] * 4 + [(4096, 11008)] * 2 + [(11008, 4096)]
    calls = [_w4a16(m, k, n) for m in (1, 1, 1, 1, 8, 8) for k, n in layer]
    profile = profile_calls(calls)
    op = profile.op("gemm_w4a16")
    assert op.axis("m") is None and op.axis("n") is None
    assert op.axis("x[0]").size1_share == pytest.approx(4 / 6)
    notes = [note for note in profile.notes if "likely packed" in note]
    assert len(notes) == 1
    assert "B (b) is uint8 beside A (x) float16" in notes[0]
    assert "register a signature" in notes[0]
    (found,) = [s for s in find_shortcuts(profile) if s.rule == "size1-axis"]
    assert found.axis == "x[0]" and found.guard == "x.shape[0] == 1"


@pytest.mark.parametrize(
    ("a", "b"), [("float16", "float16"), ("int8", "int8"), ("float8_e4m3fn", "float8_e4m3fn")]
)
def test_a_b_of_as_wide_elements_as_a_is_still_read_as_a_gemm(a: str, b: str) -> None:
    call = Call(
        op="gemm",
        args=(
            TensorArg(name="a", shape=(1, 64), dtype=a),
            TensorArg(name="b", shape=(64, 32), dtype=b),
        ),
    )
    profile = profile_calls([call])
    assert profile.op("gemm").axis("n").values[0].value == 32
    assert not profile.notes


def _my_gemm(m: int, k_b: int) -> Call:
    """x ``[m, 64]`` and b ``[k_b, 64]``: the gemm signature fits where k_b is 64."""
    return Call(
        op="my_gemm",
        args=(
            TensorArg(name="x", shape=(m, 64), dtype="float16"),
            TensorArg(name="b", shape=(k_b, 64), dtype="float16"),
        ),
    )


def test_one_dim_read_under_two_names_gives_one_size1_finding() -> None:
    # The gemm signature fits the calls whose k agree (m from x.shape[0]); the others keep
    # x[0]: batch 1 is 3 + 3 of 10 calls, each name under the 50% line alone.
    profile = profile_calls([_my_gemm(1, 64)] * 3 + [_my_gemm(1, 32)] * 3 + [_my_gemm(8, 64)] * 4)
    op = profile.op("my_gemm")
    assert op.axis("m").size1_share == pytest.approx(0.3)
    assert op.axis("x[0]").size1_share == pytest.approx(0.3)
    (found,) = [s for s in find_shortcuts(profile) if s.rule == "size1-axis"]
    assert found.call_share == pytest.approx(0.6)
    assert found.guard == "x.shape[0] == 1"
    assert found.message.startswith("m = 1 in 60.0% of calls (x.shape[0], named x[0] in some")


def test_the_merged_finding_keeps_the_signatures_name_when_raw_calls_are_more() -> None:
    # Batch 1 read 2 times as m (the signature fitted) and 4 times as x[0]: the finding is
    # still named m, with the signature's hint, whichever name counts more calls.
    profile = profile_calls([_my_gemm(1, 64)] * 2 + [_my_gemm(1, 32)] * 4 + [_my_gemm(8, 64)] * 4)
    op = profile.op("my_gemm")
    assert op.axis("x[0]").size1_share > op.axis("m").size1_share
    (found,) = [s for s in find_shortcuts(profile) if s.rule == "size1-axis"]
    assert found.axis == "m"
    assert found.message.startswith("m = 1 in 60.0% of calls (x.shape[0], named x[0] in some")
    hint = op.hint("m")
    assert hint is not None and hint in found.message
