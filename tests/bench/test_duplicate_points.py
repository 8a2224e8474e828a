"""Each trial point once: a point reached twice is refused before anything is timed.

A point timed twice gives two rows of one point, kernel and mode, which the readers of the
rows refuse: refused at the start instead of after the timings, on any machine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import kernelopt.bench.mla
from kernelopt import cli
from kernelopt._errors import InputError
from kernelopt.bench import TrialPoint, mla_trial_matrix, trial_matrix
from kernelopt.bench.roofline import Ceilings

CEILINGS = Ceilings(gpu="test", copy_bytes_per_s=1e12, matmul_flop_per_s=1e14)


# -- trial_matrix ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("axes", "why"),
    [
        ({"h": (16, 16)}, "axes: Expected each value of axis 'h' once, got (16, 16) (16 twice)"),
        ({"h": [128, 16, 128]}, "axis 'h' once, got [128, 16, 128] (128 twice)"),
        ({"b": (1, 8, 1)}, "axes: Expected each value of axis 'b' once, got (1, 8, 1) (1 twice)"),
        ({"h": (128, 16), "t": (64, 64)}, "axis 't' once, got (64, 64) (64 twice)"),
    ],
)
def test_an_axis_listing_a_value_twice_is_refused(
    axes: Mapping[str, Sequence[int]], why: str
) -> None:
    with pytest.raises(InputError, match=re.escape(why)):
        trial_matrix(axes=axes)


def test_an_extra_point_listed_twice_is_refused() -> None:
    stress = TrialPoint(b=64, s=4, t=32768, name="stress")
    again = TrialPoint(b=64, s=4, t=32768, name="another name, the same point")
    why = (
        "extra_points[1]: Expected each point once, got b=64 s=4 t=32768 again (as extra_points[0])"
    )
    with pytest.raises(InputError, match=re.escape(why)):
        trial_matrix(extra_points=[stress, again], axes={"h": (128, 16)})
    with pytest.raises(InputError, match=re.escape(why)):
        trial_matrix(extra_points=[stress, stress], include_defaults=False)


def test_an_extra_point_equal_to_a_default_one_is_refused() -> None:
    decode = TrialPoint(b=32, s=1, t=4096, name="mine")
    with pytest.raises(
        InputError,
        match=re.escape("extra_points[0]: Expected extra points other than the default ones"),
    ) as raised:
        trial_matrix(extra_points=[decode])
    assert str(raised.value).endswith("got b=32 s=1 t=4096, the decode point")
    # Without the defaults the same point is the caller's own, listed once.
    assert [str(p) for p in trial_matrix(extra_points=[decode], include_defaults=False)] == [
        "b=32 s=1 t=4096"
    ]


def test_axes_that_make_two_points_one_are_refused() -> None:
    # s=1 for every point makes the speculative point the decode point.
    why = (
        "axes: Expected axes that keep the points apart, got b=32 s=1 t=4096 twice "
        "(made from b=32 s=1 t=4096 and b=32 s=16 t=4096)"
    )
    with pytest.raises(InputError, match=re.escape(why)):
        trial_matrix(axes={"s": (1,)})
    # An h the axis then overwrites: the extra point becomes the decode point at h=16.
    mine = TrialPoint(b=32, s=1, t=4096, extra={"h": 64})
    with pytest.raises(InputError, match=re.escape("got b=32 s=1 t=4096 h=16 twice")):
        trial_matrix(extra_points=[mine], axes={"h": (16,)})


def test_distinct_points_and_values_still_cross() -> None:
    stress = TrialPoint(b=64, s=4, t=32768, name="stress")
    points = trial_matrix(extra_points=[stress], axes={"h": (128, 16), "b": (1, 2)})
    spellings = [str(p) for p in points]
    assert len(spellings) == len(set(spellings)) == 12


# -- mla_trial_matrix -------------------------------------------------------------------------


def _no_device(*_args: object, **_kwargs: object) -> Any:
    raise AssertionError("the kernels or the device were looked for before the points")


def test_mla_trial_matrix_refuses_a_point_twice_before_the_kernels_and_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each point runs alone through run_trials, whose own check never sees the repeat.
    monkeypatch.setattr(kernelopt.bench.mla, "load_mla", _no_device)
    monkeypatch.setattr(kernelopt.bench.mla, "cuda_available", _no_device)
    tiny = TrialPoint(b=2, s=2, t=64, extra={"h": 16})
    why = "points[2]: Expected each point once, got b=2 s=2 t=64 h=16 again (as points[0])"
    with pytest.raises(InputError, match=re.escape(why)):
        mla_trial_matrix(
            points=[tiny, tiny.with_b(4), TrialPoint(b=2, s=2, t=64, extra={"h": 16}, name="x")],
            device="cpu",
            dtype="float32",
            ceilings=CEILINGS,
        )
    with pytest.raises(
        InputError, match=re.escape("heads: Expected each head count once, got (16, 16) (16 twice)")
    ):
        mla_trial_matrix(heads=(16, 16))


# -- kernelopt bench mla ----------------------------------------------------------------------


class _Recorder:
    """Stands in for mla_trial_matrix: records the points it was given, times nothing."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, *, points: Sequence[TrialPoint]) -> list[object]:
        self.calls.append([str(p) for p in points])
        return []


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (
            ["--extra-point", "b=1,s=1,t=64", "--extra-point", "b=1,s=1,t=64"],
            "--extra-point: Expected each point once, got 'b=1,s=1,t=64' twice",
        ),
        (
            [
                "--heads",
                "16",
                "--extra-point",
                "b=1,s=1,t=64,h=16",
                "--extra-point",
                "t=64,s=1,b=1",
            ],
            "--extra-point: Expected each point once, "
            "got 'b=1,s=1,t=64,h=16' and 't=64,s=1,b=1', both b=1 s=1 t=64 h=16",
        ),
        (
            ["--trial-matrix", "--extra-point", "b=32,s=1,t=4096"],
            "--extra-point: Expected extra points the trial matrix does not time already, "
            "got 'b=32,s=1,t=4096', the matrix's decode point b=32 s=1 t=4096 h=128",
        ),
        (
            ["--trial-matrix", "--heads", "16", "--extra-point", "b=32,s=16,t=4096,h=16"],
            "got 'b=32,s=16,t=4096,h=16', the matrix's speculative point b=32 s=16 t=4096 h=16",
        ),
    ],
)
def test_bench_mla_refuses_a_point_reached_twice_before_running(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    why: str,
) -> None:
    ran = _Recorder()
    monkeypatch.setattr(kernelopt.bench.mla, "mla_trial_matrix", ran)
    monkeypatch.setattr(kernelopt.bench.mla, "cuda_available", _no_device)
    assert cli.main(["bench", "mla", *argv]) == 2
    assert why in capsys.readouterr().err
    assert ran.calls == []


def test_bench_mla_passes_distinct_points_on(monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _Recorder()
    monkeypatch.setattr(kernelopt.bench.mla, "mla_trial_matrix", ran)
    argv = ["bench", "mla", "--trial-matrix", "--heads", "16"]
    argv += ["--extra-point", "b=1,s=1,t=64", "--extra-point", "b=1,s=1,t=64,h=128"]
    assert cli.main(argv) == 0
    assert ran.calls == [
        ["b=32 s=1 t=4096 h=16", "b=32 s=16 t=4096 h=16", "b=1 s=1 t=64 h=16", "b=1 s=1 t=64 h=128"]
    ]
