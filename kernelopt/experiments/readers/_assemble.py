"""Merge drafts into series, order and number them, tag them, pick the primary series."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import attrs

from kernelopt.experiments.log import Experiment, MetricKind, Recommendation, Series
from kernelopt.experiments.readers._draft import Draft, measurable
from kernelopt.experiments.readers._values import KNOB_ALIASES, knobs_of
from kernelopt.experiments.records import Correctness, Status
from kernelopt.experiments.tagging import Tagger

__all__ = ["NOT_ATTEMPTS", "assemble", "choose_primary"]

# Markdown written by people outranks machine histories as the record of the effort.
_MACHINE_KINDS = frozenset({"jsonl", "tsv", "archive-json"})
# Series of something other than attempts (the calls of a workload trace): never primary.
NOT_ATTEMPTS = frozenset({"trace"})
_BASELINE_WORDS = re.compile(
    r"\b(?:baseline|initial|original|reference|unmodified)\b", re.IGNORECASE
)
_TEXT_CAP = 4000
# Characters of a correctness verdict's words kept: the longest such line of the logs read
# so far is under 350.
_NOTE_CAP = 500


def _sortable(order: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    return tuple((0, item) if isinstance(item, (int, float)) else (1, str(item)) for item in order)


def _merge(drafts: Iterable[Draft]) -> dict[str, list[Draft]]:
    scopes: dict[str, dict[str, Draft]] = {}
    for draft in drafts:
        keyed = scopes.setdefault(draft.scope, {})
        if draft.key in keyed:
            keyed[draft.key].absorb(draft)
        else:
            keyed[draft.key] = draft
    for keyed in scopes.values():
        for merged in keyed.values():
            merged.settle_latency()
    return {scope: list(keyed.values()) for scope, keyed in scopes.items()}


def _finish(draft: Draft, number: int, first: bool, tagger: Tagger) -> Experiment:
    description = " ".join(draft.description.split())[:300]
    text = " ".join([description, *(" ".join(part.split()) for part in draft.text_parts)])[
        :_TEXT_CAP
    ]
    # Tags the log declares (a Tags: line or column) are the author's word on what was
    # tried; words of the title are matched only when it declares none ("FP8 cache read
    # by the split-KV kernel" does not try split-KV). A log that declares no tags
    # (``- Tags: none``) tried none: "tl.dot over a 16-row padded batch" is no padding fix.
    title_knobs = knobs_of(description)
    if draft.tags or draft.tags_declared:
        tags = list(draft.tags)
    else:
        # A knob spelled otherwise (``splits=16``, ``n_splits=4``) tags as its one name
        # does (``num_splits=16``): the catalog's keywords name it once.
        aliased = "".join(
            f" {name}={value}"
            for name, value in title_knobs.items()
            if name in KNOB_ALIASES.values()
        )
        tags = list(tagger.tags(text + aliased))
    knobs = dict(draft.knobs)
    for key, value in title_knobs.items():
        knobs.setdefault(key, value)
    correctness = draft.correctness or Correctness.UNKNOWN
    note = " ".join(draft.correctness_note.split()) if draft.correctness is not None else ""
    if len(note) > _NOTE_CAP:
        note = note[: _NOTE_CAP - 1].rsplit(" ", 1)[0] + "…"
    status = draft.status
    # A hand-written log's "reverted" beside a failed check is read as the failure it
    # records; a canonical result.md's status is the one its writer gave (REVERTED with
    # correctness FAIL stays REVERTED: the FAIL is still the experiment's correctness).
    written = draft.status_written and status is not None
    if (
        correctness is Correctness.FAIL
        and status in (None, Status.REVERTED, Status.NEUTRAL)
        and not written
    ):
        status = Status.FAILED
    if (status is None and first and _BASELINE_WORDS.search(description)) or (
        first
        and status is Status.KEPT
        and _BASELINE_WORDS.search(description)
        and "baseline" in description.lower()
    ):
        status = Status.BASELINE
    measured = (
        draft.latency is not None
        or draft.speedup is not None
        or draft.throughput is not None
        or bool(draft.points)
    )
    attempted = draft.attempted
    if attempted is None:
        attempted = measured or status is not None or correctness is not Correctness.UNKNOWN
    label = draft.label or f"exp {number}"
    return Experiment(
        number=number,
        label=label,
        description=description,
        latency=draft.latency,
        unit=draft.unit,
        speedup=draft.speedup,
        throughput=draft.throughput,
        throughput_unit=draft.throughput_unit,
        headline_point=draft.headline_point,
        correctness=correctness,
        correctness_note=note,
        status=status,
        verdict=draft.verdict,
        verdict_speedup=draft.verdict_speedup,
        attempted=attempted,
        tags=tuple(tags),
        knobs=knobs,
        date=draft.date,
        points=tuple(p for p in draft.points if measurable(p.value)),
        metrics=draft.metrics,
        recommendations=(),
        kernel_files=tuple(draft.kernel_files),
        kernel=draft.kernel or None,
        gpu=draft.gpu or None,
        profiling=tuple(draft.profiling),
        floors=tuple(row for rows in draft.result_floors.values() for row in rows),
        text=text,
        refs=dict(draft.refs),
        sources=tuple(draft.sources),
    )


def _recommendations(
    draft: Draft, experiment: Experiment, tagger: Tagger
) -> tuple[Recommendation, ...]:
    return tuple(
        Recommendation(
            text=item.text,
            source=item.source,
            experiment=experiment.number,
            after=experiment.number + item.offset,
            # A Top N table's id column is the author's word on the entry, as a Tags
            # column is on an experiment's: its words are matched only when it names none.
            catalog_ids=item.catalog_ids or tagger.tags(item.text),
        )
        for item in draft.recommendations
    )


def assemble(drafts: Iterable[Draft], tagger: Tagger) -> list[Series]:
    """Merge ``drafts`` by scope and key, order each scope, number and freeze it."""
    series = []
    for scope, members in _merge(drafts).items():
        numbered = all(d.number is not None for d in members)
        if numbered:
            members.sort(key=lambda d: (d.number, _sortable(d.order)))
        else:
            members.sort(key=lambda d: _sortable(d.order))
        _adopt_prose_speedups(members)
        experiments = []
        for position, draft in enumerate(members, start=1):
            number = draft.number if numbered and draft.number is not None else position
            experiment = _finish(draft, number, position == 1, tagger)
            recommendations = _recommendations(draft, experiment, tagger)
            if recommendations:
                experiment = _evolve(experiment, recommendations=recommendations)
            experiments.append(experiment)
        kinds = [d.kind for d in members]
        kind = max(set(kinds), key=kinds.count)
        series.append(Series(name=_series_name(scope), kind=kind, experiments=tuple(experiments)))
    return series


def _adopt_prose_speedups(members: list[Draft]) -> None:
    """Give an experiment without measured points the speedups its prose states for trial
    points that the series' other experiments measure as speedups (``"tiny 1.307→1.378x"``
    beside steps whose tables give ``tiny``'s speedup). A name no other experiment measures,
    or a log that measures times, leaves the prose unread: the arrow may be anything."""
    names = {p.name for d in members for p in d.points if p.kind is MetricKind.SPEEDUP}
    if not names:
        return
    for draft in members:
        if not draft.points:
            draft.points.extend(p for p in draft.prose_points if p.name in names)


def _evolve(experiment: Experiment, **changes: Any) -> Experiment:
    return attrs.evolve(experiment, **changes)


# The name of the series of the experiments the log numbers itself (exp_N/ folders, a
# summary table's ids, numbered steps).
_NUMBERED = "numbered experiments"


def _series_name(scope: str) -> str:
    if scope == "numbered":
        return _NUMBERED
    return scope.split(":", 1)[1] if ":" in scope else scope


def choose_primary(series: list[Series]) -> list[Series]:
    """Order series with the primary first: human-written before machine histories, then
    the one with most attempted experiments, then the longest, then the experiments the log
    numbers itself; traces of calls last.

    On a tie the numbered experiments come first, whatever the others' names: a loose note
    that repeats ``exp_1/result.md`` (``notes/x.md``) stays a note, and experiment 1 is
    the folder's.
    """

    def rank(item: Series) -> tuple[int, int, int, int, str]:
        attempted = sum(1 for e in item.experiments if e.attempted)
        weak = item.kind in _MACHINE_KINDS or len(item.experiments) < 2
        order = 2 if item.kind in NOT_ATTEMPTS else 1 if weak else 0
        unnumbered = 0 if item.name == _NUMBERED else 1
        return (order, -attempted, -len(item.experiments), unnumbered, item.name)

    usable = [s for s in series if s.experiments]
    return sorted(usable, key=rank)
