"""The local minimum's gains are the kernel's own: a baseline that holds the best does not
make a 12 % step read as 0.0 %, and a kernel still behind its baseline is said to be so."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import Diagnosis, Pathology, diagnose, diagnose_log
from kernelopt.diagnose.progress import analyze
from kernelopt.experiments.records import Status

from .conftest import exp, log_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"


def _local_minimum(diagnosis: Diagnosis) -> str:
    found = diagnosis.finding(Pathology.LOCAL_MINIMUM)
    assert found is not None, [c.sentence for c in diagnosis.checks]
    return found.summary


def _behind(second_kernel: float) -> Diagnosis:
    """torch at 100 us; the kernel at 130 us, then ``second_kernel``, then three slower
    tries reverted: the kernel never beats its baseline."""
    experiments = [
        exp(1, 100.0, status=Status.BASELINE, description="torch baseline"),
        exp(2, 130.0, description="Triton kernel"),
        exp(3, second_kernel, description="BLOCK_N=64"),
        exp(4, 116.0, status=Status.REVERTED, description="num_warps=8"),
        exp(5, 118.0, status=Status.REVERTED, description="num_stages=3"),
        exp(6, 120.0, status=Status.REVERTED, description="BLOCK_M=32"),
    ]
    return diagnose_log(log_of(experiments), catalog=None)


def test_a_kernel_behind_its_baseline_reports_its_own_largest_step() -> None:
    # 130 -> 114.4 us saves 12 % of the kernel's time, though torch still holds the best.
    summary = _local_minimum(_behind(114.4))

    assert "0.0%" not in summary
    assert "its own steps gained up to 12.0% (exp 3 over the kernel's best before it)" in summary
    assert "left the best with the baseline (exp 1, 100 us)" in summary
    assert "(its best: exp 3, 114.4 us)" in summary
    # Behind its baseline and still gaining is another state than gains that stalled.
    assert summary.endswith(
        "it is still behind its baseline and catching up, not at a plateau of its own gains."
    )


def test_a_kernel_behind_its_baseline_whose_own_gains_stalled_is_at_a_local_minimum() -> None:
    summary = _local_minimum(_behind(129.0))

    assert "its own steps gained at most 0.8% (exp 3 over the kernel's best before it)" in summary
    assert summary.endswith("the design is at a local minimum below its baseline.")


def test_the_evidence_shows_each_step_over_the_kernel_s_own_best() -> None:
    found = _behind(114.4).finding(Pathology.LOCAL_MINIMUM)
    assert found is not None
    quotes = [e.quote for e in found.evidence]

    assert "exp 3: 114.4 us KEPT (+0.0%; +12.0% over the kernel's best before it)" in quotes
    assert "exp 4: 116 us REVERTED (+0.0%)" in quotes


def test_own_gains_leave_the_baseline_out() -> None:
    progress = analyze(
        (
            exp(1, 100.0, status=Status.BASELINE),
            exp(2, 130.0),
            exp(3, 114.4),
            exp(4, 90.0),
            exp(5, 95.0, status=Status.REVERTED),
        )
    )
    own = {s.experiment.number: s.own_gain for s in progress.steps}
    gains = {s.experiment.number: s.gain for s in progress.steps}

    assert own[1] is None and own[2] is None  # the baseline, then the kernel's first number
    assert own[3] == pytest.approx(0.12) and gains[3] == 0.0
    # Once the kernel holds the best, its gain over the best is its own.
    assert own[4] == pytest.approx(1 - 90.0 / 114.4) and gains[4] == pytest.approx(0.1)
    assert own[5] == 0.0  # reverted: moved nothing


def test_a_kernel_ahead_of_its_baseline_keeps_its_sentence() -> None:
    # The kernel beat torch long before the stall: its gains over the best are its own.
    experiments = [
        exp(1, 100.0, status=Status.BASELINE),
        exp(2, 80.0),
        *(exp(n, 80.0 - 0.1 * (n - 2)) for n in range(3, 8)),
    ]
    summary = _local_minimum(diagnose_log(log_of(experiments), catalog=None))

    assert summary == (
        "5 consecutive attempts (exps 3, 4, 5, 6, 7) improved the best by less than 5% in "
        "total (largest single gain 0.1%): the design is at a local minimum."
    )


def test_the_mla_plateau_example_reports_the_kernel_s_own_steps() -> None:
    # Exps 3 and 5 save 24.7 % and 31.7 % of the kernel's time, and bring it level with
    # torch eager (274.1 us), which held the best: not "largest single gain 0.3%".
    summary = _local_minimum(diagnose(EXAMPLES / "mla-decode-plateau"))

    assert "largest single gain 0.3%" not in summary
    assert "largest single gain 31.7%, exp 5 over the kernel's best before it" in summary
    assert "the baseline (exp 1, 274.1 us) held the best before them" in summary
    assert summary.endswith("against the best so far, the design is at a local minimum.")
