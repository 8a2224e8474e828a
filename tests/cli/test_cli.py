"""What every ``kernelopt`` subcommand shares: help, exit codes, options, pipes, entry points.

The parser tree is walked, so a subcommand added later is held to the same rules.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelopt import cli
from tests.conftest import cli_parsers

REPO = Path(__file__).resolve().parents[2]
PLATEAU = REPO / "examples" / "logs" / "mla-decode-plateau"
CALLS = REPO / "tests" / "workload" / "data" / "mla_decode_calls.jsonl"
SCRIPT = Path(sys.executable).with_name("kernelopt")


PARSERS = cli_parsers()
# Flags argparse adds itself, described by argparse.
_OWN_HELP = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, _OWN_HELP)]


def _subcommands(parser: argparse.ArgumentParser) -> list[argparse._SubParsersAction]:  # type: ignore[type-arg]
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]


def _options_below(parser: argparse.ArgumentParser) -> set[str]:
    """The options ``parser`` and its sub-commands take."""
    found = {option for action in parser._actions for option in action.option_strings}
    for action in _subcommands(parser):
        for sub in action.choices.values():
            found |= _options_below(sub)
    return found


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_every_help_opens_with_a_sentence_and_names_commands_alike(prog: str) -> None:
    parser = PARSERS[prog]
    text = parser.description or ""
    assert text[:1].isupper() and text.endswith("."), f"{prog}: {text!r}"
    assert [a.metavar for a in _subcommands(parser)] in ([], ["COMMAND"]), prog


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_every_help_names_only_options_the_command_takes(prog: str) -> None:
    parser = PARSERS[prog]
    texts = [parser.description or "", parser.epilog or ""]
    texts += [a.help or "" for a in parser._actions]
    texts += [c.help or "" for a in _subcommands(parser) for c in a._choices_actions]
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", " ".join(texts)))
    assert named <= _options_below(parser), f"{prog}: {sorted(named - _options_below(parser))}"


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_every_option_is_described_with_its_default(prog: str) -> None:
    for action in _options(PARSERS[prog]):
        name = "/".join(action.option_strings) or action.dest
        assert action.help and action.help.strip(), f"{prog} {name}: no help"
        stated = action.default not in (None, False, "", [], argparse.SUPPRESS)
        if stated:
            assert "default" in action.help, f"{prog} {name}: default {action.default!r} unstated"


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_every_help_states_the_exit_codes(prog: str) -> None:
    text = " ".join(PARSERS[prog].format_help().split())
    assert "Exit codes: 0 " in text and "2 usage or input error" in text, text


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["diagnose", str(PLATEAU), "--until", "3", "--until", "4"], "--until"),
        (["diagnose", str(PLATEAU), "--family", "mla-decode", "--family", "gemm"], "--family"),
        (["inspect", "t.jsonl", "--top", "5", "--top", "7"], "--top"),
        (["catalog", "search", "kv", "--limit", "3", "--limit", "4"], "--limit"),
        (["catalog", "list", "--knowledge", "a", "--knowledge", "b"], "--knowledge"),
        (["learn", "--before", "a", "--after", "b", "--entry", "x", "--entry", "y"], "--entry"),
        (["report", "profile", "--rows", "a", "--rows", "b"], "--rows"),
        (["bench", "mla", "--heads", "16", "--heads", "128"], "--heads"),
    ],
)
def test_an_option_given_twice_is_refused(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The last one silently winning would run something else than the user read back.
    with pytest.raises(SystemExit) as raised:
        cli.main(argv)
    out, err = capsys.readouterr()
    assert raised.value.code == 2 and out == ""
    assert f"argument {flag}: Expected {flag} once, got it twice" in err, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["diagnose", ".", "--until", "nan"], "Expected an int >= 0, got 'nan'"),
        (["inspect", "t.jsonl", "--top", "x"], "Expected an int >= 1, got 'x'"),
        (["inspect", "t.jsonl", "--max-shapes", "inf"], "Expected an int >= 1, got 'inf'"),
        (["catalog", "search", "kv", "--limit", "1.5"], "Expected an int >= 1, got '1.5'"),
        (["catalog", "search", "kv", "--limit", "0"], "Expected an int >= 1, got 0"),
        # int() reads any script's digits; a count the user cannot see typed is refused.
        (["diagnose", ".", "--until", "\uff15"], "Expected an int >= 0, got '\uff15'"),
        (["inspect", "t.jsonl", "--top", "\u0665"], "Expected an int >= 1, got '\u0665'"),
        (["learn", "--before", "a", "--after", "b", "--entry", "x", "--min-effect", "abc"],
         "Expected a fraction in [0, 1), got 'abc'"),
        (["learn", "--before", "a", "--after", "b", "--entry", "x", "--min-effect", "nan"],
         "Expected a fraction in [0, 1), got nan"),
    ],
)  # fmt: skip
def test_bad_numbers_are_usage_errors_that_say_what_was_expected(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(argv)
    out, err = capsys.readouterr()
    assert raised.value.code == 2 and out == "" and message in err, err


def _closed_pipe(argv: list[str], *, unbuffered: bool) -> tuple[int, str]:
    """Run ``argv`` with stdout a pipe whose reader is gone (``kernelopt ... | head -0``)."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            argv, stdout=write, stderr=subprocess.PIPE, text=True, env=env, timeout=120
        )
    finally:
        os.close(write)
    return done.returncode, done.stderr


ENTRY_POINTS = [
    pytest.param([sys.executable, "-m", "kernelopt"], id="python-m"),
    pytest.param([str(SCRIPT)], id="script"),
]


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["diagnose", str(PLATEAU)], 1),
        (["catalog", "lint", "--json"], 0),
        (["--help"], 0),
    ],
)
def test_a_closed_pipe_is_quiet_and_keeps_the_exit_code(
    entry: list[str], unbuffered: bool, args: list[str], code: int
) -> None:
    if not Path(entry[0]).exists():
        pytest.skip(f"no console script at {entry[0]}")
    got, err = _closed_pipe([*entry, *args], unbuffered=unbuffered)
    assert (got, err) == (code, ""), err


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["diagnose", "--help"],
        ["diagnose", str(PLATEAU), "--json"],
        ["diagnose", "no-such-dir"],
        ["catalog", "show", "no-such-entry", "--json"],
        ["inspect", "--top", "x", "t.jsonl"],
        [],
    ],
)
def test_python_m_and_the_console_script_behave_alike(args: list[str]) -> None:
    if not SCRIPT.exists():
        pytest.skip(f"no console script at {SCRIPT}")
    runs = [
        subprocess.run(entry, capture_output=True, text=True, timeout=120, cwd=REPO)
        for entry in ([sys.executable, "-m", "kernelopt", *args], [str(SCRIPT), *args])
    ]
    module, script = ((r.returncode, r.stdout, r.stderr) for r in runs)
    assert module == script
    assert "Traceback" not in module[2]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["catalog", "list", "--kind", "nope"],
         "kernelopt catalog list: error: argument --kind: Expected one of optimization, "
         "anti-pattern, got 'nope'"),
        (["no-such-command"], "Expected one of catalog, diagnose, inspect, bench, learn, report"),
        (["learn", "--entry", "x"],
         "kernelopt learn: error: Expected the required --before, --after, got none of them"),
        (["report", "task"],
         "kernelopt report task: error: Expected the required FILE.md, got none\n"),
        (["diagnose", ".", "--bogus"],
         "kernelopt diagnose: error: Expected only options that `kernelopt diagnose --help` "
         "lists, got --bogus"),
        (["learn", "--knob"], "argument --knob: Expected a value after it, got none"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(argv)
    out, err = capsys.readouterr()
    assert raised.value.code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err, err


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        ([], "catalog, diagnose, inspect, bench, learn, report"),
        (["catalog"], "list, show, search, match, fundamentals, lint, index, new"),
        (["bench"], "ceilings, mla"),
        (["report"], "profile, task, version"),
    ],
)
def test_a_missing_subcommand_ends_the_help_with_the_error(
    argv: list[str], names: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    prog = " ".join(["kernelopt", *argv])
    assert out == "" and err.startswith(f"usage: {prog}")
    assert err.splitlines()[-1] == f"{prog}: error: Expected a command among {names}, got none"


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "{file}"],
        ["report", "task", "{file}"],
        ["learn", "--before", "{file}", "--after", "{file}", "--entry", "x", "--dry-run"],
        ["report", "profile", "--rows", "{file}", "--kernel", "k", "--version", "v"],
    ],
)
def test_an_unreadable_file_is_an_input_error(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # chmod 000 does not stop root, so the refusal the OS gives is simulated.
    import builtins
    import io

    unreadable = tmp_path / "unreadable.jsonl"
    unreadable.write_text('{"op": "x"}\n', encoding="utf-8")
    real_open = io.open

    def refuse(file: object, *args: object, **kwargs: object) -> object:
        if str(file) == str(unreadable):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(io, "open", refuse)
    monkeypatch.setattr(builtins, "open", refuse)
    code = cli.main([arg.format(file=unreadable) for arg in argv])
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    assert "Expected" in err and "Permission denied" in err and len(err.splitlines()) == 1


def test_an_interrupt_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kernelopt.diagnose import engine

    def interrupted(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "diagnose", interrupted)
    assert cli.main(["diagnose", str(PLATEAU)]) == 130
    err = capsys.readouterr().err
    assert err == "kernelopt diagnose: interrupted\n"


def test_an_interrupt_while_the_commands_load_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Loading the subcommands takes a few hundred ms: Ctrl-C lands there as often as later.
    def interrupted(subparsers: object) -> None:
        raise KeyboardInterrupt

    from kernelopt.diagnose import _cli as diagnose_cli

    monkeypatch.setattr(diagnose_cli, "register", interrupted)
    try:
        code = cli.main(["diagnose", str(PLATEAU)])
    except KeyboardInterrupt:  # an escaped one would end the test run, not fail this test
        pytest.fail("Expected exit 130 and one line, got the KeyboardInterrupt's traceback")
    assert code == 130
    out, err = capsys.readouterr()
    assert (out, err) == ("", "kernelopt: interrupted\n")


@pytest.mark.parametrize(
    "argv",
    [
        ["diagnose", "{missing}"],
        ["diagnose", "{file}"],
        ["diagnose", str(PLATEAU), "--write-plan", "{folder}"],
        ["diagnose", str(PLATEAU), "--knowledge", "{missing}"],
        ["inspect", "{missing}"],
        ["inspect", "{folder}"],
        ["inspect", "{file}"],
        ["inspect", str(CALLS), "--write", "{folder}"],
        ["catalog", "list", "--knowledge", "{missing}"],
        ["catalog", "list", "--knowledge", "{file}"],
        ["catalog", "lint", "{file}"],
        ["catalog", "index", "{missing}"],
        ["catalog", "new", "--kind", "optimization", "--dir", "{file}", "A Name"],
        ["learn", "--before", "{missing}", "--after", "{missing}", "--entry", "x"],
        ["learn", "--before", "{folder}", "--after", "{folder}", "--entry", "x"],
        ["report", "task", "{missing}"],
        ["report", "version", "{folder}"],
        ["report", "profile", "{folder}"],
        ["report", "profile", "--rows", "{missing}", "--kernel", "k", "--version", "v"],
        ["bench", "mla", "--extra-point", "b=1,s=1,t=64", "--out", "{folder}"],
    ],
)  # fmt: skip
def test_a_path_that_is_missing_or_of_the_wrong_kind_is_one_expected_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    file = tmp_path / "file.txt"
    file.write_text("not what any command reads\n", encoding="utf-8")
    paths = {"missing": tmp_path / "missing", "folder": folder, "file": file}
    code = cli.main([arg.format(**paths) for arg in argv])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    [line] = err.splitlines()
    assert line.startswith(f"kernelopt {argv[0]}: error: ") and "Expected " in line, line
