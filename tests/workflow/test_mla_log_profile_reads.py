"""The MLA decode log's profile.md reads alike in every reader of it.

``docs/kernels/mla_decode/experiments/profile.md`` is a profiler hand-off that the workflow
readers (``parse_profile``, ``perf_row_from_profile``, ``ProfilerPrompt``, ``kernelopt report
profile``) and the log reader (``read_log(...).profile``) both take: each must find the same
kernel, version and trial point, the call's own time, and the experiment it was profiled in.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from kernelopt.bench import ProfileReport
from kernelopt.cli import main
from kernelopt.experiments import ProfileFacts, read_log
from kernelopt.workflow import (
    ProfilerPrompt,
    ProfileWarning,
    parse_point,
    parse_profile,
    perf_row_from_profile,
)

LOG = Path(__file__).resolve().parents[2] / "docs" / "kernels" / "mla_decode" / "experiments"
PROFILE = LOG / "profile.md"
# The seesaw call at s=1, h_q=128, as exp 35 timed it (CUDA-graph median).
CALL_US = 74.91


@pytest.fixture(scope="module")
def handoff() -> ProfileReport:
    """The hand-off as ``parse_profile`` reads it; a part it leaves out fails the read."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=ProfileWarning)
        return parse_profile(PROFILE.read_text(encoding="utf-8"), path=PROFILE)


@pytest.fixture(scope="module")
def facts() -> ProfileFacts:
    """The profile as the log reader reads it from the whole log."""
    profile = read_log(LOG).profile
    assert profile is not None
    return profile


def test_the_heading_names_the_kernel_and_its_version(handoff: ProfileReport) -> None:
    assert (handoff.kernel, handoff.version) == ("mla_decode", "seesaw")
    assert handoff.point == parse_point("b=32, s=1, t=4096, h_q=128")


def test_the_stages_are_the_call_alone(handoff: ProfileReport) -> None:
    # The stage table's stages add up to the call: the parts of it that stage-removal
    # copies measured overlap it and are kept outside the hand-off.
    assert [(stage.duration, stage.unit) for stage in handoff.stages] == [(CALL_US, "us")]


def test_the_devlog_row_times_the_call(handoff: ProfileReport) -> None:
    row = perf_row_from_profile(handoff, gpu="NVIDIA H200", date="2026-12-02")
    assert (row.version, row.time, row.unit) == ("seesaw", CALL_US, "us")
    assert row.point == "b=32 s=1 t=4096 h_q=128"


def test_the_log_reader_agrees_with_the_hand_off(
    handoff: ProfileReport, facts: ProfileFacts
) -> None:
    assert facts.experiment == 35
    assert facts.version == handoff.version
    assert parse_point(facts.point) == handoff.point
    assert facts.bottleneck == "compute"
    assert [item.after for item in facts.opportunities] == [36, 36]


def test_a_profiler_prompt_from_it_names_the_kernels_devlog(handoff: ProfileReport) -> None:
    prompt = ProfilerPrompt(kernel=handoff.kernel, version=handoff.version, point=handoff.point)
    assert prompt.devlog == "docs/kernels/mla_decode.md"


def test_report_profile_checks_it_and_reads_it_alike(
    capsys: pytest.CaptureFixture[str], handoff: ProfileReport
) -> None:
    assert main(["report", "profile", str(PROFILE), "--check"]) == 0
    assert capsys.readouterr().out.strip().endswith(": OK")
    assert main(["report", "profile", str(PROFILE), "--json"]) == 0
    out, err = capsys.readouterr()
    read = json.loads(out)
    assert err == ""
    assert (read["kernel"], read["version"]) == (handoff.kernel, handoff.version)
    assert [stage["duration"] for stage in read["stages"]] == [CALL_US]


def test_the_parts_left_out_of_the_stages_are_still_in_the_file() -> None:
    text = PROFILE.read_text(encoding="utf-8")
    for part, saved in (
        ("key-tile stream after the first pair", "12.99 us"),
        ("PV products", "6.86 us"),
        ("QK^T products", "6.09 us"),
        ("exponentials", "1.02 us"),
    ):
        assert f"| {part} | {saved} |" in text
    assert "(exps 26, 30, 32), profiled in exp 35" in text
