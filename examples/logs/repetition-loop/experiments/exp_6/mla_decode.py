"""MLA decode in Triton: split-KV (flash decoding) with an LSE combine kernel.

Absorbed DeepSeek-V3 MLA as MQA over a paged latent cache: q [b, s_q, h_q, 576] bf16
(512 latent + 64 RoPE columns); kv [num_blocks, page, 1, 576] bf16, where V is the first
512 columns of the same latent tile, loaded once for both products; block_table
[b, max_blocks] int32; seqlens [b] int32. Returns out [b, s_q, h_q, 512] and the natural-log
LSE [b, s_q * h_q] fp32. Causal among the s_q draft tokens.

- Head grouping: the s_q * h_q query rows of a sequence fill BLOCK_M rows of one MMA tile
  (heads per program = BLOCK_M / s_q).
- Online softmax in base 2, log2(e) folded into the scale; the LSE goes back to natural log.
- KV splits: program (i_m, i_b, i_s) walks one contiguous range of KV tiles and writes a
  partial output; the combine kernel merges the partials by their LSE.
- Launcher preallocates the outputs and the split workspaces once per shape (persistent
  buffers): a call only launches.
"""

import torch
import triton
import triton.language as tl

D_LAT = 512
D_ROPE = 64
D_QK = 576
LOG2E = 1.4426950408889634


@triton.jit
def _fwd(
    Q, KV, BT, SEQ, O, LSE, OP, LSEP,
    sm_scale_log2,
    stride_bt,
    H_Q: tl.constexpr, S_Q: tl.constexpr, ROWS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PAGE: tl.constexpr,
    SPLITS: tl.constexpr, WS: tl.constexpr, STAGES: tl.constexpr,
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
    # row r is draft token r // H_Q; it sees keys < seqlen - S_Q + token + 1
    b_limit = seqlen - S_Q + o_rows // H_Q + 1

    b_m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    b_l = tl.zeros([BLOCK_M], tl.float32)
    b_acc = tl.zeros([BLOCK_M, 512], tl.float32)
    for t in tl.range(t0, t1, num_stages=STAGES, warp_specialize=WS):
        o_k = t * BLOCK_N + tl.arange(0, BLOCK_N)
        if BLOCK_N <= PAGE:
            page = tl.load(BT + i_b * stride_bt + (t * BLOCK_N) // PAGE)
            o_row = page * PAGE + (t * BLOCK_N) % PAGE + tl.arange(0, BLOCK_N)
        else:
            pages = tl.load(BT + i_b * stride_bt + o_k // PAGE)
            o_row = pages * PAGE + o_k % PAGE
        p_kv = KV + o_row.to(tl.int64)[:, None] * 576
        m_k = o_k < seqlen
        b_k_lat = tl.load(p_kv + o_lat[None, :], mask=m_k[:, None], other=0.0)
        b_k_rope = tl.load(p_kv + 512 + o_rope[None, :], mask=m_k[:, None], other=0.0)
        b_s = tl.dot(b_q_lat, tl.trans(b_k_lat))
        b_s = tl.dot(b_q_rope, tl.trans(b_k_rope), b_s)
        b_s = b_s * sm_scale_log2
        b_s = tl.where(o_k[None, :] < b_limit[:, None], b_s, float("-inf"))
        b_m_new = tl.maximum(b_m, tl.max(b_s, 1))
        b_m_safe = tl.where(b_m_new == float("-inf"), 0.0, b_m_new)
        b_alpha = tl.exp2(b_m - b_m_safe)
        b_p = tl.exp2(b_s - b_m_safe[:, None])
        b_l = b_l * b_alpha + tl.sum(b_p, 1)
        b_acc = b_acc * b_alpha[:, None]
        b_acc = tl.dot(b_p.to(b_k_lat.dtype), b_k_lat, b_acc)
        b_m = b_m_new

    b_lse2 = b_m + tl.log2(b_l)  # -inf when this range saw no key
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
                 num_warps=8, stages=2, ws=False):
        self.rows = s_q * h_q
        self.b, self.s_q, self.h_q, self.page = b, s_q, h_q, page
        self.splits, self.block_m, self.block_n = splits, block_m, block_n
        self.num_warps, self.stages, self.ws = num_warps, stages, ws
        self.out = torch.empty(b, s_q, h_q, 512, dtype=dtype, device=device)
        self.lse_rows = torch.empty(b, self.rows, dtype=torch.float32, device=device)
        if splits > 1:
            self.op = torch.empty(b, splits, self.rows, 512, dtype=torch.float32, device=device)
            self.lsep = torch.empty(b, splits, self.rows, dtype=torch.float32, device=device)
        else:
            self.op = self.out
            self.lsep = self.lse_rows

    def __call__(self, q, kv, bt, seqlens, scale):
        grid = (triton.cdiv(self.rows, self.block_m), self.b, self.splits)
        _fwd[grid](
            q, kv, bt, seqlens, self.out, self.lse_rows, self.op, self.lsep,
            scale * LOG2E, bt.stride(0),
            H_Q=self.h_q, S_Q=self.s_q, ROWS=self.rows, BLOCK_M=self.block_m,
            BLOCK_N=self.block_n, PAGE=self.page, SPLITS=self.splits, WS=self.ws,
            STAGES=self.stages, num_warps=self.num_warps, num_stages=self.stages,
        )
        if self.splits > 1:
            block_r = 16
            _combine[(triton.cdiv(self.rows, block_r), self.b)](
                self.op, self.lsep, self.out, self.lse_rows, ROWS=self.rows,
                SPLITS=self.splits, BLOCK_R=block_r, num_warps=4,
            )
        return self.out, self.lse_rows


# The configuration this experiment timed.
CONFIG = dict(splits=8, block_m=16, block_n=32, num_warps=4, stages=3)
