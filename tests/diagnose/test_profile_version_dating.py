"""A profile.md whose heading names a version (``## Profile: int4gemv v4 | ...``) is dated
by the first experiment that times that version, where no title names it: its knobs
(``version=v4``) or its result rows (impl ``v4``, ``triton_v4``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.bench import Measurement, to_result_row, write_experiment
from kernelopt.diagnose import Pathology, diagnose

PROFILE = """## Profile: int4gemv v4 | b=1, k=4096, n=11008
### Bottleneck: Memory-bound
Root cause: bytes set the floor.
### Top 3 Opportunities (ranked by estimated impact)
1. Software Pipelining of Loads and Compute (`software-pipelining`) -- est. 42% gain
2. Vectorized, Coalesced Loads (`vectorized-coalesced-loads`) -- est. 42% gain
"""
_TITLES = [
    "tl.dot over a padded batch",
    "unpack the high nibble as the even k",
    "BLOCK_N=128",
    "no tl.dot: broadcast multiply and sum",
    "num_warps=8",
    "BLOCK_N=32",
    "zero point in registers",
    "one program per two columns",
]


def _log(root: Path, by: str) -> Path:
    (root / "kernels").mkdir(parents=True)
    (root / "kernels" / "int4gemv.py").write_text("import triton\n", encoding="utf-8")
    (root / "CLAUDE.md").write_text(
        "# int4 GEMV (Triton)\n\nKernel: kernels/int4gemv.py\n", encoding="utf-8"
    )
    for number, title in enumerate(_TITLES, start=1):
        version = f"v{min(number, 4)}"
        row = to_result_row(
            Measurement(samples=[30.0 - number] * 5, gpu="NVIDIA H100"),
            point="b=1 k=4096 n=11008",
            impl=f"triton_{version}" if by == "impl" else "triton",
        )
        write_experiment(
            root / "experiments",
            experiment=number,
            title=title,
            rows=[row],
            status="KEPT" if number <= 4 else "REVERTED",
            correctness="PASS",
            knobs={"version": version} if by == "knobs" else {},
            date="2026-12-07",
        )
    (root / "experiments" / "profile.md").write_text(PROFILE, encoding="utf-8")
    return root


@pytest.mark.parametrize("by", ["knobs", "impl"])
def test_the_profile_is_dated_by_the_first_experiment_timing_its_version(
    tmp_path: Path, by: str
) -> None:
    diagnosis = diagnose(_log(tmp_path / "log", by))
    sentence = next(
        c.sentence for c in diagnosis.checks if c.pathology is Pathology.IGNORED_PRIOR_RESEARCH
    )
    assert "dated only by the version" not in sentence
    assert "written after exp 4, the first experiment whose knobs or rows name v4" in sentence
    # Exps 5-8 came after it and tried neither item: the list was ignored.
    assert diagnosis.finding(Pathology.IGNORED_PRIOR_RESEARCH) is not None
