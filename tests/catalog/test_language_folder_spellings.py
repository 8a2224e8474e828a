"""A tree with a language's folder under two spellings keeps each entry where it is."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from kernelopt.catalog import Catalog, Entry, Kind, KnowledgeTree, render_entry


def _optimization(entry_id: str) -> Entry:
    base = next(e for e in Catalog.builtin() if e.kind is Kind.OPTIMIZATION)
    return attrs.evolve(base, id=entry_id, scope="cutile", interactions=())


def _tree(root: Path) -> KnowledgeTree:
    for folder, entry_id in (("cutile", "in-canonical"), ("cutile-dsl", "in-alias")):
        folder_path = root / "languages" / folder / "optimizations"
        folder_path.mkdir(parents=True)
        (folder_path / f"{entry_id}.md").write_text(render_entry(_optimization(entry_id)))
    return KnowledgeTree(root, with_builtin=False)


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


@pytest.mark.parametrize("entry_id", ["in-canonical", "in-alias"])
def test_an_update_keeps_the_file_in_its_own_spelling_of_the_language(
    tmp_path: Path, entry_id: str
) -> None:
    tree = _tree(tmp_path)
    before = _files(tmp_path)
    tree.refine_applicability(entry_id, keywords=["swizzled tiles"])
    assert _files(tmp_path) == sorted([*before, "index.md"])
    assert "swizzled tiles" in tree.catalog().get(entry_id).keywords


def test_a_flip_stays_in_the_spelling_its_file_had(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    tree.flip("in-alias", reason="slower on this shape")
    assert "languages/cutile-dsl/anti-patterns/in-alias.md" in _files(tmp_path)
    tree.flip("in-alias", reason="faster again after the fix")
    assert "languages/cutile-dsl/optimizations/in-alias.md" in _files(tmp_path)
    assert "languages/cutile/optimizations/in-alias.md" not in _files(tmp_path)


def test_a_new_entry_still_goes_to_the_first_spelling_the_tree_has(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    path = tree.add(_optimization("brand-new"))
    assert path == tmp_path / "languages" / "cutile" / "optimizations" / "brand-new.md"
