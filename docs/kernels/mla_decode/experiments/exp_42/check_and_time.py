"""Exp 42: the ring kernel's start-chain tables (work units, lengths, block table) read with an
L2 evict-last policy (exp_42/ring_hint.py, the shipped ring.py with eviction_policy="evict_last"
on its seven table loads) against the shipped kernel.

On a GPU: correctness first (30 calls on NaN-poisoned outputs and 200 CUDA-graph replays per
case, against the float64 reference), then six alternating rounds of CUDA-graph medians at
b=32 s=1 h=16, on the b=128 h=16 batch and on a short mixed batch. Run from the repository root:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_42/check_and_time.py
With --compile-only (no GPU needed): the load instructions and ptxas's report for sm_90a. The
JSONL goes to $OUT/exp42.jsonl."""
import importlib.util, json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import triton
from kernelopt.kernels.mla import ring
HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ring_hint", os.path.join(HERE, "ring_hint.py"))
HINT = importlib.util.module_from_spec(spec); spec.loader.exec_module(HINT)
KERNELS = {"shipped": ring.mla_ring_kernel, "hint": HINT.mla_ring_kernel}
TUNED = {"SLOTS": ring.SLOTS, "REGS": ring.CONSUMER_REGS, "LOAD_REGS": ring.LOADER_REGS}
if "--compile-only" in sys.argv:
    from kernelopt.kernels.mla.resources import _gluon_report
    nv = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
    typed = {"q": "*bf16", "kv": "*bf16", "out": "*bf16", "q_desc": f"tensordesc<bf16[16, 64],{nv}>",
             "kv_desc": f"tensordesc<bf16[64, 64],{nv}>", "block_table": "*i32", "seqlens": "*i32",
             "units": "*i32", "lse": "*fp32", "o_part": "*fp32", "lse_part": "*fp32", "qk_scale": "fp32"}
    for name, fn in KERNELS.items():
        r = _gluon_report(fn, typed, s_q=1, h_q=16, page_size=64, causal=False, **TUNED)
        print(json.dumps({"variant": name, **r}), flush=True)
    sys.exit(0)
import torch
if not torch.cuda.is_available():
    sys.exit("check_and_time: Expected a CUDA device, got none (--compile-only runs without one)")
import mla_decode as B
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan
from kernelopt.kernels.mla.ref import mla_decode_ref

rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__})


def use(variant):
    ring.mla_ring_kernel = KERNELS[variant]


def check(name, seqlens, s_q, h_q, num_splits, dtype=torch.bfloat16, causal=True):
    p = B.Point("case", s_q, h_q, list(seqlens))
    x = B.make_inputs(p, "cuda", dtype, 11)
    plan = MLADecodePlan(x["seqlens"], s_q=s_q, h_q=h_q, page_size=p.page, softmax_scale=B.SCALE, dtype=dtype,
                         device="cuda", strategy="seesaw", num_splits=num_splits, causal=causal)
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE, causal=causal)
    out = torch.empty(p.b, s_q, h_q, 512, dtype=dtype, device="cuda")
    lse = torch.empty(p.b, h_q, s_q, dtype=torch.float32, device="cuda")
    for variant in KERNELS:
        use(variant)
        errs, lerrs, nonfinite = [], [], 0

        def one():
            nonfin = int(not bool(torch.isfinite(out).all() and torch.isfinite(lse).all()))
            e = float(torch.nan_to_num((out.double() - r_o).norm() / r_o.norm(), nan=1e9))
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
        emit({"case": name, "variant": variant, "calls": len(errs), "nonfinite_calls": nonfinite,
              "worst_rel_err": max(errs), "worst_lse_abs_err": max(lerrs),
              "ok": nonfinite == 0 and max(errs) < 1e-2 and max(lerrs) < 1e-2})
    use("shipped")


BATCH = {q.name: q for q in B.trial_points(False, False)}["b=128 s=1 h=16 t~4096"].seqlens
SHORT = [1, 17, 63, 65, 4097, 130, 64, 2000]
check("b=32 s=1 h=16 t=4096, scheduler", [4096] * 32, 1, 16, None)
check("b=128 s=1 h=16 t~4096, scheduler", BATCH, 1, 16, None)
check("mixed lengths 1/17/64/65/4097, 1-5 pieces", [1, 17, 64, 65, 4097, 3000, 129, 4096], 1, 16,
      [1, 2, 1, 2, 5, 3, 2, 4])
check("s=2 h=8 causal, scheduler", [4097, 17, 4096, 1000], 2, 8, None)
check("s=1 h=1, 2 pieces", [4097, 4096, 65], 1, 1, 2)
check("s=1 h=16 float16, scheduler", [4096] * 8, 1, 16, None, dtype=torch.float16)

TIMED = {"b=32 s=1 h=16 t=4096": [4096] * 32, "b=128 s=1 h=16 t~4096": BATCH, "short batch": SHORT}
for base, lengths in TIMED.items():
    p = B.Point(base, 1, 16, list(lengths))
    x = B.make_inputs(p, "cuda", torch.bfloat16, 5)
    out = torch.empty(p.b, 1, 16, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, 16, 1, dtype=torch.float32, device="cuda")
    plan = MLADecodePlan(x["seqlens"], s_q=1, h_q=16, page_size=p.page, softmax_scale=B.SCALE,
                         dtype=torch.bfloat16, device="cuda", strategy="seesaw")
    r_o, _ = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    for v in KERNELS:
        # Checked again on the timed inputs, so a timed variant is never a wrong one.
        use(v); out.fill_(float("nan")); lse.fill_(float("nan"))
        plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse); torch.cuda.synchronize()
        err = float(torch.nan_to_num((out.double() - r_o).norm() / r_o.norm(), nan=1e9))
        emit({"point": base, "variant": v, "rel_err": err, "finite": bool(torch.isfinite(out).all())})
    t = {k: [] for k in KERNELS}
    for r in range(6):
        for v in (list(KERNELS) if r % 2 == 0 else list(KERNELS)[::-1]):
            use(v)
            t[v].append(round(measure(lambda: plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse),
                                      mode="graph", max_time_ms=150).median, 3))
    use("shipped")
    emit({"point": base, "splits": list(plan.schedule.splits) if plan.schedule is not None else None,
          "graph_medians_us": t, "speedup_vs_shipped": [round(a / b, 4) for a, b in zip(t["shipped"], t["hint"])]})
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp42.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
