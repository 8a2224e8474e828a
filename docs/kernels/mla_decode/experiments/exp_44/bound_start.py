"""Exp 44: what the ring kernel's table reads before its first copy cost at s=1 h=16, the most
a start that computes its work unit instead of reading it could give back.

The variant (exp_44/ring_no_tables.py) is the shipped ring.py whose programs compute their
sequence, keys, slot, length and first page from the program index: right only for PIECES
equal pieces of SEQ keys a sequence over an identity block table, which is what is timed here.
Both kernels are checked against the float64 reference on the timed inputs (NaN-poisoned
outputs), with a third kernel between them that computes the unit but still reads the
first page (what a uniform-plan fast path could do), then timed in six alternating rounds of CUDA-graph medians at b=32 s=1 h=16 with
4096 and 1024 keys a sequence, four pieces each. Run from the repository root:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_44/bound_start.py
The JSONL goes to $OUT/exp44.jsonl."""
import functools, importlib.util, json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import torch, triton
from kernelopt.kernels.mla import ring
HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ring_no_tables", os.path.join(HERE, "ring_no_tables.py"))
NT = importlib.util.module_from_spec(spec); spec.loader.exec_module(NT)
if not torch.cuda.is_available():
    sys.exit("bound_start: Expected a CUDA device, got none")
import mla_decode as B
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan
from kernelopt.kernels.mla.ref import mla_decode_ref
SHIPPED = ring.mla_ring_kernel
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__})
PIECES = 4


class _Bound:
    """The variant kernel as launch_seesaw calls it, ``kernel[grid](...)``, with its plan's
    shape added as compile-time constants."""

    def __init__(self, fn, seq, page_read):
        self.fn, self.seq, self.page_read = fn, seq, page_read

    def __getitem__(self, grid):
        return functools.partial(self.fn[grid], PIECES=PIECES, SEQ=self.seq, PAGE_READ=self.page_read)


for seq in (4096, 1024):
    p = B.Point(f"b=32 s=1 h=16 t={seq}", 1, 16, [seq] * 32)
    x = B.make_inputs(p, "cuda", torch.bfloat16, 5)
    x["block_table"] = torch.arange(32 * seq // 64, dtype=torch.int32, device="cuda").view(32, seq // 64)
    variants = {"shipped": SHIPPED, "no table reads before the first copy": None,
                "unit computed, first page read": None}
    out = torch.empty(p.b, 1, 16, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, 16, 1, dtype=torch.float32, device="cuda")
    plan = MLADecodePlan(x["seqlens"], s_q=1, h_q=16, page_size=64, softmax_scale=B.SCALE,
                         dtype=torch.bfloat16, device="cuda", strategy="seesaw", num_splits=PIECES)
    # The variant's arithmetic assumes units in batch order, slot = unit: check the plan is that.
    table = plan.schedule.table()
    assert all(u[:4] == [i // PIECES, (i % PIECES) * seq // PIECES, (i % PIECES + 1) * seq // PIECES, i]
               for i, u in enumerate(table)), table[:6]
    variants["no table reads before the first copy"] = _Bound(NT.mla_ring_kernel, seq, False)
    variants["unit computed, first page read"] = _Bound(NT.mla_ring_kernel, seq, True)
    r_o, _ = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)

    def use(k):
        ring.mla_ring_kernel = variants[k]
    for k in variants:
        use(k)
        errs = []
        for _ in range(5):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse); torch.cuda.synchronize()
            errs.append(float(torch.nan_to_num((out.double() - r_o).norm() / r_o.norm(), nan=1e9)))
        emit({"point": p.name, "variant": k, "worst_rel_err": max(errs), "finite": bool(torch.isfinite(out).all())})
    t = {k: [] for k in variants}
    for r in range(6):
        for k in (list(variants) if r % 2 == 0 else list(variants)[::-1]):
            use(k)
            t[k].append(round(measure(lambda: plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse),
                                      mode="graph", max_time_ms=150).median, 3))
    ring.mla_ring_kernel = SHIPPED
    emit({"point": p.name, "graph_medians_us": t,
          "speedup_vs_shipped": {k: [round(a / b, 4) for a, b in zip(t["shipped"], v)] for k, v in t.items()}})
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp44.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
