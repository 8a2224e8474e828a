"""Item 7's quotes: which notes answer a recommendation, which only plan to take it up.

A plan kernelopt wrote quotes every recommendation it found ignored and answers none; the
plan of an experiment not yet run takes one up only in a plan, quoted or paraphrased.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.diagnose import Diagnosis, Pathology, diagnose
from kernelopt.experiments import read_log
from tests.conftest import write_files

from .conftest import UNRELATED_TITLES

P = Pathology
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"

_ADVICE = "Stage the columns through shared memory with a swizzled layout to avoid bank conflicts."
_PARAPHRASE = "Columns staged in shared memory, swizzled layout, no bank conflicts."
# A result of exp 6, the experiment the plan under test belongs to.
_RAN = "# Experiment 6: swizzle\n\n- Status: REVERTED\n- Latency: 49.9 us\n"


def _log(root: Path, files: dict[str, str]) -> Path:
    """A softmax log: exp 1 baseline, exp 2 (whose plan advises ``_ADVICE`` next), exps
    3-5 unrelated attempts; ``files`` adds or replaces files under ``experiments/``."""
    written = {
        "exp_1/result.md": "# Experiment 1: torch eager baseline\n\n- Status: BASELINE\n"
        "- Latency: 100 us\n",
        "exp_2/plan.md": "# Plan: first kernel\n\n## Optimizations to apply\n1. Triton kernel.\n\n"
        f"## Next steps\n- {_ADVICE}\n",
        "exp_2/result.md": "# Experiment 2: Triton kernel\n\n- Status: KEPT\n- Latency: 50 us\n",
    }
    for n, title in enumerate(UNRELATED_TITLES[:3], start=3):
        written[f"exp_{n}/result.md"] = (
            f"# Experiment {n}: {title}\n\n- Status: KEPT\n- Latency: {50 - 0.1 * n:.1f} us\n"
        )
    written.update(files)
    return write_files(root, {f"experiments/{name}": text for name, text in written.items()})


def _check(diagnosis: Diagnosis) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is P.IGNORED_PRIOR_RESEARCH)


def _plan(body: str) -> str:
    return f"# Plan: swizzle\n\n## Optimizations to apply\n1. {body}\n"


# --- a plan kernelopt wrote -------------------------------------------------------------


def test_a_diagnosis_kept_as_the_next_plan_leaves_the_example_finding(tmp_path: Path) -> None:
    # As the docs suggest, the plan written as the next experiment's plan.md quotes the
    # ignored recommendation in its checklist and evidence; reading it again changes
    # nothing of item 7.
    root = tmp_path / "mla"
    shutil.copytree(EXAMPLES / "mla-decode-plateau", root)
    before = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert before is not None
    plan = root / "experiments" / "exp_7" / "plan.md"
    assert cli.main(["diagnose", str(root), "--write-plan", str(plan)]) == 1
    assert "split the KV sequence across programs" in plan.read_text(encoding="utf-8")
    after = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert after is not None
    assert after.summary == before.summary
    assert after.evidence == before.evidence


@pytest.mark.parametrize("ran", [False, True], ids=["not-run", "ran"])
def test_a_diagnosis_kept_as_a_plan_answers_nothing(tmp_path: Path, ran: bool) -> None:
    # Whether or not exp 6 has run since, its plan.md is kernelopt's verdict: the quote in
    # it is the finding's own, and exp 6's result (an unrelated change) does not act on it.
    root = _log(tmp_path / "log", {})
    found = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert found is not None
    plan = root / "experiments" / "exp_6" / "plan.md"
    assert cli.main(["diagnose", str(root), "--write-plan", str(plan)]) == 1
    assert _ADVICE[:-1].lower() in plan.read_text(encoding="utf-8").lower()
    if ran:
        write_files(root, {"experiments/exp_6/result.md": _RAN.replace("swizzle", "num_warps=8")})
    again = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert again is not None, _check(diagnose(root))
    assert [e.quote for e in again.evidence] == [e.quote for e in found.evidence]


def test_a_plan_written_by_hand_that_quotes_and_ran_answers(tmp_path: Path) -> None:
    # The same words in a person's plan for an experiment that then ran: acted on outright.
    root = _log(tmp_path / "log", {"exp_6/plan.md": _plan(_ADVICE), "exp_6/result.md": _RAN})
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _check(diagnosis) == "The 1 recommendation followed by 3+ attempts was acted on."


# --- a plan not yet run -----------------------------------------------------------------


@pytest.mark.parametrize("body", [_ADVICE, _PARAPHRASE], ids=["quoted", "paraphrased"])
def test_a_plan_not_yet_run_takes_the_advice_up_only_in_a_plan(tmp_path: Path, body: str) -> None:
    # Quoted word for word or said in other words, a plan without a result is named as
    # one: nothing has been tried yet.
    root = _log(tmp_path / "log", {"exp_6/plan.md": _plan(body)})
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _check(diagnosis) == (
        "The 1 recommendation followed by 3+ attempts was acted on, in a plan not yet run (exp 6)."
    )


def test_a_hypothesis_not_yet_run_that_quotes_is_a_plan_too(tmp_path: Path) -> None:
    hypothesis = f"# Hypothesis\n\nClaim: {_ADVICE}\n"
    root = _log(tmp_path / "log", {"exp_6/hypothesis.md": hypothesis})
    assert _check(diagnose(root)).endswith("acted on, in a plan not yet run (exp 6).")


def test_a_note_of_an_experiment_set_aside_answers_outright(tmp_path: Path) -> None:
    # An experiment not attempted whose notes say why: the decision is recorded, not
    # planned, and answers the recommendation as a result does.
    note = (
        "# Experiment 6: swizzle\n\n- Status: not attempted\n\n## Notes\n\nWe set aside "
        f'"{_ADVICE}": the profile shows no bank conflicts.\n'
    )
    root = _log(tmp_path / "log", {"exp_6/notes.md": note})
    assert not next(e for e in read_log(root).experiments if e.number == 6).attempted
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _check(diagnosis) == "The 1 recommendation followed by 3+ attempts was acted on."


# --- profile.md's Top 3 -----------------------------------------------------------------

_WARP = (
    "Warp Specialization (Producer/Consumer Warpgroups) (`warp-specialization`) -- est. 57% "
    "gain -- trigger: arith_intensity=228, ridge=163, tc_pct=43.4"
)
_PROFILE = (
    "## Profile: mla_decode exp 2 | b=32, s=1, t=4096, h=128\n"
    "### Bottleneck: Compute-bound\n"
    "Root cause: FLOPs set the floor.\n"
    "### Top 3 Opportunities (ranked by estimated impact)\n"
    f"1. {_WARP}\n"
)


def _top_log(root: Path, files: dict[str, str]) -> Path:
    """A seed log whose profile (after exp 2) ranks warp specialization first, and three
    unrelated attempts after it; ``files`` adds files under the root."""
    rows = "".join(
        f"| {n} | {title} | {100 - n} | us | PASS | KEPT |  |\n"
        for n, title in enumerate(["first kernel", *UNRELATED_TITLES[:3]], start=2)
    )
    summary = (
        "| Exp | Description | Latency | Unit | Correct | Status | Tags |\n"
        "|---|---|---|---|---|---|---|\n"
        "| 1 | torch eager baseline | 100 | us | PASS | BASELINE |  |\n" + rows
    )
    return write_files(
        root,
        {"experiments/summary.md": summary, "experiments/profile.md": _PROFILE, **files},
    )


def test_a_plan_not_yet_run_quoting_a_top3_item_is_only_a_plan(tmp_path: Path) -> None:
    plan = "# Plan: producer/consumer\n\n1. Warp Specialization (Producer/Consumer Warpgroups).\n"
    root = _top_log(tmp_path / "log", {"experiments/exp_6/plan.md": plan})
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _check(diagnosis) == (
        "The Top 3 Opportunities list of experiments/profile.md:5 (`warp-specialization`; "
        "written after exp 2) is taken up only in a plan not yet run (exp 6)."
    )


def test_a_diagnosis_kept_as_a_plan_does_not_take_up_the_top3(tmp_path: Path) -> None:
    root = _top_log(tmp_path / "log", {})
    found = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert found is not None
    plan = root / "experiments" / "exp_6" / "plan.md"
    assert cli.main(["diagnose", str(root), "--write-plan", str(plan)]) == 1
    assert "Warp Specialization (Producer/Consumer Warpgroups)" in plan.read_text(encoding="utf-8")
    again = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert again is not None and again.summary == found.summary
