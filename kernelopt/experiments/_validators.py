"""Argument checks of the experiment log's records and entry points (no torch, no numpy).

attrs' own validators raise ``ValueError``/``TypeError`` with attrs' wording; these raise
:class:`~kernelopt._errors.InputError` reading ``<field>: Expected ..., got ...``, the one
error a caller of kernelopt has to handle. :mod:`kernelopt.diagnose` uses them too.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, TypeVar

from kernelopt._errors import InputError, expected

__all__ = [
    "check_instance",
    "check_int",
    "check_path",
    "flag",
    "instance_of",
    "integer",
    "items_of",
    "mapping_of_text",
    "number_mapping",
    "one_of",
    "optional_instance_of",
    "optional_integer",
    "optional_text",
    "real_number",
    "text",
    "text_mapping",
]

Validator = Callable[[object, Any, Any], None]
Item = TypeVar("Item")


def _is_int(value: object) -> bool:
    # bool is an int to Python, but True is no experiment number or byte count.
    return isinstance(value, int) and not isinstance(value, bool)


def check_int(
    value: object, name: str, *, minimum: int | None = None, maximum: int | None = None
) -> None:
    """Raise InputError unless ``value`` is an int (not a bool) within the bounds given."""
    number = value if _is_int(value) else None
    low = number is not None and minimum is not None and number < minimum  # type: ignore[operator]
    high = number is not None and maximum is not None and number > maximum  # type: ignore[operator]
    if number is None or low or high:
        if minimum is not None and maximum is not None:
            bound = f" in {minimum}..{maximum}"
        elif maximum is not None:
            bound = f" <= {maximum}"
        else:
            bound = "" if minimum is None else f" >= {minimum}"
        raise InputError(expected(f"an integer{bound}", repr(value), where=name))


def check_path(value: object, name: str) -> None:
    """Raise InputError unless ``value`` is a path (a str or an ``os.PathLike``), and not an
    empty one: ``Path("")`` is the working directory, which no caller meant by it."""
    if not isinstance(value, (str, os.PathLike)):
        raise InputError(expected("a path (str or os.PathLike)", type(value).__name__, where=name))
    if not os.fspath(value):
        raise InputError(expected("a path", "an empty path", where=name))


def check_instance(value: object, kind: type | tuple[type, ...], what: str, name: str) -> None:
    """Raise InputError unless ``value`` is an instance of ``kind`` (``what`` in words)."""
    if not isinstance(value, kind):
        raise InputError(expected(what, type(value).__name__, where=name))


def _shown(value: object) -> str:
    # A long value (a whole file's text passed by mistake) would drown the message.
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def integer(*, minimum: int | None = None, maximum: int | None = None) -> Validator:
    """An attrs validator: an int (not a bool) within the bounds given."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        # The log readers build records by the thousand: a valid value costs two tests.
        if (
            _is_int(value)
            and (minimum is None or value >= minimum)  # type: ignore[operator]
            and (maximum is None or value <= maximum)  # type: ignore[operator]
        ):
            return
        check_int(value, attribute.name, minimum=minimum, maximum=maximum)

    return check


def optional_integer(*, minimum: int | None = None) -> Validator:
    """An attrs validator: None, or an int (not a bool) of at least ``minimum``."""
    bound = "" if minimum is None else f" >= {minimum}"

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value is None:
            return
        if _is_int(value) and (minimum is None or value >= minimum):  # type: ignore[operator]
            return
        what = f"None or an integer{bound}"
        raise InputError(expected(what, _shown(value), where=attribute.name))

    return check


def _is_real(value: object) -> bool:
    # float and int first: numbers.Real is an ABC, and its check is the slow one.
    if isinstance(value, (float, int)):
        return not isinstance(value, bool)
    return isinstance(value, numbers.Real)


def real_number() -> Validator:
    """An attrs validator: a real number (an int or a float, not a bool)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if not _is_real(value):
            raise InputError(expected("a real number", _shown(value), where=attribute.name))

    return check


def optional_text() -> Validator:
    """An attrs validator: None or a string (possibly empty)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value is not None and not isinstance(value, str):
            raise InputError(expected("None or a string", _shown(value), where=attribute.name))

    return check


def flag() -> Validator:
    """An attrs validator: a bool (1, "no" or None is no flag)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if not isinstance(value, bool):
            raise InputError(expected("a bool", _shown(value), where=attribute.name))

    return check


def instance_of(kind: type, what: str) -> Validator:
    """An attrs validator: an instance of ``kind`` (``what`` in words, ``"a SourceRef"``)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if not isinstance(value, kind):
            raise InputError(expected(what, _shown(value), where=attribute.name))

    return check


def optional_instance_of(kind: type, what: str) -> Validator:
    """An attrs validator: None or an instance of ``kind`` (``what`` in words)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value is not None and not isinstance(value, kind):
            raise InputError(expected(f"None or {what}", _shown(value), where=attribute.name))

    return check


def items_of(value: object, kind: type[Item], where: str) -> tuple[Item, ...]:
    """``value``'s items as a tuple, each an instance of ``kind``; else InputError.

    A body for the converters of sequence fields (attrs hands a converter the value
    alone, so each field's converter names itself as ``where``).

    Parameters
    ----------
    value : object
        An iterable of ``kind`` instances (a tuple, a list, a generator).
    kind : type
        The type every item must have.
    where : str
        The field or argument named in the message.

    Returns
    -------
    tuple
        The items, in order.

    Raises
    ------
    InputError
        When ``value`` is not iterable, is a str or bytes (text, not a sequence of items),
        or holds an item of another type.
    """
    # A tuple or a list first: Iterable is an ABC, and its check is the slow one.
    if not isinstance(value, (tuple, list)) and (
        isinstance(value, (str, bytes)) or not isinstance(value, Iterable)
    ):
        what = f"a sequence of {kind.__name__}"
        raise InputError(expected(what, type(value).__name__, where=where))
    items = tuple(value)
    for item in items:
        if not isinstance(item, kind):
            what = f"a sequence of {kind.__name__}"
            got = f"an item of type {type(item).__name__}: {_shown(item)}"
            raise InputError(expected(what, got, where=where))
    return items


def _mapping(value: object, what: str, where: str) -> Mapping[Any, Any]:
    # A dict first: Mapping is an ABC, and its check is the slow one.
    if not isinstance(value, (dict, Mapping)):
        raise InputError(expected(what, type(value).__name__, where=where))
    for key in value:
        if not isinstance(key, str):
            got = f"a key of type {type(key).__name__}: {_shown(key)}"
            raise InputError(expected(what, got, where=where))
    return value


def text_mapping(value: object, where: str) -> dict[str, str]:
    """``value`` as a new dict of strings to strings; else InputError naming ``where``."""
    what = "a mapping of str to str"
    mapping = _mapping(value, what, where)
    for key, item in mapping.items():
        if not isinstance(item, str):
            got = f"{key!r}: {_shown(item)} (a {type(item).__name__})"
            raise InputError(expected(what, got, where=where))
    return dict(mapping)


def number_mapping(value: object, where: str) -> dict[str, float]:
    """``value`` as a new dict of strings to floats (ints widened); else InputError.

    A bool or a numeric string is refused: ``True`` or ``"3.5"`` is no measured number.
    """
    what = "a mapping of str to real numbers"
    mapping = _mapping(value, what, where)
    for key, item in mapping.items():
        if not _is_real(item):
            got = f"{key!r}: {_shown(item)} (a {type(item).__name__})"
            raise InputError(expected(what, got, where=where))
    return {key: float(item) for key, item in mapping.items()}


def text(*, nonempty: bool = True) -> Validator:
    """An attrs validator: a string (non-blank when ``nonempty``)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if not isinstance(value, str) or (nonempty and not value.strip()):
            what = "a non-empty string" if nonempty else "a string"
            raise InputError(expected(what, repr(value), where=attribute.name))

    return check


def one_of(allowed: Collection[str]) -> Validator:
    """An attrs validator: one of the strings ``allowed``."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if value not in allowed:
            names = ", ".join(repr(a) for a in allowed)
            raise InputError(expected(f"one of {names}", repr(value), where=attribute.name))

    return check


def mapping_of_text() -> Validator:
    """An attrs validator: a mapping of strings to strings."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise InputError(
                expected("a mapping of strings to strings", repr(value)[:80], where=attribute.name)
            )

    return check
