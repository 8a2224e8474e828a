"""Triton's interpreter computes ``tl.dot`` on bfloat16 wrong on any device.

It copies CUDA tensors to the host and runs the same numpy code as for CPU tensors, so a
GPU user who left ``TRITON_INTERPRET=1`` set got garbage in bfloat16 while only CPU
tensors were refused. The docs' quick start set the variable on GPUs too.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kernelopt import InputError
from kernelopt.kernels.mla import MLADecodePlan
from kernelopt.kernels.mla._validate import check_interpreter_dtype, interpreter_on

DOC = Path(__file__).resolve().parents[3] / "docs" / "mla.md"
CUDA = torch.device("cuda", 0)  # built without a GPU: only its type is read


@pytest.mark.parametrize("value", ["1", "true", "on"])
def test_bfloat16_is_refused_under_the_interpreter_on_a_cuda_device(monkeypatch, value) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", value)
    with pytest.raises(InputError) as refused:
        check_interpreter_dtype(CUDA, torch.bfloat16)
    message = str(refused.value)
    assert message.startswith("dtype: Expected dtype float16 or float32 while TRITON_INTERPRET")
    assert "leave TRITON_INTERPRET unset" in message and "cuda:0" in message
    assert message.endswith("got torch.bfloat16")
    with pytest.raises(InputError, match=r"got torch\.bfloat16 \(the default: pass dtype=\)"):
        check_interpreter_dtype(CUDA, torch.bfloat16, defaulted=True)


def test_other_dtypes_and_compiled_kernels_pass(monkeypatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    for dtype in (torch.float16, torch.float32):
        check_interpreter_dtype(CUDA, dtype)
        check_interpreter_dtype(torch.device("cpu"), dtype)
    for off in ("0", ""):
        monkeypatch.setenv("TRITON_INTERPRET", off)
        assert not interpreter_on()
        check_interpreter_dtype(CUDA, torch.bfloat16)
    monkeypatch.delenv("TRITON_INTERPRET")
    check_interpreter_dtype(CUDA, torch.bfloat16)


def test_every_spelling_triton_reads_runs_on_the_cpu(monkeypatch) -> None:
    # Triton turns its interpreter on for "true" as for "1"; CPU plans used to be refused
    # with "Expected a CUDA tensor (or a CPU tensor with TRITON_INTERPRET=1)" then.
    monkeypatch.setenv("TRITON_INTERPRET", "true")
    assert interpreter_on()
    kwargs = {"s_q": 1, "h_q": 16, "page_size": 16, "softmax_scale": 0.1, "device": "cpu"}
    MLADecodePlan([9, 5], dtype=torch.float32, **kwargs)
    with pytest.raises(InputError, match="dtype: Expected dtype float16 or float32 on the CPU"):
        MLADecodePlan([9, 5], dtype=torch.bfloat16, **kwargs)


def _quick_start_prelude() -> str:
    """The docs' quick start up to its first import of kernelopt."""
    [first] = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)[:1]
    return first[: first.index("from kernelopt")]


@pytest.mark.parametrize("cuda", [True, False])
def test_quick_start_sets_the_interpreter_only_without_cuda(monkeypatch, cuda) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    exec(compile(_quick_start_prelude(), str(DOC), "exec"), {"__name__": "docs_mla"})
    assert interpreter_on() is not cuda


def test_the_quick_start_can_ask_torch_before_triton_loads() -> None:
    # Triton reads TRITON_INTERPRET when a kernel is defined: the prelude may import torch
    # and ask for CUDA only because neither imports Triton.
    code = _quick_start_prelude().replace('os.environ.setdefault("TRITON_INTERPRET", "1")', "0")
    code += "\nimport sys\nprint('triton' in sys.modules)\n"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"
