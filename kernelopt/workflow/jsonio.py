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
