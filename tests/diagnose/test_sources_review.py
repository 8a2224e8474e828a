"""Kernel sources as diagnose reads them: the family from paths and headings, per-call
allocations beside out= parameters, low-precision accumulators, one snapshot set per
experiment, and kernels measured only where the over-engineering check needs them."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from kernelopt.diagnose import Pathology, diagnose
from kernelopt.diagnose.context import build_context
from kernelopt.diagnose.detectors import over_engineering
from kernelopt.diagnose.family import infer_family
from kernelopt.diagnose.model import Diagnosis
from kernelopt.diagnose.params import OverEngineeringParams
from kernelopt.diagnose.source import (
    Complexity,
    allocations,
    complexity,
    persistent_buffers,
    precision_suspects,
)
from kernelopt.experiments import KernelSource, read_log

REPO = Path(__file__).resolve().parents[2]
PLATEAU = REPO / "examples" / "logs" / "mla-decode-plateau"
HEADER = [
    "| Exp | Description | Latency | Unit | Correct | Status |",
    "|---|---|---|---|---|---|",
]


def _write(root: Path, rows: Sequence[str], files: Mapping[str, str]) -> Path:
    """A log under ``root``: experiments/summary.md of ``rows``, and ``files`` by path."""
    (root / "experiments").mkdir(parents=True)
    summary = ["# Experiments Summary", "", *HEADER, *rows]
    (root / "experiments" / "summary.md").write_text("\n".join(summary) + "\n", "utf-8")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return root


def _check_sentence(diagnosis: Diagnosis, pathology: Pathology) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is pathology)


# --- the kernel family --------------------------------------------------------------------

SOFTMAX_TITLES = [
    f"| {n} | fuse softmax rescale v{n} | 89 | us | PASS | REVERTED |" for n in (3, 4, 5)
]
START = [
    "| 1 | baseline | 100 | us | PASS | BASELINE |",
    "| 2 | first triton kernel | 90 | us | PASS | KEPT |",
]


def test_a_heading_of_claude_md_wins_a_tie_with_experiment_titles(tmp_path: Path) -> None:
    # Three titles name softmax (3 x 1), the heading names MLA decode (3): a tie, which
    # the effort's own heading wins, not the alphabet.
    claude = "# MLA decode\n\n- Kernel under optimization: `kernels/kernel.py`\n"
    root = _write(
        tmp_path / "log",
        [*START, *SOFTMAX_TITLES],
        {"CLAUDE.md": claude, "kernels/kernel.py": "x = 1\n"},
    )
    guess = infer_family(read_log(root))
    assert (guess.family, guess.score) == ("mla-decode", 3.0)
    assert str(guess.facts[0].source) == "CLAUDE.md:1"


def test_snake_case_kernel_paths_name_the_family(tmp_path: Path) -> None:
    claude = "# Project\n\n- Kernel under optimization: `kernels/mla_decode.py`\n"
    root = _write(
        tmp_path / "log",
        [*START, *SOFTMAX_TITLES],
        {"CLAUDE.md": claude, "kernels/mla_decode.py": "x = 1\n"},
    )
    guess = infer_family(read_log(root))
    # The named kernel and the path CLAUDE.md gives, 3 each; softmax has three titles.
    assert (guess.family, guess.score) == ("mla-decode", 6.0)
    # Components split on "_", "-" and "." as well as "/".
    named = _write(
        tmp_path / "norm",
        [*START],
        {"CLAUDE.md": "# Project\n\nKernel: `kernels/fused-rms_norm.v2.py`\n"},
    )
    assert infer_family(read_log(named)).family == "normalization"


# --- allocations beside out= parameters ---------------------------------------------------

HEAD = """import torch, triton
import triton.language as tl


@triton.jit
def _k(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)


"""
UNUSED_OUT = """def run(x, out=None):
    res = torch.empty_like(x)
    _k[(triton.cdiv(x.numel(), 1024),)](x, res, x.numel(), BLOCK=1024)
    return res
"""
UNUSED_WORKSPACE = """def run(x, workspace=None):
    out = torch.empty_like(x)
    _k[(1,)](x, out, x.numel(), BLOCK=1024)
    return out
"""
OVERWRITTEN_OUT = """def run(x, out=None):
    out = torch.empty_like(x)
    _k[(1,)](x, out, x.numel(), BLOCK=1024)
    return out
"""
SCRATCH_BESIDE_OUT = """def run(x, out):
    tmp = torch.empty(64, device=x.device)
    _k[(1,)](x, out, x.numel(), BLOCK=1024)
    _k[(1,)](out, tmp, 64, BLOCK=64)
    return out
"""
FALLBACK = """def run(x, out=None):
    if out is None:
        out = torch.empty_like(x)
    _k[(1,)](x, out, x.numel(), BLOCK=1024)
    return out
"""
CONDITIONAL_FALLBACK = """def run(x, out=None):
    out = torch.empty_like(x) if out is None else out
    _k[(1,)](x, out, x.numel(), BLOCK=1024)
    return out
"""


def _kernel(launcher: str) -> KernelSource:
    return KernelSource(path="kernels/k.py", text=HEAD + launcher, language="python")


@pytest.mark.parametrize(
    ("launcher", "allocated", "kept"),
    [
        (UNUSED_OUT, [("torch.empty_like", 12)], None),
        (UNUSED_WORKSPACE, [("torch.empty_like", 12)], None),
        (OVERWRITTEN_OUT, [("torch.empty_like", 12)], None),
        (SCRATCH_BESIDE_OUT, [("torch.empty", 12)], (11, "run() takes out=")),
        (FALLBACK, [], (11, "run() takes out=")),
        (CONDITIONAL_FALLBACK, [], (11, "run() takes out=")),
    ],
    ids=["unused-out", "unused-workspace", "overwritten-out", "scratch", "if", "if-else"],
)
def test_an_out_parameter_hides_no_allocation(
    launcher: str, allocated: list[tuple[str, int]], kept: tuple[int, str] | None
) -> None:
    source = _kernel(launcher)
    assert [(a.call, a.line) for a in allocations([source])] == allocated
    found = persistent_buffers([source])
    assert (found[1:] if found is not None else None) == kept


def test_buffer_persistence_reads_past_an_unused_out(tmp_path: Path) -> None:
    claude = "# Elementwise scale kernel\n\n- Kernel under optimization: `kernels/k.py`\n"
    rows = START

    def diagnosed(name: str, launcher: str) -> Diagnosis:
        files = {"CLAUDE.md": claude, "kernels/k.py": HEAD + launcher}
        return diagnose(_write(tmp_path / name, rows, files))

    unused = diagnosed("unused", UNUSED_OUT).finding(Pathology.BUFFER_PERSISTENCE)
    assert unused is not None
    assert unused.summary.startswith(
        "The host launcher allocates 1 buffer on every call (torch.empty_like in run), with "
        "no persistent buffers or out= plumbing"
    )
    beside = diagnosed("beside", SCRATCH_BESIDE_OUT).finding(Pathology.BUFFER_PERSISTENCE)
    assert beside is not None
    assert "beside the buffers it keeps or takes (kernels/k.py:11: run() takes out=)" in (
        beside.summary
    )
    fallback = diagnosed("fallback", FALLBACK)
    assert fallback.finding(Pathology.BUFFER_PERSISTENCE) is None
    assert "run() takes out=" in _check_sentence(fallback, Pathology.BUFFER_PERSISTENCE)


# --- low-precision accumulators -----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)", True),
        ("acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.bfloat16)", True),
        ("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float16)", True),
        ("acc_o = torch.zeros((m, n), device=x.device, dtype=torch.float16)", True),
        ("acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)", False),
        # The tuple's closing parenthesis is not the call's: a later fp16 is another call's.
        ("acc = tl.zeros((BLOCK_M, BLOCK_N)) + x.to(dtype=tl.float16)", False),
    ],
)
def test_a_low_precision_accumulator_with_a_tuple_shape(line: str, found: bool) -> None:
    source = KernelSource(path="k.py", text=f"def k():\n    {line}\n", language="python")
    suspect = next(s for s in precision_suspects([source]) if s.name == "bf16 accumulation")
    assert suspect.found is found
    if found:
        assert (suspect.line, suspect.text) == (2, line)


# --- one snapshot set per experiment ------------------------------------------------------


def test_a_backup_folder_of_an_experiment_is_not_counted_twice(tmp_path: Path) -> None:
    root = tmp_path / "log"
    shutil.copytree(PLATEAU, root)
    before = diagnose(root)
    assert before.finding(Pathology.OVER_ENGINEERING) is None
    one = over_engineering.total_complexity(build_context(read_log(root), None, family=None), 5)
    shutil.copytree(root / "experiments" / "exp_5", root / "experiments" / "exp_005")
    after = diagnose(root)
    assert any("exp_005/ and experiments/exp_5/" in w for w in after.warnings)
    assert after.finding(Pathology.OVER_ENGINEERING) is None
    ctx = build_context(read_log(root), None, family=None)
    assert over_engineering.total_complexity(ctx, 5) == one
    # The copy counted is the folder the reader reads first (exp_005/, as it warns).
    paths = [s.path for s in over_engineering._snapshots(ctx, 5)]
    assert paths and all(p.startswith("experiments/exp_005/") for p in paths)
    sentence = _check_sentence(after, Pathology.OVER_ENGINEERING)
    # Exp 6 left a snapshot too, of a change not kept: the sentence says so.
    assert (
        f"latest kept snapshot (exp 5; exp 6 was reverted, so its snapshot is not the current "
        f"kernel): {one.lines} "
        "code lines"
    ) in sentence


# --- measuring only what the check needs --------------------------------------------------


def _stalled_log(root: Path, count: int, *, same: bool) -> Path:
    """``count`` attempts after the baseline, all within 1% of each other, each leaving a
    kernel snapshot: the same text when ``same``, else one line longer each time."""
    rows = ["| 1 | baseline | 100 | us | PASS | BASELINE |"]
    files = {"CLAUDE.md": "# Elementwise scale kernel\n"}
    for number in range(2, count + 2):
        rows.append(
            f"| {number} | variant {number} | {60 - number * 0.01:.2f} | us | PASS | KEPT |"
        )
        extra = "" if same else f"EXTRA_{number} = {number}\n"
        files[f"experiments/exp_{number}/k.py"] = HEAD + FALLBACK + extra
    return _write(root, rows, files)


def _measured(ctx_root: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the over-engineering check measures on the log at ``ctx_root``."""
    texts: list[str] = []

    def counting(source: KernelSource) -> Complexity:
        texts.append(source.text)
        return complexity(source)

    monkeypatch.setattr(over_engineering, "complexity", counting)
    ctx = build_context(read_log(ctx_root), None, family=None)
    outcome = over_engineering.detect(ctx, OverEngineeringParams())
    assert outcome.finding is None
    return texts


def test_only_the_kernels_the_check_compares_are_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Thirty different snapshots: the stall's first and last kept kernels are compared.
    texts = _measured(_stalled_log(tmp_path / "different", 30, same=False), monkeypatch)
    assert len(texts) == 2
    # Thirty identical snapshots are one text, measured once.
    texts = _measured(_stalled_log(tmp_path / "same", 30, same=True), monkeypatch)
    assert len(texts) == 1


def test_an_autotune_space_is_still_sized_in_every_stalled_snapshot(tmp_path: Path) -> None:
    root = _stalled_log(tmp_path / "log", 6, same=False)
    configs = "\n".join(
        [
            "configs = [triton.Config({'BLOCK': b}, num_warps=w)",
            "           for b in range(16) for w in range(16) for s in range(8)]",
            "",
            "@triton.autotune(configs=configs, key=['n'])",
            "@triton.jit",
            "def _tuned(x_ptr, n, BLOCK: tl.constexpr):",
            "    pass",
            "",
        ]
    )
    snapshot = root / "experiments" / "exp_5" / "k.py"
    snapshot.write_text(snapshot.read_text("utf-8") + configs, "utf-8")
    found = diagnose(root).finding(Pathology.OVER_ENGINEERING)
    assert found is not None and "exp 5 searches 2,048 autotune configurations" in found.summary
