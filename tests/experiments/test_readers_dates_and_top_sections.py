"""A date written after "exp" names no experiment, and a ``Top N opportunities`` table in a
result or a note gives its rows, with the catalog entries of its id column."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.experiments import ExperimentLog, read_log
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers.context import lesson_experiment, read_lessons

from ..conftest import UNRELATED_TITLES as _UNRELATED
from ..conftest import summary_table as _summary
from ..conftest import write_files


def _profile(heading: str) -> str:
    """A profile.md under ``heading``; its Top 3 item is on line 4."""
    return (
        f"{heading}\n"
        "### Bottleneck: Memory-bound\n"
        "### Top 3 Opportunities\n"
        "1. Kernel Fusion (`kernel-fusion`) -- est. 40% gain\n"
    )


def _log(root: Path, files: dict[str, str], **kwargs: object) -> ExperimentLog:
    return read_log(write_files(root, files), catalog=(), **kwargs)  # type: ignore[arg-type]


# --- a date after "exp" ------------------------------------------------------------------


@pytest.mark.parametrize(
    "heading",
    [
        "## Profile after exp 2026-05-26",
        "## Profile: mla_decode exp 2026-05-26 | b=32, s=1, t=4096",
        "## Profile: mla_decode (experiment 2026/05/26) | b=32",
    ],
)
def test_a_date_after_exp_in_a_profile_heading_names_no_experiment(
    tmp_path: Path, heading: str
) -> None:
    log = _log(tmp_path, {"experiments/profile.md": _profile(heading)})
    profile = log.profile
    assert profile is not None and profile.experiment is None
    # Its Top 3 stands after no experiment known, rather than after "exp 2026".
    assert [(r.experiment, r.after) for r in profile.opportunities] == [(None, 0)]


def test_a_profile_heading_with_a_date_keeps_the_experiment_it_names(tmp_path: Path) -> None:
    heading = "## Profile after exp 2026-05-26 (exp 4) | b=32"
    profile = _log(tmp_path, {"experiments/profile.md": _profile(heading)}).profile
    assert profile is not None and profile.experiment == 4
    assert profile.opportunities[0].after == 5


def test_diagnose_does_not_place_a_dated_profile_after_exp_2026(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _summary(["first kernel", *_UNRELATED]),
            "experiments/profile.md": _profile("## Profile after exp 2026-05-26"),
        },
    )
    check = next(
        c for c in diagnose(root).checks if c.pathology is Pathology.IGNORED_PRIOR_RESEARCH
    )
    assert "2026" not in check.sentence
    assert "names no experiment the profile followed" in check.sentence


def test_a_lesson_opening_with_a_dated_exp_cites_no_experiment(tmp_path: Path) -> None:
    lessons = (
        "# Lessons\n"
        "- [exp 2026-05-26] Split-KV pays only above 2k tokens\n"
        "- [exp 7] FP8 keys lose accuracy past 8k tokens\n"
    )
    file = TextFile(path="experiments/LESSONS.md", text=lessons, lines=tuple(lessons.split("\n")))
    assert [lesson_experiment(f) for f in read_lessons(file)] == [None, 7]
    # Under until, a dated lesson is kept: nothing says it cites a later experiment.
    log = _log(
        tmp_path,
        {
            "experiments/summary.md": _summary(["first kernel", "second kernel"]),
            "experiments/LESSONS.md": lessons,
        },
        until=3,
    )
    assert [f.text for f in log.lessons] == ["[exp 2026-05-26] Split-KV pays only above 2k tokens"]


def test_a_dated_result_heading_does_not_disagree_with_its_folder(tmp_path: Path) -> None:
    result = "# Exp 2026-05-26: retile the KV loop\n\n- Latency: 97 us\n- Status: KEPT\n"
    log = _log(
        tmp_path,
        {
            "experiments/summary.md": _summary(["first kernel", "retile the KV loop"]),
            "experiments/exp_3/result.md": result,
        },
    )
    assert not [w for w in log.warnings if "heading says" in w]
    assert log.experiment(3) is not None


def test_a_dated_heading_in_a_step_log_is_no_step(tmp_path: Path) -> None:
    steps = (
        "# Log\n"
        "### Step 1: baseline\nLatency: 100 us\nStatus: KEPT\n"
        "### Step 2: retile the KV loop\nLatency: 90 us\nStatus: KEPT\n"
        "### Exp 2026-05-26: rerun of step 2\nLatency: 91 us\n"
    )
    log = _log(tmp_path, {"steps.md": steps})
    assert [e.number for e in log.experiments] == [1, 2]


def test_a_dated_note_title_keeps_its_date_and_its_words(tmp_path: Path) -> None:
    note = (
        "# Exp 2026-05-26: split the KV sequence\n\n"
        "## Change\nFour splits per head.\n\n## Result\nLatency: 80 us\n"
    )
    (experiment,) = _log(tmp_path, {"notes/split.md": note}).experiments
    assert experiment.description == "Exp 2026-05-26: split the KV sequence"
    assert experiment.date == "2026-05-26"


# --- Top N opportunities in a result or a note ---------------------------------------------

# Lines: 1 heading, 3 latency, 5 Top 3 heading, 6 prose, 8-9 table header, 10-12 rows,
# 14 Next steps heading, 15 its item.
_RESULT = (
    "# Exp 2: retile the KV loop\n"
    "\n"
    "- Latency: 98 us\n"
    "\n"
    "## Top 3 opportunities\n"
    "The profile ranks these by estimated gain; fusing the softmax comes second.\n"
    "\n"
    "| Rank | Opportunity | Entry | Est. gain |\n"
    "|---|---|---|---|\n"
    "| 1 | Split the KV sequence across CTAs | `split-kv-flash-decoding` | 30% |\n"
    "| 2 | Fuse the softmax | kernel-fusion | 20% |\n"
    "| 3 | None. | — | — |\n"
    "\n"
    "## Next steps\n"
    "- Try a persistent kernel with warp specialization\n"
)


def test_a_top_table_in_a_result_gives_its_rows_with_their_entry_ids(tmp_path: Path) -> None:
    log = read_log(
        write_files(
            tmp_path,
            {
                "experiments/summary.md": _summary(["retile the KV loop", "narrower masks"]),
                "experiments/exp_2/result.md": _RESULT,
            },
        )
    )
    found = [(r.text, r.catalog_ids, r.source.line, r.after) for r in log.recommendations]
    # The rows, with the entries of the id column (backticked or not), not the prose
    # above the table; the row saying there is none is no opportunity. The plain "Next
    # steps" item is read as before, its entries found from its words.
    assert found[:2] == [
        ("Split the KV sequence across CTAs", ("split-kv-flash-decoding",), 10, 3),
        ("Fuse the softmax", ("kernel-fusion",), 11, 3),
    ]
    assert [(text, line) for text, _ids, line, _after in found[2:]] == [
        ("Try a persistent kernel with warp specialization", 15)
    ]
    assert "warp-specialization" in found[2][1]


def test_a_top_n_table_in_a_note_gives_its_first_n_rows(tmp_path: Path) -> None:
    note = (
        "# Retile the KV loop\n\n"
        "## Change\nTiles of 64 keys.\n\n## Result\nLatency: 80 us\n\n"
        "## Top 2 opportunities\n"
        "| # | Technique | Catalog id |\n"
        "|---|---|---|\n"
        "| 1 | Split-KV | `split-kv-flash-decoding` |\n"
        "| 2 | Warpgroups | warp-specialization |\n"
        "| 3 | Kernel Fusion | kernel-fusion |\n"
    )
    log = _log(tmp_path, {"notes/retile.md": note})
    # A short name counts beside its entry id; the heading ranks two, so two are read.
    assert [(r.text, r.catalog_ids, r.source.line) for r in log.recommendations] == [
        ("Split-KV", ("split-kv-flash-decoding",), 12),
        ("Warpgroups", ("warp-specialization",), 13),
    ]


def test_a_top_table_in_a_research_note_keeps_its_entry_ids(tmp_path: Path) -> None:
    research = (
        "# Research\n\n"
        "## Top opportunities\n"
        "| Rank | Opportunity | Entry |\n"
        "|---|---|---|\n"
        "| 1 | Producer and consumer warpgroups | `warp-specialization` |\n"
    )
    log = read_log(
        write_files(
            tmp_path,
            {
                "experiments/summary.md": _summary(["first kernel"]),
                "experiments/research.md": research,
            },
        )
    )
    assert [(r.text, r.catalog_ids, r.source.line) for r in log.recommendations] == [
        ("Producer and consumer warpgroups", ("warp-specialization",), 6)
    ]


def test_diagnose_reports_an_ignored_top_row_by_its_entry_id(tmp_path: Path) -> None:
    result = (
        "# Exp 2: retile the KV loop\n\n- Latency: 98 us\n\n"
        "## Top 3 opportunities\n"
        "| Rank | Opportunity | Entry | Est. gain |\n"
        "|---|---|---|---|\n"
        "| 1 | Producer and consumer warpgroups | `warp-specialization` | 40% |\n"
    )
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _summary(["retile the KV loop", *_UNRELATED]),
            "experiments/exp_2/result.md": result,
        },
    )
    finding = diagnose(root).finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert finding.experiments == (3, 4, 5)
    assert [e.source for e in finding.evidence] == ["experiments/exp_2/result.md:8"]
    assert [a.catalog_id for a in finding.actions] == ["warp-specialization"]


def test_an_attempt_tagged_with_a_top_rows_entry_acts_on_it(tmp_path: Path) -> None:
    result = (
        "# Exp 2: retile the KV loop\n\n- Latency: 98 us\n\n"
        "## Top 3 opportunities\n"
        "| Rank | Opportunity | Entry | Est. gain |\n"
        "|---|---|---|---|\n"
        "| 1 | Producer and consumer warpgroups | `warp-specialization` | 40% |\n"
    )
    summary = _summary(["retile the KV loop", *_UNRELATED])
    assert "| narrower masks | 95 |" in summary
    summary = summary.replace(
        "| narrower masks | 95 | us | PASS | KEPT |  |",
        "| narrower masks | 95 | us | PASS | KEPT | warp-specialization |",
    )
    root = write_files(
        tmp_path,
        {"experiments/summary.md": summary, "experiments/exp_2/result.md": result},
    )
    diagnosis = diagnose(root)
    assert diagnosis.finding(Pathology.IGNORED_PRIOR_RESEARCH) is None
    check = next(c for c in diagnosis.checks if c.pathology is Pathology.IGNORED_PRIOR_RESEARCH)
    assert check.sentence == "The 1 recommendation followed by 3+ attempts was acted on."


def test_a_top_row_whose_id_cell_says_none_has_its_entries_found_from_its_words(
    tmp_path: Path,
) -> None:
    result = (
        "# Exp 2: retile the KV loop\n\n- Latency: 98 us\n\n"
        "## Top opportunities\n"
        "| Rank | Opportunity | Entry |\n"
        "|---|---|---|\n"
        "| 1 | Fuse the softmax into the KV loop | none |\n"
    )
    log = read_log(
        write_files(
            tmp_path,
            {
                "experiments/summary.md": _summary(["retile the KV loop", "narrower masks"]),
                "experiments/exp_2/result.md": result,
            },
        )
    )
    # "none" names no entry: the row's words are matched, as a "Next steps" item's are.
    assert [(r.text, r.catalog_ids, r.source.line) for r in log.recommendations] == [
        ("Fuse the softmax into the KV loop", ("kernel-fusion",), 8)
    ]
