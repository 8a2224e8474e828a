"""Items 4, 8 and 9 on two kernels timed on a CPU (the Triton interpreter): a LayerNorm
backward whose scratch is a parameter's default, and a causal attention prefill kept beside
its float64 reference.

- Item 8 counts scratch allocated when a parameter is left out (``if partials is None: pg =
  torch.empty(...)``, not returned) on every such call, names that parameter and its lines,
  and still does not count an output's default (``if out is None: out = ...``, returned).
- Item 8 takes the function that launches a kernel for the launcher, not a float64
  reference beside it.
- Item 9 takes a loop bounded by each sequence's length as handling padding, and asks for
  one where the loop runs to the padded size; merges one size-1 value under two axis names
  into one plan item; says what a size-1 axis of the launch grid costs; and cuts no reason
  mid-sentence.
- Item 4 says that the roofline floors in results are of host-clock rows, not that none
  was found.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from kernelopt import cli
from kernelopt.diagnose import Check, Diagnosis, Finding, diagnose
from kernelopt.diagnose.model import Pathology
from kernelopt.diagnose.source import allocations, grid_sizes, length_bounded_loop
from kernelopt.experiments import KernelSource

SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | baseline | 20.0 | us | PASS | BASELINE |
| 2 | wider tiles | 15.0 | us | PASS | KEPT |
| 3 | two stages | 14.8 | us | PASS | KEPT |
"""

LN_BWD = """import torch
import triton
import triton.language as tl


@triton.jit
def _ln_bwd_dx(DX, DY, PG, PB, M, N, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    dy = tl.load(DY + pid * N + cols, mask=cols < N, other=0.0)
    tl.store(DX + pid * N + cols, dy, mask=cols < N)
    tl.store(PG + pid * N + cols, dy, mask=cols < N)
    tl.store(PB + pid * N + cols, dy, mask=cols < N)


def ln_bwd(dy, x, w, *, partials=None, out=None):
    M, N = x.shape
    if partials is None:
        pg = torch.empty(M, N, dtype=torch.float32, device=x.device)
        pb = torch.empty(M, N, dtype=torch.float32, device=x.device)
    else:
        pg, pb = partials
    if out is None:
        dx = torch.empty_like(x); dg = torch.empty_like(w); db = torch.empty_like(w)
    else:
        dx, dg, db = out
    _ln_bwd_dx[(M,)](dx, dy, pg, pb, M, N, BLOCK_N=triton.next_power_of_2(N))
    return dx, dg, db
"""

OUT_ONLY = """import torch
import triton
import triton.language as tl


@triton.jit
def _copy(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N), mask=offs < N)


def copy(x, out=None):
    if out is None:
        out = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out
"""


def _attention(loop_bound: str) -> str:
    """An attention prefill launcher with a float64 reference beside it; the kernel's key
    loop runs to ``loop_bound`` (``hi``: each sequence's length; ``SK``: the padded size)."""
    return f'''import math
import torch
import triton
import triton.language as tl


@triton.jit
def _attn_fwd(Q, K, V, O, LK, SK, H: tl.constexpr, D: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    lk = tl.load(LK + b)
    hi = tl.minimum(lk, (pid_m + 1) * BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for start_n in range(0, {loop_bound}, BLOCK_N):
        cols = start_n + offs_n
        acc += tl.sum(tl.load(K + bh * SK + cols, mask=cols < lk, other=0.0))
    tl.store(O + bh * D + tl.arange(0, D), tl.sum(acc, 0))


def attn_prefill(q, k, v, seqlens_k=None, *, out=None, BLOCK_M=16, BLOCK_N=16):
    B, H, Sq, D = q.shape
    Sk = k.shape[2]
    if seqlens_k is None:
        seqlens_k = torch.full((B,), Sk, dtype=torch.int32, device=q.device)
    if out is None:
        out = torch.zeros_like(q)
    grid = (triton.cdiv(Sq, BLOCK_M), B * H)
    _attn_fwd[grid](q, k, v, out, seqlens_k, Sk, H=H, D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def attn_ref(q, k, v):
    """float64 reference."""
    B, H, Sq, D = q.shape
    out = torch.zeros(q.shape, dtype=torch.float64)
    for b in range(B):
        s = q[b].double() @ k[b].double().transpose(-1, -2) / math.sqrt(D)
        out[b] = torch.softmax(s, -1) @ v[b].double()
    return out
'''


def _source(text: str, path: str = "kernels/attn.py") -> KernelSource:
    return KernelSource(path=path, text=text, language="python")


def _sdpa(shape: Sequence[int], kv_shape: Sequence[int], kv_mean: float | None) -> str:
    """One sdpa call record of a trace: q of ``shape``, k and v of ``kv_shape``, and the
    real key lengths' mean where ``kv_mean`` is given (padded varlen)."""
    args: dict[str, object] = {
        "q": {"shape": list(shape), "dtype": "float16"},
        "k": {"shape": list(kv_shape), "dtype": "float16"},
        "v": {"shape": list(kv_shape), "dtype": "float16"},
    }
    if kv_mean is not None:
        args["kv_lens"] = {
            "shape": [shape[0]],
            "dtype": "int32",
            "values": {"min": 1.0, "max": float(kv_shape[2]), "mean": kv_mean, "std": 9.0},
        }
    return json.dumps({"op": "sdpa", "args": args, "duration_us": 100.0})


def _attention_log(root: Path, kernel: str, record: str) -> Path:
    """A log of three attention experiments, its kernel, and the profile the inspector
    wrote from six calls of ``record``."""
    (root / "experiments").mkdir(parents=True)
    (root / "kernels").mkdir()
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    (root / "CLAUDE.md").write_text("# attention\n\nKernel: kernels/attn.py\n", encoding="utf-8")
    (root / "kernels" / "attn.py").write_text(kernel, encoding="utf-8")
    trace = root / "experiments" / "calls.jsonl"
    trace.write_text((record + "\n") * 6, encoding="utf-8")
    profile = root / "experiments" / "workload_profile.md"
    assert cli.main(["inspect", str(trace), "--write", str(profile)]) == 1
    return root


def _check(diagnosis: Diagnosis, pathology: Pathology) -> Check:
    return next(c for c in diagnosis.checks if c.pathology is pathology)


def _finding(diagnosis: Diagnosis, pathology: Pathology) -> Finding:
    return next(f for f in diagnosis.findings if f.pathology is pathology)


# --- item 8: a parameter's default scratch ------------------------------------------


def test_scratch_a_left_out_parameter_defaults_to_is_allocated_per_call() -> None:
    found = allocations([_source(LN_BWD, "ln_bwd.py")])
    assert [(a.line, a.default_of, a.function) for a in found] == [
        (19, "partials", "ln_bwd"),
        (20, "partials", "ln_bwd"),
    ]


def test_an_output_default_the_function_returns_is_not_counted() -> None:
    assert allocations([_source(OUT_ONLY, "copy.py")]) == []


def test_a_conditional_expression_default_reads_alike() -> None:
    text = OUT_ONLY.replace(
        "def copy(x, out=None):\n",
        "def copy(x, out=None, workspace=None):\n"
        "    ws = torch.empty(64, device=x.device) if workspace is None else workspace\n"
        "    result = torch.empty_like(x) if out is None else out\n",
    )
    found = allocations([_source(text, "copy.py")])
    assert [(a.line, a.default_of) for a in found] == [(13, "workspace")]


def test_item_8_names_the_scratch_default_not_out(tmp_path: Path) -> None:
    root = tmp_path / "log"
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    (root / "CLAUDE.md").write_text("# ln\n\nKernel: ln_bwd.py\n", encoding="utf-8")
    (root / "ln_bwd.py").write_text(LN_BWD, encoding="utf-8")
    diagnosis = diagnose(root)
    check = _check(diagnosis, Pathology.BUFFER_PERSISTENCE)
    assert check.checked
    assert "allocates 2 buffers on every call (torch.empty in ln_bwd" in check.sentence
    assert "ln_bwd.py:19, 20 allocate the default of partials= on every call" in check.sentence
    action = _finding(diagnosis, Pathology.BUFFER_PERSISTENCE).actions[0].text
    assert action.startswith("Pass partials= from every caller")


# --- item 8: a float64 reference beside the launcher -----------------------------------


def test_a_float64_reference_is_not_the_launcher() -> None:
    found = allocations([_source(_attention("hi"))])
    assert {a.function for a in found} == {"attn_prefill"}
    assert [(a.call, a.default_of) for a in found] == [("torch.full", "seqlens_k")]


def test_item_8_flags_the_launcher_not_the_reference(tmp_path: Path) -> None:
    root = _attention_log(
        tmp_path / "log", _attention("hi"), _sdpa([2, 2, 17, 64], [2, 2, 17, 64], None)
    )
    sentence = _check(diagnose(root), Pathology.BUFFER_PERSISTENCE).sentence
    assert "torch.full in attn_prefill" in sentence
    assert "attn_ref" not in sentence


# --- item 9: padding, one size-1 value under two names, grid axes, whole reasons ---------


def test_a_loop_bounded_by_a_loaded_length_is_found() -> None:
    bounded = length_bounded_loop([_source(_attention("hi"))])
    assert bounded is not None and bounded[2] == "for start_n in range(0, hi, BLOCK_N):"
    assert length_bounded_loop([_source(_attention("SK"))]) is None


def test_the_grid_of_the_launcher_spans_its_head_and_batch_sizes() -> None:
    sizes = grid_sizes([_source(_attention("hi"))])
    assert {"q.shape[0]", "q.shape[1]", "q.shape[2]"} <= set(sizes)
    assert sizes["q.shape[1]"][2] == "grid = (triton.cdiv(Sq, BLOCK_M), B * H)"


def test_padding_is_handled_by_a_loop_to_each_sequence_length(tmp_path: Path) -> None:
    record = _sdpa([3, 2, 24, 64], [3, 2, 24, 64], 10.0)
    diagnosis = diagnose(_attention_log(tmp_path / "log", _attention("hi"), record))
    actions = [a.text for f in diagnosis.findings for a in f.actions]
    assert not any("kv_lens.mean()" in text for text in actions)


def test_padding_asks_for_a_loop_to_each_sequence_length(tmp_path: Path) -> None:
    record = _sdpa([3, 2, 24, 64], [3, 2, 24, 64], 10.0)
    diagnosis = diagnose(_attention_log(tmp_path / "log", _attention("SK"), record))
    actions = [a.text for a in _finding(diagnosis, Pathology.OVERLOOKED_SHORTCUT).actions]
    padding = [text for text in actions if "padding" in text]
    assert padding and padding[0].startswith("Loop over s_kv only to each sequence's real length")
    assert not any(text.startswith("Add a special path for `kv_lens") for text in actions)


def test_one_size_1_value_under_two_names_is_one_grid_item(tmp_path: Path) -> None:
    record = _sdpa([2, 1, 17, 64], [2, 1, 17, 64], None)
    diagnosis = diagnose(_attention_log(tmp_path / "log", _attention("hi"), record))
    finding = _finding(diagnosis, Pathology.OVERLOOKED_SHORTCUT)
    heads = [a.text for a in finding.actions if "h_q" in a.text and "only shape" not in a.text]
    assert len(heads) == 1
    assert "h_kv = h_q = 1" in heads[0]
    assert heads[0].startswith("Spread the launch grid over another axis")
    assert "fewer programs" in heads[0] and "no loop over it" not in heads[0]
    assert "fewer programs" in finding.summary


def test_a_long_reason_is_not_cut_mid_sentence(tmp_path: Path) -> None:
    record = _sdpa([2, 2, 1, 64], [2, 2, 1, 64], None)
    diagnosis = diagnose(_attention_log(tmp_path / "log", _attention("hi"), record))
    finding = _finding(diagnosis, Pathology.OVERLOOKED_SHORTCUT)
    one_key = next(a.text for a in finding.actions if "one key" in a.text)
    assert "causal" in one_key and "…" not in one_key
    sentence = _check(diagnosis, Pathology.OVERLOOKED_SHORTCUT).sentence
    assert "…" not in sentence
    assert "skip QK^T, the softmax and the KV loop" in sentence


# --- item 4: floors of host-clock rows -----------------------------------------------

# One host-clock row (Mode cpu) with a floor, its share and the ceiling that sets it.
ROW = "| hidden=512 rows=64 | v{n} | {median} | {median} | {median} | us | 20.0192 | {share} | 1.0"

RESULT = (
    """# Experiment {n}: {title}

- Status: {status}
- Correctness: PASS
- Date: 2026-01-02
- Kernel: ln_bwd.py
- GPU: cpu

## Measurements
| Point | Impl | Median | P20 | P80 | Unit | Floor | Of floor | Speedup | Mode | Bound |
|---|---|---|---|---|---|---|---|---|---|---|
"""
    + ROW
    + " | cpu | memory |\n"
)


def test_item_4_says_the_floors_are_of_the_host_clock(tmp_path: Path) -> None:
    root = tmp_path / "log"
    rows = [(1, "baseline", "BASELINE", 900.0), (2, "group rows", "KEPT", 600.0)]
    summary = [
        "# Experiments Summary",
        "",
        "| Exp | Description | Latency | Unit | Correct | Status |",
    ]
    summary.append("|---|---|---|---|---|---|")
    for number, title, status, median in rows:
        folder = root / "experiments" / f"exp_{number}"
        folder.mkdir(parents=True)
        share = f"{100 * 20.0192 / median:.4f}%"
        (folder / "result.md").write_text(
            RESULT.format(n=number, title=title, status=status, median=median, share=share),
            encoding="utf-8",
        )
        summary.append(f"| {number} | {title} | {median} | us | PASS | {status} |")
    (root / "experiments" / "summary.md").write_text("\n".join(summary) + "\n", encoding="utf-8")
    finding = _finding(diagnose(root), Pathology.WRONG_BOTTLENECK)
    evidence = finding.evidence[0]
    assert "roofline floors found in 2 results (Floor, Of floor and Bound)" in evidence.quote
    assert "host clock" in evidence.quote
    assert "no profiler output, metric, roofline floor" not in evidence.quote
    assert evidence.source == "experiments/exp_1/result.md:9"
    assert "floors in 2 results are of host-clock rows" in finding.summary
