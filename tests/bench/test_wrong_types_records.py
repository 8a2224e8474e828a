"""Wrong-type arguments to compare, the profile report, the records and the trials.

Each call gets one wrong argument, the others valid, and must raise an InputError that
names the argument and reads ``Expected X, got Y``, before anything is timed or written;
the shared cases live in ``tests/test_public_api_wrong_types.py``, these cover the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from kernelopt import bench
from kernelopt._errors import InputError


def _measurement() -> bench.Measurement:
    return bench.Measurement(samples=[50.0, 51.0, 49.0], backend="cpu-perf-counter")


def _roofline() -> bench.Roofline:
    ceilings = bench.Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.8e12, matmul_flop_per_s=9.9e14)
    return bench.Roofline(ceilings=ceilings, cost=bench.Cost(flops=1e9, bytes=1e6))


def _report(**wrong: Any) -> bench.ProfileReport:
    arguments: dict[str, Any] = {
        "kernel": "k",
        "version": "v1",
        "point": {"b": 1, "s": 1, "t": 64},
        "measurement": _measurement(),
        "roofline": _roofline(),
        "catalog": _NoMatches(),
    }
    return bench.profile_report(**{**arguments, **wrong})


class _NoMatches:
    """A catalog in which no trigger fires."""

    def match_metrics(self, metrics: Any) -> list[Any]:
        return []


def _comparison(**wrong: Any) -> bench.Comparison:
    fields: dict[str, Any] = {
        "verdict": "FAST",
        "ratio": 0.9,
        "ratio_low": 0.89,
        "ratio_high": 0.91,
        "noise": 0.01,
        "threshold": 0.01,
        "pairs": 8,
    }
    return bench.Comparison(**{**fields, **wrong})


def _trial(**wrong: Any) -> bench.TrialResult:
    point = bench.TrialPoint(b=1, s=1, t=64)
    fields: dict[str, Any] = {"requested": point, "point": point, "impl": "v1"}
    return bench.TrialResult(**{**fields, **wrong})


def _spin() -> None:
    return None


CASES: list[tuple[Callable[[], object], str]] = [
    # compare: a falsy timer was replaced by the default one without a word.
    (lambda: bench.compare(_spin, _spin, timer="x"), "timer: Expected a Timer or None, got str"),
    (lambda: bench.compare(_spin, _spin, timer=0), "timer: Expected a Timer or None, got int"),
    (lambda: bench.compare(5, _spin), "baseline: Expected a callable, got int"),
    (lambda: bench.compare(_spin, None), "candidate: Expected a callable, got NoneType"),
    (lambda: bench.compare(_spin, _spin, label=5), "label: Expected a str, got int"),
    # profile_report and its records.
    (
        lambda: _report(extra_metrics="x"),
        "extra_metrics: Expected a mapping of str to real numbers, got str",
    ),
    (
        lambda: _report(extra_metrics={"waves": "2"}),
        "extra_metrics: Expected a mapping of str to real numbers",
    ),
    (lambda: _report(stages="decode"), "stages: Expected a sequence of Stage, got str"),
    (lambda: _report(stages=[5]), "stages: Expected a sequence of Stage, got an item of type int"),
    (lambda: _report(catalog="builtin"), "catalog: Expected a catalog with match_metrics"),
    (lambda: bench.Stage(name=5, duration=1.0), "name: Expected a string, got 5"),
    (lambda: bench.Stage(name="s", duration=1.0, bottleneck=None), "bottleneck: Expected a"),
    (lambda: bench.Stage(name="s", duration=1.0, key_issue=3), "key_issue: Expected a string"),
    (
        lambda: bench.BaselineMetric(metric=5, previous=1.0, current=2.0),
        "metric: Expected a string, got 5",
    ),
    (
        lambda: bench.BaselineMetric(metric="m", previous=1.0, current=2.0, unit=None),
        "unit: Expected a str, got NoneType",
    ),
    (
        lambda: attrs.evolve(_report(), opportunities=None),
        "opportunities: Expected a sequence of Opportunity, got NoneType",
    ),
    (
        lambda: attrs.evolve(_report(), baseline=None),
        "baseline: Expected a sequence of BaselineMetric, got NoneType",
    ),
    (
        lambda: attrs.evolve(_report(), stages=None),
        "stages: Expected a sequence of Stage, got NoneType",
    ),
    (lambda: attrs.evolve(_report(), root_cause=5), "root_cause: Expected a string, got 5"),
    # row_from_measurement and environment.
    (
        lambda: bench.row_from_measurement(_measurement(), op="o", impl="i", keep_samples="no"),
        "keep_samples: Expected a bool, got 'no'",
    ),
    (
        lambda: bench.row_from_measurement(_measurement(), op="o", impl="i", config=[("b", 1)]),
        "config: Expected config as a mapping or None, got list",
    ),
    (lambda: bench.environment(directory=b"."), "directory: Expected a path"),
    (lambda: bench.environment(directory=""), "directory: Expected a path, got an empty path"),
    # trials.
    (
        lambda: bench.trial_matrix(include_defaults="no"),
        "include_defaults: Expected a bool, got 'no'",
    ),
    (lambda: bench.trial_matrix(include_defaults=0), "include_defaults: Expected a bool, got 0"),
    (lambda: _trial(requested=5), "requested: Expected a TrialPoint, got 5"),
    (lambda: _trial(point={"b": 1}), "point: Expected a TrialPoint"),
    (lambda: _trial(impl=5), "impl: Expected a string, got 5"),
    (lambda: _trial(measurement=50.0), "measurement: Expected None or a Measurement, got 50.0"),
    (lambda: _trial(error=5), "error: Expected None or a string, got 5"),
    (lambda: bench.TuningTrial(config=5), "config: Expected a dict, got 5"),
    (lambda: bench.TuningTrial(config={}, median="x"), "median: Expected a finite number"),
    (lambda: bench.TuningTrial(config={}, median=True), "median: Expected a finite number"),
    (lambda: bench.TuningTrial(config={}, error=5), "error: Expected None or a string, got 5"),
    # Comparison.
    (lambda: _comparison(ratio="0.9"), "ratio: Expected a finite number >= 0, got '0.9'"),
    (lambda: _comparison(ratio_low=None), "ratio_low: Expected a finite number >= 0"),
    (lambda: _comparison(noise=-0.1), "noise: Expected a finite number >= 0, got -0.1"),
    (lambda: _comparison(threshold=float("nan")), "threshold: Expected a finite number"),
    (lambda: _comparison(confidence=0), "confidence: Expected a finite number > 0"),
    (lambda: _comparison(pairs=True), "pairs: Expected an integer >= 0, got True"),
    (lambda: _comparison(baseline=50.0), "baseline: Expected None or a Measurement, got 50.0"),
    (lambda: _comparison(candidate="m"), "candidate: Expected None or a Measurement"),
    (lambda: _comparison(baseline_again=[]), "baseline_again: Expected None or a Measurement"),
]


@pytest.mark.parametrize(("call", "message"), CASES)
def test_a_wrong_argument_is_refused_by_name(call: Callable[[], object], message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        call()


def test_run_trials_refuses_an_impl_of_another_type_before_any_point_is_made() -> None:
    made: list[bench.TrialPoint] = []

    def make(point: bench.TrialPoint) -> Callable[[], None]:
        made.append(point)
        return _spin

    with pytest.raises(InputError, match=re.escape("impl: Expected a str, got int")):
        bench.run_trials(make, impl=5)  # type: ignore[arg-type]
    assert made == []


def _write(root: Path, **wrong: Any) -> bench.ResultRecord:
    row = bench.to_result_row(_measurement(), point="b=1 s=1 t=64", impl="k")
    arguments: dict[str, Any] = {
        "experiment": 1,
        "title": "t",
        "rows": [row],
        "status": "KEPT",
        "correctness": "PASS",
    }
    return bench.write_experiment(root / "experiments", **{**arguments, **wrong})


@pytest.mark.parametrize(
    ("wrong", "message"),
    [
        ({"verdict": 5}, "verdict: Expected a Comparison, a str or None, got int"),
        ({"knobs": "num_splits=8"}, "knobs: Expected knobs as a mapping or None, got str"),
        ({"summary": "no"}, "summary: Expected a bool, got 'no'"),
        ({"directory": b"."}, "directory: Expected a path"),
    ],
)
def test_write_experiment_refuses_a_wrong_option_and_writes_nothing(
    tmp_path: Path, wrong: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        _write(tmp_path, **wrong)
    assert not (tmp_path / "experiments").exists()


def test_write_experiment_still_takes_a_comparison_or_a_str_verdict(tmp_path: Path) -> None:
    record = _write(tmp_path, verdict=_comparison(), knobs={"num_splits": 8})
    assert record.verdict == str(_comparison())
    assert record.knobs == {"num_splits": "8"}
    again = _write(tmp_path, verdict="SAME", overwrite=True, summary=False)
    assert again.verdict == "SAME"


def test_append_rows_refuses_bytes_for_a_path_and_writes_nothing(tmp_path: Path) -> None:
    row = bench.row_from_measurement(_measurement(), op="o", impl="i", directory=tmp_path)
    with pytest.raises(InputError, match=re.escape("path: Expected a path (str or path-like)")):
        bench.append_rows(b"rows.jsonl", [row])  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_profile_report_takes_int_metrics_and_given_stages() -> None:
    stage = bench.Stage(name="decode", duration=50.0, bottleneck="Memory-bound", key_issue="x")
    report = _report(stages=(stage,), extra_metrics={"waves": 2})
    assert report.stages == (stage,)
    assert "| decode |" in report.render()


def test_trial_matrix_and_records_still_take_valid_flags() -> None:
    point = bench.TrialPoint(b=1, s=1, t=64)
    assert bench.trial_matrix(extra_points=[point], include_defaults=False) == (point,)
    row = bench.row_from_measurement(
        _measurement(), op="o", impl="i", config={"b": 1}, note="n", keep_samples=True
    )
    assert row.samples == tuple(_measurement().samples)
    assert bench.TuningTrial(config={"x": 1}, median=3.5).median == 3.5
