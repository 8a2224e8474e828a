"""The :class:`Catalog`: a set of entries by id, with the queries the workflow needs.

``Catalog.builtin()`` is the knowledge shipped with kernelopt; ``Catalog.load(path)`` puts
a user's ``docs/knowledge/`` tree over it (a user entry replaces the built-in entry with
the same id). Queries return ranked :class:`~kernelopt.catalog.query.Match` objects that
say why each entry matched.
"""

from __future__ import annotations

import difflib
import functools
import numbers
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from kernelopt._errors import CatalogError, InputError, expected
from kernelopt.catalog._fields import as_path, require_bool, require_entry_id
from kernelopt.catalog.layout import Placement, classify
from kernelopt.catalog.loader import LoadedTree, load_tree
from kernelopt.catalog.markdown import declared_id
from kernelopt.catalog.model import Entry, Kind
from kernelopt.catalog.problems import Problem, Severity
from kernelopt.catalog.query import Match, _check_facts, _Searchable, rank
from kernelopt.catalog.vocabulary import (
    FAMILIES,
    FAMILY_ALIASES,
    family_alias_shape,
    family_aliases_text,
    family_ancestors,
    family_shape,
    language_scopes,
    nearest_family,
    normalize_family,
)

__all__ = [
    "BUILTIN_ROOT",
    "Catalog",
    "builtin_fallbacks",
    "did_you_mean",
    "link_problems",
    "nearest_ids",
]

BUILTIN_ROOT = Path(__file__).resolve().parent / "knowledge"


def nearest_ids(typed: str, known: Iterable[str], *, most: int = 3) -> list[str]:
    """The known ids a user most likely meant by ``typed``, best first.

    Ids are kebab-case and lower-case, so a different case, underscores or spaces
    name one id outright; otherwise ids that contain what was typed (a prefix
    typed short), then ids spelled close to it.

    Parameters
    ----------
    typed : str
        The id as the user wrote it.
    known : iterable of str
        The ids that exist.
    most : int, optional
        How many to return at most.

    Returns
    -------
    list of str
        Up to ``most`` ids; empty when none is close.
    """
    ids = sorted(set(known))
    folded = "-".join(typed.strip().lower().replace("_", " ").split())
    if folded in ids:
        return [folded]
    if len(folded) >= 3:
        containing = [i for i in ids if folded in i]
        if containing:
            return containing[:most]
    return difflib.get_close_matches(folded, ids, n=most, cutoff=0.75)


def did_you_mean(typed: str, known: Iterable[str]) -> str:
    """``"; did you mean 'a' or 'b'?"`` for the ids closest to ``typed``, else ``""``."""
    near = nearest_ids(typed, known)
    return f"; did you mean {' or '.join(repr(i) for i in near)}?" if near else ""


def link_problems(tree: LoadedTree, known: Iterable[str]) -> list[Problem]:
    """Interactions in ``tree`` that link to an id absent from ``known``, located by line."""
    ids = set(known)
    problems = []
    for entry in tree.entries:
        path = tree.paths[entry.id]
        lines = tree.texts.get(path, "").split("\n")
        for interaction in entry.interactions:
            if interaction.target in ids:
                continue
            mark = f"`{interaction.target}`"
            line = next(
                (n for n, text in enumerate(lines, 1) if text.startswith("- ") and mark in text),
                None,
            )
            problems.append(
                Problem(
                    path=str(path),
                    line=line,
                    severity=Severity.ERROR,
                    section="Interactions",
                    message=expected("a link to a known entry id", repr(interaction.target))
                    + did_you_mean(interaction.target, ids),
                )
            )
    return problems


def builtin_fallbacks(tree: LoadedTree, builtin_ids: Iterable[str]) -> list[Problem]:
    """A warning for each entry file of ``tree`` left out for errors whose entry is built in.

    The built-in entry then answers in the file's place. Without this warning, a user
    whose own ``online-softmax.md`` has a typo would read the built-in entry as if it were
    theirs: the error names the file, but not what is used instead.

    Parameters
    ----------
    tree : LoadedTree
        A non-strict load of a user's tree.
    builtin_ids : iterable of str
        The ids of the entries the tree is merged over.

    Returns
    -------
    list of Problem
        One warning per such file, at the line of its first error where that has one;
        the id is the file's name, or its ``- id:`` line when it has one.
    """
    builtin = set(builtin_ids)
    kept_paths = {str(p) for p in tree.paths.values()}
    kept_ids = {e.id for e in tree.entries}
    first_error: dict[str, Problem] = {}
    for problem in tree.problems:
        if problem.is_error and problem.path not in kept_paths:
            first_error.setdefault(problem.path, problem)
    out = []
    for where, error in first_error.items():
        path = Path(where)
        if not path.is_relative_to(tree.root) or not isinstance(
            classify(tree.root, path), Placement
        ):
            continue  # a folder or a file outside the entry folders: it names no entry
        declared = declared_id(tree.texts.get(path, ""))
        names = dict.fromkeys((path.stem, *([declared] if declared else ())))
        for name in names:
            if name in builtin and name not in kept_ids:
                out.append(
                    Problem(
                        path=where,
                        line=error.line,
                        severity=Severity.WARNING,
                        message=expected(
                            f"this file's '{name}' in place of the built-in entry",
                            f"the built-in '{name}' used instead, as this file is left out "
                            "for its error",
                        ),
                    )
                )
    return out


@functools.cache
def _builtin() -> Catalog:
    tree = load_tree(BUILTIN_ROOT, strict=True, lock=False)
    catalog = Catalog(tree.entries, sources=tree.paths)
    broken = link_problems(tree, catalog.ids())
    if broken:
        raise CatalogError("\n".join(str(p) for p in broken))
    return catalog


def _items_of(value: object, what: str, where: str) -> Iterable[object]:
    """``value`` as an iterable of items; None, a str, bytes, a mapping (whose keys a loop
    would take for the items) or a non-iterable is an :class:`InputError` naming ``where``."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InputError(expected(f"an iterable of {what}", repr(value)[:80], where=where))
    return value


def _source_paths(sources: object, ids: Mapping[str, Entry]) -> dict[str, Path]:
    """The files of ``sources`` (None or a mapping of ids to paths) for the ids kept.

    Every value is checked, kept or not: a wrong one is a mistake wherever it stands.
    """
    if sources is None:
        return {}
    if not isinstance(sources, Mapping):
        raise InputError(
            expected("a mapping of entry ids to paths", repr(sources)[:80], where="sources")
        )
    paths = {k: as_path(v, f"sources[{k!r}]") for k, v in sources.items()}
    return {k: path for k, path in paths.items() if k in ids}


def _problems(problems: object) -> tuple[Problem, ...]:
    """``problems`` as a tuple, each item a :class:`Problem`."""
    checked = []
    for problem in _items_of(problems, "Problem", "problems"):
        if not isinstance(problem, Problem):
            raise InputError(
                expected("problems of type Problem", repr(problem)[:80], where="problems")
            )
        checked.append(problem)
    return tuple(checked)


class Catalog:
    """Entries by id, iterated in id order, with ranked queries.

    Parameters
    ----------
    entries : iterable of Entry
        The entries; ids must be unique.
    sources : Mapping[str, path-like], optional
        The file each entry was read from, by id.
    problems : iterable of Problem, optional
        Problems met while loading (non-strict loads keep them here).

    Raises
    ------
    InputError
        If ``entries`` or ``problems`` is not an iterable of its items' type (None, a str
        or a mapping is not), or ``sources`` is neither None nor a mapping of ids to paths.
    CatalogError
        If two entries have the same id.

    Examples
    --------
    >>> from kernelopt.catalog import Catalog
    >>> catalog = Catalog.builtin()
    >>> "online-softmax" in catalog
    True
    >>> [e.id for e in catalog.fundamentals("mla-decode")][:1]
    ['head-grouping-mma-tile']
    """

    __slots__ = (
        "_entries",
        "_fallbacks",
        "_families",
        "_problems",
        "_searchables",
        "_sources",
    )

    def __init__(
        self,
        entries: Iterable[Entry] = (),
        *,
        sources: Mapping[str, str | os.PathLike[str]] | None = None,
        problems: Iterable[Problem] = (),
    ) -> None:
        by_id: dict[str, Entry] = {}
        for entry in _items_of(entries, "Entry", "entries"):
            if not isinstance(entry, Entry):
                raise InputError(
                    expected("entries of type Entry", repr(entry)[:80], where="entries")
                )
            if entry.id in by_id:
                raise CatalogError(expected("unique entry ids", f"'{entry.id}' twice"))
            by_id[entry.id] = entry
        self._entries = {k: by_id[k] for k in sorted(by_id)}
        self._sources = _source_paths(sources, by_id)
        self._problems = _problems(problems)
        self._fallbacks: tuple[Problem, ...] = ()
        self._searchables: tuple[_Searchable, ...] | None = None
        self._families: tuple[str, ...] | None = None

    # --- construction -------------------------------------------------------------------

    @classmethod
    def builtin(cls) -> Catalog:
        """The knowledge shipped in ``kernelopt/catalog/knowledge/`` (loaded once, cached)."""
        return _builtin()

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, with_builtin: bool = True, strict: bool = True
    ) -> Catalog:
        """Load a user's knowledge tree, merged over the built-in entries.

        Parameters
        ----------
        path : path-like
            The root of a tree laid out like ``docs/knowledge/``.
        with_builtin : bool
            Merge over the built-in catalog (user entries win by id).
        strict : bool
            Raise on the first problem; otherwise keep going and list problems in
            :attr:`problems` (files that failed are left out and reported there; one whose
            id a built-in entry has also gets a warning that the built-in is used instead,
            see :attr:`fallbacks`).

        Raises
        ------
        FormatError
            In strict mode, for a file that does not parse (names file, line, section).
        CatalogError
            For a path that is not a folder or cannot be listed; in strict mode for
            repeated ids, entries in the wrong folder, interactions linking unknown ids and
            files or folders that cannot be read.
        InputError
            If ``with_builtin`` or ``strict`` is not a bool (``strict="no"`` would read
            as true).
        """
        require_bool(with_builtin, "with_builtin")
        tree = load_tree(path, strict=strict)
        base = cls.builtin() if with_builtin else cls()
        entries = {e.id: e for e in base}
        sources = {e.id: p for e in base if (p := base.source(e.id)) is not None}
        entries.update({e.id: e for e in tree.entries})
        sources.update(tree.paths)
        fallbacks = builtin_fallbacks(tree, base.ids()) if with_builtin else []
        problems = [*tree.problems, *fallbacks, *link_problems(tree, entries)]
        errors = [p for p in problems if p.is_error]
        if strict and errors:
            raise CatalogError("\n".join(str(p) for p in errors))
        catalog = cls(entries.values(), sources=sources, problems=problems)
        catalog._fallbacks = tuple(fallbacks)
        return catalog

    # --- container ----------------------------------------------------------------------

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def __repr__(self) -> str:
        return f"Catalog({len(self)} entries)"

    def ids(self) -> list[str]:
        """Every entry id, sorted."""
        return list(self._entries)

    def get(self, entry_id: str) -> Entry:
        """The entry with ``entry_id``.

        Parameters
        ----------
        entry_id : str
            The entry's kebab-case id (``"split-kv-flash-decoding"``).

        Returns
        -------
        Entry
            The entry.

        Raises
        ------
        CatalogError
            ``Expected a known entry id (...), got 'x'`` when there is none, with the
            closest ids (``; did you mean 'y'?``) when some are close.
        InputError
            If ``entry_id`` is not a str.
        """
        require_entry_id(entry_id)
        try:
            return self._entries[entry_id]
        except KeyError:
            raise CatalogError(
                expected("a known entry id (see `kernelopt catalog list`)", repr(entry_id))
                + did_you_mean(entry_id, self._entries)
            ) from None

    def source(self, entry_id: str) -> Path | None:
        """The file an entry was read from, if it came from a file.

        Parameters
        ----------
        entry_id : str
            The entry's id.

        Returns
        -------
        Path or None
            The markdown file; ``None`` for an entry built in memory or an unknown id.

        Raises
        ------
        InputError
            If ``entry_id`` is not a str (no id at all, rather than an unknown one).
        """
        require_entry_id(entry_id)
        return self._sources.get(entry_id)

    @property
    def problems(self) -> tuple[Problem, ...]:
        """Problems met while loading (empty after a strict load)."""
        return self._problems

    @property
    def fallbacks(self) -> tuple[Problem, ...]:
        """The warnings of :attr:`problems` that say a built-in entry answers in place of
        a user's file left out for errors (see :func:`builtin_fallbacks`)."""
        return self._fallbacks

    # --- queries ------------------------------------------------------------------------

    @staticmethod
    def family_ancestors(family: str) -> tuple[str, ...]:
        """``family`` and its ancestors up to ``any``; see :func:`family_ancestors`."""
        return family_ancestors(family)

    def families(self) -> tuple[str, ...]:
        """Every family a query accepts, sorted: the vocabulary's and those entries name.

        A family of a user's own (lint warns about it) is accepted once an entry names it.
        """
        if self._families is None:
            names = set(FAMILIES)
            for entry in self:
                names.update(entry.families, entry.fundamental_for)
            self._families = tuple(sorted(names))
        return self._families

    def canonical_family(self, family: str, *, where: str = "family") -> str:
        """``family`` in the catalog's spelling (``MLA_decode`` is ``mla-decode``).

        An unknown family would otherwise match every entry for ``any`` and read as an
        answer ("these apply to 'no-such'"), so it is refused.

        Parameters
        ----------
        family : str
            A family of :meth:`families` or an alias of
            :data:`~kernelopt.catalog.vocabulary.FAMILY_ALIASES` (``matmul`` is ``gemm``),
            in any case and with ``_`` for ``-``.
        where : str
            What the error names: the argument or option the family came from.

        Returns
        -------
        str
            The family as :meth:`families` lists it.

        Raises
        ------
        InputError
            ``family: Expected a kernel family among any, attention, ... (or matmul, ...
            for gemm), got 'bogus'``.
        """
        name = normalize_family(family)
        if name not in self.families():
            raise InputError(
                expected(
                    f"a kernel family among {', '.join(self.families())} "
                    f"(or {family_aliases_text()})",
                    repr(family) + self._family_hint(name),
                    where=where,
                )
            )
        return name

    def _family_hint(self, name: str) -> str:
        """What to type for an unknown family: the nearest family of a kernel named in its
        place (``kv_cache_append``: ``elementwise``), else a family spelled close to it."""
        nearest = nearest_family(name)
        if nearest is not None:
            family, why = nearest
            return f"; {name} names a kernel with no family of its own, nearest {family}: {why}"
        names = [*self.families(), *FAMILY_ALIASES]
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
        return f"; did you mean {close[0]!r}?" if close else ""

    def _items(self) -> tuple[_Searchable, ...]:
        if self._searchables is None:
            self._searchables = tuple(_Searchable(e) for e in self._entries.values())
        return self._searchables

    def query(
        self,
        *,
        family: str | None = None,
        language: str | None = None,
        kind: Kind | str | None = None,
        metrics: Mapping[str, float] | None = None,
        shape: Mapping[str, float] | None = None,
        keyword: str | None = None,
        limit: int | None = None,
    ) -> list[Match]:
        """Entries that apply, best first, each with the reasons it matched.

        Parameters
        ----------
        family : str, optional
            Keep entries for this kernel family or one of its ancestors (an ``mla-decode``
            query also returns decode-attention, attention and ``any`` entries). Read in
            any case, with ``_`` or spaces for ``-`` (``"mla_decode"``); it must be one of
            :meth:`families`.
        language : str, optional
            Keep shared entries and those specific to this language, read in any case
            (``"Triton"`` is ``"triton"``, ``"cutile-dsl"`` is ``"cutile"``); a dialect
            keeps its language's too (``"gluon"``: gluon, triton and shared entries),
            a language not its dialects' (``"triton"`` leaves gluon entries out).
        kind : Kind or str, optional
            Keep only optimizations or only anti-patterns (in any case).
        metrics : Mapping[str, float], optional
            Measured metrics (``{"dram_pct": 85, "tc_pct": 10}``); scores entries whose
            metric triggers hold. Each value is finite, but ``arith_intensity`` may be
            +inf (a call that moves no bytes).
        shape : Mapping[str, float], optional
            Workload shape facts (``{"s_q": 1}``); scores entries whose shape conditions hold.
        keyword : str, optional
            Free text (an experiment description, a search): scores entries named in it by
            id, name or keyword, else by shared words.
        limit : int, optional
            Return at most this many matches (a numpy integer too).

        Returns
        -------
        list of Match
            Sorted by descending score, then id. With any of ``metrics``, ``shape`` or
            ``keyword`` given, only entries matching one of them are returned.

        Raises
        ------
        InputError
            For an unknown family or language, a kind that is neither, metric or shape
            values that are not numbers or not finite (NaN, infinities; an
            ``arith_intensity`` of +inf, a call that moves no bytes, is kept), a
            ``keyword`` with nothing to look for (blank, punctuation or only stop words,
            naming no entry), or a bad ``limit``.
        """
        # Integral, not int: a count computed with numpy (np.int64) is an int all the same.
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, numbers.Integral) or limit < 0
        ):
            raise InputError(expected("a limit that is an int >= 0", repr(limit), where="limit"))
        matches = rank(
            self._items(),
            family=None if family is None else self.canonical_family(family),
            language=language,
            kind=kind,
            metrics=metrics,
            shape=shape,
            keyword=keyword,
        )
        return matches if limit is None else matches[: int(limit)]

    def match_metrics(self, metrics: Mapping[str, float]) -> list[Match]:
        """Entries whose metric triggers hold for the measured metrics, ranked.

        Parameters
        ----------
        metrics : Mapping[str, float]
            Measured metrics by name (``{"dram_pct": 85, "tc_pct": 10}``).

        Returns
        -------
        list of Match
            The triggered entries, by descending score, then id.

        Raises
        ------
        InputError
            If ``metrics`` is not a mapping of names (str) to finite numbers (as
            :meth:`query` says).
        """
        return self.query(metrics=metrics)

    def search(self, text: str, *, limit: int | None = None) -> list[Match]:
        """Free-text search over ids, names, keywords and entry text.

        Parameters
        ----------
        text : str
            The words to look for; an entry named in it by id, name or keyword scores
            highest, one sharing words with it lower (``query(keyword=text)``).
        limit : int, optional
            Return at most this many matches; all of them if ``None``.

        Returns
        -------
        list of Match
            The entries that match, by descending score, then id.

        Raises
        ------
        InputError
            If ``text`` is not a str or ``limit`` is not an int >= 0.
        """
        return self.query(keyword=text, limit=limit)

    def tag(self, text: str, *, family: str | None = None) -> list[Match]:
        """Entries a description names by id, name or keyword (no loose word matches).

        This is how an experiment description such as ``"split-K with num_splits=16"`` is
        tagged with the techniques it tried.

        Parameters
        ----------
        text : str
            The description to tag.
        family : str, optional
            Keep only entries for this kernel family or one of its ancestors, as in
            :meth:`query`; every family if ``None``.

        Returns
        -------
        list of Match
            The entries named, by descending score, then id; empty if none is named.

        Raises
        ------
        InputError
            If ``text`` is not a str or ``family`` is not one of :meth:`families`.
        """
        if not isinstance(text, str):
            raise InputError(expected("a description (str)", repr(text), where="text"))
        known = None if family is None else self.canonical_family(family)
        return rank(self._items(), family=known, keyword=text, strong_only=True)

    def fundamentals(
        self,
        family: str,
        *,
        language: str | None = None,
        shape: Mapping[str, float] | None = None,
    ) -> list[Entry]:
        """Entries that are a standard technique for a family or one of its ancestors.

        Parameters
        ----------
        family : str
            The kernel family (``"mla-decode"``), spelled as :meth:`query` accepts it.
        language : str, optional
            Keep shared entries and those specific to this language, read as
            :meth:`query` reads it (``"Triton"`` is ``"triton"``; ``"gluon"`` keeps
            triton's entries too); every entry if ``None``.
        shape : mapping of str to float, optional
            Shape facts of the kernel (``{"m": 1}``): an entry whose every shape
            condition fails at them is left out, as at the facts the family's name fixes.
            They win over those facts.

        Returns
        -------
        list of Entry
            Most specific first: for ``mla-decode``, entries fundamental for mla-decode,
            then decode-attention, then attention, then ``any``; id order within each.
            An entry whose every shape condition fails at the shape the family's name
            fixes (:data:`~kernelopt.catalog.vocabulary.FAMILY_SHAPES`: decode attention
            has ``s_q = 1``) is left out: ``causal-tile-skipping`` is standard for
            attention, and has no key tile to skip where one query row sees every key.
            An alias that fixes a shape (:data:`~kernelopt.catalog.vocabulary.FAMILY_ALIAS_SHAPES`:
            ``gemv`` is a GEMM at ``m = 1``) leaves out what fails there:
            ``grouped-tile-order`` needs thousands of tile rows.

        Raises
        ------
        InputError
            For a family not among :meth:`families`, or a language not among
            :data:`~kernelopt.catalog.vocabulary.LANGUAGES`, their aliases and
            :data:`~kernelopt.catalog.vocabulary.DIALECTS`; for a ``shape`` that is not a
            mapping of names to finite numbers of at least 0.
        """
        chain = family_ancestors(self.canonical_family(family))
        scopes = None if language is None else language_scopes(language)

        def depth(entry: Entry) -> int:
            return min(chain.index(f) for f in entry.fundamental_for if f in chain)

        _check_facts(shape, "shape")
        facts = {**family_shape(chain[0]), **family_alias_shape(family), **(shape or {})}
        found = [
            e
            for e in self
            if any(f in chain for f in e.fundamental_for)
            and (scopes is None or e.scope in scopes)
            and not _ruled_out_by(e, facts)
        ]
        return sorted(found, key=lambda e: (depth(e), e.id))


def _ruled_out_by(entry: Entry, shape: Mapping[str, float]) -> bool:
    """Whether every shape condition of ``entry`` fails at ``shape``.

    A condition that reads a fact ``shape`` lacks is undecided, not failed: an entry is
    ruled out only where the facts given say it does not apply, and an entry without shape
    conditions applies at every shape.
    """
    return bool(entry.shape_conditions) and all(
        condition.evaluate(shape) is False for condition in entry.shape_conditions
    )
