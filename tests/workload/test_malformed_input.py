"""Hostile and damaged input: long lines, huge numbers, deep nesting, bad events, gzip
bombs, bytes that are not UTF-8. Each reader keeps what it can read, reports the rest, and
raises only kernelopt errors."""

from __future__ import annotations

import gzip
import json
import time  # process_time: this test's CPU time, which other work on the machine does not inflate
from collections.abc import Callable
from pathlib import Path

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.workload import (
    AxisStat,
    ValueShare,
    detect_format,
    parse_profile_md,
    profile_calls,
    profile_trace,
    read_flashinfer,
    read_profile_md,
    read_trace,
    render_profile_md,
    torch_trace,
    write_profile_md,
)
from kernelopt.workload.handwritten import read_handwritten_md
from kernelopt.workload.torch_trace import load_json, trace_from_events

BIG = 10**400  # a valid JSON integer that no float holds
TABLE = "\n| b | calls |\n|---|---|\n| 1 | 5 |\n"


# --------------------------------------------------------------------------------------
# Long lines: every case took from 5 s to 25 s with patterns that rescanned the rest of the
# line from each character; read in linear time, each takes milliseconds.

LONG_LINES = {
    "one long word": "# op: x\n" + "a" * 20_000 + TABLE,
    "one long number": "# op: x\n" + "1" * 20_000 + TABLE,
    "a word with 'is' inside": "# op: x\n" + "ais" * 7_000 + TABLE,
    "an axis set to a long number": "# op: x\na = " + "1" * 20_000 + TABLE,
    "a statement with a long share": "# op: x\nb = 1 in " + "1" * 20_000 + TABLE,
    "spaces before the percent sign": "# op: x\nb = 1 in 50" + " " * 20_000 + "%" + TABLE,
    "a number and a run of spaces": "# op: x\n1" + " " * 30_000 + "x" + TABLE,
    "exponents": "# op: x\n" + "1e" * 10_000 + TABLE,
    "dotted names": "# op: x\n" + "a." * 10_000 + TABLE,
    "equal signs without digits": "# op: x\n" + "a=(" * 20_000 + TABLE,
    "percent signs": "# op: x\n" + "%" * 40_000 + TABLE,
    "spaces in a heading": "# op: a" + " " * 60_000 + "b" + TABLE,
    "stars before a table": "*" * 40_000 + TABLE,
    "spaces in an op line": "op:" + " " * 2_000 + "`x`y" + TABLE,
    "spaces before a time unit": "# op: x\n| b | calls | time |\n|---|---|---|\n| 1 | 5 | 3"
    + " " * 40_000
    + "x |\n",
    "parentheses in a header": "# op: x\n| Shape " + "(" * 60_000 + " | calls |\n|---|---|\n"
    "| 1 | 5 |\n",
    "a shape cell of open tensors": "# op: x\n| shape | calls |\n|---|---|\n| "
    + "a=(" * 20_000
    + " | 5 |\n| b=1 | 5 |\n",
}


@pytest.mark.parametrize("text", LONG_LINES.values(), ids=list(LONG_LINES))
def test_long_lines_are_read_in_linear_time(text: str) -> None:
    start = time.process_time()
    profile = read_handwritten_md(text)
    assert time.process_time() - start < 1.0
    # The table after the long line is still read (a row whose shape does not read
    # counts its calls as other).
    assert [[s.calls for s in op.shapes] for op in profile.ops] == [[5]]


def test_statements_are_still_read_beside_long_words() -> None:
    text = "# op: x\n" + "a" * 20_000 + " s_q = 1 in 50% of calls, h is always 1" + TABLE
    axes = {a.name: a for a in read_handwritten_md(text).ops[0].axes}
    assert axes["s_q"].values[0].call_share == 0.5 and axes["h"].values[0].call_share == 1.0


def test_an_exact_share_cell_full_of_markers_is_read_in_linear_time(data: Path) -> None:
    lines = render_profile_md(profile_trace(data / "mla_decode_calls.jsonl")).split("\n")
    row = next(i for i, line in enumerate(lines) if line.startswith("| 1 |"))
    cells = lines[row].split(" | ")
    cells[2] = "(p=" * 30_000
    lines[row] = " | ".join(cells)
    start = time.process_time()
    with pytest.raises(FormatError):
        parse_profile_md("\n".join(lines) + "(p=0.5)")
    parse_profile_md("\n".join(lines))
    assert time.process_time() - start < 1.0


# --------------------------------------------------------------------------------------
# Numbers beyond the float range, and NaN/infinite times.


def _jsonl(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_huge_integers_in_a_jsonl_trace_skip_their_line(tmp_path: Path) -> None:
    good = {"op": "f", "args": {"x": {"shape": [4], "dtype": "int32"}}, "duration_us": 5}
    values = {"shape": [4], "dtype": "int32", "values": {"min": 1, "max": BIG, "mean": 3}}
    path = _jsonl(
        tmp_path / "t.jsonl",
        good,
        {**good, "duration_us": BIG},
        {"op": "f", "args": {"x": values}},
        {"op": "f", "args": {"k": BIG}},
        {"op": "f", "args": {"dims": [1, -BIG]}},
        good,
    )
    trace = read_trace(path)
    assert (trace.calls, trace.skipped) == (2, 4)
    assert any(n.startswith("line 2: duration_us: Expected a duration") for n in trace.notes)
    refused = "line 3: args.x.values.max: Expected a finite number"
    assert any(n.startswith(refused) for n in trace.notes)
    assert any(n.startswith("line 4: args.k: Expected a finite number") for n in trace.notes)
    assert any(n.startswith("line 5: args.dims: Expected a list of finite") for n in trace.notes)
    assert profile_calls(trace).op().calls == 2


def test_a_huge_flashinfer_latency_skips_its_workload(tmp_path: Path) -> None:
    record = {"definition": "x", "workload": {"uuid": "u", "axes": {"a": 3}, "inputs": {}}}
    timed = {**record, "evaluation": {"performance": {"latency_ms": 1.5}}}
    huge = {**record, "evaluation": {"performance": {"latency_ms": BIG}}}
    trace = read_trace(_jsonl(tmp_path / "w.jsonl", timed, huge), format="flashinfer-bench")
    assert (trace.calls, trace.skipped) == (1, 1)
    assert any(n.startswith("line 2: latency_ms: Expected a latency in") for n in trace.notes)


def test_records_refuse_huge_integers_with_an_input_error() -> None:
    with pytest.raises(InputError, match="value: Expected a finite number"):
        ValueShare(value=BIG, call_share=1.0)
    with pytest.raises(InputError, match="min: Expected a finite number or None"):
        AxisStat(name="b", kind="shape", source="", min=BIG)
    with pytest.raises(InputError, match="call_share: Expected a number in"):
        ValueShare(value=1, call_share=BIG)


def _op(name: str, ts: object, dur: object, ext: int = 0) -> dict:
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "pid": 1,
        "tid": 1,
        "ts": ts,
        "dur": dur,
        "args": {"External id": ext, "Input Dims": [[4, 1]], "Input type": ["float"]},
    }


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("ts", float("nan")),
        ("ts", float("inf")),
        ("ts", BIG),
        ("dur", float("nan")),
        ("dur", float("inf")),
        ("dur", BIG),
        ("dur", -1),
        ("dur", "12"),
    ],
    ids=[
        "ts-nan",
        "ts-inf",
        "ts-huge",
        "dur-nan",
        "dur-inf",
        "dur-huge",
        "dur-negative",
        "dur-text",
    ],
)
def test_one_bad_profiler_event_is_skipped_and_its_neighbours_kept(field: str, bad: object) -> None:
    # Three calls of aten::mm nested in aten::linear calls around the bad event.
    events = []
    for i in range(4):
        events += [_op("aten::linear", 100 * i, 50), _op("aten::mm", 100 * i + 10, 20)]
    events[3][field] = bad  # the second aten::mm
    trace = trace_from_events({"traceEvents": events}, source="x", time="host")
    calls = {g.call.op: (g.calls, g.time_us) for g in trace.groups}
    assert calls == {"aten::linear": (4, 200.0), "aten::mm": (3, 60.0)}
    assert (trace.records, trace.skipped) == (8, 1)
    assert any(n.startswith(f"event 3 (aten::mm): {field}: Expected") for n in trace.notes)


def test_a_kernel_event_with_an_infinite_duration_is_skipped_and_counted() -> None:
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "args": {"External id": 1}}
    events = [
        _op("aten::mm", 0, 50, ext=1),
        {**kernel, "dur": 3.0},
        {**kernel, "dur": float("inf")},
        {**kernel, "dur": BIG},
    ]
    trace = trace_from_events({"traceEvents": events}, source="x")
    assert [(g.calls, g.time_us) for g in trace.groups] == [(1, 3.0)]
    assert (
        "skipped 2 kernel events whose duration is not a finite number in [0, 1e12] us"
        in trace.notes
    )


@pytest.mark.parametrize("key", ["Input type", "Concrete Inputs", "Input Strides"])
@pytest.mark.parametrize("bad", [{"0": "float"}, "float", 7], ids=["object", "text", "number"])
def test_input_lists_of_another_type_skip_the_event(key: str, bad: object) -> None:
    events = [_op("aten::mm", 0, 5), _op("aten::mm", 10, 5)]
    events[1]["args"][key] = bad
    trace = trace_from_events(events, source="x")
    assert [(g.call.op, g.calls) for g in trace.groups] == [("aten::mm", 1)]
    assert trace.skipped == 1
    assert trace.notes[0].startswith(f"event 1 (aten::mm): Expected '{key}' as a list, got ")


@pytest.mark.parametrize(
    ("where", "bad"),
    [("pid", [1]), ("tid", {"a": 1}), ("External id", [1]), ("kernel External id", {"a": 1})],
)
def test_unhashable_thread_and_correlation_ids_are_read(where: str, bad: object) -> None:
    # JSON lists and objects cannot key a dict; a trace holding one is still read.
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 3.0}
    kernel["args"] = {"External id": 1}
    events = [_op("aten::mm", 0, 50, ext=1), kernel, _op("aten::mm", 100, 50, ext=2)]
    if where in ("pid", "tid"):
        events[0][where] = bad
    elif where == "External id":
        events[0]["args"]["External id"] = bad
    else:
        kernel["args"]["External id"] = bad
    trace = trace_from_events(events, source="x")
    assert sum(g.calls for g in trace.groups) == 2
    assert trace.skipped == 0


def test_unhashable_concrete_inputs_are_kept_as_text() -> None:
    event = _op("aten::topk", 0, 5)
    event["args"]["Input Dims"] = [[4, 8], []]
    event["args"]["Input type"] = ["float", "Scalar"]
    event["args"]["Concrete Inputs"] = ["", "{[1]: 2}"]
    trace = trace_from_events([event], source="x")
    assert trace.groups[0].call.arg("k").value == "{[1]: 2}"  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------
# Deep nesting and huge numbers in a workload_profile.md kernelopt wrote.


def _edited(data: Path, old: str, new: str) -> str:
    text = render_profile_md(profile_trace(data / "mla_decode_calls.jsonl"))
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("- Select: -", "- Select: " + "[" * 50_000 + "]" * 50_000, "nested too deeply"),
        ("- Time (us): 585", f"- Time (us): {BIG}", "numbers within the float range"),
        ("| 1 | 6 |", f"| 1 | {BIG} |", "numbers within the float range"),
    ],
    ids=["deep-select", "huge-time", "huge-count"],
)
def test_a_damaged_profile_file_is_a_format_error_and_read_tolerantly(
    tmp_path: Path, data: Path, old: str, new: str, message: str
) -> None:
    text = _edited(data, old, new)
    with pytest.raises(FormatError, match=message):
        parse_profile_md(text)
    path = tmp_path / "workload_profile.md"
    path.write_text(text)
    profile = read_profile_md(path)
    assert profile.notes[0].startswith("not in kernelopt's exact layout")


# --------------------------------------------------------------------------------------
# Gzip: a cap on what a whole-document reader decompresses; broken streams.


def _gzip(path: Path, payload: bytes) -> Path:
    path.write_bytes(gzip.compress(payload))
    return path


def test_gzip_json_is_decompressed_up_to_a_cap(tmp_path: Path, data: Path) -> None:
    payload = (data / "softmax_topk_cpu.json").read_bytes()
    packed = _gzip(tmp_path / "t.json.gz", payload)
    assert load_json(packed, max_bytes=len(payload)) == json.loads(payload)
    with pytest.raises(InputError, match=f"decompresses to at most {len(payload) - 1} bytes"):
        load_json(packed, max_bytes=len(payload) - 1)


def test_the_cap_is_reported_by_format_detection_too(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pretty-printed trace is decoded whole to learn its format: over the cap, the user
    # reads the cap, not "unrecognized content".
    events = json.loads((data / "softmax_topk_cpu.json").read_text())
    packed = _gzip(tmp_path / "t.json.gz", json.dumps(events, indent=2).encode())
    monkeypatch.setattr(torch_trace, "MAX_DECOMPRESSED_BYTES", 1000)
    with pytest.raises(InputError, match="decompresses to at most 1000 bytes"):
        read_trace(packed)


@pytest.mark.parametrize("name", ["mla_decode_calls.jsonl", "softmax_topk_cpu.json"])
def test_a_corrupt_gzip_stream_is_an_input_error(tmp_path: Path, data: Path, name: str) -> None:
    packed = gzip.compress((data / name).read_bytes() * 40)
    broken = packed[:20] + bytes(b ^ 0x55 for b in packed[20:400]) + packed[400:]
    path = tmp_path / "broken.gz"
    path.write_bytes(broken)
    with pytest.raises(InputError, match="Expected a readable gzip file"):
        read_trace(path)
    truncated = tmp_path / "truncated.gz"
    truncated.write_bytes(packed[: len(packed) * 3 // 4])
    with pytest.raises(InputError, match="Expected a readable gzip file"):
        read_trace(truncated, format="jsonl" if name.endswith(".jsonl") else None)


def test_gzip_flashinfer_workloads_are_read(tmp_path: Path) -> None:
    record = {"definition": "x", "workload": {"uuid": "u", "axes": {"a": 3}, "inputs": {}}}
    packed = _gzip(tmp_path / "w.jsonl.gz", (json.dumps(record) + "\n").encode() * 3)
    trace = read_trace(packed)
    assert trace.format == "flashinfer-bench" and (trace.calls, trace.skipped) == (3, 0)


# --------------------------------------------------------------------------------------
# Bytes that are not UTF-8.


def test_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    profile = tmp_path / "workload_profile.md"
    profile.write_bytes(b"# Workload profile: mla_decode\n\xff\xfe\n" + TABLE.encode())
    assert read_profile_md(profile).ops[0].calls == 5
    trace = tmp_path / "t.json"
    trace.write_bytes(b'{"traceEvents": [{"ph": "X", "name": "\xff"}]}')
    with pytest.raises(InputError, match=f"{trace}: 'utf-8' codec can't decode"):
        read_trace(trace, format="torch-profiler")
    lines = tmp_path / "t.jsonl"
    lines.write_bytes(b'{"op": "f\xff", "args": {}}\n{"op": "g", "args": {}}\n')
    assert read_trace(lines).skipped == 1


# --------------------------------------------------------------------------------------
# Lone surrogates: JSON's `\ud800` escape decodes to a str that no UTF-8 file can hold.


@pytest.mark.parametrize(
    "line",
    [
        '{"op": "a\\ud800", "args": {}}',
        '{"op": "a", "args": {"x\\udfff": 1}}',
        '{"op": "a", "args": {"x": {"shape": [2], "dtype": "f\\ud800"}}}',
        '{"op": "a", "args": {"mode": "\\ud83d"}}',
    ],
    ids=["op", "argument name", "dtype", "string scalar"],
)
def test_a_lone_surrogate_is_a_malformed_line_not_a_crash_when_writing(
    tmp_path: Path, line: str
) -> None:
    trace_path = tmp_path / "calls.jsonl"
    trace_path.write_text(line + '\n{"op": "a", "args": {"x": 1}}\n', encoding="ascii")
    trace = read_trace(trace_path)
    assert trace.skipped == 1
    assert any("surrogate" in note for note in trace.notes), trace.notes
    out = tmp_path / "workload_profile.md"
    write_profile_md(profile_calls(trace), out)
    assert read_profile_md(out) == profile_calls(trace)


def test_a_note_on_an_overlong_name_quotes_only_its_start(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps({"op": "x" * 100_000, "args": {}}) + '\n{"op": "a", "args": {}}\n')
    trace = read_trace(path)
    assert trace.skipped == 1
    (note, *_) = trace.notes
    assert note.startswith("line 1: op: Expected a non-empty op name of at most 200 chars, got ")
    assert len(note) < 400


@pytest.mark.parametrize(
    "read", [read_trace, read_profile_md, profile_trace, load_json], ids=lambda f: f.__name__
)
def test_a_path_too_long_for_the_system_is_an_input_error(read: object) -> None:
    # Path.is_file raises OSError (ENAMETOOLONG) instead of answering False.
    with pytest.raises(InputError, match="Expected an existing"):
        read("x" * 5000)  # type: ignore[operator]


def test_profile_text_with_carriage_returns_only_is_read_as_text() -> None:
    text = "# Workload profile: softmax\r\r| n | calls |\r|---|---|\r| 1 | 9 |\r| 8 | 1 |\r" * 30
    op = read_profile_md(text).op()
    assert op.op == "softmax" and op.axis("n").size1_share == 0.9  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------
# A folder where a file is expected exists: it is named as a directory, not as missing;
# an empty path is named as such, not as the working directory it resolves to.


@pytest.mark.parametrize(
    ("read", "what"),
    [
        (read_trace, "trace file"),
        (detect_format, "trace file"),
        (load_json, "trace file"),
        (read_flashinfer, "workload file"),
        (read_profile_md, "workload_profile.md"),
    ],
)
def test_a_folder_read_as_a_file_is_called_a_directory(
    tmp_path: Path, read: Callable[[str | Path], object], what: str
) -> None:
    with pytest.raises(InputError, match=rf"^Expected an existing {what}, got a directory at "):
        read(tmp_path)
    with pytest.raises(InputError, match=rf"^Expected an existing {what}, got no file at "):
        read(tmp_path / "missing.json")
    # Path("") is the working directory, a folder the user did not name.
    empty = r"Expected (an existing \S+|a file path), got an empty path$"
    with pytest.raises(InputError, match=empty):
        read("")
