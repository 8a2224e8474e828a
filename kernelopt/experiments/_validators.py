"""Argument checks of the experiment log's records and entry points (no torch, no numpy).

attrs' own validators raise ``ValueError``/``TypeError`` with attrs' wording; these raise
:class:`~kernelopt._errors.InputError` reading ``<field>: Expected ..., got ...``, the one
error a caller of kernelopt has to handle. :mod:`kernelopt.diagnose` uses them too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from typing import Any

from kernelopt._errors import InputError, expected

__all__ = [
    "check_instance",
    "check_int",
    "check_path",
    "integer",
    "mapping_of_text",
    "one_of",
    "text",
]

Validator = Callable[[object, Any, Any], None]


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


def integer(*, minimum: int | None = None, maximum: int | None = None) -> Validator:
    """An attrs validator: an int (not a bool) within the bounds given."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        check_int(value, attribute.name, minimum=minimum, maximum=maximum)

    return check


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
