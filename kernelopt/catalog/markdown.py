"""Read and write catalog entries in the one fixed markdown template.

The file a person reads is the file code reads. Its layout::

    # Split-KV Flash Decoding

    - id: split-kv-flash-decoding
    - kind: optimization
    - scope: shared
    - families: decode-attention
    - fundamental_for: decode-attention
    - keywords: split-kv, split kv, flash-decoding, flash decoding

    ## When to Apply
    - Decode attention over long KV caches where batch × heads is too few CTAs.
    - Metric: `waves < 1` — the grid does not fill the GPU once.
    - Shape: `s_q <= 16` — few query tokens per sequence.

    ## Mechanism
    ...
    ## Performance Evidence
    Source type: external report
    Source: https://crfm.stanford.edu/2023/10/12/flashdecoding.html

    | Config | Before | After | Change |
    |--------|--------|-------|--------|
    | ... | ... | ... | ... |

    Optional notes under the table.

    ## Generalization / ## Pitfalls / ## Interactions
    - `split-kv-lse-combine` (requires): the partial results are merged by their LSE.

The sections are the template's, in its order. :func:`render_entry` writes the canonical
form and :func:`parse_entry` reads it back exactly (``render_entry(parse_entry(t)) == t`` for
canonical text). A ``|`` inside an evidence cell is written ``\\|``, markdown's escaped pipe,
and read back as ``|``; a row with a cell too many keeps a pipe inside a code span
(`` `a | b` ``) in its cell, as its writer meant. The reader tolerates small departures
(bullets wrapped onto a line indented by spaces or a tab, a tab after a bullet's ``-``,
blank lines between bullets, ``-`` instead of ``—``, blanks after the last character of a
section's text) and reports anything else as a :class:`~kernelopt.FormatError` naming the
file, the line and the section.

It also reads a file written to the bare knowledge-base template, which has no metadata
block, no ``Source:`` line and free-text Interactions: id, kind and scope then come from
the file's place in the tree (``<id>.md`` in ``optimizations/`` or ``anti-patterns/``,
under ``languages/<language>/`` or not), families default to ``any``, evidence names no
source and free-text interactions are kept as notes. :func:`parse_entry_with_warnings`
reports each of these as a warning; writing the entry back uses the canonical form.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from kernelopt._errors import FormatError, InputError, expected
from kernelopt._table_cells import escape_cell, split_row
from kernelopt.catalog.conditions import Condition, parse_condition
from kernelopt.catalog.model import (
    FENCE_RE,
    ID_RE,
    TAG_RE,
    Entry,
    Evidence,
    EvidenceRow,
    Interaction,
    Kind,
    Relation,
    SourceType,
    read_link,
    says_none,
)
from kernelopt.catalog.problems import Problem, Severity
from kernelopt.catalog.vocabulary import FILL_MARK, entry_language

__all__ = [
    "EVIDENCE_HEADER",
    "META_KEYS",
    "NO_INTERACTIONS",
    "SECTIONS",
    "declared_id",
    "find_placeholders",
    "parse_entry",
    "parse_entry_with_warnings",
    "render_entry",
]

SECTIONS: tuple[str, ...] = (
    "When to Apply",
    "Mechanism",
    "Affected Metrics",
    "Implementation",
    "Performance Evidence",
    "Generalization",
    "Pitfalls",
    "Interactions",
)
META_KEYS: tuple[str, ...] = ("id", "kind", "scope", "families", "fundamental_for", "keywords")
_REQUIRED_META = ("id", "kind", "scope", "families")
EVIDENCE_HEADER = "| Config | Before | After | Change |\n|--------|--------|-------|--------|"
NO_INTERACTIONS = "None recorded."
_METADATA = "metadata"
_TITLE = "title"

# A tab after the dash is a bullet too (see _is_bullet). The key's words cannot end in a
# blank, so a long run of blanks is read once, not once per way to split it.
_META_RE = re.compile(r"^-[ \t]+(?P<key>[A-Za-z_]+(?: +[A-Za-z_]+)*)\s*:\s*(?P<value>.*)$")
# The tag in any case, as TAG_RE reads it: "- metric: `...`" was a context no query matches.
_TAGGED_RE = re.compile(
    r"^(?P<tag>(?i:metric|shape))\s*:\s*`(?P<cond>[^`]+)`\s*(?:(?:—|--|-|:)\s*(?P<note>.*))?$"
)
# The folders of a knowledge tree that name an entry's kind.
_KIND_FOLDERS = {kind.folder: kind for kind in Kind}
_SOURCE_TYPE = "Source type:"
_SOURCE = "Source:"

# Which section holds each Entry field, to place validation errors.
_FIELD_SECTION = {
    "id": _METADATA,
    "name": _TITLE,
    "kind": _METADATA,
    "scope": _METADATA,
    "families": _METADATA,
    "fundamental_for": _METADATA,
    "keywords": _METADATA,
    "contexts": "When to Apply",
    "triggers": "When to Apply",
    "shape_conditions": "When to Apply",
    "mechanism": "Mechanism",
    "affected_metrics": "Affected Metrics",
    "implementation": "Implementation",
    "evidence": "Performance Evidence",
    "generalization": "Generalization",
    "pitfalls": "Pitfalls",
    "interactions": "Interactions",
    "interaction_notes": "Interactions",
}

_T = TypeVar("_T")
_Lines = list[tuple[int, str]]  # (1-based line number, text)


# --- writing ----------------------------------------------------------------------------


def _list(items: tuple[str, ...]) -> str:
    return ", ".join(items) if items else "none"


def _condition_bullet(tag: str, condition: Condition) -> str:
    bullet = f"- {tag}: `{condition}`"
    return f"{bullet} — {condition.note}" if condition.note else bullet


def _cells(row: EvidenceRow) -> str:
    """A row's cells between its outer pipes, each ``|`` in them written ``\\|``."""
    return " | ".join(escape_cell(cell) for cell in (row.config, row.before, row.after, row.change))


def _render_evidence(block: Evidence) -> str:
    head = f"{_SOURCE_TYPE} {block.source_type.value}"
    if block.source:
        head += f"\n{_SOURCE} {block.source}"
    parts = [head, EVIDENCE_HEADER]
    rows = "".join(f"\n| {_cells(r)} |" for r in block.rows)
    parts[1] += rows
    if block.notes:
        parts.append(block.notes)
    return "\n\n".join(parts)


def render_entry(entry: Entry) -> str:
    """Write ``entry`` in the canonical markdown template.

    Parameters
    ----------
    entry : Entry
        The entry to write.

    Returns
    -------
    str
        The file content, ending in one newline; :func:`parse_entry` reads it back to an
        equal entry.

    Raises
    ------
    InputError
        If ``entry`` is not an :class:`Entry`.
    """
    if not isinstance(entry, Entry):
        raise InputError(expected("an Entry", repr(entry)[:80], where="entry"))
    meta = "\n".join(
        (
            f"- id: {entry.id}",
            f"- kind: {entry.kind.value}",
            f"- scope: {entry.scope}",
            f"- families: {_list(entry.families)}",
            f"- fundamental_for: {_list(entry.fundamental_for)}",
            f"- keywords: {_list(entry.keywords)}",
        )
    )
    when = [f"- {c}" for c in entry.contexts]
    when += [_condition_bullet("Metric", c) for c in entry.triggers]
    when += [_condition_bullet("Shape", c) for c in entry.shape_conditions]
    links = [f"- `{i.target}` ({i.relation.value}): {i.note}" for i in entry.interactions]
    links += [f"- {note}" for note in entry.interaction_notes]
    interactions = "\n".join(links) if links else NO_INTERACTIONS
    bodies = {
        "When to Apply": "\n".join(when),
        "Mechanism": entry.mechanism,
        "Affected Metrics": "\n".join(f"- {m}" for m in entry.affected_metrics),
        "Implementation": entry.implementation,
        "Performance Evidence": "\n\n".join(_render_evidence(b) for b in entry.evidence),
        "Generalization": entry.generalization,
        "Pitfalls": "\n".join(f"- {p}" for p in entry.pitfalls),
        "Interactions": interactions,
    }
    sections = "\n\n".join(f"## {name}\n{bodies[name]}" for name in SECTIONS)
    return f"# {entry.name}\n\n{meta}\n\n{sections}\n"


# --- reading ----------------------------------------------------------------------------


class _Reader:
    """Parsing state for one file: its path for messages, the warnings met so far."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = None if path is None else str(path)
        self.warnings: list[Problem] = []

    def error(self, message: str, line: int | None, section: str | None) -> FormatError:
        return FormatError(message, path=self.path, line=line, section=section)

    def warn(self, message: str, line: int | None, section: str | None) -> None:
        self.warnings.append(
            Problem(
                path=self.path or "<text>",
                line=line,
                severity=Severity.WARNING,
                message=message,
                section=section,
            )
        )

    def guard(self, make: Callable[[], _T], line: int, section: str) -> _T:
        """Build a record, turning a validator's InputError into a located FormatError."""
        try:
            return make()
        except InputError as error:
            raise self.error(str(error), line, section) from None


def _strip_blank(lines: _Lines) -> _Lines:
    start, end = 0, len(lines)
    while start < end and not lines[start][1].strip():
        start += 1
    while end > start and not lines[end - 1][1].strip():
        end -= 1
    return lines[start:end]


def _split_sections(
    reader: _Reader, lines: _Lines
) -> tuple[tuple[int, str], _Lines, list[tuple[str, int, _Lines]]]:
    """Split into the title, the metadata lines and the ``##`` sections (fence-aware)."""
    body = _strip_blank(lines)
    if not body or not body[0][1].startswith("# "):
        first = body[0] if body else (1, "")
        raise reader.error(
            expected("a title line '# Name'", repr(first[1][:60]) if body else "an empty file"),
            first[0],
            _TITLE,
        )
    title = body[0]
    meta: _Lines = []
    sections: list[tuple[str, int, _Lines]] = []
    fenced = False
    for number, text in body[1:]:
        if FENCE_RE.match(text):
            fenced = not fenced
        if not fenced and text.startswith("#"):
            # Split by hand: a pattern with blanks on both sides of the name takes time
            # quadratic in a long run of blanks inside it.
            name = text[2:].strip() if text[2:3].isspace() else ""
            if not name or text.startswith("###"):
                where = sections[-1][0] if sections else _METADATA
                raise reader.error(
                    expected("a section heading '## <Section>'", repr(text[:60])), number, where
                )
            sections.append((name, number, []))
            continue
        (sections[-1][2] if sections else meta).append((number, text))
    return title, meta, sections


def _parse_meta(reader: _Reader, lines: _Lines, title_line: int) -> dict[str, str]:
    values: dict[str, str] = {}
    for number, text in lines:
        if not text.strip():
            continue
        found = _META_RE.match(text)
        if found is None:
            raise reader.error(
                expected("a metadata line '- key: value'", repr(text[:60])), number, _METADATA
            )
        key = found.group("key").strip().replace(" ", "_")
        if key not in META_KEYS:
            raise reader.error(
                expected(f"a metadata key in {', '.join(META_KEYS)}", repr(key)), number, _METADATA
            )
        if key in values:
            raise reader.error(expected(f"one '{key}' line", "a repeat"), number, _METADATA)
        values[key] = found.group("value").strip()
    for key in _REQUIRED_META:
        if key not in values:
            filled = [number for number, text in lines if text.strip()]
            line = filled[-1] if filled else title_line
            raise reader.error(
                expected(f"a metadata line '- {key}: ...' under the title", "none"), line, _METADATA
            )
    return values


def _split_list(value: str) -> tuple[str, ...]:
    if value in ("", "none"):
        return ()
    return tuple(item.strip() for item in value.split(","))


def _is_bullet(text: str) -> bool:
    """Whether a line starts a bullet: ``-`` and a blank, a space or the tab an editor's
    Tab key puts there (markdown reads both as a list item)."""
    return text.startswith(("- ", "-\t"))


def _bullets(reader: _Reader, lines: _Lines, section: str) -> _Lines:
    """Bullets of a section; indented lines (spaces or a tab) continue the bullet above."""
    items: _Lines = []
    for number, text in lines:
        if not text.strip():
            continue
        if _is_bullet(text):
            items.append((number, text[2:].strip()))
        elif text[0].isspace() and items:
            items[-1] = (items[-1][0], f"{items[-1][1]} {text.strip()}")
        else:
            raise reader.error(expected("a bullet '- ...'", repr(text[:60])), number, section)
    if not items:
        raise reader.error(
            expected("at least one bullet '- ...'", "an empty section"),
            lines[0][0] if lines else None,
            section,
        )
    return items


def _warn_untagged_condition(reader: _Reader, text: str, number: int, section: str) -> None:
    """Warn when a context bullet is a bare condition (``dram_pct > 60``): the template's
    metric-condition bullet, which code evaluates only when tagged ``Metric:``/``Shape:``."""
    try:
        parse_condition(text.strip().strip("`").strip())
    except (InputError, FormatError):
        return
    reader.warn(
        expected(
            "'Metric: `name op value` — note' or 'Shape: `...` — note' for a condition "
            "code evaluates",
            f"a plain bullet {text!r} (kept as a context)",
        ),
        number,
        section,
    )


def _parse_when(
    reader: _Reader, lines: _Lines, section: str
) -> tuple[tuple[str, ...], tuple[Condition, ...], tuple[Condition, ...]]:
    contexts: list[str] = []
    triggers: list[Condition] = []
    shapes: list[Condition] = []
    for number, text in _bullets(reader, lines, section):
        tagged = _TAGGED_RE.match(text)
        if tagged is None:
            if TAG_RE.match(text):
                raise reader.error(
                    expected(
                        "'Metric: `name op value` — note' or 'Shape: `...` — note'", repr(text[:60])
                    ),
                    number,
                    section,
                )
            contexts.append(text)
            _warn_untagged_condition(reader, text, number, section)
            continue
        note = (tagged.group("note") or "").strip()
        condition = reader.guard(
            partial(parse_condition, tagged.group("cond"), note=note), number, section
        )
        (triggers if tagged.group("tag").lower() == "metric" else shapes).append(condition)
    if not contexts:
        raise reader.error(
            expected("at least one context bullet before the metric conditions", "none"),
            lines[0][0],
            section,
        )
    return tuple(contexts), tuple(triggers), tuple(shapes)


def _joined(lines: _Lines) -> str:
    """The lines of a free-text body, without the blanks an editor leaves after its last
    character (invisible there, and no part of the text the template holds)."""
    return "\n".join(t for _, t in _strip_blank(lines)).rstrip()


def _text(reader: _Reader, lines: _Lines, section: str, line: int) -> str:
    text = _joined(lines)
    if not text:
        raise reader.error(expected("text in the section", "an empty section"), line, section)
    return text


def _table_row(reader: _Reader, number: int, text: str, section: str) -> list[str]:
    stripped = text.strip()
    # A closing "\|" is a pipe inside the last cell, which leaves the row open.
    if not (stripped.startswith("|") and stripped.endswith("|")) or stripped.endswith("\\|"):
        raise reader.error(
            expected("a table row '| a | b | c | d |'", repr(text[:60])), number, section
        )
    # As every kernelopt reader splits a row: "\|" is a pipe inside a cell, and so is one
    # inside a code span (`a | b`) when the row has a cell too many without it.
    cells = split_row(stripped, width=4)
    if len(cells) != 4:
        raise reader.error(
            expected(
                "4 cells: Config | Before | After | Change (a '|' inside a cell written '\\|')",
                f"{len(cells)} cells",
            ),
            number,
            section,
        )
    return cells


def _parse_evidence_block(reader: _Reader, lines: _Lines, section: str) -> Evidence:
    number, first = lines[0]
    # The type is matched in any case; the canonical form writes it lower-case.
    source_type = first[len(_SOURCE_TYPE) :].strip().lower()
    if source_type not in {s.value for s in SourceType}:
        raise reader.error(
            expected(
                "'Source type: local experiment' or 'Source type: external report'",
                repr(first[:60]),
            ),
            number,
            section,
        )
    rest = _strip_blank(lines[1:])
    source_line, source = number, ""
    if rest and rest[0][1].startswith(_SOURCE):
        source_line, source_text = rest[0]
        source = source_text[len(_SOURCE) :].strip()
        rest = _strip_blank(rest[1:])
    if not source:
        # The bare template has no place for the citation: read the block, advise one.
        reader.warn(
            expected(
                "a 'Source: <experiment path, URL or repo+path>' line after 'Source type:'",
                "none (the evidence names no source)",
            ),
            source_line,
            section,
        )
    rows: list[EvidenceRow] = []
    if rest and rest[0][1].lstrip().startswith("|"):
        header = _table_row(reader, rest[0][0], rest[0][1], section)
        if [h.lower() for h in header] != ["config", "before", "after", "change"]:
            raise reader.error(
                expected("the header | Config | Before | After | Change |", repr(rest[0][1][:60])),
                rest[0][0],
                section,
            )
        if len(rest) < 2 or not re.match(r"^\s*\|(\s*:?-+:?\s*\|){4}\s*$", rest[1][1]):
            line = rest[1][0] if len(rest) > 1 else rest[0][0]
            raise reader.error(
                expected("the separator |---|---|---|---| under the header", "something else"),
                line,
                section,
            )
        index = 2
        while index < len(rest) and rest[index][1].lstrip().startswith("|"):
            row_line, row_text = rest[index]
            cells = _table_row(reader, row_line, row_text, section)
            make_row = partial(
                EvidenceRow, config=cells[0], before=cells[1], after=cells[2], change=cells[3]
            )
            rows.append(reader.guard(make_row, row_line, section))
            index += 1
        rest = _strip_blank(rest[index:])
    notes = _joined(rest)
    make = partial(
        Evidence, source_type=SourceType(source_type), source=source, rows=tuple(rows), notes=notes
    )
    return reader.guard(make, rest[0][0] if rest else source_line, section)


def _parse_evidence(
    reader: _Reader, lines: _Lines, section: str, line: int
) -> tuple[Evidence, ...]:
    body = _strip_blank(lines)
    if not body:
        raise reader.error(
            expected(
                "'Source type: ...' and a Config | Before | After | Change table",
                "an empty section",
            ),
            line,
            section,
        )
    if not body[0][1].startswith(_SOURCE_TYPE):
        raise reader.error(
            expected(
                "'Source type: local experiment' or 'Source type: external report'",
                repr(body[0][1][:60]),
            ),
            body[0][0],
            section,
        )
    starts = [i for i, (_, text) in enumerate(body) if text.startswith(_SOURCE_TYPE)]
    bounds = [*starts, len(body)]
    return tuple(
        _parse_evidence_block(reader, body[a:b], section) for a, b in itertools.pairwise(bounds)
    )


def _loose_items(lines: _Lines) -> _Lines:
    """Bullets and free-text paragraphs, each joined onto one line."""
    items: _Lines = []
    joinable = False
    for number, text in lines:
        if not text.strip():
            joinable = False
            continue
        if _is_bullet(text):
            items.append((number, text[2:].strip()))
        elif items and (joinable or text[0].isspace()):
            items[-1] = (items[-1][0], f"{items[-1][1]} {text.strip()}")
        else:
            items.append((number, text.strip()))
        joinable = True
    return items


def _parse_interactions(
    reader: _Reader, lines: _Lines, section: str, line: int
) -> tuple[tuple[Interaction, ...], tuple[str, ...]]:
    """Links to other entries, and free text kept as notes (each one warned about)."""
    body = _strip_blank(lines)
    if len(body) == 1 and body[0][1].strip() == NO_INTERACTIONS:
        return (), ()
    items = _loose_items(body)
    if not items:
        raise reader.error(
            expected(f"bullets '- `other-id` (relation): note' or '{NO_INTERACTIONS}'", "none"),
            line,
            section,
        )
    if len(items) == 1 and says_none(items[0][1]):
        return (), ()
    links: list[Interaction] = []
    notes: list[str] = []
    for number, text in items:
        link = read_link(text)
        if link is None:
            reader.warn(
                expected(
                    "'- `other-id` (relation): note' linking another entry",
                    f"free text {text[:60]!r} (kept as a note)",
                ),
                number,
                section,
            )
            notes.append(text)
            continue
        target, relation, note = link
        if relation not in {r.value for r in Relation}:
            raise reader.error(
                expected(f"a relation in {', '.join(r.value for r in Relation)}", repr(relation)),
                number,
                section,
            )
        make = partial(Interaction, target=target, relation=Relation(relation), note=note)
        links.append(reader.guard(make, number, section))
    return tuple(links), tuple(notes)


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, ended by LF, CRLF or a lone CR (the three endings an editor
    may write; Python's own file reading turns each into LF)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _section_of_line(lines: list[str]) -> list[str]:
    """The section each line belongs to (title, metadata or a ``##`` section)."""
    current, fenced, out = _TITLE, False, []
    for index, text in enumerate(lines):
        if FENCE_RE.match(text):
            fenced = not fenced
        if not fenced and text.startswith("## "):
            current = text[3:].strip()
        elif index > 0 and current == _TITLE and text.strip():
            current = _METADATA
        out.append(current)
    return out


def find_placeholders(text: str) -> list[tuple[int, str, str]]:
    """Every ``<FILL: ...>`` placeholder a scaffolded entry still holds.

    Returns
    -------
    list of (line, section, placeholder text)
        1-based line numbers.
    """
    lines = split_lines(text)
    sections = _section_of_line(lines)
    found = []
    for index, line in enumerate(lines):
        start = line.find(FILL_MARK)
        while start >= 0:
            end = line.find(">", start)
            found.append(
                (index + 1, sections[index], line[start : end + 1 if end >= 0 else len(line)])
            )
            start = line.find(FILL_MARK, start + 1)
    return found


def _meta_from_path(reader: _Reader, path: str | Path | None, title_line: int) -> dict[str, str]:
    """Id, kind and scope of a file without a metadata block, from its place in the tree."""
    parts = Path(path).parts if path is not None else ()
    if len(parts) < 2 or parts[-2] not in _KIND_FOLDERS:
        raise reader.error(
            expected(
                "a metadata block under the title ('- id: ...', '- kind: ...', '- scope: ...', "
                "'- families: ...'), or a file in an optimizations/ or anti-patterns/ folder "
                "to read id, kind and scope from",
                "none",
            ),
            title_line,
            _METADATA,
        )
    stem = Path(parts[-1]).stem
    if not ID_RE.match(stem):
        raise reader.error(
            expected(
                "a file named after a kebab-case id (such as split-kv.md), or a metadata line "
                "'- id: ...'",
                repr(parts[-1]),
            ),
            title_line,
            _METADATA,
        )
    kind = _KIND_FOLDERS[parts[-2]]
    scope = "shared"
    if len(parts) >= 4 and parts[-4] == "languages":
        try:
            scope = entry_language(parts[-3], where=f"languages/{parts[-3]}/")
        except InputError as error:
            raise reader.error(str(error), title_line, _METADATA) from None
    scope_from = "a folder outside languages/" if scope == "shared" else f"languages/{parts[-3]}/"
    for key, value, source in (
        ("id", stem, "from the file name"),
        ("kind", kind.value, f"from the {kind.folder}/ folder"),
        ("scope", scope, f"from {scope_from}"),
        ("families", "any", "by default: every kernel family"),
    ):
        reader.warn(
            expected(
                f"a metadata line '- {key}: ...' under the title",
                f"none; read {value!r} {source}",
            ),
            title_line,
            _METADATA,
        )
    return {"id": stem, "kind": kind.value, "scope": scope, "families": "any"}


def parse_entry(text: str, *, path: str | Path | None = None) -> Entry:
    """Parse one entry file written in the template.

    Parameters
    ----------
    text : str
        The markdown content.
    path : str or Path, optional
        The file it came from, named in error messages. A file without a metadata block
        takes its id, kind and scope from it (see :func:`parse_entry_with_warnings`).

    Returns
    -------
    Entry

    Raises
    ------
    FormatError
        With ``path``, ``line`` and ``section`` set, for anything the template does not
        allow: a missing, unknown, repeated or misplaced section, a malformed bullet, a
        bad condition, a table with the wrong columns, a ``<FILL: ...>`` placeholder left.
    """
    return parse_entry_with_warnings(text, path=path)[0]


def parse_entry_with_warnings(
    text: str, *, path: str | Path | None = None
) -> tuple[Entry, tuple[Problem, ...]]:
    """Parse one entry file, with a warning for everything read from outside the file.

    A file written to the bare knowledge-base template reads with: no metadata block (id
    from the file name, kind from its ``optimizations/`` or ``anti-patterns/`` folder,
    scope from its ``languages/<language>/`` folder or shared, families ``any``), no
    ``Source:`` line (the evidence names no source), free-text Interactions (kept as
    notes). Each of these is one warning, located by line and section.

    Parameters
    ----------
    text : str
        The markdown content.
    path : str or Path, optional
        The file it came from.

    Returns
    -------
    (Entry, tuple of Problem)
        The entry and the warnings (severity warning), in file order.

    Raises
    ------
    FormatError
        As :func:`parse_entry`; also for a file without a metadata block whose path does
        not say its id and kind.
    InputError
        If ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise InputError(expected("the file's text (str)", repr(text)[:60], where="text"))
    reader = _Reader(path)
    entry = _parse(reader, text, path)
    warnings = sorted(reader.warnings, key=lambda p: p.line or 0)
    return entry, tuple(warnings)


def _parse(reader: _Reader, text: str, path: str | Path | None) -> Entry:
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
    placeholders = find_placeholders(text)
    if placeholders:
        line, section, mark = placeholders[0]
        raise reader.error(expected("the placeholder filled in", repr(mark)), line, section)
    lines = list(enumerate(split_lines(text), start=1))
    (title_line, title), meta_lines, sections = _split_sections(reader, lines)
    if any(line_text.strip() for _, line_text in meta_lines):
        meta = _parse_meta(reader, meta_lines, title_line)
    else:
        meta = _meta_from_path(reader, path, title_line)
    by_name: dict[str, tuple[int, _Lines]] = {}
    for name, number, body in sections:
        if name not in SECTIONS:
            raise reader.error(
                expected(f"a section in: {', '.join(SECTIONS)}", repr(name[:60])), number, name[:60]
            )
        if name in by_name:
            raise reader.error(expected(f"one '## {name}' section", "a repeat"), number, name)
        previous = [s for s in by_name if SECTIONS.index(s) > SECTIONS.index(name)]
        if previous:
            raise reader.error(
                expected(f"'## {name}' before '## {previous[0]}' (template order)", "it after"),
                number,
                name,
            )
        by_name[name] = (number, body)
    for name in SECTIONS:
        if name not in by_name:
            last = lines[-1][0]
            raise reader.error(expected(f"a '## {name}' section", "none"), last, name)

    def section_body(name: str) -> _Lines:
        # An empty section still needs a line for its error message: the heading's.
        number, content = by_name[name]
        return content or [(number, "")]

    def section_text(name: str) -> str:
        return _text(reader, section_body(name), name, by_name[name][0])

    def section_bullets(name: str) -> tuple[str, ...]:
        return tuple(t for _, t in _bullets(reader, section_body(name), name))

    contexts, triggers, shapes = _parse_when(reader, section_body("When to Apply"), "When to Apply")
    evidence_line = by_name["Performance Evidence"][0]
    fields: dict[str, object] = {
        "id": meta["id"],
        "name": title[2:].strip(),
        "kind": meta["kind"],
        "scope": meta["scope"],
        "families": _split_list(meta["families"]),
        "fundamental_for": _split_list(meta.get("fundamental_for", "none")),
        "keywords": _split_list(meta.get("keywords", "none")),
        "contexts": contexts,
        "triggers": triggers,
        "shape_conditions": shapes,
        "mechanism": section_text("Mechanism"),
        "affected_metrics": section_bullets("Affected Metrics"),
        "implementation": section_text("Implementation"),
        "evidence": _parse_evidence(
            reader, section_body("Performance Evidence"), "Performance Evidence", evidence_line
        ),
        "generalization": section_text("Generalization"),
        "pitfalls": section_bullets("Pitfalls"),
    }
    fields["interactions"], fields["interaction_notes"] = _parse_interactions(
        reader, section_body("Interactions"), "Interactions", by_name["Interactions"][0]
    )
    # In any case, as a scope, a relation or a source type is (lint warns about it).
    if meta["kind"].lower() not in {k.value for k in Kind}:
        raise reader.error(
            expected("kind 'optimization' or 'anti-pattern'", repr(meta["kind"])),
            _meta_line(meta_lines, "kind"),
            _METADATA,
        )
    try:
        return Entry(**fields)  # type: ignore[arg-type]
    except InputError as error:
        field = str(error).split(":", 1)[0].removeprefix("Entry.")
        section = _FIELD_SECTION.get(field, _METADATA)
        if section == _METADATA:
            line = _meta_line(meta_lines, field) or title_line
        elif section == _TITLE:
            line = title_line
        else:
            line = by_name[section][0]
        raise reader.error(str(error), line, section) from None


def declared_id(text: str) -> str | None:
    """The id an entry file's ``- id:`` metadata line gives, read from text that may not
    parse as a whole; None without one (or with one of several words).

    Parameters
    ----------
    text : str
        An entry file's text.
    """
    for line in text.splitlines():
        found = _META_RE.match(line)
        if found and found.group("key").strip() == "id":
            value = found.group("value").strip()
            return value if value and len(value.split()) == 1 else None
    return None


def _meta_line(lines: _Lines, key: str) -> int | None:
    for number, text in lines:
        found = _META_RE.match(text)
        if found and found.group("key").strip().replace(" ", "_") == key:
            return number
    return None
