"""Loading knowledge trees, the index, and lint with file:line problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import CatalogError, FormatError
from kernelopt.catalog import (
    BUILTIN_ROOT,
    Catalog,
    Interaction,
    Kind,
    KnowledgeTree,
    lint_tree,
    load_tree,
    parse_condition,
    render_entry,
    render_index,
)
from kernelopt.catalog.layout import iter_markdown

from .conftest import deny_listing, make_entry, write_entry


def test_load_tree_reads_the_layout(tree: Path) -> None:
    loaded = load_tree(tree)
    assert [e.id for e in loaded.entries] == ["demo-trap", "demo-trick"]
    assert loaded.paths["demo-trap"] == tree / "languages/triton/anti-patterns/demo-trap.md"
    assert loaded.problems == ()


def test_root_markdown_files_are_not_entries(tree: Path) -> None:
    (tree / "README.md").write_text("# Notes\n", encoding="utf-8")
    (tree / "optimizations" / ".demo.md.swp").write_text("junk", encoding="utf-8")
    assert load_tree(tree).problems == ()


def _broken_tree(root: Path) -> Path:
    write_entry(root, make_entry())
    bad = render_entry(make_entry(id="bad-one")).replace("## Mechanism", "## Mechanics")
    (root / "optimizations" / "bad-one.md").write_text(bad, encoding="utf-8")
    misplaced = make_entry(id="misplaced", kind=Kind.ANTI_PATTERN)
    path = root / "optimizations" / "misplaced.md"
    path.write_text(render_entry(misplaced), encoding="utf-8")
    renamed = root / "optimizations" / "other-name.md"
    renamed.write_text(render_entry(make_entry(id="named-differently")), encoding="utf-8")
    dup = root / "languages" / "cuda" / "optimizations" / "demo-trick.md"
    dup.parent.mkdir(parents=True)
    dup.write_text(render_entry(make_entry(scope="cuda")), encoding="utf-8")
    rust = root / "languages" / "rust" / "optimizations" / "x.md"
    rust.parent.mkdir(parents=True)
    rust.write_text("# X\n", encoding="utf-8")
    linked = make_entry(
        id="linker",
        interactions=(Interaction(target="no-such-entry", relation="related", note="gone"),),
    )
    write_entry(root, linked)
    return root


def test_non_strict_load_reports_every_problem_and_drops_nothing_silently(tmp_path: Path) -> None:
    root = _broken_tree(tmp_path / "k")
    catalog = Catalog.load(root, strict=False)
    messages = [str(p) for p in catalog.problems]
    joined = "\n".join(messages)
    assert f"{root}/optimizations/bad-one.md:" in joined and "[Mechanics]" in joined
    assert "kind anti-pattern in anti-patterns/" not in joined  # the folder says optimization
    assert "Expected kind optimization in optimizations/, got anti-pattern" in joined
    assert (
        "Expected the file named after the id (named-differently.md), got other-name.md" in joined
    )
    assert "Expected a unique id ('demo-trick' is already in" in joined
    assert (
        "Expected a language folder in cuda, cute-dsl, cutile, cutile-dsl, gluon, triton, "
        "got languages/rust/" in joined
    )
    assert "Expected a link to a known entry id, got 'no-such-entry'" in joined
    link_problem = next(p for p in catalog.problems if "no-such-entry" in p.message)
    text = (root / "optimizations" / "linker.md").read_text(encoding="utf-8").split("\n")
    assert link_problem.line is not None and "no-such-entry" in text[link_problem.line - 1]
    # Entries that loaded are usable; the built-ins are still there underneath.
    assert "demo-trick" in catalog and "linker" in catalog and "online-softmax" in catalog


def test_entries_saved_with_another_extension_are_reported(tmp_path: Path) -> None:
    root = tmp_path / "k"
    folder = root / "optimizations"
    folder.mkdir(parents=True)
    for name in ("a-one.MD", "a-two.markdown", "a-three.txt"):
        (folder / name).write_text("# A\n", encoding="utf-8")
    (root / "notes.txt").write_text("not in an entry folder\n", encoding="utf-8")
    problems = Catalog.load(root, strict=False).problems
    # The tree's own warning comes last: with none of its files read, it holds no entries.
    *problems, empty = problems
    assert empty.path == str(root) and "holds no entries" in empty.message
    warned = sorted(Path(p.path).name for p in problems)
    assert warned == ["a-one.MD", "a-three.txt", "a-two.markdown"]
    assert all(
        "Expected only .md entry files in an entry folder" in p.message
        and p.severity.value == "warning"
        for p in problems
    )


def test_strict_load_raises(tmp_path: Path) -> None:
    root = _broken_tree(tmp_path / "k")
    with pytest.raises(FormatError) as raised:
        Catalog.load(root)
    assert raised.value.path is not None and raised.value.path.endswith("bad-one.md")
    (root / "optimizations" / "bad-one.md").unlink()
    with pytest.raises(CatalogError, match="unique id"):
        Catalog.load(root)
    with pytest.raises(CatalogError, match="missing \\(no such folder\\)"):
        Catalog.load(tmp_path / "missing")
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    with pytest.raises(CatalogError, match="a-file \\(not a folder\\)"):
        Catalog.load(tmp_path / "a-file")


def test_a_folder_that_is_no_tree_is_refused_in_one_line(tmp_path: Path) -> None:
    # `learn --knowledge examples`: a folder of logs and notes. A line per markdown file
    # would bury what is wrong, the folder; lint and a non-strict load still list each.
    root = tmp_path / "examples"
    write_entry(root, make_entry(interactions=()))
    stray = ["logs/README.md", "logs/a/exp_1/result.md", "notes.d/plan.md"]
    for name in stray:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("# Notes\n", encoding="utf-8")
    dup = root / "languages" / "cuda" / "optimizations" / "demo-trick.md"
    dup.parent.mkdir(parents=True)
    dup.write_text(render_entry(make_entry(scope="cuda", interactions=())), encoding="utf-8")
    summary = (
        f"Expected a knowledge tree at {root} (markdown only in its entry folders), got 3 "
        "markdown files outside them (the first: logs/README.md); pick the tree's own "
        f"folder, or see each with `kernelopt catalog lint {root}`"
    )
    for load in (lambda: load_tree(root, strict=True), lambda: KnowledgeTree(root).catalog()):
        with pytest.raises(CatalogError) as raised:
            load()
        first, *rest = str(raised.value).split("\n")
        assert first == summary
        # Other errors are still said, a line each.
        assert len(rest) == 1 and "Expected a unique id ('demo-trick'" in rest[0]
    dup.unlink()
    with pytest.raises(CatalogError) as raised:
        Catalog.load(root)
    assert str(raised.value) == summary
    outside = [p.path for p in Catalog.load(root, strict=False).problems]
    assert outside == [str(root / name) for name in stray]
    assert [p.path for p in lint_tree(root) if p.is_error] == outside


def test_a_tree_that_cannot_be_listed_is_refused(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read as an empty tree, it would answer from the built-ins alone, as a missing one did.
    deny_listing(monkeypatch, tree)
    message = f"Expected a knowledge folder, got {tree} (not readable: Permission denied)"
    for load in (
        lambda: load_tree(tree),
        lambda: Catalog.load(tree, strict=False),
        lambda: lint_tree(tree),
    ):
        with pytest.raises(CatalogError) as raised:
            load()
        assert str(raised.value) == message


def test_a_folder_in_the_tree_that_cannot_be_listed_is_an_error(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As for an entry file that cannot be read: its entries are missing, and that is said.
    folder = tree / "languages"
    deny_listing(monkeypatch, folder)
    loaded = load_tree(tree)
    assert [e.id for e in loaded.entries] == ["demo-trick"]
    assert [str(p) for p in loaded.errors] == [
        f"{folder}: Expected a folder kernelopt can read, got Permission denied"
    ]
    assert Catalog.load(tree, strict=False).problems == loaded.problems
    with pytest.raises(CatalogError, match="Expected a folder kernelopt can read"):
        Catalog.load(tree)
    assert [p for p in lint_tree(tree) if p.is_error] == list(loaded.errors)


def test_a_tree_whose_lock_cannot_be_opened_is_read_without_it(tree: Path) -> None:
    # As for a tree kept by another user, whose lock file this one may not open for
    # writing: a reader changes nothing, so it reads without the lock rather than refuse.
    (tree.parent / "knowledge.lock").mkdir()
    assert [e.id for e in load_tree(tree).entries] == ["demo-trap", "demo-trick"]
    assert "demo-trap" in Catalog.load(tree)
    assert [p for p in lint_tree(tree) if p.is_error] == []


def test_user_entries_override_builtins_by_id(tmp_path: Path) -> None:
    root = tmp_path / "k"
    builtin = Catalog.builtin().get("cuda-graphs")
    mine = make_entry(id="cuda-graphs", name="My CUDA Graphs", interactions=())
    write_entry(root, mine)
    catalog = Catalog.load(root)
    assert catalog.get("cuda-graphs").name == "My CUDA Graphs" != builtin.name
    assert catalog.source("cuda-graphs") == root / "optimizations" / "cuda-graphs.md"
    assert len(catalog) == len(Catalog.builtin())
    alone = Catalog.load(root, with_builtin=False)
    assert alone.ids() == ["cuda-graphs"]


def test_index_is_sorted_by_kind_scope_id_and_escapes_pipes(tree: Path) -> None:
    extra = make_entry(id="a-first", contexts=("Use a | b when needed.",), interactions=())
    write_entry(tree, extra)
    text = render_index(load_tree(tree).entries)
    rows = [line for line in text.split("\n") if line.startswith("| [")]
    assert [r.split("](")[1].split(")")[0] for r in rows] == [
        "optimizations/a-first.md",
        "optimizations/demo-trick.md",
        "languages/triton/anti-patterns/demo-trap.md",
    ]
    assert "Use a \\| b when needed." in rows[0]
    assert rows[2] == (
        "| [Demo Trap](languages/triton/anti-patterns/demo-trap.md) | anti-pattern | triton "
        "| Decode attention with long KV caches. |"
    )
    assert render_index(reversed(load_tree(tree).entries)) == text


def _row_cells(row: str) -> list[str]:
    """The cells of a markdown table row, a backslash escaping the character after it."""
    cells, cell, i = [], "", 0
    while i < len(row):
        if row[i] == "\\":
            cell, i = cell + row[i : i + 2], i + 2
            continue
        if row[i] == "|":
            cells.append(cell.strip())
            cell = ""
        else:
            cell += row[i]
        i += 1
    return cells[1:]


def test_index_rows_keep_four_cells_and_their_link_with_backslashes_and_brackets(
    tree: Path,
) -> None:
    # A context holding an escaped pipe ('\|', as markdown writes one) must not turn into
    # an escaped backslash and a column break; a ']' in a name must not end the link text.
    odd = make_entry(
        id="odd-one", name="Tiles ] of [64", contexts=(r"Use a \| b.",), interactions=()
    )
    write_entry(tree, odd)
    text = render_index(load_tree(tree).entries)
    row = next(line for line in text.split("\n") if "odd-one.md" in line)
    assert _row_cells(row) == [
        r"[Tiles \] of \[64](optimizations/odd-one.md)",
        "optimization",
        "shared",
        r"Use a \\\| b.",
    ]


def test_builtin_index_is_up_to_date() -> None:
    expected = render_index(Catalog.builtin())
    assert (BUILTIN_ROOT / "index.md").read_text(encoding="utf-8") == expected


def test_lint_reports_errors_with_file_and_line(tmp_path: Path) -> None:
    root = _broken_tree(tmp_path / "k")
    problems = lint_tree(root)
    errors = [p for p in problems if p.is_error]
    assert len(errors) >= 6
    located = [p for p in errors if p.line is not None]
    assert all(str(p).startswith(f"{p.path}:{p.line}: ") for p in located)
    warnings = [p for p in problems if not p.is_error]
    assert any("stale index.md" in p.message or "no index.md" in p.message for p in warnings)


def test_lint_warnings_for_vocabulary_and_format(tmp_path: Path) -> None:
    root = tmp_path / "k"
    odd = make_entry(
        families=("conv",),
        fundamental_for=("gemm",),
        keywords=(),
        interactions=(),
        triggers=(parse_condition("mystery_metric > 1"),),
    )
    path = write_entry(root, odd)
    path.write_text(
        path.read_text(encoding="utf-8").replace("- It can fail.", "-   It can fail."),
        encoding="utf-8",
    )
    problems = lint_tree(root)
    assert not [p for p in problems if p.is_error]
    text = "\n".join(p.message for p in problems)
    assert "Expected a known family" in text and "'conv'" in text
    assert "fundamental_for families the entry applies to" in text
    assert "keywords, so experiment descriptions can be tagged" in text
    assert "canonical form" in text
    assert "Expected a known metric name, got 'mystery_metric'" in text
    canonical = next(p for p in problems if "canonical form" in p.message)
    assert (
        canonical.line == path.read_text(encoding="utf-8").split("\n").index("-   It can fail.") + 1
    )


def test_builtin_tree_lints_clean() -> None:
    assert lint_tree() == []


def test_a_named_pipe_in_the_tree_is_not_read(tmp_path: Path) -> None:
    import os

    root = tmp_path / "kb"
    (root / "optimizations").mkdir(parents=True)
    os.mkfifo(root / "optimizations" / "pipe.md")
    # Opening the pipe to read it would block until a writer came: never, here.
    assert list(iter_markdown(root)) == []


def test_an_entry_linked_to_a_file_that_is_gone_is_an_error(tmp_path: Path) -> None:
    # A link whose target was moved or deleted (or a loop of links) was skipped without a
    # word, though the entry it stood for is missing from the catalog.
    root = tmp_path / "kb"
    folder = root / "optimizations"
    folder.mkdir(parents=True)
    (folder / "moved-away.md").symlink_to(tmp_path / "elsewhere" / "moved-away.md")
    (folder / "loop-one.md").symlink_to(folder / "loop-two.md")
    (folder / "loop-two.md").symlink_to(folder / "loop-one.md")
    problems = [p for p in lint_tree(root) if p.is_error]
    assert sorted(Path(p.path).name for p in problems) == [
        "loop-one.md",
        "loop-two.md",
        "moved-away.md",
    ]
    assert all(p.message.startswith("Expected a readable UTF-8 file, got ") for p in problems)
    with pytest.raises(CatalogError, match=r"moved-away\.md"):
        Catalog.load(root)


@pytest.mark.parametrize(("ending", "name"), [("\r\n", "CRLF"), ("\r", "CR")])
def test_lint_warns_about_line_endings_the_canonical_form_does_not_use(
    tmp_path: Path, ending: str, name: str
) -> None:
    root = tmp_path / "k"
    path = write_entry(root, make_entry(interactions=()))
    path.write_bytes(path.read_bytes().replace(b"\n", ending.encode()))
    problems = lint_tree(root)
    assert not [p for p in problems if p.is_error]
    canonical = [p for p in problems if "canonical form" in p.message]
    assert len(canonical) == 1 and canonical[0].path == str(path)
    assert name in canonical[0].message and canonical[0].line == 1


def test_an_index_with_crlf_line_endings_is_stale_and_rewritten(tmp_path: Path) -> None:
    from kernelopt.catalog import KnowledgeTree

    root = tmp_path / "k"
    write_entry(root, make_entry(interactions=()))
    index = KnowledgeTree(root).write_index()
    canonical = index.read_bytes()
    index.write_bytes(canonical.replace(b"\n", b"\r\n"))
    assert any("stale index.md" in p.message for p in lint_tree(root))
    KnowledgeTree(root).write_index()
    assert index.read_bytes() == canonical
