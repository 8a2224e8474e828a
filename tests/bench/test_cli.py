"""`kernelopt bench`: usage errors, the no-CUDA answer, the missing-MLA answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.bench._cli import _heads, _parse_point
from kernelopt.bench.timer import cuda_available


def test_bench_without_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench"]) == 2
    assert "ceilings" in capsys.readouterr().err


def test_ceilings_needs_cuda(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path))
    if cuda_available():
        assert cli.main(["bench", "ceilings", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["copy_bytes_per_s"] > 0 and data["cache"] == str(tmp_path / "ceilings.json")
    else:
        assert cli.main(["bench", "ceilings", "--json"]) == 2
        err = capsys.readouterr().err
        assert "kernelopt bench: error: Expected a CUDA device to measure ceilings" in err


def test_mla_needs_the_trial_matrix_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "mla"]) == 2
    assert "--trial-matrix" in capsys.readouterr().err


def test_mla_reports_a_missing_kernel_module(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "kernelopt.kernels.mla", None)  # import fails
    assert cli.main(["bench", "mla", "--trial-matrix"]) == 2
    err = capsys.readouterr().err
    assert "Expected the MLA decode kernels in kernelopt.kernels.mla" in err


def test_mla_point_and_heads_parsing(capsys: pytest.CaptureFixture[str]) -> None:
    point = _parse_point("b=64, s=1, t=8192, h=16")
    assert (point.b, point.s, point.t, point.extra) == (64, 1, 8192, {"h": 16})
    assert _heads("128,16") == (128, 16)
    assert cli.main(["bench", "mla", "--extra-point", "b=1,s=1"]) == 2
    assert "Expected a point with b, s and t" in capsys.readouterr().err
    assert cli.main(["bench", "mla", "--trial-matrix", "--heads", "many"]) == 2
    assert "--heads: Expected head counts" in capsys.readouterr().err


def test_help_runs_without_importing_torch() -> None:
    code = (
        "import sys; from kernelopt import cli; "
        "cli.build_parser().parse_args(['bench', 'ceilings']); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _no_run(**_kwargs: object) -> list[object]:
    raise AssertionError("the trial matrix ran although its arguments were refused")


@pytest.mark.parametrize("where", ["dir", "under_file"])
def test_mla_refuses_an_out_file_it_cannot_append_to_before_running(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, where: str
) -> None:
    # Found out after the run, the error would throw away minutes of GPU time.
    import kernelopt.bench.mla

    monkeypatch.setattr(kernelopt.bench.mla, "mla_trial_matrix", _no_run)
    afile = tmp_path / "rows.md"
    afile.write_text("x\n", encoding="utf-8")
    out = tmp_path if where == "dir" else afile / "rows.jsonl"
    assert cli.main(["bench", "mla", "--trial-matrix", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--out: Expected a JSONL file to append to, got {out}" in err, err
    assert afile.read_text("utf-8") == "x\n"


def test_mla_refuses_a_point_naming_an_axis_twice(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "mla", "--extra-point", "b=1,s=1,t=64,b=2"]) == 2
    err = capsys.readouterr().err
    assert "Expected a point naming each of b, s, t, h once, got 'b=1,s=1,t=64,b=2'" in err
