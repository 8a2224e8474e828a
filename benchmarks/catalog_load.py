"""How long loading the built-in catalog takes, cold (fresh process) and parse-only.

Loading happens once per process (``Catalog.builtin()`` caches it), so the number that
matters is a fresh interpreter's first call. Each repetition runs a new Python process
that imports kernelopt.catalog and loads the built-in tree, timing the load alone; a
second series parses the tree in-process without the cache. Target: under 100 ms.

Run: ``python benchmarks/catalog_load.py [--repeat 15] [--out rows.jsonl]``. Prints the
medians and appends one JSON row per series to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy
from _common import append_json_lines, refuse_unwritable_out, scripts_commit

from kernelopt._cli_util import count_at_least_one

_CHILD = (
    "import time, kernelopt.catalog as c; t = time.perf_counter(); cat = c.Catalog.builtin(); "
    "print((time.perf_counter() - t) * 1e3, len(cat))"
)


def cold_load_ms(repeat: int) -> tuple[list[float], int]:
    """Milliseconds of ``Catalog.builtin()`` in fresh processes, and the entry count."""
    samples, count = [], 0
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True
        )
        ms, n = out.stdout.split()
        samples.append(float(ms))
        count = int(n)
    return samples, count


def parse_only_ms(repeat: int) -> list[float]:
    """Milliseconds to load and validate the tree in this process, bypassing the cache."""
    from kernelopt.catalog import BUILTIN_ROOT, load_tree

    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        load_tree(BUILTIN_ROOT, strict=True, lock=False)
        samples.append((time.perf_counter() - start) * 1e3)
    return samples


def _row(series: str, samples: list[float], entries: int) -> dict[str, object]:
    ordered = sorted(samples)
    return {
        "op": "catalog_load",
        "series": series,
        "unit": "ms",
        "median": statistics.median(ordered),
        # Interpolated (numpy's linear method), as kernelopt.bench reports its own.
        "p20": float(numpy.quantile(ordered, 0.2)),
        "p80": float(numpy.quantile(ordered, 0.8)),
        "samples": len(ordered),
        "entries": entries,
        "target_ms": 100.0,
        "python": platform.python_version(),
        "commit": scripts_commit(),
        "machine": platform.machine(),
        "timestamp": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeat",
        type=count_at_least_one,
        default=15,
        help="fresh processes timed for the cold series, and parses for the parse-only one (15)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="JSONL file one JSON row per series is appended to (default: write no file)",
    )
    args = parser.parse_args(argv)
    if args.out is not None:
        refuse_unwritable_out(parser, args.out, writes="json-lines")
    cold, entries = cold_load_ms(args.repeat)
    warm = parse_only_ms(args.repeat)
    rows = [_row("cold_process", cold, entries), _row("parse_only", warm, entries)]
    for row in rows:
        print(
            f"{row['series']:>13}: median {row['median']:.1f} ms (p20 {row['p20']:.1f}, "
            f"p80 {row['p80']:.1f}) for {entries} entries; target < 100 ms"
        )
    if args.out is not None:
        append_json_lines(args.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
