"""What an RMSNorm effort timed on a CPU reads in its plan: one guard judged one way for
every shortcut it takes, a plan not yet run answering a shortcut, a measuring technique
faulted once, the correctness sentence naming the run of failures that ends the log, a
header that lists only the judged series' layouts, and a stale profile re-made without
losing its signature."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.diagnose.engine import diagnose_log
from kernelopt.experiments.records import Correctness, Status

from .conftest import UNRELATED_TITLES, FakeCatalog, FakeEntry, exp, log_of

P = Pathology

SIGNATURE = "rmsnorm"
# A launcher whose only special path tests the reduced axis by its name.
LAUNCHER = """import torch


def rmsnorm(x, w, eps=1e-6, out=None):
    rows, hidden = x.shape
    if {guard}:
        return x * torch.rsqrt(x.float() * x.float() + eps).to(x.dtype) * w
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w
"""
# An exp_N/plan.md written before its experiment runs, taking up a dominant shape.
PLAN = """## Optimization Task: rmsnorm v2 -> v3
### Optimizations to Apply:
1. [dominant-shape-specialization](dominant-shape-specialization.md) -- constexpr HIDDEN path
"""


@pytest.fixture
def rmsnorm_signature() -> Iterator[None]:
    """The RMSNorm signature a user registers in Python: rows and a reduced hidden axis."""
    from kernelopt.workload import OpSignature, register_signature, unregister_signature

    register_signature(
        OpSignature(
            name=SIGNATURE,
            ops=("rmsnorm",),
            family="normalization",
            tensors={"x": ("rows", "hidden"), "weight": ("hidden",)},
            reduced=("hidden",),
        )
    )
    yield
    unregister_signature(SIGNATURE)


def _rmsnorm_log(root: Path, guard: str, hiddens: list[int]) -> Path:
    """Two experiments timing ``LAUNCHER`` with ``guard``, and the workload profile of
    ``rmsnorm`` calls at 8 rows of each of ``hiddens``, written with the signature."""
    import numpy as np

    from kernelopt.bench import Measurement, to_result_row, write_experiment
    from kernelopt.workload import Recorder, profile_trace, write_profile_md

    root.mkdir()
    trace = root / "calls.jsonl"
    recorder = Recorder(str(trace), append=False)

    @recorder(op="rmsnorm")
    def rmsnorm(x: object, weight: object, eps: float) -> None:
        del x, weight, eps

    with recorder:
        for hidden in hiddens:
            rmsnorm(np.zeros((8, hidden), np.float16), np.zeros((hidden,), np.float16), 1e-6)
    write_profile_md(profile_trace(str(trace)), str(root / "experiments" / "workload_profile.md"))
    snapshot = root / "rmsnorm.py"
    snapshot.write_text(LAUNCHER.format(guard=guard), encoding="utf-8")
    for number in (1, 2):
        measured = Measurement(samples=[100.0 / number] * 3)
        write_experiment(
            root / "experiments",
            experiment=number,
            title=f"v{number}",
            rows=[to_result_row(measured, point={"rows": 8, "hidden": 1}, impl="torch")],
            status="BASELINE" if number == 1 else "KEPT",
            correctness="PASS",
            gpu=measured,
            snapshot=str(snapshot),
        )
    return root


def _check(diagnosis: object, pathology: Pathology) -> str:
    checks = diagnosis.checks  # type: ignore[attr-defined]
    return str(next(c for c in checks if c.pathology is pathology).sentence)


# --- one guard, every shortcut it takes ----------------------------------------------------


@pytest.mark.usefixtures("rmsnorm_signature")
def test_a_guard_by_the_axis_name_covers_the_dominant_shape_it_shares(tmp_path: Path) -> None:
    # hidden = 1 is both a size-1 reduction and the dominant shape: one guard, one path.
    root = _rmsnorm_log(tmp_path / "log", "hidden == 1", [1] * 6 + [4097] * 4)
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.OVERLOOKED_SHORTCUT) is None
    sentence = _check(diagnosis, P.OVERLOOKED_SHORTCUT)
    assert sentence.startswith("The kernel already has a path for each of the 2 shortcuts")
    assert "`if hidden == 1:`" in sentence


@pytest.mark.usefixtures("rmsnorm_signature")
def test_a_dominant_shape_alone_shows_under_its_axis_name(tmp_path: Path) -> None:
    # hidden = 1 in most calls, rows = 8 in all: only the dominant shape's guard names
    # hidden, through the profile's Axes table (hidden is read from x.shape[1]).
    root = _rmsnorm_log(tmp_path / "log", "hidden == 4097", [1] * 3 + [4097] * 7)
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.OVERLOOKED_SHORTCUT) is None
    assert "`if hidden == 4097:`" in _check(diagnosis, P.OVERLOOKED_SHORTCUT)


# --- a plan not yet run takes a shortcut up ------------------------------------------------


@pytest.mark.usefixtures("rmsnorm_signature")
def test_a_plan_not_yet_run_answers_a_shortcut(tmp_path: Path) -> None:
    root = _rmsnorm_log(tmp_path / "log", "rows == 0", [1] * 3 + [4097] * 7)
    overlooked = diagnose(root).finding(P.OVERLOOKED_SHORTCUT)
    assert overlooked is not None and "no experiment tried it" in overlooked.summary
    (root / "experiments" / "exp_3").mkdir()
    (root / "experiments" / "exp_3" / "plan.md").write_text(PLAN, encoding="utf-8")
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.OVERLOOKED_SHORTCUT) is None
    sentence = _check(diagnosis, P.OVERLOOKED_SHORTCUT)
    assert "x.shape[1] == 4097 is planned in exp 3, not yet measured (experiments/exp_3/" in (
        sentence
    )
    assert not any("special path" in a.text for f in diagnosis.findings for a in f.actions)


# --- a measuring technique on a CPU-only log -----------------------------------------------


def _cpu_log(device: str) -> list:  # type: ignore[type-arg]
    experiments = [exp(1, 100.0, description="baseline", status=Status.BASELINE)]
    experiments += [exp(n, 100.0 - n, description=UNRELATED_TITLES[n - 2]) for n in (2, 3)]
    return [attrs.evolve(e, gpu=device) for e in experiments]


def test_a_cpu_only_log_leaves_cuda_events_to_the_wrong_bottleneck_item() -> None:
    catalog = FakeCatalog(
        [FakeEntry("cuda-event-instrumentation", "CUDA events", ("cuda events",), ("any",))]
    )
    diagnosis = diagnose_log(log_of(_cpu_log("cpu")), catalog=catalog, family="normalization")
    assert diagnosis.finding(P.MISSING_FUNDAMENTAL) is None
    assert _check(diagnosis, P.MISSING_FUNDAMENTAL) == (
        "cuda-event-instrumentation is left to item 4 (wrong bottleneck), which says what a "
        "log timed only on a CPU lacks: every timing names a CPU as its device (GPU: cpu)."
    )
    wrong = diagnosis.finding(P.WRONG_BOTTLENECK)
    assert wrong is not None and "host-clock timings" in wrong.summary
    assert diagnosis.root_causes[0].startswith("Wrong bottleneck:")
    # Timed on a GPU without a profile, the fundamental is missing as before.
    on_gpu = diagnose_log(log_of(_cpu_log("NVIDIA H100")), catalog=catalog, family="normalization")
    missing = on_gpu.finding(P.MISSING_FUNDAMENTAL)
    assert missing is not None and "cuda-event-instrumentation" in missing.summary


# --- the correctness sentence --------------------------------------------------------------


def test_a_failure_before_the_latest_pass_is_not_among_the_latest_attempts() -> None:
    experiments = [
        exp(1, 100.0, status=Status.BASELINE),
        exp(2, 50.0),
        exp(3, 50.0, status=Status.REVERTED),
        exp(4, None, status=Status.FAILED, correctness=Correctness.FAIL),
        exp(5, 50.0, status=Status.REVERTED),
    ]
    diagnosis = diagnose_log(log_of(experiments))
    assert _check(diagnosis, P.CORRECTNESS_WALL) == (
        "1 failure in the log (exp 4), none among the latest attempts (those after the "
        "latest pass, exp 5): no wall (needs 3 in a row)."
    )
    experiments.append(exp(6, None, status=Status.FAILED, correctness=Correctness.FAIL))
    diagnosis = diagnose_log(log_of(experiments))
    assert _check(diagnosis, P.CORRECTNESS_WALL) == (
        "2 failures in the log (exps 4, 6), 1 among the latest attempts (those after the "
        "latest pass, exp 5): no wall (needs 3 in a row)."
    )


# --- the header ----------------------------------------------------------------------------


@pytest.mark.usefixtures("rmsnorm_signature")
def test_the_header_lists_the_judged_layouts_and_counts_bench_rows_as_rows(
    tmp_path: Path,
) -> None:
    from kernelopt.bench import Measurement, append_rows, row_from_measurement

    root = _rmsnorm_log(tmp_path / "log", "hidden == 1", [1] * 6 + [4097] * 4)
    header = diagnose(root).render_plan().splitlines()[2]
    # The only JSONL file is the trace, named as not judged.
    assert header.endswith("[experiment-folders, seed].")
    measured = Measurement(samples=[40.0, 41.0, 42.0], gpu="cpu", backend="cpu-perf-counter")
    rows = [
        row_from_measurement(
            measured, op="rmsnorm", impl=impl, config={"rows": 4, "hidden": 4097}, directory=root
        )
        for impl in ("v1", "v2")
    ]
    (root / "runs").mkdir()
    append_rows(str(root / "runs" / "bench.jsonl"), rows)
    plan = diagnose(root).render_plan()
    assert "[experiment-folders, seed]." in plan
    # Rows of kernelopt.bench's writer are benchmark rows, however many points they cover:
    # named as not read, never counted as experiments.
    assert (
        "runs/bench.jsonl: benchmark rows (2 implementations at 1 point), not an experiment "
        "history; not read as one" in plan
    )
    assert "Read 2 experiments" in plan


# --- a stale profile with a registered signature -------------------------------------------


def _make_stale(root: Path) -> None:
    later = time.time() + 7200
    os.utime(root / "calls.jsonl", (later, later))


@pytest.mark.usefixtures("rmsnorm_signature")
def test_a_stale_profile_with_a_registered_signature_is_remade_as_it_was_made(
    tmp_path: Path,
) -> None:
    root = _rmsnorm_log(tmp_path / "log", "rows == 0", [1] * 6 + [4097] * 4)
    _make_stale(root)
    finding = diagnose(root).finding(P.OVERLOOKED_SHORTCUT)
    assert finding is not None
    first = finding.actions[0].text
    assert first.startswith(
        "Re-make the workload profile from the current trace the way it was made, with the "
        "signature `rmsnorm` registered"
    )
    assert "kernelopt inspect calls.jsonl" not in first
    assert any("with the signature `rmsnorm` registered" in m for m in finding.missing)


def test_a_stale_profile_of_built_in_signatures_is_remade_with_inspect(tmp_path: Path) -> None:
    # The same log without the signature: the profile names none, and the command line
    # makes it again as it was made.
    root = _rmsnorm_log(tmp_path / "log", "rows == 0", [1] * 6 + [4097] * 4)
    _make_stale(root)
    finding = diagnose(root).finding(P.OVERLOOKED_SHORTCUT)
    assert finding is not None
    assert finding.actions[0].text.startswith(
        "Re-run the workload inspector on the current trace before acting on its shortcuts "
        "(`kernelopt inspect calls.jsonl --write experiments/workload_profile.md`)"
    )
