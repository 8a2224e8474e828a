"""``out=`` plumbing: use the caller's output tensor when given, else a persistent one.

A caller that owns its output (FlashInfer's ``out=``/``lse=`` style) passes it in and
keeps full control of its lifetime; the launcher only checks that it fits. Without one,
the launcher takes a buffer from its scope (or a fresh tensor when it has none).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import torch

from kernelopt._errors import InputError, expected
from kernelopt.buffers._tensors import (
    DeviceLike,
    ShapeLike,
    byte_span,
    nbytes_of,
    normalize_device,
    normalize_shape,
    same_device,
    spans_meet,
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
    *,
    inputs: Mapping[str, object] | Sequence[object] | torch.Tensor = (),
    in_place: str | int | None = None,
) -> torch.Tensor:
    """Check that a caller-given ``out`` is a contiguous tensor of this shape, dtype, device.

    Parameters
    ----------
    out : object
        What the caller passed: a torch.Tensor (a None out, which asks for a buffer,
        goes to :func:`resolve_out`).
    shape, dtype, device
        What the launcher will write: shape, element type and device.
    name : str
        The argument's name, used in error messages (``"out"``, ``"lse"``).
    inputs : mapping of str to object, sequence of object, or torch.Tensor of any shape
        What the kernel reads while it writes ``out``: name to value, or values (named
        ``input 0``, ``input 1``... in errors), or the one input tensor. Its tensors,
        those in lists, tuples and mappings among its values included (``{"pages": [k,
        v]}``), must share no memory with ``out``; other values are skipped.
    in_place : str or int, optional
        The input ``out`` may be, for a kernel that reads each element before it writes
        that element and no other (a pointwise update, RoPE on ``q``): its key in a
        mapping of ``inputs``, or its index in a sequence (0 for the one input tensor).
        ``out`` must then be that very tensor's memory (same ``data_ptr``, shape and
        strides), or share no memory with it; every other input is checked as before.

    Returns
    -------
    torch.Tensor
        ``out`` itself.

    Raises
    ------
    InputError
        ``Expected out of dtype torch.bfloat16, got torch.float16`` and the like, for a
        wrong type, shape, dtype, device, a sparse layout or a non-contiguous one
        (kernels write contiguous rows; a strided ``out`` would be silently scrambled),
        or a lazily conjugated or negated view (``x.conj()``), which would read back
        transformed, or a tensor whose bytes overlap an input's (``out=x`` for an input
        ``x``, or a view of it): the kernel would overwrite values it has still to read.
        A slice of the same storage that is disjoint from every input passes, and so
        does the ``in_place`` input itself. ``inputs`` that are neither a mapping, an
        iterable nor a tensor (a str is no sequence of inputs; a set or a generator is
        read once, as a sequence), and an ``in_place`` that names none of them.
    """
    given = _as_inputs(inputs)
    _check_in_place(in_place, given)
    if not isinstance(out, torch.Tensor):
        # None is resolve_out's request for a buffer; check_out checks a given tensor.
        raise InputError(expected(f"{name} to be a torch.Tensor", type(out).__name__))
    want_shape = validate_shape(normalize_shape(shape))
    want_dtype = validate_dtype(dtype)
    want_device = normalize_device(device)
    if tuple(out.shape) != want_shape:
        raise InputError(expected(f"{name} of shape {want_shape}", str(tuple(out.shape))))
    if out.dtype != want_dtype:
        raise InputError(expected(f"{name} of dtype {want_dtype}", str(out.dtype)))
    if not same_device(out.device, want_device):
        raise InputError(expected(f"{name} on device {want_device}", str(out.device)))
    if out.layout != torch.strided:
        # A sparse (or other non-strided) tensor keeps its values in member tensors: a
        # kernel writing rows has nowhere to write, and its "strides" would read (0, 0).
        raise InputError(expected(f"{name} of layout torch.strided", str(out.layout)))
    if not out.is_contiguous():
        # A view such as q[..., 64:] of a larger tensor: the kernel would write past it.
        raise InputError(
            expected(
                f"{name} to be contiguous",
                f"strides {tuple(out.stride())}: kernels write contiguous rows; pass a "
                f"contiguous {name} (or None) and copy the result into the strided view",
            )
        )
    if out.is_conj() or out.is_neg():
        # A lazy view (x.conj(), or a negative view) reads its memory back conjugated or
        # negated: what a kernel writes there, the caller would read transformed.
        lazy = "conjugated" if out.is_conj() else "negated"
        raise InputError(
            expected(f"{name} that is no lazy conjugate or negative view", f"a {lazy} view")
        )
    if given:
        _check_no_overlap(out, name, given, in_place)
    return out


def _check_in_place(in_place: object, inputs: Mapping[str, object] | Sequence[object]) -> None:
    """Refuse an ``in_place`` that names no tensor among ``inputs`` (a key of a mapping,
    an index of a sequence), whether or not an ``out`` was given."""
    if in_place is None:
        return
    if isinstance(inputs, Mapping):
        known: list[object] = list(inputs)
        value = inputs.get(in_place) if in_place in known else None  # type: ignore[call-overload]
    else:
        known = list(range(len(inputs)))
        index = in_place if isinstance(in_place, int) and not isinstance(in_place, bool) else -1
        value = inputs[index] if 0 <= index < len(inputs) else None
    if not isinstance(value, torch.Tensor):
        names = ", ".join(repr(key) for key in known) or "none given"
        raise InputError(
            expected(
                f"the key or index of one input tensor of inputs ({names})",
                repr(in_place),
                where="in_place",
            )
        )


def _named_inputs(
    inputs: Mapping[str, object] | Sequence[object],
) -> list[tuple[object, str, object]]:
    """``(key, label, value)`` of each value of ``inputs``, those in lists, tuples and
    mappings among them too: ``input 'pages'[1]`` for ``{"pages": [k, v]}``'s ``v``. The
    key is that of the top-level input the value is in (what ``in_place`` names)."""
    top = list(inputs.items()) if isinstance(inputs, Mapping) else list(enumerate(inputs))
    found: list[tuple[object, str, object]] = []
    for key, value in top:
        stack = [(f"input {key!r}" if isinstance(inputs, Mapping) else f"input {key}", value)]
        while stack:
            label, item = stack.pop()
            if isinstance(item, Mapping):
                stack += [(f"{label}[{k!r}]", v) for k, v in reversed(list(item.items()))]
            elif isinstance(item, list | tuple):
                stack += [(f"{label}[{i}]", v) for i, v in reversed(list(enumerate(item)))]
            else:
                found.append((key, label, item))
    return found


def _same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether ``a`` and ``b`` are views of the very same elements, laid out alike."""
    return (
        a.data_ptr() == b.data_ptr()
        and a.shape == b.shape
        and a.stride() == b.stride()
        and a.dtype == b.dtype
        and a.device == b.device
    )


def _as_inputs(
    inputs: Mapping[str, object] | Sequence[object] | torch.Tensor,
) -> Mapping[str, object] | Sequence[object]:
    """``inputs`` as a mapping or a sequence of what the kernel reads; anything else is an
    InputError naming ``inputs``.

    Checked whether or not an ``out`` was given, so that a wrong ``inputs`` fails on the
    first call and not only once a caller passes its own output.
    """
    if isinstance(inputs, torch.Tensor):
        return (inputs,)  # one input tensor: its truth value would be ambiguous
    if isinstance(inputs, Mapping | Sequence) and not isinstance(inputs, str | bytes | bytearray):
        return inputs
    if isinstance(inputs, Iterable) and not isinstance(inputs, str | bytes | bytearray):
        return tuple(inputs)  # a generator of tensors: read once, here
    raise InputError(
        expected(
            "a mapping of str to object, a sequence of object or a torch.Tensor",
            type(inputs).__name__,
            where="inputs",
        )
    )


def _check_no_overlap(
    out: torch.Tensor,
    name: str,
    inputs: Mapping[str, object] | Sequence[object],
    in_place: object = None,
) -> None:
    """Refuse an ``out`` whose bytes meet an input tensor's (see :func:`check_out`).

    Byte spans are compared, not storages or ``data_ptr``: a view of an input starts
    elsewhere and still overlaps it, while a disjoint slice of the same storage does
    not. Whole spans are compared, not elements (one comparison per input), so an input
    strided across ``out``'s bytes is refused even where no element meets one of ``out``'s.
    """
    span = byte_span(out)
    if span is None:
        return
    for key, label, value in _named_inputs(inputs):
        # Sparse and other non-strided layouts keep their memory in member tensors
        # (indices, values), which have no single span here.
        if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
            continue
        if value.device != out.device:  # another address space: no bytes in common
            continue
        own = in_place is not None and key == in_place and label == _top_label(inputs, key)
        if own and _same_memory(out, value):
            continue  # the input the kernel updates in place, element by element
        if spans_meet(span, byte_span(value)):
            if own:
                what = f"{name} that is {label} itself (same data_ptr, shape and strides)"
                got = "a tensor overlapping it otherwise"
            else:
                what = f"{name} that shares no memory with the kernel's inputs"
                got = f"a tensor overlapping {label}"
                if (
                    in_place is None
                    and _same_memory(out, value)
                    and label == _top_label(inputs, key)
                ):
                    # An exact alias: the one way through for an update in place.
                    got += f" (in_place={key!r} if the kernel updates it element by element)"
            raise InputError(expected(what, got))


def _top_label(inputs: Mapping[str, object] | Sequence[object], key: object) -> str:
    """The label of the top-level input ``key`` (not of a tensor nested in it)."""
    return f"input {key!r}" if isinstance(inputs, Mapping) else f"input {key}"


def resolve_out(
    out: torch.Tensor | None,
    shape: ShapeLike,
    dtype: torch.dtype,
    device: DeviceLike,
    name: str = "out",
    *,
    scope: BufferScope | None = None,
    inputs: Mapping[str, object] | Sequence[object] | torch.Tensor = (),
    in_place: str | int | None = None,
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
    inputs : mapping of str to object, sequence of object, or torch.Tensor of any shape
        What the kernel reads while it writes the output; a given ``out`` must share no
        memory with its tensors, those nested in lists, tuples and mappings included
        (see :func:`check_out`).
    in_place : str or int, optional
        The input a given ``out`` may be itself (same ``data_ptr``, shape and strides),
        for a kernel that updates it element by element; see :func:`check_out`.

    Returns
    -------
    torch.Tensor
        ``out`` itself when given; otherwise a contiguous tensor whose contents are
        unspecified (write every element).

    Raises
    ------
    InputError
        A given ``out`` of the wrong type, shape, dtype, device or layout, or one that
        overlaps an input other than as the ``in_place`` one itself; see
        :func:`check_out`. A ``scope`` that is no BufferScope, ``inputs`` that are neither
        a mapping, a sequence nor a tensor, or an ``in_place`` that names no input tensor,
        with or without ``out``.

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
    # Both checked whatever ``out`` is: a wrong argument fails on the first call, not only
    # on the call that first takes the other branch.
    _check_scope(scope)
    given = _as_inputs(inputs)
    _check_in_place(in_place, given)
    if out is not None:
        if not isinstance(out, torch.Tensor):
            # Here None is accepted too (it asks for a buffer), so the message says so.
            raise InputError(expected(f"{name} to be a torch.Tensor or None", type(out).__name__))
        return check_out(out, shape, dtype, device, name, inputs=given, in_place=in_place)
    if scope is not None:
        return scope.empty(name, shape, dtype, device)
    sizes, kind = validate_shape(normalize_shape(shape)), validate_dtype(dtype)
    nbytes_of(sizes, kind)  # more than torch can address: an InputError, not torch's overflow
    return torch.empty(sizes, dtype=kind, device=normalize_device(device))


def _check_scope(scope: object) -> None:
    """Refuse a ``scope`` that is neither None nor a :class:`BufferScope`."""
    if scope is None:
        return
    # Imported here: scope.py imports this module.
    from kernelopt.buffers.scope import BufferScope

    if not isinstance(scope, BufferScope):
        raise InputError(expected("a BufferScope or None", type(scope).__name__, where="scope"))
