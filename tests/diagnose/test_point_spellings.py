"""A trial point written with its axes in another order is the same point.

Result tables written before the spelling was fixed put a point's axes in the order the
caller gave them (``rows=4 cols=4096``); the devlog and evaluate write ``cols=4096
rows=4``. Progress compares the two as one quantity.
"""

from __future__ import annotations

import attrs

from kernelopt.diagnose.progress import analyze, point_key
from kernelopt.experiments.log import MetricKind, Point, SourceRef
from kernelopt.experiments.records import Status

from .conftest import exp

CANONICAL = "b=32 s=1 t=4096 h=16 kv=fp8"
REORDERED = "kv=fp8 h=16 b=32, s=1, t=4096"


def test_a_headline_in_another_axis_order_is_the_same_point() -> None:
    experiments = (
        attrs.evolve(exp(1, 100.0, status=Status.BASELINE), headline_point=CANONICAL),
        attrs.evolve(exp(2, 80.0), headline_point=CANONICAL),
        attrs.evolve(exp(3, 60.0), headline_point=REORDERED),
    )
    progress = analyze(experiments)
    # One point: no per-point headlines, and exp 3's gain is over exp 2 at that point.
    assert progress.points == ()
    assert [s.gain for s in progress.steps] == [None, 0.2, 0.25]


def test_another_point_still_keys_its_own_headline() -> None:
    other = "b=32 s=16 t=4096 h=16 kv=fp8"
    experiments = (
        attrs.evolve(exp(1, 100.0, status=Status.BASELINE), headline_point=CANONICAL),
        attrs.evolve(exp(2, 80.0), headline_point=REORDERED),
        attrs.evolve(exp(3, 60.0), headline_point=other),
    )
    progress = analyze(experiments)
    # The first spelling met names the point.
    assert progress.points == (CANONICAL, other)
    assert progress.steps[1].gain == 0.2
    assert progress.steps[1].values == {f"headline @ {CANONICAL}": -80.0}


def test_a_named_point_in_another_axis_order_keys_one_number() -> None:
    def at(name: str) -> Point:
        source = SourceRef(path="experiments/exp_3/result.md", line=12)
        return Point(name=name, value=50.0, unit="us", kind=MetricKind.LATENCY, source=source)

    assert point_key(at("b=32 s=1 t=4096 h=16 seesaw")) == point_key(
        at("h=16 b=32 s=1 t=4096 seesaw")
    )
    assert point_key(at("b=32 s=1 t=4096 h=16 seesaw")) != point_key(
        at("b=32 s=1 t=4096 h=128 seesaw")
    )
