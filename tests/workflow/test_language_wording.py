"""A language no design prompt takes is refused in one wording everywhere: the task's
check said ``cuda, cute-dsl, cutile-dsl, triton (or cutile for cutile-dsl)``, the designer
prompt and ``learn --language`` the catalog's ``triton, cuda, cute-dsl, cutile (or
cutile-dsl for cutile)``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.catalog import Catalog
from kernelopt.cli import main
from kernelopt.workflow import Change, Constraints, DesignerPrompt, OptimizationTask

from .conftest import anchor_row, write_rows

WORDS = "Expected a language in cuda, cute-dsl, cutile-dsl, triton (or cutile for cutile-dsl), "


def _task(language: str | None) -> OptimizationTask:
    return OptimizationTask(
        kernel="k",
        current="v1",
        new_version="v2",
        bottleneck="b",
        optimizations=[Change(what="fuse")],
        constraints=Constraints(language=language),
    )


def test_the_task_check_and_the_designer_prompt_say_the_same() -> None:
    (problem,) = _task("fortran").problems(Catalog.builtin())
    assert problem == f"Language: {WORDS}got 'fortran'"
    with pytest.raises(InputError) as caught:
        DesignerPrompt.from_task(_task(None), language="fortran")
    assert str(caught.value) == f"language: {WORDS}got 'fortran'"
    with pytest.raises(InputError, match=r"got int$"):
        DesignerPrompt.from_task(_task(None), language=5)  # type: ignore[arg-type]


def test_report_profile_says_the_same(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "v2.jsonl", anchor_row("splits8"))
    argv = ["report", "profile", "--rows", str(rows), "--kernel", "k", "--version", "splits8"]
    assert main([*argv, "--language", "fortran"]) == 2
    assert f"--language: {WORDS}got 'fortran'" in capsys.readouterr().err
