"""Numbers of different kinds from different experiments, and the type of a low-precision
accumulator: a log where exp 1 times the kernel and exp 2 states only a speedup names both
numbers (not exp 1's alone, as if exp 2 measured nothing), and a correctness wall says the
type the kernel accumulates in (fp16 or bf16) and where."""

from __future__ import annotations

import textwrap
from pathlib import Path

import attrs
import pytest

from kernelopt.diagnose import Diagnosis, Pathology, diagnose, diagnose_log

from .conftest import exp, log_of

GAIN_NEEDS_TWO = "a gain needs the same number from two experiments, so none can be tracked yet"
NOT_SHARED = "No two experiments report the same metric at the same point"


def _write(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text, dedented) under ``root``."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def _summary(rows: str) -> dict[str, str]:
    """A log of one ``experiments/summary.md`` with a latency and a speedup column."""
    header = (
        "| Exp | Description | Latency | Unit | Speedup | Correct | Status |\n"
        "|---|---|---|---|---|---|---|\n"
    )
    return {"experiments/summary.md": "# Experiments Summary\n\n" + header + rows}


def _sentence(diagnosis: Diagnosis, pathology: Pathology) -> str:
    check = next(c for c in diagnosis.checks if c.pathology is pathology)
    assert not check.checked
    return check.sentence


def test_a_lone_speedup_beside_a_lone_latency_is_named(tmp_path: Path) -> None:
    rows = (
        "| 1 | split the KV loop | 66.3 | us |  | PASS | KEPT |\n"
        "| 2 | fuse the combine |  |  | 1.3x | PASS | KEPT |\n"
    )
    diagnosis = diagnose(_write(tmp_path / "log", _summary(rows)))
    shown = "exp 1: a latency of 66.3 us; exp 2: a speedup of 1.3x"
    assert _sentence(diagnosis, Pathology.LOCAL_MINIMUM) == (
        f"{NOT_SHARED} ({shown}): {GAIN_NEEDS_TWO}."
    )
    assert _sentence(diagnosis, Pathology.REPETITION_LOOP).startswith(
        f"{NOT_SHARED} ({shown}), so no best can be tracked yet; "
    )
    plan = diagnosis.render_plan()
    assert "Only exp 1" not in plan
    # Two experiments measured: neither is the only measurement, and neither is a best.
    assert "Only measurement so far" not in plan and diagnosis.summary.best is None


def test_a_speedup_is_said_as_a_speedup() -> None:
    # Exp 2 states a speedup and a latency in cycles (no time to compare): its speedup is
    # what it reports, said with its own number, not with the cycles.
    cycles = attrs.evolve(exp(2, 5000.0), unit="cycles", speedup=1.1)
    diagnosis = diagnose_log(log_of([exp(1, 66.3), cycles]), catalog=None)
    assert _sentence(diagnosis, Pathology.LOCAL_MINIMUM) == (
        f"{NOT_SHARED} (exp 1: a latency of 66.3 us; exp 2: a speedup of 1.1x): {GAIN_NEEDS_TWO}."
    )
    # Alone, its cycle count is a latency of a log that counts cycles, said in cycles.
    diagnosis = diagnose_log(log_of([cycles]), catalog=None)
    assert _sentence(diagnosis, Pathology.LOCAL_MINIMUM) == (
        f"Only exp 2 reports a latency (5000 cycles): {GAIN_NEEDS_TWO}."
    )


@pytest.mark.parametrize(
    "second",
    [
        # The other experiment reports nothing.
        "| 2 | fuse the combine |  |  |  | PASS | KEPT |\n",
        # No other experiment at all.
        "",
    ],
)
def test_one_experiment_that_reports_alone_keeps_its_sentence(tmp_path: Path, second: str) -> None:
    rows = "| 1 | split the KV loop | 66.3 | us | 1.2x | PASS | KEPT |\n" + second
    diagnosis = diagnose(_write(tmp_path / "log", _summary(rows)))
    assert _sentence(diagnosis, Pathology.LOCAL_MINIMUM) == (
        f"Only exp 1 reports a latency (66.3 us): {GAIN_NEEDS_TWO}."
    )
    assert "Only measurement so far: 66.3 us (exp 1)." in diagnosis.render_plan()


_KERNEL = """
    import triton
    import triton.language as tl


    @triton.jit
    def row_sum(X, Y, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        {acc}
        for start in range(0, N, BLOCK):
            acc += tl.load(X + row * N + start + offs)
        tl.store(Y + row, tl.sum(acc.to(tl.float32), 0))
"""

_WALL = """
    | Exp | Description | Latency | Unit | Correct | Status |
    |---|---|---|---|---|---|
    | 1 | torch baseline | 40.0 | us | PASS | BASELINE |
    | 2 | Triton row sum | 31.0 | us | PASS | KEPT |
    | 3 | narrower loads | 29.0 | us | FAIL | FAILED |
    | 4 | narrower loads, BLOCK=2048 | 28.5 | us | FAIL | FAILED |
    | 5 | narrower loads, num_warps=8 | 28.0 | us | FAIL | FAILED |
"""


@pytest.mark.parametrize(
    ("acc", "said"),
    [
        (
            "acc = tl.zeros((BLOCK,), dtype=tl.float16)",
            "an fp16 accumulator (kernels/row_sum.py:9)",
        ),
        (
            "acc = tl.zeros((BLOCK,), dtype=tl.bfloat16)",
            "a bf16 accumulator (kernels/row_sum.py:9)",
        ),
        # The dtype on a line after the call's: the type is the call's, not its first line's.
        (
            "acc = tl.zeros(\n        (BLOCK,),\n        dtype=tl.bfloat16,\n    )",
            "a bf16 accumulator (kernels/row_sum.py:9)",
        ),
    ],
)
def test_the_wall_names_the_accumulator_type_found(tmp_path: Path, acc: str, said: str) -> None:
    kernel = _KERNEL.replace("{acc}", acc)
    root = _write(
        tmp_path / "log",
        {
            "CLAUDE.md": "Kernel: kernels/row_sum.py\n",
            "kernels/row_sum.py": kernel,
            "experiments/summary.md": _WALL,
        },
    )
    wall = diagnose(root).finding(Pathology.CORRECTNESS_WALL)
    assert wall is not None and wall.experiments == (3, 4, 5)
    assert f"Numeric suspects in the kernel text: {said}" in wall.summary
    assert "bf16 accumulation" not in wall.summary
    action = next(a for a in wall.actions if a.catalog_id == "bf16-accumulation")
    assert action.text.startswith(f"{said}")
    assert "accumulate in fp32 and cast once at the store" in action.text
