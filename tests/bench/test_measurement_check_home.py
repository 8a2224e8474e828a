"""The check of what a timer's ``measure`` returns lives beside the check of the timer
itself, in ``kernelopt.bench.timer``, and the trial runner and the tuner both use that
one: a bare number is refused in the same words by each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import kernelopt.bench.timer as timer_module
from kernelopt import InputError
from kernelopt.bench import Measurement, TrialPoint, run_trials, tune
from kernelopt.bench.timer import require_measurement, require_timer

BARE = "timer.measure: Expected a Measurement, got float"


class BareNumberTimer:
    """A stand-in timer answering milliseconds as a float, as ``do_bench`` does."""

    def measure(self, fn: Callable[[], object], **_: Any) -> float:
        fn()
        return 0.5


def test_require_measurement_sits_beside_require_timer() -> None:
    assert require_measurement.__module__ == require_timer.__module__ == timer_module.__name__


@pytest.mark.parametrize(("value", "got"), [(0.5, "float"), (None, "NoneType"), ("1 ms", "str")])
def test_anything_but_a_measurement_is_refused(value: object, got: str) -> None:
    with pytest.raises(InputError) as caught:
        require_measurement(value)
    assert str(caught.value) == f"timer.measure: Expected a Measurement, got {got}"


def test_a_measurement_is_returned_as_it_is() -> None:
    measured = Measurement(samples=[1.0], backend="cpu-perf-counter")
    assert require_measurement(measured) is measured


def test_the_runner_and_the_tuner_refuse_in_the_same_words() -> None:
    [trial] = run_trials(
        lambda point: lambda: None,
        points=[TrialPoint(b=2, s=1, t=8)],
        timer=BareNumberTimer(),
        impl="k",
    )
    tuned = tune(lambda config: lambda: None, {"a": [1]}, timer=BareNumberTimer(), budget_s=30)
    assert trial.error == tuned.trials[0].error == f"InputError: {BARE}"


def test_the_runner_and_the_tuner_call_the_timer_module_s_check() -> None:
    # Both modules take the check from kernelopt.bench.timer, so one definition decides.
    import kernelopt.bench.trials as trials_module
    import kernelopt.bench.tuning as tuning_module

    assert trials_module.require_measurement is timer_module.require_measurement
    assert tuning_module.require_measurement is timer_module.require_measurement
