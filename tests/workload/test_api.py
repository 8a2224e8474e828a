"""The public surface of kernelopt.workload: a complete, resolvable __all__."""

from __future__ import annotations

import kernelopt.workload as workload
from kernelopt.workload import (
    Call,
    ScalarArg,
    TensorArg,
    ValuesSummary,
    find_shortcuts,
    profile_calls,
    shape_facts,
)


def test_all_resolves_and_lists_the_contract_names() -> None:
    for name in workload.__all__:
        assert getattr(workload, name) is not None, name
    contract = {
        "WorkloadProfile",
        "read_trace",
        "profile_calls",
        "Recorder",
        "render_profile_md",
        "read_profile_md",
        "find_shortcuts",
        "Shortcut",
    }
    assert contract <= set(workload.__all__)
    assert len(set(workload.__all__)) == len(workload.__all__)


def test_shape_facts_for_lengths_and_padding() -> None:
    def sdpa(s_kv: int, lo: int, hi: int, mean: float) -> Call:
        lens = ValuesSummary(min=lo, max=hi, mean=mean)
        return Call(
            op="sdpa",
            args=(
                TensorArg(name="q", shape=(2, 8, 1, 64), dtype="float16"),
                TensorArg(name="k", shape=(2, 8, s_kv, 64), dtype="float16"),
                TensorArg(name="kv_lens", shape=(2,), dtype="int32", values=lens),
                ScalarArg(name="scale", value=0.125),
            ),
        )

    equal = shape_facts(profile_calls([sdpa(128, 64, 64, 64.0)] * 2))
    assert equal["seqlen_cv"] == 0.0 and equal["padding_pct"] == 50.0
    assert equal["seqlen_k"] == 128 and equal["s_q"] == 1 and equal["h_q"] == 8
    ragged = shape_facts(profile_calls([sdpa(128, 10, 128, 100.0)]))
    assert "seqlen_cv" not in ragged
    assert ragged["padding_pct"] == 100 * (1 - 0.7812)


def test_dominant_shape_share_weighs_as_the_dominant_shape_rule_does() -> None:
    def call(n: int, us: float) -> Call:
        return Call(
            op="softmax",
            args=(TensorArg(name="x", shape=(8, n), dtype="float16"),),
            duration_us=us,
        )

    # 9 small calls (1 us each) and one large one (100 us): by calls the small shape
    # dominates, by time the large one does; the fact follows the rule, by time.
    profile = profile_calls([call(64, 1.0)] * 9 + [call(8192, 100.0)])
    facts = shape_facts(profile)
    assert abs(facts["dominant_shape_share"] - 100.0 / 109.0) < 1e-9
    (rule,) = [s for s in find_shortcuts(profile) if s.rule == "dominant-shape"]
    assert "n=8192" in rule.message
    untimed = profile_calls([c.without_duration() for c in [call(64, 1.0)] * 9 + [call(8192, 1.0)]])
    assert shape_facts(untimed)["dominant_shape_share"] == 0.9


def test_every_public_function_refuses_wrong_argument_types() -> None:
    # What a user passes by mistake (None, a number, an object) is named in an InputError,
    # never an AttributeError from deep inside.
    import inspect

    from kernelopt._errors import FormatError, InputError

    checked = []
    for name in workload.__all__:
        fn = getattr(workload, name)
        if not inspect.isfunction(fn) or not inspect.signature(fn).parameters:
            continue
        for bad in (None, 123, object()):
            # Data decoded from a file is the file's fault: FormatError.
            wanted = FormatError if name.endswith("_from_dict") else InputError
            required = [
                p
                for p in inspect.signature(fn).parameters.values()
                if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
            ]
            rest = ["never-written.md"] * (len(required) - 1)  # write_profile_md's path
            try:
                fn(bad, *rest)
            except wanted as error:
                assert "Expected" in str(error), (name, bad, error)
            except Exception as error:
                raise AssertionError(
                    f"{name}({bad!r}) raised {type(error).__name__}: {error}"
                ) from error
            else:
                raise AssertionError(f"{name}({bad!r}) accepted a wrong type")
        checked.append(name)
    assert {"find_shortcuts", "shape_facts", "find_signature", "profile_trace"} <= set(checked)


def test_keyword_arguments_are_checked_too() -> None:
    import pytest

    from kernelopt._errors import InputError

    profile = profile_calls([Call(op="f", args=(TensorArg(name="x", shape=(1,), dtype="f32"),))])
    with pytest.raises(InputError, match="thresholds: Expected Thresholds or None"):
        find_shortcuts(profile, thresholds=0.5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="rules: Expected a sequence of ShortcutRule"):
        find_shortcuts(profile, rules=[None])  # type: ignore[list-item]
    with pytest.raises(InputError, match="op: Expected an op name"):
        shape_facts(profile, op=1)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="extra: Expected a sequence of OpSignature"):
        workload.find_signature("softmax", extra=("softmax",))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="max_values: Expected an integer >= 1"):
        profile_calls([], max_values="3")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="calls: Expected a Trace or an iterable"):
        profile_calls("calls.jsonl")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="shortcuts: Expected a sequence of Shortcut"):
        workload.render_profile_md(profile, shortcuts=["x"])  # type: ignore[list-item]
    with pytest.raises(InputError, match="k: Expected an integer >= 1"):
        profile.op().top_shapes(k="1")  # type: ignore[arg-type]

    def bad_rule(_op, _t):  # type: ignore[no-untyped-def]
        yield "not a finding"

    rule = workload.ShortcutRule(id="bad", description="", check=bad_rule)
    with pytest.raises(InputError, match="rule bad: Expected Shortcut findings"):
        find_shortcuts(profile, rules=[rule])
