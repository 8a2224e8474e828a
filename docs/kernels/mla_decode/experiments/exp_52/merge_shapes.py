"""Exp 52: the merge kernel's program shape with 16-bit partials (exp 50): rows and columns a
program and its warps, through MLADecodePlan(config=...) of the seesaw strategy at 16 rows
(the ring kernel, then the merge), against the default shape (8 rows x 128 columns, 4 warps).

Every shape is checked against the float64 reference on NaN-poisoned outputs, then six
alternating rounds of CUDA-graph medians, the SM clock read after each. Run from the
repository root on a GPU:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_52/merge_shapes.py"""
import json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import attrs, pynvml, torch, triton
import mla_decode as B
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan
from kernelopt.kernels.mla.ref import mla_decode_ref
from kernelopt.kernels.mla.seesaw import default_config

pynvml.nvmlInit(); NV = pynvml.nvmlDeviceGetHandleByIndex(0)
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
      "driver": pynvml.nvmlSystemGetDriverVersion()})
BASE = default_config(16)
SHAPES = {"8x128 w4 (default)": (8, 128, 4), "16x128 w8": (16, 128, 8), "16x64 w4": (16, 64, 4),
          "4x128 w2": (4, 128, 2), "8x256 w4": (8, 256, 4), "16x256 w8": (16, 256, 8),
          "2x512 w4": (2, 512, 4)}


def config(r, d, w):
    return attrs.evolve(BASE, combine_block_r=r, combine_block_d=d, combine_num_warps=w)


def run_point(name):
    p = {q.name: q for q in B.trial_points(False, False)}[name]
    x = B.make_inputs(p, "cuda", torch.bfloat16, 520)
    out = torch.empty(p.b, 1, p.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, p.h_q, 1, dtype=torch.float32, device="cuda")
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    plans = {}
    for k, s in SHAPES.items():
        plan = MLADecodePlan(x["seqlens"], s_q=1, h_q=p.h_q, page_size=p.page, softmax_scale=B.SCALE,
                             dtype=torch.bfloat16, device="cuda", strategy="seesaw", config=config(*s))
        for _ in range(3):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse); torch.cuda.synchronize()
            err = float((out.double() - r_o).norm() / r_o.norm())
            lerr = float((lse.double() - r_l).abs().max())
        fin = bool(torch.isfinite(out).all())
        emit({"point": name, "shape": k, "rel_err": err, "lse_max_err": lerr, "finite": fin,
              "partial_dtype": str(plan.partial_dtype)})
        assert fin and err < 1e-2 and lerr < 1e-3, k
        plans[k] = plan
    t = {k: [] for k in plans}; mhz = {k: [] for k in plans}
    for r in range(6):
        for k in (list(plans) if r % 2 == 0 else list(plans)[::-1]):
            pl = plans[k]
            f = lambda: pl.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
            t[k].append(round(measure(f, mode="graph", max_time_ms=120).median, 3))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    base = t["8x128 w4 (default)"]
    emit({"point": name, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_default": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})


run_point("b=32 s=1 h=16 t=4096")
run_point("b=128 s=1 h=16 t~4096")
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp52.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
