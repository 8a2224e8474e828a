"""The roofline cost of fused attention forward (flash-attention style).

A fused kernel computes ``softmax(Q Kᵀ · scale, masked) V`` without writing the score
matrix ``S`` to device memory, and a causal one skips the (query, key) pairs the mask
removes. Composing the cost from two :func:`~kernelopt.bench.matmul_cost` calls counts
``S`` written and read back and every pair computed: for b=1, h=32, s=4096, d=128 in bf16
that reads as memory-bound (intensity 120 FLOP/B) where the fused causal call is
compute-bound (intensity 1024 FLOP/B). :func:`attention_cost` counts the fused call::

    FLOPs = 2 · pairs · (d_qk + d_v)            per query head, summed over heads
    bytes = (Q + K + V) · elt_bytes + O · out_bytes

``pairs`` is the exact number of (query, key) pairs the mask leaves, counted per
sequence (:func:`attention_pairs`), never ``s²/2``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

from kernelopt._errors import InputError, expected
from kernelopt.bench.roofline import Cost, _sizes

__all__ = ["CAUSAL_ALIGNMENTS", "attention_cost", "attention_pairs"]

CAUSAL_ALIGNMENTS = ("top-left", "bottom-right")
"""Where a causal mask puts its diagonal when ``s_q != s_kv``: ``"top-left"`` lets query
``i`` see keys ``j <= i`` (PyTorch's ``scaled_dot_product_attention(is_causal=True)``);
``"bottom-right"`` lets it see keys ``j <= i + s_kv - s_q``, the last query seeing every
key (FlashAttention 2.1 and later, decode and chunked prefill over a cache)."""


def _count(value: object, where: str, *, minimum: int) -> int:
    """``value`` as a Python int >= ``minimum`` (numpy and 0-d torch integers included);
    a bool, a float or text is refused, naming ``where``."""
    try:
        number = None if isinstance(value, bool) else operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        number = None
    if number is None or number < minimum:
        raise InputError(expected(f"an integer >= {minimum}", repr(value), where=where))
    return number


def _lengths(value: object, b: int, where: str) -> list[int]:
    """One length per sequence: ``value`` given once for all ``b`` sequences, or one per
    sequence (a list, tuple, range, 1-D array or tensor; never a set, a dict or text)."""
    if isinstance(value, set | frozenset | dict):
        raise InputError(
            expected(
                "one length, or one per sequence in order (a list, tuple, range, array or tensor)",
                type(value).__name__,
                where=where,
            )
        )
    one = getattr(value, "ndim", None) == 0  # a numpy scalar or a 0-d tensor
    if one or isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return [_count(value, where, minimum=0)] * b
    items = value.tolist() if hasattr(value, "tolist") else list(value)
    if len(items) != b:
        raise InputError(expected(f"{b} sequence lengths (b)", len(items), where=where))
    return [_count(item, f"{where}[{index}]", minimum=0) for index, item in enumerate(items)]


def _clamped_sum(rows: int, first: int, cap: int) -> int:
    """``Σ_{i < rows} min(max(first + i, 0), cap)``, exactly, in constant time.

    Row ``i`` of a causal mask sees ``first + i`` keys, none when that is below 1 and all
    ``cap`` of them once it reaches ``cap``.
    """
    if rows <= 0 or cap <= 0:
        return 0
    rising = min(max(1 - first, 0), rows)  # first row that sees a key
    full = min(max(cap - first, 0), rows)  # first row that sees every key
    partial = full - rising
    return partial * first + (rising + full - 1) * partial // 2 + (rows - full) * cap


def _causal_alignment(causal: object) -> str | None:
    """None (no mask), ``"same"`` (``True``: the alignments must agree), or an alignment."""
    if causal is False or causal is None:
        return None
    if causal is True:
        return "same"
    if causal in CAUSAL_ALIGNMENTS:
        return str(causal)
    raise InputError(
        expected("False, True, 'top-left' or 'bottom-right'", repr(causal), where="causal")
    )


def _pairs_of_one(s_q: int, s_kv: int, alignment: str | None) -> int:
    if alignment is None:
        return s_q * s_kv
    first = 1 if alignment == "top-left" else s_kv - s_q + 1
    return _clamped_sum(s_q, first, s_kv)


def attention_pairs(
    s_q: int | Sequence[int],
    s_kv: int | Sequence[int] | None = None,
    *,
    b: int = 1,
    causal: bool | str = False,
) -> int:
    """The (query, key) pairs an attention mask leaves, summed over the batch, per head.

    Parameters
    ----------
    s_q : int or sequence of int
        Query tokens: one length for all ``b`` sequences, or one per sequence (varlen: a
        list, tuple, range, 1-D array or tensor).
    s_kv : int or sequence of int, optional
        Key/value tokens, given as ``s_q`` is; ``s_q`` when None.
    b : int
        Sequences.
    causal : bool or str
        False: every pair. ``"top-left"``: query ``i`` sees keys ``j <= i``.
        ``"bottom-right"``: query ``i`` sees keys ``j <= i + s_kv - s_q`` (queries of a
        sequence with ``s_q > s_kv`` that see no key count none). True: either, where
        they agree (``s_q == s_kv`` for every sequence), and refused where they do not.

    Returns
    -------
    int
        The exact count: ``s·(s + 1)/2`` for a causal square sequence, ``s_q·s_kv``
        without a mask.

    Raises
    ------
    InputError
        For a ``b`` that is no integer >= 1, a length that is no integer >= 0, a list of
        lengths not ``b`` long, lengths given as a set or a dict, a ``causal`` that is
        none of the four, or ``causal=True`` for a sequence with ``s_q != s_kv``, where
        the alignment decides the count.

    Examples
    --------
    >>> attention_pairs(4, causal=True)
    10
    >>> attention_pairs(2, 4, causal="top-left"), attention_pairs(2, 4, causal="bottom-right")
    (3, 7)
    >>> attention_pairs([3, 1], b=2, causal=True)
    7
    """
    b = _count(b, "b", minimum=1)
    queries = _lengths(s_q, b, "s_q")
    keys = queries if s_kv is None else _lengths(s_kv, b, "s_kv")
    alignment = _causal_alignment(causal)
    if alignment == "same":
        for index, (rows, cols) in enumerate(zip(queries, keys, strict=True)):
            if rows != cols:
                # The two alignments count different pairs here: saying which is the
                # caller's to do, never a guess.
                got = f"True with s_q={rows} and s_kv={cols} (sequence {index})"
                if rows < cols:
                    # The common case: new queries after a cached context.
                    got += (
                        f"; chunked prefill or decode ({rows} new queries after "
                        f"{cols - rows} cached tokens) is 'bottom-right'"
                    )
                raise InputError(
                    expected(
                        "causal='top-left' or 'bottom-right' where s_q != s_kv", got, where="causal"
                    )
                )
        alignment = "top-left"
    return sum(
        _pairs_of_one(rows, cols, alignment) for rows, cols in zip(queries, keys, strict=True)
    )


def attention_cost(
    *,
    b: int,
    h_q: int,
    s_q: int | Sequence[int],
    d_qk: int,
    s_kv: int | Sequence[int] | None = None,
    h_kv: int | None = None,
    d_v: int | None = None,
    causal: bool | str = False,
    elt_bytes: float = 2,
    out_bytes: float | None = None,
) -> Cost:
    """Roofline cost of one fused attention forward call (flash-attention style).

    The FLOPs are those of the two products, ``2 · pairs · d_qk`` for ``Q Kᵀ`` and
    ``2 · pairs · d_v`` for ``P V`` per query head, where ``pairs`` counts exactly the
    (query, key) pairs the mask leaves (:func:`attention_pairs`); the softmax's
    exponentials and sums are left out, as the compute ceiling is a matmul rate. The
    bytes are Q, K and V read once and O written once; the score matrix never reaches
    device memory.

    The floor is the ideal: K and V read once per KV head, shared by the ``h_q / h_kv``
    query heads of its group (grouped-query attention), and once per sequence whatever
    the number of query blocks. A kernel that reads them again for each query head or
    block moves more bytes than the floor counts; that is a distance from the floor, not
    a floor of its own. The log-sum-exp a training forward also writes (``4 · s_q · h_q``
    bytes per sequence) is left out.

    Parameters
    ----------
    b : int
        Sequences in the batch.
    h_q : int
        Query heads (and output heads).
    s_q : int or sequence of int
        Query tokens: one length for all ``b`` sequences, or one per sequence (varlen or
        padded varlen: the valid tokens, as a list, tuple, range, 1-D array or tensor).
    d_qk : int
        Head dimension of Q and K.
    s_kv : int or sequence of int, optional
        Key/value tokens, given as ``s_q`` is; ``s_q`` when None.
    h_kv : int, optional
        Key/value heads, dividing ``h_q`` (1 for multi-query attention); ``h_q`` when
        None.
    d_v : int, optional
        Head dimension of V and O; ``d_qk`` when None.
    causal : bool or str
        False, ``"top-left"``, ``"bottom-right"``, or True where the two agree (every
        sequence with ``s_q == s_kv``); see :func:`attention_pairs`. Chunked prefill and
        decode (new queries after a cached context, ``s_q < s_kv``) are
        ``"bottom-right"``.
    elt_bytes : float
        Bytes per element of Q, K and V (2 for bf16 and fp16, 1 for fp8).
    out_bytes : float, optional
        Bytes per element of O; ``elt_bytes`` when None.

    Returns
    -------
    Cost
        Named ``attention b=.. h_q=.. ...``, with ``elt_bytes`` (a :class:`Roofline`
        warns of 4 or more against a 16-bit matmul ceiling).

    Raises
    ------
    InputError
        For a count that is no integer (``b``, heads and head dimensions >= 1, lengths
        >= 0), an ``h_kv`` that does not divide ``h_q``, byte widths that are no finite
        number > 0, and what :func:`attention_pairs` refuses; each named.

    Examples
    --------
    >>> cost = attention_cost(b=1, h_q=32, s_q=4096, d_qk=128, causal=True)
    >>> cost.flops == 2 * 32 * (4096 * 4097 // 2) * (128 + 128), round(cost.arith_intensity)
    (True, 1024)
    """
    b = _count(b, "b", minimum=1)
    h_q = _count(h_q, "h_q", minimum=1)
    h_kv = h_q if h_kv is None else _count(h_kv, "h_kv", minimum=1)
    if h_q % h_kv:
        raise InputError(expected(f"h_kv dividing h_q={h_q}", repr(h_kv), where="h_kv"))
    d_qk = _count(d_qk, "d_qk", minimum=1)
    d_v = d_qk if d_v is None else _count(d_v, "d_v", minimum=1)
    _byte_widths(elt_bytes=elt_bytes, out_bytes=elt_bytes if out_bytes is None else out_bytes)
    out = elt_bytes if out_bytes is None else out_bytes
    queries = _lengths(s_q, b, "s_q")
    keys = queries if s_kv is None else _lengths(s_kv, b, "s_kv")
    pairs = attention_pairs(queries, keys, b=b, causal=causal)
    q_tokens, kv_tokens = sum(queries), sum(keys)
    read = q_tokens * h_q * d_qk + kv_tokens * h_kv * (d_qk + d_v)  # Q, K, V elements
    written = q_tokens * h_q * d_v  # O elements
    moved = read * float(elt_bytes) + written * float(out)
    return Cost(
        flops=2.0 * h_q * pairs * (d_qk + d_v),
        bytes=moved,
        name=_name(b, h_q, h_kv, s_q, s_kv, d_qk, d_v, causal),
        elt_bytes=elt_bytes,
    )


def _byte_widths(**widths: Any) -> None:
    """Refuse a byte width that is no finite number > 0 (0 would make Q, K, V or O free)."""
    _sizes(**widths)
    for name, value in widths.items():
        if float(value) == 0:
            raise InputError(expected("a finite number > 0", repr(value), where=name))


def _name(
    b: int,
    h_q: int,
    h_kv: int,
    s_q: object,
    s_kv: object,
    d_qk: int,
    d_v: int,
    causal: object,
) -> str:
    """``attention b=1 h_q=32 s_q=4096 d=128 causal``: the sizes as given, varlen lengths
    as ``varlen``, the KV heads, KV length and V dimension only where they differ."""

    def length(value: object) -> str:
        one = getattr(value, "ndim", None) == 0 or not isinstance(value, Iterable)
        return str(int(value)) if one else "varlen"  # type: ignore[call-overload]

    parts = [f"attention b={b} h_q={h_q}"]
    if h_kv != h_q:
        parts.append(f"h_kv={h_kv}")
    parts.append(f"s_q={length(s_q)}")
    if s_kv is not None:
        parts.append(f"s_kv={length(s_kv)}")
    parts.append(f"d={d_qk}" if d_v == d_qk else f"d_qk={d_qk} d_v={d_v}")
    if causal is True:
        parts.append("causal")
    elif causal:
        parts.append(f"causal={causal}")
    return " ".join(parts)
