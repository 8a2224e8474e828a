"""An effort timed only on a CPU is told why it has no profile, not that it chose blind."""

from __future__ import annotations

import attrs

from kernelopt.diagnose.engine import diagnose_log
from kernelopt.diagnose.model import Pathology

from .conftest import UNRELATED_TITLES, exp, log_of


def _log(device: str) -> list:  # type: ignore[type-arg]
    experiments = [exp(1, 100.0, description="baseline")]
    experiments += [exp(n, 100.0 - n, description=UNRELATED_TITLES[n - 2]) for n in (2, 3)]
    return [attrs.evolve(e, gpu=device) for e in experiments]


def test_timings_that_all_name_a_cpu_say_no_gpu_kernel_was_timed() -> None:
    diagnosis = diagnose_log(log_of(_log("CPU (Triton interpreter)")))
    finding = diagnosis.finding(Pathology.WRONG_BOTTLENECK)
    assert finding is not None
    assert "every timing names a CPU as its device (GPU: CPU (Triton interpreter))" in (
        finding.summary
    )
    assert "On a GPU, instrument with CUDA events" in finding.summary
    assert "chosen blind" not in finding.summary


def test_timings_on_a_gpu_without_a_profile_were_chosen_blind() -> None:
    diagnosis = diagnose_log(log_of(_log("NVIDIA H200")))
    finding = diagnosis.finding(Pathology.WRONG_BOTTLENECK)
    assert finding is not None and "every change so far was chosen blind" in finding.summary
