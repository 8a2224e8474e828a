"""Exp 50: the ring kernel's split partials stored in the cache's 16-bit type instead of
float32 (half the bytes written by the ring kernel and read by the merge kernel), with the
scheduler's pieces and with two pieces a sequence.

The variant needs no kernel change: the plan's float32 partial workspace is reinterpreted as
a contiguous 16-bit one, the ring kernel's stores convert to the pointer's type and the merge
kernel's loads are widened to float32 by its arithmetic. Every variant is checked against the
float64 reference on NaN-poisoned outputs (awkward and causal cases too), then six
alternating rounds of CUDA-graph medians of MLADecodePlan.run, the SM clock read after each.
Run from the repository root on a GPU:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_50/check_and_time.py"""
import json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import pynvml, torch, triton
import mla_decode as B
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan
from kernelopt.kernels.mla.ref import mla_decode_ref

pynvml.nvmlInit(); NV = pynvml.nvmlDeviceGetHandleByIndex(0)
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
      "driver": pynvml.nvmlSystemGetDriverVersion()})


def make(p, x, n, half):
    plan = MLADecodePlan(x["seqlens"], s_q=p.s_q, h_q=p.h_q, page_size=p.page, softmax_scale=B.SCALE,
                         dtype=x["q"].dtype, device="cuda", strategy="seesaw", num_splits=n,
                         kv_fp8=p.kv == "fp8")
    if half and plan._o_part is not None:
        slots, r, d = plan._o_part.shape
        ty = x["q"].dtype  # the output's type: bf16 for the FP8 cache too
        plan._o_part = plan._o_part.reshape(-1)[: slots * r * d // 2].view(ty).view(slots, r, d)
    return plan


def check(p, x, plan, tag, tol):
    out = torch.empty(p.b, p.s_q, p.h_q, 512, dtype=x["q"].dtype, device="cuda")
    lse = torch.empty(p.b, p.h_q, p.s_q, dtype=torch.float32, device="cuda")
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"],
                              softmax_scale=B.SCALE, causal=True)
    errs = []
    for _ in range(3):
        out.fill_(float("nan")); lse.fill_(float("nan"))
        plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse); torch.cuda.synchronize()
        errs.append(float((out.double() - r_o).norm() / r_o.norm()))
        lerr = float((lse.double() - r_l).abs().max())
    fin = bool(torch.isfinite(out).all())
    emit({"check": tag, "rel_err": max(errs), "lse_max_err": lerr, "finite": fin,
          "units": plan.schedule.num_units if plan.schedule else None})
    assert fin and max(errs) < tol and lerr < 1e-3, tag
    return out, lse


# Correctness first: awkward lengths, causal draft tokens, fp16 with fp16 partials.
AWKWARD = [
    (B.Point("s=2 h=8 t=17,4097,300", 2, 8, [17, 4097, 300]), torch.bfloat16, 2, 1e-2),
    (B.Point("s=1 h=16 t=1,17,4097", 1, 16, [1, 17, 4097]), torch.bfloat16, 4, 1e-2),
    (B.Point("s=1 h=5 t=4097,129", 1, 5, [4097, 129]), torch.float16, 3, 1e-3),
    (B.Point("s=1 h=16 t=4097,64 fp16", 1, 16, [4097, 64]), torch.float16, 2, 1e-3),
]
for p, ty, n, tol in AWKWARD:
    x = B.make_inputs(p, "cuda", ty, 50)
    for half in (False, True):
        check(p, x, make(p, x, n, half), f"{p.name} {ty} pieces={n} half={half}", tol)

VARIANTS = {"fp32 partials": (None, False), "16-bit partials": (None, True),
            "2 pieces, fp32": (2, False), "2 pieces, 16-bit": (2, True)}


def run_point(name, kv="dense", variants=VARIANTS):
    p = {q.name: q for q in B.trial_points(False, False, kv)}[name]
    x = B.make_inputs(p, "cuda", torch.bfloat16, 500)
    out = torch.empty(p.b, 1, p.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, p.h_q, 1, dtype=torch.float32, device="cuda")
    plans = {}
    for k, (n, half) in variants.items():
        plans[k] = make(p, x, n, half)
        check(p, x, plans[k], f"{name} {k}", 1e-2)
    t = {k: [] for k in plans}; mhz = {k: [] for k in plans}
    for r in range(6):
        for k in (list(plans) if r % 2 == 0 else list(plans)[::-1]):
            pl = plans[k]
            f = lambda: pl.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
            t[k].append(round(measure(f, mode="graph", max_time_ms=120).median, 3))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    base = t[list(plans)[0]]
    emit({"point": name, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_first": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})


run_point("b=32 s=1 h=16 t=4096")
run_point("b=128 s=1 h=16 t~4096", variants={k: VARIANTS[k] for k in ("fp32 partials", "16-bit partials")})
run_point("b=32 s=1 h=16 t=4096 kv=fp8", "fp8",
          variants={k: VARIANTS[k] for k in ("fp32 partials", "16-bit partials")})
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp50.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
