"""Which kernel source describes the kernel as it stood: only changes that were kept count."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import read_log

REPO = Path(__file__).resolve().parents[2]
MLA_LOG = REPO / "docs" / "kernels" / "mla_decode"

_HEADER = "| Exp | Description | Latency | Unit | Correct | Status |\n|---|---|---|---|---|---|\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _log(root: Path, rows: list[tuple[int, str, str]]) -> Path:
    """A summary row per (experiment, correctness, status), each folder with a snapshot."""
    table = _HEADER + "".join(
        f"| {n} | try {n} | {100 - n}.0 | us | {correct} | {status} |\n"
        for n, correct, status in rows
    )
    files = {"experiments/summary.md": table}
    for n, _, _ in rows:
        files[f"experiments/exp_{n}/kernel_{n}.py"] = f"BLOCK_N = {16 * n}\n"
    return _write(root, files)


@pytest.mark.parametrize(
    ("correct", "status"),
    [("PASS", "NEUTRAL"), ("PASS", "REVERTED"), ("FAIL", "FAILED"), ("FAIL", "")],
)
def test_a_prototype_that_was_not_kept_is_not_the_kernel(
    tmp_path: Path, correct: str, status: str
) -> None:
    # The MLA log's exp 11: a NEUTRAL prototype, snapshotted in its folder and dropped.
    root = _log(tmp_path, [(1, "PASS", "KEPT"), (2, correct, status), (3, "PASS", "KEPT")])
    log = read_log(root, until=3, catalog=())
    assert [k.path for k in log.current_kernels] == ["experiments/exp_1/kernel_1.py"]


def test_a_kept_snapshot_after_a_dropped_one_is_the_kernel(tmp_path: Path) -> None:
    root = _log(tmp_path, [(1, "PASS", "KEPT"), (2, "PASS", "REVERTED"), (3, "PASS", "KEPT")])
    log = read_log(root, until=4, catalog=())
    assert log.until is None  # nothing at or past 4: the log as it is
    assert [k.path for k in log.current_kernels] == ["experiments/exp_3/kernel_3.py"]


def test_a_snapshot_whose_fate_is_not_stated_still_counts(tmp_path: Path) -> None:
    root = _log(tmp_path, [(1, "PASS", "KEPT"), (2, "PASS", ""), (3, "PASS", "KEPT")])
    log = read_log(root, until=3, catalog=())
    assert [k.path for k in log.current_kernels] == ["experiments/exp_2/kernel_2.py"]


def test_without_a_kept_snapshot_the_named_kernel_stands(tmp_path: Path) -> None:
    root = _log(tmp_path, [(1, "PASS", "REVERTED"), (2, "PASS", "NEUTRAL"), (3, "PASS", "KEPT")])
    _write(root, {"CLAUDE.md": "# k\n\n- Kernel: `src/k.py`\n", "src/k.py": "x = 1\n"})
    log = read_log(root, until=3, catalog=())
    assert [k.path for k in log.current_kernels] == ["src/k.py"]


@pytest.mark.parametrize("until", [8, 12, 20])
def test_the_mla_log_before_exp_12_runs_the_kept_v2_kernel(until: int) -> None:
    # exp 6 (FAILED, exp_6/narrow.py) and exp 11 (NEUTRAL, exp_11/shared_tiles.py) left
    # snapshots of prototypes that were never kept; exps 4, 5, 12 and 17 ship their kernels in
    # the package and snapshot none, and exps 13-19 snapshot diffs.
    log = read_log(MLA_LOG, until=until)
    assert [k.path for k in log.current_kernels] == ["experiments/exp_2/v2.py"]
