"""Where entries live in a knowledge tree, the layout of the knowledge-base protocol.

::

    <root>/index.md                                  the index table (generated)
    <root>/optimizations/<id>.md                     shared optimizations
    <root>/anti-patterns/<id>.md                     shared anti-patterns
    <root>/languages/<language>/optimizations/<id>.md
    <root>/languages/<language>/anti-patterns/<id>.md

The built-in catalog (``kernelopt/catalog/knowledge/``) and a user's ``docs/knowledge/``
share this layout. A language folder may use another spelling of the language
(``languages/cutile-dsl/`` holds ``cutile`` entries); new files for that language then go
into the folder the tree already has.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import attrs

from kernelopt._errors import CatalogError, expected
from kernelopt.catalog.index import INDEX_HEADER
from kernelopt.catalog.model import Kind, relative_path
from kernelopt.catalog.vocabulary import DIALECTS, LANGUAGE_ALIASES, LANGUAGES, SCOPES

__all__ = [
    "INDEX_NAME",
    "LINK_TO_NOTHING",
    "Placement",
    "TreeFiles",
    "candidate_paths",
    "check_tree_folder",
    "classify",
    "entry_path",
    "file_type",
    "is_root_note",
    "iter_markdown",
    "iter_misnamed",
    "make_root",
    "not_a_folder",
    "relative_path",
    "scan_tree",
]

INDEX_NAME = "index.md"
_FOLDERS = {kind.folder: kind for kind in Kind}


@attrs.frozen(kw_only=True)
class Placement:
    """What a file's place in the tree says about the entry it holds."""

    kind: Kind
    scope: str


def _spellings(scope: str) -> list[str]:
    """The folder names of ``scope``: the canonical name, then its other spellings."""
    return [scope, *(alias for alias, name in LANGUAGE_ALIASES.items() if name == scope)]


def candidate_paths(root: Path, entry_id: str) -> Iterator[Path]:
    """Every place an entry with ``entry_id`` could live in the tree at ``root``."""
    for scope in SCOPES:
        for folder in _spellings(scope):
            for kind in Kind:
                yield root / relative_path(entry_id, kind, folder)


def entry_path(
    root: Path, entry_id: str, kind: Kind, scope: str, *, now: Path | None = None
) -> Path:
    """Where an entry goes in the tree at ``root``.

    An entry already in a folder of its language (``now``, its file) stays in that folder,
    under any spelling: a tree with both ``languages/cutile/`` and
    ``languages/cutile-dsl/`` keeps each file where its author put it. A new file of a
    language whose folder the tree already has under another spelling
    (``languages/cutile-dsl/``) goes there, so one language never ends up split over two
    folders; otherwise the canonical path (:func:`relative_path`).
    """
    if scope != "shared":
        for folder in _spellings(scope):
            if now is not None and now.parent.parent == root / "languages" / folder:
                return root / relative_path(entry_id, kind, folder)
        for folder in _spellings(scope):
            if (root / "languages" / folder).is_dir():
                return root / relative_path(entry_id, kind, folder)
    return root / relative_path(entry_id, kind, scope)


@attrs.frozen(kw_only=True)
class TreeFiles:
    """What a walk of a knowledge tree found.

    Parameters
    ----------
    markdown : tuple of Path
        The ``.md`` regular files, sorted, hidden files and folders left out.
    misnamed : tuple of Path
        The other files in entry folders (an entry saved as ``.MD`` or ``.txt``), sorted.
    unreadable : tuple of (Path, str)
        Each folder that could not be listed, with the reason (``"Permission denied"``):
        its entries are missing from the other two.
    irregular : tuple of (Path, str)
        Each ``.md`` name that is not a regular file (a named pipe, a socket, a device),
        with what it is (``"a FIFO"``), sorted; left out of ``markdown``, never opened.
    """

    markdown: tuple[Path, ...]
    misnamed: tuple[Path, ...]
    unreadable: tuple[tuple[Path, str], ...]
    irregular: tuple[tuple[Path, str], ...] = ()


def scan_tree(root: Path) -> TreeFiles:
    """Walk the tree at ``root`` once, keeping each folder it could not list.

    ``Path.rglob`` passes over a folder it may not list as if it were empty, which would
    drop its entries without a word.
    """
    markdown: list[Path] = []
    misnamed: list[Path] = []
    unreadable: list[tuple[Path, str]] = []
    irregular: list[tuple[Path, str]] = []

    def note(error: OSError) -> None:
        unreadable.append((Path(error.filename), error.strerror or str(error)))

    for folder, dirs, files in os.walk(root, onerror=note):
        # Hidden folders hold temp files of atomic writes and tools' own state.
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        here = Path(folder)
        for name in files:
            path = here / name
            if name.startswith("."):
                continue
            what = file_type(path)
            if what is not None and what != LINK_TO_NOTHING:
                # Kept apart, so the loader can say what it is instead of dropping it
                # without a word.
                if path.suffix == ".md":
                    irregular.append((path, what))
                continue
            if path.suffix == ".md":
                markdown.append(path)
            elif len(path.relative_to(root).parts) >= 2 and here.name in _FOLDERS:
                misnamed.append(path)
    return TreeFiles(
        markdown=tuple(sorted(markdown)),
        misnamed=tuple(sorted(misnamed)),
        unreadable=tuple(sorted(unreadable)),
        irregular=tuple(sorted(irregular)),
    )


# What :func:`file_type` says of a link whose target is gone (or a loop of links).
LINK_TO_NOTHING = "a link to nothing"

_FILE_TYPES = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


def file_type(path: Path) -> str | None:
    """What ``path`` is when it is not a regular file (``"a FIFO"``), else None.

    It is looked at, never opened: opening a named pipe waits for a writer that may never
    come. A file that cannot even be looked at counts as regular (None): reading it then
    fails, and the reader reports that. A link to nothing (its target moved or deleted, or
    a loop of links) is :data:`LINK_TO_NOTHING`; a link to a FIFO is ``"a link to a FIFO"``.
    """
    try:
        mode = path.stat().st_mode
    except OSError:
        try:
            return LINK_TO_NOTHING if path.is_symlink() else None
        except OSError:
            return None
    if stat.S_ISREG(mode):
        return None
    what = next(
        (name for test, name in _FILE_TYPES if test(mode)),
        f"not a regular file (mode {stat.S_IFMT(mode):#o})",
    )
    return f"a link to {what}" if path.is_symlink() else what


def iter_markdown(root: Path) -> Iterator[Path]:
    """The ``.md`` files below ``root`` in a stable order, skipping hidden files and folders
    and anything that is not a regular file (see :func:`scan_tree`)."""
    return iter(scan_tree(root).markdown)


def iter_misnamed(root: Path) -> Iterator[Path]:
    """Files in entry folders that are not ``.md``: an entry saved as ``.MD``, ``.markdown``
    or ``.txt`` would otherwise be skipped without a word."""
    return iter(scan_tree(root).misnamed)


def classify(root: Path, path: Path) -> Placement | str | None:
    """Say what ``path`` is in the tree at ``root``.

    Returns
    -------
    Placement
        For a file in an entry folder.
    None
        For a markdown file at the root (``index.md``, a README), which holds no entry.
    str
        An ``Expected ..., got ...`` message saying why the file is in no known place.
    """
    parts = path.relative_to(root).parts
    if len(parts) == 1:
        return None
    if len(parts) == 2 and parts[0] in _FOLDERS:
        return Placement(kind=_FOLDERS[parts[0]], scope="shared")
    if parts[0] == "languages" and len(parts) == 4 and parts[2] in _FOLDERS:
        scope = LANGUAGE_ALIASES.get(parts[1], parts[1])
        if scope not in LANGUAGES and scope not in DIALECTS:
            folders = sorted((*LANGUAGES, *LANGUAGE_ALIASES, *DIALECTS))
            return expected(
                f"a language folder in {', '.join(folders)}",
                f"languages/{parts[1]}/",
            )
        return Placement(kind=_FOLDERS[parts[2]], scope=scope)
    return expected(
        "an entry under optimizations/, anti-patterns/ or "
        "languages/<language>/{optimizations,anti-patterns}/",
        "/".join(parts),
    )


def not_a_folder(root: Path) -> bool:
    """Whether ``root`` names something other than a folder: a file, or a link to nothing
    (every check of a path through it answers False)."""
    return (root.exists() or root.is_symlink()) and not root.is_dir()


def make_root(root: Path) -> None:
    """Create a tree's folder, or say in the catalog's words why it cannot be one (a root
    that is a file raised the ``FileExistsError`` of ``mkdir``).

    Raises
    ------
    CatalogError
        If ``root`` is a file or a link to nothing, or cannot be created.
    """
    if not_a_folder(root):
        raise CatalogError(expected("a knowledge folder", f"{root} (not a folder)"))
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CatalogError(
            expected(
                "a knowledge folder that can be created", f"{root} ({error.strerror or error})"
            )
        ) from None


def check_tree_folder(root: Path) -> None:
    """Refuse to write into a folder that is not a knowledge tree.

    Writers call it before they create or write anything. A folder is refused when its
    ``index.md`` was not written by ``kernelopt catalog index`` (a project's own docs page
    at ``docs/knowledge/index.md``, which the next index would replace) or, without an
    ``index.md``, when it holds markdown outside the entry folders, a root README aside (a
    project's ``docs/`` named for its ``docs/knowledge/``, or a folder holding
    ``guide.md`` at its root, where the index would land among the site's pages).
    A folder that does not exist yet is fine: it is created as a tree.

    Parameters
    ----------
    root : Path
        The tree's root folder.

    Raises
    ------
    CatalogError
        If the folder is not a knowledge tree, as said above.
    """
    path = root / INDEX_NAME
    if not path.is_file():
        _check_holds_a_tree(root)
        return
    try:
        head = path.read_text(encoding="utf-8")[: len(INDEX_HEADER)]
    except (OSError, UnicodeDecodeError):
        head = ""
    if head != INDEX_HEADER:
        raise CatalogError(
            expected(
                f"a knowledge tree at {root} (its index.md written by "
                "`kernelopt catalog index`, or none)",
                f"another file at {path}, which would be replaced; pick another tree",
            )
        )


def is_root_note(name: str) -> bool:
    """Whether a markdown file of this name belongs at a tree's root: ``index.md`` or a
    README (``README.md``, ``readme.md``), the files the loader reads as no entry."""
    return name == INDEX_NAME or name.lower().startswith("readme")


def _check_holds_a_tree(root: Path) -> None:
    """Refuse a folder without ``index.md`` that holds markdown outside the entry folders.

    At the root only a README is a tree's own: other pages there (``guide.md``) mark a
    project's docs folder, where the first index would land among the site's pages.
    """
    if not root.is_dir():
        return
    for path in iter_markdown(root):
        place = classify(root, path)
        if isinstance(place, str) or (place is None and not is_root_note(path.name)):
            shown = path.relative_to(root).as_posix()
            raise CatalogError(
                expected(
                    f"a knowledge tree at {root} (markdown only in its entry folders)",
                    f"{shown}, outside them; pick the tree's own folder or move the file",
                )
            )
