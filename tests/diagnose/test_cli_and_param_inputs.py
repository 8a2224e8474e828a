"""What `kernelopt diagnose` refuses, and how it says so: an unreadable knowledge tree,
a threshold out of its range, an extra argument; and where --json's warnings go."""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from kernelopt import cli
from kernelopt._errors import InputError
from kernelopt.diagnose import load_catalog
from kernelopt.diagnose import params as params_module
from kernelopt.diagnose.params import WrongBottleneckParams

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"
REPETITION = str(EXAMPLES / "repetition-loop")
HEALTHY = EXAMPLES / "healthy-run"


def _unlistable(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``folder`` a folder that cannot be listed: mode 000 and, where that does not
    keep this process out (root reads through permissions), listing it refused as the
    system refuses it to a user without that right."""
    folder.chmod(0)
    if not os.access(folder, os.R_OK):
        return
    real_scandir = os.scandir
    refused = os.path.abspath(folder)

    def scandir(path: Any = ".") -> Any:
        if isinstance(path, (str, os.PathLike)) and os.path.abspath(path) == refused:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real_scandir(path)

    # os.walk, which the knowledge loader lists folders with, calls os.scandir too.
    monkeypatch.setattr(os, "scandir", scandir)


@pytest.fixture
def locked_folders() -> Iterator[list[Path]]:
    """Folders a test makes unlistable, given their permissions back for the cleanup."""
    folders: list[Path] = []
    yield folders
    for folder in folders:
        folder.chmod(stat.S_IRWXU)


def test_unreadable_knowledge_root_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, locked_folders: list[Path]
) -> None:
    tree = tmp_path / "k000"
    tree.mkdir()
    locked_folders.append(tree)
    _unlistable(tree, monkeypatch)
    with pytest.raises(InputError) as refused:
        load_catalog(str(tree))
    assert str(refused.value) == (
        f"catalog: Expected a knowledge directory kernelopt can read, got {tree} (Permission "
        "denied)"
    )


def test_cli_exits_2_on_an_unreadable_knowledge_root_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    locked_folders: list[Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    tree = tmp_path / "k000"
    tree.mkdir()
    locked_folders.append(tree)
    _unlistable(tree, monkeypatch)
    plan = tmp_path / "plan.md"
    argv = ["diagnose", REPETITION, "--knowledge", str(tree), "--write-plan", str(plan)]
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not plan.exists()
    assert captured.err == (
        "kernelopt diagnose: error: --knowledge: Expected a knowledge directory kernelopt can "
        f"read, got {tree} (Permission denied)\n"
    )


def test_unreadable_folder_inside_the_tree_is_listed_and_the_builtins_still_count(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    locked_folders: list[Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    tree = tmp_path / "knowledge"
    locked = tree / "optimizations"
    locked.mkdir(parents=True)
    locked_folders.append(locked)
    _unlistable(locked, monkeypatch)
    assert cli.main(["diagnose", REPETITION, "--knowledge", str(tree)]) == 1
    out = capsys.readouterr().out
    assert "The catalog could not be used" not in out
    assert (
        f"- {locked}: knowledge tree entry left out: Expected a folder kernelopt can read, "
        "got Permission denied"
    ) in out.split("## Not read", 1)[1]


def _percent_fields() -> list[tuple[type, str]]:
    """Every percent-valued threshold of every detector's parameters (``*_pct``)."""
    classes = [
        value for name in params_module.__all__ if attrs.has(value := getattr(params_module, name))
    ]
    return [
        (cls, field.name)
        for cls in classes
        for field in attrs.fields(cls)
        if field.name.endswith("_pct")
    ]


def test_every_percent_threshold_is_found() -> None:
    assert {name for _cls, name in _percent_fields()} == {
        "memory_bound_dram_pct",
        "compute_bound_tc_pct",
    }


@pytest.mark.parametrize(("cls", "field"), _percent_fields())
@pytest.mark.parametrize("value", [150, 1e9, 100.5, -1, -0.5])
def test_percent_threshold_out_of_range_is_refused(cls: type, field: str, value: float) -> None:
    with pytest.raises(InputError) as refused:
        cls(**{field: value})
    assert str(refused.value) == f"{field}: Expected a percentage from 0 to 100, got {value!r}"


@pytest.mark.parametrize("field", ["memory_bound_dram_pct", "compute_bound_tc_pct"])
@pytest.mark.parametrize("value", [0, 0.0, 42.5, 100, 100.0])
def test_percent_threshold_in_range_is_kept(field: str, value: float) -> None:
    # 0 classifies every kernel measured, 100 only a saturated one: both are thresholds
    # the detector's ``>=`` can use.
    assert getattr(WrongBottleneckParams(**{field: value}), field) == value


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "60", True])
def test_percent_threshold_that_is_no_number_is_refused(value: object) -> None:
    with pytest.raises(InputError, match=r"^memory_bound_dram_pct: Expected a finite number"):
        WrongBottleneckParams(memory_bound_dram_pct=value)


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as ended:
        cli.main([*argv, "--help"])
    assert ended.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_diagnose_help_says_json_warnings_are_in_the_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = _help(["diagnose"], capsys)
    assert (
        "--json print machine-readable JSON on stdout instead of text (warnings are in it, "
        'in its "warnings" list, not on stderr)'
    ) in text
    assert "warnings go to stderr" not in text


@pytest.mark.parametrize("argv", [["diagnose"], ["inspect"], ["catalog", "lint"]])
def test_json_help_claims_no_stderr_warnings_where_there_are_none(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # diagnose's warnings are its JSON's "warnings"; inspect's notes are its profile's
    # "notes"; lint's warnings are its "problems": none of them writes one on stderr.
    assert "warnings go to stderr" not in _help(argv, capsys)


def test_diagnose_json_keeps_its_warnings_off_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log"
    shutil.copytree(HEALTHY, log)
    # Two folders of one experiment: read as one, with a warning.
    shutil.copytree(log / "experiments" / "exp_5", log / "experiments" / "exp_005")
    assert cli.main(["diagnose", str(log), "--json"]) in (0, 1)
    captured = capsys.readouterr()
    assert captured.err == ""
    warnings = json.loads(captured.out)["warnings"]
    assert any("both hold experiment 5" in warning for warning in warnings), warnings


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["diagnose", "DIR1", "DIR2"],
         "kernelopt diagnose: error: Expected one DIR and the options "
         "`kernelopt diagnose --help` lists, got an extra argument DIR2"),
        (["diagnose", "DIR1", "DIR2", "DIR3"],
         "kernelopt diagnose: error: Expected one DIR and the options "
         "`kernelopt diagnose --help` lists, got extra arguments DIR2 DIR3"),
        (["diagnose", "DIR1", "-5"],
         "kernelopt diagnose: error: Expected one DIR and the options "
         "`kernelopt diagnose --help` lists, got an extra argument -5"),
        (["catalog", "lint", "a", "b"],
         "kernelopt catalog lint: error: Expected at most one DIR and the options "
         "`kernelopt catalog lint --help` lists, got an extra argument b"),
        (["catalog", "list", "X"],
         "kernelopt catalog list: error: Expected only the options "
         "`kernelopt catalog list --help` lists, got an extra argument X"),
        (["report", "task", "a.md", "b.md"],
         "kernelopt report task: error: Expected one FILE.md and the options "
         "`kernelopt report task --help` lists, got an extra argument b.md"),
        # An unknown option reads as before, with the value that may follow it.
        (["diagnose", "DIR1", "--foo"],
         "kernelopt diagnose: error: Expected only options that "
         "`kernelopt diagnose --help` lists, got --foo"),
        (["diagnose", "DIR1", "--foo", "x"],
         "kernelopt diagnose: error: Expected only options that "
         "`kernelopt diagnose --help` lists, got --foo x"),
    ],
)  # fmt: skip
def test_extra_arguments_are_named_as_what_they_are(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        cli.main(argv)
    captured = capsys.readouterr()
    assert refused.value.code == 2 and captured.out == ""
    assert captured.err == message + "\n"
