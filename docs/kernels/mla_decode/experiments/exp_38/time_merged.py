"""Exp 38, run 4: the merged FP8 ring kernel (seesaw, kv_fp8=True) against split_kv on the same
FP8 cache and the bf16 ring on the bfloat16 cache; four alternating rounds, CUDA-graph medians.
Run from the repository root on a GPU: PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_38/time_merged.py"""
import json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import torch
import mla_decode as B
from kernelopt.bench import measure
from kernelopt.kernels.mla import mla_decode_bytes
res = {}
for base in ["b=32 s=1 h=16 t=4096", "b=128 s=1 h=16 t~4096"]:
    pd = {p.name: p for p in B.trial_points(False, False)}[base]
    pf = {p.name: p for p in B.trial_points(False, False, kv="fp8")}[base + " kv=fp8"]
    xd = B.make_inputs(pd, "cuda", torch.bfloat16, 5); xf = B.make_inputs(pf, "cuda", torch.bfloat16, 5)
    out = torch.empty(pd.b, 1, pd.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(pd.b, pd.h_q, 1, dtype=torch.float32, device="cuda")
    v = {"bf16_ring": (B.make_plan(pd, xd, "seesaw"), xd), "fp8_ring": (B.make_plan(pf, xf, "seesaw"), xf), "fp8_split_kv": (B.make_plan(pf, xf, "split_kv"), xf)}
    t = {n: [] for n in v}
    for r in range(4):
        for n in (list(v) if r % 2 == 0 else list(v)[::-1]):
            p, x = v[n]
            t[n].append(round(measure(lambda: p.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse), mode="graph", max_time_ms=150).median, 2))
    res[base] = t; print(json.dumps({base: t}), flush=True)
