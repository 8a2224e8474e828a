"""Profiler → Orchestrator: read the ``## Profile:`` hand-off back into a ProfileReport.

The record and its writer are :class:`kernelopt.bench.report.ProfileReport` and its
:meth:`~kernelopt.bench.report.ProfileReport.render`; this module is the reader, so a
report printed by one tool (or agent) is data again for the next.

``parse_profile(report.render()) == report`` holds for every report whose values are
what the text can carry: the renderer rounds numbers (durations and baseline values to 4
significant digits, percentages to 0.1, gains to whole percent), shows at most three
opportunities, writes ``|`` in table cells as ``/``, joins the root cause into one line
and leaves out the trial point's ``name``; table cells are stripped, and the
vs-Baseline Change is computed from the rounded Previous and Current it prints.
Otherwise the text is a fixed point whatever the values:
``parse_profile(text).render() == text`` for ``text = report.render()``.

A hand-written Top 3 may be a numbered list, bullets or a table with a rank or name
column. A Top 3 no opportunity could be read from is kept as why
(:attr:`~kernelopt.bench.report.ProfileReport.top3_unread`), which the rendering prints in
its place and the reader gives back as written. What the reader leaves out it says in a
:class:`ProfileWarning` naming the file and line: items past the third (not read, so that
the record holds what its rendering prints), a Top 3 no opportunity could be read from
(prose), bullets under or beside the list's items and a table beside the list, a table row
written under an item included (the record has no place for them), a Top 3 table after
the first (the first read), and words after the bottleneck verdict (``Memory-bound -- 54%
of the floor`` reads as Memory-bound). A share no percentage can be (a TC% below 0) is a
FormatError at its line, as the record refuses it, and so is a verdict that is none of
the three (``Memoryless``).
"""

from __future__ import annotations

import itertools
import math
import os
import re
import warnings

from kernelopt._errors import FormatError, expected
from kernelopt._words import and_list, count_text, noun
from kernelopt.bench.measurement import UNIT_SECONDS
from kernelopt.bench.report import (
    EXPERIMENT_NUMBER,
    NO_COUNTERS,
    NOTE_LEAD,
    UNREAD_TOP3,
    BaselineMetric,
    Bottleneck,
    Opportunity,
    ProfileReport,
    Stage,
    profile_point,
)
from kernelopt.bench.trials import TrialPoint
from kernelopt.experiments.points import point_terms
from kernelopt.experiments.readers._top3 import (
    ID_HEADER,
    LIST_ITEM,
    NAME_HEADER,
    NONE_STATED,
    RANK_HEADER,
    TOP,
    top_lead_title,
)
from kernelopt.experiments.readers._values import LATENCY_UNITS
from kernelopt.workflow._fields import require_text
from kernelopt.workflow._markdown import (
    HandoffWarning,
    Record,
    Section,
    bullet_items,
    fail,
    find_record,
    find_records,
    list_items,
    one_line,
    split_row,
    table_rows,
)

__all__ = [
    "BASELINE_COLUMNS",
    "STAGE_COLUMNS",
    "TOP",
    "ProfileWarning",
    "parse_point",
    "parse_profile",
    "parse_profiles",
]

STAGE_COLUMNS = ("Stage", "Duration", "TC%", "DRAM%", "Occ%", "Bottleneck", "Key Issue")
BASELINE_COLUMNS = ("Metric", "Previous", "Current", "Change")

# A run of digits splits one way only (`\d+\.?\d*` splits it as many ways as it is long,
# and a long cell that does not read then takes time quadratic in its length).
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan"
# The name is stripped, and ends where white space does, not with a `\s*` or `\s+` of its
# own: after a lazy name, one takes time quadratic in a long run of spaces.
_OPPORTUNITY = re.compile(
    rf"^(?P<name>.*?)\(`(?P<id>[^`]*)`\)\s+--\s+est\.\s+(?P<gain>{_NUMBER})\s*%\s+gain"
    r"\s+--\s+trigger:\s*(?P<trigger>.*)$"
)
# The contract's own example writes no entry id: "name -- est. X% gain -- trigger: ...".
_OPPORTUNITY_NO_ID = re.compile(
    rf"^(?P<name>.*?)(?<=\s)--\s+est\.\s+(?P<gain>{_NUMBER})\s*%\s+gain\s+--\s+trigger:\s*(?P<trigger>.*)$"
)
# A unit starts with a letter and is not an exponent ("1e+04" is a number)
_UNIT = r"(?![eE][-+]?\d)[^\W\d_]\S*"
# The unit starts with a letter: with any character allowed, "66.5" read as 66 with unit "5".
# After a space the unit is any token a Stage takes ("41.25 (cycles)"); written against
# the number it must start with a letter (see _UNIT).
_DURATION = re.compile(rf"^(?P<value>{_NUMBER})(?:\s+(?P<token>\S+)|(?P<unit>{_UNIT}))$")
_VALUE_UNIT = re.compile(rf"^(?P<value>{_NUMBER})\s*(?P<unit>%|{_UNIT})$")
_UNIT_SUFFIX = re.compile(r"\((?P<unit>[^()]+)\)\s*$")
_NOT_AVAILABLE = {NO_COUNTERS.lower(), "n/a", "na", "-", "—", ""}


def parse_point(text: str, *, record: Record | None = None) -> TrialPoint:
    """A trial point from ``b=32, s=1, t=4096, h=16`` (commas or spaces between terms).

    A hand-off's heading, a trial check and a profiler prompt take a kernel's own axes as
    well (``hidden=7168, tokens=4096``: see :func:`heading_point`); a point read here is
    a TrialPoint.

    Parameters
    ----------
    text : str
        ``name=integer`` terms; b, s and t are required, others become extra axes.
    record : Record, optional
        The hand-off the text was read from, to name its file and line in errors.

    Returns
    -------
    TrialPoint

    Raises
    ------
    InputError
        When ``text`` is not a str.
    FormatError
        When a term is not ``name=integer`` or b, s or t is missing.
    """
    point = heading_point(text, record=record)
    if isinstance(point, TrialPoint):
        return point
    missing = [axis for axis in ("b", "s", "t") if axis not in point_terms(point)]
    raise _point_error(
        record, "a trial point with b, s and t", f"{text.strip()!r} (no {', '.join(missing)})"
    )


def heading_point(text: str, *, record: Record | None = None) -> TrialPoint | str:
    """The trial point of a hand-off's heading: ``b=32, s=1, t=4096, h=16`` or a kernel's
    own axes (``hidden=7168, tokens=4096``), commas or spaces between terms.

    Parameters
    ----------
    text : str
        ``name=integer`` terms, each an integer >= 1.
    record : Record, optional
        The hand-off the text was read from, to name its file and line in errors.

    Returns
    -------
    TrialPoint or str
        A TrialPoint where b, s and t are given (others become extra axes), else the
        terms in their one spelling (``hidden=7168 tokens=4096``), as
        :func:`kernelopt.bench.report.profile_point` makes them.

    Raises
    ------
    InputError
        When ``text`` is not a str.
    FormatError
        When a term is not ``name=integer``, an axis is given twice or is below 1, or
        there is no term.
    """
    require_text(text, what="a trial point's text (a str)")
    # The heading's point follows its '|' after a space, which is no part of the point.
    text = text.strip()
    values: dict[str, int] = {}
    for term in filter(None, re.split(r"[,\s]+", text)):
        key, sep, value = term.partition("=")
        try:
            if not sep or not key:
                raise ValueError(term)
            number = int(value)
        except ValueError:
            raise _point_error(
                record,
                "a trial point like 'b=32, s=1, t=4096'",
                repr(text),
            ) from None
        if key in values:
            # The later value silently won: the report then named another point.
            raise _point_error(record, "each axis of a trial point once", f"{text!r} ({key} twice)")
        values[key] = number
    if not values:
        raise _point_error(record, "a trial point with at least one axis", repr(text))
    try:
        return profile_point(values)
    except ValueError as error:  # InputError: an axis below 1, a name that reads otherwise
        if record is None:
            raise FormatError(str(error).removeprefix("point: ")) from None
        raise _point_error(record, "a trial point with axes >= 1", repr(text)) from None


def _point_error(record: Record | None, what: str, got: str) -> FormatError:
    """The error of a point read alone, or of a hand-off's heading (its file and line)."""
    if record is None:
        return FormatError(expected(what, got))
    return fail(record, what, got, section="Profile")


def _percent(record: Record, cell: str, line: int, column: str) -> float | None:
    """The share in ``cell`` (None for ``n/a (no counters)``); one no percentage can be is
    a FormatError at its line."""
    text = cell.strip().rstrip("%").strip()
    if text.lower() in _NOT_AVAILABLE or cell.strip().lower() in _NOT_AVAILABLE:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise fail(
            record,
            f"a number or '{NO_COUNTERS}' in {column}",
            repr(cell),
            line=line,
            section="Stages",
        )
    # No share is below 0. TC% and DRAM% are shares of measured ceilings, which a call may
    # pass (a read-only kernel can beat a copy's bandwidth); occupancy stops at 100. The
    # record refuses them too, but without the line they were read from.
    most = 100.0 if column == "Occ%" else math.inf
    if not 0 <= value <= most:
        shown = "a percentage >= 0" if math.isinf(most) else "a percentage in [0, 100]"
        raise fail(record, f"{shown} in {column}", repr(cell), line=line, section="Stages")
    return value


def _number(record: Record, cell: str, line: int, what: str, section: str) -> float:
    try:
        value = float(cell.strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value):  # "nan" and "inf" parse, but no metric reads so
        raise fail(record, what, repr(cell), line=line, section=section)
    return value


def _number_and_unit(
    record: Record, cell: str, line: int, what: str, section: str
) -> tuple[float, str]:
    # A hand-written table puts the unit in the cell ("74 us", "45.2%"); a rendered one
    # puts it after the metric's name.
    match = _VALUE_UNIT.match(cell.strip())
    if match is None:
        return _number(record, cell, line, what, section), ""
    return _number(record, match.group("value"), line, what, section), match.group("unit")


def _stages(record: Record) -> tuple[Stage, ...]:
    """The Stages table's rows."""
    # Each section once: the contract writes one of each per hand-off (several trial
    # points are several hand-offs), and a second table read past would drop its stages.
    section = record.require("Stages")
    rows = table_rows(record, section, STAGE_COLUMNS)
    if not rows:
        # A header alone was read as no stage, and the record then failed far from the
        # file (a devlog row needs a stage to time).
        raise fail(record, "at least one stage row", "none", line=section.line, section="Stages")
    stages = []
    for line, cells in rows:
        name, duration, tc, dram, occ, bottleneck, issue = cells
        match = _DURATION.match(duration.strip())
        if match is None:
            raise fail(
                record, "a duration like '41.25 us'", repr(duration), line=line, section="Stages"
            )
        value = float(match.group("value"))
        if not (math.isfinite(value) and value >= 0):
            # "-5 us", "nan us" and "1e400 us" (inf) read as numbers but are no duration.
            raise fail(
                record, "a finite duration >= 0", repr(duration), line=line, section="Stages"
            )
        tc_pct = _percent(record, tc, line, "TC%")
        dram_pct = _percent(record, dram, line, "DRAM%")
        occupancy_pct = _percent(record, occ, line, "Occ%")
        stages.append(
            Stage(
                name=name,
                duration=value,
                unit=match.group("token") or match.group("unit"),
                tc_pct=tc_pct,
                dram_pct=dram_pct,
                occupancy_pct=occupancy_pct,
                bottleneck=bottleneck,
                key_issue=issue,
            )
        )
    return tuple(stages)


# The verdict of a `### Bottleneck:` heading: the kind as a whole word ("Memoryless" is
# none), "bound" optional, then what the record has no field for.
_VERDICT = re.compile(
    r"^(?P<kind>memory|compute|latency)(?:[\s_-]*bound)?(?![^\W_])(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_VERDICT_FORM = "'Memory-bound', 'Compute-bound' or 'Latency-bound'"


def _bottleneck(record: Record, notes: list[str]) -> tuple[Bottleneck, str]:
    """The verdict and the root cause; words after the verdict are named in ``notes``."""
    section = record.require("Bottleneck:", shown="Bottleneck: [Memory/Compute/Latency]-bound")
    verdict = section.rest("Bottleneck:")
    match = _VERDICT.match(verdict)
    if match is None:
        raise fail(record, _VERDICT_FORM, repr(verdict), line=section.line, section="Bottleneck")
    found = {option.value.split("-")[0].lower(): option for option in Bottleneck}[
        match.group("kind").lower()
    ]
    # "Memory-bound -- 54% of the floor" was read as the verdict alone, and the rest was
    # gone without a word: the record holds the verdict only, so the rest is named.
    rest = match.group("rest").strip(" \t.,;:")
    if rest:
        message = fail(
            record,
            f"the verdict alone ({_VERDICT_FORM})",
            repr(verdict),
            line=section.line,
            section="Bottleneck",
        )
        notes.append(
            f"{message}; read as {found.value}, and not read: {rest!r} (write it under "
            "'Root cause:')"
        )
    cause: list[str] = []
    for _, line in section.body:
        stripped = line.strip()
        if not cause:
            if stripped.lower().startswith("root cause:"):
                cause.append(stripped[len("root cause:") :])
            continue
        if not stripped or stripped.startswith(("|", "#", "-", "*")):
            break  # the root cause paragraph ends at a blank line, a table or a list
        cause.append(stripped)
    if not cause:
        raise fail(
            record,
            "a 'Root cause: ...' line under '### Bottleneck:'",
            "none",
            line=section.line,
            section="Bottleneck",
        )
    return found, one_line(" ".join(cause))


class ProfileWarning(HandoffWarning):
    """Part of a profile hand-off was left out when read: items beyond the third of the
    Top 3, a Top 3 no opportunity could be read from (prose), bullets or a table beside
    the Top 3's list (a row right under an item too), a Top 3 table after the first, or
    words after the bottleneck verdict.

    Exported as ``kernelopt.workflow.ProfileWarning``, so that a filter names it:
    ``warnings.filterwarnings("error", category=ProfileWarning)`` refuses such a hand-off.
    """


_SECTION = "Top 3 Opportunities"
_OPPORTUNITY_FORM = "'name (`entry-id`) -- est. 30% gain -- trigger: dram_pct=40'"
# The columns of a Top 3 written as a table, told by their headers (lower case, "_" read
# as a space): rank, name and id as the log reader tells them (_top3); a gain column is
# needed.
_GAIN_HEADER = re.compile(r"\b(?:gain|impact|saving\w*|speedup)\b")
_TRIGGER_HEADER = re.compile(r"\b(?:trigger\w*|evidence|why|reason)\b")
_SEPARATOR = re.compile(r"^:?-{2,}:?$")
_TABLE_GAIN = re.compile(
    rf"^(?:est(?:\.|imated)?\s*|~\s*|≈\s*)?(?P<gain>{_NUMBER})\s*%?(?:\s*gain)?$", re.IGNORECASE
)
_NAME_WITH_ID = re.compile(r"^(?P<name>.*?)\s*\(`(?P<id>[^`]*)`\)$")
# The line a report whose Top 3 could not be read renders in its place (see _unread).
_UNREAD_RENDERED = re.compile(rf"^\({re.escape(UNREAD_TOP3)}:\s*(?P<reason>.*\S)\s*\)$")


def _opportunities(record: Record, notes: list[str]) -> tuple[tuple[Opportunity, ...], str]:
    """The Top 3, written as a numbered list, as bullets or as a table, and why it could not
    be read (empty when it was).

    Items past the third are left out, each named in ``notes``, so that the record holds
    what its rendering prints; a section that holds none of the three forms and does not
    say "none" reads as no opportunity, with the reason, and ``notes`` says that the Top 3
    could not be read.
    """
    lead = _lead_line(record) if record.find(_SECTION) is None else None
    if lead is not None:
        raise _lead_not_heading(record, *lead)
    section = record.require(_SECTION, shown=_SECTION)
    # Bullets too, as the other hand-offs read their lists: a Top 3 written as `- ...` items
    # was read as no opportunity at all, and printed back as "none fired". An item wrapped
    # onto the next lines keeps them (up to a blank line or the next item): read line by
    # line, a trigger wrapped after its first line lost the rest without a word.
    # A table row written under an item is no part of its text: it is named as not read,
    # as a table beside the list is, where joined it made the trigger read on into it.
    items = list_items(section, table_ends_item=True)
    if items:
        # Only the first three are read: an item beyond is named as not read, and one
        # written in another form (no trigger) failed the whole hand-off.
        found = [(line, _listed(record, line, text)) for line, text in items[:TOP]]
        beyond = items[TOP:]
        notes += _unlisted(record, section, items)
    else:
        table = _table(record, section, notes)
        if table is None:
            return (), _unread(record, section, notes)
        found, beyond = table
    return _top(record, found, beyond, notes), ""


def _lead_line(record: Record) -> tuple[int, str] | None:
    """The line and text of a lead line that opens the Top 3 in place of its heading
    (``**Top 3 Opportunities**`` right over a list or a table), or None.

    The hand-off's sections are its ``###`` headings: such a line is prose of the section
    above it, so the Top 3 under it is missing, and the error names the line to make a
    ``### Top 3 Opportunities`` heading of.
    """
    for section in record.sections:
        for index, (number, text) in enumerate(section.body):
            if top_lead_title(text) is None:
                continue
            after = next((line for _, line in section.body[index + 1 :] if line.strip()), "")
            # A list item or a table row, as the log readers take under a lead line.
            if LIST_ITEM.match(after) or after.lstrip().startswith("|"):
                return number, text.strip()
    return None


def _lead_not_heading(record: Record, line: int, text: str) -> FormatError:
    """The error of a hand-off whose Top 3 a lead line at ``line`` opens, not a heading."""
    return FormatError(
        expected(
            f"a '### {_SECTION}' section in the profile hand-off that starts at line {record.line}",
            f"none: line {line}, {text!r}, opens it as a lead line, not as that heading",
        ),
        path=record.path,
        line=line,
        section=_SECTION,
    )


def _unlisted(record: Record, section: Section, items: list[tuple[int, str]]) -> list[str]:
    """What a Top 3 read as a list holds besides its items, named as not read.

    The opportunities are the numbered items (else the outermost bullets); a bullet under
    or beside them (``   - needs a combine kernel``) and a table in the same section were
    dropped without a word, as the record has no place for them.
    """
    read = {line for line, _ in items}
    others = [
        (line, text)
        for line, text in bullet_items(section, table_ends_item=True)
        if line not in read
    ]
    rows = [line for line, text in section.body if text.lstrip().startswith("|")]
    notes = []
    if others:
        shown = "; ".join(f"line {line}: {text!r}" for line, text in others)
        message = fail(
            record,
            "the Top 3 as one list of opportunities",
            f"{count_text(len(others), 'other item')} beside it",
            line=others[0][0],
            section=_SECTION,
        )
        notes.append(f"{message}; not read: {shown}")
    if rows:
        message = fail(
            record,
            "the Top 3 as a list or a table, not both",
            f"a table at line {rows[0]} beside the list at line {items[0][0]}",
            line=rows[0],
            section=_SECTION,
        )
        notes.append(f"{message}; the list read, the table not read")
    return notes


def _listed(record: Record, line: int, text: str) -> Opportunity:
    """The opportunity of one list item (``name (`id`) -- est. 30% gain -- trigger: ...``)."""
    match = _OPPORTUNITY.match(text) or _OPPORTUNITY_NO_ID.match(text)
    if match is None:
        raise fail(
            record,
            f"an opportunity like {_OPPORTUNITY_FORM}",
            repr(text),
            line=line,
            section=_SECTION,
        )
    groups = match.groupdict()
    return _opportunity(
        record,
        line,
        name=groups["name"].strip(),
        entry_id=(groups.get("id") or "").strip(),
        gain=groups["gain"],
        trigger=groups["trigger"].strip(),
    )


def _opportunity(
    record: Record, line: int, *, name: str, entry_id: str, gain: str, trigger: str
) -> Opportunity:
    """One opportunity read at ``line``; a value the record refuses is a FormatError there."""
    value = float(gain)
    if not math.isfinite(value):  # "nan%", or "1e400%" read as inf
        raise fail(record, "a finite estimated gain", repr(f"{gain}%"), line=line, section=_SECTION)
    # The record refuses these too, but without the line they were read from. A backtick
    # is met only in a table's Entry cell: the list form's id is written between two.
    if any(char.isspace() for char in entry_id):
        raise fail(
            record, "an entry id without spaces", repr(entry_id), line=line, section=_SECTION
        )
    if "`" in entry_id:
        raise fail(
            record, "an entry id without backticks", repr(entry_id), line=line, section=_SECTION
        )
    return Opportunity(name=name, entry_id=entry_id, gain_pct=value, trigger=trigger)


def _header_role(header: str) -> str | None:
    """What a Top 3 table's column holds, by its header: rank, gain, trigger, name or id."""
    text = " ".join(header.strip("*` ").replace("_", " ").lower().split())
    for role, pattern in (
        ("rank", RANK_HEADER),
        ("gain", _GAIN_HEADER),
        ("trigger", _TRIGGER_HEADER),
        ("name", NAME_HEADER),
        ("id", ID_HEADER),
    ):
        if pattern.search(text):
            return role
    return None


def _columns(header: list[str]) -> dict[str, int] | None:
    """The column of each role a Top 3 table's header names, or None for a table that is no
    Top 3 (neither a rank nor a name column). Without a name column, the first column of no
    other role holds the names."""
    columns: dict[str, int] = {}
    for index, cell in enumerate(header):
        role = _header_role(cell)
        if role is not None:
            columns.setdefault(role, index)
    if "rank" not in columns and "name" not in columns:
        return None
    if "name" not in columns:
        taken = set(columns.values())
        rest = [index for index in range(len(header)) if index not in taken]
        if not rest:
            return None
        columns["name"] = rest[0]
    return columns


def _table(
    record: Record, section: Section, notes: list[str]
) -> tuple[list[tuple[int, Opportunity]], list[tuple[int, str]]] | None:
    """The opportunities of a Top 3 written as a table (``| Rank | Opportunity | Entry |
    Est. Gain | Trigger |``), in the order written, and the line and text of each data row
    beyond the third (not read, see :func:`_top`); None when the section holds no table
    whose header names a rank or a name column, or one without rows. A table after the
    first is not read, and ``notes`` names it; a header row without its separator, where a
    data row should be, is a FormatError naming it as a header row."""
    rows = [(number, line) for number, line in section.body if line.lstrip().startswith("|")]
    if not rows:
        return None
    rows, later = _first_table(rows)
    header_line, header_text = rows[0]
    header = split_row(header_text)
    columns = _columns(header)
    if columns is None:
        return None
    if "gain" not in columns:
        raise fail(
            record,
            "a Top 3 table with an estimated gain column (| Rank | Opportunity | Entry | "
            "Est. Gain | Trigger |)",
            repr(header_text.strip()),
            line=header_line,
            section=_SECTION,
        )
    found: list[tuple[int, Opportunity]] = []
    beyond: list[tuple[int, str]] = []
    for number, line in rows[1:]:
        cells = split_row(line)
        if _is_separator(line):
            continue
        if _misplaced_header(cells, len(header), columns):
            raise fail(
                record,
                f"a data row of the Top 3 table whose header is at line {header_line}",
                f"a header row at line {number}: {line.strip()!r} (a second table starts "
                "with its header row and a |---| separator line under it)",
                line=number,
                section=_SECTION,
            )
        if len(found) == TOP:
            beyond.append((number, line.strip()))
            continue
        if len(cells) != len(header):
            raise fail(
                record,
                f"{len(header)} cells, as the header has",
                f"{len(cells)} in {line.strip()!r}",
                line=number,
                section=_SECTION,
            )
        found.append((number, _tabled(record, number, cells, columns)))
    if later:
        notes.append(_later_tables(record, header_line, later))
    return (found, beyond) if found else None


def _misplaced_header(cells: list[str], width: int, columns: dict[str, int]) -> bool:
    """Whether a row that cannot be read as one of the table's data rows is a Top 3 header.

    A second table's header written without its ``|---|`` separator is no table of its
    own: it was read as a data row, and failed as a gain of 'Est. Gain'. A row is told as
    a header only when it would fail anyway (its cells are not as many as the header's, or
    its gain cell holds no gain), so that no row that reads as data is refused.
    """
    own = _columns(cells)
    if own is None or "gain" not in own:
        return False
    return len(cells) != width or _TABLE_GAIN.match(_gain_text(cells, columns)) is None


def _gain_text(cells: list[str], columns: dict[str, int]) -> str:
    """The text of a row's gain cell, without the emphasis or backticks around it."""
    return cells[columns["gain"]].strip().strip("*`").strip()


def _is_separator(row: str) -> bool:
    """Whether a table row is a header's ``|---|---|`` separator."""
    return all(_SEPARATOR.match(cell) for cell in split_row(row))


def _first_table(rows: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], list[int]]:
    """The rows of the section's first table, and the header line of each table after it.

    A table starts where a row is followed, on the next line, by a separator: the second
    table's header, read as a row of the first, failed as a gain of 'Est. Gain'. A header
    row without its separator starts no table (see :func:`_misplaced_header`).
    """
    starts = [
        line
        for (line, text), (next_line, next_text) in itertools.pairwise(rows[1:])
        if next_line == line + 1 and _is_separator(next_text) and not _is_separator(text)
    ]
    if not starts:
        return rows, []
    return [row for row in rows if row[0] < starts[0]], starts


def _later_tables(record: Record, first: int, later: list[int]) -> str:
    """The note naming the Top 3 tables after the one read (its header at ``first``).

    Not read, as a table beside the list is not: the Top 3 is one ranking, and rows of two
    tables, each ranked on its own, would not make one.
    """
    lines = and_list([str(line) for line in [first, *later]])
    message = fail(
        record,
        "the Top 3 as one table",
        f"{count_text(len(later) + 1, 'table')} (header rows at lines {lines})",
        line=later[0],
        section=_SECTION,
    )
    shown = and_list([str(line) for line in later])
    return (
        f"{message}; the table at line {first} read, the {noun(len(later), 'table')} at "
        f"{noun(len(later), 'line')} {shown} not read"
    )


def _tabled(record: Record, line: int, cells: list[str], columns: dict[str, int]) -> Opportunity:
    """The opportunity of one row of a Top 3 table."""
    name = cells[columns["name"]].strip()
    entry_id = cells[columns["id"]].strip().strip("`").strip() if "id" in columns else ""
    with_id = _NAME_WITH_ID.match(name)
    if with_id is not None and not entry_id:
        name, entry_id = with_id.group("name").strip(), with_id.group("id").strip()
    if not name:
        raise fail(record, "an opportunity's name", "an empty cell", line=line, section=_SECTION)
    gain_cell = _gain_text(cells, columns)
    gain = _TABLE_GAIN.match(gain_cell)
    if gain is None:
        raise fail(
            record, "an estimated gain like '30%'", repr(gain_cell), line=line, section=_SECTION
        )
    trigger = cells[columns["trigger"]].strip() if "trigger" in columns else ""
    return _opportunity(
        record, line, name=name, entry_id=entry_id, gain=gain.group("gain"), trigger=trigger
    )


def _unread(record: Record, section: Section, notes: list[str]) -> str:
    """Why the Top 3 could not be read (``Expected ..., got ...``), said in ``notes`` at its
    line; empty when the section says there is none.

    A section a rendering wrote for such a Top 3, ``(the Top 3 could not be read: why)``,
    gives its ``why`` back as written: read as a Top 3 in prose, the reason would grow by
    one quotation each time the report was printed and read again.
    """
    written = [(number, line.strip()) for number, line in section.body if line.strip()]
    if written and NONE_STATED.match(written[0][1]):
        return ""
    line, got = written[0] if written else (section.line, "an empty section")
    rendered = _UNREAD_RENDERED.match(got) if written else None
    if rendered is not None:
        reason = rendered.group("reason")
    else:
        reason = expected(
            f"the Top 3 as a numbered list ({_OPPORTUNITY_FORM}) or a table with a Rank or "
            "Name column",
            repr(got) if written else got,
        )
    located = FormatError(reason, path=record.path, line=line, section=_SECTION)
    notes.append(f"{located}; {UNREAD_TOP3}: read as no opportunities")
    return reason


def _top(
    record: Record,
    found: list[tuple[int, Opportunity]],
    beyond: list[tuple[int, str]],
    notes: list[str],
) -> tuple[Opportunity, ...]:
    """The :data:`TOP` opportunities ``found``; the items ``beyond`` them (line and text as
    written) are named in ``notes``, not kept: a rendering prints the first three, and a
    record holding a fourth would say more than its text does. An item beyond is named as
    written, not read: it need not be in a form the reader knows (it is no opportunity of
    the record), and its text is what the writer finds it by."""
    if beyond:
        shown = "; ".join(f"line {line}: {text!r}" for line, text in beyond)
        message = fail(
            record,
            f"at most {TOP} opportunities in the Top 3",
            f"{len(found) + len(beyond)}",
            line=beyond[0][0],
            section=_SECTION,
        )
        notes.append(f"{message}; beyond the Top 3 and not read: {shown}")
    return tuple(item for _, item in found)


def _baseline_unit(metric: str, change: str) -> str:
    # The table does not print BaselineMetric.unit: percentages show as "pp" changes,
    # time units as the "(us)" suffix profile_report gives the metric's name.
    if change.strip().endswith("pp"):
        return "%"
    match = _UNIT_SUFFIX.search(metric)
    if match and match.group("unit").strip() in UNIT_SECONDS:
        return match.group("unit").strip()
    return ""


def _cell_unit(metric: str, unit: str) -> str:
    """The unit of a baseline row whose cells carry ``unit`` (``74 µs``).

    The table shows a time unit only as the metric's ``(us)`` suffix, and only for the
    spellings ``UNIT_SECONDS`` knows: ``µs`` is read as ``us`` so that it is shown, unless
    the metric's own suffix already names a time unit.
    """
    canonical = LATENCY_UNITS.get(unit)
    suffix = _UNIT_SUFFIX.search(metric)
    if canonical is None or (suffix and suffix.group("unit").strip() in LATENCY_UNITS):
        return unit
    return canonical


def _baseline(record: Record) -> tuple[BaselineMetric, ...]:
    section = record.find("vs Baseline")
    if section is None:
        return ()
    rows = []
    for line, cells in table_rows(record, section, BASELINE_COLUMNS):
        metric, previous, current, change = cells
        before, before_unit = _number_and_unit(
            record, previous, line, "a number in Previous", "vs Baseline"
        )
        after, after_unit = _number_and_unit(
            record, current, line, "a number in Current", "vs Baseline"
        )
        if before_unit != after_unit:
            raise fail(
                record,
                f"Previous and Current in the same unit ({before_unit or 'none'})",
                repr(current),
                line=line,
                section="vs Baseline",
            )
        rows.append(
            BaselineMetric(
                metric=metric,
                previous=before,
                current=after,
                unit=_cell_unit(metric, before_unit) or _baseline_unit(metric, change),
            )
        )
    return tuple(rows)


def _head(record: Record) -> tuple[str, str, int | None, TrialPoint | str]:
    """The heading's kernel, version, experiment number (None where it names none) and
    point."""
    what, sep, where = record.heading.rpartition("|")
    names = what.split()
    if not sep or len(names) < 2:
        raise fail(
            record,
            "'## Profile: <kernel> <version> | <axis>=<int>, ...' (b=X, s=X, t=X)",
            repr(f"## Profile: {record.heading}"),
            section="Profile",
        )
    what = what.strip()
    experiment = None
    # "<kernel> <version> exp <N>", as profile_report(experiment=N) writes it; with one
    # word before "exp N" ("mla_decode exp 5") the words are a kernel and a version.
    if (
        len(names) >= 4
        and names[-2].lower() == "exp"
        and EXPERIMENT_NUMBER.fullmatch(names[-1]) is not None
    ):
        experiment = int(names[-1])
        what = what[: -len(names[-1])].rstrip()[: -len(names[-2])].rstrip()
        names = names[:-2]
    kernel = what[: -len(names[-1])].strip()
    return kernel, names[-1], experiment, heading_point(where, record=record)


def _note(record: Record) -> str:
    """The Top 3's note line, ``(note: ...)``, as a rendering writes it under the list;
    empty where there is none."""
    section = record.find(_SECTION)
    if section is None:
        return ""
    for _, line in section.body:
        text = line.strip()
        if text.startswith(f"({NOTE_LEAD}") and text.endswith(")"):
            note = " ".join(text[len(NOTE_LEAD) + 1 : -1].split())
            if note:
                return note
    return ""


def parse_profile(text: str, *, path: str | os.PathLike[str] | None = None) -> ProfileReport:
    """Read the profiler's ``## Profile:`` hand-off into a :class:`ProfileReport`.

    Parameters
    ----------
    text : str
        Markdown holding the hand-off; prose before, after and between its sections,
        CRLF line ends and a surrounding code fence are ignored.
    path : path-like, optional
        Where ``text`` came from, named in errors.

    Returns
    -------
    ProfileReport
        The record :meth:`ProfileReport.render` would print as ``text``: a heading
        ``## Profile: <kernel> <version> exp <N> | ...`` gives its ``experiment`` (with
        two words at least before ``exp N``; ``mla_decode exp 5`` stays a kernel and a
        version), and a ``(note: ...)`` line under the Top 3 its ``note``.

    Raises
    ------
    FormatError
        Naming the missing, repeated (a second `### Stages`, say), empty (a Stages table
        without rows) or unreadable section and its line, or a value the record cannot
        hold (a TC% below 0, say, or a verdict other than Memory-, Compute- or
        Latency-bound), or a Top 3 table's header row written again without its
        separator, where a data row should be.

    Warns
    -----
    ProfileWarning
        Naming the file and line, when the Top 3 lists more than three opportunities
        (those beyond are not read, as a rendering prints three), when no opportunity
        could be read from it (prose, an empty section) and it does not say "none", when
        it holds bullets or a table besides its list (not read; a table row right under an
        item is not read into its text), when it holds a second table (the first read),
        or when the bottleneck heading says more than the verdict (``Memory-bound
        (DRAM)``: the rest not read).

    Examples
    --------
    >>> from kernelopt.bench import Bottleneck, ProfileReport, Stage
    >>> from kernelopt.workflow import parse_profile
    >>> report = ProfileReport(
    ...     kernel="mla_decode", version="v2", point={"b": 32, "s": 1, "t": 4096},
    ...     stages=[Stage(name="decode", duration=66.53, tc_pct=9.9, dram_pct=53.8)],
    ...     bottleneck=Bottleneck.MEMORY, root_cause="Bytes set the floor.",
    ... )
    >>> parse_profile("Here it is:\\n\\n" + report.render()) == report
    True
    """
    notes: list[str] = []
    report = _report(find_record(text, "Profile:", kind="profile", path=path), notes)
    _warn(notes)
    return report


def parse_profiles(text: str, *, path: str | os.PathLike[str] | None = None) -> list[ProfileReport]:
    """Read every ``## Profile:`` hand-off in ``text``, in order.

    ``kernelopt report profile --rows`` prints one hand-off per trial point; this reads
    all of them back, where :func:`parse_profile` reads the first.

    Parameters
    ----------
    text : str
        Markdown holding one or more hand-offs, read as :func:`parse_profile` reads one.
    path : path-like, optional
        Where ``text`` came from, named in errors.

    Returns
    -------
    list of ProfileReport
        One per ``## Profile:`` heading.

    Raises
    ------
    FormatError
        When there is none, or one is malformed (naming its section and line).

    Warns
    -----
    ProfileWarning
        As :func:`parse_profile`, for each hand-off.

    Examples
    --------
    >>> from kernelopt.bench import Bottleneck, ProfileReport, Stage
    >>> from kernelopt.workflow import parse_profiles
    >>> reports = [
    ...     ProfileReport(
    ...         kernel="mla_decode", version="v2", point={"b": b, "s": 1, "t": 4096},
    ...         stages=[Stage(name="decode", duration=66.53, dram_pct=53.8)],
    ...         bottleneck=Bottleneck.MEMORY, root_cause="Bytes set the floor.",
    ...     )
    ...     for b in (32, 64)
    ... ]
    >>> parse_profiles("\\n".join(report.render() for report in reports)) == reports
    True
    """
    reports, notes = _read_profiles(text, path=path)
    _warn(notes)
    return reports


def _read_profiles(
    text: str, *, path: str | os.PathLike[str] | None = None
) -> tuple[list[ProfileReport], list[str]]:
    """Every hand-off in ``text``, and what its reading left out, as the
    :class:`ProfileWarning` messages :func:`parse_profiles` would give.

    ``kernelopt report profile --check`` lists these as problems: whatever Python's
    warning filters say, a check does not pass a hand-off it could not fully read.
    """
    notes: list[str] = []
    records = find_records(text, "Profile:", kind="profile", path=path)
    return [_report(record, notes) for record in records], notes


def _check_profiles(
    text: str, *, path: str | os.PathLike[str] | None = None
) -> tuple[list[ProfileReport], list[str]]:
    """Every hand-off in ``text``, and the problems ``kernelopt report profile --check``
    lists for it: what the reader left out (see :func:`_read_profiles`), then each
    hand-off of a kernel, version and trial point written before in ``text``.

    Both such hand-offs are read, as every hand-off is; but of two profiles of one point
    (a re-run pasted under the first) which one holds is the writer's call, as of two
    tasks or versions in a file, which ``report task|version`` refuse. The reader does not
    warn of it: a text of several hand-offs is read whole, whatever they repeat.
    """
    reports, notes = _read_profiles(text, path=path)
    records = find_records(text, "Profile:", kind="profile", path=path)
    return reports, notes + _repeated_points(records, reports)


def _repeated_points(records: list[Record], reports: list[ProfileReport]) -> list[str]:
    """A problem for each of ``records`` whose report (kernel, version and trial point)
    an earlier one has, naming its heading as written and both headings' lines."""
    first: dict[tuple[str, str, str], int] = {}
    problems = []
    for record, report in zip(records, reports, strict=True):
        key = (report.kernel, report.version, str(report.point))
        if key not in first:
            first[key] = record.line
            continue
        problem = fail(
            record,
            "one hand-off per kernel, version and trial point",
            f"'{record.heading.strip()}' at lines {first[key]} and {record.line}",
            section="Profile",
        )
        problems.append(f"{problem}; which one holds is the writer's call")
    return problems


def _warn(notes: list[str]) -> None:
    """Each note as a :class:`ProfileWarning`, at the line that called the reader."""
    for note in notes:
        warnings.warn(note, ProfileWarning, stacklevel=3)


def _report(record: Record, notes: list[str]) -> ProfileReport:
    """The report of one hand-off; what was left out of it is added to ``notes``."""
    kernel, version, experiment, point = _head(record)
    bottleneck, cause = _bottleneck(record, notes)
    # The Stages before the Top 3, as the contract writes them: of two malformed sections,
    # the first written is the one an error names.
    stages = _stages(record)
    opportunities, unread = _opportunities(record, notes)
    return ProfileReport(
        kernel=kernel,
        version=version,
        point=point,
        stages=stages,
        bottleneck=bottleneck,
        root_cause=cause,
        opportunities=opportunities,
        baseline=_baseline(record),
        top3_unread=unread,
        experiment=experiment,
        note=_note(record),
    )
