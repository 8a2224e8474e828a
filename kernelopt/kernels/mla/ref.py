"""Float64 PyTorch reference for MLA decode over a paged cache: the ground truth of the tests.

It gathers each sequence's cache rows through the block table, upcasts everything to
float64 and computes ``softmax(scale · q kᵀ) v`` with the causal rule among the draft
tokens, one sequence at a time. It is meant to be read and trusted, not to be fast. A
cache in the FP8 layout (:mod:`kernelopt.kernels.mla.fp8`) is dequantized exactly, in
float64, so a kernel reading it is measured against the same values it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernelopt.kernels.mla._validate import (
    D_NOPE,
    check_cache_seqlens,
    check_flag,
    check_has_values,
    check_inputs,
    check_page_indices,
    check_seqlen_values,
    check_softmax_scale,
)
from kernelopt.kernels.mla.fp8 import dequantize_kv_fp8

if TYPE_CHECKING:
    import torch

__all__ = ["gather_kv", "mla_decode_ref"]


def gather_kv(
    kv_cache: torch.Tensor, block_table: torch.Tensor, batch_index: int, seqlen: int
) -> torch.Tensor:
    """The ``seqlen`` cache rows of one sequence, in order: ``[seqlen, row]`` (cache dtype).

    Key ``t`` of sequence ``batch_index`` lives in page ``block_table[batch_index, t // page]``
    at row ``t % page``.
    """
    import torch

    page = kv_cache.shape[1]
    keys = torch.arange(seqlen, device=kv_cache.device)
    pages = block_table[batch_index, keys // page].long()
    return kv_cache[pages, keys % page, 0, :]


def mla_decode_ref(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    cache_seqlens: torch.Tensor,
    *,
    softmax_scale: float,
    causal: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Absorbed MLA decode in float64, straight from the definition.

    Parameters
    ----------
    q : torch.Tensor
        ``[b, s_q, h_q, 576]`` queries (512 latent + 64 RoPE columns).
    kv_cache : torch.Tensor
        ``[num_blocks, page_size, 1, 576]`` paged latent cache; values are the first 512
        columns of the same rows. Or ``[num_blocks, page_size, 1, 656]`` uint8, the FP8
        layout (:func:`~kernelopt.kernels.mla.fp8.quantize_kv_fp8`).
    block_table : torch.Tensor
        ``[b, max_blocks]`` int32 page indices; those a sequence reads must lie in
        ``[0, num_blocks)`` (checked here; kernels read the table as given).
    cache_seqlens : torch.Tensor
        ``[b]`` int32 cache lengths, each at least ``s_q``.
    softmax_scale : float
        Scale applied to ``q · k`` before the softmax: finite and positive.
    causal : bool
        Draft token ``i`` sees keys ``t < seqlen - s_q + i + 1`` when true, all keys otherwise.

    Returns
    -------
    out : torch.Tensor
        ``[b, s_q, h_q, 512]`` float64.
    lse : torch.Tensor
        ``[b, h_q, s_q]`` float64, natural log of the sum of ``exp(scale · q · k)``.
    """
    import torch

    batch, s_q, h_q, page = check_inputs(q, kv_cache, block_table, allow_fp8=True)
    # The ground truth takes what the kernels take: a NaN scale is not an answer to compare.
    softmax_scale = check_softmax_scale(softmax_scale)
    causal = check_flag(causal, "causal")
    fp8 = kv_cache.dtype == torch.uint8
    check_cache_seqlens(cache_seqlens, batch=batch)
    # The cache and the block table share q's device (check_inputs): two reads cover all.
    check_has_values(q, "q")
    check_has_values(cache_seqlens, "cache_seqlens")
    seqlens = [int(n) for n in cache_seqlens.tolist()]
    check_seqlen_values(seqlens, s_q=s_q, page_size=page, max_blocks=block_table.shape[1])
    check_page_indices(block_table, seqlens, page_size=page, num_blocks=kv_cache.shape[0])

    out = torch.empty(batch, s_q, h_q, D_NOPE, dtype=torch.float64, device=q.device)
    lse = torch.empty(batch, h_q, s_q, dtype=torch.float64, device=q.device)
    for b, seqlen in enumerate(seqlens):
        rows = gather_kv(kv_cache, block_table, b, seqlen)
        kv = dequantize_kv_fp8(rows, torch.float64) if fp8 else rows.double()  # [t, 576]
        scores = torch.einsum("shd,td->sht", q[b].double(), kv) * softmax_scale  # [s_q, h_q, t]
        if causal:
            keys = torch.arange(seqlen, device=q.device)
            limit = seqlen - s_q + torch.arange(s_q, device=q.device) + 1  # [s_q]
            visible = keys[None, :] < limit[:, None]  # [s_q, t]
            scores = scores.masked_fill(~visible[:, None, :], float("-inf"))
        row_lse = torch.logsumexp(scores, dim=-1)  # [s_q, h_q]
        probs = torch.exp(scores - row_lse[..., None])
        out[b] = torch.einsum("sht,tv->shv", probs, kv[:, :D_NOPE])
        lse[b] = row_lse.transpose(0, 1)
    return out, lse
