"""The context around the experiments: CLAUDE.md rules, LESSONS.md, profile.md."""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from kernelopt.experiments.log import Fact, ProfileFacts, Recommendation, SourceRef
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import (
    Heading,
    Row,
    Table,
    bullets,
    code_mask,
    headings,
    is_separator,
    sections,
    strip_md,
    tables,
)
from kernelopt.experiments.readers._metrics import (
    bottleneck_of,
    is_profiling_line,
    metric_of_header,
    prose_metrics,
    table_metric,
    tool_metrics,
)
from kernelopt.experiments.readers._top3 import (
    ID_HEADER,
    LIST_ITEM,
    NAME_HEADER,
    NONE_STATED,
    RANK_HEADER,
    TOP_N_HEADING,
    top_lead_title,
)
from kernelopt.experiments.readers._values import NOT_A_YEAR
from kernelopt.experiments.readers.floors import row_floor_over_time

__all__ = [
    "TopLead",
    "lesson_experiment",
    "profile_experiment",
    "read_lessons",
    "read_profile",
    "read_rules",
    "read_top_opportunities",
    "top_leads",
    "top_section_items",
    "top_table_items",
]

_RULE_HEADING = re.compile(
    r"rule|constraint|must|never|convention|policy|non-negotiable", re.IGNORECASE
)
# "[exp 7]", "(exp 7)", "exp_7:", "Experiment 7 —" opening a lesson; "[exp 2026-05-26]"
# names a date, no experiment.
_EXP_TAG = re.compile(rf"^[\[(]?exp(?:eriment)?[\s_#-]*(\d+){NOT_A_YEAR}[\])]?", re.IGNORECASE)


def read_rules(file: TextFile, *, limit: int = 200) -> list[Fact]:
    """Rules from CLAUDE.md: items and sub-headings under rule-like headings (all items
    when no heading says "rules")."""
    mask = code_mask(file.lines)
    heads = headings(file.lines, mask)
    chosen = [s for s in sections(file.lines, heads) if _RULE_HEADING.search(s.heading.title)]
    found: list[Fact] = []
    ranges = [(s.start, s.end) for s in chosen] or [(1, len(file.lines))]
    for start, end in ranges:
        for head in heads:
            if start <= head.line <= end:
                found.append(
                    Fact(
                        text=strip_md(head.title), source=SourceRef(path=file.path, line=head.line)
                    )
                )
        for item in bullets(file.lines, start, end, mask):
            found.append(
                Fact(text=strip_md(item.text), source=SourceRef(path=file.path, line=item.line))
            )
    unique: dict[int, Fact] = {}
    for fact in found:
        unique.setdefault(fact.source.line, fact)
    return [unique[line] for line in sorted(unique)][:limit]


def lesson_experiment(fact: Fact) -> int | None:
    """The experiment a lesson cites first (``[exp 7] ...``, ``(exp 7) ...``), or None."""
    match = _EXP_TAG.match(fact.text)
    return int(match.group(1)) if match else None


def read_lessons(
    file: TextFile, *, limit: int = 5000, warnings: list[str] | None = None
) -> list[Fact]:
    """Lessons: top-level list items, and sub-headings (a heading often *is* the lesson).

    Past ``limit`` the latest are kept (a file grows at its end, by the newest lessons),
    and ``warnings``, when given, says how many earlier ones were left out.
    """
    mask = code_mask(file.lines)
    found = [
        Fact(text=strip_md(h.title), source=SourceRef(path=file.path, line=h.line))
        for h in headings(file.lines, mask)
        if h.level >= 2
    ]
    found += [
        Fact(text=strip_md(b.text), source=SourceRef(path=file.path, line=b.line))
        for b in bullets(file.lines, mask=mask)
        if b.indent < 2
    ]
    found.sort(key=lambda fact: fact.source.line)
    if len(found) > limit and warnings is not None:
        warnings.append(
            f"{file.path}: {len(found)} lessons; the latest {limit} were read, the first "
            f"{len(found) - limit} (to line {found[-limit - 1].source.line}) left out"
        )
    return found[len(found) - limit :] if len(found) > limit else found


_PROFILE_POINT = re.compile(r"^#{1,6}\s*Profile:[^|]*\|\s*(.*?)\s*$", re.IGNORECASE)
# The kernel and version the heading names before its point: "## Profile: mla_decode v2 |".
_PROFILE_NAME = re.compile(r"^#{1,6}\s*Profile:\s*([^|]*?)\s*\|", re.IGNORECASE)
# The experiments a profile's heading names: "exp 5", "Exp_7", "experiment 12", "exps 26,
# 30, 32", "exps 3 and 4". A version ("v2") is a kernel's, not an experiment's number,
# and a date ("exp 2026-05-26") is when the profile was written, not an experiment.
_HEADING_EXPERIMENTS = re.compile(
    rf"\bexp(?:eriment)?s?\.?[\s_#-]*(\d{{1,5}}{NOT_A_YEAR}"
    rf"(?:\s*(?:,|&|and)\s*\d{{1,5}}{NOT_A_YEAR})*)\b",
    re.IGNORECASE,
)
# Where a profile heading's name names an experiment ("exp 5", "exps 26, 30 and 32",
# "exp_7", "experiment 12") or the date it was written ("exp 2026-05-26").
_EXPERIMENT_WORD = re.compile(r"\bexp(?:eriment)?s?\.?[\s_#-]*(?=\d)", re.IGNORECASE)
# What may follow that word to the end of the name: numbers, dates, lists and brackets.
_REFERENCE_TAIL = frozenset("0123456789 \t,&-.;:)]")
# Words that lead to that ending ("profiled in exp 35", "after exp 7").
_LEAD_INS = frozenset({"after", "at", "following", "for", "from", "in", "of", "profiled", "post"})
# A catalog entry id as an item writes it in backticks: "Kernel Fusion (`kernel-fusion`)".
_ENTRY_ID = re.compile(r"`([A-Za-z0-9][\w.-]*)`")
# Where an item's name ends: at its entry id, or at "-- est. 40% gain" when it gives none.
_NAME_END = re.compile(r"\s*(?:\(\s*`|\s--\s|\s[—–]\s|--\s*est\.)")


def profile_experiment(file: TextFile, heads: list[Heading]) -> int | None:
    """The experiment a profile followed: its ``exp_N`` folder's number, else the latest
    experiment its first heading names; None when neither says.

    The seed keeps one ``profile.md``, rewritten with each profile: its heading is where it
    says which experiment's kernel it profiled (``## Profile: mla_decode exp 5 | ...``).
    """
    # The seed reader's own rule for a folder's number; imported here, as that module
    # imports this one to read an experiment's profile.md.
    from kernelopt.experiments.readers.seed import folder_number

    parts = file.path.split("/")
    folder = folder_number(parts[-2]) if len(parts) >= 2 else None
    if folder is not None:
        return folder
    if not heads:
        return None
    named = [
        int(number)
        for match in _HEADING_EXPERIMENTS.finditer(heads[0].title)
        for number in re.findall(r"\d+", match.group(1))
    ]
    return max(named) if named else None


def heading_version(name: str) -> str:
    """The kernel version a profile heading's name states, or ``""``.

    The renderer writes ``<kernel> <version>`` (``mla_decode v2``): the version is the
    name's last word. A name that ends by naming the experiment profiled
    (``mla_decode exp 5``, ``mla_decode v2 exp 5``) is read without that ending, and one
    whose last word is still an experiment's number (``mla_decode (exps 26, 30), profiled
    in exp 35``) states no version: the 5 of "exp 5" is an experiment's number, not a
    version.

    Parameters
    ----------
    name : str
        The heading's text between ``Profile:`` and its point's ``|``.

    Returns
    -------
    str
        The version, ``""`` for a name of one word or one whose last word is an
        experiment's number.
    """
    cut = _without_trailing_experiment(name)
    words = cut.split()
    if len(cut) < len(name):
        # "profiled in exp 35", "after exp 7": the words that led to the number go too.
        while words and words[-1].lower() in _LEAD_INS:
            words.pop()
    if len(words) < 2:
        return ""
    kept = " ".join(words)
    last = len(kept) - len(words[-1])
    # A last word that is an experiment's number ("32)" of "(exps 26, 30, 32)") is none.
    if any(match.end() > last for match in _HEADING_EXPERIMENTS.finditer(kept)):
        return ""
    return words[-1] if len(cut) == len(name) else words[-1].rstrip(",;:")


def _without_trailing_experiment(name: str) -> str:
    """``name`` less the experiment or date it ends by naming (``mla_decode v2 (exp 5)`` is
    ``mla_decode v2``), and the brackets and commas before it; ``name`` where it ends
    otherwise. Checked character by character: a regular expression anchored at the end
    would scan a long run of spaces once from each of its characters."""
    # The last place the name names an experiment.
    found = max(_EXPERIMENT_WORD.finditer(name), key=lambda match: match.start(), default=None)
    if found is None or not set(name[found.end() :].replace("and", "")) <= _REFERENCE_TAIL:
        return name
    return name[: found.start()].rstrip(" \t([,;:")


def _item_name(text: str) -> str:
    """An item's opportunity name: its text up to the entry id or the estimated gain."""
    end = _NAME_END.search(text)
    return strip_md(text[: end.start()] if end is not None and end.start() > 0 else text)


def _entry_ids(text: str) -> tuple[str, ...]:
    """The catalog entry ids written in backticks in ``text``. One that says there is none
    (``none``, ``NONE``, as a writer fills an id cell or item with no entry) names none."""
    return tuple(i for i in _ENTRY_ID.findall(text) if not NONE_STATED.match(i))


# One item of a Top 3: its line, the opportunity's name and the entry ids written beside it.
TopItem = tuple[int, str, tuple[str, ...]]


def _listed_opportunities(
    file: TextFile, start: int, end: int, mask: Sequence[bool]
) -> list[TopItem]:
    """The Top 3 written as a list: its outermost items (numbered or bullets)."""
    return [
        (b.line, _item_name(b.text), _entry_ids(b.text))
        for b in bullets(file.lines, start, end, mask)
        if b.indent < 2
    ]


def _tabled_opportunities(table: Table) -> list[TopItem]:
    """The Top 3 written as a table (``| Rank | Opportunity | Entry | Est. gain |``); a
    table with neither a rank nor a name column is none."""
    header = [strip_md(cell).strip("* ") for cell in table.header]
    rank = next((i for i, h in enumerate(header) if RANK_HEADER.match(h)), None)
    name = next((i for i, h in enumerate(header) if NAME_HEADER.search(h)), None)
    entry = next((i for i, h in enumerate(header) if ID_HEADER.search(h)), None)
    if name is None:
        # Without a name column, the first column of no other role holds the names.
        name = next((i for i in range(len(header)) if i not in {rank, entry}), None)
    if rank is None and (name is None or not NAME_HEADER.search(header[name])):
        return []
    return [_tabled(row, name, entry) for row in table.rows] if name is not None else []


def _tabled(row: Row, name: int, entry: int | None) -> TopItem:
    """One row of a Top 3 table: its entry ids are backticked anywhere in the row, else the
    entry column's word."""
    ids = tuple(i for cell in row.cells for i in _entry_ids(cell))
    if not ids and entry is not None:
        ids = _entry_ids(f"`{strip_md(row.cells[entry])}`")
    return (row.line, _item_name(row.cells[name]), ids)


def top_table_items(file: TextFile, start: int, end: int, mask: Sequence[bool]) -> list[TopItem]:
    """The rows of the first table between lines ``start`` and ``end`` written as a Top 3
    is (a rank or a name column).

    Parameters
    ----------
    file : TextFile
        The file the table is in.
    start, end : int
        The 1-based lines (inclusive) to look in: a section's body.
    mask : sequence of bool
        The file's lines inside code blocks (True), whose pipes make no table.

    Returns
    -------
    list of (int, str, tuple of str)
        Each row's line, opportunity name and entry ids: those backticked anywhere in the
        row, else its id column's word (``Entry``, ``Catalog``, ``id``); none when it has
        neither, or when they say ``none``. Empty when no table there has that shape.
    """
    for table in tables(file.lines, start, end, mask=mask):
        found = _tabled_opportunities(table)
        if found:
            return found
    return []


def _ranked_count(heading: re.Match[str]) -> int | None:
    """How many items a ``Top N opportunities`` heading (matched by ``TOP_N_HEADING``)
    ranks: N, 3 for "three", None when it gives no number (``Top opportunities``)."""
    written = heading.group(1)
    if written is None:
        return None
    return 3 if written.lower() == "three" else int(written)


def top_section_items(
    file: TextFile, title: str, start: int, end: int, mask: Sequence[bool]
) -> list[TopItem] | None:
    """The ranked items of a ``Top N opportunities`` section, read alike in profile.md and
    in a result or a note.

    The items are the section's outermost list items (numbered or bullets), else the rows
    of its first table with a rank or a name column (:func:`top_table_items`); the first N
    when the heading says N. Each is the opportunity's name and the catalog entry ids
    written beside it in backticks (``Kernel Fusion (`kernel-fusion`) -- est. 40% gain``)
    or in a table's id column. An item that says there is none (``None.``, ``n/a``, the
    renderer's ``(none: ...)``) is no opportunity, and an id that says so (``none``,
    ``NONE``, backticked or not) names no entry.

    Parameters
    ----------
    file : TextFile
        The file the section is in.
    title : str
        The section's heading, as written: ``Top 3 Opportunities (ranked by estimated
        impact)``, ``Top 5 opportunities``, ``Top opportunities``.
    start, end : int
        The 1-based lines (inclusive) of the section's body.
    mask : sequence of bool
        The file's lines inside code blocks (True), which hold no items.

    Returns
    -------
    list of (int, str, tuple of str) or None
        Each item's line, opportunity name and entry ids, in the order written (empty when
        none could be read); None when ``title`` is no ``Top N opportunities`` heading.
    """
    heading = TOP_N_HEADING.match(strip_md(title))
    if heading is None:
        return None
    found = _listed_opportunities(file, start, end, mask) or top_table_items(file, start, end, mask)
    count = _ranked_count(heading)
    # An item saying "None." still takes its rank: the heading's N counts the items written.
    ranked = found if count is None else found[:count]
    return [
        (line, name, ids)
        for line, name, ids in ranked
        if (name or ids) and not NONE_STATED.match(name)
    ]


@attrs.frozen(kw_only=True)
class TopLead:
    """A ``Top N opportunities`` section opened by a lead line instead of a heading.

    Parameters
    ----------
    title : str
        The lead line's words, without its emphasis and its closing colon: ``Top 3
        opportunities`` of ``**Top 3 opportunities:**``.
    line : int
        The 1-based line of the lead line.
    start, end : int
        The 1-based lines (inclusive) of its body: from the line after the lead line to
        the end of the list or table right under it.
    """

    title: str
    line: int
    start: int
    end: int


def _table_end(lines: Sequence[str], first: int, last: int, mask: Sequence[bool]) -> int | None:
    """The last line of the table whose header is line ``first`` (1-based), its rows as
    :func:`tables` reads them, or None when no ``|---|`` row makes that line a header."""
    if "|" not in lines[first - 1] or first >= last or not is_separator(lines[first]):
        return None
    end = first + 1
    while end < last and "|" in lines[end] and lines[end].strip() and not mask[end]:
        end += 1
    return end


def _list_end(
    lines: Sequence[str], first: int, last: int, mask: Sequence[bool], heading_lines: set[int]
) -> int:
    """The last line of the list whose first item is line ``first`` (1-based).

    The list runs over its items, the lines indented under them, the blank lines between
    them and a line that carries on an item's text right under it; it ends at a heading,
    at a table row or a code fence that is not indented, and at prose after a blank line.
    """
    end = first
    for number in range(first + 1, last + 1):
        line = lines[number - 1]
        if number in heading_lines:
            break
        if not line.strip():
            continue
        in_the_list = LIST_ITEM.match(line) or line[0].isspace()
        # An unindented line right under an item's text carries it on, as markdown reads
        # it; after a blank line, or as a fence or a table row, it is past the list.
        past_the_list = mask[number - 1] or line.startswith("|") or not lines[number - 2].strip()
        if not in_the_list and past_the_list:
            break
        end = number
    return end


def _lead_body_end(
    lines: Sequence[str], first: int, last: int, mask: Sequence[bool], heading_lines: set[int]
) -> int | None:
    """The last line of the list or table starting at line ``first`` (1-based), right under
    a lead line; None when that line opens neither (prose, a heading, a code block)."""
    if first > last or mask[first - 1] or first in heading_lines:
        return None
    table = _table_end(lines, first, last, mask)
    if table is not None:
        return table
    if LIST_ITEM.match(lines[first - 1]):
        return _list_end(lines, first, last, mask, heading_lines)
    return None


def top_leads(
    file: TextFile, start: int, end: int, heads: Sequence[Heading], mask: Sequence[bool]
) -> list[TopLead]:
    """The ``Top N opportunities`` sections opened by a lead line between lines ``start``
    and ``end``, each the list or table right under its lead line.

    Parameters
    ----------
    file : TextFile
        The file to look in.
    start, end : int
        The 1-based lines (inclusive) to look in.
    heads : sequence of Heading
        The file's headings: a list under a lead line ends at the next one.
    mask : sequence of bool
        The file's lines inside code blocks (True): a lead line there opens nothing, and
        a list or table there is none.

    Returns
    -------
    list of TopLead
        In line order. A lead line is alone on its line, in the words a ``Top N
        opportunities`` heading has (``top_lead_title``), and only blank lines stand
        between it and the list's first item or the table's header row: prose that
        mentions a top 3 (``the top 3 kernels take 80 % of the time.``) opens none. Its
        body ends where the list or the table does.
    """
    lines = file.lines
    last = min(end, len(lines))
    # Built at the first lead line: most files have none, and a devlog is read one entry
    # (one range of lines) at a time.
    heading_lines: set[int] | None = None
    found: list[TopLead] = []
    number = max(start, 1)
    while number <= last:
        title = None if mask[number - 1] else top_lead_title(lines[number - 1])
        if title is None:
            number += 1
            continue
        first = number + 1
        while first <= last and not lines[first - 1].strip():
            first += 1
        if heading_lines is None:
            heading_lines = {head.line for head in heads}
        body_end = _lead_body_end(lines, first, last, mask, heading_lines)
        if body_end is None:
            number += 1
            continue
        found.append(TopLead(title=title, line=number, start=number + 1, end=body_end))
        number = body_end + 1
    return found


def read_top_opportunities(
    file: TextFile,
    heads: list[Heading],
    mask: list[bool],
    experiment: int | None,
    *,
    within: tuple[int, int] | None = None,
) -> tuple[Recommendation, ...]:
    """The items of a profile's ``Top 3 Opportunities`` section as recommendations.

    The section is the first whose heading a result's or a note's ``Top N opportunities``
    would have (``Top 3 Opportunities``, ``Top 5 opportunities``, ``Top opportunities``),
    or whose lead line has those words over a list or a table (:func:`top_leads`), read by
    :func:`top_section_items`: the first N items when the heading or the lead line says
    N. Each is the opportunity's name with its catalog entry ids, made by ``experiment``
    (the one the profile followed) for the experiments after it. ``within`` (1-based
    lines, inclusive) keeps the sections opened there: one hand-off of several.
    """
    first, last = (1, len(file.lines)) if within is None else within
    opened = [
        (section.heading.line, section.heading.title, section.start, min(section.end, last))
        for section in sections(file.lines, heads)
        if first <= section.heading.line <= last
    ]
    opened += [
        (lead.line, lead.title, lead.start, lead.end)
        for lead in top_leads(file, first, last, heads, mask)
    ]
    for _line, title, start, end in sorted(opened):
        found = top_section_items(file, title, start, end, mask)
        if found is None:
            continue
        return tuple(
            Recommendation(
                text=name or ids[0],
                source=SourceRef(path=file.path, line=line),
                experiment=experiment,
                after=experiment + 1 if experiment is not None else 0,
                catalog_ids=tuple(dict.fromkeys(ids)),
            )
            for line, name, ids in found
        )
    return ()


def read_profile(file: TextFile, warnings: list[str] | None = None) -> ProfileFacts:
    """The bottleneck and metrics ``profile.md`` states (the seed's profiler contract:
    ``### Bottleneck: Memory-bound`` and a ``| Stage | Duration | TC% | DRAM% | Occ% |`` table).

    A table value whose number has no single sure reading (``1.234,5``) is not read, and is
    named in ``warnings`` when given; so is a share no percentage can be: a TC%, DRAM%,
    Occ%, L2 hit rate or Of floor below 0, or an occupancy or hit rate above 100 (TC% and
    DRAM% are shares of measured ceilings, which a call may pass). The next row's value is
    read instead, as for a value of no sure reading. An Of floor is ``floor_pct`` in percent,
    a bare share up to 1.5 a fraction of the floor (``0.78`` is 78).
    """
    warnings = [] if warnings is None else warnings
    mask = code_mask(file.lines)
    metrics: dict[str, float] = {}
    facts: list[Fact] = []
    for table in tables(file.lines, mask=mask):
        for index, header in enumerate(table.header):
            name = metric_of_header(strip_md(header))
            if name is None or name in metrics:
                continue
            for row in table.rows:
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
                    metrics[name] = value
                    # One row gives several metrics (TC%, DRAM%, Occ%): cite it once.
                    if all(fact.source.line != row.line for fact in facts):
                        facts.append(
                            Fact(
                                text=" | ".join(row.cells),
                                source=SourceRef(path=file.path, line=row.line),
                            )
                        )
                    break
    prose = "\n".join("" if mask[i] else line for i, line in enumerate(file.lines))
    for name, value in prose_metrics(prose, file.path, warnings, known=metrics).items():
        metrics.setdefault(name, value)
    # A profiler's own output is pasted in a code block: its lines are read there too.
    for name, value in tool_metrics(file.text, file.path, warnings, known=metrics).items():
        if name not in metrics:
            metrics[name] = value
            at = next((i for i, line in enumerate(file.lines) if tool_metrics(line)), None)
            if at is not None and mask[at]:
                facts.append(
                    Fact(
                        text=strip_md(file.lines[at]), source=SourceRef(path=file.path, line=at + 1)
                    )
                )
    for index, line in enumerate(file.lines):
        if not mask[index] and is_profiling_line(line) and len(facts) < 40:
            facts.append(
                Fact(text=strip_md(line), source=SourceRef(path=file.path, line=index + 1))
            )
    bottleneck = bottleneck_of(prose)
    kind: str | None = None
    if bottleneck is not None:
        kind, at = bottleneck
        facts.insert(
            0,
            Fact(
                text=strip_md(file.lines[at]).lstrip("# "),
                source=SourceRef(path=file.path, line=at + 1),
            ),
        )
    # The seed's heading: "## Profile: [kernel] | [shape/config]".
    heading = next(
        (
            match.group(1)
            for index, line in enumerate(file.lines)
            if not mask[index] and (match := _PROFILE_POINT.match(line.strip()))
        ),
        "",
    )
    heads = headings(file.lines, mask)
    experiment = profile_experiment(file, heads)
    name = next(
        (
            match.group(1)
            for index, line in enumerate(file.lines)
            if not mask[index] and (match := _PROFILE_NAME.match(line.strip()))
        ),
        "",
    )
    opportunities = read_top_opportunities(file, heads, mask, experiment)
    opportunities += _later_hand_offs_top(file, heads, mask, experiment, opportunities, warnings)
    return ProfileFacts(
        bottleneck=kind,
        metrics=metrics,
        facts=tuple(facts),
        source=SourceRef(path=file.path),
        point=" ".join(heading.split()),
        experiment=experiment,
        version=heading_version(name),
        opportunities=opportunities,
    )


def _later_hand_offs_top(
    file: TextFile,
    heads: list[Heading],
    mask: list[bool],
    experiment: int | None,
    read: tuple[Recommendation, ...],
    warnings: list[str],
) -> tuple[Recommendation, ...]:
    """The Top 3 items of the hand-offs after the first in a profile of several
    (``kernelopt report profile --rows`` writes one per trial point), not in ``read``.

    The profile is one record, dated as its first hand-off is (the experiment it names, or
    the version its heading names): the Top 3 of a later hand-off of the same kernel and
    version joins the first's, one list of alternatives dated alike. A hand-off of another
    kernel or version could only be dated by its own heading, which the record does not
    hold: its Top 3 is not read, and ``warnings`` says so.
    """
    hand_offs = [
        (index + 1, " ".join(match.group(1).split()))
        for index, line in enumerate(file.lines)
        if not mask[index] and (match := _PROFILE_NAME.match(line.strip()))
    ]
    if len(hand_offs) < 2:
        return ()
    seen = {(item.text, item.catalog_ids) for item in read}
    lines = {item.source.line for item in read}
    found: list[Recommendation] = []
    ends = [line - 1 for line, _ in hand_offs[1:]] + [len(file.lines)]
    for (line, name), end in list(zip(hand_offs, ends, strict=True))[1:]:
        items = read_top_opportunities(file, heads, mask, experiment, within=(line, end))
        if name != hand_offs[0][1]:
            if items:
                warnings.append(
                    f"{file.path}:{line}: the Top 3 of a hand-off of {name!r}, not of "
                    f"{hand_offs[0][1]!r} as the first hand-off, is not read as advice "
                    "(one profile.md is dated as its first hand-off)"
                )
            continue
        for item in items:
            key = (item.text, item.catalog_ids)
            if key not in seen and item.source.line not in lines:
                seen.add(key)
                found.append(item)
    return tuple(found)
