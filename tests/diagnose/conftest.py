"""A tiny stand-in catalog and builders of in-memory experiment logs for detector tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
import pytest

from kernelopt.catalog import Catalog
from kernelopt.catalog.vocabulary import family_ancestors
from kernelopt.experiments import Experiment, ExperimentLog, KernelSource, SourceRef
from kernelopt.experiments.records import Correctness, Status

# Attempt titles that share no catalog tag, knob or distinctive term, and aim at no
# resource: attempts no detector can tie together.
UNRELATED_TITLES = [
    "hoist reciprocal",
    "reorder argument checks",
    "narrower masks",
    "rename helper variables",
    "swap loop nest",
    "inline helper",
]


@attrs.frozen
class FakeEntry:
    """The fields of a catalog entry that diagnose reads."""

    id: str
    name: str
    keywords: tuple[str, ...] = ()
    fundamental_for: tuple[str, ...] = ()
    summary: str = "when it applies"

    @property
    def relative_path(self) -> str:
        return f"optimizations/{self.id}.md"


class FakeCatalog:
    """Enough of kernelopt.catalog.Catalog for diagnose: iteration, ids, fundamentals."""

    def __init__(self, entries: Sequence[FakeEntry]) -> None:
        self._entries = {e.id: e for e in entries}

    def __iter__(self) -> Iterator[FakeEntry]:
        return iter(sorted(self._entries.values(), key=lambda e: e.id))

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    def fundamentals(self, family: str) -> list[FakeEntry]:
        chain = family_ancestors(family)
        return [e for e in self if any(f in chain for f in e.fundamental_for)]

    def match_metrics(self, metrics: Mapping[str, float]) -> list[Any]:
        return []


ENTRIES = (
    FakeEntry(
        "split-kv-flash-decoding",
        "Split-KV",
        ("split-kv", "num_splits", "flash-decoding"),
        ("decode-attention",),
    ),
    FakeEntry(
        "online-softmax",
        "Online Softmax",
        ("online softmax", "running max"),
        ("attention", "softmax"),
    ),
    FakeEntry("cuda-event-instrumentation", "CUDA events", ("cuda events",), ("any",)),
    FakeEntry("buffer-persistence", "Persistent buffers", ("persistent buffers",)),
    FakeEntry("pruned-autotuning", "Pruned autotuning", ("pruned autotune",)),
    FakeEntry("size-1-axis-shortcut", "Size-1 axis", ("s_q == 1",)),
)


@pytest.fixture
def fake_catalog() -> FakeCatalog:
    """A catalog of six entries; split-KV is fundamental for decode attention."""
    return FakeCatalog(ENTRIES)


@pytest.fixture
def catalog() -> Catalog:
    """The built-in catalog, the one diagnose uses by default."""
    return Catalog.builtin()


def exp(
    number: int,
    latency: float | None = None,
    *,
    status: Status | None = Status.KEPT,
    correctness: Correctness = Correctness.PASS,
    description: str | None = None,
    tags: tuple[str, ...] = (),
    knobs: dict[str, str] | None = None,
    attempted: bool = True,
    metrics: dict[str, float] | None = None,
    text: str = "",
) -> Experiment:
    """An experiment with its number, headline latency (us) and fate."""
    ref = SourceRef(path="experiments/summary.md", line=2 + number)
    return Experiment(
        number=number,
        label=f"exp {number}",
        description=description or f"change {number}",
        latency=latency,
        unit="us" if latency is not None else None,
        correctness=correctness,
        status=status,
        attempted=attempted,
        tags=tags,
        knobs=knobs or {},
        metrics=metrics or {},
        text=text or (description or ""),
        refs={"latency": ref, "description": ref},
        sources=(ref,),
    )


def log_of(experiments: Sequence[Experiment], **fields: Any) -> ExperimentLog:
    """An ExperimentLog of ``experiments`` (root ".", other fields as given)."""
    fields.setdefault("root", ".")
    return ExperimentLog(experiments=tuple(experiments), **fields)


def kernel(
    text: str, *, path: str = "kernels/k.py", role: str = "kernel", experiment: int | None = None
) -> KernelSource:
    """A kernel source given as text."""
    return KernelSource(path=path, text=text, language="python", role=role, experiment=experiment)
