"""Counted nouns and lists in what kernelopt writes for people: ``1 attempt``, ``2 attempts``,
``a, b and c``."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["and_list", "count_text", "noun"]


def noun(count: int, one: str, many: str | None = None) -> str:
    """The noun a count takes.

    Parameters
    ----------
    count : int
        How many (a signed change counts by its size: ``+1 branch``, ``-1 branch``).
    one : str
        The noun for one.
    many : str, optional
        The noun for any other count; ``one`` + ``"s"`` if None.

    Returns
    -------
    str
        ``one`` for a count of 1 or -1, else ``many``.
    """
    return one if abs(count) == 1 else (many if many is not None else f"{one}s")


def count_text(count: int, one: str, many: str | None = None, *, sign: bool = False) -> str:
    """``"1 attempt"``, ``"3 attempts"``; with ``sign``, ``"+1 branch"``, ``"-2 branches"``.

    Parameters
    ----------
    count : int
        How many.
    one : str
        The noun for one (``"attempt"``, ``"constexpr knob"``).
    many : str, optional
        The noun for any other count; ``one`` + ``"s"`` if None.
    sign : bool
        Write the count with its sign (a growth or a shrink).

    Returns
    -------
    str
        The count and its noun.

    Examples
    --------
    >>> count_text(1, "attempt"), count_text(0, "attempt"), count_text(2, "branch", "branches")
    ('1 attempt', '0 attempts', '2 branches')
    """
    return (f"{count:+d}" if sign else f"{count}") + " " + noun(count, one, many)


def and_list(items: Sequence[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``; ``""`` for none.

    Parameters
    ----------
    items : sequence of str
        The words, in the order written.

    Returns
    -------
    str
        The words joined by commas, the last by "and".
    """
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"
