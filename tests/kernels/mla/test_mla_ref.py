"""The float64 reference: known answers and an independent dense formulation."""

from __future__ import annotations

import math

import pytest
import torch
from mla_testing import make_inputs, seed_of

from kernelopt import InputError
from kernelopt.kernels.mla import mla_decode_ref
from kernelopt.kernels.mla.ref import gather_kv


def _dense(q, kv_rows, seqlen, scale, causal):
    # Same function written differently: matmul on [s_q*h_q, 576] and torch.softmax.
    s_q, h_q, _ = q.shape
    scores = (q.double().reshape(s_q * h_q, -1) @ kv_rows.double().T) * scale
    if causal:
        tok = torch.arange(s_q).repeat_interleave(h_q)
        keys = torch.arange(seqlen)
        scores[keys[None, :] >= (seqlen - s_q + tok + 1)[:, None]] = -math.inf
    probs = torch.softmax(scores, dim=-1)
    out = (probs @ kv_rows.double()[:, :512]).reshape(s_q, h_q, 512)
    lse = torch.logsumexp(scores, dim=-1).reshape(s_q, h_q).T
    return out, lse


@pytest.mark.parametrize("causal", [True, False])
def test_ref_matches_dense_formulation(request: pytest.FixtureRequest, causal: bool) -> None:
    s_q = 3 if causal else 1
    seqlens = [s_q, 17, 40]
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=2, page=4, dtype=torch.float32, seed=seed_of(request)
    )
    out, lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=0.1, causal=causal)
    for b, n in enumerate(seqlens):
        d_out, d_lse = _dense(q[b], gather_kv(kv, bt, b, n), n, 0.1, causal)
        torch.testing.assert_close(out[b], d_out, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(lse[b], d_lse, rtol=1e-12, atol=1e-12)


def test_single_key_returns_its_value_and_score() -> None:
    q = torch.randn(1, 1, 2, 576)
    kv = torch.randn(1, 1, 1, 576)
    bt = torch.zeros(1, 1, dtype=torch.int32)
    out, lse = mla_decode_ref(q, kv, bt, torch.tensor([1], dtype=torch.int32), softmax_scale=0.3)
    torch.testing.assert_close(out[0, 0], kv[0, 0, 0, :512].double().expand(2, 512))
    # Natural-log LSE of one score is the score itself.
    torch.testing.assert_close(lse[0, :, 0], 0.3 * (q[0, 0].double() @ kv[0, 0, 0].double()))


def test_identical_keys_give_log_n_offset() -> None:
    n = 37
    row = torch.randn(576)
    kv = row.expand(10, 4, 1, 576).clone()
    bt = torch.arange(10, dtype=torch.int32)[None, :]
    q = torch.randn(1, 1, 3, 576)
    out, lse = mla_decode_ref(
        q, kv, bt, torch.tensor([n], dtype=torch.int32), softmax_scale=1.0, causal=False
    )
    torch.testing.assert_close(out[0, 0], row[:512].double().expand(3, 512))
    expected_lse = q[0, 0].double() @ row.double() + math.log(n)
    torch.testing.assert_close(lse[0, :, 0], expected_lse)


def test_causal_last_draft_token_sees_everything(request: pytest.FixtureRequest) -> None:
    q, kv, bt, sl = make_inputs(
        [9, 20], s_q=4, h_q=2, page=8, dtype=torch.float32, seed=seed_of(request)
    )
    causal, _ = mla_decode_ref(q, kv, bt, sl, softmax_scale=0.2, causal=True)
    full, _ = mla_decode_ref(q, kv, bt, sl, softmax_scale=0.2, causal=False)
    torch.testing.assert_close(causal[:, -1], full[:, -1])
    assert not torch.allclose(causal[:, 0], full[:, 0])


def test_page_layout_does_not_change_the_answer(request: pytest.FixtureRequest) -> None:
    q, kv, bt, sl = make_inputs(
        [30, 5], s_q=2, h_q=3, page=1, dtype=torch.float32, seed=seed_of(request)
    )
    ref, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=0.2)
    # Repack the same logical rows into pages of 16, in reverse page order.
    repacked = torch.full((8, 16, 1, 576), float("nan"))
    bt16 = torch.zeros(2, 4, dtype=torch.int32)
    for b, n in enumerate([30, 5]):
        rows = gather_kv(kv, bt, b, n)
        for p in range(-(-n // 16)):
            page_id = 7 - (b * 4 + p)
            bt16[b, p] = page_id
            chunk = rows[p * 16 : (p + 1) * 16]
            repacked[page_id, : len(chunk), 0] = chunk
    out, lse = mla_decode_ref(q, repacked, bt16, sl, softmax_scale=0.2)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(lse, ref_lse)


def test_ref_rejects_short_sequences() -> None:
    q, kv, bt, sl = make_inputs([4], s_q=2, h_q=1, page=4, dtype=torch.float32, seed=0)
    sl[0] = 1
    with pytest.raises(InputError, match="Expected cache_seqlens >= s_q = 2, got 1"):
        mla_decode_ref(q, kv, bt, sl, softmax_scale=1.0)


def test_ref_rejects_pages_outside_the_cache() -> None:
    q, kv, bt, sl = make_inputs([5, 9], s_q=1, h_q=1, page=4, dtype=torch.float32, seed=0)
    num_blocks = kv.shape[0]
    # Columns past a sequence's last page are never read: any value may sit there.
    bt[0, 2:] = -7
    mla_decode_ref(q, kv, bt, sl, softmax_scale=1.0)
    bt[1, 1] = num_blocks
    with pytest.raises(
        InputError,
        match=rf"block_table\[1\]: Expected page indices in \[0, {num_blocks}\) for the 9 keys "
        rf"of sequence 1, got {num_blocks}",
    ):
        mla_decode_ref(q, kv, bt, sl, softmax_scale=1.0)
    bt[1, 1] = -1
    with pytest.raises(InputError, match="got -1"):
        mla_decode_ref(q, kv, bt, sl, softmax_scale=1.0)
