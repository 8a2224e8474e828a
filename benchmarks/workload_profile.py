"""Benchmark the workload inspector: profiling a large JSONL trace, and the recorder's cost.

What it measures (on one CPU core; the process is pinned where the OS allows):

1. ``read_trace`` + ``profile_calls`` over a generated JSONL trace of ``--calls`` MLA decode
   calls (default 1 000 000), each with its own duration, drawn from a skewed mix of
   ``--shapes`` shapes: wall time, calls per second;
2. the peak Python memory of the same pass at two trace sizes (a tenth, and all of it),
   traced with ``tracemalloc`` (slower, so timed separately): it should not grow with the
   number of calls;
3. the recorder's overhead per call: a wrapped no-op taking four tensors and two scalars,
   minus the bare call, for ``time="none"``, ``time="host"`` and a values summary.

Usage::

    python benchmarks/workload_profile.py [--calls N] [--shapes K] [--out results.jsonl]

``--out`` appends one JSONL row with the figures.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from _common import append_json_lines, refuse_unwritable_out, scripts_commit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernelopt._cli_util import count_at_least_one
from kernelopt.workload import Recorder, profile_calls, read_trace

_LINE = (
    '{{"op": "mla_decode", "args": {{"q": {{"shape": [{b}, {s}, 128, 576], "dtype": "bfloat16"}}, '
    '"kv_cache": {{"shape": [{blocks}, 64, 1, 576], "dtype": "bfloat16"}}, '
    '"block_table": {{"shape": [{b}, {per}], "dtype": "int32"}}, '
    '"cache_seqlens": {{"shape": [{b}], "dtype": "int32"}}, "softmax_scale": 0.0417}}, '
    '"duration_us": {d}}}\n'
)


def write_trace(path: Path, calls: int, shapes: int, seed: int = 0) -> None:
    """A JSONL trace with a skewed shape mix (weights 1/rank) and a duration per call."""
    rng = random.Random(seed)
    mix = []
    for i in range(shapes):
        b = (32, 16, 8, 1, 64, 4, 2, 128)[i % 8]
        s = 1 if i % 3 else 16
        per = 64 >> (i // 8 % 4)
        mix.append(dict(b=b, s=s, per=per, blocks=b * per))
    weights = [1.0 / (i + 1) for i in range(shapes)]
    with open(path, "w", encoding="utf-8") as handle:
        chosen = rng.choices(range(shapes), weights=weights, k=calls)
        for i in chosen:
            handle.write(_LINE.format(d=f"{rng.uniform(5, 200):.3f}", **mix[i]))


def profile_once(path: Path) -> tuple[float, float, int]:
    """Seconds to read, seconds to profile, calls profiled."""
    start = time.perf_counter()
    trace = read_trace(path)
    read = time.perf_counter() - start
    start = time.perf_counter()
    profile = profile_calls(trace)
    built = time.perf_counter() - start
    return read, built, profile.calls


def peak_memory_mib(path: Path) -> float:
    tracemalloc.start()
    profile_calls(read_trace(path))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def recorder_overhead(calls: int, directory: Path) -> dict[str, float | str]:
    """Microseconds added per call by the recorder, per configuration.

    ``recorder_tensor_kind`` says what the calls passed: ``"torch"`` tensors, or ``"duck"``
    arrays where torch does not import.
    """
    # Torch tensors where torch imports, else arrays with only what the recorder reads.
    tensors: tuple[object, ...]
    try:
        import torch

        tensors = (
            torch.zeros(32, 1, 128, 576, dtype=torch.bfloat16),
            torch.zeros(2048, 64, 1, 576, dtype=torch.bfloat16),
            torch.zeros(32, 64, dtype=torch.int32),
            torch.full((32,), 4096, dtype=torch.int32),
        )
        kind = "torch"
    except ImportError:  # duck-typed arrays: what the recorder sees without torch

        class Array:
            def __init__(self, *shape: int) -> None:
                self.shape, self.dtype = shape, "int32"

            def min(self) -> int:
                return 4096

            max = min
            mean = min

        tensors = (Array(32, 1, 128, 576), Array(2048, 64, 1, 576), Array(32, 64), Array(32))
        kind = "duck"

    def bare(
        q: object,
        kv_cache: object,
        block_table: object,
        cache_seqlens: object,
        softmax_scale: float,
        causal: bool,
    ) -> None:
        return None

    def per_call(fn: Callable[..., object]) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(calls):
                fn(*tensors, 0.0417, causal=True)
            best = min(best, (time.perf_counter() - start) / calls * 1e6)
        return best

    base = per_call(bare)
    out: dict[str, float | str] = {"recorder_tensor_kind": kind, "bare_call_us": round(base, 3)}
    # (label, the recorder's time option, the arguments whose values it summarizes)
    for label, timing, values in (
        ("none", "none", ()),
        ("host", "host", ()),
        ("values", "none", ("cache_seqlens",)),
    ):
        path = directory / f"rec_{label}.jsonl"
        recorder = Recorder(path, append=False, time=timing, values=values)
        wrapped = recorder(bare, op="mla_decode")
        out[f"recorder_{label}_overhead_us"] = round(per_call(wrapped) - base, 3)
        recorder.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--calls",
        type=count_at_least_one,
        default=1_000_000,
        help="calls in the generated trace that is read and profiled (1000000)",
    )
    parser.add_argument(
        "--shapes",
        type=count_at_least_one,
        default=8,
        help="distinct call shapes the trace's calls are drawn from (8)",
    )
    parser.add_argument(
        "--recorder-calls",
        type=count_at_least_one,
        default=50_000,
        help="calls of the wrapped no-op timed per recorder setting (50000)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="JSONL file one JSON row of the figures is appended to (default: write no file)",
    )
    args = parser.parse_args()
    if args.out is not None:
        refuse_unwritable_out(parser, args.out, writes="json-lines")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        big, small = directory / "big.jsonl", directory / "small.jsonl"
        write_trace(big, args.calls, args.shapes)
        write_trace(small, max(args.calls // 10, 1), args.shapes)
        size_mib = big.stat().st_size / 2**20
        runs = [profile_once(big) for _ in range(3)]
        read_s, profile_s, calls = min(runs, key=lambda r: r[0] + r[1])
        total = read_s + profile_s
        peak_small, peak_big = peak_memory_mib(small), peak_memory_mib(big)
        recorder = recorder_overhead(args.recorder_calls, directory)
    row = {
        "bench": "workload_profile",
        "calls": calls,
        "shapes": args.shapes,
        "trace_mib": round(size_mib, 1),
        "read_s": round(read_s, 3),
        "profile_s": round(profile_s, 4),
        "total_s": round(total, 3),
        "calls_per_s": round(calls / total),
        "peak_mib_tenth": round(peak_small, 2),
        "peak_mib_full": round(peak_big, 2),
        **recorder,
        "python": platform.python_version(),
        "commit": scripts_commit(),
        "machine": platform.machine(),
        "cpu": platform.processor() or platform.machine(),
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    print(f"trace: {calls} calls, {args.shapes} shapes, {size_mib:.0f} MiB")
    print(
        f"read {read_s:.3f} s + profile {profile_s:.4f} s = {total:.3f} s "
        f"({calls / total / 1e6:.2f} M calls/s, best of 3, one core)"
    )
    print(
        f"peak Python memory: {peak_small:.2f} MiB at {max(args.calls // 10, 1)} calls, "
        f"{peak_big:.2f} MiB at {calls} calls"
    )
    print(
        f"recorder ({recorder['recorder_tensor_kind']} tensors), per call: bare "
        f"{recorder['bare_call_us']} us; overhead: "
        f"none {recorder['recorder_none_overhead_us']} us, "
        f"host timing {recorder['recorder_host_overhead_us']} us, "
        f"values summary {recorder['recorder_values_overhead_us']} us"
    )
    if args.out is not None:
        append_json_lines(args.out, [row])
        print(f"appended a row to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
