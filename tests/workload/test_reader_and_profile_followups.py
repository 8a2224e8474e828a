"""Hand-written tables, size-1 axes, padded lengths, a fresh recorder and the inspect
report, as a user meets them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import (
    Call,
    OpSignature,
    Recorder,
    ScalarArg,
    TensorArg,
    ValuesSummary,
    find_shortcuts,
    profile_calls,
    read_trace,
)
from kernelopt.workload.handwritten import read_handwritten_md
from kernelopt.workload.report import render_report


def _t(name: str, *shape: int, values: ValuesSummary | None = None) -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype="float16", values=values)


def _lens(low: float, high: float, mean: float, n: int = 8) -> TensorArg:
    return TensorArg(
        name="lens", shape=(n,), dtype="int32", values=ValuesSummary(min=low, max=high, mean=mean)
    )


# --------------------------------------------------------------------------------------
# A column headed n


def test_n_beside_other_axis_columns_is_an_axis() -> None:
    # Read as counts, the GEMM's n gave 4160 calls and no axis n.
    text = (
        "# Op: matmul\n\n| m | n | k | Count |\n|---|---|---|---|\n"
        "| 64 | 4096 | 4096 | 30 |\n| 1 | 4096 | 4096 | 10 |\n"
    )
    op = read_handwritten_md(text).op()
    assert op.calls == 40
    n = op.axis("n")
    assert n is not None and [v.value for v in n.values] == [4096]


def test_n_beside_axis_columns_and_a_time_is_no_count() -> None:
    profile = read_handwritten_md(
        "# Op: matmul\n\n| m | n | k | Time (us) |\n|---|---|---|---|\n"
        "| 64 | 4096 | 4096 | 4160 |\n"
    )
    assert profile.ops == ()
    assert any("m=64 n=4096 k=4096: no count or % of calls" in note for note in profile.notes)


def test_n_of_a_signature_axis_is_an_axis() -> None:
    # softmax's signature names its reduced axis n: a shape column beside it is no reason
    # to read n as counts.
    text = "# Op: softmax\n\n| Shape (rows) | n | % |\n|---|---|---|\n| 64 | 1 | 100% |\n"
    op = read_handwritten_md(text).op()
    n = op.axis("n")
    assert n is not None and n.size1_share == 1.0
    assert "size1-reduction" in {s.rule for s in find_shortcuts(op)}


def test_n_read_as_counts_is_said_so() -> None:
    profile = read_handwritten_md("# Op: foo\n\n| Shape | n |\n|---|---|\n| (3, 4) | 40 |\n")
    assert profile.op().calls == 40
    assert any("column n read as counts of calls" in note for note in profile.notes)


# --------------------------------------------------------------------------------------
# One bad size in a shape cell


def test_a_bad_size_keeps_the_other_dims_and_the_calls() -> None:
    text = (
        "# Op: mla_decode\n\n| Shape | Count |\n|---|---|\n| b=32 s_q=1 | 40 |\n"
        "| b=-3 s_q=4 | 60 |\n"
    )
    profile = read_handwritten_md(text)
    op = profile.op()
    assert op.calls == 100
    s_q = op.axis("s_q")
    assert s_q is not None and s_q.size1_share == pytest.approx(0.4)
    assert "line 6: not read: b = -3 (a shape size is a non-negative integer)" in profile.notes


def test_calls_of_a_shape_that_does_not_read_count_as_other() -> None:
    text = (
        "# Op: mla_decode\n\n| b | s_q | Count |\n|---|---|---|\n| 32 | 1 | 40 |\n"
        "| -3 | -4 | 60 |\n| **Total** | | 100 |\n"
    )
    profile = read_handwritten_md(text)
    op = profile.op()
    assert op.calls == 100 and [s.call_share for s in op.shapes] == [0.4]
    assert op.other is not None and op.other.calls == 60
    assert "line 6: its 60 calls of a shape not read counted as other" in profile.notes


def test_a_shape_with_a_bad_count_is_said_left_out() -> None:
    text = (
        "# Op: mla_decode\n\n| Shape | Count |\n|---|---|\n| b=32 s_q=1 | 40 |\n"
        "| b=3 s_q=4 | 6.5 |\n"
    )
    profile = read_handwritten_md(text)
    assert any(
        note.startswith("line 6: shape b=3 s_q=4 left out: its calls are not known")
        for note in profile.notes
    )


# --------------------------------------------------------------------------------------
# Size-1 axes are sizes


def test_statistics_of_values_are_no_size1_axes() -> None:
    index = TensorArg(
        name="slot_mapping",
        shape=(8,),
        dtype="int64",
        values=ValuesSummary(min=0, max=2, mean=1, std=1),
    )
    op = profile_calls([Call(op="kv_append", args=(_t("k", 8, 4, 64), index))] * 4).op()
    assert op.axis("slot_mapping.cv") is not None and op.axis("slot_mapping.mean") is not None
    assert op.size1_axes() == ()
    assert "size1-axis" not in {s.rule for s in find_shortcuts(op)}


def test_a_one_element_tensor_is_no_size1_axis() -> None:
    # vLLM's num_tokens_post_padded: a device scalar of shape [1].
    scalar = TensorArg(
        name="num_tokens_post_padded",
        shape=(1,),
        dtype="int32",
        values=ValuesSummary(min=128, max=128, mean=128),
    )
    op = profile_calls([Call(op="moe_align", args=(_t("topk_ids", 64, 2), scalar))] * 4).op()
    assert op.size1_axes() == ()
    assert "size1-axis" not in {s.rule for s in find_shortcuts(op)}


def test_one_sequence_is_no_evidence_of_equal_lengths() -> None:
    sig = OpSignature(
        name="seg",
        ops=("seg",),
        tensors={"x": ("t", "d")},
        values={"lens": "seq_len"},
        lengths="seq_len",
    )
    calls = [Call(op="seg", args=(_t("x", 64, 8), _lens(64, 64, 64, n=1)))] * 4
    op = profile_calls(calls, signatures=[sig]).op()
    assert "uniform-lengths" not in {s.rule for s in find_shortcuts(op)}


def test_a_hint_on_a_length_axis_gives_the_size1_finding() -> None:
    sig = OpSignature(
        name="mydec",
        ops=("mydec",),
        tensors={"q": ("b", "h", "d")},
        values={"lens": "seq_len"},
        lengths="seq_len",
        hints={"seq_len": "one token per sequence: the decode path"},
    )
    calls = [Call(op="mydec", args=(_t("q", 8, 4, 64), _lens(1, 1, 1)))] * 7 + [
        Call(op="mydec", args=(_t("q", 8, 4, 64), _lens(3, 9, 5)))
    ]
    op = profile_calls(calls, signatures=[sig]).op()
    found = {s.rule: s for s in find_shortcuts(op)}
    hit = found["size1-axis"]
    assert hit.axis == "seq_len" and hit.call_share == 0.875
    assert hit.message == "seq_len = 1 in 87.5% of calls: one token per sequence: the decode path"
    assert hit.guard == "lens.max() == 1"
    # Worded for any kernel: this op is no attention.
    uniform = found["uniform-lengths"].message
    assert "all lengths of a call are equal (seq_len)" in uniform and "sequences" not in uniform


# --------------------------------------------------------------------------------------
# Padded axes


def test_a_padded_axis_with_a_scalar_length_gives_its_fill() -> None:
    sig = OpSignature(
        name="mypad",
        ops=("mypad",),
        tensors={"x": ("padded_rows", "d")},
        scalars={"nrows": "rows"},
        padded=(("padded_rows", "rows"),),
    )
    call = Call(op="mypad", args=(_t("x", 128, 64), ScalarArg(name="nrows", value=40)))
    op = profile_calls([call] * 4, signatures=[sig]).op()
    fill = op.axis("padded_rows_fill")
    assert fill is not None and fill.mean == pytest.approx(40 / 128, abs=1e-4)
    (hit,) = [s for s in find_shortcuts(op) if s.rule == "bucket-padding"]
    assert hit.guard == "nrows < x.shape[0]"


def test_a_padded_pair_naming_no_axis_is_refused() -> None:
    with pytest.raises(InputError, match=r"mypad\.padded: Expected padded pairs .* got rows"):
        OpSignature(
            name="mypad",
            ops=("mypad",),
            tensors={"x": ("padded_rows", "d")},
            padded=(("padded_rows", "rows"),),
        )


# --------------------------------------------------------------------------------------
# Recorder(append=False)


def test_a_fresh_recorder_that_records_nothing_empties_the_file(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    with Recorder(path) as recorder:
        recorder.record("x", {"n": 3})
    assert path.read_text() != ""
    with Recorder(path, append=False):
        pass
    assert path.read_text() == ""
    # Nor is a file created where none was.
    with Recorder(tmp_path / "none.jsonl", append=False):
        pass
    assert not (tmp_path / "none.jsonl").exists()


# --------------------------------------------------------------------------------------
# inspect's line for the shapes not listed


@pytest.mark.parametrize(("top", "more", "share"), [(3, 197, "66.0%"), (40, 168, "37.3%")])
def test_the_rest_line_counts_every_shape_not_shown(top: int, more: int, share: str) -> None:
    calls = [
        Call(op="x", args=(_t("a", i + 1, 8),), duration_us=1.0)
        for i in range(200)
        for _ in range(1 + 50 * (i < 5))
    ]
    profile = profile_calls(calls)
    assert profile.op().distinct_shapes == 200 and len(profile.op().shapes) == 32
    report = render_report(profile, [], top=top)
    assert f"    +  {share} calls, {share} time in {more} more shapes" in report.splitlines()


# --------------------------------------------------------------------------------------
# A signature's family


@pytest.mark.parametrize(
    ("family", "nearest"), [("kv-cache-append", "elementwise"), ("quantization", "reduction")]
)
def test_a_family_the_catalog_lacks_is_refused(family: str, nearest: str) -> None:
    with pytest.raises(InputError, match=r"family: Expected a kernel family among") as error:
        OpSignature(name="x", ops=("x",), family=family)
    assert f"got {family!r}; {family} names a kernel" in str(error.value)
    assert f"nearest {nearest}" in str(error.value)


def test_a_family_alias_is_stored_as_its_family() -> None:
    assert OpSignature(name="x", ops=("x",), family="MatMul").family == "gemm"
    assert OpSignature(name="x", ops=("x",), family="mla_decode").family == "mla-decode"


def test_the_built_in_families_are_the_catalogs() -> None:
    from kernelopt.catalog.vocabulary import FAMILIES
    from kernelopt.workload.signatures import _KNOWN_FAMILIES, BUILTIN_SIGNATURES

    assert set(FAMILIES) >= _KNOWN_FAMILIES
    assert {sig.family for sig in BUILTIN_SIGNATURES} <= _KNOWN_FAMILIES


# --------------------------------------------------------------------------------------
# Wrong input formats


def _call(n: int) -> dict[str, object]:
    return {"op": "f", "args": {"x": {"shape": [n, 8], "dtype": "float16"}}}


@pytest.mark.parametrize(
    ("name", "text", "hint"),
    [
        ("list.json", json.dumps([_call(1), _call(2)]), "a JSON list of call records"),
        ("pretty.json", json.dumps(_call(1), indent=2), "one call record written over several"),
        ("p.md", "# Workload profile: f\n\n| n | Count |\n", "read_profile_md"),
    ],
)
def test_a_wrong_input_format_names_the_fix(
    tmp_path: Path, name: str, text: str, hint: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError, match="Expected a JSONL call trace") as error:
        read_trace(path)
    assert hint in str(error.value)


def test_options_a_format_does_not_read_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(_call(1)) + "\n")
    definition = tmp_path / "definition.json"
    definition.write_text("{}")
    with pytest.raises(InputError, match="Expected definition only with FlashInfer-Bench"):
        read_trace(path, definition=definition)
    with pytest.raises(InputError, match="Expected time only with a PyTorch profiler trace"):
        read_trace(path, time="device")
    with pytest.raises(InputError, match="definition: Expected a definition JSON file, got no"):
        read_trace(path, definition=tmp_path / "nope.json")


# --------------------------------------------------------------------------------------
# A signature that fits no call; cumulative offsets


def test_a_gemm_signature_that_fits_no_call_gives_one_counted_note() -> None:
    calls = [
        Call(
            op="moe_gemm",
            args=(_t("a", m, 64), _t("w", 8, 96, 64), ScalarArg(name="top_k", value=2)),
        )
        for m in (3, 5, 7)
    ]
    profile = profile_calls(calls)
    (note,) = profile.notes
    assert note.endswith(
        "got arguments a, w, top_k; its axes keep their argument names (3 calls of 3 shapes)"
    )
    op = profile.op()
    assert (op.signature, op.family) == (None, "gemm")


@pytest.mark.parametrize("name", ["cu_seqlens", "kv_indptr", "my_indptr"])
def test_cumulative_offsets_are_noted_for_any_op(name: str) -> None:
    offsets = TensorArg(
        name=name, shape=(33,), dtype="int32", values=ValuesSummary(min=0, max=32, mean=16)
    )
    profile = profile_calls([Call(op="rope", args=(_t("q", 32, 16, 128), offsets))])
    assert (
        f"rope: the values of {name} are cumulative offsets of packed sequences, not lengths "
        f"(their max is the total, their min 0); record torch.diff({name}) under a name of its "
        "own to profile the lengths"
    ) in profile.notes


# --------------------------------------------------------------------------------------
# Notes and messages


def test_a_long_number_in_a_malformed_line_is_shortened(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text('{"op": "f", "args": {"n": ' + "2" * 400 + "}}\n")
    (note, _) = read_trace(path).notes
    assert note == "line 1: args.n: Expected a finite number, got 222222222222... (400 digits)"


def test_inspect_says_a_signature_registered_in_python_is_not_seen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kernelopt import cli

    path = tmp_path / "calls.jsonl"
    path.write_text(
        json.dumps({"op": "row_softmax", "args": {"x": {"shape": [4, 8], "dtype": "f16"}}})
    )
    cli.main(["inspect", str(path)])
    out = capsys.readouterr().out
    assert "register_signature, in Python: this command reads a trace with the built-in" in out


def test_a_missing_definition_is_named_a_definition() -> None:
    from kernelopt.workload import read_flashinfer

    workloads = (
        Path(__file__).parent
        / "data/flashinfer/workloads/mla_paged/mla_paged_decode_h16_ckv512_kpe64_ps64.jsonl"
    )
    with pytest.raises(InputError, match="definition: Expected a definition JSON file, got no"):
        read_flashinfer(workloads, definition="nope.json")
