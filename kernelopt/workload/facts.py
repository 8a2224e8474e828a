"""Shape facts: the few numbers catalog shape conditions compare (``s_q == 1``).

Catalog entries state when they apply as conditions on workload shape facts
(``kernelopt.catalog.SHAPE_FACTS``: ``b``, ``s_q``, ``h_q``, ``h_kv``, ``seqlen_k``,
``seqlen_cv``, ``reduce_len``, ``softmax_len``, ``dominant_shape_share``,
``distinct_shapes``, ``padding_pct``, ``select_k``, ``select_n``), and for a GEMM ``m``,
``n`` and ``k`` (a shape condition may name a fact outside that list; lint warns).
:func:`shape_facts` reads them off an op profile, so that
``catalog.query(shape=shape_facts(profile))`` ranks the entries the workload calls for.
Each size is the call-weighted median of its axis: the typical call.
"""

from __future__ import annotations

from kernelopt.workload._validators import require
from kernelopt.workload.profile import OpProfile, WorkloadProfile

__all__ = ["shape_facts"]

# Axis names other conventions use for the catalog's facts (FlashInfer-Bench definitions).
_ALIASES = {
    "b": ("b", "batch_size", "batch"),
    # q_len: the longest query of a packed varlen call (varlen_attention), as s_q is of a
    # padded one.
    "s_q": ("s_q", "seqlen_q", "num_tokens_q", "q_len"),
    "h_q": ("h_q", "num_qo_heads", "num_heads"),
    "h_kv": ("h_kv", "num_kv_heads"),
}
_ATTENTION = ("attention", "decode-attention", "mla-decode")
_GEMM = ("m", "n", "k")


def _median(op: OpProfile, name: str) -> float | None:
    axis = op.axis(name)
    return None if axis is None else axis.median


def shape_facts(profile: OpProfile | WorkloadProfile, op: str | None = None) -> dict[str, float]:
    """The catalog shape facts of one op's workload.

    Parameters
    ----------
    profile : OpProfile or WorkloadProfile
    op : str, optional
        Which op of a WorkloadProfile (default: the most called).

    Returns
    -------
    dict of str to float
        Only the facts the profile supports: ``dominant_shape_share`` is the share of time
        of the shape that takes the most time when the calls were timed, else the share of
        calls of the most common shape; ``seqlen_cv`` is 0 when every call has equal
        lengths, else the median over calls of std / mean where the values summaries
        recorded a std (:class:`~kernelopt.workload.Recorder` does), absent otherwise; it
        reads the signature's lengths (the key lengths of attention) only, as the catalog
        defines it, and attention's query lengths give no fact;
        ``padding_pct`` is present when padded sizes and real lengths were both recorded;
        ``select_k``/``select_n`` (positions picked, length of the axis picked from) for a
        top-k or gather whose signature names them; ``m``, ``n`` and ``k`` for an op of the
        ``gemm`` family, and ``b`` from its ``batch`` axis.

    Raises
    ------
    InputError
        When ``profile`` is neither profile type, or ``op`` is not one of its ops.
    """
    require(
        profile, (OpProfile, WorkloadProfile), "an OpProfile or WorkloadProfile", where="profile"
    )
    if op is not None:
        require(op, str, "an op name (str) or None", where="op")
    target = profile.op(op) if isinstance(profile, WorkloadProfile) else profile
    facts: dict[str, float] = {}
    for fact, names in _ALIASES.items():
        for name in names:
            value = _median(target, name)
            if value is not None:
                facts[fact] = value
                break
    if target.family == "gemm":
        # m, n and k of a GEMM; top-k and gather name other axes k and n.
        for name in _GEMM:
            value = _median(target, name)
            if value is not None:
                facts[name] = value
    for name in target.reduced:
        value = _median(target, name)
        if value is None:
            continue
        if target.family in _ATTENTION:
            facts.setdefault("seqlen_k", value)
        elif target.family == "softmax":
            facts.setdefault("softmax_len", value)
        else:
            facts.setdefault("reduce_len", value)
    if target.distinct_shapes is not None:
        facts["distinct_shapes"] = float(target.distinct_shapes)
    if target.shapes:
        # Weighted as the dominant-shape rule weighs it (time when the calls were timed), so
        # the fact and the rule name the same shape.
        by = "time" if target.timed else "calls"
        top = target.top_shapes(1, by=by)[0]
        share = top.time_share if by == "time" else top.call_share
        facts["dominant_shape_share"] = top.call_share if share is None else share
    if target.lengths is not None:
        flag = target.axis(f"{target.lengths}_uniform")
        item = None if flag is None else flag.share_of(1)
        spread = target.axis(f"{target.lengths}_cv")
        if item is not None and item.call_share >= 1.0 - 1e-9:
            facts["seqlen_cv"] = 0.0
        elif spread is not None and spread.median is not None:
            # The typical call's spread, where the summaries recorded a std.
            facts["seqlen_cv"] = spread.median
    if target.select is not None:
        for fact, name in zip(("select_k", "select_n"), target.select, strict=True):
            value = _median(target, name)
            if value is not None:
                facts[fact] = value
    for padded, _length in target.padded:
        fill = target.axis(f"{padded}_fill")
        if fill is not None and fill.mean is not None:
            facts["padding_pct"] = 100.0 * (1.0 - fill.mean)
            break
    return facts
