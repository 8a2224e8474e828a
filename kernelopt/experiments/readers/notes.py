"""Free-form experiment notes: tables of experiments in any document, and one-experiment notes.

A note that lists experiments in a table (``| Experiment | Hypothesis | Mini result |
Outcome |``) gives one draft per row; sections whose titles match a row
(``## 1. Tile-2 CTA Reuse``) add their details to it. A note that describes a single
experiment (a title plus Change/Hypothesis/Result sections or Date/Status fields) gives
one draft, keyed by its file name so that a summary row with the same id merges with it.

A kernel devlog (``docs/kernels/<kernel>.md``, whose ``## Performance`` tables
``kernelopt.workflow.update_devlog`` writes) is neither: its Performance tables, and any
other table of it numbered by a ``Version`` column, list the kernel's versions (``v5``
is no experiment 5). Tables of it numbered by experiments are read as anywhere else.
"""

from __future__ import annotations

import re

from kernelopt._errors import expected
from kernelopt.experiments.log import SourceRef
from kernelopt.experiments.readers._draft import Draft
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._kinds import is_performance_table
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
from kernelopt.experiments.readers.tables import Roles, keyed_by_version, read_table, roles_of

__all__ = ["is_kernel_devlog", "is_single_note", "read_note", "read_table_note", "version_of"]

# Lines of a devlog's version tables named where they are passed over; the rest counted.
_VERSION_TABLES_NAMED = 10

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


def is_kernel_devlog(file: TextFile) -> bool:
    """Whether ``file`` is a kernel devlog: it holds a table of the header that
    ``kernelopt.workflow.update_devlog`` writes (under its ``## Performance`` heading)."""
    found = tables(file.lines, mask=code_mask(file.lines))
    return any(is_performance_table(table.header) for table in found)


def _lists_versions(table: Table, roles: Roles) -> bool:
    """Whether ``table`` of a kernel devlog lists the kernel's versions, not experiments:
    a Performance table, or a table numbered by its ``Version`` column."""
    return is_performance_table(table.header) or keyed_by_version(table, roles)


def _versions_reason(lines: list[int]) -> str:
    """Why a kernel devlog's version tables, starting at 1-based ``lines``, are not read."""
    named = ", ".join(str(line) for line in lines[:_VERSION_TABLES_NAMED])
    more = len(lines) - _VERSION_TABLES_NAMED
    where = f"{named} and {more} more" if more > 0 else named
    return (
        f"{'table' if len(lines) == 1 else 'tables'} of kernel versions at "
        f"{'line' if len(lines) == 1 else 'lines'} {where}: a kernel devlog (its Performance "
        "section, as kernelopt.workflow.update_devlog writes it, times each version at trial "
        "points) numbers versions, not experiments; not read as experiments"
    )


def read_table_note(
    file: TextFile,
    *,
    kind: str,
    slug_scope: str,
    position: int,
    attach_sections: bool = True,
    passed_over: list[tuple[str, str]] | None = None,
) -> list[Draft]:
    """Drafts for every experiment table in ``file`` (empty when it has none); sections
    titled like a row add their details to it unless ``attach_sections`` is False.

    In a kernel devlog the tables of the kernel's versions give none; given a
    ``passed_over`` list, ``(file.path, reason)`` is added to it, naming their lines.
    """
    mask = code_mask(file.lines)
    drafts: list[Draft] = []
    found = tables(file.lines, mask=mask)
    devlog = any(is_performance_table(table.header) for table in found)
    versions: list[int] = []
    for index, table in enumerate(found):
        roles = roles_of(table)
        if roles is None:
            continue
        if devlog and _lists_versions(table, roles):
            versions.append(table.line)
            continue
        drafts += read_table(
            file, table, roles, kind=kind, slug_scope=slug_scope, position=position * 100 + index
        )
    for index, table in enumerate(tables_without_separator(file.lines, found, mask), len(found)):
        roles = roles_of(table)
        if roles is None:
            continue
        if devlog and _lists_versions(table, roles):
            versions.append(table.line)
            continue
        read = read_table(
            file, table, roles, kind=kind, slug_scope=slug_scope, position=position * 100 + index
        )
        if read:
            read[0].warnings.append(_no_separator(file, table))
        drafts += read
    if versions and passed_over is not None:
        passed_over.append((file.path, _versions_reason(sorted(versions))))
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
    """True when ``file`` reads as the note of one experiment; a kernel devlog, which
    records versions of a kernel (its ``## Performance`` section counting as a note's
    section), never does."""
    mask = code_mask(file.lines)
    heads = headings(file.lines, mask)
    if not heads or heads[0].level != 1:
        return False
    if re.match(r"^(?:experiment|exp)\b", strip_md(heads[0].title), re.IGNORECASE):
        return not is_kernel_devlog(file)
    named_sections = sum(
        1 for h in heads[1:] if h.level == 2 and _NOTE_SECTIONS.match(strip_md(h.title))
    )
    found = fields(file.lines, 1, min(len(file.lines), 40), mask)
    has_fields = any(key in found for key in _NOTE_FIELDS)
    single = named_sections >= 2 or (named_sections >= 1 and has_fields)
    return single and not is_kernel_devlog(file)


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
