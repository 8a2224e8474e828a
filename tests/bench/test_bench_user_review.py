"""What a user of kernelopt.bench meets with wrong arguments and Ctrl-C, each pinned by a case."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import (
    Ceilings,
    Cost,
    Measurement,
    Roofline,
    RooflinePoint,
    Timer,
    TrialPoint,
    TuningInterrupted,
    check_written,
    compare,
    judge,
    run_trials,
    to_result_row,
    trial_matrix,
    tune,
    write_experiment,
)


class CountingTimer:
    """Times nothing (1 µs each) and counts the configs it was asked to time."""

    def __init__(self) -> None:
        self.timed = 0

    def measure(self, fn: Callable[[], object], *, label: str = "", **_: Any) -> Measurement:
        fn()
        self.timed += 1
        return Measurement(samples=[1.0], backend="cpu-perf-counter")


def _built(log: list[dict[str, Any]]) -> Callable[[Mapping[str, Any]], Callable[[], None]]:
    def build(config: Mapping[str, Any]) -> Callable[[], None]:
        log.append(dict(config))
        return lambda: None

    return build


LINE = Roofline(
    ceilings=Ceilings(gpu="g", copy_bytes_per_s=1e12, matmul_flop_per_s=1e14),
    cost=Cost(flops=1e9, bytes=1e6),
)


# -- tune --------------------------------------------------------------------------------


def test_ctrl_c_while_a_large_space_is_counted_is_a_tuning_interrupt() -> None:
    # The count of a space past sane_size ran outside the interrupt handler: Ctrl-C there
    # (up to a tenth of the budget) came out as a bare KeyboardInterrupt, with no result.
    def rule(config: Mapping[str, Any]) -> bool:
        raise KeyboardInterrupt

    built: list[dict[str, Any]] = []
    # Caught as the KeyboardInterrupt it is: a bare one would otherwise stop the test run.
    with pytest.raises(KeyboardInterrupt) as caught:
        tune(_built(built), {"x": list(range(300))}, rules=[rule], timer=CountingTimer())  # type: ignore[arg-type]
    assert isinstance(caught.value, TuningInterrupted)
    result = caught.value.result
    assert result.stop_reason == "interrupted"
    assert result.trials == () and result.best_config is None
    assert built == []


def test_a_start_config_the_rules_refuse_is_refused_before_anything_is_built() -> None:
    # It was pruned like any config: the search ran without its reference, and reported
    # a gain over the start of 0 with no start timed at all.
    built: list[dict[str, Any]] = []
    with pytest.raises(InputError, match=r"start: Expected a start config the rules allow") as e:
        tune(
            _built(built),
            {"BLOCK": [16, 32, 64, 128]},
            start={"BLOCK": 128},
            rules=[lambda c: True, lambda c: c["BLOCK"] <= 64],
            timer=CountingTimer(),  # type: ignore[arg-type]
        )
    assert "{'BLOCK': 128}, refused by rules[1]" in str(e.value)
    assert built == []


def test_a_start_config_the_rules_allow_is_still_the_reference() -> None:
    built: list[dict[str, Any]] = []
    result = tune(
        _built(built),
        {"BLOCK": [16, 32]},
        start={"BLOCK": 32},
        rules=[lambda c: c["BLOCK"] <= 64],
        timer=CountingTimer(),  # type: ignore[arg-type]
    )
    assert built == [{"BLOCK": 32}, {"BLOCK": 16}]
    assert result.start is not None


@pytest.mark.parametrize("start", ["BLOCK", ["BLOCK"]])
def test_a_start_that_is_not_a_mapping_names_the_argument(start: object) -> None:
    # A str or a list of knob names failed with "'str' object has no attribute 'items'".
    with pytest.raises(InputError, match=r"start: Expected a start config \{knob: value\}"):
        tune(_built([]), {"BLOCK": [16]}, start=start, timer=CountingTimer())  # type: ignore[arg-type]


def test_a_timer_that_cannot_time_is_refused_before_any_build() -> None:
    # Each config was built, then recorded as "AttributeError: 'str' object has no
    # attribute 'measure'", and the search reported no best config.
    built: list[dict[str, Any]] = []
    with pytest.raises(InputError, match=r"timer: Expected a Timer .*, got str"):
        tune(_built(built), {"BLOCK": [16, 32]}, timer="fast")  # type: ignore[arg-type]
    assert built == []


# -- run_trials and trial_matrix ---------------------------------------------------------


def test_run_trials_refuses_a_make_that_is_not_callable() -> None:
    # Every point was recorded as "TypeError: 'int' object is not callable".
    with pytest.raises(InputError, match=r"make: Expected make as a callable, got int"):
        run_trials(3, impl="v1")  # type: ignore[arg-type]


def test_run_trials_refuses_a_timer_that_cannot_time() -> None:
    made: list[TrialPoint] = []

    def make(point: TrialPoint) -> Callable[[], None]:
        made.append(point)
        return lambda: None

    with pytest.raises(InputError, match=r"timer: Expected a Timer .*, got str"):
        run_trials(make, impl="v1", timer="fast")  # type: ignore[arg-type]
    assert made == []


def test_trial_matrix_refuses_extra_points_that_are_not_points() -> None:
    # A mapping was returned among the points; a lone point raised a bare TypeError.
    with pytest.raises(InputError, match=r"extra_points\[0\]: Expected a TrialPoint, got dict"):
        trial_matrix(extra_points=[{"b": 1, "s": 1, "t": 1}])  # type: ignore[list-item]
    with pytest.raises(InputError, match=r"extra_points: Expected a list of TrialPoint"):
        trial_matrix(extra_points=TrialPoint(b=1, s=1, t=1))  # type: ignore[arg-type]


def test_trial_matrix_refuses_axes_that_are_not_a_mapping() -> None:
    # A list of pairs failed with "'list' object has no attribute 'items'".
    with pytest.raises(InputError, match=r"axes: Expected axes as \{name: values\}, got list"):
        trial_matrix(axes=[("h", (16,))])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["num heads", "h=2", ""])
def test_an_axis_name_that_breaks_the_point_spelling_is_refused(name: str) -> None:
    # "b=32 s=1 t=4096 num heads=16" reads back as other axes than the ones timed.
    with pytest.raises(InputError, match=r"extra: Expected axis names that read back as written"):
        TrialPoint(b=32, s=1, t=4096, extra={name: 16})
    with pytest.raises(InputError, match=r"Expected axis names"):
        trial_matrix(axes={name: (16,)})


def test_extra_axes_still_spell_the_point() -> None:
    point = TrialPoint(b=32, s=1, t=4096, extra={"h": 16, "kv_splits": 8})
    assert str(point) == "b=32 s=1 t=4096 h=16 kv_splits=8"


# -- the roofline ------------------------------------------------------------------------


@pytest.mark.parametrize("time_s", [0.0, -1e-6, math.nan, math.inf, "1e-6", True])
def test_a_roofline_point_needs_a_positive_time(time_s: object) -> None:
    # A time of 0 raised ZeroDivisionError at the first metric read; NaN gave NaN metrics.
    with pytest.raises(InputError, match=r"time_s: Expected a positive time, s"):
        RooflinePoint(roofline=LINE, time_s=time_s)  # type: ignore[arg-type]


def test_a_roofline_point_needs_a_roofline() -> None:
    with pytest.raises(InputError, match=r"roofline: Expected a Roofline, got Cost"):
        RooflinePoint(roofline=Cost(flops=1, bytes=1), time_s=1e-6)  # type: ignore[arg-type]


def test_a_roofline_point_made_directly_reads_as_one_placed() -> None:
    direct = RooflinePoint(roofline=LINE, time_s=2e-5)
    assert direct.metrics() == pytest.approx(LINE.place(20.0).metrics())


# -- result rows -------------------------------------------------------------------------


def test_to_result_row_names_a_measurement_of_another_type() -> None:
    # A list of samples failed with "'list' object has no attribute 'backend'".
    with pytest.raises(InputError, match=r"measurement: Expected a Measurement, got list"):
        to_result_row([1.0, 2.0], point="b=1 s=1 t=1", impl="v1")  # type: ignore[arg-type]


def test_to_result_row_refuses_no_point() -> None:
    # str(None) was written as the point "None".
    with pytest.raises(InputError, match=r"point: Expected a trial point, got None"):
        to_result_row(Measurement(samples=[1.0]), point=None, impl="v1")


# -- messages that show what came ------------------------------------------------------


@pytest.mark.parametrize("field", ["max_time_ms", "warmup_ms", "settle_ms"])
def test_a_timer_setting_given_as_text_shows_its_quotes(field: str) -> None:
    # "Expected a positive number, got 5" for max_time_ms="5" reads as nonsense.
    with pytest.raises(InputError, match=rf"{field}: Expected a .*, got '5'$"):
        Timer(**{field: "5"})


@pytest.mark.parametrize("confidence", ["0.95", None, math.nan, True])
def test_judge_names_a_confidence_that_is_no_number(confidence: object) -> None:
    # A str raised "'<=' not supported between instances of 'float' and 'str'".
    with pytest.raises(InputError, match=r"confidence: Expected a confidence in \[0.5, 1\)"):
        judge([1.0, 1.1, 1.0, 1.1], [0.5] * 4, confidence=confidence)  # type: ignore[arg-type]


def test_judge_names_a_seed_that_is_no_int() -> None:
    # numpy raised "SeedSequence expects int or sequence of ints for entropy not x".
    with pytest.raises(InputError, match=r"seed: Expected seed as an int, got 'x'"):
        judge([1.0, 1.1, 1.0, 1.1], [0.5] * 4, seed="x")  # type: ignore[arg-type]


def test_compare_refuses_a_bad_confidence_before_timing_anything() -> None:
    calls: list[str] = []
    with pytest.raises(InputError, match=r"confidence: Expected a confidence"):
        compare(
            lambda: calls.append("a"),
            lambda: calls.append("b"),
            timer=Timer(backend="cpu-perf-counter", warmup_ms=1, settle_ms=0),
            confidence="high",  # type: ignore[arg-type]
        )
    assert calls == []


# -- a kernel that writes NaN ------------------------------------------------------------


def test_a_kernel_writing_nan_is_not_reported_as_a_missing_write_alone() -> None:
    # The poison of a float is NaN: "1024 unwritten" sent a user whose kernel overflowed
    # looking for a write it never skipped.
    out = torch.empty(1024)
    timer = Timer(backend="cpu-perf-counter", warmup_ms=1, settle_ms=0, max_time_ms=5)
    with pytest.raises(InputError, match=r"1024 unwritten \(NaN: never written, or written as NaN"):
        timer.measure(lambda: out.fill_(math.nan), outputs=out)
    with pytest.raises(InputError, match=r"1024 of 1024 still poisoned \(NaN: .*written as NaN"):
        check_written(lambda: out.fill_(math.nan), out)


def test_an_integer_output_left_unwritten_gets_no_nan_hint() -> None:
    out = torch.empty(8, dtype=torch.int32)
    with pytest.raises(
        InputError,
        match=r"got 4 of 8 still poisoned \(-2147483648, the poison of torch\.int32: never "
        r"written, or written as -2147483648 by the kernel\) in outputs of shape \[8\], ",
    ):
        check_written(lambda: out[:4].fill_(1), out)


@pytest.mark.parametrize(
    ("field", "value"), [("floor", "35.79"), ("speedup", "1.5"), ("floor", True)]
)
def test_to_result_row_refuses_text_and_flags_for_numbers(field: str, value: object) -> None:
    # float("35.79") read text as a floor, and float(True) a flag as 1: the row then
    # showed them as measured numbers.
    with pytest.raises(InputError, match=rf"{field}: Expected a number, got {value!r}"):
        to_result_row(Measurement(samples=[70.0]), point="b=1 s=1 t=1", impl="v1", **{field: value})


def test_to_result_row_still_takes_numpy_numbers() -> None:
    import numpy as np

    row = to_result_row(
        Measurement(samples=[70.0]),
        point="b=1 s=1 t=1",
        impl="v1",
        floor=np.float32(35.5),
        speedup=np.float64(1.5),
    )
    assert (row.floor, row.speedup) == (35.5, 1.5)


def test_write_experiment_refuses_two_rows_of_one_point_and_kernel(tmp_path: Path) -> None:
    # A reader keeps one of two times of one kernel at one point; which was meant is lost.
    row = to_result_row(Measurement(samples=[66.1, 66.5, 66.3]), point="b=32 s=1", impl="seesaw")
    with pytest.raises(InputError) as error:
        write_experiment(
            tmp_path, experiment=1, title="x", rows=[row, row], status="KEPT", correctness="PASS"
        )
    assert str(error.value) == (
        "rows: Expected one row per (point, impl, mode), got ('b=32 s=1', 'seesaw', 'cold') twice"
    )
    assert list(tmp_path.iterdir()) == []
    other = to_result_row(Measurement(samples=[70.0]), point="b=32 s=1", impl="eager")
    write_experiment(
        tmp_path, experiment=1, title="x", rows=[row, other], status="KEPT", correctness="PASS"
    )


def test_a_rule_that_raises_fails_its_config_and_keeps_the_search() -> None:
    # A rule dividing by a knob that can be 0 used to end the search, and every config
    # timed before it was lost with the error.
    built: list[dict[str, Any]] = []
    space = {"BLOCK": [16, 32, 64], "SPLIT": [1, 0, 2]}
    with pytest.warns(RuntimeWarning, match=r"rules\[0\] raised ZeroDivisionError") as caught:
        result = tune(
            _built(built),
            space,
            rules=[lambda c: c["BLOCK"] // c["SPLIT"] >= 8],
            timer=CountingTimer(),  # type: ignore[arg-type]
            patience=100,
        )
    failed = [t for t in result.trials if t.error is not None]
    assert [t.config["SPLIT"] for t in failed] == [0, 0, 0]
    assert {t.error for t in failed} == {
        "rules[0] raised ZeroDivisionError: integer division or modulo by zero"
    }
    assert len(caught) == 1 and len(result.warnings) == 1
    assert built == [c for c in ({"BLOCK": b, "SPLIT": s} for b in (16, 32, 64) for s in (1, 2))]
    assert result.best_config is not None and result.best_config["SPLIT"] != 0
