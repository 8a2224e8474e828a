"""Safe file writes shared by every module that writes what users keep.

Writes go to a temporary file in the same directory and are renamed over the target, so
a reader sees the old or the new content, never half of one. Read-modify-write cycles hold
an exclusive advisory lock on a sibling ``.lock`` file, so concurrent writers (several
agents updating one knowledge tree) serialize instead of losing each other's updates.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kernelopt._errors import FormatError, InputError, expected

__all__ = ["atomic_write_text", "locked", "read_text", "temp_file_target"]

try:  # POSIX advisory locks; Windows falls back to msvcrt below.
    import fcntl
except ImportError:  # pragma: no cover - exercised only on Windows
    fcntl = None  # type: ignore[assignment]


# What `atomic_write_text` names its temp file beside ``name``: ``.name.<8 chars>.tmp``.
_TEMP_PREFIX, _TEMP_SUFFIX = ".", ".tmp"
_TEMP_NAME = re.compile(r"^\.(?P<name>[^/]+)\.\w{8}\.tmp$")


def atomic_write_text(path: str | os.PathLike[str], text: str, *, exclusive: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, creating parent directories.

    Parameters
    ----------
    path : path-like
        The file to write; replaced in one rename. A symlink is followed: the file it
        points to is replaced and the link stays (as :func:`locked` locks that file).
    exclusive : bool, default False
        Write only where no file is: of two exclusive writes started together, one
        writes and the other raises ``FileExistsError``, never one replacing the other.
        Keyword-only.

    Raises
    ------
    InputError
        When ``path`` is a directory, or its folder cannot be created or written.
    FileExistsError
        With ``exclusive``, when a file is already there.
    """
    # Renaming over a link would replace the link, not the file the user keeps, and a
    # writer holding the lock of the real file would then lose this update.
    target = Path(os.path.realpath(path))
    if target.is_dir():
        raise InputError(expected("a file path to write", f"{path}, a directory"))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(
            expected("a folder that can be created", f"{target.parent}: {error.strerror}")
        ) from None
    # mkstemp creates the file 0600; the result keeps the mode of the file it replaces,
    # or the one a plain open() would have given it, so shared trees stay readable.
    mode = target.stat().st_mode & 0o7777 if target.is_file() else 0o666 & ~_umask()
    try:
        fd, tmp = tempfile.mkstemp(
            dir=target.parent, prefix=f"{_TEMP_PREFIX}{target.name}.", suffix=_TEMP_SUFFIX
        )
    except OSError as error:
        raise InputError(
            expected("a folder kernelopt may write in", f"{target.parent}: {error.strerror}")
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if exclusive:
            _link_new(tmp, target)
        else:
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _link_new(tmp: str, target: Path) -> None:
    """Give the written ``tmp`` the name ``target`` only where no file is, then drop
    ``tmp``: a hard link is refused where a file already is, an atomic rename is not."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise
    except OSError:
        # A file system without hard links: checked again, then renamed into place.
        if target.exists():
            raise FileExistsError(errno.EEXIST, "File exists", str(target)) from None
        os.replace(tmp, target)
    else:
        os.unlink(tmp)


def temp_file_target(path: str | os.PathLike[str]) -> Path | None:
    """The file a temp file of :func:`atomic_write_text` was written for, or None.

    Parameters
    ----------
    path : path-like
        Any file; a leftover temp file is one a writer killed before its rename left.

    Returns
    -------
    Path or None
        The target beside it, or None when ``path`` is not named as such a temp file.
    """
    found = _TEMP_NAME.match(Path(path).name)
    return None if found is None else Path(path).with_name(found.group("name"))


def read_text(path: str | os.PathLike[str], *, what: str = "a text file") -> str:
    """The UTF-8 text of ``path``, line endings as written.

    A file that starts with a UTF-16 byte-order mark (PowerShell's ``>`` writes one) is
    read as UTF-16, without the mark; a UTF-8 mark is kept for the readers to skip.

    Raises
    ------
    InputError
        When there is no file at ``path`` (``what`` names what was expected).
    FormatError
        When the bytes are not UTF-8 (or UTF-16 after its mark), naming the file and the
        offset.
    """
    target = Path(path)
    if not target.is_file():
        raise InputError(expected(what, f"no file at {os.fspath(path)}"))
    data = target.read_bytes()
    encoding = "utf-16" if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "utf-8"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        raise FormatError(
            expected(
                "UTF-8 text" if encoding == "utf-8" else "UTF-16 text after its byte-order mark",
                f"a byte that is not ({error.reason} at byte {error.start})",
            ),
            path=target,
        ) from None


def _umask() -> int:
    """The process's umask (read without changing it where /proc allows)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)  # no /proc: set and restore at once
    os.umask(mask)
    return mask


@contextlib.contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock named after ``path`` (``<path>.lock``) for the block.

    The lock file is left in place: removing it would let a second writer lock a fresh
    inode while a first still holds the old one. The path is resolved first, so writers
    that reach one tree through a symlink or ``..`` take the same lock.

    Raises
    ------
    InputError
        When the lock file cannot be created or opened (a folder of that name, no
        permission); nothing has been written then.
    """
    lock_path = Path(f"{Path(path).resolve()}.lock")
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a+b")  # noqa: SIM115 - closed by the with below
    except OSError as error:
        # A folder, or a file this user may not open, where the lock belongs: nothing has
        # been read or written yet, so refusing here loses nothing.
        raise InputError(
            expected("a lock file kernelopt may open", f"{lock_path}: {error.strerror}")
        ) from None
    with handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        else:  # pragma: no cover - Windows
            import msvcrt

            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
