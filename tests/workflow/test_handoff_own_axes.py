"""The profile hand-off of a kernel whose point is its own integer axes (a quantizer's
tokens and hidden, an MoE GEMM's e, m and topk), end to end; and what the rows of a point
timed two ways give it.

Users of such kernels wrote b=1, s=..., t=... into their rows and headings, as the
hand-off took nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernelopt import FormatError, InputError
from kernelopt.bench import Bottleneck, ProfileReport, Stage, TrialPoint
from kernelopt.cli import main
from kernelopt.workflow import from_dict, parse_profile, parse_profiles, profile_from_rows, to_dict

from .conftest import SHAPE, bench_row, write_rows
from .test_from_rows import FixedCatalog, match

QUANT = {"tokens": 4096, "hidden": 7168}
POINT = {"b": 32, "s": 1, "t": 4096}
SHARES = {"dram_pct": 73.2, "tc_pct": 0.44, "floor_pct": 73.2, **SHAPE}


def _report(point: Any) -> ProfileReport:
    return ProfileReport(
        kernel="fp8_quant",
        version="v3",
        point=point,
        stages=[Stage(name="fp8_quant", duration=39.87, tc_pct=0.4, dram_pct=73.2)],
        bottleneck=Bottleneck.MEMORY,
        root_cause="Bytes set the floor.",
    )


@pytest.mark.parametrize("point", [QUANT, "tokens=4096, hidden=7168", "hidden=7168 tokens=4096"])
def test_a_point_of_the_kernels_own_axes_is_rendered_and_read_back(point: Any) -> None:
    report = _report(point)
    assert report.point == "hidden=7168 tokens=4096"
    text = report.render()
    assert text.splitlines()[0] == "## Profile: fp8_quant v3 | hidden=7168, tokens=4096"
    assert parse_profile(text) == report
    assert from_dict(to_dict(report), ProfileReport) == report


def test_a_point_with_b_s_and_t_is_a_trial_point_as_before() -> None:
    report = _report({"b": 32, "s": 1, "t": 4096, "h": 16})
    assert report.point == TrialPoint(b=32, s=1, t=4096, extra={"h": 16})
    assert report.render().splitlines()[0] == "## Profile: fp8_quant v3 | b=32, s=1, t=4096, h=16"
    assert from_dict(to_dict(report), ProfileReport) == report
    assert parse_profile(report.render()) == report


@pytest.mark.parametrize(
    ("point", "why"),
    [
        ({"tokens": 0}, "point: Expected each axis an integer >= 1, got tokens=0"),
        ({"tokens": "4k"}, "point: Expected each axis an integer >= 1, got tokens='4k'"),
        ({}, "point: Expected a point with at least one axis, got {}"),
        ({"head dim": 64}, "point: Expected axis names without spaces"),
    ],
)
def test_a_point_of_own_axes_holds_integers_under_names_that_read_back(
    point: Any, why: str
) -> None:
    with pytest.raises(InputError, match=f"^{why}".replace("(", r"\(").replace(")", r"\)")):
        _report(point)


def test_a_heading_of_own_axes_that_is_no_point_is_refused_at_its_line() -> None:
    text = _report(QUANT).render().replace("tokens=4096", "tokens=0")
    with pytest.raises(FormatError, match="axes >= 1"):
        parse_profile(text)


def test_rows_of_the_kernels_own_axes_give_a_hand_off_per_point() -> None:
    rows = [
        bench_row("v3", 39.87, config={**QUANT, "dtype": "bf16"}, metrics=SHARES),
        bench_row("v3", 3.91, config={"tokens": 32, "hidden": 7168}, metrics=SHARES),
    ]
    reports = profile_from_rows(rows, kernel="fp8_quant", version="v3", catalog=FixedCatalog())
    assert [r.point for r in reports] == ["hidden=7168 tokens=4096", "hidden=7168 tokens=32"]
    text = "\n".join(r.render() for r in reports)
    assert [r.point for r in parse_profiles(text)] == [r.point for r in reports]


def test_report_profile_rows_of_own_axes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = write_rows(
        tmp_path / "rows.jsonl",
        bench_row("v1", 3.0, config={"e": 8, "m": 512, "topk": 2}, metrics=SHARES),
    )
    code = main(["report", "profile", "--rows", str(rows), "--kernel", "moe", "--version", "v1"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == "## Profile: moe v1 | e=8, m=512, topk=2"


def _timed_two_ways(cold: float, graph: float) -> list[Any]:
    metrics = {"dram_pct": 6.0, "tc_pct": 0.03, "floor_pct": 6.0, **SHAPE}
    return [
        bench_row("v2_fused", cold, config=POINT, metrics=metrics, mode="cold"),
        bench_row("v2_fused", graph, config=POINT, metrics=metrics, mode="graph"),
    ]


def test_a_point_timed_two_ways_without_a_mode_is_refused_as_evaluate_refuses_it() -> None:
    with pytest.raises(InputError) as error:
        profile_from_rows(_timed_two_ways(3.63, 1.94), kernel="k", version="v2_fused")
    assert str(error.value) == (
        "rows: Expected rows of v2_fused timed one way (choose the mode with mode=, --mode on "
        "the command line), got cold/flush, graph/flush"
    )


def test_the_graph_row_of_a_point_gives_the_cold_reports_launch_overhead() -> None:
    catalog = FixedCatalog(
        match("cuda-graphs", 1.0, "metric launch_overhead_pct > 20"),
        match("software-pipelining", 5.0, "metric dram_pct < 70"),
    )
    [report] = profile_from_rows(
        _timed_two_ways(3.63, 1.94), kernel="k", version="v2_fused", mode="cold", catalog=catalog
    )
    assert report.stages[0].duration == 3.63
    assert catalog.asked["launch_overhead_pct"] == pytest.approx(100 * (3.63 - 1.94) / 3.63)
    # Latency-bound: the measured launch saving (46.6 %) ranks ahead of the larger bound.
    first, second = report.opportunities
    assert (first.entry_id, round(first.gain_pct, 1)) == ("cuda-graphs", 46.6)
    assert first.trigger.endswith("(measured: the share of time CUDA graphs removed)")
    assert second.entry_id == "software-pipelining"
    assert second.trigger.endswith("(upper bound: the time above the roofline floor)")
    # Graph replays alone have no launch overhead of their own to measure.
    [graph] = profile_from_rows(
        _timed_two_ways(3.63, 1.94), kernel="k", version="v2_fused", mode="graph", catalog=catalog
    )
    assert "launch_overhead_pct" not in catalog.asked and graph.stages[0].duration == 1.94


def test_methods_are_no_opportunities() -> None:
    catalog = FixedCatalog(
        match("roofline-analysis", 9.0, "metric dram_pct < 70"),
        match("cuda-event-instrumentation", 9.0, "metric dram_pct < 70"),
        match("software-pipelining", 1.0, "metric dram_pct < 70"),
    )
    [report] = profile_from_rows(
        [bench_row("v1", 3.0, config=POINT, metrics=SHARES)],
        kernel="k",
        version="v1",
        catalog=catalog,
    )
    assert [o.entry_id for o in report.opportunities] == ["software-pipelining"]


def test_a_triton_kernel_is_not_offered_cuda_entries() -> None:
    compute = {"dram_pct": 20.0, "tc_pct": 40.0, "floor_pct": 40.0, "arith_intensity": 400.0}
    rows = [bench_row("v1", 3.0, config=POINT, metrics={**compute, "ridge": 163.2})]
    ids = {
        o.entry_id for o in profile_from_rows(rows, kernel="gemm", version="v1")[0].opportunities
    }
    assert "warp-specialization" in ids
    [triton] = profile_from_rows(rows, kernel="gemm", version="v1", language="triton")
    assert "warp-specialization" not in {o.entry_id for o in triton.opportunities}
    with pytest.raises(InputError, match=r"^language: Expected a language"):
        profile_from_rows(rows, kernel="k", version="v1", language="fortran")


def test_the_json_of_a_hand_off_of_own_axes_reads_back(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", bench_row("v1", 3.0, config=QUANT, metrics=SHARES))
    code = main(
        ["report", "profile", "--rows", str(rows), "--kernel", "q", "--version", "v1", "--json"]
    )
    [data] = json.loads(capsys.readouterr().out)
    assert code == 0 and data["point"] == "hidden=7168 tokens=4096"
    assert from_dict(data, ProfileReport).point == "hidden=7168 tokens=4096"


def test_report_profile_language_keeps_a_triton_kernel_from_cuda_entries(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    compute = {"dram_pct": 20.0, "tc_pct": 40.0, "floor_pct": 40.0, "arith_intensity": 400.0}
    rows = write_rows(
        tmp_path / "rows.jsonl",
        bench_row("v1", 3.0, config=POINT, metrics={**compute, "ridge": 163.2}),
    )
    base = ["report", "profile", "--rows", str(rows), "--kernel", "gemm", "--version", "v1"]
    base.append("--json")

    def suggested(*more: str) -> set[str]:
        assert main([*base, *more]) == 0
        [report] = json.loads(capsys.readouterr().out)
        return {o["entry_id"] for o in report["opportunities"]}

    assert "warp-specialization" in suggested()
    assert "warp-specialization" not in suggested("--language", "Triton")
    assert main([*base, "--language", "fortran"]) == 2
    assert "--language: Expected a language" in capsys.readouterr().err
    # A hand-off file has no suggestions to narrow: the option is refused there.
    hand_off = tmp_path / "profile.md"
    hand_off.write_text(_report(TrialPoint(b=1, s=1, t=1)).render(), encoding="utf-8")
    assert main(["report", "profile", str(hand_off), "--language", "triton"]) == 2
    assert "--language only with --rows" in capsys.readouterr().err
