"""The measurements the docs cite are files a user of the repository can open."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
MEASUREMENTS = re.compile(r"examples/logs/measurements/([\w.-]+\.(?:json|jsonl|txt|py))")
# A path beside the repository, not in it: cited only as where a copy came from.
OUTSIDE = re.compile(r"(?<![\w/])shared/anchors/")


def test_no_page_cites_a_measurement_outside_the_repository() -> None:
    cited = [
        f"{page.relative_to(REPO)}:{number}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert cited == []


def test_every_cited_measurement_file_exists() -> None:
    names = {
        match.group(1)
        for page in PAGES
        for match in MEASUREMENTS.finditer(page.read_text(encoding="utf-8"))
    }
    assert names, "the docs cite the example measurements"
    missing = sorted(n for n in names if not (REPO / "examples/logs/measurements" / n).is_file())
    assert missing == []
