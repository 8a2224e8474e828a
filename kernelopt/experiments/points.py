"""Trial points as logs write them: ``b=32 s=1 t=4096 h=16``, ``b=32, s=1, t=4096, h_q=128``.

Profiles, result rows and benchmark configs spell the same axes differently (``h`` or
``h_q``, ``s`` or ``s_q``). Two points are compared only on the axes both state.

A value that would not read back whole as one plain word (``fp8 e4m3``, ``4,096``, a
whole point ``b=32 s=1 h=128 t=4096`` kept under the config key ``point``) is written
between double quotes, with ``\\"`` for a quote and ``\\\\`` for a backslash in it:
``kv="fp8 e4m3"``. Text without a double quote reads exactly as it did before quoting
was known.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Mapping

from kernelopt._errors import InputError, expected

__all__ = [
    "AXIS_ALIASES",
    "canonical_axis",
    "plain_number",
    "point_terms",
    "point_words",
    "points_differ",
    "quoted_values",
    "split_terms",
    "term_text",
]

AXIS_ALIASES: dict[str, tuple[str, ...]] = {"s": ("s_q",), "t": ("t_max",), "h": ("h_q",)}
"""Other names of a trial point's axes, by canonical name."""

_CANONICAL = {alias: axis for axis, names in AXIS_ALIASES.items() for alias in names}

# A quoted value: double quotes around anything, a backslash escaping the next character.
_QUOTED = re.compile(r'("(?:[^"\\]|\\.)*")', re.S)
# A comma before three digits (and no fourth) groups them: "4,096" is one number.
_GROUPING = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SEPARATORS = re.compile(r"[,;\s]+")
_BRACKETS = "()[]{}"


def canonical_axis(key: str) -> str:
    """The canonical name of a trial point's axis (``h_q`` → ``h``); other keys unchanged."""
    return _CANONICAL.get(key, key)


def plain_number(value: object) -> object:
    """``value`` as the Python number it equals, when it is a number of another type.

    numpy's integers (``np.int64(32)``) become ``int``, its floats (``np.float32(0.5)``)
    ``float``, as JSON and ``str`` then write them; bools, Python numbers, text and
    everything else (a 0-d numpy array included: it is an array, not a number) are
    returned as given. numpy is never imported: its scalars are :mod:`numbers` types.

    Parameters
    ----------
    value : object
        A point's axis value or a config's value.

    Returns
    -------
    object
        An ``int`` or ``float`` for a number of another type, else ``value`` itself.
    """
    if isinstance(value, bool | int | float | str):  # Python's own types already
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def _raw_words(text: str) -> list[str]:
    """The words of ``text`` split at commas, semicolons and spaces outside double quotes;
    a quoted part stays in its word, quotes and escapes as written."""
    words: list[str] = []
    current = ""
    for index, piece in enumerate(_QUOTED.split(text)):
        if index % 2:  # a quoted part: no separator inside it splits the word
            current += piece
            continue
        parts = _SEPARATORS.split(_GROUPING.sub("", piece))
        current += parts[0]
        for part in parts[1:]:
            words.append(current)
            current = part
    words.append(current)
    return words


def _unquoted(value: str) -> str:
    """A value written between double quotes as it was before quoting; others as given."""
    if len(value) >= 2 and _QUOTED.fullmatch(value):
        return re.sub(r"\\(.)", r"\1", value[1:-1], flags=re.S)
    return value


def split_terms(text: str) -> list[tuple[str, str, str]]:
    """The words of a trial point as ``(key, "=", value)`` (``("decode", "", "")`` for a word
    without ``=``), split at commas, semicolons and spaces; ``t~4096`` reads as ``t=~4096``,
    ``t=4,096`` as ``t=4096`` and ``b = 32`` as ``b=32``, and brackets around the point
    (``(b=32, s=1)``) are no part of its terms.

    A value between double quotes is read whole, without its quotes, ``\\"`` and ``\\\\``
    in it read as ``"`` and ``\\``: ``kv="fp8 e4m3"`` is ``("kv", "=", "fp8 e4m3")``.

    Examples
    --------
    >>> split_terms('b=32, kv="fp8 e4m3" decode')
    [('b', '=', '32'), ('kv', '=', 'fp8 e4m3'), ('decode', '', '')]
    """
    return [(key, sep, _unquoted(value)) for key, sep, value in _written_terms(text)]


def quoted_values(text: str) -> list[bool]:
    """For each term :func:`split_terms` reads in ``text``, whether its value was written
    between double quotes: an ``=`` in a quoted value is part of it, while one in a plain
    value (``s=,h=16`` reads as s = ``h=16``) is most likely a term run into the one before.

    Examples
    --------
    >>> quoted_values('point="b=32 s=1" s=,h=16')
    [True, False]
    """
    return [_QUOTED.fullmatch(value) is not None for _, _, value in _written_terms(text)]


def _written_terms(text: str) -> list[tuple[str, str, str]]:
    """The terms of ``text`` as :func:`split_terms` reads them, values as written."""
    words: list[str] = []
    for raw in _raw_words(text):
        # Brackets around the point, never those inside a quoted value.
        word = _strip_outside_quotes(raw) if '"' in raw else raw.strip(_BRACKETS)
        if not word:
            continue
        # "b = 32" and "b =32": the parts of one term, split at the spaces around "=".
        if words and (words[-1].endswith("=") or word.startswith("=")):
            words[-1] += word
        else:
            words.append(word)
    return [re.sub(r"^(\w+)~", r"\1=~", word).partition("=") for word in words]


def _strip_outside_quotes(word: str) -> str:
    """``word`` without the brackets at its ends that lie outside its quoted parts."""
    pieces = _QUOTED.split(word)
    pieces[0] = pieces[0].lstrip(_BRACKETS)
    pieces[-1] = pieces[-1].rstrip(_BRACKETS)
    return "".join(pieces)


def _needs_quotes(key: str, value: str) -> bool:
    """Whether ``key=value`` written plain would not read back as that one term, or not
    be taken back as a point to select by: a value with a space, comma, semicolon, bracket
    or quote, empty, or holding ``=`` (one at its end joins the next word to it; one
    inside reads as a term run into the one before, which a selection refuses)."""
    if not value or "=" in value or '"' in value:
        return True
    return split_terms(f"{key}={value}") != [(key, "=", value)]


def term_text(key: str, value: object) -> str:
    """One ``key=value`` term as :func:`point_words` writes it, the value quoted when its
    plain spelling would read back as something else.

    Parameters
    ----------
    key : str
        The axis.
    value : object
        Its value, written with ``str`` once numpy numbers are Python ones
        (:func:`plain_number`).

    Returns
    -------
    str
        ``kv=fp8`` plain; ``kv="fp8 e4m3"`` and ``note="say \\"hi\\""`` quoted.

    Examples
    --------
    >>> term_text("kv", "fp8 e4m3")
    'kv="fp8 e4m3"'
    >>> split_terms(term_text("kv", "fp8 e4m3"))
    [('kv', '=', 'fp8 e4m3')]
    """
    name, shown = str(key), str(plain_number(value))
    if not _needs_quotes(name, shown):
        return f"{name}={shown}"
    escaped = shown.replace("\\", "\\\\").replace('"', '\\"')
    return f'{name}="{escaped}"'


def point_terms(text: str) -> dict[str, str]:
    """The ``key=value`` terms of a trial point, keyed by canonical axis names.

    Words without ``=`` (a trial's name such as ``decode``) are skipped, and ``t~4096``
    reads as ``t=~4096``; a quoted value is read without its quotes.

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
    collapsed. The one spelling of a trial point that bench, the devlog and evaluate write.

    A mapping's values are written as :func:`term_text` writes them: numpy numbers as the
    Python numbers they equal, and a value that would not read back whole as one word
    between double quotes (``{"kv": "fp8 e4m3"}`` is ``kv="fp8 e4m3"``), so that
    :func:`split_terms` reads every value back as written. Text without a double quote
    is written as before quoting was known.

    Raises
    ------
    InputError
        For anything but text or a mapping (``point: Expected key=value text or a
        mapping, got 5``).
    """
    if not isinstance(point, (str, Mapping)):
        # A number or a list would fail deep in the term reading, with no word of the point.
        raise InputError(expected("key=value text or a mapping", repr(point), where="point"))
    if isinstance(point, str):
        pairs = split_terms(point)
        if not pairs or any(not sep or not key for key, sep, _ in pairs):
            return " ".join(point.split())
        if '"' not in point:
            # Unquoted text keeps its words as they read: "k=" stays "k=".
            values: Mapping[str, object] = {key: value for key, _, value in pairs}
            keys = _ordered(values)
            return " ".join(f"{key}={values[key]}" for key in keys)
        values = {key: value for key, _, value in pairs}
    else:
        values = point
    return " ".join(term_text(key, values[key]) for key in _ordered(values))


def _ordered(values: Mapping[str, object]) -> list[str]:
    """The keys b, s and t first, the others sorted."""
    return [k for k in _LEADING if k in values] + sorted(k for k in values if k not in _LEADING)
