"""The overlooked-shortcut item on a size-1 axis near its line of 50%.

Under the line in calls and in time, the item says the share and that it is under the
line, not that there is no size-1 axis. Under it in calls but over it in time, the item
finds the shortcut: its line is a share of calls or of time, as for a dominant shape.
"""

from __future__ import annotations

from pathlib import Path

from kernelopt.diagnose import diagnose
from kernelopt.diagnose.model import Pathology
from kernelopt.workload import Call, TensorArg, profile_calls, write_profile_md

SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | torch baseline | 20.0 | us | PASS | BASELINE |
| 2 | triton rms norm, one program per row | 15.0 | us | PASS | KEPT |
"""


def _log(root: Path, one_row_us: float | None, other_us: float | None) -> Path:
    """A log whose profile has rows = 1 in 12 of 25 calls (48%)."""
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")

    def call(rows: int, duration: float | None) -> Call:
        x = TensorArg(name="x", shape=(rows, 4096), dtype="float16")
        return Call(op="rms_norm", args=(x,), duration_us=duration)

    calls = [call(1, one_row_us)] * 12 + [call(8 + i, other_us) for i in range(13)]
    write_profile_md(profile_calls(calls), root / "experiments" / "workload_profile.md")
    return root


def test_a_size1_axis_under_the_line_is_named_with_its_share(tmp_path: Path) -> None:
    diagnosis = diagnose(_log(tmp_path / "log", None, None))
    assert diagnosis.finding(Pathology.OVERLOOKED_SHORTCUT) is None
    (sentence,) = [
        c.sentence for c in diagnosis.checks if c.pathology is Pathology.OVERLOOKED_SHORTCUT
    ]
    # Before: "(no size-1 axis, no dominant shape)".
    assert "rows = 1 in 48.0% of calls, under the 50% line" in sentence
    assert "no size-1 axis" not in sentence


def test_a_size1_axis_over_the_line_in_time_is_a_finding(tmp_path: Path) -> None:
    # 12 calls of 10 us against 13 of 8 us: 53.6% of the time.
    log = _log(tmp_path / "log", 10.0, 8.0)
    finding = diagnose(log).finding(Pathology.OVERLOOKED_SHORTCUT)
    assert finding is not None
    assert "rows = 1 in 48.0% of calls (53.6% of time)" in finding.summary
