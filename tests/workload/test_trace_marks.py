"""The JSONL trace reader tells a file's encoding with the helper the other readers use:
one test of byte-order marks, plus the trace's own ``{`` beside zero bytes."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from kernelopt._fileio import _mark_of, encoding_of, read_text_and_encoding
from kernelopt.workload import read_trace
from kernelopt.workload.jsonl import utf8_head

_LINE = '{"op":"softmax","args":{"x":{"shape":[4,1],"dtype":"float32"},"dim":1}}\n'

# (how the file is written, the mark it starts with, the encoding the helper names)
_WRITTEN = [
    ("utf-8", b"", "utf-8"),
    ("utf-16-le", b"", "utf-16-le"),
    ("utf-16-be", b"", "utf-16-be"),
    ("utf-32-le", b"", "utf-32-le"),
    ("utf-32-be", b"", "utf-32-be"),
    ("utf-16-le", codecs.BOM_UTF16_LE, "utf-16-le"),
    ("utf-16-be", codecs.BOM_UTF16_BE, "utf-16-be"),
    ("utf-32-le", codecs.BOM_UTF32_LE, "utf-32-le"),
    ("utf-32-be", codecs.BOM_UTF32_BE, "utf-32-be"),
]


@pytest.mark.parametrize(
    ("codec", "mark", "encoding"),
    _WRITTEN,
    ids=[f"{codec}{'-mark' if mark else ''}" for codec, mark, _ in _WRITTEN],
)
def test_a_trace_is_told_by_its_mark_or_its_first_brace(
    tmp_path: Path, codec: str, mark: bytes, encoding: str
) -> None:
    data = mark + (_LINE * 3).encode(codec)
    assert _mark_of(data, first="{") == (mark, encoding)
    assert utf8_head(data) == (_LINE * 3).encode("utf-8")
    path = tmp_path / "calls.jsonl"
    path.write_bytes(data)
    trace = read_trace(path)
    assert (trace.records, trace.calls, trace.skipped) == (3, 3, 0)


@pytest.mark.parametrize(
    "head",
    [b"\x00" * 64 + b"\n", b"\x00\x00\x00\x00{", b"[\x00"],
    ids=["zero-filled-line", "zeros-before-brace", "bracket"],
)
def test_zero_bytes_without_the_first_brace_leave_utf8(head: bytes) -> None:
    # A block of NULs a crash left at the start is one bad line, not a UTF-16 file.
    assert _mark_of(head, first="{") == (b"", "utf-8")
    assert utf8_head(head) == head


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_other_files_need_their_mark(tmp_path: Path, codec: str) -> None:
    # A profile or a devlog starts with no known character: without a mark it stays UTF-8.
    data = "{}".encode(codec)
    assert _mark_of(data) == (b"", "utf-8")
    path = tmp_path / "notes.md"
    path.write_bytes(data)
    assert encoding_of(path) == ("utf-8", "")
    assert read_text_and_encoding(path) == (data.decode("utf-8"), "utf-8")
