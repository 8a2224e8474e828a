"""Trial points as logs write them: ``b=32 s=1 t=4096 h=16``, ``b=32, s=1, t=4096, h_q=128``.

Profiles, result rows and benchmark configs spell the same axes differently (``h`` or
``h_q``, ``s`` or ``s_q``). Two points are compared only on the axes both state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "AXIS_ALIASES",
    "canonical_axis",
    "point_terms",
    "point_words",
    "points_differ",
    "split_terms",
]

AXIS_ALIASES: dict[str, tuple[str, ...]] = {"s": ("s_q",), "t": ("t_max",), "h": ("h_q",)}
"""Other names of a trial point's axes, by canonical name."""

_CANONICAL = {alias: axis for axis, names in AXIS_ALIASES.items() for alias in names}


def canonical_axis(key: str) -> str:
    """The canonical name of a trial point's axis (``h_q`` → ``h``); other keys unchanged."""
    return _CANONICAL.get(key, key)


def split_terms(text: str) -> list[tuple[str, str, str]]:
    """The words of a trial point as ``(key, "=", value)`` (``("decode", "", "")`` for a word
    without ``=``), split at commas, semicolons and spaces; ``t~4096`` reads as ``t=~4096``,
    ``t=4,096`` as ``t=4096`` and ``b = 32`` as ``b=32``, and brackets around the point
    (``(b=32, s=1)``) are no part of its terms."""
    # A comma before three digits (and no fourth) groups them: "4,096" is one number.
    grouped = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    words: list[str] = []
    for word in re.split(r"[,;\s]+", grouped):
        word = word.strip("()[]{}")
        if not word:
            continue
        # "b = 32" and "b =32": the parts of one term, split at the spaces around "=".
        if words and (words[-1].endswith("=") or word.startswith("=")):
            words[-1] += word
        else:
            words.append(word)
    return [re.sub(r"^(\w+)~", r"\1=~", word).partition("=") for word in words]


def point_terms(text: str) -> dict[str, str]:
    """The ``key=value`` terms of a trial point, keyed by canonical axis names.

    Words without ``=`` (a trial's name such as ``decode``) are skipped, and ``t~4096``
    reads as ``t=~4096``.

    Examples
    --------
    >>> point_terms("b=32, s_q=1, t=4096, h_q=128")
    {'b': '32', 's': '1', 't': '4096', 'h': '128'}
    """
    terms = split_terms(text)
    return {canonical_axis(key): value for key, sep, value in terms if sep and key and value}


def points_differ(a: str, b: str) -> bool:
    """Whether two trial points give different values to an axis both of them state.

    Examples
    --------
    >>> points_differ("b=32, s=1, t=4096, h_q=128", "b=32 s=1 t=4096 h=16")
    True
    >>> points_differ("b=32 s=1 t=4096 h=16", "b=32 s=1 t=4096 h=16 kv=fp8")
    False
    """
    left, right = point_terms(a), point_terms(b)
    return any(left[key] != right[key] for key in left.keys() & right.keys())


_LEADING = ("b", "s", "t")


def point_words(point: Mapping[str, object] | str) -> str:
    """``key=value`` words in the canonical order, b, s and t first and the other axes
    sorted (``b=32 s=1 t=4096 h=16``); text that is not all terms is kept as is, its spaces
    collapsed. The one spelling of a trial point that bench, the devlog and evaluate write."""
    if isinstance(point, str):
        pairs = split_terms(point)
        if not pairs or any(not sep or not key for key, sep, _ in pairs):
            return " ".join(point.split())
        values: Mapping[str, object] = {key: value for key, _, value in pairs}
    else:
        values = point
    keys = [k for k in _LEADING if k in values] + sorted(k for k in values if k not in _LEADING)
    return " ".join(f"{key}={values[key]}" for key in keys)
