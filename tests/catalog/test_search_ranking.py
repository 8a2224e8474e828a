"""Search ranks by where a word stands and how often, with the id only as the last tie-break."""

from __future__ import annotations

from typing import Any

import pytest

from kernelopt import cli
from kernelopt.catalog import Catalog, Entry, Match

from .conftest import make_entry

BUILTIN = Catalog.builtin()


def ids(matches: list[Match]) -> list[str]:
    return [m.entry.id for m in matches]


def entry(entry_id: str, **fields: Any) -> Entry:
    """An entry whose text says nothing of swizzles or banks unless ``fields`` do."""
    base: dict[str, Any] = {
        "id": entry_id,
        "name": entry_id.replace("-", " ").title(),
        "keywords": (entry_id,),
        "contexts": ("Decode attention with long KV caches.",),
        "mechanism": "It works because of reasons.",
        "interactions": (),
    }
    return make_entry(**{**base, **fields})


def test_one_word_ranks_name_then_when_to_apply_then_mentions_then_id() -> None:
    catalog = Catalog(
        [
            entry("aaa-once", mechanism="One swizzle here."),
            entry("bbb-thrice", mechanism="A swizzle, a swizzle and a swizzle."),
            entry("ccc-once", mechanism="Also one swizzle."),
            entry("mmm-when", contexts=("Kernels whose shared tiles need a swizzle.",)),
            entry("zzz-titled", name="Swizzled Tiles", keywords=("tile swizzle",)),
            entry("nothing"),
        ]
    )
    matches = catalog.search("swizzle")
    assert ids(matches) == ["zzz-titled", "mmm-when", "bbb-thrice", "aaa-once", "ccc-once"]
    assert [m.reasons for m in matches] == [
        # "Swizzled" in the name and "swizzle" in a keyword: two forms of one word.
        ("mentions swizzle (in its name or keywords; 2 times in all)",),
        ("mentions swizzle (in When to Apply; 1 time in all)",),
        ("mentions swizzle (in its text only; 3 times in all)",),
        ("mentions swizzle (in its text only; 1 time in all)",),
        ("mentions swizzle (in its text only; 1 time in all)",),
    ]
    # Equal place and count: equal score, and the id decides.
    assert matches[3].score == matches[4].score


def test_more_of_the_words_still_outranks_a_better_place() -> None:
    catalog = Catalog(
        [
            entry("titled-one-word", name="Swizzle Everything", keywords=("swizzle all",)),
            entry("both-words-once", mechanism="A swizzle spreads rows over the banks."),
        ]
    )
    matches = catalog.search("swizzle banks")
    assert ids(matches) == ["both-words-once", "titled-one-word"]
    assert matches[0].reasons == (
        "mentions banks (in its text only; 1 time in all), "
        "swizzle (in its text only; 1 time in all)",
    )


def test_named_entries_stay_first_and_tie_by_mentions_not_by_id() -> None:
    catalog = Catalog(
        [
            entry("aaa-named", keywords=("mbar",)),
            entry("bbb-named", keywords=("mbar",), mechanism="Every mbar arrives; an mbar waits."),
            entry("ccc-two-names", keywords=("mbar", "mbar wait")),
            entry("ddd-mentions", name="Mbar Everywhere", mechanism=" ".join(["mbar"] * 20)),
        ]
    )
    matches = catalog.search("mbar wait")
    # Two names first, then one name (more mentions first), then mentions only.
    assert ids(matches) == ["ccc-two-names", "bbb-named", "aaa-named", "ddd-mentions"]
    assert matches[1].reasons == (
        "names 'mbar'",
        # "waits" is a form of the query's "wait": found, and said in which form.
        "mentions mbar (in its name or keywords; 3 times in all), "
        "wait (as waits, in its text only; 1 time in all)",
    )
    assert matches[2].score < matches[1].score < matches[0].score
    # Tagging keeps to the names it finds, with no word counts.
    assert [m.reasons for m in catalog.tag("mbar")] == [("names 'mbar'",)] * 3


@pytest.mark.parametrize(
    ("word", "first"),
    [
        ("softmax", "online-softmax"),
        ("fp8", "fp8-kv-cache"),
        ("graph", "cuda-graphs"),
        ("split-kv", "split-kv-flash-decoding"),
        ("split-k", "split-k-gemm"),
    ],
)
def test_builtin_one_word_searches_put_the_entry_about_the_word_first(
    word: str, first: str
) -> None:
    assert ids(BUILTIN.search(word))[0] == first


def test_cli_search_prints_the_entry_about_the_word_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli.main(["catalog", "search", "softmax", "--limit", "2"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0].split()[1] == "online-softmax"
    assert out.splitlines()[1].strip().startswith("- mentions softmax (in its name or keywords;")
