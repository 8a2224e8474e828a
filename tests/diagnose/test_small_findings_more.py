"""Small findings on three items: the local-minimum sentence of a log with no best, a new
best under the noise that its own A/B verdict shows faster, and the over-engineering item
measuring the kernel the log names rather than another script of an experiment folder."""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from kernelopt.diagnose import Diagnosis, Pathology, diagnose, diagnose_log
from kernelopt.diagnose.jsonio import diagnosis_from_json, diagnosis_to_dict, diagnosis_to_json
from kernelopt.diagnose.plan import render_plan
from kernelopt.experiments import Fact, SourceRef
from kernelopt.experiments.log import ABVerdict
from kernelopt.experiments.records import Status

from .conftest import UNRELATED_TITLES, exp, kernel, log_of

REPO = Path(__file__).resolve().parents[2]
MLA = REPO / "docs" / "kernels" / "mla_decode"

# A profiling note that reads as latency-bound: item 4 judges no compute/memory side.
_STALLED = (
    Fact(text="Dominant stall reason: long scoreboard", source=SourceRef(path="notes.md", line=3)),
)


def _sentence(diagnosis: Diagnosis, pathology: Pathology) -> str:
    return next(c for c in diagnosis.checks if c.pathology is pathology).sentence


def _line(plan: str, lead: str) -> str:
    """The plan's line that starts with ``lead``."""
    found = [line for line in plan.splitlines() if line.startswith(lead)]
    assert len(found) == 1, plan
    return found[0]


# --- 2. local minimum: no best recorded ------------------------------------------------


def _reverted(count: int) -> Diagnosis:
    """``count`` attempts, each reverted: the log records no best."""
    experiments = [
        exp(n, 100.0 + n, status=Status.REVERTED, description=UNRELATED_TITLES[n % 3])
        for n in range(1, count + 1)
    ]
    return diagnose_log(log_of(experiments, profiling=_STALLED), catalog=None)


def test_too_few_reverted_attempts_count_from_no_best() -> None:
    sentence = _sentence(_reverted(4), Pathology.LOCAL_MINIMUM)

    assert sentence == "4 attempts, none kept, and no best recorded to move: no plateau (needs 5)."


def test_a_plateau_of_reverted_attempts_says_no_best_was_recorded() -> None:
    finding = _reverted(6).finding(Pathology.LOCAL_MINIMUM)

    assert finding is not None
    assert finding.summary.startswith(
        "6 consecutive attempts (exps 1, 2, 3, 4, 5, 6), none kept: the log "
    )
    assert "records no best for them to move" in finding.summary
    assert "improved the best" not in finding.summary


def test_the_gdn_decode_log_has_no_best_to_move(corpus: Path) -> None:
    diagnosis = diagnose(corpus / "gdn-decode-experiments", catalog=None)

    assert diagnosis.summary.best is None
    sentence = _sentence(diagnosis, Pathology.LOCAL_MINIMUM)
    assert sentence.startswith("4 attempts, none kept, and no best recorded to move")
    assert "since the best last moved" not in sentence


def test_a_log_with_a_best_still_counts_since_it_moved() -> None:
    experiments = [exp(1, 100.0), exp(2, 101.0, status=Status.REVERTED)]
    diagnosis = diagnose_log(log_of(experiments, profiling=_STALLED), catalog=None)

    assert _sentence(diagnosis, Pathology.LOCAL_MINIMUM).startswith(
        "2 attempts since the best last moved by 5% or more"
    )


# --- new bests under the noise with a FAST verdict --------------------------------------


def _small_gain(verdict: ABVerdict | None) -> Diagnosis:
    """100 us, then 99.7 us (0.3 % faster) whose own A/B verdict is ``verdict``."""
    experiments = [
        exp(1, 100.0, description=UNRELATED_TITLES[0]),
        attrs.evolve(exp(2, 99.7, description=UNRELATED_TITLES[1]), verdict=verdict),
    ]
    return diagnose_log(log_of(experiments, profiling=_STALLED), catalog=None)


def test_a_fast_verdict_gain_under_one_percent_is_no_noise() -> None:
    diagnosis = _small_gain(ABVerdict.FAST)

    line = _line(render_plan(diagnosis), "New bests")
    assert line.startswith("New bests: exp 2 +0.3%;")
    assert "noise" not in line
    (point,) = diagnosis.summary.trajectory
    assert point.verdict is ABVerdict.FAST


def test_a_gain_under_one_percent_without_a_verdict_is_still_noise() -> None:
    line = _line(render_plan(_small_gain(None)), "New bests")

    assert line.startswith("New bests: exp 2 +0.3% (within noise);")


def test_the_verdict_is_in_the_json_only_where_set() -> None:
    fast = diagnosis_to_dict(_small_gain(ABVerdict.FAST))["summary"]["trajectory"]
    bare = diagnosis_to_dict(_small_gain(None))["summary"]["trajectory"]

    assert list(fast[0]) == [
        "experiment",
        "value",
        "unit",
        "gain",
        "same_run",
        "point",
        "verdict",
    ]
    assert fast[0]["verdict"] == "FAST"
    assert list(bare[0]) == ["experiment", "value", "unit", "gain", "same_run", "point"]


def test_the_json_and_the_text_agree_after_a_round_trip() -> None:
    diagnosis = _small_gain(ABVerdict.FAST)
    read = diagnosis_from_json(diagnosis_to_json(diagnosis))

    assert read == diagnosis
    assert render_plan(read) == render_plan(diagnosis)
    # Data written before the key existed reads with no verdict.
    data = json.loads(diagnosis_to_json(diagnosis))
    del data["summary"]["trajectory"][0]["verdict"]
    assert diagnosis_from_json(json.dumps(data)).summary.trajectory[0].verdict is None


# --- 6. over-engineering: the kernel the log names --------------------------------------

_KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def attn(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if BLOCK > 64:
        x = x * 2
    tl.store(x_ptr + offs, x)
"""

_MERGE = """\
import triton
import triton.language as tl


@triton.jit
def merge(x_ptr, N: tl.constexpr):
    tl.store(x_ptr, tl.load(x_ptr))
"""


def _two_files(kernel_path: str | None) -> Diagnosis:
    """Three kept experiments: exps 1 and 2 snapshot the kernel (``attn.py``), exp 3 only
    a small merge script beside it; CLAUDE.md names the kernel where ``kernel_path``."""
    experiments = [exp(n, 100.0 - n, description=UNRELATED_TITLES[n - 1]) for n in (1, 2, 3)]
    sources = (
        kernel(_KERNEL, path="experiments/exp_1/attn.py", role="snapshot", experiment=1),
        kernel(_KERNEL, path="experiments/exp_2/attn.py", role="snapshot", experiment=2),
        kernel(_MERGE, path="experiments/exp_3/merge.py", role="snapshot", experiment=3),
    )
    named = (
        Fact(text=kernel_path, source=SourceRef(path="CLAUDE.md", line=3))
        if kernel_path is not None
        else None
    )
    log = log_of(experiments, kernels=sources, kernel_path=named, profiling=_STALLED)
    return diagnose_log(log, catalog=None)


def test_over_engineering_measures_the_kernel_the_log_names() -> None:
    sentence = _sentence(_two_files("kernels/attn.py"), Pathology.OVER_ENGINEERING)

    assert "latest snapshot of attn.py (exp 2): 9 code lines" in sentence
    assert "exp 3" not in sentence


def test_over_engineering_without_a_named_kernel_measures_every_snapshot() -> None:
    # Nothing says which file is the kernel: the latest folder's kernel files, as before.
    sentence = _sentence(_two_files(None), Pathology.OVER_ENGINEERING)

    assert "latest snapshot (exp 3): 5 code lines" in sentence


def test_a_named_kernel_no_snapshot_carries_changes_nothing() -> None:
    # CLAUDE.md names a file no snapshot is of: the snapshots are all there is to measure.
    sentence = _sentence(_two_files("kernels/other.py"), Pathology.OVER_ENGINEERING)

    assert "latest snapshot (exp 3): 5 code lines" in sentence


def test_the_mla_log_measures_its_seesaw_kernel_not_a_merge_script() -> None:
    sentence = _sentence(diagnose(MLA, catalog=None), Pathology.OVER_ENGINEERING)

    assert "latest snapshot of seesaw.py (exp 37, not kept)" in sentence
    assert "exp 47" not in sentence
    assert "latest diff of seesaw.py (exp 51): seesaw.py" in sentence
    assert "api.py" not in sentence


def test_a_log_that_snapshots_only_its_kernel_reads_as_before() -> None:
    # Every snapshot is the named kernel's file: nothing to tell apart, no file named.
    experiments = [exp(n, 100.0 - n, description=UNRELATED_TITLES[n - 1]) for n in (1, 2)]
    sources = tuple(
        kernel(_KERNEL, path=f"experiments/exp_{n}/attn.py", role="snapshot", experiment=n)
        for n in (1, 2)
    )
    named = Fact(text="kernels/attn.py", source=SourceRef(path="CLAUDE.md", line=3))
    log = log_of(experiments, kernels=sources, kernel_path=named, profiling=_STALLED)
    sentence = _sentence(diagnose_log(log, catalog=None), Pathology.OVER_ENGINEERING)

    assert "latest snapshot (exp 2): 9 code lines" in sentence
