"""Exp 41: the ring kernel merging two-piece sequences itself (exp_41/ring_pair.py, the shipped
ring.py with PAIR_MERGE: the second piece merges) against the shipped kernels with the merge
kernel.

On a GPU: correctness first (30 calls on NaN-poisoned outputs and 200 CUDA-graph replays per
case, against the float64 reference), then six alternating rounds of CUDA-graph medians at
b=32 s=1 h=16 and on the b=128 h=16 batch. Run from the repository root:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_41/check_and_time.py
With --compile-only (no GPU needed): ptxas's report for sm_90a in each mode. --part check or
--part time runs one half (each compiles a dozen kernel variants: a call of its own keeps
within a 10-minute limit); the JSONL goes to $OUT/exp41_<part>.jsonl."""
import functools, importlib.util, json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import triton
from kernelopt.kernels.mla import ring, seesaw as S
HERE = os.path.dirname(os.path.abspath(__file__))
def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    return module
PAIR = load("ring_pair")
TUNED = {"SLOTS": ring.SLOTS, "REGS": ring.CONSUMER_REGS, "LOAD_REGS": ring.LOADER_REGS}
if "--compile-only" in sys.argv:
    from kernelopt.kernels.mla.resources import _gluon_report
    nv = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
    typed = {"q": "*bf16", "kv": "*bf16", "out": "*bf16", "q_desc": f"tensordesc<bf16[16, 64],{nv}>",
             "kv_desc": f"tensordesc<bf16[64, 64],{nv}>", "block_table": "*i32", "seqlens": "*i32",
             "units": "*i32", "lse": "*fp32", "o_part": "*fp32", "lse_part": "*fp32", "qk_scale": "fp32",
             "split_offsets": "*i32", "counters": "*i32"}
    for name, module, pm in (("pair, PAIR_MERGE off", PAIR, False), ("pair", PAIR, True)):
        for s_q, h_q, causal in ((1, 16, False), (2, 8, True)):
            r = _gluon_report(module.mla_ring_kernel, typed, s_q=s_q, h_q=h_q, page_size=64, causal=causal,
                              PAIR_MERGE=pm, **TUNED)
            print(json.dumps({"variant": name, "s_q": s_q, "h_q": h_q, "causal": causal, **r}), flush=True)
    sys.exit(0)
import torch
if not torch.cuda.is_available():
    sys.exit("check_and_time: Expected a CUDA device, got none (--compile-only runs without one)")
import mla_decode as B
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan
from kernelopt.kernels.mla.ref import mla_decode_ref
SHIPPED = S.launch_seesaw


def launch_variant(mode, q, kv_cache, block_table, seqlens, units, split_offsets, out, lse, *, o_part,
                   lse_part, softmax_scale, causal, num_units, has_splits, config, scratch,
                   counters=None, pairs_only=False):
    """launch_seesaw's ring path with the variant kernel: two-piece splits merge in the kernel,
    others run the merge kernel."""
    _, s_q, h_q, _ = q.shape
    assert s_q * h_q <= ring.MAX_ROWS and kv_cache.dtype in (torch.bfloat16, torch.float16)
    page = kv_cache.shape[1]
    o_arg = o_part if o_part is not None else lse
    lse_arg = lse_part if lse_part is not None else lse
    rows_kv = kv_cache.shape[0] * page
    flat = kv_cache.view(rows_kv, 576)
    kv_desc = TensorDescriptor(flat, [rows_kv, 576], [576, 1], [64, 64], S._LAYOUT)
    q_tma = S.Q_BY_TMA and q.is_contiguous() and q.data_ptr() % 16 == 0
    q_desc = TensorDescriptor(q.view(-1, 576), [q.numel() // 576, 576], [576, 1], [16, 64], S._LAYOUT) if q_tma else kv_desc
    pair = bool(mode == "pair" and has_splits and pairs_only and counters is not None)
    kernel = PAIR.mla_ring_kernel
    grid = (triton.cdiv(s_q * h_q, 16), num_units)
    with S._scratch(scratch):
        kernel[grid](
            q, q_desc, kv_cache, kv_desc, block_table, seqlens, units, out, lse, o_arg, lse_arg,
            q.stride(0), q.stride(1), q.stride(2), block_table.stride(0), out.stride(0), out.stride(1),
            out.stride(2), lse.stride(0), lse.stride(1), lse.stride(2), softmax_scale * S.LOG2E,
            split_offsets, counters if counters is not None else units,
            S_Q=s_q, H_Q=h_q, PAGE=page, CAUSAL=causal, Q_TMA=q_tma, PAIR_MERGE=pair, num_warps=4, **TUNED)
    if has_splits and not pair:
        S.launch_merge(o_arg, lse_arg, split_offsets, out, lse, config=config)


def use(variant):
    S.launch_seesaw = SHIPPED if variant == "shipped" else functools.partial(launch_variant, variant)


rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__})


def inputs(seqlens, s_q, h_q, dtype, seed):
    p = B.Point("case", s_q, h_q, list(seqlens))
    return p, B.make_inputs(p, "cuda", dtype, seed)


def check(name, seqlens, s_q, h_q, num_splits, dtype=torch.bfloat16, causal=True):
    p, x = inputs(seqlens, s_q, h_q, dtype, 11)
    plan = MLADecodePlan(x["seqlens"], s_q=s_q, h_q=h_q, page_size=p.page, softmax_scale=B.SCALE, dtype=dtype,
                         device="cuda", strategy="seesaw", num_splits=num_splits, causal=causal)
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE, causal=causal)
    out = torch.empty(p.b, s_q, h_q, 512, dtype=dtype, device="cuda")
    lse = torch.empty(p.b, h_q, s_q, dtype=torch.float32, device="cuda")
    splits = list(plan.schedule.splits) if plan.schedule is not None else None
    for variant in ("shipped", "pair"):
        use(variant)
        errs, lerrs, nonfinite = [], [], 0

        def one():
            o = out.double()
            nonfin = int(not bool(torch.isfinite(out).all() and torch.isfinite(lse).all()))
            e = float(torch.nan_to_num((o - r_o).norm() / r_o.norm(), nan=1e9))
            le = float(torch.nan_to_num((lse.double() - r_l).abs().max(), nan=1e9))
            return nonfin, e, le
        for _ in range(30):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse); torch.cuda.synchronize()
            n, e, le = one(); nonfinite += n; errs.append(e); lerrs.append(le)
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
        for _ in range(200):
            g.replay(); torch.cuda.synchronize()
            n, e, le = one(); nonfinite += n; errs.append(e); lerrs.append(le)
        counters_zero = plan._counters is None or int(plan._counters.abs().sum()) == 0
        emit({"case": name, "variant": variant, "splits": splits, "calls": len(errs), "nonfinite_calls": nonfinite,
              "worst_rel_err": max(errs), "worst_lse_abs_err": max(lerrs), "counters_left_zero": counters_zero,
              "ok": nonfinite == 0 and max(errs) < 1e-2 and max(lerrs) < 1e-2 and counters_zero})
    use("shipped")


PART = sys.argv[sys.argv.index("--part") + 1] if "--part" in sys.argv else "all"
assert PART in ("check", "time", "all"), PART
BATCH = {q.name: q for q in B.trial_points(False, False)}["b=128 s=1 h=16 t~4096"].seqlens
if PART != "time":
    check("b=32 s=1 h=16 t=4096, 2 pieces", [4096] * 32, 1, 16, 2)
    check("b=32 s=1 h=16 t=4096, scheduler (4 pieces)", [4096] * 32, 1, 16, None)
    check("b=4 s=1 h=16 t=4096, 8 pieces", [4096] * 4, 1, 16, 8)
    check("b=128 s=1 h=16 t~4096, scheduler", BATCH, 1, 16, None)
    check("mixed lengths 1/17/64/65/4097, 1-2 pieces", [1, 17, 64, 65, 4097, 3000, 129, 4096], 1, 16,
          [1, 2, 1, 2, 2, 2, 2, 1])
    check("mixed lengths, 1-5 pieces (merge kernel)", [1, 17, 4097, 3000, 129, 4096], 1, 16, [1, 2, 5, 3, 2, 4])
    check("s=2 h=8 causal, 2 pieces", [4097, 17, 4096, 1000], 2, 8, 2)
    check("s=1 h=1, 2 pieces", [4097, 4096, 65], 1, 1, 2)
    check("s=1 h=16 float16, 2 pieces", [4096] * 8, 1, 16, 2, dtype=torch.float16)

TIMED = {
    "b=32 s=1 h=16 t=4096": [("scheduler", None, "shipped"), ("2 pieces", 2, "shipped"),
                             ("2 pieces, second merges", 2, "pair")],
    "b=128 s=1 h=16 t~4096": [("scheduler", None, "shipped"), ("scheduler, second merges", None, "pair"),
                              ("1 piece", 1, "shipped")],
}
for base, counts in ({} if PART == "check" else TIMED).items():
    p = {q.name: q for q in B.trial_points(False, False)}[base]
    x = B.make_inputs(p, "cuda", torch.bfloat16, 5)
    out = torch.empty(p.b, 1, p.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, p.h_q, 1, dtype=torch.float32, device="cuda")
    plans = {label: (MLADecodePlan(x["seqlens"], s_q=1, h_q=p.h_q, page_size=p.page, softmax_scale=B.SCALE,
                                   dtype=torch.bfloat16, device="cuda", strategy="seesaw", num_splits=n), v)
             for label, n, v in counts}
    r_o, _ = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    for k, (pl, v) in plans.items():
        # Checked again on the timed inputs, so a timed variant is never a wrong one.
        use(v); out.fill_(float("nan")); lse.fill_(float("nan"))
        pl.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse); torch.cuda.synchronize()
        err = float(torch.nan_to_num((out.double() - r_o).norm() / r_o.norm(), nan=1e9))
        emit({"point": base, "plan": k, "rel_err": err, "finite": bool(torch.isfinite(out).all())})
    t = {k: [] for k in plans}
    for r in range(6):
        for k in (list(plans) if r % 2 == 0 else list(plans)[::-1]):
            pl, v = plans[k]
            use(v)
            t[k].append(round(measure(lambda: pl.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse),
                                      mode="graph", max_time_ms=150).median, 2))
    use("shipped")
    first = list(plans)[0]
    emit({"point": base, "graph_medians_us": t,
          "speedup_vs_scheduler": {k: [round(a / b, 4) for a, b in zip(t[first], v)] for k, v in t.items()}})
with open(os.path.join(os.environ.get("OUT", "/tmp"), f"exp41_{PART}.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
