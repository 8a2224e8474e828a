"""The Top 3 of a profile hand-off as people write it: a list of four, a table, prose.

Reading and printing agree: what the record holds is what its rendering prints, and what
is left out of it (an item past the third, a Top 3 in prose) is said in a warning naming
the file and the line, never dropped without a word.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from kernelopt import FormatError
from kernelopt.bench import Opportunity
from kernelopt.cli import main
from kernelopt.workflow import parse_profile, parse_profiles

from .conftest import memory_bound_report, read_profile_warned

SPLIT_KV = Opportunity(
    name="Split-KV flash decoding",
    entry_id="split-kv-flash-decoding",
    gain_pct=41.0,
    trigger="dram_pct=48.3",
)
COMBINE = Opportunity(
    name="Fused combine", entry_id="fused-combine", gain_pct=5.0, trigger="waves<1"
)
GRAPHS = Opportunity(
    name="CUDA graphs", entry_id="cuda-graphs", gain_pct=3.0, trigger="launch_overhead_pct=10"
)
REPORT = memory_bound_report()
HEAD = REPORT.render().partition("(none:")[0]  # everything up to the Top 3's items
FIRST_ITEM_LINE = HEAD.count("\n") + 1
FOUR = (
    "1. Split-KV flash decoding (`split-kv-flash-decoding`) -- est. 41% gain -- trigger: "
    "dram_pct=48.3\n"
    "2. Fused combine (`fused-combine`) -- est. 5% gain -- trigger: waves<1\n"
    "3. CUDA graphs (`cuda-graphs`) -- est. 3% gain -- trigger: launch_overhead_pct=10\n"
    "4. Staged loads -- est. 2% gain -- trigger: occupancy_pct=20\n"
)
TABLE = (
    "| Rank | Opportunity | Entry | Est. Gain | Trigger |\n"
    "|------|-------------|-------|-----------|---------|\n"
    "| 1 | Split-KV flash decoding | `split-kv-flash-decoding` | 41% | dram_pct=48.3 |\n"
    "| 2 | Fused combine | fused-combine | ~5 % | waves<1 |\n"
)


def test_a_list_of_four_is_read_as_the_three_printed_and_the_fourth_is_named() -> None:
    report, said = read_profile_warned(HEAD + FOUR)
    assert report.opportunities == (SPLIT_KV, COMBINE, GRAPHS)
    # The record holds what its rendering prints: the text reads back as the same record.
    assert parse_profile(report.render()) == report
    assert said == [
        f"profile.md:{FIRST_ITEM_LINE + 3} [Top 3 Opportunities]: Expected at most 3 "
        "opportunities in the Top 3, got 4; beyond the Top 3 and not read: "
        f"line {FIRST_ITEM_LINE + 3}: 'Staged loads -- est. 2% gain -- trigger: occupancy_pct=20'"
    ]


def test_report_profile_prints_three_and_says_which_item_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "profile.md"
    path.write_text(HEAD + FOUR, encoding="utf-8")
    # The command says it in one line on stderr (tests/workflow/test_profile_warnings.py).
    assert main(["report", "profile", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == HEAD + FOUR.rpartition("4. ")[0]
    assert f"beyond the Top 3 and not read: line {FIRST_ITEM_LINE + 3}: 'Staged loads" in err
    assert main(["report", "profile", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert "Staged loads" not in out and "CUDA graphs" in out
    assert "Staged loads" in err


def test_three_items_and_every_hand_off_of_several_read_without_a_warning() -> None:
    three = HEAD + FOUR.rpartition("4. ")[0]
    report, said = read_profile_warned(three)
    assert (report.opportunities, said) == ((SPLIT_KV, COMBINE, GRAPHS), [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reports = parse_profiles(three + "\n" + HEAD + FOUR, path="profile.md")
    assert [len(item.opportunities) for item in reports] == [3, 3]
    [warning] = caught
    assert "got 4" in str(warning.message)


def test_a_top_3_written_as_a_table_is_read() -> None:
    report, said = read_profile_warned(HEAD + TABLE)
    assert (report.opportunities, said) == ((SPLIT_KV, COMBINE), [])
    # Printed as the contract's numbered list, which reads back as the same record.
    assert "1. Split-KV flash decoding (`split-kv-flash-decoding`) -- est. 41% gain" in (
        report.render()
    )
    assert parse_profile(report.render()) == report


def test_a_table_may_name_the_entry_in_the_name_cell_and_leave_out_the_trigger() -> None:
    table = (
        "| # | Optimization | Estimated gain |\n"
        "|---|---|---|\n"
        "| 1 | Split-KV flash decoding (`split-kv-flash-decoding`) | 41 |\n"
    )
    report, said = read_profile_warned(HEAD + table)
    assert said == []
    assert report.opportunities == (
        Opportunity(
            name="Split-KV flash decoding",
            entry_id="split-kv-flash-decoding",
            gain_pct=41.0,
            trigger="",
        ),
    )


def test_a_table_of_five_rows_keeps_three_and_names_the_rest() -> None:
    table = "| Rank | Name | Est. gain | Trigger |\n|---|---|---|---|\n" + "".join(
        f"| {rank} | Idea {rank} | {10 - rank}% | tc_pct=9 |\n" for rank in range(1, 6)
    )
    report, said = read_profile_warned(HEAD + table)
    assert [item.name for item in report.opportunities] == ["Idea 1", "Idea 2", "Idea 3"]
    [warning] = said
    assert warning.startswith(f"profile.md:{FIRST_ITEM_LINE + 5} [Top 3 Opportunities]")
    assert "got 5" in warning
    assert warning.endswith(
        f"line {FIRST_ITEM_LINE + 5}: '| 4 | Idea 4 | 6% | tc_pct=9 |'; "
        f"line {FIRST_ITEM_LINE + 6}: '| 5 | Idea 5 | 5% | tc_pct=9 |'"
    )


@pytest.mark.parametrize(
    ("table", "line", "said"),
    [
        (
            "| Rank | Opportunity |\n|---|---|\n| 1 | Split-KV |\n",
            0,
            "Expected a Top 3 table with an estimated gain column",
        ),
        (
            "| Rank | Opportunity | Gain |\n|---|---|---|\n| 1 | Split-KV | a lot |\n",
            2,
            "Expected an estimated gain like '30%', got 'a lot'",
        ),
        (
            "| Rank | Opportunity | Gain |\n|---|---|---|\n| 1 | Split-KV | nan% |\n",
            2,
            "Expected a finite estimated gain, got 'nan%'",
        ),
        (
            "| Rank | Opportunity | Gain |\n|---|---|---|\n| 1 | Split-KV |\n",
            2,
            "Expected 3 cells, as the header has, got 2",
        ),
        (
            "| Rank | Opportunity | Entry | Gain |\n|---|---|---|---|\n| 1 | S | split kv | 4% |\n",
            2,
            "Expected an entry id without spaces, got 'split kv'",
        ),
        (
            "| Rank | Opportunity | Entry | Gain |\n|---|---|---|---|\n| 1 | S | `a`b` | 4% |\n",
            2,
            "Expected an entry id without backticks, got 'a`b'",
        ),
    ],
    ids=[
        "no gain column",
        "a gain in words",
        "a NaN gain",
        "a row short",
        "an id with a space",
        "an id with a backtick",
    ],
)
def test_a_top_3_table_the_record_cannot_hold_is_a_format_error_at_its_line(
    table: str, line: int, said: str
) -> None:
    with pytest.raises(FormatError) as error:
        parse_profile(HEAD + table, path="profile.md")
    assert str(error.value).startswith(
        f"profile.md:{FIRST_ITEM_LINE + line} [Top 3 Opportunities]: {said}"
    )


@pytest.mark.parametrize(
    "prose",
    [
        "Split-KV decoding would help most; a fused combine after it.\n",
        "| Metric | Value |\n|---|---|\n| dram_pct | 48.3 |\n",
    ],
    ids=["prose", "a table of no Top 3"],
)
def test_a_top_3_that_cannot_be_read_says_so(prose: str) -> None:
    report, said = read_profile_warned(HEAD + prose)
    assert report.opportunities == ()
    first = prose.partition("\n")[0]
    assert said == [
        f"profile.md:{FIRST_ITEM_LINE} [Top 3 Opportunities]: Expected the Top 3 as a "
        "numbered list ('name (`entry-id`) -- est. 30% gain -- trigger: dram_pct=40') or a "
        f"table with a Rank or Name column, got {first!r}; the Top 3 could not be read: read "
        "as no opportunities"
    ]


def test_an_empty_top_3_says_so_at_its_heading() -> None:
    report, said = read_profile_warned(HEAD)
    assert report.opportunities == ()
    [warning] = said
    assert warning.startswith(f"profile.md:{FIRST_ITEM_LINE - 1} [Top 3 Opportunities]")
    assert "got an empty section; the Top 3 could not be read" in warning


@pytest.mark.parametrize(
    "none",
    ["(none: no catalog trigger fired on these metrics)", "None.", "n/a", "No opportunities"],
)
def test_a_top_3_that_says_none_reads_as_none_without_a_warning(none: str) -> None:
    report, said = read_profile_warned(HEAD + none + "\n")
    assert (report.opportunities, said) == ((), [])
