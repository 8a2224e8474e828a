"""benchmarks/results/README.md against the rows it describes: every file named, the rows
it cites all there, and each run's commit as its rows carry it."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

from kernelopt.bench import BenchRow, read_rows

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
README = (RESULTS / "README.md").read_text(encoding="utf-8")
# buffers_overhead.py writes rows of its own, not BenchRows.
PLAIN_JSON = {"buffers_overhead.jsonl"}
RESULT_FILES = sorted(p.name for p in RESULTS.glob("*.jsonl"))


def _cell(name: str) -> str:
    """The README's table line for the results file ``name``."""
    lines = [line for line in README.splitlines() if line.startswith(f"| `{name}` |")]
    assert len(lines) == 1, f"{name}: {len(lines)} table lines"
    return lines[0]


def _rows(name: str) -> list[dict[str, object]]:
    if name in PLAIN_JSON:
        text = (RESULTS / name).read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows: list[BenchRow] = read_rows(RESULTS / name)
    return [{"commit": row.commit, "gpu": row.gpu, "torch": row.torch} for row in rows]


def _ranges(text: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in re.findall(r"\brows? (\d+)-(\d+)", text)]


def _runs_table() -> list[tuple[int, int, str]]:
    """(first row, last row, commit cell) of each run in the mla_decode.jsonl table."""
    runs = []
    for line in README.split("## The runs in `mla_decode.jsonl`")[1].splitlines():
        match = re.match(r"\| (\d+)-(\d+) \| [^|]+ \| ([^|]+) \|", line)
        if match:
            runs.append((int(match[1]), int(match[2]), match[3].strip()))
    return runs


def _cited_count(name: str) -> int:
    """How many rows the README says ``name`` holds."""
    cell = _cell(name)
    if name == "mla_decode.jsonl":
        spans = [(first, last) for first, last, _ in _runs_table()]
    else:
        spans = _ranges(cell)
    if spans:
        covered = [n for first, last in spans for n in range(first, last + 1)]
        assert covered == list(range(1, len(covered) + 1)), f"{name}: rows {spans}"
        return len(covered)
    each = re.search(r"run twice, (\d+) rows each", cell)
    if each:
        return 2 * int(each[1])
    counted = re.findall(r"\b(\d+) rows\b", cell)
    assert len(counted) == 1, f"{name}: the README gives no row count ({cell[:120]})"
    return int(counted[0])


def test_every_results_file_is_described() -> None:
    assert len(RESULT_FILES) >= 7
    for name in RESULT_FILES:
        _cell(name)


@pytest.mark.parametrize("name", RESULT_FILES)
def test_the_rows_cited_are_the_rows_in_the_file(name: str) -> None:
    assert _cited_count(name) == len(_rows(name))


@pytest.mark.parametrize("name", RESULT_FILES)
def test_rows_without_a_commit_are_said_to_have_none(name: str) -> None:
    rows = _rows(name)
    # A CPU row of buffers_overhead names no GPU.
    assert all((row["gpu"] or row.get("device") == "cpu") and row["torch"] for row in rows), name
    if name == "mla_decode.jsonl":
        return  # its runs table gives each run's commit, checked below
    if any(row.get("commit") is None for row in rows):
        assert "no commit" in _cell(name), name


def test_each_mla_decode_run_carries_the_commit_the_readme_gives() -> None:
    rows = _rows("mla_decode.jsonl")
    for first, last, cell in _runs_table():
        commits = {row["commit"] for row in rows[first - 1 : last]}
        assert len(commits) == 1, (first, last, commits)
        (commit,) = commits
        if commit is None:
            assert cell == "—", (first, cell)
        else:
            short, dirty = str(commit)[:7], "-dirty" if str(commit).endswith("-dirty") else ""
            assert cell.startswith(short + dirty), (first, cell, commit)
