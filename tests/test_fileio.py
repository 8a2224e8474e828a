"""Safe writes: a link is followed, a path that cannot be written is a clear error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernelopt import FormatError, InputError
from kernelopt._fileio import (
    atomic_write_bytes,
    atomic_write_text,
    encoding_of,
    file_in_the_way,
    locked,
    read_text,
    read_text_and_encoding,
)


def test_a_symlink_is_followed_and_kept(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "devlog.md"
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "devlog.md"
    link.symlink_to(Path("real") / "devlog.md")
    atomic_write_text(link, "new\n")
    # The update reaches the file the user keeps; renaming over the link replaced the link.
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new\n"


def test_writers_through_a_link_and_the_real_path_keep_each_others_lines(tmp_path: Path) -> None:
    real = tmp_path / "rows.md"
    real.write_text("", encoding="utf-8")
    link = tmp_path / "alias.md"
    link.symlink_to(real)
    for i, path in enumerate([real, link, real, link]):
        with locked(path):
            text = path.read_text(encoding="utf-8")
            atomic_write_text(path, text + f"row {i}\n")
    assert real.read_text(encoding="utf-8").splitlines() == [f"row {i}" for i in range(4)]


def test_a_path_that_cannot_be_written_is_an_input_error(tmp_path: Path) -> None:
    blocker = tmp_path / "notes.md"
    blocker.write_text("a file, not a folder\n", encoding="utf-8")
    with pytest.raises(InputError, match="Expected a folder that can be created"):
        atomic_write_text(blocker / "plan.md", "x")
    with pytest.raises(InputError, match="Expected a file path to write"):
        atomic_write_text(tmp_path, "x")
    assert blocker.read_text(encoding="utf-8") == "a file, not a folder\n"


def test_a_file_where_a_folder_goes_is_named(tmp_path: Path) -> None:
    # "File exists" named neither the file in the way nor why a folder was wanted there.
    blocker = tmp_path / "notes.md"
    blocker.write_text("a file, not a folder\n", encoding="utf-8")
    at = re.escape(str(blocker))
    with pytest.raises(InputError, match=rf"created, got {at}, a file$"):
        atomic_write_text(blocker / "plan.md", "x")
    with pytest.raises(InputError, match=rf"got {at}/deep/er, under the file {at}$"):
        atomic_write_bytes(blocker / "deep" / "er" / "plan.md", b"x")
    with pytest.raises(InputError, match=rf"created, got {at}, a file$"), locked(blocker / "s.md"):
        pass
    assert file_in_the_way(blocker / "deep" / "plan.md") == blocker
    assert file_in_the_way(tmp_path / "new" / "plan.md") is None
    assert blocker.read_text(encoding="utf-8") == "a file, not a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]


def test_a_folder_read_as_a_file_is_called_a_directory(tmp_path: Path) -> None:
    at = re.escape(str(tmp_path))
    with pytest.raises(InputError, match=rf"^Expected a plan, got a directory at {at}$"):
        read_text(tmp_path, what="a plan")
    missing = tmp_path / "missing.md"
    at = re.escape(str(missing))
    with pytest.raises(InputError, match=rf"^Expected a plan, got no file at {at}$"):
        read_text(missing, what="a plan")
    # Path("") is the working directory, which the user did not name.
    with pytest.raises(InputError, match=r"^Expected a plan, got an empty path$"):
        read_text("", what="a plan")


def test_a_number_field_refuses_an_integer_beyond_the_float_range() -> None:
    import attrs

    from kernelopt._checks import finite

    @attrs.frozen(kw_only=True)
    class Row:
        median: float = attrs.field(validator=finite(minimum=0))

    with pytest.raises(InputError, match="median: Expected a finite number >= 0"):
        Row(median=10**400)


def test_a_lock_that_cannot_be_opened_is_an_input_error(tmp_path: Path) -> None:
    from kernelopt._fileio import locked

    (tmp_path / "tree.lock").mkdir()
    refused = r"Expected a lock file kernelopt may open, got .*tree\.lock"
    with pytest.raises(InputError, match=refused), locked(tmp_path / "tree"):
        pass


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_text_saved_as_utf16_with_its_mark_reads(tmp_path: Path, encoding: str) -> None:
    # PowerShell's `>` and some Windows editors save UTF-16 with a byte-order mark.
    path = tmp_path / "handoff.md"
    text = "# Optimization Task — v3\r\n\r\n- Latency: 74 µs\r\n"
    path.write_bytes("\ufeff".encode(encoding) + text.encode(encoding))
    assert read_text(path) == text


def test_a_utf16_file_cut_inside_a_character_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "handoff.md"
    path.write_bytes("\ufeff# Task\n".encode("utf-16-le") + b"\x3d\xd8")  # half a pair
    with pytest.raises(FormatError, match="Expected UTF-16 text after its byte-order mark"):
        read_text(path)


_MARKS = {
    "utf-16-le": b"\xff\xfe",
    "utf-16-be": b"\xfe\xff",
    "utf-32-le": b"\xff\xfe\x00\x00",
    "utf-32-be": b"\x00\x00\xfe\xff",
}


@pytest.mark.parametrize("encoding", sorted(_MARKS))
def test_a_file_rewritten_keeps_the_encoding_and_mark_it_was_read_with(
    tmp_path: Path, encoding: str
) -> None:
    path = tmp_path / "summary.md"
    path.write_bytes(_MARKS[encoding] + "| Exp |\r\n| 1 µs |\r\n".encode(encoding))
    text, found = read_text_and_encoding(path)
    assert (text, found) == ("| Exp |\r\n| 1 µs |\r\n", encoding)
    atomic_write_text(path, text + "| 2 µs |\r\n", encoding=found)
    expected_bytes = _MARKS[encoding] + "| Exp |\r\n| 1 µs |\r\n| 2 µs |\r\n".encode(encoding)
    assert path.read_bytes() == expected_bytes


def test_utf8_is_read_as_utf8_and_new_files_are_utf8(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_bytes("\ufeff1 µs\n".encode())
    # A UTF-8 mark stays in the text, so writing the text back keeps it.
    assert read_text_and_encoding(path) == ("\ufeff1 µs\n", "utf-8")
    atomic_write_text(tmp_path / "new.md", "1 µs\n")
    assert (tmp_path / "new.md").read_bytes() == "1 µs\n".encode()


def test_an_encoding_the_writer_does_not_know_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="Expected an encoding read_text_and_encoding names"):
        atomic_write_text(tmp_path / "x.md", "x", encoding="latin-1")
    assert not (tmp_path / "x.md").exists()


@pytest.mark.parametrize("encoding", ["utf-32-le", "utf-32-be"])
def test_text_saved_as_utf32_with_its_mark_reads(tmp_path: Path, encoding: str) -> None:
    # UTF-32-LE's mark starts with UTF-16-LE's: read as UTF-16, every character had a NUL.
    path = tmp_path / "handoff.md"
    path.write_bytes("\ufeff- Latency: 74 µs\n".encode(encoding))
    assert read_text(path) == "- Latency: 74 µs\n"


@pytest.mark.parametrize("encoding", sorted(_MARKS))
def test_a_file_replaced_whole_keeps_the_encoding_of_its_mark(
    tmp_path: Path, encoding: str
) -> None:
    # Only the mark is read: text after it that does not decode is replaced all the same.
    path = tmp_path / "result.md"
    path.write_bytes(_MARKS[encoding] + "# Experiment 1: x\n".encode(encoding) + b"\xff")
    assert encoding_of(path) == (encoding, "")
    atomic_write_text(path, "# Experiment 1: y\n", encoding=encoding_of(path)[0])
    assert read_text_and_encoding(path) == ("# Experiment 1: y\n", encoding)


def test_a_utf8_file_replaced_whole_keeps_its_mark(tmp_path: Path) -> None:
    path = tmp_path / "result.md"
    path.write_bytes(b"\xef\xbb\xbf# x\n")
    assert encoding_of(path) == ("utf-8", "\ufeff")
    path.write_bytes(b"# x \xe9\n")  # Latin-1, no mark: replaced as UTF-8
    assert encoding_of(path) == ("utf-8", "")
    assert encoding_of(tmp_path / "new.md") == ("utf-8", "")
    with pytest.raises(InputError, match="Expected a file kernelopt may read"):
        encoding_of(tmp_path)


def test_bytes_put_back_are_written_as_they_were(tmp_path: Path) -> None:
    path = tmp_path / "result.md"
    data = _MARKS["utf-16-be"] + "1 µs\r\n".encode("utf-16-be")
    atomic_write_bytes(path, data)
    assert path.read_bytes() == data
    with pytest.raises(InputError, match="Expected a file path to write"):
        atomic_write_bytes(tmp_path, data)


def test_text_that_cannot_be_encoded_is_an_input_error(tmp_path: Path) -> None:
    # A lone surrogate (from a file name read with surrogateescape) ended in a bare
    # UnicodeEncodeError; nothing was written, and the message named no input.
    with pytest.raises(InputError, match=r"Expected text utf-8 can encode, got '\\ud800' at"):
        atomic_write_text(tmp_path / "plan.md", "# Plan \ud800\n")
    assert list(tmp_path.iterdir()) == []


def test_a_fifo_is_refused_not_replaced_by_a_file(tmp_path: Path) -> None:
    import os
    import stat

    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo)
    link = tmp_path / "plan.md"
    link.symlink_to(fifo.name)
    at = re.escape(str(fifo))
    with pytest.raises(
        InputError, match=rf"^Expected a regular file to write, got a FIFO at {at}$"
    ):
        atomic_write_text(fifo, "x")
    with pytest.raises(InputError, match=r"^Expected a regular file to write, got a FIFO at "):
        atomic_write_bytes(link, b"x")
    with pytest.raises(InputError, match=rf"^Expected a plan, got a FIFO at {at}$"):
        read_text(fifo, what="a plan")
    # The rename replaced the FIFO itself, and left no temp file either way.
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.fifo", "plan.md"]


def test_the_encoding_of_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "result.md"
    os.mkfifo(fifo)
    outcome: list[BaseException | tuple[str, str]] = []

    def look() -> None:
        try:
            outcome.append(encoding_of(fifo))
        except BaseException as error:  # handed to the test below
            outcome.append(error)

    reader = threading.Thread(target=look, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():
        # Opening the FIFO blocked: a writer end lets the reader go before failing.
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=10)
        pytest.fail("encoding_of waited on a FIFO")
    (error,) = outcome
    assert isinstance(error, InputError)
    assert str(error) == f"Expected a regular file to write, got a FIFO at {fifo}"


def test_a_character_device_is_refused_before_anything_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os
    import tempfile

    def no_write(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a write was started: {args}")

    # Every step that could put a file where the device is fails the test instead.
    for module, name in [(tempfile, "mkstemp"), (os, "replace"), (os, "rename"), (os, "link")]:
        monkeypatch.setattr(module, name, no_write)
    with pytest.raises(
        InputError, match=r"^Expected a regular file to write, got a character device at /dev/null$"
    ):
        atomic_write_text(os.devnull, "plan\n")
    with pytest.raises(InputError, match=r"got a character device at /dev/null$"):
        encoding_of(os.devnull)
