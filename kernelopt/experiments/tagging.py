"""Tag experiments with the catalog entries they try, through the entries' keywords.

A :class:`Tagger` compiles every keyword of every catalog entry (plus each entry's id and
name written as words) into one regular expression, so tagging a thousand experiments is a
thousand regex scans. Spellings differing only in ``-``, ``_`` or spaces match each other
(``split-KV`` = ``split kv`` = ``split_kv``); a keyword right after "no"/"without"/"not"
does not tag.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

__all__ = ["EntryLike", "Tagger", "default_tagger"]


class EntryLike(Protocol):
    """What tagging needs from a catalog entry (``kernelopt.catalog.Entry`` has it)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def keywords(self) -> tuple[str, ...]: ...


_SEPARATORS = re.compile(r"[\s_\-]+")
_NEGATION = re.compile(
    r"\b(?:no|not|without|never|instead of|lacks?)\s+(?:\w+\s+){0,1}$", re.IGNORECASE
)


def _normal(phrase: str) -> str:
    return _SEPARATORS.sub(" ", phrase.lower()).strip()


def _pattern(phrase: str) -> str:
    parts = [re.escape(part) for part in phrase.split(" ") if part]
    return r"[\s_\-]*".join(parts)


class Tagger:
    """Find catalog entry ids in text through their keywords.

    Parameters
    ----------
    entries : iterable of EntryLike
        Catalog entries (``id``, ``name``, ``keywords``).
    """

    def __init__(self, entries: Iterable[EntryLike]) -> None:
        self._ids_of: dict[str, list[str]] = {}
        for entry in entries:
            phrases = {_normal(k) for k in entry.keywords} | {
                _normal(entry.id),
                _normal(entry.name),
            }
            for phrase in phrases:
                if len(phrase) < 3:
                    continue  # "tc" or "l2" alone would tag half of every log
                ids = self._ids_of.setdefault(phrase, [])
                if entry.id not in ids:
                    ids.append(entry.id)
        ordered = sorted(self._ids_of, key=len, reverse=True)
        self._regex = (
            re.compile(
                r"(?<![a-z0-9])(?:" + "|".join(_pattern(p) for p in ordered) + r")(?![a-z0-9])",
                re.IGNORECASE,
            )
            if ordered
            else None
        )

    @property
    def phrases(self) -> dict[str, tuple[str, ...]]:
        """Every normalized phrase and the entry ids it tags."""
        return {phrase: tuple(ids) for phrase, ids in self._ids_of.items()}

    def matches(self, text: str) -> list[tuple[str, str, int]]:
        """(entry id, matched text, offset) for every keyword occurrence in ``text``."""
        if self._regex is None or not text:
            return []
        found = []
        for match in self._regex.finditer(text):
            if _NEGATION.search(text[max(0, match.start() - 24) : match.start()]):
                continue
            for entry_id in self._ids_of.get(_normal(match.group(0)), ()):
                found.append((entry_id, match.group(0), match.start()))
        return found

    def tags(self, text: str) -> tuple[str, ...]:
        """Entry ids named in ``text``, in order of first appearance."""
        seen: dict[str, None] = {}
        for entry_id, _text, _offset in self.matches(text):
            seen.setdefault(entry_id, None)
        return tuple(seen)


def default_tagger(catalog: Any | None = None) -> tuple[Tagger, str | None]:
    """A tagger over ``catalog`` (the built-in catalog when None).

    Returns
    -------
    (Tagger, str or None)
        The tagger, and a reason when the catalog could not be loaded (the tagger is then
        empty and experiments keep only tags their result.md names).
    """
    if catalog is None:
        try:
            from kernelopt.catalog import Catalog  # type: ignore[attr-defined]

            catalog = Catalog.builtin()
        except Exception as error:  # the catalog is optional for reading a log
            message = " ".join(str(error).split())
            return Tagger(
                ()
            ), f"catalog not available for tagging ({error.__class__.__name__}: {message[:160]})"
    return Tagger(list(catalog)), None
