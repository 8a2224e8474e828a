"""Exp 47, second call: the uniform merge as it landed in the package (MLADecodePlan passes
Schedule.uniform_pieces to launch_merge) against the merge before it (exp_46/old_merge.py),
for the seesaw strategy (ring kernels) and the split_kv strategy, checked then timed in six
alternating rounds of CUDA-graph medians. Run from the repository root on a GPU:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_47/in_package.py"""
import json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "exp_46"))
import pynvml, torch, triton
import mla_decode as B
import old_merge
from kernelopt.bench import measure
from kernelopt.kernels.mla import hopper as H, seesaw as S, split_kv as SK
from kernelopt.kernels.mla.ref import mla_decode_ref

pynvml.nvmlInit(); NV = pynvml.nvmlDeviceGetHandleByIndex(0)
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
      "driver": pynvml.nvmlSystemGetDriverVersion()})
NEW = SK.launch_merge
def old(o_part, lse_part, split_offsets, out, lse, *, config, uniform_pieces=0):
    old_merge.old_launch_merge(o_part, lse_part, split_offsets, out, lse, config=config)
MERGES = {"merge before": old, "uniform merge (package)": NEW}


def use(m):
    S.launch_merge = SK.launch_merge = H.launch_merge = m


def run_point(name, strategy, kv="dense"):
    p = {q.name: q for q in B.trial_points(False, False, kv)}[name]
    x = B.make_inputs(p, "cuda", torch.bfloat16, 470)
    out = torch.empty(p.b, 1, p.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, p.h_q, 1, dtype=torch.float32, device="cuda")
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    plan = B.make_plan(p, x, strategy)
    run = lambda: plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
    tag = f"{name} {strategy}"
    for k, m in MERGES.items():
        use(m)
        for _ in range(3):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            run(); torch.cuda.synchronize()
            err = float((out.double() - r_o).norm() / r_o.norm())
            lerr = float((lse.double() - r_l).abs().max())
        emit({"point": tag, "merge": k, "rel_err": err, "lse_max_err": lerr,
              "finite": bool(torch.isfinite(out).all()), "pieces": plan.schedule.num_units,
              "uniform_pieces": plan.schedule.uniform_pieces})
        assert torch.isfinite(out).all() and err < 1e-2 and lerr < 1e-3, k
    t = {k: [] for k in MERGES}; mhz = {k: [] for k in MERGES}
    for r in range(6):
        for k in (list(MERGES) if r % 2 == 0 else list(MERGES)[::-1]):
            use(MERGES[k])
            t[k].append(round(measure(run, mode="graph", max_time_ms=120).median, 3))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    base = t["merge before"]
    emit({"point": tag, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_before": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})
    use(NEW)


run_point("b=32 s=1 h=16 t=4096", "seesaw")
run_point("b=128 s=1 h=16 t~4096", "seesaw")
run_point("b=32 s=1 h=16 t=4096 kv=fp8", "seesaw", "fp8")
run_point("b=32 s=1 h=16 t=4096", "split_kv")
run_point("b=32 s=1 h=128 t=4096", "hopper")
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp47_in_package.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
