"""docs/bench.md: every example runs as written, and the shown report is what render() prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "bench.md"
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))]


def python_blocks(*, cuda: bool) -> list[str]:
    return [
        code
        for lang, code in blocks()
        if lang == "python" and code.startswith("# needs CUDA") == cuda
    ]


def run(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__doc_example__"})
    return out.getvalue()


@pytest.mark.parametrize("index", range(len(python_blocks(cuda=False))))
def test_cpu_examples_run(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    run(python_blocks(cuda=False)[index])


@pytest.mark.gpu
@pytest.mark.parametrize("index", range(len(python_blocks(cuda=True))))
def test_cuda_examples_run(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path))
    run(python_blocks(cuda=True)[index])


def test_shown_profile_report_is_what_render_prints() -> None:
    found = blocks()
    for i, (lang, code) in enumerate(found):
        if lang == "python" and "print(report.render())" in code:
            shown = found[i + 1][1]
            assert run(code) == shown + "\n"
            return
    pytest.fail("Expected a profile_report example in docs/bench.md, got none")


def test_there_are_examples_of_each_kind() -> None:
    assert len(python_blocks(cuda=False)) >= 8 and len(python_blocks(cuda=True)) >= 2
