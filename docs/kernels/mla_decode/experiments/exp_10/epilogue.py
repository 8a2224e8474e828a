# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""The Gluon kernels' epilogue: write a piece of a sequence, and merge when it is the last.

A program holds a warpgroup's 256 output columns of 64 query rows. A sequence in one
piece writes its final output. A sequence split into pieces writes the piece's normalized
output and base-2 LSE to the workspace, then counts itself in a per-(sequence, row tile,
warpgroup) counter; the warpgroup that arrives last reads the other pieces back (from L2,
written moments before), merges them with its own, still in registers, writes the final
output and resets the counter for the next call. This replaces the separate merge kernel
and its launch (``docs/kernels/mla_decode.md``, item 10).

Ordering: each thread fences its stores at GPU scope before the warpgroup's barrier, then
one thread's acquire-release atomic publishes them; the last arriver's threads fence after
the barrier that follows its atomic and read with ``.cg`` (L2, not a stale L1 line).
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

D_NOPE: gl.constexpr = gl.constexpr(512)
LN2: gl.constexpr = gl.constexpr(0.6931471805599453)


@gluon.jit
def _fence_gpu(x):
    gl.inline_asm_elementwise(
        "fence.acq_rel.gpu; mov.u32 $0, 0;", "=r,r", [x], dtype=gl.int32, is_pure=False, pack=1
    )


@gluon.jit
def _load_piece(o_part, rows_of_slot, o_c, m_rc, c: gl.constexpr):
    p = o_part + rows_of_slot[:, None] * D_NOPE + o_c[None, :] + 64 * c
    return gl.load(p, mask=m_rc, other=0.0, cache_modifier=".cg")


@gluon.jit
def _merge_chunk(
    o, w_own, w_sum, lse_part, o_part, first, pieces, i_slot, piece_rows, r, m_r, top, o_c,
    m_rc, p_oc, c: gl.constexpr,
):  # fmt: skip
    """Chunk ``c`` of the merged output: ``Σ_j 2^(lse_j − top) · o_j / w_sum``, stored."""
    acc = o * w_own[:, None]
    for j in range(pieces):
        slot = first + j
        if slot != i_slot:
            rows_j = slot.to(gl.int64) * piece_rows + r
            lse_j = gl.load(lse_part + rows_j, mask=m_r, other=float("-inf"), cache_modifier=".cg")
            acc += gl.exp2(lse_j - top)[:, None] * _load_piece(o_part, rows_j, o_c, m_rc, c)
    gl.store(p_oc + 64 * c, (acc / w_sum[:, None]).to(p_oc.dtype.element_ty), mask=m_rc)


@gluon.jit
def write_piece(
    o0, o1, o2, o3, m, l_sum, r, m_r, o_c, i_b, i_m, i_slot, out, lse, o_part, lse_part,
    split_offsets, counter, stride_ob, stride_os, stride_oh, stride_lb, stride_lh, stride_ls,
    piece_rows, H_Q: gl.constexpr, G: gl.constexpr, fused,
):  # fmt: skip
    """Write output columns ``o_c + [0, 64, 128, 192]`` of rows ``r`` (masked by ``m_r``).

    ``o0 … o3`` are the unnormalized ``[64, 64]`` accumulators, ``m`` and ``l_sum`` the
    rows' base-2 running max and sum in their row layout; ``piece_rows`` is ``s_q · h_q``
    as an int64 value and ``counter`` this warpgroup's counter (constants in 64-bit scalar
    arithmetic made here would fall outside the partition's region). ``i_slot < 0``: the sequence is
    one piece. With ``FUSED`` the last piece merges; without, the merge kernel does.
    """
    m_rc = m_r[:, None] & (o_c < D_NOPE)[None, :]
    i_tok = r // H_Q
    i_head = r % H_Q
    p_o = out + i_b * stride_ob + i_tok.to(gl.int64) * stride_os + i_head * stride_oh
    p_oc = p_o[:, None] + o_c[None, :]
    p_lse = lse + i_b * stride_lb + i_head * stride_lh + i_tok * stride_ls
    if i_slot < 0:
        # The sequence is one piece: final output and natural-log LSE.
        inv = (1.0 / l_sum)[:, None]
        gl.store(p_oc, (o0 * inv).to(out.dtype.element_ty), mask=m_rc)
        gl.store(p_oc + 64, (o1 * inv).to(out.dtype.element_ty), mask=m_rc)
        gl.store(p_oc + 128, (o2 * inv).to(out.dtype.element_ty), mask=m_rc)
        gl.store(p_oc + 192, (o3 * inv).to(out.dtype.element_ty), mask=m_rc)
        if G == 0:
            gl.store(p_lse, (m + gl.log2(l_sum)) * LN2, mask=m_r)
    else:
        # A row may see no key of this piece (causal, early draft token): weight 0 in merge.
        empty = l_sum == 0.0
        l_safe = gl.where(empty, 1.0, l_sum)
        inv_part = (1.0 / l_safe)[:, None]
        o0 = o0 * inv_part
        o1 = o1 * inv_part
        o2 = o2 * inv_part
        o3 = o3 * inv_part
        lse_own = gl.where(empty, float("-inf"), m + gl.log2(l_safe))
        o_slot = i_slot.to(gl.int64) * piece_rows + r
        p_pc = o_part + o_slot[:, None] * D_NOPE + o_c[None, :]
        gl.store(p_pc, o0, mask=m_rc)
        gl.store(p_pc + 64, o1, mask=m_rc)
        gl.store(p_pc + 128, o2, mask=m_rc)
        gl.store(p_pc + 192, o3, mask=m_rc)
        if (fused != 0) or (G == 0):
            # Fused, each warpgroup's counter covers only its own stores: both write the LSE.
            gl.store(lse_part + o_slot, lse_own, mask=m_r)
        if fused != 0:
            _fence_gpu(i_slot)
            gl.thread_barrier()
            ticket = gl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
            first = gl.load(split_offsets + i_b)
            pieces = gl.load(split_offsets + i_b + 1) - first
            if ticket == pieces - 1:
                gl.thread_barrier()
                _fence_gpu(i_slot)
                # The largest LSE of each row over the pieces, then the weights 2^(lse - top).
                top = lse_own
                for j in range(pieces):
                    lse_j = gl.load(
                        lse_part + (first + j).to(gl.int64) * piece_rows + r,
                        mask=m_r,
                        other=float("-inf"),
                        cache_modifier=".cg",
                    )
                    top = gl.maximum(top, lse_j)
                top = gl.where(top == float("-inf"), 0.0, top)
                w_own = gl.exp2(lse_own - top)
                w_sum = w_own
                for j in range(pieces):
                    lse_j = gl.load(
                        lse_part + (first + j).to(gl.int64) * piece_rows + r,
                        mask=m_r,
                        other=float("-inf"),
                        cache_modifier=".cg",
                    )
                    w_sum += gl.where(first + j == i_slot, 0.0, gl.exp2(lse_j - top))
                # One 64-column chunk at a time: its own part and the others' (32 registers
                # a thread each) keep the merge within the warpgroup's register budget.
                _merge_chunk(o0, w_own, w_sum, lse_part, o_part, first, pieces, i_slot, piece_rows,
                             r, m_r, top, o_c, m_rc, p_oc, 0)  # fmt: skip
                _merge_chunk(o1, w_own, w_sum, lse_part, o_part, first, pieces, i_slot, piece_rows,
                             r, m_r, top, o_c, m_rc, p_oc, 1)  # fmt: skip
                _merge_chunk(o2, w_own, w_sum, lse_part, o_part, first, pieces, i_slot, piece_rows,
                             r, m_r, top, o_c, m_rc, p_oc, 2)  # fmt: skip
                _merge_chunk(o3, w_own, w_sum, lse_part, o_part, first, pieces, i_slot, piece_rows,
                             r, m_r, top, o_c, m_rc, p_oc, 3)  # fmt: skip
                if G == 0:
                    gl.store(p_lse, (top + gl.log2(w_sum)) * LN2, mask=m_r)
                # Every piece has arrived: ready for the next call (or graph replay).
                gl.store(counter, 0)
