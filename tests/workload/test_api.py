"""The public surface of kernelopt.workload: a complete, resolvable __all__."""

from __future__ import annotations

import kernelopt.workload as workload
from kernelopt.workload import (
    Call,
    ScalarArg,
    TensorArg,
    ValuesSummary,
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
