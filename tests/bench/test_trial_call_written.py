"""A trial of a kernel that writes part of its output (a KV-cache append): ``TrialCall``
takes the written region as ``check_written`` does, so a stray write fails the point."""

from __future__ import annotations

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import Timer, TrialCall, TrialPoint, run_trials

FAST = Timer(backend="cpu-perf-counter", warmup_ms=1.0, settle_ms=0.0, max_time_ms=5.0)
POINT = TrialPoint(b=4, s=1, t=64)


def _append(cache: torch.Tensor, new: torch.Tensor, slots: torch.Tensor, *, clamp: bool) -> None:
    # Padding slots are -1: a right kernel skips them, the clamped one writes slot 0.
    if clamp:
        cache[slots.clamp(min=0)] = new
    else:
        keep = slots >= 0
        cache[slots[keep]] = new[keep]


@pytest.mark.parametrize("clamp", [False, True])
def test_a_stray_write_outside_the_region_fails_the_point(clamp: bool) -> None:
    cache = torch.zeros(64, 8)
    new = torch.randn(4, 8)
    slots = torch.tensor([5, -1, 9, 17])

    def make(_point: TrialPoint) -> TrialCall:
        return TrialCall(
            fn=lambda: _append(cache, new, slots, clamp=clamp),
            outputs=cache,
            written=slots[slots >= 0],
        )

    [result] = run_trials(make, points=[POINT], impl="append", timer=FAST)
    if clamp:
        assert result.measurement is None
        assert result.error is not None and "outside" in result.error, result.error
    else:
        assert result.error is None, result.error
        assert result.measurement is not None


def test_the_check_sees_the_region_written_and_the_rest_poisoned() -> None:
    cache = torch.zeros(16, 2)
    slots = torch.tensor([3, 7])
    seen: list[torch.Tensor] = []

    def check(_result: object) -> bool:
        seen.append(cache.clone())
        return True

    def make(_point: TrialPoint) -> TrialCall:
        return TrialCall(
            fn=lambda: _append(cache, torch.ones(2, 2), slots, clamp=False),
            outputs=cache,
            written=slots,
            check=check,
        )

    [result] = run_trials(make, points=[POINT], impl="append", timer=FAST)
    assert result.error is None, result.error
    [after] = seen
    assert after[slots].eq(1).all()
    rest = torch.ones(16, dtype=torch.bool)
    rest[slots] = False
    assert after[rest].isnan().all()


def test_written_without_outputs_is_refused() -> None:
    with pytest.raises(
        InputError, match=r"written: Expected outputs= with written=, got written= alone"
    ):
        TrialCall(fn=lambda: None, written=torch.tensor([1]))
