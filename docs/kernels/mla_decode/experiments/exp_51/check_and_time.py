"""Exp 51: the 64-row seesaw kernel's split partials in the output's 16-bit type (exp 50's
change on the kernel that merges two-piece sequences itself: the publishing piece stores
half the bytes, the merging piece copies in four [64, 64] boxes instead of eight [64, 32]
float32 ones), against float32 partials, with MLADecodePlan(partial_dtype=...).

Every variant is checked against the float64 reference on NaN-poisoned outputs (pair merges,
merge-kernel splits, causal draft tokens, float16), then six alternating rounds of CUDA-graph
medians, the SM clock read after each. Run from the repository root on a GPU, with the variant applied (the package refuses 16-bit
partials for the 64-row kernel):
git apply docs/kernels/mla_decode/experiments/exp_51/seesaw16.diff
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_51/check_and_time.py"""
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


def make(p, x, n, partial):
    return MLADecodePlan(x["seqlens"], s_q=p.s_q, h_q=p.h_q, page_size=p.page, softmax_scale=B.SCALE,
                         dtype=x["q"].dtype, device="cuda", strategy="seesaw", num_splits=n,
                         partial_dtype=partial)


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
          "partial_dtype": str(plan.partial_dtype),
          "units": plan.schedule.num_units if plan.schedule else None})
    assert fin and max(errs) < tol and lerr < 1e-3, tag


CASES = [
    # Pair merges (two pieces a sequence), lengths off the key grid, 64 and 128 rows.
    (B.Point("s=1 h=128 t=4096,1000,17 pairs", 1, 128, [4096, 1000, 130]), torch.bfloat16, 2, 1e-2),
    (B.Point("s=2 h=64 t=700,300 pairs causal", 2, 64, [700, 300]), torch.bfloat16, 2, 1e-2),
    (B.Point("s=1 h=64 t=4097,129 pairs fp16", 1, 64, [4097, 129]), torch.float16, 2, 1e-3),
    # Three pieces and two: the merge kernel reads the 16-bit partials.
    (B.Point("s=1 h=128 t=4096,1000 merge kernel", 1, 128, [4096, 1000]), torch.bfloat16, [3, 2], 1e-2),
    (B.Point("s=2 h=40 t=700,300 merge kernel causal", 2, 40, [700, 300]), torch.bfloat16, [3, 2], 1e-2),
    (B.Point("s=16 h=16 t=500,129 merge kernel fp16", 16, 16, [500, 129]), torch.float16, [3, 2], 1e-3),
]
for p, ty, n, tol in CASES:
    x = B.make_inputs(p, "cuda", ty, 51)
    for partial in (torch.float32, ty):
        check(p, x, make(p, x, n, partial), f"{p.name} {ty} pieces={n} partial={partial}", tol)


def run_point(name):
    p = {q.name: q for q in B.trial_points(False, False)}[name]
    x = B.make_inputs(p, "cuda", torch.bfloat16, 510)
    out = torch.empty(p.b, p.s_q, p.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, p.h_q, p.s_q, dtype=torch.float32, device="cuda")
    plans = {"float32 partials": make(p, x, None, torch.float32),
             "16-bit partials": make(p, x, None, torch.bfloat16)}
    for k, plan in plans.items():
        check(p, x, plan, f"{name} {k}", 1e-2)
    t = {k: [] for k in plans}; mhz = {k: [] for k in plans}
    for r in range(6):
        for k in (list(plans) if r % 2 == 0 else list(plans)[::-1]):
            pl = plans[k]
            f = lambda: pl.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
            t[k].append(round(measure(f, mode="graph", max_time_ms=150).median, 3))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    base = t["float32 partials"]
    emit({"point": name, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_float32": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})


run_point("b=32 s=1 h=128 t=4096")
run_point("b=128 s=1 h=128 t~4096")
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp51.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
