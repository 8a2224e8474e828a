"""capture_graph: clear errors without CUDA; capture, replay and stable addresses on CUDA."""

from __future__ import annotations

import functools

import pytest
import torch

from kernelopt._errors import DeviceError, InputError, KernelOptError
from kernelopt.buffers import (
    BufferPool,
    BufferScope,
    CapturedGraph,
    PersistentLauncher,
    capture_graph,
    check_no_stale_reads,
    persistent_buffers,
)

F32 = torch.float32
# The graph and the eager reference may pick different cuBLAS algorithms.
TOL = {"rtol": 1e-4, "atol": 1e-4}


def make_affine(pool: BufferPool) -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=pool)
    def affine(buffers: BufferScope, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        ws = buffers.empty("ws", (x.shape[0], w.shape[1]), x.dtype, x.device)
        torch.matmul(x, w, out=ws)
        out = buffers.resolve_out(None, ws.shape, x.dtype, x.device)
        return torch.clamp(ws, min=0.0, out=out)

    return affine


def test_cpu_inputs_are_refused_with_a_device_error() -> None:
    affine = make_affine(BufferPool())
    with pytest.raises(DeviceError, match=r"^Expected static input 0 on a CUDA device, got cpu$"):
        capture_graph(affine, torch.ones(2, 3), torch.ones(3, 4))


def test_no_cuda_is_a_device_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError, match="Expected a CUDA device for graph capture, got none"):
        capture_graph(lambda: None)


@pytest.mark.gpu
def test_cuda_buffers_keep_their_address_per_key_and_stream() -> None:
    scope = BufferScope("k", pool=BufferPool())
    a = scope.empty("ws", (64, 64), torch.bfloat16, "cuda")
    assert a.device.index == torch.cuda.current_device()
    for _ in range(10):
        assert scope.empty("ws", (64, 64), torch.bfloat16, "cuda").data_ptr() == a.data_ptr()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        b = scope.empty("ws", (64, 64), torch.bfloat16, "cuda")
    assert b.data_ptr() != a.data_ptr()  # another stream never shares a buffer
    assert scope.empty("ws", (64, 64), torch.bfloat16, "cuda", stream=side) is b


@pytest.mark.gpu
def test_capture_and_replay_on_new_inputs_match_eager() -> None:
    affine = make_affine(BufferPool())
    x, w = torch.randn(8, 16, device="cuda"), torch.randn(16, 32, device="cuda")
    graph = capture_graph(affine, x, w)
    outputs = []
    for _ in range(3):
        nx, nw = torch.randn_like(x), torch.randn_like(w)
        got = graph(nx, nw)
        outputs.append(got)
        torch.testing.assert_close(got, torch.relu(nx @ nw), **TOL)
        expected_eager = affine(nx, nw).clone()
        torch.testing.assert_close(got, expected_eager, **TOL)
    assert all(o is graph.static_outputs for o in outputs)  # replays rewrite one tensor
    affine.clear()  # eager buffers go; the graph's own buffers stay
    nx = torch.randn_like(x)
    torch.testing.assert_close(graph(nx, w), torch.relu(nx @ w), **TOL)
    graph.static_inputs[0].copy_(x)  # type: ignore[union-attr]
    torch.testing.assert_close(graph.replay(), torch.relu(x @ w), **TOL)


@pytest.mark.gpu
def test_replay_inputs_are_checked() -> None:
    affine = make_affine(BufferPool())
    x, w = torch.randn(4, 8, device="cuda"), torch.randn(8, 8, device="cuda")
    graph = capture_graph(affine, x, w)
    with pytest.raises(InputError, match=r"Expected 2 inputs, as captured, got 1"):
        graph(x)
    with pytest.raises(InputError, match=r"Expected input 0 of shape \(4, 8\), got \(5, 8\)"):
        graph(torch.randn(5, 8, device="cuda"), w)
    with pytest.raises(
        InputError, match=r"Expected input 1 of dtype torch\.float32, got torch\.float16"
    ):
        graph(x, w.half())
    scaled = capture_graph(functools.partial(torch.mul), x, 3.0)
    with pytest.raises(
        InputError, match=r"Expected input 1 equal to the captured value 3\.0, got 4\.0"
    ):
        scaled(x, 4.0)
    with pytest.raises(InputError, match="warmup: Expected warmup as an int >= 1, got 0"):
        capture_graph(affine, x, w, warmup=0)


@pytest.mark.gpu
def test_a_new_pool_buffer_during_capture_is_refused() -> None:
    pool = BufferPool()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with pytest.raises(KernelOptError, match="before CUDA graph capture"):  # noqa: SIM117
        with torch.cuda.graph(graph, stream=stream):
            pool.get((4,), F32, "cuda", tag="late")


@pytest.mark.gpu
def test_plain_callables_keep_their_pool_buffers_alive() -> None:
    pool = BufferPool()

    def add_one(x: torch.Tensor) -> torch.Tensor:
        out = pool.get(x.shape, x.dtype, x.device, tag="out")
        return torch.add(x, 1.0, out=out)

    x = torch.randn(1024, device="cuda")
    graph = capture_graph(add_one, x, buffers=pool)
    pool.clear()
    pool.get((1024,), F32, "cuda", tag="other").fill_(-5.0)  # would reuse freed memory
    nx = torch.randn_like(x)
    torch.testing.assert_close(graph(nx), nx + 1.0)


@pytest.mark.gpu
def test_stale_read_checker_on_cuda() -> None:
    @persistent_buffers(pool=BufferPool())
    def leaky(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        acc = buffers.empty("acc", (x.shape[0],), x.dtype, x.device)
        acc += x.sum(dim=1)
        return acc.clone()

    def make(i: int) -> tuple[torch.Tensor]:
        return (torch.randn(8, 8, device="cuda"),)

    report = check_no_stale_reads(leaky, make, strict=False)
    assert report.stale[0].culprits == ("acc (8,) torch.float32",)


class _CountingGraph:
    """Stands in for a torch.cuda.CUDAGraph: input handling runs without a device."""

    def __init__(self) -> None:
        self.replays = 0

    def replay(self) -> None:
        self.replays += 1


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (torch.ones(3), r"Expected input 1 of shape \(2, 2\), got \(3,\)"),
        (torch.ones(2, 2, dtype=torch.float16), r"Expected input 1 of dtype torch\.float32"),
        ("w", "Expected input 1 to be a tensor, got str"),
    ],
)
def test_a_refused_input_leaves_every_static_input_as_it_was(bad: object, message: str) -> None:
    x, w = torch.zeros(2, 2), torch.zeros(2, 2)
    stub = _CountingGraph()
    graph = CapturedGraph(
        graph=stub,  # type: ignore[arg-type]
        static_inputs=(x, w, 3),
        static_outputs=x,
        keep_alive=(),
    )
    with pytest.raises(InputError, match=message):
        graph(torch.ones(2, 2), bad, 3)
    with pytest.raises(InputError, match="Expected input 2 equal to the captured value 3"):
        graph(torch.ones(2, 2), torch.ones(2, 2), 4)
    # A tensor where a number was captured: not torch's "ambiguous truth value" error.
    with pytest.raises(InputError, match=r"Expected input 2 equal to the captured value 3, got t"):
        graph(torch.ones(2, 2), torch.ones(2, 2), torch.tensor([3, 3]))
    assert torch.equal(x, torch.zeros(2, 2)) and torch.equal(w, torch.zeros(2, 2))
    assert stub.replays == 0
    graph(torch.ones(2, 2), torch.full((2, 2), 2.0), 3)
    assert torch.equal(x, torch.ones(2, 2)) and torch.equal(w, torch.full((2, 2), 2.0))
    assert stub.replays == 1


def test_a_launcher_bound_with_partial_is_captured_on_buffers_of_its_own() -> None:
    # capture_graph's docstring binds keyword arguments with functools.partial: the
    # launcher inside must still get a private scope, or eager calls (clear(), eviction)
    # could free memory the graph replays. Checked here on the callable that is captured.
    from kernelopt.buffers.graph import _graph_runner

    pool = BufferPool()

    @persistent_buffers(pool=pool)
    def scale(buffers: BufferScope, x: torch.Tensor, factor: float) -> torch.Tensor:
        out = buffers.resolve_out(None, x.shape, x.dtype, x.device)
        return torch.mul(x, factor, out=out)

    bound = functools.partial(scale, factor=3.0)
    for launcher, inputs in ((scale, (torch.ones(2), 3.0)), (bound, (torch.ones(2),))):
        run, keep_alive = _graph_runner(launcher)
        assert run(*inputs).tolist() == [3.0, 3.0]
        (graph_scope,) = keep_alive
        assert isinstance(graph_scope, BufferScope) and graph_scope.pool is not pool
        assert len(graph_scope.buffers()) == 1 and scale.scope.buffers() == []
    plain = functools.partial(torch.mul, other=2.0)
    assert _graph_runner(plain) == (plain, ())


def test_a_method_bound_to_its_instance_is_captured_on_buffers_of_its_own() -> None:
    from kernelopt.buffers.graph import _graph_runner

    pool = BufferPool()

    class Scaler:
        def __init__(self, factor: float) -> None:
            self.factor = factor

        @persistent_buffers(pool=pool)
        def run(buffers: BufferScope, self: Scaler, x: torch.Tensor) -> torch.Tensor:  # noqa: N805
            out = buffers.resolve_out(None, x.shape, x.dtype, x.device)
            return torch.mul(x, self.factor, out=out)

    scaler = Scaler(3.0)
    for launcher in (scaler.run, functools.partial(scaler.run)):
        run, keep_alive = _graph_runner(launcher)
        assert run(torch.ones(2)).tolist() == [3.0, 3.0]
        (graph_scope,) = keep_alive
        assert isinstance(graph_scope, BufferScope) and graph_scope.pool is not pool
        assert graph_scope.name == f"{scaler.run.scope.name}.graph"
        assert len(graph_scope.buffers()) == 1 and scaler.run.scope.buffers() == []
