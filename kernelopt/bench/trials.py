"""The trial matrix: the few shapes every kernel version is timed at, with b halved on OOM.

Defaults follow the workflow this library serves: a decode-like point (b=32, s=1,
t=4096) and a speculative-decoding point (b=32, s=16, t=4096); a third, stress point is
added only when evidence says the first two are not enough. ``b`` is the batch, ``s`` the
query tokens per sequence, ``t`` the cached sequence length; other axes (heads ``h``)
ride along in ``extra``. When a point does not fit in device memory its batch is halved
until it does, and the row says so.
"""

from __future__ import annotations

import gc
import numbers
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from kernelopt._errors import InputError, expected
from kernelopt.bench import guards
from kernelopt.bench._error_text import check_said, one_line
from kernelopt.bench.measurement import Measurement
from kernelopt.bench.records import (
    AXIS_NAME_CANNOT_HOLD,
    BenchRow,
    _correctness,
    _correctness_word,
    axis_name_reads_back,
    point_text,
    row_from_measurement,
    to_result_row,
)
from kernelopt.bench.roofline import Roofline
from kernelopt.bench.timer import Timer, require_measurement, require_timer
from kernelopt.experiments._validators import (
    instance_of,
    optional_instance_of,
    optional_text,
    text,
)
from kernelopt.experiments.points import AXIS_ALIASES, canonical_axis
from kernelopt.experiments.records import ResultRow

__all__ = [
    "DECODE",
    "DEFAULT_POINTS",
    "SPECULATIVE",
    "TrialCall",
    "TrialPoint",
    "TrialResult",
    "TrialsInterrupted",
    "is_out_of_memory",
    "run_trials",
    "trial_matrix",
]


def _plain_int(value: object) -> object:
    """An attrs converter: an integer of another type (numpy's ``np.int64``, as
    ``np.arange`` gives) as the Python int it equals, so that a point spells and compares
    as one made of ints; anything else as given, for the validator to refuse (a bool, a
    float, a 0-d array: a container whose value may still change, never a number here)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool | int):
        return int(value)
    return value


def _positive_int(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InputError(expected("an integer >= 1", _shown(value), where=attribute.name))


def _shown(value: object) -> str:
    """``repr(value)``, with how to pass a 0-d array (``array(32)``) that is refused."""
    numpy = sys.modules.get("numpy")  # an array exists only where numpy was imported
    if numpy is not None and isinstance(value, numpy.ndarray) and value.ndim == 0:
        return f"{value!r} (a 0-d array: pass int(value))"
    return repr(value)


_OWN_AXES = ("b", "s", "t")


def _int_dict(value: Mapping[str, int]) -> dict[str, int]:
    """An attrs converter: the extra axes of a point, each name checked to read back as
    itself and each value an int (numpy integers as the Python ints they equal)."""
    if not isinstance(value, Mapping):
        raise InputError(expected("extra axes as a mapping", type(value).__name__, where="extra"))
    out: dict[str, int] = {}
    for key, item in value.items():
        if canonical_axis(str(key)) in _OWN_AXES:
            # The point's own fields, or their other names (s_q, t_max), which the devlog
            # and evaluate read as those fields: a second copy in extra would label the
            # point with one value while the factory reads the other.
            others = ", ".join(alias for axis in _OWN_AXES for alias in AXIS_ALIASES.get(axis, ()))
            raise InputError(
                expected(
                    f"extra axes other than b, s and t or their other names {others} "
                    "(set those fields)",
                    key,
                    where="extra",
                )
            )
        number = _plain_int(item)
        if isinstance(number, bool) or not isinstance(number, int):
            raise InputError(expected("an int", _shown(number), where=f"extra[{key!r}]"))
        name = str(key)
        if not axis_name_reads_back(name):
            # The point is spelled "b=32 s=1 t=4096 h=16" and read back by split_terms: a
            # name that does not read back as itself ("h,q" reads as the name h and the
            # axis q) labels the point with other axes than the ones timed.
            raise InputError(
                expected(
                    f"axis names that read back as written: not empty, without "
                    f"{AXIS_NAME_CANNOT_HOLD} ('num_heads', not 'num heads')",
                    repr(key),
                    where="extra",
                )
            )
        _refuse_second_name(out, name)
        out[name] = number
    return out


def _refuse_second_name(names: Mapping[str, int], name: str) -> None:
    """Refuse ``name`` where ``names`` already holds another name of its axis (``h`` and
    ``h_q``): the devlog and evaluate read both as the one axis, one value lost."""
    axis = canonical_axis(name)
    other = next((known for known in names if canonical_axis(known) == axis), None)
    if other is not None:
        raise InputError(
            expected(
                "each axis once (h and h_q name one axis)",
                f"{other!r} and {name!r}",
                where="extra",
            )
        )


@attrs.frozen(kw_only=True)
class TrialPoint:
    """One shape of the trial matrix.

    Parameters
    ----------
    b : int
        Batch size (sequences).
    s : int
        Query tokens per sequence (1 for decode, the draft length for speculation).
    t : int
        Cached tokens per sequence.
    name : str
        What the point stands for (``"decode"``, ``"speculative"``).
    extra : dict of str to int
        Other axes, e.g. ``{"h": 128}``. A name must read back as itself from the point's
        spelling: not empty, without spaces, commas, semicolons, brackets, double quotes,
        ``=`` or ``~``, neither b, s, t nor their other names (``s_q``, ``t_max``), and
        one name an axis (not ``h`` and ``h_q``).

    Integers of other types (numpy's ``np.int64``) are stored as the Python ints they
    equal, so ``TrialPoint(b=np.int64(32), ...)`` is ``TrialPoint(b=32, ...)``, spelled
    and recorded alike; bools, floats and 0-d arrays are refused (``int(value)`` takes
    the number out of an array).
    """

    b: int = attrs.field(converter=_plain_int, validator=_positive_int)
    s: int = attrs.field(converter=_plain_int, validator=_positive_int)
    t: int = attrs.field(converter=_plain_int, validator=_positive_int)
    name: str = ""
    extra: dict[str, int] = attrs.field(factory=dict, converter=_int_dict)

    def __str__(self) -> str:
        """``b=32 s=1 t=4096 h=16``: the point's one spelling (:func:`point_text`)."""
        return point_text(self.as_dict())

    def as_dict(self) -> dict[str, int]:
        """``{"b": …, "s": …, "t": …, **extra}``."""
        return {"b": self.b, "s": self.s, "t": self.t, **self.extra}

    def with_b(self, b: int) -> TrialPoint:
        """The same point with another batch size.

        Parameters
        ----------
        b : int
            The new batch size.

        Returns
        -------
        TrialPoint
            A copy with ``b`` replaced; the point's checks apply.
        """
        return attrs.evolve(self, b=b)


DECODE = TrialPoint(name="decode", b=32, s=1, t=4096)
SPECULATIVE = TrialPoint(name="speculative", b=32, s=16, t=4096)
DEFAULT_POINTS = (DECODE, SPECULATIVE)


# What to pass when trial_matrix is left with no point. axes= only crosses the points
# there are, so axes without the default points or extra_points= make none.
_NO_POINTS_HINT = {
    False: "with include_defaults=False, pass extra_points=[TrialPoint(b=..., s=..., t=...), ...]",
    True: (
        "axes= crosses the points and makes none of its own: with include_defaults=False, "
        "pass extra_points=[TrialPoint(b=..., s=..., t=...), ...] as well"
    ),
}


def trial_matrix(
    *,
    extra_points: Sequence[TrialPoint] = (),
    axes: Mapping[str, Sequence[int]] | None = None,
    include_defaults: bool = True,
) -> tuple[TrialPoint, ...]:
    """The default points plus ``extra_points``, crossed with extra ``axes``.

    Parameters
    ----------
    extra_points : sequence of TrialPoint
        Points to add (a stress configuration, say).
    axes : mapping of str to sequence of int, optional
        Axes to cross every point with, e.g. ``{"h": (128, 16)}``; they make no point of
        their own (without the defaults, ``extra_points`` gives them); a 1-D numpy array
        (``np.array([128, 16])``) and numpy integers are taken as the Python ints they
        equal.
    include_defaults : bool
        Start from :data:`DEFAULT_POINTS`.

    Raises
    ------
    InputError
        For extra points that are not a list of TrialPoints, axes that are not a mapping
        of names to non-empty sequences of ints, an ``include_defaults`` that is no bool,
        or no point at all (``axes`` only crosses
        the points: with ``include_defaults=False``, ``extra_points`` gives them); and, as
        each point would be timed twice, for an axis listing a value twice, an extra point
        listed twice or equal to a default one, or axes that make two points one.

    Examples
    --------
    >>> for point in trial_matrix(axes={"h": (128, 16)}):
    ...     print(point)
    b=32 s=1 t=4096 h=128
    b=32 s=1 t=4096 h=16
    b=32 s=16 t=4096 h=128
    b=32 s=16 t=4096 h=16
    """
    # Checked here: a mapping among the points was returned as one, and refused only
    # once run_trials got it; a lone point failed with "Value after * must be an iterable".
    if isinstance(extra_points, TrialPoint | str | bytes) or not isinstance(extra_points, Sequence):
        raise InputError(
            expected("a list of TrialPoint", type(extra_points).__name__, where="extra_points")
        )
    for index, item in enumerate(extra_points):
        if not isinstance(item, TrialPoint):
            raise InputError(
                expected("a TrialPoint", type(item).__name__, where=f"extra_points[{index}]")
            )
    if axes is not None and not isinstance(axes, Mapping):
        raise InputError(expected("axes as {name: values}", type(axes).__name__, where="axes"))
    if not isinstance(include_defaults, bool):
        # "no" or 0.0 would be read by truth: a flag of another type is a mistake.
        raise InputError(expected("a bool", repr(include_defaults), where="include_defaults"))
    # A point in the matrix twice is timed twice and gives two rows of one point, which
    # the readers of the rows refuse: refused here, before anything is timed.
    refuse_repeated_points(extra_points, "extra_points")
    defaults = DEFAULT_POINTS if include_defaults else ()
    repeat = _first_repeat([*defaults, *extra_points])
    if repeat is not None:
        first, again = repeat
        raise InputError(
            expected(
                "extra points other than the default ones (include_defaults=False to list "
                "every point yourself)",
                f"{extra_points[again - len(defaults)]}, the {defaults[first].name} point",
                where=f"extra_points[{again - len(defaults)}]",
            )
        )
    points = [*defaults, *extra_points]
    sources = list(points)  # the point each one of the matrix was made from
    for axis, given in (axes or {}).items():
        values = _axis_values(axis, given)
        if axis in _OWN_AXES:
            points = [attrs.evolve(point, **{axis: value}) for point in points for value in values]
        else:
            points = [
                attrs.evolve(point, extra={**point.extra, axis: value})
                for point in points
                for value in values
            ]
        sources = [source for source in sources for _ in values]
        # Checked once the points have taken the values, so that these are ints (the points
        # refuse anything else) and a bool is never taken for the 1 it equals.
        twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
        if twice is not None:
            raise InputError(
                expected(
                    f"each value of axis {axis!r} once",
                    f"{given if isinstance(given, Sequence) else values!r} ({twice} twice)",
                    where="axes",
                )
            )
    if not points:
        raise InputError(
            expected(f"at least one trial point ({_NO_POINTS_HINT[bool(axes)]})", "none")
        )
    repeat = _first_repeat(points)
    if repeat is not None:
        # Two points differing only in an axis that axes= then set to one value.
        first, again = repeat
        raise InputError(
            expected(
                "axes that keep the points apart",
                f"{points[again]} twice (made from {sources[first]} and {sources[again]})",
                where="axes",
            )
        )
    return tuple(points)


def _axis_values(axis: str, values: object) -> list[object]:
    """The values of one axis of ``trial_matrix(axes=...)`` as a list, numpy integers as
    the Python ints they equal (the points check them).

    Parameters
    ----------
    axis : str
        The axis, named in errors.
    values : object
        A non-empty sequence of ints, or a 1-D array of them (``np.arange(1, 5)``).

    Raises
    ------
    InputError
        For text, anything that is not a sequence or a 1-D array, or no value.
    """
    if getattr(values, "ndim", None) == 1 and hasattr(values, "tolist"):
        # A numpy array (or tensor) is no Sequence: its tolist() gives Python numbers.
        values = values.tolist()
    if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
        raise InputError(
            expected(f"a sequence of ints for axis {axis!r}", repr(values), where="axes")
        )
    return [_plain_int(value) for value in values]


def refuse_repeated_points(points: Sequence[TrialPoint], name: str) -> None:
    """Refuse a point spelled as an earlier one of ``points`` (the argument ``name``).

    The same point twice would be timed twice and give two rows of one point, which the
    readers of the rows refuse or take one of: refused before anything is timed.

    Raises
    ------
    InputError
        ``points[2]: Expected each point once, got b=32 s=1 t=4096 again (as points[0])``.
    """
    repeat = _first_repeat(points)
    if repeat is not None:
        first, again = repeat
        raise InputError(
            expected(
                "each point once",
                f"{points[again]} again (as {name}[{first}])",
                where=f"{name}[{again}]",
            )
        )


def _first_repeat(points: Sequence[TrialPoint]) -> tuple[int, int] | None:
    """``(earlier, again)``: the first point spelled as an earlier one, or None if none is.

    Points are told apart by their spelling (``b=32 s=1 t=4096 h=16``), as the rows
    that record them are: two points of different names are still one point.
    """
    seen: dict[str, int] = {}
    for index, point in enumerate(points):
        spelling = str(point)
        if spelling in seen:
            return seen[spelling], index
        seen[spelling] = index
    return None


def _require_call(fn: object, where: str) -> None:
    """Refuse a call that is not callable when it is made, not when the timer first runs it
    (``'NoneType' object is not callable``, from deep inside the timer)."""
    if not callable(fn):
        raise InputError(expected("a callable", type(fn).__name__, where=where))


def _callable(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """An attrs validator: :func:`_require_call` naming the field."""
    _require_call(value, attribute.name)


def _some_outputs(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    """An attrs validator: ``outputs`` None, or holding at least one tensor, as
    :func:`~kernelopt.bench.guards.check_written` requires (``[]`` would check nothing,
    and every call would pass the output checks)."""
    if value is None:
        return
    if not guards._as_tensors(value):
        got = f"none in {type(value).__name__} {value!r}"
        raise InputError(expected("at least one output tensor to check", got, where="outputs"))


def _written_with_outputs(
    instance: object, _attribute: attrs.Attribute[Any], value: object
) -> None:
    """An attrs validator: a ``written`` region needs the ``outputs`` it is a region of
    (it is checked against them, as ``check_written`` does, when the point runs)."""
    if value is not None and getattr(instance, "outputs", None) is None:
        raise InputError(expected("outputs= with written=", "written= alone", where="written"))


@attrs.frozen(kw_only=True)
class TrialCall:
    """What a trial factory may return instead of a bare function: the call and its outputs.

    Parameters
    ----------
    fn : callable
        One call of the kernel.
    outputs : Tensor or sequence of Tensor, optional
        Buffers ``fn`` overwrites; poisoned before every timed call and checked after
        every batch (see :mod:`kernelopt.bench.guards`).
    written : optional
        The region of each output ``fn`` writes, for a kernel that writes only part of
        them (a KV-cache append's rows), as :func:`~kernelopt.bench.guards.check_written`
        takes it: the whole output is poisoned, every element of the region must be
        written and every element outside it left alone. None: every output written whole.
    check : callable, optional
        ``check(result)``, with ``result`` what one call of ``fn`` returned (into
        poisoned ``outputs``), before any timing. A point whose check raises or returns
        a false value (None passes, as ``torch.testing.assert_close`` returns) is
        recorded as ``incorrect: ...`` (the exception's whole message, its lines joined
        by ``"; "``, or ``check is_close (bench.py:12) returned False``: the check's name
        and where it is defined) and not timed; a check that runs out of device memory halves ``b``
        as the call does. A point whose check passed is timed and its result says so
        (``TrialResult.correctness`` ``"PASS"``, carried into its ``bench_row``).

    Raises
    ------
    InputError
        When ``fn``, or a ``check`` given, is not callable, ``outputs`` is given but
        holds no tensor (``[]``), or ``written`` is given without ``outputs``.
    """

    fn: Callable[[], object] = attrs.field(validator=_callable)
    outputs: Any = attrs.field(default=None, validator=_some_outputs)
    written: Any = attrs.field(default=None, validator=_written_with_outputs)
    # Checked when made: a check that cannot be called would mark every point incorrect.
    check: Callable[[Any], object] | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(_callable),
    )


def is_out_of_memory(error: BaseException) -> bool:
    """True for a CUDA out-of-memory error (torch's OutOfMemoryError or its message)."""
    if type(error).__name__ == "OutOfMemoryError":
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def _incorrect(call: TrialCall) -> str | None:
    """Why one call is wrong by its check, or None when it is right (or has no check)."""
    if call.check is None:
        return None
    if call.outputs is not None:
        # The whole of each output, a region's outside included, as the timed calls do.
        guards._poison_guarded(guards._guarded(call.outputs, call.written))
    result = call.fn()
    try:
        verdict = call.check(result)
    except Exception as error:
        if is_out_of_memory(error):
            raise
        return "incorrect: " + one_line(error)
    if verdict is not None and not verdict:
        return f"incorrect: {check_said(call.check, verdict)}"
    return None


def _release_memory() -> None:
    gc.collect()
    torch = sys.modules.get("torch")  # never import torch just to free its cache
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


@attrs.frozen(kw_only=True)
class TrialResult:
    """The outcome at one trial point.

    Parameters
    ----------
    requested : TrialPoint
        The point asked for.
    point : TrialPoint
        The point that ran (``b`` halved after each out-of-memory error).
    impl : str
        Implementation name.
    measurement : Measurement, optional
        The timing; None when the point failed.
    error : str, optional
        Why the point failed: ``incorrect: ...`` when its check found the result wrong,
        else the error it raised; one line, the message's lines joined by ``"; "`` (at
        most 2000 characters: a longer one keeps its start and end and says how many
        characters were cut between them).
    correctness : str, optional
        The verdict of the point's :attr:`TrialCall.check`: ``"PASS"`` (the point was
        then timed), ``"FAIL"`` (``error`` says why; untimed), or None where there is
        no verdict (no check was given, or the point failed with an error);
        ``"UNKNOWN"`` is taken too, the words :class:`~kernelopt.bench.BenchRow` holds.
    """

    requested: TrialPoint = attrs.field(validator=instance_of(TrialPoint, "a TrialPoint"))
    point: TrialPoint = attrs.field(validator=instance_of(TrialPoint, "a TrialPoint"))
    impl: str = attrs.field(default="", validator=text(nonempty=False))
    measurement: Measurement | None = attrs.field(
        default=None, validator=optional_instance_of(Measurement, "a Measurement")
    )
    error: str | None = attrs.field(default=None, validator=optional_text())
    correctness: str | None = attrs.field(
        default=None, converter=_correctness_word, validator=_correctness
    )

    @property
    def reduced(self) -> bool:
        """True when the batch was halved to fit."""
        return self.point.b != self.requested.b

    @property
    def note(self) -> str:
        """``"b halved 32 -> 16 after CUDA OOM"`` when reduced, else ``""``."""
        if not self.reduced:
            return ""
        return f"b halved {self.requested.b} -> {self.point.b} after CUDA OOM"

    def result_row(
        self, *, floor: Roofline | float | None = None, speedup: float | None = None
    ) -> ResultRow:
        """The canonical ResultRow; the point text carries the batch reduction.

        Parameters
        ----------
        floor : float or Roofline, optional
            Roofline floor in the measurement's unit, or the Roofline itself (its floor
            is read in that unit).
        speedup : float, optional
            Baseline time over this trial's time.

        Returns
        -------
        ResultRow
            The row; its point is the point that ran, followed by the :attr:`note` in
            parentheses when the batch was halved.

        Raises
        ------
        InputError
            If the trial failed (it has no measurement).
        """
        if self.measurement is None:
            raise InputError(expected("a measured trial", f"a failed one ({self.error})"))
        point = str(self.point) + (f" ({self.note})" if self.reduced else "")
        return to_result_row(
            self.measurement, point=point, impl=self.impl, floor=floor, speedup=speedup
        )

    def bench_row(
        self,
        *,
        op: str,
        floor: float | None = None,
        metrics: Mapping[str, float] | None = None,
        directory: str | os.PathLike[str] | None = None,
    ) -> BenchRow:
        """The JSONL row; ``config`` is the point that ran, ``note`` the reduction.

        Parameters
        ----------
        op : str
            The op that was timed.
        floor : float, optional
            Roofline floor in the measurement's unit.
        metrics : Mapping[str, float], optional
            Roofline metrics (``RooflinePoint.metrics()``); an infinite
            ``arith_intensity`` (a call that moves no bytes) is left out.
        directory : path-like, optional
            A folder of the checkout whose commit the row carries; the current working
            directory if ``None``.

        Returns
        -------
        BenchRow
            The row with the current environment and the trial's :attr:`correctness`
            (``"PASS"`` where its check passed, None where it had none); when the batch
            was halved its config also holds ``b_requested``, the batch asked for. A
            point whose check failed was never timed and has no row.

        Raises
        ------
        InputError
            If the trial failed (it has no measurement).
        """
        if self.measurement is None:
            raise InputError(expected("a measured trial", f"a failed one ({self.error})"))
        config: dict[str, int | float | str | bool] = dict(self.point.as_dict())
        if self.reduced:
            config["b_requested"] = self.requested.b
        return row_from_measurement(
            self.measurement,
            op=op,
            impl=self.impl,
            config=config,
            floor=floor,
            metrics=metrics,
            note=self.note,
            directory=directory,
            correctness=self.correctness,
        )


class TrialsInterrupted(KeyboardInterrupt):
    """A keyboard interrupt during :func:`run_trials`, carrying the points done before it.

    A ``KeyboardInterrupt``: uncaught, it stops the program as Ctrl-C does; caught, its
    ``results`` hold the points finished (timed, failed or incorrect) before the
    interrupt, in order; the point that was running is not among them.

    Parameters
    ----------
    results : list of TrialResult
        One per point finished.
    """

    def __init__(self, results: list[TrialResult]) -> None:
        super().__init__(f"trial matrix interrupted after {len(results)} points")
        self.results = results


def _attempt(
    make: Callable[[TrialPoint], Callable[[], object] | TrialCall],
    point: TrialPoint,
    impl: str,
    timer: Timer,
) -> tuple[Measurement | None, str | None, str | None]:
    """Build, check and time one point: the measurement, or why the result is wrong, and
    the check's verdict (``"PASS"``, ``"FAIL"``, or None without a check).

    The call and the inputs it holds live in this frame only, so that once it returns
    or raises they can be freed before a halved point allocates its own.
    """
    made = make(point)
    if not isinstance(made, TrialCall):
        _require_call(made, where="make(point)")
    call = made if isinstance(made, TrialCall) else TrialCall(fn=made)
    wrong = _incorrect(call)
    verdict = None if call.check is None else "PASS" if wrong is None else "FAIL"
    if wrong is not None:
        return None, wrong, verdict
    measured = timer.measure(
        call.fn, outputs=call.outputs, written=call.written, label=f"{impl} {point}".strip()
    )
    return require_measurement(measured), None, verdict


def run_trials(
    make: Callable[[TrialPoint], Callable[[], object] | TrialCall],
    *,
    points: Sequence[TrialPoint] | None = None,
    impl: str,
    timer: Timer | None = None,
    min_b: int = 1,
) -> list[TrialResult]:
    """Time one implementation at every trial point, halving ``b`` on CUDA OOM.

    Parameters
    ----------
    make : callable
        ``make(point)`` allocates the inputs of ``point`` and returns a function that
        runs one call, or a :class:`TrialCall` naming the outputs to poison and check.
    points : sequence of TrialPoint, optional
        Default :data:`DEFAULT_POINTS`.
    impl : str
        Implementation name for the results and their rows (``"v1"``); required, not
        empty.
    timer : Timer, optional
        Timing settings; default ``Timer()``.
    min_b : int
        Smallest batch to try before giving up on a point.

    Returns
    -------
    list of TrialResult
        One per point, in order. A point that fails for another reason than memory, or
        whose :attr:`TrialCall.check` finds the result wrong (checked before timing), is
        recorded with its error and the others still run.

    Raises
    ------
    InputError
        Before any point runs: for a ``make`` that is not callable, an ``impl`` that is
        no str or is empty, a ``timer`` without ``measure``, points that are not a list of distinct
        TrialPoints, or a bad ``min_b``.
    TrialsInterrupted
        On a keyboard interrupt (it is one), with the points finished before it.
    """
    # Checked before any point runs: each point would be recorded as failed instead.
    if not callable(make):
        raise InputError(expected("make as a callable", type(make).__name__, where="make"))
    if not isinstance(impl, str):
        # Refused only later, by each result's result_row, once every point had run.
        raise InputError(expected("a str", type(impl).__name__, where="impl"))
    if not impl.strip():
        # Every row needs the name: result_row and bench_row refused it once all was timed.
        raise InputError(
            expected("the implementation's name for the rows ('v1')", repr(impl), where="impl")
        )
    require_timer(timer)
    timer = timer or Timer()
    results = []
    if points is not None:
        if isinstance(points, TrialPoint | str | bytes) or not isinstance(points, Sequence):
            raise InputError(
                expected("a list of TrialPoint", type(points).__name__, where="points")
            )
        if len(points) == 0:
            raise InputError(expected("at least one trial point (None for the defaults)", "[]"))
        # Checked before any point runs: a mapping has no batch to halve, and its label
        # would not be the point's one spelling.
        for index, item in enumerate(points):
            if not isinstance(item, TrialPoint):
                raise InputError(
                    expected("a TrialPoint", type(item).__name__, where=f"points[{index}]")
                )
        refuse_repeated_points(points, "points")
    if isinstance(min_b, bool) or not isinstance(min_b, int) or min_b < 1:
        raise InputError(expected("min_b as an int >= 1", repr(min_b), where="min_b"))
    try:
        for requested in DEFAULT_POINTS if points is None else points:
            point = requested
            while True:
                out_of_memory = False
                reason = ""
                try:
                    measured, wrong, verdict = _attempt(make, point, impl, timer)
                except Exception as error:
                    out_of_memory = is_out_of_memory(error)
                    reason = one_line(error)
                else:
                    results.append(
                        TrialResult(
                            requested=requested,
                            point=point,
                            impl=impl,
                            measurement=measured,
                            error=wrong,
                            correctness=verdict,
                        )
                    )
                    break
                # Outside the except block the traceback, and the tensors its frames hold,
                # are gone, so the cache can really be returned before the retry.
                _release_memory()
                if out_of_memory and point.b // 2 >= min_b:
                    point = point.with_b(point.b // 2)
                    continue
                if out_of_memory:
                    reason = f"CUDA out of memory down to b={point.b} (min_b {min_b})"
                results.append(
                    TrialResult(requested=requested, point=point, impl=impl, error=reason)
                )
                break
    except KeyboardInterrupt as error:
        # Ctrl-C on a long matrix must not lose the points already timed: the interrupt
        # goes on, carrying them.
        raise TrialsInterrupted(results) from error
    return results
