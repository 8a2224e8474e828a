"""judge pairs samples by index: lists of unequal length are refused, not cut short.

Judging the first n samples of each dropped the rest without a word while the
comparison reported n pairs.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernelopt._errors import InputError
from kernelopt.bench import judge

RNG = np.random.default_rng(99)


def _samples(center: float, n: int) -> list[float]:
    return list(center * RNG.lognormal(0.0, 0.01, n))


def test_a_candidate_shorter_than_the_baseline_is_refused() -> None:
    with pytest.raises(
        InputError, match=r"^Expected two sample lists of equal length, got 12 and 9$"
    ):
        judge(_samples(100, 12), _samples(60, 9))


def test_a_baseline_shorter_than_the_candidate_is_refused() -> None:
    # The samples left over were those of a slower candidate: judged on the first 8, a
    # candidate that slowed down in its last rounds read as FAST.
    baseline = _samples(100, 8)
    candidate = _samples(60, 8) + _samples(200, 8)
    with pytest.raises(
        InputError, match=r"^Expected two sample lists of equal length, got 8 and 16$"
    ):
        judge(baseline, candidate)


def test_a_second_baseline_of_another_length_is_refused() -> None:
    with pytest.raises(
        InputError, match=r"^Expected three sample lists of equal length, got 12, 12 and 9$"
    ):
        judge(_samples(100, 12), _samples(60, 12), baseline_again=_samples(100, 9))


def test_lists_of_equal_length_are_judged_on_every_pair() -> None:
    result = judge(_samples(100, 12), _samples(60, 12), baseline_again=_samples(100, 12))
    assert result.pairs == 12
    assert result.ratio == pytest.approx(0.6, rel=0.05)
