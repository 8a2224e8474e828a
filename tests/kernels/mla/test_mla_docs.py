"""docs/mla.md stays true: its quick-start and FP8 examples run and reach their accuracy."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from mla_testing import TOLERANCE

DOC = Path(__file__).resolve().parents[3] / "docs" / "mla.md"


@pytest.mark.filterwarnings("ignore:Conversion of an array with ndim > 0:DeprecationWarning")
def test_quick_start_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    namespace = {"__name__": "docs_mla"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(blocks[0], str(DOC), "exec"), namespace)
    lines = printed.getvalue().strip().splitlines()
    assert lines[0].startswith("MLADecodePlan(strategy='split_kv'")
    # The bound of the tests for the example's dtype (float32 on the CPU, where the text
    # promises about 2e-7); NaN fails the comparison.
    assert float(lines[-1]) < TOLERANCE[namespace["dtype"]]


@pytest.mark.filterwarnings("ignore:Conversion of an array with ndim > 0:DeprecationWarning")
def test_fp8_example_continues_the_quick_start() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    fp8 = next(b for b in blocks if "quantize_kv_fp8(kv_cache)" in b)
    namespace = {"__name__": "docs_mla"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(blocks[0], str(DOC), "exec"), namespace)
        exec(compile(fp8, str(DOC), "exec"), namespace)
    *_, against_bytes, quantization = printed.getvalue().strip().splitlines()
    assert float(against_bytes) < TOLERANCE[namespace["dtype"]]
    assert 1e-3 < float(quantization) < 0.06  # e4m3's rounding shows, and no more
