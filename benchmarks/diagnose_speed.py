"""How long ``kernelopt.diagnose`` takes on a 1 000-experiment log, on one CPU core.

Generates a log in the seed layout (CLAUDE.md; experiments/summary.md with 1 000 rows; an
``exp_N/result.md`` written by kernelopt for each, a plan every 10 experiments, a kernel
snapshot every 25; LESSONS.md, profile.md), then times ``diagnose(path)`` in fresh
processes pinned to one core: the time of the call itself, which includes reading every
file, loading the built-in catalog and running the nine detectors (interpreter start-up
and imports are not counted). A second series times a repeated call in one process (catalog
cached). Target: under 1 s cold.

Run: ``python benchmarks/diagnose_speed.py [--experiments 1000] [--repeat 5] [--out rows.jsonl]``.
Prints the medians and appends one JSON row per series to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy
from _common import append_json_lines, refuse_unwritable_out, scripts_commit

from kernelopt._cli_util import count_at_least_one
from kernelopt.experiments import ResultRecord, ResultRow, render_result, render_summary_row
from kernelopt.experiments.canonical import SUMMARY_COLUMNS

_KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def _kernel(x_ptr, out_ptr, n, BLOCK_N: tl.constexpr):
    o = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)


def run(x):
    out = torch.empty_like(x)
    _kernel[(triton.cdiv(x.numel(), {block}),)](x, out, x.numel(), BLOCK_N={block})
    return out
"""

_CHILD = (
    "import sys, time; from kernelopt.diagnose import diagnose; t = time.perf_counter(); "
    "d = diagnose(sys.argv[1]); first = time.perf_counter() - t; t = time.perf_counter(); "
    "diagnose(sys.argv[1]); print(first, time.perf_counter() - t, len(d.findings))"
)


def generate(root: Path, experiments: int) -> int:
    """Write a ``experiments``-long log under ``root``; return the number of files."""
    (root / "experiments").mkdir(parents=True, exist_ok=True)
    (root / "CLAUDE.md").write_text(
        "# CLAUDE.md — row-scale kernel\n\n- Kernel: `kernels/scale.py`\n\n## Rules\n- One change "
        "per experiment\n"
    )
    (root / "kernels").mkdir(exist_ok=True)
    (root / "kernels" / "scale.py").write_text(_KERNEL.replace("{block}", "1024"))
    rows = []
    files = 2
    for n in range(1, experiments + 1):
        block = 2 ** (5 + n % 6)
        # A slow drift down with noise: improvements early, a long plateau later.
        median = 100.0 * (0.5 + 0.5 * 0.97 ** min(n, 60)) * (1 + 0.01 * ((n * 7) % 5))
        record = ResultRecord(
            experiment=n,
            title=f"BLOCK_N={block} with num_warps={2 ** (n % 4)}",
            status="KEPT" if n % 3 else "REVERTED",
            correctness="PASS" if n % 11 else "FAIL",
            date=f"2026-01-{1 + n % 28:02d}",
            knobs={"BLOCK_N": str(block)},
            rows=(
                ResultRow(
                    point="n=1M", impl="triton", median=median, p20=median, p80=median, unit="us"
                ),
            ),
        )
        folder = root / "experiments" / f"exp_{n}"
        folder.mkdir(exist_ok=True)
        (folder / "result.md").write_text(render_result(record))
        files += 1
        if n % 10 == 0:
            (folder / "plan.md").write_text(
                f"# Plan\n\n## Next\n- try a persistent grid after exp {n}\n"
            )
            files += 1
        if n % 25 == 0:
            (folder / "scale.py").write_text(_KERNEL.replace("{block}", str(block)))
            files += 1
        rows.append(render_summary_row(record))
    header = (
        "# Experiments Summary\n\n| "
        + " | ".join(SUMMARY_COLUMNS)
        + " |\n|"
        + "---|" * len(SUMMARY_COLUMNS)
    )
    (root / "experiments" / "summary.md").write_text(header + "\n" + "\n".join(rows) + "\n")
    (root / "experiments" / "LESSONS.md").write_text(
        "# Lessons\n\n- [exp 3] BLOCK_N=256 is enough\n"
    )
    (root / "experiments" / "profile.md").write_text(
        "### Bottleneck: Memory-bound\n\n| Stage | DRAM% |\n|---|---|\n| k | 81 |\n"
    )
    return files + 3


def time_diagnose(root: Path, repeat: int) -> tuple[list[float], list[float], int]:
    """Seconds of the first and of a repeated ``diagnose`` call, per fresh one-core process."""
    cold, warm, findings = [], [], 0
    pin = ["taskset", "-c", "0"] if sys.platform.startswith("linux") and _has_taskset() else []
    for _ in range(repeat):
        out = subprocess.run(
            [*pin, sys.executable, "-c", _CHILD, str(root)],
            capture_output=True,
            text=True,
            check=True,
        )
        first, second, count = out.stdout.split()
        cold.append(float(first))
        warm.append(float(second))
        findings = int(count)
    return cold, warm, findings


def _has_taskset() -> bool:
    return any(
        os.access(os.path.join(p, "taskset"), os.X_OK)
        for p in os.environ.get("PATH", "").split(os.pathsep)
    )


def _row(
    series: str, samples: list[float], experiments: int, files: int, findings: int
) -> dict[str, object]:
    ordered = sorted(samples)
    return {
        "op": "diagnose",
        "series": series,
        "unit": "s",
        "median": statistics.median(ordered),
        # Interpolated (numpy's linear method), as kernelopt.bench reports its own.
        "p20": float(numpy.quantile(ordered, 0.2)),
        "p80": float(numpy.quantile(ordered, 0.8)),
        "samples": len(ordered),
        "experiments": experiments,
        "files": files,
        "findings": findings,
        "target_s": 1.0,
        "cpus": 1,
        "python": platform.python_version(),
        "commit": scripts_commit(),
        "machine": platform.machine(),
        "timestamp": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--experiments",
        type=count_at_least_one,
        default=1000,
        help="experiments in the generated log (1000)",
    )
    parser.add_argument(
        "--repeat",
        type=count_at_least_one,
        default=5,
        help="timed calls per series: fresh processes for the first call, calls in one "
        "process for the repeated one (5)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="JSONL file one JSON row per series is appended to (default: write no file)",
    )
    args = parser.parse_args(argv)
    if args.out is not None:
        refuse_unwritable_out(parser, args.out, writes="json-lines")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "log"
        files = generate(root, args.experiments)
        cold, warm, findings = time_diagnose(root, args.repeat)
    rows = [
        _row("first_call", cold, args.experiments, files, findings),
        _row("repeat_call", warm, args.experiments, files, findings),
    ]
    for row in rows:
        print(
            f"diagnose {row['experiments']} experiments ({row['files']} files), {row['series']}: "
            f"median {row['median']:.3f} s (p20 {row['p20']:.3f}, p80 {row['p80']:.3f}; "
            f"target < {row['target_s']:.0f} s on one core)"
        )
    if args.out is not None:
        append_json_lines(args.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
