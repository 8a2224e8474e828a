"""Load every entry of a knowledge tree, collecting problems instead of stopping at one.

In non-strict mode nothing is dropped silently: a file that cannot be read or parsed, an
entry in the wrong folder, or a repeated id each becomes a :class:`Problem` naming the
file and line. Strict mode raises the first parse error (:class:`~kernelopt.FormatError`)
or, for problems between files, one :class:`~kernelopt.CatalogError` listing them all (a
line each; several markdown files outside the entry folders, which make a folder no
knowledge tree, are one line).
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

from kernelopt._errors import CatalogError, FormatError, InputError, expected
from kernelopt._fileio import locked
from kernelopt.catalog._fields import as_path, require_bool
from kernelopt.catalog.layout import (
    LINK_TO_NOTHING,
    Placement,
    TreeFiles,
    classify,
    file_type,
    scan_tree,
)
from kernelopt.catalog.markdown import parse_entry_with_warnings
from kernelopt.catalog.model import Entry, interrupted_flip
from kernelopt.catalog.problems import Problem, Severity

__all__ = ["LoadedTree", "load_tree", "problem_from_format_error", "read_exact", "reading_lock"]


def read_exact(path: Path) -> str:
    """A UTF-8 file's text with its line endings as written.

    ``Path.read_text`` turns CRLF and CR into LF, which would hide from lint (and from
    the index's freshness check) a file that is not byte for byte what kernelopt writes.

    Raises
    ------
    OSError, UnicodeDecodeError
        If the file cannot be read, or is not UTF-8.
    """
    return path.read_bytes().decode("utf-8")


@attrs.frozen(kw_only=True)
class LoadedTree:
    """What :func:`load_tree` found.

    Parameters
    ----------
    root : Path
        The tree's root folder.
    entries : tuple of Entry
        Every entry that parsed, sorted by id; of two files with one id, the first in
        path order is kept (the second is reported).
    paths : Mapping[str, Path]
        The file of each kept entry, by id.
    texts : Mapping[Path, str]
        The text of every entry file read, by path (for lint's format checks).
    problems : tuple of Problem
        Everything that went wrong, in file order.
    """

    root: Path
    entries: tuple[Entry, ...]
    paths: Mapping[str, Path]
    texts: Mapping[Path, str]
    problems: tuple[Problem, ...]

    def links(self) -> dict[str, str]:
        """The file of each entry relative to the root (``/``-separated), by id."""
        return {i: p.relative_to(self.root).as_posix() for i, p in self.paths.items()}

    @property
    def errors(self) -> tuple[Problem, ...]:
        """The problems of error severity."""
        return tuple(p for p in self.problems if p.is_error)


def problem_from_format_error(error: FormatError, path: Path) -> Problem:
    """Turn a located parse error into a lint problem."""
    return Problem(
        path=str(path),
        line=error.line,
        severity=Severity.ERROR,
        message=error.message,
        section=error.section,
    )


@contextlib.contextmanager
def reading_lock(root: Path) -> Iterator[None]:
    """Hold the tree's writer lock while reading, so a reader never sees half an update.

    Only a tree that kernelopt has written to (it then has a ``<root>.lock`` beside it) is
    read under the lock: reading a hand-kept tree leaves no lock file behind, and a tree in
    a read-only place (an installed package) is read without one.
    """
    # Writers name the lock after the resolved path (see `locked`): a reader that reaches
    # the tree through a symlink must look for that file, not one beside the link.
    if not Path(f"{root.resolve()}.lock").exists():
        yield
        return
    manager = locked(root)
    try:
        manager.__enter__()
    except (OSError, InputError):
        # `locked` says a lock file it may not open (another user's tree) as an InputError.
        yield
        return
    try:
        yield
    finally:
        manager.__exit__(None, None, None)


def _placement_problems(path: Path, entry: Entry, placement: Placement) -> list[Problem]:
    problems = []
    where = str(path)
    if path.stem != entry.id:
        problems.append(
            Problem(
                path=where,
                line=None,
                severity=Severity.ERROR,
                section="metadata",
                message=expected(f"the file named after the id ({entry.id}.md)", path.name),
            )
        )
    if entry.kind is not placement.kind:
        problems.append(
            Problem(
                path=where,
                line=None,
                severity=Severity.ERROR,
                section="metadata",
                message=expected(
                    f"kind {placement.kind.value} in {placement.kind.folder}/", entry.kind.value
                ),
            )
        )
    if entry.scope != placement.scope:
        problems.append(
            Problem(
                path=where,
                line=None,
                severity=Severity.ERROR,
                section="metadata",
                message=expected(f"scope {placement.scope} for this folder", entry.scope),
            )
        )
    return problems


def load_tree(
    root: str | os.PathLike[str], *, strict: bool = False, lock: bool = True
) -> LoadedTree:
    """Load every entry below ``root``.

    Parameters
    ----------
    root : path-like
        A knowledge tree (see :mod:`kernelopt.catalog.layout`).
    strict : bool
        Raise on the first error instead of collecting problems.
    lock : bool
        Read under the tree's writer lock (callers that already hold it pass False).

    Raises
    ------
    CatalogError
        If ``root`` is not a folder or cannot be listed, or in strict mode for problems
        between files (a folder below the root that cannot be listed is one).
    FormatError
        In strict mode, for the first file that does not parse.
    InputError
        If ``root`` is not a path, or ``strict`` or ``lock`` is not a bool.
    """
    base = as_path(root, "root")
    require_bool(strict, "strict")
    require_bool(lock, "lock")
    if not base.is_dir():
        why = "not a folder" if base.exists() else "no such folder"
        raise CatalogError(expected("a knowledge folder", f"{base} ({why})"))
    with reading_lock(base) if lock else contextlib.nullcontext():
        return _load(base, strict=strict)


def _scan(base: Path) -> tuple[TreeFiles, list[Problem]]:
    """The tree's files, and a problem for each folder below the root it could not list.

    A root that cannot be listed is refused as a missing one is: read as empty, the tree
    would leave the built-in entries answering alone.
    """
    files = scan_tree(base)
    problems = []
    for folder, reason in files.unreadable:
        if folder == base:
            raise CatalogError(expected("a knowledge folder", f"{base} (not readable: {reason})"))
        problems.append(
            Problem(
                path=str(folder),
                line=None,
                severity=Severity.ERROR,
                message=expected("a folder kernelopt can read", reason),
            )
        )
    return files, problems


def _strict_lines(base: Path, errors: list[Problem], outside: list[Problem]) -> list[str]:
    """The lines of a strict load's error: one per error, except for markdown outside the
    entry folders, which several files make one line.

    A folder that is not a knowledge tree (``--knowledge examples``, a project's ``docs/``)
    holds many such files; a line each would bury what is wrong, which is the folder. The
    problems stay listed one by one in a non-strict load and in ``kernelopt catalog lint``.
    """
    if len(outside) < 2:
        return [str(p) for p in errors]
    first = Path(outside[0].path).relative_to(base).as_posix()
    summary = expected(
        f"a knowledge tree at {base} (markdown only in its entry folders)",
        f"{len(outside)} markdown files outside them (the first: {first}); pick the tree's "
        f"own folder, or see each with `kernelopt catalog lint {shlex.quote(str(base))}`",
    )
    return [summary, *(str(p) for p in errors if p not in outside)]


def _irregular_problem(base: Path, path: Path, what: str) -> Problem:
    """The problem of a ``.md`` name that is not a regular file: ``Expected a regular file,
    got a FIFO``. An error where a regular file would be read (an entry left out), a
    warning at the root, where markdown holds no entry."""
    severity = Severity.WARNING if classify(base, path) is None else Severity.ERROR
    return Problem(
        path=str(path), line=None, severity=severity, message=expected("a regular file", what)
    )


def _unreadable_problem(path: Path, error: OSError | UnicodeDecodeError) -> Problem:
    """The problem of an entry file that could not be read; a link to nothing says so, and
    where it points, rather than the bare "No such file or directory" of its target."""
    got = str(error)
    if isinstance(error, OSError) and file_type(path) == LINK_TO_NOTHING:
        got = LINK_TO_NOTHING
        with contextlib.suppress(OSError):
            got += f" ({os.readlink(path)})"
    return Problem(
        path=str(path),
        line=None,
        severity=Severity.ERROR,
        message=expected("a readable UTF-8 file", got),
    )


def _load(base: Path, *, strict: bool) -> LoadedTree:
    kept: dict[str, Entry] = {}
    paths: dict[str, Path] = {}
    texts: dict[Path, str] = {}
    files, problems = _scan(base)
    outside: list[Problem] = []  # markdown outside the entry folders
    for path in files.misnamed:
        problems.append(
            Problem(
                path=str(path),
                line=None,
                severity=Severity.WARNING,
                message=expected(
                    "only .md entry files in an entry folder", f"{path.name}, not loaded"
                ),
            )
        )
    irregular = dict(files.irregular)
    for path in sorted((*files.markdown, *irregular)):
        if path in irregular:
            problems.append(_irregular_problem(base, path, irregular[path]))
            continue
        placement = classify(base, path)
        if placement is None:
            continue
        if isinstance(placement, str):
            problem = Problem(path=str(path), line=None, severity=Severity.ERROR, message=placement)
            problems.append(problem)
            outside.append(problem)
            continue
        try:
            text = read_exact(path)
        except (OSError, UnicodeDecodeError) as error:
            problems.append(_unreadable_problem(path, error))
            continue
        texts[path] = text
        try:
            entry, warnings = parse_entry_with_warnings(text, path=path)
        except FormatError as error:
            if strict:
                raise
            problems.append(problem_from_format_error(error, path))
            continue
        # What the file left out and was read from elsewhere (its path, a default).
        problems.extend(warnings)
        problems.extend(_placement_problems(path, entry, placement))
        flipped = None if entry.id not in kept else interrupted_flip(kept[entry.id], entry)
        if flipped is not None:
            # Both sides of a flip that stopped before removing the old file: the flipped
            # copy is the entry; the entry's next update removes the other.
            stale = paths[entry.id] if flipped is entry else path
            problems.append(
                Problem(
                    path=str(stale),
                    line=None,
                    severity=Severity.WARNING,
                    section="metadata",
                    message=expected(
                        f"one copy of '{entry.id}'",
                        "the copy from before an interrupted flip, not loaded (the entry's "
                        "next update removes it)",
                    ),
                )
            )
            kept[entry.id] = flipped
            paths[entry.id] = path if flipped is entry else paths[entry.id]
            continue
        if entry.id in kept:
            problems.append(
                Problem(
                    path=str(path),
                    line=None,
                    severity=Severity.ERROR,
                    section="metadata",
                    message=expected(
                        f"a unique id ('{entry.id}' is already in {paths[entry.id]})", "a repeat"
                    ),
                )
            )
            continue
        kept[entry.id] = entry
        paths[entry.id] = path
    errors = [p for p in problems if p.is_error]
    if not kept and not errors:
        # An empty folder, or one holding only files that are no entries (a stray notes.txt),
        # loads without a problem and leaves the built-in entries answering alone: say so,
        # or a mistyped --knowledge path reads as the user's tree.
        problems.append(
            Problem(
                path=str(base),
                line=None,
                severity=Severity.WARNING,
                message=f"knowledge tree {base} holds no entries (.md files in "
                "optimizations/, anti-patterns/ or languages/<language>/); the built-in "
                "entries answer alone",
            )
        )
    if strict and errors:
        raise CatalogError("\n".join(_strict_lines(base, errors, outside)))
    return LoadedTree(
        root=base,
        entries=tuple(kept[k] for k in sorted(kept)),
        paths=paths,
        texts=texts,
        problems=tuple(problems),
    )
