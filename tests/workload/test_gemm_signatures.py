"""GEMM ops: the built-in ``gemm`` signature, its size-1 hints, the ragged-tile note of the
dominant-shape rule and the m/n/k shape facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt.workload import (
    Call,
    OpSignature,
    ScalarArg,
    TensorArg,
    find_shortcuts,
    find_signature,
    profile_calls,
    profile_trace,
    read_profile_md,
    register_signature,
    shape_facts,
    write_profile_md,
)
from kernelopt.workload.profile import OpProfile
from kernelopt.workload.report import render_report
from kernelopt.workload.signatures import extract_axes


def _t(name: str, *shape: int) -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype="float16")


def _axes(call: Call) -> dict[str, float]:
    axes, problem = extract_axes(call, find_signature(call.op))
    assert problem is None
    return {a.name: a.value for a in axes}


def _sources(call: Call) -> dict[str, str]:
    axes, _ = extract_axes(call, find_signature(call.op))
    return {a.name: a.source for a in axes}


def _gemm_bias_gelu(m: int, duration_us: float) -> Call:
    """One call of a Triton GEMM with a bias and GELU epilogue, recorded by its own name."""
    return Call(
        op="gemm_bias_gelu",
        args=(_t("a", m, 64), _t("b", 64, 96), _t("bias", 96)),
        duration_us=duration_us,
    )


def _decode_gemm_workload() -> OpProfile:
    """30 calls: 80 % M = 1 (GEMV), 10 % M = 4097, 10 % M = 64; M = 4097 takes the time."""
    calls = []
    for step in range(30):
        m = 1 if step % 5 else (4097 if step % 10 == 0 else 64)
        calls.append(_gemm_bias_gelu(m, {1: 10.0, 64: 12.0, 4097: 900.0}[m]))
    return profile_calls(calls).op("gemm_bias_gelu")


@pytest.mark.parametrize(
    "op", ["aten::mm", "aten::matmul", "aten::bmm", "aten::addmm", "aten::linear", "matmul"]
)
def test_torch_gemm_ops_have_the_gemm_signature(op: str) -> None:
    sig = find_signature(op)
    assert sig is not None and sig.name == "gemm" and sig.family == "gemm"


@pytest.mark.parametrize(
    "op",
    [
        "_VariableFunctionsClass.mm",  # torch.mm wrapped by the Recorder
        "linear",  # torch.nn.functional.linear wrapped by the Recorder
        "gemm",
        "gemm_bias_gelu",
        "fused_gemm",
        "Model.my_gemm_v2",
    ],
)
def test_recorded_gemm_names_have_the_gemm_signature(op: str) -> None:
    sig = find_signature(op)
    assert sig is not None and sig.name == "gemm"


def test_ops_merely_containing_mm_are_no_gemm() -> None:
    for op in ("aten::summ", "comm", "mma_sync", "gemmini"):
        sig = find_signature(op)
        assert sig is None or sig.name != "gemm", op


def test_mm_axes_from_the_aten_schema_names() -> None:
    call = Call(op="aten::mm", args=(_t("self", 1, 64), _t("mat2", 64, 96)))
    assert _axes(call) == {"m": 1, "n": 96, "k": 64}
    assert _sources(call) == {"m": "self.shape[0]", "n": "mat2.shape[1]", "k": "self.shape[1]"}


def test_addmm_takes_its_bias_first_and_reads_no_scale_as_a_size() -> None:
    # Without its operand table, addmm's self (the bias) would be A, and the profiler's
    # beta = 1 an axis that is 1 in every call.
    call = Call(
        op="aten::addmm",
        args=(
            _t("self", 96),
            _t("mat1", 4, 64),
            _t("mat2", 64, 96),
            ScalarArg(name="beta", value=1),
            ScalarArg(name="alpha", value=1),
        ),
    )
    assert _axes(call) == {"m": 4, "n": 96, "k": 64}


def test_recorded_addmm_reads_positional_operands() -> None:
    call = Call(
        op="_VariableFunctionsClass.addmm",
        args=(_t("arg0", 96), _t("arg1", 1, 64), _t("arg2", 64, 96)),
    )
    assert _axes(call) == {"m": 1, "n": 96, "k": 64}


def test_linear_reads_the_weight_as_n_by_k() -> None:
    call = Call(op="aten::linear", args=(_t("input", 5, 64), _t("weight", 96, 64), _t("bias", 96)))
    assert _axes(call) == {"m": 5, "n": 96, "k": 64}
    assert _sources(call)["n"] == "weight.shape[0]"


def test_linear_of_a_batch_of_one_token_sequences_is_no_gemv() -> None:
    # torch folds [8, 1, k] into one GEMM of m = 8: naming s = 1 as m would call it a GEMV.
    call = Call(op="linear", args=(_t("arg0", 8, 1, 64), _t("arg1", 96, 64)))
    assert _axes(call) == {"m": 8, "n": 96, "k": 64}
    assert _sources(call)["m"] == "arg0.shape[0] * arg0.shape[1]"


def test_linear_without_a_bias() -> None:
    call = Call(
        op="linear",
        args=(_t("arg0", 2, 64), _t("arg1", 96, 64), ScalarArg(name="arg2", value=None)),
    )
    assert _axes(call) == {"m": 2, "n": 96, "k": 64}


def test_bmm_has_a_batch_axis() -> None:
    call = Call(op="aten::bmm", args=(_t("self", 6, 1, 64), _t("mat2", 6, 64, 96)))
    assert _axes(call) == {"batch": 6, "m": 1, "n": 96, "k": 64}
    assert _sources(call)["batch"] == "self.shape[0]"


def test_matmul_of_vectors_names_no_m_or_n() -> None:
    vector_matrix = Call(op="matmul", args=(_t("arg0", 64), _t("arg1", 64, 96)))
    matrix_vector = Call(op="matmul", args=(_t("arg0", 5, 64), _t("arg1", 64)))
    assert _axes(vector_matrix) == {"n": 96, "k": 64}
    assert _axes(matrix_vector) == {"m": 5, "k": 64}


def test_user_gemm_keeps_other_arguments_under_their_names() -> None:
    call = Call(
        op="gemm_bias_gelu",
        args=(_t("a", 3, 64), _t("b", 64, 96), _t("bias", 96), ScalarArg(name="split_k", value=4)),
    )
    assert _axes(call) == {"m": 3, "n": 96, "k": 64, "split_k": 4}


def test_k_that_differs_between_a_and_b_keeps_argument_names_and_says_why() -> None:
    call = Call(op="gemm_bias_gelu", args=(_t("a", 3, 64), _t("b", 32, 96)))
    axes, problem = extract_axes(call, find_signature(call.op))
    assert [a.name for a in axes] == ["a[0]", "a[1]", "b[0]", "b[1]"]
    assert problem == (
        "signature gemm: Expected axis k the same in a.shape[1] and b.shape[0], got 64 and "
        "32; its axes keep their argument names"
    )


def test_batch_dims_that_differ_keep_argument_names() -> None:
    call = Call(op="matmul", args=(_t("arg0", 2, 3, 64), _t("arg1", 4, 64, 96)))
    axes, problem = extract_axes(call, find_signature(call.op))
    assert "m" not in {a.name for a in axes}
    assert problem is not None and "Expected the batch dims the same in arg0 and arg1" in problem


def test_user_registered_signature_wins_over_the_builtin_gemm() -> None:
    register_signature(
        OpSignature(
            name="my_gemm",
            ops=("gemm_bias_gelu",),
            family="gemm",
            tensors={"a": ("rows", "inner"), "b": ("inner", "cols")},
        )
    )
    sig = find_signature("gemm_bias_gelu")
    assert sig is not None and sig.name == "my_gemm"
    assert _axes(_gemm_bias_gelu(3, 1.0)) == {"rows": 3, "inner": 64, "cols": 96, "bias[0]": 96}


def test_decode_gemm_profile_names_m_n_k_with_family_gemm() -> None:
    op = _decode_gemm_workload()
    assert op.family == "gemm" and op.signature == "gemm"
    assert [a.name for a in op.axes] == ["m", "n", "k"]


def test_m_of_one_is_described_as_a_gemv() -> None:
    findings = [s for s in find_shortcuts(_decode_gemm_workload()) if s.rule == "size1-axis"]
    assert [(s.axis, s.guard) for s in findings] == [("m", "a.shape[0] == 1")]
    message = findings[0].message
    assert message.startswith("m = 1 in 80.0% of calls")
    for words in ("GEMV", "memory-bound", "tl.dot pads", "16 rows", "split-K"):
        assert words in message
    # The generic advice speaks of loops and masks, not of what a GEMV needs.
    assert "no loop over it" not in message


def test_dominant_m_one_past_a_power_of_two_notes_the_ragged_last_tile() -> None:
    (finding,) = [s for s in find_shortcuts(_decode_gemm_workload()) if s.rule == "dominant-shape"]
    assert finding.guard == "a.shape[0] == 4097"
    assert finding.message.endswith(
        "; m = 4097 is one past 4096: power-of-two tiles of 16 to 256 along m leave a last "
        "tile of one row, a whole tile of work for it (and possibly one more wave of "
        "programs); handling that last row apart avoids it"
    )


def test_ragged_note_along_k_speaks_of_a_k_step_and_no_wave() -> None:
    calls = [
        Call(op="mm", args=(_t("arg0", 64, 49), _t("arg1", 49, 96)), duration_us=5.0),
        Call(op="mm", args=(_t("arg0", 64, 64), _t("arg1", 64, 96)), duration_us=1.0),
    ]
    (finding,) = [s for s in find_shortcuts(profile_calls(calls)) if s.rule == "dominant-shape"]
    assert finding.message.endswith(
        "; k = 49 is one past 48: power-of-two tiles of 16 along k leave a last tile of one "
        "k step, a whole tile of work for it; handling that last k step apart avoids it"
    )


def test_no_ragged_note_for_tile_multiples_or_other_families() -> None:
    calls = [_gemm_bias_gelu(4096, 900.0), _gemm_bias_gelu(1, 1.0)]
    (finding,) = [s for s in find_shortcuts(profile_calls(calls)) if s.rule == "dominant-shape"]
    assert "one past" not in finding.message
    # 4097 rows of a softmax over 64: only a reduced axis of another family gets a note
    # (test_normalization_user_findings covers that one).
    softmax = [
        Call(
            op="softmax", args=(_t("x", 4097, 64), ScalarArg(name="dim", value=1)), duration_us=9.0
        ),
        Call(op="softmax", args=(_t("x", 64, 64), ScalarArg(name="dim", value=1)), duration_us=1.0),
    ]
    found = [s for s in find_shortcuts(profile_calls(softmax)) if s.rule == "dominant-shape"]
    assert found and all("one past" not in s.message for s in found)


def test_shape_facts_give_m_n_k_of_a_gemm() -> None:
    facts = shape_facts(_decode_gemm_workload())
    assert (facts["m"], facts["n"], facts["k"]) == (1, 96, 64)
    assert "reduce_len" not in facts


def test_shape_facts_give_b_from_the_batch_of_a_bmm() -> None:
    call = Call(op="bmm", args=(_t("arg0", 6, 1, 64), _t("arg1", 6, 64, 96)))
    facts = shape_facts(profile_calls([call]))
    assert (facts["b"], facts["m"], facts["n"], facts["k"]) == (6, 1, 96, 64)


def test_top_k_keeps_its_k_and_n_out_of_the_gemm_facts() -> None:
    call = Call(op="topk", args=(_t("x", 4, 64), ScalarArg(name="k", value=8)))
    facts = shape_facts(profile_calls([call]))
    assert "m" not in facts and "k" not in facts
    assert facts["select_k"] == 8


def test_inspect_of_a_recorded_gemm_names_its_axes(tmp_path: Path) -> None:
    lines = []
    for step in range(30):
        m = 1 if step % 5 else (4097 if step % 10 == 0 else 64)
        args = {
            "a": {"shape": [m, 64], "dtype": "float16"},
            "b": {"shape": [64, 96], "dtype": "float16"},
            "bias": {"shape": [96], "dtype": "float16"},
        }
        lines.append(json.dumps({"op": "gemm_bias_gelu", "args": args, "duration_us": 10.0}))
    trace = tmp_path / "calls.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    profile = profile_trace(trace)
    assert profile.notes == ()
    op = profile.op("gemm_bias_gelu")
    assert [a.name for a in op.axes] == ["m", "n", "k"]
    assert op.hint("m") is not None and "GEMV" in op.hint("m")  # type: ignore[operator]


def test_gemm_findings_survive_the_markdown_profile(tmp_path: Path) -> None:
    profile = profile_calls([_gemm_bias_gelu(1, 10.0)] * 4 + [_gemm_bias_gelu(4097, 900.0)])
    path = tmp_path / "workload_profile.md"
    write_profile_md(profile, path)
    again = read_profile_md(path)
    assert [s.message for s in find_shortcuts(again)] == [
        s.message for s in find_shortcuts(profile)
    ]
    assert any("GEMV" in s.message for s in find_shortcuts(again))
    assert any("one past 4096" in s.message for s in find_shortcuts(again))


def test_gemm_without_operands_it_knows_names_the_names_it_reads() -> None:
    call = Call(op="gemm_x", args=(_t("x", 3, 64), _t("w", 96, 64)))
    other = Call(op="gemm_x", args=(_t("x", 5, 64), _t("w", 96, 64)))
    profile = profile_calls([call, other])
    # One note for the calls of every shape: the arguments by name, and how many calls.
    assert profile.notes == (
        "gemm_x: signature gemm: Expected tensor A as one of a, A, self, input, mat1, x, arg0 "
        "and B as one of b, B, mat2, other, arg1, got arguments x, w; its axes keep their "
        "argument names (2 calls of 2 shapes)",
    )
    # Fit by no call, the signature is not named; the op's family is kept.
    op = profile.op("gemm_x")
    assert (op.signature, op.family) == (None, "gemm")
    assert "op gemm_x [no signature applied, gemm]" in render_report(profile, [])
    assert [a.name for a in profile.op("gemm_x").axes] == ["x[0]", "x[1]", "w[0]", "w[1]"]
