"""One change a hand-off names, optionally linked to the catalog entry it applies.

Orchestrator and designer name the same things: "apply split-KV flash decoding, because
the grid fills a quarter of the GPU". :class:`Change` is that item, typed: what to do, why,
and the catalog entry by id with a markdown link to its knowledge file, so a reader (or
``validate``) can follow the link and the LEARN step knows which entry the version tried::

    [cuda-graphs](docs/knowledge/optimizations/cuda-graphs.md) -- replay a graph -- rationale: 10%
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

import attrs

from kernelopt._errors import CatalogError, InputError, expected

__all__ = [
    "KNOWLEDGE_BASE",
    "Change",
    "EntryLookup",
    "check_links",
    "knowledge_link",
    "parse_change",
]

KNOWLEDGE_BASE = "docs/knowledge"
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_LINK = re.compile(r"^\[(?P<id>[^\]]*)\]\((?P<link>[^()\s]*)\)(?P<rest>.*)$")
_RATIONALE = " -- rationale: "


class EntryLookup(Protocol):
    """What link checks need of a catalog: membership and ``get`` (``Catalog`` has both)."""

    def __contains__(self, entry_id: object) -> bool: ...

    def get(self, entry_id: str) -> Any: ...


def knowledge_link(entry: Any, *, base: str = KNOWLEDGE_BASE) -> str:
    """The path of ``entry``'s knowledge file under ``base``, by its kind and scope.

    Examples
    --------
    >>> from kernelopt.catalog import Catalog
    >>> knowledge_link(Catalog.builtin().get("dot-input-precision"))
    'docs/knowledge/languages/triton/optimizations/dot-input-precision.md'
    """
    return f"{base.rstrip('/')}/{entry.relative_path}"


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


def _entry_id(instance: Change, attribute: attrs.Attribute[str | None], value: str | None) -> None:
    if value is not None and not _ID.match(value):
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
    if value is not None and (not value or re.search(r"[()\s]", value)):
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

    @classmethod
    def of(
        cls, entry: Any, what: str | None = None, *, rationale: str = "", base: str = KNOWLEDGE_BASE
    ) -> Change:
        """A change applying catalog ``entry`` (its name is the default description).

        Examples
        --------
        >>> from kernelopt.catalog import Catalog
        >>> change = Change.of(Catalog.builtin().get("cuda-graphs"), "replay", rationale="10%")
        >>> print(change.render())
        [cuda-graphs](docs/knowledge/optimizations/cuda-graphs.md) -- replay -- rationale: 10%
        """
        return cls(
            what=what or str(entry.name),
            entry_id=str(entry.id),
            link=knowledge_link(entry, base=base),
            rationale=rationale,
        )

    def render(self) -> str:
        """The item text (without its ``1.`` or ``-`` marker)."""
        text = (
            self.what if self.entry_id is None else f"[{self.entry_id}]({self.link}) -- {self.what}"
        )
        return f"{text}{_RATIONALE}{self.rationale}" if self.rationale else text

    def problems(self, catalog: EntryLookup) -> list[str]:
        """What is wrong with the link against ``catalog``: unknown id or stale path."""
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

    Raises
    ------
    InputError
        When the item holds no description or an invalid id.
    """
    body = text.strip()
    entry_id = link = None
    match = _LINK.match(body)
    if match:
        entry_id, link = match.group("id").strip(), match.group("link").strip()
        body = match.group("rest").strip()
        body = re.sub(r"^(?:--|—|–|:|-)\s*", "", body)
    what, _, rationale = body.partition(_RATIONALE.strip())
    what = what.strip()
    if not what and entry_id:
        what = entry_id  # "[id](path)" alone names the entry and nothing more
    return Change(what=what, entry_id=entry_id, link=link, rationale=rationale.strip())


def check_links(changes: Iterable[Change], catalog: EntryLookup) -> list[str]:
    """Problems of every linked change in ``changes`` against ``catalog``."""
    return [problem for change in changes for problem in change.problems(catalog)]


def raise_unknown(problems: list[str], what: str) -> None:
    """Raise :class:`CatalogError` listing ``problems`` of ``what``, if any."""
    if problems:
        raise CatalogError(expected(f"{what} linking known catalog entries", "; ".join(problems)))
