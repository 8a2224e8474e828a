"""`kernelopt report` prints a hand-off's text with its control characters escaped.

A field of a hand-off (or of the rows `--rows` reads) is text from a file: an escape
sequence or a NUL in it, printed as it is, reaches the terminal and acts on it (clears
it, retitles it, recolours what follows). Text output writes each as its escape, as
errors do; `--json` stays valid JSON holding the exact text; tabs, UTF-8 and the layout's
newlines are printed as they are, and what is printed reads back as itself.
"""

from __future__ import annotations

import io
import json
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelopt.cli import main
from kernelopt.workflow import parse_profile, parse_task, parse_version
from kernelopt.workflow.jsonio import to_dict

from .conftest import POINT, anchor_row, write_rows
from .test_profile_review import TEXT as PROFILE_TEXT
from .test_task import TEXT as TASK_TEXT
from .test_version import TEXT as VERSION_TEXT

# ESC [ 2J clears the screen, ESC ] 0 ; ... BEL sets the window title, U+009B is ESC [ in
# one character; DEL and NUL are controls too. µ and the tab are text.
FIELD = "keep \x1b[2J the \x1b]0;owned\x07 signature \x9b31m \x7f\x00 at 5 µs\tok"
SHOWN = "keep \\x1b[2J the \\x1b]0;owned\\x07 signature \\x9b31m \\x7f\\x00 at 5 µs\tok"

# (command, hand-off text with FIELD in a field, its reader)
HAND_OFFS: dict[str, tuple[str, Callable[..., Any]]] = {
    "task": (TASK_TEXT.replace("keep the public signature", FIELD), parse_task),
    "version": (
        VERSION_TEXT.replace("combine kernel reads fp32 partials", FIELD),
        parse_version,
    ),
    "profile": (
        PROFILE_TEXT.replace("| mla_decode | 74.18 us", f"| {FIELD} | 74.18 us"),
        parse_profile,
    ),
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _acting(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on (all but newline and tab)."""
    return [
        char
        for char in text
        if char not in "\n\t" and unicodedata.category(char) in ("Cc", "Zl", "Zp")
    ]


def _saved(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("command", sorted(HAND_OFFS))
def test_a_control_character_in_a_field_is_printed_as_its_escape(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, parse = HAND_OFFS[command]
    assert FIELD in parse(text).render()  # the reader keeps it: the printing escapes it
    code, out, err = run(capsys, "report", command, str(_saved(tmp_path, "hand-off.md", text)))
    assert code == 0, err
    assert _acting(out) == []
    assert SHOWN in out
    # Nothing else changes: the canonical text, each control character as its escape.
    assert out == parse(text).render().replace(FIELD, SHOWN)


@pytest.mark.parametrize("command", sorted(HAND_OFFS))
def test_what_is_printed_reads_back_as_itself(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, _ = HAND_OFFS[command]
    _, out, _ = run(capsys, "report", command, str(_saved(tmp_path, "hand-off.md", text)))
    code, again, err = run(capsys, "report", command, str(_saved(tmp_path, "printed.md", out)))
    assert (code, again) == (0, out), err


@pytest.mark.parametrize("command", sorted(HAND_OFFS))
def test_json_holds_the_exact_text_and_no_control_character(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, parse = HAND_OFFS[command]
    path = _saved(tmp_path, "hand-off.md", text)
    code, out, err = run(capsys, "report", command, str(path), "--json")
    assert code == 0, err
    # json.dumps escapes only the controls below U+0020: DEL and U+009B went out raw.
    assert _acting(out) == []
    assert json.loads(out) == to_dict(parse(text))


def test_rows_output_is_escaped_and_reads_back_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A row's config names its cache format, written after the version in the heading.
    rows = write_rows(
        tmp_path / "rows.jsonl",
        anchor_row("splits8", config={**POINT, "kv": "fp8\x1b[31m"}),
        anchor_row("splits8", config={**POINT, "b": 64}),
    )
    argv = ["report", "profile", "--rows", str(rows), "--kernel", "mla_decode"]
    code, out, err = run(capsys, *argv, "--version", "splits8")
    assert code == 0, err
    assert _acting(out) == []
    assert "## Profile: mla_decode splits8[kv=fp8\\x1b[31m] | b=32" in out
    # The promise of `report profile FILE.md`: what --rows prints reads back unchanged.
    saved = tmp_path / "profiles.md"
    saved.write_bytes(out.encode("utf-8"))
    code, again, err = run(capsys, "report", "profile", str(saved))
    assert code == 0, err
    assert again.encode("utf-8") == saved.read_bytes()
    code, out, err = run(capsys, *argv, "--version", "splits8", "--json")
    assert code == 0 and _acting(out) == [], err
    assert json.loads(out)[0]["version"] == "splits8[kv=fp8\x1b[31m]"


def test_a_control_character_in_a_byte_not_utf8_is_escaped_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # JSON's `\udc9b` reads as the lone surrogate Python keeps for the byte 0x9b, which a
    # stream with the surrogateescape handler (the C locale's) writes back as that byte:
    # ESC [ in one byte, where the terminal reads bytes.
    rows = tmp_path / "rows.jsonl"
    write_rows(rows, anchor_row("splits8", config={**POINT, "kv": "fp8"}))
    rows.write_text(rows.read_text("utf-8").replace('"fp8"', '"\\udc9b2J"'), "utf-8")
    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", write_through=True)
    monkeypatch.setattr(sys, "stdout", stdout)
    argv = ["report", "profile", "--rows", str(rows), "--kernel", "k", "--version", "v"]
    assert main(argv) == 0
    stdout.flush()
    assert b"\x9b" not in raw.getvalue()
    assert b"## Profile: k v[kv=\\udc9b2J] | b=32" in raw.getvalue()


def test_check_names_an_unknown_id_with_its_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = PROFILE_TEXT.replace("(`split-kv-flash-decoding`)", "(`made-up\x1b[2J`)")
    path = _saved(tmp_path, "profile.md", text)
    code, out, err = run(capsys, "report", "profile", str(path), "--check")
    assert (code, out) == (1, "")
    assert "unknown entry id 'made-up\\x1b[2J'" in err and _acting(err) == []


def test_check_names_a_file_with_a_control_character_in_its_name_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _saved(tmp_path, "hand\x1boff.md", PROFILE_TEXT)
    code, out, err = run(capsys, "report", "profile", str(path), "--check")
    assert code == 0, err
    assert out == f"{tmp_path}/hand\\x1boff.md: OK\n"


def test_a_hand_off_that_does_not_parse_is_said_on_one_line_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The error names the section's title as written in the file.
    text = PROFILE_TEXT.replace("### Stages", "### Stages\x1b[8m").replace("| Stage |", "| Step |")
    code, out, err = run(capsys, "report", "profile", str(_saved(tmp_path, "p.md", text)))
    assert (code, out) == (1, "")
    assert "[Stages\\x1b[8m]: Expected the table header" in err
    assert _acting(err) == [] and err.count("\n") == 1
