"""Exp 45, second run: where the multicast pair's time goes. A third kernel keeps the pair's
protocol (a cluster of two, every slot given back to both loaders, the handshake) but has
each program copy its whole tile itself, as shipped: the coupling without the multicast.
Checked on NaN-poisoned outputs against the float64 reference, then timed against the
shipped kernel and the multicast pair in four alternating rounds of CUDA-graph medians at
b=32 s=1 h=128. Run from the repository root:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_45/coupled_copies.py"""
import importlib.util, json, os, sys, tempfile
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import torch
HERE = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(HERE, "seesaw_mcast.py")).read()
assert src.count("MC_COPY: gl.constexpr = True") == 1
path = os.path.join(tempfile.mkdtemp(), "seesaw_coupled.py")
open(path, "w").write(src.replace("MC_COPY: gl.constexpr = True", "MC_COPY: gl.constexpr = False"))
spec = importlib.util.spec_from_file_location("seesaw_coupled", path)
C = importlib.util.module_from_spec(spec); spec.loader.exec_module(C)
sys.argv = [sys.argv[0]]
exec(open(os.path.join(HERE, "check_and_time.py")).read().split("# The point the issue needs first")[0])
_ck = C.kernel_for_rows
C.kernel_for_rows = lambda rows: (lambda f, r, t: (f, r, dict(t, LOAD_REGS=LOAD_REGS) if r == 64 else t))(*_ck(rows))
LAUNCH["coupled, own copies"] = C.launch_seesaw
timed("b=32 s=1 h=128 t=4096", 1, 128, [4096] * 32)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp45_coupled.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
