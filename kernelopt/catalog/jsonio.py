"""JSON form of catalog entries, through a private cattrs converter.

The converter rejects keys it does not know (``forbid_extra_keys=True``), so a typo in a
hand-written JSON entry is an error rather than a silently dropped field. cattrs is
imported on first use: loading and querying the catalog never needs it.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from kernelopt._errors import FormatError, InputError, expected
from kernelopt.catalog.model import Entry

if TYPE_CHECKING:  # pragma: no cover
    import cattrs

__all__ = ["entry_from_dict", "entry_from_json", "entry_to_dict", "entry_to_json"]


@functools.cache
def _converter() -> cattrs.Converter:
    import cattrs

    return cattrs.Converter(forbid_extra_keys=True)


def entry_to_dict(entry: Entry) -> dict[str, Any]:
    """Unstructure ``entry`` into plain JSON-ready data (enums as their values)."""
    data: dict[str, Any] = _converter().unstructure(entry)
    return data


def entry_from_dict(data: Any) -> Entry:
    """Build an :class:`Entry` from data written by :func:`entry_to_dict`.

    Raises
    ------
    InputError
        If a key is unknown or missing, or a value is invalid.
    """
    import cattrs

    try:
        return _converter().structure(data, Entry)
    except cattrs.BaseValidationError as error:
        details = "; ".join(_flatten(error))
        raise InputError(expected("entry data matching the Entry fields", details)) from None


def _flatten(error: BaseException) -> list[str]:
    import cattrs

    if isinstance(error, cattrs.BaseValidationError):
        return [m for sub in error.exceptions for m in _flatten(sub)]
    return [str(error)]


def entry_to_json(entry: Entry) -> str:
    """Serialize ``entry`` to indented JSON text."""
    return json.dumps(entry_to_dict(entry), indent=2, ensure_ascii=False) + "\n"


def entry_from_json(text: str) -> Entry:
    """Read an entry from JSON text; see :func:`entry_from_dict`.

    Raises
    ------
    FormatError
        If the text is not JSON.
    InputError
        If the JSON does not describe a valid entry.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise FormatError(expected("JSON text", error.msg), line=error.lineno) from None
    return entry_from_dict(data)
