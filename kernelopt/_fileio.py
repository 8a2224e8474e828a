"""Safe file writes shared by every module that writes what users keep.

Writes go to a temporary file in the same directory and are renamed over the target, so
a reader sees the old or the new content, never half of one. Read-modify-write cycles hold
an exclusive advisory lock on a sibling ``.lock`` file, so concurrent writers (several
agents updating one knowledge tree) serialize instead of losing each other's updates.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kernelopt._errors import InputError, expected

__all__ = ["atomic_write_text", "locked"]

try:  # POSIX advisory locks; Windows falls back to msvcrt below.
    import fcntl
except ImportError:  # pragma: no cover - exercised only on Windows
    fcntl = None  # type: ignore[assignment]


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, creating parent directories.

    Parameters
    ----------
    path : path-like
        The file to write; replaced in one rename.
    text : str
        The full new content.
    """
    target = Path(path)
    if target.is_dir():
        raise InputError(expected("a file path to write", f"{target}, a directory"))
    target.parent.mkdir(parents=True, exist_ok=True)
    # mkstemp creates the file 0600; the result keeps the mode of the file it replaces,
    # or the one a plain open() would have given it, so shared trees stay readable.
    mode = target.stat().st_mode & 0o7777 if target.is_file() else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


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
    """
    lock_path = Path(f"{Path(path).resolve()}.lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as handle:
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
