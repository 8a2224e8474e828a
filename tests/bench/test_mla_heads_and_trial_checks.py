"""mla_trial_matrix crosses given points with heads and refuses another device's ceilings;
run_trials needs an impl up front; a false check is named; TrialCall needs an output."""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest

import kernelopt.bench
from kernelopt._errors import InputError
from kernelopt.bench import (
    Ceilings,
    Measurement,
    TrialCall,
    TrialPoint,
    mla_trial_matrix,
    run_trials,
)
from kernelopt.bench import mla as bench_mla

HOST = Ceilings(gpu="cpu", copy_bytes_per_s=1e12, matmul_flop_per_s=1e14)
H200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.25e12, matmul_flop_per_s=6.9e14)


class _Timer:
    """Times nothing: records the labels it was asked to time."""

    def __init__(self) -> None:
        self.timed: list[str] = []

    def measure(
        self, fn: Any, *, outputs: object = None, written: object = None, label: str = ""
    ) -> Measurement:
        self.timed.append(label)
        return Measurement(samples=[10.0], backend="cpu-perf-counter")


def _no_kernels(*_args: object, **_kwargs: object) -> Any:
    raise AssertionError("the kernels were looked for before the arguments were checked")


def test_points_without_h_run_at_every_head_count(monkeypatch: pytest.MonkeyPatch) -> None:
    # points= ran at h=128 whatever heads= said, and was spelled without h.
    seen: list[str] = []

    def run(make: Any, *, points: list[TrialPoint], impl: str, timer: Any) -> list[Any]:
        seen.extend(str(p) for p in points)
        return []

    monkeypatch.setattr(bench_mla, "run_trials", run)
    monkeypatch.setattr(bench_mla, "load_mla", lambda: type("M", (), {"STRATEGIES": ("a",)}))
    given = [TrialPoint(b=1, s=1, t=64), TrialPoint(b=2, s=1, t=64, extra={"h": 8})]
    mla_trial_matrix(
        points=given, heads=(16, 4), device="cpu", dtype="float32", ceilings=HOST, timer=_Timer()
    )  # type: ignore[arg-type]
    assert seen == ["b=1 s=1 t=64 h=16", "b=1 s=1 t=64 h=4", "b=2 s=1 t=64 h=8"]


def test_repeated_heads_and_a_point_reached_twice_are_refused_before_the_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench_mla, "load_mla", _no_kernels)
    point = TrialPoint(b=1, s=1, t=64)
    why = "heads: Expected each head count once, got (16, 16) (16 twice)"
    with pytest.raises(InputError, match=re.escape(why)):
        mla_trial_matrix(points=[point], heads=(16, 16), device="cpu", ceilings=HOST)
    why = "points[1]: Expected each point once, got b=1 s=1 t=64 h=16 again (as points[0] at h=16)"
    with pytest.raises(InputError, match=re.escape(why)):
        mla_trial_matrix(
            points=[point, TrialPoint(b=1, s=1, t=64, extra={"h": 16})],
            heads=(16,),
            device="cpu",
            ceilings=HOST,
        )
    with pytest.raises(InputError, match=r"^heads: Expected head counts as integers >= 1, got 0$"):
        mla_trial_matrix(points=[point], heads=(0,), device="cpu", ceilings=HOST)


def test_a_gpus_ceilings_are_refused_for_an_interpreter_run_before_any_timing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The host-clock time was placed on an H200's roofline: floor_pct 2.5e-05 %.
    timer = _Timer()
    monkeypatch.setattr(bench_mla, "load_mla", lambda: type("M", (), {"STRATEGIES": ("a",)}))
    with pytest.raises(InputError) as refused:
        mla_trial_matrix(
            points=[TrialPoint(b=1, s=1, t=64, extra={"h": 16})],
            device="cpu",
            dtype="float32",
            ceilings=H200,
            timer=timer,  # type: ignore[arg-type]
        )
    assert str(refused.value).startswith(
        "ceilings: Expected the ceilings of the host for device 'cpu', got those of "
        "'NVIDIA H200': a floor holds only for the device its ceilings were measured on"
    )
    assert timer.timed == []


def test_run_trials_refuses_an_empty_impl_before_timing() -> None:
    # Refused only by result_row(), once every point had been timed.
    timer = _Timer()
    for bad in ("", "  "):
        with pytest.raises(InputError, match=r"^impl: Expected the implementation's name"):
            run_trials(lambda point: lambda: None, impl=bad, timer=timer)  # type: ignore[arg-type]
    assert timer.timed == []


def _is_close(result: object) -> bool:
    return False


def test_a_check_returning_false_is_named_with_where_it_is() -> None:
    line = _is_close.__code__.co_firstlineno
    make = functools.partial(TrialCall, fn=lambda: 1)
    [result] = run_trials(
        lambda point: make(check=_is_close),
        points=[TrialPoint(b=1, s=1, t=1)],
        impl="k",
        timer=_Timer(),  # type: ignore[arg-type]
    )
    where = f"test_mla_heads_and_trial_checks.py:{line}"
    assert result.error == f"incorrect: check _is_close ({where}) returned False"


def test_a_trial_call_with_no_output_tensor_is_refused() -> None:
    why = "outputs: Expected at least one output tensor to check, got none in list []"
    with pytest.raises(InputError, match=re.escape(why)):
        TrialCall(fn=lambda: None, outputs=[])


def test_save_ceilings_is_exported() -> None:
    # docs/bench.md names it beside load_ceilings and measure_ceilings.
    assert "save_ceilings" in kernelopt.bench.__all__
    assert kernelopt.bench.save_ceilings is kernelopt.bench.roofline.save_ceilings
