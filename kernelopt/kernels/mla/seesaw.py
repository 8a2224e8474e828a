# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""Seesaw MLA decode for Hopper: two warpgroups share one 64 x 512 output, a third loads.

(docstring filled in below)
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from kernelopt._errors import InputError, expected
from kernelopt.kernels.mla.hopper import ScratchAllocator, _scratch, check_hopper_layout
from kernelopt.kernels.mla.split_kv import LOG2E, SplitKVConfig, launch_merge

if TYPE_CHECKING:
    import torch

@gluon.jit
def _load_q_chunk(q, i_b, stride_qb, stride_qs, stride_qh, c: gl.constexpr, rows, layout: gl.constexpr,
                  H_Q: gl.constexpr, ROWS: gl.constexpr, BLOCK_M: gl.constexpr):
    o_r = rows * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, layout))
    o_d = c * 64 + gl.arange(0, 64, layout=gl.SliceLayout(0, layout))
    p = q + i_b * stride_qb + (o_r // H_Q).to(gl.int64) * stride_qs + (o_r % H_Q) * stride_qh
    mask = (o_r < ROWS)[:, None] & (o_d < 1000)[None, :]
    return gl.load(p[:, None] + o_d[None, :], mask=mask, other=0.0)


@gluon.jit
def _producer(kv_desc, kv, k_smem, kp_smem, k_full, k_free, block_table, stride_btb, i_b, key_start, key_end,
              seqlen, PAGE: gl.constexpr, BLOCK_N: gl.constexpr):
    n_tiles = gl.cdiv(key_end - key_start, BLOCK_N)
    p_bt = block_table + i_b * stride_btb
    for j in range(n_tiles):
        par = j % 2
        it = j // 2
        k0 = key_start + j * BLOCK_N
        row0 = gl.load(p_bt + k0 // PAGE) * PAGE + k0 % PAGE
        buf_p = kp_smem.index(par)
        bar_full = k_full.index(par)
        mbarrier.wait(k_free.index(par), (it & 1) ^ 1)
        mbarrier.expect(bar_full, BLOCK_N * 576 * 2)
        if k0 + BLOCK_N <= seqlen:
            for c in gl.static_range(8):
                tma.async_copy_global_to_shared(kv_desc, [row0, c * 64], bar_full, k_smem.index(par * 8 + c))
            tma.async_copy_global_to_shared(kv_desc, [row0, 512], bar_full, buf_p)
        else:
            # Rows past the sequence's end may hold anything (NaN): a descriptor that stops
            # at the last key makes the copy engine write zeros there instead.
            d_tail = tma.make_tensor_descriptor(kv + row0.to(gl.int64) * 576, [seqlen - k0, 576], [576, 1],
                                                [BLOCK_N, 64], kv_desc.layout)
            for c in gl.static_range(8):
                tma.async_copy_global_to_shared(d_tail, [0, c * 64], bar_full, k_smem.index(par * 8 + c))
            tma.async_copy_global_to_shared(d_tail, [0, 512], bar_full, buf_p)


@gluon.jit
def _qk(q_smem, q_pe, k_smem, base, kpbuf, s_layout: gl.constexpr):
    s = gl.zeros([64, 64], gl.float32, layout=s_layout)
    for c in gl.static_range(8):
        s = warpgroup_mma(q_smem.index(c), k_smem.index(base + c).permute((1, 0)), s, use_acc=c > 0, is_async=True)
    s = warpgroup_mma(q_pe, kpbuf.permute((1, 0)), s, is_async=True)
    return s


@gluon.jit
def _pv(p, k_smem, base, o0, o1, o2, o3, C0: gl.constexpr):
    o0 = warpgroup_mma(p, k_smem.index(base + C0 + 0), o0, is_async=True)
    o1 = warpgroup_mma(p, k_smem.index(base + C0 + 1), o1, is_async=True)
    o2 = warpgroup_mma(p, k_smem.index(base + C0 + 2), o2, is_async=True)
    o3 = warpgroup_mma(p, k_smem.index(base + C0 + 3), o3, is_async=True)
    return o0, o1, o2, o3


@gluon.jit
def _mask_scale(s, k0, lim, qk_scale, s_layout: gl.constexpr):
    o_k = k0 + gl.arange(0, 64, layout=gl.SliceLayout(0, s_layout))
    return gl.where(o_k[None, :] < lim[:, None], s * qk_scale, float("-inf"))


@gluon.jit
def _row_limit(i_m, seqlen, key_end, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr,
               layout: gl.constexpr):
    o_r = i_m * 64 + gl.arange(0, 64, layout=layout)
    if CAUSAL:
        lim = gl.minimum(seqlen - S_Q + 1 + o_r // H_Q, key_end)
    else:
        lim = gl.zeros([64], gl.int32, layout=layout) + key_end
    return lim


@gluon.jit
def _consumer(LEFT: gl.constexpr, q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars,
              out, lse, o_part, lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen,
              stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh, stride_lb, stride_lh, stride_ls,
              qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr):
    ROWS: gl.constexpr = S_Q * H_Q
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
    dot_a: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    row_l: gl.constexpr = gl.SliceLayout(1, mma)
    ld: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    o_qr = i_m * 64 + gl.arange(0, 64, layout=gl.SliceLayout(1, dot_a))
    o_qd = 512 + gl.arange(0, 64, layout=gl.SliceLayout(0, dot_a))
    p_q = q + i_b * stride_qb + (o_qr // H_Q).to(gl.int64) * stride_qs + (o_qr % H_Q) * stride_qh
    q_pe = gl.load(p_q[:, None] + o_qd[None, :], mask=(o_qr < ROWS)[:, None] & (o_qd < 1000)[None, :], other=0.0)
    lim = _row_limit(i_m, seqlen, key_end, S_Q, H_Q, CAUSAL, row_l)
    o0 = gl.zeros([64, 64], gl.float32, layout=mma)
    o1 = gl.zeros([64, 64], gl.float32, layout=mma)
    o2 = gl.zeros([64, 64], gl.float32, layout=mma)
    o3 = gl.zeros([64, 64], gl.float32, layout=mma)
    m = gl.full([64], -1.0e30, gl.float32, layout=row_l)
    l_own = gl.zeros([64], gl.float32, layout=row_l)
    n_tiles = gl.cdiv(key_end - key_start, 64)
    n_iter = gl.cdiv(n_tiles, 2)
    # x_smem rows: 0 = m after the even tile, 1 = scale of the even tile,
    #              2 = m after the odd tile, 3 = scale of the odd tile, 4/5 = row sums.
    bar_m0 = bars.index(0)
    bar_p1 = bars.index(1)
    bar_p0 = bars.index(2)
    bar_l = bars.index(3)
    C_OWN: gl.constexpr = 0 if LEFT else 4
    for it in range(n_iter):
        ph = it & 1
        k_even = key_start + (2 * it) * 64
        k_odd = k_even + 64
        has_odd = 2 * it + 1 < n_tiles
        if LEFT:
            mbarrier.wait(k_full.index(0), ph)
            s = _qk(q_smem, q_pe, k_smem, 0, kp_smem.index(0), mma)
            s = warpgroup_mma_wait(0, deps=[s])
            s = _mask_scale(s, k_even, lim, qk_scale, mma)
            m_new = gl.maximum(m, gl.max(s, axis=1))
            scale0 = gl.exp2(m - m_new)
            p0 = gl.exp2(s - m_new[:, None])
            x_smem.index(0).store(m_new)
            x_smem.index(1).store(scale0)
            gl.thread_barrier()
            mbarrier.arrive(bar_m0)
            l_own = l_own * scale0 + gl.sum(p0, axis=1)
            o0 = o0 * scale0[:, None]
            o1 = o1 * scale0[:, None]
            o2 = o2 * scale0[:, None]
            o3 = o3 * scale0[:, None]
            pa = gl.convert_layout(p0.to(gl.bfloat16), dot_a)
            o0, o1, o2, o3 = _pv(pa, k_smem, 0, o0, o1, o2, o3, 0)
            # The odd tile's softmax, done by the other warpgroup.
            mbarrier.wait(bar_p1, ph)
            m = x_smem.index(2).load(row_l)
            scale1 = x_smem.index(3).load(row_l)
            p_smem.index(0).store((p0 * scale1[:, None]).to(gl.bfloat16))
            fence_async_shared()
            gl.thread_barrier()
            mbarrier.arrive(bar_p0)
            l_own = l_own * scale1
            o0, o1, o2, o3 = warpgroup_mma_wait(0, deps=[o0, o1, o2, o3])
            if has_odd:
                o0 = o0 * scale1[:, None]
                o1 = o1 * scale1[:, None]
                o2 = o2 * scale1[:, None]
                o3 = o3 * scale1[:, None]
                o0, o1, o2, o3 = _pv(p_smem.index(1), k_smem, 8, o0, o1, o2, o3, 0)
                o0, o1, o2, o3 = warpgroup_mma_wait(0, deps=[o0, o1, o2, o3])
        else:
            if has_odd:
                mbarrier.wait(k_full.index(1), ph)
                s = _qk(q_smem, q_pe, k_smem, 8, kp_smem.index(1), mma)
                s = warpgroup_mma_wait(0, deps=[s])
                s = _mask_scale(s, k_odd, lim, qk_scale, mma)
            else:
                s = gl.full([64, 64], float("-inf"), gl.float32, layout=mma)
            mbarrier.wait(bar_m0, ph)
            m0 = x_smem.index(0).load(row_l)
            scale0 = x_smem.index(1).load(row_l)
            m_new = gl.maximum(m0, gl.max(s, axis=1))
            scale1 = gl.exp2(m0 - m_new)
            p1 = gl.exp2(s - m_new[:, None])
            m = m_new
            x_smem.index(2).store(m_new)
            x_smem.index(3).store(scale1)
            p_smem.index(1).store(p1.to(gl.bfloat16))
            fence_async_shared()
            gl.thread_barrier()
            mbarrier.arrive(bar_p1)
            sc = scale0 * scale1
            l_own = l_own * sc + gl.sum(p1, axis=1)
            o0 = o0 * sc[:, None]
            o1 = o1 * sc[:, None]
            o2 = o2 * sc[:, None]
            o3 = o3 * sc[:, None]
            if has_odd:
                pa = gl.convert_layout(p1.to(gl.bfloat16), dot_a)
                o0, o1, o2, o3 = _pv(pa, k_smem, 8, o0, o1, o2, o3, 4)
                o0, o1, o2, o3 = warpgroup_mma_wait(0, deps=[o0, o1, o2, o3])
            mbarrier.wait(bar_p0, ph)
            o0, o1, o2, o3 = _pv(p_smem.index(0), k_smem, 0, o0, o1, o2, o3, 4)
            o0, o1, o2, o3 = warpgroup_mma_wait(0, deps=[o0, o1, o2, o3])
        mbarrier.arrive(k_free.index(0))
        if has_odd:
            mbarrier.arrive(k_free.index(1))

    # Row sums: each warpgroup summed the probabilities of its own tiles.
    if LEFT:
        x_smem.index(4).store(l_own)
    else:
        x_smem.index(5).store(l_own)
    gl.thread_barrier()
    mbarrier.arrive(bar_l)
    mbarrier.wait(bar_l, 0)
    l_sum = x_smem.index(4).load(row_l) + x_smem.index(5).load(row_l)

    o_r = i_m * 64 + gl.arange(0, 64, layout=row_l)
    m_r = o_r < ROWS
    i_tok = o_r // H_Q
    i_head = o_r % H_Q
    col_l: gl.constexpr = gl.SliceLayout(0, mma)
    o_c = gl.arange(0, 64, layout=col_l) + C_OWN * 64
    LN2: gl.constexpr = 0.6931471805599453
    if i_slot < 0:
        inv = 1.0 / l_sum
        p_o = out + i_b * stride_ob + i_tok.to(gl.int64) * stride_os + i_head * stride_oh
        base = p_o[:, None] + o_c[None, :]
        msk = m_r[:, None] & (o_c < 10000)[None, :]
        gl.store(base, (o0 * inv[:, None]).to(out.dtype.element_ty), mask=msk)
        gl.store(base + 64, (o1 * inv[:, None]).to(out.dtype.element_ty), mask=msk)
        gl.store(base + 128, (o2 * inv[:, None]).to(out.dtype.element_ty), mask=msk)
        gl.store(base + 192, (o3 * inv[:, None]).to(out.dtype.element_ty), mask=msk)
        if LEFT:
            gl.store(lse + i_b * stride_lb + i_head * stride_lh + i_tok * stride_ls,
                     (m + gl.log2(l_sum)) * LN2, mask=m_r)
    else:
        empty = l_sum == 0.0
        l_safe = gl.where(empty, 1.0, l_sum)
        pinv = 1.0 / l_safe
        o_slot = i_slot.to(gl.int64) * ROWS + o_r
        pbase = o_part + o_slot[:, None] * 512 + o_c[None, :]
        pmsk = m_r[:, None] & (o_c < 10000)[None, :]
        gl.store(pbase, o0 * pinv[:, None], mask=pmsk)
        gl.store(pbase + 64, o1 * pinv[:, None], mask=pmsk)
        gl.store(pbase + 128, o2 * pinv[:, None], mask=pmsk)
        gl.store(pbase + 192, o3 * pinv[:, None], mask=pmsk)
        if LEFT:
            gl.store(lse_part + o_slot, gl.where(empty, float("-inf"), m + gl.log2(l_safe)), mask=m_r)


@gluon.jit
def _left(q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars, out, lse, o_part, lse_part, i_b, i_m,
          i_slot, key_start, key_end, seqlen, stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
          stride_lb, stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr):
    _consumer(True, q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars, out, lse, o_part, lse_part, i_b,
              i_m, i_slot, key_start, key_end, seqlen, stride_qb, stride_qs, stride_qh, stride_ob, stride_os,
              stride_oh, stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL)


@gluon.jit
def _right(q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars, out, lse, o_part, lse_part, i_b, i_m,
           i_slot, key_start, key_end, seqlen, stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
           stride_lb, stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr):
    _consumer(False, q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars, out, lse, o_part, lse_part, i_b,
              i_m, i_slot, key_start, key_end, seqlen, stride_qb, stride_qs, stride_qh, stride_ob, stride_os,
              stride_oh, stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL)


@gluon.jit
def mla_seesaw_kernel(q, kv, kv_desc, block_table, seqlens, units, out, lse, o_part, lse_part,
                      stride_qb, stride_qs, stride_qh, stride_btb, stride_ob, stride_os, stride_oh,
                      stride_lb, stride_lh, stride_ls, qk_scale,
                      S_Q: gl.constexpr, H_Q: gl.constexpr, PAGE: gl.constexpr, CAUSAL: gl.constexpr,
                      REGS: gl.constexpr, LOAD_REGS: gl.constexpr):
    ROWS: gl.constexpr = S_Q * H_Q
    i_m = gl.program_id(0)
    i_u = gl.program_id(1)
    i_b = gl.load(units + i_u * 4).to(gl.int64)
    key_start = gl.load(units + i_u * 4 + 1)
    key_end = gl.load(units + i_u * 4 + 2)
    i_slot = gl.load(units + i_u * 4 + 3)
    seqlen = gl.load(seqlens + i_b)
    if CAUSAL:
        last_tok = (gl.minimum(i_m * 64 + 64, ROWS) - 1) // H_Q
        key_end = gl.minimum(seqlen - S_Q + 1 + last_tok, key_end)

    layout: gl.constexpr = kv_desc.layout
    q_smem = gl.allocate_shared_memory(gl.bfloat16, [8, 64, 64], layout)
    k_smem = gl.allocate_shared_memory(gl.bfloat16, [16, 64, 64], layout)
    kp_smem = gl.allocate_shared_memory(gl.bfloat16, [2, 64, 64], layout)
    p_smem = gl.allocate_shared_memory(gl.bfloat16, [2, 64, 64], layout)
    x_layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0])
    x_smem = gl.allocate_shared_memory(gl.float32, [6, 64], x_layout)
    k_full = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    k_free = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    bars = gl.allocate_shared_memory(gl.int64, [4, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(2):
        mbarrier.init(k_full.index(i), count=1)
        mbarrier.init(k_free.index(i), count=2)
    for i in gl.static_range(3):
        mbarrier.init(bars.index(i), count=1)
    mbarrier.init(bars.index(3), count=2)

    ld: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    for c in gl.static_range(8):
        q_smem.index(c).store(_load_q_chunk(q, i_b, stride_qb, stride_qs, stride_qh, c, i_m, ld, H_Q, ROWS, 64))
    fence_async_shared()
    gl.thread_barrier()

    args = (q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars, out, lse, o_part, lse_part, i_b, i_m,
            i_slot, key_start, key_end, seqlen, stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
            stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL)
    gl.warp_specialize(
        [
            (_left, args),
            (_right, args),
            (_producer, (kv_desc, kv, k_smem, kp_smem, k_full, k_free, block_table, stride_btb, i_b, key_start, key_end,
                         seqlen, PAGE, 64)),
        ],
        [4, 1],
        [REGS, LOAD_REGS],
    )


MIN_ROWS = 64
"""Fewest query rows per sequence (``s_q · h_q``) this kernel runs; fewer use split-KV."""

CONSUMER_REGS = 224
LOADER_REGS = 24


def default_config(rows: int, dtype: torch.dtype | None = None) -> SplitKVConfig:
    """Launch knobs: 64-row, 64-key tiles (the kernel's layout is fixed), one program per SM."""
    del rows, dtype
    return SplitKVConfig(block_m=64, block_n=64, num_warps=4, num_stages=2)


_LAYOUT = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)


def launch_seesaw(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    seqlens: torch.Tensor,
    units: torch.Tensor,
    split_offsets: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    *,
    o_part: torch.Tensor | None,
    lse_part: torch.Tensor | None,
    softmax_scale: float,
    causal: bool,
    num_units: int,
    has_splits: bool,
    config: SplitKVConfig,
    scratch: ScratchAllocator,
) -> None:
    """Launch the seesaw kernel over ``(row tiles, num_units)`` and, if needed, the merge."""
    import torch
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    _, s_q, h_q, _ = q.shape
    page = kv_cache.shape[1]
    if q.dtype != torch.bfloat16:
        raise InputError(expected("bfloat16 inputs for strategy 'seesaw'", str(q.dtype), where="q"))
    check_hopper_layout(kv_cache, page_size=page, block_n=64)
    if has_splits and (o_part is None or lse_part is None):
        raise InputError(expected("a workspace for partial outputs", None, where="o_part"))
    o_arg = o_part if o_part is not None else lse
    lse_arg = lse_part if lse_part is not None else lse
    rows_kv = kv_cache.shape[0] * page
    flat = kv_cache.view(rows_kv, 576)
    kv_desc = TensorDescriptor(flat, [rows_kv, 576], [576, 1], [64, 64], _LAYOUT)
    grid = (triton.cdiv(s_q * h_q, 64), num_units)
    with _scratch(scratch):
        mla_seesaw_kernel[grid](
            q, kv_cache, kv_desc, block_table, seqlens, units, out, lse, o_arg, lse_arg,
            q.stride(0), q.stride(1), q.stride(2), block_table.stride(0),
            out.stride(0), out.stride(1), out.stride(2),
            lse.stride(0), lse.stride(1), lse.stride(2),
            softmax_scale * LOG2E,
            S_Q=s_q, H_Q=h_q, PAGE=page, CAUSAL=causal,
            REGS=CONSUMER_REGS, LOAD_REGS=LOADER_REGS,
            num_warps=4,
        )
    if has_splits:
        launch_merge(o_arg, lse_arg, split_offsets, out, lse, config=config)
