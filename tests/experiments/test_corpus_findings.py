"""Rules the real logs of the corpus showed the readers getting wrong, each isolated in a
small log and checked on the log where it showed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt.experiments import Correctness, read_log


def _jsonl(root: Path, records: list[dict[str, object]]) -> None:
    (root / "bench_history.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_negated_failure_word_in_history_notes_is_no_failure(tmp_path: Path) -> None:
    _jsonl(
        tmp_path,
        [
            {
                "mean_latency_ms": 0.21,
                "status": "pass",
                "notes": "100/100 pass, no RUNTIME_ERRORs.",
            },
            {"mean_latency_ms": 0.19, "status": "pass", "notes": "2 workloads got RUNTIME_ERROR."},
        ],
    )
    runs = read_log(tmp_path).experiments
    assert [e.correctness for e in runs] == [Correctness.PASS, Correctness.FAIL]


def test_gdn_prefill_history_single_seq_shortcut_passes(corpus: Path) -> None:
    # Its notes read "100/100 pass, no RUNTIME_ERRORs"; the (T, num_seqs) cache, which did
    # hit RUNTIME_ERRORs, still fails.
    history = read_log(corpus / "gdn-prefill-devlog").series[1].experiments
    by = {e.description.split(":")[0]: e for e in history}
    assert by["Single-seq max_s_q shortcut"].correctness is Correctness.PASS
    cache = next(e for e in history if e.description.startswith("Cache max_s_q by (T, num_seqs)"))
    assert cache.correctness is Correctness.FAIL


DEVLOG = """# Kernel log

## 2026-04-22 - Wider groups (ACCEPTED)

- **Result**: Two runs: 0.1881, 0.1880 = avg **0.1881ms (-4.5% vs 0.1969)**
- **Status**: ACCEPTED

## 2026-04-21 - Direct copy (ACCEPTED)

- **Result**: avg **0.2031ms (-1.0% vs 0.2054 baseline)**
- **Status**: accepted

## 2026-04-20 - Other reference (ACCEPTED)

- **Result**: avg **0.2000ms (-30.1% vs 0.2500)**
- **Status**: accepted
"""


def test_a_result_stated_against_its_start_time_gives_the_speedup(tmp_path: Path) -> None:
    (tmp_path / "optimization_log.md").write_text(DEVLOG)
    by = {e.description: e for e in read_log(tmp_path).experiments}
    assert by["Wider groups"].speedup == pytest.approx(0.1969 / 0.1881)
    assert by["Direct copy"].speedup == pytest.approx(0.2054 / 0.2031)  # "-1.0%": rounded
    # -30.1 % is not 0.2000 against 0.2500 (-20 %): the percentage is against another run.
    assert by["Other reference"].speedup is None


def test_gdn_prefill_last_entries_have_their_speedups(corpus: Path) -> None:
    by = {e.number: e for e in read_log(corpus / "gdn-prefill-devlog").experiments}
    speedups = [by[n].speedup for n in (25, 26, 27, 28)]
    assert speedups == pytest.approx(
        [0.2054 / 0.2031, 0.2031 / 0.1969, 0.1969 / 0.1881, 0.1881 / 0.186]
    )


RUNS = """# Kernel log

## 2026-04-15 00:58 +09:00

- Quick smoke with a 3-workload cap passed all 3 sampled workloads.
- Mean latency `0.253 ms`.

## 2026-04-15 01:27 +09:00

- All 100 workloads passed.
- Mean latency `0.3426 ms`.

## 2026-04-16 09:00 +09:00

- Not all 100 workloads passed.
- Mean latency `0.3300 ms`.

## 2026-04-17 09:00 +09:00

- All unit tests passed; the accuracy check failed on 2 workloads.
- Mean latency `0.3200 ms`.
"""


def test_all_workloads_passed_in_prose_is_a_pass(tmp_path: Path) -> None:
    (tmp_path / "optimization_log.md").write_text(RUNS)
    verdicts = [e.correctness for e in read_log(tmp_path).experiments]
    assert verdicts == [
        Correctness.PASS,
        Correctness.PASS,
        Correctness.UNKNOWN,
        Correctness.FAIL,  # a test suite's verdict does not outweigh the failed accuracy
    ]


def test_gdn_prefill_migration_runs_pass(corpus: Path) -> None:
    first, second = read_log(corpus / "gdn-prefill-devlog").experiments[:2]
    assert first.correctness is second.correctness is Correctness.PASS
    assert (first.refs["correctness"].line, second.refs["correctness"].line) == (326, 334)


NOTES = """# Kernel7 Experiment Notes (2026-03-25)

| Experiment | Hypothesis | Mini result | Outcome |
| --- | --- | --- | --- |
| Tile-2 reuse | Two tiles per CTA | `3.699 us -> 3.789 us` | Failed |
| Shared cache | Stage q once | `3.702 us -> 3.779 us` | Failed |
"""


def test_a_notes_title_date_dates_its_rows(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text(NOTES)
    log = read_log(tmp_path)
    assert [e.date for e in log.experiments] == ["2026-03-25", "2026-03-25"]
    assert log.experiments[0].refs["date"].line == 1
    # A row's own date is kept.
    dated = NOTES.replace("| Experiment |", "| Date | Experiment |").replace(
        "| --- |", "| --- | --- |", 1
    )
    dated = dated.replace("| Tile-2", "| 2026-03-24 | Tile-2").replace(
        "| Shared", "| 2026-03-26 | Shared"
    )
    (tmp_path / "notes.md").write_text(dated)
    assert [e.date for e in read_log(tmp_path).experiments] == ["2026-03-24", "2026-03-26"]


def test_gdn_decode_experiments_are_dated_by_their_note(corpus: Path) -> None:
    primary = read_log(corpus / "gdn-decode-experiments").experiments
    assert [e.date for e in primary] == ["2026-03-25"] * 4


def test_a_result_cell_before_and_after_gives_the_rows_speedup(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text(NOTES)
    speedups = [e.speedup for e in read_log(tmp_path).experiments]
    assert speedups == pytest.approx([3.699 / 3.789, 3.702 / 3.779])
    # A Speedup column states the row's speedup itself and wins.
    ratio = NOTES.replace("| Outcome |", "| Outcome | Speedup |").replace(
        "| --- |\n", "| --- | --- |\n", 1
    )
    ratio = ratio.replace("| Failed |\n", "| Failed | 0.9x |\n")
    (tmp_path / "notes.md").write_text(ratio)
    assert [e.speedup for e in read_log(tmp_path).experiments] == [0.9, 0.9]


def test_gdn_decode_experiments_speedups_are_their_own_before_and_after(corpus: Path) -> None:
    primary = read_log(corpus / "gdn-decode-experiments").experiments
    expected = [3.699 / 3.789, 3.709 / 4.150, 3.706 / 9.369, 3.702 / 3.779]
    assert [e.speedup for e in primary] == pytest.approx(expected)
