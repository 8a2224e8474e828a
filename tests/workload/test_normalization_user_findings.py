"""Normalization ops (layer and RMS norm, forward and backward): the built-in signatures
that name ``rows`` and ``hidden``, what a normalization over one element gives, hints on a
reduced axis, and the masked-lanes note of a dominant reduced size one past a multiple of
16."""

from __future__ import annotations

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import (
    SIZE1_AXIS_SHORTCUT,
    Call,
    OpSignature,
    ScalarArg,
    Shortcut,
    TensorArg,
    find_shortcuts,
    find_signature,
    profile_calls,
    read_profile_md,
    register_signature,
    render_profile_md,
    shape_facts,
)
from kernelopt.workload.profile import OpProfile
from kernelopt.workload.shortcuts import DOMINANT_SHAPE_SPECIALIZATION
from kernelopt.workload.torch_trace import trace_from_events


def _t(name: str, *shape: int, dtype: str = "float16") -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype=dtype)


def _ln_backward(op: str, rows: int, hidden: int, duration_us: float = 10.0) -> Call:
    """One call of a LayerNorm backward launcher ``ln_bwd(dy, x, mean, rstd, w)``."""
    return Call(
        op=op,
        args=(
            _t("dy", rows, hidden),
            _t("x", rows, hidden),
            _t("mean", rows, dtype="float32"),
            _t("rstd", rows, dtype="float32"),
            _t("w", hidden),
        ),
        duration_us=duration_us,
    )


# The user's workload: 6 calls of one element, 2 of a column, then wider rows.
_SHAPES = [(1, 1)] * 6 + [(8, 1)] * 2 + [(1, 17), (64, 17), (1, 4097), (16, 4097)]


def _ln_backward_workload(op: str = "layer_norm_backward") -> OpProfile:
    return profile_calls([_ln_backward(op, rows, hidden) for rows, hidden in _SHAPES]).op(op)


def _rule(found: list[Shortcut], rule: str) -> list[Shortcut]:
    return [s for s in found if s.rule == rule]


# --- (a) built-in signatures: rows and hidden, once each ---------------------------------


@pytest.mark.parametrize(
    ("op", "signature"),
    [
        ("aten::layer_norm", "normalization"),
        ("aten::native_layer_norm", "normalization"),
        ("aten::rms_norm", "normalization"),
        ("aten::_fused_rms_norm", "normalization"),
        ("layer_norm", "normalization"),  # F.layer_norm or torch.layer_norm recorded
        ("Model.rms_norm", "normalization"),
        ("triton_layer_norm", "normalization"),
        ("fused_add_rms_norm", "normalization"),
        ("my_rmsnorm", "normalization"),
        ("rms_norm_fwd", "normalization"),
        ("layer_norm_forward", "normalization"),
        ("aten::native_layer_norm_backward", "normalization_backward"),
        ("aten::_fused_rms_norm_backward", "normalization_backward"),
        ("layer_norm_backward", "normalization_backward"),
        ("layer_norm_bwd", "normalization_backward"),
        ("rmsnorm_backward", "normalization_backward"),
        ("fused_layernorm_bwd", "normalization_backward"),
    ],
)
def test_normalization_ops_get_a_normalization_signature(op: str, signature: str) -> None:
    sig = find_signature(op)
    assert sig is not None and sig.name == signature and sig.family == "normalization"
    assert sig.reduced == ("hidden",)


@pytest.mark.parametrize(
    "op", ["norm", "batch_norm", "NativeLayerNormBackward0", "layer_norm_linear", "normalize"]
)
def test_other_ops_get_no_normalization_signature(op: str) -> None:
    sig = find_signature(op)
    assert sig is None or sig.family != "normalization"


def test_a_layer_norm_backward_launcher_names_rows_and_hidden_once_each() -> None:
    op = _ln_backward_workload()
    assert op.signature == "normalization_backward" and op.family == "normalization"
    assert [(a.name, a.source, a.min, a.max) for a in op.axes] == [
        ("rows", "x.shape[0]", 1, 64),
        ("hidden", "x.shape[1]", 1, 4097),
    ]
    found = find_shortcuts(op)
    size1 = [s for s in found if s.catalog_ids == (SIZE1_AXIS_SHORTCUT,)]
    # Was 7 size1-axis findings: dy[0], x[0], mean[0], rstd[0], dy[1], x[1], w[0].
    assert sorted((s.rule, s.axis, s.guard) for s in size1) == [
        ("size1-axis", "rows", "x.shape[0] == 1"),
        ("size1-reduction", "hidden", "x.shape[1] == 1"),
    ]
    (rows,) = _rule(found, "size1-axis")
    assert "no sum over rows" in rows.message and "dx is computed as before" in rows.message
    assert "a path without this axis" not in rows.message


def test_the_torch_layouts_read_rows_and_hidden() -> None:
    # torch keeps mean and rstd as [rows, 1]; normalized_shape names the normalized dims.
    call = Call(
        op="aten::native_layer_norm_backward",
        args=(
            _t("grad_out", 2, 3, 8),
            _t("input", 2, 3, 8),
            ScalarArg(name="normalized_shape", value=(3, 8)),
            _t("mean", 2, 1, 1, dtype="float32"),
            _t("rstd", 2, 1, 1, dtype="float32"),
            _t("weight", 3, 8),
            _t("bias", 3, 8),
        ),
    )
    op = profile_calls([call]).op()
    assert [(a.name, a.max, a.source) for a in op.axes] == [
        ("rows", 2, "input.shape[0]"),
        ("hidden", 24, "input.shape[1] * input.shape[2]"),
    ]


def test_a_3d_input_folds_its_leading_dims_into_rows() -> None:
    # F.rms_norm(x[4, 1, 512], (512,), w): 4 rows of 512, no size-1 finding for x[1].
    call = Call(
        op="rms_norm",
        args=(
            _t("input", 4, 1, 512),
            ScalarArg(name="normalized_shape", value=(512,)),
            _t("weight", 512),
        ),
    )
    op = profile_calls([call]).op()
    assert [(a.name, a.max, a.source) for a in op.axes] == [
        ("rows", 4, "input.shape[0] * input.shape[1]"),
        ("hidden", 512, "input.shape[2]"),
    ]
    assert _rule(find_shortcuts(op), "size1-axis") == []


def test_the_weight_gives_the_normalized_dims_without_normalized_shape() -> None:
    call = Call(op="layer_norm", args=(_t("x", 2, 3, 8), _t("w", 3, 8), _t("b", 3, 8)))
    op = profile_calls([call]).op()
    assert [(a.name, a.max) for a in op.axes] == [("rows", 2), ("hidden", 24)]


def test_a_torch_profiler_trace_of_layer_norm_backward_reads_rows_and_hidden() -> None:
    # As torch 2.13's profiler records native_layer_norm_backward (positional inputs).
    event = {
        "ph": "X",
        "cat": "cpu_op",
        "name": "aten::native_layer_norm_backward",
        "pid": 1,
        "tid": 1,
        "ts": 0,
        "dur": 5,
        "args": {
            "External id": 1,
            "Input Dims": [[4, 1], [4, 1], [], [4, 1], [4, 1], [1], [1], []],
            "Input type": ["float"] * 2 + ["ScalarList"] + ["float"] * 4 + ["ScalarList"],
            "Concrete Inputs": ["", "", "[1]", "", "", "", "", "[True, True, True]"],
        },
    }
    op = profile_calls(trace_from_events([event], source="t.json")).op()
    assert [(a.name, a.source) for a in op.axes] == [
        ("rows", "input.shape[0]"),
        ("hidden", "input.shape[1]"),
    ]
    (finding,) = _rule(find_shortcuts(op), "size1-reduction")
    assert "dx = 0" in finding.message


def test_other_tensors_keep_their_own_names() -> None:
    # Partial sums of another number of rows repeat neither axis.
    call = Call(
        op="layer_norm_backward",
        args=(_t("dy", 64, 512), _t("x", 64, 512), _t("w", 512), _t("partials", 4, 512)),
    )
    op = profile_calls([call]).op()
    assert [a.name for a in op.axes] == ["rows", "hidden", "partials[0]", "partials[1]"]


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ((_t("dy", 8, 64), _t("x", 8, 32)), "Expected dy the shape of x, got [8, 64] and [8, 32]"),
        ((_t("dy", 8, 64), _t("x", 8, 64), _t("w", 32)), "Expected w with the last dims of x"),
    ],
)
def test_a_call_the_layout_does_not_fit_keeps_its_names_with_a_note(
    args: tuple[TensorArg, ...], why: str
) -> None:
    profile = profile_calls([Call(op="layer_norm_backward", args=args)])
    assert "rows" not in [a.name for a in profile.op().axes]
    assert any(why in note for note in profile.notes), profile.notes


def test_normalized_shape_that_is_not_the_last_dims_is_noted() -> None:
    call = Call(
        op="layer_norm",
        args=(_t("input", 4, 16), ScalarArg(name="normalized_shape", value=(8,))),
    )
    profile = profile_calls([call])
    assert any(
        "Expected the last dims of input to be normalized_shape [8], got [4, 16]" in note
        for note in profile.notes
    ), profile.notes


def test_the_reduced_length_is_the_reduce_len_fact() -> None:
    assert shape_facts(_ln_backward_workload())["reduce_len"] == 1


# --- (b) a normalization over one element is a constant, not a copy ----------------------


def test_a_users_own_layer_norm_backward_signature_says_dx_is_zero() -> None:
    register_signature(
        OpSignature(
            name="layer_norm_backward",
            ops=("layer_norm_backward",),
            family="normalization",
            tensors={
                "dy": ("rows", "hidden"),
                "x": ("rows", "hidden"),
                "mean": ("rows",),
                "rstd": ("rows",),
                "w": ("hidden",),
            },
            reduced=("hidden",),
        )
    )
    (finding,) = _rule(find_shortcuts(_ln_backward_workload()), "size1-reduction")
    assert finding.catalog_ids == (SIZE1_AXIS_SHORTCUT,)
    assert "each output reads one input element" not in finding.message
    message = finding.message
    assert message.startswith("layer norm backward over a size-1 axis (hidden = 1) in 66.7%")
    for part in ("x - mean is exactly 0", "dx = 0", "weight gradient is 0", "summed over the rows"):
        assert part in message
    assert "compare with a tolerance" in message


def _one_element(op: str, family: str = "normalization") -> Shortcut:
    register_signature(
        OpSignature(
            name=f"sig_{op}",
            ops=(op,),
            family=family,
            tensors={"x": ("tokens", "hidden")},
            reduced=("hidden",),
        )
    )
    calls = [Call(op=op, args=(_t("x", 7, 1),))]
    (finding,) = _rule(find_shortcuts(profile_calls(calls)), "size1-reduction")
    return finding


def test_a_layer_norm_over_one_element_is_its_bias() -> None:
    message = _one_element("my_layer_norm").message
    assert message.startswith("layer norm over a size-1 axis (hidden = 1)")
    assert "the output is the bias (0 without one), whatever x" in message
    assert "not a copy of the input" in message


def test_an_rms_norm_over_one_element_is_elementwise() -> None:
    message = _one_element("my_rmsnorm").message
    assert message.startswith("RMS norm over a size-1 axis (hidden = 1)")
    assert "x * rsqrt(x² + eps) * weight" in message and "x - mean" not in message


def test_an_rms_norm_backward_over_one_element_keeps_its_row_sum() -> None:
    message = _one_element("rms_norm_bwd").message
    assert "dx = dy * weight * eps * (x² + eps)^(-3/2)" in message
    assert "still a reduction over rows" in message


def test_a_normalization_of_another_name_says_both_kinds() -> None:
    message = _one_element("my_norm").message
    assert message.startswith("normalization over a size-1 axis (hidden = 1)")
    assert "no copy of the input" in message
    assert "layer norm" in message and "RMS norm" in message


def test_a_reduction_of_ones_own_keeps_the_general_sentence() -> None:
    message = _one_element("my_reduce", family="reduction").message
    assert message.endswith("each output reads one input element; skip the reduction loop")


# --- (c) hints on a reduced axis -----------------------------------------------------------


def test_a_hint_on_a_reduced_axis_is_the_findings_sentence() -> None:
    register_signature(
        OpSignature(
            name="my_scan",
            ops=("my_scan",),
            family="reduction",
            tensors={"x": ("rows", "hidden")},
            reduced=("hidden",),
            hints={"hidden": "each row's scan is its single element; return x"},
        )
    )
    calls = [Call(op="my_scan", args=(_t("x", 7, 1),))]
    (finding,) = _rule(find_shortcuts(profile_calls(calls)), "size1-reduction")
    assert finding.message == (
        "hidden = 1 in 100% of calls: each row's scan is its single element; return x"
    )


def test_a_hint_on_the_key_axis_of_attention_is_the_findings_sentence() -> None:
    register_signature(
        OpSignature(
            name="my_attention",
            ops=("my_attention",),
            family="attention",
            tensors={"q": ("b", "s_q", "d"), "k": ("b", "s_kv", "d")},
            reduced=("s_kv",),
            hints={"s_kv": "one key: the output is v"},
        )
    )
    calls = [Call(op="my_attention", args=(_t("q", 2, 4, 8), _t("k", 2, 1, 8)))]
    (finding,) = _rule(find_shortcuts(profile_calls(calls)), "single-key-attention")
    assert finding.message == "s_kv = 1 in 100% of calls: one key: the output is v"


def test_a_hint_on_k_of_a_top_k_is_the_findings_sentence() -> None:
    register_signature(
        OpSignature(
            name="my_topk",
            ops=("my_topk",),
            tensors={"x": ("rows", "n")},
            scalars={"k": "k"},
            select=("k", "n"),
            hints={"k": "the row's largest score; no sort"},
        )
    )
    calls = [Call(op="my_topk", args=(_t("x", 4, 64), ScalarArg(name="k", value=1)))]
    (finding,) = _rule(find_shortcuts(profile_calls(calls)), "select-one")
    assert finding.message == "k = 1 in 100% of calls: the row's largest score; no sort"


def test_a_hint_on_a_fixed_axis_is_refused() -> None:
    with pytest.raises(InputError) as error:
        OpSignature(
            name="my_decode",
            ops=("my_decode",),
            tensors={"q": ("b", "h_kv")},
            fixed=("h_kv",),
            hints={"h_kv": "one KV head"},
        )
    assert str(error.value) == (
        "my_decode.hints: Expected hints only for axes that are not fixed (a fixed axis gives "
        "no finding), got h_kv"
    )


# --- (d) a reduced size one past a multiple of 16 -------------------------------------------


def _dominant(op: OpProfile) -> Shortcut:
    (finding,) = _rule(find_shortcuts(op), "dominant-shape")
    return finding


def test_a_dominant_hidden_one_past_a_power_of_two_names_its_masked_lanes() -> None:
    calls = [_ln_backward("layer_norm_backward", 16, 4097, 900.0)] * 3
    calls += [_ln_backward("layer_norm_backward", 16, 512, 10.0)] * 2
    finding = _dominant(profile_calls(calls).op())
    assert finding.catalog_ids == (DOMINANT_SHAPE_SPECIALIZATION,)
    assert finding.guard == "x.shape[1] == 4097"
    assert (
        "hidden = 4097 is one past 4096: one block of next_power_of_2(4097) = 8192 lanes along "
        "hidden leaves 4095 of them masked off: 50.0% of the block's registers and arithmetic "
        "spent on no element"
    ) in finding.message
    assert "tiles of 16 to 256 leaves a last tile of one element" in finding.message


def test_a_dominant_reduction_size_gets_the_note_too() -> None:
    calls = [
        Call(op="sum", args=(_t("x", 8, n), ScalarArg(name="dim", value=-1)), duration_us=us)
        for n, us in [(4113, 900.0)] * 3 + [(512, 10.0)] * 2
    ]
    message = _dominant(profile_calls(calls).op()).message
    assert "n = 4113 is one past 4112" in message and "4079 of them masked off" in message
    assert "tiles of 16 leaves a last tile of one element" in message


def test_a_size_that_is_a_power_of_two_gets_no_note() -> None:
    calls = [_ln_backward("layer_norm_backward", 16, 4096, 900.0)] * 3
    calls += [_ln_backward("layer_norm_backward", 16, 512, 10.0)] * 2
    assert "one past" not in _dominant(profile_calls(calls).op()).message


def test_the_gemm_note_keeps_its_wording() -> None:
    calls = [
        Call(op="gemm", args=(_t("a", m, 64), _t("b", 64, 96)), duration_us=us)
        for m, us in [(4097, 900.0)] * 3 + [(64, 10.0)] * 2
    ]
    message = _dominant(profile_calls(calls).op()).message
    assert message.endswith(
        "m = 4097 is one past 4096: power-of-two tiles of 16 to 256 along m leave a last tile "
        "of one row, a whole tile of work for it (and possibly one more wave of programs); "
        "handling that last row apart avoids it"
    )
    assert "masked" not in message


def test_the_key_axis_of_attention_gets_no_masked_lanes_note() -> None:
    calls = [
        Call(
            op="scaled_dot_product_attention",
            args=(_t("q", 1, 2, 4, 64), _t("k", 1, 2, s, 64), _t("v", 1, 2, s, 64)),
            duration_us=us,
        )
        for s, us in [(4097, 900.0)] * 3 + [(512, 10.0)] * 2
    ]
    assert "masked off" not in _dominant(profile_calls(calls).op()).message


# --- a profile read back finds the same ------------------------------------------------------


def test_a_profile_read_back_gives_the_same_findings() -> None:
    profile = profile_calls([_ln_backward("layer_norm_backward", r, h) for r, h in _SHAPES])
    again = read_profile_md(render_profile_md(profile))
    assert find_shortcuts(again) == find_shortcuts(profile)
