"""Each new best says at which trial point or named regime its gain was made.

An experiment's gain is its largest over the numbers it shares with the bests before it.
In a log of several regimes that may be any of them: printed without its point, "+76.5%"
beside a best of 1.75x reads as a gain on that best.
"""

from __future__ import annotations

import attrs

from kernelopt.diagnose.engine import diagnose_log
from kernelopt.experiments.log import Experiment, MetricKind, Point, SourceRef

from .conftest import exp, log_of


def _at(number: int, **speedups: float) -> Experiment:
    source = SourceRef(path=f"experiments/exp_{number}/result.md", line=4)
    points = tuple(
        Point(name=name, value=value, unit="x", kind=MetricKind.SPEEDUP, source=source)
        for name, value in speedups.items()
    )
    return attrs.evolve(exp(number), points=points)


def test_a_gain_at_another_regime_names_it_with_that_regimes_number() -> None:
    diagnosis = diagnose_log(
        log_of(
            [
                _at(1, tiny=1.0, causal=1.0),
                _at(2, tiny=2.0, causal=1.01),
                _at(3, tiny=2.01, causal=1.5),
            ]
        )
    )
    trajectory = diagnosis.summary.trajectory
    assert [(p.experiment, p.point, p.value, p.unit) for p in trajectory] == [
        (2, "tiny", 2.0, "x"),
        (3, "causal", 1.5, "x"),
    ]
    plan = diagnosis.render_plan()
    assert "New bests: exp 2 +100.0% at tiny, exp 3 +48.5% at causal;" in plan
    entry = diagnosis.to_dict()["summary"]["trajectory"][1]  # type: ignore[index]
    assert entry["point"] == "causal" and entry["value"] == 1.5


def test_a_log_of_one_headline_names_no_point() -> None:
    diagnosis = diagnose_log(log_of([exp(1, 100.0), exp(2, 80.0), exp(3, 60.0)]))
    assert [p.point for p in diagnosis.summary.trajectory] == ["", ""]
    assert "New bests: exp 2 +20.0%, exp 3 +25.0%;" in diagnosis.render_plan()
