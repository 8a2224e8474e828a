"""The trial matrix and the OOM fallback that halves b and says so."""

from __future__ import annotations

import weakref
from collections.abc import Callable

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import (
    DEFAULT_POINTS,
    Measurement,
    Timer,
    TrialCall,
    TrialPoint,
    run_trials,
    trial_matrix,
)
from kernelopt.bench.trials import DECODE, SPECULATIVE, TrialsInterrupted, is_out_of_memory

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
    results = run_trials(fits_up_to(2), timer=CPU, min_b=4, impl="k")  # type: ignore[arg-type]
    assert all(r.measurement is None for r in results)
    assert results[0].error == "CUDA out of memory down to b=4 (min_b 4)"
    with pytest.raises(InputError, match="a measured trial"):
        results[0].result_row()


def test_other_errors_do_not_stop_the_matrix() -> None:
    def make(point: TrialPoint) -> object:
        if point.s == 1:
            raise ValueError("unsupported\nsecond line")
        return lambda: None

    results = run_trials(make, timer=CPU, impl="k")  # type: ignore[arg-type]
    assert results[0].error == "ValueError: unsupported; second line"
    assert results[1].measurement is not None and not results[1].reduced
    assert results[1].note == ""


def test_an_empty_point_list_or_min_b_below_1_is_refused() -> None:
    with pytest.raises(InputError, match="at least one trial point"):
        run_trials(lambda point: lambda: None, impl="v", points=[])
    with pytest.raises(InputError, match="min_b: Expected min_b as an int >= 1, got 0"):
        run_trials(lambda point: lambda: None, impl="v", min_b=0)


class FakeTimer:
    """Times nothing: records what it was asked to time and gives one sample of 1 us."""

    def __init__(self) -> None:
        self.timed: list[str] = []

    def measure(
        self, fn: object, *, outputs: object = None, written: object = None, label: str = ""
    ) -> Measurement:
        self.timed.append(label)
        return Measurement(samples=[1.0], backend="cpu-perf-counter")


def test_every_point_runs_and_an_incorrect_one_is_recorded_untimed() -> None:
    timer = FakeTimer()
    points = [DECODE, SPECULATIVE, TrialPoint(b=4, s=2, t=64)]

    def make(point: TrialPoint) -> TrialCall:
        return TrialCall(fn=lambda: point.s, check=lambda result: result != 16)

    results = run_trials(make, points=points, impl="v1", timer=timer)  # type: ignore[arg-type]
    assert [r.requested for r in results] == points
    assert results[1].measurement is None
    # The check is named, and where it is: a bare False said nothing of what was checked.
    line = make.__code__.co_firstlineno + 1
    assert results[1].error == f"incorrect: check <lambda> (test_trials.py:{line}) returned False"
    assert results[0].measurement is not None and results[2].measurement is not None
    assert timer.timed == ["v1 b=32 s=1 t=4096", "v1 b=4 s=2 t=64"]


def test_the_check_sees_outputs_the_call_wrote_after_they_were_poisoned() -> None:
    out = torch.zeros(4)

    def make(point: TrialPoint) -> TrialCall:
        def write_half() -> None:
            out[: 2 if point.s == 1 else 4] = 1.0

        def check(_: object) -> None:
            torch.testing.assert_close(out, torch.ones(4))

        return TrialCall(fn=write_half, outputs=out, check=check)

    results = run_trials(make, timer=FakeTimer(), impl="k")  # type: ignore[arg-type]
    # A zeroed buffer would have hidden the two elements the decode call never wrote.
    assert results[0].error is not None
    assert results[0].error.startswith("incorrect: AssertionError: Tensor-likes are not close!")
    assert results[1].error is None and results[1].measurement is not None


def test_a_check_out_of_memory_halves_b_like_the_call() -> None:
    def make(point: TrialPoint) -> TrialCall:
        def check(_: object) -> bool:
            if point.b > 8:  # the float64 reference does not fit
                raise torch.OutOfMemoryError("CUDA out of memory")
            return True

        return TrialCall(fn=lambda: None, check=check)

    results = run_trials(make, timer=FakeTimer(), impl="k")  # type: ignore[arg-type]
    assert [r.point.b for r in results] == [8, 8] and all(r.measurement for r in results)


def test_the_inputs_of_a_point_that_ran_out_of_memory_are_freed_before_the_retry() -> None:
    # The call was built (its inputs allocated) and ran out of memory while timed: those
    # inputs must be gone before the halved point allocates its own, or they still fill
    # the device when the smaller batch tries to fit.
    class Inputs:
        def __init__(self, b: int) -> None:
            self.b = b

    alive_at_retry: list[list[int]] = []
    refs: list[weakref.ref[Inputs]] = []

    def make(point: TrialPoint) -> TrialCall:
        alive_at_retry.append([ref().b for ref in refs if ref() is not None])  # type: ignore[union-attr]
        inputs = Inputs(point.b)
        refs.append(weakref.ref(inputs))

        def call() -> None:
            if inputs.b > 8:
                raise torch.OutOfMemoryError("CUDA out of memory")

        return TrialCall(fn=call)

    results = run_trials(make, points=[TrialPoint(b=32, s=1, t=64)], timer=CPU, impl="k")
    assert results[0].point.b == 8 and results[0].measurement is not None
    assert alive_at_retry == [[], [], []]


def test_a_trials_bench_row_carries_the_commit_of_the_folder_it_is_asked_for(
    tmp_path, monkeypatch
) -> None:
    import subprocess

    from kernelopt.bench import Measurement, TrialPoint
    from kernelopt.bench.trials import TrialResult

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    git("init", "-q")
    (tmp_path / "k.py").write_text("x = 1\n")
    git("add", "k.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "k")
    monkeypatch.chdir(tmp_path.parent)
    point = TrialPoint(b=32, s=1, t=4096)
    trial = TrialResult(
        requested=point, point=point, impl="k", measurement=Measurement(samples=[1.0, 2.0])
    )
    assert trial.bench_row(op="o", directory=tmp_path).commit == git("rev-parse", "HEAD")


def test_a_lone_point_or_a_point_of_another_kind_is_refused() -> None:
    # A lone TrialPoint raised "TypeError: object of type 'TrialPoint' has no len()", and a
    # dict was timed as a point whose batch could never be halved.
    made: list[object] = []
    with pytest.raises(
        InputError, match=r"^points: Expected a list of TrialPoint, got TrialPoint$"
    ):
        run_trials(
            lambda point: made.append(point) or (lambda: None),
            points=DECODE,  # type: ignore[arg-type]
            impl="k",
        )
    with pytest.raises(InputError, match=r"^points\[1\]: Expected a TrialPoint, got dict$"):
        run_trials(
            lambda point: made.append(point) or (lambda: None),
            points=[DECODE, {"b": 1}],  # type: ignore[list-item]
            impl="k",
        )
    assert made == []


def test_an_interrupt_keeps_the_points_timed_before_it() -> None:
    # Ctrl-C on the third point lost the two already timed.
    stress = TrialPoint(b=64, s=4, t=32768, name="stress")

    def make(point: TrialPoint) -> Callable[[], None]:
        if point == stress:
            raise KeyboardInterrupt
        return lambda: None

    with pytest.raises(TrialsInterrupted) as caught:
        points = [DECODE, SPECULATIVE, stress, TrialPoint(b=8, s=1, t=1024)]
        run_trials(make, points=points, impl="v", timer=FakeTimer())  # type: ignore[arg-type]
    assert isinstance(caught.value, KeyboardInterrupt)
    results = caught.value.results
    assert [result.point for result in results] == [DECODE, SPECULATIVE]
    assert all(result.measurement is not None for result in results)
