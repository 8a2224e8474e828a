"""A named set of persistent buffers for one call site, and the check on returned buffers.

A scope turns buffer names into pool tags (``"<scope>/<name>"``), so the call site asks
for ``"workspace"`` and ``"out"`` without choosing tags, and clearing the scope frees
exactly its buffers. The scope also remembers which of its buffers the last call
returned to the caller: if the next call would hand such a buffer out again while the
caller still references it (or any view of it), it raises instead of overwriting a
result the caller still holds.
"""

from __future__ import annotations

import copy as copy_module
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, TypeVar, cast

import torch

from kernelopt._errors import InputError, KernelOptError, expected
from kernelopt.buffers._tensors import (
    DeviceLike,
    ShapeLike,
    StreamLike,
    device_and_stream,
    normalize_shape,
    storage_ptr,
    storage_refs,
    validate_shape,
)
from kernelopt.buffers.out import resolve_out
from kernelopt.buffers.pool import BufferPool, _Entry, default_pool
from kernelopt.buffers.records import BufferKey, HeldBuffer

__all__ = ["BufferScope"]

_Key = tuple[Any, ...]
T = TypeVar("T")

# Records a scope keeps before it first prunes those of evicted buffers.
_PRUNE_MIN = 256


def _rebuilt_sequence(value: tuple[Any, ...] | list[Any], items: list[Any]) -> Any:
    """``value``'s type holding ``items`` where it can be rebuilt without guessing its
    constructor: a named tuple, a ``torch.return_types`` result (what ``topk`` or
    ``max(dim)`` return), a list or dict subclass. Other tuples come back as tuples."""
    if isinstance(value, list):
        if type(value) is list:
            return items
        rebuilt = _shallow_copy(value)
        if rebuilt is None:
            return items
        rebuilt[:] = items
        return rebuilt
    kind = type(value)
    if hasattr(value, "_fields"):  # a NamedTuple
        return kind(*items)
    if hasattr(value, "n_sequence_fields"):  # a struct sequence: torch.return_types
        return kind(items)
    return tuple(items)


def _rebuilt_mapping(value: dict[Any, Any], settled: dict[Any, Any]) -> dict[Any, Any]:
    """``value``'s type (an OrderedDict, a defaultdict...) holding the ``settled`` values."""
    if type(value) is dict:
        return settled
    rebuilt = _shallow_copy(value)
    if rebuilt is None:
        return settled
    rebuilt.update(settled)
    return rebuilt


def _shallow_copy(value: T) -> T | None:
    """A shallow copy, which keeps a subclass's type and state without calling its
    constructor (a defaultdict's factory); None for an object that cannot be copied."""
    try:
        return copy_module.copy(value)
    except TypeError:
        return None


def _still_referenced(entry: _Entry, serial: int) -> bool:
    """Whether the buffer a call returned as loan ``serial`` is still referenced by the
    caller: the same allocation, with more references to its storage than the pool's own."""
    return (
        serial == entry.serial
        and entry.baseline is not None
        and storage_refs(entry.tensor) > entry.baseline
    )


class BufferScope:
    """The persistent buffers of one call site, by name.

    Parameters
    ----------
    name : str
        The scope's name, unique within its pool (no ``"/"``; it prefixes the tags).
    pool : BufferPool, optional
        Where the buffers live; defaults to :func:`~kernelopt.buffers.default_pool`.

    Raises
    ------
    InputError
        An empty name, a name with ``"/"``, a name another scope of this pool uses, or a
        ``pool`` that is no :class:`~kernelopt.buffers.BufferPool`.

    Examples
    --------
    >>> import torch
    >>> from kernelopt.buffers import BufferPool, BufferScope
    >>> scope = BufferScope("rmsnorm", pool=BufferPool())
    >>> a = scope.empty("partial_sums", (8, 16), torch.float32, "cpu")
    >>> a is scope.empty("partial_sums", (8, 16), torch.float32, "cpu")
    True
    >>> a is scope.empty("partial_sums", (4, 16), torch.float32, "cpu")  # new key
    False
    """

    def __init__(self, name: str, *, pool: BufferPool | None = None) -> None:
        self._init(name, pool=pool, unique=False)

    @classmethod
    def _unique(cls, name: str, *, pool: BufferPool | None) -> BufferScope:
        """A scope named ``name``, or ``name#2``, ``name#3``... if that is taken."""
        scope = cls.__new__(cls)
        scope._init(name, pool=pool, unique=True)
        return scope

    @classmethod
    def _owned(cls, name: str, *, pool: BufferPool | None, owner: str) -> BufferScope:
        """A scope named ``name`` for the launcher ``owner`` defines; a live scope that
        the same definition made before (the cell run again) is closed and replaced."""
        scope = cls.__new__(cls)
        scope._init(name, pool=pool, unique=False, owner=owner)
        return scope

    def _init(
        self, name: str, *, pool: BufferPool | None, unique: bool, owner: str | None = None
    ) -> None:
        if not isinstance(name, str) or not name or "/" in name:
            raise InputError(expected("a non-empty scope name without '/'", repr(name)))
        if pool is not None and not isinstance(pool, BufferPool):
            raise InputError(expected("a BufferPool or None", repr(pool), where="pool"))
        self._pool = default_pool() if pool is None else pool
        if owner is not None:
            self._pool._take_over(name, owner)
        self._name = self._pool._claim_scope_name(name, unique=unique)
        if owner is not None:
            self._pool._hold(self._name, owner, self)
        # A scope that is garbage-collected gives its name and buffers back to the pool
        # (launchers a factory builds and drops, a notebook cell run again).
        self._finalizer = weakref.finalize(self, self._pool._scope_released, self._name)
        self._finalizer.atexit = False
        self._closed = False
        # What closed the scope, for the refusal of later calls: the user's close(), or
        # a launcher defined again under the same name (an old reference still called).
        self._closed_by = "close()"
        self._tags: dict[str, str] = {}  # buffer name -> pool tag
        self._seen: dict[_Key, int] = {}  # key -> serial of the entry last handed out
        self._by_ptr: dict[int, tuple[_Key, int]] = {}  # storage address -> (key, serial)
        self._loans: dict[_Key, int] = {}  # key -> serial, returned by the last call
        self._prune_at = _PRUNE_MIN  # len(self._seen) that triggers _forget_evicted
        # Run by close(): a method's launcher closes its instances' scopes with its own.
        self._on_close: Callable[[], None] | None = None

    @property
    def name(self) -> str:
        """The scope's name (the prefix of its tags)."""
        return self._name

    @property
    def pool(self) -> BufferPool:
        """The pool the buffers live in."""
        return self._pool

    def tag(self, name: str) -> str:
        """The pool tag of one of the scope's buffers.

        Parameters
        ----------
        name : str
            The buffer's name within the scope, non-empty.

        Returns
        -------
        str
            ``"<scope>/<name>"``.

        Raises
        ------
        InputError
            If ``name`` is empty or not a str, or (for a name not tagged before) the
            scope was closed.
        """
        try:
            tag = self._tags.get(name)
        except TypeError:  # an unhashable name (a list): refused below
            tag = None
        if tag is None:
            if self._closed:
                self._refuse_closed()
            if not isinstance(name, str) or not name:
                raise InputError(expected("a non-empty buffer name", repr(name), where="name"))
            tag = self._tags[name] = f"{self._name}/{name}"
        return tag

    def empty(
        self,
        name: str,
        shape: ShapeLike,
        dtype: torch.dtype,
        device: DeviceLike,
        *,
        stream: StreamLike = None,
    ) -> torch.Tensor:
        """Return the persistent buffer ``name`` for this shape, dtype, device and stream.

        The same tensor (same ``data_ptr``) comes back while the key is unchanged and the
        buffer is neither evicted nor cleared. Its contents are what the previous call
        left: write every element before reading it.

        Parameters
        ----------
        name : str
            The buffer's name within the scope (``"workspace"``, ``"out"``).
        shape : int or sequence of int
            Shape of the contiguous tensor.
        dtype : torch.dtype
            Element type.
        device : torch.device, str or int
            Device; a bare ``"cuda"`` means the current CUDA device.
        stream : int or torch.cuda.Stream, optional
            The stream it is used on; defaults to the current stream of ``device``.

        Raises
        ------
        KernelOptError
            The previous call returned this buffer and the caller still references it
            (or a view of it): handing it out again would overwrite the caller's result.
        InputError
            A bad name, shape, dtype or device.
        """
        try:
            tag = self._tags.get(name)
        except TypeError:  # an unhashable name: tag() refuses it as an InputError
            tag = None
        if tag is None:
            tag = self.tag(name)
        dev, sid = device_and_stream(device, stream)
        if type(shape) is not tuple:
            shape = normalize_shape(shape)
        # As in BufferPool.get: (2.0, 3) and (True, 3) would hit (2, 3) and (1, 3).
        for dim in shape:
            if type(dim) is not int:  # np.int64 becomes int; 2.0 and True are refused
                shape = validate_shape(shape)
                break
        key = (shape, dtype, dev, sid, tag)
        entry = self._pool._acquire(key, name)
        if self._seen.get(key) != entry.serial:
            self._remember(key, entry)
        if self._loans:
            self._check_loan(entry)
        return entry.tensor

    def zeros(
        self,
        name: str,
        shape: ShapeLike,
        dtype: torch.dtype,
        device: DeviceLike,
        *,
        stream: StreamLike = None,
    ) -> torch.Tensor:
        """:meth:`empty`, zero-filled on every call.

        For buffers a kernel accumulates into (atomic adds, split-K partial sums,
        semaphores): the memset is a launch, but still cheaper than an allocation plus a
        memset, and it keeps the buffer's contents a function of this call only.

        Parameters
        ----------
        name, shape, dtype, device, stream
            As for :meth:`empty`.

        Returns
        -------
        torch.Tensor
            The persistent buffer ``name``, every element zero.
        """
        return self.empty(name, shape, dtype, device, stream=stream).zero_()

    def resolve_out(
        self,
        out: torch.Tensor | None,
        shape: ShapeLike,
        dtype: torch.dtype,
        device: DeviceLike,
        name: str = "out",
        *,
        inputs: Mapping[str, object] | Sequence[object] | torch.Tensor = (),
        in_place: str | int | None = None,
    ) -> torch.Tensor:
        """The caller's ``out`` after checking it, or this scope's buffer ``name``.

        :func:`kernelopt.buffers.resolve_out` with ``scope=self``.

        Parameters
        ----------
        out : torch.Tensor or None
            The caller's output tensor, of shape ``shape``, or None for this scope's
            persistent buffer ``name``.
        shape : int or sequence of int
            The output's shape.
        dtype : torch.dtype
            The output's element type.
        device : torch.device, str or int
            The output's device.
        name : str
            The argument name in errors, and the buffer's name in this scope.
        inputs : mapping of str to object, sequence of object, or torch.Tensor of any shape
            What the kernel reads while it writes the output; a given ``out`` must share
            no memory with its tensors, nested ones included (see
            :func:`kernelopt.buffers.check_out`).
        in_place : str or int, optional
            The input a given ``out`` may be itself, for a kernel that updates it element
            by element (see :func:`kernelopt.buffers.check_out`).

        Returns
        -------
        torch.Tensor
            ``out`` itself when given; otherwise the scope's buffer, whose contents are
            unspecified (write every element).

        Raises
        ------
        InputError
            A given ``out`` of the wrong type, shape, dtype, device or layout, or one
            that overlaps an input other than as the ``in_place`` one itself.
        """
        return resolve_out(
            out, shape, dtype, device, name, scope=self, inputs=inputs, in_place=in_place
        )

    def _remember(self, key: _Key, entry: _Entry) -> None:
        if not entry.held:
            return  # an oversize request the pool did not keep: nothing persists
        self._seen[key] = entry.serial
        if entry.ptr:
            self._by_ptr[entry.ptr] = (entry.key, entry.serial)
        if len(self._seen) > self._prune_at:
            self._forget_evicted()

    def _forget_evicted(self) -> None:
        """Drop the records of buffers the pool no longer holds.

        Every distinct key adds a record here, and with many shapes a capped pool evicts
        the buffers but would keep their records forever. Pruning when the records
        double keeps the cost amortized constant per request.
        """
        held = self._pool._held

        def gone(key: _Key, serial: int) -> bool:
            entry = held(key)
            return entry is None or entry.serial != serial

        # Walk copies (dict.copy is one C call) and pop from the live dicts: a thread
        # using this scope on another stream may add records meanwhile.
        for key, serial in self._seen.copy().items():
            if gone(key, serial):
                self._seen.pop(key, None)
        for ptr, (key, serial) in self._by_ptr.copy().items():
            if gone(key, serial):
                self._by_ptr.pop(ptr, None)
        for key, serial in self._loans.copy().items():
            if gone(key, serial):  # a lent buffer since evicted belongs to its holder
                self._loans.pop(key, None)
        self._prune_at = max(_PRUNE_MIN, 2 * len(self._seen))

    def _check_loan(self, entry: _Entry) -> None:
        serial = self._loans.get(entry.key)
        if serial is None:
            return
        if _still_referenced(entry, serial):
            raise KernelOptError(
                expected(
                    f"buffer {entry.name!r} (returned by the previous call of scope "
                    f"{self._name!r}) to be released before this call overwrites it",
                    "a live reference to it or to a view of it (y = launcher(...) called "
                    "again holds the previous y until the call returns); drop it (del y "
                    "first), copy it (.clone()), pass out=, or use on_return='copy'",
                )
            )
        # pop, not del: another thread's pruning (_forget_evicted) may have dropped it
        # since the lookup above, when its buffer was evicted meanwhile.
        self._loans.pop(entry.key, None)

    def _still_held(self) -> set[_Key]:
        """Keys of buffers a call returned that the caller still references.

        What :meth:`_check_loan` would refuse to hand out again: writing into one of
        them (a check that fills buffers) would change a result the caller holds.
        """
        kept = set()
        for key, serial in self._loans.copy().items():
            entry = self._pool._held(key)
            if entry is not None and _still_referenced(entry, serial):
                kept.add(key)
        return kept

    # -- returned values ---------------------------------------------------------------

    def _settle(self, result: T, *, copy: bool) -> T:
        """Track (or copy) the scope's buffers in a launcher's return value.

        Walks tensors, tuples (named tuples and ``torch.return_types`` too), lists and
        dict values; a container is rebuilt, in its own type, only when it holds a
        buffer to track or copy. Other objects are returned as they are and their
        contents are not tracked.
        """
        if not self._by_ptr:
            return result
        if type(result) is torch.Tensor:  # the common case, without the generic walk
            return cast(T, self._settle_tensor(cast(torch.Tensor, result), copy))
        return self._settle_value(result, copy)  # type: ignore[no-any-return]

    def _settle_value(self, value: Any, copy: bool) -> Any:
        if isinstance(value, torch.Tensor):
            return self._settle_tensor(value, copy)
        if isinstance(value, (tuple, list)):
            items = [self._settle_value(v, copy) for v in value]
            if all(new is old for new, old in zip(items, value, strict=True)):
                return value  # no scope buffer inside: the caller's object, untouched
            return _rebuilt_sequence(value, items)
        if isinstance(value, dict):
            settled = {k: self._settle_value(v, copy) for k, v in value.items()}
            if all(settled[k] is v for k, v in value.items()):
                return value
            return _rebuilt_mapping(value, settled)
        return value

    def _settle_tensor(self, tensor: torch.Tensor, copy: bool) -> torch.Tensor:
        # Address 0 (empty storage, meta tensors) is never registered, so never matches.
        found = self._by_ptr.get(storage_ptr(tensor))
        if found is None:
            return tensor
        key, serial = found
        entry = self._pool._held(key)
        if entry is None or entry.serial != serial:
            return tensor  # evicted since: the caller now owns that memory alone
        if copy:
            return tensor.clone()
        self._loans[key] = serial
        # Storage references count tensors, not Python names: hand out a separate alias
        # so that the caller holding it raises the count above the pool's baseline.
        return tensor.detach() if tensor is entry.tensor else tensor

    # -- lifetime and inspection -------------------------------------------------------

    def buffers(self) -> list[HeldBuffer]:
        """This scope's buffers held in the pool now, least recently used first."""
        return [
            HeldBuffer(name=entry.name, key=BufferKey._make(entry.key), tensor=entry.tensor)
            for entry in self._pool._entries_with_tags(self._tags.values())
        ]

    @property
    def bytes_held(self) -> int:
        """Bytes of this scope's buffers held in the pool now, in bytes."""
        return sum(e.nbytes for e in self._pool._entries_with_tags(self._tags.values()))

    def clear(self) -> None:
        """Drop this scope's buffers from the pool (tensors a caller holds stay valid)."""
        self._pool._discard_tags(self._tags.values())
        self._seen.clear()
        self._by_ptr.clear()
        self._loans.clear()

    def close(self) -> None:
        """Drop this scope's buffers and give its name back to the pool.

        A closed scope hands out no more buffers; tensors a caller holds stay valid. A
        scope that is garbage-collected is closed the same way, at the pool's next
        allocation or inspection.
        """
        self._close("close()")

    def _close(self, closed_by: str) -> None:
        """:meth:`close`, remembering ``closed_by`` for the refusal of later calls."""
        if self._closed:
            return
        self.clear()
        self._tags.clear()
        self._closed = True
        self._closed_by = closed_by
        if self._finalizer.detach() is not None:
            self._pool._release_scope(self._name)
        if self._on_close is not None:
            self._on_close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def _refuse_closed(self) -> NoReturn:
        raise InputError(
            expected(f"an open scope {self._name!r}", f"a scope closed by {self._closed_by}")
        )

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"buffers={len(self.buffers())}"
        return f"BufferScope({self._name!r}, {state})"
