"""Regenerate the PyTorch profiler traces in this folder (CPU ops, a few KB each).

Run from the repository root with the project's virtual environment:

    python tests/workload/data/make_torch_traces.py

The traces are real ``torch.profiler`` exports recorded with ``record_shapes=True``; the
tests read them as they are. Timings differ on every run, so the tests check shapes, counts
and findings, never durations.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

HERE = Path(__file__).resolve().parent


def softmax_topk() -> None:
    """softmax over a size-1 axis (3 of 4 calls), top-k with k = n (2 of 3), sum over size 1."""
    x1 = torch.randn(4, 1, 8)
    x8 = torch.randn(4, 8)
    scores = torch.randn(4, 16)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(3):
            torch.softmax(x1, dim=1)
        torch.softmax(x8, dim=-1)
        for _ in range(2):
            torch.topk(scores, 16, dim=-1)
        torch.topk(scores, 3, dim=-1)
        for _ in range(2):
            x1.sum(dim=1)
    prof.export_chrome_trace(str(HERE / "softmax_topk_cpu.json"))


def sdpa_one_key() -> None:
    """scaled_dot_product_attention with one key in 2 of 3 calls."""
    q = torch.randn(2, 4, 1, 8)
    k1, v1 = torch.randn(2, 4, 1, 8), torch.randn(2, 4, 1, 8)
    k16, v16 = torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(2):
            torch.nn.functional.scaled_dot_product_attention(q, k1, v1)
        torch.nn.functional.scaled_dot_product_attention(q, k16, v16)
    prof.export_chrome_trace(str(HERE / "sdpa_one_key_cpu.json"))


if __name__ == "__main__":
    torch.manual_seed(0)
    softmax_topk()
    sdpa_one_key()
