"""Budgets, argument checks and refusals across kernelopt.bench, each pinned by a case."""

from __future__ import annotations

import codecs
import json
import math
import re
import tracemalloc
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.bench import (
    BenchRow,
    Ceilings,
    Cost,
    Measurement,
    Roofline,
    Timer,
    TrialPoint,
    _serde,
    append_rows,
    judge,
    read_rows,
    run_trials,
    tune,
)
from kernelopt.bench.tuning import iter_space


class ClockTimer:
    """Times nothing (1 µs each) and advances a fake clock that ``tune`` reads."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timed = 0

    def clock(self) -> float:
        return self.now

    def measure(self, fn: Callable[[], object], *, label: str = "", **_: Any) -> Measurement:
        fn()
        self.timed += 1
        return Measurement(samples=[1.0], backend="cpu-perf-counter")


def _built(log: list[dict[str, Any]]) -> Callable[[Mapping[str, Any]], Callable[[], None]]:
    def build(config: Mapping[str, Any]) -> Callable[[], None]:
        log.append(dict(config))
        return lambda: None

    return build


HUGE = {f"k{i}": list(range(10)) for i in range(8)}  # 10^8 configs


# -- tune: counting the pruned space respects the budget ---------------------------------


def test_counting_a_huge_space_leaves_the_budget_to_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    timer = ClockTimer()
    monkeypatch.setattr("kernelopt.bench.tuning.time.perf_counter", timer.clock)
    calls = {"rule": 0}

    def slow_rule(config: Mapping[str, Any]) -> bool:
        calls["rule"] += 1
        timer.now += 1e-3  # a rule costing 1 ms of the fake clock
        return True

    built: list[dict[str, Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = tune(
            _built(built), HUGE, rules=[slow_rule], budget_s=10.0, timer=timer, patience=10**9
        )  # type: ignore[arg-type]
    # Counting takes at most a tenth of the budget (1 000 rule calls of 1 ms), so the
    # search gets the rest: it once ran a million rules and started no config at all.
    assert built and result.evaluated >= 1000
    assert result.stop_reason == "budget"
    assert result.warnings and result.warnings[0].startswith(
        "autotune-explosion: at least 1000 configs survive pruning"
    )


def test_counting_stops_once_the_warning_is_decided() -> None:
    calls = {"rule": 0}

    def rule(config: Mapping[str, Any]) -> bool:
        calls["rule"] += 1
        return True

    built: list[dict[str, Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tune(_built(built), HUGE, rules=[rule], budget_s=60.0, timer=ClockTimer(), patience=1)  # type: ignore[arg-type]
    # Patience 1 stops the search after two configs: the rest of the calls were counting,
    # which once visited a million configs of a space this size.
    assert len(built) == 2
    assert calls["rule"] <= 10_000 + len(built)


def test_random_order_draws_its_first_config_without_shuffling_the_space() -> None:
    space = {f"k{i}": list(range(10)) for i in range(6)}  # 10^6: shuffled, not affine
    tracemalloc.start()
    try:
        first = next(iter_space(space, order="random", seed=0))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert set(first) == set(space)
    assert peak < 1_000_000, peak  # a sample of a million numbers took tens of MB


def test_random_order_still_visits_each_config_once_in_a_seeded_order() -> None:
    space = {"a": [1, 2, 3, 4], "b": [5, 6, 7], "c": [8, 9, 10, 11, 12]}
    visited = [tuple(c.values()) for c in iter_space(space, order="random", seed=5)]
    given = [tuple(c.values()) for c in iter_space(space)]
    assert sorted(visited) == sorted(given) and visited != given
    assert visited == [tuple(c.values()) for c in iter_space(space, order="random", seed=5)]


# -- tune: every argument is checked before anything is built ----------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"order": "x"}, "order 'given' or 'random', got 'x'"),
        ({"order": "random", "seed": "abc"}, "seed as an int, got 'abc'"),
        ({"rules": [3]}, "each rule a callable, got 3"),
        ({"check": 3}, "check as a callable or None, got 3"),
    ],
)
def test_a_bad_argument_is_refused_before_the_start_is_built(
    kwargs: dict[str, Any], match: str
) -> None:
    built: list[dict[str, Any]] = []
    with pytest.raises(InputError, match=match):
        tune(_built(built), {"k": [1, 2]}, start={"k": 1}, budget_s=5, timer=ClockTimer(), **kwargs)  # type: ignore[arg-type]
    assert built == []


# -- benchmark rows: an inverted band is refused on write and on read --------------------


def test_a_row_with_p20_above_p80_is_refused_when_made() -> None:
    with pytest.raises(InputError, match=re.escape("Expected p20 <= p80, got p20=300.0 > p80=1.0")):
        BenchRow(op="x", impl="a", median=74.0, p20=300.0, p80=1.0)
    with pytest.raises(InputError, match=re.escape("Expected min <= p20, got min=80.0 > p20=73.0")):
        BenchRow(op="x", impl="a", median=74.0, p20=73.0, p80=75.0, min=80.0)
    # A row written with its median alone (no band) still reads.
    assert BenchRow(op="x", impl="a", median=74.0, min=70.0).p80 == 0.0


def test_a_line_with_p20_above_p80_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    good = {"op": "x", "impl": "a", "median": 74.0, "p20": 73.0, "p80": 75.0}
    bad = {"op": "x", "impl": "b", "median": 66.5, "p20": 300.0, "p80": 1.0}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"rows\.jsonl:2: .*Expected p20 <= p80, got p20=300\.0"):
        read_rows(path)


# -- judge: min_effect in [0, 1) ----------------------------------------------------------


@pytest.mark.parametrize("min_effect", [1, 1.0, 2, 1.5])
def test_judge_refuses_a_min_effect_no_speedup_can_reach(min_effect: float) -> None:
    with pytest.raises(InputError, match=re.escape("Expected min_effect in [0, 1), got")):
        judge([10.0] * 30, [5.0] * 30, min_effect=min_effect)


def test_judge_still_takes_a_min_effect_below_one() -> None:
    assert judge([10.0] * 30, [5.0] * 30, min_effect=0.99).verdict.value == "SAME"
    assert judge([10.0] * 30, [5.0] * 30, min_effect=0.4).verdict.value == "FAST"


# -- append_rows: only onto a UTF-8 file, with what stands in the way named ---------------

ROW = BenchRow(op="x", impl="b", median=2.0)


@pytest.mark.parametrize(
    "bom, encoding", [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")]
)
def test_append_refuses_a_utf16_file_and_leaves_it_as_it_was(
    tmp_path: Path, bom: bytes, encoding: str
) -> None:
    path = tmp_path / "rows.jsonl"
    before = bom + '{"op": "x", "impl": "a", "median": 1.0}\n'.encode(encoding)
    path.write_bytes(before)
    with pytest.raises(
        FormatError,
        match=f"Expected a UTF-8 JSONL file of benchmark rows, got a {encoding.upper()} file",
    ):
        append_rows(path, [ROW])
    assert path.read_bytes() == before


def test_append_names_a_folder_at_the_path(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").mkdir()
    with pytest.raises(
        InputError, match=r"Expected a JSONL rows file, got a directory at .*rows\.jsonl"
    ):
        append_rows(tmp_path / "rows.jsonl", [ROW])


def test_append_names_a_file_where_its_folder_should_be(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"Expected a folder for the rows file, got .*notes, a file"
    ):
        append_rows(tmp_path / "notes" / "rows.jsonl", [ROW])
    with pytest.raises(InputError, match=r"under the file .*notes"):
        append_rows(tmp_path / "notes" / "deeper" / "rows.jsonl", [ROW])


def test_append_still_writes_utf8_rows(tmp_path: Path) -> None:
    path = tmp_path / "new" / "rows.jsonl"
    append_rows(path, [ROW])
    append_rows(path, [ROW])
    assert read_rows(path) == [ROW, ROW]


# -- Cost: sums of costs only, and no roofline of no work ---------------------------------


def test_a_cost_added_to_a_number_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unsupported operand"):
        Cost(flops=1, bytes=2) + 5  # type: ignore[operator]
    assert Cost(flops=1, bytes=2) + Cost(flops=3, bytes=4) == Cost(flops=4, bytes=6)


def test_intensity_is_zero_without_flops_and_inf_without_bytes() -> None:
    assert Cost(flops=0, bytes=0).arith_intensity == 0.0
    assert Cost(flops=0, bytes=8).arith_intensity == 0.0
    assert math.isinf(Cost(flops=8, bytes=0).arith_intensity)


def test_a_roofline_of_no_work_is_refused() -> None:
    h = Ceilings(gpu="G", copy_bytes_per_s=4e12, matmul_flop_per_s=700e12)
    with pytest.raises(
        InputError, match="Expected a cost with FLOPs or bytes > 0, got 0 FLOPs and 0 bytes"
    ):
        Roofline(ceilings=h, cost=Cost(flops=0, bytes=0))
    assert Roofline(ceilings=h, cost=Cost(flops=0, bytes=8e9)).bound == "memory"


# -- run_trials: each point once ----------------------------------------------------------


def test_run_trials_refuses_a_point_listed_twice_before_any_run() -> None:
    made: list[str] = []

    def make(point: TrialPoint) -> Callable[[], None]:
        made.append(str(point))
        return lambda: None

    points = [
        TrialPoint(b=1, s=1, t=1),
        TrialPoint(b=2, s=1, t=1),
        TrialPoint(b=1, s=1, t=1, name="again"),
    ]
    with pytest.raises(
        InputError,
        match=re.escape(
            "points[2]: Expected each point once, got b=1 s=1 t=1 again (as points[0])"
        ),
    ):
        run_trials(make, impl="v", timer=Timer(backend="cpu-perf-counter"), points=points)
    assert made == []


# -- reading rows: errors name the field ------------------------------------------------


def test_a_row_without_op_names_the_missing_field() -> None:
    with pytest.raises(
        InputError, match=re.escape("Expected the required fields of BenchRow, got no ['op']")
    ):
        _serde.structure({"impl": "a"}, BenchRow)
