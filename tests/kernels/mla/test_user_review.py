"""Inputs a kernel engineer passes by mistake, and what each MLA entry point answers.

Each test names what the call did before it was checked here: a message that echoed a
string as if it were the number or flag asked for, a torch traceback from the reference,
a NumPy integer refused as "not a power of two", a workspace that silently overwrote the
queries it shared memory with.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from mla_testing import assert_matches, make_inputs, poisoned_outputs, seed_of

from kernelopt import InputError
from kernelopt.kernels.mla import (
    MLADecodePlan,
    SplitKVConfig,
    get_mla_metadata,
    mla_decode_naive,
    mla_decode_ref,
    mla_decode_split_kv,
    mla_decode_with_kvcache,
    plan_schedule,
    quantize_kv_fp8,
    split_kv_resources,
)

SCALE = 192**-0.5
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SEQLENS = [5, 40, 17]  # a short, a split and an awkward length, page 16


def _inputs(
    request: pytest.FixtureRequest, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return make_inputs(
        SEQLENS, s_q=2, h_q=3, page=16, dtype=dtype, seed=seed_of(request), device=DEVICE
    )


def _plan(sl: object, **kwargs: object) -> MLADecodePlan:
    args: dict[str, object] = {
        "s_q": 2,
        "h_q": 3,
        "page_size": 16,
        "softmax_scale": SCALE,
        "dtype": torch.float32,
        "device": DEVICE,
    } | kwargs
    return MLADecodePlan(sl, **args)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- messages


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        # Each was echoed unquoted: dtype="float32" read "Expected bfloat16, float16 or
        # float32, got float32", kv_fp8="True" read "Expected a bool, got True".
        ({"dtype": "float32"}, "dtype: Expected bfloat16, float16 or float32, got 'float32'"),
        ({"kv_fp8": "True"}, "kv_fp8: Expected a bool, got 'True'"),
        ({"strategy": "None"}, r"strategy: Expected one of \[.*\], got 'None'"),
        ({"softmax_scale": "0.1"}, "softmax_scale: Expected a finite float, got '0.1'"),
    ],
)
def test_plan_messages_quote_a_string_passed_for_another_type(kwargs, message) -> None:
    with pytest.raises(InputError, match=message):
        _plan([9, 5], **kwargs)


def test_direct_calls_quote_a_string_scale(request) -> None:
    q, kv, bt, sl = _inputs(request)
    # "Expected a finite float, got 0.1" for the string "0.1".
    with pytest.raises(InputError, match=r"softmax_scale: Expected a finite float, got '0\.1'"):
        mla_decode_split_kv(q, kv, bt, sl, softmax_scale="0.1")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"softmax_scale: Expected a finite float, got '0\.1'"):
        mla_decode_ref(q, kv, bt, sl, softmax_scale="0.1")  # type: ignore[arg-type]


def test_flashmla_call_quotes_a_string_head_dim(request) -> None:
    q, kv, bt, sl = _inputs(request)
    meta, num_splits = get_mla_metadata(sl, 6, 1)
    # "Expected head dim 512, got 512" for the string "512".
    with pytest.raises(InputError, match="head_dim_v: Expected head dim 512, got '512'"):
        mla_decode_with_kvcache(q, kv, bt, sl, "512", meta, num_splits)  # type: ignore[arg-type]


def test_metadata_names_its_own_argument_for_an_empty_batch(request) -> None:
    _, _, _, sl = _inputs(request)
    # An empty batch was reported as "seqlens: ...", a name get_mla_metadata does not take.
    with pytest.raises(InputError, match="cache_seqlens: Expected at least one sequence, got"):
        get_mla_metadata(sl[:0], 6, 1)


def test_metadata_quotes_a_string_topk(request) -> None:
    _, _, _, sl = _inputs(request)
    # topk="64" read "Expected dense attention (topk=None), got 64".
    with pytest.raises(InputError, match=r"topk: Expected dense attention \(topk=None\), got '64'"):
        get_mla_metadata(sl, 6, 1, topk="64")  # type: ignore[arg-type]


def test_schedule_quotes_a_string_max_splits() -> None:
    # "Expected a positive integer or None, got 2" for the string "2".
    with pytest.raises(
        InputError, match="max_splits: Expected a positive integer or None, got '2'"
    ):
        plan_schedule([5, 17], block_n=16, m_tiles=1, num_slots=8, max_splits="2")  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.int8])
def test_fp8_rows_of_another_byte_type_are_named_as_such(request, dtype) -> None:
    # FlashMLA's quantizer returns the 656-byte rows typed float8_e4m3fn; passed as they
    # are, they read "kv_cache: Expected head dim 576, got 656".
    q, kv, bt, sl = _inputs(request, torch.float16)
    packed = quantize_kv_fp8(kv).view(dtype)
    meta, num_splits = get_mla_metadata(sl, 6, 1, is_fp8_kvcache=True)
    view_hint = r"kv_cache: Expected the 656-byte FP8 layout as torch\.uint8 .*view"
    # The FlashMLA-shaped call names its cache as its signature does.
    flash_hint = r"k_cache: Expected .* \(a free view: k_cache\.view\(torch\.uint8\)\)"
    with pytest.raises(InputError, match=flash_hint):
        mla_decode_with_kvcache(q, packed, bt, sl, 512, meta, num_splits, is_fp8_kvcache=True)
    with pytest.raises(InputError, match=view_hint):
        _plan(sl, dtype=torch.float16, kv_fp8=True).run(q, packed, bt)
    with pytest.raises(InputError, match=view_hint):
        mla_decode_split_kv(q, packed, bt, sl, softmax_scale=SCALE)
    # Where no FP8 cache is read, the message names the entry points that read one.
    with pytest.raises(InputError, match="an FP8 cache is read by MLADecodePlan"):
        mla_decode_naive(q, packed, bt, sl, softmax_scale=SCALE)
    # The uint8 view of the same bytes runs.
    out, lse = mla_decode_split_kv(q, packed.view(torch.uint8), bt, sl, softmax_scale=SCALE)
    ref = mla_decode_ref(q, packed.view(torch.uint8), bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, *ref, torch.float16)


# ---------------------------------------------------------------------------- reference


def test_reference_refuses_meta_tensors() -> None:
    # Shapes pass on the meta device; reading the lengths raised torch's
    # "Cannot copy out of meta tensor; no data!".
    q, kv, bt, sl = make_inputs([5, 17], s_q=1, h_q=2, page=16, dtype=torch.float32, seed=0)
    meta = [t.to("meta") for t in (q, kv, bt, sl)]
    with pytest.raises(InputError, match=r"q: Expected a tensor with values .*, got meta"):
        mla_decode_ref(*meta, softmax_scale=SCALE)
    with pytest.raises(
        InputError, match=r"cache_seqlens: Expected a tensor with values .*, got meta"
    ):
        mla_decode_ref(q, kv, bt, sl.to("meta"), softmax_scale=SCALE)


# ---------------------------------------------------------------------------- NumPy knobs


def test_config_takes_numpy_integers_and_runs_as_with_python_ones(request) -> None:
    # np.int64(64) was refused as "block_m: Expected a power of two in [16, 128], got
    # np.int64(64)", while s_q, h_q, page_size, num_sms and num_splits take NumPy integers.
    knobs = {"block_m": 16, "block_n": 16, "num_warps": 4, "num_stages": 1, "ctas_per_sm": 2}
    config = SplitKVConfig(
        **{name: np.int64(value) for name, value in knobs.items()},
        combine_block_r=np.int32(8),
        combine_block_d=np.int64(128),
        combine_num_warps=np.int64(4),
        overhead_tiles=np.float32(2.0),
    )
    assert config == SplitKVConfig(**knobs, overhead_tiles=2.0)
    assert all(type(getattr(config, name)) is int for name in knobs)
    assert type(config.overhead_tiles) is float
    q, kv, bt, sl = _inputs(request)
    out, lse = poisoned_outputs(q)
    mla_decode_split_kv(q, kv, bt, sl, softmax_scale=SCALE, config=config, out=out, lse=lse)
    assert_matches(out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE), torch.float32)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"block_m": np.int64(48)}, r"block_m: Expected a power of two in \[16, 128\], got 48"),
        ({"num_stages": np.float64(2.0)}, "num_stages: Expected an integer of at least 1"),
        ({"num_warps": np.bool_(True)}, r"num_warps: Expected a power of two in \[1, 16\]"),
        ({"overhead_tiles": np.float32("nan")}, "overhead_tiles: Expected a value of at least 0"),
    ],
)
def test_config_still_refuses_numpy_values_that_are_not_knobs(kwargs, message) -> None:
    with pytest.raises(InputError, match=message):
        SplitKVConfig(**kwargs)


def test_resources_take_the_torch_dtype_a_plan_takes() -> None:
    # dtype=torch.float16 was refused as "Expected one of ['bfloat16', 'float16',
    # 'float32'], got torch.float16", though every other entry point takes torch dtypes.
    by_dtype = split_kv_resources(s_q=1, h_q=16, dtype=torch.float16)
    assert by_dtype == split_kv_resources(s_q=1, h_q=16, dtype="float16")
    # A list raised "TypeError: unhashable type: 'list'".
    with pytest.raises(InputError, match=r"dtype: Expected one of .*, got \['float16'\]"):
        split_kv_resources(s_q=1, h_q=16, dtype=["float16"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"dtype: Expected one of .*, got torch\.float64"):
        split_kv_resources(s_q=1, h_q=16, dtype=torch.float64)


# ---------------------------------------------------------------------------- workspace


@pytest.mark.parametrize("victim", ["q", "kv_cache", "block_table"])
def test_run_refuses_a_workspace_over_its_inputs(request, victim) -> None:
    # One arena for the queries and the plan's workspace: the pieces' partial outputs
    # overwrote queries other programs still read (relative error 0.57, no error raised).
    q, kv, bt, sl = _inputs(request)
    need = _plan(sl, num_splits=3).workspace_bytes // 4
    source = {"q": q, "kv_cache": kv, "block_table": bt}[victim]
    arena = torch.zeros(need + source.numel(), dtype=source.dtype, device=DEVICE)
    shared = arena[: source.numel()].view(source.shape)
    shared.copy_(source)
    workspace = arena.view(torch.uint8) if victim == "block_table" else arena
    plan = _plan(sl, num_splits=3, workspace=workspace)
    args = {"q": q, "kv_cache": kv, "block_table": bt} | {victim: shared}
    before = shared.clone()
    with pytest.raises(
        InputError, match=f"workspace: Expected a workspace that shares no memory with {victim}"
    ):
        plan.run(args["q"], args["kv_cache"], args["block_table"])
    assert torch.equal(shared.nan_to_num(), before.nan_to_num())


def test_run_takes_a_workspace_beside_its_inputs_in_one_arena(request) -> None:
    q, kv, bt, sl = _inputs(request)
    need = _plan(sl, num_splits=3).workspace_bytes // 4
    arena = torch.zeros(q.numel() + need, device=DEVICE)
    q_view = arena[: q.numel()].view(q.shape)
    q_view.copy_(q)
    plan = _plan(sl, num_splits=3, workspace=arena[q.numel() :])
    out, lse = poisoned_outputs(q)
    plan.run(q_view, kv, bt, out=out, lse=lse)
    assert_matches(out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE), torch.float32)
