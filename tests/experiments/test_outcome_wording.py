"""A row's result that states a failure outweighs a test tally in its validation column."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import Correctness, Status, read_log

_HEADER = "| id | date | change | validation | result |\n| --- | --- | --- | --- | --- |\n"


def _summary(root: Path, rows: list[tuple[str, str]]) -> Path:
    path = root / "experiments" / "summary.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        "# Kernel Experiment Summary\n\n"
        + _HEADER
        + "".join(
            f"| step-{i} | 2026-05-26 | change {i} | {validation} | {result} |\n"
            for i, (validation, result) in enumerate(rows, start=1)
        ),
        encoding="utf-8",
    )
    return root


@pytest.mark.parametrize(
    "result",
    [
        # triton-lora-optimus, field-policy-qkv: "`26 passed`" in the validation column.
        "fused-qkv-exact improves top-logprob diff to `0.125` but still fails strict parity",
        "the packed path fails the correctness check at p128",
        "parity failed against the reference",
    ],
)
def test_stated_failure_beats_a_pytest_tally(tmp_path: Path, result: str) -> None:
    root = _summary(
        tmp_path, [("`222 passed`; replay", "reached 1.3 cand/s"), ("`26 passed`; probes", result)]
    )
    first, second = read_log(root, catalog=()).experiments
    assert first.correctness is Correctness.PASS
    assert (second.correctness, second.status) == (Correctness.FAIL, Status.FAILED)
    assert str(second.ref("correctness")) == "experiments/summary.md:6"


@pytest.mark.parametrize(
    ("validation", "result"),
    [
        # An explicit verdict in the validation column is the author's word on correctness.
        ("PASS (26 passed)", "still fails strict parity"),
        ("exact vs torch", "still fails strict parity"),
        # No failure stated: the tally stands.
        ("`26 passed`", "generation-score parity close but not exact"),
        ("`31 passed`", "field law is not the blocker"),
    ],
)
def test_the_tally_stands_without_a_stated_failure_or_against_a_verdict(
    tmp_path: Path, validation: str, result: str
) -> None:
    root = _summary(tmp_path, [("`1 passed`", "first"), (validation, result)])
    second = read_log(root, catalog=()).experiments[1]
    assert second.correctness is Correctness.PASS
