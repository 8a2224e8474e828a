"""Safe, bounded access to the files of a log directory.

Logs come from users' repositories: they can be huge, binary, not UTF-8, full of symbolic
links or very deep. Everything here is bounded (bytes per file, files per walk, depth) and
every file skipped or cut is recorded as an :class:`~kernelopt.experiments.log.Unread`
instead of raising. Nothing here imports or runs what it reads.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from pathlib import Path, PurePosixPath

import attrs

from kernelopt._errors import expected
from kernelopt._fileio import _mark_of, encoding_name
from kernelopt.experiments._validators import integer
from kernelopt.experiments.log import Unread

__all__ = ["LogFiles", "ReadLimits", "TextFile", "repository_path", "suffix_of"]

# Files kernelopt may read: logs, tables and histories, and kernel sources.
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".jsonl", ".json", ".tsv", ".csv"})
SOURCE_SUFFIXES = frozenset(
    {".py", ".cu", ".cuh", ".cl", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".triton", ".mojo"}
)
# Kernel snapshots written as a change against the kernel they started from.
DIFF_SUFFIXES = frozenset({".diff", ".patch"})
# What an experiment folder snapshots a kernel as: a full source or a diff of one.
SNAPSHOT_SUFFIXES = SOURCE_SUFFIXES | DIFF_SUFFIXES
# Folders that never hold an optimization log and can be enormous.
_SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", "site-packages", "build", "dist", ".git", ".venv", "venv"}
)


# What marks the top of the repository a log lives in: named paths are not looked for above.
_PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "CMakeLists.txt")
_MAX_LEVELS_UP = 8


def repository_path(root: Path, named: str) -> str | None:
    """Where a file the log names from its repository's root lies, relative to ``root``.

    A log kept in ``docs/kernels/x/`` names its kernel as ``src/kernels/x.py``, from the
    repository's root. The folders above ``root`` are tried in turn, up to the first that
    marks a project root (``.git``, ``pyproject.toml``, ...) and never past it.

    Parameters
    ----------
    root : Path
        The log directory.
    named : str
        The path as the log writes it (``/``-separated, relative).

    Returns
    -------
    str or None
        ``named`` relative to ``root`` (``"../../src/kernels/x.py"``); None when the path is
        absolute, climbs with ``..``, or is not a regular file in the repository; when
        ``root`` is itself a project root (its own walk already looked there); and when no
        project root lies above ``root`` (nothing outside a repository is read).
    """
    pure = PurePosixPath(named)
    if pure.is_absolute() or not pure.parts or ".." in pure.parts:
        return None
    real_root = Path(os.path.realpath(root))
    if _is_project_root(real_root):
        return None
    # The folders between the log and its repository's root; none outside a repository.
    above: list[Path] = []
    here = real_root
    while not above or not _is_project_root(above[-1]):
        if here.parent == here or len(above) == _MAX_LEVELS_UP:
            return None
        here = here.parent
        above.append(here)
    for folder in above:
        candidate = folder.joinpath(*pure.parts)
        real = os.path.realpath(candidate)
        # A link out of the repository is not followed, as in the log's own walk.
        if real.startswith(str(above[-1]) + os.sep) and os.path.isfile(real):
            return os.path.relpath(candidate, real_root).replace(os.sep, "/")
    return None


def _is_project_root(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in _PROJECT_MARKERS)


def suffix_of(path: str) -> str:
    """The lower-case suffix of ``path``'s file name (``".py"``), or ``""`` without one."""
    return os.path.splitext(path.rsplit("/", 1)[-1])[1].lower()


@attrs.frozen(kw_only=True)
class ReadLimits:
    """Bounds on what one ``read_log`` call reads.

    Parameters
    ----------
    max_file_bytes : int, default 2097152
        Bytes read per file (2 MiB by default), at least 1; a longer file is read up to
        the last whole line within the limit (all of it when it has one line) and
        reported in :attr:`ExperimentLog.unread`.
    max_files : int, default 20000
        Directory entries visited in the walk, at least 1; the walk stops there and
        reports it (a folder holding more is not listed past the limit).
    max_depth : int, default 8
        Folder depth below the root that is walked, at least 0 (0 reads the root's own
        files only); deeper folders are reported (the first 20).

    Raises
    ------
    InputError
        When a bound is not an int (a bool is refused) or is below its minimum.
    """

    max_file_bytes: int = attrs.field(default=2 * 1024 * 1024, validator=integer(minimum=1))
    max_files: int = attrs.field(default=20_000, validator=integer(minimum=1))
    max_depth: int = attrs.field(default=8, validator=integer(minimum=0))


@attrs.frozen(kw_only=True)
class TextFile:
    """The decoded text of one file and its lines (1-based through :meth:`line`)."""

    path: str
    text: str
    lines: tuple[str, ...]
    truncated: bool = False

    @property
    def name(self) -> str:
        """The file name without folders."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        """The file name without its last suffix."""
        return self.name.rsplit(".", 1)[0] if "." in self.name else self.name


def _looks_utf16(data: bytes) -> bool:
    """Whether ``data`` reads like UTF-16 text without a mark: one byte of every two NUL."""
    head = data[:512]
    half = len(head) // 2
    return half > 0 and max(head[0::2].count(0), head[1::2].count(0)) >= 0.9 * half


_NOT_REGULAR = expected("a regular file", "a pipe, socket or device") + "; not read"


def _nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def _utf8_name(name: str) -> bool:
    # Names that are not UTF-8 arrive with their bytes as lone surrogates.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _readable(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _mib(size: int) -> str:
    """``size`` bytes as people read it: MiB from 0.1 MiB, else KiB, else bytes (a small
    limit would read "the first 0.0 MiB of 0.0 MiB")."""
    if size >= 0.1 * 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    if size >= 1024:
        return f"{size / 1024:.1f} KiB"
    return "1 byte" if size == 1 else f"{size} bytes"


class LogFiles:
    """The readable files under a log root, found once, read lazily and at most once.

    Parameters
    ----------
    root : Path
        The log directory (must exist; the caller checks).
    limits : ReadLimits
        The bounds of this walk.
    """

    def __init__(self, root: Path, limits: ReadLimits) -> None:
        self.root = root
        self.limits = limits
        self.unread: list[Unread] = []
        self.paths: list[str] = []
        self._cache: dict[str, TextFile | None] = {}
        self._by_folder: dict[str, list[str]] | None = None
        self._real_root = os.path.realpath(root)
        self._walk()

    # --- walking -------------------------------------------------------------------------

    def _walk(self) -> None:
        visited = 0
        deep_reported = 0
        stack: list[tuple[str, int]] = [("", 0)]
        while stack:
            rel_dir, depth = stack.pop()
            absolute = os.path.join(self.root, rel_dir) if rel_dir else str(self.root)
            try:
                with os.scandir(absolute) as scan:
                    # No more than the walk may still visit (and one to see it stop): a
                    # folder of millions of files is not listed whole first.
                    room = self.limits.max_files - visited + 1
                    entries = sorted(itertools.islice(scan, room), key=lambda e: e.name)
            except OSError as error:
                self.unread.append(
                    Unread(path=rel_dir or ".", reason=f"cannot list: {error.strerror or error}")
                )
                continue
            subdirs: list[str] = []
            for entry in entries:
                visited += 1
                if visited > self.limits.max_files:
                    self.unread.append(
                        Unread(
                            path=rel_dir or ".",
                            reason=f"stopped after {self.limits.max_files} entries; the rest was "
                            f"not read",
                        )
                    )
                    return
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                if entry.name.startswith(".") or entry.name in _SKIP_DIRS:
                    continue
                if not _utf8_name(entry.name):
                    # Such a name cannot be printed or written to a report: name it as
                    # readably as it goes.
                    self.unread.append(
                        Unread(
                            path=_readable(rel),
                            reason=expected("a UTF-8 name", "bytes that are not") + "; not read",
                        )
                    )
                    continue
                if entry.is_symlink():
                    self._symlink(entry, rel)
                    continue
                try:
                    mode = entry.stat(follow_symlinks=False).st_mode
                except OSError:
                    continue
                if stat.S_ISDIR(mode) and self._wanted(entry.name):
                    # A folder named as a log file (``summary.md/``, ``exp_2/result.md/``)
                    # would otherwise vanish from the read without a word.
                    self.unread.append(
                        Unread(path=rel, reason=expected("a file", "a folder") + "; not read")
                    )
                elif stat.S_ISDIR(mode):
                    subdirs.append(rel)
                elif stat.S_ISREG(mode) and self._wanted(entry.name):
                    self.paths.append(rel)
                elif self._wanted(entry.name):
                    # A pipe or a device named as a log file: reading one could block or
                    # never end.
                    self.unread.append(Unread(path=rel, reason=_NOT_REGULAR))
            for sub in reversed(subdirs):
                if depth + 1 > self.limits.max_depth:
                    if deep_reported < 20:
                        self.unread.append(
                            Unread(
                                path=sub,
                                reason=f"deeper than {self.limits.max_depth} folders; not read",
                            )
                        )
                    deep_reported += 1
                    continue
                stack.append((sub, depth + 1))
        self.paths.sort()

    def _symlink(self, entry: os.DirEntry[str], rel: str) -> None:
        target = os.path.realpath(entry.path)
        inside = target == self._real_root or target.startswith(self._real_root + os.sep)
        if not inside:
            if self._wanted(entry.name) or os.path.isdir(entry.path):
                self.unread.append(
                    Unread(
                        path=rel, reason="symbolic link to outside the log directory; not followed"
                    )
                )
            return
        # Links inside the tree: files are read, folders are not walked twice (no loops).
        if os.path.isfile(target) and self._wanted(entry.name):
            self.paths.append(rel)
        elif self._wanted(entry.name) and not os.path.isdir(target):
            # A link named as a log file that resolves to nothing: say so, as for a file
            # that cannot be read, instead of dropping it unseen.
            try:
                os.stat(entry.path)
                why = "not a regular file"
            except OSError as error:
                why = (
                    "a loop of symbolic links"
                    if error.errno == errno.ELOOP
                    else "its target is not there"
                    if error.errno == errno.ENOENT
                    else error.strerror or str(error)
                )
            self.unread.append(Unread(path=rel, reason=f"symbolic link: {why}; not followed"))

    @staticmethod
    def _wanted(name: str) -> bool:
        suffix = suffix_of(name)
        return suffix in TEXT_SUFFIXES or suffix in SNAPSHOT_SUFFIXES

    # --- reading -------------------------------------------------------------------------

    def read(self, rel: str) -> TextFile | None:
        """Return the text of ``rel`` (relative to root), or None with an unread entry."""
        if rel in self._cache:
            return self._cache[rel]
        result = self._read(rel)
        self._cache[rel] = result
        return result

    def _read(self, rel: str) -> TextFile | None:
        path = os.path.join(self.root, rel)
        limit = self.limits.max_file_bytes
        try:
            # Not blocking, and checked once open: a file swapped for a pipe after the
            # walk would otherwise wait for a writer forever.
            with open(path, "rb", opener=_nonblocking) as handle:
                status = os.fstat(handle.fileno())
                if not stat.S_ISREG(status.st_mode):
                    self.unread.append(Unread(path=rel, reason=_NOT_REGULAR))
                    return None
                size = status.st_size
                data = handle.read(limit + 1)
        except OSError as error:
            self.unread.append(Unread(path=rel, reason=f"cannot read: {error.strerror or error}"))
            return None
        # Told by the byte-order mark as every kernelopt reader and writer tells it, so
        # that a file append_lesson keeps UTF-16 is read as UTF-16 here too.
        mark, encoding = _mark_of(data)
        if not data.strip():
            self.unread.append(Unread(path=rel, reason="empty file"))
            return None
        if encoding == "utf-8" and b"\x00" in data[:8192]:
            guess = "; UTF-16 without a byte-order mark?" if _looks_utf16(data) else ""
            self.unread.append(Unread(path=rel, reason=f"binary file (NUL bytes{guess}); not text"))
            return None
        truncated = len(data) > limit
        if truncated:
            # Whole code units only (a mark is one unit of its encoding): a UTF-16 file cut
            # inside one would shift every character after it.
            unit = len(mark) or 1
            data = data[: limit - limit % unit]
            self.unread.append(
                Unread(
                    path=rel,
                    reason=f"read the first {_mib(limit)} of {_mib(size)}; the rest was not read",
                )
            )
        body = data[len(mark) :]
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError as error:
            # A cut at the byte limit can split one multi-byte character: drop that tail.
            if truncated and error.start >= len(body) - 4:
                text = body[: error.start].decode(encoding, errors="replace")
            else:
                # One byte in another encoding (a latin-1 name in a table cell) must not
                # cost the whole file: the bad bytes become U+FFFD and the rest is read.
                text = body.decode(encoding, errors="replace")
                at = error.start + len(mark)  # an offset in the file, its mark counted
                self.unread.append(
                    Unread(
                        path=rel,
                        reason=f"not all {encoding_name(encoding)} (byte 0x{data[at]:02x} at "
                        f"offset {at}); undecodable bytes read as U+FFFD, the rest as written",
                    )
                )
        text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        if truncated and "\n" in text:
            # The line the limit cut through is not all there: "123.5 us" cut after
            # "12" would read as 12.
            text = text[: text.rindex("\n") + 1]
        if not text.strip():  # a byte-order mark and spaces, in whatever encoding
            self.unread.append(Unread(path=rel, reason="empty file"))
            return None
        return TextFile(path=rel, text=text, lines=tuple(text.split("\n")), truncated=truncated)

    def under(self, folder: str) -> list[str]:
        """Paths inside ``folder`` (relative to root), sorted."""
        folder = folder.rstrip("/")
        if not folder:
            return list(self.paths)
        if self._by_folder is None:
            # Every ancestor folder of every path, built once: lookups stay O(1) for logs
            # with thousands of experiment folders.
            index: dict[str, list[str]] = {}
            for path in self.paths:
                parts = path.split("/")[:-1]
                for depth in range(1, len(parts) + 1):
                    index.setdefault("/".join(parts[:depth]), []).append(path)
            self._by_folder = index
        return list(self._by_folder.get(folder, ()))
