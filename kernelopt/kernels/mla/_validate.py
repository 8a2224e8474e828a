"""Input checks shared by every MLA decode entry point.

Every check reads only host-side tensor metadata (shape, dtype, device, strides), so a
``run()`` that calls them never synchronizes with the device. Checks that need the values of
``cache_seqlens`` run once, at plan time, on a host copy.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from kernelopt._errors import DeviceError, InputError, expected

if TYPE_CHECKING:
    import torch

__all__ = [
    "D_NOPE",
    "D_PE",
    "D_QK",
    "D_V",
    "FP8_ROW_BYTES",
    "check_cache_seqlens",
    "check_flag",
    "check_has_values",
    "check_inputs",
    "check_interpreter_dtype",
    "check_outputs",
    "check_page_indices",
    "check_positive_int",
    "check_runnable_device",
    "check_seqlen_values",
    "check_softmax_scale",
    "check_workspace_disjoint",
    "device_origin",
    "device_origin_note",
    "interpreter_on",
]

D_NOPE = 512
"""Latent (no-position) part of the absorbed query/key head; also the value head dim."""
D_PE = 64
"""Rotary (RoPE) part of the query/key head."""
D_QK = D_NOPE + D_PE
D_V = D_NOPE
FP8_ROW_BYTES = D_NOPE + 16 + 2 * D_PE
"""Bytes of one row of an FP8 cache (:mod:`kernelopt.kernels.mla.fp8`): 656."""
_FLOAT32_MAX = 3.4028234663852886e38
MAX_SOFTMAX_SCALE = _FLOAT32_MAX / math.log2(math.e)
"""Largest softmax scale whose product with ``log2(e)`` (the kernels' float32 argument)
stays finite."""
FP8_READERS = (
    "MLADecodePlan(kv_fp8=True), mla_decode_split_kv, "
    "mla_decode_with_kvcache(is_fp8_kvcache=True) and mla_decode_ref"
)


def _dtype_names() -> str:
    return "bfloat16, float16 or float32"


def _supported(dtype: torch.dtype) -> bool:
    import torch

    return dtype in (torch.bfloat16, torch.float16, torch.float32)


def _require_tensor(x: object, name: str) -> None:
    import torch

    if not isinstance(x, torch.Tensor):
        raise InputError(expected("a torch.Tensor", type(x).__name__, where=name))


def check_inputs(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    *,
    head_dim_v: int = D_V,
    allow_fp8: bool = False,
    cache_name: str = "kv_cache",
) -> tuple[int, int, int, int]:
    """Check the query, paged cache and block table; return ``(batch, s_q, h_q, page_size)``.

    Parameters
    ----------
    q : torch.Tensor
        ``[b, s_q, h_q, 576]``, bfloat16/float16/float32, last dim contiguous.
    kv_cache : torch.Tensor
        ``[num_blocks, page_size, 1, 576]``, same dtype and device as ``q``, last dim
        contiguous; with ``allow_fp8`` also ``[num_blocks, page_size, 1, 656]`` uint8 (the
        FP8 layout of :mod:`kernelopt.kernels.mla.fp8`).
    block_table : torch.Tensor
        ``[b, max_blocks]`` int32, same device, last dim contiguous.
    head_dim_v : int
        Must be 512 (values are the first 512 columns of the cache rows).
    allow_fp8 : bool
        Whether the caller reads the FP8 cache layout.
    cache_name : str
        The cache's argument name in errors (``k_cache`` in FlashMLA's call).

    Raises
    ------
    InputError
        On any mismatch, with an ``Expected X, got Y`` message naming the argument.
    """
    import torch

    _require_tensor(q, "q")
    _require_tensor(kv_cache, cache_name)
    _require_tensor(block_table, "block_table")
    # 512.0 or True is not a head dim, though it compares equal to one.
    integral = isinstance(head_dim_v, numbers.Integral) and not isinstance(head_dim_v, bool)
    if not integral or head_dim_v != D_V:
        # repr: the string "512" is not the int 512, and must not read like it.
        raise InputError(expected(f"head dim {D_V}", repr(head_dim_v), where="head_dim_v"))
    if q.dim() != 4:
        raise InputError(expected("q of shape [b, s_q, h_q, 576]", list(q.shape), where="q"))
    if q.shape[-1] != D_QK:
        raise InputError(expected(f"head dim {D_QK}", q.shape[-1], where="q"))
    if not _supported(q.dtype):
        raise InputError(expected(_dtype_names(), str(q.dtype), where="q"))
    batch, s_q, h_q, _ = q.shape
    if batch < 1 or s_q < 1 or h_q < 1:
        raise InputError(expected("b, s_q and h_q of at least 1", list(q.shape), where="q"))
    if q.stride(-1) != 1:
        raise InputError(expected("a contiguous last dim (stride 1)", q.stride(-1), where="q"))

    if kv_cache.dim() != 4:
        raise InputError(
            expected(
                f"{cache_name} of shape [num_blocks, page_size, 1, 576]",
                list(kv_cache.shape),
                where=cache_name,
            )
        )
    if kv_cache.shape[2] != 1:
        raise InputError(expected("one latent KV head", kv_cache.shape[2], where=cache_name))
    fp8 = kv_cache.dtype == torch.uint8
    # FlashMLA's own quantizer types the 656-byte rows as float8_e4m3fn: the layout is
    # there, only the dtype is not the uint8 the kernels read, so say that, not "head dim".
    packed_bytes = kv_cache.element_size() == 1 and kv_cache.shape[3] == FP8_ROW_BYTES
    if (fp8 or packed_bytes) and not allow_fp8:
        raise InputError(
            expected(
                f"dtype {q.dtype} (as q; an FP8 cache is read by {FP8_READERS})",
                f"{kv_cache.dtype} {list(kv_cache.shape)}",
                where=cache_name,
            )
        )
    if packed_bytes and not fp8:
        raise InputError(
            expected(
                f"the {FP8_ROW_BYTES}-byte FP8 layout as torch.uint8 (a free view: "
                f"{cache_name}.view(torch.uint8))",
                f"{kv_cache.dtype} {list(kv_cache.shape)}",
                where=cache_name,
            )
        )
    if fp8 and kv_cache.shape[3] != FP8_ROW_BYTES:
        raise InputError(
            expected(
                f"rows of {FP8_ROW_BYTES} bytes for a uint8 (FP8) cache",
                kv_cache.shape[3],
                where=cache_name,
            )
        )
    if not fp8 and kv_cache.shape[3] != D_QK:
        raise InputError(expected(f"head dim {D_QK}", kv_cache.shape[3], where=cache_name))
    if kv_cache.shape[1] < 1 or kv_cache.shape[0] < 1:
        raise InputError(
            expected(
                "at least one page of at least one row", list(kv_cache.shape), where=cache_name
            )
        )
    if not fp8 and kv_cache.dtype != q.dtype:
        raise InputError(expected(f"dtype {q.dtype} (as q)", str(kv_cache.dtype), where=cache_name))
    if kv_cache.device != q.device:
        raise InputError(
            expected(f"device {q.device} (as q)", str(kv_cache.device), where=cache_name)
        )
    if kv_cache.stride(-1) != 1:
        raise InputError(
            expected("a contiguous last dim (stride 1)", kv_cache.stride(-1), where=cache_name)
        )
    if fp8:
        # The kernels read a row's scales as float32 and its RoPE part as bfloat16 straight
        # from the byte rows: every row must start on a 4-byte boundary, or the GPU faults.
        offsets = (kv_cache.data_ptr(), kv_cache.stride(0), kv_cache.stride(1))
        if any(offset % 4 for offset in offsets):
            raise InputError(
                expected(
                    "FP8 rows starting on 4-byte boundaries (address, page and row strides "
                    "multiples of 4 bytes)",
                    f"address offset {kv_cache.data_ptr() % 4}, strides {list(kv_cache.stride())}",
                    where=cache_name,
                )
            )

    if block_table.dim() != 2 or block_table.shape[0] != batch:
        raise InputError(
            expected(
                f"block_table of shape [{batch}, max_blocks]",
                list(block_table.shape),
                where="block_table",
            )
        )
    if block_table.dtype != torch.int32:
        raise InputError(expected("dtype torch.int32", str(block_table.dtype), where="block_table"))
    if block_table.device != q.device:
        raise InputError(
            expected(f"device {q.device} (as q)", str(block_table.device), where="block_table")
        )
    if block_table.shape[1] > 0 and block_table.stride(1) != 1:
        raise InputError(
            expected("a contiguous last dim (stride 1)", block_table.stride(1), where="block_table")
        )
    return batch, s_q, h_q, kv_cache.shape[1]


def check_cache_seqlens(
    cache_seqlens: torch.Tensor, *, batch: int, device: torch.device | None = None
) -> None:
    """Check ``cache_seqlens`` is a contiguous int32 ``[batch]`` tensor (on ``device`` when
    given): the kernels read length ``i`` at offset ``i``."""
    import torch

    _require_tensor(cache_seqlens, "cache_seqlens")
    if cache_seqlens.dim() != 1 or cache_seqlens.shape[0] != batch:
        raise InputError(
            expected(f"shape [{batch}]", list(cache_seqlens.shape), where="cache_seqlens")
        )
    if cache_seqlens.dtype != torch.int32:
        raise InputError(
            expected("dtype torch.int32", str(cache_seqlens.dtype), where="cache_seqlens")
        )
    if device is not None and cache_seqlens.device != device:
        raise InputError(
            expected(f"device {device}", str(cache_seqlens.device), where="cache_seqlens")
        )
    if batch > 1 and cache_seqlens.stride(0) != 1:
        # A column of a wider table would be read as other sequences' lengths.
        raise InputError(
            expected(
                "a contiguous tensor (stride 1)",
                f"stride {cache_seqlens.stride(0)}",
                where="cache_seqlens",
            )
        )


def check_seqlen_values(
    seqlens: Sequence[int], *, s_q: int, page_size: int | None = None, max_blocks: int | None = None
) -> None:
    """Check host values of the cache lengths against ``s_q`` and the block table width.

    A sequence must hold at least its ``s_q`` draft tokens (so every query row sees at least
    one key), and ``max_blocks`` pages of ``page_size`` rows must cover the longest one.
    """
    for i, n in enumerate(seqlens):
        if n < max(s_q, 1):
            raise InputError(
                expected(f"cache_seqlens >= s_q = {s_q}", n, where=f"cache_seqlens[{i}]")
            )
    if page_size is not None and max_blocks is not None and seqlens:
        longest = max(seqlens)
        if max_blocks * page_size < longest:
            raise InputError(
                expected(
                    f"a block table of at least {-(-longest // page_size)} columns "
                    f"(max seqlen {longest}, page size {page_size})",
                    max_blocks,
                    where="block_table",
                )
            )


def check_page_indices(
    block_table: torch.Tensor, seqlens: Sequence[int], *, page_size: int, num_blocks: int
) -> None:
    """Check the pages each sequence reads lie in the cache (reads the table on the host).

    Only the entries a sequence's keys lie on are checked: columns past its last page may
    hold anything (serving stacks pad with -1), since no kernel reads them. The table must
    be at least as wide as the longest sequence needs (:func:`check_seqlen_values`).

    The reference and the direct kernel calls (which read the lengths on the host anyway)
    call it, and every entry point on the CPU, where the read costs no synchronization: a
    page outside the cache is read as an address past it, a wrong answer or a crash. On a
    GPU the plans and the FlashMLA pair take the table as it is, since reading it back would
    sync the device on every call.
    """
    import torch

    if not seqlens:
        return
    needed = torch.tensor([-(-n // page_size) for n in seqlens])
    width = int(needed.max())
    pages = block_table[: len(seqlens), :width].cpu()  # one read for a device table
    used = torch.arange(width)[None, :] < needed[:, None]
    outside = used & ((pages < 0) | (pages >= num_blocks))
    if bool(outside.any()):
        i, col = (int(v) for v in outside.nonzero()[0])
        raise InputError(
            expected(
                f"page indices in [0, {num_blocks}) for the {seqlens[i]} keys of sequence {i}",
                int(pages[i, col]),
                where=f"block_table[{i}]",
            )
        )


def check_outputs(
    out: torch.Tensor | None,
    lse: torch.Tensor | None,
    *,
    batch: int,
    s_q: int,
    h_q: int,
    dtype: torch.dtype,
    device: torch.device,
    reads: Mapping[str, torch.Tensor] | None = None,
) -> None:
    """Check caller-owned ``out [b, s_q, h_q, 512]`` (``dtype``) and ``lse [b, h_q, s_q]`` fp32.

    ``out`` and ``lse`` must not share memory with each other, nor with any tensor of
    ``reads`` (name to tensor: the inputs the kernels read while they write), and must not
    require grad.
    """
    import torch

    if out is not None:
        _require_tensor(out, "out")
        _refuse_requires_grad(out, "out")
        want = (batch, s_q, h_q, D_V)
        if tuple(out.shape) != want:
            raise InputError(expected(f"shape {list(want)}", list(out.shape), where="out"))
        if out.dtype != dtype:
            raise InputError(expected(f"dtype {dtype} (as q)", str(out.dtype), where="out"))
        if out.device != device:
            raise InputError(expected(f"device {device}", str(out.device), where="out"))
        if out.stride(-1) != 1:
            raise InputError(
                expected("a contiguous last dim (stride 1)", out.stride(-1), where="out")
            )
        _check_no_overlap(out, "out")
    if lse is not None:
        _require_tensor(lse, "lse")
        _refuse_requires_grad(lse, "lse")
        want_lse = (batch, h_q, s_q)
        if tuple(lse.shape) != want_lse:
            raise InputError(expected(f"shape {list(want_lse)}", list(lse.shape), where="lse"))
        if lse.dtype != torch.float32:
            raise InputError(expected("dtype torch.float32", str(lse.dtype), where="lse"))
        if lse.device != device:
            raise InputError(expected(f"device {device}", str(lse.device), where="lse"))
        _check_no_overlap(lse, "lse")
    _check_disjoint(out, lse, reads or {})


def _refuse_requires_grad(tensor: torch.Tensor, where: str) -> None:
    """Refuse an output that requires grad, as torch's own ``out=`` does.

    The kernels have no backward, and their stores bypass autograd (the tensor's version
    counter is not bumped): a graph that saved the tensor would silently backpropagate
    through the overwritten values. Refused in ``no_grad`` too, where torch would let its
    own in-place writes through, since those at least bump the version.
    """
    if tensor.requires_grad:
        raise InputError(
            expected(
                f"an {where} tensor that does not require grad (the kernels have no backward)",
                "a tensor that requires grad",
                where=where,
            )
        )


def _check_disjoint(
    out: torch.Tensor | None, lse: torch.Tensor | None, reads: Mapping[str, torch.Tensor]
) -> None:
    """Refuse outputs whose memory spans meet each other's or an input's: the kernels
    would overwrite values other programs still read, or one output's stores the other's.

    Spans, not elements, are compared (one comparison per pair, no stride walk), so two
    views interleaved in one buffer are refused even where their elements never meet.
    Each span is computed once: this runs on every call.
    """
    from kernelopt.buffers._tensors import byte_span, spans_meet

    outputs = [(name, byte_span(t)) for name, t in (("out", out), ("lse", lse)) if t is not None]
    if not outputs:
        return
    inputs = [(name, byte_span(t)) for name, t in reads.items()]
    for i, (name, span) in enumerate(outputs):
        if span is None:
            continue
        for other_name, other in [*outputs[:i], *inputs]:
            if spans_meet(span, other):
                raise InputError(
                    expected(
                        f"an output that shares no memory with {other_name}",
                        f"a view whose bytes meet {other_name}'s",
                        where=name,
                    )
                )


def check_workspace_disjoint(workspace: torch.Tensor, reads: Mapping[str, torch.Tensor]) -> None:
    """Refuse a caller-owned workspace whose bytes meet an input's (name to tensor).

    The split pieces store their partial outputs there while other programs still read
    ``q``, the cache and the block table: a workspace carved from the same arena as one of
    them overwrites values not yet read, a wrong answer with no error. As for the outputs,
    byte spans are compared, one comparison per input.
    """
    from kernelopt.buffers._tensors import byte_span, spans_meet

    span = byte_span(workspace)
    if span is None:
        return
    for name, tensor in reads.items():
        other = byte_span(tensor)
        if spans_meet(span, other):
            raise InputError(
                expected(
                    f"a workspace that shares no memory with {name}",
                    f"a buffer whose bytes meet {name}'s",
                    where="workspace",
                )
            )


def check_has_values(tensor: torch.Tensor, where: str) -> None:
    """Refuse a meta tensor where its values are read on the host: it has shape and dtype
    but no data, and torch's own error ("Cannot copy out of meta tensor") names no argument."""
    if tensor.is_meta:
        raise InputError(
            expected("a tensor with values (on the CPU or a CUDA device)", "meta", where=where)
        )


def _check_no_overlap(tensor: torch.Tensor, where: str) -> None:
    """Refuse an output whose elements share memory (an ``expand``-ed or stride-0 view):
    two rows of the result would land on one address, and one would be lost."""
    if tensor.is_contiguous():
        return  # the common case on every run(): one C call, no stride walk
    dims = sorted(
        (stride, size)
        for stride, size in zip(tensor.stride(), tensor.shape, strict=True)
        if size > 1
    )
    reach = 1  # elements spanned by the faster-varying dims so far
    for stride, size in dims:
        if stride < reach:
            raise InputError(
                expected(
                    "an output whose elements do not overlap",
                    f"strides {list(tensor.stride())} for shape {list(tensor.shape)}",
                    where=where,
                )
            )
        reach = stride * size


def check_positive_int(value: object, where: str) -> int:
    """An integer >= 1 of any kind (a NumPy ``int64`` too, not a bool), as a Python int."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InputError(expected("a positive integer", repr(value), where=where))
    return int(value)


def check_softmax_scale(value: object) -> float:
    """A softmax scale as a float: positive, finite, at most :data:`MAX_SOFTMAX_SCALE`
    (not a bool).

    Any real number is taken (a NumPy ``float32`` too), and returned as a Python float.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        # repr: a string "0.1" shown as written would read as the float it is not.
        raise InputError(expected("a finite float", repr(value), where="softmax_scale"))
    scale = float(value)
    if not math.isfinite(scale):
        raise InputError(expected("a finite float", scale, where="softmax_scale"))
    if scale <= 0:
        raise InputError(expected("a positive scale", scale, where="softmax_scale"))
    if scale > MAX_SOFTMAX_SCALE:
        # The kernels take ``scale · log2(e)`` as a float32 argument: past this it is inf,
        # and every score inf - inf = NaN.
        raise InputError(
            expected(
                f"a scale below {MAX_SOFTMAX_SCALE:.6g} (float32)", scale, where="softmax_scale"
            )
        )
    return scale


def check_flag(value: object, where: str) -> bool:
    """A bool argument, as a bool (``causal="no"`` is not True)."""
    if not isinstance(value, bool):
        raise InputError(expected("a bool", repr(value), where=where))
    return value


def check_interpreter_dtype(
    device: torch.device, dtype: torch.dtype, *, defaulted: bool = False
) -> None:
    """Refuse bfloat16 while Triton's interpreter is on: it computes ``tl.dot`` on bfloat16
    operands wrong (relative errors near 1e9 against the reference), silently, on CPU and
    CUDA tensors alike (it copies CUDA tensors to the host and runs the same numpy code).

    ``defaulted``: the caller did not pass the dtype, so the message says where it came from.
    """
    if str(dtype) != "torch.bfloat16" or not interpreter_on():
        return
    if device.type == "cpu":
        what = (
            "dtype float16 or float32 on the CPU (Triton's interpreter computes tl.dot on "
            "bfloat16 operands wrong); run bfloat16 on a CUDA device with TRITON_INTERPRET unset"
        )
    else:
        what = (
            "dtype float16 or float32 while TRITON_INTERPRET is set (Triton's interpreter "
            f"computes tl.dot on bfloat16 operands wrong, on {device} too); for bfloat16 on "
            f"{device}, leave TRITON_INTERPRET unset before kernelopt is first imported"
        )
    got = "torch.bfloat16 (the default: pass dtype=)" if defaulted else "torch.bfloat16"
    raise InputError(expected(what, got, where="dtype"))


def interpreter_on() -> bool:
    """Whether Triton runs kernels through its interpreter (``TRITON_INTERPRET``), read as
    Triton reads it: Triton 3.6 takes "true", "on" and "yes" as it takes "1"."""
    import triton

    knobs = getattr(triton, "knobs", None)
    if knobs is not None:
        return bool(knobs.runtime.interpret)
    return os.environ.get("TRITON_INTERPRET") == "1"


def check_device(device: object) -> torch.device:
    """``device`` as a ``torch.device`` (a name such as ``"cuda:0"``, or a device)."""
    import torch

    try:
        made: torch.device = torch.device(device)  # type: ignore[call-overload]
    except (RuntimeError, TypeError, ValueError):
        what = "a torch device or its name ('cuda', 'cuda:0', 'cpu')"
        raise InputError(expected(what, repr(device), where="device")) from None
    return made


def check_runnable_device(device: torch.device, *, where: str | None = None) -> None:
    """Triton kernels run on CUDA tensors, or on CPU tensors under ``TRITON_INTERPRET=1``
    with a numpy the interpreter can use.

    ``where``: the argument the device was read from, named in the refusal of a device
    the kernels cannot run on (:func:`device_origin`).
    """
    if device.type == "cuda":
        return
    if device.type == "cpu" and interpreter_on():
        refusal = _interpreter_numpy_refusal()
        if refusal is not None:
            raise DeviceError(refusal)
        return
    raise DeviceError(
        expected(
            "a CUDA tensor (or a CPU tensor with TRITON_INTERPRET=1)",
            f"{device}{device_origin_note(where)}",
            where=where,
        )
    )


def device_origin(device: object, cache_seqlens: object) -> str | None:
    """The argument a plan's device comes from: ``device`` when given, else
    ``cache_seqlens`` for a tensor of lengths (the plan runs where they lie), else None
    (the default device, CUDA when present)."""
    import torch

    if device is not None:
        return "device"
    if isinstance(cache_seqlens, torch.Tensor):
        return "cache_seqlens"
    return None


def device_origin_note(where: str | None) -> str:
    """What follows a refused device taken from the lengths: the caller passed no device
    and may not see where this one came from. Empty for any other origin."""
    if where == "cache_seqlens":
        return " (cache_seqlens's device, the plan's when device= is omitted)"
    return ""


@functools.cache
def _interpreter_numpy_refusal() -> str | None:
    """Why Triton's interpreter cannot run the kernels with this numpy, or None.

    Triton 3.6's interpreter turns one-element numpy arrays into ints with ``int()``,
    which numpy 2.4 refuses: every kernel then fails inside the interpreter with "only
    0-dimensional arrays can be converted to Python scalars", a message that names neither
    package. Checked once a process, from the two versions.
    """
    import numpy
    import triton

    if _release(triton.__version__) >= (3, 7) or _release(numpy.__version__) < (2, 4):
        return None
    return expected(
        f"numpy < 2.4 for Triton {triton.__version__}'s interpreter (it converts one-element "
        "arrays to ints, which numpy 2.4 refuses); pip install 'numpy<2.4', or run on a "
        "CUDA device",
        f"numpy {numpy.__version__}",
    )


def _release(version: str) -> tuple[int, int]:
    """The (major, minor) of a version string ("2.4.0rc1" is (2, 4))."""
    found = re.match(r"(\d+)(?:\.(\d+))?", version)
    if found is None:
        return (0, 0)
    return int(found[1]), int(found[2] or 0)


class DirectCall(NamedTuple):
    """What :func:`check_direct_call` read from a direct kernel call's arguments."""

    batch: int
    s_q: int
    h_q: int
    page: int
    seqlens: list[int]
    softmax_scale: float
    causal: bool


def check_direct_call(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    cache_seqlens: torch.Tensor,
    *,
    softmax_scale: object,
    causal: object,
    out: torch.Tensor | None,
    lse: torch.Tensor | None,
    allow_fp8: bool = False,
) -> DirectCall:
    """Every check of a call straight into a kernel (``mla_decode_naive``,
    ``mla_decode_split_kv``), before anything is allocated or launched.

    The outputs must share no memory with what the kernel reads, and the lengths and the
    block table are read to the host once: a length of zero or below ``s_q`` leaves rows
    with no key (NaN), one past the table reads pages that are not there, and so does a
    page index outside the cache.
    """
    batch, s_q, h_q, page = check_inputs(q, kv_cache, block_table, allow_fp8=allow_fp8)
    check_cache_seqlens(cache_seqlens, batch=batch, device=q.device)
    reads = {
        "q": q,
        "kv_cache": kv_cache,
        "block_table": block_table,
        "cache_seqlens": cache_seqlens,
    }
    check_outputs(
        out, lse, batch=batch, s_q=s_q, h_q=h_q, dtype=q.dtype, device=q.device, reads=reads
    )
    check_runnable_device(q.device)
    check_interpreter_dtype(q.device, q.dtype)
    scale = check_softmax_scale(softmax_scale)
    is_causal = check_flag(causal, "causal")
    seqlens = [int(n) for n in cache_seqlens.tolist()]
    check_seqlen_values(seqlens, s_q=s_q, page_size=page, max_blocks=block_table.shape[1])
    check_page_indices(block_table, seqlens, page_size=page, num_blocks=kv_cache.shape[0])
    return DirectCall(batch, s_q, h_q, page, seqlens, scale, is_causal)
