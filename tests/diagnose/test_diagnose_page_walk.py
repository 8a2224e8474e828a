"""What a reader of a plan meets on logs walked end to end: numbers named with what they
can be compared with."""

from __future__ import annotations

import attrs

from kernelopt.diagnose import Pathology, diagnose_log
from kernelopt.experiments import Experiment
from kernelopt.experiments.records import Status

from .conftest import exp, log_of

H200, H100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"


def _on(gpu: str, number: int, latency: float, status: Status = Status.KEPT) -> Experiment:
    return attrs.evolve(exp(number, latency, status=status), gpu=gpu)


def test_a_plateau_number_timed_on_another_gpu_than_the_best_names_its_gpu() -> None:
    # The effort moved from an H200 to an H100, whose times are longer: the best now is an
    # H100 time, and the H200 times beside it read as gains unless their GPU is named.
    log = log_of(
        [
            _on(H200, 1, 50.0),
            _on(H200, 2, 40.0),
            *(_on(H100, n, 60.0 - 0.1 * n) for n in range(3, 9)),
            _on(H200, 9, 39.9, Status.NEUTRAL),
        ]
    )
    diagnosis = diagnose_log(log)
    assert diagnosis.summary.best is not None and diagnosis.summary.best.gpu == H100
    finding = diagnosis.finding(Pathology.LOCAL_MINIMUM)
    assert finding is not None
    quotes = [e.quote for e in finding.evidence]
    assert quotes[0] == f"best before the plateau: exp 2 40 us on {H200}"
    assert f"exp 9: 39.9 us on {H200} NEUTRAL (+0.0%)" in quotes
    # The best's own GPU goes unnamed, as in the plan's header line.
    assert "exp 8: 59.2 us KEPT (+0.2%)" in quotes


def test_a_log_timed_on_one_gpu_names_none() -> None:
    log = log_of([_on(H200, 1, 50.0), *(_on(H200, n, 50.0 - 0.1 * n) for n in range(2, 9))])
    finding = diagnose_log(log).finding(Pathology.LOCAL_MINIMUM)
    assert finding is not None
    assert not any(" on " in e.quote for e in finding.evidence)


def _at(point: str, number: int, latency: float, speedup: float | None = None) -> Experiment:
    return attrs.evolve(exp(number, latency), headline_point=point, speedup=speedup)


def test_a_new_best_opening_its_trial_point_names_that_point() -> None:
    # exp 3 is the first kept kernel at h=16: its row's own speedup (1.1x over the kernel
    # it started from) is its gain, made at h=16 like the later ones there.
    log = log_of(
        [
            _at("b=32 h=128", 1, 100.0),
            _at("b=32 h=128", 2, 80.0),
            _at("b=32 h=16", 3, 50.0, 1.1),
            _at("b=32 h=16", 4, 40.0),
        ]
    )
    diagnosis = diagnose_log(log)
    points = {p.experiment: p.point for p in diagnosis.summary.trajectory}
    assert points == {2: "b=32 h=128", 3: "b=32 h=16", 4: "b=32 h=16"}
    assert "exp 3 +9.1% at b=32 h=16, exp 4 +20.0% at b=32 h=16" in diagnosis.render_plan()
