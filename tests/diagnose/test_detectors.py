"""Each of the nine detectors on small in-memory logs: fires when it should, says why not."""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import pytest

from kernelopt.catalog import Catalog
from kernelopt.diagnose import (
    DiagnoseParams,
    Diagnosis,
    LocalMinimumParams,
    Pathology,
    RepetitionLoopParams,
    Severity,
    diagnose_log,
)
from kernelopt.diagnose.progress import analyze
from kernelopt.experiments import (
    Experiment,
    Fact,
    KernelSource,
    ProfileFacts,
    Recommendation,
    SourceRef,
    read_log,
)
from kernelopt.experiments.records import Correctness, Status

from .conftest import FakeCatalog, exp, kernel, log_of

REPO = Path(__file__).resolve().parents[2]


def _checked(diagnosis: object, pathology: Pathology) -> bool:
    return next(c for c in diagnosis.checks if c.pathology is pathology).checked  # type: ignore[attr-defined]


def _sentence(diagnosis: object, pathology: Pathology) -> str:
    return next(c for c in diagnosis.checks if c.pathology is pathology).sentence  # type: ignore[attr-defined]


PLATEAU = [
    exp(1, 100.0, status=Status.BASELINE, description="torch baseline"),
    exp(2, 80.0, description="Triton kernel, BLOCK_N=32", knobs={"BLOCK_N": "32"}),
    exp(3, 79.5, description="BLOCK_N=64", knobs={"BLOCK_N": "64"}),
    exp(4, 81.0, status=Status.REVERTED, description="BLOCK_N=128", knobs={"BLOCK_N": "128"}),
    exp(5, 79.2, description="num_warps=8", knobs={"num_warps": "8"}),
    exp(6, 79.0, status=Status.NEUTRAL, description="BLOCK_N=16", knobs={"BLOCK_N": "16"}),
    exp(7, 78.9, description="exp2 scale"),
]


def test_progress_stall_is_the_trailing_run_under_min_gain() -> None:
    progress = analyze(tuple(PLATEAU))
    assert [s.experiment.number for s in progress.counted(progress.stall(0.05))] == [3, 4, 5, 6, 7]
    gains = {s.experiment.number: s.gain for s in progress.steps}
    assert gains[1] is None and gains[2] == 0.2 and gains[4] == 0.0  # reverted moves nothing
    # A structural gain at the end ends the stall.
    broken = analyze((*PLATEAU, exp(8, 70.0, description="split-KV")))
    assert broken.stall(0.05) == ()


def test_repetition_loop_and_local_minimum(catalog: Catalog) -> None:
    diagnosis = diagnose_log(log_of(PLATEAU), catalog=catalog)
    loop = diagnosis.finding(Pathology.REPETITION_LOOP)
    assert loop is not None and loop.experiments == (3, 4, 6)
    assert "BLOCK_N" in loop.summary and loop.actions[0].catalog_id == "pruned-autotuning"
    plateau = diagnosis.finding(Pathology.LOCAL_MINIMUM)
    assert plateau is not None and plateau.experiments == (3, 4, 5, 6, 7)
    assert plateau.evidence[0].source == "experiments/summary.md:4"  # the best before: exp 2
    # Thresholds are parameters.
    strict = DiagnoseParams(
        local_minimum=LocalMinimumParams(min_experiments=6),
        repetition_loop=RepetitionLoopParams(min_experiments=4),
    )
    quiet = diagnose_log(log_of(PLATEAU), catalog=catalog, params=strict)
    assert (
        quiet.finding(Pathology.LOCAL_MINIMUM) is None
        and quiet.finding(Pathology.REPETITION_LOOP) is None
    )
    # Distinct ideas with a real gain at the end: neither.
    healthy = [
        *PLATEAU[:2],
        exp(3, 70.0, description="split-KV"),
        exp(4, 60.0, description="cuda graphs"),
    ]
    profiled = (
        Fact(text="ncu: DRAM 71%", source=SourceRef(path="experiments/profile.md", line=3)),
    )
    assert diagnose_log(log_of(healthy, profiling=profiled), catalog=catalog).findings == ()


def test_a_configuration_line_is_not_a_loop_on_every_knob(catalog: Catalog) -> None:
    config = {"BLOCK_N": "32", "num_stages": "2"}
    experiments = [
        exp(1, 100.0, status=Status.BASELINE),
        exp(2, 80.0, description="Triton kernel", knobs=config),
        exp(
            3,
            81.0,
            status=Status.REVERTED,
            description="wider tiles",
            knobs={**config, "BLOCK_N": "64"},
        ),
        exp(
            4,
            81.5,
            status=Status.REVERTED,
            description="eight warps",
            knobs={**config, "num_warps": "8"},
        ),
        exp(5, 80.5, status=Status.REVERTED, description="exp2 scale fold", knobs=config),
    ]
    # Every result lists num_stages=2, the value the kept kernel has: nobody changed it.
    diagnosis = diagnose_log(log_of(experiments), catalog=catalog)
    assert diagnosis.finding(Pathology.REPETITION_LOOP) is None
    # Changing it three times is a loop, whether the title says so or only the Knobs line.
    turned = [
        *experiments[:2],
        *(
            exp(
                n,
                81.0,
                status=Status.REVERTED,
                description=f"try {word}",
                knobs={**config, "num_stages": str(n)},
            )
            for n, word in ((3, "alpha"), (4, "beta"), (5, "gamma"))
        ),
    ]
    loop = diagnose_log(log_of(turned), catalog=catalog).finding(Pathology.REPETITION_LOOP)
    assert loop is not None and "num_stages" in loop.summary and loop.experiments == (3, 4, 5)


def test_local_minimum_reports_missing_numbers(catalog: Catalog) -> None:
    diagnosis = diagnose_log(
        log_of([exp(n, None, status=Status.KEPT) for n in range(1, 8)]), catalog=catalog
    )
    check = next(c for c in diagnosis.checks if c.pathology is Pathology.LOCAL_MINIMUM)
    assert not check.checked and check.missing


def test_local_minimum_names_a_numbered_best(catalog: Catalog) -> None:
    # Histories label experiments with bare numbers: the sentence says "exp 14".
    numbered = [
        attrs.evolve(exp(1, 100.0, status=Status.BASELINE), label="13"),
        attrs.evolve(exp(2, 50.0), label="14"),
        *(
            attrs.evolve(exp(n, 60.0, status=Status.REVERTED), label=str(n + 12))
            for n in range(3, 9)
        ),
    ]
    found = diagnose_log(log_of(numbered), catalog=catalog).finding(Pathology.LOCAL_MINIMUM)
    assert found is not None and "the best still comes from exp 14" in found.summary


RISKY = """
b_s = tl.dot(b_q.to(tl.float32), tl.trans(b_k))
b_s = tl.where(mask, b_s, float("-inf"))
p = tl.exp2(b_s - m)
lse = m + tl.log(l)
"""


def test_correctness_wall_with_suspects(catalog: Catalog) -> None:
    experiments = [
        exp(1, 10.0, status=Status.BASELINE),
        exp(2, 8.0),
        exp(3, 7.0, status=Status.FAILED, correctness=Correctness.FAIL),
        exp(4, None, status=None, correctness=Correctness.UNKNOWN),  # skipped
        exp(5, 6.5, status=Status.FAILED, correctness=Correctness.FAIL),
        exp(6, 6.4, status=Status.FAILED, correctness=Correctness.FAIL),
    ]
    diagnosis = diagnose_log(log_of(experiments, kernels=(kernel(RISKY),)), catalog=catalog)
    wall = diagnosis.finding(Pathology.CORRECTNESS_WALL)
    assert wall is not None and wall.experiments == (3, 5, 6) and wall.severity is Severity.HIGH
    ids = [a.catalog_id for a in wall.actions]
    assert ids[:3] == ["dot-input-precision", "lse-base-mismatch", "unguarded-fully-masked-rows"]
    # The kernel text was read and shows no bf16 accumulator: that check is answered.
    assert "bf16-accumulation" not in ids
    assert any(e.source == "kernels/k.py:5" for e in wall.evidence)  # the ln in the LSE
    assert (
        "Numeric suspects in the kernel text: dot input precision (kernels/k.py:2), "
        "LSE base (kernels/k.py:5)"
    ) in wall.summary
    # A pass in between breaks the wall; two failures are not one.
    broken = [*experiments[:3], exp(4, 6.9, correctness=Correctness.PASS), *experiments[4:]]
    below = diagnose_log(log_of(broken), catalog=catalog)
    assert not next(c for c in below.checks if c.pathology is Pathology.CORRECTNESS_WALL).checked
    # No wall: the two latest failures only put fixing them first in the plan.
    advice = below.finding(Pathology.CORRECTNESS_WALL)
    assert advice is not None and advice.severity is Severity.LOW and advice.experiments == (5, 6)


BF16_ATTENTION = """
import triton.language as tl

@triton.jit
def attend(Q, K, V, O):
    q = tl.load(Q)
    k = tl.load(K)
    v = tl.load(V)
    s = tl.dot(q, tl.trans(k))
    m = tl.max(s, 1)
    p = tl.exp(s - m[:, None])
    l = tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v)
    tl.store(O, acc / l[:, None])
"""


def test_a_wall_with_an_unknown_verdict_inside_says_so(catalog: Catalog) -> None:
    # exp 6 records no verdict: exps 5, 7, 8 are the latest with one, not "the last 3".
    experiments = [
        exp(1, 10.0, status=Status.BASELINE),
        exp(2, 8.0),
        *(exp(n, 9.0, status=Status.FAILED, correctness=Correctness.FAIL) for n in (5, 7, 8)),
    ]
    experiments.insert(3, exp(6, 9.0, status=Status.REVERTED, correctness=Correctness.UNKNOWN))
    wall = diagnose_log(log_of(experiments), catalog=catalog).finding(Pathology.CORRECTNESS_WALL)
    assert wall is not None and wall.experiments == (5, 7, 8)
    assert wall.summary.startswith(
        "The latest 3 attempts with a verdict (exps 5, 7, 8) all fail correctness "
        "(exp 6 records none)."
    )
    # One after the run is among the latest attempts too.
    experiments.append(exp(9, 9.0, status=Status.REVERTED, correctness=Correctness.UNKNOWN))
    wall = diagnose_log(log_of(experiments), catalog=catalog).finding(Pathology.CORRECTNESS_WALL)
    assert wall is not None and "(exps 6, 9 record none)" in wall.summary


def test_correctness_wall_on_bf16_dots_is_worded_neutrally(catalog: Catalog) -> None:
    failing = [
        exp(1, 10.0, status=Status.BASELINE),
        exp(2, 8.0, description="fused kernel"),
        exp(3, 7.0, correctness=Correctness.FAIL, description="skip the rope part of QK^T"),
        exp(4, 6.0, correctness=Correctness.FAIL, description="drop the rescale"),
        exp(5, 5.0, correctness=Correctness.FAIL, description="replace PV by a row sum"),
    ]
    log = log_of(failing, kernels=(kernel(BF16_ATTENTION),))
    wall = diagnose_log(log, catalog=catalog).finding(Pathology.CORRECTNESS_WALL)
    assert wall is not None and wall.experiments == (3, 4, 5)
    # tf32 settings do not touch bf16/fp16 dots: no precision advice, and no "numerical".
    ids = [a.catalog_id for a in wall.actions]
    assert "dot-input-precision" not in ids
    assert "numerical" not in wall.summary and "No numeric suspect" in wall.summary
    assert wall.actions[0].catalog_id is None and "exp 2, the last that passed" in (
        wall.actions[0].text
    )
    # Without any kernel text the dot check stays on the list, worded as a condition.
    blind = diagnose_log(log_of(failing), catalog=catalog).finding(Pathology.CORRECTNESS_WALL)
    assert blind is not None
    dot = next(a for a in blind.actions if a.catalog_id == "dot-input-precision")
    assert dot.text.startswith("If a tl.dot takes float32 operands")


def test_wrong_bottleneck_and_no_profile(catalog: Catalog) -> None:
    experiments = [
        exp(1, 50.0, status=Status.BASELINE),
        exp(2, 40.0, description="Triton kernel"),
        exp(3, 40.1, status=Status.NEUTRAL, description="unroll the loop for more ILP"),
        exp(4, 40.2, status=Status.NEUTRAL, description="tensor core MMA tile"),
        exp(5, 40.0, status=Status.NEUTRAL, description="fewer instructions per element"),
    ]
    memory_bound = ProfileFacts(
        bottleneck="memory",
        facts=(
            Fact(
                text="### Bottleneck: Memory-bound",
                source=SourceRef(path="experiments/profile.md", line=3),
            ),
        ),
        source=SourceRef(path="experiments/profile.md"),
    )
    diagnosis = diagnose_log(log_of(experiments, profile=memory_bound), catalog=catalog)
    wrong = diagnosis.finding(Pathology.WRONG_BOTTLENECK)
    assert wrong is not None and wrong.experiments == (3, 4, 5)
    assert wrong.evidence[0].source == "experiments/profile.md:3"
    blind = diagnose_log(log_of(experiments), catalog=catalog).finding(Pathology.WRONG_BOTTLENECK)
    assert blind is not None and "CUDA events" in blind.summary
    assert blind.actions[0].catalog_id == "cuda-event-instrumentation"
    metrics_only = [exp(1, 50.0, metrics={"dram_pct": 88.0, "tc_pct": 4.0}), *experiments[1:]]
    assert (
        diagnose_log(log_of(metrics_only), catalog=catalog).finding(Pathology.WRONG_BOTTLENECK)
        is not None
    )


def test_a_bound_from_a_results_metrics_cites_that_result(catalog: Catalog) -> None:
    # profile.md measured 30 % DRAM; the latest result's 85 % is what places the kernel,
    # so the evidence must point at that result, not at the profile.
    experiments = [
        exp(1, 50.0, status=Status.BASELINE),
        exp(2, 40.0, description="Triton kernel"),
        exp(3, 40.1, status=Status.NEUTRAL, description="unroll the loop for more ILP"),
        exp(4, 40.2, status=Status.NEUTRAL, description="tensor core MMA tile"),
        exp(
            5,
            40.0,
            status=Status.NEUTRAL,
            description="fewer instructions per element",
            metrics={"dram_pct": 85.0, "tc_pct": 4.0},
        ),
    ]
    profile = ProfileFacts(
        bottleneck=None,
        metrics={"dram_pct": 30.0, "tc_pct": 10.0},
        source=SourceRef(path="experiments/profile.md"),
    )
    wrong = diagnose_log(log_of(experiments, profile=profile), catalog=catalog).finding(
        Pathology.WRONG_BOTTLENECK
    )
    assert wrong is not None
    assert wrong.evidence[0].quote == "dram_pct=85, tc_pct=4"
    assert wrong.evidence[0].source == "experiments/summary.md:7"
    # Metrics the profile alone holds are cited there.
    alone = [*experiments[:4], exp(5, 40.0, status=Status.NEUTRAL, description="fewer FMAs")]
    hot = attrs.evolve(profile, metrics={"dram_pct": 85.0, "tc_pct": 4.0})
    wrong = diagnose_log(log_of(alone, profile=hot), catalog=catalog).finding(
        Pathology.WRONG_BOTTLENECK
    )
    assert wrong is not None and wrong.evidence[0].source == "experiments/profile.md"


COMPUTE_BOUND = ProfileFacts(
    bottleneck="compute",
    metrics={"arith_intensity": 228.0, "ridge": 163.0, "tc_pct": 33.4, "dram_pct": 23.9},
    facts=(
        Fact(
            text="### Bottleneck: Compute-bound",
            source=SourceRef(path="experiments/profile.md", line=6),
        ),
    ),
    source=SourceRef(path="experiments/profile.md"),
)


def test_a_new_best_is_not_a_wrong_bottleneck_and_split_kv_is_not_memory_work(
    catalog: Catalog,
) -> None:
    experiments = [
        exp(1, 274.1, status=Status.BASELINE, description="torch eager"),
        exp(
            2,
            157.3,
            description="split-KV kernel: 2 KV splits and an LSE combine",
            tags=("split-kv-flash-decoding", "split-kv-lse-combine"),
        ),
        exp(3, 171.0, status=Status.REVERTED, description="4 KV splits (256 programs)"),
        exp(4, 219.1, status=Status.REVERTED, description="deeper prefetch of KV loads"),
    ]
    quiet = diagnose_log(log_of(experiments, profile=COMPUTE_BOUND), catalog=catalog)
    # exp 2 gained 42.6 %: it fit the kernel; exp 3 adds parallelism, not memory work. One
    # memory-side attempt is not a pattern.
    assert quiet.finding(Pathology.WRONG_BOTTLENECK) is None
    sentence = _sentence(quiet, Pathology.WRONG_BOTTLENECK)
    assert "1 of the 2 recent attempts judged aim at memory" in sentence
    assert "exp 2, a new best by 42.6%, not counted" in sentence


WELL_EQUIPPED = """
import triton.language as tl
LOG2E = 1.4426950408889634

@triton.jit
def k(Q, K, BLOCK_H: tl.constexpr):
    p = tl.exp2(s * sm_scale_log2 - m)
"""


# A compute-bound kernel whose last three attempts work on memory.
MEMORY_SIDE_ATTEMPTS = (
    exp(1, 274.1, status=Status.BASELINE, description="torch eager"),
    exp(2, 157.3, description="Triton kernel"),
    exp(3, 219.1, status=Status.REVERTED, description="num_stages=3: deeper prefetch"),
    exp(4, 219.6, status=Status.REVERTED, description="smaller tiles, more loads in flight"),
    exp(5, 230.0, status=Status.REVERTED, description="coalesced vectorized KV loads"),
)


def test_wrong_bottleneck_actions_skip_techniques_the_kernel_has(catalog: Catalog) -> None:
    experiments = [
        *MEMORY_SIDE_ATTEMPTS,
        exp(6, 171.0, status=Status.REVERTED, description="TMA", tags=("block-pointers-tma",)),
    ]
    log = log_of(experiments, profile=COMPUTE_BOUND, kernels=(kernel(WELL_EQUIPPED),))
    wrong = diagnose_log(log, catalog=catalog).finding(Pathology.WRONG_BOTTLENECK)
    # TMA tile loads feed the tensor cores: exp 6 aimed at the right resource.
    assert wrong is not None and wrong.experiments == (3, 4, 5)
    ids = [a.catalog_id for a in wrong.actions]
    # exp2 with the folded scale and head grouping are in the source; pipelining is the
    # memory-side work the finding is about.
    assert "exp2-folded-scale" not in ids and "head-grouping-mma-tile" not in ids
    assert "software-pipelining" not in ids
    assert ids[0] == "block-pointers-tma"
    assert "tried before (exp 6, 171 us, REVERTED)" in wrong.actions[0].text
    bare = log_of(experiments, profile=COMPUTE_BOUND, kernels=(kernel("x = 1\n"),))
    plain = diagnose_log(bare, catalog=catalog).finding(Pathology.WRONG_BOTTLENECK)
    assert plain is not None and [a.catalog_id for a in plain.actions] == [
        "block-pointers-tma",
        "exp2-folded-scale",
        "head-grouping-mma-tile",
    ]


def test_dot_precision_is_advised_only_for_float32_dots(fake_catalog: FakeCatalog) -> None:
    experiments = MEMORY_SIDE_ATTEMPTS
    ids = {}
    for name, source in (("bf16", "acc = tl.dot(q, k)\n"), ("fp32", "q = q.to(tl.float32)\n")):
        log = log_of(experiments, profile=COMPUTE_BOUND, kernels=(kernel(source),))
        wrong = diagnose_log(log, catalog=fake_catalog).finding(Pathology.WRONG_BOTTLENECK)
        assert wrong is not None
        ids[name] = [a.catalog_id for a in wrong.actions]
    # bf16 dots already run at the full tensor-core rate; tf32 is advice for float32 ones.
    assert ids == {
        "bf16": ["head-grouping-mma-tile"],
        "fp32": ["head-grouping-mma-tile", "dot-input-precision"],
    }


def test_two_memory_attempts_of_six_are_not_the_efforts_direction(catalog: Catalog) -> None:
    experiments = [
        exp(1, 100.0, status=Status.BASELINE, description="first kernel"),
        exp(2, 99.0, status=Status.REVERTED, description="num_stages=3: deeper prefetch"),
        exp(3, 99.5, status=Status.REVERTED, description="coalesced vectorized KV loads"),
        exp(4, 99.2, status=Status.REVERTED, description="grid order by sequence"),
        exp(5, 99.4, status=Status.REVERTED, description="merge in the main kernel"),
        exp(6, 99.1, status=Status.REVERTED, description="persistent programs"),
        exp(7, 99.3, status=Status.REVERTED, description="uneven pieces"),
    ]
    quiet = diagnose_log(log_of(experiments, profile=COMPUTE_BOUND), catalog=catalog)
    assert quiet.finding(Pathology.WRONG_BOTTLENECK) is None
    assert "2 of the 6 recent attempts judged aim at memory" in _sentence(
        quiet, Pathology.WRONG_BOTTLENECK
    )


def test_the_kernels_own_name_is_not_a_repeated_idea(catalog: Catalog) -> None:
    titles = [
        "seesaw kernel: output tiles written by TMA",
        "seesaw kernel: two pieces merged by the second",
        "seesaw kernel: masking only the last tile",
        "seesaw kernel: the query tile in two halves",
    ]
    experiments = [exp(1, 100.0, status=Status.BASELINE, description="seesaw kernel")]
    experiments += [
        exp(n, 99.0 + n / 10, status=Status.REVERTED, description=t)
        for n, t in enumerate(titles, start=2)
    ]
    named = log_of(experiments, kernels=(kernel("x = 1\n", path="kernels/mla/seesaw.py"),))
    assert diagnose_log(named, catalog=catalog).finding(Pathology.REPETITION_LOOP) is None
    # Without the kernel's file to name it, 'seesaw' reads as an idea tried four times.
    unnamed = diagnose_log(log_of(experiments), catalog=catalog)
    loop = unnamed.finding(Pathology.REPETITION_LOOP)
    assert loop is not None and "'seesaw'" in loop.summary


def test_next_idea_action_only_when_the_plan_has_such_items(catalog: Catalog) -> None:
    loop = [
        exp(1, 100.0, status=Status.BASELINE),
        exp(2, 80.0, description="Triton kernel"),
        *(exp(n, 81.0, status=Status.REVERTED, description=f"num_stages={n}") for n in range(3, 7)),
    ]
    profiled = (Fact(text="ncu: DRAM 71%", source=SourceRef(path="p.md", line=1)),)
    plain = diagnose_log(log_of(loop, profiling=profiled), catalog=catalog)
    assert plain.finding(Pathology.REPETITION_LOOP) is not None
    assert plain.finding(Pathology.MISSING_FUNDAMENTAL) is None
    assert plain.finding(Pathology.IGNORED_PRIOR_RESEARCH) is None
    assert "Take the next idea" not in plain.render_plan()
    advice = Recommendation(
        text="split the KV sequence across programs (split-KV)",
        source=SourceRef(path="experiments/exp_2/plan.md", line=5),
        experiment=2,
        after=2,
        catalog_ids=("split-kv-flash-decoding",),
    )
    advised = diagnose_log(
        log_of(loop, profiling=profiled, recommendations=(advice,)), catalog=catalog
    )
    assert advised.finding(Pathology.IGNORED_PRIOR_RESEARCH) is not None
    assert "Take the next idea from the prior-research items of this plan." in (
        advised.render_plan()
    )


def test_missing_fundamental(catalog: Catalog, fake_catalog: FakeCatalog) -> None:
    experiments = [
        exp(1, 10.0, status=Status.BASELINE),
        exp(2, 8.0, description="decode kernel BLOCK_N=64"),
    ]
    profiled = (Fact(text="ncu: 41% DRAM", source=SourceRef(path="p.md")),)
    row_kernel = kernel("m_i = ...\nl_i = ...\nfor start in range(0, n, BLOCK_N):\n    pass\n")
    log = log_of(experiments, kernels=(row_kernel,), profiling=profiled)
    # The built-in catalog: split-KV is fundamental for decode attention; m_i/l_i show
    # online softmax is there; profiling lines show instrumentation is.
    real = diagnose_log(log, catalog=catalog, family="decode-attention")
    found = real.finding(Pathology.MISSING_FUNDAMENTAL)
    assert found is not None
    ids = [a.catalog_id for a in found.actions]
    assert "split-kv-flash-decoding" in ids
    assert "online-softmax" not in ids and "cuda-event-instrumentation" not in ids
    # Any catalog-like object works; with it the checks are exact.
    fake = diagnose_log(log, catalog=fake_catalog, family="decode-attention")
    only = fake.finding(Pathology.MISSING_FUNDAMENTAL)
    assert only is not None and [a.catalog_id for a in only.actions] == ["split-kv-flash-decoding"]
    split = kernel("NUM_SPLITS: tl.constexpr\nm_i = 0\nl_i = 0\n")
    has_it = log_of(experiments, kernels=(split,), profiling=profiled)
    done = diagnose_log(has_it, catalog=fake_catalog, family="decode-attention")
    assert done.finding(Pathology.MISSING_FUNDAMENTAL) is None
    tried = [*experiments, exp(3, 9.0, status=Status.REVERTED, tags=("split-kv-flash-decoding",))]
    tried_log = log_of(tried, kernels=(row_kernel,), profiling=profiled)
    done = diagnose_log(tried_log, catalog=fake_catalog, family="decode-attention")
    assert done.finding(Pathology.MISSING_FUNDAMENTAL) is None
    unknown = diagnose_log(log_of(experiments), catalog=catalog)
    assert any("family" in m for c in unknown.checks for m in c.missing)


def test_profiling_metrics_in_results_count_as_instrumentation(
    fake_catalog: FakeCatalog,
) -> None:
    # Item 4 places the kernel by the metrics a result recorded; item 5 must not then call
    # the measurement that produced them missing.
    experiments = [
        exp(1, 10.0, status=Status.BASELINE),
        exp(2, 8.0, description="decode kernel", metrics={"dram_pct": 82.0, "tc_pct": 5.0}),
    ]
    split = kernel("NUM_SPLITS: tl.constexpr\nm_i = 0\nl_i = 0\n")
    diagnosis = diagnose_log(
        log_of(experiments, kernels=(split,)), catalog=fake_catalog, family="decode-attention"
    )
    assert "memory-bound" in _sentence(diagnosis, Pathology.WRONG_BOTTLENECK)
    assert diagnosis.finding(Pathology.MISSING_FUNDAMENTAL) is None
    assert "cuda-event-instrumentation" in _sentence(diagnosis, Pathology.MISSING_FUNDAMENTAL)


def _snapshot(lines: int, configs: str, number: int):  # type: ignore[no-untyped-def]
    body = "\n".join(f"x{i} = {i}" for i in range(lines))
    text = (
        f"import triton\n{body}\n@triton.autotune(configs={configs}, key=[])\n"
        "@triton.jit\ndef k(A: tl.constexpr):\n    pass\n"
    )
    return kernel(text, path=f"experiments/exp_{number}/k.py", role="snapshot", experiment=number)


def test_over_engineering(catalog: Catalog) -> None:
    experiments = [
        exp(n, 50.0 - (5 if n == 2 else 0) - 0.1 * n, status=Status.KEPT) for n in range(1, 7)
    ]
    grown = tuple(
        _snapshot(
            20 + 15 * n,
            "[triton.Config({}) for a in range(10) for b in range(10) for c in range(100)]"
            if n >= 4
            else "[triton.Config({})]",
            n,
        )
        for n in range(2, 7)
    )
    found = diagnose_log(log_of(experiments, kernels=grown), catalog=catalog).finding(
        Pathology.OVER_ENGINEERING
    )
    assert found is not None and "10,000 autotune configurations" in found.summary
    assert {a.catalog_id for a in found.actions} == {"pruned-autotuning", "autotune-explosion"}
    steady = tuple(_snapshot(30, "[triton.Config({})]", n) for n in range(2, 7))
    assert (
        diagnose_log(log_of(experiments, kernels=steady), catalog=catalog).finding(
            Pathology.OVER_ENGINEERING
        )
        is None
    )


def test_over_engineering_compares_the_kernel_with_itself(catalog: Catalog) -> None:
    experiments = [
        exp(n, 50.0 - (5 if n == 2 else 0) - 0.1 * n, status=Status.KEPT) for n in range(1, 7)
    ]
    # A kernel of 50 lines before the stall; a prototype in a file of its own, three
    # times longer, during it: not the kernel growing.
    prototype = kernel(
        "\n".join(f"y{i} = {i}" for i in range(150)) + "\n",
        path="experiments/exp_5/prototype.py",
        role="snapshot",
        experiment=5,
    )
    kernels = (_snapshot(50, "[triton.Config({})]", 2), prototype)
    log = log_of(experiments, kernels=kernels)
    assert diagnose_log(log, catalog=catalog).finding(Pathology.OVER_ENGINEERING) is None
    # The same file grown threefold: found, and (no autotune space grew) only a revert
    # is advised, not pruning the search.
    grown = (_snapshot(50, "[triton.Config({})]", 2), _snapshot(150, "[triton.Config({})]", 5))
    found = diagnose_log(log_of(experiments, kernels=grown), catalog=catalog).finding(
        Pathology.OVER_ENGINEERING
    )
    assert found is not None and "code lines" in found.summary
    assert [a.catalog_id for a in found.actions] == ["autotune-explosion"]
    # Grown only in a variant that was reverted: the kernel that stands did not grow.
    reverted = [e if e.number != 5 else exp(5, 49.0, status=Status.REVERTED) for e in experiments]
    assert (
        diagnose_log(log_of(reverted, kernels=grown), catalog=catalog).finding(
            Pathology.OVER_ENGINEERING
        )
        is None
    )


def test_ignored_prior_research(catalog: Catalog) -> None:
    recommendation = Recommendation(
        text="split the KV sequence across programs (split-KV)",
        source=SourceRef(path="experiments/exp_2/plan.md", line=5),
        experiment=2,
        after=2,
        catalog_ids=("split-kv-flash-decoding",),
    )
    experiments = [exp(n, 80.0 - 0.1 * n, description=f"BLOCK_N={16 * n}") for n in range(1, 7)]
    found = diagnose_log(
        log_of(experiments, recommendations=(recommendation,)), catalog=catalog
    ).finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert found is not None and found.evidence[0].source == "experiments/exp_2/plan.md:5"
    assert found.actions[0].catalog_id == "split-kv-flash-decoding"
    acted = [*experiments[:4], exp(5, 60.0, tags=("split-kv-flash-decoding",)), experiments[5]]
    log = log_of(acted, recommendations=(recommendation,))
    assert diagnose_log(log, catalog=catalog).finding(Pathology.IGNORED_PRIOR_RESEARCH) is None
    by_words = Recommendation(
        text="Hand-written chunked scan kernel for medium sequences",
        source=recommendation.source,
        experiment=1,
        after=2,
    )
    words = [
        *experiments[:3],
        exp(4, 79.0, description="chunked scan kernel for medium sequences"),
        *experiments[4:],
    ]
    assert (
        diagnose_log(log_of(words, recommendations=(by_words,)), catalog=catalog).finding(
            Pathology.IGNORED_PRIOR_RESEARCH
        )
        is None
    )


def test_plans_without_recommendations_are_named(catalog: Catalog) -> None:
    planned = [
        attrs.evolve(
            exp(n, 80.0 - 0.1 * n),
            sources=(SourceRef(path=f"experiments/exp_{n}/plan.md", line=1),),
        )
        for n in range(1, 4)
    ]
    ignored = Pathology.IGNORED_PRIOR_RESEARCH
    sentence = _sentence(diagnose_log(log_of(planned), catalog=catalog), ignored)
    assert sentence.startswith("3 plans read") and "recommends" in sentence
    bare = diagnose_log(log_of([exp(1, 80.0)]), catalog=catalog)
    assert _sentence(bare, ignored).startswith("No plan or research note")


def test_buffer_persistence(catalog: Catalog) -> None:
    launcher = (
        "import torch, triton\ndef run(x):\n    out = torch.empty_like(x)\n"
        "    k[(1,)](x, out)\n    return out\n"
    )
    found = diagnose_log(
        log_of([exp(1, 5.0)], kernels=(kernel(launcher),)), catalog=catalog
    ).finding(Pathology.BUFFER_PERSISTENCE)
    assert found is not None and found.evidence[0].source == "kernels/k.py:3"
    assert found.actions[0].catalog_id == "buffer-persistence"
    with_out = launcher.replace("def run(x):", "def run(x, out):").replace(
        "    out = torch.empty_like(x)\n", ""
    )
    assert (
        diagnose_log(log_of([exp(1, 5.0)], kernels=(kernel(with_out),)), catalog=catalog).finding(
            Pathology.BUFFER_PERSISTENCE
        )
        is None
    )
    none = diagnose_log(log_of([exp(1, 5.0)]), catalog=catalog)
    assert any("kernel source" in m for c in none.checks for m in c.missing)


def test_a_buffer_stored_on_self_at_every_launch_is_allocated_per_call(
    catalog: Catalog,
) -> None:
    # Storing the new tensor on the object does not keep it: the launch that makes it runs
    # on every call, and replaces it each time.
    per_call = (
        "import torch, triton\n"
        "class Op:\n"
        "    def __call__(self, x):\n"
        "        self.out = torch.empty_like(x)\n"
        "        k[(1,)](x, self.out)\n"
        "        return self.out\n"
    )
    diagnosis = diagnose_log(log_of([exp(1, 5.0)], kernels=(kernel(per_call),)), catalog=catalog)
    found = diagnosis.finding(Pathology.BUFFER_PERSISTENCE)
    assert found is not None and found.evidence[0].source == "kernels/k.py:4"
    # Made once in __init__, or again only when the shape changes: kept across calls.
    for kept in (
        per_call.replace(
            "    def __call__(self, x):\n        self.out = torch.empty_like(x)\n",
            "    def __init__(self, x):\n        self.out = torch.empty_like(x)\n"
            "    def __call__(self, x):\n",
        ),
        per_call.replace(
            "        self.out = torch.empty_like(x)\n",
            "        if x.shape != self.shape:\n            self.out = torch.empty_like(x)\n",
        ),
    ):
        kept_log = log_of([exp(1, 5.0)], kernels=(kernel(kept),))
        diagnosis = diagnose_log(kept_log, catalog=catalog)
        assert diagnosis.finding(Pathology.BUFFER_PERSISTENCE) is None, kept


def test_overlooked_shortcut(tmp_path: Path, catalog: Catalog) -> None:
    profile = REPO / "examples/logs/mla-decode-plateau/experiments/workload_profile.md"
    (tmp_path / "experiments").mkdir()
    shutil.copy(profile, tmp_path / "experiments" / "workload_profile.md")
    decode = kernel(
        "def mla(q, kv):\n    b, s_q, h, d = q.shape\n    for i in range(s_q):\n        pass\n"
    )
    log = log_of(
        [exp(1, 5.0)],
        root=str(tmp_path),
        workload_profile="experiments/workload_profile.md",
        kernels=(decode,),
    )
    found = diagnose_log(log, catalog=catalog).finding(Pathology.OVERLOOKED_SHORTCUT)
    assert found is not None and "s_q = 1" in found.summary and found.severity is Severity.HIGH
    assert found.actions[0].catalog_id == "size-1-axis-shortcut"
    guarded = kernel(decode.text + "    if s_q == 1:\n        return fast(q, kv)\n")
    log = log_of(
        [exp(1, 5.0)],
        root=str(tmp_path),
        workload_profile="experiments/workload_profile.md",
        kernels=(guarded,),
    )
    assert diagnose_log(log, catalog=catalog).finding(Pathology.OVERLOOKED_SHORTCUT) is None
    missing = diagnose_log(log_of([exp(1, 5.0)]), catalog=catalog)
    assert "workload_profile.md" in _sentence(missing, Pathology.OVERLOOKED_SHORTCUT)
    assert not _checked(missing, Pathology.OVERLOOKED_SHORTCUT)


def test_a_shortcut_tried_and_reverted_is_not_said_to_be_in_the_kernel(
    tmp_path: Path, catalog: Catalog
) -> None:
    profile = REPO / "examples/logs/mla-decode-plateau/experiments/workload_profile.md"
    (tmp_path / "experiments").mkdir()
    shutil.copy(profile, tmp_path / "experiments" / "workload_profile.md")
    decode = kernel("def mla(q, kv):\n    b, s_q, h, d = q.shape\n")
    tried = exp(
        2,
        5.2,
        status=Status.REVERTED,
        description="one-token path",
        tags=("size-1-axis-shortcut",),
    )
    log = log_of(
        [exp(1, 5.0), tried],
        root=str(tmp_path),
        workload_profile="experiments/workload_profile.md",
        kernels=(decode,),
    )
    diagnosis = diagnose_log(log, catalog=catalog)
    # Tried, so not overlooked; but the kernel has no such path, and the item must not say so.
    assert diagnosis.finding(Pathology.OVERLOOKED_SHORTCUT) is None
    sentence = _sentence(diagnosis, Pathology.OVERLOOKED_SHORTCUT)
    assert "already has a path" not in sentence
    assert "exp 2 (REVERTED)" in sentence and "experiments/summary.md:4" in sentence


def test_headlines_at_different_trial_points_are_not_compared(
    tmp_path: Path, catalog: Catalog
) -> None:
    # An effort that moved from the 128-head point to the 16-head one: its headline
    # latencies are different quantities, and the first kept 16-head result gains what
    # its own A/B row states over the kernel it started from.
    from kernelopt.experiments.canonical import append_summary, write_result
    from kernelopt.experiments.records import ResultRecord, ResultRow

    def record(number: int, point: str, median: float, speedup: float | None) -> ResultRecord:
        row = ResultRow(point=point, impl=f"v{number}", median=median, unit="us", speedup=speedup)
        return ResultRecord(
            experiment=number, title=f"change {number}", status="KEPT", correctness="PASS",
            date="2026-12-03", rows=(row,),
        )  # fmt: skip

    h128, h16 = "b=32 s=1 t=4096 h=128", "b=32 s=1 t=4096 h=16"
    records = (record(1, h128, 100.0, None), record(2, h128, 75.0, 1.333))
    for rec in (*records, record(3, h16, 47.5, 1.054)):
        write_result(tmp_path, rec)
        append_summary(tmp_path, rec)
    diagnosis = diagnose_log(read_log(tmp_path), catalog=catalog)
    assert [e.headline_point for e in read_log(tmp_path).experiments] == [h128, h128, h16]
    gains = {step.experiment: round(step.gain, 3) for step in diagnosis.summary.trajectory}
    # exp 3 saves 1 - 1/1.054 of the time, not 36.7 % for 47.5 us against 75 us.
    assert gains == {2: 0.25, 3: 0.051}
    assert diagnosis.summary.best is not None
    assert (diagnosis.summary.best.experiment, diagnosis.summary.best.point) == (3, h16)


def test_headlines_at_one_trial_point_compare_as_before() -> None:
    one = [
        attrs.evolve(exp(1, 100.0), headline_point="b=1"),
        attrs.evolve(exp(2, 80.0), headline_point="b=1"),
    ]
    gains = {s.experiment.number: s.gain for s in analyze(tuple(one)).steps}
    assert gains[2] == 0.2


def test_a_kept_change_that_opens_a_trial_point_neither_gains_nor_stalls() -> None:
    # A new cache format measured at its own point, slower than the kernel it came from:
    # kept as a feature, not an attempt on the best, so it must not lengthen the stall.
    h16, fp8 = "b=32 s=1 h=16", "b=32 s=1 h=16 kv=fp8"

    def at(number: int, point: str, latency: float, **kw: object) -> Experiment:
        return attrs.evolve(exp(number, latency, **kw), headline_point=point)  # type: ignore[arg-type]

    steps = analyze(
        (
            at(1, h16, 50.0),
            at(2, h16, 51.0, status=Status.REVERTED),
            attrs.evolve(at(3, fp8, 97.7), speedup=0.59),
            at(4, h16, 70.0, status=Status.REVERTED),
        )
    )
    by_number = {s.experiment.number: s for s in steps.steps}
    assert (by_number[3].counted, by_number[3].gain) == (False, None)
    assert [s.experiment.number for s in steps.counted(steps.stall(0.05))] == [2, 4]
    best = steps.best()  # where the effort works now: the 16-head point, not the FP8 one
    assert best is not None and best.experiment.number == 1

    # Reverted at its new point: an attempt that failed, so it counts.
    tried = analyze((at(1, h16, 50.0), at(2, fp8, 97.7, status=Status.REVERTED)))
    assert [(s.counted, s.gain) for s in tried.steps][1] == (True, 0.0)
    # Faster than the kernel it came from, by its own A/B: a gain, as before.
    faster = analyze((at(1, h16, 50.0), attrs.evolve(at(2, fp8, 30.0), speedup=1.6)))
    # (1.6 times as fast saves 1 - 1/1.6 of the time.)
    assert faster.steps[1].counted and faster.steps[1].gain == pytest.approx(0.375)


def test_a_latency_without_its_unit_is_not_compared_with_stated_ones() -> None:
    experiments = (
        exp(1, 100.0, status=Status.BASELINE),
        exp(2, 90.0),
        attrs.evolve(exp(3, 0.05), unit="ms"),
        attrs.evolve(exp(4, 40.0), unit=None),  # 40 what? us would be a new best, ms not
    )
    progress = analyze(experiments)
    assert progress.best() is not None and progress.best().experiment.number == 3  # type: ignore[union-attr]
    assert progress.steps[3].values == {} and progress.steps[3].gain is None
    # A log that states no unit anywhere compares its numbers as they are.
    bare = analyze(tuple(attrs.evolve(e, unit=None) for e in experiments[:2]))
    assert bare.steps[1].gain == pytest.approx(0.1)


def test_a_same_run_ab_is_the_gain_not_the_drift_between_runs() -> None:
    # exp 2 timed itself against the kernel of exp 1 in its own run: 1 % faster there,
    # although its headline is 4 % below exp 1's, timed on another day.
    def ab(number: int, latency: float, speedup: float, **kw: object) -> Experiment:
        return attrs.evolve(exp(number, latency, **kw), speedup=speedup)  # type: ignore[arg-type]

    first = analyze((exp(1, 50.0), ab(2, 48.0, 1.01)))
    step = first.steps[1]
    assert step.same_run and step.gain == pytest.approx(1 - 1 / 1.01)
    # After a 20 % gain, five failed tries, then a kept change 2 % faster in its run (6 % by
    # headlines): a plateau of six attempts, and the raw headline is the best to beat.
    tried = tuple(exp(n, 41.0, status=Status.REVERTED) for n in range(3, 8))
    later = analyze((exp(1, 50.0), ab(2, 40.0, 1.25), *tried, ab(8, 37.6, 1.02)))
    assert [s.experiment.number for s in later.counted(later.stall(0.05))] == [3, 4, 5, 6, 7, 8]
    assert later.best() is not None and later.best().experiment.number == 8  # type: ignore[union-attr]
    # Without the A/B the headlines decide: 6 % ends the plateau.
    plain = analyze((exp(1, 50.0), exp(2, 40.0), *tried, exp(8, 37.6)))
    assert plain.counted(plain.stall(0.05)) == ()
    # Kept, faster by headline on a faster day, but no faster than exp 2's kernel in its own
    # run: exp 2's kernel is still the best.
    drifted = analyze((exp(1, 50.0), ab(2, 48.0, 1.01), ab(3, 47.0, 0.99)))
    assert drifted.steps[2].same_run and drifted.steps[2].gain == 0.0
    assert drifted.best() is not None and drifted.best().experiment.number == 2  # type: ignore[union-attr]
    # A change no faster in its own A/B (0.997) whose headline happens to sit 0.1 % under
    # the best from another run: the A/B points the other way, so it was timed, not
    # computed from the headlines, and no best moved.
    close = analyze((exp(1, 73.92), ab(2, 73.86, 0.997)))
    assert close.steps[1].same_run and close.steps[1].gain == 0.0
    # The log's own arithmetic on two headlines (73.92 / 73.86) still reads as the headlines.
    computed = analyze((exp(1, 73.92), ab(2, 73.86, 1.001)))
    assert not computed.steps[1].same_run and computed.steps[1].gain == pytest.approx(0.06 / 73.92)
    # A slower kernel's speedup is the same arithmetic, rounded to two decimals (274.1 /
    # 531.4 = 0.5158 -> 0.52, 0.8 % off): not a run of its own either.
    slow = analyze((exp(1, 274.1), ab(2, 531.4, 0.52)))
    assert not slow.steps[1].same_run and slow.steps[1].gain == 0.0
    # A speedup over something else (the eager baseline, 3x slower) is not an A/B against
    # the best kernel: the headlines decide.
    eager = analyze((exp(1, 50.0), ab(2, 48.0, 3.1)))
    assert not eager.steps[1].same_run and eager.steps[1].gain == pytest.approx(0.04)


def test_an_ab_on_another_gpu_is_compared_with_that_gpus_kernels() -> None:
    # The log's best was timed on an H200; later changes were A/B'd on an H100, whose
    # times are 30 % longer. Each A/B counts against the kernel kept before it on the H100.
    def on(gpu: str, number: int, latency: float, speedup: float | None = None) -> Experiment:
        return attrs.evolve(exp(number, latency), speedup=speedup, gpu=gpu)  # type: ignore[arg-type]

    h200, h100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"
    log = (on(h200, 1, 50.0), on(h200, 2, 46.0, 1.087), on(h100, 3, 60.0, 1.006),
           on(h100, 4, 59.1, 1.03), on(h100, 5, 58.0))  # fmt: skip
    progress = analyze(log)
    # The first kept change on the H100 has no kernel there to be compared with.
    assert progress.steps[2].gain == 0.0 and not progress.steps[2].same_run
    # exp 4: its A/B's baseline (59.1 x 1.03 = 60.9 us) is exp 3's kernel on its GPU.
    assert progress.steps[3].same_run and progress.steps[3].gain == pytest.approx(1 - 1 / 1.03)
    # exp 5 states no A/B: its headline against the H100's best so far (59.1 us).
    assert progress.steps[4].gain == pytest.approx(1.1 / 59.1)
    assert progress.best() is not None and progress.best().experiment.number == 5  # type: ignore[union-attr]
    # Without the GPUs the H100's times are set against the H200's best and gain nothing.
    unnamed = analyze(tuple(attrs.evolve(e, gpu=None) for e in log))
    assert [s.gain for s in unnamed.steps[2:]] == [0.0, 0.0, 0.0]


def test_the_best_names_its_gpu_when_the_log_spans_two(tmp_path) -> None:
    from kernelopt.diagnose import diagnose
    from kernelopt.experiments import ResultRecord, ResultRow, log_result, read_log

    def record(n: int, gpu: str, median: float, speedup: float) -> ResultRecord:
        row = ResultRow(point="b=1", impl="k", median=median, unit="us", speedup=speedup)
        return ResultRecord(
            experiment=n, title=f"change {n}", status="KEPT", correctness="PASS",
            date="2026-12-06", gpu=gpu, rows=(row,),
        )  # fmt: skip

    root = tmp_path / "experiments"
    log_result(root, record(1, "NVIDIA H200", 50.0, 1.0))
    log_result(root, record(2, "NVIDIA H100 80GB HBM3", 60.0, 1.0))
    log_result(root, record(3, "NVIDIA H100 80GB HBM3", 58.0, 1.05))
    h100 = "NVIDIA H100 80GB HBM3"
    assert [e.gpu for e in read_log(tmp_path).experiments] == ["NVIDIA H200", h100, h100]
    text = diagnose(tmp_path).render_plan()
    assert "Best so far: 58 us on NVIDIA H100 80GB HBM3 (exp 3)." in text
    # One GPU named throughout: the line is as before.
    one = tmp_path / "one" / "experiments"
    log_result(one, record(1, "NVIDIA H200", 50.0, 1.0))
    log_result(one, record(2, "NVIDIA H200", 48.0, 1.05))
    assert "Best so far: 48 us (exp 2)." in diagnose(tmp_path / "one").render_plan()


def test_wrong_bottleneck_judges_only_attempts_at_the_profiles_trial_point(
    catalog: Catalog,
) -> None:
    # profile.md says compute-bound at h_q = 128; memory work at the 16-head point (where
    # the same kernel is memory-bound) is not aimed at the wrong resource.
    profile = attrs.evolve(COMPUTE_BOUND, point="b=32, s=1, t=4096, h_q=128")
    descriptions = ("num_stages=3: deeper prefetch", "coalesced vectorized KV loads", "bytes")

    def attempts(point: str) -> list[Experiment]:
        return [
            attrs.evolve(exp(1, 274.1, status=Status.BASELINE), headline_point=point),
            *(
                attrs.evolve(
                    exp(n, 219.0 + n, status=Status.REVERTED, description=text),
                    headline_point=point,
                )
                for n, text in enumerate(descriptions, start=2)
            ),
        ]

    here = diagnose_log(log_of(attempts("b=32 s=1 t=4096 h=128"), profile=profile), catalog=catalog)
    wrong = here.finding(Pathology.WRONG_BOTTLENECK)
    assert wrong is not None and wrong.experiments == (2, 3, 4)
    there = diagnose_log(log_of(attempts("b=32 s=1 t=4096 h=16"), profile=profile), catalog=catalog)
    assert there.finding(Pathology.WRONG_BOTTLENECK) is None
    sentence = _sentence(there, Pathology.WRONG_BOTTLENECK)
    assert "exps 2, 3, 4 measured at another trial point than the profile's" in sentence
    # A profile that names no point judges every attempt, as before.
    unnamed = diagnose_log(
        log_of(attempts("b=32 s=1 t=4096 h=16"), profile=COMPUTE_BOUND), catalog=catalog
    )
    assert unnamed.finding(Pathology.WRONG_BOTTLENECK) is not None


def test_benchmark_and_test_runs_are_not_research(catalog: Catalog) -> None:
    from kernelopt.diagnose.detectors.ignored_prior_research import is_chore

    chores = [
        "A benchmark run of the tree after exps 30-32 for the final table",
        "The full GPU suite on the launch without the causal branches at s_q = 1",
        "Re-run the tests on the H200",
        "run the benchmarks with CUDA graphs",
        "A final test pass before the release",
    ]
    ideas = [
        "A cluster of a sequence's row tiles sharing each key tile through TMA multicast",
        "Benchmark-driven autotuning of BLOCK_N per sequence length",
        "Test whether a persistent kernel removes the tail",
        "Run the merge inside the main kernel",
    ]
    assert all(is_chore(text) for text in chores)
    assert not any(is_chore(text) for text in ideas)
    source = SourceRef(path="experiments/exp_2/result.md", line=9)
    experiments = [exp(n, 80.0 - 0.1 * n, description=f"BLOCK_N={16 * n}") for n in range(1, 7)]
    only_chores = tuple(
        Recommendation(text=text, source=source, experiment=2, after=3) for text in chores[:2]
    )
    diagnosis = diagnose_log(log_of(experiments, recommendations=only_chores), catalog=catalog)
    assert diagnosis.finding(Pathology.IGNORED_PRIOR_RESEARCH) is None
    sentence = _sentence(diagnosis, Pathology.IGNORED_PRIOR_RESEARCH)
    assert sentence.startswith("2 recommendations found ask for benchmark or test runs")
    idea = Recommendation(text=ideas[0], source=source, experiment=2, after=3)
    found = diagnose_log(
        log_of(experiments, recommendations=(*only_chores, idea)), catalog=catalog
    ).finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert found is not None and [e.quote for e in found.evidence] == [ideas[0]]


def test_a_named_idea_is_matched_by_its_name_not_its_commentary(catalog: Catalog) -> None:
    # "**Idea**: gain. Risk: ..." (a devlog's next-steps list): the experiment that tried it
    # names the idea, not the estimated gain or the risks.
    source = SourceRef(path="logs/optimization_log.md", line=222)
    text = (
        "Bypass TVM FFI: Save ~10-15us/call = ~3% improvement. Risk: very high — requires "
        "extracting raw CUDA function handle from CuTe-DSL's compiled object, which is not a "
        "supported API."
    )
    idea = Recommendation(text=text, source=source, experiment=2, after=3)
    experiments = [exp(n, 80.0 - 0.1 * n, description=f"BLOCK_N={16 * n}") for n in range(1, 7)]
    experiments[4] = exp(5, 79.5, status=Status.NEUTRAL, description="Pinned D2H + Direct TVM FFI")
    tried = diagnose_log(log_of(experiments, recommendations=(idea,)), catalog=catalog)
    assert tried.finding(Pathology.IGNORED_PRIOR_RESEARCH) is None
    untried = [e for e in experiments if e.number != 5]
    ignored = diagnose_log(log_of(untried, recommendations=(idea,)), catalog=catalog)
    assert ignored.finding(Pathology.IGNORED_PRIOR_RESEARCH) is not None


def _advised_log(root: Path, change: str, extra: dict[str, str] | None = None) -> Diagnosis:
    """A log whose exp 1 advises a swizzle and whose exp 2 made ``change``; ``extra`` adds
    text to the end of files under ``experiments/``."""
    files = {
        "exp_1/result.md": "# Experiment 1: baseline\n\n- Status: BASELINE\n- Latency: 100 us\n\n"
        "## Next steps\n\n- Swizzle the shared-memory layout of the K tile to remove bank "
        "conflicts\n",
        "exp_2/result.md": "# Experiment 2: layout tweak\n\n- Status: KEPT\n- Latency: 90 us\n\n"
        f"## Change\n\n{change}\n",
    }
    for n in (3, 4, 5):
        files[f"exp_{n}/result.md"] = (
            f"# Experiment {n}: num_warps={n}\n\n- Status: REVERTED\n- Latency: 95 us\n"
        )
    for name, text in (extra or {}).items():
        files[name] = files.get(name, "") + text
    for name, text in files.items():
        (root / "experiments" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "experiments" / name).write_text(text, encoding="utf-8")
    return diagnose_log(read_log(root))


def test_prior_research_answered_by_a_later_quote(tmp_path: Path) -> None:
    # "Try it, or record why not": a later result that quotes the advice and says why it
    # was not taken answers it. The advice's own file, and a file every experiment
    # shares, quote it too, and answer nothing.
    advice = "Swizzle the shared-memory layout of the K tile to remove bank conflicts"
    declined = (
        "\n## Notes\n\nNot tried: \u201cswizzle the shared-memory layout of the K tile to "
        "remove bank conflicts\u201d. The profile shows none.\n"
    )
    unrelated = "Larger tiles for the K loop."
    answered = _advised_log(tmp_path / "answered", unrelated, extra={"exp_4/result.md": declined})
    assert answered.finding(Pathology.IGNORED_PRIOR_RESEARCH) is None, [
        c.sentence for c in answered.checks
    ]
    shared = _advised_log(
        tmp_path / "shared", unrelated, extra={"LESSONS.md": f"- [exp 4] {advice}\n"}
    )
    found = shared.finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert found is not None and [e.quote for e in found.evidence] == [advice]
    assert found.actions[0].text.startswith("Try it, or record why not (a later plan or result")


def test_prior_research_acted_on_in_change_text_after_a_colon(tmp_path: Path) -> None:
    # The change text of an experiment counts whole: "…for the K tile: bank conflicts
    # gone." acts on "remove bank conflicts" though its title ("layout tweak") does not.
    diagnosis = _advised_log(
        tmp_path / "acted", "XOR-swizzled shared-memory layout for the K tile: bank conflicts gone."
    )
    assert diagnosis.finding(Pathology.IGNORED_PRIOR_RESEARCH) is None, [
        c.sentence for c in diagnosis.checks
    ]
    # The same log with an unrelated change: the advice is read and found ignored, so the
    # absence above comes from the change text, not from advice never read.
    ignored = _advised_log(tmp_path / "ignored", "Larger tiles for the K loop.").finding(
        Pathology.IGNORED_PRIOR_RESEARCH
    )
    assert ignored is not None and [e.quote for e in ignored.evidence] == [
        "Swizzle the shared-memory layout of the K tile to remove bank conflicts"
    ]


_KNOBBED = """\
@gluon.jit
def k(x, ROWS: gl.constexpr, SLOTS: gl.constexpr):
    blk: gl.constexpr = gl.BlockedLayout([1, 16], [8, 4], [4, 1], [1, 0])
    f8: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=8, rank=2)
    for g in gl.static_range(4):
        x = x + g * ROWS * SLOTS
    return x
"""
# The loop body moved into helpers that take the kernel's knobs and layouts as parameters.
_SPLIT = """\
@gluon.jit
def _read(x, ROWS: gl.constexpr, SLOTS: gl.constexpr, blk: gl.constexpr, f8: gl.constexpr):
    return x


@gluon.jit
def _stage(x, g, ROWS: gl.constexpr, SLOTS: gl.constexpr, blk: gl.constexpr):
    return x + g * ROWS * SLOTS


@gluon.jit
def k(x, ROWS: gl.constexpr, SLOTS: gl.constexpr):
    blk: gl.constexpr = gl.BlockedLayout([1, 16], [8, 4], [4, 1], [1, 0])
    f8: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=8, rank=2)
    for g in gl.static_range(4):
        x = _stage(_read(x, ROWS, SLOTS, blk, f8), g, ROWS, SLOTS, blk)
    return x
"""


def test_over_engineering_counts_knobs_by_name(catalog: Catalog) -> None:
    experiments = [
        exp(n, 50.0 - (5 if n == 2 else 0) - 0.1 * n, status=Status.KEPT) for n in range(1, 7)
    ]

    def snapshots(later: str) -> tuple[KernelSource, ...]:
        # Both kernels share the rest of the file, so their code lines grow by a fifth.
        rest = "".join(f"SIZE_{i} = {i}\n" for i in range(30))
        return tuple(
            kernel(rest + text, path=f"experiments/exp_{n}/k.py", role="snapshot", experiment=n)
            for n, text in ((2, _KNOBBED), (5, later))
        )

    # Helpers that take the names the kernel had: no new knob, nothing found.
    log = log_of(experiments, kernels=snapshots(_SPLIT))
    assert diagnose_log(log, catalog=catalog).finding(Pathology.OVER_ENGINEERING) is None
    # Three names the kernel never had are three knobs more.
    grown = _SPLIT.replace(
        "SLOTS: gl.constexpr):\n    blk",
        "SLOTS: gl.constexpr, A: gl.constexpr, B: gl.constexpr, C: gl.constexpr):\n    blk",
    )
    found = diagnose_log(log_of(experiments, kernels=snapshots(grown)), catalog=catalog).finding(
        Pathology.OVER_ENGINEERING
    )
    assert found is not None and "constexpr knobs 2 → 7 (3 new names)" in found.summary
