"""Check kernelopt.bench's timer against triton.testing.do_bench on the GPU, and itself.

Checks, each independent (one failing does not stop the others):

1. ``dobench-copy``: cold-mode median of a 1 GiB device copy (memory-bound) within 3 % of
   ``triton.testing.do_bench(..., return_mode="median")``, which also clears the L2
   before each call.
2. ``dobench-matmul``: the same for a bf16 8192³ matmul on random data (compute-bound).
3. ``repeat-copy`` / ``repeat-matmul``: two identical kernelopt runs within 2 %.

   For 1-3 the GPU first runs the kernel for ``--heat-ms`` (under a power cap a heavy
   kernel is fast on a cool GPU and slower once the cap engages, so whichever tool ran
   first would otherwise read a different state), then ``--rounds`` rounds each take
   kernelopt run A, do_bench and kernelopt run B (the order of A and B flips every
   round). Medians over the rounds are compared: kernelopt (A and B) with do_bench,
   and A with B.
4. ``settle-matmul``: after ``--rest-s`` seconds idle (clocks back up, power average
   down), one default cold-mode ``measure`` of the matmul within 3 % of the sustained
   do_bench median of check 2: the timer's warm-up must reach the sustained state
   itself. Prints how long warm-up took, whether it settled, and NVML's power readings.
5. ``ceilings``: copy bandwidth (read + write) and bf16 matmul rate, measured afresh
   (into a temporary cache, the user's is left alone); the matmul rate within 3 % of
   the sustained rate do_bench measured in check 2.
6. ``overhead``: per sample, the time an empty timed region reads on the device, and the
   host wall-clock cost of one sample in cold and hot mode.
7. ``graph-vs-events``: a tiny launch-bound kernel (1024-element add) timed with events
   and in graph mode, and against ``triton.testing.do_bench_cudagraph``.
8. ``nvml``: clocks and throttle reasons read before and after each measurement, and
   whether any moved.
9. ``plot``: the matmul and tiny-add points on the measured roofline, as a PNG beside
   ``--out`` (where matplotlib is installed); the copy has no FLOPs and is named under
   the plot instead.

Usage (repository root)::

    PYTHONPATH=. python benchmarks/bench_verify.py --out bench_verify.jsonl

Writes one JSON row per measurement (kernelopt.bench.records.BenchRow) to ``--out``,
prints a short table last, and exits 1 when a check fails. Runs in about a minute.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from _common import no_cuda, refuse_unwritable_out, with_scripts_commit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import attrs
import torch

from kernelopt._cli_util import count_at_least_one
from kernelopt._errors import KernelOptError
from kernelopt.bench import (
    BenchRow,
    Ceilings,
    Measurement,
    Roofline,
    Timer,
    append_rows,
    copy_cost,
    elementwise_cost,
    matmul_cost,
    measure_ceilings,
    plot_roofline,
    roofline_layout,
    row_from_measurement,
)
from kernelopt.bench.records import ConfigValue

COPY_BYTES = 1 << 30
MATMUL_N = 8192
TINY_N = 1024
TOLERANCE_DOBENCH = 0.03
TOLERANCE_REPEAT = 0.02
TOLERANCE_SUSTAINED = 0.03


@attrs.frozen(kw_only=True)
class Settings:
    """The command line's knobs: rounds per comparison, heat before them, rest before settle."""

    rounds: int
    heat_ms: float
    rest_s: float


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
        config: dict[str, ConfigValue] | None = None,
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


def _heat(fn: Callable[[], object], ms: float) -> int:
    """Run ``fn`` back to back for ``ms`` of wall time; return the number of calls."""
    calls = 0
    began = time.perf_counter()
    while (time.perf_counter() - began) * 1000.0 < ms:
        for _ in range(10):
            fn()
        calls += 10
        torch.cuda.synchronize()
    return calls


def _power_text(m: Measurement) -> str:
    state = m.device
    if state is None:
        return "NVML unavailable"
    instant = "n/a" if state.power_instant_w is None else f"{state.power_instant_w:.0f} W"
    average = "n/a" if state.power_w is None else f"{state.power_w:.0f} W"
    limit = "n/a" if state.power_limit_w is None else f"{state.power_limit_w:.0f} W"
    reasons = ",".join(state.throttle_reasons) or "none"
    return (
        f"power instant {instant}, average {average}, limit {limit}; "
        f"SM {state.sm_clock_mhz} MHz; reasons {reasons}"
    )


def _warmup_text(m: Measurement) -> str:
    state = {True: "settled", False: "NOT settled", None: "settling off"}[m.settled]
    return f"warm-up {m.warmup_time_ms:.0f} ms ({state}, {m.warmup_calls} calls)"


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
    report: Report,
    name: str,
    fn: Callable[[], object],
    nvml: list[Measurement],
    settings: Settings,
) -> float:
    """Rounds of kernelopt A, do_bench, kernelopt B on a heated GPU; returns do_bench's median."""
    timer = Timer(mode="cold")
    calls = _heat(fn, settings.heat_ms)
    print(f"    {name}: heated with {calls} calls over {settings.heat_ms:.0f} ms", flush=True)
    runs_a: list[Measurement] = []
    runs_b: list[Measurement] = []
    references: list[float] = []
    for index in range(settings.rounds):
        # A and B swap places every round, so neither always runs right after do_bench.
        first, second = (runs_a, runs_b) if index % 2 == 0 else (runs_b, runs_a)
        first.append(timer.measure(fn, label=name))
        references.append(_dobench_us(fn))
        second.append(timer.measure(fn, label=name))
        print(
            f"    {name} round {index + 1}: kernelopt {first[-1].median:.2f} us "
            f"({_warmup_text(first[-1])}, n={first[-1].n}), do_bench {references[-1]:.2f} us, "
            f"kernelopt {second[-1].median:.2f} us ({_warmup_text(second[-1])}, "
            f"n={second[-1].n})",
            flush=True,
        )
    nvml += runs_a + runs_b
    ours = statistics.median(m.median for m in runs_a + runs_b)
    reference = statistics.median(references)
    diff = (ours - reference) / reference
    report.check(
        f"dobench-{name}",
        abs(diff) <= TOLERANCE_DOBENCH,
        f"kernelopt {ours:.2f} us vs do_bench {reference:.2f} us ({diff:+.2%}; medians of "
        f"{2 * settings.rounds} and {settings.rounds} runs)",
        f"<= {TOLERANCE_DOBENCH:.0%}",
    )
    median_a = statistics.median(m.median for m in runs_a)
    median_b = statistics.median(m.median for m in runs_b)
    repeat = abs(median_b - median_a) / median_a
    report.check(
        f"repeat-{name}",
        repeat <= TOLERANCE_REPEAT,
        f"A {median_a:.2f} vs B {median_b:.2f} us ({repeat:.2%}; medians of "
        f"{settings.rounds} runs each)",
        f"<= {TOLERANCE_REPEAT:.0%}",
    )
    for run, series in (("A", runs_a), ("B", runs_b)):
        for index, m in enumerate(series):
            report.row(
                m,
                op=name,
                impl=f"kernelopt-cold-{run}",
                config={"round": index + 1},
                metrics={
                    "do_bench_us": references[index],
                    "diff_vs_do_bench_pct": 100.0 * (m.median / references[index] - 1.0),
                    "warmup_time_ms": m.warmup_time_ms,
                    "settled": float(bool(m.settled)),
                },
            )
    return reference


def check_copy(report: Report, nvml: list[Measurement], settings: Settings) -> None:
    source = torch.randint(0, 255, (COPY_BYTES,), dtype=torch.uint8, device="cuda")
    target = torch.empty_like(source)
    _against_dobench(report, "copy", lambda: target.copy_(source), nvml, settings)


def check_matmul(
    report: Report, nvml: list[Measurement], settings: Settings, sustained: dict[str, float]
) -> None:
    a = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(a)
    sustained["matmul"] = _against_dobench(
        report, "matmul", lambda: torch.matmul(a, b, out=out), nvml, settings
    )


def check_settle(
    report: Report, nvml: list[Measurement], settings: Settings, sustained: dict[str, float]
) -> None:
    if "matmul" not in sustained:
        report.check("settle-matmul", False, "no sustained do_bench reference (matmul failed)")
        return
    a = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(a)
    torch.cuda.synchronize()
    time.sleep(settings.rest_s)  # idle: the power average falls and the clocks rise again
    m = Timer(mode="cold").measure(lambda: torch.matmul(a, b, out=out), label="matmul-rested")
    nvml.append(m)
    reference = sustained["matmul"]
    diff = (m.median - reference) / reference
    report.check(
        "settle-matmul",
        abs(diff) <= TOLERANCE_SUSTAINED,
        f"after {settings.rest_s:g} s idle: {m.median:.2f} us vs sustained do_bench "
        f"{reference:.2f} us ({diff:+.2%}); {_warmup_text(m)}; at sampling start "
        f"{_power_text(m)}",
        f"<= {TOLERANCE_SUSTAINED:.0%}",
    )
    report.row(
        m,
        op="matmul",
        impl="kernelopt-cold-rested",
        metrics={
            "do_bench_us": reference,
            "diff_vs_do_bench_pct": 100.0 * diff,
            "warmup_time_ms": m.warmup_time_ms,
            "settled": float(bool(m.settled)),
        },
    )


def check_ceilings(
    report: Report, found_ceilings: list[Ceilings], sustained: dict[str, float]
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        found = measure_ceilings(refresh=True, path=Path(scratch) / "ceilings.json")
    found_ceilings.append(found)
    text = (
        f"copy {found.copy_tb_s:.3f} TB/s, matmul {found.matmul_tflop_s:.0f} TFLOP/s, "
        f"ridge {found.ridge:.0f} FLOP/B on {found.gpu}"
    )
    # This project's H200 anchors measured 4.25-4.27 TB/s and 686-694 TFLOP/s with
    # do_bench (shared/anchors/*.json); the same run's sustained do_bench is the reference.
    if "matmul" not in sustained:
        report.check("ceilings", None, text + "; no sustained do_bench matmul to compare")
        return
    rate = 2.0 * MATMUL_N**3 / (sustained["matmul"] * 1e-6) / 1e12
    diff = found.matmul_tflop_s / rate - 1.0
    report.check(
        "ceilings",
        abs(diff) <= TOLERANCE_SUSTAINED,
        f"{text}; sustained do_bench matmul {rate:.0f} TFLOP/s ({diff:+.2%})",
        f"<= {TOLERANCE_SUSTAINED:.0%}",
    )


def check_overhead(report: Report) -> None:
    x = torch.empty(1, device="cuda")
    for mode in ("cold", "hot"):
        timer = Timer(mode=mode, max_samples=400, min_samples=400, max_time_ms=5000.0)
        began = time.perf_counter()
        m = timer.measure(lambda: None, label=f"empty-{mode}")
        wall_ms = (time.perf_counter() - began) * 1e3
        wall_us = (wall_ms - m.warmup_time_ms) * 1e3 / m.n
        report.check(
            f"overhead-{mode}",
            None,
            f"empty fn reads {m.median:.2f} us (event pair alone {m.overhead:.2f} us); "
            f"host cost {wall_us:.1f} us per sample after a {_warmup_text(m)}",
        )
        report.row(
            m,
            op="empty",
            impl=f"kernelopt-{mode}",
            metrics={"host_us_per_sample": wall_us, "warmup_time_ms": m.warmup_time_ms},
        )
    del x


def check_graph(report: Report, nvml: list[Measurement]) -> None:
    import triton.testing

    x = torch.zeros(TINY_N, device="cuda")
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
    costs = {
        "copy": copy_cost(COPY_BYTES),
        "matmul": matmul_cost(MATMUL_N, MATMUL_N, MATMUL_N),
        "tiny-events": elementwise_cost(TINY_N, inputs=1, outputs=1, elt_bytes=4),
    }
    points, labels = [], []
    for m in nvml:
        if m.label in costs and m.label not in labels:
            points.append(Roofline(ceilings=found[0], cost=costs[m.label]).place(m))
            labels.append(m.label)
    layout = roofline_layout(points, labels=labels)
    try:
        path = plot_roofline(points, target, labels=labels)
    except KernelOptError as error:  # matplotlib missing: say so, not a failure
        report.check("plot", None, str(error))
        return
    drawn = ", ".join(label for _, _, label in layout.drawn)
    skipped = f"; named under it: {'; '.join(layout.skipped)}" if layout.skipped else ""
    report.check("plot", path.stat().st_size > 0, f"{path.name}: {drawn}{skipped}")


def non_negative_time(text: str) -> float:
    """An argparse ``type``: a duration, a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"Expected a finite number >= 0, got {text!r}")
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("bench_verify.jsonl"),
        help="JSONL file one BenchRow per measurement is appended to, with a roofline PNG "
        "of the same name beside it (default bench_verify.jsonl)",
    )
    parser.add_argument(
        "--rounds", type=count_at_least_one, default=5, help="rounds per comparison (5)"
    )
    parser.add_argument(
        "--heat-ms",
        type=non_negative_time,
        default=2000.0,
        help="kernel run before each comparison (2000)",
    )
    parser.add_argument(
        "--rest-s", type=non_negative_time, default=5.0, help="idle time before settle-matmul (5)"
    )
    args = parser.parse_args()
    refuse_unwritable_out(parser, args.out, writes="bench-rows")
    refuse_unwritable_out(parser, args.out.with_suffix(".png"), writes="whole-file")
    settings = Settings(rounds=args.rounds, heat_ms=args.heat_ms, rest_s=args.rest_s)
    if no_cuda("bench_verify"):
        return 2
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__}", flush=True)
    began = time.perf_counter()
    report = Report()
    nvml: list[Measurement] = []
    sustained: dict[str, float] = {}
    report.guarded("copy", lambda: check_copy(report, nvml, settings))
    report.guarded("matmul", lambda: check_matmul(report, nvml, settings, sustained))
    report.guarded("settle", lambda: check_settle(report, nvml, settings, sustained))
    found: list[Ceilings] = []
    report.guarded("ceilings", lambda: check_ceilings(report, found, sustained))
    report.guarded("overhead", lambda: check_overhead(report))
    report.guarded("graph", lambda: check_graph(report, nvml))
    report.guarded("nvml", lambda: check_nvml(report, nvml))
    report.guarded("plot", lambda: check_plot(report, nvml, found, args.out.with_suffix(".png")))
    try:
        append_rows(args.out, with_scripts_commit(report.rows))
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
