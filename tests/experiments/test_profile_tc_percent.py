"""A share no percentage can be (a TC% below 0) is not taken from profile.md without a word:
the log's reader skips it with a warning naming the value and the file, the hand-off reader
refuses it at its line, and a Stage is never made with it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from kernelopt import FormatError, InputError
from kernelopt.bench import Stage
from kernelopt.experiments import read_log
from kernelopt.workflow import parse_profile

from ..conftest import write_files

_SUMMARY = (
    "| Exp | Description | Latency | Unit | Status |\n|---|---|---|---|---|\n"
    "| 1 | baseline | 100 | us | BASELINE |\n"
    "| 2 | tiles | 90 | us | KEPT |\n"
)
_STAGE_LINE = 5


def _profile(tc: str, *, dram: str = "48.3", occ: str = "n/a (no counters)", more: str = "") -> str:
    return (
        "## Profile: mla_decode v2 | b=32, s=1, t=4096, h=16\n"
        "### Stages\n"
        "| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n"
        "|-------|----------|-----|-------|------|------------|-----------|\n"
        f"| mla_decode | 74.18 us | {tc} | {dram} | {occ} | Memory-bound | floor |\n"
        f"{more}"
        "### Bottleneck: Memory-bound\n"
        "Root cause: Bytes set the floor.\n"
        "### Top 3 Opportunities (ranked by estimated impact)\n"
        "(none: no catalog trigger fired on these metrics)\n"
    )


def _read(tmp_path: Path, profile: str) -> tuple[dict[str, float], tuple[str, ...]]:
    root = write_files(
        tmp_path, {"experiments/summary.md": _SUMMARY, "experiments/profile.md": profile}
    )
    log = read_log(root, catalog=())
    assert log.profile is not None
    return log.profile.metrics, log.warnings


def test_a_negative_tc_percent_is_not_taken_and_is_named_with_its_file(tmp_path: Path) -> None:
    metrics, warnings = _read(tmp_path, _profile("-5"))
    assert "tc_pct" not in metrics
    assert metrics["dram_pct"] == 48.3  # the rest of the row is read
    assert (
        f"experiments/profile.md:{_STAGE_LINE}: Expected TC% as a percentage >= 0, got -5; not read"
    ) in warnings


@pytest.mark.parametrize(
    ("cells", "name", "said"),
    [
        ({"dram": "-0.5%"}, "dram_pct", "Expected DRAM% as a percentage >= 0, got -0.5%"),
        ({"occ": "130"}, "occupancy_pct", "Expected Occ% as a percentage in [0, 100], got 130"),
    ],
)
def test_other_shares_no_percentage_can_be_are_not_taken(
    tmp_path: Path, cells: dict[str, str], name: str, said: str
) -> None:
    metrics, warnings = _read(tmp_path, _profile("8.9", **cells))
    assert name not in metrics
    assert f"experiments/profile.md:{_STAGE_LINE}: {said}; not read" in warnings


def test_a_share_of_a_measured_ceiling_above_100_is_taken(tmp_path: Path) -> None:
    # TC% and DRAM% are shares of measured ceilings: a read-only kernel can beat a copy.
    metrics, warnings = _read(tmp_path, _profile("8.9", dram="103.5"))
    assert metrics["dram_pct"] == 103.5
    assert not [warning for warning in warnings if "DRAM%" in warning]


def test_the_next_stage_states_the_tc_percent_when_the_first_cannot(tmp_path: Path) -> None:
    second = "| combine | 4.1 us | 2.5 | 10.0 | n/a (no counters) | Latency-bound | launch |\n"
    metrics, warnings = _read(tmp_path, _profile("-5", more=second))
    assert metrics["tc_pct"] == 2.5
    assert any("got -5; not read" in warning for warning in warnings)


@pytest.mark.parametrize(
    ("cells", "said"),
    [
        ({"tc": "-5"}, "Expected a percentage >= 0 in TC%, got '-5'"),
        ({"tc": "8.9", "dram": "-1%"}, "Expected a percentage >= 0 in DRAM%, got '-1%'"),
        ({"tc": "8.9", "occ": "130"}, "Expected a percentage in [0, 100] in Occ%, got '130'"),
    ],
    ids=["TC%", "DRAM%", "Occ%"],
)
def test_the_hand_off_reader_refuses_a_share_no_percentage_can_be_at_its_line(
    cells: dict[str, str], said: str
) -> None:
    with pytest.raises(FormatError) as error:
        parse_profile(_profile(**cells), path="profile.md")
    assert str(error.value) == f"profile.md:{_STAGE_LINE} [Stages]: {said}"


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("tc_pct", -5, "tc_pct: Expected a percentage >= 0, got -5"),
        ("dram_pct", -0.5, "dram_pct: Expected a percentage >= 0, got -0.5"),
        ("occupancy_pct", 130.0, "occupancy_pct: Expected a percentage in [0, 100], got 130.0"),
        ("occupancy_pct", -1, "occupancy_pct: Expected a percentage in [0, 100], got -1"),
    ],
)
def test_a_stage_refuses_a_share_no_percentage_can_be(field: str, value: float, said: str) -> None:
    # Made, it was rendered into a hand-off that the reader then refused.
    with pytest.raises(InputError) as error:
        Stage(name="mla_decode", duration=74.18, **{field: value})
    assert str(error.value) == said


def test_a_stage_holds_a_share_of_a_measured_ceiling_above_100() -> None:
    stage = Stage(name="mla_decode", duration=74.18, tc_pct=101.2, dram_pct=103.5, occupancy_pct=0)
    assert (stage.tc_pct, stage.dram_pct, stage.occupancy_pct) == (101.2, 103.5, 0)


def test_the_hand_off_reader_reads_a_share_above_100_of_a_measured_ceiling() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [stage] = parse_profile(_profile("101.2", dram="103.5"), path="profile.md").stages
    assert (stage.tc_pct, stage.dram_pct) == (101.2, 103.5)
