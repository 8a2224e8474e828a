"""A folder whose root holds pages of its own (``guide.md``) is no knowledge tree: writers
refuse it before they write, as they refuse one with markdown beside the entry folders.
A README at the root is the tree's own and is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import CatalogError, cli
from kernelopt.catalog import KnowledgeTree, load_tree, new_entry_file


def _site(root: Path, *pages: str) -> Path:
    """A folder holding ``pages`` at its root and an empty optimizations/ folder."""
    (root / "optimizations").mkdir(parents=True)
    for page in pages:
        (root / page).write_text("# A page\n", encoding="utf-8")
    return root


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_pages_at_the_root_are_refused_by_every_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _site(tmp_path / "site", "guide.md", "other.md")
    before = _files(root)
    message = (
        r"Expected a knowledge tree at .*site \(markdown only in its entry folders\), "
        r"got guide\.md"
    )
    with pytest.raises(CatalogError, match=message):
        new_entry_file(root, "My Trick", kind="optimization")
    with pytest.raises(CatalogError, match=message):
        KnowledgeTree(root).write_index()
    code = cli.main(["catalog", "new", "--kind", "optimization", "My Trick", "--dir", str(root)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "") and "got guide.md, outside them" in err
    assert cli.main(["catalog", "index", str(root)]) == 2
    assert _files(root) == before  # nothing written


@pytest.mark.parametrize("readme", ["README.md", "readme.md", "README.ko.md"])
def test_a_readme_at_the_root_is_the_trees_own(tmp_path: Path, readme: str) -> None:
    root = _site(tmp_path / "knowledge", readme)
    path = new_entry_file(root, "My Trick", kind="optimization")
    assert path == root / "optimizations" / "my-trick.md"
    # The loader reads the README as no entry, as before.
    assert not [p for p in load_tree(root, strict=False).problems if "README" in p.path]


def test_a_tree_with_its_own_index_keeps_taking_updates(tmp_path: Path) -> None:
    # Once kernelopt's index.md is there, the folder is a tree: a page added beside it
    # later is the owner's, and the tree is not refused for it.
    root = tmp_path / "knowledge"
    KnowledgeTree(root).write_index()
    (root / "guide.md").write_text("# How we keep this tree\n", encoding="utf-8")
    assert new_entry_file(root, "My Trick", kind="optimization").is_file()
