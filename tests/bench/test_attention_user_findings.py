"""A kernel engineer's first walk with a causal attention prefill: its roofline cost, a
check's whole failure message, which output a padded-varlen kernel left unwritten, and
the check's verdict carried into the benchmark row."""

from __future__ import annotations

import itertools
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import (
    Ceilings,
    Cost,
    MatmulPrecisionWarning,
    Measurement,
    Roofline,
    Timer,
    TrialCall,
    TrialPoint,
    TrialResult,
    append_rows,
    attention_cost,
    attention_pairs,
    check_written,
    matmul_cost,
    read_rows,
    row_from_measurement,
    run_trials,
    tune,
    write_experiment,
)
from kernelopt.experiments.canonical import parse_result

H200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.2497501e12, matmul_flop_per_s=693.66e12)
CPU = Timer(backend="cpu-perf-counter", warmup_ms=1.0, settle_ms=0, max_time_ms=5.0)
POINT = TrialPoint(b=1, s=1, t=1)


# -- the attention cost ------------------------------------------------------------------


def brute_pairs(s_q: int, s_kv: int, causal: bool | str) -> int:
    """The unmasked (query, key) pairs of one sequence, counted one by one."""
    if causal is False:
        return s_q * s_kv
    shift = 0 if causal == "top-left" else s_kv - s_q
    return sum(1 for i in range(s_q) for j in range(s_kv) if j <= i + shift)


@pytest.mark.parametrize("causal", [False, "top-left", "bottom-right"])
def test_pairs_match_a_brute_force_mask_count(causal: bool | str) -> None:
    # Square, s_q > s_kv (queries with no key under bottom-right) and s_q < s_kv alike.
    for s_q, s_kv in itertools.product(range(9), range(9)):
        assert attention_pairs(s_q, s_kv, causal=causal) == brute_pairs(s_q, s_kv, causal), (
            s_q,
            s_kv,
        )


def test_the_two_alignments_differ_where_the_lengths_do() -> None:
    assert attention_pairs(2, 4, causal="top-left") == 3  # rows see 1 and 2 keys
    assert attention_pairs(2, 4, causal="bottom-right") == 7  # rows see 3 and 4 keys
    assert attention_pairs(4, 2, causal="top-left") == 1 + 2 + 2 + 2
    assert attention_pairs(4, 2, causal="bottom-right") == 0 + 0 + 1 + 2
    # Equal lengths: True is either alignment, s(s+1)/2 exactly, never s²/2.
    assert attention_pairs(4096, causal=True) == 4096 * 4097 // 2
    assert attention_pairs(5, causal=True) == attention_pairs(5, causal="bottom-right") == 15


def test_causal_true_is_refused_where_the_alignment_decides_the_count() -> None:
    with pytest.raises(
        InputError,
        match=r"causal: Expected causal='top-left' or 'bottom-right' where s_q != s_kv, got "
        r"True with s_q=2 and s_kv=4 \(sequence 1\)",
    ):
        attention_pairs([3, 2], [3, 4], b=2, causal=True)
    with pytest.raises(InputError, match="causal: Expected False, True, 'top-left' or"):
        attention_pairs(4, causal="causal")


def test_varlen_pairs_and_bytes_sum_the_sequences() -> None:
    s_q, s_kv = [5, 24, 1, 0], [9, 24, 3, 2]
    for causal in ("top-left", "bottom-right", False):
        brute = sum(brute_pairs(q, k, causal) for q, k in zip(s_q, s_kv, strict=True))
        assert attention_pairs(s_q, s_kv, b=4, causal=causal) == brute
        # Lengths as an array or a tensor, as a varlen kernel holds them.
        assert attention_pairs(np.array(s_q), torch.tensor(s_kv), b=4, causal=causal) == brute
    cost = attention_cost(b=4, h_q=2, s_q=s_q, s_kv=s_kv, d_qk=8, causal="bottom-right")
    pairs = sum(brute_pairs(q, k, "bottom-right") for q, k in zip(s_q, s_kv, strict=True))
    assert cost.flops == 2 * 2 * pairs * (8 + 8)
    assert cost.bytes == 2 * 2 * 8 * (2 * sum(s_q) + 2 * sum(s_kv))
    assert cost.name == "attention b=4 h_q=2 s_q=varlen s_kv=varlen d=8 causal=bottom-right"


def test_gqa_and_unequal_head_dims_count_each_tensor_once() -> None:
    cost = attention_cost(
        b=2,
        h_q=8,
        h_kv=2,
        s_q=16,
        s_kv=32,
        d_qk=192,
        d_v=128,
        causal="bottom-right",
        elt_bytes=2,
        out_bytes=4,
    )
    pairs = 2 * brute_pairs(16, 32, "bottom-right")
    assert cost.flops == 2 * 8 * pairs * (192 + 128)
    q, k, v, o = 2 * 16 * 8 * 192, 2 * 32 * 2 * 192, 2 * 32 * 2 * 128, 2 * 16 * 8 * 128
    assert cost.bytes == 2 * (q + k + v) + 4 * o
    assert (
        cost.name
        == "attention b=2 h_q=8 h_kv=2 s_q=16 s_kv=32 d_qk=192 d_v=128 causal=bottom-right"
    )


def test_the_fused_causal_cost_is_compute_bound_where_composed_matmuls_read_memory_bound() -> None:
    b, h, s, d = 1, 32, 4096, 128
    composed = h * (matmul_cost(s, s, d) + matmul_cost(s, d, s))
    naive = Roofline(ceilings=H200, cost=composed)
    assert (naive.bound, round(naive.floor("us"), 1), round(composed.arith_intensity)) == (
        "memory",
        536.9,
        120,
    )
    fused = attention_cost(b=b, h_q=h, s_q=s, d_qk=d, causal=True)
    line = Roofline(ceilings=H200, cost=fused)
    assert (line.bound, round(line.floor("us"), 1), round(fused.arith_intensity)) == (
        "compute",
        198.2,
        1024,
    )
    assert fused.flops == 4 * h * d * s * (s + 1) // 2 and fused.bytes == 4 * h * s * d * 2


def test_an_fp32_attention_warns_of_the_16_bit_ceiling() -> None:
    with pytest.warns(MatmulPrecisionWarning):
        Roofline(ceilings=H200, cost=attention_cost(b=1, h_q=1, s_q=64, d_qk=64, elt_bytes=4))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"h_kv": 3}, r"h_kv: Expected h_kv dividing h_q=8, got 3"),
        ({"b": True}, r"b: Expected an integer >= 1, got True"),
        ({"d_qk": 0}, r"d_qk: Expected an integer >= 1, got 0"),
        ({"s_q": [4, 4]}, r"s_q: Expected 3 sequence lengths \(b\), got 2"),
        ({"s_q": {4, 5, 6}}, r"s_q: Expected one length, or one per sequence in order"),
        ({"s_q": [4, -1, 4]}, r"s_q\[1\]: Expected an integer >= 0, got -1"),
        ({"s_kv": 4.5}, r"s_kv: Expected an integer >= 0, got 4.5"),
        ({"elt_bytes": 0}, r"elt_bytes: Expected a finite number > 0, got 0"),
    ],
)
def test_attention_sizes_are_refused_by_name(arguments: dict[str, object], message: str) -> None:
    given: dict[str, object] = {"b": 3, "h_q": 8, "s_q": 4, "d_qk": 8, **arguments}
    with pytest.raises(InputError, match=message):
        attention_cost(**given)  # type: ignore[arg-type]


# -- Cost arithmetic ---------------------------------------------------------------------


def test_a_cost_scales_by_a_count_of_identical_calls() -> None:
    per_head = matmul_cost(64, 64, 16) + matmul_cost(64, 16, 64)
    for scaled in (32 * per_head, per_head * 32, np.int64(32) * per_head, per_head * np.int64(32)):
        assert isinstance(scaled, Cost)
        assert (scaled.flops, scaled.bytes) == (32 * per_head.flops, 32 * per_head.bytes)
        assert scaled.elt_bytes == per_head.elt_bytes
        assert scaled.name == "32 x (matmul 64x64x16 + matmul 64x16x64)"
    single = matmul_cost(8, 8, 8)
    assert (3 * single).name == "3 x matmul 8x8x8" and 1 * single == single
    assert (0 * single).flops == 0


@pytest.mark.parametrize("count", [1.5, -1, True, "2", None])
def test_a_scale_that_is_no_count_of_calls_is_refused(count: object) -> None:
    cost = matmul_cost(8, 8, 8)
    wanted = "a count of identical calls (an integer >= 0) to multiply a Cost by"
    message = re.escape(f"Expected {wanted}, got {count!r}")
    with pytest.raises(InputError, match=message):
        cost * count  # type: ignore[operator]
    with pytest.raises(InputError, match=message):
        count * cost  # type: ignore[operator]
    with pytest.raises(InputError, match=r"to multiply a Cost by, got Cost$"):
        cost * cost  # type: ignore[operator]


def test_costs_sum() -> None:
    stages = [matmul_cost(8, 8, 8), matmul_cost(16, 8, 8), matmul_cost(8, 16, 8)]
    total = sum(stages)
    assert total == stages[0] + stages[1] + stages[2]
    assert sum([stages[0]]) == stages[0]
    with pytest.raises(TypeError):
        1 + stages[0]  # type: ignore[operator]
    with pytest.raises(TypeError):
        stages[0] + 0  # type: ignore[operator]


# -- a check's whole message -------------------------------------------------------------


def failing_check() -> TrialCall:
    out = torch.zeros(4)
    return TrialCall(
        fn=lambda: out.fill_(1.0),
        check=lambda _: torch.testing.assert_close(out, torch.ones(4) * 2),
    )


def test_an_assert_close_failure_keeps_its_counts_and_indices() -> None:
    error = run_trials(lambda _: failing_check(), points=[POINT], timer=CPU, impl="k")[0].error
    assert error is not None and "\n" not in error
    assert error.startswith("incorrect: AssertionError: Tensor-likes are not close!; ")
    assert "; Mismatched elements: 4 / 4 (100.0%); " in error
    assert "; Greatest absolute difference: 1.0 at index (0,) (up to 1e-05 allowed); " in error
    assert error.endswith("Greatest relative difference: 0.5 at index (0,) (up to 1.3e-06 allowed)")


def test_a_tuned_config_failing_its_check_keeps_the_whole_message() -> None:
    def check(_config: object, _result: object) -> None:
        torch.testing.assert_close(torch.zeros(3), torch.ones(3))

    result = tune(lambda _c: lambda: None, {"BLOCK": [16]}, check=check, timer=CPU)
    error = result.trials[0].error
    assert error is not None and "\n" not in error
    assert "; Mismatched elements: 3 / 3 (100.0%); Greatest absolute difference: 1.0" in error


def test_an_error_of_many_lines_keeps_them_all_and_a_long_one_says_what_was_cut() -> None:
    def make(point: TrialPoint) -> object:
        if point.t == 1:
            raise RuntimeError("compilation failed\n\n  at line 12\nout of shared memory")
        raise RuntimeError("start " + "x" * 10_000 + " the cause")

    first, second = run_trials(make, points=[POINT, TrialPoint(b=1, s=1, t=2)], timer=CPU, impl="k")
    assert first.error == "RuntimeError: compilation failed; at line 12; out of shared memory"
    # 10 030 characters: the first 1500 and the last 500 are kept, and the cut is said.
    marker = " ... (8030 characters cut) ... "
    assert second.error is not None and len(second.error) == 2000 + len(marker)
    head, tail = second.error.split(marker)
    assert head.startswith("RuntimeError: start xxx") and len(head) == 1500
    assert tail.endswith("x the cause") and len(tail) == 500


def test_the_whole_message_reads_back_from_result_md_and_the_rows(tmp_path: Path) -> None:
    error = run_trials(lambda _: failing_check(), points=[POINT], timer=CPU, impl="k")[0].error
    assert error is not None
    record = write_experiment(
        tmp_path,
        experiment=1,
        title="causal prefill, BLOCK_M=16",
        rows=[],
        status="REVERTED",
        correctness="FAIL",
        correctness_detail=error,
    )
    text = (tmp_path / "exp_1" / "result.md").read_text(encoding="utf-8")
    assert parse_result(text).correctness_detail == error == record.correctness_detail
    row = row_from_measurement(Measurement(samples=[1.0, 2.0]), op="attn", impl="v1", note=error)
    append_rows(tmp_path / "rows.jsonl", [row])
    assert read_rows(tmp_path / "rows.jsonl")[0].note == error


# -- which output a padded-varlen kernel left unwritten ----------------------------------


LENGTHS = [5, 24, 1]


def padded_kernel(out: torch.Tensor) -> None:
    """Writes the first LENGTHS[b] query rows of each sequence; padding left as it was."""
    for b, n in enumerate(LENGTHS):
        out[b, :, :n] = 1.0


def test_check_written_names_the_output_and_its_first_poisoned_element() -> None:
    out = torch.empty(3, 2, 24, 64)
    with pytest.raises(InputError) as caught:
        check_written(lambda: padded_kernel(out), (out,))
    assert str(caught.value) == (
        "Expected every output element written, got 5376 of 9216 still poisoned (NaN: never "
        "written, or written as NaN by the kernel) in outputs[0] of shape [3, 2, 24, 64], "
        "the first at outputs[0][0, 0, 5, 0]"
    )


def test_several_poisoned_outputs_are_each_named() -> None:
    out, lse = torch.empty(2, 4), torch.empty(3, dtype=torch.int32)

    def kernel() -> None:
        out[0].fill_(0.0)
        lse[:2].fill_(0)

    with pytest.raises(InputError) as caught:
        check_written(kernel, {"o": out, "lse": lse})
    assert str(caught.value).endswith(
        "got 5 of 11 still poisoned (NaN: never written, or written as NaN by the kernel; "
        "-2147483648, the poison of torch.int32: never written, or written as -2147483648 by "
        "the kernel) across 2 outputs: 4 in outputs['o'] of shape [2, 4], the first at "
        "outputs['o'][1, 0]; "
        "1 in outputs['lse'] of shape [3], the first at outputs['lse'][2]"
    )


def test_views_of_the_valid_regions_check_a_kernel_that_skips_padding() -> None:
    out = torch.empty(3, 2, 24, 64)
    valid = [out[b, :, :n] for b, n in enumerate(LENGTHS)]
    check_written(lambda: padded_kernel(out), valid)  # passes: padding is no output
    timed = CPU.measure(lambda: padded_kernel(out), outputs=valid)
    assert timed.median > 0


def test_a_timed_call_names_the_output_it_left_unwritten() -> None:
    out = torch.empty(3, 2, 24, 64)
    result = run_trials(
        lambda _: TrialCall(fn=lambda: padded_kernel(out), outputs=(out,)),
        points=[POINT],
        timer=CPU,
        impl="k",
    )[0]
    assert result.error is not None
    assert result.error.endswith(
        "got 5376 unwritten (NaN: never written, or written as NaN by the kernel) in "
        "outputs[0] of shape [3, 2, 24, 64], the first at outputs[0][0, 0, 5, 0]"
    )


# -- the check's verdict in the benchmark row --------------------------------------------


def test_a_passing_check_marks_the_row_pass(tmp_path: Path) -> None:
    out = torch.zeros(4)
    call = TrialCall(
        fn=lambda: out.fill_(2.0),
        outputs=out,
        check=lambda _: torch.testing.assert_close(out, torch.full((4,), 2.0)),
    )
    result = run_trials(lambda _: call, points=[POINT], timer=CPU, impl="k")[0]
    assert result.correctness == "PASS"
    row = result.bench_row(op="attn")
    assert row.correctness == "PASS"
    append_rows(tmp_path / "rows.jsonl", [row])
    assert read_rows(tmp_path / "rows.jsonl")[0].correctness == "PASS"


def test_no_check_gives_no_verdict_and_a_failed_check_no_row() -> None:
    unchecked = run_trials(lambda _: lambda: None, points=[POINT], timer=CPU, impl="k")[0]
    assert unchecked.correctness is None and unchecked.bench_row(op="attn").correctness is None
    failed = run_trials(lambda _: failing_check(), points=[POINT], timer=CPU, impl="k")[0]
    assert failed.correctness == "FAIL" and failed.measurement is None
    with pytest.raises(InputError, match="Expected a measured trial"):
        failed.bench_row(op="attn")
    # A point that failed with an error before any verdict has none.
    broken = run_trials(
        lambda _: TrialCall(fn=lambda: 1 / 0, check=lambda _: True),
        points=[POINT],
        timer=CPU,
        impl="k",
    )[0]
    assert broken.correctness is None and broken.error == "ZeroDivisionError: division by zero"


def test_a_trial_result_takes_only_the_row_words() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = TrialResult(requested=POINT, point=POINT, correctness="UNKNOWN")
    assert made.correctness == "UNKNOWN"
    refused = r"correctness: Expected one of PASS, FAIL, UNKNOWN or None, got 'pass'"
    with pytest.raises(InputError, match=refused):
        TrialResult(requested=POINT, point=POINT, correctness="pass")


def test_causal_true_over_a_cache_names_chunked_prefill_as_bottom_right() -> None:
    with pytest.raises(
        InputError,
        match=r"got True with s_q=512 and s_kv=4096 \(sequence 0\); chunked prefill or decode "
        r"\(512 new queries after 3584 cached tokens\) is 'bottom-right'$",
    ):
        attention_cost(b=1, h_q=32, s_q=512, s_kv=4096, d_qk=128, causal=True)
    with pytest.raises(InputError, match=r"\(sequence 0\)$"):  # more queries than keys: no hint
        attention_pairs(4, 2, causal=True)
