# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""MLA decode for at most 16 query rows on Hopper (Gluon): the keys fill the MMA's M side.

With ``s_q · h_q ≤ 16`` (one decode token of 16 heads) a 64-row query tile is three
quarters padding, and the seesaw kernel spent as long on tensor-core work per key tile as
the tile takes to arrive (``docs/kernels/mla_decode.md``, item 8). Here the first product
is transposed: ``Sᵀ = K · Qᵀ`` puts the tile's 64 keys in the ``wgmma`` M dimension and the
16 query rows in N, so none of it is padding. ``P · V`` keeps the rows in M (a transposed
V as the A operand would need the transposed-A path); P goes through shared memory, with
rows 16-63 zero, and the product is a quarter useful — still half the work of before.

Warpgroups (``gl.warp_specialize``):

* **loader** (one warp): the 16-row query tile once (18 KiB, all 576 columns), then each
  64-key tile into one of two buffers, in three column groups (the rope part, columns
  0-255, 256-511) with the seesaw kernel's copy helpers and barriers.
* **two consumers**: each computes the whole ``Sᵀ`` and the online softmax (cheap at
  N = 16, and it saves an exchange between them) and owns half of the 64 × 512 float32
  output, 256 columns.

The softmax runs along the keys, M, so its statistics live in the column slice of the
``Sᵀ`` layout; the per-row scale for the output, whose rows are M there, goes through
shared memory with P.

Resources (ptxas, sm_90a): see :func:`kernelopt.kernels.mla.split_kv_resources`.
"""

from __future__ import annotations

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

from kernelopt.kernels.mla._epilogue import write_piece
from kernelopt.kernels.mla.seesaw import _load_tile_group

if TYPE_CHECKING:
    import torch

    from kernelopt.kernels.mla.hopper import ScratchAllocator

D_NOPE: gl.constexpr = gl.constexpr(512)
D_QK: gl.constexpr = gl.constexpr(576)
LN2: gl.constexpr = gl.constexpr(0.6931471805599453)
ROWS_PER_TILE = 16
"""Query rows per program: the ``wgmma`` N of ``Sᵀ = K · Qᵀ``."""


@gluon.jit
def _loader(
    kv_desc, kv, k_smem, kp_smem, k_full, k_free, block_table, stride_btb, i_b, key_start, key_end,
    seqlen, q_desc, q_smem, q_bar, i_m, ROWS: gl.constexpr, Q_TMA: gl.constexpr,
    PAGE: gl.constexpr,
):  # fmt: skip
    """One warp: the query tile, then key tiles 2i and 2i+1 into buffers 0 and 1."""
    if Q_TMA:
        mbarrier.expect(q_bar, 9 * 16 * 64 * 2)
        row_q = (i_b * ROWS + i_m * 16).to(gl.int32)
        for c in gl.static_range(9):
            tma.async_copy_global_to_shared(q_desc, [row_q, c * 64], q_bar, q_smem.index(c))
    n_tiles = gl.cdiv(key_end - key_start, 64)
    p_bt = block_table + i_b * stride_btb
    for it in range(gl.cdiv(n_tiles, 2)):
        # Rope columns first: both consumers free them right after Sᵀ.
        for buf in gl.static_range(2):
            for G in gl.static_range(3):
                _load_tile_group(
                    kv_desc, kv, k_smem, kp_smem, k_full, k_free, p_bt, key_start, seqlen, it,
                    2 * it + buf, n_tiles, buf, (G + 2) % 3, PAGE,
                )  # fmt: skip


@gluon.jit
def _scores(q_smem, k_smem, kp_smem, k_full, ph, z, buf: gl.constexpr, layout: gl.constexpr):
    """Sᵀ = K · Qᵀ of the tile in ``buf`` ([64 keys, 16 rows]), groups in arrival order."""
    s = gl.zeros([64, 16], gl.float32, layout=layout)
    mbarrier.wait(k_full.index(buf * 3 + 2), ph)
    s = warpgroup_mma(kp_smem.index(buf + z), q_smem.index(8 + z).permute((1, 0)), s, is_async=True)
    for G in gl.static_range(2):
        mbarrier.wait(k_full.index(buf * 3 + G), ph)
        for c in gl.static_range(4):
            s = warpgroup_mma(
                k_smem.index(buf * 8 + 4 * G + c + z),
                q_smem.index(4 * G + c + z).permute((1, 0)),
                s,
                is_async=True,
            )
    return warpgroup_mma_wait(0, deps=[s])


@gluon.jit
def _tile(
    q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, o0, o1, o2, o3, m, l_sum, ph, z,
    k0, lim, qk_scale, G: gl.constexpr, buf: gl.constexpr, mma_s: gl.constexpr,
    mma_o: gl.constexpr,
):  # fmt: skip
    """One key tile: ``Sᵀ``, the online softmax, and ``O[:, 256G : 256G + 256] += P · V``."""
    s = _scores(q_smem, k_smem, kp_smem, k_full, ph, z, buf, mma_s)
    # Done with the rope group and the other consumer's value columns.
    mbarrier.arrive(k_free.index(buf * 3 + 2))
    mbarrier.arrive(k_free.index(buf * 3 + 1 - G))
    o_k = k0 + gl.arange(0, 64, layout=gl.SliceLayout(1, mma_s))
    s = gl.where(o_k[:, None] < lim[None, :], s * qk_scale, float("-inf"))
    m_new = gl.maximum(m, gl.max(s, axis=0))
    scale = gl.exp2(m - m_new)
    p = gl.exp2(s - m_new[None, :])
    l_sum = l_sum * scale + gl.sum(p, axis=0)
    # P as the A operand [rows, keys]: rows 0-15 of a 64-row tile whose rest stays zero.
    # Two buffers a consumer (P and the row scale): the tile before may still read the other.
    p_tile = p_smem.index(2 * G + buf + z)
    p_tile.slice(0, 16).store(gl.permute(p.to(p_smem.dtype), [1, 0]))
    x_smem.index(2 * G + buf + z).slice(0, 16).store(scale)
    fence_async_shared()
    gl.thread_barrier()
    row_scale = x_smem.index(2 * G + buf + z).load(gl.SliceLayout(1, mma_o))[:, None]
    o0 = warpgroup_mma(p_tile, k_smem.index(buf * 8 + 4 * G + z), o0 * row_scale, is_async=True)
    o1 = warpgroup_mma(p_tile, k_smem.index(buf * 8 + 4 * G + 1 + z), o1 * row_scale, is_async=True)
    o2 = warpgroup_mma(p_tile, k_smem.index(buf * 8 + 4 * G + 2 + z), o2 * row_scale, is_async=True)
    o3 = warpgroup_mma(p_tile, k_smem.index(buf * 8 + 4 * G + 3 + z), o3 * row_scale, is_async=True)
    o0, o1, o2, o3 = warpgroup_mma_wait(0, deps=[o0, o1, o2, o3])
    mbarrier.arrive(k_free.index(buf * 3 + G))
    return o0, o1, o2, o3, m_new, l_sum


@gluon.jit
def _consumer(
    G: gl.constexpr, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, q_bar, out, lse,
    o_part, lse_part, split_offsets, counters, i_b, i_m, i_slot, key_start, key_end, seqlen,
    stride_ob, stride_os, stride_oh, stride_lb, stride_lh, stride_ls, qk_scale,
    S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr, Q_TMA: gl.constexpr,
    fused,
):  # fmt: skip
    """One consumer warpgroup: all of ``Sᵀ``, output columns ``256G … 256G + 255``."""
    ROWS: gl.constexpr = S_Q * H_Q
    mma_s: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 16, 16]
    )
    mma_o: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16]
    )
    col_s: gl.constexpr = gl.SliceLayout(0, mma_s)
    o_r = i_m * 16 + gl.arange(0, 16, layout=col_s)
    if CAUSAL:
        lim = gl.minimum(seqlen - S_Q + 1 + o_r // H_Q, key_end)
    else:
        lim = gl.zeros([16], gl.int32, layout=col_s) + key_end
    o0 = gl.zeros([64, 64], gl.float32, layout=mma_o)
    o1 = gl.zeros([64, 64], gl.float32, layout=mma_o)
    o2 = gl.zeros([64, 64], gl.float32, layout=mma_o)
    o3 = gl.zeros([64, 64], gl.float32, layout=mma_o)
    # m starts finite, so a row with every key masked so far keeps scale 1 and p 0.
    m = gl.full([16], -1.0e30, gl.float32, layout=col_s)
    l_sum = gl.zeros([16], gl.float32, layout=col_s)
    n_tiles = gl.cdiv(key_end - key_start, 64)
    if Q_TMA:
        mbarrier.wait(q_bar, 0)
    for it in range(gl.cdiv(n_tiles, 2)):
        ph = it & 1
        # Zero, but not to the compiler: shared-memory descriptors are then built next to
        # each product instead of being hoisted out of the loop (see seesaw.py).
        z = it >> 30
        k0 = key_start + 2 * it * 64
        o0, o1, o2, o3, m, l_sum = _tile(
            q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, o0, o1, o2, o3, m, l_sum,
            ph, z, k0, lim, qk_scale, G, 0, mma_s, mma_o,
        )  # fmt: skip
        if 2 * it + 1 < n_tiles:
            o0, o1, o2, o3, m, l_sum = _tile(
                q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, o0, o1, o2, o3, m,
                l_sum, ph, z, k0 + 64, lim, qk_scale, G, 1, mma_s, mma_o,
            )  # fmt: skip

    # The rows' max and sum move to the output's row layout through shared memory.
    gl.thread_barrier()
    x_smem.index(2 * G).slice(0, 16).store(m)
    x_smem.index(2 * G + 1).slice(0, 16).store(l_sum)
    gl.thread_barrier()
    row_o: gl.constexpr = gl.SliceLayout(1, mma_o)
    m_o = x_smem.index(2 * G).load(row_o)
    l_o = x_smem.index(2 * G + 1).load(row_o)
    o_ro = gl.arange(0, 64, layout=row_o)
    r_o = i_m * 16 + o_ro
    o_c = 256 * G + gl.arange(0, 64, layout=gl.SliceLayout(0, mma_o))
    M_TILES: gl.constexpr = (S_Q * H_Q + 15) // 16
    counter = counters + (i_b * M_TILES + i_m) * 2 + G
    write_piece(
        o0, o1, o2, o3, m_o, l_o, r_o, (o_ro < 16) & (r_o < ROWS), o_c, i_b, i_m, i_slot, out,
        lse, o_part, lse_part, split_offsets, counter, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, gl.to_tensor(ROWS).to(gl.int64), H_Q, G, fused,
    )  # fmt: skip


# The partitions' entry points (a role flag cannot travel in a partition's arguments).
@gluon.jit
def _first(
    q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, q_bar, out, lse, o_part, lse_part,
    split_offsets, counters, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os,
    stride_oh, stride_lb, stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr,
    CAUSAL: gl.constexpr, Q_TMA: gl.constexpr, fused,
):  # fmt: skip
    _consumer(
        0, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, q_bar, out, lse, o_part,
        lse_part, split_offsets, counters, i_b, i_m, i_slot, key_start, key_end, seqlen,
        stride_ob, stride_os, stride_oh, stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q,
        CAUSAL, Q_TMA, fused,
    )  # fmt: skip


@gluon.jit
def _second(
    q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, q_bar, out, lse, o_part, lse_part,
    split_offsets, counters, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os,
    stride_oh, stride_lb, stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr,
    CAUSAL: gl.constexpr, Q_TMA: gl.constexpr, fused,
):  # fmt: skip
    _consumer(
        1, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, q_bar, out, lse, o_part,
        lse_part, split_offsets, counters, i_b, i_m, i_slot, key_start, key_end, seqlen,
        stride_ob, stride_os, stride_oh, stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q,
        CAUSAL, Q_TMA, fused,
    )  # fmt: skip


@gluon.jit
def mla_keys_in_m_kernel(
    q, q_desc, kv, kv_desc, block_table, seqlens, units, out, lse, o_part, lse_part,
    split_offsets, counters, fused, stride_qb, stride_qs, stride_qh, stride_btb, stride_ob,
    stride_os, stride_oh, stride_lb, stride_lh, stride_ls, qk_scale,
    S_Q: gl.constexpr, H_Q: gl.constexpr, PAGE: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr, REGS: gl.constexpr, LOAD_REGS: gl.constexpr,
):  # fmt: skip
    ROWS: gl.constexpr = S_Q * H_Q
    i_m = gl.program_id(0)
    i_u = gl.program_id(1)
    # The piece this program works on: [batch, key_start, key_end, slot] (schedule.table()).
    i_b = gl.load(units + i_u * 4).to(gl.int64)
    key_start = gl.load(units + i_u * 4 + 1)
    key_end = gl.load(units + i_u * 4 + 2)
    i_slot = gl.load(units + i_u * 4 + 3)
    seqlen = gl.load(seqlens + i_b)
    if CAUSAL:
        last_tok = (gl.minimum(i_m * 16 + 16, ROWS) - 1) // H_Q
        key_end = gl.minimum(seqlen - S_Q + 1 + last_tok, key_end)

    # Shared memory: the query tile (18 KiB), two key tiles as 64-column chunks
    # (2 x 64 KiB + 2 x 8 KiB rope), two P tiles per consumer (32 KiB), row scales.
    layout: gl.constexpr = kv_desc.layout
    q_smem = gl.allocate_shared_memory(kv_desc.dtype, [9, 16, 64], layout)
    k_smem = gl.allocate_shared_memory(kv_desc.dtype, [16, 64, 64], layout)
    kp_smem = gl.allocate_shared_memory(kv_desc.dtype, [2, 64, 64], layout)
    p_smem = gl.allocate_shared_memory(kv_desc.dtype, [4, 64, 64], layout)
    x_smem = gl.allocate_shared_memory(gl.float32, [4, 64], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    k_full = gl.allocate_shared_memory(gl.int64, [6, 1], mbarrier.MBarrierLayout())
    k_free = gl.allocate_shared_memory(gl.int64, [6, 1], mbarrier.MBarrierLayout())
    q_bar = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    # Every group is read by both consumers (Sᵀ); each value group also by its owner (P · V).
    for i in gl.static_range(6):
        mbarrier.init(k_full.index(i), count=1)
        mbarrier.init(k_free.index(i), count=2)
    mbarrier.init(q_bar.index(0), count=1)

    # Rows 16-63 of every P tile and row scale stay zero: padding of the 64-row product.
    zl: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    for i in gl.static_range(4):
        p_smem.index(i).store(gl.zeros([64, 64], kv_desc.dtype, layout=zl))
    for i in gl.static_range(4):
        x_smem.index(i).store(gl.zeros([64], gl.float32, layout=gl.SliceLayout(1, zl)))
    if not Q_TMA:
        # A strided query tile is gathered with pointer loads (the loader then skips it).
        for c in gl.static_range(9):
            o_r = i_m * 16 + gl.arange(0, 16, layout=gl.SliceLayout(1, zl))
            o_d = c * 64 + gl.arange(0, 64, layout=gl.SliceLayout(0, zl))
            p = q + i_b * stride_qb + (o_r // H_Q).to(gl.int64) * stride_qs
            p = p + (o_r % H_Q) * stride_qh
            mask = (o_r < ROWS)[:, None] & (o_d < D_QK)[None, :]
            q_smem.index(c).store(gl.load(p[:, None] + o_d[None, :], mask=mask, other=0.0))
    fence_async_shared()
    gl.thread_barrier()

    args = (
        q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, q_bar.index(0), out, lse,
        o_part, lse_part, split_offsets, counters, i_b, i_m, i_slot, key_start, key_end, seqlen,
        stride_ob, stride_os, stride_oh, stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q,
        CAUSAL, Q_TMA, fused,
    )  # fmt: skip
    loader_args = (
        kv_desc, kv, k_smem, kp_smem, k_full, k_free, block_table, stride_btb, i_b, key_start,
        key_end, seqlen, q_desc, q_smem, q_bar.index(0), i_m, ROWS, Q_TMA, PAGE,
    )  # fmt: skip
    gl.warp_specialize(
        [(_first, args), (_second, args), (_loader, loader_args)], [4, 1], [REGS, LOAD_REGS]
    )


CONSUMER_REGS = 232
"""Registers a thread of the second consumer (the first gets what is left, 256)."""
LOADER_REGS = 24


def launch_keys_in_m(
    q: torch.Tensor,
    flat_kv: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    seqlens: torch.Tensor,
    units: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    o_arg: torch.Tensor,
    lse_arg: torch.Tensor,
    split_offsets: torch.Tensor,
    counters: torch.Tensor,
    *,
    softmax_scale_log2: float,
    causal: bool,
    num_units: int,
    fused: bool,
    scratch: ScratchAllocator,
) -> None:
    """Launch the kernel over ``(⌈s_q · h_q / 16⌉, num_units)``.

    Called by :func:`kernelopt.kernels.mla.seesaw.launch_seesaw` for ``s_q · h_q ≤ 16``,
    which has checked the inputs; ``flat_kv`` is the cache as ``[rows, 576]``. With
    ``fused`` the kernel merges split sequences through ``counters``; else the caller does.
    """
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    from kernelopt.kernels.mla.hopper import _scratch
    from kernelopt.kernels.mla.seesaw import _LAYOUT

    _, s_q, h_q, _ = q.shape
    kv_desc = TensorDescriptor(flat_kv, list(flat_kv.shape), [576, 1], [64, 64], _LAYOUT)
    q_tma = q.is_contiguous() and q.data_ptr() % 16 == 0
    q_desc = (
        TensorDescriptor(q.view(-1, 576), [q.numel() // 576, 576], [576, 1], [16, 64], _LAYOUT)
        if q_tma
        else kv_desc
    )
    grid = (triton.cdiv(s_q * h_q, ROWS_PER_TILE), num_units)
    with _scratch(scratch):
        mla_keys_in_m_kernel[grid](
            q,
            q_desc,
            kv_cache,
            kv_desc,
            block_table,
            seqlens,
            units,
            out,
            lse,
            o_arg,
            lse_arg,
            split_offsets,
            counters,
            int(fused),
            q.stride(0),
            q.stride(1),
            q.stride(2),
            block_table.stride(0),
            out.stride(0),
            out.stride(1),
            out.stride(2),
            lse.stride(0),
            lse.stride(1),
            lse.stride(2),
            softmax_scale_log2,
            S_Q=s_q,
            H_Q=h_q,
            PAGE=kv_cache.shape[1],
            CAUSAL=causal,
            Q_TMA=q_tma,
            REGS=CONSUMER_REGS,
            LOAD_REGS=LOADER_REGS,
            num_warps=4,
        )
