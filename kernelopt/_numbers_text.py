"""Numbers as the library's messages and tables write them: significant digits, no exponent.

A time or a size read by a person is clearer as ``0.00001234`` or ``12346`` than as
``1.234e-05`` or ``1.235e+04``: this module writes every value positionally. It imports
nothing heavy.
"""

from __future__ import annotations

import math

__all__ = ["digits_apart", "readable", "significant"]


def significant(value: float, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits, written positionally, never in exponent form.

    The value is rounded first and the form picked from the rounded value, so a value
    that rounds up to ``10 ** digits`` (9999.5 at four digits) keeps every integer digit
    as the larger ones do. From ``10 ** digits`` on, every integer digit is kept
    (``12346``, not ``1.235e+04``); below it, trailing zeros after the point are dropped
    (``66.6``, not ``66.60``), as ``format(value, ".4g")`` drops them. A value that is not
    finite is written as Python writes it (``nan``, ``inf``).

    Parameters
    ----------
    value : float
        The number to write.
    digits : int
        Significant digits to keep, at least 1.

    Returns
    -------
    str
        The number's text.

    Examples
    --------
    >>> significant(47.0812), significant(66.6), significant(9999.5), significant(12345.6)
    ('47.08', '66.6', '10000', '12346')
    >>> significant(1.2344e-05), significant(0.0), significant(-3.14159)
    ('0.00001234', '0', '-3.142')
    """
    if not math.isfinite(value):
        return f"{value}"
    # The exponent form rounds to the digits and names the rounded value's magnitude.
    mantissa, _, exponent_text = f"{value:.{digits - 1}e}".partition("e")
    exponent = int(exponent_text)
    if exponent >= digits:
        return f"{value:.0f}"
    rounded = float(f"{mantissa}e{exponent}")
    text = f"{rounded:.{max(0, digits - 1 - exponent)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


# Beyond these a number is no measurement a person reads digit by digit (a rate of 1e308,
# a time of 1e-300): its exponent is the news, and positional digits would bury it.
_POSITIONAL_LARGEST = 1e15
_POSITIONAL_SMALLEST = 1e-6


def readable(value: float, digits: int = 4) -> str:
    """``value`` as :func:`significant` writes it within the range measurements take, and
    in exponent form beyond it (``1.7e+308``, ``1e-300``), where positional digits would
    run to hundreds.

    Parameters
    ----------
    value : float
        The number to write.
    digits : int
        Significant digits to keep, at least 1.

    Returns
    -------
    str
        The number's text.

    Examples
    --------
    >>> readable(231767.0), readable(2.5e-05), readable(1.7e308), readable(1e-300)
    ('231767', '0.000025', '1.7e+308', '1e-300')
    """
    size = abs(value)
    if math.isfinite(value) and (size >= _POSITIONAL_LARGEST or 0 < size < _POSITIONAL_SMALLEST):
        return f"{value:.{digits}g}"
    return significant(value, digits)


def digits_apart(value: float | None, other: float | None, least: int = 4) -> int:
    """Significant digits that write ``value`` and ``other`` apart under :func:`readable`:
    ``least``, or as many more as it takes (17 at most, enough for any two floats).

    A value shown beside the bound it was judged against must not read as that bound
    (a speedup of 1.19999 against 1.2, a share of 0.49999 against 0.5).

    Parameters
    ----------
    value, other : float or None
        The two numbers; ``least`` where either is None or they are equal.
    least : int
        Digits to show at the least.

    Returns
    -------
    int
        The digits to pass to :func:`readable` for both.
    """
    if value is None or other is None or value == other:
        return least
    for digits in range(least, 18):
        # float(): a fact may be any real number (a Fraction), which format() may refuse.
        if readable(float(value), digits) != readable(float(other), digits):
            return digits
    return 17
