"""kernelopt.bench imports cheaply and exports what it promises."""

from __future__ import annotations

import subprocess
import sys

import kernelopt.bench as bench


def test_import_is_cheap() -> None:
    code = (
        "import sys, kernelopt.bench; "
        "print(','.join(m for m in ('torch', 'triton', 'numpy', 'cattrs') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_all_is_complete_and_resolves() -> None:
    public = {
        name
        for name, value in vars(bench).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "").startswith("kernelopt.bench")
    }
    assert public <= set(bench.__all__)
    for name in bench.__all__:
        assert getattr(bench, name) is not None


def test_contract_names_exist() -> None:
    for name in (
        "measure",
        "Measurement",
        "Timer",
        "compare",
        "Comparison",
        "Verdict",
        "Ceilings",
        "measure_ceilings",
        "Roofline",
        "TrialPoint",
        "ProfileReport",
        "to_result_row",
    ):
        assert name in bench.__all__
