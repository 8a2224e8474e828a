# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""MLA decode of at most 16 query rows from the FP8 cache on Hopper (Gluon): the ring kernel's
products behind a dequantizing warpgroup.

The cache is FlashMLA's 656-byte layout (:mod:`kernelopt.kernels.mla.fp8`): per token 512
``e4m3`` latent values, four float32 scales (one per 128 values), 64 bfloat16 RoPE values.
At 16 query rows decode streams the cache, so 0.57 of the bytes is the gain to take; the
products stay the bfloat16 ones of :mod:`kernelopt.kernels.mla.ring` (``Sᵀ = K · Qᵀ``,
``Oᵀ += Vᵀ · Pᵀ``, the query's 16 rows in ``wgmma`` N), because ``wgmma`` multiplies
``e4m3`` only by ``e4m3`` and the query is not quantized.

Warps (``gl.warp_specialize``):

* **loader** (one warp) copies, per key tile, the tile's scales (``[64, 4]`` float32), its
  512 latent columns as four groups of 128 (one scale each; a group is two ``[64, 64]``
  ``e4m3`` boxes) and its RoPE part (``[64, 64]`` bfloat16), into a ring of ``SLOTS``
  8 KiB slots read in tile order;
* **dequantizer** (a warpgroup) turns each tile into bfloat16 ``value · scale`` in the
  staging buffer of the consumer that owns the tile, two groups at a time, gives both ring
  slots back after one proxy fence and one barrier (one a group was 1-3 % slower on the
  H200), and hands the whole staged tile over with one barrier;
* two **consumers** (warpgroups) alternate key tiles exactly as in the ring kernel, each
  reading its own staging buffer (nine ``[64, 64]`` chunks: RoPE, then latent 0-511), and
  merge their halves of the keys at the end (:func:`kernelopt.kernels.mla.ring._finish`).

The ring is read by one warpgroup in the order it is written, so a slot's phase parity
always refers to the copy the loader issued last into it. The staging buffers are what
the consumers multiply from: a consumer's buffer goes back to the dequantizer once the
tile's last product is done.

Dequantizing to bfloat16 rounds ``value · scale`` once (exact for the quantizer's
power-of-two scales), as the split-KV kernel's FP8 path does. Rows past a sequence's end
are read through descriptors that stop at its last key: the copy engine writes zeros
(zero values, zero scales), never stale NaN.

Resources (ptxas, sm_90a): 229,228 bytes of shared memory (query 18 KiB, two staged tiles
144 KiB, the ring 48 KiB: 1.2 tiles in flight, scales 4 KiB, P tiles 8 KiB), 16 warps, no
spills with 160 registers for the second consumer and 128 for the dequantizer.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from kernelopt.kernels.mla.ring import (
    MAX_ROWS,
    _consumer_start,
    _copy_q_tile,
    _finish,
    _gather_q,
    _piece,
    _softmax_tile,
    _tile_row,
)

D_QK: gl.constexpr = gl.constexpr(576)
ROW_BYTES: gl.constexpr = gl.constexpr(656)
SLOT_BYTES: gl.constexpr = gl.constexpr(64 * 128)
SCALE_BYTES: gl.constexpr = gl.constexpr(64 * 4 * 4)
SLOTS_PER_TILE: gl.constexpr = gl.constexpr(5)
# Where a row's parts sit, in the units of the view each is copied through: the scales at
# bytes 512-527 (float32 columns 128-131), the RoPE values at bytes 528-655 (bfloat16
# columns 264-327).
SCALE_COL: gl.constexpr = gl.constexpr(128)
ROPE_COL: gl.constexpr = gl.constexpr(264)

__all__ = ["MAX_ROWS", "SLOTS", "mla_ring_fp8_kernel"]

SLOTS = 6
"""8 KiB ring slots (four ``e4m3`` groups of 128 columns and the RoPE part make a tile): what
is left of 227 KiB after the query, the two staged tiles, the scales and the P tiles."""
SCALE_SLOTS = 4
CONSUMER_REGS = 160
DEQUANT_REGS = 128
LOADER_REGS = 24


@gluon.jit
def _slot(j, c, SLOTS: gl.constexpr):
    """Ring slot and phase parity of part ``c`` (0-3 latent groups, 4 RoPE) of tile ``j``."""
    k = j * SLOTS_PER_TILE + c
    return k % SLOTS, (k // SLOTS) & 1


@gluon.jit
def _copy(desc, row, col, j, c: gl.constexpr, ring, full, free, SLOTS: gl.constexpr):
    slot, phase = _slot(j, c, SLOTS)
    # The first pass over the ring waits on the phase before a fresh barrier's: no wait.
    mbarrier.wait(free.index(slot), phase ^ 1)
    mbarrier.expect(full.index(slot), SLOT_BYTES)
    if c < 4:
        # A latent group: two 64-column e4m3 boxes into the slot's two halves.
        pair = ring.index(slot)._reinterpret(gl.float8e4nv, [2, 64, 64], desc.layout)
        tma.async_copy_global_to_shared(desc, [row, col], full.index(slot), pair.index(0))
        tma.async_copy_global_to_shared(desc, [row, col + 64], full.index(slot), pair.index(1))
    else:
        tma.async_copy_global_to_shared(desc, [row, col], full.index(slot), ring.index(slot))


@gluon.jit
def _copy_tile(f8_desc, sc_desc, rp_desc, row, j, ring, full, free, scales, sc_full, sc_free,
               SLOTS: gl.constexpr, SCALE_SLOTS: gl.constexpr):  # fmt: skip
    """Issue the copies of key tile ``j`` whose first cache row is ``row`` of the descriptors."""
    s = j % SCALE_SLOTS
    mbarrier.wait(sc_free.index(s), ((j // SCALE_SLOTS) & 1) ^ 1)
    mbarrier.expect(sc_full.index(s), SCALE_BYTES)
    tma.async_copy_global_to_shared(sc_desc, [row, SCALE_COL], sc_full.index(s), scales.index(s))
    for g in gl.static_range(4):
        _copy(f8_desc, row, g * 128, j, g, ring, full, free, SLOTS)
    _copy(rp_desc, row, ROPE_COL, j, 4, ring, full, free, SLOTS)


@gluon.jit
def _loader(
    f8_desc, sc_desc, rp_desc, kv8, kv32, kv16, ring, full, free, scales, sc_full, sc_free,
    block_table, stride_btb, i_b, key_start, key_end, seqlen, row_first, q_desc, q_smem, q_bar,
    i_m, ROWS: gl.constexpr, Q_TMA: gl.constexpr, PAGE: gl.constexpr, SLOTS: gl.constexpr,
    SCALE_SLOTS: gl.constexpr,
):  # fmt: skip
    """One warp: the 16-row query tile, then every key tile's parts in ring order."""
    if Q_TMA:
        _copy_q_tile(q_desc, q_smem, q_bar, i_b, i_m, ROWS)
    n_tiles = gl.cdiv(key_end - key_start, 64)
    p_bt = block_table + i_b * stride_btb
    for j in range(n_tiles):
        k0 = key_start + j * 64
        row0 = _tile_row(p_bt, j, k0, row_first, PAGE)
        if k0 + 64 <= seqlen:
            _copy_tile(f8_desc, sc_desc, rp_desc, row0, j, ring, full, free, scales, sc_full,
                       sc_free, SLOTS, SCALE_SLOTS)  # fmt: skip
        else:
            # Rows past the sequence's end may hold anything (NaN): descriptors that stop
            # at the last key make the copy engine write zeros there instead.
            n = seqlen - k0
            base = row0.to(gl.int64)
            f8_tail = tma.make_tensor_descriptor(
                kv8 + base * ROW_BYTES, [n, ROW_BYTES], [ROW_BYTES, 1], [64, 64], f8_desc.layout
            )
            sc_tail = tma.make_tensor_descriptor(
                kv32 + base * (ROW_BYTES // 4), [n, ROW_BYTES // 4], [ROW_BYTES // 4, 1],
                [64, 4], sc_desc.layout,
            )  # fmt: skip
            rp_tail = tma.make_tensor_descriptor(
                kv16 + base * (ROW_BYTES // 2), [n, ROW_BYTES // 2], [ROW_BYTES // 2, 1],
                [64, 64], rp_desc.layout,
            )  # fmt: skip
            _copy_tile(f8_tail, sc_tail, rp_tail, 0, j, ring, full, free, scales, sc_full,
                       sc_free, SLOTS, SCALE_SLOTS)  # fmt: skip


@gluon.jit
def _read_group(ring, full, j, g: gl.constexpr, f8_layout: gl.constexpr, blk: gl.constexpr,
                SLOTS: gl.constexpr):  # fmt: skip
    """Wait for latent group ``g`` of tile ``j`` and read its two 64-column ``e4m3`` chunks."""
    slot, phase = _slot(j, g, SLOTS)
    mbarrier.wait(full.index(slot), phase)
    pair = ring.index(slot)._reinterpret(gl.float8e4nv, [2, 64, 64], f8_layout)
    return slot, pair.index(0).load(blk), pair.index(1).load(blk)


@gluon.jit
def _stage_group(stage, G, g: gl.constexpr, lo, hi, sc, groups):
    """Store latent group ``g`` as bfloat16 ``value · scale`` in consumer ``G``'s buffer."""
    scale = gl.sum(gl.where(groups[None, :] == g, sc, 0.0), axis=1)[:, None]
    # A group is two 64-column chunks, here and in the ring slot it came from.
    stage.index(9 * G + 1 + 2 * g).store((lo.to(gl.float32) * scale).to(stage.dtype))
    stage.index(9 * G + 2 + 2 * g).store((hi.to(gl.float32) * scale).to(stage.dtype))


@gluon.jit
def _dequantizer(
    ring, full, free, scales, sc_full, sc_free, stage, st_full, st_free, key_start, key_end,
    SLOTS: gl.constexpr, SCALE_SLOTS: gl.constexpr,
):  # fmt: skip
    """One warpgroup: every key tile, in order, into its consumer's staging buffer as bf16."""
    # 16 consecutive bytes a thread: one vector load of e4m3, two vector stores of bf16.
    blk: gl.constexpr = gl.BlockedLayout([1, 16], [8, 4], [4, 1], [1, 0])
    # The scales [64 keys, 4 groups] in the chunks' own layout (each thread holds its rows'
    # four, repeated): a group's column summed over the row is already in the chunk's rows.
    sl: gl.constexpr = blk
    f8_layout: gl.constexpr = gl.NVMMASharedLayout(
        swizzle_byte_width=64, element_bitwidth=8, rank=2
    )
    n_tiles = gl.cdiv(key_end - key_start, 64)
    groups = gl.arange(0, 4, layout=gl.SliceLayout(0, sl))
    for j in range(n_tiles):
        G = j & 1
        t = j >> 1
        # The consumer's buffer is free once its tile before this one is multiplied.
        mbarrier.wait(st_free.index(G), (t & 1) ^ 1)
        s = j % SCALE_SLOTS
        mbarrier.wait(sc_full.index(s), (j // SCALE_SLOTS) & 1)
        sc = scales.index(s).load(sl)
        # Groups are read two at a time and their slots given back together: one fence and
        # one barrier a pair instead of one a group.
        for h in gl.static_range(2):
            slot_a, lo_a, hi_a = _read_group(ring, full, j, 2 * h, f8_layout, blk, SLOTS)
            slot_b, lo_b, hi_b = _read_group(ring, full, j, 2 * h + 1, f8_layout, blk, SLOTS)
            # An arrive is one thread's: the whole warpgroup must be done reading the slots
            # (and, at the first pair, the scales) before the loader may refill them. The
            # reads are generic-proxy accesses and the refill a TMA write: fence, then barrier.
            fence_async_shared()
            gl.thread_barrier()
            if h == 0:
                mbarrier.arrive(sc_free.index(s))
            mbarrier.arrive(free.index(slot_a))
            mbarrier.arrive(free.index(slot_b))
            _stage_group(stage, G, 2 * h, lo_a, hi_a, sc, groups)
            _stage_group(stage, G, 2 * h + 1, lo_b, hi_b, sc, groups)
        slot, phase = _slot(j, 4, SLOTS)
        mbarrier.wait(full.index(slot), phase)
        rope = ring.index(slot).load(blk)
        fence_async_shared()
        gl.thread_barrier()
        mbarrier.arrive(free.index(slot))
        stage.index(9 * G).store(rope)
        # The consumer's products read the buffer through the async proxy.
        fence_async_shared()
        gl.thread_barrier()
        mbarrier.arrive(st_full.index(G))


@gluon.jit
def _consumer(
    G: gl.constexpr, q_smem, stage, st_full, st_free, p_smem, x_smem, bars, q_bar, out, lse,
    o_part, lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os,
    stride_oh, stride_lb, stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr,
    CAUSAL: gl.constexpr, Q_TMA: gl.constexpr,
):  # fmt: skip
    """One consumer warpgroup: key tiles ``G, G + 2, …`` from its staging buffer, as ``Oᵀ``."""
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 16, 16]
    )
    lim, a0, a1, a2, a3, a4, a5, a6, a7, m, l_sum = _consumer_start(
        i_m, seqlen, key_end, q_bar, S_Q, H_Q, CAUSAL, Q_TMA, mma
    )
    n_tiles = gl.cdiv(key_end - key_start, 64)
    for j in range(G, n_tiles, 2):
        z = j >> 30  # zero, but not to the compiler (see the ring kernel)
        mbarrier.wait(st_full.index(G), (j >> 1) & 1)
        s = gl.zeros([64, 16], gl.float32, layout=mma)
        for c in gl.static_range(9):
            s = warpgroup_mma(
                stage.index(9 * G + c),
                q_smem.index((8 if c == 0 else c - 1) + z).permute((1, 0)),
                s,
                is_async=True,
            )
        s = warpgroup_mma_wait(0, deps=[s])
        p_b, scale, m, l_sum = _softmax_tile(
            s, m, l_sum, lim, key_start + j * 64, qk_scale, p_smem, 2 * G + ((j >> 1) & 1), mma
        )
        v = 9 * G + 1 + z
        a0 = warpgroup_mma(stage.index(v).permute((1, 0)), p_b, a0 * scale, is_async=True)
        a1 = warpgroup_mma(stage.index(v + 1).permute((1, 0)), p_b, a1 * scale, is_async=True)
        a2 = warpgroup_mma(stage.index(v + 2).permute((1, 0)), p_b, a2 * scale, is_async=True)
        a3 = warpgroup_mma(stage.index(v + 3).permute((1, 0)), p_b, a3 * scale, is_async=True)
        a4 = warpgroup_mma(stage.index(v + 4).permute((1, 0)), p_b, a4 * scale, is_async=True)
        a5 = warpgroup_mma(stage.index(v + 5).permute((1, 0)), p_b, a5 * scale, is_async=True)
        a6 = warpgroup_mma(stage.index(v + 6).permute((1, 0)), p_b, a6 * scale, is_async=True)
        a7 = warpgroup_mma(stage.index(v + 7).permute((1, 0)), p_b, a7 * scale, is_async=True)
        a0, a1, a2, a3, a4, a5, a6, a7 = warpgroup_mma_wait(
            0, deps=[a0, a1, a2, a3, a4, a5, a6, a7]
        )
        mbarrier.arrive(st_free.index(G))

    # Both staging buffers are dead once both consumers are past their loops.
    xch = stage._reinterpret(gl.float32, [36, 64, 16], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    _finish(
        G, a0, a1, a2, a3, a4, a5, a6, a7, m, l_sum, xch, x_smem, bars, out, lse, o_part,
        lse_part, i_b, i_m, i_slot, stride_ob, stride_os, stride_oh, stride_lb, stride_lh,
        stride_ls, S_Q, H_Q, mma,
    )  # fmt: skip


# The partitions' entry points (a role flag cannot travel in a partition's arguments).
@gluon.jit
def _first(
    q_smem, stage, st_full, st_free, p_smem, x_smem, bars, q_bar, out, lse, o_part, lse_part,
    i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh, stride_lb,
    stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr,
):  # fmt: skip
    _consumer(
        0, q_smem, stage, st_full, st_free, p_smem, x_smem, bars, q_bar, out, lse, o_part,
        lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL, Q_TMA,
    )  # fmt: skip


@gluon.jit
def _second(
    q_smem, stage, st_full, st_free, p_smem, x_smem, bars, q_bar, out, lse, o_part, lse_part,
    i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh, stride_lb,
    stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr,
):  # fmt: skip
    _consumer(
        1, q_smem, stage, st_full, st_free, p_smem, x_smem, bars, q_bar, out, lse, o_part,
        lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL, Q_TMA,
    )  # fmt: skip


@gluon.jit
def mla_ring_fp8_kernel(
    q, q_desc, kv8, kv32, kv16, f8_desc, sc_desc, rp_desc, block_table, seqlens, units, out, lse,
    o_part, lse_part, stride_qb, stride_qs, stride_qh, stride_btb, stride_ob, stride_os,
    stride_oh, stride_lb, stride_lh, stride_ls, qk_scale,
    S_Q: gl.constexpr, H_Q: gl.constexpr, PAGE: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr, SLOTS: gl.constexpr, SCALE_SLOTS: gl.constexpr, REGS: gl.constexpr,
    DEQUANT_REGS: gl.constexpr, LOAD_REGS: gl.constexpr,
):  # fmt: skip
    """Grid ``(1, pieces)``: one 16-row query tile against one piece of a sequence.

    ``kv8``/``kv32``/``kv16`` are the same cache bytes typed as ``e4m3``, float32 and
    bfloat16 (``[rows, 656]``, ``[rows, 164]``, ``[rows, 328]``), for the tail tiles'
    descriptors; ``f8_desc``/``sc_desc``/``rp_desc`` describe them for full tiles.
    """
    ROWS: gl.constexpr = S_Q * H_Q
    i_m = gl.program_id(0)
    i_b, key_start, key_end, i_slot, seqlen, row_first = _piece(
        units, seqlens, block_table, stride_btb, i_m, S_Q, H_Q, PAGE, CAUSAL
    )

    layout: gl.constexpr = q_desc.layout
    q_smem = gl.allocate_shared_memory(gl.bfloat16, [9, 16, 64], layout)
    stage = gl.allocate_shared_memory(gl.bfloat16, [18, 64, 64], layout)
    # 8 KiB slots: a latent group as two e4m3 [64, 64] halves, or the RoPE part as bf16.
    ring = gl.allocate_shared_memory(gl.bfloat16, [SLOTS, 64, 64], layout)
    scales = gl.allocate_shared_memory(gl.float32, [SCALE_SLOTS, 64, 4], sc_desc.layout)
    p_smem = gl.allocate_shared_memory(gl.bfloat16, [4, 16, 64], layout)
    x_smem = gl.allocate_shared_memory(gl.float32, [4, 64], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    full = gl.allocate_shared_memory(gl.int64, [SLOTS, 1], mbarrier.MBarrierLayout())
    free = gl.allocate_shared_memory(gl.int64, [SLOTS, 1], mbarrier.MBarrierLayout())
    sc_full = gl.allocate_shared_memory(gl.int64, [SCALE_SLOTS, 1], mbarrier.MBarrierLayout())
    sc_free = gl.allocate_shared_memory(gl.int64, [SCALE_SLOTS, 1], mbarrier.MBarrierLayout())
    st_full = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    st_free = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    # Both consumers past their loops; both halves handed over; the query loaded.
    bars = gl.allocate_shared_memory(gl.int64, [3, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(SLOTS):
        mbarrier.init(full.index(i), count=1)
        mbarrier.init(free.index(i), count=1)
    for i in gl.static_range(SCALE_SLOTS):
        mbarrier.init(sc_full.index(i), count=1)
        mbarrier.init(sc_free.index(i), count=1)
    for i in gl.static_range(2):
        mbarrier.init(st_full.index(i), count=1)
        mbarrier.init(st_free.index(i), count=1)
    mbarrier.init(bars.index(0), count=2)
    mbarrier.init(bars.index(1), count=2)
    mbarrier.init(bars.index(2), count=1)
    if not Q_TMA:
        _gather_q(q, q_smem, i_b, i_m, stride_qb, stride_qs, stride_qh, H_Q, ROWS)
    fence_async_shared()
    gl.thread_barrier()

    args = (
        q_smem, stage, st_full, st_free, p_smem, x_smem, bars, bars.index(2), out, lse, o_part,
        lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL, Q_TMA,
    )  # fmt: skip
    dequant_args = (
        ring, full, free, scales, sc_full, sc_free, stage, st_full, st_free, key_start, key_end,
        SLOTS, SCALE_SLOTS,
    )  # fmt: skip
    loader_args = (
        f8_desc, sc_desc, rp_desc, kv8, kv32, kv16, ring, full, free, scales, sc_full, sc_free,
        block_table, stride_btb, i_b, key_start, key_end, seqlen, row_first, q_desc, q_smem,
        bars.index(2), i_m, ROWS, Q_TMA, PAGE, SLOTS, SCALE_SLOTS,
    )  # fmt: skip
    gl.warp_specialize(
        [(_first, args), (_second, args), (_dequantizer, dequant_args), (_loader, loader_args)],
        [4, 4, 1],
        [REGS, DEQUANT_REGS, LOAD_REGS],
    )
