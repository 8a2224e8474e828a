"""Devlogs: dated entries (``## 2026-04-22 - Idea (ACCEPTED)``), often newest-first.

Each dated heading opens an entry; its status comes from a ``Status:`` line or the
heading's own words (ACCEPTED / REVERTED / NEUTRAL / ``correctness failure``), its time
from a ``Result:`` line (``0.2054 -> **0.2471ms**``) or a "mean latency" sentence. Entries
are ordered by date (and time when given); within one day, by file order — reversed when
the file is written newest-first.
"""

from __future__ import annotations

import itertools
import re

from kernelopt.experiments.log import SourceRef
from kernelopt.experiments.readers._draft import Draft
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import (
    Heading,
    bullets,
    code_mask,
    headings,
    section_ends,
    strip_md,
)
from kernelopt.experiments.readers._values import (
    arrow_speedup,
    correctness_of,
    date_of,
    headline_latency,
    not_attempted,
    status_of,
)
from kernelopt.experiments.readers.documents import describe
from kernelopt.experiments.records import Correctness

__all__ = ["dated_headings", "read_devlog"]

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE_PREFIX = re.compile(
    r"^\s*(?:\d{4}[-/.]\d{2}[-/.]\d{2}"
    rf"|{_MONTH}\s+{_DAY},?\s+20\d{{2}}|{_DAY}\s+{_MONTH},?\s+20\d{{2}})(?:[ "
    r"T]\d{1,2}:\d{2}(?::\d{2})?)?(?:\s*[+-]\d{2}:?\d{2}|\s*utc|\s*z)?"
    r"\s*(?:\([^)]*\))?\s*[-—–:|]*\s*",
    re.IGNORECASE,
)
_PROFILING = re.compile(r"\bprofil\w+\b", re.IGNORECASE)
_NO_CODE_CHANGE = re.compile(r"\bno code change\b", re.IGNORECASE)


def _profiling_only(title: str) -> bool:
    r"""Whether ``title`` says the entry profiled and changed no code.

    "no code change" is looked for after the first "profil…" word only: a pattern
    ``profil\w+.*no code change`` tries every "profil…" word of a long title, each against
    the rest of it (quadratic).
    """
    if "(no code change)" in title.lower():
        return True
    first = _PROFILING.search(title)
    return first is not None and _NO_CODE_CHANGE.search(title, first.end()) is not None


def _without_closing_aside(title: str) -> str:
    r"""``title`` without a closing parenthetical (``"tiles (REVERTED)"`` -> ``"tiles"``):
    from the first ``(`` after the last ``)`` before the closing one.

    What ``re.sub(r"\s*\([^)]*\)\s*$", "", title)`` does, without trying each ``(`` and
    each space of a long title against the rest of it (quadratic).
    """
    text = title.rstrip()
    if not text.endswith(")"):
        return title
    opening = text.find("(", text.rfind(")", 0, len(text) - 1) + 1, len(text) - 1)
    return text[:opening].rstrip() if opening >= 0 else title


_MEAN_LATENCY = re.compile(
    r"\b(?:mean|median|avg|average)(?: latency)?\s*[:=]|\b(?:mean|median|average) latency\b",
    re.IGNORECASE,
)


def dated_headings(file: TextFile) -> list[Heading]:
    """Headings (level 2–4) that start with or contain a date; the devlog's entries."""
    found = []
    for head in headings(file.lines, code_mask(file.lines)):
        if head.level >= 2 and date_of(head.title[:40]) is not None:
            found.append(head)
    if not found:
        return []
    # Entries share one level: the most common among dated headings.
    levels = [h.level for h in found]
    level = max(set(levels), key=levels.count)
    return [h for h in found if h.level == level]


def _entry_title(head: Heading) -> str:
    title = strip_md(head.title)
    stripped = _DATE_PREFIX.sub("", title, count=1).strip(" -—–:")
    return stripped


def read_devlog(file: TextFile, *, kind: str = "devlog") -> list[Draft]:
    """One draft per dated entry of ``file``, ordered oldest-first through ``order``."""
    heads = dated_headings(file)
    if len(heads) < 2:
        return []
    all_heads = headings(file.lines, code_mask(file.lines))
    ends = dict(
        zip((h.line for h in all_heads), section_ends(all_heads, len(file.lines)), strict=True)
    )
    dates = [date_of(h.title) or "" for h in heads]
    pairs = list(itertools.pairwise(dates))
    newer_first = sum(a > b for a, b in pairs) > sum(a < b for a, b in pairs)
    mask = code_mask(file.lines)
    drafts = []
    for position, head in enumerate(heads):
        end = ends.get(head.line, len(file.lines))
        date = dates[position]
        title = _entry_title(head)
        ref = SourceRef(path=file.path, line=head.line)
        day, _, time = date.partition("T")
        # Same-day entries keep file order, reversed for a newest-first file.
        order = (day, time, -position if newer_first else position)
        draft = Draft(
            scope=f"devlog:{file.path}",
            key=f"{head.line}",
            kind=kind,
            order=order,
            label=f"{date[:10]} {title}".strip(),
        )
        draft.sources.append(ref)
        draft.put("date", date, ref)
        draft.put("status", status_of(title, allow_baseline=False), ref)
        if (
            re.search(r"correctness|accuracy|wrong result|nan\b", title, re.IGNORECASE)
            and correctness_of(title) is Correctness.FAIL
        ):
            # The heading states the verdict in its own words.
            draft.put_correctness(Correctness.FAIL, title, ref)
        if not_attempted(title) or _profiling_only(title):
            draft.put("attempted", False, ref)
        if title:
            draft.put("description", _without_closing_aside(title) or title, ref)
        else:
            items = [
                b
                for b in bullets(file.lines, head.line + 1, end, mask)
                if not re.match(r"head\b", b.text, re.IGNORECASE)
            ]
            if items:
                draft.put(
                    "description",
                    strip_md(items[0].text)[:160],
                    SourceRef(path=file.path, line=items[0].line),
                )
        describe(
            file, draft, start=head.line, end=end, title_line=head.line, recommendation_offset=1
        )
        if draft.latency is None and draft.attempted is not False:
            for index in range(head.line, end):
                line = file.lines[index]
                if mask[index] or not _MEAN_LATENCY.search(line):
                    continue
                pick = headline_latency(line)
                if pick is not None:
                    at = SourceRef(path=file.path, line=index + 1)
                    draft.put("latency", pick.value, at)
                    draft.put("unit", pick.unit, at)
                    draft.put("speedup", arrow_speedup(line, pick), at)
                    break
        ideas = [
            b.text
            for b in bullets(file.lines, head.line + 1, end, mask)
            if re.match(
                r"\*\*(?:idea|hypothesis|changes?|implementation)\*\*", b.text, re.IGNORECASE
            )
        ]
        draft.text_parts.extend(strip_md(text)[:800] for text in ideas)
        drafts.append(draft)
    return drafts
