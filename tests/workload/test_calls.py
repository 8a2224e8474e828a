"""Call records: validation of JSON call records and dtype names."""

from __future__ import annotations

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import Call, ScalarArg, TensorArg, ValuesSummary, canonical_dtype
from kernelopt.workload.calls import parse_call_record


def test_parse_valid_record() -> None:
    call, duration = parse_call_record(
        {
            "op": "mla_decode",
            "args": {
                "q": {"shape": [32, 1, 128, 576], "dtype": "torch.bfloat16"},
                "cache_seqlens": {
                    "shape": [32],
                    "dtype": "int32",
                    "values": {"min": 1, "max": 4096, "mean": 2000.5},
                },
                "softmax_scale": 0.0417,
                "dims": [1, 2],
                "causal": True,
                "name": "x",
                "none": None,
            },
            "duration_us": 12,
            "ts": 99,  # extra top-level keys are ignored
        }
    )
    assert duration == 12.0
    assert call.op == "mla_decode"
    q = call.arg("q")
    assert isinstance(q, TensorArg) and q.shape == (32, 1, 128, 576) and q.dtype == "bfloat16"
    seqlens = call.arg("cache_seqlens")
    assert isinstance(seqlens, TensorArg)
    assert seqlens.values == ValuesSummary(min=1, max=4096, mean=2000.5)
    assert call.arg("dims") == ScalarArg(name="dims", value=(1, 2))
    assert call.label.startswith("q=[32,1,128,576]:bfloat16 cache_seqlens=[32]:int32{min=1,")
    assert "causal=true" in call.label and 'name="x"' in call.label


def test_list_of_tensors_is_expanded() -> None:
    call, _ = parse_call_record(
        {
            "op": "cat",
            "args": {
                "tensors": [
                    {"shape": [2, 3], "dtype": "float32"},
                    {"shape": [4, 3], "dtype": "float32"},
                ]
            },
        }
    )
    assert [a.name for a in call.args] == ["tensors.0", "tensors.1"]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ([1, 2], "Expected a JSON object, got list"),
        ({"args": {}}, "Expected an op name string"),
        ({"op": ""}, "Expected a non-empty op name"),
        ({"op": "a\nb"}, "Expected an op name without control characters"),
        ({"op": "x", "args": {"a\tb": 1}}, "Expected an argument name without control characters"),
        ({"op": "a\ud800"}, "Expected an op name without lone surrogates"),
        ({"op": "x", "args": [1]}, "Expected args as a JSON object"),
        ({"op": "x", "args": {"q": {"shape": [2, -1], "dtype": "float32"}}}, "dims in [0, 2**40]"),
        ({"op": "x", "args": {"q": {"shape": [2**41], "dtype": "float32"}}}, "dims in [0, 2**40]"),
        ({"op": "x", "args": {"q": {"shape": [2.0], "dtype": "float32"}}}, "integer dims"),
        ({"op": "x", "args": {"q": {"shape": [True], "dtype": "float32"}}}, "integer dims"),
        ({"op": "x", "args": {"q": {"shape": 3, "dtype": "float32"}}}, "Expected a shape list"),
        ({"op": "x", "args": {"q": {"shape": [3]}}}, "Expected a dtype string"),
        ({"op": "x", "args": {"q": {"shape": [3], "dtype": "f32", "strides": [1]}}}, "tensor keys"),
        (
            {"op": "x", "args": {"q": {"shape": [3], "dtype": "f32", "values": {"min": 1}}}},
            "values as {min, max, mean[, std]}",
        ),
        ({"op": "x", "args": {"s": float("nan")}}, "finite"),
        ({"op": "x", "args": {"s": {"a": 1}}}, "tensor keys"),
        ({"op": "x", "args": {"s": ["a"]}}, "Expected a list of numbers"),
        ({"op": "x", "args": {"s": {"shape": [1], "dtype": "f32", "values": 3}}}, "values as"),
        ({"op": "x", "duration_us": -1}, "Expected a duration in [0, 1e12] us, got -1"),
        ({"op": "x", "duration_us": "3"}, "Expected a duration in microseconds"),
        ({"op": "x", "duration_us": 1e13}, "Expected a duration in [0, 1e12] us"),
    ],
)
def test_bad_records_raise_expected_got(record: object, message: str) -> None:
    with pytest.raises(InputError, match="Expected") as raised:
        parse_call_record(record)
    assert message in str(raised.value)


def test_unknown_dtype_is_kept_and_reported() -> None:
    unknown: set[str] = set()
    call, _ = parse_call_record(
        {"op": "x", "args": {"q": {"shape": [3], "dtype": "bfloat17"}}}, unknown_dtypes=unknown
    )
    assert call.arg("q") == TensorArg(name="q", shape=(3,), dtype="bfloat17")
    assert unknown == {"bfloat17"}


def test_values_summary_must_be_ordered() -> None:
    with pytest.raises(InputError, match="min <= mean <= max"):
        ValuesSummary(min=5, max=1, mean=3)


def test_call_rejects_duplicate_argument_names() -> None:
    with pytest.raises(InputError, match="unique argument names"):
        Call(op="x", args=(ScalarArg(name="k", value=1), ScalarArg(name="k", value=2)))


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("c10::BFloat16", "bfloat16"),
        ("torch.float16", "float16"),
        ("float", "float32"),
        ("long int", "int64"),
        ("unsigned char", "uint8"),
        ("bf16", "bfloat16"),
        ("c10::Float8_e4m3fn", "float8_e4m3fn"),
        ("int32", "int32"),
        ("quaternion", None),
    ],
)
def test_canonical_dtype(written: str, canonical: str | None) -> None:
    assert canonical_dtype(written) == canonical


def _kinds() -> list[tuple[object, str]]:
    """(a record built with a wrong field, the start of its message)."""
    from kernelopt.workload import (
        AxisStat,
        AxisValue,
        CallGroup,
        DimAxis,
        OpProfile,
        OpSignature,
        ShapeStat,
        Shortcut,
        ShortcutRule,
        Size1Axis,
        Skew,
        Trace,
        ValueShare,
        WorkloadProfile,
    )

    call = Call(op="f")
    return [
        (lambda: CallGroup(call=call, calls=0), "calls: Expected an integer >= 1"),
        (lambda: CallGroup(call=call, calls="3"), "calls: Expected an integer >= 1"),
        (lambda: CallGroup(call="f", calls=1), "call: Expected a Call"),
        (lambda: CallGroup(call=call, calls=1, time_us=-1.0), "time_us: Expected a finite"),
        (lambda: CallGroup(call=call, calls=1, timed_calls=2), "timed_calls: Expected timed"),
        (lambda: Call(op="f", args=[1]), "args: Expected a sequence of TensorArg"),
        (lambda: TensorArg(name="x", shape=3, dtype="f32"), "x.shape: Expected dims as a"),
        (lambda: TensorArg(name="x", shape=(3,), dtype="f32", values={}), "values: Expected a"),
        (lambda: TensorArg(name="x", shape=(3,), dtype="f32", stride=(1, 1)), "x.stride"),
        (lambda: Trace(source="s", format="jsonl", groups=[1]), "groups: Expected a sequence"),
        (lambda: Trace(source="s", format="jsonl", records="9"), "records: Expected an integer"),
        (lambda: AxisValue(name="a", value=1, source="", kind="size"), "kind: Expected one of"),
        (lambda: AxisValue(name="a", value="1", source="", kind="shape"), "value: Expected a"),
        (lambda: DimAxis(name="n", arg="x", default_dim="0"), "default_dim: Expected an int"),
        (lambda: OpSignature(name=1, ops=("f",)), "name: Expected a string"),
        (lambda: OpSignature(name="s", ops=("f",), tensors={"q": "b"}), "tensors: Expected a"),
        (lambda: OpSignature(name="s", ops=("f",), extract=1), "extract: Expected a callable"),
        (lambda: OpSignature(name="s", ops=("f",), select=5), "select: Expected select"),
        (lambda: AxisStat(name="a", kind="size"), "kind: Expected one of"),
        (lambda: AxisStat(name="a", min="1"), "min: Expected a finite number"),
        (lambda: AxisStat(name=None), "name: Expected a string"),
        (lambda: ValueShare(value=1, calls=1.5), "calls: Expected an integer"),
        (lambda: ShapeStat(args="x", axes=[("a", "1")]), "axes: Expected (axis name, finite"),
        (lambda: ShapeStat(args="x", axes=5), "axes: Expected (axis name, finite"),
        (lambda: OpProfile(op="f", shapes=[1]), "shapes: Expected a sequence of ShapeStat"),
        (lambda: OpProfile(op="f", select="k"), "select: Expected a pair of axis names"),
        (lambda: OpProfile(op="f", reduced=[1]), "reduced: Expected a sequence of strings"),
        (lambda: WorkloadProfile(source="s", format="f", ops=[1]), "ops: Expected a sequence"),
        (lambda: WorkloadProfile(source=None, format="f"), "source: Expected a string"),
        (
            lambda: Size1Axis(op="f", axis="a", source="", call_share=2, time_share=None, always=1),
            "call_share: Expected",
        ),
        (lambda: Skew(k=0, call_share=1.0, time_share=None), "k: Expected an integer >= 1"),
        (
            lambda: Shortcut(rule="r", op=None, axis=None, message=3, call_share=1.0),
            "message: Expected a string",
        ),
        (
            lambda: Shortcut(
                rule="r", op=None, axis=None, message="m", call_share=1.0, catalog_ids=[1]
            ),
            "catalog_ids: Expected",
        ),
        (lambda: ShortcutRule(id="r", description="d", check=None), "check: Expected a callable"),
    ]


def test_records_refuse_wrong_field_types_naming_the_field() -> None:
    # attrs' own validators said "'calls' must be >= 1: 0" (a bare ValueError); a wrong
    # type was kept and failed later, or was written to a profile file as is.
    for build, message in _kinds():
        with pytest.raises(InputError) as caught:
            build()  # type: ignore[operator]
        assert str(caught.value).startswith(message), (message, str(caught.value))
