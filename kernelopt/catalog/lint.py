"""Check a knowledge tree: every problem as ``file:line``, errors and warnings apart.

Errors (lint fails): files that do not parse or still hold ``<FILL: ...>`` placeholders,
files or folders that cannot be read, entries in the wrong folder or named after another
id, repeated ids, interactions linking unknown ids. Warnings (advice): an entry file left
out for errors whose id a built-in entry has (the built-in is used instead), unknown family,
metric or shape names, a ``fundamental_for`` family the entry does not apply to, an entry
without keywords, a file not in the canonical form kernelopt writes, a missing or stale
``index.md`` (or, for a page of the user's own there, why the writers refuse it), and what a
file in the bare knowledge-base template leaves out (metadata read from its path, evidence
without a ``Source:`` line, free-text interactions kept as notes).
"""

from __future__ import annotations

import os
from pathlib import Path

from kernelopt._errors import CatalogError, expected
from kernelopt._words import count_text
from kernelopt.catalog._fields import as_path, require_bool
from kernelopt.catalog.catalog import BUILTIN_ROOT, Catalog, builtin_fallbacks, link_problems
from kernelopt.catalog.index import render_index
from kernelopt.catalog.layout import INDEX_NAME, check_tree_folder
from kernelopt.catalog.loader import LoadedTree, load_tree, read_exact
from kernelopt.catalog.markdown import find_placeholders, render_entry, split_lines
from kernelopt.catalog.model import Entry
from kernelopt.catalog.problems import Problem, Severity
from kernelopt.catalog.vocabulary import FAMILIES, FILL_MARK, METRICS, SHAPE_FACTS, family_ancestors

__all__ = ["lint_tree"]


def _warn(
    path: Path, message: str, *, line: int | None = None, section: str | None = "metadata"
) -> Problem:
    return Problem(
        path=str(path), line=line, severity=Severity.WARNING, message=message, section=section
    )


def _entry_warnings(entry: Entry, path: Path, text: str) -> list[Problem]:
    out = []
    for family in (*entry.families, *entry.fundamental_for):
        if family not in FAMILIES:
            out.append(
                _warn(path, expected(f"a known family ({', '.join(FAMILIES)})", repr(family)))
            )
    for family in entry.fundamental_for:
        if not any(f in entry.families for f in family_ancestors(family)):
            out.append(
                _warn(
                    path,
                    expected(
                        "fundamental_for families the entry applies to "
                        f"({', '.join(entry.families)})",
                        repr(family),
                    ),
                )
            )
    if not entry.keywords:
        out.append(
            _warn(
                path,
                expected(
                    "keywords, so experiment descriptions can be tagged with this entry", "none"
                ),
            )
        )
    for names, known, what in (
        ({n for c in entry.triggers for n in c.names}, METRICS, "metric"),
        ({n for c in entry.shape_conditions for n in c.names}, SHAPE_FACTS, "shape fact"),
    ):
        for name in sorted(names - set(known)):
            out.append(
                _warn(path, expected(f"a known {what} name", repr(name)), section="When to Apply")
            )
    canonical = render_entry(entry)
    if canonical != text:
        line, difference = _first_difference(canonical, text)
        out.append(
            _warn(
                path,
                expected(
                    "the canonical form kernelopt writes (update operations will rewrite it)",
                    difference,
                ),
                line=line,
                section=None,
            )
        )
    return out


def _first_difference(canonical: str, text: str) -> tuple[int, str]:
    """The first line where ``text`` departs from ``canonical``, and how, in words.

    The message quotes the file's line beside the one kernelopt writes there (the start of
    each, as the reader quotes a line, ``repr`` showing tabs and trailing blanks), so the
    departure can be seen and fixed by hand without diffing the file against
    ``kernelopt catalog show``.
    """
    ours, theirs = canonical.split("\n"), split_lines(text)
    shorter = min(len(ours), len(theirs))
    line = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False), 1) if a != b), None)
    if line is not None:
        mine = repr(theirs[line - 1][:60])
        if line == len(ours):
            # Past the newline that ends kernelopt's last line: the file goes on.
            return line, f"{mine} at line {line}, after the last line kernelopt writes"
        return line, f"{mine} at line {line}, where kernelopt writes {ours[line - 1][:60]!r}"
    if len(ours) == len(theirs):
        # Equal once read line by line: the file differs only in how its lines end.
        ending = "CRLF" if "\r\n" in text else "CR"
        first = len(split_lines(text[: text.index("\r")]))
        return first, f"{ending} line endings (kernelopt writes LF)"
    if len(theirs) > len(ours):
        extra = count_text(len(theirs) - len(ours), "blank line")
        return shorter, f"{extra} more at the end of the file, from line {shorter}"
    if ours[shorter:] == [""]:
        return shorter, f"no newline at the end of line {shorter}, the file's last"
    return shorter, (
        f"the end of the file after line {shorter}, where kernelopt writes "
        f"{ours[shorter][:60]!r} next"
    )


def _placeholder_problems(tree: LoadedTree) -> tuple[set[str], list[Problem]]:
    paths, out = set(), []
    for path, text in tree.texts.items():
        for line, section, mark in find_placeholders(text):
            paths.add(str(path))
            out.append(
                Problem(
                    path=str(path),
                    line=line,
                    severity=Severity.ERROR,
                    section=section,
                    message=expected("this placeholder filled in", mark),
                )
            )
    return paths, out


def lint_tree(
    root: str | os.PathLike[str] | None = None, *, with_builtin: bool = True
) -> list[Problem]:
    """Lint a knowledge tree (the built-in one when ``root`` is None).

    Parameters
    ----------
    root : path-like, optional
        The tree's root folder.
    with_builtin : bool
        Resolve interaction links against the built-in entries too.

    Returns
    -------
    list of Problem
        In file order; ``problem.is_error`` tells errors from warnings.

    Raises
    ------
    CatalogError
        If ``root`` is not a folder or cannot be listed.
    InputError
        If ``root`` is neither None nor a path, or ``with_builtin`` is not a bool.
    """
    base = BUILTIN_ROOT if root is None else as_path(root, "root")
    require_bool(with_builtin, "with_builtin")
    tree = load_tree(base)
    with_placeholders, problems = _placeholder_problems(tree)
    for problem in tree.problems:
        if problem.path in with_placeholders and FILL_MARK in problem.message:
            continue  # reported above, one problem per placeholder
        problems.append(problem)
    known = {e.id for e in tree.entries}
    if with_builtin and base.resolve() != BUILTIN_ROOT:
        builtin_ids = Catalog.builtin().ids()
        known |= set(builtin_ids)
        problems += builtin_fallbacks(tree, builtin_ids)
    problems += link_problems(tree, known)
    for entry in tree.entries:
        path = tree.paths[entry.id]
        problems += _entry_warnings(entry, path, tree.texts[path])
    index = base / INDEX_NAME
    refused = _refused_index(base) if index.is_file() else None
    if refused is not None:
        # `kernelopt catalog index` would refuse the folder too: advising it would send the
        # user to a command that fails.
        problems.append(_warn(index, refused, section=None))
    elif not index.is_file():
        problems.append(
            _warn(
                index,
                expected("an index (run `kernelopt catalog index`)", "no index.md"),
                section=None,
            )
        )
    elif _index_text(index) != render_index(tree.entries, links=tree.links()):
        problems.append(
            _warn(
                index,
                expected(
                    "an index matching the entries (run `kernelopt catalog index`)",
                    "a stale index.md",
                ),
                section=None,
            )
        )
    return sorted(problems, key=lambda p: (p.path, p.line or 0, not p.is_error))


def _refused_index(base: Path) -> str | None:
    """Why the tree's writers refuse the ``index.md`` of ``base`` (a page of the user's
    own, which the next index would replace), or None."""
    try:
        check_tree_folder(base)
    except CatalogError as error:
        return str(error)
    return None


def _index_text(index: Path) -> str | None:
    """The index's text; None when it is not UTF-8 (then it is stale, as any other)."""
    try:
        return read_exact(index)
    except UnicodeDecodeError:
        return None
