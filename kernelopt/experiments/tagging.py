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
from typing import Protocol

from kernelopt._errors import InputError, expected

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


def _check_entry(entry: object) -> None:
    """Raise InputError unless ``entry`` has a string ``id`` and ``name`` and string
    ``keywords``: what tagging reads of a catalog entry."""
    keywords = getattr(entry, "keywords", None)
    ok = (
        isinstance(getattr(entry, "id", None), str)
        and isinstance(getattr(entry, "name", None), str)
        and isinstance(keywords, Iterable)
        and not isinstance(keywords, str)
        and all(isinstance(k, str) for k in keywords)
    )
    if not ok:
        raise InputError(
            expected(
                "catalog entries with a string id, name and keywords",
                type(entry).__name__,
                where="catalog",
            )
        )


class Tagger:
    """Find catalog entry ids in text through their keywords.

    Each entry is found through its keywords, its id and its name, compared in lower case
    with ``-``, ``_`` and runs of spaces alike; phrases shorter than three characters
    (``"tc"``, ``"l2"``) are left out, as they would tag almost every line.

    Parameters
    ----------
    entries : iterable of EntryLike
        Catalog entries (a :class:`kernelopt.catalog.Catalog`, or any objects with a str
        ``id``, a str ``name`` and a tuple of str ``keywords``); read once.

    Raises
    ------
    InputError
        When ``entries`` is a str or bytes or not iterable, or an entry lacks a string
        ``id``, ``name`` or string ``keywords``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> entry = SimpleNamespace(id="split_kv", name="Split KV", keywords=("flash decoding",))
    >>> tagger = Tagger([entry])
    >>> tagger.tags("exp 7: split-KV with 4 splits")
    ('split_kv',)
    >>> tagger.tags("kept the kernel without split kv")
    ()
    """

    def __init__(self, entries: Iterable[EntryLike]) -> None:
        if isinstance(entries, (str, bytes)) or not isinstance(entries, Iterable):
            raise InputError(
                expected("catalog entries (a Catalog)", type(entries).__name__, where="entries")
            )
        self._ids_of: dict[str, list[str]] = {}
        for entry in entries:
            _check_entry(entry)
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
        """(entry id, matched text, offset) for every keyword occurrence in ``text``.

        An occurrence right after a negation (``no``, ``not``, ``without``, ``never``,
        ``instead of``, ``lack``, ``lacks``), or one word after it (``no fused split-KV``),
        is skipped.

        Parameters
        ----------
        text : str
            The text to scan (an experiment's title, description, notes).

        Returns
        -------
        list of (str, str, int)
            One tuple per occurrence and entry it names, in order of position: the entry
            id, the text matched as written, and its character offset in ``text``. Empty
            when nothing matches or the tagger has no phrases.

        Raises
        ------
        InputError
            When ``text`` is not a str.
        """
        if not isinstance(text, str):
            raise InputError(expected("text as a string", type(text).__name__, where="text"))
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
        """Entry ids named in ``text``, in order of first appearance.

        Parameters
        ----------
        text : str
            The text to scan; occurrences are found as :meth:`matches` finds them.

        Returns
        -------
        tuple of str
            Each entry id once; empty when none is named.

        Raises
        ------
        InputError
            When ``text`` is not a str.
        """
        seen: dict[str, None] = {}
        for entry_id, _text, _offset in self.matches(text):
            seen.setdefault(entry_id, None)
        return tuple(seen)


def default_tagger(catalog: Iterable[EntryLike] | None = None) -> tuple[Tagger, str | None]:
    """A tagger over ``catalog`` (the built-in catalog when None).

    Returns
    -------
    (Tagger, str or None)
        The tagger, and a reason when the catalog could not be loaded (the tagger is then
        empty and experiments keep only tags their result.md names).

    Raises
    ------
    InputError
        When ``catalog`` is not an iterable of catalog entries.
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
    if isinstance(catalog, (str, bytes)) or not isinstance(catalog, Iterable):
        raise InputError(
            expected(
                "catalog as a Catalog (entries with id, name and keywords)",
                type(catalog).__name__,
                where="catalog",
            )
        )
    return Tagger(list(catalog)), None
