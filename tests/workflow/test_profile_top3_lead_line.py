"""A profile hand-off's Top 3 opened by a lead line (``**Top 3 Opportunities**``) instead
of its ``### Top 3 Opportunities`` heading is refused naming that line, and a lead line
inside the section is prose over the list or table it reads."""

from __future__ import annotations

import pytest

from kernelopt import FormatError
from kernelopt.bench import Opportunity
from kernelopt.workflow import parse_profile

from .conftest import memory_bound_report, read_profile_warned

SPLIT_KV = Opportunity(
    name="Split-KV flash decoding",
    entry_id="split-kv-flash-decoding",
    gain_pct=41.0,
    trigger="dram_pct=48.3",
)
COMBINE = Opportunity(
    name="Fused combine", entry_id="fused-combine", gain_pct=5.0, trigger="waves<1"
)
REPORT = memory_bound_report(opportunities=[SPLIT_KV, COMBINE])
HEADING = "### Top 3 Opportunities (ranked by estimated impact)\n"
# Everything up to the Top 3's heading, the heading's line and the items after it.
BEFORE, _, ITEMS = REPORT.render().partition(HEADING)
HEADING_LINE = BEFORE.count("\n") + 1
TABLE = (
    "| Rank | Opportunity | Entry | Est. Gain | Trigger |\n"
    "|------|-------------|-------|-----------|---------|\n"
    "| 1 | Split-KV flash decoding | `split-kv-flash-decoding` | 41% | dram_pct=48.3 |\n"
    "| 2 | Fused combine | fused-combine | 5% | waves<1 |\n"
)


@pytest.mark.parametrize(
    "lead", ["**Top 3 Opportunities**", "**Top 3 opportunities:**", "*Top 3 Opportunities*"]
)
@pytest.mark.parametrize("body", [ITEMS, TABLE], ids=["list", "table"])
def test_a_lead_line_in_place_of_the_heading_is_refused_at_its_line(lead: str, body: str) -> None:
    text = f"{BEFORE}\n{lead}\n\n{body}"
    with pytest.raises(FormatError) as caught:
        parse_profile(text, path="profile.md")
    # The blank line before it moves the lead line one down from where the heading was.
    assert (caught.value.line, caught.value.section) == (HEADING_LINE + 1, "Top 3 Opportunities")
    assert caught.value.message == (
        "Expected a '### Top 3 Opportunities' section in the profile hand-off that starts at "
        f"line 1, got none: line {HEADING_LINE + 1}, {lead!r}, opens it as a lead line, not "
        "as that heading"
    )


def test_without_a_lead_line_a_missing_top_3_is_refused_as_before() -> None:
    with pytest.raises(FormatError) as caught:
        parse_profile(BEFORE + "\nTop 3 opportunities are Split-KV and a fused combine.\n")
    assert (caught.value.line, caught.value.message) == (
        1,
        "Expected a '### Top 3 Opportunities' section in the profile hand-off that starts at "
        "line 1, got none",
    )


@pytest.mark.parametrize("lead", ["Top 3 opportunities:", "**Top 3 Opportunities**"])
@pytest.mark.parametrize("body", [ITEMS, TABLE], ids=["list", "table"])
def test_a_lead_line_under_the_heading_reads_as_the_heading_alone(lead: str, body: str) -> None:
    assert read_profile_warned(f"{BEFORE}{HEADING}{lead}\n\n{body}") == (REPORT, [])
