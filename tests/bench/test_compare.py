"""A/B verdicts: the pure statistic on synthetic samples, then interleaved runs of busy loops."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelopt._errors import InputError
from kernelopt.bench import Comparison, Timer, Verdict, compare, judge

RNG = np.random.default_rng(1234)


def noisy(center: float, spread: float, n: int = 200) -> list[float]:
    """Log-normal timing samples around ``center`` with relative ``spread``."""
    return list(center * RNG.lognormal(0.0, spread, n))


def test_clear_win_is_fast_with_ratio_and_interval() -> None:
    result = judge(noisy(100, 0.01), noisy(60, 0.01), baseline_again=noisy(100, 0.01))
    assert result.verdict is Verdict.FAST
    assert result.ratio == pytest.approx(0.6, rel=0.01)
    assert result.ratio_low <= result.ratio <= result.ratio_high
    assert result.speedup == pytest.approx(1 / result.ratio)
    assert result.summary().startswith(f"FAST {result.ratio:.3f}x [")


def test_clear_loss_is_slow() -> None:
    result = judge(noisy(100, 0.01), noisy(130, 0.01), baseline_again=noisy(100, 0.01))
    assert result.verdict is Verdict.SLOW


def test_identical_quiet_versions_are_same() -> None:
    result = judge(noisy(100, 0.002), noisy(100, 0.002), baseline_again=noisy(100, 0.002))
    assert result.verdict is Verdict.SAME
    assert result.threshold == pytest.approx(0.01)  # min_effect dominates quiet runs


def test_a_gain_inside_the_same_version_spread_is_never_a_win() -> None:
    # A drifts 3 % between its own two timings; a candidate 2 % faster is within that.
    baseline = noisy(100, 0.002)
    again = noisy(103, 0.002)
    candidate = noisy(98, 0.002)
    result = judge(baseline, candidate, baseline_again=again, min_effect=0.0)
    assert result.noise > 0.02
    assert result.verdict is not Verdict.FAST
    # the same 2 % with a steady baseline is a real win
    steady = judge(baseline, candidate, baseline_again=noisy(100, 0.002), min_effect=0.0)
    assert steady.verdict is Verdict.FAST


def test_min_effect_keeps_tiny_real_differences_from_counting() -> None:
    result = judge(noisy(100, 0.0005), noisy(99.5, 0.0005), baseline_again=noisy(100, 0.0005))
    assert result.verdict is Verdict.SAME
    sharp = judge(
        noisy(100, 0.0005), noisy(99.5, 0.0005), baseline_again=noisy(100, 0.0005), min_effect=0.0
    )
    assert sharp.verdict is Verdict.FAST


def test_wide_noise_is_unclear_not_a_verdict() -> None:
    # 30 % noise: a 5 % difference can be neither confirmed nor ruled out
    result = judge(noisy(100, 0.3, 20), noisy(95, 0.3, 20), baseline_again=noisy(100, 0.3, 20))
    assert result.noise > 0.05
    assert result.verdict is Verdict.UNCLEAR


def test_without_a_second_baseline_the_noise_comes_from_split_halves() -> None:
    result = judge(noisy(100, 0.01), noisy(50, 0.01))
    assert result.verdict is Verdict.FAST and result.noise > 0


def test_judge_is_deterministic_for_a_seed() -> None:
    a, b = noisy(100, 0.05, 40), noisy(97, 0.05, 40)
    assert judge(a, b, seed=3) == judge(a, b, seed=3)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1.0], [1.0, 2.0], "at least 4 paired samples"),
        ([1.0, 0.0], [1.0, 2.0], "finite positive samples"),
        ([1.0, float("nan")], [1.0, 2.0], "finite positive samples"),
        (None, [1.0, 2.0], "Expected a sequence of samples"),
        ((x for x in [1.0, 2.0]), [1.0, 2.0], "Expected a sequence of samples"),
        ("12", [1.0, 2.0], "Expected a sequence of samples"),
        (["1", "2"], [1.0, 2.0], "numeric samples"),
    ],
)
def test_bad_samples_are_refused(a: list[float], b: list[float], message: str) -> None:
    with pytest.raises(InputError, match=message):
        judge(a, b)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_effect": float("nan")}, "min_effect: Expected a finite number"),
        ({"max_noise": -1.0}, "max_noise: Expected max_noise >= 0"),
        ({"resamples": 0}, "resamples: Expected resamples as an int >= 1"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(InputError, match=message):
        judge([1.0, 1.1, 1.2], [1.0, 1.1, 1.2], **kwargs)  # type: ignore[arg-type]


def spin(us: float) -> None:
    end = time.perf_counter_ns() + int(us * 1000)
    while time.perf_counter_ns() < end:
        pass


CPU = Timer(backend="cpu-perf-counter", warmup_ms=1.0)


def test_interleaved_busy_loops_half_the_length_are_fast() -> None:
    result = compare(lambda: spin(200), lambda: spin(100), timer=CPU, max_time_ms=2000)
    assert isinstance(result, Comparison)
    assert result.verdict is Verdict.FAST
    assert result.ratio == pytest.approx(0.5, abs=0.05)
    assert result.baseline is not None and result.candidate is not None
    assert result.baseline_again is not None  # baseline timed twice per round
    assert result.baseline.n == result.baseline_again.n == result.candidate.n
    assert result.pairs >= 20


def test_interleaved_identical_loops_are_never_a_win_or_a_loss() -> None:
    result = compare(lambda: spin(100), lambda: spin(100), timer=CPU, max_time_ms=2000)
    assert result.verdict in (Verdict.SAME, Verdict.UNCLEAR)


def test_compare_passes_max_noise_to_the_verdict() -> None:
    # Identical loops are SAME under the default noise bound; with a bound no run can meet,
    # SAME cannot be declared and the verdict is UNCLEAR.
    strict = compare(
        lambda: spin(100), lambda: spin(100), timer=CPU, max_time_ms=300, max_noise=1e-9
    )
    assert strict.verdict is Verdict.UNCLEAR


def test_compare_checks_pair_bounds() -> None:
    with pytest.raises(InputError, match="min_pairs"):
        compare(lambda: None, lambda: None, timer=CPU, min_pairs=1)


@given(
    st.lists(st.floats(min_value=1.0, max_value=2.0), min_size=6, max_size=40),
    st.floats(min_value=0.5, max_value=1.5),
    st.integers(min_value=0, max_value=2**16),
)
@settings(max_examples=60, deadline=None)
def test_a_win_always_exceeds_the_same_version_spread(
    base: list[float], scale: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    again = list(np.asarray(base) * rng.lognormal(0.0, 0.05, len(base)))
    candidate = list(np.asarray(base) * scale * rng.lognormal(0.0, 0.05, len(base)))
    result = judge(base, candidate, baseline_again=again, resamples=300, min_effect=0.0)
    if result.verdict is Verdict.FAST:
        assert result.ratio_high < 1.0 - result.noise
    if result.verdict is Verdict.SLOW:
        assert result.ratio_low > 1.0 + result.noise
    if result.verdict is Verdict.SAME:
        assert result.noise <= 0.05


def test_the_bootstrap_of_many_samples_stays_small_in_memory() -> None:
    import tracemalloc

    # Every resample of every pair at once held resamples x n indices and two gathered
    # copies: 500 x 20 000 took 230 MiB; 10^6 samples at the default 2000 resamples, 48 GB.
    many = list(100 * RNG.lognormal(0.0, 0.01, 20_000))
    other = list(90 * RNG.lognormal(0.0, 0.01, 20_000))
    tracemalloc.start()
    try:
        result = judge(many, other, resamples=500)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.verdict is Verdict.FAST
    assert peak < 48 * 2**20, f"{peak / 2**20:.0f} MiB"


def test_the_bootstrap_gives_the_intervals_it_always_gave() -> None:
    # Values from the one-block bootstrap, before it was drawn in blocks: the random stream
    # is consumed in the same order, so a seed keeps its verdict and its interval.
    rng = np.random.default_rng(7)
    a, b, a2 = (list(c * rng.lognormal(0, 0.02, 300)) for c in (100, 97, 100))
    result = judge(a, b, baseline_again=a2, seed=5)
    assert (result.ratio_low, result.ratio_high, result.noise) == (
        0.9662534163993284,
        0.9718272926345957,
        0.003395894304371705,
    )
    result = judge(a, b, seed=5, resamples=3000)
    assert (result.ratio_low, result.ratio_high, result.noise) == (
        0.9662500193944743,
        0.9718121263876369,
        0.003943895701132738,
    )


def test_numpy_scalars_are_samples_and_a_bad_one_is_named() -> None:
    # float32 samples (a list of a float32 array) were refused as "got another type".
    base = [np.float32(v) for v in [100, 101, 99, 100, 102, 98] * 5]
    cand = [np.float32(v) for v in [80, 81, 79, 80, 82, 78] * 5]
    assert judge(base, cand).verdict is Verdict.FAST
    with pytest.raises(InputError, match=r"^candidate: Expected numeric samples, got '3'$"):
        judge([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, "3", 4.0])  # type: ignore[list-item]
    with pytest.raises(InputError, match=r"^baseline: Expected finite positive samples, got 0.0$"):
        judge([1.0, 0.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        # "5" raised "TypeError: '<' not supported between instances of 'str' and 'int'";
        # 20.5 pairs and a NaN time cap were taken.
        ({"min_pairs": "5"}, r"^min_pairs: Expected an int >= 2, got '5'$"),
        ({"max_pairs": 20.5}, r"^max_pairs: Expected an int >= min_pairs \(20\), got 20.5$"),
        ({"max_time_ms": float("nan")}, r"^max_time_ms: Expected a finite number > 0, got nan$"),
    ],
)
def test_compare_refuses_pair_bounds_and_caps_of_another_kind(
    kwargs: dict[str, object], message: str
) -> None:
    calls: list[int] = []
    with pytest.raises(InputError, match=message):
        compare(lambda: calls.append(1), lambda: calls.append(2), timer=CPU, **kwargs)  # type: ignore[arg-type]
    assert calls == []
