"""What the workload inspector's gather → index_select shortcut saves on the GPU.

A gather whose index is the same along every axis but ``dim`` picks the same positions in
every row: ``index_select`` with one index vector does it. This times three ways of
making the same output, checked equal first: ``torch.gather`` with the index built by
``expand()`` (stride 0 on the other axes), ``torch.gather`` with the index materialized
(``repeat``/``contiguous``, as most code builds it), and ``torch.index_select``.

Run on a GPU from the repository root::

    PYTHONPATH=. python benchmarks/gather_index_select.py \\
        --out benchmarks/results/gather_index_select.jsonl

Each variant is timed in alternating rounds with ``kernelopt.bench.measure`` in
``"graph"`` mode; a row's floor is the bytes the selection needs (the selected values read
and written once, and one index vector) at the copy bandwidth measured in the same run.
One table is printed last: median µs, fraction of the floor, and time over index_select.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import torch
from _common import no_cuda, refuse_unwritable_out, with_scripts_commit

from kernelopt.bench import BenchRow, append_rows, measure, row_from_measurement
from kernelopt.bench.roofline import measure_ceilings

# (x shape, dim, k): a top-k style column pick, an embedding-style row pick, and a pick
# along the last axis of a 3-D activation.
CASES: tuple[tuple[tuple[int, ...], int, int], ...] = (
    ((8192, 4096), 1, 1024),
    ((65536, 512), 0, 4096),
    ((32, 128, 4096), 2, 256),
)
ROUNDS = 5


def variants(
    shape: tuple[int, ...], dim: int, k: int, gen: torch.Generator
) -> tuple[dict[str, Callable[[], torch.Tensor]], torch.Tensor, int]:
    """The three ways to pick ``k`` positions of ``dim`` from a bf16 ``x`` of ``shape``, on
    ``gen``'s device.

    Returns the variants, the expected output (``shape`` with ``k`` at ``dim``) and the
    floor's bytes.
    """
    x = torch.randn(*shape, device=gen.device, generator=gen).to(torch.bfloat16)
    v = torch.randperm(shape[dim], device=gen.device, generator=gen)[:k]
    index_shape = list(shape)
    index_shape[dim] = k
    view = [1] * len(shape)
    view[dim] = k
    expanded = v.view(view).expand(index_shape)
    materialized = expanded.contiguous()
    expected = torch.index_select(x, dim, v)
    fns = {
        "gather-expanded-index": lambda: torch.gather(x, dim, expanded),
        "gather-materialized-index": lambda: torch.gather(x, dim, materialized),
        "index_select": lambda: torch.index_select(x, dim, v),
    }
    needed = 2 * expected.numel() * expected.element_size() + v.numel() * v.element_size()
    return fns, expected, needed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("benchmarks/results/gather_index_select.jsonl"),
        help="JSONL file one BenchRow per variant is appended to "
        "(default benchmarks/results/gather_index_select.jsonl)",
    )
    args = parser.parse_args()
    refuse_unwritable_out(parser, args.out, writes="bench-rows")
    if no_cuda("gather_index_select"):
        return 2
    bandwidth = measure_ceilings(refresh=True).copy_bytes_per_s
    gen = torch.Generator(device="cuda").manual_seed(0)
    rows: list[BenchRow] = []
    table: list[tuple[str, str, float, float, float]] = []
    for shape, dim, k in CASES:
        fns, expected, needed = variants(shape, dim, k, gen)
        for name, fn in fns.items():
            if not torch.equal(fn(), expected):
                raise AssertionError(f"{name} on {shape} dim={dim} k={k} differs")
        floor_us = needed / bandwidth * 1e6
        medians: dict[str, list[float]] = {name: [] for name in fns}
        for round_ in range(ROUNDS):
            order = list(fns) if round_ % 2 == 0 else list(fns)[::-1]
            for name in order:
                m = measure(fns[name], mode="graph", max_time_ms=150, label=name)
                medians[name].append(m.median)
                config: dict[str, int | str] = {
                    "shape": "x".join(map(str, shape)),
                    "dim": dim,
                    "k": k,
                    "round": round_,
                }
                rows.append(
                    row_from_measurement(
                        m, op="select_positions", impl=name, config=config, floor=floor_us
                    )
                )
        mid = {name: sorted(t)[len(t) // 2] for name, t in medians.items()}
        for name, t in mid.items():
            case = f"{'x'.join(map(str, shape))} dim={dim} k={k}"
            table.append((case, name, t, floor_us / t, t / mid["index_select"]))
    append_rows(args.out, with_scripts_commit(rows))
    print(f"{len(rows)} rows appended to {args.out} (copy {bandwidth / 1e12:.3f} TB/s)")
    print("| case | impl | median us | of floor | over index_select |")
    print("|---|---|---|---|---|")
    for case, name, t, frac, ratio in table:
        print(f"| {case} | {name} | {t:.2f} | {frac:.0%} | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
