"""Item 5 on a softmax whose row fits one tile.

Online softmax folds the second pass over a row that takes several tiles into the first.
A kernel that loads the whole row in one block (``BLOCK_SIZE =
triton.next_power_of_2(n_cols)``, one ``tl.load``, ``tl.max`` and ``tl.sum`` over it) has
no second pass to fold: the item says it is not needed, with the line that reads the row,
instead of calling it missing. Kernels that loop over the tiles of a row, or over the keys
of attention, are still told to add it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import Diagnosis, Pathology, diagnose
from kernelopt.diagnose.presence import one_tile_row
from kernelopt.experiments import KernelSource

P = Pathology

# A row softmax that reads each row whole, one row per program.
ONE_ROW = '''"""Row softmax, one row per program."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(X, Y, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    x = tl.load(X + row * stride + offs, mask=offs < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(Y + row * stride + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)


def softmax(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    softmax_kernel[(n_rows,)](x, y, x.stride(0), n_cols, BLOCK_SIZE=triton.next_power_of_2(n_cols))
    return y
'''
# The same with a persistent grid: each program walks over rows, each still read whole.
PERSISTENT_ROWS = """import triton
import triton.language as tl


@triton.jit
def softmax_kernel(X, Y, stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(0)
    step = tl.num_programs(0)
    offs = tl.arange(0, BLOCK_SIZE)
    for row in tl.range(start, n_rows, step):
        x = tl.load(X + row * stride + offs, mask=offs < n_cols, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(Y + row * stride + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)
"""
# A row too long for one tile, read in tiles twice (max, then sum and store).
TILED = """import triton
import triton.language as tl


@triton.jit
def softmax_kernel(X, Y, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = -float("inf")
    for start in range(0, n_cols, BLOCK):
        x = tl.load(X + row * stride + start + offs, mask=start + offs < n_cols, other=-1e30)
        m = tl.maximum(m, tl.max(x, axis=0))
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(X + row * stride + start + offs, mask=start + offs < n_cols, other=-1e30)
        s += tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(X + row * stride + start + offs, mask=start + offs < n_cols, other=-1e30)
        tl.store(Y + row * stride + start + offs, tl.exp(x - m) / s, mask=start + offs < n_cols)
"""
# Attention over keys in tiles, two passes, under names the code patterns do not know.
ATTENTION = """import triton
import triton.language as tl


@triton.jit
def attn_kernel(Q, K, V, O, n_keys, D: tl.constexpr, BLOCK_N: tl.constexpr):
    d = tl.arange(0, D)
    q = tl.load(Q + d)
    top = -float("inf")
    for start in range(0, n_keys, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(K + keys[:, None] * D + d[None, :], mask=keys[:, None] < n_keys)
        top = tl.maximum(top, tl.max(tl.sum(k * q[None, :], axis=1), axis=0))
    total = 0.0
    out = tl.zeros([D], tl.float32)
    for start in range(0, n_keys, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(K + keys[:, None] * D + d[None, :], mask=keys[:, None] < n_keys)
        v = tl.load(V + keys[:, None] * D + d[None, :], mask=keys[:, None] < n_keys)
        p = tl.where(keys < n_keys, tl.exp(tl.sum(k * q[None, :], axis=1) - top), 0.0)
        total += tl.sum(p, axis=0)
        out += tl.sum(p[:, None] * v, axis=0)
    tl.store(O + d, out / total)
"""
PROFILE = """## Profile: softmax v2 | rows=4096, cols=64
### Bottleneck: Latency-bound
Root cause: one short row per program leaves the SMs waiting on launches.
"""


def _diagnose(root: Path, kernel: str, *, family: str = "softmax") -> Diagnosis:
    """A log under ``root`` whose CLAUDE.md names ``kernel`` as kernels/softmax.py."""
    (root / "experiments").mkdir(parents=True)
    (root / "kernels").mkdir()
    (root / "CLAUDE.md").write_text(
        "# Row softmax kernel (Triton)\n\nKernel: kernels/softmax.py\n", encoding="utf-8"
    )
    (root / "kernels" / "softmax.py").write_text(kernel, encoding="utf-8")
    (root / "experiments" / "summary.md").write_text(
        "# Experiments Summary\n\n"
        "| Exp | Description | Latency | Unit | Correct | Status |\n"
        "|---|---|---|---|---|---|\n"
        "| 1 | eager baseline | 100.0 | us | PASS | BASELINE |\n"
        "| 2 | first fused version | 60.0 | us | PASS | KEPT |\n"
        "| 3 | hoist reciprocal | 59.5 | us | PASS | KEPT |\n",
        encoding="utf-8",
    )
    (root / "experiments" / "profile.md").write_text(PROFILE, encoding="utf-8")
    return diagnose(root, family=family)


def _sentence(diagnosis: Diagnosis) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is P.MISSING_FUNDAMENTAL)


def _load_line(kernel: str) -> int:
    return next(i for i, line in enumerate(kernel.splitlines(), 1) if "tl.load(" in line)


@pytest.mark.parametrize("kernel", [ONE_ROW, PERSISTENT_ROWS], ids=["one-row", "persistent"])
def test_a_row_read_in_one_tile_needs_no_online_softmax(tmp_path: Path, kernel: str) -> None:
    diagnosis = _diagnose(tmp_path / "log", kernel)
    assert diagnosis.finding(P.MISSING_FUNDAMENTAL) is None
    # The profile shows the kernel was measured, not that CUDA events were used: the
    # measuring technique is not claimed tried.
    assert _sentence(diagnosis) == (
        "online-softmax: not needed, the kernel reads each row "
        f"in one tile (kernels/softmax.py:{_load_line(kernel)}). cuda-event-instrumentation: "
        "a way of measuring the kernel, not judged (the log holds profiling data, but no "
        "experiment is tagged with it)."
    )


def test_a_row_read_in_tiles_still_misses_online_softmax(tmp_path: Path) -> None:
    found = _diagnose(tmp_path / "log", TILED).finding(P.MISSING_FUNDAMENTAL)
    assert found is not None
    assert [a.catalog_id for a in found.actions] == ["online-softmax"]
    assert "not needed" not in found.summary


def test_attention_over_key_tiles_still_misses_online_softmax(tmp_path: Path) -> None:
    found = _diagnose(tmp_path / "log", ATTENTION, family="attention").finding(
        P.MISSING_FUNDAMENTAL
    )
    assert found is not None
    assert [a.catalog_id for a in found.actions] == ["online-softmax"]


def test_one_tile_row_reads_kernels_only() -> None:
    def source(text: str, language: str = "python") -> KernelSource:
        return KernelSource(path="kernels/softmax.py", text=text, language=language)

    hit = one_tile_row([source(ONE_ROW)])
    assert hit is not None and hit[1:] == (_load_line(ONE_ROW), ONE_ROW.splitlines()[10].strip())
    assert one_tile_row([source(TILED)]) is None
    assert one_tile_row([source(ATTENTION)]) is None
    # A loop over tiles in another kernel of the sources: the row may not fit one tile.
    assert one_tile_row([source(ONE_ROW), source(TILED)]) is None
    # A CUDA kernel beside it is not read, so nothing is claimed.
    cuda = "__global__ void softmax(const float* x, float* y, int n) {}\n"
    assert one_tile_row([source(ONE_ROW), source(cuda, "cuda")]) is None
    # Host code alone, or a kernel without a softmax, shows no row.
    assert one_tile_row([source("def f(x):\n    return x.softmax(-1)\n")]) is None
