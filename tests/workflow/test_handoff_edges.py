"""Hand-offs as a reader of the workflow page writes them: what reads, and what is refused
with the line to fix.

A Stages table without rows is refused at its heading; an item past the Top 3 is named as
written whatever its form; a task's language outside the design languages is a problem
``--check`` lists; a devlog version that its table's heading would read as a note of
another version is refused; a hand-off inside a block quote is named at its quoted
heading; and a heading's trial point is shown as written, without the space after ``|``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from kernelopt import FormatError, InputError
from kernelopt.bench import Opportunity
from kernelopt.catalog import Catalog
from kernelopt.cli import main
from kernelopt.workflow import (
    DESIGN_LANGUAGES,
    Change,
    Constraints,
    OptimizationTask,
    PerfRow,
    parse_profile,
    parse_task,
    parse_version,
    update_devlog,
)

from .conftest import memory_bound_report, read_profile_warned

REPORT = memory_bound_report()
PROFILE = REPORT.render()
HEAD = PROFILE.partition("(none:")[0]  # everything up to the Top 3's items
FIRST_ITEM_LINE = HEAD.count("\n") + 1
THREE_ITEMS = (
    "1. Split-KV flash decoding (`split-kv-flash-decoding`) -- est. 41% gain -- trigger: "
    "dram_pct=48.3\n"
    "2. Fused combine -- est. 5% gain -- trigger: waves<1\n"
    "3. CUDA graphs -- est. 3% gain -- trigger: launch_overhead_pct=10\n"
)
THREE = (
    Opportunity(
        name="Split-KV flash decoding",
        entry_id="split-kv-flash-decoding",
        gain_pct=41.0,
        trigger="dram_pct=48.3",
    ),
    Opportunity(name="Fused combine", entry_id="", gain_pct=5.0, trigger="waves<1"),
    Opportunity(name="CUDA graphs", entry_id="", gain_pct=3.0, trigger="launch_overhead_pct=10"),
)
TASK = OptimizationTask(
    kernel="mla_decode",
    current="v2",
    new_version="v3",
    bottleneck="Memory-bound",
    optimizations=[Change(what="fuse the split combine", rationale="one launch less")],
    constraints=Constraints(language="triton"),
)
VERSION = (
    "## New Version: mla_decode v3\n"
    "### Changes Applied:\n"
    "- fuse the split combine\n"
    "### Files:\n"
    "- Modified: kernels/mla_decode.py\n"
    "### Correctness: PASS -- rel err 1.8e-3\n"
    "\n"
    "### Trial Configurations Checked\n"
    "1. decode [b=32, s=1, t=4096] -- the serving case\n"
    "\n"
    "### Devlog Entry Written: docs/kernels/mla_decode.md\n"
)


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# --- a Stages table without rows -----------------------------------------------------------


def _without_stage_rows() -> tuple[str, int]:
    """The profile with its Stages table's header and separator only, and the heading's line."""
    lines = PROFILE.splitlines(keepends=True)
    heading = next(index for index, line in enumerate(lines) if line.startswith("### Stages"))
    # The heading, the header and the separator stay; the one stage row goes.
    return "".join(lines[: heading + 3] + lines[heading + 4 :]), heading + 1


def test_a_stages_table_without_rows_is_refused_at_its_heading() -> None:
    text, line = _without_stage_rows()
    assert "| mla_decode |" not in text and "| Stage |" in text
    with pytest.raises(FormatError) as caught:
        parse_profile(text, path="profile.md")
    assert str(caught.value) == (
        f"profile.md:{line} [Stages]: Expected at least one stage row, got none"
    )


def test_check_of_a_stages_table_without_rows_fails(
    tmp_path: Path, knowledge: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, line = _without_stage_rows()
    path = _write(tmp_path, "p.md", text)
    assert main(["report", "profile", path, "--check", "--knowledge", str(knowledge)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"{path}:{line} [Stages]: Expected at least one stage row, got none" in err


# --- items past the Top 3 ------------------------------------------------------------------


@pytest.mark.parametrize(
    "fourth",
    [
        "Staged loads -- est. 2% gain",  # the contract's form without its trigger
        "whatever the designer likes",  # no opportunity's form at all
    ],
)
def test_an_item_past_the_third_is_named_as_written_whatever_its_form(fourth: str) -> None:
    report, said = read_profile_warned(HEAD + THREE_ITEMS + f"4. {fourth}\n")
    assert report.opportunities == THREE
    assert said == [
        f"profile.md:{FIRST_ITEM_LINE + 3} [Top 3 Opportunities]: Expected at most 3 "
        "opportunities in the Top 3, got 4; beyond the Top 3 and not read: "
        f"line {FIRST_ITEM_LINE + 3}: {fourth!r}"
    ]


def test_a_table_row_past_the_third_is_named_as_written_whatever_its_cells() -> None:
    table = (
        "| Rank | Opportunity | Est. Gain |\n"
        "|------|-------------|-----------|\n"
        "| 1 | Fused combine | 5% |\n"
        "| 2 | CUDA graphs | 3% |\n"
        "| 3 | Staged loads | 2% |\n"
        "| 4 | Wider tiles | some |\n"
    )
    report, said = read_profile_warned(HEAD + table)
    assert [item.name for item in report.opportunities] == [
        "Fused combine",
        "CUDA graphs",
        "Staged loads",
    ]
    assert said == [
        f"profile.md:{FIRST_ITEM_LINE + 5} [Top 3 Opportunities]: Expected at most 3 "
        "opportunities in the Top 3, got 4; beyond the Top 3 and not read: "
        f"line {FIRST_ITEM_LINE + 5}: '| 4 | Wider tiles | some |'"
    ]


def test_report_profile_prints_the_three_when_the_fourth_has_no_trigger(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "p.md", HEAD + THREE_ITEMS + "4. Staged loads -- est. 2% gain\n")
    assert main(["report", "profile", path]) == 0
    out, err = capsys.readouterr()
    assert out == HEAD + THREE_ITEMS
    assert "beyond the Top 3 and not read" in err and "'Staged loads -- est. 2% gain'" in err


# --- a task's language ---------------------------------------------------------------------

LANGUAGE_PROBLEM = (
    "Language: Expected a language in cuda, cute-dsl, cutile-dsl, triton (or cutile for "
    "cutile-dsl), got 'fortran'"
)


def test_a_language_outside_the_design_languages_is_a_problem_not_a_reading_error() -> None:
    task = parse_task(TASK.render().replace("Language: triton", "Language: fortran"))
    assert task.constraints.language == "fortran"
    assert task.problems(Catalog.builtin()) == [LANGUAGE_PROBLEM]
    # The languages are listed sorted, as the design prompt spells them.
    assert sorted(DESIGN_LANGUAGES) == ["cuda", "cute-dsl", "cutile-dsl", "triton"]


@pytest.mark.parametrize("language", ["triton", "Triton", "cutile", "cutile-dsl", "CUDA"])
def test_every_spelling_a_design_prompt_takes_is_no_problem(language: str) -> None:
    task = attrs.evolve(TASK, constraints=Constraints(language=language))
    assert task.problems(Catalog.builtin()) == []


def test_check_lists_an_unknown_language(
    tmp_path: Path, knowledge: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = TASK.render().replace("Language: triton", "Language: fortran")
    path = _write(tmp_path, "t.md", text)
    assert main(["report", "task", path, "--check", "--knowledge", str(knowledge)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"{path}: 1 problem\n  - {LANGUAGE_PROBLEM}\n"


# --- a devlog version that a heading would read as a note ------------------------------------


@pytest.mark.parametrize("version", ["v2 (fast)", "v2:", "v2:fast", "v2(fast)", "v2\tfast"])
def test_a_version_its_heading_would_read_as_a_note_is_refused(version: str) -> None:
    with pytest.raises(InputError) as caught:
        PerfRow(version=version, point="b=32", time=1.0)
    assert str(caught.value) == (
        "PerfRow.version: Expected a non-empty name without spaces, '|', ':' or '(', "
        f"got {version!r}"
    )


def test_two_versions_are_never_merged_into_one_table(tmp_path: Path) -> None:
    path = tmp_path / "k.md"
    update_devlog(path, [PerfRow(version="v2", point="b=32", time=1.0)])
    before = path.read_text(encoding="utf-8")
    with pytest.raises(InputError, match="without spaces"):
        update_devlog(path, [PerfRow(version="v2 (fast)", point="b=32", time=2.0)])
    assert path.read_text(encoding="utf-8") == before
    assert before.count("### v2") == 1


# --- a hand-off inside a block quote -------------------------------------------------------


def _quoted(text: str) -> str:
    return "Here it is:\n\n" + "".join(f"> {line}" for line in text.splitlines(keepends=True))


@pytest.mark.parametrize(
    ("reader", "text", "label"),
    [
        (parse_task, TASK.render(), "Optimization Task"),
        (parse_version, VERSION, "New Version"),
        (parse_profile, PROFILE, "Profile"),
    ],
)
def test_a_hand_off_in_a_block_quote_is_named_at_its_quoted_heading(
    reader: Callable[..., object], text: str, label: str
) -> None:
    reader(text)  # it reads without the quote
    with pytest.raises(FormatError) as caught:
        reader(_quoted(text), path="t.md")
    kind = {"Optimization Task": "optimization task", "New Version": "new version"}.get(
        label, "profile"
    )
    assert str(caught.value) == (
        f"t.md:3 [{label}]: Expected a '## {label}: ...' heading starting the {kind} "
        "hand-off, got one only inside a block quote (line 3): take the quote's '> ' off"
    )


def test_nested_quotes_are_named_too_and_a_plain_miss_still_says_none() -> None:
    with pytest.raises(FormatError, match=r"block quote \(line 1\)"):
        parse_task(">> " + TASK.render())
    with pytest.raises(FormatError) as caught:
        parse_task("no hand-off here\n> ## Optimization Notes\n")
    assert str(caught.value).endswith("got none")


def test_report_task_names_the_quoted_heading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "t.md", _quoted(TASK.render()))
    assert main(["report", "task", path]) == 1
    _, err = capsys.readouterr()
    assert f"{path}:3 [Optimization Task]:" in err
    assert "got one only inside a block quote (line 3): take the quote's '> ' off" in err


# --- the heading's trial point -------------------------------------------------------------


def test_a_heading_point_is_shown_without_the_space_after_its_bar() -> None:
    text = PROFILE.replace("| b=32, s=1, t=4096, h=16", "| b=32, s=1, t=4096, b=64", 1)
    with pytest.raises(FormatError) as caught:
        parse_profile(text, path="profile.md")
    assert str(caught.value) == (
        "profile.md:1 [Profile]: Expected each axis of a trial point once, got "
        "'b=32, s=1, t=4096, b=64' (b twice)"
    )
