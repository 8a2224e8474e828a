"""Work that grows with the log grows linearly: what every experiment needs is built once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kernelopt.diagnose.context import build_context
from kernelopt.diagnose.detectors import ignored_prior_research, over_engineering
from kernelopt.diagnose.params import IgnoredPriorResearchParams, OverEngineeringParams
from kernelopt.experiments import ExperimentLog, Recommendation, SourceRef

from .conftest import exp, kernel, log_of


class _Walked(tuple):  # type: ignore[type-arg]
    """A tuple that counts how many times it is walked."""

    walks = 0

    def __iter__(self) -> Iterator[Any]:
        self.walks += 1
        return super().__iter__()


def _watch(log: ExperimentLog, field: str) -> _Walked:
    walked = _Walked(getattr(log, field))
    object.__setattr__(log, field, walked)  # the log is frozen; the test swaps in a counter
    return walked


def test_looking_experiments_up_by_number_walks_them_once() -> None:
    log = log_of([exp(n, 10.0) for n in range(1, 201)])
    walked = _watch(log, "experiments")
    found = [log.experiment(n) for n in range(1, 201)]
    assert [e.number for e in found if e is not None] == list(range(1, 201))
    assert log.experiment(999) is None
    assert walked.walks == 1


def _snapshots_walked(count: int) -> int:
    experiments = [exp(n, 50.0 - 0.01 * n) for n in range(1, count + 1)]
    snapshots = tuple(
        kernel(
            f"import triton\nx = {n}\n",
            path=f"experiments/exp_{n}/k.py",
            role="snapshot",
            experiment=n,
        )
        for n in range(1, count + 1)
    )
    log = log_of(experiments, kernels=snapshots)
    ctx = build_context(log, None, family=None)
    walked = _watch(log, "kernels")
    over_engineering.detect(ctx, OverEngineeringParams())
    return walked.walks


def test_over_engineering_reads_the_kernel_sources_once_however_many_experiments() -> None:
    # Mapping every kernel's text once per experiment made the detector quadratic.
    assert _snapshots_walked(20) == _snapshots_walked(200) <= 4


def test_ignored_prior_research_finds_each_recommendations_terms_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    count = 60
    experiments = [exp(n, 50.0 - 0.01 * n) for n in range(1, count + 1)]
    # Each names its own idea: none is acted on, and none groups with another.
    recommendations = [
        Recommendation(
            text=f"Try widget{n} with gizmo{n}",
            source=SourceRef(path=f"experiments/exp_{n}/plan.md", line=3),
            experiment=n,
            after=n + 1,
        )
        for n in range(1, count + 1)
    ]
    found = []
    real = ignored_prior_research._terms

    def counted(text: str) -> set[str]:
        found.append(text)
        return real(text)

    monkeypatch.setattr(ignored_prior_research, "_terms", counted)
    log = log_of(experiments, recommendations=tuple(recommendations))
    outcome = ignored_prior_research.detect(
        build_context(log, None, family=None), IgnoredPriorResearchParams()
    )
    assert outcome.finding is not None
    # Once per recommendation and once per experiment: grouping the ignored ones looked
    # every group's terms up again for each of them.
    assert len(found) <= 2 * count


class _CountedTerms(dict):  # type: ignore[type-arg]
    """A terms-by-text map that counts its lookups."""

    lookups = 0

    def __getitem__(self, key: str) -> set[str]:
        self.lookups += 1
        return super().__getitem__(key)  # type: ignore[no-any-return]


def _ignored(texts: list[str]) -> list[tuple[Recommendation, list[Any]]]:
    return [
        (Recommendation(text=t, source=SourceRef(path="LESSONS.md", line=i + 1)), [])
        for i, t in enumerate(texts)
    ]


def _grouping_lookups(count: int) -> int:
    texts = [f"Try widget{n} with gizmo{n} and sprocket{n}" for n in range(count)]
    terms = _CountedTerms({t: set(t.split()[1:2] + t.split()[3:4] + t.split()[5:]) for t in texts})
    groups = ignored_prior_research.group_repeats(_ignored(texts), terms)
    assert len(groups) == count  # nothing shared: each leads its own group
    return terms.lookups


def test_grouping_repeated_recommendations_is_linear_in_their_number() -> None:
    # Comparing each ignored recommendation with every group made 4,000 of them take 10 s.
    assert _grouping_lookups(400) == 10 * _grouping_lookups(40) == 400


def test_a_repeat_joins_the_first_group_whose_lead_shares_enough_terms() -> None:
    terms = {
        "fuse the merge kernel": {"fuse", "merge", "kernel"},
        "raise num_stages": {"num_stages", "raise"},
        "fuse the merge into the kernel": {"fuse", "merge", "kernel"},
        "merge kernel launch": {"merge", "kernel", "launch"},
        "raise num_stages to 4": {"num_stages", "raise", "4"},
        "one shared word: kernel": {"kernel", "word"},
    }
    groups = ignored_prior_research.group_repeats(_ignored(list(terms)), terms)
    assert [[r.text for r, _a in g] for g in groups] == [
        ["fuse the merge kernel", "fuse the merge into the kernel", "merge kernel launch"],
        ["raise num_stages", "raise num_stages to 4"],
        ["one shared word: kernel"],
    ]
