"""docs/mla.md stays true: its quick-start example runs and reaches float32 accuracy."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "mla.md"


@pytest.mark.filterwarnings("ignore:Conversion of an array with ndim > 0:DeprecationWarning")
def test_quick_start_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(blocks[0], str(DOC), "exec"), {"__name__": "docs_mla"})
    lines = printed.getvalue().strip().splitlines()
    assert lines[0].startswith("MLADecodePlan(strategy='split_kv'")
    assert float(lines[-1]) < 1e-2
