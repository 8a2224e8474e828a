"""Ranked queries over catalog entries: which entries apply, and why.

Filters (family, language, kind) keep an entry or drop it; scorers (metrics, shape, free
text) add to its score and say what matched. When any scorer is given, an entry must match
at least one scorer to be returned. Every :class:`Match` carries the reasons behind its
score, so a user (or an agent) can check the catalog's judgement.

Text matching is forgiving about separators: ``split-kv``, ``split kv`` and ``split_kv``
read the same, and a keyword matches only at word boundaries (``exp2`` matches
``tl.exp2(x)`` but ``tf32`` does not match ``tf32x3``).
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property

import attrs

from kernelopt._errors import InputError, expected
from kernelopt._words import count_text
from kernelopt.catalog._fields import to_enum
from kernelopt.catalog.conditions import Condition
from kernelopt.catalog.model import Entry, Kind
from kernelopt.catalog.vocabulary import family_ancestors, language_scopes

__all__ = [
    "Match",
    "metrics_missing",
    "metrics_read",
    "normalize_text",
    "rank",
    "shape_facts_missing",
    "shape_facts_read",
]

_SEPARATORS = re.compile(r"[\s_\-]+")
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be by for from has have in into is it its not of on or per than that "
        "the this to use used uses via was were when where which with without "
        # Two-letter words count (l2, kv, tc, sm name kernel things), so these do not.
        "do if no so up us vs we",
    )
)
# Words of a searched text that say nothing of a technique: an experiment log's own
# layout (a plan's title, "exp 4", a result's verdict) and common words the stop words
# above leave in. A query drops them; an entry's text keeps them, which changes nothing.
_QUERY_NOISE = frozenset(
    re.findall(
        r"\w+",
        "plan plans experiment experiments result results verdict summary notes "
        "hypothesis status kept reverted todo "
        "every each all also then before after again now just more fewer same only once "
        "over other others their them one two",
    )
)
# An experiment reference ("exp 4", "exp_4", "exps 3, 5"): a log's layout, and "exp" alone
# would match every entry on exponentials.
_EXP_REFERENCE = re.compile(r"\bexps? ?\d+(?: ?, ?\d+)*\b")
# An entry found only by words it shares with a query of this many words or more must
# share at least this part of the query's weight (see `_relevance`): a plan shares a few
# common words with most entries, and those matches are noise. One or two words searched
# are all the query has, and an entry sharing one is shown.
_FLOOR_FROM_WORDS = 3
_MIN_RELEVANCE = 0.4
# What a word shared only in another form counts for toward that part (see `_relevance`).
_W_OTHER_FORM = 0.5
# Score weights: a fired trigger or shape condition and a named technique count more than
# a filter; the weak word overlap stays below one strong hit.
_W_TRIGGER = 2.0
_W_EXTRA_COMPARISON = 0.5
_W_SHAPE = 2.0
# A shape condition that holds on every fact given and reads one not given: below a
# condition that holds, above a filter.
_W_SHAPE_PARTIAL = 1.0
_W_KEYWORD = 3.0
_W_EXTRA_KEYWORD = 0.25
_W_WORDS = 1.0
# Where a shared word stands and how often: ranks entries that share as many of the query's
# words. Below _W_WORDS, so one more word shared always counts for more.
_W_PLACEMENT = 0.9
# On an entry named by the text, shared words break ties among entries named as often:
# at most 0.1 * (_W_WORDS + _W_PLACEMENT), below _W_EXTRA_KEYWORD.
_W_NAMED_WORDS = 0.1
_W_FUNDAMENTAL = 1.0
_W_FUNDAMENTAL_TIE = 0.25
_W_LANGUAGE = 0.5
# Metrics that may be +inf: the arithmetic intensity of a call that moves no bytes.
_MAY_BE_INFINITE = frozenset({"arith_intensity"})


def normalize_text(text: str) -> str:
    """Lower-case text and fold runs of spaces, ``_`` and ``-`` into one space.

    Parameters
    ----------
    text : str
        The text to normalize.

    Returns
    -------
    str
        The normalized text, without leading or trailing spaces.

    Raises
    ------
    InputError
        If ``text`` is not a str (bytes too: decode them first).
    """
    if not isinstance(text, str):
        raise InputError(expected("text (a str)", repr(text)[:80], where="text"))
    return _SEPARATORS.sub(" ", text.lower()).strip()


def metrics_read(entries: Iterable[Entry]) -> tuple[str, ...]:
    """Every metric name a metric trigger of ``entries`` reads, sorted.

    A query's metric of another name matches no entry: a misspelt name
    (``dram_throughput_pct`` for ``dram_pct``) or a measurement of your own that no entry
    conditions on. :meth:`Catalog.query <kernelopt.catalog.Catalog.query>` takes such names
    (a profile's whole record may be passed) and answers only from the names it reads, so
    this is how to tell "no entry matched" from "no entry knows this metric".

    Parameters
    ----------
    entries : Iterable[Entry]
        The entries, e.g. a :class:`~kernelopt.catalog.Catalog`.

    Returns
    -------
    tuple of str
        The names, each once, both sides of a comparison (``arith_intensity < ridge``
        reads ``arith_intensity`` and ``ridge``).

    Examples
    --------
    >>> from kernelopt.catalog import Catalog
    >>> sorted({"dram_pct", "dram_throughput_pct"} - set(metrics_read(Catalog.builtin())))
    ['dram_throughput_pct']
    """
    return _names_read(entries, lambda entry: entry.triggers)


def shape_facts_read(entries: Iterable[Entry]) -> tuple[str, ...]:
    """Every shape fact name a shape condition of ``entries`` reads, sorted.

    The shape counterpart of :func:`metrics_read`: a query's shape fact of another name
    matches no entry.

    Parameters
    ----------
    entries : Iterable[Entry]
        The entries, e.g. a :class:`~kernelopt.catalog.Catalog`.

    Returns
    -------
    tuple of str
        The names, each once.
    """
    return _names_read(entries, lambda entry: entry.shape_conditions)


def _names_read(
    entries: Iterable[Entry], conditions_of: Callable[[Entry], tuple[Condition, ...]]
) -> tuple[str, ...]:
    names: set[str] = set()
    for entry in _entries(entries):
        names.update(n for condition in conditions_of(entry) for n in condition.names)
    return tuple(sorted(names))


def _entries(entries: Iterable[Entry]) -> list[Entry]:
    """``entries`` as a list, refused unless every item is an :class:`Entry`."""
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Iterable):
        raise InputError(expected("an iterable of Entry (a Catalog)", repr(entries)[:80]))
    items = list(entries)
    for entry in items:
        if not isinstance(entry, Entry):
            item = f"an item {entry!r}"[:80]
            raise InputError(expected("an iterable of Entry (a Catalog)", item))
    return items


def metrics_missing(
    entries: Iterable[Entry], metrics: Mapping[str, float]
) -> dict[str, tuple[str, ...]]:
    """The metrics that metric triggers reading ``metrics`` also need, and whose.

    A trigger that compares a metric given together with one not given
    (``dram_pct < 60 and tc_pct < 60`` for ``{"dram_pct": 45}``) is neither true nor
    false: :meth:`Catalog.query <kernelopt.catalog.Catalog.query>` does not count it, so
    its entry is missing from the answer, not ruled out. This names what to measure to
    have such triggers judged. A trigger that a given metric already makes false
    (``dram_pct > 60`` at 45) needs nothing more, and one that reads none of the given
    metrics is about another measurement, so neither is listed.

    Parameters
    ----------
    entries : Iterable[Entry]
        The entries to look at, e.g. those a query's filters keep.
    metrics : Mapping[str, float]
        The metrics given, by name.

    Returns
    -------
    dict of str to tuple of str
        Each missing metric, sorted by name, with the ids of the entries (sorted) that
        have a trigger left unjudged for lack of it.

    Examples
    --------
    >>> from kernelopt.catalog import Catalog
    >>> missing = metrics_missing(Catalog.builtin(), {"dram_pct": 45})
    >>> "software-pipelining" in missing["tc_pct"]
    True
    """
    return _names_missing(entries, metrics, lambda entry: entry.triggers)


def shape_facts_missing(
    entries: Iterable[Entry], shape: Mapping[str, float]
) -> dict[str, tuple[str, ...]]:
    """The shape facts that shape conditions reading ``shape`` also need, and whose.

    The shape counterpart of :func:`metrics_missing`: ``m <= 32 and k >= 4096`` for
    ``{"m": 1}`` is judged once ``k`` is given too.

    Parameters
    ----------
    entries : Iterable[Entry]
        The entries to look at, e.g. those a query's filters keep.
    shape : Mapping[str, float]
        The shape facts given, by name.

    Returns
    -------
    dict of str to tuple of str
        Each missing fact, sorted by name, with the ids of the entries (sorted) that have
        a shape condition left unjudged for lack of it.
    """
    return _names_missing(entries, shape, lambda entry: entry.shape_conditions)


def _names_missing(
    entries: Iterable[Entry],
    facts: Mapping[str, float],
    conditions_of: Callable[[Entry], tuple[Condition, ...]],
) -> dict[str, tuple[str, ...]]:
    if not isinstance(facts, Mapping):
        raise InputError(expected("a mapping of names to numbers", repr(facts)[:80]))
    needed: dict[str, set[str]] = {}
    for entry in _entries(entries):
        for condition in conditions_of(entry):
            names = condition.names
            # Undecided (None), and about what was given: the rest is what it lacks.
            if any(n in facts for n in names) and condition.evaluate(facts) is None:
                for name in names:
                    if name not in facts:
                        needed.setdefault(name, set()).add(entry.id)
    return {name: tuple(sorted(ids)) for name, ids in sorted(needed.items())}


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9]){re.escape(normalize_text(phrase))}(?![a-z0-9])")


def _words(text: str) -> set[str]:
    return {_stem(w) for w in _word_list(text)}


def _query_words(text: str) -> dict[str, str]:
    """The words a search looks for in ``text``, each by its stem (:func:`_stem`) with the
    first spelling the text gives it: its words less experiment references and the words
    of :data:`_QUERY_NOISE`."""
    kept = _EXP_REFERENCE.sub(" ", normalize_text(text))
    found: dict[str, str] = {}
    for word in _word_list(kept):
        if word not in _QUERY_NOISE:
            found.setdefault(_stem(word), word)
    return found


# Endings a word sheds so that the forms of one word match: "quantization", "quantize",
# "quantizer" and "quantized" all read as "quantiz". Tried in order, the first that leaves
# a stem of _MIN_STEM letters wins; plurals go first ("quantizers" is "quantizer").
_PLURALS = (("sses", "ss"), ("ies", "y"), ("s", ""))
_ENDINGS = (
    ("ization", "iz"),
    ("izing", "iz"),
    ("izer", "iz"),
    ("ized", "iz"),
    ("ize", "iz"),
    ("ation", "at"),
    ("ating", "at"),
    ("ated", "at"),
    ("ate", "at"),
    ("ing", ""),
    ("ied", "y"),
    ("ed", ""),
    ("e", ""),
)
# A final s that is no plural: "pass", "status", "axis", "bias".
_NOT_PLURAL = ("ss", "us", "is", "as")
_MIN_STEM = 3
_VOWELS = frozenset("aeiouy")


# Every word of every entry is stemmed once a catalog is searched, and a plan's words again
# on each search: the same few thousand words.
@functools.lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    """``word`` without its inflection or a common derivational ending, so that a search
    for one form finds the others (``"tiles"``, ``"tiled"`` and ``"tiling"`` are ``"til"``).

    Words with a digit (``fp8``, ``l2``, ``float8e4nv``) and words of three letters or
    fewer are names, kept as they are. The stem is only compared, never shown.
    """
    if len(word) <= _MIN_STEM or not word.isalpha():
        return word
    if not word.endswith(_NOT_PLURAL):
        word = _strip(word, _PLURALS)
    stripped = _strip(word, _ENDINGS)
    # "padded" and "padding" are "pad": a consonant doubled before the ending goes (but
    # "fill" and "spill" keep their ll).
    if (
        stripped != word
        and word.endswith(("ing", "ed"))
        and len(stripped) > _MIN_STEM
        and stripped[-1] == stripped[-2]
        and stripped[-1] not in "lsz"
    ):
        stripped = stripped[:-1]
    return stripped


def _strip(word: str, endings: tuple[tuple[str, str], ...]) -> str:
    for ending, replacement in endings:
        stem = word[: -len(ending)]
        # A stem of consonants alone ("str" of "string") is no word: keep the word.
        if word.endswith(ending) and len(stem) >= _MIN_STEM and _VOWELS & set(stem):
            return stem + replacement
    return word


def _word_weights(items: Iterable[_Searchable], words: set[str]) -> dict[str, float]:
    """How much each query word tells entries apart: less the more entries use it (an
    inverse document frequency), most for a word no entry uses."""
    items = list(items)
    count = Counter(w for item in items for w in words & item.words)
    return {w: math.log((len(items) + 1) / (count[w] + 0.5)) for w in words}


def _relevance(
    item: _Searchable, query_words: Mapping[str, str], weights: Mapping[str, float]
) -> float:
    """The part of the query's weight that the words ``item`` shares with it carry, in
    [0, 1]. A word the entry writes only in another form ("quantizer" for the query's
    "quantization") carries half its weight: the same spelling is surer evidence, and a
    long plan shares some form of many common words with most entries."""
    total = sum(weights.values())
    if total <= 0:
        return 1.0
    shared = query_words.keys() & item.words
    return (
        sum(weights[w] * (1.0 if query_words[w] in item.spelled else _W_OTHER_FORM) for w in shared)
        / total
    )


def _word_list(text: str) -> list[str]:
    """The words of ``text`` a search looks for, in order and with repeats."""
    return [w for w in _WORD.findall(normalize_text(text)) if _counts(w) and w not in _STOPWORDS]


def _counts(word: str) -> bool:
    # A two-letter word such as l2 or kv names a kernel thing; a two-digit number such as
    # the 16 of "num_splits=16" would match every entry quoting a size, so it does not.
    return len(word) > 2 or (len(word) == 2 and not word.isdigit())


@attrs.frozen(kw_only=True)
class Match:
    """One entry a query returned, its score and the reasons for it.

    Parameters
    ----------
    entry : Entry
        The matching entry.
    score : float
        Higher is a better match; only the order among one query's results is meaningful.
    reasons : tuple of str
        What matched, in words (``"metric dram_pct > 60 (dram_pct=85)"``).
    """

    entry: Entry
    score: float
    reasons: tuple[str, ...]

    @property
    def id(self) -> str:
        """The id of the matching entry."""
        return self.entry.id

    def to_dict(self) -> dict[str, object]:
        """Plain data for ``--json`` output."""
        return {
            "id": self.entry.id,
            "name": self.entry.name,
            "kind": self.entry.kind.value,
            "scope": self.entry.scope,
            "score": round(self.score, 4),
            "reasons": list(self.reasons),
        }


# Where a word of an entry stands, from the strongest place: the higher the place, the
# more the entry is about the word.
_PLACES = ("in its text only", "in When to Apply", "in its name or keywords")

# How many shared words a reason names; it counts the rest.
_SHOWN_WORDS = 8


class _Searchable:
    """Precomputed text forms of one entry (built once per catalog, on first text query)."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry

    @cached_property
    def phrases(self) -> tuple[tuple[str, re.Pattern[str]], ...]:
        # Spellings that normalize alike ("split-kv", "split kv") are one phrase.
        by_form: dict[str, str] = {}
        for name in (self.entry.id, self.entry.name, *self.entry.keywords):
            by_form.setdefault(normalize_text(name), name)
        return tuple((n, _phrase_pattern(n)) for form, n in by_form.items() if form)

    @cached_property
    def mentions(self) -> Counter[str]:
        """How often each word stands in the searched text (names, When to Apply, prose),
        counted by stem: "quantizer" and "quantized" are two mentions of one word."""
        return Counter(_stem(w) for w in self.spellings)

    @cached_property
    def spellings(self) -> list[str]:
        """The searched words of the text as written, in order and with repeats."""
        e = self.entry
        parts = [
            e.name,
            e.id,
            *e.keywords,
            *e.contexts,
            *e.affected_metrics,
            e.mechanism,
            e.generalization,
            *e.pitfalls,
            *e.interaction_notes,
        ]
        return _word_list(" ".join(parts))

    @cached_property
    def spelled(self) -> set[str]:
        return set(self.spellings)

    @cached_property
    def words(self) -> set[str]:
        return set(self.mentions)

    def spelling(self, stem: str) -> str:
        """The text's most frequent spelling of the words of ``stem`` (first seen on a tie)."""
        counts = Counter(w for w in self.spellings if _stem(w) == stem)
        return counts.most_common(1)[0][0] if counts else stem

    @cached_property
    def title_words(self) -> set[str]:
        return _words(" ".join((self.entry.id, self.entry.name, *self.entry.keywords)))

    @cached_property
    def when_words(self) -> set[str]:
        return _words(" ".join(self.entry.contexts))

    def place(self, word: str) -> int:
        """The index in :data:`_PLACES` of the strongest place ``word`` stands in."""
        if word in self.title_words:
            return 2
        return 1 if word in self.when_words else 0

    def strong(self, text: str) -> list[str]:
        """The id, name and keywords found in ``text`` (already normalized)."""
        return [name for name, pattern in self.phrases if pattern.search(text)]


def _shared_words(item: _Searchable, query_words: Mapping[str, str]) -> tuple[float, str] | None:
    """Score an entry by the query's words it shares, and say where they stand.

    The share of the query's words found decides first, so a multi-word query still puts
    the entries sharing most of its words first. Among entries sharing as many, a word in
    the name or keywords outranks one in When to Apply, which outranks one only in the
    prose, and then more mentions outrank fewer: a one-word query ranks the entries about
    the word before those that mention it in passing, and not by id.

    Returns
    -------
    tuple of (float, str) or None
        The score, below ``_W_WORDS + _W_PLACEMENT``, and the reason
        (``"mentions softmax (in its name or keywords; 12 times in all)"``); ``None`` when no
        word is shared.
    """
    common = sorted(query_words.keys() & item.words)
    if not common:
        return None
    placements = []
    found = []
    for word in common:
        place, count = item.place(word), item.mentions[word]
        # In [0, 1): the place decides, the count (saturating) orders within one place.
        placements.append((place + count / (count + 1)) / len(_PLACES))
        found.append((_as_written(query_words[word], item), place, count))
    placement = sum(placements) / len(placements)
    score = (_W_WORDS * len(common) + _W_PLACEMENT * placement) / len(query_words)
    # The words that say most about the entry first, and only so many: a searched file
    # (a plan) shares dozens of common words with an entry, which would bury these.
    found.sort(key=lambda item: (-item[1], -item[2], item[0][0]))
    shown = [
        f"{word[0]} ({word[1]}{_PLACES[place]}; {count_text(count, 'time')} in all)"
        for word, place, count in found[:_SHOWN_WORDS]
    ]
    if len(found) > _SHOWN_WORDS:
        shown.append(f"and {count_text(len(found) - _SHOWN_WORDS, 'more word')}")
    return score, "mentions " + ", ".join(shown)


def _as_written(query_word: str, item: _Searchable) -> tuple[str, str]:
    """A shared word as the query wrote it, and ``"as quantizer, "`` where the entry
    never writes it so (only another form of it), else ``""``."""
    if query_word in item.spelled:
        return query_word, ""
    return query_word, f"as {item.spelling(_stem(query_word))}, "


def _conditions(
    kind: str, conditions: Iterable[Condition], facts: Mapping[str, float]
) -> tuple[float, list[str]]:
    score, reasons = 0.0, []
    partly = False
    weight = _W_TRIGGER if kind == "metric" else _W_SHAPE
    for condition in conditions:
        note = f" — {condition.note}" if condition.note else ""
        verdict = condition.evaluate(facts)
        if verdict is True:
            score += weight + _W_EXTRA_COMPARISON * (len(condition.comparisons) - 1)
            reasons.append(f"{kind} {condition.describe(facts)}{note}")
        elif verdict is None and kind == "shape":
            partial = _partly_held(condition, facts)
            if partial is not None:
                # Once an entry: two conditions each waiting on a fact are no surer a match.
                score += 0.0 if partly else _W_SHAPE_PARTIAL
                partly = True
                reasons.append(f"{kind} {partial}{note}")
    return score, reasons


def _partly_held(condition: Condition, facts: Mapping[str, float]) -> str | None:
    """The reason of a shape condition whose comparisons on the facts given all hold while
    others read a fact not given, or None.

    A GEMV-shaped GEMM (``m = 1``) is what split-K is for before its K is known: the entry
    is shown as a partial match naming the fact that would settle it, not left out as if
    nothing applied. A metric condition stays unjudged: a measurement given alone
    (``dram_pct``) says little until the one it is paired with is measured.
    """
    held = [c for c in condition.comparisons if c.evaluate(facts) is True]
    open_ = [c for c in condition.comparisons if c.evaluate(facts) is None]
    if not held or not open_:
        return None
    missing = list(dict.fromkeys(n for c in open_ for n in c.names if n not in facts))
    return (
        " and ".join(c.describe(facts) for c in held)
        + f" held; {' and '.join(str(c) for c in open_)} not judged without "
        + ", ".join(missing)
        + " (a partial match)"
    )


def _family(entry: Entry, family: str, *, scored: bool) -> tuple[float, list[str]] | None:
    chain = family_ancestors(family)
    listed = [i for i, f in enumerate(chain) if f in entry.families]
    fundamental = [i for i, f in enumerate(chain) if f in entry.fundamental_for]
    if not listed and not fundamental:
        return None
    score, reasons = 0.0, []
    if listed:
        i = listed[0]
        score += (len(chain) - i) / len(chain)
        via = "" if i == 0 else f" (via {chain[i]})"
        reasons.append(f"applies to {chain[0]}{via}")
    if fundamental:
        i = fundamental[0]
        # Browsing a family puts its standard techniques first; when metrics, shapes or
        # text are given, what matched them decides the order and this only breaks ties.
        score += _W_FUNDAMENTAL_TIE if scored else _W_FUNDAMENTAL
        via = "" if i == 0 else f" (via {chain[i]})"
        reasons.append(f"fundamental for {chain[0]}{via}")
    return score, reasons


def rank(
    searchables: Iterable[_Searchable],
    *,
    family: str | None = None,
    language: str | None = None,
    kind: Kind | str | None = None,
    metrics: Mapping[str, float] | None = None,
    shape: Mapping[str, float] | None = None,
    keyword: str | None = None,
    strong_only: bool = False,
) -> list[Match]:
    """Filter and score entries; see :meth:`kernelopt.catalog.Catalog.query`."""
    _check_facts(metrics, "metrics")
    _check_facts(shape, "shape")
    for name, value in (("family", family), ("keyword", keyword)):
        if value is not None and not isinstance(value, str):
            raise InputError(expected("a str", repr(value), where=name))
    scopes = None if language is None else language_scopes(language)
    want_kind = None if kind is None else _kind(kind)
    text = None if keyword is None else normalize_text(keyword)
    query_words = {} if keyword is None else _query_words(keyword)
    items = tuple(searchables)
    floor = len(query_words) >= _FLOOR_FROM_WORDS and not strong_only
    weights = _word_weights(items, set(query_words)) if floor else {}
    if (
        keyword is not None
        and text is not None
        and not strong_only
        and not query_words
        and not any(item.strong(text) for item in items)
    ):
        # Blank text, punctuation or only stop words match nothing (save a name such as
        # "s_q=1"): an empty answer would read as "no entry is about this".
        raise InputError(
            expected(
                "a keyword with a word to look for or an entry's id, name or keyword "
                "(not only stop words, single letters, numbers under 100 or punctuation)",
                repr(keyword[:60]),
                where="keyword",
            )
        )
    scored = metrics is not None or shape is not None or keyword is not None
    out = []
    for item in items:
        entry = item.entry
        if want_kind is not None and entry.kind is not want_kind:
            continue
        score, reasons = 0.0, []
        if want_kind is not None:
            # A filter keeps an entry for a reason too: a browse by kind or language alone
            # would otherwise return entries that say nothing of why they are there.
            reasons.append(f"kind {want_kind.value}")
        if family is not None:
            found = _family(entry, family, scored=scored)
            if found is None:
                continue
            score += found[0]
            reasons += found[1]
        if scopes is not None:
            if entry.scope not in scopes:
                continue
            reason = _language_reason(entry.scope, scopes)
            if entry.scope != "shared":
                score += _W_LANGUAGE
            reasons.append(reason)
        hit = 0.0
        if metrics is not None:
            s, r = _conditions("metric", entry.triggers, metrics)
            hit, reasons = hit + s, reasons + r
        if shape is not None:
            s, r = _conditions("shape", entry.shape_conditions, shape)
            hit, reasons = hit + s, reasons + r
        if text is not None:
            names = item.strong(text)
            shared = None if strong_only else _shared_words(item, query_words)
            if names:
                hit += _W_KEYWORD + _W_EXTRA_KEYWORD * (len(names) - 1)
                reasons.append("names " + ", ".join(repr(n) for n in names))
                if shared is not None:
                    hit += _W_NAMED_WORDS * shared[0]
                    reasons.append(shared[1])
            elif shared is not None and (
                not floor or _relevance(item, query_words, weights) >= _MIN_RELEVANCE
            ):
                hit += shared[0]
                reasons.append(shared[1])
        if scored and hit == 0.0:
            continue
        out.append(Match(entry=entry, score=score + hit, reasons=tuple(reasons)))
    out.sort(key=lambda m: (-m.score, m.entry.id))
    return out


def under_floor(
    searchables: Iterable[_Searchable], keyword: str, *, kind: Kind | str | None = None
) -> list[str]:
    """The ids of the entries that share a word with ``keyword`` but too small a part of
    its weight to be shown (see :data:`_MIN_RELEVANCE`), the largest part first; empty
    for a text of fewer than :data:`_FLOOR_FROM_WORDS` words, which has no floor.

    An entry named by the text is always shown, so it is never among them.
    """
    query_words = _query_words(keyword)
    if len(query_words) < _FLOOR_FROM_WORDS:
        return []
    want_kind = None if kind is None else _kind(kind)
    items = tuple(searchables)
    weights = _word_weights(items, set(query_words))
    text = normalize_text(keyword)
    below = [
        (_relevance(item, query_words, weights), item.entry.id)
        for item in items
        if (want_kind is None or item.entry.kind is want_kind)
        and query_words.keys() & item.words
        and not item.strong(text)
    ]
    return [
        i
        for relevance, i in sorted(below, key=lambda b: (-b[0], b[1]))
        if relevance < _MIN_RELEVANCE
    ]


def _language_reason(scope: str, scopes: tuple[str, ...]) -> str:
    """Why an entry of ``scope`` is kept for a query whose language keeps ``scopes``."""
    language = scopes[0]
    if scope == language:
        return f"specific to {language}"
    if scope == "shared":
        return f"shared by every language, {language} included"
    # A dialect's query keeps the entries of the language it is written in.
    return f"specific to {scope}, which {language} is written in"


def _check_facts(facts: Mapping[str, float] | None, where: str) -> None:
    """Reject what conditions cannot compare, before an entry is scored on half of it."""
    if facts is None:
        return
    if not isinstance(facts, Mapping):
        raise InputError(expected("a mapping of names to numbers", repr(facts), where=where))
    for name, value in facts.items():
        if not isinstance(name, str):
            raise InputError(expected("a name (str)", repr(name), where=where))
        # Real, not int | float: values read off arrays are numpy scalars (np.float32 of
        # a metric, np.int64 of a shape), numbers all the same.
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise InputError(expected("a number", repr(value), where=f"{where}[{name!r}]"))
        try:
            number = float(value)  # conditions compare floats; an int past 1.8e308 has none
        except OverflowError:
            shown = f"{str(value)[:12]}... ({len(str(abs(value)))} digits)"
            raise InputError(
                expected("a number a float can hold", shown, where=f"{where}[{name!r}]")
            ) from None
        # NaN compares false with everything, so the query would answer "nothing applies",
        # and no measurement or shape is infinite: an infinite dram_pct would fire every
        # "greater than" trigger. The one exception is a call that moves no bytes, whose
        # arithmetic intensity is +inf (Cost.arith_intensity): it lies above any ridge.
        if not math.isfinite(number) and not (
            where == "metrics" and name in _MAY_BE_INFINITE and number == math.inf
        ):
            raise InputError(expected("a finite number", repr(value), where=f"{where}[{name!r}]"))
        # Every shape fact is a size, a count or a share: a negative one is a slip that
        # would fail every condition and answer "nothing applies", as the CLI refuses it.
        if where == "shape" and number < 0:
            raise InputError(expected("a number >= 0", repr(value), where=f"{where}[{name!r}]"))


def _kind(value: Kind | str) -> Kind:
    try:
        return to_enum(Kind, value, "kind")  # in any case, as a language is
    except InputError:
        raise InputError(
            expected("kind 'optimization' or 'anti-pattern'", repr(value), where="kind")
        ) from None
