"""Traces read through the reader's caches profile as a line-by-line decode of them does.

The JSONL reader remembers, per line text with its duration and values summaries cut out,
where the line's calls are counted, whether that place was found by a JSON decode or built
from the first line of the same layout. Seeded traces of every kind of line (what the
Recorder writes, values summaries changing on every call, lines repeated exactly, mixed
signatures of one op, both JSON spacings, strides, lines without a duration, blank lines
and malformed lines, repeated too) are read and profiled here, and the rendered markdown,
the JSON, the terminal report and the notes are compared with those of the plain path
kept below: every line decoded in full and counted in order. Last: a line of a known
layout and known sizes is counted without building its call, and a line holding the mark
the reader leaves where it cut is refused as no JSON.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import KernelOptError
from kernelopt._strict_json import TooDeepError, loads, once_each, syntax_error_text
from kernelopt.workload import Call, jsonl, profile_calls, read_jsonl
from kernelopt.workload.calls import CallAggregator, Trace, parse_call_record
from kernelopt.workload.jsonl import MAX_LISTED_PROBLEMS
from kernelopt.workload.markdown import render_profile_md
from kernelopt.workload.report import render_report
from kernelopt.workload.serialize import profile_to_json
from kernelopt.workload.shortcuts import find_shortcuts

PAGE = 64

# Malformed lines of every kind the reader tells apart, each with the message it gives.
_MALFORMED = (
    '{"op":"mla_decode","args":{"q":{"shape":[32,1,128,576],"dtype":"bfloat16"}',
    '{"op":"mla_decode","args":{"q":{"shape":[32,-1],"dtype":"bfloat16"}},"duration_us":1.0}',
    '{"op":"mla_decode","args":{},"duration_us":"fast"}',
    '{"op":"mla_decode","args":{},"duration_us":2e12}',
    '{"op":"mla_decode","op":"sum","args":{}}',
    '{"op":"mla_decode","args":{"cache_seqlens":{"shape":[4],"dtype":"int32",'
    '"values":{"min":9,"max":3,"mean":5}}},"duration_us":4.0}',
    '{"op":"mla_decode","args":{"cache_seqlens":{"shape":[4],"dtype":"int32",'
    '"values":{"min":1,"max":3,"mean":2,"std":7}}},"duration_us":4.0}',
    "[1, 2, 3]",
    '{"op":"mla_decode","args":{"q":{"shape":[1,2],"dtype":"bfloat16"}},"duration_us":-3}',
)


def _summary(rng: random.Random, width: int) -> dict[str, Any]:
    """A cache_seqlens summary whose longest length needs ``width`` pages."""
    high = rng.randint((width - 1) * PAGE + 1, width * PAGE)
    low = rng.randint(1, high)
    summary: dict[str, Any] = {"min": low, "max": high, "mean": round(rng.uniform(low, high), 3)}
    if rng.random() < 0.7:
        summary["std"] = round(min(rng.uniform(0, high - low), (high - low) / 2), 3)
    return summary


def _mla(rng: random.Random, b: int, width: int, dtype: str) -> dict[str, Any]:
    """An MLA decode call as the Recorder writes it, of one of three signatures."""
    query = [b, 1, 128, 576] if rng.random() < 0.85 else [b, 128, 576]  # a packed query
    args: dict[str, Any] = {
        "q": {"shape": query, "dtype": dtype},
        "kv_cache": {"shape": [16384, PAGE, 1, 576], "dtype": dtype},
        "block_table": {"shape": [b, width], "dtype": "int32"},
        "cache_seqlens": {"shape": [b], "dtype": "int32"},
        "softmax_scale": 0.041666666666666664,
    }
    if rng.random() < 0.9:  # some calls without their lengths summarized
        args["cache_seqlens"]["values"] = _summary(rng, width)
    if rng.random() < 0.3:  # the same op with one more argument: another signature
        args["causal"] = True
    if rng.random() < 0.1:
        args["block_table"]["stride"] = [width, 1]
    return {"op": "mla_decode", "args": args}


def _softmax(rng: random.Random, b: int) -> dict[str, Any]:
    return {
        "op": "softmax",
        "args": {"x": {"shape": [b, rng.choice((32000, 128256))], "dtype": "float32"}, "dim": -1},
    }


def trace_text(seed: int, lines: int, shapes: int) -> str:
    """A seeded trace of ``lines`` lines over about ``shapes`` batch and width pairs."""
    rng = random.Random(seed)
    pool = [(rng.randint(1, 128), rng.randint(1, 64)) for _ in range(shapes)]
    weights = [1.0 / (i + 1) for i in range(shapes)]
    out: list[str] = []
    for _ in range(lines):
        draw = rng.random()
        if draw < 0.02:
            out.append(rng.choice(_MALFORMED))
        elif draw < 0.03:
            out.append("")
        elif out and draw < 0.23:
            out.append(out[rng.randrange(max(0, len(out) - 50), len(out))])  # exactly again
        else:
            b, width = rng.choices(pool, weights=weights)[0]
            if draw < 0.3:
                record = _softmax(rng, b)
            else:
                dtype = "fp8_custom" if draw < 0.31 else "bfloat16"  # an unknown dtype
                record = _mla(rng, b, width, dtype)
            if rng.random() < 0.85:
                record["duration_us"] = round(rng.uniform(5, 400), 3)
            if rng.random() < 0.75:  # the Recorder's compact JSON
                out.append(json.dumps(record, separators=(",", ":")))
            else:  # json.dumps's default spacing
                out.append(json.dumps(record))
    return "\n".join(out) + "\n"


# (seed, lines, shapes): repeated shapes, a shape on almost every line, and a small trace.
TRACES = ((1, 6000, 300), (2, 3000, 3000), (3, 400, 5))


def _message(line: bytes, unknown: set[str]) -> tuple[Call, float | None] | str:
    """The call of one line decoded in full, or the message it is refused with."""
    try:
        record = loads(line, object_pairs_hook=once_each)
    except TooDeepError:
        return "Expected a JSON object, got JSON nested too deeply"
    except KernelOptError as error:
        return str(error)
    except ValueError as error:
        detail = (
            syntax_error_text(error) if isinstance(error, json.JSONDecodeError) else "bad UTF-8"
        )
        return f"Expected a JSON object, got invalid JSON ({detail})"
    try:
        return parse_call_record(record, unknown_dtypes=unknown)
    except KernelOptError as error:
        return str(error)


def read_line_by_line(path: Path) -> Trace:
    """The plain path: every line decoded in full and counted in order, notes as listed."""
    aggregator = CallAggregator()
    records = skipped = 0
    problems: list[str] = []
    unknown: set[str] = set()
    for lineno, line in enumerate(path.read_bytes().split(b"\n"), 1):
        if not line.strip():
            continue
        records += 1
        decoded = _message(line, unknown)
        if isinstance(decoded, str):
            skipped += 1
            if len(problems) < MAX_LISTED_PROBLEMS:
                problems.append(f"line {lineno}: {decoded}")
            continue
        aggregator.add(*decoded)
    notes = list(problems)
    if skipped > len(problems):
        notes.append(f"... and {skipped - len(problems)} more malformed lines")
    if skipped:
        notes.append(f"skipped {skipped} of {records} lines as malformed")
    notes += [f"unknown dtype {dtype!r}, kept as written" for dtype in sorted(unknown)]
    return Trace(
        source=str(path),
        format="jsonl",
        groups=aggregator.groups(),
        records=records,
        skipped=skipped,
        notes=notes,
    )


def outputs(trace: Trace) -> dict[str, str]:
    """What a user reads of a trace: notes, markdown, JSON and the terminal report."""
    profile = profile_calls(trace)
    found = find_shortcuts(profile)
    return {
        "notes": "\n".join(trace.notes),
        "markdown": render_profile_md(profile, found),
        "json": profile_to_json(profile, found),
        "report": render_report(profile, found, top=5),
    }


@pytest.fixture(scope="module", params=TRACES, ids=lambda t: f"seed{t[0]}-{t[1]}lines")
def seeded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[int, Path]:
    """(seed, path) of one trace of TRACES."""
    seed, lines, shapes = request.param
    path = tmp_path_factory.mktemp(f"seed{seed}") / "calls.jsonl"
    path.write_text(trace_text(seed, lines, shapes), encoding="utf-8")
    return seed, path


@pytest.fixture
def trace_file(seeded: tuple[int, Path]) -> Path:
    return seeded[1]


def test_the_traces_hold_every_kind_of_line(trace_file: Path) -> None:
    trace = read_line_by_line(trace_file)
    lines = trace_file.read_text(encoding="utf-8").split("\n")
    assert trace.skipped > 0 and any(not line for line in lines[:-1])
    assert len(lines) - len(set(lines)) > len(lines) // 10  # lines repeated exactly
    assert {"mla_decode", "softmax"} <= set(trace.ops)
    signatures = {tuple(a.name for a in g.call.args) for g in trace.groups}
    assert len(signatures) >= 3
    assert any("unknown dtype 'fp8_custom'" in note for note in trace.notes)


def test_read_trace_outputs_equal_a_decode_of_every_line(trace_file: Path) -> None:
    read = read_jsonl(trace_file)
    plain = read_line_by_line(trace_file)
    assert (read.records, read.skipped) == (plain.records, plain.skipped)
    assert read.groups == plain.groups  # counts and summed times added in the same order
    assert outputs(read) == outputs(plain)


def test_the_malformed_lines_keep_their_numbers_and_messages(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text(trace_text(*TRACES[0]), encoding="utf-8")
    notes = read_jsonl(path).notes
    assert len([n for n in notes if n.startswith("line ")]) == MAX_LISTED_PROBLEMS
    # Summaries cut out of a line of a known layout are refused with the decode's words.
    assert notes[0] == (
        "line 161: args.cache_seqlens.values.std: Expected a std in [0, (max - min) / 2], got 7"
    )
    assert (
        "line 967: args.cache_seqlens.values: Expected values with min <= mean <= max, got 9, 5, 3"
        in notes
    )
    assert "line 296: duration_us: Expected a duration in [0, 1e12] us, got 2000000000000.0" in (
        notes
    )
    assert "line 1278: duration_us: Expected a duration in microseconds (a number), got fast" in (
        notes
    )
    assert notes[MAX_LISTED_PROBLEMS:] == (
        "... and 104 more malformed lines",
        "skipped 124 of 5918 lines as malformed",
        "unknown dtype 'fp8_custom', kept as written",
    )


def _mla_line(b: int, width: int, low: int, duration: float) -> str:
    """A Recorder line of one MLA decode call: batch ``b``, ``width`` pages a row."""
    high = (width - 1) * PAGE + 1
    values = f'{{"min":{min(low, high)},"max":{high},"mean":{high}}}'
    return (
        f'{{"op":"mla_decode","args":{{"q":{{"shape":[{b},1,128,576],"dtype":"bfloat16"}},'
        f'"block_table":{{"shape":[{b},{width}],"dtype":"int32"}},'
        f'"cache_seqlens":{{"shape":[{b}],"dtype":"int32","values":{values}}}}},'
        f'"duration_us":{duration}}}'
    )


def test_a_line_of_a_known_layout_and_known_sizes_is_counted_without_building_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every line has its own duration and lengths; three shapes, the last two new to the
    # layout: each is built from the layout once, then counted from the cache.
    lines = [_mla_line(8, 16, 1, 5.0)]
    for i in range(300):
        b, width = ((8, 16), (16, 32), (32, 64))[i % 3]
        lines.append(_mla_line(b, width, i + 1, 5.0 + i / 8))
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    built: list[int] = []
    decoded: list[int] = []
    sized, decode = jsonl._ShapeTemplate.sized, jsonl._Reader.decode
    monkeypatch.setattr(jsonl._ShapeTemplate, "sized", lambda *a: built.append(1) or sized(*a))
    monkeypatch.setattr(jsonl._Reader, "decode", lambda *a: decoded.append(1) or decode(*a))
    trace = read_jsonl(path)
    assert (len(decoded), len(built)) == (1, 2)
    assert [g.calls for g in trace.groups] == [101, 100, 100]
    assert trace.groups == read_line_by_line(path).groups


@pytest.mark.parametrize(
    ("mark", "cut"),
    [
        (b'"values":@', b'"values":{"min":1,"max":3,"mean":2}'),
        (b'"duration_us":@', b'"duration_us":4.0'),
    ],
    ids=["values", "duration"],
)
@pytest.mark.parametrize("size", [4, 5])  # the first line's sizes, and new ones
def test_a_line_holding_the_mark_of_a_cut_is_refused_as_a_decode_does(
    tmp_path: Path, mark: bytes, cut: bytes, size: int
) -> None:
    # The reader keys a line by its text with the duration and summaries cut out and a
    # mark left in their place: a line holding that mark itself is no JSON, not a call
    # of the first line's layout.
    good = (
        b'{"op":"m","args":{"s":{"shape":[4],"dtype":"int32",'
        b'"values":{"min":1,"max":3,"mean":2}}},"duration_us":4.0}'
    )
    bad = good.replace(b"[4]", b"[%d]" % size).replace(cut, mark)
    path = tmp_path / "calls.jsonl"
    path.write_bytes(b"\n".join([good, bad, bad, good]) + b"\n")
    trace = read_jsonl(path)
    plain = read_line_by_line(path)
    assert (trace.records, trace.skipped) == (plain.records, plain.skipped) == (4, 2)
    assert trace.notes == plain.notes
    assert trace.notes[0].startswith("line 2: Expected a JSON object, got invalid JSON")
    assert trace.groups == plain.groups
