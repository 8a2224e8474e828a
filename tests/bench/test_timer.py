"""The timer on the CPU backend: the same API, its settings, rotation proofs and guards."""

from __future__ import annotations

import inspect
import itertools
import time
import warnings
from collections import Counter

import attrs
import numpy as np
import pytest
import torch

from kernelopt._errors import DeviceError, InputError
from kernelopt.bench import Timer, evicting_bytes, measure
from kernelopt.bench.timer import cuda_available

FAST = {"warmup_ms": 1.0, "max_time_ms": 30.0, "backend": "cpu-perf-counter"}


def spin(us: float) -> None:
    """Busy-wait ``us`` microseconds: a call of known, steady length."""
    end = time.perf_counter_ns() + int(us * 1000)
    while time.perf_counter_ns() < end:
        pass


def test_cpu_backend_says_so_in_the_record() -> None:
    m = measure(lambda: spin(50), label="spin50", **FAST)  # type: ignore[arg-type]
    assert m.backend == "cpu-perf-counter"
    assert m.gpu == "cpu" and m.unit == "us" and m.label == "spin50"
    assert m.cache == "none"
    assert any("host clock" in note for note in m.notes)
    assert any("not flushed" in note for note in m.notes)
    assert m.device is None and not m.clocks_moved
    assert m.warmup_calls >= 3  # one untimed first call and at least two warm-up calls
    assert m.overhead is not None and m.overhead >= 0
    assert m.stop_reason in ("precision", "time_cap", "max_samples")
    assert min(m.samples) >= 50.0  # a sample can never be shorter than the busy wait


def test_max_samples_caps_the_run() -> None:
    m = measure(lambda: None, min_samples=3, max_samples=7, **FAST)  # type: ignore[arg-type]
    assert m.n <= 7


def test_time_cap_stops_a_slow_call_and_says_so() -> None:
    m = measure(
        lambda: spin(3000),
        min_samples=50,
        max_time_ms=5.0,
        warmup_ms=1.0,
        backend="cpu-perf-counter",
    )
    assert m.stop_reason == "time_cap"
    assert m.n < 50
    assert any("time cap" in note for note in m.notes)


def test_graph_mode_on_cpu_times_calls_back_to_back() -> None:
    calls = Counter[str]()
    m = measure(
        lambda: calls.update(["x"]),
        mode="graph",
        graph_calls=25,
        **FAST,  # type: ignore[arg-type]
    )
    assert m.mode == "graph" and m.calls_per_sample == 25
    assert calls["x"] >= 25 * m.n
    assert any("graph mode" in note for note in m.notes)


def test_input_sets_rotate_in_turn() -> None:
    seen: list[int] = []
    m = measure(lambda i: seen.append(i), inputs=[(0,), (1,), (2,)], mode="hot", **FAST)  # type: ignore[arg-type]
    assert m.n > 0
    # every call after the first cycles 0, 1, 2, 0, ...
    assert all(b == (a + 1) % 3 for a, b in itertools.pairwise(seen))


def test_mapping_input_sets_are_keyword_arguments() -> None:
    seen: list[int] = []
    measure(lambda *, x: seen.append(x), inputs=[{"x": 7}], mode="hot", **FAST)  # type: ignore[arg-type]
    assert set(seen) == {7}


def test_evicting_bytes_counts_what_other_sets_bring() -> None:
    a = [np.zeros(1000, dtype=np.float32) for _ in range(4)]  # 4000 B each
    shared = np.zeros(500, dtype=np.float32)  # 2000 B in every set
    sets = [(x, shared) for x in a]
    evicting, common = evicting_bytes(sets)
    assert evicting == 3 * 4000
    assert common == 2000
    t = torch.zeros(256, dtype=torch.float64)  # 2048 B, counted once even if repeated
    assert evicting_bytes([(t, t), (torch.zeros(10),)]) == (40, 0)
    assert evicting_bytes([(a[0],)]) == (0, 4000)


def test_rotation_that_fits_in_l2_is_refused_or_warned() -> None:
    sets = [(np.zeros(1000, dtype=np.float32),) for _ in range(4)]  # 12 000 B evicting
    with pytest.raises(InputError, match="rotation evicts the L2"):
        measure(lambda x: None, inputs=sets, l2_bytes=50_000, **FAST)  # type: ignore[arg-type]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = measure(
            lambda x: None,
            inputs=sets,
            l2_bytes=50_000,
            strict_rotation=False,
            **FAST,  # type: ignore[arg-type]
        )
    assert m.cache == "none"
    assert any("rotation evicts the L2" in str(w.message) for w in caught)


def test_rotation_that_wraps_is_recorded_as_rotate() -> None:
    sets = [(np.zeros(1000, dtype=np.float32),) for _ in range(4)]
    m = measure(lambda x: None, inputs=sets, l2_bytes=10_000, **FAST)  # type: ignore[arg-type]
    assert m.cache == "rotate"


def test_rotation_without_known_cache_size_is_not_claimed() -> None:
    sets = [(np.zeros(10),), (np.zeros(10),)]
    m = measure(lambda x: None, inputs=sets, **FAST)  # type: ignore[arg-type]
    assert m.cache == "none"
    assert any("wrap not checked" in note for note in m.notes)


def test_outputs_are_poisoned_and_checked_every_batch() -> None:
    out = torch.empty(64)
    measure(lambda: out.copy_(torch.arange(64.0)), outputs=out, **FAST)  # type: ignore[arg-type]
    assert torch.equal(out, torch.arange(64.0))

    def lazy() -> None:
        out[:32] = 1.0  # forgets half the output

    with pytest.raises(InputError, match="every output element written"):
        measure(lazy, outputs=out, **FAST)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "warm"}, "mode: Expected one of cold, hot, graph"),
        ({"min_samples": 0}, "min_samples: Expected an integer >= 1"),
        (
            {"min_samples": 20, "max_samples": 10},
            r"^max_samples: Expected an integer >= min_samples \(20\), got 10$",
        ),
        ({"warmup_ms": -1.0}, "warmup_ms: Expected a positive number"),
        ({"graph_calls": 0}, "^graph_calls: Expected an integer >= 1 or None, got 0$"),
        ({"graph_calls": 2.5}, "^graph_calls: Expected an integer >= 1 or None, got 2.5$"),
        ({"max_samples": "5"}, "max_samples: Expected an integer >= 1, got '5'"),
        ({"l2_bytes": -1}, "^l2_bytes: Expected a positive integer or None, got -1$"),
        ({"backend": "opencl"}, "backend: Expected one of"),
        ({"device": "x"}, "device: Expected a CUDA device index >= 0 or None, got 'x'"),
        ({"device": -1}, "device: Expected a CUDA device index"),
        ({"nvtx": "no"}, "nvtx: Expected a bool, got 'no'"),
        ({"clock_tolerance": 0.0}, "clock_tolerance: Expected a positive number"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        Timer(**kwargs)  # type: ignore[arg-type]


def test_measure_takes_every_setting_of_the_timer() -> None:
    # measure() says "see Timer for every parameter": each one is a keyword of it.
    settings = {field.name for field in attrs.fields(Timer)}
    assert settings <= set(inspect.signature(measure).parameters)
    with pytest.raises(InputError, match="clock_tolerance: Expected a positive number"):
        measure(lambda: None, backend="cpu-perf-counter", clock_tolerance=-1.0)


def test_empty_or_malformed_input_sets_are_refused() -> None:
    with pytest.raises(InputError, match="at least one input set"):
        measure(lambda: None, inputs=[], **FAST)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="tuples or mappings"):
        measure(lambda x: None, inputs=[3], **FAST)  # type: ignore[arg-type, list-item]


def test_cuda_events_backend_needs_cuda() -> None:
    if cuda_available():
        m = measure(lambda: None, backend="cuda-events", warmup_ms=1.0, max_time_ms=20.0)
        assert m.backend == "cuda-events"
    else:
        with pytest.raises(DeviceError, match="CUDA device"):
            measure(lambda: None, backend="cuda-events")


def test_timer_is_reusable_and_frozen() -> None:
    timer = Timer(mode="hot", **FAST)  # type: ignore[arg-type]
    first = timer.measure(lambda: spin(20), label="a")
    second = timer.measure(lambda: spin(40), label="b")
    assert (first.label, second.label) == ("a", "b")
    assert first.mode == second.mode == "hot"
    with pytest.raises(AttributeError):
        timer.mode = "cold"  # type: ignore[misc]


def test_hot_mode_names_the_hot_l2_anti_pattern_when_inputs_fit() -> None:
    small = [(np.zeros(1000, dtype=np.float32),)]
    m = measure(lambda x: None, inputs=small, mode="hot", l2_bytes=1 << 20, **FAST)  # type: ignore[arg-type]
    assert any(note.startswith("hot-l2-timing: the 4000 input bytes") for note in m.notes)
    big = measure(lambda x: None, inputs=small, mode="hot", l2_bytes=1000, **FAST)  # type: ignore[arg-type]
    assert not any("hot-l2-timing" in note for note in big.notes)


def test_timing_something_that_is_not_callable_says_so() -> None:
    calls: list[int] = []
    # measure(kernel(x)) passes the call's result instead of the call.
    with pytest.raises(InputError, match=r"fn: Expected a callable to time, got int"):
        measure(calls.append(1) or 5, **FAST)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"fn: Expected a callable to time, got NoneType"):
        Timer(**FAST).measure(None, inputs=[(1,)])  # type: ignore[arg-type]
    assert calls == [1]


def test_the_l2_size_without_cuda_says_a_device_was_expected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without CUDA, torch raised "AssertionError: Torch not compiled with CUDA enabled".
    from kernelopt.bench import timer

    monkeypatch.setattr(timer, "cuda_available", lambda: False)
    with pytest.raises(DeviceError, match=r"^Expected a CUDA device to read the L2 size of, got"):
        timer.device_l2_bytes()


@pytest.mark.parametrize("field", ["warmup_ms", "max_time_ms", "settle_ms"])
def test_a_flag_is_no_duration(field: str) -> None:
    # True is an int to Python: warmup_ms=True was taken as 1 ms.
    with pytest.raises(
        InputError, match=rf"^{field}: Expected a (positive number|number >= 0), got True"
    ):
        Timer(**{field: True})  # type: ignore[arg-type]


def test_a_cold_host_timing_is_labelled_host_no_flush() -> None:
    m = measure(lambda: spin(20), **FAST)  # type: ignore[arg-type]
    assert m.mode == "cold" and m.cache == "none"
    assert "(host, no flush, n=" in m.summary() and "(cold, " not in m.summary()


def test_a_call_longer_than_the_time_cap_says_it_gave_one_sample() -> None:
    m = measure(lambda: spin(20_000), max_time_ms=1.0, warmup_ms=1.0, backend="cpu-perf-counter")
    assert m.n == 1 and m.stop_reason == "time_cap"
    assert "time cap 1 ms reached after the first sample (min_samples 10 not met)" in m.notes
