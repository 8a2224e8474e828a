"""One experiment described in prose: a hand-written ``result.md``, a hypothesis, a note.

:func:`describe` reads a range of lines (a whole file, a devlog entry, a step section) the
way a person skims it: the title; ``Key: value`` fields (Date, Status, Outcome,
Correctness, Result, Decision, Knobs); a Verdict/Decision heading; sections saying what changed
(Change, Claim, Hypothesis, Idea) and what to do next (Next steps, Future directions);
result tables per trial point; profiling metrics. It never raises.
"""

from __future__ import annotations

import bisect
import itertools
import re
import weakref
from collections.abc import Sequence

import attrs

from kernelopt.experiments.canonical import ab_verdict
from kernelopt.experiments.log import (
    DeclinedOption,
    Fact,
    MetricKind,
    Point,
    Recommendation,
    SourceRef,
)
from kernelopt.experiments.readers._draft import Draft, DraftRecommendation
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import (
    Heading,
    Section,
    Table,
    bullets,
    code_mask,
    fields,
    headings,
    sections,
    strip_md,
    tables,
)
from kernelopt.experiments.readers._metrics import (
    is_profiling_line,
    metric_of_header,
    prose_metrics,
    table_metric,
)
from kernelopt.experiments.readers._top3 import NONE_STATED, TOP_N_HEADING
from kernelopt.experiments.readers._values import (
    NOT_A_YEAR,
    after_arrow,
    arrow_speedup,
    correctness_note,
    correctness_of,
    cycle_tokens,
    date_of,
    headline_latency,
    knobs_of,
    latency_tokens,
    not_attempted,
    number,
    number_at,
    speedup_tokens,
    states_accuracy_failure,
    status_of,
    unit_of_header,
)
from kernelopt.experiments.readers.context import TopLead, top_leads, top_section_items
from kernelopt.experiments.readers.floors import refused_measurement_lines, row_floor_over_time
from kernelopt.experiments.records import Correctness, Status

__all__ = [
    "Described",
    "declined_options",
    "describe",
    "fill",
    "profile_recommendations",
    "recommendations_in",
]

# Each optional part carries the spaces after it: spans of spaces side by side
# (``\s*#?\s*\d*\s*``) split a long run of spaces every way before failing. Two ASCII
# hyphens ("Exp 4 -- BLOCK_N=64") are one dash typed without a dash key. A date after
# "Exp" ("Exp 2026-05-26: tiles") is no experiment's number: the title keeps it.
_TITLE_PREFIX = re.compile(
    rf"^(?:(?:experiment|exp|step|iteration|iter)\s*(?:#\s*)?(?:\d+{NOT_A_YEAR}\s*)?"
    r"(?:(?:result|results|plan|hypothesis)\s*)?(?:--|[:.—–-])\s*)",
    re.IGNORECASE,
)
_CHANGE_SECTIONS = re.compile(
    r"^(?:the\s+)?(?:change|changes|what changed|code change|claim|hypothesis|idea|goal|approach|"
    r"implementation|optimi[sz]ations? to apply|changes applied|question|fix|summary|plan)\b",
    re.IGNORECASE,
)
_NEXT_SECTIONS = re.compile(
    r"\b(?:next|future|recommend\w*|remaining (?:work|optimization|opportunit\w*|ideas)|to "
    r"try|todo|"
    r"possible directions|opportunit\w*|ideas)\b",
    re.IGNORECASE,
)
# A heading or lead line that says its options were turned down ("Remaining optimization
# space (not pursued this iteration)", "Rejected ideas", "Out of scope"): the list under it
# records what the author weighed and declined, not advice a later attempt should take up.
# A scope is declined only when the line says its options are outside it ("Not in kernel.cl
# scope", "outside the scope of this effort", "beyond scope"): up to three words may name
# whose scope it is. A plain "Scope" or "In scope" heading lists what the effort covers.
_DECLINED = re.compile(
    r"\bnot (?:pursued|adopted|taken|chosen|worth (?:it|pursuing|the \w+))\b|\bdeclined\b|"
    r"\brejected\b|\bruled out\b|\bset aside\b|\babandoned\b|"
    r"\bdiscarded\b|\bdropped\b|\bwon'?t (?:do|pursue|try)\b|"
    r"\b(?:not[\s-]+(?:in|within|part[\s-]+of)|outside(?:[\s-]+of)?|out[\s-]+of|beyond)[\s-]+"
    r"(?:(?:the|this|our|its)\s+)?(?:[\w./-]+\s+){0,3}?scope\b",
    re.IGNORECASE,
)
# Sentences recommending a direction inside a conclusion or interpretation.
_ADVICE_SECTIONS = re.compile(
    r"^(?:interpretation|conclusion|conclusions|takeaways?|main "
    r"takeaways|summary|verdict|lessons?)\b",
    re.IGNORECASE,
)
_ADVICE = re.compile(
    r"\bnext (?:useful |real |production(?:-grade)? |kernel |best "
    r")?(?:step|lever|work|implementation|move|"
    r"candidate|attempt|path)\b|\bshould (?:go|move|stay|be done|instead)\b|\bwe "
    r"recommend\b|\brecommended\b",
    re.IGNORECASE,
)
_NEXT_LEAD = re.compile(
    r"(?:future directions|possible directions|next steps?|next candidate|recommend(?:ation)?s?|"
    r"further (?:meaningful )?improvement requires|remaining optimization space|top \d+ "
    r"opportunities|"
    r"to try next|next kernel lever)\b[^:\n]*:?\s*$",
    re.IGNORECASE,
)
_VERDICT_HEAD = re.compile(
    r"^(?:verdict|decision|outcome|status|conclusion)\b\s*:?\s*(.*)$", re.IGNORECASE
)
_STATUS_KEYS = ("status", "outcome", "verdict", "decision", "disposition")
# ``- Knobs: BLOCK_N=64, num_stages=2`` (the canonical result.md field, also by hand).
_KNOB_KEYS = ("knobs", "knob", "tuning knobs")
# The list or quote mark that opens a line ("- ", "> ", "3. "): no words of a sentence.
_LIST_MARK = re.compile(r"^(?:[-*+>]|\d{1,3}[.)])\s+")
# ``Pass: 12/12`` is a pass marker as logs write it: the field name is the verdict's own word.
_CORRECT_KEYS = (
    "correctness",
    "accuracy",
    "correct",
    "pass",
    "passed",
    "validation",
    "tests",
    "status",
    "verifier",
)
_PYTEST = re.compile(r"\b(\d+) passed\b")
_PYTEST_FAILED = re.compile(r"\b[1-9]\d* failed\b")
_VERDICT_WORD = re.compile(r"\b(?:PASS|PASSED|FAIL|FAILED)\b")
_RESULT_KEYS = (
    "result",
    "final result",
    "results",
    "latency",
    "median",
    "mean",
    "time",
    "measured result",
    "timing",
)
_DATE_KEYS = ("date", "started utc", "completed utc", "started", "completed", "when", "timestamp")
_POINT_HEADERS = re.compile(
    r"^(?:resolution|shape|point|config|configuration|case|workload|regime|rows|size|dtype|problem|trial|b|batch)",
    re.IGNORECASE,
)
_AFTER = re.compile(
    r"\b(?:after|new|candidate|ours|current|optimi[sz]ed|this|exp\s*\d+|step\s*\d+|g\d)",
    re.IGNORECASE,
)
_BEFORE = re.compile(
    r"\b(?:before|baseline|base|old|prev(?:ious)?|reference|ref|original)\b", re.IGNORECASE
)
# "All 100 workloads passed" and "passed all 3 sampled workloads" say so too, as long as
# no "not" turns them into a partial pass; "all unit tests passed" is a test suite's
# verdict, not the outputs'.
# A count is at most a few comma groups long: from each digit of a long "1,1,1,…" run, an
# unbounded ``[\d,]*`` scanned the run to its end.
_ALL_PASS = re.compile(
    r"(?<!\bnot )\ball (?:\d+ )?(?:(?!(?:unit|tests?)\b)[a-z-]+ ){0,2}(?:pass|passed)\b"
    r"|\b(\d[\d,]{0,24})\s*/\s*\1\s+(?:pass|passed)\b"
    r"|\bcorrectness: pass\b|(?<!\bnot )\bpassed all \d+\b",
    re.IGNORECASE,
)


@attrs.define(kw_only=True)
class Described:
    """What :func:`describe` found in a range of lines."""

    title: str = ""
    title_line: int = 0
    draft: Draft


def _title(text: str) -> str:
    clean = strip_md(text)
    stripped = _TITLE_PREFIX.sub("", clean).strip()
    return stripped or clean


def _section_text(lines: Sequence[str], start: int, end: int, limit: int = 1500) -> str:
    body = " ".join(
        strip_md(line)
        for line in lines[start - 1 : end]
        if line.strip() and not line.lstrip().startswith("|")
    )
    return body[:limit]


_NEGATED_ADVICE = re.compile(
    r"\b(?:is|be|should|are)\s+(?:therefore\s+|still\s+|now\s+)?(?:not|no longer|never)\b",
    re.IGNORECASE,
)


def _paragraphs(
    lines: Sequence[str], start: int, end: int, mask: Sequence[bool]
) -> list[tuple[int, str]]:
    """(first line, joined text) of each prose paragraph between ``start`` and ``end``."""
    found: list[tuple[int, str]] = []
    current: list[str] = []
    first = start
    for index in range(start, end + 1):
        line = lines[index - 1] if index - 1 < len(lines) else ""
        prose = line.strip() and not mask[index - 1] and not line.lstrip().startswith(("|", "#"))
        if prose:
            if not current:
                first = index
            current.append(strip_md(line))
        elif current:
            found.append((first, " ".join(current)))
            current = []
    if current:
        found.append((first, " ".join(current)))
    return found


def recommendations_in(
    file: TextFile,
    start: int,
    end: int,
    heads: Sequence[Heading],
    mask: Sequence[bool],
    *,
    offset: int,
) -> list[DraftRecommendation]:
    """Recommendations between lines ``start`` and ``end``: list items under a "Next
    steps"/"Future directions"-like heading or lead line, or that heading's first sentence.

    A ``Top N opportunities`` section is read as profile.md's Top 3 is
    (:func:`~kernelopt.experiments.readers.context.top_section_items`), whether written as
    a numbered list (``1. Split-KV (`split-kv-flash-decoding`) -- est. 30% gain``) or a
    table (``| Rank | Opportunity | Entry | Est. gain |``): one recommendation per item,
    the first N when the heading says N, each the opportunity's name with the catalog
    entry ids backticked beside it (or in the table's id column) as its ``catalog_ids``.
    """
    lines = file.lines
    found: list[DraftRecommendation] = []
    seen: set[str] = set()

    def add(
        text: str, line: int, catalog_ids: tuple[str, ...] = (), *, ranked: bool = False
    ) -> None:
        # A list's items end in the semicolons and commas that join them into one sentence
        # ("1. compute one Qx per site;"): a recommendation quoted alone ends without them.
        clean = strip_md(text).strip(" .").rstrip(" .;,")
        key = clean.lower()
        if (
            # A fragment of prose is no advice; a ranked item is, however short its name
            # ("Split-KV"), when it names its entry or has a word.
            (len(clean) < 12 and not (ranked and (catalog_ids or re.search(r"[^\W\d_]", clean))))
            or not clean
            or key in seen
            or (re.match(r"^[\w.-]+/[\w./-]+$", clean.split(" ")[0]) and " " not in clean)
        ):
            return
        seen.add(key)
        found.append(
            DraftRecommendation(
                text=clean[:300],
                source=SourceRef(path=file.path, line=line),
                offset=offset,
                catalog_ids=tuple(dict.fromkeys(catalog_ids)),
            )
        )

    # A Top N section opened by a lead line ("**Top 3 opportunities**" over its list or
    # table): its lines are its own, not items or advice of the section it stands in.
    leads = top_leads(file, start, end, heads, mask)
    in_lead = {number for lead in leads for number in range(lead.line, lead.end + 1)}
    # In line order, as the items of a Top section under a heading come among the rest.
    opened: list[Section | TopLead] = [
        *sections(lines, [h for h in heads if start <= h.line <= end]),
        *leads,
    ]
    opened.sort(key=lambda part: part.line if isinstance(part, TopLead) else part.heading.line)
    for section in opened:
        if isinstance(section, TopLead):
            lead = top_section_items(file, section.title, section.start, section.end, mask)
            for item_line, name, ids in lead or []:
                add(name or ids[0], item_line, ids, ranked=True)
            continue
        title = section.heading.title
        if not _NEXT_SECTIONS.search(title) or _DECLINED.search(title) or section.start > end:
            continue
        stop = min(section.end, end)
        items = [
            b
            for b in bullets(lines, section.start, stop, mask)
            if b.indent < 4 and b.line not in in_lead
        ]
        ranked = top_section_items(file, section.heading.title, section.start, stop, mask)
        if ranked:
            for item_line, name, ids in ranked:
                add(name or ids[0], item_line, ids, ranked=True)
        elif items:
            for item in items:
                add(item.text, item.line)
        else:
            for index in range(section.start, stop + 1):
                line = lines[index - 1]
                if (
                    line.strip()
                    and not mask[index - 1]
                    and index not in in_lead
                    and not line.lstrip().startswith(("|", "#"))
                ):
                    add(line.split(". ")[0], index)
                    break
    for section in sections(lines, [h for h in heads if start <= h.line <= end]):
        if not _ADVICE_SECTIONS.match(strip_md(section.heading.title)) or section.start > end:
            continue
        for first_line, paragraph in _paragraphs(lines, section.start, min(section.end, end), mask):
            if first_line in in_lead:
                continue
            for sentence in re.split(r"(?<=[.!?])\s+", paragraph):
                if _ADVICE.search(sentence) and not _NEGATED_ADVICE.search(sentence):
                    add(sentence, first_line)
    # A lead line ("Future directions (not attempted here):") followed by a list.
    for index in range(start, min(end, len(lines)) + 1):
        line = strip_md(lines[index - 1])
        if (
            mask[index - 1]
            or index in in_lead
            or not _NEXT_LEAD.search(line)
            or _DECLINED.search(line)
            or line.startswith("#")
        ):
            continue
        cursor = index + 1
        while cursor <= min(end, len(lines)) and not lines[cursor - 1].strip():
            cursor += 1
        for item in bullets(lines, cursor, min(end, cursor + 30), mask):
            if item.line > cursor + 30:
                break
            if item.line in in_lead:
                continue
            add(item.text, item.line)
            if (
                item.line + 1 <= len(lines)
                and not lines[item.line].strip()
                and item.line + 2 <= len(lines)
            ):
                following = lines[item.line + 1].lstrip()
                if not re.match(r"(?:[-*+]|\d+[.)])\s", following):
                    break
    return found


def profile_recommendations(
    file: TextFile, opportunities: Sequence[Recommendation]
) -> list[DraftRecommendation]:
    """The recommendations a profile makes besides its ``Top 3 Opportunities``: the items
    of its ``Recommendation(s)``, "Next steps"-like sections and lead lines, read as a
    research note's are (:func:`recommendations_in`), each for the experiments after the
    one the profile followed (``offset`` 1).

    Parameters
    ----------
    file : TextFile
        The profile (``profile.md``, or an experiment's own).
    opportunities : sequence of Recommendation
        The profile's Top N items (``ProfileFacts.opportunities``): judged as one ranked
        list of alternatives, so their lines are left out here rather than read twice.

    Returns
    -------
    list of DraftRecommendation
        In line order.
    """
    mask = code_mask(file.lines)
    heads = headings(file.lines, mask)
    ranked = {item.source.line for item in opportunities}
    # Every hand-off's Top 3 is its ranked list (a profile of several hand-offs has one per
    # trial point), read with ``opportunities`` or left out there: none of its lines is
    # advice of its own, and neither is a line that says there is none.
    for section in sections(file.lines, heads):
        if TOP_N_HEADING.match(strip_md(section.heading.title)):
            ranked.update(range(section.start, section.end + 1))
    for lead in top_leads(file, 1, len(file.lines), heads, mask):
        ranked.update(range(lead.start, lead.end + 1))
    found = recommendations_in(file, 1, len(file.lines), heads, mask, offset=1)
    return [
        item
        for item in found
        if item.source.line not in ranked and not NONE_STATED.match(strip_md(item.text))
    ]


# A lead line ends in a colon and holds a few words at most ("Rejected ideas:"): a sentence
# that only mentions a dropped idea ("We dropped split-K because ...:") opens no list.
_LEAD_WORDS = 12


def _is_declining(title: str) -> bool:
    """Whether a heading or lead line declines the options listed under it; an experiment's
    own title or verdict ("Exp 5: rejected", "Decision: dropped") declines that experiment,
    and the list under it gives reasons, not options."""
    clean = strip_md(title)
    return (
        bool(_DECLINED.search(clean))
        and not _TITLE_PREFIX.match(clean)
        and not _VERDICT_HEAD.match(clean)
    )


def _declined_lists(
    lines: Sequence[str], heads: Sequence[Heading], mask: Sequence[bool]
) -> list[tuple[str, int, int]]:
    """(declining title, first line, last line) of each list a heading or lead line
    declines: a heading's own lines, up to the next heading of any level, or the lines
    after a lead line (a paragraph of one line, ending in a colon; past the blank lines
    right after it) up to the next blank line."""
    found: list[tuple[str, int, int]] = []
    for index, head in enumerate(heads):
        if not _is_declining(head.title):
            continue
        stop = heads[index + 1].line - 1 if index + 1 < len(heads) else len(lines)
        found.append((strip_md(head.title), head.line + 1, stop))
    for at, line in enumerate(lines, start=1):
        clean = strip_md(line)
        # A lead line stands alone: the last line of a wrapped sentence ("... has been
        # tried, shipped, or ruled out with real evidence:") leads the whole sentence's list.
        opens = at == 1 or not lines[at - 2].strip() or lines[at - 2].lstrip().startswith("#")
        if (
            mask[at - 1]
            or not opens
            or not clean.endswith(":")
            or clean.startswith("#")
            or len(clean.split()) > _LEAD_WORDS
            or not _is_declining(_LIST_MARK.sub("", clean, count=1).rstrip(":"))
        ):
            continue
        first = at + 1
        while first <= len(lines) and not lines[first - 1].strip():
            first += 1
        last = first
        while last < len(lines) and lines[last].strip():  # ``lines[last]`` is line last + 1
            last += 1
        found.append((clean.rstrip(":").strip(), first, min(last, len(lines))))
    return found


def declined_options(file: TextFile) -> list[DeclinedOption]:
    """The options ``file`` lists under a heading or lead line that declines them or scopes
    them out (:data:`_DECLINED`: "Rejected ideas", "Not pursued", "Remaining opportunities
    (Not in kernel.cl scope)"): the ideas its author weighed and answered.

    Only a list's outermost items count (a nested item explains its parent). An
    experiment's title or verdict that declines the experiment ("Exp 5: rejected") opens
    no such list: the items under it are its reasons.

    Parameters
    ----------
    file : TextFile
        A note of the log.

    Returns
    -------
    list of DeclinedOption
        In line order, each with ``experiment`` None (the caller places the note).
    """
    mask = code_mask(file.lines)
    heads = headings(file.lines, mask)
    options: dict[int, DeclinedOption] = {}
    for title, start, stop in _declined_lists(file.lines, heads, mask):
        items = bullets(file.lines, start, stop, mask)
        top = min((item.indent for item in items), default=0)
        for item in items:
            text = strip_md(item.text).strip(" .").rstrip(" .;,")
            if item.indent > top or not re.search(r"[^\W\d_]", text) or item.line in options:
                continue
            options[item.line] = DeclinedOption(
                text=text[:300],
                source=SourceRef(path=file.path, line=item.line),
                heading=title[:200],
            )
    return [options[line] for line in sorted(options)]


def _points(
    file: TextFile, start: int, end: int, mask: Sequence[bool], warnings: list[str]
) -> list[Point]:
    points: list[Point] = []
    for table in tables(file.lines, start, end, mask):
        if not table.header or not _POINT_HEADERS.match(strip_md(table.header[0])):
            continue
        columns = []
        for index, header in enumerate(table.header[1:], start=1):
            name = strip_md(header)
            if re.search(r"delta|Δ|diff|change|error|err\b|%", name, re.IGNORECASE):
                continue
            columns.append((index, name))
        if not columns:
            continue
        after = [c for c in columns if _AFTER.search(c[1]) and not _BEFORE.search(c[1])]
        numeric = [c for c in columns if _numeric_share(table, c[0]) >= 0.5]
        after = [c for c in after if c in numeric]
        chosen = (
            after[-1]
            if after
            else next((c for c in reversed(numeric) if not _BEFORE.search(c[1])), None)
        )
        if chosen is None:
            continue
        index, name = chosen
        measure = _measure_name(name)
        for row in table.rows:
            cell = strip_md(row.cells[index])
            ref = SourceRef(path=file.path, line=row.line)
            label = f"{strip_md(row.cells[0])} {measure}".strip()
            # A count of cycles keeps its unit, never the header's time unit.
            lat = latency_tokens(after_arrow(cell)) or cycle_tokens(after_arrow(cell))
            spd = speedup_tokens(after_arrow(cell))
            if lat:
                points.append(
                    Point(
                        name=label,
                        value=lat[-1].value,
                        unit=lat[-1].unit,
                        kind=MetricKind.LATENCY,
                        source=ref,
                    )
                )
            elif spd:
                points.append(
                    Point(
                        name=label,
                        value=spd[-1].value,
                        unit="x",
                        kind=MetricKind.SPEEDUP,
                        source=ref,
                    )
                )
            else:
                value = number_at(cell, ref, warnings)
                unit = unit_of_header(name)
                if value is not None and unit is not None:
                    points.append(
                        Point(
                            name=label, value=value, unit=unit, kind=MetricKind.LATENCY, source=ref
                        )
                    )
                elif value is not None and re.search(r"speedup|\bx\b|vs bar", name, re.IGNORECASE):
                    points.append(
                        Point(
                            name=label, value=value, unit="x", kind=MetricKind.SPEEDUP, source=ref
                        )
                    )
    return points


# "tiny 1.307→1.378x", "default 1.397x -> 1.392x", "large_batch flat (1.253→1.255x)": a
# regime's speedup before and after the step, in prose. The name starts a word (the
# look-behind keeps a long word from being retried at each of its letters), at most one
# word ("flat") and a colon or parenthesis sit between it and the numbers.
_PROSE_SPEEDUP = re.compile(
    r"(?<![\w.-])(?P<name>[A-Za-z][\w-]*)(?:[ \t]+[a-z]+)?\s*(?:[:(]\s*)?"
    r"\d+(?:\.\d+)?(?:\s*x)?\s*(?:→|->)\s*(?P<after>\d+(?:\.\d+)?)\s*x\b"
)


def _prose_speedups(file: TextFile, start: int, end: int, mask: Sequence[bool]) -> list[Point]:
    """The ``name A→Bx`` changes in lines ``start``..``end`` outside code, as speedup
    points ``name`` = B, in the order written (a name's first change wins).

    Candidates only: whether ``name`` is a trial point of this log, measured as a speedup,
    is for :func:`kernelopt.experiments.readers._assemble.assemble` to say, which sees the
    other experiments of the series.
    """
    kept = [i for i in range(start - 1, end) if not mask[i]]
    text = "\n".join(file.lines[i] for i in kept)
    if "→" not in text and "->" not in text:
        return []
    starts = list(itertools.accumulate((len(file.lines[i]) + 1 for i in kept), initial=0))
    found: dict[str, Point] = {}
    for match in _PROSE_SPEEDUP.finditer(text):
        name = match.group("name")
        if name in found:
            continue
        at = kept[bisect.bisect_right(starts, match.start("after")) - 1]
        found[name] = Point(
            name=name,
            value=float(match.group("after")),
            unit="x",
            kind=MetricKind.SPEEDUP,
            source=SourceRef(path=file.path, line=at + 1),
        )
    return list(found.values())


_EXPERIMENT_WORDS = re.compile(
    r"\b(?:exp(?:eriment)?\s*\d+|step\s*\d+|v\d+|[A-Z]\d+(?:\.\d+)*[a-z]?|after|new|candidate|ours|current|"
    r"optimi[sz]ed|this|speedup|latency|time|ms|us|µs|x)\b",
    re.IGNORECASE,
)


def _measure_name(header: str) -> str:
    """What a result column measures, without the words naming this experiment
    (``"Exp 8 Total"`` -> ``"total"``, ``"G2.4"`` -> ``""``, ``"Total_ms"`` -> ``"total"``)."""
    words = _EXPERIMENT_WORDS.sub(" ", header.replace("_", " "))
    return " ".join(re.findall(r"[a-z0-9]+", words.lower()))


def _numeric_share(table: Table, index: int) -> float:
    cells = [strip_md(row.cells[index]) for row in table.rows]
    filled = [c for c in cells if c]
    if not filled:
        return 0.0
    return sum(1 for c in filled if number(after_arrow(c)) is not None) / len(filled)


def _table_metrics(
    file: TextFile, start: int, end: int, mask: Sequence[bool], warnings: list[str]
) -> dict[str, float]:
    found: dict[str, float] = {}
    # A Measurements row the canonical parser refused is named "not read" there, and the
    # floor readers leave it out: no metric comes from it.
    refused: frozenset[int] | None = None
    for table in tables(file.lines, start, end, mask):
        for index, header in enumerate(table.header):
            name = metric_of_header(strip_md(header))
            if name is None or name in found:
                continue
            if refused is None:  # asked once, and only of a file with a metric column
                refused = refused_measurement_lines(file)
            for row in table.rows:
                if row.line in refused:
                    continue
                where = SourceRef(path=file.path, line=row.line)
                # An Of floor cell is read with its row's floor and time, as the floor
                # readers read it: one share for one row.
                measured = (
                    row_floor_over_time(table.header, row.cells) if name == "floor_pct" else None
                )
                value = table_metric(
                    name, header, row.cells[index], where, warnings, floor_over_time=measured
                )
                if value is not None:
                    found[name] = value
                    break
    return found


def correctness_in(text: str) -> Correctness | None:
    """Correctness stated in prose: an "all PASS" verification beats a failure phrase."""
    if _ALL_PASS.search(text):
        return Correctness.PASS
    if states_accuracy_failure(text):
        return Correctness.FAIL
    return None


# The code mask and headings of the file :func:`describe` read last: a devlog or step log
# is described entry by entry, and finding them again for each of thousands of entries was
# quadratic. A weak reference does not keep the file's text alive, and a file that is gone
# matches nothing (its id may be another file's by then).
_LAST_STRUCTURE: list[tuple[weakref.ref[TextFile], list[bool], list[Heading]]] = []


def _structure(file: TextFile) -> tuple[list[bool], list[Heading]]:
    # One look at the cache, kept locally: another thread may replace it meanwhile.
    cached = _LAST_STRUCTURE[0] if _LAST_STRUCTURE else None
    if cached is None or cached[0]() is not file:
        mask = code_mask(file.lines)
        cached = (weakref.ref(file), mask, headings(file.lines, mask))
        _LAST_STRUCTURE[:] = [cached]
    return cached[1], cached[2]


def _line(head: Heading) -> int:
    return head.line


def describe(
    file: TextFile,
    draft: Draft,
    *,
    start: int = 1,
    end: int | None = None,
    title_line: int | None = None,
    recommendation_offset: int = 1,
    prose_outcome: bool = True,
) -> Described:
    """Fill ``draft`` from lines ``start``..``end`` of ``file`` (the whole file by default).

    ``title_line`` names the heading that titles the range; otherwise the first heading in
    range is the title. Values already in the draft are kept (first reader wins). With
    ``prose_outcome`` off (plans, hypotheses: their prose describes what *would* fail),
    correctness and outcome come only from explicit fields.
    """
    lines = file.lines
    last = len(lines) if end is None else min(end, len(lines))
    draft.spans.append((file.path, start, last))
    mask, every_head = _structure(file)
    heads = every_head[
        bisect.bisect_left(every_head, start, key=_line) : bisect.bisect_right(
            every_head, last, key=_line
        )
    ]
    described = Described(draft=draft)
    title_head = (
        next((h for h in heads if h.line == title_line), None)
        if title_line
        else (heads[0] if heads else None)
    )
    if title_head is not None:
        described.title, described.title_line = _title(title_head.title), title_head.line
        draft.put("description", described.title, SourceRef(path=file.path, line=title_head.line))
    found = fields(lines, start, last, mask)

    def ref(line: int) -> SourceRef:
        return SourceRef(path=file.path, line=line)

    for key in _DATE_KEYS:
        if key in found:
            value, line = found[key]
            draft.put("date", date_of(value) or "", ref(line))
    if not draft.date and title_head is not None:
        draft.put("date", date_of(title_head.title) or "", ref(title_head.line))
    for key in _STATUS_KEYS:
        if key in found:
            value, line = found[key]
            if key == "verdict" and ab_verdict(value) is not None:
                # "Verdict: FAST 0.600x ... the baseline's time, speedup 1.667x" is an A/B
                # verdict (seed.py reads it); its word "baseline" would make it a BASELINE.
                continue
            draft.put("status", status_of(value), ref(line))
            if not_attempted(value):
                draft.put("attempted", False, ref(line))
    for head in heads if prose_outcome else ():
        match = _VERDICT_HEAD.match(strip_md(head.title))
        if match and head is not title_head:
            text = match.group(1)
            body_line = next(
                (
                    i
                    for i in range(head.line + 1, min(last, head.line + 6) + 1)
                    if lines[i - 1].strip()
                ),
                None,
            )
            if not text and body_line is not None:
                text = lines[body_line - 1]
            draft.put("status", status_of(text, allow_baseline=False), ref(head.line))
            if not_attempted(text):
                draft.put("attempted", False, ref(head.line))
    for key in _KNOB_KEYS:
        if key in found:
            value, line = found[key]
            knobs = knobs_of(value)
            for name, setting in knobs.items():
                draft.knobs.setdefault(name, setting)
            if knobs:
                draft.refs.setdefault("knobs", ref(line))
    for key in _CORRECT_KEYS:
        if key in found:
            value, line = found[key]
            draft.put_correctness(correctness_of(value), correctness_note(value), ref(line))
    for key in ("result", "results"):
        # "Result: 31 passed in 2.97s" is a test verdict; "Result: capture failed" is not.
        if key in found:
            value, line = found[key]
            clean = value.replace("`", "")
            if _PYTEST.search(clean):
                verdict = Correctness.FAIL if _PYTEST_FAILED.search(clean) else Correctness.PASS
                draft.put_correctness(verdict, correctness_note(clean), ref(line))
            elif _VERDICT_WORD.search(clean):
                draft.put_correctness(correctness_of(clean), correctness_note(clean), ref(line))
    for key in _RESULT_KEYS:
        if key in found and draft.latency is None:
            value, line = found[key]
            pick = headline_latency(value)
            if pick is not None:
                draft.put("latency", pick.value, ref(line))
                draft.put("unit", pick.unit, ref(line))
                # "0.2228ms -> 0.2098ms": the entry's own A/B, as a speedup.
                draft.put("speedup", arrow_speedup(value, pick), ref(line))
    body = "\n".join(lines[start - 1 : last])
    if draft.correctness is None and prose_outcome:
        stated = correctness_in(body)
        if stated is not None:
            line = next(
                (
                    i
                    for i in range(start, last + 1)
                    if _ALL_PASS.search(lines[i - 1]) or states_accuracy_failure(lines[i - 1])
                ),
                start,
            )
            # The verdict was read from the sentence: it is its own words.
            words = _LIST_MARK.sub("", strip_md(lines[line - 1]), count=1)
            draft.put_correctness(stated, words, ref(line))
    if not draft.points:
        draft.points.extend(_points(file, start, last, mask, draft.warnings))
    if not draft.points and not draft.prose_points:
        draft.prose_points.extend(_prose_speedups(file, start, last, mask))
    table_metrics = _table_metrics(file, start, last, mask, draft.warnings)
    prose = prose_metrics(body, file.path, draft.warnings, known=table_metrics)
    for name, number_ in {**table_metrics, **prose}.items():
        draft.metrics.setdefault(name, number_)
    for index in range(start - 1, last):
        if len(draft.profiling) >= 8:
            break
        if not mask[index] and is_profiling_line(lines[index]):
            draft.profiling.append(Fact(text=strip_md(lines[index])[:200], source=ref(index + 1)))
    for section in sections(lines, heads):
        if section.heading is title_head or not _CHANGE_SECTIONS.match(
            _title(section.heading.title)
        ):
            continue
        if section.start <= last:
            # Only the section's own lines: a "Plan" section's "Next" subsection is not the change.
            stop = next(
                (h.line - 1 for h in heads if h.line > section.heading.line), min(section.end, last)
            )
            draft.text_parts.append(
                _section_text(lines, section.start, min(stop, section.end, last))
            )
    draft.recommendations.extend(
        recommendations_in(file, start, last, heads, mask, offset=recommendation_offset)
    )
    if title_head is not None and not_attempted(title_head.title):
        draft.put("attempted", False, ref(title_head.line))
    if draft.status is Status.REVERTED and re.search(
        r"superseded|not (?:implemented|measured)", body, re.IGNORECASE
    ):
        draft.put("attempted", False, ref(start))
    return described


def fill(draft: Draft, file: TextFile) -> Described:
    """:func:`describe` over the whole of ``file``, recording the file as a source."""
    draft.sources.append(SourceRef(path=file.path, line=1))
    return describe(file, draft)
