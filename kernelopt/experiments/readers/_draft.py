"""Experiments under construction: what one reader found, before merging and numbering.

Readers emit :class:`Draft` objects. Drafts that describe the same experiment (a summary
row and its ``exp_N/result.md``, a step table row and the step's folder) share a merge
``scope`` and ``key``; :func:`kernelopt.experiments.readers._assemble.assemble` merges them
(first value wins per field, in reader order), orders and numbers each series, and freezes
them into :class:`~kernelopt.experiments.log.Experiment` records.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from kernelopt._errors import expected
from kernelopt.experiments.log import ABVerdict, Fact, FloorRow, MetricKind, Point, SourceRef
from kernelopt.experiments.readers._values import LATENCY_UNITS, TO_US
from kernelopt.experiments.records import Correctness, Status

__all__ = ["Draft", "DraftRecommendation", "measurable"]

# Most list items one experiment keeps from the sources merged into it.
_CAP = 50

# Scalar fields merged "first value wins".
SCALARS = (
    "number",
    "label",
    "description",
    "latency",
    "unit",
    "speedup",
    "throughput",
    "throughput_unit",
    "headline_point",
    "correctness",
    "status",
    "verdict",
    "verdict_speedup",
    "attempted",
    "date",
    "kernel",
    "gpu",
)
# Measured quantities: a time, a speedup or a rate at or below zero (a delta written as
# "-3 us", a "0.00" that rounding emptied) would count as the best of every log.
_POSITIVE = frozenset({"latency", "speedup", "throughput", "verdict_speedup"})
# Outcomes that say the change is not in the kernel the next experiment starts from.
_DROPS_CHANGE = frozenset({Status.REVERTED, Status.NEUTRAL, Status.FAILED})
_FAILS = frozenset({Correctness.FAIL})
# A correctness of UNKNOWN (a canonical result.md's word for none) disagrees with no verdict.
_UNSAID = (None, Correctness.UNKNOWN)


@attrs.define(kw_only=True)
class DraftRecommendation:
    """A recommendation before numbering: ``offset`` 0 when the same experiment may act on
    it (a plan), 1 when only later experiments can (a result's "next steps").

    ``catalog_ids`` are the catalog entries its own words name as such: the id column of
    a ``Top N opportunities`` table's row. Empty when it names none; its catalog entries
    are then found from its text.
    """

    text: str
    source: SourceRef
    offset: int = 1
    catalog_ids: tuple[str, ...] = ()


# A time one source states: its value, its unit (None where it gives none) and where.
_Time = tuple[float, str | None, SourceRef | None]


@attrs.define(kw_only=True)
class Draft:
    """One experiment as one reader saw it.

    ``scope`` names the merge space (``"numbered"`` for logs that number experiments,
    ``"slug:<folder>"`` for named ones, a file path for a devlog); ``key`` identifies the
    experiment inside it; ``kind`` is the layout it came from; ``order`` sorts unnumbered
    drafts (date first, then position in the file).
    """

    scope: str
    key: str
    kind: str
    order: tuple[Any, ...] = ()
    number: int | None = None
    label: str = ""
    description: str = ""
    latency: float | None = None
    unit: str | None = None
    speedup: float | None = None
    throughput: float | None = None
    throughput_unit: str | None = None
    headline_point: str = ""
    correctness: Correctness | None = None
    # The words the log states with ``correctness`` (see Experiment.correctness_note): set
    # only by :meth:`put_correctness`, so that they always belong to the verdict held.
    correctness_note: str = ""
    status: Status | None = None
    # Set where a canonical result.md (a record kernelopt wrote) states the status: the
    # writer gave it knowing the correctness verdict, so it is read as written.
    status_written: bool = False
    # The result's own A/B verdict and the speedup it states (see Experiment.verdict).
    verdict: ABVerdict | None = None
    verdict_speedup: float | None = None
    attempted: bool | None = None
    date: str = ""
    kernel: str = ""
    gpu: str = ""
    tags: list[str] = attrs.field(factory=list)
    # Set where a source declares the experiment's tags, none included (``- Tags: none``):
    # its tags are then not found from its words.
    tags_declared: bool = False
    knobs: dict[str, str] = attrs.field(factory=dict)
    points: list[Point] = attrs.field(factory=list)
    # Speedups stated in prose ("tiny 1.307→1.378x"), read into ``points`` only when the
    # series' other experiments measure the same names as speedups.
    prose_points: list[Point] = attrs.field(factory=list)
    metrics: dict[str, float] = attrs.field(factory=dict)
    recommendations: list[DraftRecommendation] = attrs.field(factory=list)
    kernel_files: list[str] = attrs.field(factory=list)
    profiling: list[Fact] = attrs.field(factory=list)
    # The rows with a roofline floor of each result file read for the experiment, by path,
    # in file order: those of its own lines where the file records several experiments.
    result_floors: dict[str, tuple[FloorRow, ...]] = attrs.field(factory=dict)
    text_parts: list[str] = attrs.field(factory=list)
    refs: dict[str, SourceRef] = attrs.field(factory=dict)
    sources: list[SourceRef] = attrs.field(factory=list)
    # The line ranges (path, first, last; 1-based, inclusive) the draft was read from: a
    # note found anywhere in them belongs to this experiment (read_log cuts it at until).
    spans: list[tuple[str, int, int]] = attrs.field(factory=list)
    table_row: bool = False  # read from one row of an experiment table
    refused: set[str] = attrs.field(factory=set)  # fields whose value was not read
    # What the user should know about how this draft was read (values refused, sources
    # that disagree); read_log lists them in the log's warnings.
    warnings: list[str] = attrs.field(factory=list)
    # Set by the reader of an experiment's own folder once its result file was read: where
    # the sources merged disagree on the time, the times it states settle which one stands
    # (:meth:`settle_latency`).
    own_result: bool = False
    # Each merged source's latency (value, unit, where), the kept one first; the times the
    # experiment's own result states, where it was merged into another source's draft; and
    # the warnings that named a disagreement, replaced when the result settles it.
    latency_claims: list[_Time] = attrs.field(factory=list)
    own_times: list[_Time] = attrs.field(factory=list)
    latency_warnings: list[str] = attrs.field(factory=list)

    def put(self, field: str, value: Any, ref: SourceRef | None) -> None:
        """Set ``field`` to ``value`` unless it already holds one (first reader wins)."""
        if value is None or value == "":
            return
        if field in _POSITIVE and not measurable(value):
            self._refuse(field, value, ref)
            return
        if field == "unit" and "latency" in self.refused and self.latency is None:
            return  # the unit of a time that was not read
        current = getattr(self, field)
        if current is None or current == "":
            setattr(self, field, value)
            if ref is not None:
                self.refs.setdefault(field, ref)

    def put_correctness(
        self, verdict: Correctness | None, words: str, ref: SourceRef | None
    ) -> None:
        """Set the correctness ``verdict`` as :meth:`put` does, and ``words`` (what the log
        states with it) unless the verdict held is another or already has its words."""
        self.put("correctness", verdict, ref)
        if verdict is not None and verdict is self.correctness:
            self._note(words, ref)

    def overrule_correctness(self, verdict: Correctness, words: str, ref: SourceRef) -> None:
        """Set the correctness ``verdict`` over any held, with ``words``; the words of a
        verdict it replaces go with it."""
        if self.correctness is not verdict:
            self._note("", None, replace=True)
        self.correctness = verdict
        self.refs["correctness"] = ref
        self._note(words, ref)

    def _note(self, words: str, ref: SourceRef | None, *, replace: bool = False) -> None:
        if self.correctness_note and not replace:
            return
        self.correctness_note = words
        if words and ref is not None:
            self.refs["correctness_note"] = ref
        else:
            self.refs.pop("correctness_note", None)

    def _refuse(self, field: str, value: Any, ref: SourceRef | None) -> None:
        self.refused.add(field)
        where = str(ref) if ref is not None else self.label or self.key
        self.warnings.append(f"{where}: {expected(f'a {field} > 0', repr(value))}; not read")

    def absorb(self, other: Draft) -> None:
        """Fill this draft's empty fields from ``other`` and append its lists; a latency
        ``other`` gives that disagrees with this draft's is named in :attr:`warnings`."""
        if self.latency is not None and not self.latency_claims:
            self.latency_claims.append((self.latency, self.unit, self.refs.get("latency")))
        if other.latency is not None:
            self.latency_claims.append((other.latency, other.unit, other.refs.get("latency")))
        if other.own_result and not self.own_times:
            self.own_times = other.stated_times()
        disagreement = self._latency_disagreement(other)
        if disagreement:
            self.warnings.append(disagreement)
            self.latency_warnings.append(disagreement)
        self._settle_verdict(
            other, "status", _DROPS_CHANGE, "a change either source says was dropped is not kept"
        )
        verdict = self.correctness
        self._settle_verdict(
            other, "correctness", _FAILS, "a check either source says failed is not a pass"
        )
        if self.correctness is not verdict:  # ``other``'s verdict is used, with its words
            self._note(other.correctness_note, other.refs.get("correctness_note"), replace=True)
        for field in SCALARS:
            self.put(field, getattr(other, field), other.refs.get(field))
        # Words stated with the same verdict describe it, wherever they were read.
        if other.correctness is not None and other.correctness is self.correctness:
            self._note(other.correctness_note, other.refs.get("correctness_note"))
        if not self.order and other.order:
            self.order = other.order
        for tag in other.tags:
            if tag not in self.tags:
                self.tags.append(tag)
        self.tags_declared = self.tags_declared or other.tags_declared
        self.status_written = self.status_written or other.status_written
        for key, knob in other.knobs.items():
            self.knobs.setdefault(key, knob)
        # Points from a second source describe the same runs in other words: keep the first
        # source's set unless it had none.
        if not self.points:
            self.points.extend(other.points)
        if not self.prose_points:
            self.prose_points.extend(other.prose_points)
        for key, value in other.metrics.items():
            self.metrics.setdefault(key, value)
        # Caps keep a log that repeats one experiment thousands of times linear.
        room = _CAP - len(self.recommendations)
        self.recommendations.extend(other.recommendations[: max(room, 0)])
        self.kernel_files.extend(f for f in other.kernel_files if f not in self.kernel_files)
        if len(self.profiling) < 8:
            self.profiling.extend(f for f in other.profiling[:8] if f not in self.profiling)
        for path, rows in other.result_floors.items():
            self._absorb_floors(path, rows, repeat=self.table_row and other.table_row)
        self.text_parts.extend(other.text_parts[: max(_CAP - len(self.text_parts), 0)])
        for key, ref in other.refs.items():
            if key != "correctness_note":  # set above, only with the words themselves
                self.refs.setdefault(key, ref)
        self.spans.extend(other.spans[: max(_CAP - len(self.spans), 0)])
        if len(self.sources) < _CAP:
            known = set(self.sources)
            self.sources.extend(s for s in other.sources if s not in known)
            del self.sources[_CAP:]

    def stated_times(self) -> list[_Time]:
        """The times this draft states: its latency first, then its points measured as
        times (a result's rows, one per trial point), each with where it was read."""
        times: list[_Time] = []
        if self.latency is not None:
            times.append((self.latency, self.unit, self.refs.get("latency")))
        times += [
            (point.value, point.unit, point.source)
            for point in self.points
            if point.kind is MetricKind.LATENCY and measurable(point.value)
        ]
        return times

    def settle_latency(self) -> None:
        """Use the time the experiment's own result states where the first source's time
        stands alone against it.

        Sources are merged first value wins, and a summary row comes first; but a row is
        written by hand beside the result and may hold a time the result does not. The
        result's time is used when all of these hold: another source (a report's table, a
        second note) gives a time more than 5% from the kept one; the experiment's own
        result holds a time within 5% of that source's (its latency, else the nearest of
        its points, one per trial point); and the result holds none within 5% of the kept
        one. Two sources then side against one. The warnings that named the disagreement
        in pairs are replaced by one that names every source. Two sources alone, or a
        result that holds the kept time too, leave the first value as it is.
        """
        own = self.own_times or (self.stated_times() if self.own_result else [])
        if self.latency is None or len(self.latency_claims) < 2 or not own:
            return
        kept: _Time = (self.latency, self.unit, self.refs.get("latency"))
        if any(_same_time(time, kept) for time in own):
            return
        own_paths = {ref.path for _, _, ref in own if ref is not None}
        for claim in self.latency_claims[1:]:
            if claim[2] is not None and claim[2].path in own_paths:
                continue  # the result's own latency is no second source beside it
            backing = [time for time in own if _same_time(time, claim)]
            if not backing:
                continue
            used = min(backing, key=lambda time: _gap(time, claim))
            self._use_result_time(kept, used)
            return

    def _use_result_time(self, kept: _Time, used: _Time) -> None:
        """Replace the kept latency by ``used``, a time of the experiment's own result,
        naming every source in one warning in place of the ones that named them in pairs."""
        self.warnings = [w for w in self.warnings if w not in self.latency_warnings]
        self.latency_warnings = []
        others = [claim for claim in self.latency_claims[1:] if claim[2] != used[2]]
        name = f"exp {self.number}" if self.number is not None else self.label or self.key
        said = ", ".join(
            f"{_quantity(value, unit)} in {ref or 'another'}" for value, unit, ref in others
        )
        self.warnings.append(
            f"{name}: the latency is {_quantity(kept[0], kept[1])} in {kept[2] or 'one source'}"
            f" but {said} and {_quantity(used[0], used[1])} in {used[2] or 'its result'}, the "
            f"experiment's own result; {_quantity(used[0], used[1])} ({used[2] or 'its result'})"
            " was used: the result and another source agree on it"
        )
        self.latency, self.unit = used[0], used[1]
        if used[2] is not None:
            self.refs["latency"] = used[2]
        else:
            self.refs.pop("latency", None)

    def _absorb_floors(self, path: str, rows: tuple[FloorRow, ...], *, repeat: bool) -> None:
        """Take ``rows``, the floor rows another source of this experiment holds of the
        result ``path``. Rows fill a path this draft holds none of. Where both hold some,
        two parts of one file that record the experiment (a table row and the section that
        describes it) each hold the rows of their own lines, and the experiment holds both,
        in file order; a ``repeat`` (a later table row that gives the experiment again) adds
        none, as only the first row's values are read."""
        mine = self.result_floors.get(path, ())
        if not mine:
            self.result_floors[path] = rows
            return
        if repeat:
            return
        lines = {row.source.line for row in mine}
        extra = [row for row in rows if row.source.line not in lines]
        if extra:
            self.result_floors[path] = tuple(
                sorted((*mine, *extra), key=lambda row: row.source.line)
            )

    def _settle_verdict(
        self, other: Draft, field: str, pessimistic: frozenset[Any], reason: str
    ) -> None:
        """Where this draft and ``other`` state different values of ``field`` (a status,
        a correctness verdict) and exactly one is ``pessimistic``, keep that one and name
        both sources in :attr:`warnings`.

        The two sources (a summary row and ``result.md``) are written from one record, so
        a disagreement means one was edited by hand, and which one is later cannot be told.
        Counting a dropped or failing change as kept would make it the best the next plan
        builds on; the reverse costs only a best that the warning points back to.
        """
        mine, theirs = getattr(self, field), getattr(other, field)
        if mine in _UNSAID or theirs in _UNSAID or mine == theirs:
            return
        if (mine in pessimistic) == (theirs in pessimistic):
            return  # one fate in other words (REVERTED, NEUTRAL), or both kept: first wins
        kept_ref, other_ref = self.refs.get(field), other.refs.get(field)
        used, used_ref = (mine, kept_ref) if mine in pessimistic else (theirs, other_ref)
        name = f"exp {self.number}" if self.number is not None else self.label or self.key
        self.warnings.append(
            f"{name}: the {field} is {mine.value} in {kept_ref or 'one source'} but "
            f"{theirs.value} in {other_ref or 'another'}; {used.value} "
            f"({used_ref or 'the other'}) was used: {reason}"
        )
        if used is theirs:
            setattr(self, field, theirs)
            if other_ref is not None:
                self.refs[field] = other_ref
            else:
                self.refs.pop(field, None)

    def _latency_disagreement(self, other: Draft) -> str:
        """What to tell the user when ``other`` gives this experiment another latency than
        the one kept (this draft's, being first), else ``""``.

        Values within 5% of each other are the same measurement rounded differently (a
        summary row's ``0.21`` ms and a result's ``0.2054 ms``); rows of one table that
        repeat an experiment are reported with the unread files already.
        """
        if self.latency is None or other.latency is None:
            return ""
        if _same_time((self.latency, self.unit, None), (other.latency, other.unit, None)):
            return ""
        kept_ref, other_ref = self.refs.get("latency"), other.refs.get("latency")
        if (
            self.table_row
            and other.table_row
            and kept_ref is not None
            and other_ref is not None
            and kept_ref.path == other_ref.path
        ):
            return ""
        kept = _quantity(self.latency, self.unit)
        name = f"exp {self.number}" if self.number is not None else self.label or self.key
        return (
            f"{name}: the latency is {kept} in {kept_ref or 'one source'} but "
            f"{_quantity(other.latency, other.unit)} in {other_ref or 'another'}; "
            f"{kept} ({kept_ref or 'the first'}) was used"
        )


def measurable(value: Any) -> bool:
    """Whether ``value`` can be a measured time, speedup or rate: finite and above zero."""
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def _comparable(one: _Time, other: _Time) -> tuple[float, float]:
    """Both times in microseconds, or as written where a unit cannot be converted."""
    mine, theirs = _microseconds(one[0], one[1]), _microseconds(other[0], other[1])
    if mine is None or theirs is None:  # units that cannot be compared: the raw values
        return one[0], other[0]
    return mine, theirs


def _same_time(one: _Time, other: _Time) -> bool:
    """Whether two times are one measurement: within 5% of each other (a summary row's
    ``0.21`` ms and a result's ``0.2054 ms`` are the same time rounded differently)."""
    mine, theirs = _comparable(one, other)
    return abs(mine - theirs) <= 0.05 * max(abs(mine), abs(theirs))


def _gap(one: _Time, other: _Time) -> float:
    mine, theirs = _comparable(one, other)
    return abs(mine - theirs)


def _microseconds(value: float, unit: str | None) -> float | None:
    canonical = LATENCY_UNITS.get((unit or "").strip().lower())
    return value * TO_US[canonical] if canonical else None


def _quantity(value: float, unit: str | None) -> str:
    return f"{value:g} {unit}" if unit else f"{value:g}"
