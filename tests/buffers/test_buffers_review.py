"""Buffers: zero-size buffers under a cap, and collections that are no shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.buffers import BufferPool, BufferScope, PersistentLauncher, persistent_buffers
from kernelopt.buffers import resolve_out as resolve_out_fn

F32 = torch.float32


def make_double(pool: BufferPool) -> PersistentLauncher:  # type: ignore[type-arg]
    @persistent_buffers(pool=pool)
    def double(buffers: BufferScope, x: torch.Tensor) -> torch.Tensor:
        out = buffers.resolve_out(None, x.shape, x.dtype, x.device)
        return torch.mul(x, 2.0, out=out)

    return double


# -- zero-size buffers ----------------------------------------------------------------


def test_zero_size_requests_do_not_grow_a_capped_pool() -> None:
    pool = BufferPool(max_bytes=1 << 20)
    for i in range(2000):
        assert pool.get((0, i + 1), F32, "cpu").shape == (0, i + 1)
    stats = pool.stats
    assert stats.buffers_held == 256 and stats.bytes_held == 0
    assert stats.misses == 2000 and stats.evictions == 2000 - 256
    # The least recently used ones went: the last 256 shapes are still held.
    assert [h.key.shape for h in pool.buffers()] == [(0, i + 1) for i in range(1744, 2000)]


def test_only_the_least_recently_used_zero_size_buffer_is_evicted() -> None:
    pool = BufferPool(max_bytes=64)
    held = pool.get((16,), F32, "cpu", tag="a")  # oldest of all, but not zero-size
    first = pool.get((0, 1), F32, "cpu")
    for i in range(2, 257):
        pool.get((0, i), F32, "cpu")
    assert pool.get((0, 1), F32, "cpu") is first  # a hit: now the most recent
    pool.get((0, 257), F32, "cpu")  # one too many: evicts (0, 2)
    shapes = [h.key.shape for h in pool.buffers()]
    assert shapes[0] == (16,) and (0, 2) not in shapes and (0, 1) in shapes
    assert len(pool) == 257 and pool.stats.evictions == 1
    assert pool.get((16,), F32, "cpu", tag="a") is held


def test_a_cap_set_later_bounds_zero_size_buffers_too() -> None:
    pool = BufferPool()  # no cap: nothing is bounded
    for i in range(300):
        pool.get((i, 0), F32, "cpu")
    assert len(pool) == 300
    pool.max_bytes = 1 << 10
    assert len(pool) == 256 and pool.stats.evictions == 44
    # The count stays right through discard and clear.
    assert pool.discard(((299, 0), F32, "cpu", None, ""))
    pool.get((0, 7), F32, "cpu")
    assert len(pool) == 256 and pool.stats.evictions == 44
    pool.clear()
    for i in range(256):
        pool.get((0, i), F32, "cpu")
    assert len(pool) == 256 and pool.stats.evictions == 44


def test_a_launcher_with_a_zero_size_buffer_still_works() -> None:
    pool = BufferPool(max_bytes=1 << 10)
    double = make_double(pool)
    first = double(torch.ones(0, 4))
    second = double(torch.ones(0, 4))  # nothing to overwrite: no check to trip
    assert first.shape == second.shape == (0, 4) and len(pool) == 1
    scope = pool.scope("s")
    for i in range(300):
        assert scope.zeros("acc", (3, 0, i), F32, "cpu").shape == (3, 0, i)
    assert len(scope.buffers()) == 256 and scope.bytes_held == 0


# -- shapes that are not sequences of ints -------------------------------------------


NOT_SEQUENCES: list[tuple[object, str]] = [
    ({2: 3}, "dict"),
    ({2, 3}, "set"),
    (frozenset({2}), "frozenset"),
    ({2: 3}.keys(), "dict_keys"),
    ((d for d in (2, 3)), "generator"),
    (iter([2, 3]), "list_iterator"),
    ("23", "str"),
    (b"\x02\x03", "bytes"),
]


@pytest.mark.parametrize(("shape", "kind"), NOT_SEQUENCES)
def test_a_shape_that_is_no_sequence_is_refused_by_the_pool(shape: object, kind: str) -> None:
    pool = BufferPool()
    pool.get((2,), F32, "cpu")  # {2: 3} read as (2,) would hit this buffer
    pool.get((2, 3), F32, "cpu")
    message = f"shape: Expected a shape (a sequence of ints), got {kind}"
    with pytest.raises(InputError) as raised:
        pool.get(shape, F32, "cpu")  # type: ignore[arg-type]
    assert str(raised.value) == message
    assert pool.stats.hits == 0


DICT_SHAPE: Any = {2: 3}  # typed Any: the point is a call the annotations refuse


@pytest.mark.parametrize(
    "call",
    [
        lambda: BufferPool().scope("s").empty("ws", DICT_SHAPE, F32, "cpu"),
        lambda: BufferPool().empty(DICT_SHAPE),
        lambda: resolve_out_fn(None, DICT_SHAPE, F32, "cpu"),
        lambda: BufferPool().discard((DICT_SHAPE, F32, "cpu", None, "")),
    ],
)
def test_a_dict_shape_is_refused_everywhere(call: Callable[[], object]) -> None:
    message = r"^shape: Expected a shape \(a sequence of ints\), got dict$"
    with pytest.raises(InputError, match=message):
        call()


def test_sequences_of_ints_are_still_shapes() -> None:
    pool = BufferPool()
    held = pool.get((2, 3), F32, "cpu")
    for shape in ([2, 3], torch.Size([2, 3]), range(2, 4), np.array([2, 3])):
        assert pool.get(shape, F32, "cpu") is held  # type: ignore[arg-type]
    assert pool.get(4, F32, "cpu").shape == (4,)
