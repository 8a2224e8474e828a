"""A config's whole point is selected by any spelling the point grammar reads as it.

A benchmark keeps its whole trial point under the config key ``point``
(``"b=32 s=1 h=128 t=4096"``), and a selection names it quoted:
``point="b=32 s=1 h=128 t=4096"``. The two texts were compared character for character,
so the same point with another spacing (``"b=32  s=1 h=128 t=4096"``, a space at the
end, ``b = 32``) matched no row, and the user was told only "got none". They are now
compared as the point grammar reads them; a different point (``b=320``) or a quoted value
with other inner spaces (``kv="fp8  e4m3"``) still matches nothing, and the refusal names
the points the rows hold.
"""

from __future__ import annotations

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import BenchRow
from kernelopt.experiments.points import term_text
from kernelopt.workflow import select_row
from kernelopt.workflow.observe import config_matches

WIDE = "b=32 s=1 h=128 t=4096"
NARROW = "b=32 s=1 h=16 t=4096"
# point_text writes b, s and t first, then the other axes: the names --point takes.
KNOWN = "['b=32 s=1 t=4096 h=128', 'b=32 s=1 t=4096 h=16']"


def _row(impl: str, config: dict[str, int | str]) -> BenchRow:
    """A row of ``impl`` at ``config``, its timing of no interest here."""
    return BenchRow(op="mla_decode", impl=impl, config=config, n=100, median=60.0)


def _rows() -> list[BenchRow]:
    """A row at each of two points that the configs also keep whole under ``point``."""
    return [
        _row("triton", {"b": 32, "s": 1, "t": 4096, "h": 128, "point": WIDE}),
        _row("triton", {"b": 32, "s": 1, "t": 4096, "h": 16, "point": NARROW}),
    ]


@pytest.mark.parametrize(
    "spelled",
    [
        "b=32  s=1 h=128 t=4096",  # two spaces between terms
        "b=32 s=1 h=128 t=4096 ",  # a space at the end
        " b=32 s=1 h=128 t=4096",  # a space at the start
        "b = 32 s=1 h=128 t=4096",  # spaces around "="
        "b=32, s=1, h=128, t=4096",  # the grammar's commas
        "b=32 s=1 h_q=128 t=4096",  # another name of the axis h
        "b=32 s=1 t=4096 h=128",  # the order point_text writes
    ],
)
def test_select_row_reads_the_whole_point_as_the_grammar_does(spelled: str) -> None:
    chosen = select_row(_rows(), point=term_text("point", spelled))
    assert chosen.config["point"] == WIDE


def test_config_matches_reads_a_whole_point_as_the_grammar_does() -> None:
    # The learn command, targets and profiles from rows select through config_matches.
    config = {"b": 32, "point": WIDE}
    assert config_matches(config, {"point": "b=32  s=1 h=128 t=4096 "})
    assert not config_matches(config, {"point": "b=320 s=1 h=128 t=4096"})


@pytest.mark.parametrize(
    "other",
    [
        "b=320 s=1 h=128 t=4096",  # b=32 is not b=320
        "b=32 s=1 h=12 t=4096",  # nor h=128 h=12
        "b=32 s=1 h=128",  # a term left out is another point
        "b=32 b=32 s=1 h=128 t=4096",  # a term twice is no point these rows hold
    ],
)
def test_another_point_matches_nothing_and_the_known_points_are_named(other: str) -> None:
    asked = term_text("point", other)
    with pytest.raises(InputError) as refused:
        select_row(_rows(), point=asked)
    assert str(refused.value) == f"rows: Expected one of {KNOWN}, got point {asked!r}"


def test_a_quoted_value_in_the_point_keeps_its_inner_spaces() -> None:
    rows = [
        _row("triton", {"b": 32, "point": 'b=32 kv="fp8 e4m3"'}),
        _row("triton", {"b": 32, "point": "b=32 kv=fp8"}),
    ]
    # Outside the quotes, spacing is no part of the point...
    outer = term_text("point", 'b=32   kv="fp8 e4m3" ')
    assert select_row(rows, point=outer).config["point"] == 'b=32 kv="fp8 e4m3"'
    # ...inside them it is part of the value: "fp8  e4m3" is another format.
    inner = term_text("point", 'b=32 kv="fp8  e4m3"')
    with pytest.raises(InputError) as refused:
        select_row(rows, point=inner)
    known = """['b=32 kv="fp8 e4m3"', 'b=32 kv=fp8']"""
    assert str(refused.value) == f"rows: Expected one of {known}, got point {inner!r}"


def test_a_value_other_than_the_whole_point_is_compared_as_written() -> None:
    rows = [_row("triton", {"b": 32, "kv": "fp8 e4m3"}), _row("triton", {"b": 32, "kv": "fp8"})]
    asked = 'kv="fp8  e4m3"'
    with pytest.raises(InputError) as refused:
        select_row(rows, point=asked)
    known = """['b=32 kv="fp8 e4m3"', 'b=32 kv=fp8']"""
    assert str(refused.value) == f"rows: Expected one of {known}, got point {asked!r}"


def test_the_known_points_are_those_of_the_implementation_asked_for() -> None:
    rows = [*_rows(), _row("cuda", {"b": 64, "s": 1, "t": 4096, "h": 16, "point": "b=64"})]
    asked = term_text("point", "b=64 s=1 h=16 t=4096")
    with pytest.raises(InputError) as refused:
        select_row(rows, point=asked, impl="triton")
    assert str(refused.value) == (
        f"rows: Expected one of {KNOWN} (the points of the rows of impl 'triton'), "
        f"got point {asked!r}"
    )
