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
"""

from __future__ import annotations

import math
import os
import re

from kernelopt._errors import FormatError, expected
from kernelopt.bench.measurement import UNIT_SECONDS
from kernelopt.bench.report import (
    NO_COUNTERS,
    BaselineMetric,
    Bottleneck,
    Opportunity,
    ProfileReport,
    Stage,
)
from kernelopt.bench.trials import TrialPoint
from kernelopt.experiments.readers._values import LATENCY_UNITS
from kernelopt.workflow._fields import require_text
from kernelopt.workflow._markdown import (
    Record,
    fail,
    find_record,
    find_records,
    list_items,
    one_line,
    table_rows,
)

__all__ = [
    "BASELINE_COLUMNS",
    "STAGE_COLUMNS",
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
    require_text(text, what="a trial point's text (a str)")
    values: dict[str, int] = {}
    for term in filter(None, re.split(r"[,\s]+", text.strip())):
        key, sep, value = term.partition("=")
        try:
            if not sep or not key:
                raise ValueError(term)
            number = int(value)
        except ValueError:
            raise _point_error(
                record, "a trial point like 'b=32, s=1, t=4096'", repr(text)
            ) from None
        if key in values:
            # The later value silently won: the report then named another point.
            raise _point_error(record, "each axis of a trial point once", f"{text!r} ({key} twice)")
        values[key] = number
    missing = [axis for axis in ("b", "s", "t") if axis not in values]
    if missing:
        raise _point_error(
            record, "a trial point with b, s and t", f"{text!r} (no {', '.join(missing)})"
        )
    extra = {key: value for key, value in values.items() if key not in ("b", "s", "t")}
    try:
        return TrialPoint(b=values["b"], s=values["s"], t=values["t"], extra=extra)
    except ValueError as error:  # InputError: an axis below 1
        if record is None:
            raise FormatError(str(error)) from None
        raise _point_error(record, "a trial point with axes >= 1", repr(text)) from None


def _point_error(record: Record | None, what: str, got: str) -> FormatError:
    """The error of a point read alone, or of a hand-off's heading (its file and line)."""
    if record is None:
        return FormatError(expected(what, got))
    return fail(record, what, got, section="Profile")


def _percent(record: Record, cell: str, line: int, column: str) -> float | None:
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
    # Each section once: the contract writes one of each per hand-off (several trial
    # points are several hand-offs), and a second table read past would drop its stages.
    section = record.require("Stages")
    stages = []
    for line, cells in table_rows(record, section, STAGE_COLUMNS):
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
        stages.append(
            Stage(
                name=name,
                duration=value,
                unit=match.group("token") or match.group("unit"),
                tc_pct=_percent(record, tc, line, "TC%"),
                dram_pct=_percent(record, dram, line, "DRAM%"),
                occupancy_pct=_percent(record, occ, line, "Occ%"),
                bottleneck=bottleneck,
                key_issue=issue,
            )
        )
    return tuple(stages)


def _bottleneck(record: Record) -> tuple[Bottleneck, str]:
    section = record.require("Bottleneck:", shown="Bottleneck: [Memory/Compute/Latency]-bound")
    verdict = section.rest("Bottleneck:")
    found = None
    for option in Bottleneck:
        if verdict.lower().startswith(option.value.split("-")[0].lower()):
            found = option
    if found is None:
        raise fail(
            record,
            "'Memory-bound', 'Compute-bound' or 'Latency-bound'",
            repr(verdict),
            line=section.line,
            section="Bottleneck",
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


def _opportunities(record: Record) -> tuple[Opportunity, ...]:
    section = record.require("Top 3 Opportunities", shown="Top 3 Opportunities")
    found = []
    # Bullets too, as the other hand-offs read their lists: a Top 3 written as `- ...` items
    # was read as no opportunity at all, and printed back as "none fired". An item wrapped
    # onto the next lines keeps them (up to a blank line or the next item): read line by
    # line, a trigger wrapped after its first line lost the rest without a word.
    for line, text in list_items(section):
        match = _OPPORTUNITY.match(text) or _OPPORTUNITY_NO_ID.match(text)
        if match is None:
            raise fail(
                record,
                "an opportunity like 'name (`entry-id`) -- est. 30% gain -- trigger: dram_pct=40'",
                repr(text),
                line=line,
                section="Top 3 Opportunities",
            )
        groups = match.groupdict()
        gain = float(groups["gain"])
        if not math.isfinite(gain):  # "nan%", or "1e400%" read as inf
            raise fail(
                record,
                "a finite estimated gain",
                repr(f"{groups['gain']}%"),
                line=line,
                section="Top 3 Opportunities",
            )
        entry_id = (groups.get("id") or "").strip()
        if any(char.isspace() for char in entry_id):
            # The record refuses it too, but without the line it was read from.
            raise fail(
                record,
                "an entry id without spaces",
                repr(entry_id),
                line=line,
                section="Top 3 Opportunities",
            )
        found.append(
            Opportunity(
                name=groups["name"].strip(),
                entry_id=entry_id,
                gain_pct=gain,
                trigger=groups["trigger"].strip(),
            )
        )
    return tuple(found)


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


def _head(record: Record) -> tuple[str, str, TrialPoint]:
    what, sep, where = record.heading.rpartition("|")
    names = what.split()
    if not sep or len(names) < 2:
        raise fail(
            record,
            "'## Profile: <kernel> <version> | b=X, s=X, t=X'",
            repr(f"## Profile: {record.heading}"),
            section="Profile",
        )
    kernel = what.strip()[: -len(names[-1])].strip()
    return kernel, names[-1], parse_point(where, record=record)


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
        The record :meth:`ProfileReport.render` would print as ``text``.

    Raises
    ------
    FormatError
        Naming the missing, repeated (a second `### Stages`, say) or unreadable section
        and its line.

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
    return _report(find_record(text, "Profile:", kind="profile", path=path))


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
    return [_report(record) for record in find_records(text, "Profile:", kind="profile", path=path)]


def _report(record: Record) -> ProfileReport:
    kernel, version, point = _head(record)
    bottleneck, cause = _bottleneck(record)
    return ProfileReport(
        kernel=kernel,
        version=version,
        point=point,
        stages=_stages(record),
        bottleneck=bottleneck,
        root_cause=cause,
        opportunities=_opportunities(record),
        baseline=_baseline(record),
    )
