"""The scripts beside the library: mypy checks the ones a user runs, the measurements README
numbers only the runs there are, and step 7 of the MLA walk-through counts its rows in words
that agree with the count."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from kernelopt.workflow import PerfRow, update_devlog

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / "examples" / "logs"
MEASUREMENTS = LOGS / "measurements"
# Under examples/logs, the files kept as data: the kernel snapshots `kernelopt diagnose`
# reads (kernels/, experiments/exp_N/) and the measurement scripts kept as they ran.
DATA_PARTS = {"kernels", "experiments", "measurements"}


def _mypy_files() -> list[Path]:
    """The paths ``[tool.mypy] files`` names, resolved against the repository (read as
    text: tomllib is 3.11's, and the project runs on 3.10)."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    section = pyproject.split("\n[tool.mypy]\n", 1)[1].split("\n[", 1)[0]
    listed = re.search(r"^files = \[(.*?)\]", section, re.MULTILINE | re.DOTALL)
    assert listed is not None, section
    return [REPO / name for name in re.findall(r'"([^"]+)"', listed[1])]


def _checked(script: Path, roots: list[Path]) -> bool:
    return any(script == root or root in script.parents for root in roots)


def _scripts() -> list[Path]:
    """Every .py a user runs or imports under examples/ and benchmarks/ (data left out)."""
    found = sorted((REPO / "examples").rglob("*.py")) + sorted((REPO / "benchmarks").rglob("*.py"))
    return [
        path
        for path in found
        if not (LOGS in path.parents and DATA_PARTS & set(path.relative_to(LOGS).parts))
    ]


def test_mypy_checks_the_examples_and_the_benchmark_scripts() -> None:
    roots = _mypy_files()
    scripts = _scripts()
    assert REPO / "examples" / "mla_decode" / "07_learn.py" in scripts
    assert REPO / "benchmarks" / "mla_decode.py" in scripts
    unchecked = [p.relative_to(REPO).as_posix() for p in scripts if not _checked(p, roots)]
    assert unchecked == []


def test_the_files_mypy_names_exist() -> None:
    # A misspelt path would make mypy check less than the list says.
    assert [p for p in _mypy_files() if not p.exists()] == []


def test_no_two_checked_script_folders_share_a_module_name() -> None:
    # mypy checks every file in one program: two top-level modules of one name (a `_common`
    # beside the steps and one beside the benchmarks) stop it before it checks anything.
    names: dict[str, Path] = {}
    for path in _scripts():
        if path.name == "__init__.py":
            name = path.parent.name  # a package beside the scripts
        elif (path.parent / "__init__.py").exists():
            continue  # a module inside such a package
        else:
            name = path.stem
        assert name not in names, f"{path} and {names[name]} are both module {name!r}"
        names[name] = path


# ---------------------------------------------------------------------------- measurements


def _readme() -> str:
    return (MEASUREMENTS / "README.md").read_text(encoding="utf-8")


def test_the_measurements_readme_numbers_its_runs_without_a_gap() -> None:
    numbers = {int(n) for n in re.findall(r"\b[Rr]uns? (\d+)\b", _readme())}
    for low, high in re.findall(r"\b[Rr]uns (\d+)\s*(?:–|to)\s*(\d+)\b", _readme()):
        numbers |= set(range(int(low), int(high) + 1))
    assert numbers == set(range(1, max(numbers) + 1))


def test_the_buffers_rows_are_the_copy_the_readme_says() -> None:
    assert "a copy of `benchmarks/results/buffers_overhead.jsonl`" in _readme()
    copy = (MEASUREMENTS / "buffers_overhead.jsonl").read_bytes()
    assert copy == (REPO / "benchmarks" / "results" / "buffers_overhead.jsonl").read_bytes()


# ---------------------------------------------------------------------------- step 7


@pytest.fixture(scope="module")
def steps() -> Iterator[ModuleType]:
    """The walk-through's shared module, loaded under a name no other test uses."""
    name = "mla_decode_example_steps"
    spec = importlib.util.spec_from_file_location(
        name, REPO / "examples" / "mla_decode" / "_steps.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up while being made
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[name]


def _row(version: str, time: float) -> PerfRow:
    return PerfRow(version=version, point="b=2 s=1 t=70 h=16", time=time, gpu="cpu")


def test_step_7_counts_one_devlog_row_as_one_row(steps: ModuleType, tmp_path: Path) -> None:
    devlog = tmp_path / "mla_decode.md"
    added = update_devlog(devlog, [_row("triton_naive", 12.5)])
    assert steps.devlog_update_words(added) == "1 row added, 0 replaced"
    two = update_devlog(devlog, [_row("triton_naive", 11.0), _row("torch_eager", 20.0)])
    assert steps.devlog_update_words(two) == "1 row added, 1 replaced"
    again = update_devlog(devlog, [_row("triton_naive", 10.0), _row("torch_eager", 19.0)])
    assert steps.devlog_update_words(again) == "0 rows added, 2 replaced"


def test_step_7_prints_the_devlog_update_in_those_words() -> None:
    step = (REPO / "examples" / "mla_decode" / "07_learn.py").read_text(encoding="utf-8")
    assert "_steps.devlog_update_words(update)" in step
    assert "rows added" not in step
