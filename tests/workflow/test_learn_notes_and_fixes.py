"""LEARN keeps the rows' notes with the evidence, reads an anti-pattern's after version as
its fix, and judges the samples of two rows unpaired.

A row's note (``"INVENTED numbers (no GPU)"``) was dropped from the evidence written; a
user who removed ``bucket-padding-waste`` and measured it faster was told the result goes
against it ("flip it"); rows timed in separate runs were called ``judge on 30 paired
samples``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kernelopt.bench import Verdict
from kernelopt.catalog import BUILTIN_ROOT, parse_entry
from kernelopt.workflow import Action, learn, observe_rows

from .conftest import anchor_row, bench_row

ANTI = "bucket-padding-waste"
NOTE = "INVENTED numbers (no GPU): exercise of the loop only"


@pytest.fixture
def padded_tree(tmp_path: Path) -> Path:
    root = tmp_path / "knowledge"
    (root / "anti-patterns").mkdir(parents=True)
    shutil.copyfile(
        BUILTIN_ROOT / "anti-patterns" / f"{ANTI}.md", root / "anti-patterns" / f"{ANTI}.md"
    )
    return root


def test_the_rows_note_is_written_with_the_evidence(knowledge: Path) -> None:
    seen = observe_rows(
        anchor_row("splits16", note=NOTE), anchor_row("splits8", note=NOTE), source="runs/a.jsonl"
    )
    assert seen.notes == NOTE
    outcome = learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge)
    block = parse_entry(outcome.path.read_text(encoding="utf-8")).evidence[-1]  # type: ignore[union-attr]
    assert block.notes.endswith(f"The rows' notes: {NOTE}.")
    assert f"The rows' notes: {NOTE}." in outcome.summary()


def test_each_sides_note_is_named_when_they_differ() -> None:
    seen = observe_rows(
        anchor_row("splits16", note="SIMULATED timing"), anchor_row("splits8"), source="x"
    )
    assert seen.notes == "before: SIMULATED timing"
    assert observe_rows(anchor_row("splits16"), anchor_row("splits8"), source="x").notes == ""


def test_a_new_anti_pattern_keeps_the_rows_note(knowledge: Path) -> None:
    seen = observe_rows(
        anchor_row("splits8", note=NOTE), anchor_row("splits32", note=NOTE), source="runs/a.jsonl"
    )
    outcome = learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge)
    assert outcome.action is Action.NEW_ANTI_PATTERN and outcome.created is not None
    assert outcome.created.evidence[0].notes == f"The rows' notes: {NOTE}."


def test_removing_an_anti_pattern_and_getting_faster_confirms_it(padded_tree: Path) -> None:
    seen = observe_rows(
        bench_row("v_padded", 100.0), bench_row("v_exact", 80.0), source="runs/a.jsonl"
    )
    outcome = learn(seen, entry_id=ANTI, knowledge=padded_tree)
    assert outcome.verdict is Verdict.FAST and outcome.action is Action.EVIDENCE
    assert outcome.entry_id == ANTI and not outcome.contradicts and outcome.fix
    assert "flip it" not in outcome.summary()
    assert f"It confirms `{ANTI}`" in outcome.summary()
    block = parse_entry(outcome.path.read_text(encoding="utf-8")).evidence[-1]  # type: ignore[union-attr]
    assert block.notes.startswith("Before is the version with this anti-pattern, after its fix")


def test_removing_an_anti_pattern_and_getting_slower_goes_against_it(padded_tree: Path) -> None:
    seen = observe_rows(
        bench_row("v_padded", 80.0), bench_row("v_exact", 100.0), source="runs/a.jsonl"
    )
    outcome = learn(seen, entry_id=ANTI, knowledge=padded_tree)
    assert outcome.verdict is Verdict.SLOW and outcome.action is Action.EVIDENCE
    assert outcome.entry_id == ANTI and outcome.contradicts
    assert "read as its fix (the version without it), is slower" in outcome.summary()
    assert "give the files the other way round" in outcome.summary()


def test_an_optimization_made_faster_does_not_go_against_it(knowledge: Path) -> None:
    seen = observe_rows(anchor_row("splits16"), anchor_row("splits8"), source="runs/a.jsonl")
    outcome = learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge)
    assert not outcome.contradicts and not outcome.fix
    assert "It confirms" not in outcome.summary()


def test_samples_of_rows_from_two_runs_are_not_called_paired(knowledge: Path) -> None:
    seen = observe_rows(
        anchor_row("splits16", samples=30, seed=1),
        anchor_row("splits8", samples=30, seed=2),
        source="runs/a.jsonl",
    )
    assert seen.comparison.pairs == 0 and seen.verdict is Verdict.FAST
    outcome = learn(seen, entry_id="split-kv-flash-decoding", knowledge=knowledge)
    assert "paired samples" not in outcome.summary()
    assert "unpaired bootstrap of 30 before and 30 after samples" in outcome.summary()
    # The interval of the ratio is written with the evidence, as for paired samples.
    lo, hi = seen.comparison.ratio_low, seen.comparison.ratio_high
    assert lo < seen.comparison.ratio < hi
    block = parse_entry(outcome.path.read_text(encoding="utf-8")).evidence[-1]  # type: ignore[union-attr]
    assert re.search(r"time ratio 0\.\d+ \[0\.\d+, 0\.\d+\]", block.notes)


def test_unpaired_samples_of_one_version_are_not_fast_or_slow() -> None:
    seen = observe_rows(
        bench_row("v1", 100.0, samples=40, seed=1, spread=0.02),
        bench_row("v2", 100.0, samples=40, seed=2, spread=0.02),
        source="x",
    )
    assert seen.verdict in (Verdict.SAME, Verdict.UNCLEAR)
