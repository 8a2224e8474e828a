"""Exp 48: a split piece's float32 partial from the ring kernel, stored as shipped (four-byte
stores from the accumulators' layout), staged in the ring's dead memory and stored 16 bytes a
lane, or not stored (the bound, wrong by construction). Checked against float64 on
NaN-poisoned outputs (the trial points and awkward lengths), then six alternating rounds of
CUDA-graph medians of MLADecodePlan.run, SM clock after each. From the repository root:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_48/check_and_time.py"""
import json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pynvml, torch, triton
import mla_decode as B
import modes
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan, seesaw as S
from kernelopt.kernels.mla.ref import mla_decode_ref

pynvml.nvmlInit(); NV = pynvml.nvmlDeviceGetHandleByIndex(0)
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
      "driver": pynvml.nvmlSystemGetDriverVersion()})
ORIG = S.kernel_for_rows
def using(mod):
    def pick(n_rows):
        fn, q_rows, tuned = ORIG(n_rows)
        return (fn if mod is None or n_rows > 16 else mod.mla_ring_kernel), q_rows, tuned
    return pick
KERNELS = {"shipped ring kernel": None, "mode 0 (shipped stores)": modes.ring_module(0),
           "mode 2 (staged, 16-byte stores)": modes.ring_module(2)}
WRONG = {"mode 1 (no partial stores, wrong)": modes.ring_module(1)}


def check(name, lens, h_q, num_splits=None, calls=3):
    p = B.Point(name, 1, h_q, lens)
    x = B.make_inputs(p, "cuda", torch.bfloat16, 48)
    out = torch.empty(p.b, 1, h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, h_q, 1, dtype=torch.float32, device="cuda")
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    plan = MLADecodePlan(x["seqlens"], s_q=1, h_q=h_q, page_size=p.page, softmax_scale=B.SCALE,
                         dtype=torch.bfloat16, device="cuda", strategy="seesaw", num_splits=num_splits)
    run = lambda: plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
    for k, mod in KERNELS.items():
        S.kernel_for_rows = using(mod)
        for _ in range(calls):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            run(); torch.cuda.synchronize()
            err = float((out.double() - r_o).norm() / r_o.norm())
            lerr = float((lse.double() - r_l).abs().max())
        ok = bool(torch.isfinite(out).all()) and err < 1e-2 and lerr < 1e-3
        emit({"point": name, "kernel": k, "rel_err": err, "lse_max_err": lerr, "ok": ok,
              "pieces": plan.schedule.num_units, "splits": sorted(set(plan.schedule.splits))})
        assert ok, (name, k)
    S.kernel_for_rows = ORIG
    return plan, run


def timed(name, lens, h_q):
    plan, run = check(name, lens, h_q)
    variants = dict(KERNELS, **WRONG)
    t = {k: [] for k in variants}; mhz = {k: [] for k in variants}
    for r in range(6):
        for k in (list(variants) if r % 2 == 0 else list(variants)[::-1]):
            S.kernel_for_rows = using(variants[k])
            t[k].append(round(measure(run, mode="graph", max_time_ms=120).median, 3))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    S.kernel_for_rows = ORIG
    base = t["shipped ring kernel"]
    emit({"point": name, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_shipped": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})


timed("b=32 s=1 h=16 t=4096", [4096] * 32, 16)
check("b=3 s=1 h=16 t=1,17,4097", [1, 17, 4097], 16)
check("b=5 s=1 h=16 mixed, 2 pieces", [65, 130, 4097, 1000, 64], 16, num_splits=2)
check("b=2 s=1 h=5 t=4097,3000, 8 pieces", [4097, 3000], 5, num_splits=8)
timed("b=128 s=1 h=16 t~4096", B.trial_points(False, False)[5].seqlens, 16)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp48.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
