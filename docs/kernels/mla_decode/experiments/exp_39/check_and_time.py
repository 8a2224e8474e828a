"""Exp 39: the pair release (ring_fp8.py with exp_39/pair_release.diff applied) against exp 38's kernel (the snapshot
exp_38/ring_fp8.py). First 30 calls a variant on fixed inputs, compared with the float64
reference and with each other; then four alternating rounds of CUDA-graph medians with split_kv
on the same FP8 cache and the bf16 ring on the bfloat16 cache.
Run from the repository root on a GPU:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_39/check_and_time.py"""
import importlib.util, json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import torch
import mla_decode as B
from kernelopt.bench import measure
from kernelopt.kernels.mla.ref import mla_decode_ref
from kernelopt.kernels.mla import seesaw as S
HERE = os.path.dirname(os.path.abspath(__file__))
sp = importlib.util.spec_from_file_location("ring_fp8_exp38", os.path.join(HERE, "..", "exp_38", "ring_fp8.py"))
EXP38 = importlib.util.module_from_spec(sp); sp.loader.exec_module(EXP38)
PAIR = S.ring_fp8
VARIANTS = {"exp38": EXP38, "pair": PAIR}
rows = []
def emit(row):
    rows.append(row); print(json.dumps(row), flush=True)
for base in ["b=32 s=1 h=16 t=4096", "b=128 s=1 h=16 t~4096"]:
    pd = {p.name: p for p in B.trial_points(False, False)}[base]
    pf = {p.name: p for p in B.trial_points(False, False, kv="fp8")}[base + " kv=fp8"]
    xd = B.make_inputs(pd, "cuda", torch.bfloat16, 5); xf = B.make_inputs(pf, "cuda", torch.bfloat16, 5)
    out = torch.empty(pd.b, 1, pd.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(pd.b, pd.h_q, 1, dtype=torch.float32, device="cuda")
    r_o, _ = mla_decode_ref(xf["q"], xf["kv"], xf["block_table"], xf["seqlens"], softmax_scale=B.SCALE)
    plan_f = B.make_plan(pf, xf, "seesaw")
    for name, mod in VARIANTS.items():
        S.ring_fp8 = mod
        bad, nonfinite, worst, outs = 0, 0, 0.0, []
        for _ in range(30):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            plan_f.run(xf["q"], xf["kv"], xf["block_table"], out=out, lse=lse); torch.cuda.synchronize()
            o = out.double()
            e = torch.nan_to_num((o - r_o).norm(dim=-1) / r_o.norm(dim=-1), nan=1e9)
            nonfinite += int((~torch.isfinite(out)).any())
            bad += int(float(e.max()) > 0.01); worst = max(worst, float(e.max()))
            outs.append(out.clone())
        same = sum(int(torch.equal(outs[0], o_)) for o_ in outs[1:])
        whole = float((outs[0].double() - r_o).norm() / r_o.norm())
        emit({"point": base, "variant": name, "bad_calls_of_30": bad, "nonfinite_calls": nonfinite,
              "identical_to_first": same, "worst_row_err": round(worst, 5), "rel_err": whole})
    S.ring_fp8 = PAIR
    plan_d = B.make_plan(pd, xd, "seesaw"); plan_s = B.make_plan(pf, xf, "split_kv")
    timed = {"exp38": (plan_f, xf, EXP38), "pair": (plan_f, xf, PAIR), "fp8_split_kv": (plan_s, xf, None), "bf16_ring": (plan_d, xd, None)}
    t = {n: [] for n in timed}
    for r in range(4):
        for n in (list(timed) if r % 2 == 0 else list(timed)[::-1]):
            plan, x, mod = timed[n]
            if mod is not None:
                S.ring_fp8 = mod
            t[n].append(round(measure(lambda: plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse), mode="graph", max_time_ms=150).median, 2))
    S.ring_fp8 = PAIR
    emit({"point": base, "graph_medians_us": t, "pair_over_exp38": [round(a / b, 4) for a, b in zip(t["exp38"], t["pair"])]})
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp39.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
