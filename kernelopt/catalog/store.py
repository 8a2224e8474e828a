"""Update operations of the knowledge-base protocol on a user's knowledge tree.

The protocol's LEARN step changes the knowledge base in five ways: add an optimization,
add an anti-pattern, refine where an entry applies, record new performance evidence, and
flip an optimization into an anti-pattern (or back) when it is confuted. Each operation
here is one locked read-modify-write: it holds the tree's lock (``<root>.lock``), reads
the entry's file, writes the new text atomically (temp file + rename) and regenerates
``index.md``. Several processes updating one tree at once therefore serialize and lose
nothing; one killed mid-write leaves the tree readable, and the next operation removes its
temp file and regenerates the index. An update that would replace another file is refused
before anything is written: one of a file whose id line names another entry (a copy whose
id is not yet edited), of a misplaced file whose entry already has a copy where it goes,
or where a FIFO, socket, device or folder stands at one of the entry's paths or at
``index.md`` (``Expected a regular file at <path>, got a FIFO``): the reader leaves those
out, and a write would replace the node or save the entry beside it.

An operation on an id that exists only in the built-in catalog starts from the built-in
entry and writes the result into the user's tree, where it then overrides the built-in.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from kernelopt._errors import CatalogError, FormatError, InputError, expected
from kernelopt._fileio import atomic_write_text, locked, temp_file_target
from kernelopt.catalog._fields import (
    as_path,
    require_bool,
    require_entry_id,
    require_str,
    to_enum,
)
from kernelopt.catalog.catalog import Catalog, did_you_mean
from kernelopt.catalog.conditions import Condition, parse_condition
from kernelopt.catalog.index import render_index
from kernelopt.catalog.layout import (
    INDEX_NAME,
    LINK_TO_NOTHING,
    Placement,
    candidate_paths,
    check_tree_folder,
    classify,
    entry_path,
    file_type,
    iter_markdown,
    make_root,
    not_a_folder,
)
from kernelopt.catalog.loader import load_tree, read_exact
from kernelopt.catalog.markdown import parse_entry, render_entry
from kernelopt.catalog.model import (
    Entry,
    Evidence,
    EvidenceRow,
    Interaction,
    Kind,
    SourceType,
    flip_note_prefix,
    interrupted_flip,
)

__all__ = ["KnowledgeTree"]


def _conditions(items: object, where: str) -> tuple[Condition, ...]:
    """``items`` as conditions, a str among them parsed (``"dram_pct > 60"``).

    A lone str is one condition, not a sequence of its characters; a mapping's keys and
    bytes' integers are no conditions either.
    """
    what = "a sequence of conditions (Condition or str)"
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise InputError(expected(what, repr(items)[:80], where=where))
    conditions = []
    for item in items:
        if isinstance(item, str):
            item = parse_condition(item)
        elif not isinstance(item, Condition):
            raise InputError(expected(what, f"an item {item!r}"[:80], where=where))
        conditions.append(item)
    return tuple(conditions)


def _entry_text(path: Path) -> str:
    """An entry file's text (:func:`read_exact`); one saved in another encoding is a
    located FormatError."""
    try:
        return read_exact(path)
    except UnicodeDecodeError as error:
        raise FormatError(
            expected(
                "a UTF-8 file", f"byte {error.object[error.start]:#04x} at offset {error.start}"
            ),
            path=path,
        ) from None


def _refuse_special_files(paths: Iterable[Path]) -> None:
    """Refuse an update where a named pipe, socket, device or folder stands at one of
    ``paths``.

    The reader leaves such a name out (:func:`~kernelopt.catalog.layout.file_type`), so
    an update would otherwise start from the built-in entry and write beside it (a flip),
    or fail only after the entry was saved (an ``index.md`` that is a FIFO). The node is
    looked at, never opened: opening a FIFO waits for a writer that may never come.

    Raises
    ------
    CatalogError
        ``Expected a regular file at <path>, got a FIFO (nothing was written)``.
    """
    for path in paths:
        what = file_type(path)
        # A link to nothing is left to the write, which creates the file it names.
        if what is not None and what != LINK_TO_NOTHING:
            raise CatalogError(
                expected(f"a regular file at {path}", f"{what} (nothing was written)")
            )


def _has_paragraphs(text: str, notes: str) -> bool:
    """Whether ``notes`` is empty or already in ``text`` as whole paragraphs: a phrase
    that only appears inside a paragraph is a note of its own, to be kept."""
    return not notes or f"\n\n{notes}\n\n" in f"\n\n{text}\n\n"


def _require(value: object, kind: type, where: str) -> None:
    if not isinstance(value, kind):
        article = "an" if kind.__name__[0] in "AEIOU" else "a"
        raise InputError(expected(f"{article} {kind.__name__}", repr(value)[:80], where=where))


class KnowledgeTree:
    """A knowledge tree on disk (``docs/knowledge/``) and the protocol's update operations.

    Parameters
    ----------
    root : path-like
        The tree's root folder; created on the first write.
    with_builtin : bool
        Let operations start from built-in entries and let interactions link to them.

    Examples
    --------
    >>> import tempfile
    >>> from kernelopt.catalog import EvidenceRow, KnowledgeTree
    >>> tree = KnowledgeTree(tempfile.mkdtemp())
    >>> entry = tree.record_evidence(
    ...     "too-many-kv-splits",
    ...     EvidenceRow(config="8 -> 16 splits", before="74 us", after="83 us", change="+12 %"),
    ...     source_type="local experiment",
    ...     source="experiments/exp_7/result.md",
    ... )
    >>> (tree.root / entry.relative_path).is_file()
    True
    """

    def __init__(self, root: str | os.PathLike[str], *, with_builtin: bool = True) -> None:
        self.root = as_path(root, "root")
        self.with_builtin = require_bool(with_builtin, "with_builtin")

    def __repr__(self) -> str:
        return f"KnowledgeTree({str(self.root)!r})"

    # --- reading ------------------------------------------------------------------------

    def catalog(self, *, strict: bool = True) -> Catalog:
        """The tree merged over the built-ins (if ``with_builtin``) as a :class:`Catalog`.

        Parameters
        ----------
        strict : bool
            Raise on the first problem; otherwise keep going and list problems in the
            catalog's ``problems`` (see :meth:`Catalog.load`).

        Returns
        -------
        Catalog
            The merged catalog; the built-ins alone (or an empty catalog) while the
            tree's folder does not exist.

        Raises
        ------
        CatalogError
            If the root is a file or a link to nothing, not a folder (as
            :meth:`Catalog.load` says), or in strict mode for problems in the tree.
        InputError
            If ``strict`` is not a bool.
        """
        require_bool(strict, "strict")
        if not_a_folder(self.root):
            raise CatalogError(expected("a knowledge folder", f"{self.root} (not a folder)"))
        if not self.root.is_dir():
            return Catalog.builtin() if self.with_builtin else Catalog()
        return Catalog.load(self.root, with_builtin=self.with_builtin, strict=strict)

    def path_of(self, entry: Entry) -> Path:
        """Where an entry lives (or would live) in this tree.

        Parameters
        ----------
        entry : Entry
            The entry; its id, kind and scope name the file.

        Returns
        -------
        Path
            The canonical path, except in a tree whose folder for the entry's language
            has another spelling (``languages/cutile-dsl/``): there, that folder.

        Raises
        ------
        InputError
            If ``entry`` is not an :class:`Entry`.
        """
        _require(entry, Entry, "entry")
        return entry_path(self.root, entry.id, entry.kind, entry.scope)

    def _tree_ids(self) -> dict[str, Path]:
        """Ids of the entry files in the tree, from their file names (no parsing)."""
        if not self.root.is_dir():
            return {}
        return {
            p.stem: p
            for p in iter_markdown(self.root)
            if isinstance(classify(self.root, p), Placement)
        }

    def _known_ids(self) -> set[str]:
        ids = set(self._tree_ids())
        if self.with_builtin:
            ids.update(Catalog.builtin().ids())
        return ids

    def _find(self, entry_id: str) -> tuple[Path | None, Entry]:
        paths = tuple(candidate_paths(self.root, entry_id))  # an iterator: read twice here
        _refuse_special_files(paths)
        found = [
            (path, parse_entry(_entry_text(path), path=path)) for path in paths if path.is_file()
        ]
        for path, entry in found:
            if entry.id != entry_id:
                # A file copied to start a new entry, its id line not yet changed: saved
                # under its id, the update would replace that entry's own file.
                raise CatalogError(
                    expected(
                        f"'- id: {entry_id}' in {path}, the id its file name gives",
                        f"'{entry.id}'; change the id line or rename the file (nothing was "
                        "written)",
                    )
                )
        if len(found) == 2:
            (path_a, a), (path_b, b) = found
            flipped = interrupted_flip(a, b)
            if flipped is not None:
                # A flip stopped between writing the new file and removing the old one:
                # finish it (writers hold the lock), so the next write edits the flipped
                # copy and the tree loads again.
                stale, kept = (path_b, path_a) if flipped is a else (path_a, path_b)
                stale.unlink()
                return kept, flipped
        if found:
            return found[0]
        if self.with_builtin and entry_id in Catalog.builtin():
            return None, Catalog.builtin().get(entry_id)
        if self.with_builtin:
            raise CatalogError(
                expected(f"an entry id present in {self.root} or the built-ins", repr(entry_id))
                + did_you_mean(entry_id, self._known_ids())
            )
        # Not looked up in the built-ins, so they are not named as searched; a built-in id
        # says why it was not found.
        builtin = entry_id in Catalog.builtin()
        got = f"{entry_id!r}, a built-in id (with_builtin=False)" if builtin else repr(entry_id)
        raise CatalogError(
            expected(f"an entry id present in {self.root}", got)
            + ("" if builtin else did_you_mean(entry_id, self._known_ids()))
        )

    # --- writing ------------------------------------------------------------------------

    def _check_links(self, entry: Entry) -> None:
        known = self._known_ids() | {entry.id}
        broken = [i.target for i in entry.interactions if i.target not in known]
        if broken:
            hints = "".join(did_you_mean(target, known) for target in broken[:1])
            raise CatalogError(
                expected("interactions linking known entry ids", ", ".join(broken), where=entry.id)
                + hints
            )

    def _write(self, entry: Entry, old_path: Path | None = None) -> Path:
        path = entry_path(self.root, entry.id, entry.kind, entry.scope, now=old_path)
        if old_path is not None and old_path != path and (path.exists() or path.is_symlink()):
            # The file is in a folder its kind or scope does not name, and another copy is
            # already where it goes: replacing that copy could drop what only it holds.
            raise CatalogError(
                expected(
                    f"one file for '{entry.id}'",
                    f"{old_path} and {path}; keep one of them and remove the other (nothing "
                    "was written)",
                )
            )
        atomic_write_text(path, render_entry(entry))
        if old_path is not None and old_path != path:
            # The entry was in a folder its kind or scope does not name; keep one copy.
            old_path.unlink()
        self._index_after(path)
        return path

    def _check_index_is_ours(self) -> None:
        """Refuse a folder that is not a knowledge tree (:func:`check_tree_folder`): every
        operation ends by rewriting its ``index.md``, so one that is not a regular file is
        refused too, before the entry is written."""
        check_tree_folder(self.root)
        _refuse_special_files([self.root / INDEX_NAME])

    def _remove_dead_temp_files(self) -> None:
        """Remove the temp files of writers killed between writing and renaming them.

        Called with the lock held: every writer of the tree holds it while its temp file
        exists, so one found now belongs to a writer that is gone.
        """
        for path in self.root.rglob(".*.tmp"):
            target = temp_file_target(path)
            if target is None or target.suffix != ".md" or not path.is_file():
                continue
            # Only beside the files the tree writes: another writer's temp file elsewhere
            # under the root (a devlog kept there) is not under this lock.
            if target == self.root / INDEX_NAME or isinstance(
                classify(self.root, target), Placement
            ):
                path.unlink(missing_ok=True)

    def _refresh_index(self) -> Path:
        self._remove_dead_temp_files()
        tree = load_tree(self.root, lock=False)
        path = self.root / INDEX_NAME
        text = render_index(tree.entries, links=tree.links())
        if not path.is_file() or read_exact(path) != text:
            atomic_write_text(path, text)
        return path

    def _index_after(self, written: Path) -> None:
        """Regenerate the index once an update is saved in ``written``.

        An index that cannot be written (a root folder this user may not write in, a full
        disk) fails after the entry file was replaced: the error says the update is
        saved, since repeating a ``record_evidence`` would record its row twice.
        """
        try:
            self._refresh_index()
        except (InputError, OSError) as error:
            raise InputError(
                expected(
                    f"{self.root / INDEX_NAME} rewritten after the update",
                    f"{error}; the update is saved in {written}, so do not repeat it: run "
                    f"`kernelopt catalog index {shlex.quote(str(self.root))}` once the folder "
                    "can be written",
                )
            ) from None

    def write_index(self) -> Path:
        """Regenerate ``index.md`` from the tree's entries; returns its path.

        Raises
        ------
        CatalogError
            If the folder's ``index.md`` was not written by a knowledge tree or is not a
            regular file (a FIFO), or it has none and holds markdown outside the entry
            folders (not a knowledge tree).
        """
        self._check_index_is_ours()
        make_root(self.root)
        with locked(self.root):
            return self._refresh_index()

    def add(self, entry: Entry) -> Path:
        """Add a new entry (optimization or anti-pattern) in the folder its kind and scope name.

        Parameters
        ----------
        entry : Entry
            The entry, with an id not yet used.

        Returns
        -------
        Path
            The file written.

        Raises
        ------
        CatalogError
            If the id is already used in the tree or by a built-in entry (use the other
            operations to change an existing entry), an interaction links an unknown id,
            or a FIFO, socket, device or folder stands where the entry's file or
            ``index.md`` would go.
        InputError
            If ``entry`` is not an :class:`Entry`.
        """
        _require(entry, Entry, "entry")
        self._check_index_is_ours()
        make_root(self.root)
        with locked(self.root):
            _refuse_special_files(candidate_paths(self.root, entry.id))
            existing = self._tree_ids().get(entry.id)
            if existing is not None:
                raise CatalogError(
                    expected("a new entry id", f"'{entry.id}', already in {existing}")
                )
            if self.with_builtin and entry.id in Catalog.builtin():
                raise CatalogError(
                    expected(
                        "a new entry id",
                        f"'{entry.id}', a built-in entry (change it with refine_applicability, "
                        "record_evidence or flip)",
                    )
                )
            self._check_links(entry)
            return self._write(entry)

    def add_optimization(self, entry: Entry) -> Path:
        """Add a new optimization (protocol: "New Optimization Validated").

        Parameters
        ----------
        entry : Entry
            The entry, of kind optimization, with an id not yet used.

        Returns
        -------
        Path
            The file written.

        Raises
        ------
        InputError
            If ``entry`` is not an :class:`Entry` or is of another kind.
        CatalogError
            As :meth:`add`.
        """
        _require(entry, Entry, "entry")
        if entry.kind is not Kind.OPTIMIZATION:
            raise InputError(
                expected("an entry of kind optimization", entry.kind.value, where="entry.kind")
            )
        return self.add(entry)

    def add_anti_pattern(self, entry: Entry) -> Path:
        """Add a new anti-pattern (protocol: "Optimization Caused Clear Regression").

        Parameters
        ----------
        entry : Entry
            The entry, of kind anti-pattern, with an id not yet used.

        Returns
        -------
        Path
            The file written.

        Raises
        ------
        InputError
            If ``entry`` is not an :class:`Entry` or is of another kind.
        CatalogError
            As :meth:`add`.
        """
        _require(entry, Entry, "entry")
        if entry.kind is not Kind.ANTI_PATTERN:
            raise InputError(
                expected("an entry of kind anti-pattern", entry.kind.value, where="entry.kind")
            )
        return self.add(entry)

    def _update(self, entry_id: str, change: dict[str, Any]) -> Entry:
        self._check_index_is_ours()
        make_root(self.root)
        with locked(self.root):
            path, current = self._find(entry_id)
            try:
                updated = attrs.evolve(current, **change)
            except (InputError, TypeError) as error:
                raise InputError(expected(f"a valid change to '{entry_id}'", str(error))) from None
            self._check_links(updated)
            self._write(updated, path)
            return updated

    def refine_applicability(
        self,
        entry_id: str,
        *,
        contexts: Iterable[str] | None = None,
        triggers: Iterable[Condition | str] | None = None,
        shape_conditions: Iterable[Condition | str] | None = None,
        families: Iterable[str] | None = None,
        fundamental_for: Iterable[str] | None = None,
        keywords: Iterable[str] | None = None,
        pitfalls: Iterable[str] | None = None,
    ) -> Entry:
        """Replace where an entry applies: contexts, triggers, shapes, families, keywords.

        Each argument left ``None`` keeps the entry's current value; a given one replaces
        it whole (nothing is appended). The entry's own checks apply to the new values.

        Parameters
        ----------
        entry_id : str
            The entry to change, in this tree or (with ``with_builtin``) a built-in one,
            which is then written into this tree.
        contexts : iterable of str, optional
            When to Apply: the kernel contexts, one line each.
        triggers : iterable of Condition or str, optional
            Conditions over measured metrics; a str is parsed (``"dram_pct > 60"``).
        shape_conditions : iterable of Condition or str, optional
            Conditions over workload shape facts; a str is parsed (``"s_q == 1"``).
        families : iterable of str, optional
            Kernel families the entry applies to (``"decode-attention"``, ``"any"``).
        fundamental_for : iterable of str, optional
            Families for which the entry is a standard technique a kernel should not lack.
        keywords : iterable of str, optional
            Phrases people use for the entry in experiment logs (``"split-kv"``).
        pitfalls : iterable of str, optional
            The entry's pitfalls, one line each.

        Returns
        -------
        Entry
            The entry as written.

        Raises
        ------
        InputError
            If ``entry_id`` is not a str, every other argument is ``None``, a condition
            list is a single str or not a sequence of conditions, or a new value fails the
            entry's checks.
        CatalogError
            If ``entry_id`` is unknown, the tree's ``index.md`` was not written by a
            knowledge tree, or a FIFO, socket, device or folder stands at one of the
            entry's paths or at ``index.md``.
        """
        require_entry_id(entry_id)
        change: dict[str, Any] = {}
        if contexts is not None:
            change["contexts"] = contexts  # the entry converts and checks it
        if triggers is not None:
            change["triggers"] = _conditions(triggers, "triggers")
        if shape_conditions is not None:
            change["shape_conditions"] = _conditions(shape_conditions, "shape_conditions")
        if families is not None:
            change["families"] = families  # the entry converts and checks it
        if fundamental_for is not None:
            change["fundamental_for"] = fundamental_for  # the entry converts and checks it
        if keywords is not None:
            change["keywords"] = keywords  # the entry converts and checks it
        if pitfalls is not None:
            change["pitfalls"] = pitfalls  # the entry converts and checks it
        if not change:
            raise InputError(expected("at least one field to refine", "none"))
        return self._update(entry_id, change)

    def record_evidence(
        self,
        entry_id: str,
        row: EvidenceRow,
        *,
        source_type: SourceType | str,
        source: str,
        notes: str = "",
    ) -> Entry:
        """Append a ``Config | Before | After | Change`` row to an entry's evidence.

        The row joins the last evidence block with the same source type and source, or
        starts a new block.

        Parameters
        ----------
        entry_id : str
            The entry to change, in this tree or (with ``with_builtin``) a built-in one,
            which is then written into this tree.
        row : EvidenceRow
            The measured row; cells are text with their units (``"74 us"``, ``"+12 %"``).
        source_type : SourceType or str
            ``"local experiment"`` or ``"external report"``.
        source : str
            Where the numbers come from: an experiment path or measurement file, a URL, or
            ``owner/repo path``.
        notes : str
            Text under the block's table. A new block gets it as is; an existing block
            gets it appended after a blank line, unless its notes already hold it as
            whole paragraphs (the same note given with each row is written once).

        Returns
        -------
        Entry
            The entry as written.

        Raises
        ------
        InputError
            If ``entry_id`` is not a str, ``row`` is not an :class:`EvidenceRow`, the
            source type is neither,
            ``notes`` is not a str, or ``source`` is empty: evidence recorded from now on
            names where it comes from.
        CatalogError
            If ``entry_id`` is unknown, the tree's ``index.md`` was not written by a
            knowledge tree, or a FIFO, socket, device or folder stands at one of the
            entry's paths or at ``index.md``.
        """
        require_entry_id(entry_id)
        _require(row, EvidenceRow, "row")
        kind = to_enum(SourceType, source_type, "source_type")
        require_str(notes, "notes", "notes (str), empty for none")
        if not isinstance(source, str) or not source.strip():
            raise InputError(
                expected(
                    "a source: an experiment path or measurement file, a URL, or owner/repo path",
                    repr(source),
                    where="source",
                )
            )
        self._check_index_is_ours()
        make_root(self.root)
        with locked(self.root):
            path, current = self._find(entry_id)
            blocks = list(current.evidence)
            same = [i for i, b in enumerate(blocks) if b.source_type is kind and b.source == source]
            if same:
                block = blocks[same[-1]]
                merged_notes = (
                    block.notes
                    if _has_paragraphs(block.notes, notes)
                    else "\n\n".join(filter(None, (block.notes, notes)))
                )
                blocks[same[-1]] = attrs.evolve(block, rows=(*block.rows, row), notes=merged_notes)
            else:
                blocks.append(Evidence(source_type=kind, source=source, rows=(row,), notes=notes))
            updated = attrs.evolve(current, evidence=tuple(blocks))
            self._write(updated, path)
            return updated

    def record_interaction(self, entry_id: str, interaction: Interaction) -> Entry:
        """Add (or replace, for the same linked id) an interaction of an entry.

        Parameters
        ----------
        entry_id : str
            The entry to change, in this tree or (with ``with_builtin``) a built-in one,
            which is then written into this tree.
        interaction : Interaction
            The link to add; one the entry has to the same target id is replaced.

        Returns
        -------
        Entry
            The entry as written.

        Raises
        ------
        InputError
            If ``entry_id`` is not a str or ``interaction`` is not an :class:`Interaction`.
        CatalogError
            If ``entry_id`` is unknown, the interaction's target is neither in the tree,
            a built-in (with ``with_builtin``) nor the entry itself, the tree's
            ``index.md`` was not written by a knowledge tree, or a FIFO, socket, device
            or folder stands at one of the entry's paths or at ``index.md``.
        """
        require_entry_id(entry_id)
        _require(interaction, Interaction, "interaction")
        self._check_index_is_ours()
        make_root(self.root)
        with locked(self.root):
            path, current = self._find(entry_id)
            kept = tuple(i for i in current.interactions if i.target != interaction.target)
            updated = attrs.evolve(current, interactions=(*kept, interaction))
            self._check_links(updated)
            self._write(updated, path)
            return updated

    def flip(self, entry_id: str, *, reason: str, to: Kind | str | None = None) -> Entry:
        """Turn an optimization into an anti-pattern, or back, moving its file.

        The file moves between ``optimizations/`` and ``anti-patterns/`` of the same
        scope: the new file is written first, then the old one removed, under the lock.

        Parameters
        ----------
        entry_id : str
            The entry to flip, in this tree or (with ``with_builtin``) a built-in one,
            which is then written into this tree.
        reason : str
            What confuted the entry; appended to its Generalization after a
            ``Reclassified from <kind> to <kind>:`` prefix.
        to : Kind or str, optional
            The kind the entry is to become (``"optimization"`` or ``"anti-pattern"``).
            Give it when several writers may flip one entry: a flip toggles, so two
            writers that both saw an optimization regress would otherwise turn it into an
            anti-pattern and straight back. ``None`` toggles.

        Returns
        -------
        Entry
            The flipped entry as written.

        Raises
        ------
        InputError
            If ``entry_id`` is not a str, ``reason`` is empty or ``to`` is not a kind.
        CatalogError
            If the entry already is of kind ``to`` (another writer flipped it first), a
            file already exists where the flipped entry would go, a FIFO, socket, device
            or folder stands at one of the entry's paths or at ``index.md``, or
            ``entry_id`` is unknown; nothing is written.
        """
        require_entry_id(entry_id)
        if not isinstance(reason, str) or not reason.strip():
            raise InputError(expected("a reason for the flip", repr(reason), where="reason"))
        wanted = None if to is None else to_enum(Kind, to, "to")
        self._check_index_is_ours()
        make_root(self.root)
        with locked(self.root):
            path, current = self._find(entry_id)
            if wanted is not None and current.kind is wanted:
                raise CatalogError(
                    expected(
                        f"'{entry_id}' of kind {wanted.flipped.value} to flip",
                        f"already an {wanted.value} (flipped by another writer?)",
                    )
                )
            kind = current.kind.flipped
            note = flip_note_prefix(current.kind, kind) + reason.strip()
            updated = attrs.evolve(
                current, kind=kind, generalization=f"{current.generalization}\n\n{note}"
            )
            target = entry_path(self.root, updated.id, updated.kind, updated.scope, now=path)
            if target.exists():
                raise CatalogError(expected(f"no file at {target}", "an existing file"))
            atomic_write_text(target, render_entry(updated))
            if path is not None:
                path.unlink()
            self._index_after(target)
            return updated
