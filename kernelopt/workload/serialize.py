"""JSON form of workload profiles and shortcut findings (a private cattrs converter).

``profile_from_json(profile_to_json(p)) == p``. Unknown keys are rejected, so a file from
another tool or a newer version fails loudly instead of losing data. cattrs is imported on
first use: profiling, markdown and the recorder work where it is not installed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from kernelopt._errors import FormatError, InputError, expected
from kernelopt._strict_json import loads, once_each, structure_error_text
from kernelopt.workload._validators import require
from kernelopt.workload.profile import WorkloadProfile
from kernelopt.workload.shortcuts import BUILTIN_RULES, Shortcut

__all__ = [
    "SCHEMA",
    "profile_from_dict",
    "profile_from_json",
    "profile_to_dict",
    "profile_to_json",
    "shortcut_from_dict",
    "shortcut_to_dict",
]

SCHEMA = "kernelopt-workload-profile/1"


@functools.cache
def _converter() -> Any:
    import cattrs
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

    converter = cattrs.Converter(forbid_extra_keys=True)
    # A profile's written findings are stored beside it (the "shortcuts" key), not in it.
    omit = override(omit=True)
    converter.register_unstructure_hook(
        WorkloadProfile,
        make_dict_unstructure_fn(WorkloadProfile, converter, written_shortcuts=omit),
    )
    converter.register_structure_hook(
        WorkloadProfile,
        make_dict_structure_fn(
            WorkloadProfile, converter, _cattrs_forbid_extra_keys=True, written_shortcuts=omit
        ),
    )
    return converter


def _structure_errors() -> tuple[type[Exception], ...]:
    """What structuring bad data raises: cattrs' validation errors and plain type errors."""
    import cattrs

    return (cattrs.BaseValidationError, ValueError, TypeError, KeyError)


def _structure_error(error: Exception) -> str:
    import cattrs

    if isinstance(error, cattrs.BaseValidationError):
        # A field's own refusal as it reads: cattrs words every ValueError "invalid
        # value", which hid that time_us was Infinity.
        return structure_error_text(error)
    return str(error)


def _require_fields(data: object, what: str) -> None:
    """Refuse data that is no mapping of field names before cattrs reads it: cattrs words a
    string or a list as an error about ``.keys``, and 5 as "argument of type 'int' is not
    iterable", neither of which says what was expected."""
    if not isinstance(data, Mapping):
        raise FormatError(
            expected(f"{what} as a dict of its fields", type(data).__name__, where="data")
        )


def profile_to_dict(profile: WorkloadProfile) -> dict[str, Any]:
    """A profile as plain JSON-ready data.

    Parameters
    ----------
    profile : WorkloadProfile
        The profile to convert.

    Returns
    -------
    dict
        Field names to plain values; :func:`profile_from_dict` reads it back.

    Raises
    ------
    InputError
        If ``profile`` is not a WorkloadProfile.
    """
    require(profile, WorkloadProfile, "a WorkloadProfile", where="profile")
    data: dict[str, Any] = _converter().unstructure(profile)
    return data


def profile_from_dict(data: object) -> WorkloadProfile:
    """Rebuild a profile from :func:`profile_to_dict` data.

    Parameters
    ----------
    data : object
        The plain data, a dict of the profile's fields.

    Returns
    -------
    WorkloadProfile
        The profile.

    Raises
    ------
    FormatError
        When ``data`` is not a dict, or fields are missing, extra, or of the wrong type.
    """
    _require_fields(data, "a kernelopt workload profile")
    try:
        profile: WorkloadProfile = _converter().structure(data, WorkloadProfile)
    except _structure_errors() as error:
        raise FormatError(
            expected("a kernelopt workload profile", _structure_error(error))
        ) from None
    return profile


def shortcut_to_dict(shortcut: Shortcut) -> dict[str, Any]:
    """A finding as plain JSON-ready data.

    Parameters
    ----------
    shortcut : Shortcut
        The finding to convert.

    Returns
    -------
    dict
        Field names to plain values; :func:`shortcut_from_dict` reads it back.

    Raises
    ------
    InputError
        If ``shortcut`` is not a Shortcut.
    """
    require(shortcut, Shortcut, "a Shortcut", where="shortcut")
    data: dict[str, Any] = _converter().unstructure(shortcut)
    return data


def shortcut_from_dict(data: object) -> Shortcut:
    """Rebuild a finding from :func:`shortcut_to_dict` data.

    Parameters
    ----------
    data : object
        The plain data, a dict of the finding's fields.

    Returns
    -------
    Shortcut
        The finding.

    Raises
    ------
    FormatError
        When ``data`` is not a dict, or fields are missing, extra, or of the wrong type.
    """
    _require_fields(data, "a kernelopt shortcut finding")
    try:
        shortcut: Shortcut = _converter().structure(data, Shortcut)
    except _structure_errors() as error:
        raise FormatError(
            expected("a kernelopt shortcut finding", _structure_error(error))
        ) from None
    return shortcut


def profile_to_json(profile: WorkloadProfile, shortcuts: Sequence[Shortcut] | None = None) -> str:
    """``{"schema", "profile", "shortcuts"?}`` as indented JSON text.

    Parameters
    ----------
    profile : WorkloadProfile
        The profile to write.
    shortcuts : sequence of Shortcut, optional
        Findings to store beside it (:func:`find_shortcuts`); no ``shortcuts`` key when None.

    Returns
    -------
    str
        JSON text ending in a newline; :func:`profile_from_json` reads it back.

    Raises
    ------
    InputError
        When ``shortcuts`` is not a sequence of Shortcut.
    """
    data: dict[str, Any] = {"schema": SCHEMA, "profile": profile_to_dict(profile)}
    if shortcuts is not None:
        require(shortcuts, (tuple, list), "a sequence of Shortcut or None", where="shortcuts")
        data["shortcuts"] = [shortcut_to_dict(s) for s in shortcuts]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def profile_from_json(text: str | bytes) -> WorkloadProfile:
    """Parse :func:`profile_to_json` output.

    Of a listed ``shortcuts`` array, the findings of the user's own rules are kept as
    :attr:`~kernelopt.workload.WorkloadProfile.written_shortcuts` (a process that has not
    registered those rules cannot find them again); a built-in rule's are found again.

    Parameters
    ----------
    text : str or bytes
        The JSON text: an object with the schema id and the profile.

    Returns
    -------
    WorkloadProfile
        The profile.

    Raises
    ------
    FormatError
        When the text is not JSON or not a profile of this schema.
    InputError
        When ``text`` is not a string or bytes.
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise InputError(expected("JSON text (str or bytes)", type(text).__name__, where="text"))
    try:
        data = loads(text, object_pairs_hook=once_each)
    except FormatError:
        raise
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise FormatError(expected("JSON text", str(error))) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or "profile" not in data:
        raise FormatError(
            expected(f"an object with schema {SCHEMA!r} and a profile", str(data)[:80])
        )
    extra = set(data) - {"schema", "profile", "shortcuts"}
    if extra:
        raise FormatError(expected("keys schema, profile, shortcuts", sorted(extra)))
    profile = profile_from_dict(data["profile"])
    listed = data.get("shortcuts")
    if not isinstance(listed, list):
        return profile
    # The findings of rules of the user's: a process that has not registered them cannot
    # find them again (a built-in rule's are found again from the profile).
    builtin = {rule.id for rule in BUILTIN_RULES}
    written = [
        shortcut_from_dict(item)
        for item in listed
        if not (isinstance(item, Mapping) and item.get("rule") in builtin)
    ]
    return attrs.evolve(profile, written_shortcuts=tuple(written)) if written else profile
