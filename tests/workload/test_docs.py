"""docs/workload.md: its examples run, in order, and print what the page says."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from pathlib import Path

import pytest

from kernelopt import cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "workload.md"


def test_examples_run_and_print_what_the_page_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = DOC.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 8
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for i, block in enumerate(blocks):
            exec(compile(block, f"{DOC.name}[python block {i}]", "exec"), namespace)
    printed = out.getvalue()
    quick_start = re.search(r"```text\n(uniform-lengths.*?)```", text, re.S)
    assert quick_start is not None
    assert quick_start.group(1) in printed
    for expected in (
        "1.0 self.shape[dim]",
        "['select-all', 'dominant-shape']",
        "1.0 arg2.shape[dim] <= arg0.shape[dim] and all(arg2.stride(d) == 0 or arg2.shape[d] "
        "== 1 for d != dim)",
        "1 1 4 0.9\n0.9\n",
        "['h_kv']",
        "['size1-reduction', 'dominant-shape']",
        "1 0.0\n",
    ):
        assert expected in printed
    assert Path("experiments/workload_profile.md").is_file()
    # The shell examples run too.
    for line in re.findall(r"```bash\n(kernelopt .*?)\n```", text):
        args = shlex.split(line)[1:]
        if args[1] == "experiments/workload_profile.md":
            assert os.path.exists(args[1])
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli.main(args) in (0, 1), line
