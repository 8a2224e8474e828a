"""``catalog match --profile`` given a file that is no workload profile says what the file
is and what to pass instead: a JSONL call trace (profile it with ``kernelopt inspect``
first), a ``## Profile:`` hand-off (its metrics go to ``--metric``) or a binary file."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.bench import Bottleneck, ProfileReport, Stage

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "workload" / "data" / "mla_decode_calls.jsonl"
PROFILE = ROOT / "tests" / "workload" / "data" / "handwritten_profile.md"
START = (
    "kernelopt catalog: error: --profile: Expected a workload profile (workload_profile.md, "
    "written by `kernelopt inspect --write`), got "
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", "match", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_call_trace_is_named_with_the_inspect_command_to_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "--profile", str(TRACE))
    assert (code, out) == (2, "")
    assert err == (
        f"{START}a call trace ({TRACE}); run `kernelopt inspect {shlex.quote(str(TRACE))} "
        "--write experiments/workload_profile.md` first and pass the profile it writes\n"
    )


def test_a_profile_handoff_is_named_with_its_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = ProfileReport(
        kernel="fp8_quant",
        version="v3",
        point={"b": 8, "s": 1, "t": 4096},
        stages=[
            Stage(name="scale", duration=2.0, tc_pct=0.1, dram_pct=20.0),
            Stage(name="fp8_quant", duration=9.5, tc_pct=0.4, dram_pct=73.2),
        ],
        bottleneck=Bottleneck.MEMORY,
        root_cause="Bytes set the floor.",
    )
    handoff = tmp_path / "experiments" / "profile.md"
    handoff.parent.mkdir()
    handoff.write_text(report.render(), encoding="utf-8")
    code, out, err = run(capsys, "--profile", str(handoff))
    assert (code, out) == (2, "")
    assert err.startswith(f"{START}a '## Profile:' hand-off ({handoff}:1), which holds ")
    # The longest stage's metrics, as options to type.
    assert (
        "pass its metrics with --metric NAME=VALUE (its longest stage, 'fp8_quant': "
        "--metric tc_pct=0.4 --metric dram_pct=73.2), or --profile the workload profile "
        "(experiments/workload_profile.md)\n"
    ) in err
    code, out, _ = run(capsys, "--metric", "tc_pct=0.4", "--metric", "dram_pct=73.2")
    assert code == 0 and out


def test_a_binary_file_is_named_as_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "trace.bin"
    data.write_bytes(bytes(range(256)) * 4)
    code, _, err = run(capsys, "--profile", str(data))
    assert code == 2 and err == f"{START}a binary file (NUL bytes)\n"


def test_a_workload_profile_is_still_read(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--profile", str(PROFILE))
    assert code == 0 and out
