"""The JSONL call-trace reader: counts, malformed lines, fast path == full decode (fuzzed)."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kernelopt.workload import Call, CallGroup, read_jsonl, read_trace
from kernelopt.workload.calls import CallAggregator, parse_call_record


def _totals(groups: tuple[CallGroup, ...]) -> dict[Call, tuple[int, int, float]]:
    return {g.call: (g.calls, g.timed_calls, round(g.time_us, 6)) for g in groups}


def test_fixture_counts_and_line_numbers(data: Path) -> None:
    trace = read_trace(data / "mla_decode_calls.jsonl")
    assert trace.format == "jsonl"
    assert trace.records == 15  # non-blank lines
    assert trace.skipped == 5
    assert trace.calls == 10
    assert len(trace.groups) == 4  # the two JSON spacing styles merge into one shape
    assert sum(g.time_us for g in trace.groups) == 585.0
    listed = [n for n in trace.notes if n.startswith("line ")]
    assert [n.split(":")[0] for n in listed] == [
        "line 5",
        "line 9",
        "line 12",
        "line 14",
        "line 16",
    ]
    assert "dims in [0, 2**40]" in listed[0] and "got [32, -1, 128, 576]" in listed[0]
    assert "invalid JSON" in listed[1]
    assert "Expected an op name string" in listed[3]
    assert "Expected a duration in [0, 1e12] us, got -3" in listed[4]
    assert "skipped 5 of 15 lines as malformed" in trace.notes


def test_identical_lines_hit_the_cache_with_their_own_durations(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = (
        '{{"op": "f", "args": {{"x": {{"shape": [2, 3], "dtype": "float32"}}}}, '
        '"duration_us": {}}}\n'
    )
    path.write_text("".join(line.format(d) for d in (1, 2.5, 3e1, 0.25)))
    (group,) = read_jsonl(path).groups
    assert (group.calls, group.timed_calls, group.time_us) == (4, 4, 33.75)


def test_an_out_of_range_duration_is_rejected_wherever_it_stands(tmp_path: Path) -> None:
    # One line shape, five valid durations and one past 1e12 us: the bad line is skipped
    # whether it comes first (its rejection must not stick to the shape) or last (the
    # cached shape must not wave it through).
    line = '{{"op": "f", "args": {{"x": {{"shape": [4, 1], "dtype": "f32"}}}}, "duration_us": {}}}'
    good = [line.format(d) for d in (1, 2, 3, 4, 5)]
    bad = line.format("2e12")
    for order in ([bad, *good], [*good, bad]):
        path = tmp_path / "t.jsonl"
        path.write_text("\n".join(order) + "\n")
        trace = read_jsonl(path)
        (group,) = trace.groups
        assert (trace.records, trace.skipped) == (6, 1)
        assert (group.calls, group.timed_calls, group.time_us) == (5, 5, 15.0)
        assert "Expected a duration in [0, 1e12] us" in trace.notes[0]


def test_argument_named_duration_us_is_not_taken_for_the_duration(tmp_path: Path) -> None:
    # The same text minus the duration field: once at top level, once inside args.
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"op": "f", "args": {"a": 1}, "duration_us": 5}\n'
        '{"op": "f", "args": {"a": 1, "duration_us": 5}}\n'
        '{"op": "f", "args": {"a": 1}, "duration_us": 7}\n'
        '{"op": "f", "args": {"a": 1, "duration_us": 9}}\n'
    )
    totals = {g.call.label: (g.calls, g.timed_calls, g.time_us) for g in read_jsonl(path).groups}
    assert totals == {
        "a=1": (2, 2, 12.0),
        "a=1 duration_us=5": (1, 0, 0.0),
        "a=1 duration_us=9": (1, 0, 0.0),
    }


def test_a_line_repeating_a_key_is_skipped_with_a_note(tmp_path: Path) -> None:
    # Two durations for one call: keeping either would be a guess (json keeps the last).
    path = tmp_path / "t.jsonl"
    path.write_text('{"op": "f", "duration_us": 1, "duration_us": 2}\n{"op": "f"}\n')
    trace = read_jsonl(path)
    assert (trace.records, trace.skipped, trace.calls) == (2, 1, 1)
    assert any("line 1" in note and "duration_us" in note for note in trace.notes)


def test_bom_blank_lines_and_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"op": "f"}\n\n   \n{"op": "f"}\n')
    trace = read_jsonl(path)
    assert (trace.records, trace.skipped, trace.calls) == (2, 0, 2)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    trace = read_jsonl(empty)
    assert (trace.records, trace.calls, trace.groups) == (0, 0, ())


def test_gzip_and_stream_inputs(tmp_path: Path, data: Path) -> None:
    raw = (data / "mla_decode_calls.jsonl").read_bytes()
    packed = tmp_path / "calls.jsonl.gz"
    packed.write_bytes(gzip.compress(raw))
    expected = _totals(read_trace(data / "mla_decode_calls.jsonl").groups)
    assert _totals(read_trace(packed).groups) == expected
    assert _totals(read_jsonl(io.BytesIO(raw)).groups) == expected


def test_unknown_dtype_is_kept_and_noted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"op": "f", "args": {"x": {"shape": [4], "dtype": "bfloat17"}}}\n')
    trace = read_jsonl(path)
    assert trace.calls == 1
    assert "unknown dtype 'bfloat17', kept as written" in trace.notes


def test_problems_listed_are_capped_but_counted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("garbage\n" * 50 + '{"op": "f"}\n')
    trace = read_jsonl(path)
    assert trace.skipped == 50 and trace.calls == 1
    assert sum(n.startswith("line ") for n in trace.notes) == 20
    assert "... and 30 more malformed lines" in trace.notes


# --- fuzzing ------------------------------------------------------------------------------

_names = st.sampled_from(["q", "k", "x", "cache_seqlens", "dim", "duration_us", "arg0"])
_number = st.one_of(
    st.integers(-3, 4100), st.floats(-3, 4100, allow_nan=False).map(lambda x: round(x, 3))
)
# Summaries as the Recorder writes them (the reader's fast path cuts these out of the line)
# and a few it must refuse: min > max, mean outside, a std wider than half the range.
_values = st.fixed_dictionaries(
    {"min": _number, "max": _number, "mean": _number}, optional={"std": _number}
)
_tensor = st.fixed_dictionaries(
    {
        "shape": st.lists(st.integers(0, 70), max_size=4),
        "dtype": st.sampled_from(["bfloat16", "float32", "int32", "c10::Half"]),
    },
    optional={"values": _values},
)
_scalar = st.one_of(
    st.integers(-5, 5), st.booleans(), st.none(), st.sampled_from([0.5, 1e-3]), st.text(max_size=3)
)
_record = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["mla_decode", "softmax", "topk", "f|g"]),
        "args": st.dictionaries(_names, st.one_of(_tensor, _scalar), max_size=3),
    },
    optional={
        "duration_us": st.one_of(st.integers(0, 10**6), st.floats(0, 1e6, allow_nan=False)),
        "ts": st.integers(),
    },
)
_garbage = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=40).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.sampled_from(
        [
            b"[",
            b"{}",
            b"null",
            b'{"op": 3}',
            b'{"op": "x", "duration_us": -1}',
            b'{"op": "x", "duration_us": NaN}',
            b'{"op": "x", "duration_us": 1.2.3}',
            b'{"op": "x", "duration_us": 1e999}',
            b"[" * 5000,
            b'{"op": "x", "args": {"q": {"shape": [-1], "dtype": "f32"}}}',
        ]
    ),
)


def _encode(record: dict[str, object], style: int) -> bytes:
    if style == 0:
        return json.dumps(record).encode()
    if style == 1:
        return json.dumps(record, separators=(",", ":")).encode()
    return json.dumps(record, indent=None, separators=(" , ", " : ")).encode()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("record"), _record, st.integers(0, 2)),
            st.tuples(st.just("garbage"), _garbage, st.just(0)),
        ),
        max_size=30,
    )
)
@example([("garbage", b"\xef\xbb\xbf", 0)])  # a file holding only its byte-order mark
@example([("garbage", b"\xef\xbb\xbf", 0), ("garbage", b"\xef\xbb\xbf", 0)])
def test_fuzzed_lines_never_crash_and_match_a_full_decode(lines: list[tuple]) -> None:
    raw = []
    for kind, payload, style in lines:
        raw.append(_encode(payload, style) if kind == "record" else payload.replace(b"\n", b" "))
    text = b"\n".join(raw) + b"\n"
    trace = read_jsonl(io.BytesIO(text))
    # Reference: decode every line with json, validate, aggregate with no cache at all.
    reference = CallAggregator()
    records = skipped = 0
    for index, line in enumerate(text.split(b"\n")):
        if index == 0 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]  # a byte-order mark opens the file, not a record
        if not line.strip():
            continue
        records += 1
        try:
            call, duration = parse_call_record(json.loads(line))
        except Exception:
            skipped += 1
            continue
        reference.add(call, duration)
    assert trace.records == records
    assert trace.skipped == skipped
    assert trace.calls + trace.skipped == trace.records
    expected = {g.call: g for g in reference.groups()}
    got = {g.call: g for g in trace.groups}
    assert got.keys() == expected.keys()
    for call, group in got.items():
        want = expected[call]
        # Counts and values histograms exactly; summed times up to float rounding.
        assert (group.calls, group.timed_calls, group.values) == (
            want.calls, want.timed_calls, want.values
        )  # fmt: skip
        assert abs(group.time_us - want.time_us) <= 1e-6 * max(1.0, group.time_us)


def test_a_malformed_first_line_does_not_hide_the_format(tmp_path: Path) -> None:
    from kernelopt.workload import detect_format

    path = tmp_path / "calls.txt"  # not named .jsonl: the content decides
    path.write_text(
        "garbage from a truncated write\n"
        '{"op": "f", "args": {"x": {"shape": [4, 1], "dtype": "f32"}}, "duration_us": 3}\n'
    )
    assert detect_format(path) == "jsonl"
    trace = read_trace(path)
    assert (trace.records, trace.skipped) == (2, 1) and trace.groups[0].calls == 1


def test_lines_whose_summaries_change_share_one_shape_and_keep_every_summary() -> None:
    # What the Recorder writes on a ragged decode: one shape, new lengths on every call. The
    # reader cuts the summaries out like the duration; the histograms must be those a full
    # decode of every line gives, and a summary that cannot hold (min > max) is refused.
    lines = []
    for i in range(40):
        low, high = 10 + i, 200 + 3 * i
        values = {"min": low, "max": high, "mean": (low + high) / 2, "std": (high - low) / 4}
        if i % 3 == 0:
            del values["std"]
        args = {"q": {"shape": [4, 1, 16, 576], "dtype": "bfloat16"},
                "cache_seqlens": {"shape": [4], "dtype": "int32", "values": values}}  # fmt: skip
        record = {"op": "mla_decode", "args": args}
        if i % 2 == 0:
            record["duration_us"] = 40.0 + i
        lines.append(json.dumps(record, separators=(",", ":")).encode())
    bad = dict(json.loads(lines[5]))
    bad["args"]["cache_seqlens"]["values"] = {"min": 9, "max": 1, "mean": 5}
    lines.insert(6, json.dumps(bad, separators=(",", ":")).encode())
    trace = read_jsonl(io.BytesIO(b"\n".join(lines) + b"\n"))
    reference = CallAggregator()
    for line in lines:
        try:
            reference.add(*parse_call_record(json.loads(line)))
        except Exception:
            continue
    (group,) = trace.groups
    (want,) = reference.groups()
    assert (trace.records, trace.skipped) == (41, 1)
    assert (group.call, group.calls, group.timed_calls, group.values) == (
        want.call, want.calls, want.timed_calls, want.values
    )  # fmt: skip
    assert group.time_us == pytest.approx(want.time_us)
    assert len(group.values[0].cv) == 26  # the summaries that carried a std


def test_time_is_checked_for_every_trace_format(tmp_path: Path) -> None:
    from kernelopt._errors import InputError
    from kernelopt.workload import profile_trace

    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps({"op": "f", "args": {}}) + "\n")
    for call in (read_trace, profile_trace):
        with pytest.raises(
            InputError, match=r"time: Expected time in \('auto', 'host', 'device'\)"
        ):
            call(path, time="bogus")
    with pytest.raises(InputError, match="format: Expected a format in"):
        read_trace(path, format="csv")
    # A JSONL trace has one duration per call: a time it would drop is refused.
    with pytest.raises(InputError, match="Expected time only with a PyTorch profiler trace"):
        read_trace(path, time="host")
    assert read_trace(path, time="auto").calls == 1


def test_recorded_strides_are_kept(tmp_path: Path) -> None:
    record = {"op": "f", "args": {"i": {"shape": [4, 8], "dtype": "int64", "stride": [0, 1]}}}
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (group,) = read_jsonl(path).groups
    assert group.call.args[0].stride == (0, 1)  # type: ignore[union-attr]
    bad = {"op": "f", "args": {"i": {"shape": [4, 8], "dtype": "int64", "stride": [1]}}}
    path.write_text(json.dumps(bad) + "\n")
    trace = read_jsonl(path)
    assert trace.skipped == 1 and "i.stride: Expected 2 strides" in trace.notes[0]
