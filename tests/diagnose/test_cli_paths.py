"""`kernelopt diagnose` names the paths the user typed, not the library's parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import cli

HEALTHY = str(Path(__file__).resolve().parents[2] / "examples" / "logs" / "healthy-run")


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("missing", "Expected an existing log directory, got no folder at {path}"),
        ("file", "Expected a directory holding an experiment log, got the file {path}"),
    ],
)
def test_a_log_path_that_is_no_folder_is_refused_in_the_users_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, message: str
) -> None:
    path = tmp_path / "log"
    if kind == "file":
        path.write_text("# not a log\n")
    assert cli.main(["diagnose", str(path), "--write-plan", str(tmp_path / "plan.md")]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert err == [f"kernelopt diagnose: error: {message.format(path=path)}"]
    # The library's parameter name is not something the user typed.
    assert "path:" not in captured.err and captured.out == ""
    assert not (tmp_path / "plan.md").exists()


@pytest.mark.parametrize(("kind", "why"), [("missing", "no such folder"), ("file", "not a folder")])
def test_a_knowledge_path_that_is_no_folder_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, why: str
) -> None:
    knowledge = tmp_path / "knowledge"
    if kind == "file":
        knowledge.write_text("entry\n")
    assert cli.main(["diagnose", HEALTHY, "--knowledge", str(knowledge)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "kernelopt diagnose: error: --knowledge: Expected a knowledge directory "
        f"(docs/knowledge/), got {knowledge} ({why})"
    )


def test_an_until_that_leaves_nothing_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["diagnose", HEALTHY, "--until", "1"]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith("got no experiments before exp 1 (--until 1)")
