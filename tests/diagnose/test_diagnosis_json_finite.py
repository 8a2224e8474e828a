"""Numbers in diagnosis JSON are finite: the reader refuses NaN and Infinity (which
Python's json reads as floats) in every float field, and diagnose writes none, however
far apart the numbers of a log are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from kernelopt._errors import FormatError
from kernelopt.catalog import Catalog
from kernelopt.diagnose import (
    Pathology,
    diagnose,
    diagnose_log,
    diagnosis_from_dict,
    diagnosis_from_json,
)
from kernelopt.diagnose.jsonio import diagnosis_to_dict
from kernelopt.experiments import Experiment, Fact, ProfileFacts, SourceRef
from kernelopt.experiments.records import Status

from .conftest import FakeCatalog, exp, log_of

HEALTHY = Path(__file__).resolve().parents[2] / "examples" / "logs" / "healthy-run"
PREFIX = "Expected a diagnosis as written by diagnosis_to_dict, got "


@pytest.fixture(scope="module")
def written() -> dict[str, Any]:
    data = diagnosis_to_dict(diagnose(HEALTHY))
    assert len(data["summary"]["trajectory"]) >= 2
    assert data["summary"]["best"] is not None
    return data


def _with(data: dict[str, Any], path: tuple[str | int, ...], value: object) -> dict[str, Any]:
    """A copy of ``data`` with the item at ``path`` set to ``value``."""
    copy: dict[str, Any] = json.loads(json.dumps(data))
    place: Any = copy
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = value
    return copy


NOT_FINITE = [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf"), ("1e999", "inf")]


@pytest.mark.parametrize(("literal", "shown"), NOT_FINITE)
def test_a_gain_that_is_not_finite_is_refused(
    written: dict[str, Any], literal: str, shown: str
) -> None:
    data = _with(written, ("summary", "trajectory", 1, "gain"), "NUMBER")
    text = json.dumps(data).replace('"NUMBER"', literal)
    with pytest.raises(FormatError) as raised:
        diagnosis_from_json(text)
    assert str(raised.value) == (
        PREFIX + f"Expected a finite gain or null, got {shown} @ $.summary.trajectory[1].gain"
    )
    with pytest.raises(FormatError, match=r"trajectory\[1\]\.gain"):
        diagnosis_from_dict(json.loads(text))


@pytest.mark.parametrize(
    ("path", "what", "where"),
    [
        (("summary", "trajectory", 1, "value"), "value", "$.summary.trajectory[1].value"),
        (("summary", "trajectory", 0, "value"), "value", "$.summary.trajectory[0].value"),
        (("summary", "best", "value"), "value", "$.summary.best.value"),
        (("summary", "stall_gain"), "stall_gain", "$.summary.stall_gain"),
    ],
)
@pytest.mark.parametrize(("literal", "shown"), NOT_FINITE)
def test_any_other_number_that_is_not_finite_is_refused(
    written: dict[str, Any],
    path: tuple[str | int, ...],
    what: str,
    where: str,
    literal: str,
    shown: str,
) -> None:
    text = json.dumps(_with(written, path, "NUMBER")).replace('"NUMBER"', literal)
    with pytest.raises(FormatError) as raised:
        diagnosis_from_json(text)
    assert str(raised.value) == PREFIX + f"Expected a finite {what}, got {shown} @ {where}"
    with pytest.raises(FormatError) as raised:
        diagnosis_from_dict(json.loads(text))
    assert str(raised.value).endswith(f" @ {where}")


@pytest.mark.parametrize("gain", [None, 0.0, 0.25, 3])
def test_a_finite_gain_or_none_reads_back(written: dict[str, Any], gain: float | None) -> None:
    data = _with(written, ("summary", "trajectory", 0, "gain"), gain)
    read = diagnosis_from_json(json.dumps(data))
    assert read.summary.trajectory[0].gain == gain
    assert diagnosis_to_dict(read) == data


@pytest.mark.parametrize("value", [5e-324, 1.7976931348623157e308, 0.0])
def test_finite_extremes_read_back(written: dict[str, Any], value: float) -> None:
    data = _with(written, ("summary", "best", "value"), value)
    data = _with(data, ("summary", "trajectory", 1, "value"), value)
    assert diagnosis_to_dict(diagnosis_from_json(json.dumps(data))) == data


def _rate(number: int, throughput: float, **fields: Any) -> Experiment:
    return attrs.evolve(exp(number, None, **fields), throughput=throughput, throughput_unit="tok/s")


def test_a_gain_beyond_a_float_is_written_as_none_with_a_warning(
    fake_catalog: FakeCatalog,
) -> None:
    # From 5e-324 to 1.7e308 tokens/s is a gain of about 3e631: no float holds it.
    steps = [_rate(1, 5e-324), _rate(2, 1.7e308), _rate(3, 1.6e308)]
    diagnosis = diagnose_log(log_of(steps), catalog=fake_catalog)
    (point,) = diagnosis.summary.trajectory
    assert (point.experiment, point.value, point.gain) == (2, 1.7e308, None)
    assert diagnosis.warnings == (
        "exp 2: a new best (1.7e+308 tok/s) whose gain over the best before it is more than "
        "a number can hold; it is listed without a gain",
    )
    assert diagnosis.summary.stall == (3,)
    assert "New bests: exp 2; 1 attempt since the best last moved" in diagnosis.render_plan()
    text = diagnosis.to_json()
    assert "Infinity" not in text and "NaN" not in text
    assert diagnosis_from_json(text) == diagnosis


def test_speedups_and_rates_far_apart_are_diagnosed(fake_catalog: FakeCatalog) -> None:
    # Gains that overflow ended the stall count in 1 / 0; a baseline's own gain (not a
    # new best) joins that count too.
    cases = [
        [_rate(1, 1e-300), _rate(2, 1e300)],
        [_rate(1, 5e-324), _rate(2, 1e300, status=Status.BASELINE), _rate(3, 1e300)],
        [attrs.evolve(exp(n, None), speedup=s) for n, s in ((1, 5e-324), (2, 1e300))],
    ]
    for steps in cases:
        diagnosis = diagnose_log(log_of(steps), catalog=fake_catalog)
        assert all(p.gain is None for p in diagnosis.summary.trajectory)
        assert diagnosis_from_json(diagnosis.to_json()) == diagnosis


def test_latencies_far_apart_give_finite_gains(fake_catalog: FakeCatalog) -> None:
    # A share of time saved is at most 1, however small the new time.
    steps = [exp(1, 1.7e308), exp(2, 5e-324), exp(3, 5e-324)]
    diagnosis = diagnose_log(log_of(steps), catalog=fake_catalog)
    assert [(p.experiment, p.gain) for p in diagnosis.summary.trajectory] == [(2, 1.0)]
    assert diagnosis_from_json(diagnosis.to_json()) == diagnosis


def test_a_new_best_beyond_a_float_is_named_without_a_percentage(catalog: Catalog) -> None:
    compute_bound = ProfileFacts(
        bottleneck="compute",
        facts=(
            Fact(
                text="### Bottleneck: Compute-bound",
                source=SourceRef(path="experiments/profile.md", line=6),
            ),
        ),
        source=SourceRef(path="experiments/profile.md"),
    )
    steps = [
        _rate(1, 5e-324, status=Status.BASELINE, description="torch eager"),
        _rate(2, 1e300, description="fused kernel"),
        _rate(3, 9e299, status=Status.REVERTED, description="deeper prefetch of KV loads"),
    ]
    diagnosis = diagnose_log(log_of(steps, profile=compute_bound), catalog=catalog)
    sentence = next(
        c.sentence for c in diagnosis.checks if c.pathology is Pathology.WRONG_BOTTLENECK
    )
    assert "(exp 2, a new best by more than a number can hold, not counted)" in sentence
    assert "inf%" not in diagnosis.render_plan()
