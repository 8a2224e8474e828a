"""Capture a launcher into a CUDA graph with buffers of its own, and replay it on new inputs.

A CUDA graph replays fixed addresses. Persistent buffers keep their addresses while the
key is unchanged, so a launcher built on them captures cleanly: warm it up on the
capture stream (every buffer is allocated there, outside the graph), capture one call,
then replay after copying new inputs into the captured ones. The graph gets a scope and
pool of its own: eager calls of the same launcher can neither evict its buffers nor
overwrite its outputs.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable
from typing import Generic, TypeVar, cast

import torch

from kernelopt._errors import DeviceError, InputError, expected
from kernelopt.buffers.launcher import BoundLauncher, PersistentLauncher
from kernelopt.buffers.pool import BufferPool
from kernelopt.buffers.scope import BufferScope

__all__ = ["CapturedGraph", "capture_graph"]

R = TypeVar("R")


class CapturedGraph(Generic[R]):
    """A captured launcher: call it with new inputs to copy them in and replay.

    Replays write into the same output tensors every time (``static_outputs``): clone
    what must outlive the next replay. Made by :func:`capture_graph`.

    Parameters
    ----------
    graph : torch.cuda.CUDAGraph
        The captured graph.
    static_inputs : tuple of object
        The arguments captured: tensors that later inputs are copied into, and other
        values baked into the graph.
    static_outputs : R
        What the captured call returned; every replay rewrites these tensors.
    keep_alive : tuple of object
        Objects held for as long as the graph lives (the scope that owns its buffers,
        the buffers of a pool or scope): the graph replays raw addresses, so their
        memory must not be freed and reused.
    """

    def __init__(
        self,
        *,
        graph: torch.cuda.CUDAGraph,
        static_inputs: tuple[object, ...],
        static_outputs: R,
        keep_alive: tuple[object, ...],
    ) -> None:
        self._graph = graph
        self._static_inputs = static_inputs
        self._static_outputs = static_outputs
        # The graph replays raw addresses; holding the tensors (or the scope that owns
        # them) keeps that memory from being freed and reused while the graph lives.
        self._keep_alive = keep_alive

    @property
    def graph(self) -> torch.cuda.CUDAGraph:
        """The underlying ``torch.cuda.CUDAGraph``."""
        return self._graph

    @property
    def static_inputs(self) -> tuple[object, ...]:
        """The captured arguments; writing into their tensors and :meth:`replay` skips copies."""
        return self._static_inputs

    @property
    def static_outputs(self) -> R:
        """What the captured call returned; every replay rewrites these tensors."""
        return self._static_outputs

    def replay(self) -> R:
        """Replay on the current stream with whatever the static inputs hold now."""
        self._graph.replay()
        return self._static_outputs

    def __call__(self, *inputs: object) -> R:
        """Copy ``inputs`` into the static inputs, replay, return the static outputs.

        Parameters
        ----------
        *inputs
            One value per captured argument: tensors of the captured shape and dtype
            (copied in, any device), or, for non-tensor arguments, a value equal to the
            captured one (it is baked into the graph).

        Raises
        ------
        InputError
            A wrong number of inputs, a tensor of another shape or dtype, or a
            non-tensor argument that differs from the captured value. Every input is
            checked before any is copied: a refused call leaves the static inputs as
            they were.
        """
        if len(inputs) != len(self._static_inputs):
            raise InputError(
                expected(f"{len(self._static_inputs)} inputs, as captured", len(inputs))
            )
        copies: list[tuple[torch.Tensor, torch.Tensor]] = []
        for i, (new, static) in enumerate(zip(inputs, self._static_inputs, strict=True)):
            if isinstance(static, torch.Tensor):
                if new is not static:
                    copies.append((static, _checked_input(i, new, static)))
            elif not _same_value(new, static):
                raise InputError(
                    expected(f"input {i} equal to the captured value {static!r}", repr(new))
                )
        for static, new in copies:
            static.copy_(new)
        self._graph.replay()
        return self._static_outputs


def _same_value(new: object, static: object) -> bool:
    """Whether ``new`` equals the captured non-tensor ``static`` (a value baked in)."""
    if new is static:
        return True
    try:
        return bool(new == static)
    except Exception:  # a tensor, or a list of them, has no single truth value
        return False


def _checked_input(i: int, new: object, static: torch.Tensor) -> torch.Tensor:
    """``new`` if it can be copied into the captured input ``i`` (same shape and dtype)."""
    if not isinstance(new, torch.Tensor):
        raise InputError(expected(f"input {i} to be a tensor", type(new).__name__))
    if new.shape != static.shape:
        raise InputError(
            expected(f"input {i} of shape {tuple(static.shape)}", str(tuple(new.shape)))
        )
    if new.dtype != static.dtype:
        raise InputError(expected(f"input {i} of dtype {static.dtype}", str(new.dtype)))
    return new


_PERSISTENT_TYPES = (PersistentLauncher, BoundLauncher)


def _unwrapped(launcher: object) -> tuple[object, tuple[object, ...], dict[str, object]]:
    """The launcher inside a ``functools.partial`` of a persistent one, with the arguments
    the partial binds; any other callable as it is, binding none."""
    if isinstance(launcher, functools.partial) and isinstance(launcher.func, _PERSISTENT_TYPES):
        return launcher.func, launcher.args, launcher.keywords
    return launcher, (), {}


def _refuse_closed(launcher: object) -> None:
    """Refuse a closed :class:`~kernelopt.buffers.PersistentLauncher`, also bound to an
    instance or inside a ``functools.partial``.

    Its plain calls are refused, but the graph runs it through ``call_with_scope`` on
    a scope of its own, which would not be: the warm-up and the capture would run a
    launcher that ``close()`` (or its definition again under the same name) retired.

    Raises
    ------
    InputError
        ``launcher: Expected an open launcher to capture, got '<scope>', closed by
        close()``.
    """
    target = _unwrapped(launcher)[0]
    if isinstance(target, BoundLauncher):
        target = target.__func__  # closing the launcher closes every instance's scope
    if isinstance(target, PersistentLauncher) and target.scope.closed:
        raise InputError(
            expected(
                "an open launcher to capture",
                f"{target.scope.name!r}, closed by {target.scope._closed_by}",
                where="launcher",
            )
        )


def _graph_runner(launcher: Callable[..., R]) -> tuple[Callable[..., R], tuple[object, ...]]:
    """The callable to capture for ``launcher``, and what the graph must keep alive.

    A :class:`~kernelopt.buffers.PersistentLauncher` or a method bound from one
    (:class:`~kernelopt.buffers.BoundLauncher`), bare or inside a ``functools.partial``
    (how keyword arguments are bound), runs on a scope and pool of its own; any other
    callable runs as it is.
    """
    target, bound_args, bound_kwargs = _unwrapped(launcher)
    if not isinstance(target, _PERSISTENT_TYPES):
        return launcher, ()
    persistent = target
    graph_scope = BufferScope(f"{persistent.scope.name}.graph", pool=BufferPool())

    def run(*args: object) -> R:
        return cast(R, persistent.call_with_scope(graph_scope, *bound_args, *args, **bound_kwargs))

    return run, (graph_scope,)


def capture_graph(
    launcher: Callable[..., R],
    *static_inputs: object,
    warmup: int = 2,
    buffers: BufferPool | BufferScope | None = None,
) -> CapturedGraph[R]:
    """Capture ``launcher(*static_inputs)`` into a CUDA graph.

    Parameters
    ----------
    launcher : callable
        A :class:`~kernelopt.buffers.PersistentLauncher` or ``obj.method`` bound from
        one (its captured copy gets a scope and pool of its own) or any callable running
        CUDA work. Bind keyword arguments
        with ``functools.partial``; a launcher bound so still gets its own scope.
    *static_inputs
        The arguments captured: CUDA tensors that later inputs are copied into, and
        other values baked into the graph.
    warmup : int
        Calls before capture, on the capture stream (at least 1: they allocate the
        persistent buffers outside the graph, and compile/autotune Triton kernels).
    buffers : BufferPool or BufferScope, optional
        For a plain callable that takes buffers from a pool or scope: the graph keeps a
        reference to every buffer held there at capture time, so eviction or clearing
        cannot free memory the graph replays.

    Returns
    -------
    CapturedGraph
        ``graph(*new_inputs)`` copies, replays and returns the static outputs.

    Raises
    ------
    DeviceError
        A tensor input is not on a CUDA device, or no CUDA device is present.
    InputError
        A launcher that is not callable, ``warmup`` that is no int >= 1 (``True`` too),
        ``buffers`` that is neither a pool, a scope nor None, or a closed
        :class:`~kernelopt.buffers.PersistentLauncher` (bound or in a
        ``functools.partial`` too), refused before anything runs and before the device
        checks.
    KernelOptError
        The launcher asked for a new persistent buffer during capture.
    """
    # First, and on any machine: a closed launcher is refused whatever the inputs, before
    # any warm-up call could run it.
    _refuse_closed(launcher)
    # Before the device checks too: on a machine without CUDA a wrong launcher or warmup
    # would be reported as the missing device, and the user's own mistake left unnamed.
    if not callable(launcher):
        raise InputError(expected("a callable launcher", type(launcher).__name__, where="launcher"))
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Integral) or warmup < 1:
        raise InputError(expected("warmup as an int >= 1", repr(warmup), where="warmup"))
    if buffers is not None and not isinstance(buffers, (BufferPool, BufferScope)):
        # Read only after the capture: a wrong one failed there, with Python's words,
        # once the warm-up and the capture had run.
        raise InputError(
            expected("a BufferPool, a BufferScope or None", repr(buffers)[:80], where="buffers")
        )
    devices = {x.device for x in static_inputs if isinstance(x, torch.Tensor)}
    for i, x in enumerate(static_inputs):
        if isinstance(x, torch.Tensor) and x.device.type != "cuda":
            raise DeviceError(expected(f"static input {i} on a CUDA device", str(x.device)))
    if not torch.cuda.is_available():
        # Imported here: kernelopt.buffers does not load kernelopt.bench at import time.
        from kernelopt.bench.timer import no_cuda_reason

        raise DeviceError(expected("a CUDA device for graph capture", f"none: {no_cuda_reason()}"))
    if len(devices) > 1:
        raise DeviceError(expected("static inputs on one CUDA device", sorted(map(str, devices))))
    device = next(iter(devices)) if devices else torch.device("cuda", torch.cuda.current_device())

    run, keep_alive = _graph_runner(launcher)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.device(device):
        # Warm-up and capture share one side stream: persistent buffers are keyed by
        # stream, so the warm-up allocates exactly the buffers the capture will hit.
        stream = torch.cuda.Stream(device)  # type: ignore[no-untyped-call]
        stream.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(stream):
            for _ in range(warmup):
                run(*static_inputs)
        torch.cuda.current_stream(device).wait_stream(stream)
        with torch.cuda.graph(graph, stream=stream):
            static_outputs = run(*static_inputs)
    if buffers is not None:
        keep_alive += tuple(held.tensor for held in buffers.buffers())
    return CapturedGraph(
        graph=graph,
        static_inputs=static_inputs,
        static_outputs=static_outputs,
        keep_alive=keep_alive,
    )
