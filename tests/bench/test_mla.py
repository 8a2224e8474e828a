"""The MLA trial matrix: wiring to kernelopt.kernels.mla, roofline costs, the CLI."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
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
# Interpreter runs (device="cpu") are placed on the host's ceilings: a GPU's are refused.
HOST = Ceilings(gpu="cpu", copy_bytes_per_s=1e12, matmul_flop_per_s=1e14)
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
        points=[TINY], device="cpu", dtype="float32", ceilings=HOST, timer=QUICK
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
        mla_trial_matrix(points=[TINY], device="cpu", dtype="float99", ceilings=HOST)
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
        err = capsys.readouterr().err
        assert "Expected a CUDA device to time the MLA decode kernels at 1 point" in err


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
        # With CUDA there is no DeviceError to see; no points are refused before the device.
        with pytest.raises(InputError, match="points: Expected at least one trial point"):
            mla_trial_matrix(points=[], ceilings=CEILINGS)
    else:
        with pytest.raises(DeviceError, match="CUDA device"):
            mla_trial_matrix(points=[TINY], ceilings=CEILINGS)


class _FakeMLA:
    """A stand-in for kernelopt.kernels.mla: strategy ``good`` writes the reference,
    ``off`` half as much again, ``holes`` leaves one row unwritten."""

    STRATEGIES = ("good", "off", "holes")

    @staticmethod
    def mla_decode_ref(q, cache, table, seqlens, *, softmax_scale, causal):  # type: ignore[no-untyped-def]
        import torch

        out = (q[..., :512] * softmax_scale).double()
        return out, torch.zeros(q.shape[0], q.shape[2], q.shape[1], dtype=torch.float64)

    class MLADecodePlan:
        def __init__(self, seqlens, *, strategy, softmax_scale, **_):  # type: ignore[no-untyped-def]
            self.strategy, self.scale = strategy, softmax_scale

        def run(self, q, cache, table, *, out, lse):  # type: ignore[no-untyped-def]
            value = q[..., :512] * self.scale * (1.5 if self.strategy == "off" else 1.0)
            rows = slice(1, None) if self.strategy == "holes" else slice(None)
            out[rows] = value[rows]
            lse.zero_()
            return out, lse


class _CountingTimer:
    def __init__(self) -> None:
        self.timed: list[str] = []

    def measure(
        self, fn: object, *, outputs: object = None, written: object = None, label: str = ""
    ) -> object:
        from kernelopt.bench import Measurement

        self.timed.append(label)
        return Measurement(samples=[10.0], backend="cpu-perf-counter")


def test_a_strategy_off_the_reference_is_recorded_and_not_timed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("kernelopt.bench.mla.load_mla", lambda: _FakeMLA)
    timer = _CountingTimer()
    results = mla_trial_matrix(
        points=[TINY],
        device="cpu",
        dtype="float32",
        ceilings=HOST,
        timer=timer,  # type: ignore[arg-type]
    )
    by_impl = {r.trial.impl: r for r in results}
    assert timer.timed == ["kernelopt_good b=2 s=2 t=64 h=16"]
    good, off, holes = (by_impl[f"kernelopt_{s}"] for s in _FakeMLA.STRATEGIES)
    assert good.trial.measurement is not None and good.rel_err == 0.0
    assert off.trial.measurement is None and off.rel_err == pytest.approx(0.5)
    assert off.trial.error == (
        "incorrect: InputError: Expected a relative error <= 0.02 against the float64 "
        "reference, got 0.5"
    )
    # The unwritten row holds the poison (NaN), not what an earlier call left there.
    assert holes.trial.measurement is None and holes.rel_err == float("inf")
    assert off.as_dict()["error"] == off.trial.error and off.as_dict()["median_us"] is None


def test_the_tolerance_is_the_callers_and_a_run_without_check_times_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("kernelopt.bench.mla.load_mla", lambda: _FakeMLA)
    loose = mla_trial_matrix(
        points=[TINY], strategies=["off"], device="cpu", dtype="float32", ceilings=HOST,
        timer=_CountingTimer(), tolerance=0.6,  # type: ignore[arg-type]
    )  # fmt: skip
    assert loose[0].trial.measurement is not None and loose[0].rel_err == pytest.approx(0.5)
    unchecked = mla_trial_matrix(
        points=[TINY], strategies=["off"], device="cpu", dtype="float32", ceilings=HOST,
        timer=_CountingTimer(), check=False,  # type: ignore[arg-type]
    )  # fmt: skip
    assert unchecked[0].trial.measurement is not None and unchecked[0].rel_err is None
    for bad in (0.0, -1.0, float("nan"), True):
        with pytest.raises(InputError, match="tolerance: Expected a finite number > 0"):
            mla_trial_matrix(
                points=[TINY], device="cpu", dtype="float32", ceilings=HOST, tolerance=bad
            )


def test_cost_by_hand_for_the_trial_matrix_and_the_fp8_row() -> None:
    # Per key and query row: q·k over 576 columns and p·v over 512, a multiply-add each.
    rows, keys = 32 * 1 * 128, 32 * 4096
    cost = mla_decode_cost(b=32, s_q=1, h_q=128, seqlens=4096)
    assert cost.flops == 2 * (576 + 512) * (rows // 32) * 4096 * 32 == 36_507_222_016
    kv, q, out = keys * 576 * 2, rows * 576 * 2, rows * 512 * 2  # one latent head, bf16
    assert cost.bytes == kv + q + out == 159_907_840
    # FP8 layout: 512 e4m3 bytes, 4 float32 scales, 64 bf16 rotary values a token.
    assert 512 + 4 * 4 + 64 * 2 == 656
    fp8 = mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=4096, kv_row_bytes=656)
    assert fp8.bytes == keys * 656 + 32 * 16 * (576 + 512) * 2 == 87_097_344
    assert fp8.flops == mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=4096).flops
    # The page table and page size move no counted bytes: lengths alone decide.
    assert mla_decode_cost(b=2, s_q=4, h_q=16, seqlens=[1, 4097]).bytes == (
        4098 * 576 * 2 + 2 * 4 * 16 * 1088 * 2
    )


def test_the_trial_heads_fall_on_either_side_of_the_h200_ridge() -> None:
    from kernelopt.bench import Roofline

    h200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.2497501e12, matmul_flop_per_s=693.66e12)
    bounds = {
        h: Roofline(ceilings=h200, cost=mla_decode_cost(b=32, s_q=1, h_q=h, seqlens=4096)).bound
        for h in (128, 16)
    }
    assert bounds == {128: "compute", 16: "memory"}
    floor = Roofline(ceilings=h200, cost=mla_decode_cost(b=32, s_q=1, h_q=128, seqlens=4096))
    assert floor.floor("us") == pytest.approx(36_507_222_016 / 693.66e12 * 1e6)  # 52.63 us


@pytest.mark.parametrize("length", [4096, np.int64(4096), np.int32(4096), np.array(4096)])
def test_one_length_may_be_any_integer(length: object) -> None:
    assert mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=length) == mla_decode_cost(  # type: ignore[arg-type]
        b=32, s_q=1, h_q=16, seqlens=[4096] * 32
    )


@pytest.mark.parametrize("length", [True, -5, 4096.0, "4096"])
def test_one_length_that_is_not_a_count_is_named_as_given(length: object) -> None:
    # -5 was reported as "-160" (b times it), 4096.0 raised a bare TypeError and True
    # counted as one key per sequence.
    with pytest.raises(InputError, match=rf"seqlens: Expected .*, got {re.escape(repr(length))}$"):
        mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=length)  # type: ignore[arg-type]


def test_a_point_that_cannot_be_costed_is_refused_before_anything_is_timed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The roofline is placed after the timings: a point costed only then lost the run.
    import kernelopt.bench.mla as bench_mla

    timed: list[str] = []

    def run_trials(*_args: object, impl: str, **_kwargs: object) -> list[object]:
        timed.append(impl)
        return []

    monkeypatch.setattr(bench_mla, "run_trials", run_trials)
    no_heads = TrialPoint(b=2, s=1, t=64, extra={"h": 0})
    with pytest.raises(InputError, match="h_q"):
        mla_trial_matrix(points=[TINY, no_heads], device="cpu", dtype="float32", ceilings=HOST)
    assert timed == []
