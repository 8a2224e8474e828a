"""Errors name where they happened: the stream a failed write went to, the line of a text
parsed without a file."""

from __future__ import annotations

import errno
import io

import pytest

from kernelopt._errors import FormatError
from kernelopt.catalog import Entry, parse_entry
from kernelopt.cli import main


class _FullDisk(io.StringIO):
    """A stream behind ``> out.txt`` on a disk with no space left."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_failed_write_to_standard_output_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdout", _FullDisk())
    assert main(["catalog", "search", "kv", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    # Said once: the last flush fails again, after the command's own error was reported.
    assert err.count("got standard output: No space left on device") == 1
    assert "got a file" not in err


class _FullOnFlush(io.StringIO):
    """A stream that takes writes into its buffer and fails when they go to the disk."""

    def flush(self) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_output_lost_at_the_last_flush_is_not_a_success(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdout", _FullOnFlush())
    assert main(["catalog", "search", "kv", "--limit", "1"]) == 2
    assert "kernelopt: error: Expected a file kernelopt can read or write, got standard output" in (
        capsys.readouterr().err
    )


def test_a_parse_error_in_text_without_a_file_names_the_line() -> None:
    with pytest.raises(FormatError) as raised:
        parse_entry("# T\n\nnothing\n")
    assert str(raised.value).startswith("line 3 [metadata]: ")
    assert raised.value.line == 3


def test_a_json_error_in_text_without_a_file_names_the_line() -> None:
    with pytest.raises(FormatError) as raised:
        Entry.from_json('{\n"id": }')
    assert str(raised.value).startswith("line 2: Expected JSON text")


def test_a_file_and_line_read_as_before() -> None:
    error = FormatError("Expected x, got y", path="a.md", line=4, section="s")
    assert str(error) == "a.md:4 [s]: Expected x, got y"
    assert str(FormatError("Expected x, got y")) == "Expected x, got y"
