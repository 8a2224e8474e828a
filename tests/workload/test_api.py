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
