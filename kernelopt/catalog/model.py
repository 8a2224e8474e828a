"""The typed model of one catalog entry: an optimization or an anti-pattern.

An :class:`Entry` holds every section of the knowledge-base template (When to Apply,
Mechanism, Affected Metrics, Implementation, Performance Evidence, Generalization,
Pitfalls, Interactions) plus the fields code evaluates: a stable id, kernel families,
metric triggers, shape conditions, keywords, the families it is a standard technique for,
interactions as ids, and evidence rows with their source. Validators reject values the
markdown form could not hold, so every valid entry renders and parses back to itself.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any, TypeVar

import attrs

from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, expected
from kernelopt.catalog._fields import require_str, to_enum
from kernelopt.catalog.conditions import Condition
from kernelopt.catalog.vocabulary import FILL_MARK, LANGUAGE_ALIASES, SCOPES, canonical_family_name

__all__ = [
    "Entry",
    "Evidence",
    "EvidenceRow",
    "Interaction",
    "Kind",
    "Relation",
    "SourceType",
    "flip_note_prefix",
    "interrupted_flip",
    "read_link",
    "relative_path",
    "slugify",
]

_T = TypeVar("_T")

# "µs" is how people write microseconds: keep the unit readable in an id ("us").
_MICRO_AS_U = str.maketrans({"\u00b5": "u", "\u03bc": "u"})
ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
FENCE_RE = re.compile(r"^\s*(```|~~~)")
# The start of a When-to-Apply condition bullet, read in any case ("metric :" too).
TAG_RE = re.compile(r"^(?i:metric|shape)\s*:")
# Free text that says an entry has no interactions ("None", "None yet.").
_NONE_WORDS = frozenset({"none", "none recorded", "none yet", "none known", "n/a"})
# An Interactions bullet that links another entry: `other-id` (relation): note (see
# read_link for the spellings of the relation it takes).
# The blanks after the relation belong to its group: two blank runs side by side would be
# tried at every split of a long run of blanks.
LINK_RE = re.compile(
    r"^`(?P<target>[^`]+)`\s*(?:\(\s*(?P<relation>[A-Za-z-]+)\s*\)\s*)?(?::|—|--|-)\s*(?P<note>.+)$"
)


class Kind(TextEnum):
    """Whether an entry says what to do or what to avoid."""

    OPTIMIZATION = "optimization"
    ANTI_PATTERN = "anti-pattern"

    @property
    def folder(self) -> str:
        """The folder of a knowledge tree that holds entries of this kind."""
        return "optimizations" if self is Kind.OPTIMIZATION else "anti-patterns"

    @property
    def flipped(self) -> Kind:
        """The other kind."""
        return Kind.ANTI_PATTERN if self is Kind.OPTIMIZATION else Kind.OPTIMIZATION


class SourceType(TextEnum):
    """Where a block of performance evidence comes from (the template's two source types)."""

    LOCAL_EXPERIMENT = "local experiment"
    EXTERNAL_REPORT = "external report"


class Relation(TextEnum):
    """How one entry relates to another it links to."""

    REQUIRES = "requires"  # this entry does not work without the other
    ENABLES = "enables"  # this entry makes the other possible or worthwhile
    COMPLEMENTS = "complements"  # gains add up when both are applied
    CONFLICTS = "conflicts"  # applying both loses part of one's gain, or breaks something
    ALTERNATIVE = "alternative"  # another route to the same gain
    RELATED = "related"  # worth reading together


def read_link(text: str) -> tuple[str, str, str] | None:
    """The target, relation and note of an Interactions bullet that links another entry
    (``"`other-id` (relation): note"``, without the ``- ``), or None for free text.

    A known relation is read in any case and with blanks inside its parentheses
    (``(Requires)``, ``( requires )``): a hand edit that capitalized one had turned the
    link into a note. Another word keeps the bullet free text, unless it is written as
    the template writes relations (lower-case, tight): that one is returned, for the
    reader to refuse as an unknown relation.
    """
    found = LINK_RE.match(text)
    if found is None or not ID_RE.match(found.group("target").strip()):
        return None
    target, note = found.group("target").strip(), found.group("note").strip()
    raw = found.group("relation")
    if raw is None:
        return target, Relation.RELATED.value, note
    relation = raw.lower()
    tight = text[found.start("relation") - 1] == "(" and text[found.end("relation")] == ")"
    if relation in {r.value for r in Relation} or (tight and raw == relation):
        return target, relation, note
    return None


def says_none(text: str) -> bool:
    """Whether ``text`` only says there is nothing (``"None"``, ``"None yet."``, ``"n/a"``)."""
    return text.strip().lower().rstrip(".").strip() in _NONE_WORDS


def relative_path(entry_id: str, kind: Kind, scope: str) -> str:
    """The tree-relative path of an entry (``languages/triton/anti-patterns/<id>.md``)."""
    folder = kind.folder if scope == "shared" else f"languages/{scope}/{kind.folder}"
    return f"{folder}/{entry_id}.md"


def slugify(name: str) -> str:
    """Make a kebab-case id (``"Split-KV Decoding"`` → ``split-kv-decoding``).

    Parameters
    ----------
    name : str
        A display name; its runs of lower-cased ASCII letters and digits become the
        id's words, everything else is dropped. Accented letters lose their accent
        (``Naïve`` → ``naive``) and the micro sign reads as ``u`` (``µs`` → ``us``).

    Returns
    -------
    str
        The id; empty when ``name`` holds no ASCII letter or digit.

    Raises
    ------
    InputError
        If ``name`` is not a string.
    """
    require_str(name, "name", "a name (str)")
    # NFKD splits an accented letter into the letter and its accent, which is dropped.
    split = unicodedata.normalize("NFKD", name.translate(_MICRO_AS_U))
    plain = "".join(c for c in split if not unicodedata.combining(c))
    return "-".join(re.findall(r"[a-z0-9]+", plain.lower()))


# --- validators -------------------------------------------------------------------------


def _where(instance: object, attribute: attrs.Attribute[Any]) -> str:
    return f"{type(instance).__name__}.{attribute.name}"


def _is_line(text: str) -> bool:
    return (
        bool(text)
        and text == text.strip()
        and "\n" not in text
        and "\r" not in text
        and FILL_MARK not in text
    )


def _line(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not _is_line(value):
        raise InputError(
            expected(
                "one non-empty line without surrounding spaces or <FILL: ...>",
                repr(value),
                where=_where(instance, attribute),
            )
        )


def _kebab(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not ID_RE.match(value):
        raise InputError(
            expected(
                "a kebab-case id such as 'split-kv-flash-decoding'",
                repr(value),
                where=_where(instance, attribute),
            )
        )


def _kebab_items(
    instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for item in value:
        # "none" is how the markdown writes an empty list, so it cannot be a name.
        if not ID_RE.match(item) or item == "none":
            raise InputError(
                expected(
                    "kebab-case names other than 'none'",
                    repr(item),
                    where=_where(instance, attribute),
                )
            )
    if len(set(value)) != len(value):
        raise InputError(
            expected("names without repeats", repr(value), where=_where(instance, attribute))
        )


def _lines(
    instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for item in value:
        if not isinstance(item, str) or not _is_line(item):
            raise InputError(
                expected(
                    "one-line items without surrounding spaces or <FILL: ...>",
                    repr(item),
                    where=_where(instance, attribute),
                )
            )


def _nonempty_tuple(
    instance: object, attribute: attrs.Attribute[Any], value: tuple[Any, ...]
) -> None:
    if not value:
        raise InputError(expected("at least one item", "none", where=_where(instance, attribute)))


def _keywords(
    instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for item in value:
        if (
            not _is_line(item)
            or item != item.lower()
            or "," in item
            or "  " in item
            or item == "none"
        ):
            raise InputError(
                expected(
                    "lower-case keywords without commas or double spaces",
                    repr(item),
                    where=_where(instance, attribute),
                )
            )
    if len(set(value)) != len(value):
        raise InputError(
            expected("keywords without repeats", repr(value), where=_where(instance, attribute))
        )


def _prose(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    """Free markdown: non-empty, stripped, balanced code fences, no headings outside them."""
    where = _where(instance, attribute)
    if isinstance(value, str) and "\r" in value:
        # Text pasted from a Windows editor: name the carriage return, not the text's start
        # (for a flip's reason, that start is the Generalization the reason is added to).
        at = value.index("\r")
        raise InputError(
            expected(
                "line breaks written as '\\n'",
                f"a carriage return in {value[max(0, at - 30) : at + 10]!r}",
                where=where,
            )
        )
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        shown = repr(value[:60]) if isinstance(value, str) else repr(value)
        raise InputError(
            expected("non-empty text without leading or trailing blank space", shown, where=where)
        )
    if FILL_MARK in value:
        raise InputError(
            expected("text without a <FILL: ...> placeholder", repr(value[:60]), where=where)
        )
    _check_markdown_body(value, where)


def _check_markdown_body(value: str, where: str) -> None:
    fenced = False
    for line in value.split("\n"):
        if FENCE_RE.match(line):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            raise InputError(
                expected("no heading line outside a code block", repr(line), where=where)
            )
    if fenced:
        raise InputError(
            expected("code fences (```) that open and close", "an unclosed fence", where=where)
        )


def _notes(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value == "":
        return
    _prose(instance, attribute, value)
    for line in value.split("\n"):
        if line.startswith(("Source type:", "Source:", "|")):
            raise InputError(
                expected(
                    "notes without lines starting 'Source type:', 'Source:' or '|'",
                    repr(line),
                    where=_where(instance, attribute),
                )
            )


def _implementation(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    _prose(instance, attribute, value)
    if not any(FENCE_RE.match(line) for line in value.split("\n")):
        raise InputError(
            expected(
                "a fenced code block (```) in Implementation",
                "none",
                where=_where(instance, attribute),
            )
        )


def _source(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    # Empty: the evidence names no source (a hand-written file may have no 'Source:' line).
    if value != "":
        _line(instance, attribute, value)


def _interaction_notes(
    instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    _lines(instance, attribute, value)
    for item in value:
        if says_none(item):
            # Alone it would read back as no interactions at all.
            raise InputError(
                expected(
                    "a note on an interaction (leave the notes empty for none)",
                    repr(item),
                    where=_where(instance, attribute),
                )
            )
        # Such a note would be read back as a link to another entry.
        if read_link(item) is not None:
            raise InputError(
                expected(
                    "free text that is not a link '`other-id` (relation): note'",
                    repr(item),
                    where=_where(instance, attribute),
                )
            )


def _to_scope(value: object) -> object:
    # Another spelling of a language ("cutile-dsl", "Triton") is stored as the canonical
    # one; the validator refuses what is none.
    if not isinstance(value, str):
        return value
    key = value.lower()
    return key if key in SCOPES else LANGUAGE_ALIASES.get(key, value)


def _scope(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in SCOPES:
        raise InputError(
            expected(
                f"a scope in {', '.join(SCOPES)}", repr(value), where=_where(instance, attribute)
            )
        )


def _sequence(value: object, item: type[_T], what: str, where: str) -> tuple[_T, ...]:
    """``value`` as a tuple of ``item``; a lone string is refused, not split into letters."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InputError(expected(f"a sequence of {what}", repr(value), where=where))
    items = tuple(value)
    wrong = [x for x in items if not isinstance(x, item)]
    if wrong:
        raise InputError(expected(f"a sequence of {what}", f"an item {wrong[0]!r}", where=where))
    return items


# One named converter per field, so each error names its field (and type checkers follow
# attrs converters only when they are named functions).


def _to_source_type(value: object) -> SourceType:
    return to_enum(SourceType, value, "Evidence.source_type")


def _to_rows(value: object) -> tuple[EvidenceRow, ...]:
    return _sequence(value, EvidenceRow, "EvidenceRow", "Evidence.rows")


def _to_relation(value: object) -> Relation:
    return to_enum(Relation, value, "Interaction.relation")


def _to_kind(value: object) -> Kind:
    return to_enum(Kind, value, "Entry.kind")


def _to_families(value: object) -> tuple[str, ...]:
    return _canonical_families(_sequence(value, str, "strings", "Entry.families"))


def _to_fundamental_for(value: object) -> tuple[str, ...]:
    return _canonical_families(_sequence(value, str, "strings", "Entry.fundamental_for"))


def _canonical_families(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` with each alias read as its family (``matmul`` is ``gemm``), each once.

    A query reads ``--family matmul`` as ``gemm``, so an entry kept under ``matmul`` would
    be found by no query at all; "gemm, matmul" names one family, kept once.
    """
    return tuple(dict.fromkeys(canonical_family_name(name) for name in names))


def _to_keywords(value: object) -> tuple[str, ...]:
    return _sequence(value, str, "strings", "Entry.keywords")


def _to_contexts(value: object) -> tuple[str, ...]:
    return _sequence(value, str, "strings", "Entry.contexts")


def _to_triggers(value: object) -> tuple[Condition, ...]:
    return _sequence(value, Condition, "Condition", "Entry.triggers")


def _to_shape_conditions(value: object) -> tuple[Condition, ...]:
    return _sequence(value, Condition, "Condition", "Entry.shape_conditions")


def _to_affected_metrics(value: object) -> tuple[str, ...]:
    return _sequence(value, str, "strings", "Entry.affected_metrics")


def _to_evidence(value: object) -> tuple[Evidence, ...]:
    return _sequence(value, Evidence, "Evidence", "Entry.evidence")


def _to_pitfalls(value: object) -> tuple[str, ...]:
    return _sequence(value, str, "strings", "Entry.pitfalls")


def _to_interactions(value: object) -> tuple[Interaction, ...]:
    return _sequence(value, Interaction, "Interaction", "Entry.interactions")


def _to_interaction_notes(value: object) -> tuple[str, ...]:
    return _sequence(value, str, "strings", "Entry.interaction_notes")


# --- records ----------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class EvidenceRow:
    """One row of the template's ``Config | Before | After | Change`` table.

    Cells are text as a person writes them, units included (``"74.2 µs"``, ``"+11.6 %"``),
    each one line; a ``|`` in a cell is written ``\\|`` in the entry's file and read back as
    ``|``.
    """

    config: str = attrs.field(validator=_line)
    before: str = attrs.field(validator=_line)
    after: str = attrs.field(validator=_line)
    change: str = attrs.field(validator=_line)


@attrs.frozen(kw_only=True)
class Evidence:
    """A block of performance evidence from one source.

    Parameters
    ----------
    source_type : SourceType
        ``local experiment`` (measured by the user or this project) or ``external report``.
    source : str
        The citation: an experiment path or measurement file, a URL, or ``owner/repo path``;
        empty when none is given (lint warns).
    rows : tuple of EvidenceRow
        Measured before/after rows; may be empty when the source gives no numbers.
    notes : str
        Free text under the table (what was measured, what the numbers mean); may be empty.
    """

    source_type: SourceType = attrs.field(converter=_to_source_type)
    source: str = attrs.field(default="", validator=_source)
    rows: tuple[EvidenceRow, ...] = attrs.field(default=(), converter=_to_rows)
    notes: str = attrs.field(default="", validator=_notes)


@attrs.frozen(kw_only=True)
class Interaction:
    """A link from one entry to another, by id.

    Parameters
    ----------
    target : str
        The id of the linked entry.
    relation : Relation
        How the two relate.
    note : str
        One line on the interaction.
    """

    target: str = attrs.field(validator=_kebab)
    relation: Relation = attrs.field(converter=_to_relation)
    note: str = attrs.field(validator=_line)


@attrs.frozen(kw_only=True)
class Entry:
    """One optimization or anti-pattern of the catalog.

    Parameters
    ----------
    id : str
        Stable kebab-case id; also the file name (``<id>.md``).
    name : str
        Display name, the markdown title.
    kind : Kind
        Optimization or anti-pattern.
    scope : str
        ``"shared"`` or a language: ``"triton"``, ``"cuda"``, ``"cute-dsl"``, ``"cutile"``
        (``"cutile-dsl"`` is read as ``"cutile"``), in any case (``"Triton"`` is stored
        as ``"triton"``).
    families : tuple of str
        Kernel families the entry applies to (``"decode-attention"``, ``"any"``).
    fundamental_for : tuple of str
        Families for which it is a standard technique a kernel should not lack.
    keywords : tuple of str
        Lower-case phrases people use for it in experiment logs (``"split-kv"``, ``"num_splits"``).
    contexts : tuple of str
        When to Apply: the kernel contexts, one line each (at least one).
    triggers : tuple of Condition
        When to Apply: metric conditions; the entry is signalled when any holds.
    shape_conditions : tuple of Condition
        When to Apply: workload shape facts under which it applies (``s_q == 1``).
    mechanism : str
        How and why it works (markdown).
    affected_metrics : tuple of str
        The metrics it moves, one line each.
    implementation : str
        Markdown holding at least one fenced code block.
    evidence : tuple of Evidence
        Performance evidence blocks, each from one source (at least one).
    generalization : str
        The device-agnostic takeaway (markdown).
    pitfalls : tuple of str
        Known failure modes, one line each.
    interactions : tuple of Interaction
        Links to other entries by id.
    interaction_notes : tuple of str
        Interactions written as free text that links no entry, one line each (lint warns:
        a link by id is what queries and checks can follow).
    """

    id: str = attrs.field(validator=_kebab)
    name: str = attrs.field(validator=_line)
    kind: Kind = attrs.field(converter=_to_kind)
    scope: str = attrs.field(converter=_to_scope, validator=_scope)
    families: tuple[str, ...] = attrs.field(
        converter=_to_families, validator=[_nonempty_tuple, _kebab_items]
    )
    fundamental_for: tuple[str, ...] = attrs.field(
        default=(), converter=_to_fundamental_for, validator=_kebab_items
    )
    keywords: tuple[str, ...] = attrs.field(default=(), converter=_to_keywords, validator=_keywords)
    contexts: tuple[str, ...] = attrs.field(
        converter=_to_contexts, validator=[_nonempty_tuple, _lines]
    )
    triggers: tuple[Condition, ...] = attrs.field(default=(), converter=_to_triggers)
    shape_conditions: tuple[Condition, ...] = attrs.field(
        default=(), converter=_to_shape_conditions
    )
    mechanism: str = attrs.field(validator=_prose)
    affected_metrics: tuple[str, ...] = attrs.field(
        converter=_to_affected_metrics, validator=[_nonempty_tuple, _lines]
    )
    implementation: str = attrs.field(validator=_implementation)
    evidence: tuple[Evidence, ...] = attrs.field(converter=_to_evidence, validator=_nonempty_tuple)
    generalization: str = attrs.field(validator=_prose)
    pitfalls: tuple[str, ...] = attrs.field(
        converter=_to_pitfalls, validator=[_nonempty_tuple, _lines]
    )
    interactions: tuple[Interaction, ...] = attrs.field(default=(), converter=_to_interactions)
    interaction_notes: tuple[str, ...] = attrs.field(
        default=(), converter=_to_interaction_notes, validator=_interaction_notes
    )

    def __attrs_post_init__(self) -> None:
        for context in self.contexts:
            # A context reading "Metric: ..." (in any case) would parse back as a trigger.
            if TAG_RE.match(context):
                raise InputError(
                    expected(
                        "a context not starting 'Metric:' or 'Shape:'",
                        repr(context),
                        where="Entry.contexts",
                    )
                )
        targets = [i.target for i in self.interactions]
        if self.id in targets:
            raise InputError(
                expected(
                    "interactions with other entries",
                    f"a link to itself ({self.id})",
                    where="Entry.interactions",
                )
            )
        if len(set(targets)) != len(targets):
            raise InputError(
                expected("one interaction per linked id", repr(targets), where="Entry.interactions")
            )

    @property
    def language(self) -> str | None:
        """The language of a language-specific entry, ``None`` for shared ones."""
        return None if self.scope == "shared" else self.scope

    @property
    def summary(self) -> str:
        """The one-line when-to-apply shown in the index: the first context."""
        return self.contexts[0]

    @property
    def relative_path(self) -> str:
        """Where the entry lives in a knowledge tree (``optimizations/<id>.md``, ...)."""
        return relative_path(self.id, self.kind, self.scope)

    @property
    def evidence_rows(self) -> tuple[tuple[Evidence, EvidenceRow], ...]:
        """Every evidence row with the block (source type and citation) it comes from."""
        return tuple((block, row) for block in self.evidence for row in block.rows)

    def to_json(self) -> str:
        """Serialize to JSON (see :func:`kernelopt.catalog.jsonio.entry_to_json`)."""
        from kernelopt.catalog.jsonio import entry_to_json

        return entry_to_json(self)

    @classmethod
    def from_json(cls, text: str) -> Entry:
        """Read an entry from JSON written by :meth:`to_json`; extra keys are rejected.

        Parameters
        ----------
        text : str
            The JSON text.

        Returns
        -------
        Entry
            The entry.

        Raises
        ------
        FormatError
            If the text is not JSON.
        InputError
            If the JSON does not describe a valid entry.
        """
        from kernelopt.catalog.jsonio import entry_from_json

        return entry_from_json(text)


def flip_note_prefix(before: Kind, after: Kind) -> str:
    """The start of the note a flip appends to an entry's Generalization."""
    return f"Reclassified from {before.value} to {after.value}: "


def interrupted_flip(one: Entry, other: Entry) -> Entry | None:
    """The flipped copy when two copies of an entry are the two sides of one flip.

    A flip writes the flipped file before it removes the old one, so a crash in between
    leaves both: the same entry, once as it was and once of the other kind with the flip's
    note appended to its Generalization. Returns that second copy, or None when the two
    differ in any other way (a real repeat of the id).
    """
    for before, after in ((one, other), (other, one)):
        note = "\n\n" + flip_note_prefix(before.kind, after.kind)
        if (
            after.kind is before.kind.flipped
            and after.generalization.startswith(before.generalization + note)
            and attrs.evolve(after, kind=before.kind, generalization=before.generalization)
            == before
        ):
            return after
    return None
