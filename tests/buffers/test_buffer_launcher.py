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


# -- methods: one scope per instance ---------------------------------------------------


def make_layer_class(pool: BufferPool, name: str | None = None) -> type:
    class Layer:
        """A layer whose output size is fixed per instance."""

        def __init__(self, width: int) -> None:
            self.width = width

        # The scope comes first, the instance second: not the "self" first that N805 wants.
        @persistent_buffers(pool=pool, name=name)
        def forward(
            buffers: BufferScope,  # noqa: N805
            self: Layer,
            x: torch.Tensor,
            *,
            scale: float = 1.0,
        ) -> torch.Tensor:
            out = buffers.empty("out", (self.width,), x.dtype, x.device)
            return torch.mul(x[: self.width], scale, out=out)

    return Layer


def test_a_method_gets_its_instance_after_the_scope() -> None:
    layer = make_layer_class(BufferPool())(3)
    assert layer.forward(torch.arange(8.0), scale=2.0).tolist() == [0.0, 2.0, 4.0]


def test_each_instance_has_a_scope_of_its_own_across_repeated_calls() -> None:
    pool = BufferPool()
    layer_class = make_layer_class(pool)
    narrow, wide = layer_class(3), layer_class(5)
    first = [narrow.forward(torch.ones(8)).data_ptr(), wide.forward(torch.ones(8)).data_ptr()]
    for _ in range(3):  # alternating instances: no eviction, no new allocation
        assert narrow.forward(torch.ones(8)).data_ptr() == first[0]
        assert wide.forward(torch.ones(8)).data_ptr() == first[1]
    assert first[0] != first[1] and pool.stats.misses == 2 and pool.stats.hits == 6
    base = layer_class.forward.scope.name
    assert narrow.forward.scope.name == f"{base}[0]" and wide.forward.scope.name == f"{base}[1]"
    assert narrow.forward.scope is narrow.forward.scope is not wide.forward.scope


def test_two_instances_never_share_a_buffer_both_write_in_one_step() -> None:
    layer_class = make_layer_class(BufferPool())
    a, b = layer_class(4), layer_class(4)  # same shape: one shared scope would alias
    ya = a.forward(torch.ones(4))
    yb = b.forward(torch.full((4,), 2.0))
    assert ya.tolist() == [1.0] * 4 and yb.tolist() == [2.0] * 4
    assert ya.data_ptr() != yb.data_ptr()


def test_holding_a_result_of_one_instance_is_checked_per_instance() -> None:
    layer_class = make_layer_class(BufferPool())
    a, b = layer_class(2), layer_class(2)
    kept = a.forward(torch.ones(2))
    b.forward(torch.ones(2))  # another instance: its own buffer, no conflict
    with pytest.raises(KernelOptError, match="released before this call overwrites it"):
        a.forward(torch.ones(2))
    assert kept.tolist() == [1.0, 1.0]


def test_calling_through_the_class_uses_the_instance_scope() -> None:
    pool = BufferPool()
    layer_class = make_layer_class(pool)
    layer = layer_class(2)
    via_class = layer_class.forward(layer, torch.ones(4)).data_ptr()
    assert layer.forward(torch.ones(4)).data_ptr() == via_class
    assert layer_class.forward.scope.buffers() == [] and len(layer.forward.scope.buffers()) == 1


def test_a_collected_instance_gives_its_scope_and_buffers_back() -> None:
    pool = BufferPool()
    layer_class = make_layer_class(pool)
    kept, dropped = layer_class(2), layer_class(1024)
    kept.forward(torch.ones(2))
    dropped.forward(torch.ones(1024))
    assert pool.bytes_held == 4 * (2 + 1024)
    dropped_name = dropped.forward.scope.name
    del dropped
    gc.collect()
    assert pool.bytes_held == 8
    assert [h.key.tag for h in pool.buffers()] == [f"{kept.forward.scope.name}/out"]
    assert dropped_name not in [h.key.tag.split("/")[0] for h in pool.buffers()]
    assert len(layer_class.forward._instances) == 1  # no record of the dropped instance


def test_the_bound_method_signature_leaves_out_the_scope_and_the_instance() -> None:
    layer_class = make_layer_class(BufferPool())
    layer = layer_class(2)
    signature = inspect.signature(layer.forward)
    assert list(signature.parameters) == ["x", "scale"]
    assert list(inspect.signature(layer_class.forward).parameters) == ["self", "x", "scale"]
    bound = layer.forward
    assert bound.__self__ is layer and bound.__func__ is layer_class.forward
    assert bound.__name__ == "forward" and bound == layer.forward
    assert hash(bound) == hash(layer.forward)


def test_clear_and_close_on_the_class_act_on_every_instance() -> None:
    pool = BufferPool()
    layer_class = make_layer_class(pool, name="layer")
    a, b = layer_class(2), layer_class(3)
    a.forward(torch.ones(4))
    b.forward(torch.ones(4))
    a.forward.clear()  # one instance
    assert pool.bytes_held == 12
    a.forward(torch.ones(4))
    layer_class.forward.clear()  # every instance
    assert pool.bytes_held == 0
    a.forward(torch.ones(4))
    layer_class.forward.close()
    assert pool.bytes_held == 0 and pool.stats.buffers_held == 0
    with pytest.raises(InputError, match="Expected an open scope 'layer'"):
        a.forward(torch.ones(4))
    with pytest.raises(InputError, match="Expected an open scope 'layer'"):
        layer_class(1).forward(torch.ones(4))
    pool.scope("layer[0]")  # the instances' names were given back too


def test_a_class_defined_again_closes_the_old_instances_scopes() -> None:
    pool = BufferPool()
    old = make_layer_class(pool, name="block")(4)
    old.forward(torch.ones(4))
    new = make_layer_class(pool, name="block")(2)  # the same definition, run again
    assert pool.bytes_held == 0
    assert new.forward(torch.ones(4)).tolist() == [1.0, 1.0]
    with pytest.raises(InputError, match="Expected an open scope 'block'"):
        old.forward(torch.ones(4))


def test_an_instance_without_weak_references_is_refused_by_name() -> None:
    class Slotted:
        __slots__ = ("width",)

        @persistent_buffers(pool=BufferPool(), name="slotted")
        def forward(buffers: BufferScope, self: Slotted, x: torch.Tensor) -> torch.Tensor:  # noqa: N805
            return x

    with pytest.raises(InputError, match=r"^slotted: Expected an instance that takes weak ref"):
        Slotted().forward(torch.ones(1))
    assert Slotted.forward._instances == {}


def test_a_bound_method_is_checked_for_stale_reads_on_its_instance_scope() -> None:
    from kernelopt.buffers import check_no_stale_reads

    layer = make_layer_class(BufferPool())(2)
    report = check_no_stale_reads(layer.forward, lambda i: (torch.ones(4),))
    assert report.ok and report.buffers == ("out (2,) torch.float32",)


def test_rebinding_the_result_to_the_same_name_is_refused_saying_why() -> None:
    double = make_double(BufferPool())
    y = double(torch.ones(3))
    with pytest.raises(KernelOptError) as raised:
        y = double(torch.ones(3))  # the old y is still bound while this call runs
    message = str(raised.value)
    assert "(y = launcher(...) called again holds the previous y until the call returns)" in message
    assert "drop it (del y first), copy it (.clone()), pass out=" in message
    del y
    y = double(torch.ones(3))
    assert torch.equal(y, torch.full((3,), 2.0))
