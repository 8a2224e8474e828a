"""Field converters and checks shared by the catalog's record classes.

The string enums raise ``Expected one of ..., got 'x'`` without saying which field held
the value; :func:`enum_field` adds it, so ``Entry(kind="bogus")`` names ``Entry.kind``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from kernelopt._checks import as_path
from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, expected

__all__ = ["as_path", "enum_field", "require_bool", "require_entry_id", "require_str", "to_enum"]

_E = TypeVar("_E", bound=TextEnum)


def to_enum(enum: type[_E], value: object, where: str) -> _E:
    """``value`` as a member of ``enum``; an :class:`InputError` naming ``where`` if none.

    A str is also read in lower case (``"Anti-Pattern"`` is ``Kind.ANTI_PATTERN``), as
    the entry reader reads a relation or a source type: the catalog's values are lower
    case, so case never tells two apart. attrs record classes call it from a named
    converter per field (``_to_kind``), the form type checkers follow.
    """
    for candidate in (value, value.lower()) if isinstance(value, str) else (value,):
        try:
            return enum(candidate)
        except (ValueError, TypeError):  # TypeError: an unhashable value such as a list
            continue
    allowed = ", ".join(repr(member.value) for member in enum)
    raise InputError(expected(f"one of {allowed}", repr(value), where=where))


def enum_field(enum: type[_E], where: str) -> Callable[[object], _E]:
    """An attrs converter to ``enum`` whose error names the field.

    Parameters
    ----------
    enum : type of TextEnum
        The enum to convert to.
    where : str
        The field, as error messages name it (``"Entry.kind"``).

    Returns
    -------
    callable
        ``convert(value) -> member``, raising :class:`InputError` ``where: Expected one of
        ..., got ...`` for a value that is no member's value.
    """

    def convert(value: object) -> _E:
        return to_enum(enum, value, where)

    convert.__name__ = f"to_{enum.__name__}"
    return convert


def require_str(value: object, where: str, what: str = "a str") -> str:
    """Return ``value`` if it is a string, else raise :class:`InputError` naming ``where``."""
    if not isinstance(value, str):
        raise InputError(expected(what, repr(value), where=where))
    return value


def require_bool(value: object, where: str) -> bool:
    """Return ``value`` if it is a bool, else raise :class:`InputError` naming ``where``.

    A flag such as ``strict="no"`` would otherwise read as true: any non-empty string,
    number or object is truthy.
    """
    if not isinstance(value, bool):
        raise InputError(expected("True or False", repr(value)[:80], where=where))
    return value


def require_entry_id(value: object, where: str = "entry_id") -> str:
    """Return ``value`` if it is an entry id's type (a str), else raise :class:`InputError`.

    A list or dict would otherwise end in ``unhashable type`` from the lookup by id, and a
    number in "no such entry" as if it were an id that is merely absent.
    """
    return require_str(value, where, "an entry id (a str)")
