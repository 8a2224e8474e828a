"""`kernelopt bench`: usage errors, the no-CUDA answer, the missing-MLA answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt._errors import InputError
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


def test_mla_refuses_an_empty_out_path_before_running(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # An empty --out read as none: the rows of a run of minutes went to no file.
    import kernelopt.bench.mla

    monkeypatch.setattr(kernelopt.bench.mla, "mla_trial_matrix", lambda **_kwargs: [])
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as usage:
        cli.main(["bench", "mla", "--trial-matrix", "--out", ""])
    assert usage.value.code == 2
    assert capsys.readouterr().err == (
        "kernelopt bench mla: error: argument --out: "
        "Expected a file path to write, got an empty path\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_mla_refuses_a_point_naming_an_axis_twice(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "mla", "--extra-point", "b=1,s=1,t=64,b=2"]) == 2
    err = capsys.readouterr().err
    assert "Expected a point naming each of b, s, t, h once, got 'b=1,s=1,t=64,b=2'" in err


@pytest.mark.parametrize(
    ("point", "why"),
    [
        # h=0 ran every other point first, then failed building the roofline of this one
        # and lost the whole run; an unknown axis was carried in the label and ignored.
        ("b=1,s=1,t=64,h=0", "h: Expected an integer >= 1, got 0"),
        ("b=1,s=1,t=64,hq=16", "Expected axes among b, s, t, h, got 'hq'"),
        # str.isdigit() passes a superscript (int() then fails) and other scripts' digits.
        ("b=1,s=1,t=6\u00b2", "Expected a point like b=32,s=1,t=4096,h=16"),
        ("b=1,s=1,t=\uff16\uff14", "Expected a point like b=32,s=1,t=4096,h=16"),
    ],
)
def test_mla_refuses_a_point_it_cannot_time_before_running(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], point: str, why: str
) -> None:
    import kernelopt.bench.mla

    monkeypatch.setattr(kernelopt.bench.mla, "mla_trial_matrix", _no_run)
    assert cli.main(["bench", "mla", "--trial-matrix", "--extra-point", point]) == 2
    assert why in capsys.readouterr().err


@pytest.mark.parametrize("heads", ["1\u00b2", "\uff11\uff16"])
def test_heads_are_ascii_digits(heads: str) -> None:
    with pytest.raises(InputError, match="Expected head counts like 128,16"):
        _heads(heads)


def test_mla_json_is_strict_json_when_a_strategy_wrote_non_finite_values(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A strategy whose output held NaN has an infinite error: printed as `Infinity`,
    # which jq and every strict JSON reader refuse.
    from types import SimpleNamespace

    import kernelopt.bench.mla

    row = {
        "point": "b=1 s=1 t=64 h=16",
        "requested": "b=1 s=1 t=64 h=16",
        "impl": "kernelopt_split_kv",
        "median_us": None,
        "p20_us": None,
        "p80_us": None,
        "floor_us": 1.5,
        "floor_pct": None,
        "rel_err": float("inf"),
        "note": "",
        "error": "incorrect: InputError: Expected a relative error <= 0.02, got inf",
    }
    result = SimpleNamespace(
        as_dict=lambda: dict(row), trial=SimpleNamespace(measurement=None, error=row["error"])
    )
    monkeypatch.setattr(kernelopt.bench.mla, "mla_trial_matrix", lambda **_: [result])
    assert cli.main(["bench", "mla", "--extra-point", "b=1,s=1,t=64,h=16", "--json"]) == 1
    out = capsys.readouterr().out
    printed = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in {out}"))
    assert printed[0]["rel_err"] is None and printed[0]["floor_us"] == 1.5
