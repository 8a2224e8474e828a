"""Exp 46 baseline: the merge kernel as shipped before exp 46 (one piece a loop turn, each
turn's loads after the previous turn's), copied from kernelopt/kernels/mla/split_kv.py."""
# mypy: ignore-errors
from __future__ import annotations

import triton
import triton.language as tl

from kernelopt.kernels.mla.split_kv import D_V


@triton.jit
def _old_combine_kernel(
    o_part,
    lse_part,
    split_offsets,
    out,
    lse,
    stride_ob,
    stride_os,
    stride_oh,
    stride_lb,
    stride_lh,
    stride_ls,
    S_Q: tl.constexpr,
    H_Q: tl.constexpr,
    D_V: tl.constexpr,
    BLOCK_R: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    ROWS: tl.constexpr = S_Q * H_Q
    LN2: tl.constexpr = 0.6931471805599453
    i_r, i_d, i_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_first = tl.load(split_offsets + i_b)
    n_split = tl.load(split_offsets + i_b + 1) - i_first
    # A sequence in one piece was written by the split kernel itself.
    if n_split > 1:
        o_r = i_r * BLOCK_R + tl.arange(0, BLOCK_R)
        m_r = o_r < ROWS
        o_d = i_d * BLOCK_D + tl.arange(0, BLOCK_D)
        b_m = tl.full([BLOCK_R], -1.0e30, dtype=tl.float32)
        b_l = tl.zeros([BLOCK_R], dtype=tl.float32)
        b_acc = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
        for j in range(0, n_split):
            o_slot = (i_first + j).to(tl.int64) * ROWS + o_r
            b_lse = tl.load(lse_part + o_slot, mask=m_r, other=float("-inf"))
            b_o = tl.load(
                o_part + o_slot[:, None] * D_V + o_d[None, :], mask=m_r[:, None], other=0.0
            )
            # Weights 2^(lse_j - max): partials are already normalized by their own sums.
            b_m_new = tl.maximum(b_m, b_lse)
            b_alpha = tl.exp2(b_m - b_m_new)
            b_w = tl.exp2(b_lse - b_m_new)
            b_acc = b_acc * b_alpha[:, None] + b_w[:, None] * b_o
            b_l = b_l * b_alpha + b_w
            b_m = b_m_new
        i_tok = o_r // H_Q
        i_head = o_r % H_Q
        b_l = tl.where(m_r, b_l, 1.0)  # padding rows past ROWS merged nothing
        b_out = b_acc / b_l[:, None]
        p_o = out + i_b.to(tl.int64) * stride_ob + i_tok * stride_os + i_head * stride_oh
        tl.store(p_o[:, None] + o_d[None, :], b_out.to(out.dtype.element_ty), mask=m_r[:, None])
        if i_d == 0:
            b_lse_out = (b_m + tl.log2(b_l)) * LN2
            p_l = lse + i_b.to(tl.int64) * stride_lb + i_head * stride_lh + i_tok * stride_ls
            tl.store(p_l, b_lse_out, mask=m_r)



def old_launch_merge(
    o_part: torch.Tensor,
    lse_part: torch.Tensor,
    split_offsets: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    *,
    config: SplitKVConfig,
) -> None:
    """Merge the pieces' partial outputs by their LSEs into ``out`` and ``lse``.

    ``o_part [slots, rows, 512]`` / ``lse_part [slots, rows]`` float32 (base-2 LSE) hold the
    pieces of the split sequences, ``split_offsets [b + 1]`` their first slots; a sequence
    in one piece was already written by the split kernel and is skipped.
    """
    batch, s_q, h_q, _ = out.shape
    rows = s_q * h_q
    grid = (triton.cdiv(rows, config.combine_block_r), D_V // config.combine_block_d, batch)
    _old_combine_kernel[grid](
        o_part,
        lse_part,
        split_offsets,
        out,
        lse,
        out.stride(0),
        out.stride(1),
        out.stride(2),
        lse.stride(0),
        lse.stride(1),
        lse.stride(2),
        S_Q=s_q,
        H_Q=h_q,
        D_V=D_V,
        BLOCK_R=config.combine_block_r,
        BLOCK_D=config.combine_block_d,
        num_warps=config.combine_num_warps,
    )


