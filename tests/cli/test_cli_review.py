"""What a user meets driving ``kernelopt`` with odd paths and options that do not apply.

An error stays one line whatever the path it names holds, a command the tool suggests
pastes back into a shell as shown, options a form of a command does not read are refused
rather than dropped, and each option's help says what it does in that command.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kernelopt import cli

REPO = Path(__file__).resolve().parents[2]
PLATEAU = REPO / "examples" / "logs" / "mla-decode-plateau"
CALLS = REPO / "tests" / "workload" / "data" / "mla_decode_calls.jsonl"
PROFILE_MD = REPO / "tests" / "workload" / "data" / "handwritten_profile.md"


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        # A message the command raises, naming the path as given.
        (["diagnose", "{tmp}/log\nfolder"], "log\\nfolder"),
        (["inspect", "{tmp}/calls\r.jsonl"], "calls\\r.jsonl"),
        # An escape sequence would act on the terminal; a line separator splits the line.
        (["catalog", "list", "--knowledge", "{tmp}/k\x1b[2J\u2028b"], "k\\x1b[2J\\u2028b"),
        # An argument the parser does not know, named by the parser.
        (["diagnose", str(PLATEAU), "--bo\ngus"], "--bo\\ngus"),
    ],
)
def test_an_error_naming_a_path_with_a_newline_stays_one_line(
    argv: list[str], shown: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    try:
        code = cli.main(args)
    except SystemExit as raised:  # the parser's own errors exit
        code = int(str(raised.code))
    assert code == 2
    line = _one_error_line(capsys)
    assert "Expected " in line and shown in line and "\x1b" not in line, line


def test_an_os_error_on_a_path_with_a_newline_stays_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # What no reader named more precisely is said by the tool itself, naming the file.
    from kernelopt.diagnose import engine

    def refused(*args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied", "/logs/exp\n1/summary.md")

    monkeypatch.setattr(engine, "diagnose", refused)
    assert cli.main(["diagnose", str(PLATEAU)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("kernelopt diagnose: error: Expected ")
    assert "/logs/exp\\n1/summary.md: Permission denied" in line, line


def _suggested(text: str) -> list[str]:
    """The words of the ``kernelopt catalog lint ...`` command in ``text``, as a shell
    splits them."""
    found = re.search(r"`(kernelopt catalog lint [^`]*)`", text)
    assert found is not None, text
    return shlex.split(found.group(1))


def test_the_lint_command_suggested_after_new_pastes_as_one_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["catalog", "new", "--kind", "optimization", "--dir", "my tree", "Warp Spec"]
    assert cli.main(argv) == 0
    _, err = capsys.readouterr()
    assert _suggested(err) == ["kernelopt", "catalog", "lint", "my tree"], err
    assert cli.main([*argv[:-1], "Other Name", "--json"]) == 0
    out, _ = capsys.readouterr()
    assert _suggested(out) == ["kernelopt", "catalog", "lint", "my tree"], out


def test_the_lint_command_suggested_for_a_tree_read_with_problems_pastes_as_one_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    entries = tmp_path / "team's tree" / "optimizations"
    entries.mkdir(parents=True)
    (entries / "broken.md").write_text("not an entry\n", encoding="utf-8")
    assert cli.main(["catalog", "list", "--knowledge", "team's tree"]) == 0
    _, err = capsys.readouterr()
    assert _suggested(err) == ["kernelopt", "catalog", "lint", "team's tree"], err


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--max-shapes", "3"], "--max-shapes, got it"),
        (["--time", "auto"], "--time, got it"),
        (["--format", "jsonl"], "--format, got it"),
        (["--definition", str(PROFILE_MD)], "--definition, got it"),
        (["--format", "jsonl", "--time", "host"], "--format, --time, got them"),
    ],
)
def test_inspect_refuses_trace_only_options_with_a_workload_profile(
    options: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A workload_profile.md is read back as written: these options would change nothing.
    written = tmp_path / "again.md"
    code = cli.main(["inspect", str(PROFILE_MD), *options, "--write", str(written)])
    assert code == 2
    line = _one_error_line(capsys)
    assert f"Expected {named.split(', got')[0]} only with a trace, got" in line, line
    assert f"with the workload profile {PROFILE_MD}" in line and named.split(", ")[-1] in line
    assert not written.exists()


def test_inspect_still_rereads_a_workload_profile_with_the_options_it_uses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["inspect", str(PROFILE_MD), "--top", "2", "--json"]) in (0, 1)
    assert '"profile"' in capsys.readouterr().out


def _knowledge_help(command: str) -> str:
    parser = cli.build_parser()
    for words in (["catalog"], [command]):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[words[0]]
    action = next(a for a in parser._actions if "--knowledge" in a.option_strings)
    return action.help or ""


@pytest.mark.parametrize(
    ("command", "default"),
    [("lint", "the built-ins"), ("index", "docs/knowledge"), ("new", "docs/knowledge")],
)
def test_the_tree_commands_describe_knowledge_as_the_tree_they_work_on(
    command: str, default: str
) -> None:
    # These work on the tree named, merged over nothing; index and new default to
    # docs/knowledge, not to the built-ins.
    text = _knowledge_help(command)
    assert "merged" not in text and f"(default: {default})" in text, text


def test_the_query_commands_still_describe_knowledge_as_merged() -> None:
    for command in ("list", "show", "search", "match"):
        assert "merged over the built-in entries" in _knowledge_help(command)


ROWS = REPO / "docs" / "kernels" / "mla_decode" / "experiments" / "exp_12"
_LEARN = [
    "learn", "--before", str(ROWS / "seesaw_before.jsonl"), "--after",
    str(ROWS / "seesaw_after.jsonl"), "--entry", "split-kv-flash-decoding", "--mode", "graph",
    "--dry-run", "--knowledge", "{tmp}/tree",
]  # fmt: skip
_PROFILE = [
    "report", "profile", "--rows", str(ROWS / "seesaw_after.jsonl"), "--kernel", "mla_decode",
    "--version", "kernelopt_seesaw", "--mode", "cold",
]  # fmt: skip
_AT = ["--point", "b=32,s=1,h=16"]


@pytest.mark.parametrize(
    ("argv", "flag", "what"),
    [
        # Read as none given, each would keep every point's rows or take the only one.
        ([*_LEARN, "--point", ""], "--point", "a trial point"),
        ([*_PROFILE, "--point", ""], "--point", "a trial point"),
        ([*_PROFILE, "--point", "  "], "--point", "a trial point"),
        ([*_LEARN, *_AT, "--before-impl", ""], "--before-impl", "an implementation name"),
        ([*_LEARN, *_AT, "--after-impl", ""], "--after-impl", "an implementation name"),
        ([*_PROFILE, "--impl", ""], "--impl", "an implementation name"),
        ([*_PROFILE, "--baseline", str(ROWS / "seesaw_before.jsonl"), "--baseline-impl", ""],
         "--baseline-impl", "an implementation name"),
        ([*_LEARN, *_AT, "--knob", ""], "--knob", "a config key"),
        ([*_LEARN, *_AT, "--anti-pattern", ""], "--anti-pattern", "an anti-pattern id"),
    ],
)  # fmt: skip
def test_an_empty_filter_is_refused_not_read_as_none_given(
    argv: list[str], flag: str, what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main([arg.replace("{tmp}", str(tmp_path)) for arg in argv])
    assert raised.value.code == 2
    line = _one_error_line(capsys)
    assert f"argument {flag}: Expected {what}" in line and "got an empty value" in line, line
    assert not (tmp_path / "tree").exists()


def test_the_filters_given_take_the_rows_they_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    learn = [arg.replace("{tmp}", str(tmp_path)) for arg in _LEARN]
    assert cli.main([*learn, *_AT, "--knob", "num_splits", "--json"]) == 0
    assert '"verdict": "FAST"' in capsys.readouterr().out
    assert cli.main([*_PROFILE, "--point", "b=32,s=1,h=16", "--impl", "kernelopt_seesaw"]) == 0
    assert capsys.readouterr().out.count("## Profile:") == 1


@pytest.mark.parametrize("heads", ["16,16", "128,16,128", "16,016"])
def test_bench_mla_refuses_a_head_count_given_twice_before_anything_runs(
    heads: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each point would be timed twice at that count and its rows appended twice; refused
    # before the device is looked for, so this holds on a machine without CUDA too.
    argv = ["bench", "mla", "--extra-point", "b=1,s=1,t=64", "--heads", heads]
    assert cli.main(argv) == 2
    line = _one_error_line(capsys)
    assert f"--heads: Expected each head count once, got '{heads}'" in line, line


DATA = REPO / "tests" / "workload" / "data"
WORKLOADS = (
    DATA / "flashinfer" / "workloads" / "mla_paged" / "mla_paged_decode_h16_ckv512_kpe64_ps64.jsonl"
)
DEFINITION = (
    DATA
    / "flashinfer"
    / "definitions"
    / "mla_paged"
    / "mla_paged_decode_h16_ckv512_kpe64_ps64.json"
)


@pytest.mark.parametrize(
    ("trace", "option", "expected_line"),
    [
        (DATA / "mla_decode_calls.jsonl", ["--definition", str(DEFINITION)],
         "Expected --definition only with FlashInfer-Bench workloads, got it with the jsonl trace"),
        (DATA / "sdpa_one_key_cpu.json", ["--definition", str(DEFINITION)],
         "Expected --definition only with FlashInfer-Bench workloads, got it with the "
         "torch-profiler trace"),
        (DATA / "mla_decode_calls.jsonl", ["--time", "device"],
         "Expected --time only with a PyTorch profiler trace, got it with the jsonl trace"),
        (WORKLOADS, ["--time", "host"],
         "Expected --time only with a PyTorch profiler trace, got it with the flashinfer-bench "
         "trace"),
    ],
)  # fmt: skip
def test_inspect_refuses_an_option_the_traces_format_does_not_read(
    trace: Path,
    option: list[str],
    expected_line: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    written = tmp_path / "profile.md"
    assert cli.main(["inspect", str(trace), *option, "--write", str(written)]) == 2
    line = _one_error_line(capsys)
    assert expected_line in line and str(trace) in line, line
    assert not written.exists()


@pytest.mark.parametrize(
    ("trace", "option"),
    [
        (WORKLOADS, ["--definition", str(DEFINITION)]),
        (DATA / "sdpa_one_key_cpu.json", ["--time", "host"]),
        (DATA / "mla_decode_calls.jsonl", ["--format", "jsonl"]),
    ],
)
def test_inspect_takes_the_options_the_traces_format_reads(
    trace: Path, option: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["inspect", str(trace), *option]) in (0, 1)
    out, err = capsys.readouterr()
    assert out and "error" not in err, err


def _both_to_a_closed_pipe(args: list[str], cwd: Path, *, stdout_too: bool) -> int:
    """Run ``kernelopt args`` with stderr (and stdout) a pipe whose reader is gone, as in
    ``kernelopt ... 2>&1 | head -1`` once head has its line."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kernelopt", *args],
            stdout=write if stdout_too else subprocess.DEVNULL,
            stderr=write,
            cwd=cwd,
            timeout=120,
        )
    finally:
        os.close(write)
    return done.returncode


@pytest.mark.parametrize(
    ("args", "code", "stdout_too"),
    [
        # An input error keeps its exit 2 when the one line saying it cannot be read.
        (["diagnose", "no-such-log"], 2, False),
        (["diagnose", "no-such-log", "--until", "x"], 2, False),
        # The entry is written and its note goes to stderr: the run did its work.
        (["catalog", "new", "--kind", "optimization", "--dir", "tree", "Closed Pipe"], 0, True),
        (["catalog", "lint", str(REPO / "docs" / "knowledge")], 0, True),
    ],
)
def test_stderr_to_a_closed_pipe_keeps_the_exit_code(
    args: list[str], code: int, stdout_too: bool, tmp_path: Path
) -> None:
    assert _both_to_a_closed_pipe(args, tmp_path, stdout_too=stdout_too) == code
    if args[:2] == ["catalog", "new"]:
        assert (tmp_path / "tree" / "optimizations" / "closed-pipe.md").is_file()


def _run_with_stdout(
    argv: list[str], encoding: str, errors: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, bytes]:
    """Run ``argv`` with a standard output of ``encoding`` (``errors`` as Python sets them
    for the locale: ``strict`` under ``PYTHONIOENCODING=utf-8`` or an ASCII terminal)."""
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, errors=errors, write_through=True)
    monkeypatch.setattr(sys, "stdout", stream)
    code = cli.main(argv)
    stream.flush()
    return code, raw.getvalue()


def test_text_an_ascii_terminal_cannot_show_is_escaped_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The plan's heading holds an em dash; LANG=C terminals encode ASCII only.
    code, out = _run_with_stdout(["diagnose", str(PLATEAU)], "ascii", "strict", monkeypatch)
    assert code == 1 and capsys.readouterr().err == ""
    assert out.decode("ascii").startswith("# Plan: mla-decode-plateau \\u2014 clean-context")


def test_json_on_an_ascii_terminal_stays_valid_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["catalog", "show", "online-softmax", "--json"]
    assert cli.main(argv) == 0
    as_written = capsys.readouterr().out
    # The entry's text holds characters outside ASCII: they read back as they were.
    assert any(ord(char) > 127 for char in as_written)
    code, out = _run_with_stdout(argv, "ascii", "strict", monkeypatch)
    assert code == 0 and capsys.readouterr().err == ""
    assert json.loads(out.decode("ascii")) == json.loads(as_written)


@pytest.mark.parametrize("errors", ["strict", "surrogateescape"])
def test_a_file_name_that_is_not_utf8_prints_without_a_traceback(
    errors: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Python keeps such a name as lone surrogates; a UTF-8 locale's stdout refuses them
    # (strict), and the C locale's writes the raw byte, which no JSON reader takes.
    name = os.fsencode(tmp_path) + b"/calls\xff.jsonl"
    Path(os.fsdecode(name)).write_bytes(CALLS.read_bytes())
    trace = os.fsdecode(name)
    code, out = _run_with_stdout(["inspect", trace, "--json"], "utf-8", errors, monkeypatch)
    assert code == 1 and capsys.readouterr().err == ""
    data = json.loads(out.decode("utf-8"))
    assert os.fsencode(data["profile"]["source"]) == name
    code, out = _run_with_stdout(["inspect", trace], "utf-8", errors, monkeypatch)
    assert code == 1 and capsys.readouterr().err == ""
    first = out.splitlines()[0]
    # Shown as the name it is: its byte where the stream takes it, else its escape.
    assert first.startswith(name if errors == "surrogateescape" else os.fsencode(tmp_path))
    assert errors == "surrogateescape" or b"/calls\\udcff.jsonl (jsonl)" in first
