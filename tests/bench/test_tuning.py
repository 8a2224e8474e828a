"""Budgeted tuning: pruning, early stop, budget, and the autotune-explosion warning."""

from __future__ import annotations

import math
import re
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import AutotuneExplosionWarning, Measurement, Timer, tune
from kernelopt.bench.tuning import TuningInterrupted, iter_space, space_size

CPU = Timer(backend="cpu-perf-counter", warmup_ms=0.5, max_time_ms=3.0, min_samples=3)


def spin(us: float) -> None:
    end = time.perf_counter_ns() + int(us * 1000)
    while time.perf_counter_ns() < end:
        pass


def kernel(config: Mapping[str, Any]) -> Callable[[], None]:
    """A fake kernel whose time is least at BLOCK=64, num_warps=4."""
    cost = 40 + abs(config["BLOCK"] - 64) + 10 * abs(config["num_warps"] - 4)
    return lambda: spin(cost)


SPACE = {"BLOCK": [16, 32, 64, 128], "num_warps": [2, 4, 8]}


def test_space_order_and_size() -> None:
    assert space_size(SPACE) == 12
    given = list(iter_space(SPACE))
    assert given[0] == {"BLOCK": 16, "num_warps": 2} and given[1] == {"BLOCK": 16, "num_warps": 4}
    shuffled = list(iter_space(SPACE, order="random", seed=1))
    assert sorted(map(str, shuffled)) == sorted(map(str, given)) and shuffled != given
    assert shuffled == list(iter_space(SPACE, order="random", seed=1))
    with pytest.raises(InputError, match="order"):
        list(iter_space(SPACE, order="sideways"))


def test_finds_the_best_config_and_counts_pruned() -> None:
    result = tune(
        kernel,
        SPACE,
        start={"BLOCK": 32, "num_warps": 8},
        rules=[lambda c: c["BLOCK"] * c["num_warps"] <= 256],
        timer=CPU,
        patience=100,
    )
    assert result.best_config == {"BLOCK": 64, "num_warps": 4}
    assert result.trials[0].config == {"BLOCK": 32, "num_warps": 8}  # the manual start first
    assert result.pruned == 3  # (64, 8), (128, 4) and (128, 8)
    assert result.evaluated == 9 and result.stop_reason == "exhausted"
    assert result.gain_over_start > 0.5  # start costs 112 us, best 40 us
    assert result.metrics() == {"autotune_configs": 9.0}
    # The CPU timer's gain is the host clock's: said so, and nothing else is warned of.
    assert len(result.warnings) == 1 and "timed with the host clock" in result.warnings[0]


def test_patience_stops_a_search_that_stopped_gaining() -> None:
    slower = {"x": list(range(30))}  # each config 10 us slower than the one before
    result = tune(lambda c: lambda: spin(50 + 10 * c["x"]), slower, timer=CPU, patience=3)
    assert result.stop_reason == "patience" and result.evaluated == 4


def test_budget_stops_the_search() -> None:
    result = tune(kernel, SPACE, timer=CPU, budget_s=1e-9)
    assert result.stop_reason == "budget" and result.evaluated == 0 and result.best is None


def test_failing_configs_are_recorded_and_skipped() -> None:
    def build(config: Mapping[str, Any]) -> Callable[[], None]:
        if config["BLOCK"] == 128:
            raise RuntimeError("out of shared memory")
        return kernel(config)

    result = tune(build, SPACE, timer=CPU, patience=100)
    failed = [t for t in result.trials if t.error]
    assert len(failed) == 3 and failed[0].error == "RuntimeError: out of shared memory"
    assert result.best_config == {"BLOCK": 64, "num_warps": 4}


def test_a_huge_space_warns_by_the_anti_pattern_name() -> None:
    space = {f"k{i}": list(range(10)) for i in range(4)}  # the 10 000-config search
    with pytest.warns(AutotuneExplosionWarning, match="autotune-explosion: 10000 configs"):
        result = tune(kernel, space, timer=CPU, budget_s=1e-9)
    assert result.space_size == 10_000
    assert result.warnings[0].startswith("autotune-explosion")


def test_pruning_that_shrinks_the_space_silences_the_warning() -> None:
    space = {f"k{i}": list(range(10)) for i in range(4)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = tune(
            lambda c: lambda: None,
            space,
            rules=[lambda c: c["k0"] == c["k1"] == c["k2"] == 0],
            timer=CPU,
            sane_size=20,
            budget_s=1e-9,
        )
    assert result.warnings == ()


def test_many_configs_without_gain_warn_after_the_search() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = tune(
            lambda c: lambda: spin(30),
            {"x": list(range(8))},
            timer=CPU,
            sane_size=5,
            patience=100,
            min_gain=0.5,
        )
    messages = [str(w.message) for w in caught if w.category is AutotuneExplosionWarning]
    explosions = [text for text in result.warnings if text.startswith("autotune-explosion")]
    assert messages == explosions and len(messages) == 2
    assert messages[0].startswith("autotune-explosion: 8 configs survive pruning")
    assert re.match(
        r"autotune-explosion: 8 configs tried for \+\d+\.\d% over the start", messages[1]
    )
    assert result.evaluated == 8


def test_bad_arguments() -> None:
    with pytest.raises(InputError, match="non-empty list of values"):
        tune(kernel, {"BLOCK": []}, timer=CPU)
    with pytest.raises(InputError, match="start config with knobs"):
        tune(kernel, SPACE, start={"BLOCK": 64}, timer=CPU)


def test_a_start_config_that_fails_has_no_stand_in() -> None:
    def build(config: Mapping[str, Any]) -> Callable[[], None]:
        if config == {"BLOCK": 128, "num_warps": 8}:
            raise RuntimeError("out of shared memory")
        return kernel(config)

    result = tune(build, SPACE, start={"BLOCK": 128, "num_warps": 8}, timer=CPU, patience=100)
    assert result.start is None and result.gain_over_start == 0.0
    assert result.best_config == {"BLOCK": 64, "num_warps": 4}
    for budget in (float("nan"), 0.0, "1"):
        with pytest.raises(
            InputError, match=rf"^budget_s: Expected a finite budget_s > 0, got {budget!r}$"
        ):
            tune(kernel, SPACE, timer=CPU, budget_s=budget)  # type: ignore[arg-type]
    # Both were named together before: "got (20, 0)" did not say which was wrong.
    for patience in (0, 2.5, True):
        with pytest.raises(
            InputError, match=rf"^patience: Expected an int >= 1, got {patience!r}$"
        ):
            tune(kernel, SPACE, timer=CPU, patience=patience)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("space", "message"),
    [
        ({"BLOCK": "64"}, r"space\['BLOCK'\]: Expected a non-empty list of values, got '64'"),
        ({"BLOCK": {32, 64}}, r"space\['BLOCK'\]: Expected a non-empty list of values"),
        ({"BLOCK": []}, r"space\['BLOCK'\]: Expected a non-empty list of values, got \[\]"),
        (["BLOCK"], r"space: Expected a space \{knob: \[values\]\}, got list"),
        ({}, r"space: Expected a space \{knob: \[values\]\}, got \{\}"),
        ({3: [1]}, r"space: Expected knob names as str, got 3"),
    ],
)
def test_a_space_that_would_be_searched_as_something_else_is_refused(space, message) -> None:
    built: list[object] = []
    with pytest.raises(InputError, match=message):
        tune(lambda config: built.append(config) or (lambda: None), space)
    assert built == []


def test_a_space_may_hold_ranges_and_arrays() -> None:
    import numpy as np

    seen: list[dict[str, object]] = []
    tune(
        lambda config: seen.append(dict(config)) or (lambda: None),
        {"BLOCK": np.array([16, 32]), "warps": range(1, 3)},
        timer=CPU,
    )
    assert len(seen) == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_gain": -0.1}, r"Expected min_gain as a number in \[0, 1\), got -0.1"),
        ({"min_gain": float("nan")}, r"Expected min_gain as a number in \[0, 1\), got nan"),
        ({"min_gain": 1.0}, r"Expected min_gain as a number in \[0, 1\), got 1.0"),
        ({"min_gain": True}, r"Expected min_gain as a number in \[0, 1\), got True"),
        ({"sane_size": 0}, r"Expected sane_size as an int >= 1, got 0"),
        ({"sane_size": 2.5}, r"Expected sane_size as an int >= 1, got 2.5"),
    ],
)
def test_search_thresholds_out_of_range_are_refused(kwargs, message) -> None:
    with pytest.raises(InputError, match=message):
        tune(lambda config: lambda: None, {"BLOCK": [1]}, **kwargs)


class FakeTimer:
    """Times nothing: the median is the one the built call carries, and each timing
    advances a fake clock (``cost_s``) that ``tune`` can read as its wall clock."""

    def __init__(self, cost_s: float = 0.0) -> None:
        self.cost_s = cost_s
        self.now = 0.0
        self.timed: list[str] = []

    def clock(self) -> float:
        return self.now

    def measure(self, fn: Callable[[], object], *, label: str = "", **_: Any) -> Measurement:
        fn()
        self.now += self.cost_s
        self.timed.append(label)
        return Measurement(samples=[fn.median], backend="cpu-perf-counter")  # type: ignore[attr-defined]


def fake_build(
    medians: Mapping[tuple[Any, ...], float],
) -> Callable[[Config], Callable[[], object]]:
    def build(config: Config) -> Callable[[], object]:
        def call() -> tuple[Any, ...]:
            return tuple(config.values())

        call.median = medians[tuple(config.values())]  # type: ignore[attr-defined]
        return call

    return build


Config = dict[str, Any]
GRID = {"BLOCK": [16, 32, 64], "num_warps": [4, 8]}
TIMES = {(16, 4): 90.0, (16, 8): 80.0, (32, 4): 50.0, (32, 8): 70.0, (64, 4): 50.0, (64, 8): 60.0}


def test_an_incorrect_config_is_never_the_best() -> None:
    timer = FakeTimer()
    # (32, 4) and (64, 4) are the fastest, and wrong; (64, 8) is the fastest right one.
    wrong = {(32, 4), (64, 4)}

    def check(config: Config, result: object) -> bool:
        assert result == tuple(config.values())  # the check sees what one call returned
        return result not in wrong

    result = tune(fake_build(TIMES), GRID, check=check, timer=timer, patience=100)  # type: ignore[arg-type]
    assert result.best_config == {"BLOCK": 64, "num_warps": 8}
    incorrect = [t for t in result.trials if t.error]
    assert [tuple(t.config.values()) for t in incorrect] == [(32, 4), (64, 4)]
    said = f"incorrect: check check (test_tuning.py:{check.__code__.co_firstlineno}) returned False"
    assert all(t.median is None and t.error == said for t in incorrect)
    assert len(timer.timed) == 4  # an incorrect config is never timed


def test_a_check_that_raises_marks_the_config_incorrect() -> None:
    def check(config: Config, result: object) -> None:  # torch.testing.assert_close style
        if config["BLOCK"] == 32:
            raise AssertionError("Tensor-likes are not close!\nMismatched elements: 3 / 8")

    result = tune(fake_build(TIMES), GRID, check=check, timer=FakeTimer(), patience=100)  # type: ignore[arg-type]
    assert result.best_config == {"BLOCK": 64, "num_warps": 4}
    errors = {tuple(t.config.values()): t.error for t in result.trials if t.error}
    # The whole message, its lines joined: the mismatch count is what a user needs.
    whole = "incorrect: AssertionError: Tensor-likes are not close!; Mismatched elements: 3 / 8"
    assert errors == {(32, 4): whole, (32, 8): whole}


def test_an_incorrect_start_config_has_no_stand_in() -> None:
    result = tune(
        fake_build(TIMES),
        GRID,
        start={"BLOCK": 32, "num_warps": 4},
        check=lambda config, _: config["BLOCK"] != 32 or config["num_warps"] != 4,
        timer=FakeTimer(),  # type: ignore[arg-type]
        patience=100,
    )
    assert re.fullmatch(
        r"incorrect: check <lambda> \(test_tuning\.py:\d+\) returned False",
        result.trials[0].error or "",
    )
    assert result.start is None and result.best_config == {"BLOCK": 64, "num_warps": 4}


def test_ties_go_to_the_config_visited_first() -> None:
    # (32, 4) and (64, 4) tie at 50 us: the first one visited wins, in either order.
    given = tune(fake_build(TIMES), GRID, timer=FakeTimer(), patience=100)  # type: ignore[arg-type]
    assert given.best_config == {"BLOCK": 32, "num_warps": 4}
    backwards = {"BLOCK": [64, 32, 16], "num_warps": [4, 8]}
    flipped = tune(fake_build(TIMES), backwards, timer=FakeTimer(), patience=100)  # type: ignore[arg-type]
    assert flipped.best_config == {"BLOCK": 64, "num_warps": 4}
    for seed in range(5):
        runs = [
            tune(fake_build(TIMES), GRID, order="random", seed=seed, timer=FakeTimer())  # type: ignore[arg-type]
            for _ in range(2)
        ]
        assert runs[0].best_config == runs[1].best_config
        assert [t.config for t in runs[0].trials] == [t.config for t in runs[1].trials]


def test_no_config_starts_once_the_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    timer = FakeTimer(cost_s=0.3)
    monkeypatch.setattr("kernelopt.bench.tuning.time.perf_counter", timer.clock)
    result = tune(fake_build(TIMES), GRID, budget_s=1.0, timer=timer, patience=100)  # type: ignore[arg-type]
    # Configs start at 0.0, 0.3, 0.6 and 0.9 s; the fifth would start at 1.2 s.
    assert result.stop_reason == "budget" and result.evaluated == 4 and len(timer.timed) == 4
    assert result.elapsed_s == pytest.approx(1.2)


def test_a_best_time_of_zero_is_an_infinite_gain_not_a_crash() -> None:
    # The host clock reads 0 us for a call shorter than its resolution.
    zero_times = {key: 0.0 if key == (64, 8) else value for key, value in TIMES.items()}
    result = tune(fake_build(zero_times), GRID, timer=FakeTimer(), patience=100)  # type: ignore[arg-type]
    assert result.best_config == {"BLOCK": 64, "num_warps": 8}
    assert result.gain_over_start == math.inf
    all_zero = dict.fromkeys(TIMES, 0.0)
    result = tune(fake_build(all_zero), GRID, timer=FakeTimer(), patience=100)  # type: ignore[arg-type]
    assert result.gain_over_start == 0.0 and result.best_config == {"BLOCK": 16, "num_warps": 4}


def test_the_budget_ends_a_search_whose_rules_prune_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 10^10 configs, none allowed: each rule call advances the clock, so only a budget
    # checked for pruned configs too ends the search (before, it walked all 10^10).
    clock = [0.0]

    def rule(_config: Mapping[str, Any]) -> bool:
        clock[0] += 0.01
        return False

    monkeypatch.setattr("kernelopt.bench.tuning.time.perf_counter", lambda: clock[0])
    space = {f"k{i}": list(range(10)) for i in range(10)}
    # sane_size above the space: no million-config counting pass before the search.
    result = tune(kernel, space, rules=[rule], budget_s=1.0, sane_size=10**11, timer=CPU)
    assert result.stop_reason == "budget" and result.evaluated == 0
    assert result.pruned == 100 and result.elapsed_s == pytest.approx(1.0)


def test_a_start_config_is_not_timed_again_when_the_space_holds_numpy_values() -> None:
    np = pytest.importorskip("numpy")
    timer = FakeTimer()
    grid = {"BLOCK": np.array([16, 32, 64]), "num_warps": np.array([4, 8])}
    result = tune(
        fake_build(TIMES),
        grid,
        start={"BLOCK": 32, "num_warps": 4},
        timer=timer,  # type: ignore[arg-type]
        patience=100,
    )
    assert result.evaluated == 6 and len(timer.timed) == 6
    assert [t.config for t in result.trials].count({"BLOCK": 32, "num_warps": 4}) == 1


@pytest.mark.parametrize("order", ["given", "random"])
def test_a_long_walk_through_pruned_configs_holds_no_memory_per_config(
    monkeypatch: pytest.MonkeyPatch, order: str
) -> None:
    # A set of every config visited grew by ~1.4 kB a config: 800 k pruned configs took
    # 1.1 GB in 5 s, so a 600 s budget ran the machine out of memory.
    import tracemalloc

    clock = [0.0]

    def rule(_config: Mapping[str, Any]) -> bool:
        clock[0] += 1e-5
        return False

    monkeypatch.setattr("kernelopt.bench.tuning.time.perf_counter", lambda: clock[0])
    space = {f"k{i}": list(range(10)) for i in range(10)}
    tracemalloc.start()
    try:
        result = tune(
            kernel, space, rules=[rule], budget_s=0.5, sane_size=10**11, order=order, timer=CPU
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.stop_reason == "budget" and result.pruned >= 49_000
    assert peak < 5_000_000, peak


def test_random_order_of_a_huge_space_visits_every_config_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("kernelopt.bench.tuning._COUNT_LIMIT", 10)  # 60 counts as huge
    space = {"a": [1, 2, 3, 4], "b": [5, 6, 7], "c": [8, 9, 10, 11, 12]}
    visited = [tuple(c.values()) for c in iter_space(space, order="random", seed=3)]
    given = [tuple(c.values()) for c in iter_space(space)]
    assert sorted(visited) == sorted(given) and visited != given
    assert visited == [tuple(c.values()) for c in iter_space(space, order="random", seed=3)]


def test_a_value_listed_twice_is_tried_once() -> None:
    timer = FakeTimer()
    grid = {"BLOCK": [16, 32, 16], "num_warps": [4, 8]}
    result = tune(fake_build(TIMES), grid, timer=timer, patience=100)  # type: ignore[arg-type]
    assert [tuple(t.config.values()) for t in result.trials] == [
        (16, 4),
        (16, 8),
        (32, 4),
        (32, 8),
    ]


def test_an_interrupt_keeps_the_configs_timed_before_it() -> None:
    # Ctrl-C in a long search lost every timing made, the best config with them.
    medians = {(16,): 50.0, (32,): 40.0, (64,): 45.0, (128,): 60.0}
    build = fake_build(medians)

    def stopping_build(config: Config) -> Callable[[], object]:
        if config["BLOCK"] == 64:
            raise KeyboardInterrupt
        return build(config)

    timer = FakeTimer()
    with pytest.raises(TuningInterrupted) as caught:
        tune(stopping_build, {"BLOCK": [16, 32, 64, 128]}, timer=timer, patience=100)  # type: ignore[arg-type]
    assert isinstance(caught.value, KeyboardInterrupt)  # still stops a script
    result = caught.value.result
    assert result.stop_reason == "interrupted"
    assert [trial.config for trial in result.trials] == [{"BLOCK": 16}, {"BLOCK": 32}]
    assert result.best_config == {"BLOCK": 32} and result.start is not None
