"""Shortcut claims against torch beyond float64: integer and bool dtypes, NaN, ties,
dropout, and torch's implicit softmax dim. A rule's message is what a kernel writer
implements, so each sentence it states is executed here."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from kernelopt.workload import (
    Call,
    Recorder,
    ScalarArg,
    Shortcut,
    TensorArg,
    find_shortcuts,
    profile_calls,
    profile_trace,
)

torch = pytest.importorskip("torch")


def _t(name: str, *shape: int) -> TensorArg:
    return TensorArg(name=name, shape=shape, dtype="float16")


def _rules(found: Iterable[Shortcut]) -> dict[str, list[Shortcut]]:
    out: dict[str, list[Shortcut]] = {}
    for item in found:
        out.setdefault(item.rule, []).append(item)
    return out


def _message(op: str, rule: str, *args: TensorArg | ScalarArg) -> str:
    (hit,) = _rules(find_shortcuts(profile_calls([Call(op=op, args=args)])))[rule]
    return hit.message


def _size1_message(op: str) -> str:
    """The size1-reduction message of ``aten::<op>`` over dim 1 of a [3, 1] input."""
    return _message(f"aten::{op}", "size1-reduction", _t("x", 3, 1), ScalarArg(name="dim", value=1))


_NAN = float("nan")


def test_top1_with_largest_false_skips_nan_where_min_returns_it() -> None:
    message = _message("topk", "select-one", _t("x", 4, 16), ScalarArg(name="k", value=1))
    assert "NaN" in message, message
    x = torch.tensor([[_NAN, 1.0, 2.0], [3.0, _NAN, _NAN], [_NAN, _NAN, _NAN]])
    low = torch.topk(x, 1, dim=1, largest=False)
    # torch.min propagates NaN; topk ranks NaN above +inf, so it picks the least number.
    assert torch.min(x, dim=1).values[:2].isnan().all()
    skipping = torch.where(x.isnan(), float("inf"), x).amin(dim=1, keepdim=True)
    want = torch.where(x.isnan().all(dim=1, keepdim=True), _NAN, skipping)
    torch.testing.assert_close(low.values, want, equal_nan=True)
    # With largest=True, NaN wins in both.
    top = torch.topk(x, 1, dim=1)
    torch.testing.assert_close(top.values[:, 0], torch.max(x, dim=1).values, equal_nan=True)


def test_top1_and_select_all_say_that_tied_indices_may_differ() -> None:
    one = _message("topk", "select-one", _t("x", 4, 16), ScalarArg(name="k", value=1))
    every = _message("topk", "select-all", _t("x", 4, 16), ScalarArg(name="k", value=16))
    for message in (one, every):
        assert "equal values" in message, message
    # The values agree; the index picked among equal values does not.
    x = torch.tensor([[3, 1, 2, 3]])
    assert torch.topk(x, 1).values.item() == x.max().item()
    assert torch.topk(x, 1).indices.item() != x.argmax().item()
    ties = torch.tensor([[0.0, 1.0, 5.0, 5.0]])
    low = torch.topk(ties, 4, largest=False)
    ordered = torch.sort(ties, dim=1)
    assert torch.equal(low.values, ordered.values)
    assert not torch.equal(low.indices, ordered.indices)


_WIDENED = {
    "sum": torch.int64,
    "prod": torch.int64,
    "nansum": torch.int64,
}


@pytest.mark.parametrize("op", sorted(_WIDENED))
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int32, torch.bool])
def test_size1_sum_of_integers_is_a_copy_widened_to_int64(op: str, dtype: torch.dtype) -> None:
    message = _size1_message(op)
    assert "int64 for integer and bool inputs" in message, message
    x = torch.tensor([[1], [0], [3]]).to(dtype)
    got = getattr(torch, op)(x, dim=1)
    assert got.dtype == _WIDENED[op]
    assert torch.equal(got, x[:, 0].to(got.dtype))


def test_size1_logsumexp_of_integers_is_a_float_copy() -> None:
    message = _size1_message("logsumexp")
    assert "default float dtype for integer and bool inputs" in message, message
    x = torch.tensor([[1], [0], [3]], dtype=torch.int32)
    got = torch.logsumexp(x, dim=1)
    assert got.dtype == torch.get_default_dtype()
    assert torch.equal(got, x[:, 0].to(got.dtype))


@pytest.mark.parametrize("op", ["all", "any"])
def test_size1_all_any_keep_uint8(op: str) -> None:
    message = _size1_message(op)
    assert "uint8 for a uint8 input" in message, message
    x = torch.tensor([[2], [0], [255]], dtype=torch.uint8)
    got = getattr(torch, op)(x, dim=1)
    assert got.dtype == torch.uint8 and torch.equal(got, (x[:, 0] != 0).to(torch.uint8))
    assert getattr(torch, op)(x.to(torch.int32), dim=1).dtype == torch.bool


@pytest.mark.parametrize("op", ["sum", "mean", "nansum", "logsumexp"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_size1_sum_turns_negative_zero_positive(op: str, dtype: torch.dtype) -> None:
    message = _size1_message(op)
    assert "-0.0 comes out as +0.0" in message, message
    x = torch.tensor([[-0.0], [2.5], [-3.0]], dtype=dtype)
    got = getattr(torch, op)(x, dim=1)
    assert torch.equal(got, x[:, 0]) and not torch.signbit(got[0])


@pytest.mark.parametrize("op", ["prod", "amax", "amin"])
def test_size1_copy_keeps_negative_zero_elsewhere(op: str) -> None:
    message = _size1_message(op)
    assert "-0.0 comes out as +0.0" not in message, message
    x = torch.tensor([[-0.0], [2.5]], dtype=torch.float32)
    assert torch.signbit(getattr(torch, op)(x, dim=1)[0])


def test_single_key_attention_is_v_only_without_dropout() -> None:
    message = _message(
        "sdpa",
        "single-key-attention",
        _t("q", 2, 3, 4, 8),
        _t("k", 2, 3, 1, 8),
        _t("v", 2, 3, 1, 8),
    )
    assert "dropout_p = 0" in message, message
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 3, n, 8, generator=gen) for n in (4, 1, 1))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    # The single weight 1.0 is dropped (0) or scaled by 1 / (1 - p): rows of 0 or 2 V.
    rows = out.reshape(-1, 8)
    full = v.expand(-1, -1, 4, -1).reshape(-1, 8)
    kept = rows.abs().sum(dim=1) > 0
    assert not kept.all() and kept.any()
    torch.testing.assert_close(rows[kept], 2 * full[kept])


@pytest.mark.parametrize(
    ("shape", "size1"),
    [
        ((2, 3, 4, 1), False),  # 4-d: F.softmax without dim reduces dim 1 (3), not dim -1
        ((2, 1, 4, 5), True),  # dim 1 has size 1
        ((5, 4, 1), False),  # 3-d: dim 0
        ((1, 4, 5), True),
        ((4, 1), True),  # 2-d: dim 1, the last
        ((1, 4), False),
    ],
)
@pytest.mark.filterwarnings("ignore:Implicit dimension choice:UserWarning")
def test_recorded_functional_softmax_without_dim_reduces_torchs_implicit_dim(
    tmp_path: Path, shape: tuple[int, ...], size1: bool
) -> None:
    recorder = Recorder(tmp_path / "calls.jsonl", append=False)
    softmax = recorder(torch.nn.functional.softmax)
    x = torch.randn(*shape, dtype=torch.float64)
    with recorder:
        got = softmax(x)
    found = _rules(find_shortcuts(profile_trace(tmp_path / "calls.jsonl")))
    assert ("size1-reduction" in found) == size1, found
    assert bool(got.eq(1.0).all()) == size1
    if size1:
        (hit,) = found["size1-reduction"]
        implicit = 0 if len(shape) in (0, 1, 3) else 1
        assert hit.guard == f"input.shape[{implicit}] == 1"


def test_take_along_dim_of_a_smaller_input_is_an_index_select_expanded() -> None:
    # take_along_dim broadcasts the input too: x [1, 5, 10] with an expanded index
    # [4, 5, 3] gives 4 x 5 rows, index_select gives 1 x 5.
    index = TensorArg(name="indices", shape=(4, 5, 3), dtype="int64", stride=(0, 0, 1))
    call = Call(
        op="aten::take_along_dim",
        args=(_t("self", 1, 5, 10), index, ScalarArg(name="dim", value=2)),
    )
    (hit,) = _rules(find_shortcuts(profile_calls([call])))["gather-index-select"]
    assert "expanded to the output's shape" in hit.message, hit.message
    x = torch.randn(1, 5, 10, generator=torch.Generator().manual_seed(4))
    v = torch.tensor([7, 0, 7])
    taken = torch.take_along_dim(x, v.expand(4, 5, 3), 2)
    selected = torch.index_select(x, 2, v)
    assert selected.shape != taken.shape
    assert torch.equal(selected.expand(4, 5, 3), taken)


def test_gather_of_arange_is_a_copy_of_the_input_narrowed_to_the_index() -> None:
    index = TensorArg(name="index", shape=(2, 8), dtype="int64")
    call = Call(op="gather", args=(_t("x", 4, 8), ScalarArg(name="dim", value=1), index))
    (hit,) = _rules(find_shortcuts(profile_calls([call])))["select-all"]
    assert "narrowed to the output's shape" in hit.message, hit.message
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(5))
    got = torch.gather(x, 1, torch.arange(8).expand(2, 8))
    assert got.shape != x.shape and torch.equal(got, x[:2])


@pytest.mark.filterwarnings("ignore:Lower right causal bias:UserWarning")
def test_single_key_attention_with_a_bottom_right_causal_mask_is_v_only_in_the_last_row() -> None:
    # flash_attn_func(causal=True) aligns the mask to the bottom right; torch builds the same
    # mask with causal_lower_right. With one key and 4 queries, 3 rows see no key at all.
    from torch.nn.attention.bias import causal_lower_right

    args = (_t("q", 2, 4, 3, 8), _t("k", 2, 1, 3, 8), _t("v", 2, 1, 3, 8))
    message = _message("flash_attn_func", "single-key-attention", *args)
    assert "bottom right" in message and "only the last query row" in message, message
    gen = torch.Generator().manual_seed(6)
    q, k, v = (torch.randn(2, 3, n, 8, generator=gen) for n in (4, 1, 1))
    out = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=causal_lower_right(4, 1)
    )
    assert out[:, :, :3].eq(0).all()
    assert torch.equal(out[:, :, 3:], v)


def test_a_gather_of_one_index_row_is_no_index_select_finding(tmp_path: Path) -> None:
    # gather(x [4, 1000], 1, index [1, 8]) gives one row: the index already is one vector
    # of k entries, whatever its strides say, so there is nothing to share or to compare.
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(4, 1000)
    index = torch.randint(0, 1000, (1, 8), generator=torch.Generator().manual_seed(7))
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(3):
            got = torch.gather(x, 1, index)
    path = tmp_path / "gather.json"
    prof.export_chrome_trace(str(path))
    assert got.shape == (1, 8) and torch.equal(got, torch.index_select(x[:1], 1, index[0]))
    found = _rules(find_shortcuts(profile_trace(path, op="aten::gather")))
    assert "gather-index-select" not in found, found


def test_recorded_sdpa_builtin_with_one_key_is_single_key_attention(tmp_path: Path) -> None:
    # The Recorder names a builtin's positional arguments arg0, arg1, ...: the attention
    # signature reads them as q, k, v, as it reads query, key, value.
    recorder = Recorder(tmp_path / "calls.jsonl", append=False)
    sdpa = recorder(torch.nn.functional.scaled_dot_product_attention)
    gen = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(2, 3, n, 8, generator=gen) for n in (4, 1, 1))
    with recorder:
        out = sdpa(q, k, v)
    found = _rules(find_shortcuts(profile_trace(tmp_path / "calls.jsonl")))
    (hit,) = found["single-key-attention"]
    assert (hit.axis, hit.guard) == ("s_kv", "arg1.shape[2] == 1")
    torch.testing.assert_close(out, v.expand(-1, -1, 4, -1))
