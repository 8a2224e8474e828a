"""Buffers misused as users misuse them: held results, bad keys, lazy views as ``out``."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.buffers import (
    BufferPool,
    BufferScope,
    PersistentLauncher,
    check_no_stale_reads,
    check_out,
    persistent_buffers,
    resolve_out,
)
from kernelopt.buffers import scope as scope_module

F32 = torch.float32


def make_double(pool: BufferPool) -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=pool)
    def double(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        out = buffers.empty("out", x.shape, x.dtype, x.device)
        return torch.mul(x, 2.0, out=out)

    return double


# -- the stale-read checker and results the caller holds -------------------------------


def test_stale_check_leaves_a_result_the_caller_holds_untouched() -> None:
    double = make_double(BufferPool())
    kept = double(torch.ones(5))  # another shape than the checked calls: another buffer
    report = check_no_stale_reads(double, lambda i: (torch.ones(3),))
    assert report.ok
    assert kept.tolist() == [2.0] * 5  # neither zeroed nor poisoned
    assert report.buffers == ("out (3,) torch.float32",)


def test_stale_check_still_fills_a_returned_buffer_once_released() -> None:
    double = make_double(BufferPool())
    released = double(torch.ones(5))
    del released
    report = check_no_stale_reads(double, lambda i: (torch.ones(3),))
    assert report.buffers == ("out (5,) torch.float32", "out (3,) torch.float32")


def test_stale_check_leaves_an_instance_result_untouched() -> None:
    pool = BufferPool()

    class Layer:
        @persistent_buffers(pool=pool, name="layer")
        def forward(buffers: BufferScope, self: Any, x: torch.Tensor) -> torch.Tensor:  # noqa: N805
            out = buffers.empty("out", x.shape, x.dtype, x.device)
            return torch.mul(x, 3.0, out=out)

    layer = Layer()
    kept = layer.forward(torch.ones(4))
    assert check_no_stale_reads(layer.forward, lambda i: (torch.ones(2),)).ok
    assert kept.tolist() == [3.0] * 4


# -- keys spelled wrong ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (((2, 3), "float32", "cpu", 0, "lse"), "dtype: Expected a torch.dtype, got 'float32'"),
        (((2, 3), F32, "cpu", 0, 5), "tag: Expected tag as a str, got 5"),
        (((2, 3), F32, "cpu", 0, ["lse"]), "tag: Expected tag as a str, got ['lse']"),
    ],
)
def test_discard_refuses_a_key_get_would_refuse(key: tuple[Any, ...], message: str) -> None:
    pool = BufferPool()
    pool.get((2, 3), F32, "cpu", tag="lse")
    with pytest.raises(InputError) as info:
        pool.discard(key)
    assert str(info.value) == message
    assert pool.stats.buffers_held == 1  # nothing was dropped


def test_discard_still_takes_the_spellings_get_takes() -> None:
    pool = BufferPool()
    pool.get((2, 3), F32, "cpu", tag="lse")
    assert pool.discard(([2, 3], F32, "cpu", 0, "lse"))
    assert pool.stats.buffers_held == 0


@pytest.mark.parametrize("method", ["empty", "zeros", "tag"])
def test_scope_refuses_an_unhashable_buffer_name(method: str) -> None:
    scope = BufferScope("layer", pool=BufferPool())
    args: tuple[Any, ...] = (["out"],) if method == "tag" else (["out"], (2,), F32, "cpu")
    with pytest.raises(InputError) as info:
        getattr(scope, method)(*args)
    assert str(info.value) == "name: Expected a non-empty buffer name, got ['out']"


# -- out= that reads back transformed --------------------------------------------------


def test_check_out_refuses_a_conjugate_view() -> None:
    mine = torch.zeros(3, dtype=torch.complex64)
    with pytest.raises(InputError) as info:
        check_out(mine.conj(), (3,), torch.complex64, "cpu")
    assert str(info.value) == (
        "Expected out that is no lazy conjugate or negative view, got a conjugated view"
    )


def test_resolve_out_refuses_a_negative_view() -> None:
    mine = torch.zeros(3, dtype=torch.complex64)
    with pytest.raises(InputError, match="got a negated view"):
        resolve_out(torch._neg_view(mine), (3,), torch.complex64, "cpu", name="lse")


def test_check_out_takes_a_resolved_complex_tensor() -> None:
    mine = torch.zeros(3, dtype=torch.complex64).conj().resolve_conj()
    assert check_out(mine, (3,), torch.complex64, "cpu") is mine


# -- the returned-buffer check under concurrent pruning --------------------------------


def test_released_loan_pruned_meanwhile_does_not_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    double = make_double(BufferPool())
    first = double(torch.ones(3))
    del first
    scope = double.scope
    counted = scope_module.storage_refs

    def pruned_meanwhile(tensor: torch.Tensor) -> int:
        # Another thread's pruning drops the loan between the lookup and the release,
        # as _forget_evicted does for a buffer it saw evicted.
        scope._loans.clear()
        return counted(tensor)

    monkeypatch.setattr(scope_module, "storage_refs", pruned_meanwhile)
    second = double(torch.ones(3))
    assert second.tolist() == [2.0, 2.0, 2.0]
