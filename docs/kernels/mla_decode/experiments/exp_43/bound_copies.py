"""Exp 43: what the key-tile copies cost the seesaw kernel at s=16 h=16, the most any sharing
of them (a TMA multicast across a sequence's four row-tile programs) could give back.

The variant is the shipped seesaw.py with exp 35's no_loads.diff applied to a copy: after the
first pair of key tiles the loader arrives on each tile's barrier instead of copying, so the
products read stale tiles (wrong by construction, only timed). Six alternating rounds of
CUDA-graph medians against the shipped kernel at b=32 s=16 h=16 and b=32 s=16 h=128, each
with the SM clock read through NVML after the round. The shipped kernel is checked against the
float64 reference on the timed inputs first. Run from the repository root:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_43/bound_copies.py
The JSONL goes to $OUT/exp43.jsonl."""
import importlib.util, json, os, sys, tempfile
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import torch, triton
from kernelopt.kernels.mla import seesaw as S
HERE = os.path.dirname(os.path.abspath(__file__))
DIFF = os.path.join(HERE, "..", "exp_35", "no_loads.diff")
work = tempfile.mkdtemp()
# The diff's one hunk applied by text: its old lines (context and "-") become its new ones.
hunk = open(DIFF).read().split("\n@@")[1].split("\n", 1)[1].rstrip("\n").split("\n")
before = "\n".join(l[1:] for l in hunk if l[:1] in (" ", "-"))
after = "\n".join(l[1:] for l in hunk if l[:1] in (" ", "+"))
source = open(S.__file__).read()
assert source.count(before) == 1, "exp_35/no_loads.diff no longer applies to seesaw.py"
with open(os.path.join(work, "seesaw.py"), "w") as g:
    g.write(source.replace(before, after))
spec = importlib.util.spec_from_file_location("seesaw_no_loads", os.path.join(work, "seesaw.py"))
NL = importlib.util.module_from_spec(spec); spec.loader.exec_module(NL)
KERNELS = {"shipped": S.mla_seesaw_kernel, "no copies after the first pair": NL.mla_seesaw_kernel}
if not torch.cuda.is_available():
    sys.exit("bound_copies: Expected a CUDA device, got none")
import mla_decode as B
import pynvml
from kernelopt.bench import measure
from kernelopt.kernels.mla import MLADecodePlan
from kernelopt.kernels.mla.ref import mla_decode_ref
pynvml.nvmlInit(); NV = pynvml.nvmlDeviceGetHandleByIndex(0)
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
      "driver": pynvml.nvmlSystemGetDriverVersion()})
for h_q in (16, 128):
    p = B.Point(f"b=32 s=16 h={h_q} t=4096", 16, h_q, [4096] * 32)
    x = B.make_inputs(p, "cuda", torch.bfloat16, 5)
    out = torch.empty(p.b, 16, h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, h_q, 16, dtype=torch.float32, device="cuda")
    plan = MLADecodePlan(x["seqlens"], s_q=16, h_q=h_q, page_size=p.page, softmax_scale=B.SCALE,
                         dtype=torch.bfloat16, device="cuda", strategy="seesaw")
    r_o, _ = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    out.fill_(float("nan")); plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse)
    torch.cuda.synchronize()
    err = float(torch.nan_to_num((out.double() - r_o).norm() / r_o.norm(), nan=1e9))
    emit({"point": p.name, "shipped_rel_err": err, "finite": bool(torch.isfinite(out).all())})
    t = {k: [] for k in KERNELS}; mhz = {k: [] for k in KERNELS}
    for r in range(6):
        for k in (list(KERNELS) if r % 2 == 0 else list(KERNELS)[::-1]):
            S.mla_seesaw_kernel = KERNELS[k]
            t[k].append(round(measure(lambda: plan.run(x["q"], x["kv"], x["block_table"], out=out, lse=lse),
                                      mode="graph", max_time_ms=300).median, 2))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    S.mla_seesaw_kernel = KERNELS["shipped"]
    base = t["shipped"]
    emit({"point": p.name, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_shipped": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp43.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
