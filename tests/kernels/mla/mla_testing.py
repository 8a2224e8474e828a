"""Shared helpers of the MLA decode tests: inputs, error measures, tolerances."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import pytest
import torch

from kernelopt.kernels.mla import MLADecodePlan

D_QK = 576
D_V = 512

# Bounds on ‖out − ref‖ / ‖ref‖ against the float64 reference. float32 dots run in IEEE
# mode (no tf32): the kernels reach 6e-7. Half-precision bounds cover the rounding of P and
# of the output, about half a unit in the last place (float16 reaches 2.4e-4 on the CPU,
# 2^-11 = 4.9e-4 is its unit roundoff; bfloat16's is 2^-8 = 3.9e-3).
TOLERANCE = {torch.float32: 2e-6, torch.float16: 1e-3, torch.bfloat16: 1e-2}
# The LSE is float32 whatever the inputs: products of half-precision values are exact in
# float32 and every kernel sums its softmax denominators in float32 (3e-7 at most on the
# CPU; 2.8e-6 to 4.5e-6 measured for bfloat16 inputs on the H200), so it is held near
# float32's bound. An LSE computed with the scale rounded to bfloat16 (2^-9) would pass
# the output's bound.
LSE_TOLERANCE = 2e-5


def seed_of(request: pytest.FixtureRequest) -> int:
    """A seed fixed per test (reproducible) and different across tests."""
    return zlib.crc32(request.node.nodeid.encode())


def make_inputs(
    seqlens: list[int],
    *,
    s_q: int,
    h_q: int,
    page: int,
    dtype: torch.dtype,
    seed: int,
    device: str | torch.device = "cpu",
    spare_blocks: int = 3,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random ``q``, a paged cache with shuffled pages, its block table and the lengths.

    Pages are drawn as a random permutation of the cache, so logical order never matches
    physical order; cache rows past every sequence's end hold NaN, so a kernel that reads
    keys it should not read produces NaN.
    """
    gen = torch.Generator(device="cpu").manual_seed(seed)
    batch = len(seqlens)
    max_blocks = max(-(-n // page) for n in seqlens) + 1  # one unused column
    num_blocks = batch * max_blocks + spare_blocks
    kv = torch.randn(num_blocks, page, 1, D_QK, generator=gen)
    perm = torch.randperm(num_blocks, generator=gen)
    block_table = perm[: batch * max_blocks].reshape(batch, max_blocks).to(torch.int32)
    for b, n in enumerate(seqlens):
        # Poison every cache row that does not belong to a live key.
        last_page = block_table[b, (n - 1) // page]
        kv[last_page, (n - 1) % page + 1 :] = float("nan")
        for col in range(-(-n // page), max_blocks):
            kv[block_table[b, col]] = float("nan")
    kv[perm[batch * max_blocks :]] = float("nan")
    q = torch.randn(batch, s_q, h_q, D_QK, generator=gen)
    cache_seqlens = torch.tensor(seqlens, dtype=torch.int32)
    return (
        q.to(dtype=dtype, device=device),
        kv.to(dtype=dtype, device=device),
        block_table.to(device),
        cache_seqlens.to(device),
    )


def poisoned_outputs(q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """NaN-filled ``out [b, s_q, h_q, 512]`` and ``lse [b, h_q, s_q]`` for ``q``."""
    b, s_q, h_q, _ = q.shape
    out = torch.full((b, s_q, h_q, D_V), float("nan"), dtype=q.dtype, device=q.device)
    lse = torch.full((b, h_q, s_q), float("nan"), dtype=torch.float32, device=q.device)
    return out, lse


def rel_err(x: torch.Tensor, ref: torch.Tensor) -> float:
    """‖x − ref‖ / ‖ref‖ in float64."""
    return float((x.double() - ref).norm() / ref.norm())


def lse_err(x: torch.Tensor, ref: torch.Tensor) -> float:
    """Relative LSE error with an RMS floor of 1 (an LSE near 0 is not a relative failure)."""
    floor = ref.numel() ** 0.5
    return float((x.double() - ref).norm() / max(float(ref.norm()), floor))


def assert_matches(
    out: torch.Tensor,
    lse: torch.Tensor,
    ref_out: torch.Tensor,
    ref_lse: torch.Tensor,
    dtype: torch.dtype,
) -> None:
    """Every element written and finite, and within the dtype's bound of the reference."""
    assert torch.isfinite(out).all(), "out has NaN/inf (unwritten or wrong rows)"
    assert torch.isfinite(lse).all(), "lse has NaN/inf (unwritten or wrong rows)"
    assert out.shape == ref_out.shape and lse.shape == ref_lse.shape
    e_out, e_lse = rel_err(out, ref_out), lse_err(lse, ref_lse)
    bound = TOLERANCE[dtype]
    assert e_out < bound, f"out relative error {e_out:.3e} >= {bound:.0e}"
    assert e_lse < LSE_TOLERANCE, f"lse relative error {e_lse:.3e} >= {LSE_TOLERANCE:.0e}"


def assert_graph_replay_matches(
    plan: MLADecodePlan,
    seed: int,
    pack: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> None:
    """A CUDA-graph capture of ``plan.run`` is right on fresh inputs of the plan's shape.

    The first run happens outside the capture (it compiles and sizes the descriptor
    scratch); the replay must rewrite NaN-poisoned outputs. ``pack`` turns the random
    cache into the layout the plan reads (``quantize_kv_fp8`` for ``kv_fp8=True``).
    """
    from kernelopt.kernels.mla import mla_decode_ref

    q, kv, bt, sl = make_inputs(
        list(plan.seqlens),
        s_q=plan.s_q,
        h_q=plan.h_q,
        page=plan.page_size,
        dtype=plan.dtype,
        seed=seed,
        device=plan.device,
    )
    if pack is not None:
        kv = pack(kv)
    out, lse = poisoned_outputs(q)
    plan.run(q, kv, bt, out=out, lse=lse)
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        plan.run(q, kv, bt, out=out, lse=lse)
    graph.replay()
    torch.cuda.synchronize()
    ref_out, ref_lse = mla_decode_ref(q, kv, bt, sl, softmax_scale=plan.softmax_scale)
    assert_matches(out, lse, ref_out, ref_lse, plan.dtype)


def graph_batch_lengths(seed: int) -> list[int]:
    """A variable-length batch for graph tests: 31 lengths in [3000, 5200) and one 4097."""
    gen = torch.Generator().manual_seed(seed)
    return [int(n) for n in torch.randint(3000, 5200, (31,), generator=gen)] + [4097]
