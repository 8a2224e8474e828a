"""The index table of a knowledge tree (``index.md`` at its root), generated from entries.

One row per entry: name (linked to its file), kind, scope and the one-line when-to-apply
(the entry's first context). Rows are sorted by kind (optimizations first), scope (shared
first, then languages in a fixed order) and id, so regenerating an unchanged tree gives
the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kernelopt._errors import InputError, expected
from kernelopt._table_cells import escape_cell
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
    # Markdown's escapes, backslashes doubled too: an escaped pipe (\|) in the text would
    # otherwise come out as an escaped backslash followed by a column break.
    return escape_cell(text, backslash_escapes=True)


def _link_text(text: str) -> str:
    # An unmatched bracket would end the link text early or open another one.
    return _cell(text).replace("[", "\\[").replace("]", "\\]")


def _links(links: object) -> Mapping[str, str]:
    """``links`` checked: None (no entry moved) or a mapping of ids to tree-relative paths."""
    if links is None:
        return {}
    if not isinstance(links, Mapping):
        raise InputError(
            expected("a mapping of entry ids to paths", repr(links)[:80], where="links")
        )
    wrong = next(
        ((k, v) for k, v in links.items() if not isinstance(k, str) or not isinstance(v, str)), None
    )
    if wrong is not None:
        raise InputError(
            expected(
                "a mapping of entry ids (str) to paths (str)",
                f"an item {wrong!r}"[:80],
                where="links",
            )
        )
    return links


def render_index(entries: Iterable[Entry], *, links: Mapping[str, str] | None = None) -> str:
    """Render the index table of ``entries``.

    Parameters
    ----------
    entries : iterable of Entry
        The entries of one tree.
    links : Mapping[str, str], optional
        The tree-relative file of an entry, by id, where it is not the entry's canonical
        path (a file in ``languages/cutile-dsl/``); see :meth:`LoadedTree.links`.

    Returns
    -------
    str
        Markdown with links relative to the tree root.

    Raises
    ------
    InputError
        If ``entries`` is not an iterable of :class:`Entry`, or ``links`` is neither None
        nor a mapping of ids (str) to paths (str).
    """
    if isinstance(entries, str | bytes) or not isinstance(entries, Iterable):
        raise InputError(expected("an iterable of Entry", repr(entries)[:80], where="entries"))
    items = list(entries)
    if any(not isinstance(e, Entry) for e in items):
        wrong = next(e for e in items if not isinstance(e, Entry))
        raise InputError(expected("entries of type Entry", repr(wrong)[:80], where="entries"))
    found = _links(links)
    rows = [
        f"| [{_link_text(e.name)}]({found.get(e.id, e.relative_path)}) | {e.kind.value} "
        f"| {e.scope} | {_cell(e.summary)} |\n"
        for e in sorted(items, key=index_order)
    ]
    return INDEX_HEADER + "".join(rows)
