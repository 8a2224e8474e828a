"""One change a hand-off names, optionally linked to the catalog entry it applies.

Orchestrator and designer name the same things: "apply split-KV flash decoding, because
the grid fills a quarter of the GPU". :class:`Change` is that item, typed: what to do, why,
and the catalog entry by id with a markdown link to its knowledge file, so a reader (or
``validate``) can follow the link and the LEARN step knows which entry the version tried::

    [cuda-graphs](docs/knowledge/optimizations/cuda-graphs.md) -- replay a graph -- rationale: 10%
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import attrs

from kernelopt._checks import as_path
from kernelopt._errors import CatalogError, InputError, expected
from kernelopt.workflow._fields import require_text
from kernelopt.workflow._markdown import unbracket

__all__ = [
    "KNOWLEDGE_BASE",
    "CatalogEntry",
    "Change",
    "EntryLookup",
    "change_items",
    "check_links",
    "knowledge_link",
    "parse_change",
    "unresolved_links",
]

KNOWLEDGE_BASE = "docs/knowledge"
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_LINK = re.compile(r"^\[(?P<id>[^\]]*)\]\((?P<link>[^()\s]*)\)(?P<rest>.*)$")
_RATIONALE = " -- rationale: "
# The task contract lists "optimization + rationale + link to the knowledge file" in that
# order, so a hand-written item may end in the link: "[text](path.md)" or the bare path.
_TRAILING_LINK = re.compile(
    r"(?:\[(?P<text>[^\]]*)\]\((?P<link>[^()\s]+\.md)\)|(?<![^\s(])(?P<bare>[^\s()\[\]]+\.md))"
    r"\)?\.?\s*$"
)
_TRAILING_SEPARATORS = re.compile(r"(?:\s*(?:--|—|–|-|:|;|,|\+|\(|\bsee\b))*\s*$", re.IGNORECASE)
_KNOWLEDGE_FOLDER = "knowledge/"


class EntryLookup(Protocol):
    """What link checks need of a catalog: membership and ``get`` (``Catalog`` has both)."""

    def __contains__(self, entry_id: object) -> bool: ...

    def get(self, entry_id: str) -> Any: ...


def require_lookup(catalog: object) -> None:
    """Refuse a ``catalog`` without membership and ``get`` (None, a path, a number) by name,
    before a check reads an entry of it."""
    if not (hasattr(catalog, "__contains__") and callable(getattr(catalog, "get", None))):
        raise InputError(
            expected(
                "a catalog (kernelopt.catalog.Catalog)", type(catalog).__name__, where="catalog"
            )
        )


class CatalogEntry(Protocol):
    """What a change needs of a catalog entry (:class:`kernelopt.catalog.Entry` has it)."""

    @property
    def id(self) -> str:
        """The entry's kebab-case id (``split-kv-flash-decoding``)."""
        ...

    @property
    def name(self) -> str:
        """The entry's title, the link text of a change."""
        ...

    @property
    def relative_path(self) -> str:
        """The entry's file inside a knowledge tree, by kind and scope."""
        ...


def _entry_fields(entry: object, where: str) -> tuple[str, str, str]:
    """``entry``'s id, name and relative path, or an InputError naming what came instead
    (an id string is the usual mistake: the entry is ``catalog.get(id)``)."""
    values = [getattr(entry, name, None) for name in ("id", "name", "relative_path")]
    if isinstance(entry, str) or not all(isinstance(v, str) and v for v in values):
        shown = (
            f"the id {entry!r} (pass catalog.get({entry!r}))"
            if isinstance(entry, str)
            else type(entry).__name__
        )
        raise InputError(expected("a catalog entry (kernelopt.catalog.Entry)", shown, where=where))
    entry_id, name, path = (str(v) for v in values)
    return entry_id, name, path


def knowledge_link(
    entry: CatalogEntry,
    *,
    base: str | None = None,
    relative_to: str | os.PathLike[str] | None = None,
    knowledge: str | os.PathLike[str] | None = None,
) -> str:
    """The path of ``entry``'s knowledge file: under ``base``, or from a file's folder.

    The hand-offs name an entry's file under the knowledge tree's path
    (``docs/knowledge/...``), a link that resolves from the project's root. A markdown
    file resolves its links from its own folder instead: for a task written to a file at
    a known place (an experiment's ``plan.md``), pass that file as ``relative_to``.

    Parameters
    ----------
    entry : CatalogEntry
        A catalog entry (:class:`kernelopt.catalog.Entry`), not its id.
    base : str, optional
        The knowledge tree's path as links should show it; default
        :data:`KNOWLEDGE_BASE` (``docs/knowledge``). Not with ``relative_to``.
    relative_to : path-like, optional
        The file the link will be written in: the link then leads from its folder to the
        entry's file in ``knowledge`` when that tree holds it, else to the file shipped
        with kernelopt.
    knowledge : path-like, optional
        The user's knowledge tree, searched before the built-in entries; only with
        ``relative_to``.

    Returns
    -------
    str
        ``base/<relative path>``, or the path from ``relative_to``'s folder to the
        entry's file, with forward slashes.

    Raises
    ------
    InputError
        When ``entry`` is not a catalog entry (an id string, None), ``base`` is not a
        str or is given with ``relative_to``, ``knowledge`` is given without it, a path
        is not a str or path-like, or neither tree holds the entry's file (a link to it
        would lead nowhere).

    Examples
    --------
    >>> from kernelopt.catalog import Catalog
    >>> knowledge_link(Catalog.builtin().get("dot-input-precision"))
    'docs/knowledge/languages/triton/optimizations/dot-input-precision.md'
    """
    _, _, path = _entry_fields(entry, "entry")
    if base is not None and not isinstance(base, str):
        raise InputError(expected("a path as links show it (a str)", repr(base), where="base"))
    if relative_to is None:
        if knowledge is not None:
            # Without a file to link from, the tree would be dropped without a word.
            raise InputError(expected("knowledge only with relative_to", "it without"))
        return f"{(KNOWLEDGE_BASE if base is None else base).rstrip('/')}/{path}"
    if base is not None:
        raise InputError(expected("base or relative_to, not both", "both"))
    return _link_from(as_path(relative_to, "relative_to"), path, knowledge)


def _link_from(written_in: Path, path: str, knowledge: str | os.PathLike[str] | None) -> str:
    """The link from ``written_in``'s folder to the file ``path`` names in ``knowledge``,
    else in the built-in tree (as :func:`kernelopt.diagnose.entry_links` links a plan's)."""
    from kernelopt.catalog.catalog import BUILTIN_ROOT

    trees = ([as_path(knowledge, "knowledge")] if knowledge is not None else []) + [BUILTIN_ROOT]
    found = next((tree / path for tree in trees if (tree / path).is_file()), None)
    if found is None:
        raise InputError(
            expected(
                f"a knowledge tree holding {path}",
                f"none of {', '.join(str(tree) for tree in trees)}",
                where="knowledge",
            )
        )
    start = written_in.resolve().parent
    try:
        return Path(os.path.relpath(found.resolve(), start)).as_posix()
    except ValueError:
        # Another drive (Windows) has no relative path: the absolute one still resolves.
        return found.resolve().as_posix()


def _line(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or value != value.strip() or "\n" in value or "\r" in value:
        raise InputError(
            expected(
                "one line without surrounding spaces",
                repr(value),
                where=f"{type(instance).__name__}.{attribute.name}",
            )
        )


def _what(instance: Change, attribute: attrs.Attribute[str], value: str) -> None:
    _line(instance, attribute, value)
    if not value:
        raise InputError(expected("a non-empty description", repr(value), where="Change.what"))
    if _RATIONALE.strip() in value or _LINK.match(value):
        raise InputError(
            expected(
                f"a description without '{_RATIONALE.strip()}' that does not start with a link",
                repr(value),
                where="Change.what",
            )
        )


def _linked_id(text: str, link: str) -> str | None:
    """The entry a knowledge link names: its text when that is an id, else the file's stem."""
    if _KNOWLEDGE_FOLDER not in link or not link.endswith(".md"):
        return None
    if _ID.match(text):
        return text
    stem = link.rsplit("/", 1)[-1][: -len(".md")]
    return stem if _ID.match(stem) else None


def _trailing_link(body: str) -> tuple[str, str, str] | None:
    """``(text before, entry id, link)`` when ``body`` ends in a knowledge-file link."""
    # What every such link ends in, checked first: the search tries each '[' in turn and
    # reads on from it, which in a long run of them takes quadratic time.
    if not body.rstrip().removesuffix(".").rstrip(")").endswith(".md"):
        return None
    match = _TRAILING_LINK.search(body)
    if match is None:
        return None
    link = match.group("link") or match.group("bare")
    entry_id = _linked_id(match.group("text") or "", link)
    if entry_id is None:
        return None
    return _TRAILING_SEPARATORS.sub("", body[: match.start()]), entry_id, link


def _unlinked_text(instance: Change, attribute: attrs.Attribute[str], value: str) -> None:
    # Rendered without a leading link, such text would read back as linked.
    if instance.entry_id is None and _trailing_link(value) is not None:
        raise InputError(
            expected(
                "text that does not end in a knowledge-file link (give it as entry_id and link)",
                repr(value),
                where=f"Change.{attribute.name}",
            )
        )


def _entry_id(instance: Change, attribute: attrs.Attribute[str | None], value: str | None) -> None:
    if value is not None and not (isinstance(value, str) and _ID.match(value)):
        raise InputError(
            expected("a kebab-case catalog id or None", repr(value), where="Change.entry_id")
        )


def _link(instance: Change, attribute: attrs.Attribute[str | None], value: str | None) -> None:
    if (value is None) != (instance.entry_id is None):
        raise InputError(
            expected(
                "a link exactly when an entry id is given",
                f"entry_id={instance.entry_id!r}, link={value!r}",
                where="Change.link",
            )
        )
    if value is not None and (
        not isinstance(value, str) or not value or re.search(r"[()\s]", value)
    ):
        raise InputError(
            expected("a path without spaces or parentheses", repr(value), where="Change.link")
        )


@attrs.frozen(kw_only=True)
class Change:
    """One change to make (in a task) or made (in a new version).

    Parameters
    ----------
    what : str
        The specific change, one line (``"split the KV axis into 8 chunks"``).
    entry_id : str, optional
        The catalog entry it applies; None for an idea the catalog does not hold yet.
    link : str, optional
        Path of that entry's knowledge file (see :func:`knowledge_link`); given exactly
        when ``entry_id`` is.
    rationale : str
        Why, one line; may be empty.
    """

    what: str = attrs.field(validator=_what)
    entry_id: str | None = attrs.field(default=None, validator=_entry_id)
    link: str | None = attrs.field(default=None, validator=_link)
    rationale: str = attrs.field(default="", validator=_line)

    def __attrs_post_init__(self) -> None:
        # After every field is set: whether the text may end in a link depends on entry_id.
        fields = attrs.fields(Change)
        _unlinked_text(self, fields.what, self.what)
        _unlinked_text(self, fields.rationale, self.rationale)
        text = self.render()
        if unbracket(text) != text:
            # The reader drops the template's brackets around a whole item ("[list]").
            raise InputError(
                expected(
                    "a change whose text is not all in one pair of brackets",
                    repr(text),
                    where="Change",
                )
            )

    @classmethod
    def of(
        cls,
        entry: CatalogEntry,
        what: str | None = None,
        *,
        rationale: str = "",
        base: str | None = None,
        relative_to: str | os.PathLike[str] | None = None,
        knowledge: str | os.PathLike[str] | None = None,
    ) -> Change:
        """A change applying catalog ``entry``, linked to its knowledge file.

        Parameters
        ----------
        entry : CatalogEntry
            The catalog entry applied (:class:`kernelopt.catalog.Entry`), not its id.
        what : str, optional
            The specific change, one line; the entry's name if ``None`` or empty.
        rationale : str
            Why, one line; may be empty.
        base : str, optional
            The knowledge tree's path as the link should show it; the link is
            ``base/<entry's relative path>`` (default ``docs/knowledge``, the hand-offs'
            form, which resolves from the project's root).
        relative_to : path-like, optional
            The file the change will be written in (an experiment's ``plan.md``): the
            link then leads from that file's folder to the entry's file, as a markdown
            file resolves it (see :func:`knowledge_link`). Not with ``base``.
        knowledge : path-like, optional
            The user's knowledge tree, searched before the built-in entries; only with
            ``relative_to``.

        Returns
        -------
        Change
            The change, with ``entry_id`` and ``link`` set.

        Raises
        ------
        InputError
            When ``entry`` is not a catalog entry (pass ``catalog.get(id)``, not the id),
            ``what`` or ``rationale`` is not one line, or (see :func:`knowledge_link`)
            ``base`` comes with ``relative_to``, ``knowledge`` without it, or neither tree
            holds the entry's file.

        Examples
        --------
        >>> from kernelopt.catalog import Catalog
        >>> change = Change.of(Catalog.builtin().get("cuda-graphs"), "replay", rationale="10%")
        >>> print(change.render())
        [cuda-graphs](docs/knowledge/optimizations/cuda-graphs.md) -- replay -- rationale: 10%
        """
        entry_id, name, _ = _entry_fields(entry, "Change.of(entry)")
        link = knowledge_link(entry, base=base, relative_to=relative_to, knowledge=knowledge)
        return cls(what=what or name, entry_id=entry_id, link=link, rationale=rationale)

    def render(self) -> str:
        """The item text (without its ``1.`` or ``-`` marker)."""
        text = (
            self.what if self.entry_id is None else f"[{self.entry_id}]({self.link}) -- {self.what}"
        )
        return f"{text}{_RATIONALE}{self.rationale}" if self.rationale else text

    def problems(self, catalog: EntryLookup) -> list[str]:
        """What is wrong with the change's catalog link: unknown id or stale path.

        Parameters
        ----------
        catalog : EntryLookup
            The catalog to check against (a :class:`~kernelopt.catalog.Catalog`).

        Returns
        -------
        list of str
            One message when the entry id is not in ``catalog``, or when the link does
            not end in the entry's knowledge file path (its kind or scope changed); empty
            when the link resolves or the change links no entry.
        """
        require_lookup(catalog)
        if self.entry_id is None or self.link is None:
            return []
        if self.entry_id not in catalog:
            return [f"unknown entry id '{self.entry_id}'"]
        where = str(catalog.get(self.entry_id).relative_path)
        if not self.link.endswith(where):
            return [
                f"'{self.entry_id}' links {self.link}, but its knowledge file is {where} "
                "(kind or scope changed?)"
            ]
        return []


def parse_change(text: str) -> Change:
    """Read one item written by :meth:`Change.render` (or by hand: ``[id](path): text``).

    Parameters
    ----------
    text : str
        The item's text, without its ``1.`` or ``-`` marker. After a leading
        ``[id](path)`` link, a separator (``--``, ``:``, ``-``) is dropped; text after
        ``-- rationale:`` is the rationale. A link alone describes the change by its id.
        Without a leading link, a link to a knowledge file (a path holding
        ``knowledge/``, ``[text](path.md)`` or bare) ending the item is the entry's, as
        the task contract orders it: optimization, rationale, link. The id is the link's
        text when that is an id, else the file's name without ``.md``. An item in one pair
        of brackets, the template's ``[specific optimization + rationale + link]`` filled
        in place, reads without them.

    Returns
    -------
    Change
        The change.

    Raises
    ------
    InputError
        When ``text`` is not a str, or the item holds no description or an invalid id.
    """
    require_text(text, what="an item's text (a str)")
    # The task template's item, "[specific optimization + rationale + link]", filled in place.
    body = unbracket(text.strip())
    entry_id = link = None
    match = _LINK.match(body)
    trailing = None if match else _trailing_link(body)
    if match:
        entry_id, link = match.group("id").strip(), match.group("link").strip()
        entry_id = _linked_id(entry_id, link) or entry_id
        body = match.group("rest").strip()
        body = re.sub(r"^(?:--|—|–|:|-)\s*", "", body)
    elif trailing is not None:
        body, entry_id, link = trailing
    what, _, rationale = body.partition(_RATIONALE.strip())
    what = what.strip()
    if not what and entry_id:
        what = entry_id  # "[id](path)" alone names the entry and nothing more
    return Change(what=what, entry_id=entry_id, link=link, rationale=rationale.strip())


def change_items(value: Iterable[Change], *, where: str) -> tuple[Change, ...]:
    """``value`` as a tuple of :class:`Change`, or an InputError naming ``where`` (a str,
    a lone Change or an item of another kind would fail only when rendered)."""
    if isinstance(value, (str, Change)) or not isinstance(value, Iterable):
        raise InputError(expected("a sequence of Change", type(value).__name__, where=where))
    found = tuple(value)
    wrong = [item for item in found if not isinstance(item, Change)]
    if wrong:
        raise InputError(
            expected("Change items (Change.of(entry, ...))", type(wrong[0]).__name__, where=where)
        )
    return found


def check_links(changes: Iterable[Change], catalog: EntryLookup) -> list[str]:
    """Problems of every linked change in ``changes`` against ``catalog``."""
    require_lookup(catalog)
    return [problem for change in changes for problem in change.problems(catalog)]


def unresolved_links(
    changes: Iterable[Change], catalog: EntryLookup, roots: Iterable[str | os.PathLike[str]]
) -> list[str]:
    """A problem for each change whose catalog link is no file from any of ``roots``.

    The hand-offs' default link, ``docs/knowledge/<path>``, leads to the user's knowledge
    tree; a built-in entry's file ships inside kernelopt (``kernelopt/catalog/knowledge``),
    so the link leads nowhere unless the tree holds a copy. Links :meth:`Change.problems`
    already names (unknown id, stale path) are not named again, nor a URL.
    """
    require_lookup(catalog)
    folders: list[Path] = []
    for root in roots:  # one folder named twice (the file's is the project's) said once
        if not any(Path(root).resolve() == folder.resolve() for folder in folders):
            folders.append(Path(root))
    shown = " or ".join(str(folder) for folder in folders)
    found = []
    for change in changes:
        link = change.link
        if change.entry_id is None or link is None or "://" in link or change.problems(catalog):
            continue
        if any((folder / link).is_file() for folder in folders):
            continue
        found.append(
            f"'{change.entry_id}' links {link}, which is no file from {shown} (a built-in "
            f"entry's file ships inside kernelopt: `kernelopt catalog show {change.entry_id}` "
            "prints it, and Change.of(entry, relative_to=<the hand-off's file>) links it)"
        )
    return found


def raise_unknown(problems: list[str], what: str) -> None:
    """Raise :class:`CatalogError` listing ``problems`` of ``what``, if any."""
    if problems:
        raise CatalogError(expected(f"{what} linking known catalog entries", "; ".join(problems)))
