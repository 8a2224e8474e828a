# mypy: disable-error-code="untyped-decorator,no-untyped-def"
"""Split-KV (flash-decoding) MLA decode for Hopper-class GPUs, with its LSE merge.

Work layout
-----------
Absorbed MLA is multi-query attention with one latent KV head, so every query row of a
sequence (``s_q`` draft tokens × ``h_q`` heads, row ``r = i · h_q + h``) attends to the same
keys. The rows form the M side of the matrix-unit tile (``BLOCK_M`` rows, 64 for a Hopper
warpgroup), so each key tile loaded from the cache serves ``BLOCK_M`` rows at once. The keys
of a sequence are cut into pieces by :mod:`kernelopt.kernels.mla.schedule`; the grid is
``(row tiles, pieces)`` with the row tile fastest, so the programs that read the same keys
run side by side and share them through L2.

Per key tile (``BLOCK_N`` cache rows of 576 values) the kernel loads the rows once, as a
512-wide latent part and a 64-wide RoPE part (Triton tiles are powers of two), and uses the
latent part twice: transposed as K for ``S = q kᵀ`` and as V for ``O += P v``. Scores are
scaled by ``softmax_scale · log2(e)`` so the online softmax runs on ``exp2``; accumulation is
float32. The key loads are software-pipelined (``num_stages``) into shared memory, where the
query tile also stays for the whole loop.

A sequence cut in one piece writes its final output and natural-log LSE directly; otherwise
each piece writes a partial output (already divided by its own softmax sum; float32, or the
output's 16-bit type where the plan asks for it) and its base-2 LSE into a slot of the plan's
workspace, and :func:`_mla_combine_kernel` merges them in float32.

Memory traffic per call: every cache row once (plus L2 re-reads across row tiles), the
queries once per piece, partials of ``pieces · rows · 512`` values (4 bytes each, or 2 in
the output's type) written and read back when sequences are split.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import triton
import triton.language as tl

from kernelopt._errors import InputError, expected
from kernelopt.kernels.mla._validate import (
    D_NOPE,
    D_PE,
    D_V,
    check_direct_call,
    check_positive_int,
)
from kernelopt.kernels.mla.schedule import (
    DEFAULT_OVERHEAD_TILES,
    Schedule,
    build_schedule,
    plan_schedule,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "CPU_NOMINAL_SMS",
    "SplitKVConfig",
    "default_config",
    "device_num_sms",
    "launch_merge",
    "launch_split_kv",
    "mla_decode_split_kv",
    "schedule_tensors",
]

LOG2E = math.log2(math.e)
CPU_NOMINAL_SMS = 8
"""Program slots assumed for CPU tensors (Triton interpreter), so small tests still split."""


# ---------------------------------------------------------------------------- heuristics


_Validator = Callable[[object, "attrs.Attribute[Any]", Any], None]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _whole(value: int) -> int:
    """A NumPy integer knob as the Python int it holds (sweeps read their grids from
    arrays); anything else unchanged, for the validator to judge (a bool stays refused)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool | int):
        return int(value)
    return value


def _real(value: float) -> float:
    """A NumPy float (a ``float32`` read from a results file) as a Python float; anything
    else unchanged, for the validator to judge."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool | int | float):
        return float(value)
    return value


def _power_of_two(low: int, high: int) -> _Validator:
    def check(instance: object, attribute: attrs.Attribute[Any], value: int) -> None:
        if not _is_int(value) or not (low <= value <= high and value & (value - 1) == 0):
            raise InputError(
                expected(f"a power of two in [{low}, {high}]", repr(value), where=attribute.name)
            )

    return check


def _int_at_least(low: int) -> _Validator:
    # Stage and program counts: Triton and the scheduler take whole numbers only.
    def check(instance: object, attribute: attrs.Attribute[Any], value: int) -> None:
        if not _is_int(value) or value < low:
            raise InputError(
                expected(f"an integer of at least {low}", repr(value), where=attribute.name)
            )

    return check


def _at_least(low: float) -> _Validator:
    def check(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
        number = _is_int(value) or (isinstance(value, float) and math.isfinite(value))
        if not number or value < low:
            raise InputError(
                expected(f"a value of at least {low}", repr(value), where=attribute.name)
            )

    return check


@attrs.frozen(kw_only=True)
class SplitKVConfig:
    """Launch knobs of the split-KV kernel and its merge (what a tuning sweep varies).

    Integer knobs take NumPy integers too, and ``overhead_tiles`` NumPy floats; both are
    kept as the Python numbers they hold.

    Attributes
    ----------
    block_m : int
        Query rows (draft tokens × heads) per program; 64 fills a Hopper warpgroup's MMA.
    block_n : int
        Keys per tile; also the granularity of the scheduler's pieces.
    num_warps, num_stages : int
        Warps per program and software-pipelining depth of the key-tile loads.
    combine_block_r, combine_block_d, combine_num_warps : int
        Rows and value columns per merge program, and its warps.
    ctas_per_sm : int
        Split-KV programs one multiprocessor holds at once (shared memory decides), used by
        the scheduler's cost model.
    overhead_tiles : float
        The scheduler's fixed cost of a program, in key-tile times.
    """

    block_m: int = attrs.field(default=64, converter=_whole, validator=_power_of_two(16, 128))
    block_n: int = attrs.field(default=32, converter=_whole, validator=_power_of_two(16, 256))
    num_warps: int = attrs.field(default=8, converter=_whole, validator=_power_of_two(1, 16))
    num_stages: int = attrs.field(default=2, converter=_whole, validator=_int_at_least(1))
    combine_block_r: int = attrs.field(default=8, converter=_whole, validator=_power_of_two(1, 128))
    combine_block_d: int = attrs.field(
        default=128, converter=_whole, validator=_power_of_two(16, D_V)
    )
    combine_num_warps: int = attrs.field(
        default=4, converter=_whole, validator=_power_of_two(1, 16)
    )
    ctas_per_sm: int = attrs.field(default=1, converter=_whole, validator=_int_at_least(1))
    overhead_tiles: float = attrs.field(
        default=DEFAULT_OVERHEAD_TILES, converter=_real, validator=_at_least(0)
    )


def check_config(config: object) -> None:
    """Refuse a config that is not a :class:`SplitKVConfig` (None means the default)."""
    if config is not None and not isinstance(config, SplitKVConfig):
        raise InputError(expected("a SplitKVConfig or None", type(config).__name__, where="config"))


def default_config(
    rows: int, dtype: torch.dtype | None = None, *, kv_fp8: bool = False
) -> SplitKVConfig:
    """Launch knobs for ``rows = s_q · h_q`` query rows per sequence and the input dtype.

    With 64 rows or more a program takes 64 rows and 8 warps: the 64 × 512 float32
    accumulator is 128 registers a thread over 256 threads, and the 576-wide query tile
    (74 KB in 16-bit) plus two 32-key stages (37 KB each) fit in shared memory. Fewer rows
    take the smallest power-of-two tile that holds them, 4 warps, and 64-key tiles (those
    shapes are memory-bound, so wider key tiles put more bytes in flight); at 16 rows a
    program needs about 94 KB of shared memory, so two share a multiprocessor. float32
    inputs, used by CPU tests, take 16-key tiles.

    ``kv_fp8`` (a cache in the FP8 layout, :mod:`kernelopt.kernels.mla.fp8`): 64-key tiles
    and 8 warps at every row count, one program a multiprocessor. The tile is dequantized
    in registers before the products; 8 warps hold it without spilling, and at 16 rows
    the 158 KB a program then needs leave room for one.
    """
    import torch

    if kv_fp8 and dtype != torch.float32:
        return SplitKVConfig(
            block_m=64 if rows > 32 else max(16, int(triton.next_power_of_2(rows))),
            block_n=64,
            num_warps=8,
            num_stages=2,
            ctas_per_sm=1,
        )
    if rows > 32:
        config = SplitKVConfig(block_m=64, block_n=32, num_warps=8, num_stages=2)
    else:
        block_m = max(16, int(triton.next_power_of_2(rows)))
        config = SplitKVConfig(
            block_m=block_m, block_n=64, num_warps=4, num_stages=2, ctas_per_sm=2
        )
    if dtype == torch.float32:
        config = attrs.evolve(config, block_n=16, num_stages=1)
    return config


def device_num_sms(device: torch.device) -> int:
    """Multiprocessor count of a CUDA device; :data:`CPU_NOMINAL_SMS` for the CPU."""
    import torch

    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    return CPU_NOMINAL_SMS


# ---------------------------------------------------------------------------- kernels


@triton.jit
def _load_fp8_tile(
    kv, o_row, m_k, dtype: tl.constexpr, D_NOPE: tl.constexpr, D_PE: tl.constexpr,
    BLOCK_N: tl.constexpr,
):  # fmt: skip
    """Rows ``o_row`` (byte offsets) of an FP8 cache as ``[BLOCK_N, 512]`` and ``[BLOCK_N, 64]``.

    A row is 512 e4m3 values, four float32 scales (one per 128 values) and 64 bfloat16 RoPE
    values (:mod:`kernelopt.kernels.mla.fp8`); both parts come back in ``dtype`` (q's), so
    the products run as with a 16-bit cache. Masked rows read as zeros. The scaling runs in
    float32: a build scaling in bfloat16 was slower on the H200 (2026-12-03, b=32 s=1 h=16:
    124.9 µs with the 4 warps then default, against 103.8 µs for float32 scaling in an
    earlier run, so warps and run differ too), and float16 could underflow a small scale.
    """
    GROUPS: tl.constexpr = D_NOPE // 128
    p_row = kv + o_row
    b_raw = tl.load(p_row[:, None] + tl.arange(0, D_NOPE)[None, :], mask=m_k[:, None], other=0)
    b_val = b_raw.to(tl.float8e4nv, bitcast=True).to(tl.float32)
    p_scale = (p_row + D_NOPE).to(tl.pointer_type(tl.float32))
    b_scale = tl.load(
        p_scale[:, None] + tl.arange(0, GROUPS)[None, :], mask=m_k[:, None], other=0.0
    )
    b_val = tl.reshape(b_val, [BLOCK_N, GROUPS, 128]) * b_scale[:, :, None]
    b_kn = tl.reshape(b_val, [BLOCK_N, D_NOPE]).to(dtype)
    p_rope = (p_row + D_NOPE + 4 * GROUPS).to(tl.pointer_type(tl.bfloat16))
    b_kp = tl.load(p_rope[:, None] + tl.arange(0, D_PE)[None, :], mask=m_k[:, None], other=0.0)
    return b_kn, b_kp.to(dtype)


@triton.jit
def _mla_split_kv_kernel(
    q,
    kv,
    block_table,
    seqlens,
    units,
    out,
    lse,
    o_part,
    lse_part,
    stride_qb,
    stride_qs,
    stride_qh,
    stride_kvp,
    stride_kvt,
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
    TILE_IN_PAGE: tl.constexpr,
    DOT_PRECISION: tl.constexpr,
    KV_FP8: tl.constexpr,
):
    ROWS: tl.constexpr = S_Q * H_Q
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
    # One loop with masks on every tile: a second, unmasked loop for the interior tiles
    # doubled the pipelined state and spilled registers at BLOCK_M = 64 (ptxas, sm_90a).
    for k0 in range(key_start, key_hi, BLOCK_N):
        o_k = k0 + tl.arange(0, BLOCK_N)
        m_k = o_k < key_hi
        if TILE_IN_PAGE:
            # The tile lies inside one page: one lookup, BLOCK_N consecutive rows.
            i_page = tl.load(p_bt + k0 // PAGE).to(tl.int64)
            o_row = (
                i_page * stride_kvp + (k0 % PAGE + tl.arange(0, BLOCK_N)).to(tl.int64) * stride_kvt
            )
        else:
            b_page = tl.load(p_bt + o_k // PAGE, mask=m_k, other=0)
            o_row = b_page.to(tl.int64) * stride_kvp + (o_k % PAGE).to(tl.int64) * stride_kvt
        # The tile is loaded once: its latent part serves as K (transposed) and as V.
        if KV_FP8:
            b_kn, b_kp = _load_fp8_tile(kv, o_row, m_k, b_qn.dtype, D_NOPE, D_PE, BLOCK_N)
        else:
            b_kn = tl.load(kv + o_row[:, None] + o_dn[None, :], mask=m_k[:, None], other=0.0)
            b_kp = tl.load(
                kv + o_row[:, None] + D_NOPE + o_dp[None, :], mask=m_k[:, None], other=0.0
            )

        b_s = tl.dot(b_qp, tl.trans(b_kp), input_precision=DOT_PRECISION)
        b_s = tl.dot(b_qn, tl.trans(b_kn), b_s, input_precision=DOT_PRECISION)
        b_s = b_s * qk_scale  # log2 domain: softmax_scale · log2(e) folded in
        b_s = tl.where(o_k[None, :] < b_lim[:, None], b_s, float("-inf"))

        b_m_new = tl.maximum(b_m, tl.max(b_s, 1))
        b_p = tl.exp2(b_s - b_m_new[:, None])
        b_alpha = tl.exp2(b_m - b_m_new)
        b_l = b_l * b_alpha + tl.sum(b_p, 1)
        b_acc = b_acc * b_alpha[:, None]
        b_acc = tl.dot(b_p.to(b_kn.dtype), b_kn, b_acc, input_precision=DOT_PRECISION)
        b_m = b_m_new

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
        # The partial goes out in the workspace's type (float32, or the output's 16 bits).
        p_part = o_part + o_slot[:, None] * D_NOPE + o_dn[None, :]
        tl.store(p_part, b_o.to(o_part.dtype.element_ty), mask=m_r[:, None])
        tl.store(lse_part + o_slot, b_lse2, mask=m_r)


@triton.jit
def _merge_rows(
    o_part, lse_part, out, lse, i_b, i_r, i_d, i_first, n_split, stride_ob, stride_os,
    stride_oh, stride_lb, stride_lh, stride_ls, S_Q: tl.constexpr, H_Q: tl.constexpr,
    D_V: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr, PIECES: tl.constexpr,
):  # fmt: skip
    """Merge slots ``i_first …`` of one sequence into its output rows and LSE.

    ``PIECES > 0``: that many slots, unrolled (``n_split`` unused); else ``n_split``.
    """
    ROWS: tl.constexpr = S_Q * H_Q
    LN2: tl.constexpr = 0.6931471805599453
    o_r = i_r * BLOCK_R + tl.arange(0, BLOCK_R)
    m_r = o_r < ROWS
    o_d = i_d * BLOCK_D + tl.arange(0, BLOCK_D)
    b_m = tl.full([BLOCK_R], -1.0e30, dtype=tl.float32)
    b_l = tl.zeros([BLOCK_R], dtype=tl.float32)
    b_acc = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    if PIECES > 0:
        for j in tl.static_range(PIECES):
            b_m, b_l, b_acc = _add_slot(
                o_part, lse_part, i_first + j, o_r, m_r, o_d, b_m, b_l, b_acc, ROWS, D_V
            )
    else:
        for j in range(0, n_split):
            b_m, b_l, b_acc = _add_slot(
                o_part, lse_part, i_first + j, o_r, m_r, o_d, b_m, b_l, b_acc, ROWS, D_V
            )
    i_tok = o_r // H_Q
    i_head = o_r % H_Q
    b_l = tl.where(m_r, b_l, 1.0)  # padding rows past ROWS merged nothing
    b_out = b_acc / b_l[:, None]
    p_o = out + i_b.to(tl.int64) * stride_ob + i_tok * stride_os + i_head * stride_oh
    tl.store(p_o[:, None] + o_d[None, :], b_out.to(out.dtype.element_ty), mask=m_r[:, None])
    if i_d == 0:
        b_lse_out = (b_m + tl.log2(b_l)) * LN2
        p_l = lse + i_b.to(tl.int64) * stride_lb + i_head * stride_lh + i_tok * stride_ls
        tl.store(p_l, b_lse_out, mask=m_r)


@triton.jit
def _add_slot(
    o_part, lse_part, slot, o_r, m_r, o_d, b_m, b_l, b_acc, ROWS: tl.constexpr,
    D_V: tl.constexpr,
):  # fmt: skip
    """Fold one piece's partial rows into the running max, sum and weighted output."""
    o_slot = slot.to(tl.int64) * ROWS + o_r
    b_lse = tl.load(lse_part + o_slot, mask=m_r, other=float("-inf"))
    p_o = o_part + o_slot[:, None] * D_V + o_d[None, :]
    b_o = tl.load(p_o, mask=m_r[:, None], other=0.0).to(tl.float32)  # 16-bit partials widen
    # Weights 2^(lse_j - max): partials are already normalized by their own sums.
    b_m_new = tl.maximum(b_m, b_lse)
    b_alpha = tl.exp2(b_m - b_m_new)
    b_w = tl.exp2(b_lse - b_m_new)
    b_acc = b_acc * b_alpha[:, None] + b_w[:, None] * b_o
    b_l = b_l * b_alpha + b_w
    return b_m_new, b_l, b_acc


@triton.jit
def _mla_combine_kernel(
    o_part,
    lse_part,
    split_offsets,
    out,
    lse,
    stride_ob,
    stride_os,
    stride_oh,
    stride_lb,
    stride_lh,
    stride_ls,
    S_Q: tl.constexpr,
    H_Q: tl.constexpr,
    D_V: tl.constexpr,
    BLOCK_R: tl.constexpr,
    BLOCK_D: tl.constexpr,
    UNIFORM: tl.constexpr,
):
    i_r, i_d, i_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    if UNIFORM > 0:
        # Every sequence in UNIFORM pieces: its slots follow from its index, so the partials'
        # loads wait for no table read (one L2 round trip less on a path a few trips long).
        _merge_rows(
            o_part, lse_part, out, lse, i_b, i_r, i_d, i_b * UNIFORM, UNIFORM, stride_ob,
            stride_os, stride_oh, stride_lb, stride_lh, stride_ls, S_Q, H_Q, D_V, BLOCK_R,
            BLOCK_D, UNIFORM,
        )  # fmt: skip
    else:
        i_first = tl.load(split_offsets + i_b)
        n_split = tl.load(split_offsets + i_b + 1) - i_first
        # A sequence in one piece was written by the split kernel itself.
        if n_split > 1:
            _merge_rows(
                o_part, lse_part, out, lse, i_b, i_r, i_d, i_first, n_split, stride_ob,
                stride_os, stride_oh, stride_lb, stride_lh, stride_ls, S_Q, H_Q, D_V, BLOCK_R,
                BLOCK_D, 0,
            )  # fmt: skip


# ---------------------------------------------------------------------------- launcher


def schedule_tensors(schedule: Schedule, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Upload a schedule: ``units [num_units, 4]`` and ``split_offsets [b + 1]``, int32."""
    import torch

    units = torch.tensor(schedule.table(), dtype=torch.int32).reshape(-1, 4).to(device)
    offsets = torch.tensor(schedule.split_offsets, dtype=torch.int32).to(device)
    return units, offsets


def workspace_numel(num_slots: int, rows: int, partial_dtype: torch.dtype | None = None) -> int:
    """float32 elements of the partial outputs and LSEs of ``num_slots`` pieces.

    The partial outputs are float32 by default; a 16-bit ``partial_dtype`` halves them
    (:func:`split_workspace`).
    """
    return num_slots * rows * (_partial_words(partial_dtype) + 1)


def _partial_words(partial_dtype: torch.dtype | None) -> int:
    """float32 words one partial output row of 512 values takes in ``partial_dtype``."""
    import torch

    if partial_dtype in (None, torch.float32):
        return D_V
    if partial_dtype in (torch.bfloat16, torch.float16):
        return D_V // 2
    raise InputError(
        expected("float32, bfloat16 or float16", str(partial_dtype), where="partial_dtype")
    )


def split_workspace(
    workspace: torch.Tensor,
    num_slots: int,
    rows: int,
    partial_dtype: torch.dtype | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Views ``o_part [num_slots, rows, 512]`` and ``lse_part [num_slots, rows]`` of a buffer.

    Parameters
    ----------
    workspace : torch.Tensor
        1-D contiguous float32, at least :func:`workspace_numel` elements.
    num_slots, rows : int
        Pieces and query rows a piece (``s_q · h_q``).
    partial_dtype : torch.dtype, optional
        Type of the partial outputs: float32 (default), or bfloat16 / float16, which the
        kernels that store them with pointers round to and the merge widens back.

    Returns
    -------
    tuple of torch.Tensor
        ``o_part`` in ``partial_dtype`` at the start of the buffer, then ``lse_part``
        float32 (base-2 LSEs), both contiguous.
    """
    words = num_slots * rows * _partial_words(partial_dtype)
    o_part = workspace[:words]
    if partial_dtype is not None:
        o_part = o_part.view(partial_dtype)
    o_part = o_part.view(num_slots, rows, D_V)
    lse_part = workspace[words : words + num_slots * rows].view(num_slots, rows)
    return o_part, lse_part


def check_partial_dtype(o_part: torch.Tensor, out: torch.Tensor, *, sixteen_bit: bool) -> None:
    """Raise unless ``o_part`` is float32, or ``out``'s 16-bit type where ``sixteen_bit``.

    Kernels that store partials with pointers convert them to the workspace's type; a
    16-bit workspace must be the output's own type so its rounding never exceeds what the
    output is rounded to anyway.
    """
    import torch

    allowed = [torch.float32]
    if sixteen_bit and out.dtype in (torch.bfloat16, torch.float16):
        allowed.append(out.dtype)
    if o_part.dtype not in allowed:
        names = " or ".join(str(t) for t in allowed)
        raise InputError(expected(f"partial outputs in {names}", str(o_part.dtype), where="o_part"))


def launch_split_kv(
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
    tile_in_page: bool,
    config: SplitKVConfig,
    uniform_pieces: int = 0,
) -> None:
    """Launch the split kernel over ``(row tiles, num_units)`` and, if needed, the merge.

    Nothing is allocated and nothing is read back: every tensor is caller-owned, so the
    launch can be captured in a CUDA graph. ``o_part`` / ``lse_part`` may be None only when
    ``has_splits`` is false. ``tile_in_page`` promises that ``page_size`` and every piece's
    ``key_start`` are multiples of ``config.block_n``. A uint8 ``kv_cache`` is read in the
    FP8 layout (:mod:`kernelopt.kernels.mla.fp8`) and dequantized to q's dtype per tile.
    ``uniform_pieces`` goes to :func:`launch_merge`.
    """
    import torch

    _, s_q, h_q, _ = q.shape
    rows = s_q * h_q
    if has_splits and (o_part is None or lse_part is None):
        raise InputError(expected("a workspace for partial outputs", None, where="o_part"))
    if o_part is not None:
        check_partial_dtype(o_part, out, sixteen_bit=kv_cache.dtype != torch.uint8)
    # Without splits no partial slot is ever written; any float32 tensor fills the slot.
    o_arg = o_part if o_part is not None else lse
    lse_arg = lse_part if lse_part is not None else lse
    grid = (triton.cdiv(rows, config.block_m), num_units)
    _mla_split_kv_kernel[grid](
        q,
        kv_cache,
        block_table,
        seqlens,
        units,
        out,
        lse,
        o_arg,
        lse_arg,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        kv_cache.stride(0),
        kv_cache.stride(1),
        block_table.stride(0),
        out.stride(0),
        out.stride(1),
        out.stride(2),
        lse.stride(0),
        lse.stride(1),
        lse.stride(2),
        softmax_scale * LOG2E,
        S_Q=s_q,
        H_Q=h_q,
        PAGE=kv_cache.shape[1],
        CAUSAL=causal,
        D_NOPE=D_NOPE,
        D_PE=D_PE,
        BLOCK_M=config.block_m,
        BLOCK_N=config.block_n,
        TILE_IN_PAGE=tile_in_page,
        DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
        KV_FP8=kv_cache.dtype == torch.uint8,
        num_warps=config.num_warps,
        num_stages=config.num_stages,
    )
    if has_splits:
        launch_merge(
            o_arg, lse_arg, split_offsets, out, lse, config=config, uniform_pieces=uniform_pieces
        )


def launch_merge(
    o_part: torch.Tensor,
    lse_part: torch.Tensor,
    split_offsets: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    *,
    config: SplitKVConfig,
    uniform_pieces: int = 0,
) -> None:
    """Merge the pieces' partial outputs by their LSEs into ``out`` and ``lse``.

    ``o_part [slots, rows, 512]`` (float32, or ``out``'s 16-bit type: widened to float32 as
    it is read) and ``lse_part [slots, rows]`` float32 (base-2 LSE) hold the pieces of the
    split sequences, ``split_offsets [b + 1]`` their first slots; a sequence in one piece
    was already written by the split kernel and is skipped.
    ``uniform_pieces`` (:attr:`~kernelopt.kernels.mla.schedule.Schedule.uniform_pieces`):
    when every sequence is in that many pieces, the merge computes the slots instead of
    reading ``split_offsets``; 0 reads them.
    """
    batch, s_q, h_q, _ = out.shape
    rows = s_q * h_q
    check_partial_dtype(o_part, out, sixteen_bit=True)
    if uniform_pieces and (uniform_pieces < 2 or o_part.shape[0] < batch * uniform_pieces):
        raise InputError(
            expected(
                f"0, or n >= 2 pieces a sequence with n · {batch} slots in the workspace",
                f"{uniform_pieces} pieces and {o_part.shape[0]} slots",
                where="uniform_pieces",
            )
        )
    grid = (triton.cdiv(rows, config.combine_block_r), D_V // config.combine_block_d, batch)
    _mla_combine_kernel[grid](
        o_part,
        lse_part,
        split_offsets,
        out,
        lse,
        out.stride(0),
        out.stride(1),
        out.stride(2),
        lse.stride(0),
        lse.stride(1),
        lse.stride(2),
        S_Q=s_q,
        H_Q=h_q,
        D_V=D_V,
        BLOCK_R=config.combine_block_r,
        BLOCK_D=config.combine_block_d,
        UNIFORM=uniform_pieces,
        num_warps=config.combine_num_warps,
    )


def tile_in_page(page_size: int, schedule_block_n: int, block_n: int) -> bool:
    """Whether every key tile of ``block_n`` rows lies inside one page."""
    return page_size % block_n == 0 and schedule_block_n % block_n == 0


# ---------------------------------------------------------------------------- public


def mla_decode_split_kv(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    cache_seqlens: torch.Tensor,
    *,
    softmax_scale: float,
    causal: bool = True,
    config: SplitKVConfig | None = None,
    num_sms: int | None = None,
    num_splits: int | Sequence[int] | None = None,
    out: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Split-KV MLA decode in one call: plan (reads ``cache_seqlens`` and checks the pages of
    ``block_table`` on the host), then run.

    For repeated calls with the same lengths (every layer of a decode step), plan once with
    :class:`kernelopt.kernels.mla.MLADecodePlan` instead: its ``run`` neither synchronizes
    nor allocates workspaces.

    Parameters
    ----------
    q : torch.Tensor
        ``[b, s_q, h_q, 576]`` bfloat16/float16 (float32 for CPU tests).
    kv_cache : torch.Tensor
        ``[num_blocks, page_size, 1, 576]``, same dtype; values are columns ``[:512]``. Or
        ``[num_blocks, page_size, 1, 656]`` uint8 in the FP8 layout
        (:func:`~kernelopt.kernels.mla.fp8.quantize_kv_fp8`).
    block_table : torch.Tensor
        ``[b, max_blocks]`` int32.
    cache_seqlens : torch.Tensor
        ``[b]`` int32, each at least ``s_q``.
    softmax_scale : float
        Scale of ``q · k`` before the softmax.
    causal : bool
        Causal mask among the ``s_q`` draft tokens.
    config : SplitKVConfig, optional
        Launch knobs; :func:`default_config` when omitted.
    num_sms : int, optional
        Multiprocessors the scheduler balances over (the device's count by default).
    num_splits : int or sequence of int, optional
        Force the pieces per sequence instead of the scheduler's choice: one count for
        every sequence (an int, a NumPy integer or a 0-d integer tensor), or ``b`` counts
        (a list, a 1-D NumPy array or a tensor; each capped at the sequence's key tiles).
    out, lse : torch.Tensor, optional
        Caller-owned outputs ``[b, s_q, h_q, 512]`` (q's dtype) and ``[b, h_q, s_q]`` float32.

    Returns
    -------
    out : torch.Tensor
        ``[b, s_q, h_q, 512]`` in q's dtype.
    lse : torch.Tensor
        ``[b, h_q, s_q]`` float32, natural log.
    """
    import torch

    batch, s_q, h_q, page, seqlens, softmax_scale, causal = check_direct_call(
        q, kv_cache, block_table, cache_seqlens, softmax_scale=softmax_scale, causal=causal,
        out=out, lse=lse, allow_fp8=True,
    )  # fmt: skip

    rows = s_q * h_q
    check_config(config)
    config = config or default_config(rows, q.dtype, kv_fp8=kv_cache.dtype == torch.uint8)
    m_tiles = triton.cdiv(rows, config.block_m)
    if num_sms is not None:
        num_sms = check_positive_int(num_sms, "num_sms")
    if num_splits is None:
        slots = (num_sms or device_num_sms(q.device)) * config.ctas_per_sm
        schedule = plan_schedule(
            seqlens,
            block_n=config.block_n,
            m_tiles=m_tiles,
            num_slots=slots,
            overhead_tiles=config.overhead_tiles,
        )
    else:
        schedule = build_schedule(seqlens, num_splits, block_n=config.block_n, m_tiles=m_tiles)
    units, offsets = schedule_tensors(schedule, q.device)
    o_part = lse_part = None
    if schedule.has_splits:
        slots_total = schedule.split_offsets[-1]
        workspace = torch.empty(workspace_numel(slots_total, rows), device=q.device)
        o_part, lse_part = split_workspace(workspace, slots_total, rows)
    if out is None:
        out = torch.empty(batch, s_q, h_q, D_V, dtype=q.dtype, device=q.device)
    if lse is None:
        lse = torch.empty(batch, h_q, s_q, dtype=torch.float32, device=q.device)
    launch_split_kv(
        q,
        kv_cache,
        block_table,
        cache_seqlens,
        units,
        offsets,
        out,
        lse,
        o_part=o_part,
        lse_part=lse_part,
        softmax_scale=softmax_scale,
        causal=causal,
        num_units=schedule.num_units,
        has_splits=schedule.has_splits,
        tile_in_page=tile_in_page(page, schedule.block_n, config.block_n),
        config=config,
        uniform_pieces=schedule.uniform_pieces,
    )
    return out, lse
