"""The kernel CLAUDE.md names, by bare file name or Windows path: the working file outside
the experiment folders, never a snapshot found by its name."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.experiments import read_log

LAUNCHER = "import torch\n\n\ndef run(x, out):\n    return out\n"
PROTOTYPE = "import torch\n\n\ndef run(x):\n    return torch.empty_like(x)\n"
SUMMARY = """| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | baseline | 100 | us | PASS | BASELINE |
| 2 | kernel taking out= | 90 | us | PASS | KEPT |
| 10 | prototype allocating its output | 95 | us | PASS | REVERTED |
"""


def _log(root: Path, named: str, *, working: bool = True) -> Path:
    files = {
        "CLAUDE.md": f"# Elementwise scale kernel\n\n- Kernel under optimization: `{named}`\n",
        "experiments/summary.md": SUMMARY,
        "experiments/exp_2/scale.py": LAUNCHER,
        "experiments/exp_10/scale.py": PROTOTYPE,
    }
    if working:
        files["kernels/scale.py"] = LAUNCHER
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8")
    return root


@pytest.mark.parametrize("named", ["scale.py", "kernels\\scale.py", "kernels/scale.py"])
def test_a_named_kernel_is_the_working_file(tmp_path: Path, named: str) -> None:
    log = read_log(_log(tmp_path / "log", named))
    assert [k.path for k in log.kernels if k.role == "kernel"] == ["kernels/scale.py"]
    assert [k.path for k in log.current_kernels] == ["kernels/scale.py"]


def test_a_name_only_snapshots_hold_is_said_and_not_read(tmp_path: Path) -> None:
    log = read_log(_log(tmp_path / "log", "scale.py", working=False))
    assert [k for k in log.kernels if k.role == "kernel"] == []
    # The latest kept snapshot stands for the kernel, and the log says why.
    assert [k.path for k in log.current_kernels] == ["experiments/exp_2/scale.py"]
    assert any(
        u.path == "scale.py" and "only experiment snapshots hold a file of that name" in u.reason
        for u in log.unread
    )
