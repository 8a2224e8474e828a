"""A cattrs converter that takes JSON values as they are, for the modules that read records,
a ``json`` hook that refuses a key given twice, and :func:`loads`, which every reader of
user JSON parses through.

cattrs would call ``str()``, ``int()`` or ``float()`` on any value and iterate a string: a
path given as a string would read as a list of one-letter paths, ``true`` as 1, ``3.5`` as
3, ``"80"`` as a number. The converter made here refuses each of those with the caller's
error class, and refuses keys the record does not have. cattrs is imported when a converter
is made, so importing a module that uses this stays light.
"""

from __future__ import annotations

import json
import re
import sys
import typing
from collections import Counter
from collections.abc import Callable
from typing import Any

from kernelopt._errors import FormatError, KernelOptError, expected

__all__ = [
    "TooDeepError",
    "loads",
    "once_each",
    "strict_converter",
    "structure_error_text",
    "syntax_error_text",
]


class TooDeepError(FormatError):
    """JSON nested deeper than the interpreter's recursion limit lets ``json`` follow.

    A :class:`FormatError` like any other; its own class lets a reader keep its own words
    for it.
    """


def loads(
    text: str | bytes | bytearray,
    *,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """``json.loads``, with what ``json`` lets out as Python's own errors refused as
    kernelopt's.

    Valid JSON may still fail to load: an integer longer than ``int()`` converts (4300
    digits by default) raises a bare ``ValueError``, and nesting deeper than the recursion
    limit a ``RecursionError``. Both come back here as :class:`FormatError`, so that a
    reader that catches ``json.JSONDecodeError`` alone lets nothing else out.

    Parameters
    ----------
    text : str, bytes or bytearray
        The JSON text.
    object_pairs_hook : callable, optional
        Passed to ``json.loads`` (:func:`once_each` refuses a key given twice).

    Returns
    -------
    object
        The decoded value.

    Raises
    ------
    json.JSONDecodeError
        When ``text`` is not JSON: each reader words a syntax error its own way.
    UnicodeDecodeError
        When ``text`` is bytes that are not UTF-8, -16 or -32.
    TooDeepError
        When the JSON is nested too deeply to read.
    FormatError
        When an integer has more digits than Python converts, or from
        ``object_pairs_hook``.
    """
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise TooDeepError(
            expected("JSON nested less deeply", "structures too deep to read")
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError, KernelOptError):
        raise
    except ValueError as error:
        # With the other two ValueErrors passed on above, the one left is int()'s refusal
        # of a number longer than sys.get_int_max_str_digits().
        message = _too_many_digits(text) or expected("JSON text", str(error))
        raise FormatError(message) from None


def _too_many_digits(text: str | bytes | bytearray) -> str | None:
    """The message for an integer of ``text`` longer than ``int()`` converts; None where
    Python sets no such limit (3.10 before 3.10.7 has none, and it may be turned off)."""
    limit: int = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit <= 0:
        return None
    # Looked for only once the load failed: the first run of more digits than the limit
    # (in a string such a run loads fine, and may come first: then its length is shown).
    pattern = rf"[0-9]{{{limit + 1},}}"
    found = (
        re.search(pattern, text)
        if isinstance(text, str)
        else re.search(pattern.encode(), bytes(text))
    )
    got = "a longer one" if found is None else f"one of {len(found.group())} digits"
    return expected(f"integers of at most {limit} digits", got)


def syntax_error_text(error: json.JSONDecodeError) -> str:
    """What ``json`` found wrong, and where: ``"Expecting ',' delimiter (column 301)"``.

    ``error.msg`` alone drops the place, and a line cut short (a run killed mid-write)
    reads then like a line of bad syntax anywhere in it.
    """
    if error.lineno == 1:
        return f"{error.msg} (column {error.colno})"
    return f"{error.msg} (line {error.lineno}, column {error.colno})"


def once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (``json.loads``'s
    ``object_pairs_hook``): ``json`` keeps the last value and drops the other without a
    word, and a hand-edited file may hold both.

    Raises
    ------
    FormatError
        Naming the first key given twice.
    """
    data = dict(pairs)
    if len(data) != len(pairs):
        counts = Counter(key for key, _ in pairs)
        twice = next(key for key, count in counts.items() if count > 1)
        raise FormatError(expected("a JSON object with each key once", f"{twice!r} twice"))
    return data


def strict_converter(error: type[KernelOptError]) -> Any:
    """A ``cattrs.Converter`` that refuses extra keys and values of another JSON type.

    Parameters
    ----------
    error : type of KernelOptError
        What a refused value raises (``FormatError`` for data read back, ``InputError``
        for data a caller passes in).

    Returns
    -------
    cattrs.Converter

    Raises
    ------
    KernelOptError
        When cattrs is not installed (some GPU images ship attrs alone).
    """
    try:
        import cattrs
    except ImportError as missing:
        raise KernelOptError(
            expected("cattrs installed (pip install cattrs)", str(missing))
        ) from None
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(str, _exactly(str, "a string", error))
    converter.register_structure_hook(int, _exactly(int, "an integer", error))
    converter.register_structure_hook(float, _exactly((int, float), "a number", error, float))
    converter.register_structure_hook(bool, _exactly(bool, "true or false", error))
    converter.register_structure_hook_func(
        _is_tuple, lambda value, kind: _tuple(converter, value, kind, error)
    )
    return converter


def _exactly(
    kind: type | tuple[type, ...],
    what: str,
    error: type[KernelOptError],
    convert: Callable[[Any], Any] | None = None,
) -> Callable[[Any, Any], Any]:
    """A structure hook taking only values of ``kind`` (a bool is no number)."""

    def hook(value: Any, _kind: Any) -> Any:
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise error(expected(what, repr(value)))
        return value if convert is None else convert(value)

    return hook


def structure_error_text(error: BaseException) -> str:
    """What structuring refused, in words: one ``message @ $.path`` a leaf error.

    cattrs' own summary names the class alone ("While structuring Diagnosis (1
    sub-exception)") and words every ValueError "invalid value": a field's refusal (a
    :class:`KernelOptError` from a validator or a hook) is shown as it reads instead.

    Parameters
    ----------
    error : BaseException
        What ``Converter.structure`` raised.

    Returns
    -------
    str
    """
    import cattrs
    from cattrs.v import format_exception

    def leaf(exception: BaseException, kind: Any) -> str:
        if isinstance(exception, KernelOptError):
            return str(exception)
        return format_exception(exception, kind)

    if isinstance(error, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(error, format_exception=leaf))
    return f"{error.__class__.__name__}: {error}"


def _is_tuple(kind: Any) -> bool:
    origin: Any = typing.get_origin(kind)
    return origin is tuple


def _tuple(converter: Any, value: Any, kind: Any, error: type[KernelOptError]) -> tuple[Any, ...]:
    """A JSON list as the tuple ``kind`` names (``tuple[X, ...]`` or fixed), items structured."""
    if not isinstance(value, (list, tuple)):
        raise error(expected("a list", repr(value)))
    args = typing.get_args(kind)
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(converter.structure(item, args[0]) for item in value)
    if len(args) != len(value):
        raise error(expected(f"a list of {len(args)} items", repr(value)))
    return tuple(converter.structure(item, arg) for item, arg in zip(value, args, strict=True))
