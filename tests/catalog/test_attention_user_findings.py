"""What a user of a Triton causal attention prefill (flash-attention forward) meets in the
catalog.

Causal tile skipping is a standard technique of attention, left out of the decode families
whose one query row sees every key; an entry for Gluon loader warps is not offered to a
Triton kernel; the FP8 KV cache is a decode idea; ``match`` takes ``--limit`` as ``search``
does; the size-1 shortcut tells a plain reduction (a copy) from a normalization (no copy).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.catalog import (
    BUILTIN_ROOT,
    Catalog,
    Entry,
    SourceType,
    lint_tree,
    parse_condition,
    render_entry,
)
from kernelopt.catalog.vocabulary import DIALECTS, LANGUAGES, family_shape, language_scopes
from kernelopt.diagnose import Pathology, diagnose

from .conftest import make_entry, write_entry

CATALOG = Catalog.builtin()
ROOT = Path(__file__).resolve().parents[2]
MLA_PLATEAU = ROOT / "examples" / "logs" / "mla-decode-plateau"
DOCS = ROOT / "docs" / "catalog.md"
CAUSAL = "causal-tile-skipping"
# The query of a compute-bound Triton prefill, as the user typed it.
PREFILL_QUERY = (
    "match", "--family", "attention", "--language", "triton",
    "--metric", "tc_pct=50", "--metric", "dram_pct=8", "--metric", "arith_intensity=1024",
    "--metric", "ridge=163", "--shape", "s_q=4096",
)  # fmt: skip
MEMORY_BOUND = {"arith_intensity": 10.0, "ridge": 163.0, "dram_pct": 80.0}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


def ids(entries: Iterable[Entry]) -> list[str]:
    return [e.id for e in entries]


# --- causal tile skipping ----------------------------------------------------------------


def test_causal_tile_skipping_is_a_standard_technique_of_attention(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert CAUSAL in ids(CATALOG.fundamentals("attention"))
    code, out, _ = run(capsys, "fundamentals", "--family", "attention")
    assert code == 0 and re.search(rf"^{CAUSAL}\s+optimization\s+shared\s+fundamental for "
                                   r"attention$", out, re.M)  # fmt: skip


@pytest.mark.parametrize("family", ["decode-attention", "mla-decode", "mla_decode"])
def test_decode_families_do_not_inherit_causal_tile_skipping(family: str) -> None:
    found = ids(CATALOG.fundamentals(family))
    # What decode attention inherits from attention otherwise stays.
    assert CAUSAL not in found and "online-softmax" in found
    assert "split-kv-flash-decoding" in found and "head-grouping-mma-tile" in ids(
        CATALOG.fundamentals("mla-decode")
    )


def test_a_family_name_fixes_the_shape_its_descendants_share() -> None:
    assert family_shape("mla-decode") == {"s_q": 1.0} == family_shape("decode-attention")
    assert family_shape("attention") == {} == family_shape("gemm")


def test_an_entry_ruled_out_by_a_family_shape_stays_with_undecided_conditions(
    tmp_path: Path,
) -> None:
    # A condition on a fact the family does not fix is undecided: the entry stays standard.
    undecided = make_entry(
        id="needs-long-keys",
        families=("attention",),
        fundamental_for=("attention",),
        shape_conditions=(parse_condition("seqlen_k >= 1024"),),
    )
    write_entry(tmp_path, undecided)
    catalog = Catalog.load(tmp_path)
    assert "needs-long-keys" in ids(catalog.fundamentals("mla-decode"))
    assert CAUSAL not in ids(catalog.fundamentals("mla-decode"))


def test_the_entry_cites_its_sources_and_reads_back_to_itself() -> None:
    entry = CATALOG.get(CAUSAL)
    path = BUILTIN_ROOT / entry.relative_path
    assert render_entry(entry) == path.read_text(encoding="utf-8")
    sources = {block.source: block for block in entry.evidence}
    assert all(block.source_type is SourceType.EXTERNAL_REPORT for block in entry.evidence)
    paper = next(b for s, b in sources.items() if "arxiv.org/abs/2307.08691" in s)
    assert "1.7-1.8×" in paper.rows[0].change
    pull = next(b for s, b in sources.items() if "executorch/pull/20198" in s)
    first = pull.rows[0]
    assert (first.before, first.after) == ("729.9 tokens/s", "1065.7 tokens/s")
    assert any("06-fused-attention.py" in s for s in sources)
    assert [str(c) for c in entry.shape_conditions] == ["s_q >= 128"]
    assert not entry.triggers  # a metric alone cannot tell a causal prefill from decode
    assert "causal-only family" in entry.generalization


def test_lint_is_clean_and_both_indexes_list_the_new_entries() -> None:
    assert [p for p in lint_tree() if p.is_error] == []
    for index in (BUILTIN_ROOT / "index.md", ROOT / "docs" / "knowledge" / "index.md"):
        text = index.read_text(encoding="utf-8")
        assert "optimizations/causal-tile-skipping.md" in text
        assert "languages/gluon/anti-patterns/bulk-prefetch-in-tma-loader.md" in text
    count = len(CATALOG)
    assert f"{count} built-in entries" in (ROOT / "README.md").read_text(encoding="utf-8")


PREFILL_KERNEL = '''"""Causal attention prefill in Triton."""
import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, O, n_ctx, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    pid_m = tl.program_id(0)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    for start_n in range(0, n_ctx, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + cols[:, None] * D + offs_d[None, :])
        s = tl.dot(q, tl.trans(k))
        s = tl.where(cols[None, :] <= offs_m[:, None], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + cols[:, None] * D + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(O + offs_m[:, None] * D + offs_d[None, :], acc / l_i[:, None])
'''


def _prefill_log(root: Path, kernel: str) -> Path:
    (root / "experiments").mkdir(parents=True)
    (root / "kernels").mkdir()
    (root / "CLAUDE.md").write_text(
        "# attention prefill\n\nKernel: kernels/attn.py\n", encoding="utf-8"
    )
    (root / "kernels" / "attn.py").write_text(kernel, encoding="utf-8")
    (root / "experiments" / "summary.md").write_text(
        "# Experiments Summary\n\n"
        "| Exp | Description | Latency | Unit | Correct | Status |\n"
        "|---|---|---|---|---|---|\n"
        "| 1 | baseline | 100.0 | us | PASS | BASELINE |\n"
        "| 2 | larger tiles | 90.0 | us | PASS | KEPT |\n",
        encoding="utf-8",
    )
    (root / "experiments" / "profile.md").write_text(
        "## Profile: attn v2 | b=2 h=16 s=4096 d=64\n### Bottleneck: Compute-bound\n"
        "Root cause: tensor cores busy on every key tile.\n",
        encoding="utf-8",
    )
    return root


def test_a_causal_prefill_without_it_is_told_it_lacks_causal_tile_skipping(
    tmp_path: Path,
) -> None:
    found = diagnose(_prefill_log(tmp_path / "log", PREFILL_KERNEL)).finding(
        Pathology.MISSING_FUNDAMENTAL
    )
    assert found is not None and CAUSAL in [a.catalog_id for a in found.actions]


def test_a_two_stage_causal_loop_is_recognized(tmp_path: Path) -> None:
    two_stage = PREFILL_KERNEL.replace(
        "    for start_n in range(0, n_ctx, BLOCK_N):",
        "    # stage 1: off-band tiles, no mask; stage 2: the on-band diagonal tile, masked\n"
        "    for start_n in range(0, (pid_m + 1) * BLOCK_M, BLOCK_N):",
    )
    found = diagnose(_prefill_log(tmp_path / "log", two_stage)).finding(
        Pathology.MISSING_FUNDAMENTAL
    )
    assert found is None or CAUSAL not in [a.catalog_id for a in found.actions]


def test_mla_decode_is_not_told_it_lacks_causal_tile_skipping() -> None:
    diagnosis = diagnose(MLA_PLATEAU)
    found = diagnosis.finding(Pathology.MISSING_FUNDAMENTAL)
    assert found is not None  # split-KV and friends are missing there
    assert CAUSAL not in [a.catalog_id for a in found.actions]
    assert CAUSAL not in found.summary


# --- an entry of another language --------------------------------------------------------


def test_gluon_is_a_dialect_of_triton_and_the_loader_warp_entry_is_scoped_to_it() -> None:
    # A dialect scopes entries; it is no language a kernel is designed in.
    assert DIALECTS == {"gluon": "triton"} and "gluon" not in LANGUAGES
    assert language_scopes("Gluon") == ("gluon", "triton", "shared")
    assert language_scopes("triton") == ("triton", "shared")
    entry = CATALOG.get("bulk-prefetch-in-tma-loader")
    assert entry.scope == "gluon"
    assert entry.relative_path == "languages/gluon/anti-patterns/bulk-prefetch-in-tma-loader.md"


def test_a_triton_prefill_query_leaves_the_gluon_loader_entry_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, *PREFILL_QUERY, "--json")
    found = [m["id"] for m in json.loads(out)]
    assert code == 0 and "bulk-prefetch-in-tma-loader" not in found
    assert CAUSAL in found and "block-pointers-tma" in found
    # Asked for Gluon, it is there, with the Triton entries a Gluon kernel also meets.
    metrics = {"tc_pct": 50.0, "dram_pct": 8.0, "arith_intensity": 1024.0, "ridge": 163.0}
    matches = CATALOG.query(family="attention", language="gluon", metrics=metrics)
    reasons = {m.id: m.reasons for m in matches}
    assert "specific to gluon" in reasons["bulk-prefetch-in-tma-loader"]
    assert "specific to triton, which gluon is written in" in reasons["block-pointers-tma"]
    fundamentals = ids(CATALOG.fundamentals("attention", language="gluon"))
    assert CAUSAL in fundamentals


def test_list_and_fundamentals_take_gluon_in_any_case(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--language", "Gluon")
    assert code == 0 and "bulk-prefetch-in-tma-loader" in out and "block-pointers-tma" in out
    code, out, _ = run(capsys, "list", "--language", "triton")
    assert code == 0 and "bulk-prefetch-in-tma-loader" not in out
    code, out, _ = run(capsys, "match", "--metric", "dram_pct=8", "--language", "gluon")
    assert code == 0 and "- specific to gluon" in out


def test_a_new_gluon_entry_goes_into_its_own_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = tmp_path / "knowledge"
    code, out, _ = run(capsys, "new", "Loader Stall", "--kind", "anti-pattern",
                       "--language", "gluon", "--dir", str(tree))  # fmt: skip
    assert code == 0 and out.strip() == str(tree / "languages/gluon/anti-patterns/loader-stall.md")


# --- the FP8 KV cache is a decode idea ---------------------------------------------------


def test_a_memory_bound_prefill_is_not_offered_the_fp8_kv_cache() -> None:
    found = ids(m.entry for m in CATALOG.query(family="attention", metrics=MEMORY_BOUND,
                                               shape={"s_q": 4096.0}))  # fmt: skip
    assert "fp8-kv-cache" not in found and "online-softmax" in found


@pytest.mark.parametrize("family", ["mla-decode", "decode-attention"])
def test_memory_bound_decode_still_gets_the_fp8_kv_cache(family: str) -> None:
    matches = CATALOG.query(family=family, metrics=MEMORY_BOUND, shape={"s_q": 1.0})
    fp8 = next(m for m in matches if m.id == "fp8-kv-cache")
    assert any(r.startswith("metric arith_intensity < ridge") for r in fp8.reasons)
    assert CATALOG.get("fp8-kv-cache").families == ("decode-attention",)


# --- match --limit -----------------------------------------------------------------------


def test_match_limit_shows_the_best_entries_only(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *PREFILL_QUERY, "--json")
    every = [m["id"] for m in json.loads(out)]
    code, out, _ = run(capsys, *PREFILL_QUERY, "--limit", "2", "--json")
    assert code == 0 and [m["id"] for m in json.loads(out)] == every[:2] and len(every) > 2
    code, out, _ = run(capsys, *PREFILL_QUERY, "--limit", "1")
    assert code == 0 and len(re.findall(r"^\s+\d+\.\d\d  ", out, re.M)) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--limit", "0"), "argument --limit: Expected an int >= 1, got 0"),
        (("--limit", "-3"), "argument --limit: Expected an int >= 1, got -3"),
        (("--limit", "x"), "argument --limit: Expected an int >= 1, got 'x'"),
        (("--limit", "2", "--limit", "3"), "Expected --limit once, got it twice (2, then 3)"),
    ],
)
def test_match_refuses_a_limit_as_search_does(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(["catalog", "match", "--metric", "dram_pct=85", *args])
    match_err = capsys.readouterr().err
    with pytest.raises(SystemExit) as searched:
        cli.main(["catalog", "search", "split", "kv", *args])
    search_err = capsys.readouterr().err
    assert raised.value.code == searched.value.code == 2
    assert message in match_err and message in search_err


def test_the_page_and_help_describe_match_limit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["catalog", "match", "--help"])
    assert "--limit" in capsys.readouterr().out
    page = DOCS.read_text(encoding="utf-8")
    assert "`match` shows every entry that matches" not in page
    assert "`match --limit N`" in page


# --- size-1 axis: a reduction is a copy, a normalization is not ---------------------------


def test_the_size_1_shortcut_tells_a_reduction_from_a_normalization() -> None:
    entry = CATALOG.get("size-1-axis-shortcut")
    (reduce,) = [c for c in entry.shape_conditions if str(c) == "reduce_len == 1"]
    assert "a copy (or a no-op)" not in reduce.note
    assert "plain reduction" in reduce.note and "copy" in reduce.note
    assert "layer norm gives its bias (dx = 0)" in reduce.note and "RMS norm" in reduce.note
    assert "a reduction is the input" not in entry.mechanism
    path = BUILTIN_ROOT / entry.relative_path
    assert render_entry(entry) == path.read_text(encoding="utf-8")
