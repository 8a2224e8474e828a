"""Check kernelopt.bench's timer against triton.testing.do_bench on the GPU, and itself.

Checks, each independent (one failing does not stop the others):

1. ``dobench-copy``: cold-mode median of a 1 GiB device copy (memory-bound) within 3 % of
   ``triton.testing.do_bench(..., return_mode="median")``, which also clears the L2
   before each call.
2. ``dobench-matmul``: the same for a bf16 8192³ matmul on random data (compute-bound).
3. ``repeat-copy`` / ``repeat-matmul``: two identical kernelopt runs within 2 %.
4. ``ceilings``: copy bandwidth (read + write) and bf16 matmul rate, measured afresh
   (into a temporary cache, the user's is left alone).
5. ``overhead``: per sample, the time an empty timed region reads on the device, and the
   host wall-clock cost of one sample in cold and hot mode.
6. ``graph-vs-events``: a tiny launch-bound kernel (1024-element add) timed with events
   and in graph mode, and against ``triton.testing.do_bench_cudagraph``.
7. ``nvml``: clocks and throttle reasons read before and after each measurement, and
   whether any moved.
8. ``plot``: the copy and matmul points on the measured roofline, as a PNG beside
   ``--out`` (where matplotlib is installed).

Usage (repository root)::

    PYTHONPATH=. python benchmarks/bench_verify.py --out bench_verify.jsonl

Writes one JSON row per measurement (kernelopt.bench.records.BenchRow) to ``--out``,
prints a short table last, and exits 1 when a check fails. Runs in about a minute.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from kernelopt._errors import KernelOptError
from kernelopt.bench import (
    BenchRow,
    Ceilings,
    Measurement,
    Roofline,
    Timer,
    append_rows,
    copy_cost,
    matmul_cost,
    measure_ceilings,
    plot_roofline,
    row_from_measurement,
)

COPY_BYTES = 1 << 30
MATMUL_N = 8192
TOLERANCE_DOBENCH = 0.03
TOLERANCE_REPEAT = 0.02


class Report:
    """Collects one line per check and the JSONL rows."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, str, str]] = []  # check, result, value, limit
        self.rows: list[BenchRow] = []
        self.failed = False

    def check(self, name: str, passed: bool | None, value: str, limit: str = "") -> None:
        verdict = {True: "PASS", False: "FAIL", None: "INFO"}[passed]
        self.failed |= passed is False
        self.lines.append((name, verdict, value, limit))
        print(f"[{verdict}] {name}: {value} {limit}".rstrip(), flush=True)

    def row(
        self,
        m: Measurement,
        *,
        op: str,
        impl: str,
        config: dict[str, Any] | None = None,
        metrics: dict[str, float] | None = None,
    ) -> None:
        self.rows.append(
            row_from_measurement(
                m, op=op, impl=impl, config=config or {}, metrics=metrics, keep_samples=True
            )
        )

    def guarded(self, name: str, step: Callable[[], None]) -> None:
        began = time.perf_counter()
        try:
            step()
        except Exception as error:
            traceback.print_exc()
            self.check(name, False, f"crashed: {type(error).__name__}: {error}"[:120])
        finally:
            torch.cuda.empty_cache()
        print(f"    ({name}: {time.perf_counter() - began:.1f} s)", flush=True)


def _dobench_us(fn: Callable[[], object]) -> float:
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")) * 1000.0


def _clock_text(m: Measurement) -> str:
    before, after = m.device, m.device_after
    if before is None or after is None:
        return "NVML unavailable"
    return (
        f"SM {before.sm_clock_mhz}->{after.sm_clock_mhz} MHz, "
        f"mem {before.mem_clock_mhz}->{after.mem_clock_mhz} MHz, "
        f"reasons {','.join(after.throttle_reasons) or 'none'}"
    )


def _against_dobench(
    report: Report, name: str, fn: Callable[[], object], nvml: list[Measurement]
) -> None:
    timer = Timer(mode="cold", max_time_ms=2000.0, rel_precision=0.002)
    first = timer.measure(fn, label=name)
    reference = _dobench_us(fn)
    second = timer.measure(fn, label=name)
    nvml += [first, second]
    diff = (first.median - reference) / reference
    report.check(
        f"dobench-{name}",
        abs(diff) <= TOLERANCE_DOBENCH,
        f"kernelopt {first.median:.2f} us vs do_bench {reference:.2f} us ({diff:+.2%})",
        f"<= {TOLERANCE_DOBENCH:.0%}",
    )
    repeat = abs(second.median - first.median) / first.median
    report.check(
        f"repeat-{name}",
        repeat <= TOLERANCE_REPEAT,
        f"{first.median:.2f} vs {second.median:.2f} us ({repeat:.2%}, n={first.n}/{second.n})",
        f"<= {TOLERANCE_REPEAT:.0%}",
    )
    for run, m in (("first", first), ("second", second)):
        report.row(
            m,
            op=name,
            impl=f"kernelopt-cold-{run}",
            metrics={"do_bench_us": reference, "diff_vs_do_bench_pct": 100.0 * diff},
        )


def check_copy(report: Report, nvml: list[Measurement]) -> None:
    source = torch.randint(0, 255, (COPY_BYTES,), dtype=torch.uint8, device="cuda")
    target = torch.empty_like(source)
    _against_dobench(report, "copy", lambda: target.copy_(source), nvml)


def check_matmul(report: Report, nvml: list[Measurement]) -> None:
    a = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(a)
    _against_dobench(report, "matmul", lambda: torch.matmul(a, b, out=out), nvml)


def check_ceilings(report: Report, found_ceilings: list[Ceilings]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        found = measure_ceilings(refresh=True, path=Path(scratch) / "ceilings.json")
    found_ceilings.append(found)
    # Leads to compare with: this project's H200 anchors measured 4.25-4.27 TB/s and
    # 686-694 TFLOP/s (shared/anchors/*.json); the device notes record ~4.3 TB/s and
    # 769-798 TFLOP/s on other H200 machines.
    report.check(
        "ceilings",
        None,
        f"copy {found.copy_tb_s:.3f} TB/s, matmul {found.matmul_tflop_s:.0f} TFLOP/s, "
        f"ridge {found.ridge:.0f} FLOP/B on {found.gpu}",
    )


def check_overhead(report: Report) -> None:
    x = torch.empty(1, device="cuda")
    for mode in ("cold", "hot"):
        timer = Timer(mode=mode, max_samples=400, min_samples=400, max_time_ms=5000.0)
        began = time.perf_counter()
        m = timer.measure(lambda: None, label=f"empty-{mode}")
        wall_us = (time.perf_counter() - began) * 1e6 / m.n
        report.check(
            f"overhead-{mode}",
            None,
            f"empty fn reads {m.median:.2f} us (event pair alone {m.overhead:.2f} us); "
            f"host cost {wall_us:.1f} us per sample incl. warm-up",
        )
        report.row(m, op="empty", impl=f"kernelopt-{mode}", metrics={"host_us_per_sample": wall_us})
    del x


def check_graph(report: Report, nvml: list[Measurement]) -> None:
    import triton.testing

    x = torch.zeros(1024, device="cuda")
    events = Timer(mode="hot", max_time_ms=1000.0).measure(lambda: x.add_(1.0), label="tiny-events")
    graph = Timer(mode="graph", max_time_ms=1000.0).measure(lambda: x.add_(1.0), label="tiny-graph")
    reference = (
        float(triton.testing.do_bench_cudagraph(lambda: x.add_(1.0), return_mode="median")) * 1000
    )
    nvml += [events, graph]
    overhead = 100.0 * max(0.0, events.median - graph.median) / events.median
    report.check(
        "graph-vs-events",
        graph.median < events.median,
        f"events {events.median:.2f} us, graph {graph.median:.2f} us "
        f"({graph.calls_per_sample} calls/replay), do_bench_cudagraph {reference:.2f} us; "
        f"launch overhead {overhead:.0f}%",
        "graph < events",
    )
    report.row(events, op="tiny-add", impl="kernelopt-events")
    report.row(
        graph,
        op="tiny-add",
        impl="kernelopt-graph",
        metrics={"do_bench_cudagraph_us": reference, "launch_overhead_pct": overhead},
    )


def check_nvml(report: Report, nvml: list[Measurement]) -> None:
    if not nvml:
        report.check("nvml", False, "no measurement to read clocks from")
        return
    read = [m for m in nvml if m.device is not None]
    moved = [m.label for m in nvml if m.clocks_moved]
    report.check(
        "nvml",
        bool(read),
        f"read on {len(read)}/{len(nvml)} runs; clocks moved in {moved or 'none'}; "
        f"last: {_clock_text(nvml[-1])}",
        "clocks readable",
    )
    for m in nvml:
        for note in m.notes:
            print(f"    {m.label}: {note}")


def check_plot(
    report: Report, nvml: list[Measurement], found: list[Ceilings], target: Path
) -> None:
    if not found:
        report.check("plot", False, "no ceilings measured")
        return
    costs = {"copy": copy_cost(COPY_BYTES), "matmul": matmul_cost(MATMUL_N, MATMUL_N, MATMUL_N)}
    points, labels = [], []
    for m in nvml:
        if m.label in costs and m.label not in labels:
            points.append(Roofline(ceilings=found[0], cost=costs[m.label]).place(m))
            labels.append(m.label)
    try:
        path = plot_roofline(points, target, labels=labels)
    except KernelOptError as error:  # matplotlib missing: say so, not a failure
        report.check("plot", None, str(error))
        return
    shares = ", ".join(
        f"{n} {p.floor_pct:.0f}% of floor" for n, p in zip(labels, points, strict=True)
    )
    report.check("plot", path.stat().st_size > 0, f"{path.name}: {shares}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("bench_verify.jsonl"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench_verify: needs a CUDA device", file=sys.stderr)
        return 2
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__}", flush=True)
    began = time.perf_counter()
    report = Report()
    nvml: list[Measurement] = []
    report.guarded("copy", lambda: check_copy(report, nvml))
    report.guarded("matmul", lambda: check_matmul(report, nvml))
    found: list[Ceilings] = []
    report.guarded("ceilings", lambda: check_ceilings(report, found))
    report.guarded("overhead", lambda: check_overhead(report))
    report.guarded("graph", lambda: check_graph(report, nvml))
    report.guarded("nvml", lambda: check_nvml(report, nvml))
    report.guarded("plot", lambda: check_plot(report, nvml, found, args.out.with_suffix(".png")))
    try:
        append_rows(args.out, report.rows)
        print(f"wrote {len(report.rows)} rows to {args.out}")
    except Exception as error:
        report.check("write-rows", False, f"{type(error).__name__}: {error}")
    print(f"\n== bench_verify ({time.perf_counter() - began:.0f} s)")
    width = max(len(line[0]) for line in report.lines)
    for name, verdict, value, limit in report.lines:
        print(f"{verdict:4} {name:<{width}}  {value} {limit}".rstrip())
    return 1 if report.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
