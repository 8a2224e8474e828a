"""Exp 45, third run: the pair's remote slot releases in CUTLASS's form, a remote
`mbarrier.arrive.shared::cluster` with the default (CTA-scope) release instead of
`.release.cluster`, for the multicast pair and the coupled kernel with its own copies.
Timed with the two cluster-scope forms and the shipped kernel at b=32 s=1 h=128 after the
usual check. Run from the repository root:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_45/cta_scope_arrive.py"""
import importlib.util, json, os, sys, tempfile
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
HERE = os.path.dirname(os.path.abspath(__file__))
OLD, NEW = "mbarrier.arrive.release.cluster.shared::cluster.b64", "mbarrier.arrive.shared::cluster.b64"
src = open(os.path.join(HERE, "seesaw_mcast.py")).read()
assert src.count(OLD) == 1
mods = {}
for name, text in (("mcast_cta", src.replace(OLD, NEW)),
                   ("coupled_cta", src.replace(OLD, NEW).replace("MC_COPY: gl.constexpr = True", "MC_COPY: gl.constexpr = False"))):
    path = os.path.join(tempfile.mkdtemp(), name + ".py"); open(path, "w").write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mods[name] = importlib.util.module_from_spec(spec); spec.loader.exec_module(mods[name])
exec(open(os.path.join(HERE, "coupled_copies.py")).read().split("timed(\"b=32")[0].split('"""', 2)[2])
for name, label in (("mcast_cta", "multicast pair, CTA-scope remote release"),
                    ("coupled_cta", "coupled, own copies, CTA-scope remote release")):
    m = mods[name]; _k = m.kernel_for_rows
    m.kernel_for_rows = (lambda _k: lambda rows: (lambda f, r, t: (f, r, dict(t, LOAD_REGS=LOAD_REGS) if r == 64 else t))(*_k(rows)))(_k)
    LAUNCH[label] = m.launch_seesaw
timed("b=32 s=1 h=128 t=4096", 1, 128, [4096] * 32)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp45_cta_scope.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
