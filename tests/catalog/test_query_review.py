"""Queries as a kernel engineer uses them: short terms, empty text, filters' reasons, truth."""

from __future__ import annotations

import operator
import random

import pytest

from kernelopt import InputError
from kernelopt.catalog import Catalog, Comparison, Condition, Match

CATALOG = Catalog.builtin()

_OPS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def ids(matches: list[Match]) -> list[str]:
    return [m.entry.id for m in matches]


def _holds(comparison: Comparison, facts: dict[str, float]) -> bool:
    """The comparison worked out here, apart from the code under test."""
    if comparison.name not in facts:
        return False
    if comparison.other is not None:
        if comparison.other not in facts:
            return False
        right = facts[comparison.other]
    else:
        assert comparison.value is not None
        right = comparison.value
    return bool(_OPS[comparison.op.value](facts[comparison.name], right))


@pytest.mark.parametrize(
    ("term", "expected_ids"),
    [
        ("l2", {"hot-l2-timing", "l2-eviction-hints"}),
        ("kv", {"split-kv-flash-decoding", "fp8-kv-cache", "paged-kv-cache"}),
        ("L2 hit rate", {"l2-eviction-hints"}),
    ],
)
def test_two_letter_kernel_terms_find_entries(term: str, expected_ids: set[str]) -> None:
    # l2, kv, tc and sm are how kernel engineers write; they were dropped as too short.
    assert expected_ids <= set(ids(CATALOG.search(term)))


def test_two_digit_numbers_alone_do_not_match_every_size() -> None:
    with pytest.raises(InputError, match=r"keyword: Expected a keyword with a word"):
        CATALOG.search("16")


@pytest.mark.parametrize("text", ["", "   ", "the of and", "!!! --- ...", "x", "a -_- b"])
def test_text_with_nothing_to_look_for_is_refused(text: str) -> None:
    with pytest.raises(InputError, match=r"^keyword: Expected a keyword with a word .*, got "):
        CATALOG.search(text)
    with pytest.raises(InputError, match=r"^keyword: Expected a keyword with a word"):
        CATALOG.query(keyword=text, kind="anti-pattern")


def test_text_naming_an_entry_without_words_still_finds_it() -> None:
    # "s_q=1" is a keyword of size-1-axis-shortcut although none of its parts is a word.
    assert ids(CATALOG.search("s_q=1"))[:1] == ["size-1-axis-shortcut"]


def test_tagging_empty_text_tags_nothing() -> None:
    # A description that names no technique is an answer there, not a slip.
    assert CATALOG.tag("") == []
    assert CATALOG.tag("the of and") == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kind": "anti-pattern"},
        {"language": "triton"},
        {"language": "cuda", "kind": "optimization"},
        {"family": "mla-decode"},
    ],
)
def test_every_filtered_match_says_why_it_is_there(kwargs: dict[str, str]) -> None:
    matches = CATALOG.query(**kwargs)  # type: ignore[arg-type]
    assert matches
    assert all(m.reasons for m in matches), [m.id for m in matches if not m.reasons]


def test_filter_reasons_name_the_filter() -> None:
    shared = next(m for m in CATALOG.query(language="triton") if m.entry.scope == "shared")
    assert shared.reasons == ("shared by every language, triton included",)
    assert all("kind anti-pattern" in m.reasons for m in CATALOG.query(kind="Anti-Pattern"))


def _thresholds() -> list[dict[str, float]]:
    """Facts at, just under and just over every number a built-in condition compares with."""
    out = []
    for entry in CATALOG:
        for condition in (*entry.triggers, *entry.shape_conditions):
            for c in condition.comparisons:
                if c.value is not None:
                    for delta in (-1.0, 0.0, 1.0):
                        out.append({c.name: max(c.value + delta, 0.0)})
    return out


@pytest.mark.parametrize("facts", _thresholds())
def test_answers_at_thresholds_are_true(facts: dict[str, float]) -> None:
    for where, conditions_of in (
        ("metrics", lambda e: e.triggers),
        ("shape", lambda e: e.shape_conditions),
    ):
        got = set(ids(CATALOG.query(**{where: facts})))  # type: ignore[arg-type]
        want = {
            e.id
            for e in CATALOG
            if any(all(_holds(c, facts) for c in cond.comparisons) for cond in conditions_of(e))
            or (where == "shape" and any(_partly_holds(cond, facts) for cond in conditions_of(e)))
        }
        assert got == want, (where, facts)


def _partly_holds(condition: Condition, facts: dict[str, float]) -> bool:
    """A shape condition whose comparisons on the facts given hold, one at least, while
    another reads a fact not given: a partial match (``m <= 32 and k >= 4096`` at m=1)."""
    given = [c for c in condition.comparisons if {c.name, c.other} - {None} <= facts.keys()]
    return 0 < len(given) < len(condition.comparisons) and all(_holds(c, facts) for c in given)


def test_exact_threshold_of_greater_or_equal_fires() -> None:
    matches = CATALOG.match_metrics({"kv_splits": 32})
    assert ids(matches) == ["too-many-kv-splits"]
    assert matches[0].reasons[0].startswith("metric kv_splits >= 32 (kv_splits=32)")
    assert "kernel-fusion" not in ids(CATALOG.match_metrics({"dram_pct": 60, "tc_pct": 10}))


def test_random_profiles_return_only_entries_whose_triggers_hold() -> None:
    rng = random.Random(7)
    names = sorted({n for e in CATALOG for t in e.triggers for n in t.names})
    for _ in range(300):
        facts = {n: float(rng.choice([0, 1, 2, 8, 20, 50, 60, 70, 85, 100, 2000])) for n in names}
        for m in CATALOG.match_metrics(facts):
            fired = [t for t in m.entry.triggers if all(_holds(c, facts) for c in t.comparisons)]
            assert fired, (m.id, facts)
            assert len(m.reasons) == len(fired)
            for reason, trigger in zip(m.reasons, fired, strict=True):
                # Each reason shows its comparisons with the values they were tested on.
                assert reason.startswith("metric ")
                assert all(f"{c} (" in reason for c in trigger.comparisons), reason


def test_same_query_twice_gives_the_same_order_with_ties_by_id() -> None:
    first = CATALOG.search("split kv decode")
    again = CATALOG.search("split kv decode")
    assert [(m.id, m.score) for m in first] == [(m.id, m.score) for m in again]
    assert [(-m.score, m.id) for m in first] == sorted((-m.score, m.id) for m in first)


def test_family_query_keeps_ancestors_not_descendants() -> None:
    mla_only = {e.id for e in CATALOG if set(e.families) <= {"mla-decode"} and e.families}
    attention = set(ids(CATALOG.query(family="attention")))
    assert mla_only and not (mla_only & attention)
    assert mla_only <= set(ids(CATALOG.query(family="MLA_decode")))
