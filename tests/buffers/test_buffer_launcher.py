"""@persistent_buffers: scope injection, naming, and the returned-buffer policies."""

from __future__ import annotations

import gc
import inspect
from collections import OrderedDict
from typing import NamedTuple

import pytest
import torch

from kernelopt._errors import InputError, KernelOptError
from kernelopt.buffers import BufferPool, BufferScope, PersistentLauncher, persistent_buffers

F32 = torch.float32


def make_double(pool: BufferPool, on_return: str = "check") -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=pool, on_return=on_return)  # type: ignore[arg-type]
    def double(
        buffers: BufferScope, x: torch.Tensor, out: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Return 2 x, written into a persistent output unless out= is given."""
        out = buffers.resolve_out(out, x.shape, x.dtype, x.device)
        return torch.mul(x, 2.0, out=out)

    return double


def test_the_launcher_gets_its_scope_and_keeps_its_buffers() -> None:
    pool = BufferPool()
    seen: list[BufferScope] = []

    @persistent_buffers(pool=pool)
    def launch(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        seen.append(buffers)
        ws = buffers.empty("ws", x.shape, x.dtype, x.device)
        torch.add(x, 1.0, out=ws)
        return ws.sum()

    assert launch(torch.ones(4)).item() == 8.0
    ptr = launch.scope.buffers()[0].tensor.data_ptr()
    assert launch(torch.zeros(4)).item() == 4.0
    assert seen == [launch.scope, launch.scope] and launch.pool is pool
    assert launch.scope.buffers()[0].tensor.data_ptr() == ptr
    assert pool.stats.hits == 1 and pool.stats.misses == 1
    launch.clear()
    assert pool.bytes_held == 0


def test_names_default_to_module_and_qualname_and_stay_unique() -> None:
    pool = BufferPool()
    first, second = make_double(pool), make_double(pool)
    base = f"{__name__}.make_double.<locals>.double"
    assert first.scope.name == base and second.scope.name == f"{base}#2"
    assert first.__name__ == "double" and "Return 2 x" in (first.__doc__ or "")
    assert first.__wrapped__ is not None  # type: ignore[attr-defined]


def test_bare_decorator_uses_the_default_pool_and_explicit_names_must_be_free() -> None:
    @persistent_buffers
    def launch(buffers: BufferScope, n: int) -> int:
        return buffers.empty("ws", (n,), F32, "cpu").numel()

    assert launch(3) == 3 and launch.on_return == "check"
    launch.clear()
    pool = BufferPool()
    rope = persistent_buffers(pool=pool, name="rope")(make_double(BufferPool()).__wrapped__)  # type: ignore[attr-defined]

    def other(buffers: BufferScope) -> None:
        return None

    with pytest.raises(InputError, match="Expected a scope name not yet used in this pool"):
        persistent_buffers(pool=pool, name="rope")(other)
    assert rope.scope.name == "rope"
    with pytest.raises(InputError, match="Expected on_return in"):
        persistent_buffers(pool=pool, on_return="sometimes")  # type: ignore[call-overload]


def test_holding_a_returned_buffer_across_the_next_call_raises_naming_it() -> None:
    double = make_double(BufferPool())
    y = double(torch.ones(3))
    with pytest.raises(KernelOptError) as raised:
        double(torch.ones(3))
    message = str(raised.value)
    assert message.startswith("Expected buffer 'out' (returned by the previous call of scope")
    assert "got a live reference to it" in message
    assert torch.equal(y, torch.full((3,), 2.0))  # nothing was overwritten
    del y
    assert torch.equal(double(torch.ones(3) * 2), torch.full((3,), 4.0))


def test_a_view_of_a_returned_buffer_counts_as_holding_it() -> None:
    double = make_double(BufferPool())
    head = double(torch.ones(4))[:2]
    with pytest.raises(KernelOptError, match="'out'"):
        double(torch.ones(4))
    del head
    double(torch.ones(4))


def test_feeding_a_result_back_in_is_caught() -> None:
    double = make_double(BufferPool())
    with pytest.raises(KernelOptError, match="'out'"):
        double(double(torch.ones(2)))  # would read its input while overwriting it
    # (Outside an assert: pytest keeps an assert's intermediate values alive.)
    quadrupled = double(double(torch.ones(2)).clone())
    assert torch.equal(quadrupled, torch.full((2,), 4.0))


def test_the_returned_tensor_is_an_alias_not_the_pooled_object() -> None:
    double = make_double(BufferPool())
    y = double(torch.ones(2))
    (held,) = double.scope.buffers()
    assert y is not held.tensor and y.data_ptr() == held.tensor.data_ptr()


def test_caller_owned_out_and_other_shapes_are_never_in_conflict() -> None:
    double = make_double(BufferPool())
    mine = torch.empty(3)
    a = double(torch.ones(3), out=mine)
    b = double(torch.ones(3), out=mine)
    assert a is mine and b is mine
    c = double(torch.ones(5))
    d = double(torch.ones(6))  # another key: c is not overwritten
    assert torch.equal(c, torch.full((5,), 2.0)) and d.shape == (6,)


def test_returned_workspace_copies_and_structures() -> None:
    class Pair(NamedTuple):
        out: torch.Tensor
        lse: torch.Tensor

    @persistent_buffers(pool=BufferPool())
    def attn(buffers: BufferScope, x: torch.Tensor) -> Pair:
        out = buffers.resolve_out(None, x.shape, x.dtype, x.device)
        lse = buffers.resolve_out(None, (1,), F32, x.device, name="lse")
        out.copy_(x)
        lse.fill_(float(x.sum()))
        return Pair(out=out, lse=lse.clone())  # lse is copied: only out is lent

    pair = attn(torch.ones(2))
    assert isinstance(pair, Pair)
    kept_lse = pair.lse
    del pair
    attn(torch.ones(2))  # the caller keeps only a copy: fine
    result = {"pair": attn(torch.ones(2))}
    with pytest.raises(KernelOptError, match="'out'"):
        attn(torch.ones(2))
    assert kept_lse.item() == 2.0 and result["pair"].out.shape == (2,)


def test_copy_mode_returns_independent_results() -> None:
    double = make_double(BufferPool(), on_return="copy")
    a = double(torch.ones(3))
    b = double(torch.full((3,), 5.0))
    assert torch.equal(a, torch.full((3,), 2.0)) and torch.equal(b, torch.full((3,), 10.0))
    assert a.data_ptr() != double.scope.buffers()[0].tensor.data_ptr()


def test_unchecked_mode_overwrites_what_the_caller_holds() -> None:
    # The documented hazard the default mode exists to catch.
    double = make_double(BufferPool(), on_return="unchecked")
    a = double(torch.ones(3))
    double(torch.full((3,), 5.0))
    assert torch.equal(a, torch.full((3,), 10.0))


def test_an_evicted_buffer_belongs_to_its_holder() -> None:
    pool = BufferPool(max_bytes=16)
    double = make_double(pool)
    a = double(torch.ones(4))  # 16 bytes: fills the pool
    pool.get((4,), F32, "cpu", tag="intruder")  # evicts the lent buffer
    b = double(torch.ones(4) * 3)
    assert torch.equal(a, torch.full((4,), 2.0)) and torch.equal(b, torch.full((4,), 6.0))


def test_dropped_launchers_give_back_their_names_and_buffers() -> None:
    pool = BufferPool()
    for _ in range(5):
        launcher = make_double(pool)
        launcher(torch.ones(1024))
        assert pool.bytes_held == 4096
        del launcher  # a factory's launcher, built and dropped
    gc.collect()
    assert pool.bytes_held == 0 and pool.stats.buffers_held == 0
    again = make_double(pool)
    assert again.scope.name == f"{__name__}.make_double.<locals>.double"  # no "#6"
    scope = pool.scope("s1")
    del scope
    pool.scope("s1")  # the first "s1" is gone: its name is free again


def test_a_launcher_defined_again_takes_its_name_over_and_the_old_one_is_closed() -> None:
    pool = BufferPool()
    source = (
        "@persistent_buffers(pool=pool, name='my_softmax')\n"
        "def softmax(buffers, x):\n"
        "    out = buffers.empty('out', x.shape, x.dtype, x.device)\n"
        "    return out.copy_(x.softmax(-1))\n"
    )
    namespace = {"persistent_buffers": persistent_buffers, "pool": pool}
    exec(source, namespace)  # a notebook cell ...
    old = namespace["softmax"]
    old(torch.ones(4)).clone()
    exec(source, namespace)  # ... run again while the first definition is still alive
    new = namespace["softmax"]
    assert new.scope.name == "my_softmax" and old.scope.closed and not new.scope.closed
    assert new(torch.ones(4)).tolist() == [0.25] * 4
    with pytest.raises(InputError, match="Expected an open scope 'my_softmax', got a scope closed"):
        old(torch.ones(4))


def test_close_frees_the_buffers_and_the_name() -> None:
    pool = BufferPool()
    launcher = make_double(pool)
    kept = launcher(torch.ones(8))
    launcher.close()
    assert pool.bytes_held == 0 and kept.tolist() == [2.0] * 8  # the caller's tensor stays
    assert "closed" in repr(launcher.scope)
    launcher.close()  # twice is fine
    assert make_double(pool).scope.name == f"{__name__}.make_double.<locals>.double"


def test_returned_structures_keep_their_types() -> None:
    # torch.return_types (what topk, max and sort return), dict and list subclasses: a
    # launcher returns the same type whether or not its result holds a scope buffer.
    @persistent_buffers(pool=BufferPool())
    def top2(buffers: BufferScope, x: torch.Tensor) -> torch.return_types.topk_out:
        values = buffers.empty("values", (2,), x.dtype, x.device)
        indices = buffers.empty("indices", (2,), torch.int64, x.device)
        return torch.topk(x, 2, out=(values, indices))

    best = top2(torch.arange(5.0))
    assert type(best) is torch.return_types.topk_out
    assert best.values.tolist() == [4.0, 3.0] and best.indices.tolist() == [4, 3]
    del best
    with pytest.raises(KernelOptError, match="'values'"):
        kept = top2(torch.arange(5.0)).values  # the structure is gone, its field is held
        top2(torch.arange(5.0))
    del kept

    class Outputs(OrderedDict):  # type: ignore[type-arg]
        pass

    @persistent_buffers(pool=BufferPool())
    def named(buffers: BufferScope, x: torch.Tensor) -> Outputs:
        out = buffers.resolve_out(None, x.shape, x.dtype, x.device)
        return Outputs(out=out.copy_(x), scale=2.0)

    outputs = named(torch.ones(2))
    assert type(outputs) is Outputs and list(outputs) == ["out", "scale"]
    del outputs

    class Batch(list):  # type: ignore[type-arg]
        pass

    @persistent_buffers(pool=BufferPool())
    def batched(buffers: BufferScope, x: torch.Tensor) -> Batch:
        out = buffers.resolve_out(None, x.shape, x.dtype, x.device)
        return Batch([out.copy_(x)])

    assert type(batched(torch.ones(2))) is Batch


def test_structures_without_a_scope_buffer_are_returned_as_they_are() -> None:
    @persistent_buffers(pool=BufferPool())
    def passthrough(buffers: BufferScope, x: torch.Tensor) -> dict[str, object]:
        buffers.empty("ws", x.shape, x.dtype, x.device)  # the scope holds a buffer
        return result

    result: dict[str, object] = {"x": torch.ones(2), "items": [torch.zeros(1)]}
    assert passthrough(torch.ones(2)) is result


def test_a_closed_launcher_refuses_every_call_even_with_out() -> None:
    double = make_double(BufferPool())
    double.close()
    mine = torch.empty(3)
    with pytest.raises(InputError, match=r"^Expected an open scope '.*double', got a scope closed"):
        double(torch.ones(3), out=mine)  # would not touch the scope, yet the launcher is closed
    with pytest.raises(InputError, match="Expected an open scope"):
        double(torch.ones(3))


def test_the_signature_is_what_callers_pass() -> None:
    # Tools that bind or record arguments by name (kernelopt.workload's Recorder among
    # them) read the signature: the scope the launcher receives is not an argument.
    double = make_double(BufferPool())
    signature = inspect.signature(double)
    assert list(signature.parameters) == ["x", "out"]
    assert signature.bind(torch.ones(2)).arguments.keys() == {"x"}

    @persistent_buffers(pool=BufferPool())
    def no_args(buffers: BufferScope) -> int:
        return 1

    assert list(inspect.signature(no_args).parameters) == []


def test_a_launcher_without_a_scope_parameter_is_refused_when_decorated() -> None:
    # It failed on its first call with "takes 0 positional arguments but 1 was given",
    # though the caller had passed none.
    def no_params() -> int:
        return 1

    def keywords_only(*, x: int) -> int:
        return x

    pool = BufferPool()
    for fn in (no_params, keywords_only):
        with pytest.raises(InputError, match="fn: Expected a launcher taking its BufferScope"):
            persistent_buffers(pool=pool)(fn)
        with pytest.raises(InputError, match="first positional parameter"):
            persistent_buffers(fn)

    @persistent_buffers(pool=pool)
    def star(*args: object) -> int:  # the scope arrives as args[0]
        return len(args)

    assert star(1, 2) == 3


def test_a_structure_that_cannot_be_rebuilt_in_its_type_is_still_returned() -> None:
    class Args(tuple):  # type: ignore[type-arg]
        def __new__(cls, *items: object) -> Args:
            return super().__new__(cls, items)

    @persistent_buffers(pool=BufferPool())
    def pair(buffers: BufferScope, x: torch.Tensor) -> Args:
        out = buffers.resolve_out(None, x.shape, x.dtype, x.device)
        return Args(out.copy_(x), 1)

    result = pair(torch.ones(2))
    assert isinstance(result, tuple) and result[0].tolist() == [1.0, 1.0] and result[1] == 1
