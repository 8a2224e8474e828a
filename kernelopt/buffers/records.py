"""Typed records of the buffer pool: a buffer's key, a held buffer, the pool's counters."""

from __future__ import annotations

from typing import NamedTuple

import attrs
import torch

from kernelopt._errors import InputError, expected

__all__ = ["BufferKey", "HeldBuffer", "PoolStats"]


class BufferKey(NamedTuple):
    """What identifies one persistent buffer: equal keys mean the same tensor.

    A plain tuple with the same five items compares and hashes equal, which is what the
    pool's hit path builds.

    Parameters
    ----------
    shape : tuple of int
        The tensor's shape (contiguous layout).
    dtype : torch.dtype
        Element type.
    device : torch.device
        Where the memory lives; CUDA devices always carry an index.
    stream : int
        Id of the stream the buffer is used on (``stream_id`` of a ``torch.cuda.Stream``);
        0 off CUDA. Two streams never share a buffer, so one cannot overwrite what the
        other is still reading.
    tag : str
        Names the use: two buffers of the same shape that are alive at once need two tags.
    """

    shape: tuple[int, ...]
    dtype: torch.dtype
    device: torch.device
    stream: int
    tag: str


class HeldBuffer(NamedTuple):
    """One buffer a pool or a scope holds: its name there, its key and the tensor."""

    name: str
    key: BufferKey
    tensor: torch.Tensor


def _count(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(expected("a non-negative int", repr(value), where=attribute.name))


def _cap(_instance: object, attribute: attrs.Attribute[int | None], value: int | None) -> None:
    if value is not None:
        _count(_instance, attribute, value)  # type: ignore[arg-type]


@attrs.frozen(kw_only=True)
class PoolStats:
    """A snapshot of a :class:`~kernelopt.buffers.BufferPool`'s counters.

    Parameters
    ----------
    hits : int
        Requests answered with a buffer the pool already held.
    misses : int
        Requests that allocated (``uncached`` included).
    evictions : int
        Buffers dropped to stay under ``max_bytes``, or under the number of zero-size
        buffers a capped pool keeps (least recently used first).
    uncached : int
        Requests larger than ``max_bytes`` on their own: answered with a fresh tensor
        that the pool does not keep.
    buffers_held : int
        Buffers held now.
    bytes_held : int
        Bytes held now, in bytes.
    max_bytes : int or None
        The cap, in bytes; None means no cap.
    """

    hits: int = attrs.field(validator=_count)
    misses: int = attrs.field(validator=_count)
    evictions: int = attrs.field(validator=_count)
    uncached: int = attrs.field(validator=_count)
    buffers_held: int = attrs.field(validator=_count)
    bytes_held: int = attrs.field(validator=_count)
    max_bytes: int | None = attrs.field(validator=_cap)

    @property
    def requests(self) -> int:
        """Hits plus misses."""
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        """Share of requests that hit, 0..1 (0 before any request)."""
        return self.hits / self.requests if self.requests else 0.0
