"""Items 8 and 9 judge the kernel that was kept, not the latest prototype snapshotted."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.diagnose import Pathology, diagnose

REPO = Path(__file__).resolve().parents[2]
MLA_LOG = REPO / "docs" / "kernels" / "mla_decode"


@pytest.mark.parametrize("until", [12, 20])
def test_the_mla_log_is_judged_on_its_kept_kernel(until: int) -> None:
    diagnosis = diagnose(MLA_LOG, until=until)
    assert diagnosis.summary.kernel == "experiments/exp_2/v2.py"
    for pathology in (Pathology.BUFFER_PERSISTENCE, Pathology.OVERLOOKED_SHORTCUT):
        sentence = next(c.sentence for c in diagnosis.checks if c.pathology is pathology)
        # exp 11's ring prototype was NEUTRAL: its launcher is not the kernel's.
        assert "exp_11" not in sentence and "experiments/exp_2/v2.py" in sentence


_CLEAN = "import triton.language as tl\n\n\ndef k(a, b):\n    return tl.dot(a, b)\n"
_TF32 = (
    "import triton.language as tl\n\n\ndef k(a, b):\n"
    "    return tl.dot(a.to(tl.float32), b.to(tl.float32), allow_tf32=True)\n"
)


def test_a_correctness_wall_checks_the_failing_kernels(tmp_path: Path) -> None:
    # The kernel that stands is exp 1's; the numeric suspect lives in the prototypes that
    # failed, and those are what the wall's advice is about.
    rows = "".join(f"| {n} | variant {n} | {100 - n}.0 | us | FAIL | FAILED |\n" for n in (2, 3, 4))
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "summary.md").write_text(
        "| Exp | Description | Latency | Unit | Correct | Status |\n|---|---|---|---|---|---|\n"
        "| 1 | first | 100.0 | us | PASS | KEPT |\n" + rows,
        encoding="utf-8",
    )
    for n, text in ((1, _CLEAN), (2, _TF32), (3, _TF32), (4, _TF32)):
        folder = tmp_path / "experiments" / f"exp_{n}"
        folder.mkdir()
        (folder / "kernel.py").write_text(text, encoding="utf-8")
    wall = diagnose(tmp_path).finding(Pathology.CORRECTNESS_WALL)
    assert wall is not None
    assert any(e.source == "experiments/exp_4/kernel.py:5" for e in wall.evidence)
    assert "dot-input-precision" in {a.catalog_id for a in wall.actions}
