"""Analytic work of one MLA decode call: the FLOPs and the fewest bytes it must move.

Both formulas follow the project's MLA decode conventions and count every key for every
query row (the causal mask among the ``s_q`` draft tokens removes at most ``s_q - 1`` keys
of a sequence, a negligible share at decode lengths). Divide by a measured matmul rate and
a measured copy bandwidth to get the two times whose larger one is the roofline floor.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any

from kernelopt._errors import InputError, expected
from kernelopt.kernels.mla._validate import D_QK, D_V, check_positive_int

__all__ = ["mla_decode_bytes", "mla_decode_floor_us", "mla_decode_flops"]


_LENGTHS = "an int or a sequence of ints (a list, tuple, range, 1-D array or tensor)"


def _refuse_unordered(seqlens: object) -> None:
    """Refuse a set or a mapping given as the lengths, one per sequence.

    Both are iterable, so they would be counted without a word: a set keeps one of each
    repeated length and has no order, and a dict iterates its keys, not its values.
    """
    if isinstance(seqlens, Set | Mapping):
        raise InputError(expected(_LENGTHS, f"a {type(seqlens).__name__}", where="seqlens"))


def _refuse_nested(seqlens: object) -> None:
    """Refuse an array or tensor of lengths with more than one dim, naming its shape.

    Its rows would be counted as lengths: ``np.array([[4096] * 32])`` is one row, so
    the count check read "Expected 32 lengths, got 1", with no word of the second dim.
    """
    ndim = getattr(seqlens, "ndim", None)
    if isinstance(ndim, int) and ndim > 1:
        shape = list(getattr(seqlens, "shape", ()))
        kind = type(seqlens).__name__
        raise InputError(
            expected(
                "one length per sequence as a 1-D array or tensor",
                f"a {ndim}-D {kind} of shape {shape}",
                where="seqlens",
            )
        )


def _total(seqlens: int | Sequence[int], *, batch: int | None = None) -> int:
    """Sum of the lengths; a sequence of them must hold ``batch`` (one per sequence)."""
    # One integer of any kind (Python, NumPy, a 0-d tensor) is the sum of the lengths; a
    # NumPy scalar or 0-d tensor has ndim 0 and cannot be iterated.
    if isinstance(seqlens, int | float) or getattr(seqlens, "ndim", None) == 0:
        items: list[Any] = [seqlens]
    elif isinstance(seqlens, str | bytes) or not isinstance(seqlens, Iterable):
        raise InputError(expected("an int or a sequence of ints", repr(seqlens), where="seqlens"))
    else:
        _refuse_unordered(seqlens)
        _refuse_nested(seqlens)
        items = list(seqlens)
        if batch is not None and len(items) != batch:
            raise InputError(
                expected(
                    f"{batch} lengths (one per sequence of the batch)", len(items), where="seqlens"
                )
            )
        if not items:
            # No sequence is no decode call: its sum, 0, would read as a batch of empty
            # caches.
            raise InputError(
                expected("at least one cache length", "an empty sequence", where="seqlens")
            )
    total = 0
    for n in items:
        try:
            # operator.index takes ints, NumPy integers and 0-d integer tensors, not floats.
            length = -1 if isinstance(n, bool) else operator.index(n)
        except TypeError:
            length = -1
        if length < 0:
            raise InputError(
                expected("cache lengths as non-negative integers", repr(n), where="seqlens")
            )
        total += length
    return total


def mla_decode_flops(seqlens: int | Sequence[int], *, s_q: int, h_q: int) -> int:
    """FLOPs of one decode call: ``2 · s_q · h_q · Σseqlen · (576 + 512)``.

    Parameters
    ----------
    seqlens : int or sequence of int
        The cache length of every sequence in the batch (a list, tuple, range, 1-D array
        or tensor; not a set or a dict), or their sum.
    s_q, h_q : int
        Draft tokens per sequence and query heads.

    Returns
    -------
    int
        FLOPs.

    Raises
    ------
    InputError
        For a size that is not a positive integer, a negative length, an empty sequence
        of lengths, or lengths given as a set or a dict.
    """
    s_q, h_q = check_positive_int(s_q, "s_q"), check_positive_int(h_q, "h_q")
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

    Parameters
    ----------
    seqlens : int or sequence of int
        The sum of the cache lengths (one integer) or one length per sequence, ``batch``
        of them (a list, tuple, range, 1-D array or tensor; not a set or a dict).
    batch, s_q, h_q : int
        Sequences, draft tokens per sequence and query heads.
    elt_bytes : int
        Bytes per query, output and (without ``kv_row_bytes``) cache element.
    kv_row_bytes : int, optional
        Bytes per cache row (656 for the FP8 layout).

    Returns
    -------
    int
        Bytes.

    Raises
    ------
    InputError
        For a size that is not a positive integer, a negative length, a list of
        lengths that is not ``batch`` long, or lengths given as a set or a dict.
    """
    batch, s_q, h_q = (
        check_positive_int(v, n) for v, n in ((batch, "batch"), (s_q, "s_q"), (h_q, "h_q"))
    )
    elt_bytes = check_positive_int(elt_bytes, "elt_bytes")
    row = D_QK * elt_bytes if kv_row_bytes is None else kv_row_bytes
    if isinstance(row, bool) or not isinstance(row, numbers.Integral) or row <= 0:
        raise InputError(
            expected("a positive cache row size in bytes", repr(row), where="kv_row_bytes")
        )
    row = int(row)
    return _total(seqlens, batch=batch) * row + batch * s_q * h_q * (D_QK + D_V) * elt_bytes


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

    Parameters
    ----------
    seqlens, batch, s_q, h_q, elt_bytes, kv_row_bytes
        As for :func:`mla_decode_bytes`.
    matmul_tflops : float
        Measured matmul ceiling in TFLOP/s.
    copy_tbps : float
        Measured copy bandwidth in TB/s, counting bytes read plus written.

    Returns
    -------
    float
        Microseconds.

    Raises
    ------
    InputError
        For a ceiling that is not a finite positive number, or sizes
        :func:`mla_decode_bytes` refuses.
    """
    ceilings = []
    for value, name in ((matmul_tflops, "matmul_tflops"), (copy_tbps, "copy_tbps")):
        # Any real number (a NumPy float32 read from a results file too), not a bool.
        number = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value <= 0:
            raise InputError(expected("a finite positive ceiling", repr(value), where=name))
        ceilings.append(float(value))
    tflops, tbps = ceilings
    # Bytes first: they check the lengths against the batch, the more telling refusal.
    nbytes = mla_decode_bytes(
        seqlens, batch=batch, s_q=s_q, h_q=h_q, elt_bytes=elt_bytes, kv_row_bytes=kv_row_bytes
    )
    flops = mla_decode_flops(seqlens, s_q=s_q, h_q=h_q)
    return max(flops / (tflops * 1e6), nbytes / (tbps * 1e6))
