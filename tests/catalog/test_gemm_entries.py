"""The built-in GEMM entries: grouped tile order (a gemm fundamental) and split-K.

A user tuning a GEMM gets its standard technique from ``fundamentals("gemm")``, the
entries from the phrases GEMM logs use (``GROUP_SIZE_M``, ``split_k``, ``stream-K``), and
split-K from a decode-shaped M × N × K, but not from a shape where it is known to lose.
"""

from __future__ import annotations

import re

import pytest

from kernelopt.catalog import Catalog, SourceType, lint_tree, parse_entry, render_entry

CATALOG = Catalog.builtin()
GEMM_ENTRIES = ("grouped-tile-order", "split-k-gemm")


def test_grouped_tile_order_is_the_gemm_fundamental_and_split_k_is_not() -> None:
    fundamentals = [e.id for e in CATALOG.fundamentals("gemm")]
    assert fundamentals[0] == "grouped-tile-order"  # the most specific family first
    assert "cuda-event-instrumentation" in fundamentals
    assert "split-k-gemm" not in fundamentals  # it pays on some shapes only
    assert [e.id for e in CATALOG.fundamentals("matmul")] == fundamentals


@pytest.mark.parametrize(
    ("log_line", "entry_id"),
    [
        ("exp 3: GROUP_SIZE_M=8 instead of 1", "grouped-tile-order"),
        ("group_m 16 with BLOCK_M 128", "grouped-tile-order"),
        ("CTA swizzle factor 4", "grouped-tile-order"),
        ("tl.swizzle2d program order", "grouped-tile-order"),
        ("exp 4: split-K=4 GEMV for M=1", "split-k-gemm"),
        ("split_k=8, fp32 workspace", "split-k-gemm"),
        ("splitK reduce kernel removed", "split-k-gemm"),
        ("stream-K schedule over 132 SMs", "split-k-gemm"),
    ],
)
def test_gemm_log_phrases_tag_the_gemm_entries(log_line: str, entry_id: str) -> None:
    assert entry_id in [m.entry.id for m in CATALOG.tag(log_line, family="gemm")]


def test_split_k_in_a_gemm_log_is_the_gemm_entry_not_split_kv_decoding() -> None:
    tagged = [m.entry.id for m in CATALOG.tag("split-K=16 with atomic reduction", family="gemm")]
    assert tagged == ["split-k-gemm"]
    # In a decode-attention log the KV meaning stays, and the GEMM entry is not offered.
    decode = [m.entry.id for m in CATALOG.tag("split-K decode", family="decode-attention")]
    assert "split-kv-flash-decoding" in decode and "split-k-gemm" not in decode


def test_a_shared_memory_swizzle_does_not_tag_the_tile_order() -> None:
    tagged = [m.entry.id for m in CATALOG.tag("TMA box with a 128B swizzled layout", family="gemm")]
    assert "grouped-tile-order" not in tagged


@pytest.mark.parametrize(
    ("shape", "offered"),
    [
        ({"m": 1, "n": 2304, "k": 6144}, True),  # the GEMV shape split-K won on
        ({"m": 128, "n": 128, "k": 65536}, True),  # small output, very long K
        ({"m": 4, "n": 8192, "k": 1024}, False),  # short K: the reduction lost
        ({"m": 1, "n": 7168, "k": 2048}, False),  # short K, wide N: 4.13× slower
        ({"m": 8192, "n": 8192, "k": 8192}, False),  # the tiles fill the GPU
    ],
)
def test_split_k_is_signalled_by_the_shapes_it_wins_on(
    shape: dict[str, int], offered: bool
) -> None:
    found = [m.entry.id for m in CATALOG.query(family="gemm", shape=shape)]
    assert ("split-k-gemm" in found) is offered


def test_large_square_gemms_signal_the_tile_order() -> None:
    found = [
        m.entry.id for m in CATALOG.query(family="gemm", shape={"m": 8192, "n": 8192, "k": 8192})
    ]
    assert found[0] == "grouped-tile-order"
    # Operands this small stay in L2 whatever the order: nothing to signal.
    small = CATALOG.query(family="gemm", shape={"m": 512, "n": 512, "k": 512})
    assert "grouped-tile-order" not in [m.entry.id for m in small]


def test_too_few_programs_signal_split_k() -> None:
    found = [m.entry.id for m in CATALOG.query(family="gemm", metrics={"waves": 0.2})]
    assert "split-k-gemm" in found


@pytest.mark.parametrize("entry_id", GEMM_ENTRIES)
def test_the_gemm_entries_lint_clean_and_are_canonical(entry_id: str) -> None:
    source = CATALOG.source(entry_id)
    assert source is not None
    problems = [p for p in lint_tree() if source.name in p.path or entry_id in p.message]
    assert problems == []
    text = source.read_text(encoding="utf-8")
    assert render_entry(parse_entry(text, path=source)) == text


@pytest.mark.parametrize("entry_id", GEMM_ENTRIES)
def test_the_gemm_entries_cite_external_reports_by_address(entry_id: str) -> None:
    entry = CATALOG.get(entry_id)
    assert entry.families == ("gemm",)
    assert len(entry.evidence) >= 3
    for block in entry.evidence:
        assert block.source_type is SourceType.EXTERNAL_REPORT
        assert re.search(r"https?://|^[\w.-]+/[\w.-]+ \S", block.source), block.source
        assert block.rows, f"{entry_id}: {block.source} has no numbers"


def test_split_k_records_where_it_lost_as_well_as_where_it_won() -> None:
    changes = [row.change for block in CATALOG.get("split-k-gemm").evidence for row in block.rows]
    assert any("slower" in change for change in changes)
    assert any("faster" in change for change in changes)
