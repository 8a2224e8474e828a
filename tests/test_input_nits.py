"""Inputs the MLA cost model, the trial matrix, the decode entry points and step 7 of the
walk-through once took without a word: lengths as a set or a dict, an empty list of
points, outputs that require grad, and a devlog count of rows replaced in a new file."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import kernelopt.bench.mla as bench_mla
from kernelopt._errors import InputError
from kernelopt.bench import BenchRow, Ceilings, TrialPoint, mla_decode_cost, mla_trial_matrix
from kernelopt.kernels.mla import (
    MLADecodePlan,
    mla_decode_bytes,
    mla_decode_floor_us,
    mla_decode_flops,
    mla_decode_naive,
    mla_decode_split_kv,
)
from kernelopt.workflow import PerfRow, perf_rows_from_bench, read_performance, update_devlog

REPO = Path(__file__).resolve().parents[1]
STEP7 = REPO / "examples" / "mla_decode" / "07_learn.py"
CEILINGS = Ceilings(gpu="test", copy_bytes_per_s=1e12, matmul_flop_per_s=1e14)

# ------------------------------------------------------------------ lengths as a set or dict

# A set keeps one of the two 100s (228 keys counted as 128); a dict counts its keys.
UNORDERED = [
    pytest.param({100, 28}, id="set"),
    pytest.param(frozenset({100, 28}), id="frozenset"),
    pytest.param({100: 0, 28: 1}, id="dict"),
    pytest.param({100: 0, 28: 1}.keys(), id="dict-keys"),
]
ORDERED = [
    pytest.param([100, 28], id="list"),
    pytest.param((100, 28), id="tuple"),
    pytest.param(range(100, 102), id="range"),
    pytest.param(np.array([100, 28]), id="numpy"),
    pytest.param(torch.tensor([100, 28], dtype=torch.int32), id="tensor"),
]
REFUSED = r"seqlens: Expected an int or a sequence of ints \(a list, tuple, range, 1-D array"


@pytest.mark.parametrize("lengths", UNORDERED)
def test_the_cost_model_refuses_lengths_as_a_set_or_a_dict(lengths: Any) -> None:
    kind = type(lengths).__name__
    with pytest.raises(InputError, match=f"{REFUSED}.*got a {kind}$"):
        mla_decode_flops(lengths, s_q=1, h_q=16)
    with pytest.raises(InputError, match=f"{REFUSED}.*got a {kind}$"):
        mla_decode_bytes(lengths, batch=2, s_q=1, h_q=16, elt_bytes=2)
    with pytest.raises(InputError, match=f"{REFUSED}.*got a {kind}$"):
        mla_decode_floor_us(
            lengths, batch=2, s_q=1, h_q=16, elt_bytes=2, matmul_tflops=700.0, copy_tbps=4.2
        )
    with pytest.raises(InputError, match=f"{REFUSED}.*got a {kind}$"):
        mla_decode_cost(b=2, s_q=1, h_q=16, seqlens=lengths)


@pytest.mark.parametrize("lengths", ORDERED)
def test_the_cost_model_takes_every_ordered_kind_of_lengths(lengths: Any) -> None:
    total = sum(int(n) for n in lengths)
    assert mla_decode_flops(lengths, s_q=1, h_q=16) == mla_decode_flops(total, s_q=1, h_q=16)
    sizes = {"s_q": 1, "h_q": 16, "elt_bytes": 2}
    want = mla_decode_bytes(total, batch=2, **sizes)
    assert mla_decode_bytes(lengths, batch=2, **sizes) == want
    assert mla_decode_cost(b=2, s_q=1, h_q=16, seqlens=lengths).bytes == want


# ------------------------------------------------------------------ an empty list of points


@pytest.mark.parametrize("points", [[], ()], ids=["list", "tuple"])
def test_the_trial_matrix_refuses_no_points_before_the_kernels_or_the_device(
    monkeypatch: pytest.MonkeyPatch, points: list[TrialPoint]
) -> None:
    # Neither the kernels nor CUDA are there: the refusal must come first all the same.
    monkeypatch.setitem(sys.modules, "kernelopt.kernels.mla", None)
    monkeypatch.setattr(bench_mla, "cuda_available", lambda: False)
    with pytest.raises(
        InputError, match=r"^points: Expected at least one trial point \(None for the defaults\)"
    ):
        mla_trial_matrix(points=points, ceilings=CEILINGS)


# ------------------------------------------------------------------ outputs that require grad

SCALE = 192**-0.5


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(7)
    q = torch.randn(1, 1, 2, 576, generator=gen)
    kv = torch.randn(2, 16, 1, 576, generator=gen)
    return q, kv, torch.tensor([[1, 0]], dtype=torch.int32), torch.tensor([20], dtype=torch.int32)


def _planned(
    q: torch.Tensor, kv: torch.Tensor, table: torch.Tensor, lengths: torch.Tensor, **outputs: Any
) -> Any:
    plan = MLADecodePlan(
        lengths, s_q=1, h_q=2, page_size=16, softmax_scale=SCALE, dtype=torch.float32
    )
    return plan.run(q, kv, table, **outputs)


def _direct(call: Callable[..., Any]) -> Callable[..., Any]:
    def run(
        q: torch.Tensor, kv: torch.Tensor, table: torch.Tensor, lengths: torch.Tensor, **out: Any
    ) -> Any:
        return call(q, kv, table, lengths, softmax_scale=SCALE, **out)

    return run


ENTRY_POINTS = [
    pytest.param(_planned, id="plan-run"),
    pytest.param(_direct(mla_decode_naive), id="naive"),
    pytest.param(_direct(mla_decode_split_kv), id="split_kv"),
]


@pytest.mark.parametrize("grad_mode", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("which", ["out", "lse"])
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_an_output_that_requires_grad_is_refused_before_it_is_written(
    entry: Callable[..., Any], which: str, grad_mode: bool
) -> None:
    q, kv, table, lengths = _inputs()
    outputs = {
        "out": torch.full((1, 1, 2, 512), 7.0, requires_grad=which == "out"),
        "lse": torch.full((1, 2, 1), 7.0, requires_grad=which == "lse"),
    }
    # Refused under no_grad too: the kernels' stores bypass autograd's version counter.
    with (
        torch.set_grad_enabled(grad_mode),
        pytest.raises(
            InputError,
            match=f"^{which}: Expected an {which} tensor that does not require grad .*, "
            "got a tensor that requires grad$",
        ),
    ):
        entry(q, kv, table, lengths, **outputs)
    for tensor in outputs.values():
        assert bool((tensor.detach() == 7.0).all())  # nothing was written


# ------------------------------------------------------------------ step 7's devlog count


def _step7_function(name: str) -> Callable[..., Any]:
    """A function of the step-7 script, without running the script (which runs steps 1 to
    6 first on a fresh log)."""
    tree = ast.parse(STEP7.read_text(encoding="utf-8"))
    [node] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    namespace: dict[str, Any] = {
        "BenchRow": BenchRow,
        "Ceilings": Ceilings,
        "PerfRow": PerfRow,
        "perf_rows_from_bench": perf_rows_from_bench,
    }
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(STEP7), "exec"), namespace)
    function: Callable[..., Any] = namespace[name]
    return function


def _row(impl: str, t: int, median: float, gpu: str = "CPU (Triton interpreter)") -> BenchRow:
    return BenchRow(
        op="mla_decode",
        impl=impl,
        config={"b": 1, "s": 1, "t": t, "h": 16},
        median=median,
        gpu=gpu,
        timestamp="2026-12-06T10:00:00+00:00",
    )


def test_step7_counts_only_rows_a_new_devlog_holds(tmp_path: Path) -> None:
    versions = ("triton_naive", "triton_split_kv")
    # As in the log step 7 reads: step 2 timed naive and step 4 timed naive and split-KV
    # again at the same point; the later rows are the ones the devlog keeps.
    bench = [
        _row("triton_naive", 64, 900.0),
        _row("triton_split_kv_alloc", 64, 500.0),  # not a devlog version
        _row("triton_naive", 64, 880.0),
        _row("triton_split_kv", 64, 400.0),
        _row("triton_naive", 128, 1700.0),
        _row("triton_split_kv", 64, 390.0),
        _row("triton_naive", 64, 880.0, gpu="NVIDIA H200"),  # another GPU: another row
    ]
    every = tmp_path / "every" / "mla_decode.md"
    kept = tmp_path / "kept" / "mla_decode.md"
    chosen = [r for r in bench if r.impl in versions]
    update_devlog(every, perf_rows_from_bench(chosen))

    rows = _step7_function("devlog_rows")(bench, versions, None)
    update = update_devlog(kept, rows)
    assert update.created and update.replaced == ()
    assert len(update.added) == len(read_performance(kept)) == 4
    # The devlog ends as it did when every row was written.
    assert kept.read_text(encoding="utf-8") == every.read_text(encoding="utf-8")
    times = {(p.version, p.point, p.gpu): p.time for p in read_performance(kept)}
    assert times[("triton_naive", "b=1 s=1 t=64 h=16", "CPU (Triton interpreter)")] == 880.0
    assert times[("triton_split_kv", "b=1 s=1 t=64 h=16", "CPU (Triton interpreter)")] == 390.0


def test_step7_writes_and_counts_the_rows_devlog_rows_keeps() -> None:
    tree = ast.parse(STEP7.read_text(encoding="utf-8"))
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "update_devlog"
    ]
    assert len(calls) == 1
    rows = calls[0].args[1]
    assert isinstance(rows, ast.Call) and isinstance(rows.func, ast.Name)
    assert rows.func.id == "devlog_rows"
