"""profile.md's Top 3 Opportunities is prior research: ignoring all of it is item 7."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from kernelopt.diagnose import Diagnosis, Pathology, diagnose
from kernelopt.experiments import Recommendation, SourceRef, read_log
from tests.conftest import write_files

from .conftest import UNRELATED_TITLES

P = Pathology
DOCS_LOG = Path(__file__).resolve().parents[2] / "docs" / "kernels" / "mla_decode"

_HEADER = (
    "| Exp | Description | Latency | Unit | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|\n"
)
# The profile hand-off as ProfileReport.render() writes it, after the experiment named in
# its heading. Lines: 1 heading, 2 bottleneck, 3 root cause, 4 Top 3 heading, 5-7 items.
_WARP = (
    "Warp Specialization (Producer/Consumer Warpgroups) (`warp-specialization`) -- est. 57% "
    "gain -- trigger: arith_intensity=228, ridge=163, tc_pct=43.4"
)
_TMA = (
    "Block Pointers and Tensor Descriptors (TMA) (`block-pointers-tma`) -- est. 57% gain "
    "-- trigger: arith_intensity=228, ridge=163, tc_pct=43.4"
)


def _profile(name: str, items: Sequence[str]) -> str:
    """A profile hand-off of kernel ``name`` (and what follows it in the heading)."""
    return (
        f"## Profile: {name} | b=32, s=1, t=4096, h=128\n"
        "### Bottleneck: Compute-bound\n"
        "Root cause: FLOPs set the floor.\n"
        "### Top 3 Opportunities (ranked by estimated impact)\n"
        + "".join(f"{rank}. {item}\n" for rank, item in enumerate(items, start=1))
    )


def _log(
    root: Path,
    titles: Sequence[str],
    profile: str | None,
    *,
    tags: dict[int, str] | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """A seed log: a baseline, then one attempt per title (exps 2, 3, ...), each tagged
    with ``tags`` where given; ``profile`` as experiments/profile.md."""
    rows = ["| 1 | torch eager baseline | 100 | us | PASS | BASELINE |  |\n"]
    rows += [
        f"| {n} | {title} | {100 - n} | us | PASS | KEPT | {(tags or {}).get(n, '')} |\n"
        for n, title in enumerate(titles, start=2)
    ]
    written = {"experiments/summary.md": _HEADER + "".join(rows), **(files or {})}
    if profile is not None:
        written["experiments/profile.md"] = profile
    return write_files(root, written)


def _check(diagnosis: Diagnosis) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is P.IGNORED_PRIOR_RESEARCH)


# --- the reader -------------------------------------------------------------------------


def test_the_log_reader_carries_the_top3_as_recommendations(tmp_path: Path) -> None:
    root = _log(tmp_path, ["first kernel"], _profile("mla_decode exp 2", [_WARP, _TMA]))
    profile = read_log(root).profile
    assert profile is not None and profile.experiment == 2
    assert profile.opportunities == (
        Recommendation(
            text="Warp Specialization (Producer/Consumer Warpgroups)",
            source=SourceRef(path="experiments/profile.md", line=5),
            experiment=2,
            after=3,
            catalog_ids=("warp-specialization",),
        ),
        Recommendation(
            text="Block Pointers and Tensor Descriptors (TMA)",
            source=SourceRef(path="experiments/profile.md", line=6),
            experiment=2,
            after=3,
            catalog_ids=("block-pointers-tma",),
        ),
    )
    # The Top 3 is the profile's, not a plan's or a note's.
    assert read_log(root).recommendations == ()


def test_the_heading_dates_the_profile_by_the_latest_experiment_it_names(
    tmp_path: Path,
) -> None:
    heading = "mla_decode seesaw (exps 26, 30, 32), profiled in exp 35"
    root = _log(tmp_path, ["first kernel"], _profile(heading, [_WARP]))
    profile = read_log(root).profile
    assert profile is not None
    assert (profile.experiment, profile.opportunities[0].after) == (35, 36)


def test_an_experiments_own_profile_is_dated_by_its_folder(tmp_path: Path) -> None:
    root = _log(
        tmp_path,
        ["first kernel", "second kernel"],
        None,
        files={"experiments/exp_3/profile.md": _profile("mla_decode v2", [_WARP])},
    )
    profile = read_log(root).profile
    assert profile is not None and profile.experiment == 3
    assert profile.opportunities[0].source == SourceRef(path="experiments/exp_3/profile.md", line=5)


def test_a_top3_table_and_items_past_the_third(tmp_path: Path) -> None:
    table = (
        "## Profile: mla_decode exp 4 | b=32\n"
        "### Top 3 Opportunities\n"
        "| Rank | Opportunity | Entry | Est. gain |\n"
        "|---|---|---|---|\n"
        "| 1 | Kernel Fusion | kernel-fusion | 40% |\n"
        "| 2 | Split-KV Flash Decoding | `split-kv-flash-decoding` | 30% |\n"
    )
    profile = read_log(_log(tmp_path / "table", ["first kernel"], table)).profile
    assert profile is not None
    assert [(r.text, r.catalog_ids, r.source.line) for r in profile.opportunities] == [
        ("Kernel Fusion", ("kernel-fusion",), 5),
        ("Split-KV Flash Decoding", ("split-kv-flash-decoding",), 6),
    ]
    four = _profile("mla_decode exp 2", [_WARP, _TMA, _WARP.replace("warp-", "x-"), _TMA])
    listed = read_log(_log(tmp_path / "four", ["first kernel"], four)).profile
    assert listed is not None and len(listed.opportunities) == 3


def test_an_item_saying_none_is_no_opportunity(tmp_path: Path) -> None:
    text = _profile("mla_decode exp 2", ["None: no catalog trigger fired on these metrics"])
    profile = read_log(_log(tmp_path, ["first kernel"], text)).profile
    assert profile is not None and profile.opportunities == ()


def test_the_version_a_heading_names_is_kept(tmp_path: Path) -> None:
    root = _log(tmp_path, ["first kernel"], _profile("mla_decode v2", [_WARP]))
    profile = read_log(root).profile
    assert profile is not None
    assert (profile.version, profile.experiment, profile.opportunities[0].after) == ("v2", None, 0)


# --- the detector -----------------------------------------------------------------------


def test_a_top3_no_later_attempt_tried_is_ignored_research(tmp_path: Path) -> None:
    titles = ["first kernel", *UNRELATED_TITLES[:3]]
    root = _log(tmp_path, titles, _profile("mla_decode exp 2", [_WARP, _TMA]))
    finding = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert finding.summary == (
        "The Top 3 Opportunities list of experiments/profile.md:5-6, written after exp 2, "
        "named `warp-specialization` and `block-pointers-tma`; none of the 3 attempts that "
        "followed (exps 3, 4, 5) tried any of them."
    )
    assert finding.experiments == (3, 4, 5)
    assert [(e.source, e.experiments) for e in finding.evidence] == [
        ("experiments/profile.md:5", (2,)),
        ("experiments/profile.md:6", (2,)),
    ]
    assert "`warp-specialization`" in finding.evidence[0].quote
    # The actions link the catalog entries, in the profile's rank order.
    assert [a.catalog_id for a in finding.actions] == ["warp-specialization", "block-pointers-tma"]
    assert finding.actions[0].path is not None


def test_an_attempt_tagged_with_an_entry_id_acts_on_the_top3(tmp_path: Path) -> None:
    titles = ["first kernel", *UNRELATED_TITLES[:3]]
    root = _log(
        tmp_path,
        titles,
        _profile("mla_decode exp 2", [_WARP, _TMA]),
        tags={4: "block-pointers-tma"},
    )
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _check(diagnosis) == (
        "The Top 3 Opportunities list of experiments/profile.md:5-6 (`warp-specialization` and "
        "`block-pointers-tma`; written after exp 2) was acted on: exp 4 tried "
        "`block-pointers-tma`."
    )


def test_a_top3_the_kernel_already_shows_is_taken_up(tmp_path: Path) -> None:
    titles = ["first kernel", *UNRELATED_TITLES[:3]]
    split = (
        "Split-KV Flash Decoding (`split-kv-flash-decoding`) -- est. 40% gain -- trigger: "
        "waves=0.485"
    )
    kernel = "import triton\n\n\ndef launch(q, k, num_splits=4):\n    return num_splits\n"
    root = _log(
        tmp_path,
        titles,
        _profile("mla_decode exp 2", [split]),
        files={"CLAUDE.md": "Kernel: kernels/mla.py\n", "kernels/mla.py": kernel},
    )
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert "the kernel already shows `split-kv-flash-decoding` (kernels/mla.py:4)" in _check(
        diagnosis
    )


def test_a_later_note_quoting_an_item_answers_the_top3(tmp_path: Path) -> None:
    titles = ["first kernel", *UNRELATED_TITLES[:3]]
    note = "# Experiment 4\n\nWe left Warp Specialization (Producer/Consumer Warpgroups) out.\n"
    root = _log(
        tmp_path,
        titles,
        _profile("mla_decode exp 2", [_WARP]),
        files={"experiments/exp_4/result.md": note},
    )
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert "a later note quotes `warp-specialization`" in _check(diagnosis)


def test_too_few_attempts_after_the_profile_are_not_judged(tmp_path: Path) -> None:
    root = _log(tmp_path, ["first kernel", *UNRELATED_TITLES[:2]], _profile("k exp 2", [_WARP]))
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert _check(diagnosis) == (
        "The Top 3 Opportunities list of experiments/profile.md:5 (`warp-specialization`; "
        "written after exp 2) has 2 attempts after it, fewer than 3 to judge."
    )


def test_a_profile_that_names_no_experiment_is_not_judged(tmp_path: Path) -> None:
    # Written at any point: the attempts before it had no Top 3 to follow.
    titles = ["first kernel", *UNRELATED_TITLES[:4]]
    root = _log(tmp_path, titles, _profile("mla_decode", [_WARP]))
    diagnosis = diagnose(root)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert "names no experiment the profile followed" in _check(diagnosis)


def test_a_version_dates_the_profile_by_the_latest_experiment_naming_it(
    tmp_path: Path,
) -> None:
    titles = ["v2: first kernel", "v2 with BLOCK_N=64", *UNRELATED_TITLES[:3]]
    root = _log(tmp_path, titles, _profile("mla_decode v2", [_WARP]))
    finding = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert finding.experiments == (4, 5, 6)
    assert "written after exp 3, the latest experiment naming v2" in finding.summary
    # Under until, the experiments left out may name the version later: not judged.
    cut = diagnose(root, until=6)
    assert cut.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert "dated only by the version its heading names (v2)" in _check(cut)


def test_a_version_no_title_names_leaves_the_profile_undated(tmp_path: Path) -> None:
    titles = ["first kernel", *UNRELATED_TITLES[:4]]
    diagnosis = diagnose(_log(tmp_path, titles, _profile("mla_decode v7", [_WARP])))
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert "(v7), and no experiment read names it, so it was not judged" in _check(diagnosis)


def test_under_until_a_profile_written_later_is_not_judged(tmp_path: Path) -> None:
    titles = ["first kernel", *UNRELATED_TITLES[:6]]
    root = _log(tmp_path, titles, _profile("mla_decode exp 5", [_WARP]))
    assert diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH) is not None
    cut = diagnose(root, until=5)
    assert cut.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert "comes after the experiments read" in _check(cut)


def test_the_top3_leads_a_finding_with_other_ignored_recommendations(tmp_path: Path) -> None:
    titles = ["first kernel", *UNRELATED_TITLES[:4]]
    plan = "# Plan\n\n## Next steps\n- Try a persistent grid that claims tiles from a counter\n"
    root = _log(
        tmp_path,
        titles,
        _profile("mla_decode exp 2", [_WARP]),
        files={"experiments/exp_2/plan.md": plan},
    )
    finding = diagnose(root).finding(P.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert finding.summary.startswith("The Top 3 Opportunities list of experiments/profile.md:5")
    assert "; 1 other recommendation from earlier plans/results was never acted on" in (
        finding.summary
    )
    assert [e.source for e in finding.evidence] == [
        "experiments/profile.md:5",
        "experiments/exp_2/plan.md:4",
    ]
    assert finding.actions[0].catalog_id == "warp-specialization"


def test_the_mla_log_acted_on_its_top3() -> None:
    # profile.md, profiled in exp 35, ranks software pipelining first: exp 36 tries it.
    diagnosis = diagnose(DOCS_LOG)
    assert diagnosis.finding(P.IGNORED_PRIOR_RESEARCH) is None
    assert "written after exp 35) was acted on: exp 36 tried `software-pipelining`" in (
        _check(diagnosis)
    )


def test_diagnose_still_imports_without_torch() -> None:
    code = "import kernelopt.diagnose, sys; assert 'torch' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
