"""An op the trace names by a kernel's own function gets a note that no signature read it."""

from __future__ import annotations

from kernelopt.workload import Call, TensorArg, profile_calls


def _call(op: str) -> Call:
    return Call(op=op, args=(TensorArg(name="inp", shape=(8, 1), dtype="float32"),))


def test_a_function_name_no_signature_knows_is_noted_once() -> None:
    profile = profile_calls([_call("row_softmax"), _call("row_softmax")])
    assert profile.notes == (
        "op row_softmax: no signature names its axes, so only the rules for any op ran; "
        "record it under a known op (@recorder(op='softmax'); built in: mla_decode, "
        "flash_attn, varlen_attention, attention, softmax, sum, norm, topk, gemm, layer_norm, "
        "layer_norm_backward, gather; their other names in docs/workload.md, Op signatures) "
        "or register one (register_signature)",
    )


def test_known_ops_and_framework_ops_get_no_such_note() -> None:
    profile = profile_calls([_call("aten::empty")])
    assert not any("no signature" in note for note in profile.notes)
