"""Host cost of one MLA decode ``run()``: what a caller pays without a CUDA graph.

Run on a GPU from the repository root::

    PYTHONPATH=. python benchmarks/mla_host_cost.py --out benchmarks/results/mla_host_cost.jsonl

Points: bf16, page 64, b = 32, 4096 keys, s_q = 1, h_q ∈ {128, 16} (the short calls, where
launch work can exceed the kernels' time). Strategies: ``seesaw`` (Hopper only), ``hopper``,
``split_kv``, each planned once into caller-owned outputs. Each is checked once against the
float64 reference (outputs poisoned with NaN first), then timed three ways:

- ``host``: ``time.perf_counter`` around each call, no synchronization (the queue is drained
  every 100 calls so it never fills): the Python and driver work of a call.
- ``hot``: ``kernelopt.bench.measure`` with CUDA events around each call, back to back:
  what an eager decode loop sees, host work included where it exceeds the GPU's.
- ``graph``: ``kernelopt.bench.measure`` of CUDA-graph replays: the kernels alone.

For the strategies that split the keys, the merge kernel's launch is also timed on its own
(``host``, impl ``<strategy>/merge-launch``): the price of one Triton launch with eleven
run-time arguments. Appends one ``kernelopt.bench.BenchRow`` per timing to ``--out`` and
prints one table last.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import torch
from _common import no_cuda, refuse_unwritable_out, with_scripts_commit

# The trial points and their inputs are the decode benchmark's (run as a script, this
# file's folder is on sys.path).
from mla_decode import SCALE, Point, make_inputs, make_plan, trial_points

from kernelopt.bench import BenchRow, append_rows, measure, row_from_measurement
from kernelopt.bench.measurement import Measurement
from kernelopt.bench.records import ConfigValue
from kernelopt.kernels.mla import MLADecodePlan, mla_decode_ref
from kernelopt.kernels.mla.api import Strategy
from kernelopt.kernels.mla.split_kv import (
    launch_merge,
    schedule_tensors,
    split_workspace,
    workspace_numel,
)

HOST_CALLS = 600
DRAIN_EVERY = 100


def host_samples(fn: Callable[[], object], calls: int = HOST_CALLS) -> list[float]:
    """Microseconds of host time per call of ``fn``, one sample a call."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    samples = []
    for i in range(calls):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e6)
        if i % DRAIN_EVERY == DRAIN_EVERY - 1:
            # A full launch queue would make a call wait for the GPU: drain it untimed.
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return samples


def host_row(
    samples: list[float], *, impl: str, config: dict[str, ConfigValue], err: float
) -> BenchRow:
    """A row of host-time samples: the library's statistics, labelled as host time."""
    # Host samples of a GPU call: summarized like any timing, then marked as what they are.
    timing = Measurement(
        samples=samples, mode="hot", cache="none", backend="cpu-perf-counter",
        gpu=torch.cuda.get_device_name(),
    )  # fmt: skip
    row = row_from_measurement(
        timing, op="mla_decode_host", impl=impl, config=config, metrics={"rel_err": err}
    )
    return attrs.evolve(row, mode="host", backend="host-perf-counter")


def strategies() -> list[Strategy]:
    hopper_gpu = torch.cuda.get_device_capability()[0] == 9
    found: list[Strategy] = ["seesaw"] if hopper_gpu else []
    return [*found, "hopper", "split_kv"]


def time_point(point: Point, rows: list[BenchRow], table: list[tuple[object, ...]]) -> None:
    """Check and time every strategy at ``point``; append rows and table lines."""
    x = make_inputs(point, "cuda", torch.bfloat16, seed=0)
    ref_out, ref_lse = mla_decode_ref(
        x["q"], x["kv"], x["block_table"], x["seqlens"], softmax_scale=SCALE
    )
    config: dict[str, ConfigValue] = point.config()
    for strategy in strategies():
        plan = make_plan(point, x, strategy)
        shape = (point.b, point.s_q, point.h_q)
        out = torch.full((*shape, 512), float("nan"), dtype=torch.bfloat16, device="cuda")
        lse = torch.full((point.b, point.h_q, point.s_q), float("nan"), device="cuda")
        call = functools.partial(plan.run, x["q"], x["kv"], x["block_table"], out=out, lse=lse)
        call()
        err = float((out.double() - ref_out).norm() / ref_out.norm())
        lse_err = float((lse.double() - ref_lse).abs().max())
        if not (err < 1e-2 and lse_err < 1e-3):  # NaN fails both comparisons
            raise SystemExit(f"{strategy} at {point.name}: rel err {err}, lse err {lse_err}")
        impl = f"kernelopt_{strategy}"
        samples = host_samples(call)
        rows.append(host_row(samples, impl=impl, config=config, err=err))
        table.append((point.name, impl, "host", rows[-1].median, rows[-1].p20, rows[-1].p80))
        for mode in ("hot", "graph"):
            m = measure(call, mode=mode, label=f"mla-{strategy}")
            rows.append(
                row_from_measurement(m, op="mla_decode_host", impl=impl, config=config,
                                     metrics={"rel_err": err})
            )  # fmt: skip
            table.append((point.name, impl, mode, m.median, m.p20, m.p80))
        merge = merge_launch(plan, out, lse)
        if merge is not None:
            merge_impl = f"{impl}/merge-launch"
            rows.append(host_row(host_samples(merge), impl=merge_impl, config=config, err=err))
            table.append(
                (point.name, merge_impl, "host", rows[-1].median, rows[-1].p20, rows[-1].p80)
            )


def merge_launch(
    plan: MLADecodePlan, out: torch.Tensor, lse: torch.Tensor
) -> Callable[[], None] | None:
    """The plan's merge kernel launch alone, or None when no sequence is split.

    It runs on a zeroed workspace of the plan's layout: its values do not matter here.
    """
    schedule = plan.schedule
    if schedule is None or not schedule.has_splits:
        return None
    rows = plan.s_q * plan.h_q
    slots = schedule.split_offsets[-1]
    buffer = torch.zeros(workspace_numel(slots, rows), dtype=torch.float32, device=out.device)
    o_part, lse_part = split_workspace(buffer, slots, rows)
    _, offsets = schedule_tensors(schedule, out.device)
    return functools.partial(launch_merge, o_part, lse_part, offsets, out, lse, config=plan.config)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("benchmarks/results/mla_host_cost.jsonl"),
        help="JSONL file one BenchRow per timing is appended to "
        "(default benchmarks/results/mla_host_cost.jsonl)",
    )
    args = parser.parse_args(argv)
    refuse_unwritable_out(parser, args.out, writes="bench-rows")
    if no_cuda("mla_host_cost", what="a CUDA device to time kernel launches on"):
        return 2
    rows: list[BenchRow] = []
    table: list[tuple[object, ...]] = []
    for point in trial_points(quick=True, smoke=False):  # b=32, s_q=1, h_q in {128, 16}
        time_point(point, rows, table)
    append_rows(args.out, with_scripts_commit(rows))
    print(f"{len(rows)} rows appended to {args.out}")
    print("| point | impl | timing | median µs | p20 | p80 |")
    print("|---|---|---|---|---|---|")
    for name, impl, mode, med, p20, p80 in table:
        print(f"| {name} | {impl} | {mode} | {med:.1f} | {p20:.1f} | {p80:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
