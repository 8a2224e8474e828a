"""A count in a sentence takes its noun in the singular for one, the plural otherwise.

Each sentence is read at a count of one and of two, word for word.
"""

from __future__ import annotations

import types
from pathlib import Path

import attrs
import pytest

from kernelopt import cli
from kernelopt._words import count_text, noun
from kernelopt.catalog import Catalog
from kernelopt.diagnose import (
    CorrectnessWallParams,
    DiagnoseParams,
    IgnoredPriorResearchParams,
    LocalMinimumParams,
    OverEngineeringParams,
    Pathology,
    RepetitionLoopParams,
    diagnose_log,
)
from kernelopt.diagnose.context import attempts_text
from kernelopt.diagnose.detectors.overlooked_shortcut import stale_profile
from kernelopt.experiments import (
    Experiment,
    Fact,
    KernelSource,
    Recommendation,
    SourceRef,
    read_log,
)
from kernelopt.experiments.records import Correctness, Status

from .conftest import exp, kernel, log_of
from .test_changes import BASE
from .test_changes import _diff as unified_diff
from .test_changes import _log as changes_log

P = Pathology


def _sentence(diagnosis: object, pathology: Pathology) -> str:
    return next(c for c in diagnosis.checks if c.pathology is pathology).sentence  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("count", "one", "many", "sign", "words"),
    [
        (1, "attempt", None, False, "1 attempt"),
        (2, "attempt", None, False, "2 attempts"),
        (0, "attempt", None, False, "0 attempts"),
        (1, "branch", "branches", True, "+1 branch"),
        (2, "branch", "branches", True, "+2 branches"),
        (-1, "constexpr knob", None, True, "-1 constexpr knob"),
        (-2, "constexpr knob", None, True, "-2 constexpr knobs"),
    ],
)
def test_a_count_names_its_noun_in_number(
    count: int, one: str, many: str | None, sign: bool, words: str
) -> None:
    assert count_text(count, one, many, sign=sign) == words
    assert noun(count, one, many) == words.split(" ", 1)[1]


@pytest.mark.parametrize(
    ("count", "words"), [(0, "No attempt"), (1, "1 attempt"), (2, "2 attempts")]
)
def test_attempts_text(count: int, words: str) -> None:
    assert attempts_text(count) == words


def _after_best(count: int, correctness: Correctness = Correctness.PASS) -> list[Experiment]:
    """A baseline (exp 1), a best (exp 2), then ``count`` attempts that gain nothing."""
    return [
        exp(1, 50.0, status=Status.BASELINE),
        exp(2, 40.0),
        *(exp(3 + i, 40.0, status=Status.NEUTRAL, correctness=correctness) for i in range(count)),
    ]


def _numbers(count: int) -> str:
    return "exp 3" if count == 1 else "exps 3, 4"


@pytest.mark.parametrize(("count", "words"), [(1, "1 attempt"), (2, "2 attempts")])
def test_no_profile_names_its_attempts_in_number(count: int, words: str, catalog: Catalog) -> None:
    log = log_of([exp(n, 50.0 - n) for n in range(1, count + 1)])
    found = diagnose_log(log, catalog=catalog).finding(P.WRONG_BOTTLENECK)
    assert found is not None
    assert found.summary.startswith(
        f"No profiling data in any result or profile.md across {words}: every change so far "
    )
    experiments = words.replace("attempt", "experiment")
    assert found.evidence[0].quote == (
        f"{experiments} read; no profiler output, metric, roofline floor or profile.md found"
    )


@pytest.mark.parametrize(("count", "words"), [(1, "1 attempt"), (2, "2 attempts")])
def test_the_plan_header_counts_in_number(count: int, words: str, catalog: Catalog) -> None:
    plan = diagnose_log(log_of(_after_best(count)), catalog=catalog).render_plan().splitlines()
    assert f"New bests: exp 2 +20.0%; {words} since the best last moved by 5% or more." in plan
    read = log_of([exp(n, 50.0 - n) for n in range(1, count + 1)])
    scope = "exp 1" if count == 1 else "exp 1–2"
    header = words.replace("attempt", "experiment")
    assert f"Read {header} ({scope}; {count} attempted) from . []." in (
        diagnose_log(read, catalog=catalog).render_plan().splitlines()
    )


@pytest.mark.parametrize(
    ("count", "words"),
    [(1, "1 experiment read, not an attempt"), (2, "2 experiments read, none of them an attempt")],
)
def test_a_log_without_attempts_is_counted_in_number(
    count: int, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A JSONL row marked as profiling is a measurement, not an attempt.
    (tmp_path / "runs.jsonl").write_text(
        '{"status": "profiling", "latency_us": 5.0}\n' * count, encoding="utf-8"
    )
    assert cli.main(["diagnose", str(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith(f"with at least one attempt, got {words}\n")


@pytest.mark.parametrize(("count", "words"), [(1, "1 buffer"), (2, "2 buffers")])
def test_buffers_allocated_per_call_in_number(count: int, words: str, catalog: Catalog) -> None:
    allocations = "".join(f"    o{i} = torch.empty_like(x)\n" for i in range(count))
    launcher = (
        f"import torch, triton\ndef run(x):\n{allocations}    k[(1,)](x, o0)\n    return o0\n"
    )
    found = diagnose_log(
        log_of([exp(1, 5.0)], kernels=(kernel(launcher),)), catalog=catalog
    ).finding(P.BUFFER_PERSISTENCE)
    assert found is not None
    assert found.summary.startswith(
        f"The host launcher allocates {words} on every call (torch.empty_like in run), "
    )


@pytest.mark.parametrize(
    ("count", "failures", "wall"),
    [
        (1, "1 failure in the log (exp 3)", "The last 1 attempt (exp 3) fails correctness."),
        (
            2,
            "2 failures in the log (exps 3, 4)",
            "The last 2 attempts (exps 3, 4) all fail correctness.",
        ),
    ],
)
def test_correctness_failures_in_number(
    count: int, failures: str, wall: str, catalog: Catalog
) -> None:
    log = log_of(_after_best(count, correctness=Correctness.FAIL))
    below = diagnose_log(log, catalog=catalog)
    assert _sentence(below, P.CORRECTNESS_WALL).startswith(
        f"{failures}, {count} among the latest attempts: no wall (needs 3 in a row)."
    )
    params = DiagnoseParams(correctness_wall=CorrectnessWallParams(min_failures=count))
    found = diagnose_log(log, catalog=catalog, params=params).finding(P.CORRECTNESS_WALL)
    assert found is not None and found.summary.startswith(f"{wall} ")


def test_a_lone_failure_beside_an_unrecorded_verdict_is_one_attempt(catalog: Catalog) -> None:
    experiments = [
        *_after_best(1, correctness=Correctness.FAIL),
        exp(4, 40.0, status=Status.NEUTRAL, correctness=Correctness.UNKNOWN),
    ]
    params = DiagnoseParams(correctness_wall=CorrectnessWallParams(min_failures=1))
    found = diagnose_log(log_of(experiments), catalog=catalog, params=params).finding(
        P.CORRECTNESS_WALL
    )
    assert found is not None
    assert found.summary.startswith(
        "The latest 1 attempt with a verdict (exp 3) fails correctness (exp 4 records none)."
    )


@pytest.mark.parametrize(
    ("count", "words"), [(1, "1 consecutive attempt"), (2, "2 consecutive attempts")]
)
def test_a_plateau_counts_its_attempts_in_number(count: int, words: str, catalog: Catalog) -> None:
    log = log_of(_after_best(count))
    params = DiagnoseParams(local_minimum=LocalMinimumParams(min_experiments=count))
    found = diagnose_log(log, catalog=catalog, params=params).finding(P.LOCAL_MINIMUM)
    assert found is not None
    assert found.summary.startswith(
        f"{words} ({_numbers(count)}) improved the best by less than 5%"
    )


@pytest.mark.parametrize(
    ("count", "words"),
    [
        (1, "The 1 attempt since the last 5% gain tries different ideas"),
        (2, "The 2 attempts since the last 5% gain try different ideas"),
    ],
)
def test_attempts_without_a_shared_idea_in_number(count: int, words: str, catalog: Catalog) -> None:
    log = log_of(
        [
            exp(1, 50.0, status=Status.BASELINE),
            exp(2, 40.0),
            *(
                exp(3 + i, 40.0, status=Status.NEUTRAL, description=f"idea {'ab'[i]}")
                for i in range(count)
            ),
        ]
    )
    params = DiagnoseParams(repetition_loop=RepetitionLoopParams(min_experiments=count))
    sentence = _sentence(diagnose_log(log, catalog=catalog, params=params), P.REPETITION_LOOP)
    assert sentence == (
        f"{words} (no catalog tag, knob or term shared by {count} or more of them)."
    )


@pytest.mark.parametrize(
    ("count", "summary", "action"),
    [
        (1, "1 of the last 1 attempt (exp 3) varies", "1 variant gained less than 5%."),
        (
            2,
            "2 of the last 2 attempts (exps 3, 4) vary",
            "2 variants gained less than 5% together.",
        ),
    ],
)
def test_a_repeated_idea_in_number(count: int, summary: str, action: str, catalog: Catalog) -> None:
    log = log_of(
        [
            exp(1, 50.0, status=Status.BASELINE),
            exp(2, 40.0),
            *(
                exp(
                    3 + i,
                    40.0,
                    status=Status.NEUTRAL,
                    tags=("software-pipelining",),
                    description=f"pipelining take {i}",
                )
                for i in range(count)
            ),
        ]
    )
    params = DiagnoseParams(repetition_loop=RepetitionLoopParams(min_experiments=count))
    found = diagnose_log(log, catalog=catalog, params=params).finding(P.REPETITION_LOOP)
    assert found is not None
    assert found.summary.startswith(f"{summary} Software Pipelining of Loads and Compute")
    assert found.actions[0].text.endswith(f"(software-pipelining): {action}")


_RESULT = SourceRef(path="experiments/exp_2/result.md", line=9)
_CHORES = ("Re-run the tests on the H200", "run the benchmarks with CUDA graphs")
_IDEAS = (
    ("split the KV sequence across programs (split-KV)", "split-kv-flash-decoding"),
    ("keep the output buffers across calls", "buffer-persistence"),
)
_SIX = [exp(n, 80.0 - 0.1 * n, description=f"BLOCK_N={16 * n}") for n in range(1, 7)]


def _chores(count: int) -> tuple[Recommendation, ...]:
    return tuple(
        Recommendation(text=text, source=_RESULT, experiment=2, after=3) for text in _CHORES[:count]
    )


def _ideas(count: int) -> tuple[Recommendation, ...]:
    return tuple(
        Recommendation(text=text, source=_RESULT, experiment=2, after=2, catalog_ids=(entry,))
        for text, entry in _IDEAS[:count]
    )


@pytest.mark.parametrize(
    ("count", "words"),
    [(1, "1 recommendation found asks"), (2, "2 recommendations found ask")],
)
def test_recommendations_that_are_runs_in_number(count: int, words: str, catalog: Catalog) -> None:
    diagnosis = diagnose_log(log_of(_SIX, recommendations=_chores(count)), catalog=catalog)
    assert _sentence(diagnosis, P.IGNORED_PRIOR_RESEARCH) == (
        f"{words} for benchmark or test runs, not changes to try, so nothing could be ignored."
    )


@pytest.mark.parametrize(("count", "words"), [(1, "1 plan"), (2, "2 plans")])
def test_plans_read_in_number(count: int, words: str, catalog: Catalog) -> None:
    planned = [
        attrs.evolve(
            exp(n, 80.0 - 0.1 * n),
            sources=(SourceRef(path=f"experiments/exp_{n}/plan.md", line=1),),
        )
        for n in range(1, count + 1)
    ]
    sentence = _sentence(diagnose_log(log_of(planned), catalog=catalog), P.IGNORED_PRIOR_RESEARCH)
    assert sentence.startswith(f"{words} read (exp_N/plan.md); none recommends anything")


@pytest.mark.parametrize(
    ("count", "words"),
    [
        (1, "The 1 recommendation followed by 3+ attempts was acted on. 1 more asks"),
        (2, "Each of the 2 recommendations followed by 3+ attempts was acted on. 2 more ask"),
    ],
)
def test_recommendations_acted_on_in_number(count: int, words: str, catalog: Catalog) -> None:
    acted = [
        *_SIX[:4],
        exp(5, 60.0, tags=("split-kv-flash-decoding", "buffer-persistence")),
        _SIX[5],
    ]
    advice = _ideas(count) + _chores(count)
    diagnosis = diagnose_log(log_of(acted, recommendations=advice), catalog=catalog)
    assert _sentence(diagnosis, P.IGNORED_PRIOR_RESEARCH) == (
        f"{words} for benchmark or test runs, not judged."
    )


@pytest.mark.parametrize(
    ("count", "words"),
    [
        (1, "The 1 recommendation followed by 3+ attempts was acted on, in a plan not yet run"),
        (
            2,
            "Each of the 2 recommendations followed by 3+ attempts was acted on; 2 of them "
            "only in a plan not yet run",
        ),
    ],
)
def test_recommendations_only_planned_in_number(count: int, words: str, catalog: Catalog) -> None:
    # Only exp 7, planned and not run, takes up the ideas: not ignored, and said so.
    planned = attrs.evolve(
        exp(7, 79.0, tags=("split-kv-flash-decoding", "buffer-persistence")), attempted=False
    )
    diagnosis = diagnose_log(
        log_of([*_SIX, planned], recommendations=_ideas(count)), catalog=catalog
    )
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _sentence(diagnosis, P.IGNORED_PRIOR_RESEARCH) == f"{words} (exp 7)."
    # Once an attempted experiment acts on them, the plan is not mentioned.
    tried = attrs.evolve(planned, attempted=True)
    diagnosis = diagnose_log(log_of([*_SIX, tried], recommendations=_ideas(count)), catalog=catalog)
    assert "not yet run" not in _sentence(diagnosis, P.IGNORED_PRIOR_RESEARCH)


@pytest.mark.parametrize(
    ("count", "words"),
    [
        (1, "1 recommendation from earlier plans/results was never acted on"),
        (2, "2 recommendations from earlier plans/results were never acted on"),
    ],
)
def test_ignored_recommendations_in_number(count: int, words: str, catalog: Catalog) -> None:
    found = diagnose_log(log_of(_SIX, recommendations=_ideas(count)), catalog=catalog).finding(
        P.IGNORED_PRIOR_RESEARCH
    )
    assert found is not None
    assert found.summary.startswith(f"{words} in the 4+ attempts that followed (made in exp 2")


@pytest.mark.parametrize(("count", "words"), [(1, "the 1 attempt"), (2, "any of the 2 attempts")])
def test_the_attempts_around_an_unplaced_note_in_number(
    count: int, words: str, catalog: Catalog
) -> None:
    text, entry = _IDEAS[0]
    note = Recommendation(
        text=text, source=SourceRef(path="NOTES.md", line=3), after=0, catalog_ids=(entry,)
    )
    params = DiagnoseParams(
        ignored_prior_research=IgnoredPriorResearchParams(min_later_experiments=1)
    )
    found = diagnose_log(
        log_of(_SIX[:count], recommendations=(note,)), catalog=catalog, params=params
    ).finding(P.IGNORED_PRIOR_RESEARCH)
    assert found is not None
    assert found.summary.startswith(
        f"1 recommendation from earlier plans/results was never acted on in {words} of the log "
        "(where the note stands among them is not recorded)"
    )


@pytest.mark.parametrize(
    ("count", "words"), [(1, ("1 experiment", "1 line")), (2, ("2 experiments", "2 lines"))]
)
def test_missing_fundamental_evidence_in_number(
    count: int, words: tuple[str, str], fake_catalog: object
) -> None:
    experiments = [exp(1, 10.0, status=Status.BASELINE), exp(2, 8.0)][:count]
    profiled = (Fact(text="ncu: 41% DRAM", source=SourceRef(path="p.md")),)
    source = kernel("\n".join(["m_i = 0", "l_i = 0"][:count]) + "\n")
    found = diagnose_log(
        log_of(experiments, kernels=(source,), profiling=profiled),
        catalog=fake_catalog,  # type: ignore[arg-type]
        family="decode-attention",
    ).finding(P.MISSING_FUNDAMENTAL)
    assert found is not None
    experiments_read, lines = words
    assert found.evidence[0].quote.startswith(f"{experiments_read} read; none tagged ")
    assert found.evidence[1].quote == f"kernels/k.py: {lines}, no match"


def _snapshot(count: int, number: int, padding: int = 0) -> KernelSource:
    """A kernel snapshot with ``count`` autotune configs, constexpr knobs and branches."""
    configs = ", ".join("triton.Config({})" for _ in range(count))
    knobs = ", ".join(f"A{i}: tl.constexpr" for i in range(count))
    branches = "".join(f"    if A{i}:\n        pass\n" for i in range(count))
    lines = "".join(f"x{i} = {i}\n" for i in range(padding))
    text = (
        f"import triton\n{lines}@triton.autotune(configs=[{configs}], key=[])\n"
        f"@triton.jit\ndef k({knobs}):\n{branches}"
    )
    return kernel(text, path=f"experiments/exp_{number}/k.py", role="snapshot", experiment=number)


_STALLED = [
    exp(1, 60.0, status=Status.BASELINE),
    exp(2, 50.0),
    exp(3, 49.9, status=Status.NEUTRAL),
    exp(4, 49.8),
]


@pytest.mark.parametrize(
    ("count", "words"),
    [
        (1, "6 code lines, 1 branch, 1 constexpr knob, 1 autotune config"),
        (2, "8 code lines, 2 branches, 2 constexpr knobs, 2 autotune configs"),
    ],
)
def test_a_snapshot_that_did_not_grow_in_number(count: int, words: str, catalog: Catalog) -> None:
    log = log_of(_STALLED, kernels=(_snapshot(count, 4),))
    sentence = _sentence(diagnose_log(log, catalog=catalog), P.OVER_ENGINEERING)
    assert sentence == (
        f"Complexity did not grow while gains stalled (latest snapshot (exp 4): {words})."
    )


@pytest.mark.parametrize(
    ("count", "words"),
    [(1, "1 branch, 1 constexpr, 1 config"), (2, "2 branches, 2 constexpr, 2 configs")],
)
def test_a_grown_snapshot_in_number(count: int, words: str, catalog: Catalog) -> None:
    log = log_of(_STALLED, kernels=(_snapshot(count, 2), _snapshot(count, 4, padding=40)))
    found = diagnose_log(log, catalog=catalog).finding(P.OVER_ENGINEERING)
    assert found is not None
    start, end = (e.quote for e in found.evidence)
    assert start == f"exp 2: {4 + 2 * count} code lines, {words}"
    assert end == f"exp 4: {44 + 2 * count} code lines, {words}"


@pytest.mark.parametrize(
    ("count", "words"), [(1, "1 autotune configuration"), (2, "2 autotune configurations")]
)
def test_an_autotune_space_in_number(count: int, words: str, catalog: Catalog) -> None:
    params = DiagnoseParams(over_engineering=OverEngineeringParams(max_autotune_configs=count))
    found = diagnose_log(
        log_of(_STALLED, kernels=(_snapshot(count, 4),)), catalog=catalog, params=params
    ).finding(P.OVER_ENGINEERING)
    assert found is not None
    assert found.summary.endswith(f"gained less than 5%: exp 4 searches {words}.")
    assert found.evidence[0].quote == f"exp 4: {words}"


@pytest.mark.parametrize(
    ("count", "words"),
    [
        (1, "+1 code line, +1 constexpr knob and +1 branch"),
        (2, "+2 code lines, +2 constexpr knobs and +2 branches"),
    ],
)
def test_kept_diffs_add_in_number(count: int, words: str, tmp_path: Path, catalog: Catalog) -> None:
    knobs = "".join(f", K{i}: tl.constexpr" for i in range(count))
    selects = "".join(f"    x = tl.where(K{i}, x + 1, x)\n" for i in range(count))
    grown = BASE.replace("BLOCK: tl.constexpr):", f"BLOCK: tl.constexpr{knobs}):").replace(
        "    tl.store(Y", f"{selects}    tl.store(Y"
    )
    root = changes_log(tmp_path, {"experiments/exp_3/knobs.diff": unified_diff(BASE, grown)})
    params = DiagnoseParams(over_engineering=OverEngineeringParams(min_new_constexprs=1))
    found = diagnose_log(read_log(root, catalog=()), catalog=catalog, params=params).finding(
        P.OVER_ENGINEERING
    )
    assert found is not None
    assert found.summary.endswith(f": the changes kept in exp 3 add {words}.")


@pytest.mark.parametrize(("count", "words"), [(1, "1 record"), (2, "2 records")])
def test_a_trace_s_records_in_number(count: int, words: str, tmp_path: Path) -> None:
    (tmp_path / "profile.md").write_text("# Workload\n", encoding="utf-8")
    (tmp_path / "trace.jsonl").write_text('{"op": "mla"}\n' * count, encoding="utf-8")
    profile = types.SimpleNamespace(source="trace.jsonl", format="jsonl", records=5)
    assert stale_profile(str(tmp_path), "profile.md", profile) == (
        "trace.jsonl",
        f"trace.jsonl holds {words}, the profile read 5",
    )
