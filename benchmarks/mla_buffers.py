"""What persistent outputs save on the MLA decode launcher: ``run()`` that allocates ``out``
and ``lse`` on every call against ``run(out=, lse=)`` into buffers kept across calls.

Run on a GPU from the repository root::

    PYTHONPATH=. python benchmarks/mla_buffers.py --out benchmarks/results/mla_buffers.jsonl

Points: bf16, page 64, 4096 keys, s_q = 1, h_q = 16 (memory-bound, short), at b = 32 and at
b = 1 (launch-bound). Each variant is checked once against the float64 reference, then
timed with ``kernelopt.bench.measure`` in ``"hot"`` mode (CUDA events around each call:
what a model's decode loop sees, host work included) and in ``"graph"`` mode for the
persistent variant (the allocating one cannot be replayed without its allocations
becoming part of the graph). One table is printed last.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from _common import no_cuda, refuse_unwritable_out, with_scripts_commit

from kernelopt.bench import BenchRow, append_rows, measure, row_from_measurement
from kernelopt.bench.records import ConfigValue
from kernelopt.buffers import BufferPool
from kernelopt.kernels.mla import MLADecodePlan, mla_decode_ref

SCALE = 192**-0.5


def inputs(b: int, *, t: int = 4096, h_q: int = 16, page: int = 64) -> dict[str, torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(b)
    blocks = t // page
    kv = torch.randn(b * blocks, page, 1, 576, device="cuda", generator=gen).to(torch.bfloat16)
    order = torch.randperm(b * blocks, device="cuda", generator=gen).to(torch.int32)
    q = torch.randn(b, 1, h_q, 576, device="cuda", generator=gen).to(torch.bfloat16)
    seqlens = torch.full((b,), t, dtype=torch.int32, device="cuda")
    return {"q": q, "kv": kv, "bt": order.view(b, blocks), "seqlens": seqlens}


# One timing: (batch, outputs variant, timer mode, median, p20, p80 in µs).
TableRow = tuple[int, str, str, float, float, float]


def time_batch(b: int, table: list[TableRow], rows: list[BenchRow]) -> None:
    """Check and time both variants at batch ``b``; append to ``table`` and ``rows``."""
    x = inputs(b)
    plan = MLADecodePlan(
        x["seqlens"],
        s_q=1,
        h_q=16,
        page_size=64,
        softmax_scale=SCALE,
        dtype=torch.bfloat16,
        strategy="hopper",
    )
    pool = BufferPool()
    out = pool.get((b, 1, 16, 512), torch.bfloat16, "cuda", tag="out")
    lse = pool.get((b, 16, 1), torch.float32, "cuda", tag="lse")
    ref_out, _ = mla_decode_ref(x["q"], x["kv"], x["bt"], x["seqlens"], softmax_scale=SCALE)

    def allocating() -> tuple[torch.Tensor, torch.Tensor]:
        return plan.run(x["q"], x["kv"], x["bt"])

    def persistent() -> tuple[torch.Tensor, torch.Tensor]:
        return plan.run(x["q"], x["kv"], x["bt"], out=out, lse=lse)

    for name, fn in (("allocating", allocating), ("persistent", persistent)):
        got, _ = fn()
        err = float((got.double() - ref_out).norm() / ref_out.norm())
        assert err < 1e-2 and torch.isfinite(got).all(), f"{name}: rel err {err}"
        modes = ("hot", "graph") if name == "persistent" else ("hot",)
        for mode in modes:
            m = measure(fn, mode=mode, label=f"mla-{name}")
            config: dict[str, ConfigValue] = {
                "b": b,
                "s_q": 1,
                "h_q": 16,
                "t": 4096,
                "page": 64,
                "outputs": name,
            }
            rows.append(
                row_from_measurement(
                    m,
                    op="mla_decode_run",
                    impl=f"hopper-{name}",
                    config=config,
                    metrics={"rel_err": err},
                )
            )
            table.append((b, name, mode, m.median, m.p20, m.p80))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("benchmarks/results/mla_buffers.jsonl"),
        help="JSONL file one BenchRow per timing is appended to "
        "(default benchmarks/results/mla_buffers.jsonl)",
    )
    args = parser.parse_args()
    refuse_unwritable_out(parser, args.out, writes="bench-rows")
    if no_cuda("mla_buffers"):
        return 2
    table: list[TableRow] = []
    rows: list[BenchRow] = []
    for b in (32, 1):
        time_batch(b, table, rows)
    append_rows(args.out, with_scripts_commit(rows))
    print(f"{len(rows)} rows appended to {args.out}")
    print("| b | outputs | mode | median us | p20 | p80 |")
    print("|---|---|---|---|---|---|")
    for b, name, mode, med, p20, p80 in table:
        print(f"| {b} | {name} | {mode} | {med:.2f} | {p20:.2f} | {p80:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
