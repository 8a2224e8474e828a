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


def test_ref_checks_its_scale_and_causal_flag() -> None:
    # The ground truth refuses what the kernels refuse: a NaN scale made every output NaN,
    # and causal="no" counted as true.
    q, kv, bt, sl = make_inputs([5], s_q=2, h_q=1, page=4, dtype=torch.float32, seed=0)
    for scale in (float("nan"), float("inf"), 0.0, -0.5, True):
        with pytest.raises(InputError, match="softmax_scale: Expected a"):
            mla_decode_ref(q, kv, bt, sl, softmax_scale=scale)
    with pytest.raises(InputError, match="causal: Expected a bool, got 'no'"):
        mla_decode_ref(q, kv, bt, sl, softmax_scale=0.1, causal="no")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- independent


def _rows_of(kv: torch.Tensor, bt: torch.Tensor, b: int, n: int) -> torch.Tensor:
    # Key t of sequence b, one at a time from the definition (not the reference's gather).
    page = kv.shape[1]
    return torch.stack([kv[int(bt[b, t // page]), t % page, 0] for t in range(n)])


def _e4m3(byte: int) -> float:
    # float8_e4m3fn from its bits: sign, 4 exponent bits (bias 7), 3 mantissa bits;
    # exponent 0 is subnormal, all ones in exponent and mantissa is NaN (no infinities).
    sign = -1.0 if byte & 0x80 else 1.0
    exp, man = (byte >> 3) & 0xF, byte & 0x7
    if exp == 0xF and man == 0x7:
        return math.nan
    if exp == 0:
        return sign * man / 8 * 2.0**-6
    return sign * (1 + man / 8) * 2.0 ** (exp - 7)


_E4M3 = torch.tensor([_e4m3(i) for i in range(256)], dtype=torch.float64)


def _unpack_fp8(rows: torch.Tensor) -> torch.Tensor:
    # [t, 656] bytes -> [t, 576] float64, decoded bit by bit: 512 e4m3 values times the
    # little-endian float32 scale of their group of 128, then 64 bfloat16 values.
    rows = rows.long()
    latent = _E4M3[rows[:, :512]]
    b = rows[:, 512:528].reshape(-1, 4, 4)
    bits = b[..., 0] | b[..., 1] << 8 | b[..., 2] << 16 | b[..., 3] << 24
    scale = torch.tensor(bits.to(torch.int32).tolist(), dtype=torch.int32).view(torch.float32)
    latent = latent * torch.repeat_interleave(scale.double(), 128, dim=1)
    r = rows[:, 528:].reshape(-1, 64, 2)
    rope = ((r[..., 0] | r[..., 1] << 8) << 16).to(torch.int32).view(torch.float32)
    return torch.cat([latent, rope.double()], dim=1)


def _independent(q, kv_rows, scale, causal):
    # Each draft token's softmax over the keys it sees, as slices: token i of s_q sees the
    # first n - s_q + i + 1 keys when causal, all n otherwise.
    s_q, h_q, _ = q.shape
    n = kv_rows.shape[0]
    out = torch.empty(s_q, h_q, 512, dtype=torch.float64)
    lse = torch.empty(h_q, s_q, dtype=torch.float64)
    for i in range(s_q):
        seen = kv_rows[: n - s_q + i + 1] if causal else kv_rows
        scores = (q[i].double() @ seen.T) * scale  # [h_q, keys]
        top = scores.max(dim=1, keepdim=True).values
        weights = torch.exp(scores - top)
        total = weights.sum(dim=1, keepdim=True)
        out[i] = (weights / total) @ seen[:, :512]
        lse[:, i] = (top + torch.log(total)).squeeze(1)
    return out, lse


@pytest.mark.parametrize(
    ("s_q", "h_q", "page", "causal"), [(1, 3, 16, True), (4, 2, 16, True), (3, 5, 1, False)]
)
def test_ref_matches_an_independent_computation(request, s_q, h_q, page, causal) -> None:
    # Lengths from s_q (the first draft token sees one key) to past several pages.
    seqlens = [s_q, 17, 70]
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=h_q, page=page, dtype=torch.float32, seed=seed_of(request)
    )
    out, lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=0.15, causal=causal)
    assert out.dtype == lse.dtype == torch.float64
    for b, n in enumerate(seqlens):
        rows = _rows_of(kv, bt, b, n).double()
        assert torch.isfinite(rows).all()  # only live keys: stale rows hold NaN
        d_out, d_lse = _independent(q[b], rows, 0.15, causal)
        torch.testing.assert_close(out[b], d_out, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(lse[b], d_lse, rtol=1e-12, atol=1e-12)


def test_ref_causal_rule_key_by_key(request) -> None:
    # Changing key t moves token i's output exactly when t < n - s_q + i + 1.
    s_q, n = 3, 6
    q, kv, bt, sl = make_inputs(
        [n], s_q=s_q, h_q=1, page=4, dtype=torch.float32, seed=seed_of(request)
    )
    base, _ = mla_decode_ref(q, kv, bt, sl, softmax_scale=0.2)
    for t in range(n):
        moved = kv.clone()
        moved[int(bt[0, t // 4]), t % 4, 0] += 1.0
        out, _ = mla_decode_ref(q, moved, bt, sl, softmax_scale=0.2)
        for i in range(s_q):
            changed = not torch.equal(out[0, i], base[0, i])
            assert changed == (t < n - s_q + i + 1), (t, i)


@pytest.mark.parametrize("causal", [True, False])
def test_ref_reads_the_fp8_cache_as_its_bytes_say(request, causal) -> None:
    from kernelopt.kernels.mla import quantize_kv_fp8

    s_q = 2
    seqlens = [2, 40, 19]
    q, kv, bt, sl = make_inputs(
        seqlens, s_q=s_q, h_q=3, page=16, dtype=torch.float32, seed=seed_of(request)
    )
    # Groups at very different magnitudes (each needs its own scale), tiny values that
    # land on e4m3's subnormals, and stale rows that stay NaN through the quantizer.
    gen = torch.Generator().manual_seed(seed_of(request))
    exponents = torch.randint(-10, 10, (*kv.shape[:3], 4), generator=gen).float()
    kv[..., :512] *= torch.exp2(exponents).repeat_interleave(128, dim=-1)
    kv[..., 5:9] = 1e-7
    packed = quantize_kv_fp8(kv)
    out, lse = mla_decode_ref(q, packed, bt, sl, softmax_scale=0.1, causal=causal)
    for b, n in enumerate(seqlens):
        rows = _unpack_fp8(_rows_of(packed, bt, b, n))
        assert torch.isfinite(rows).all()
        d_out, d_lse = _independent(q[b], rows, 0.1, causal)
        torch.testing.assert_close(out[b], d_out, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(lse[b], d_lse, rtol=1e-12, atol=1e-12)
