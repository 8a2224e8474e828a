# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""MLA decode for at most 16 query rows on Hopper (Gluon): keys in M, a ring of 8 KiB chunks.

With ``s_q · h_q ≤ 16`` (one decode token of 16 heads) the kernel is bound by how many
bytes each SM keeps in flight, not by the tensor cores: copies of the 64-row seesaw kernel
that only waited for and released each key tile read the cache at 90 % of the copy rate,
and the products cost 7.4 µs on top through latency, because a 72 KiB tile buffer is
refilled only once both products on it are done and two such buffers is all that fits
(``docs/kernels/mla_decode.md``, exps 8-9). Here shared memory is a ring of 64-key ×
64-column chunks (8 KiB each), every chunk with its own barriers:

* the query is 16 rows, not a 64-row tile (18 KiB instead of 64 KiB), because the first
  product is transposed, ``Sᵀ = K · Qᵀ``: the tile's 64 keys fill the ``wgmma`` M side and
  the 16 rows are its N, none of it padding; that leaves room for ``SLOTS`` = 23 chunks,
  2.6 tiles where the seesaw kernel has 2;
* a chunk goes back to the loader as soon as its last reader is done with it: the rope
  chunk and the other consumer's value chunks right after ``Sᵀ``, each own value chunk
  right after its part of ``P · V``, so the loader refills while the products still run.

Warpgroups (``gl.warp_specialize``): a **loader** warp (the query once, then the tiles'
chunks in ring order: rope first, then value columns 0-511) and two **consumers**, each
computing all of ``Sᵀ`` and the online softmax (cheap at N = 16, and no exchange) and
owning 256 of the 512 output columns. ``P · V`` keeps rows in M (V as a transposed A
operand would need the transposed-A path): P goes through shared memory as rows 0-15 of a
64-row tile whose other rows stay zero, with its per-row scale beside it.

Rows past a sequence's end are read through a descriptor that stops at its last key, so
the copy engine writes zeros there (stale cache rows may hold NaN; 0 · NaN is NaN).
Split sequences write partial outputs that :func:`~kernelopt.kernels.mla.split_kv.
launch_merge` combines, as for the other kernels.
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

if TYPE_CHECKING:
    import torch

    from kernelopt.kernels.mla.hopper import ScratchAllocator

D_NOPE: gl.constexpr = gl.constexpr(512)
D_QK: gl.constexpr = gl.constexpr(576)
LN2: gl.constexpr = gl.constexpr(0.6931471805599453)
CHUNK_BYTES: gl.constexpr = gl.constexpr(64 * 64 * 2)

MAX_ROWS = 16
"""Most query rows per sequence (``s_q · h_q``) the ring kernel takes: its ``Sᵀ`` N."""
SLOTS = 23
"""Chunks in the ring: what is left of 227 KiB after the query (18 KiB), the two consumers'
P tiles (16 KiB), row scales and barriers."""
CONSUMER_REGS = 232
"""Registers a thread of the second consumer (the first gets what is left, 256)."""
LOADER_REGS = 24


@gluon.jit
def _load_chunk(desc, row, c: gl.constexpr, n, ring, full, free, SLOTS: gl.constexpr):
    """Copy chunk ``c`` (0: rope columns, 1-8: value columns ``64(c-1)…``) as ring item ``n``."""
    slot = n % SLOTS
    # The first pass over the ring waits on the phase before a fresh barrier's: no wait.
    mbarrier.wait(free.index(slot), ((n // SLOTS) & 1) ^ 1)
    mbarrier.expect(full.index(slot), CHUNK_BYTES)
    col: gl.constexpr = D_NOPE if c == 0 else (c - 1) * 64
    tma.async_copy_global_to_shared(desc, [row, col], full.index(slot), ring.index(slot))


@gluon.jit
def _loader(
    kv_desc, kv, ring, full, free, block_table, stride_btb, i_b, key_start, key_end, seqlen,
    q_desc, q_smem, q_bar, i_m, ROWS: gl.constexpr, Q_TMA: gl.constexpr, PAGE: gl.constexpr,
    SLOTS: gl.constexpr,
):  # fmt: skip
    """One warp: the 16-row query tile, then every key tile's nine chunks in ring order."""
    if Q_TMA:
        mbarrier.expect(q_bar, 9 * 16 * 64 * 2)
        row_q = (i_b * ROWS + i_m * 16).to(gl.int32)
        for c in gl.static_range(9):
            tma.async_copy_global_to_shared(q_desc, [row_q, c * 64], q_bar, q_smem.index(c))
    n_tiles = gl.cdiv(key_end - key_start, 64)
    p_bt = block_table + i_b * stride_btb
    for j in range(n_tiles):
        k0 = key_start + j * 64
        row0 = gl.load(p_bt + k0 // PAGE) * PAGE + k0 % PAGE
        if k0 + 64 <= seqlen:
            for c in gl.static_range(9):
                _load_chunk(kv_desc, row0, c, j * 9 + c, ring, full, free, SLOTS)
        else:
            # Rows past the sequence's end may hold anything (NaN): a descriptor that
            # stops at the last key makes the copy engine write zeros there instead.
            tail = tma.make_tensor_descriptor(
                kv + row0.to(gl.int64) * D_QK,
                [seqlen - k0, D_QK],
                [D_QK, 1],
                [64, 64],
                kv_desc.layout,
            )
            for c in gl.static_range(9):
                _load_chunk(tail, 0, c, j * 9 + c, ring, full, free, SLOTS)


@gluon.jit
def _consumer(
    G: gl.constexpr, q_smem, ring, full, free, p_smem, x_smem, q_bar, out, lse, o_part,
    lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh,
    stride_lb, stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr,
    CAUSAL: gl.constexpr, Q_TMA: gl.constexpr, SLOTS: gl.constexpr,
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
    row_o: gl.constexpr = gl.SliceLayout(1, mma_o)
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
    p_tile = p_smem.index(G)
    n_tiles = gl.cdiv(key_end - key_start, 64)
    if Q_TMA:
        mbarrier.wait(q_bar, 0)
    for j in range(n_tiles):
        # Zero, but not to the compiler: the query's shared-memory descriptors are then
        # built next to each product instead of being hoisted out of the loop (registers).
        z = j >> 30
        base = j * 9
        s = gl.zeros([64, 16], gl.float32, layout=mma_s)
        for c in gl.static_range(9):
            slot = (base + c) % SLOTS
            mbarrier.wait(full.index(slot), ((base + c) // SLOTS) & 1)
            s = warpgroup_mma(
                ring.index(slot),
                q_smem.index((8 if c == 0 else c - 1) + z).permute((1, 0)),
                s,
                is_async=True,
            )
        s = warpgroup_mma_wait(0, deps=[s])
        # Done with the rope chunk and the other consumer's value columns.
        for c in gl.static_range(9):
            if c == 0 or (c - 1) // 4 != G:
                mbarrier.arrive(free.index((base + c) % SLOTS))
        o_k = key_start + j * 64 + gl.arange(0, 64, layout=gl.SliceLayout(1, mma_s))
        s = gl.where(o_k[:, None] < lim[None, :], s * qk_scale, float("-inf"))
        m_new = gl.maximum(m, gl.max(s, axis=0))
        scale = gl.exp2(m - m_new)
        p = gl.exp2(s - m_new[None, :])
        l_sum = l_sum * scale + gl.sum(p, axis=0)
        m = m_new
        # P as the A operand [rows, keys]: rows 0-15 of a 64-row tile whose rest stays
        # zero. The previous tile's products have finished reading it (waited below).
        p_tile.slice(0, 16).store(gl.permute(p.to(p_smem.dtype), [1, 0]))
        x_smem.index(G).slice(0, 16).store(scale)
        fence_async_shared()
        gl.thread_barrier()
        row_scale = x_smem.index(G).load(row_o)[:, None]
        v0 = (base + 1 + 4 * G) % SLOTS
        v1 = (base + 2 + 4 * G) % SLOTS
        v2 = (base + 3 + 4 * G) % SLOTS
        v3 = (base + 4 + 4 * G) % SLOTS
        o0 = warpgroup_mma(p_tile, ring.index(v0), o0 * row_scale, is_async=True)
        o1 = warpgroup_mma(p_tile, ring.index(v1), o1 * row_scale, is_async=True)
        o2 = warpgroup_mma(p_tile, ring.index(v2), o2 * row_scale, is_async=True)
        o3 = warpgroup_mma(p_tile, ring.index(v3), o3 * row_scale, is_async=True)
        # Each value chunk goes back to the loader as soon as its product is done.
        o0 = warpgroup_mma_wait(3, deps=[o0])
        mbarrier.arrive(free.index(v0))
        o1 = warpgroup_mma_wait(2, deps=[o1])
        mbarrier.arrive(free.index(v1))
        o2 = warpgroup_mma_wait(1, deps=[o2])
        mbarrier.arrive(free.index(v2))
        o3 = warpgroup_mma_wait(0, deps=[o3])
        mbarrier.arrive(free.index(v3))

    # The rows' max and sum move to the output's row layout through shared memory.
    gl.thread_barrier()
    x_smem.index(G).slice(0, 16).store(m)
    x_smem.index(2 + G).slice(0, 16).store(l_sum)
    gl.thread_barrier()
    m_o = x_smem.index(G).load(row_o)
    l_o = x_smem.index(2 + G).load(row_o)
    o_ro = gl.arange(0, 64, layout=row_o)
    r_o = i_m * 16 + o_ro
    m_r = (o_ro < 16) & (r_o < ROWS)
    o_c = 256 * G + gl.arange(0, 64, layout=gl.SliceLayout(0, mma_o))
    m_rc = m_r[:, None] & (o_c < D_NOPE)[None, :]
    if i_slot < 0:
        # The sequence is one piece: final output and natural-log LSE.
        inv = 1.0 / l_o
        i_tok = r_o // H_Q
        i_head = r_o % H_Q
        p_o = out + i_b * stride_ob + i_tok.to(gl.int64) * stride_os + i_head * stride_oh
        p_oc = p_o[:, None] + o_c[None, :]
        gl.store(p_oc, (o0 * inv[:, None]).to(out.dtype.element_ty), mask=m_rc)
        gl.store(p_oc + 64, (o1 * inv[:, None]).to(out.dtype.element_ty), mask=m_rc)
        gl.store(p_oc + 128, (o2 * inv[:, None]).to(out.dtype.element_ty), mask=m_rc)
        gl.store(p_oc + 192, (o3 * inv[:, None]).to(out.dtype.element_ty), mask=m_rc)
        if G == 0:
            gl.store(
                lse + i_b * stride_lb + i_head * stride_lh + i_tok * stride_ls,
                (m_o + gl.log2(l_o)) * LN2,
                mask=m_r,
            )
    else:
        # A row may see no key of this piece (causal, early draft token): weight 0 in merge.
        empty = l_o == 0.0
        l_safe = gl.where(empty, 1.0, l_o)
        inv_part = 1.0 / l_safe
        o_slot = i_slot.to(gl.int64) * ROWS + r_o
        p_pc = o_part + o_slot[:, None] * D_NOPE + o_c[None, :]
        gl.store(p_pc, o0 * inv_part[:, None], mask=m_rc)
        gl.store(p_pc + 64, o1 * inv_part[:, None], mask=m_rc)
        gl.store(p_pc + 128, o2 * inv_part[:, None], mask=m_rc)
        gl.store(p_pc + 192, o3 * inv_part[:, None], mask=m_rc)
        if G == 0:
            gl.store(
                lse_part + o_slot, gl.where(empty, float("-inf"), m_o + gl.log2(l_safe)), mask=m_r
            )


# The partitions' entry points (a role flag cannot travel in a partition's arguments).
@gluon.jit
def _first(
    q_smem, ring, full, free, p_smem, x_smem, q_bar, out, lse, o_part, lse_part, i_b, i_m,
    i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh, stride_lb, stride_lh,
    stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr, SLOTS: gl.constexpr,
):  # fmt: skip
    _consumer(
        0, q_smem, ring, full, free, p_smem, x_smem, q_bar, out, lse, o_part, lse_part, i_b,
        i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh, stride_lb,
        stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL, Q_TMA, SLOTS,
    )  # fmt: skip


@gluon.jit
def _second(
    q_smem, ring, full, free, p_smem, x_smem, q_bar, out, lse, o_part, lse_part, i_b, i_m,
    i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh, stride_lb, stride_lh,
    stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr, SLOTS: gl.constexpr,
):  # fmt: skip
    _consumer(
        1, q_smem, ring, full, free, p_smem, x_smem, q_bar, out, lse, o_part, lse_part, i_b,
        i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh, stride_lb,
        stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL, Q_TMA, SLOTS,
    )  # fmt: skip


@gluon.jit
def mla_ring_kernel(
    q, q_desc, kv, kv_desc, block_table, seqlens, units, out, lse, o_part, lse_part,
    stride_qb, stride_qs, stride_qh, stride_btb, stride_ob, stride_os, stride_oh,
    stride_lb, stride_lh, stride_ls, qk_scale,
    S_Q: gl.constexpr, H_Q: gl.constexpr, PAGE: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr, SLOTS: gl.constexpr, REGS: gl.constexpr, LOAD_REGS: gl.constexpr,
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
        # No program reads a key past the limit of its last draft token.
        last_tok = (gl.minimum(i_m * 16 + 16, ROWS) - 1) // H_Q
        key_end = gl.minimum(seqlen - S_Q + 1 + last_tok, key_end)

    layout: gl.constexpr = kv_desc.layout
    q_smem = gl.allocate_shared_memory(kv_desc.dtype, [9, 16, 64], layout)
    ring = gl.allocate_shared_memory(kv_desc.dtype, [SLOTS, 64, 64], layout)
    p_smem = gl.allocate_shared_memory(kv_desc.dtype, [2, 64, 64], layout)
    # Per consumer: the row scale of the tile (then the row max), and the row sum.
    x_smem = gl.allocate_shared_memory(gl.float32, [4, 64], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    full = gl.allocate_shared_memory(gl.int64, [SLOTS, 1], mbarrier.MBarrierLayout())
    free = gl.allocate_shared_memory(gl.int64, [SLOTS, 1], mbarrier.MBarrierLayout())
    q_bar = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    # Every chunk is read by both consumers (Sᵀ), a value chunk also by its owner (P · V),
    # and each consumer releases each chunk once.
    for i in gl.static_range(SLOTS):
        mbarrier.init(full.index(i), count=1)
        mbarrier.init(free.index(i), count=2)
    mbarrier.init(q_bar.index(0), count=1)

    # Rows 16-63 of both P tiles and row scales stay zero: padding of the 64-row product.
    zl: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    for i in gl.static_range(2):
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
        q_smem, ring, full, free, p_smem, x_smem, q_bar.index(0), out, lse, o_part, lse_part,
        i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL, Q_TMA, SLOTS,
    )  # fmt: skip
    loader_args = (
        kv_desc, kv, ring, full, free, block_table, stride_btb, i_b, key_start, key_end, seqlen,
        q_desc, q_smem, q_bar.index(0), i_m, ROWS, Q_TMA, PAGE, SLOTS,
    )  # fmt: skip
    gl.warp_specialize(
        [(_first, args), (_second, args), (_loader, loader_args)], [4, 1], [REGS, LOAD_REGS]
    )


def launch_ring(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    seqlens: torch.Tensor,
    units: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    o_arg: torch.Tensor,
    lse_arg: torch.Tensor,
    *,
    softmax_scale_log2: float,
    causal: bool,
    num_units: int,
    scratch: ScratchAllocator,
) -> None:
    """Launch the ring kernel over ``(1, num_units)`` for ``s_q · h_q ≤ 16`` query rows.

    Called by :func:`kernelopt.kernels.mla.seesaw.launch_seesaw`, which has checked the
    inputs and merges split sequences afterwards; ``o_arg``/``lse_arg`` are the partial
    outputs' workspace (or any float32 tensor when no sequence is split).
    """
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    from kernelopt.kernels.mla.hopper import _scratch
    from kernelopt.kernels.mla.seesaw import _LAYOUT

    _, s_q, h_q, _ = q.shape
    page = kv_cache.shape[1]
    rows_kv = kv_cache.shape[0] * page
    kv_desc = TensorDescriptor(
        kv_cache.view(rows_kv, 576), [rows_kv, 576], [576, 1], [64, 64], _LAYOUT
    )
    q_tma = q.is_contiguous() and q.data_ptr() % 16 == 0
    q_desc = (
        TensorDescriptor(q.view(-1, 576), [q.numel() // 576, 576], [576, 1], [16, 64], _LAYOUT)
        if q_tma
        else kv_desc
    )
    grid = (triton.cdiv(s_q * h_q, MAX_ROWS), num_units)
    with _scratch(scratch):
        mla_ring_kernel[grid](
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
            PAGE=page,
            CAUSAL=causal,
            Q_TMA=q_tma,
            SLOTS=SLOTS,
            REGS=CONSUMER_REGS,
            LOAD_REGS=LOADER_REGS,
            num_warps=4,
        )
