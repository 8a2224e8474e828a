"""3. Correctness wall: the latest attempts keep failing correctness.

Counts trailing consecutive correctness failures (attempts whose correctness is unknown are
skipped; a pass ends the run), then checks the kernel text (the latest failing attempt's
snapshot, else the kernel as it stands) for the seed's numeric suspects:
a ``tl.dot`` at tf32 (set so, or float32 operands at the default), an LSE base mismatch
(exp2 vs ln), -inf masking without a fully-masked-row guard, and bf16/fp16 accumulation.
The masking suspect is -inf that a mask writes into the values (``tl.where(mask, s,
float("-inf"))`` over keys, attention-style): only then can a whole row be -inf. A masked
load's ``other=-inf`` pads the dead lanes of a row that has live ones (a row softmax), and a
running max started at -inf (``m = -float("inf")``, ``tl.full([BLOCK_M], float("-inf"),
…)``, ``float m = -INFINITY;``) takes the first finite value it meets: neither is it.
For the dot the seed's ladder is tf32x3 → tf32 → ieee; a dot found at tf32 skips the
middle rung, since tf32 is the setting that fails (tf32x3, then ieee). The finding calls
the failures numerical only when one of those shows in the text; otherwise it says so and
points at the failing changes themselves (an attempt that drops needed work fails for
reasons no precision setting fixes), to be diffed against the last kept experiment that
passed: the kernel the failures started from, not a passing attempt that was reverted.
The generic checks of the suspects are listed only when no kernel text could be read: a
text that was read and shows none has answered them.

A failure the log states was made on purpose is no failed attempt: a diagnostic that times
copies of the kernel with a stage removed says its outputs are "wrong by construction"
or its variants "timing only" (``Correctness: FAIL (the variants are wrong by
construction; timing only)``). Such a verdict, in the words the log gave with it (the
record's ``correctness_note``, read from a result file's field, a summary cell or a devlog
entry) or in a correctness field of the experiment's own text, neither joins a wall nor
breaks one, as an unknown verdict does; a verdict that also names a failure of another
kind (a clause without those words) still counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from kernelopt._words import count_text
from kernelopt.diagnose.context import Context, experiments_text, quote
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Check, Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import CorrectnessWallParams
from kernelopt.diagnose.source import Suspect, precision_suspects
from kernelopt.experiments.log import Experiment, KernelSource
from kernelopt.experiments.records import Correctness, Status

__all__ = [
    "ADVISE_FROM",
    "deliberate_failure",
    "detect",
    "fails_on_purpose",
    "failure_detail",
    "trailing_failures",
]

ADVISE_FROM = 2
"""Latest attempts failing correctness one after another (no attempt without a verdict
between them) from which, below a wall, the plan says to fix them before the next speed
idea (the item stays unchecked)."""

_PATHOLOGY = Pathology.CORRECTNESS_WALL
_GENERIC = (
    (
        "dot-input-precision",
        "If a tl.dot takes float32 operands, walk the ladder input_precision='tf32x3' → "
        "'tf32' → 'ieee' and compare each (skip the rung the kernel already runs; tf32 "
        "settings do not change bf16/fp16 dots).",
    ),
    (
        "lse-base-mismatch",
        "Check the LSE base: exp2 with a log2(e)-folded scale needs lse = m*ln2 + log(l).",
    ),
    (
        "unguarded-fully-masked-rows",
        "Check softmax masking: fully masked rows must not compute exp(-inf - -inf).",
    ),
    ("bf16-accumulation", "Check accumulators: keep them fp32 and cast once at the store."),
)


# A correctness field: "- Correctness: FAIL (...)", "- **Correctness**: FAIL — ...".
_VERDICT_FIELD = re.compile(r"^[\s>*_|-]*correct(?:ness)?[\s*_]*:\s*(?P<text>\S.*)$", re.I)
# The verdict word a field opens with, before its note.
_LEADING_FAIL = re.compile(r"^[\s*_`]*(?:fail(?:ed|s)?\b|✗|❌|✘)[\s*_`]*[(:—–,-]?\s*", re.I)
# Words that make a failure deliberate: outputs run only for their timing, or wrong by
# design in copies made to measure ("the removal variants are wrong by construction").
# "Wrong by construction" alone may be a design's own flaw ("the merge is wrong by
# construction: it drops a piece"), so it needs the measuring next to it.
_TIMING_ONLY = re.compile(r"\btiming[- ]only\b|\bonly for (?:the )?timing\b", re.IGNORECASE)
_BY_DESIGN = re.compile(
    r"\bby construction\b|\b(?:deliberately|intentionally)\s+(?:wrong|broken|incorrect)\b"
    r"|\bwrong on purpose\b",
    re.IGNORECASE,
)
_MEASURING = re.compile(
    r"\btim(?:ing|ed)\b|\bmeasur\w*|\bdiagnostic\w*|\bablation\w*|\bremov(?:al|ed)\b"
    r"|\bvariants?\b|\bcop(?:y|ies)\b",
    re.IGNORECASE,
)
_FAILED = re.compile(
    r"\bfail\w*|\bwrong\b|\bincorrect\b|\bnan\b|\bmismatch\w*|\bbroken\b|\bgarbage\b",
    re.IGNORECASE,
)


def fails_on_purpose(statement: str) -> bool:
    """Whether a FAIL verdict's text says its outputs were wrong on purpose: some clause
    says so (``timing only``, or ``wrong by construction`` in a verdict about copies,
    variants or timing), and every clause that names a failure says so (``bf16 partials
    right; the removal variants are wrong by construction`` is deliberate, ``wrong on the
    GPU for the tail tile`` is not)."""
    body = _LEADING_FAIL.sub("", statement.strip(), count=1)
    clauses = [c for c in body.split(";") if c.strip()]
    measuring = _MEASURING.search(body) is not None

    def on_purpose(clause: str) -> bool:
        return bool(_TIMING_ONLY.search(clause) or (measuring and _BY_DESIGN.search(clause)))

    return any(on_purpose(c) for c in clauses) and all(
        on_purpose(c) or not _FAILED.search(c) for c in clauses
    )


def _verdicts(experiment: Experiment) -> Iterator[tuple[str, str]]:
    """The correctness statements of ``experiment`` (text, where): the words the log gave
    with its verdict, where the readers found them (its ``result.md`` field, its summary
    cell, its devlog entry), and the correctness fields of its own text."""
    if experiment.correctness_note:
        where = experiment.refs.get("correctness_note") or experiment.ref("correctness")
        yield experiment.correctness_note, str(where or "")
    for line in experiment.text.splitlines():
        match = _VERDICT_FIELD.match(line)
        if match and _FAILED.search(match.group("text")):
            yield match.group("text"), str(experiment.ref("correctness") or "")


def deliberate_failure(experiment: Experiment) -> Evidence | None:
    """Where the log says ``experiment``'s failing outputs were wrong on purpose (a stage
    removed to time it), or None (see :func:`fails_on_purpose`).

    The record holds what the log said (:attr:`Experiment.correctness_note` and
    :attr:`Experiment.text`), so no file is read again.
    """
    if experiment.correctness is not Correctness.FAIL:
        return None
    for text, where in _verdicts(experiment):
        if fails_on_purpose(text):
            return Evidence(quote=quote(text), source=where, experiments=(experiment.number,))
    return None


def trailing_failures(experiments: tuple[Experiment, ...]) -> list[Experiment]:
    """The most recent consecutive correctness failures (unknowns skipped, a pass stops)."""
    failures: list[Experiment] = []
    for experiment in reversed(experiments):
        if not experiment.attempted or experiment.correctness is Correctness.UNKNOWN:
            continue
        if experiment.correctness is Correctness.PASS:
            break
        failures.append(experiment)
    failures.reverse()
    return failures


def _wall_kernels(ctx: Context, failures: Sequence[Experiment]) -> tuple[KernelSource, ...]:
    """The kernel text to look for the numeric suspects in: the full snapshots of the latest
    failing attempt that left any (the numbers went wrong there; the kernel CLAUDE.md names
    may be the passing one the failures were reverted to), else the kernel as it stands."""
    for experiment in reversed(failures):
        found = ctx.snapshots.get(experiment.number)
        if found:
            return found
    return ctx.kernels


def _suspect_words(suspect: Suspect) -> str:
    """A found suspect as the finding names it, with where the kernel text shows it: its
    name (``"dot input precision (kernels/x.py:7)"``), or for a low-precision accumulator
    the type the kernel holds it in (``"an fp16 accumulator (kernels/x.py:12)"``), since
    the catalog's name says bf16 for fp16 too."""
    where = f"({suspect.path}:{suspect.line})"
    if not suspect.dtype:
        return f"{suspect.name} {where}"
    article = "an" if suspect.dtype.startswith("f") else "a"  # an fp16, a bf16
    return f"{article} {suspect.dtype} accumulator {where}"


def _kept(experiment: Experiment) -> bool:
    """Whether later attempts start from ``experiment``'s kernel: kept, a baseline, or a
    status the log does not give (not reverted, neutral or failed)."""
    return experiment.status not in (Status.REVERTED, Status.NEUTRAL, Status.FAILED)


def _passed(experiment: Experiment) -> bool:
    """Whether ``experiment`` was attempted and passed correctness."""
    return experiment.attempted and experiment.correctness is Correctness.PASS


def _last_pass(
    experiments: tuple[Experiment, ...], first_failure: Experiment
) -> tuple[Experiment | None, list[int]]:
    """The latest experiment before ``first_failure`` that passed correctness and was kept
    (or the baseline): the kernel the failures started from. With it, the numbers of the
    attempts after it that passed but were not kept (reverted), which are not that kernel."""
    before = experiments[: experiments.index(first_failure)]
    dropped: list[int] = []
    for experiment in reversed(before):
        if not _passed(experiment):
            continue
        if _kept(experiment):
            return experiment, sorted(dropped)
        dropped.append(experiment.number)
    return None, sorted(dropped)


def _reference_words(experiments: tuple[Experiment, ...], first_failure: Experiment) -> str:
    """What to diff the failing changes against, in words: ``exp 2, the last that passed``,
    or ``exp 2, the last kept experiment that passed (exps 3, 4, 5 passed but were not
    kept)`` where later passes were reverted, or ``the reference``."""
    kept, dropped = _last_pass(experiments, first_failure)
    if kept is None:
        return "the reference"
    if not dropped:
        return f"{kept.label}, the last that passed"
    return (
        f"{kept.label}, the last kept experiment that passed ({experiments_text(dropped)} "
        f"passed but {'was' if len(dropped) == 1 else 'were'} not kept)"
    )


def _latest_pass(experiments: Sequence[Experiment]) -> Experiment | None:
    """The latest attempt whose verdict is a pass (unknown verdicts skipped)."""
    return next(
        (e for e in reversed(experiments) if e.attempted and e.correctness is Correctness.PASS),
        None,
    )


# Where a correctness note compares with its reference: " vs float64 (tol 0.001)".
_AGAINST = re.compile(r"\s+(?:vs\.?|against)\s.*$", re.IGNORECASE)
# An error a clause of the note states: "dbeta rel err 5.0e-01", "max abs error: 0.3".
_ERROR = re.compile(r"\berr(?:or)?\b\D{0,3}?(\d+(?:\.\d*)?(?:e[-+]?\d+)?)", re.IGNORECASE)
# A part of a note that states an output's distance from its reference ("(ref 2.2e-13)",
# "124 steps off", "expected 0, got 3", "rel err 5e-01"), and one that says it held.
_DEVIATION = re.compile(
    r"\bref(?:erence)?\b|\bexpected\b|\bgot\b|\bsteps? off\b|\boff by\b|\bdiffer\w*"
    r"|\bdeviat\w*|\berr(?:or)?\b",
    re.IGNORECASE,
)
_HELD = re.compile(
    r"\bright\b|\bok\b|\bpass\w*|\bwithin\b|\bexact\b|\bmatch(?:es|ed)?\b", re.IGNORECASE
)
# A count of outputs that held, short of all of them ("3/8 ids equal float64 ref", "5 of 8
# shapes match"): said with a word of agreement it reads as a pass, but it is the failure.
_COUNT = re.compile(r"\b(\d+)\s*(?:/|\bout\s+of\b|\bof\b)\s*(\d+)\b", re.IGNORECASE)
_AGREE = re.compile(
    r"\bequal\w*|\bmatch\w*|\bwithin\b|\bcorrect\b|\bpass\w*|\bagree\w*|\bidentical\b"
    r"|\bexact\w*|\bsame\b|\bok\b",
    re.IGNORECASE,
)
# How long the detail of one failure may grow on the checklist line.
_DETAIL_CHARS = 100


def _short_count(part: str) -> bool:
    """Whether a clause of ``part`` counts fewer outputs that agree with the reference than
    it checked (``3/8 ids equal float64 ref``): N of M with N < M beside a word of
    agreement."""
    for clause in re.split(r"[,(]", part):
        if not _AGREE.search(clause):
            continue
        if any(int(m.group(1)) < int(m.group(2)) for m in _COUNT.finditer(clause)):
            return True
    return False


def failure_detail(experiment: Experiment) -> str:
    """The words the log gave with ``experiment``'s correctness verdict, short and on one
    line: of a note in parts (``right at b=32; wrong on the GPU``), the parts that say what
    failed; where it lists an error per output (``dx rel err 2.1e-04, dbeta rel err 5.0e-01
    vs float64``), the outputs with the largest one, with the reference it was compared to
    (``dbeta rel err 5.0e-01 vs float64``); ``""`` where the log gave none."""
    note = " ".join(experiment.correctness_note.split())
    if not note:
        return ""
    parts = [part.strip() for part in note.split(";") if part.strip()]
    # A part that states how far an output is from its reference says what failed as
    # much as one that names the failure: "scale 0 (ref 2.2e-13), q 124 steps off" is the
    # failure, "NaN not caught by poison on CPU" a side note on how it was found.
    # A part that counts fewer agreeing outputs than it checked is the failure itself,
    # ahead of errors stated beside it ("3/8 ids equal float64 ref; probs rel err 7e-08").
    failing = [part for part in parts if _short_count(part)] or [
        part
        for part in parts
        if _FAILED.search(part) or (_DEVIATION.search(part) and not _HELD.search(part))
    ]
    if failing and len(failing) < len(parts):
        # "right at b=32; wrong on the GPU for the tail tile": the part that failed.
        note = "; ".join(failing)
    tail = _AGAINST.search(note)
    body, against = (note[: tail.start()], tail.group(0)) if tail else (note, "")
    clauses = [c.strip() for c in re.split(r"[;,]", body) if c.strip()]
    errors = [_ERROR.search(clause) for clause in clauses]
    if "(" not in body and len(clauses) > 1 and all(errors):
        values = [float(match.group(1)) for match in errors if match]
        if max(values) > min(values):
            # The outputs that went wrong, not the ones that held.
            body = ", ".join(c for c, v in zip(clauses, values, strict=True) if v == max(values))
    return quote(body + against, _DETAIL_CHARS)


def _failures_text(failures: Sequence[Experiment], limit: int = 3) -> str:
    """``failures`` by number with what each log line says of them, the same words said
    once (``"exps 4, 5: 'rel err 5.2e-01 vs float64'"``); numbers alone where the log gave
    no words, and at most ``limit`` distinct details."""
    by_detail: dict[str, list[int]] = {}
    for experiment in failures:
        by_detail.setdefault(failure_detail(experiment), []).append(experiment.number)
    if list(by_detail) == [""]:
        return experiments_text([e.number for e in failures])
    parts = []
    for detail, numbers in list(by_detail.items())[:limit]:
        parts.append(
            f"{experiments_text(numbers)}: '{detail}'" if detail else experiments_text(numbers)
        )
    left = len(by_detail) - limit
    return "; ".join(parts) + (f"; {count_text(left, 'more failure note')}" if left > 0 else "")


def _no_wall(
    judged: Sequence[Experiment],
    all_failures: Sequence[Experiment],
    failures: Sequence[Experiment],
) -> str:
    """The failures of a log with no wall, in words: how many it holds and how many of them
    are among the latest attempts, those after the latest pass (the run of failures that
    ends the log). Where a failure came before that pass, the sentence names the pass, so
    a second-latest failure is not read as one of the latest: ``1 failure in the log (exp
    4), none among the latest attempts (those after the latest pass, exp 5)``."""
    if not all_failures:
        return f"No correctness failures in the log; {len(failures)} among the latest attempts"
    detail = (
        f"{count_text(len(all_failures), 'failure')} in the log ({_failures_text(all_failures)}), "
    )
    latest = (
        f"{len(failures)} among the latest attempts"
        if failures
        else "none among the latest attempts"
    )
    passed = _latest_pass(judged)
    if len(failures) == len(all_failures) or passed is None:
        return detail + latest
    return detail + f"{latest} (those after the latest pass, {passed.label})"


def _latest_failing(experiments: Sequence[Experiment]) -> list[Experiment]:
    """The latest attempts, one after another, that all fail correctness: unlike
    :func:`trailing_failures`, an attempt without a verdict ends the run (a change kept or
    timed between two failures is the effort moving on, not stuck on them)."""
    run: list[Experiment] = []
    for experiment in reversed(experiments):
        if not experiment.attempted:
            continue
        if experiment.correctness is not Correctness.FAIL:
            break
        run.append(experiment)
    return run[::-1]


def _below_wall(ctx: Context, failures: Sequence[Experiment], sentence: str) -> Outcome:
    """The latest attempts fail correctness, fewer of them than a wall: the item stays
    unchecked, but its finding (low severity) puts fixing them before the next speed idea
    in the plan, diffed against the kernel the failures started from."""
    numbers = [e.number for e in failures]
    details = {failure_detail(e) for e in failures}
    same = len(details) == 1 and "" not in details
    how = f" the same way ('{next(iter(details))}')" if same else ""
    who = experiments_text(numbers)
    summary = (
        f"{sentence} The latest {count_text(len(failures), 'attempt')} ({who}) fail "
        f"correctness{' the same way' if same else ''}: fix that before the next speed idea."
    )
    reference = _reference_words(ctx.experiments, failures[0])
    action = ctx.action(
        f"Fix correctness before the next speed idea: {who} fail{how}. Diff "
        f"{failures[-1].label}'s kernel against {reference}, find what it computes "
        "differently, and time nothing until it passes."
    )
    evidence = [
        ctx.evidence(
            e,
            f"{e.label}: {e.description} — FAIL"
            + (f" ({failure_detail(e)})" if failure_detail(e) else ""),
            "correctness",
        )
        for e in failures[:6]
    ]
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=numbers,
        severity=Severity.LOW,
        confidence=0.6,
        evidence=evidence,
        actions=[action],
    )
    return Outcome(
        check=Check(pathology=_PATHOLOGY, checked=False, sentence=summary), finding=finding
    )


def detect(ctx: Context, params: CorrectnessWallParams) -> Outcome:
    """Report ``min_failures`` trailing correctness failures, with the suspects found."""
    experiments = ctx.experiments
    known = [e for e in experiments if e.correctness is not Correctness.UNKNOWN]
    if not known:
        return not_found(
            _PATHOLOGY,
            "No experiment records a correctness verdict, so a correctness wall cannot be ruled "
            "in or out.",
            ["correctness per experiment (PASS/FAIL in summary.md or result.md)"],
        )
    # Diagnostics whose outputs are wrong on purpose are no attempt at a correct kernel:
    # they neither join nor break a wall.
    on_purpose = [e.number for e in experiments if deliberate_failure(e) is not None]
    judged = tuple(e for e in experiments if e.number not in on_purpose)
    failures = trailing_failures(judged)
    all_failures = [e for e in judged if e.correctness is Correctness.FAIL]
    timing_only = (
        f"; {experiments_text(on_purpose)} fail{'s' if len(on_purpose) == 1 else ''} by "
        "construction (timing variants), not counted"
        if on_purpose
        else ""
    )
    if len(failures) < params.min_failures:
        sentence = (
            _no_wall(judged, all_failures, failures)
            + f": no wall (needs {params.min_failures} in a row){timing_only}."
        )
        if len(_latest_failing(judged)) < ADVISE_FROM:
            return not_found(_PATHOLOGY, sentence)
        return _below_wall(ctx, failures, sentence)
    numbers = [e.number for e in failures]
    kernels = _wall_kernels(ctx, failures)
    missing: list[str] = []
    suspects = precision_suspects(kernels) if kernels else []
    if not kernels:
        missing.append(
            "kernel source (CLAUDE.md kernel path or exp_N snapshot) to check the numeric suspects"
        )
    hits = [s for s in suspects if s.found]
    evidence: list[Evidence] = [
        ctx.evidence(e, f"{e.label}: {e.description} — FAIL", "correctness") for e in failures[:6]
    ]
    evidence += [Evidence(quote=quote(s.text), source=f"{s.path}:{s.line}") for s in hits]
    actions = [ctx.action(f"{_suspect_words(s)}: {s.advice}.", s.catalog_id) for s in hits]
    reference = _reference_words(experiments, failures[0])
    actions.append(
        ctx.action(
            f"Diff each failing change against {reference}: a change that skips, replaces or "
            "reorders work the result needs fails whatever the precision; restore that work "
            "first, then bisect what is left."
        )
    )
    # A kernel text that was read and shows no suspect has answered the generic checks;
    # they are advice only when nothing could be read.
    for catalog_id, text in () if kernels else _GENERIC:
        actions.append(ctx.action(text, catalog_id))
    if hits:
        named = ", ".join(_suspect_words(s) for s in hits)
        cause = f"Numeric suspects in the kernel text: {named}."
    elif kernels:
        cause = (
            "No numeric suspect (a tf32 dot on float32 operands, a mismatched log base, "
            "unguarded -inf masking, a low-precision accumulator) shows in the kernel text: "
            "check what the failing changes do before their precision."
        )
    else:
        cause = "The kernel text could not be checked for numeric suspects."
    # Attempts without a verdict neither join nor break the run, but "the last N attempts"
    # must not hide them.
    silent = [
        e.number
        for e in experiments
        if e.attempted and e.correctness is Correctness.UNKNOWN and e.number > numbers[0]
    ]
    # Nor may it hide the timing variants among them.
    variants = [n for n in on_purpose if n > numbers[0]]
    aside = [f"{experiments_text(silent)} record{'s' if len(silent) == 1 else ''} none"] * bool(
        silent
    ) + [
        f"{experiments_text(variants)} fail{'s' if len(variants) == 1 else ''} by construction, "
        "not counted"
    ] * bool(variants)
    summary = (
        f"The latest {count_text(len(failures), 'attempt')} with a verdict "
        f"({experiments_text(numbers)}) {'fails' if len(failures) == 1 else 'all fail'} "
        f"correctness ({'; '.join(aside)}). "
        if aside
        else f"The last {count_text(len(failures), 'attempt')} ({experiments_text(numbers)}) "
        f"{'fails' if len(failures) == 1 else 'all fail'} correctness. "
    ) + cause
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=numbers,
        severity=Severity.HIGH,
        confidence=round(
            min(0.95, 0.7 + 0.05 * (len(failures) - params.min_failures) + (0.1 if hits else 0)), 2
        ),
        evidence=evidence,
        actions=actions,
        missing=missing,
    )
    return found(finding)
