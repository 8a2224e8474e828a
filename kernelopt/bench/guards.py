"""Guards against timings of work that did not happen.

A fast time is only evidence when the kernel really computed its output, computed it
from the inputs it was given, and did so on the stream the events were recorded on:

- :func:`poison` / :func:`check_written`: fill outputs with NaN (floats) or a sentinel
  (integers) before the call and count what is still poisoned after it; an output the
  kernel skipped keeps its poison (a zeroed or reused buffer would hide it). With
  ``written=``, only a region of each output must be written and the rest must keep its
  poison (a KV-cache append writes its slots and nothing else). The outputs' contents are
  lost: a kernel that reads them (in place) reads the poison.
- :func:`check_responds_to_inputs`: a function whose output is the same for different
  inputs is returning a cached result, not computing.
- :func:`check_timed_stream`: work launched on another stream finishes outside the
  events and reads as free.

Each check raises :class:`~kernelopt.InputError` with ``Expected …, got …`` on failure.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kernelopt._errors import DeviceError, InputError, expected

__all__ = [
    "check_responds_to_inputs",
    "check_timed_stream",
    "check_written",
    "poison",
    "poison_hint",
    "poison_value",
    "unwritten_count",
    "unwritten_where",
]


def _torch() -> Any:
    import torch

    return torch


def _named_tensors(outputs: Any, name: str = "outputs") -> list[tuple[str, Any]]:
    """The tensors of ``outputs``, each with the expression that reaches it from the
    argument ``name``: ``outputs`` for a lone tensor, ``outputs[1]``, ``outputs['lse']``,
    ``outputs[0]['o']`` in nested lists, tuples and mappings."""
    torch = _torch()
    if isinstance(outputs, torch.Tensor):
        return [(name, outputs)]
    if isinstance(outputs, Mapping):
        items: list[tuple[str, Any]] = [(f"{name}[{key!r}]", v) for key, v in outputs.items()]
    elif isinstance(outputs, (list, tuple)):
        items = [(f"{name}[{index}]", item) for index, item in enumerate(outputs)]
    else:
        got = type(outputs).__name__
        if hasattr(outputs, "__array_interface__"):
            # A numpy array cannot be poisoned in place through torch as it is passed.
            got += (
                " (a numpy array is not poisoned nor checked: pass torch.from_numpy(array), "
                "which shares its memory)"
            )
        raise InputError(expected("a tensor or a sequence of tensors", got, where=name))
    return [named for where, item in items for named in _named_tensors(item, where)]


def _as_tensors(outputs: Any) -> list[Any]:
    return [tensor for _name, tensor in _named_tensors(outputs)]


def poison_value(dtype: Any) -> float | int:
    """The value :func:`poison` writes into a tensor of ``dtype``.

    NaN for floating dtypes (no kernel writes NaN into a valid output); for integer
    dtypes the most negative value (the largest for unsigned), which an index or a count
    never holds.

    Raises
    ------
    InputError
        For dtypes with no value that cannot also be a valid output (bool, complex, FP4
        ``float4_e2m1fn_x2``, which has no NaN) or with no fill (sub-byte and quantized
        dtypes); the message of bool and FP4 says to view the output as uint8
        (``out.view(torch.uint8)``).
    """
    torch = _torch()
    if dtype == torch.bool:
        # A bool has no value a kernel cannot write; its bytes viewed as uint8 have 255.
        raise InputError(
            expected(
                "a floating or integer output dtype to poison",
                f"{dtype} (check a bool output viewed as uint8, out.view(torch.uint8): it is "
                "poisoned with 255, which no bool holds)",
            )
        )
    if dtype.is_complex:
        raise InputError(expected("a floating or integer output dtype to poison", str(dtype)))
    if dtype == getattr(torch, "float4_e2m1fn_x2", None):
        # e2m1 has no NaN, and every byte is a valid pair of values: no value is poison.
        raise InputError(
            expected(
                "a floating or integer output dtype to poison",
                f"{dtype} (e2m1 has no NaN and every byte holds two valid values: check an "
                "FP4 output viewed as uint8, out.view(torch.uint8), poisoned with 255 (the "
                "pair -6, -6), at inputs whose output holds no such pair)",
            )
        )
    if dtype.is_floating_point:
        return float("nan")
    try:
        info = torch.iinfo(dtype)
    except TypeError:  # bit, sub-byte and quantized dtypes
        raise InputError(
            expected(
                "a floating or integer output dtype to poison",
                f"{dtype} (check the output viewed as an integer dtype of its element size, "
                "out.view(torch.uint8) for one byte)",
            )
        ) from None
    return int(info.max) if info.min == 0 else int(info.min)


def poison(outputs: Any) -> None:
    """Fill every output tensor with its poison value (see :func:`poison_value`), in place.

    Parameters
    ----------
    outputs : Tensor or sequence of Tensor
        The buffers the timed function is supposed to overwrite completely.
    """
    tensors = _as_tensors(outputs)
    # Every dtype checked before any is filled: a bool beside a float output was refused
    # after the float one had been written.
    values = [poison_value(tensor.dtype) for tensor in tensors]
    for tensor, value in zip(tensors, values, strict=True):
        tensor.fill_(value)


def unwritten_count(outputs: Any) -> int:
    """Count the elements of the outputs that still hold their poison value.

    Synchronizes with the device (reads one integer per tensor back).

    Parameters
    ----------
    outputs : Tensor, or sequence or mapping of them
        The outputs poisoned by :func:`poison`: tensors of any shape and of a floating
        or integer dtype, possibly nested in lists, tuples and mappings.

    Returns
    -------
    int
        Elements still NaN (floating dtypes) or equal to the dtype's poison value
        (integer dtypes), over all tensors.

    Raises
    ------
    InputError
        If ``outputs`` holds something other than tensors, or a tensor of a dtype
        without a poison value (bool, complex).
    """
    return sum(int(_poisoned(tensor).sum().item()) for tensor in _as_tensors(outputs))


def _poisoned(tensor: Any) -> Any:
    """A bool tensor of ``tensor``'s shape: True where it holds its poison value."""
    value = poison_value(tensor.dtype)
    return tensor.isnan() if isinstance(value, float) else tensor == value


def unwritten_where(outputs: Any, name: str = "outputs") -> str:
    """Which outputs still hold poison, and where the first poisoned element of each is.

    A count alone ("5376 of 9216 still poisoned") names neither the output nor the
    rows: a padded-varlen kernel that rightly skips padding and one that drops a tail
    look alike until the first index is read.

    Parameters
    ----------
    outputs : Tensor, or sequence or mapping of them
        The outputs poisoned by :func:`poison`.
    name : str
        The argument ``outputs`` was given as, the start of every expression.

    Returns
    -------
    str
        ``"in outputs[0] of shape [3, 2, 24, 64], the first at outputs[0][0, 0, 5, 0]"``
        for one poisoned output; ``"across 2 outputs: 3 in ...; 2 in ..."``, each part
        opened by its count, for more; ``""`` when none is.

    Raises
    ------
    InputError
        As :func:`unwritten_count`.
    """
    return _joined(
        [
            _marked(where, tensor, _poisoned(tensor))
            for where, tensor in _named_tensors(outputs, name)
        ]
    )


def _marked(where: str, tensor: Any, mask: Any) -> tuple[int, str]:
    """How many elements ``mask`` marks in ``tensor``, and ``"in <where> of shape [...],
    the first at <where>[i, j]"`` naming the first of them (``""`` for none)."""
    flat_mask = mask.reshape(-1)
    count = int(flat_mask.sum().item())
    if not count:
        return 0, ""
    # argmax gives the first of equal maxima: the first marked element.
    flat = int(flat_mask.to(_torch().uint8).argmax().item())
    index = ", ".join(str(i) for i in _unravel(flat, tuple(tensor.shape)))
    shape = ", ".join(str(size) for size in tensor.shape)
    first = f"{where}[{index}]" if tensor.dim() else where  # a 0-d tensor is one element
    return count, f"in {where} of shape [{shape}], the first at {first}"


def _joined(parts: list[tuple[int, str]]) -> str:
    parts = [(count, text) for count, text in parts if count]
    if len(parts) == 1:
        return parts[0][1]
    each = "; ".join(f"{count} {text}" for count, text in parts)
    return f"across {len(parts)} outputs: {each}" if parts else ""


def _unravel(flat: int, shape: tuple[int, ...]) -> list[int]:
    """The index in a C-ordered tensor of ``shape`` of its ``flat``-th element."""
    index = []
    for size in reversed(shape):
        flat, position = divmod(flat, size)
        index.append(position)
    return index[::-1]


# Each output tensor, named from the argument it came in, with a bool mask of the region
# the kernel must write (expanded to the tensor's shape), or None for the whole tensor.
_Guarded = list[tuple[str, Any, Any]]

# Why a kernel leaves its outputs poisoned though it writes them.
_READ_POISON = (
    "a kernel that reads its outputs (one that works in place) read the poison, so check an "
    "in-place kernel against its reference on a fresh copy of its inputs instead"
)
# Why a kernel leaves every element of its outputs poisoned, beside not running at all.
_NONE_WRITTEN = (
    f"; none was written: {_READ_POISON}; or an output passed is a copy, not a view of the "
    "memory the kernel writes (advanced indexing, t[idx], copies)"
)


def _guarded(
    outputs: Any, written: Any = None, name: str = "outputs", written_name: str = "written"
) -> _Guarded:
    """The outputs to poison and check, each with the region it must be written in.

    Everything is checked before any output is poisoned: the outputs hold at least one
    tensor, each of a dtype with a poison, and each region given fits its output.

    Raises
    ------
    InputError
        For outputs that hold no tensor (``[]``: nothing would be checked) or something
        other than tensors, a dtype without a poison (:func:`poison_value`), or a
        ``written`` region that does not fit its output.
    """
    named = _named_tensors(outputs, name)
    if not named:
        # No tensor to poison passed every call, a kernel that wrote nothing included.
        got = f"none in {type(outputs).__name__} {outputs!r}"
        raise InputError(expected("at least one output tensor to check", got, where=name))
    for _where, tensor in named:
        poison_value(tensor.dtype)
    if written is None:
        return [(where, tensor, None) for where, tensor in named]
    regions = _regions(outputs, written, written_name)
    return [
        (where, tensor, _region_mask(region, region_where, tensor, where))
        for (where, tensor), (region_where, region) in zip(named, regions, strict=True)
    ]


def _regions(outputs: Any, written: Any, where: str) -> list[tuple[str, Any]]:
    """The region given for each tensor of ``outputs``, in the order of
    :func:`_named_tensors`: ``written`` follows the nesting of ``outputs``, None for an
    output (or a part of them) written whole."""
    torch = _torch()
    if isinstance(outputs, torch.Tensor):
        return [(where, written)]
    if written is None:
        return [(where, None)] * len(_named_tensors(outputs))
    if isinstance(outputs, Mapping):
        if not isinstance(written, Mapping) or not set(written) <= set(outputs):
            keys = ", ".join(repr(key) for key in outputs)
            raise InputError(
                expected(
                    f"a mapping of regions keyed as the outputs ({keys})",
                    _shown(written),
                    where=where,
                )
            )
        return [
            leaf
            for key, item in outputs.items()
            for leaf in _regions(item, written.get(key), f"{where}[{key!r}]")
        ]
    if not isinstance(written, (list, tuple)) or len(written) != len(outputs):
        raise InputError(
            expected(
                f"one region per output, a list of {len(outputs)} (None for an output written "
                "whole)",
                _shown(written),
                where=where,
            )
        )
    return [
        leaf
        for index, (item, region) in enumerate(zip(outputs, written, strict=True))
        for leaf in _regions(item, region, f"{where}[{index}]")
    ]


def _shown(value: Any) -> str:
    if isinstance(value, (list, tuple, Mapping)):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__


def _region_mask(region: Any, where: str, tensor: Any, output: str) -> Any:
    """A bool mask of ``tensor``'s shape, True where the kernel must write; None for the
    whole tensor. ``region`` is a bool mask of the tensor's shape or of its leading
    dimensions, or indices of its rows (along its first dimension)."""
    torch = _torch()
    if region is None:
        return None
    what = "a bool mask or a tensor of row indices (None: the whole output)"
    if not isinstance(region, torch.Tensor):
        raise InputError(expected(what, type(region).__name__, where=where))
    shape = tuple(tensor.shape)
    trailing = (1,) * (tensor.dim() - region.dim())
    if region.dtype == torch.bool:
        if tuple(region.shape) != shape[: region.dim()]:
            said = ", ".join(str(n) for n in shape)
            got = ", ".join(str(n) for n in region.shape)
            raise InputError(
                expected(
                    f"a bool mask of the shape of {output} [{said}] or of its leading dimensions",
                    f"shape [{got}]",
                    where=where,
                )
            )
        return region.to(tensor.device).reshape(*region.shape, *trailing).expand(shape)
    if region.is_floating_point() or region.is_complex() or not tensor.dim():
        raise InputError(expected(what, f"{region.dtype} for {output}", where=where))
    rows = shape[0]
    index = region.reshape(-1).to(device=tensor.device, dtype=torch.int64)
    outside = (index < 0) | (index >= rows)
    if bool(outside.any().item()):
        at = int(outside.to(torch.uint8).argmax().item())
        value = int(index[at].item())
        # -1 would index the last row: a padding slot taken for a row the kernel writes.
        padding = " (a padding slot writes nothing: pass slots[slots >= 0])" if value < 0 else ""
        raise InputError(
            expected(
                f"row indices of {output} in [0, {rows})",
                f"{value} at position {at}{padding}",
                where=where,
            )
        )
    rows_written = torch.zeros(rows, dtype=torch.bool, device=tensor.device)
    rows_written[index] = True
    return rows_written.reshape(rows, *(1,) * (tensor.dim() - 1)).expand(shape)


def _poison_guarded(guarded: _Guarded) -> None:
    """Poison every output whole: a region's outside is poisoned too, so that a write
    there shows."""
    for _where, tensor, _region in guarded:
        tensor.fill_(poison_value(tensor.dtype))


def _guard_failure(
    guarded: _Guarded, *, by: str = "", timed: bool = False, shared: Sequence[str] = ()
) -> str | None:
    """The message for outputs that fail their check after a call, or None when every
    element of every region was written and nothing outside a region was.

    ``by`` ends the expectation (``" by each timed call"``); ``timed`` counts the
    elements as ``"N unwritten"`` rather than ``"N of M still poisoned"``; ``shared``
    names outputs that share memory with the kernel's inputs (``"outputs shares memory
    with inputs[0][0]"``), the likely cause of elements left unwritten.
    """
    lost: list[tuple[int, str]] = []
    strays: list[tuple[int, str]] = []
    held: list[Any] = []
    size = 0
    for where, tensor, region in guarded:
        poisoned = _poisoned(tensor)
        if region is None:
            size += int(tensor.numel())
            part = _marked(where, tensor, poisoned)
        else:
            size += int(region.sum().item())
            part = _marked(where, tensor, poisoned & region)
            strays.append(_marked(where, tensor, ~poisoned & ~region))
        lost.append(part)
        if part[0] and tensor.dtype not in held:
            held.append(tensor.dtype)
    missing = sum(count for count, _text in lost)
    stray = sum(count for count, _text in strays)
    if not missing and not stray:
        return None
    said = []
    if missing:
        count = f"{missing} unwritten" if timed else f"{missing} of {size} still poisoned"
        if shared:
            cause = f"; {', '.join(shared)}: {_READ_POISON}"
        else:
            cause = _NONE_WRITTEN if missing == size else ""
        said.append(f"{count}{_hint(held)} {_joined(lost)}{cause}")
    if stray:
        where = "outside the region" if missing else "there"
        said.append(f"{stray} elements written {where} {_joined(strays)}")
    if missing and stray:
        what = "every element of the written= region written and nothing outside it"
    elif missing:
        what = "every output element written"
    else:
        what = "nothing written outside the written= region"
    return expected(what + by, "; and ".join(said))


def check_written(fn: Callable[[], object], outputs: Any, *, written: Any = None) -> None:
    """Poison ``outputs``, call ``fn()`` once and require every element to be overwritten.

    Parameters
    ----------
    fn : callable
        One call of the kernel, writing into ``outputs``.
    outputs : Tensor or sequence of Tensor
        The buffers ``fn`` must fill. Their contents are overwritten with the poison,
        which stays where the check fails (see Notes for in-place kernels).
    written : optional
        The region of each output ``fn`` writes, for a kernel that writes part of a
        large buffer (a paged KV-cache append writes the slots of its tokens): a bool
        mask of the output's shape or of its leading dimensions, or a tensor of indices
        of its rows (first dimension); None for an output written whole. For several
        outputs, a list (or mapping) of regions in the same nesting. The whole of each
        output is poisoned; every element of its region must be written, and every
        element outside it must still hold the poison (a stray write is named).

    Raises
    ------
    InputError
        When ``fn`` is not callable (checked before the outputs are poisoned:
        ``check_written(kernel(x), out)`` passes the call's result), when ``outputs``
        holds no tensor (``[]``: nothing would be checked), or when some
        elements still hold the poison, naming each such output and its first poisoned
        element and the poison it holds (``Expected every output element written, got
        128 of 4096 still poisoned (-2147483648, the poison of torch.int32: never written,
        or written as -2147483648 by the kernel) in outputs[1] of shape [4096], the first
        at outputs[1][3968]``; where no element was written, the likely causes: a kernel
        that reads its outputs, or an output that is a copy); when an element outside a
        ``written`` region was written, naming the first; before anything is written,
        for a bool or complex output (:func:`poison_value`) or a region that does not fit
        its output (a row index out of range, such as a padding slot of -1).

    Notes
    -----
    A kernel that rightly leaves some elements unwritten (the padding of a padded
    varlen batch) is checked through views of the regions it must write: pass
    ``[out[b, :, :n] for b, n in enumerate(lengths)]`` as ``outputs``. A view is
    poisoned and counted in place; the padding outside it is never poisoned. Where the
    elements outside must stay untouched too, pass the whole buffer and ``written=``.

    A kernel that reads what it writes (in place: a rotary embedding updating ``q`` and
    ``k``, an update of a running state) reads the poison and fails. Check it instead
    against its reference on a fresh copy of its inputs.
    """
    if not callable(fn):
        raise InputError(expected("a callable writing the outputs", type(fn).__name__, where="fn"))
    guarded = _guarded(outputs, written)
    _poison_guarded(guarded)
    fn()
    failure = _guard_failure(guarded)
    if failure is not None:
        raise InputError(failure)


def poison_hint(outputs: Any) -> str:
    """What a count of poisoned elements may also mean, for each poison still held:
    `` (NaN: ...)`` for floating outputs, `` (-2147483648, the poison of torch.int32:
    ...)`` for integer ones; ``""`` when no output holds poison.

    The poison of a float is NaN, so a kernel that writes NaN (an overflow, a division
    by zero) leaves the same count as one that skips the elements; an integer kernel that
    writes its dtype's most negative value as a sentinel (INT32_MIN for "no expert") does
    the same. The message names the value, so that its user does not look for a missing
    write alone.

    Parameters
    ----------
    outputs : Tensor, or sequence or mapping of them
        The outputs that were poisoned.

    Returns
    -------
    str
        The words to append to the count, with a leading space, or ``""``.

    Raises
    ------
    InputError
        As :func:`unwritten_count`.
    """
    held = []
    for tensor in _as_tensors(outputs):
        if tensor.dtype not in held and bool(_poisoned(tensor).any().item()):
            held.append(tensor.dtype)
    return _hint(held)


def _hint(held: list[Any]) -> str:
    """:func:`poison_hint`'s words for the dtypes whose poison is still held."""
    parts = []
    if any(dtype.is_floating_point for dtype in held):
        parts.append("NaN: never written, or written as NaN by the kernel")
    torch = _torch()
    for dtype in held:
        if not dtype.is_floating_point:
            value = poison_value(dtype)
            part = (
                f"{value}, the poison of {dtype}: never written, or written as {value} by the "
                "kernel"
            )
            if dtype == torch.int8:
                # An int8 view keeps no trace of the fp8 tensor whose bytes it holds
                # (view(dtype) sets no _base), and 0x80 is e4m3fn's and e5m2's -0.0, which
                # a quantizer writes for tiny negative values.
                part += (
                    ", or, where these are the bytes of an fp8 output, written as -0.0 (0x80 "
                    "in e4m3fn and e5m2): check the fp8 tensor itself, poisoned with NaN, or "
                    "its bytes as uint8, out.view(torch.uint8), poisoned with 255, a NaN of "
                    "e4m3fn and e5m2"
                )
            parts.append(part)
    return f" ({'; '.join(parts)})" if parts else ""


def _snapshot(result: Any) -> list[Any]:
    return [t.detach().clone() for t in _as_tensors(result)]


def _same(first: list[Any], second: list[Any]) -> bool:
    """Whether two snapshots hold the same values, NaN equal to NaN.

    ``torch.equal`` finds NaN unequal to itself, so a buffer never written, still NaN
    from its poisoning, would read as an output that changed.
    """
    torch = _torch()

    def same(a: Any, b: Any) -> bool:
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.is_floating_point() or a.is_complex():
            return bool(((a == b) | (a.isnan() & b.isnan())).all())
        return bool(torch.equal(a, b))

    return len(first) == len(second) and all(same(a, b) for a, b in zip(first, second, strict=True))


def _argument_leaves(value: Any) -> list[Any]:
    """The tensors and other values of one argument set, walked through lists, tuples
    and mappings: a scale or a flag passed beside the tensors is an argument too."""
    if isinstance(value, Mapping):
        return [leaf for item in value.values() for leaf in _argument_leaves(item)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _argument_leaves(item)]
    return [value]


def _same_argument(first: Any, second: Any) -> bool:
    torch = _torch()
    if isinstance(first, torch.Tensor) or isinstance(second, torch.Tensor):
        return (
            isinstance(first, torch.Tensor)
            and isinstance(second, torch.Tensor)
            and first.shape == second.shape
            and torch.equal(first, second)
        )
    try:
        return bool(first == second)
    except (TypeError, ValueError, RuntimeError):  # an array compares element by element
        return first is second


def _same_arguments(first: Sequence[Any], second: Sequence[Any]) -> bool:
    a, b = _argument_leaves(first), _argument_leaves(second)
    return len(a) == len(b) and all(_same_argument(x, y) for x, y in zip(a, b, strict=True))


def _input_calls(
    fn: Callable[..., object], input_sets: Sequence[Sequence[Any]] | Sequence[Mapping[str, Any]]
) -> list[Callable[[], object]]:
    """One call of ``fn`` per argument set, as the timer's ``inputs=`` takes them: a tuple
    or list is passed positionally, a mapping by keyword.

    ``fn(*mapping)`` would pass the mapping's keys (``fn("x")``), and ``fn(*tensor)`` the
    tensor's rows, each failing inside ``fn`` with an error that names neither.
    """
    if not callable(fn):
        # functools.partial refused it with "the first argument must be callable".
        raise InputError(expected("a callable", type(fn).__name__, where="fn"))
    if isinstance(input_sets, str | bytes | Mapping) or not isinstance(input_sets, Sequence):
        raise InputError(
            expected(
                "input sets as a list of argument tuples or mappings",
                type(input_sets).__name__,
                where="input_sets",
            )
        )
    if len(input_sets) < 2:
        raise InputError(expected("at least 2 input sets", len(input_sets)))
    calls: list[Callable[[], object]] = []
    for index, args in enumerate(input_sets):
        if isinstance(args, Mapping):
            calls.append(functools.partial(fn, **args))
        elif isinstance(args, list | tuple):
            calls.append(functools.partial(fn, *args))
        else:
            raise InputError(
                expected(
                    "an argument tuple or mapping (a lone tensor x is the set (x,))",
                    type(args).__name__,
                    where=f"input_sets[{index}]",
                )
            )
    return calls


def _holds_tensors(value: Any) -> bool:
    """Whether ``value`` is a tensor, or a non-empty nest of lists, tuples and mappings
    of tensors only."""
    try:
        return bool(_as_tensors(value))
    except InputError:
        return False


def check_responds_to_inputs(
    fn: Callable[..., object],
    input_sets: Sequence[Sequence[Any]],
    *,
    outputs: Any = None,
) -> None:
    """Require ``fn``'s output to change when its inputs change (no cached results).

    Parameters
    ----------
    fn : callable
        Called as ``fn(*args)`` for each argument tuple of ``input_sets``.
    input_sets : sequence of tuples or mappings
        At least two argument sets whose tensors differ (draw fresh random inputs), as
        the timer's ``inputs=`` takes them: a tuple or list is passed positionally
        (``fn(*args)``), a mapping by keyword (``fn(**kwargs)``). Other arguments (a
        scale, a flag) may ride along and compare with ``==``.
    outputs : Tensor or sequence of Tensor, optional
        Buffers ``fn`` writes into, the same for every input set; when None, ``fn``'s
        return value is the output (a tensor, or a list, tuple or mapping of them). A
        kernel that writes into buffers of each input set (a cache passed in the set)
        returns them: ``fn=lambda k, v, cache: (kernel(k, v, cache), cache)[1]``.

    Raises
    ------
    InputError
        When ``fn`` is not callable, fewer than two input sets are given, or a set that
        is neither a tuple, a list nor a mapping, or ``outputs`` that are no tensors (a
        callable, a numpy array), before ``fn`` is called; when ``fn``
        returns no tensor and ``outputs`` is None; when the input sets are themselves
        equal (the check would prove nothing), or when two different input sets give the
        same outputs (NaN equal to NaN: a buffer left poisoned is unchanged).
    """
    calls = _input_calls(fn, input_sets)
    if callable(outputs):
        # Outputs are the buffers themselves, the same for every set: buffers that live in
        # each input set reach the check through fn's return value.
        raise InputError(
            expected(
                "the output tensors fn writes, the same for every input set",
                f"{type(outputs).__name__} (for outputs inside each input set, have fn return "
                "them: fn=lambda k, v, cache: (kernel(k, v, cache), cache)[1])",
                where="outputs",
            )
        )
    if outputs is not None:
        _named_tensors(outputs)  # refused before fn runs, the argument named
    results: list[list[Any]] = []
    for index, call in enumerate(calls):
        returned = call()
        if outputs is None and not _holds_tensors(returned):
            # The function wrote into buffers and returned nothing to compare.
            raise InputError(
                expected(
                    "fn to return its output tensors, or outputs= naming the buffers it writes",
                    f"{type(returned).__name__} from input set {index}",
                )
            )
        results.append(_snapshot(returned if outputs is None else outputs))
    for i in range(1, len(input_sets)):
        if _same_arguments(input_sets[0], input_sets[i]):
            raise InputError(
                expected("input sets that differ", f"input set {i} equal to input set 0")
            )
        if _same(results[0], results[i]):
            raise InputError(
                expected(
                    "different outputs for different inputs",
                    f"identical outputs for input sets 0 and {i} (a cached result?)",
                )
            )


def check_timed_stream(
    fn: Callable[[], object], *, calls: int = 20, min_tail_us: float = 50.0
) -> None:
    """Require ``fn``'s device work to run on the current stream, where the events are.

    Times ``calls`` calls with CUDA events on the current stream, waits for that stream
    alone, then times a device-wide synchronize. Work left running on another stream
    shows as a tail: when the tail is over ``min_tail_us`` and larger than the event
    time, the events missed the work.

    Parameters
    ----------
    fn : callable
        One call of the kernel.
    calls : int
        Calls to make, so that side-stream work accumulates past noise.
    min_tail_us : float
        Device-wide synchronize time below which no conclusion is drawn, µs.

    Raises
    ------
    DeviceError
        Without CUDA, saying why torch sees no GPU and what to do.
    InputError
        When ``fn`` is not callable (checked first, with or without CUDA), or the work
        ran outside the timed stream.
    """
    # Imported here: the timer imports this module.
    from kernelopt.bench.timer import cuda_available, no_cuda_reason

    if not callable(fn):
        raise InputError(expected("a callable", type(fn).__name__, where="fn"))

    # Asked before importing torch: without torch, the import failed with a bare
    # ModuleNotFoundError instead of this refusal.
    if not cuda_available():
        raise DeviceError(expected("a CUDA device to check streams", f"none: {no_cuda_reason()}"))
    torch = _torch()
    fn()
    torch.cuda.synchronize()
    stream = torch.cuda.current_stream()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record(stream)
    for _ in range(calls):
        fn()
    end.record(stream)
    end.synchronize()
    began = time.perf_counter_ns()
    torch.cuda.synchronize()
    tail_us = (time.perf_counter_ns() - began) / 1000.0
    events_us = start.elapsed_time(end) * 1000.0
    if tail_us > min_tail_us and tail_us > events_us:
        raise InputError(
            expected(
                "the function's device work on the current (timed) stream",
                f"{tail_us:.0f} us of work still running elsewhere after the timed stream "
                f"finished ({events_us:.0f} us on the timed stream for {calls} calls)",
            )
        )
