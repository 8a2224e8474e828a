"""The workload profile: what shapes an op really sees, how often, and for how long.

:func:`profile_calls` turns calls (a :class:`~kernelopt.workload.calls.Trace` or any iterable
of :class:`~kernelopt.workload.calls.Call`) into a :class:`WorkloadProfile`: per op, the
distinct shapes with their share of calls and of time, per-axis statistics (min, median,
max, distinct values, share of calls at each value), the size-1 axes and the skew of the
shape mix. Everything is aggregated per distinct shape, so a profile of a billion calls is
as small as one of a thousand.

Shares are fractions in ``[0, 1]``. Time shares exist only for calls that carried a
duration, and are fractions of the op's timed total.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from heapq import nlargest
from itertools import accumulate
from operator import attrgetter, mul
from typing import Any

import attrs

from kernelopt._errors import InputError, expected
from kernelopt._words import count_text
from kernelopt.workload._validators import (
    as_tuple,
    count,
    finite,
    finite_float,
    instance_of,
    items_of,
    one_of,
    positive_int,
    require,
)
from kernelopt.workload._validators import share as unit
from kernelopt.workload._validators import text as string
from kernelopt.workload.calls import (
    Call,
    CallAggregator,
    CallGroup,
    TensorArg,
    Trace,
    ValueCount,
    ValuesHistogram,
    exact_number_text,
    paused_gc,
)
from kernelopt.workload.jsonl import MAX_LISTED_PROBLEMS
from kernelopt.workload.signatures import (
    AXIS_KINDS,
    AxisPlan,
    AxisReader,
    AxisRow,
    LengthBound,
    OpSignature,
    bound_note,
    builtin_op_names,
    find_signature,
    is_cumulative_offsets,
    is_gather,
    values_axis_names,
)

__all__ = [
    "AxisStat",
    "OpProfile",
    "ShapeStat",
    "Size1Axis",
    "Skew",
    "ValueShare",
    "WorkloadProfile",
    "profile_calls",
    "share",
    "size1_hints",
]

DEFAULT_MAX_SHAPES = 32
DEFAULT_MAX_VALUES = 12
# Between the sources of an axis that calls read from different arguments (``seqlen`` from
# ``cache_seqlens.max()`` where the lengths were recorded, from ``max_seqlen`` where not).
# Not " or ": one source may hold an ``or`` (a gather's test that its index is expanded).
# No expression kernelopt writes holds "; ", but an argument name may (a trace's keys are
# free text): within a source it is written "\; " (:func:`_join_sources`).
_SOURCES_JOINER = "; "
# A backslash of a source that would read as the start of an escape: before another
# backslash, before "; ", or last (the joiner follows it).
_READ_AS_ESCAPE = re.compile(r"\\(?=\\|; |\Z)")
# A joined label, token by token: an escaped backslash or "; ", the joiner, a run of plain
# text, or a lone backslash or ";" (written as it is).
_LABEL_TOKEN = re.compile(r"\\\\|\\; |; |[^\\;]+|[\\;]")
# Time is kept to the nanosecond: finer digits are noise and would make files unreadable.
_TIME_DIGITS = 3


def _join_sources(sources: Iterable[str]) -> str:
    """The label of an axis's sources: each joined by ``"; "``, most calls first.

    Parameters
    ----------
    sources : iterable of str
        The expressions, as a kernel would test them (``"a; b.shape[0]"`` of an argument
        named ``a; b``).

    Returns
    -------
    str
        The sources joined by ``"; "``, a ``"; "`` within one written ``"\\; "`` and a
        backslash that would read as an escape (before a backslash or ``"; "``, or last)
        doubled, so that :func:`_split_sources` gives them back; a source holding neither
        is written as it is (``"cache_seqlens.max(); max_seqlen"``).
    """
    return _SOURCES_JOINER.join(
        _READ_AS_ESCAPE.sub(r"\\\\", source).replace("; ", "\\; ") for source in sources
    )


def _split_sources(label: str) -> tuple[str, ...]:
    """The sources a label of :func:`_join_sources` names, in order, blank ones left out.

    Parameters
    ----------
    label : str
        An axis's :attr:`AxisStat.source`; a backslash that starts no escape is read as
        it is, as a hand-written label has it.

    Returns
    -------
    tuple of str
        Each source, its escapes undone.
    """
    sources: list[str] = []
    current: list[str] = []
    for token in _LABEL_TOKEN.findall(label):
        if token == _SOURCES_JOINER:
            sources.append("".join(current))
            current = []
        else:
            current.append(token[1:] if token in ("\\\\", "\\; ") else token)
    sources.append("".join(current))
    return tuple(source for source in sources if source.strip())


def share(part: float | None, total: float | None) -> float | None:
    """``part / total``, or None when either is unknown or the total is zero."""
    if part is None or total is None or total == 0:
        return None
    return part / total


def size1_hints(
    hints: Iterable[tuple[str, str]], axes: Iterable[AxisStat]
) -> tuple[tuple[str, str], ...]:
    """The signature's size-1 hints for the axes that are 1 in some of the calls.

    Parameters
    ----------
    hints : iterable of (str, str)
        Axis name → what a size-1 value means for the op (``OpSignature.hints``).
    axes : iterable of AxisStat
        The op's axis statistics.

    Returns
    -------
    tuple of (str, str)
        The hints whose axis was recorded and equals 1 in a share of calls above zero;
        "page size 1" is no fact about a workload whose pages are 64 tokens.
    """
    shares = {axis.name: axis.size1_share for axis in axes}
    return tuple((name, text) for name, text in hints if shares.get(name, 0.0) > 0.0)


def _line(value: str) -> str:
    """One line of text: profiles are written to markdown, one field per line or cell."""
    if not isinstance(value, str):
        return value  # refused by the field's validator, with the field's name
    return " ".join(value.split("\n")).replace("\r", " ").strip()


def _opt_line(value: str | None) -> str | None:
    return None if value is None else _line(value)


def _lines(value: Iterable[str]) -> tuple[str, ...]:
    items = as_tuple(value)
    return tuple(_line(v) for v in items) if isinstance(items, tuple) else items  # type: ignore[no-any-return]


@attrs.frozen(kw_only=True)
class ValueShare:
    """How many calls (and how much time) one value of an axis accounts for.

    Parameters
    ----------
    value : float
        The axis value.
    calls : int, optional
        Calls at this value (None when only a share is known, e.g. read from prose).
    call_share : float
        Fraction of the op's calls at this value.
    time_us : float, optional
        Summed duration of the timed calls at this value, in microseconds.
    time_share : float, optional
        Fraction of the op's timed total spent at this value.
    """

    value: float = attrs.field(validator=finite())
    calls: int | None = attrs.field(default=None, validator=count(optional=True))
    call_share: float = attrs.field(default=0.0, validator=unit())
    time_us: float | None = attrs.field(default=None, validator=finite(minimum=0.0, optional=True))
    time_share: float | None = attrs.field(default=None, validator=unit(optional=True))


def _values(value: Iterable[ValueShare]) -> tuple[ValueShare, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


_OPT_NUMBER = finite(optional=True)


@attrs.frozen(kw_only=True)
class AxisStat:
    """Statistics of one named axis over an op's calls.

    Parameters
    ----------
    name : str
        Axis name (``"s_q"``; ``"x[1]"`` for a dimension of an op without signature).
    kind : str
        ``"shape"``, ``"values"`` (from a values summary), ``"scalar"``, ``"derived"``,
        ``"flag"`` (1.0 when a per-call condition holds) or ``"ratio"``; that of the
        source named first where there are several.
    source : str
        The expression a kernel would test (``"q.shape[1]"``); empty when unknown. Where
        calls read the axis from different arguments, each of them, the one that gave the
        most calls first, joined by ``"; "`` (``"cache_seqlens.max(); max_seqlen"``), a
        ``"; "`` within one written ``"\\; "`` (``"a\\; b.shape[0]"`` of an argument named
        ``a; b``) and a backslash before it, before another or last doubled:
        :attr:`sources` splits them and undoes the escapes.
    min, median, max : float, optional
        Over calls (the median is call-weighted: half the calls are at or below it).
    mean : float, optional
        Call-weighted mean (for a ``flag`` axis: the share of calls where it holds).
    time_median : float, optional
        Time-weighted median: half the time is spent at or below this value.
    distinct : int, optional
        Number of distinct values.
    values : tuple of ValueShare
        The most frequent values, most calls first; the value 1 is always kept when seen.
    """

    name: str = attrs.field(converter=_line, validator=string())
    kind: str = attrs.field(default="shape", validator=one_of(AXIS_KINDS))
    source: str = attrs.field(default="", converter=_line, validator=string())
    min: float | None = attrs.field(default=None, validator=_OPT_NUMBER)
    median: float | None = attrs.field(default=None, validator=_OPT_NUMBER)
    max: float | None = attrs.field(default=None, validator=_OPT_NUMBER)
    mean: float | None = attrs.field(default=None, validator=_OPT_NUMBER)
    time_median: float | None = attrs.field(default=None, validator=_OPT_NUMBER)
    distinct: int | None = attrs.field(default=None, validator=count(optional=True))
    values: tuple[ValueShare, ...] = attrs.field(
        default=(), converter=_values, validator=items_of(ValueShare, "ValueShare")
    )

    def share_of(self, value: float) -> ValueShare | None:
        """The share of calls (and time) of one value of the axis.

        Parameters
        ----------
        value : float
            The axis value, compared exactly (``1`` for size-1 calls).

        Returns
        -------
        ValueShare or None
            Its share; ``None`` when the value is not listed.
        """
        for item in self.values:
            if item.value == value:
                return item
        return None

    @property
    def sources(self) -> tuple[str, ...]:
        """The expressions :attr:`source` names, the one that gave the most calls first.

        Returns
        -------
        tuple of str
            One where every call read the axis from the same argument, more where calls
            read it from different ones; empty where the source is unknown.
        """
        return _split_sources(self.source)

    @property
    def size1_share(self) -> float:
        """Fraction of the op's calls where this axis is 1."""
        item = self.share_of(1)
        return item.call_share if item is not None else 0.0

    @property
    def size1_time_share(self) -> float | None:
        """Fraction of the op's timed total spent in calls where this axis is 1."""
        item = self.share_of(1)
        if item is None:
            return 0.0 if self.values and self.values[0].time_share is not None else None
        return item.time_share


# An axis named after its argument's dim (``x[0]``), as ops without a signature name them.
_RAW_DIM = re.compile(r"(?P<arg>.+)\[(?P<dim>\d+)\]")


def one_element_args(axes: Iterable[AxisStat]) -> frozenset[str]:
    """The tensor arguments that hold one element in every call, among ``axes``' raw dims.

    A device scalar (vLLM's ``num_tokens_post_padded`` of shape ``[1]``) has each dim 1 in
    every call: no loop runs over it, so its dims are no size-1 axes to take a path
    without.

    Parameters
    ----------
    axes : iterable of AxisStat
        An op's axes.

    Returns
    -------
    frozenset of str
        The argument names (``"num_tokens_post_padded"``).
    """
    dims: dict[str, list[AxisStat]] = {}
    for axis in axes:
        raw = _RAW_DIM.fullmatch(axis.name)
        if raw is not None and axis.source == f"{raw['arg']}.shape[{raw['dim']}]":
            dims.setdefault(raw["arg"], []).append(axis)
    return frozenset(
        arg for arg, found in dims.items() if all(a.size1_share >= 1.0 - 1e-9 for a in found)
    )


def is_size_of(axis: AxisStat, args: frozenset[str]) -> bool:
    """Whether ``axis`` is a raw dim (``x[0]``) of one of the tensor arguments ``args``."""
    raw = _RAW_DIM.fullmatch(axis.name)
    return raw is not None and raw["arg"] in args and axis.kind == "shape"


def _axis_pairs(value: Iterable[Sequence[Any]]) -> tuple[tuple[str, float], ...]:
    items = as_tuple(value)
    if not isinstance(items, tuple) or not all(
        isinstance(pair, (tuple, list)) and len(pair) == 2 for pair in items
    ):
        return value  # type: ignore[return-value]  # refused by _axis_names
    return tuple((_line(name), number) for name, number in items)


def _axis_names(_instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    # Pairs of a name and a finite number: the markdown writes each as name=value.
    if not isinstance(value, tuple) or not all(
        isinstance(pair, tuple)
        and len(pair) == 2
        and isinstance(pair[0], str)
        and pair[0]
        and finite_float(pair[1]) is not None
        for pair in value
    ):
        raise InputError(
            expected("(axis name, finite number) pairs", repr(value), where=attribute.name)
        )
    # A shape names each axis once (lookups by name, and the markdown, rely on it).
    names = [name for name, _ in value]
    if len(set(names)) != len(names):
        raise InputError(expected("each axis named once", names, where=attribute.name))


@attrs.frozen(kw_only=True)
class ShapeStat:
    """One distinct call signature of an op and its share of calls and time.

    Parameters
    ----------
    args : str
        The arguments as text (``"q=[32,1,128,576]:bfloat16 k=8"``).
    axes : tuple of (str, float)
        The named axis values of this shape.
    calls : int, optional
        Number of calls (None when only a share is known).
    call_share : float
        Fraction of the op's calls.
    time_us : float, optional
        Summed duration of its timed calls, in microseconds.
    time_share : float, optional
        Fraction of the op's timed total.
    """

    args: str = attrs.field(converter=_line, validator=string())
    axes: tuple[tuple[str, float], ...] = attrs.field(
        default=(), converter=_axis_pairs, validator=_axis_names
    )
    calls: int | None = attrs.field(default=None, validator=count(optional=True))
    call_share: float = attrs.field(default=0.0, validator=unit())
    time_us: float | None = attrs.field(default=None, validator=finite(minimum=0.0, optional=True))
    time_share: float | None = attrs.field(default=None, validator=unit(optional=True))

    def axis(self, name: str) -> float | None:
        """The value of one axis in this shape.

        Parameters
        ----------
        name : str
            The axis name.

        Returns
        -------
        float or None
            Its value; ``None`` when the shape has no such axis.
        """
        for key, value in self.axes:
            if key == name:
                return value
        return None

    @property
    def axes_dict(self) -> dict[str, float]:
        """The axes as a dict."""
        return dict(self.axes)


@attrs.frozen(kw_only=True)
class Size1Axis:
    """An axis that is 1 in a large share of an op's calls.

    ``always`` is True when it is 1 in every call: the kernel can drop the axis outright;
    otherwise a fast path guarded on it covers ``call_share`` of the calls.
    """

    op: str = attrs.field(validator=string())
    axis: str = attrs.field(validator=string())
    source: str = attrs.field(validator=string())
    call_share: float = attrs.field(validator=unit())
    time_share: float | None = attrs.field(validator=unit(optional=True))
    always: bool = attrs.field(validator=instance_of(bool, "True or False"))


@attrs.frozen(kw_only=True)
class Skew:
    """How concentrated the shape mix is: shares covered by the ``k`` most common shapes.

    ``call_share`` covers the top-k shapes by calls; ``time_share`` the top-k by time.
    """

    k: int = attrs.field(validator=count(minimum=1))
    call_share: float = attrs.field(validator=unit())
    time_share: float | None = attrs.field(validator=unit(optional=True))


def _shapes(value: Iterable[ShapeStat]) -> tuple[ShapeStat, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


def _axes(value: Iterable[AxisStat]) -> tuple[AxisStat, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return _lines(value)


def _is_pair(value: object) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2


def _pairs(value: Iterable[Sequence[str]]) -> tuple[tuple[str, str], ...]:
    items = as_tuple(value)
    if not isinstance(items, tuple) or not all(_is_pair(pair) for pair in items):
        return value  # type: ignore[return-value]  # refused by _text_pairs
    return tuple((_line(a), _line(b)) for a, b in items)


def _pair(value: Sequence[str] | None) -> tuple[str, str] | None:
    if value is None or not _is_pair(value):
        return value  # type: ignore[return-value]  # refused by _text_pair
    return (_line(value[0]), _line(value[1]))


def _text_pairs(_instance: object, attribute: Any, value: object) -> None:
    if not isinstance(value, tuple) or not all(
        isinstance(pair, tuple) and all(isinstance(v, str) for v in pair) for pair in value
    ):
        raise InputError(
            expected("(name, name) pairs of strings", repr(value), where=attribute.name)
        )


def _text_pair(_instance: object, attribute: Any, value: object) -> None:
    if value is not None and not (
        isinstance(value, tuple) and all(isinstance(v, str) for v in value)
    ):
        raise InputError(
            expected("a pair of axis names or None", repr(value), where=attribute.name)
        )


_NAMES = items_of(str, "strings")


@attrs.frozen(kw_only=True)
class OpProfile:
    """The shapes one op sees: shapes, axes, and the roles its signature gives the axes.

    Parameters
    ----------
    op : str
        Op name.
    signature : str, optional
        Name of the :class:`~kernelopt.workload.OpSignature` that named the axes.
    family : str
        Kernel family (``"mla-decode"``, ``"softmax"``, ``"any"``).
    calls : int, optional
        Number of calls (None when a hand-written profile gives only shares).
    timed_calls : int, optional
        Calls that carried a duration.
    time_us : float, optional
        Summed duration of the timed calls, in microseconds.
    distinct_shapes : int, optional
        Number of distinct call signatures.
    shapes : tuple of ShapeStat
        The most common shapes, most calls first.
    other : ShapeStat, optional
        The remaining shapes folded into one row (``args`` says how many).
    axes : tuple of AxisStat
        Per-axis statistics, signature axes first.
    reduced, fixed : tuple of str
        Axes the op reduces over; axes fixed by design (never reported as shortcuts).
    select : (str, str), optional
        ``(k, n)`` when the op selects k of n.
    lengths : str, optional
        Base name of the per-sequence length axis.
    padded : tuple of (str, str)
        ``(padded axis, real length axis)`` pairs.
    hints : tuple of (str, str)
        Axis → what a size-1 value means for this op, for the axes that are 1 in some
        calls (profiles built from calls keep no other: a hint states what holds for the
        calls where its axis is 1, and :func:`size1_hints` drops the rest).
    """

    op: str = attrs.field(converter=_line, validator=string())
    signature: str | None = attrs.field(
        default=None, converter=_opt_line, validator=string(optional=True)
    )
    family: str = attrs.field(default="any", converter=_line, validator=string())
    calls: int | None = attrs.field(default=None, validator=count(optional=True))
    timed_calls: int | None = attrs.field(default=None, validator=count(optional=True))
    time_us: float | None = attrs.field(default=None, validator=finite(minimum=0.0, optional=True))
    distinct_shapes: int | None = attrs.field(default=None, validator=count(optional=True))
    shapes: tuple[ShapeStat, ...] = attrs.field(
        default=(), converter=_shapes, validator=items_of(ShapeStat, "ShapeStat")
    )
    other: ShapeStat | None = attrs.field(
        default=None, validator=instance_of(ShapeStat, "a ShapeStat", optional=True)
    )
    axes: tuple[AxisStat, ...] = attrs.field(
        default=(), converter=_axes, validator=items_of(AxisStat, "AxisStat")
    )
    reduced: tuple[str, ...] = attrs.field(default=(), converter=_names, validator=_NAMES)
    fixed: tuple[str, ...] = attrs.field(default=(), converter=_names, validator=_NAMES)
    select: tuple[str, str] | None = attrs.field(
        default=None, converter=_pair, validator=_text_pair
    )
    lengths: str | None = attrs.field(
        default=None, converter=_opt_line, validator=string(optional=True)
    )
    padded: tuple[tuple[str, str], ...] = attrs.field(
        default=(), converter=_pairs, validator=_text_pairs
    )
    hints: tuple[tuple[str, str], ...] = attrs.field(
        default=(), converter=_pairs, validator=_text_pairs
    )

    @property
    def timed(self) -> bool:
        """Whether shares of time are known."""
        return self.time_us is not None and self.time_us > 0

    def axis(self, name: str) -> AxisStat | None:
        """The statistics of one axis of the op.

        Parameters
        ----------
        name : str
            The axis name (``"b"``, ``"s_q"``).

        Returns
        -------
        AxisStat or None
            Its statistics; ``None`` when the op has no such axis.
        """
        for item in self.axes:
            if item.name == name:
                return item
        return None

    def hint(self, axis: str) -> str | None:
        """What a size-1 value of an axis means for this op, when the signature says.

        Parameters
        ----------
        axis : str
            The axis name.

        Returns
        -------
        str or None
            The hint in words; ``None`` when the signature gives none for the axis.
        """
        for key, text in self.hints:
            if key == axis:
                return text
        return None

    def is_size(self, axis: AxisStat, scalars: frozenset[str] | None = None) -> bool:
        """Whether a value of 1 of ``axis`` is an axis of size 1: a dim, a scalar or the
        per-sequence length axis, not a statistic of a tensor's values (``top_p.max`` at
        1.0 is a value), a flag or a ratio (1 means "holds" or "full" there), nor a dim of
        a one-element tensor (a device scalar: no loop runs over it).

        Parameters
        ----------
        axis : AxisStat
            One of the op's axes.
        scalars : frozenset of str, optional
            :func:`one_element_args` of the op's axes, where the caller has it.
        """
        if axis.kind in ("flag", "ratio"):
            return False
        if axis.kind == "values" and axis.name != self.lengths:
            # A statistic of a tensor's values (slot_mapping.cv, expert_load_mean) at
            # 1 is no axis of size 1; the per-sequence length axis (its max) is.
            return False
        return not is_size_of(axis, one_element_args(self.axes) if scalars is None else scalars)

    def size1_axes(self, threshold: float = 0.5) -> tuple[Size1Axis, ...]:
        """Axes that are 1 in at least ``threshold`` of the calls, most calls first.

        Parameters
        ----------
        threshold : float
            Minimum share of calls, in ``(0, 1]``; 1.0 keeps only the always-1 axes.
        """
        require(threshold, (int, float), "a threshold number in (0, 1]", where="threshold")
        if not 0 < threshold <= 1:  # NaN too
            raise InputError(expected("a threshold number in (0, 1]", threshold, where="threshold"))
        found = []
        scalars = one_element_args(self.axes)
        for axis in self.axes:
            if not self.is_size(axis, scalars):
                continue
            item = axis.share_of(1)
            if item is None or item.call_share <= 0 or item.call_share < threshold - 1e-12:
                continue
            if item.calls is not None and self.calls is not None:
                always = item.calls == self.calls
            else:
                always = item.call_share >= 1.0 - 1e-9
            found.append(
                Size1Axis(
                    op=self.op,
                    axis=axis.name,
                    source=axis.source,
                    call_share=item.call_share,
                    time_share=item.time_share,
                    always=always,
                )
            )
        return tuple(sorted(found, key=lambda s: -s.call_share))

    def top_shapes(self, k: int | None = None, *, by: str = "calls") -> tuple[ShapeStat, ...]:
        """The ``k`` most common shapes, by share of calls or of time.

        Parameters
        ----------
        k : int, optional
            How many shapes to return (an int >= 1); all of them if ``None``.
        by : {"calls", "time"}
            Rank by share of the op's calls, or by share of its timed total (shapes
            without a time share rank last).

        Returns
        -------
        tuple of ShapeStat
            The shapes, largest share first.

        Raises
        ------
        InputError
            If ``k`` is not an int >= 1 or ``by`` is neither.
        """
        if k is not None:
            k = positive_int(k, where="k")
        if by not in ("calls", "time"):
            raise InputError(expected("by='calls' or by='time'", by))
        if by == "calls":
            ranked = sorted(self.shapes, key=lambda s: -s.call_share)
        else:
            ranked = sorted(self.shapes, key=lambda s: -(s.time_share or 0.0))
        return tuple(ranked if k is None else ranked[:k])

    def skew(self, k: int = 1) -> Skew:
        """Shares of calls and of time covered by the most common shapes.

        Parameters
        ----------
        k : int
            How many shapes to cover (an int >= 1).

        Returns
        -------
        Skew
            The share of calls covered by the ``k`` most common shapes by calls, and the
            share of time covered by the ``k`` largest by time (``None`` when the op was
            not timed); each at most 1.

        Raises
        ------
        InputError
            If ``k`` is not an int >= 1.
        """
        k = positive_int(k, where="k")
        calls = sum(s.call_share for s in self.top_shapes(k, by="calls"))
        time = None
        if self.timed:
            time = sum(s.time_share or 0.0 for s in self.top_shapes(k, by="time"))
        return Skew(
            k=k, call_share=min(calls, 1.0), time_share=None if time is None else min(time, 1.0)
        )


def _ops(value: Iterable[OpProfile]) -> tuple[OpProfile, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


def _shortcuts(_instance: object, attribute: Any, value: tuple[Any, ...]) -> None:
    """Refuse anything but Shortcut findings (imported here: the shortcut rules read
    profiles, so their module imports this one)."""
    from kernelopt.workload.shortcuts import Shortcut

    stray = (
        next((item for item in value if not isinstance(item, Shortcut)), None)
        if isinstance(value, tuple)
        else value
    )
    if stray is not None:
        raise InputError(
            expected("a tuple of Shortcut", type(stray).__name__, where=attribute.name)
        )


@attrs.frozen(kw_only=True)
class WorkloadProfile:
    """The shapes a workload really sends to its ops.

    Parameters
    ----------
    source : str
        What was profiled (a trace path, or a markdown file for hand-written profiles).
    format : str
        The input format (``"jsonl"``, ``"torch-profiler"``, ``"flashinfer-bench"``,
        ``"calls"``, ``"markdown"``).
    ops : tuple of OpProfile
        One profile per op, most calls first.
    records : int, optional
        Records read from the source.
    skipped : int
        Records skipped as malformed.
    notes : tuple of str
        What could not be read, and why. Of the calls of an op that its signature did not
        fit, the first :data:`~kernelopt.workload.jsonl.MAX_LISTED_PROBLEMS` distinct notes
        are listed and the calls of the rest counted in one note after them (``... and 99980
        more calls of mla_decode whose signature did not fit``); so are the notes of calls
        whose length bound is below the longest length they carry (``max_seqlen`` below
        ``cache_seqlens.max()``).
    written_shortcuts : tuple of Shortcut
        Findings of the user's own rules (:func:`~kernelopt.workload.register_rule`) that
        the file the profile was read from lists: a process that has not registered those
        rules cannot find them again, and :func:`~kernelopt.workload.find_shortcuts`
        returns these instead. Empty for a profile made from calls. Not compared: the
        profile is its data, these are what was found in it.
    """

    source: str = attrs.field(converter=_line, validator=string())
    format: str = attrs.field(converter=_line, validator=string())
    ops: tuple[OpProfile, ...] = attrs.field(
        default=(), converter=_ops, validator=items_of(OpProfile, "OpProfile")
    )
    records: int | None = attrs.field(default=None, validator=count(optional=True))
    skipped: int = attrs.field(default=0, validator=count())
    notes: tuple[str, ...] = attrs.field(default=(), converter=_lines, validator=_NAMES)
    written_shortcuts: tuple[Any, ...] = attrs.field(
        default=(), converter=as_tuple, validator=_shortcuts, eq=False, repr=False
    )

    @property
    def calls(self) -> int:
        """Total number of calls over all ops (ops without a count add nothing)."""
        return sum(op.calls or 0 for op in self.ops)

    @property
    def distinct_shapes(self) -> int:
        """Total number of distinct shapes over all ops."""
        return sum(op.distinct_shapes or len(op.shapes) for op in self.ops)

    def op(self, name: str | None = None) -> OpProfile:
        """The profile of one op.

        Parameters
        ----------
        name : str, optional
            The op name; it matches exactly, else without case and ``namespace::``
            prefix (``"mla_decode"`` finds ``"kernelopt::mla_decode"``). The most called
            op if ``None``.

        Returns
        -------
        OpProfile
            The op's profile (the first match).

        Raises
        ------
        InputError
            When ``name`` is not a str, no op matches, or the profile holds no op.
        """
        if name is not None:
            require(name, str, "an op name (str) or None", where="name")
        if not self.ops:
            raise InputError(expected("a profile with at least one op", "none"))
        if name is None:
            return self.ops[0]
        matches = _matching(name, [o.op for o in self.ops])
        if not matches:
            raise InputError(
                expected(f"an op of the profile ({', '.join(o.op for o in self.ops)})", name)
            )
        return next(o for o in self.ops if o.op == matches[0])


def _matching(name: str, ops: Sequence[str]) -> list[str]:
    if name in ops:
        return [name]
    wanted = name.strip().lower()
    return [op for op in ops if op.lower() == wanted or op.lower().rsplit("::", 1)[-1] == wanted]


# --------------------------------------------------------------------------------------
# Building a profile


def _round_time(value: float) -> float:
    return round(value, _TIME_DIGITS)


def _weighted_median(order: list[float], weights: list[float], total: float) -> float | None:
    """Lower weighted median of values in ascending ``order`` with their ``weights``;
    None when the weights sum (``total``) to 0.

    The running sum is taken in value order and compared with ``total`` as given (summed
    in the histogram's order), so that a float sum meets half of it where it always did.
    """
    if total <= 0:
        return None
    running = list(accumulate(weights, initial=0.0))
    at = bisect_left(running, total / 2, lo=1)
    return order[at - 1] if at < len(running) else order[-1]


class _ShapeAcc:
    """One shape's totals, and what its axes are read from (read only if it is listed)."""

    __slots__ = ("call", "calls", "label", "plan", "rows", "time", "timed")

    def __init__(
        self, label: str, call: Call, plan: AxisPlan | None, rows: list[AxisRow] | None
    ) -> None:
        self.label = label
        self.call = call
        self.plan = plan
        self.rows = rows
        self.calls = 0
        self.timed = 0
        self.time = 0.0

    def axes(self) -> list[AxisRow]:
        """``(name, value, source, kind)`` per axis of the shape."""
        return self.rows if self.rows is not None else self.plan.rows(self.call)  # type: ignore[union-attr]


def _axis_acc(axes: dict[str, _AxisAcc], name: str, source: str, kind: str) -> _AxisAcc:
    """The histogram of axis ``name``, started with its source and kind where it is new."""
    acc = axes.get(name)
    if acc is None:
        acc = axes[name] = _AxisAcc(source, kind)
    return acc


class _AxisAcc:
    """Histogram of one axis over all calls: value -> [calls, timed calls, time].

    ``source`` and ``kind`` are those the axis was first met with; ``others`` counts the
    calls of each other source (``max_seqlen``, a scalar, beside ``cache_seqlens.max()``,
    a values summary) and keeps its kind, so that the axis is labelled by every source
    that gave some of its calls, not by the first alone.
    """

    __slots__ = ("bins", "kind", "others", "source")

    def __init__(self, source: str, kind: str) -> None:
        self.source = source
        self.kind = kind
        self.bins: dict[float, list[Any]] = {}
        # Source -> [calls, kind] of each source but the first.
        self.others: dict[str, list[Any]] = {}

    def count_source(self, source: str, kind: str, calls: int) -> None:
        """Count ``calls`` read from ``source`` (of ``kind``), where it is not the first."""
        if source == self.source:
            return
        slot = self.others.get(source)
        if slot is None:
            slot = self.others[source] = [0, kind]
        slot[0] += calls

    def label(self, calls: int) -> tuple[str, str]:
        """The axis's source and kind: each source that gave some of its ``calls``.

        Parameters
        ----------
        calls : int
            The calls the axis counts, of all its sources.

        Returns
        -------
        source : str
            The sources, the one that gave the most calls first, joined by
            ``_SOURCES_JOINER``; the first source alone where no call read another.
            Equal counts keep the order the sources were met in.
        kind : str
            The kind of the source named first.
        """
        if not self.others:
            return _join_sources([self.source]), self.kind
        first = calls - sum(n for n, _ in self.others.values())
        counted = [(self.source, first, self.kind)]
        counted += [(source, n, kind) for source, (n, kind) in self.others.items()]
        ranked = [item for item in counted if item[1] > 0]
        if not ranked:
            return _join_sources([self.source]), self.kind
        ranked.sort(key=lambda item: -item[1])  # stable: the order met among equal counts
        named = _join_sources(source for source, _, _ in ranked if source)
        return named, ranked[0][2]

    def add(self, value: float, calls: int, timed: int, time: float) -> None:
        slot = self.bins.get(value)
        if slot is None:
            slot = self.bins[value] = [0, 0, 0.0]
        slot[0] += calls
        slot[1] += timed
        slot[2] += time


def _collect(calls: Trace | Iterable[Call | CallGroup]) -> tuple[list[CallGroup], Trace | None]:
    if isinstance(calls, Trace):
        return list(calls.groups), calls
    if isinstance(calls, (str, bytes)) or not isinstance(calls, Iterable):
        raise InputError(
            expected(
                "a Trace or an iterable of Call or CallGroup", type(calls).__name__, where="calls"
            )
        )
    aggregator = CallAggregator()
    for item in calls:
        if isinstance(item, CallGroup):
            aggregator.add_group(item)
        elif isinstance(item, Call):
            aggregator.add(item, item.duration_us)
        else:
            raise InputError(expected("Call or CallGroup items", type(item).__name__))
    return aggregator.groups(), None


def _means(
    group: CallGroup, sig: OpSignature | None
) -> dict[str, tuple[str, tuple[ValueCount, ...]]]:
    """Mean-length axis name → (source, histogram of the means) of a group's summaries."""
    present = {item.name for item in group.call.args}
    return {
        values_axis_names(sig, hist.arg, present)[2]: (f"{hist.arg}.mean()", hist.mean)
        for hist in group.values
    }


# The histograms of a ValuesHistogram, in the order their axes are added.
_SUMMARY_STATS = ("max", "min", "mean", "uniform", "cv")


def _summary_axes(
    sig: OpSignature | None, arg: str, present: frozenset[str]
) -> list[tuple[str, str, str]]:
    """(name, source, kind) of the axis of each of ``_SUMMARY_STATS`` of tensor ``arg``
    of a call whose arguments are named ``present``."""
    top, low, mean, equal = values_axis_names(sig, arg, present)
    spread = top[: -len(".max")] + ".cv" if top.endswith(".max") else f"{top}_cv"
    return [
        (top, f"{arg}.max()", "values"),
        (low, f"{arg}.min()", "values"),
        (mean, f"{arg}.mean()", "values"),
        (equal, f"{arg}.min() == {arg}.max()", "flag"),
        (spread, f"{arg}.std() / {arg}.mean()", "values"),
    ]


def _one_element(call: Call, arg: str) -> bool:
    """Whether the tensor argument ``arg`` of ``call`` holds a single element."""
    item = call.arg(arg)
    return isinstance(item, TensorArg) and math.prod(item.shape) == 1


class _Histograms:
    """The histograms of an op's axes, each started where its axis is first met.

    Axes are listed in that order, and each bin sums its calls in the order of the
    groups: what add() does for one value, done per plan and per values summary without a
    call per value (with one shape per call, these run for every axis of every call).
    """

    def __init__(self, sig: OpSignature | None) -> None:
        self.sig = sig
        self.axes: dict[str, _AxisAcc] = {}
        # Per shared plan, the bins of each of its axes, looked up once.
        self._plan_bins: dict[AxisPlan, list[dict[float, list[Any]]]] = {}
        # Per shared plan, its axes whose source is not the one they were first met with.
        self._plan_strays: dict[AxisPlan, list[tuple[_AxisAcc, str, str]]] = {}
        # Per tensor argument and the names of its call's arguments, the (name, source,
        # kind) of each of its summaries' axes: of two names of one length (kv_lens and
        # context_lens), only the first the call passes gives the length axis.
        self._summary_axes: dict[tuple[str, frozenset[str]], list[tuple[str, str, str]]] = {}

    def add(
        self, name: str, source: str, kind: str, value: float, n: int, timed: int, time: float
    ) -> None:
        """Count ``n`` calls (``timed`` of them timed, ``time`` in all) at one value."""
        acc = _axis_acc(self.axes, name, source, kind)
        acc.add(value, n, timed, time)
        acc.count_source(source, kind, n)

    def add_plan(self, plan: AxisPlan, call: Call, n: int, timed: int, time: float) -> None:
        """Count ``call``'s axes, read through ``plan``, for ``n`` calls."""
        bins_of = self._plan_bins.get(plan)
        if bins_of is None:
            accs = [_axis_acc(self.axes, name, source, kind) for name, source, kind in plan.names]
            bins_of = self._plan_bins[plan] = [acc.bins for acc in accs]
            self._plan_strays[plan] = [
                (acc, source, kind)
                for acc, (_, source, kind) in zip(accs, plan.names, strict=True)
                if source != acc.source
            ]
        for acc, source, kind in self._plan_strays[plan]:
            acc.count_source(source, kind, n)
        for bins, value in zip(bins_of, plan.values(call), strict=True):
            slot = bins.get(value)
            if slot is None:
                slot = bins[value] = [0, 0, 0.0]
            slot[0] += n
            slot[1] += timed
            slot[2] += time

    @property
    def summarized(self) -> list[str]:
        """The tensor arguments whose values summaries were counted, in the order met."""
        return list(dict.fromkeys(arg for arg, _ in self._summary_axes))

    def add_summaries(self, group: CallGroup) -> None:
        """Count the lengths a group's values summaries give. An axis starts at its first
        value: a histogram without a bin (no std recorded) starts none."""
        present = frozenset(item.name for item in group.call.args)
        for hist in group.values:
            key = (hist.arg, present)
            axes = self._summary_axes.get(key)
            if axes is None:
                axes = self._summary_axes[key] = _summary_axes(self.sig, hist.arg, present)
            # One value is always equal to itself: a one-element tensor (one sequence) is
            # no evidence that the lengths of a call are equal.
            single = _one_element(group.call, hist.arg)
            for (name, source, kind), stat in zip(axes, _SUMMARY_STATS, strict=True):
                items = getattr(hist, stat)
                if not items or (single and stat == "uniform"):
                    continue
                acc = _axis_acc(self.axes, name, source, kind)
                if source != acc.source:
                    acc.count_source(source, kind, sum(item.calls for item in items))
                bins = acc.bins
                for item in items:
                    slot = bins.get(item.value)
                    if slot is None:
                        slot = bins[item.value] = [0, 0, 0.0]
                    slot[0] += item.calls
                    slot[1] += item.timed_calls
                    slot[2] += item.time_us


def _conditions(
    op: str,
    group: CallGroup,
    sig: OpSignature,
    single: dict[str, AxisRow],
    means: dict[str, tuple[str, tuple[ValueCount, ...]]],
    add: Any,
    overfull: _Misfits,
) -> None:
    """Feed the per-call conditions (k >= n, k == n) and padding ratios of one group, and
    note to ``overfull`` the calls whose mean length is above the padded size."""
    n, timed, time = group.calls, group.timed_calls, group.time_us
    if sig.select is not None and sig.select[0] in single and sig.select[1] in single:
        k_name, k_value, k_source, _ = single[sig.select[0]]
        n_name, n_value, n_source, _ = single[sig.select[1]]
        add(
            f"{k_name}_ge_{n_name}",
            f"{k_source} >= {n_source}",
            "flag",
            1.0 if k_value >= n_value else 0.0,
            n,
            timed,
            time,
        )
        if is_gather(sig.name, op):
            # A gather is a copy only with k == n (index == arange(n)): an index longer
            # than the axis repeats rows, so k > n never meets that guard.
            add(
                f"{k_name}_eq_{n_name}",
                f"{k_source} == {n_source}",
                "flag",
                1.0 if k_value == n_value else 0.0,
                n,
                timed,
                time,
            )
    for padded, length in sig.padded:
        if padded not in single or single[padded][1] <= 0:
            continue
        _, full, full_source, _ = single[padded]
        if length in means:
            source, bins = means[length]
        elif length in single:
            # A real length passed as a scalar (or read from a dim): one value per call.
            _, real, source, _ = single[length]
            bins = (ValueCount(value=real, calls=n, timed_calls=timed, time_us=time),)
        else:
            continue
        above = [item for item in bins if item.value > full]
        if above:
            # Lengths past the padded size contradict the call: the fill below is capped
            # at 1 (no padding), which says nothing of it without this note.
            longest = max(item.value for item in above)
            mismatch = expected(
                f"{source} <= {full_source}",
                f"{source} = {exact_number_text(longest)} and {full_source} = "
                f"{exact_number_text(full)}",
            )
            overfull.add(
                f"{op}: signature {sig.name}: {mismatch}; {padded}_fill is counted as 1",
                sum(item.calls for item in above),
            )
        for item in bins:
            fill = round(min(item.value, full) / full, 4)
            add(
                f"{padded}_fill",
                f"{source} / {full_source}",
                "ratio",
                fill,
                item.calls,
                item.timed_calls,
                item.time_us,
            )


def _labels(groups: list[CallGroup]) -> list[str]:
    """Each group's ``call.label``, each argument object rendered once.

    The calls of a trace read from a file share the arguments they have in common (a
    block table of one batch size, a scalar), and rendering them took most of the time of
    labelling a trace whose every call has its own shape. The groups hold every argument
    for the length of the pass, so no two of them share an ``id``.
    """
    rendered: dict[int, str] = {}
    known = rendered.get
    labels = []
    for group in groups:
        args = group.call.args
        texts = [known(id(arg)) for arg in args]
        if None in texts:
            for at, arg in enumerate(args):
                if texts[at] is None:
                    texts[at] = rendered[id(arg)] = arg.render()
        labels.append(" ".join(texts))  # type: ignore[arg-type]
    return labels


def _most_first(labels: list[str], calls: list[int]) -> list[int]:
    """Positions of the groups by most calls, then label: two stable sorts on keys read in
    C, not a tuple built per group."""
    order = sorted(range(len(labels)), key=labels.__getitem__)
    order.sort(key=calls.__getitem__, reverse=True)
    return order


class _Misfits:
    """The notes of one op's calls that its signature did not fit, or whose length bounds
    their lengths contradict: the first
    :data:`~kernelopt.workload.jsonl.MAX_LISTED_PROBLEMS` distinct ones in full, the calls
    of the rest counted in one closing note, as a JSONL trace lists its malformed lines.

    A trace whose every call has its own shape and disagrees on an axis has a note per
    shape: listed whole, 100,000 such calls made a profile of 100,000 notes.

    Parameters
    ----------
    notes : list of str
        The profile's notes, appended to.
    noted : set of str
        The notes already in ``notes``: a set beside the list, as a search of the list per
        call would take quadratic time.
    what : str
        What the calls counted in the closing note have in common (``"whose signature did
        not fit"``).
    """

    __slots__ = ("calls", "counts", "listed", "noted", "notes", "unlisted_calls", "what")

    def __init__(
        self, notes: list[str], noted: set[str], what: str = "whose signature did not fit"
    ) -> None:
        self.notes = notes
        self.noted = noted
        self.what = what
        self.listed = 0
        self.unlisted_calls = 0
        # All calls noted, and per note listed here: its place in ``notes``, its calls and
        # its shapes (call groups).
        self.calls = 0
        self.counts: dict[str, list[int]] = {}

    def add(self, note: str, calls: int) -> None:
        """Take the note of a call group of ``calls`` calls (one note per distinct text)."""
        self.calls += calls
        count = self.counts.get(note)
        if count is not None:
            count[1] += calls
            count[2] += 1
            return
        if note in self.noted:
            return
        if self.listed < MAX_LISTED_PROBLEMS:
            self.noted.add(note)
            self.counts[note] = [len(self.notes), calls, 1]
            self.notes.append(note)
            self.listed += 1
        else:
            # Not kept, so a later group with the same note counts its calls too.
            self.unlisted_calls += calls

    def close(self, op: str) -> None:
        """Say how many calls each note met by several shapes stands for, and append the
        count of the calls of ``op`` whose notes were not listed, if any."""
        for note, (at, calls, shapes) in self.counts.items():
            if shapes > 1:
                self.notes[at] = f"{note} ({count_text(calls, 'call')} of {shapes} shapes)"
        if self.unlisted_calls:
            more = count_text(self.unlisted_calls, "more call")
            self.notes.append(f"... and {more} of {op} {self.what}")


def _measured_bounds(plan: AxisPlan, group: CallGroup) -> list[tuple[LengthBound, ValuesHistogram]]:
    """The length bounds of ``plan`` whose lengths some of ``group``'s calls carry.

    Parameters
    ----------
    plan : AxisPlan
        The plan of the group's call (a call without values summaries).
    group : CallGroup
        The calls of one shape, the histograms of their values summaries included.

    Returns
    -------
    list of (LengthBound, ValuesHistogram)
        Each bound whose lengths tensor has a histogram of per-call maxima in ``group``,
        beside that histogram.
    """
    if not group.values:
        return []
    by_arg = {hist.arg: hist for hist in group.values}
    out = []
    for bound in plan.bounds:
        hist = by_arg.get(bound.lengths)
        if hist is not None and hist.max:
            out.append((bound, hist))
    return out


def _add_beside_lengths(
    histograms: _Histograms,
    plan: AxisPlan,
    group: CallGroup,
    measured: list[tuple[LengthBound, ValuesHistogram]],
) -> list[AxisRow]:
    """Count the axes of a group whose calls carry the lengths a scalar of theirs bounds.

    The length axis such a scalar gives (``seqlen`` from ``max_seqlen``) is counted only
    for the calls that carry no summary of the lengths: the others' axis is the max of
    their lengths, counted from the summaries (``add_summaries``). Counted for every
    call, the bound was a second value of each call's axis, and the source of the axis.

    Parameters
    ----------
    histograms : _Histograms
        The op's axis histograms, added to.
    plan : AxisPlan
        The plan of the group's call.
    group : CallGroup
        The calls of one shape.
    measured : list of (LengthBound, ValuesHistogram)
        What :func:`_measured_bounds` found for the group (not empty).

    Returns
    -------
    list of (str, float, str, str)
        The group's axes but for those a bound gives: the shape lists no length that only
        bounds the lengths of its calls, as it lists no length that varies within it.
    """
    withheld = {b.axis_step: hist for b, hist in measured if b.axis_step is not None}
    n, timed, time = group.calls, group.timed_calls, group.time_us
    listed: list[AxisRow] = []
    for at, (name, value, source, kind) in enumerate(plan.rows(group.call)):
        hist = withheld.get(at)
        if hist is None:
            histograms.add(name, source, kind, value, n, timed, time)
            listed.append((name, value, source, kind))
            continue
        rest = n - sum(item.calls for item in hist.max)
        if rest > 0:
            rest_timed = max(timed - sum(item.timed_calls for item in hist.max), 0)
            rest_time = (
                max(time - sum(item.time_us for item in hist.max), 0.0) if rest_timed else 0.0
            )
            histograms.add(name, source, kind, value, rest, rest_timed, rest_time)
    return listed


def _note_overruns(
    op: str,
    plan: AxisPlan,
    call: Call,
    measured: list[tuple[LengthBound, ValuesHistogram]],
    overruns: _Misfits,
) -> None:
    """Note the calls of a group whose length bound is below their longest length.

    Parameters
    ----------
    op : str
        The op's name, the note's prefix.
    plan : AxisPlan
        The plan of ``call``.
    call : Call
        The group's call (its scalars are those of each of its calls).
    measured : list of (LengthBound, ValuesHistogram)
        What :func:`_measured_bounds` found for the group.
    overruns : _Misfits
        The capped notes of such calls, added to: one note per bound, naming the longest
        length above it, for the calls whose maxima exceed it.
    """
    for bound, hist in measured:
        value = call.args[bound.bound_at].value  # type: ignore[union-attr]
        over = [item for item in hist.max if item.value > value]  # type: ignore[operator]
        if over:
            longest = max(item.value for item in over)
            note = bound_note(plan.sig_name, bound, value, longest)  # type: ignore[arg-type]
            overruns.add(f"{op}: {note}", sum(item.calls for item in over))


def _op_profile(
    op: str,
    groups: list[CallGroup],
    sig: OpSignature | None,
    notes: list[str],
    noted: set[str],
    max_shapes: int,
    max_values: int,
) -> OpProfile:
    by_label: dict[str, _ShapeAcc] = {}
    misfits = _Misfits(notes, noted)
    overruns = _Misfits(notes, noted, "whose length bound is below their longest length")
    overfull = _Misfits(notes, noted, "whose mean length is above their padded size")
    aliased = _Misfits(notes, noted, "that pass one length under two names")
    histograms = _Histograms(sig)
    reader = AxisReader(sig)
    # A condition (k >= n) needs the axes of each call by name; a padding ratio only for a
    # call with values summaries (the real lengths).
    selects, pads = sig is not None and sig.select is not None, sig is not None and sig.padded
    # Most calls first, so that axes appear in the order of the commonest shape.
    # Each label rendered once: with one shape per call, rendering is a large part of the cost.
    labels = _labels(groups)
    for at in _most_first(labels, [g.calls for g in groups]):
        label, group = labels[at], groups[at]
        call, n, timed, time = group.call, group.calls, group.timed_calls, group.time_us
        plan = reader.plan(call)
        rows: list[AxisRow] | None = None
        measured = _measured_bounds(plan, group) if plan is not None and plan.bounds else []
        if measured:
            problem = plan.problem  # type: ignore[union-attr]
            rows = _add_beside_lengths(histograms, plan, group, measured)  # type: ignore[arg-type]
            _note_overruns(op, plan, call, measured, overruns)  # type: ignore[arg-type]
        elif plan is not None and plan.shared:
            problem = plan.problem
            histograms.add_plan(plan, call, n, timed, time)
        else:
            rows, problem = reader.rows(call) if plan is None else (plan.rows(call), plan.problem)
            for name, value, source, kind in rows:
                histograms.add(name, source, kind, value, n, timed, time)
        if plan is not None and plan.bounds:
            # A call that carries its lengths itself, not in histograms beside it.
            overrun = plan.contradiction(call)
            if overrun is not None:
                overruns.add(f"{op}: {overrun}", n)
        if problem is not None:
            misfits.add(f"{op}: {problem}", n)
        if plan is not None and plan.note is not None:
            aliased.add(f"{op}: {plan.note}", n)
        shape = by_label.get(label)
        if shape is None:
            shape = by_label[label] = _ShapeAcc(label, call, plan, rows)
        shape.calls += n
        shape.timed += timed
        shape.time += time
        if group.values:
            histograms.add_summaries(group)
        if selects or pads:
            read = rows if rows is not None else plan.rows(call)  # type: ignore[union-attr]
            single = {row[0]: row for row in read}
            _conditions(op, group, sig, single, _means(group, sig), histograms.add, overfull)  # type: ignore[arg-type]
    misfits.close(op)
    overruns.close(op)
    overfull.close(op)
    aliased.close(op)
    calls = sum(a.calls for a in by_label.values())
    timed = sum(a.timed for a in by_label.values())
    op_time = _round_time(sum(a.time for a in by_label.values())) if timed else None
    # By (-calls, -time, label), one key at a time: stable sorts on keys read in C.
    ranked = sorted(by_label.values(), key=attrgetter("label"))
    ranked.sort(key=attrgetter("time"), reverse=True)
    ranked.sort(key=attrgetter("calls"), reverse=True)

    def stat(acc: _ShapeAcc) -> ShapeStat:
        time = _round_time(acc.time) if acc.timed else None
        return ShapeStat(
            args=acc.label,
            axes=tuple(
                (name, value) for name, value, _, kind in acc.axes() if kind in _SHAPE_KINDS
            ),
            calls=acc.calls,
            call_share=acc.calls / calls,
            time_us=time,
            time_share=share(time, op_time),
        )

    # The top shapes by time are listed too: a rare shape that takes most of the time (a
    # long prefill among decodes) folded into `other` would hide from skew(k) by time and
    # from the dominant-shape rule.
    by_time = nlargest(max_shapes, ranked, key=attrgetter("time")) if timed else []
    listed = {id(a) for a in ranked[:max_shapes]} | {id(a) for a in by_time if a.time > 0}
    shapes = tuple(stat(a) for a in ranked if id(a) in listed)
    rest = [a for a in ranked if id(a) not in listed]
    other = None
    if rest:
        rest_calls = sum(a.calls for a in rest)
        rest_timed = sum(a.timed for a in rest)
        rest_time = _round_time(sum(a.time for a in rest)) if rest_timed else None
        other = ShapeStat(
            args=count_text(len(rest), "more shape"),
            calls=rest_calls,
            call_share=rest_calls / calls,
            time_us=rest_time,
            time_share=share(rest_time, op_time),
        )
    axis_stats = tuple(
        _axis_stat(name, acc, calls, op_time, max_values) for name, acc in histograms.axes.items()
    )
    offsets = [arg for arg in histograms.summarized if is_cumulative_offsets(arg)]
    if offsets:
        # Their max is the total of the lengths, their min 0: read as lengths, they would
        # say every batch holds a sequence of length 0.
        notes.append(
            f"{op}: the values of {', '.join(offsets)} are cumulative offsets of packed "
            "sequences, not lengths (their max is the total, their min 0); record "
            f"torch.diff({offsets[0]}) under a name of its own to profile the lengths"
        )
    family = "any" if sig is None else sig.family
    if sig is not None and calls and misfits.calls >= calls:
        # Every call kept its argument names (the notes say why): none of the signature's
        # axes, roles or hints applies. The family stays: it is what the op is.
        sig = None
    return OpProfile(
        op=op,
        signature=None if sig is None else sig.name,
        family=family,
        calls=calls,
        timed_calls=timed,
        time_us=op_time,
        distinct_shapes=len(ranked),
        shapes=shapes,
        other=other,
        axes=axis_stats,
        reduced=() if sig is None else sig.reduced,
        fixed=() if sig is None else sig.fixed,
        select=None if sig is None else sig.select,
        lengths=None if sig is None else sig.lengths,
        padded=() if sig is None else sig.padded,
        hints=() if sig is None else size1_hints(sig.hints, axis_stats),
    )


# Axes a shape row lists: the sizes that make the shape; lengths, conditions and ratios vary
# within a shape and are summarized per axis only.
_SHAPE_KINDS = ("shape", "scalar", "derived")


def _axis_stat(
    name: str, acc: _AxisAcc, calls: int, op_time: float | None, max_values: int
) -> AxisStat:
    # An axis of a trace whose every call has its own shape has a bin per call: each pass
    # below runs in C where it can (sorts, sums, accumulate) rather than a lambda per bin.
    values = acc.bins
    order = sorted(values)
    slots = [values[v] for v in order]
    counts = [slot[0] for slot in slots]
    # The most calls first, the smaller value first among equal counts (nlargest keeps
    # the order of equal keys).
    top = nlargest(max_values, range(len(order)), key=counts.__getitem__)
    kept = [(order[i], slots[i]) for i in top]
    if 1 in values and all(v != 1 for v, _ in kept):
        # The key as the calls gave it: a size 1 is the int 1 beside the other sizes.
        one = order[bisect_left(order, 1)]
        kept.append((one, values[one]))
    shares = []
    for value, (n, timed, time) in kept:
        t = _round_time(time) if timed else None
        shares.append(
            ValueShare(
                value=value, calls=n, call_share=n / calls, time_us=t, time_share=share(t, op_time)
            )
        )
    present = sum(s[0] for s in values.values())
    mean = sum(map(mul, values, [s[0] for s in values.values()])) / present if present else None
    timed_total = sum(s[2] for s in values.values() if s[1])
    timed_order = [v for v, slot in zip(order, slots, strict=True) if slot[1]]
    source, kind = acc.label(present)
    return AxisStat(
        name=name,
        kind=kind,
        source=source,
        min=order[0],
        median=_weighted_median(order, counts, present),
        max=order[-1],
        mean=None if mean is None else round(mean, 6),
        time_median=_weighted_median(timed_order, [s[2] for s in slots if s[1]], timed_total)
        if timed_order
        else None,
        distinct=len(values),
        values=tuple(shares),
    )


def profile_calls(
    calls: Trace | Iterable[Call | CallGroup],
    *,
    op: str | None = None,
    source: str | None = None,
    signatures: Sequence[OpSignature] = (),
    max_shapes: int = DEFAULT_MAX_SHAPES,
    max_values: int = DEFAULT_MAX_VALUES,
) -> WorkloadProfile:
    """Profile the shapes of ``calls``.

    Parameters
    ----------
    calls : Trace or iterable of Call or CallGroup
        What :func:`~kernelopt.workload.read_trace` returned, or calls made in memory.
    op : str, optional
        Keep only this op (exact name, or without case and ``namespace::`` prefix).
    source : str, optional
        What to call the source in the profile (default: the trace's path, or ``"calls"``).
    signatures : sequence of OpSignature
        Signatures tried before the registry (a trace's own come first in any case).
    max_shapes : int
        Shapes kept per op: the ``max_shapes`` with the most calls and, of timed calls, the
        ``max_shapes`` with the most time (at most twice as many in all); the rest fold
        into ``OpProfile.other``. Axis statistics always cover every call.
    max_values : int
        Values listed per axis (the value 1 is always listed when it occurs).

    Returns
    -------
    WorkloadProfile
        With no ops when there were no calls.

    Raises
    ------
    InputError
        When ``op`` is not in the calls, or the limits are below 1.
    """
    max_shapes = positive_int(max_shapes, where="max_shapes")
    max_values = positive_int(max_values, where="max_values")
    for name, value in (("op", op), ("source", source)):
        if value is not None:
            require(value, str, "a string or None", where=name)
    require(signatures, (tuple, list), "a sequence of OpSignature", where="signatures")
    for item in signatures:
        require(item, OpSignature, "a sequence of OpSignature", where="signatures")
    with paused_gc():
        return _profile(calls, op, source, tuple(signatures), max_shapes, max_values)


def _profile(
    calls: Trace | Iterable[Call | CallGroup],
    op: str | None,
    source: str | None,
    signatures: tuple[OpSignature, ...],
    max_shapes: int,
    max_values: int,
) -> WorkloadProfile:
    """:func:`profile_calls` once its arguments are checked."""
    groups, trace = _collect(calls)
    extra = signatures + (trace.signatures if trace is not None else ())
    notes = list(trace.notes) if trace is not None else []
    by_op: dict[str, list[CallGroup]] = {}
    for group in groups:
        by_op.setdefault(group.call.op, []).append(group)
    names = list(by_op)
    if op is not None:
        names = _matching(op, names)
        if not names:
            available = ", ".join(sorted(by_op)) or "no ops"
            raise InputError(expected(f"an op of the trace ({available})", op, where="op"))
    noted = set(notes)
    found = {name: find_signature(name, extra) for name in names}
    for name in names:
        if found[name] is None and "::" not in name:
            # A kernel's own function name (row_softmax) matches no known op: its axes are
            # its arguments' dimensions and the op's own shortcut rules (a softmax over one
            # element is 1.0) do not run. Framework ops of a whole-model trace are many and
            # are left out of the shortcuts anyway.
            note = (
                f"op {name}: no signature names its axes, so only the rules for any op ran; "
                "record it under a known op (@recorder(op='softmax'); built in: "
                f"{', '.join(builtin_op_names())}; their other names in docs/workload.md, "
                "Op signatures) or register one (register_signature)"
            )
            if note not in noted:
                noted.add(note)
                notes.append(note)
    profiles = [
        _op_profile(name, by_op[name], found[name], notes, noted, max_shapes, max_values)
        for name in names
    ]
    profiles.sort(key=lambda p: (-(p.calls or 0), p.op))
    return WorkloadProfile(
        source=source or (trace.source if trace is not None else "calls"),
        format=trace.format if trace is not None else "calls",
        ops=tuple(profiles),
        records=trace.records if trace is not None else sum(g.calls for g in groups),
        skipped=trace.skipped if trace is not None else 0,
        notes=tuple(notes),
    )
