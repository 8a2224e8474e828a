"""Op signatures: named axes, dim arguments, aliases, fallbacks and the registry."""

from __future__ import annotations

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import (
    AxisValue,
    Call,
    DimAxis,
    OpSignature,
    ScalarArg,
    TensorArg,
    find_signature,
    profile_calls,
    register_signature,
    registered_signatures,
    unregister_signature,
)
from kernelopt.workload.calls import ValuesSummary
from kernelopt.workload.signatures import BUILTIN_SIGNATURES, extract_axes


def _t(name: str, *shape: int, values: ValuesSummary | None = None) -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype="bfloat16", values=values)


def _axes(call: Call) -> dict[str, float]:
    axes, problem = extract_axes(call, find_signature(call.op))
    assert problem is None
    return {a.name: a.value for a in axes}


def test_mla_decode_axes_with_values_and_aliases() -> None:
    call = Call(
        op="flash_mla_with_kvcache",
        args=(
            _t("q", 32, 2, 128, 576),
            _t("k_cache", 512, 64, 1, 576),
            _t("block_table", 32, 16),
            _t("cache_seqlens", 32, values=ValuesSummary(min=10, max=1000, mean=500.5)),
            ScalarArg(name="head_dim_v", value=512),
        ),
    )
    assert _axes(call) == {
        "b": 32,
        "s_q": 2,
        "h_q": 128,
        "d_qk": 576,
        "num_blocks": 512,
        "page": 64,
        "h_kv": 1,
        "d": 576,
        "max_blocks": 16,
        "seqlen": 1000,
        "seqlen_min": 10,
        "seqlen_mean": 500.5,
        "d_v": 512,
    }


def test_seqlen_from_a_scalar_when_no_values_were_recorded() -> None:
    call = Call(op="mla_decode", args=(_t("q", 1, 1, 16, 576), ScalarArg(name="seqlen", value=7)))
    assert _axes(call)["seqlen"] == 7


@pytest.mark.parametrize(
    ("op", "shape", "dim", "n", "rows"),
    [
        ("aten::softmax", (4, 1, 8), 1, 1, 32),
        ("softmax", (4, 1, 8), -1, 8, 4),
        ("softmax", (4, 1, 8), None, 8, 4),  # default dim -1
        ("aten::sum", (4, 3, 8), (1, 2), 24, 4),
        ("aten::sum", (4, 3, 8), None, 96, 1),  # no dim: every element
        ("mean", (4, 3, 8), (), 96, 1),  # dim=[] reduces everything too
    ],
)
def test_dim_axes(op: str, shape: tuple[int, ...], dim: object, n: int, rows: int) -> None:
    args: tuple = (_t("self", *shape),)
    if dim is not None:
        args += (ScalarArg(name="dim", value=dim),)  # type: ignore[arg-type]
    axes = _axes(Call(op=op, args=args))
    assert (axes["n"], axes["rows"]) == (n, rows)


def test_topk_and_gather_select_axes() -> None:
    topk = Call(
        op="aten::topk",
        args=(_t("self", 4, 16), ScalarArg(name="k", value=16), ScalarArg(name="dim", value=-1)),
    )
    assert _axes(topk) == {"n": 16, "rows": 4, "k": 16}
    index_select = Call(
        op="aten::index_select",
        args=(_t("self", 10, 4), ScalarArg(name="dim", value=0), _t("index", 12)),
    )
    assert _axes(index_select) == {"k": 12, "n": 10, "rows": 4}
    gather = Call(
        op="gather", args=(_t("x", 4, 8), ScalarArg(name="dim", value=1), _t("index", 4, 3))
    )
    # No strides recorded: k <= n is known, whether the index is shared is not.
    assert _axes(gather) == {"k": 3, "n": 8, "rows": 4, "k_le_n": 1.0}


def test_lower_rank_aligns_right_and_higher_rank_falls_back() -> None:
    sdpa = Call(op="sdpa", args=(_t("query", 4, 1, 8), _t("key", 4, 16, 8), _t("value", 4, 16, 8)))
    assert _axes(sdpa) == {"h_q": 4, "s_q": 1, "d_qk": 8, "h_kv": 4, "s_kv": 16, "d_v": 8}
    bad = Call(op="mla_decode", args=(_t("q", 1, 2, 3, 4, 5),))
    axes, problem = extract_axes(bad, find_signature("mla_decode"))
    assert problem is not None and "Expected q with at most 4 dims" in problem
    assert [a.name for a in axes] == ["q[0]", "q[1]", "q[2]", "q[3]", "q[4]"]
    profile = profile_calls([bad])
    assert any("its axes keep their argument names" in n for n in profile.notes)


def test_bad_dim_falls_back_with_a_reason() -> None:
    call = Call(op="softmax", args=(_t("x", 4, 8), ScalarArg(name="dim", value=5)))
    axes, problem = extract_axes(call, find_signature("softmax"))
    assert problem is not None and "Expected a dim in [-2, 2)" in problem
    assert {a.name for a in axes} == {"x[0]", "x[1]"}


def test_raw_axes_of_unknown_ops() -> None:
    call = Call(
        op="my_op",
        args=(
            _t("x", 3, 1),
            ScalarArg(name="k", value=5),
            ScalarArg(name="dim", value=1),
            ScalarArg(name="arg2", value=0),
            ScalarArg(name="flag", value=True),
            _t("lens", 3, values=ValuesSummary(min=1, max=3, mean=2)),
        ),
    )
    axes, problem = extract_axes(call, None)
    assert problem is None
    assert [(a.name, a.source, a.kind) for a in axes] == [
        ("x[0]", "x.shape[0]", "shape"),
        ("x[1]", "x.shape[1]", "shape"),
        ("k", "k", "scalar"),
        ("lens[0]", "lens.shape[0]", "shape"),
        ("lens.max", "lens.max()", "values"),
        ("lens.min", "lens.min()", "values"),
        ("lens.mean", "lens.mean()", "values"),
    ]


def test_matching_is_by_short_name_without_case_and_with_wildcards() -> None:
    sig = OpSignature(name="fi", ops=("gqa_paged_decode_*",), tensors={"q": ("b", "h", "d")})
    assert sig.matches("gqa_paged_decode_h32_kv8_d128_ps1")
    assert sig.matches("ns::GQA_PAGED_DECODE_x")
    assert not sig.matches("gqa_paged_prefill")
    assert find_signature("aten::_softmax").name == "softmax"  # type: ignore[union-attr]
    assert find_signature("nothing_like_it") is None


def test_register_replace_and_unregister() -> None:
    mine = OpSignature(
        name="my_norm",
        ops=("my_norm",),
        family="normalization",
        tensors={"x": ("tokens", "hidden")},
        reduced="hidden",
    )
    register_signature(mine)
    assert registered_signatures()[0] == mine
    assert find_signature("my_norm") == mine
    with pytest.raises(InputError, match="a new signature name"):
        register_signature(mine)
    with pytest.raises(InputError, match="a new signature name"):
        register_signature(OpSignature(name="softmax", ops=("softmax",)))
    # Replacing a built-in shadows it.
    custom = OpSignature(
        name="softmax",
        ops=("softmax",),
        family="softmax",
        dim_axes=(DimAxis(name="cols", arg="x"),),
        reduced="cols",
    )
    register_signature(custom, replace=True)
    assert find_signature("softmax") == custom
    assert sum(s.name == "softmax" for s in registered_signatures()) == 1
    unregister_signature("softmax")
    assert find_signature("softmax") in BUILTIN_SIGNATURES
    unregister_signature("my_norm")
    assert find_signature("my_norm") is None


def test_custom_extractor() -> None:
    def extract(call: Call) -> list[AxisValue]:
        x = call.arg("x")
        assert isinstance(x, TensorArg)
        return [
            AxisValue(
                name="tokens",
                value=x.shape[0] * x.shape[1],
                source="x.shape[0] * x.shape[1]",
                kind="derived",
            )
        ]

    register_signature(OpSignature(name="flat", ops=("flat",), extract=extract))
    axes = _axes(Call(op="flat", args=(_t("x", 3, 5),)))
    assert axes == {"tokens": 15}


def test_signature_validation() -> None:
    with pytest.raises(InputError, match="at least one op name"):
        OpSignature(name="x", ops=())
    with pytest.raises(InputError, match="select as"):
        OpSignature(name="x", ops=("x",), select=("k",))
    with pytest.raises(InputError, match="pairs"):
        OpSignature(name="x", ops=("x",), padded=(("a",),))


def test_a_recorded_functions_qualname_matches_by_its_last_part() -> None:
    for op in ("mla_decode", "Attention.mla_decode", "make.<locals>.mla_decode"):
        found = find_signature(op)
        assert found is not None and found.family == "mla-decode", op
    assert find_signature("mla_decode_extra") is None or find_signature(
        "mla_decode_extra"
    ).family != "mla-decode"  # fmt: skip
