"""Which kernel source describes the kernel as it stood: only changes that were kept count."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import read_log

from ..conftest import write_files

REPO = Path(__file__).resolve().parents[2]
MLA_LOG = REPO / "docs" / "kernels" / "mla_decode"

_HEADER = "| Exp | Description | Latency | Unit | Correct | Status |\n|---|---|---|---|---|---|\n"


def _log(root: Path, rows: list[tuple[int, str, str]]) -> Path:
    """A summary row per (experiment, correctness, status), each folder with a snapshot."""
    table = _HEADER + "".join(
        f"| {n} | try {n} | {100 - n}.0 | us | {correct} | {status} |\n"
        for n, correct, status in rows
    )
    files = {"experiments/summary.md": table}
    for n, _, _ in rows:
        files[f"experiments/exp_{n}/kernel_{n}.py"] = f"BLOCK_N = {16 * n}\n"
    return write_files(root, files)


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
    write_files(root, {"CLAUDE.md": "# k\n\n- Kernel: `src/k.py`\n", "src/k.py": "x = 1\n"})
    log = read_log(root, until=3, catalog=())
    assert [k.path for k in log.current_kernels] == ["src/k.py"]


@pytest.mark.parametrize("until", [8, 12, 20])
def test_the_mla_log_before_exp_12_runs_the_kept_v2_kernel(until: int) -> None:
    # exp 6 (FAILED, exp_6/narrow.py) and exp 11 (NEUTRAL, exp_11/shared_tiles.py) left
    # snapshots of prototypes that were never kept; exps 4, 5, 12 and 17 ship their kernels in
    # the package and snapshot none, and exps 13-19 snapshot diffs.
    log = read_log(MLA_LOG, until=until)
    assert [k.path for k in log.current_kernels] == ["experiments/exp_2/v2.py"]


_TRITON_KERNEL = "import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n"
_HARNESS = "import torch\n\n\ndef check():\n    out = torch.empty(4)\n    return out\n"


def test_a_planned_experiment_has_not_changed_the_kernel(tmp_path: Path) -> None:
    # A folder with a plan and the variant it will try, but no row, result or verdict yet.
    root = _log(tmp_path, [(1, "PASS", "KEPT")])
    write_files(root, {"experiments/exp_2/plan.md": "# Experiment 2 plan\n\nTry a ring.\n",
                  "experiments/exp_2/kernel_2.py": "BLOCK_N = 32\n"})  # fmt: skip
    log = read_log(root, catalog=())
    assert log.experiment(2) is not None and not log.experiment(2).attempted  # type: ignore[union-attr]
    assert [k.path for k in log.current_kernels] == ["experiments/exp_1/kernel_1.py"]


def test_the_scripts_beside_a_kernel_are_not_the_kernel(tmp_path: Path) -> None:
    root = _log(tmp_path, [(1, "PASS", "KEPT")])
    write_files(root, {"experiments/exp_1/kernel_1.py": _TRITON_KERNEL,
                  "experiments/exp_1/check_and_time.py": _HARNESS})  # fmt: skip
    log = read_log(root, catalog=())
    assert [k.path for k in log.current_kernels] == ["experiments/exp_1/kernel_1.py"]


def test_a_later_folder_of_scripts_alone_leaves_the_last_kernel_defined(tmp_path: Path) -> None:
    # Exp 2 kept a change whose folder holds only the script that timed it.
    root = _log(tmp_path, [(1, "PASS", "KEPT"), (2, "PASS", "KEPT")])
    write_files(root, {"experiments/exp_1/kernel_1.py": _TRITON_KERNEL,
                  "experiments/exp_2/kernel_2.py": _HARNESS})  # fmt: skip
    log = read_log(root, catalog=())
    assert [k.path for k in log.current_kernels] == ["experiments/exp_1/kernel_1.py"]


@pytest.mark.parametrize(
    ("name", "text", "defines"),
    [
        ("k.py", _TRITON_KERNEL, True),
        ("k.py", "from triton.experimental import gluon\n\n@gluon.jit\ndef k():\n    pass\n", True),
        ("k.cu", "__global__ void k(float* x) {}\n", True),
        ("k.cl", "__kernel void k(__global float* x) {}\n", True),
        ("k.py", _HARNESS, False),
        ("k.py", "# wraps a kernel written elsewhere; the jit is applied there\nx = 1\n", False),
    ],
)
def test_which_sources_define_a_kernel(name: str, text: str, defines: bool) -> None:
    from kernelopt.experiments import KernelSource
    from kernelopt.experiments.readers.kernels import language_of

    source = KernelSource(path=name, text=text, language=language_of(name), experiment=1)
    assert source.defines_kernel is defines
