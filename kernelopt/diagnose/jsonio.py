"""JSON form of a :class:`~kernelopt.diagnose.Diagnosis`, through a private cattrs converter.

Shape (the keys ``kernelopt diagnose --json`` prints)::

    {"findings": [{"pathology", "summary", "experiments", "severity", "confidence",
                   "evidence": [{"quote", "source", "experiments"}],
                   "actions": [{"text", "catalog_id", "catalog_name", "path",
                                "also" (only where not empty): [{"catalog_id",
                                "catalog_name", "path"}]}], "missing"}],
     "checks": [{"pathology", "checked", "sentence", "missing"}],
     "summary": {...}, "root_causes": [...], "unread": [{"path", "reason"}],
     "warnings": [...]}

:func:`diagnosis_from_dict` reads it back (extra keys are rejected; ``warnings``, an
action's ``also`` and a new best's ``verdict`` may be missing, as in data written before
they existed, or, for ``also`` and ``verdict``, where they are empty). cattrs is
imported on first use only, so ``import kernelopt.diagnose`` stays light.
"""

from __future__ import annotations

import functools
import json
import math
import typing
from typing import Any

import attrs

from kernelopt._errors import FormatError, expected
from kernelopt._strict_json import loads, strict_converter, structure_error_text
from kernelopt.diagnose.model import Diagnosis
from kernelopt.experiments._validators import check_instance

__all__ = ["diagnosis_from_dict", "diagnosis_from_json", "diagnosis_to_dict", "diagnosis_to_json"]


@functools.cache
def _converter() -> Any:
    return strict_converter(FormatError)


# Every key diagnosis_to_dict writes: data missing one was not written by it ("{}" would
# otherwise read back as an empty diagnosis, as if a log had been judged healthy).
_KEYS = ("findings", "checks", "summary", "root_causes", "unread")


def _check(diagnosis: object) -> None:
    check_instance(diagnosis, Diagnosis, "a Diagnosis (diagnose's result)", "diagnosis")


def diagnosis_to_dict(diagnosis: Diagnosis) -> dict[str, Any]:
    """Plain, JSON-ready data: enums as their values, tuples as lists.

    Parameters
    ----------
    diagnosis : Diagnosis
        The diagnosis to convert.

    Returns
    -------
    dict
        Field names to plain values; :func:`diagnosis_from_dict` reads it back.

    Raises
    ------
    InputError
        When ``diagnosis`` is not a Diagnosis.
    """
    _check(diagnosis)
    data: dict[str, Any] = _converter().unstructure(diagnosis)
    if data["summary"]["regression"] is None:
        # Written only where set: a log whose kernel stands at its best keeps the summary
        # keys it always had.
        del data["summary"]["regression"]
    if data["summary"]["latest_gpu_best"] is None:
        # Written only where set: a log timed on one GPU keeps the keys it always had.
        del data["summary"]["latest_gpu_best"]
    else:
        del data["summary"]["latest_gpu_best"]["only"]
    best = data["summary"]["best"]
    if best is not None and not best["only"]:
        # Written only where true: the best of a log with two or more measurements keeps
        # the keys it always had, and reads back with the default.
        del best["only"]
    for point in data["summary"]["trajectory"]:
        if point["verdict"] is None:
            # Written only where the result states an A/B verdict: a new best without one
            # keeps the keys it always had.
            del point["verdict"]
    for finding in data["findings"]:
        for action in finding["actions"]:
            if not action["also"]:
                # Written only where an action links more than one entry: the others keep
                # the four keys they always had.
                del action["also"]
    return data


def diagnosis_to_json(diagnosis: Diagnosis) -> str:
    """Indented JSON text (UTF-8 characters kept).

    Parameters
    ----------
    diagnosis : Diagnosis
        The diagnosis to write.

    Returns
    -------
    str
        The JSON of :func:`diagnosis_to_dict`, indented by 2.

    Raises
    ------
    InputError
        When ``diagnosis`` is not a Diagnosis.
    """
    return json.dumps(diagnosis_to_dict(diagnosis), indent=2, ensure_ascii=False)


def _nullable(cls: type) -> frozenset[str]:
    """The fields of attrs class ``cls`` that may hold None (their type names it): asked
    only for a message, so not cached."""
    hints = typing.get_type_hints(cls)
    return frozenset(name for name, hint in hints.items() if type(None) in typing.get_args(hint))


def _check_finite(value: object, path: str) -> None:
    """Refuse a float that is NaN or infinite anywhere in ``value`` (attrs records and
    tuples of them), naming its place as ``path`` does (``$.summary.best.value``).

    Python's json reads NaN and Infinity (and 1e999 as Infinity) as floats; the writer
    writes none (a value, a gain, a threshold is always finite), so data holding one was
    not written from a diagnosis and would be passed on as a number that compares with
    none.
    """
    if isinstance(value, tuple):
        for index, item in enumerate(value):
            _check_finite(item, f"{path}[{index}]")
        return
    cls = type(value)
    if not attrs.has(cls):
        return
    for field in attrs.fields(cls):
        item = getattr(value, field.name)
        where = f"{path}.{field.name}"
        if isinstance(item, float) and not math.isfinite(item):
            what = f"a finite {field.name}"
            if field.name in _nullable(cls):
                what += " or null"
            raise FormatError(
                expected(
                    "a diagnosis as written by diagnosis_to_dict",
                    expected(what, repr(item)) + f" @ {where}",
                )
            )
        _check_finite(item, where)


def diagnosis_from_dict(data: dict[str, Any]) -> Diagnosis:
    """Read back what :func:`diagnosis_to_dict` wrote.

    Parameters
    ----------
    data : dict
        The plain data, every key :func:`diagnosis_to_dict` writes present.

    Returns
    -------
    Diagnosis
        The diagnosis.

    Raises
    ------
    FormatError
        When ``data`` does not have the diagnosis layout (every key written, the summary's
        ``root`` included), or a number in it is NaN or infinite (a new best's ``gain``,
        its ``value``, the best's ``value``, ``stall_gain``): the writer writes none.
    """
    if not isinstance(data, dict):
        raise FormatError(expected("a diagnosis as a dict", type(data).__name__))
    missing = [key for key in _KEYS if key not in data]
    summary = data.get("summary")
    if not missing and not (isinstance(summary, dict) and "root" in summary):
        missing = ["summary.root"]
    if missing:
        raise FormatError(
            expected(
                f"a diagnosis as written by diagnosis_to_dict (keys {', '.join(_KEYS)})",
                f"no {', '.join(missing)}",
            )
        )
    try:
        result: Diagnosis = _converter().structure(data, Diagnosis)
    except Exception as error:  # cattrs raises several error types; all mean "wrong layout"
        raise FormatError(
            expected("a diagnosis as written by diagnosis_to_dict", structure_error_text(error))
        ) from None
    _check_finite(result, "$")
    return result


def diagnosis_from_json(text: str) -> Diagnosis:
    """Read back what :func:`diagnosis_to_json` wrote.

    Parameters
    ----------
    text : str or bytes
        The JSON text.

    Returns
    -------
    Diagnosis
        The diagnosis.

    Raises
    ------
    InputError
        When ``text`` is not a string.
    FormatError
        When ``text`` is not JSON of the diagnosis layout.
    """
    check_instance(text, (str, bytes), "JSON text", "text")
    try:
        data = loads(text)
    except FormatError:  # too deep, or an integer longer than Python converts
        raise
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise FormatError(expected("JSON text", str(error))) from None
    if not isinstance(data, dict):
        raise FormatError(expected("a JSON object", type(data).__name__))
    return diagnosis_from_dict(data)
