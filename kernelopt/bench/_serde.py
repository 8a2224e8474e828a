"""JSON-ready dicts from bench records and back, through a private cattrs converter.

cattrs writes; a minimal fallback for the flat records of this package (primitives,
optionals, tuples, string-keyed dicts, nested attrs classes) takes over where cattrs is
not installed (some GPU images ship attrs alone), so timings can still be written and
cached there; both produce identical dicts (tested). Reading always takes the strict walk,
which refuses unknown keys and wrong types instead of converting them.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, TypeVar

import attrs

from kernelopt._errors import InputError, expected

__all__ = ["structure", "unstructure"]

T = TypeVar("T")
Scalar = int | float | str | bool
_PRIMITIVES = (bool, int, float, str)


@functools.cache
def _converter() -> Any:
    try:
        import cattrs
        from cattrs.strategies import configure_union_passthrough
    except ImportError:
        return None
    converter = cattrs.Converter(forbid_extra_keys=True)
    configure_union_passthrough(Scalar, converter)
    return converter


def unstructure(obj: Any) -> dict[str, Any]:
    """Turn an attrs record into a dict of JSON types (tuples become lists)."""
    converter = _converter()
    if converter is not None:
        return dict(converter.unstructure(obj))
    return dict(_plain(attrs.asdict(obj, recurse=True)))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def structure(data: Any, cls: type[T]) -> T:
    """Build a ``cls`` record from a dict; unknown keys and wrong types raise InputError.

    Always the strict walk below, never cattrs: cattrs converts what it can
    (``"clocks_moved": "no"`` to True, ``1.9`` MHz to 1, ``"66.5"`` to a float), and a
    hand-edited results file must be refused, not silently read as something else.
    """
    try:
        return typing.cast(T, _reader(typing.cast(Any, cls))(data))
    except _MismatchError:
        # The fast reader only says that something is wrong; the walk says what and where.
        return typing.cast(T, _structure(data, cls, cls.__name__))


class _MismatchError(Exception):
    """Data a fast reader of :func:`_reader` does not take; :func:`_structure` then tells
    why (or reads it, should the two ever disagree: the walk is the reference)."""


Reader = typing.Callable[[Any], Any]


@functools.cache
def _reader(kind: Any) -> Reader:
    """A function reading data of ``kind`` as :func:`_structure` does, with every type
    resolved once: the walk looked each one up again at every field of every row (80 µs
    a row, 8 s for a file of 100 000 rows). It raises :class:`_MismatchError`, with no
    message, where the walk raises InputError for a type; a validator's own InputError
    (from building a record) goes on as the walk's would.
    """
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        none_ok = type(None) in typing.get_args(kind)
        options = [
            (option, _reader(option))
            for option in typing.get_args(kind)
            if option is not type(None)
        ]

        def read_union(data: Any) -> Any:
            if data is None and none_ok:
                return None
            for option, read in options:
                if _matches(data, option):
                    return read(data)
            raise _MismatchError

        return read_union
    if origin is tuple:
        read_item = _reader(typing.get_args(kind)[0])

        def read_tuple(data: Any) -> Any:
            if not isinstance(data, (list, tuple)):
                raise _MismatchError
            return tuple(read_item(item) for item in data)

        return read_tuple
    if origin is dict:
        read_value = _reader(typing.get_args(kind)[1])

        def read_dict(data: Any) -> Any:
            if not isinstance(data, dict):
                raise _MismatchError
            return {str(k): read_value(v) for k, v in data.items()}

        return read_dict
    if isinstance(kind, type) and attrs.has(kind):
        return _record_reader(kind)
    if kind is float:

        def read_float(data: Any) -> float:
            if isinstance(data, bool) or not isinstance(data, (int, float)):
                raise _MismatchError
            try:
                return float(data)
            except OverflowError:
                raise _MismatchError from None

        return read_float
    if kind in _PRIMITIVES:

        def read_primitive(data: Any) -> Any:
            if not _matches(data, kind):
                raise _MismatchError
            return data

        return read_primitive

    def read_nothing(data: Any) -> Any:
        raise _MismatchError

    return read_nothing


def _record_reader(kind: type) -> Reader:
    names = frozenset(field.name for field in attrs.fields(kind))
    required = [field.name for field in attrs.fields(kind) if field.default is attrs.NOTHING]
    # Filled after this reader is cached, so a record holding its own kind reads too.
    readers: dict[str, Reader] = {}

    def read_record(data: Any) -> Any:
        if not readers:
            readers.update((name, _reader(hint)) for name, hint in _hints(kind).items())
        if not isinstance(data, dict) or not names.issuperset(data):
            raise _MismatchError
        for name in required:
            if name not in data:
                raise _MismatchError
        return kind(**{name: readers[name](value) for name, value in data.items()})

    return read_record


@functools.cache
def _hints(kind: type) -> dict[str, Any]:
    # Resolving the annotations costs more than reading a row: once a class.
    return typing.get_type_hints(kind)


def _structure(data: Any, kind: Any, where: str) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(kind)
        if data is None and type(None) in options:
            return None
        for option in options:
            if option is not type(None) and _matches(data, option):
                return _structure(data, option, where)
        raise InputError(expected(f"a value of type {kind}", repr(data), where=where))
    if origin is tuple:
        if not isinstance(data, (list, tuple)):
            raise InputError(expected("a list", repr(data), where=where))
        (item_kind, _ellipsis) = typing.get_args(kind)
        return tuple(_structure(item, item_kind, f"{where}[]") for item in data)
    if origin is dict:
        if not isinstance(data, dict):
            raise InputError(expected("an object", repr(data), where=where))
        _key, item_kind = typing.get_args(kind)
        return {str(k): _structure(v, item_kind, f"{where}.{k}") for k, v in data.items()}
    if isinstance(kind, type) and attrs.has(kind):
        if not isinstance(data, dict):
            raise InputError(expected("an object", repr(data), where=where))
        hints = _hints(kind)
        names = {field.name for field in attrs.fields(kind)}
        extra = sorted(set(data) - names)
        if extra:
            raise InputError(expected(f"only the fields of {kind.__name__}", extra, where=where))
        missing = sorted(
            field.name
            for field in attrs.fields(kind)
            if field.default is attrs.NOTHING and field.name not in data
        )
        if missing:
            raise InputError(
                expected(f"the required fields of {kind.__name__}", f"no {missing}", where=where)
            )
        values = {name: _structure(data[name], hints[name], f"{where}.{name}") for name in data}
        return kind(**values)
    if kind is float and isinstance(data, (int, float)) and not isinstance(data, bool):
        try:
            return float(data)
        except OverflowError:  # a JSON integer of hundreds of digits
            raise InputError(
                expected("a number within the float range", f"{len(str(data))} digits", where=where)
            ) from None
    if kind in _PRIMITIVES and _matches(data, kind):
        return data
    raise InputError(
        expected(f"a value of type {getattr(kind, '__name__', kind)}", repr(data), where=where)
    )


def _matches(data: Any, kind: Any) -> bool:
    if kind is bool:
        return isinstance(data, bool)
    if kind is int:
        return isinstance(data, int) and not isinstance(data, bool)
    if kind is float:
        return isinstance(data, (int, float)) and not isinstance(data, bool)
    if kind is str:
        return isinstance(data, str)
    origin = typing.get_origin(kind)
    if origin is tuple:
        return isinstance(data, (list, tuple))
    if origin is dict or (isinstance(kind, type) and attrs.has(kind)):
        return isinstance(data, dict)
    return False
