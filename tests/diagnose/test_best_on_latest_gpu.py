"""Where the latest attempt ran on another GPU than the best, the header also names the
best on that GPU: times of two GPUs are no gain or loss over each other."""

from __future__ import annotations

import attrs

from kernelopt.diagnose import diagnosis_from_json
from kernelopt.diagnose.engine import diagnose_log
from kernelopt.experiments.records import Status

from .conftest import exp, log_of


def _log(latest_gpu: str):  # type: ignore[no-untyped-def]
    return log_of(
        [
            attrs.evolve(exp(1, 100.0, status=Status.BASELINE), gpu="NVIDIA H100"),
            attrs.evolve(exp(2, 50.0), gpu="NVIDIA H100"),
            attrs.evolve(exp(3, 49.5, status=Status.REVERTED), gpu="NVIDIA H100"),
            attrs.evolve(exp(4, 38.0, status=Status.NEUTRAL), gpu=latest_gpu),
        ]
    )


def test_the_best_on_the_latest_attempts_gpu_is_named_beside_the_best() -> None:
    diagnosis = diagnose_log(_log("NVIDIA H200"))
    there = diagnosis.summary.latest_gpu_best
    assert there is not None
    assert (there.experiment, there.value, there.gpu) == (4, 38.0, "NVIDIA H200")
    assert (
        "Best so far: 50 us on NVIDIA H100 (exp 2); on NVIDIA H200, where the latest attempt "
        "ran: 38 us (exp 4)."
    ) in diagnosis.render_plan()
    assert diagnosis_from_json(diagnosis.to_json()) == diagnosis


def test_a_log_timed_on_one_gpu_has_no_such_line() -> None:
    diagnosis = diagnose_log(_log("NVIDIA H100"))
    assert diagnosis.summary.latest_gpu_best is None
    assert "latest_gpu_best" not in diagnosis.to_dict()["summary"]
    assert "where the latest attempt ran" not in diagnosis.render_plan()
