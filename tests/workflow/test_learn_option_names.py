"""`kernelopt learn` refusals name the option as the user typed it; learn() its arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import CatalogError, InputError
from kernelopt.catalog import BUILTIN_ROOT
from kernelopt.cli import main
from kernelopt.workflow import learn, observe_files

from .conftest import anchor_row, bench_row, snapshot, write_rows

ENTRY = "split-kv-flash-decoding"


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    write_rows(tmp_path / "fast_before.jsonl", anchor_row("splits16", samples=40, seed=1))
    write_rows(tmp_path / "fast_after.jsonl", anchor_row("splits8", samples=40, seed=2))
    host = {"samples": 8, "backend": "cpu-perf-counter"}
    write_rows(tmp_path / "cpu_before.jsonl", bench_row("a", 80.0, seed=1, **host))
    write_rows(tmp_path / "cpu_after.jsonl", bench_row("b", 50.0, seed=2, **host))
    return tmp_path


def refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(["learn", *argv, "--dry-run"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    return err.strip().removeprefix("kernelopt learn: error: ")


def pair(runs: Path, kind: str, *, slower: bool = False) -> list[str]:
    before, after = runs / f"{kind}_before.jsonl", runs / f"{kind}_after.jsonl"
    if slower:
        before, after = after, before
    return ["--before", str(before), "--after", str(after)]


def test_the_built_in_tree_is_refused_under_the_knowledge_option(
    capsys: pytest.CaptureFixture[str], runs: Path
) -> None:
    shipped = snapshot(BUILTIN_ROOT)
    for tree in (BUILTIN_ROOT, BUILTIN_ROOT / "optimizations"):
        err = refusal(capsys, *pair(runs, "fast"), "--entry", ENTRY, "--knowledge", str(tree))
        assert err == (
            "--knowledge: Expected a user's knowledge tree (the built-in one needs "
            f"--allow-builtin), got {tree}"
        )
    assert snapshot(BUILTIN_ROOT) == shipped


def test_an_unknown_entry_is_refused_under_the_entry_option(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path
) -> None:
    err = refusal(capsys, *pair(runs, "fast"), "--entry", "nope", "--knowledge", str(knowledge))
    assert err == "--entry: Expected a known entry id (see `kernelopt catalog list`), got 'nope'"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            "dot-input-precision",
            "--anti-pattern: Expected an anti-pattern id to record the regression in, got "
            "'dot-input-precision', an optimization",
        ),
        (
            "Not An Id",
            "--anti-pattern: Expected a kebab-case id such as 'split-kv-flash-decoding', got "
            "'Not An Id'",
        ),
    ],
)
def test_a_wrong_anti_pattern_is_refused_under_its_option(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path, given: str, message: str
) -> None:
    argv = [*pair(runs, "fast", slower=True), "--entry", ENTRY, "--knowledge", str(knowledge)]
    assert refusal(capsys, *argv, "--anti-pattern", given) == message


def test_host_clock_rows_are_refused_naming_the_rows_and_the_option_allowing_them(
    capsys: pytest.CaptureFixture[str], runs: Path, knowledge: Path
) -> None:
    err = refusal(capsys, *pair(runs, "cpu"), "--entry", ENTRY, "--knowledge", str(knowledge))
    assert err.startswith(
        "--before, --after: Expected GPU timings (CUDA events) to record in the knowledge "
        "base (--allow-host-clock records host-clock ones), got rows timed with the host clock"
    )
    assert "allow_host_clock" not in err


def test_learn_itself_names_its_arguments(runs: Path, knowledge: Path) -> None:
    fast = observe_files(runs / "fast_before.jsonl", runs / "fast_after.jsonl")
    with pytest.raises(InputError, match=r"^knowledge: .*needs allow_builtin=True\)"):
        learn(fast, entry_id=ENTRY, knowledge=BUILTIN_ROOT, dry_run=True)
    with pytest.raises(CatalogError, match=r"^entry_id: Expected a known entry id"):
        learn(fast, entry_id="nope", knowledge=knowledge, dry_run=True)
    slow = observe_files(runs / "fast_after.jsonl", runs / "fast_before.jsonl")
    with pytest.raises(InputError, match=r"^anti_pattern: Expected a kebab-case id"):
        learn(slow, entry_id=ENTRY, knowledge=knowledge, anti_pattern="Not An Id", dry_run=True)
    cpu = observe_files(runs / "cpu_before.jsonl", runs / "cpu_after.jsonl")
    with pytest.raises(InputError, match=r"^observation: .*\(allow_host_clock=True records"):
        learn(cpu, entry_id=ENTRY, knowledge=knowledge, dry_run=True)
