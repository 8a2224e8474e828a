"""MLA decode in Triton: one program per BLOCK_M query rows of a sequence, over all its keys.

Absorbed DeepSeek-V3 MLA as MQA over a paged latent cache: q [b, s_q, h_q, 576] bf16
(512 latent + 64 RoPE columns); kv [num_blocks, page, 1, 576] bf16, where V is the first
512 columns of the same latent tile, loaded once for both products; block_table
[b, max_blocks] int32; seqlens [b] int32. Returns out [b, s_q, h_q, 512] and the natural-log
LSE [b, s_q * h_q] fp32. Causal among the s_q draft tokens.

- Head grouping: the s_q * h_q query rows of a sequence fill BLOCK_M rows of one MMA tile
  (heads per program = BLOCK_M / s_q).
- Online softmax in base 2, log2(e) folded into the scale; the LSE goes back to natural log.
- The grid is (cdiv(s_q * h_q, BLOCK_M), b): each program walks every KV tile of its
  sequence, num_stages deep.
"""

import torch
import triton
import triton.language as tl

D_LAT = 512
D_ROPE = 64
D_QK = 576
LOG2E = 1.4426950408889634


@triton.jit
def _fwd(
    Q, KV, BT, SEQ, O, LSE,
    sm_scale_log2,
    stride_bt,
    H_Q: tl.constexpr, S_Q: tl.constexpr, ROWS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PAGE: tl.constexpr,
    STAGES: tl.constexpr,
):
    i_m = tl.program_id(0)
    i_b = tl.program_id(1)
    seqlen = tl.load(SEQ + i_b)
    n_tiles = tl.cdiv(seqlen, BLOCK_N)

    o_rows = i_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_rows = o_rows < ROWS
    o_lat = tl.arange(0, 512)
    o_rope = tl.arange(0, 64)
    p_q = Q + i_b * ROWS * 576 + o_rows[:, None] * 576
    b_q_lat = tl.load(p_q + o_lat[None, :], mask=m_rows[:, None], other=0.0)
    b_q_rope = tl.load(p_q + 512 + o_rope[None, :], mask=m_rows[:, None], other=0.0)
    # row r is draft token r // H_Q; it sees keys < seqlen - S_Q + token + 1
    b_limit = seqlen - S_Q + o_rows // H_Q + 1

    b_m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    b_l = tl.zeros([BLOCK_M], tl.float32)
    b_acc = tl.zeros([BLOCK_M, 512], tl.float32)
    for t in tl.range(0, n_tiles, num_stages=STAGES):
        o_k = t * BLOCK_N + tl.arange(0, BLOCK_N)
        if BLOCK_N <= PAGE:
            page = tl.load(BT + i_b * stride_bt + (t * BLOCK_N) // PAGE)
            o_row = page * PAGE + (t * BLOCK_N) % PAGE + tl.arange(0, BLOCK_N)
        else:
            pages = tl.load(BT + i_b * stride_bt + o_k // PAGE)
            o_row = pages * PAGE + o_k % PAGE
        p_kv = KV + o_row.to(tl.int64)[:, None] * 576
        m_k = o_k < seqlen
        b_k_lat = tl.load(p_kv + o_lat[None, :], mask=m_k[:, None], other=0.0)
        b_k_rope = tl.load(p_kv + 512 + o_rope[None, :], mask=m_k[:, None], other=0.0)
        b_s = tl.dot(b_q_lat, tl.trans(b_k_lat))
        b_s = tl.dot(b_q_rope, tl.trans(b_k_rope), b_s)
        b_s = b_s * sm_scale_log2
        b_s = tl.where(o_k[None, :] < b_limit[:, None], b_s, float("-inf"))
        b_m_new = tl.maximum(b_m, tl.max(b_s, 1))
        b_m_safe = tl.where(b_m_new == float("-inf"), 0.0, b_m_new)
        b_alpha = tl.exp2(b_m - b_m_safe)
        b_p = tl.exp2(b_s - b_m_safe[:, None])
        b_l = b_l * b_alpha + tl.sum(b_p, 1)
        b_acc = b_acc * b_alpha[:, None]
        b_acc = tl.dot(b_p.to(b_k_lat.dtype), b_k_lat, b_acc)
        b_m = b_m_new

    b_lse2 = b_m + tl.log2(b_l)
    b_out = b_acc / tl.where(b_l == 0.0, 1.0, b_l)[:, None]
    p_o = O + i_b * ROWS * 512 + o_rows[:, None] * 512 + o_lat[None, :]
    tl.store(p_o, b_out.to(O.dtype.element_ty), mask=m_rows[:, None])
    tl.store(LSE + i_b * ROWS + o_rows, b_lse2 * 0.6931471805599453, mask=m_rows)


def mla_decode(q, kv, bt, seqlens, scale, block_m=64, block_n=64, num_warps=8, stages=2):
    """One decode step: out [b, s_q, h_q, 512] and lse [b, s_q * h_q] for q and the cache."""
    b, s_q, h_q, _ = q.shape
    rows = s_q * h_q
    out = torch.empty(b, s_q, h_q, 512, dtype=q.dtype, device=q.device)
    lse = torch.empty(b, rows, dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(rows, block_m), b)
    _fwd[grid](
        q, kv, bt, seqlens, out, lse,
        scale * LOG2E, bt.stride(0),
        H_Q=h_q, S_Q=s_q, ROWS=rows, BLOCK_M=block_m,
        BLOCK_N=block_n, PAGE=kv.shape[1], STAGES=stages,
        num_warps=num_warps, num_stages=stages,
    )
    return out, lse
