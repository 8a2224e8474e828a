"""Invisible format characters are escaped wherever the tool prints text it was given.

A bidirectional override (U+202E) or isolate (U+2066) in a file name shows what follows
it in another order: an error naming ``report\u202edm.exe`` would read as another file's
name. A zero-width space, a word joiner or a BOM hides in a name that reads the same
without it. Errors and printed text write each as its escape (``\\u202e``), as they write
control characters; JSON holds the exact text, each as a JSON escape. Ordinary text is
printed as it is: accents, µ, CJK, emoji, and the joiners that scripts and emoji sequences
need between two of their characters.
"""

from __future__ import annotations

import io
import json
import sys
import unicodedata
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt._cli_util import one_line, print_json, printable

# The bidirectional controls (embeddings, overrides, isolates, marks) and other invisible
# format characters: ZWSP, word joiner, BOM, soft hyphen, a tag letter.
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
INVISIBLE = "\u200b\u2060\ufeff\u00ad\U000e0041"

# Ordinary text: accents, µ, CJK, emoji, a ZWJ emoji sequence (family, heart on fire), a
# Persian word with its ZWNJ, a Devanagari conjunct with its ZWJ, the flag of England (a
# tag sequence), tabs.
ORDINARY = (
    "café µs 漢字 😀 "
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f\u200d\U0001f525 "
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u0915\u094d\u200d\u0937 "
    "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f\tend"
)


def _invisible(text: str) -> list[str]:
    """The format characters (Cf) of ``text``."""
    return [char for char in text if unicodedata.category(char) == "Cf"]


def _printed_json(data: object, encoding: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What ``print_json`` writes on a standard output of ``encoding``."""
    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding=encoding, write_through=True)
    monkeypatch.setattr(sys, "stdout", stdout)
    print_json(data)
    stdout.flush()
    return raw.getvalue().decode(encoding)


@pytest.mark.parametrize("char", BIDI + INVISIBLE)
def test_a_format_character_is_written_as_its_escape(char: str) -> None:
    escape = repr(char)[1:-1]  # \u202e, \xad, \U000e0041
    assert escape.startswith("\\")
    assert one_line(f"a{char}b") == f"a{escape}b"
    assert printable(f"a{char}b\n") == f"a{escape}b\n"


def test_a_name_shows_in_the_order_it_has() -> None:
    # Shown raw, the override makes the terminal draw "report" then "exe.md" reversed.
    name = "report\u202edm.exe"
    assert one_line(f"Expected a markdown file, got {name}") == (
        "Expected a markdown file, got report\\u202edm.exe"
    )


def test_ordinary_text_is_printed_as_it_is() -> None:
    assert one_line(ORDINARY) == ORDINARY
    assert printable(ORDINARY + "\n") == ORDINARY + "\n"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # Between ASCII letters, at an edge or beside a space a joiner joins nothing: it
        # would only hide in the name.
        ("a\u200db", "a\\u200db"),
        ("\u200c\u00e9", "\\u200c\u00e9"),
        ("\u00e9\u200d", "\u00e9\\u200d"),
        ("\u00e9\u200d\u00a0\u00e9", "\u00e9\\u200d\u00a0\u00e9"),
        # Tag letters outside a flag, or a flag sequence left open, are hidden text.
        ("\U0001f3f4\U000e0067\U000e0062", "\U0001f3f4\\U000e0067\\U000e0062"),
    ],
)
def test_a_joiner_or_tag_that_joins_nothing_is_escaped(text: str, shown: str) -> None:
    assert one_line(text) == shown


def test_printed_text_reads_back_as_itself() -> None:
    text = f"x{BIDI}{INVISIBLE}y {ORDINARY}\n"
    once = printable(text)
    assert _invisible(once) == _invisible(ORDINARY)
    assert printable(once) == once


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_json_escapes_them_and_reads_back_to_the_exact_text(
    encoding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = {"name": f"x{BIDI}{INVISIBLE}y", "plain": ORDINARY}
    out = _printed_json(data, encoding, monkeypatch)
    assert json.loads(out) == data
    # Under UTF-8 the ordinary text keeps its joiners and flag; ASCII escapes everything.
    assert _invisible(out) == (_invisible(ORDINARY) if encoding == "utf-8" else [])
    assert '"x\\u202a\\u202b' in out and "\\udb40\\udc41y" in out  # U+E0041, a pair


def test_an_error_naming_a_path_shows_its_override_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "k\u202eb\u2066c"
    try:
        code = cli.main(["catalog", "list", "--knowledge", str(missing)])
    except SystemExit as raised:  # a parser's own errors exit
        code = int(str(raised.code))
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert "k\\u202eb\\u2066c" in err and _invisible(err) == [], err


def test_a_checked_file_is_named_with_its_override_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.workflow.test_profile_review import TEXT

    path = tmp_path / "profile\u202edm.exe.md"
    path.write_text(TEXT, encoding="utf-8")
    assert cli.main(["report", "profile", str(path), "--check"]) == 0
    out = capsys.readouterr().out
    assert out == f"{tmp_path}/profile\\u202edm.exe.md: OK\n"
