"""Logs written by hand, the way a kernel engineer keeps the seed's layout without a tool:
headers in their own words, a row short of a cell, a dash typed as ``--``, kernel and
baseline named on one line, timings taken with ``do_bench``, failing attempts reverted in
the kernel file, a profile of a memory-bound normalization kernel, an autotune space grown
from nothing. Each is read as meant, or said to be unsure in a warning."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kernelopt.diagnose import Diagnosis, Pathology, diagnose, read_log
from kernelopt.experiments.records import Correctness, Status


def _write(root: Path, files: dict[str, str], *, crlf: frozenset[str] = frozenset()) -> Path:
    """Write ``files`` (relative path -> text, dedented) under ``root``; the paths in
    ``crlf`` get Windows line endings."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        body = textwrap.dedent(text).lstrip("\n")
        if relative in crlf:
            body = body.replace("\n", "\r\n")
        path.write_bytes(body.encode("utf-8"))
    return root


def _sentence(diagnosis: Diagnosis, pathology: Pathology) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is pathology)


def _found(diagnosis: Diagnosis, pathology: Pathology) -> bool:
    return any(f.pathology is pathology for f in diagnosis.findings)


_LAYERNORM_SUMMARY = """
    # LayerNorm fwd -- experiments


    ## Summary table

    | # | What I tried | Time (µs) | vs torch | correct? | kept? |
    |---|---|---|---|---|---|
    | 1 | baseline: F.layer_norm | 95.4 | 1.00x | yes | baseline |
    | 2 | Triton, one row per program, num_warps=4 | 71.8 | 1.33x | yes | kept |
    | 3 | num_warps=8 | 70.9 | 1.35x | yes | kept |
    | 4 | num_warps=16 | 72.6 | 1.31x | no | reverted |
    | 5 | num_warps=8, num_stages=2 | 71.2 | 1.34x | yes | reverted |
    | 6 | num_warps=2 | 88.0 | 1.08x | yes | reverted |
    | 7 | num_warps=8 again, BLOCK_SIZE 8192 | 70.7 | 1.35x | yes | kept |
"""


def test_headers_in_a_writers_own_words_are_read(tmp_path: Path) -> None:
    """ "What I tried" names the change, "vs torch" a speedup, "correct?" and "kept?" the
    verdicts: before, the rows were titled by their numbers and the rest was dropped."""
    root = _write(
        tmp_path,
        {"experiments/summary.md": _LAYERNORM_SUMMARY},
        crlf=frozenset({"experiments/summary.md"}),
    )
    log = read_log(root)
    by_number = {e.number: e for e in log.experiments}
    assert by_number[3].description == "num_warps=8"
    assert by_number[3].speedup == 1.35
    assert by_number[3].status is Status.KEPT
    assert by_number[5].status is Status.REVERTED
    assert by_number[4].correctness is Correctness.FAIL  # "no" in the "correct?" column
    assert by_number[1].status is Status.BASELINE


def test_a_loop_on_one_knob_shows_once_the_titles_are_read(tmp_path: Path) -> None:
    """Five attempts on num_warps: a repetition loop citing them, which the titles (read
    as "3", "4", ... before) could not show."""
    summary = _LAYERNORM_SUMMARY.replace("| 72.6 | 1.31x | no |", "| 72.6 | 1.31x | yes |")
    root = _write(tmp_path, {"experiments/summary.md": summary})
    diagnosis = diagnose(root)
    finding = diagnosis.finding(Pathology.REPETITION_LOOP)
    assert finding is not None
    assert finding.experiments == (3, 4, 5, 6, 7)
    assert "num_warps" in finding.summary


def test_a_row_short_of_a_cell_is_warned_of(tmp_path: Path) -> None:
    """A row that left out a cell is read left to right (its verdict lands in the column
    before); the column left empty is named instead of the row being read silently."""
    summary = _LAYERNORM_SUMMARY.replace(
        "| 4 | num_warps=16 | 72.6 | 1.31x | no | reverted |",
        "| 4 | num_warps=16 | 72.6 | no | reverted |",
    )
    root = _write(tmp_path, {"experiments/summary.md": summary})
    warnings = diagnose(root).warnings
    short = [w for w in warnings if w.startswith("experiments/summary.md:11:")]
    assert short == [
        "experiments/summary.md:11: Expected 6 cells as in the header, got 5; read left to "
        "right, so the 'kept?' column stayed empty (a cell left out in between moves the "
        "ones after it a column left)"
    ]


def test_a_row_short_of_free_text_only_is_not_warned_of(tmp_path: Path) -> None:
    """A row without its trailing notes lost no number or verdict: no warning."""
    root = _write(
        tmp_path,
        {
            "experiments/summary.md": """
                | Exp | Description | Latency | Unit | Status | Notes |
                |---|---|---|---|---|---|
                | 1 | baseline | 95.4 | us | BASELINE | torch |
                | 2 | triton | 71.8 | us | KEPT |
            """
        },
    )
    log = read_log(root)
    assert [e.status for e in log.experiments] == [Status.BASELINE, Status.KEPT]
    assert not [w for w in log.warnings if "cells as in the header" in w]


def test_a_heading_dash_typed_as_two_hyphens_is_no_part_of_the_title(tmp_path: Path) -> None:
    """``## Exp 4 -- num_warps=16`` titles experiment 4 "num_warps=16", not "- num_warps=16"."""
    root = _write(
        tmp_path,
        {
            "experiments/exp_4/result.md": """
                ## Exp 4 -- num_warps=16

                **time:** 72.6us

                correct: yes
            """
        },
        crlf=frozenset({"experiments/exp_4/result.md"}),
    )
    (experiment,) = read_log(root).experiments
    assert experiment.description == "num_warps=16"
    assert (experiment.latency, experiment.unit) == (72.6, "us")


_RMSNORM = """
    import triton
    import triton.language as tl


    @triton.jit
    def rmsnorm_kernel(X, W, Y, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(X + row * N + cols).to(tl.float32)
        y = x * tl.rsqrt(tl.sum(x * x, 0) / N + eps) * tl.load(W + cols).to(tl.float32)
        tl.store(Y + row * N + cols, y.to(tl.bfloat16))


    def rmsnorm(x, w, out, eps=1e-6):
        rmsnorm_kernel[(x.shape[0],)](x, w, out, x.shape[1], eps, BLOCK=x.shape[1])
        return out
"""


def test_kernel_and_baseline_named_on_one_line(tmp_path: Path) -> None:
    """ "kernel: kernels/rmsnorm.py  baseline: torch (...)" names the kernel: the path was
    read as the baseline, and the plan said no kernel source was found."""
    root = _write(
        tmp_path,
        {
            "CLAUDE.md": """
                # RMSNorm (Triton)

                kernel: kernels/rmsnorm.py  baseline: torch eager rmsnorm
            """,
            "kernels/rmsnorm.py": _RMSNORM,
            "experiments/summary.md": """
                | Exp | Description | Latency | Unit | Correct | Status |
                |---|---|---|---|---|---|
                | 1 | torch eager baseline | 1150 | us | PASS | BASELINE |
                | 2 | fused Triton rmsnorm | 820 | us | PASS | KEPT |
            """,
        },
    )
    log = read_log(root)
    assert log.kernel_path is not None and log.kernel_path.text == "kernels/rmsnorm.py"
    assert log.baseline_path is None
    assert diagnose(root).summary.kernel == "kernels/rmsnorm.py"


def test_kernel_words_after_a_baseline_path_still_name_the_kernel(tmp_path: Path) -> None:
    """Two paths on one line, each after its own label: each takes its label."""
    root = _write(
        tmp_path,
        {
            "CLAUDE.md": "Baseline: kernels/ref.py, kernel: kernels/fast.py\n",
            "kernels/ref.py": "x = 1\n",
            "kernels/fast.py": "x = 2\n",
        },
    )
    log = read_log(root)
    assert log.baseline_path is not None and log.baseline_path.text == "kernels/ref.py"
    assert log.kernel_path is not None and log.kernel_path.text == "kernels/fast.py"


def test_a_do_bench_timing_is_profiling_data(tmp_path: Path) -> None:
    """ "Median: 70.7 us (do_bench)." is a CUDA-event timing: the log was not optimized
    blind, so item 4 does not ask to instrument first."""
    rows = "".join(f"| {n} | change {n} | {100 - n} | us | PASS | KEPT |\n" for n in range(2, 8))
    root = _write(
        tmp_path,
        {
            "experiments/summary.md": "| Exp | Description | Latency | Unit | Correct | Status |\n"
            "|---|---|---|---|---|---|\n| 1 | baseline | 100 | us | PASS | BASELINE |\n" + rows,
            "experiments/exp_7/result.md": """
                # exp 7: change 7
                Median: 93 us (do_bench).
            """,
        },
    )
    diagnosis = diagnose(root)
    assert not _sentence(diagnosis, Pathology.WRONG_BOTTLENECK).startswith("No profiling data")


_ATTENTION = """
    import triton
    import triton.language as tl


    @triton.jit
    def attn_fwd(
        Q, K, V, O, L, sm_scale, S,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr,
    ):
        start_m = tl.program_id(0)
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, D)
        q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
        m_i = tl.zeros((BLOCK_M,), dtype=tl.float32) - 1.0e30
        l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
        acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
        for start_n in range(0, S, BLOCK_N):
            k = tl.load(K + (start_n + offs_n)[None, :] * D + offs_d[:, None])
            s = tl.dot(q, k) * sm_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(V + (start_n + offs_n)[:, None] * D + offs_d[None, :])
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
            m_i = m_new
        tl.store(L + offs_m, m_i + tl.log(l_i))
        o = (acc / l_i[:, None]).to(tl.float16)
        tl.store(O + offs_m[:, None] * D + offs_d[None, :], o)
"""


def test_a_wall_is_checked_in_the_failing_snapshots(tmp_path: Path) -> None:
    """The failing attempts left their kernels in exp_N/, and the kernel CLAUDE.md names
    was reverted to the passing one: the suspects are looked for where the numbers went
    wrong (exp2 against a natural-log LSE, an fp16 accumulator), not in the reverted file."""
    failing = _ATTENTION.replace(
        "p = tl.exp(s - m_new[:, None])", "p = tl.exp2(s * 1.44269504 - m_new[:, None])"
    ).replace(
        "acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)",
        "acc = tl.zeros((BLOCK_M, D), dtype=tl.float16)",
    )
    files = {
        "CLAUDE.md": "Kernel: kernels/attn_fwd.py\n",
        "kernels/attn_fwd.py": _ATTENTION,
        "experiments/summary.md": """
            | Exp | Description | Latency | Unit | Correct | Status |
            |---|---|---|---|---|---|
            | 1 | SDPA baseline | 1.21 | ms | PASS | BASELINE |
            | 2 | Triton flash-attn fwd | 1.35 | ms | PASS | KEPT |
            | 3 | exp2 with folded log2(e) scale | 0.905 | ms | FAIL | FAILED |
            | 4 | exp2 + fp16 accumulator | 0.84 | ms | FAIL | FAILED |
            | 5 | exp2, fp16 acc, BLOCK_N=128 | 0.82 | ms | FAIL | FAILED |
        """,
        "experiments/exp_2/attn_fwd.py": _ATTENTION,
    }
    files.update({f"experiments/exp_{n}/attn_fwd.py": failing for n in (3, 4, 5)})
    diagnosis = diagnose(_write(tmp_path, files))
    finding = diagnosis.finding(Pathology.CORRECTNESS_WALL)
    assert finding is not None
    assert finding.experiments == (3, 4, 5)
    assert "LSE base" in finding.summary
    assert "an fp16 accumulator (experiments/exp_5/attn_fwd.py:17)" in finding.summary
    quoted = {e.source.rsplit(":", 1)[0] for e in finding.evidence if ".py:" in e.source}
    assert quoted == {"experiments/exp_5/attn_fwd.py"}


def test_no_attention_remedy_for_a_memory_bound_normalization_kernel(tmp_path: Path) -> None:
    """DRAM busy and tensor cores idle also trigger online softmax, an attention and
    softmax technique: an RMSNorm is not told to add it."""
    rows = "".join(
        f"| {n} | use tl.dot MMA tiles, variant {n} | {830 + n} | us | PASS | REVERTED |\n"
        for n in range(3, 8)
    )
    root = _write(
        tmp_path,
        {
            "CLAUDE.md": "# RMSNorm forward (Triton)\n\nKernel: `kernels/rmsnorm.py`\n",
            "kernels/rmsnorm.py": _RMSNORM,
            "experiments/summary.md": "| Exp | Description | Latency | Unit | Correct | Status |\n"
            "|---|---|---|---|---|---|\n"
            "| 1 | torch eager baseline | 1150 | us | PASS | BASELINE |\n"
            "| 2 | fused Triton rmsnorm | 820 | us | PASS | KEPT |\n" + rows,
            "experiments/profile.md": """
                ## Profile: rmsnorm exp 2

                | Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
                |---|---|---|---|---|---|---|
                | rmsnorm_kernel | 820 us | 0 | 91.5 | 48 | Memory-bound | 4.38 TB/s |

                ### Bottleneck: Memory-bound
            """,
        },
    )
    diagnosis = diagnose(root)
    assert diagnosis.summary.family == "normalization"
    finding = diagnosis.finding(Pathology.WRONG_BOTTLENECK)
    assert finding is not None
    ids = {a.catalog_id for a in finding.actions}
    assert "online-softmax" not in ids
    assert "kernel-fusion" in ids


_GEMM = """
    import triton
    import triton.language as tl


    @triton.jit
    def matmul_kernel(
        A, B, C, M, N, K,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    ):
        rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
            acc += tl.dot(a, tl.load(B + (k + rk)[:, None] * N + rn[None, :]))
        tl.store(C + rm[:, None] * N + rn[None, :], acc.to(tl.float16))
"""


def test_an_autotune_space_grown_from_none_starts_at_zero(tmp_path: Path) -> None:
    """The sentence and the evidence agree on the kernel that searched nothing: "autotune
    configs 0 → 1296" beside "0 configs" (it said 1 → 1296)."""
    tuned = "import itertools\n" + textwrap.dedent(_GEMM).replace(
        "@triton.jit",
        "@triton.autotune(configs=[triton.Config({'BLOCK_M': m, 'BLOCK_N': n, 'BLOCK_K': k}, "
        "num_warps=w, num_stages=s) for m, n, k, w, s in itertools.product("
        "[64, 128, 256], [64, 128, 256], [32, 64, 128], [2, 4, 8, 16], "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])], "
        "key=['M', 'N', 'K'])\n@triton.jit",
    )
    rows = "".join(f"| {n} | variant {n} | {231 - n} | us | PASS | KEPT |\n" for n in range(3, 8))
    files = {
        "experiments/summary.md": "| Exp | Description | Latency | Unit | Correct | Status |\n"
        "|---|---|---|---|---|---|\n| 1 | torch.matmul | 198 | us | PASS | BASELINE |\n"
        "| 2 | Triton GEMM | 262 | us | PASS | KEPT |\n" + rows,
        "experiments/exp_2/matmul.py": _GEMM,
        "experiments/exp_6/matmul.py": tuned,
    }
    diagnosis = diagnose(_write(tmp_path, files))
    finding = diagnosis.finding(Pathology.OVER_ENGINEERING)
    assert finding is not None
    assert "autotune configs 0 → 1296" in finding.summary
    assert any(e.quote.endswith("0 configs") for e in finding.evidence)
