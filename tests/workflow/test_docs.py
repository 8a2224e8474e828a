"""docs/workflow.md runs as written and shows what it prints; the devlog README's example reads."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from kernelopt.workflow import parse_performance
from kernelopt.workflow.devlog import COLUMNS

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)


def blocks(name: str) -> list[tuple[str, str]]:
    text = (DOCS / name).read_text(encoding="utf-8")
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(text)]


EXAMPLES = [
    (code, found[i + 1][1] if i + 1 < len(found) and found[i + 1][0] == "text" else None)
    for found in [blocks("workflow.md")]
    for i, (lang, code) in enumerate(found)
    if lang == "python"
]


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_examples_run_and_print_what_is_shown(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, shown = EXAMPLES[index]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOCS / "workflow.md"), "exec"), {"__name__": "__doc_example__"})
    if shown is not None:
        assert out.getvalue() == shown


def test_every_step_has_an_example() -> None:
    assert len(EXAMPLES) >= 6 and all(shown is not None for _, shown in EXAMPLES)


def test_the_devlog_readme_example_is_the_format_update_devlog_keeps() -> None:
    [example] = [code for lang, code in blocks("kernels/README.md") if lang == "markdown"]
    rows = parse_performance(example)
    assert [(r.version, r.point, r.time, r.gb_s) for r in rows] == [
        ("splits32", "b=32 s=1 t=4096 h=16", 91.22, 1667.0),
        ("splits8", "b=32 s=1 t=4096 h=16", 66.53, 2286.0),
    ]
    assert "| " + " | ".join(COLUMNS) + " |" in example
