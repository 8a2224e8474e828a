"""What every detector sees: the log, the catalog, the family, progress, kernel sources.

Computed once per diagnosis; detectors only read it. The catalog is used through a small
protocol (the parts of ``kernelopt.catalog.Catalog`` diagnose needs), so a diagnosis also
runs with a user's catalog or, in tests, a small stand-in.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import attrs

from kernelopt._numbers_text import readable
from kernelopt._words import and_list, count_text
from kernelopt.diagnose.changes import SnapshotChange, snapshot_changes
from kernelopt.diagnose.family import infer_family
from kernelopt.diagnose.floors import FloorReading, latest_floors, result_rows
from kernelopt.diagnose.model import Action, CatalogLink, Evidence
from kernelopt.diagnose.progress import Progress, analyze, same_point
from kernelopt.experiments.log import (
    Experiment,
    ExperimentLog,
    KernelSource,
    MetricKind,
    SourceRef,
)

__all__ = [
    "HOST_LAUNCHER",
    "MEASUREMENT",
    "CatalogLike",
    "Context",
    "PointMove",
    "build_context",
    "quote",
]

HOST_LAUNCHER = "the host launcher (the code that allocates the outputs and launches the kernel)"
"""The data items that read host code miss when the log keeps its kernels alone."""

MEASUREMENT = frozenset({"cuda-event-instrumentation", "roofline-analysis"})
"""Catalog techniques of measuring a kernel rather than changing it: an experiment tagged
with one profiled (per-stage times, a roofline); its profile shows in the log, not in code."""


class CatalogLike(Protocol):
    """The catalog queries diagnose uses (``kernelopt.catalog.Catalog`` provides them)."""

    def __iter__(self) -> Iterator[Any]: ...

    def __contains__(self, entry_id: object) -> bool: ...

    def fundamentals(self, family: str) -> Sequence[Any]: ...


def quote(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@attrs.frozen(kw_only=True)
class PointMove:
    """A kept experiment that made a trial point of its result other than its headline's
    faster than the best kept time there before it: a gain the headline does not show.

    Parameters
    ----------
    experiment : Experiment
        The experiment whose result row moved.
    point : str
        The trial point as its row names it (``"hidden=7168 tokens=4096"``).
    value : float
        Its time there, in microseconds.
    before : Experiment
        The experiment with the best kept time there before it.
    before_value : float
        That time, in microseconds.
    gain : float
        The share of time saved (0.165 is 16.5 % faster).
    """

    experiment: Experiment
    point: str
    value: float
    before: Experiment
    before_value: float
    gain: float

    def text(self) -> str:
        """``"exp 4 took hidden=7168 tokens=4096 from 85 us (exp 2) to 71 us (16.5%
        faster)"``."""
        return (
            f"{self.experiment.mention} took {self.point} from {readable(self.before_value, 4)} "
            f"us ({self.before.mention}) to {readable(self.value, 4)} us ({self.gain:.1%} "
            "faster)"
        )


@attrs.define(kw_only=True, slots=False)
class Context:
    """The shared, read-only inputs of the nine detectors."""

    log: ExperimentLog
    catalog: CatalogLike | None
    family: str | None
    family_source: str
    family_evidence: tuple[Evidence, ...]
    progress: Progress
    catalog_problem: str | None = None
    family_by_words: str = ""
    """Where the family was read when only words named it (``"CLAUDE.md:4"``: a line
    about the kernel, an experiment title), not the kernel's name nor the caller;
    ``""`` otherwise. A family read from prose may be a word used in passing."""

    @property
    def experiments(self) -> tuple[Experiment, ...]:
        """The primary series."""
        return self.log.experiments

    @functools.cached_property
    def kernels(self) -> tuple[KernelSource, ...]:
        """The kernel sources that describe the kernel as it stands."""
        return self.log.current_kernels

    @functools.cached_property
    def snapshots(self) -> dict[int, tuple[KernelSource, ...]]:
        """Full-source kernel snapshots by experiment number (diffs are in :attr:`changes`).

        Where any snapshot of the log defines a kernel (:attr:`KernelSource.defines_kernel`),
        only those count, as for :attr:`kernels`: the scripts that check or time a kernel
        beside it are not the kernel, and their growth is not the kernel's."""
        full = [
            source
            for source in self.log.kernels
            if source.role == "snapshot" and source.experiment is not None and not source.is_diff
        ]
        if any(source.defines_kernel for source in full):
            full = [source for source in full if source.defines_kernel]
        found: dict[int, list[KernelSource]] = {}
        for source in full:
            if source.experiment is not None:
                found.setdefault(source.experiment, []).append(source)
        return {number: tuple(items) for number, items in sorted(found.items())}

    @property
    def profiled(self) -> bool:
        """Whether the log holds profiling data: a profile, profiler lines, metrics a
        result recorded, or a result's roofline floor rows (a floor beside a measured time,
        or the share of one reached: :attr:`Experiment.floors
        <kernelopt.experiments.Experiment.floors>`). Every item that asks reads it here, so
        none calls a kernel unmeasured that another places on the roofline."""
        return (
            bool(self.log.profiling)
            or self.log.profile is not None
            or any(e.metrics or e.floors for e in self.experiments)
        )

    @functools.cached_property
    def host_clock_devices(self) -> str:
        """The devices every measured experiment names, where each names a CPU (``GPU: CPU
        (Triton interpreter)``, as ``kernelopt.bench`` writes host-clock rows), else ``""``.

        Such an effort cannot have timed a GPU kernel yet: the wrong-bottleneck item says
        so, and the missing-fundamental item leaves its measuring techniques to it rather
        than faulting the kernel for them."""
        devices = {e.gpu for e in self.experiments if e.gpu}
        if not devices or not all(d.strip().lower().startswith("cpu") for d in devices):
            return ""
        return ", ".join(f"GPU: {d}" for d in sorted(devices))

    @functools.cached_property
    def floors(self) -> tuple[FloorReading, ...]:
        """The roofline floor rows of the latest result that states any (see
        :func:`kernelopt.diagnose.floors.latest_floors`), from the experiments' records:
        placed once per diagnosis, for every item that asks."""
        return tuple(latest_floors(self.log, self.experiments))

    @functools.cached_property
    def kernel_texts(self) -> dict[str, str]:
        """The text of each full kernel source of the log (not diffs), by path."""
        return {k.path: k.text for k in self.log.kernels if not k.is_diff}

    @functools.cached_property
    def workload(self) -> Any | None:
        """The log's workload profile (``workload_profile.md``) as read once for every
        check that uses it; None where the log has none, or it cannot be read (item 9
        reports why)."""
        path = self.log.workload_profile
        if path is None:
            return None
        try:
            from kernelopt.workload import read_profile_md
        except ImportError:  # the workload inspector is optional for reading logs
            return None
        try:
            return read_profile_md(os.path.join(self.log.root, path))
        except Exception:  # item 9 reports a profile it cannot read
            return None

    @functools.cached_property
    def changes(self) -> dict[int, tuple[SnapshotChange, ...]]:
        """What each experiment's diff snapshots change, per kernel file, by experiment
        number (see :func:`kernelopt.diagnose.changes.snapshot_changes`)."""
        return snapshot_changes(self.log)

    @functools.cached_property
    def _side_rows(self) -> dict[int, dict[str, tuple[str, float]]]:
        """Per experiment (by its ``id``), the times of its result's rows
        other than the headline's point, by point key: the point as written and the time
        in microseconds. Of each point, the row of the headline row's implementation and
        timing mode (a baseline timed beside the kernel is not the kernel)."""
        from kernelopt.experiments.readers._values import TO_US

        found: dict[int, dict[str, tuple[str, float]]] = {}
        # Only an experiment that could hold a best moves a point (point_moves).
        for experiment in (step.experiment for step in self.progress.steps if step.eligible):
            rows = result_rows(self.log.root, experiment, at_least=2)
            if len(rows) < 2:
                continue
            head = rows[0]
            points: dict[str, tuple[str, float]] = {}
            for row in rows[1:]:
                key = same_point(row.point)
                if (
                    key == same_point(head.point)
                    or key in points
                    or row.impl != head.impl
                    or row.mode != head.mode
                    or row.unit not in TO_US
                ):
                    continue
                points[key] = (row.point, row.median * TO_US[row.unit])
            if points:
                found[id(experiment)] = points
        return found

    def point_moves(self, min_gain: float) -> tuple[PointMove, ...]:
        """The kept experiments that made a trial point other than their headline's
        ``min_gain`` or more faster than the best kept time there before them (see
        :class:`PointMove`), in log order. Only a point two experiments time counts, and
        only an experiment that could hold the best (kept, correct) moves it."""
        best: dict[str, tuple[float, Experiment]] = {}
        moves: list[PointMove] = []
        for step in self.progress.steps:
            if not step.eligible:
                continue
            for key, (point, value) in self._side_rows.get(id(step.experiment), {}).items():
                held = best.get(key)
                if held is not None and value < held[0]:
                    gain = 1.0 - value / held[0]
                    if gain >= min_gain:
                        moves.append(
                            PointMove(
                                experiment=step.experiment,
                                point=point,
                                value=value,
                                before=held[1],
                                before_value=held[0],
                                gain=gain,
                            )
                        )
                if held is None or value < held[0]:
                    best[key] = (value, step.experiment)
        return tuple(moves)

    def entry(self, entry_id: str) -> Any | None:
        """The catalog entry ``entry_id``, or None when there is no catalog or no such entry."""
        return self._entries.get(entry_id)

    @functools.cached_property
    def _entries(self) -> dict[str, Any]:
        return {} if self.catalog is None else {getattr(e, "id", ""): e for e in self.catalog}

    def action(self, text: str, catalog_id: str | None = None, also: Sequence[str] = ()) -> Action:
        """An action linking ``catalog_id``, then the entries of ``also``, each with its
        name and file when the catalog has it (the id is kept even when the catalog lacks
        it, so the plan still names the technique)."""
        further = tuple(self.link(entry_id) for entry_id in also)
        if catalog_id is None:
            return Action(text=text, also=further)  # refused where further links were given
        own = self.link(catalog_id)
        return Action(
            text=text,
            catalog_id=catalog_id,
            catalog_name=own.catalog_name,
            path=own.path,
            also=further,
        )

    def link(self, catalog_id: str) -> CatalogLink:
        """A link to the entry ``catalog_id``: its name and file when the catalog has it."""
        entry = self.entry(catalog_id)
        if entry is None:
            return CatalogLink(catalog_id=catalog_id)
        return CatalogLink(
            catalog_id=catalog_id,
            catalog_name=getattr(entry, "name", None),
            path=getattr(entry, "relative_path", None),
        )

    def evidence(
        self, experiment: Experiment, quote_text: str | None = None, field: str = "description"
    ) -> Evidence:
        """Evidence about ``experiment``, quoting its description (or ``quote_text``)."""
        ref = experiment.ref(field) or SourceRef(path="")
        text = (
            quote_text
            if quote_text is not None
            else f"{experiment.label}: {experiment.description}"
        )
        return Evidence(
            quote=quote(text), source=str(ref) if ref.path else "", experiments=(experiment.number,)
        )

    def value_text(self, experiment: Experiment) -> str:
        """The experiment's headline number in words (``"412.3 us"``, ``"1.31x"``), or ``""``."""
        if experiment.latency is not None:
            return f"{readable(experiment.latency, 6)} {experiment.unit or ''}".strip()
        if experiment.speedup is not None:
            return f"{readable(experiment.speedup, 6)}x"
        if experiment.throughput is not None:
            rate = readable(experiment.throughput, 6)
            return f"{rate} {experiment.throughput_unit or ''}".strip()
        return ""

    def kind_text(self, experiment: Experiment, kind: MetricKind) -> str:
        """The experiment's headline number of ``kind`` in words (``"1.3x"`` for its speedup
        where it also reports a latency), or ``""`` where it reports none of that kind."""
        if kind is MetricKind.LATENCY and experiment.latency is not None:
            return f"{readable(experiment.latency, 6)} {experiment.unit or ''}".strip()
        if kind is MetricKind.SPEEDUP and experiment.speedup is not None:
            return f"{readable(experiment.speedup, 6)}x"
        if kind is MetricKind.THROUGHPUT and experiment.throughput is not None:
            rate = readable(experiment.throughput, 6)
            return f"{rate} {experiment.throughput_unit or ''}".strip()
        return ""

    @functools.cached_property
    def best_gpu(self) -> str | None:
        """The GPU the best so far was timed on (``""`` where it names none), or None
        where the log's times come from one GPU at most: only then does a number need its
        GPU beside it."""
        if len({e.gpu for e in self.experiments if e.gpu}) < 2:
            return None
        best = self.progress.best()
        return (best.experiment.gpu or "") if best is not None else ""

    def value_at(self, experiment: Experiment) -> str:
        """:meth:`value_text` with the trial point it was measured at (``"47.46 us at b=32
        s=1 t=4096 h=16"``) when the log compares its headlines point by point: numbers of
        two points side by side are different quantities, not a gain or a loss. Where the
        log's times come from several GPUs, a number timed on another GPU than the best's
        names it (``"45.6 us at b=32 s=1 t=4096 h=16 on NVIDIA H200"``): beside the best's
        time it is no gain or loss either."""
        value = self.value_text(experiment)
        if value and self.progress.points and experiment.headline_point:
            value = f"{value} at {experiment.headline_point}"
        best_gpu = self.best_gpu
        if value and best_gpu is not None and experiment.gpu and experiment.gpu != best_gpu:
            value = f"{value} on {experiment.gpu}"
        return value

    def lone_number(self) -> str:
        """Where every number of the log comes from one experiment and no other reports
        the same quantity (so no gain can be computed yet): that experiment and what it
        reports, in words (``"exp 1 reports a latency (66.3 us)"``); ``""`` otherwise,
        also when several experiments each report a number of their own."""
        lone = self.progress.lone
        if not lone or any(e is not lone[0][0] for e, _ in lone):
            return ""
        experiment, first = lone[0]
        kinds = " and ".join(f"a {kind.value}" for _, kind in lone)
        # The number of the kind said first: a latency in cycles is no latency it reports.
        value = self.kind_text(experiment, first)
        return f"{experiment.mention} reports {kinds}" + (f" ({value})" if value else "")

    def unshared_numbers(self, experiments: int = 3, points: int = 3) -> str:
        """Where several experiments report numbers but no two report the same metric at
        the same point (so no gain can be computed, though numbers are there): the first
        ``experiments`` of them with what they report, at most ``points`` trial points a
        kind (``"exp 1: a speedup at tiny; exp 2: latencies at 64 and 256"``); ``""``
        otherwise, also when the numbers all come from one experiment
        (:meth:`lone_number` says that case)."""
        found: dict[int, tuple[Experiment, dict[MetricKind, list[str]]]] = {}
        for experiment, kind, point in self.progress.unshared:
            _, kinds = found.setdefault(id(experiment), (experiment, {}))
            # A headline is an experiment's one number: it is said with its value.
            kinds.setdefault(kind, []).append("" if point is None else point.name)
        if len(found) < 2:
            return ""
        parts = []
        for experiment, kinds in list(found.values())[:experiments]:
            said = []
            for kind, names in kinds.items():
                if names == [""]:
                    at = experiment.headline_point
                    value = self.kind_text(experiment, kind)
                    said.append(
                        f"a {kind.value}"
                        + (f" of {value}" if value else "")
                        + (f" at {at}" if at else "")
                    )
                    continue
                unique = list(dict.fromkeys(names))
                shown = _listed(unique[:points], cut=len(unique) > points)
                what = f"a {kind.value}" if len(names) == 1 else _PLURAL[kind]
                said.append(f"{what} at {shown}")
            parts.append(f"{experiment.mention}: {' and '.join(said)}")
        left = len(found) - experiments
        if left > 0:
            parts.append(count_text(left, "more experiment"))
        return "; ".join(parts)


_PLURAL = {
    MetricKind.LATENCY: "latencies",
    MetricKind.SPEEDUP: "speedups",
    MetricKind.THROUGHPUT: "throughputs",
}


def _listed(words: Sequence[str], *, cut: bool = False) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``; ``"a, b, c, …"`` when ``cut`` (more were
    left out)."""
    return ", ".join([*words, "…"]) if cut else and_list(words)


def attempts_text(count: int) -> str:
    """``"No attempt"``, ``"1 attempt"``, ``"4 attempts"``."""
    return "No attempt" if count == 0 else count_text(count, "attempt")


def experiments_text(numbers: Sequence[int], limit: int = 12) -> str:
    """``"exps 3, 5, 8"`` (cut with ``…`` past ``limit``)."""
    shown = [str(n) for n in numbers[:limit]]
    more = "…" if len(numbers) > limit else ""
    return ("exp " if len(numbers) == 1 else "exps ") + ", ".join(shown) + more


def build_context(
    log: ExperimentLog,
    catalog: CatalogLike | None,
    *,
    family: str | None,
    catalog_problem: str | None = None,
) -> Context:
    """Analyze progress and infer the family (unless given) for ``log``."""
    chosen: str | None
    evidence: tuple[Evidence, ...]
    by_words = ""
    if family is not None:
        chosen, source, evidence = family, "given", ()
    else:
        guess = infer_family(log)
        chosen = guess.family
        source = str(guess.facts[0].source) if guess.family and guess.facts else "unknown"
        # A fact is quoted without the list bullet it stands under in CLAUDE.md.
        evidence = tuple(
            Evidence(quote=quote(_BULLET.sub("", f.text)), source=str(f.source))
            for f in guess.facts
        )
        if chosen is not None and not guess.by_kernel:
            by_words = source
    return Context(
        log=log,
        catalog=catalog,
        family=chosen,
        family_source=source,
        family_evidence=evidence,
        progress=analyze(log.experiments),
        catalog_problem=catalog_problem,
        family_by_words=by_words,
    )


_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")


_TERM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*")
_STOP_WORDS = """
a an and are as at be been but by can could does done each else for from has have how if
in into is it its kernel kernels more most no not of on one only or our out over per so
such than that the their them then there these this those to try tried using use used
via was we were what when which while will with without would after before again also
all any back both down even ever first just last less like make many much new next now
off old once other same some still take than too two under up very well where why yet
add added adding change changed changes experiment experiments step steps result results
version attempt attempts test tests run runs instead because since path paths code time
times faster slower better worse current should could might implementation implement
implemented approach idea ideas work works working based
"""
_STOP = frozenset(_STOP_WORDS.split())


def salient_terms(text: str) -> set[str]:
    """Distinctive terms of ``text``: identifiers (``max_s_q``, ``BLOCK_N``) and words of five
    letters or more that are not common English or log vocabulary, lower-cased."""
    terms = set()
    for match in _TERM.finditer(text):
        word = match.group(0)
        lowered = word.lower().strip("-._")
        if lowered in _STOP or len(lowered) < 3:
            continue
        identifier = (
            "_" in word
            or any(c.isdigit() for c in word)
            or (word[1:] != word[1:].lower() and not word.isupper())
        )
        if (
            identifier
            or (len(lowered) >= 5 and lowered.isalpha())
            or (word.isupper() and len(word) >= 3)
        ):
            terms.add(lowered)
    return terms
