"""Experiments under construction: what one reader found, before merging and numbering.

Readers emit :class:`Draft` objects. Drafts that describe the same experiment (a summary
row and its ``exp_N/result.md``, a step table row and the step's folder) share a merge
``scope`` and ``key``; :func:`kernelopt.experiments.readers._assemble.assemble` merges them
(first value wins per field, in reader order), orders and numbers each series, and freezes
them into :class:`~kernelopt.experiments.log.Experiment` records.
"""

from __future__ import annotations

from typing import Any

import attrs

from kernelopt.experiments.log import Fact, Point, SourceRef
from kernelopt.experiments.records import Correctness, Status

__all__ = ["Draft", "DraftRecommendation"]

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
    "attempted",
    "date",
    "kernel",
)


@attrs.define(kw_only=True)
class DraftRecommendation:
    """A recommendation before numbering: ``offset`` 0 when the same experiment may act on
    it (a plan), 1 when only later experiments can (a result's "next steps")."""

    text: str
    source: SourceRef
    offset: int = 1


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
    status: Status | None = None
    attempted: bool | None = None
    date: str = ""
    kernel: str = ""
    tags: list[str] = attrs.field(factory=list)
    knobs: dict[str, str] = attrs.field(factory=dict)
    points: list[Point] = attrs.field(factory=list)
    metrics: dict[str, float] = attrs.field(factory=dict)
    recommendations: list[DraftRecommendation] = attrs.field(factory=list)
    kernel_files: list[str] = attrs.field(factory=list)
    profiling: list[Fact] = attrs.field(factory=list)
    text_parts: list[str] = attrs.field(factory=list)
    refs: dict[str, SourceRef] = attrs.field(factory=dict)
    sources: list[SourceRef] = attrs.field(factory=list)
    table_row: bool = False  # read from one row of an experiment table

    def put(self, field: str, value: Any, ref: SourceRef | None) -> None:
        """Set ``field`` to ``value`` unless it already holds one (first reader wins)."""
        if value is None or value == "":
            return
        current = getattr(self, field)
        if current is None or current == "":
            setattr(self, field, value)
            if ref is not None:
                self.refs.setdefault(field, ref)

    def absorb(self, other: Draft) -> None:
        """Fill this draft's empty fields from ``other`` and append its lists."""
        for field in SCALARS:
            self.put(field, getattr(other, field), other.refs.get(field))
        if not self.order and other.order:
            self.order = other.order
        for tag in other.tags:
            if tag not in self.tags:
                self.tags.append(tag)
        for key, knob in other.knobs.items():
            self.knobs.setdefault(key, knob)
        # Points from a second source describe the same runs in other words: keep the first
        # source's set unless it had none.
        if not self.points:
            self.points.extend(other.points)
        for key, value in other.metrics.items():
            self.metrics.setdefault(key, value)
        # Caps keep a log that repeats one experiment thousands of times linear.
        room = _CAP - len(self.recommendations)
        self.recommendations.extend(other.recommendations[: max(room, 0)])
        self.kernel_files.extend(f for f in other.kernel_files if f not in self.kernel_files)
        if len(self.profiling) < 8:
            self.profiling.extend(f for f in other.profiling[:8] if f not in self.profiling)
        self.text_parts.extend(other.text_parts[: max(_CAP - len(self.text_parts), 0)])
        for key, ref in other.refs.items():
            self.refs.setdefault(key, ref)
        if len(self.sources) < _CAP:
            known = set(self.sources)
            self.sources.extend(s for s in other.sources if s not in known)
            del self.sources[_CAP:]
