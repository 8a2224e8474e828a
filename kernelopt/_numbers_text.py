"""Numbers as the library's messages and tables write them: significant digits, no exponent.

A time or a size read by a person is clearer as ``0.00001234`` or ``12346`` than as
``1.234e-05`` or ``1.235e+04``: this module writes every value positionally. It imports
nothing heavy.
"""

from __future__ import annotations

import math

__all__ = ["significant"]


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
