"""The trial matrix and the OOM fallback that halves b and says so."""

from __future__ import annotations

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import DEFAULT_POINTS, Timer, TrialPoint, run_trials, trial_matrix
from kernelopt.bench.trials import DECODE, SPECULATIVE, is_out_of_memory

CPU = Timer(backend="cpu-perf-counter", warmup_ms=1.0, max_time_ms=5.0)


def test_default_points_are_the_seed_matrix() -> None:
    assert [str(p) for p in DEFAULT_POINTS] == ["b=32 s=1 t=4096", "b=32 s=16 t=4096"]
    assert (DECODE.name, SPECULATIVE.name) == ("decode", "speculative")


def test_extra_points_and_axes() -> None:
    stress = TrialPoint(b=64, s=4, t=32768, name="stress")
    points = trial_matrix(extra_points=[stress], axes={"h": (128, 16)})
    assert [str(p) for p in points][-2:] == ["b=64 s=4 t=32768 h=128", "b=64 s=4 t=32768 h=16"]
    assert len(points) == 6
    assert trial_matrix(extra_points=[stress], include_defaults=False) == (stress,)
    with pytest.raises(InputError, match="at least one trial point"):
        trial_matrix(include_defaults=False)
    with pytest.raises(InputError, match="axis 'h'"):
        trial_matrix(axes={"h": ()})


def test_points_validate_their_axes() -> None:
    with pytest.raises(InputError, match="b: Expected an integer >= 1"):
        TrialPoint(b=0, s=1, t=1)
    assert TrialPoint(b=2, s=1, t=8, extra={"h": 16}).as_dict() == {"b": 2, "s": 1, "t": 8, "h": 16}
    # b, s and t are the point's own fields: an extra copy would label one value and pass
    # the factory another.
    with pytest.raises(InputError, match="extra axes other than b, s and t"):
        TrialPoint(b=2, s=1, t=8, extra={"t": 16})
    with pytest.raises(InputError, match=r"extra\['h'\]: Expected an int"):
        TrialPoint(b=2, s=1, t=8, extra={"h": "16"})  # type: ignore[dict-item]


def test_axes_named_b_s_or_t_set_those_fields() -> None:
    points = trial_matrix(axes={"b": (1, 8)})
    assert [(str(p), p.b) for p in points[:2]] == [("b=1 s=1 t=4096", 1), ("b=8 s=1 t=4096", 8)]
    for bad in ({"h": 16}, {"h": "ab"}):
        with pytest.raises(InputError, match="Expected a sequence of ints for axis 'h'"):
            trial_matrix(axes=bad)  # type: ignore[arg-type]


def test_oom_errors_are_recognised() -> None:
    assert is_out_of_memory(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate"))
    assert is_out_of_memory(RuntimeError("CUDA error: out of memory"))
    assert not is_out_of_memory(RuntimeError("illegal memory access"))
    assert not is_out_of_memory(ValueError("out of memory"))


def fits_up_to(limit: int) -> object:
    """A fake kernel factory that runs out of device memory above batch ``limit``."""

    def make(point: TrialPoint) -> object:
        if point.b > limit:
            raise torch.OutOfMemoryError(f"CUDA out of memory at b={point.b}")
        return lambda: None

    return make


def test_b_is_halved_until_the_point_fits_and_the_row_says_so() -> None:
    results = run_trials(fits_up_to(8), impl="v1", timer=CPU)  # type: ignore[arg-type]
    assert [r.point.b for r in results] == [8, 8]
    first = results[0]
    assert first.reduced and first.requested.b == 32 and first.error is None
    assert first.note == "b halved 32 -> 8 after CUDA OOM"
    row = first.result_row()
    assert row.point == "b=8 s=1 t=4096 (b halved 32 -> 8 after CUDA OOM)" and row.impl == "v1"
    bench = first.bench_row(op="fake")
    assert bench.config["b"] == 8 and bench.config["b_requested"] == 32
    assert bench.note.startswith("b halved 32 -> 8")


def test_a_point_that_never_fits_is_recorded_not_raised() -> None:
    results = run_trials(fits_up_to(2), timer=CPU, min_b=4)  # type: ignore[arg-type]
    assert all(r.measurement is None for r in results)
    assert results[0].error == "CUDA out of memory down to b=4 (min_b 4)"
    with pytest.raises(InputError, match="a measured trial"):
        results[0].result_row()


def test_other_errors_do_not_stop_the_matrix() -> None:
    def make(point: TrialPoint) -> object:
        if point.s == 1:
            raise ValueError("unsupported\nsecond line")
        return lambda: None

    results = run_trials(make, timer=CPU)  # type: ignore[arg-type]
    assert results[0].error == "ValueError: unsupported"
    assert results[1].measurement is not None and not results[1].reduced
    assert results[1].note == ""


def test_an_empty_point_list_or_min_b_below_1_is_refused() -> None:
    with pytest.raises(InputError, match="at least one trial point"):
        run_trials(lambda point: lambda: None, impl="v", points=[])
    with pytest.raises(InputError, match="min_b: Expected min_b as an int >= 1, got 0"):
        run_trials(lambda point: lambda: None, impl="v", min_b=0)
