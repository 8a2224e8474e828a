"""The task and version readers dropped prose under a list section without a word, and
joined a code block in an item into one line; `report task --check` said OK."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from kernelopt._errors import FormatError
from kernelopt.cli import main
from kernelopt.workflow import (
    Change,
    HandoffWarning,
    NewVersion,
    OptimizationTask,
    ProfileWarning,
    parse_task,
    parse_version,
)

TASK = OptimizationTask(
    kernel="k",
    current="v1",
    new_version="v2",
    bottleneck="Memory-bound",
    optimizations=[Change(what="fuse the loads"), Change(what="second")],
).render()
PROSE = TASK.replace("2. second\n", "2. second\n\nSome extra prose the designer must read.\n")
FENCED = TASK.replace("1. fuse the loads\n", "1. fuse the loads\n   ```python\n   x = 1\n   ```\n")


def test_prose_under_the_optimizations_is_a_warning_naming_its_line() -> None:
    with pytest.warns(HandoffWarning) as caught:
        task = parse_task(PROSE, path="task.md")
    assert task == parse_task(TASK)
    (message,) = [str(item.message) for item in caught]
    assert message.startswith("task.md:7 [Optimizations to Apply]: Expected list items")
    assert "got prose 'Some extra prose the designer must read.'; not read" in message


def test_a_rendered_task_or_version_warns_of_nothing() -> None:
    version = NewVersion(kernel="k", version="v2", changes=[Change(what="fuse")])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_task(TASK + "\nThat is the plan.\n")  # the text after the hand-off
        parse_version(version.render())  # "(none)" under the trial configurations


def test_prose_under_a_version_list_is_a_warning() -> None:
    text = NewVersion(kernel="k", version="v2", changes=[Change(what="fuse")]).render()
    text = text.replace("- fuse\n", "- fuse\n\nAlso renamed the launcher.\n")
    with pytest.warns(HandoffWarning, match=r"line 5 \[Changes Applied\].*'Also renamed"):
        parse_version(text)


def test_a_code_fence_in_an_item_is_refused_by_its_line() -> None:
    with pytest.raises(FormatError, match="a code fence at line 5") as caught:
        parse_task(FENCED, path="task.md")
    assert caught.value.line == 5 and caught.value.section == "Optimizations to Apply"


def test_profile_warning_is_a_handoff_warning() -> None:
    assert issubclass(ProfileWarning, HandoffWarning)


def test_report_task_check_lists_the_prose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "task.md"
    path.write_text(PROSE, "utf-8")
    assert main(["report", "task", str(path), "--check"]) == 1
    assert "got prose 'Some extra prose" in capsys.readouterr().err
    path.write_text(FENCED, "utf-8")
    assert main(["report", "task", str(path), "--check"]) == 1
    assert "a code fence at line 5" in capsys.readouterr().err
