"""The words of a profile hand-off's ``Top 3 Opportunities``, as both of its readers tell
them: the hand-off's own parser (:mod:`kernelopt.workflow.profile`), which refuses what it
cannot read, and the log reader (:mod:`kernelopt.experiments.readers.context`), which
takes what a hand-written profile.md holds."""

from __future__ import annotations

import re

from kernelopt.experiments.readers._markdown import strip_md

__all__ = [
    "ID_HEADER",
    "LIST_ITEM",
    "NAME_HEADER",
    "NONE_STATED",
    "RANK_HEADER",
    "TOP",
    "TOP_N_HEADING",
    "top_lead_title",
]

TOP = 3  # opportunities a profile hand-off holds: its section is the "Top 3"
# An item that says there is none: the renderer's "(none: no catalog trigger fired ...)",
# or a writer's "None." or "n/a".
NONE_STATED = re.compile(r"^\(?\s*(?:none|no opportunit\w*|n/a)\b", re.IGNORECASE)
# The columns of a Top 3 written as a table, told by their headers: a rank or a name
# column makes the table a Top 3, an id column holds the catalog entry.
RANK_HEADER = re.compile(r"^(?:#|no\.?|rank\w*)$", re.IGNORECASE)
NAME_HEADER = re.compile(
    r"\b(?:name|opportunit\w*|optimi[sz]ation\w*|technique|idea|change)\b", re.IGNORECASE
)
ID_HEADER = re.compile(r"^(?:entry|catalog|id)\b|\bid$", re.IGNORECASE)
# The same ranked list in an experiment's result or a note, of any length: "## Top 3
# Opportunities", "## Top 5 opportunities (by estimated gain)", "## Top opportunities".
# The number, when written, is how many items it ranks. (Each span of spaces is held by
# a word after it, so a long run of spaces is scanned once.)
TOP_N_HEADING = re.compile(r"^top(?:[\s-]+(\d{1,3}|three))?[\s-]+opportunit", re.IGNORECASE)
# A list item, numbered or not: a line that opens one is no lead line, whatever it says,
# and the first line under a lead line that opens one starts its list.
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def top_lead_title(line: str) -> str | None:
    """The title of a ``Top N opportunities`` lead line, or None for any other line.

    A lead line opens the section as a heading would, on a line of its own: plain, bold
    or italic, optionally closed by a colon, in the words a ``Top N opportunities``
    heading has (:data:`TOP_N_HEADING`): ``Top 3 opportunities:``, ``**Top 5
    Opportunities (by estimated gain)**``. A sentence (closed by ``.``, ``!`` or ``?``)
    or a field whose value follows its colon (``Top 3 opportunities: split-KV, fusion``)
    says something rather than opening a list; a list item, and an indented line (which
    continues a list item or is code), is none.

    Parameters
    ----------
    line : str
        One line of a file, as written.

    Returns
    -------
    str or None
        The lead line's words without their emphasis and closing colon (``Top 3
        opportunities`` of ``**Top 3 opportunities:**``); None when ``line`` is no lead line.
    """
    if line[:1].isspace() or LIST_ITEM.match(line) or line.lstrip("*_")[:3].lower() != "top":
        return None
    words = strip_md(line).strip("*_ ").removesuffix(":").rstrip("*_ ")
    if not TOP_N_HEADING.match(words) or ":" in words or words.endswith((".", "!", "?")):
        return None
    return words
