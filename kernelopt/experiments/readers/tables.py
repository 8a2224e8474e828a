"""Experiment tables: ``summary.md`` and every table that lists one experiment per row.

Columns are recognized by their headers, in whatever words a log uses: ``Exp``/``id``/
``Step``; ``Latency``/``Kernel_ms``/``Total_ms``/``mean_latency_ms``; ``Speedup``/
``geomean vs bar``; ``Pass``/``Correct``/``accuracy``/``validation``; ``Status``/``Outcome``/
``result``; ``Notes``. A table counts as an experiment table when it has an id or a
description column and at least one outcome column (status, correctness, date) — or
numbered rows with measurements; catalogues and per-shape tables do not qualify.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from kernelopt._errors import expected
from kernelopt.experiments.log import MetricKind, Point, SourceRef
from kernelopt.experiments.readers._draft import Draft
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import Row, Table, strip_md
from kernelopt.experiments.readers._values import (
    CYCLE_UNITS,
    CYCLES,
    LATENCY_UNITS,
    after_arrow,
    arrow_speedup,
    correctness_note,
    correctness_of,
    cycle_tokens,
    date_of,
    is_range,
    latency_tokens,
    not_attempted,
    number,
    number_at,
    speedup_tokens,
    states_accuracy_failure,
    status_of,
    tally_only,
    unit_of_header,
)
from kernelopt.experiments.records import Correctness, Status

__all__ = ["Roles", "experiment_number", "keyed_by_version", "read_table", "roles_of"]

# The Unit column's words for a time or a cycle count, as the canonical unit they name.
_UNIT_WORDS = {
    **LATENCY_UNITS,
    **CYCLE_UNITS,
    "nanoseconds": "ns",
    "microseconds": "us",
    "milliseconds": "ms",
}

# Rows split by a bare "|" named one by one in the warnings, per table; the rest counted.
_SPILLS_NAMED = 20
# "×1.25": the sign before the ratio.
_TIMES_FIRST = re.compile(r"^\s*[x×]\s*(?=[\d.])")
# "+25%", "~12.5 %": a change in percent, not a ratio.
_PERCENT = re.compile(r"^\s*(?:~\s*)?[-+]?[\d.,]+\s*%")
_ID = re.compile(
    r"^(?:exp|experiment|id|#|no\.?|n|step|iteration|iter|run|trial|version|num|exp_id|experiment_id)$"
)
_DATE = re.compile(
    r"^(?:date|day|when|timestamp|ts|time stamp|completed(?: utc)?|started(?: utc)?)$"
)
_DESCRIPTION = re.compile(
    r"^(?:description|desc|change|changes|what|what (?:i|we) (?:tried|changed|did)|idea|"
    r"hypothesis|direction|optimi[sz]ations?|name|title|claim|"
    r"summary|attempt|variant|technique|experiment|kernel|approach|mechanism|goal)$"
)
_LATENCY = re.compile(
    r"latency|time|_ms\b|\bms\b|_us\b|\bus\b|µs|μs|\bns\b|duration|runtime|median|\bmean\b"
    r"|\bp50\b|\bavg\b"
)
# Header words are matched as words: "du-ratio-n" and "gene-ratio-n" name no ratio.
_NOT_LATENCY = re.compile(
    r"\bspeed-?ups?\b|\bratios?\b|\bdeltas?\b|Δ|%|\bgains?\b|\bchanges?\b|\bvs\b"
    r"|\bdiff(?:erence)?s?\b|\berr(?:or)?s?\b|\bcounts?\b"
)
# "Latency after change (us)" is a time measured after a change, "Time change (us)" a change.
_AFTER_CHANGE = re.compile(r"\b(?:after|with|post)[- ](?:(?:the|this|each|a) )?changes?\b")
# A launch's time ("Time per launch (us)", "Launch latency (us)") is often its overhead
# beside the kernel's own time: the latency only where the table gives no other time.
_LAUNCH = re.compile(r"\blaunch(?:es)?\b")
# A header that is only "vs <what>" ("vs torch", "vs. cuBLAS") compares with a reference:
# a ratio. One that also names a time ("Time vs torch (us)") is a difference, not read.
_SPEEDUP = re.compile(
    r"\bspeed-?ups?\b|\bratios?\b|\bgeomean\b|\bx\b|\bvs (?:bar|baseline|base)\b|^vs\.? [\w.-]+$"
)
# A rate: per second ("GB/s", "tok/s") or floating-point operations per second ("TFLOPS").
_THROUGHPUT = re.compile(r"/s\b|/sec\b|throughput|per sec|\b[kmgtp]?flops\b")
# A share of a rate ("% of peak GB/s", "TFLOPS util") is no rate.
_NOT_THROUGHPUT = re.compile(r"%|\bpct\b|\bof peak\b|\butil")
_FLOPS = re.compile(r"\b[kmgtp]?flops\b", re.IGNORECASE)
_CORRECT = re.compile(
    r"^(?:pass|passed|correct|correctness|accuracy|valid|validation|check|checks|verified|tests?|parity|ok)$"
)
_STATUS = re.compile(r"^(?:status|outcome|verdict|decision|kept|accepted|disposition)$")
_RESULT = re.compile(r"^(?:(?:mini |final |main )?results?|finding|findings)$")
_NOTES = re.compile(r"^(?:notes?|comments?|remarks?|why|reason|lessons?|evidence)$")
_TAGS = re.compile(r"^(?:tags|techniques?|catalog)$")
# "7", "exp_7", "E7"; a mark or remark may follow ("7 (rerun)", "11*", "exp 12 ✓"), but
# no letter or digit that would make it another id ("3a", "8.1").
_ID_VALUE = re.compile(
    r"^(?:exp(?:eriment)?[\s_#-]*|step\s*|#|v|e)?(\d{1,6})"
    r"(?:\s*\*+|\s*\(.*\)|\s+[^\w\s.,/:-].*)?$",
    re.IGNORECASE,
)
# Id cells of rows that list no experiment (a reference timing): no number, said plainly.
_NO_ID = frozenset({"", "—", "-", "–", "n/a", "ref", "reference"})
# Rows whose id is no experiment number named one by one in the warnings, per table.
_BAD_IDS_NAMED = 20
_SLUG_VALUE = re.compile(r"^[a-z0-9][a-z0-9._-]{1,80}$")
_PRIORITY = ("latency", "median", "mean", "total", "time", "kernel")


def _norm(header: str) -> str:
    # "Correct?" and "Kept?" ask what "Correct" and "Kept" state: the mark names no
    # other column.
    return " ".join(strip_md(header).lower().replace("_", " ").split()).rstrip("?").rstrip()


def experiment_number(value: str) -> int | None:
    """The experiment number a cell names (``"7"``, ``"exp_7"``, ``"Exp 7"``, ``"#7"``)."""
    match = _ID_VALUE.match(strip_md(value).strip())
    return int(match.group(1)) if match else None


@attrs.define(kw_only=True)
class Roles:
    """Which column plays which part (indices into the header)."""

    id: int | None = None
    id_kind: str = "number"  # "number" or "slug"
    date: int | None = None
    description: int | None = None
    latency: list[int] = attrs.field(factory=list)
    speedup: int | None = None
    throughput: int | None = None
    correctness: int | None = None
    status: int | None = None
    result: list[int] = attrs.field(factory=list)
    notes: list[int] = attrs.field(factory=list)
    extra_text: list[int] = attrs.field(factory=list)
    tags: int | None = None
    unit: int | None = None
    # Columns whose header names a time but also a difference, ratio or count (``Time
    # change (us)``): not read; named in a warning when the table gives no latency.
    unread_times: list[int] = attrs.field(factory=list)


def roles_of(table: Table) -> Roles | None:
    """Classify ``table``'s columns; None when it is not an experiment table."""
    roles = Roles()
    launches: list[int] = []
    values = [[strip_md(row.cells[i]) for row in table.rows] for i in range(len(table.header))]
    for index, raw in enumerate(table.header):
        header = _norm(raw)
        compact = header.replace(" ", "_")
        column = [v for v in values[index] if v and v not in {"—", "-", "–"}]
        if roles.id is None and (_ID.match(header) or _ID.match(compact)):
            numbers = [v for v in column if experiment_number(v) is not None]
            slugs = [v for v in column if _SLUG_VALUE.match(v)]
            if column and len(numbers) >= 0.5 * len(column):
                roles.id = index
                continue
            if (
                column
                and header in {"id", "exp id", "experiment id"}
                and len(slugs) >= 0.6 * len(column)
            ):
                roles.id, roles.id_kind = index, "slug"
                continue
            if roles.description is None and header in {"experiment", "name"}:
                roles.description = index
            continue
        if roles.date is None and _DATE.match(header):
            roles.date = index
        elif _DESCRIPTION.match(header):
            if roles.description is None:
                roles.description = index
            else:
                roles.extra_text.append(index)
        elif header == "unit":
            roles.unit = index
        elif roles.tags is None and _TAGS.match(header):
            roles.tags = index
        elif roles.correctness is None and _CORRECT.match(header):
            roles.correctness = index
        elif roles.status is None and _STATUS.match(header):
            roles.status = index
        elif _RESULT.match(header):
            roles.result.append(index)
        elif _NOTES.match(header):
            roles.notes.append(index)
        elif (
            roles.throughput is None
            and _THROUGHPUT.search(header)
            and not _NOT_THROUGHPUT.search(header)
        ):
            roles.throughput = index
        elif roles.speedup is None and _SPEEDUP.search(header):
            roles.speedup = index
        elif _LATENCY.search(header):
            plain = _AFTER_CHANGE.sub(" ", header)
            if _NOT_LATENCY.search(plain):
                roles.unread_times.append(index)
            elif _LAUNCH.search(plain):
                launches.append(index)
            else:
                roles.latency.append(index)
    if not roles.latency:
        roles.latency = launches
    has_outcome = (
        roles.status is not None
        or roles.correctness is not None
        or roles.date is not None
        or bool(roles.result)
    )
    has_measure = bool(roles.latency) or roles.speedup is not None or roles.throughput is not None
    names_rows = roles.id is not None or roles.description is not None
    if not table.rows or not names_rows:
        return None
    if has_outcome or (roles.id is not None and roles.id_kind == "number" and has_measure):
        return roles
    return None


def keyed_by_version(table: Table, roles: Roles) -> bool:
    """Whether ``table``'s rows are numbered by a column headed ``Version`` (``v1``, ``v2``).

    Parameters
    ----------
    table : Table
        An experiment table.
    roles : Roles
        Its columns, as :func:`roles_of` found them.

    Returns
    -------
    bool
        True when its id column is headed ``Version`` (any case, inline markdown and ``_``
        as for every header): in a kernel devlog those are the kernel's versions.
    """
    return roles.id is not None and _norm(table.header[roles.id]) == "version"


def _best_latency_column(table: Table, roles: Roles) -> int | None:
    """Among several latency columns, the one the log's own "new best" claims agree with."""
    if len(roles.latency) <= 1:
        return roles.latency[0] if roles.latency else None
    scores = {}
    for column in roles.latency:
        best: float | None = None
        score = 0
        for row in table.rows:
            value = number(after_arrow(strip_md(row.cells[column])))
            outcome = " ".join(strip_md(row.cells[i]) for i in _outcome_columns(roles))
            status = status_of(outcome, allow_baseline=False)
            failed = (
                roles.correctness is not None
                and correctness_of(row.cells[roles.correctness]) is not None
                and ("fail" in row.cells[roles.correctness].lower())
            )
            if value is None:
                continue
            if status is Status.KEPT and best is not None:
                score += 1 if value < best else -1
            if status in (None, Status.KEPT, Status.BASELINE) and not failed:
                best = value if best is None else min(best, value)
        scores[column] = score
    names = {c: _norm(table.header[c]) for c in roles.latency}

    def rank(column: int) -> tuple[int, int]:
        name = names[column]
        priority = next((i for i, word in enumerate(_PRIORITY) if word in name), len(_PRIORITY))
        return (-scores[column], priority)

    return min(roles.latency, key=rank)


def read_table(
    file: TextFile,
    table: Table,
    roles: Roles,
    *,
    kind: str,
    slug_scope: str,
    position: int,
) -> list[Draft]:
    """One draft per row of an experiment table.

    Rows with a numeric id join the ``"numbered"`` scope (they merge with ``exp_N/``
    folders and step logs); slug ids join ``slug_scope``; rows without an id form a series
    of their own, keyed by description.
    """
    headline = _best_latency_column(table, roles)
    drafts = []
    spilled = 0
    short = 0
    bad_ids = 0
    unnumbered: list[str] = []
    for row_index, row in enumerate(table.rows):
        ref = SourceRef(path=file.path, line=row.line)
        cells, spill = _fitted(table, roles, row, ref)
        raw_id = strip_md(cells[roles.id]) if roles.id is not None else ""
        description = strip_md(cells[roles.description]) if roles.description is not None else ""
        if not raw_id and not description:
            continue
        number_: int | None = None
        if roles.id is not None and roles.id_kind == "number":
            number_ = experiment_number(raw_id)
            if number_ is None:
                if not raw_id and row.spilled:
                    # An empty id in a row wider than its header (``|| 4 | … ||``, a
                    # column added in front without a header): read as it splits, each
                    # value would sit a column right of its own, so it is named instead.
                    bad_ids += 1
                    if bad_ids <= _BAD_IDS_NAMED:
                        unnumbered.append(_shifted_row(table, roles.id, row, ref))
                    continue
                if raw_id in {"—", "-", "–", ""} and row_index == 0:
                    number_ = 0  # an unnumbered first row is the starting point
                else:
                    bad_ids += raw_id.lower() not in _NO_ID
                    if raw_id.lower() not in _NO_ID and bad_ids <= _BAD_IDS_NAMED:
                        what = "an experiment number such as 7 or exp_7"
                        unnumbered.append(
                            f"{expected(what, repr(raw_id[:40]), where=str(ref))}; "
                            "the row was not read"
                        )
                    continue
            scope, key, label = "numbered", str(number_), f"{kind_label(kind)} {number_}"
        elif roles.id is not None and raw_id:
            scope, key, label = slug_scope, raw_id.lower(), raw_id
        else:
            scope, key, label = f"table:{file.path}:{table.line}", description.lower(), description
        draft = Draft(scope=scope, key=key, kind=kind, order=("", position, row_index), label=label)
        draft.number = number_
        draft.table_row = True
        draft.sources.append(ref)
        draft.spans.append((file.path, row.line, row.line))
        draft.put("description", description or raw_id, ref)
        _row_values(draft, table, roles, headline, cells, ref)
        if spill:
            spilled += 1
            if spilled <= _SPILLS_NAMED:
                draft.warnings.append(spill)
        short_columns = _short_columns(table, roles, row)
        if short_columns:
            short += 1
            if short <= _SPILLS_NAMED:
                draft.warnings.append(
                    expected(
                        f"{len(table.header)} cells as in the header",
                        str(len(table.header) - row.missing),
                        where=str(ref),
                    )
                    + f"; read left to right, so {short_columns} stayed empty (a cell left "
                    "out in between moves the ones after it a column left)"
                )
        drafts.append(draft)
    if roles.id is not None and roles.id_kind == "number":
        unnumbered.extend(_pasted_rows(file, table))
    if drafts:
        drafts[0].warnings.extend(unnumbered)
        if headline is None:
            drafts[0].warnings.extend(_unread_times(file, table, roles))
    if spilled > _SPILLS_NAMED and drafts:
        drafts[0].warnings.append(
            f"{file.path}:{table.line}: {spilled - _SPILLS_NAMED} more rows hold more cells "
            f"than the header (the first {_SPILLS_NAMED} are named)"
        )
    if short > _SPILLS_NAMED and drafts:
        drafts[0].warnings.append(
            f"{file.path}:{table.line}: {short - _SPILLS_NAMED} more rows hold fewer cells "
            f"than the header (the first {_SPILLS_NAMED} are named)"
        )
    return drafts


def _pasted_rows(file: TextFile, table: Table) -> list[str]:
    """A warning for each line right under ``table`` that holds an experiment's cells
    split by tabs, not pipes (rows pasted from a spreadsheet): a line without ``|`` ends
    the table, so no reader takes the row, and its experiment would be lost unsaid."""
    found = []
    after = table.rows[-1].line if table.rows else table.line + 1
    for line_number in range(after + 1, min(len(file.lines), after + _BAD_IDS_NAMED) + 1):
        line = file.lines[line_number - 1]
        cells = [cell.strip() for cell in line.split("\t")]
        if not line.strip() or "|" in line or len(cells) < 2:
            break
        if experiment_number(cells[0]) is None:
            break
        found.append(
            expected(
                f"a table row led by '|' (the table of line {table.line})",
                f"{len(cells)} cells split by tabs (pasted from a spreadsheet?)",
                where=f"{file.path}:{line_number}",
            )
            + "; the row was not read"
        )
    return found


def _shifted_row(table: Table, id_column: int, row: Row, ref: SourceRef) -> str:
    """The warning for a row whose id cell is empty and that splits into more cells than
    its header: a ``|`` doubled at the line's start or a cell added in front of the id."""
    cells = len(row.cells) + len(row.spilled)
    return (
        expected(
            f"an experiment number such as 7 or exp_7 in the {strip_md(table.header[id_column])!r} "
            f"cell, under a header of {len(table.header)} cells",
            f"an empty cell in a row of {cells} (a '|' doubled at the line's start?)",
            where=str(ref),
        )
        + "; the row was not read"
    )


def _short_columns(table: Table, roles: Roles, row: Row) -> str:
    """The measured or verdict columns a row too short for its header left empty, named
    (``"'Status'"``), or ``""``. Free text (notes, tags) left off the end is no loss; a
    time, speedup, unit, verdict or outcome is, and which cell is missing cannot be told."""
    if not row.missing:
        return ""
    typed = {
        *roles.latency,
        *(
            c
            for c in (roles.speedup, roles.throughput, roles.unit, roles.correctness, roles.status)
            if c is not None
        ),
    }
    padded = range(len(table.header) - row.missing, len(table.header))
    names = [repr(strip_md(table.header[c])) for c in padded if c in typed]
    if not names:
        return ""
    return f"the {', '.join(names)} column{'s' if len(names) > 1 else ''}"


def _unread_times(file: TextFile, table: Table, roles: Roles) -> list[str]:
    """A warning for each column of a table without a latency column whose header names a
    time that was not read as one (``Time change (us)``), saying which word kept it out."""
    found = []
    for column in roles.unread_times:
        name = strip_md(table.header[column])
        word = _NOT_LATENCY.search(_AFTER_CHANGE.sub(" ", _norm(table.header[column])))
        why = f"'{word.group(0)}' names no time measured" if word else "it names no latency"
        found.append(
            f"{file.path}:{table.line}: the column {name!r} was not read as a latency ({why});"
            " the table gives no latency"
        )
    return found


def _fitted(table: Table, roles: Roles, row: Row, ref: SourceRef) -> tuple[tuple[str, ...], str]:
    """``row``'s cells, one per header column, and a warning when a bare ``|`` split it
    into more (else ``""``).

    Cut at the header's width, every value after the split would move a column left
    (a latency read from the unit's cell): the extra cells are joined back into the
    free-text column (description, notes) where that makes the most typed columns read,
    and dropped when no joining reads more than the cut row.
    """
    if not row.spilled:
        return row.cells, ""
    full = row.cells + row.spilled
    extra = len(row.spilled)
    where = expected(f"{len(row.cells)} cells as in the header", str(len(full)), where=str(ref))
    best, best_score, joined = row.cells, _typed_cells(roles, row.cells), None
    texts = [roles.description, *roles.notes, *roles.extra_text]
    for column in (c for c in texts if c is not None):
        end = column + extra + 1
        merged = (*full[:column], " | ".join(full[column:end]), *full[end:])
        score = _typed_cells(roles, merged)
        if score > best_score:
            best, best_score, joined = merged, score, column
    if joined is None:
        return best, f"{where}; the cells past the header's were not read"
    name = strip_md(table.header[joined])
    return best, f"{where}; the bare '|' was read as part of the {name} cell"


def _typed_cells(roles: Roles, cells: tuple[str, ...]) -> int:
    """How many of ``cells``' typed columns (times, speedup, unit, verdict, outcome) read."""

    def reads(index: int | None, reader: Callable[[str], object]) -> int:
        return 0 if index is None else int(bool(reader(strip_md(cells[index]))))

    def time(text: str) -> object:
        return number(after_arrow(text)) or latency_tokens(text)

    def ratio(text: str) -> object:
        return number(after_arrow(text)) or speedup_tokens(text)

    count = sum(reads(column, time) for column in roles.latency)
    count += reads(roles.speedup, ratio)
    count += reads(roles.unit, lambda text: text.lower() in _UNIT_WORDS)
    count += reads(roles.correctness, correctness_of)
    return count + reads(roles.status, status_of)


def kind_label(kind: str) -> str:
    """How experiments of a layout are called in labels (``"exp"``, ``"step"``)."""
    return "step" if kind == "step-log" else "exp"


def _outcome_columns(roles: Roles) -> list[int]:
    return [i for i in [roles.status, *roles.result, *roles.notes] if i is not None]


def _row_values(
    draft: Draft,
    table: Table,
    roles: Roles,
    headline: int | None,
    cells: tuple[str, ...],
    ref: SourceRef,
) -> None:
    if roles.date is not None:
        draft.put("date", date_of(cells[roles.date]) or strip_md(cells[roles.date]), ref)
    for column in roles.latency:
        text = after_arrow(strip_md(cells[column]))
        # "270-276 us" states no one time: not its last number either. A bare "s" is
        # seconds here, in a column of times ("1.5 s"), as it is not in prose ("5 s").
        tokens = (
            [] if is_range(text) else latency_tokens(text, allow_seconds=True) or cycle_tokens(text)
        )
        value = tokens[-1].value if tokens else number_at(text, ref, draft.warnings)
        if value is None:
            continue
        # A count of cycles keeps its unit: read in the column's time unit, 1520 cycles
        # would be 1520 us.
        unit = tokens[-1].unit if tokens else _header_unit(table.header[column])
        if unit is None and roles.unit is not None:
            unit = _unit_cell(cells[roles.unit], ref, draft.warnings)
        if column == headline:
            draft.put("latency", value, ref)
            draft.put("unit", unit, ref)
        draft.points.append(
            Point(
                name=strip_md(table.header[column]),
                value=value,
                unit=unit or "",
                kind=MetricKind.LATENCY,
                source=ref,
            )
        )
    own_speedup = None
    if headline is None:
        # "3.699 us -> 3.789 us" in a result column: the new time is the experiment's, and
        # the two times are its own A/B.
        for column in _outcome_columns(roles):
            tokens = latency_tokens(after_arrow(strip_md(cells[column])))
            if tokens:
                draft.put("latency", tokens[0].value, ref)
                draft.put("unit", tokens[0].unit, ref)
                own_speedup = arrow_speedup(strip_md(cells[column]))
                break
    if roles.speedup is not None:
        text = after_arrow(strip_md(cells[roles.speedup]))
        draft.put("speedup", _speedup_cell(text, ref, draft.warnings), ref)
    draft.put("speedup", own_speedup, ref)  # a Speedup column, where there is one, wins
    if roles.throughput is not None:
        text = after_arrow(strip_md(cells[roles.throughput]))
        draft.put("throughput", number_at(text, ref, draft.warnings), ref)
        draft.put("throughput_unit", _rate_unit(table.header[roles.throughput]), ref)
    if roles.correctness is not None:
        outcome = [cells[column] for column in _outcome_columns(roles)]
        draft.put_correctness(*_row_correctness(cells[roles.correctness], outcome), ref)
    measured = draft.latency is not None or draft.speedup is not None
    if roles.status is not None:
        draft.put("status", status_of(cells[roles.status], failed_means_slower=measured), ref)
    for column in [*roles.result, *roles.notes]:
        draft.put("status", status_of(cells[column], allow_baseline=False, bare_fail=False), ref)
    if roles.tags is not None:
        draft.tags.extend(t.strip() for t in strip_md(cells[roles.tags]).split(",") if t.strip())
    for column in roles.extra_text:
        draft.text_parts.append(strip_md(cells[column]))
    if not_attempted(" ".join(cells)):
        draft.put("attempted", False, ref)


def _speedup_cell(text: str, ref: SourceRef, warnings: list[str]) -> float | None:
    """The ratio a Speedup column's cell ``text`` states: ``1.25x``, ``×1.25`` or a bare
    ``1.25``. A percentage (``+25%``) is none, and ``warnings`` names it: it may be a rate
    25% higher (1.25x) or a time 25% shorter (1.33x), and read as 25 it would be a best."""
    tokens = [] if is_range(text) else speedup_tokens(text)
    if tokens:
        return tokens[0].value
    times_first = _TIMES_FIRST.match(text)
    if times_first is not None:
        text = text[times_first.end() :]
    elif _PERCENT.match(text):
        what = "a speedup ratio such as 1.25x"
        warnings.append(f"{expected(what, repr(text[:40]), where=str(ref))}; not read")
        return None
    return number_at(text, ref, warnings)


def _header_unit(header: str) -> str | None:
    """The unit a latency column's ``header`` names: a time (``"Mean (ms)"``), or
    :data:`CYCLES` for a count of clock cycles (``"Latency (cycles)"``)."""
    unit = unit_of_header(header)
    if unit is None and any(w in CYCLE_UNITS for w in re.findall(r"[a-z]+", header.lower())):
        return CYCLES
    return unit


def _unit_cell(cell: str, ref: SourceRef, warnings: list[str]) -> str | None:
    """The canonical unit (``"ms"`` for ``msec``, ``"us"`` for ``µs``, ``"cycles"`` for
    ``clk``) of a Unit column's ``cell``; None for an empty cell, and for a word naming
    neither a time nor a cycle count, which ``warnings`` then names: compared as
    microseconds, it would mislead."""
    written = strip_md(cell)
    if not written:
        return None
    unit = _UNIT_WORDS.get(written.lower())
    if unit is None:
        what = "a time unit (ns, us, ms, s) or cycles"
        warnings.append(
            f"{expected(what, repr(written), where=str(ref))}; the latency is read without a unit"
        )
    return unit


_NO_CELL = re.compile(r"^\s*no\s*[.!]?\s*$", re.IGNORECASE)


def _row_correctness(cell: str, outcome: list[str]) -> tuple[Correctness | None, str]:
    """The row's correctness ``cell`` and the words it states with its verdict, unless it
    rests on a pytest tally alone and one of the row's ``outcome`` cells states that the
    numbers are wrong (``"`26 passed`"`` beside ``"still fails strict parity"``): the suite
    passing does not make the outputs match, and that cell's words are the failure's."""
    verdict = correctness_of(cell)
    # In free text "no" states nothing ("no NaN"); alone in the column that asks whether
    # the outputs are correct, it answers the question as "yes" does.
    if verdict is None and _NO_CELL.match(strip_md(cell)):
        verdict = Correctness.FAIL
    if verdict is Correctness.PASS and tally_only(strip_md(cell)):
        failing = next((strip_md(t) for t in outcome if states_accuracy_failure(strip_md(t))), None)
        if failing is not None:
            return Correctness.FAIL, failing
    return verdict, correctness_note(cell)


def _rate_unit(header: str) -> str:
    # From where a run of name characters starts: from each of them, a long run was
    # scanned to its end.
    match = re.search(r"(?<![\w.])[\w.]+/s(?:ec)?\b", header) or _FLOPS.search(header)
    return match.group(0) if match else "/s"
