"""The profile hand-off's sections are read once each, and its items with their wrapped lines.

The contract writes each section once per hand-off (several trial points are several
``## Profile:`` hand-offs): a second section of a name was read past, dropping what it
said, and an opportunity wrapped onto the next line lost the rest of its trigger.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import FormatError
from kernelopt.cli import main
from kernelopt.workflow import parse_profile, parse_profiles

TEXT = """## Profile: mla_decode v2 | b=32, s=1, t=4096
### Stages
| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
|-------|----------|-----|-------|------|------------|-----------|
| decode | 66.53 us | 9.9 | 53.8 | n/a (no counters) |  |  |
### Bottleneck: Memory-bound
Root cause: Bytes set the floor.
### Top 3 Opportunities (ranked by estimated impact)
1. Split-KV flash decoding (`split-kv-flash-decoding`) -- est. 41% gain -- trigger: dram_pct=53.8
2. Coalesced loads (`vectorized-coalesced-loads`) -- est. 10% gain -- trigger: dram_pct<60

### vs Baseline
| Metric | Previous | Current | Change |
|--------|----------|---------|--------|
| Latency (us) | 74.08 | 66.53 | -10.2% |
"""

# Each section as written a second time, after the last: (its name in the error, the text).
SECOND = {
    "Stages": (
        "Stages",
        "### Stages\n"
        "| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n"
        "|---|---|---|---|---|---|---|\n"
        "| combine | 5.1 us | 1.0 | 20.0 | 30.0 |  |  |\n",
    ),
    "Bottleneck": (
        "Bottleneck",
        "### Bottleneck: Latency-bound\nRoot cause: The combine waits on the splits.\n",
    ),
    "Top 3": (
        "Top 3 Opportunities",
        "### Top 3 Opportunities\n1. Fused combine -- est. 5% gain -- trigger: waves<1\n",
    ),
    "vs Baseline": (
        "vs Baseline",
        "### vs Baseline (if applicable)\n"
        "| Metric | Previous | Current | Change |\n"
        "|---|---|---|---|\n"
        "| DRAM% | 48.3 | 53.8 | +5.5pp |\n",
    ),
}


def test_the_text_read_here_is_the_canonical_form() -> None:
    assert parse_profile(TEXT).render() == TEXT


@pytest.mark.parametrize("which", sorted(SECOND))
def test_a_second_section_of_a_name_is_refused_naming_both_lines(which: str) -> None:
    name, second = SECOND[which]
    text = TEXT + "\n" + second
    first = next(
        number
        for number, line in enumerate(TEXT.splitlines(), start=1)
        if line.startswith(f"### {name}")
    )
    again = len(TEXT.splitlines()) + 2
    with pytest.raises(FormatError) as error:
        parse_profile(text, path="profile.md")
    assert str(error.value) == (
        f"profile.md:{again} [{name}]: Expected one '### {name}' section in the profile "
        f"hand-off that starts at line 1, got 2 (lines {first} and {again})"
    )


def test_several_hand_offs_each_with_their_sections_still_read() -> None:
    # The sections repeat from one trial point's hand-off to the next: that is no second
    # section, each hand-off runs to the next `##` heading.
    other = TEXT.replace("b=32, s=1", "b=64, s=1")
    reports = parse_profiles(TEXT + "\n" + other)
    assert [report.point.b for report in reports] == [32, 64]


def test_the_cli_says_which_section_is_written_twice_and_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "profile.md"
    path.write_text(TEXT + "\n" + SECOND["Top 3"][1], encoding="utf-8")
    assert main(["report", "profile", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "Expected one '### Top 3 Opportunities' section" in err and "lines 8 and 17" in err


def test_an_opportunity_wrapped_onto_the_next_line_keeps_its_trigger() -> None:
    text = TEXT.replace("trigger: dram_pct=53.8", "trigger: dram_pct=53.8,\n   tc_pct<20")
    first, second = parse_profile(text).opportunities
    assert first.trigger == "dram_pct=53.8, tc_pct<20"
    assert second.trigger == "dram_pct<60"


def test_an_opportunity_wrapped_inside_its_name_reads_as_one() -> None:
    # Line by line, the first line was no opportunity at all (a FormatError).
    text = TEXT.replace("1. Split-KV flash decoding (", "1. Split-KV flash\n   decoding (")
    first, _ = parse_profile(text).opportunities
    assert (first.name, first.entry_id) == ("Split-KV flash decoding", "split-kv-flash-decoding")


def test_a_bulleted_opportunity_keeps_its_wrapped_line_too() -> None:
    text = TEXT.replace("1. Split", "- Split").replace("2. Coalesced", "- Coalesced")
    text = text.replace("trigger: dram_pct<60", "trigger: dram_pct<60\n  and tc_pct<20")
    _, second = parse_profile(text).opportunities
    assert second.trigger == "dram_pct<60 and tc_pct<20"


def test_prose_after_a_blank_line_is_not_part_of_the_last_opportunity() -> None:
    text = TEXT.replace("trigger: dram_pct<60\n", "trigger: dram_pct<60\n\nBoth are estimates.\n")
    _, second = parse_profile(text).opportunities
    assert second.trigger == "dram_pct<60"
