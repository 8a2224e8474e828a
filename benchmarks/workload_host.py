"""Host time of reading JSONL call traces and profiling them, at three trace sizes.

Generates traces of MLA decode calls as :class:`~kernelopt.workload.Recorder` writes them
(compact JSON, a duration per call), at ``--sizes`` lines (default 10 000, 100 000 and
1 000 000), twice: with a ``cache_seqlens`` values summary that changes on every call
(``Recorder(values=("cache_seqlens",))``), and without. Batch sizes and block-table widths
are drawn from a skewed mix of one shape per ``--lines-per-shape`` lines (1 000 000
lines: 50 000 shapes by default, of which about 46 000 are drawn at least once); a fifth of
the lines repeat an earlier line exactly, one line in a hundred is a ``softmax`` call of
its own signature, one in ten thousand is malformed.

For each trace it times, on one CPU core (pinned where the OS allows), best of
``--repeat``:

- ``read``: :func:`kernelopt.workload.read_trace` alone;
- ``profile``: :func:`kernelopt.workload.profile_calls` of that trace;
- ``inspect``: what ``kernelopt inspect TRACE`` does end to end (read, profile, shortcuts,
  the rendered report), in this process.

Run from the repository root::

    python benchmarks/workload_host.py --out /tmp/workload_host.jsonl

``--out`` appends one :class:`kernelopt.bench.BenchRow` per (size, summaries, stage): op
``workload_<stage>``, mode ``cpu``, unit ``s``; ``config`` holds the trace's lines,
distinct shapes, size in MiB and ``values`` (1 with summaries, else 0), ``metrics`` the
lines per second of the best wall time and ``cpu_s``, the least CPU seconds of the process
for one pass (on a shared machine, wall time also counts the time a pass waited for its
core).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from _common import host_time_row, refuse_unwritable_out, with_scripts_commit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernelopt._cli_util import count_at_least_one
from kernelopt.bench import BenchRow, append_rows
from kernelopt.workload import profile_calls, read_trace
from kernelopt.workload.report import render_report
from kernelopt.workload.shortcuts import find_shortcuts

T = TypeVar("T")

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
PAGE = 64
# Recorder layout: compact JSON, tensors as {"shape", "dtype"[, "values"]}.
_MLA = (
    '{{"op":"mla_decode","args":{{"q":{{"shape":[{b},1,128,576],"dtype":"bfloat16"}},'
    '"kv_cache":{{"shape":[16384,64,1,576],"dtype":"bfloat16"}},'
    '"block_table":{{"shape":[{b},{width}],"dtype":"int32"}},'
    '"cache_seqlens":{{"shape":[{b}],"dtype":"int32"{values}}},'
    '"softmax_scale":0.041666666666666664,"causal":true}},"duration_us":{duration}}}\n'
)
_SOFTMAX = (
    '{{"op":"softmax","args":{{"x":{{"shape":[{b},32000],"dtype":"float32"}},"dim":-1}},'
    '"duration_us":{duration}}}\n'
)
_BAD = (
    '{"op":"mla_decode","args":{"q":{"shape":[32,1,128,576],"dtype":"bfloat16"}',  # cut off
    '{"op":"mla_decode","args":{"q":{"shape":[32,-1],"dtype":"bfloat16"}},"duration_us":1.0}',
    '{"op":"mla_decode","args":{},"duration_us":"fast"}',
)


def _values(rng: random.Random, width: int) -> str:
    """A cache_seqlens summary whose longest length needs ``width`` pages."""
    high = rng.randint((width - 1) * PAGE + 1, width * PAGE)
    low = rng.randint(1, high)
    mean = round(rng.uniform(low, high), 3)
    std = round(min(rng.uniform(0, high - low), (high - low) / 2), 3)
    return f',"values":{{"min":{low},"max":{high},"mean":{mean},"std":{std}}}'


def trace_lines(lines: int, shapes: int, seed: int = 0, *, values: bool = True) -> list[str]:
    """The lines of a generated trace of about ``shapes`` distinct MLA decode shapes.

    Parameters
    ----------
    lines : int
        Lines in the trace.
    shapes : int
        Distinct (batch size, block-table width) pairs to draw from, skewed (weight
        1/rank), so the most frequent shapes take most calls.
    seed : int
        Seed of the generator: the same arguments give the same lines.
    values : bool
        Whether the calls carry a ``cache_seqlens`` values summary (the Recorder's
        ``values=("cache_seqlens",)``); without, the lines differ only in their shapes
        and durations.

    Returns
    -------
    list of str
        The lines, each ending in a newline.
    """
    rng = random.Random(seed)
    pool = sorted({(rng.randint(1, 256), rng.randint(1, 512)) for _ in range(shapes * 2)})
    rng.shuffle(pool)
    pool = pool[:shapes]
    chosen = rng.choices(pool, weights=[1.0 / (i + 1) for i in range(len(pool))], k=lines)
    out: list[str] = []
    for i, (b, width) in enumerate(chosen):
        if i % 10_000 == 9_999:
            out.append(_BAD[i // 10_000 % len(_BAD)] + "\n")
        elif i % 100 == 7:
            out.append(_SOFTMAX.format(b=b, duration=f"{rng.uniform(1, 20):.3f}"))
        elif out and rng.random() < 0.2:
            out.append(out[rng.randrange(max(0, len(out) - 1000), len(out))])
        else:
            duration = f"{rng.uniform(5, 400):.3f}"
            summary = _values(rng, width)  # drawn either way: the same shapes and durations
            out.append(
                _MLA.format(b=b, width=width, values=summary if values else "", duration=duration)
            )
    return out


def write_trace(path: Path, lines: int, shapes: int, *, values: bool = True) -> None:
    """Write :func:`trace_lines` to ``path``."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(trace_lines(lines, shapes, values=values))


def _inspect(path: Path) -> object:
    """What ``kernelopt inspect PATH`` computes and prints, without printing it."""
    profile = profile_calls(read_trace(path))
    return render_report(profile, find_shortcuts(profile), top=5)


def best_of(fn: Callable[[], T], repeat: int) -> tuple[list[float], float, T]:
    """Wall seconds of each of ``repeat`` (at least one) calls of ``fn``, the least CPU
    seconds of this process among them, and what the last call returned.

    The CPU time is kept beside the wall time: on a machine shared with other work, the
    wall time of a pass also counts the time it waited for the core.
    """
    samples, cpu = [], float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        cpu = min(cpu, time.process_time() - start_cpu)
        samples.append(time.perf_counter() - start)
    return samples, cpu, result


def cpu_row(
    samples: list[float], cpu_s: float, *, stage: str, config: dict[str, int | float]
) -> BenchRow:
    """A row of host-clock seconds, labelled as CPU time, with lines per second (of the
    best wall time) and the least CPU seconds of a pass."""
    rate = {"lines_per_s": config["lines"] / min(samples), "cpu_s": cpu_s}
    return host_time_row(samples, op=f"workload_{stage}", config=config, metrics=rate)


def time_size(
    directory: Path, lines: int, per_shape: int, repeat: int, *, values: bool
) -> list[BenchRow]:
    """The rows of one trace size: read, profile, and ``inspect`` end to end."""
    path = directory / f"trace_{lines}.jsonl"
    write_trace(path, lines, max(lines // per_shape, 1), values=values)
    read_s, read_cpu, trace = best_of(lambda: read_trace(path), repeat)
    profile_s, profile_cpu, _ = best_of(lambda: profile_calls(trace), repeat)
    inspect_s, inspect_cpu, _ = best_of(lambda: _inspect(path), repeat)
    config: dict[str, int | float] = {
        "lines": lines,
        "shapes": len(trace.groups),
        "trace_mib": round(path.stat().st_size / 2**20, 1),
        "values": int(values),
    }
    rows = []
    for stage, samples, cpu_s in (
        ("read", read_s, read_cpu),
        ("profile", profile_s, profile_cpu),
        ("inspect", inspect_s, inspect_cpu),
    ):
        rows.append(cpu_row(samples, cpu_s, stage=stage, config=config))
        print(
            f"{lines:>9} lines, {config['shapes']:>6} shapes, {config['trace_mib']:>6} MiB, "
            f"{'with' if values else 'no':>4} values: "
            f"{stage:<8} best {min(samples):8.3f} s wall, {cpu_s:8.3f} s CPU "
            f"({lines / min(samples) / 1e3:7.1f} k lines/s, best of {repeat})"
        )
    path.unlink()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=count_at_least_one,
        nargs="+",
        default=list(DEFAULT_SIZES),
        help="lines of each generated trace, one trace each (10000 100000 1000000)",
    )
    parser.add_argument(
        "--lines-per-shape",
        type=count_at_least_one,
        default=20,
        help="trace lines per distinct call shape in the mix (20)",
    )
    parser.add_argument(
        "--repeat",
        type=count_at_least_one,
        default=3,
        help="passes timed per trace and stage; the best is kept (3)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="JSONL file one BenchRow per (size, summaries, stage) is appended to "
        "(default: write no file)",
    )
    args = parser.parse_args(argv)
    if args.out is not None:
        refuse_unwritable_out(parser, args.out, writes="bench-rows")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rows: list[BenchRow] = []
    with tempfile.TemporaryDirectory() as tmp:
        for lines in args.sizes:
            for values in (True, False):
                rows += time_size(
                    Path(tmp), lines, args.lines_per_shape, args.repeat, values=values
                )
    if args.out is not None:
        append_rows(args.out, with_scripts_commit(rows))
        print(f"appended {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
