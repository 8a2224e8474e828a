"""The overlooked-shortcut item, where the kernel has the path: its sentence quotes the
kernel's own line that tests the shortcut, with the file and line number, not only the
profile's spelling of the guard (``seqlen_q > 1`` in the kernel for ``s_q == 1``)."""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import Diagnosis, diagnose
from kernelopt.diagnose.model import Pathology

SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | eager baseline | 100.0 | us | PASS | BASELINE |
| 2 | first fused version | 60.0 | us | PASS | KEPT |
"""
PROFILE = """# Workload profile

## Op: decode

- Calls: 100

### Size-1 axes

- s_q = 1 in 90% of calls
"""


def _log(root: Path, kernel: str, profile: str = PROFILE) -> Path:
    files = {
        "CLAUDE.md": "# Rules\n\nKernel: kernels/decode.py\n",
        "kernels/decode.py": kernel,
        "experiments/summary.md": SUMMARY,
        "experiments/workload_profile.md": profile,
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def _sentence(diagnosis: Diagnosis) -> str:
    checks = diagnosis.checks
    return next(c.sentence for c in checks if c.pathology is Pathology.OVERLOOKED_SHORTCUT)


def test_the_sentence_quotes_the_kernels_own_spelling_of_the_guard(tmp_path: Path) -> None:
    kernel = (
        "def decode(q, k, v, out, seqlen_q):\n"
        "    # one query row: a dot product per head\n"
        "    if seqlen_q > 1:\n"
        "        return prefill(q, k, v, out)\n"
        "    return single_row(q, k, v, out)\n"
    )
    sentence = _sentence(diagnose(_log(tmp_path, kernel)))
    assert sentence == (
        "The kernel already has a path for s_q == 1 in `if seqlen_q > 1:` (kernels/decode.py:3)."
    )


def test_a_mirrored_shape_test_is_quoted_as_written(tmp_path: Path) -> None:
    profile = PROFILE.replace("- s_q = 1 in 90% of calls", "- n = 1 in 60% of calls")
    kernel = "def launch(x, out):\n    n = x.shape[0]\n    if 1 == n:\n        return out\n"
    sentence = _sentence(diagnose(_log(tmp_path, kernel, profile)))
    assert sentence == (
        "The kernel already has a path for n == 1 in `if 1 == n:` (kernels/decode.py:3)."
    )


def test_a_line_holding_a_backtick_stays_one_code_span(tmp_path: Path) -> None:
    kernel = 'def decode(q, seqlen_q):\n    if seqlen_q == 1: return "`fast`"\n    return q\n'
    sentence = _sentence(diagnose(_log(tmp_path, kernel)))
    assert sentence == (
        "The kernel already has a path for s_q == 1 in "
        '`` if seqlen_q == 1: return "`fast`" `` (kernels/decode.py:2).'
    )
