"""A pool of persistent tensors keyed by (shape, dtype, device, stream, tag).

``torch.empty`` on every kernel call pays the caching allocator and the dispatcher each
time; for a small decode kernel that host work can exceed the kernel itself. A pool
hands back the same tensor while the key is unchanged, so the call pays a dictionary
lookup instead. This is right only while every call recomputes what it reads from the
buffer (see :func:`kernelopt.buffers.check_no_stale_reads`).
"""

from __future__ import annotations

import itertools
import numbers
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import torch

from kernelopt._errors import InputError, KernelOptError, expected
from kernelopt.buffers._tensors import (
    DeviceLike,
    ShapeLike,
    StreamLike,
    device_and_stream,
    nbytes_of,
    normalize_shape,
    storage_ptr,
    storage_refs_or_none,
    validate_dtype,
    validate_shape,
)
from kernelopt.buffers.records import BufferKey, HeldBuffer, PoolStats

if TYPE_CHECKING:
    from kernelopt.buffers.scope import BufferScope

__all__ = ["BufferPool", "default_pool"]

# Keys are plain tuples on the hot path; BufferKey (a NamedTuple) hashes equal to them.
_Key = tuple[Any, ...]
_SERIALS = itertools.count(1)

# Zero-size buffers a capped pool keeps at most. They weigh nothing against max_bytes, yet
# each held one costs host memory (the tensor, its key): without a count, a stream of
# empty shapes grows the pool without limit.
_MAX_EMPTY = 256


class _Entry:
    """One allocation the pool made; ``serial`` tells a re-allocation from the original."""

    __slots__ = ("baseline", "held", "key", "name", "nbytes", "ptr", "serial", "tensor")

    def __init__(self, key: _Key, name: str, tensor: torch.Tensor, nbytes: int, held: bool):
        self.key = key
        self.name = name
        self.tensor = tensor
        self.nbytes = nbytes
        self.held = held
        self.serial = next(_SERIALS)
        # Zero-byte tensors share address 0; they cannot alias anything worth tracking.
        self.ptr = storage_ptr(tensor) if nbytes else 0
        # Storage references with only the pool holding the tensor; a larger count later
        # means someone else holds the tensor, a view of it or its storage object.
        self.baseline = storage_refs_or_none(tensor)


def _new_buffer(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A normal (not inference) tensor, whatever mode the first request came in.

    A buffer first asked for under ``torch.inference_mode()`` would otherwise be an
    inference tensor, which refuses in-place writes outside that mode: every later
    call outside it (a check, a benchmark, a graph warm-up) would fail.
    """
    with torch.inference_mode(False):
        return torch.empty(shape, dtype=dtype, device=device)


def _normalized_key(key: object) -> _Key:
    """``key`` as the pool holds it: shape a tuple of ints, device a ``torch.device``.

    Parameters
    ----------
    key : BufferKey, tuple or list
        Five items (shape, dtype, device, stream, tag), spelled as :meth:`BufferPool.get`
        takes them (``[32, 16]``, ``"cpu"``, ``stream=None`` for the current stream).

    Raises
    ------
    InputError
        ``key`` is no five-item tuple or list, or one of its items is not one ``get``
        takes.
    DeviceError
        A CUDA device where torch sees none.
    """
    items = tuple(key) if isinstance(key, (tuple, list)) else ()
    if len(items) != 5:
        # tuple("lse") is five letters' worth of nothing: it matched no key, and
        # discard answered False as if the buffer had gone.
        raise InputError(
            expected(
                "a BufferKey or a tuple (shape, dtype, device, stream, tag)",
                repr(key)[:80],
                where="key",
            )
        )
    shape, dtype, device, stream, tag = items
    # The key the pool holds spells the shape as a tuple and the device as a
    # torch.device: ((32, 16), float32, "cpu", 0, "lse") would match nothing. A dtype
    # spelled "float32" or a tag that is no str is refused as get refuses it, not
    # answered as if the buffer had gone.
    normalized = (
        validate_shape(normalize_shape(shape)),
        validate_dtype(dtype),
        *device_and_stream(device, stream),
        tag,
    )
    if not isinstance(tag, str):
        raise InputError(expected("tag as a str", repr(tag), where="tag"))
    return normalized


def _check_cap(max_bytes: int | None) -> int | None:
    if max_bytes is None:
        return None
    # Integral, not int: a cap computed with numpy (np.int64) is an int all the same.
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, numbers.Integral) or max_bytes < 0:
        raise InputError(expected("max_bytes as a non-negative int or None", repr(max_bytes)))
    return int(max_bytes)


class BufferPool:
    """Persistent tensors keyed by (shape, dtype, device, stream, tag), with an LRU byte cap.

    Parameters
    ----------
    max_bytes : int, optional
        Cap on the bytes held, in bytes. A new buffer that would exceed it evicts the least
        recently used buffers first; a single request larger than the cap is answered with
        a fresh tensor that the pool does not keep (counted in ``stats.uncached``).
        None (the default) means no cap.

    Notes
    -----
    Requests that hit take no lock (single OrderedDict operations are atomic); under
    concurrent use from several threads the hit counter may undercount slightly.
    Equal keys return the same tensor, so its address (``data_ptr``) is stable while the
    key is unchanged and the buffer is not evicted or cleared: what CUDA graphs need.
    Two buffers alive at once with the same shape, dtype, device and stream need distinct
    tags; :class:`~kernelopt.buffers.BufferScope` builds tags from a scope and buffer name.
    An evicted tensor that a caller still references stays valid (torch frees memory only
    when the last reference goes); it is just no longer handed out. Buffers are normal
    tensors even when first requested under ``torch.inference_mode()``, so calls outside
    that mode can write them too.

    Zero-size buffers (a 0 among the dims) hold no bytes, so ``max_bytes`` alone would
    let a pool keep one per shape without limit (each costs host memory): a capped pool
    keeps at most 256 of them, evicting the least recently used one beyond that
    (counted in ``stats.evictions``). A pool without a cap bounds nothing.

    Examples
    --------
    >>> import torch
    >>> from kernelopt.buffers import BufferPool
    >>> pool = BufferPool(max_bytes=1 << 20)
    >>> a = pool.get((4, 8), torch.float32, "cpu", tag="workspace")
    >>> b = pool.get((4, 8), torch.float32, "cpu", tag="workspace")
    >>> a.data_ptr() == b.data_ptr()
    True
    >>> pool.stats.hits, pool.stats.misses, pool.stats.bytes_held
    (1, 1, 128)
    """

    def __init__(self, *, max_bytes: int | None = None) -> None:
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._max_bytes = _check_cap(max_bytes)
        self._bytes = 0
        self._empties = 0  # zero-size buffers held
        self._hits = 0
        self._misses = 0
        self._evictions = 0
        self._uncached = 0
        self._scope_names: set[str] = set()
        # name -> (what defined the scope, the scope): a launcher defined again under its
        # explicit name (a notebook cell run again, a module reloaded) takes the name over.
        self._holders: dict[str, tuple[str, weakref.ref[Any]]] = {}
        # Names of scopes garbage-collected since the last drain. A finalizer only appends
        # here: it may run inside this pool's locked sections (a collection triggered by an
        # allocation), so it must not take the lock itself.
        self._released: list[str] = []

    # -- requests ---------------------------------------------------------------------

    def get(
        self,
        shape: ShapeLike,
        dtype: torch.dtype,
        device: DeviceLike,
        *,
        tag: str = "",
        stream: StreamLike = None,
    ) -> torch.Tensor:
        """Return the pool's tensor for this key, allocating it on first use.

        Parameters
        ----------
        shape : int or sequence of int
            Shape of the contiguous tensor.
        dtype : torch.dtype
            Element type.
        device : torch.device, str or int
            Device; a bare ``"cuda"`` means the current CUDA device.
        tag : str
            Names the use; buffers alive at the same time need distinct tags.
        stream : int or torch.cuda.Stream, optional
            Stream the buffer is used on; defaults to the current stream of ``device``.

        Returns
        -------
        torch.Tensor
            Contents are whatever the previous user left (uninitialized on first use):
            write every element you read.

        Raises
        ------
        InputError
            A bad shape, dtype, device or tag.
        KernelOptError
            A new buffer is requested while a CUDA graph is being captured on its stream.
        RuntimeError
            torch could not allocate a new buffer (``torch.OutOfMemoryError`` on CUDA).
            The request is not counted; buffers evicted to make room for it stay evicted.
        """
        dev, sid = device_and_stream(device, stream)
        if type(shape) is not tuple:
            shape = normalize_shape(shape)
        # (2.0, 3) and (True, 3) hash and compare equal to (2, 3) and (1, 3): checked
        # before the lookup, which would hand them that shape's buffer. A loop over
        # the dims allocates nothing, unlike all() over a generator.
        for dim in shape:
            if type(dim) is not int:  # np.int64 becomes int; 2.0 and True are refused
                shape = validate_shape(shape)
                break
        key = (shape, dtype, dev, sid, tag)
        # The hit path, inlined: a lookup and an LRU touch. Single OrderedDict operations
        # are atomic, so hits take no lock; a buffer evicted by another thread between
        # the two steps is still a valid tensor, just no longer persistent.
        try:
            entry = self._entries.get(key)
        except TypeError:  # an unhashable part; _allocate reports which
            entry = None
        if entry is not None:
            try:  # noqa: SIM105 - contextlib.suppress costs more than the lookup
                self._entries.move_to_end(key)
            except KeyError:
                pass
            self._hits += 1
            return entry.tensor
        return self._acquire(key, tag).tensor

    def empty(
        self,
        shape: ShapeLike,
        *,
        dtype: torch.dtype | None = None,
        device: DeviceLike = "cpu",
        tag: str = "",
        stream: StreamLike = None,
    ) -> torch.Tensor:
        """:meth:`get` spelled like ``torch.empty`` (dtype defaults to torch's default).

        Parameters
        ----------
        shape : int or sequence of int
            Shape of the contiguous tensor.
        dtype : torch.dtype, optional
            Element type; ``torch.get_default_dtype()`` when None.
        device : torch.device, str or int
            Device (the CPU by default, as for ``torch.empty``).
        tag, stream
            As for :meth:`get`.

        Returns
        -------
        torch.Tensor
            As for :meth:`get`: write every element you read.
        """
        return self.get(
            shape,
            torch.get_default_dtype() if dtype is None else dtype,
            device,
            tag=tag,
            stream=stream,
        )

    def _acquire(self, key: _Key, name: str) -> _Entry:
        """The entry for ``key``: a hit without a lock, or an allocation under it."""
        try:
            entry = self._entries.get(key)
        except TypeError:  # an unhashable part; _allocate reports which
            entry = None
        if entry is not None:
            try:  # noqa: SIM105 - contextlib.suppress costs more than the lookup
                self._entries.move_to_end(key)
            except KeyError:
                pass
            self._hits += 1
            return entry
        with self._lock:
            return self._allocate(key, name)

    def _allocate(self, key: _Key, name: str) -> _Entry:
        if self._released:
            self._drain_released()
        raw_shape, raw_dtype, device, stream, tag = key
        shape = validate_shape(tuple(raw_shape))
        dtype = validate_dtype(raw_dtype)
        if not isinstance(tag, str):
            raise InputError(expected("tag as a str", repr(tag), where="tag"))
        key = (shape, dtype, device, stream, tag)
        entry = self._entries.get(key)
        if entry is not None:  # another thread allocated it first, or a non-int spelling
            self._entries.move_to_end(key)
            self._hits += 1
            return entry
        if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            # Memory allocated during capture belongs to the graph's private pool; a
            # persistent buffer must exist, at a fixed address, before capture starts.
            raise KernelOptError(
                expected(
                    "every persistent buffer to exist before CUDA graph capture "
                    "(run the launcher once on the capture stream first)",
                    f"a new buffer {tag!r} of shape {shape} requested during capture",
                )
            )
        nbytes = nbytes_of(shape, dtype)
        # Counters move only once torch.empty succeeded: an out-of-memory error leaves
        # the request uncounted.
        if self._max_bytes is not None and nbytes > self._max_bytes:
            fresh = _new_buffer(shape, dtype, device)
            self._misses += 1
            self._uncached += 1
            return _Entry(key, name, fresh, nbytes, held=False)
        if self._max_bytes is not None:
            # Evict before allocating so the allocator can reuse the freed blocks (if the
            # allocation still fails, those buffers stay evicted).
            self._evict_to(self._max_bytes - nbytes)
            if not nbytes:
                self._evict_empties_to(_MAX_EMPTY - 1)
        tensor = _new_buffer(shape, dtype, device)
        self._misses += 1
        entry = _Entry(key, name, tensor, nbytes, held=True)
        self._entries[key] = entry
        self._bytes += nbytes
        if not nbytes:
            self._empties += 1
        return entry

    def _evict_to(self, budget: int) -> None:
        while self._bytes > budget and self._entries:
            _key, old = self._entries.popitem(last=False)
            self._dropped(old)
            self._evictions += 1

    def _evict_empties_to(self, limit: int) -> None:
        """Evict the least recently used zero-size buffers until ``limit`` are left."""
        while self._empties > limit:
            try:
                key = next((k for k, e in self._entries.items() if not e.nbytes), None)
            except RuntimeError:  # a lock-free hit reordered the dict mid-walk: walk again
                continue
            if key is None:  # pragma: no cover - the count says there is one
                self._empties = 0
                return
            self._dropped(self._entries.pop(key))
            self._evictions += 1

    def _dropped(self, entry: _Entry) -> None:
        """Account for an entry just removed from ``_entries``; call with the lock held."""
        self._bytes -= entry.nbytes
        if not entry.nbytes:
            self._empties -= 1

    def _held(self, key: _Key) -> _Entry | None:
        """The entry held for ``key`` now, without touching LRU order or counters."""
        return self._entries.get(key)

    # -- lifetime ---------------------------------------------------------------------

    @property
    def max_bytes(self) -> int | None:
        """The cap on bytes held, in bytes (None: no cap); setting it evicts to fit."""
        return self._max_bytes

    @max_bytes.setter
    def max_bytes(self, value: int | None) -> None:
        cap = _check_cap(value)
        with self._lock:
            self._max_bytes = cap
            if cap is not None:
                self._evict_to(cap)
                self._evict_empties_to(_MAX_EMPTY)

    def discard(self, key: BufferKey | tuple[Any, ...]) -> bool:
        """Drop the buffer held for a key.

        Parameters
        ----------
        key : BufferKey or tuple
            The buffer's key, or a plain tuple of its five items (shape, dtype, device,
            stream, tag); the shape and device may be spelled as :meth:`get` takes them
            (``[32, 16]``, ``"cpu"``).

        Returns
        -------
        bool
            Whether a buffer was held for the key.

        Raises
        ------
        InputError
            If ``key`` is not a tuple of five items (a tag alone names no buffer), or its
            shape, dtype, device, stream or tag is not one :meth:`get` takes.
        """
        normalized = _normalized_key(key)
        with self._lock:
            entry = self._entries.pop(normalized, None)
            if entry is None:
                return False
            self._dropped(entry)
            return True

    def _discard_tags(self, tags: Iterable[str]) -> None:
        wanted = set(tags)
        with self._lock:
            for key in [k for k in self._keys() if k[4] in wanted]:
                self._dropped(self._entries.pop(key))

    def clear(self) -> None:
        """Drop every buffer (counters are kept; see :meth:`reset_stats`)."""
        with self._lock:
            self._entries.clear()
            self._bytes = self._empties = 0

    def reset_stats(self) -> None:
        """Zero the hit, miss, eviction and uncached counters."""
        with self._lock:
            self._hits = self._misses = self._evictions = self._uncached = 0

    # -- inspection -------------------------------------------------------------------

    @property
    def stats(self) -> PoolStats:
        """A snapshot of the counters and of what is held now."""
        with self._lock:
            self._drain_released()
            return PoolStats(
                hits=self._hits,
                misses=self._misses,
                evictions=self._evictions,
                uncached=self._uncached,
                buffers_held=len(self._entries),
                bytes_held=self._bytes,
                max_bytes=self._max_bytes,
            )

    @property
    def bytes_held(self) -> int:
        """Bytes held now, in bytes."""
        if self._released:
            with self._lock:
                self._drain_released()
        return self._bytes

    def buffers(self) -> list[HeldBuffer]:
        """The buffers held now, least recently used first.

        ``name`` is the tag for a buffer requested from the pool, and the buffer's name
        in its scope for a scope's buffer (``key.tag`` is ``"<scope>/<name>"``).
        """
        with self._lock:
            self._drain_released()
            return [
                HeldBuffer(name=entry.name, key=BufferKey._make(key), tensor=entry.tensor)
                for key, entry in self._items()
            ]

    def _entries_with_tags(self, tags: Iterable[str]) -> list[_Entry]:
        wanted = set(tags)
        with self._lock:
            return [entry for key, entry in self._items() if key[4] in wanted]

    def _keys(self) -> list[_Key]:
        return [key for key, _entry in self._items()]

    def _items(self) -> list[tuple[_Key, _Entry]]:
        """A copy of the held entries in LRU order; call with the lock held."""
        # Hits reorder the OrderedDict without taking the lock, and a walk that another
        # thread's hit interrupts raises "mutated during iteration" (even list() can be
        # interrupted, by a garbage collection that runs finalizers). Under the lock only
        # hits can run, and they reorder without adding or removing: copy again.
        while True:
            try:
                return list(self._entries.items())
            except RuntimeError:
                continue

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether a buffer is held for ``key``, spelled as :meth:`discard` takes it.

        ``((32, 16), torch.float32, "cpu", 0, "lse") in pool`` is True exactly when
        ``discard`` would drop a buffer for it; anything that is no such key is False.
        """
        try:
            normalized = _normalized_key(key)
        except KernelOptError:  # no key get would build (or a device absent here)
            return False
        return normalized in self._entries

    def __repr__(self) -> str:
        cap = "none" if self._max_bytes is None else f"{self._max_bytes} B"
        held = f"buffers={len(self._entries)}, bytes_held={self._bytes}"
        return f"BufferPool({held}, max_bytes={cap})"

    # -- scopes -----------------------------------------------------------------------

    def scope(self, name: str) -> BufferScope:
        """A new scope of buffers over this pool.

        Parameters
        ----------
        name : str
            The scope's name; its buffers are tagged ``"<name>/<buffer>"`` in the pool.

        Returns
        -------
        BufferScope
            The scope.
        """
        from kernelopt.buffers.scope import BufferScope

        return BufferScope(name, pool=self)

    def _claim_scope_name(self, name: str, *, unique: bool) -> str:
        # Scope names become tag prefixes, so two live scopes must never share one: the
        # second would silently overwrite the first one's buffers.
        with self._lock:
            if self._released:
                self._drain_released()
            if name not in self._scope_names:
                self._scope_names.add(name)
                return name
            if not unique:
                raise InputError(
                    expected(
                        "a scope name not yet used in this pool",
                        f"{name!r}, held by a live scope (close() it, or the launcher that "
                        "holds it, to reuse the name)",
                        where="name",
                    )
                )
            for suffix in itertools.count(2):
                candidate = f"{name}#{suffix}"
                if candidate not in self._scope_names:
                    self._scope_names.add(candidate)
                    return candidate
        raise AssertionError("unreachable")  # pragma: no cover

    def _take_over(self, name: str, owner: str) -> None:
        """Close the live scope named ``name`` if ``owner`` (module.qualname) defined it."""
        with self._lock:
            held = self._holders.get(name)
        scope = held[1]() if held is not None and held[0] == owner else None
        if scope is not None:
            # Outside the lock: closing takes it. The old launcher's later calls say why
            # it is closed, though nobody called its close().
            scope._close("defining its launcher again under the same name; call the new one")

    def _hold(self, name: str, owner: str, scope: Any) -> None:
        with self._lock:
            self._holders[name] = (owner, weakref.ref(scope))

    def _scope_released(self, name: str) -> None:
        """A scope's finalizer: queue its name and buffers for release (no lock taken)."""
        self._released.append(name)

    def _release_scope(self, name: str) -> None:
        """Release a closed scope's name and buffers now."""
        with self._lock:
            self._released.append(name)
            self._drain_released()

    def _drain_released(self) -> None:
        # Called with the lock held.
        while self._released:
            name = self._released.pop()
            self._scope_names.discard(name)
            self._holders.pop(name, None)
            prefix = f"{name}/"
            for key in [k for k in self._keys() if k[4].startswith(prefix)]:
                self._dropped(self._entries.pop(key))


_DEFAULT_POOL: BufferPool | None = None
_DEFAULT_LOCK = threading.Lock()


def default_pool() -> BufferPool:
    """The process-wide pool (no byte cap) that scopes and launchers use unless given one."""
    global _DEFAULT_POOL
    with _DEFAULT_LOCK:
        if _DEFAULT_POOL is None:
            _DEFAULT_POOL = BufferPool()
        return _DEFAULT_POOL
