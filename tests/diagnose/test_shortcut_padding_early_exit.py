"""The overlooked-shortcut item on padded queries of a varlen prefill.

A prefill kernel spreads the query tiles of each sequence over its launch grid and loops
over the keys. Padding of the queries (``max_q_len`` past each sequence's ``q_len``) costs
nothing where the programs past a sequence's length return at once: the item quotes that
return, not the loop over the keys, which says nothing of the queries.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import diagnose
from kernelopt.diagnose.model import Pathology
from kernelopt.workload import (
    Call,
    OpSignature,
    ScalarArg,
    TensorArg,
    ValuesSummary,
    profile_calls,
    write_profile_md,
)

SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | prefill baseline, a program per (sequence, query tile, head) | 412.0 | us | PASS | BASELINE |
"""

KERNEL = """import triton
import triton.language as tl


@triton.jit
def _prefill(Q, CU, CTX, O, BLOCK_M: tl.constexpr, PAGE: tl.constexpr):
    seq = tl.program_id(0)
    mblk = tl.program_id(1)
    q_start = tl.load(CU + seq)
    q_len = tl.load(CU + seq + 1) - q_start
    ctx = tl.load(CTX + seq)
{exit}    end = ctx + q_len
    acc = 0.0
    for start in range(0, end, PAGE):
        acc += tl.load(Q + q_start + start)
    tl.store(O + seq * BLOCK_M + mblk, acc)
"""

EXIT = """    if mblk * BLOCK_M >= q_len:
        return
"""


def _log(root: Path, kernel: str) -> Path:
    """A log of one experiment and a profile whose queries are padded to max_q_len."""
    exp = root / "experiments" / "exp_1"
    exp.mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    (exp / "prefill.py").write_text(kernel, encoding="utf-8")
    sig = OpSignature(
        name="varlen_prefill",
        ops=("varlen_prefill",),
        family="attention",
        tensors={"q": ("tokens", "h_q", "d_qk")},
        values={"seqlens_q": "q_len"},
        fixed=("h_q", "d_qk"),
        padded=(("max_q_len", "q_len_mean"),),
        scalars={"max_q_len": "max_q_len"},
    )
    calls = [
        Call(
            op="varlen_prefill",
            args=(
                TensorArg(name="q", shape=(500 + step, 32, 128), dtype="float16"),
                TensorArg(
                    name="seqlens_q",
                    shape=(9,),
                    dtype="int32",
                    values=ValuesSummary(min=1, max=512, mean=57.8),
                ),
                ScalarArg(name="max_q_len", value=512),
            ),
        )
        for step in range(10)
    ]
    profile = profile_calls(calls, signatures=[sig])
    write_profile_md(profile, root / "experiments" / "workload_profile.md")
    return root


def _sentence(root: Path) -> str:
    (sentence,) = [
        c.sentence for c in diagnose(root).checks if c.pathology is Pathology.OVERLOOKED_SHORTCUT
    ]
    return sentence


def test_the_early_return_past_the_query_length_is_quoted(tmp_path: Path) -> None:
    root = _log(tmp_path / "log", KERNEL.format(exit=EXIT))
    assert diagnose(root).finding(Pathology.OVERLOOKED_SHORTCUT) is None
    sentence = _sentence(root)
    # Before: "the kernel's loop stops at each sequence's length ... in `for start in
    # range(0, end, PAGE):`", a loop over the keys.
    assert "`if mblk * BLOCK_M >= q_len: return` (experiments/exp_1/prefill.py:12)" in sentence
    assert "range(0, end, PAGE)" not in sentence


@pytest.mark.parametrize("where", ["summary", "actions"])
def test_a_loop_over_the_keys_does_not_clear_padded_queries(tmp_path: Path, where: str) -> None:
    root = _log(tmp_path / "log", KERNEL.format(exit=""))
    finding = diagnose(root).finding(Pathology.OVERLOOKED_SHORTCUT)
    assert finding is not None
    text = finding.summary if where == "summary" else " ".join(a.text for a in finding.actions)
    assert "max_q_len" in text
    assert "range(0, end, PAGE)" not in text
