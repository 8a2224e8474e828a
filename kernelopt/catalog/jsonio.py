"""JSON form of catalog entries, through a private cattrs converter.

The converter rejects keys it does not know (``forbid_extra_keys=True``), so a typo in a
hand-written JSON entry is an error rather than a silently dropped field. cattrs is
imported on first use: loading and querying the catalog never needs it.
"""

from __future__ import annotations

import functools
import json
import numbers
import typing
from collections.abc import Callable, Iterable, Mapping
from types import GenericAlias
from typing import TYPE_CHECKING, Any

import attrs

from kernelopt._enum import TextEnum
from kernelopt._errors import FormatError, InputError, expected
from kernelopt._strict_json import loads, once_each
from kernelopt.catalog.model import Entry

if TYPE_CHECKING:  # pragma: no cover
    import cattrs

__all__ = ["entry_from_dict", "entry_from_json", "entry_to_dict", "entry_to_json"]


def _structure_str(value: object, _type: object) -> str:
    # cattrs would call str() on anything: 5 would become the id "5".
    if not isinstance(value, str):
        raise InputError(expected("a string", repr(value)))
    return value


def _structure_strs(value: object, _type: object) -> tuple[str, ...]:
    # cattrs would iterate a string: families "any" would become ("a", "n", "y").
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InputError(expected("a list of strings", repr(value)))
    return tuple(_structure_str(item, str) for item in value)


def _structure_number(value: object, _type: object) -> float:
    # cattrs would call float() on anything: "60" and true would become 60.0 and 1.0.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(expected("a number", repr(value)))
    return float(value)


def _enum_value(member: TextEnum) -> str:
    return str(member.value)


def _is_record_list(type_: object) -> bool:
    """Whether ``type_`` is ``tuple[R, ...]`` of an attrs record (``Condition``)."""
    args = typing.get_args(type_)
    return (
        typing.get_origin(type_) is tuple
        and len(args) == 2
        and args[1] is Ellipsis
        and attrs.has(args[0])
    )


def _structure_records(value: object, type_: Any) -> tuple[Any, ...]:
    # cattrs would iterate a string or an object's keys: triggers "dram_pct > 60" would be
    # twelve errors, one a character, each "'str' object has no attribute 'keys'".
    record: type = typing.get_args(type_)[0]
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InputError(expected(f"a list of {record.__name__} objects", repr(value)[:80]))
    # As a list, cattrs structures each item and notes its index on an error.
    as_list: Any = GenericAlias(list, record)  # list[record], built at run time
    items: list[Any] = _converter().structure(list(value), as_list)
    return tuple(items)


def _record_hook(converter: cattrs.Converter, record: type) -> Callable[[object, Any], Any]:
    """The structure hook of an attrs record that refuses a value that is no JSON object."""
    from cattrs.gen import make_dict_structure_fn

    fields: Callable[[Any, Any], Any] = make_dict_structure_fn(record, converter)

    def structure(value: object, type_: Any) -> Any:
        # cattrs would look for the keys of anything: "'str' object has no attribute 'keys'".
        if not isinstance(value, Mapping):
            raise InputError(
                expected(f"a JSON object of {record.__name__} fields", repr(value)[:80])
            )
        return fields(value, type_)

    return structure


@functools.cache
def _converter() -> cattrs.Converter:
    import cattrs

    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(str, _structure_str)
    converter.register_structure_hook(float, _structure_number)
    # cattrs passes a str-valued enum through as the str it also is (its hook for str wins
    # over any for enums): register one for the enum class itself, so the data holds the
    # plain value and nothing but JSON's own types.
    converter.register_unstructure_hook(TextEnum, _enum_value)
    converter.register_structure_hook_func(lambda t: t == tuple[str, ...], _structure_strs)
    converter.register_structure_hook_func(_is_record_list, _structure_records)
    converter.register_structure_hook_factory(attrs.has, functools.partial(_record_hook, converter))
    return converter


def entry_to_dict(entry: Entry) -> dict[str, Any]:
    """Unstructure an entry into plain JSON-ready data (enums as their values).

    Parameters
    ----------
    entry : Entry
        The entry.

    Returns
    -------
    dict
        Field names to plain values (str, numbers, lists, dicts).

    Raises
    ------
    InputError
        If ``entry`` is not an :class:`Entry`: cattrs would hand anything else back as is
        (``None`` for ``None``), to fail later or be written as if it were an entry.
    """
    if not isinstance(entry, Entry):
        raise InputError(expected("an Entry", repr(entry)[:80], where="entry"))
    data: dict[str, Any] = _converter().unstructure(entry)
    return data


def entry_from_dict(data: Mapping[str, object]) -> Entry:
    """Build an :class:`Entry` from data written by :func:`entry_to_dict`.

    Parameters
    ----------
    data : Mapping[str, object]
        Field names to values, enums as their values.

    Returns
    -------
    Entry
        The entry.

    Raises
    ------
    InputError
        If ``data`` is not a mapping, a key is unknown or missing, or a value is invalid.
    """
    import cattrs

    if not isinstance(data, Mapping):
        raise InputError(expected("entry data (a mapping of field names to values)", repr(data)))

    try:
        return _converter().structure(data, Entry)
    except cattrs.BaseValidationError as error:
        details = "; ".join(_flatten(error))
        raise InputError(expected("entry data matching the Entry fields", details)) from None


def _flatten(error: BaseException, where: str = "") -> list[str]:
    """One message per leaf error, prefixed by the field path (``triggers[0].note``)."""
    import cattrs
    from cattrs.errors import AttributeValidationNote, IterableValidationNote

    if isinstance(error, KeyError) and where:
        return [f"{where}: missing"]  # a required key absent: str(KeyError) is its quoted name
    if not isinstance(error, cattrs.BaseValidationError):
        return [f"{where}: {error}" if where else str(error)]
    out = []
    for sub in error.exceptions:
        step = ""
        for note in getattr(sub, "__notes__", ()):
            if isinstance(note, AttributeValidationNote):
                step = f".{note.name}" if where else note.name
            elif isinstance(note, IterableValidationNote):
                step = f"[{note.index}]"
        out += _flatten(sub, where + step)
    return out


def entry_to_json(entry: Entry) -> str:
    """Serialize an entry to indented JSON text.

    Parameters
    ----------
    entry : Entry
        The entry.

    Returns
    -------
    str
        The JSON of :func:`entry_to_dict`, indented by 2, non-ASCII kept, ending in a
        newline.

    Raises
    ------
    InputError
        If ``entry`` is not an :class:`Entry`.
    """
    return json.dumps(entry_to_dict(entry), indent=2, ensure_ascii=False) + "\n"


def entry_from_json(text: str) -> Entry:
    """Read an entry from JSON text; see :func:`entry_from_dict`.

    Parameters
    ----------
    text : str
        The JSON text, as :func:`entry_to_json` writes it.

    Returns
    -------
    Entry
        The entry.

    Raises
    ------
    FormatError
        If the text is not JSON, gives a key twice, is nested too deeply to read or holds
        an integer longer than Python converts.
    InputError
        If ``text`` is not a str, or the JSON does not describe a valid entry.
    """
    if not isinstance(text, str):
        raise InputError(expected("JSON text (a str)", repr(text)[:80], where="text"))
    try:
        data = loads(text, object_pairs_hook=once_each)
    except json.JSONDecodeError as error:
        raise FormatError(expected("JSON text", error.msg), line=error.lineno) from None
    return entry_from_dict(data)
