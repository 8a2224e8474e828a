"""The string enum every kernelopt record uses for its closed vocabularies."""

from __future__ import annotations

import enum

from kernelopt._errors import InputError, expected

__all__ = ["TextEnum"]


class TextEnum(str, enum.Enum):
    """A string enum whose unknown values raise :class:`InputError` naming the allowed ones.

    Examples
    --------
    >>> class Color(TextEnum):
    ...     RED = "red"
    >>> Color("blue")
    Traceback (most recent call last):
    ...
    kernelopt._errors.InputError: Expected one of 'red', got 'blue'
    """

    @classmethod
    def _missing_(cls, value: object) -> TextEnum:
        allowed = ", ".join(repr(member.value) for member in cls)
        raise InputError(expected(f"one of {allowed}", repr(value)))
