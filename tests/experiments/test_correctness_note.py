"""The words a log states with an experiment's correctness verdict travel with the record.

``Experiment.correctness_note`` holds what the field, cell or entry says beside PASS or
FAIL (``FAIL (variants are wrong by construction; timing only)`` gives ``variants are
wrong by construction; timing only``), and ``refs["correctness_note"]`` the line it was
read on. Where two sources state a verdict, the words follow the verdict that is used.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt.experiments import Correctness, Experiment, read_log

from ..conftest import write_files

_HEADER = "| Exp | Description | Latency | Unit | Correct | Status |\n|---|---|---|---|---|---|\n"


def _result(number: int, verdict: str) -> str:
    """A canonical ``exp_N/result.md`` whose Correctness field (line 4) is ``verdict``."""
    return (
        f"# Experiment {number}: change {number}\n\n- Status: NEUTRAL\n- Correctness: {verdict}\n"
    )


def _by_number(root: Path) -> dict[int, Experiment]:
    return {e.number: e for e in read_log(root, catalog=()).experiments}


def test_a_result_field_gives_the_words_after_its_verdict(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            # Canonical (kernelopt's own layout) and written by hand.
            "experiments/exp_1/result.md": _result(
                1, "FAIL (variants are wrong by construction; timing only)"
            ),
            "experiments/exp_2/result.md": (
                "# Split-K tail\n\nNotes first.\n\n- **Correctness**: **FAIL** — rel err 0.6 "
                "on the tail tile\n"
            ),
            "experiments/exp_3/result.md": _result(3, "PASS"),
            "experiments/exp_4/result.md": (
                "# Swap AB\n\nThe new kernel still fails strict parity at the tail.\n"
            ),
        },
    )
    by = _by_number(tmp_path)
    assert by[1].correctness is Correctness.FAIL
    assert by[1].correctness_note == "variants are wrong by construction; timing only"
    assert str(by[1].refs["correctness_note"]) == "experiments/exp_1/result.md:4"
    assert by[2].correctness is Correctness.FAIL
    assert by[2].correctness_note == "rel err 0.6 on the tail tile"
    assert str(by[2].refs["correctness_note"]) == "experiments/exp_2/result.md:5"
    # A bare verdict states no words with it.
    assert by[3].correctness is Correctness.PASS and by[3].correctness_note == ""
    assert "correctness_note" not in by[3].refs
    # A verdict read from prose: the sentence that states it.
    assert by[4].correctness is Correctness.FAIL
    assert by[4].correctness_note == "The new kernel still fails strict parity at the tail."
    assert str(by[4].refs["correctness_note"]) == "experiments/exp_4/result.md:3"


def test_a_summary_cell_gives_the_words_beside_its_verdict(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "experiments/summary.md": "# Experiments\n\n"
            + _HEADER
            + "| 1 | copies without loads | 41.0 | us | **FAIL** (timing only) | NEUTRAL |\n"
            + "| 2 | wider tiles | 40.0 | us | ✓ | KEPT |\n"
            + "| 3 | fp8 keys | 39.0 | us | ✗ rel err 0.2 | REVERTED |\n",
        },
    )
    by = _by_number(tmp_path)
    assert by[1].correctness is Correctness.FAIL and by[1].correctness_note == "timing only"
    assert str(by[1].refs["correctness_note"]) == "experiments/summary.md:5"
    assert by[2].correctness is Correctness.PASS and by[2].correctness_note == ""
    assert by[3].correctness is Correctness.FAIL and by[3].correctness_note == "rel err 0.2"


def test_a_devlog_entry_gives_the_words_of_its_verdict(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "logs/optimization_log.md": (
                "# Kernel log\n\n"
                "## 2026-04-20 - Stage-removal copies (NEUTRAL)\n\n"
                "- **Result**: 0.2228ms\n"
                "- **Correctness**: FAIL (the copies are wrong by construction; timing only)\n\n"
                "## 2026-04-21 - Cache keyed by shape (REVERTED — correctness failure)\n\n"
                "- **Result**: Mean 0.1917ms on 98 workloads\n"
            ),
        },
    )
    copies, cache = read_log(tmp_path, catalog=()).experiments
    assert copies.correctness is Correctness.FAIL
    assert copies.correctness_note == "the copies are wrong by construction; timing only"
    assert str(copies.refs["correctness_note"]) == "logs/optimization_log.md:6"
    # A verdict the heading states: the heading is its words.
    assert cache.correctness is Correctness.FAIL
    assert cache.correctness_note == "Cache keyed by shape (REVERTED — correctness failure)"
    assert str(cache.refs["correctness_note"]) == "logs/optimization_log.md:8"


def test_a_history_status_gives_the_words_after_its_verdict(tmp_path: Path) -> None:
    records = [
        {"description": "baseline", "latency_us": 10.0, "status": "PASS"},
        {"description": "fp8 keys", "latency_us": 9.0, "status": "FAIL: rel err 0.2 at t=4096"},
        # The text overrules the status: its sentence is the failure's words, not the pass's.
        {
            "description": "fp8 values. Output has NaN in the tail. Fast.",
            "latency_us": 8.0,
            "status": "PASS (12/12)",
        },
    ]
    write_files(
        tmp_path,
        {"bench_history.jsonl": "".join(json.dumps(r) + "\n" for r in records)},
    )
    first, second, third = read_log(tmp_path, catalog=()).experiments
    assert first.correctness is Correctness.PASS and first.correctness_note == ""
    assert second.correctness is Correctness.FAIL
    assert second.correctness_note == "rel err 0.2 at t=4096"
    assert third.correctness is Correctness.FAIL
    assert third.correctness_note == "Output has NaN in the tail."


@pytest.mark.parametrize(
    ("cell", "field", "verdict", "note", "where"),
    [
        # Both fail: the words, wherever stated, describe the verdict used.
        ("FAIL", "FAIL (copies wrong by construction; timing only)", Correctness.FAIL,
         "copies wrong by construction; timing only", "experiments/exp_1/result.md:4"),
        # The failure wins over the pass, and brings its own words.
        ("PASS (rel err 1.8e-03)", "FAIL (NaN in the tail tile)", Correctness.FAIL,
         "NaN in the tail tile", "experiments/exp_1/result.md:4"),
        ("FAIL (NaN in the tail tile)", "PASS (rel err 1.8e-03)", Correctness.FAIL,
         "NaN in the tail tile", "experiments/summary.md:5"),
        # The failure has no words: the pass's are not its.
        ("PASS (rel err 1.8e-03)", "FAIL", Correctness.FAIL, "", None),
        # Both pass: the first source (the summary) wins, as for the verdict.
        ("PASS (rel err 1.8e-03)", "PASS (rel err 1.9e-03)", Correctness.PASS,
         "rel err 1.8e-03", "experiments/summary.md:5"),
    ],
)  # fmt: skip
def test_the_words_follow_the_verdict_used(
    tmp_path: Path, cell: str, field: str, verdict: Correctness, note: str, where: str | None
) -> None:
    write_files(
        tmp_path,
        {
            "experiments/summary.md": "# Experiments\n\n"
            + _HEADER
            + f"| 1 | change 1 | 41.0 | us | {cell} | NEUTRAL |\n"
            + "| 2 | change 2 | 40.0 | us | PASS | KEPT |\n",
            "experiments/exp_1/result.md": _result(1, field),
        },
    )
    first = _by_number(tmp_path)[1]
    assert first.correctness is verdict
    assert first.correctness_note == note
    found = first.refs.get("correctness_note")
    assert (None if found is None else str(found)) == where


def test_a_long_note_is_one_line_and_bounded(tmp_path: Path) -> None:
    words = "rel err 0.6 " * 100
    write_files(tmp_path, {"experiments/exp_1/result.md": _result(1, f"FAIL ({words.strip()})")})
    note = _by_number(tmp_path)[1].correctness_note
    assert "\n" not in note and note.startswith("rel err 0.6 rel err")
    assert len(note) <= 500 and note.endswith("…")
