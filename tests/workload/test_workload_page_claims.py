"""What docs/workload.md promises a user who reads traces and profiles, checked as they
meet it: each refusal names the field, file or axis at fault, a profile written as JSON
reads back, and a hand-written table whose shares cannot all be right says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy
import pytest

from kernelopt import cli
from kernelopt._errors import InputError
from kernelopt.workload import (
    Call,
    Recorder,
    TensorArg,
    ValuesSummary,
    WorkloadProfile,
    find_shortcuts,
    profile_calls,
    profile_trace,
    read_profile_md,
    read_trace,
    registered_rules,
    render_profile_md,
    unregister_rule,
    write_profile_md,
)
from kernelopt.workload.torch_trace import trace_from_events


def _softmax_line(x: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"op": "softmax", "args": {"x": x, "dim": -1, **extra}})


def _jsonl(path: Path, *lines: str) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


# -- JSONL calls: a refused tensor field is named as the line's other fields are -----------


def test_a_values_summary_that_cannot_hold_names_its_tensor(tmp_path: Path) -> None:
    good = _softmax_line({"shape": [4, 8], "dtype": "float16"})
    lengths = {
        "shape": [4],
        "dtype": "int32",
        "values": {"min": 9, "max": 7, "mean": 5},
    }
    bad = json.dumps(
        {
            "op": "mla_decode",
            "args": {
                "kv_lens": {
                    "shape": [4],
                    "dtype": "int32",
                    "values": {"min": 1, "max": 3, "mean": 2},
                },
                "cache_seqlens": lengths,
            },
        }
    )
    trace = read_trace(_jsonl(tmp_path / "calls.jsonl", good, good, bad))
    # The page's example: which of the line's summaries is wrong, not only that one is.
    assert trace.notes[0] == (
        "line 3: args.cache_seqlens.values: Expected values with min <= mean <= max, got 9, 5, 7"
    )


@pytest.mark.parametrize(
    ("values", "note"),
    [
        ({"min": float("nan"), "max": 1, "mean": 0}, "args.x.values.min: Expected a finite number"),
        ({"min": 1, "max": 3, "mean": 2, "std": 5}, "args.x.values.std: Expected a std in"),
    ],
)
def test_a_values_field_is_named_under_its_tensor(
    tmp_path: Path, values: dict[str, float], note: str
) -> None:
    line = _softmax_line({"shape": [4, 8], "dtype": "int32", "values": values})
    trace = read_trace(_jsonl(tmp_path / "calls.jsonl", line))
    assert trace.notes[0].startswith(f"line 1: {note}")


def test_a_stride_list_of_the_wrong_length_is_named_under_args(tmp_path: Path) -> None:
    line = _softmax_line({"shape": [4, 8], "dtype": "float16", "stride": [1]})
    trace = read_trace(_jsonl(tmp_path / "calls.jsonl", line))
    assert trace.notes[0].startswith("line 1: args.x.stride: Expected 2 strides, one per dim")


# -- PyTorch profiler traces: what the file holds instead, and which file ------------------


def test_a_jsonl_trace_forced_to_the_profiler_format_names_the_file_and_its_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _jsonl(tmp_path / "calls.jsonl", _softmax_line({"shape": [4, 1], "dtype": "float16"}))
    assert cli.main(["inspect", str(path), "--format", "torch-profiler"]) == 2
    err = capsys.readouterr().err
    assert "got NoneType" not in err
    assert f"got {path}: a JSON object without 'traceEvents' (keys: args, op)" in err


@pytest.mark.parametrize(
    ("document", "got"),
    [
        ({"traceEvents": 5}, "'traceEvents' as a number"),
        ({"traceEvents": {"ph": "X"}}, "'traceEvents' as an object"),
        ("trace", "a string"),
    ],
)
def test_trace_events_that_are_no_list_are_said_in_words(document: object, got: str) -> None:
    with pytest.raises(InputError) as raised:
        trace_from_events(document, source="step.json")
    assert str(raised.value) == (
        f"Expected a Chrome trace with a 'traceEvents' list, got step.json: {got}"
    )


def test_device_time_without_kernel_events_names_the_file_and_the_way_out(data: Path) -> None:
    path = data / "softmax_topk_cpu.json"
    with pytest.raises(InputError) as raised:
        read_trace(path, time="device")
    message = str(raised.value)
    assert f"got none in {path}" in message
    assert "ProfilerActivity.CUDA" in message and "time='host'" in message


# -- workload_profile: a profile written as JSON reads back --------------------------------


def test_read_profile_md_reads_a_profile_written_as_json_exactly(tmp_path: Path) -> None:
    lines = [_softmax_line({"shape": [4, 1 if i % 4 else 8], "dtype": "float16"}) for i in range(8)]
    profile = profile_trace(_jsonl(tmp_path / "calls.jsonl", *lines))
    written = write_profile_md(profile, tmp_path / "profile.json")
    # Read as markdown, its messages made an op "unknown" whose s_q axis had no size.
    assert read_profile_md(written) == profile
    assert read_profile_md(written.read_text(encoding="utf-8")) == profile


def test_a_json_profile_that_does_not_parse_says_so_and_invents_nothing(tmp_path: Path) -> None:
    line = _softmax_line({"shape": [4, 1], "dtype": "float16"})
    written = write_profile_md(
        profile_trace(_jsonl(tmp_path / "calls.jsonl", line)), tmp_path / "profile.json"
    )
    data = json.loads(written.read_text(encoding="utf-8"))
    data["profile"]["ops"][0]["calls"] = -5
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data), encoding="utf-8")
    read = read_profile_md(broken)
    assert read.ops == ()
    assert len(read.notes) == 1
    assert read.notes[0].startswith("a workload profile written as JSON that does not parse (")
    assert "got -5" in read.notes[0]


def test_other_json_is_still_read_as_markdown() -> None:
    read = read_profile_md('{"schema": "other"}\n')
    assert read.notes[0] == "read tolerantly (hand-written layout)"


# -- hand-written profiles: shares that cannot all be right ---------------------------------


def test_percentages_over_100_without_counts_are_kept_with_a_note() -> None:
    text = """# Workload profile: softmax

| n | % of calls |
|---|---|
| 1 | 90% |
| 4 | 90% |
"""
    read = read_profile_md(text)
    assert [s.call_share for s in read.op().shapes] == [0.9, 0.9]
    assert (
        "the % of calls column sums to 180.0%: shares of calls kept as written, as not every "
        "row gives its count; they cannot all be right"
    ) in read.notes


def test_percentages_that_sum_to_100_add_no_note() -> None:
    text = """# Workload profile: softmax

| n | % of calls |
|---|---|
| 1 | 90% |
| 4 | 10% |
"""
    assert read_profile_md(text).notes == ("read tolerantly (hand-written layout)",)


# -- FlashInfer-Bench: a var axis out of range is named as the axis ----------------------


def _workload_file(tmp_path: Path, axes: dict[str, object]) -> Path:
    definition = {
        "name": "rows_softmax",
        "op_type": "softmax",
        "axes": {"batch_size": {"type": "var"}, "n": {"type": "const", "value": 64}},
        "inputs": {"x": {"shape": ["batch_size", "n"], "dtype": "float16"}},
        "outputs": {"y": {"shape": ["batch_size", "n"], "dtype": "float16"}},
    }
    workload = {"uuid": "w1", "axes": axes, "inputs": {"x": {"type": "random"}}}
    bundle = tmp_path / "bundle.json"
    bundle.write_text(
        json.dumps({"definition": definition, "workloads": [workload]}), encoding="utf-8"
    )
    return bundle


@pytest.mark.parametrize(
    ("value", "note"),
    [
        (-1, "axes: Expected a size in [0, 2**40] for var axis batch_size, got -1"),
        (2**41, f"axes: Expected a size in [0, 2**40] for var axis batch_size, got {2**41}"),
        ("4", "axes: Expected an integer for var axis batch_size, got '4'"),
    ],
)
def test_a_var_axis_that_is_no_size_is_named_as_the_axis(
    tmp_path: Path, value: object, note: str
) -> None:
    trace = read_trace(_workload_file(tmp_path, {"batch_size": value}))
    assert trace.skipped == 1
    assert trace.notes[0].endswith(note)
    assert "x.shape" not in trace.notes[0]


# -- the Recorder leaves out what the trace format cannot hold ----------------------------


def test_the_recorder_leaves_out_arguments_that_are_no_tensor_or_scalar(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    with Recorder(path, append=False) as recorder:
        for options in ({"mode": "a"}, {"mode": "b"}):
            recorder.record("softmax", {"x": numpy.zeros((4, 1)), "dim": 1, "options": options})
    read = read_trace(path)
    # One shape: the calls differ only in an argument the line has no place for.
    assert [(group.calls, [a.name for a in group.call.args]) for group in read.groups] == [
        (2, ["x", "dim"])
    ]


# -- padding: a mean length past the padded size is a contradiction, said once ---------


def _attention(kv_mean: float, s_kv: int = 1024) -> Call:
    return Call(
        op="scaled_dot_product_attention",
        args=(
            TensorArg(name="query", shape=(2, 8, 16, 64), dtype="float16"),
            TensorArg(name="key", shape=(2, 8, s_kv, 64), dtype="float16"),
            TensorArg(name="value", shape=(2, 8, s_kv, 64), dtype="float16"),
            TensorArg(
                name="kv_lens",
                shape=(2,),
                dtype="int32",
                values=ValuesSummary(min=kv_mean - 100, max=kv_mean + 100, mean=kv_mean),
            ),
        ),
    )


def test_lengths_past_the_padded_size_are_noted_not_only_capped() -> None:
    profile = profile_calls([_attention(2500), _attention(2600), _attention(250)])
    assert profile.notes == (
        "scaled_dot_product_attention: signature attention: Expected kv_lens.mean() <= "
        "key.shape[2], got kv_lens.mean() = 2600 and key.shape[2] = 1024; s_kv_fill is "
        "counted as 1",
    )
    fill = profile.op().axis("s_kv_fill")
    assert fill is not None and fill.max == 1.0
    # The markdown keeps the note, as it keeps every note of the profile.
    assert read_profile_md(render_profile_md(profile)) == profile


def test_lengths_within_the_padded_size_add_no_note() -> None:
    profile = profile_calls([_attention(1024), _attention(250)])
    assert profile.notes == ()
    assert [s.rule for s in find_shortcuts(profile) if s.rule == "bucket-padding"] == [
        "bucket-padding"
    ]


def test_notes_of_lengths_past_the_padded_size_are_capped_and_counted() -> None:
    # One shape per padded size, each contradicted: 20 listed, the rest counted.
    calls = [_attention(5000, s_kv=s_kv) for s_kv in range(1000, 1025)]
    notes = profile_calls(calls).notes
    assert len(notes) == 21
    assert notes[-1] == (
        "... and 5 more calls of scaled_dot_product_attention whose mean length is above "
        "their padded size"
    )


# -- rules: unregister_rule removes user rules only ---------------------------------------


def test_unregister_rule_leaves_built_ins_and_the_page_shows_how_to_leave_one_out() -> None:
    profile = profile_trace_calls()
    unregister_rule("size1-axis")  # a built-in: no error, no change
    assert "size1-axis" in [r.id for r in registered_rules()]
    kept = [r for r in registered_rules() if r.id != "size1-axis"]
    assert "size1-axis" in [s.rule for s in find_shortcuts(profile)]
    assert "size1-axis" not in [s.rule for s in find_shortcuts(profile, rules=kept)]


def profile_trace_calls() -> WorkloadProfile:
    """A decode profile whose query has one token in most calls (a size1-axis finding)."""
    q = [TensorArg(name="q", shape=(8, s_q, 16, 576), dtype="bfloat16") for s_q in (1, 1, 1, 4)]
    kv = TensorArg(name="kv_cache", shape=(64, 64, 1, 576), dtype="bfloat16")
    return profile_calls([Call(op="mla_decode", args=(query, kv)) for query in q])


# -- the profile: max_values -------------------------------------------------------------


def test_max_values_lists_the_most_called_and_the_size_1_as_the_int_it_is() -> None:
    sizes = [8] * 7 + [16] * 2 + [1]
    calls = [
        Call(op="softmax", args=(TensorArg(name="x", shape=(4, n), dtype="float16"),))
        for n in sizes
    ]
    axis = profile_calls(calls, max_values=1).op().axis("n")
    assert axis is not None
    # 1 came as a float (1.0) beside the int sizes: printed, a size read "1.0".
    assert [(v.value, type(v.value)) for v in axis.values] == [(8, int), (1, int)]
    assert (axis.min, axis.max, axis.distinct, axis.size1_share) == (1, 16, 3, 0.1)


# -- hand-written tables: which column is a count, which a time ----------------------------

# A benchmark's table, as experiment logs hold them: times per stage, no counts.
_BENCHMARK_TABLE = """# Subspace delta kernel ablation

| rows | output dim | counter expand ms | in-place add ms |
| ---: | ---: | ---: | ---: |
| 64 | 1024 | `0.0438` | `0.0359` |
| 512 | 4096 | `1.4825` | `1.4759` |
"""


def test_a_counter_column_is_no_count_of_calls() -> None:
    read = read_profile_md(_BENCHMARK_TABLE)
    # Read as counts, the times made 0 and 1 "calls" and shares of calls of 3% and 97%.
    assert read.ops == ()
    assert (
        "not read: shape rows=64: no count or % of calls (a time alone gives no share of calls)"
        in read.notes
    )


@pytest.mark.parametrize("header", ["Count", "call count", "counts", "Calls", "# count"])
def test_count_headers_are_read_as_counts(header: str) -> None:
    text = f"# Workload profile: softmax\n\n| n | {header} |\n|---|---|\n| 1 | 9 |\n| 4 | 1 |\n"
    op = read_profile_md(text).op()
    assert [(s.axes, s.calls) for s in op.shapes] == [((("n", 1.0),), 9), ((("n", 4.0),), 1)]


def test_a_unit_without_parentheses_makes_a_time_column() -> None:
    text = (
        "# Workload profile: softmax\n\n| n | Count | kernel ms |\n|---|---|---|\n"
        "| 1 | 9 | 2 |\n| 4 | 1 | 8 |\n"
    )
    op = read_profile_md(text).op()
    assert [(s.calls, s.time_us) for s in op.shapes] == [(9, 2000.0), (1, 8000.0)]


def test_a_fractional_or_negative_count_is_not_read() -> None:
    text = """# Workload profile: softmax

| n | Count |
|---|---|
| 1 | 2.5 |
| 4 | 10 |
| 8 | -3 |
| 16 | 1.5k |
"""
    read = read_profile_md(text)
    assert [(s.axes, s.calls) for s in read.op().shapes] == [
        ((("n", 16.0),), 1500),
        ((("n", 4.0),), 10),
    ]
    assert "line 5: not read: Count = 2.5 (a count of calls is a non-negative integer)" in (
        read.notes
    )
    assert "line 7: not read: Count = -3 (a count of calls is a non-negative integer)" in (
        read.notes
    )


def test_counts_that_sum_to_zero_say_why_their_rows_are_not_read() -> None:
    text = "# Workload profile: softmax\n\n| n | Count |\n|---|---|\n| 1 | 0 |\n| 4 | 0 |\n"
    assert (
        "not read: shape n=1: a count of calls but no total (0, or rows without a count)"
        in read_profile_md(text).notes
    )


def test_a_given_definition_no_workload_names_is_noted_as_unused(
    data: Path, tmp_path: Path
) -> None:
    root = data / "flashinfer"
    workloads = root / "workloads" / "mla_paged" / "mla_paged_decode_h16_ckv512_kpe64_ps64.jsonl"
    source = root / "definitions" / "mla_paged" / "mla_paged_decode_h16_ckv512_kpe64_ps64.json"
    other = json.loads(source.read_text(encoding="utf-8"))
    other["name"] = "other"
    given = tmp_path / "other.json"
    given.write_text(json.dumps(other), encoding="utf-8")
    trace = read_trace(workloads, definition=given)
    assert trace.notes == (
        "definition other (given) was not used: the workloads name "
        "mla_paged_decode_h16_ckv512_kpe64_ps64",
    )
    # The definition they name, given, is used without a note.
    assert read_trace(workloads, definition=source).notes == ()


def test_one_shape_past_max_shapes_is_one_more_shape() -> None:
    calls = [
        Call(op="softmax", args=(TensorArg(name="x", shape=(4, n), dtype="float16"),))
        for n in (8, 8, 16)
    ]
    other = profile_calls(calls, max_shapes=1).op().other
    assert other is not None and (other.args, other.calls) == ("1 more shape", 1)
