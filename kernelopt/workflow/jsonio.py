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
from typing import Any, TypeVar

import attrs

from kernelopt._errors import InputError, KernelOptError, expected
from kernelopt._strict_json import strict_converter

__all__ = ["from_dict", "to_dict"]

T = TypeVar("T")


@functools.cache
def _converter() -> Any:
    converter = strict_converter(InputError)
    # str-valued enums dispatch as str first and would pass through as enum objects.
    from kernelopt.bench.report import Bottleneck
    from kernelopt.experiments.records import Correctness
    from kernelopt.workflow.target import Criterion, NextStep, Status

    for kind in (Bottleneck, Correctness, Criterion, NextStep, Status):
        converter.register_unstructure_hook(kind, _value)
    return converter


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
    if not (isinstance(cls, type) and attrs.has(cls)):
        raise InputError(
            expected(
                "a kernelopt record class (OptimizationTask, NewVersion, ProfileReport...)",
                repr(cls) if isinstance(cls, type) else type(cls).__name__,
                where="cls",
            )
        )
    if not isinstance(data, dict):
        raise InputError(
            expected(
                f"a dict of {cls.__name__} fields (to_dict's output)",
                type(data).__name__,
                where="data",
            )
        )
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
        where = ".".join(fields) or "data"
        raise InputError(_said(inner, cls.__name__, where)) from None


def _said(error: BaseException, record: str, where: str) -> str:
    """What one structuring error means for the data, in the library's words, not in the
    converter's: an unknown key, a missing field, a value of the wrong type."""
    if isinstance(error, KernelOptError):
        return f"{where}: {error}"
    extra = getattr(error, "extra_fields", None)
    if extra:
        # The record the keys were given to: a nested one names its own class.
        record = getattr(getattr(error, "cl", None), "__name__", record)
        return expected(
            f"only {record} fields", f"unknown keys {', '.join(sorted(extra))}", where=where
        )
    if isinstance(error, KeyError):
        # The missing field is the last of the path, which cattrs notes before raising.
        parent, _, field = where.rpartition(".")
        return expected(f"a value for {field}", "none", where=parent or "data")
    if isinstance(error, AttributeError) and "has no attribute 'keys'" in str(error):
        shown = str(error).split("'")[1]
        return expected("a dict of a record's fields", shown, where=where)
    return expected("a value of the field's type", f"{type(error).__name__}: {error}", where=where)
