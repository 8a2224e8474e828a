"""`kernelopt learn` prints its summary with the rows' control characters escaped.

The summary names the implementations as the rows file spells them: an escape sequence
in one, printed as it is, clears or recolours the terminal, and a bidirectional override
shows the names in another order. Text output writes each as its escape, as `report`
does; `--json` holds the exact names.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from kernelopt.cli import main

from .conftest import bench_row, write_rows

# ESC [ 2J clears the screen; U+202E shows what follows right to left, U+2066 opens an
# isolate. µ is text.
BEFORE = "splits16\x1b[2J"
AFTER = "splits8\u202e61stilps\u2066µ"
SHOWN_BEFORE = "splits16\\x1b[2J"
SHOWN_AFTER = "splits8\\u202e61stilps\\u2066µ"


def _hidden(text: str) -> list[str]:
    """The characters of ``text`` that act on a terminal or reorder it (all but layout)."""
    return [
        char
        for char in text
        if char not in "\n\t" and unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")
    ]


def _learn_argv(tmp_path: Path, knowledge: Path, before: str, after: str) -> list[str]:
    """``kernelopt learn`` of the splits16 and splits8 anchors, named ``before`` and ``after``."""
    old = write_rows(tmp_path / "before.jsonl", bench_row(before, 74.08, samples=40, seed=1))
    new = write_rows(tmp_path / "after.jsonl", bench_row(after, 66.53, samples=40, seed=2))
    return [
        "learn",
        "--before",
        str(old),
        "--after",
        str(new),
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(knowledge),
        "--kernel",
        "mla_decode",
        "--dry-run",
    ]


def test_the_summary_names_the_implementations_escaped(
    tmp_path: Path, knowledge: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(_learn_argv(tmp_path, knowledge, BEFORE, AFTER))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert _hidden(out) == []
    assert out.startswith(f"FAST: {SHOWN_AFTER} vs {SHOWN_BEFORE} at b=32 s=1 t=4096 h=16")


def test_json_holds_the_exact_names(
    tmp_path: Path, knowledge: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*_learn_argv(tmp_path, knowledge, BEFORE, AFTER), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert _hidden(out) == []
    assert json.loads(out)["summary"].startswith(f"FAST: {AFTER} vs {BEFORE} at ")


def test_a_plain_summary_is_printed_as_it_was(
    tmp_path: Path, knowledge: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(_learn_argv(tmp_path, knowledge, "v1 µ", "v2 µ"))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("FAST: v2 µ vs v1 µ at b=32 s=1 t=4096 h=16")
