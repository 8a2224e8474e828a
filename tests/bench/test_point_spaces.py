"""A point given as a mapping is written ``key=value`` words that a result.md, the devlog and
``evaluate`` split at spaces, commas and semicolons outside double quotes: ``{"kv": "fp8
e4m3"}`` was written ``kv=fp8 e4m3`` and read back as the axis ``kv=fp8`` and a name, the
same point as ``{"kv": "fp8 e5m2"}``. Such a value is now written quoted,
``kv="fp8 e4m3"``, and read back whole; an axis name that would not read back, or an empty
name or value, is refused before anything is written; points whose terms read back as
written are written as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import Measurement, TrialPoint, to_result_row, write_experiment
from kernelopt.experiments import read_log
from kernelopt.experiments.points import point_terms

M = Measurement(samples=[10.0, 11.0, 12.0])
WHAT = "point: Expected point axes and values that read back as written: not empty, without"


@pytest.mark.parametrize(
    ("point", "got"),
    [
        ({"b": 2, "kv": ""}, "'kv': ''"),
        ({"b": 2, "head dim": 576}, "'head dim': '576'"),
        ({"b": 2, "h=q": 16}, "'h=q': '16'"),
    ],
    ids=repr,
)
def test_a_point_whose_terms_read_back_as_others_is_refused(
    point: dict[str, object], got: str
) -> None:
    with pytest.raises(InputError, match=f"^{WHAT} .*, got {got}$"):
        to_result_row(M, point=point, impl="k")


def test_a_value_that_would_glue_the_next_term_to_it_is_written_quoted() -> None:
    # "a=x=" glues the next word to itself when read: a=x=c=2, one term.
    assert to_result_row(M, point={"a": "x=", "c": 2}, impl="k").point == 'a="x=" c=2'


@pytest.mark.parametrize(
    "point",
    [
        {"b": 2, "s": 1, "t": 8, "kv": "fp8_e4m3"},
        {"b": 32, "shape": "4x576", "dtype": "bfloat16"},
        {"b": 1, "t": "~4096", "ratio": 0.5, "causal": True},
        {"cfg": "a=b"},
        {"b": 2, "kv": "fp8 e4m3"},
        {"b": 2, "kv": "fp8\te4m3"},
        {"b": 2, "kv": "fp8,e4m3"},
        {"b": 2, "kv": "fp8;e4m3"},
        {"b": 2, "t": "4,096"},
        {"b": 2, "kv": "(fp8)"},
    ],
    ids=repr,
)
def test_a_point_whose_terms_read_back_is_written_and_read_as_itself(
    point: dict[str, object], tmp_path: Path
) -> None:
    row = to_result_row(M, point=point, impl="k")
    write_experiment(
        tmp_path, experiment=0, title="v0", rows=[row], status="BASELINE", correctness="PASS"
    )
    (experiment,) = read_log(tmp_path).experiments
    assert experiment.headline_point == row.point
    assert point_terms(experiment.headline_point) == {
        key: str(value) for key, value in point.items()
    }


@pytest.mark.parametrize(
    ("point", "written"),
    [
        ("decode  large", "decode large"),  # a named point: text, kept as written
        ("b=2 kv=fp8 e4m3", "b=2 kv=fp8 e4m3"),  # the caller's own words, as they read back
        ("rows=4 cols=4096", "cols=4096 rows=4"),
        (TrialPoint(b=2, s=1, t=8, extra={"h": 16}), "b=2 s=1 t=8 h=16"),
    ],
    ids=repr,
)
def test_points_spelled_before_are_written_as_before(point: object, written: str) -> None:
    assert to_result_row(M, point=point, impl="k").point == written
