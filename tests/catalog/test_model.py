"""The typed entry: validators that keep every entry writable, and its JSON form."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings

from kernelopt import FormatError, InputError
from kernelopt.catalog import (
    Comparison,
    Condition,
    Entry,
    Evidence,
    EvidenceRow,
    Interaction,
    Kind,
    KnowledgeTree,
    entry_from_dict,
    entry_from_json,
    entry_to_dict,
    family_ancestors,
    load_tree,
    parse_condition,
    parse_entry,
    scaffold_entry,
    slugify,
)

from .conftest import make_entry
from .strategies import entries

_GT = Comparison(name="dram_pct", op=">", value=60)


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
    with pytest.raises(InputError, match=r"EvidenceRow\.config: Expected one non-empty line"):
        EvidenceRow(config="a\nb", before="1", after="2", change="3")
    with pytest.raises(InputError, match="Source type:"):
        Evidence(source_type="external report", source="x", notes="Source type: local experiment")
    with pytest.raises(
        InputError,
        match=r"Evidence\.source_type: Expected one of 'local experiment', 'external report', "
        "got 'hearsay'",
    ):
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


@pytest.mark.parametrize(
    ("name", "entry_id"),
    [
        ("Naïve Softmax", "naive-softmax"),
        ("Über-Fusion", "uber-fusion"),
        ("Señor GEMM", "senor-gemm"),
        ("Sub-µs Launches", "sub-us-launches"),
        ("Ångström Tiles", "angstrom-tiles"),
    ],
)
def test_slugify_keeps_the_letters_of_accented_names(name: str, entry_id: str) -> None:
    # An accent is dropped, not the letter under it ("na-ve-softmax" for "Naïve").
    assert slugify(name) == entry_id


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


def test_json_with_a_key_given_twice_is_refused(entry: Entry) -> None:
    # json keeps the last of two values for one key: the other was dropped without a word.
    text = json.dumps(entry_to_dict(entry))
    twice = text.replace('"id": ', '"id": "shadowed-id", "id": ', 1)
    with pytest.raises(FormatError, match="Expected a JSON object with each key once, got 'id'"):
        entry_from_json(twice)
    nested = text.replace('"op": ', '"op": "<", "op": ', 1)
    with pytest.raises(FormatError, match="got 'op' twice"):
        entry_from_json(nested)
    assert entry_from_json(text) == entry


def test_public_names_resolve() -> None:
    import kernelopt.catalog as catalog

    for name in catalog.__all__:
        assert getattr(catalog, name) is not None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: parse_condition(5), "text: Expected a condition (str)"),
        (lambda: parse_condition("dram_pct > 1", note=None), "note: Expected a one-line note"),
        (lambda: slugify(5), "name: Expected a name (str), got 5"),
        (lambda: entry_from_dict([1]), "Expected entry data (a mapping"),
        (lambda: Condition(comparisons=(_GT,), note=None), "note: Expected a one-line note"),
        (lambda: Condition(comparisons=[1]), "comparisons: Expected a sequence of Comparison"),
        (lambda: Condition(comparisons=5), "comparisons: Expected a sequence of Comparison"),
        (lambda: Comparison(name=5, op=">", value=1), "name: Expected an identifier"),
        (lambda: Comparison(name="x", op="~", value=1), "op: Expected one of '<'"),
        (lambda: Evidence(source_type="external report", source="s", notes=5), "Evidence.notes"),
        (lambda: Evidence(source_type="hearsay", source="s"), "Evidence.source_type: Expected"),
        (lambda: Interaction(target="a", relation="x", note="n"), "Interaction.relation: Exp"),
        (lambda: Interaction(target="a", relation=[1], note="n"), "Interaction.relation: Exp"),
        (lambda: parse_entry(5), "text: Expected the file's text (str)"),
        (lambda: scaffold_entry(5, kind="optimization"), "name: Expected a one-line name"),
        (lambda: scaffold_entry("X", kind="trick"), "kind: Expected one of 'optimization'"),
        (lambda: scaffold_entry("Split\rKV", kind="optimization"), "name: Expected a one-line"),
        (lambda: load_tree(5), "root: Expected a path"),
        (lambda: KnowledgeTree(5), "root: Expected a path"),
        (lambda: family_ancestors(5), "family: Expected a kernel family name (str)"),
    ],
)
def test_public_functions_raise_input_errors_naming_the_argument(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises(InputError) as raised:
        call()
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("kind", "bogus", "Entry.kind: Expected one of 'optimization', 'anti-pattern'"),
        ("kind", ["x"], "Entry.kind: Expected one of"),
        ("families", "any", "Entry.families: Expected a sequence of strings"),
        ("evidence", (5,), "Entry.evidence: Expected a sequence of Evidence"),
        ("scope", "cutile-dsl", None),
    ],
)
def test_entry_field_errors_name_the_field(field: str, value: object, where: str | None) -> None:
    if where is None:
        assert make_entry(**{field: value}).scope == "cutile"
        return
    with pytest.raises(InputError) as raised:
        make_entry(**{field: value})
    assert str(raised.value).startswith(where)


def test_a_bad_kind_in_a_file_still_points_at_its_metadata_line(entry: Entry) -> None:
    from kernelopt.catalog import render_entry

    text = render_entry(entry).replace("- kind: optimization", "- kind: trick")
    with pytest.raises(FormatError) as raised:
        parse_entry(text, path="k/optimizations/demo-trick.md")
    assert raised.value.line == 4 and raised.value.section == "metadata"


def _leaf_types(data: object) -> set[type]:
    if isinstance(data, dict):
        return {t for value in data.values() for t in _leaf_types(value)}
    if isinstance(data, list):
        return {t for value in data for t in _leaf_types(value)}
    return {type(data)}


def test_entry_to_dict_holds_plain_values_not_enums(entry: Entry) -> None:
    data = entry_to_dict(entry)
    # Plain str, not a str-valued enum: data handed to YAML, msgpack or a log stays plain.
    assert _leaf_types(data) <= {str, float, type(None)}
    assert type(data["kind"]) is str and data["kind"] == "optimization"
    assert type(data["triggers"][0]["comparisons"][0]["op"]) is str
    assert type(data["evidence"][0]["source_type"]) is str
    assert type(data["interactions"][0]["relation"]) is str
    assert entry_from_dict(data) == entry


def test_json_missing_keys_are_named_as_missing(entry: Entry) -> None:
    data = entry_to_dict(entry)
    del data["name"]
    del data["evidence"][0]["source_type"]
    with pytest.raises(InputError) as raised:
        entry_from_dict(data)
    message = str(raised.value)
    assert "name: missing" in message and "evidence[0].source_type: missing" in message


@pytest.mark.parametrize("value", ["60", True, "1e3", [60]])
def test_json_condition_values_are_not_coerced(entry: Entry, value: object) -> None:
    # The validator refuses a string or a bool; the JSON reader must not turn them into
    # numbers first ("60" into 60.0, true into 1.0).
    data = entry_to_dict(entry)
    data["triggers"][0]["comparisons"][0]["value"] = value
    with pytest.raises(InputError) as raised:
        entry_from_dict(data)
    assert f"triggers[0].comparisons[0].value: Expected a number, got {value!r}" in str(
        raised.value
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("id", 5, "id: Expected a string, got 5"),
        ("families", "any", "families: Expected a list of strings, got 'any'"),
        ("keywords", [1], "keywords: Expected a string, got 1"),
        ("kind", "bogus", "kind: Expected one of"),
        ("interaction_notes", 5, "interaction_notes: Expected a list of strings"),
    ],
)
def test_json_values_are_not_coerced(entry: Entry, key: str, value: object, message: str) -> None:
    data = entry_to_dict(entry)
    data[key] = value
    with pytest.raises(InputError) as raised:
        entry_from_dict(data)
    assert message in str(raised.value)
