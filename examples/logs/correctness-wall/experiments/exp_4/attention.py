"""Causal attention forward in Triton (fp32 inputs), FlashAttention-style online softmax."""

import torch
import triton
import triton.language as tl


@triton.jit
def _attn_fwd(q_ptr, k_ptr, v_ptr, out_ptr, lse_ptr, sm_scale, seqlen, stride_t,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    i_m = tl.program_id(0)
    i_bh = tl.program_id(1)
    o_m = i_m * BLOCK_M + tl.arange(0, BLOCK_M)
    o_d = tl.arange(0, D)
    base = i_bh * seqlen * stride_t
    b_q = tl.load(q_ptr + base + o_m[:, None] * stride_t + o_d[None, :], mask=o_m[:, None] < seqlen, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    for start in range(0, seqlen, BLOCK_N):
        o_n = start + tl.arange(0, BLOCK_N)
        m_valid = o_n < seqlen
        b_k = tl.load(k_ptr + base + o_n[:, None] * stride_t + o_d[None, :], mask=m_valid[:, None], other=0.0)
        b_v = tl.load(v_ptr + base + o_n[:, None] * stride_t + o_d[None, :], mask=m_valid[:, None], other=0.0)
        b_s = tl.dot(b_q, tl.trans(b_k)) * qk_scale
            b_s = tl.where(m_valid[None, :] & (o_n[None, :] <= o_m[:, None]), b_s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(b_s, 1))
        alpha = tl.exp2(m_i - m_new)
        b_p = tl.exp2(b_s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(b_p, 1)
        acc = acc * alpha[:, None] + tl.dot(b_p, b_v)
        m_i = m_new
    tl.store(out_ptr + base + o_m[:, None] * stride_t + o_d[None, :], acc / l_i[:, None], mask=o_m[:, None] < seqlen)
    tl.store(lse_ptr + i_bh * seqlen + o_m, m_i + tl.log(l_i), mask=o_m < seqlen)


def attention(q, k, v, sm_scale, out, lse, BLOCK_M=64, BLOCK_N=64):
    """q, k, v [b*h, t, d] fp32 -> out [b*h, t, d] (persistent), lse [b*h, t]."""
    bh, t, d = q.shape
    grid = (triton.cdiv(t, BLOCK_M), bh)
    _attn_fwd[grid](q, k, v, out, lse, sm_scale, t, q.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, D=d)
    return out, lse
