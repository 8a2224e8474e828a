"""Exp 49: the seesaw kernel's two-piece merge finds its partner's slot without reading
split_offsets after the published flag: from the piece's first key, or with the read issued
before the wait (variants.py writes both from the package's seesaw.py), against the kernel
before. Checked against float64 on NaN-poisoned outputs, then six alternating
rounds of CUDA-graph medians of MLADecodePlan.run, SM clock after each. From the repository
root: PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_49/check_and_time.py"""
import json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pynvml, torch, triton
import mla_decode as B
import variants
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan, seesaw as S
from kernelopt.kernels.mla.ref import mla_decode_ref

pynvml.nvmlInit(); NV = pynvml.nvmlDeviceGetHandleByIndex(0)
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
      "driver": pynvml.nvmlSystemGetDriverVersion()})
KERNELS = {"before (slot read after the flag)": S.mla_seesaw_kernel,
           "slot from the first key": variants.seesaw_variant("first_key").mla_seesaw_kernel,
           "slot read before the wait": variants.seesaw_variant("hoisted").mla_seesaw_kernel}
PACKAGE = S.mla_seesaw_kernel


def check(name, s_q, h_q, lens, num_splits=None, calls=3):
    p = B.Point(name, s_q, h_q, lens)
    x = B.make_inputs(p, "cuda", torch.bfloat16, 49)
    out = torch.empty(p.b, s_q, h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, h_q, s_q, dtype=torch.float32, device="cuda")
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    plan = MLADecodePlan(x["seqlens"], s_q=s_q, h_q=h_q, page_size=p.page, softmax_scale=B.SCALE,
                         dtype=torch.bfloat16, device="cuda", strategy="seesaw", num_splits=num_splits)
    run = lambda: plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
    for k, fn in KERNELS.items():
        S.mla_seesaw_kernel = fn
        for _ in range(calls):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            run(); torch.cuda.synchronize()
            err = float((out.double() - r_o).norm() / r_o.norm())
            lerr = float((lse.double() - r_l).abs().max())
        ok = bool(torch.isfinite(out).all()) and err < 1e-2 and lerr < 1e-3
        emit({"point": name, "kernel": k, "rel_err": err, "lse_max_err": lerr, "ok": ok,
              "pieces": plan.schedule.num_units, "splits": sorted(set(plan.schedule.splits)),
              "pair_merge": bool(plan._seesaw_merge)})
        assert ok, (name, k)
    S.mla_seesaw_kernel = PACKAGE
    return run


def timed(name, s_q, h_q, lens):
    run = check(name, s_q, h_q, lens)
    t = {k: [] for k in KERNELS}; mhz = {k: [] for k in KERNELS}
    for r in range(6):
        for k in (list(KERNELS) if r % 2 == 0 else list(KERNELS)[::-1]):
            S.mla_seesaw_kernel = KERNELS[k]
            t[k].append(round(measure(run, mode="graph", max_time_ms=120).median, 3))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    S.mla_seesaw_kernel = PACKAGE
    base = t["before (slot read after the flag)"]
    emit({"point": name, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_before": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})


timed("b=32 s=1 h=128 t=4096", 1, 128, [4096] * 32)
check("b=3 s=1 h=128 t=1,17,4097", 1, 128, [1, 17, 4097])
check("b=5 s=1 h=128 mixed, 2 pieces", 1, 128, [65, 130, 4097, 1000, 64], num_splits=2)
check("b=2 s=1 h=128 t=4097,3000, 8 pieces", 1, 128, [4097, 3000], num_splits=8)
check("b=4 s=2 h=64 t=300,17,64,129, 2 pieces", 2, 64, [300, 17, 64, 129], num_splits=2)
timed("b=32 s=2 h=64 t=4096", 2, 64, [4096] * 32)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp49.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
