"""Wrong-type arguments to the catalog's public API are one ``Expected X, got Y`` error.

Cases beyond tests/test_public_api_wrong_types.py: the items inside a sequence or mapping,
the bool flags (a truthy ``"no"`` would read as true) and the calls that write, which must
leave the tree as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kernelopt import InputError
from kernelopt.catalog import (
    Catalog,
    Interaction,
    KnowledgeTree,
    entry_from_json,
    lint_tree,
    load_tree,
    new_entry_file,
    parse_condition,
    render_index,
)

from .conftest import make_entry

NOT_A_BOOL = ["no", 1, None, [True]]


def _tree(root: Path) -> KnowledgeTree:
    tree = KnowledgeTree(root / "kb")
    tree.add(make_entry())
    return tree


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, with its bytes (lock files left out)."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.suffix != ".lock"
    }


# ------------------------------------------------------------------ readers


def test_json_bytes_are_refused_as_text() -> None:
    text = make_entry().to_json()
    with pytest.raises(InputError, match=r"^text: Expected JSON text \(a str\), got b'"):
        entry_from_json(text.encode())
    assert entry_from_json(text) == make_entry()


def test_index_links_hold_ids_and_paths_that_are_str() -> None:
    with pytest.raises(InputError, match=r"^links: Expected a mapping of entry ids \(str\)"):
        render_index([make_entry()], links={"demo-trick": 5})
    with pytest.raises(InputError, match=r"^links: Expected a mapping of entry ids to paths"):
        render_index([make_entry()], links=["demo-trick"])  # type: ignore[arg-type]
    text = render_index([make_entry()], links={"demo-trick": "elsewhere/demo-trick.md"})
    assert "(elsewhere/demo-trick.md)" in text


@pytest.mark.parametrize(
    ("build", "message"),
    [
        pytest.param(
            lambda: Catalog(""), "entries: Expected an iterable of Entry, got ''", id="entries=str"
        ),
        pytest.param(
            lambda: Catalog({}), "entries: Expected an iterable of Entry, got {}", id="entries=dict"
        ),
        pytest.param(
            lambda: Catalog([], problems="x"),
            "problems: Expected an iterable of Problem, got 'x'",
            id="problems=str",
        ),
        pytest.param(
            lambda: Catalog([], problems=[5]),
            "problems: Expected problems of type Problem, got 5",
            id="problems=[int]",
        ),
        pytest.param(
            lambda: Catalog([make_entry()], sources={"demo-trick": 5}),
            "sources['demo-trick']: Expected a path (str or path-like), got 5",
            id="sources={id: int}",
        ),
    ],
)
def test_catalog_parts_of_the_wrong_type_are_refused(
    build: Callable[[], object], message: str
) -> None:
    with pytest.raises(InputError) as raised:
        build()
    assert str(raised.value) == message


def test_catalog_sources_are_checked_for_ids_it_does_not_hold_too() -> None:
    with pytest.raises(InputError, match=r"^sources\['other'\]: Expected a path"):
        Catalog([make_entry()], sources={"demo-trick": "a.md", "other": 5})
    catalog = Catalog([make_entry()], sources={"demo-trick": "a.md", "other": "b.md"})
    assert catalog.source("demo-trick") == Path("a.md")
    assert catalog.source("other") is None


@pytest.mark.parametrize("entry_id", [5, None, ("demo-trick",)])
def test_a_lookup_by_something_that_is_no_id_is_an_input_error(entry_id: object) -> None:
    catalog = Catalog([make_entry()])
    for look_up in (catalog.get, catalog.source):
        with pytest.raises(InputError, match=r"^entry_id: Expected an entry id \(a str\), got "):
            look_up(entry_id)  # type: ignore[arg-type]
    assert catalog.source("no-such-entry") is None


@pytest.mark.parametrize("flag", NOT_A_BOOL)
def test_reader_flags_that_are_not_bools_are_refused(tmp_path: Path, flag: object) -> None:
    root = _tree(tmp_path).root
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: load_tree(root, strict=flag), "strict"),  # type: ignore[arg-type]
        (lambda: load_tree(root, lock=flag), "lock"),  # type: ignore[arg-type]
        (lambda: lint_tree(root, with_builtin=flag), "with_builtin"),  # type: ignore[arg-type]
        (lambda: Catalog.load(root, with_builtin=flag), "with_builtin"),  # type: ignore[arg-type]
        (lambda: Catalog.load(root, strict=flag), "strict"),  # type: ignore[arg-type]
        (lambda: KnowledgeTree(root, with_builtin=flag), "with_builtin"),  # type: ignore[arg-type]
        (lambda: KnowledgeTree(root).catalog(strict=flag), "strict"),  # type: ignore[arg-type]
    ]
    for call, name in calls:
        with pytest.raises(InputError) as raised:
            call()
        assert str(raised.value) == f"{name}: Expected True or False, got {flag!r}"


def test_the_catalog_of_a_missing_tree_checks_its_flag_too(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^strict: Expected True or False, got 'no'$"):
        KnowledgeTree(tmp_path / "missing").catalog(strict="no")  # type: ignore[arg-type]


# ------------------------------------------------------------------ writers


def test_new_entry_file_with_a_flag_that_is_not_a_bool_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^with_builtin: Expected True or False, got 'no'$"):
        new_entry_file(tmp_path / "kb", "Warp Trick", kind="optimization", with_builtin="no")  # type: ignore[arg-type]
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("field", "value", "got"),
    [
        ("triggers", 5, "5"),
        ("triggers", b"dram_pct > 60", "b'dram_pct > 60'"),
        ("triggers", {"dram_pct > 60": 1}, "{'dram_pct > 60': 1}"),
        ("triggers", [5], "an item 5"),
        ("shape_conditions", 5, "5"),
        ("shape_conditions", [None], "an item None"),
    ],
)
def test_conditions_that_are_no_sequence_of_conditions_are_refused_and_write_nothing(
    tmp_path: Path, field: str, value: object, got: str
) -> None:
    tree = _tree(tmp_path)
    before = _files(tmp_path)
    with pytest.raises(InputError) as raised:
        tree.refine_applicability("demo-trick", **{field: value})  # type: ignore[arg-type]
    message = f"{field}: Expected a sequence of conditions (Condition or str), got {got}"
    assert str(raised.value) == message
    assert _files(tmp_path) == before


def test_conditions_may_mix_parsed_and_written_ones(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    parsed = parse_condition("tc_pct < 20")
    entry = tree.refine_applicability("demo-trick", triggers=(parsed, "dram_pct > 70"))
    assert entry.triggers == (parsed, parse_condition("dram_pct > 70"))


def test_updates_by_something_that_is_no_id_are_refused_and_write_nothing(
    tmp_path: Path,
) -> None:
    tree = _tree(tmp_path)
    row = make_entry().evidence[0].rows[0]
    interaction = Interaction(target="cuda-graphs", relation="complements", note="Both help.")
    updates: list[Callable[[object], object]] = [
        lambda entry_id: tree.refine_applicability(entry_id, contexts=["c"]),  # type: ignore[arg-type]
        lambda entry_id: tree.record_evidence(  # type: ignore[arg-type]
            entry_id, row, source_type="local experiment", source="x"
        ),
        lambda entry_id: tree.record_interaction(entry_id, interaction),  # type: ignore[arg-type]
        lambda entry_id: tree.flip(entry_id, reason="slower"),  # type: ignore[arg-type]
    ]
    before = _files(tmp_path)
    for update in updates:
        for entry_id in ({}, 5, None):
            with pytest.raises(InputError, match=r"^entry_id: Expected an entry id \(a str\)"):
                update(entry_id)
    assert _files(tmp_path) == before


@pytest.mark.parametrize("entry", [None, "demo-trick", make_entry().to_json()])
def test_adding_or_placing_what_is_no_entry_is_refused(tmp_path: Path, entry: object) -> None:
    tree = _tree(tmp_path)
    before = _files(tmp_path)
    for call in (tree.add_optimization, tree.add_anti_pattern, tree.path_of):
        with pytest.raises(InputError, match=r"^entry: Expected an Entry, got "):
            call(entry)  # type: ignore[arg-type]
    assert _files(tmp_path) == before
