"""What docs/buffers.md promises, met as a user meets it: key spellings, devices torch
cannot use, layouts, tolerances, a graph's ``buffers=``, a launcher retired by its own
definition run again, and a stale index on the checker's very first run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from kernelopt import DeviceError, InputError
from kernelopt.buffers import (
    BufferPool,
    BufferScope,
    PersistentLauncher,
    capture_graph,
    check_no_stale_reads,
    check_out,
    persistent_buffers,
)

F32 = torch.float32


def make_double(pool: BufferPool) -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=pool)
    def double(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        out = buffers.empty("out", x.shape, x.dtype, x.device)
        return torch.mul(x, 2.0, out=out)

    return double


# -- the pool's keys ----------------------------------------------------------------------


def test_membership_takes_the_spellings_discard_takes() -> None:
    pool = BufferPool()
    pool.get((2, 3), F32, "cpu", tag="lse")
    # discard drops the buffer under this spelling; `in` said it was not there.
    assert ((2, 3), F32, "cpu", 0, "lse") in pool
    assert ([2, 3], F32, torch.device("cpu"), None, "lse") in pool
    assert ((2, 3), F32, "cpu", 0, "other") not in pool
    assert pool.discard(((2, 3), F32, "cpu", 0, "lse"))
    assert ((2, 3), F32, "cpu", 0, "lse") not in pool


@pytest.mark.parametrize(
    "key",
    [
        "lse",
        ((2, 3), F32, "cpu", 0),
        ((2, 3), "float32", "cpu", 0, "lse"),
        ((2, 3), F32, "gpu9", 0, "lse"),
        ((2, 3), F32, "cpu", 0, ["lse"]),
        ([[2], 3], F32, "cpu", 0, "lse"),
    ],
)
def test_membership_of_what_is_no_key_is_false(key: object) -> None:
    pool = BufferPool()
    pool.get((2, 3), F32, "cpu", tag="lse")
    assert key not in pool  # no TypeError for an unhashable part, no InputError


# -- devices ------------------------------------------------------------------------------


def test_an_index_device_without_cuda_says_cuda_is_missing(why_no_cuda: str) -> None:
    # torch reads 0 as the accelerator's first device: the spelling is fine, the GPU is
    # missing. It was refused as "Expected a torch device such as 'cpu' or 'cuda:0'".
    pool = BufferPool()
    with pytest.raises(DeviceError) as caught:
        pool.get((2,), F32, 0)
    assert str(caught.value) == f"Expected a CUDA device for 0, got none: {why_no_cuda}"
    assert len(pool) == 0


def test_a_device_this_torch_cannot_allocate_on_is_a_device_error() -> None:
    # torch parses "fpga", and its torch.empty then failed with a NotImplementedError
    # that named neither the argument nor the fix.
    pool = BufferPool()
    with pytest.raises(DeviceError) as caught:
        pool.get((2,), F32, "fpga")
    assert str(caught.value) == (
        "Expected a device this torch build can allocate on for 'fpga', got none: "
        f"torch {torch.__version__} cannot allocate on fpga (NotImplementedError: Could not "
        "run 'aten::empty.memory_format' with arguments from the 'FPGA' backend)"
    )
    assert len(pool) == 0 and pool.stats.misses == 0
    with pytest.raises(DeviceError, match="cannot allocate on fpga"):
        check_out(torch.empty(2), (2,), F32, "fpga")


# -- out= ---------------------------------------------------------------------------------


def test_a_sparse_out_is_refused_for_its_layout() -> None:
    sparse = torch.eye(3).to_sparse()
    with pytest.raises(InputError) as caught:
        check_out(sparse, (3, 3), F32, "cpu")
    # Was "Expected out to be contiguous, got strides (0, 0)".
    assert str(caught.value) == "Expected out of layout torch.strided, got torch.sparse_coo"


def test_inputs_given_as_a_set_or_a_generator_are_read_once() -> None:
    # The page says what is refused (a str, 5); any other iterable is read as a sequence.
    buf = torch.zeros(8)
    x = buf[:4]
    for inputs in ({x}, (t for t in [x])):
        with pytest.raises(InputError, match="overlapping input 0"):
            check_out(buf[2:6], (4,), F32, "cpu", inputs=inputs)


# -- the stale-read checker ---------------------------------------------------------------


def test_tolerances_take_numpy_floats() -> None:
    double = make_double(BufferPool())
    report = check_no_stale_reads(
        double, lambda i: (torch.ones(3),), rtol=np.float32(1e-3), atol=np.float32(0.0)
    )
    assert report.ok


@pytest.mark.parametrize("tolerance", [np.float32("nan"), np.float32(-1.0), np.float64("inf")])
def test_numpy_tolerances_out_of_range_are_still_refused(tolerance: Any) -> None:
    double = make_double(BufferPool())
    with pytest.raises(InputError, match=r"^rtol: Expected a finite number >= 0, got "):
        check_no_stale_reads(double, lambda i: (torch.ones(3),), rtol=tolerance)


def test_wrong_buffers_for_the_checker_are_shown_in_a_bounded_message() -> None:
    pool = BufferPool()
    pool.get((64, 64), F32, "cpu", tag="ws")
    # pool.buffers() passed for the pool: its repr printed every tensor it holds.
    with pytest.raises(InputError) as caught:
        check_no_stale_reads(
            lambda: None,
            lambda i: (),
            buffers=pool.buffers(),  # type: ignore[arg-type]
        )
    message = str(caught.value)
    assert message.startswith(
        "buffers: Expected a BufferPool, a BufferScope or None, got [HeldBuffer(name='ws'"
    )
    assert len(message) < 150


def make_unwritten_index(pool: BufferPool) -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=pool)
    def gather_first(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        index = buffers.empty("index", (1,), torch.int64, x.device)
        return x[index].clone()  # bug: index is read, never written

    return gather_first


def test_a_stale_index_on_the_first_run_is_reported_not_raised() -> None:
    gather_first = make_unwritten_index(BufferPool())
    # What an earlier call (or the allocator) left in the buffer: an index out of range.
    gather_first.scope.empty("index", (1,), torch.int64, "cpu").fill_(1_000_000)
    # The checker's first run raised this IndexError raw, naming no buffer.
    report = check_no_stale_reads(gather_first, lambda i: (torch.arange(4.0),), strict=False)
    assert not report.ok
    (stale,) = report.stale
    assert stale.call == 0 and stale.error is not None
    assert stale.error.startswith("IndexError: index 1000000 is out of bounds")
    assert stale.culprits == ("index (1,) torch.int64",)
    assert report.buffers == ("index (1,) torch.int64",)


def test_a_first_run_that_fails_from_zeroed_buffers_too_is_raised_as_it_is() -> None:
    pool = BufferPool()

    @persistent_buffers(pool=pool)
    def needs_a_tensor(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        out = buffers.empty("out", (2,), F32, "cpu")
        return torch.add(out.zero_(), x.shape[0])  # a str has no shape

    needs_a_tensor.scope.empty("out", (2,), F32, "cpu")  # held: the zeroed rerun runs
    with pytest.raises(AttributeError, match="'str' object has no attribute 'shape'"):
        check_no_stale_reads(needs_a_tensor, lambda i: ("x",))


# -- graphs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("buffers", "shown"), [(5, "5"), ("pool", "'pool'"), ([1] * 100, "[1, 1, 1")]
)
def test_capture_graph_refuses_wrong_buffers_before_the_device_checks(
    buffers: object, shown: str
) -> None:
    double = make_double(BufferPool())
    # CPU inputs, and maybe no CUDA: the mistake in the call is named first. It was read
    # only after the capture, as an AttributeError.
    with pytest.raises(InputError) as caught:
        capture_graph(double, torch.ones(3), buffers=buffers)  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith(f"buffers: Expected a BufferPool, a BufferScope or None, got {shown}")
    assert len(message) < 150


# -- a launcher defined again under its name ----------------------------------------------


def define_named(pool: BufferPool) -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=pool, name="page.named")
    def named(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        out = buffers.empty("out", x.shape, x.dtype, x.device)
        return torch.mul(x, 2.0, out=out).clone()

    return named


def test_a_launcher_retired_by_its_definition_run_again_says_so() -> None:
    pool = BufferPool()
    old = define_named(pool)
    new = define_named(pool)  # a notebook cell run again: the name passes to `new`
    assert new(torch.ones(2)).tolist() == [2.0, 2.0]
    reason = "defining its launcher again under the same name; call the new one"
    # Was "a scope closed by close()", though nobody called close().
    with pytest.raises(InputError) as caught:
        old(torch.ones(2))
    assert str(caught.value) == (
        f"Expected an open scope 'page.named', got a scope closed by {reason}"
    )
    with pytest.raises(InputError) as captured:
        capture_graph(old, torch.ones(2))
    assert str(captured.value) == (
        f"launcher: Expected an open launcher to capture, got 'page.named', closed by {reason}"
    )


def test_close_keeps_its_own_words() -> None:
    double = make_double(BufferPool())
    double.close()
    with pytest.raises(InputError, match=r"got a scope closed by close\(\)$"):
        double(torch.ones(2))


# -- methods ------------------------------------------------------------------------------


def test_close_through_an_instance_closes_the_launcher_for_every_instance() -> None:
    pool = BufferPool()

    class Layer:
        @persistent_buffers(pool=pool, name="page.layer")
        def forward(buffers: BufferScope, self: Any, x: torch.Tensor) -> torch.Tensor:  # noqa: N805
            out = buffers.empty("out", x.shape, x.dtype, x.device)
            return torch.mul(x, 2.0, out=out).clone()

    one, two = Layer(), Layer()
    one.forward(torch.ones(2))
    two.forward(torch.ones(2))
    one.forward.clear()  # this instance's buffers only
    assert [h.key.tag for h in pool.buffers()] == ["page.layer[1]/out"]
    one.forward.close()  # the launcher: as Layer.forward.close()
    assert len(pool) == 0 and Layer.forward.scope.closed
    for layer in (one, two):
        with pytest.raises(InputError, match=r"^Expected an open scope 'page\.layer'"):
            layer.forward(torch.ones(2))
