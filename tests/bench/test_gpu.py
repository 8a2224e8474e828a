"""The CUDA paths of kernelopt.bench: events, flush, rotation, graphs, NVML, guards, OOM.

Run on a GPU machine; skipped elsewhere. No assertion here is about speed (that lives in
benchmarks/bench_verify.py); each checks what was done and recorded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import (
    Timer,
    TrialPoint,
    Verdict,
    check_responds_to_inputs,
    check_timed_stream,
    compare,
    measure,
    measure_ceilings,
    run_trials,
)
from kernelopt.bench.timer import _FLUSH_BUFFERS, device_l2_bytes

pytestmark = pytest.mark.gpu
SHORT = {"warmup_ms": 5.0, "max_time_ms": 100.0}


def test_cold_events_flush_twice_the_l2_and_read_nvml() -> None:
    x = torch.randn(1 << 22, device="cuda")
    y = torch.empty_like(x)
    m = measure(lambda: y.copy_(x), mode="cold", label="copy16MB", **SHORT)  # type: ignore[arg-type]
    assert m.backend == "cuda-events" and m.cache == "flush" and m.mode == "cold"
    assert m.gpu == torch.cuda.get_device_name()
    assert m.overhead is not None and m.overhead >= 0
    l2 = device_l2_bytes()
    assert any(buf.nbytes >= 2 * l2 - 4 for buf in _FLUSH_BUFFERS.values())
    assert m.device is not None, "NVML could not be read on this GPU machine"
    assert m.device.name and m.device.sm_clock_mhz and m.device.sm_clock_mhz > 0
    assert m.device_after is not None


def test_warm_up_settles_and_reads_the_power_limit() -> None:
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    m = measure(lambda: a @ a, mode="hot", max_time_ms=100.0)
    assert m.settled is not None  # settling ran (True, or False with a note saying why)
    assert m.settled or any(n.startswith("warm-up did not settle") for n in m.notes)
    assert m.warmup_time_ms >= 25.0  # the time-based part alone is warmup_ms
    assert m.warmup_calls > 3
    assert m.device is not None and m.device.power_limit_w, "NVML gave no power limit"
    off = measure(lambda: a @ a, mode="hot", settle_ms=0, max_time_ms=50.0)
    assert off.settled is None


def test_hot_mode_flushes_nothing() -> None:
    x = torch.randn(1 << 20, device="cuda")
    m = measure(lambda: x.mul_(1.0), mode="hot", **SHORT)  # type: ignore[arg-type]
    assert m.cache == "none" and m.calls_per_sample == 1


def test_graph_mode_captures_several_calls_per_replay() -> None:
    x = torch.randn(1024, device="cuda")
    m = measure(lambda: x.add_(1.0), mode="graph", **SHORT)  # type: ignore[arg-type]
    assert m.mode == "graph" and m.calls_per_sample >= 10
    fixed = measure(lambda: x.add_(1.0), mode="graph", graph_calls=37, **SHORT)  # type: ignore[arg-type]
    assert fixed.calls_per_sample == 37


def test_rotation_must_wrap_the_l2() -> None:
    small = [(torch.randn(1 << 16, device="cuda"),) for _ in range(4)]  # 1 MiB in all
    with pytest.raises(InputError, match="rotation evicts the L2"):
        measure(lambda x: x.sum(), inputs=small, **SHORT)  # type: ignore[arg-type]
    sets = 3 * device_l2_bytes() // (4 * (1 << 22)) + 2
    big = [(torch.randn(1 << 22, device="cuda"),) for _ in range(sets)]  # 16 MiB each
    m = measure(lambda x: x.sum(), inputs=big, **SHORT)  # type: ignore[arg-type]
    assert m.cache == "rotate"
    g = measure(lambda x: x.sum(), inputs=big, mode="graph", **SHORT)  # type: ignore[arg-type]
    assert g.cache == "rotate" and g.calls_per_sample % len(big) == 0


def test_unwritten_outputs_are_caught_on_the_device() -> None:
    out = torch.empty(4096, device="cuda")
    src = torch.randn(4096, device="cuda")
    measure(lambda: out.copy_(src), outputs=out, **SHORT)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="every output element written"):
        measure(lambda: out[:2048].copy_(src[:2048]), outputs=out, **SHORT)  # type: ignore[arg-type]


def test_work_on_another_stream_is_caught() -> None:
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()

    def elsewhere() -> None:
        with torch.cuda.stream(side):
            a @ a

    with pytest.raises(InputError, match="on the current \\(timed\\) stream"):
        check_timed_stream(elsewhere)
    check_timed_stream(lambda: a @ a)


def test_cached_results_are_caught_on_the_device() -> None:
    sets = [(torch.randn(256, device="cuda"),) for _ in range(2)]
    check_responds_to_inputs(lambda x: x * 2, sets)
    frozen = torch.randn(256, device="cuda")
    with pytest.raises(InputError, match="cached result"):
        check_responds_to_inputs(lambda x: frozen, sets)


def test_compare_on_the_device_sees_half_the_bytes() -> None:
    x = torch.randn(1 << 26, device="cuda")  # 256 MiB, far beyond L2
    y = torch.empty_like(x)
    half = 1 << 25
    result = compare(
        lambda: y.copy_(x), lambda: y[:half].copy_(x[:half]), timer=Timer(warmup_ms=5.0)
    )
    assert result.verdict is Verdict.FAST
    assert result.baseline is not None and result.baseline.backend == "cuda-events"


def test_ceilings_are_measured_and_cached(tmp_path: Path) -> None:
    path = tmp_path / "ceilings.json"
    found = measure_ceilings(
        path=path, copy_bytes=1 << 28, matmul_n=4096, max_time_ms=200, settle_ms=1000
    )
    assert found.copy_bytes_per_s > 1e11 and found.matmul_flop_per_s > 1e13
    # A second call at the same sizes reads the cache.
    assert measure_ceilings(path=path, copy_bytes=1 << 28, matmul_n=4096) == found


def test_real_out_of_memory_halves_b() -> None:
    total = torch.cuda.get_device_properties(0).total_memory
    per_b = total // 12  # b=32 and b=16 cannot fit; b=8 may, b=4 will

    def make(point: TrialPoint) -> object:
        block = torch.empty(point.b * per_b, dtype=torch.uint8, device="cuda")
        return lambda: block[:1].zero_()

    results = run_trials(make, points=[TrialPoint(b=32, s=1, t=1)], timer=Timer(**SHORT), impl="k")  # type: ignore[arg-type]
    assert results[0].measurement is not None
    assert results[0].point.b <= 8 and results[0].reduced
    assert "after CUDA OOM" in results[0].note


def test_a_retry_after_out_of_memory_has_the_device_memory_of_the_failed_try() -> None:
    # b=32 allocates its inputs (0.8 of the device), then its call runs out of memory.
    # Kept alive through the retries, those inputs left room only for a tiny b; freed,
    # b=16 (0.4 + 0.4 during the call) fits.
    per_b = torch.cuda.get_device_properties(0).total_memory // 40

    def make(point: TrialPoint) -> object:
        block = torch.empty(point.b * per_b, dtype=torch.uint8, device="cuda")

        def call() -> None:
            torch.empty(point.b * per_b, dtype=torch.uint8, device="cuda")
            block[:1].zero_()

        return call

    results = run_trials(make, points=[TrialPoint(b=32, s=1, t=1)], timer=Timer(**SHORT), impl="k")  # type: ignore[arg-type]
    assert results[0].measurement is not None and results[0].point.b == 16
