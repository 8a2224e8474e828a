"""`report task --check` said OK for a task whose built-in entry links
``docs/knowledge/optimizations/<id>.md``, a file the project need not hold (built-in entries
ship inside kernelopt): a link that leads to no file is a problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.catalog import Catalog
from kernelopt.cli import main
from kernelopt.workflow import Change, OptimizationTask


def _task(change: Change) -> OptimizationTask:
    return OptimizationTask(
        kernel="k", current="v1", new_version="v2", bottleneck="b", optimizations=[change]
    )


def test_problems_name_a_link_that_leads_to_no_file(tmp_path: Path) -> None:
    catalog = Catalog.builtin()
    task = _task(Change.of(catalog.get("cuda-graphs"), "replay"))
    assert task.problems(catalog) == []  # no root: links are not followed
    (problem,) = task.problems(catalog, root=tmp_path)
    assert "'cuda-graphs' links docs/knowledge/optimizations/cuda-graphs.md" in problem
    assert "`kernelopt catalog show cuda-graphs`" in problem
    copy = tmp_path / "docs/knowledge/optimizations/cuda-graphs.md"
    copy.parent.mkdir(parents=True)
    copy.write_text("# CUDA graphs\n", "utf-8")
    assert task.problems(catalog, root=[tmp_path / "elsewhere", tmp_path]) == []


def test_a_link_from_the_files_folder_resolves(tmp_path: Path) -> None:
    catalog = Catalog.builtin()
    plan = tmp_path / "plan.md"
    task = _task(Change.of(catalog.get("cuda-graphs"), "replay", relative_to=plan))
    assert task.problems(catalog, root=tmp_path) == []


def test_report_task_check_flags_the_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    catalog = Catalog.builtin()
    Path("task.md").write_text(_task(Change.of(catalog.get("cuda-graphs"))).render(), "utf-8")
    assert main(["report", "task", "task.md", "--check"]) == 1
    out, err = capsys.readouterr()
    assert "links docs/knowledge/optimizations/cuda-graphs.md, which is no file from ." in out + err
    Path("plan.md").write_text(
        _task(Change.of(catalog.get("cuda-graphs"), relative_to="plan.md")).render(), "utf-8"
    )
    assert main(["report", "task", "plan.md", "--check"]) == 0
