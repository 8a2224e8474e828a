"""The typed entry: validators that keep every entry writable, and its JSON form."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from kernelopt import FormatError, InputError
from kernelopt.catalog import (
    Entry,
    Evidence,
    EvidenceRow,
    Interaction,
    Kind,
    entry_from_dict,
    entry_from_json,
    entry_to_dict,
    slugify,
)

from .conftest import make_entry
from .strategies import entries


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("id", "Split_KV", "kebab-case"),
        ("name", "two\nlines", "one non-empty line"),
        ("scope", "rust", "Expected a scope in"),
        ("families", (), "at least one item"),
        ("families", ("none",), "other than 'none'"),
        ("keywords", ("Split-KV",), "lower-case keywords"),
        ("keywords", ("a, b",), "without commas"),
        ("keywords", ("x", "x"), "without repeats"),
        ("contexts", (), "at least one item"),
        ("contexts", ("Metric: dram_pct > 60",), "not starting 'Metric:'"),
        ("mechanism", "", "non-empty text"),
        ("mechanism", "## Heading\nbody", "no heading line"),
        ("implementation", "no code here", "fenced code block"),
        ("implementation", "```python\nx = 1", "open and close"),
        ("evidence", (), "at least one item"),
        ("evidence", (5,), "a sequence of Evidence, got an item 5"),
        ("triggers", (5,), "a sequence of Condition, got an item 5"),
        ("families", "any", "a sequence of strings, got 'any'"),
        ("kind", "bogus", "one of 'optimization', 'anti-pattern', got 'bogus'"),
        ("pitfalls", ("<FILL: a failure mode>",), "<FILL"),
        (
            "interactions",
            (Interaction(target="demo-trick", relation="related", note="me"),),
            "itself",
        ),
        (
            "interactions",
            (
                Interaction(target="cuda-graphs", relation="related", note="a"),
                Interaction(target="cuda-graphs", relation="requires", note="b"),
            ),
            "one interaction per linked id",
        ),
    ],
)
def test_validators_name_field_expectation_and_value(
    field: str, value: object, message: str
) -> None:
    with pytest.raises(InputError, match="Expected") as raised:
        make_entry(**{field: value})
    assert message in str(raised.value)


def test_cells_and_notes_reject_what_the_table_cannot_hold() -> None:
    with pytest.raises(InputError, match="without '\\|'"):
        EvidenceRow(config="a|b", before="1", after="2", change="3")
    with pytest.raises(InputError, match="Source type:"):
        Evidence(source_type="external report", source="x", notes="Source type: local experiment")
    with pytest.raises(ValueError):
        Evidence(source_type="hearsay", source="x")


def test_paths_language_summary_and_rows(entry: Entry) -> None:
    assert entry.relative_path == "optimizations/demo-trick.md"
    assert entry.language is None and entry.summary == "Decode attention with long KV caches."
    trap = make_entry(kind=Kind.ANTI_PATTERN, scope="triton")
    assert trap.relative_path == "languages/triton/anti-patterns/demo-trick.md"
    assert trap.language == "triton"
    ((block, row),) = entry.evidence_rows
    assert block.source == "experiments/exp_1/result.md" and row.change == "-20 %"
    assert (
        Kind.OPTIMIZATION.flipped is Kind.ANTI_PATTERN
        and Kind.ANTI_PATTERN.folder == "anti-patterns"
    )


def test_slugify() -> None:
    assert slugify("Split-KV Flash Decoding") == "split-kv-flash-decoding"
    assert slugify("  exp2 / log2(e) ") == "exp2-log2-e"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries())
def test_json_round_trip(generated: Entry) -> None:
    assert Entry.from_json(generated.to_json()) == generated
    assert entry_from_dict(json.loads(json.dumps(entry_to_dict(generated)))) == generated


def test_json_keeps_enums_as_values_and_rejects_extra_keys(entry: Entry) -> None:
    data = entry_to_dict(entry)
    assert data["kind"] == "optimization"
    assert data["triggers"][0]["comparisons"][0] == {
        "name": "dram_pct",
        "op": ">",
        "value": 60.0,
        "other": None,
    }
    data["colour"] = "blue"
    with pytest.raises(InputError, match="Expected entry data"):
        entry_from_dict(data)
    del data["colour"]
    data["keywords"] = ["UPPER"]
    with pytest.raises(InputError, match="lower-case"):
        entry_from_dict(data)
    with pytest.raises(FormatError, match="Expected JSON text"):
        entry_from_json("{not json")


def test_public_names_resolve() -> None:
    import kernelopt.catalog as catalog

    for name in catalog.__all__:
        assert getattr(catalog, name) is not None
