"""Reading values out of log text: statuses, pass markers, times, knobs, dates."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import read_log
from kernelopt.experiments.readers._values import (
    correctness_of,
    date_of,
    headline_latency,
    knobs_of,
    latency_tokens,
    not_attempted,
    speedup_tokens,
    status_of,
    throughput_tokens,
    unit_of_header,
)
from kernelopt.experiments.records import Correctness, Status


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("ACCEPTED — SUB-0.2ms ACHIEVED", Status.KEPT),
        ("NEUTRAL, reverted", Status.NEUTRAL),
        ("ROLLBACK: read_imagef broken on Adreno 663, DEAD END", Status.REVERTED),
        ("PASS (Neutral)", Status.NEUTRAL),
        ("PASS — NEW BEST", Status.KEPT),
        ("REVERTED — correctness failure", Status.REVERTED),
        ("Outcome: DISCARDED", Status.REVERTED),
        ("MERGED", Status.KEPT),
        ("REFUTED", Status.REVERTED),
        ("investigated -- **no change merged**", Status.REVERTED),
        ("Initial port baseline", Status.BASELINE),
        ("PASS", None),
        ("", None),
    ],
)
def test_status_words(text: str, status: Status | None) -> None:
    assert status_of(text) is status


def test_bare_failed_is_a_slowdown_next_to_times() -> None:
    assert status_of("Failed badly") is Status.FAILED
    assert status_of("Failed badly", failed_means_slower=True) is Status.REVERTED
    assert status_of("still fails strict parity", bare_fail=False) is None


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("PASS", Correctness.PASS),
        ("FAIL", Correctness.FAIL),
        ("✓", Correctness.PASS),
        ("✗", Correctness.FAIL),
        ("Pass: 12/12", Correctness.PASS),
        ("Pass: 11/12", Correctness.FAIL),
        ("100/100 pass, max_atol=0.00909", Correctness.PASS),
        ("passed 3,276,800,000/3,276,800,000 elements", Correctness.PASS),
        ("`222 passed`; p128 adapter replay", Correctness.PASS),
        ("zero-scale pass; nonzero kernel fail under 1e-2", Correctness.FAIL),
        ("no notes here", None),
    ],
)
def test_correctness_markers(text: str, verdict: Correctness | None) -> None:
    assert correctness_of(text) is verdict


def test_knobs_from_the_usual_spellings() -> None:
    knobs = knobs_of("BLOCK_T=128, num_warps=8, splits=16; BLOCK_N 64 and WG size 128")
    assert knobs == {
        "BLOCK_T": "128",
        "num_warps": "8",
        "num_splits": "16",
        "BLOCK_N": "64",
        "wg_size": "128",
    }
    assert knobs_of("GROUP_SIZE=4->8 tuning") == {"GROUP_SIZE": "8"}
    assert knobs_of("WG size sweep {32,64,128,256}") == {"wg_size": "{32,64,128,256}"}
    assert knobs_of("use 8 warps and 16 splits") == {"num_warps": "8", "num_splits": "16"}
    # Measured values are not knobs.
    assert knobs_of("max_atol=0.00909 rows=37") == {}


def test_times_speedups_rates() -> None:
    assert [(q.value, q.unit) for q in latency_tokens("3.699 us -> 3.789 µs")] == [
        (3.699, "us"),
        (3.789, "us"),
    ]
    assert (
        headline_latency("0.2054 -> **0.2471ms (+20%)**. Min latency 0.039 -> 0.062ms").value
        == 0.2471
    )
    assert headline_latency("First run 0.2175ms (-2.4%); stable ~0.222ms").value == 0.2175
    assert headline_latency("Max latency 0.86ms -> 2.80ms").value == 2.8
    assert [q.value for q in speedup_tokens("tiny 1.307x, default 1.137×, byte 0x90")] == [
        1.307,
        1.137,
    ]
    assert [(q.value, q.unit) for q in throughput_tokens("`12.422 cand/s`")] == [(12.422, "cand/s")]
    assert unit_of_header("Kernel_ms") == "ms" and unit_of_header("latency_us") == "us"
    assert unit_of_header("Mean (ms)") == "ms" and unit_of_header("Description") is None


def test_dates_and_not_attempted() -> None:
    assert date_of("## 2026-04-15 00:58 +09:00") == "2026-04-15T00:58:00"
    assert date_of("benchmark_20260410_blockwise_merge") == "2026-04-10"
    assert date_of("no date") is None
    assert not_attempted("Model C — NOT ATTEMPTED, scope blocker")
    assert not_attempted("superseded before measurement")
    assert not not_attempted("ACCEPTED")


def test_knobs_bind_the_number_next_to_the_knob_word() -> None:
    # "4 KV splits: 256 programs" sets 4 splits; 256 counts programs.
    assert knobs_of("4 KV splits: 256 programs") == {"num_splits": "4"}
    # The spellings of the count of KV splits are one knob.
    assert knobs_of("splits=16") == {"num_splits": "16"}
    assert knobs_of("KV splits: 8") == {"num_splits": "8"}
    assert knobs_of("num_splits 16") == {"num_splits": "16"}
    assert knobs_of("num_warps 8 and BLOCK_N=64") == {"BLOCK_N": "64", "num_warps": "8"}
    assert knobs_of("exp 3 BLOCK_N: 64") == {"BLOCK_N": "64"}
    # A measure after a knob word is not its value.
    assert knobs_of("num_splits 16x faster") == {}
    # An arrow to a number of another kind reports a measurement, not a new setting.
    assert knobs_of("T=32→0.2191, T=64→0.2175") == {"T": "32"}
    assert knobs_of("BLOCK_N=32->64") == {"BLOCK_N": "64"}


def test_rates_are_measurements_not_names_or_device_limits() -> None:
    from kernelopt.experiments.readers._metrics import metrics_of

    assert metrics_of("TF32/BF16/FP16 TFLOPS") == {}  # a column of dtypes, not 16 TFLOP/s
    assert metrics_of("Theoretical Adreno 663: ~30 GB/s") == {}
    assert metrics_of("peak is 989 TFLOP/s") == {}
    assert metrics_of("measured: ~49.5 GB/s") == {"bandwidth_gbps": 49.5}
    assert metrics_of("peak 989 TFLOP/s; we reach 412 TFLOP/s") == {"tflops": 412.0}
    assert metrics_of("72% DRAM, 85% of roofline") == {"dram_pct": 72.0, "floor_pct": 85.0}


def test_a_result_lines_own_before_and_after_is_its_speedup() -> None:
    from kernelopt.experiments.readers._values import arrow_speedup

    line = "0.2228ms → **0.2098ms (-5.8%)**"
    assert arrow_speedup(line, headline_latency(line)) == pytest.approx(0.2228 / 0.2098)
    bare = "0.2054 → **0.2471ms (+20% REGRESSION)**. Min latency 0.039 → 0.062ms"
    assert arrow_speedup(bare, headline_latency(bare)) == pytest.approx(0.2054 / 0.2471)
    assert arrow_speedup("First run 0.2175ms (-2.4%, likely warm-cache outlier)") is None
    # The arrow's new time must be the headline the line reports.
    assert arrow_speedup("Min latency 0.039 → 0.062ms; **0.2471ms**", headline_latency(
        "Min latency 0.039 → 0.062ms; **0.2471ms**")) is None  # fmt: skip


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("NOT KEPT", Status.REVERTED),
        ("not accepted", Status.REVERTED),
        ("wasn't kept: slower at s=16", Status.REVERTED),
        ("not yet merged", Status.REVERTED),
        ("never landed", Status.REVERTED),
        ("no regression, kept", Status.KEPT),
        ("not reverted: kept", Status.KEPT),
        ("no crash; neutral", Status.NEUTRAL),
        ("never failed, kept", Status.KEPT),
        ("kept, not reverted", Status.KEPT),
    ],
)
def test_a_negated_outcome_word_does_not_state_that_outcome(
    text: str, status: Status | None
) -> None:
    assert status_of(text) is status


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("did not pass", Correctness.FAIL),
        ("doesn't match the reference", Correctness.FAIL),
        ("not correct", Correctness.FAIL),
        ("not verified", None),
        ("not bit-exact", None),
        ("no NaN", None),
        ("no NaN, passes", Correctness.PASS),
        ("no mismatches vs float64", None),
        ("zero failures; all pass", Correctness.PASS),
        ("no fail", None),
        ("FAIL -> PASS", Correctness.PASS),
        ("PASS → FAIL", Correctness.FAIL),
        # An arrow inside the detail, not between two verdicts.
        ("PASS (rel err 1e-3 -> 2e-3)", Correctness.PASS),
        ("✗ (tol 1e-2 → 1e-3)", Correctness.FAIL),
    ],
)
def test_a_negated_verdict_word_does_not_state_that_verdict(
    text: str, verdict: Correctness | None
) -> None:
    assert correctness_of(text) is verdict


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("8.2±0.3 us", 8.2, "us"),
        ("57.9 ± 0.4 µs", 57.9, "us"),
        ("57.9 us ± 0.4 us", 57.9, "us"),
        ("0.21 +/- 0.01 ms", 0.21, "ms"),
        ("57.9 us ±1.1%", 57.9, "us"),
    ],
)
def test_a_spread_after_a_time_is_not_the_time(text: str, value: float, unit: str) -> None:
    assert [(q.value, q.unit) for q in latency_tokens(text)] == [(value, unit)]
    pick = headline_latency(f"avg {text}")
    assert pick is not None and (pick.value, pick.unit) == (value, unit)


def test_a_spread_after_a_speedup_is_not_the_speedup() -> None:
    assert [q.value for q in speedup_tokens("1.25 ± 0.02x")] == [1.25]


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("Apr 21, 2026", "2026-04-21"),
        ("April 21 2026 - split KV", "2026-04-21"),
        ("21 Apr 2026", "2026-04-21"),
        ("3rd Sept. 2026", "2026-09-03"),
        ("Sep 3, 2026 14:05", "2026-09-03T14:05:00"),
        ("Apr 31, 2026", None),  # no such day
        ("May be faster in 2026", None),
    ],
)
def test_dates_with_a_month_name(text: str, date: str | None) -> None:
    assert date_of(text) == date


def test_a_devlog_dated_with_month_names_is_read(tmp_path: Path) -> None:
    entries = "".join(
        f"## Apr {20 + n}, 2026 - Idea {n} ({'ACCEPTED' if n % 2 else 'REVERTED'})\n"
        f"Result: {100 - n} us\n\n"
        for n in range(1, 4)
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "devlog.md").write_text("# Devlog\n\n" + entries, encoding="utf-8")

    log = read_log(tmp_path)

    assert [(e.date, e.description, e.latency, e.status) for e in log.experiments] == [
        ("2026-04-21", "Idea 1", 99.0, Status.KEPT),
        ("2026-04-22", "Idea 2", 98.0, Status.REVERTED),
        ("2026-04-23", "Idea 3", 97.0, Status.KEPT),
    ]
