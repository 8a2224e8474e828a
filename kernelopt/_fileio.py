"""Safe file writes shared by every module that writes what users keep.

Writes go to a temporary file in the same directory and are renamed over the target, so
a reader sees the old or the new content, never half of one. Read-modify-write cycles hold
an exclusive advisory lock on a sibling ``.lock`` file, so concurrent writers (several
agents updating one knowledge tree) serialize instead of losing each other's updates.
A file read with :func:`read_text_and_encoding` and written back with the encoding it
names keeps its encoding and byte-order mark (a UTF-16 file saved by PowerShell's ``>``
stays UTF-16), as does a file replaced whole in the encoding :func:`encoding_of` names;
new files are UTF-8.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from kernelopt._errors import FormatError, InputError, expected

__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "check_encodable",
    "encoding_name",
    "encoding_of",
    "file_in_the_way",
    "locked",
    "read_text",
    "read_text_and_encoding",
    "refuse_link_loop",
    "require_file",
    "special_kind",
    "temp_file_target",
    "text_of_bytes",
    "unmade_folder",
]

try:  # POSIX advisory locks; Windows falls back to msvcrt below.
    import fcntl
except ImportError:  # pragma: no cover - exercised only on Windows
    fcntl = None  # type: ignore[assignment]


# What `atomic_write_text` names its temp file beside ``name``: ``.name.<8 chars>.tmp``.
_TEMP_PREFIX, _TEMP_SUFFIX = ".", ".tmp"
_TEMP_NAME = re.compile(r"^\.(?P<name>[^/]+)\.\w{8}\.tmp$")

# The byte-order marks read_text decodes by, with the codec of the text after each. The
# UTF-32 marks come first: UTF-32-LE's starts with UTF-16-LE's.
_MARKS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_MARK_OF = {encoding: mark for mark, encoding in _MARKS}
# The encodings :func:`_mark_of` tells without a mark, by a known first character.
_UNMARKED = ("utf-32-le", "utf-32-be", "utf-16-le", "utf-16-be")


def atomic_write_text(
    path: str | os.PathLike[str], text: str, *, exclusive: bool = False, encoding: str = "utf-8"
) -> None:
    """Write ``text`` to ``path`` atomically, creating parent directories.

    Parameters
    ----------
    path : path-like
        The file to write; replaced in one rename. A symlink is followed: the file it
        points to is replaced and the link stays (as :func:`locked` locks that file).
    exclusive : bool, default False
        Write only where no file is: of two exclusive writes started together, one
        writes and the other raises ``FileExistsError``, never one replacing the other.
        Keyword-only.
    encoding : str, default "utf-8"
        How the bytes are written: ``"utf-8"``, or one of the encodings after a byte-order
        mark that :func:`read_text_and_encoding` names (``"utf-16-le"``, ``"utf-16-be"``,
        ``"utf-32-le"``, ``"utf-32-be"``), written after that mark, so that a file read
        and rewritten keeps its encoding. Keyword-only.

    Raises
    ------
    InputError
        When ``path`` is a directory, a FIFO, a device or a socket (a rename would replace
        the node itself), its folder cannot be created or written,
        ``encoding`` is none of those above, or ``text`` holds a character it cannot
        encode (a lone surrogate); nothing is written then.
    FileExistsError
        With ``exclusive``, when a file is already there.
    """
    _atomic_write(path, _encoded(text, encoding), exclusive=exclusive)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, as :func:`atomic_write_text` writes text.

    For bytes read from a file earlier and put back as they were (a write undone), whatever
    their encoding.

    Parameters
    ----------
    path : path-like
        The file to write; replaced in one rename, a symlink followed.
    data : bytes
        The file's whole content.

    Raises
    ------
    InputError
        When ``path`` is a directory, a FIFO, a device or a socket, or its folder cannot
        be created or written.
    """
    _atomic_write(path, data, exclusive=False)


def _atomic_write(path: str | os.PathLike[str], data: bytes, *, exclusive: bool) -> None:
    """Write ``data`` to a temp file beside ``path`` and rename it over ``path``."""
    # Renaming over a link would replace the link, not the file the user keeps, and a
    # writer holding the lock of the real file would then lose this update.
    target = Path(os.path.realpath(path))
    if target.is_dir():
        raise InputError(expected("a file path to write", f"{path}, a directory"))
    # A rename over a FIFO or a device replaces the node itself: as root, a plan written
    # to /dev/null would leave a plain file where every program expects the device.
    other = special_kind(target)
    if other is not None:
        raise InputError(expected("a regular file to write", f"{other} at {path}"))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise unmade_folder(target, error) from None
    # mkstemp creates the file 0600; the result keeps the mode of the file it replaces,
    # or the one a plain open() would have given it, so shared trees stay readable.
    mode = target.stat().st_mode & 0o7777 if target.is_file() else 0o666 & ~_umask()
    try:
        fd, tmp = tempfile.mkstemp(
            dir=target.parent, prefix=f"{_TEMP_PREFIX}{target.name}.", suffix=_TEMP_SUFFIX
        )
    except OSError as error:
        raise _no_file_made(target, error) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
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


def _no_file_made(target: Path, error: OSError) -> InputError:
    """The error of a folder where no file for ``target`` could be created (the temp file
    written first, to be renamed to ``target``): ``got <folder>: <the system's reason>``.

    The folder is there (it was just made or found), so the system's "No such file or
    directory", which ``/proc`` gives for any new file, reads as if it were not: that
    reason is said in words, naming the file that cannot be written.
    """
    reason = error.strerror or type(error).__name__
    if error.errno == errno.ENOENT and target.parent.is_dir():
        reason = f"no file can be created there, so {target} cannot be written ({reason})"
    return InputError(expected("a folder kernelopt may write in", f"{target.parent}: {reason}"))


# What each file type that is neither a regular file nor a folder is called in errors.
_SPECIAL_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """What stands at ``path`` when it is neither a regular file nor a folder (``"a FIFO"``,
    ``"a character device"``, ...), links followed; None otherwise, or where nothing is."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # nothing there, or a name the system refuses
        return None
    return next((name for test, name in _SPECIAL_KINDS if test(mode)), None)


def unmade_folder(
    target: Path, error: OSError, *, what: str = "a folder that can be created"
) -> InputError:
    """The error of a folder for ``target`` that could not be created (``what`` was
    expected): where a file stands on the way, that file is named ("File exists" names
    neither it nor the folder)."""
    blocker = file_in_the_way(target)
    if blocker is None:
        got = f"{target.parent}: {error.strerror}"
        base = _nearest_folder(target.parent)
        if error.errno == errno.ENOENT and base is not None:
            # The folders above it are there: "No such file or directory" meant that no
            # folder can be made in ``base`` (/proc, /sys), not that a path is missing.
            got = f"{target.parent}: no folder can be created in {base} ({error.strerror})"
    elif blocker == target.parent:
        got = f"{target.parent}, a file"
    else:
        got = f"{target.parent}, under the file {blocker}"
    return InputError(expected(what, got))


def _nearest_folder(path: Path) -> Path | None:
    """The nearest folder above ``path`` (``path`` itself excluded) that exists, or None
    where one cannot be looked at."""
    for parent in path.parents:
        try:
            if parent.is_dir():
                return parent
        except (OSError, ValueError):  # a name the system refuses: nothing to tell
            return None
    return None


def _encoded(text: str, encoding: str) -> bytes:
    """``text`` as ``encoding`` writes it: after its byte-order mark, unless UTF-8 (whose
    mark, where a file has one, is part of the text read from it)."""
    if encoding != "utf-8" and encoding not in _MARK_OF:
        raise InputError(
            expected(
                "an encoding read_text_and_encoding names (utf-8, " + ", ".join(_MARK_OF) + ")",
                repr(encoding),
                where="encoding",
            )
        )
    return _MARK_OF.get(encoding, b"") + check_encodable(text, encoding)


def check_encodable(text: str, encoding: str = "utf-8", *, where: str | None = None) -> bytes:
    """``text`` encoded in ``encoding``, or an :class:`InputError` naming the first
    character it cannot hold.

    Parameters
    ----------
    text : str
        The text to write.
    encoding : str, default "utf-8"
        The encoding it is written in.
    where : str, optional
        The argument ``text`` came from (``"text"``), named in front of the message; a
        caller that knows it checks before anything else, where the index still counts
        in the argument and not in the file it ends up in. Keyword-only.

    Returns
    -------
    bytes
        The encoded text, without a byte-order mark.

    Raises
    ------
    InputError
        ``text: Expected text utf-8 can encode, got '\\ud800' at character 1``: only a
        lone surrogate (a file name read with surrogateescape) has no encoding.
    """
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as error:
        bad = error.object[error.start : error.end]
        raise InputError(
            expected(
                f"text {encoding} can encode", f"{bad!r} at character {error.start}", where=where
            )
        ) from None


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


def file_in_the_way(path: str | os.PathLike[str]) -> Path | None:
    """The file that stands where a folder above ``path`` should be, or None.

    ``notes.txt/plan.md`` cannot be written while ``notes.txt`` is a file: the folders a
    write would create fail with "File exists" or "Not a directory", which names neither
    the file nor the folder wanted there.

    Parameters
    ----------
    path : path-like
        A file about to be written.

    Returns
    -------
    Path or None
        The nearest existing ancestor of ``path`` when it is not a folder (a file, or a
        link to one); None when that ancestor is a folder or cannot be looked at.
    """
    for parent in Path(path).parents:
        try:
            # An ancestor under a file reads as missing (ENOTDIR): go on up to the file.
            if parent.exists():
                return None if parent.is_dir() else parent
        except (OSError, ValueError):  # a name the system refuses: nothing to tell
            return None
    return None


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
    """The text of ``path``, line endings as written.

    As :func:`read_text_and_encoding`, without the encoding.
    """
    return read_text_and_encoding(path, what=what)[0]


def read_text_and_encoding(
    path: str | os.PathLike[str], *, what: str = "a text file"
) -> tuple[str, str]:
    """The text of ``path``, line endings as written, and the encoding it was read in.

    A file that starts with a UTF-16 or UTF-32 byte-order mark (PowerShell's ``>`` writes
    a UTF-16 one) is read in that encoding, without the mark; any other file as UTF-8,
    whose mark, if any, is kept in the text for the readers to skip.

    Parameters
    ----------
    path : path-like
        The file to read.
    what : str, default "a text file"
        What was expected at ``path``, named when no file is there. Keyword-only.

    Returns
    -------
    tuple of (str, str)
        The text, and its encoding as :func:`atomic_write_text` takes it back:
        ``"utf-8"``, ``"utf-16-le"``, ``"utf-16-be"``, ``"utf-32-le"`` or ``"utf-32-be"``.

    Raises
    ------
    InputError
        When there is no file at ``path`` (``got a directory at …`` for a folder, ``got a
        FIFO at …`` for a FIFO, ``got an empty path`` for ``""``).
    FormatError
        When the bytes are not UTF-8 (or the encoding of the mark they start with), naming
        the file and the offset.
    """
    require_file(path, what)
    target = Path(path)
    data = target.read_bytes()
    mark, encoding = _mark_of(data)
    try:
        return data[len(mark) :].decode(encoding), encoding
    except UnicodeDecodeError as error:
        # The byte and its offset in the file, as the log readers name them.
        at = error.start + len(mark)
        raise FormatError(
            expected(
                "UTF-8 text"
                if encoding == "utf-8"
                else f"{encoding_name(encoding)} text after its byte-order mark",
                f"a byte that is not (byte 0x{data[at]:02x} at offset {at}: {error.reason})",
            ),
            path=target,
        ) from None


def require_file(path: str | os.PathLike[str], what: str, *, where: str | None = None) -> None:
    """Raise ``InputError`` (``Expected <what>, got no file at <path>``) unless a regular
    file is at ``path``.

    What stands there instead is named: a folder (``got a directory at``), since "no file"
    would send the user looking for a path that is there, a FIFO or device, or nothing at
    all for an empty path (``Path("")`` is the working directory, which no caller meant).

    Parameters
    ----------
    path : path-like
        The file expected.
    what : str
        What was expected there, in the message's words.
    where : str, optional
        The argument or field named before the message. Keyword-only.
    """
    # None, a number or bytes would fail inside os.fspath or Path with nothing named.
    if not isinstance(path, str | os.PathLike):
        raise InputError(expected(f"{what} (a str or path-like)", type(path).__name__, where=where))
    if not os.fspath(path):
        raise InputError(expected(what, "an empty path", where=where))
    target = Path(path)
    if not target.is_file():
        found = "a directory" if target.is_dir() else special_kind(target) or "no file"
        raise InputError(expected(what, f"{found} at {os.fspath(path)}", where=where))


def _mark_of(data: bytes, *, first: str | None = None) -> tuple[bytes, str]:
    """The byte-order mark ``data`` starts with and the encoding of the text after it;
    ``(b"", "utf-8")`` without a UTF-16 or UTF-32 mark.

    ``first`` is an ASCII character the text is known to start with (a JSONL trace's
    ``{``): without a mark, ``data`` is then UTF-32 or UTF-16 (``(b"", "utf-16-le")``)
    where it starts with that character in one of them, its zero bytes beside it. Zero
    bytes alone decide nothing: a first line of NULs (a block a crash left zero-filled)
    keeps the file UTF-8.
    """
    found = next(((m, e) for m, e in _MARKS if data.startswith(m)), None)
    if found is not None:
        return found
    if first is not None:
        # UTF-32 first: "{" in UTF-16-LE is a prefix of "{" in UTF-32-LE.
        for encoding in _UNMARKED:
            if data.startswith(first.encode(encoding)):
                return b"", encoding
    return b"", "utf-8"


def encoding_name(encoding: str) -> str:
    """The name messages give ``encoding``, one :func:`_mark_of` tells: ``"UTF-8"``,
    ``"UTF-16"`` or ``"UTF-32"``, as editors name them, without the byte order."""
    return encoding[:6].upper()


def text_of_bytes(data: bytes) -> str:
    """``data`` decoded by its byte-order mark as :func:`read_text_and_encoding` decodes it,
    but tolerantly: bytes that do not decode read as U+FFFD, and a UTF-8 mark is dropped.

    For text read only to be searched (a verdict line), where one bad byte must not cost
    the rest of the file.
    """
    mark, encoding = _mark_of(data)
    return data[len(mark) :].decode(encoding, "replace").lstrip("\ufeff")


def encoding_of(path: str | os.PathLike[str]) -> tuple[str, str]:
    """How a file written anew over ``path`` keeps the encoding of the file there.

    Read from the byte-order mark alone, as :func:`read_text_and_encoding` reads it: a file
    replaced whole needs its encoding, not its text, which may not even decode.

    Parameters
    ----------
    path : path-like
        The file about to be replaced; it need not exist.

    Returns
    -------
    tuple of (str, str)
        The encoding to pass to :func:`atomic_write_text`, and the text to start the new
        content with: U+FEFF where the file is UTF-8 after a UTF-8 mark (that mark is
        part of the text, as :func:`read_text_and_encoding` reads it), else ``""``.
        ``("utf-8", "")`` where no file is there.

    Raises
    ------
    InputError
        When ``path`` is a folder, a FIFO or a device (which no write may replace), or
        cannot be read.
    """
    # Opening a FIFO waits for a writer that may never come.
    other = special_kind(path)
    if other is not None:
        raise InputError(expected("a regular file to write", f"{other} at {os.fspath(path)}"))
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(codecs.BOM_UTF32_LE))
    except FileNotFoundError:
        return "utf-8", ""
    except OSError as error:
        raise InputError(
            expected("a file kernelopt may read", f"{os.fspath(path)}: {error.strerror}")
        ) from None
    _, encoding = _mark_of(head)
    utf8_mark = encoding == "utf-8" and head.startswith(codecs.BOM_UTF8)
    return encoding, "\ufeff" if utf8_mark else ""


def _umask() -> int:
    """The process's umask (read without changing it where /proc allows)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)  # no /proc: set and restore at once
    os.umask(mask)
    return mask


def _link_loop(path: str | os.PathLike[str]) -> InputError:
    return InputError(expected("a file or a link to one", f"a loop of symbolic links at {path}"))


def refuse_link_loop(path: str | os.PathLike[str]) -> None:
    """Refuse a ``path`` that is, or passes through, a loop of symbolic links.

    Such a path is neither a file nor a missing one: ``exists()`` says False, and a
    write there fails only once it is under way.

    Raises
    ------
    InputError
        ``Expected a file or a link to one, got a loop of symbolic links at <path>``.
    """
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _link_loop(path) from None


def _resolved(path: str | os.PathLike[str]) -> Path:
    """``path`` with its links and ``..`` resolved; a loop of links refused by name.

    ``Path.resolve`` raises a bare RuntimeError on a loop up to Python 3.12 and, from 3.13,
    returns the path with the loop left in it, so the loop is looked for first.
    """
    refuse_link_loop(path)
    try:
        return Path(path).resolve()
    except RuntimeError:  # a loop made after the look above
        raise _link_loop(path) from None


@contextlib.contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock named after ``path`` (``<path>.lock``) for the block.

    The lock file is left in place: removing it would let a second writer lock a fresh
    inode while a first still holds the old one. The path is resolved first, so writers
    that reach one tree through a symlink or ``..`` take the same lock.

    Raises
    ------
    InputError
        When ``path`` (or a folder on the way to it) is a loop of symbolic links, or the
        lock file or its folder cannot be created or opened (a folder of that name, a file
        where its folder goes, no permission); nothing has been written then.
    """
    lock_path = Path(f"{_resolved(path)}.lock")
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise unmade_folder(lock_path, error) from None
    try:
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
