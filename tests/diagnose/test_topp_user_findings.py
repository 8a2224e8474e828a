"""Items 5, 8 and the family a log is read as, on a fused top-p sampling kernel.

The kernel rescales a running max and sum under names of its own (``nm = tl.maximum(m,
bm)``, ``s = s * tl.exp(m - nm) + ...``): that is online softmax, whatever the names. The
file keeps a test-input builder beside the launcher (``make_inputs`` with ``torch.full``),
which no launch runs: it allocates when the user builds inputs, not on every call. A
family named only by a word of CLAUDE.md is less sure than one the kernel's name gives.
"""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Diagnosis, Pathology, diagnose
from kernelopt.diagnose.presence import CODE_PATTERNS
from kernelopt.diagnose.source import allocations, off_launch_path, parse_python
from kernelopt.experiments import KernelSource

P = Pathology

# One program per row; the row is read in tiles, its max and sum kept online.
TOPP = '''"""Fused temperature softmax + top-p sampling."""
import torch
import triton
import triton.language as tl


@triton.jit
def _top_p_kernel(X, P, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = -float("inf")
    s = 0.0
    for start in range(0, V, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + row * V + offs, mask=offs < V, other=-float("inf"))
        bm = tl.max(x, 0)
        nm = tl.maximum(m, bm)
        s = s * tl.exp(m - nm) + tl.sum(tl.exp(x - nm), 0)
        m = nm
    for start in range(0, V, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + row * V + offs, mask=offs < V, other=-float("inf"))
        tl.store(P + row * V + offs, tl.exp(x - m) / s, mask=offs < V)


def top_p_sample(logits, *, probs=None):
    b, v = logits.shape
    if probs is None:
        probs = torch.empty(b, v, device=logits.device)
    _top_p_kernel[(b,)](logits, probs, v, BLOCK=1024)
    return probs


def make_inputs(b, v, temp=0.8, top_p=0.9):
    logits = torch.randn(b, v)
    temperature = torch.full((b,), temp)
    tp = torch.full((b,), top_p)
    return logits, temperature, tp
'''
# A kernel that reads its row in tiles twice and keeps no running max: no online softmax.
TWO_PASS = """import torch
import triton
import triton.language as tl


@triton.jit
def _row_kernel(X, Y, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = -float("inf")
    for start in range(0, V, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + row * V + offs, mask=offs < V, other=-float("inf"))
        m = tl.maximum(m, tl.max(x, 0))
    s = 0.0
    for start in range(0, V, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + row * V + offs, mask=offs < V, other=-float("inf"))
        s += tl.sum(tl.exp(x - m), 0)
    for start in range(0, V, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + row * V + offs, mask=offs < V, other=-float("inf"))
        tl.store(Y + row * V + offs, tl.exp(x - m) / s, mask=offs < V)


def run(x, out):
    _row_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=1024)
    return out
"""
SUMMARY = (
    "# Experiments Summary\n\n"
    "| Exp | Description | Latency | Unit | Correct | Status |\n"
    "|---|---|---|---|---|---|\n"
    "| 1 | eager baseline | 100.0 | us | PASS | BASELINE |\n"
    "| 2 | first fused version | 60.0 | us | PASS | KEPT |\n"
    "| 3 | wider tiles | 59.5 | us | PASS | KEPT |\n"
)
PROFILE = """## Profile: topp v3 | b=64, vocab=152064
### Bottleneck: Memory-bound
Root cause: the row is read twice.
"""


def _log(root: Path, kernel: str, name: str, claude: str) -> Path:
    (root / "experiments").mkdir(parents=True)
    (root / "kernels").mkdir()
    (root / "CLAUDE.md").write_text(claude.format(name=name), encoding="utf-8")
    (root / "kernels" / name).write_text(kernel, encoding="utf-8")
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    (root / "experiments" / "profile.md").write_text(PROFILE, encoding="utf-8")
    return root


_PROSE = (
    "# CLAUDE.md - fused top-p sampling kernel (Triton)\n\n"
    "- Kernel under optimization: `kernels/{name}` (fused temperature softmax + top-p "
    "filter + inverse-CDF sample)\n"
)


def _sentence(diagnosis: Diagnosis, pathology: Pathology) -> str:
    return next(c.sentence for c in diagnosis.checks if c.pathology is pathology)


def test_a_running_max_rescale_under_other_names_is_online_softmax(tmp_path: Path) -> None:
    diagnosis = diagnose(_log(tmp_path / "log", TOPP, "topp.py", _PROSE))
    assert diagnosis.finding(P.MISSING_FUNDAMENTAL) is None
    assert "(online-softmax)" in _sentence(diagnosis, P.MISSING_FUNDAMENTAL)


def test_the_rescale_pattern_wants_the_exp_of_a_difference_after_a_maximum() -> None:
    import re

    pattern = re.compile(CODE_PATTERNS["online-softmax"])
    assert pattern.search("nm = tl.maximum(m, bm)\nacc = acc * tl.exp2((m - nm) * scale)")
    assert pattern.search("new = tl.maximum(old, t)\nl = l * tl.math.exp(old - new) + r")
    # A max over tiles and a later exp of the row minus it rescales nothing.
    assert pattern.search(TWO_PASS) is None


def test_a_test_input_builder_allocates_on_no_launch(tmp_path: Path) -> None:
    source = KernelSource(path="kernels/topp.py", text=TOPP, language="python", role="kernel")
    module = parse_python(TOPP)
    assert module is not None
    assert off_launch_path(module) == {"make_inputs"}
    assert [a.function for a in allocations([source])] == []
    diagnosis = diagnose(_log(tmp_path / "log", TOPP, "topp.py", _PROSE))
    assert diagnosis.finding(P.BUFFER_PERSISTENCE) is None
    assert "make_inputs" not in _sentence(diagnosis, P.BUFFER_PERSISTENCE)


def test_a_wrapper_of_the_launcher_still_allocates_per_call() -> None:
    text = (
        TOPP
        + "\n\ndef forward(x):\n    y = torch.empty_like(x)\n    return top_p_sample(x, probs=y)\n"
    )
    found = allocations(
        [KernelSource(path="kernels/topp.py", text=text, language="python", role="kernel")]
    )
    assert [a.function for a in found] == ["forward"]


def test_a_family_named_only_in_prose_lowers_the_confidence(tmp_path: Path) -> None:
    diagnosis = diagnose(_log(tmp_path / "log", TWO_PASS, "rowk.py", _PROSE))
    finding = diagnosis.finding(P.MISSING_FUNDAMENTAL)
    assert finding is not None
    assert finding.confidence == 0.6
    assert (
        "The softmax family is read from words alone (CLAUDE.md:3), not from the kernel's "
        "name or a profiled op: pass the family if the kernel is of another."
    ) in finding.summary
    # The CLAUDE.md line is quoted without its list bullet.
    assert finding.evidence[0].quote.startswith("Kernel under optimization")


def test_a_family_the_kernel_name_gives_keeps_its_confidence(tmp_path: Path) -> None:
    diagnosis = diagnose(_log(tmp_path / "log", TWO_PASS, "softmax.py", _PROSE))
    finding = diagnosis.finding(P.MISSING_FUNDAMENTAL)
    assert finding is not None
    assert finding.confidence == 0.8
    assert "words alone" not in finding.summary
    given = diagnose(_log(tmp_path / "given", TWO_PASS, "rowk.py", _PROSE), family="softmax")
    found = given.finding(P.MISSING_FUNDAMENTAL)
    assert found is not None and found.confidence == 0.8


def test_a_count_short_of_all_outputs_is_the_failure_quoted() -> None:
    import attrs

    from kernelopt.diagnose.detectors.correctness_wall import failure_detail
    from kernelopt.experiments import Correctness

    from .conftest import exp

    note = (
        "3/8 ids equal float64 ref, 3/8 within CDF tolerance; probs rel err 7.2e-08; "
        "(norm rel err of ids 4.0e-02, not used)"
    )
    failed = attrs.evolve(exp(2, correctness=Correctness.FAIL), correctness_note=note)
    assert failure_detail(failed) == "3/8 ids equal float64 ref, 3/8 within CDF tolerance"
    # All of them agreeing is no failure of its own: the error beside it is.
    held = attrs.evolve(
        exp(3, correctness=Correctness.FAIL),
        correctness_note="8/8 ids match float64 ref; probs rel err 5.0e-02",
    )
    assert failure_detail(held) == "probs rel err 5.0e-02"
    counted = attrs.evolve(
        exp(4, correctness=Correctness.FAIL),
        correctness_note="shape sweep ok; 5 of 8 shapes match the reference",
    )
    assert failure_detail(counted) == "5 of 8 shapes match the reference"
