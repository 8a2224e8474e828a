"""Persistent buffers for kernel launchers.

Kernels that ``torch.empty`` their outputs and workspaces on every call pay the
allocator and the dispatcher every time, which can dominate small decode kernels. This
package keeps such buffers across calls, and guards the two ways that goes wrong:

- :class:`BufferPool`: tensors keyed by (shape, dtype, device, stream, tag), with an LRU
  byte cap and :class:`PoolStats` counters.
- :class:`BufferScope` and :func:`persistent_buffers`: named buffers per call site; a
  launcher that returns one of them is told when the next call would overwrite a
  result the caller still holds. :func:`resolve_out` takes the caller's ``out=``.
- :func:`capture_graph`: a launcher captured into a CUDA graph, replayed on new inputs.
- :func:`check_no_stale_reads`: poisons the buffers between calls to prove that no
  result depends on what a previous call left behind.

Importing this package imports torch; ``import kernelopt`` does not import it.
"""

from kernelopt.buffers.graph import CapturedGraph, capture_graph
from kernelopt.buffers.launcher import (
    BoundLauncher,
    OnReturn,
    PersistentLauncher,
    persistent_buffers,
)
from kernelopt.buffers.out import check_out, resolve_out
from kernelopt.buffers.pool import BufferPool, default_pool
from kernelopt.buffers.records import BufferKey, HeldBuffer, PoolStats
from kernelopt.buffers.scope import BufferScope
from kernelopt.buffers.stale import StaleRead, StaleReadReport, check_no_stale_reads, poison_

__all__ = [
    "BoundLauncher",
    "BufferKey",
    "BufferPool",
    "BufferScope",
    "CapturedGraph",
    "HeldBuffer",
    "OnReturn",
    "PersistentLauncher",
    "PoolStats",
    "StaleRead",
    "StaleReadReport",
    "capture_graph",
    "check_no_stale_reads",
    "check_out",
    "default_pool",
    "persistent_buffers",
    "poison_",
    "resolve_out",
]
