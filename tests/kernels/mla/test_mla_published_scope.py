"""What the README's H200 table and the devlog's scope line say they hold, they hold.

The README showed the graph median 948.5 µs beside an "of floor" and ratios computed from
the cold 885.6 µs, without the cold figure; the devlog said "All on one NVIDIA H200,
2026-12-02" above entries run on an H100 and on later days.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
ROWS = REPO / "benchmarks" / "results" / "mla_decode.jsonl"
FIRST, LAST = 1305, 1376  # the rows both tables cite, 1-based
README_POINTS = {
    "s_q=1, h_q=128": "b=32 s=1 h=128 t=4096",
    "s_q=1, h_q=16": "b=32 s=1 h=16 t=4096",
    "s_q=16, h_q=128": "b=32 s=16 h=128 t=4096",
    "s_q=16, h_q=16": "b=32 s=16 h=16 t=4096",
}
DEVLOG = REPO / "docs" / "kernels" / "mla_decode.md"


def _seesaw_medians() -> dict[tuple[str, str], float]:
    """(point, mode) -> the seesaw median of the cited rows."""
    lines = ROWS.read_text(encoding="utf-8").splitlines()[FIRST - 1 : LAST]
    found: dict[tuple[str, str], float] = {}
    for line in lines:
        row = json.loads(line)
        if row["impl"] == "kernelopt_seesaw":
            found[(row["config"]["point"], row["mode"])] = row["median"]
    return found


def _seesaw_cells(text: str) -> dict[str, str]:
    cells: dict[str, str] = {}
    for line in text.splitlines():
        parts = [c.strip() for c in line.strip().strip("|").split("|")]
        if parts[0] in README_POINTS and len(parts) >= 6:
            cells[parts[0]] = parts[1]
    return cells


@pytest.mark.parametrize("label", list(README_POINTS))
def test_the_readme_shows_the_cold_median_where_the_figures_use_it(label: str) -> None:
    medians = _seesaw_medians()
    graph = medians[(README_POINTS[label], "graph")]
    cold = medians[(README_POINTS[label], "cold")]
    cell = _seesaw_cells((REPO / "README.md").read_text(encoding="utf-8"))[label]
    if cold < graph:
        assert cell == f"{graph:.1f} µs ({cold:.1f} cold)"
    else:
        assert cell == f"{graph:.1f} µs"


def test_the_readme_caption_says_which_median_the_figures_use() -> None:
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    caption = text[text.index("### MLA decode on an H200") : text.index("| point |")]
    assert '"of floor" and the ratios use the better of graph and cold' in caption
    assert f"rows {FIRST}-{LAST}" in caption


def _scope_and_entries() -> tuple[str, dict[int, str], str]:
    text = DEVLOG.read_text(encoding="utf-8")
    start = text.index("## What the measurements showed")
    section = text[start : text.index("\n## ", start)]
    scope = " ".join(section.split("\n\n")[1].split())
    body = section[: section.index("### Final table")]
    entries = {int(m[1]): m[2] for m in re.finditer(r"\n(\d+)\. (.*?)(?=\n\d+\. |\Z)", body, re.S)}
    return scope, entries, section


def test_the_devlog_scope_names_every_entry_run_on_an_h100() -> None:
    scope, entries, _ = _scope_and_entries()
    assert not scope.startswith("All on one NVIDIA H200"), scope
    span = re.search(r"entries (\d+)-(\d+)", scope)
    assert span is not None, scope
    first, last = int(span[1]), int(span[2])
    named = {n for n, entry in entries.items() if "H100" in entry}
    # The final entry measures on the H200 and compares with the H100 runs before it.
    assert named - {max(entries)} == set(range(first, last + 1))


def test_the_devlog_scope_spans_every_date_of_its_section() -> None:
    scope, _, section = _scope_and_entries()
    span = re.search(r"from (\d{4}-\d\d-\d\d) to (\d{4}-\d\d-\d\d)", scope)
    assert span is not None, scope
    start, end = span[1], span[2]
    dates = set(re.findall(r"\b2026-\d\d-\d\d\b", section))
    assert min(dates) == start and max(dates) == end
    summary = (DEVLOG.parent / "mla_decode" / "experiments" / "summary.md").read_text("utf-8")
    logged = re.findall(r"^\| \d+ \| (\d{4}-\d\d-\d\d) \|", summary, re.M)
    assert min(logged) == start and max(logged) == end
