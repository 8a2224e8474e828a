"""The FP8 MLA KV cache: 656 bytes a token, FlashMLA's layout.

Each cache row (one token of the one latent KV head) packs, in this order:

* bytes ``0-511``: the 512 latent (no-position) values as ``float8_e4m3fn``;
* bytes ``512-527``: four ``float32`` scales, one per 128 latent values
  (``value = fp8 · scale``);
* bytes ``528-655``: the 64 RoPE values as ``bfloat16``, not quantized (rotary
  components are sensitive to rounding, and they are only 128 of the 656 bytes).

A cache in this layout is a ``torch.uint8`` tensor ``[num_blocks, page_size, 1, 656]``,
0.57 of the bytes of a bfloat16 cache (1152). Decode is memory-bound at one query token, so
the bytes set its time. :func:`quantize_kv_fp8` writes the layout from ``[..., 576]`` rows
and :func:`dequantize_kv_fp8` reads it back; :func:`~kernelopt.kernels.mla.mla_decode_ref`
and the ``split_kv`` strategy take the packed cache directly.

The quantizer picks power-of-two scales (``2^⌈log₂(amax / 448)⌉`` per 128 values, amax
clamped at 1e-4), so dividing by a scale is exact and nothing overflows: a value of at
least ``2⁻⁶ · scale`` (e4m3's smallest normal) keeps three mantissa bits, a relative error
of at most 2⁻⁴; smaller ones round to steps of ``2⁻⁹ · scale``. A NaN in a group of 128
makes that group's scale, and so every value of the group, NaN; so does an infinity (e4m3
has none, and no finite scale holds it).

Every reader (:func:`dequantize_kv_fp8`, the reference and the kernels) applies a scale as
stored and refuses none: a zero scale (a row never written, as in a zero-filled cache)
reads as zeros, a negative one flips the group's signs, a NaN or infinite one poisons the
group. The scales lie in the cache's bytes, on its device, so checking them would read the
cache back: a device synchronization on every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernelopt._errors import InputError, expected
from kernelopt.kernels.mla._validate import D_NOPE, D_QK, FP8_ROW_BYTES

if TYPE_CHECKING:
    import torch

__all__ = [
    "FP8_GROUP",
    "FP8_KV_BYTES",
    "FP8_MAX",
    "dequantize_kv_fp8",
    "quantize_kv_fp8",
]

FP8_GROUP = 128
"""Latent values that share one float32 scale."""
FP8_MAX = 448.0
"""Largest finite ``float8_e4m3fn`` value."""
FP8_KV_BYTES = FP8_ROW_BYTES
"""Bytes of one packed cache row: 512 + 16 + 128 = 656."""
SCALE_OFFSET = D_NOPE
"""Byte offset of the four float32 scales in a packed row."""
ROPE_OFFSET = D_NOPE + 4 * (D_NOPE // FP8_GROUP)
"""Byte offset of the 64 bfloat16 RoPE values in a packed row."""
_AMAX_FLOOR = 1e-4


def quantize_kv_fp8(kv: torch.Tensor) -> torch.Tensor:
    """Pack ``[..., 576]`` cache rows into the 656-byte FP8 layout.

    Parameters
    ----------
    kv : torch.Tensor
        ``[..., 576]`` rows (latent 512, then RoPE 64) in bfloat16, float16 or float32,
        e.g. a whole cache ``[num_blocks, page_size, 1, 576]``.

    Returns
    -------
    torch.Tensor
        ``[..., 656]`` uint8 on ``kv``'s device: per row 512 e4m3 values, four float32
        power-of-two scales and the RoPE part rounded to bfloat16.

    Raises
    ------
    InputError
        For a tensor that is not floating point or whose last dim is not 576.
    """
    import torch

    if not isinstance(kv, torch.Tensor):
        raise InputError(expected("a torch.Tensor", type(kv).__name__, where="kv"))
    if kv.dim() < 1 or kv.shape[-1] != D_QK:
        raise InputError(
            expected(f"rows of {D_QK} values [..., {D_QK}]", list(kv.shape), where="kv")
        )
    if kv.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise InputError(expected("bfloat16, float16 or float32", str(kv.dtype), where="kv"))
    lead = kv.shape[:-1]
    rows = kv.reshape(-1, D_QK).float()
    groups = rows[:, :D_NOPE].reshape(-1, D_NOPE // FP8_GROUP, FP8_GROUP)
    amax = groups.abs().amax(dim=-1, keepdim=True)  # NaN stays NaN: the group is poisoned
    scale = torch.exp2(torch.ceil(torch.log2(amax.clamp(min=_AMAX_FLOOR) / FP8_MAX)))
    scale = torch.where(torch.isnan(amax), amax, scale)
    latent = (groups / scale).to(torch.float8_e4m3fn).view(torch.uint8).reshape(-1, D_NOPE)
    packed = torch.cat(
        [
            latent,
            scale.reshape(-1, D_NOPE // FP8_GROUP).contiguous().view(torch.uint8),
            rows[:, D_NOPE:].to(torch.bfloat16).contiguous().view(torch.uint8),
        ],
        dim=1,
    )
    return packed.reshape(*lead, FP8_KV_BYTES)


def dequantize_kv_fp8(packed: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Unpack 656-byte FP8 rows into ``[..., 576]`` values (``fp8 · scale``, then RoPE).

    Parameters
    ----------
    packed : torch.Tensor
        ``[..., 656]`` uint8 in the layout :func:`quantize_kv_fp8` writes.
    dtype : torch.dtype, optional
        Result dtype; float32 when omitted (float64 for the reference).

    Returns
    -------
    torch.Tensor
        ``[..., 576]`` on ``packed``'s device.

    Raises
    ------
    InputError
        For a tensor that is not uint8 or whose last dim is not 656, or a ``dtype`` that is
        not a floating torch dtype.

    Notes
    -----
    Each scale is applied as stored, as the kernels apply it: a zero scale gives zeros, a
    negative one flips the signs, a NaN or infinite one poisons its group. None is refused,
    since reading the scales from a device cache would synchronize on every call.
    """
    import torch

    if not isinstance(packed, torch.Tensor):
        raise InputError(expected("a torch.Tensor", type(packed).__name__, where="packed"))
    if packed.dtype != torch.uint8 or packed.dim() < 1 or packed.shape[-1] != FP8_KV_BYTES:
        raise InputError(
            expected(
                f"a torch.uint8 tensor [..., {FP8_KV_BYTES}] (the FP8 cache layout)",
                f"{packed.dtype} {list(packed.shape)}",
                where="packed",
            )
        )
    out_dtype = torch.float32 if dtype is None else dtype
    if not isinstance(out_dtype, torch.dtype) or not out_dtype.is_floating_point:
        # An integer dtype would truncate every value; a name ("float16") is not a dtype.
        raise InputError(expected("a floating torch.dtype", repr(out_dtype), where="dtype"))
    # float32 arithmetic (float64 when asked for): an e4m3 value times a float32 scale is
    # exact in float64, and in float32 for the power-of-two scales the quantizer writes.
    work = torch.float64 if out_dtype == torch.float64 else torch.float32
    lead = packed.shape[:-1]
    rows = packed.reshape(-1, FP8_KV_BYTES)
    latent = rows[:, :SCALE_OFFSET].contiguous().view(torch.float8_e4m3fn).to(work)
    scale = rows[:, SCALE_OFFSET:ROPE_OFFSET].contiguous().view(torch.float32).to(work)
    latent = (latent.reshape(-1, D_NOPE // FP8_GROUP, FP8_GROUP) * scale[..., None]).reshape(
        -1, D_NOPE
    )
    rope = rows[:, ROPE_OFFSET:].contiguous().view(torch.bfloat16).to(work)
    return torch.cat([latent, rope], dim=1).to(out_dtype).reshape(*lead, D_QK)
