"""Exp 45: the seesaw kernel's two row tiles of a piece (s=1 h=128) as a cluster of two that
share each key tile: each program copies half of a tile's chunks into both programs' shared
memory by TMA multicast, and each gives a slot back to both loaders.

The variant (exp_45/seesaw_mcast.py) is the shipped seesaw.py with that protocol under a
compile-time MCAST; its launcher runs 64-row tiles as clusters of two where the row tiles
read the same keys (an even number of them, no causal limits). Checked against the float64
reference on NaN-poisoned outputs (awkward lengths included, so tail tiles and pieces of
one tile meet the cluster), then timed against the shipped kernel in six alternating
rounds of CUDA-graph medians, the SM clock read after each. Run from the repository root:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_45/check_and_time.py
The JSONL goes to $OUT/exp45.jsonl."""
import importlib.util, json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import torch, triton
from kernelopt.kernels.mla import seesaw as S
HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("seesaw_mcast", os.path.join(HERE, "seesaw_mcast.py"))
M = importlib.util.module_from_spec(spec); spec.loader.exec_module(M)
if not torch.cuda.is_available():
    sys.exit("check_and_time: Expected a CUDA device, got none")
import mla_decode as B
import pynvml
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan
from kernelopt.kernels.mla.ref import mla_decode_ref
pynvml.nvmlInit(); NV = pynvml.nvmlDeviceGetHandleByIndex(0)
LAUNCH = {"shipped": S.launch_seesaw, "multicast pair": M.launch_seesaw}
LOAD_REGS = int(os.environ.get("LOAD_REGS", "40"))
_orig_kfr = M.kernel_for_rows
def _kfr(rows):
    fn, q_rows, tuned = _orig_kfr(rows)
    return (fn, q_rows, dict(tuned, LOAD_REGS=LOAD_REGS) if q_rows == 64 else tuned)
M.kernel_for_rows = _kfr
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
      "driver": pynvml.nvmlSystemGetDriverVersion(), "load_regs": LOAD_REGS})


def check(name, s_q, h_q, seqlens, calls=5, num_splits=None):
    p = B.Point(name, s_q, h_q, seqlens)
    x = B.make_inputs(p, "cuda", torch.bfloat16, 11)
    plan = MLADecodePlan(x["seqlens"], s_q=s_q, h_q=h_q, page_size=p.page, softmax_scale=B.SCALE,
                         dtype=torch.bfloat16, device="cuda", strategy="seesaw", num_splits=num_splits)
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    out = torch.empty(p.b, s_q, h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, h_q, s_q, dtype=torch.float32, device="cuda")
    res = {}
    for k, fn in LAUNCH.items():
        S.launch_seesaw = fn
        errs, lerr = [], []
        for _ in range(calls):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse); torch.cuda.synchronize()
            errs.append(float(torch.nan_to_num((out.double() - r_o).norm() / r_o.norm(), nan=1e9)))
            lerr.append(float(torch.nan_to_num((lse.double() - r_l.double()).abs().max(), nan=1e9)))
        res[k] = {"worst_rel_err": max(errs), "worst_lse_err": max(lerr), "finite": bool(torch.isfinite(out).all())}
    S.launch_seesaw = LAUNCH["shipped"]
    emit({"point": name, "check": res, "pieces": plan.schedule.num_units})
    return p, x, plan, out, lse


def timed(name, s_q, h_q, lens):
    p, x, plan, out, lse = check(name, s_q, h_q, lens, calls=3)
    t = {k: [] for k in LAUNCH}; mhz = {k: [] for k in LAUNCH}
    for r in range(6):
        for k in (list(LAUNCH) if r % 2 == 0 else list(LAUNCH)[::-1]):
            S.launch_seesaw = LAUNCH[k]
            t[k].append(round(measure(lambda: plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse),
                                      mode="graph", max_time_ms=120).median, 3))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    S.launch_seesaw = LAUNCH["shipped"]
    base = t["shipped"]
    emit({"point": name, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_shipped": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})


# The point the issue needs first, then the awkward lengths, then the batch.
timed("b=32 s=1 h=128 t=4096", 1, 128, [4096] * 32)
for name, s_q, h_q, lens, ns in (
    ("b=3 s=1 h=128 t=1,17,4097", 1, 128, [1, 17, 4097], None),
    ("b=5 s=1 h=128 mixed, 2 pieces", 1, 128, [65, 130, 4097, 1000, 64], 2),
    ("b=2 s=1 h=128 t=4097,3000, 8 pieces", 1, 128, [4097, 3000], 8),
    ("b=4 s=2 h=64 t=300,17,64,129 (causal: not clustered)", 2, 64, [300, 17, 64, 129], None),
):
    check(name, s_q, h_q, lens, num_splits=ns)
timed("b=128 s=1 h=128 t~4096", 1, 128, B.trial_points(False, False)[4].seqlens)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp45.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
