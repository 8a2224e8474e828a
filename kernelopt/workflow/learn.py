"""LEARN: turn a before/after measurement into a knowledge-base update, by the protocol.

Given an :class:`~kernelopt.workflow.Observation` (a judged before/after timing of one
change at one trial point) and the catalog entry that was applied, :func:`learn` decides
and performs the update through the catalog's atomic operations
(:class:`kernelopt.catalog.KnowledgeTree`) on a user's knowledge tree:

- **FAST** (the change is faster beyond the same-version spread): a local-experiment
  evidence row ``Config | Before | After | Change`` on the applied entry, citing the
  measurement files, with the GPU and date in the row.
- **SLOW** (a clear regression): the failure is recorded as an anti-pattern: an
  evidence row on an existing anti-pattern (the one named, the one derived from this
  entry before, or the applied entry itself when it is an anti-pattern), or a new
  anti-pattern derived from the applied entry's context, recording the metrics that
  exposed it. Its Generalization says plainly that one local measurement is not a rule
  yet: local evidence stays in the evidence table, apart from the generalization.
- **SAME / UNCLEAR** (within noise, or not measured well enough to say): nothing is
  written, and the outcome says so.

An anti-pattern is applied by removing it: with an anti-pattern as the applied entry, the
after version is its fix (the version without it), so FAST confirms the entry and SLOW
goes against it (:attr:`LearnOutcome.contradicts`); either is an evidence row on it.

Placement follows the entry's scope: shared entries under ``optimizations/`` and
``anti-patterns/``, language-specific ones under ``languages/<language>/``. The built-in
tree shipped with kernelopt is never written unless ``allow_builtin=True``.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import attrs

from kernelopt._checks import as_path
from kernelopt._enum import TextEnum
from kernelopt._errors import CatalogError, InputError, expected
from kernelopt._fileio import file_in_the_way, locked
from kernelopt._numbers_text import readable, significant
from kernelopt.bench.compare import Verdict, _ratio_text, _too_few_rounds
from kernelopt.catalog import (
    BUILTIN_ROOT,
    METRICS,
    Catalog,
    Entry,
    Evidence,
    EvidenceRow,
    Interaction,
    Kind,
    KnowledgeTree,
    Relation,
    SourceType,
    canonical_language,
)
from kernelopt.catalog.index import render_index
from kernelopt.catalog.layout import INDEX_NAME, candidate_paths
from kernelopt.catalog.loader import load_tree, read_exact
from kernelopt.catalog.model import ID_RE
from kernelopt.catalog.store import _refuse_special_files
from kernelopt.experiments.records import Correctness
from kernelopt.workflow._fields import require_instance, require_str
from kernelopt.workflow.observe import ROWS_METHOD, UNPAIRED_METHOD, Observation

__all__ = ["Action", "LearnOutcome", "derive_anti_pattern", "evidence_row", "learn"]

DEFAULT_KNOWLEDGE = "docs/knowledge"


class Action(TextEnum):
    """What :func:`learn` did to the knowledge tree."""

    EVIDENCE = "evidence"  # an evidence row on an existing entry
    NEW_ANTI_PATTERN = "new-anti-pattern"  # a new anti-pattern entry (with its evidence)
    NONE = "none"  # nothing: the result is within noise or undecided


def _time(value: float, unit: str) -> str:
    # Four significant digits, never in exponent form: a long time keeps all its integer
    # digits ("12346 µs", "10000 µs" for 9999.7), a short one is written out ("0.00001234 s").
    return f"{significant(value)} {'µs' if unit == 'us' else unit}"


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "/").split())


def evidence_row(
    observation: Observation, *, kernel: str = "", language: str | None = None
) -> EvidenceRow:
    """The ``Config | Before | After | Change`` row of an observation.

    The Config cell holds what a reader needs to weigh the row: kernel and language,
    trial point, the two versions (and the knobs that changed), GPU and date.

    Parameters
    ----------
    observation : Observation
        The judged A/B comparison.
    kernel : str
        Kernel name for the Config cell; left out when empty.
    language : str, optional
        Implementation language for the Config cell; left out when None.

    Returns
    -------
    EvidenceRow
        Times in the observation's unit, the change in percent with the verdict.

    Examples
    --------
    >>> from kernelopt.bench import Comparison
    >>> from kernelopt.workflow import Observation, evidence_row
    >>> seen = Observation(
    ...     comparison=Comparison(verdict="FAST", ratio=0.9, ratio_low=0.89, ratio_high=0.91,
    ...                           noise=0.004, threshold=0.01),
    ...     before=74.18, after=66.53, point="b=32 s=1 t=4096 h=16", gpu="NVIDIA H200",
    ...     date="2026-12-02", source="runs/a.jsonl vs runs/b.jsonl",
    ...     before_label="splits16", after_label="splits8")
    >>> row = evidence_row(seen, kernel="mla_decode", language="triton")
    >>> row.config
    'mla_decode (triton) b=32 s=1 t=4096 h=16, splits16 -> splits8, NVIDIA H200, 2026-12-02'
    >>> row.before, row.after, row.change
    ('74.18 µs', '66.53 µs', '-10.3 % (FAST)')
    """
    _require_observation(observation)
    require_str(kernel, where="kernel")
    require_str(language, where="language", optional=True)
    what = " ".join(filter(None, (kernel, f"({language})" if language else "", observation.point)))
    versions = ""
    if observation.before_label or observation.after_label:
        versions = f"{observation.before_label or '?'} -> {observation.after_label or '?'}"
    parts = [what, versions, *observation.knob_changes, observation.gpu, observation.date]
    return EvidenceRow(
        config=_cell(", ".join(p for p in parts if p)),
        before=_time(observation.before, observation.unit),
        after=_time(observation.after, observation.unit),
        change=f"{_change_text(observation.change_pct)} % ({observation.verdict.value})",
    )


# A change is written to one decimal (-10.3 %), and to more only where one would round a
# saving short of the whole time to -100.0 (a 5759x speedup saves 99.98 %, not 100 %).
# Past 15 decimals a float holds no more digits to show.
_CHANGE_DECIMALS = 1
_MOST_CHANGE_DECIMALS = 15


def _change_text(percent: float) -> str:
    """A time's change in percent, signed: ``-10.3``, ``+37.1``, and ``-99.98`` (not
    ``-100.0``) for a change short of -100 %.

    Parameters
    ----------
    percent : float
        The change of the time, % (negative is faster).

    Returns
    -------
    str
        The change to one decimal, or to the fewest more that keep it above -100.

    Examples
    --------
    >>> _change_text(-10.26), _change_text(37.14), _change_text(-99.98263)
    ('-10.3', '+37.1', '-99.98')
    """
    decimals = _CHANGE_DECIMALS
    text = f"{percent:+.{decimals}f}"
    while percent > -100.0 and float(text) <= -100.0 and decimals < _MOST_CHANGE_DECIMALS:
        decimals += 1
        text = f"{percent:+.{decimals}f}"
    return text


def _verdict_sentence(observation: Observation) -> str:
    c = observation.comparison
    # An interval of the ratio: paired (compare, judge) or of two rows' own samples; rows
    # judged by their bands have none (their span is said in the UNCLEAR reason).
    shown = c.pairs or observation.method.startswith(UNPAIRED_METHOD)
    interval = f" [{_ratio_text(c.ratio_low)}, {_ratio_text(c.ratio_high)}]" if shown else ""
    return (
        f"Verdict {c.verdict.value} by {observation.method or 'the given comparison'}: "
        f"time ratio {_ratio_text(c.ratio)}{interval}, same-version spread ±{c.noise:.1%}, "
        f"threshold ±{c.threshold:.1%}."
    )


def _metrics_sentence(observation: Observation) -> str:
    changes = observation.metric_changes()
    if not changes:
        if observation.metrics_before and observation.metrics_after:
            return "No recorded roofline metric moved by more than 1 %."
        return "No roofline metrics were recorded with the measurements."
    shown = ", ".join(f"{name} {readable(a, 3)} -> {readable(b, 3)}" for name, a, b in changes)
    return f"Metrics before -> after: {shown}."


def _row_notes_sentence(observation: Observation) -> str:
    """The rows' own notes as a sentence (``The rows' notes: INVENTED numbers (no GPU).``),
    on one line; empty when they have none. A caveat the rows carry (simulated or invented
    timings, a halved batch) stays with the numbers it qualifies."""
    notes = " ".join(observation.notes.split())
    return f"The rows' notes: {notes.rstrip('.')}." if notes else ""


# An anti-pattern's evidence may time either side first (its cost added, or its fix);
# a row LEARN writes for an anti-pattern entry is of its fix.
_FIX_SENTENCE = "Before is the version with this anti-pattern, after its fix (without it)."


def _notes(observation: Observation) -> str:
    parts = (
        _verdict_sentence(observation),
        _metrics_sentence(observation),
        _row_notes_sentence(observation),
    )
    return " ".join(part for part in parts if part)


def _require_observation(observation: object) -> None:
    """Refuse anything but an :class:`Observation` by the argument's name."""
    require_instance(
        observation,
        Observation,
        "an Observation (observe_rows, observe_files, observe_comparison)",
        where="observation",
    )


def _kernel_of(families: tuple[str, ...]) -> str:
    """``"an attention or softmax kernel"``; ``"a kernel"`` for an entry of any family."""
    if not families or "any" in families:
        return "a kernel"
    kinds = " or ".join(families)
    return f"{'an' if kinds[0] in 'aeiou' else 'a'} {kinds} kernel"


def derive_anti_pattern(
    applied: Entry,
    observation: Observation,
    *,
    entry_id: str | None = None,
    family: str | None = None,
    language: str | None = None,
    kernel: str = "",
) -> Entry:
    """A new anti-pattern recording that applying ``applied`` made a kernel slower.

    The entry keeps the applied entry's scope (so a language-specific optimization
    gives a language-specific anti-pattern), states the context it was measured in,
    the metrics that moved, the applied entry's known failure modes as the first
    suspects, and the measurement as local evidence; its Generalization says that the
    rule is still to be established.

    Parameters
    ----------
    applied : Entry
        The optimization that was applied.
    observation : Observation
        The SLOW measurement.
    entry_id : str, optional
        Id of the new entry; default ``<applied id>-regression``.
    family, language : str, optional
        The kernel family and implementation language of the context; without a family
        the new entry keeps every family of ``applied``.
    kernel : str
        The kernel's name, for the evidence row.
    """
    require_instance(applied, Entry, "a catalog Entry (Catalog.get)", where="applied")
    _require_observation(observation)
    for name, value in (("entry_id", entry_id), ("family", family), ("language", language)):
        require_str(value, where=name, optional=True)
    require_str(kernel, where="kernel")
    families = (family,) if family else applied.families
    where = _kernel_of(families) + (f" written in {language}" if language else "")
    on = f" on {observation.gpu}" if observation.gpu else ""
    change = f"{_change_text(observation.change_pct)} %"
    before = _time(observation.before, observation.unit)
    after = _time(observation.after, observation.unit)
    new_label = observation.after_label or "the version with the change"
    old_label = observation.before_label or "the version without it"
    suspects = "\n".join(f"- {p}" for p in applied.pitfalls)
    mechanism = (
        f"Observed, not yet explained: {new_label} took {after} per call against {before} "
        f"for {old_label} ({change}) at {observation.point}{on}. "
        f"{_verdict_sentence(observation)} {_metrics_sentence(observation)}\n\n"
        f"Known failure modes of {applied.name} to check first:\n{suspects}"
    )
    affected = [f"Time per call: {before} -> {after} ({change})"]
    affected += [
        f"{METRICS.get(name, name)} ({name}): {readable(a, 3)} -> {readable(b, 3)}"
        for name, a, b in observation.metric_changes()
    ]
    implementation = (
        "```text\n"
        f"before: {observation.before_label or '(unnamed)'}\n"
        f"after:  {observation.after_label or '(unnamed)'}, applying {applied.id} "
        f"({applied.relative_path})\n"
        "```"
    )
    return Entry(
        id=entry_id or f"{applied.id}-regression",
        name=f"Regression from {applied.name}",
        kind=Kind.ANTI_PATTERN,
        scope=applied.scope,
        families=families,
        keywords=(f"{applied.id} regression",),
        contexts=(
            f"{applied.name} (`{applied.id}`) applied to {where}: slower at "
            f"{observation.point}{on}.",
            f"The context it was chosen for: {applied.contexts[0]}",
        ),
        mechanism=mechanism,
        affected_metrics=tuple(affected),
        implementation=implementation,
        evidence=(
            Evidence(
                source_type=SourceType.LOCAL_EXPERIMENT,
                source=observation.source,
                rows=(evidence_row(observation, kernel=kernel, language=language),),
                notes=_row_notes_sentence(observation),
            ),
        ),
        generalization=(
            f"Not generalized yet: one local measurement. The reusable rule is the condition "
            f"under which {applied.name} stops paying off; confirm the loss at the other "
            f"trial points and shapes, find the metric that explains it, then narrow the "
            f"When to Apply of `{applied.id}` and state the rule here."
        ),
        pitfalls=(
            "Reading one trial point as a rule: the regression may belong to this shape, "
            "GPU or implementation.",
        ),
        interactions=(
            Interaction(
                target=applied.id,
                relation=Relation.RELATED,
                note="The optimization whose application made the kernel slower here.",
            ),
        ),
    )


def _unclear_reason(observation: Observation) -> str:
    """Why an observation was judged UNCLEAR, with its numbers, as a sentence.

    The interval of time ratios reaching past the threshold on one side but not beyond
    it is a result that straddles the threshold. An interval within the threshold is
    UNCLEAR only when the same-version spread is above the limit a SAME verdict allows
    (``max_noise``), or, for A/B/A' rounds, when too few rounds were timed to hold the
    confidence: a change within such a spread says nothing either way.
    """
    c = observation.comparison
    low, high = 1.0 - c.threshold, 1.0 + c.threshold
    # Rows judged by their bands give the span of ratios the bands allow, no confidence
    # interval: a span across the threshold is their spread, said below.
    banded = observation.method.startswith(ROWS_METHOD)
    if not banded and (c.ratio_low < low <= c.ratio_high or c.ratio_low <= high < c.ratio_high):
        return (
            f"the result straddles the threshold (time ratio in [{_ratio_text(c.ratio_low)}, "
            f"{_ratio_text(c.ratio_high)}] against ±{c.threshold:.1%}); measure longer (more "
            "samples, keep the raw samples) first."
        )
    if c.pairs and _too_few_rounds(c.pairs, c.confidence):
        return (
            f"{c.pairs} rounds are too few for a verdict at confidence {c.confidence:g}; "
            "time at least 3 rounds first."
        )
    return (
        f"the rows' same-version spread (±{c.noise:.1%}) is too wide to judge a change of "
        f"{_change_text(observation.change_pct)}% within it; measure again with a steadier "
        "spread (a quieter GPU, more samples) first."
    )


@attrs.frozen(kw_only=True)
class LearnOutcome:
    """What the LEARN step decided and did.

    Parameters
    ----------
    action : Action
        EVIDENCE, NEW_ANTI_PATTERN or NONE.
    applied : str
        Id of the entry that was applied.
    entry_id : str, optional
        Id of the entry written (None when nothing was).
    path : Path, optional
        The file written (or that would be, on a dry run).
    row : EvidenceRow, optional
        The evidence row recorded.
    observation : Observation
        The measurement learned from.
    dry_run : bool
        Nothing was written.
    contradicts : bool
        The result goes against the entry written (an anti-pattern whose fix measured
        slower).
    related : tuple of str
        Anti-patterns the applied entry links to, worth reading on a regression.
    created : Entry, optional
        The new anti-pattern, for NEW_ANTI_PATTERN.
    recorded_before : bool
        The entry already held this measurement from the same source (LEARN run again on
        it, under the same or other kernel and language labels): nothing was written, so
        one measurement counts once.
    fix : bool
        The applied entry is an anti-pattern, so the after version was read as its fix
        (the version without it): FAST confirms it, SLOW goes against it.
    """

    action: Action
    applied: str
    entry_id: str | None = None
    path: Path | None = None
    row: EvidenceRow | None = None
    observation: Observation
    dry_run: bool = False
    contradicts: bool = False
    related: tuple[str, ...] = ()
    created: Entry | None = None
    recorded_before: bool = False
    fix: bool = False

    @property
    def verdict(self) -> Verdict:
        """The observation's verdict."""
        return self.observation.verdict

    def summary(self) -> str:
        """One paragraph: the result, and what was (or was not) written where."""
        o = self.observation
        c = o.comparison
        who = f"{o.after_label or 'after'} vs {o.before_label or 'before'}"
        on = f" on {o.gpu}" if o.gpu else ""
        head = (
            f"{c.verdict.value}: {who} at {o.point}{on}: "
            f"{_time(o.after, o.unit)} against {_time(o.before, o.unit)}{_timed(o)} "
            f"({_change_text(o.change_pct)}%, threshold ±{c.threshold:.1%}, "
            f"{o.method or 'comparison'})."
        )
        would = "Would record" if self.dry_run else "Recorded"
        if self.action is Action.NONE:
            if c.verdict is Verdict.SAME:
                tail = (
                    f"Within noise: nothing recorded for `{self.applied}` (a change smaller "
                    "than the same-version spread teaches nothing)."
                )
            else:
                tail = f"Nothing recorded for `{self.applied}`: {o.caveat or _unclear_reason(o)}"
            return f"{head} {tail}{_keep_samples(o)}"
        if self.action is Action.NEW_ANTI_PATTERN:
            tail = (
                f"{'Would create' if self.dry_run else 'Created'} anti-pattern "
                f"`{self.entry_id}` at {self.path} from the context of `{self.applied}`, with "
                f"this measurement as local evidence (source: {o.source})."
            )
        elif self.recorded_before:
            tail = (
                f"This measurement is already recorded in `{self.entry_id}` at {self.path} "
                f"from the same source ({o.source}): nothing written again."
            )
        else:
            tail = (
                f"{would} a local-experiment evidence row in `{self.entry_id}` at {self.path} "
                f"(source: {o.source}); its Generalization is left as it was."
            )
        if self.contradicts:
            tail += (
                f" The result goes against `{self.entry_id}`: the after version, read as its "
                "fix (the version without it), is slower; if it holds at other points, "
                "refine its When to Apply or flip it. If the after version is the one that "
                "adds it instead, give the files the other way round."
            )
        elif self.fix:
            tail += (
                f" It confirms `{self.entry_id}`: the after version, read as its fix (the "
                "version without it), is faster."
            )
        if self.related:
            tail += f" See also: {', '.join(f'`{r}`' for r in self.related)}."
        if o.notes:
            tail += f" {_row_notes_sentence(o)}"
        if o.host_clock:
            # learn() gets here with host-clock timings only when allow_host_clock was given.
            tail += " Timed with the host clock (CPU), as allowed: it says nothing about a GPU."
        return f"{head} {tail}{_keep_samples(o)}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        o = self.observation
        c = o.comparison
        return {
            "action": self.action.value,
            "verdict": c.verdict.value,
            "applied": self.applied,
            "entry_id": self.entry_id,
            "path": None if self.path is None else str(self.path),
            "row": None if self.row is None else attrs.asdict(self.row),
            "dry_run": self.dry_run,
            "contradicts": self.contradicts,
            "related": list(self.related),
            "point": o.point,
            "gpu": o.gpu,
            "date": o.date,
            "source": o.source,
            "before": o.before,
            "after": o.after,
            "unit": o.unit,
            "ratio": c.ratio,
            "ratio_low": c.ratio_low,
            "ratio_high": c.ratio_high,
            "noise": c.noise,
            "threshold": c.threshold,
            "method": o.method,
            "summary": self.summary(),
        }


def _timed(observation: Observation) -> str:
    """How both sides were timed, for the summary: ``", timed cold"``, with the other ways
    the files hold the point when the rows written last were judged without a mode
    chosen; empty when the mode is not known."""
    if not observation.mode:
        return ""
    text = f", timed {observation.mode}"
    if observation.other_modes:
        others = " and ".join(observation.other_modes)
        text += (
            f" (the rows written last; the files also time the point {others}: choose "
            "with --mode (mode=))"
        )
    return text


def _keep_samples(observation: Observation) -> str:
    """How to judge by samples, for an observation judged from rows without them; empty
    for one that was (or came from compare)."""
    if observation.comparison.pairs or not observation.method.startswith(ROWS_METHOD):
        return ""
    return (
        " To judge by their samples, keep them in both rows: row_from_measurement(..., "
        "keep_samples=True), at least 4 a side."
    )


def _anchored_part(part: str, anchor: Path) -> str:
    """One path of a citation as the tree keeps it: read from the tree's folder.

    A path naming a file from the working directory, as the user gave it, is written from
    ``anchor`` (the tree's physical folder) to the file itself, so that a run from any
    folder reads it back as the same file; a file sharing no folder but the file-system
    root with the tree keeps its absolute path. Text naming no file (a URL, a run's name)
    is kept as it is.
    """
    if not part or not os.path.exists(part):
        return part
    real = os.path.realpath(part)
    try:
        shared = os.path.commonpath([real, anchor])
    except ValueError:  # another drive: no path leads from the tree to it
        return real
    if Path(shared).parent == Path(shared):  # only the root in common: no project to move
        return real
    return Path(os.path.relpath(real, anchor)).as_posix()


def _anchored(source: str, anchor: Path) -> str:
    """``source`` (``"<before> vs <after>"``, or one path) as the tree keeps it: each
    path read from ``anchor``, the tree's physical folder (see :func:`_anchored_part`)."""
    return " vs ".join(_anchored_part(part.strip(), anchor) for part in source.split(" vs "))


def _same_file(one: str, other: str, anchor: Path) -> bool:
    # Read from the tree's folder, not the working directory: a row written by a run in
    # another folder names the same file. ./a.jsonl, a.jsonl, its absolute path and a link
    # to it name one file; a citation that is no path (a URL) resolves to a name no other
    # spelling shares, so it still compares as its text.
    if one == other:
        return True
    return os.path.normcase(os.path.realpath(anchor / one)) == os.path.normcase(
        os.path.realpath(anchor / other)
    )


def _same_source(recorded: str, source: str, anchor: Path) -> bool:
    """Whether two citations (``"<before> vs <after>"``, or one path) name the same files,
    however each path was spelled, both read from ``anchor``."""
    ours, theirs = recorded.split(" vs "), source.split(" vs ")
    return len(ours) == len(theirs) and all(
        _same_file(a.strip(), b.strip(), anchor) for a, b in zip(ours, theirs, strict=True)
    )


def _same_measurement(recorded: EvidenceRow, bare: EvidenceRow) -> bool:
    """Whether ``recorded`` is the row of the measurement ``bare`` states, whatever kernel
    and language labels it was written with.

    ``bare`` is the row :func:`evidence_row` writes without labels: its Config cell holds
    the measurement alone (point, versions, knobs, GPU, date). A labelled row's cell is
    that text after the labels (``mla_decode (triton) b=32 ...``, or ``mla_decode, v1 ->
    v2, ...`` for an observation without a point), so a run that only names the kernel or
    the language differently counts the measurement once.
    """
    if (recorded.before, recorded.after, recorded.change) != (bare.before, bare.after, bare.change):
        return False
    if recorded.config == bare.config or not bare.config:
        return recorded.config == bare.config
    return recorded.config.endswith((f" {bare.config}", f", {bare.config}"))


def _holds(entry: Entry, row: EvidenceRow, source: str, anchor: Path) -> bool:
    """Whether ``entry`` already has the measurement of ``row`` in a local-experiment
    block of ``source`` (cited in any spelling of the same files, read from ``anchor``).

    ``row`` is the label-free row of the measurement (:func:`evidence_row` without kernel
    or language): a row recorded under other labels is the same measurement
    (:func:`_same_measurement`).
    """
    return any(
        block.source_type is SourceType.LOCAL_EXPERIMENT
        and _same_source(block.source, source, anchor)
        and any(_same_measurement(recorded, row) for recorded in block.rows)
        for block in entry.evidence
    )


def _record(
    tree: KnowledgeTree, entry_id: str, row: EvidenceRow, observation: Observation, *, fix: bool
) -> tuple[Entry, bool]:
    """Record ``row`` in entry ``entry_id`` unless it holds its measurement by now (under
    any kernel and language labels); the entry as it is after, and whether it held the
    measurement already. ``observation`` cites its files as the tree keeps them
    (:func:`_anchored`); with ``fix``, the notes say that the after version is the one
    without the anti-pattern ``entry_id``.

    Two LEARN runs on one measurement at once would both have found the row missing and
    both have written it: the entry is read again and the row written under LEARN's own
    lock (``<tree>.learn.lock``), since each write takes the tree's lock, which is not
    reentrant.
    """
    anchor = tree.root.resolve()
    with locked(Path(f"{anchor}.learn")):
        current = tree.catalog().get(entry_id)
        if _holds(current, evidence_row(observation), observation.source, anchor):
            return current, True
        written = tree.record_evidence(
            entry_id,
            row,
            source_type=SourceType.LOCAL_EXPERIMENT,
            source=observation.source,
            notes=(_FIX_SENTENCE + " " if fix else "") + _notes(observation),
        )
        return written, False


def _may(path: Path, mode: int) -> bool:
    return os.access(path, mode, effective_ids=os.access in os.supports_effective_ids)


def _write_refusal(target: Path, *, lock: bool = False) -> InputError | None:
    """The error writing ``target`` would raise, found without writing; None where the
    write can go ahead.

    ``target`` is a file written atomically (a temp file in its folder, renamed over it)
    or, with ``lock``, a lock file opened for reading and writing; folders missing on the
    way are created by the write. The words are the write's own.
    """
    folder = target.parent
    blocker = file_in_the_way(target)
    if blocker is not None:
        got = f"{folder}, a file" if blocker == folder else f"{folder}, under the file {blocker}"
        return InputError(expected("a folder that can be created", got))
    denied = os.strerror(errno.EACCES)  # what the write would say, in its words
    existing = next((place for place in (folder, *folder.parents) if place.is_dir()), folder)
    if existing != folder:  # the write makes the folder first
        if _may(existing, os.W_OK | os.X_OK):
            return None
        return InputError(expected("a folder that can be created", f"{folder}: {denied}"))
    if lock and target.exists():
        if _may(target, os.R_OK | os.W_OK):
            return None
        return InputError(expected("a lock file kernelopt may open", f"{target}: {denied}"))
    if _may(folder, os.W_OK | os.X_OK):
        return None
    if lock:
        return InputError(expected("a lock file kernelopt may open", f"{target}: {denied}"))
    return InputError(expected("a folder kernelopt may write in", f"{folder}: {denied}"))


def _index_changes(tree: KnowledgeTree, entry: Entry) -> bool:
    """Whether saving ``entry`` makes the real run rewrite the tree's ``index.md``.

    The write regenerates the index from the tree and rewrites it where the text differs:
    for a new entry (an anti-pattern, a built-in entry's first copy), an entry moved to
    its canonical file, or an index missing or stale already. Evidence alone changes no
    row.
    """
    index = tree.root / INDEX_NAME
    if not tree.root.is_dir():
        return True  # a tree made by this write gets its first index
    loaded = load_tree(tree.root, lock=False)  # a dry run creates no lock file
    entries = {e.id: e for e in loaded.entries}
    entries[entry.id] = entry
    links = loaded.links()
    links[entry.id] = tree.path_of(entry).relative_to(tree.root).as_posix()
    text = render_index(entries.values(), links=links)
    try:
        return not index.is_file() or read_exact(index) != text
    except (OSError, UnicodeDecodeError):
        return True  # the real run does not read it either: it writes it


def _refuse_before_writing(tree: KnowledgeTree, entry_id: str | None, *, new: bool = False) -> None:
    """Raise what the tree's update refuses before it writes anything: an ``index.md`` the
    tree did not write, or a folder, FIFO or other special file there; with ``entry_id``,
    also a special file at one of the entry's paths, and for an entry that exists a file
    there whose id line names another entry.

    A file whose id line names another entry where a ``new`` entry would go is refused by
    the catalog's read before any of this (the file name and the id differ), so a new
    entry is checked for special files only: the reader leaves those out, and the tree's
    ``add`` refused them only once it had made the tree's lock.

    It only reads: the real run calls it before it makes a lock, so a refused run leaves
    nothing beside the tree, and the dry run raises the same words.
    """
    tree._check_index_is_ours()
    if entry_id is None:
        return
    if new:
        _refuse_special_files(candidate_paths(tree.root, entry_id))  # as the tree's add does
    else:
        tree._find(entry_id)


def _check_writable(tree: KnowledgeTree, entry: Entry, *, new: bool) -> None:
    """Raise what the real run would raise where it could not write ``entry`` (a
    read-only tree, one under a file) or then the index: a dry run must not say "Would
    record" there.

    Checked in the real run's order: what stands at ``index.md`` and at the entry's paths,
    LEARN's lock (taken for an evidence row, not for a ``new`` entry, which the tree's add
    writes under the tree's lock alone), the tree's folder, the tree's lock, the entry
    file's folder, then ``index.md``'s where the write would change it.
    """
    root = tree.root.resolve()
    _refuse_before_writing(tree, entry.id, new=new)
    if not new:
        refusal = _write_refusal(Path(f"{root}.learn.lock"), lock=True)
        if refusal is not None:
            raise refusal
    # A tree not made yet: make_root creates it, as a file in it would need.
    if not root.is_dir() and _write_refusal(root / INDEX_NAME) is not None:
        reason = os.strerror(errno.ENOTDIR if file_in_the_way(root) else errno.EACCES)
        raise CatalogError(
            expected("a knowledge folder that can be created", f"{tree.root} ({reason})")
        )
    path = tree.path_of(entry)
    for target, lock in ((Path(f"{root}.lock"), True), (Path(os.path.realpath(path)), False)):
        refusal = _write_refusal(target, lock=lock)
        if refusal is not None:
            raise refusal
    if not _index_changes(tree, entry):
        return  # an index left as it is is not written: a read-only one does not matter
    # The index is written as atomic_write_text writes it: through a link, to its target.
    refusal = _write_refusal(Path(os.path.realpath(tree.root / INDEX_NAME)))
    if refusal is not None:
        # The real run saves the entry first and then fails here, in these words.
        raise InputError(
            expected(
                f"{tree.root / INDEX_NAME} rewritten after the update",
                f"{refusal}; nothing was written (the real run would save the update in "
                f"{path}, then stop here)",
            )
        )


@attrs.frozen(kw_only=True)
class _Names:
    """What :func:`learn`'s refusals call the values they refuse: its arguments, or the
    options of ``kernelopt learn`` (:data:`_OPTIONS`), so that a message names what its
    reader typed (``--knowledge: Expected ...``, not ``knowledge: Expected ...``)."""

    knowledge: str
    entry: str
    anti_pattern: str
    rows: str
    allow_builtin: str
    allow_host_clock: str


_ARGUMENTS = _Names(
    knowledge="knowledge",
    entry="entry_id",
    anti_pattern="anti_pattern",
    rows="observation",
    allow_builtin="allow_builtin=True",
    allow_host_clock="allow_host_clock=True",
)
_OPTIONS = _Names(
    knowledge="--knowledge",
    entry="--entry",
    anti_pattern="--anti-pattern",
    rows="--before, --after",
    allow_builtin="--allow-builtin",
    allow_host_clock="--allow-host-clock",
)


def _is_builtin(root: Path) -> bool:
    resolved, builtin = root.resolve(), BUILTIN_ROOT.resolve()
    return resolved == builtin or builtin in resolved.parents


def learn(
    observation: Observation,
    *,
    entry_id: str,
    knowledge: str | os.PathLike[str] = DEFAULT_KNOWLEDGE,
    family: str | None = None,
    language: str | None = None,
    kernel: str = "",
    anti_pattern: str | None = None,
    dry_run: bool = False,
    allow_builtin: bool = False,
    allow_host_clock: bool = False,
) -> LearnOutcome:
    """Decide and perform the knowledge-base update an observation calls for.

    A measurement the entry already holds from the same source (the same point, versions,
    GPU, date and times, whatever ``kernel`` and ``language`` labelled its row) is not
    written again (the outcome's ``recorded_before``): a LEARN step run twice counts its
    measurement once.
    The entry cites the observation's files from the tree's folder: a path naming a file
    (from the working directory, as given) is written relative to the tree, or absolute
    for a file sharing no folder but the file-system root with it, and the paths of rows
    already there are read from the tree too. So a run in any folder finds the rows of
    the same files, and the rows of other files named alike are not taken for them.

    Parameters
    ----------
    observation : Observation
        The judged before/after measurement (:func:`observe_files`, ...).
    entry_id : str
        The catalog entry that was applied. For an anti-pattern, the observation's after
        version is its fix (the version without it), as a user applies one: FAST
        confirms it, SLOW goes against it (``contradicts``); both are recorded on it.
    knowledge : path-like
        The knowledge tree to update (default ``docs/knowledge``); created on the first
        write. Its entries are merged over the built-in ones.
    family : str, optional
        Kernel family of the context: a family of the catalog's vocabulary or one an
        entry of the tree names, in any case and with ``_`` for ``-`` (``mla_decode`` is
        ``mla-decode``), as ``diagnose(family=...)`` takes it; default every family of
        the applied entry.
    language : str, optional
        Implementation language of the context (``"triton"``...).
    kernel : str
        The kernel's name, for the evidence row.
    anti_pattern : str, optional
        On a regression, the anti-pattern to extend (or create, with this id); default
        ``<entry_id>-regression``.
    dry_run : bool
        Decide and build everything, write nothing.
    allow_builtin : bool
        Allow ``knowledge`` to be the built-in tree shipped with kernelopt.
    allow_host_clock : bool
        Record an observation timed with the host clock (CPU, the Triton interpreter);
        without it such an observation is refused, on a dry run too (a dry run says what
        the real run would do), since evidence in the knowledge base reads as GPU
        measurements.

    Returns
    -------
    LearnOutcome

    Raises
    ------
    CatalogError
        For an unknown entry id, or a folder that is not a knowledge tree (an
        ``index.md`` the tree did not write, markdown outside its entry folders) where a
        write is due; a dry run refuses the same.
    InputError
        For anything but an Observation, one of a version that failed correctness
        (``before_correctness`` or ``after_correctness`` FAIL, whatever the verdict: no
        option records it), the built-in tree without ``allow_builtin``,
        host-clock timings without ``allow_host_clock``, an unknown family or language,
        or an ``anti_pattern`` that is not a kebab-case id or names an optimization
        (whatever the verdict); a dry run refuses the same.
    """
    return _learn_as(
        observation,
        entry_id=entry_id,
        knowledge=knowledge,
        family=family,
        language=language,
        kernel=kernel,
        anti_pattern=anti_pattern,
        dry_run=dry_run,
        allow_builtin=allow_builtin,
        allow_host_clock=allow_host_clock,
        names=_ARGUMENTS,
    )


def _refuse_failed_side(observation: Observation, names: _Names) -> None:
    """Refuse an observation one of whose versions failed correctness, naming the side,
    the version and the files: a wrong function's time is evidence of nothing, for the
    entry applied or against it.

    Raises
    ------
    InputError
        ``observation: Expected an observation of versions that passed correctness to
        learn from, got the after side v3 with correctness FAIL (source: bench.jsonl)``.
    """
    for side, label, correctness in (
        ("before", observation.before_label, observation.before_correctness),
        ("after", observation.after_label, observation.after_correctness),
    ):
        if correctness == Correctness.FAIL.value:
            raise InputError(
                expected(
                    "an observation of versions that passed correctness to learn from",
                    f"the {side} side {label or '(unnamed)'} with correctness FAIL "
                    f"(source: {observation.source})",
                    where=names.rows,
                )
            )


def _optimization(entry: Entry) -> str:
    return f"{entry.id!r}, an optimization"


def _check_anti_pattern(anti_pattern: str | None, catalog: Catalog, names: _Names) -> None:
    """Refuse an ``anti_pattern`` id that could never take a regression: not a kebab-case
    id, or the id of an optimization of the tree.

    Raises
    ------
    InputError
        ``anti_pattern: Expected a kebab-case id such as 'split-kv-flash-decoding', got
        'Not Kebab'``, or ``Expected an anti-pattern id to record the regression in, got
        'tiling', an optimization``; the prefix names ``names.anti_pattern``.
    """
    if anti_pattern is None:
        return
    if isinstance(anti_pattern, str) and anti_pattern in catalog:
        if catalog.get(anti_pattern).kind is not Kind.ANTI_PATTERN:
            raise InputError(
                expected(
                    "an anti-pattern id to record the regression in",
                    _optimization(catalog.get(anti_pattern)),
                    where=names.anti_pattern,
                )
            )
        return
    if not (isinstance(anti_pattern, str) and ID_RE.match(anti_pattern)):
        # Refused here, not by the new entry's own check, which names Entry.id.
        raise InputError(
            expected(
                "a kebab-case id such as 'split-kv-flash-decoding'",
                repr(anti_pattern),
                where=names.anti_pattern,
            )
        )


def _learn_as(
    observation: Observation,
    *,
    entry_id: str,
    knowledge: str | os.PathLike[str],
    family: str | None,
    language: str | None,
    kernel: str,
    anti_pattern: str | None,
    dry_run: bool,
    allow_builtin: bool,
    allow_host_clock: bool,
    names: _Names,
) -> LearnOutcome:
    """:func:`learn`, its refusals calling what they refuse by ``names``: the function's
    arguments, or the options of ``kernelopt learn`` (:data:`_OPTIONS`)."""
    _require_observation(observation)
    _refuse_failed_side(observation, names)
    # Checked before any file is read, so a wrong type names its argument (or option).
    root = as_path(knowledge, names.knowledge)
    require_str(kernel, where="kernel")
    for name, value in (("family", family), ("language", language)):
        require_str(value, where=name, optional=True)
    if observation.host_clock and not allow_host_clock:
        raise InputError(
            expected(
                "GPU timings (CUDA events) to record in the knowledge base "
                f"({names.allow_host_clock} records host-clock ones)",
                "rows timed with the host clock (mode 'cpu' or backend 'cpu-perf-counter')",
                where=names.rows,
            )
        )
    if _is_builtin(root) and not allow_builtin:
        raise InputError(
            expected(
                f"a user's knowledge tree (the built-in one needs {names.allow_builtin})",
                str(root),
                where=names.knowledge,
            )
        )
    if language is not None:
        language = canonical_language(language)  # the seed's "cutile-dsl" is "cutile"
    tree = KnowledgeTree(root)
    catalog = tree.catalog()
    if family is not None:
        # The catalog's own check: the names `diagnose --family` and the catalog's queries
        # take, listed in their order, and `mla_decode` read as `mla-decode`.
        family = catalog.canonical_family(family)
    if not isinstance(entry_id, str) or entry_id not in catalog:
        raise CatalogError(
            expected(
                "a known entry id (see `kernelopt catalog list`)", repr(entry_id), where=names.entry
            )
        )
    applied = catalog.get(entry_id)
    # Refused whatever the verdict: an id that is wrong on a SLOW result is as wrong on a
    # FAST one, and a dry run on a FAST result must not pass an option the next run refuses.
    _check_anti_pattern(anti_pattern, catalog, names)
    base = LearnOutcome(action=Action.NONE, applied=applied.id, observation=observation)
    verdict = observation.verdict
    if verdict not in (Verdict.FAST, Verdict.SLOW):
        return attrs.evolve(base, dry_run=dry_run)

    if not observation.source.strip():
        # The tree refuses evidence without a source when it writes; a dry run must say so
        # before, not after, the real run.
        raise InputError(
            expected(
                "an observation naming where its measurements are kept (source)",
                repr(observation.source),
                where="observation.source",
            )
        )
    row = evidence_row(observation, kernel=kernel, language=language)
    # The files as the tree cites them, read from its folder: the same wherever LEARN runs.
    anchor = tree.root.resolve()
    cited = attrs.evolve(observation, source=_anchored(observation.source, anchor))
    related: tuple[str, ...] = ()
    if verdict is Verdict.FAST or applied.kind is Kind.ANTI_PATTERN:
        target = applied
        # An anti-pattern is applied by removing it: the after version is its fix, so a
        # faster one confirms it and a slower one goes against it.
        contradicts = verdict is Verdict.SLOW
    else:
        related = tuple(
            i.target
            for i in applied.interactions
            if i.target in catalog and catalog.get(i.target).kind is Kind.ANTI_PATTERN
        )
        target_id = anti_pattern or f"{applied.id}-regression"
        if target_id not in catalog:
            created = derive_anti_pattern(
                applied,
                cited,
                entry_id=target_id,
                family=family,
                language=language,
                kernel=kernel,
            )
            if dry_run:
                _check_writable(tree, created, new=True)  # what the write would refuse
            else:
                _refuse_before_writing(tree, created.id, new=True)  # the dry run's first check
            try:
                path = tree.path_of(created) if dry_run else tree.add_anti_pattern(created)
            except CatalogError:
                # Another writer created it since the catalog was read: this measurement
                # goes into theirs as evidence instead of being lost.
                catalog = tree.catalog()
                if target_id not in catalog:
                    raise
            else:
                return attrs.evolve(
                    base,
                    action=Action.NEW_ANTI_PATTERN,
                    entry_id=created.id,
                    path=path,
                    row=row,
                    dry_run=dry_run,
                    related=related,
                    created=created,
                )
        target = catalog.get(target_id)
        if target.kind is not Kind.ANTI_PATTERN:
            # anti_pattern= was checked before judging: this is `<entry>-regression`, an
            # optimization of that id in the tree.
            raise InputError(
                expected("an anti-pattern id to record the regression in", _optimization(target))
            )
        contradicts = False
    # The measurement, not its labels: a run naming the kernel or language otherwise
    # records the same numbers again.
    recorded_before = _holds(target, evidence_row(observation), cited.source, anchor)
    if not recorded_before:
        if dry_run:
            _check_writable(tree, target, new=False)
        else:
            _refuse_before_writing(tree, target.id)  # the dry run's first check
            target, recorded_before = _record(
                tree, target.id, row, cited, fix=applied.kind is Kind.ANTI_PATTERN
            )
    return attrs.evolve(
        base,
        action=Action.EVIDENCE,
        entry_id=target.id,
        path=tree.path_of(target),
        row=row,
        dry_run=dry_run,
        contradicts=contradicts,
        related=related,
        recorded_before=recorded_before,
        fix=applied.kind is Kind.ANTI_PATTERN,
    )
