"""Paths on the command line: an empty one names nothing, and a FIFO or device is no file.

An empty path left unchecked read as the option not given (``if args.devlog:``), as a
default put in its place (``args.root or "."``), or as ``Path("")``, the working directory;
each ran something the user did not ask for and exited 0.
"""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path

import pytest

from kernelopt import cli
from tests.conftest import cli_parsers

REPO = Path(__file__).resolve().parents[2]
HEALTHY = REPO / "examples" / "logs" / "healthy-run"
ROWS = REPO / "docs" / "kernels" / "mla_decode" / "experiments" / "exp_12" / "seesaw_after.jsonl"
BEFORE = ROWS.with_name("seesaw_before.jsonl")
PROFILE = REPO / "examples" / "logs" / "mla-decode-plateau" / "experiments" / "profile.md"
VERSION = """## New Version: mla_decode v3
### Changes Applied:
- combine kernel reads fp32 partials
### Files:
- Created: kernels/mla_decode_v3.py
### Correctness: PASS -- rel err 1.8e-3 against the float64 reference

### Trial Configurations Checked
1. [b=32, s=16, t=4096] -- speculative decoding
"""
ROWS_FORM = ["report", "profile", "--rows", str(ROWS), "--kernel", "mla_decode"]
ROWS_FORM += ["--version", "kernelopt_seesaw", "--mode", "cold"]
LEARN = ["learn", "--entry", "split-kv-flash-decoding", "--point", "b=32,s=1,h=16"]
LEARN += ["--mode", "graph", "--dry-run"]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit code and stderr of ``kernelopt argv``, argparse's own exits included."""
    try:
        code = cli.main(argv)
    except SystemExit as stop:
        code = int(stop.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "flag", "what"),
    [
        (["diagnose", ""], "DIR", "a log directory"),
        (["diagnose", str(HEALTHY), "--knowledge", ""], "--knowledge", "a knowledge tree folder"),
        ([*LEARN, "--before", "", "--after", str(ROWS)], "--before", "a BenchRow JSONL file"),
        ([*LEARN, "--before", str(BEFORE), "--after", ""], "--after", "a BenchRow JSONL file"),
        ([*LEARN, "--before", str(BEFORE), "--after", str(ROWS), "--knowledge", ""],
         "--knowledge", "a knowledge tree folder"),
        (["report", "profile", ""], "FILE.md", "a markdown file"),
        (["report", "profile", str(PROFILE), "--check", "--knowledge", ""],
         "--knowledge", "a knowledge tree folder"),
        ([*ROWS_FORM, "--devlog", ""], "--devlog", "a devlog file"),
        ([*ROWS_FORM, "--baseline", ""], "--baseline", "a BenchRow JSONL file"),
        ([*ROWS_FORM, "--knowledge", ""], "--knowledge", "a knowledge tree folder"),
        (["report", "profile", "--rows", "", "--kernel", "k", "--version", "v"],
         "--rows", "a BenchRow JSONL file"),
        (["report", "task", ""], "FILE.md", "a markdown file"),
        (["report", "version", "version.md", "--check", "--root", ""],
         "--root", "a folder holding the named files"),
        (["report", "version", "version.md", "--check", "--knowledge", ""],
         "--knowledge", "a knowledge tree folder"),
        (["catalog", "list", "--knowledge", ""], "--knowledge", "a knowledge tree folder"),
        (["catalog", "search", "kv", "--file", ""], "--file", "a text file to search with"),
        (["catalog", "lint", ""], "DIR", "a knowledge tree folder"),
        (["catalog", "index", ""], "DIR", "a knowledge tree folder"),
        (["catalog", "new", "Foo Bar", "--kind", "optimization", "--dir", ""],
         "--dir", "a knowledge tree folder"),
    ],
)  # fmt: skip
def test_an_empty_path_is_refused_and_nothing_is_written(
    argv: list[str],
    flag: str,
    what: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "version.md").write_text(VERSION, encoding="utf-8")
    monkeypatch.chdir(work)
    code, err = _run(argv, capsys)
    assert code == 2, err
    assert f"argument {flag}: Expected {what}, got an empty path" in err, err
    # The working directory was neither read as the path nor written in (catalog new
    # wrote ./docs/knowledge/optimizations/foo-bar.md; diagnose read the folder).
    assert [p.name for p in work.iterdir()] == ["version.md"]


# Options and arguments that name a file or folder, by the metavar their help shows.
_PATH_METAVARS = {"DIR", "PATH", "FILE", "FILE.md", "FILE.jsonl", "A.jsonl", "B.jsonl"}
# Path arguments whose empty value the command refuses after parsing, as tested above or
# in their own command's tests.
_REFUSED_BY_THE_COMMAND = {("kernelopt inspect", "--definition")}


def _path_actions() -> list[tuple[str, str, argparse.Action]]:
    found = []
    for parser in cli_parsers().values():
        for action in parser._actions:
            if action.metavar in _PATH_METAVARS:
                name = action.option_strings[0] if action.option_strings else str(action.metavar)
                found.append((parser.prog, name, action))
    return found


def test_every_path_argument_refuses_an_empty_path_as_it_is_parsed() -> None:
    checked = 0
    for prog, name, action in _path_actions():
        if (prog, name) in _REFUSED_BY_THE_COMMAND:
            continue
        assert callable(action.type), f"{prog} {name} takes any text, an empty path too"
        with pytest.raises(argparse.ArgumentTypeError, match=r"got an empty path$"):
            action.type("")
        assert action.type("x.md") == "x.md"
        checked += 1
    assert checked >= 20


def test_diagnose_refuses_to_write_its_plan_over_a_fifo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "plan.md"
    os.mkfifo(fifo)
    code, err = _run(["diagnose", str(HEALTHY), "--write-plan", str(fifo)], capsys)
    assert code == 2
    assert (
        err
        == f"kernelopt diagnose: error: Expected a regular file to write, got a FIFO at {fifo}\n"
    )
    # The rename over it left a regular file where the FIFO was.
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["plan.md"]


def test_a_devlog_read_from_an_empty_path_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelopt import InputError
    from kernelopt.workflow import read_performance

    # Path("") is the working directory: "got a directory at ." named a folder not given.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"^path: Expected a devlog file, got an empty path$"):
        read_performance("")
