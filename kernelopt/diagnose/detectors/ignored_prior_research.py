"""7. Ignored prior research: recommendations in earlier plans never acted on.

Recommendations come from plans (``exp_N/plan.md``), "Next steps"/"Future directions"
sections and lead lines, and advice sentences in conclusions; a plan kernelopt wrote is
not read for them (its actions come from these checks, which run again on the log as it
is now). A note outside any experiment folder cannot be placed among the attempts: all of
the log's attempts count as later, and the finding says so rather than "N+ that followed".
A later experiment acts on a recommendation when it names the same catalog entry or
shares ``min_overlap`` of its distinctive terms. A later experiment's plan or result that
quotes the recommendation's words answers it too: that is how a log records why an idea
was not taken up ("Try it, or record why not"). The plan of an experiment not yet run
takes it up only in a plan, whether by its terms or by a quote, and the check says so; a
plan kernelopt wrote, kept as an experiment's plan.md, quotes what it found ignored and
answers nothing. A quote is 24 characters of it in a row or more (a phrase naming the
idea, or the whole text), compared in lower case with one space between words and no
markdown emphasis. The recommendations a note makes are cut out of it first: a later note
that repeats the recommendation (or makes a longer one holding its words) advises it again
and does not answer it; its other prose ("We did not try '…' because …") still does. A note
that lists the same option under a heading or lead line declining it or scoping it out
(``ExperimentLog.declined``: "Rejected ideas", "Not in kernel.cl scope"), written after or
beside the recommendation, answers it as well (:func:`declined_by`): the check names the
note's lines instead of reporting it. A recommendation followed by
``min_later_experiments`` attempts, none acting on it, was ignored; one repeated in
several places weighs more: its copies are reported once, as one idea recommended that
many times.

profile.md's ``Top 3 Opportunities`` (``ProfileFacts.opportunities``) is judged as one
ranked list of alternatives: it stands after the experiment the profile followed, and it
was ignored when ``min_later_experiments`` attempts after it try none of its items by the
same matching (an attempt tagged with an item's entry id tries it), no later note quotes
one and the kernel shows none. The finding then names it first, with its lines and entry
ids, and proposes each item with its catalog entry. A profile that names no experiment, or
one written after the experiments read under ``until``, is not judged.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Iterable

import attrs

from kernelopt._errors import FormatError, InputError
from kernelopt._fileio import read_text
from kernelopt._words import and_list, count_text
from kernelopt.diagnose.context import Context, experiments_text, quote, salient_terms
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.floors import result_rows
from kernelopt.diagnose.model import Action, Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import IgnoredPriorResearchParams
from kernelopt.diagnose.presence import present_in
from kernelopt.experiments.log import DeclinedOption, Experiment, Recommendation
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._kinds import is_plan_output

__all__ = [
    "acted_on",
    "declined_by",
    "detect",
    "experiment_terms",
    "group_repeats",
    "is_chore",
    "shares_quote",
]

_PATHOLOGY = Pathology.IGNORED_PRIOR_RESEARCH
# Statements about the work rather than recommendations ("Both are multi-session efforts").
_NOT_ADVICE = re.compile(
    r"^(?:both|this|that|these|those|it|they|there|which|here)\b", re.IGNORECASE
)
# Runs of what exists ("A benchmark run of the tree", "The full GPU suite on …", "Re-run the
# tests"): chores a log records in its tables, not ideas a later experiment would try.
_CHORE = re.compile(
    r"^(?:(?:an?|the)\s+)?(?:(?:full|final|new|fresh|complete)\s+)*"
    r"(?:(?:gpu\s+)?(?:benchmark|test)s?\s+(?:run|runs|suite|pass)|(?:gpu\s+|test\s+)?suite)\b"
    r"|^(?:re-?run|run)\s+(?:the\s+)?(?:(?:full|final|gpu)\s+)*"
    r"(?:benchmarks?|tests?|test\s+suite|suite)\b",
    re.IGNORECASE,
)


def is_chore(text: str) -> bool:
    """Whether a recommendation asks for a benchmark or test run rather than a change."""
    return bool(_CHORE.match(text.strip()))


# "**Bypass TVM FFI**: Save ~10-15us/call ... Risk: ..." names its idea before the colon
# or dash; the rest (gains, risks, caveats) is commentary no experiment title repeats.
_IDEA_HEAD = re.compile(r"^\s*(.{3,80}?)\s*(?::\s|\s[—–]\s|\s-\s)")
# How much of a text can hold its idea's head: four characters of its leading spaces (the
# shortest head, three characters, and the space of " - " may take them), 80 of the head,
# and the spaces before the colon or dash. Matching the whole text tried each of its
# leading spaces with each head length against the rest of it: cubic in a run of spaces.
_HEAD_REACH = 400


def _head_window(text: str) -> str:
    lead = len(text) - len(text.lstrip())
    start = max(0, lead - 4)
    return text[start : start + _HEAD_REACH]


def _terms(text: str) -> set[str]:
    """Distinctive terms of a recommendation: those of its named idea when it leads with
    one (``Idea: why``), else those of the whole text."""
    head = _IDEA_HEAD.match(_head_window(text))
    if head is not None:
        named = salient_terms(head.group(1))
        if named:
            return named
    return salient_terms(text)


def experiment_terms(experiment: Experiment) -> set[str]:
    """The distinctive terms of what an experiment tried (its title and change text)."""
    # All of it, not a leading "idea" head: in "layout tweak XOR-swizzled ... for the K
    # tile: bank conflicts gone." the words after the colon are the change too.
    return salient_terms(experiment.description + " " + experiment.text[:1500])


def acted_on(
    recommendation: Recommendation,
    experiment: Experiment,
    terms: set[str],
    min_overlap: float,
    words: set[str] | None = None,
) -> bool:
    """Whether ``experiment`` tries what ``recommendation`` (with distinctive ``terms``) says;
    ``words`` are the experiment's terms when already computed."""
    if set(recommendation.catalog_ids) & set(experiment.tags):
        return True
    if not terms:
        return False
    shared = terms & (words if words is not None else experiment_terms(experiment))
    needed = max(1 if len(terms) <= 2 else 2, round(min_overlap * len(terms) + 0.49))
    return len(shared) >= needed


# A technique's name as logs write it: a hyphenated compound ("double-buffering", "DMA-BUF",
# "zero-copy") or a camel-case identifier ("clFinish", "cudaGraph").
_COMPOUND = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+(?![\w-])")
_CAMEL = re.compile(r"(?<![\w-])[a-z]+[A-Z][A-Za-z0-9]*(?![\w-])")
# Compounds that say where or how, not what ("host-side", "kernel-level", "memory-bound"):
# two recommendations sharing one may still name different ideas.
_QUALIFIER_ENDS = frozenset(
    {"side", "level", "based", "wise", "bound", "only", "specific", "aware", "like", "time"}
    | {"grained", "scale", "term", "case"}
)


@functools.lru_cache(maxsize=4096)
def _technique_terms(text: str) -> frozenset[str]:
    """The technique names in ``text``, lower-cased and without hyphens ("DMA-BUF" and
    "dmabuf" are one name), less the compounds that only qualify ("host-side")."""
    names = {
        match.group(0)
        for match in _COMPOUND.finditer(text)
        if match.group(0).rsplit("-", 1)[-1].lower() not in _QUALIFIER_ENDS
    }
    names |= {match.group(0) for match in _CAMEL.finditer(text)}
    return frozenset(name.replace("-", "").lower() for name in names)


# Four-letter words name an idea's action or part ("fuse gate kernel ...", "drop sync"),
# which the longer distinctive terms miss; these say nothing of which idea it is.
_SHORT_WORD = re.compile(r"(?<![\w-])[A-Za-z]{4}(?![\w-])")
_SHORT_FILLER = frozenset(
    {
        "also",
        "back",
        "been",
        "both",
        "call",
        "case",
        "code",
        "cost",
        "does",
        "done",
        "down",
        "each",
        "else",
        "even",
        "ever",
        "from",
        "full",
        "gain",
        "give",
        "half",
        "have",
        "help",
        "here",
        "high",
        "hide",
        "into",
        "just",
        "keep",
        "last",
        "less",
        "like",
        "make",
        "many",
        "more",
        "most",
        "much",
        "need",
        "none",
        "only",
        "over",
        "part",
        "path",
        "plus",
        "real",
        "risk",
        "runs",
        "same",
        "save",
        "size",
        "some",
        "such",
        "take",
        "than",
        "that",
        "them",
        "then",
        "they",
        "this",
        "time",
        "true",
        "used",
        "uses",
        "very",
        "were",
        "what",
        "when",
        "will",
        "with",
        "work",
    }
)
# A parenthesis holds a caveat or a shape ("(unclear if compatible with TVM FFI)",
# "(T=128-2048)"), not the idea.
_PARENTHESIS = re.compile(r"\([^()]*\)")


# Each declined option is compared with every recommendation: its terms are found once.
@functools.lru_cache(maxsize=4096)
def _idea_terms(text: str) -> frozenset[str]:
    """The technique names and distinctive words of the idea ``text`` names, parentheses
    left out: its head when it leads with one that names anything ("Double-buffering:
    overlap upload ..."), else the whole text ("Host-side: double-buffering to hide upload
    latency" names no idea before its colon)."""
    plain = _PARENTHESIS.sub(" ", text)
    head = _IDEA_HEAD.match(_head_window(plain))
    for part in (head.group(1), plain) if head is not None else (plain,):
        techniques = _technique_terms(part)
        words = {
            word.replace("-", "")
            for word in salient_terms(part)
            if word.rsplit("-", 1)[-1] not in _QUALIFIER_ENDS
        }
        words |= {w.lower() for w in _SHORT_WORD.findall(part)} - _SHORT_FILLER
        if techniques or words:
            return techniques | words
    return frozenset()


def declined_by(
    recommendation: Recommendation, options: Iterable[DeclinedOption]
) -> DeclinedOption | None:
    """The first of ``options`` (a note's declined or out-of-scope options) that declines
    ``recommendation``, or None.

    An option declines it when written after or beside it (:func:`_placed_after`) and
    naming the same idea: a quote of ``_MIN_QUOTE`` characters of one in the other, or
    the option's idea (:func:`_idea_terms`: its head, "Double-buffering" of
    "Double-buffering: overlap upload with compute") sharing half its terms or more with
    the recommendation's idea, among them a technique name ("double-buffering",
    "DMA-BUF") or two words. A name of the setting both speak of ("CuTe-DSL" in "Fuse gate
    kernel into CuTe-DSL gb_warp") is one of three terms there, too few; the words of a
    reason ("to hide upload latency") or a caveat in parentheses count for neither.

    Parameters
    ----------
    recommendation : Recommendation
        A recommendation of the log.
    options : iterable of DeclinedOption
        The options the log's notes decline (:attr:`ExperimentLog.declined`).

    Returns
    -------
    DeclinedOption or None
        The first option, in the order given, that declines it.
    """
    idea = _idea_terms(recommendation.text)
    techniques = _technique_terms(_PARENTHESIS.sub(" ", recommendation.text))
    normal = _normalized(recommendation.text)
    for option in options:
        if option.source == recommendation.source or not _placed_after(option, recommendation):
            continue
        named = _idea_terms(option.text)
        shared = idea & named
        # A name written as a technique on either side ("DMA-BUF" there, "dmabuf" here).
        either = techniques | _technique_terms(_PARENTHESIS.sub(" ", option.text))
        if (
            shared and 2 * len(shared) >= len(named) and (shared & either or len(shared) >= 2)
        ) or shares_quote(normal, _normalized(option.text)):
            return option
    return None


def _placed_after(option: DeclinedOption, recommendation: Recommendation) -> bool:
    """Whether ``option`` was written after or beside ``recommendation``: a note outside
    any experiment folder, or the recommendation's, cannot be placed before the other."""
    if option.experiment is None or recommendation.experiment is None:
        return True
    return option.experiment >= recommendation.experiment


_Ignored = tuple[Recommendation, list[Experiment]]

# A quote must be long enough to name an idea rather than match by chance.
_MIN_QUOTE = 24
# The plans and results a quote is looked for in are short notes: a larger file is not one.
_MAX_NOTE_BYTES = 2 * 1024 * 1024
# A file of an experiment's own folder: a shared one (summary, lessons) quotes everything.
_EXPERIMENT_FILE = re.compile(r"(?:^|/)exp_\d+/.*\.md$")
# The files an experiment folder holds from before the experiment runs.
_BEFORE_RUN = frozenset({"plan", "hypothesis"})
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def shares_quote(words: str, text: str, size: int = _MIN_QUOTE) -> bool:
    """Whether ``text`` holds ``size`` or more characters of ``words`` in a row.

    Both are compared as given (normalize them first). Any run of ``size`` characters of
    ``words`` holds one of its chunks of ``size // 2`` characters taken from the start on,
    so only the places in ``text`` where such a chunk occurs are extended to both sides: a
    few scans of ``text`` per recommendation, however long the notes.

    Parameters
    ----------
    words : str
        The text quoted from (a recommendation).
    text : str
        The text that may quote it (later plans and results).
    size : int, optional
        The shortest run of characters that counts as a quote.

    Returns
    -------
    bool
        True when a run of at least ``size`` characters of ``words`` appears in ``text``.
    """
    if size <= 0 or len(words) < size:
        return False
    step = max(1, size // 2)
    for start in range(0, len(words) - step + 1, step):
        chunk = words[start : start + step]
        rest = len(words) - start - step
        at = text.find(chunk)
        while at != -1:
            end = at + step
            after = _common_length(words[start + step :], text[end : end + rest])
            reach = size - step - after  # characters still needed before the chunk
            if reach <= 0:
                return True
            before = _common_length(
                words[max(0, start - reach) : start][::-1], text[max(0, at - reach) : at][::-1]
            )
            if before >= reach:
                return True
            at = text.find(chunk, at + 1)
    return False


def _common_length(first: str, second: str) -> int:
    """How many leading characters ``first`` and ``second`` share."""
    for index, (one, other) in enumerate(zip(first, second, strict=False)):
        if one != other:
            return index
    return min(len(first), len(second))


def _normalized(text: str) -> str:
    """``text`` as quotes are compared: straight quotes, no markdown emphasis or code
    ticks, one space between words, lower case."""
    return re.sub(r"\s+", " ", re.sub(r"[*_`]", "", text.translate(_CURLY))).strip().lower()


# A markdown link, as the log's reader drops it from a recommendation's text (its words stay).
_LINK = re.compile(r"\[([^\[\]]*)\]\([^)\[]*\)")


def _normalized_lines(text: str) -> tuple[str, list[int]]:
    """``_normalized(text)`` and where each of its lines (split at ``\\n``, as the log's
    reader numbers them) starts there."""
    parts: list[str] = []
    starts: list[int] = []
    size = 0
    for line in text.split("\n"):
        # Spaces collapse across a line end as within a line: normalizing line by line
        # and joining with one space gives the text ``_normalized`` gives.
        starts.append(size + (1 if parts else 0))
        part = _normalized(line)
        if part:
            size += len(part) + (1 if parts else 0)
            parts.append(part)
    return " ".join(parts), starts


def _without_links(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` with its markdown links reduced to their words, and the pieces it is made
    of: where each starts there (sorted) and where it starts in ``text``."""
    pieces: list[str] = []
    plain_starts: list[int] = []
    text_starts: list[int] = []
    size = 0
    last = 0
    for link in _LINK.finditer(text):
        for piece, at in ((text[last : link.start()], last), (link.group(1), link.start(1))):
            plain_starts.append(size)
            text_starts.append(at)
            pieces.append(piece)
            size += len(piece)
        last = link.end()
    plain_starts.append(size)
    text_starts.append(last)
    pieces.append(text[last:])
    return "".join(pieces), plain_starts, text_starts


def _moved(at: int, starts: list[int], onto: list[int]) -> int:
    """Offset ``at`` of a text made of pieces starting at ``starts``, in the text whose
    same pieces start at ``onto``."""
    piece = bisect.bisect_right(starts, at) - 1
    moved = onto[piece] + at - starts[piece]
    # An offset inside a link's target, which has no piece, stays at the end of its text.
    return min(moved, onto[piece + 1]) if piece + 1 < len(onto) else moved


def _cut_recommendations(text: str, made: list[Recommendation]) -> str:
    """The normalized ``text`` of a note with the recommendations ``made`` in it cut out.

    A recommendation repeated in a later note, or one that holds it, is that note's advice,
    not an answer to it: only the rest of the note can quote it. Each is looked for from
    the start of its line on (a sentence of a paragraph is placed at the paragraph's first
    line), in the text with links reduced to their words as the recommendation's is; the
    cuts hold a line break, so no quote spans one.
    """
    normal, line_starts = _normalized_lines(text)
    if not made:
        return normal
    plain, plain_starts, normal_starts = _without_links(normal)
    cuts: list[tuple[int, int]] = []
    previous, cursor = -1, 0
    for recommendation in sorted(made, key=lambda r: r.source.line):
        words = _normalized(recommendation.text)
        line = recommendation.source.line
        if not words or not 1 <= line <= len(line_starts):
            continue
        start = _moved(line_starts[line - 1], normal_starts, plain_starts)
        # The sentences of one paragraph share its first line and come in order: each is
        # looked for after the one before, so a long paragraph is scanned once.
        at = plain.find(words, cursor) if line == previous and cursor > start else -1
        if at == -1:
            at = plain.find(words, start)
        if at == -1:
            continue
        previous, cursor = line, at + len(words)
        cuts.append(
            (
                _moved(at, plain_starts, normal_starts),
                _moved(cursor - 1, plain_starts, normal_starts) + 1,
            )
        )
    kept: list[str] = []
    last = 0
    for begin, end in sorted(cuts):
        kept.append(normal[last:begin])
        last = max(last, end)
    kept.append(normal[last:])
    return "\n".join(kept)


def _is_diagnosis(path: str, text: str) -> bool:
    """Whether ``text`` (of ``path``) is a plan ``kernelopt diagnose`` wrote, by the title
    line the log's readers know it by (a byte-order mark and line endings as they read)."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n", 5)
    return is_plan_output(TextFile(path=path, text=text, lines=tuple(lines[:5])))


def _written_before_run(path: str) -> bool:
    """Whether ``path`` is a file an experiment folder holds from before it runs: its
    plan (``plan.md``) or hypothesis (``hypothesis.md``)."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    return stem in _BEFORE_RUN


def _folder_notes(experiment: Experiment, own: str) -> list[str]:
    """The notes of ``experiment`` a quote is looked for in: the files of its own folder,
    less ``own`` (the file the recommendation was made in)."""
    return [
        source.path
        for source in experiment.sources
        if source.path != own and _EXPERIMENT_FILE.search(source.path)
    ]


class _Notes:
    """The normalized text of the experiments' own plans and results, read once each, with
    the log's recommendations made in them cut out.

    Only files of an experiment's folder (``exp_N/…``) that end in ``.md`` are read:
    reading a log never runs it, and a shared file (summary, lessons) quotes everything.
    A plan kernelopt wrote reads as empty: it quotes every recommendation it found ignored,
    in its checklist and evidence, and answers none of them.
    """

    def __init__(self, root: str, recommendations: Iterable[Recommendation] = ()) -> None:
        self._root = root
        self._texts: dict[str, str] = {}
        self._made: dict[str, list[Recommendation]] = {}
        for recommendation in recommendations:
            self._made.setdefault(recommendation.source.path, []).append(recommendation)

    def text(self, path: str) -> str:
        """The normalized text of ``path`` (relative to the root), less the recommendations
        made in it; empty when unreadable or written by ``kernelopt diagnose``."""
        if path not in self._texts:
            full = os.path.join(self._root, path)
            try:
                # A regular file only: a pipe put in a file's place would block the read.
                small = os.path.isfile(full) and os.path.getsize(full) <= _MAX_NOTE_BYTES
                raw = read_text(full) if small else ""
                self._texts[path] = (
                    ""
                    if _is_diagnosis(path, raw)
                    else _cut_recommendations(raw, self._made.get(path, []))
                )
            except (OSError, InputError, FormatError):
                self._texts[path] = ""
        return self._texts[path]

    def _words(self, recommendation: Recommendation) -> str:
        """The recommendation's words as quotes are compared, or ``""`` when they are too
        short to quote (or there are no files to read)."""
        words = _normalized(recommendation.text)
        return words if len(words) >= _MIN_QUOTE and self._root else ""

    def _quotes(self, words: str, paths: Iterable[str]) -> bool:
        # One text for all the notes, searched once: a search per note cost more than the
        # search itself. Normalized text holds no line break, so no quote spans two notes.
        return shares_quote(words, "\n".join(self.text(path) for path in paths))

    def quoted(self, recommendation: Recommendation, experiments: list[Experiment]) -> bool:
        """Whether a plan or result of ``experiments`` other than the recommendation's own
        file quotes its words: ``_MIN_QUOTE`` characters of it in a row or more (a phrase
        naming the idea answers it as well as the whole text), outside the recommendations
        those notes make (a repeat of it is advice again, not an answer).

        The plan or hypothesis of an experiment not yet run does not answer it: it only
        plans to take it up (:meth:`quoting_plans`). That experiment's result or notes,
        written when it was set aside, still do.
        """
        words = self._words(recommendation)
        if not words:
            return False
        own = recommendation.source.path
        return self._quotes(
            words,
            (
                path
                for experiment in experiments
                for path in _folder_notes(experiment, own)
                if experiment.attempted or not _written_before_run(path)
            ),
        )

    def quoting_plans(
        self, recommendation: Recommendation, experiments: list[Experiment]
    ) -> set[int]:
        """The numbers of the experiments of ``experiments`` not yet run whose plan or
        hypothesis quotes the recommendation's words, as :meth:`quoted` compares them."""
        words = self._words(recommendation)
        if not words:
            return set()
        own = recommendation.source.path
        plans = {
            experiment.number: [
                path for path in _folder_notes(experiment, own) if _written_before_run(path)
            ]
            for experiment in experiments
            if not experiment.attempted
        }
        # All the plans at once first: most logs hold none that quotes it, and then one
        # search is all it costs.
        if not self._quotes(words, (path for paths in plans.values() for path in paths)):
            return set()
        return {number for number, paths in plans.items() if paths and self._quotes(words, paths)}


def group_repeats(ignored: list[_Ignored], terms_of: dict[str, set[str]]) -> list[list[_Ignored]]:
    """Group the ignored recommendations that say the same thing, to count repeats.

    An item joins the first group (in the order the groups were made) whose lead shares
    half the smaller term set, and at least two terms, with it; otherwise it leads a new
    group. ``terms_of`` maps a recommendation's text to its distinctive terms.
    """
    # Only a group whose lead shares a term can take an item: an index of the leads' terms
    # keeps this linear where comparing each item with every group was quadratic.
    groups: list[list[_Ignored]] = []
    groups_with: dict[str, list[int]] = {}
    for item in ignored:
        terms = terms_of[item[0].text]
        for index in sorted({i for term in terms for i in groups_with.get(term, ())}):
            lead = terms_of[groups[index][0][0].text]
            if len(terms & lead) >= max(2, min(len(terms), len(lead)) // 2):
                groups[index].append(item)
                break
        else:
            for term in terms:
                groups_with.setdefault(term, []).append(len(groups))
            groups.append([item])
    return groups


def _origins_text(recommendations: list[Recommendation]) -> str:
    """Where the recommendations were made, in words: `` (made after exps 3, 4)`` for a
    result's advice, `` (made in exp 5's plan)`` for a plan's, or ``""`` when none is
    placed."""
    plans = sorted(
        {
            r.experiment
            for r in recommendations
            if r.experiment is not None and r.after <= r.experiment
        }
    )
    results = sorted(
        {
            r.experiment
            for r in recommendations
            if r.experiment is not None and r.after > r.experiment
        }
    )
    parts = [f"made after {experiments_text(results)}"] if results else []
    if len(plans) == 1:
        parts.append(f"made in exp {plans[0]}'s plan")
    elif plans:
        parts.append(f"made in the plans of {experiments_text(plans)}")
    return f" ({'; '.join(parts)})" if parts else ""


def _answered_text(declined: list[DeclinedOption], pending: list[int], checked: int) -> str:
    """How the ``checked`` recommendations were answered, after "was": acted on (some only
    in a plan not yet run), or declined in a note that lists the same option under a
    declining heading, named with its lines."""
    if not declined:
        return "acted on" + _pending_text(pending, checked)
    options = sorted(declined, key=lambda option: option.source)
    headings = and_list(list(dict.fromkeys(_quoted_heading(o) for o in options)))
    where = f"{and_list(list(dict.fromkeys(str(o.source) for o in options)))}, under {headings}"
    if len(declined) == checked:
        return f"declined in a note of the log, not ignored ({where})"
    return (
        "acted on or declined"
        + _pending_text(pending, checked)
        + f"; {len(declined)} of them declined in a note of the log, not ignored ({where})"
    )


def _quoted_heading(option: DeclinedOption) -> str:
    """The heading or lead line that declines ``option``, in quotation marks."""
    return f"\u201c{quote(option.heading, 80)}\u201d"


def _pending_text(pending: list[int], checked: int) -> str:
    """How many of the ``checked`` recommendations only a plan not yet run acts on."""
    if not pending:
        return ""
    plans = sorted(set(pending))
    where = f"{'exp' if len(plans) == 1 else 'exps'} {', '.join(map(str, plans))}"
    if checked == 1:
        return f", in a plan not yet run ({where})"
    return f"; {len(pending)} of them only in a plan not yet run ({where})"


@attrs.frozen(kw_only=True)
class _TopVerdict:
    """How the attempts after the profile took its Top 3 Opportunities.

    ``state`` is ``"undated"`` (the profile names no experiment it followed, nor a version
    an experiment names), ``"version-cut"`` (only a version dates it, under ``until``),
    ``"cut"`` (it followed the experiments read under ``until``), ``"early"`` (fewer
    attempts after it than the check needs), ``"acted"``, ``"planned"`` (only a plan not
    yet run takes an item up) or ``"ignored"``. ``acting`` pairs each item taken up with
    the words that say how: the first attempt that tried it, a later note that quotes it,
    or the kernel's line that already shows it. ``dated_by`` says how a profile dated by
    its ``version`` was placed; ``version`` is that version.
    """

    items: tuple[Recommendation, ...]
    state: str
    attempts: tuple[Experiment, ...] = ()
    acting: tuple[tuple[Recommendation, str], ...] = ()
    planned: int | None = None
    dated_by: str = ""
    version: str = ""
    left_out: str = ""

    @property
    def title(self) -> str:
        """The list's name as the profile's heading gives it: the seed's "Top 3" for up to
        three items, "Top 5" for a profile that ranked five."""
        return f"Top {max(3, len(self.items))}"

    @property
    def path(self) -> str:
        """The profile's path, relative to the log's root."""
        return self.items[0].source.path

    @property
    def followed(self) -> int:
        """The experiment the profile followed (0 when it names none)."""
        return self.items[0].after - 1 if self.items[0].after > 0 else 0

    def lines(self) -> str:
        """Where the items were read: ``experiments/profile.md:9-11``."""
        numbers = sorted(item.source.line for item in self.items)
        span = f"{numbers[0]}-{numbers[-1]}" if numbers[-1] != numbers[0] else f"{numbers[0]}"
        return f"{self.path}:{span}"

    def names(self) -> str:
        """The items by their catalog entry ids (by their names where they give none)."""
        return and_list([_item_label(item) for item in self.items])


def _item_label(item: Recommendation) -> str:
    """``"`kernel-fusion`"``, or the item's quoted name when it names no entry."""
    if item.catalog_ids:
        return ", ".join(f"`{entry}`" for entry in item.catalog_ids)
    return f"\u201c{quote(item.text, 60)}\u201d"


# Measuring techniques a log's results already show done where each row records its
# roofline floor and the ceiling that sets it: no opportunity left to take up.
_RECORDED_BY_FLOORS = frozenset({"roofline-analysis"})


def _recorded_roofline(ctx: Context) -> str:
    """Where the latest result records a roofline floor and its bound on every row
    (``"exp 6: every row's floor and bound (experiments/exp_6/result.md:12)"``), or ``""``
    where a row lacks either."""
    floors = ctx.floors
    if not floors or any(reading.ceiling is None for reading in floors):
        return ""
    first = floors[0]
    return f"{first.experiment.label} records every row's roofline floor and bound ({first.source})"


def _judge_top(
    ctx: Context,
    params: IgnoredPriorResearchParams,
    notes: _Notes,
    words: dict[int, set[str]],
) -> _TopVerdict | None:
    """How the attempts after profile.md took its Top 3, or None when it has none.

    A roofline analysis is left out of the items where the results already record each
    row's floor and bound: the log did it, and a plan that says to try it again asks for
    what the log holds.
    """
    profile = ctx.log.profile
    recorded = _recorded_roofline(ctx)
    kept: list[Recommendation] = []
    dropped: list[Recommendation] = []
    foreign: list[Recommendation] = []
    for item in profile.opportunities if profile is not None else ():
        done = recorded and item.catalog_ids and set(item.catalog_ids) <= _RECORDED_BY_FLOORS
        if done:
            dropped.append(item)
        elif item.catalog_ids and not any(_fits_family(ctx, i) for i in item.catalog_ids):
            foreign.append(item)
        else:
            kept.append(item)
    top = _judge_items(ctx, params, notes, words, tuple(kept))
    if top is None or not (dropped or foreign):
        return top
    reasons = []
    if dropped:
        reasons.append(f"{and_list([_item_label(item) for item in dropped])} left out: {recorded}")
    if foreign:
        # A hand-off that offered another family's entry (an MLA tile load to a sampler)
        # recommended nothing this kernel can take up.
        reasons.append(
            f"{and_list([_item_label(item) for item in foreign])} left out: entries for "
            f"other kernels than the {ctx.family} family"
        )
    return attrs.evolve(top, left_out=f" ({'; '.join(reasons)})")


def _fits_family(ctx: Context, entry_id: str) -> bool:
    """Whether the catalog entry ``entry_id`` is for the kernel's family: one of its
    families is the kernel's, an ancestor's or a descendant's (``any`` fits every kernel).
    True where the kernel's family, the entry or its families are unknown."""
    entry = ctx.entry(entry_id)
    families = tuple(getattr(entry, "families", ()) or ())
    if not ctx.family or not families or "any" in families:
        return True
    from kernelopt.catalog.vocabulary import family_ancestors

    def lineage(family: str) -> tuple[str, ...]:
        try:
            return tuple(family_ancestors(family))
        except Exception:  # a family only a user's entries name
            return (family,)

    mine = lineage(ctx.family)
    return any(f in mine or ctx.family in lineage(f) for f in families)


def _judge_items(
    ctx: Context,
    params: IgnoredPriorResearchParams,
    notes: _Notes,
    words: dict[int, set[str]],
    opportunities: tuple[Recommendation, ...],
) -> _TopVerdict | None:
    """How the attempts after profile.md took the ``opportunities`` of its Top 3, or None
    when none is left.

    The Top 3 is one ranked list of alternatives: an attempt that tries any of its items
    follows it, and it is ignored only when none of the attempts after the profile tries
    any of them (by the matching of :func:`acted_on`) and no later note quotes one.
    """
    profile = ctx.log.profile
    items = tuple(item for item in opportunities if item.catalog_ids or _terms(item.text))
    if not items:
        return None
    dated_by = ""
    # A version of digits only ("5") is no word titles name it by ("5 splits").
    version = profile.version if profile is not None else ""
    version = version if re.search(r"[^\W\d_]", version) else ""
    if items[0].after <= 0 and version:
        if ctx.log.until is not None:
            # The experiments cut may name the version too, later than those kept.
            return _TopVerdict(items=items, state="version-cut", version=version)
        named = _latest_naming(ctx.experiments, version)
        if named is not None:
            items = tuple(attrs.evolve(i, experiment=named, after=named + 1) for i in items)
            dated_by = f", the latest experiment naming {version}"
        else:
            # Titles that do not name the version may still time it: the first experiment
            # whose knobs (``version=v4``) or result rows (impl ``v4``, ``triton_v4``)
            # name it made that version, and a profile of it came after.
            made = _first_timing(ctx, version)
            if made is not None:
                items = tuple(attrs.evolve(i, experiment=made, after=made + 1) for i in items)
                dated_by = f", the first experiment whose knobs or rows name {version}"
    after = items[0].after
    if after <= 0:
        # A profile that names no experiment may have been written after any of them:
        # attempts made before it had no Top 3 to follow.
        return _TopVerdict(items=items, state="undated", version=version)
    if ctx.log.until is not None and after >= ctx.log.until:
        return _TopVerdict(items=items, state="cut")
    later = [e for e in ctx.experiments if e.number >= after]
    attempts = tuple(e for e in later if e.attempted)
    if len(attempts) < params.min_later_experiments:
        return _TopVerdict(items=items, state="early", attempts=attempts, dated_by=dated_by)
    acting: list[tuple[Recommendation, str]] = []
    for item in items:
        how = _taken_up(ctx, item, attempts, later, notes, params.min_overlap, words)
        if how is not None:
            acting.append((item, how))
    if acting:
        return _TopVerdict(
            items=items, state="acted", attempts=attempts, acting=tuple(acting), dated_by=dated_by
        )
    quoting = {number for item in items for number in notes.quoting_plans(item, later)}
    planned = next(
        (
            e.number
            for e in later
            if not e.attempted
            for item in items
            if e.number in quoting
            or acted_on(item, e, _terms(item.text), params.min_overlap, words[e.number])
        ),
        None,
    )
    state = "planned" if planned is not None else "ignored"
    return _TopVerdict(
        items=items, state=state, attempts=attempts, planned=planned, dated_by=dated_by
    )


def _latest_naming(experiments: Iterable[Experiment], version: str) -> int | None:
    """The latest experiment whose title or label names ``version`` as a word (``v2`` in
    "v2: tensor-descriptor key tiles"), or None.

    A profile of that version was written after the version was made; the latest
    experiment naming it is the latest it can be dated by, and dating it later than it was
    written would count fewer attempts after it, never more.
    """
    word = re.compile(rf"(?<![\w.]){re.escape(version)}(?![\w.])", re.IGNORECASE)
    named = [e.number for e in experiments if word.search(e.description) or word.search(e.label)]
    return max(named) if named else None


def _first_timing(ctx: Context, version: str) -> int | None:
    """The first experiment whose knobs (a value ``v4``, as ``version=v4`` sets it) or
    result rows (an implementation ``v4`` or ``triton_v4``) name ``version``, or None.

    The experiment that first times a version made it; a profile of that version was
    written after it."""
    # In an implementation's name, ``_`` and ``-`` part words (``triton_v4``).
    word = re.compile(rf"(?<![A-Za-z0-9.]){re.escape(version)}(?![A-Za-z0-9.])", re.IGNORECASE)
    for experiment in ctx.experiments:
        if any(word.search(str(value)) for value in experiment.knobs.values()):
            return experiment.number
        if any(word.search(row.impl) for row in result_rows(ctx.log.root, experiment)):
            return experiment.number
    return None


def _taken_up(
    ctx: Context,
    item: Recommendation,
    attempts: tuple[Experiment, ...],
    later: list[Experiment],
    notes: _Notes,
    min_overlap: float,
    words: dict[int, set[str]],
) -> str | None:
    """How an item of the Top 3 was taken up, in words, or None when it was not.

    An attempt after the profile that tries it (by :func:`acted_on`), a later note that
    quotes it, or a note that lists it as declined or out of scope (:func:`declined_by`)
    takes it up; so does the kernel when its technique already shows there
    (:func:`~kernelopt.diagnose.presence.present_in`): a profile's triggers read metrics,
    not the source, and may rank what the kernel already does.
    """
    label = _item_label(item)
    terms = _terms(item.text)
    for experiment in attempts:
        if acted_on(item, experiment, terms, min_overlap, words[experiment.number]):
            return f"exp {experiment.number} tried {label}"
    if notes.quoted(item, later):
        return f"a later note quotes {label}"
    option = declined_by(item, ctx.log.declined)
    if option is not None:
        return f"a note declines {label} ({option.source}, under {_quoted_heading(option)})"
    for entry_id in item.catalog_ids:
        entry = ctx.entry(entry_id)
        hit = present_in(entry, ctx.kernels) if entry is not None else None
        if hit is not None:
            return f"the kernel already shows {label} ({hit[0].path}:{hit[1]})"
    return None


def _top_sentence(top: _TopVerdict, params: IgnoredPriorResearchParams) -> str:
    """What the check says of a Top 3 that was not ignored."""
    named = f"The {top.title} Opportunities list of {top.lines()} ({top.names()}{top.left_out}"
    if top.state == "version-cut":
        return (
            f"{named}) is dated only by the version its heading names ({top.version}), which "
            "the experiments left out under until may name later, so it was not judged."
        )
    if top.state == "undated" and top.version:
        return (
            f"{named}) is dated only by the version its heading names ({top.version}), and "
            "no experiment read names it, so it was not judged."
        )
    if top.state == "undated":
        return (
            f"{named}) names no experiment the profile followed, so when it was written is "
            "not known and it was not judged."
        )
    where = f"{named}; written after exp {top.followed}{top.dated_by})"
    if top.state == "cut":
        return f"{where} comes after the experiments read, so it was not judged."
    if top.state == "early":
        return (
            f"{where} has {count_text(len(top.attempts), 'attempt')} after it, fewer than "
            f"{params.min_later_experiments} to judge."
        )
    if top.state == "planned":
        return f"{where} is taken up only in a plan not yet run (exp {top.planned})."
    return f"{where} was acted on: {and_list([how for _item, how in top.acting])}."


def _nothing_recommended(ctx: Context, chores: int) -> Outcome:
    """The check when no recommendation (and no Top 3) could be judged."""
    if chores:
        return not_found(
            _PATHOLOGY,
            f"{count_text(chores, 'recommendation')} found "
            f"{'asks' if chores == 1 else 'ask'} for benchmark or test runs, not "
            "changes to try, so nothing could be ignored.",
        )
    plans = sorted(
        {s.path for e in ctx.experiments for s in e.sources if s.path.endswith("plan.md")}
    )
    if plans:
        # The plans are there; they say what each experiment does, not what to try later.
        return not_found(
            _PATHOLOGY,
            f"{count_text(len(plans), 'plan')} read (exp_N/plan.md); none recommends "
            "anything for later experiments, so nothing could be ignored.",
            [
                "recommendations for later experiments (a 'Next steps' list in a plan or "
                "a result's notes)"
            ],
        )
    return not_found(
        _PATHOLOGY,
        "No plan or research note with recommendations was found, so nothing could be ignored.",
        ["plans (exp_N/plan.md) or result notes with next steps"],
    )


def _chores_text(chores: int) -> str:
    """The sentence on the recommendations that ask for runs, not changes."""
    if not chores:
        return ""
    return (
        f" {chores} more {'asks' if chores == 1 else 'ask'} for benchmark or test runs, not judged."
    )


_UNDATED_PROFILE = (
    "the experiment profile.md followed, in its heading (## Profile: name exp N | point)"
)


def detect(ctx: Context, params: IgnoredPriorResearchParams) -> Outcome:
    """Report recommendations, and a Top 3 of profile.md, that later attempts never acted on."""
    advice = [r for r in ctx.log.recommendations if not _NOT_ADVICE.match(r.text)]
    recommendations = [r for r in advice if not is_chore(r.text)]
    chores = len(advice) - len(recommendations)
    experiments = ctx.experiments
    words = {e.number: experiment_terms(e) for e in experiments}
    notes = _Notes(ctx.log.root, ctx.log.recommendations)
    top = _judge_top(ctx, params, notes, words)
    top_ignored = top if top is not None and top.state == "ignored" else None
    undated = top is not None and top.state in {"undated", "version-cut"}
    missing = [_UNDATED_PROFILE] if undated else []
    if not recommendations and top_ignored is None:
        if top is None:
            return _nothing_recommended(ctx, chores)
        return not_found(_PATHOLOGY, _top_sentence(top, params) + _chores_text(chores), missing)
    ignored: list[tuple[Recommendation, list[Experiment]]] = []
    # Terms by recommendation text, found once: grouping looked them up again for each
    # pair of recommendations (quadratic in the terms' parsing).
    terms_of: dict[str, set[str]] = {}
    checked = 0
    # Acted on only by an experiment planned and not yet run: not ignored (the plan is the
    # answer), but the check says so, since nothing has been tried yet.
    pending: list[int] = []
    # Answered by a note that lists the same option as declined or out of scope.
    declined: list[DeclinedOption] = []
    for recommendation in recommendations:
        terms = terms_of.setdefault(recommendation.text, _terms(recommendation.text))
        if not terms and not recommendation.catalog_ids:
            continue
        # ``after`` is the first experiment that could act on it: a plan's own experiment
        # (exp_N/plan.md is written before N runs), the next one for a result's advice.
        # The plan's own experiment may carry out its items, but one that did not is no
        # sign they were ignored: a plan's next steps may be meant for after it.
        later = [e for e in experiments if e.number >= recommendation.after]
        attempts = [e for e in later if e.attempted and e.number != recommendation.experiment]
        if len(attempts) < params.min_later_experiments:
            continue
        checked += 1
        if any(
            acted_on(recommendation, e, terms, params.min_overlap, words[e.number])
            for e in later
            if e.attempted
        ) or notes.quoted(recommendation, later):
            continue
        option = declined_by(recommendation, ctx.log.declined)
        if option is not None:
            declined.append(option)
            continue
        # A plan not yet run takes it up by its terms or by quoting it, alike.
        quoting = notes.quoting_plans(recommendation, later)
        planned = next(
            (
                e.number
                for e in later
                if not e.attempted
                and (
                    e.number in quoting
                    or acted_on(recommendation, e, terms, params.min_overlap, words[e.number])
                )
            ),
            None,
        )
        if planned is not None:
            pending.append(planned)
            continue
        ignored.append((recommendation, attempts))
    if not ignored and top_ignored is None:
        return not_found(
            _PATHOLOGY,
            (
                f"{'The' if checked == 1 else 'Each of the'} "
                f"{count_text(checked, 'recommendation')} followed by "
                f"{params.min_later_experiments}+ attempts was "
                + _answered_text(declined, pending, checked)
                + "."
                if checked
                else "No recommendation has enough later attempts yet to judge."
            )
            + _chores_text(chores)
            + (f" {_top_sentence(top, params)}" if top is not None else ""),
            missing,
        )
    return found(_finding(ctx, top_ignored, ignored, terms_of))


def _top_summary(top: _TopVerdict) -> str:
    """The finding's words on a Top 3 no attempt after it followed."""
    numbers = [e.number for e in top.attempts]
    count = len(top.attempts)
    return (
        f"The {top.title} Opportunities list of {top.lines()}, written after exp {top.followed}"
        f"{top.dated_by}, "
        f"named {top.names()}{top.left_out}; none of the {count} attempts that followed "
        f"({experiments_text(numbers)}) tried {'it' if len(top.items) == 1 else 'any of them'}"
    )


def _others_summary(ignored: list[_Ignored], groups: list[list[_Ignored]], top: bool) -> str:
    """The finding's words on the other recommendations never acted on (after the Top 3's
    when ``top``)."""
    lead_rec, lead_attempts = groups[0][0]
    repeated = len(groups[0])
    # A note outside any experiment (after == 0) may have been written at any point of the
    # effort: the attempts are the log's, not "the ones that followed".
    placed = lead_rec.experiment is not None or lead_rec.after > 0
    span = (
        f"the {len(lead_attempts)}+ attempts that followed"
        if placed
        else f"{'the' if len(lead_attempts) == 1 else 'any of the'} "
        f"{count_text(len(lead_attempts), 'attempt')} of the log (where the note stands "
        "among them is not recorded)"
    )
    what = count_text(len(ignored), "other recommendation" if top else "recommendation")
    return (
        f"{what} from earlier plans/results "
        f"{'was' if len(ignored) == 1 else 'were'} never acted on in "
        + span
        + _origins_text([r for r, _a in ignored])
        + f"; e.g. \u201c{quote(lead_rec.text, 120)}\u201d"
        + (f" (recommended {repeated} times)" if repeated > 1 else "")
    )


def _top_evidence(ctx: Context, top: _TopVerdict) -> list[Evidence]:
    """Each Top 3 item, quoted with its rank and entry ids, at its line."""
    return [
        Evidence(
            quote=quote(f"{rank}. {item.text}")
            + "".join(f" (`{entry}`)" for entry in item.catalog_ids),
            source=str(item.source),
            experiments=(item.experiment,) if item.experiment is not None else (),
        )
        for rank, item in _ranked(ctx, top)
    ]


def _ranked(ctx: Context, top: _TopVerdict) -> list[tuple[int, Recommendation]]:
    """Each item judged with its rank in the profile's list as written: an item left out
    before it (a roofline analysis the log holds, another family's entry) keeps its place."""
    written = ctx.log.profile.opportunities if ctx.log.profile is not None else ()
    ranks = {str(item.source): rank for rank, item in enumerate(written, start=1)}
    return [
        (ranks.get(str(item.source), place), item) for place, item in enumerate(top.items, start=1)
    ]


def _top_actions(ctx: Context, top: _TopVerdict) -> list[Action]:
    """One action for each Top 3 item, linking its catalog entry."""
    return [
        ctx.action(
            f"Try {quote(item.text, 100)}"
            + "".join(f" (`{entry}`)" for entry in item.catalog_ids)
            + f", ranked {rank} of the profile's {top.title} ({item.source}), or record in a "
            "later plan or result why not",
            item.catalog_ids[0] if item.catalog_ids else None,
        )
        for rank, item in _ranked(ctx, top)
    ]


def _finding(
    ctx: Context,
    top: _TopVerdict | None,
    ignored: list[_Ignored],
    terms_of: dict[str, set[str]],
) -> Finding:
    """The finding for a Top 3 no later attempt followed and the recommendations ignored."""
    groups = group_repeats(ignored, terms_of)
    groups.sort(key=lambda g: (-len(g), g[0][0].after))
    repeated = len(groups[0]) if groups else 1
    parts = [_top_summary(top)] if top is not None else []
    if groups:
        parts.append(_others_summary(ignored, groups, top is not None))
    numbers = sorted(
        {e.number for _r, attempts in ignored for e in attempts}
        | {e.number for e in (top.attempts if top is not None else ())}
    )
    evidence = _top_evidence(ctx, top) if top is not None else []
    actions = _top_actions(ctx, top) if top is not None else []
    for group in groups[:5]:
        recommendation = group[0][0]
        extra = f" [x{len(group)}]" if len(group) > 1 else ""
        evidence.append(
            Evidence(
                quote=quote(recommendation.text) + extra,
                source=str(recommendation.source),
                experiments=(recommendation.experiment,)
                if recommendation.experiment is not None
                else (),
            )
        )
    for group in groups[:3]:
        recommendation = group[0][0]
        catalog_id = recommendation.catalog_ids[0] if recommendation.catalog_ids else None
        actions.append(
            ctx.action(
                "Try it, or record why not (a later plan or result that quotes it answers it): "
                + quote(recommendation.text, 140),
                catalog_id,
            )
        )
    # The Top 3 counts as one idea more among those ignored.
    ideas = len(groups) + (1 if top is not None else 0)
    return Finding(
        pathology=_PATHOLOGY,
        summary="; ".join(parts) + ".",
        experiments=numbers[-10:],
        severity=Severity.HIGH if repeated >= 3 else Severity.MEDIUM,
        confidence=round(min(0.9, 0.5 + 0.1 * repeated + 0.05 * ideas), 2),
        evidence=evidence,
        actions=actions,
    )
