"""``append_rows`` refuses, before writing, a file whose last line is part of a row (a run
stopped while it wrote): it appended after it, the cut line ended in the middle of the
file, and every reader refused the file from then on."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import kernelopt.bench.records as records
from kernelopt._errors import FormatError
from kernelopt.bench import BenchRow, append_rows, read_rows

FIRST = BenchRow(op="o", impl="a", median=1.0)
SECOND = BenchRow(op="o", impl="b", median=2.0)
THIRD = BenchRow(op="o", impl="c", median=3.0)


def cut_file(tmp_path: Path) -> tuple[Path, bytes]:
    """Two whole rows, then the first half of a third with no newline."""
    path = tmp_path / "rows.jsonl"
    append_rows(path, [FIRST, SECOND])
    whole = path.read_bytes()
    probe = tmp_path / "probe.jsonl"
    append_rows(probe, [THIRD])
    line = probe.read_bytes()
    path.write_bytes(whole + line[: len(line) // 2])
    return path, path.read_bytes()


def test_an_append_after_a_cut_line_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    path, before = cut_file(tmp_path)
    with pytest.raises(FormatError) as caught:
        append_rows(path, [THIRD])
    error = caught.value
    assert (error.path, error.line) == (str(path), 3)
    message = str(error)
    assert message.startswith(
        f"{path}:3: Expected a whole row as the last line to append after, got a line that "
        "is not one (Expected a JSON object, got "
    )
    assert "Remove that line (the rows above it are whole) and append again" in message
    assert path.read_bytes() == before


def test_with_the_cut_line_removed_the_append_goes_on(tmp_path: Path) -> None:
    path, before = cut_file(tmp_path)
    with pytest.raises(FormatError):
        append_rows(path, [THIRD])
    path.write_bytes(before[: before.rindex(b"\n") + 1])  # the fix the message names
    append_rows(path, [THIRD])
    assert read_rows(path) == [FIRST, SECOND, THIRD]


def test_a_line_cut_inside_a_character_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    append_rows(path, [FIRST])
    line = '{"op": "o", "note": "µ'.encode()
    path.write_bytes(path.read_bytes() + line[:-1])  # the first of the two bytes of µ
    before = path.read_bytes()
    with pytest.raises(FormatError, match=r":2: Expected a whole row as the last line"):
        append_rows(path, [SECOND])
    assert path.read_bytes() == before


def test_a_whole_last_row_without_its_newline_still_takes_rows(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    append_rows(path, [FIRST, SECOND])
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    append_rows(path, [THIRD])
    assert read_rows(path) == [FIRST, SECOND, THIRD]


def test_blank_lines_after_a_cut_line_do_not_hide_it(tmp_path: Path) -> None:
    path, before = cut_file(tmp_path)
    path.write_bytes(before + b"\n\n  \r\n")
    with pytest.raises(FormatError, match=r":3: Expected a whole row as the last line"):
        append_rows(path, [THIRD])
    # Blank lines after a whole row are what read_rows skips: the append goes on.
    path.write_bytes(before[: before.rindex(b"\n") + 1] + b"\n\n  \r\n")
    append_rows(path, [THIRD])
    assert read_rows(path) == [FIRST, SECOND, THIRD]


def test_a_cut_line_after_a_byte_order_mark_is_named_line_1(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"op": "o", "impl')
    with pytest.raises(FormatError, match=r":1: Expected a whole row as the last line"):
        append_rows(path, [FIRST])
    path.write_bytes(b"\xef\xbb\xbf")
    append_rows(path, [FIRST])
    assert read_rows(path) == [FIRST]


def test_an_append_reads_the_tail_of_a_large_file_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Appends are made one batch at a time to files of many rows: the check reads back
    # from the end as far as the last line starts, never the whole file.
    path = tmp_path / "rows.jsonl"
    append_rows(path, [FIRST] * 2_000)
    size = path.stat().st_size
    read: list[int] = []
    real_read = io.FileIO.read

    class CountingFileIO(io.FileIO):
        def read(self, size: int = -1, /) -> bytes:
            data = real_read(self, size)
            read.append(len(data))
            return data

    def counting_open(file: Path, mode: str, buffering: int) -> io.FileIO:
        assert buffering == 0  # an unbuffered file is a FileIO
        return CountingFileIO(file, mode.replace("b", ""))

    monkeypatch.setattr(records, "open", counting_open, raising=False)
    append_rows(path, [SECOND])
    # One read back from the end, and the last byte (is there a final newline?).
    assert 0 < sum(read) <= records._TAIL_BYTES + 1 < size
    monkeypatch.undo()
    assert read_rows(path)[-2:] == [FIRST, SECOND]


def test_a_last_row_longer_than_one_read_back_is_found_whole(tmp_path: Path) -> None:
    # A row that keeps its samples is longer than one read from the end.
    path = tmp_path / "rows.jsonl"
    samples = tuple(float(i) for i in range(30_000))
    long = BenchRow(op="o", impl="a", median=1.0, n=len(samples), samples=samples)
    append_rows(path, [FIRST, long])
    assert len(path.read_bytes().splitlines()[-1]) > records._TAIL_BYTES
    append_rows(path, [SECOND])
    assert read_rows(path) == [FIRST, long, SECOND]
    data = path.read_bytes()
    path.write_bytes(data + data.splitlines()[-2][:-10])
    with pytest.raises(FormatError, match=r":4: Expected a whole row as the last line"):
        append_rows(path, [THIRD])
