"""EVALUATE: a target judged against benchmark rows, real H200 rows included."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelopt import InputError
from kernelopt.bench import BenchRow, read_rows
from kernelopt.workflow import (
    Criterion,
    Evaluation,
    NextStep,
    Status,
    Target,
    evaluate,
    from_dict,
    to_dict,
)

from .conftest import bench_row

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "mla_decode.jsonl"
# benchmarks/results/README.md: the last run, after exps 33-34, is commit eecd583 (the
# seesaw kernel); each point was timed cold (L2 flushed) and as a CUDA-graph replay.
LAST_RUN = "eecd583"


@pytest.fixture(scope="module")
def h200() -> list[BenchRow]:
    rows = [r for r in read_rows(RESULTS) if (r.commit or "").startswith(LAST_RUN)]
    assert rows, f"no rows of commit {LAST_RUN} in {RESULTS}"
    return rows


def test_h200_decode_points_fall_short_of_80_pct_speculative_ones_meet_it(
    h200: list[BenchRow],
) -> None:
    target = Target(floor_pct=80, points=("decode", "speculative"))
    result = evaluate(target, h200, impl="kernelopt_seesaw", mode="graph")
    by_point = {p.point: p for p in result.points}
    assert list(by_point) == [
        "b=32 s=1 t=4096 h=128",
        "b=32 s=1 t=4096 h=16",
        "b=32 s=16 t=4096 h=128",
        "b=32 s=16 t=4096 h=16",
    ]
    short = [p for p in result.points if p.status is Status.SHORT]
    assert [p.point for p in short] == list(result.short)
    assert all(" s=1 " in p for p in result.short) and len(result.short) == 2
    decode = by_point["b=32 s=1 t=4096 h=16"].checks[0]
    assert decode.criterion is Criterion.FLOOR_PCT and decode.unit == "%"
    assert decode.value == pytest.approx(78.4, abs=0.05)
    assert decode.shortfall == pytest.approx(80 - decode.value)
    assert by_point["b=32 s=16 t=4096 h=128"].checks[0].shortfall == 0.0
    assert not result.met and result.next_step is NextStep.SELECT
    text = result.render()
    assert text.startswith(
        "Target floor_pct >= 80 % at decode; speculative: NOT MET for kernelopt_seesaw "
        "(2 of 4 points met)."
    )
    assert "| b=32 s=1 t=4096 h=16 | floor_pct | 78.42 % | >= 80 % | 1.58 pp | short |" in text
    assert text.endswith(
        "Next step: back to SELECT (step 3): choose the language and control level again; "
        "short at b=32 s=1 t=4096 h=128; b=32 s=1 t=4096 h=16.\n"
    )
    speculative = evaluate(
        Target(floor_pct=80, points=("speculative",)), h200, impl="kernelopt_seesaw", mode="graph"
    )
    assert speculative.met and speculative.next_step is NextStep.DONE
    assert speculative.render().endswith("Next step: done.\n")


def test_speedup_and_time_against_a_baseline(h200: list[BenchRow]) -> None:
    target = Target(median=100, speedup=1.5, baseline="torch_compile", points=("b=32,s=1,h=16",))
    result = evaluate(target, h200, impl="kernelopt_seesaw", mode="graph")
    [point] = result.points
    median, speedup = point.checks
    assert median.value == pytest.approx(45.89, abs=0.01) and median.status is Status.MET
    assert speedup.value == pytest.approx(78.72 / 45.89, rel=1e-3) and speedup.unit == "x"
    assert result.met
    # A bound in milliseconds: 45.89 us is 0.00589 ms over 0.04 ms.
    in_ms = evaluate(
        Target(median=0.04, unit="ms", points=("b=32,s=1,h=16",)),
        h200,
        impl="kernelopt_seesaw",
        mode="graph",
    )
    assert in_ms.points[0].checks[0].shortfall == pytest.approx(0.00589, abs=1e-5)


def test_a_point_without_rows_is_missing_never_met(h200: list[BenchRow]) -> None:
    result = evaluate(
        Target(floor_pct=50, points=("speculative", "b=64,s=1")),
        h200,
        impl="kernelopt_seesaw",
        mode="graph",
    )
    missing = result.points[-1]
    assert missing.point == "b=64 s=1" and missing.status is Status.MISSING
    assert missing.checks[0].value is None and missing.checks[0].shortfall is None
    assert missing.checks[0].note == "no kernelopt_seesaw row"
    assert result.missing == ("b=64 s=1",) and not result.met
    assert "not measured at b=64 s=1 (measure these first)" in result.render()


def test_a_baseline_or_floor_the_rows_lack_is_missing() -> None:
    rows = [
        bench_row("v3", 50.0, config={"b": 32, "s": 1, "t": 4096}, metrics={}),
        bench_row("v3", 60.0, config={"b": 32, "s": 16, "t": 4096}),
        bench_row("v2", 90.0, config={"b": 32, "s": 16, "t": 4096}),
    ]
    result = evaluate(Target(floor_pct=50, speedup=1.2, baseline="v2"), rows)
    assert result.impl == "v3"  # the only implementation besides the baseline
    first, second = result.points
    assert [c.note for c in first.checks] == ["the row states no floor", "no v2 row"]
    assert first.status is Status.MISSING
    assert second.status is Status.MET and second.checks[1].value == pytest.approx(1.5)
    assert not result.met and result.missing == ("b=32 s=1 t=4096",)


def test_refusals(h200: list[BenchRow]) -> None:
    seesaw = [r for r in h200 if r.impl == "kernelopt_seesaw"]
    with pytest.raises(InputError, match=r"timed one way \(choose the mode with mode=\)"):
        evaluate(Target(floor_pct=80), seesaw)
    with pytest.raises(InputError, match="rows of one implementation"):
        evaluate(Target(floor_pct=80), h200, mode="graph")
    with pytest.raises(InputError, match="rows of impl 'torch_nope'"):
        evaluate(
            Target(speedup=2, baseline="torch_nope"), h200, impl="kernelopt_seesaw", mode="graph"
        )
    with pytest.raises(InputError, match="rows timed in mode 'hot'"):
        evaluate(Target(floor_pct=80), seesaw, mode="hot")
    with pytest.raises(InputError, match="Expected a Target, got dict"):
        evaluate({"floor_pct": 80}, seesaw)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="Expected BenchRow rows"):
        evaluate(Target(floor_pct=80), [1])  # type: ignore[list-item]
    with pytest.raises(InputError, match="at least one benchmark row"):
        evaluate(Target(floor_pct=80), [])


def test_host_clock_rows_are_refused_unless_allowed() -> None:
    rows = [bench_row("v3", 50.0, mode="cpu"), bench_row("v3b", 40.0, backend="cpu-perf-counter")]
    for row in rows:
        with pytest.raises(InputError, match=r"Expected GPU timings \(CUDA events\)"):
            evaluate(Target(median=60), [row])
        assert evaluate(Target(median=60), [row], allow_host_clock=True).met
    # A host-clock baseline counts too.
    gpu = bench_row("v3", 50.0)
    with pytest.raises(InputError, match="rows of v2 timed with the host clock"):
        evaluate(
            Target(speedup=1.1, baseline="v2"),
            [gpu, bench_row("v2", 60.0, backend="cpu-perf-counter")],
        )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "at least one of floor_pct, median or speedup"),
        ({"floor_pct": 120}, r"in \(0, 100\]"),
        ({"floor_pct": 0}, r"in \(0, 100\]"),
        ({"median": "50"}, "median: Expected a finite number"),
        ({"median": float("nan")}, "finite"),
        ({"median": 50, "unit": "s/call"}, "Target.unit"),
        ({"speedup": 1.2}, "speedup and baseline given together"),
        ({"floor_pct": 80, "baseline": "v2"}, "speedup and baseline given together"),
        ({"floor_pct": 80, "points": "decode"}, "points as a list"),
        ({"floor_pct": 80, "points": ["not a point"]}, "a point like"),
    ],
)
def test_target_refuses_what_it_cannot_judge(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InputError, match=match):
        Target(**kwargs)  # type: ignore[arg-type]


def test_evaluation_as_data() -> None:
    result = evaluate(Target(floor_pct=80, median=70), [bench_row("v3", 66.53)])
    data = to_dict(result)
    assert data["points"][0]["checks"][0] == {
        "criterion": "floor_pct",
        "bound": 80.0,
        "value": 53.8,
        "unit": "%",
        "note": "",
    }
    assert from_dict(data, Evaluation) == result


@given(
    bound=st.floats(1, 100),
    shares=st.lists(st.floats(0, 100), min_size=1, max_size=5),
)
def test_met_exactly_when_every_point_reaches_the_bound(bound: float, shares: list[float]) -> None:
    rows = [
        bench_row("v", 10.0, config={"b": 1, "s": i + 1, "t": 1}, metrics={"floor_pct": share})
        for i, share in enumerate(shares)
    ]
    result = evaluate(Target(floor_pct=bound), rows)
    assert result.met == all(share >= bound for share in shares)
    for point, share in zip(result.points, shares, strict=True):
        assert point.checks[0].shortfall == max(0.0, bound - share)


def test_the_baseline_is_never_judged_against_itself() -> None:
    # Rows of the baseline alone: a speedup of 1.0 over itself would meet any bound <= 1.
    only_base = [
        bench_row("torch_eager", 50.0),
        bench_row("torch_eager", 70.0, config={"b": 32, "s": 16}),
    ]
    with pytest.raises(InputError, match=r"Expected rows of an implementation besides the"):
        evaluate(Target(speedup=0.9, baseline="torch_eager"), only_base)
    mixed = [*only_base, bench_row("v3", 40.0)]
    with pytest.raises(InputError, match=r"besides the baseline 'torch_eager'.*impl="):
        evaluate(Target(speedup=0.9, baseline="torch_eager"), mixed, impl="torch_eager")
    # Without a speedup the baseline's rows are a kernel's like any other.
    assert evaluate(Target(median=60), only_base, impl="torch_eager").points[0].checks[0].value


def test_a_baseline_timed_only_another_way_is_named_as_such() -> None:
    # v2 was timed at this point, but cold: "no v2 row" would send the user looking for
    # a measurement that is there.
    rows = [bench_row("v3", 50.0, mode="graph"), bench_row("v2", 90.0, mode="cold")]
    result = evaluate(Target(speedup=1.2, baseline="v2"), rows)
    (check,) = result.points[0].checks
    assert check.status is Status.MISSING
    assert check.note == "no v2 row timed graph (only cold)"


def test_mode_keeps_the_note_on_a_baseline_timed_only_another_way() -> None:
    # With mode= (needed once the kernel is timed two ways) the baseline's cold rows were
    # dropped before they were looked at: "Expected rows of impl 'v2', got ['v3']".
    rows = [
        bench_row("v3", 50.0, mode="graph"),
        bench_row("v3", 120.0, mode="cold"),
        bench_row("v2", 90.0, mode="cold"),
    ]
    result = evaluate(Target(speedup=1.2, baseline="v2"), rows, mode="graph")
    (check,) = result.points[0].checks
    assert (check.status, check.note) == (Status.MISSING, "no v2 row timed graph (only cold)")
    with pytest.raises(InputError, match="mode 'hot'"):
        evaluate(Target(speedup=1.2, baseline="v2"), rows, mode="hot")


def test_a_speedup_takes_the_baseline_of_the_kernels_gpu() -> None:
    # The baseline's H100 row came last at the point: it had been the one compared, so the
    # H200 kernel read 1.2x (short) instead of its 2x over the H200 baseline.
    rows = [
        bench_row("v3", 50.0),
        bench_row("v2", 100.0),
        bench_row("v2", 60.0, gpu="NVIDIA H100"),
    ]
    (check,) = evaluate(Target(speedup=1.5, baseline="v2"), rows).points[0].checks
    assert (check.status, check.value) == (Status.MET, 2.0)
    (check,) = evaluate(Target(speedup=1.5, baseline="v2"), [rows[0], rows[2]]).points[0].checks
    assert (check.status, check.value) == (Status.MISSING, None)
    assert check.note == "no v2 row on NVIDIA H200 (only NVIDIA H100)"


def test_rows_of_the_kernel_on_two_gpus_are_refused() -> None:
    # One row per point was kept, the last: the H100's 80 us stood for the kernel.
    rows = [bench_row("v3", 50.0), bench_row("v3", 80.0, gpu="NVIDIA H100")]
    with pytest.raises(InputError, match=r"^rows: Expected rows of v3 from one GPU .*H100"):
        evaluate(Target(median=60.0), rows)


def test_a_value_a_hair_short_of_the_bound_is_shown_short_of_it() -> None:
    # 4 significant digits showed "1.2 x | >= 1.2 x | ... | short": met by the table's
    # own numbers, short by its verdict.
    rows = [bench_row("v3", 50.0), bench_row("v2", 59.9999)]
    text = evaluate(Target(speedup=1.2, baseline="v2"), rows).render()
    assert "| speedup | 1.199998 x | >= 1.2 x | 0.000002 x | short |" in text
    met = evaluate(Target(speedup=1.2, baseline="v2"), [rows[0], bench_row("v2", 60.0)])
    assert "| speedup | 1.2 x | >= 1.2 x | 0 x | met |" in met.render()
