"""A trial name given as a Target point says what it stands for when no row holds it.

``Target(points=("decode",))`` on rows of ``tokens=...`` points reported ``decode |
missing (no v3 row)``: nothing said that ``decode`` is MLA's ``b=32 s=1 t=4096``, nor how
to name the rows' own points.
"""

from __future__ import annotations

import ast

from kernelopt.bench import BenchRow
from kernelopt.workflow import Status, Target, evaluate


def _row(tokens: int) -> BenchRow:
    return BenchRow(
        op="fp8_quant",
        impl="v3",
        config={"tokens": tokens, "hidden": 7168},
        median=10.0,
        gpu="NVIDIA H100",
        metrics={"floor_pct": 50.0},
    )


def test_an_unmatched_trial_name_says_its_point_and_the_rows_points() -> None:
    result = evaluate(Target(floor_pct=80, points=("decode",)), [_row(64), _row(4096)])
    check = result.points[0].checks[0]
    assert check.status is Status.MISSING
    assert check.note == (
        "no v3 row at decode, the trial point b=32 s=1 t=4096; name the rows' own points by "
        "their terms instead: points=('hidden=7168 tokens=64', 'hidden=7168 tokens=4096')"
    )
    assert "the trial point b=32 s=1 t=4096" in result.render()


def test_the_suggested_terms_select_the_rows_point() -> None:
    result = evaluate(Target(floor_pct=80, points=("hidden=7168 tokens=64",)), [_row(64)])
    assert result.points[0].checks[0].value == 50.0


def test_unmatched_terms_keep_the_short_note() -> None:
    result = evaluate(Target(floor_pct=80, points=("tokens=8",)), [_row(64)])
    assert result.points[0].checks[0].note == "no v3 row"


def test_one_suggested_point_is_a_tuple_target_takes() -> None:
    # "points=('hidden=7168 tokens=64')" is a str, which Target refuses.
    result = evaluate(Target(floor_pct=80, points=("decode",)), [_row(64)])
    note = result.points[0].checks[0].note
    assert note.endswith("points=('hidden=7168 tokens=64',)")
    suggested = ast.literal_eval(note.rpartition("points=")[2])
    assert evaluate(Target(floor_pct=80, points=suggested), [_row(64)]).points[0].checks[0].value
