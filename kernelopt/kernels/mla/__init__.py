"""Reference MLA decode kernels (DeepSeek-style absorbed attention over a paged cache).

Entry points:

* :class:`MLADecodePlan` — plan once per decode step, ``run`` per layer (no host sync, no
  workspace allocation in ``run``; CUDA-graph capturable).
* :func:`get_mla_metadata` / :func:`mla_decode_with_kvcache` — FlashMLA's signatures.
* :func:`mla_decode_ref` — the float64 PyTorch reference (ground truth, not a fast path).
* :func:`mla_decode_naive`, :func:`mla_decode_split_kv` — one strategy per module.
* :func:`split_kv_resources` — compile for sm_90a without a GPU; registers, spills, smem.

Submodules load on first use, so ``kernelopt.kernels.mla.schedule`` (pure Python) and
``kernelopt.kernels.mla.cost`` import without torch or triton. On a machine without CUDA,
set ``TRITON_INTERPRET=1`` before the first import to run the kernels on CPU tensors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from kernelopt.kernels.mla.api import (
        STRATEGIES,
        MLADecodePlan,
        Strategy,
        get_mla_metadata,
        mla_decode_with_kvcache,
    )
    from kernelopt.kernels.mla.cost import (
        mla_decode_bytes,
        mla_decode_floor_us,
        mla_decode_flops,
    )
    from kernelopt.kernels.mla.fp8 import FP8_KV_BYTES, dequantize_kv_fp8, quantize_kv_fp8
    from kernelopt.kernels.mla.naive import mla_decode_naive
    from kernelopt.kernels.mla.ref import mla_decode_ref
    from kernelopt.kernels.mla.resources import KernelResources, split_kv_resources
    from kernelopt.kernels.mla.schedule import Schedule, WorkUnit, plan_schedule
    from kernelopt.kernels.mla.split_kv import SplitKVConfig, mla_decode_split_kv

_EXPORTS = {
    "STRATEGIES": "api",
    "MLADecodePlan": "api",
    "Strategy": "api",
    "get_mla_metadata": "api",
    "mla_decode_with_kvcache": "api",
    "mla_decode_bytes": "cost",
    "mla_decode_floor_us": "cost",
    "mla_decode_flops": "cost",
    "FP8_KV_BYTES": "fp8",
    "dequantize_kv_fp8": "fp8",
    "quantize_kv_fp8": "fp8",
    "mla_decode_naive": "naive",
    "mla_decode_ref": "ref",
    "KernelResources": "resources",
    "split_kv_resources": "resources",
    "Schedule": "schedule",
    "WorkUnit": "schedule",
    "plan_schedule": "schedule",
    "SplitKVConfig": "split_kv",
    "mla_decode_split_kv": "split_kv",
}

__all__ = [
    "FP8_KV_BYTES",
    "STRATEGIES",
    "KernelResources",
    "MLADecodePlan",
    "Schedule",
    "SplitKVConfig",
    "Strategy",
    "WorkUnit",
    "dequantize_kv_fp8",
    "get_mla_metadata",
    "mla_decode_bytes",
    "mla_decode_floor_us",
    "mla_decode_flops",
    "mla_decode_naive",
    "mla_decode_ref",
    "mla_decode_split_kv",
    "mla_decode_with_kvcache",
    "plan_schedule",
    "quantize_kv_fp8",
    "split_kv_resources",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kernelopt.kernels.mla' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kernelopt.kernels.mla.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
