"""NVTX ranges around timed regions, so Nsight Systems shows where kernelopt measured.

The ``nvtx`` package is used when installed; otherwise PyTorch's CUDA NVTX bindings; and
where neither works (the CPU backend, images without either) the ranges are no-ops.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

__all__ = ["nvtx_range"]

_Pair = tuple[Callable[[str], object], Callable[[], object]]
_RESOLVED: list[_Pair | None] = []


def _resolve() -> _Pair | None:
    try:
        import nvtx

        return (lambda message: nvtx.push_range(message=message)), nvtx.pop_range
    except ImportError:
        pass
    torch = sys.modules.get("torch")  # only if the caller already paid for importing torch
    if torch is not None:
        try:
            if torch.cuda.is_available():
                from torch.cuda import nvtx as torch_nvtx

                return torch_nvtx.range_push, torch_nvtx.range_pop
        except Exception:  # a torch build without NVTX
            return None
    return None


@contextlib.contextmanager
def nvtx_range(name: str, *, enabled: bool = True) -> Iterator[None]:
    """Push an NVTX range named ``name`` for the duration of the block (no-op if unavailable)."""
    if not enabled:
        yield
        return
    if not _RESOLVED:
        _RESOLVED.append(_resolve())
    pair = _RESOLVED[0]
    if pair is None:
        yield
        return
    push, pop = pair
    push(name)
    try:
        yield
    finally:
        pop()
