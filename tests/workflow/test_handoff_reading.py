"""What the profile hand-off's reader does with a Top 3 written two ways at once, and what
``kernelopt report profile --check`` makes of a hand-off it could not fully read.

A second Top 3 table is named as not read (the first holds the ranking); a table row
written right under a list item is no part of the item's trigger; and ``--check`` lists
what the reader left out as problems (exit 1), where the plain reading prints it as a
warning line and exits 0.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Literal

import pytest

from kernelopt import FormatError
from kernelopt.bench import Opportunity, ProfileReport
from kernelopt.cli import main
from kernelopt.workflow import ProfileWarning, parse_profile, parse_profiles

from .conftest import memory_bound_report

SPLIT_KV = Opportunity(
    name="Split-KV flash decoding",
    entry_id="split-kv-flash-decoding",
    gain_pct=41.0,
    trigger="dram_pct=48.3",
)
COMBINE = Opportunity(name="Fused combine", entry_id="", gain_pct=5.0, trigger="waves<1")
REPORT = memory_bound_report()
HEAD = REPORT.render().partition("(none:")[0]  # everything up to the Top 3's items
FIRST_LINE = HEAD.count("\n") + 1  # the line of the Top 3's first item or table row
SPLIT_KV_ITEM = (
    "1. Split-KV flash decoding (`split-kv-flash-decoding`) -- est. 41% gain -- "
    "trigger: dram_pct=48.3\n"
)
TABLE = (
    "| Rank | Opportunity | Entry | Est. Gain | Trigger |\n"
    "|------|-------------|-------|-----------|---------|\n"
    "| 1 | Split-KV flash decoding | `split-kv-flash-decoding` | 41% | dram_pct=48.3 |\n"
)
# Another writer's ranking, with columns of its own.
OTHER_TABLE = "| Rank | Opportunity | Est. Gain |\n|--|--|--|\n| 1 | Staged loads | 2% |\n"
ROW = "| 2 | Fused combine | 5% | waves<1 |\n"
FOUR_ITEMS = (
    SPLIT_KV_ITEM
    + "2. Fused combine -- est. 5% gain -- trigger: waves<1\n"
    + "3. CUDA graphs -- est. 3% gain -- trigger: launch_overhead_pct=10\n"
    + "4. Staged loads -- est. 2% gain -- trigger: occupancy_pct=20\n"
)
WITH_SPLIT_KV = ProfileReport(
    kernel=REPORT.kernel,
    version=REPORT.version,
    point=REPORT.point,
    stages=REPORT.stages,
    bottleneck=REPORT.bottleneck,
    root_cause=REPORT.root_cause,
    opportunities=(SPLIT_KV,),
)


def _said(text: str) -> tuple[ProfileReport, list[str]]:
    """The report of ``text`` (read as ``profile.md``) and the ProfileWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = parse_profile(text, path="profile.md")
    return report, [str(w.message) for w in caught if w.category is ProfileWarning]


def _write(folder: Path, text: str) -> str:
    path = folder / "profile.md"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _two_tables_note(first: int, second: int) -> str:
    return (
        f"profile.md:{second} [Top 3 Opportunities]: Expected the Top 3 as one table, got 2 "
        f"tables (header rows at lines {first} and {second}); the table at line {first} "
        f"read, the table at line {second} not read"
    )


# --- a second Top 3 table ----------------------------------------------------------------


def test_a_second_top_3_table_is_named_not_read_as_rows_of_the_first() -> None:
    # Read as rows of the first, its header failed as "a gain like '30%', got 'Est. Gain'".
    report, said = _said(HEAD + TABLE + "\n" + OTHER_TABLE)
    second = FIRST_LINE + TABLE.count("\n") + 1
    assert report.opportunities == (SPLIT_KV,)
    assert said == [_two_tables_note(FIRST_LINE, second)]


def test_a_second_table_right_under_the_first_is_told_by_its_separator() -> None:
    report, said = _said(HEAD + TABLE + TABLE)
    assert report.opportunities == (SPLIT_KV,)
    assert said == [_two_tables_note(FIRST_LINE, FIRST_LINE + 3)]


def test_every_table_after_the_first_is_named() -> None:
    _, said = _said(HEAD + TABLE + "\n" + OTHER_TABLE + "\nAnd mine:\n\n" + OTHER_TABLE)
    second = FIRST_LINE + 4
    third = second + 6
    assert said == [
        f"profile.md:{second} [Top 3 Opportunities]: Expected the Top 3 as one table, got 3 "
        f"tables (header rows at lines {FIRST_LINE}, {second} and {third}); the table at line "
        f"{FIRST_LINE} read, the tables at lines {second} and {third} not read"
    ]


def test_one_table_with_its_separator_reads_without_a_warning() -> None:
    report, said = _said(HEAD + TABLE + "| 2 | Fused combine | | 5% | waves<1 |\n")
    assert (report.opportunities, said) == ((SPLIT_KV, COMBINE), [])


def test_the_first_table_is_still_checked_row_by_row() -> None:
    # The second table is cut off; a row of the first the record cannot hold still fails.
    bad = TABLE.replace("| 41% |", "| lots |")
    with pytest.raises(FormatError, match="Expected an estimated gain like '30%', got 'lots'"):
        _said(HEAD + bad + "\n" + OTHER_TABLE)


def test_the_second_table_is_named_for_each_hand_off_of_several() -> None:
    text = HEAD + TABLE + "\n" + OTHER_TABLE
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reports = parse_profiles(text + "\n" + text, path="profile.md")
    assert [r.opportunities for r in reports] == [(SPLIT_KV,), (SPLIT_KV,)]
    assert [w.category for w in caught] == [ProfileWarning, ProfileWarning]


# --- a table row under a list item --------------------------------------------------------


@pytest.mark.parametrize("marker", ["1.", "-"])
def test_a_table_row_under_an_item_is_not_read_into_its_trigger(marker: str) -> None:
    item = SPLIT_KV_ITEM.replace("1.", marker, 1)
    report, said = _said(HEAD + item + ROW)
    assert report.opportunities == (SPLIT_KV,)  # the trigger ends where the item does
    row_line = FIRST_LINE + 1
    assert said == [
        f"profile.md:{row_line} [Top 3 Opportunities]: Expected the Top 3 as a list or a "
        f"table, not both, got a table at line {row_line} beside the list at line "
        f"{FIRST_LINE}; the list read, the table not read"
    ]


def test_a_row_under_a_bullet_beside_the_list_keeps_the_bullet_s_text() -> None:
    _, said = _said(HEAD + SPLIT_KV_ITEM + "   - needs a combine kernel\n" + ROW)
    assert said[0].endswith(f"not read: line {FIRST_LINE + 1}: 'needs a combine kernel'")
    assert f"got a table at line {FIRST_LINE + 2} beside the list" in said[1]


def test_an_item_wrapped_onto_the_next_line_still_keeps_it() -> None:
    wrapped = SPLIT_KV_ITEM.replace(" -- trigger:", "\n   -- trigger:")
    assert _said(HEAD + wrapped) == (WITH_SPLIT_KV, [])


def test_a_row_under_a_constraint_of_a_task_still_reads_as_before() -> None:
    # Only the profile's reader names such rows: the task's keeps them in the item's text.
    from kernelopt.workflow import parse_task

    text = (
        "## Optimization Task: mla_decode v2 -> v3\n"
        "### Current Bottleneck: Memory-bound\n"
        "### Optimizations to Apply:\n"
        "1. fuse the combine -- rationale: one launch\n\n"
        "### Constraints\n"
        "- keep the signature\n"
        "| a | b |\n"
    )
    assert parse_task(text).constraints.other == ("keep the signature | a | b |",)


# --- `report profile --check` ---------------------------------------------------------------


def _left_out_problem(path: str) -> str:
    return (
        f"{path}:{FIRST_LINE + 3} [Top 3 Opportunities]: Expected at most 3 opportunities in "
        "the Top 3, got 4; beyond the Top 3 and not read: line "
        f"{FIRST_LINE + 3}: 'Staged loads -- est. 2% gain -- trigger: occupancy_pct=20'"
    )


def test_check_counts_what_the_reader_left_out_as_a_problem(
    tmp_path: Path, knowledge: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, HEAD + FOUR_ITEMS)
    assert main(["report", "profile", path, "--check", "--knowledge", str(knowledge)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    # Listed with the problems, not also printed as a warning line.
    assert err == f"{path}: 1 problem\n  - {_left_out_problem(path)}\n"


def test_check_lists_a_top_3_it_could_not_read(
    tmp_path: Path, knowledge: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, HEAD + "Split-KV would help most.\n")
    assert main(["report", "profile", path, "--check", "--knowledge", str(knowledge)]) == 1
    _, err = capsys.readouterr()
    assert err.startswith(f"{path}: 1 problem\n  - {path}:{FIRST_LINE} [Top 3 Opportunities]:")
    assert err.endswith("the Top 3 could not be read: read as no opportunities\n")


def test_check_json_holds_the_left_out_part_among_its_problems(
    tmp_path: Path, knowledge: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, HEAD + FOUR_ITEMS.replace("split-kv-flash-decoding", "no-such"))
    argv = ["report", "profile", path, "--check", "--knowledge", str(knowledge), "--json"]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == {
        "path": path,
        "ok": False,
        # What the reader left out first, then what the catalog does not know.
        "problems": [_left_out_problem(path), "unknown entry id 'no-such'"],
    }
    assert err == ""


@pytest.mark.parametrize("action", ["ignore", "error"])
def test_check_counts_it_whatever_the_warning_filters_say(
    tmp_path: Path,
    knowledge: Path,
    capsys: pytest.CaptureFixture[str],
    action: Literal["ignore", "error"],
) -> None:
    path = _write(tmp_path, HEAD + FOUR_ITEMS)
    with warnings.catch_warnings():
        warnings.simplefilter(action)
        assert main(["report", "profile", path, "--check", "--knowledge", str(knowledge)]) == 1
    assert capsys.readouterr().err == f"{path}: 1 problem\n  - {_left_out_problem(path)}\n"


def test_check_of_a_fully_read_hand_off_still_passes(
    tmp_path: Path, knowledge: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, WITH_SPLIT_KV.render())
    assert main(["report", "profile", path, "--check", "--knowledge", str(knowledge)]) == 0
    assert capsys.readouterr() == (f"{path}: OK\n", "")


def test_without_check_the_same_file_prints_with_a_warning_line_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, HEAD + FOUR_ITEMS)
    assert main(["report", "profile", path]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("## Profile: mla_decode v2")
    assert err == f"kernelopt report: warning: {_left_out_problem(path)}\n"


def test_the_help_says_check_fails_a_hand_off_read_in_part(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["report", "profile", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "what the reader leaves out, listed instead of printed as warnings" in shown
    assert "1 --check found problems (an unknown entry id, or a part of the hand-off" in shown
