"""The Measurement record: validation, quantiles, unit conversion."""

from __future__ import annotations

import numpy as np
import pytest

from kernelopt._errors import InputError
from kernelopt.bench import Measurement

SAMPLES = [12.0, 10.0, 11.0, 30.0, 10.5, 11.5, 10.8, 11.2, 10.9, 11.1]


def test_quantiles_follow_numpy() -> None:
    m = Measurement(samples=SAMPLES)
    assert m.median == pytest.approx(float(np.median(SAMPLES)))
    assert m.p20 == pytest.approx(float(np.quantile(SAMPLES, 0.2)))
    assert m.p80 == pytest.approx(float(np.quantile(SAMPLES, 0.8)))
    q75, q25 = np.quantile(SAMPLES, [0.75, 0.25])
    assert m.iqr == pytest.approx(float(q75 - q25))
    assert m.rel_iqr == pytest.approx(m.iqr / m.median)
    assert m.min == 10.0 and m.n == 10
    assert m.mean > m.median  # the 30.0 outlier pulls the mean, not the median
    low, high = m.median_ci
    assert low <= m.median <= high


def test_seconds_and_unit_conversion() -> None:
    m = Measurement(samples=[1000.0, 2000.0, 3000.0], overhead=2.0)
    assert m.seconds == pytest.approx(2e-3)
    ms = m.to_unit("ms")
    assert ms.samples == (1.0, 2.0, 3.0) and ms.unit == "ms" and ms.overhead == pytest.approx(2e-3)
    assert ms.seconds == pytest.approx(m.seconds)
    with pytest.raises(InputError, match="Expected a unit"):
        m.to_unit("minutes")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"samples": []}, "Expected at least one sample"),
        ({"samples": [1.0, float("nan")]}, "Expected finite samples"),
        ({"samples": [-1.0]}, "Expected finite samples"),
        ({"samples": "123"}, "Expected samples as a sequence of numbers, got '123'"),
        ({"samples": ["a"]}, "Expected numeric samples, got 'a'"),
        ({"samples": [True, 1.0]}, "Expected numeric samples, got True"),
    ],
)
def test_bad_samples_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        Measurement(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["mode", "cache", "backend", "unit"])
def test_enumerated_fields_are_checked(field: str) -> None:
    with pytest.raises(InputError, match=f"{field}: Expected one of"):
        Measurement(samples=[1.0], **{field: "bogus"})  # type: ignore[arg-type]


def test_summary_names_mode_count_and_backend() -> None:
    text = Measurement(samples=[1.0, 2.0, 3.0], backend="cpu-perf-counter", mode="hot").summary()
    assert text == "2 [1.4, 2.6] us (hot, n=3, cpu-perf-counter)"


def test_a_lone_note_is_one_note_not_its_letters() -> None:
    # A str is a sequence of str: "hot" became the notes ("h", "o", "t"), and a row made
    # of the measurement read "h; o; t".
    m = Measurement(samples=[1.0], notes="inputs fit in L2")
    assert m.notes == ("inputs fit in L2",)
    assert Measurement(samples=[1.0], notes=["a", "b"]).notes == ("a", "b")
    with pytest.raises(InputError, match=r"notes: Expected notes as str, got 3"):
        Measurement(samples=[1.0], notes=["a", 3])  # type: ignore[list-item]


def test_summary_keeps_every_integer_digit_of_a_long_time() -> None:
    # A 12 ms kernel in µs read "1.235e+04 [1.235e+04, 1.238e+04] us": exponents, and the
    # digits that tell two versions apart, lost.
    text = Measurement(samples=[12345.6, 12345.7, 12399.0]).summary()
    assert text == "12346 [12346, 12378] us (cold, n=3, cuda-events)"
    assert Measurement(samples=[66.53]).summary().startswith("66.53 [66.53, 66.53] us")


def test_summary_labels_an_unflushed_cold_timing_truthfully() -> None:
    host = Measurement(samples=[1.0, 2.0, 3.0], backend="cpu-perf-counter", cache="none")
    assert host.summary() == "2 [1.4, 2.6] us (host, no flush, n=3, cpu-perf-counter)"
    partly_hot = Measurement(samples=[1.0, 2.0, 3.0], cache="none")
    assert partly_hot.summary().endswith("(cold asked, no flush, n=3, cuda-events)")
    assert Measurement(samples=[1.0], cache="rotate").summary().endswith("(cold, n=1, cuda-events)")
