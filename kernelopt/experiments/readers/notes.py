"""Free-form experiment notes: tables of experiments in any document, and one-experiment notes.

A note that lists experiments in a table (``| Experiment | Hypothesis | Mini result |
Outcome |``) gives one draft per row; sections whose titles match a row
(``## 1. Tile-2 CTA Reuse``) add their details to it. A note that describes a single
experiment (a title plus Change/Hypothesis/Result sections or Date/Status fields) gives
one draft, keyed by its file name so that a summary row with the same id merges with it.
"""

from __future__ import annotations

import re

from kernelopt._errors import expected
from kernelopt.experiments.log import SourceRef
from kernelopt.experiments.readers._draft import Draft
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import (
    Table,
    code_mask,
    fields,
    headings,
    sections,
    strip_md,
    tables,
    tables_without_separator,
)
from kernelopt.experiments.readers._values import date_of
from kernelopt.experiments.readers.documents import describe
from kernelopt.experiments.readers.tables import read_table, roles_of

__all__ = ["is_single_note", "read_note", "read_table_note", "version_of"]

_NOTE_SECTIONS = re.compile(
    r"^(?:change|changes|what changed|code change|hypothesis|claim|goal|question|results?|result "
    r"summary|"
    r"validation|timing|speed|conclusion|verdict|measured result|performance)\b",
    re.IGNORECASE,
)
_NOTE_FIELDS = ("date", "status", "outcome", "hardware", "verdict")
_VERSION = re.compile(r"(?:^|[-_ ])v(\d{1,4})$", re.IGNORECASE)


def version_of(stem: str) -> int | None:
    """The version number a note's name carries (``qx-counter-fused-v8`` -> 8)."""
    match = _VERSION.search(stem)
    return int(match.group(1)) if match else None


def _norm(text: str) -> str:
    text = re.sub(r"^\d+[.)]\s*", "", strip_md(text).lower())
    return " ".join(re.findall(r"[a-z0-9]+", text))


def read_table_note(
    file: TextFile, *, kind: str, slug_scope: str, position: int, attach_sections: bool = True
) -> list[Draft]:
    """Drafts for every experiment table in ``file`` (empty when it has none); sections
    titled like a row add their details to it unless ``attach_sections`` is False."""
    mask = code_mask(file.lines)
    drafts: list[Draft] = []
    found = tables(file.lines, mask=mask)
    for index, table in enumerate(found):
        roles = roles_of(table)
        if roles is None:
            continue
        drafts += read_table(
            file, table, roles, kind=kind, slug_scope=slug_scope, position=position * 100 + index
        )
    for index, table in enumerate(tables_without_separator(file.lines, found, mask), len(found)):
        roles = roles_of(table)
        if roles is None:
            continue
        read = read_table(
            file, table, roles, kind=kind, slug_scope=slug_scope, position=position * 100 + index
        )
        if read:
            read[0].warnings.append(_no_separator(file, table))
        drafts += read
    if not drafts:
        return drafts
    heads = headings(file.lines, mask)
    # "# Kernel7 Experiment Notes (2026-03-25)": the note's date is its rows' date when
    # they state none of their own.
    dated = date_of(strip_md(heads[0].title)) if heads and heads[0].level == 1 else None
    if dated is not None:
        for row in drafts:
            row.put("date", dated, SourceRef(path=file.path, line=heads[0].line))
    if not attach_sections:
        return drafts
    by_title = {_norm(d.description): d for d in drafts if d.description}
    for section in sections(file.lines, heads):
        key = _norm(section.heading.title)
        draft = by_title.get(key)
        if draft is None:
            draft = next(
                (d for t, d in by_title.items() if t and len(t) > 8 and (t in key or key in t)),
                None,
            )
        if draft is not None:
            draft.sources.append(SourceRef(path=file.path, line=section.heading.line))
            describe(
                file,
                draft,
                start=section.heading.line,
                end=section.end,
                title_line=section.heading.line,
            )
    return drafts


def _no_separator(file: TextFile, table: Table) -> str:
    below = file.lines[table.line]
    where = f"{file.path}:{table.line}"
    return (
        f"{expected('a |---| row under the header', repr(below[:60]), where=where)}; "
        "read as a table"
    )


def is_single_note(file: TextFile) -> bool:
    """True when ``file`` reads as the note of one experiment."""
    mask = code_mask(file.lines)
    heads = headings(file.lines, mask)
    if not heads or heads[0].level != 1:
        return False
    if re.match(r"^(?:experiment|exp)\b", strip_md(heads[0].title), re.IGNORECASE):
        return True
    named_sections = sum(
        1 for h in heads[1:] if h.level == 2 and _NOTE_SECTIONS.match(strip_md(h.title))
    )
    found = fields(file.lines, 1, min(len(file.lines), 40), mask)
    has_fields = any(key in found for key in _NOTE_FIELDS)
    return named_sections >= 2 or (named_sections >= 1 and has_fields)


def read_note(file: TextFile, *, kind: str, scope: str) -> Draft:
    """One draft for a single-experiment note, keyed by its file name."""
    version = version_of(file.stem)
    draft = Draft(
        scope=scope,
        key=file.stem.lower(),
        kind=kind,
        label=file.stem,
        order=("", 10_000 + (version if version is not None else 0), file.stem),
    )
    draft.sources.append(SourceRef(path=file.path, line=1))
    describe(file, draft)
    return draft
