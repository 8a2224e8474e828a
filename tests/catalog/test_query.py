"""Queries: family ancestry, language, metrics, shapes, text; ranked with reasons."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from kernelopt import CatalogError, InputError
from kernelopt.catalog import Catalog, Kind, family_ancestors, normalize_text

CATALOG = Catalog.builtin()


def ids(matches: list) -> list[str]:  # type: ignore[type-arg]
    return [m.entry.id for m in matches]


def test_family_ancestry() -> None:
    assert family_ancestors("mla-decode") == ("mla-decode", "decode-attention", "attention", "any")
    assert family_ancestors("softmax") == ("softmax", "any")
    assert family_ancestors("any") == ("any",)
    assert family_ancestors("conv") == ("conv", "any")
    assert Catalog.family_ancestors("decode-attention") == ("decode-attention", "attention", "any")


def test_fundamentals_follow_ancestry_most_specific_first() -> None:
    assert [e.id for e in CATALOG.fundamentals("mla-decode")] == [
        "head-grouping-mma-tile",
        "kv-tile-shared-load",
        "buffer-persistence",
        "split-kv-flash-decoding",
        "split-kv-lse-combine",
        "online-softmax",
        "cuda-event-instrumentation",
    ]
    assert [e.id for e in CATALOG.fundamentals("softmax")] == [
        "online-softmax",
        "cuda-event-instrumentation",
    ]
    assert [e.id for e in CATALOG.fundamentals("gemm")] == [
        "grouped-tile-order",
        "cuda-event-instrumentation",
    ]


def test_family_query_includes_ancestors_only() -> None:
    mla = ids(CATALOG.query(family="mla-decode"))
    assert {
        "kv-tile-shared-load",
        "split-kv-flash-decoding",
        "online-softmax",
        "cuda-graphs",
    } <= set(mla)
    attention = ids(CATALOG.query(family="attention"))
    # An MLA-specific technique does not apply to attention in general.
    assert "kv-tile-shared-load" not in attention and "online-softmax" in attention
    # Browsing a family puts its fundamentals first.
    assert mla[:2] == ["kv-tile-shared-load", "head-grouping-mma-tile"]
    first, second = CATALOG.query(family="mla-decode")[:2]
    assert first.reasons == ("applies to mla-decode", "fundamental for mla-decode")
    assert second.reasons == (
        "applies to mla-decode (via decode-attention)",
        "fundamental for mla-decode",
    )


def test_language_and_kind_filters() -> None:
    triton = CATALOG.query(language="triton")
    scopes = {m.entry.scope for m in triton}
    assert scopes == {"shared", "triton"}
    assert triton[0].entry.scope == "triton" and "specific to triton" in triton[0].reasons
    cuda_ids = ids(CATALOG.query(language="cuda"))
    assert "warp-specialization" in cuda_ids and "dot-input-precision" not in cuda_ids
    anti = CATALOG.query(kind="anti-pattern")
    assert anti and all(m.entry.kind is Kind.ANTI_PATTERN for m in anti)
    with pytest.raises(InputError, match="Expected a language in triton"):
        CATALOG.query(language="rust")
    with pytest.raises(InputError, match="kind 'optimization' or 'anti-pattern'"):
        CATALOG.query(kind="trick")


def test_match_metrics_reports_fired_triggers_with_values() -> None:
    matches = CATALOG.match_metrics({"dram_pct": 85, "tc_pct": 10})
    assert set(ids(matches)) == {"kernel-fusion", "online-softmax"}
    assert all(any("dram_pct > 70 (dram_pct=85)" in r for r in m.reasons) for m in matches)
    hot = CATALOG.match_metrics({"dram_pct": 130})
    assert ids(hot)[0] == "hot-l2-timing"
    assert CATALOG.match_metrics({}) == []


def test_metric_compared_to_metric() -> None:
    matches = CATALOG.query(
        metrics={"arith_intensity": 30, "ridge": 163, "dram_pct": 45, "tc_pct": 5}
    )
    assert "split-kv-flash-decoding" in ids(matches)
    reason = next(r for m in matches if m.entry.id == "split-kv-flash-decoding" for r in m.reasons)
    assert "arith_intensity < ridge (arith_intensity=30, ridge=163)" in reason


def test_metrics_rank_the_anti_pattern_first_for_many_splits() -> None:
    matches = CATALOG.query(family="mla-decode", metrics={"kv_splits": 32, "waves": 7.8})
    assert ids(matches)[0] == "too-many-kv-splits"
    assert any(r.startswith("metric kv_splits >= 32 (kv_splits=32)") for r in matches[0].reasons)


def test_metric_and_shape_values_may_be_any_real_number() -> None:
    # Values read off arrays are numpy scalars (np.int64 of a shape, np.float32 of a
    # metric): numbers all the same, and scored as such.
    np = pytest.importorskip("numpy")
    wanted = {"kernel-fusion", "online-softmax"}
    for dram in (np.float32(85), np.float64(85), np.int64(85), Fraction(85)):
        assert set(ids(CATALOG.match_metrics({"dram_pct": dram, "tc_pct": np.int32(10)}))) == wanted
    assert ids(CATALOG.query(shape={"s_q": np.int64(1)}))[0] == "size-1-axis-shortcut"


@pytest.mark.parametrize(
    ("facts", "message"),
    [
        ({"dram_pct": "85"}, "metrics['dram_pct']: Expected a number, got '85'"),
        ({"dram_pct": True}, "metrics['dram_pct']: Expected a number, got True"),
        ({"dram_pct": None}, "metrics['dram_pct']: Expected a number, got None"),
        ({5: 85.0}, "metrics: Expected a name (str), got 5"),
        (
            {"dram_pct": 10**400},
            "metrics['dram_pct']: Expected a number a float can hold, got 1000",
        ),
        ([("dram_pct", 85.0)], "metrics: Expected a mapping of names to numbers"),
    ],
)
def test_bad_metric_values_say_what_was_expected(facts: object, message: str) -> None:
    with pytest.raises(InputError) as raised:
        CATALOG.query(metrics=facts)  # type: ignore[arg-type]
    assert message in str(raised.value)


@pytest.mark.parametrize("where", ["metrics", "shape"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_values_that_are_not_finite_are_refused(where: str, value: float) -> None:
    # As `catalog match --metric dram_pct=nan` is: NaN compares false with everything (the
    # answer would read "nothing applies"), and an infinite share fires every "greater than".
    name = "dram_pct" if where == "metrics" else "s_q"
    message = rf"{where}\['{name}'\]: Expected a finite number, got {value!r}"
    with pytest.raises(InputError, match=message):
        CATALOG.query(**{where: {name: value}})  # type: ignore[arg-type]
    np = pytest.importorskip("numpy")
    with pytest.raises(InputError, match=rf"{where}\['{name}'\]: Expected a finite number"):
        CATALOG.query(**{where: {name: np.float32(value)}})  # type: ignore[arg-type]
    with pytest.raises(InputError, match="Expected a finite number"):
        CATALOG.match_metrics({"dram_pct": 85.0, "tc_pct": value})


def test_negative_shape_values_are_refused_as_the_cli_refuses_them() -> None:
    # A negative size, count or share fails every condition: the answer "nothing applies"
    # would hide the slip.
    with pytest.raises(InputError, match=r"shape\['seqlen_k'\]: Expected a number >= 0, got -5"):
        CATALOG.query(shape={"seqlen_k": -5})
    assert CATALOG.query(shape={"seqlen_k": 0}) is not None
    assert ids(CATALOG.query(shape={"s_q": 1}))


def test_the_infinite_intensity_of_a_call_moving_no_bytes_is_above_the_ridge() -> None:
    # Cost.arith_intensity is +inf for a call that moves no bytes, and profile reports
    # match such a call's metrics: it is compute-bound, not refused.
    metrics = {"arith_intensity": math.inf, "ridge": 200.0, "tc_pct": 20.0}
    found = ids(CATALOG.match_metrics(metrics))
    assert "head-grouping-mma-tile" in found and "kv-tile-shared-load" not in found
    for value in (-math.inf, math.nan):
        with pytest.raises(InputError, match="Expected a finite number"):
            CATALOG.match_metrics({**metrics, "arith_intensity": value})
    with pytest.raises(InputError, match="Expected a finite number"):
        CATALOG.query(shape={"arith_intensity": math.inf})


def test_a_shape_too_large_for_a_float_says_what_was_expected() -> None:
    with pytest.raises(InputError, match=r"shape\['seqlen_k'\]: Expected a number a float can"):
        CATALOG.query(shape={"seqlen_k": -(10**400)})


def test_shape_query() -> None:
    matches = CATALOG.query(shape={"s_q": 1})
    assert ids(matches)[0] == "size-1-axis-shortcut"
    assert matches[0].reasons[0].startswith("shape s_q == 1 (s_q=1)")
    assert ids(CATALOG.query(shape={"seqlen_cv": 0.0, "padding_pct": 0})) == [
        "uniform-length-fast-path"
    ]


def test_keyword_search_ranks_named_entries_before_word_matches() -> None:
    matches = CATALOG.search("flash decoding with num_splits")
    assert ids(matches)[0] == "split-kv-flash-decoding"
    assert matches[0].reasons[0] == "names 'flash-decoding', 'num_splits'"
    weak = [m for m in matches if m.reasons[0].startswith("mentions")]
    assert weak and all(m.score < matches[0].score for m in weak)
    assert CATALOG.search("zzzz qqqq") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "split-K with num_splits=16",
            {"split-kv-flash-decoding", "too-many-kv-splits", "split-k-gemm"},
        ),
        ("Flash Decoding, 8 KV splits", {"split-kv-flash-decoding"}),
        ("vectorized loads via vload4", {"vectorized-coalesced-loads"}),
        ("CUDA-graph replay of the decode step", {"cuda-graphs"}),
        ("use tl.exp2 and fold log2(e) into sm_scale", {"exp2-folded-scale"}),
        ("autotune over 10000 configs", {"autotune-explosion"}),
        ("persistent kernel with a tile scheduler", {"persistent-grid"}),
        ("switch tl.dot to input_precision='tf32x3'", {"dot-input-precision"}),
        ("keep torch.empty out of the hot path", {"per-call-allocation"}),
        ("online softmax with a running max", {"online-softmax"}),
    ],
)
def test_tag_experiment_descriptions(text: str, expected: set[str]) -> None:
    assert set(ids(CATALOG.tag(text))) == expected


def test_tf32_does_not_match_tf32x3_but_spellings_fold() -> None:
    assert normalize_text("Split_KV  flash-Decoding") == "split kv flash decoding"
    tagged = ids(CATALOG.tag("tf32x3"))
    assert tagged == ["dot-input-precision"]
    reasons = CATALOG.tag("tf32x3")[0].reasons
    assert reasons == ("names 'tf32x3'",)


def _line_with(path: Path, needle: str) -> str:
    return next(line for line in path.read_text(encoding="utf-8").splitlines() if needle in line)


def test_tags_real_log_descriptions(corpus: Path) -> None:
    opencl = corpus / "opencl-adreno" / "experiments" / "summary.md"
    assert "vectorized-coalesced-loads" in ids(
        CATALOG.tag(_line_with(opencl, "vload4 vectorized loads"))
    )
    prefill = corpus / "gdn-prefill-devlog" / "logs" / "prefill" / "optimization_log.md"
    assert "persistent-grid" in ids(
        CATALOG.tag(_line_with(prefill, "## 2026-04-19 - Persistent scheduling"))
    )
    assert "cuda-graphs" in ids(
        CATALOG.tag(_line_with(prefill, "CUDA graph capture for long path"))
    )
    progress = corpus / "gemm-flipfloppers" / "docs" / "PROGRESS.md"
    assert "cuda-graphs" in ids(CATALOG.tag(_line_with(progress, "### 12. G2.4")))
    assert "kernel-fusion" in ids(CATALOG.tag(_line_with(progress, "### 7. G0.2")))


def test_get_unknown_id_says_what_was_expected() -> None:
    with pytest.raises(CatalogError, match=r"Expected a known entry id .*, got 'no-such-id'"):
        CATALOG.get("no-such-id")
    assert "online-softmax" in CATALOG and "no-such-id" not in CATALOG
    assert [e.id for e in CATALOG] == sorted(e.id for e in CATALOG)


def test_match_to_dict() -> None:
    data = CATALOG.query(shape={"s_q": 1})[0].to_dict()
    assert data["id"] == "size-1-axis-shortcut" and data["kind"] == "optimization"
    assert isinstance(data["score"], float) and data["reasons"]


def test_cutile_dsl_is_an_alias_of_cutile() -> None:
    assert ids(CATALOG.query(language="cutile-dsl")) == ids(CATALOG.query(language="cutile"))
    with pytest.raises(InputError, match="or cutile-dsl for cutile"):
        CATALOG.query(language="rust")


def test_an_unknown_family_is_refused_like_diagnose_does() -> None:
    with pytest.raises(InputError, match="family: Expected a kernel family among any, attention"):
        CATALOG.query(family="no-such")
    with pytest.raises(InputError, match="got 'no-such'"):
        CATALOG.tag("split-kv", family="no-such")
    with pytest.raises(InputError, match="got 'no-such'"):
        CATALOG.fundamentals("no-such")
    with pytest.raises(InputError, match="got 5"):
        CATALOG.query(family=5)  # type: ignore[arg-type]
    # The spellings diagnose --family accepts read the same.
    assert ids(CATALOG.query(family="mla_decode")) == ids(CATALOG.query(family="mla-decode"))
    assert ids(CATALOG.query(family=" MLA decode ")) == ids(CATALOG.query(family="mla-decode"))
    assert CATALOG.fundamentals("MLA_Decode") == CATALOG.fundamentals("mla-decode")
    assert "linear-attention" in CATALOG.families()


def test_a_family_only_user_entries_name_is_known(tmp_path: Path) -> None:
    from .conftest import make_entry, write_entry

    root = tmp_path / "k"
    write_entry(root, make_entry(families=("conv",), interactions=()))
    mine = Catalog.load(root)
    assert "conv" in mine.families()
    assert "demo-trick" in ids(mine.query(family="conv"))


def test_limit_takes_any_integer_including_numpy_ones() -> None:
    np = pytest.importorskip("numpy")
    everything = CATALOG.query()
    assert CATALOG.query(limit=0) == []
    assert CATALOG.query(limit=2) == everything[:2]
    assert CATALOG.query(limit=np.int64(2)) == everything[:2]  # type: ignore[arg-type]
    assert CATALOG.search("split kv", limit=np.uint8(1)) == CATALOG.search("split kv")[:1]  # type: ignore[arg-type]
    assert CATALOG.query(limit=len(everything) + 5) == everything


@pytest.mark.parametrize("limit", [-1, True, 2.0, "2"])
def test_a_bad_limit_says_what_was_expected(limit: object) -> None:
    with pytest.raises(InputError, match=r"limit: Expected a limit that is an int >= 0"):
        CATALOG.query(limit=limit)  # type: ignore[arg-type]
