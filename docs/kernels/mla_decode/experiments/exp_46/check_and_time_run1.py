"""Exp 46, run 1 (the merge with [pieces, rows, columns] loads, and the carveout): the merge kernel with its pieces' loads issued together, and with the shared-memory
carveout of the kernel before it, against the merge kernel as shipped (old_merge.py).

Every variant is checked against the float64 reference on NaN-poisoned outputs, then six
alternating rounds of CUDA-graph medians of MLADecodePlan.run (strategy seesaw: the ring
kernel and the merge kernel at 16 rows), the SM clock read after each; then the merge kernel
alone, replayed on the plan's partials. Run from the repository root on a GPU:
PYTHONPATH=. python docs/kernels/mla_decode/experiments/exp_46/check_and_time_run1.py"""
import ctypes, json, os, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attrs, pynvml, torch, triton
import mla_decode as B
import old_merge
import grouped_loads_3d  # noqa: F401  (run 1: the 3-D merge, patched into split_kv below)
from kernelopt.bench import measure
from kernelopt.kernels.mla import seesaw as S, split_kv as SK
from kernelopt.kernels.mla.ref import mla_decode_ref
SK._mla_combine_kernel = grouped_loads_3d._grouped_combine_kernel

pynvml.nvmlInit(); NV = pynvml.nvmlDeviceGetHandleByIndex(0)
CUDA = ctypes.CDLL("libcuda.so.1")
ATTR_CARVEOUT = 9  # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
rows = []
def emit(r):
    rows.append(r); print(json.dumps(r), flush=True)
emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
      "driver": pynvml.nvmlSystemGetDriverVersion()})

# Own JIT copies for the carveout variants: the attribute belongs to a loaded function, and
# the shipped copies must keep the default.
OLD_CARVE = triton.JITFunction(old_merge._old_combine_kernel.fn)
NEW_CARVE = triton.JITFunction(SK._mla_combine_kernel.fn)


def merge_launcher(kernel, new, block_r=8, block_d=128, warps=4, pieces=4):
    def launch(o_part, lse_part, split_offsets, out, lse, *, config):
        batch, s_q, h_q, _ = out.shape
        grid = (triton.cdiv(s_q * h_q, block_r), 512 // block_d, batch)
        extra = {"PIECES": pieces} if new else {}
        kernel[grid](o_part, lse_part, split_offsets, out, lse, out.stride(0), out.stride(1),
                     out.stride(2), lse.stride(0), lse.stride(1), lse.stride(2), S_Q=s_q, H_Q=h_q,
                     D_V=512, BLOCK_R=block_r, BLOCK_D=block_d, num_warps=warps, **extra)
    return launch


def no_merge(*a, **k):  # the bound: wrong by construction, timed only
    return None


MERGES = {
    "shipped merge": merge_launcher(old_merge._old_combine_kernel, False),
    "pieces together (8x128, 4 warps)": merge_launcher(SK._mla_combine_kernel, True),
    "pieces together (16x64, 4 warps)": merge_launcher(SK._mla_combine_kernel, True, 16, 64, 4),
    "pieces together (4x64, 2 warps)": merge_launcher(SK._mla_combine_kernel, True, 4, 64, 2),
    "shipped merge, carveout 100": merge_launcher(OLD_CARVE, False),
    "pieces together, carveout 100": merge_launcher(NEW_CARVE, True),
}


def set_carveout(jit):
    """Prefer all-shared carveout on every loaded copy of ``jit`` (as the kernel before it)."""
    res = []
    for cache in jit.device_caches.values():
        for k in cache[0].values():
            k._init_handles()
            res.append(CUDA.cuFuncSetAttribute(ctypes.c_void_p(k.function), ATTR_CARVEOUT, 100))
    return res


def run_point(name, kv="dense"):
    p = {q.name: q for q in B.trial_points(False, False, kv)}[name]
    x = B.make_inputs(p, "cuda", torch.bfloat16, 46)
    out = torch.empty(p.b, 1, p.h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(p.b, p.h_q, 1, dtype=torch.float32, device="cuda")
    r_o, r_l = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=B.SCALE)
    plan = B.make_plan(p, x, "seesaw")
    kv_cache = x["kv"]
    run = lambda: plan.run(x["q"], kv_cache, x["block_table"], out=out, lse=lse)
    for k, m in MERGES.items():
        S.launch_merge = m
        for _ in range(3):
            out.fill_(float("nan")); lse.fill_(float("nan"))
            run(); torch.cuda.synchronize()
            err = float((out.double() - r_o).norm() / r_o.norm())
            lerr = float((lse.double() - r_l).abs().max())
        emit({"point": name, "merge": k, "rel_err": err, "lse_max_err": lerr,
              "finite": bool(torch.isfinite(out).all()), "pieces": plan.schedule.num_units})
        assert torch.isfinite(out).all() and err < 1e-2 and lerr < 1e-3, k
    emit({"point": name, "carveout_results": set_carveout(OLD_CARVE) + set_carveout(NEW_CARVE)})
    variants = dict(MERGES, **{"no merge (wrong)": no_merge})
    t = {k: [] for k in variants}; mhz = {k: [] for k in variants}
    for r in range(6):
        for k in (list(variants) if r % 2 == 0 else list(variants)[::-1]):
            S.launch_merge = variants[k]
            t[k].append(round(measure(run, mode="graph", max_time_ms=120).median, 3))
            mhz[k].append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
    base = t["shipped merge"]
    emit({"point": name, "graph_medians_us": t, "sm_mhz_after": mhz,
          "speedup_vs_shipped": {k: [round(a / b, 4) for a, b in zip(base, v)] for k, v in t.items()}})
    # The merge alone, replayed on the partials the last run left.
    S.launch_merge = MERGES["shipped merge"]; run(); torch.cuda.synchronize()
    o_part, lse_part, offs = plan._o_part, plan._lse_part, plan._offsets
    alone = {k: [] for k in MERGES}
    for r in range(4):
        for k in (list(MERGES) if r % 2 == 0 else list(MERGES)[::-1]):
            f = lambda m=MERGES[k]: m(o_part, lse_part, offs, out, lse, config=None)
            alone[k].append(round(measure(f, mode="graph", max_time_ms=60).median, 3))
    emit({"point": name, "merge_alone_graph_medians_us": alone})
    S.launch_merge = SK.launch_merge


run_point("b=32 s=1 h=16 t=4096")
run_point("b=128 s=1 h=16 t~4096")
run_point("b=32 s=1 h=16 t=4096 kv=fp8", "fp8")
with open(os.path.join(os.environ.get("OUT", "/tmp"), "exp46_run1.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
