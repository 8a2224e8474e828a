"""BufferPool: keys, hits and misses, the LRU byte cap, stats, validation."""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelopt._errors import DeviceError, InputError
from kernelopt.buffers import BufferKey, BufferPool, PoolStats, check_out, default_pool

F32 = torch.float32


def test_equal_keys_return_the_same_tensor_at_a_stable_address() -> None:
    pool = BufferPool()
    first = pool.get((4, 8), F32, "cpu", tag="ws")
    addresses = {pool.get((4, 8), F32, "cpu", tag="ws").data_ptr() for _ in range(50)}
    assert addresses == {first.data_ptr()}
    assert pool.get((4, 8), F32, "cpu", tag="ws") is first
    stats = pool.stats
    assert (stats.hits, stats.misses, stats.buffers_held, stats.bytes_held) == (51, 1, 1, 128)


@pytest.mark.parametrize(
    "change",
    [
        {"shape": (4, 9)},
        {"dtype": torch.float16},
        {"device": "meta"},
        {"tag": "other"},
        {"stream": 7},
    ],
    ids=["shape", "dtype", "device", "tag", "stream"],
)
def test_every_key_part_separates_buffers(change: dict[str, object]) -> None:
    pool = BufferPool()
    base: dict[str, object] = {
        "shape": (4, 8),
        "dtype": F32,
        "device": "cpu",
        "tag": "ws",
        "stream": None,
    }
    a = pool.get(base["shape"], base["dtype"], base["device"], tag="ws")  # type: ignore[arg-type]
    spec = {**base, **change}
    b = pool.get(
        spec["shape"],  # type: ignore[arg-type]
        spec["dtype"],  # type: ignore[arg-type]
        spec["device"],  # type: ignore[arg-type]
        tag=spec["tag"],  # type: ignore[arg-type]
        stream=spec["stream"],  # type: ignore[arg-type]
    )
    assert b is not a
    assert pool.stats.misses == 2 and len(pool) == 2


def test_shape_and_device_spellings_share_one_buffer() -> None:
    pool = BufferPool()
    a = pool.get((2, 3), F32, "cpu")
    assert pool.get([2, 3], F32, torch.device("cpu")) is a
    assert pool.get(torch.Size([2, 3]), F32, "cpu") is a
    assert pool.get(5, F32, "cpu").shape == (5,)
    assert pool.get(5, F32, "cpu") is pool.get((5,), F32, "cpu")


@pytest.mark.parametrize("spelling", ["cpu:0", torch.device("cpu", 0)])
def test_an_indexed_cpu_spelling_is_the_cpu(spelling: object) -> None:
    # torch puts a tensor made on "cpu:0" on "cpu": the key, and out= checks, agree.
    pool = BufferPool()
    a = pool.get((2,), F32, "cpu")
    assert pool.get((2,), F32, spelling) is a  # type: ignore[arg-type]
    assert pool.buffers()[0].key.device == torch.device("cpu") and len(pool) == 1
    assert check_out(a, (2,), F32, spelling) is a  # type: ignore[arg-type]


def test_empty_mirrors_torch_empty_defaults() -> None:
    pool = BufferPool()
    t = pool.empty((3,), tag="x")
    assert t.dtype == torch.get_default_dtype() and t.device.type == "cpu"
    assert pool.empty((3,), tag="x") is t
    assert pool.empty((3,), dtype=F32, device="cpu", tag="x") is t


def test_key_of_a_held_buffer_is_a_buffer_key() -> None:
    pool = BufferPool()
    pool.get((2,), torch.int32, "cpu", tag="idx")
    (held,) = pool.buffers()
    assert held.key == BufferKey(
        shape=(2,), dtype=torch.int32, device=torch.device("cpu"), stream=0, tag="idx"
    )
    assert held.name == "idx" and held.tensor.dtype == torch.int32
    assert held.key in pool and BufferKey((3,), F32, torch.device("cpu"), 0, "") not in pool


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (((2, -1), F32, "cpu"), "shape: Expected a shape of non-negative ints, got (2, -1)"),
        (((2, 1.5), F32, "cpu"), "shape: Expected a shape of non-negative ints, got (2, 1.5)"),
        (((2,), "float32", "cpu"), "dtype: Expected a torch.dtype, got 'float32'"),
        (((2,), F32, "gpu9"), "device: Expected a torch device such as 'cpu' or 'cuda:0'"),
        (((2,), F32, 1.5), "device: Expected a torch device such as 'cpu' or 'cuda:0'"),
        # Not even a sequence of sizes, or an unhashable device spelling: the same message,
        # not a TypeError from tuple() or the device cache.
        ((2.0, F32, "cpu"), "shape: Expected a shape of non-negative ints, got 2.0"),
        ((None, F32, "cpu"), "shape: Expected a shape of non-negative ints, got None"),
        (((2,), F32, ["cpu"]), "device: Expected a torch device such as 'cpu' or 'cuda:0'"),
        # More elements than an index can address: refused before torch.empty overflows.
        (((1 << 40, 1 << 40), F32, "cpu"), "shape: Expected a shape of at most 2**63 - 1 bytes"),
        # No bytes at all, but a size torch cannot hold: not torch's unpacking TypeError.
        (((0, 1 << 64), F32, "cpu"), "shape: Expected dims of at most 2**63 - 1, got (0, 1844"),
    ],
)
def test_bad_requests_say_what_was_expected(args: tuple[object, ...], message: str) -> None:
    pool = BufferPool()
    with pytest.raises(InputError) as raised:
        pool.get(*args)  # type: ignore[arg-type]
    assert str(raised.value).startswith(message)
    assert len(pool) == 0 and pool.stats.misses == 0


def test_a_bad_stream_says_what_was_expected() -> None:
    pool = BufferPool()
    with pytest.raises(InputError, match=r"^stream: Expected a stream id \(int\), a stream"):
        pool.get((2,), F32, "cpu", stream="s1")  # type: ignore[arg-type]
    assert len(pool) == 0


def test_cuda_without_a_cuda_device_is_a_device_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError, match=r"^Expected a CUDA device for 'cuda:1', got none"):
        BufferPool().get((2,), F32, "cuda:1")


def test_bad_tag_and_cap_are_rejected() -> None:
    with pytest.raises(InputError, match="tag: Expected tag as a str, got 3"):
        BufferPool().get((2,), F32, "cpu", tag=3)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="Expected max_bytes as a non-negative int or None"):
        BufferPool(max_bytes=-1)
    with pytest.raises(InputError):
        BufferPool(max_bytes=1.5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="Expected max_bytes as a non-negative int or None"):
        BufferPool(max_bytes=True)


def test_a_numpy_cap_is_an_int() -> None:
    # As kernelopt.catalog and kernelopt.workload take counts: any Integral but a bool.
    pool = BufferPool(max_bytes=np.int64(64))
    assert pool.max_bytes == 64 and type(pool.max_bytes) is int
    pool.get((16,), F32, "cpu", tag="a")
    pool.max_bytes = np.int32(32)  # type: ignore[assignment]
    assert pool.max_bytes == 32 and len(pool) == 0 and pool.stats.max_bytes == 32
    with pytest.raises(InputError, match="Expected max_bytes as a non-negative int or None"):
        BufferPool(max_bytes=np.int64(-1))


@pytest.mark.parametrize("shape", [(2.0, 3), (True, 3), [2.0, 3], (2, 3.0), (1, False)])
def test_a_shape_that_only_compares_equal_to_a_held_one_is_refused(shape: object) -> None:
    # (2.0, 3) and (True, 3) hash and compare equal to (2, 3) and (1, 3): a lookup alone
    # would hand them that buffer, though a first request with them is refused.
    pool = BufferPool()
    for held in ((2, 3), (1, 3), (2, 3), (1, 0)):
        pool.get(held, F32, "cpu")
    scope = pool.scope("s")
    scope.empty("ws", (2, 3), F32, "cpu")
    scope.empty("ws", (1, 3), F32, "cpu")
    with pytest.raises(InputError, match=r"^shape: Expected a shape of non-negative ints, got"):
        pool.get(shape, F32, "cpu")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^shape: Expected a shape of non-negative ints, got"):
        scope.empty("ws", shape, F32, "cpu")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^shape: Expected a shape of non-negative ints, got"):
        BufferPool().get(shape, F32, "cpu")  # type: ignore[arg-type]  # the first request


def test_numpy_sizes_key_the_same_buffer_as_ints() -> None:
    pool = BufferPool()
    held = pool.get((2, 3), F32, "cpu")
    assert pool.get((np.int64(2), np.int32(3)), F32, "cpu") is held
    assert pool.get([np.int64(2), 3], F32, "cpu") is held
    assert pool.get(np.int64(6), F32, "cpu").shape == (6,)
    assert all(type(d) is int for h in pool.buffers() for d in h.key.shape)
    with pytest.raises(InputError, match=r"^shape: Expected a shape of non-negative ints"):
        pool.get(True, F32, "cpu")  # type: ignore[arg-type]


def test_cap_evicts_least_recently_used_first() -> None:
    pool = BufferPool(max_bytes=3 * 64)  # three 64-byte buffers
    a = pool.get((16,), F32, "cpu", tag="a")
    pool.get((16,), F32, "cpu", tag="b")
    pool.get((16,), F32, "cpu", tag="c")
    assert pool.get((16,), F32, "cpu", tag="a") is a  # a is now the most recent
    pool.get((16,), F32, "cpu", tag="d")  # evicts b, the least recently used
    assert [h.name for h in pool.buffers()] == ["c", "a", "d"]
    stats = pool.stats
    assert (stats.evictions, stats.bytes_held, stats.buffers_held) == (1, 192, 3)
    assert pool.get((16,), F32, "cpu", tag="a") is a


def test_oversize_requests_are_served_but_not_kept() -> None:
    pool = BufferPool(max_bytes=100)
    kept = pool.get((8,), F32, "cpu", tag="small")
    big1 = pool.get((64,), F32, "cpu", tag="big")
    big2 = pool.get((64,), F32, "cpu", tag="big")
    assert big1 is not big2 and big1.shape == (64,)
    stats = pool.stats
    assert (stats.uncached, stats.misses, stats.buffers_held) == (2, 3, 1)
    assert pool.get((8,), F32, "cpu", tag="small") is kept  # nothing was evicted for them


def test_lowering_the_cap_evicts_and_evicted_tensors_stay_valid() -> None:
    pool = BufferPool()
    held = pool.get((16,), F32, "cpu", tag="a")
    held.fill_(3.0)
    pool.get((16,), F32, "cpu", tag="b")
    pool.max_bytes = 64
    assert pool.max_bytes == 64 and len(pool) == 1 and pool.stats.evictions == 1
    assert torch.equal(held, torch.full((16,), 3.0))  # the caller's reference keeps it alive
    assert pool.get((16,), F32, "cpu", tag="a") is not held


def test_discard_clear_and_reset_stats() -> None:
    pool = BufferPool()
    pool.get((4,), F32, "cpu", tag="a")
    pool.get((4,), F32, "cpu", tag="b")
    key = pool.buffers()[0].key
    assert pool.discard(key) is True and pool.discard(key) is False
    assert pool.bytes_held == 16
    pool.clear()
    assert len(pool) == 0 and pool.bytes_held == 0 and pool.stats.misses == 2
    pool.reset_stats()
    assert pool.stats == PoolStats(
        hits=0, misses=0, evictions=0, uncached=0, buffers_held=0, bytes_held=0, max_bytes=None
    )


def test_discard_takes_a_key_spelled_as_get_takes_it_and_refuses_a_tag() -> None:
    # A plain tuple with "cpu" and a list shape matched nothing, and discard("a") read the
    # tag's letters as a key: both answered False while the buffer stayed held.
    pool = BufferPool()
    pool.get((4, 2), F32, "cpu", tag="a")
    for wrong in ("a", None, ((4, 2), F32, "cpu", "a"), 5):
        with pytest.raises(InputError, match="key: Expected a BufferKey or a tuple"):
            pool.discard(wrong)  # type: ignore[arg-type]
    assert len(pool) == 1
    assert pool.discard(([4, 2], F32, "cpu", 0, "a")) is True
    assert len(pool) == 0 and pool.bytes_held == 0
    with pytest.raises(InputError, match="shape"):
        pool.discard(((-1,), F32, "cpu", 0, "a"))


def test_pool_stats_validate_and_derive() -> None:
    stats = PoolStats(
        hits=3, misses=1, evictions=0, uncached=0, buffers_held=1, bytes_held=8, max_bytes=None
    )
    assert stats.requests == 4 and stats.hit_rate == 0.75
    with pytest.raises(InputError, match="hits: Expected a non-negative int, got -1"):
        PoolStats(
            hits=-1, misses=0, evictions=0, uncached=0, buffers_held=0, bytes_held=0, max_bytes=None
        )
    with pytest.raises(TypeError):
        PoolStats(0, 0, 0, 0, 0, 0, None)  # type: ignore[misc]


def test_default_pool_is_one_object() -> None:
    assert default_pool() is default_pool()


def test_scope_names_are_unique_per_pool() -> None:
    pool = BufferPool()
    live = pool.scope("attn")
    with pytest.raises(InputError, match="Expected a scope name not yet used in this pool"):
        pool.scope("attn")
    assert live.name == "attn"
    BufferPool().scope("attn")  # another pool is another namespace


# A reference model: an ordered dict of tag -> bytes, evicting from the front.
@settings(max_examples=60, deadline=None)
@given(
    cap=st.integers(min_value=0, max_value=400),
    requests=st.lists(
        st.tuples(st.sampled_from("abcdef"), st.integers(min_value=0, max_value=40)),
        max_size=40,
    ),
)
def test_pool_matches_an_lru_model(cap: int, requests: list[tuple[str, int]]) -> None:
    pool = BufferPool(max_bytes=cap)
    model: OrderedDict[tuple[str, int], int] = OrderedDict()
    hits = misses = evictions = uncached = 0
    for tag, n in requests:
        size = 4 * n
        key = (tag, n)
        if key in model:
            model.move_to_end(key)
            hits += 1
        else:
            misses += 1
            if size > cap:
                uncached += 1
            else:
                while sum(model.values()) > cap - size:
                    model.popitem(last=False)
                    evictions += 1
                model[key] = size
        pool.get((n,), F32, "cpu", tag=tag)
        assert pool.bytes_held <= cap
    stats = pool.stats
    assert (stats.hits, stats.misses, stats.evictions, stats.uncached) == (
        hits,
        misses,
        evictions,
        uncached,
    )
    assert [(h.name, h.key.shape[0]) for h in pool.buffers()] == list(model)
    assert stats.bytes_held == sum(model.values())


def test_inspecting_and_clearing_while_other_threads_hit_never_fails() -> None:
    # Hits take no lock and move their key to the end of the LRU order; a walk over the
    # held buffers that a thread switch interrupts must not see that as a mutation.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    pool = BufferPool()
    hot = pool.scope("hot")
    for i in range(500):
        hot.empty(f"b{i}", (1,), F32, "cpu")
    stop = threading.Event()
    errors: list[BaseException] = []

    def hit_forever() -> None:
        i = 0
        while not stop.is_set():
            hot.empty(f"b{i % 500}", (1,), F32, "cpu")
            i += 1

    hitter = threading.Thread(target=hit_forever)
    hitter.start()
    try:
        for round_ in range(40):
            try:
                pool.buffers()
                hot.buffers()
                assert hot.bytes_held == 2000
                cold = pool.scope(f"cold{round_}")
                cold.empty("ws", (2,), F32, "cpu")
                cold.clear()
                cold.close()  # releases a name: walks the held buffers for its prefix
            except RuntimeError as error:
                errors.append(error)
    finally:
        stop.set()
        hitter.join()
        sys.setswitchinterval(previous)
    assert errors == []


def test_a_buffer_first_asked_for_under_inference_mode_serves_later_calls_outside_it() -> None:
    # A server calls its launchers under torch.inference_mode(); a check, a benchmark or
    # a CUDA-graph warm-up calls them outside it. An inference tensor refuses in-place
    # writes there, so the pool's buffers must be normal tensors.
    pool = BufferPool()
    with torch.inference_mode():
        inside = pool.get((3,), F32, "cpu", tag="out")
        torch.mul(torch.ones(3), 2.0, out=inside)
    outside = pool.get((3,), F32, "cpu", tag="out")
    assert outside is inside and not outside.is_inference()
    torch.mul(torch.ones(3), 3.0, out=outside)
    outside.zero_()
    with torch.inference_mode():
        torch.add(torch.ones(3), 1.0, out=pool.get((3,), F32, "cpu", tag="out"))
    assert outside.tolist() == [2.0] * 3


def test_a_failed_allocation_is_not_counted_or_held(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = BufferPool(max_bytes=1 << 10)
    pool.get((4,), F32, "cpu", tag="kept")

    def out_of_memory(*args: object, **kwargs: object) -> torch.Tensor:
        raise torch.OutOfMemoryError("out of memory")

    monkeypatch.setattr(torch, "empty", out_of_memory)
    for cap_exceeded in (False, True):
        with pytest.raises(torch.OutOfMemoryError):
            pool.get((2048 if cap_exceeded else 8,), F32, "cpu", tag="new")
    monkeypatch.undo()
    stats = pool.stats
    assert (stats.misses, stats.uncached, stats.buffers_held, stats.bytes_held) == (1, 0, 1, 16)
    assert pool.get((8,), F32, "cpu", tag="new").shape == (8,)
    assert pool.stats.misses == 2
