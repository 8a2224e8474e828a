"""The words of a profile hand-off's ``Top 3 Opportunities``, as both of its readers tell
them: the hand-off's own parser (:mod:`kernelopt.workflow.profile`), which refuses what it
cannot read, and the log reader (:mod:`kernelopt.experiments.readers.context`), which
takes what a hand-written profile.md holds."""

from __future__ import annotations

import re

__all__ = ["ID_HEADER", "NAME_HEADER", "NONE_STATED", "RANK_HEADER", "TOP", "TOP_N_HEADING"]

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
