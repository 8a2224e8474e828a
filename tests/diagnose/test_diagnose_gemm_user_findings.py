"""What a compute-bound Triton GEMM effort (fused bias + GELU epilogue) reads in its plan:
a kept regression named before anything else, software pipelining judged as work on both
sides, dot precision advised only where float32 inputs are shown, and the split-K knob
named as the log writes it."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from kernelopt.diagnose import Pathology, diagnose, diagnosis_from_dict
from kernelopt.diagnose.engine import diagnose_log
from kernelopt.experiments import Experiment, SourceRef
from kernelopt.experiments.log import Fact, Point, ProfileFacts
from kernelopt.experiments.records import Status

from .conftest import FakeCatalog, exp, kernel, log_of

P = Pathology
POINT = {"m": 4096, "n": 4096, "k": 4096}


def _write_log(
    root: Path, rows: list[tuple[int, str, float, str, str | None]], gpu: str = "NVIDIA H100"
) -> Path:
    """A GEMM log of ``(number, title, median us, status, verdict)`` rows, written as
    ``kernelopt.bench`` writes experiment folders, with a kernel file and a CLAUDE.md."""
    from kernelopt.bench import Measurement, to_result_row, write_experiment

    (root / "kernels").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("# GEMM + bias + GELU (Triton)\n\nKernel: kernels/gemm.py\n")
    (root / "kernels/gemm.py").write_text("import triton\n\n@triton.jit\ndef k(a_ptr):\n    pass\n")
    base = Measurement(samples=[399.0, 400.0, 401.0], gpu=gpu)
    for number, title, median, status, verdict in rows:
        measured = Measurement(samples=[median - 1, median, median + 1], gpu=gpu)
        write_experiment(
            root / "experiments",
            experiment=number,
            title=title,
            status=status,
            correctness="PASS",
            gpu=measured,
            rows=[to_result_row(measured, point=POINT, impl=f"v{number}", speedup=base)],
            verdict=verdict,
        )
    return root


REGRESSED = [
    (1, "triton v1 32x32x32", 400.0, "BASELINE", None),
    (2, "BLOCK 128x128x32 tiles", 300.0, "KEPT", None),
    (3, "grouped program order for L2 reuse", 250.0, "KEPT", None),
    (4, "num_stages=5 deeper pipelining", 330.0, "KEPT", "SLOW 1.320x exp 3's time"),
    (5, "num_warps=8 on top of exp 4", 328.0, "KEPT", None),
]


def test_a_kept_regression_is_named_with_both_experiments(tmp_path: Path) -> None:
    diagnosis = diagnose(_write_log(tmp_path / "reglog", REGRESSED))
    regression = diagnosis.summary.regression
    assert regression is not None
    assert (regression.experiment, regression.best, regression.kept) == (5, 3, (4, 5))
    assert (regression.value, regression.best_value, regression.unit) == (328.0, 250.0, "us")
    assert regression.slower == pytest.approx(0.312)
    assert regression.point == "k=4096 m=4096 n=4096" and not regression.other_gpus
    plan = diagnosis.render_plan()
    assert (
        "Kept regression at k=4096 m=4096 n=4096: the kernel as it stands, exp 5 (328 us), "
        "is 31.2% slower than exp 3 (250 us)." in plan
    )
    assert diagnosis.root_causes[0].startswith("Kept regression: the kernel as it stands (exp 5")
    assert "No pathology found" not in plan and "Keep going" not in plan
    first = plan.split("## Plan\n\n", 1)[1].split("\n", 1)[0]
    assert first.startswith("1. Go back to exp 3's version (250 us at k=4096 m=4096 n=4096)")
    # The nine checks stay nine: the regression is the log's state, not a tenth item.
    assert len(diagnosis.checks) == 9
    data = json.loads(diagnosis.to_json())
    assert data["summary"]["regression"]["best"] == 3
    assert diagnosis_from_dict(data).summary.regression == regression


def test_the_command_exits_1_on_a_kept_regression_alone(tmp_path: Path) -> None:
    from kernelopt import cli

    root = _write_log(tmp_path / "reglog", REGRESSED)
    assert not diagnose(root).findings
    assert cli.main(["diagnose", str(root)]) == 1


def test_a_kept_kernel_far_behind_its_own_best_is_named_past_the_baseline(
    tmp_path: Path,
) -> None:
    # The torch baseline holds the best; the kernel's exp 4 was kept 24.5x slower than its
    # exp 3, and exp 5 (neutral) is no kept version.
    rows = [
        (1, "torch eager baseline", 34.4, "BASELINE", None),
        (2, "triton tiled GEMM 32x32x32", 52014.0, "KEPT", None),
        (3, "BLOCK 64x64x32 tiles", 13917.0, "KEPT", None),
        (4, "BLOCK_K=16 and 16x16 tiles", 340931.0, "KEPT", None),
        (5, "num_warps=8 num_stages=4", 343400.0, "NEUTRAL", None),
    ]
    diagnosis = diagnose(_write_log(tmp_path / "proj", rows, gpu="cpu"))
    regression = diagnosis.summary.regression
    assert regression is not None and (regression.experiment, regression.best) == (4, 3)
    assert "exp 4 (340931 us), is 24.5x slower than exp 3 (13917 us)" in diagnosis.render_plan()


def test_a_regression_timed_on_another_gpu_asks_for_one_run(tmp_path: Path) -> None:
    log = log_of(
        [
            exp(1, 400.0, status=Status.BASELINE),
            attrs.evolve(exp(2, 250.0), gpu="NVIDIA H200"),
            attrs.evolve(exp(3, 330.0), gpu="NVIDIA H100"),
        ]
    )
    diagnosis = diagnose_log(log)
    regression = diagnosis.summary.regression
    assert regression is not None and regression.other_gpus
    plan = diagnosis.render_plan()
    assert "1. Time exp 3's and exp 2's versions in one run on one GPU" in plan


def _speedups(values: list[tuple[float, Status]]) -> list[Experiment]:
    return [
        attrs.evolve(exp(n, status=status), speedup=value)
        for n, (value, status) in enumerate(values, start=1)
    ]


def test_a_regression_in_a_log_of_speedups_is_a_lower_speedup() -> None:
    log = log_of(_speedups([(2.0, Status.KEPT), (2.5, Status.KEPT), (1.9, Status.KEPT)]))
    regression = diagnose_log(log).summary.regression
    assert regression is not None and regression.kind == "speedup"
    assert regression.slower == pytest.approx(2.5 / 1.9 - 1)
    assert "exp 3 (1.9x), is 31.6% slower than exp 2 (2.5x)" in diagnose_log(log).render_plan()


@pytest.mark.parametrize(
    "experiments",
    [
        # A slower try that was reverted is not the kernel as it stands.
        [
            exp(1, 400.0, status=Status.BASELINE),
            exp(2, 250.0),
            exp(3, 330.0, status=Status.REVERTED),
        ],
        # No statuses: every experiment may be a try.
        [exp(1, 400.0, status=None), exp(2, 250.0, status=None), exp(3, 330.0, status=None)],
        # Within the 5 % a step needs to count.
        [exp(1, 400.0, status=Status.BASELINE), exp(2, 250.0), exp(3, 260.0)],
        # A kernel behind its baseline has regressed from nothing of its own.
        [exp(1, 100.0, status=Status.BASELINE), exp(2, 300.0), exp(3, 200.0)],
        # Exp 3's A/B against exp 2 in its own run says it is faster (the runs drifted):
        # exp 4 stands 4.3 % behind exp 3, not 6.4 % behind exp 2's number of another run.
        [
            exp(1, 400.0, status=Status.BASELINE),
            exp(2, 250.0),
            attrs.evolve(exp(3, 255.0), speedup=1.02),
            exp(4, 266.0),
        ],
        _speedups([(2.0, Status.KEPT), (2.5, Status.KEPT), (1.9, Status.REVERTED)]),
    ],
    ids=[
        "reverted",
        "no-statuses",
        "within-noise",
        "behind-baseline",
        "same-run-ab",
        "speedup-reverted",
    ],
)
def test_no_regression_where_the_kernel_stands_at_its_best(experiments: list[Experiment]) -> None:
    diagnosis = diagnose_log(log_of(experiments))
    assert diagnosis.summary.regression is None
    assert "Kept regression" not in diagnosis.render_plan()
    assert "regression" not in diagnosis.to_dict()["summary"]


def test_no_regression_across_trial_points_or_gpus() -> None:
    at = [
        exp(1, 400.0, status=Status.BASELINE),
        attrs.evolve(exp(2, 250.0), headline_point="m=4096 n=4096 k=4096"),
        attrs.evolve(exp(3, 330.0), headline_point="m=8192 n=8192 k=8192"),
    ]
    assert diagnose_log(log_of(at)).summary.regression is None
    # The log moved to a slower GPU: its kernel there is compared with its times there.
    moved = [
        exp(1, 400.0, status=Status.BASELINE),
        attrs.evolve(exp(2, 250.0), gpu="NVIDIA H200"),
        attrs.evolve(exp(3, 320.0), gpu="NVIDIA H100"),
        attrs.evolve(exp(4, 318.0), gpu="NVIDIA H100"),
    ]
    assert diagnose_log(log_of(moved)).summary.regression is None


def _regimes(number: int, tiny: float, causal: float) -> Experiment:
    """A kept experiment timed at two named regimes, no headline."""
    ref = SourceRef(path="experiments/summary.md", line=2 + number)
    points = tuple(
        Point(name=name, value=value, unit="us", kind="latency", source=ref)
        for name, value in (("tiny", tiny), ("causal", causal))
    )
    return attrs.evolve(exp(number), points=points)


def test_a_regime_traded_for_another_is_no_regression() -> None:
    base = exp(1, status=Status.BASELINE, description="torch eager")
    traded = [base, _regimes(2, 100.0, 200.0), _regimes(3, 130.0, 150.0)]
    assert diagnose_log(log_of(traded)).summary.regression is None
    lost = diagnose_log(log_of([base, _regimes(2, 100.0, 200.0), _regimes(3, 130.0, 201.0)]))
    regression = lost.summary.regression
    assert regression is not None and (regression.point, regression.best) == ("tiny", 2)
    assert "Kept regression at tiny: the kernel as it stands, exp 3 (130 us)" in lost.render_plan()


COMPUTE_BOUND = ProfileFacts(
    bottleneck="compute",
    metrics={"tc_pct": 55.0, "dram_pct": 4.0},
    facts=(
        Fact(
            text="Bottleneck: Compute-bound (tc_pct 55, dram_pct 4)",
            source=SourceRef(path="experiments/profile.md", line=3),
        ),
    ),
    source=SourceRef(path="experiments/profile.md"),
)


def test_software_pipelining_is_no_wrong_side_work_on_a_compute_bound_gemm(
    fake_catalog: FakeCatalog,
) -> None:
    pipelined = ("software-pipelining",)
    experiments = [
        exp(1, 400.0, status=Status.BASELINE, description="triton v1 128x128x32 tiles"),
        exp(2, 320.0, description="num_stages=3 software pipelining of the K loop", tags=pipelined),
        exp(
            3,
            318.0,
            status=Status.REVERTED,
            description="block pointers (TMA) for A and B tile loads",
            tags=("block-pointers-tma",),
        ),
        exp(4, 319.0, status=Status.REVERTED, description="num_stages=4", tags=pipelined),
        exp(
            5,
            319.5,
            status=Status.REVERTED,
            description="num_stages=5 with BLOCK_K=64",
            tags=pipelined,
        ),
    ]
    diagnosis = diagnose_log(log_of(experiments, profile=COMPUTE_BOUND), catalog=fake_catalog)
    assert diagnosis.finding(P.WRONG_BOTTLENECK) is None
    sentence = next(c.sentence for c in diagnosis.checks if c.pathology is P.WRONG_BOTTLENECK)
    assert "exps 4, 5 pipeline loads under the math, which serves either side" in sentence


# Memory-side attempts on a compute-bound kernel: the finding fires and lists its remedies.
MEMORY_SIDE = [
    exp(1, 274.1, status=Status.BASELINE, description="torch eager"),
    exp(2, 157.3, description="Triton kernel"),
    exp(3, 219.1, status=Status.REVERTED, description="coalesced vectorized loads"),
    exp(4, 219.6, status=Status.REVERTED, description="smaller tiles, more loads in flight"),
    exp(5, 230.0, status=Status.REVERTED, description="fewer bytes per tile"),
]
FP16_GEMM = """import triton
import triton.language as tl


@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: int):
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + k)
        b = tl.load(b_ptr + k)
        acc += tl.dot(a, b, out_dtype=tl.float32)
    tl.store(c_ptr, acc.to(tl.float16))
"""


def _remedies(fake_catalog: FakeCatalog, **fields: object) -> list[str | None]:
    log = log_of(MEMORY_SIDE, profile=COMPUTE_BOUND, **fields)
    wrong = diagnose_log(log, catalog=fake_catalog).finding(P.WRONG_BOTTLENECK)
    assert wrong is not None
    return [a.catalog_id for a in wrong.actions]


def test_a_float32_accumulator_is_no_float32_input(fake_catalog: FakeCatalog) -> None:
    assert "dot-input-precision" not in _remedies(fake_catalog, kernels=(kernel(FP16_GEMM),))
    cast = FP16_GEMM.replace("a = tl.load(a_ptr + k)", "a = tl.load(a_ptr + k).to(tl.float32)")
    assert "dot-input-precision" in _remedies(fake_catalog, kernels=(kernel(cast),))
    ieee = FP16_GEMM.replace("out_dtype=tl.float32)", 'input_precision="ieee")')
    assert "dot-input-precision" in _remedies(fake_catalog, kernels=(kernel(ieee),))


@pytest.mark.parametrize(
    ("dtype", "offered"), [("float16", False), ("bfloat16", False), ("float32", True)]
)
def test_dot_precision_follows_the_workload_dtypes_without_a_kernel(
    tmp_path: Path, fake_catalog: FakeCatalog, dtype: str, offered: bool
) -> None:
    profile = tmp_path / "experiments" / "workload_profile.md"
    profile.parent.mkdir()
    profile.write_text(
        "| # | Calls | Signature |\n|---|---|---|\n"
        f"| 1 | 24 | a=[1,64]:{dtype} b=[64,96]:{dtype} bias=[96]:{dtype} |\n"
    )
    ids = _remedies(
        fake_catalog, root=str(tmp_path), workload_profile="experiments/workload_profile.md"
    )
    assert ("dot-input-precision" in ids) is offered


def test_the_split_k_knob_is_named_as_the_log_writes_it(fake_catalog: FakeCatalog) -> None:
    titles = [
        ("split-K=8 GEMV", 29.5),
        ("split-K=16 with atomic reduction", 29.8),
        ("split-K=2 with a second reduction pass", 29.6),
    ]
    experiments = [
        exp(
            1,
            40.0,
            status=Status.BASELINE,
            description="triton GEMV baseline, M=1",
            knobs={"M": "1"},
        ),
        exp(2, 30.0, description="split-K=4 GEMV for M=1", knobs={"K": "4", "M": "1"}),
        *(
            exp(
                n,
                value,
                status=Status.REVERTED,
                description=title,
                knobs={"K": title[8:].split()[0]},
            )
            for n, (title, value) in enumerate(titles, start=3)
        ),
    ]
    diagnosis = diagnose_log(log_of(experiments), catalog=fake_catalog)
    loop = diagnosis.finding(P.REPETITION_LOOP)
    assert loop is not None and "vary the knob split-K " in loop.summary
    assert "the knob K " not in loop.summary
    assert "Stop changing split-K one value at a time" in diagnosis.render_plan()
