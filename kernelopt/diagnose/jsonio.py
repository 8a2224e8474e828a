"""JSON form of a :class:`~kernelopt.diagnose.Diagnosis`, through a private cattrs converter.

Shape (the keys ``kernelopt diagnose --json`` prints)::

    {"findings": [{"pathology", "summary", "experiments", "severity", "confidence",
                   "evidence": [{"quote", "source", "experiments"}],
                   "actions": [{"text", "catalog_id", "catalog_name", "path"}], "missing"}],
     "checks": [{"pathology", "checked", "sentence", "missing"}],
     "summary": {...}, "root_causes": [...], "unread": [{"path", "reason"}]}

:func:`diagnosis_from_dict` reads it back (extra keys are rejected). cattrs is imported on
first use only, so ``import kernelopt.diagnose`` stays light.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from kernelopt._errors import FormatError, expected
from kernelopt.diagnose.model import Diagnosis

__all__ = ["diagnosis_from_dict", "diagnosis_from_json", "diagnosis_to_dict", "diagnosis_to_json"]


@functools.cache
def _converter() -> Any:
    import cattrs

    return cattrs.Converter(forbid_extra_keys=True)


def diagnosis_to_dict(diagnosis: Diagnosis) -> dict[str, Any]:
    """Plain, JSON-ready data: enums as their values, tuples as lists."""
    data: dict[str, Any] = _converter().unstructure(diagnosis)
    return data


def diagnosis_to_json(diagnosis: Diagnosis) -> str:
    """Indented JSON text (UTF-8 characters kept)."""
    return json.dumps(diagnosis_to_dict(diagnosis), indent=2, ensure_ascii=False)


def diagnosis_from_dict(data: dict[str, Any]) -> Diagnosis:
    """Read back what :func:`diagnosis_to_dict` wrote.

    Raises
    ------
    FormatError
        When ``data`` does not have the diagnosis layout.
    """
    try:
        result: Diagnosis = _converter().structure(data, Diagnosis)
    except Exception as error:  # cattrs raises several error types; all mean "wrong layout"
        raise FormatError(
            expected(
                "a diagnosis as written by diagnosis_to_dict",
                f"{error.__class__.__name__}: {error}",
            )
        ) from None
    return result


def diagnosis_from_json(text: str) -> Diagnosis:
    """Read back what :func:`diagnosis_to_json` wrote."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise FormatError(expected("JSON text", str(error))) from None
    if not isinstance(data, dict):
        raise FormatError(expected("a JSON object", type(data).__name__))
    return diagnosis_from_dict(data)
