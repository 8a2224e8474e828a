"""docs/catalog.md stays true: its Python examples run and its commands exit as described."""

from __future__ import annotations

import doctest
import importlib
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "catalog.md"


def _blocks(language: str) -> list[str]:
    """Fenced blocks of ``language`` at the top level (not inside a ```` block)."""
    blocks, current, outer = [], None, None
    for line in DOC.read_text(encoding="utf-8").split("\n"):
        stripped = line.strip()
        if outer is not None:
            if stripped == outer:
                outer = None
            continue
        if current is None:
            if stripped.startswith("````"):
                outer = stripped[: len(stripped) - len(stripped.lstrip("`"))]
            elif stripped == f"```{language}":
                current = []
            continue
        if stripped == "```":
            blocks.append("\n".join(current))
            current = None
        else:
            current.append(line)
    return blocks


def test_python_examples_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    blocks = _blocks("python")
    assert len(blocks) >= 6
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)


def test_console_examples_exit_as_documented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    # The page's `match --profile` reads a project's workload profile: the example log's.
    profile = ROOT / "examples/logs/mla-decode-plateau/experiments/workload_profile.md"
    (tmp_path / "experiments").mkdir()
    shutil.copy(profile, tmp_path / "experiments" / "workload_profile.md")
    commands = [
        line[2:]
        for block in _blocks("console")
        for line in block.split("\n")
        if line.startswith("$ kernelopt catalog ")
    ]
    assert len(commands) >= 8
    for command in commands:
        argv = shlex.split(command)[1:]
        expected = 1 if argv[:2] == ["catalog", "lint"] and "docs/knowledge" in argv else 0
        assert cli.main(argv) == expected, command
        capsys.readouterr()
    assert os.path.isfile(
        tmp_path / "docs/knowledge/languages/triton/anti-patterns/split-cache-thrash.md"
    )


@pytest.mark.parametrize(
    "module", ["kernelopt.catalog", "kernelopt.catalog.catalog", "kernelopt.catalog.store"]
)
def test_docstring_examples(module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_readme_and_catalog_guide_count_the_builtin_entries() -> None:
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    guide = (root / "docs" / "catalog.md").read_text(encoding="utf-8")
    counts = [int(n) for n in re.findall(r"(\d+) built-in entries", readme)]
    counts += [int(n) for n in re.findall(r"built-in catalog \((\d+) entries", guide)]
    assert counts == [len(Catalog.builtin())] * 2
