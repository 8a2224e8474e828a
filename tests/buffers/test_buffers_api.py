"""The package surface: lazy import, a complete __all__, doctests, the user guide's examples."""

from __future__ import annotations

import doctest
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kernelopt.buffers as buffers

REPO = Path(__file__).resolve().parents[2]
MODULES = ["graph", "launcher", "out", "pool", "records", "scope", "stale"]


def test_import_kernelopt_does_not_load_buffers() -> None:
    code = (
        "import sys, kernelopt; "
        "print('kernelopt.buffers' in sys.modules, 'torch' in sys.modules); "
        "from kernelopt import buffers; print(buffers.BufferPool.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "BufferPool"]


def test_all_is_complete_and_resolves() -> None:
    public = {
        name
        for module in MODULES
        for name in importlib.import_module(f"kernelopt.buffers.{module}").__all__
    }
    assert public == set(buffers.__all__)
    for name in buffers.__all__:
        assert getattr(buffers, name) is not None
    assert buffers.__all__ == sorted(buffers.__all__)


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module: str) -> None:
    mod = importlib.import_module(f"kernelopt.buffers.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_the_user_guide_examples_run() -> None:
    text = (REPO / "docs" / "buffers.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 5
    namespace: dict[str, object] = {"__name__": "buffers_guide"}
    for block in blocks:
        exec(compile(block, "docs/buffers.md", "exec"), namespace)
