"""``read_log`` names what the canonical parser and the profiler-output reader refuse or
doubt: a hand-edited Of floor cell in a canonical result, once, and an endless ncu value."""

from __future__ import annotations

from pathlib import Path

from kernelopt.experiments import read_log
from kernelopt.experiments.canonical import render_result
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status

from ..conftest import write_files

RESULT = "experiments/exp_2/result.md"
SUMMARY = (
    "# Experiments Summary\n\n| Exp | Description | Latency | Unit | Correct | Status |\n"
    "|---|---|---|---|---|---|\n| 1 | eager | 60.0 | us | PASS | BASELINE |\n"
    "| 2 | fused kernel | 45.6 | us | PASS | KEPT |\n"
)


def _result(**fields: str) -> str:
    record = ResultRecord(
        experiment=2,
        title="fused kernel",
        status=Status.KEPT,
        correctness=Correctness.PASS,
        rows=(ResultRow(point="b=32", impl="triton", median=45.6, unit="us", floor=35.76),),
        **fields,  # type: ignore[arg-type]
    )
    return render_result(record)


def _named(log_warnings: tuple[str, ...] | list[str], needle: str) -> list[str]:
    return [w for w in log_warnings if needle in w]


def test_a_hand_edited_share_in_a_canonical_result_is_named_once(tmp_path: Path) -> None:
    text = _result()
    assert "| 78.4% |" in text
    root = write_files(
        tmp_path,
        {"experiments/summary.md": SUMMARY, RESULT: text.replace("| 78.4% |", "| 90.0% |")},
    )

    log = read_log(root, catalog=())

    named = _named(log.warnings, "Expected Of floor near the row's floor over its median")
    assert len(named) == 1, log.warnings
    assert named[0].startswith(f"{RESULT}:")
    assert "'90.0%'" in named[0]


def test_a_result_as_written_is_not_named(tmp_path: Path) -> None:
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, RESULT: _result()})

    log = read_log(root, catalog=())

    assert not _named(log.warnings, "Of floor"), log.warnings


def test_a_result_edited_out_of_the_layout_names_the_share_once(tmp_path: Path) -> None:
    # A section added by hand: the file is no longer canonical as a whole, and its
    # Measurements table is read row by row; the edited share is still named once.
    text = _result().replace("| 78.4% |", "| 90.0% |") + "\n## My own section\n\nA note.\n"
    root = write_files(tmp_path, {"experiments/summary.md": SUMMARY, RESULT: text})

    log = read_log(root, catalog=())

    named = _named(log.warnings, "Expected Of floor near the row's floor over its median")
    assert len(named) == 1, log.warnings


def test_an_endless_ncu_value_in_a_profile_is_named(tmp_path: Path) -> None:
    endless = "    DRAM Throughput                 %    " + "9" * 320
    profile = f"## Profile: mla v2 | b=32\n\n```\n{endless}\n```\n"
    root = write_files(
        tmp_path, {"experiments/summary.md": SUMMARY, "experiments/profile.md": profile}
    )

    log = read_log(root, catalog=())

    assert log.profile is not None
    assert "dram_pct" not in log.profile.metrics
    assert _named(log.warnings, "Expected dram_pct as a finite number, got inf; not read")
