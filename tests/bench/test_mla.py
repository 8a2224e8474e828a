"""The MLA trial matrix: wiring to kernelopt.kernels.mla, roofline costs, the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt._errors import DeviceError, InputError, KernelOptError
from kernelopt.bench import (
    Ceilings,
    Timer,
    TrialPoint,
    mla_decode_cost,
    mla_trial_matrix,
    read_rows,
)
from kernelopt.bench.mla import load_mla
from kernelopt.bench.timer import cuda_available

TINY = TrialPoint(b=2, s=2, t=64, extra={"h": 16})
CEILINGS = Ceilings(gpu="test", copy_bytes_per_s=1e12, matmul_flop_per_s=1e14)
QUICK = Timer(warmup_ms=1.0, max_time_ms=1.0, min_samples=1)


def test_cost_follows_the_mla_formula() -> None:
    cost = mla_decode_cost(b=32, s_q=16, h_q=128, seqlens=4096)
    assert cost.flops == 2 * 16 * 128 * 32 * 4096 * (576 + 512)
    assert cost.bytes == 32 * 4096 * 576 * 2 + 32 * 16 * 128 * (576 + 512) * 2
    with pytest.raises(InputError, match="seqlens: Expected 2 sequence lengths"):
        mla_decode_cost(b=2, s_q=1, h_q=16, seqlens=[100, 200, 300])


def test_missing_kernels_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kernelopt.kernels.mla", None)
    with pytest.raises(KernelOptError, match="Expected the MLA decode kernels"):
        load_mla()


def test_interpreter_run_times_every_strategy_and_checks_it() -> None:
    # On the CPU the kernels run in the Triton interpreter: this checks the wiring (plan,
    # run into poisoned outputs, float64 reference, roofline), not speed.
    results = mla_trial_matrix(
        points=[TINY], device="cpu", dtype="float32", ceilings=CEILINGS, timer=QUICK
    )
    assert [r.trial.impl for r in results] == [
        "kernelopt_naive",
        "kernelopt_split_kv",
        "kernelopt_hopper",
    ]
    for result in results:
        assert result.trial.error is None and result.trial.measurement is not None
        assert result.rel_err is not None and result.rel_err < 1e-4  # float32 vs float64
        assert result.cost == mla_decode_cost(b=2, s_q=2, h_q=16, seqlens=64, elt_bytes=4)
        assert set(result.metrics) >= {"dram_pct", "tc_pct", "floor_pct"}
        row = result.bench_row()
        assert row.op == "mla_decode" and row.config == {"b": 2, "s": 2, "t": 64, "h": 16}
        assert result.as_dict()["floor_us"] == pytest.approx(result.floor_us)


def test_bad_arguments() -> None:
    with pytest.raises(InputError, match="torch dtype name"):
        mla_trial_matrix(points=[TINY], device="cpu", dtype="float99", ceilings=CEILINGS)
    with pytest.raises(InputError, match="ceilings= for device 'cpu'"):
        mla_trial_matrix(points=[TINY], device="cpu", dtype="float32")


def test_cli_runs_or_says_it_needs_cuda(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path))
    out = tmp_path / "mla.jsonl"
    argv = ["bench", "mla", "--extra-point", "b=2,s=1,t=256", "--heads", "16", "--json"]
    if cuda_available():
        assert cli.main([*argv, "--out", str(out)]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert [r["impl"] for r in rows] == ["kernelopt_naive", "kernelopt_split_kv"]
        assert len(read_rows(out)) == 2
    else:
        assert cli.main(argv) == 2
        assert "Expected a CUDA device for the MLA trial matrix" in capsys.readouterr().err


@pytest.mark.gpu
def test_gpu_trial_point_is_correct_and_placed() -> None:
    point = TrialPoint(b=32, s=1, t=4096, extra={"h": 16})
    results = mla_trial_matrix(points=[point], ceilings=CEILINGS, timer=Timer(max_time_ms=200))
    for result in results:
        assert result.trial.measurement is not None, result.trial.error
        assert result.trial.measurement.backend == "cuda-events"
        assert result.rel_err is not None and result.rel_err < 1e-2  # bf16 operands


def test_device_error_without_cuda() -> None:
    if cuda_available():
        assert mla_trial_matrix(points=[], ceilings=CEILINGS) == []
    else:
        with pytest.raises(DeviceError, match="CUDA device"):
            mla_trial_matrix(points=[TINY], ceilings=CEILINGS)
