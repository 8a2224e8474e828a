"""v2: break the chained-dot heuristic (no replicated QK^T) and TMA loads of KV tiles."""
import math, os, sys, json
import torch, triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _fwd2(
    Q, KV, BT, SEQ, O, LSE, OP, LSEP,
    sm_scale_log2, stride_bt, num_rows_kv,
    H_Q: tl.constexpr, S_Q: tl.constexpr, ROWS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PAGE: tl.constexpr,
    SPLITS: tl.constexpr, STAGES: tl.constexpr, BREAK: tl.constexpr, TMA: tl.constexpr,
    ABLATE: tl.constexpr = 0,
):
    i_m = tl.program_id(0)
    i_b = tl.program_id(1)
    i_s = tl.program_id(2)
    seqlen = tl.load(SEQ + i_b)
    n_tiles = tl.cdiv(seqlen, BLOCK_N)
    per = tl.cdiv(n_tiles, SPLITS)
    t0 = i_s * per
    t1 = tl.minimum(t0 + per, n_tiles)

    o_rows = i_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_rows = o_rows < ROWS
    o_lat = tl.arange(0, 512)
    o_rope = tl.arange(0, 64)
    p_q = Q + i_b * ROWS * 576 + o_rows[:, None] * 576
    b_q_lat = tl.load(p_q + o_lat[None, :], mask=m_rows[:, None], other=0.0)
    b_q_rope = tl.load(p_q + 512 + o_rope[None, :], mask=m_rows[:, None], other=0.0)
    b_limit = seqlen - S_Q + o_rows // H_Q + 1
    if TMA:
        d_lat = tl.make_tensor_descriptor(KV, [num_rows_kv, 576], [576, 1], [BLOCK_N, 512])
        d_rope = tl.make_tensor_descriptor(KV + 512, [num_rows_kv, 64], [576, 1], [BLOCK_N, 64])

    b_m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    b_l = tl.zeros([BLOCK_M], tl.float32)
    b_acc = tl.zeros([BLOCK_M, 512], tl.float32)
    for t in tl.range(t0, t1, num_stages=STAGES):
        o_k = t * BLOCK_N + tl.arange(0, BLOCK_N)
        page = tl.load(BT + i_b * stride_bt + (t * BLOCK_N) // PAGE)
        row0 = page * PAGE + (t * BLOCK_N) % PAGE
        if TMA:
            b_k_lat = d_lat.load([row0, 0])
            b_k_rope = d_rope.load([row0, 0])
        else:
            o_row = row0 + tl.arange(0, BLOCK_N)
            p_kv = KV + o_row.to(tl.int64)[:, None] * 576
            b_k_lat = tl.load(p_kv + o_lat[None, :])
            b_k_rope = tl.load(p_kv + 512 + o_rope[None, :])
        # two independent products: accumulating one into the other would chain them
        # Scaling each product before the sum keeps the compiler from folding one into the
        # other's accumulator, which would chain them and replicate the 512-wide product.
        if ABLATE == 1:  # timing variant: no 512-wide QK^T product
            b_s = tl.dot(b_q_rope, tl.trans(b_k_rope)) * sm_scale_log2
        else:
            b_s = (tl.dot(b_q_lat, tl.trans(b_k_lat)) * sm_scale_log2
                   + tl.dot(b_q_rope, tl.trans(b_k_rope)) * sm_scale_log2)
        if BREAK:
            # A runtime branch keeps the compiler from treating QK^T and PV as one chain,
            # which would replicate QK^T across the two warpgroups.
            if seqlen > 0:
                b_s = tl.where(o_k[None, :] < b_limit[:, None], b_s, float("-inf"))
                b_m_new = tl.maximum(b_m, tl.max(b_s, 1))
                b_m_safe = tl.where(b_m_new == float("-inf"), 0.0, b_m_new)
                if ABLATE == 3:  # timing variant: no exponentials
                    b_alpha = b_m - b_m_safe
                    b_p = b_s - b_m_safe[:, None]
                else:
                    b_alpha = tl.exp2(b_m - b_m_safe)
                    b_p = tl.exp2(b_s - b_m_safe[:, None])
                b_l = b_l * b_alpha + tl.sum(b_p, 1)
                b_pb = b_p.to(b_k_lat.dtype)
            else:
                b_m_new = b_m
                # never taken (the loop runs only when seqlen > 0); built from b_s so
                # that no constant tile is materialized in shared memory
                b_alpha = b_m
                b_pb = b_s.to(b_k_lat.dtype)
        else:
            b_s = tl.where(o_k[None, :] < b_limit[:, None], b_s, float("-inf"))
            b_m_new = tl.maximum(b_m, tl.max(b_s, 1))
            b_m_safe = tl.where(b_m_new == float("-inf"), 0.0, b_m_new)
            b_alpha = tl.exp2(b_m - b_m_safe)
            b_p = tl.exp2(b_s - b_m_safe[:, None])
            b_l = b_l * b_alpha + tl.sum(b_p, 1)
            b_pb = b_p.to(b_k_lat.dtype)
        b_acc = b_acc * b_alpha[:, None]
        if ABLATE == 2:  # timing variant: no PV product
            b_acc += tl.sum(b_pb.to(tl.float32), 1)[:, None]
        else:
            b_acc = tl.dot(b_pb, b_k_lat, b_acc)
        b_m = b_m_new

    b_lse2 = b_m + tl.log2(b_l)
    b_out = b_acc / tl.where(b_l == 0.0, 1.0, b_l)[:, None]
    if SPLITS == 1:
        p_o = O + i_b * ROWS * 512 + o_rows[:, None] * 512 + o_lat[None, :]
        tl.store(p_o, b_out.to(O.dtype.element_ty), mask=m_rows[:, None])
        tl.store(LSE + i_b * ROWS + o_rows, b_lse2 * 0.6931471805599453, mask=m_rows)
    else:
        base = (i_b * SPLITS + i_s) * ROWS
        tl.store(OP + (base + o_rows[:, None]) * 512 + o_lat[None, :], b_out, mask=m_rows[:, None])
        tl.store(LSEP + base + o_rows, b_lse2, mask=m_rows)
