# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""Split-KV MLA decode for few query rows on Hopper: keys along the MMA's M dimension.

A Hopper tensor-core product (``wgmma``) takes at least 64 rows in M but as few as 8 columns
in N. With ``s_q · h_q`` query rows per sequence at 32 or fewer (h_q = 16 at s_q = 1),
the other kernels pad the queries to a 64-row tile, so three quarters of their matrix work
multiplies zeros, and at h_q = 16 that padded work (28 µs at b = 32, 4096 keys on an
H200) is most of the time the cache takes to stream (36 µs). This kernel computes the
transposed products instead, with the keys in M and the query rows in N:

* ``Sᵀ = K · Qᵀ`` — ``[64 keys, R rows]``, with ``R`` the rows rounded up to 16;
* ``Oᵀ += Vᵀ · Pᵀ`` — ``[512, R]``: the key tile, already in shared memory for ``Sᵀ``, is
  read again transposed (16-bit ``wgmma`` reads either major order), so V is not loaded
  twice and no product is padded past 16 columns.

The softmax statistics then run down the columns (one per query row), and the output is
written transposed back into ``[b, s_q, h_q, 512]``. Same work layout, schedule and LSE
merge as :mod:`kernelopt.kernels.mla.split_kv`; key tiles come by tensor descriptors as in
:mod:`kernelopt.kernels.mla.hopper` (page size a multiple of 64, tail tiles through a
descriptor that stops at the last key, so rows past it read as zeros, not stale NaN).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import triton
import triton.language as tl

from kernelopt.kernels.mla._validate import D_NOPE, D_PE
from kernelopt.kernels.mla.hopper import ScratchAllocator, _scratch, check_hopper_layout
from kernelopt.kernels.mla.split_kv import LOG2E, SplitKVConfig, launch_merge

if TYPE_CHECKING:
    import torch

__all__ = ["MAX_ROWS", "default_config", "launch_narrow"]

MAX_ROWS = 32
"""Most query rows per sequence (``s_q · h_q``) this kernel takes; more use a 64-row tile."""


def default_config(rows: int, dtype: torch.dtype | None = None) -> SplitKVConfig:
    """Launch knobs for ``rows = s_q · h_q`` (at most :data:`MAX_ROWS`) and the input dtype.

    ``block_m`` is the product's N: the rows rounded up to a power of two, at least 16.
    64-key tiles (the smallest M of ``wgmma``) in 2 stages take 2 × 72 KiB of shared memory.
    float32 inputs (CPU tests) take 16-key tiles.
    """
    import torch

    block_m = max(16, triton.next_power_of_2(rows))
    config = SplitKVConfig(block_m=block_m, block_n=64, num_warps=4, num_stages=2)
    if dtype == torch.float32:
        config = attrs.evolve(config, block_n=16, num_stages=1)
    return config


@triton.jit
def _attend_tile_t(
    b_qn,
    b_qp,
    b_kn,
    b_kp,
    k0,
    b_lim,
    b_m,
    b_l,
    b_acc,
    qk_scale,
    BLOCK_N: tl.constexpr,
    DOT_PRECISION: tl.constexpr,
):
    """One key tile of the online softmax, transposed: returns the updated (m, l, accᵀ)."""
    o_k = k0 + tl.arange(0, BLOCK_N)
    b_s = tl.dot(b_kn, tl.trans(b_qn), input_precision=DOT_PRECISION)
    b_s = tl.dot(b_kp, tl.trans(b_qp), b_s, input_precision=DOT_PRECISION) * qk_scale
    b_s = tl.where(o_k[:, None] < b_lim[None, :], b_s, float("-inf"))
    b_m_new = tl.maximum(b_m, tl.max(b_s, 0))
    b_alpha = tl.exp2(b_m - b_m_new)
    b_p = tl.exp2(b_s - b_m_new[None, :])
    b_l = b_l * b_alpha + tl.sum(b_p, 0)
    b_acc = b_acc * b_alpha[None, :]
    # The latent part of the same tile is V, read transposed: no second load.
    b_acc = tl.dot(tl.trans(b_kn), b_p.to(b_kn.dtype), b_acc, input_precision=DOT_PRECISION)
    return b_m_new, b_l, b_acc


@triton.jit
def _mla_narrow_kernel(
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
    i_u = tl.program_id(0)
    # The piece this program works on: [batch, key_start, key_end, slot] (schedule.table()).
    i_b = tl.load(units + i_u * 4).to(tl.int64)
    key_start = tl.load(units + i_u * 4 + 1)
    key_end = tl.load(units + i_u * 4 + 2)
    i_slot = tl.load(units + i_u * 4 + 3)
    seqlen = tl.load(seqlens + i_b)

    o_r = tl.arange(0, BLOCK_M)
    m_r = o_r < ROWS
    i_tok = o_r // H_Q
    i_head = o_r % H_Q
    o_dn = tl.arange(0, D_NOPE)
    o_dp = tl.arange(0, D_PE)
    p_q = q + i_b * stride_qb + i_tok * stride_qs + i_head * stride_qh
    b_qn = tl.load(p_q[:, None] + o_dn[None, :], mask=m_r[:, None], other=0.0)
    b_qp = tl.load(p_q[:, None] + D_NOPE + o_dp[None, :], mask=m_r[:, None], other=0.0)
    d_kn = tl.make_tensor_descriptor(kv, [num_kv_rows, D_QK], [D_QK, 1], [BLOCK_N, D_NOPE])
    d_kp = tl.make_tensor_descriptor(kv + D_NOPE, [num_kv_rows, D_PE], [D_QK, 1], [BLOCK_N, D_PE])

    if CAUSAL:
        # Draft token i sees keys < seqlen - S_Q + i + 1.
        last_tok = (ROWS - 1) // H_Q
        b_lim = tl.minimum(seqlen - S_Q + 1 + i_tok, key_end)
        key_hi = tl.minimum(seqlen - S_Q + 1 + last_tok, key_end)
    else:
        b_lim = tl.zeros([BLOCK_M], dtype=tl.int32) + key_end
        key_hi = key_end

    b_acc = tl.zeros([D_NOPE, BLOCK_M], dtype=tl.float32)
    # b_m starts finite, so a row whose keys are all masked so far keeps alpha = 1 and
    # p = 0 instead of computing -inf - -inf.
    b_m = tl.full([BLOCK_M], -1.0e30, dtype=tl.float32)
    b_l = tl.zeros([BLOCK_M], dtype=tl.float32)
    p_bt = block_table + i_b * stride_btb
    n_tiles = tl.cdiv(key_hi - key_start, BLOCK_N)
    n_full = (tl.minimum(seqlen, key_start + n_tiles * BLOCK_N) - key_start) // BLOCK_N
    for i_t in tl.range(0, n_full, num_stages=NUM_STAGES):
        k0 = key_start + i_t * BLOCK_N
        row0 = tl.load(p_bt + k0 // PAGE) * PAGE + k0 % PAGE
        b_m, b_l, b_acc = _attend_tile_t(
            b_qn,
            b_qp,
            d_kn.load([row0, 0]),
            d_kp.load([row0, 0]),
            k0,
            b_lim,
            b_m,
            b_l,
            b_acc,
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
        b_m, b_l, b_acc = _attend_tile_t(
            b_qn,
            b_qp,
            d_tn.load([0, 0]),
            d_tp.load([0, 0]),
            k0,
            b_lim,
            b_m,
            b_l,
            b_acc,
            qk_scale,
            BLOCK_N,
            DOT_PRECISION,
        )

    if i_slot < 0:
        # The sequence is one piece: final output and natural-log LSE.
        b_o = b_acc / b_l[None, :]
        b_lse = (b_m + tl.log2(b_l)) * LN2
        p_o = out + i_b * stride_ob + i_tok * stride_os + i_head * stride_oh
        tl.store(p_o[None, :] + o_dn[:, None], b_o.to(out.dtype.element_ty), mask=m_r[None, :])
        tl.store(lse + i_b * stride_lb + i_head * stride_lh + i_tok * stride_ls, b_lse, mask=m_r)
    else:
        # A row may see no key of this piece (causal, early draft token): weight 0 in merge.
        m_empty = b_l == 0.0
        b_l_safe = tl.where(m_empty, 1.0, b_l)
        b_o = b_acc / b_l_safe[None, :]
        b_lse2 = tl.where(m_empty, float("-inf"), b_m + tl.log2(b_l_safe))
        o_slot = i_slot.to(tl.int64) * ROWS + o_r
        tl.store(o_part + o_slot[None, :] * D_NOPE + o_dn[:, None], b_o, mask=m_r[None, :])
        tl.store(lse_part + o_slot, b_lse2, mask=m_r)


def launch_narrow(
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
) -> None:
    """Launch one program per piece and, if needed, the merge.

    Arguments are those of :func:`kernelopt.kernels.mla.hopper.launch_hopper`; ``s_q · h_q``
    must be at most :data:`MAX_ROWS` and at most ``config.block_m``.
    """
    import torch

    from kernelopt._errors import InputError, expected

    _, s_q, h_q, _ = q.shape
    page = kv_cache.shape[1]
    rows = s_q * h_q
    if rows > min(MAX_ROWS, config.block_m):
        raise InputError(
            expected(f"at most {min(MAX_ROWS, config.block_m)} query rows", rows, where="q")
        )
    check_hopper_layout(kv_cache, page_size=page, block_n=config.block_n)
    if has_splits and (o_part is None or lse_part is None):
        raise InputError(expected("a workspace for partial outputs", None, where="o_part"))
    o_arg = o_part if o_part is not None else lse
    lse_arg = lse_part if lse_part is not None else lse
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
        _mla_narrow_kernel[(num_units,)](
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
        launch_merge(o_arg, lse_arg, split_offsets, out, lse, config=config)
