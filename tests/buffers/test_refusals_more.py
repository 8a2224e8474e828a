"""Refusals before any work: an out= overlapping an input, a closed launcher given to
capture_graph, and a bool given as a stream."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from kernelopt._errors import DeviceError, InputError
from kernelopt.buffers import (
    BufferPool,
    BufferScope,
    PersistentLauncher,
    capture_graph,
    check_out,
    persistent_buffers,
    resolve_out,
)
from kernelopt.buffers._tensors import stream_id

F32 = torch.float32
OVERLAP = r"^Expected out that shares no memory with the kernel's inputs, got a tensor overlapping "
# An exact alias of an input also says how a kernel that updates it in place may take it.
HINT = r" \(in_place={} if the kernel updates it element by element\)$"


# out= sharing memory with an input


def make_double(pool: BufferPool) -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=pool)
    def double(
        buffers: BufferScope, x: torch.Tensor, out: torch.Tensor | None = None
    ) -> torch.Tensor:
        out = buffers.resolve_out(out, x.shape, x.dtype, x.device, inputs={"x": x})
        return torch.mul(x, 2.0, out=out)

    return double


def test_out_that_is_an_input_is_refused_naming_it() -> None:
    x = torch.arange(6, dtype=F32)
    with pytest.raises(InputError, match=OVERLAP + r"input 0" + HINT.format(0)):
        resolve_out(x, (6,), F32, "cpu", inputs=(x,))
    with pytest.raises(InputError, match=OVERLAP + r"input 'q'" + HINT.format("'q'")):
        check_out(x, (6,), F32, "cpu", inputs={"q": x})
    scope = BufferScope("overlap", pool=BufferPool())
    with pytest.raises(InputError, match=OVERLAP + r"input 1" + HINT.format(1)):
        scope.resolve_out(x, (6,), F32, "cpu", inputs=(torch.ones(6), x))
    assert scope.buffers() == []  # refused before the scope handed anything out


@pytest.mark.parametrize(
    ("out_slice", "input_slice"),
    [
        (slice(4, 8), slice(2, 6)),  # partial overlap, out starting later
        (slice(0, 4), slice(3, 9)),  # partial overlap of one element, input starting later
        (slice(2, 6), slice(0, 10)),  # out inside the input
    ],
    ids=["tail", "one-element", "inside"],
)
def test_out_overlapping_part_of_an_input_is_refused(out_slice: slice, input_slice: slice) -> None:
    buf = torch.zeros(10)
    out, x = buf[out_slice], buf[input_slice]
    assert out.data_ptr() != x.data_ptr()  # no address equality to catch it
    with pytest.raises(InputError, match=OVERLAP + r"input 0$"):
        resolve_out(out, out.shape, F32, "cpu", inputs=[x])


def test_a_strided_input_overlapping_out_is_refused() -> None:
    buf = torch.zeros(4, 4)
    column = buf[:, 0]  # elements 0, 4, 8, 12: its span covers rows 0 to 3
    out = buf[1]
    with pytest.raises(InputError, match=OVERLAP + r"input 'col'$"):
        resolve_out(out, (4,), F32, "cpu", inputs={"col": column})


def test_two_storages_over_one_memory_are_seen_to_overlap() -> None:
    # Two tensors made from one numpy array have storages of their own: only the byte
    # ranges tell that they share memory.
    memory = np.zeros(8, dtype=np.float32)
    x, out = torch.from_numpy(memory), torch.from_numpy(memory[4:])
    assert x.untyped_storage().data_ptr() != out.untyped_storage().data_ptr()
    with pytest.raises(InputError, match=OVERLAP + r"input 0$"):
        resolve_out(out, (4,), F32, "cpu", inputs=(x,))


def test_disjoint_slices_of_one_storage_and_other_values_are_accepted() -> None:
    buf = torch.zeros(12)
    out, x, y = buf[4:8], buf[:4], buf[8:]
    assert resolve_out(out, (4,), F32, "cpu", inputs=(x, y)) is out
    assert check_out(out, (4,), F32, "cpu", inputs={"x": x, "y": y}) is out
    # Values that are no tensors, tensors holding no bytes, and tensors on another
    # device hold none of out's memory.
    others = (3, None, "mode", buf[:0], torch.empty(12, device="meta"))
    assert resolve_out(out, (4,), F32, "cpu", inputs=others) is out


def test_a_launcher_refuses_out_aliasing_its_input_and_writes_nothing() -> None:
    double = make_double(BufferPool())
    x = torch.arange(4, dtype=F32)
    with pytest.raises(InputError, match=OVERLAP + r"input 'x'" + HINT.format("'x'")):
        double(x, out=x)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]  # nothing written
    buf = torch.arange(8, dtype=F32)
    with pytest.raises(InputError, match=OVERLAP + r"input 'x'$"):
        double(buf[:4], out=buf[2:6])
    assert buf.tolist() == [float(i) for i in range(8)]
    result = double(buf[:4], out=buf[4:])  # the other half: disjoint, accepted
    assert result.data_ptr() == buf[4:].data_ptr()
    assert buf.tolist() == [0.0, 1.0, 2.0, 3.0, 0.0, 2.0, 4.0, 6.0]


# capture_graph of a closed launcher


class Layer:
    def __init__(self) -> None:
        self.calls = 0

    @persistent_buffers(pool=BufferPool(), name="refusals_more.layer")
    def forward(buffers: BufferScope, self: Layer, x: torch.Tensor) -> torch.Tensor:  # noqa: N805
        self.calls += 1
        return buffers.resolve_out(None, x.shape, x.dtype, x.device).copy_(x)


def make_counted(calls: list[int]) -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=BufferPool())
    def counted(buffers: BufferScope, x: torch.Tensor, *, scale: float = 1.0) -> torch.Tensor:
        calls.append(1)
        return torch.mul(x, scale, out=buffers.resolve_out(None, x.shape, x.dtype, x.device))

    return counted


CLOSED = r"^launcher: Expected an open launcher to capture, got '.*counted', closed by close\(\)$"


@pytest.mark.parametrize("wrap", ["bare", "partial"])
def test_a_closed_launcher_is_refused_before_the_device_checks(wrap: str) -> None:
    calls: list[int] = []
    counted = make_counted(calls)
    counted.close()
    launcher = counted if wrap == "bare" else functools.partial(counted, scale=2.0)
    # CPU inputs, and no CUDA here: the closed launcher is what is reported.
    with pytest.raises(InputError, match=CLOSED):
        capture_graph(launcher, torch.ones(2))
    with pytest.raises(InputError, match=CLOSED):
        capture_graph(launcher)
    assert calls == []


def test_a_closed_method_is_refused_bound_or_in_a_partial() -> None:
    layer = Layer()
    layer.forward(torch.ones(2))
    Layer.forward.close()
    closed = r"^launcher: Expected an open launcher to capture, got 'refusals_more.layer', closed"
    for launcher in (layer.forward, functools.partial(layer.forward)):
        with pytest.raises(InputError, match=closed):
            capture_graph(launcher, torch.ones(2))
    assert layer.calls == 1


def test_an_open_launcher_still_gets_the_device_error_on_cpu() -> None:
    counted = make_counted([])
    with pytest.raises(DeviceError, match=r"^Expected static input 0 on a CUDA device, got cpu$"):
        capture_graph(counted, torch.ones(2))


@pytest.mark.gpu
def test_a_closed_launcher_is_not_warmed_up_on_cuda() -> None:
    calls: list[int] = []
    counted = make_counted(calls)
    counted.close()
    with pytest.raises(InputError, match=CLOSED):
        capture_graph(counted, torch.ones(2, device="cuda"))
    assert calls == []


# A bool is no stream


@pytest.mark.parametrize("flag", [True, False])
def test_a_bool_stream_is_refused(flag: bool) -> None:
    message = (
        r"^stream: Expected a stream id \(int\), a stream object with stream_id, or None, "
        rf"got {flag}$"
    )
    pool = BufferPool()
    with pytest.raises(InputError, match=message):
        pool.get((2,), F32, "cpu", stream=flag)
    with pytest.raises(InputError, match=message):
        pool.discard(((2,), F32, "cpu", flag, ""))
    with pytest.raises(InputError, match=message):
        BufferScope("flags", pool=pool).empty("ws", (2,), F32, "cpu", stream=flag)
    with pytest.raises(InputError, match=message):
        stream_id(torch.device("cpu"), flag)
    assert pool.buffers() == []


def test_int_streams_are_still_ids() -> None:
    pool = BufferPool()
    one = pool.get((2,), F32, "cpu", stream=1)
    assert pool.get((2,), F32, "cpu", stream=1) is one
    assert pool.get((2,), F32, "cpu", stream=0) is not one
    assert stream_id(torch.device("cpu"), 7) == 7
    assert [key.stream for key in (held.key for held in pool.buffers())] == [1, 0]


def test_one_input_tensor_is_checked_without_a_tuple() -> None:
    x = torch.zeros(2, 8)
    with pytest.raises(InputError, match="overlapping input 0"):
        check_out(x[0], (8,), torch.float32, "cpu", inputs=x)
    assert check_out(torch.empty(8), (8,), torch.float32, "cpu", inputs=x).shape == (8,)
