"""Step 1: the float64 reference, and the shapes the kernel really sees.

Before writing a kernel, pin down two things: what the right answer is (a reference every
later version is checked against) and what calls the kernel will serve (a workload
profile). Both go into the log: ``kernels/mla_ref.py`` and ``experiments/workload_profile.md``.

The problem: DeepSeek-V3's Multi-head Latent Attention at decode time, absorbed so that it
runs as multi-query attention over a single latent KV head::

    q            [b, s_q, h_q, 576]     512 latent + 64 RoPE columns per query row
    kv_cache     [pages, page, 1, 576]  one latent row per cached token; V = its first 512
    block_table  [b, max_pages] int32   key t of sequence i is row t % page of page
                                        block_table[i, t // page]
    out          [b, s_q, h_q, 512],    lse [b, h_q, s_q] float32 (natural log)

    out[i, j, h] = softmax_t(scale · q[i, j, h] · kv[t]) @ kv[t, :512]
                   over keys t < seqlen_i − s_q + j + 1   (causal among the s_q draft tokens)

Work per call, the two numbers the roofline needs (elt = 2 bytes in bf16)::

    FLOPs = 2 · s_q · h_q · Σ seqlen · (576 + 512)
    bytes = Σ seqlen · 576 · elt  +  b · s_q · h_q · (576 + 512) · elt

Run: ``python examples/mla_decode/01_reference_and_workload.py [--log DIR] [--gpu|--cpu]``.
"""

from __future__ import annotations

import _steps

S = _steps.setup(1, __doc__ or "")  # picks the device; sets TRITON_INTERPRET on the CPU path

import torch

from kernelopt.bench import mla_decode_cost
from kernelopt.kernels.mla import mla_decode_ref
from kernelopt.workload import (
    Recorder,
    find_shortcuts,
    profile_trace,
    shape_facts,
    write_profile_md,
)

POINTS = S.points()
SCALE = _steps.SOFTMAX_SCALE

# %% ------------------------------------------------------------------------------------
# The reference, trusted because it is the definition: gather each sequence's cache rows
# through the block table, upcast everything to float64, softmax(scale · q kᵀ) v. Check
# it on two answers we know without computing: with one key the output is that key's value
# row and the LSE is its score; with n identical keys the LSE is score + ln n.
_steps.banner("The float64 reference on answers known in advance")
gen = torch.Generator().manual_seed(1)
q1 = torch.randn(1, 1, 2, 576, generator=gen)
kv1 = torch.randn(1, S.page, 1, 576, generator=gen)
table1 = torch.zeros(1, 1, dtype=torch.int32)
out1, lse1 = mla_decode_ref(
    q1, kv1, table1, torch.tensor([1], dtype=torch.int32), softmax_scale=SCALE
)
score = SCALE * (q1[0, 0].double() @ kv1[0, 0, 0].double())  # [h]
assert torch.allclose(out1[0, 0], kv1[0, 0, 0, :512].double().expand(2, 512))
assert torch.allclose(lse1[0, :, 0], score)
kv_same = kv1[:, :1].expand(1, S.page, 1, 576).contiguous()
n = S.page
_, lse_n = mla_decode_ref(
    q1, kv_same, table1, torch.tensor([n], dtype=torch.int32), softmax_scale=SCALE
)
assert torch.allclose(
    lse_n[0, :, 0], score + torch.log(torch.tensor(float(n), dtype=torch.float64))
)
print(f"   one key: out = v, lse = score; {n} identical keys: lse = score + ln {n}  (both hold)")

# The log names the reference, as a person keeping a log would: kernels/mla_ref.py. No
# experiment runs it as its kernel; every experiment is checked against it.
_steps.snapshot_kernel(
    "kernelopt.kernels.mla.ref", [S.log / "kernels" / "mla_ref.py"], experiment=None
)

# %% ------------------------------------------------------------------------------------
# What a user writes first: bmm → float32 softmax → bmm over the cache gathered densely.
# It becomes experiment 1, the baseline. Check it against the reference at the first
# trial point before trusting anything it says.
_steps.banner("The torch eager baseline against the reference")
point = POINTS[0]
x = _steps.make_inputs(S, point, seed=11)
dense, visible = _steps.dense_kv(x)
eager_out = _steps.eager_decode(x["q"], dense, visible, SCALE)
ref_out, ref_lse = mla_decode_ref(
    x["q"], x["kv_cache"], x["block_table"], x["cache_seqlens"], softmax_scale=SCALE
)
err = _steps.rel_err(eager_out, ref_out)
bound = _steps.ERR_BOUND[S.dtype_name]
print(f"   {point}: ‖eager − ref‖ / ‖ref‖ = {err:.2e} (bound {bound:.0e} in {S.dtype_name})")
assert err <= bound, "the eager baseline disagrees with the float64 reference"

cost = mla_decode_cost(b=point.b, s_q=point.s, h_q=point.extra["h"], seqlens=point.t)
print(
    f"   one call: {cost.flops / 1e9:.3g} GFLOP, {cost.bytes / 1e6:.3g} MB moved at least, "
    f"{cost.arith_intensity:.0f} FLOP/byte"
)

# %% ------------------------------------------------------------------------------------
# Record the calls a serving loop makes. A decode engine with speculative decoding calls
# the kernel once per step with one query token per sequence (s_q = 1), and every few
# steps verifies a run of draft tokens (s_q = the draft length). Sequences have different
# prompt lengths and grow by one token a step. The Recorder wraps the function that
# launches the kernel and writes one JSONL line per call: argument shapes and dtypes, the
# min/max/mean of cache_seqlens, and (time="cuda") the call's time from CUDA events, or
# (time="host") its host time on the CPU.
_steps.banner("Recording the calls of a decode loop")
b, h, t = point.b, point.extra["h"], point.t
draft = POINTS[1].s  # the speculative point's draft length
steps = 64 if S.gpu else 24
verify_every = 8
width = -(-(t + steps * draft) // S.page)
kv_cache = torch.randn(b * width, S.page, 1, 576, generator=gen).to(S.device, S.dtype)
block_table = torch.randperm(b * width, generator=gen).view(b, width).to(torch.int32).to(S.device)
prompt = t - torch.randint(0, t // 4, (b,), generator=gen)  # lengths differ per sequence

trace = S.runs / "trace.jsonl"
recorder = Recorder(
    trace, time="cuda" if S.gpu else "host", values=("cache_seqlens",), append=False
)


def eager_launcher(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    cache_seqlens: torch.Tensor,
    softmax_scale: float,
) -> torch.Tensor:
    """The launcher under optimization: here still the eager baseline."""
    inputs = {
        "q": q,
        "kv_cache": kv_cache,
        "block_table": block_table,
        "cache_seqlens": cache_seqlens,
    }
    dense, visible = _steps.dense_kv(inputs)
    return _steps.eager_decode(q, dense, visible, softmax_scale)


mla_decode = recorder.wrap(eager_launcher, op="mla_decode")  # or @recorder(op=...) on the def


with recorder:  # the trace is flushed and closed at the end of the block
    lengths = prompt.clone()
    for step in range(steps):
        s_q = draft if step % verify_every == verify_every - 1 else 1
        lengths += s_q  # this step's tokens are in the cache when attention runs
        q = torch.randn(b, s_q, h, 576, generator=gen).to(S.device, S.dtype)
        mla_decode(q, kv_cache, block_table, lengths.to(torch.int32).to(S.device), SCALE)
print(f"   {steps} calls recorded to {trace.relative_to(S.log)}")

# %% ------------------------------------------------------------------------------------
# Profile the trace: per axis its range and how often it is 1, the shape mix by calls and
# by time, and the shortcut rules (a size-1 axis, uniform lengths, a dominant shape...),
# each with the guard a kernel would test to take a fast path.
_steps.banner("The workload profile")
profile = profile_trace(trace)
op = profile.op("mla_decode")
print(f"   {op.calls} calls, {op.distinct_shapes} distinct shapes")
for name in ("b", "s_q", "h_q", "h_kv", "seqlen"):
    axis = op.axis(name)
    if axis is not None:
        print(
            f"   {name:>7}: min {axis.min:g}  median {axis.median:g}  max {axis.max:g}  "
            f"size-1 in {axis.size1_share:.0%} of calls   ({axis.source})"
        )

print("   Size 1 at decode (a kernel can drop the axis, or take a fast path guarded on it):")
for size1 in op.size1_axes(threshold=0.5):
    time = "" if size1.time_share is None else f", {size1.time_share:.0%} of time"
    always = " (always)" if size1.always else ""
    print(f"     {size1.axis} == 1 in {size1.call_share:.0%} of calls{time}{always}")

skew = op.skew(1)
print(
    f"   Skew: the most common shape takes {skew.call_share:.0%} of the calls; "
    + (
        "no durations recorded."
        if skew.time_share is None
        else f"the costliest shape takes {skew.time_share:.0%} of the time."
    )
)
for shape in op.top_shapes(2, by="time"):
    share = "?" if shape.time_share is None else f"{shape.time_share:.0%}"
    args = _steps.clip(shape.args, 90)
    print(f"     {share:>4} of time, {shape.call_share:.0%} of calls: {args}")
if S.gpu:
    print("   (time shares are CUDA-event times of the eager baseline)")
else:
    print("   [CPU] time shares are host times of eager torch on the CPU, not of a GPU kernel.")

print("   Shortcuts (rule, share of calls, the guard a kernel would test, catalog entries):")
for shortcut in find_shortcuts(profile):
    entries = ", ".join(shortcut.catalog_ids)
    print(f"     {shortcut.rule:16} {shortcut.call_share:5.0%}  {shortcut.guard:45} {entries}")
facts = shape_facts(profile)
print(
    "   Catalog shape facts:",
    ", ".join(f"{k}={facts[k]:g}" for k in ("s_q", "h_q", "h_kv", "seqlen_k")),
)

# %% ------------------------------------------------------------------------------------
# CLAUDE.md is the log's source of truth for later readers (people, agents, and
# `kernelopt diagnose`): which kernel, which baseline, which points, which rules.
trial = "\n".join(f"- {p.name}: {p} (page {S.page}, {S.dtype_name})" for p in POINTS)
(S.log / "CLAUDE.md").write_text(
    f"""# MLA decode kernel (Triton)

Absorbed DeepSeek-V3 MLA decode over a paged latent KV cache, optimized step by step by
examples/mla_decode/ of kernelopt on {S.where}.

## Kernel
- Kernel under optimization: `kernels/mla_decode.py` (MLA decode, absorbed, paged KV cache)
- Baseline reference: `kernels/mla_ref.py` (float64 PyTorch: the definition)
- Softmax scale 1/sqrt(192); causal among the s_q draft tokens; lse in natural log

## Trial points
{trial}

## Rules
- One change per experiment; every experiment has experiments/exp_N/result.md and a summary row.
- Correctness first: rel err against the float64 reference <= {bound:.0e} ({S.dtype_name}),
  outputs poisoned with NaN before each call.
- Time with kernelopt.bench (CUDA events, L2 flushed, median); A/B with kernelopt.bench.compare.
""",
    encoding="utf-8",
)
print("   wrote CLAUDE.md")

# The workload profile is the file that tells later steps this one finished (a step that
# finds it missing runs step 1 first): it is written last.
path = write_profile_md(profile, S.experiments / "workload_profile.md")
print(f"   wrote {path.relative_to(S.log)}")

_steps.finish(S)  # last: later steps build on this log from here on
