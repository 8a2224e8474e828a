"""MLADecodePlan, the FlashMLA-shaped pair, input validation and the package surface."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from mla_testing import assert_matches, make_inputs, poisoned_outputs, seed_of

import kernelopt.kernels.mla as mla
from kernelopt import DeviceError, InputError
from kernelopt.kernels.mla import (
    MLADecodePlan,
    SplitKVConfig,
    get_mla_metadata,
    mla_decode_bytes,
    mla_decode_floor_us,
    mla_decode_flops,
    mla_decode_ref,
    mla_decode_with_kvcache,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim > 0:DeprecationWarning"
)
SCALE = 192**-0.5
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _inputs(request, seqlens=(130, 17, 64), s_q=2, h_q=3, page=16, dtype=torch.float32):
    return make_inputs(
        list(seqlens),
        s_q=s_q,
        h_q=h_q,
        page=page,
        dtype=dtype,
        seed=seed_of(request),
        device=DEVICE,
    )


def _plan(sl, **kwargs):
    args = {
        "s_q": 2,
        "h_q": 3,
        "page_size": 16,
        "softmax_scale": SCALE,
        "dtype": torch.float32,
    } | kwargs
    return MLADecodePlan(sl, **args)


@pytest.mark.parametrize("strategy", ["split_kv", "naive"])
def test_plan_runs_every_layer_against_reference(request, strategy) -> None:
    q, kv, bt, sl = _inputs(request)
    plan = _plan(sl, strategy=strategy, num_sms=4)
    if strategy == "split_kv":
        assert plan.schedule is not None and plan.schedule.has_splits
        assert plan.workspace_bytes > 0
    else:
        assert plan.schedule is None and plan.workspace_bytes == 0
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    for layer in range(2):  # a second "layer" with fresh queries reuses the plan
        if layer:
            q = torch.randn_like(q)
            ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
        out, lse = poisoned_outputs(q)
        got = plan.run(q, kv, bt, out=out, lse=lse)
        assert got[0] is out and got[1] is lse
        assert_matches(out, lse, ref_out, ref_lse, torch.float32)


@pytest.mark.parametrize(("s_q", "launched_causal"), [(1, False), (2, True)])
def test_one_query_token_launches_without_the_causal_mask(
    request, monkeypatch, s_q, launched_causal
) -> None:
    # A single token has no draft tokens to mask, so the kernels skip the causal branches;
    # the plan still reports what the caller asked for.
    import kernelopt.kernels.mla.api as api

    launched: list[bool] = []
    real = api.launch_split_kv

    def spy(*args, **kwargs):
        launched.append(kwargs["causal"])
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "launch_split_kv", spy)
    q, kv, bt, sl = _inputs(request, s_q=s_q)
    plan = _plan(sl, s_q=s_q, causal=True)
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    assert launched == [launched_causal] and plan.causal
    ref = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE, causal=True)
    assert_matches(out, lse, *ref, torch.float32)


def test_plan_is_a_snapshot_of_the_lengths(request) -> None:
    q, kv, bt, sl = _inputs(request)
    ref = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    plan = _plan(sl)
    sl.fill_(2)  # the caller reuses its tensor for the next step
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    assert plan.seqlens == (130, 17, 64)
    assert_matches(out, lse, *ref, torch.float32)


def test_plan_accepts_host_lengths_and_forced_splits(request) -> None:
    q, kv, bt, _ = _inputs(request)
    plan = _plan([130, 17, 64], num_splits=[3, 1, 2], device=DEVICE)
    assert plan.schedule is not None and plan.schedule.splits == (3, 1, 2)
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    sl = torch.tensor([130, 17, 64], dtype=torch.int32, device=DEVICE)
    assert_matches(out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8])
def test_caller_owned_workspace_is_used(request, dtype) -> None:
    q, kv, bt, sl = _inputs(request)
    need = _plan(sl, num_splits=2).workspace_bytes
    elt = torch.tensor([], dtype=dtype).element_size()
    workspace = torch.full((need // elt + 8,), 0, dtype=dtype, device=DEVICE)
    plan = _plan(sl, num_splits=2, workspace=workspace)
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    assert workspace.any(), "the partial outputs went somewhere else"
    assert_matches(out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE), torch.float32)
    with pytest.raises(InputError, match=f"workspace: Expected at least {need} bytes"):
        _plan(sl, num_splits=2, workspace=workspace[: need // elt - 1])


def test_flashmla_pair_matches_reference(request) -> None:
    q, kv, bt, sl = _inputs(request, seqlens=(130, 5, 200), s_q=3, h_q=4)
    meta, num_splits = get_mla_metadata(sl, 3 * 4 // 1, 1)
    assert meta.dtype == num_splits.dtype == torch.int32
    assert meta.shape[1] == 4 and num_splits.shape == (4,)
    assert int(num_splits[-1]) == meta.shape[0] and meta.shape[0] > 3  # some sequences split
    for causal in (False, True):
        out, lse = mla_decode_with_kvcache(q, kv, bt, sl, 512, meta, num_splits, causal=causal)
        ref = mla_decode_ref(q, kv, bt, sl, softmax_scale=576**-0.5, causal=causal)
        assert out.shape == (3, 3, 4, 512) and lse.shape == (3, 4, 3)
        assert_matches(out, lse, *ref, torch.float32)


def test_flashmla_pair_without_splits(request) -> None:
    q, kv, bt, sl = _inputs(request, seqlens=(3, 5), s_q=1, h_q=2)
    meta, num_splits = get_mla_metadata(sl, 2, 1)
    assert meta.shape[0] == 2  # one piece per sequence: no merge
    out, lse = mla_decode_with_kvcache(q, kv, bt, sl, 512, meta, num_splits, softmax_scale=0.2)
    assert_matches(
        out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=0.2, causal=False), torch.float32
    )


# ---------------------------------------------------------------------------- validation


def _bad(request, what):
    q, kv, bt, sl = _inputs(request)
    args = {"q": q, "kv": kv, "bt": bt, "out": None, "lse": None}
    what(args)
    return args, sl


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda a: a.update(q=a["q"][..., :512]), "q: Expected head dim 576, got 512"),
        (lambda a: a.update(kv=a["kv"][..., :512]), "kv_cache: Expected head dim 576, got 512"),
        (lambda a: a.update(q=a["q"][0]), "q: Expected q of shape \\[b, s_q, h_q, 576\\]"),
        (
            lambda a: a.update(q=a["q"].half(), kv=a["kv"].half()),
            "q: Expected dtype torch.float32 \\(as planned\\)",
        ),
        (lambda a: a.update(kv=a["kv"].half()), "kv_cache: Expected dtype torch.float32"),
        (
            lambda a: a.update(q=a["q"].half()),
            "q: Expected dtype torch.float32 \\(as planned\\), got torch.float16",
        ),
        (
            lambda a: a.update(kv=a["kv"].expand(-1, -1, 2, -1)),
            "Expected one latent KV head, got 2",
        ),
        (
            lambda a: a.update(q=a["q"][:2], bt=a["bt"][:2]),
            "Expected q of shape \\[3, 2, 3, 576\\] \\(as planned\\)",
        ),
        (
            lambda a: a.update(q=a["q"].transpose(2, 3).contiguous().transpose(2, 3)),
            "q: Expected a contiguous last dim",
        ),
        (lambda a: a.update(bt=a["bt"].long()), "block_table: Expected dtype torch.int32"),
        (
            lambda a: a.update(bt=a["bt"][:, :2]),
            "block_table: Expected a block table of at least 9",
        ),
        (
            lambda a: a.update(bt=a["bt"][:2]),
            "block_table: Expected block_table of shape \\[3, max_blocks\\]",
        ),
        (lambda a: a.update(kv=a["kv"].reshape(-1, 8, 1, 576)), "Expected page size 16 \\(as plan"),
        (
            lambda a: a.update(out=torch.empty(3, 2, 3, 576)),
            "out: Expected shape \\[3, 2, 3, 512\\]",
        ),
        (
            lambda a: a.update(out=torch.empty(3, 2, 3, 512, dtype=torch.half)),
            "out: Expected dtype",
        ),
        (lambda a: a.update(lse=torch.empty(3, 2, 3)), "lse: Expected shape \\[3, 3, 2\\]"),
        (lambda a: a.update(lse=torch.empty(3, 3, 2, dtype=torch.float64)), "lse: Expected dtype"),
        (lambda a: a.update(q="not a tensor"), "q: Expected a torch.Tensor, got str"),
    ],
)
def test_run_rejects_bad_inputs(request, mutate, message) -> None:
    args, sl = _bad(request, mutate)
    for key in ("out", "lse"):
        if isinstance(args[key], torch.Tensor):
            args[key] = args[key].to(DEVICE)
    plan = _plan(sl)
    with pytest.raises(InputError, match=message):
        plan.run(args["q"], args["kv"], args["bt"], out=args["out"], lse=args["lse"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"s_q": 0}, "s_q: Expected a positive integer, got 0"),
        ({"h_q": 2.0}, "h_q: Expected a positive integer, got 2.0"),
        ({"page_size": -1}, "page_size: Expected a positive integer, got -1"),
        ({"softmax_scale": float("nan")}, "softmax_scale: Expected a finite float, got nan"),
        ({"softmax_scale": 0.0}, "softmax_scale: Expected a positive scale"),
        (
            {"strategy": "hopper2"},
            "strategy: Expected one of \\['naive', 'split_kv', 'hopper', 'seesaw'\\]",
        ),
        ({"dtype": torch.int8}, "dtype: Expected bfloat16, float16 or float32"),
        ({"s_q": 6}, "cache_seqlens\\[1\\]: Expected cache_seqlens >= s_q = 6, got 5"),
        ({"num_sms": 0}, "num_sms: Expected a positive integer, got 0"),
    ],
)
def test_plan_rejects_bad_arguments(kwargs, message) -> None:
    with pytest.raises(InputError, match=message):
        _plan([9, 5], device=DEVICE, **kwargs)


def test_plan_refuses_cpu_without_the_interpreter(monkeypatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(DeviceError, match="Expected a CUDA tensor"):
        _plan([9, 5], device="cpu")


def test_bfloat16_on_the_cpu_is_refused_not_computed_wrong(request, monkeypatch) -> None:
    # Triton's interpreter computes tl.dot on bfloat16 operands wrong (relative errors near
    # 1e9): a plan, or the FlashMLA-shaped call, refuses them instead of returning garbage.
    if DEVICE != "cpu":
        pytest.skip("the CPU inputs of this check are built where no GPU is")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    message = "dtype: Expected dtype float16 or float32 on the CPU"
    for kwargs in ({"dtype": torch.bfloat16}, {"dtype": None}):  # bfloat16 is the default
        with pytest.raises(InputError, match=message):
            _plan([9, 5], device="cpu", **kwargs)
    q, kv, bt, sl = _inputs(request, dtype=torch.bfloat16)
    meta, num_splits = get_mla_metadata(sl, q.shape[1] * q.shape[2], 1)
    with pytest.raises(InputError, match=message):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, meta, num_splits)


def test_flashmla_pair_rejects_what_it_does_not_support(request) -> None:
    q, kv, bt, sl = _inputs(request)
    with pytest.raises(InputError, match="num_heads_k: Expected one latent KV head, got 2"):
        get_mla_metadata(sl, 6, 2)
    with pytest.raises(InputError, match="is_fp8_kvcache: Expected a bool, got 'yes'"):
        get_mla_metadata(sl, 6, 1, is_fp8_kvcache="yes")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="topk: Expected dense attention"):
        get_mla_metadata(sl, 6, 1, topk=64)
    with pytest.raises(InputError, match=r"cache_seqlens: Expected dtype torch\.int32"):
        get_mla_metadata(sl.long(), 6, 1)
    meta, num_splits = get_mla_metadata(sl, 6, 1)
    with pytest.raises(InputError, match="head_dim_v: Expected head dim 512, got 576"):
        mla_decode_with_kvcache(q, kv, bt, sl, 576, meta, num_splits)
    with pytest.raises(InputError, match="tile_scheduler_metadata: Expected metadata"):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, meta[:, :3], num_splits)
    with pytest.raises(InputError, match="num_splits: Expected int32 \\[4\\]"):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, meta, num_splits[:3])


def test_flashmla_pair_refuses_metadata_made_for_another_batch(request) -> None:
    # The pieces name their sequences: metadata for fewer sequences than q left the rest
    # of `out` unwritten, and metadata for more read and wrote past q and out (a crash in
    # the interpreter), whenever num_splits came from another call.
    q, kv, bt, sl = _inputs(request)
    fewer, _ = get_mla_metadata(sl[:2], 6, 1)
    assert fewer.shape[0] >= 3  # not caught by the row count
    _, splits_for_three = get_mla_metadata(sl, 6, 1)
    message = "tile_scheduler_metadata: Expected metadata from get_mla_metadata for {} seq"
    with pytest.raises(InputError, match=message.format(3)):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, fewer, splits_for_three)
    more, _ = get_mla_metadata(sl, 6, 1)
    _, splits_for_two = get_mla_metadata(sl[:2], 6, 1)
    with pytest.raises(InputError, match=message.format(2)):
        mla_decode_with_kvcache(q[:2], kv, bt[:2], sl[:2], 512, more, splits_for_two)


def test_flashmla_call_checks_its_fp8_flag(request) -> None:
    # A truthy non-bool was taken for True and blamed the cache's dtype.
    q, kv, bt, sl = _inputs(request)
    meta, num_splits = get_mla_metadata(sl, 6, 1)
    with pytest.raises(InputError, match="is_fp8_kvcache: Expected a bool, got 'no'"):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, meta, num_splits, is_fp8_kvcache="no")  # type: ignore[arg-type]


def test_flashmla_metadata_names_cache_seqlens_for_an_empty_sequence() -> None:
    empty = torch.tensor([9, 0], dtype=torch.int32, device=DEVICE)
    with pytest.raises(InputError, match=r"cache_seqlens\[1\]: Expected a cache length of at"):
        get_mla_metadata(empty, 6, 1)


def test_split_counts_are_named_as_the_caller_passed_them(request) -> None:
    from kernelopt.kernels.mla import mla_decode_split_kv

    with pytest.raises(InputError, match="num_splits: Expected 2 split counts, got 1"):
        _plan([9, 5], device=DEVICE, num_splits=[1])
    with pytest.raises(InputError, match=r"num_splits\[1\]: Expected at least one piece, got 0"):
        _plan([9, 5], device=DEVICE, num_splits=[1, 0])
    # num_sms is checked even where forced splits leave it unused.
    with pytest.raises(InputError, match="num_sms: Expected a positive integer, got 'x'"):
        _plan([9, 5], device=DEVICE, num_splits=2, num_sms="x")
    q, kv, bt, sl = _inputs(request)
    with pytest.raises(InputError, match="num_splits: Expected 3 split counts, got 2"):
        mla_decode_split_kv(q, kv, bt, sl, softmax_scale=SCALE, num_splits=[1, 2])
    # One count per sequence, as the plan takes them.
    out, lse = mla_decode_split_kv(q, kv, bt, sl, softmax_scale=SCALE, num_splits=[3, 1, 2])
    assert_matches(out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE), torch.float32)


def test_scales_of_any_real_kind_are_taken() -> None:
    # np.float32(0.07) was refused as "Expected a finite float".
    plan = _plan([9, 5], device=DEVICE, softmax_scale=np.float32(0.25))
    assert plan.softmax_scale == 0.25 and type(plan.softmax_scale) is float
    with pytest.raises(InputError, match="softmax_scale: Expected a finite float, got nan"):
        _plan([9, 5], device=DEVICE, softmax_scale=np.float32("nan"))
    floor = mla_decode_floor_us(
        4096, batch=1, s_q=1, h_q=16, elt_bytes=2, matmul_tflops=np.float32(700.0),
        copy_tbps=np.float32(4.0),
    )  # fmt: skip
    assert floor == mla_decode_floor_us(
        4096, batch=1, s_q=1, h_q=16, elt_bytes=2, matmul_tflops=700.0, copy_tbps=4.0
    )


def test_seesaw_page_size_error_names_seesaw(request, monkeypatch) -> None:
    # The check is shared with the Hopper kernel; its message named 'hopper' for both.
    from kernelopt.kernels.mla import seesaw

    monkeypatch.setattr(seesaw, "check_seesaw_target", lambda device, dtype: None)
    with pytest.raises(InputError, match="multiple of 64 for strategy 'seesaw'"):
        _plan([9, 5], device=DEVICE, h_q=64, dtype=torch.float16, strategy="seesaw")


def test_a_cpu_device_with_an_index_plans_for_cpu_tensors(request) -> None:
    # torch reports device "cpu" for tensors made on "cpu:0", and the two do not compare
    # equal: a plan for "cpu:0" refused every run ("Expected device cpu:0, got cpu").
    if DEVICE != "cpu":
        pytest.skip("CPU tensors run only in the interpreter")
    q, kv, bt, sl = _inputs(request)
    plan = _plan(sl, device="cpu:0", num_splits=2)
    assert plan.device == torch.device("cpu")
    need = torch.empty(plan.workspace_bytes // 4, device="cpu:0")
    out, lse = plan.run(q, kv, bt)
    assert_matches(out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE), torch.float32)
    _plan(sl, device="cpu:0", num_splits=2, workspace=need)


def test_sizes_of_any_integer_kind_are_taken(request) -> None:
    # np.int64(2) was refused as "Expected a positive integer, got np.int64(2)".
    q, kv, bt, sl = _inputs(request)
    plan = _plan(sl, s_q=np.int64(2), h_q=np.int32(3), page_size=np.int64(16), num_sms=np.int64(4))
    assert (plan.s_q, plan.h_q, plan.page_size) == (2, 3, 16)
    assert all(type(v) is int for v in (plan.s_q, plan.h_q, plan.page_size))
    assert_matches(*plan.run(q, kv, bt), *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE),
                   torch.float32)  # fmt: skip
    meta, _ = get_mla_metadata(sl, np.int64(6), 1)
    assert torch.equal(meta, get_mla_metadata(sl, 6, 1)[0])
    sizes = {"batch": np.int64(2), "s_q": np.int64(1), "h_q": np.int64(16)}
    want = mla_decode_bytes([100, 28], batch=2, s_q=1, h_q=16, elt_bytes=2, kv_row_bytes=656)
    got = mla_decode_bytes([100, 28], **sizes, elt_bytes=np.int64(2), kv_row_bytes=np.int64(656))
    assert got == want and type(got) is int
    with pytest.raises(InputError, match=r"h_q: Expected a positive integer, got np\.int64\(0\)"):
        _plan(sl, h_q=np.int64(0))


# ---------------------------------------------------------------------------- surface


def test_all_is_complete_and_resolves() -> None:
    for name in mla.__all__:
        assert getattr(mla, name) is not None
    assert set(mla.__all__) == set(mla._EXPORTS)
    with pytest.raises(AttributeError):
        _ = mla.not_a_kernel


def test_scheduler_imports_without_torch_or_triton() -> None:
    code = (
        "import sys, kernelopt.kernels.mla.schedule, kernelopt.kernels.mla.cost; "
        "print(','.join(m for m in ('torch', 'triton') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_repr_names_the_plan(request) -> None:
    _, _, _, sl = _inputs(request)
    text = repr(_plan(sl, num_splits=2))
    assert "strategy='split_kv'" in text and "pieces=6" in text


# ---------------------------------------------------------------------------- GPU


@pytest.mark.gpu
@pytest.mark.parametrize(("s_q", "h_q"), [(1, 16), (2, 128)])
def test_cuda_graph_capture_and_replay(request, s_q, h_q) -> None:
    seqlens = [4097, 1000, 33, 2048]
    q, kv, bt, sl = make_inputs(
        seqlens,
        s_q=s_q,
        h_q=h_q,
        page=64,
        dtype=torch.bfloat16,
        seed=seed_of(request),
        device="cuda",
    )
    plan = MLADecodePlan(
        sl, s_q=s_q, h_q=h_q, page_size=64, softmax_scale=SCALE, dtype=torch.bfloat16
    )
    assert plan.schedule is not None and plan.schedule.has_splits
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)  # compile outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    with torch.cuda.graph(graph):
        plan.run(q, kv, bt, out=out, lse=lse)
    for _ in range(2):  # replay on new queries written into the captured buffer
        q.copy_(torch.randn_like(q))
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert_matches(
            out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE), torch.bfloat16
        )


@pytest.mark.gpu
def test_flashmla_pair_bf16_varlen_gpu(request) -> None:
    q, kv, bt, sl = make_inputs(
        [4097, 17, 4096, 300, 8000],
        s_q=2,
        h_q=128,
        page=64,
        dtype=torch.bfloat16,
        seed=seed_of(request),
        device="cuda",
    )
    meta, num_splits = get_mla_metadata(sl, 2 * 128, 1)
    out, lse = mla_decode_with_kvcache(
        q, kv, bt, sl, 512, meta, num_splits, causal=True, softmax_scale=SCALE
    )
    assert_matches(out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE), torch.bfloat16)


def test_metadata_is_read_as_it_was_scheduled(request) -> None:
    # FlashMLA's older get_mla_metadata had no FP8 flag: a call that says FP8 while its
    # metadata was cut on another key tile reads the tile from the metadata (pieces on
    # multiples of 32 must not be read as 64-key tiles through one page lookup).
    from kernelopt.kernels.mla import quantize_kv_fp8

    if DEVICE != "cpu":
        pytest.skip("built on CPU tensors, which only the interpreter runs")
    q, kv, bt, sl = make_inputs(
        [257], s_q=1, h_q=64, page=64, dtype=torch.float16, seed=seed_of(request)
    )
    fp8 = quantize_kv_fp8(kv.nan_to_num(0.0))
    ref_out, ref_lse = mla_decode_ref(q, fp8, bt, sl, softmax_scale=SCALE, causal=False)
    for flag in (True, False):
        meta, num_splits = get_mla_metadata(sl, 64, 1, is_fp8_kvcache=flag)
        out, lse = mla_decode_with_kvcache(
            q, fp8, bt, sl, 512, meta, num_splits, softmax_scale=SCALE, is_fp8_kvcache=True
        )
        assert_matches(out, lse, ref_out, ref_lse, torch.float16)
    # Metadata for another number of query rows is refused, not read past the cache.
    meta, num_splits = get_mla_metadata(sl, 16, 1)
    with pytest.raises(InputError, match="Expected metadata from get_mla_metadata for 64 query"):
        mla_decode_with_kvcache(q, fp8, bt, sl, 512, meta, num_splits, is_fp8_kvcache=True)


def test_flashmla_pair_checks_the_lengths_its_metadata_was_made_for(request) -> None:
    # The pieces' key ranges come from the metadata: a block table narrower than its
    # longest sequence was read past its row (another sequence's pages, or a crash), and a
    # causal call with fewer keys than draft tokens left rows with no key (NaN). Both are
    # refused, as by every other entry point.
    q, kv, bt, sl = _inputs(request, seqlens=(30, 17), s_q=2, h_q=3)
    meta, num_splits = get_mla_metadata(sl, 6, 1)
    with pytest.raises(InputError, match="block_table: Expected a block table of at least 2"):
        mla_decode_with_kvcache(q, kv, bt[:, :1], sl, 512, meta, num_splits)
    short = torch.tensor([30, 1], dtype=torch.int32, device=DEVICE)
    meta, num_splits = get_mla_metadata(short, 6, 1)
    for causal in (True, False):
        with pytest.raises(
            InputError, match=r"cache_seqlens\[1\]: Expected cache_seqlens >= s_q = 2, got 1"
        ):
            mla_decode_with_kvcache(q, kv, bt, short, 512, meta, num_splits, causal=causal)


def test_flashmla_pair_refuses_lengths_its_metadata_was_not_made_for(request) -> None:
    # Metadata made for (30, 17) covers 30 keys of sequence 0: called with a longer
    # sequence 0, its last keys were never read, a wrong answer with no error. On a GPU
    # the lengths are not read back (a sync), so this is checked on the CPU only.
    if DEVICE != "cpu":
        pytest.skip("checked on the CPU only: on a GPU, reading the lengths back would sync")
    q, kv, bt, sl = _inputs(request, seqlens=(30, 17), s_q=2, h_q=3)
    meta, num_splits = get_mla_metadata(sl, 6, 1)
    longer = torch.tensor([32, 17], dtype=torch.int32)
    with pytest.raises(
        InputError,
        match=re.escape(
            "cache_seqlens[0]: Expected the length get_mla_metadata was given (30); make the "
            "metadata again for new lengths, got 32"
        ),
    ):
        mla_decode_with_kvcache(q, kv, bt, longer, 512, meta, num_splits, causal=True)
    out, lse = mla_decode_with_kvcache(q, kv, bt, sl.clone(), 512, meta, num_splits, causal=True)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=576**-0.5, causal=True)
    assert_matches(out, lse, ref_out, ref_lse, q.dtype)


def test_strided_lengths_are_refused_not_misread(request) -> None:
    # The kernels read cache_seqlens[i] at offset i: a strided view (a column of a wider
    # table) was read as other lengths, a wrong answer with no error.
    from kernelopt.kernels.mla import mla_decode_naive, mla_decode_split_kv

    q, kv, bt, sl = _inputs(request)
    column = torch.stack([sl, torch.full_like(sl, 5)], dim=1)[:, 0]
    assert torch.equal(column, sl) and column.stride() == (2,)
    message = r"cache_seqlens: Expected a contiguous tensor \(stride 1\), got stride 2"
    out, lse = poisoned_outputs(q)
    for call in (mla_decode_naive, mla_decode_split_kv):
        with pytest.raises(InputError, match=message):
            call(q, kv, bt, column, softmax_scale=SCALE, out=out, lse=lse)
    with pytest.raises(InputError, match=message):
        get_mla_metadata(column, 6, 1)
    meta, num_splits = get_mla_metadata(sl, 6, 1)
    with pytest.raises(InputError, match=message):
        mla_decode_with_kvcache(q, kv, bt, column, 512, meta, num_splits, causal=True)
    assert torch.isnan(out).all() and torch.isnan(lse).all()
    # One sequence has no stride to get wrong.
    one = torch.tensor([[9, 5]], dtype=torch.int32, device=DEVICE)[:, 0]
    mla_decode_ref(q[:1], kv, bt[:1], one, softmax_scale=SCALE)


def test_every_entry_point_checks_scale_flags_and_outputs(request) -> None:
    from kernelopt.kernels.mla import mla_decode_naive, mla_decode_split_kv

    q, kv, bt, sl = _inputs(request)
    for call in (mla_decode_split_kv, mla_decode_naive):
        for scale in (float("nan"), float("inf"), 0.0, -1.0, True):
            with pytest.raises(InputError, match="softmax_scale: Expected a"):
                call(q, kv, bt, sl, softmax_scale=scale)
        with pytest.raises(InputError, match="causal: Expected a bool, got 'no'"):
            call(q, kv, bt, sl, softmax_scale=SCALE, causal="no")  # type: ignore[arg-type]
        # One buffer expanded over the batch: two sequences would write the same memory.
        shared = torch.empty(1, 2, 3, 512, dtype=q.dtype, device=q.device).expand(3, -1, -1, -1)
        with pytest.raises(InputError, match="out: Expected an output whose elements do not"):
            call(q, kv, bt, sl, softmax_scale=SCALE, out=shared)
    meta, num_splits = get_mla_metadata(sl, 6, 1)
    with pytest.raises(InputError, match="softmax_scale: Expected a finite float, got nan"):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, meta, num_splits, softmax_scale=float("nan"))
    with pytest.raises(InputError, match="causal: Expected a bool"):
        _plan([9, 5], device=DEVICE, causal=1)


def test_lengths_split_counts_and_devices_are_checked_before_use(request) -> None:
    from kernelopt.kernels.mla import mla_decode_split_kv

    for lengths, shown in (([100.9], "100.9"), ([2**31], "2147483648"), ([[100]], r"\[100\]")):
        message = rf"cache_seqlens\[0\]: Expected an int32 cache length, got {shown}"
        with pytest.raises(InputError, match=message):
            _plan(lengths, device=DEVICE)
    with pytest.raises(InputError, match=r"num_splits: Expected an int or a list of ints"):
        _plan([9, 5], device=DEVICE, num_splits=2.5)
    if not torch.cuda.is_available():
        with pytest.raises(DeviceError, match="Expected a CUDA device for device='cuda'"):
            _plan([9, 5], device="cuda")
    q, kv, bt, sl = _inputs(request)
    with pytest.raises(InputError, match="num_sms: Expected a positive integer, got 0"):
        mla_decode_split_kv(q, kv, bt, sl, softmax_scale=SCALE, num_sms=0)


def test_plan_arguments_of_the_wrong_kind_are_named() -> None:
    lengths = torch.tensor([5, 9], dtype=torch.int32)
    common = {"s_q": 1, "h_q": 16, "page_size": 16, "softmax_scale": 0.1}
    with pytest.raises(InputError, match=r"device: Expected a torch device .*, got 'bogus'"):
        MLADecodePlan(lengths, dtype=torch.float16, device="bogus", **common)
    with pytest.raises(InputError, match="config: Expected a SplitKVConfig or None, got dict"):
        MLADecodePlan(lengths, dtype=torch.float16, config={"block_m": 64}, **common)  # type: ignore[arg-type]
    # bfloat16 is the plan's default dtype; on the CPU the message says so.
    with pytest.raises(InputError, match=r"got torch\.bfloat16 \(the default: pass dtype=\)"):
        MLADecodePlan(lengths, device="cpu", **common)
    with pytest.raises(
        InputError, match="num_warps: Expected a power of two in \\[1, 16\\], got '8'"
    ):
        SplitKVConfig(num_warps="8")  # type: ignore[arg-type]


def test_cost_formulas_refuse_sizes_that_are_not_counts() -> None:
    assert mla_decode_bytes(np.array([100, 28]), batch=2, s_q=1, h_q=16, elt_bytes=2) == (
        mla_decode_bytes([100, 28], batch=2, s_q=1, h_q=16, elt_bytes=2)
    )
    with pytest.raises(InputError, match="batch: Expected a positive integer, got -1"):
        mla_decode_bytes(100, batch=-1, s_q=1, h_q=16, elt_bytes=2)
    with pytest.raises(InputError, match="h_q: Expected a positive integer, got 0"):
        mla_decode_flops(100, s_q=1, h_q=0)
    with pytest.raises(InputError, match="seqlens: Expected cache lengths as non-negative"):
        mla_decode_flops([1.5], s_q=1, h_q=1)
    with pytest.raises(InputError, match="copy_tbps: Expected a finite positive ceiling"):
        mla_decode_floor_us(1, batch=1, s_q=1, h_q=1, elt_bytes=2, matmul_tflops=1.0,
                            copy_tbps=float("nan"))  # fmt: skip


def test_cost_formulas_take_one_length_of_any_integer_kind_and_check_the_batch() -> None:
    # A NumPy or 0-d tensor length is one sequence's length (it raised a bare TypeError),
    # and a list of lengths must have one per sequence of the batch.
    one = mla_decode_flops(4096, s_q=1, h_q=16)
    assert mla_decode_flops(np.int64(4096), s_q=1, h_q=16) == one
    assert mla_decode_flops(torch.tensor(4096), s_q=1, h_q=16) == one
    with pytest.raises(InputError, match="seqlens: Expected an int or a sequence of ints, got No"):
        mla_decode_flops(None, s_q=1, h_q=16)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"seqlens: Expected 2 lengths \(one per sequence"):
        mla_decode_bytes([4096, 4096, 4096], batch=2, s_q=1, h_q=16, elt_bytes=2)
    with pytest.raises(InputError, match=r"seqlens: Expected 1 lengths \(one per sequence"):
        mla_decode_floor_us([], batch=1, s_q=1, h_q=1, elt_bytes=2, matmul_tflops=1.0,
                            copy_tbps=1.0)  # fmt: skip


def test_outputs_sharing_memory_with_each_other_are_refused(request) -> None:
    from kernelopt.kernels.mla import mla_decode_naive, mla_decode_split_kv

    q, kv, bt, sl = _inputs(request)
    # float32 outputs: lse can be carved out of out's own buffer. It ran, and the LSE
    # stores overwrote rows of out (relative error 0.2).
    out = torch.full((3, 2, 3, 512), 7.0, device=q.device)
    lse = out.view(-1)[: 3 * 3 * 2].view(3, 3, 2)
    before = out.clone()
    message = "lse: Expected an output that shares no memory with out"
    with pytest.raises(InputError, match=message):
        _plan(sl, num_sms=4).run(q, kv, bt, out=out, lse=lse)
    for call in (mla_decode_split_kv, mla_decode_naive):
        with pytest.raises(InputError, match=message):
            call(q, kv, bt, sl, softmax_scale=SCALE, out=out, lse=lse)
    assert torch.equal(out, before)


@pytest.mark.parametrize("victim", ["q", "kv"])
def test_run_refuses_outputs_that_share_memory_with_its_inputs(request, victim) -> None:
    q, kv, bt, sl = _inputs(request)
    plan = _plan(sl, num_sms=4)
    # out over q's latent columns, or over the cache's first rows: the kernels would
    # overwrite what other programs still read. Both ran.
    out = q[..., :512] if victim == "q" else kv.view(-1)[: 3 * 2 * 3 * 512].view(3, 2, 3, 512)
    q_before, kv_before = q.clone(), kv.clone()
    name = "q" if victim == "q" else "kv_cache"
    with pytest.raises(
        InputError, match=f"out: Expected an output that shares no memory with {name}"
    ):
        plan.run(q, kv, bt, out=out)
    assert torch.equal(q, q_before)
    assert torch.allclose(kv, kv_before, equal_nan=True)
    # lse over the block table's bytes (30 int32 pages) is refused as well.
    lse_on_table = bt.view(torch.float32).view(-1)[: 3 * 3 * 2].view(3, 3, 2)
    with pytest.raises(InputError, match="lse: Expected an output that shares no memory with"):
        plan.run(q, kv, bt, lse=lse_on_table)


@pytest.mark.parametrize("victim", ["q", "kv"])
def test_the_kernel_entry_points_refuse_outputs_over_their_inputs(request, victim) -> None:
    # mla_decode_split_kv and mla_decode_naive took out over q or the cache and overwrote
    # keys other programs still read, as plan.run did.
    from kernelopt.kernels.mla import mla_decode_naive, mla_decode_split_kv

    q, kv, bt, sl = _inputs(request)
    out = q[..., :512] if victim == "q" else kv.view(-1)[: 3 * 2 * 3 * 512].view(3, 2, 3, 512)
    name = "q" if victim == "q" else "kv_cache"
    q_before, kv_before = q.clone(), kv.clone()
    for call in (mla_decode_split_kv, mla_decode_naive):
        with pytest.raises(
            InputError, match=f"out: Expected an output that shares no memory with {name}"
        ):
            call(q, kv, bt, sl, softmax_scale=SCALE, out=out)
    assert torch.equal(q, q_before)
    assert torch.allclose(kv, kv_before, equal_nan=True)


def test_outputs_in_disjoint_parts_of_one_buffer_are_taken(request) -> None:
    q, kv, bt, sl = _inputs(request)
    buffer = torch.full((3 * 2 * 3 * 512 + 3 * 3 * 2,), float("nan"), device=q.device)
    out = buffer[: 3 * 2 * 3 * 512].view(3, 2, 3, 512)
    lse = buffer[3 * 2 * 3 * 512 :].view(3, 3, 2)
    _plan(sl, num_sms=4).run(q, kv, bt, out=out, lse=lse)
    assert_matches(out, lse, *mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE), torch.float32)


def test_run_refuses_outputs_inside_the_plans_workspace(request) -> None:
    q, kv, bt, sl = _inputs(request)
    need = _plan(sl, num_splits=2).workspace_bytes
    workspace = torch.zeros(need // 4, device=DEVICE)
    plan = _plan(sl, num_splits=2, workspace=workspace)
    # The partial outputs would be merged from memory the merge itself overwrites.
    out = workspace[: 3 * 2 * 3 * 512].view(3, 2, 3, 512)
    with pytest.raises(InputError, match="out: Expected an output that shares no memory with"):
        plan.run(q, kv, bt, out=out)
    assert not workspace.any()


def test_flashmla_pair_refuses_split_counts_from_another_schedule(request) -> None:
    # num_splits of another get_mla_metadata call places the partials in slots the
    # metadata never wrote (or past the workspace): the output was inf or NaN.
    q, kv, bt, sl = _inputs(request, seqlens=(300, 17), s_q=1, h_q=2)
    meta, num_splits = get_mla_metadata(sl, 2, 1)
    swapped = torch.tensor([17, 300], dtype=torch.int32, device=DEVICE)
    other_meta, other_splits = get_mla_metadata(swapped, 2, 1)
    message = "num_splits: Expected the num_splits get_mla_metadata returned with"
    for m, n in ((meta, other_splits), (other_meta, num_splits)):
        with pytest.raises(InputError, match=message):
            mla_decode_with_kvcache(q, kv, bt, sl, 512, m, n, softmax_scale=SCALE)
    # A second call for the same lengths makes the same schedule: its halves mix.
    _, again_splits = get_mla_metadata(sl.clone(), 2, 1)
    out, lse = mla_decode_with_kvcache(q, kv, bt, sl, 512, meta, again_splits, softmax_scale=SCALE)
    ref = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE, causal=False)
    assert_matches(out, lse, *ref, torch.float32)


def test_lengths_of_any_integer_dtype_are_taken(request) -> None:
    # An int16 tensor was refused as "Expected an integer tensor, got torch.int16".
    sl = _inputs(request)[3]
    for dtype in (torch.int16, torch.uint8, torch.int64):
        plan = _plan(sl.to(dtype), num_sms=4)
        assert plan.seqlens == tuple(sl.tolist())
    with pytest.raises(
        InputError, match=r"cache_seqlens: Expected an integer tensor, got torch\.bool"
    ):
        _plan(torch.tensor([True, True]), device=DEVICE)


@pytest.mark.parametrize("strategy", ["split_kv", "naive"])
def test_a_workspace_of_the_wrong_kind_is_refused_even_when_unused(strategy) -> None:
    # One short sequence is never split, so the workspace went unread and unchecked:
    # whether a bad buffer was refused depended on the lengths of the step.
    for workspace, message in (
        ("junk", "workspace: Expected a torch.Tensor, got str"),
        (torch.zeros(64, dtype=torch.float16), "workspace: Expected dtype float32 or uint8"),
        (torch.zeros(8, 8), r"workspace: Expected a 1-D contiguous tensor, got \[8, 8\]"),
    ):
        with pytest.raises(InputError, match=message):
            _plan([5], device=DEVICE, strategy=strategy, workspace=workspace)
    assert (
        _plan([5], device=DEVICE, strategy=strategy, workspace=torch.zeros(0)).workspace_bytes == 0
    )


def test_lengths_as_a_numpy_array_are_taken(request) -> None:
    # A NumPy array of lengths (a serving stack's host-side batch) was refused as "Expected
    # a [b] tensor or a list of ints".
    q, kv, bt, sl = _inputs(request, seqlens=(1, 17, 5), s_q=1, h_q=1)
    for lengths in (np.array([1, 17, 5]), np.array([1, 17, 5], dtype=np.uint16)):
        plan = _plan(lengths, s_q=1, h_q=1, device=DEVICE)
        assert plan.seqlens == (1, 17, 5)
        out, lse = poisoned_outputs(q)
        plan.run(q, kv, bt, out=out, lse=lse)
        ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
        assert_matches(out, lse, ref_out, ref_lse, torch.float32)
    with pytest.raises(InputError, match=r"cache_seqlens: Expected an integer array, got float64"):
        _plan(np.array([1.0, 17.0]), s_q=1, h_q=1, device=DEVICE)
    with pytest.raises(InputError, match=r"cache_seqlens: Expected a 1-D array, got \[1, 2\]"):
        _plan(np.array([[1, 17]]), s_q=1, h_q=1, device=DEVICE)


def test_a_scale_past_float32_is_refused_not_computed_as_nan(request) -> None:
    # The kernels take the scale as float32: 1e39 became inf there and every output NaN,
    # while the float64 reference gave an answer.
    q, kv, bt, sl = _inputs(request, seqlens=(3, 9), s_q=1, h_q=1)
    message = r"softmax_scale: Expected a scale below 2\.35\d*e\+38 \(float32\), got 1e\+39"
    with pytest.raises(InputError, match=message):
        _plan([3, 9], s_q=1, h_q=1, device=DEVICE, softmax_scale=1e39)
    with pytest.raises(InputError, match=message):
        mla.mla_decode_naive(q, kv, bt, sl, softmax_scale=1e39)
    meta, splits = get_mla_metadata(sl, 1, 1)
    with pytest.raises(InputError, match=message):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, meta, splits, softmax_scale=1e39)
    # The largest scale taken still runs: one key dominates each softmax.
    plan = _plan([3, 9], s_q=1, h_q=1, device=DEVICE, softmax_scale=1e30)
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=1e30)
    assert_matches(out, lse, ref_out, ref_lse, torch.float32)


def _bad_page(bt: torch.Tensor, value: int) -> torch.Tensor:
    bad = bt.clone()
    bad[1, 1] = value  # sequence 1 (17 keys, pages of 16) reads its second page
    return bad


@pytest.mark.parametrize("page_id", [-1, "num_blocks"])
def test_pages_outside_the_cache_are_refused_where_the_table_is_read(request, page_id) -> None:
    # A page index past the cache, or negative, was read as given: a silent wrong answer,
    # or a crash of the whole process under the interpreter (an illegal address on a GPU).
    # The direct kernel calls read the lengths on the host anyway; on the CPU, reading the
    # table costs no synchronization, so every entry point checks it there.
    q, kv, bt, sl = _inputs(request, seqlens=(3, 17, 5), s_q=1, h_q=1)
    value = kv.shape[0] if page_id == "num_blocks" else page_id
    bad = _bad_page(bt, value)
    message = rf"block_table\[1\]: Expected page indices in \[0, {kv.shape[0]}\) .*got {value}"
    with pytest.raises(InputError, match=message):
        mla.mla_decode_naive(q, kv, bad, sl, softmax_scale=SCALE)
    with pytest.raises(InputError, match=message):
        mla.mla_decode_split_kv(q, kv, bad, sl, softmax_scale=SCALE)
    if DEVICE == "cpu":
        for strategy in ("split_kv", "naive"):
            plan = _plan(sl, s_q=1, h_q=1, device=DEVICE, strategy=strategy)
            with pytest.raises(InputError, match=message):
                plan.run(q, kv, bad)
        meta, splits = get_mla_metadata(sl, 1, 1)
        with pytest.raises(InputError, match=message):
            mla_decode_with_kvcache(q, kv, bad, sl, 512, meta, splits)


def test_unused_trailing_block_table_entries_may_hold_anything(request) -> None:
    # Serving stacks pad block tables with -1 (or stale ids): only the pages a sequence's
    # keys lie on are checked and read.
    q, kv, bt, sl = _inputs(request, seqlens=(3, 17, 5), s_q=1, h_q=1)
    padded = torch.cat([bt, torch.full_like(bt, -1)], dim=1)
    padded[0, 1:] = 10**6
    padded[2, 1:] = -(10**6)
    ref_out, ref_lse = mla_decode_ref(q, kv, padded, sl, softmax_scale=SCALE)
    out, lse = poisoned_outputs(q)
    mla.mla_decode_split_kv(q, kv, padded, sl, softmax_scale=SCALE, out=out, lse=lse)
    assert_matches(out, lse, ref_out, ref_lse, torch.float32)
    plan = _plan(sl, s_q=1, h_q=1, device=DEVICE)
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, padded, out=out, lse=lse)
    assert_matches(out, lse, ref_out, ref_lse, torch.float32)


def test_lengths_without_values_are_refused_by_name() -> None:
    # Meta-device lengths raised torch's "Cannot copy out of meta tensor; no data!".
    lengths = torch.tensor([3, 4], dtype=torch.int32, device="meta")
    message = r"cache_seqlens: Expected lengths with values \(a CPU or CUDA tensor\), got meta"
    with pytest.raises(InputError, match=message):
        _plan(lengths, s_q=1, h_q=1, device=DEVICE)
    with pytest.raises(InputError, match=message):
        get_mla_metadata(lengths, 1, 1)


def test_flashmla_head_counts_and_dims_of_the_wrong_kind_are_named(request) -> None:
    # num_heads_k=True and head_dim_v=512.0 passed as 1 and 512.
    q, kv, bt, sl = _inputs(request, seqlens=(3, 9), s_q=1, h_q=1)
    with pytest.raises(InputError, match="num_heads_k: Expected a positive integer, got True"):
        get_mla_metadata(sl, 1, True)
    with pytest.raises(InputError, match=r"num_heads_k: Expected a positive integer, got 1\.0"):
        get_mla_metadata(sl, 1, 1.0)
    meta, splits = get_mla_metadata(sl, 1, 1)
    with pytest.raises(InputError, match=r"head_dim_v: Expected head dim 512, got 512\.0"):
        mla_decode_with_kvcache(q, kv, bt, sl, 512.0, meta, splits)
    # An integer of another kind is still a head dim.
    out, _ = mla_decode_with_kvcache(q, kv, bt, sl, np.int64(512), meta, splits)
    assert out.shape == (2, 1, 1, 512)


@pytest.mark.skipif(DEVICE != "cpu", reason="the pieces are read back on the CPU only")
def test_copied_metadata_is_checked_where_its_pieces_can_be_read(request) -> None:
    # A copy of the metadata carries no lengths: its pieces went unchecked, so a piece past
    # the block table, or naming a sequence past the batch, read memory outside the inputs.
    q, kv, bt, sl = _inputs(request, seqlens=(3, 17), s_q=1, h_q=1)
    meta, splits = get_mla_metadata(sl, 1, 1)
    copy = meta.clone()
    out, lse = mla_decode_with_kvcache(q, kv, bt, sl, 512, copy, splits)
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=576**-0.5)
    assert_matches(out, lse, ref_out, ref_lse, torch.float32)
    far = copy.clone()
    far[far[:, 0] == 1, 2] = 16 * bt.shape[1] + 1  # sequence 1 reads past its table
    with pytest.raises(InputError, match=r"block_table: Expected a block table of at least"):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, far, splits)
    stray = copy.clone()
    stray[0, 0] = 2
    with pytest.raises(InputError, match=r"tile_scheduler_metadata: Expected pieces .* got \[2,"):
        mla_decode_with_kvcache(q, kv, bt, sl, 512, stray, splits)
    short = torch.tensor([3, 1], dtype=torch.int32)  # draft token 0 of sequence 1 sees no key
    q2 = torch.cat([q, q], dim=1)
    with pytest.raises(InputError, match=r"cache_seqlens\[1\]: Expected cache_seqlens >= s_q = 2"):
        mla_decode_with_kvcache(q2, kv, bt, short, 512, copy, splits, causal=True)


# ------------------------------------------------------------------ partial outputs' type


def test_sixteen_bit_partials_match_reference_in_half_the_workspace(request) -> None:
    # Awkward lengths (1, 17, 4097 keys) and five heads in forced pieces: every split
    # piece's partial goes through the float16 workspace and the merge.
    q, kv, bt, sl = _inputs(request, seqlens=(1, 17, 4097), s_q=1, h_q=5, dtype=torch.float16)
    ref = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    shape = {"s_q": 1, "h_q": 5, "dtype": torch.float16, "num_splits": [1, 2, 5]}
    full = _plan(sl, **shape)
    half = _plan(sl, **shape, partial_dtype=torch.float16)
    assert full.partial_dtype == torch.float32 and half.partial_dtype == torch.float16
    slots, rows = 7, 5  # slots for the split sequences only
    assert full.workspace_bytes == slots * rows * (512 + 1) * 4
    assert half.workspace_bytes == slots * rows * (256 + 1) * 4
    results = []
    for plan in (full, half):
        out, lse = poisoned_outputs(q)
        plan.run(q, kv, bt, out=out, lse=lse)
        assert_matches(out, lse, *ref, torch.float16)
        results.append(out)
    assert half._o_part is not None and half._o_part.dtype == torch.float16
    # One more rounding to float16 moves the output by about float16's precision, no more.
    assert float((results[0] - results[1]).double().norm() / ref[0].norm()) < 2e-3


def test_sixteen_bit_partials_fit_a_caller_workspace_sized_by_the_plan(request) -> None:
    q, kv, bt, sl = _inputs(request, dtype=torch.float16)
    need = _plan(sl, dtype=torch.float16, num_splits=2, partial_dtype=torch.float16)
    workspace = torch.zeros(need.workspace_bytes, dtype=torch.uint8, device=DEVICE)
    plan = _plan(
        sl, dtype=torch.float16, num_splits=2, partial_dtype=torch.float16, workspace=workspace
    )
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    assert workspace.any(), "the partial outputs went somewhere else"
    ref = mla_decode_ref(q, kv, bt, sl, softmax_scale=SCALE)
    assert_matches(out, lse, *ref, torch.float16)


@pytest.mark.parametrize(
    ("kernel", "rows", "dtype", "kv_fp8", "default", "sixteen_bit_ok"),
    [
        # The ring kernel on a dense cache: 16-bit by default (exp 50).
        ("seesaw", 16, torch.bfloat16, False, torch.bfloat16, True),
        ("seesaw", 1, torch.float16, False, torch.float16, True),
        # The 64-row seesaw kernel: 16-bit partials lost 2 % in its pair merge (exp 51).
        ("seesaw", 17, torch.bfloat16, False, torch.float32, False),
        # The FP8 ring kernel: 16-bit partials measured no faster there.
        ("seesaw", 16, torch.bfloat16, True, torch.float32, False),
        ("split_kv", 16, torch.bfloat16, False, torch.float32, True),
        ("split_kv", 128, torch.float16, False, torch.float32, True),
        ("split_kv", 16, torch.bfloat16, True, torch.float32, False),
        ("split_kv", 16, torch.float32, False, torch.float32, False),
        ("hopper", 128, torch.bfloat16, False, torch.float32, False),
        ("naive", 16, torch.bfloat16, False, torch.float32, False),
    ],
)
def test_partial_dtype_defaults_and_choices(
    kernel, rows, dtype, kv_fp8, default, sixteen_bit_ok
) -> None:
    from kernelopt.kernels.mla.api import resolve_partial_dtype

    def resolve(requested):
        return resolve_partial_dtype(
            requested, kernel=kernel, rows=rows, dtype=dtype, kv_fp8=kv_fp8
        )

    assert resolve(None) == default
    assert resolve(torch.float32) == torch.float32
    if sixteen_bit_ok:
        assert resolve(dtype) == dtype
    else:
        with pytest.raises(InputError, match=r"partial_dtype: Expected torch.float32 for the"):
            resolve(dtype if dtype != torch.float32 else torch.bfloat16)


@pytest.mark.parametrize("bad", [torch.float64, torch.bfloat16, "float16", torch.int8])
def test_plan_refuses_a_partial_type_it_cannot_store(bad) -> None:
    with pytest.raises(
        InputError,
        match=r"partial_dtype: Expected torch.float32 or torch.float16 for the partial outputs "
        r"of this plan \(kernel 'split_kv', 6 query rows, dtype torch.float16\), got",
    ):
        _plan([130, 17], dtype=torch.float16, partial_dtype=bad)


def test_workspace_views_of_sixteen_bit_partials() -> None:
    from kernelopt.kernels.mla.split_kv import split_workspace, workspace_numel

    slots, rows = 5, 3
    buffer = torch.zeros(workspace_numel(slots, rows, torch.bfloat16))
    assert buffer.numel() == slots * rows * 257
    o_part, lse_part = split_workspace(buffer, slots, rows, torch.bfloat16)
    assert o_part.shape == (slots, rows, 512) and o_part.dtype == torch.bfloat16
    assert o_part.is_contiguous() and lse_part.is_contiguous()
    o_part.fill_(1.0)
    assert not lse_part.any(), "the partials overlap the LSEs"
    assert lse_part.data_ptr() - o_part.data_ptr() == slots * rows * 512 * 2
    with pytest.raises(InputError, match=r"partial_dtype: Expected float32, bfloat16 or float16"):
        workspace_numel(slots, rows, torch.float64)
