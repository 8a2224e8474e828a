"""Profiler hand-off: parse_profile reads back what ProfileReport.render writes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from kernelopt import FormatError
from kernelopt.bench import (
    BaselineMetric,
    Bottleneck,
    Ceilings,
    Measurement,
    Opportunity,
    ProfileReport,
    Roofline,
    Stage,
    TrialPoint,
    mla_decode_cost,
    profile_report,
)
from kernelopt.workflow import parse_point, parse_profile

from .strategies import any_profiles, profiles

REPORT = ProfileReport(
    kernel="mla_decode",
    version="v3",
    point={"b": 32, "s": 16, "t": 4096, "h": 128},
    stages=[
        Stage(
            name="split partial",
            duration=41.25,
            tc_pct=12.0,
            dram_pct=61.0,
            bottleneck="Memory-bound",
            key_issue="uncoalesced loads",
        ),
        Stage(name="combine", duration=3.0, occupancy_pct=50.0, bottleneck="Latency-bound"),
    ],
    bottleneck=Bottleneck.MEMORY,
    root_cause="One. Two.",
    opportunities=[
        Opportunity(
            name="Head Grouping (MMA)",
            entry_id="head-grouping-mma-tile",
            gain_pct=33.0,
            trigger="dram_pct=61",
        ),
        Opportunity(
            name="CUDA Graphs",
            entry_id="cuda-graphs",
            gain_pct=8.0,
            trigger="launch_overhead_pct=8",
        ),
    ],
    baseline=[
        BaselineMetric(metric="Median (us)", previous=80.0, current=44.25, unit="us"),
        BaselineMetric(metric="DRAM %", previous=40.0, current=61.04, unit="%"),
        BaselineMetric(metric="Calls", previous=0.0, current=3.0),
    ],
)


def test_round_trip_of_a_full_report() -> None:
    assert parse_profile(REPORT.render()) == REPORT


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(profiles)
def test_round_trip_property(report: ProfileReport) -> None:
    assert parse_profile(report.render()) == report


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(any_profiles)
def test_rendered_text_is_a_fixed_point(report: ProfileReport) -> None:
    text = report.render()
    assert parse_profile(text).render() == text


def test_a_report_from_profile_report_round_trips_except_the_point_name() -> None:
    # The anchors' H200 ceilings (/work/shared/anchors/h200-2026-12-02.json) and the peer
    # Triton kernel's CUDA-graph median at b=32 s=1 h=16 t=4096, 8 splits.
    h200 = Ceilings(
        gpu="NVIDIA H200",
        copy_bytes_per_s=4.2497501013921815e12,
        matmul_flop_per_s=693.6596691456391e12,
    )
    line = Roofline(ceilings=h200, cost=mla_decode_cost(b=32, s_q=1, h_q=16, seqlens=4096))
    report = profile_report(
        kernel="mla_decode",
        version="peer",
        point=TrialPoint(name="decode", b=32, s=1, t=4096, extra={"h": 16}),
        measurement=Measurement(samples=[66.53] * 5),
        roofline=line,
        baseline=Measurement(samples=[74.08] * 5),
    )
    text = report.render()
    back = parse_profile(text)
    assert back.render() == text
    assert back.point == TrialPoint(b=32, s=1, t=4096, extra={"h": 16})  # the name is not rendered
    assert back.bottleneck is report.bottleneck and back.root_cause == report.root_cause
    assert [o.entry_id for o in back.opportunities] == [
        o.entry_id for o in report.opportunities[:3]
    ]
    assert [b.unit for b in back.baseline] == [b.unit for b in report.baseline]


def test_prose_crlf_and_a_fence_around_the_report_are_ignored() -> None:
    body = REPORT.render().replace(
        "### Bottleneck", "Some words between sections.\n\n### Bottleneck"
    )
    text = "Profiling done, here is the summary.\n\n```markdown\n" + body + "```\n\nThanks!\n"
    assert parse_profile(text.replace("\n", "\r\n")) == REPORT


def test_the_contract_example_without_entry_ids_reads() -> None:
    text = """## Profile: gemm v1 | b=1, s=1, t=1
### Stages
| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
|-------|----------|-----|-------|------|------------|-----------|
| main | 12 ms | 80% | 10 | 45 | Compute-bound | none |
### Bottleneck: Compute-bound
Root cause: The MMA pipe is saturated.
It waits on nothing else.
### Top 3 Opportunities (ranked by estimated impact)
1. Warp specialization -- est. 10% gain -- trigger: tc_pct=80

### vs Baseline (if applicable)
| Metric | Previous | Current | Change |
|--------|----------|---------|--------|
| Median (ms) | 14 | 12 | -14.3% |
"""
    report = parse_profile(text)
    assert report.stages[0].tc_pct == 80.0 and report.stages[0].unit == "ms"
    assert report.root_cause == "The MMA pipe is saturated. It waits on nothing else."
    assert report.opportunities == (
        Opportunity(name="Warp specialization", entry_id="", gain_pct=10.0, trigger="tc_pct=80"),
    )
    assert report.baseline[0].unit == "ms"


def test_an_opportunity_without_an_entry_id_renders_in_the_contract_form() -> None:
    # The contract writes "1. [name] -- est. X% gain -- trigger: [metric=value]": no id
    # means no id marker, not an empty "(``)".
    report = ProfileReport(
        kernel="gemm",
        version="v1",
        point={"b": 1, "s": 1, "t": 1},
        stages=[Stage(name="main", duration=12.0)],
        bottleneck=Bottleneck.COMPUTE,
        root_cause="The MMA pipe is saturated.",
        opportunities=[
            Opportunity(name="Warp specialization", entry_id="", gain_pct=10, trigger="tc_pct=80"),
        ],
    )
    text = report.render()
    assert "1. Warp specialization -- est. 10% gain -- trigger: tc_pct=80\n" in text
    assert parse_profile(text) == report


@pytest.mark.parametrize("name", ["Tiles (`a-b`)", "Split -- est. 5% gain -- trigger: x"])
def test_a_name_that_would_read_otherwise_keeps_the_empty_id_marker(name: str) -> None:
    report = ProfileReport(
        kernel="gemm",
        version="v1",
        point={"b": 1, "s": 1, "t": 1},
        stages=[Stage(name="main", duration=12.0)],
        bottleneck=Bottleneck.COMPUTE,
        root_cause="Saturated.",
        opportunities=[Opportunity(name=name, entry_id="", gain_pct=10, trigger="tc_pct=80")],
    )
    assert parse_profile(report.render()) == report


def test_hand_written_cells_carry_their_units() -> None:
    base = REPORT.render().split("### vs Baseline")[0]
    text = (
        base
        + """### vs Baseline
| Metric | Previous | Current | Change |
|---|---|---|---|
| Latency | 74 us | 66.5 us | -10% |
| DRAM | 45.2% | 80% | +34.8 pp |
"""
    )
    latency, dram = parse_profile(text).baseline
    assert (latency.previous, latency.current, latency.unit) == (74.0, 66.5, "us")
    assert (dram.previous, dram.current, dram.unit) == (45.2, 80.0, "%")
    with pytest.raises(FormatError, match=r"Previous and Current in the same unit \(ms\)"):
        parse_profile(text.replace("| 74 us |", "| 74 ms |"))
    with pytest.raises(FormatError, match="Expected a number in Current, got 'nan'"):
        parse_profile(text.replace("| 66.5 us |", "| nan |"))


def test_a_duration_needs_its_unit() -> None:
    # "66.5" once read as 66 with the unit "5".
    with pytest.raises(FormatError, match=r"Expected a duration like '41\.25 us', got '66\.5'"):
        parse_profile(REPORT.render().replace("| 41.25 us |", "| 66.5 |"))
    micro = parse_profile(REPORT.render().replace("| 41.25 us |", "| 41.25 µs |"))
    assert micro.stages[0].unit == "µs"
    with pytest.raises(FormatError, match="in TC%"):
        parse_profile(REPORT.render().replace("| 41.25 us | 12.0 |", "| 41.25 us | inf |"))


@pytest.mark.parametrize("unit", ["#x", "(cycles)", "1/s", "`us`", "~s", "[s]", "\u200bus"])
def test_every_unit_a_stage_takes_reads_back(unit: str) -> None:
    # The renderer writes "<duration> <unit>"; after the space the unit is any token.
    report = ProfileReport(
        kernel=REPORT.kernel,
        version=REPORT.version,
        point=REPORT.point,
        stages=[Stage(name="main", duration=41.25, unit=unit)],
        bottleneck=REPORT.bottleneck,
        root_cause=REPORT.root_cause,
    )
    assert parse_profile(report.render()) == report


@pytest.mark.parametrize(
    ("cut", "section"),
    [
        ("### Stages", "Stages"),
        ("### Top 3 Opportunities (ranked by estimated impact)", "Top 3 Opportunities"),
        ("### Bottleneck: Memory-bound", "Bottleneck"),
    ],
)
def test_missing_sections_are_named_with_the_line(cut: str, section: str) -> None:
    text = "intro\n" + REPORT.render().replace(cut + "\n", "")
    with pytest.raises(FormatError) as caught:
        parse_profile(text, path="profile.md")
    assert caught.value.section == section
    assert caught.value.line == 2  # the '## Profile:' heading, under which it is missing
    assert str(caught.value).startswith("profile.md:2 [")


def test_unreadable_lines_are_errors_with_their_line() -> None:
    text = REPORT.render().replace("| 41.25 us |", "| fast |")
    with pytest.raises(FormatError) as caught:
        parse_profile(text)
    assert caught.value.line == 5 and caught.value.section == "Stages"
    text = REPORT.render().replace(
        "1. Head Grouping (MMA) (`head-grouping-mma-tile`) -- est.", "1. ???"
    )
    with pytest.raises(FormatError, match="opportunity") as caught:
        parse_profile(text)
    assert caught.value.line == 10
    with pytest.raises(FormatError, match="Root cause"):
        parse_profile(REPORT.render().replace("Root cause: One. Two.\n", ""))
    with pytest.raises(FormatError, match="Profile"):
        parse_profile("# nothing here\n")
    with pytest.raises(FormatError, match="table header"):
        parse_profile(REPORT.render().replace("| Stage | Duration |", "| Part | Duration |"))


def test_points() -> None:
    assert parse_point("b=32, s=1, t=4096, h=16") == TrialPoint(b=32, s=1, t=4096, extra={"h": 16})
    assert parse_point("b=2 s=3 t=4") == TrialPoint(b=2, s=3, t=4)
    with pytest.raises(FormatError, match="no t"):
        parse_point("b=1, s=1")
    with pytest.raises(FormatError, match="trial point"):
        parse_point("b=one, s=1, t=1")


def test_a_baseline_time_in_microseconds_keeps_its_unit_in_the_canonical_text() -> None:
    # "74 µs" was read with the unit "µs", which the table cannot show: the canonical
    # text then printed "| Latency | 74 | 66.5 |", a time without its unit.
    base = REPORT.render().split("### vs Baseline")[0]
    text = base + (
        "### vs Baseline\n| Metric | Previous | Current | Change |\n|---|---|---|---|\n"
        "| Latency | 74 µs | 66.5 µs | -10% |\n"
    )
    [latency] = parse_profile(text).baseline
    assert (latency.previous, latency.current, latency.unit) == (74.0, 66.5, "us")
    assert "| Latency (us) | 74 | 66.5 | -10.1% |" in parse_profile(text).render()
