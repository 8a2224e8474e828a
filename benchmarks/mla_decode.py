"""MLA decode on the trial matrix: kernelopt's strategies against peers and the roofline.

Run on a GPU from the repository root::

    PYTHONPATH=. python benchmarks/mla_decode.py --out benchmarks/results/mla_decode.jsonl
    PYTHONPATH=. python benchmarks/mla_decode.py --quick          # two points, fewer impls
    PYTHONPATH=. python benchmarks/mla_decode.py --strategies split_kv --peers eager
    PYTHONPATH=. python benchmarks/mla_decode.py --kv fp8   # the 656-byte FP8 cache

What it does, in order:

1. Measures the two ceilings in this run (``kernelopt.bench.measure_ceilings``): a 1 GiB
   device-to-device copy counting bytes read plus written, and an 8192³ bf16 matmul on
   random data.
2. For every point (bf16, page 64, causal among the draft tokens, softmax scale
   ``1/sqrt(192)``): b=32, t=4096, s_q ∈ {1, 16} × h_q ∈ {128, 16}; and b=128 with
   lengths drawn around 4096 (one of them 4097), s_q=1, h_q ∈ {128, 16}.
3. For every implementation: one call checked against the float64 reference
   (``‖out − ref‖ / ‖ref‖ < 2e-2``, finite); a failing implementation is reported and not
   timed. Then timed with ``kernelopt.bench.measure`` twice: CUDA events with the L2
   flushed before each call ("cold"), and replays of a CUDA graph ("graph").
4. Reports µs, TFLOP/s, GB/s and the fraction of the roofline floor
   ``max(FLOPs / matmul rate, bytes / copy rate)`` (formulas in
   ``kernelopt.kernels.mla.cost``), appends one JSONL row per timing to ``--out`` (with
   the roofline placement ``dram_pct``, ``tc_pct``, ``arith_intensity``, ``ridge`` that
   ``kernelopt.workflow.profile_from_rows`` reads) and prints one table last.

Implementations: every ``MLADecodePlan`` strategy (planned once per point, outside the
timing, into caller-owned outputs); the torch eager peer (bmm → fp32 softmax → bmm over the
cache gathered densely beforehand, the code a user writes first) and ``torch.compile`` of
it; FlashMLA and FlashInfer when importable. With ``--kv fp8`` the cache is quantized to
FlashMLA's 656-byte FP8 layout before timing (``kernelopt.kernels.mla.fp8``); the reference
reads the same bytes, the floor counts 656-byte rows, and only the strategies and peers that
read the layout run (``split_kv``, and ``seesaw`` at 16 query rows or fewer; the torch peers
dequantize inside the timed call).
``--smoke`` runs tiny shapes on the CPU through the Triton interpreter, on any machine (a
GPU's too: the interpreter reads host memory) to check the script itself; its numbers mean
nothing, and its rows are written only to an ``--out`` given on the command line. It runs
the strategies the interpreter can run (not ``seesaw``) and the torch eager peer, and
prints a ``--smoke: skipping ...`` line naming any other it was asked for.
``--workload PATH`` writes the trial matrix's shapes as a workload profile (the
``workload_profile.md`` that ``kernelopt inspect`` writes and ``kernelopt diagnose`` reads)
and exits; it needs no GPU::

    python benchmarks/mla_decode.py --workload experiments/workload_profile.md
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, TypeGuard

from _common import no_cuda, refuse_unwritable_out, with_scripts_commit

if "--smoke" in sys.argv:
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported

import torch

from kernelopt.bench import (
    BenchRow,
    Cost,
    Roofline,
    append_rows,
    measure,
    measure_ceilings,
    row_from_measurement,
)
from kernelopt.bench.measurement import MODES
from kernelopt.bench.records import ConfigValue
from kernelopt.kernels.mla import (
    FP8_KV_BYTES,
    STRATEGIES,
    MLADecodePlan,
    Strategy,
    dequantize_kv_fp8,
    mla_decode_bytes,
    mla_decode_flops,
    mla_decode_ref,
    quantize_kv_fp8,
)
from kernelopt.workload import Recorder, profile_calls, read_trace, write_profile_md

PEERS = ("eager", "compile", "flashmla", "flashinfer")
FP8_STRATEGIES = ("split_kv", "seesaw")  # the strategies that read the 656-byte FP8 layout
FP8_SEESAW_ROWS = 16  # seesaw reads it with at most this many query rows (its ring kernel)


class NotApplicableError(Exception):
    """An implementation that does not run a point's shape (reported, not a failure)."""


FP8_PEERS = ("eager", "compile")
DEFAULT_OUT = Path("benchmarks/results/mla_decode.jsonl")
SCALE = 192**-0.5  # DeepSeek-V3: (128 nope + 64 rope) ** -0.5
CHECK_BOUND = 2e-2


@dataclass
class Point:
    """One benchmark shape."""

    name: str
    s_q: int
    h_q: int
    seqlens: list[int]
    page: int = 64
    kv: str = "dense"

    @property
    def b(self) -> int:
        return len(self.seqlens)

    def config(self) -> dict[str, ConfigValue]:
        config: dict[str, ConfigValue] = {
            "point": self.name,
            "b": self.b,
            "s_q": self.s_q,
            "h_q": self.h_q,
            "t_mean": sum(self.seqlens) / self.b,
            "t_max": max(self.seqlens),
            "page": self.page,
            "varlen": len(set(self.seqlens)) > 1,
        }
        if self.kv != "dense":
            config["kv"] = self.kv
        return config


@dataclass
class Result:
    """One implementation at one point."""

    point: Point
    impl: str
    err: float | None = None
    us: dict[str, float] = field(default_factory=dict)
    note: str = ""


# One implementation at one point: its result, FLOPs, bytes and floor in µs (None without
# the run's ceilings).
TableRow = tuple[Result, int, int, float | None]


def trial_points(quick: bool, smoke: bool, kv: str = "dense") -> list[Point]:
    """The benchmark's points; with ``kv="fp8"`` each is named ``… kv=fp8`` and reads that cache."""
    gen = torch.Generator().manual_seed(4096)
    if smoke:
        points = [
            Point("smoke s=1 h=16", 1, 16, [70, 33], page=16),
            Point("smoke s=2 h=3", 2, 3, [40, 17, 65], page=16),
        ]
    else:
        points = [
            Point(f"b=32 s={s} h={h} t=4096", s, h, [4096] * 32)
            for s, h in ((1, 128), (1, 16), (16, 128), (16, 16))
        ]
        varlen = torch.randint(3072, 5121, (128,), generator=gen).tolist()
        varlen[0] = 4097
        points += [Point(f"b=128 s=1 h={h} t~4096", 1, h, varlen) for h in (128, 16)]
        if quick:
            points = [p for p in points if p.s_q == 1 and p.b == 32]
    if kv != "dense":
        points = [dataclasses.replace(p, name=f"{p.name} kv={kv}", kv=kv) for p in points]
    return points


def write_workload(points: list[Point], path: Path) -> Path:
    """Write the shapes the trial matrix times as a workload profile at ``path``.

    Each point is one recorded call with the arguments every implementation receives
    (bf16 query ``[b, s_q, h_q, 576]``, paged cache ``[b · pages, page, 1, 576]`` bf16, or
    ``[…, 656]`` uint8 for a ``kv="fp8"`` point, block table ``[b, pages]``, the cache
    lengths, the softmax scale, causal draft tokens). The query, cache and block table are
    meta tensors: only their shapes and dtypes are recorded, so no memory is allocated;
    the lengths are real.
    """
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trial_matrix.jsonl"
        with Recorder(trace, values=("cache_seqlens",), append=False) as recorder:
            for point in points:
                pages = max(math.ceil(n / point.page) for n in point.seqlens)
                fp8 = point.kv == "fp8"
                row, row_dtype = (FP8_KV_BYTES, torch.uint8) if fp8 else (576, torch.bfloat16)
                q_shape = (point.b, point.s_q, point.h_q, 576)
                kv_shape = (point.b * pages, point.page, 1, row)
                recorder.record(
                    "mla_decode",
                    {
                        "q": torch.empty(q_shape, dtype=torch.bfloat16, device="meta"),
                        "kv_cache": torch.empty(kv_shape, dtype=row_dtype, device="meta"),
                        "block_table": torch.empty(
                            point.b, pages, dtype=torch.int32, device="meta"
                        ),
                        "cache_seqlens": torch.tensor(point.seqlens, dtype=torch.int32),
                        "softmax_scale": SCALE,
                        "causal": True,
                    },
                )
        source = "the trial matrix of benchmarks/mla_decode.py (one call a point)"
        profile = profile_calls(read_trace(trace), op="mla_decode", source=source)
    return write_profile_md(profile, path)


class Inputs(TypedDict):
    """One point's inputs, on the run's device."""

    q: torch.Tensor  # [b, s_q, h_q, 576], the run's dtype
    kv: torch.Tensor  # [b · pages, page, 1, 576] in q's dtype, or [..., 656] uint8 for fp8
    block_table: torch.Tensor  # [b, pages] int32
    seqlens: torch.Tensor  # [b] int32


def make_inputs(point: Point, device: str, dtype: torch.dtype, seed: int) -> Inputs:
    # Random data (never zeros), pages in a random order as a serving allocator leaves them.
    gen = torch.Generator(device=device).manual_seed(seed)
    blocks = [math.ceil(n / point.page) for n in point.seqlens]
    width = max(blocks)
    total = point.b * width
    kv = torch.randn(total, point.page, 1, 576, device=device, generator=gen).to(dtype)
    order = torch.randperm(total, device=device, generator=gen)
    block_table = order.view(point.b, width).to(torch.int32)
    q = torch.randn(point.b, point.s_q, point.h_q, 576, device=device, generator=gen).to(dtype)
    seqlens = torch.tensor(point.seqlens, dtype=torch.int32, device=device)
    if point.kv == "fp8":
        kv = quantize_kv_fp8(kv)  # 656 bytes a token: FlashMLA's FP8 layout
    return {"q": q, "kv": kv, "block_table": block_table, "seqlens": seqlens}


# ---------------------------------------------------------------------------- implementations
# Each maker returns (fn, outputs, note): fn() runs one call; outputs are the caller-owned
# (out, lse) it writes (None where the implementation allocates its own, then fn returns
# out); note says how the implementation was set up.
Impl = tuple[
    Callable[[], torch.Tensor | tuple[torch.Tensor, torch.Tensor]],
    tuple[torch.Tensor, torch.Tensor] | None,
    str,
]
Maker = Callable[[Point, Inputs], Impl]


def is_strategy(name: str) -> TypeGuard[Strategy]:
    """True where ``name`` is one of ``MLADecodePlan``'s strategies."""
    return name in STRATEGIES


def make_plan(point: Point, x: Inputs, strategy: Strategy) -> MLADecodePlan:
    """The plan of ``strategy`` for ``point``'s lengths, in the inputs' dtype and device."""
    return MLADecodePlan(
        x["seqlens"],
        s_q=point.s_q,
        h_q=point.h_q,
        page_size=point.page,
        softmax_scale=SCALE,
        dtype=x["q"].dtype,
        device=x["q"].device,
        strategy=strategy,
        kv_fp8=point.kv == "fp8",
    )


def kernelopt_impl(strategy: Strategy) -> Maker:
    def make(point: Point, x: Inputs) -> Impl:
        q = x["q"]
        rows = point.s_q * point.h_q
        if strategy == "seesaw" and point.kv == "fp8" and rows > FP8_SEESAW_ROWS:
            raise NotApplicableError(f"seesaw reads the FP8 cache at <= 16 query rows, not {rows}")
        plan = make_plan(point, x, strategy)
        out = torch.empty(point.b, point.s_q, point.h_q, 512, dtype=q.dtype, device=q.device)
        lse = torch.empty(point.b, point.h_q, point.s_q, dtype=torch.float32, device=q.device)
        note = ""
        if plan.schedule is not None:
            note = f"pieces={plan.schedule.num_units} config={plan.config}"
        return (lambda: plan.run(q, x["kv"], x["block_table"], out=out, lse=lse)), (out, lse), note

    return make


def _dense_kv(point: Point, x: Inputs) -> tuple[torch.Tensor, torch.Tensor]:
    # The cache gathered into [b, t_max, 576] (outside the timing) and the mask of keys each
    # query row may see: [b, s_q * h_q, t_max].
    t_max = max(point.seqlens)
    keys = torch.arange(t_max, device=x["q"].device)
    pages = x["block_table"][:, (keys // point.page)].long()  # [b, t_max]
    dense = x["kv"][pages, (keys % point.page)[None, :], 0]  # [b, t_max, 576]
    tok = torch.arange(point.s_q, device=keys.device).repeat_interleave(point.h_q)
    limit = x["seqlens"][:, None].long() - point.s_q + 1 + tok[None, :]  # [b, rows]
    visible = keys[None, None, :] < limit[:, :, None]
    return dense, visible


def _eager(q: torch.Tensor, dense: torch.Tensor, visible: torch.Tensor) -> torch.Tensor:
    if dense.dtype == torch.uint8:
        # An FP8 cache: dequantize the gathered rows first, as part of the timed call.
        dense = dequantize_kv_fp8(dense, q.dtype)
    b, s_q, h_q, _ = q.shape
    scores = torch.bmm(q.reshape(b, s_q * h_q, 576), dense.transpose(1, 2)).float() * SCALE
    scores = scores.masked_fill(~visible, float("-inf"))
    probs = torch.softmax(scores, dim=-1).to(q.dtype)
    return torch.bmm(probs, dense[..., :512]).reshape(b, s_q, h_q, 512)


def eager_impl(point: Point, x: Inputs) -> Impl:
    dense, visible = _dense_kv(point, x)
    return (lambda: _eager(x["q"], dense, visible)), None, "out only (no lse)"


_COMPILED: dict[str, Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]] = {}


def compile_impl(point: Point, x: Inputs) -> Impl:
    dense, visible = _dense_kv(point, x)
    fn = _COMPILED.setdefault("eager", torch.compile(_eager, dynamic=False))
    return (lambda: fn(x["q"], dense, visible)), None, "out only (no lse)"


def flashmla_impl(point: Point, x: Inputs) -> Impl:
    import flash_mla

    # Both FlashMLA interfaces: older releases return (metadata, num_splits) tensors, newer
    # ones a scheduler object and None that the first call fills.
    meta, splits = flash_mla.get_mla_metadata(x["seqlens"], point.s_q * point.h_q, 1)

    def run() -> torch.Tensor:
        out: torch.Tensor  # flash_mla ships no types
        out, _ = flash_mla.flash_mla_with_kvcache(
            x["q"],
            x["kv"],
            x["block_table"],
            x["seqlens"],
            512,
            meta,
            splits,
            softmax_scale=SCALE,
            causal=True,
        )
        return out

    return run, None, "allocates its outputs per call"


def flashinfer_impl(point: Point, x: Inputs) -> Impl:
    import flashinfer

    q, kv, bt, sl = x["q"], x["kv"], x["block_table"], x["seqlens"]
    device = q.device
    workspace = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device=device)
    wrapper = flashinfer.mla.BatchMLAPagedAttentionWrapper(workspace, backend="auto")
    pages = [math.ceil(n / point.page) for n in point.seqlens]
    kv_indptr = torch.tensor([0, *torch.tensor(pages).cumsum(0).tolist()], dtype=torch.int32)
    kv_indices = torch.cat([bt[i, :n] for i, n in enumerate(pages)]).to(torch.int32)
    qo_indptr = torch.arange(point.b + 1, dtype=torch.int32) * point.s_q
    wrapper.plan(
        qo_indptr.to(device),
        kv_indptr.to(device),
        kv_indices,
        sl,
        point.h_q,
        512,
        64,
        point.page,
        True,
        SCALE,
        q.dtype,
        kv.dtype,
    )
    rows = q.reshape(point.b * point.s_q, point.h_q, 576)
    q_nope, q_pe = rows[..., :512].contiguous(), rows[..., 512:].contiguous()
    ckv, kpe = kv[:, :, 0, :512], kv[:, :, 0, 512:]

    def run() -> torch.Tensor:
        out: torch.Tensor = wrapper.run(q_nope, q_pe, ckv, kpe, return_lse=False)
        return out.reshape(point.b, point.s_q, point.h_q, 512)

    return run, None, "q split into nope/pe outside the timing"


def implementations(strategies: list[Strategy], peers: list[str]) -> dict[str, Maker]:
    makers: dict[str, Maker] = {f"kernelopt_{s}": kernelopt_impl(s) for s in strategies}
    table: dict[str, Maker] = {
        "eager": eager_impl,
        "compile": compile_impl,
        "flashmla": flashmla_impl,
        "flashinfer": flashinfer_impl,
    }
    makers.update({f"torch_{p}" if p in ("eager", "compile") else p: table[p] for p in peers})
    return makers


# ---------------------------------------------------------------------------- driver


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    if not torch.isfinite(out).all():
        return math.inf
    return float((out.double() - ref).norm() / ref.norm())


def point_bytes(point: Point, x: Inputs) -> int:
    """The fewest bytes a call at ``point`` moves (656-byte cache rows for ``kv="fp8"``)."""
    return mla_decode_bytes(
        point.seqlens,
        batch=point.b,
        s_q=point.s_q,
        h_q=point.h_q,
        elt_bytes=x["q"].element_size(),
        kv_row_bytes=FP8_KV_BYTES if point.kv == "fp8" else None,
    )


def run_point(
    point: Point,
    x: Inputs,
    makers: dict[str, Maker],
    modes: list[str],
    max_time_ms: float,
    roofline: Roofline | None,
    dtype: torch.dtype,
    rows_out: list[BenchRow],
    notes: list[str],
) -> tuple[list[Result], int, int]:
    # roofline: this point's cost against the run's measured ceilings (None without a GPU).
    results: list[Result] = []
    floor_us = roofline.floor("us") if roofline is not None else None
    ref, _ = mla_decode_ref(x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=SCALE)
    flops = mla_decode_flops(point.seqlens, s_q=point.s_q, h_q=point.h_q)
    nbytes = point_bytes(point, x)
    for impl, maker in makers.items():
        result = Result(point, impl)
        results.append(result)
        try:
            fn, outputs, result.note = maker(point, x)
            for output in outputs or ():
                output.fill_(float("nan"))
            got = fn()
            if outputs is not None:
                got_out = outputs[0]
            else:
                got_out = got[0] if isinstance(got, tuple) else got
            result.err = rel_err(got_out, ref)
            if outputs is not None and not torch.isfinite(outputs[1]).all():
                result.err = math.inf
        except ImportError as error:
            result.note = f"not importable: {error}"
            continue
        except NotApplicableError as error:
            result.note = f"not applicable: {error}"
            continue
        except Exception as error:  # a peer failing must not stop the run
            result.note = f"failed: {type(error).__name__}: {str(error)[:200]}"
            continue
        if not result.err < CHECK_BOUND:
            result.note = f"wrong result (rel err {result.err:.3g}); not timed"
            continue
        for mode in modes:
            try:
                m = measure(
                    fn,
                    mode=mode,
                    # Host tensors (--smoke, or no GPU) are timed on the host's clock:
                    # CUDA events on a GPU machine would time nothing of them.
                    backend="auto" if x["q"].is_cuda else "cpu-perf-counter",
                    outputs=outputs,
                    max_time_ms=max_time_ms,
                    label=f"{impl} {point.name}",
                )
            except Exception as error:
                result.note += f" {mode} failed: {type(error).__name__}: {str(error)[:120]}"
                continue
            result.us[mode] = m.median
            metrics = {
                "tflops": flops / (m.median * 1e6),
                "gbps": nbytes / (m.median * 1e3),
                "rel_err": result.err,
            }
            if roofline is not None:
                # floor_pct and the placement the profile hand-off reads (dram_pct, tc_pct, ...).
                metrics |= roofline.place(m.median, unit="us").metrics()
            config = point.config() | {"dtype": str(dtype).removeprefix("torch.")}
            rows_out.append(
                row_from_measurement(
                    m,
                    op="mla_decode",
                    impl=impl,
                    config=config,
                    floor=floor_us,
                    metrics=metrics,
                    note=result.note,
                )
            )
    notes.extend(f"{r.impl} @ {point.name}: {r.note}" for r in results if r.note)
    return results, flops, nbytes


def positive_time(text: str) -> float:
    """An argparse ``type``: a time cap, a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"Expected a finite number > 0, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"JSONL file the rows are appended to (default {DEFAULT_OUT}; with --smoke, "
        "rows are written only where --out says)",
    )
    parser.add_argument("--quick", action="store_true", help="s_q=1 points only, fast timing")
    parser.add_argument(
        "--strategies",
        default=",".join(STRATEGIES),
        help=f"kernelopt strategies, comma-separated ({', '.join(STRATEGIES)})",
    )
    parser.add_argument(
        "--peers",
        default=",".join(PEERS),
        help=f"peers, comma-separated ({', '.join(PEERS)}; '' for none)",
    )
    parser.add_argument("--modes", default="cold,graph", help="timer modes (cold, hot, graph)")
    parser.add_argument(
        "--max-time-ms",
        type=positive_time,
        default=None,
        help="sampling time cap per timing (default 600, --quick 250)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the random inputs; point i uses seed + i (0)",
    )
    parser.add_argument(
        "--kv",
        choices=("dense", "fp8"),
        default="dense",
        help="cache format: the inputs' dtype, or the 656-byte FP8 layout (split_kv, seesaw at "
        "<= 16 query rows and the torch peers read it)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny shapes on any device: checks the script, measures nothing",
    )
    parser.add_argument(
        "--workload",
        type=Path,
        default=None,
        metavar="PATH",
        help="write the trial matrix's shapes as a workload profile (markdown) to PATH and "
        "exit; needs no GPU",
    )
    args = parser.parse_args(argv)
    if args.workload is not None:
        refuse_unwritable_out(parser, args.workload, "--workload", writes="whole-file")
        points = trial_points(args.quick, args.smoke, args.kv)
        print(f"wrote {write_workload(points, args.workload)} ({len(points)} calls)")
        return 0

    strategies: list[Strategy] = []
    for name in filter(None, args.strategies.split(",")):
        if not is_strategy(name):
            parser.error(f"Expected strategies among {list(STRATEGIES)}, got {name!r}")
        strategies.append(name)
    peers = [p for p in args.peers.split(",") if p]
    for name in peers:
        if name not in PEERS:
            parser.error(f"Expected peers among {list(PEERS)}, got {name!r}")
    asked_modes = [m for m in args.modes.split(",") if m]
    if not asked_modes:
        parser.error(f"Expected modes among {list(MODES)}, got none")
    for name in asked_modes:
        if name not in MODES:
            parser.error(f"Expected modes among {list(MODES)}, got {name!r}")
    if args.quick and args.peers == ",".join(PEERS):
        peers = ["eager"]
    if args.kv == "fp8":
        skipped = [s for s in strategies if s not in FP8_STRATEGIES]
        skipped += [p for p in peers if p not in FP8_PEERS]
        if skipped:
            print(f"--kv fp8: skipping {', '.join(skipped)} (they read 16-bit caches only)")
        strategies = [s for s in strategies if s in FP8_STRATEGIES]
        peers = [p for p in peers if p in FP8_PEERS]
    # Smoke timings check the script: they never go into the results file unasked.
    out = args.out if args.out is not None or args.smoke else DEFAULT_OUT
    if out is not None:
        refuse_unwritable_out(parser, out, writes="bench-rows")
    if not args.smoke and no_cuda("mla_decode", instead="check the script on the CPU with --smoke"):
        return 2
    # --smoke has switched the Triton interpreter on (above), which runs kernels on host
    # tensors only: on a GPU machine too, it checks the script on the CPU.
    cuda = torch.cuda.is_available() and not args.smoke
    device = "cuda" if cuda else "cpu"
    dtype = torch.bfloat16 if cuda else torch.float32
    if not cuda:
        # Only --smoke gets here. seesaw is a Gluon kernel for Hopper, with no interpreter
        # path; of the peers, the CPU check runs torch eager only. Say what is left out, as
        # --kv fp8 does: a peer or strategy asked for by name must not vanish from the table.
        skipped = [s for s in strategies if s == "seesaw"]
        skipped += [p for p in peers if p != "eager"]
        if skipped:
            print(
                f"--smoke: skipping {', '.join(skipped)} (the CPU check runs the strategies "
                "Triton's interpreter can run and the torch eager peer only)"
            )
        strategies = [s for s in strategies if s != "seesaw"]
        peers = [p for p in peers if p == "eager"]
    modes = asked_modes if cuda else ["hot"]
    max_time_ms = args.max_time_ms or (250.0 if args.quick or args.smoke else 600.0)

    started = time.perf_counter()
    ceilings = None
    if cuda:
        ceilings = measure_ceilings(refresh=True)
        copy_bps, mm_fps = ceilings.copy_bytes_per_s, ceilings.matmul_flop_per_s
        print(
            f"ceilings: copy {copy_bps / 1e12:.2f} TB/s (read + write), "
            f"bf16 matmul {mm_fps / 1e12:.0f} TFLOP/s",
            flush=True,
        )

    makers = implementations(strategies, peers)
    rows: list[BenchRow] = []
    notes: list[str] = []
    table: list[TableRow] = []
    for i, point in enumerate(trial_points(args.quick, args.smoke, args.kv)):
        x = make_inputs(point, device, dtype, args.seed + i)
        flops = mla_decode_flops(point.seqlens, s_q=point.s_q, h_q=point.h_q)
        nbytes = point_bytes(point, x)
        line = None
        if ceilings is not None:
            line = Roofline(ceilings=ceilings, cost=Cost(flops=flops, bytes=nbytes))
        results, _, _ = run_point(point, x, makers, modes, max_time_ms, line, dtype, rows, notes)
        floor_us = line.floor("us") if line is not None else None
        table += [(r, flops, nbytes, floor_us) for r in results]
        print(f"[{time.perf_counter() - started:6.1f} s] {point.name} done", flush=True)
        del x
        if cuda:
            torch.cuda.empty_cache()

    if rows and out is not None:
        append_rows(out, with_scripts_commit(rows))
    for note in notes:
        print("note:", note)
    where = f"appended to {out}" if out is not None else "not written (--smoke without --out)"
    print(f"\n{len(rows)} rows {where}; {time.perf_counter() - started:.0f} s total")
    print(render_table(table, modes))
    return 0


def render_table(table: list[TableRow], modes: list[str]) -> str:
    head = [
        "point",
        "impl",
        *[f"µs {m}" for m in modes],
        "TFLOP/s",
        "GB/s",
        "floor µs",
        "% floor",
        "rel err",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r, flops, nbytes, floor_us in table:
        best = min(r.us.values()) if r.us else None
        cells = [r.point.name, r.impl]
        cells += [f"{r.us[m]:.1f}" if m in r.us else "—" for m in modes]
        cells += [
            f"{flops / (best * 1e6):.0f}" if best else "—",
            f"{nbytes / (best * 1e3):.0f}" if best else "—",
            f"{floor_us:.1f}" if floor_us else "—",
            f"{100 * floor_us / best:.0f} %" if best and floor_us else "—",
            f"{r.err:.2e}" if r.err is not None else "—",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
