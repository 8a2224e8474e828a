"""Exp 50, second call: 16-bit partials as they landed in the package (the default of ring
plans, MLADecodePlan.partial_dtype) against float32 partials asked for with
partial_dtype=torch.float32, checked then timed in six alternating rounds of CUDA-graph
medians. Run from the repository root on a GPU:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_50/in_package.py"""
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


def run_point(name, kv="dense"):
    p = {q.name: q for q in B.trial_points(False, False, kv)}[name]
    x = B.make_inputs(p, "cuda", torch.bfloat16, 501)
    out = torch.empty(p.b, 1, p.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, p.h_q, 1, dtype=torch.float32, device="cuda")
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    plans = {"package default": B.make_plan(p, x, "seesaw")}
    plans["partial_dtype=float32"] = MLADecodePlan(
        x["seqlens"], s_q=1, h_q=p.h_q, page_size=p.page, softmax_scale=B.SCALE,
        dtype=torch.bfloat16, device="cuda", strategy="seesaw", kv_fp8=kv == "fp8",
        partial_dtype=torch.float32)
    for k, plan in plans.items():
        for _ in range(3):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse); torch.cuda.synchronize()
            err = float((out.double() - r_o).norm() / r_o.norm())
            lerr = float((lse.double() - r_l).abs().max())
        emit({"point": name, "plan": k, "partial_dtype": str(plan.partial_dtype), "rel_err": err,
              "lse_max_err": lerr, "finite": bool(torch.isfinite(out).all()),
              "workspace_bytes": plan.workspace_bytes})
        assert torch.isfinite(out).all() and err < 1e-2 and lerr < 1e-3, k
    t = {k: [] for k in plans}; mhz = {k: [] for k in plans}
    for r in range(6):
        for k in (list(plans) if r % 2 == 0 else list(plans)[::-1]):
            pl = plans[k]
            f = lambda: pl.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
            t[k].append(round(measure(f, mode="graph", max_time_ms=120).median, 3))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    base = t["partial_dtype=float32"]
    emit({"point": name, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_float32": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})


run_point("b=32 s=1 h=16 t=4096")
run_point("b=128 s=1 h=16 t~4096")
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp50_in_package.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
