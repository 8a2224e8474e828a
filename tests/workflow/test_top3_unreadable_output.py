"""A Top 3 that could not be read is printed as such, not as "no catalog trigger fired";
a Top 3 table's header row written again without its separator is named as a header.

``kernelopt report profile FILE.md`` prints the hand-off it read: a Top 3 read as no
opportunities because it could not be read (prose, a table with neither a rank nor a name
column) prints ``(the Top 3 could not be read: Expected ..., got ...)``, which reads back
as itself, where the "none fired" line of a report without opportunities would say the
catalog found nothing.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from kernelopt import FormatError, InputError
from kernelopt.bench import Opportunity, ProfileReport
from kernelopt.cli import main
from kernelopt.workflow import from_dict, parse_profile, to_dict
from kernelopt.workflow.profile import ProfileWarning

from .conftest import memory_bound_report

REPORT = memory_bound_report()
NONE_FIRED = "(none: no catalog trigger fired on these metrics)"
HEAD = REPORT.render().partition(NONE_FIRED)[0]  # everything up to the Top 3's items
FIRST_LINE = HEAD.count("\n") + 1  # the line of the Top 3's first item or table row
# A table with neither a rank nor a name column: no Top 3 the reader can tell.
UNREADABLE = "| Kernel | Gain |\n|---|---|\n| split | 40% |\n"
REASON = (
    "Expected the Top 3 as a numbered list ('name (`entry-id`) -- est. 30% gain -- trigger: "
    "dram_pct=40') or a table with a Rank or Name column, got '| Kernel | Gain |'"
)
SHOWN = f"(the Top 3 could not be read: {REASON})"
HEADER = "| Rank | Opportunity | Entry | Est. Gain | Trigger |"
TABLE = (
    f"{HEADER}\n"
    "|------|-------------|-------|-----------|---------|\n"
    "| 1 | Split-KV flash decoding | `split-kv-flash-decoding` | 41% | dram_pct=48.3 |\n"
)


def _said(text: str, path: str = "profile.md") -> tuple[ProfileReport, list[str]]:
    """The report of ``text`` (read as ``path``) and the ProfileWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = parse_profile(text, path=path)
    return report, [str(w.message) for w in caught if w.category is ProfileWarning]


def _write(folder: Path, text: str, name: str = "profile.md") -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _note(path: str, line: int) -> str:
    """The warning of the unreadable Top 3, read from ``path`` at ``line``."""
    return (
        f"{path}:{line} [Top 3 Opportunities]: {REASON}; the Top 3 could not be read: read "
        "as no opportunities"
    )


# --- the record: unreadable is not none -------------------------------------------------


def test_the_parsed_report_says_why_its_top_3_could_not_be_read() -> None:
    report, said = _said(HEAD + UNREADABLE)
    assert (report.opportunities, report.top3_unread) == ((), REASON)
    assert said == [_note("profile.md", FIRST_LINE)]


def test_a_top_3_that_says_none_is_read_as_none_not_as_unreadable() -> None:
    report, said = _said(HEAD + NONE_FIRED + "\n")
    assert (report.opportunities, report.top3_unread, said) == ((), "", [])
    assert report.render() == REPORT.render()


def test_a_report_refuses_opportunities_beside_an_unreadable_top_3() -> None:
    item = Opportunity(name="Split-KV", entry_id="split-kv", gain_pct=41.0, trigger="dram")
    with pytest.raises(
        InputError,
        match="top3_unread: Expected no opportunities with a Top 3 that could not be read, "
        "got 1 opportunity",
    ):
        memory_bound_report(opportunities=(item,), top3_unread=REASON)


# --- what is printed ----------------------------------------------------------------------


def test_the_rendering_says_the_top_3_could_not_be_read_and_why() -> None:
    text = memory_bound_report(top3_unread=REASON).render()
    assert SHOWN in text.splitlines()
    assert "no catalog trigger fired" not in text


def test_report_profile_prints_that_the_top_3_could_not_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, HEAD + UNREADABLE)
    assert main(["report", "profile", path]) == 0
    out, err = capsys.readouterr()
    assert out == HEAD + SHOWN + "\n"
    assert err == f"kernelopt report: warning: {_note(path, FIRST_LINE)}\n"


def test_what_report_profile_printed_reads_back_as_itself_and_still_fails_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, HEAD + UNREADABLE)
    assert main(["report", "profile", path, "--check"]) == 1
    assert main(["report", "profile", path]) == 0
    printed, _ = capsys.readouterr()
    again = _write(tmp_path, printed, name="printed.md")
    # The reason is given back as written, not quoted once more inside a new one.
    assert main(["report", "profile", again]) == 0
    out, err = capsys.readouterr()
    assert out == printed
    assert err == f"kernelopt report: warning: {_note(again, FIRST_LINE)}\n"
    assert main(["report", "profile", again, "--check"]) == 1
    _, err = capsys.readouterr()
    assert err == f"{again}: 1 problem\n  - {_note(again, FIRST_LINE)}\n"


def test_report_profile_json_carries_why_the_top_3_could_not_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, HEAD + UNREADABLE)
    assert main(["report", "profile", path, "--json"]) == 0
    out, _ = capsys.readouterr()
    data = json.loads(out)
    assert data["top3_unread"] == REASON
    assert from_dict(data, ProfileReport) == memory_bound_report(top3_unread=REASON)
    assert to_dict(REPORT)["top3_unread"] == ""


# --- a header row where a data row should be ----------------------------------------------


def test_a_header_row_without_its_separator_is_named_as_a_header_row() -> None:
    # Read as a data row, it failed as "Expected an estimated gain like '30%', got 'Est. Gain'".
    # The row above it names a gain and an idea in its cells, but its gain reads: it is a row.
    row = "| 2 | Idea: cut launches | cuda-graphs | 12% | saving launch time |\n"
    text = HEAD + TABLE + row + HEADER + "\n| 3 | Staged loads | | 2% | occupancy |\n"
    line = FIRST_LINE + 4
    with pytest.raises(FormatError) as raised:
        parse_profile(text, path="profile.md")
    assert str(raised.value) == (
        f"profile.md:{line} [Top 3 Opportunities]: Expected a data row of the Top 3 table whose "
        f"header is at line {FIRST_LINE}, got a header row at line {line}: '{HEADER}' (a second "
        "table starts with its header row and a |---| separator line under it)"
    )


def test_a_header_row_of_other_columns_is_named_as_a_header_row_not_by_its_cells() -> None:
    # Read as a data row, it failed as "Expected 5 cells, as the header has, got 3 in ...".
    other = "| Rank | Opportunity | Est. Gain |"
    with pytest.raises(FormatError, match="got a header row at line") as raised:
        parse_profile(HEAD + TABLE + other + "\n| 1 | Staged loads | 2% |\n", path="profile.md")
    assert f"Expected a data row of the Top 3 table whose header is at line {FIRST_LINE}" in str(
        raised.value
    )
    assert "cells" not in str(raised.value)


def test_report_profile_names_the_header_row_and_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, HEAD + TABLE + HEADER + "\n")
    assert main(["report", "profile", path]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"{path}:{FIRST_LINE + 3} [Top 3 Opportunities]: Expected a data row")
    assert f"got a header row at line {FIRST_LINE + 3}: '{HEADER}'" in err
    assert "'Est. Gain'" not in err
