"""Compile the split-KV kernel for a GPU target without a GPU, and read its resources.

A tuning sweep wants to drop configurations that spill registers or overflow shared
memory before spending device time on them. :func:`split_kv_resources` compiles the kernel
ahead of time for ``sm_90a`` (or another target) with Triton's own compiler, runs the
``ptxas`` that ships with Triton on the result with ``-v``, and returns the registers per
thread, spill bytes, stack frame and shared memory, plus whether the code uses Hopper's
``wgmma``, asynchronous copies (``cp.async``, the pipelined loads) or only ``mma.sync``.

The launch is specialized the way Triton's JIT specializes a real call: pointers and the
query, cache and output strides are marked divisible by 16 (576 and 512 are), which is what
lets Triton vectorize and pipeline the loads; without it the report would describe a
different, slower kernel.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from kernelopt._errors import DeviceError, InputError, expected
from kernelopt.kernels.mla._validate import (
    D_NOPE,
    D_PE,
    check_flag,
    check_positive_int,
    interpreter_on,
)
from kernelopt.kernels.mla.split_kv import SplitKVConfig, check_config, default_config

if TYPE_CHECKING:
    import torch

__all__ = ["KernelResources", "split_kv_resources"]

_DIVISIBLE_STRIDES = frozenset(
    {
        "stride_qb",
        "stride_qs",
        "stride_qh",
        "stride_kvp",
        "stride_kvt",
        "stride_ob",
        "stride_os",
        "stride_oh",
    }
)
_TRITON_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


@attrs.frozen(kw_only=True)
class KernelResources:
    """What one compiled kernel uses per thread and per program.

    Attributes
    ----------
    registers : int
        Registers per thread (255 is the ceiling; at it, look at the spills).
    spill_store_bytes, spill_load_bytes : int
        Bytes spilled to and reloaded from local memory per thread.
    stack_bytes : int
        Stack frame per thread.
    shared_bytes : int
        Shared memory per program (Triton's figure; an H100/H200 multiprocessor has 228 KB,
        a program may use up to 227 KB).
    num_warps : int
        Warps per program.
    uses_wgmma, uses_async_copy, uses_mma_sync : bool
        Whether the PTX holds ``wgmma.mma_async``, ``cp.async`` and ``mma.sync``.
    target : str
        The compilation target, such as ``"sm_90a"``.
    """

    registers: int
    spill_store_bytes: int
    spill_load_bytes: int
    stack_bytes: int
    shared_bytes: int
    num_warps: int
    uses_wgmma: bool
    uses_async_copy: bool
    uses_mma_sync: bool
    target: str

    @property
    def spill_bytes(self) -> int:
        """Spill stores plus loads per thread."""
        return self.spill_store_bytes + self.spill_load_bytes

    def programs_per_sm(self, *, smem_per_sm: int = 233472, regs_per_sm: int = 65536) -> int:
        """Programs that fit on one multiprocessor by shared memory and registers.

        Each program takes its shared memory plus 1 KB the hardware reserves for it, and
        ``registers * num_warps * 32`` registers. Defaults are Hopper's.

        Parameters
        ----------
        smem_per_sm : int
            Shared memory of one multiprocessor, in bytes (228 KB).
        regs_per_sm : int
            32-bit registers of one multiprocessor (64 K).

        Returns
        -------
        int
            The smaller of the two limits, at least 0; a program without shared memory
            counts 32 by shared memory.
        """
        by_smem = smem_per_sm // (self.shared_bytes + 1024) if self.shared_bytes else 32
        by_regs = regs_per_sm // max(1, self.registers * self.num_warps * 32)
        return max(0, min(by_smem, by_regs))

    def metrics(self) -> dict[str, float]:
        """The catalog's metric names: ``regs_per_thread`` and ``spill_bytes``."""
        return {"regs_per_thread": float(self.registers), "spill_bytes": float(self.spill_bytes)}


def _ptxas_path() -> str:
    import triton

    path = getattr(getattr(triton.knobs.nvidia, "ptxas", None), "path", None)
    if not path or not Path(path).exists():
        raise DeviceError(expected("the ptxas that ships with Triton's NVIDIA backend", path))
    return str(path)


def _ptxas_report(ptx: str, arch: str) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        done = subprocess.run(
            [_ptxas_path(), f"-arch={arch}", "-v", str(src), "-o", str(Path(tmp) / "k.cubin")],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise DeviceError(expected("ptxas to assemble the kernel", done.stderr.strip()[-500:]))
    text = done.stderr

    def number(pattern: str) -> int:
        found = re.search(pattern, text)
        return int(found.group(1)) if found else 0

    return {
        "registers": number(r"Used (\d+) registers"),
        "stack_bytes": number(r"(\d+) bytes stack frame"),
        "spill_store_bytes": number(r"(\d+) bytes spill stores"),
        "spill_load_bytes": number(r"(\d+) bytes spill loads"),
    }


def split_kv_resources(
    *,
    s_q: int,
    h_q: int,
    page_size: int = 64,
    config: SplitKVConfig | None = None,
    dtype: str | torch.dtype = "bfloat16",
    causal: bool = True,
    tile_in_page: bool | None = None,
    capability: int = 90,
    strategy: str = "split_kv",
    kv_fp8: bool = False,
    pair_merge: bool = False,
) -> KernelResources:
    """Compile the split-KV kernel for one shape and configuration; report its resources.

    Parameters
    ----------
    s_q, h_q : int
        Draft tokens and query heads (compile-time constants of the kernel).
    page_size : int
        Cache page size (a compile-time constant).
    config : SplitKVConfig, optional
        Launch knobs; ``default_config(s_q · h_q, dtype)`` when omitted.
    dtype : {"bfloat16", "float16", "float32"} or torch.dtype
        Input dtype, by name or as the ``torch.dtype`` a plan takes.
    causal : bool
        Causal mask among the draft tokens.
    tile_in_page : bool, optional
        Whether key tiles lie inside one page; by default when ``page_size`` is a multiple
        of ``config.block_n`` (as the planner decides).
    capability : int
        Compute capability; 90 compiles for ``sm_90a`` (Hopper with ``wgmma``).
    strategy : {"split_kv", "hopper", "seesaw"}
        Which split-KV kernel to compile (``hopper`` uses its own default configuration;
        ``seesaw`` is the Gluon kernel, fixed 64 × 64 tiles, 16-bit inputs, sm_90a only,
        whose ``registers`` are ptxas's launch figure: its warpgroups then re-divide the
        register file with ``setmaxnreg``; at most ``seesaw.RING_ROWS`` query rows compile
        the ring kernel it runs for them).
    kv_fp8 : bool
        Compile for a cache in the FP8 layout (:mod:`kernelopt.kernels.mla.fp8`): the
        split-KV kernel, or with strategy ``seesaw`` the FP8 ring kernel
        (:mod:`kernelopt.kernels.mla.ring_fp8`; bfloat16, at most 16 query rows).
    pair_merge : bool
        Compile the seesaw kernel that merges sequences split in two pieces itself (what a
        plan runs when every split sequence is in two pieces); strategy ``seesaw`` only.

    Returns
    -------
    KernelResources

    Raises
    ------
    InputError
        On a size that is not a positive integer, a flag that is not a bool, an unknown
        dtype or strategy, or options the strategy does not take.
    DeviceError
        When Triton's NVIDIA backend or its ptxas is missing, or compilation fails.

    Examples
    --------
    >>> r = split_kv_resources(s_q=1, h_q=128)                  # doctest: +SKIP
    >>> r.registers, r.spill_bytes, r.uses_wgmma, r.programs_per_sm()   # doctest: +SKIP
    """
    import torch

    s_q, h_q, page_size, capability = _check_request(
        s_q=s_q,
        h_q=h_q,
        page_size=page_size,
        config=config,
        causal=causal,
        tile_in_page=tile_in_page,
        capability=capability,
        kv_fp8=kv_fp8,
        pair_merge=pair_merge,
    )
    given = dtype
    if isinstance(dtype, torch.dtype):
        # MLADecodePlan and the kernels take torch dtypes; the compiler's request names them.
        dtype = str(dtype).removeprefix("torch.")
    if not isinstance(dtype, str) or dtype not in _TRITON_DTYPES:
        # A list was an unhashable-type TypeError; torch.float16 was refused by its name.
        raise InputError(
            expected(
                f"one of {sorted(_TRITON_DTYPES)} or its torch.dtype", repr(given), where="dtype"
            )
        )
    if strategy not in ("split_kv", "hopper", "seesaw"):
        raise InputError(
            expected("strategy 'split_kv', 'hopper' or 'seesaw'", repr(strategy), where="strategy")
        )
    if kv_fp8 and strategy not in ("split_kv", "seesaw"):
        raise InputError(
            expected(
                "strategy 'split_kv' or 'seesaw' for an FP8 cache (kv_fp8=True)",
                repr(strategy),
                where="strategy",
            )
        )
    if kv_fp8 and strategy == "seesaw" and (dtype != "bfloat16" or s_q * h_q > 16):
        raise InputError(
            expected(
                "dtype bfloat16 and at most 16 query rows for 'seesaw' with an FP8 cache",
                f"dtype {dtype!r}, {s_q * h_q} rows",
            )
        )
    if pair_merge and strategy != "seesaw":
        raise InputError(
            expected("strategy 'seesaw' for pair_merge=True", repr(strategy), where="strategy")
        )
    if strategy == "seesaw" and (dtype == "float32" or capability != 90):
        raise InputError(
            expected(
                "a 16-bit dtype and capability 90 for strategy 'seesaw'",
                f"dtype {dtype!r}, capability {capability}",
            )
        )
    if config is None:
        from kernelopt.kernels.mla import hopper, seesaw

        defaults = {"hopper": hopper.default_config, "seesaw": seesaw.default_config}.get(
            strategy, default_config
        )
        config = defaults(s_q * h_q, getattr(torch, dtype))
    if tile_in_page is None:
        tile_in_page = page_size % config.block_n == 0
    request = {
        "s_q": s_q,
        "h_q": h_q,
        "page_size": page_size,
        "config": attrs.asdict(config),
        "dtype": dtype,
        "causal": causal,
        "tile_in_page": tile_in_page,
        "capability": capability,
        "strategy": strategy,
        "kv_fp8": kv_fp8,
        "pair_merge": pair_merge,
    }
    if interpreter_on():
        # Interpreter mode (any spelling Triton takes: 1, true, on, yes) changes how
        # Triton builds kernels in this process: compile in a child process without it.
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        done = subprocess.run(
            [sys.executable, "-m", "kernelopt.kernels.mla.resources", json.dumps(request)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            raise DeviceError(expected("the kernel to compile", done.stderr.strip()[-500:]))
        report = json.loads(done.stdout.strip().splitlines()[-1])
    else:
        report = _report_from_request(request)
    return KernelResources(**report)


def _check_request(
    *,
    s_q: object,
    h_q: object,
    page_size: object,
    config: object,
    causal: object,
    tile_in_page: object,
    capability: object,
    kv_fp8: object,
    pair_merge: object,
) -> tuple[int, int, int, int]:
    """Refuse sizes and flags no kernel takes before compiling (or spawning a compiler).

    Returns ``(s_q, h_q, page_size, capability)`` as Python ints (the compiler's request
    is JSON).
    """
    sizes = (s_q, "s_q"), (h_q, "h_q"), (page_size, "page_size"), (capability, "capability")
    ints = [check_positive_int(value, name) for value, name in sizes]
    check_config(config)
    for flag, name in ((causal, "causal"), (kv_fp8, "kv_fp8"), (pair_merge, "pair_merge")):
        check_flag(flag, name)
    if tile_in_page is not None and not isinstance(tile_in_page, bool):
        raise InputError(expected("a bool or None", repr(tile_in_page), where="tile_in_page"))
    return ints[0], ints[1], ints[2], ints[3]


def _report_from_request(request: dict[str, Any]) -> dict[str, Any]:
    args = dict(request)
    args["config"] = SplitKVConfig(**args["config"])
    return _compile_report(**args)


def _compile_report(
    *,
    s_q: int,
    h_q: int,
    page_size: int,
    config: SplitKVConfig,
    dtype: str,
    causal: bool,
    tile_in_page: bool,
    capability: int,
    strategy: str = "split_kv",
    kv_fp8: bool = False,
    pair_merge: bool = False,
) -> dict[str, Any]:
    # Compiles in this process, which must not be in Triton's interpreter mode.
    if strategy == "seesaw":
        if kv_fp8:
            return _compile_ring_fp8_report(s_q=s_q, h_q=h_q, page_size=page_size, causal=causal)
        return _compile_seesaw_report(
            s_q=s_q, h_q=h_q, page_size=page_size, dtype=dtype, causal=causal,
            pair_merge=pair_merge,
        )  # fmt: skip
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernelopt.kernels.mla import hopper, split_kv

    fn: Any = hopper._mla_hopper_kernel if strategy == "hopper" else split_kv._mla_split_kv_kernel
    elt = _TRITON_DTYPES[dtype]
    pointers = {
        "q": elt,
        "kv": "u8" if kv_fp8 else elt,
        "out": elt,
        "block_table": "i32",
        "seqlens": "i32",
        "units": "i32",
        "lse": "fp32",
        "o_part": "fp32",
        "lse_part": "fp32",
    }
    signature: dict[str, str] = {}
    for name in fn.arg_names:
        if name in pointers:
            signature[name] = "*" + pointers[name]
        elif name.startswith("stride") or name == "num_kv_rows":
            signature[name] = "i32"
        elif name == "qk_scale":
            signature[name] = "fp32"
        else:
            signature[name] = "constexpr"
    divisible = {
        (i,): [["tt.divisibility", 16]]
        for i, name in enumerate(fn.arg_names)
        if name in pointers or name in _DIVISIBLE_STRIDES
    }
    constants = {
        "S_Q": s_q,
        "H_Q": h_q,
        "PAGE": page_size,
        "CAUSAL": causal,
        "D_NOPE": D_NOPE,
        "D_PE": D_PE,
        "BLOCK_M": config.block_m,
        "BLOCK_N": config.block_n,
        "DOT_PRECISION": "ieee" if dtype == "float32" else "tf32",
    }
    if strategy == "hopper":
        constants["NUM_STAGES"] = config.num_stages
    else:
        constants["TILE_IN_PAGE"] = tile_in_page
        constants["KV_FP8"] = kv_fp8
    arch = f"sm_{capability}a" if capability == 90 else f"sm_{capability}"
    try:
        compiled = triton.compile(
            ASTSource(fn=fn, signature=signature, constexprs=constants, attrs=divisible),
            target=GPUTarget("cuda", capability, 32),
            options={"num_warps": config.num_warps, "num_stages": config.num_stages},
        )
    except Exception as error:  # Triton raises several types; all mean "does not compile"
        raise DeviceError(
            expected("the kernel to compile", f"{type(error).__name__}: {str(error)[:300]}")
        ) from error
    ptx = compiled.asm["ptx"]
    report = _ptxas_report(ptx, arch)
    return dict(
        report,
        shared_bytes=int(compiled.metadata.shared),
        num_warps=config.num_warps,
        uses_wgmma="wgmma.mma_async" in ptx,
        uses_async_copy="cp.async" in ptx,
        uses_mma_sync="mma.sync" in ptx,
        target=arch,
    )


def _compile_seesaw_report(
    *, s_q: int, h_q: int, page_size: int, dtype: str, causal: bool, pair_merge: bool = False
) -> dict[str, Any]:
    from kernelopt.kernels.mla import seesaw

    # At most RING_ROWS query rows compile the ring kernel, with 16-row query tiles.
    fn, q_rows, tuned = seesaw.kernel_for_rows(s_q * h_q)
    elt = _TRITON_DTYPES[dtype]
    layout = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
    layout_f32 = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=2)"
    typed = {
        "q": "*" + elt,
        "kv": "*" + elt,
        "out": "*" + elt,
        "q_desc": f"tensordesc<{elt}[{q_rows}, 64],{layout}>",
        "kv_desc": f"tensordesc<{elt}[64, 64],{layout}>",
        "out_desc": f"tensordesc<{elt}[64, 64],{layout}>",
        "block_table": "*i32",
        "seqlens": "*i32",
        "units": "*i32",
        "lse": "*fp32",
        "o_part": "*fp32",
        "lse_part": "*fp32",
        "qk_scale": "fp32",
        "o_tma": "i32",
        "split_offsets": "*i32",
        "counters": "*i32",
        "part_desc": f"tensordesc<fp32[64, 32],{layout_f32}>",
    }
    constants = dict(tuned)
    if "PAIR_MERGE" in fn.arg_names:
        constants["PAIR_MERGE"] = pair_merge
    return _gluon_report(
        fn, typed, s_q=s_q, h_q=h_q, page_size=page_size, causal=causal, **constants
    )


def _gluon_report(
    fn: Any, typed: dict[str, str], *, s_q: int, h_q: int, page_size: int, causal: bool,
    **constants: Any,
) -> dict[str, Any]:  # fmt: skip
    """Compile a Gluon kernel for sm_90a with four warps in its default partition.

    ``typed`` gives the types of the pointer, descriptor and scalar arguments; strides are
    ``i32`` and every other argument a compile-time constant: the point's shape and flags
    (the query always through TMA), then ``constants``.
    """
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    signature = {
        name: typed.get(name, "i32" if name.startswith("stride") else "constexpr")
        for name in fn.arg_names
    }
    constants = {
        "S_Q": s_q, "H_Q": h_q, "PAGE": page_size, "CAUSAL": causal, "Q_TMA": True, **constants,
    }  # fmt: skip

    try:
        compiled = triton.compile(
            GluonASTSource(fn=fn, signature=signature, constexprs=constants),
            target=GPUTarget("cuda", 90, 32),
            options={"num_warps": 4},
        )
    except Exception as error:  # Triton raises several types; all mean "does not compile"
        raise DeviceError(
            expected("the kernel to compile", f"{type(error).__name__}: {str(error)[:300]}")
        ) from error
    ptx = compiled.asm["ptx"]
    return dict(
        _ptxas_report(ptx, "sm_90a"),
        shared_bytes=int(compiled.metadata.shared),
        num_warps=int(compiled.metadata.num_warps),
        uses_wgmma="wgmma.mma_async" in ptx,
        uses_async_copy="cp.async" in ptx,
        uses_mma_sync="mma.sync" in ptx,
        target="sm_90a",
    )


def _compile_ring_fp8_report(*, s_q: int, h_q: int, page_size: int, causal: bool) -> dict[str, Any]:
    from kernelopt.kernels.mla import ring_fp8

    fn = ring_fp8.mla_ring_fp8_kernel
    nvmma = "NVMMASharedLayout(swizzle_byte_width={}, element_bitwidth={}, rank=2)"
    typed = {
        "q": "*bf16",
        "out": "*bf16",
        "kv8": "*fp8e4nv",
        "kv32": "*fp32",
        "kv16": "*bf16",
        "q_desc": f"tensordesc<bf16[16, 64],{nvmma.format(128, 16)}>",
        "f8_desc": f"tensordesc<fp8e4nv[64, 64],{nvmma.format(64, 8)}>",
        "sc_desc": f"tensordesc<fp32[64, 4],{nvmma.format(0, 32)}>",
        "rp_desc": f"tensordesc<bf16[64, 64],{nvmma.format(128, 16)}>",
        "block_table": "*i32",
        "seqlens": "*i32",
        "units": "*i32",
        "lse": "*fp32",
        "o_part": "*fp32",
        "lse_part": "*fp32",
        "qk_scale": "fp32",
    }
    return _gluon_report(
        fn, typed, s_q=s_q, h_q=h_q, page_size=page_size, causal=causal,
        SLOTS=ring_fp8.SLOTS, SCALE_SLOTS=ring_fp8.SCALE_SLOTS, REGS=ring_fp8.CONSUMER_REGS,
        DEQUANT_REGS=ring_fp8.DEQUANT_REGS, LOAD_REGS=ring_fp8.LOADER_REGS,
    )  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(_report_from_request(json.loads(sys.argv[1]))))
