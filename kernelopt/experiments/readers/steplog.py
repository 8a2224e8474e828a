"""Numbered step logs: ``### Step 13: title``, ``### 13. G2.4 — title``, and step tables.

A step log numbers its experiments, so its drafts join the ``"numbered"`` scope and merge
with step tables (``| step | change | geomean vs bar | accuracy |``) and per-step folders
(``agent/experiments/18-slug/``). Explicit ``Step N`` headings are preferred; bare
``N. title`` headings count only at level 3 or deeper (level-2 numbered headings are usually
the chapters of a document, not steps).
"""

from __future__ import annotations

import re

from kernelopt.experiments.log import SourceRef
from kernelopt.experiments.readers._draft import Draft
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import (
    Heading,
    code_mask,
    headings,
    section_ends,
    strip_md,
)
from kernelopt.experiments.readers._values import NOT_A_YEAR, status_of
from kernelopt.experiments.readers.documents import describe
from kernelopt.experiments.records import Status

__all__ = ["read_steps", "step_headings"]

# ``(?:#\s*)?`` rather than ``#?\s*``: two spans of spaces side by side split a long run
# of spaces every way before failing (quadratic). A date's year ("### Exp 2026-05-26:
# ...") numbers no step: a log of such headings is a devlog, dated by them.
_STEP = re.compile(
    rf"^(?:step|iteration|iter|exp(?:eriment)?)\s*(?:#\s*)?(\d{{1,4}})\b{NOT_A_YEAR}"
    r"\s*[:.—–-]*\s*(.*)$",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^(\d{1,4})[.)]\s+(.*)$")
# Decisive words in a step's body when no Status line says it.
_KEPT_BODY = re.compile(
    r"\bcommit(?:ted)?\s+(?:as\s+)?`?[0-9a-f]{7,40}\b|\bkept anyway\b|\bmerged\b(?! only)|\bnew "
    r"elites?\b|\bpromoted\b",
    re.IGNORECASE,
)
_REVERTED_BODY = re.compile(
    r"\breverted\b|\brevert(?:ed)? immediately\b|\bno (?:code )?change merged\b|\bnot "
    r"pursu(?:ed|ing)\b"
    r"|\bclosed off\b|\bdiscarded\b|\brolled back\b",
    re.IGNORECASE,
)


def step_headings(file: TextFile) -> list[tuple[Heading, int, str]]:
    """(heading, step number, title) for every step heading of ``file``."""
    heads = headings(file.lines, code_mask(file.lines))
    explicit = []
    numbered = []
    for head in heads:
        title = strip_md(head.title)
        match = _STEP.match(title)
        if match and head.level >= 2:
            explicit.append((head, int(match.group(1)), match.group(2).strip()))
            continue
        match = _NUMBERED.match(title)
        if match and head.level >= 3:
            numbered.append((head, int(match.group(1)), match.group(2).strip()))
    if len(explicit) >= 2 or (explicit and not numbered):
        return explicit
    return numbered if len(numbered) >= 3 else []


def read_steps(file: TextFile, *, kind: str = "step-log") -> list[Draft]:
    """One numbered draft per step section of ``file``."""
    steps = step_headings(file)
    heads = headings(file.lines, code_mask(file.lines))
    ends = dict(zip((h.line for h in heads), section_ends(heads, len(file.lines)), strict=True))
    drafts = []
    for head, step, title in steps:
        end = ends.get(head.line, len(file.lines))
        ref = SourceRef(path=file.path, line=head.line)
        draft = Draft(
            scope="numbered",
            key=str(step),
            kind=kind,
            number=step,
            label=f"step {step}",
            order=("", step),
        )
        draft.sources.append(ref)
        draft.put("description", title, ref)
        starts_baseline = bool(
            re.match(r"(?:the\s+)?(?:baseline|initial|reference)\b", title, re.IGNORECASE)
        )
        draft.put("status", status_of(title, allow_baseline=starts_baseline), ref)
        describe(
            file, draft, start=head.line, end=end, title_line=head.line, recommendation_offset=1
        )
        if draft.status is None:
            body = "\n".join(file.lines[head.line : end])
            kept = _KEPT_BODY.search(body)
            reverted = _REVERTED_BODY.search(body)
            if kept or reverted:
                first = min((m for m in (kept, reverted) if m is not None), key=lambda m: m.start())
                line = head.line + 1 + body[: first.start()].count("\n")
                draft.put(
                    "status",
                    Status.KEPT if first is kept else Status.REVERTED,
                    SourceRef(path=file.path, line=line),
                )
        draft.text_parts.append(title)
        drafts.append(draft)
    return drafts
