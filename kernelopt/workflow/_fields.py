"""Validators shared by the hand-off records (messages name the record and field)."""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from kernelopt._errors import InputError, expected

# A list in a message shows this many items, then counts the rest: a rows file of 100k
# points would otherwise make one refusal of megabytes.
SHOWN = 5
# A list to choose one from (implementations, points) shows this many: a benchmark's
# impls are a handful to a dozen, and the one wanted must not hide behind "and 1 more".
LISTED = 12


def listed(values: Sequence[str], *, limit: int = SHOWN) -> str:
    """``values`` for a message: their repr, or the first ``limit`` and a count of the rest.

    Examples
    --------
    >>> listed(["a", "b"])
    "['a', 'b']"
    >>> listed([str(n) for n in range(8)], limit=2)
    "['0', '1'] and 6 more (8 in all)"
    """
    if len(values) <= limit:
        return repr(list(values))
    return f"{list(values[:limit])!r} and {len(values) - limit} more ({len(values)} in all)"


def where(instance: object, attribute: attrs.Attribute[Any]) -> str:
    """``Record.field``, the prefix of a validation message."""
    return f"{type(instance).__name__}.{attribute.name}"


def check_line(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    """Refuse anything but one non-empty line without surrounding spaces."""
    # A lone CR ends a line for the readers (as in CommonMark), not only LF.
    if (
        not isinstance(value, str)
        or not value
        or value != value.strip()
        or "\n" in value
        or "\r" in value
    ):
        raise InputError(
            expected(
                "one non-empty line without surrounding spaces",
                repr(value),
                where=where(instance, attribute),
            )
        )


def check_heading_end(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """Refuse text that ends a heading line with ``#``: markdown drops a heading's closing
    ``#`` run, so ``see issue #`` would read back as ``see issue``."""
    if isinstance(value, str) and value.rstrip().endswith("#"):
        raise InputError(
            expected(
                "text not ending in '#' (a heading's closing #s are dropped)",
                repr(value),
                where=where(instance, attribute),
            )
        )


def real_to_float(value: Any) -> Any:
    """A real number (not a bool) as a float; anything else unchanged, for the field's
    validator to refuse by name (``float("50")`` would take text for a number)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return value


def require_text(text: object, *, what: str = "markdown text (a str)", where: str = "text") -> None:
    """Refuse a reader's input that is not a str (None, bytes, an already-parsed record)."""
    if not isinstance(text, str):
        raise InputError(expected(what, type(text).__name__, where=where))


def require_instance(value: object, kind: type, what: str, *, where: str) -> None:
    """Raise ``InputError`` (``where: Expected <what>, got <type name>``) unless ``value``
    is a ``kind``: the one check every public function makes of the record it is given."""
    if not isinstance(value, kind):
        raise InputError(expected(what, type(value).__name__, where=where))


def require_str(value: object, *, where: str, optional: bool = False) -> None:
    """Raise ``InputError`` (``where: Expected a str, got <type name>``) unless ``value``
    is a str, or None where ``optional``: a keyword argument the caller spells as text."""
    if isinstance(value, str) or (optional and value is None):
        return
    what = "a str or None" if optional else "a str"
    raise InputError(expected(what, type(value).__name__, where=where))


def str_items(value: object, *, where: str) -> tuple[str, ...]:
    """``value``'s items as a tuple, refusing by name a str (one string is not a list of
    them), bytes and anything that is not iterable; the field's validator checks each item.
    """
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InputError(expected("a sequence of str", type(value).__name__, where=where))
    return tuple(value)


def text_one_line(value: object) -> object:
    """A str with every run of white space made one space; anything else unchanged, for
    the field's validator to refuse by name (``None.split`` would fail unnamed)."""
    return " ".join(value.split()) if isinstance(value, str) else value


def path_label(path: object) -> str | None:
    """``path`` as the text a reader's messages name it by, None for None; anything but a
    str or path-like (a number, bytes) is refused as the ``path`` argument."""
    if path is None:
        return None
    if not isinstance(path, str | os.PathLike):
        raise InputError(
            expected("a path (str or path-like) or None", type(path).__name__, where="path")
        )
    return os.fspath(path)


def require_optional_instance(value: object, kind: type, what: str, *, where: str) -> None:
    """:func:`require_instance` for an argument that may also be None (``what`` says so)."""
    if value is not None:
        require_instance(value, kind, what, where=where)
