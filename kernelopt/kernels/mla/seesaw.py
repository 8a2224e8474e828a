# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""Seesaw MLA decode for Hopper (Gluon): two warpgroups share one 64 × 512 output, a third loads.

Same work layout, schedule and LSE merge as :mod:`kernelopt.kernels.mla.split_kv`; the
program for one 64-row query tile and one piece of a sequence is written in Gluon, Triton's
lower-level dialect, because the schedule below assigns different work to different
warpgroups, which Triton's compiler cannot be asked for (``docs/kernels/mla_decode.md``,
v2: the two warpgroups of one Triton program serialize QKᵀ, softmax and PV). Sequences
with at most ``RING_ROWS`` query rows run :mod:`kernelopt.kernels.mla.ring` instead.

Warpgroups (``gl.warp_specialize``):

* **left** (the default partition) owns output columns 0-255 and computes S for the even key
  tiles; **right** owns columns 256-511 and the odd tiles. Each holds a 64 × 256 float32
  accumulator (128 registers a thread) and a full 64 × 64 S, so QKᵀ runs at N = 64 (the
  v2 kernel split S between the warpgroups at N = 32, where ``wgmma`` reading Q from shared
  memory outruns shared-memory bandwidth).
* **loader** (one warp, 24 registers) issues the TMA copies: the query tile once, then each
  key tile in three groups (columns 0-255, 256-511, the rope part), each with a "full" and a
  "free" barrier. A group is reloaded for the next tile as soon as its readers are done
  with it, so the next QKᵀ starts while the last products still read the other groups.

Per pair of key tiles (0 even, 1 odd), the online softmax runs as a seesaw: left computes
S0, its row max and P0 and hands the max to right; right computes S1 against it, hands
back P1 and its scale; each then multiplies both tiles' P into its own half of the output,
P from registers for its own tile and from shared memory for the other's. The two
warpgroups' softmax phases fall at different times, so one's tensor-core work overlaps the
other's exponentials. The exchange rescales P0 by the odd tile's scale before right uses
it, keeping both halves relative to the same running max.

Resources (ptxas, sm_90a): 226 KiB of shared memory (Q's latent part 64 KiB, two key tiles
2 × 72 KiB, two P tiles 16 KiB; Q's rope part stays in registers), no spills. Shared-
memory descriptors are built next to each product (an index offset the compiler cannot
prove zero): hoisted out of the loop they took 56 registers and spilled 712 bytes a thread.

A sequence split into exactly two pieces is merged in this kernel rather than by the merge
kernel: each warpgroup takes a ticket from its own counter before the key loop; the first
piece writes its float32 partial and LSE and publishes them (fence, then a release add),
and the second waits for that, copies the partial in by TMA through its key buffer,
combines it with its own accumulators and writes the output by TMA. Tickets are taken at
the start, so the waiting piece only ever waits for a program that is already running;
the second piece resets the counters for the next call. Other splits keep the merge kernel.

Rows past a sequence's end are read through a descriptor that stops at its last key, so
the copy engine writes zeros there (stale cache rows may hold NaN; 0 · NaN is NaN). A
contiguous query comes in by TMA as well; a strided one is gathered with pointer loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

from kernelopt._errors import DeviceError, InputError, expected
from kernelopt.kernels.mla import ring, ring_fp8
from kernelopt.kernels.mla._validate import FP8_ROW_BYTES
from kernelopt.kernels.mla.hopper import ScratchAllocator, _scratch, check_hopper_layout
from kernelopt.kernels.mla.split_kv import (
    LOG2E,
    SplitKVConfig,
    check_partial_dtype,
    launch_merge,
)

if TYPE_CHECKING:
    import torch

D_NOPE: gl.constexpr = gl.constexpr(512)
D_QK: gl.constexpr = gl.constexpr(576)
LN2: gl.constexpr = gl.constexpr(0.6931471805599453)


@gluon.jit
def _load_q_chunk(
    q, i_b, stride_qb, stride_qs, stride_qh, c: gl.constexpr, i_m, layout: gl.constexpr,
    H_Q: gl.constexpr, ROWS: gl.constexpr,
):  # fmt: skip
    """Columns ``64c … 64c + 63`` of the program's 64 query rows, in ``layout``."""
    o_r = i_m * 64 + gl.arange(0, 64, layout=gl.SliceLayout(1, layout))
    o_d = c * 64 + gl.arange(0, 64, layout=gl.SliceLayout(0, layout))
    p = q + i_b * stride_qb + (o_r // H_Q).to(gl.int64) * stride_qs + (o_r % H_Q) * stride_qh
    mask = (o_r < ROWS)[:, None] & (o_d < D_QK)[None, :]
    return gl.load(p[:, None] + o_d[None, :], mask=mask, other=0.0)


@gluon.jit
def _issue_group(kv_desc, kv, k_smem, kp_smem, bar, row0, k0, seqlen, buf, G: gl.constexpr):
    """Copy group ``G`` (0: columns 0-255, 1: 256-511, 2: the rope columns) of one key tile."""
    nbytes: gl.constexpr = 64 * 64 * 2 if G == 2 else 4 * 64 * 64 * 2
    mbarrier.expect(bar, nbytes)
    if k0 + 64 <= seqlen:
        if G == 2:
            tma.async_copy_global_to_shared(kv_desc, [row0, D_NOPE], bar, kp_smem.index(buf))
        else:
            for c in gl.static_range(4):
                tma.async_copy_global_to_shared(
                    kv_desc, [row0, (4 * G + c) * 64], bar, k_smem.index(buf * 8 + 4 * G + c)
                )
    else:
        # Rows past the sequence's end may hold anything (NaN): a descriptor that stops at
        # the last key makes the copy engine write zeros there instead (0 · NaN is NaN).
        tail = tma.make_tensor_descriptor(
            kv + row0.to(gl.int64) * D_QK, [seqlen - k0, D_QK], [D_QK, 1], [64, 64], kv_desc.layout
        )
        if G == 2:
            tma.async_copy_global_to_shared(tail, [0, D_NOPE], bar, kp_smem.index(buf))
        else:
            for c in gl.static_range(4):
                tma.async_copy_global_to_shared(
                    tail, [0, (4 * G + c) * 64], bar, k_smem.index(buf * 8 + 4 * G + c)
                )


@gluon.jit
def _load_tile_group(
    kv_desc, kv, k_smem, kp_smem, k_full, k_free, p_bt, key_start, seqlen, it, j, n_tiles,
    buf: gl.constexpr, G: gl.constexpr, PAGE: gl.constexpr,
):  # fmt: skip
    """Wait until group ``G`` of buffer ``buf`` is free, then load it for key tile ``j``."""
    if j < n_tiles:
        k0 = key_start + j * 64
        row0 = gl.load(p_bt + k0 // PAGE) * PAGE + k0 % PAGE
        mbarrier.wait(k_free.index(buf * 3 + G), (it & 1) ^ 1)
        _issue_group(
            kv_desc, kv, k_smem, kp_smem, k_full.index(buf * 3 + G), row0, k0, seqlen, buf, G
        )


@gluon.jit
def _producer(
    kv_desc, kv, k_smem, kp_smem, k_full, k_free, block_table, stride_btb, i_b, key_start, key_end,
    seqlen, q_desc, q_smem, bars, i_m, ROWS: gl.constexpr, Q_TMA: gl.constexpr, PAGE: gl.constexpr,
):  # fmt: skip
    """One warp: the query tile first, then key tiles 2i and 2i+1 into buffers 0 and 1."""
    if Q_TMA:
        q_bar = bars.index(4)
        mbarrier.expect(q_bar, 8 * 64 * 64 * 2)
        row_q = (i_b * ROWS + i_m * 64).to(gl.int32)
        for c in gl.static_range(8):
            tma.async_copy_global_to_shared(q_desc, [row_q, c * 64], q_bar, q_smem.index(c))
    n_tiles = gl.cdiv(key_end - key_start, 64)
    p_bt = block_table + i_b * stride_btb
    for it in range(gl.cdiv(n_tiles, 2)):
        j0 = 2 * it
        j1 = j0 + 1
        # In the order the consumers free the groups (see _consumer).
        _load_tile_group(
            kv_desc, kv, k_smem, kp_smem, k_full, k_free, p_bt, key_start, seqlen, it, j0, n_tiles,
            0, 2, PAGE,
        )  # fmt: skip
        _load_tile_group(
            kv_desc, kv, k_smem, kp_smem, k_full, k_free, p_bt, key_start, seqlen, it, j1, n_tiles,
            1, 2, PAGE,
        )  # fmt: skip
        _load_tile_group(
            kv_desc, kv, k_smem, kp_smem, k_full, k_free, p_bt, key_start, seqlen, it, j0, n_tiles,
            0, 0, PAGE,
        )  # fmt: skip
        _load_tile_group(
            kv_desc, kv, k_smem, kp_smem, k_full, k_free, p_bt, key_start, seqlen, it, j1, n_tiles,
            1, 1, PAGE,
        )  # fmt: skip
        _load_tile_group(
            kv_desc, kv, k_smem, kp_smem, k_full, k_free, p_bt, key_start, seqlen, it, j1, n_tiles,
            1, 0, PAGE,
        )  # fmt: skip
        _load_tile_group(
            kv_desc, kv, k_smem, kp_smem, k_full, k_free, p_bt, key_start, seqlen, it, j0, n_tiles,
            0, 1, PAGE,
        )  # fmt: skip


@gluon.jit
def _qk_group(q_smem, k_smem, k_full, s, ph, z, buf: gl.constexpr, G: gl.constexpr):
    mbarrier.wait(k_full.index(buf * 3 + G), ph)
    for c in gl.static_range(4):
        s = warpgroup_mma(
            q_smem.index(4 * G + c + z),
            k_smem.index(buf * 8 + 4 * G + c + z).permute((1, 0)),
            s,
            is_async=True,
        )
    return s


@gluon.jit
def _qk(q_smem, q_pe, k_smem, kp_smem, k_full, ph, z, buf: gl.constexpr, layout: gl.constexpr):
    """S = Q·Kᵀ of the tile in ``buf``: rope columns first, then the groups in arrival order."""
    s = gl.zeros([64, 64], gl.float32, layout=layout)
    mbarrier.wait(k_full.index(buf * 3 + 2), ph)
    s = warpgroup_mma(q_pe, kp_smem.index(buf + z).permute((1, 0)), s, use_acc=False, is_async=True)
    s = _qk_group(q_smem, k_smem, k_full, s, ph, z, buf, buf)
    s = _qk_group(q_smem, k_smem, k_full, s, ph, z, buf, 1 - buf)
    return warpgroup_mma_wait(0, deps=[s])


@gluon.jit
def _pv_issue(p, k_smem, o0, o1, o2, o3, z, buf: gl.constexpr, G: gl.constexpr):
    """Start O[:, 256G : 256G + 256] += P · V of the tile in ``buf`` (four 64-column parts)."""
    o0 = warpgroup_mma(p, k_smem.index(buf * 8 + 4 * G + z), o0, is_async=True)
    o1 = warpgroup_mma(p, k_smem.index(buf * 8 + 4 * G + 1 + z), o1, is_async=True)
    o2 = warpgroup_mma(p, k_smem.index(buf * 8 + 4 * G + 2 + z), o2, is_async=True)
    o3 = warpgroup_mma(p, k_smem.index(buf * 8 + 4 * G + 3 + z), o3, is_async=True)
    return o0, o1, o2, o3


@gluon.jit
def _pv(p, k_smem, o0, o1, o2, o3, z, buf: gl.constexpr, G: gl.constexpr):
    """O[:, 256G : 256G + 256] += P · V with P in shared memory, waited for."""
    o0, o1, o2, o3 = _pv_issue(p, k_smem, o0, o1, o2, o3, z, buf, G)
    return warpgroup_mma_wait(0, deps=[o0, o1, o2, o3])


@gluon.jit
def _mask_scale(
    s, k0, lim_lo, seqlen, key_end, i_m, qk_scale, layout: gl.constexpr, S_Q: gl.constexpr,
    H_Q: gl.constexpr, CAUSAL: gl.constexpr,
):  # fmt: skip
    """Scale S and mask keys at or past each row's limit; ``lim_lo`` is the least limit.

    Only the tiles that reach ``lim_lo`` (the last one or two of a piece) are masked, and
    the limits are computed there rather than held in registers through the loop.
    """
    s = s * qk_scale
    if k0 + 64 > lim_lo:
        o_k = k0 + gl.arange(0, 64, layout=gl.SliceLayout(0, layout))
        if CAUSAL:
            o_r = i_m * 64 + gl.arange(0, 64, layout=gl.SliceLayout(1, layout))
            lim = gl.minimum(seqlen - S_Q + 1 + o_r // H_Q, key_end)
            s = gl.where(o_k[None, :] < lim[:, None], s, float("-inf"))
        else:
            s = gl.where(o_k[None, :] < key_end, s, float("-inf"))
    return s


@gluon.jit
def _store_out_by_tma(out_desc, k_smem, o0, o1, o2, o3, row0, BASE: gl.constexpr, G: gl.constexpr):
    """Write this warpgroup's 64 × 256 output tile through key chunks ``BASE … BASE + 3``.

    Called after both warpgroups have passed the row-sum barrier, when no product reads a
    key tile any more. Stores straight from the accumulators' layout write 16 bytes of each
    of eight rows per warp instruction and took about 7 µs a program after its loop;
    staged in shared memory and copied out by TMA, about 2 µs
    (``docs/kernels/mla_decode.md``, exp 24).
    """
    k_smem.index(BASE + 0).store(o0)
    k_smem.index(BASE + 1).store(o1)
    k_smem.index(BASE + 2).store(o2)
    k_smem.index(BASE + 3).store(o3)
    fence_async_shared()
    gl.thread_barrier()
    for c in gl.static_range(4):
        tma.async_copy_shared_to_global(out_desc, [row0, 256 * G + 64 * c], k_smem.index(BASE + c))
    # The copies read shared memory after this program could otherwise have exited.
    tma.store_wait(0)


@gluon.jit
def _store_lse(lse, i_b, i_head, i_tok, stride_lb, stride_lh, stride_ls, lse2, mask):
    """Store the rows' final LSE, given in base 2, as the natural log ``lse`` holds."""
    gl.store(lse + i_b * stride_lb + i_head * stride_lh + i_tok * stride_ls, lse2 * LN2, mask=mask)


@gluon.jit
def _fence_gpu(x):
    """``fence.acq_rel.gpu`` in every thread (``x``: any scalar, to anchor the asm)."""
    gl.inline_asm_elementwise(
        "fence.acq_rel.gpu; mov.u32 $0, 0;", "=r,r", [x], dtype=gl.int32, is_pure=False, pack=1
    )


@gluon.jit
def _fence_proxy_async(x):
    """Order this thread's generic-proxy view before TMA (async-proxy) reads of global data."""
    gl.inline_asm_elementwise(
        "fence.proxy.async; mov.u32 $0, 0;", "=r,r", [x], dtype=gl.int32, is_pure=False, pack=1
    )


@gluon.jit
def _add_piece(
    y, lo_l: gl.constexpr, hi_l: gl.constexpr, k_smem, w, c: gl.constexpr, G: gl.constexpr,
    mma: gl.constexpr,
):  # fmt: skip
    """``y + w · chunk c`` of the other piece's partial, staged as two ``[64, 32]`` fp32 boxes.

    ``lo_l``/``hi_l`` are the layouts a ``[64, 64]`` accumulator splits into as column
    halves; reading the boxes in them and joining gives back the accumulator's layout.
    """
    f32: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=2)
    lo = k_smem.index(8 * G + 2 * c)._reinterpret(gl.float32, [64, 32], f32).load(lo_l)
    hi = k_smem.index(8 * G + 2 * c + 1)._reinterpret(gl.float32, [64, 32], f32).load(hi_l)
    part = gl.convert_layout(gl.reshape(gl.permute(gl.join(lo, hi), [0, 2, 1]), [64, 64]), mma)
    return y + part * w[:, None]


@gluon.jit
def _pair_counters(counters, i_b, i_m, G: gl.constexpr):
    """This warpgroup's two counters for its row tile: [0] the tickets, [1] the published flag.

    Computed where each is used, not held: a register live across the key loop spills the
    right warpgroup's loop.
    """
    return counters + ((i_b * gl.num_programs(0) + i_m) * 2 + G) * 2


@gluon.jit
def _consumer(
    LEFT: gl.constexpr, q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars, out, lse,
    o_part, lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_qb, stride_qs,
    stride_qh, stride_ob, stride_os, stride_oh, stride_lb, stride_lh, stride_ls, qk_scale,
    out_desc, o_tma, split_offsets, counters, part_desc, PAIR_MERGE: gl.constexpr,
    S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr, Q_TMA: gl.constexpr,
):  # fmt: skip
    """One warpgroup of the seesaw; LEFT owns output columns 0-255 and the even key tiles."""
    ROWS: gl.constexpr = S_Q * H_Q
    G: gl.constexpr = 0 if LEFT else 1  # the output columns (and V groups) this warpgroup owns
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16]
    )
    dot_a: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    row_l: gl.constexpr = gl.SliceLayout(1, mma)
    # The rope part of Q lives in registers (16 a thread): shared memory has no room left.
    # (Loaded here rather than through _load_q_chunk: a helper called from both the parent
    # region and a partition shares constants across the partition's isolated region.)
    o_qr = i_m * 64 + gl.arange(0, 64, layout=gl.SliceLayout(1, dot_a))
    o_qd = D_NOPE + gl.arange(0, 64, layout=gl.SliceLayout(0, dot_a))
    p_q = q + i_b * stride_qb + (o_qr // H_Q).to(gl.int64) * stride_qs + (o_qr % H_Q) * stride_qh
    q_pe = gl.load(
        p_q[:, None] + o_qd[None, :],
        mask=(o_qr < ROWS)[:, None] & (o_qd < D_QK)[None, :],
        other=0.0,
    )
    o_r = i_m * 64 + gl.arange(0, 64, layout=row_l)
    # The least of the rows' key limits (the first row's): tiles below it need no mask.
    if CAUSAL:  # noqa: SIM108 (a compile-time branch, as the kernel's others)
        lim_lo = gl.minimum(seqlen - S_Q + 1 + (i_m * 64) // H_Q, key_end)
    else:
        lim_lo = key_end
    o0 = gl.zeros([64, 64], gl.float32, layout=mma)
    o1 = gl.zeros([64, 64], gl.float32, layout=mma)
    o2 = gl.zeros([64, 64], gl.float32, layout=mma)
    o3 = gl.zeros([64, 64], gl.float32, layout=mma)
    # m starts finite, so a row with every key masked so far keeps scale 1 and p 0.
    m = gl.full([64], -1.0e30, gl.float32, layout=row_l)
    l_own = gl.zeros([64], gl.float32, layout=row_l)
    n_tiles = gl.cdiv(key_end - key_start, 64)
    if PAIR_MERGE:  # noqa: SIM102 (a compile-time branch around a run-time one)
        if i_slot >= 0:
            # This warpgroup's ticket for its sequence's row tile, taken while the query
            # tile is on its way: the second piece merges. Kept in shared memory through the
            # loop (a register live across it spills the right warpgroup's loop).
            count = _pair_counters(counters, i_b, i_m, G)
            ticket = gl.atomic_add(count, 1, sem="acq_rel", scope="gpu")
            second = (ticket == 1).to(gl.float32) + gl.zeros([64], gl.float32, layout=row_l)
            x_smem.index(6 + G).store(second)
    if Q_TMA:
        mbarrier.wait(bars.index(4), 0)
    # x_smem rows: 0 m after the even tile, 1 its scale, 2 m after the odd tile, 3 its
    # scale, 4/5 the two warpgroups' row sums, 6/7 their tickets (1.0: the second piece).
    bar_m0 = bars.index(0)
    bar_p1 = bars.index(1)
    bar_p0 = bars.index(2)
    bar_l = bars.index(3)
    for it in range(gl.cdiv(n_tiles, 2)):
        ph = it & 1
        # Zero, but not to the compiler: shared-memory descriptors are then built next to
        # each product instead of being hoisted out of the loop (56 registers, spilled).
        z = it >> 30
        k_even = key_start + (2 * it) * 64
        has_odd = 2 * it + 1 < n_tiles
        if LEFT:
            s = _qk(q_smem, q_pe, k_smem, kp_smem, k_full, ph, z, 0, mma)
            mbarrier.arrive(k_free.index(0 + 2))
            mbarrier.arrive(k_free.index(0 + 1))
            s = _mask_scale(
                s, k_even, lim_lo, seqlen, key_end, i_m, qk_scale, mma, S_Q, H_Q, CAUSAL
            )
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
            pa = gl.convert_layout(p0.to(q.dtype.element_ty), dot_a)
            o0, o1, o2, o3 = _pv_issue(pa, k_smem, o0, o1, o2, o3, z, 0, 0)
            # While that runs: the odd tile's softmax (done by the other warpgroup) rescales
            # P0, which goes to shared memory for the other half of the output.
            mbarrier.wait(bar_p1, ph)
            m = x_smem.index(2).load(row_l)
            scale1 = x_smem.index(3).load(row_l)
            p_smem.index(0).store((p0 * scale1[:, None]).to(q.dtype.element_ty))
            fence_async_shared()
            gl.thread_barrier()
            mbarrier.arrive(bar_p0)
            l_own = l_own * scale1
            o0, o1, o2, o3, pa = warpgroup_mma_wait(0, deps=[o0, o1, o2, o3, pa])
            mbarrier.arrive(k_free.index(0 + 0))
            o0 = o0 * scale1[:, None]
            o1 = o1 * scale1[:, None]
            o2 = o2 * scale1[:, None]
            o3 = o3 * scale1[:, None]
            if has_odd:
                o0, o1, o2, o3 = _pv(p_smem.index(1 + z), k_smem, o0, o1, o2, o3, z, 1, 0)
            mbarrier.arrive(k_free.index(3 + 0))
        else:
            if has_odd:
                s = _qk(q_smem, q_pe, k_smem, kp_smem, k_full, ph, z, 1, mma)
                s = _mask_scale(
                    s, k_even + 64, lim_lo, seqlen, key_end, i_m, qk_scale, mma, S_Q, H_Q, CAUSAL
                )
            else:
                s = gl.full([64, 64], float("-inf"), gl.float32, layout=mma)
            mbarrier.arrive(k_free.index(3 + 2))
            mbarrier.arrive(k_free.index(3 + 0))
            mbarrier.wait(bar_m0, ph)
            m0 = x_smem.index(0).load(row_l)
            scale0 = x_smem.index(1).load(row_l)
            m = gl.maximum(m0, gl.max(s, axis=1))
            scale1 = gl.exp2(m0 - m)
            p1 = gl.exp2(s - m[:, None])
            x_smem.index(2).store(m)
            x_smem.index(3).store(scale1)
            p_smem.index(1).store(p1.to(q.dtype.element_ty))
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
                pa = gl.convert_layout(p1.to(q.dtype.element_ty), dot_a)
                o0, o1, o2, o3 = _pv_issue(pa, k_smem, o0, o1, o2, o3, z, 1, 1)
                # P stays in the wait's dependencies: its registers are read until then.
                o0, o1, o2, o3, pa = warpgroup_mma_wait(0, deps=[o0, o1, o2, o3, pa])
            mbarrier.arrive(k_free.index(3 + 1))
            mbarrier.wait(bar_p0, ph)
            o0, o1, o2, o3 = _pv(p_smem.index(z), k_smem, o0, o1, o2, o3, z, 0, 1)
            mbarrier.arrive(k_free.index(0 + 1))

    # Row sums: each warpgroup summed the probabilities of its own tiles.
    x_smem.index(4 + G).store(l_own)
    gl.thread_barrier()
    mbarrier.arrive(bar_l)
    mbarrier.wait(bar_l, 0)
    l_sum = x_smem.index(4).load(row_l) + x_smem.index(5).load(row_l)

    m_r = o_r < ROWS
    i_tok = o_r // H_Q
    i_head = o_r % H_Q
    o_c = 256 * G + gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    m_rc = m_r[:, None] & (o_c < D_NOPE)[None, :]
    if i_slot < 0:
        # The sequence is one piece: final output and natural-log LSE.
        inv = 1.0 / l_sum
        y0 = (o0 * inv[:, None]).to(out.dtype.element_ty)
        y1 = (o1 * inv[:, None]).to(out.dtype.element_ty)
        y2 = (o2 * inv[:, None]).to(out.dtype.element_ty)
        y3 = (o3 * inv[:, None]).to(out.dtype.element_ty)
        if o_tma != 0:
            row0 = (i_b * ROWS + i_m * 64).to(gl.int32)
            _store_out_by_tma(out_desc, k_smem, y0, y1, y2, y3, row0, 4 * G, G)
        else:
            p_o = out + i_b * stride_ob + i_tok.to(gl.int64) * stride_os + i_head * stride_oh
            p_oc = p_o[:, None] + o_c[None, :]
            gl.store(p_oc, y0, mask=m_rc)
            gl.store(p_oc + 64, y1, mask=m_rc)
            gl.store(p_oc + 128, y2, mask=m_rc)
            gl.store(p_oc + 192, y3, mask=m_rc)
        if LEFT:
            _store_lse(
                lse, i_b, i_head, i_tok, stride_lb, stride_lh, stride_ls, m + gl.log2(l_sum), m_r
            )
    else:
        # A row may see no key of this piece (causal, early draft token): weight 0 in merge.
        empty = l_sum == 0.0
        l_safe = gl.where(empty, 1.0, l_sum)
        inv_part = 1.0 / l_safe
        lse_own = gl.where(empty, float("-inf"), m + gl.log2(l_safe))
        # Without PAIR_MERGE this stays i_slot < 0, false on this branch: the compiler drops
        # the merge below (a compile-time branch around it crashes Triton 3.6's lowering of
        # warp-specialized partitions, and a run-time flag cost 6 % on 8-piece splits).
        second = i_slot < 0
        if PAIR_MERGE:
            second = gl.max(x_smem.index(6 + G).load(row_l), axis=0) > 0.5
        count = _pair_counters(counters, i_b, i_m, G)
        if second:
            # The other piece's partial and LSE are published once its release add lands.
            done = gl.atomic_add(count + 1, 0, sem="acquire", scope="gpu")
            while done < 1:
                done = gl.atomic_add(count + 1, 0, sem="acquire", scope="gpu")
            gl.thread_barrier()
            _fence_gpu(i_slot)
            _fence_proxy_async(i_slot)
            other = 2 * gl.load(split_offsets + i_b) + 1 - i_slot
            f32: gl.constexpr = gl.NVMMASharedLayout(
                swizzle_byte_width=128, element_bitwidth=32, rank=2
            )
            # Its 64 x 256 columns land in this warpgroup's key buffer, free since bar_l.
            row_p = (other * ROWS + i_m * 64).to(gl.int32)
            mbarrier.expect(bars.index(5 + G), 64 * 256 * 4)
            for k in gl.static_range(8):
                tma.async_copy_global_to_shared(
                    part_desc, [row_p, 256 * G + 32 * k], bars.index(5 + G),
                    k_smem.index(8 * G + k)._reinterpret(gl.float32, [64, 32], f32),
                )  # fmt: skip
            lse_other = gl.load(
                lse_part + other.to(gl.int64) * ROWS + o_r,
                mask=m_r,
                other=float("-inf"),
                cache_modifier=".cg",
            )
            top = gl.maximum(gl.maximum(lse_own, lse_other), -1.0e30)
            w_own = gl.exp2(lse_own - top)
            w_other = gl.exp2(lse_other - top)
            w_sum = w_own + w_other
            a = w_own / w_sum * inv_part
            b = w_other / w_sum
            y0 = o0 * a[:, None]
            y1 = o1 * a[:, None]
            y2 = o2 * a[:, None]
            y3 = o3 * a[:, None]
            # The layouts an accumulator splits into as two 32-column halves.
            lo, hi = gl.split(gl.permute(gl.reshape(y0, [64, 2, 32]), [0, 2, 1]))
            lo_l: gl.constexpr = lo.type.layout
            hi_l: gl.constexpr = hi.type.layout
            mbarrier.wait(bars.index(5 + G), 0)
            y0 = _add_piece(y0, lo_l, hi_l, k_smem, b, 0, G, mma)
            y1 = _add_piece(y1, lo_l, hi_l, k_smem, b, 1, G, mma)
            y2 = _add_piece(y2, lo_l, hi_l, k_smem, b, 2, G, mma)
            y3 = _add_piece(y3, lo_l, hi_l, k_smem, b, 3, G, mma)
            # Both pieces have arrived and published: the counters are ready for the next call.
            gl.store(count, 0)
            gl.store(count + 1, 0)
            # Every thread has read the boxes before the output is staged over them.
            gl.thread_barrier()
            _store_out_by_tma(
                out_desc, k_smem, y0.to(out.dtype.element_ty), y1.to(out.dtype.element_ty),
                y2.to(out.dtype.element_ty), y3.to(out.dtype.element_ty),
                (i_b * ROWS + i_m * 64).to(gl.int32), 8 * G, G,
            )  # fmt: skip
            if LEFT:
                _store_lse(
                    lse, i_b, i_head, i_tok, stride_lb, stride_lh, stride_ls,
                    top + gl.log2(w_sum), m_r,
                )  # fmt: skip
        else:
            o_slot = i_slot.to(gl.int64) * ROWS + o_r
            p_pc = o_part + o_slot[:, None] * D_NOPE + o_c[None, :]
            gl.store(p_pc, o0 * inv_part[:, None], mask=m_rc)
            gl.store(p_pc + 64, o1 * inv_part[:, None], mask=m_rc)
            gl.store(p_pc + 128, o2 * inv_part[:, None], mask=m_rc)
            gl.store(p_pc + 192, o3 * inv_part[:, None], mask=m_rc)
            # Merged here, each warpgroup's counter covers only its own stores: both write
            # the LSE (the same values).
            if LEFT or PAIR_MERGE:
                gl.store(lse_part + o_slot, lse_own, mask=m_r)
            if PAIR_MERGE:
                _fence_gpu(i_slot)
                gl.thread_barrier()
                gl.atomic_add(count + 1, 1, sem="release", scope="gpu")


# The partitions' entry points (a role flag cannot travel in a partition's arguments).
@gluon.jit
def _left(
    q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars,
    out, lse, o_part, lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen,
    stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
    stride_lb, stride_lh, stride_ls, qk_scale, out_desc, o_tma, split_offsets, counters,
    part_desc, PAIR_MERGE: gl.constexpr,
    S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr, Q_TMA: gl.constexpr,
):  # fmt: skip
    _consumer(
        True, q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars,
        out, lse, o_part, lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen,
        stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, out_desc, o_tma, split_offsets, counters,
        part_desc, PAIR_MERGE, S_Q, H_Q, CAUSAL, Q_TMA,
    )  # fmt: skip


@gluon.jit
def _right(
    q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars,
    out, lse, o_part, lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen,
    stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
    stride_lb, stride_lh, stride_ls, qk_scale, out_desc, o_tma, split_offsets, counters,
    part_desc, PAIR_MERGE: gl.constexpr,
    S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr, Q_TMA: gl.constexpr,
):  # fmt: skip
    _consumer(
        False, q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars,
        out, lse, o_part, lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen,
        stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, out_desc, o_tma, split_offsets, counters,
        part_desc, PAIR_MERGE, S_Q, H_Q, CAUSAL, Q_TMA,
    )  # fmt: skip


@gluon.jit(do_not_specialize=["o_tma"])
def mla_seesaw_kernel(
    q, q_desc, kv, kv_desc, block_table, seqlens, units, out, lse, o_part, lse_part,
    stride_qb, stride_qs, stride_qh, stride_btb, stride_ob, stride_os, stride_oh,
    stride_lb, stride_lh, stride_ls, qk_scale, out_desc, o_tma, split_offsets, counters,
    part_desc, PAIR_MERGE: gl.constexpr,
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
        # No program reads a key past the limit of its last draft token.
        last_tok = (gl.minimum(i_m * 64 + 64, ROWS) - 1) // H_Q
        key_end = gl.minimum(seqlen - S_Q + 1 + last_tok, key_end)

    # Shared memory, 226 KiB of the 227 a program may hold: Q's latent part (64 KiB), two
    # key tiles as 64-column chunks (2 x 64 KiB + 2 x 8 KiB rope), two P tiles (16 KiB).
    layout: gl.constexpr = kv_desc.layout
    q_smem = gl.allocate_shared_memory(kv_desc.dtype, [8, 64, 64], layout)
    k_smem = gl.allocate_shared_memory(kv_desc.dtype, [16, 64, 64], layout)
    kp_smem = gl.allocate_shared_memory(kv_desc.dtype, [2, 64, 64], layout)
    p_smem = gl.allocate_shared_memory(kv_desc.dtype, [2, 64, 64], layout)
    x_smem = gl.allocate_shared_memory(gl.float32, [8, 64], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    # Per buffer and column group (0-255, 256-511, rope): loaded, and free again.
    k_full = gl.allocate_shared_memory(gl.int64, [6, 1], mbarrier.MBarrierLayout())
    k_free = gl.allocate_shared_memory(gl.int64, [6, 1], mbarrier.MBarrierLayout())
    # m/scale of the even tile, P of the odd tile, P of the even tile, row sums, Q loaded,
    # and per warpgroup the other piece's partial loaded (a sequence in two pieces).
    bars = gl.allocate_shared_memory(gl.int64, [8, 1], mbarrier.MBarrierLayout())
    # Group g of buffer b is read by the warpgroup computing that tile's QKᵀ and, for the
    # value columns, by the one owning those output columns: two readers for buffer 0's
    # right half and buffer 1's left half, one for the other groups.
    for i in gl.static_range(6):
        mbarrier.init(k_full.index(i), count=1)
        mbarrier.init(k_free.index(i), count=2 if (i == 1 or i == 3) else 1)
    for i in gl.static_range(3):
        mbarrier.init(bars.index(i), count=1)
    mbarrier.init(bars.index(3), count=2)
    mbarrier.init(bars.index(4), count=1)
    mbarrier.init(bars.index(5), count=1)
    mbarrier.init(bars.index(6), count=1)

    if not Q_TMA:
        # A strided query tile is gathered with pointer loads (the loader then skips it).
        ld: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
        for c in gl.static_range(8):
            q_smem.index(c).store(
                _load_q_chunk(q, i_b, stride_qb, stride_qs, stride_qh, c, i_m, ld, H_Q, ROWS)
            )
        fence_async_shared()
    gl.thread_barrier()

    args = (
        q, q_smem, k_smem, kp_smem, k_full, k_free, p_smem, x_smem, bars,
        out, lse, o_part, lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen,
        stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, out_desc, o_tma, split_offsets, counters,
        part_desc, PAIR_MERGE, S_Q, H_Q, CAUSAL, Q_TMA,
    )  # fmt: skip
    gl.warp_specialize(
        [
            (_left, args),
            (_right, args),
            (
                _producer,
                (
                    kv_desc,
                    kv,
                    k_smem,
                    kp_smem,
                    k_full,
                    k_free,
                    block_table,
                    stride_btb,
                    i_b,
                    key_start,
                    key_end,
                    seqlen,
                    q_desc,
                    q_smem,
                    bars,
                    i_m,
                    ROWS,
                    Q_TMA,
                    PAGE,
                ),
            ),
        ],
        [4, 1],
        [REGS, LOAD_REGS],
    )


MIN_ROWS = 1
"""Fewest query rows per sequence (``s_q · h_q``) this kernel runs; fewer use split-KV.

One: up to ``RING_ROWS`` rows run the ring kernel (:mod:`kernelopt.kernels.mla.ring`),
which pads nothing; even the 64-row tile, three quarters padding at 16 rows, beat the
split-KV kernel there on the H200 (52.8 against 56.9 µs at b = 32).
"""

CONSUMER_REGS = 232
"""Registers a thread of the right warpgroup; the left one gets 256 and the loader 24 (of
512 a multiprocessor's 4 × 128-thread slots share)."""
LOADER_REGS = 24
Q_BY_TMA = True
"""Whether a contiguous query tile comes by TMA, in both kernels (2.5 % faster at s_q = 1,
h_q = 128)."""
RING_ROWS = ring.MAX_ROWS
"""Sequences with at most this many query rows (``s_q · h_q``) run the ring kernel
(:mod:`kernelopt.kernels.mla.ring`) instead of a 64-row tile; 0 turns it off. On the H200
at b = 32, s_q = 1, h_q = 16: 47.5 against 50.0 µs; 155.8 against 164.5 µs on the b = 128
batch of varied lengths."""


def kernel_for_rows(rows: int) -> tuple[Any, int, dict[str, int]]:
    """The Gluon kernel that runs ``rows`` query rows per sequence (``s_q · h_q``).

    Returns the kernel, the rows of its query tile (16 for the ring kernel, 64 for the
    seesaw kernel) and its own compile-time constants (ring size, register split).
    """
    if rows <= RING_ROWS:
        tuned = {"SLOTS": ring.SLOTS, "REGS": ring.CONSUMER_REGS, "LOAD_REGS": ring.LOADER_REGS}
        return ring.mla_ring_kernel, ring.MAX_ROWS, tuned
    return mla_seesaw_kernel, 64, {"REGS": CONSUMER_REGS, "LOAD_REGS": LOADER_REGS}


def default_config(rows: int, dtype: torch.dtype | None = None) -> SplitKVConfig:
    """The schedule's knobs: 64-row, 64-key tiles (fixed by the kernel), one program per SM.

    ``num_warps`` is the left warpgroup's; the kernel adds a warpgroup and a loader warp.
    At most ``RING_ROWS`` rows (the ring kernels) merge with programs of 16 rows × 128
    columns and 8 warps: with the dense ring kernel's 16-bit partials 1.003-1.005× the
    default 8 × 128 with 4 warps at b=32 s=1 h=16 in every round and level on the b=128
    batch (H100, exp 52); with float32 partials 0.13 µs better by median (exp 47).
    """
    del dtype
    if rows <= RING_ROWS:
        return SplitKVConfig(
            block_m=64, block_n=64, num_warps=4, num_stages=2, combine_block_r=16,
            combine_num_warps=8,
        )  # fmt: skip
    return SplitKVConfig(block_m=64, block_n=64, num_warps=4, num_stages=2)


def check_seesaw_target(device: torch.device, dtype: torch.dtype | None) -> None:
    """Raise unless ``device`` is a Hopper GPU and ``dtype`` a 16-bit float.

    Gluon kernels compile for one architecture and have no CPU interpreter; the tests of
    other strategies on CPU tensors have no counterpart here.

    Raises
    ------
    InputError
        For a dtype other than bfloat16 or float16.
    DeviceError
        For a CPU device or a GPU of another compute capability than 9.x.
    """
    import torch

    if dtype is not None and dtype not in (torch.bfloat16, torch.float16):
        raise InputError(
            expected("dtype bfloat16 or float16 for strategy 'seesaw'", str(dtype), where="dtype")
        )
    if device.type != "cuda":
        raise DeviceError(
            expected("a Hopper GPU (compute capability 9.x) for strategy 'seesaw'", str(device))
        )
    major, minor = torch.cuda.get_device_capability(device)
    if major != 9:
        raise DeviceError(
            expected(
                "a Hopper GPU (compute capability 9.x) for strategy 'seesaw'",
                f"compute capability {major}.{minor}",
            )
        )


_LAYOUT = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
_LAYOUT_F32 = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=2)


def counters_numel(batch: int, rows: int) -> int:
    """int32 counters the seesaw kernel needs to merge two-piece sequences in the kernel.

    Two per warpgroup (tickets taken, partials published) for each of a sequence's 64-row
    tiles; ``rows`` is ``s_q · h_q``.
    """
    return batch * -(-rows // 64) * 4


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
    counters: torch.Tensor | None = None,
    pairs_only: bool = False,
    uniform_pieces: int = 0,
) -> None:
    """Launch the seesaw kernel over ``(row tiles, num_units)`` and, if needed, the merge.

    Arguments are those of :func:`kernelopt.kernels.mla.split_kv.launch_split_kv` plus the
    plan's descriptor ``scratch`` (the tail tiles' descriptors are made in the kernel), and
    for merging in the kernel: ``counters``, :func:`counters_numel` zeroed int32 that the
    kernel leaves zeroed, and ``pairs_only``, whether every split sequence is in
    exactly two pieces. With both, 64-row tiles and an output TMA can write, the second
    piece of each sequence merges and the merge kernel does not run.
    Inputs are bfloat16 or float16 on a Hopper GPU; the layout must pass
    :func:`~kernelopt.kernels.mla.hopper.check_hopper_layout` with 64-key tiles. A uint8
    cache in the FP8 layout runs the FP8 ring kernel (:mod:`kernelopt.kernels.mla.ring_fp8`:
    bfloat16 queries, at most 16 rows a sequence, merged by the merge kernel). Nothing is
    allocated once ``scratch`` has grown to its size, and nothing is read back.
    """
    import torch
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    _, s_q, h_q, _ = q.shape
    page = kv_cache.shape[1]
    if kv_cache.dtype == torch.uint8:
        _launch_ring_fp8(
            q, kv_cache, block_table, seqlens, units, split_offsets, out, lse, o_part=o_part,
            lse_part=lse_part, softmax_scale=softmax_scale, causal=causal, num_units=num_units,
            has_splits=has_splits, config=config, scratch=scratch, uniform_pieces=uniform_pieces,
        )  # fmt: skip
        return
    if q.dtype not in (torch.bfloat16, torch.float16):
        raise InputError(
            expected("bfloat16 or float16 inputs for strategy 'seesaw'", str(q.dtype), where="q")
        )
    check_hopper_layout(kv_cache, page_size=page, block_n=64)
    if has_splits and (o_part is None or lse_part is None):
        raise InputError(expected("a workspace for partial outputs", None, where="o_part"))
    # At most RING_ROWS query rows run the ring kernel, with 16-row query tiles.
    kernel, q_rows, tuned = kernel_for_rows(s_q * h_q)
    if o_part is not None:
        # The ring kernel stores its partials with pointers, in the workspace's type; the
        # 64-row kernel's pair merge reads them back by float32 TMA (16 bits lost 2 % there
        # in exp 51).
        check_partial_dtype(o_part, out, sixteen_bit=q_rows == ring.MAX_ROWS)
    o_arg = o_part if o_part is not None else lse
    lse_arg = lse_part if lse_part is not None else lse
    rows_kv = kv_cache.shape[0] * page
    flat = kv_cache.view(rows_kv, 576)
    kv_desc = TensorDescriptor(flat, [rows_kv, 576], [576, 1], [64, 64], _LAYOUT)
    # A contiguous query is one [b · s_q · h_q, 576] matrix: its tiles come by TMA too.
    q_tma = Q_BY_TMA and q.is_contiguous() and q.data_ptr() % 16 == 0
    q_desc = (
        TensorDescriptor(q.view(-1, 576), [q.numel() // 576, 576], [576, 1], [q_rows, 64], _LAYOUT)
        if q_tma
        else kv_desc
    )
    args = (
        q, q_desc, kv_cache, kv_desc, block_table, seqlens, units, out, lse, o_arg, lse_arg,
        q.stride(0), q.stride(1), q.stride(2), block_table.stride(0),
        out.stride(0), out.stride(1), out.stride(2), lse.stride(0), lse.stride(1), lse.stride(2),
        softmax_scale * LOG2E,
    )  # fmt: skip
    if q_rows == 64:
        # An unsplit sequence's 64-row tiles go out by TMA from a contiguous output; with a
        # row count that is not a multiple of 64 a tile's last rows belong to the next
        # sequence, so those keep pointer stores, as does a strided output.
        o_tma = (s_q * h_q) % 64 == 0 and out.is_contiguous() and out.data_ptr() % 16 == 0
        out_desc = kv_desc  # never read without o_tma; only its type must match
        if o_tma:
            rows_out = out.view(-1, 512)
            out_desc = TensorDescriptor(rows_out, list(rows_out.shape), [512, 1], [64, 64], _LAYOUT)
        # The other piece's partial comes in by TMA, so the workspace must be 16-byte
        # aligned (a plan's always is; a direct caller's may not be).
        pair_merge = (
            o_tma
            and has_splits
            and pairs_only
            and counters is not None
            and o_arg.data_ptr() % 16 == 0
        )
        if counters is None:
            counters = units  # never touched without pair_merge; only its type must match
        # The partials' descriptor: [slots · rows, 512] float32 in 32-column boxes (a 128-byte
        # swizzled row); without a pair merge it describes the cache's bytes, never read.
        rows_part = o_arg.view(-1, 512) if pair_merge else flat.view(torch.float32).view(-1, 32)
        part_desc = TensorDescriptor(
            rows_part, list(rows_part.shape), [rows_part.shape[1], 1], [64, 32], _LAYOUT_F32
        )
        extra: dict[str, Any] = {
            "out_desc": out_desc,
            "o_tma": int(o_tma),
            "split_offsets": split_offsets,
            "counters": counters,
            "part_desc": part_desc,
            "PAIR_MERGE": pair_merge,
        }
    else:
        extra = {}
    grid = (triton.cdiv(s_q * h_q, q_rows), num_units)
    with _scratch(scratch):
        kernel[grid](
            *args, S_Q=s_q, H_Q=h_q, PAGE=page, CAUSAL=causal, Q_TMA=q_tma, **tuned,
            **extra, num_warps=4,
        )  # fmt: skip
    if has_splits and not extra.get("PAIR_MERGE"):
        launch_merge(
            o_arg, lse_arg, split_offsets, out, lse, config=config, uniform_pieces=uniform_pieces
        )


_LAYOUT_F8 = gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=8, rank=2)
_LAYOUT_SCALES = gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=32, rank=2)


def check_fp8_rows(rows: int) -> None:
    """Raise unless ``rows`` query rows a sequence (``s_q · h_q``) can read the FP8 cache here.

    Raises
    ------
    InputError
        For more than :data:`kernelopt.kernels.mla.ring_fp8.MAX_ROWS` rows.
    """
    if rows > ring_fp8.MAX_ROWS:
        raise InputError(
            expected(
                f"at most {ring_fp8.MAX_ROWS} query rows a sequence (s_q * h_q) for strategy "
                "'seesaw' with an FP8 cache (strategy 'split_kv' reads it at any row count)",
                rows,
                where="s_q * h_q",
            )
        )


def fp8_cache_views(kv_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One FP8 cache as the three row views the FP8 ring kernel copies from.

    Parameters
    ----------
    kv_cache : torch.Tensor
        ``[num_blocks, page_size, 1, 656]`` uint8, contiguous (:mod:`kernelopt.kernels.mla.fp8`).

    Returns
    -------
    tuple of torch.Tensor
        The same bytes as ``[rows, 656]`` ``float8_e4m3fn`` (latent values in columns
        0-511), ``[rows, 164]`` float32 (scales in columns
        ``ring_fp8.SCALE_COL`` + 0-3) and ``[rows, 328]`` bfloat16 (RoPE values in columns
        ``ring_fp8.ROPE_COL`` + 0-63), ``rows = num_blocks · page_size``.
    """
    import torch

    rows = kv_cache.shape[0] * kv_cache.shape[1]
    kv8 = kv_cache.view(rows, FP8_ROW_BYTES).view(torch.float8_e4m3fn)
    return kv8, kv8.view(torch.float32), kv8.view(torch.bfloat16)


def _launch_ring_fp8(
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
    uniform_pieces: int = 0,
) -> None:
    """The FP8 ring kernel (:mod:`kernelopt.kernels.mla.ring_fp8`) and, if split, the merge.

    ``kv_cache`` is ``[num_blocks, page_size, 1, 656]`` uint8 in the FP8 layout; ``q``
    bfloat16 with at most 16 rows a sequence. Arguments as :func:`launch_seesaw`'s.
    """
    import torch
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    _, s_q, h_q, _ = q.shape
    page = kv_cache.shape[1]
    check_fp8_rows(s_q * h_q)
    if q.dtype != torch.bfloat16:
        raise InputError(
            expected("bfloat16 queries for an FP8 cache with strategy 'seesaw'", str(q.dtype))
        )
    check_hopper_layout(kv_cache, page_size=page, block_n=64)
    if has_splits and (o_part is None or lse_part is None):
        raise InputError(expected("a workspace for partial outputs", None, where="o_part"))
    if o_part is not None:
        # 16-bit partials measured no faster behind the dequantizing kernel (exp 50).
        check_partial_dtype(o_part, out, sixteen_bit=False)
    o_arg = o_part if o_part is not None else lse
    lse_arg = lse_part if lse_part is not None else lse
    rows_kv = kv_cache.shape[0] * page
    width = FP8_ROW_BYTES
    kv8, kv32, kv16 = fp8_cache_views(kv_cache)
    f8_desc = TensorDescriptor(kv8, [rows_kv, width], [width, 1], [64, 64], _LAYOUT_F8)
    sc_desc = TensorDescriptor(
        kv32, [rows_kv, width // 4], [width // 4, 1], [64, 4], _LAYOUT_SCALES
    )
    rp_desc = TensorDescriptor(kv16, [rows_kv, width // 2], [width // 2, 1], [64, 64], _LAYOUT)
    q_tma = Q_BY_TMA and q.is_contiguous() and q.data_ptr() % 16 == 0
    q_desc = TensorDescriptor(
        q.view(-1, 576), [q.numel() // 576, 576], [576, 1], [ring_fp8.MAX_ROWS, 64], _LAYOUT
    ) if q_tma else TensorDescriptor(
        kv16, [rows_kv, width // 2], [width // 2, 1], [ring_fp8.MAX_ROWS, 64], _LAYOUT
    )  # fmt: skip
    grid = (triton.cdiv(s_q * h_q, ring_fp8.MAX_ROWS), num_units)
    with _scratch(scratch):
        ring_fp8.mla_ring_fp8_kernel[grid](
            q, q_desc, kv8, kv32, kv16, f8_desc, sc_desc, rp_desc, block_table, seqlens, units,
            out, lse, o_arg, lse_arg, q.stride(0), q.stride(1), q.stride(2),
            block_table.stride(0), out.stride(0), out.stride(1), out.stride(2), lse.stride(0),
            lse.stride(1), lse.stride(2), softmax_scale * LOG2E,
            S_Q=s_q, H_Q=h_q, PAGE=page, CAUSAL=causal, Q_TMA=q_tma, SLOTS=ring_fp8.SLOTS,
            SCALE_SLOTS=ring_fp8.SCALE_SLOTS, REGS=ring_fp8.CONSUMER_REGS,
            DEQUANT_REGS=ring_fp8.DEQUANT_REGS, LOAD_REGS=ring_fp8.LOADER_REGS, num_warps=4,
        )  # fmt: skip
    if has_splits:
        launch_merge(
            o_arg, lse_arg, split_offsets, out, lse, config=config, uniform_pieces=uniform_pieces
        )
