"""Exp 40: forced piece counts for the seesaw strategy at s=1 (the ring kernel at 16 rows, the
seesaw kernel at 128): correctness against the float64 reference, then four alternating rounds
of CUDA-graph medians. Run from the repository root on a GPU:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_40/time_pieces.py"""
import json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import torch
import mla_decode as B
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan
from kernelopt.kernels.mla.ref import mla_decode_ref
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
CASES = {"b=32 s=1 h=16 t=4096": [None, 2, 3, 4, 8], "b=128 s=1 h=16 t~4096": [None, 1, 2],
         "b=32 s=1 h=128 t=4096": [None, 1, 2]}
for base, counts in CASES.items():
    p = {q.name: q for q in B.trial_points(False, False)}[base]
    x = B.make_inputs(p, "cuda", torch.bfloat16, 5)
    out = torch.empty(p.b, 1, p.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, p.h_q, 1, dtype=torch.float32, device="cuda")
    r_o, _ = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    plans = {}
    for n in counts:
        plan = MLADecodePlan(x["seqlens"], s_q=1, h_q=p.h_q, page_size=p.page, softmax_scale=B.SCALE,
                             dtype=torch.bfloat16, device="cuda", strategy="seesaw", num_splits=n)
        out.fill_(float("nan")); lse.fill_(float("nan"))
        plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse); torch.cuda.synchronize()
        err = float((out.double() - r_o).norm() / r_o.norm())
        units = plan.schedule.num_units if plan.schedule is not None else None
        emit({"point": base, "num_splits": n, "units": units, "rel_err": err, "finite": bool(torch.isfinite(out).all())})
        if torch.isfinite(out).all() and err < 1e-2:
            plans[str(n)] = plan
    t = {k: [] for k in plans}
    for r in range(4):
        for k in (list(plans) if r % 2 == 0 else list(plans)[::-1]):
            pl = plans[k]
            t[k].append(round(measure(lambda: pl.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse), mode="graph", max_time_ms=150).median, 2))
    emit({"point": base, "graph_medians_us": t})
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp40.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
