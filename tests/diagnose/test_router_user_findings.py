"""Findings on a MoE router log (softmax over experts, then top-k).

Online softmax is not needed where every softmax row the workload profile recorded fits one
block of the kernel (or :data:`~kernelopt.diagnose.presence.ROW_TILE_BOUND` elements where
its block is sized to the row or cannot be read); a bench JSONL row's own ``correctness``
verdict is read; times of different devices are listed apart in the repetition loop's
sentence; and a kept experiment's own FAST A/B verdict counts as its gain in item 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from kernelopt.diagnose import Diagnosis, Pathology, diagnose, diagnose_log
from kernelopt.diagnose.presence import ROW_TILE_BOUND, RecordedRows, needless_in
from kernelopt.experiments import Correctness, read_log
from kernelopt.experiments.log import ABVerdict
from kernelopt.experiments.records import Status

from .conftest import FakeEntry, exp, kernel, log_of

P = Pathology

# The router's gate kernel: the whole row of experts in one block sized to it, then a
# top-k loop that carries the row from one selection to the next (no loop over tiles, but
# a loop that carries values, so the kernel text alone does not show one tile a row).
ROUTER = '''"""MoE router: softmax over experts, then top-k."""
import torch
import triton
import triton.language as tl


@triton.jit
def gate_kernel(logits_ptr, w_ptr, id_ptr, E: tl.constexpr, BLOCK_E: tl.constexpr,
                K: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_E)
    mask = cols < E
    x = tl.load(logits_ptr + row * E + cols, mask=mask, other=-float("inf"))
    p = tl.exp(x - tl.max(x, 0))
    work = tl.where(mask, p / tl.sum(p, 0), -1.0)
    for i in tl.static_range(K):
        best = tl.max(work, 0)
        idx = tl.min(tl.where(work == best, cols, BLOCK_E), 0)
        tl.store(w_ptr + row * K + i, best)
        tl.store(id_ptr + row * K + i, idx)
        work = tl.where(cols == idx, -float("inf"), work)


def route(logits, k, *, out):
    T, E = logits.shape
    w, ids = out
    gate_kernel[(T,)](logits, w, ids, E=E, BLOCK_E=triton.next_power_of_2(E), K=k)
    return out
'''


def _profile(experts: tuple[int, ...]) -> str:
    """A workload profile of a top-k over ``experts`` per row (as `kernelopt inspect`
    writes one), three calls a row length."""
    shapes = "\n".join(
        f"| {i} | 3 | {100 / len(experts):.1f}% | - | - | n={n} rows=17 k=2 | "
        f"logits=[17,{n}]:float16 k=2 |"
        for i, n in enumerate(experts, 1)
    )
    values = "; ".join(f"{n}: {100 / len(experts):.1f}% [n=3]" for n in experts)
    calls = 3 * len(experts)
    low, high, distinct = min(experts), max(experts), len(experts)
    return f"""<!-- kernelopt workload-profile v1 -->
# Workload profile

- Source: calls.jsonl
- Format: jsonl
- Records: {calls}
- Skipped: 0
- Calls: {calls}
- Ops: topk

## Op: topk

- Signature: topk
- Family: any
- Calls: {calls}
- Timed calls: 0
- Time (us): -
- Distinct shapes: {len(experts)}
- Reduced axes: -
- Fixed axes: -
- Select: ["k", "n"]
- Lengths: -
- Padded: -

### Shapes

| # | Calls | % calls | Time (us) | % time | Axes | Args |
|---|---:|---:|---:|---:|---|---|
{shapes}

### Axes

| Axis | Kind | Source | Min | Median | Max | Mean | Time median | Distinct | Size-1 | Values |
|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|
| n | shape | logits.shape[-1] | {low} | {low} | {high} | {low} | - | {distinct} | 0% | {values} |
| k | scalar | k | 2 | 2 | 2 | 2 | - | 1 | 0% | 2: 100% [n={calls}] |

### Size-1 axes

- none

### Skew

- top-1 shape: {100 / len(experts):.1f}% of calls

### Shortcuts

- none found

## Notes

No notes.
"""


def _router_log(root: Path, experts: tuple[int, ...] | None) -> Diagnosis:
    """A router log under ``root`` (kernel router.py), with a workload profile of
    ``experts`` per row where given, diagnosed as a softmax."""
    (root / "experiments").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("# MoE router\n\nKernel: router.py\n", encoding="utf-8")
    (root / "router.py").write_text(ROUTER, encoding="utf-8")
    (root / "experiments" / "summary.md").write_text(
        "# Experiments Summary\n\n"
        "| Exp | Description | Latency | Unit | Correct | Status |\n"
        "|---|---|---|---|---|---|\n"
        "| 1 | eager baseline | 100.0 | us | PASS | BASELINE |\n"
        "| 2 | one gate kernel | 60.0 | us | PASS | KEPT |\n"
        "| 3 | hoist reciprocal | 59.5 | us | PASS | KEPT |\n",
        encoding="utf-8",
    )
    if experts is not None:
        (root / "experiments" / "workload_profile.md").write_text(
            _profile(experts), encoding="utf-8"
        )
    return diagnose(root, family="softmax")


def _line_of(text: str) -> int:
    """The 1-based line of ROUTER that holds ``text``."""
    return next(i for i, line in enumerate(ROUTER.splitlines(), 1) if text in line)


def _sentence(diagnosis: Diagnosis, pathology: Pathology) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is pathology)


def test_recorded_rows_within_one_tile_need_no_online_softmax(tmp_path: Path) -> None:
    diagnosis = _router_log(tmp_path / "log", (8, 64, 256))
    found = diagnosis.finding(P.MISSING_FUNDAMENTAL)
    assert found is None or "online-softmax" not in [a.catalog_id for a in found.actions]
    assert (
        "online-softmax: not needed, every row fits one tile: n is 8 to 256 in every call "
        "recorded (experiments/workload_profile.md), none longer than "
        f"{ROW_TILE_BOUND} elements, what one tile holds in registers; the kernel sizes its "
        f"block to the row (router.py:{_line_of('next_power_of_2')})."
    ) in _sentence(diagnosis, P.MISSING_FUNDAMENTAL)


def test_rows_longer_than_one_tile_or_unrecorded_still_miss_online_softmax(
    tmp_path: Path,
) -> None:
    for name, experts in (("long", (256, 32768)), ("none", None)):
        found = _router_log(tmp_path / name, experts).finding(P.MISSING_FUNDAMENTAL)
        assert found is not None, name
        assert "online-softmax" in [a.catalog_id for a in found.actions], name


def test_recorded_rows_are_held_to_the_smallest_block_the_kernel_sets() -> None:
    entry = FakeEntry("online-softmax", "Online Softmax")
    tiled = kernel("BLOCK_N = 128\nsoftmax_kernel[(n,)](x, y, n, BLOCK_N=BLOCK_N)\n")
    rows = [RecordedRows(op="softmax", axis="n", least=64.0, most=128.0, path="w.md")]
    assert needless_in(entry, [tiled], rows) == (
        "every row fits one tile: n is 64 to 128 in every call recorded (w.md), none longer "
        "than the kernel's smallest block, 128 (kernels/k.py:1)"
    )
    longer = [attrs.evolve(rows[0], most=512.0)]
    assert needless_in(entry, [tiled], longer) is None
    # Without a kernel to read, the bound stands in for its block.
    assert needless_in(entry, [], longer) is not None
    beyond = [attrs.evolve(rows[0], most=float(2 * ROW_TILE_BOUND))]
    assert needless_in(entry, [], beyond) is None


def test_a_bench_rows_correctness_verdict_is_read(tmp_path: Path) -> None:
    rows = [
        {"op": "router", "impl": "v1", "median": 9.0, "unit": "us", "correctness": "PASS"},
        {"op": "router", "impl": "v2", "median": 8.0, "unit": "us", "correctness": "FAIL"},
        {"op": "router", "impl": "v3", "median": 8.5, "unit": "us", "correctness": "UNKNOWN"},
    ]
    (tmp_path / "bench.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )
    log = read_log(tmp_path)
    assert [e.correctness for e in log.experiments] == [
        Correctness.PASS,
        Correctness.FAIL,
        Correctness.UNKNOWN,
    ]


def _mixed_devices() -> list:
    """Four attempts varying one knob: three timed on the host clock, one on a GPU."""
    cpu = [
        attrs.evolve(
            exp(n, latency, tags=("softmax",), description=f"softmax variant {n}"),
            gpu="cpu",
            status=Status.REVERTED,
        )
        for n, latency in ((2, 77712.0), (3, 66734.0), (4, 77834.5))
    ]
    gpu = attrs.evolve(
        exp(5, 8.1, tags=("softmax",), description="softmax variant 5"), gpu="NVIDIA H100"
    )
    base = attrs.evolve(exp(1, 8.2, status=Status.BASELINE), gpu="NVIDIA H100")
    return [base, *cpu, gpu]


def test_repetition_loop_lists_times_of_each_device_apart() -> None:
    diagnosis = diagnose_log(log_of(_mixed_devices()), catalog=None)
    sentence = _sentence(diagnosis, P.REPETITION_LOOP)
    assert (
        "(on cpu: 77712 us, 66734 us, 77834.5 us; on NVIDIA H100: 8.1 us; timed on different "
        "devices, compared only within one)"
    ) in sentence


def _plateau(speedup: float) -> list:
    """Three reverted attempts timed on the host clock, then exp 4, the first time on a
    GPU, kept with its own FAST A/B (no earlier headline to gain over), and two neutral
    attempts after it."""
    cpu = [
        attrs.evolve(exp(n, latency, status=Status.REVERTED, description=f"idea {n}"), gpu="cpu")
        for n, latency in ((1, 77000.0), (2, 66000.0), (3, 77800.0))
    ]
    kept = attrs.evolve(
        exp(4, 8.1, description="idea 4"),
        gpu="NVIDIA H100",
        verdict=ABVerdict.FAST,
        verdict_speedup=speedup,
        speedup=speedup,
    )
    after = [
        attrs.evolve(
            exp(n, 8.15, status=Status.NEUTRAL, description=f"idea {n}"), gpu="NVIDIA H100"
        )
        for n in (5, 6)
    ]
    return [*cpu, kept, *after]


def test_a_kept_fast_verdict_counts_as_its_gain() -> None:
    diagnosis = diagnose_log(log_of(_plateau(1.03)), catalog=None)
    found = diagnosis.finding(P.LOCAL_MINIMUM)
    assert found is not None
    assert "(largest single gain 2.9%)" in found.summary


def test_a_kept_fast_verdict_of_five_percent_ends_the_plateau() -> None:
    diagnosis = diagnose_log(log_of(_plateau(1.115)), catalog=None)
    assert diagnosis.finding(P.LOCAL_MINIMUM) is None
    assert _sentence(diagnosis, P.LOCAL_MINIMUM) == (
        "2 attempts since the best last moved by 5% or more (exp 4 moved it by 10.3% by its "
        "own A/B: FAST, speedup 1.115x): no plateau (needs 5)."
    )
    # The repetition loop looks for a loop among the same attempts: those after exp 4.
    assert _sentence(diagnosis, P.REPETITION_LOOP).startswith(
        "2 attempts since the best last moved by 5% or more"
    )
