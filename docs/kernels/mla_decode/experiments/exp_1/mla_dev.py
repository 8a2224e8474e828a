"""Development sweep for a Hopper MLA decode kernel (not part of the package yet)."""

import math
import os
import sys
import time

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


def reference(q, kv, bt, seqlens, scale, s_q, page):
    b, _, h_q, _ = q.shape
    outs, lses = [], []
    for i in range(b):
        n = int(seqlens[i])
        pages = bt[i, : (n + page - 1) // page].long()
        rows = (pages[:, None] * page + torch.arange(page, device=kv.device)[None, :]).reshape(-1)[:n]
        k = kv.reshape(-1, 576)[rows].double()
        qq = q[i].double().reshape(s_q * h_q, 576)
        s = qq @ k.T * scale
        tok = torch.arange(s_q * h_q, device=q.device) // h_q
        allowed = torch.arange(n, device=q.device)[None, :] < (n - s_q + tok + 1)[:, None]
        s = s.masked_fill(~allowed, float("-inf"))
        lse = torch.logsumexp(s, -1)
        p = torch.softmax(s, -1)
        outs.append((p @ k[:, :512]).reshape(s_q, h_q, 512))
        lses.append(lse)
    return torch.stack(outs), torch.stack(lses)


def make_inputs(b, s_q, h_q, seqlens, page, dtype, device, gen):
    max_len = int(max(seqlens))
    blocks_per = (max_len + page - 1) // page
    num_blocks = b * blocks_per
    q = torch.randn(b, s_q, h_q, 576, dtype=torch.float32, device=device, generator=gen).to(dtype)
    kv = torch.randn(num_blocks, page, 1, 576, dtype=torch.float32, device=device, generator=gen).to(dtype)
    perm = torch.randperm(num_blocks, device=device, generator=gen).to(torch.int32)
    bt = perm.reshape(b, blocks_per)
    sl = torch.tensor(seqlens, dtype=torch.int32, device=device)
    return q, kv, bt, sl


def relerr(a, b):
    return float((a.double() - b.double()).norm() / b.double().norm())


def check(b, s_q, h_q, seqlens, page, dtype, device, **kw):
    gen = torch.Generator(device=device).manual_seed(1234 + b + s_q + h_q)
    q, kv, bt, sl = make_inputs(b, s_q, h_q, seqlens, page, dtype, device, gen)
    scale = 1 / math.sqrt(192)
    launch = Launcher(b, s_q, h_q, page, dtype, device, **kw)
    launch.out.fill_(float("nan"))
    out, lse = launch(q, kv, bt, sl, scale)
    ro, rl = reference(q, kv, bt, sl, scale, s_q, page)
    e1 = relerr(out, ro)
    e2 = relerr(lse.reshape(b, s_q, h_q).transpose(1, 2), rl.reshape(b, s_q, h_q).transpose(1, 2))
    return e1, e2


if __name__ == "__main__":
    if not torch.cuda.is_available():
        dev = "cpu"
        for kw in (dict(splits=1, block_m=16, block_n=16), dict(splits=3, block_m=16, block_n=32)):
            print(kw, check(2, 2, 3, [5, 70], 16, torch.float16, dev, **kw))
            print(kw, check(2, 1, 16, [1, 33], 64, torch.float32, dev, **kw))
        sys.exit(0)

    # ---------------- GPU sweep ----------------
    import json
    dev = "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False
    out_dir = os.environ.get("OUT", ".")

    def bench(fn):
        return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3

    def graph_time(fn, n=20):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                fn()
        g.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(10):
            a = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
            a.record(); g.replay(); e.record(); torch.cuda.synchronize()
            times.append(a.elapsed_time(e) * 1e3 / n)
        times.sort()
        return times[len(times) // 2]

    # ceilings in the same run
    x = torch.empty(1 << 30, dtype=torch.uint8, device=dev); y = torch.empty_like(x)
    t_copy = bench(lambda: y.copy_(x))
    copy_bps = 2 * x.numel() / (t_copy * 1e-6)
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16); bm = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    t_mm = bench(lambda: a @ bm)
    mm_flops = 2 * 8192**3 / (t_mm * 1e-6)
    del x, y, a, bm
    print(f"ceilings: copy {copy_bps/1e12:.2f} TB/s, matmul {mm_flops/1e12:.0f} TFLOP/s", flush=True)

    quick = "--quick" in sys.argv
    points = [(1, 128), (1, 16), (16, 16), (16, 128)]
    b, t, page = 32, 4096, 64
    rows_out = []
    for s_q, h_q in points:
        gen = torch.Generator(device=dev).manual_seed(7 + s_q * 1000 + h_q)
        q, kv, bt, sl = make_inputs(b, s_q, h_q, [t] * b, page, torch.bfloat16, dev, gen)
        scale = 1 / math.sqrt(192)
        ro, rl = reference(q, kv, bt, sl, scale, s_q, page)
        flops = 2 * s_q * h_q * b * t * (576 + 512)
        nbytes = b * t * 576 * 2 + b * s_q * h_q * (576 + 512) * 2
        floor = max(flops / mm_flops, nbytes / copy_bps) * 1e6
        rows = s_q * h_q
        configs = []
        if rows <= 16:
            for bn in (32, 64):
                for st in (2, 3, 4):
                    for sp in (4, 8):
                        configs.append(dict(block_m=16, block_n=bn, stages=st, splits=sp, num_warps=4))
            configs.append(dict(block_m=64, block_n=64, stages=2, splits=4, num_warps=8))
        else:
            sps = (1, 2, 4) if rows == 128 else ((1, 2) if rows == 256 else (1,))
            for bn in (32, 64):
                for st in (1, 2, 3):
                    for sp in sps:
                        if bn == 64 and st == 3:
                            continue
                        configs.append(dict(block_m=64, block_n=bn, stages=st, splits=sp, num_warps=8))
            configs.append(dict(block_m=64, block_n=64, stages=2, splits=sps[-1], num_warps=8, ws=True))
            configs.append(dict(block_m=64, block_n=32, stages=2, splits=sps[-1], num_warps=8, ws=True))
        if quick:
            configs = configs[:3]
        for cfg in configs:
            rec = dict(s=s_q, h=h_q, floor_us=floor, **cfg)
            try:
                L = Launcher(b, s_q, h_q, page, torch.bfloat16, dev, **cfg)
                L.out.fill_(float("nan"))
                o, l = L(q, kv, bt, sl, scale)
                torch.cuda.synchronize()
                rec["err"] = relerr(o, ro)
                rec["lse_err"] = relerr(l.reshape(b, s_q, h_q).transpose(1, 2), rl.reshape(b, s_q, h_q).transpose(1, 2))
                rec["us"] = bench(lambda: L(q, kv, bt, sl, scale))
                rec["us_graph"] = graph_time(lambda: L(q, kv, bt, sl, scale))
                best = min(rec["us"], rec["us_graph"])
                rec["frac"] = floor / best
                rec["tflops"] = flops / best / 1e6
            except Exception as e:  # keep sweeping
                rec["error"] = repr(e)[:200]
            rows_out.append(rec)
            print(json.dumps(rec), flush=True)
    with open(os.path.join(out_dir, "sweep.jsonl"), "w") as f:
        for r in rows_out:
            f.write(json.dumps(r) + "\n")
    print("\n s   h  bm  bn st sp ws |    err |   us   graph | frac")
    for r in rows_out:
        if "us" in r:
            print(f"{r['s']:2d} {r['h']:3d} {r['block_m']:3d} {r['block_n']:3d} {r['stages']:2d} {r['splits']:2d} {int(r.get('ws', False))} | {r['err']:.1e} | {r['us']:6.1f} {r['us_graph']:6.1f} | {r['frac']:.2f}")
        else:
            print(r['s'], r['h'], r.get('block_n'), r.get('stages'), r.get('splits'), r.get('ws'), r.get('error'))
