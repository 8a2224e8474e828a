"""Analytic work of one MLA decode call: the FLOPs and the fewest bytes it must move.

Both formulas follow the project's MLA decode conventions and count every key for every
query row (the causal mask among the ``s_q`` draft tokens removes at most ``s_q - 1`` keys
of a sequence, a negligible share at decode lengths). Divide by a measured matmul rate and
a measured copy bandwidth to get the two times whose larger one is the roofline floor.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernelopt._errors import InputError, expected
from kernelopt.kernels.mla._validate import D_QK, D_V

__all__ = ["mla_decode_bytes", "mla_decode_floor_us", "mla_decode_flops"]


def _total(seqlens: int | Sequence[int]) -> int:
    total = seqlens if isinstance(seqlens, int) else sum(int(n) for n in seqlens)
    if total < 0:
        raise InputError(expected("a non-negative total cache length", total, where="seqlens"))
    return total


def mla_decode_flops(seqlens: int | Sequence[int], *, s_q: int, h_q: int) -> int:
    """FLOPs of one decode call: ``2 · s_q · h_q · Σseqlen · (576 + 512)``.

    Parameters
    ----------
    seqlens : int or sequence of int
        The cache length of every sequence in the batch, or their sum.
    s_q, h_q : int
        Draft tokens per sequence and query heads.
    """
    return 2 * s_q * h_q * _total(seqlens) * (D_QK + D_V)


def mla_decode_bytes(
    seqlens: int | Sequence[int],
    *,
    batch: int,
    s_q: int,
    h_q: int,
    elt_bytes: int,
    kv_row_bytes: int | None = None,
) -> int:
    """Fewest bytes one call moves: ``Σseqlen · row + b · s_q · h_q · (576 + 512) · elt``.

    The cache rows are read once (values share storage with keys), the queries read once and
    the outputs written once; the fp32 LSE and the block table are left out as negligible.
    ``row`` is ``kv_row_bytes`` when given (656 for the FP8 layout of
    :mod:`kernelopt.kernels.mla.fp8`), ``576 · elt_bytes`` otherwise.
    """
    row = D_QK * elt_bytes if kv_row_bytes is None else kv_row_bytes
    if row <= 0:
        raise InputError(expected("a positive cache row size in bytes", row, where="kv_row_bytes"))
    return _total(seqlens) * row + batch * s_q * h_q * (D_QK + D_V) * elt_bytes


def mla_decode_floor_us(
    seqlens: int | Sequence[int],
    *,
    batch: int,
    s_q: int,
    h_q: int,
    elt_bytes: int,
    matmul_tflops: float,
    copy_tbps: float,
    kv_row_bytes: int | None = None,
) -> float:
    """Roofline floor in µs: ``max(FLOPs / matmul rate, bytes / copy bandwidth)``.

    ``matmul_tflops`` and ``copy_tbps`` are measured ceilings (TFLOP/s and TB/s, the copy
    counting bytes read plus written); ``kv_row_bytes`` as for :func:`mla_decode_bytes`.
    """
    if matmul_tflops <= 0 or copy_tbps <= 0:
        raise InputError(expected("positive ceilings", (matmul_tflops, copy_tbps)))
    flops = mla_decode_flops(seqlens, s_q=s_q, h_q=h_q)
    nbytes = mla_decode_bytes(
        seqlens, batch=batch, s_q=s_q, h_q=h_q, elt_bytes=elt_bytes, kv_row_bytes=kv_row_bytes
    )
    return max(flops / (matmul_tflops * 1e6), nbytes / (copy_tbps * 1e6))
