"""Op signatures: which tensor dimension or scalar argument is which named axis.

A trace knows ``q=[32,1,128,576]``; a kernel engineer thinks ``b=32, s_q=1, h_q=128,
d_qk=576``. An :class:`OpSignature` maps one to the other for the ops it names, and says
what role each axis plays (reduced by the op, selected from, a sequence length, padded,
fixed by design), which is what the shortcut rules look at. The registry is extensible::

    from kernelopt.workload import OpSignature, register_signature

    register_signature(OpSignature(
        name="my_rmsnorm", ops=("my_rmsnorm",), family="normalization",
        tensors={"x": ("tokens", "hidden")}, reduced=("hidden",)))

Ops without a signature still get axes, named after the argument and dimension
(``x[0]``, ``x[1]``) or the integer scalar (``k``).
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import attrs

from kernelopt._errors import InputError, expected
from kernelopt._words import and_list
from kernelopt.workload._validators import (
    Validator,
    as_tuple,
    finite,
    instance_of,
    is_callable,
    items_of,
    one_of,
    require,
    text,
)
from kernelopt.workload.calls import Call, ScalarArg, TensorArg, exact_number_text

__all__ = [
    "BUILTIN_SIGNATURES",
    "AxisValue",
    "DimAxis",
    "OpSignature",
    "base_op_name",
    "extract_axes",
    "find_signature",
    "is_gather",
    "register_signature",
    "registered_signatures",
    "unregister_signature",
    "values_axis_names",
]

# Axis kinds: a tensor dimension, a values summary of a tensor, an integer scalar argument,
# a quantity derived from the others (rows = numel / reduced size), a per-call condition
# (1.0 when it holds: equal lengths, k >= n) or a per-call ratio (real length / padded).
AXIS_KINDS = ("shape", "values", "scalar", "derived", "flag", "ratio")


_FINITE = finite()


def _axis_value(instance: object, attribute: Any, value: Any) -> None:
    # Each call of each distinct shape builds its axes: a plain int or float, the common
    # case, is checked here without the general test (an ABC check per axis).
    if value.__class__ is int:
        if -(2**53) <= value <= 2**53:
            return
    elif value.__class__ is float and math.isfinite(value):
        return
    _FINITE(instance, attribute, value)


@attrs.frozen(kw_only=True)
class AxisValue:
    """One named axis value of one call.

    Parameters
    ----------
    name : str
        Axis name (``"s_q"``, or ``"x[1]"`` for an unnamed dimension).
    value : float
        Its value in this call (integral for sizes; a mean may be fractional).
    source : str
        Where it comes from, as a kernel would test it (``"q.shape[1]"``,
        ``"cache_seqlens.max()"``, ``"k"``).
    kind : str
        One of ``"shape"``, ``"values"``, ``"scalar"``, ``"derived"``, ``"flag"`` (1.0
        when a per-call condition holds, else 0.0), ``"ratio"``.
    """

    name: str = attrs.field(validator=text(nonempty=True))
    value: float = attrs.field(validator=_axis_value)
    source: str = attrs.field(validator=text())
    kind: str = attrs.field(validator=one_of(AXIS_KINDS))


def _optional_int(_instance: object, attribute: Any, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InputError(expected("an integer or None", repr(value), where=attribute.name))


@attrs.frozen(kw_only=True)
class DimAxis:
    """An axis picked out of a tensor by a ``dim`` argument (softmax, reductions, top-k).

    Parameters
    ----------
    name : str
        Axis name of the selected dimension(s); several dims multiply (``sum(dim=(1, 2))``).
    arg : str
        The tensor argument (canonical name; aliases come from the signature).
    dim_arg : str
        The scalar argument that gives the dim, an int or a list of ints.
    default_dim : int, optional
        The dim when ``dim_arg`` is absent or None; None means every dimension.
    rows : str, optional
        Name of a derived axis holding ``numel / size`` (how many independent rows).
    implicit_for : str, optional
        A tensor argument name under which an absent or None dim means the dim
        ``torch.nn.functional.softmax`` picks (0 for 0-, 1- and 3-d inputs, else 1)
        rather than ``default_dim``: ``"input"``, the name that function records.
    """

    name: str = attrs.field(validator=text(nonempty=True))
    arg: str = attrs.field(validator=text(nonempty=True))
    dim_arg: str = attrs.field(default="dim", validator=text(nonempty=True))
    default_dim: int | None = attrs.field(default=-1, validator=_optional_int)
    rows: str | None = attrs.field(default=None, validator=text(optional=True, nonempty=True))
    implicit_for: str | None = attrs.field(
        default=None, validator=text(optional=True, nonempty=True)
    )

    def default_for(self, tensor: str, rank: int) -> int | None:
        """The dim taken when the call gives none.

        Parameters
        ----------
        tensor : str
            The name the tensor argument was recorded under (``"input"``, ``"x"``).
        rank : int
            Its number of dimensions.

        Returns
        -------
        int or None
            :attr:`default_dim`, or torch's implicit softmax dim for a tensor recorded
            under :attr:`implicit_for`; None means every dimension.
        """
        if self.implicit_for is not None and tensor == self.implicit_for:
            # torch.nn.functional._get_softmax_dim, kept for old callers of F.softmax(x).
            return 0 if rank in (0, 1, 3) else 1
        return self.default_dim


# The converters below turn what a user writes (dicts, lists) into tuples and hand anything
# else through unchanged, for the validators to refuse with the field's name.


def _pairs(value: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    items = value.items() if isinstance(value, Mapping) else as_tuple(value)
    if not isinstance(items, Iterable):
        return value  # type: ignore[return-value]
    out: list[tuple[str, Any]] = []
    for pair in items:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            return value  # type: ignore[return-value]
        key, item = pair
        out.append((key, tuple(item) if isinstance(item, list) else item))
    return tuple(out)


def _pairs_of(what: str, ok: Callable[[object], bool]) -> Validator:
    """A tuple of (name, value) pairs whose values pass ``ok`` (``what`` describes them)."""

    def check(_instance: object, attribute: Any, value: object) -> None:
        good = isinstance(value, tuple) and all(
            isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) and ok(pair[1])
            for pair in value
        )
        if not good:
            raise InputError(
                expected(f"a mapping of name to {what}", repr(value), where=attribute.name)
            )

    return check


def _is_str(value: object) -> bool:
    return isinstance(value, str)


def _is_names(value: object) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, str) for v in value)


def _is_dims(value: object) -> bool:
    return isinstance(value, tuple) and all(v is None or isinstance(v, str) for v in value)


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else as_tuple(value)  # type: ignore[no-any-return]


def _dims(value: Iterable[DimAxis]) -> tuple[DimAxis, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


def _padded(value: Iterable[Sequence[str]]) -> tuple[tuple[str, str], ...]:
    items = as_tuple(value)
    if not isinstance(items, tuple):
        raise InputError(expected("(padded axis, length axis) pairs", repr(value), where="padded"))
    out = []
    for pair in items:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not _is_names(tuple(pair)):
            raise InputError(
                expected("(padded axis, length axis) pairs", repr(pair), where="padded")
            )
        out.append((pair[0], pair[1]))
    return tuple(out)


def _select(value: Sequence[str] | None) -> tuple[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not _is_names(tuple(value)):
        raise InputError(expected("select as (k axis, n axis)", repr(value), where="select"))
    return (value[0], value[1])


Extractor = Callable[[Call], Sequence[AxisValue]]

# The families of the built-in signatures, all among the catalog's (a test checks it):
# read without importing the catalog, which costs more than importing this package.
_KNOWN_FAMILIES = frozenset(
    ("any", "attention", "mla-decode", "softmax", "reduction", "gemm", "normalization")
)


def _family(value: object) -> object:
    """A signature's family in the catalog's spelling (``matmul`` is ``gemm``); a name
    the catalog does not know is refused, as ``diagnose`` and ``catalog`` refuse it."""
    if not isinstance(value, str) or value in _KNOWN_FAMILIES or not value.strip():
        return value  # a non-string or an empty one is refused by the validator
    from kernelopt.catalog.vocabulary import (
        FAMILIES,
        family_aliases_text,
        nearest_family,
        normalize_family,
    )

    name = normalize_family(value)
    if name not in FAMILIES:
        nearest = nearest_family(name)
        hint = (
            ""
            if nearest is None
            else f"; {name} names a kernel with no family of its own, nearest {nearest[0]}: "
            f"{nearest[1]}"
        )
        raise InputError(
            expected(
                f"a kernel family among {', '.join(FAMILIES)} (or {family_aliases_text()})",
                repr(value) + hint,
                where="family",
            )
        )
    return name


@attrs.frozen(kw_only=True)
class OpSignature:
    """How the arguments of some ops map to named axes, and the role of each axis.

    Parameters
    ----------
    name : str
        Signature id (``"mla_decode"``).
    ops : tuple of str
        Op names it applies to, compared without case and without a ``namespace::``
        prefix (``"aten::softmax"`` matches ``"softmax"``); ``*`` and ``?`` are wildcards.
    excludes : tuple of str
        Op names it does not apply to even where one of ``ops`` matches, compared as
        ``ops`` are with the op's own name (without namespace and class): the built-in
        ``attention`` signature excludes names with ``mla`` as a word part
        (``mla_prefill_attention``), whose tensors are not laid out as SDPA's.
    family : str
        Kernel family, one of the catalog's (:data:`kernelopt.catalog.vocabulary.FAMILIES`:
        ``"mla-decode"``, ``"softmax"``, ``"attention"``, ``"gemm"``, ``"elementwise"``,
        ``"any"``...); an alias the catalog reads (``"matmul"``) is stored as its family,
        and any other name (``"kv-cache-append"``) is refused, naming the nearest family.
    tensors : mapping of str to tuple of (str or None)
        Tensor argument → axis name per dimension (None skips a dimension). A tensor
        recorded with fewer dims than declared is named only where ``align_right`` says
        how; otherwise its dims keep their argument names (``q[0]``, ``q[1]``...) and the
        profile notes why: a varlen query ``[tokens, h, d]`` beside ``[b, s_q, h, d]``
        tensors is no ``s_q = tokens``. An axis named in several tensors (``b`` of ``q``
        and of ``block_table``) must have the same size in each: a call where the sizes
        differ keeps its argument names too, and the profile notes the axis, both tensors
        and both sizes (``Expected axis b the same in q.shape[0] and
        block_table.shape[0], got 32 and 16``).
    aliases : mapping of str to tuple of str
        Other names an argument goes by (``{"q": ("query",)}``).
    values : mapping of str to str
        Tensor argument → axis base name taken from its values summary: ``<base>`` is the
        max, ``<base>_min`` and ``<base>_mean`` the min and mean.
    scalars : mapping of str to str
        Integer scalar argument → axis name.
    dim_axes : tuple of DimAxis
        Axes chosen by a ``dim`` argument.
    reduced : tuple of str
        Axes the op reduces over (softmax/reduction axis, attention keys).
    fixed : tuple of str
        Axes whose size is set by the model design (MLA's single KV head); never shortcuts.
    select : (str, str), optional
        ``(k, n)``: the op selects ``k`` out of ``n`` (top-k, gather).
    lengths : str, optional
        Base name of the per-sequence length axis (from ``values``); at 1 (one token per
        sequence) it gives the ``size1-axis`` finding, with its hint where one is given.
    padded : tuple of (str, str)
        ``(padded axis, real length axis)`` pairs: work sized by the first, useful work by
        the second. The padded axis is a dim or scalar axis of the signature; the real
        length a dim or scalar axis (one length per call) or a values axis (``<base>``,
        ``<base>_min``, ``<base>_mean``). A name the signature does not read is refused
        (unless ``extract`` names the axes).
    hints : mapping of str to str
        Axis → what a size-1 value means for this op, in words. The finding for that axis
        at 1 says it in place of the rule's own sentence: ``size1-axis``, and for a reduced
        axis ``size1-reduction`` or ``single-key-attention``, for the ``k`` of a top-k
        ``select-one``. A hint on a ``fixed`` axis is refused: such an axis gives no
        finding.
    align_right : bool
        The op's API lets leading dims go (torch's SDPA takes ``(N, ..., L, E)``): a tensor
        of lower rank than declared names its dims from the right (``[h, s, d]`` against
        ``(b, h, s, d)``). False (the default) makes no such guess.
    extract : callable, optional
        ``extract(call) -> [AxisValue, ...]`` replacing the declarative mapping.
    """

    name: str = attrs.field(validator=text())
    ops: tuple[str, ...] = attrs.field(converter=_names, validator=items_of(str, "op names"))
    excludes: tuple[str, ...] = attrs.field(
        default=(), converter=_names, validator=items_of(str, "op names")
    )
    family: str = attrs.field(default="any", converter=_family, validator=text(nonempty=True))
    tensors: tuple[tuple[str, tuple[str | None, ...]], ...] = attrs.field(
        default=(), converter=_pairs, validator=_pairs_of("axis names (or None)", _is_dims)
    )
    aliases: tuple[tuple[str, tuple[str, ...]], ...] = attrs.field(
        default=(), converter=_pairs, validator=_pairs_of("a tuple of names", _is_names)
    )
    values: tuple[tuple[str, str], ...] = attrs.field(
        default=(), converter=_pairs, validator=_pairs_of("an axis name", _is_str)
    )
    scalars: tuple[tuple[str, str], ...] = attrs.field(
        default=(), converter=_pairs, validator=_pairs_of("an axis name", _is_str)
    )
    dim_axes: tuple[DimAxis, ...] = attrs.field(
        default=(), converter=_dims, validator=items_of(DimAxis, "DimAxis")
    )
    reduced: tuple[str, ...] = attrs.field(
        default=(), converter=_names, validator=items_of(str, "axis names")
    )
    fixed: tuple[str, ...] = attrs.field(
        default=(), converter=_names, validator=items_of(str, "axis names")
    )
    select: tuple[str, str] | None = attrs.field(default=None, converter=_select)
    lengths: str | None = attrs.field(default=None, validator=text(optional=True, nonempty=True))
    padded: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=_padded)
    hints: tuple[tuple[str, str], ...] = attrs.field(
        default=(), converter=_pairs, validator=_pairs_of("a sentence", _is_str)
    )
    align_right: bool = attrs.field(default=False, validator=instance_of(bool, "True or False"))
    extract: Extractor | None = attrs.field(
        default=None, eq=False, validator=is_callable(optional=True)
    )

    def __attrs_post_init__(self) -> None:
        if not self.name.strip():
            raise InputError(expected("a non-empty signature name", repr(self.name)))
        if not self.ops:
            raise InputError(expected("at least one op name", self.ops, where=self.name))
        # A fixed axis never gives a finding: its hint would be dropped without a word.
        on_fixed = [axis for axis, _ in self.hints if axis in self.fixed]
        if on_fixed:
            raise InputError(
                expected(
                    "hints only for axes that are not fixed (a fixed axis gives no finding)",
                    and_list(on_fixed),
                    where=f"{self.name}.hints",
                )
            )

        # A pair naming an axis the signature never reads gives no fill and no finding,
        # without a word: refused here. An ``extract`` names its axes itself.
        if self.extract is None and self.padded:
            known = declared_axes(self)
            unknown = [name for pair in self.padded for name in pair if name not in known]
            if unknown:
                raise InputError(
                    expected(
                        "padded pairs of axes the signature reads (a dim or scalar axis, "
                        "then a dim, scalar or values axis: <base>, <base>_min, <base>_mean)",
                        and_list(unknown),
                        where=f"{self.name}.padded",
                    )
                )

    def matches(self, op: str) -> bool:
        """Whether this signature applies to an op.

        Parameters
        ----------
        op : str
            The op name as recorded: ``"aten::softmax"``, or the qualified name of a
            recorded Python function (``"Attention.mla_decode"``). It is compared without
            case, in full, without its ``namespace::`` prefix and, for a qualified name,
            by its last part, against each of :attr:`ops` (wildcards allowed there).

        Returns
        -------
        bool
            Whether one of the signature's op patterns matches and none of its
            :attr:`excludes` matches the op's own name (its last part).
        """
        full = op.strip().lower()
        short = full.rsplit("::", 1)[-1]
        # A recorded Python function is named by its qualname (``Attention.mla_decode``,
        # ``make.<locals>.mla_decode``): its last part is the op.
        tail = short.rsplit(".", 1)[-1] if "::" not in full else short
        # Only the op's own name is excluded: a class name says nothing about the op.
        if _matches_any(self.excludes, (tail,)):
            return False
        return _matches_any(self.ops, (short, full, tail))

    def names_of(self, arg: str) -> tuple[str, ...]:
        """The names an argument goes by.

        Parameters
        ----------
        arg : str
            The argument's canonical name (``"q"``).

        Returns
        -------
        tuple of str
            ``arg`` followed by its aliases (``("q", "query")``); ``(arg,)`` when it has
            none.
        """
        for key, names in self.aliases:
            if key == arg:
                return (arg, *names)
        return (arg,)


def declared_axes(signature: OpSignature) -> frozenset[str]:
    """The axis names the declarative mapping of ``signature`` reads: the dims of its
    tensors, its scalars and ``dim`` axes (with their rows), and for each values base
    ``<base>``, ``<base>_min`` and ``<base>_mean``.

    Parameters
    ----------
    signature : OpSignature
        The signature.

    Returns
    -------
    frozenset of str
        The names; those of an ``extract`` are not known before it runs.
    """
    names = {axis for _, dims in signature.tensors for axis in dims if axis is not None}
    names.update(axis for _, axis in signature.scalars)
    for dim in signature.dim_axes:
        names.update(n for n in (dim.name, dim.rows) if n is not None)
    for _, base in signature.values:
        names.update((base, f"{base}_min", f"{base}_mean"))
    return frozenset(names)


def is_cumulative_offsets(name: str) -> bool:
    """Whether an argument named ``name`` holds the cumulative offsets of packed sequences
    (``cu_seqlens``, ``cu_seqlens_q``, FlashInfer's ``kv_indptr``, vLLM's
    ``query_start_loc``), not their lengths."""
    return name in _CUMULATIVE_OFFSETS or name.endswith("_indptr")


def _matches_any(patterns: Iterable[str], names: Sequence[str]) -> bool:
    """Whether one of ``patterns`` (op names, ``*``/``?``/``[`` wildcards allowed) matches
    one of ``names`` (lower-case), without case."""
    for pattern in patterns:
        pat = pattern.lower()
        if any(ch in pat for ch in "*?["):
            if any(fnmatch.fnmatchcase(name, pat) for name in names):
                return True
        elif pat in names:
            return True
    return False


def _excludes_name(signature: OpSignature, op: str) -> bool:
    """Whether ``signature`` excludes an op named ``op`` (lower-case, no namespace or
    class) by one of its :attr:`OpSignature.excludes` patterns."""
    return _matches_any(signature.excludes, (op,))


# --------------------------------------------------------------------------------------
# Axis extraction


def _find(call: Call, sig: OpSignature, arg: str) -> Any:
    for name in sig.names_of(arg):
        found = call.arg(name)
        if found is not None:
            return found
    return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# Integer scalars that are not sizes: dims, and unnamed positional inputs of profiler traces
# (mostly dims and flags, e.g. aten::transpose(self, 0, 1)).
_NOT_SIZES = ("dim", "axis", "dims", "dim0", "dim1", "dtype", "layout", "device")
_POSITIONAL = re.compile(r"arg\d+$")


# How an axis of a plan reads its value from a call of the plan's layout: a dim of a
# tensor, the product of some of its dims, a statistic of its values summary, an integer
# scalar, or a constant.
_DIM, _PRODUCT, _STAT, _SCALAR, _CONSTANT = range(5)

# One axis of a plan: (name, source, kind, how, argument position, what): ``what`` is the
# dim, the dims, the statistic's name or the constant.
_Step = tuple[str, str, str, int, int, Any]
# One axis of one call: (name, value, source, kind), what AxisValue holds, unchecked.
AxisRow = tuple[str, float, str, str]


def _raw_steps(call: Call, consumed: set[str]) -> list[_Step]:
    """Axes named after their argument (``x[1]``, ``lens.max``, ``k``), but for the
    ``consumed`` arguments."""
    out: list[_Step] = []
    for position, item in enumerate(call.args):
        if item.name in consumed:
            continue
        if isinstance(item, TensorArg):
            for i in range(len(item.shape)):
                out.append(
                    (f"{item.name}[{i}]", f"{item.name}.shape[{i}]", "shape", _DIM, position, i)
                )
            if item.values is not None:
                for stat in ("max", "min", "mean"):
                    out.append(
                        (
                            f"{item.name}.{stat}",
                            f"{item.name}.{stat}()",
                            "values",
                            _STAT,
                            position,
                            stat,
                        )
                    )
        elif (
            _is_int(item.value) and item.name not in _NOT_SIZES and not _POSITIONAL.match(item.name)
        ):
            out.append((item.name, item.name, "scalar", _SCALAR, position, None))
    return out


# The torch ops (as _semantic_op_name names them) whose dim is one int: torch.softmax(x,
# [0, 1]) raises, where a sum reduces both dims. Read as a reduction over both, such a call
# would be a size-1 softmax wherever one of the dims is 1.
_ONE_DIM_OPS = frozenset(
    ("softmax", "log_softmax", "topk", "argmax", "argmin", "max", "min", "prod")
)


def _dims_of(
    item: ScalarArg | None, default: int | None, rank: int, *, op: str = ""
) -> list[int] | str:
    """The dims (in ``[0, rank)``, sorted) a call's ``dim`` argument ``item`` picks, or why
    torch would refuse it, in words: a dim out of range, a dim given twice (``[1, 1]``, or
    ``[1, -1]`` of a 2-d tensor), a list of dims to an ``op`` that takes one int."""
    raw: object = None if item is None else item.value
    if raw is None:
        raw = default
    if raw is None:
        return list(range(rank))
    if isinstance(raw, tuple) and len(raw) != 1 and _semantic_op_name(op) in _ONE_DIM_OPS:
        # A one-entry list names its dim unmistakably; more or none names no one dim.
        name = _semantic_op_name(op)
        return f"Expected one int dim (torch's {name} takes no list of dims), got {list(raw)}"
    values = list(raw) if isinstance(raw, tuple) else [raw]
    if not values:  # dim=[] reduces every dimension in torch
        return list(range(rank))
    dims: list[int] = []
    for value in values:
        if not _is_int(value) or not -max(rank, 1) <= value < max(rank, 1):  # type: ignore[operator]
            return f"Expected a dim in [-{rank}, {rank}), got {raw!r}"
        dims.append(value % rank if rank else 0)  # type: ignore[operator]
    if len(set(dims)) < len(dims):
        # torch refuses it ("dim 1 appears multiple times in the list of dims"); read as
        # one dim, the call would be a reduction torch never ran.
        twice = sorted({d for d in dims if dims.count(d) > 1})
        return (
            f"Expected each dim once, got {values} (dim {and_list([str(d) for d in twice])} "
            "given more than once, which torch refuses)"
        )
    return sorted(dims)


def values_axis_names(
    sig: OpSignature | None, arg: str, present: Collection[str] | None = None
) -> tuple[str, str, str, str]:
    """Axis names of the (max, min, mean, equal) summaries of tensor ``arg`` under ``sig``.

    A lengths tensor named by the signature gives ``seqlen``, ``seqlen_min``,
    ``seqlen_mean``, ``seqlen_uniform``; any other gives ``arg.max``, ``arg.min``,
    ``arg.mean``, ``arg.uniform``. Where ``present`` (the names of a call's arguments) is
    given, only the first of a values argument's names the call passes gives the length
    axis, as :func:`extract_axes` reads it: a call with both ``kv_lens`` and
    ``context_lens`` reads ``kv_len`` from ``kv_lens``, and ``context_lens`` keeps its own
    name (each call counted once in ``kv_len``).
    """
    if sig is not None:
        for key, base in sig.values:
            names = sig.names_of(key)
            if arg in names and (
                present is None or next((n for n in names if n in present), arg) == arg
            ):
                return base, f"{base}_min", f"{base}_mean", f"{base}_uniform"
    return f"{arg}.max", f"{arg}.min", f"{arg}.mean", f"{arg}.uniform"


@attrs.frozen(kw_only=True)
class LengthBound:
    """An integer scalar a signature reads for a length axis that a lengths tensor's values
    give too: ``max_seqlen`` (or ``seqlen``) beside ``cache_seqlens``, both ``seqlen`` of
    ``mla_decode``.

    The scalar is a bound of the lengths, the tensor's values the lengths themselves: where
    a call carries a values summary of the tensor, the axis is its max, and a scalar below
    that max contradicts the call (:func:`bound_note`); a larger one is a bound, as a padded
    or preallocated length is. Where no summary was recorded, the scalar is the axis.

    Parameters
    ----------
    axis : str
        The length axis (``"seqlen"``).
    bound : str
        The scalar argument, as recorded (``"max_seqlen"``).
    bound_at : int
        Its position among the call's arguments.
    lengths : str
        The lengths tensor, as recorded (``"cache_seqlens"``).
    lengths_at : int
        Its position among the call's arguments.
    axis_step : int or None
        The position of the axis among the plan's steps where a scalar gives it (the call
        carries no values summary of the lengths); None where something else gives it.
    """

    axis: str
    bound: str
    bound_at: int
    lengths: str
    lengths_at: int
    axis_step: int | None


def bound_note(sig_name: str, bound: LengthBound, bound_value: float, longest: float) -> str | None:
    """Why a call's length bound contradicts the lengths it carries; None when it does not.

    Parameters
    ----------
    sig_name : str
        The signature's name (``"mla_decode"``).
    bound : LengthBound
        The scalar and the lengths tensor compared.
    bound_value : float
        The scalar's value in the call (``max_seqlen = 100``).
    longest : float
        The largest length the call carries (``cache_seqlens.max() = 400``).

    Returns
    -------
    str or None
        ``signature mla_decode: Expected max_seqlen >= cache_seqlens.max(), got max_seqlen
        = 100 and cache_seqlens.max() = 400; axis seqlen is read from
        cache_seqlens.max()`` where ``bound_value < longest``; None otherwise, a bound above
        the lengths included.
    """
    if bound_value >= longest:
        return None
    lengths = f"{bound.lengths}.max()"
    mismatch = expected(
        f"{bound.bound} >= {lengths}",
        f"{bound.bound} = {exact_number_text(bound_value)} "
        f"and {lengths} = {exact_number_text(longest)}",
    )
    return f"signature {sig_name}: {mismatch}; axis {bound.axis} is read from {lengths}"


def _joined(*problems: str | None) -> str | None:
    """The problems that are not None, joined by ``; ``; None when there are none."""
    present = [problem for problem in problems if problem is not None]
    return "; ".join(present) if present else None


class AxisPlan:
    """How the axes of every call of one layout are read: the same arguments in the same
    order, tensors of the same ranks, with or without a values summary, the same scalars
    (an integer the signature does not read as a dim counts by its kind only). The reason
    the signature did not fit, if any, is the same for all of them unless ``shared`` is
    False: it names the call's sizes or values, and the plan serves that call only.

    ``agree`` holds the pairs of sizes that name one axis (``b`` of ``q.shape[0]`` and of
    ``block_table.shape[0]``): the plan reads a call of its layout only where
    :meth:`agrees` says each pair is equal. ``bounds`` holds the scalars read for a length
    axis beside the lengths tensor that gives it (:class:`LengthBound`): they are compared
    per call, by :meth:`contradiction`, as the values differ between calls of a layout."""

    __slots__ = (
        "_dim_pairs",
        "_product_steps",
        "agree",
        "bounds",
        "names",
        "note",
        "problem",
        "shared",
        "sig_name",
        "steps",
    )

    def __init__(
        self,
        steps: list[_Step],
        problem: str | None,
        *,
        shared: bool = True,
        agree: tuple[tuple[_Step, _Step], ...] = (),
        bounds: tuple[LengthBound, ...] = (),
        sig_name: str = "",
        note: str | None = None,
    ) -> None:
        self.steps = steps
        self.problem = problem
        # What the signature read that a reader may not expect, though it fitted (kv_len
        # from kv_lens beside context_lens): a note, no misfit.
        self.note = note
        self.shared = shared
        self.agree = agree
        self.bounds = bounds
        self.sig_name = sig_name
        # (name, source, kind) per axis, in order.
        self.names = [(name, source, kind) for name, source, kind, *_ in steps]
        # Each call of the layout is checked: pairs of plain dims as (position, dim,
        # position, dim), read without a call of _values; pairs with a product of dims as
        # their steps, flat, for _values.
        plain = [(a, b) for a, b in agree if a[3] == _DIM and b[3] == _DIM]
        self._dim_pairs = tuple((a[4], a[5], b[4], b[5]) for a, b in plain)
        self._product_steps = [step for pair in agree if pair not in plain for step in pair]

    def rows(self, call: Call) -> list[AxisRow]:
        """``(name, value, source, kind)`` per axis of ``call``, a call of this layout."""
        return _rows(self.steps, call)

    def values(self, call: Call) -> list[Any]:
        """The value of each axis of ``call``, in the order of :attr:`names`."""
        return _values(self.steps, call)

    def agrees(self, call: Call) -> bool:
        """Whether each pair of sizes in :attr:`agree` is equal in ``call``."""
        args = call.args
        for first, first_dim, other, other_dim in self._dim_pairs:
            if args[first].shape[first_dim] != args[other].shape[other_dim]:  # type: ignore[union-attr]
                return False
        if not self._product_steps:
            return True
        sizes = _values(self._product_steps, call)
        return sizes[0::2] == sizes[1::2]

    def contradiction(self, call: Call) -> str | None:
        """Where ``call`` carries a values summary of a lengths tensor, which of its length
        bounds are below the longest length (:func:`bound_note`), joined by ``; ``; None
        when none is, or the call carries no such summary (a profile compares the bounds
        of a group of calls with the histograms of their summaries instead)."""
        notes: list[str | None] = []
        for bound in self.bounds:
            summary = call.args[bound.lengths_at].values  # type: ignore[union-attr]
            if summary is not None:
                value = call.args[bound.bound_at].value  # type: ignore[union-attr]
                notes.append(bound_note(self.sig_name, bound, value, summary.max))  # type: ignore[arg-type]
        return _joined(*notes)


def _plan(call: Call, sig: OpSignature | None) -> AxisPlan:
    """The plan of ``call``'s layout under a declarative signature (or none)."""
    if sig is None:
        return AxisPlan(_raw_steps(call, set()), None)
    positions = {item.name: i for i, item in enumerate(call.args)}
    found: dict[str, _Step] = {}
    consumed: set[str] = set()
    # Tensors of lower rank than declared, named by their own dims, in words.
    unaligned: list[str] = []
    # Other names of a values argument the call passes too, in words.
    shadowed: list[str] = []
    # (first size read for an axis, another size read for it): they must be equal.
    agree: list[tuple[_Step, _Step]] = []
    # Length axis -> the lengths tensor whose values give it, summary recorded or not.
    lengths_of: dict[str, TensorArg] = {}
    # (axis, scalar) per integer scalar read for a length axis beside its lengths tensor.
    bounded: list[tuple[str, ScalarArg]] = []
    # Beside cumulative offsets a tensor of lower rank is packed ([tokens, h, d]), not one
    # whose leading dims were left out: read from the right, tokens would be heads.
    offsets = next((a.name for a in call.args if a.name in _CUMULATIVE_OFFSETS), None)
    align_right = sig.align_right and offsets is None

    def add(name: str, source: str, kind: str, how: int, what: Any, item: Any) -> None:
        step = (name, source, kind, how, positions[item.name], what)
        first = found.get(name)
        if first is None:
            found[name] = step
        elif _is_size(first) and _is_size(step) and first[4:] != step[4:]:
            # One axis, two sizes: q.shape[0] and block_table.shape[0] are both b.
            agree.append((first, step))

    for arg, dims in sig.tensors:
        item = _find(call, sig, arg)
        if item is None:
            continue
        if not isinstance(item, TensorArg):
            return _fallback(
                call,
                f"signature {sig.name}: Expected {arg} to be a tensor, got {item.render()}",
                shared=False,
            )
        if len(item.shape) > len(dims):
            return _fallback(
                call,
                f"signature {sig.name}: Expected {item.name} with at most {len(dims)} dims "
                f"({', '.join(d or '_' for d in dims)}), got {list(item.shape)}",
                shared=False,
            )
        if len(item.shape) < len(dims) and not align_right:
            # Not consumed: _raw_steps names its dims after the tensor. The rank, not the
            # sizes, in the words: one note per layout, not one per distinct shape.
            unaligned.append(_unaligned(item, dims, offsets if sig.align_right else None))
            continue
        offset = len(dims) - len(item.shape)
        for i in range(len(item.shape)):
            name = dims[offset + i]
            if name is not None:
                add(name, f"{item.name}.shape[{i}]", "shape", _DIM, i, item)
        consumed.add(item.name)
    for arg, base in sig.values:
        item = _find(call, sig, arg)
        if isinstance(item, TensorArg):
            shadowed.extend(_shadowed(call, sig, arg, item.name, base))
            consumed.add(item.name)  # a lengths tensor: its values matter, not its shape
            lengths_of.setdefault(base, item)
            if item.values is not None:
                add(base, f"{item.name}.max()", "values", _STAT, "max", item)
                add(f"{base}_min", f"{item.name}.min()", "values", _STAT, "min", item)
                add(f"{base}_mean", f"{item.name}.mean()", "values", _STAT, "mean", item)
    for spec in sig.dim_axes:
        item = _find(call, sig, spec.arg)
        if not isinstance(item, TensorArg):
            return _fallback(
                call,
                f"signature {sig.name}: Expected a tensor argument {spec.arg}, got "
                f"{'nothing' if item is None else item.render()}",
                shared=item is None,
            )
        dim_item = _find(call, sig, spec.dim_arg)
        if dim_item is not None and not isinstance(dim_item, ScalarArg):
            return _fallback(
                call,
                f"signature {sig.name}: Expected {spec.dim_arg} to be an int or list, got a tensor",
            )
        rank = len(item.shape)
        default = spec.default_for(item.name, rank)
        chosen = _dims_of(dim_item, default, rank, op=call.op)
        if isinstance(chosen, str):
            return _fallback(call, f"signature {sig.name}: {spec.dim_arg}: {chosen}")
        if dim_item is not None and dim_item.value is not None:
            source = f"{item.name}.shape[{dim_item.name}]"
        elif default is None:
            source = f"{item.name}.numel()"
        else:
            source = f"{item.name}.shape[{default}]"
        # A 0-d tensor is one element: its size along any dim is 1.
        if rank:
            add(spec.name, source, "shape", *_product(chosen), item)
        else:
            add(spec.name, source, "shape", _CONSTANT, 1, item)
        if spec.rows is not None:
            # The sizes of the dims not reduced: numel / size, and still the row count
            # where the reduced axis is empty (x of [4, 0] has 4 rows, not 0).
            others = [d for d in range(rank) if d not in chosen]
            add(spec.rows, f"{item.name}.numel() / {spec.name}", "derived", *_product(others), item)
        consumed.add(item.name)
        if dim_item is not None:
            consumed.add(dim_item.name)
    for arg, axis in sig.scalars:
        item = _find(call, sig, arg)
        if isinstance(item, ScalarArg) and _is_int(item.value):
            add(axis, item.name, "scalar", _SCALAR, None, item)
            consumed.add(item.name)
            if axis in lengths_of:
                bounded.append((axis, item))
    clash = _disagreement(agree, call)
    if clash is not None:
        # The sizes, not the layout, are at fault: the plan serves this call only.
        return _fallback(call, f"signature {sig.name}: {clash}", shared=False)
    taken = set(found)
    raw = [step for step in _raw_steps(call, consumed) if step[0] not in taken]
    problem = f"signature {sig.name}: " + "; ".join(unaligned) if unaligned else None
    bounds = _length_bounds(bounded, lengths_of, found, positions)
    return AxisPlan(
        [*found.values(), *raw],
        problem,
        agree=tuple(agree),
        bounds=bounds,
        sig_name=sig.name,
        note=f"signature {sig.name}: " + "; ".join(shadowed) if shadowed else None,
    )


def _shadowed(call: Call, sig: OpSignature, arg: str, taken: str, base: str) -> list[str]:
    """The note, if any, on the other names of values argument ``arg`` that ``call``
    passes beside ``taken``, the one read for axis ``base``: each call gives an axis one
    value, so ``kv_len`` is read from ``kv_lens`` and ``context_lens`` keeps its own name
    (``context_lens.max``). In a prefix prefill, ``context_lens`` are the cached tokens
    before the new chunk, not the key length: two names are seldom one length."""
    others = [
        name
        for name in sig.names_of(arg)
        if name != taken and isinstance(call.arg(name), TensorArg)
    ]
    if not others:
        return []
    return [
        f"{base} is read from {taken}, the first of its names the call passes; "
        f"{and_list(others)} {'keeps its' if len(others) == 1 else 'keep their'} own "
        "name, so that each call counts once"
    ]


def _length_bounds(
    bounded: list[tuple[str, ScalarArg]],
    lengths_of: dict[str, TensorArg],
    found: dict[str, _Step],
    positions: dict[str, int],
) -> tuple[LengthBound, ...]:
    """The :class:`LengthBound` of each scalar read for a length axis beside its lengths
    tensor.

    Parameters
    ----------
    bounded : list of (str, ScalarArg)
        The length axis and the scalar read for it.
    lengths_of : dict of str to TensorArg
        Length axis -> the lengths tensor of the call whose values give it.
    found : dict of str to step
        The plan's named axes, in the order of its steps.
    positions : dict of str to int
        Argument name -> position in the call.

    Returns
    -------
    tuple of LengthBound
        One per scalar, in the order of the signature's scalars.
    """
    order = {name: at for at, name in enumerate(found)}
    out = []
    for axis, scalar in bounded:
        step = found[axis]
        lengths = lengths_of[axis]
        out.append(
            LengthBound(
                axis=axis,
                bound=scalar.name,
                bound_at=positions[scalar.name],
                lengths=lengths.name,
                lengths_at=positions[lengths.name],
                # A scalar gives the axis where no values summary of the lengths came first.
                axis_step=order[axis] if step[3] == _SCALAR else None,
            )
        )
    return tuple(out)


def _is_size(step: _Step) -> bool:
    """Whether a plan step reads a size of a tensor (a dim, or a product of dims)."""
    return step[2] == "shape" and step[3] in (_DIM, _PRODUCT)


def _disagreement(agree: list[tuple[_Step, _Step]], call: Call) -> str | None:
    """Which axes ``call`` gives two sizes, in words; None when every pair is equal.

    Parameters
    ----------
    agree : list of (step, step)
        The first size read for an axis and another size read for the same axis.
    call : Call
        A call of the layout the steps were made for.

    Returns
    -------
    str or None
        ``Expected axis b the same in q.shape[0] and block_table.shape[0], got 32 and
        16`` per pair that differs, joined by ``; ``.
    """
    if not agree:
        return None
    sizes = _values([step for pair in agree for step in pair], call)
    clashes = [
        expected(
            f"axis {first[0]} the same in {first[1]} and {other[1]}",
            f"{sizes[2 * at]} and {sizes[2 * at + 1]}",
        )
        for at, (first, other) in enumerate(agree)
        if sizes[2 * at] != sizes[2 * at + 1]
    ]
    return "; ".join(clashes) if clashes else None


def _product(dims: list[int]) -> tuple[int, Any]:
    """How a plan reads the product of a tensor's ``dims``: one dim as that dim."""
    return (_DIM, dims[0]) if len(dims) == 1 else (_PRODUCT, tuple(dims))


def _fallback(call: Call, reason: str, *, shared: bool = True) -> AxisPlan:
    """Every axis of ``call`` named after its argument, and why the signature was dropped."""
    return AxisPlan(
        _raw_steps(call, set()), f"{reason}; its axes keep their argument names", shared=shared
    )


def _unaligned(item: TensorArg, dims: tuple[str | None, ...], offsets: str | None = None) -> str:
    """Why a tensor of lower rank than its signature declares keeps its own axis names;
    ``offsets`` names the cumulative offsets that make it a packed varlen tensor."""
    rank = len(item.shape)
    own = ", ".join(f"{item.name}[{i}]" for i in range(rank)) or "none"
    why = (
        "which of them it lacks is not declared"
        if offsets is None
        else f"beside {offsets} (cumulative offsets) it is packed, its first dim the tokens "
        "of all sequences"
    )
    return (
        f"Expected {item.name} with {len(dims)} dims ({', '.join(d or '_' for d in dims)}), "
        f"got {rank}; {why}, so its axes keep their argument names ({own}): register a "
        f"signature naming its {rank} dims"
    )


# The largest value an axis row holds unchecked: any integer up to it is a float exactly.
_EXACT = 2**53


def _values(steps: list[_Step], call: Call) -> list[Any]:
    """The value of each step in ``call``, a call of the steps' layout."""
    args = call.args
    out: list[Any] = []
    for name, source, kind, how, position, what in steps:
        if how == _DIM:
            out.append(args[position].shape[what])  # type: ignore[union-attr]
        elif how == _PRODUCT:
            shape = args[position].shape  # type: ignore[union-attr]
            value = math.prod([shape[d] for d in what])
            if value > _EXACT:  # refused as AxisValue refuses it, beyond the float range
                AxisValue(name=name, value=value, source=source, kind=kind)
            out.append(value)
        elif how == _STAT:
            out.append(getattr(args[position].values, what))  # type: ignore[union-attr]
        elif how == _SCALAR:
            out.append(float(args[position].value))  # type: ignore[union-attr, arg-type]
        else:
            out.append(what)
    return out


def _rows(steps: list[_Step], call: Call) -> list[AxisRow]:
    """``(name, value, source, kind)`` of each step in ``call``."""
    return [
        (name, value, source, kind)
        for (name, source, kind, *_), value in zip(steps, _values(steps, call), strict=True)
    ]


def _axis_values(steps: list[_Step], call: Call) -> list[AxisValue]:
    return [
        AxisValue(name=name, value=value, source=source, kind=kind)
        for name, value, source, kind in _rows(steps, call)
    ]


def _typed(value: object) -> object:
    """A scalar's value as a key, told apart by type: ``True == 1 == 1.0`` as values."""
    if isinstance(value, tuple):
        return (tuple, tuple(v.__class__ for v in value), value)
    return (value.__class__, value)


def _layout(call: Call, dims: frozenset[str]) -> tuple[object, ...]:
    """The key of ``call``'s plan: what a plan reads of a call other than its sizes. An
    integer scalar counts by its kind only (a size, read per call), unless it is named in
    ``dims``, the arguments a signature reads dims from."""
    key: list[tuple[object, ...]] = []
    for a in call.args:
        if isinstance(a, TensorArg):
            key.append((a.name, len(a.shape), a.values is not None))
        else:
            key.append(
                (a.name, int if _is_int(a.value) and a.name not in dims else _typed(a.value))
            )
    return tuple(key)


class AxisReader:
    """Read the axes of many calls of one op under one signature, one plan per layout.

    A trace whose every call has its own shape holds few layouts (the same arguments of
    the same ranks): the signature is walked once per layout, not once per call.

    Parameters
    ----------
    sig : OpSignature or None
        The op's signature; None names every axis after its argument.
    """

    # Layouts remembered; past this the plans start over (a trace of ever new layouts
    # costs time, not memory).
    _LIMIT = 4096

    def __init__(self, sig: OpSignature | None) -> None:
        self.sig = sig
        self._plans: dict[tuple[object, ...], AxisPlan] = {}
        self._dims = frozenset(
            name
            for spec in (() if sig is None else sig.dim_axes)
            for name in sig.names_of(spec.dim_arg)  # type: ignore[union-attr]
        )

    def plan(self, call: Call) -> AxisPlan | None:
        """The plan that reads ``call``'s axes.

        Parameters
        ----------
        call : Call
            A call of this reader's op.

        Returns
        -------
        AxisPlan or None
            The plan, shared by the calls of its layout unless its reason names the call's
            sizes; None under a signature with its own ``extract``, read by :meth:`rows`
            only.

        Raises
        ------
        InputError
            Where ``extract_axes`` raises (an axis name a signature leaves empty).
        """
        sig = self.sig
        if sig is not None and sig.extract is not None:
            return None
        key = _layout(call, self._dims)
        plan = self._plans.get(key)
        if plan is not None and not plan.agrees(call):
            # The layout's plan names one axis by two sizes that differ in this call: the
            # call gets a plan of its own, which says so.
            plan = None
        if plan is None:
            plan = _plan(call, sig)
            _axis_values(plan.steps, call)  # names, sources and kinds checked once per plan
            if plan.shared:
                if len(self._plans) >= self._LIMIT:
                    self._plans.clear()
                self._plans[key] = plan
        return plan

    def rows(self, call: Call) -> tuple[list[AxisRow], str | None]:
        """The axes of ``call`` as ``extract_axes`` gives them, as plain tuples.

        Returns
        -------
        rows : list of (str, float, str, str)
            ``(name, value, source, kind)`` per axis, in ``extract_axes``'s order.
        problem : str or None
            Why the signature did not fit ``call``, or which of its length bounds the
            lengths it carries contradict, as ``extract_axes`` says it.

        Raises
        ------
        InputError
            Where ``extract_axes`` raises (an axis name a signature leaves empty).
        """
        plan = self.plan(call)
        if plan is None:
            axes, problem = extract_axes(call, self.sig)
            return [(a.name, a.value, a.source, a.kind) for a in axes], problem
        return plan.rows(call), _joined(plan.problem, plan.contradiction(call))


def extract_axes(call: Call, sig: OpSignature | None) -> tuple[list[AxisValue], str | None]:
    """Return the axes of ``call`` under ``sig``, and why ``sig`` did not fit (or None).

    When the signature does not fit the call (a tensor of higher rank than declared, a
    ``dim`` out of range), the call falls back to unnamed axes and the reason is returned.
    A tensor of lower rank than declared keeps unnamed axes of its own (``q[0]``...),
    unless the signature declares ``align_right``: which declared dims it lacks is not
    known, and a guess would name a varlen ``[tokens, h, d]`` query's tokens ``s_q``. The
    other tensors keep their names, and the reason is returned. A call that gives one axis
    two sizes (``q.shape[0]`` and ``block_table.shape[0]``, both ``b``) falls back to
    unnamed axes as well: which size is the axis is not known, and either would mislead.

    A length axis a lengths tensor's values give is read from them even where an integer
    scalar is read for it too (``cache_seqlens.max()`` over ``max_seqlen``, both
    ``seqlen``): the scalar bounds the lengths. A bound below the longest length
    contradicts the call, and the reason names both (:func:`bound_note`); a larger bound
    is no reason.
    """
    if sig is not None and sig.extract is not None:
        try:
            return list(sig.extract(call)), None
        except (InputError, ValueError, TypeError, KeyError, IndexError) as error:
            fallback = _fallback(call, f"signature {sig.name}: {error}")
            return _axis_values(fallback.steps, call), fallback.problem
    plan = _plan(call, sig)
    return _axis_values(plan.steps, call), _joined(plan.problem, plan.contradiction(call))


# --------------------------------------------------------------------------------------
# Built-in signatures


def _gather_args(call: Call) -> tuple[TensorArg, TensorArg, ScalarArg | None]:
    """The input, the index and the dim argument of a gather-like call.

    A recorded torch builtin has no inspectable signature, so its arguments are named
    ``arg0``, ``arg1``...: ``torch.gather(x, 1, index)`` and ``torch.take_along_dim(x,
    index, 1)`` both give the input and the index as the first two positional tensors and
    the dim as the positional integer.
    """
    source = call.arg("self") or call.arg("input") or call.arg("x")
    index = call.arg("index") or call.arg("indices")
    dim_item = call.arg("dim")
    positional = [a for a in call.args if _POSITIONAL.match(a.name)]
    tensors = [a for a in positional if isinstance(a, TensorArg)]
    if source is None and tensors:
        source = tensors.pop(0)
    if index is None and tensors:
        index = tensors.pop(0)
    if dim_item is None:
        dim_item = next(
            (a for a in positional if isinstance(a, ScalarArg) and _is_int(a.value)), None
        )
    if not isinstance(source, TensorArg) or not isinstance(index, TensorArg):
        raise InputError(expected("tensor arguments input and index", call.label))
    return source, index, dim_item if isinstance(dim_item, ScalarArg) else None


def _wide_axes(op: str, source: TensorArg, index: TensorArg, d: int) -> list[tuple[int, int]]:
    """(axis, index size) of the axes but ``d`` along which a gather's output has more than
    one row (take_along_dim broadcasts the input and the index against each other)."""
    broadcasts = op == "take_along_dim"
    wide = []
    for axis, size in enumerate(index.shape):
        out = max(size, source.shape[axis]) if broadcasts else size
        if axis != d and out > 1:
            wide.append((axis, size))
    return wide


def _shared_index(
    op: str, source: TensorArg, index: TensorArg, d: int, k: int, n: int
) -> float | None:
    """1.0 when the record shows that one index slice serves every output row of a gather:
    k <= n and, along each other axis of more than one output row, an index stride of 0
    (an expanded index) or an index size of 1 that take_along_dim broadcasts. 0.0 when the
    record shows otherwise; None when it cannot tell (no strides recorded)."""
    broadcasts = op == "take_along_dim"
    wide = _wide_axes(op, source, index, d)
    decided = [broadcasts and size == 1 for _, size in wide]
    if index.stride is None and not (wide and all(decided)):
        return None
    if k > n or not wide:
        return 0.0  # more picks than rows, or a single output row: nothing to share
    stride = index.stride
    return float(
        all(
            (broadcasts and size == 1) or (stride is not None and stride[axis] == 0)
            for axis, size in wide
        )
    )


def _expanded(index: str) -> str:
    """The test that an index is the same along every axis but ``dim``."""
    return f"all({index}.stride(d) == 0 or {index}.shape[d] == 1 for d != dim)"


def _gather_axes(call: Call) -> list[AxisValue]:
    # gather/take_along_dim: index has the rank of the input and k = index.shape[dim];
    # index_select: index is 1-D and k = index.numel().
    source, index, dim_item = _gather_args(call)
    op = _semantic_op_name(call.op)
    raw = None if dim_item is None else dim_item.value
    rank = len(source.shape)
    if raw is None and op == "take_along_dim":
        # take_along_dim without a dim indexes the flattened input.
        n = math.prod(source.shape)
        return [
            AxisValue(
                name="k", value=math.prod(index.shape), source=f"{index.name}.numel()", kind="shape"
            ),
            AxisValue(name="n", value=n, source=f"{source.name}.numel()", kind="shape"),
            AxisValue(name="rows", value=1, source="1 (flattened)", kind="derived"),
        ]
    if raw is None:
        raw = 0
    if not isinstance(raw, int) or isinstance(raw, bool) or not -max(rank, 1) <= raw < max(rank, 1):
        raise InputError(expected(f"a dim in [-{rank}, {rank})", raw, where="dim"))
    d = raw % rank if rank else 0
    n = source.shape[d] if rank else 1
    same_rank = False
    if len(index.shape) == 1 and rank != 1:
        k, k_source = index.shape[0], f"{index.name}.numel()"
    elif len(index.shape) == rank and rank:
        k, k_source = index.shape[d], f"{index.name}.shape[dim]"
        same_rank = True
    else:
        raise InputError(expected(f"an index of rank 1 or {rank}", list(index.shape)))
    n_source = f"{source.name}.shape[dim]"
    axes = [
        AxisValue(name="k", value=k, source=k_source, kind="shape"),
        AxisValue(name="n", value=n, source=n_source, kind="shape"),
        AxisValue(
            name="rows",
            # numel / n, and the row count still where the axis is empty.
            value=math.prod(size for i, size in enumerate(source.shape) if i != d),
            source=f"{source.name}.numel() / n",
            kind="derived",
        ),
    ]
    if same_rank and op != "index_select" and _wide_axes(op, source, index, d):
        # Per-call conditions of the gather-index-select shortcut: k <= n, and whether the
        # record shows one index slice shared by every row (recorded strides of 0). An
        # output of one row (gather(x, 1, index[1, k])) already reads one index vector.
        axes.append(
            AxisValue(
                name="k_le_n", value=float(k <= n), source=f"{k_source} <= {n_source}", kind="flag"
            )
        )
        shared = _shared_index(op, source, index, d, k, n)
        if shared is not None:
            axes.append(
                AxisValue(
                    name="shared_index",
                    value=shared,
                    source=f"{k_source} <= {n_source} and {_expanded(index.name)}",
                    kind="flag",
                )
            )
    return axes


# Where each operand of a GEMM op is found, by the names torch's Python API, its ATen
# schema (the torch-trace reader) and the Recorder (``arg0``... of a builtin) give it: (A,
# B, bias). addmm takes the bias first; linear takes B as the weight ``[n, k]``.
_GEMM_OPERANDS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "addmm": (("mat1", "arg1"), ("mat2", "arg2"), ("self", "input", "bias", "arg0")),
    "linear": (("input", "x", "arg0"), ("weight", "w", "arg1"), ("bias", "b", "arg2")),
}
_GEMM_DEFAULT_OPERANDS = (
    ("a", "A", "self", "input", "mat1", "x", "arg0"),
    ("b", "B", "mat2", "other", "arg1"),
    ("bias",),
)
# addmm's scale factors: integers in a profiler trace (beta=1), never sizes.
_GEMM_SCALES = ("alpha", "beta")


def _first_arg(call: Call, names: Sequence[str]) -> TensorArg | ScalarArg | None:
    """The first argument of ``call`` recorded under one of ``names``."""
    for name in names:
        found = call.arg(name)
        if found is not None:
            return found
    return None


def _dims_text(tensor: TensorArg, dims: Sequence[int]) -> str:
    """How a kernel reads the product of some dims: ``a.shape[0] * a.shape[1]``."""
    return " * ".join(f"{tensor.name}.shape[{d}]" for d in dims)


def _dtype_bits(dtype: str) -> int | None:
    """The bits of one element of a canonical dtype (``float8_e4m3fn``: 8); None where
    the name says none (``bool``, a dtype the trace spelled its own way)."""
    found = re.match(r"u?int(\d+)$|float(\d+)|bfloat(\d+)$", dtype)
    if found is None:
        return None
    return int(next(group for group in found.groups() if group is not None))


def _packed_weights(a: TensorArg, b: TensorArg) -> str | None:
    """Why B is no plain ``[k, n]`` (or linear's ``[n, k]``) matrix of A's elements, in
    words; None where it may be one.

    An integer B beside a floating A, or a B of narrower elements than A's, holds
    quantized weights, often packed (two int4 weights a byte: ``uint8 [n, k / 2]``): read
    as a plain B, its dims give ``n`` and ``k`` the wrong sizes, or ``k`` agrees with A's
    in square calls only and the others fall back to their argument names, and one axis
    (the batch, ``m``) is split between two names. The note names the dtypes, not the
    sizes: the calls of every shape share it.
    """
    a_bits, b_bits = _dtype_bits(a.dtype), _dtype_bits(b.dtype)
    if a_bits is None or b_bits is None:
        return None
    integer_b = b.dtype.startswith(("int", "uint")) and not a.dtype.startswith(("int", "uint"))
    if not integer_b and b_bits >= a_bits:
        return None
    return (
        f"B ({b.name}) is {b.dtype} beside A ({a.name}) {a.dtype}, likely packed or "
        "quantized weights, not a plain [k, n] matrix: register a signature naming its dims"
    )


def _gemm_operands(call: Call) -> tuple[TensorArg, TensorArg, bool, list[str]]:
    """A, B, whether B is stored ``[n, k]`` (linear's weight) and the names consumed."""
    op = _semantic_op_name(call.op)
    a_names, b_names, bias_names = _GEMM_OPERANDS.get(op, _GEMM_DEFAULT_OPERANDS)
    a, b = _first_arg(call, a_names), _first_arg(call, b_names)
    if not isinstance(a, TensorArg) or not isinstance(b, TensorArg):
        wanted = f"tensor A as one of {', '.join(a_names)} and B as one of {', '.join(b_names)}"
        # The names, not the shapes: the calls of every shape then share one note.
        names = ", ".join(item.name for item in call.args) or "none"
        raise InputError(expected(wanted, f"arguments {names}"))
    packed = _packed_weights(a, b)
    if packed is not None:
        raise InputError(packed)
    transposed = op == "linear"
    if not a.shape or not b.shape or (transposed and len(b.shape) > 2):
        most = "2" if transposed else "any number of"
        raise InputError(
            expected(
                f"{a.name} with at least 1 dim and {b.name} with 1 to {most} dims",
                f"{list(a.shape)} and {list(b.shape)}",
            )
        )
    # The bias broadcasts over the output [m, n]: its sizes repeat m and n.
    bias = _first_arg(call, bias_names)
    used = [a.name, b.name, *_GEMM_SCALES, *([] if bias is None else [bias.name])]
    return a, b, transposed, used


def _gemm_axes(call: Call) -> list[AxisValue]:
    """The GEMM axes of ``C = A @ B``: ``batch``, ``m``, ``n``, ``k``.

    ``m`` is the product of A's leading dims where B is one matrix (torch folds
    ``[b, s, k] @ [k, n]`` into one GEMM of ``m = b * s``: with ``s = 1`` it is no GEMV),
    else A's second-to-last dim, with ``batch`` the product of B's leading dims (A's,
    which must equal them, where A has them). A vector A has no ``m``, a vector B no ``n``.

    Parameters
    ----------
    call : Call
        A call of ``mm``, ``matmul``, ``bmm``, ``addmm``, ``linear`` or a GEMM of the
        user's: A ``[..., m, k]`` (or ``[k]``), B ``[..., k, n]`` (or ``[k]``; linear's
        weight ``[n, k]``).

    Returns
    -------
    list of AxisValue
        ``batch`` (where B is batched), ``m``, ``n``, ``k``, then the other arguments'
        axes under their own names; the bias and addmm's ``alpha`` and ``beta`` give none.

    Raises
    ------
    InputError
        Where A or B is missing or of a rank the op does not take, or A's and B's ``k``
        or batch dims differ: which of them is the axis is not known.
    """
    a, b, transposed, used = _gemm_operands(call)
    a_rank, b_rank = len(a.shape), len(b.shape)
    batched = b_rank > 2 and not transposed
    axes: list[AxisValue] = []
    if batched:
        batch = list(b.shape[:-2])
        if a_rank > 2 and list(a.shape[:-2]) != batch:
            raise InputError(
                expected(
                    f"the batch dims the same in {a.name} and {b.name}",
                    f"{list(a.shape[:-2])} and {batch}",
                )
            )
        # Read from A where A has them, as m and k are.
        owner = a if a_rank > 2 else b
        dims = range(len(owner.shape) - 2)
        axes.append(
            AxisValue(
                name="batch", value=math.prod(batch), source=_dims_text(owner, dims), kind="shape"
            )
        )
    if a_rank > 1:
        m_dims = [a_rank - 2] if batched else list(range(a_rank - 1))
        m = math.prod(a.shape[d] for d in m_dims)
        axes.append(AxisValue(name="m", value=m, source=_dims_text(a, m_dims), kind="shape"))
    if transposed:
        k_at, n_at = (b_rank - 1, 0 if b_rank == 2 else None)
    else:
        k_at, n_at = (0, None) if b_rank == 1 else (b_rank - 2, b_rank - 1)
    if n_at is not None:
        axes.append(
            AxisValue(name="n", value=b.shape[n_at], source=f"{b.name}.shape[{n_at}]", kind="shape")
        )
    a_k, b_k = a.shape[-1], b.shape[k_at]
    a_source, b_source = f"{a.name}.shape[{a_rank - 1}]", f"{b.name}.shape[{k_at}]"
    if a_k != b_k:
        raise InputError(
            expected(f"axis k the same in {a_source} and {b_source}", f"{a_k} and {b_k}")
        )
    axes.append(AxisValue(name="k", value=a_k, source=a_source, kind="shape"))
    # The other arguments keep their own names, as under no signature.
    return axes + _axis_values(_raw_steps(call, set(used)), call)


# Where each argument of a normalization is found, by the names torch's Python API, its
# ATen schema (the torch-trace reader), the Recorder (``arg0``... of a builtin such as
# torch.layer_norm) and common launchers of one's own give it.
_NORM_INPUT = ("x", "input", "inp", "X", "x0", "hidden_states", "self", "arg0")
_NORM_BACKWARD_INPUT = ("x", "input", "inp", "X")
_NORM_GRAD = ("dy", "dY", "grad_out", "grad_output", "dout", "grad_y", "grad")
_NORM_WEIGHT = ("weight", "w", "gamma")
_NORM_SHAPE = ("normalized_shape",)
# torch.layer_norm and torch.rms_norm, builtins the Recorder wraps: (input,
# normalized_shape, weight, ...) as arg0, arg1, arg2.
_NORM_POSITIONAL = {"weight": ("arg2",), "shape": ("arg1",)}


def _norm_tensor(call: Call, names: Sequence[str]) -> TensorArg | None:
    """The first tensor argument of ``call`` recorded under one of ``names``."""
    found = _first_arg(call, names)
    return found if isinstance(found, TensorArg) else None


def _normalized_count(call: Call, x: TensorArg, backward: bool) -> tuple[int, list[str]]:
    """How many trailing dims of ``x`` a normalization normalizes, and the arguments that
    said so.

    ``normalized_shape`` where the call passes it (torch's API), else the weight's rank
    (the weight covers the normalized dims), else 1: the last dim, as every layer and RMS
    norm normalizes its trailing dims.

    Raises
    ------
    InputError
        Where ``normalized_shape`` or the weight is not ``x``'s trailing dims: which dims
        are normalized is then not known.
    """
    positional = () if backward else _NORM_POSITIONAL["shape"]
    given = _first_arg(call, (*_NORM_SHAPE, *positional))
    if isinstance(given, ScalarArg) and given.value is not None:
        raw = given.value
        dims = list(raw) if isinstance(raw, tuple) else [raw]
        if not dims or not all(_is_int(d) for d in dims):
            raise InputError(expected("normalized_shape as a list of ints", repr(raw)))
        if len(dims) > len(x.shape) or list(x.shape[len(x.shape) - len(dims) :]) != dims:
            raise InputError(
                expected(f"the last dims of {x.name} to be {given.name} {dims}", list(x.shape))
            )
        return len(dims), [given.name]
    weight = _norm_tensor(call, (*_NORM_WEIGHT, *(() if backward else _NORM_POSITIONAL["weight"])))
    if weight is not None and weight.shape:
        count = len(weight.shape)
        if count > len(x.shape) or tuple(x.shape[len(x.shape) - count :]) != weight.shape:
            raise InputError(
                expected(
                    f"{weight.name} with the last dims of {x.name}",
                    f"{list(weight.shape)} and {list(x.shape)}",
                )
            )
        return count, []
    return 1, []


def _covered_by(tensor: TensorArg, x: TensorArg, count: int) -> bool:
    """Whether every dim of ``tensor`` repeats a size of a normalization's input ``x``:
    ``x``'s shape (dy, a residual, the output), its leading dims (the per-row mean and
    rstd, with trailing ones as torch keeps them, or as one dim of rows), or its normalized
    dims (weight and bias)."""
    shape = tuple(tensor.shape)
    lead, tail = tuple(x.shape[: len(x.shape) - count]), tuple(x.shape[len(x.shape) - count :])
    per_row = (lead, lead + (1,) * count, (math.prod(lead),))
    return shape in (tuple(x.shape), tail, *per_row)


def _normalization_axes(call: Call) -> list[AxisValue]:
    """The axes of a layer or RMS norm, forward or backward: ``rows`` and ``hidden``.

    Parameters
    ----------
    call : Call
        A call of ``layer_norm``, ``rms_norm``, their ATen forms or backward, or a
        normalization of the user's: input ``x`` ``[*rows, *hidden]`` (and, backward, its
        gradient ``dy`` of the same shape), optional ``normalized_shape``, weight
        ``[*hidden]``, bias, per-row mean and rstd.

    Returns
    -------
    list of AxisValue
        ``rows`` (the product of ``x``'s leading dims; none for a 1-D ``x``) and
        ``hidden`` (the product of the normalized dims), then the axes of the arguments
        whose dims repeat neither, under their own names.

    Raises
    ------
    InputError
        Where no input is found, ``dy`` and ``x`` differ in shape, or ``normalized_shape``
        or the weight is not ``x``'s trailing dims.
    """
    backward = _is_backward(call.op)
    grad = _norm_tensor(call, _NORM_GRAD) if backward else None
    x = _norm_tensor(call, _NORM_BACKWARD_INPUT if backward else _NORM_INPUT) or grad
    if x is None:
        wanted = _NORM_BACKWARD_INPUT + _NORM_GRAD if backward else _NORM_INPUT
        raise InputError(expected(f"a tensor input as one of {', '.join(wanted)}", call.label))
    if grad is not None and grad.shape != x.shape:
        raise InputError(
            expected(
                f"{grad.name} the shape of {x.name}", f"{list(grad.shape)} and {list(x.shape)}"
            )
        )
    if not x.shape:
        raise InputError(expected(f"{x.name} with at least 1 dim", list(x.shape)))
    count, used = _normalized_count(call, x, backward)
    rank = len(x.shape)
    lead, normalized = range(rank - count), range(rank - count, rank)
    axes: list[AxisValue] = []
    if lead:
        rows = math.prod(x.shape[d] for d in lead)
        axes.append(AxisValue(name="rows", value=rows, source=_dims_text(x, lead), kind="shape"))
    hidden = math.prod(x.shape[d] for d in normalized)
    axes.append(
        AxisValue(name="hidden", value=hidden, source=_dims_text(x, normalized), kind="shape")
    )
    # Tensors whose dims repeat rows and hidden would each add the same axes again (one
    # size-1 finding per dim of dy, mean, rstd, weight): they are read through x.
    used += [a.name for a in call.args if isinstance(a, TensorArg) and _covered_by(a, x, count)]
    return axes + _axis_values(_raw_steps(call, set(used)), call)


def _is_backward(op: str) -> bool:
    """Whether an op name (as :func:`_semantic_op_name` reads it) names a backward pass."""
    name = _semantic_op_name(op)
    return "backward" in name or "bwd" in name


# What a norm fused with a quantization of its output (or with more work) adds to its
# name, before or after the pass suffix: fused_add_layer_norm_fp8, vLLM's
# rms_norm_static_fp8_quant and rms_norm_dynamic_per_token_quant, rms_norm_fwd_int8. Whole
# words only: layer_norm_stats or rms_norm_weight_grad are no normalization of rows.
_NORM_QUALIFIERS = (
    "",
    "_fp8",
    "_int8",
    "_fp4",
    "_quant",
    "_fp8_quant",
    "_int8_quant",
    "_static_fp8_quant",
    "_dynamic_fp8_quant",
    "_dynamic_per_token_quant",
    "_fused",
)


def _norm_ops(*suffixes: str) -> tuple[str, ...]:
    """Op patterns of layer and RMS norms, as torch and launchers of one's own name them:
    ``layer_norm``, ``native_layer_norm``, ``my_rmsnorm``, each with each suffix
    (``""``, ``"_fwd"``, ``"_backward"``...), and with a qualifier of
    :data:`_NORM_QUALIFIERS` before or after the suffix (``fused_add_layer_norm_fp8``,
    ``rms_norm_fwd_int8``)."""
    stems = ("layer_norm", "layernorm", "rms_norm", "rmsnorm")
    names = (
        name
        for stem in stems
        for suffix in suffixes
        for qualifier in _NORM_QUALIFIERS
        for name in (f"{stem}{qualifier}{suffix}", f"{stem}{suffix}{qualifier}")
    )
    return tuple(pattern for name in dict.fromkeys(names) for pattern in (name, f"*_{name}"))


# One row of a normalization's backward: the weight and bias gradients, sums over rows,
# are that row's products.
_ONE_ROW_BACKWARD = (
    "a single row: the weight and bias gradients need no sum over rows (the weight "
    "gradient is dy * xhat, dy * x * rstd for an RMS norm, and the bias gradient is dy), so "
    "no per-program partial sums and no second pass to add them up; dx is computed as before"
)

# The ops whose selection is a gather (an index that may repeat rows), not a top-k; see
# is_gather.
_GATHER_OPS = ("gather", "index_select", "take_along_dim")

# "arg0"/"arg1": positional arguments of functions without an inspectable signature
# (torch builtins wrapped by the Recorder).
_X_ALIASES = {"x": ("self", "input", "logits", "scores", "a", "arg0")}
# Where a recorded builtin takes its dim: torch.softmax(x, dim), torch.sum(x, dim), but
# torch.linalg.vector_norm(x, ord, dim) and torch.topk(x, k, dim). Without these, a
# positional dim is missed and the default axis read instead: softmax(x[64, 1], 0) would
# pass for a softmax over one element.
_DIM_ARG1 = {**_X_ALIASES, "dim": ("arg1",)}
_DIM_ARG2 = {**_X_ALIASES, "dim": ("arg2",)}

# What M = 1 (or N = 1) makes of a GEMM. tl.dot takes tiles of at least 16 along each
# dim, so a GEMV run through it computes 16 rows for one.
_GEMV_HINT = (
    "a matrix-vector product (GEMV, one {one}) is memory-bound, as reading {read} "
    "dominates, and tl.dot pads the single {unit} up to a tile of 16 {unit}s on tensor "
    "cores; a path without tl.dot (a broadcast multiply and a sum over k) or a split-K "
    "path that spreads k over more programs covers them"
)


def _attention_ops() -> tuple[str, ...]:
    """Op patterns of a user's own attention, named after it: ``attention`` or ``attn``,
    alone or after a prefix (``causal_attention``, ``flash_attention``, ``_attn``), each
    alone or before ``_fwd``, ``_forward``, ``_prefill`` or ``_func`` (``attn_fwd``,
    ``prefill_attention_fwd``). Nothing may follow the stem but those: ``attention_mask``
    and ``attention_mask_builder`` build a mask, they run no attention."""
    return tuple(
        pattern
        for stem in ("attention", "attn")
        for suffix in _ATTENTION_SUFFIXES
        for pattern in (f"{stem}{suffix}", f"*_{stem}{suffix}")
    )


# The suffixes a user's own attention op may end with, after ``attention`` or ``attn``.
_ATTENTION_SUFFIXES = ("", "_fwd", "_forward", "_prefill", "_func")
# Names with ``mla`` as a word part: an MLA kernel, whose query ``[b, s_q, h_q, 576]``
# and latent cache are no SDPA ``[b, h, s, d]`` tensors.
_MLA_WORD = ("mla", "mla_*", "*_mla", "*_mla_*")


def _mla_decode_attention_ops() -> tuple[str, ...]:
    """Op patterns of a user's own MLA decode attention: a name with ``mla`` and
    ``decode`` as word parts, in either order, before an attention stem as
    :func:`_attention_ops` reads it (``mla_decode_attention``, ``paged_mla_decode_attn``,
    ``decode_mla_attention_fwd``). ``mla_decode_extra`` is no attention name and gets no
    signature; an MLA name without ``decode`` (``mla_prefill_attention``) says nothing of
    its layout and gets none either."""
    return tuple(
        f"{prefix}{first}{between}{second}_{stem}{suffix}"
        for first, second in (("mla", "decode"), ("decode", "mla"))
        for prefix in ("", "*_")
        for between in ("_", "_*_")
        for stem in ("attention", "attn")
        # A decode is no prefill: mla_decode_attn_prefill says two things at once.
        for suffix in _ATTENTION_SUFFIXES
        if suffix != "_prefill"
    )


# The per-sequence lengths an attention call takes, by the names FlashAttention
# (seqused_k, cache_seqlens), FlashInfer (kv_len) and vLLM (seq_lens, query_lens) give them.
# Cumulative offsets (cu_seqlens_q, qo_indptr, query_start_loc) are no lengths: a values
# summary of them gives 0 and the total, not the length of any sequence.
_LENGTH_ALIASES = {
    "kv_lens": (
        "seqlens_k",
        "seqlens_kv",
        "kv_len",
        "kv_seqlens",
        "seq_lens",
        "seqused_k",
        "cache_seqlens",
        "context_lens",
    ),
    "seqlens_q": ("q_lens", "q_len", "q_seqlens", "query_lens", "qo_lens", "seqused_q"),
}
# The names FlashAttention (cu_seqlens_q, cu_seqlens_k), FlashInfer (qo_indptr, kv_indptr)
# and vLLM (query_start_loc, seq_start_loc) give the cumulative offsets of packed sequences.
_CUMULATIVE_OFFSETS = frozenset(
    {
        "cu_seqlens",
        "cu_seqlens_q",
        "cu_seqlens_k",
        "cu_seqlens_kv",
        "qo_indptr",
        "kv_indptr",
        "query_start_loc",
        "seq_start_loc",
    }
)
_LENGTH_VALUES = {"kv_lens": "kv_len", "seqlens_q": "q_len"}
# Work sized by the padded key and query lengths, useful work by the real ones.
_LENGTH_PADDED = (("s_kv", "kv_len_mean"), ("s_q", "q_len_mean"))


BUILTIN_SIGNATURES: tuple[OpSignature, ...] = (
    OpSignature(
        name="mla_decode",
        ops=(
            "mla_decode",
            "mla_decode_with_kvcache",
            "mla_decode_ref",
            "flash_mla_with_kvcache",
            "flash_mla",
            "mla_decode_fwd",
            # A user's own MLA decode named after attention (mla_decode_attention): tried
            # before `attention`, whose `*_attention` would read it as SDPA's [b, h, s, d].
            *_mla_decode_attention_ops(),
        ),
        family="mla-decode",
        tensors={
            "q": ("b", "s_q", "h_q", "d_qk"),
            "kv_cache": ("num_blocks", "page", "h_kv", "d"),
            "block_table": ("b", "max_blocks"),
            "cache_seqlens": ("b",),
        },
        aliases={
            "q": ("query",),
            "kv_cache": ("k_cache", "kvcache", "blocked_k", "kv"),
            "block_table": ("block_tables",),
            "cache_seqlens": ("seqlens", "cache_seqlens_k", "seqlens_k"),
        },
        values={"cache_seqlens": "seqlen"},
        scalars={
            "seqlen": "seqlen",
            "max_seqlen": "seqlen",
            "t": "seqlen",
            "dv": "d_v",
            "head_dim_v": "d_v",
        },
        reduced=("seqlen",),
        fixed=("h_kv",),
        lengths="seqlen",
        hints={
            "s_q": "one query token per sequence (plain decode): no causal mask among draft "
            "tokens and one query row per head",
            "b": "a single sequence: no batch loop; with one latent KV head, only query-head "
            "blocks and KV splits spread the work across SMs",
            "page": "page size 1: the block table is a token index; paging adds an "
            "indirection per key",
        },
    ),
    OpSignature(
        name="flash_attn",
        # Before `attention`: flash_attn_func matches its `*_attn_func` too, but
        # FlashAttention's layout is [b, s, h, d].
        ops=("flash_attn", "flash_attn_func"),
        family="attention",
        tensors={
            "q": ("b", "s_q", "h_q", "d_qk"),
            "k": ("b", "s_kv", "h_kv", "d_qk"),
            "v": ("b", "s_kv", "h_kv", "d_v"),
        },
        aliases=_LENGTH_ALIASES,
        values=_LENGTH_VALUES,
        reduced=("s_kv",),
        lengths="kv_len",
        padded=_LENGTH_PADDED,
        hints={"s_q": "one query row per head: a matrix-vector product per head (decode)"},
    ),
    OpSignature(
        name="varlen_attention",
        # Before `attention`: a name that says varlen, or a paged or chunked prefill, packs
        # the queries of all sequences into [tokens, h_q, d_qk] beside cu_seqlens_q, and
        # reads keys from a paged cache ([pages, page, h_kv, d]) or packed [tokens, h, d].
        ops=(
            *(
                f"{prefix}{kind}_{stem}{suffix}"
                for kind in ("varlen", "paged_prefill", "chunked_prefill")
                for prefix in ("", "*_")
                for stem in ("attention", "attn")
                for suffix in ("", "_fwd", "_forward", "_func")
            ),
            "flash_attn_varlen_func",
        ),
        excludes=_MLA_WORD,
        family="attention",
        tensors={
            "q": ("tokens", "h_q", "d_qk"),
            "k": ("tokens_kv", "h_kv", "d_qk"),
            "v": ("tokens_kv", "h_kv", "d_v"),
            "k_cache": ("pages", "page", "h_kv", "d_qk"),
            "v_cache": ("pages", "page", "h_kv", "d_v"),
            "block_table": ("b", "max_pages"),
        },
        aliases={
            "q": ("query",),
            "k_cache": ("key_cache",),
            "v_cache": ("value_cache",),
            "block_table": ("block_tables", "page_table"),
            **_LENGTH_ALIASES,
        },
        values=_LENGTH_VALUES,
        scalars={
            "max_seqlen_q": "max_q_len",
            "max_q_len": "max_q_len",
            "max_query_len": "max_q_len",
            "max_seqlen_k": "max_kv_len",
            "max_kv_len": "max_kv_len",
        },
        reduced=("kv_len",),
        fixed=("h_q", "h_kv", "d_qk", "d_v", "page"),
        lengths="kv_len",
        padded=(("max_q_len", "q_len_mean"), ("max_kv_len", "kv_len_mean")),
        hints={
            "q_len": "one query token per sequence in the whole call: a decode batch, a "
            "matrix-vector product per head, no causal mask within the chunk",
            "b": "a single sequence: no per-sequence offsets to look up; the query tiles "
            "and heads alone spread the work across SMs",
        },
    ),
    OpSignature(
        name="attention",
        # torch's SDPA as the Recorder and the torch-trace reader name it, and a user's own
        # attention recorded under a name that says so (causal_attention, attn_fwd).
        ops=(
            "attention",
            "scaled_dot_product_attention",
            "_scaled_dot_product_flash_attention",
            "_scaled_dot_product_flash_attention_for_cpu",
            "_scaled_dot_product_efficient_attention",
            "_scaled_dot_product_cudnn_attention",
            "sdpa",
            *_attention_ops(),
        ),
        # An MLA kernel named after attention is no SDPA: one with `decode` in its name
        # got mla_decode above, any other no signature rather than a wrong layout.
        excludes=_MLA_WORD,
        family="attention",
        tensors={
            "q": ("b", "h_q", "s_q", "d_qk"),
            "k": ("b", "h_kv", "s_kv", "d_qk"),
            "v": ("b", "h_kv", "s_kv", "d_v"),
        },
        # arg0-arg2: torch.nn.functional.scaled_dot_product_attention wrapped by the
        # Recorder, a builtin without an inspectable signature.
        aliases={
            "q": ("query", "arg0"),
            "k": ("key", "arg1"),
            "v": ("value", "arg2"),
            **_LENGTH_ALIASES,
        },
        values=_LENGTH_VALUES,
        reduced=("s_kv",),
        lengths="kv_len",
        padded=_LENGTH_PADDED,
        hints={"s_q": "one query row per head: a matrix-vector product per head (decode)"},
        # torch documents (N, ..., L, E): leading dims may be left out, the last two are
        # always the sequence and the head dim.
        align_right=True,
    ),
    OpSignature(
        name="softmax",
        ops=("softmax", "_softmax", "log_softmax", "_log_softmax", "softmax_fwd"),
        family="softmax",
        aliases=_DIM_ARG1,
        dim_axes=(
            # F.softmax(x) without a dim: torch picks it by rank, not the last axis.
            DimAxis(
                name="n", arg="x", dim_arg="dim", default_dim=-1, rows="rows", implicit_for="input"
            ),
        ),
        values={"lengths": "len"},
        reduced=("n",),
        lengths="len",
        padded=(("n", "len_mean"),),
    ),
    OpSignature(
        name="reduction",
        ops=(
            "sum",
            "mean",
            "amax",
            "amin",
            "max",
            "min",
            "prod",
            "argmax",
            "argmin",
            "logsumexp",
            "var",
            "std",
            "all",
            "any",
            "nansum",
        ),
        family="reduction",
        aliases=_DIM_ARG1,
        dim_axes=(DimAxis(name="n", arg="x", dim_arg="dim", default_dim=None, rows="rows"),),
        reduced=("n",),
    ),
    OpSignature(
        name="norm",
        ops=("norm", "linalg_vector_norm", "vector_norm"),
        family="reduction",
        aliases=_DIM_ARG2,
        dim_axes=(DimAxis(name="n", arg="x", dim_arg="dim", default_dim=None, rows="rows"),),
        reduced=("n",),
    ),
    OpSignature(
        name="topk",
        ops=("topk", "top_k", "topk_indexer"),
        family="any",
        aliases={**_DIM_ARG2, "k": ("top_k", "topk", "arg1")},
        dim_axes=(DimAxis(name="n", arg="x", dim_arg="dim", default_dim=-1, rows="rows"),),
        scalars={"k": "k"},
        select=("k", "n"),
    ),
    OpSignature(
        name="gemm",
        # torch.mm, matmul, bmm, addmm and nn.functional.linear as the Recorder and the
        # torch-trace reader name them, and a user's own GEMM recorded under a name that
        # says so (gemm_bias_gelu, fused_gemm).
        ops=("gemm", "mm", "matmul", "bmm", "addmm", "linear", "gemm_*", "*_gemm", "*_gemm_*"),
        family="gemm",
        hints={
            "m": _GEMV_HINT.format(one="row of A", read="B (the weight)", unit="row"),
            "n": _GEMV_HINT.format(one="column of B", read="A", unit="column"),
            "k": "an outer product: each output is one element of A times one of B, so a "
            "path without the k loop and without tl.dot (a broadcast multiply) covers them",
        },
        extract=_gemm_axes,
    ),
    OpSignature(
        name="normalization",
        # layer_norm, native_layer_norm, rms_norm, _fused_rms_norm (torch's names), and a
        # user's own forward pass named after them (triton_layer_norm, rms_norm_fwd).
        ops=_norm_ops("", "_fwd", "_forward"),
        family="normalization",
        reduced=("hidden",),
        extract=_normalization_axes,
    ),
    OpSignature(
        name="normalization_backward",
        ops=_norm_ops("_backward", "_bwd"),
        family="normalization",
        reduced=("hidden",),
        hints={"rows": _ONE_ROW_BACKWARD},
        extract=_normalization_axes,
    ),
    OpSignature(
        name="gather",
        ops=_GATHER_OPS,
        family="any",
        select=("k", "n"),
        extract=_gather_axes,
    ),
)

_USER: list[OpSignature] = []


def register_signature(signature: OpSignature, *, replace: bool = False) -> None:
    """Add ``signature`` to the registry; it is tried before the built-in signatures.

    Parameters
    ----------
    signature : OpSignature
        The signature; its ``name`` names it in the registry.
    replace : bool
        Replace a registered signature of the same name instead of refusing it.

    Raises
    ------
    InputError
        When ``signature`` is no OpSignature, or a signature of that name exists and
        ``replace`` is False, or ``replace`` is not a bool.
    """
    require(signature, OpSignature, "an OpSignature", where="signature")
    # Before the registry changes: "no" is truthy, and would replace a signature kept on purpose.
    require(replace, bool, "a bool", where="replace")
    existing = [s for s in _USER if s.name == signature.name]
    builtin = any(s.name == signature.name for s in BUILTIN_SIGNATURES)
    if (existing or builtin) and not replace:
        raise InputError(
            expected("a new signature name (or replace=True)", signature.name, where="signature")
        )
    for old in existing:
        _USER.remove(old)
    _USER.insert(0, signature)


def unregister_signature(name: str) -> None:
    """Remove a user signature (built-ins come back if it shadowed one).

    Parameters
    ----------
    name : str
        The signature's name; no user signature of that name is not an error.

    Raises
    ------
    InputError
        If ``name`` is not a str.
    """
    require(name, str, "a signature name (str)", where="name")
    for old in [s for s in _USER if s.name == name]:
        _USER.remove(old)


def registered_signatures() -> tuple[OpSignature, ...]:
    """All registered signatures in lookup order: user ones first, then built-ins."""
    shadowed = {s.name for s in _USER}
    return (*_USER, *(s for s in BUILTIN_SIGNATURES if s.name not in shadowed))


def base_op_name(name: object) -> str:
    """An op's name without namespace, overload and leading underscores, lower-cased:
    ``aten::_softmax.out`` -> ``softmax`` (an op and the implementation it dispatches to
    share it)."""
    return str(name).rsplit("::", 1)[-1].split(".", 1)[0].lstrip("_").lower()


def _semantic_op_name(name: object) -> str:
    """The op a call runs, for rules that read its meaning: :func:`base_op_name` of a
    namespaced op (``aten::_log_softmax.out`` -> ``log_softmax``), and of the last part of
    a recorded Python function's qualname (``Head.log_softmax``, ``TensorBase.sum``), as
    :meth:`OpSignature.matches` reads it; its class name says nothing about the op."""
    text = str(name)
    if "::" not in text:
        text = text.rsplit(".", 1)[-1]
    return base_op_name(text)


def is_gather(signature: str | None, op: str) -> bool:
    """Whether an op that selects ``k`` of ``n`` is a gather rather than a top-k.

    A gather's index picks rows and may repeat them, so it copies its input only with
    ``k == n`` (and an index of ``arange(n)``); a top-k selects everything from ``k >= n``.
    The profile adds the ``k_eq_n`` flag axis beside ``k_ge_n`` by this test, and the
    ``select-all`` rule reads one or the other by it. It reads only what a profile keeps of
    the op (its name and its signature's name), so a profile read back from JSON or
    markdown answers the same.

    Parameters
    ----------
    signature : str or None
        Name of the signature that named the op's axes (``"gather"``, ``"topk"``).
    op : str
        The op name as recorded (``"aten::index_select"``, ``"Model.take_along_dim"``).

    Returns
    -------
    bool
        True when the signature's name or the op's name (read as
        :meth:`OpSignature.matches` reads it: without namespace, overload or class name)
        contains ``gather``, ``index_select`` or ``take_along_dim``, the ops of the built-in
        ``gather`` signature. An op merely containing ``index`` is no gather:
        ``topk_indexer`` is a top-k.

    Raises
    ------
    InputError
        When ``signature`` is no str or None, or ``op`` no str.
    """
    require(signature, (str, type(None)), "a signature name (str or None)", where="signature")
    require(op, str, "an op name (str)", where="op")
    names = [_semantic_op_name(op)]
    if signature is not None:
        names.append(signature.lower())
    return any(word in name for name in names for word in _GATHER_OPS)


def builtin_op_names() -> tuple[str, ...]:
    """One op name per built-in signature, a name a call can be recorded under to get it
    (``@recorder(op="attention")``): the first of its op names without a wildcard.

    Returns
    -------
    tuple of str
        ``("mla_decode", "flash_attn", "attention", "softmax", ...)``, in lookup order.
    """
    return tuple(
        next(op for op in sig.ops if not any(ch in op for ch in "*?["))
        for sig in BUILTIN_SIGNATURES
    )


def find_signature(op: str, extra: Sequence[OpSignature] = ()) -> OpSignature | None:
    """Return the first signature that applies to ``op``: ``extra`` first, then the registry.

    Parameters
    ----------
    op : str
        An op name (``"aten::softmax"``, ``"mla_decode"``).
    extra : sequence of OpSignature
        Signatures tried before the registry.

    Raises
    ------
    InputError
        When ``op`` is no string or ``extra`` holds something else than OpSignatures.
    """
    require(op, str, "an op name (str)", where="op")
    require(extra, (tuple, list), "a sequence of OpSignature", where="extra")
    for item in extra:
        require(item, OpSignature, "a sequence of OpSignature", where="extra")
    for sig in (*extra, *registered_signatures()):
        if sig.matches(op):
            return sig
    return None
