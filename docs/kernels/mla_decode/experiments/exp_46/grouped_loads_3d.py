"""Exp 46, run 1: the merge kernel with each turn's pieces loaded as one [PIECES, rows,
columns] block (slower than shipped in every round; the unrolled form replaced it)."""
# mypy: ignore-errors
import triton
import triton.language as tl


@triton.jit
def _grouped_combine_kernel(
    o_part, lse_part, split_offsets, out, lse, stride_ob, stride_os, stride_oh, stride_lb,
    stride_lh, stride_ls, S_Q: tl.constexpr, H_Q: tl.constexpr, D_V: tl.constexpr,
    BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr, PIECES: tl.constexpr,
):
    ROWS: tl.constexpr = S_Q * H_Q
    LN2: tl.constexpr = 0.6931471805599453
    i_r, i_d, i_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_first = tl.load(split_offsets + i_b)
    n_split = tl.load(split_offsets + i_b + 1) - i_first
    if n_split > 1:
        o_r = i_r * BLOCK_R + tl.arange(0, BLOCK_R)
        m_r = o_r < ROWS
        o_d = i_d * BLOCK_D + tl.arange(0, BLOCK_D)
        o_j = tl.arange(0, PIECES)
        b_m = tl.full([BLOCK_R], -1.0e30, dtype=tl.float32)
        b_l = tl.zeros([BLOCK_R], dtype=tl.float32)
        b_acc = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
        for j0 in range(0, n_split, PIECES):
            m_jr = ((j0 + o_j) < n_split)[:, None] & m_r[None, :]
            o_slot = (i_first + j0 + o_j).to(tl.int64)[:, None] * ROWS + o_r[None, :]
            b_lse = tl.load(lse_part + o_slot, mask=m_jr, other=float("-inf"))
            b_o = tl.load(
                o_part + o_slot[:, :, None] * D_V + o_d[None, None, :],
                mask=m_jr[:, :, None],
                other=0.0,
            )
            b_m_new = tl.maximum(b_m, tl.max(b_lse, axis=0))
            b_alpha = tl.exp2(b_m - b_m_new)
            b_w = tl.exp2(b_lse - b_m_new[None, :])
            b_acc = b_acc * b_alpha[:, None] + tl.sum(b_w[:, :, None] * b_o, axis=0)
            b_l = b_l * b_alpha + tl.sum(b_w, axis=0)
            b_m = b_m_new
        i_tok = o_r // H_Q
        i_head = o_r % H_Q
        b_l = tl.where(m_r, b_l, 1.0)
        b_out = b_acc / b_l[:, None]
        p_o = out + i_b.to(tl.int64) * stride_ob + i_tok * stride_os + i_head * stride_oh
        tl.store(p_o[:, None] + o_d[None, :], b_out.to(out.dtype.element_ty), mask=m_r[:, None])
        if i_d == 0:
            b_lse_out = (b_m + tl.log2(b_l)) * LN2
            p_l = lse + i_b.to(tl.int64) * stride_lb + i_head * stride_lh + i_tok * stride_ls
            tl.store(p_l, b_lse_out, mask=m_r)
