"""The Recorder and the trace readers lose nothing silently: failed writes, odd encodings,
calls the reader would refuse, and records that cannot be read are all reported."""

from __future__ import annotations

import codecs
import errno
import json
import os
import re
import shutil
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.workload import Recorder, read_trace
from kernelopt.workload import recorder as recorder_module

# -- a failed flush keeps the calls ----------------------------------------------------------


def test_a_failed_flush_keeps_the_calls_for_the_next_one(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    path = folder / "calls.jsonl"
    recorder = Recorder(path, append=False, flush_every=10**6)
    for i in range(10):
        recorder.record("f", {"k": i})
    shutil.rmtree(folder)
    folder.write_text("")  # the folder is briefly replaced by a file
    message = f"got {path} ({folder} is a file); 10 calls kept for the next flush"
    with pytest.raises(InputError, match=rf"^path: Expected a file .*{re.escape(message)}$"):
        recorder.flush()
    folder.unlink()
    folder.mkdir()
    recorder.flush()  # the cause is gone: every call is written now
    written = [json.loads(line)["args"]["k"] for line in path.read_text().splitlines()]
    assert written == list(range(10))


class _FullDisk:
    """A file whose write stores half the text, then fails as a full disk does."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def write(self, text: str) -> int:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(text[: len(text) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_write_cut_short_is_undone_so_no_call_is_written_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text('{"op":"f","args":{"k":-1}}\n')
    recorder = Recorder(path, flush_every=10**6)
    for i in range(4):
        recorder.record("f", {"k": i})

    def full_disk(target: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        # Reads (is the last line cut?) go through; the write finds the disk full.
        return open(target, mode, *args, **kwargs) if "r" in mode else _FullDisk(path)

    monkeypatch.setattr(recorder_module, "open", full_disk, raising=False)
    with pytest.raises(InputError, match=r"\(No space left on device\); 4 calls kept"):
        recorder.flush()
    assert path.read_text() == '{"op":"f","args":{"k":-1}}\n'  # the half written is cut off
    monkeypatch.undo()
    recorder.flush()
    assert read_trace(path).calls == 5 and read_trace(path).skipped == 0


def test_a_path_where_no_file_can_be_created_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As root (where /proc and /sys pass os.access), only opening tells; the open itself is
    # made to fail here, as it does there.
    path = tmp_path / "calls.jsonl"
    real_open = os.open

    def refuse(target: Any, *args: Any, **kwargs: Any) -> int:
        if Path(target) == path:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_open(target, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(
        InputError,
        match=rf"^path: Expected a path where a file can be written, got {path} \(Permission",
    ):
        Recorder(path)


def test_the_construction_check_leaves_no_file_behind(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path)
    assert not path.exists()  # tried, then removed: a recorder that records nothing
    recorder.record("f", {"k": 1})
    recorder.close()
    assert read_trace(path).calls == 1
    Recorder(path)  # an existing file is kept as it is
    assert read_trace(path).calls == 1


# -- UTF-16 and UTF-32 traces ------------------------------------------------------------------

_LINE = '{"op":"softmax","args":{"x":{"shape":[4,1],"dtype":"float32"},"dim":1}}\r\n'


@pytest.mark.parametrize(
    "encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig", "utf-32-be"]
)
def test_a_utf16_or_utf32_trace_is_read_whole(tmp_path: Path, encoding: str) -> None:
    # PowerShell 5's `>` saves UTF-16-LE with a mark: its first call was lost, with a note
    # about bad UTF-8, and a phantom malformed line counted at the end.
    path = tmp_path / "calls.jsonl"
    path.write_bytes((_LINE * 10).encode(encoding))
    trace = read_trace(path)
    assert (trace.records, trace.calls, trace.skipped, trace.notes) == (10, 10, 0, ())


def test_a_utf16_trace_with_bad_lines_loses_only_those(tmp_path: Path) -> None:
    path = tmp_path / "calls.json"  # told by content, not by the suffix
    text = _LINE + '{"op":"f","args":{"s":"X"}}\n' + _LINE
    data = text.encode("utf-16-le").replace("X".encode("utf-16-le"), b"\x00\xd8")
    path.write_bytes(codecs.BOM_UTF16_LE + data + b"\x00")  # a lone surrogate, a cut byte
    trace = read_trace(path)
    assert (trace.format, trace.records, trace.calls, trace.skipped) == ("jsonl", 4, 2, 2)
    assert trace.notes[0].startswith("line 2: args.s: Expected a string without lone")
    assert trace.notes[1].startswith("line 4: Expected a JSON object")


def test_a_file_holding_only_a_byte_order_mark_is_as_empty_as_an_empty_one(
    tmp_path: Path,
) -> None:
    for name, data in (("empty.jsonl", b""), ("mark.jsonl", codecs.BOM_UTF8)):
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InputError, match=r"Expected a non-empty trace file, got .* \(empty\)"):
            read_trace(path)
    (tmp_path / "mark16.jsonl").write_bytes(codecs.BOM_UTF16_LE + "\r\n".encode("utf-16-le"))
    with pytest.raises(InputError, match=r"\(empty\)"):
        read_trace(tmp_path / "mark16.jsonl")


# -- what the Recorder writes, the reader reads ------------------------------------------------


class _Array:
    """A duck-typed array, as the recorder invites: anything with .shape and .dtype."""

    def __init__(self, shape: Any, dtype: Any = "float32") -> None:
        self.shape, self.dtype = shape, dtype


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (_Array((2.7, 3)), r"args\.x\.shape: Expected integer dims, got \[2\.7, 3\]"),
        (_Array((True, 3)), r"args\.x\.shape: Expected integer dims"),
        (_Array((-2, 3)), r"args\.x\.shape: Expected dims in \[0, 2\*\*40\], got \[-2, 3\]"),
        (_Array((2**41,)), r"args\.x\.shape: Expected dims in \[0, 2\*\*40\]"),
        (_Array(5), r"args\.x\.shape: Expected a shape \(a sequence of sizes\), got 5"),
        (_Array((2,), "bad\ndtype"), r"args\.x\.dtype: Expected a dtype without control"),
        ("\ud800", r"args\.x: Expected a string without lone surrogates"),
    ],
)
def test_a_call_the_reader_would_refuse_is_refused_when_recorded(
    tmp_path: Path, value: Any, message: str
) -> None:
    # Written, then skipped (or, for 2.7, cut to 2) when read: a call lost without a word.
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path)
    with pytest.raises(InputError, match=message):
        recorder.record("f", {"x": value})

    @recorder
    def launch(x: Any) -> str:
        return "ran"

    with pytest.raises(InputError, match=message):
        launch(value)
    recorder.record("f", {"x": _Array((2, 3))})
    recorder.close()
    trace = read_trace(path)
    assert (trace.calls, trace.skipped) == (1, 0)


def test_numpy_int_dims_and_argument_names_are_checked_as_the_reader_does(
    tmp_path: Path,
) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path)
    recorder.record("f", {"x": _Array((np.int64(2), 3))})
    with pytest.raises(InputError, match=r"args: Expected a non-empty argument name"):
        recorder.record("f", {"": 1})

    @recorder
    def launch(**kwargs: Any) -> None:
        return None

    with pytest.raises(InputError, match=r"args: Expected an argument name without control"):
        launch(**{"a\tb": 1})
    recorder.close()
    (group,) = read_trace(path).groups
    assert [(arg.name, arg.shape) for arg in group.call.args] == [("x", (2, 3))]


def test_a_sparse_tensor_is_recorded_without_strides(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Recorder(path, strides=("index",))
    sparse = torch.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2), check_invariants=True)
    dense = torch.zeros(2, 3).expand(4, 2, 3)
    recorder.record("gather", {"index": sparse})
    recorder.record("gather", {"index": dense})
    recorder.close()
    first, second = (json.loads(line)["args"]["index"] for line in path.read_text().splitlines())
    assert "stride" not in first  # (0, 0) from torch would read as an expanded index
    assert second["stride"] == [0, 3, 1]


# -- patch, profiler events, duplicate keys -----------------------------------------------------


def test_patching_a_missing_attribute_names_it(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "calls.jsonl")
    owner = types.SimpleNamespace(present=lambda: None)
    with (
        pytest.raises(
            InputError, match=r"^Expected an attribute of namespace\(.*\) to patch, got 'missing'$"
        ),
        recorder.patch(owner, "missing"),
    ):
        pass  # pragma: no cover - the block is never entered
    assert vars(owner) == {"present": owner.present}


def test_a_profiler_op_event_with_null_args_is_listed(tmp_path: Path) -> None:
    shaped = {
        "Input Dims": [[4, 1], []],
        "Input type": ["float", "Scalar"],
        "Concrete Inputs": ["", "1"],
    }
    base = {"ph": "X", "name": "aten::softmax", "dur": 5, "pid": 1, "tid": 1, "cat": "cpu_op"}
    events = [
        {**base, "ts": 0, "args": None},
        {**base, "ts": 10, "args": shaped},
        {**base, "ts": 20, "args": {"External id": 3}},
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = read_trace(path)
    assert (trace.records, trace.calls, trace.skipped) == (3, 1, 2)
    assert trace.notes[:2] == (
        "event 0 (aten::softmax): Expected op args with 'Input Dims' (record_shapes=True), "
        "got null",
        "event 2 (aten::softmax): Expected op args with 'Input Dims' (record_shapes=True), "
        "got no 'Input Dims' in its args",
    )


def test_a_jsonl_line_with_a_key_given_twice_is_skipped(tmp_path: Path) -> None:
    # Read as its last value before ({"op":"softmax","op":"sum"} was a sum call).
    good = '{"op":"softmax","args":{"x":{"shape":[4,8],"dtype":"float32"},"dim":1}}\n'
    lines = [
        good,
        '{"op":"softmax","op":"sum","args":{"x":{"shape":[4,8],"dtype":"float32"}}}\n',
        '{"op":"softmax","args":{"x":{"shape":[4,8],"shape":[2],"dtype":"float32"}}}\n',
        good.replace("}}\n", '},"duration_us":5,"duration_us":7}\n'),
    ]
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(lines))
    trace = read_trace(path)
    assert (trace.calls, trace.skipped, trace.ops) == (1, 3, ("softmax",))
    assert trace.notes[:3] == (
        "line 2: Expected a JSON object with each key once, got 'op' twice",
        "line 3: Expected a JSON object with each key once, got 'shape' twice",
        "line 4: Expected a JSON object with each key once, got 'duration_us' twice",
    )


def test_the_construction_check_keeps_a_dangling_link(tmp_path: Path) -> None:
    link = tmp_path / "calls.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    Recorder(link)
    assert link.is_symlink()


def test_a_zero_filled_first_line_leaves_the_file_utf8(tmp_path: Path) -> None:
    # A crash can leave a block of NULs; it is one bad line, not a UTF-16 file.
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\x00" * 64 + b'\n{"op": "f"}\n{"op": "f"}\n')
    trace = read_trace(path)
    assert (trace.records, trace.skipped, trace.calls) == (3, 1, 2)
