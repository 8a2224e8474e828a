"""``out=`` plumbing: use the caller's output tensor when given, else a persistent one.

A caller that owns its output (FlashInfer's ``out=``/``lse=`` style) passes it in and
keeps full control of its lifetime; the launcher only checks that it fits. Without one,
the launcher takes a buffer from its scope (or a fresh tensor when it has none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from kernelopt._errors import InputError, expected
from kernelopt.buffers._tensors import (
    DeviceLike,
    ShapeLike,
    nbytes_of,
    normalize_device,
    normalize_shape,
    same_device,
    validate_dtype,
    validate_shape,
)

if TYPE_CHECKING:
    from kernelopt.buffers.scope import BufferScope

__all__ = ["check_out", "resolve_out"]


def check_out(
    out: object,
    shape: ShapeLike,
    dtype: torch.dtype,
    device: DeviceLike,
    name: str = "out",
) -> torch.Tensor:
    """Check that a caller-given ``out`` is a contiguous tensor of this shape, dtype, device.

    Parameters
    ----------
    out : object
        What the caller passed.
    shape, dtype, device
        What the launcher will write: shape, element type and device.
    name : str
        The argument's name, used in error messages (``"out"``, ``"lse"``).

    Returns
    -------
    torch.Tensor
        ``out`` itself.

    Raises
    ------
    InputError
        ``Expected out of dtype torch.bfloat16, got torch.float16`` and the like, for a
        wrong type, shape, dtype, device or a non-contiguous layout (kernels write
        contiguous rows; a strided ``out`` would be silently scrambled), or a lazily
        conjugated or negated view (``x.conj()``), which would read back transformed.
    """
    if not isinstance(out, torch.Tensor):
        raise InputError(expected(f"{name} to be a torch.Tensor or None", type(out).__name__))
    want_shape = validate_shape(normalize_shape(shape))
    want_dtype = validate_dtype(dtype)
    want_device = normalize_device(device)
    if tuple(out.shape) != want_shape:
        raise InputError(expected(f"{name} of shape {want_shape}", str(tuple(out.shape))))
    if out.dtype != want_dtype:
        raise InputError(expected(f"{name} of dtype {want_dtype}", str(out.dtype)))
    if not same_device(out.device, want_device):
        raise InputError(expected(f"{name} on device {want_device}", str(out.device)))
    if not out.is_contiguous():
        raise InputError(expected(f"{name} to be contiguous", f"strides {tuple(out.stride())}"))
    if out.is_conj() or out.is_neg():
        # A lazy view (x.conj(), or a negative view) reads its memory back conjugated or
        # negated: what a kernel writes there, the caller would read transformed.
        lazy = "conjugated" if out.is_conj() else "negated"
        raise InputError(
            expected(f"{name} that is no lazy conjugate or negative view", f"a {lazy} view")
        )
    return out


def resolve_out(
    out: torch.Tensor | None,
    shape: ShapeLike,
    dtype: torch.dtype,
    device: DeviceLike,
    name: str = "out",
    *,
    scope: BufferScope | None = None,
) -> torch.Tensor:
    """Return the caller's ``out`` after checking it, or a buffer to write the output into.

    Parameters
    ----------
    out : torch.Tensor or None
        The caller's output tensor, of shape ``shape``, or None to let the launcher
        provide one.
    shape : int or sequence of int
        The output's shape.
    dtype : torch.dtype
        The output's element type.
    device : torch.device, str or int
        The output's device.
    name : str
        The output's name: the argument name in errors, and the buffer name in ``scope``.
    scope : BufferScope, optional
        Where a missing ``out`` comes from: the scope's persistent buffer ``name``. Without
        a scope, a fresh ``torch.empty`` (the caller then owns it outright).

    Returns
    -------
    torch.Tensor
        ``out`` itself when given; otherwise a contiguous tensor whose contents are
        unspecified (write every element).

    Raises
    ------
    InputError
        A given ``out`` of the wrong type, shape, dtype, device or layout; see
        :func:`check_out`.

    Examples
    --------
    >>> import torch
    >>> from kernelopt.buffers import resolve_out
    >>> mine = torch.empty(2, 3, dtype=torch.float16)
    >>> resolve_out(mine, (2, 3), torch.float16, "cpu") is mine
    True
    >>> resolve_out(mine, (2, 3), torch.bfloat16, "cpu")
    Traceback (most recent call last):
    ...
    kernelopt._errors.InputError: Expected out of dtype torch.bfloat16, got torch.float16
    """
    if out is not None:
        return check_out(out, shape, dtype, device, name)
    if scope is not None:
        return scope.empty(name, shape, dtype, device)
    sizes, kind = validate_shape(normalize_shape(shape)), validate_dtype(dtype)
    nbytes_of(sizes, kind)  # more than torch can address: an InputError, not torch's overflow
    return torch.empty(sizes, dtype=kind, device=normalize_device(device))
