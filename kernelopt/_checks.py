"""attrs validators shared by the record classes (no torch, no numpy)."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelopt._errors import InputError, expected

__all__ = ["as_path", "ascii_digits", "breaks_lines", "finite"]


def finite(
    *, minimum: float | None = None, above: float | None = None, optional: bool = False
) -> Callable[[Any, Any, Any], None]:
    """An attrs validator: a finite real number (``>= minimum`` and ``> above`` when given;
    None if ``optional``).

    A string or bool is refused too: ``"fast"`` stored in a number field is written to a
    file that cannot be read back, and ``True`` reads as 1. So is a number that is no
    :class:`numbers.Real` (a ``Decimal``, a complex), whose value may well be finite: the
    message names its type and the types taken (``median: Expected a finite number, got
    Decimal('1.1'), a Decimal; an int, a float or another numbers.Real (a Fraction, a
    NumPy number) is taken``).
    """

    def check(_instance: Any, attribute: Any, value: Any) -> None:
        if value is None and optional:
            return
        try:
            ok = (
                isinstance(value, numbers.Real)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and (minimum is None or float(value) >= minimum)
                and (above is None or float(value) > above)
            )
        except OverflowError:  # an integer of hundreds of digits
            ok = False
        if not ok:
            bound = "" if minimum is None else f" >= {minimum:g}"
            bound += "" if above is None else f" > {above:g}"
            what = f"a finite number{bound}" + (" or None" if optional else "")
            raise InputError(expected(what, _shown(value), where=attribute.name))

    return check


# What a number field takes, said where a value of another type is refused.
_NUMBER_TYPES = "an int, a float or another numbers.Real (a Fraction, a NumPy number)"


def _shown(value: Any) -> str:
    """``value`` as a refusal shows it: its repr, and for a number of a type no number
    field takes (``Decimal('1.1')``, ``1j``) that type and the types taken.

    Such a number may well be finite, so "Expected a finite number" alone would not say
    what to fix. The repr of a str, a bool or None already shows its type.
    """
    if isinstance(value, numbers.Number) and not isinstance(value, numbers.Real):
        return f"{value!r}, a {type(value).__name__}; {_NUMBER_TYPES} is taken"
    return repr(value)


def breaks_lines(text: str) -> bool:
    """Whether ``text`` holds a line break of any kind ``str.splitlines`` knows (LF, CR,
    form feed, U+2028...): such text, written on one line of a markdown file, is read back
    as several lines by one reader or another."""
    return text.splitlines() not in ([], [text])


def ascii_digits(text: str) -> bool:
    """Whether ``text`` is one or more ASCII digits: ``str.isdigit`` also passes ``"²"``
    (which ``int`` refuses) and other scripts' digits (``"５"``, which ``int`` reads as 5)."""
    return text.isascii() and text.isdigit()


def as_path(value: object, where: str) -> Path:
    """``value`` as a :class:`Path`; anything but a str or path-like is an :class:`InputError`,
    and so is an empty path, which names no folder (``Path("")`` is the working directory)."""
    if not isinstance(value, str | os.PathLike):
        raise InputError(expected("a path (str or path-like)", repr(value), where=where))
    if not os.fspath(value):
        raise InputError(expected("a path", "an empty path", where=where))
    return Path(value)
