# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""Split-KV MLA decode tuned for Hopper: tensor-memory-accelerator tiles, no replicated QKᵀ.

Same work layout, schedule and LSE merge as :mod:`kernelopt.kernels.mla.split_kv` (the
pieces come from :mod:`kernelopt.kernels.mla.schedule`, partial outputs are merged by
``split_kv._mla_combine_kernel``); three changes measured on an H200 make it faster:

1. **Key tiles through tensor descriptors.** Each ``BLOCK_N``-row tile of the cache lies in
   one page (the page size is a multiple of ``BLOCK_N``), so it is one rectangular box of
   the cache viewed as ``[num_blocks · page, 576]`` and is fetched by the tensor memory
   accelerator straight into shared memory. The pointer version kept a ``64 × 512``
   tensor of 64-bit addresses per tile in registers: 255 registers and 1.2 KB of spills
   per thread (ptxas, sm_90a), against 219 registers and none here.
2. **QKᵀ computed once.** A 64-row tile needs 8 warps, two warpgroups, to hold its
   ``64 × 512`` float32 accumulator (128 registers a thread). When Triton sees one
   product feeding another (QKᵀ → softmax → PV) it lays every warp along the rows, and
   with only 64 rows both warpgroups then compute the same QKᵀ: 53 % more matrix work.
   Two things break that chain: the softmax runs under a branch the compiler cannot
   decide (``seqlen > 0``, always true inside the loop), and the 512-wide and 64-wide
   products are each scaled before they are summed, so neither becomes the other's
   accumulator. The warpgroups then split the keys of QKᵀ between them.
3. **Wider key tiles.** 64 keys a tile with two pipeline stages fill 229 KB of shared
   memory (query tile 72 KB, two key tiles 144 KB, the P tile 8 KB), within the 227 KiB a
   program may use.

Sequences with 32 query rows or fewer (``s_q · h_q``, e.g. h_q = 16 at s_q = 1) run the
split-KV kernel instead (:data:`MIN_ROWS`): their 16-row tiles use ``mma.sync``, where the
key tiles are not replicated in the first place, and with tensor-descriptor tiles the
16-row kernel spilled registers (255 registers, 0.9 KB of stack at 64-key tiles) while the
pointer version holds two programs per multiprocessor without spills; on the H200 the
split-KV kernel was also the faster of the two there.

Descriptors created inside the kernel need a small global scratch area per program; the
launcher passes Triton an allocator that hands out the caller's persistent ``scratch``
buffer, so a run allocates nothing once that buffer is large enough.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attrs
import triton
import triton.language as tl

from kernelopt._errors import InputError, expected
from kernelopt.kernels.mla._validate import D_NOPE, D_PE
from kernelopt.kernels.mla.split_kv import (
    LOG2E,
    SplitKVConfig,
    check_partial_dtype,
    launch_merge,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "MIN_ROWS",
    "ScratchAllocator",
    "check_hopper_layout",
    "default_config",
    "launch_hopper",
]


MIN_ROWS = 33
"""Fewest query rows per sequence (``s_q · h_q``) this kernel runs; fewer use split-KV."""


def default_config(rows: int, dtype: torch.dtype | None = None) -> SplitKVConfig:
    """Launch knobs for ``rows = s_q · h_q`` (at least :data:`MIN_ROWS`) and the input dtype.

    The H200 sweep behind these choices (bf16, b = 32, 4096 keys, page 64) is in
    ``docs/kernels/mla_decode.md``: 64-row tiles with 64-key tiles and 2 stages were the
    fastest at h_q = 128 and at s_q · h_q = 256. float32 inputs (CPU tests) take 16-key
    tiles.
    """
    import torch

    config = SplitKVConfig(block_m=64, block_n=64, num_warps=8, num_stages=2)
    if dtype == torch.float32:
        config = attrs.evolve(config, block_n=16, num_stages=1)
    return config


@triton.jit
def _attend_tile(
    b_qn,
    b_qp,
    b_kn,
    b_kp,
    k0,
    b_lim,
    b_m,
    b_l,
    b_acc,
    seqlen,
    qk_scale,
    BLOCK_N: tl.constexpr,
    DOT_PRECISION: tl.constexpr,
):
    """One key tile of the online softmax: returns the updated (m, l, acc)."""
    o_k = k0 + tl.arange(0, BLOCK_N)
    # Each product is scaled before the sum, so neither becomes the other's accumulator.
    b_s = (
        tl.dot(b_qn, tl.trans(b_kn), input_precision=DOT_PRECISION) * qk_scale
        + tl.dot(b_qp, tl.trans(b_kp), input_precision=DOT_PRECISION) * qk_scale
    )
    if seqlen > 0:  # always true here; keeps QKᵀ out of the compiler's dot chain
        b_s = tl.where(o_k[None, :] < b_lim[:, None], b_s, float("-inf"))
        b_m_new = tl.maximum(b_m, tl.max(b_s, 1))
        b_alpha = tl.exp2(b_m - b_m_new)
        b_p = tl.exp2(b_s - b_m_new[:, None])
        b_l = b_l * b_alpha + tl.sum(b_p, 1)
        b_pk = b_p.to(b_kn.dtype)
    else:
        # Never taken; built from b_s so that no constant tile occupies shared memory.
        b_m_new = b_m
        b_alpha = b_m
        b_pk = b_s.to(b_kn.dtype)
    b_acc = b_acc * b_alpha[:, None]
    # The latent part of the same tile is V: no second load.
    b_acc = tl.dot(b_pk, b_kn, b_acc, input_precision=DOT_PRECISION)
    return b_m_new, b_l, b_acc


@triton.jit
def _mla_hopper_kernel(
    q,
    kv,
    block_table,
    seqlens,
    units,
    out,
    lse,
    o_part,
    lse_part,
    num_kv_rows,
    stride_qb,
    stride_qs,
    stride_qh,
    stride_btb,
    stride_ob,
    stride_os,
    stride_oh,
    stride_lb,
    stride_lh,
    stride_ls,
    qk_scale,
    S_Q: tl.constexpr,
    H_Q: tl.constexpr,
    PAGE: tl.constexpr,
    CAUSAL: tl.constexpr,
    D_NOPE: tl.constexpr,
    D_PE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    NUM_STAGES: tl.constexpr,
    DOT_PRECISION: tl.constexpr,
):
    ROWS: tl.constexpr = S_Q * H_Q
    D_QK: tl.constexpr = D_NOPE + D_PE
    LN2: tl.constexpr = 0.6931471805599453
    i_m, i_u = tl.program_id(0), tl.program_id(1)
    # The piece this program works on: [batch, key_start, key_end, slot] (schedule.table()).
    i_b = tl.load(units + i_u * 4).to(tl.int64)
    key_start = tl.load(units + i_u * 4 + 1)
    key_end = tl.load(units + i_u * 4 + 2)
    i_slot = tl.load(units + i_u * 4 + 3)
    seqlen = tl.load(seqlens + i_b)

    o_r = i_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_r = o_r < ROWS
    i_tok = o_r // H_Q
    i_head = o_r % H_Q
    o_dn = tl.arange(0, D_NOPE)
    o_dp = tl.arange(0, D_PE)
    p_q = q + i_b * stride_qb + i_tok * stride_qs + i_head * stride_qh
    b_qn = tl.load(p_q[:, None] + o_dn[None, :], mask=m_r[:, None], other=0.0)
    b_qp = tl.load(p_q[:, None] + D_NOPE + o_dp[None, :], mask=m_r[:, None], other=0.0)
    # The cache as a [num_blocks · page, 576] matrix: a key tile is one box of it.
    d_kn = tl.make_tensor_descriptor(kv, [num_kv_rows, D_QK], [D_QK, 1], [BLOCK_N, D_NOPE])
    d_kp = tl.make_tensor_descriptor(kv + D_NOPE, [num_kv_rows, D_PE], [D_QK, 1], [BLOCK_N, D_PE])

    if CAUSAL:
        # Draft token i sees keys < seqlen - S_Q + i + 1; no program reads a key past the
        # limit of its last token.
        last_tok = (tl.minimum(i_m * BLOCK_M + BLOCK_M, ROWS) - 1) // H_Q
        b_lim = tl.minimum(seqlen - S_Q + 1 + i_tok, key_end)
        key_hi = tl.minimum(seqlen - S_Q + 1 + last_tok, key_end)
    else:
        b_lim = tl.zeros([BLOCK_M], dtype=tl.int32) + key_end
        key_hi = key_end

    b_acc = tl.zeros([BLOCK_M, D_NOPE], dtype=tl.float32)
    # b_m starts finite, so a row whose keys are all masked so far keeps alpha = 1 and
    # p = 0 instead of computing -inf - -inf.
    b_m = tl.full([BLOCK_M], -1.0e30, dtype=tl.float32)
    b_l = tl.zeros([BLOCK_M], dtype=tl.float32)
    p_bt = block_table + i_b * stride_btb
    n_tiles = tl.cdiv(key_hi - key_start, BLOCK_N)
    # Tiles wholly inside the sequence come from the whole-cache descriptors; a last tile
    # that runs past the sequence's end gets a descriptor that stops at its last key, so
    # the accelerator fills the rows past it with zeros (stale cache rows may hold NaN,
    # and 0 · NaN would poison P·V).
    n_full = (tl.minimum(seqlen, key_start + n_tiles * BLOCK_N) - key_start) // BLOCK_N
    for i_t in tl.range(0, n_full, num_stages=NUM_STAGES):
        k0 = key_start + i_t * BLOCK_N
        row0 = tl.load(p_bt + k0 // PAGE) * PAGE + k0 % PAGE
        b_m, b_l, b_acc = _attend_tile(
            b_qn,
            b_qp,
            d_kn.load([row0, 0]),
            d_kp.load([row0, 0]),
            k0,
            b_lim,
            b_m,
            b_l,
            b_acc,
            seqlen,
            qk_scale,
            BLOCK_N,
            DOT_PRECISION,
        )
    if n_full < n_tiles:
        k0 = key_start + n_full * BLOCK_N
        row0 = tl.load(p_bt + k0 // PAGE) * PAGE + k0 % PAGE
        p_tail = kv + row0.to(tl.int64) * D_QK
        d_tn = tl.make_tensor_descriptor(p_tail, [seqlen - k0, D_QK], [D_QK, 1], [BLOCK_N, D_NOPE])
        d_tp = tl.make_tensor_descriptor(
            p_tail + D_NOPE, [seqlen - k0, D_PE], [D_QK, 1], [BLOCK_N, D_PE]
        )
        b_m, b_l, b_acc = _attend_tile(
            b_qn,
            b_qp,
            d_tn.load([0, 0]),
            d_tp.load([0, 0]),
            k0,
            b_lim,
            b_m,
            b_l,
            b_acc,
            seqlen,
            qk_scale,
            BLOCK_N,
            DOT_PRECISION,
        )

    if i_slot < 0:
        # The sequence is one piece: final output and natural-log LSE.
        b_o = b_acc / b_l[:, None]
        b_lse = (b_m + tl.log2(b_l)) * LN2
        p_o = out + i_b * stride_ob + i_tok * stride_os + i_head * stride_oh
        tl.store(p_o[:, None] + o_dn[None, :], b_o.to(out.dtype.element_ty), mask=m_r[:, None])
        tl.store(lse + i_b * stride_lb + i_head * stride_lh + i_tok * stride_ls, b_lse, mask=m_r)
    else:
        # A row may see no key of this piece (causal, early draft token): weight 0 in merge.
        m_empty = b_l == 0.0
        b_l_safe = tl.where(m_empty, 1.0, b_l)
        b_o = b_acc / b_l_safe[:, None]
        b_lse2 = tl.where(m_empty, float("-inf"), b_m + tl.log2(b_l_safe))
        o_slot = i_slot.to(tl.int64) * ROWS + o_r
        tl.store(o_part + o_slot[:, None] * D_NOPE + o_dn[None, :], b_o, mask=m_r[:, None])
        tl.store(lse_part + o_slot, b_lse2, mask=m_r)


class ScratchAllocator:
    """Hands Triton a persistent buffer for in-kernel tensor descriptors.

    Triton asks for ``size`` bytes at each launch of a kernel that creates descriptors.
    The buffer grows (one allocation) the first time a launch needs more than it holds;
    after that every launch reuses it, so runs captured in a CUDA graph keep a stable
    address as long as the first run happened before the capture.
    """

    def __init__(self, device: torch.device | str = "cuda") -> None:
        self.device = device
        self.buffer: torch.Tensor | None = None

    def __call__(self, size: int, alignment: int, stream: int | None) -> torch.Tensor:
        import torch

        del stream  # the buffer is only ever used by launches on the plan's stream
        needed = size + alignment
        if self.buffer is None or self.buffer.numel() < needed:
            self.buffer = torch.empty(needed, dtype=torch.int8, device=self.device)
        offset = (-self.buffer.data_ptr()) % alignment
        return self.buffer[offset : offset + size]


@contextlib.contextmanager
def _scratch(allocator: ScratchAllocator) -> Iterator[None]:
    # Set Triton's allocator only for our launch, leaving the caller's (if any) in place.
    from triton.runtime import _allocation

    token = _allocation._allocator.set(allocator)
    try:
        yield
    finally:
        _allocation._allocator.reset(token)


def check_hopper_layout(kv_cache: torch.Tensor, *, page_size: int, block_n: int) -> None:
    """Raise InputError unless the cache can be read in ``block_n``-row boxes.

    Parameters
    ----------
    kv_cache : torch.Tensor
        ``[num_blocks, page_size, 1, 576]``; rows of 576 contiguous values, pages one after
        another (``kv_cache.is_contiguous()``), 16-byte aligned.
    page_size : int
        Rows per page; a multiple of ``block_n`` so that no tile straddles two pages.
    block_n : int
        Keys per tile.
    """
    if page_size % block_n:
        raise InputError(
            expected(
                f"a page size that is a multiple of {block_n} for strategy 'hopper' "
                "(strategy 'split_kv' takes any page size)",
                page_size,
                where="page_size",
            )
        )
    if not kv_cache.is_contiguous() or kv_cache.data_ptr() % 16:
        raise InputError(
            expected(
                "a contiguous, 16-byte aligned kv_cache for strategy 'hopper'",
                f"strides {tuple(kv_cache.stride())}",
                where="kv_cache",
            )
        )


def launch_hopper(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    seqlens: torch.Tensor,
    units: torch.Tensor,
    split_offsets: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    *,
    o_part: torch.Tensor | None,
    lse_part: torch.Tensor | None,
    softmax_scale: float,
    causal: bool,
    num_units: int,
    has_splits: bool,
    config: SplitKVConfig,
    scratch: ScratchAllocator,
    uniform_pieces: int = 0,
) -> None:
    """Launch the Hopper kernel over ``(row tiles, num_units)`` and, if needed, the merge.

    Arguments are those of :func:`kernelopt.kernels.mla.split_kv.launch_split_kv`, plus the
    plan's descriptor ``scratch``; the layout must pass :func:`check_hopper_layout`.
    ``uniform_pieces`` goes to :func:`~kernelopt.kernels.mla.split_kv.launch_merge`.
    Nothing is allocated once ``scratch`` has grown to its size, and nothing is read back.
    """
    import torch

    _, s_q, h_q, _ = q.shape
    page = kv_cache.shape[1]
    rows = s_q * h_q
    check_hopper_layout(kv_cache, page_size=page, block_n=config.block_n)
    if has_splits and (o_part is None or lse_part is None):
        raise InputError(expected("a workspace for partial outputs", None, where="o_part"))
    if o_part is not None:
        check_partial_dtype(o_part, out, sixteen_bit=False)
    # Without splits no partial slot is ever written; any float32 tensor fills the slot.
    o_arg = o_part if o_part is not None else lse
    lse_arg = lse_part if lse_part is not None else lse
    grid = (triton.cdiv(rows, config.block_m), num_units)
    kwargs: dict[str, Any] = dict(
        S_Q=s_q,
        H_Q=h_q,
        PAGE=page,
        CAUSAL=causal,
        D_NOPE=D_NOPE,
        D_PE=D_PE,
        BLOCK_M=config.block_m,
        BLOCK_N=config.block_n,
        NUM_STAGES=config.num_stages,
        DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
        num_warps=config.num_warps,
        num_stages=config.num_stages,
    )
    with _scratch(scratch):
        _mla_hopper_kernel[grid](
            q,
            kv_cache,
            block_table,
            seqlens,
            units,
            out,
            lse,
            o_arg,
            lse_arg,
            kv_cache.shape[0] * page,
            q.stride(0),
            q.stride(1),
            q.stride(2),
            block_table.stride(0),
            out.stride(0),
            out.stride(1),
            out.stride(2),
            lse.stride(0),
            lse.stride(1),
            lse.stride(2),
            softmax_scale * LOG2E,
            **kwargs,
        )
    if has_splits:
        launch_merge(
            o_arg, lse_arg, split_offsets, out, lse, config=config, uniform_pieces=uniform_pieces
        )
