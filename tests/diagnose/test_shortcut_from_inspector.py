"""The overlooked-shortcut item on a log whose workload_profile.md the inspector wrote
(``kernelopt inspect TRACE --write``): the finding says what the profile says, and still
does after the profile's shape table is corrected by hand."""

from __future__ import annotations

import json
from pathlib import Path

from kernelopt import cli
from kernelopt.diagnose import diagnose
from kernelopt.diagnose.model import Pathology
from kernelopt.workload import find_shortcuts, read_profile_md

SUMMARY = """# Experiments Summary

| Exp | Description | Latency | Unit | Correct | Status |
|---|---|---|---|---|---|
| 1 | torch baseline | 20.0 | us | PASS | BASELINE |
| 2 | triton softmax, one program per row | 15.0 | us | PASS | KEPT |
| 3 | BLOCK=256 | 14.8 | us | PASS | KEPT |
"""


def _log_with_profile(root: Path) -> Path:
    """A log of three softmax experiments and the profile the inspector wrote from 90
    calls over one element and 10 over 512."""
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "summary.md").write_text(SUMMARY, encoding="utf-8")
    narrow = {"op": "softmax", "args": {"x": {"shape": [64, 1], "dtype": "float16"}, "dim": -1}}
    wide = {"op": "softmax", "args": {"x": {"shape": [64, 512], "dtype": "float16"}, "dim": -1}}
    lines = [json.dumps({**narrow, "duration_us": 3.0})] * 90
    lines += [json.dumps({**wide, "duration_us": 9.0})] * 10
    trace = root / "experiments" / "softmax_calls.jsonl"
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    profile = root / "experiments" / "workload_profile.md"
    assert cli.main(["inspect", str(trace), "--write", str(profile)]) == 1
    return profile


def test_the_finding_names_the_shortcuts_the_written_profile_lists(tmp_path: Path) -> None:
    profile = _log_with_profile(tmp_path / "log")
    shortcuts = find_shortcuts(read_profile_md(profile))
    assert [s.rule for s in shortcuts] == ["size1-reduction", "dominant-shape"]
    finding = diagnose(tmp_path / "log").finding(Pathology.OVERLOOKED_SHORTCUT)
    assert finding is not None
    assert "softmax over a size-1 axis (n = 1) in 90.0% of calls (75.0% of time)" in finding.summary
    assert "never tests `x.shape[dim] == 1`" in finding.summary
    # Both shortcuts share the guard `x.shape[dim] == 1`: one action links both entries.
    assert [i for a in finding.actions for i in a.catalog_ids] == [
        catalog for s in shortcuts for catalog in s.catalog_ids
    ]
    assert len(finding.actions) == 1
    assert all(e.source == "experiments/workload_profile.md" for e in finding.evidence)


def test_a_shape_table_corrected_by_hand_is_what_the_finding_follows(tmp_path: Path) -> None:
    profile = _log_with_profile(tmp_path / "log")
    text = profile.read_text(encoding="utf-8")
    rows = (
        (
            "| 1 | 90 | 90.0% | 270 | 75.0% | n=1 rows=64 |",
            "| 1 | 10 | 10.0% | 30 | 3.2% | n=1 rows=64 |",
        ),
        (
            "| 2 | 10 | 10.0% | 90 | 25.0% | n=512 rows=64 |",
            "| 2 | 90 | 90.0% | 900 | 96.8% | n=512 rows=64 |",
        ),
    )
    for old, new in rows:
        assert old in text
        text = text.replace(old, new)
    profile.write_text(text, encoding="utf-8")
    finding = diagnose(tmp_path / "log").finding(Pathology.OVERLOOKED_SHORTCUT)
    assert finding is not None
    # The size-1 softmax is now 10 % of the calls: below the item's threshold, not claimed
    # from the section written before the edit.
    assert [a.catalog_id for a in finding.actions] == ["dominant-shape-specialization"]
    assert "never tests `x.shape[dim] == 512`" in finding.summary
    assert "size-1" not in finding.summary
