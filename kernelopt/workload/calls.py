"""Typed records of kernel calls: what one call saw, and many identical calls aggregated.

Every trace reader turns its input into :class:`CallGroup` rows (one per distinct call
signature, with the number of calls and their summed duration) inside a :class:`Trace`, so
memory grows with the number of distinct shapes, not with the number of calls.
:func:`parse_call_record` validates one JSON call record, the format of JSONL traces and of
the :class:`~kernelopt.workload.Recorder`::

    {"op": "mla_decode",
     "args": {"q": {"shape": [32, 1, 128, 576], "dtype": "bfloat16"},
              "cache_seqlens": {"shape": [32], "dtype": "int32",
                                "values": {"min": 4096, "max": 4096, "mean": 4096}},
              "softmax_scale": 0.0417},
     "duration_us": 41.3}
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from kernelopt._errors import InputError, expected
from kernelopt.workload._validators import (
    as_tuple,
    count,
    finite,
    finite_float,
    instance_of,
    items_of,
    text,
)
from kernelopt.workload.dtypes import canonical_dtype

if TYPE_CHECKING:  # signatures import this module; the annotation only needs the name
    from kernelopt.workload.signatures import OpSignature

__all__ = [
    "MAX_DIM",
    "MAX_DURATION_US",
    "Arg",
    "Call",
    "CallAggregator",
    "CallGroup",
    "GroupTally",
    "ScalarArg",
    "ScalarValue",
    "TensorArg",
    "Trace",
    "ValueCount",
    "ValuesHistogram",
    "ValuesSummary",
    "parse_call_record",
    "parse_duration",
]

# A dimension above 2**40 elements is not a real tensor (the largest GPU holds < 2**38 bytes):
# such a value is a corrupted record, and accepting it would distort every statistic.
MAX_DIM = 2**40
# Eleven days per call: anything larger is a unit mistake or corruption.
MAX_DURATION_US = 1e12
_MAX_NAME = 200
# The most dims a tensor has (NumPy's limit; PyTorch's kernels stay below it): a "shape" of
# millions of dims is a corrupted record, refused before its dims are walked or rendered.
_MAX_RANK = 64

ScalarValue = int | float | bool | str | None | tuple[int | float, ...]


def _a(noun: str) -> str:
    """The article of ``noun`` ("an op name", "a dtype")."""
    return "an" if noun[:1] in "aeiou" else "a"


# Names repeat on every line of a trace: one found valid is not scanned again. Bounded, so
# a trace of ever new names costs scans, not memory.
_VALID_NAMES: set[str] = set()
_VALID_NAMES_LIMIT = 4096
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# One regex search instead of a per-character loop: a string argument of 50 MB is
# scanned in C (milliseconds), not in 50 million Python steps.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _check_name(what: str, value: str, where: str) -> None:
    if value.__class__ is str and value in _VALID_NAMES:
        return
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_NAME:
        # A name of megabytes would be copied whole into the note that refuses it.
        shown = (
            f"{value[:40]!r}... ({len(value)} chars)"
            if isinstance(value, str) and len(value) > _MAX_NAME
            else value
        )
        raise InputError(
            expected(f"a non-empty {what} of at most {_MAX_NAME} chars", shown, where=where)
        )
    if _CONTROL.search(value):
        raise InputError(
            expected(f"{_a(what)} {what} without control characters", repr(value), where=where)
        )
    _check_encodable(what, value, where)
    if value.__class__ is str and len(_VALID_NAMES) < _VALID_NAMES_LIMIT:
        # Only exact str: a str subclass could hash or compare unlike the text it holds.
        _VALID_NAMES.add(value)


def _check_encodable(what: str, value: str, where: str) -> None:
    # JSON's `\ud800` escape decodes to a lone surrogate, which no UTF-8 file can hold:
    # accepted here, it would fail the profile's write, not the trace's read.
    if _SURROGATE.search(value):
        raise InputError(
            expected(
                f"{_a(what)} {what} without lone surrogates (\\ud800-\\udfff)",
                repr(value),
                where=where,
            )
        )


def _validate_name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    _check_name(attribute.name, value, attribute.name)


@attrs.frozen(kw_only=True)
class ValuesSummary:
    """A summary of the values of a small integer tensor (sequence lengths, indices).

    Parameters
    ----------
    min, max, mean : float
        Smallest, largest and mean element of the tensor in one call.
    std : float, optional
        Their standard deviation (population), when recorded: the spread of the lengths
        in one batch, which min, max and mean alone do not give.
    """

    min: float
    max: float
    mean: float
    std: float | None = None

    def __attrs_post_init__(self) -> None:
        for name in ("min", "max", "mean", "std"):
            value = getattr(self, name)
            if value.__class__ is float and math.isfinite(value):
                continue  # the common case (what trace readers build), without the calls below
            if value is None and name == "std":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(expected("a number", value, where=f"values.{name}"))
            if finite_float(value) is None:
                raise InputError(expected("a finite number", value, where=f"values.{name}"))
        if not self.min <= self.mean <= self.max:
            raise InputError(
                expected("values with min <= mean <= max", f"{self.min}, {self.mean}, {self.max}")
            )
        if self.std is not None and not 0 <= self.std <= (self.max - self.min) / 2 * (1 + 1e-9):
            # No set of values in [min, max] spreads more than half the range.
            raise InputError(
                expected("a std in [0, (max - min) / 2]", self.std, where="values.std")
            )

    @property
    def cv(self) -> float | None:
        """Coefficient of variation (std over mean), when the std was recorded."""
        if self.std is None or self.mean <= 0:
            return None
        return self.std / self.mean

    def render(self) -> str:
        """Return the compact text ``{min=1,max=4096,mean=2048.5}`` (``,std=...`` if known)."""
        std = "" if self.std is None else f",std={exact_number_text(self.std)}"
        low, high, mean = (exact_number_text(v) for v in (self.min, self.max, self.mean))
        return f"{{min={low},max={high},mean={mean}{std}}}"


def _int_tuple(value: Iterable[int]) -> tuple[int, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


def _opt_int_tuple(value: Iterable[int] | None) -> tuple[int, ...] | None:
    return None if value is None else _int_tuple(value)


def _check_dims(what: str, dims: object, where: str, *, minimum: int) -> None:
    if not isinstance(dims, tuple):
        raise InputError(expected(f"{what} as a sequence of integers", dims, where=where))
    for dim in dims:
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise InputError(expected(f"integer {what}", list(dims), where=where))
        if dim < minimum or dim > MAX_DIM:
            raise InputError(expected(f"{what} in [{minimum}, 2**40]", list(dims), where=where))


# What attrs itself builds a frozen instance with: the few records built in bulk from
# fields checked already (a tensor resized, a group of a tally) skip their __init__ checks.
_new = object.__new__
_set = object.__setattr__


def summary_of_numbers(low: float, high: float, mean: float, std: float | None) -> ValuesSummary:
    """``ValuesSummary(min=low, max=high, mean=mean, std=std)`` for floats read from a trace.

    Numbers that pass the summary's checks (finite, ``min <= mean <= max``, a std in
    ``[0, (max - min) / 2]``) make it without its ``__init__``: a trace reader builds one
    per line, and ``__init__``, which checks each field by name, takes three times as
    long. Anything else goes through ``__init__``, so a summary refused is refused with
    its own message.

    Parameters
    ----------
    low, high, mean : float
        Smallest, largest and mean value of the call's tensor.
    std : float or None
        Their standard deviation, when recorded.

    Returns
    -------
    ValuesSummary
        Equal to the one ``ValuesSummary(...)`` builds.

    Raises
    ------
    InputError
        Where ``ValuesSummary(...)`` raises it.
    """
    if (
        low.__class__ is float
        and high.__class__ is float
        and mean.__class__ is float
        and -math.inf < low <= mean <= high < math.inf
        and (std is None or (std.__class__ is float and 0 <= std <= (high - low) / 2 * (1 + 1e-9)))
    ):
        summary = _new(ValuesSummary)
        _set(summary, "min", low)
        _set(summary, "max", high)
        _set(summary, "mean", mean)
        _set(summary, "std", std)
        return summary
    return ValuesSummary(min=low, max=high, mean=mean, std=std)


_INT_ONLY = frozenset((int,))


def _plain_dims(dims: object, minimum: int) -> bool:
    """Whether ``dims`` is a tuple of at most 64 ints in ``[minimum, 2**40]``."""
    return (
        dims.__class__ is tuple
        and len(dims) <= _MAX_RANK  # type: ignore[arg-type]
        and set(map(type, dims)) <= _INT_ONLY  # type: ignore[call-overload]
        and (not dims or (min(dims) >= minimum and max(dims) <= MAX_DIM))  # type: ignore[type-var]
    )


@attrs.frozen(kw_only=True)
class TensorArg:
    """One tensor argument of a call: its name, shape, dtype and optional values summary.

    Parameters
    ----------
    name : str
        The argument name (``"q"``; positional arguments of profiler traces are named from
        the op's schema, else ``"arg0"``, ``"arg1"``...).
    shape : tuple of int
        The tensor's sizes, each in ``[0, 2**40]``.
    dtype : str
        Canonical dtype name (``"bfloat16"``), or the name as written when unknown.
    values : ValuesSummary, optional
        Min/max/mean of the elements, when the trace recorded them.
    stride : tuple of int, optional
        The element strides, one per dimension, when the trace recorded them (PyTorch
        profiler traces do; ``Recorder(strides=...)`` does for the arguments it names). A
        stride of 0 marks an expanded (broadcast) dimension: every index along it reads
        the same elements. Strides are not part of :meth:`render`: calls that differ only
        in strides share a shape row in a profile, while the per-call conditions derived
        from strides are kept per call.
    """

    name: str = attrs.field(validator=_validate_name)
    shape: tuple[int, ...] = attrs.field(converter=_int_tuple)
    dtype: str = attrs.field(validator=_validate_name)
    values: ValuesSummary | None = attrs.field(
        default=None, validator=instance_of(ValuesSummary, "a ValuesSummary", optional=True)
    )
    stride: tuple[int, ...] | None = attrs.field(default=None, converter=_opt_int_tuple)

    def __attrs_post_init__(self) -> None:
        for what, dims in (("dims", self.shape), ("strides", self.stride)):
            if isinstance(dims, tuple) and len(dims) > _MAX_RANK:  # _check_dims names others
                raise InputError(
                    expected(
                        f"at most {_MAX_RANK} {what}",
                        f"{len(dims)}",
                        where=f"{self.name}.{'shape' if what == 'dims' else 'stride'}",
                    )
                )
        _check_dims("dims", self.shape, f"{self.name}.shape", minimum=0)
        if self.stride is not None:
            # Negative strides exist (numpy views reversed along an axis).
            _check_dims("strides", self.stride, f"{self.name}.stride", minimum=-MAX_DIM)
            if len(self.stride) != len(self.shape):
                raise InputError(
                    expected(
                        f"{len(self.shape)} strides, one per dim of {list(self.shape)}",
                        list(self.stride),
                        where=f"{self.name}.stride",
                    )
                )

    def with_sizes(self, shape: tuple[int, ...], stride: tuple[int, ...] | None) -> TensorArg:
        """This tensor with other sizes and strides, checked as they are when a TensorArg
        is built (its name, dtype and values summary are not checked again).

        Parameters
        ----------
        shape : tuple of int
            The sizes, each in ``[0, 2**40]``.
        stride : tuple of int, optional
            The element strides, one per size.

        Returns
        -------
        TensorArg
            The copy.

        Raises
        ------
        InputError
            As ``TensorArg(...)`` does, when a size or stride is out of range.
        """
        if not _plain_dims(shape, 0) or not (
            stride is None or (_plain_dims(stride, -MAX_DIM) and len(stride) == len(shape))
        ):
            # Out of range, or not a tuple of ints: refused with __init__'s message.
            return TensorArg(
                name=self.name, shape=shape, dtype=self.dtype, values=self.values, stride=stride
            )
        # Built without __init__, whose checks of the other fields took most of the time
        # of reading a trace whose every call has its own shape.
        copy = _new(TensorArg)
        _set(copy, "name", self.name)
        _set(copy, "shape", shape)
        _set(copy, "dtype", self.dtype)
        _set(copy, "values", self.values)
        _set(copy, "stride", stride)
        return copy

    def render(self) -> str:
        """Return ``name=[d0,d1]:dtype`` plus the values summary when present."""
        dims = ",".join(map(str, self.shape))
        text = f"{self.name}=[{dims}]:{self.dtype}"
        return text + self.values.render() if self.values is not None else text


def _scalar(value: Any) -> ScalarValue:
    if isinstance(value, list):
        return tuple(value)
    return value  # type: ignore[no-any-return]


@attrs.frozen(kw_only=True)
class ScalarArg:
    """One non-tensor argument: a number, bool, string, None, or a tuple of numbers.

    Parameters
    ----------
    name : str
        The argument name.
    value : int, float, bool, str, None or tuple of numbers
        The value as passed (``k=8``, ``dim=-1``, ``causal=True``, ``dim=(1, 2)``).
    """

    name: str = attrs.field(validator=_validate_name)
    value: ScalarValue = attrs.field(converter=_scalar)

    def __attrs_post_init__(self) -> None:
        _check_scalar(self.value, self.name)

    def render(self) -> str:
        """Return ``name=value`` with the value in JSON spelling (tuples as ``[1,2]``)."""
        return f"{self.name}={_render_scalar(self.value)}"


Arg = TensorArg | ScalarArg


def _check_scalar(value: object, where: str) -> None:
    if isinstance(value, str):
        _check_encodable("string", value, where)
        return
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        # Profiles hold axis values as floats: an integer beyond the float range is refused
        # here, not met as an OverflowError there.
        if finite_float(value) is None:
            raise InputError(expected("a finite number", value, where=where))
        return
    if isinstance(value, tuple):
        if _finite_numbers(value):
            return
        for item in value:  # find the item to name, with the message it gets
            if isinstance(item, bool) or not isinstance(item, (int, float)):
                raise InputError(expected("a list of numbers", list(value), where=where))
            if finite_float(item) is None:
                raise InputError(expected("a list of finite numbers", list(value), where=where))
        return
    raise InputError(
        expected("a number, bool, string, null or list of numbers", value, where=where)
    )


def _finite_numbers(items: tuple[Any, ...]) -> bool:
    """Whether every item is an int or a finite float (not a bool), checked in C: a list
    argument of millions of numbers is read in a second, not in minutes."""
    if not set(map(type, items)) <= {int, float}:
        return False
    try:
        # math.isfinite raises OverflowError on an int beyond the float range.
        return all(map(math.isfinite, items))
    except OverflowError:
        return False


def _render_scalar(value: ScalarValue) -> str:
    if isinstance(value, tuple):
        if set(map(type, value)) == {int}:
            return "[" + ",".join(map(str, value)) + "]"  # what exact_number_text gives an int
        return "[" + ",".join(exact_number_text(v) for v in value) + "]"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return exact_number_text(value)
    return json.dumps(value, ensure_ascii=False)


def exact_number_text(value: float) -> str:
    """Integral numbers without a decimal point, others with their shortest exact repr."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _args_tuple(value: Iterable[Arg]) -> tuple[Arg, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


@attrs.frozen(kw_only=True)
class Call:
    """One call of an op: its arguments and, when measured, its duration.

    Parameters
    ----------
    op : str
        The op name (``"mla_decode"``, ``"aten::softmax"``).
    args : tuple of TensorArg or ScalarArg
        The arguments in call order; names are unique.
    duration_us : float, optional
        Wall or device time of the call in microseconds.
    """

    op: str = attrs.field(validator=_validate_name)
    args: tuple[Arg, ...] = attrs.field(
        default=(),
        converter=_args_tuple,
        validator=items_of((TensorArg, ScalarArg), "TensorArg or ScalarArg"),
    )
    duration_us: float | None = None

    def __attrs_post_init__(self) -> None:
        names = [a.name for a in self.args]
        if len(set(names)) != len(names):
            raise InputError(expected("unique argument names", names, where=self.op))
        if self.duration_us is not None:
            parse_duration(self.duration_us, where=f"{self.op}.duration_us")

    def arg(self, name: str) -> Arg | None:
        """One argument of the call, by name.

        Parameters
        ----------
        name : str
            The argument's name (``"q"``, ``"cache_seqlens"``).

        Returns
        -------
        Arg or None
            The argument; ``None`` when the call has none of that name.
        """
        for item in self.args:
            if item.name == name:
                return item
        return None

    @property
    def label(self) -> str:
        """The arguments as one line of text; equal labels mean equal call signatures."""
        return " ".join([a.render() for a in self.args])

    def with_tensors(self, tensors: Mapping[int, TensorArg]) -> Call:
        """This call with the tensor arguments at some positions replaced.

        Parameters
        ----------
        tensors : mapping of int to TensorArg
            Argument position → a recorded tensor (its ``shape`` of any rank) of the name
            the argument there has.

        Returns
        -------
        Call
            The copy (its duration kept).

        Raises
        ------
        InputError
            When a position holds no argument, or a replacement is no TensorArg of the
            name it replaces.
        """
        args = list(self.args)
        for position, tensor in tensors.items():
            old = args[position] if 0 <= position < len(args) else None
            if tensor.__class__ is not TensorArg or old is None or tensor.name != old.name:
                where = "nothing" if old is None else old.name
                raise InputError(
                    expected(f"a TensorArg named {where}", repr(tensor), where=f"args[{position}]")
                )
            args[position] = tensor
        # Built without __init__: the names, op and duration are this call's, checked when
        # it was built, and each replacement a TensorArg of the same name.
        copy = _new(Call)
        _set(copy, "op", self.op)
        _set(copy, "args", tuple(args))
        _set(copy, "duration_us", self.duration_us)
        return copy

    def without_duration(self) -> Call:
        """Return this call with ``duration_us`` cleared (its shape signature)."""
        return attrs.evolve(self, duration_us=None) if self.duration_us is not None else self


@attrs.frozen(kw_only=True)
class ValueCount:
    """One bin of a histogram: calls (and their time) at one value."""

    value: float = attrs.field(validator=finite())
    calls: int = attrs.field(validator=count())
    timed_calls: int = attrs.field(default=0, validator=count())
    time_us: float = attrs.field(default=0.0, validator=finite(minimum=0.0))


def _bins(value: Iterable[ValueCount]) -> tuple[ValueCount, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


_BINS = items_of(ValueCount, "ValueCount")


@attrs.frozen(kw_only=True)
class ValuesHistogram:
    """The values summaries of one tensor argument over the calls of one shape.

    Each field is a histogram over calls: of the per-call ``max``, ``min`` and ``mean``
    (the mean rounded to 4 significant digits, so the bins stay few), of ``uniform``
    (1.0 when min == max in that call, else 0.0), and of ``cv`` (std over mean, 3
    significant digits) for the calls whose summary recorded a std.
    """

    arg: str = attrs.field(validator=_validate_name)
    max: tuple[ValueCount, ...] = attrs.field(default=(), converter=_bins, validator=_BINS)
    min: tuple[ValueCount, ...] = attrs.field(default=(), converter=_bins, validator=_BINS)
    mean: tuple[ValueCount, ...] = attrs.field(default=(), converter=_bins, validator=_BINS)
    uniform: tuple[ValueCount, ...] = attrs.field(default=(), converter=_bins, validator=_BINS)
    cv: tuple[ValueCount, ...] = attrs.field(default=(), converter=_bins, validator=_BINS)


def _histograms(value: Iterable[ValuesHistogram]) -> tuple[ValuesHistogram, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


@attrs.frozen(kw_only=True)
class CallGroup:
    """All calls of one shape signature: how many, their summed duration, their values.

    Parameters
    ----------
    call : Call
        The shared signature (``duration_us`` is None and no tensor carries ``values``).
    calls : int
        Number of calls with this signature.
    timed_calls : int
        How many of them carried a duration.
    time_us : float
        Sum of the durations of the timed calls, in microseconds.
    values : tuple of ValuesHistogram
        Per tensor argument that carried a values summary, the histograms of its summaries.
    """

    call: Call = attrs.field(validator=instance_of(Call, "a Call"))
    calls: int = attrs.field(validator=count(minimum=1))
    timed_calls: int = attrs.field(default=0, validator=count())
    time_us: float = attrs.field(default=0.0, validator=finite(minimum=0.0))
    values: tuple[ValuesHistogram, ...] = attrs.field(
        default=(), converter=_histograms, validator=items_of(ValuesHistogram, "ValuesHistogram")
    )

    def __attrs_post_init__(self) -> None:
        if self.timed_calls > self.calls:
            raise InputError(
                expected(
                    f"timed_calls <= calls ({self.calls})", self.timed_calls, where="timed_calls"
                )
            )


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the length of the block.

    Reading or profiling a trace builds a few objects per distinct call and frees none of
    them before the end; the collector, started every few hundred new objects, walks all
    that were built so far each time it reaches its oldest generation: with one shape per
    call, up to a third of the time of a pass. Pausing it delays only the freeing of reference
    cycles made meanwhile, and the records make none. A pause inside a pause, or one
    entered with the collector off, leaves it off.

    Yields
    ------
    None
        Once, with the collector paused; it is restored when the block ends, raised or not.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _mean_bin(mean: float) -> float:
    # 4 significant digits: a length of 12345.6 lands in 12350; bins stay bounded by the
    # range of the lengths, whatever the number of calls.
    return float(f"{mean:.4g}")


_STATS = ("max", "min", "mean", "uniform", "cv")
# The histogram bins of a summary, by its numbers: the same summary recurs on many calls,
# and formatting its mean and cv bins costs more than the lookup. Bounded like the names.
_BIN_CACHE: dict[tuple[float, float, float, float | None], tuple[float | None, ...]] = {}
_BIN_CACHE_LIMIT = 65536


def _bins_of(summary: ValuesSummary) -> tuple[float | None, ...]:
    """The bin of ``summary`` in each of the ``_STATS`` histograms (None: no cv bin)."""
    key = (summary.min, summary.max, summary.mean, summary.std)
    # -0.0 equals 0.0 as a key but formats as -0: such a summary gets its own bins.
    signed = 0 in key and any(v is not None and math.copysign(1.0, v) < 0 for v in key)
    bins = None if signed else _BIN_CACHE.get(key)
    if bins is None:
        cv = summary.cv
        bins = (
            float(summary.max),
            float(summary.min),
            _mean_bin(summary.mean),
            1.0 if summary.min == summary.max else 0.0,
            None if cv is None else float(f"{cv:.3g}"),
        )
        if not signed and len(_BIN_CACHE) < _BIN_CACHE_LIMIT:
            _BIN_CACHE[key] = bins
    return bins


class GroupTally:
    """The running counts of one CallGroup while a trace is read (mutable, internal)."""

    __slots__ = ("calls", "hists", "time", "timed")

    def __init__(self) -> None:
        self.calls = 0
        self.timed = 0
        self.time = 0.0
        # arg -> stat -> value -> [calls, timed calls, time]
        self.hists: dict[str, dict[str, dict[float, list[Any]]]] = {}

    def bump(
        self, summaries: tuple[tuple[str, ValuesSummary], ...], calls: int, timed: int, time: float
    ) -> None:
        self.calls += calls
        self.timed += timed
        self.time += time
        for name, summary in summaries:
            stats = self.hists.get(name)
            if stats is None:
                stats = self.hists[name] = {s: {} for s in _STATS}
            for bins, value in zip(stats.values(), _bins_of(summary), strict=True):
                if value is None:
                    continue
                slot = bins.get(value)
                if slot is None:
                    slot = bins[value] = [0, 0, 0.0]
                slot[0] += calls
                slot[1] += timed
                slot[2] += time

    def merge_histograms(self, histograms: tuple[ValuesHistogram, ...]) -> None:
        for hist in histograms:
            stats = self.hists.setdefault(hist.arg, {s: {} for s in _STATS})
            for stat in _STATS:
                for item in getattr(hist, stat):
                    slot = stats[stat].setdefault(item.value, [0, 0, 0.0])
                    slot[0] += item.calls
                    slot[1] += item.timed_calls
                    slot[2] += item.time_us

    def histograms(self) -> tuple[ValuesHistogram, ...]:
        # Built without __init__: every bin holds a value of a checked ValuesSummary (or
        # its rounding), a count and a sum of checked durations, and the name is the
        # checked argument's; checking them again took a fifth of the time of reading a
        # trace whose every call has its own lengths.
        out = []
        for name, stats in self.hists.items():
            histogram = _new(ValuesHistogram)
            _set(histogram, "arg", name)
            for stat, bins in stats.items():
                _set(histogram, stat, _counts(bins))
            out.append(histogram)
        return tuple(out)


def _counts(bins: dict[float, list[Any]]) -> tuple[ValueCount, ...]:
    """A histogram's bins (value -> [calls, timed calls, time]), by value."""
    return tuple(
        _count(v, c) for v, c in (bins.items() if len(bins) == 1 else sorted(bins.items()))
    )


def _count(value: float, slot: list[Any]) -> ValueCount:
    """The ValueCount of one bin of a GroupTally, its fields set as __init__ sets them."""
    count = _new(ValueCount)
    _set(count, "value", value)
    _set(count, "calls", slot[0])
    _set(count, "timed_calls", slot[1])
    _set(count, "time_us", slot[2])
    return count


class CallAggregator:
    """Aggregate calls per shape signature, moving values summaries into histograms.

    Memory grows with the number of distinct shape signatures (and histogram bins), never
    with the number of calls: this is what every trace reader feeds.
    """

    def __init__(self) -> None:
        self._groups: dict[Call, GroupTally] = {}
        self._split: dict[Call, tuple[Call, tuple[tuple[str, ValuesSummary], ...]]] = {}

    def _shape_of(self, call: Call) -> tuple[Call, tuple[tuple[str, ValuesSummary], ...]]:
        cached = self._split.get(call)
        if cached is not None:
            return cached
        summaries = tuple(
            (a.name, a.values)
            for a in call.args
            if isinstance(a, TensorArg) and a.values is not None
        )
        shape = call.without_duration()
        if summaries:
            shape = Call(
                op=call.op,
                args=tuple(
                    attrs.evolve(a, values=None)
                    if isinstance(a, TensorArg) and a.values is not None
                    else a
                    for a in call.args
                ),
            )
        elif len(self._split) < 4096:  # value-free calls repeat: remember their split
            self._split[call] = (shape, summaries)
        return shape, summaries

    def group_of(self, call: Call) -> tuple[GroupTally, tuple[tuple[str, ValuesSummary], ...]]:
        """The accumulator of ``call``'s shape and the values summaries ``call`` carries."""
        _shape, group, summaries = self.place(call)
        return group, summaries

    def place(self, call: Call) -> tuple[Call, GroupTally, tuple[tuple[str, ValuesSummary], ...]]:
        """Where ``call`` is counted: its shape, that shape's accumulator, its summaries.

        Parameters
        ----------
        call : Call
            One recorded call, values summaries included.

        Returns
        -------
        tuple of (Call, GroupTally, tuple of (str, ValuesSummary))
            The call without values summaries (the group's key), the group's accumulator
            (made on first use), and the ``(argument, summary)`` pairs ``call`` carries.
        """
        shape, summaries = self._shape_of(call)
        return shape, self.group_of_shape(shape), summaries

    def group_of_shape(self, shape: Call) -> GroupTally:
        """The accumulator of a call shape, made on first use.

        Parameters
        ----------
        shape : Call
            A call without duration and values summaries (the first item of :meth:`place`).

        Returns
        -------
        GroupTally
            The group's accumulator, shared by every call of that shape.
        """
        # One lookup: hashing a call hashes each of its arguments.
        return self._groups.setdefault(shape, GroupTally())

    def add(self, call: Call, duration_us: float | None = None, *, calls: int = 1) -> None:
        """Count ``calls`` calls like ``call`` (``duration_us`` is their summed time)."""
        group, summaries = self.group_of(call)
        if duration_us is None:
            group.bump(summaries, calls, 0, 0.0)
        else:
            group.bump(summaries, calls, calls, duration_us)

    def add_group(self, item: CallGroup) -> None:
        """Merge an already aggregated group."""
        group, summaries = self.group_of(item.call)
        group.bump(summaries, item.calls, item.timed_calls, item.time_us)
        group.merge_histograms(item.values)

    def groups(self) -> list[CallGroup]:
        """The aggregated groups, in order of first appearance."""
        return [_group(call, tally) for call, tally in self._groups.items()]


def _group(call: Call, tally: GroupTally) -> CallGroup:
    """The CallGroup of one shape's tally."""
    values = tally.histograms()
    if not (tally.calls >= 1 and 0 <= tally.timed <= tally.calls and 0.0 <= tally.time < math.inf):
        # Refused with CallGroup's own message (a group of no calls).
        return CallGroup(
            call=call, calls=tally.calls, timed_calls=tally.timed, time_us=tally.time, values=values
        )
    # Built without __init__: the call is a key of the aggregator, the counts and time
    # were just checked, the histograms built from checked summaries; checking them again
    # took a fifth of the time of reading a trace whose every call has its own shape.
    group = _new(CallGroup)
    _set(group, "call", call)
    _set(group, "calls", tally.calls)
    _set(group, "timed_calls", tally.timed)
    _set(group, "time_us", tally.time)
    _set(group, "values", values)
    return group


def _groups_tuple(value: Iterable[CallGroup]) -> tuple[CallGroup, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


def _str_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


def _signature_tuple(value: Iterable[OpSignature]) -> tuple[OpSignature, ...]:
    return as_tuple(value)  # type: ignore[no-any-return]


def _signature_class() -> type:
    # signatures imports this module: the class is looked up when a Trace is first built.
    from kernelopt.workload.signatures import OpSignature

    return OpSignature


@attrs.frozen(kw_only=True)
class Trace:
    """A trace read into distinct call signatures, plus what could not be read.

    Parameters
    ----------
    source : str
        Where the calls came from (a path).
    format : str
        ``"jsonl"``, ``"torch-profiler"``, ``"flashinfer-bench"`` or ``"calls"``.
    groups : tuple of CallGroup
        One row per distinct (op, arguments) signature.
    records : int
        Records looked at (non-blank lines, profiler op events, workloads).
    skipped : int
        Records skipped because they were malformed.
    notes : tuple of str
        What could not be read and why, with line numbers; in reading order.
    signatures : tuple of OpSignature
        Op signatures the trace itself defines (FlashInfer-Bench definitions name their axes).
    """

    source: str = attrs.field(validator=text())
    format: str = attrs.field(validator=text(nonempty=True))
    groups: tuple[CallGroup, ...] = attrs.field(
        default=(), converter=_groups_tuple, validator=items_of(CallGroup, "CallGroup")
    )
    records: int = attrs.field(default=0, validator=count())
    skipped: int = attrs.field(default=0, validator=count())
    notes: tuple[str, ...] = attrs.field(
        default=(), converter=_str_tuple, validator=items_of(str, "strings")
    )
    signatures: tuple[OpSignature, ...] = attrs.field(
        default=(), converter=_signature_tuple, validator=items_of(_signature_class, "OpSignature")
    )

    @property
    def calls(self) -> int:
        """Total number of calls read."""
        return sum(g.calls for g in self.groups)

    @property
    def ops(self) -> tuple[str, ...]:
        """The op names in the trace, most called first."""
        totals: dict[str, int] = {}
        for group in self.groups:
            totals[group.call.op] = totals.get(group.call.op, 0) + group.calls
        return tuple(sorted(totals, key=lambda op: (-totals[op], op)))


def parse_duration(value: object, *, where: str = "duration_us") -> float:
    """Validate a duration in microseconds and return it as a float.

    Raises
    ------
    InputError
        When ``value`` is not a finite number in ``[0, 1e12]``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(expected("a duration in microseconds (a number)", value, where=where))
    number = finite_float(value)
    if number is None or number < 0 or number > MAX_DURATION_US:
        raise InputError(expected("a duration in [0, 1e12] us", value, where=where))
    return number


def _shared(text: str) -> str:
    """``text`` interned (sys.intern refuses a str subclass: that one is kept as it is)."""
    return sys.intern(text) if text.__class__ is str else text


def _parse_tensor(name: str, spec: Mapping[str, Any], unknown: set[str]) -> TensorArg:
    extra = set(spec) - {"shape", "dtype", "values", "stride", "device"}
    if extra:
        raise InputError(
            expected(
                "tensor keys among shape, dtype, values, stride, device",
                sorted(extra),
                where=f"args.{name}",
            )
        )
    shape = spec.get("shape")
    if not isinstance(shape, list):
        raise InputError(expected("a shape list", shape, where=f"args.{name}.shape"))
    stride = spec.get("stride")
    for key, dims in (("shape", shape), ("stride", stride)):
        if isinstance(dims, list) and len(dims) > _MAX_RANK:
            # The count, not the list: a note holding millions of dims would be as large.
            raise InputError(
                expected(f"at most {_MAX_RANK} dims", f"{len(dims)}", where=f"args.{name}.{key}")
            )
    for dim in shape:
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise InputError(expected("integer dims", shape, where=f"args.{name}.shape"))
        if dim < 0 or dim > MAX_DIM:
            raise InputError(expected("dims in [0, 2**40]", shape, where=f"args.{name}.shape"))
    dtype = spec.get("dtype")
    if not isinstance(dtype, str) or not dtype.strip():
        raise InputError(expected("a dtype string", dtype, where=f"args.{name}.dtype"))
    canonical = canonical_dtype(dtype)
    if canonical is None:
        _check_name("dtype", dtype, f"args.{name}.dtype")
        unknown.add(dtype)
    values = spec.get("values")
    summary = None
    if values is not None:
        if not isinstance(values, dict) or set(values) not in (
            {"min", "max", "mean"},
            {"min", "max", "mean", "std"},
        ):
            raise InputError(
                expected("values as {min, max, mean[, std]}", values, where=f"args.{name}.values")
            )
        try:
            summary = ValuesSummary(
                min=values["min"], max=values["max"], mean=values["mean"], std=values.get("std")
            )
        except InputError as error:
            raise _in_tensor(error, name, "values") from None
    if stride is not None and not isinstance(stride, list):
        raise InputError(expected("a stride list", stride, where=f"args.{name}.stride"))
    try:
        return TensorArg(
            name=name,
            shape=tuple(shape),
            # One string per dtype, not one per line: a trace of a million distinct shapes
            # keeps a million tensors.
            dtype=_shared(canonical or dtype),
            values=summary,
            stride=None if stride is None else tuple(stride),
        )
    except InputError as error:
        raise _in_tensor(error, name, "stride") from None


def _in_tensor(error: InputError, name: str, field: str) -> InputError:
    """``error``, raised by a tensor's ``field``, located as the trace's other refusals are.

    A summary or a tensor checks itself without knowing where it sits in the line
    (``values.min: ...``, ``q.stride: ...``, or no place at all for ``min <= mean <= max``);
    in a call with several tensors the note must say which one is wrong: ``args.q.stride``,
    ``args.cache_seqlens.values.min``.
    """
    message = str(error)
    # What each check names itself: the summary its field, the tensor its own name.
    own = "values." if field == "values" else f"{name}."
    inside = f"{name}." if field == "values" else ""
    if message.startswith(own):
        return InputError(f"args.{inside}{message}")
    return InputError(f"args.{name}.{field}: {message}")


def parse_call_record(
    record: object, *, unknown_dtypes: set[str] | None = None
) -> tuple[Call, float | None]:
    """Validate one JSON call record and return ``(call without duration, duration_us)``.

    Parameters
    ----------
    record : object
        A decoded JSON value; must be ``{"op": str, "args": {...}, "duration_us": number?}``.
        Extra top-level keys are ignored. An argument is a tensor ``{"shape": [...],
        "dtype": str, "values": {min, max, mean}?}``, a list of such tensors (named
        ``name.0``, ``name.1``...), or a scalar (number, bool, string, null, list of numbers).
    unknown_dtypes : set of str, optional
        Dtype names not in :data:`~kernelopt.workload.dtypes.KNOWN_DTYPES` are added here;
        they are kept as written.

    Raises
    ------
    InputError
        With an ``Expected X, got Y`` message naming the bad field, or when
        ``unknown_dtypes`` is not a set (the names are added to it).
    """
    if unknown_dtypes is not None and not isinstance(unknown_dtypes, set):
        raise InputError(
            expected("a set of str or None", type(unknown_dtypes).__name__, where="unknown_dtypes")
        )
    unknown = unknown_dtypes if unknown_dtypes is not None else set()
    if not isinstance(record, dict):
        raise InputError(expected("a JSON object", type(record).__name__))
    op = record.get("op")
    if not isinstance(op, str):
        raise InputError(expected("an op name string", op, where="op"))
    _check_name("op name", op, "op")
    # Names repeat on every line but JSON decodes a new string each time: shared, a group
    # of its own per distinct shape costs less memory, and equal names compare by identity.
    op = _shared(op)
    raw_args = record.get("args", {})
    if not isinstance(raw_args, dict):
        raise InputError(expected("args as a JSON object", type(raw_args).__name__, where="args"))
    args: list[Arg] = []
    for name, value in raw_args.items():
        _check_name("argument name", name, "args")
        name = _shared(name)
        if isinstance(value, dict):
            args.append(_parse_tensor(name, value, unknown))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            args.extend(_parse_tensor(f"{name}.{i}", v, unknown) for i, v in enumerate(value))
        else:
            scalar = _scalar(value)
            _check_scalar(scalar, f"args.{name}")
            args.append(ScalarArg(name=name, value=scalar))
    duration = record.get("duration_us")
    parsed = None if duration is None else parse_duration(duration)
    return Call(op=op, args=tuple(args)), parsed
