"""A contract template left unfilled reads as no value, never as a record named after its
placeholders (a kernel called ``kernel``, a version called ``<version>``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernelopt import FormatError, InputError
from kernelopt.cli import main
from kernelopt.workflow import (
    Change,
    Constraints,
    DesignerPrompt,
    ProfilerPrompt,
    parse_designer_prompt,
    parse_profiler_prompt,
    parse_task,
    parse_version,
)

# The templates as the workflow's contracts write them.
TASK = """## Optimization Task: [kernel] [current] -> [new_version]
### Current Bottleneck: [from profiler]
### Optimizations to Apply:
1. [specific optimization + rationale + link to the shared or language-specific knowledge file]

### Constraints
- register budget, target occupancy, required control level, and language-specific constraints
"""
VERSION = """## New Version: [kernel] [version]
### Changes Applied: [list]
### Files: Created/Modified [paths]
### Correctness: [PASS/FAIL]

### Trial Configurations Checked
1. [b, s, t] -- [why this point matters]

### Devlog Entry Written: [path]
"""
PROFILER = """Profile <kernel> <version> at b=X, s=X, t=X.
Return compact summary per the output contract.
Update the devlog performance section in docs/kernels/<kernel>.md.
"""
DESIGNER = """Create <kernel> <new_version> from <current_version>.
Language: <cutile-dsl|cute-dsl>.
Load /design-<language>-kernel and the matching reference skill if one exists.
Apply optimizations: [specific list with rationale].
Return implementation summary per the output contract.
"""


def filled(text: str, *pairs: tuple[str, str]) -> str:
    for placeholder, value in pairs:
        assert placeholder in text
        text = text.replace(placeholder, value)
    return text


TASK_HEAD = ("[kernel] [current] -> [new_version]", "mla_decode v2 -> v3")
TASK_BOTTLENECK = ("[from profiler]", "Memory-bound")
TASK_ITEM = (
    "[specific optimization + rationale + link to the shared or language-specific knowledge file]",
    "split the KV sequence in 8",
)


@pytest.mark.parametrize(
    ("text", "placeholder"),
    [
        (TASK, "[kernel]"),
        (filled(TASK, ("[kernel]", "mla_decode")), "[current]"),
        (filled(TASK, ("[kernel] [current]", "mla_decode v2")), "[new_version]"),
        (filled(TASK, TASK_HEAD), "[from profiler]"),
        (filled(TASK, TASK_HEAD, TASK_BOTTLENECK), "[specific optimization"),
    ],
)
def test_a_task_placeholder_left_unfilled_is_refused(text: str, placeholder: str) -> None:
    with pytest.raises(
        FormatError, match=r"got the template's placeholder '(.*)', not filled"
    ) as caught:
        parse_task(text)
    assert f"placeholder '{placeholder}" in str(caught.value)


def test_the_task_templates_constraint_item_states_no_constraint() -> None:
    task = parse_task(filled(TASK, TASK_HEAD, TASK_BOTTLENECK, TASK_ITEM))
    assert (task.kernel, task.current, task.new_version) == ("mla_decode", "v2", "v3")
    assert task.constraints == Constraints() and not task.constraints_stated
    # Rendered, it states nothing either (no "- none"), and reads back the same.
    assert "### Constraints" not in task.render()
    assert parse_task(task.render()) == task
    with pytest.raises(InputError, match="the template's item"):
        Constraints(
            other=[
                "register budget, target occupancy, required control level, and "
                "language-specific constraints"
            ]
        )


def test_filled_in_place_the_task_reads_as_filled() -> None:
    text = filled(
        TASK,
        ("[kernel] [current] -> [new_version]", "[kernel] [v2] -> [v3]"),
        TASK_BOTTLENECK,
        TASK_ITEM,
    )
    # "[kernel]" filled with the kernel's own name, "kernel", is the template unfilled:
    # which of the two it is cannot be told, and a value is not made up.
    with pytest.raises(FormatError, match="'\\[kernel\\]'"):
        parse_task(text)
    task = parse_task(text.replace("[kernel] [v2]", "[mla_decode] [v2]"))
    assert (task.kernel, task.current, task.new_version) == ("mla_decode", "v2", "v3")


VERSION_HEAD = ("[kernel] [version]", "mla_decode v3")
VERSION_CHANGES = ("### Changes Applied: [list]", "### Changes Applied: split-KV in 8")
VERSION_CORRECT = ("[PASS/FAIL]", "PASS")
VERSION_POINT = ("[b, s, t]", "[32, 1, 4096]")
VERSION_WHY = ("[why this point matters]", "decode")


@pytest.mark.parametrize(
    ("text", "placeholder"),
    [
        (filled(VERSION, VERSION_CORRECT, VERSION_POINT), "[kernel]"),
        (filled(VERSION, VERSION_CORRECT, VERSION_POINT, ("[kernel]", "mla")), "[version]"),
        (filled(VERSION, VERSION_HEAD, VERSION_CORRECT, VERSION_POINT), "[list]"),
    ],
)
def test_a_version_placeholder_left_unfilled_is_refused(text: str, placeholder: str) -> None:
    with pytest.raises(FormatError, match=r"got the template's placeholder") as caught:
        parse_version(text)
    assert f"placeholder '{placeholder}'" in str(caught.value)


def test_a_version_trial_without_its_why_filled_is_refused() -> None:
    text = filled(VERSION, VERSION_HEAD, VERSION_CHANGES, VERSION_CORRECT, VERSION_POINT)
    with pytest.raises(FormatError, match="why the point matters"):
        parse_version(text)


def test_unfilled_files_and_devlog_of_a_version_read_as_none() -> None:
    version = parse_version(
        filled(VERSION, VERSION_HEAD, VERSION_CHANGES, VERSION_CORRECT, VERSION_POINT, VERSION_WHY)
    )
    assert (version.kernel, version.version) == ("mla_decode", "v3")
    assert [change.what for change in version.changes] == ["split-KV in 8"]
    assert (version.created, version.modified, version.devlog) == ((), (), None)
    assert version.trials[0].why == "decode"
    filled_in_place = parse_version(
        filled(
            VERSION,
            VERSION_HEAD,
            VERSION_CHANGES,
            VERSION_CORRECT,
            VERSION_POINT,
            ("[why this point matters]", "[decode]"),
            ("[paths]", "[kernels/mla.py]"),
            ("[path]", "[docs/kernels/mla_decode.md]"),
        )
    )
    assert filled_in_place.modified == ("kernels/mla.py",)
    assert filled_in_place.devlog == "docs/kernels/mla_decode.md"
    assert filled_in_place.trials[0].why == "decode"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        (filled(PROFILER, ("b=X, s=X, t=X", "b=32, s=1, t=4096")), "<kernel>"),
        (
            filled(PROFILER, ("b=X, s=X, t=X", "b=32, s=1, t=4096"), ("<kernel>", "mla_decode")),
            "<version>",
        ),
    ],
)
def test_a_profiler_prompt_name_left_unfilled_is_refused(text: str, name: str) -> None:
    with pytest.raises(FormatError, match=f"the template's placeholder '{name}'"):
        parse_profiler_prompt(text)


DESIGNER_LANGUAGE = [
    ("<cutile-dsl|cute-dsl>", "triton"),
    ("/design-<language>-kernel", "/design-triton-kernel"),
]


@pytest.mark.parametrize(
    ("pairs", "name"),
    [
        ((), "<kernel>"),
        ((("<kernel>", "mla_decode"),), "<new_version>"),
        ((("<kernel> <new_version>", "mla_decode v3"),), "<current_version>"),
        (
            (("<kernel> <new_version> from <current_version>", "mla_decode v3 from v2"),),
            "[specific list with rationale]",
        ),
    ],
)
def test_a_designer_prompt_placeholder_left_unfilled_is_refused(
    pairs: tuple[tuple[str, str], ...], name: str
) -> None:
    text = filled(DESIGNER, *DESIGNER_LANGUAGE, *pairs)
    with pytest.raises(FormatError, match=re.escape(f"the template's placeholder '{name}'")):
        parse_designer_prompt(text)


def test_a_prompt_is_not_written_with_a_placeholder_for_a_name() -> None:
    with pytest.raises(InputError, match="placeholder"):
        ProfilerPrompt(
            kernel="<kernel>",
            version="v3",
            point={"b": 32, "s": 1, "t": 4096},
            devlog="docs/kernels/mla.md",
        )
    with pytest.raises(InputError, match="placeholder"):
        DesignerPrompt(
            kernel="mla_decode",
            current="<current>",
            new_version="v3",
            language="triton",
            optimizations=[Change(what="split-KV")],
        )


def test_report_task_names_the_unfilled_placeholder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hand_off = tmp_path / "task.md"
    hand_off.write_text(TASK, encoding="utf-8")
    code = main(["report", "task", str(hand_off), "--check"])
    out, err = capsys.readouterr()
    assert code != 0 and "placeholder '[kernel]', not filled in" in out + err
