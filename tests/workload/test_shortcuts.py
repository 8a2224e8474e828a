"""Shortcut rules: each one fires on the shapes it is about, and only there."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.workload import (
    BUCKET_PADDING_WASTE,
    DOMINANT_SHAPE_SPECIALIZATION,
    SIZE1_AXIS_SHORTCUT,
    UNIFORM_LENGTH_FAST_PATH,
    Call,
    OpProfile,
    ScalarArg,
    Shortcut,
    ShortcutRule,
    TensorArg,
    Thresholds,
    ValuesSummary,
    find_shortcuts,
    profile_calls,
    profile_trace,
    register_rule,
    registered_rules,
    unregister_rule,
)


def _t(name: str, *shape: int, values: ValuesSummary | None = None) -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype="float16", values=values)


def _by_rule(found: Iterable[Shortcut]) -> dict[str, list[Shortcut]]:
    out: dict[str, list[Shortcut]] = {}
    for item in found:
        out.setdefault(item.rule, []).append(item)
    return out


def _softmax(n: int, dim: int = -1, duration: float | None = None) -> Call:
    return Call(
        op="softmax", args=(_t("x", 8, n), ScalarArg(name="dim", value=dim)), duration_us=duration
    )


def test_softmax_over_size1_axis() -> None:
    calls = [_softmax(1)] * 3 + [_softmax(64)]
    found = _by_rule(find_shortcuts(profile_calls(calls)))
    (hit,) = found["size1-reduction"]
    assert hit.call_share == 0.75 and hit.time_share is None
    assert hit.guard == "x.shape[dim] == 1" and hit.axis == "n" and hit.op == "softmax"
    assert "exactly 1.0" in hit.message and hit.catalog_ids == (SIZE1_AXIS_SHORTCUT,)
    assert "size1-axis" not in found  # the reduced axis is reported once, by its own rule
    strict = find_shortcuts(profile_calls(calls), thresholds=Thresholds(often=0.8))
    assert "size1-reduction" not in _by_rule(strict)


def test_reduction_over_size1_axis_is_a_copy() -> None:
    calls = [Call(op="sum", args=(_t("x", 4, 1, 8), ScalarArg(name="dim", value=1)))]
    (hit,) = _by_rule(find_shortcuts(profile_calls(calls)))["size1-reduction"]
    assert "copy of the input" in hit.message and hit.call_share == 1.0


# What torch gives over a size-1 axis, per op, checked on values that tell the cases apart
# (negative, zero, positive, NaN).
_SIZE1_TORCH = {
    "sum": lambda t, x: t.sum(x, dim=1),
    "mean": lambda t, x: t.mean(x, dim=1),
    "amax": lambda t, x: t.amax(x, dim=1),
    "prod": lambda t, x: t.prod(x, dim=1),
    "logsumexp": lambda t, x: t.logsumexp(x, dim=1),
    "nansum": lambda t, x: t.nansum(x, dim=1),
    "argmax": lambda t, x: t.argmax(x, dim=1),
    "norm": lambda t, x: t.linalg.vector_norm(x, dim=1),
    "var": lambda t, x: t.var(x, dim=1),
    "std": lambda t, x: t.std(x, dim=1),
    "all": lambda t, x: t.all(x, dim=1),
    "any": lambda t, x: t.any(x, dim=1),
}
_SIZE1_CLAIM = {
    "a copy of the input": lambda t, x: x[:, 0],
    "a copy of the input with NaN replaced by 0": lambda t, x: t.nan_to_num(x[:, 0], nan=0.0),
    "all zeros": lambda t, x: t.zeros(x.shape[0], dtype=t.int64),
    "the absolute value of the input": lambda t, x: x[:, 0].abs(),
    "NaN with the default correction=1": lambda t, x: t.full((x.shape[0],), float("nan")),
    "the input tested != 0": lambda t, x: x[:, 0] != 0,
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # var/std warn about 1 degree of freedom
@pytest.mark.parametrize("op", sorted(_SIZE1_TORCH))
def test_size1_reduction_says_what_torch_returns(op: str) -> None:
    torch = pytest.importorskip("torch")
    call = Call(op=f"aten::{op}", args=(_t("x", 4, 1), ScalarArg(name="dim", value=1)))
    (hit,) = _by_rule(find_shortcuts(profile_calls([call])))["size1-reduction"]
    claims = [c for c in _SIZE1_CLAIM if f"the result is {c}" in hit.message]
    assert claims, hit.message
    claim = max(claims, key=len)
    x = torch.tensor([[-2.0], [0.0], [3.0], [float("nan")]])
    got, want = _SIZE1_TORCH[op](torch, x), _SIZE1_CLAIM[claim](torch, x)
    assert got.dtype == want.dtype or got.is_floating_point() == want.is_floating_point()
    assert torch.equal(got.isnan(), want.isnan()) if got.is_floating_point() else True
    keep = ~got.isnan() if got.is_floating_point() else torch.ones_like(got, dtype=torch.bool)
    assert torch.equal(got[keep], want[keep]), (op, got, want)


def test_softmax_over_size1_axis_is_one_except_where_masked() -> None:
    torch = pytest.importorskip("torch")
    (hit,) = _by_rule(find_shortcuts(profile_calls([_softmax(1)])))["size1-reduction"]
    assert "exactly 1.0 for finite inputs (NaN where the input is -inf, +inf or NaN" in hit.message
    x = torch.tensor([[-5.0], [0.0], [float("-inf")], [float("nan")]])
    out = torch.softmax(x, dim=-1)
    assert out[:2].eq(1.0).all() and out[2:].isnan().all()
    log_call = Call(op="log_softmax", args=(_t("x", 8, 1), ScalarArg(name="dim", value=-1)))
    (log_hit,) = _by_rule(find_shortcuts(profile_calls([log_call])))["size1-reduction"]
    assert "exactly 0.0 for finite inputs" in log_hit.message
    assert torch.log_softmax(x, dim=-1)[:2].eq(0.0).all()


def test_single_key_attention_from_a_real_profiler_trace(data: Path) -> None:
    profile = profile_trace(data / "sdpa_one_key_cpu.json", op="aten::scaled_dot_product_attention")
    (hit,) = _by_rule(find_shortcuts(profile))["single-key-attention"]
    assert hit.call_share == pytest.approx(2 / 3) and hit.guard == "key.shape[2] == 1"
    assert "output is that key's value row" in hit.message
    assert hit.time_share is not None  # profiler traces carry durations


def test_topk_with_k_at_least_n_from_a_real_profiler_trace(data: Path) -> None:
    profile = profile_trace(data / "softmax_topk_cpu.json", op="aten::topk")
    (hit,) = _by_rule(find_shortcuts(profile))["select-all"]
    assert hit.call_share == pytest.approx(2 / 3) and hit.guard == "k >= self.shape[dim]"
    assert "every element is selected" in hit.message


def test_top1_is_an_argmax_and_gather_is_a_copy_only_with_arange() -> None:
    top1 = [Call(op="topk", args=(_t("x", 4, 100), ScalarArg(name="k", value=1)))]
    (hit,) = _by_rule(find_shortcuts(profile_calls(top1)))["select-one"]
    assert hit.guard == "k == 1" and "argmax" in hit.message
    gather = [
        Call(
            op="index_select",
            args=(_t("x", 10, 4), ScalarArg(name="dim", value=0), _t("index", 10)),
        )
    ]
    (hit,) = _by_rule(find_shortcuts(profile_calls(gather)))["select-all"]
    assert "arange" in hit.guard and "plain copy" in hit.message
    partial = [Call(op="topk", args=(_t("x", 4, 100), ScalarArg(name="k", value=8)))]
    assert not {"select-all", "select-one"} & set(_by_rule(find_shortcuts(profile_calls(partial))))


def test_mla_fixture_findings(data: Path) -> None:
    profile = profile_trace(data / "mla_decode_calls.jsonl")
    found = _by_rule(find_shortcuts(profile))
    (uniform,) = found["uniform-lengths"]
    assert uniform.call_share == 0.9 and uniform.time_share == pytest.approx(565 / 585)
    assert uniform.guard == "cache_seqlens.min() == cache_seqlens.max()"
    assert uniform.catalog_ids == (UNIFORM_LENGTH_FAST_PATH,)
    (dominant,) = found["dominant-shape"]
    # By time, the speculative shape (s_q=16) dominates although it is 20% of the calls.
    assert dominant.time_share == pytest.approx(320 / 585) and dominant.call_share == 0.2
    assert "q.shape[1] == 16" in dominant.guard
    assert dominant.catalog_ids == (DOMINANT_SHAPE_SPECIALIZATION,)
    (s_q,) = [s for s in found["size1-axis"] if s.axis == "s_q"]
    assert s_q.call_share == 0.8 and s_q.guard == "q.shape[1] == 1"
    assert "plain decode" in s_q.message  # the signature's hint
    assert all(s.axis != "h_kv" for s in found["size1-axis"])  # fixed by design
    assert "single-key-attention" not in found  # 10% of calls: below the threshold
    low = _by_rule(find_shortcuts(profile, thresholds=Thresholds(often=0.1)))
    (single,) = low["single-key-attention"]
    assert single.call_share == 0.1 and single.guard == "cache_seqlens.max() == 1"


def test_dominant_shape_by_calls_without_durations() -> None:
    calls = [_softmax(64)] * 6 + [_softmax(128)] * 4
    (hit,) = _by_rule(find_shortcuts(profile_calls(calls)))["dominant-shape"]
    assert hit.call_share == 0.6 and hit.time_share is None
    assert hit.guard == "x.shape[dim] == 64" and "of calls" in hit.message
    spread = [_softmax(64)] * 4 + [_softmax(128)] * 3 + [_softmax(256)] * 3
    assert "dominant-shape" not in _by_rule(find_shortcuts(profile_calls(spread)))


def test_bucket_padding_measured_from_real_lengths() -> None:
    def sdpa(s_kv: int, mean: float) -> Call:
        lens = ValuesSummary(min=1, max=s_kv, mean=mean)
        return Call(
            op="sdpa",
            args=(
                _t("q", 2, 8, 1, 64),
                _t("k", 2, 8, s_kv, 64),
                _t("v", 2, 8, s_kv, 64),
                _t("kv_lens", 2, values=lens),
            ),
        )

    calls = [sdpa(128, 64.0)] * 3 + [sdpa(256, 192.0)]
    (hit,) = _by_rule(find_shortcuts(profile_calls(calls)))["bucket-padding"]
    # Filled share per call: 64/128 three times, 192/256 once: 56.25% used on average.
    assert "on average 43.8% of it is padding" in hit.message and hit.call_share == 1.0
    assert hit.guard == "kv_lens.mean() < k.shape[2]"
    assert hit.catalog_ids == (BUCKET_PADDING_WASTE,)
    tight = [sdpa(128, 127.0)] * 4
    assert "bucket-padding" not in _by_rule(find_shortcuts(profile_calls(tight)))


def test_bucket_padding_estimated_from_a_bucket_grid() -> None:
    calls = [_softmax(n) for n in (64, 128, 256, 512) for _ in range(2)]
    (hit,) = _by_rule(find_shortcuts(profile_calls(calls)))["bucket-padding"]
    assert "estimate" in hit.message and "64, 128, 256, 512" in hit.message
    two_sizes = [_softmax(64), _softmax(128)]
    assert "bucket-padding" not in _by_rule(find_shortcuts(profile_calls(two_sizes)))
    off_grid = [_softmax(n) for n in (60, 100, 250)]
    assert "bucket-padding" not in _by_rule(find_shortcuts(profile_calls(off_grid)))


def test_framework_ops_without_signature_are_left_out_of_multi_op_profiles(data: Path) -> None:
    whole = profile_trace(data / "sdpa_one_key_cpu.json")
    assert {s.op for s in find_shortcuts(whole)} == {
        "aten::scaled_dot_product_attention",
        "aten::_scaled_dot_product_flash_attention_for_cpu",
    }
    alone = profile_trace(data / "sdpa_one_key_cpu.json", op="aten::transpose")
    assert any(s.op == "aten::transpose" for s in find_shortcuts(alone))


def test_ranking_puts_trivial_shapes_before_specialization() -> None:
    found = find_shortcuts(profile_calls([_softmax(1)] * 4))
    assert [s.rule for s in found] == ["size1-reduction", "dominant-shape"]


def test_user_rules_and_explicit_rule_lists() -> None:
    def every_op(op: OpProfile, thresholds: Thresholds) -> Iterable[Shortcut]:
        yield Shortcut(
            rule="seen", op=op.op, axis=None, message="seen", call_share=1.0, guard="True"
        )

    rule = ShortcutRule(id="seen", description="every op", check=every_op)
    register_rule(rule)
    assert registered_rules()[-1] == rule
    profile = profile_calls([_softmax(64)])
    assert "seen" in _by_rule(find_shortcuts(profile))
    with pytest.raises(InputError, match="a new rule id"):
        register_rule(rule)
    assert [s.rule for s in find_shortcuts(profile, rules=[rule])] == ["seen"]
    assert [s.rule for s in find_shortcuts(profile.op(), rules=[rule])] == ["seen"]
    unregister_rule("seen")
    assert "seen" not in _by_rule(find_shortcuts(profile))
    # A replacement of a built-in takes its place.
    register_rule(
        ShortcutRule(id="dominant-shape", description="off", check=lambda o, t: ()), replace=True
    )
    assert "dominant-shape" not in _by_rule(find_shortcuts(profile))


def test_shortcut_and_threshold_validation() -> None:
    with pytest.raises(InputError, match=r"call_share: Expected a number in \[0, 1\]"):
        Shortcut(rule="r", op=None, axis=None, message="m", call_share=2.0)
    with pytest.raises(InputError, match="often: Expected a number in"):
        Thresholds(often=-0.1)


def _gather(k: int, n: int, *, stride: tuple[int, ...] | None = None, rows: int = 4) -> Call:
    index = TensorArg(name="index", shape=(rows, k), dtype="int64", stride=stride)
    return Call(op="gather", args=(_t("x", rows, n), ScalarArg(name="dim", value=1), index))


def test_gather_of_k_at_most_n_is_an_index_select_checked_at_run_time() -> None:
    # Shapes alone (a JSONL trace without strides): k <= n is known, a shared index is not.
    profile = profile_calls([_gather(8, 1000)] * 3 + [_gather(2000, 1000)])
    (hit,) = _by_rule(find_shortcuts(profile))["gather-index-select"]
    assert hit.call_share == 0.75 and hit.axis == "k" and hit.op == "gather"
    assert hit.guard == (
        "index.shape[dim] <= x.shape[dim] and "
        "all(index.stride(d) == 0 or index.shape[d] == 1 for d != dim)"
    )
    assert "index_select(x, dim, v)" in hit.message
    assert "records shapes, not strides, so check at run time" in hit.message
    assert 'Recorder(strides=("index",))' in hit.message
    # k > n in most calls, a single row, or an index_select already: nothing to say.
    assert "gather-index-select" not in _by_rule(
        find_shortcuts(profile_calls([_gather(2000, 1000)] * 3 + [_gather(8, 1000)]))
    )
    assert "gather-index-select" not in _by_rule(
        find_shortcuts(profile_calls([_gather(8, 1000, rows=1)]))
    )
    select = Call(
        op="index_select",
        args=(_t("x", 1000, 4), ScalarArg(name="dim", value=0), _t("index", 8)),
    )
    assert "gather-index-select" not in _by_rule(find_shortcuts(profile_calls([select])))


def test_gather_with_an_expanded_index_is_shown_by_recorded_strides() -> None:
    expanded = _gather(8, 1000, stride=(0, 1))
    materialized = _gather(8, 1000, stride=(8, 1))
    profile = profile_calls([expanded] * 3 + [materialized])
    op = profile.op()
    assert op.shapes[0].calls == 4  # strides do not split the shape row
    (hit,) = _by_rule(find_shortcuts(profile))["gather-index-select"]
    assert hit.call_share == 0.75
    assert "same along every other axis (recorded stride 0" in hit.message
    assert "check at run time" not in hit.message
    # Strides that show a materialized index: the values must be compared instead.
    (hit,) = _by_rule(find_shortcuts(profile_calls([materialized])))["gather-index-select"]
    assert hit.call_share == 1.0 and "materialized index (no stride 0)" in hit.message


def test_take_along_dim_with_a_broadcast_index_needs_no_strides() -> None:
    # take_along_dim broadcasts an index of size 1 along the other axes: the shapes show it.
    call = Call(
        op="take_along_dim",
        args=(_t("arg0", 4, 1000), _t("arg1", 1, 8), ScalarArg(name="arg2", value=1)),
    )
    (hit,) = _by_rule(find_shortcuts(profile_calls([call])))["gather-index-select"]
    assert hit.call_share == 1.0 and "index_select(arg0, dim, v)" in hit.message
    assert hit.guard.startswith("arg1.shape[dim] <= arg0.shape[dim] and all(arg1.stride(d)")


def test_gather_index_select_from_a_real_profiler_trace(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(4, 1000)
    picks = torch.randint(0, 1000, (8,))
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(3):
            torch.gather(x, 1, picks.view(1, 8).expand(4, 8))  # one index row, stride 0
        torch.gather(x, 1, picks.repeat(4, 1))  # the same rows, materialized
    path = tmp_path / "gather.json"
    prof.export_chrome_trace(str(path))
    found = _by_rule(find_shortcuts(profile_trace(path, op="aten::gather")))
    (hit,) = found["gather-index-select"]
    assert hit.call_share == 0.75 and "recorded stride 0" in hit.message


# Each claim below is checked against the real op in float64: the shortcut a kernel would
# take must give what torch gives, edge values included (+-inf, NaN, masks, scale).

_EDGES = [[-2.0], [0.0], [3.0], [float("inf")], [float("-inf")], [float("nan")]]


def test_softmax_over_size1_axis_is_nan_for_every_non_finite_input() -> None:
    torch = pytest.importorskip("torch")
    (hit,) = _by_rule(find_shortcuts(profile_calls([_softmax(1)])))["size1-reduction"]
    x = torch.tensor(_EDGES, dtype=torch.float64)
    # The shortcut as the message words it: 1.0 where finite, NaN at each listed input.
    assert "NaN where the input is -inf, +inf or NaN" in hit.message
    one, zero, nan = (torch.tensor(v, dtype=torch.float64) for v in (1.0, 0.0, float("nan")))
    shortcut = torch.where(x.isfinite(), one, nan)
    torch.testing.assert_close(torch.softmax(x, dim=1), shortcut, equal_nan=True)
    log = torch.where(x.isfinite(), zero, nan)
    torch.testing.assert_close(torch.log_softmax(x, dim=1), log, equal_nan=True)


@pytest.mark.parametrize("method", ["log_softmax", "softmax", "sum", "argmax"])
def test_size1_reduction_of_a_recorded_method_names_the_op(tmp_path: Path, method: str) -> None:
    # A recorded function is named by its qualname (Head.log_softmax, and
    # TensorBase.log_softmax for a wrapped tensor method): the claim must follow its last
    # part, not the class name.
    torch = pytest.importorskip("torch")
    from kernelopt.workload import Recorder

    recorder = Recorder(tmp_path / "calls.jsonl", append=False)
    wrapped = recorder(getattr(torch.Tensor, method))
    x = torch.tensor(_EDGES[:3], dtype=torch.float64)
    with recorder:
        got = wrapped(x, 1)
    (hit,) = _by_rule(find_shortcuts(profile_trace(tmp_path / "calls.jsonl")))["size1-reduction"]
    assert hit.op == f"TensorBase.{method}"
    claims = {
        "log_softmax": ("exactly 0.0 for finite inputs", torch.zeros(3, 1, dtype=torch.float64)),
        "softmax": ("exactly 1.0 for finite inputs", torch.ones(3, 1, dtype=torch.float64)),
        "sum": ("the result is a copy of the input", x[:, 0]),
        "argmax": ("the result is all zeros", torch.zeros(3, dtype=torch.int64)),
    }
    claim, want = claims[method]
    assert claim in hit.message, hit.message
    torch.testing.assert_close(got, want)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_size1_norm_and_max_claims_hold_for_every_variant() -> None:
    torch = pytest.importorskip("torch")
    x = torch.tensor(_EDGES, dtype=torch.float64)

    def message(op: str) -> str:
        call = Call(op=op, args=(_t("x", 6, 1), ScalarArg(name="dim", value=1)))
        (hit,) = _by_rule(find_shortcuts(profile_calls([call])))["size1-reduction"]
        return hit.message

    # norm: |x| for every order but 0, which counts the nonzero entries.
    assert "ord=0: 1.0 where the input is nonzero, else 0.0" in message("linalg_vector_norm")
    for order in (2.0, 1.0, 3.0, float("inf"), float("-inf"), -1.0):
        got = torch.linalg.vector_norm(x, ord=order, dim=1)
        torch.testing.assert_close(got, x[:, 0].abs(), equal_nan=True)
    got = torch.linalg.vector_norm(x, ord=0, dim=1)
    torch.testing.assert_close(got, (x[:, 0] != 0).double())
    # max/min with a dim also return indices: all zeros.
    for op in ("max", "min"):
        assert "indices are all zeros" in message(op)
        values, indices = getattr(torch, op)(x, dim=1)
        torch.testing.assert_close(values, x[:, 0], equal_nan=True)
        assert indices.eq(0).all()


def test_single_key_attention_is_v_unless_the_key_is_masked() -> None:
    torch = pytest.importorskip("torch")
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    gen = torch.Generator().manual_seed(0)
    q = torch.randn(2, 3, 4, 8, dtype=torch.float64, generator=gen)
    k = torch.randn(2, 3, 1, 8, dtype=torch.float64, generator=gen)
    v = torch.randn(2, 3, 1, 8, dtype=torch.float64, generator=gen)
    call = Call(op="sdpa", args=(_t("q", 2, 3, 4, 8), _t("k", 2, 3, 1, 8), _t("v", 2, 3, 1, 8)))
    (hit,) = _by_rule(find_shortcuts(profile_calls([call])))["single-key-attention"]
    out = v.expand(-1, -1, 4, -1)
    # Any scale, an additive mask, a causal mask (top-left: every query sees key 0).
    bias = torch.randn(4, 1, dtype=torch.float64, generator=gen)
    for kwargs in ({}, {"scale": 0.05}, {"attn_mask": bias}, {"is_causal": True}):
        torch.testing.assert_close(sdpa(q, k, v, **kwargs), out)  # type: ignore[arg-type]
    # The LSE is the single scaled logit plus the additive mask.
    logit = (q @ k.transpose(-1, -2)) * 0.05 + bias
    torch.testing.assert_close(torch.logsumexp(logit, dim=-1, keepdim=True), logit)
    assert "plus any additive mask" in hit.message
    # A mask that removes the only key leaves no attention at all: 0, not V.
    assert "Where a mask removes the key, or a sequence has none, the output is 0" in hit.message
    removed = torch.zeros(4, 1, dtype=torch.bool)
    assert sdpa(q, k, v, attn_mask=removed).eq(0).all()


def test_select_claims_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    # k = n: the input sorted along the axis (descending; ascending for largest=False).
    for largest in (True, False):
        top = torch.topk(x, 16, dim=1, largest=largest)
        torch.testing.assert_close(top.values, torch.sort(x, dim=1, descending=largest).values)
    # k = 1: a max/argmax (min/argmin for largest=False).
    top1 = Call(op="topk", args=(_t("x", 4, 16), ScalarArg(name="k", value=1)))
    (hit,) = _by_rule(find_shortcuts(profile_calls([top1])))["select-one"]
    assert "With largest=False it is a min/argmin that skips NaN" in hit.message
    top, low = torch.topk(x, 1, dim=1), torch.topk(x, 1, dim=1, largest=False)
    torch.testing.assert_close(top.values, x.amax(dim=1, keepdim=True))
    torch.testing.assert_close(top.indices, x.argmax(dim=1, keepdim=True))
    torch.testing.assert_close(low.values, x.amin(dim=1, keepdim=True))
    torch.testing.assert_close(low.indices, x.argmin(dim=1, keepdim=True))
    # A gather of k = n with arange indices is a copy.
    arange = torch.arange(16).expand(4, 16)
    torch.testing.assert_close(torch.gather(x, 1, arange), x)


def test_gather_with_one_shared_index_row_is_an_index_select() -> None:
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(6, 10, dtype=torch.float64, generator=gen)
    v = torch.randint(0, 10, (4,), generator=gen)
    # Expanded over every row, over fewer rows (x narrowed), and broadcast by take_along_dim.
    torch.testing.assert_close(torch.gather(x, 1, v.expand(6, 4)), torch.index_select(x, 1, v))
    narrowed = torch.index_select(x[:3], 1, v)
    torch.testing.assert_close(torch.gather(x, 1, v.expand(3, 4)), narrowed)
    taken = torch.take_along_dim(x, v.view(1, 4), 1)
    torch.testing.assert_close(taken, torch.index_select(x, 1, v))
    # Along dim 0 as well, and with k > n picks repeated.
    w = torch.randint(0, 6, (9,), generator=gen)
    torch.testing.assert_close(torch.gather(x, 0, w.view(9, 1).expand(9, 10)), x[w])


@pytest.mark.parametrize(
    ("fn", "args", "size1"),
    [
        ("softmax", (0,), False),  # torch.softmax(x, 0): over the 64 rows, not the last axis
        ("log_softmax", (1,), True),
        ("sum", (0,), False),
        ("sum", (1,), True),
        ("amax", (0,), False),
        ("linalg.vector_norm", (2, 0), False),  # (x, ord, dim): ord is no dim
        ("linalg.vector_norm", (2, 1), True),
        ("norm", (2,), False),  # every dim: 64 elements
    ],
)
def test_recorded_builtin_with_a_positional_dim_reduces_that_dim(
    tmp_path: Path, fn: str, args: tuple[int, ...], size1: bool
) -> None:
    # A wrapped torch builtin has no inspectable signature: its dim is a positional argN.
    torch = pytest.importorskip("torch")
    from kernelopt.workload import Recorder

    recorder = Recorder(tmp_path / "calls.jsonl", append=False)
    target = torch
    for part in fn.split("."):
        target = getattr(target, part)
    wrapped = recorder(target, op=fn.rsplit(".", 1)[-1])
    x = torch.randn(64, 1, dtype=torch.float64)
    with recorder:
        got = wrapped(x, *args)
    found = _by_rule(find_shortcuts(profile_trace(tmp_path / "calls.jsonl")))
    assert ("size1-reduction" in found) == size1, found
    # Where the rule fires, its claim holds on the real result.
    if fn.endswith("softmax") and size1:
        assert got.eq(0.0 if "log" in fn else 1.0).all()
    elif size1:
        torch.testing.assert_close(got.reshape(-1), x[:, 0].abs() if "norm" in fn else x[:, 0])


def test_recorded_topk_with_a_positional_dim_selects_along_it(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from kernelopt.workload import Recorder

    recorder = Recorder(tmp_path / "calls.jsonl", append=False)
    topk = recorder(torch.topk, op="topk")
    with recorder:
        topk(torch.randn(4, 64), 4, 0)  # k = 4 of the 4 rows: everything selected
    op = profile_trace(tmp_path / "calls.jsonl").op()
    assert op.axis("n") is not None and op.axis("n").max == 4  # type: ignore[union-attr]
    assert "select-all" in _by_rule(find_shortcuts(op))


@pytest.mark.filterwarnings("ignore::UserWarning")  # var/std warn about 1 degree of freedom
@pytest.mark.parametrize("op", ["var", "std"])
def test_size1_spread_claim_holds_with_either_correction(op: str) -> None:
    torch = pytest.importorskip("torch")
    call = Call(op=f"aten::{op}", args=(_t("x", 4, 1), ScalarArg(name="dim", value=1)))
    (hit,) = _by_rule(find_shortcuts(profile_calls([call])))["size1-reduction"]
    assert "with correction=0: 0, NaN where the input is ±inf or NaN" in hit.message
    x = torch.tensor([[2.0], [-3.0], [float("inf")], [float("nan")]], dtype=torch.float64)
    fn = getattr(torch, op)
    assert torch.isnan(fn(x, dim=1)).all()  # the default correction, whatever the input
    got = fn(x, dim=1, correction=0)
    assert got[:2].tolist() == [0.0, 0.0] and torch.isnan(got[2:]).all()
