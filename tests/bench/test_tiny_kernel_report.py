"""A tiny latency-bound kernel's profile hand-off, and the guards' words for such kernels.

The case is a Triton MoE router on an H100 at T=17 tokens, E=64 experts, top k=2: 44.16 us
per call with events, 6.83 us in a CUDA graph. Its shares of the roofline are far below 1 %,
and its three launch remedies each claim the same launch overhead.
"""

from __future__ import annotations

import re
import warnings
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from kernelopt._errors import InputError
from kernelopt._numbers_text import significant
from kernelopt.bench import (
    BaselineMetric,
    Bottleneck,
    Ceilings,
    Cost,
    Measurement,
    Opportunity,
    ProfileReport,
    Roofline,
    Stage,
    TrialPoint,
    check_written,
    judge,
    poison,
    profile_report,
)
from kernelopt.bench.report import small_kept
from kernelopt.workflow import parse_profile, perf_row_from_profile

H100 = Ceilings(gpu="NVIDIA H100 80GB HBM3", copy_bytes_per_s=3.0e12, matmul_flop_per_s=700e12)
TOKENS, EXPERTS, TOP_K = 17, 64, 2
# Logits in bf16, ids and weights out (8 bytes a pair, twice), the expert counts and offsets.
ROUTER_BYTES = (
    TOKENS * EXPERTS * 2 + TOKENS * TOP_K * 8 + (2 * EXPERTS + 1) * 4 + TOKENS * TOP_K * 8
)
ROUTER = Roofline(ceilings=H100, cost=Cost(flops=TOKENS * EXPERTS * 5, bytes=ROUTER_BYTES))
COLD = Measurement(samples=[44.16] * 10)
GRAPH = Measurement(samples=[6.83] * 10, mode="graph")
POINT = {"b": TOKENS, "s": 1, "t": EXPERTS}
LAUNCH_REMEDIES = (
    ("buffer-persistence", "Persistent Buffers Across Calls"),
    ("cuda-graphs", "CUDA Graphs for Launch-Bound Calls"),
    ("kernel-fusion", "Kernel Fusion"),
)
OVERLAP_LINE = (
    "(gains 1, 2 and 3 overlap: each is the same launch-overhead share, 85% of the time, not "
    "a separate part of it; together they save at most 85%)"
)
# A share or rate written as zero: "0%", "0.0%", "| 0.0 |", "0 GB/s", "+0.0 pp".
ZERO_WRITTEN = re.compile(r"(?<![\d.])[-+]?0(?:\.0+)?(?:%| GB/s| pp| \|)")


class LaunchRemedies:
    """Stands in for the built-in catalog: the three launch remedies the router fired."""

    def match_metrics(self, metrics: dict[str, float]) -> list[Any]:
        return [
            SimpleNamespace(
                entry=SimpleNamespace(id=entry_id, name=name, kind="optimization"),
                score=1.0,
                reasons=("metric launch_overhead_pct > 20",),
            )
            for entry_id, name in LAUNCH_REMEDIES
        ]


def router_report(**kwargs: Any) -> ProfileReport:
    arguments: dict[str, Any] = {
        "kernel": "moe_router",
        "version": "v1",
        "point": POINT,
        "measurement": COLD,
        "roofline": ROUTER,
        "graph": GRAPH,
        "catalog": LaunchRemedies(),
    }
    return profile_report(**(arguments | kwargs))


def read_back(text: str) -> ProfileReport:
    """The hand-off read with every ProfileWarning an error: nothing of it is left out."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse_profile(text)


def test_tiny_shares_are_written_with_their_digits() -> None:
    placed = ROUTER.place(COLD)
    report = router_report()
    text = report.render()
    dram, tc = significant(placed.dram_pct, 2), significant(placed.tc_pct, 2)
    gb_s = significant(placed.bytes_per_s / 1e9, 2)
    assert (dram, tc, gb_s) == ("0.0024", "0.000018", "0.073")
    assert f"| 44.16 us | {tc} | {dram} | n/a (no counters) | Latency-bound |" in text
    assert f"| {dram}% of roofline floor |" in text
    assert f", {dram}% of the measured time." in text
    assert f"It reaches only {gb_s} GB/s ({dram}% of the copy bandwidth)" in text
    assert f"({tc}% of the matmul rate)" in text
    assert ZERO_WRITTEN.findall(text) == []


def test_tiny_shares_read_back_above_zero() -> None:
    text = router_report().render()
    parsed = read_back(text)
    assert parsed.render() == text
    stage = parsed.stages[0]
    assert stage.dram_pct == pytest.approx(0.0024) and stage.tc_pct == pytest.approx(0.000018)
    # The devlog takes the floor share from the Key Issue: "0%" gave it a floor of zero.
    row = perf_row_from_profile(parsed, gpu=H100.gpu, date="2026-12-07", ceilings=H100)
    assert row.floor_pct == pytest.approx(0.0024)
    assert row.gb_s == pytest.approx(0.072, rel=0.02)


def test_small_baseline_changes_and_gains_keep_their_digits() -> None:
    share = BaselineMetric(metric="DRAM %", previous=0.0024, current=0.0037, unit="%")
    time = BaselineMetric(metric="Median", previous=44.17, current=44.16, unit="us")
    assert (share.change, time.change) == ("+0.0013 pp", "-0.023%")
    report = ProfileReport(
        kernel="moe_router",
        version="v2",
        point=TrialPoint(b=17, s=1, t=64),
        stages=[Stage(name="moe_router", duration=44.16, tc_pct=0.0, dram_pct=0.0024)],
        bottleneck=Bottleneck.LATENCY,
        root_cause="Too little work in flight.",
        opportunities=[Opportunity(name="Tiny", entry_id="t", gain_pct=0.004, trigger="x=1")],
        baseline=[share, time],
    )
    text = report.render()
    # A share that is 0 is still written as 0.
    assert "| 44.16 us | 0.0 | 0.0024 |" in text
    assert "-- est. 0.004% gain --" in text
    assert "| DRAM % | 0.0024 | 0.0037 | +0.0013 pp |" in text
    assert read_back(text).render() == text


@pytest.mark.parametrize(
    ("value", "decimals", "shown"),
    [
        (48.31, 1, "48.3"),
        (0.0, 1, "0.0"),
        (0.0, 0, "0"),
        (0.003712, 0, "0.0037"),
        (0.003712, 1, "0.0037"),
        (0.4, 0, "0.4"),
        (0.6, 0, "1"),
        # Two digits that round up to the decimals' step are written at those decimals.
        (0.0496, 1, "0.1"),
        (0.496, 0, "0.5"),
        (-0.0013, 1, "-0.0013"),
        (1.2e-9, 0, "0.0000000012"),
    ],
)
def test_small_kept(value: float, decimals: int, shown: str) -> None:
    assert small_kept(value, decimals) == shown


@given(
    value=st.floats(min_value=0.0, max_value=1e4, allow_nan=False),
    decimals=st.integers(min_value=0, max_value=2),
)
def test_small_kept_reads_back_as_itself(value: float, decimals: int) -> None:
    shown = small_kept(value, decimals)
    assert small_kept(float(shown), decimals) == shown
    assert (float(shown) == 0) == (value == 0)


def test_one_launch_overhead_claimed_three_times_is_said_to_overlap() -> None:
    text = router_report().render()
    top3 = text.split("### Top 3 Opportunities (ranked by estimated impact)\n")[1]
    trigger = "launch_overhead_pct=84.5 (measured: the share of time CUDA graphs removed)"
    assert top3 == (
        "1. Persistent Buffers Across Calls (`buffer-persistence`) -- est. 85% gain -- "
        f"trigger: {trigger}\n"
        "2. CUDA Graphs for Launch-Bound Calls (`cuda-graphs`) -- est. 85% gain -- "
        f"trigger: {trigger}\n"
        "3. Kernel Fusion (`kernel-fusion`) -- est. 85% gain -- "
        f"trigger: {trigger}\n"
        "\n"
        f"{OVERLAP_LINE}\n"
    )
    parsed = read_back(text)
    assert [item.entry_id for item in parsed.opportunities] == [e for e, _ in LAUNCH_REMEDIES]
    assert [item.trigger for item in parsed.opportunities] == [trigger] * 3
    assert parsed.render() == text


def test_the_overlap_line_stands_before_the_baseline_and_reads_back() -> None:
    text = router_report(baseline=Measurement(samples=[44.5] * 10)).render()
    assert f"CUDA graphs removed)\n\n{OVERLAP_LINE}\n\n### vs Baseline\n" in text
    assert read_back(text).render() == text


def _opportunity(entry_id: str, gain: float, trigger: str) -> Opportunity:
    return Opportunity(name=entry_id.title(), entry_id=entry_id, gain_pct=gain, trigger=trigger)


def _top3(*opportunities: Opportunity) -> str:
    report = ProfileReport(
        kernel="k",
        version="v1",
        point=TrialPoint(b=1, s=1, t=64),
        stages=[Stage(name="k", duration=10.0)],
        bottleneck=Bottleneck.MEMORY,
        root_cause="Bytes set the floor.",
        opportunities=opportunities,
    )
    text = report.render()
    assert read_back(text).render() == text
    return text.split("(ranked by estimated impact)\n")[1]


def test_kernel_side_gains_that_are_one_share_are_said_to_overlap() -> None:
    shown = _top3(
        _opportunity("vectorize", 40.0, "dram_pct=38"),
        _opportunity("tile", 40.0, "dram_pct=38"),
        _opportunity("cuda-graphs", 12.0, "launch_overhead_pct=12"),
    )
    assert shown.endswith(
        "\n\n(gains 1 and 2 overlap: each is the same 40% of the time, not a separate part "
        "of it; together they save at most 40%)\n"
    )


@pytest.mark.parametrize(
    "opportunities",
    [
        # Different gains: parts of the time that can add.
        (_opportunity("a", 40.0, "dram_pct=38"), _opportunity("b", 30.0, "dram_pct=38")),
        # The same number on the two sides: the launch overhead and the time above the floor
        # less it, two shares that happen to print alike.
        (
            _opportunity("cuda-graphs", 40.0, "launch_overhead_pct=40"),
            _opportunity("tile", 40.0, "dram_pct=10"),
        ),
        # A gain of 0 claims nothing.
        (_opportunity("a", 0.0, "dram_pct=99"), _opportunity("b", 0.0, "dram_pct=99")),
        # A single opportunity.
        (_opportunity("cuda-graphs", 85.0, "launch_overhead_pct=84.5"),),
    ],
)
def test_no_overlap_line_where_no_two_claim_one_share(
    opportunities: tuple[Opportunity, ...],
) -> None:
    assert "overlap" not in _top3(*opportunities)


def test_judge_tells_a_measurement_to_pass_its_samples_or_use_compare() -> None:
    first, second = Measurement(samples=[10.0] * 8), Measurement(samples=[9.0] * 8)
    with pytest.raises(InputError) as raised:
        judge(first, second)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "baseline: Expected a sequence of samples (a list, a 1-D array), got Measurement "
        "(pass m.samples, the two timings in one unit and taken in the same rounds, or use "
        "compare, which times them in alternating rounds)"
    )
    with pytest.raises(InputError, match=r"^candidate: .*got Measurement \(pass m\.samples"):
        judge(first.samples, second)  # type: ignore[arg-type]


def test_an_integer_sentinel_equal_to_the_poison_is_named() -> None:
    expert_of = torch.empty(TOKENS * TOP_K, dtype=torch.int32)
    no_expert = torch.iinfo(torch.int32).min

    def route() -> None:
        expert_of.copy_(torch.arange(TOKENS * TOP_K, dtype=torch.int32) % EXPERTS)
        expert_of[5] = no_expert  # a token routed to no expert, as the kernel marks it

    with pytest.raises(InputError) as raised:
        check_written(route, expert_of)
    assert str(raised.value) == (
        "Expected every output element written, got 1 of 34 still poisoned (-2147483648, "
        "the poison of torch.int32: never written, or written as -2147483648 by the kernel) "
        "in outputs of shape [34], the first at outputs[5]"
    )


def test_the_hint_names_the_poison_of_the_outputs_that_hold_it() -> None:
    weights, experts = torch.empty(4), torch.empty(4, dtype=torch.int64)

    def route() -> None:
        weights.fill_(0.5)  # every weight written; the ids left as they were

    with pytest.raises(InputError) as raised:
        check_written(route, [weights, experts])
    message = str(raised.value)
    assert "(-9223372036854775808, the poison of torch.int64: never written, or" in message
    assert "NaN" not in message


def test_a_bool_output_is_told_to_be_viewed_as_uint8() -> None:
    mask = torch.zeros(8, dtype=torch.bool)
    with pytest.raises(InputError) as raised:
        check_written(lambda: mask.fill_(True), mask)
    assert str(raised.value) == (
        "Expected a floating or integer output dtype to poison, got torch.bool (check a bool "
        "output viewed as uint8, out.view(torch.uint8): it is poisoned with 255, which no "
        "bool holds)"
    )
    check_written(lambda: mask.fill_(True), mask.view(torch.uint8))
    with pytest.raises(InputError, match=r"\(255, the poison of torch.uint8: never written"):
        check_written(lambda: mask[:4].fill_(True), mask.view(torch.uint8))


def test_a_bool_output_is_refused_before_any_output_is_poisoned() -> None:
    weights, mask = torch.ones(4), torch.zeros(4, dtype=torch.bool)
    with pytest.raises(InputError, match=r"got torch\.bool"):
        poison([weights, mask])
    assert torch.equal(weights, torch.ones(4))


def test_a_tiny_rate_in_the_root_cause_is_written_positionally() -> None:
    # 1000 FLOPs in 44.16 us: 2.26e-05 TFLOP/s in exponent form before.
    few = Roofline(ceilings=H100, cost=Cost(flops=1000, bytes=ROUTER_BYTES))
    text = router_report(roofline=few).root_cause
    tflop_s = significant(1000 / 44.16e-6 / 1e12, 3)
    assert tflop_s == "0.0000226"
    assert f"and {tflop_s} TFLOP/s (" in text
    assert not re.search(r"\de[-+]\d", text), text
