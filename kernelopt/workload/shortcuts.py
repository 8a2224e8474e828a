"""Shortcut rules: turn a workload profile into "this shape makes the kernel trivial" findings.

Plateaus often end when someone looks at the shapes: softmax over a size-1 axis is 1.0, a
reduction over a size-1 axis is a copy, a layer norm over one element is its bias (no
copy), attention with one key returns V, a top-k with
k >= n selects everything, a gather of k <= n with the same index in every row is an index
select, equal lengths need no varlen machinery, and one dominant shape deserves its own
kernel. Each rule reads an :class:`~kernelopt.workload.profile.OpProfile`
and returns :class:`Shortcut` findings saying which calls they cover, the guard a kernel
would test, and the catalog entries that explain the optimization.

Add a rule::

    from kernelopt.workload import Shortcut, ShortcutRule, register_rule

    def no_bias(op, thresholds):
        axis = op.axis("bias[0]")
        if axis is not None and axis.size1_share >= thresholds.often:
            yield Shortcut(rule="tiny-bias", op=op.op, axis=axis.name, message="...",
                           call_share=axis.size1_share, time_share=axis.size1_time_share,
                           catalog_ids=(), guard=f"{axis.source} == 1")

    register_rule(ShortcutRule(id="tiny-bias", description="bias of one element",
                               check=no_bias))
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence

import attrs

from kernelopt._errors import InputError, expected
from kernelopt._words import and_list
from kernelopt.workload._validators import as_tuple, is_callable, items_of, require
from kernelopt.workload._validators import share as unit
from kernelopt.workload._validators import text as string
from kernelopt.workload.profile import (
    AxisStat,
    OpProfile,
    ShapeStat,
    WorkloadProfile,
    is_size_of,
    one_element_args,
)
from kernelopt.workload.signatures import _semantic_op_name, is_gather, registered_signatures

__all__ = [
    "BUCKET_PADDING_WASTE",
    "BUILTIN_RULES",
    "CATALOG_IDS",
    "DOMINANT_SHAPE_SPECIALIZATION",
    "GATHER_INDEX_SELECT",
    "SIZE1_AXIS_SHORTCUT",
    "UNIFORM_LENGTH_FAST_PATH",
    "Shortcut",
    "ShortcutRule",
    "Thresholds",
    "find_shortcuts",
    "register_rule",
    "registered_rules",
    "shape_arguments",
    "unregister_rule",
]

# Catalog entry ids (kernelopt.catalog) the findings link to.
SIZE1_AXIS_SHORTCUT = "size-1-axis-shortcut"
DOMINANT_SHAPE_SPECIALIZATION = "dominant-shape-specialization"
UNIFORM_LENGTH_FAST_PATH = "uniform-length-fast-path"
BUCKET_PADDING_WASTE = "bucket-padding-waste"
GATHER_INDEX_SELECT = "gather-index-select"
CATALOG_IDS = (
    SIZE1_AXIS_SHORTCUT,
    DOMINANT_SHAPE_SPECIALIZATION,
    UNIFORM_LENGTH_FAST_PATH,
    BUCKET_PADDING_WASTE,
    GATHER_INDEX_SELECT,
)

ATTENTION_FAMILIES = ("attention", "decode-attention", "mla-decode")


def _ids(value: Iterable[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else as_tuple(value)  # type: ignore[no-any-return]


@attrs.frozen(kw_only=True)
class Shortcut:
    """A shape condition that makes (part of) a kernel's work trivial or specializable.

    Parameters
    ----------
    rule : str
        Id of the rule that found it (``"size1-reduction"``).
    op : str, optional
        The op concerned.
    axis : str, optional
        The axis concerned.
    message : str
        What holds and what a kernel can do about it, in one or two sentences.
    call_share : float
        Fraction of the op's calls the shortcut covers.
    time_share : float, optional
        Fraction of the op's timed total it covers (None without durations).
    catalog_ids : tuple of str
        Catalog entries describing the optimization.
    guard : str
        The condition a kernel would test to take the fast path (``"q.shape[1] == 1"``).
    """

    rule: str = attrs.field(validator=string(nonempty=True))
    op: str | None = attrs.field(validator=string(optional=True))
    axis: str | None = attrs.field(validator=string(optional=True))
    message: str = attrs.field(validator=string())
    call_share: float = attrs.field(validator=unit())
    time_share: float | None = attrs.field(default=None, validator=unit(optional=True))
    catalog_ids: tuple[str, ...] = attrs.field(
        default=(), converter=_ids, validator=items_of(str, "catalog ids (strings)")
    )
    guard: str = attrs.field(default="", validator=string())

    @property
    def weight(self) -> float:
        """Share of time when known, else share of calls: what ranks findings."""
        return self.time_share if self.time_share is not None else self.call_share


@attrs.frozen(kw_only=True)
class Thresholds:
    """The thresholds of the built-in rules (fractions in ``[0, 1]``).

    Parameters
    ----------
    often : float
        Share of calls at which a size-1 axis, k >= n, or k = 1 is worth a fast path.
    dominant : float
        Share of time (of calls without durations) a single shape needs to be "dominant".
    uniform : float
        Share of calls with all-equal lengths for the equal-length fast path.
    padding : float
        Share of padded work along an axis that is worth removing.
    """

    often: float = attrs.field(default=0.5, validator=unit())
    dominant: float = attrs.field(default=0.5, validator=unit())
    uniform: float = attrs.field(default=0.5, validator=unit())
    padding: float = attrs.field(default=0.10, validator=unit())


RuleCheck = Callable[[OpProfile, Thresholds], Iterable[Shortcut]]

# One term of a dominant-shape guard: an axis name and the value the shape has.
AxisTerm = tuple[str, float]


@attrs.frozen(kw_only=True)
class ShortcutRule:
    """A named check from an op profile to shortcut findings.

    Parameters
    ----------
    id : str
        Stable rule id, used as :attr:`Shortcut.rule`.
    description : str
        One line saying what the rule looks for.
    check : callable
        ``check(op_profile, thresholds) -> iterable of Shortcut``.
    """

    id: str = attrs.field(validator=string(nonempty=True))
    description: str = attrs.field(validator=string())
    check: RuleCheck = attrs.field(eq=False, validator=is_callable())


# --------------------------------------------------------------------------------------
# Helpers


def _pct(value: float) -> str:
    if value >= 1.0 - 1e-12:
        return "100%"
    return f"{100 * value:.1f}%"


def _coverage(call_share: float, time_share: float | None) -> str:
    text = f"{_pct(call_share)} of calls"
    return text if time_share is None else f"{text} ({_pct(time_share)} of time)"


def _num(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return f"{value:g}"


def _ref(axis: AxisStat) -> str:
    """What a guard tests for ``axis``: its source, the one that gave the most calls where
    calls read it from several (``cache_seqlens.max()`` of ``cache_seqlens.max();
    max_seqlen``: a guard is one expression), or its name where the source is unknown."""
    sources = axis.sources
    return sources[0] if sources else axis.name


# The statistics of a values summary a source reads (``cache_seqlens.max()``).
_SUMMARY_READS = (".max()", ".min()", ".mean()")
# The index of a shape a source reads (``dim`` of ``x.shape[dim]``, ``-1`` of ``x.shape[-1]``).
_SHAPE_INDEX = re.compile(r"\.shape\[(?P<index>[^\]]*)\]")
_WRITTEN_INDEX = re.compile(r"-?\d+")


def _arguments_read(source: str, args: dict[str, str]) -> int:
    """How many of a shape row's arguments ``source`` reads, or 0 where the row's calls
    cannot have given it.

    Parameters
    ----------
    source : str
        One source of an axis (``max_seqlen``, ``x.shape[dim]``, ``x.numel() / n``).
    args : dict of str to str
        The shape row's arguments by name (:func:`shape_arguments`).

    Returns
    -------
    int
        0 where the source names no argument of the row, names a scalar as a tensor or a
        tensor as a scalar, reads a values summary the row's tensor does not carry (a row
        lists no length its calls read from a summary), or indexes a shape by an argument
        the row does not pass; else 1 for the tensor or scalar, plus 1 for an argument
        that indexes its shape: a signature reads the dim a call passes, and its default
        only where the call passes none.
    """
    if source in args:
        return 0 if _TENSOR_TEXT.fullmatch(args[source]) else 1
    # The longest argument name the source opens with: names may hold dots themselves.
    heads = [name for name in args if source.startswith(name + ".")]
    if not heads:
        return 0
    tensor = max(heads, key=len)
    text = args[tensor]
    if _TENSOR_TEXT.fullmatch(text) is None:
        return 0
    rest = source[len(tensor) :]
    if rest in _SUMMARY_READS and "{" not in text:
        return 0
    index = _SHAPE_INDEX.match(rest)
    if index is None or _WRITTEN_INDEX.fullmatch(index["index"]):
        return 1
    passed = args.get(index["index"])
    return 0 if passed in (None, "null") else 2


def _shape_ref(axis: AxisStat, args: dict[str, str] | None) -> str:
    """What a guard of one shape tests for ``axis``: the source the shape's calls read it
    from, where calls of other shapes read it from other arguments.

    Parameters
    ----------
    axis : AxisStat
        The axis, its sources most calls first (``cache_seqlens.max(); max_seqlen``).
    args : dict of str to str, optional
        The shape row's arguments by name (:func:`shape_arguments`); None where its text
        does not split into arguments.

    Returns
    -------
    str
        The source that reads the most of the row's arguments (:func:`_arguments_read`),
        the one of most calls among equals; the axis's first source (:func:`_ref`) where
        none does. ``seqlen`` names ``cache_seqlens.max()`` first where the lengths gave
        more calls, though a row that lists ``seqlen`` read it from ``max_seqlen``.
    """
    sources = axis.sources
    if args is None or len(sources) < 2:
        return _ref(axis)
    reads = [_arguments_read(source, args) for source in sources]
    best = max(reads)
    return sources[reads.index(best)] if best else _ref(axis)


def _size1(rule: str, op: OpProfile, name: str, axis: AxisStat, message: str) -> Shortcut:
    """A finding that holds where axis ``name`` is 1, covering that share of calls and time."""
    return Shortcut(
        rule=rule,
        op=op.op,
        axis=name,
        message=message,
        call_share=axis.size1_share,
        time_share=axis.size1_time_share,
        catalog_ids=(SIZE1_AXIS_SHORTCUT,),
        guard=f"{_ref(axis)} == 1",
    )


def _holds(flag: AxisStat | None) -> tuple[float, float | None]:
    """Shares of calls and of time where a per-call condition axis is 1."""
    if flag is None:
        return 0.0, None
    item = flag.share_of(1)
    if item is None:
        return 0.0, 0.0 if flag.values and flag.values[0].time_share is not None else None
    return min(item.call_share, 1.0), None if item.time_share is None else min(item.time_share, 1.0)


# --------------------------------------------------------------------------------------
# Built-in rules


# What each reduction gives over an axis of size 1, so the advice says what to write
# instead (torch semantics; a user-registered reduction gets the generic sentence).
# Sums start from +0.0, so a -0.0 input comes out as +0.0; integer sums widen to int64.
_POSITIVE_ZERO = "-0.0 comes out as +0.0"
_INT64 = "int64 for integer and bool inputs"
_SIZE1_RESULT = {
    "sum": f"a copy of the input ({_INT64}; {_POSITIVE_ZERO})",
    "mean": f"a copy of the input ({_POSITIVE_ZERO})",
    "prod": f"a copy of the input ({_INT64})",
    **dict.fromkeys(("amax", "amin"), "a copy of the input"),
    "logsumexp": (
        "a copy of the input (in the default float dtype for integer and bool inputs; "
        f"{_POSITIVE_ZERO})"
    ),
    # torch.max/min with a dim return (values, indices).
    **dict.fromkeys(("max", "min"), "a copy of the input (with a dim, the indices are all zeros)"),
    "nansum": f"a copy of the input with NaN replaced by 0 ({_INT64}; {_POSITIVE_ZERO})",
    "argmax": "all zeros",
    "argmin": "all zeros",
    **dict.fromkeys(
        ("norm", "linalg_vector_norm", "vector_norm"),
        "the absolute value of the input for every order but 0 (ord=0: 1.0 where the input "
        "is nonzero, else 0.0)",
    ),
    **dict.fromkeys(
        ("var", "std"),
        "NaN with the default correction=1, whatever the input (with correction=0: 0, NaN "
        "where the input is ±inf or NaN)",
    ),
    # torch keeps uint8 for a uint8 input, the only dtype all/any do not turn into bool.
    **dict.fromkeys(("all", "any"), "the input tested != 0 (as uint8 for a uint8 input)"),
}


# Names that tell what a normalization computes: one that subtracts the mean (layer,
# group and instance norms) or one that does not (RMS norm).
_CENTERED_NORMS = ("layer_norm", "layernorm", "group_norm", "groupnorm", "instance_norm")
_RMS_NORMS = ("rms",)


def _op_names(op: OpProfile) -> list[str]:
    """The names that say what an op computes: its own (read as
    :meth:`~kernelopt.workload.OpSignature.matches` reads it) and its signature's."""
    names = [_semantic_op_name(op.op)]
    if op.signature is not None:
        names.append(op.signature.lower())
    return names


# Measured with torch 2.13 on CPU over one element: native_layer_norm in float16 gave
# outputs up to 3e-5 off the bias, its backward in float32 a dx up to 1.2e-4, where the
# exact result is the bias and 0.
_TORCH_NOISE = (
    "torch's own kernels compute it in another order and return rounding noise amplified "
    "by rstd = 1 / sqrt(eps) instead of the exact values: compare with a tolerance"
)


def _normalization_size1(op: OpProfile, name: str, covered: str) -> str:
    """What a normalization over one element gives, for its op (forward or backward, layer
    or RMS norm, as its names tell; both kinds where they do not).

    Over one element the mean is that element, so ``x - mean`` is exactly 0: a layer norm's
    output is its bias, whatever ``x``, and no copy of the input. An RMS norm keeps ``x``:
    each output is ``x * rsqrt(x² + eps) * weight``.
    """
    names = _op_names(op)
    backward = any("backward" in n or "bwd" in n for n in names)
    rms = any(word in n for n in names for word in _RMS_NORMS)
    centered = any(word in n for n in names for word in _CENTERED_NORMS)
    lead = f"over a size-1 axis ({name} = 1) in {covered}"
    skip = f"skip the reduction over {name}"
    zero = "x - mean is exactly 0 for finite inputs (NaN where x is ±inf or NaN)"
    if centered and not rms:
        if backward:
            return (
                f"layer norm backward {lead}: {zero}, so the normalized input is 0, dx = 0 and "
                "the weight gradient is 0; the bias gradient is dy summed over the rows, still "
                f"a reduction over rows; {skip} and the weight gradient's partial sums. "
                f"{_TORCH_NOISE}"
            )
        return (
            f"layer norm {lead}: {zero}, so the normalized input is 0 and the output is the "
            "bias (0 without one), whatever x: a constant, not a copy of the input (the mean "
            f"is x, rstd is 1 / sqrt(eps)); {skip}. {_TORCH_NOISE}"
        )
    if rms and not centered:
        if backward:
            return (
                f"RMS norm backward {lead}: dx = dy * weight * eps * (x² + eps)^(-3/2) "
                "(dy * weight * eps * rstd³), elementwise, and the weight gradient is "
                "dy * x * rstd summed over the rows, still a reduction over rows; "
                f"{skip}"
            )
        return (
            f"RMS norm {lead}: each output is x * rsqrt(x² + eps) * weight, elementwise "
            f"(about sign(x) * weight where x² is much larger than eps), not a copy of the "
            f"input; {skip}"
        )
    return (
        f"normalization {lead}: no copy of the input. Where it subtracts the mean (layer "
        f"norm), {zero}, so the output is the bias (0 without one), and backward dx = 0, "
        "the weight gradient is 0 and the bias gradient is dy summed over the rows; where it "
        "does not (RMS norm), each output is x * rsqrt(x² + eps) * weight, elementwise; "
        f"{skip}"
    )


def _size1_reduction(op: OpProfile, t: Thresholds) -> Iterable[Shortcut]:
    if op.family in ATTENTION_FAMILIES:
        return
    base = _semantic_op_name(op.op)
    for name in op.reduced:
        axis = op.axis(name)
        if axis is None or axis.size1_share <= 0 or axis.size1_share < t.often:
            continue
        covered = _coverage(axis.size1_share, axis.size1_time_share)
        hint = op.hint(name)
        if hint is not None:
            # The signature's word on its own axis: what the op gives there.
            what = f"{name} = 1 in {covered}: {hint}"
        elif op.family == "softmax":
            value = "0.0" if "log" in base else "1.0"
            what = (
                f"softmax over a size-1 axis ({name} = 1) in {covered}: the result is "
                f"exactly {value} for finite inputs (NaN where the input is -inf, +inf or NaN; "
                "-inf is a fully masked row); write it without the exponentials"
            )
        elif base in _SIZE1_RESULT:
            what = (
                f"{base} over a size-1 axis ({name} = 1) in {covered}: the result is "
                f"{_SIZE1_RESULT[base]}; skip the reduction"
            )
        elif op.family == "normalization":
            what = _normalization_size1(op, name, covered)
        else:
            what = (
                f"reduction over a size-1 axis ({name} = 1) in {covered}: each output reads "
                "one input element; skip the reduction loop"
            )
        yield _size1("size1-reduction", op, name, axis, what)


def _single_key_attention(op: OpProfile, t: Thresholds) -> Iterable[Shortcut]:
    if op.family not in ATTENTION_FAMILIES:
        return
    for name in op.reduced:
        axis = op.axis(name)
        if axis is None or axis.size1_share <= 0 or axis.size1_share < t.often:
            continue
        covered = _coverage(axis.size1_share, axis.size1_time_share)
        hint = op.hint(name)
        if hint is not None:
            yield _size1("single-key-attention", op, name, axis, f"{name} = 1 in {covered}: {hint}")
            continue
        what = (
            f"attention with one key ({name} = 1) in {covered}: softmax over one key "
            "is 1.0, so the output is that key's value row; skip QK^T, the softmax and "
            "the KV loop (the LSE is the single scaled logit, plus any additive mask). "
            "This holds with dropout_p = 0; with dropout the single weight is dropped or "
            "scaled, so each row is 0 or V / (1 - dropout_p). "
            "Where a mask removes the key, or a sequence has none, the output is 0 "
            "(PyTorch's SDPA), not V. A causal mask aligned to the bottom right "
            "(flash_attn's causal=True, torch's causal_lower_right) lets only the last query "
            "row see the key when there are several: the rows before it are 0 (SDPA's "
            "is_causal aligns to the top left, so every row sees it)"
        )
        yield _size1("single-key-attention", op, name, axis, what)


# torch.topk's tie order is its own: torch.argmax and torch.sort pick other indices among
# equal values (torch documents neither order).
_TIED_INDICES = (
    "Among equal values the indices may come in another order than torch.topk gives, so "
    "compare indices by the values they pick"
)


def _select(op: OpProfile, t: Thresholds) -> Iterable[Shortcut]:
    if op.select is None:
        return
    k_name, n_name = op.select
    k_axis, n_axis = op.axis(k_name), op.axis(n_name)
    if k_axis is None or n_axis is None:
        return
    # The profile made the k == n axis by the same test, so a gather finds it.
    gather = is_gather(op.signature, op.op)
    # A gather's guard (index == arange(n)) needs k == n: with k > n the index repeats
    # rows, so only the calls with k == n count. A top-k selects everything from k >= n.
    condition = f"{k_name}_eq_{n_name}" if gather else f"{k_name}_ge_{n_name}"
    calls, time = _holds(op.axis(condition))
    if calls > 0 and calls >= t.often:
        covered = _coverage(calls, time)
        if gather:
            what = (
                f"gather with {k_name} == {n_name} in {covered}: every row can be picked; "
                "when the indices are arange(n) the op is a plain copy of the input, "
                "narrowed to the output's shape where the index is smaller along another "
                "axis (expanded where take_along_dim broadcasts the input); check the "
                "index values, e.g. with a values summary"
            )
            guard = f"{_ref(k_axis)} == {_ref(n_axis)} and index == arange({n_name})"
        else:
            what = (
                f"top-k with {k_name} >= {n_name} in {covered}: every element is "
                "selected; the values are the input sorted along the axis (descending; "
                "ascending with largest=False; NaN ranks above +inf), or a copy when the "
                f"order does not matter. {_TIED_INDICES}"
            )
            guard = f"{_ref(k_axis)} >= {_ref(n_axis)}"
        yield Shortcut(
            rule="select-all",
            op=op.op,
            axis=k_name,
            message=what,
            call_share=calls,
            time_share=time,
            catalog_ids=(SIZE1_AXIS_SHORTCUT,),
            guard=guard,
        )
    if not gather and k_axis.size1_share > 0 and k_axis.size1_share >= t.often:
        covered = _coverage(k_axis.size1_share, k_axis.size1_time_share)
        hint = op.hint(k_name)
        if hint is not None:
            yield _size1("select-one", op, k_name, k_axis, f"{k_name} = 1 in {covered}: {hint}")
            return
        what = (
            f"top-k with {k_name} = 1 in {covered}: it is a max/argmax, "
            "one reduction pass with no selection buffer. With largest=False it is a "
            "min/argmin that skips NaN: top-k ranks NaN above +inf, so it returns NaN only "
            f"for a row of NaN, where torch.min returns NaN for any NaN. {_TIED_INDICES}"
        )
        yield _size1("select-one", op, k_name, k_axis, what)


def _gather_index_select(op: OpProfile, t: Thresholds) -> Iterable[Shortcut]:
    # Only gathers whose index has the input's rank (gather, take_along_dim) carry these
    # flags; an index_select already reads one index vector.
    if op.select is None or _semantic_op_name(op.op) == "index_select":
        return
    k_name, n_name = op.select
    k_axis, n_axis = op.axis(k_name), op.axis(n_name)
    candidate = op.axis(f"{k_name}_le_{n_name}")
    rows = op.axis("rows")
    if k_axis is None or n_axis is None or candidate is None:
        return
    if rows is not None and rows.max is not None and rows.max <= 1:
        return  # one row: the gather already reads one index vector
    index, source = (
        _ref(a).split(".shape", 1)[0] if ".shape" in _ref(a) else default
        for a, default in ((k_axis, "index"), (n_axis, "x"))
    )
    expanded = f"all({index}.stride(d) == 0 or {index}.shape[d] == 1 for d != dim)"
    guard = f"{_ref(k_axis)} <= {_ref(n_axis)} and {expanded}"
    same = (
        f"index_select({source}, dim, v) with v the index's first slice along the other "
        f"axes gives the same result ({source} narrowed first where the index is smaller "
        "there, and the result expanded to the output's shape where take_along_dim "
        f"broadcasts a smaller {source}): one index vector of {k_name} entries instead of "
        f"rows x {k_name}, and "
        "every row copies the same positions"
    )
    shared = op.axis("shared_index")
    calls, time = _holds(shared)
    if calls > 0 and calls >= t.often:
        # Measured (catalog entry gather-index-select): PyTorch's gather reads a stride-0
        # index as fast as index_select, so the saving here is in kernels of one's own.
        what = (
            f"gather of {k_name} <= {n_name} whose index is the same along every other axis "
            f"(recorded stride 0, or broadcast) in {_coverage(calls, time)}: {same}. "
            "torch.gather already reads such an index about as fast as index_select; the "
            "gain is in a kernel of your own that loads the index for every row, or where "
            "the index gets materialized later"
        )
    else:
        calls, time = _holds(candidate)
        if calls <= 0 or calls < t.often:
            return
        if shared is None:
            check = (
                "the trace records shapes, not strides, so check at run time: "
                f"{expanded} holds for an expanded index (free to test); a materialized "
                "index needs its slices compared once where it is built. Recording the "
                f'strides (Recorder(strides=("{index}",)) or a PyTorch profiler trace) '
                "measures it"
            )
        else:
            check = (
                "the recorded strides show a materialized index (no stride 0), which the "
                "gather reads whole (rows x k entries), so compare its slices once where it "
                f"is built; building it with expand() rather than repeat() makes {expanded} "
                "a free run-time test and removes that read"
            )
        what = (
            f"gather with {k_name} <= {n_name} in {_coverage(calls, time)}: when the index "
            f"is the same along every other axis, {same}. {check[0].upper()}{check[1:]}"
        )
    yield Shortcut(
        rule="gather-index-select",
        op=op.op,
        axis=k_name,
        message=what,
        call_share=calls,
        time_share=time,
        catalog_ids=(GATHER_INDEX_SELECT,),
        guard=guard,
    )


def _length_bases(op: OpProfile) -> list[str]:
    """The per-sequence length axes of ``op``: its signature's lengths (the keys' ``kv_len``
    of attention) and the real length of each padded axis (the queries' ``q_len``), each
    once, in that order."""
    bases = [] if op.lengths is None else [op.lengths]
    for _padded, length in op.padded:
        base = length.removesuffix("_mean")
        if base != length and base not in bases:
            bases.append(base)
    return bases


def _uniform_lengths(op: OpProfile, t: Thresholds) -> Iterable[Shortcut]:
    # The query lengths of a varlen prefill as well as the key lengths: equal query
    # lengths let a packed query be read as one [b, s_q, ...] block without per-sequence
    # offsets, as equal key lengths drop the per-sequence bounds of the key loop.
    for name in _length_bases(op):
        top, low = op.axis(name), op.axis(f"{name}_min")
        flag = op.axis(f"{name}_uniform")
        if top is None or low is None or flag is None:
            continue  # lengths recorded as a scalar, or not at all: no evidence either way
        calls, time = _holds(flag)
        if calls <= 0 or calls < t.uniform:
            continue
        same = ""
        if top.distinct == 1 and top.min is not None and calls >= 1.0 - 1e-12:
            same = f"; every call has {name} = {_num(top.min)}"
        if op.family in ATTENTION_FAMILIES:
            what = (
                f"all sequences of a call have the same {name} in {_coverage(calls, time)}"
                f"{same}: an equal-length path drops per-sequence bounds, tail masking and "
                "length-based load balancing"
            )
        else:
            # Lengths of rows, segments or groups of any kernel: no sequences or keys.
            what = (
                f"all lengths of a call are equal ({name}) in {_coverage(calls, time)}{same}: "
                "an equal-length path reads one length for the call (no per-length bounds "
                "or masking of each part's tail, the work split evenly)"
            )
        yield Shortcut(
            rule="uniform-lengths",
            op=op.op,
            axis=name,
            message=what,
            call_share=calls,
            time_share=time,
            catalog_ids=(UNIFORM_LENGTH_FAST_PATH,),
            guard=f"{_ref(low)} == {_ref(top)}",
        )


def _derived_ref(op: OpProfile, axis: AxisStat, args: dict[str, str] | None) -> str | None:
    """A test a user can paste for a derived axis of one shape, or None when there is none.

    The signatures write ``rows`` as ``x.numel() / n``, naming the axis it divides by;
    with that axis's own source and floor division it reads ``x.numel() // x.shape[dim]``,
    as cheap to test as a size. Each source is the one the shape's calls read
    (:func:`_shape_ref`, ``args`` the shape row's arguments by name).
    """
    name = _divisor_name(axis)
    divisor = None if name is None else op.axis(name)
    if divisor is None or not divisor.sources:
        return None
    numel = _shape_ref(axis, args).rpartition(" / ")[0].strip()
    return f"{numel} // {_shape_ref(divisor, args)}"


def _divisor_name(axis: AxisStat) -> str | None:
    """The axis a derived axis divides by (``n`` of ``x.numel() / n``), or None."""
    if not axis.sources:
        return None
    head, sep, name = axis.sources[0].rpartition(" / ")
    return name.strip() if sep and head.strip() else None


def _admits_every_call(op: OpProfile, terms: Sequence[AxisTerm]) -> bool:
    """Whether every call of ``op`` passes the guard ``terms`` (each axis == its value).

    Axis statistics cover every call, so an axis whose min and max both equal the value
    has it in every call. No term at all is no test: every call passes.
    """
    for name, value in terms:
        axis = op.axis(name)
        if axis is None or not axis.min == axis.max == value:
            return False
    return True


def _also_admitted(op: OpProfile, top: ShapeStat, terms: Sequence[AxisTerm]) -> list[ShapeStat]:
    """The listed shapes other than ``top`` whose axes pass the guard ``terms``."""
    return [
        shape
        for shape in op.shapes
        if shape is not top and all(shape.axis(name) == value for name, value in terms)
    ]


# One argument of a shape's text (``Call.label``): ``name=value``, the value a quoted JSON
# string (which may hold spaces) or a run without spaces.
_ARG_TEXT = re.compile(r'(?P<name>[^\s="]+)=(?P<value>"(?:[^"\\]|\\.)*"|[^\s"]*)(?: |$)')
# A tensor argument's value: ``[d0,d1]:dtype`` and its values summary, if any.
_TENSOR_TEXT = re.compile(r"\[(?P<dims>[^\]]*)\]:(?P<dtype>[^{]+)(?:\{.*\})?")


def shape_arguments(args: str) -> dict[str, str] | None:
    """The arguments of a shape row's Args text by name, in order.

    Parameters
    ----------
    args : str
        A shape row's Args cell, as a profile writes it (``x=[4,512]:float16 dim=-1``).

    Returns
    -------
    dict of str to str, or None
        Each argument's text by name (``{"x": "[4,512]:float16", "dim": "-1"}``); None
        where the text does not split into ``name=value`` arguments, each named once (a
        hand-written profile's free text).
    """
    found: dict[str, str] = {}
    at = 0
    while at < len(args):
        match = _ARG_TEXT.match(args, at)
        if match is None or match["name"] in found:
            return None
        found[match["name"]] = match["value"]
        at = match.end()
    return found


def _what_differs(name: str, mine: str | None, theirs: str | None) -> list[str]:
    """What of argument ``name`` differs between two shapes, written as the report writes
    a source (``x.shape``, ``x.dtype``, ``k``); the name alone where one shape lacks it, it
    is not a tensor in both, or only its values differ."""
    if mine == theirs:
        return []
    a = None if mine is None else _TENSOR_TEXT.fullmatch(mine)
    b = None if theirs is None else _TENSOR_TEXT.fullmatch(theirs)
    if a is None or b is None:
        return [name]
    parts = []
    if a["dims"] != b["dims"]:
        parts.append(f"{name}.shape")
    if a["dtype"] != b["dtype"]:
        parts.append(f"{name}.dtype")
    # Same sizes and dtype: the values summary differs, which no one source names.
    return parts or [name]


def _differences(op: OpProfile, top: ShapeStat) -> list[str]:
    """What the op's other listed shapes differ from ``top`` in (:func:`_what_differs`),
    in the order of the arguments; empty where a shape's text does not split into
    arguments or no other shape is listed."""
    mine = shape_arguments(top.args)
    if mine is None:
        return []
    others: list[dict[str, str]] = []
    for shape in op.shapes:
        if shape is top:
            continue
        theirs = shape_arguments(shape.args)
        if theirs is None:
            return []
        others.append(theirs)
    names = list(mine)
    for theirs in others:
        names += [name for name in theirs if name not in names]
    found: list[str] = []
    for name in names:
        for theirs in others:
            for part in _what_differs(name, mine.get(name), theirs.get(name)):
                if part not in found:
                    found.append(part)
    return found


def _weight(shape: ShapeStat, by: str) -> float | None:
    """The share of ``shape`` that the ``dominant-shape`` rule ranks by (``by``)."""
    return shape.time_share if by == "time" else shape.call_share


def _tied(share: float, other: float | None) -> bool:
    """Whether ``other`` is the same share as ``share``: equal counts give equal shares,
    and a share written in a file may differ from its recomputed twin in the last bit."""
    return other is not None and math.isclose(share, other, rel_tol=1e-9, abs_tol=1e-12)


# GEMM axes whose size one past a tile multiple leaves a last tile of one element, and
# what that element is along each.
_TILED_AXES = {"m": "row", "n": "column", "k": "k step"}
# Tiles worth naming: tl.dot's smallest (16) up to the largest common one (256).
_SMALLEST_TILE, _LARGEST_TILE = 16, 256


def _one_past(value: float) -> tuple[int, int] | None:
    """``(value - 1, tile)`` where ``value`` is one past a multiple of 16 (4097 = 4096 + 1),
    ``tile`` the largest power of two from 16 to 256 dividing ``value - 1``; else None."""
    if not float(value).is_integer() or value <= _SMALLEST_TILE:
        return None
    body = int(value) - 1
    tile = body & -body  # the largest power of two dividing the rest
    if tile < _SMALLEST_TILE:
        return None
    return body, min(tile, _LARGEST_TILE)


def _tile_sizes(tile: int) -> str:
    """The power-of-two tiles from 16 up to ``tile``, in words."""
    return f"{tile}" if tile == _SMALLEST_TILE else f"{_SMALLEST_TILE} to {tile}"


def _ragged_gemm(name: str, value: int, body: int, tile: int) -> str | None:
    """The note for GEMM axis ``name`` of size ``value`` one past ``body``, or None where
    ``name`` is no tiled GEMM axis."""
    unit = _TILED_AXES.get(name)
    if unit is None:
        return None
    extra = "" if name == "k" else " (and possibly one more wave of programs)"
    return (
        f"{name} = {value} is one past {body}: power-of-two tiles of {_tile_sizes(tile)} along "
        f"{name} leave a last tile of one {unit}, a whole tile of work for it{extra}; "
        f"handling that last {unit} apart avoids it"
    )


def _ragged_reduction(name: str, value: int, body: int, tile: int) -> str:
    """The note for a reduced axis ``name`` of size ``value`` one past ``body``: a row kernel
    takes the axis as one block of ``triton.next_power_of_2(value)`` lanes, or loops over
    it in tiles."""
    block = 1 << (value - 1).bit_length()  # triton.next_power_of_2
    masked = block - value
    return (
        f"{name} = {value} is one past {body}: one block of next_power_of_2({value}) = {block} "
        f"lanes along {name} leaves {masked} of them masked off: {_pct(masked / block)} of the "
        "block's registers and arithmetic spent on no element (masked loads read no memory, "
        "so the cost is compute and occupancy, not bandwidth); a loop over "
        f"{name} in power-of-two tiles of {_tile_sizes(tile)} leaves a last tile of one "
        "element, a whole tile of work for it; handling that last element apart avoids both"
    )


def _ragged_tiles(op: OpProfile, terms: Sequence[AxisTerm]) -> list[str]:
    """A note per guarded size one past a multiple of 16 (4097 = 4096 + 1) of a GEMM axis or
    of an axis the op reduces over: specialized as a constant, it still pays a whole tile
    (or a block of masked lanes) for the last element.

    Parameters
    ----------
    op : OpProfile
        The op; a GEMM's ``m``, ``n`` and ``k`` get notes, and the reduced axes of any
        family but attention (a softmax, reduction or normalization row).
    terms : sequence of (str, float)
        The axes and sizes the guard tests.

    Returns
    -------
    list of str
        ``m = 4097 is one past 4096: power-of-two tiles of 16 to 256 along m leave a last
        tile of one row, a whole tile of work for it (...)`` for a GEMM; ``hidden = 4097 is
        one past 4096: one block of next_power_of_2(4097) = 8192 lanes along hidden leaves
        4095 of them masked off (...)`` for a reduced axis; one per such size, else empty.
    """
    reduced = () if op.family in ATTENTION_FAMILIES else op.reduced
    notes = []
    for name, value in terms:
        past = _one_past(value)
        if past is None:
            continue
        body, tile = past
        if op.family == "gemm":
            note = _ragged_gemm(name, int(value), body, tile)
        elif name in reduced:
            note = _ragged_reduction(name, int(value), body, tile)
        else:
            note = None
        if note is not None:
            notes.append(note)
    return notes


def _dominant_shape(op: OpProfile, t: Thresholds) -> Iterable[Shortcut]:
    if not op.shapes:
        return
    by = "time" if op.timed else "calls"
    top, *runner_up = op.top_shapes(2, by=by)
    weight = _weight(top, by)
    if weight is None or weight < t.dominant:
        return
    if runner_up and _tied(weight, _weight(runner_up[0], by)):
        # Two shapes of one share (50/50): neither dominates, and naming the one listed
        # first would make the finding depend on the order the calls came in.
        return
    # A guard tests sizes a kernel sees cheaply: a derived axis only where it reads as a
    # test (rows as x.numel() // x.shape[dim]), and of a values summary only the max (the
    # min and mean follow from the lengths themselves).
    # Each axis as the shape's own calls read it: where calls of other shapes read an axis
    # from other arguments, its first source may be one no call of this shape passes.
    args = shape_arguments(top.args)
    refs: dict[str, str] = {}
    for a in op.axes:
        if a.kind in ("shape", "scalar") or (
            a.kind == "values" and not a.name.endswith(("_min", "_mean"))
        ):
            refs[a.name] = _shape_ref(a, args)
        elif a.kind == "derived":
            derived = _derived_ref(op, a, args)
            # x.numel() // x.shape[dim] divides by zero on the very calls the guard takes
            # where the shape's reduced axis is empty: no test of its rows, then.
            divisor = _divisor_name(a)
            if derived is not None and (divisor is None or top.axis(divisor) != 0):
                refs[a.name] = derived
    axes = {a.name: a for a in op.axes}
    if not any(n in refs for n, _ in top.axes):
        return  # no axis to specialize on (ops taking only sizes as lists, flags)
    varying = [(n, v) for n, v in top.axes if n in refs and (axes[n].distinct or 0) > 1]
    # Derived axes repeat what the sizes say, so they join the guard only where the sizes
    # alone do not tell the shape apart (a row softmax whose calls differ in rows alone).
    terms = [(n, v) for n, v in varying if axes[n].kind != "derived"]
    if len(terms) < len(varying) and (not terms or _also_admitted(op, top, terms)):
        terms = varying
    only = op.distinct_shapes == 1
    if only and not terms:
        terms = [(n, v) for n, v in top.axes if n in refs and axes[n].kind == "shape"]
        if not terms:
            return  # sizes of a scalar or derived kind only: nothing a size guard reads
    lead = "the only shape" if only else f"one shape covers {_pct(weight)} of {by}"
    if not only and _admits_every_call(op, terms):
        # A guard every call passes would send the whole workload down the specialized
        # path: say what is missing instead of offering one.
        what = (
            f"{lead} ({top.args}), but no cheap test of its sizes tells it apart from the "
            "other shapes: "
        )
        differs = _differences(op, top)
        if not differs:
            what += (
                "they differ in dtypes, or in arguments or sizes no such test reads. A "
                "kernel specialized for it needs a guard on what sets it apart"
            )
        elif op.other is None:
            # Every shape is listed: what they differ in is all a guard has to test.
            what += (
                f"they differ from it only in {and_list(differs)}. A kernel specialized for it "
                f"needs a guard on {and_list(differs)}"
            )
        else:
            # The shapes folded into one row may differ in more than the listed ones.
            what += (
                f"the listed ones differ from it only in {and_list(differs)} ({op.other.args} "
                "are not listed: they may differ in more). A kernel specialized for it needs "
                "a guard on what sets it apart"
            )
        guard = ""
    else:
        guard = " and ".join(f"{refs[n]} == {_num(v)}" for n, v in terms)
        shape_text = ", ".join(f"{n}={_num(v)}" for n, v in terms)
        what = (
            f"{lead} ({shape_text}): a kernel specialized for it (sizes as compile-time "
            "constants, tiles tuned for it) takes those calls"
            + ("" if only else ", the general kernel keeps the rest")
        )
        ragged = _ragged_tiles(op, terms)
        if ragged:
            what += "; " + "; ".join(ragged)
        others = [] if only else _also_admitted(op, top, terms)
        if others:
            share = min(sum(s.call_share for s in others), 1.0)
            which = "other shape that differs" if len(others) == 1 else "other shapes that differ"
            what += (
                f"; its guard also admits {len(others)} {which} from it only in what the "
                f"guard does not test ({_pct(share)} of calls)"
            )
    yield Shortcut(
        rule="dominant-shape",
        op=op.op,
        axis=None,
        message=what,
        call_share=top.call_share,
        time_share=top.time_share,
        catalog_ids=(DOMINANT_SHAPE_SPECIALIZATION,),
        guard=guard,
    )


def _grid_waste(values: Sequence[float]) -> float | None:
    """Expected padded share per value if sizes are rounded up to a bucket grid, else None.

    Grids (at least three distinct sizes): powers of two >= 8 (buckets (v/2, v]) or
    multiples of a step >= 16 (buckets (v - step, v]); real sizes are assumed spread evenly
    within each bucket.
    """
    ints = [int(v) for v in values if float(v).is_integer() and v >= 1]
    # Two sizes are a coincidence as often as a grid; three on one grid are a pattern.
    if len(ints) != len(values) or len(set(ints)) < 3:
        return None
    if all(v & (v - 1) == 0 for v in ints) and min(ints) >= 8:
        return 0.0  # marker: power-of-two grid
    step = math.gcd(*ints)
    return float(step) if step >= 16 else None


# The summaries a signature's values axis comes with (``kv_len_mean`` of ``kv_len``).
_SUMMARY_SUFFIXES = ("_mean", "_min")


def _lengths_argument(op: OpProfile, length: str) -> str | None:
    """The lengths tensor whose values give axis ``length`` (``kv_len_mean``) of ``op``.

    Parameters
    ----------
    op : OpProfile
        The op; its signature, found by name among the registered ones, says which
        argument gives the axis and under which names.
    length : str
        A real-length axis of :attr:`OpProfile.padded`, or its base (``kv_len``).

    Returns
    -------
    str or None
        The name the op's calls passed it under where a listed shape has one of its names
        (``seqused_k``), else the signature's own name for it (``kv_lens``); None where
        the op's signature is not registered or reads the axis from no tensor's values.
    """
    base = length
    for suffix in _SUMMARY_SUFFIXES:
        base = base.removesuffix(suffix)
    signature = next((s for s in registered_signatures() if s.name == op.signature), None)
    if signature is None:
        return None
    key = next((arg for arg, axis in signature.values if axis == base), None)
    if key is None:
        return None
    names = signature.names_of(key)
    for shape in op.shapes:
        passed = shape_arguments(shape.args) or {}
        for name in names:
            if name in passed:
                return name
    return names[0]


def _record_lengths(op: OpProfile, length: str) -> str:
    """What to record so that the real lengths of axis ``length`` get measured: the
    lengths tensor by the name a call passes (``record the kv_lens values
    (values=['kv_lens'])``), or the axis where no registered signature names one."""
    name = _lengths_argument(op, length)
    if name is None:
        return f"record the values of the lengths tensor that gives {length}"
    return f"record the {name} values (values=[{name!r}])"


def _bucket_padding(op: OpProfile, t: Thresholds) -> Iterable[Shortcut]:
    for padded, length in op.padded:
        p_axis, l_axis = op.axis(padded), op.axis(length)
        if p_axis is None:
            continue
        fill = op.axis(f"{padded}_fill")
        if fill is not None and fill.mean is not None:
            waste = 1.0 - fill.mean
            if waste < t.padding:
                continue
            full_calls, full_time = _holds(fill)  # a fill of 1 is a call without padding
            calls = max(0.0, 1.0 - full_calls)
            time = None if full_time is None else max(0.0, 1.0 - full_time)
            what = (
                f"{padded} is padded past the real lengths ({length}): on average "
                f"{_pct(waste)} of it is padding in {_coverage(calls, time)}; iterate to "
                "the real length or pick buckets closer to the lengths"
            )
            yield Shortcut(
                rule="bucket-padding",
                op=op.op,
                axis=padded,
                message=what,
                call_share=calls,
                time_share=time,
                catalog_ids=(BUCKET_PADDING_WASTE,),
                guard=f"{_ref(l_axis) if l_axis is not None else length} < {_ref(p_axis)}",
            )
            continue
        if l_axis is not None:
            continue  # lengths recorded and no padding measured
        grid = _grid_waste([v.value for v in p_axis.values])
        if grid is None:
            continue
        work = waste_sum = 0.0
        for item in p_axis.values:
            v = item.value
            bucket = v / 2 if grid == 0.0 else grid
            waste_sum += item.call_share * (bucket - 1) / 2
            work += item.call_share * v
        estimate = waste_sum / work if work else 0.0
        if estimate < t.padding:
            continue
        calls = min(sum(v.call_share for v in p_axis.values), 1.0)
        times = [v.time_share for v in p_axis.values]
        time = None if any(s is None for s in times) else min(sum(times), 1.0)  # type: ignore[arg-type]
        sizes = ", ".join(_num(v.value) for v in sorted(p_axis.values, key=lambda v: v.value))
        what = (
            f"{padded} takes bucket sizes ({sizes}); if real lengths are rounded up to "
            f"them, about {_pct(estimate)} of the work along {padded} is padding (estimate, "
            f"assuming lengths spread evenly within buckets); {_record_lengths(op, length)} "
            "to measure it"
        )
        yield Shortcut(
            rule="bucket-padding",
            op=op.op,
            axis=padded,
            message=what,
            call_share=calls,
            time_share=time,
            catalog_ids=(BUCKET_PADDING_WASTE,),
            guard=f"real length < {_ref(p_axis)}",
        )


def _size1_axis(op: OpProfile, t: Thresholds) -> Iterable[Shortcut]:
    skip = set(op.reduced) | set(op.fixed) | set(op.select or ())
    scalars = one_element_args(op.axes)
    # The axes read from one dim under different names (m where a signature fitted a
    # call, x[0] where it did not): their size-1 calls are one finding, not two below the
    # line. Keyed by that dim, in the order first met.
    by_source: dict[str, list[AxisStat]] = {}
    for axis in op.axes:
        if axis.name in skip:
            continue
        # Sizes only: a dim or a scalar, or the per-sequence length axis of the signature
        # (seq_len = 1: one token per sequence, the decode path); no other statistic of a
        # tensor's values, and no dim of a one-element tensor (a device scalar).
        if axis.kind not in ("shape", "scalar") and not (
            axis.kind == "values" and axis.name == op.lengths
        ):
            continue
        if is_size_of(axis, scalars):
            continue
        sources = axis.sources
        key = sources[0] if axis.kind == "shape" and len(sources) == 1 else f"\0{axis.name}"
        by_source.setdefault(key, []).append(axis)
    for same in by_source.values():
        share = sum(axis.size1_share for axis in same)
        if share <= 0 or share < t.often:
            continue
        times = [axis.size1_time_share for axis in same]
        time_share = None if None in times else sum(times)  # type: ignore[arg-type]
        # Named after the signature's name where one fitted any call (m, not x[0]: its
        # hint says what to do), else after the name most size-1 calls read it by.
        named = [item for item in same if not _RAW_DIM_NAME.fullmatch(item.name)]
        axis = max(named or same, key=lambda item: item.size1_share)
        covered = _coverage(share, time_share)
        others = [item.name for item in same if item is not axis]
        # Where the signature fitted some calls only, the calls it did not fit name the
        # dim after its argument: the finding says both names.
        also = f" ({_ref(axis)}, named {and_list(others)} in some calls)" if others else ""
        hint = op.hint(axis.name)
        if hint is not None:
            what = f"{axis.name} = 1 in {covered}{also}: {hint}"
        else:
            what = (
                f"{axis.name} = 1 in {covered}{also}: a path without this axis (no loop over "
                "it, no index math or masking along it) covers them"
            )
        yield Shortcut(
            rule="size1-axis",
            op=op.op,
            axis=axis.name,
            message=what,
            call_share=min(share, 1.0),
            time_share=None if time_share is None else min(time_share, 1.0),
            catalog_ids=(SIZE1_AXIS_SHORTCUT,),
            guard=f"{_ref(axis)} == 1",
        )


# A dim read by its argument's name (x[0]), where no signature named it.
_RAW_DIM_NAME = re.compile(r"\w+\[-?\d+\]")


# Order matters for ties: trivial-shape findings come before specialization.
BUILTIN_RULES: tuple[ShortcutRule, ...] = (
    ShortcutRule(
        id="size1-reduction",
        check=_size1_reduction,
        description="softmax or reduction over an axis of size 1",
    ),
    ShortcutRule(
        id="single-key-attention",
        check=_single_key_attention,
        description="attention over a single key: the output is V",
    ),
    ShortcutRule(
        id="select-all",
        check=_select,
        description="top-k/gather with k >= n (everything selected), top-1 (argmax)",
    ),
    ShortcutRule(
        id="gather-index-select",
        check=_gather_index_select,
        description="gather of k <= n with the same index along the other axes: an index_select",
    ),
    ShortcutRule(
        id="uniform-lengths",
        check=_uniform_lengths,
        description="all sequences of a call have the same length",
    ),
    ShortcutRule(id="size1-axis", check=_size1_axis, description="any other axis that is often 1"),
    ShortcutRule(
        id="dominant-shape",
        check=_dominant_shape,
        description="one shape takes most of the time (of the calls without timing)",
    ),
    ShortcutRule(
        id="bucket-padding",
        check=_bucket_padding,
        description="work sized by padded buckets rather than real lengths",
    ),
)

_USER: list[ShortcutRule] = []


def register_rule(rule: ShortcutRule, *, replace: bool = False) -> None:
    """Add ``rule`` to the registry that :func:`find_shortcuts` uses by default.

    Parameters
    ----------
    rule : ShortcutRule
        The rule; its ``id`` names it in the registry.
    replace : bool
        Replace a registered rule of the same id instead of refusing it.

    Raises
    ------
    InputError
        When ``rule`` is no ShortcutRule, or a rule with that id exists and ``replace`` is
        False, or ``replace`` is not a bool.
    """
    require(rule, ShortcutRule, "a ShortcutRule", where="rule")
    # Before the registry changes: "no" is truthy, and would replace a rule kept on purpose.
    require(replace, bool, "a bool", where="replace")
    taken = any(r.id == rule.id for r in (*_USER, *BUILTIN_RULES))
    if taken and not replace:
        raise InputError(expected("a new rule id (or replace=True)", rule.id, where="rule"))
    for old in [r for r in _USER if r.id == rule.id]:
        _USER.remove(old)
    _USER.append(rule)


def unregister_rule(rule_id: str) -> None:
    """Remove a user rule (a built-in it replaced comes back).

    Parameters
    ----------
    rule_id : str
        The rule's id; no user rule of that id is not an error.

    Raises
    ------
    InputError
        If ``rule_id`` is not a str.
    """
    require(rule_id, str, "a rule id (str)", where="rule_id")
    for old in [r for r in _USER if r.id == rule_id]:
        _USER.remove(old)


def registered_rules() -> tuple[ShortcutRule, ...]:
    """The registered rules: built-ins (unless replaced), then user rules."""
    replaced = {r.id for r in _USER}
    return (*(r for r in BUILTIN_RULES if r.id not in replaced), *_USER)


def find_shortcuts(
    profile: WorkloadProfile | OpProfile,
    rules: Sequence[ShortcutRule] | None = None,
    *,
    thresholds: Thresholds | None = None,
) -> list[Shortcut]:
    """Run shortcut rules over every op of ``profile``.

    Parameters
    ----------
    profile : WorkloadProfile or OpProfile
        What :func:`~kernelopt.workload.profile_calls` or
        :func:`~kernelopt.workload.read_profile_md` returned.
    rules : sequence of ShortcutRule, optional
        The rules to run (default: the registry, see :func:`register_rule`).
    thresholds : Thresholds, optional
        Thresholds of the built-in rules.

    Returns
    -------
    list of Shortcut
        Largest share of time (of calls without durations) first. In a profile of several
        ops, framework ops (``namespace::name``) without a signature are left out. With
        the registry's rules, a profile read from a file also gives the findings the file
        lists of rules this process has not registered
        (:attr:`~kernelopt.workload.WorkloadProfile.written_shortcuts`), as written.

    Raises
    ------
    InputError
        When an argument has the wrong type, or a rule yields something else than
        Shortcut findings.
    """
    require(
        profile, (WorkloadProfile, OpProfile), "a WorkloadProfile or OpProfile", where="profile"
    )
    if rules is not None:
        require(rules, (tuple, list), "a sequence of ShortcutRule or None", where="rules")
        for rule in rules:
            require(rule, ShortcutRule, "a sequence of ShortcutRule", where="rules")
    if thresholds is not None:
        require(thresholds, Thresholds, "Thresholds or None", where="thresholds")
    chosen = registered_rules() if rules is None else tuple(rules)
    limits = thresholds or Thresholds()
    ops = profile.ops if isinstance(profile, WorkloadProfile) else (profile,)
    if len(ops) > 1:
        # A profiler trace of a whole model holds every framework op (aten::empty,
        # aten::transpose...); without a signature their axes say nothing about a kernel.
        # Select one with op= to see its findings anyway.
        ops = tuple(op for op in ops if op.signature is not None or "::" not in op.op)
    found: list[tuple[int, Shortcut]] = []
    for op in ops:
        for order, rule in enumerate(chosen):
            for item in rule.check(op, limits):
                # Checked here: a user rule's stray item would fail the ranking below.
                require(item, Shortcut, "Shortcut findings", where=f"rule {rule.id}")
                found.append((order, item))
    if rules is None and isinstance(profile, WorkloadProfile):
        # What a rule of the user's found when the profile was written: a process without
        # that rule cannot find it again (a rule it has registered runs instead).
        ran = {rule.id for rule in chosen}
        kept = {op.op for op in ops}
        found += [
            (len(chosen), item)
            for item in profile.written_shortcuts
            if item.rule not in ran and item.op in kept
        ]
    # Ties go to the rule listed first: trivial-shape rules come before specialization.
    found.sort(key=lambda f: (-f[1].weight, -f[1].call_share, f[0], f[1].op or "", f[1].axis or ""))
    return [item for _, item in found]
