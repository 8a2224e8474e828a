"""Exp 47: the merge kernel for a plan whose sequences all have PIECES pieces: the slots are
``i_b · PIECES + j``, so nothing is read before the partials, and the pieces are unrolled."""
# mypy: ignore-errors
import triton
import triton.language as tl


@triton.jit
def _uniform_combine_kernel(
    o_part, lse_part, split_offsets, out, lse, stride_ob, stride_os, stride_oh, stride_lb,
    stride_lh, stride_ls, S_Q: tl.constexpr, H_Q: tl.constexpr, D_V: tl.constexpr,
    BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr, PIECES: tl.constexpr,
):
    ROWS: tl.constexpr = S_Q * H_Q
    LN2: tl.constexpr = 0.6931471805599453
    i_r, i_d, i_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    o_r = i_r * BLOCK_R + tl.arange(0, BLOCK_R)
    m_r = o_r < ROWS
    o_d = i_d * BLOCK_D + tl.arange(0, BLOCK_D)
    b_m = tl.full([BLOCK_R], -1.0e30, dtype=tl.float32)
    b_l = tl.zeros([BLOCK_R], dtype=tl.float32)
    b_acc = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    for j in tl.static_range(PIECES):
        o_slot = (i_b * PIECES + j).to(tl.int64) * ROWS + o_r
        b_lse = tl.load(lse_part + o_slot, mask=m_r, other=float("-inf"))
        b_o = tl.load(o_part + o_slot[:, None] * D_V + o_d[None, :], mask=m_r[:, None], other=0.0)
        b_m_new = tl.maximum(b_m, b_lse)
        b_alpha = tl.exp2(b_m - b_m_new)
        b_w = tl.exp2(b_lse - b_m_new)
        b_acc = b_acc * b_alpha[:, None] + b_w[:, None] * b_o
        b_l = b_l * b_alpha + b_w
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


@triton.jit
def _empty_kernel(o_part, lse_part, split_offsets, out, lse, stride_ob, stride_os, stride_oh,
                  stride_lb, stride_lh, stride_ls, S_Q: tl.constexpr, H_Q: tl.constexpr,
                  D_V: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr,
                  PIECES: tl.constexpr):
    """The merge's grid doing nothing: what any separate merge kernel pays (wrong, timed only)."""
    pass
