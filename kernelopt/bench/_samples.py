"""One check of a sample list, for :class:`Measurement` and :func:`judge` alike.

A list or tuple of numbers, a numpy array of ints or floats, what numpy reads as an array
and a dense tensor on the CPU are samples; bools, text, complex numbers, nested lists and
arrays of more than one dimension are refused with the argument named. The callers keep
what is theirs: which containers they take, how many samples, which values (a time of 0
is a sample of a :class:`Measurement`, never of :func:`judge`) and the type they return.

Neither numpy nor torch is imported here: an array or a tensor exists only where its
library was imported (looked up in ``sys.modules``), and a list of numbers is checked in
Python.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Sequence
from typing import Any

from kernelopt._errors import InputError, expected

__all__ = ["sample_array", "sample_floats"]


def _is_number(item: object) -> bool:
    # numbers.Real, as a float32 array's items are: samples too.
    return not isinstance(item, bool) and isinstance(item, numbers.Real)


def _tensor_array(values: Any, name: str) -> Any:
    """A torch tensor's values as a numpy array: float64 for any floating dtype.

    Parameters
    ----------
    values : torch.Tensor
        ``[n]`` samples, dense and on the CPU.
    name : str
        The argument, named in errors.

    Returns
    -------
    numpy.ndarray
        The tensor's values, of its shape; float64 for a floating tensor (numpy holds no
        bfloat16 or float8, and a float64 holds each of their values exactly).
    """
    import torch

    if values.device.type != "cpu":
        # .numpy() of a CUDA tensor fails in torch's own words; no copy is made to the
        # host behind the caller's back (a copy synchronizes the device).
        raise InputError(
            expected(
                "samples on the CPU (tensor.cpu())", f"a tensor on {values.device}", where=name
            )
        )
    if values.layout != torch.strided:
        raise InputError(
            expected(
                "a dense tensor (tensor.to_dense())",
                f"a tensor of layout {values.layout}",
                where=name,
            )
        )
    detached = values.detach()
    try:
        if detached.is_floating_point():
            return detached.to(torch.float64).numpy()
        return detached.numpy()
    except (TypeError, RuntimeError) as error:  # a quantized or complex32 tensor
        raise InputError(
            expected(
                "a tensor of real numbers numpy can read",
                f"a tensor of dtype {values.dtype} ({error})",
                where=name,
            )
        ) from None


def _numeric_array(values: Any, name: str, what: str) -> Any:
    """A numpy array of samples as a float64 array of its shape; bools, text and complex
    numbers refused."""
    import numpy as np

    if values.dtype == object:
        if values.ndim != 1:
            raise InputError(
                expected(
                    "a 1-D sequence of samples", f"an array of shape {values.shape}", where=name
                )
            )
        return np.asarray(sample_floats(values.tolist(), name, what), dtype=float)
    if values.dtype.kind not in "iuf":
        # A bool array would read True as 1.0, where a bool in a list is refused.
        shown = values.flat[0] if values.size else values.dtype
        raise InputError(expected("numeric samples", repr(shown), where=name))
    return np.asarray(values, dtype=float)


def sample_array(values: object, name: str, what: str) -> Any | None:
    """``values`` as a 1-D float64 array when it is an array, None when it is not.

    Parameters
    ----------
    values : object
        A torch tensor, a numpy array, what numpy reads as an array (a pandas Series, a
        numpy scalar: no sequence, but ``__array__``), or anything else.
    name : str
        The argument, named in errors.
    what : str
        The samples the caller takes, in words, for an int no float holds in an array of
        Python objects (``"finite samples >= 0"``).

    Returns
    -------
    numpy.ndarray or None
        ``[n]`` float64 values for an array of numbers; None for anything that is no
        array (a list, a tuple, a generator: the caller checks its items with
        :func:`sample_floats`).

    Raises
    ------
    InputError
        For a tensor off the CPU, a sparse tensor or one numpy cannot read, an array of
        bools, text or complex numbers, or one of another shape than ``[n]``.
    """
    tensor_type = _loaded_type("torch", "Tensor")
    if tensor_type is not None and isinstance(values, tensor_type):
        array = _numeric_array(_tensor_array(values, name), name, what)
    elif _is_numpy_array(values) or (hasattr(values, "__array__") and not _is_sequence(values)):
        import numpy as np

        array = _numeric_array(np.asarray(values), name, what)
    else:
        return None
    if array.ndim != 1:
        raise InputError(
            expected("a 1-D sequence of samples", f"an array of shape {array.shape}", where=name)
        )
    return array


def _loaded_type(module: str, name: str) -> type | None:
    # getattr: a module still being imported (or one standing in for it) may lack the type.
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def _is_numpy_array(values: object) -> bool:
    array_type = _loaded_type("numpy", "ndarray")
    return array_type is not None and isinstance(values, array_type)


def _is_sequence(values: object) -> bool:
    return isinstance(values, Sequence)


def _check_items(values: Sequence[object], name: str) -> None:
    """Refuse a sequence whose items are not all numbers (bools are none), naming the first.

    Parameters
    ----------
    values : sequence
        ``[n]`` items.
    name : str
        The argument, named in errors.

    Raises
    ------
    InputError
        ``Expected a 1-D sequence of samples`` for a nested list or array,
        ``Expected numeric samples`` for any other item that is no number.
    """
    # One type test for each kind of item, not a numbers.Real check for each item (a
    # tenth of a second for 100 000 samples).
    kinds = set(map(type, values))
    if all(issubclass(kind, numbers.Real) and not issubclass(kind, bool) for kind in kinds):
        return
    wrong = next(item for item in values if not _is_number(item))
    nested = isinstance(wrong, Sequence) or getattr(wrong, "ndim", 0) > 0
    if nested and not isinstance(wrong, str | bytes):
        raise InputError(
            expected("a 1-D sequence of samples", f"a nested sequence ({wrong!r})", where=name)
        )
    raise InputError(expected("numeric samples", repr(wrong), where=name))


def sample_floats(values: Sequence[Any], name: str, what: str) -> tuple[float, ...]:
    """A sequence of numbers as floats; bools, text and nested sequences refused.

    Parameters
    ----------
    values : sequence
        ``[n]`` samples.
    name : str
        The argument, named in errors.
    what : str
        The samples the caller takes, in words, for an int no float holds
        (``"finite samples >= 0"``).

    Returns
    -------
    tuple of float
        ``[n]`` samples.

    Raises
    ------
    InputError
        ``Expected a 1-D sequence of samples`` for a nested list or array,
        ``Expected numeric samples`` for any other item that is no number (the first
        named), ``Expected <what>`` for an int beyond the float range.
    """
    _check_items(values, name)
    try:
        return tuple(float(item) for item in values)
    except OverflowError:  # an int of hundreds of digits: no time a float can hold
        raise InputError(expected(what, "an int beyond the float range", where=name)) from None
