"""Observations: judge on samples when kept, else the ratio against the stated spread."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from kernelopt import InputError
from kernelopt.bench import BenchRow, Measurement, Verdict, judge
from kernelopt.bench.compare import Comparison
from kernelopt.workflow import (
    evidence_row,
    observe_comparison,
    observe_files,
    observe_rows,
    select_row,
)

from .conftest import anchor_row, bench_row, write_rows


def test_samples_on_both_sides_are_judged_unpaired_by_judges_rule() -> None:
    # Two rows are two runs: no sample of one was timed in a round with one of the other.
    before = anchor_row("splits16", samples=60, seed=1)
    after = anchor_row("splits8", samples=60, seed=2)
    seen = observe_rows(before, after, source="a vs b")
    paired = judge(before.samples, after.samples)
    assert seen.verdict is paired.verdict is Verdict.FAST and seen.comparison.pairs == 0
    assert seen.comparison.ratio == pytest.approx(paired.ratio)
    assert seen.comparison.ratio_low < seen.comparison.ratio < seen.comparison.ratio_high
    assert seen.method.startswith("unpaired bootstrap of 60 before and 60 after samples (")
    assert "paired samples" not in seen.method
    assert seen.change_pct == pytest.approx(-10.19, abs=0.01)  # 66.53 against 74.08 us
    assert seen.point == "b=32 s=1 t=4096 h=16" and seen.date == "2026-12-02"
    assert [name for name, _, _ in seen.metric_changes()] == ["dram_pct", "floor_pct", "tc_pct"]


@pytest.mark.parametrize(
    ("after", "spread", "verdict"),
    [
        (90.0, 0.004, Verdict.FAST),  # -10 %, spread ±0.4 %
        (112.0, 0.004, Verdict.SLOW),
        (100.5, 0.004, Verdict.SAME),  # within the 1 % minimum effect
        (97.0, 0.04, Verdict.SAME),  # within ±4 %, quiet enough to call
        (94.0, 0.08, Verdict.UNCLEAR),  # within ±8 %: too noisy to call same
        (85.0, 0.08, Verdict.FAST),
    ],
)
def test_without_samples_the_stated_spread_decides(
    after: float, spread: float, verdict: Verdict
) -> None:
    seen = observe_rows(
        bench_row("a", 100.0, spread=spread), bench_row("b", after, spread=spread), source="x"
    )
    assert seen.verdict is verdict
    assert seen.comparison.pairs == 0 and "stated spread" in seen.method
    assert seen.comparison.threshold == pytest.approx(max(spread, 0.01))


def test_units_are_aligned() -> None:
    seen = observe_rows(bench_row("a", 100.0), bench_row("b", 0.09, unit="ms"), source="x")
    assert seen.after == pytest.approx(90.0) and seen.unit == "us" and seen.verdict is Verdict.FAST


def test_rows_must_match() -> None:
    with pytest.raises(InputError, match="same trial point"):
        observe_rows(
            bench_row("a", 1.0), bench_row("b", 1.0, config={"b": 1, "s": 1, "t": 1}), source="x"
        )
    with pytest.raises(InputError, match="same GPU"):
        observe_rows(bench_row("a", 1.0), bench_row("b", 1.0, gpu="NVIDIA B200"), source="x")
    with pytest.raises(InputError, match="same operation"):
        observe_rows(bench_row("a", 1.0), bench_row("b", 1.0, op="gemm"), source="x")


def test_knobs_may_differ_and_are_named() -> None:
    before = bench_row("k", 66.53, config={"b": 32, "s": 1, "t": 4096, "num_splits": 8})
    after = bench_row("k", 91.22, config={"b": 32, "s": 1, "t": 4096, "num_splits": 32})
    seen = observe_rows(before, after, source="x", knobs=["num_splits"])
    assert seen.point == "b=32 s=1 t=4096" and seen.knob_changes == ("num_splits 8 -> 32",)
    assert seen.verdict is Verdict.SLOW


def test_files_select_one_point_and_impl(tmp_path: Path) -> None:
    decode, spec = {"b": 32, "s": 1, "t": 4096}, {"b": 32, "s": 16, "t": 4096}
    a = write_rows(
        tmp_path / "a.jsonl",
        bench_row("v1", 80.0, config=decode),
        bench_row("v1", 600.0, config=spec),
    )
    b = write_rows(
        tmp_path / "b.jsonl",
        bench_row("v2", 70.0, config=decode),
        bench_row("v2", 610.0, config=spec),
    )
    with pytest.raises(InputError, match="one trial point"):
        observe_files(a, b)
    seen = observe_files(a, b, point="decode")
    assert seen.before == 80.0 and seen.source == f"{a} vs {b}"
    assert observe_files(a, b, point="s=16").after == 610.0
    both = write_rows(
        tmp_path / "both.jsonl",
        bench_row("v1", 80.0, config=decode),
        bench_row("v2", 70.0, config=decode),
    )
    same = observe_files(both, both, before_impl="v1", after_impl="v2")
    assert same.source == str(both) and same.before_label == "v1" and same.after_label == "v2"
    with pytest.raises(InputError, match="one implementation"):
        observe_files(both, both)
    with pytest.raises(InputError, match="no file"):
        observe_files(tmp_path / "nope.jsonl", b)
    with pytest.raises(InputError, match="trial name"):
        observe_files(a, b, point="warm")


@pytest.mark.parametrize("point", ["s=", "s=,h=16", "b=32 s= t=4096"])
def test_a_term_without_its_value_is_a_malformed_point(point: str) -> None:
    rows = [bench_row("v", 80.0, config={"b": 32, "s": 1, "t": 4096, "h": 16})]
    with pytest.raises(InputError, match="Expected a point like"):
        select_row(rows, point=point)


def test_a_cache_format_left_unstated_is_the_dense_one(tmp_path: Path) -> None:
    # The MLA benchmark writes kv=fp8 for FlashMLA's FP8 cache and nothing for bf16.
    decode = {"b": 32, "s": 1, "t": 4096}
    rows = write_rows(
        tmp_path / "rows.jsonl",
        bench_row("v1", 53.6, config=decode),
        bench_row("v1", 98.0, config={**decode, "kv": "fp8"}),
        bench_row("v2", 45.9, config=decode),
        bench_row("v2", 60.0, config={**decode, "kv": "fp8"}),
    )
    with pytest.raises(InputError, match="one trial point"):
        observe_files(rows, rows, before_impl="v1", after_impl="v2")
    dense = observe_files(rows, rows, before_impl="v1", after_impl="v2", point="s=1,kv=bf16")
    assert (dense.before, dense.after) == (53.6, 45.9)
    fp8 = observe_files(rows, rows, before_impl="v1", after_impl="v2", point="s=1,kv=fp8")
    assert (fp8.before, fp8.after) == (98.0, 60.0)


def test_the_last_of_repeated_rows_wins() -> None:
    rows = [bench_row("v", 80.0), bench_row("v", 75.0)]
    assert select_row(rows).median == 75.0


def test_a_point_of_lengths_around_a_value() -> None:
    # Varlen rows record their longest length; the point they state says "around 4096".
    varlen = {"b": 128, "s_q": 1, "h_q": 16, "t_max": 5094, "point": "b=128 s=1 h=16 t~4096"}
    fixed = {"b": 32, "s_q": 1, "h_q": 16, "t_max": 4096, "point": "b=32 s=1 h=16 t=4096"}
    rows = [bench_row("v", 150.0, config=varlen), bench_row("v", 46.0, config=fixed)]
    assert select_row(rows, point="b=128 s=1 h=16 t~4096").median == 150.0
    assert select_row(rows, point="t~4096, h_q=16").median == 150.0
    assert select_row(rows, point="b=32 s=1 t=4096").median == 46.0
    with pytest.raises(InputError, match=r"Expected one of .*got point"):
        select_row(rows, point="b=128 t~2048")


def test_from_a_comparison() -> None:
    result = Comparison(
        verdict="FAST",
        ratio=0.9,
        ratio_low=0.88,
        ratio_high=0.92,
        noise=0.01,
        threshold=0.01,
        pairs=40,
        baseline=Measurement(samples=[100.0] * 4, gpu="cpu"),
        candidate=Measurement(samples=[0.09] * 4, unit="ms"),
    )
    seen = observe_comparison(result, point={"b": 1, "s": 1, "t": 2}, source="run.jsonl")
    assert (seen.before, seen.after, seen.unit, seen.gpu) == (
        100.0,
        pytest.approx(90.0),
        "us",
        "cpu",
    )
    assert seen.point == "b=1 s=1 t=2" and "40 interleaved pairs" in seen.method
    bare = Comparison(
        verdict="SAME", ratio=1.0, ratio_low=1.0, ratio_high=1.0, noise=0.0, threshold=0.01
    )
    with pytest.raises(InputError, match="measurements"):
        observe_comparison(bare, point="b=1 s=1 t=1", source="x")


@pytest.mark.parametrize(
    ("name", "value", "got"),
    [
        ("min_effect", float("nan"), "nan"),
        ("min_effect", -0.05, "min_effect >= 0, got -0.05"),
        ("max_noise", float("inf"), "inf"),
    ],
)
def test_a_threshold_that_is_not_a_number_is_refused_without_samples_too(
    name: str, value: float, got: str
) -> None:
    # Without raw samples the rows' spread decides, and max(spread, nan) silently dropped
    # a NaN threshold where judge() (rows with samples) refuses it.
    before, after = bench_row("v1", 100.0), bench_row("v2", 90.0)
    with pytest.raises(InputError, match=f"{name}: Expected .*{got}"):
        observe_rows(before, after, source="a vs b", **{name: value})


def test_a_point_the_benchmark_names_is_the_observations_point() -> None:
    # benchmarks/mla_decode.py names each row's point beside its sizes and display keys;
    # the evidence row cites that name, not every config entry (the name among them).
    config = {
        "b": 32, "dtype": "bfloat16", "h_q": 16, "page": 64, "point": "b=32 s=1 h=16 t=4096",
        "s_q": 1, "t_max": 4096, "t_mean": 4096.0, "varlen": False,
    }  # fmt: skip
    before = bench_row("seesaw", 48.98, config={**config, "num_splits": 16})
    after = bench_row("seesaw", 47.08, config={**config, "num_splits": 8})
    seen = observe_rows(before, after, source="a vs b", knobs=["num_splits"])
    assert seen.point == "b=32 s=1 t=4096 h=16"
    assert seen.knob_changes == ("num_splits 16 -> 8",)
    assert evidence_row(seen, kernel="mla_decode").config.startswith(
        "mla_decode b=32 s=1 t=4096 h=16, seesaw -> seesaw, num_splits 16 -> 8, "
    )


def test_one_implementation_at_two_commits_is_told_apart_by_the_commits() -> None:
    # exp_12 timed kernelopt_seesaw before and after a change: "seesaw -> seesaw" in an
    # evidence row would not say which two versions were compared.
    before = bench_row("seesaw", 48.98, commit="a4f12d600dc0b70be03a4431189a27915db12601")
    after = bench_row("seesaw", 47.08, commit="5cf3dc74ba633012d65d208ef59c5212b33d2014")
    seen = observe_rows(before, after, source="a vs b")
    assert (seen.before_label, seen.after_label) == ("seesaw@a4f12d6", "seesaw@5cf3dc7")
    other = observe_rows(before, bench_row("ring", 47.08, commit=after.commit), source="x")
    assert (other.before_label, other.after_label) == ("seesaw", "ring")
    same = observe_rows(before, bench_row("seesaw", 47.08, commit=before.commit), source="x")
    assert (same.before_label, same.after_label) == ("seesaw", "seesaw")


def test_select_row_takes_the_rows_timed_the_way_asked() -> None:
    cold, graph = bench_row("a", 120.0, mode="cold"), bench_row("a", 47.0, mode="graph")
    assert select_row([cold, graph]) is graph  # the last, as documented
    assert select_row([cold, graph], mode="cold") is cold
    with pytest.raises(InputError, match="mode 'hot'"):
        select_row([cold, graph], mode="hot")


def test_several_points_are_listed_by_the_names_their_benchmark_gave() -> None:
    # The message listed every config entry ("b=32 dtype=bfloat16 h_q=16 page=64 point=...")
    # where --point needs the point.
    def row(s: int) -> BenchRow:
        config = {"b": 32, "dtype": "bfloat16", "h_q": 16, "point": f"b=32 s={s} h=16 t=4096"}
        return bench_row("a", 1.0, config={**config, "s_q": s, "t_max": 4096})

    with pytest.raises(InputError) as caught:
        select_row([row(1), row(16)])
    assert "['b=32 s=1 t=4096 h=16', 'b=32 s=16 t=4096 h=16']" in str(caught.value)
    # Rows that differ beyond their named point (a knob) are listed by their configs.
    knob = bench_row("a", 1.0, config={**row(1).config, "num_splits": 8})
    with pytest.raises(InputError, match="num_splits=8"):
        select_row([row(1), knob])


def test_rows_without_a_timestamp_give_no_date() -> None:
    # An evidence row cites the date of the measurement, never the day LEARN ran.
    before, after = (
        attrs.evolve(bench_row(i, t), timestamp="") for i, t in (("a", 100), ("b", 90))
    )
    seen = observe_rows(before, after, source="x")
    assert seen.date == ""
    assert evidence_row(seen).config == "b=32 s=1 t=4096 h=16, a -> b, NVIDIA H200"


def test_several_implementations_name_the_option_of_their_side(tmp_path: Path) -> None:
    # "choose one with --*-impl" left the reader to guess which option, on which file.
    from kernelopt.bench import read_rows

    decode = {"b": 4, "n": 4096}
    both = write_rows(
        tmp_path / "both.jsonl",
        bench_row("v1", 80.0, config=decode),
        bench_row("v3", 70.0, config=decode),
    )
    with pytest.raises(InputError) as caught:
        observe_files(both, both)
    assert "choose one with --before-impl (before_impl=)" in str(caught.value)
    assert "got ['v1', 'v3']" in str(caught.value)
    with pytest.raises(InputError) as caught:
        observe_files(both, both, before_impl="v1")
    assert "choose one with --after-impl (after_impl=)" in str(caught.value)
    with pytest.raises(InputError) as caught:
        select_row(read_rows(both))
    assert "choose one with impl=" in str(caught.value)


def test_a_point_names_an_axis_by_either_of_its_names() -> None:
    # "h" found "h_q" in a config, but "h_q" (as the decode profile's heading spells it)
    # found no "h": the rows were "none".
    rows = [
        bench_row("v", 46.0, config={"b": 32, "s": 1, "t": 4096, "h": 16}),
        bench_row("v", 72.0, config={"b": 32, "s": 1, "t": 4096, "h": 128}),
    ]
    assert select_row(rows, point="h_q=16, s_q=1, t_max=4096").median == 46.0
    assert select_row(rows, point="h=128").median == 72.0
