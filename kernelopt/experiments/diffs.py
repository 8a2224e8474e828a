"""Unified diffs read as text: the files a diff changes, its hunks, and replaying them.

Logs often snapshot an experiment as a change against the kernel it started from
(``exp_14/tile_rows_32.diff``) instead of a full copy of the kernel. :func:`parse_diff`
reads ``diff -u`` and ``git diff`` output (``.patch`` files from ``git format-patch``
too: the message before the first file is skipped) into one :class:`FileDiff` per file
changed. :func:`apply_diff` replays a file's hunks on a base text the way ``patch`` does
without fuzz, and returns None when the base is not one the diff was made against.

Nothing is run: no ``patch``, no ``git apply``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

import attrs

from kernelopt._errors import FormatError, InputError, expected
from kernelopt.experiments._validators import check_instance

__all__ = ["FileDiff", "Hunk", "apply_diff", "blob_id", "parse_diff"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_INDEX = re.compile(r"^index ([0-9a-f]{7,64})\.\.([0-9a-f]{7,64})\b")
_NULL = "/dev/null"


def _strs(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _hunks(value: Iterable[Hunk]) -> tuple[Hunk, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class Hunk:
    """One ``@@ -a,b +c,d @@`` block of a unified diff.

    Parameters
    ----------
    old_start, old_count : int
        The first line (1-based) and number of lines of the block in the old file.
    new_start, new_count : int
        The same in the new file.
    lines : tuple of str
        The block's lines, each with its marker: ``" "`` context, ``"-"`` removed,
        ``"+"`` added (``\\ No newline at end of file`` notes are dropped).
    line : int
        The 1-based line of the ``@@`` header in the diff.
    """

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...] = attrs.field(converter=_strs)
    line: int = 0

    @property
    def old(self) -> tuple[str, ...]:
        """The block as it reads in the old file (context and removed lines)."""
        return tuple(line[1:] for line in self.lines if line[:1] in (" ", "-"))

    @property
    def new(self) -> tuple[str, ...]:
        """The block as it reads in the new file (context and added lines)."""
        return tuple(line[1:] for line in self.lines if line[:1] in (" ", "+"))


@attrs.frozen(kw_only=True)
class FileDiff:
    """The change a diff makes to one file.

    Parameters
    ----------
    old_path, new_path : str or None
        The file before and after, as the diff names them (git's ``a/``, ``b/`` prefixes
        removed); ``old_path`` is None for a file the diff creates, ``new_path`` None for
        one it deletes.
    hunks : tuple of Hunk
        The changed blocks, in file order.
    line : int
        The 1-based line of the diff where this file's section starts.
    old_id, new_id : str
        The abbreviated git blob ids of git's ``index`` line (``""`` without one): they
        name the exact file contents the diff goes from and to.
    """

    old_path: str | None
    new_path: str | None
    hunks: tuple[Hunk, ...] = attrs.field(converter=_hunks)
    line: int = 0
    old_id: str = ""
    new_id: str = ""

    @property
    def path(self) -> str:
        """The file the diff changes: the new path, or the old one for a deletion."""
        return self.new_path or self.old_path or ""

    @property
    def added(self) -> tuple[str, ...]:
        """Every added line, without its ``+``."""
        return tuple(line[1:] for hunk in self.hunks for line in hunk.lines if line[:1] == "+")

    @property
    def removed(self) -> tuple[str, ...]:
        """Every removed line, without its ``-``."""
        return tuple(line[1:] for hunk in self.hunks for line in hunk.lines if line[:1] == "-")


def blob_id(text: str) -> str:
    """The git blob id (SHA-1, hex) of ``text`` encoded as UTF-8, to match ``index`` lines."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _header_path(raw: str) -> str | None:
    """The path of a ``---``/``+++`` line: without the timestamp ``diff -u`` appends after a
    tab, without git's quotes; None for ``/dev/null``."""
    name = raw.split("\t", 1)[0].strip()
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1]
    return None if name == _NULL else name


def _strip_git_prefixes(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    # Only when both sides carry them (or one is /dev/null): a plain ``diff -u`` of
    # ``a/k.py`` against ``a/k2.py`` keeps its folders.
    if (old is None or old.startswith("a/")) and (new is None or new.startswith("b/")):
        return (old[2:] if old else None), (new[2:] if new else None)
    return old, new


def _error(what: str, got: str, line: int, path: str | None) -> FormatError:
    return FormatError(expected(what, got), path=path, line=line)


def _hunk(lines: Sequence[str], start: int, path: str | None) -> tuple[Hunk, int]:
    """The hunk whose header is ``lines[start]``, and the index of the line after it."""
    header = lines[start]
    match = _HUNK.match(header)
    if match is None:
        raise _error("a hunk header '@@ -a,b +c,d @@'", repr(header[:80]), start + 1, path)
    old_start, new_start = int(match.group(1)), int(match.group(3))
    old_count = int(match.group(2)) if match.group(2) is not None else 1
    new_count = int(match.group(4)) if match.group(4) is not None else 1
    old_left, new_left = old_count, new_count
    body: list[str] = []
    index = start + 1
    # The header's counts say where the hunk ends; a diff cut short or edited by hand
    # that breaks them is not replayed (``patch`` rejects it too).
    while old_left > 0 or new_left > 0:
        if index >= len(lines):
            raise _error(
                f"{old_count} old and {new_count} new lines in the hunk",
                f"the end of the diff with {old_left} old and {new_left} new still missing",
                start + 1,
                path,
            )
        text = lines[index]
        marker = text[:1]
        if marker == "\\":
            index += 1
            continue
        if marker in (" ", ""):
            # An empty line is a context line whose leading space an editor stripped.
            old_left, new_left = old_left - 1, new_left - 1
            body.append(" " + text[1:])
        elif marker == "-":
            old_left -= 1
            body.append(text)
        elif marker == "+":
            new_left -= 1
            body.append(text)
        else:
            raise _error(
                "a hunk line starting with ' ', '-' or '+'", repr(text[:80]), index + 1, path
            )
        if old_left < 0 or new_left < 0:
            raise _error(
                f"{old_count} old and {new_count} new lines as the header counts",
                "more",
                start + 1,
                path,
            )
        index += 1
    if index < len(lines) and lines[index].startswith("\\"):
        index += 1  # "\ No newline at end of file" after the last line
    hunk = Hunk(
        old_start=old_start,
        old_count=old_count,
        new_start=new_start,
        new_count=new_count,
        lines=body,
        line=start + 1,
    )
    return hunk, index


@attrs.define
class _Section:
    """A file's section while it is read."""

    old_path: str | None
    new_path: str | None
    line: int
    old_id: str
    new_id: str
    hunks: list[Hunk] = attrs.field(factory=list)

    def done(self) -> FileDiff:
        old, new = _strip_git_prefixes(self.old_path, self.new_path)
        return FileDiff(
            old_path=old,
            new_path=new,
            hunks=self.hunks,
            line=self.line,
            old_id=self.old_id,
            new_id=self.new_id,
        )


def parse_diff(text: str, *, path: str | None = None) -> tuple[FileDiff, ...]:
    """The files ``text`` (a unified diff) changes, with their hunks.

    Lines outside file sections (a commit message, git's extended headers, ``Binary
    files … differ``) are skipped; files changed without text hunks (a mode change, a
    binary file) are left out.

    Parameters
    ----------
    text : str
        The diff, as read from the log; a leading byte-order mark (an editor's, kept by
        ``Path.read_text()``) is no part of its first line.
    path : str, optional
        Where it was read, for error messages.

    Returns
    -------
    tuple of FileDiff
        One per file with at least one hunk, in the diff's order.

    Raises
    ------
    InputError
        When ``text`` is not a str, or ``path`` neither None nor a str.
    FormatError
        When ``text`` holds no hunk, a hunk comes before any ``---``/``+++`` header, or a
        hunk is malformed (bad header, stray line, fewer or more lines than it counts).
    """
    check_instance(text, str, "the diff as a str", "text")
    if path is not None:
        check_instance(path, str, "None or a str", "path")
    # A mark before "--- a/k.py" would hide the first file's header.
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # the end of the last line, not an empty context line
    sections: list[_Section] = []
    git_line = 0
    old_id = new_id = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("diff --git "):
            git_line, old_id, new_id = index + 1, "", ""
        elif (match := _INDEX.match(line)) is not None:
            old_id, new_id = match.group(1), match.group(2)
        elif (
            line.startswith("--- ")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ ")
        ):
            sections.append(
                _Section(
                    old_path=_header_path(line[4:]),
                    new_path=_header_path(lines[index + 1][4:]),
                    line=git_line or index + 1,
                    old_id=old_id,
                    new_id=new_id,
                )
            )
            git_line, old_id, new_id = 0, "", ""
            index += 2
            continue
        elif line.startswith("@@"):
            if not sections:
                raise _error(
                    "a '---'/'+++' file header before the first hunk", "none", index + 1, path
                )
            hunk, index = _hunk(lines, index, path)
            sections[-1].hunks.append(hunk)
            continue
        index += 1
    files = tuple(section.done() for section in sections if section.hunks)
    if not files:
        raise _error("a unified diff with at least one '@@' hunk", "none", 1, path)
    return files


def _matches(lines: Sequence[str], at: int, block: Sequence[str]) -> bool:
    # Trailing blanks are not compared: editors and mail strip them from diffs.
    return all(lines[at + k].rstrip() == want.rstrip() for k, want in enumerate(block))


def _place(
    lines: Sequence[str], block: Sequence[str], expected_at: int, floor: int, exact: bool
) -> int | None:
    """Where ``block`` sits in ``lines``: at ``expected_at``, or (unless ``exact``) the
    nearest place after ``floor``, searching outwards like ``patch``."""
    last = len(lines) - len(block)
    if floor <= expected_at <= last and _matches(lines, expected_at, block):
        return expected_at
    if exact or not block:
        return None
    # Only distances that reach a line of ``lines``: a header naming line 10**20 would
    # otherwise be searched from there, one line at a time.
    nearest = max(1, expected_at - last, floor - expected_at)
    for distance in range(nearest, max(expected_at - floor, last - expected_at) + 1):
        for at in (expected_at - distance, expected_at + distance):
            if floor <= at <= last and _matches(lines, at, block):
                return at
    return None


def apply_diff(base: str, file: FileDiff, *, exact: bool = False) -> str | None:
    """``base`` with ``file``'s hunks replayed, or None when a hunk does not fit.

    A hunk fits where its context and removed lines read exactly as in ``base`` (trailing
    blanks aside): at the line its header names, shifted by what earlier hunks added or
    removed, or, unless ``exact``, at the nearest place that matches. Fitting every hunk
    is what makes ``base`` a file the diff was made against.

    Parameters
    ----------
    base : str
        The text to change.
    file : FileDiff
        One file's change, from :func:`parse_diff`.
    exact : bool
        Only accept each hunk at the line its header names.

    Returns
    -------
    str or None
        The changed text (ending in a newline when ``base`` did, and starting with the
        byte-order mark ``base`` starts with, which no hunk line holds), or None.

    Raises
    ------
    InputError
        When ``base`` is not a str, ``file`` not a :class:`FileDiff` or ``exact`` not a
        bool (``exact="no"`` would read as True).
    """
    check_instance(base, str, "the base text as a str", "base")
    check_instance(file, FileDiff, "a FileDiff (from parse_diff)", "file")
    if not isinstance(exact, bool):
        raise InputError(expected("a bool", repr(exact), where="exact"))
    mark = "\ufeff" if base.startswith("\ufeff") else ""
    base = base[len(mark) :]
    lines = base.split("\n") if base else []
    ends_with_newline = base.endswith("\n")
    if ends_with_newline:
        lines.pop()
    out: list[str] = []
    cursor = 0
    shift = 0
    for hunk in file.hunks:
        block = hunk.old
        # A hunk that removes nothing and has no context inserts after line old_start.
        stated = hunk.old_start - 1 if hunk.old_count else hunk.old_start
        at = _place(lines, block, stated + shift, cursor, exact)
        if at is None:
            return None
        shift = at - stated
        out += lines[cursor:at]
        out += hunk.new
        cursor = at + len(block)
    out += lines[cursor:]
    # An emptied file has no last line to end; a created one ends like text files do.
    return mark + "\n".join(out) + ("\n" if out and (ends_with_newline or not base) else "")
