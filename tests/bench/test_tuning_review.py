"""``tune`` and ``run_trials`` driven as a user drives them, with stand-in timers and builds.

Each case here once ended in a traceback that lost what was timed, kept a number that was
no measurement, or named the wrong culprit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from kernelopt import InputError
from kernelopt.bench import (
    AutotuneExplosionWarning,
    Measurement,
    TrialCall,
    TrialPoint,
    run_trials,
    tune,
)

POINT = TrialPoint(b=2, s=1, t=8)


def _measurement(value: float, *, unit: str = "us") -> Measurement:
    return Measurement(samples=[value] * 3, unit=unit, backend="cpu-perf-counter")


class ValueTimer:
    """Times a call by what it returns: ``fn()`` is the call's time in ``unit``."""

    def __init__(self, *, unit: str = "us") -> None:
        self.unit = unit

    def measure(self, fn: Callable[[], object], **_: Any) -> Measurement:
        value = fn()
        assert isinstance(value, float)
        return _measurement(value, unit=self.unit)


class BareNumberTimer:
    """A stand-in timer answering as ``triton.testing.do_bench`` does: a bare float (ms),
    except for the configs whose call returns ``"measured"``."""

    def measure(self, fn: Callable[[], object], **_: Any) -> object:
        value = fn()
        return _measurement(1.0) if value == "measured" else 0.012


class DuckMeasurement:
    """Something with a median and seconds, but not a Measurement."""

    def __init__(self, median_us: float) -> None:
        self.median = median_us
        self.seconds = median_us * 1e-6


def _by_value(config: Mapping[str, Any]) -> Callable[[], float]:
    return lambda: float(config["a"])


# --- tune --------------------------------------------------------------------------------


def test_a_start_config_on_which_a_rule_raises_is_refused_before_anything_is_built() -> None:
    built: list[Mapping[str, Any]] = []

    def build(config: Mapping[str, Any]) -> Callable[[], float]:
        built.append(config)
        return _by_value(config)

    with pytest.raises(InputError) as error:
        tune(
            build,
            {"a": [0, 1, 2]},
            start={"a": 0},
            rules=[lambda c: 8 // c["a"] > 1],
            timer=ValueTimer(),
        )
    assert str(error.value).startswith(
        "start: Expected a start config the rules allow, got {'a': 0}, "
        "rules[0] raised ZeroDivisionError: "
    )
    assert built == []


def test_a_start_refused_by_one_rule_and_raising_in_another_names_both() -> None:
    with pytest.raises(InputError, match=r"refused by rules\[0\], rules\[1\] raised KeyError"):
        tune(
            _by_value,
            {"a": [1, 2]},
            start={"a": 1},
            rules=[lambda c: c["a"] > 1, lambda c: c["missing"] > 0],
            timer=ValueTimer(),
        )


def test_a_timer_answering_a_bare_number_fails_that_config_and_keeps_the_others() -> None:
    def build(config: Mapping[str, Any]) -> Callable[[], str]:
        return lambda: "measured" if config["a"] != 2 else "bare"

    result = tune(build, {"a": [1, 2, 3]}, timer=BareNumberTimer(), budget_s=30)
    assert [trial.error for trial in result.trials] == [
        None,
        "InputError: timer.measure: Expected a Measurement, got float",
        None,
    ]
    assert result.best_config == {"a": 1}
    assert result.stop_reason == "exhausted"


def test_a_stand_in_measurement_with_a_nan_median_never_sticks_as_the_best() -> None:
    # A NaN compares as never slower, so a NaN timed first stayed the best of every search.
    class DuckTimer:
        def measure(self, fn: Callable[[], object], **_: Any) -> object:
            value = fn()
            assert isinstance(value, float)
            return DuckMeasurement(math.nan if value == 1.0 else value)

    result = tune(_by_value, {"a": [1.0, 2.0, 3.0]}, timer=DuckTimer(), budget_s=30)
    assert result.best_config is None
    assert all(
        "Expected a Measurement, got DuckMeasurement" in (t.error or "") for t in result.trials
    )


def test_trial_medians_are_microseconds_when_the_timer_answers_in_milliseconds() -> None:
    result = tune(_by_value, {"a": [0.5, 0.25]}, timer=ValueTimer(unit="ms"), budget_s=30)
    assert [trial.median for trial in result.trials] == [pytest.approx(500.0), pytest.approx(250.0)]
    assert result.best_config == {"a": 0.25}


def test_a_build_returning_no_callable_is_named_as_the_build() -> None:
    def build(config: Mapping[str, Any]) -> Any:
        return None if config["a"] == 2 else _by_value(config)

    result = tune(build, {"a": [1, 2, 3]}, timer=ValueTimer(), budget_s=30)
    assert result.trials[1].error == "InputError: build(config): Expected a callable, got NoneType"
    assert [trial.median for trial in result.trials] == [1.0, None, 3.0]


# --- run_trials --------------------------------------------------------------------------


def test_a_trial_timer_answering_a_bare_number_records_the_point_as_failed() -> None:
    # The float was kept as the measurement, and the row failed later, far from its cause.
    [result] = run_trials(
        lambda point: lambda: "bare", points=[POINT], timer=BareNumberTimer(), impl="k"
    )
    assert result.measurement is None
    assert result.error == "InputError: timer.measure: Expected a Measurement, got float"
    with pytest.raises(InputError, match="Expected a measured trial, got a failed one"):
        result.result_row()


def test_a_make_returning_no_callable_is_named_as_make() -> None:
    [result] = run_trials(lambda point: None, points=[POINT], timer=ValueTimer(), impl="k")
    assert result.error == "InputError: make(point): Expected a callable, got NoneType"


def test_a_trial_check_that_cannot_be_called_is_not_a_wrong_result() -> None:
    # It read "incorrect: TypeError: 'int' object is not callable" at every point, as if
    # the kernel were wrong.
    def make(point: TrialPoint) -> TrialCall:
        return TrialCall(fn=lambda: 1.0, check=5)  # type: ignore[arg-type]

    [result] = run_trials(make, points=[POINT], timer=ValueTimer(), impl="k")
    assert result.error == "InputError: check: Expected a callable, got int"


def test_a_trial_call_refuses_what_cannot_be_called_when_it_is_made() -> None:
    with pytest.raises(InputError, match="fn: Expected a callable, got NoneType"):
        TrialCall(fn=None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="check: Expected a callable, got str"):
        TrialCall(fn=lambda: None, check="allclose")  # type: ignore[arg-type]
    assert TrialCall(fn=lambda: None, check=None).check is None


def test_the_explosion_warning_claims_no_gain_over_a_start_that_was_never_timed() -> None:
    # It read "+0.0% over the start config" for a start that failed to build, whatever
    # the configs after it gained.
    def build(config: Mapping[str, Any]) -> Callable[[], float]:
        if config["a"] == 0:
            raise RuntimeError("the start config does not compile")
        return lambda: 1000.0 / config["a"]

    with pytest.warns(AutotuneExplosionWarning) as caught:
        result = tune(
            build,
            {"a": list(range(0, 12))},
            start={"a": 0},
            sane_size=5,
            patience=100,
            timer=ValueTimer(),
            budget_s=30,
        )
    assert result.start is None and result.best_config == {"a": 11}
    tried = [str(w.message) for w in caught if "configs tried" in str(w.message)]
    assert tried == [
        "autotune-explosion: 12 configs tried for no gain known: the start config was never "
        "timed (sane size 5)"
    ]
