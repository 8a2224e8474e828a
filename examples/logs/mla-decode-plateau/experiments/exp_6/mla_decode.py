"""MLA decode in Triton: one program per batch row, all heads of the row in one MMA tile.

Absorbed DeepSeek-V3 MLA as MQA. Shapes: q [b, s_q, h_q, 576] bf16; paged latent cache
kv_cache [num_blocks, page, 1, 576] bf16 (V is its first 512 columns); block_table
[b, max_blocks] int32; cache_seqlens [b] int32. Returns out [b, s_q, h_q, 512] and
lse [b, h_q, s_q] fp32. Causal among the s_q draft tokens.
"""

import torch
import triton
import triton.language as tl

D_QK = 576
D_V = 512


@triton.jit
def _mla_decode_kernel(
    q_ptr, kv_ptr, block_table_ptr, seqlens_ptr, out_ptr, lse_ptr,
    sm_scale,
    stride_qb, stride_qs, stride_qh,
    stride_kv_block, stride_kv_page,
    stride_bt,
    stride_ob, stride_os, stride_oh,
    stride_lb, stride_lh,
    S_Q,
    H: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PAGE: tl.constexpr,
):
    i_b = tl.program_id(0)
    seqlen = tl.load(seqlens_ptr + i_b)
    o_h = tl.arange(0, BLOCK_H)
    o_d = tl.arange(0, D_QK)
    o_v = tl.arange(0, D_V)
    m_h = o_h < H
    qk_scale = sm_scale
    for i_s in range(S_Q):
        # query i sees keys < seqlen - S_Q + i + 1 (causal among the draft tokens)
        kv_len = seqlen - S_Q + i_s + 1
        p_q = q_ptr + i_b * stride_qb + i_s * stride_qs + o_h[:, None] * stride_qh + o_d[None, :]
        b_q = tl.load(p_q, mask=m_h[:, None], other=0.0)
        m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
        l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
        acc = tl.zeros([BLOCK_H, D_V], dtype=tl.float32)
        for start in range(0, kv_len, BLOCK_N):
            o_n = start + tl.arange(0, BLOCK_N)
            m_n = o_n < kv_len
            i_page = tl.load(block_table_ptr + i_b * stride_bt + o_n // PAGE, mask=m_n, other=0)
            p_k = kv_ptr + i_page[:, None] * stride_kv_block + (o_n % PAGE)[:, None] * stride_kv_page
            b_k = tl.load(p_k + o_d[None, :], mask=m_n[:, None], other=0.0)
            # V is the first 512 columns of the same latent rows (a second, L2-hot load)
            b_v = tl.load(p_k + o_v[None, :], mask=m_n[:, None], other=0.0)
            b_s = tl.dot(b_q, tl.trans(b_k)) * qk_scale
            b_s = tl.where(m_n[None, :], b_s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(b_s, 1))
            alpha = tl.exp(m_i - m_new)
            b_p = tl.exp(b_s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(b_p, 1)
            acc = acc * alpha[:, None] + tl.dot(b_p.to(tl.bfloat16), b_v)
            m_i = m_new
        acc = acc / l_i[:, None]
        p_o = out_ptr + i_b * stride_ob + i_s * stride_os + o_h[:, None] * stride_oh + o_v[None, :]
        tl.store(p_o, acc.to(out_ptr.dtype.element_ty), mask=m_h[:, None])
        lse = m_i + tl.log(l_i)
        tl.store(lse_ptr + i_b * stride_lb + o_h * stride_lh + i_s, lse, mask=m_h)


def mla_decode(q, kv_cache, block_table, cache_seqlens, sm_scale, BLOCK_N=64, num_warps=8, num_stages=3):
    """Decode attention for one step; launches one program per batch row."""
    b, s_q, h_q, d_qk = q.shape
    out = torch.empty((b, s_q, h_q, D_V), dtype=q.dtype, device=q.device)
    lse = torch.empty((b, h_q, s_q), dtype=torch.float32, device=q.device)
    grid = (b,)
    _mla_decode_kernel[grid](
        q, kv_cache, block_table, cache_seqlens, out, lse,
        sm_scale,
        q.stride(0), q.stride(1), q.stride(2),
        kv_cache.stride(0), kv_cache.stride(1),
        block_table.stride(0),
        out.stride(0), out.stride(1), out.stride(2),
        lse.stride(0), lse.stride(1),
        s_q,
        H=h_q,
        BLOCK_H=triton.next_power_of_2(h_q),
        PAGE=kv_cache.shape[1],
        BLOCK_N=BLOCK_N,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return out, lse
