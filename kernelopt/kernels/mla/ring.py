# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""MLA decode for at most 16 query rows on Hopper (Gluon): both products unpadded, a chunk ring.

With ``s_q · h_q ≤ 16`` (one decode token of 16 heads) a 64-row query tile is three
quarters padding, and the time a consumer spends per key tile, not the tensor-core rate,
holds the kernel back: copies of the 64-row seesaw kernel that only waited for and
released each tile read the cache at 90 % of the copy rate, while the full kernel was
7.4 µs slower (``docs/kernels/mla_decode.md``, exps 8-12). Here nothing is padded and the
two consumer warpgroups take turns over the key tiles instead of sharing each one:

* both products keep the query's 16 rows in the ``wgmma`` N dimension: ``Sᵀ = K · Qᵀ``
  (the tile's 64 keys in M) and ``Oᵀ += Vᵀ · Pᵀ`` (64 output columns in M, V read
  transposed from the same shared memory as K), so the output accumulator is
  ``[512, 16]``, 64 registers a thread, and each consumer owns all 512 columns for its own
  tiles (``G, G + 2, …``); the row statistics share the accumulators' column layout;
* shared memory is a ring of ``SLOTS`` chunks of 64 keys × 64 columns (8 KiB), each with
  its own barriers, that the loader fills in tile order (rope chunk, then value columns
  0-511); a chunk goes back to the loader as soon as its reader is done with it — the rope
  chunk right after ``Sᵀ``, each value chunk right after its part of ``Oᵀ``. The 16-row
  query takes 18 KiB instead of 64, which leaves room for 24 chunks (2.7 tiles; the
  seesaw kernel holds 2);
* each consumer's tiles cycle through their own half of the ring. A consumer waits for a
  chunk by the phase parity of the slot's barrier, which only tells the chunk apart from
  the slot's previous content if that content has landed; in its own half the previous
  content is a chunk the same consumer has already read, whatever order the copies
  complete in. With one ring shared in tile order, the previous content of a slot could
  be the other consumer's chunk still in flight: a consumer that finished its tile early
  then took that slot as filled (copies of the kernel whose consumers did no work failed
  this way under repeated launches).

At the end the two consumers merge their halves of the keys through the ring's memory:
each hands over the 256 output columns it does not write, with its row max and sum, and
writes the other 256.

Rows past a sequence's end are read through a descriptor that stops at its last key, so
the copy engine writes zeros there (stale cache rows may hold NaN; 0 · NaN is NaN).
Split sequences write partial outputs that :func:`~kernelopt.kernels.mla.split_kv.
launch_merge` combines, as for the other kernels.

Resources (ptxas, sm_90a): 225,312 bytes of shared memory, 168 registers at launch (the
warpgroups re-divide them), no spills; every product is ``wgmma m64n16k16``.
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

D_NOPE: gl.constexpr = gl.constexpr(512)
D_QK: gl.constexpr = gl.constexpr(576)
LN2: gl.constexpr = gl.constexpr(0.6931471805599453)
CHUNK_BYTES: gl.constexpr = gl.constexpr(64 * 64 * 2)

MAX_ROWS = 16
"""Most query rows per sequence (``s_q · h_q``) the ring kernel takes: its ``Sᵀ`` N."""
SLOTS = 24
"""Chunks in the ring: what is left of 227 KiB after the query (18 KiB), four 2 KiB P
tiles, row statistics and barriers; half for each consumer, each half at least one tile
(see the kernel's assertion)."""
CONSUMER_REGS = 232
"""Registers a thread of the second consumer (the first gets what is left)."""
LOADER_REGS = 24


@gluon.jit
def _place(j, c, SLOTS: gl.constexpr):
    """Ring slot and barrier phase parity of chunk ``c`` of key tile ``j``.

    Tile ``j`` belongs to consumer ``j % 2``, whose tiles cycle through its own half of the
    ring: its ``k``-th chunk goes to slot ``k % (SLOTS / 2)`` of that half.
    """
    HALF: gl.constexpr = SLOTS // 2
    k = (j >> 1) * 9 + c
    return (j & 1) * HALF + k % HALF, (k // HALF) & 1


@gluon.jit
def _load_chunk(desc, row, c: gl.constexpr, j, ring, full, free, SLOTS: gl.constexpr):
    """Copy chunk ``c`` (0: rope columns, 1-8: value columns ``64(c-1)…``) of key tile ``j``."""
    slot, phase = _place(j, c, SLOTS)
    # The first pass over the ring waits on the phase before a fresh barrier's: no wait.
    mbarrier.wait(free.index(slot), phase ^ 1)
    mbarrier.expect(full.index(slot), CHUNK_BYTES)
    col: gl.constexpr = D_NOPE if c == 0 else (c - 1) * 64
    tma.async_copy_global_to_shared(desc, [row, col], full.index(slot), ring.index(slot))


@gluon.jit
def _copy_q_tile(q_desc, q_smem, q_bar, i_b, i_m, ROWS: gl.constexpr):
    """Copy the program's 16 query rows ``[16, 576]`` as nine 64-column chunks, on ``q_bar``."""
    mbarrier.expect(q_bar, 9 * 16 * 64 * 2)
    row_q = (i_b * ROWS + i_m * 16).to(gl.int32)
    for c in gl.static_range(9):
        tma.async_copy_global_to_shared(q_desc, [row_q, c * 64], q_bar, q_smem.index(c))


@gluon.jit
def _tile_row(p_bt, j, k0, row_first, PAGE: gl.constexpr):
    """Cache row of key ``k0``, the first of the piece's tile ``j`` (``p_bt``: its pages)."""
    if j == 0:  # noqa: SIM108 (a run-time branch in the kernel, not a select)
        row0 = row_first
    else:
        row0 = gl.load(p_bt + k0 // PAGE) * PAGE + k0 % PAGE
    return row0


@gluon.jit
def _loader(
    kv_desc, kv, ring, full, free, block_table, stride_btb, i_b, key_start, key_end, seqlen,
    row_first, q_desc, q_smem, q_bar, i_m, ROWS: gl.constexpr, Q_TMA: gl.constexpr,
    PAGE: gl.constexpr, SLOTS: gl.constexpr,
):  # fmt: skip
    """One warp: the 16-row query tile, then every key tile's nine chunks in ring order.

    ``row_first`` is the first tile's cache row, read with the piece's length."""
    if Q_TMA:
        _copy_q_tile(q_desc, q_smem, q_bar, i_b, i_m, ROWS)
    n_tiles = gl.cdiv(key_end - key_start, 64)
    p_bt = block_table + i_b * stride_btb
    for j in range(n_tiles):
        k0 = key_start + j * 64
        row0 = _tile_row(p_bt, j, k0, row_first, PAGE)
        if k0 + 64 <= seqlen:
            for c in gl.static_range(9):
                _load_chunk(kv_desc, row0, c, j, ring, full, free, SLOTS)
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
                _load_chunk(tail, 0, c, j, ring, full, free, SLOTS)


@gluon.jit
def _row_limit(i_m, seqlen, key_end, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr,
               col: gl.constexpr):  # fmt: skip
    """The key each of the tile's 16 rows stops before (its draft token's causal limit)."""
    if CAUSAL:
        o_r = i_m * 16 + gl.arange(0, 16, layout=col)
        lim = gl.minimum(seqlen - S_Q + 1 + o_r // H_Q, key_end)
    else:
        lim = gl.zeros([16], gl.int32, layout=col) + key_end
    return lim


@gluon.jit
def _consumer_start(i_m, seqlen, key_end, q_bar, S_Q: gl.constexpr, H_Q: gl.constexpr,
                    CAUSAL: gl.constexpr, Q_TMA: gl.constexpr, mma: gl.constexpr):  # fmt: skip
    """A consumer's state before its first tile, once the query tile has landed.

    Returns the rows' key limits, ``Oᵀ`` as eight zero ``[64 columns, 16 rows]`` parts (8
    registers a thread each), and the row max and sum.
    """
    col: gl.constexpr = gl.SliceLayout(0, mma)
    lim = _row_limit(i_m, seqlen, key_end, S_Q, H_Q, CAUSAL, col)
    zero = gl.zeros([64, 16], gl.float32, layout=mma)
    # m starts finite, so a row with every key masked so far keeps scale 1 and p 0.
    m = gl.full([16], -1.0e30, gl.float32, layout=col)
    l_sum = gl.zeros([16], gl.float32, layout=col)
    if Q_TMA:
        mbarrier.wait(q_bar, 0)
    return lim, zero, zero, zero, zero, zero, zero, zero, zero, m, l_sum


@gluon.jit
def _softmax_tile(s, m, l_sum, lim, k0, qk_scale, p_smem, p_buf, mma: gl.constexpr):
    """Online softmax of one key tile's ``Sᵀ`` ``[64 keys, 16 rows]``; ``Pᵀ`` to shared memory.

    Keys at or past a row's ``lim`` are masked. Returns ``Pᵀ`` as the B operand of
    ``Oᵀ += Vᵀ · Pᵀ`` (stored ``[rows, keys]`` in ``p_smem[p_buf]``; each consumer
    alternates two buffers, so this tile's store cannot meet the last tile's product still
    reading), the accumulators' rescale ``[1, 16]``, and the new row max and sum.
    """
    o_k = k0 + gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    s = gl.where(o_k[:, None] < lim[None, :], s * qk_scale, float("-inf"))
    m_new = gl.maximum(m, gl.max(s, axis=0))
    scale_r = gl.exp2(m - m_new)
    p = gl.exp2(s - m_new[None, :])
    l_sum = l_sum * scale_r + gl.sum(p, axis=0)
    p_tile = p_smem.index(p_buf)
    p_tile.store(gl.permute(p.to(p_smem.dtype), [1, 0]))
    fence_async_shared()
    gl.thread_barrier()
    return p_tile.permute((1, 0)), scale_r[None, :], m_new, l_sum


@gluon.jit
def _finish(
    G: gl.constexpr, a0, a1, a2, a3, a4, a5, a6, a7, m, l_sum, xch, x_smem, bars, out, lse,
    o_part, lse_part, i_b, i_m, i_slot, stride_ob, stride_os, stride_oh, stride_lb, stride_lh,
    stride_ls, S_Q: gl.constexpr, H_Q: gl.constexpr, mma: gl.constexpr,
):  # fmt: skip
    """Merge the two consumers' halves of the keys and write the rows' output and LSE.

    ``a0``-``a7`` are this consumer's ``Oᵀ`` parts, ``m``/``l_sum`` its row max and sum (base
    2). ``xch`` is dead key-tile memory both consumers may overwrite once past their loops.
    A piece of a split sequence (``i_slot ≥ 0``) writes its normalized float32 partial and
    LSE for the merge instead of the output.
    """
    ROWS: gl.constexpr = S_Q * H_Q
    col: gl.constexpr = gl.SliceLayout(0, mma)
    o_r = i_m * 16 + gl.arange(0, 16, layout=col)
    # Merge the two consumers' halves of the keys. Once both are past their loops every
    # chunk has been read, so the ring becomes the exchange buffer: each consumer hands
    # over the 256 columns it does not write, in 64 x 16 parts, with its max and sum.
    done = bars.index(0)
    gl.thread_barrier()
    mbarrier.arrive(done)
    mbarrier.wait(done, 0)
    if G == 0:
        xch.index(0).store(a4)
        xch.index(1).store(a5)
        xch.index(2).store(a6)
        xch.index(3).store(a7)
    else:
        xch.index(4).store(a0)
        xch.index(5).store(a1)
        xch.index(6).store(a2)
        xch.index(7).store(a3)
    x_smem.index(2 * G).slice(0, 16).store(m)
    x_smem.index(2 * G + 1).slice(0, 16).store(l_sum)
    handed = bars.index(1)
    gl.thread_barrier()
    mbarrier.arrive(handed)
    mbarrier.wait(handed, 0)
    m_x = x_smem.index(2 - 2 * G).slice(0, 16).load(col)
    l_x = x_smem.index(3 - 2 * G).slice(0, 16).load(col)
    m_all = gl.maximum(m, m_x)
    w_own = gl.exp2(m - m_all)
    w_x = gl.exp2(m_x - m_all)
    l_all = w_own * l_sum + w_x * l_x
    if G == 0:
        b0 = a0
        b1 = a1
        b2 = a2
        b3 = a3
    else:
        b0 = a4
        b1 = a5
        b2 = a6
        b3 = a7
    x0 = xch.index(4 - 4 * G).load(mma)
    x1 = xch.index(5 - 4 * G).load(mma)
    x2 = xch.index(6 - 4 * G).load(mma)
    x3 = xch.index(7 - 4 * G).load(mma)

    m_r = o_r < ROWS
    o_c = 256 * G + gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    m_cr = (o_c < D_NOPE)[:, None] & m_r[None, :]
    if i_slot < 0:
        # The sequence is one piece: final output and natural-log LSE.
        w_a = (w_own / l_all)[None, :]
        w_b = (w_x / l_all)[None, :]
        i_tok = o_r // H_Q
        i_head = o_r % H_Q
        p_o = out + i_b * stride_ob + i_tok.to(gl.int64) * stride_os + i_head * stride_oh
        p_co = p_o[None, :] + o_c[:, None]
        ty = out.dtype.element_ty
        gl.store(p_co, (b0 * w_a + x0 * w_b).to(ty), mask=m_cr)
        gl.store(p_co + 64, (b1 * w_a + x1 * w_b).to(ty), mask=m_cr)
        gl.store(p_co + 128, (b2 * w_a + x2 * w_b).to(ty), mask=m_cr)
        gl.store(p_co + 192, (b3 * w_a + x3 * w_b).to(ty), mask=m_cr)
        if G == 0:
            gl.store(
                lse + i_b * stride_lb + i_head * stride_lh + i_tok * stride_ls,
                (m_all + gl.log2(l_all)) * LN2,
                mask=m_r,
            )
    else:
        # A row may see no key of this piece (causal, early draft token): weight 0 in merge.
        empty = l_all == 0.0
        l_safe = gl.where(empty, 1.0, l_all)
        w_a = (w_own / l_safe)[None, :]
        w_b = (w_x / l_safe)[None, :]
        o_slot = i_slot.to(gl.int64) * ROWS + o_r
        p_pc = o_part + o_slot[None, :] * D_NOPE + o_c[:, None]
        # In the workspace's type: 16-bit partials halve the bytes these stores and the
        # merge move (1.4 % at b=32 s=1 h=16, exp 50).
        pty = o_part.dtype.element_ty
        gl.store(p_pc, (b0 * w_a + x0 * w_b).to(pty), mask=m_cr)
        gl.store(p_pc + 64, (b1 * w_a + x1 * w_b).to(pty), mask=m_cr)
        gl.store(p_pc + 128, (b2 * w_a + x2 * w_b).to(pty), mask=m_cr)
        gl.store(p_pc + 192, (b3 * w_a + x3 * w_b).to(pty), mask=m_cr)
        if G == 0:
            gl.store(
                lse_part + o_slot,
                gl.where(empty, float("-inf"), m_all + gl.log2(l_safe)),
                mask=m_r,
            )


@gluon.jit
def _consumer(
    G: gl.constexpr, q_smem, ring, xch, full, free, p_smem, x_smem, bars, q_bar, out, lse, o_part,
    lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh,
    stride_lb, stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr,
    CAUSAL: gl.constexpr, Q_TMA: gl.constexpr, SLOTS: gl.constexpr,
):  # fmt: skip
    """One consumer warpgroup: key tiles ``G, G + 2, …``, all 512 output columns as ``Oᵀ``.

    Both products keep the keys or the output columns in M and the 16 query rows in N:
    ``Sᵀ = K · Qᵀ`` and ``Oᵀ += Vᵀ · Pᵀ`` (V read transposed from the same chunks), so
    neither is padded and the row statistics share the accumulators' column layout.
    """
    mma: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 16, 16]
    )
    lim, a0, a1, a2, a3, a4, a5, a6, a7, m, l_sum = _consumer_start(
        i_m, seqlen, key_end, q_bar, S_Q, H_Q, CAUSAL, Q_TMA, mma
    )
    n_tiles = gl.cdiv(key_end - key_start, 64)
    for j in range(G, n_tiles, 2):
        # Zero, but not to the compiler: the query's shared-memory descriptors are then
        # built next to each product instead of being hoisted out of the loop (registers).
        z = j >> 30
        s = gl.zeros([64, 16], gl.float32, layout=mma)
        for c in gl.static_range(9):
            slot, phase = _place(j, c, SLOTS)
            mbarrier.wait(full.index(slot), phase)
            s = warpgroup_mma(
                ring.index(slot),
                q_smem.index((8 if c == 0 else c - 1) + z).permute((1, 0)),
                s,
                is_async=True,
            )
        s = warpgroup_mma_wait(0, deps=[s])
        mbarrier.arrive(free.index(_place(j, 0, SLOTS)[0]))  # the rope chunk
        p_b, scale, m, l_sum = _softmax_tile(
            s, m, l_sum, lim, key_start + j * 64, qk_scale, p_smem, 2 * G + ((j >> 1) & 1), mma
        )
        v0 = _place(j, 1, SLOTS)[0]
        v1 = _place(j, 2, SLOTS)[0]
        v2 = _place(j, 3, SLOTS)[0]
        v3 = _place(j, 4, SLOTS)[0]
        v4 = _place(j, 5, SLOTS)[0]
        v5 = _place(j, 6, SLOTS)[0]
        v6 = _place(j, 7, SLOTS)[0]
        v7 = _place(j, 8, SLOTS)[0]
        a0 = warpgroup_mma(ring.index(v0).permute((1, 0)), p_b, a0 * scale, is_async=True)
        a1 = warpgroup_mma(ring.index(v1).permute((1, 0)), p_b, a1 * scale, is_async=True)
        a2 = warpgroup_mma(ring.index(v2).permute((1, 0)), p_b, a2 * scale, is_async=True)
        a3 = warpgroup_mma(ring.index(v3).permute((1, 0)), p_b, a3 * scale, is_async=True)
        a4 = warpgroup_mma(ring.index(v4).permute((1, 0)), p_b, a4 * scale, is_async=True)
        a5 = warpgroup_mma(ring.index(v5).permute((1, 0)), p_b, a5 * scale, is_async=True)
        a6 = warpgroup_mma(ring.index(v6).permute((1, 0)), p_b, a6 * scale, is_async=True)
        a7 = warpgroup_mma(ring.index(v7).permute((1, 0)), p_b, a7 * scale, is_async=True)
        # Each value chunk goes back to the loader as soon as its product is done.
        a0 = warpgroup_mma_wait(7, deps=[a0])
        mbarrier.arrive(free.index(v0))
        a1 = warpgroup_mma_wait(6, deps=[a1])
        mbarrier.arrive(free.index(v1))
        a2 = warpgroup_mma_wait(5, deps=[a2])
        mbarrier.arrive(free.index(v2))
        a3 = warpgroup_mma_wait(4, deps=[a3])
        mbarrier.arrive(free.index(v3))
        a4 = warpgroup_mma_wait(3, deps=[a4])
        mbarrier.arrive(free.index(v4))
        a5 = warpgroup_mma_wait(2, deps=[a5])
        mbarrier.arrive(free.index(v5))
        a6 = warpgroup_mma_wait(1, deps=[a6])
        mbarrier.arrive(free.index(v6))
        a7 = warpgroup_mma_wait(0, deps=[a7])
        mbarrier.arrive(free.index(v7))

    _finish(
        G, a0, a1, a2, a3, a4, a5, a6, a7, m, l_sum, xch, x_smem, bars, out, lse, o_part,
        lse_part, i_b, i_m, i_slot, stride_ob, stride_os, stride_oh, stride_lb, stride_lh,
        stride_ls, S_Q, H_Q, mma,
    )  # fmt: skip


# The partitions' entry points (a role flag cannot travel in a partition's arguments).
@gluon.jit
def _first(
    q_smem, ring, xch, full, free, p_smem, x_smem, bars, q_bar, out, lse, o_part, lse_part,
    i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh, stride_lb,
    stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr, SLOTS: gl.constexpr,
):  # fmt: skip
    _consumer(
        0, q_smem, ring, xch, full, free, p_smem, x_smem, bars, q_bar, out, lse, o_part,
        lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL, Q_TMA, SLOTS,
    )  # fmt: skip


@gluon.jit
def _second(
    q_smem, ring, xch, full, free, p_smem, x_smem, bars, q_bar, out, lse, o_part, lse_part,
    i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh, stride_lb,
    stride_lh, stride_ls, qk_scale, S_Q: gl.constexpr, H_Q: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr, SLOTS: gl.constexpr,
):  # fmt: skip
    _consumer(
        1, q_smem, ring, xch, full, free, p_smem, x_smem, bars, q_bar, out, lse, o_part,
        lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL, Q_TMA, SLOTS,
    )  # fmt: skip


@gluon.jit
def _piece(units, seqlens, block_table, stride_btb, i_m, S_Q: gl.constexpr, H_Q: gl.constexpr,
           PAGE: gl.constexpr, CAUSAL: gl.constexpr):  # fmt: skip
    """The piece of a sequence this program works on (grid axis 1 over ``schedule.table()``).

    Returns the sequence, its keys ``[key_start, key_end)`` (``key_end`` cut at the limit of
    the row tile's last draft token), the partial-output slot (negative: not split), the
    sequence's length and the cache row of the piece's first key.
    """
    ROWS: gl.constexpr = S_Q * H_Q
    i_u = gl.program_id(1)
    i_b = gl.load(units + i_u * 4).to(gl.int64)
    key_start = gl.load(units + i_u * 4 + 1)
    key_end = gl.load(units + i_u * 4 + 2)
    i_slot = gl.load(units + i_u * 4 + 3)
    seqlen = gl.load(seqlens + i_b)
    # The first tile's page is read beside the length, not in the loader after it: the
    # first copy then waits for two dependent loads instead of three (0.3 µs at b=32 s=1
    # h=16, exp 21).
    row_first = gl.load(block_table + i_b * stride_btb + key_start // PAGE) * PAGE
    row_first += key_start % PAGE
    if CAUSAL:
        # No program reads a key past the limit of its last draft token.
        last_tok = (gl.minimum(i_m * 16 + 16, ROWS) - 1) // H_Q
        key_end = gl.minimum(seqlen - S_Q + 1 + last_tok, key_end)
    return i_b, key_start, key_end, i_slot, seqlen, row_first


@gluon.jit
def _gather_q(q, q_smem, i_b, i_m, stride_qb, stride_qs, stride_qh, H_Q: gl.constexpr,
              ROWS: gl.constexpr):  # fmt: skip
    """The 16-row query tile of a strided ``q`` into ``q_smem`` ``[9, 16, 64]``, by pointers."""
    zl: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    for c in gl.static_range(9):
        o_r = i_m * 16 + gl.arange(0, 16, layout=gl.SliceLayout(1, zl))
        o_d = c * 64 + gl.arange(0, 64, layout=gl.SliceLayout(0, zl))
        p = q + i_b * stride_qb + (o_r // H_Q).to(gl.int64) * stride_qs
        p = p + (o_r % H_Q) * stride_qh
        mask = (o_r < ROWS)[:, None] & (o_d < D_QK)[None, :]
        q_smem.index(c).store(gl.load(p[:, None] + o_d[None, :], mask=mask, other=0.0))


@gluon.jit
def mla_ring_kernel(
    q, q_desc, kv, kv_desc, block_table, seqlens, units, out, lse, o_part, lse_part,
    stride_qb, stride_qs, stride_qh, stride_btb, stride_ob, stride_os, stride_oh,
    stride_lb, stride_lh, stride_ls, qk_scale,
    S_Q: gl.constexpr, H_Q: gl.constexpr, PAGE: gl.constexpr, CAUSAL: gl.constexpr,
    Q_TMA: gl.constexpr, SLOTS: gl.constexpr, REGS: gl.constexpr, LOAD_REGS: gl.constexpr,
):  # fmt: skip
    ROWS: gl.constexpr = S_Q * H_Q
    # Each consumer's half of the ring holds at least one whole tile (Sᵀ reads all nine
    # chunks before any is given back).
    gl.static_assert(SLOTS % 2 == 0 and SLOTS // 2 >= 9, "each half needs a tile of chunks")
    i_m = gl.program_id(0)
    i_b, key_start, key_end, i_slot, seqlen, row_first = _piece(
        units, seqlens, block_table, stride_btb, i_m, S_Q, H_Q, PAGE, CAUSAL
    )

    layout: gl.constexpr = kv_desc.layout
    q_smem = gl.allocate_shared_memory(kv_desc.dtype, [9, 16, 64], layout)
    ring = gl.allocate_shared_memory(kv_desc.dtype, [SLOTS, 64, 64], layout)
    p_smem = gl.allocate_shared_memory(kv_desc.dtype, [4, 16, 64], layout)
    # Per consumer: its row max and row sum, for the merge at the end.
    x_smem = gl.allocate_shared_memory(gl.float32, [4, 64], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    full = gl.allocate_shared_memory(gl.int64, [SLOTS, 1], mbarrier.MBarrierLayout())
    free = gl.allocate_shared_memory(gl.int64, [SLOTS, 1], mbarrier.MBarrierLayout())
    # Both consumers past their loops; both halves handed over; the query loaded.
    bars = gl.allocate_shared_memory(gl.int64, [3, 1], mbarrier.MBarrierLayout())
    # Each chunk has one reader: the consumer of its tile.
    for i in gl.static_range(SLOTS):
        mbarrier.init(full.index(i), count=1)
        mbarrier.init(free.index(i), count=1)
    mbarrier.init(bars.index(0), count=2)
    mbarrier.init(bars.index(1), count=2)
    mbarrier.init(bars.index(2), count=1)
    # The same memory as the ring, for the consumers' merge once the keys are all read.
    xch = ring._reinterpret(
        gl.float32, [2 * SLOTS, 64, 16], gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    )
    if not Q_TMA:
        # A strided query tile is gathered with pointer loads (the loader then skips it).
        _gather_q(q, q_smem, i_b, i_m, stride_qb, stride_qs, stride_qh, H_Q, ROWS)
    fence_async_shared()
    gl.thread_barrier()

    args = (
        q_smem, ring, xch, full, free, p_smem, x_smem, bars, bars.index(2), out, lse, o_part,
        lse_part, i_b, i_m, i_slot, key_start, key_end, seqlen, stride_ob, stride_os, stride_oh,
        stride_lb, stride_lh, stride_ls, qk_scale, S_Q, H_Q, CAUSAL, Q_TMA, SLOTS,
    )  # fmt: skip
    loader_args = (
        kv_desc, kv, ring, full, free, block_table, stride_btb, i_b, key_start, key_end, seqlen,
        row_first, q_desc, q_smem, bars.index(2), i_m, ROWS, Q_TMA, PAGE, SLOTS,
    )  # fmt: skip
    gl.warp_specialize(
        [(_first, args), (_second, args), (_loader, loader_args)], [4, 1], [REGS, LOAD_REGS]
    )
