"""The profile hand-off read as a user writes it by hand: every value the record refuses is a
``FormatError`` naming the file, line and section, and no value is read as another.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import FormatError
from kernelopt.bench import Bottleneck, Opportunity, ProfileReport, Stage
from kernelopt.cli import main
from kernelopt.workflow import parse_point, parse_profile

TEXT = ProfileReport(
    kernel="mla_decode",
    version="v2",
    point={"b": 32, "s": 1, "t": 4096, "h": 16},
    stages=[Stage(name="mla_decode", duration=74.18, tc_pct=8.9, dram_pct=48.3)],
    bottleneck=Bottleneck.MEMORY,
    root_cause="Bytes set the floor.",
    opportunities=[
        Opportunity(
            name="Split-KV flash decoding",
            entry_id="split-kv-flash-decoding",
            gain_pct=41.0,
            trigger="dram_pct=48.3",
        )
    ],
).render()
STAGE_LINE = 5  # the one stage's row
OPPORTUNITY_LINE = 9


def _edited(old: str, new: str) -> str:
    assert old in TEXT
    return TEXT.replace(old, new)


def test_the_text_edited_here_reads_as_the_lines_named() -> None:
    lines = TEXT.splitlines()
    assert lines[STAGE_LINE - 1].startswith("| mla_decode | 74.18 us |")
    assert lines[OPPORTUNITY_LINE - 1].startswith("1. Split-KV flash decoding")


@pytest.mark.parametrize("point", ["b=32, s=1, t=4096, b=64", "b=32 s=1 t=4096 s=16"])
def test_an_axis_written_twice_in_the_heading_is_refused_not_read_as_the_last(point: str) -> None:
    # The later value won without a word: the report was then read as another point.
    text = _edited("b=32, s=1, t=4096, h=16", point)
    with pytest.raises(
        FormatError, match=r"Expected each axis of a trial point once, got .* twice"
    ):
        parse_profile(text, path="profile.md")
    with pytest.raises(FormatError, match="twice"):
        parse_point(point)


def test_an_axis_without_a_name_is_a_malformed_point_not_an_axis_below_one() -> None:
    with pytest.raises(FormatError) as error:
        parse_point("b=32, s=1, t=4096, =3")
    assert str(error.value) == (
        "Expected a trial point like 'b=32, s=1, t=4096', got 'b=32, s=1, t=4096, =3'"
    )


@pytest.mark.parametrize("duration", ["-5 us", "nan us", "inf us", "1e400 us"])
def test_a_duration_that_is_no_time_is_a_format_error_at_its_line(duration: str) -> None:
    text = _edited("| 74.18 us |", f"| {duration} |")
    with pytest.raises(FormatError) as error:
        parse_profile(text, path="profile.md")
    assert str(error.value) == (
        f"profile.md:{STAGE_LINE} [Stages]: Expected a finite duration >= 0, got '{duration}'"
    )


@pytest.mark.parametrize("gain", ["nan", "inf", "1e400"])
def test_a_gain_that_is_no_number_is_a_format_error_at_its_line(gain: str) -> None:
    text = _edited("est. 41% gain", f"est. {gain}% gain")
    with pytest.raises(FormatError) as error:
        parse_profile(text, path="profile.md")
    assert str(error.value) == (
        f"profile.md:{OPPORTUNITY_LINE} [Top 3 Opportunities]: "
        f"Expected a finite estimated gain, got '{gain}%'"
    )


def test_an_entry_id_with_a_space_is_a_format_error_at_its_line() -> None:
    text = _edited("(`split-kv-flash-decoding`)", "(`split kv`)")
    with pytest.raises(FormatError) as error:
        parse_profile(text, path="profile.md")
    assert str(error.value) == (
        f"profile.md:{OPPORTUNITY_LINE} [Top 3 Opportunities]: "
        "Expected an entry id without spaces, got 'split kv'"
    )


def test_report_profile_says_a_hand_off_with_a_nan_gain_does_not_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It exited 2, a usage error, with "gain_pct: Expected a finite number, got nan" and
    # neither the file nor the line.
    path = tmp_path / "profile.md"
    path.write_text(_edited("est. 41% gain", "est. nan% gain"), encoding="utf-8")
    for check in ([], ["--check"]):
        code = main(["report", "profile", str(path), *check])
        out, err = capsys.readouterr()
        assert (code, out) == (1, "")
        assert f"profile.md:{OPPORTUNITY_LINE} [Top 3 Opportunities]" in err
        assert "Expected a finite estimated gain, got 'nan%'" in err


def test_report_profile_refuses_a_heading_with_an_axis_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "profile.md"
    path.write_text(_edited("b=32, s=1, t=4096, h=16", "b=32, s=1, t=4096, b=64"))
    code = main(["report", "profile", str(path)])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert "b twice" in err
    assert "b=64" not in out


@pytest.mark.parametrize("marker", ["-", "*"])
def test_opportunities_written_as_bullets_are_read_not_dropped(
    marker: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Top 3 of `- ...` items read as no opportunity, and was printed back as "none fired".
    text = _edited("\n1. Split-KV", f"\n{marker} Split-KV")
    [opportunity] = parse_profile(text).opportunities
    assert (opportunity.entry_id, opportunity.gain_pct) == ("split-kv-flash-decoding", 41.0)
    path = tmp_path / "profile.md"
    path.write_text(text, encoding="utf-8")
    assert main(["report", "profile", str(path)]) == 0
    out, _ = capsys.readouterr()
    assert out == TEXT
    assert "none: no catalog trigger fired" not in out


def test_a_bullet_in_the_opportunities_that_is_none_is_a_format_error_at_its_line() -> None:
    text = _edited(
        "\n1. Split-KV flash decoding (`split-kv-flash-decoding`) -- est. 41% gain -- "
        "trigger: dram_pct=48.3",
        "\n- split the KV sequence across programs",
    )
    with pytest.raises(
        FormatError, match=f"profile.md:{OPPORTUNITY_LINE} \\[Top 3 Opportunities\\]"
    ):
        parse_profile(text, path="profile.md")
