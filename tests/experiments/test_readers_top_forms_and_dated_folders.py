"""A ``Top N opportunities`` section is read alike in profile.md and in a result or a note
(its headings, its list and table forms, an id that says ``none``), and a folder whose
number is a date (``exp_2026-05-26/``) is no experiment's."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.experiments import ExperimentLog, read_log
from kernelopt.experiments.readers.seed import folder_number

from ..conftest import UNRELATED_TITLES as _UNRELATED
from ..conftest import summary_table as _summary
from ..conftest import write_files


def _log(root: Path, files: dict[str, str]) -> ExperimentLog:
    # No catalog: an entry id is one the file wrote, never one guessed from its words.
    return read_log(write_files(root, files), catalog=())


def _opportunities(log: ExperimentLog) -> list[tuple[str, tuple[str, ...], int]]:
    assert log.profile is not None
    return [(r.text, r.catalog_ids, r.source.line) for r in log.profile.opportunities]


# --- 1. an id cell of profile.md's Top 3 that says none --------------------------------------


@pytest.mark.parametrize("cell", ["none", "None", "NONE", "`none`", "`NONE`", "**none**"])
def test_a_profile_top3_id_cell_saying_none_names_no_entry(tmp_path: Path, cell: str) -> None:
    profile = (
        "## Profile: mla_decode exp 1 | b=32\n"
        "### Top 3 Opportunities\n"
        "| Rank | Opportunity | Entry |\n"
        "|---|---|---|\n"
        f"| 1 | Fuse the softmax into the KV loop | {cell} |\n"
        "| 2 | Split the KV sequence | `split-kv-flash-decoding` |\n"
    )
    log = _log(tmp_path, {"experiments/profile.md": profile})
    assert _opportunities(log) == [
        ("Fuse the softmax into the KV loop", (), 5),
        ("Split the KV sequence", ("split-kv-flash-decoding",), 6),
    ]


def test_a_profile_top3_item_backticking_none_names_no_entry(tmp_path: Path) -> None:
    profile = (
        "## Profile: mla_decode exp 1 | b=32\n"
        "### Top 3 Opportunities\n"
        "1. Fuse the softmax into the KV loop (`none`) -- est. 20% gain\n"
    )
    log = _log(tmp_path, {"experiments/profile.md": profile})
    assert _opportunities(log) == [("Fuse the softmax into the KV loop", (), 3)]


def test_a_none_backticked_in_another_cell_leaves_the_id_column_read(tmp_path: Path) -> None:
    # The rule is the same in every Top N table: a "none" in a trigger cell names no
    # entry, and does not hide the id column's.
    table = (
        "| Rank | Opportunity | Entry | Trigger |\n"
        "|---|---|---|---|\n"
        "| 1 | Producer and consumer warpgroups | warp-specialization | `none` |\n"
    )
    result = "# Exp 2: retile the KV loop\n\n- Latency: 98 us\n\n## Top 3 opportunities\n" + table
    log = _log(
        tmp_path,
        {
            "experiments/summary.md": _summary(["retile the KV loop"]),
            "experiments/exp_2/result.md": result,
            "experiments/profile.md": "## Profile: mla_decode exp 2 | b=32\n### Top 3 "
            "Opportunities\n" + table,
        },
    )
    row = ("Producer and consumer warpgroups", ("warp-specialization",))
    assert [(r.text, r.catalog_ids) for r in log.recommendations] == [row]
    assert [(text, ids) for text, ids, _line in _opportunities(log)] == [row]


# --- 2. the headings of profile.md's Top section ---------------------------------------------

_ITEMS = "".join(
    f"{n}. {name} (`{entry}`) -- est. {50 - 5 * n}% gain\n"
    for n, (name, entry) in enumerate(
        [
            ("Kernel Fusion", "kernel-fusion"),
            ("Split-KV", "split-kv-flash-decoding"),
            ("Warpgroups", "warp-specialization"),
            ("TMA loads", "block-pointers-tma"),
            ("Persistent grid", "persistent-kernel"),
            ("CUDA graphs", "cuda-graphs"),
        ],
        start=1,
    )
)


@pytest.mark.parametrize(
    ("heading", "count"),
    [
        ("### Top 5 Opportunities", 5),
        ("### Top 5 opportunities (ranked by estimated impact)", 5),
        ("## Top-2 Opportunities", 2),
        ("### Top 3 Opportunities (ranked by estimated impact)", 3),
        ("### Top three opportunities", 3),
        # No number: every item, as a result's or a note's "Top opportunities" is read.
        ("### Top opportunities", 6),
        ("### Top Opportunities", 6),
    ],
)
def test_a_profile_reads_the_top_n_headings_results_and_notes_read(
    tmp_path: Path, heading: str, count: int
) -> None:
    profile = f"## Profile: mla_decode exp 1 | b=32\n{heading}\n{_ITEMS}"
    found = _opportunities(_log(tmp_path, {"experiments/profile.md": profile}))
    assert [line for _text, _ids, line in found] == list(range(3, 3 + count))
    assert found[1] == ("Split-KV", ("split-kv-flash-decoding",), 4)


def test_a_profile_top5_table_gives_its_first_five_rows(tmp_path: Path) -> None:
    rows = "".join(f"| {n} | Opportunity number {n} | `entry-{n}` |\n" for n in range(1, 8))
    profile = (
        "## Profile: mla_decode exp 1 | b=32\n"
        "### Top 5 Opportunities\n"
        "| Rank | Opportunity | Entry |\n|---|---|---|\n" + rows
    )
    found = _opportunities(_log(tmp_path, {"experiments/profile.md": profile}))
    assert [ids for _text, ids, _line in found] == [(f"entry-{n}",) for n in range(1, 6)]


def test_a_profile_table_of_its_top_kernels_is_no_top3(tmp_path: Path) -> None:
    # "Top 3" alone is no ranked list of opportunities: here the kernels taking the most
    # time, whose names are no optimizations.
    profile = (
        "## Profile: mla_decode exp 1 | b=32\n"
        "### Top 3 kernels by GPU time\n"
        "| Rank | Kernel name | Time (us) |\n"
        "|---|---|---|\n"
        "| 1 | mla_decode_kernel | 41.2 |\n"
    )
    assert _opportunities(_log(tmp_path, {"experiments/profile.md": profile})) == []


# --- 3. a Top N section of a result or a note written as a list ------------------------------

# Lines: 1 heading, 3 latency, 5 Top 3 heading, 6-7 item 1 and its sub-item, 8-11 items.
_LISTED_RESULT = (
    "# Exp 2: retile the KV loop\n"
    "\n"
    "- Latency: 98 us\n"
    "\n"
    "## Top 3 opportunities\n"
    "1. Producer and consumer warpgroups (`warp-specialization`) -- est. 30% gain -- "
    "trigger: dram_pct=40\n"
    "   - measured on the long-context point only\n"
    "2. None.\n"
    "3. Split-KV -- est. 10% gain\n"
    "4. Kernel Fusion (`kernel-fusion`) -- est. 5% gain\n"
)


def test_a_listed_top_section_in_a_result_gives_the_items_backticked_ids(
    tmp_path: Path,
) -> None:
    log = _log(
        tmp_path,
        {
            "experiments/summary.md": _summary(["retile the KV loop", "narrower masks"]),
            "experiments/exp_2/result.md": _LISTED_RESULT,
        },
    )
    # The opportunity's name with the id beside it, not the whole item with ids guessed
    # from its words; the sub-item and the "None." item are no opportunities, a short name
    # without an id still is one, and the heading ranks three.
    assert [(r.text, r.catalog_ids, r.source.line, r.after) for r in log.recommendations] == [
        ("Producer and consumer warpgroups", ("warp-specialization",), 6, 3),
        ("Split-KV", (), 9, 3),
    ]


def test_a_listed_top_n_section_in_a_note_gives_its_first_n_items(tmp_path: Path) -> None:
    note = (
        "# Retile the KV loop\n\n"
        "## Change\nTiles of 64 keys.\n\n## Result\nLatency: 80 us\n\n"
        "## Top 2 opportunities\n"
        "- Split the KV sequence (`split-kv-flash-decoding`) -- est. 30% gain\n"
        "- Warpgroups (`WARP-SPEC`, `warp-specialization`) -- est. 20% gain\n"
        "- Kernel Fusion (`kernel-fusion`) -- est. 10% gain\n"
    )
    log = _log(tmp_path, {"notes/retile.md": note})
    assert [(r.text, r.catalog_ids, r.source.line) for r in log.recommendations] == [
        ("Split the KV sequence", ("split-kv-flash-decoding",), 10),
        ("Warpgroups", ("WARP-SPEC", "warp-specialization"), 11),
    ]


def test_diagnose_reports_an_ignored_listed_top_item_by_its_entry_id(tmp_path: Path) -> None:
    root = write_files(
        tmp_path,
        {
            "experiments/summary.md": _summary(["retile the KV loop", *_UNRELATED]),
            "experiments/exp_2/result.md": _LISTED_RESULT.replace("3. Split-KV", "3. ---"),
        },
    )
    finding = diagnose(root).finding(Pathology.IGNORED_PRIOR_RESEARCH)
    assert finding is not None
    assert finding.experiments == (3, 4, 5)
    assert "experiments/exp_2/result.md:6" in [e.source for e in finding.evidence]
    assert "warp-specialization" in [a.catalog_id for a in finding.actions]


# --- 4. a folder named by a date --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "number"),
    [
        ("exp_2026-05-26", None),
        ("exp_2026-05-26-retile", None),
        ("Exp-2026.05.26", None),
        ("exp_7-2026-05-26", 7),
        ("exp_2026", 2026),
        ("exp_12_tiles", 12),
    ],
)
def test_a_folder_number_followed_by_a_month_and_day_is_a_date(
    name: str, number: int | None
) -> None:
    assert folder_number(name) == number


def test_a_dated_folder_is_no_experiment_and_is_named_in_the_unread(tmp_path: Path) -> None:
    result = "# Retile the KV loop\n\n- Latency: 97 us\n- Status: KEPT\n"
    log = _log(
        tmp_path,
        {
            "experiments/summary.md": _summary(["first kernel"]),
            "experiments/exp_2026-05-26/result.md": result,
        },
    )
    assert log.experiment(2026) is None
    reasons = {u.path: u.reason for u in log.unread}
    assert reasons["experiments/exp_2026-05-26"] == (
        "Expected a folder named exp_N (N a number of up to five digits), got exp_2026-05-26 "
        "(a date numbers no experiment); not read as an experiment"
    )


def test_a_dated_folder_does_not_clash_with_the_experiment_of_its_year(tmp_path: Path) -> None:
    result = "# Exp 2026: retile the KV loop\n\n- Latency: 97 us\n- Status: KEPT\n"
    log = _log(
        tmp_path,
        {
            "experiments/exp_2026/result.md": result,
            "experiments/exp_2026-05-26/result.md": "# Split the KV sequence\n\n- Latency: 95 us\n",
        },
    )
    # Only exp_2026/ holds experiment 2026: its time, no warning of two folders holding
    # it, and the dated folder named as read as no experiment.
    experiment = log.experiment(2026)
    assert experiment is not None and experiment.latency == 97
    assert not [w for w in log.warnings if "hold experiment" in w]
    assert [u.path for u in log.unread] == ["experiments/exp_2026-05-26"]


def test_a_profile_in_a_dated_folder_is_dated_by_its_heading(tmp_path: Path) -> None:
    profile = (
        "## Profile: mla_decode exp 4 | b=32\n"
        "### Top 3 Opportunities\n"
        "1. Kernel Fusion (`kernel-fusion`) -- est. 40% gain\n"
    )
    log = _log(tmp_path, {"experiments/exp_2026-05-26/profile.md": profile})
    assert log.profile is not None and log.profile.experiment == 4
    assert [r.after for r in log.profile.opportunities] == [5]
