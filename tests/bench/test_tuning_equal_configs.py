"""Configs equal as values are one config: ``1`` and ``1.0`` are timed once, ``True`` is not
``1``, and the config shown is spelled as the user wrote it first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from kernelopt import InputError
from kernelopt.bench import Measurement, TrialPoint, trial_matrix, tune


class CountingTimer:
    """A stand-in timer: every call takes 1 µs, and each config built is counted."""

    def measure(self, fn: Callable[[], object], **_: Any) -> Measurement:
        fn()
        return Measurement(samples=[1.0] * 3, backend="cpu-perf-counter")


def _tried(space: dict[str, list[Any]], **options: Any) -> tuple[list[dict[str, Any]], int]:
    """The configs ``tune`` built, in order, and the size it reports for ``space``."""
    built: list[dict[str, Any]] = []

    def build(config: dict[str, Any]) -> Callable[[], None]:
        built.append(dict(config))
        return lambda: None

    result = tune(build, space, timer=CountingTimer(), budget_s=30, **options)
    assert [trial.config for trial in result.trials] == built
    return built, result.space_size


def test_an_int_and_the_float_it_equals_are_one_config_spelled_as_written_first() -> None:
    built, size = _tried({"BLOCK_N": [64, 64.0, 32], "num_warps": [4.0, 4]})
    assert built == [{"BLOCK_N": 64, "num_warps": 4.0}, {"BLOCK_N": 32, "num_warps": 4.0}]
    assert size == 2
    # The spelling is the user's, type included: 4.0 stays a float.
    assert [type(config["num_warps"]) for config in built] == [float, float]


def test_numpy_scalars_equal_to_a_value_are_that_value() -> None:
    built, _ = _tried({"BLOCK_N": [64, np.float64(64.0), np.int32(64), 128.0]})
    assert built == [{"BLOCK_N": 64}, {"BLOCK_N": 128.0}]


def test_a_bool_is_not_the_int_it_equals() -> None:
    # A constexpr flag is not a block size of 1: True, 1 and 1.0 are two configs, not three
    # and not one.
    built, size = _tried({"EVEN_K": [True, 1, 1.0, False, 0, 0.0, -0.0]})
    assert built == [{"EVEN_K": True}, {"EVEN_K": 1}, {"EVEN_K": False}, {"EVEN_K": 0}]
    assert size == 4


def test_a_start_spelled_as_a_float_is_the_int_config_of_the_space() -> None:
    # The start was timed, then met again in the space as 64 and timed a second time.
    built, _ = _tried({"BLOCK_N": [32, 64, 128]}, start={"BLOCK_N": 64.0})
    assert built == [{"BLOCK_N": 64.0}, {"BLOCK_N": 32}, {"BLOCK_N": 128}]


def test_tuples_of_equal_numbers_are_one_value_and_a_list_is_not_a_tuple() -> None:
    built, _ = _tried({"tile": [(64, 32), (64.0, 32), [64, 32]]})
    assert built == [{"tile": (64, 32)}, {"tile": [64, 32]}]


def test_values_that_only_print_alike_stay_apart() -> None:
    # "1" is a str knob value, not the number 1; 0.1 + 0.2 is not 0.3.
    built, _ = _tried({"mode": [1, "1", 0.1 + 0.2, 0.3]})
    assert built == [{"mode": 1}, {"mode": "1"}, {"mode": 0.1 + 0.2}, {"mode": 0.3}]


def test_the_trial_matrix_never_holds_a_point_twice_as_an_int_and_a_float() -> None:
    # Points are told apart by their spelling: a float axis value would spell "h=16.0"
    # beside "h=16". Axis values are ints, so 16.0 (and a bool) are refused by name.
    with pytest.raises(InputError, match=r"Expected an int, got 16\.0"):
        trial_matrix(axes={"h": (16, 16.0)})
    with pytest.raises(InputError, match="Expected an int, got True"):
        trial_matrix(axes={"h": (1, True)})
    with pytest.raises(InputError, match=r"Expected an integer >= 1, got 32\.0"):
        trial_matrix(extra_points=[TrialPoint(b=32.0, s=1, t=4096)])  # type: ignore[arg-type]
