"""An unknown entry id names the ids a user most likely meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import CatalogError
from kernelopt.catalog import (
    Catalog,
    EvidenceRow,
    Interaction,
    KnowledgeTree,
    load_tree,
    render_entry,
)
from kernelopt.catalog.catalog import link_problems, nearest_ids
from kernelopt.cli import main

from .conftest import make_entry

_ROW = EvidenceRow(config="b=8", before="10 us", after="9 us", change="-10 %")


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("Split-KV-LSE-Combine", ["split-kv-lse-combine"]),
        ("split_k_gemm", ["split-k-gemm"]),
        ("online softmax", ["online-softmax"]),
        ("split-kv-lse-combin", ["split-kv-lse-combine"]),
        ("split-kv", ["split-kv-flash-decoding", "split-kv-lse-combine"]),
    ],
)
def test_close_ids_are_named_best_first(typed: str, meant: list[str]) -> None:
    assert nearest_ids(typed, Catalog.builtin().ids()) == meant


@pytest.mark.parametrize("typed", ["nope", "", "  ", "zz"])
def test_nothing_close_names_nothing(typed: str) -> None:
    assert nearest_ids(typed, Catalog.builtin().ids()) == []


def test_get_names_the_id_meant_after_the_standard_message() -> None:
    with pytest.raises(CatalogError) as caught:
        Catalog.builtin().get("Online-Softmax")
    assert str(caught.value) == (
        "Expected a known entry id (see `kernelopt catalog list`), got 'Online-Softmax'; "
        "did you mean 'online-softmax'?"
    )


def test_get_with_nothing_close_keeps_the_plain_message() -> None:
    with pytest.raises(CatalogError) as caught:
        Catalog.builtin().get("no-such-thing-at-all")
    assert str(caught.value).endswith("got 'no-such-thing-at-all'")


def test_cli_show_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "show", "split_k_gemm"]) != 0
    assert "did you mean 'split-k-gemm'?" in capsys.readouterr().err


def test_tree_updates_suggest_and_write_nothing(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge")
    tree.add(make_entry())
    before = sorted(p.read_bytes() for p in tree.root.rglob("*.md"))
    with pytest.raises(CatalogError, match=r"did you mean 'demo-trick'\?$"):
        tree.record_evidence("Demo_Trick", _ROW, source_type="local experiment", source="exp_1")
    with pytest.raises(CatalogError, match=r"did you mean 'online-softmax'\?$"):
        tree.record_interaction(
            "demo-trick",
            Interaction(target="online-softmx", relation="complements", note="Both help."),
        )
    assert sorted(p.read_bytes() for p in tree.root.rglob("*.md")) == before


def test_tree_without_builtins_suggests_only_its_own_ids(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge", with_builtin=False)
    tree.add(make_entry(interactions=()))
    with pytest.raises(CatalogError, match=r"got 'demo-tric'; did you mean 'demo-trick'\?$"):
        tree.record_evidence("demo-tric", _ROW, source_type="local experiment", source="exp_1")


def test_lint_names_the_link_meant(tmp_path: Path) -> None:
    tree = KnowledgeTree(tmp_path / "knowledge", with_builtin=False)
    tree.add(make_entry(interactions=()))
    linked = make_entry(
        interactions=(Interaction(target="online-softmx", relation="complements", note="x."),)
    )
    tree.path_of(linked).write_text(render_entry(linked), encoding="utf-8")
    problems = link_problems(load_tree(tree.root), Catalog.builtin().ids())
    assert [p.message for p in problems] == [
        "Expected a link to a known entry id, got 'online-softmx'; did you mean 'online-softmax'?"
    ]
