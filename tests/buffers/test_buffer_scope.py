"""BufferScope: named buffers per call site, zeros, lifetime."""

from __future__ import annotations

import tracemalloc

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.buffers import BufferPool, BufferScope, persistent_buffers

F32 = torch.float32


def test_a_name_keeps_its_tensor_and_address_while_the_key_is_unchanged() -> None:
    scope = BufferScope("decode", pool=BufferPool())
    ws = scope.empty("ws", (8, 4), F32, "cpu")
    for _ in range(20):
        again = scope.empty("ws", (8, 4), F32, "cpu")
        assert again is ws and again.data_ptr() == ws.data_ptr()
    other = scope.empty("partials", (8, 4), F32, "cpu")
    assert other.data_ptr() != ws.data_ptr()


def test_a_new_shape_is_a_new_buffer_and_the_old_one_is_kept() -> None:
    pool = BufferPool()
    scope = BufferScope("decode", pool=pool)
    small = scope.empty("ws", (2,), F32, "cpu")
    large = scope.empty("ws", (3,), F32, "cpu")
    assert large is not small and scope.empty("ws", (2,), F32, "cpu") is small
    assert sorted(h.key.shape for h in scope.buffers()) == [(2,), (3,)]
    assert scope.bytes_held == 20


def test_tags_are_scope_slash_name() -> None:
    pool = BufferPool()
    scope = pool.scope("mla")
    scope.empty("lse", (4,), F32, "cpu")
    (held,) = pool.buffers()
    assert held.key.tag == "mla/lse" == scope.tag("lse")
    assert held.name == "lse" and scope.name == "mla" and scope.pool is pool


def test_zeros_rezeroes_on_every_call() -> None:
    scope = BufferScope("acc", pool=BufferPool())
    acc = scope.zeros("acc", (3,), F32, "cpu")
    acc += 5.0
    again = scope.zeros("acc", (3,), F32, "cpu")
    assert again is acc and torch.equal(again, torch.zeros(3))


def test_clear_frees_only_this_scopes_buffers() -> None:
    pool = BufferPool()
    mine, theirs = pool.scope("mine"), pool.scope("theirs")
    old = mine.empty("ws", (4,), F32, "cpu")
    kept = theirs.empty("ws", (4,), F32, "cpu")
    mine.clear()
    assert mine.buffers() == [] and mine.bytes_held == 0
    assert theirs.empty("ws", (4,), F32, "cpu") is kept
    assert mine.empty("ws", (4,), F32, "cpu") is not old


@pytest.mark.parametrize("name", ["", "a/b", 3])
def test_bad_scope_names_are_rejected(name: object) -> None:
    with pytest.raises(InputError, match="Expected a non-empty scope name without '/'"):
        BufferScope(name, pool=BufferPool())  # type: ignore[arg-type]


def test_bad_buffer_names_are_rejected() -> None:
    scope = BufferScope("s", pool=BufferPool())
    with pytest.raises(InputError, match="name: Expected a non-empty buffer name, got ''"):
        scope.empty("", (2,), F32, "cpu")


def test_oversize_buffers_are_fresh_each_call() -> None:
    scope = BufferScope("s", pool=BufferPool(max_bytes=16))
    a = scope.empty("big", (64,), F32, "cpu")
    b = scope.empty("big", (64,), F32, "cpu")
    assert a is not b and scope.buffers() == []


def test_a_pool_that_is_no_buffer_pool_is_refused() -> None:
    with pytest.raises(InputError, match=r"^pool: Expected a BufferPool or None, got 'workspace'$"):
        BufferScope("s", pool="workspace")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^pool: Expected a BufferPool or None, got BufferScope"):
        persistent_buffers(pool=BufferScope("t", pool=BufferPool()))(lambda buffers: None)  # type: ignore[arg-type]


def test_a_capped_pool_bounds_the_memory_of_many_distinct_shapes() -> None:
    # The guide's answer to many distinct shapes is max_bytes. The scope's own record of
    # what it handed out and returned must not keep growing once the pool evicts.
    pool = BufferPool(max_bytes=1 << 12)
    scope = BufferScope("varlen", pool=pool)

    @persistent_buffers(pool=pool)
    def head(buffers: BufferScope, n: int) -> torch.Tensor:
        buffers.empty("ws", (n,), torch.uint8, "cpu")
        return buffers.resolve_out(None, (n,), torch.uint8, "cpu").fill_(1)

    def serve(first: int, last: int) -> None:
        for n in range(first, last):
            scope.empty("ws", (n,), torch.uint8, "cpu")
            head(n).sum()  # check mode: each call returns its buffer

    serve(1, 500)  # warm: the bookkeeping reaches its steady size
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        serve(500, 4500)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # About 3.7 MB without pruning; with it, at most a few hundred records per scope.
    assert len(pool) <= 8 and grown < 500_000
