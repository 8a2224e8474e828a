"""Hand-offs written as the workflow's templates show them, and misused: what reads, what
is refused, and that nothing a writer put in a section is dropped without a word."""

from __future__ import annotations

import time
from pathlib import Path

import attrs
import pytest

from kernelopt import FormatError, InputError
from kernelopt.cli import main
from kernelopt.workflow import (
    Constraints,
    ProfilerPrompt,
    parse_handoff,
    parse_profiler_prompt,
    parse_task,
    parse_version,
)

TASK_HEAD = (
    "## Optimization Task: mla_decode v2 -> v3\n"
    "### Current Bottleneck: Memory-bound -- 54% of the roofline floor\n"
    "### Optimizations to Apply:\n"
    "1. split the KV axis -- rationale: fills the grid\n"
    "\n"
)
VERSION = (
    "## New Version: mla_decode v3\n"
    "### Changes Applied:\n"
    "- split the KV axis\n"
    "### Files:\n"
    "- Created: kernels/mla_decode_v3.py\n"
    "### Correctness: PASS\n"
    "\n"
    "### Trial Configurations Checked\n"
    "1. [32, 1, 4096] -- decode\n"
    "\n"
    "### Devlog Entry Written: docs/kernels/mla_decode.md\n"
)
PROFILER_PROMPT = (
    "Profile mla_decode v2 at b=32, s=1, t=4096.\n"
    "Return compact summary per the output contract.\n"
    "Update the devlog performance section in docs/kernels/mla_decode.md.\n"
)


# --- the template's constraint list, filled in place -----------------------------------


@pytest.mark.parametrize("separator", [", and ", "; and ", ",and "])
def test_the_lists_last_label_after_and_is_its_own_field(separator: str) -> None:
    # The contract writes "register budget, target occupancy, required control level, and
    # language-specific constraints": filled in place, the language follows ", and".
    text = TASK_HEAD + (
        "### Constraints\n"
        "- register budget: 128, target occupancy: 50%, required control level: tile-level"
        f"{separator}language: triton\n"
    )
    task = parse_task(text)
    assert task.constraints == Constraints(
        language="triton",
        control_level="tile-level",
        register_budget=128,
        target_occupancy_pct=50.0,
    )
    assert parse_task(task.render()) == task


def test_the_templates_language_specific_item_is_a_free_constraint_of_its_own() -> None:
    # Filled in place word for word, the list's last item is no part of the control level.
    text = TASK_HEAD + (
        "### Constraints\n"
        "- register budget: 128, target occupancy: 50%, required control level: tile-level, "
        "and language-specific constraints: no inline PTX\n"
    )
    task = parse_task(text)
    assert task.constraints.control_level == "tile-level"
    assert task.constraints.other == ("language-specific constraints: no inline PTX",)
    assert parse_task(task.render()) == task


def test_and_without_a_typed_label_after_it_stays_in_the_text() -> None:
    text = TASK_HEAD + "### Constraints\n- Control level: tile-level, and no inline PTX\n"
    assert parse_task(text).constraints.control_level == "tile-level, and no inline PTX"


def test_a_free_constraint_holding_and_a_label_is_refused() -> None:
    # Rendered, "and Language: x" would read back as the language.
    with pytest.raises(InputError, match="typed label after a comma, a semicolon or ', and'"):
        Constraints(other=("keep the signature, and Language: cuda",))


# --- numbers past what int() converts --------------------------------------------------


@pytest.mark.parametrize("digits", [4301, 100_000])
def test_a_register_budget_of_too_many_digits_is_a_format_error(digits: int) -> None:
    text = TASK_HEAD + f"### Constraints\n- Register budget: {'1' * digits}\n"
    with pytest.raises(FormatError, match=r"Expected 'Register budget: <N> registers per thread'"):
        parse_task(text)


def test_report_task_says_so_in_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "task.md"
    path.write_text(TASK_HEAD + f"### Constraints\n- Register budget: {'9' * 5000}\n")
    assert main(["report", "task", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Expected 'Register budget: <N> registers per thread'" in captured.err
    assert "Traceback" not in captured.err


# --- a section written twice -----------------------------------------------------------


def test_a_second_constraints_section_is_refused_not_dropped() -> None:
    text = (
        TASK_HEAD
        + "### Constraints\n- Register budget: 128\n\n"
        + "### Constraints (language-specific)\n- Language: triton\n- no inline PTX\n"
    )
    with pytest.raises(FormatError) as caught:
        parse_task(text)
    assert caught.value.line == 9
    assert "Expected one '### Constraints' section in the optimization task hand-off" in str(
        caught.value
    )
    assert "got 2 (lines 6 and 9)" in str(caught.value)


@pytest.mark.parametrize(
    ("extra", "label"),
    [
        ("### Current Bottleneck: Compute-bound\n", "Current Bottleneck"),
        ("### Optimizations to Apply (second pass)\n1. fuse the combine\n", "Optimizations"),
    ],
)
def test_a_second_task_section_is_refused(extra: str, label: str) -> None:
    text = TASK_HEAD + "### Constraints\n- none\n" + extra
    with pytest.raises(FormatError, match=f"Expected one '### {label}"):
        parse_task(text)


@pytest.mark.parametrize(
    ("extra", "label"),
    [
        ("### Correctness: FAIL -- rel err 0.3 at s=16\n", "Correctness"),
        ("### Changes Applied:\n- fuse the combine\n", "Changes Applied"),
        ("### Files:\n- Modified: kernels/__init__.py\n", "Files"),
        ("### Trial Configurations Checked\n1. [32, 16, 4096] -- speculative\n", "Trial"),
        ("### Devlog Entry Written: docs/kernels/other.md\n", "Devlog Entry Written"),
    ],
)
def test_a_second_version_section_is_refused(extra: str, label: str) -> None:
    # A later "### Correctness: FAIL" read past would leave the version a PASS.
    with pytest.raises(FormatError, match=f"Expected one '### {label}"):
        parse_version(VERSION + extra)
    with pytest.raises(FormatError, match=f"Expected one '### {label}"):
        parse_handoff(VERSION + extra)


def test_report_version_refuses_a_second_correctness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "version.md"
    path.write_text(VERSION + "### Correctness: FAIL\n", encoding="utf-8")
    assert main(["report", "version", str(path), "--check"]) == 1
    assert "Expected one '### Correctness' section" in capsys.readouterr().err


def test_one_of_each_section_still_reads_with_unknown_sections_between() -> None:
    text = TASK_HEAD + "### Notes\n- asked by the reviewer\n\n### Constraints\n- Language: cuda\n"
    assert parse_task(text).constraints.language == "cuda"
    assert parse_version(VERSION.replace("### Files:", "### Notes\nprose\n\n### Files:")).created


# --- the profiler prompt's devlog placeholder ------------------------------------------


def test_the_templates_devlog_placeholder_is_refused() -> None:
    text = PROFILER_PROMPT.replace("docs/kernels/mla_decode.md", "docs/kernels/<kernel>.md")
    with pytest.raises(FormatError) as caught:
        parse_profiler_prompt(text)
    assert "Expected the devlog's path (docs/kernels/mla_decode.md, say), got the template's " in (
        str(caught.value)
    )
    assert caught.value.line == 3


def test_a_filled_devlog_path_reads() -> None:
    assert parse_profiler_prompt(PROFILER_PROMPT).devlog == "docs/kernels/mla_decode.md"
    odd = PROFILER_PROMPT.replace("mla_decode.md", "a<b>.md")
    assert parse_profiler_prompt(odd).devlog == "docs/kernels/a<b>.md"


def test_a_prompt_made_with_the_placeholder_is_refused_as_its_text_would_be() -> None:
    point = {"b": 32, "s": 1, "t": 4096}
    with pytest.raises(InputError, match="Expected a devlog path, not the template's"):
        ProfilerPrompt(kernel="k", version="v2", point=point, devlog="docs/kernels/<Kernel>.md")
    made = ProfilerPrompt(kernel="k", version="v2", point=point)
    assert parse_profiler_prompt(made.render()) == made


# --- constraints written as prose ------------------------------------------------------


def test_constraints_in_prose_alone_are_refused_not_read_as_none() -> None:
    text = TASK_HEAD + "### Constraints\nKeep registers under 128 and stay in Triton.\n"
    with pytest.raises(FormatError) as caught:
        parse_task(text)
    assert "Expected constraints as '- ' items ('- none' for none), got prose only: " in str(
        caught.value
    )
    assert "'Keep registers under 128 and stay in Triton.'" in str(caught.value)
    assert caught.value.line == 7


@pytest.mark.parametrize(
    "body",
    ["", "\n\n", "- none\n", "The designer keeps to:\n- Language: triton\n"],
)
def test_a_constraints_section_with_items_or_nothing_still_reads(body: str) -> None:
    task = parse_task(TASK_HEAD + "### Constraints\n" + body)
    assert task.constraints_stated
    assert task.constraints.language == ("triton" if "triton" in body else None)


@pytest.mark.parametrize("indent", ["  ", ""])
def test_a_constraint_continued_on_the_next_line_keeps_that_line(indent: str) -> None:
    text = TASK_HEAD + (
        "### Constraints\n"
        "- keep the public signature\n"
        f"{indent}of mla_decode\n"
        "- Language: triton\n"
        f"{indent}(no inline asm)\n"
        "\n"
        "Asked by the reviewer.\n"
    )
    task = parse_task(text)
    assert task.constraints.other == ("keep the public signature of mla_decode",)
    assert task.constraints.language == "triton (no inline asm)"
    assert parse_task(task.render()) == task


def test_an_optimization_continued_on_the_next_line_keeps_that_line() -> None:
    text = (
        "## Optimization Task: mla_decode v2 -> v3\n"
        "### Current Bottleneck: Memory-bound\n"
        "### Optimizations to Apply:\n"
        "1. split the KV axis -- rationale: a quarter of the SMs\n"
        "   idle at b=32\n"
        "   - detail bullet, not an item\n"
        "     nor its continuation\n"
        "2. fuse the combine\n"
        "\n"
        "### Constraints\n"
        "- none\n"
    )
    task = parse_task(text)
    assert [(c.what, c.rationale) for c in task.optimizations] == [
        ("split the KV axis", "a quarter of the SMs idle at b=32"),
        ("fuse the combine", ""),
    ]
    assert parse_task(task.render()) == task


def test_version_items_continued_on_the_next_line_keep_those_lines() -> None:
    text = (
        "## New Version: mla_decode v3\n"
        "### Changes Applied:\n"
        "- fuse the combine\n"
        "  into the last split\n"
        "### Files:\n"
        "- Created: kernels/a.py,\n"
        "  kernels/b.py\n"
        "### Correctness: PASS\n"
        "### Trial Configurations Checked\n"
        "1. [32, 1, 4096] -- decode:\n"
        "   the serving case\n"
        "### Devlog Entry Written: none\n"
    )
    version = parse_version(text)
    assert [change.what for change in version.changes] == ["fuse the combine into the last split"]
    assert version.created == ("kernels/a.py", "kernels/b.py")
    assert version.trials[0].why == "decode: the serving case"
    assert parse_version(version.render()) == version


def test_an_item_of_many_lines_reads_in_linear_time() -> None:
    # Joined line by line, each continuation copied the text so far: 200k lines took
    # seconds to minutes; gathered and joined once, a fraction of a second.
    text = TASK_HEAD.replace("\n\n", "\n" + "and the next words\n" * 200_000 + "\n")
    start = time.perf_counter()
    task = parse_task(text + "### Constraints\n- none\n")
    assert time.perf_counter() - start < 2.0
    assert task.optimizations[0].rationale.endswith("and the next words")


# --- the headings' placeholders filled in place ----------------------------------------


def test_the_task_headings_placeholders_filled_in_place_lose_their_brackets() -> None:
    text = (
        "## Optimization Task: [mla_decode] [v2] -> [v3]\n"
        "### Current Bottleneck: [Memory-bound -- 54% of the roofline floor]\n"
        "### Optimizations to Apply:\n"
        "1. [fuse the combine -- rationale: one launch less]\n"
        "\n"
        "### Constraints\n"
        "- none\n"
    )
    task = parse_task(text)
    assert (task.kernel, task.current, task.new_version) == ("mla_decode", "v2", "v3")
    assert task.bottleneck == "Memory-bound -- 54% of the roofline floor"
    assert parse_task(task.render()) == task


def test_the_version_headings_placeholders_filled_in_place_lose_their_brackets() -> None:
    text = VERSION.replace("## New Version: mla_decode v3", "## New Version: [mla_decode] [v3]")
    text = text.replace("-- decode", "-- [decode: the serving case]")
    version = parse_version(text)
    assert (version.kernel, version.version) == ("mla_decode", "v3")
    assert version.trials[0].why == "decode: the serving case"
    assert parse_version(version.render()) == version


@pytest.mark.parametrize("field", ["kernel", "current", "new_version", "bottleneck"])
def test_a_task_field_all_in_brackets_is_refused(field: str) -> None:
    # It would read back without them.
    task = parse_task(TASK_HEAD + "### Constraints\n- none\n")
    with pytest.raises(InputError, match=rf"OptimizationTask\.{field}: Expected text not all in"):
        attrs.evolve(task, **{field: "[x]"})


@pytest.mark.parametrize("field", ["kernel", "version"])
def test_a_version_field_all_in_brackets_is_refused(field: str) -> None:
    version = parse_version(VERSION)
    with pytest.raises(InputError, match=rf"NewVersion\.{field}: Expected text not all in"):
        attrs.evolve(version, **{field: "[x]"})
    with pytest.raises(InputError, match=r"TrialCheck\.why: Expected text not all in"):
        attrs.evolve(version.trials[0], why="[why]")
    # A bracket that does not enclose all of it stays, as written.
    assert attrs.evolve(version, kernel="[a] b").kernel == "[a] b"
