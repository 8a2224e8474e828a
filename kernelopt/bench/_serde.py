"""JSON-ready dicts from bench records and back, through a private cattrs converter.

cattrs writes; a minimal fallback for the flat records of this package (primitives,
optionals, tuples, string-keyed dicts, nested attrs classes) takes over where cattrs is
not installed (some GPU images ship attrs alone), so timings can still be written and
cached there; both produce identical dicts (tested). Reading takes one strict reader a
type, built once (:func:`_reader`), which refuses unknown keys and wrong types instead of
converting them and names the field in its error.
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

    Never cattrs: cattrs converts what it can (``"clocks_moved": "no"`` to True, ``1.9``
    MHz to 1, ``"66.5"`` to a float), and a hand-edited results file must be refused, not
    silently read as something else. The error names the field (``BenchRow.samples[]``).
    """
    return typing.cast(T, _read(data, cls, cls.__name__))


def _read(data: Any, kind: Any, where: str) -> Any:
    try:
        return _reader(kind)(data)
    except _RefusedError as refusal:
        # The path was collected innermost first, as the refusal left each reader.
        inner = "".join(reversed(refusal.path))
        raise InputError(expected(refusal.what, refusal.got, where=where + inner)) from None


class _RefusedError(Exception):
    """Data a reader of :func:`_reader` does not take: what it expected, what came, and
    where, as the suffixes (``.samples``, ``[]``) each enclosing reader adds on the way
    out; only a refused value pays for its path."""

    def __init__(self, what: str, got: str) -> None:
        super().__init__(what, got)
        self.what = what
        self.got = got
        self.path: list[str] = []


Reader = typing.Callable[[Any], Any]


@functools.cache
def _reader(kind: Any) -> Reader:
    """The one function reading data of ``kind``, with every type resolved once.

    Looking each type up again at every field of every row cost 80 µs a row (8 s for a
    file of 100 000 rows). A wrong type raises :class:`_RefusedError`, which
    :func:`structure` turns into the InputError naming the field; a validator's own
    InputError (from building a record) goes on as it is.
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
            raise _RefusedError(f"a value of type {kind}", repr(data))

        return read_union
    if origin is tuple:
        read_item = _reader(typing.get_args(kind)[0])

        def read_tuple(data: Any) -> Any:
            if not isinstance(data, (list, tuple)):
                raise _RefusedError("a list", repr(data))
            try:
                return tuple(map(read_item, data))
            except _RefusedError as refusal:
                refusal.path.append("[]")
                raise

        return read_tuple
    if origin is dict:
        read_value = _reader(typing.get_args(kind)[1])

        def read_dict(data: Any) -> Any:
            if not isinstance(data, dict):
                raise _RefusedError("an object", repr(data))
            values = {}
            try:
                for key, value in data.items():
                    values[str(key)] = read_value(value)
            except _RefusedError as refusal:
                refusal.path.append(f".{key}")
                raise
            return values

        return read_dict
    if isinstance(kind, type) and attrs.has(kind):
        return _record_reader(kind)
    if kind is float:

        def read_float(data: Any) -> float:
            if isinstance(data, bool) or not isinstance(data, (int, float)):
                raise _RefusedError("a value of type float", repr(data))
            try:
                return float(data)
            except OverflowError:  # a JSON integer of hundreds of digits
                raise _RefusedError(
                    "a number within the float range", f"{len(str(data))} digits"
                ) from None

        return read_float
    name = getattr(kind, "__name__", kind)
    if kind in _PRIMITIVES:

        def read_primitive(data: Any) -> Any:
            if not _matches(data, kind):
                raise _RefusedError(f"a value of type {name}", repr(data))
            return data

        return read_primitive

    def read_nothing(data: Any) -> Any:
        raise _RefusedError(f"a value of type {name}", repr(data))

    return read_nothing


def _record_reader(kind: type) -> Reader:
    fields = attrs.fields(kind)
    names = frozenset(field.name for field in fields)
    required = [field.name for field in fields if field.default is attrs.NOTHING]
    # Filled after this reader is cached, so a record holding its own kind reads too.
    readers: dict[str, Reader] = {}

    def read_record(data: Any) -> Any:
        if not readers:
            readers.update((name, _reader(hint)) for name, hint in _hints(kind).items())
        if not isinstance(data, dict):
            raise _RefusedError("an object", repr(data))
        if not names.issuperset(data):
            extra = sorted(set(data) - names)
            raise _RefusedError(f"only the fields of {kind.__name__}", repr(extra))
        missing = [name for name in required if name not in data]
        if missing:
            raise _RefusedError(f"the required fields of {kind.__name__}", f"no {sorted(missing)}")
        values = {}
        try:
            for name, value in data.items():
                values[name] = readers[name](value)
        except _RefusedError as refusal:
            refusal.path.append(f".{name}")
            raise
        return kind(**values)

    return read_record


@functools.cache
def _hints(kind: type) -> dict[str, Any]:
    # Resolving the annotations costs more than reading a row: once a class.
    return typing.get_type_hints(kind)


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
