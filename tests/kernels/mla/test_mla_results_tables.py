"""The MLA tables of README.md and the devlog's final table say what their rows measured.

Both tables cite rows 1305-1376 of ``benchmarks/results/mla_decode.jsonl``. Their time
columns are CUDA-graph medians; "of floor" and the ratios against the peers use the better
of each implementation's CUDA-graph and L2-flushed ("cold") medians. Every figure is
recomputed here from the unrounded rows, so a ratio of rounded times or a figure copied from
another run fails.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
ROWS = REPO / "benchmarks" / "results" / "mla_decode.jsonl"
FIRST, LAST = 1305, 1376  # the final run's rows, 1-based, as both tables cite them

# Table point -> the rows' config point.
POINTS = {
    "s=1, h=128": "b=32 s=1 h=128 t=4096",
    "s=1, h=16": "b=32 s=1 h=16 t=4096",
    "s=16, h=128": "b=32 s=16 h=128 t=4096",
    "s=16, h=16": "b=32 s=16 h=16 t=4096",
    "b=128 varlen, h=128": "b=128 s=1 h=128 t~4096",
    "b=128 varlen, h=16": "b=128 s=1 h=16 t~4096",
}


def _medians() -> dict[tuple[str, str, str], tuple[float, float]]:
    """(point, impl, mode) -> (median, floor) of the final run's rows."""
    lines = ROWS.read_text(encoding="utf-8").splitlines()[FIRST - 1 : LAST]
    found: dict[tuple[str, str, str], tuple[float, float]] = {}
    for line in lines:
        row = json.loads(line)
        assert row["gpu"] == "NVIDIA H200", row["gpu"]
        key = (row["config"]["point"], row["impl"], row["mode"])
        assert key not in found, f"Expected one row per point, impl and mode, got {key} twice"
        found[key] = (row["median"], row["floor"])
    return found


def _expected(point: str) -> dict[str, str]:
    """The table cells of ``point`` as the rows give them."""
    medians = _medians()

    def graph(impl: str) -> float:
        return medians[(point, impl, "graph")][0]

    def best(impl: str) -> float:
        return min(medians[(point, impl, mode)][0] for mode in ("graph", "cold"))

    floor = medians[(point, "kernelopt_seesaw", "graph")][1]
    seesaw = best("kernelopt_seesaw")
    return {
        "seesaw": f"{graph('kernelopt_seesaw'):.1f} µs",
        "of floor": f"{100 * floor / seesaw:.0f} %",
        "hopper": f"{graph('kernelopt_hopper'):.1f} µs",
        "vs torch eager": f"{best('torch_eager') / seesaw:.2f}×",
        "vs torch.compile": f"{best('torch_compile') / seesaw:.2f}×",
    }


def _table(text: str, labels: dict[str, str]) -> dict[str, dict[str, str]]:
    """The rows of the table in ``text`` whose first cells are ``labels``' keys, each as
    {column: cell}; a seesaw cell's note ``(898.6 cold)`` is dropped."""
    columns = ["seesaw", "of floor", "hopper", "vs torch eager", "vs torch.compile"]
    table: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        label = cells[0].replace("s_q=", "s=").replace("h_q=", "h=")
        if label in labels and len(cells) >= 6 and label not in table:
            values = dict(zip(columns, cells[1:6], strict=True))
            values["seesaw"] = re.sub(r"\s*\(.*\)$", "", values["seesaw"])
            table[label] = values
    return table


def _final_table(text: str) -> str:
    start = text.index("### Final table")
    return text[start : text.index("\n#", start + 1)]


@pytest.mark.parametrize("label", list(POINTS)[:4])
def test_the_readme_table_is_the_final_run(label: str) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "rows 1305-1376" in " ".join(text.split())
    table = _table(text, POINTS)
    assert table.get(label) == _expected(POINTS[label])


@pytest.mark.parametrize("label", list(POINTS))
def test_the_devlog_final_table_is_the_final_run(label: str) -> None:
    text = _final_table((REPO / "docs" / "kernels" / "mla_decode.md").read_text(encoding="utf-8"))
    assert "rows 1305-1376" in " ".join(text.split())
    table = _table(text, POINTS)
    assert table.get(label) == _expected(POINTS[label])


def test_a_figure_from_rounded_times_is_caught() -> None:
    # 612.6 / 152.2 rounds to 4.02x; the unrounded medians give 4.03x, as the table says.
    expected = _expected(POINTS["b=128 varlen, h=16"])
    assert expected["vs torch.compile"] == "4.03×"
    assert f"{612.6 / 152.2:.2f}×" != expected["vs torch.compile"]
