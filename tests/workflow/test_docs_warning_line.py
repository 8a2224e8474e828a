"""The warning line docs/workflow.md shows is the one `kernelopt report` prints: the page
showed ``line 12: Staged loads, est. 2% gain`` where the item is quoted as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "workflow.md"
PROFILE = """\
## Profile: k v1 | b=1, s=1, t=1
### Stages
| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
|-------|----------|-----|-------|------|------------|-----------|
| k | 1 us | 1 | 1 | n/a | memory | x |
### Bottleneck: Memory-bound
Root cause: r.
### Top 3 Opportunities (ranked by estimated impact)
1. A -- est. 5% gain -- trigger: x
2. B -- est. 4% gain -- trigger: x
3. C -- est. 3% gain -- trigger: x
4. Staged loads -- est. 2% gain
"""


def test_the_pages_warning_line_is_the_printed_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = [
        line
        for line in PAGE.read_text("utf-8").splitlines()
        if line.startswith("kernelopt report: warning: profile.md:12")
    ]
    monkeypatch.chdir(tmp_path)
    Path("profile.md").write_text(PROFILE, "utf-8")
    assert main(["report", "profile", "profile.md"]) == 0
    assert shown == [capsys.readouterr().err.strip()]
