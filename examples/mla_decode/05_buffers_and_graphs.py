"""Step 5: host-side costs: persistent output buffers, and CUDA graphs where launches dominate.

A decode kernel runs once per layer per generated token, for tens of microseconds. At
that scale the host work around the launch counts: allocating ``out`` and ``lse`` on every
call (``torch.empty`` goes through the caching allocator and the dispatcher), checking
arguments in Python, launching two Triton kernels (attention, then the merge). This step
removes them in two ways and measures each:

1. **Persistent buffers** (``kernelopt.buffers``): ``plan.run(..., out=, lse=)`` takes
   caller-owned outputs, so a ``@persistent_buffers`` launcher keeps them in a pool and
   every call after the first allocates nothing. Safe exactly when every call rewrites
   every element it reads: ``check_no_stale_reads`` proves that on real inputs by running
   from zero-filled and from NaN-poisoned buffers and comparing.
2. **CUDA graphs** (GPU only): capture a layer's launches once and replay them; a replay
   submits all of them with one host call. It pays where the kernel time is small
   next to the launch overhead, a small batch:

       launch_overhead_pct = (t_events − t_graph) / t_events · 100

Run: ``python examples/mla_decode/05_buffers_and_graphs.py [--log DIR] [--gpu|--cpu]``.
"""

from __future__ import annotations

import _steps

S = _steps.setup(5, __doc__ or "")

import torch

from kernelopt import KernelOptError
from kernelopt.bench import (
    BenchRow,
    Comparison,
    Roofline,
    Timer,
    TrialPoint,
    Verdict,
    append_rows,
    compare,
    launch_overhead_pct,
    mla_decode_cost,
    to_result_row,
    write_experiment,
)
from kernelopt.buffers import (
    BufferPool,
    BufferScope,
    capture_graph,
    check_no_stale_reads,
    persistent_buffers,
)
from kernelopt.experiments import ResultRow
from kernelopt.kernels.mla import MLADecodePlan, mla_decode_ref

ceilings = S.ceilings()
pool = BufferPool(max_bytes=1 << 30)  # LRU past 1 GiB: a few shapes of out/lse fit easily


# %% ------------------------------------------------------------------------------------
# The launcher. `plan` is made once per decode step (it reads the lengths and schedules
# the pieces); `attend` runs once per layer. Its out and lse come from the launcher's own
# scope of the pool: same shape, dtype, device and stream → the same tensors every call.
@persistent_buffers(pool=pool)
def attend(
    buffers: BufferScope,
    plan: MLADecodePlan,
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One layer of MLA decode into persistent out ``[b, s, h, 512]`` and lse ``[b, h, s]``."""
    b, s, h, _ = q.shape
    out = buffers.resolve_out(None, (b, s, h, 512), q.dtype, q.device)
    lse = buffers.empty("lse", (b, h, s), torch.float32, q.device)
    return plan.run(q, kv_cache, block_table, out=out, lse=lse)


def make_plan(x: dict[str, torch.Tensor], point: TrialPoint) -> MLADecodePlan:
    """The decode step's plan for inputs ``x`` at ``point`` (split-KV, the default strategy)."""
    return MLADecodePlan(
        x["cache_seqlens"],
        s_q=point.s,
        h_q=point.extra["h"],
        page_size=S.page,
        softmax_scale=_steps.SOFTMAX_SCALE,
        dtype=S.dtype,
        device=S.device,
    )


def roofline_of(point: TrialPoint) -> Roofline | None:
    """The point's roofline on this device (None on the CPU path: no ceilings)."""
    if ceilings is None:
        return None
    cost = mla_decode_cost(b=point.b, s_q=point.s, h_q=point.extra["h"], seqlens=point.t)
    return Roofline(ceilings=ceilings, cost=cost)


point = S.points()[0]
_steps.banner(f"Persistent out/lse at {point.name} {point}")
x = _steps.make_inputs(S, point, seed=500)
plan = make_plan(x, point)
ref_out, ref_lse = mla_decode_ref(
    x["q"], x["kv_cache"], x["block_table"], x["cache_seqlens"], softmax_scale=_steps.SOFTMAX_SCALE
)
out, lse = attend(plan, x["q"], x["kv_cache"], x["block_table"])
first = out.data_ptr()
err_out, err_lse = _steps.rel_err(out, ref_out), _steps.rel_err(lse, ref_lse)
print(f"   first call: rel err out {err_out:.1e}, lse {err_lse:.1e}")
assert max(err_out, err_lse) <= _steps.ERR_BOUND[S.dtype_name]
del out, lse  # done with this layer's result: the next call may reuse the buffers
out, lse = attend(plan, x["q"], x["kv_cache"], x["block_table"])
stats = pool.stats
print(
    f"   second call: same out address {out.data_ptr() == first}; pool hits {stats.hits}, "
    f"misses {stats.misses}, {stats.bytes_held / 1e6:.2f} MB held"
)

# A caller who keeps a result while calling again would see it overwritten: the launcher
# refuses instead, before anything is written (on_return="check", the default).
try:
    attend(plan, x["q"], x["kv_cache"], x["block_table"])
except KernelOptError as error:
    refusal = _steps.clip(str(error), 100)
    print(f"   kept the previous result and called again → refused: {refusal}")
else:
    raise SystemExit("Expected the launcher to refuse while its last result is still held")
del out, lse


# Safe to persist? Run each call from zero-filled and from NaN-poisoned buffers; a kernel
# that leaves any element of out/lse unwritten, or reads it before writing, gives a
# different answer from the poisoned state. Fresh queries per call, same plan and cache.
def layer_inputs(i: int) -> tuple[object, ...]:
    gen = torch.Generator().manual_seed(600 + i)
    q = torch.randn(x["q"].shape, generator=gen).to(S.device, S.dtype)
    return plan, q, x["kv_cache"], x["block_table"]


report = check_no_stale_reads(attend, layer_inputs, calls=2)
print(f"   check_no_stale_reads: ok={report.ok} over {report.calls} calls")
print(f"   buffers checked: {', '.join(report.buffers)}")


# %% ------------------------------------------------------------------------------------
# A/B: allocating per call (plan.run without out/lse) against the persistent launcher, at
# every trial point (the first only on the CPU path, to keep the interpreter run short).
def allocation_ab(point: TrialPoint, seed: int) -> Comparison:
    """compare(per-call allocation, persistent buffers) at ``point``; rows recorded."""
    x = _steps.make_inputs(S, point, seed=seed)
    plan = make_plan(x, point)
    line = roofline_of(point)
    result = compare(
        lambda: plan.run(x["q"], x["kv_cache"], x["block_table"]),  # torch.empty ×2 per call
        lambda: attend(plan, x["q"], x["kv_cache"], x["block_table"]),  # result dropped at once
        timer=S.timer(),
        label=f"{point} ",
        **S.compare_limits(),
    )
    assert result.baseline is not None and result.candidate is not None
    print(f"   {_steps.verdict_words(result, candidate='buffers', baseline='allocating')}")
    _steps.cpu_note(S)
    rows.append(
        to_result_row(
            result.candidate, point=point, impl="split_kv+buffers", floor=line, speedup=result
        )
    )
    bench.extend(
        [
            _steps.timing_row(
                S, result.baseline, impl="triton_split_kv_alloc", point=point, line=line
            ),
            _steps.timing_row(
                S, result.candidate, impl="triton_split_kv_buffers", point=point, line=line
            ),
        ]
    )
    return result


rows: list[ResultRow] = []
bench: list[BenchRow] = []
verdicts = []
for index, point in enumerate(S.points() if S.gpu else S.points()[:1]):
    _steps.banner(f"Allocate per call vs persistent buffers at {point.name} {point}")
    verdicts.append(allocation_ab(point, seed=700 + index).verdict)


# %% ------------------------------------------------------------------------------------
# CUDA graphs for the launch-bound case. A graph replays fixed addresses: the persistent
# buffers give them, and the plan's schedule is fixed for its decode step. Capture one
# layer (capture_graph warms up on a side stream so every buffer exists before capture),
# check the replay against the reference on new queries, then time eager launches against
# replays, back to back as layers follow each other in a model: b = 1 (one sequence,
# launch-bound) and the trial matrix's b = 32, h = 16.
def graph_ab(point: TrialPoint, seed: int) -> tuple[Comparison, float]:
    """compare(eager launches, graph replays) at ``point``; rows recorded."""
    x = _steps.make_inputs(S, point, seed=seed)
    plan = make_plan(x, point)
    graph = capture_graph(attend, plan, x["q"], x["kv_cache"], x["block_table"])
    new_q = torch.randn_like(x["q"])
    g_out, _ = graph(plan, new_q, x["kv_cache"], x["block_table"])  # copy q in, replay
    ref_out, _ = mla_decode_ref(
        new_q,
        x["kv_cache"],
        x["block_table"],
        x["cache_seqlens"],
        softmax_scale=_steps.SOFTMAX_SCALE,
    )
    err = _steps.rel_err(g_out, ref_out)
    assert err <= _steps.ERR_BOUND[S.dtype_name], f"graph replay rel err {err:.1e}"
    line = roofline_of(point)
    result = compare(
        lambda: attend(plan, x["q"], x["kv_cache"], x["block_table"]),
        graph.replay,
        timer=Timer(mode="hot"),
        label=f"{point} ",
    )
    assert result.baseline is not None and result.candidate is not None
    overhead = launch_overhead_pct(result.baseline, result.candidate)
    floor = "" if line is None else f" (roofline floor {line.floor('us'):.2f} us)"
    print(
        f"   replay rel err {err:.1e}; "
        f"{_steps.verdict_words(result, candidate='graph', baseline='launches')}"
    )
    print(
        f"   events {result.baseline.median:.2f} us vs graph {result.candidate.median:.2f} us: "
        f"launch_overhead_pct = {overhead:.1f}%{floor}"
    )
    rows.append(
        to_result_row(
            result.candidate, point=point, impl="split_kv+graph", floor=line, speedup=result
        )
    )
    metrics = None
    if line is not None:
        metrics = {**line.place(result.candidate).metrics(), "launch_overhead_pct": overhead}
    bench.extend(
        [
            _steps.timing_row(
                S, result.baseline, impl="triton_split_kv_events", point=point, line=line
            ),
            _steps.timing_row(
                S,
                result.candidate,
                impl="triton_split_kv_graph",
                point=point,
                line=line,
                metrics=metrics,
            ),
        ]
    )
    return result, overhead


graph_points = [
    TrialPoint(name="small-batch", b=1, s=1, t=4096, extra={"h": 16}),
    TrialPoint(name="decode", b=32, s=1, t=4096, extra={"h": 16}),
]
tags = ["buffer-persistence"]
overheads = []
if not S.gpu:
    _steps.banner("CUDA graphs")
    print(
        "   [CPU] Skipped: a CUDA graph records kernels launched on a CUDA device, and the CPU "
        "path runs them in the Triton interpreter. Run this step on a GPU for this part."
    )
else:
    tags.append("cuda-graphs")
    for index, point in enumerate(graph_points):
        _steps.banner(f"CUDA graphs at {point.name} {point}")
        result, overhead = graph_ab(point, seed=800 + index)
        verdicts.append(result.verdict)
        overheads.append(overhead)

append_rows(S.bench_rows, bench)

# %% ------------------------------------------------------------------------------------
_steps.banner("Writing the log")
if Verdict.FAST in verdicts and Verdict.SLOW not in verdicts:
    status = "KEPT"
elif Verdict.SLOW in verdicts and Verdict.FAST not in verdicts:
    status = "REVERTED"
else:
    status = "NEUTRAL"
verdict_text = ", ".join(v.value for v in verdicts)
write_experiment(
    S.experiments,
    experiment=_steps.EXP_GRAPHS,
    title="persistent out/lse buffers" + (", CUDA-graph replay for small batches" if S.gpu else ""),
    rows=rows,
    status=status,
    correctness="PASS",
    correctness_detail="check_no_stale_reads from zero and NaN-poisoned buffers"
    + ("; graph replay rel err vs float64" if S.gpu else ""),
    gpu=S.where,
    kernel="kernels/mla_decode.py",
    baseline="split_kv allocating out/lse per call" + (", eager launches" if S.gpu else ""),
    tags=tags,
    verdict=verdict_text,
    notes=(
        f"launch_overhead_pct at {', '.join(str(p) for p in graph_points)}: "
        + ", ".join(f"{o:.1f}" for o in overheads)
        if overheads
        else "CPU path: CUDA graphs skipped; verdicts compare Triton-interpreter speeds."
    ),
)
print(f"   verdicts {verdict_text} → {status}; wrote experiments/exp_{_steps.EXP_GRAPHS}/result.md")

_steps.finish(S)  # last: later steps build on this log from here on
