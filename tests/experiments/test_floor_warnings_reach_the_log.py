"""A share the floor reader refuses is named in the log's warnings on any row of a result,
not only where the metric reader, which takes a column's first share, names it too."""

from __future__ import annotations

from pathlib import Path

from kernelopt.experiments import read_log

from ..conftest import write_files
from .test_floor_metric_agreement import FIRST_ROW, RESULT, SUMMARY, _rows

LOOSE_RESULTS = """# Results

## Exp 1: eager baseline
- Status: BASELINE

| Point | Of floor | Bound |
|---|---|---|
| b=32 | 0.5 | memory |

## Exp 2: fused kernel
- Status: KEPT

| Point | Of floor | Bound |
|---|---|---|
| b=32 | 0.7 | memory |
| b=64 | -3% | memory |
"""


def test_a_later_row_at_a_share_of_zero_is_named_in_the_log(tmp_path: Path) -> None:
    # The first row reads; the metric reader stops there, the floor reader goes on.
    result = f"# Experiment 2: fused kernel\n\n- Status: KEPT\n\n{_rows('0.78', '0')}"
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, RESULT: result})
    log = read_log(root, catalog=())
    assert any(
        warning.startswith(f"{RESULT}:{FIRST_ROW + 1}:") and "share above 0, got 0" in warning
        for warning in log.warnings
    ), log.warnings


def test_a_loose_results_file_of_several_experiments_names_it_too(tmp_path: Path) -> None:
    root = write_files(tmp_path, {"results.md": LOOSE_RESULTS})
    log = read_log(root, catalog=())
    assert any(
        warning.startswith("results.md:16:") and "got -3%" in warning for warning in log.warnings
    ), log.warnings
