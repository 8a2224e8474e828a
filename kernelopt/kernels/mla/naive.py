# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""Naive Triton MLA decode: one program per (row tile, sequence), whole sequence, one pass.

The simplest kernel worth trusting, one step from the float64 reference: each program takes
``BLOCK_M`` query rows of one sequence (rows ``r = i · h_q + h`` over draft tokens ``i`` and
heads ``h``), walks all of the sequence's keys in tiles of ``BLOCK_N`` through the block
table, and keeps an online softmax in natural-exp form, masking every tile. No split, no
merge, no workspace.

Memory traffic: each program reads the whole sequence's cache rows, so a sequence is read
``ceil(s_q · h_q / BLOCK_M)`` times; with only ``b × row tiles`` programs, short batches
leave most multiprocessors idle. :mod:`kernelopt.kernels.mla.split_kv` fixes both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import triton
import triton.language as tl

from kernelopt.kernels.mla._validate import D_NOPE, D_PE, D_V, check_direct_call

if TYPE_CHECKING:
    import torch

__all__ = ["launch_naive", "mla_decode_naive"]


def _block_m(rows: int) -> int:
    # Enough rows for a matrix-unit tile, never more than 64 (the float32 accumulator is
    # BLOCK_M × 512).
    return min(64, max(16, int(triton.next_power_of_2(rows))))


@triton.jit
def _mla_decode_naive_kernel(
    q,
    kv,
    block_table,
    seqlens,
    out,
    lse,
    stride_qb,
    stride_qs,
    stride_qh,
    stride_kvp,
    stride_kvt,
    stride_btb,
    stride_ob,
    stride_os,
    stride_oh,
    stride_lb,
    stride_lh,
    stride_ls,
    scale,
    S_Q: tl.constexpr,
    H_Q: tl.constexpr,
    PAGE: tl.constexpr,
    CAUSAL: tl.constexpr,
    D_NOPE: tl.constexpr,
    D_PE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    DOT_PRECISION: tl.constexpr,
):
    ROWS: tl.constexpr = S_Q * H_Q
    i_m, i_b = tl.program_id(0), tl.program_id(1).to(tl.int64)
    seqlen = tl.load(seqlens + i_b)

    o_r = i_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_r = o_r < ROWS
    i_tok = o_r // H_Q
    i_head = o_r % H_Q
    o_dn = tl.arange(0, D_NOPE)
    o_dp = tl.arange(0, D_PE)
    p_q = q + i_b * stride_qb + i_tok * stride_qs + i_head * stride_qh
    b_qn = tl.load(p_q[:, None] + o_dn[None, :], mask=m_r[:, None], other=0.0)
    b_qp = tl.load(p_q[:, None] + D_NOPE + o_dp[None, :], mask=m_r[:, None], other=0.0)
    # Draft token i sees keys < seqlen - S_Q + i + 1 (Triton constexpr branches, no ternary).
    if CAUSAL:  # noqa: SIM108
        b_lim = seqlen - S_Q + 1 + i_tok
    else:
        b_lim = tl.zeros([BLOCK_M], dtype=tl.int32) + seqlen

    b_acc = tl.zeros([BLOCK_M, D_NOPE], dtype=tl.float32)
    b_m = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    b_l = tl.zeros([BLOCK_M], dtype=tl.float32)
    for k0 in range(0, seqlen, BLOCK_N):
        o_k = k0 + tl.arange(0, BLOCK_N)
        m_k = o_k < seqlen
        b_page = tl.load(block_table + i_b * stride_btb + o_k // PAGE, mask=m_k, other=0)
        o_row = b_page.to(tl.int64) * stride_kvp + (o_k % PAGE).to(tl.int64) * stride_kvt
        b_kn = tl.load(kv + o_row[:, None] + o_dn[None, :], mask=m_k[:, None], other=0.0)
        b_kp = tl.load(kv + o_row[:, None] + D_NOPE + o_dp[None, :], mask=m_k[:, None], other=0.0)

        b_s = tl.dot(b_qn, tl.trans(b_kn), input_precision=DOT_PRECISION)
        b_s += tl.dot(b_qp, tl.trans(b_kp), input_precision=DOT_PRECISION)
        b_s = b_s * scale
        m_s = (o_k[None, :] < b_lim[:, None]) & m_k[None, :]
        b_s = tl.where(m_s, b_s, float("-inf"))

        b_m_new = tl.maximum(b_m, tl.max(b_s, 1))
        # A row that has seen only masked keys still has max -inf: shift by 0 instead.
        b_shift = tl.where(b_m_new == float("-inf"), 0.0, b_m_new)
        b_p = tl.exp(b_s - b_shift[:, None])
        b_alpha = tl.exp(b_m - b_shift)
        b_l = b_l * b_alpha + tl.sum(b_p, 1)
        b_acc = b_acc * b_alpha[:, None] + tl.dot(
            b_p.to(b_kn.dtype), b_kn, input_precision=DOT_PRECISION
        )
        b_m = b_m_new

    b_l_safe = tl.where(m_r, b_l, 1.0)
    b_o = b_acc / b_l_safe[:, None]
    b_lse = b_m + tl.log(b_l_safe)
    p_o = out + i_b * stride_ob + i_tok * stride_os + i_head * stride_oh
    tl.store(p_o[:, None] + o_dn[None, :], b_o.to(out.dtype.element_ty), mask=m_r[:, None])
    tl.store(lse + i_b * stride_lb + i_head * stride_lh + i_tok * stride_ls, b_lse, mask=m_r)


def launch_naive(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    seqlens: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    *,
    softmax_scale: float,
    causal: bool,
    block_m: int | None = None,
    block_n: int = 32,
    num_warps: int | None = None,
) -> None:
    """Launch the naive kernel on caller-owned outputs (no allocation, no host sync)."""
    import torch

    batch, s_q, h_q, _ = q.shape
    rows = s_q * h_q
    bm = block_m or _block_m(rows)
    grid = (triton.cdiv(rows, bm), batch)
    _mla_decode_naive_kernel[grid](
        q,
        kv_cache,
        block_table,
        seqlens,
        out,
        lse,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        kv_cache.stride(0),
        kv_cache.stride(1),
        block_table.stride(0),
        out.stride(0),
        out.stride(1),
        out.stride(2),
        lse.stride(0),
        lse.stride(1),
        lse.stride(2),
        softmax_scale,
        S_Q=s_q,
        H_Q=h_q,
        PAGE=kv_cache.shape[1],
        CAUSAL=causal,
        D_NOPE=D_NOPE,
        D_PE=D_PE,
        BLOCK_M=bm,
        BLOCK_N=block_n,
        DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
        # 8 warps hold a 64 × 512 float32 accumulator without spilling; 4 suffice below.
        num_warps=num_warps or (8 if bm >= 64 else 4),
    )


def mla_decode_naive(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    cache_seqlens: torch.Tensor,
    *,
    softmax_scale: float,
    causal: bool = True,
    out: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Naive MLA decode over a paged cache.

    Parameters
    ----------
    q : torch.Tensor
        ``[b, s_q, h_q, 576]`` bfloat16/float16 (float32 for CPU tests).
    kv_cache : torch.Tensor
        ``[num_blocks, page_size, 1, 576]``, same dtype; values are columns ``[:512]``.
    block_table : torch.Tensor
        ``[b, max_blocks]`` int32; the pages the keys lie on must be in the cache.
    cache_seqlens : torch.Tensor
        ``[b]`` int32 on q's device, each at least ``s_q`` and covered by the block table.
        Read on the host with the block table to check both (a synchronization each for
        CUDA tensors); plan with ``MLADecodePlan(strategy="naive")`` for runs that never
        synchronize.
    softmax_scale : float
        Scale of ``q · k`` before the softmax.
    causal : bool
        Causal mask among the ``s_q`` draft tokens.
    out, lse : torch.Tensor, optional
        Caller-owned outputs ``[b, s_q, h_q, 512]`` (q's dtype) and ``[b, h_q, s_q]`` float32.

    Returns
    -------
    out : torch.Tensor
        ``[b, s_q, h_q, 512]`` in q's dtype.
    lse : torch.Tensor
        ``[b, h_q, s_q]`` float32, natural log.
    """
    import torch

    call = check_direct_call(
        q, kv_cache, block_table, cache_seqlens, softmax_scale=softmax_scale, causal=causal,
        out=out, lse=lse,
    )  # fmt: skip
    batch, s_q, h_q = call.batch, call.s_q, call.h_q
    softmax_scale, causal = call.softmax_scale, call.causal
    if out is None:
        out = torch.empty(batch, s_q, h_q, D_V, dtype=q.dtype, device=q.device)
    if lse is None:
        lse = torch.empty(batch, h_q, s_q, dtype=torch.float32, device=q.device)
    launch_naive(
        q,
        kv_cache,
        block_table,
        cache_seqlens,
        out,
        lse,
        softmax_scale=softmax_scale,
        causal=causal,
    )
    return out, lse
