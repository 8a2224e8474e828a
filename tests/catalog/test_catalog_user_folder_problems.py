"""What a user's own knowledge folder can hold that the catalog must say, not swallow.

An entry file that fails to parse leaves the built-in entry with its id answering in its
place; a language or kind typed in another case (``Triton``) is the same language; a
``.md`` that is not a regular file (a named pipe, a socket) is reported, never opened.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from kernelopt import CatalogError, FormatError, InputError, cli
from kernelopt.catalog import (
    Catalog,
    Kind,
    KnowledgeTree,
    canonical_language,
    lint_tree,
    load_tree,
    parse_entry,
    render_entry,
    scaffold_entry,
)
from kernelopt.catalog.layout import scan_tree

from .conftest import make_entry, write_entry

BUILTIN_ID = "online-softmax"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["catalog", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _broken_copy(root: Path, name: str = f"{BUILTIN_ID}.md") -> tuple[Path, int]:
    """A user's copy of a built-in entry with one section heading misspelt, and its line."""
    entry = Catalog.builtin().get(BUILTIN_ID)
    text = render_entry(entry).replace("## Mechanism", "## Mechanizm")
    path = (root / entry.relative_path).with_name(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path, text.split("\n").index("## Mechanizm") + 1


def _fallback_message(entry_id: str) -> str:
    return (
        f"Expected this file's '{entry_id}' in place of the built-in entry, got the built-in "
        f"'{entry_id}' used instead, as this file is left out for its error"
    )


# --- a user's entry file that fails to parse -------------------------------------------


def test_a_broken_copy_of_a_builtin_entry_says_the_builtin_is_used(tmp_path: Path) -> None:
    # The catalog answered with the built-in entry; the only problem named the parse
    # error, so the user read the built-in text as if it were their own entry.
    root = tmp_path / "k"
    path, line = _broken_copy(root)
    before = path.read_bytes()
    catalog = Catalog.load(root, strict=False)
    assert catalog.source(BUILTIN_ID) == Catalog.builtin().source(BUILTIN_ID)
    error, warning = catalog.problems
    assert error.is_error and (error.path, error.line) == (str(path), line)
    assert not warning.is_error
    assert (warning.path, warning.line) == (str(path), line)
    assert warning.message == _fallback_message(BUILTIN_ID)
    assert catalog.fallbacks == (warning,)
    assert str(warning) == f"{path}:{line}: warning: {_fallback_message(BUILTIN_ID)}"
    assert path.read_bytes() == before


def test_the_id_line_of_a_file_named_otherwise_names_the_builtin(tmp_path: Path) -> None:
    root = tmp_path / "k"
    path, line = _broken_copy(root, name="my-softmax.md")
    [warning] = Catalog.load(root, strict=False).fallbacks
    assert (warning.path, warning.line) == (str(path), line)
    assert warning.message == _fallback_message(BUILTIN_ID)


def test_no_fallback_warning_where_nothing_falls_back(tmp_path: Path) -> None:
    root = tmp_path / "k"
    # A broken entry of the user's own: no built-in answers for it.
    broken = render_entry(make_entry(id="mine-only")).replace("## Mechanism", "## Mech")
    (root / "optimizations").mkdir(parents=True)
    (root / "optimizations" / "mine-only.md").write_text(broken, encoding="utf-8")
    # The user's own entry with the built-in's id loads from another file: it answers.
    write_entry(root, make_entry(id=BUILTIN_ID, scope="triton", interactions=()))
    _broken_copy(root)
    catalog = Catalog.load(root, strict=False)
    assert catalog.source(BUILTIN_ID) == root / f"languages/triton/optimizations/{BUILTIN_ID}.md"
    assert catalog.fallbacks == ()
    assert not any("built-in" in p.message for p in catalog.problems)
    # Without the built-ins there is nothing to fall back on.
    other = tmp_path / "other"
    _broken_copy(other)
    assert Catalog.load(other, with_builtin=False, strict=False).fallbacks == ()


def test_lint_lists_the_fallback_after_the_error(tmp_path: Path) -> None:
    root = tmp_path / "k"
    path, line = _broken_copy(root)
    mine = [p for p in lint_tree(root) if p.path == str(path)]
    assert [(p.line, p.is_error) for p in mine] == [(line, True), (line, False)]
    assert mine[1].message == _fallback_message(BUILTIN_ID)
    assert not any("built-in" in p.message for p in lint_tree(root, with_builtin=False))


def test_the_cli_says_which_builtin_it_shows_instead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "k"
    path, line = _broken_copy(root)
    code, out, err = run(capsys, "show", BUILTIN_ID, "--json", "--knowledge", str(root))
    assert code == 0 and json.loads(out)["path"] == str(Catalog.builtin().source(BUILTIN_ID))
    assert err == (
        f"kernelopt catalog: 1 path left out for errors, 1 warning in {root}; "
        f"run `kernelopt catalog lint {root}` for every problem\n"
        f"kernelopt catalog: {path}:{line}: warning: {_fallback_message(BUILTIN_ID)}\n"
    )
    code, out, _ = run(capsys, "lint", str(root))
    assert code == 1 and f"{path}:{line}: warning: {_fallback_message(BUILTIN_ID)}" in out


def test_an_update_leaves_the_broken_file_as_it_is(tmp_path: Path) -> None:
    root = tmp_path / "k"
    path, _ = _broken_copy(root)
    before = path.read_bytes()
    with pytest.raises(FormatError, match="Mechanizm"):
        KnowledgeTree(root).refine_applicability(BUILTIN_ID, keywords=["online softmax"])
    assert path.read_bytes() == before
    assert sorted(p.name for p in root.rglob("*.md")) == [f"{BUILTIN_ID}.md"]


# --- languages and kinds in any case ---------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [("Triton", "triton"), ("TRITON", "triton"), ("CUDA", "cuda"), ("CuTile-DSL", "cutile")],
)
def test_a_language_is_read_in_any_case(typed: str, canonical: str) -> None:
    catalog = Catalog.builtin()
    assert canonical_language(typed) == canonical
    got = catalog.query(language=typed, kind="anti-pattern")
    assert got and got == catalog.query(language=canonical, kind="anti-pattern")
    said = {r for m in got for r in m.reasons if r.startswith("specific to")}
    assert said <= {f"specific to {canonical}"}


def test_a_kind_is_read_in_any_case(tmp_path: Path) -> None:
    catalog = Catalog.builtin()
    assert catalog.query(kind="Anti-Pattern") == catalog.query(kind=Kind.ANTI_PATTERN)
    assert make_entry(kind="Optimization").kind is Kind.OPTIMIZATION
    tree = KnowledgeTree(tmp_path / "k")
    tree.add(make_entry(interactions=()))
    assert tree.flip("demo-trick", reason="It regressed.", to="Anti-Pattern").kind is (
        Kind.ANTI_PATTERN
    )


def test_other_names_are_still_refused() -> None:
    with pytest.raises(InputError, match="got 'Tritn'"):
        Catalog.builtin().query(language="Tritn")
    with pytest.raises(InputError, match="got 'Optimisation'"):
        Catalog.builtin().query(kind="Optimisation")


def test_a_language_in_another_case_is_stored_canonically(tmp_path: Path) -> None:
    entry = make_entry(scope="Triton", interactions=())
    assert entry.scope == "triton"
    assert scaffold_entry("Tile Swap", kind="Optimization", language="CUDA")[0] == (
        "languages/cuda/optimizations/tile-swap.md"
    )
    text = render_entry(entry).replace("- scope: triton\n", "- scope: Triton\n")
    text = text.replace("- kind: optimization\n", "- kind: Optimization\n")
    path = tmp_path / "k" / entry.relative_path
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    assert parse_entry(text, path=path) == entry
    assert load_tree(path.parents[3]).entries == (entry,)
    # Read, and stored canonically: lint says the file is not yet written that way.
    [warning] = [p for p in lint_tree(path.parents[3]) if p.path == str(path)]
    assert not warning.is_error and warning.message.startswith("Expected the canonical form")


def test_the_cli_reads_language_and_kind_in_any_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected_out = run(capsys, "list", "--language", "triton", "--kind", "anti-pattern")[1]
    code, out, err = run(capsys, "list", "--language", "Triton", "--kind", "Anti-Pattern")
    assert (code, out, err) == (0, expected_out, "")
    expected_out = run(capsys, "match", "--metric", "dram_pct=85", "--language", "triton")[1]
    code, out, _ = run(capsys, "match", "--metric", "dram_pct=85", "--language", "TRITON")
    assert (code, out) == (0, expected_out)
    root = tmp_path / "k"
    code, out, _ = run(
        capsys, "new", "Tile Swap", "--kind", "Optimization", "--language", "Triton",
        "--dir", str(root),
    )  # fmt: skip
    assert code == 0 and Path(out.strip()) == root / "languages/triton/optimizations/tile-swap.md"
    assert "- scope: triton\n- " in Path(out.strip()).read_text(encoding="utf-8")
    with pytest.raises(SystemExit) as refused:
        cli.main(["catalog", "list", "--language", "Tritn"])
    assert refused.value.code == 2 and "got 'Tritn'" in capsys.readouterr().err


# --- a .md that is not a regular file --------------------------------------------------


def _load_in_time(root: Path, **kwargs: bool) -> Catalog:
    """Load ``root``, failing (not hanging) if the load waits on a named pipe."""
    done: list[Catalog] = []
    worker = threading.Thread(target=lambda: done.append(Catalog.load(root, **kwargs)), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert done, "the load waited on a file that is not a regular file"
    return done[0]


def test_a_named_pipe_entry_is_an_error_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "k"
    folder = root / "optimizations"
    folder.mkdir(parents=True)
    pipe = folder / "piped.md"
    os.mkfifo(pipe)
    assert scan_tree(root).irregular == ((pipe, "a FIFO"),)
    [problem] = _load_in_time(root, strict=False).problems
    assert problem.is_error and (problem.path, problem.line) == (str(pipe), None)
    assert problem.message == "Expected a regular file, got a FIFO"
    with pytest.raises(CatalogError, match=rf"{pipe}: Expected a regular file, got a FIFO"):
        Catalog.load(root)


def test_a_socket_and_links_that_are_no_regular_file_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "k"
    folder = root / "anti-patterns"
    folder.mkdir(parents=True)
    os.mkfifo(tmp_path / "pipe")
    (folder / "to-pipe.md").symlink_to(tmp_path / "pipe")
    (folder / "gone.md").symlink_to(tmp_path / "nowhere.md")
    (root / "notes.md").symlink_to(tmp_path / "pipe")  # at the root: holds no entry
    monkeypatch.chdir(folder)  # a short path: a socket's name has a length limit
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind("sock.md")
        problems = {Path(p.path).name: p for p in _load_in_time(root, strict=False).problems}
    finally:
        server.close()
    assert {name: (p.is_error, p.message) for name, p in problems.items()} == {
        "sock.md": (True, "Expected a regular file, got a socket"),
        "to-pipe.md": (True, "Expected a regular file, got a link to a FIFO"),
        "gone.md": (
            True,
            f"Expected a readable UTF-8 file, got a link to nothing ({tmp_path / 'nowhere.md'})",
        ),
        "notes.md": (False, "Expected a regular file, got a link to a FIFO"),
    }


def test_a_named_pipe_in_place_of_a_builtin_is_said_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "k"
    (root / "optimizations").mkdir(parents=True)
    pipe = root / "optimizations" / f"{BUILTIN_ID}.md"
    os.mkfifo(pipe)
    code, out, err = run(capsys, "list", "--knowledge", str(root))
    assert code == 0 and BUILTIN_ID in out
    assert "1 path left out for errors, 1 warning" in err
    assert f"kernelopt catalog: {pipe}: warning: {_fallback_message(BUILTIN_ID)}\n" in err
    code, out, _ = run(capsys, "lint", str(root))
    assert code == 1 and f"{pipe}: Expected a regular file, got a FIFO" in out
