"""Latencies counted in clock cycles in prose (``- Result: 4100 -> 3550 cycles``) are read
as cycle counts, with their own A/B; a log with as many cycle counts as times goes by its
headlines' unit, or says that it had to choose; a profiler's table row splits its cells as
the table readers do, an escaped pipe (``\\|``) inside its cell."""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import diagnose, diagnose_log
from kernelopt.experiments import Experiment, ExperimentLog, SourceRef, read_log
from kernelopt.experiments.log import MetricKind, Point
from kernelopt.experiments.readers._metrics import is_profiling_line
from kernelopt.experiments.readers._values import arrow_speedup, headline_latency
from kernelopt.experiments.records import Correctness, Status

RESULTS = {
    1: ("first kernel", "- Result: 4100 cycles a key tile (clock locked at 1410 MHz)"),
    2: ("BLOCK_N=64", "- Result: 4100 -> 3550 cycles a key tile"),
    3: ("num_warps=8", "- Result: **3400 cycles** a key tile"),
}


def _prose_log(root: Path) -> Path:
    for number, (title, line) in RESULTS.items():
        folder = root / "experiments" / f"exp_{number}"
        folder.mkdir(parents=True)
        text = f"# Experiment {number}: {title}\n\n- Status: KEPT\n{line}\n"
        (folder / "result.md").write_text(text, encoding="utf-8")
    return root


def test_a_cycle_count_in_a_result_line_is_its_latency(tmp_path: Path) -> None:
    log = read_log(_prose_log(tmp_path))

    assert [(e.latency, e.unit) for e in log.experiments] == [
        (4100.0, "cycles"),
        (3550.0, "cycles"),
        (3400.0, "cycles"),
    ]
    assert str(log.experiments[1].ref("latency")) == "experiments/exp_2/result.md:4"
    # "4100 -> 3550 cycles" is the entry's own A/B.
    assert log.experiments[1].speedup is not None
    assert round(log.experiments[1].speedup, 4) == round(4100 / 3550, 4)


DEVLOG = """# Kernel log

## 2026-04-15 00:58 +09:00

- First kernel.
- Mean latency `4100 cycles`.

## 2026-04-16 09:00 +09:00

- BLOCK_N=64.
- Mean latency `3550 cycles`.
"""


def test_a_devlogs_mean_latency_in_cycles_is_read(tmp_path: Path) -> None:
    (tmp_path / "optimization_log.md").write_text(DEVLOG, encoding="utf-8")
    log = read_log(tmp_path)

    assert [(e.latency, e.unit, str(e.ref("latency"))) for e in log.experiments] == [
        (4100.0, "cycles", "optimization_log.md:6"),
        (3550.0, "cycles", "optimization_log.md:11"),
    ]


def test_a_log_of_cycle_counts_in_prose_tracks_its_best(tmp_path: Path) -> None:
    diagnosis = diagnose(_prose_log(tmp_path), catalog=None)

    best = diagnosis.summary.best
    assert best is not None and (best.experiment, best.value, best.unit) == (3, 3400.0, "cycles")
    assert [step.experiment for step in diagnosis.summary.trajectory] == [2, 3]


def test_a_time_on_the_line_is_its_latency_wherever_the_count_stands() -> None:
    time = headline_latency("1.75 us (3550 cycles at 1970 MHz)")
    assert time is not None and (time.value, time.unit) == (1.75, "us")
    # Stated first, the count is still the aside: the line states a time.
    time = headline_latency("3550 cycles (1.80 us at 1970 MHz)")
    assert time is not None and (time.value, time.unit) == (1.8, "us")


def test_a_passing_count_of_cycles_is_no_headline() -> None:
    warmed = headline_latency("Warmed up for 3 cycles, then 0.2054 -> 0.2471 ms")
    assert warmed is not None and (warmed.value, warmed.unit) == (0.2471, "ms")
    warmup = "200 cycles of warmup; latency 0.5 ms -> 0.4 ms"
    latency = headline_latency(warmup)
    assert latency is not None and (latency.value, latency.unit) == (0.4, "ms")
    assert arrow_speedup(warmup, latency) == 1.25


def test_a_result_line_with_a_warmup_count_reads_its_time(tmp_path: Path) -> None:
    folder = tmp_path / "experiments" / "exp_1"
    folder.mkdir(parents=True)
    (folder / "result.md").write_text(
        "# Experiment 1: tiles\n\n- Status: KEPT\n"
        "- Result: 200 cycles of warmup; latency 0.5 ms -> 0.4 ms\n",
        encoding="utf-8",
    )
    (experiment,) = read_log(tmp_path).experiments

    assert (experiment.latency, experiment.unit) == (0.4, "ms")


def test_a_cycle_ab_takes_no_time_as_its_other_side() -> None:
    line = "0.9 us -> 3550 cycles"
    # The line states a time, so its latency is that time; no count is its other side.
    pick = headline_latency(line)
    assert pick is not None and (pick.value, pick.unit) == (0.9, "us")
    assert arrow_speedup(line, pick) is None
    count = headline_latency("3550 cycles")
    assert count is not None and arrow_speedup(line, count) is None


def _experiment(
    number: int, latency: float, unit: str, points: tuple[tuple[str, float, str], ...] = ()
) -> Experiment:
    ref = SourceRef(path="experiments/summary.md", line=2 + number)
    return Experiment(
        number=number,
        label=f"exp {number}",
        description=f"change {number}",
        latency=latency,
        unit=unit,
        correctness=Correctness.PASS,
        status=Status.KEPT,
        points=tuple(
            Point(name=name, value=value, unit=u, kind=MetricKind.LATENCY, source=ref)
            for name, value, u in points
        ),
        refs={"latency": ref},
        sources=(ref,),
    )


def test_a_tie_goes_by_the_headlines_unit() -> None:
    # Two cycle counts and two times in all; of the headlines, two are cycle counts.
    experiments = (
        _experiment(1, 1800.0, "cycles"),
        _experiment(2, 1520.0, "cycles"),
        _experiment(3, 0.9, "us", points=(("b=1 tile", 0.8, "us"),)),
    )
    diagnosis = diagnose_log(ExperimentLog(root=".", experiments=experiments), catalog=None)

    best = diagnosis.summary.best
    assert best is not None and (best.experiment, best.value, best.unit) == (2, 1520.0, "cycles")
    assert (
        "the log states as many latencies in clock cycles as in time units (2 each); its "
        "headline latencies are mostly cycle counts, so its cycle counts are compared and "
        "its times set aside"
    ) in diagnosis.warnings


def test_a_tie_the_headlines_share_is_told() -> None:
    experiments = (
        _experiment(1, 1800.0, "cycles"),
        _experiment(2, 1.0, "us"),
        _experiment(3, 1520.0, "cycles"),
        _experiment(4, 0.9, "us"),
    )
    diagnosis = diagnose_log(ExperimentLog(root=".", experiments=experiments), catalog=None)

    best = diagnosis.summary.best
    assert best is not None and (best.experiment, best.value, best.unit) == (4, 0.9, "us")
    assert (
        "the log states as many latencies in clock cycles as in time units (2 each), its "
        "headline latencies too; no clock converts one into the other, so its times are "
        "compared and its cycle counts set aside: give the headlines one unit (a Unit "
        "column, or a header such as 'Latency (cycles)') to choose"
    ) in diagnosis.warnings


def test_no_tie_no_word_of_one() -> None:
    experiments = (
        _experiment(1, 1800.0, "cycles"),
        _experiment(2, 1.0, "us"),
        _experiment(3, 0.9, "us"),
    )
    diagnosis = diagnose_log(ExperimentLog(root=".", experiments=experiments), catalog=None)
    assert not any("as many latencies" in w for w in diagnosis.warnings)


def test_an_escaped_pipe_stays_in_its_cell_of_a_profiler_row() -> None:
    # Split at every pipe, "variant A\|2" gave a cell "2": with the 7, two numbers next
    # to a profiler's name, which read as profiling data.
    assert not is_profiling_line(r"| ncu | variant A\|2 | 7 |")
    assert is_profiling_line("| ncu | variant A | 2 | 7 |")
