"""The index table of a knowledge tree (``index.md`` at its root), generated from entries.

One row per entry: name (linked to its file), kind, scope and the one-line when-to-apply
(the entry's first context). Rows are sorted by kind (optimizations first), scope (shared
first, then languages in a fixed order) and id, so regenerating an unchanged tree gives
the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

from kernelopt.catalog.model import Entry, Kind
from kernelopt.catalog.vocabulary import SCOPES

__all__ = ["INDEX_HEADER", "index_order", "render_index"]

INDEX_HEADER = (
    "# Knowledge index\n\n"
    "Generated from the entries by `kernelopt catalog index`; edit the entries, not this file.\n\n"
    "| Name | Kind | Scope | When to Apply |\n"
    "|------|------|-------|---------------|\n"
)


def index_order(entry: Entry) -> tuple[int, int, str]:
    """Sort key of an entry in the index: kind, then scope, then id."""
    return (list(Kind).index(entry.kind), SCOPES.index(entry.scope), entry.id)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_index(entries: Iterable[Entry]) -> str:
    """Render the index table of ``entries``.

    Parameters
    ----------
    entries : iterable of Entry
        The entries of one tree.

    Returns
    -------
    str
        Markdown with links relative to the tree root.
    """
    rows = [
        f"| [{_cell(e.name)}]({e.relative_path}) | {e.kind.value} | {e.scope} "
        f"| {_cell(e.summary)} |\n"
        for e in sorted(entries, key=index_order)
    ]
    return INDEX_HEADER + "".join(rows)
