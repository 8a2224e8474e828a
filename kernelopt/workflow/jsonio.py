"""The hand-offs as JSON-ready dicts and back, through a private cattrs converter.

Tools that exchange hand-offs as data rather than markdown use these: a record becomes a
dict of JSON types (enums as their values, tuples as lists) and a dict becomes the record
again, unknown keys refused and values never coerced: a path given as a string is not a
list of one-letter paths, 128.7 is no register budget of 128, ``"80"`` is no number.
"""

from __future__ import annotations

import enum
import functools
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import attrs

from kernelopt._errors import InputError, KernelOptError, expected

__all__ = ["from_dict", "to_dict"]

T = TypeVar("T")


@functools.cache
def _converter() -> Any:
    try:
        import cattrs
    except ImportError as error:  # some GPU images ship attrs alone
        raise KernelOptError(
            expected("cattrs installed (pip install cattrs)", str(error))
        ) from None
    converter = cattrs.Converter(forbid_extra_keys=True)
    # str-valued enums dispatch as str first and would pass through as enum objects.
    from kernelopt.bench.report import Bottleneck
    from kernelopt.experiments.records import Correctness
    from kernelopt.workflow.target import Criterion, NextStep, Status

    for kind in (Bottleneck, Correctness, Criterion, NextStep, Status):
        converter.register_unstructure_hook(kind, _value)
    # cattrs would call str(), int() or float() on any value, and iterate a string.
    converter.register_structure_hook(str, _exactly(str, "a string"))
    converter.register_structure_hook(int, _exactly(int, "an integer"))
    converter.register_structure_hook(float, _exactly((int, float), "a number", convert=float))
    converter.register_structure_hook(bool, _exactly(bool, "true or false"))
    converter.register_structure_hook_func(
        _is_tuple, lambda value, kind: _tuple(converter, value, kind)
    )
    return converter


def _exactly(
    kind: type | tuple[type, ...], what: str, *, convert: Callable[[Any], Any] | None = None
) -> Callable[[Any, Any], Any]:
    """A structure hook taking only values of ``kind`` (a bool is no number)."""

    def hook(value: Any, _kind: Any) -> Any:
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise InputError(expected(what, repr(value)))
        return value if convert is None else convert(value)

    return hook


def _is_tuple(kind: Any) -> bool:
    origin: Any = typing.get_origin(kind)
    return origin is tuple


def _tuple(converter: Any, value: Any, kind: Any) -> tuple[Any, ...]:
    """A JSON list as the tuple ``kind`` names, each item structured as its type."""
    if not isinstance(value, (list, tuple)):
        raise InputError(expected("a list", repr(value)))
    args = typing.get_args(kind)
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(converter.structure(item, args[0]) for item in value)
    if len(args) != len(value):
        raise InputError(expected(f"a list of {len(args)} items", repr(value)))
    return tuple(converter.structure(item, arg) for item, arg in zip(value, args, strict=True))


def _value(member: enum.Enum) -> Any:
    return member.value


def to_dict(record: attrs.AttrsInstance) -> dict[str, Any]:
    """A hand-off record (ProfileReport, OptimizationTask, NewVersion...) as a JSON-ready dict.

    Parameters
    ----------
    record : attrs record
        The record to convert.

    Returns
    -------
    dict
        Field names to plain values; :func:`from_dict` reads it back.

    Raises
    ------
    InputError
        For anything but an attrs record (a dict, a str, a number).

    Examples
    --------
    >>> from kernelopt.workflow import Change, to_dict
    >>> to_dict(Change(what="fuse the combine step"))
    {'what': 'fuse the combine step', 'entry_id': None, 'link': None, 'rationale': ''}
    """
    if not attrs.has(type(record)):
        raise InputError(
            expected(
                "a kernelopt record (ProfileReport, OptimizationTask, NewVersion...)",
                type(record).__name__,
                where="record",
            )
        )
    return dict(_converter().unstructure(record))


def from_dict(data: Any, cls: type[T]) -> T:
    """Build a record from :func:`to_dict`'s output.

    Parameters
    ----------
    data : Any
        The plain data, a dict of the record's fields.
    cls : type
        The record class to build (``OptimizationTask``, ``NewVersion``...).

    Returns
    -------
    cls
        The record.

    Raises
    ------
    InputError
        For unknown keys, missing fields or values of the wrong type.
    """
    try:
        return typing.cast(T, _converter().structure(data, cls))
    except KernelOptError:
        raise
    except Exception as error:  # cattrs groups its errors; say the first in one line
        inner: BaseException = error
        fields = []  # cattrs notes each level "Structuring class X @ attribute name"
        while getattr(inner, "exceptions", None):
            inner = inner.exceptions[0]  # type: ignore[attr-defined]
            notes = getattr(inner, "__notes__", ())
            fields += [n.rsplit("@ attribute ", 1)[1] for n in notes if "@ attribute " in n]
        where = f"{'.'.join(fields)}: " if fields else ""
        raise InputError(
            expected(f"a {cls.__name__} record", f"{where}{type(inner).__name__}: {inner}")
        ) from None
