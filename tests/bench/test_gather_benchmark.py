"""benchmarks/gather_index_select.py: its three variants make the same output (on the CPU
here; the timings come from a GPU)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gather_index_select.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gather_index_select", SCRIPT)
    assert spec is not None and spec.loader is not None
    if str(SCRIPT.parent) not in sys.path:  # run as a file, the script finds _common beside it
        sys.path.append(str(SCRIPT.parent))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("shape", "dim", "k"), [((64, 48), 1, 5), ((40, 8), 0, 40), ((2, 3, 17), 2, 1)]
)
def test_the_three_ways_pick_the_same_positions(shape: tuple[int, ...], dim: int, k: int) -> None:
    fns, expected, needed = _script().variants(shape, dim, k, torch.Generator().manual_seed(1))
    assert set(fns) == {"gather-expanded-index", "gather-materialized-index", "index_select"}
    assert expected.shape[dim] == k and expected.dtype == torch.bfloat16
    for name, fn in fns.items():
        assert torch.equal(fn(), expected), name
    # The selected values read and written once, and one int64 index vector.
    assert needed == 2 * expected.numel() * 2 + k * 8


def test_without_a_gpu_it_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without a device, on any machine: the script refuses before it times anything.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("sys.argv", ["gather_index_select.py"])
    assert _script().main() == 2
    assert "gather_index_select: Expected a CUDA device, got none" in capsys.readouterr().err
