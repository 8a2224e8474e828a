"""judge counts each bootstrap draw once for both arrays of a pair, and draws its indices as
int32: the verdicts and numbers are, bit for bit, those of the rank counting it replaced
(a copy of which, one gather and one count per draw and array, is kept below as the
reference), on random samples of every shape timings take, ties and tiny lists included.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kernelopt._errors import InputError
from kernelopt.bench import judge, read_rows

# kernelopt.bench's ``compare`` (the function) hides the module of the same name.
compare_module = sys.modules["kernelopt.bench.compare"]

# --- the reference: judge's bootstrap as it was, each array's bins counted on their own --

_BLOCK = 1 << 20
_SPREADS = 6.0
_ONE_BY_ONE = 64


class _ReferenceMiddles:
    """The medians of resamples of one array: a gather and a count per draw."""

    def __init__(self, values: Any) -> None:
        n = len(values)
        order = np.argsort(values, kind="stable")
        self.values = values
        self.ordered = values[order]
        self.low_rank, self.high_rank = (n - 1) // 2, n // 2
        reach = int(_SPREADS * math.sqrt(n)) + 1
        self.first = max(0, self.low_rank - reach)
        last = min(n - 1, self.high_rank + reach)
        self.bins = last - self.first + 3
        rank = np.empty(n, dtype=np.intp)
        rank[order] = np.arange(n, dtype=np.intp)
        self.bin_of = np.minimum(np.maximum(rank - self.first + 1, 0), self.bins - 1)

    def of(self, index: Any) -> Any:
        rows = index.shape[0]
        if rows <= _ONE_BY_ONE:
            counts = np.stack([np.bincount(self.bin_of[row], minlength=self.bins) for row in index])
        else:
            bins = self.bin_of[index]
            bins += (np.arange(rows, dtype=np.intp) * self.bins)[:, None]
            counts = np.bincount(bins.ravel(), minlength=rows * self.bins)
        at_or_below = np.cumsum(counts.reshape(rows, self.bins), axis=1)
        low_bin = np.count_nonzero(at_or_below <= self.low_rank, axis=1)
        high_bin = np.count_nonzero(at_or_below <= self.high_rank, axis=1)
        outside = (low_bin == 0) | (high_bin == self.bins - 1)
        low = self.ordered[np.maximum(self.first - 1 + low_bin, 0)]
        if self.low_rank == self.high_rank:
            middles = low
        else:
            high = self.ordered[np.minimum(self.first - 1 + high_bin, len(self.values) - 1)]
            middles = (low + high) / 2.0
        if outside.any():
            middles[outside] = np.median(self.values[index[outside]], axis=1)
        return middles


def _reference_ratios(rng: Any, top: Any, bottom: Any, resamples: int) -> Any:
    n = len(top)
    rows = max(1, _BLOCK // n)
    top_middles, bottom_middles = _ReferenceMiddles(top), _ReferenceMiddles(bottom)
    parts = []
    for start in range(0, resamples, rows):
        index = rng.integers(0, n, size=(min(rows, resamples - start), n))
        parts.append(top_middles.of(index) / bottom_middles.of(index))
    return np.concatenate(parts)


Numbers = tuple[str, float, float, float, float, float, int]


def _reference(
    baseline: Any,
    candidate: Any,
    *,
    baseline_again: Any = None,
    min_effect: float = 0.01,
    max_noise: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Numbers:
    """(verdict, ratio, ratio_low, ratio_high, noise, threshold, pairs) as judge gave them."""
    base = np.asarray(baseline, dtype=float)
    b = np.asarray(candidate, dtype=float)
    n = len(base)
    if baseline_again is not None:
        a, a2 = base, np.asarray(baseline_again, dtype=float)
    else:
        half = n // 2
        a, a2 = base[0 : 2 * half : 2], base[1 : 2 * half : 2]
    rng = np.random.default_rng(seed)
    tail = (1.0 - confidence) / 2.0
    ratios = _reference_ratios(rng, b, base, resamples)
    low, high = (float(v) for v in np.quantile(ratios, [tail, 1.0 - tail]))
    aa = _reference_ratios(rng, a2, a, resamples)
    aa_low, aa_high = (float(v) for v in np.quantile(aa, [tail, 1.0 - tail]))
    noise = max(abs(aa_low - 1.0), abs(aa_high - 1.0))
    threshold = max(noise, min_effect)
    too_few = math.log(2.0) - n * math.log(6.0) > math.log(1.0 - confidence)
    if baseline_again is not None and too_few:
        verdict = "UNCLEAR"
    elif high < 1.0 - threshold:
        verdict = "FAST"
    elif low > 1.0 + threshold:
        verdict = "SLOW"
    elif low >= 1.0 - threshold and high <= 1.0 + threshold and noise <= max_noise:
        verdict = "SAME"
    else:
        verdict = "UNCLEAR"
    ratio = float(np.median(b) / np.median(base))
    return verdict, ratio, low, high, noise, threshold, n


def _numbers(result: Any) -> Numbers:
    return (
        result.verdict.value,
        result.ratio,
        result.ratio_low,
        result.ratio_high,
        result.noise,
        result.threshold,
        result.pairs,
    )


def _samples(rng: np.random.Generator, n: int) -> tuple[Any, Any, Any]:
    """Three sample arrays of one of the shapes timings take: log-normal, with outliers,
    on a coarse clock (many ties), or a few distinct values only (ties everywhere)."""
    shape = int(rng.integers(0, 4))
    spread = float(rng.choice([0.001, 0.01, 0.05, 0.3]))
    scale = float(rng.uniform(0.8, 1.25))
    arrays = [100.0 * rng.lognormal(0.0, spread, n) for _ in range(3)]
    arrays[1] = arrays[1] * scale
    if shape == 1:  # a few calls that met an interrupt
        for values in arrays:
            values[rng.random(n) < 0.05] *= 10.0
    if shape == 2:  # a clock ticking in whole microseconds
        arrays = [np.maximum(np.round(values), 1.0) for values in arrays]
    if shape == 3:  # a clock so coarse that a handful of values make every sample
        arrays = [np.maximum(np.round(values / 10.0), 1.0) * 10.0 for values in arrays]
    baseline, candidate, again = arrays
    return baseline, candidate, again


# --- the same numbers ------------------------------------------------------------------


def test_judge_gives_the_numbers_of_the_counting_it_replaced_on_random_samples() -> None:
    rng = np.random.default_rng(20261207)
    sizes = [2, 3, 4, 5, 6, 7, 8, 9, 16, 33, 64, 127, 250, 1000, 1025, 2000, 2500, 4096, 9999]
    for trial in range(400):
        n = int(rng.choice(sizes))
        baseline, candidate, again = _samples(rng, n)
        options: dict[str, Any] = {
            "resamples": int(rng.choice([1, 2, 7, 64, 65, 300])),
            "seed": int(rng.integers(0, 2**31)),
            "confidence": float(rng.choice([0.5, 0.9, 0.95, 0.99])),
            "min_effect": float(rng.choice([0.0, 0.01, 0.05])),
            "max_noise": float(rng.choice([0.01, 0.05])),
        }
        second = again if n < 4 or rng.random() < 0.5 else None
        got = _numbers(judge(baseline, candidate, baseline_again=second, **options))
        assert got == _reference(baseline, candidate, baseline_again=second, **options), (
            trial,
            n,
            options,
        )


@pytest.mark.parametrize("n", [16_384, 100_000])
def test_long_sample_lists_give_the_same_numbers(n: int) -> None:
    # From 16 384 samples a block holds at most 64 resamples, and each is counted on its
    # own: the other way of counting than the short lists above take.
    rng = np.random.default_rng(n)
    baseline, candidate, again = _samples(rng, n)
    for second in (again, None):
        got = _numbers(judge(baseline, candidate, baseline_again=second, resamples=40, seed=3))
        want = _reference(baseline, candidate, baseline_again=second, resamples=40, seed=3)
        assert got == want


def test_the_default_options_give_the_same_numbers() -> None:
    rng = np.random.default_rng(7)
    for n in (4, 5, 100, 3001):
        baseline, candidate, again = _samples(rng, n)
        assert _numbers(judge(baseline, candidate)) == _reference(baseline, candidate)
        got = _numbers(judge(baseline, candidate, baseline_again=again))
        assert got == _reference(baseline, candidate, baseline_again=again)


def test_samples_all_equal_give_the_same_numbers() -> None:
    # Every rank ties: each resample's middle is the one value there is.
    for n in (2, 5, 64, 2000):
        same = [3.0] * n
        got = _numbers(judge(same, same, baseline_again=same, resamples=50))
        assert got == _reference(same, same, baseline_again=same, resamples=50)
        assert got[1:4] == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("n", [1, 2, 5, 6, 101, 5000])
def test_resamples_whose_middles_lie_far_off_center_are_still_their_medians(n: int) -> None:
    # Resamples of only the lowest or the highest samples of one array put its middle
    # outside the ranks counted one by one; a paired draw does so for one array and not
    # for the other.
    rng = np.random.default_rng(n)
    top = np.round(rng.lognormal(0.0, 0.2, n) * 50.0)
    bottom = rng.lognormal(0.0, 0.2, n) * 50.0
    order = np.argsort(top)
    index = np.stack(
        [
            np.full(n, order[0]),
            np.full(n, order[-1]),
            order[np.arange(n) // 2],
            order[n - 1 - np.arange(n) // 2],
            rng.integers(0, n, n),
        ]
    )
    top_middles = compare_module._Middles(top)
    bottom_middles = compare_module._Middles(bottom)
    top_counts, bottom_counts = compare_module._PairedCounts(top_middles, bottom_middles).counts(
        index
    )
    assert np.array_equal(top_middles.from_counts(top_counts, index), np.median(top[index], 1))
    assert np.array_equal(
        bottom_middles.from_counts(bottom_counts, index), np.median(bottom[index], 1)
    )


@pytest.mark.parametrize("rows", [1, 64, 65, 300])
def test_paired_counts_are_each_arrays_own_counts(rows: int) -> None:
    # Both ways of counting a block (a row at a time, or the block at once) give each
    # array the draws per bin its own gather and count gave.
    rng = np.random.default_rng(rows)
    n = 777
    top, bottom = np.round(rng.lognormal(0.0, 0.1, (2, n)) * 100.0)
    index = rng.integers(0, n, size=(rows, n), dtype=np.int32)
    top_middles = compare_module._Middles(top)
    bottom_middles = compare_module._Middles(bottom)
    top_counts, bottom_counts = compare_module._PairedCounts(top_middles, bottom_middles).counts(
        index
    )
    for middles, counts in ((top_middles, top_counts), (bottom_middles, bottom_counts)):
        own = [np.bincount(middles.bin_of[row], minlength=middles.bins) for row in index]
        assert np.array_equal(counts, np.stack(own))


def test_int32_draws_are_the_int64_draws() -> None:
    # judge draws its indices as int32; numpy takes any bound under 2**32 from the same
    # 32-bit stream whatever the type, so a seed keeps its interval. Checked over bounds
    # that reject many of the 32-bit values (2**31 + 1) and few, in consecutive blocks.
    for n in (2, 3, 1000, 65_537, 100_003, 2**31 - 1):
        as_int64, as_int32 = np.random.default_rng(n), np.random.default_rng(n)
        for rows in (1, 3, 1):
            want = as_int64.integers(0, n, size=(rows, 4099))
            got = as_int32.integers(0, n, size=(rows, 4099), dtype=compare_module._draw_dtype(n))
            assert got.dtype == np.int32
            assert np.array_equal(got, want)


# --- one count per draw ----------------------------------------------------------------


def test_each_draw_is_counted_once_for_both_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    # The baseline's and the candidate's bins come from one count of each draw's key: a
    # count per array and draw took twice the time (3.2 s for 100 000 samples a side).
    counted = []
    bincount = np.bincount

    def counting(values: Any, *args: Any, **kwargs: Any) -> Any:
        counted.append(np.size(values))
        return bincount(values, *args, **kwargs)

    monkeypatch.setattr(np, "bincount", counting)
    rng = np.random.default_rng(1)
    # From about 2 000 samples a side (with fewer, the keys are most of the samples, and
    # each array is counted on its own): a block of one resample and one of many.
    for n, resamples in ((20_000, 30), (3000, 700)):
        counted.clear()
        baseline, candidate, again = _samples(rng, n)
        judge(baseline, candidate, baseline_again=again, resamples=resamples)
        # Two bootstraps (candidate vs baseline, A vs A'), each of resamples x n draws.
        assert sum(counted) == 2 * resamples * n


# --- what judge refuses, as before -----------------------------------------------------


@pytest.mark.parametrize(
    ("baseline", "message"),
    [
        ([1.0, float("nan"), 2.0, 3.0], "baseline: Expected finite positive samples, got nan"),
        (np.array([1.0, 2.0, np.inf, 3.0]), "baseline: Expected finite positive samples, got inf"),
        ([1.0, 0.0, 2.0, 3.0], "baseline: Expected finite positive samples, got 0.0"),
        (
            [1.0],
            r"Expected at least 4 paired samples \(baseline and candidate; 2 with "
            r"baseline_again\) to estimate noise, got 1",
        ),
    ],
)
def test_what_is_no_sample_list_is_refused_as_before(baseline: Any, message: str) -> None:
    with pytest.raises(InputError, match=f"^{message}$"):
        judge(baseline, [1.0] * len(baseline))


def test_fewer_than_four_pairs_without_a_second_baseline_are_refused() -> None:
    with pytest.raises(InputError, match=r"^Expected at least 4 paired samples"):
        judge([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])


# --- the host benchmark ----------------------------------------------------------------

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _judge_host() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("judge_host", BENCHMARKS / "judge_host.py")
    assert spec is not None and spec.loader is not None
    if str(BENCHMARKS) not in sys.path:  # run as a file, the script finds _common beside it
        sys.path.append(str(BENCHMARKS))
    module = importlib.util.module_from_spec(spec)
    sys.modules["judge_host"] = module
    spec.loader.exec_module(module)
    return module


def test_the_host_benchmark_writes_typed_rows_to_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rows.jsonl"
    assert _judge_host().main(["--sizes", "40", "300", "--repeat", "2", "--out", str(out)]) == 0
    rows = read_rows(out)
    assert [(row.op, row.config["n"], row.n) for row in rows] == [
        ("judge", 40, 2),
        ("judge", 300, 2),
    ]
    assert all(row.mode == "cpu" and row.unit == "s" and row.host_clock for row in rows)
    assert all(row.config["resamples"] == 2000 and row.min > 0 for row in rows)
    assert "judge, 300 samples a side" in capsys.readouterr().out


def test_the_host_benchmark_writes_no_file_without_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    results = sorted((BENCHMARKS / "results").iterdir())
    assert _judge_host().main(["--sizes", "20", "--repeat", "1"]) == 0
    assert list(tmp_path.iterdir()) == []
    assert sorted((BENCHMARKS / "results").iterdir()) == results
    assert "judge, 20 samples a side" in capsys.readouterr().out


def test_the_host_benchmark_refuses_an_unwritable_out_before_timing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        _judge_host().main(["--sizes", "20", "--out", str(tmp_path)])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --out: Expected a file that rows can be written to, got {tmp_path}" in err
