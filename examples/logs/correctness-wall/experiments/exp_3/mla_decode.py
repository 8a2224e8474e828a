"""MLA decode in Triton, v2: TMA key tiles and a QK^T that is not replicated across warpgroups.

Absorbed DeepSeek-V3 MLA as MQA over a paged latent cache: q [b, s_q, h_q, 576] bf16
(512 latent + 64 RoPE columns); kv [num_blocks, page, 1, 576] bf16, where V is the first
512 columns of the same latent tile, loaded once for both products; block_table
[b, max_blocks] int32; seqlens [b] int32. Returns out [b, s_q, h_q, 512] and the natural-log
LSE [b, s_q * h_q] fp32. Causal among the s_q draft tokens.

- Head grouping: the s_q * h_q query rows of a sequence fill BLOCK_M rows of one MMA tile.
- TMA: key tiles come through device-side tensor descriptors (TMA=True), one per
  [BLOCK_N, 512] latent part and one per [BLOCK_N, 64] RoPE part.
- BREAK: a runtime branch around the softmax keeps the compiler from chaining QK^T into PV,
  which would compute QK^T on both warpgroups.
- Online softmax in base 2, log2(e) folded into the scale; the LSE goes back to natural log.
- KV splits: program (i_m, i_b, i_s) walks one contiguous range of KV tiles and writes a
  partial output; the combine kernel merges the partials by their LSE.
- Launcher preallocates the outputs and the split workspaces once per shape (persistent
  buffers). Device-side tensor descriptors need a global scratch allocator, installed once.
"""

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634

# Device-side tensor descriptors take their scratch from this allocator at launch.
triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))


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
        if ABLATE == 1:  # no 512-wide QK^T product: scores from the 64 RoPE columns only
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
                if ABLATE == 3:  # no exponentials: the shifted scores are the weights
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
        if ABLATE == 2:  # no PV product: the row sum of P stands in for it
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


@triton.jit
def _combine(OP, LSEP, O, LSE, ROWS: tl.constexpr, SPLITS: tl.constexpr, BLOCK_R: tl.constexpr):
    i_r = tl.program_id(0)
    i_b = tl.program_id(1)
    o_rows = i_r * BLOCK_R + tl.arange(0, BLOCK_R)
    m_rows = o_rows < ROWS
    o_d = tl.arange(0, 512)
    b_max = tl.full([BLOCK_R], float("-inf"), tl.float32)
    for s in tl.static_range(SPLITS):
        b_lse = tl.load(LSEP + (i_b * SPLITS + s) * ROWS + o_rows, mask=m_rows, other=float("-inf"))
        b_max = tl.maximum(b_max, b_lse)
    b_max_safe = tl.where(b_max == float("-inf"), 0.0, b_max)
    b_sum = tl.zeros([BLOCK_R], tl.float32)
    b_acc = tl.zeros([BLOCK_R, 512], tl.float32)
    for s in tl.static_range(SPLITS):
        base = (i_b * SPLITS + s) * ROWS
        b_lse = tl.load(LSEP + base + o_rows, mask=m_rows, other=float("-inf"))
        b_w = tl.exp2(b_lse - b_max_safe)
        b_o = tl.load(OP + (base + o_rows[:, None]) * 512 + o_d[None, :], mask=m_rows[:, None], other=0.0)
        b_acc += b_w[:, None] * b_o
        b_sum += b_w
    b_out = b_acc / b_sum[:, None]
    tl.store(O + (i_b * ROWS + o_rows[:, None]) * 512 + o_d[None, :], b_out.to(O.dtype.element_ty), mask=m_rows[:, None])
    tl.store(LSE + i_b * ROWS + o_rows, (b_max + tl.log2(b_sum)) * 0.6931471805599453, mask=m_rows)


class Launcher:
    def __init__(self, b, s_q, h_q, page, dtype, device, splits, block_m=64, block_n=64,
                 num_warps=8, stages=2, brk=True, tma=True, ablate=1):
        self.rows = s_q * h_q
        self.b, self.s_q, self.h_q, self.page = b, s_q, h_q, page
        self.splits, self.block_m, self.block_n = splits, block_m, block_n
        self.num_warps, self.stages, self.brk, self.tma, self.ablate = num_warps, stages, brk, tma, ablate
        self.out = torch.empty(b, s_q, h_q, 512, dtype=dtype, device=device)
        self.lse_rows = torch.empty(b, self.rows, dtype=torch.float32, device=device)
        if splits > 1:
            self.op = torch.empty(b, splits, self.rows, 512, dtype=torch.float32, device=device)
            self.lsep = torch.empty(b, splits, self.rows, dtype=torch.float32, device=device)
        else:
            self.op, self.lsep = self.out, self.lse_rows

    def __call__(self, q, kv, bt, seqlens, scale):
        grid = (triton.cdiv(self.rows, self.block_m), self.b, self.splits)
        _fwd2[grid](
            q, kv, bt, seqlens, self.out, self.lse_rows, self.op, self.lsep,
            scale * LOG2E, bt.stride(0), kv.shape[0] * kv.shape[1],
            H_Q=self.h_q, S_Q=self.s_q, ROWS=self.rows, BLOCK_M=self.block_m,
            BLOCK_N=self.block_n, PAGE=self.page, SPLITS=self.splits, STAGES=self.stages,
            BREAK=self.brk, TMA=self.tma, ABLATE=self.ablate, num_warps=self.num_warps, num_stages=self.stages,
        )
        if self.splits > 1:
            _combine[(triton.cdiv(self.rows, 16), self.b)](
                self.op, self.lsep, self.out, self.lse_rows, ROWS=self.rows,
                SPLITS=self.splits, BLOCK_R=16, num_warps=4)
        return self.out, self.lse_rows
