"""What users of a GQA prefill over a paged cache, a fused LayerNorm + fp8 quantizer and an
int4 GEMV met in the catalog: entries of decode attention that serve prefill too, searches
that find other forms of a word, a GEMV's standard techniques and split-K at m = 1, and a
knowledge folder that holds no entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import InputError, cli
from kernelopt.catalog import Catalog
from kernelopt.catalog.query import _stem

CATALOG = Catalog.builtin()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


def ids(out: str) -> list[str]:
    return [line.split()[1] for line in out.splitlines() if not line.lstrip().startswith("-")]


# --- GQA prefill over a paged cache -------------------------------------------------------


def test_a_gqa_prefill_is_told_to_load_each_kv_tile_once_per_kv_head(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        capsys, "match", "--family", "attention", "--shape", "h_q=32", "--shape", "h_kv=8"
    )
    assert code == 0 and "head-grouping-mma-tile" in ids(out)
    assert "shape h_q > h_kv (h_q=32, h_kv=8)" in out
    # Decode keeps it, ranked as before by its most specific family.
    decode = CATALOG.query(family="decode-attention", shape={"h_q": 32, "h_kv": 8})
    assert decode[0].id == "head-grouping-mma-tile"
    assert decode[0].reasons[0] == "applies to decode-attention"


def test_a_prefill_over_a_paged_cache_finds_the_paged_cache_entry() -> None:
    attention = [m.id for m in CATALOG.query(family="attention")]
    assert {"paged-kv-cache", "head-grouping-mma-tile"} <= set(attention)
    for entry_id in ("paged-kv-cache", "head-grouping-mma-tile"):
        entry = CATALOG.get(entry_id)
        assert entry.families == ("attention", "decode-attention")
        # The entry's own text says where prefill meets it.
        assert any(c.startswith("Prefill") for c in entry.contexts)


# --- search: forms of a word ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("forms", "stem"),
    [
        (("quantization", "quantize", "quantizer", "quantizers", "quantized"), "quantiz"),
        (("tile", "tiles", "tiled", "tiling"), "til"),
        (("pad", "padded", "padding"), "pad"),
        (("fp8", "l2", "float8e4nv", "pass", "status", "axis"), None),
    ],
)
def test_forms_of_a_word_share_a_stem_and_names_keep_theirs(
    forms: tuple[str, ...], stem: str | None
) -> None:
    if stem is None:
        assert [_stem(f) for f in forms] == list(forms)
    else:
        assert {_stem(f) for f in forms} == {stem}


def test_quantization_finds_the_entries_about_quantizers() -> None:
    matches = {m.id: m for m in CATALOG.search("quantization")}
    assert {"fp8-kv-cache", "triton-interpreter-fp8-cast"} <= set(matches)
    reason = matches["triton-interpreter-fp8-cast"].reasons[0]
    assert reason.startswith("mentions quantization (as quantizer, in When to Apply;")
    # The entry that writes the query's own form says nothing more.
    assert "(as " not in matches["fp8-kv-cache"].reasons[0]
    assert [m.id for m in CATALOG.search("quantizer")][:2] == [
        m.id for m in CATALOG.search("quantize")
    ][:2]


def test_more_words_matched_rank_first_and_named_entries_stay_on_top() -> None:
    matches = CATALOG.search("fp8 quantization cast")
    # Every word, "quantization" as "quantizer": first.
    assert [m.id for m in matches][:2] == ["triton-interpreter-fp8-cast", "fp8-kv-cache"]
    assert "quantization (as quantizer, " in matches[0].reasons[0]
    # An entry named by a keyword outranks every entry found by words alone.
    named = CATALOG.search("float8e4nv quantization")
    assert named[0].id == "triton-interpreter-fp8-cast"
    assert named[0].reasons[0] == "names 'float8e4nv'"
    assert named[0].score > named[1].score + 1


def test_a_plan_casting_to_fp8_under_the_interpreter_finds_the_anti_pattern(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(
        "# Plan: naive fused Triton kernel\n\n## Optimizations to apply\n"
        "1. Kernel fusion: one program per token does add, LayerNorm, amax and the fp8 cast "
        "(`.to(tl.float8e4nv)`); residual written in place.\n"
        "2. Check it on CPU under the interpreter before the GPU run.\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "search", "--kind", "anti-pattern", "--file", str(plan))
    assert code == 0 and ids(out)[0] == "triton-interpreter-fp8-cast"


# --- a GEMV's standard techniques and split-K at m = 1 -----------------------------------------


def test_gemv_fundamentals_leave_out_grouped_tile_order_and_say_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "fundamentals", "--family", "gemv")
    assert code == 0 and "grouped-tile-order" not in out
    assert err == (
        "kernelopt catalog: note: grouped-tile-order, standard for gemm, is left out: its "
        "shape conditions fail at m=1 (gemv is gemm at m=1): m >= 2048 (m=1) and n >= 2048 "
        "and k >= 2048\n"
    )
    # --shape m=1 on gemm answers alike; gemm alone keeps it.
    code, shaped, err = run(capsys, "fundamentals", "--family", "gemm", "--shape", "m=1")
    assert (code, shaped) == (0, out) and "is left out" in err
    code, gemm, err = run(capsys, "fundamentals", "--family", "gemm")
    assert "grouped-tile-order" in gemm and err == ""
    code, big, err = run(capsys, "fundamentals", "--family", "gemm", "--shape", "m=4096")
    assert (big, err) == (gemm, "")


def test_fundamentals_take_shape_facts_in_the_library() -> None:
    assert [e.id for e in CATALOG.fundamentals("gemv")] == ["cuda-event-instrumentation"]
    assert CATALOG.fundamentals("gemm", shape={"m": 1}) == CATALOG.fundamentals("GEMV")
    # A fact given wins over the one the alias fixes.
    assert "grouped-tile-order" in [e.id for e in CATALOG.fundamentals("gemv", shape={"m": 4096})]
    with pytest.raises(InputError, match=r"shape\['m'\]: Expected a number, got 'one'"):
        CATALOG.fundamentals("gemm", shape={"m": "one"})  # type: ignore[dict-item]


def test_split_k_is_a_partial_match_for_m_1_naming_k() -> None:
    matches = CATALOG.query(family="gemm", shape={"m": 1})
    assert [m.id for m in matches] == ["split-k-gemm"]
    reasons = matches[0].reasons
    assert reasons[1] == (
        "shape m <= 32 (m=1) held; k >= 4096 not judged without k (a partial match) — a "
        "decode-shaped GEMM with a long reduction to share out."
    )
    # Ranked below the same condition held whole, and counted once for two partial ones.
    whole = CATALOG.query(family="gemm", shape={"m": 1, "k": 4096})
    assert whole[0].id == "split-k-gemm" and whole[0].score > matches[0].score
    assert len(reasons) == 3 and matches[0].score == pytest.approx(1.0 + 1.0)
    # A comparison that fails still rules it out.
    assert CATALOG.query(family="gemm", shape={"m": 1, "k": 1024}) == []


# --- a knowledge folder that holds no entries -----------------------------------------------


@pytest.mark.parametrize("stray", [None, "notes.txt"])
def test_a_knowledge_folder_without_entries_is_warned_about_once(
    tmp_path: Path, stray: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "emptyk"
    root.mkdir()
    if stray is not None:
        (root / stray).write_text("not an entry\n", encoding="utf-8")
    code, out, err = run(capsys, "list", "--knowledge", str(root))
    assert code == 0 and "split-k-gemm" in out  # the built-ins still answer
    assert err == (
        f"kernelopt catalog: warning: knowledge tree {root} holds no entries (.md files in "
        "optimizations/, anti-patterns/ or languages/<language>/); the built-in entries "
        "answer alone\n"
    )
    problems = Catalog.load(root, strict=False).problems
    assert [(p.path, p.severity.value) for p in problems] == [(str(root), "warning")]
    # A warning, not an error: a strict load of a fresh tree still works.
    assert len(Catalog.load(root)) == len(CATALOG)


def test_a_tree_with_an_entry_gets_no_such_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from .conftest import make_entry, write_entry

    write_entry(tmp_path, make_entry(interactions=()))
    assert not [
        p for p in Catalog.load(tmp_path, strict=False).problems if "no entries" in p.message
    ]


def test_a_long_typed_search_names_the_entries_its_floor_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "search", "fp8", "per-token", "quantization", "layernorm", "residual"
    )
    assert code == 0 and ids(out) == ["fp8-kv-cache"]
    assert err.startswith(
        "kernelopt catalog: note: 12 more entries share some of the words, too small a part "
        "of them to be shown (triton-interpreter-fp8-cast, two-stage-column-reduction, "
        "l2-eviction-hints and 9 more); search fewer words to see them"
    )
    # Fewer words: they are shown.
    code, out, err = run(capsys, "search", "fp8", "quantization")
    assert ids(out)[:2] == ["fp8-kv-cache", "triton-interpreter-fp8-cast"] and err == ""
    # A plan's words are not all chosen: no such note for --file.
    plan = tmp_path / "plan.md"
    plan.write_text("fp8 per-token quantization layernorm residual\n", encoding="utf-8")
    code, out, err = run(capsys, "search", "--file", str(plan))
    assert ids(out) == ["fp8-kv-cache"] and err == ""
