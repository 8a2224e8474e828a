"""The context around the experiments: CLAUDE.md rules, LESSONS.md, profile.md."""

from __future__ import annotations

import re

from kernelopt._errors import expected
from kernelopt.experiments.log import Fact, ProfileFacts, SourceRef
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import (
    bullets,
    code_mask,
    headings,
    sections,
    strip_md,
    tables,
)
from kernelopt.experiments.readers._metrics import (
    bottleneck_of,
    is_profiling_line,
    metric_of_header,
    metrics_of,
    share_expected,
    table_metric,
    tool_metrics,
)
from kernelopt.experiments.readers.floors import row_floor_over_time

__all__ = ["lesson_experiment", "read_lessons", "read_profile", "read_rules"]

_RULE_HEADING = re.compile(
    r"rule|constraint|must|never|convention|policy|non-negotiable", re.IGNORECASE
)
# "[exp 7]", "(exp 7)", "exp_7:", "Experiment 7 —" opening a lesson.
_EXP_TAG = re.compile(r"^[\[(]?exp(?:eriment)?[\s_#-]*(\d+)[\])]?", re.IGNORECASE)


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
    for name, value in metrics_of(prose).items():
        unfit = share_expected(name, value)
        if unfit is not None and name not in metrics:
            warnings.append(
                expected(f"{name} as {unfit}", f"{value:g}", where=file.path) + "; not read"
            )
            continue
        metrics.setdefault(name, value)
    # A profiler's own output is pasted in a code block: its lines are read there too.
    for name, value in tool_metrics(file.text).items():
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
    return ProfileFacts(
        bottleneck=kind,
        metrics=metrics,
        facts=tuple(facts),
        source=SourceRef(path=file.path),
        point=" ".join(heading.split()),
    )
