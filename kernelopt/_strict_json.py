"""A cattrs converter that takes JSON values as they are, for the modules that read records,
and a ``json`` hook that refuses a key given twice.

cattrs would call ``str()``, ``int()`` or ``float()`` on any value and iterate a string: a
path given as a string would read as a list of one-letter paths, ``true`` as 1, ``3.5`` as
3, ``"80"`` as a number. The converter made here refuses each of those with the caller's
error class, and refuses keys the record does not have. cattrs is imported when a converter
is made, so importing a module that uses this stays light.
"""

from __future__ import annotations

import typing
from collections import Counter
from collections.abc import Callable
from typing import Any

from kernelopt._errors import FormatError, KernelOptError, expected

__all__ = ["once_each", "strict_converter"]


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
