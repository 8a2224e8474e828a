"""EVALUATE: is the target met at every trial point? Then done; if not, back to SELECT.

A :class:`Target` says what fast enough means for a kernel: a share of the roofline floor
(``floor_pct=80``: the floor is at least 80 % of the measured time), a time per call
(``median=50, unit="us"``), a speedup over a baseline implementation (``speedup=1.2,
baseline="torch_compile"``), or several of them, at every trial point the rows hold or
at named ones. :func:`evaluate` checks it against benchmark rows
(:class:`~kernelopt.bench.BenchRow`, as ``kernelopt.bench.read_rows`` gives them) and
returns an :class:`Evaluation`: per point and criterion the value, the target and the
shortfall. A point (or a baseline) the rows do not hold is *missing*, never met. The next
step is DONE when every point meets every criterion; TUNE when every shortfall is small
(within :data:`SMALL_SHORTFALL_PCT` % of its target: a 1 us miss of a 50 us time): stay
in the current language and control level, and take the profile's next opportunity or
tune the configuration (step 4, STRATEGIZE); else back to SELECT (step 3: choose the
language and control level again for the points short of the target).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import attrs

from kernelopt._checks import finite
from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, expected
from kernelopt._numbers_text import digits_apart, readable
from kernelopt.bench.measurement import UNIT_SECONDS
from kernelopt.bench.records import BenchRow
from kernelopt.bench.trials import DEFAULT_POINTS
from kernelopt.experiments.records import Correctness
from kernelopt.workflow._fields import real_to_float, require_instance
from kernelopt.workflow._points import point_of, point_words
from kernelopt.workflow._rows import by_point, check_rows, floor_pct, one_gpu, one_impl, same_gpu
from kernelopt.workflow.observe import _point_terms, config_matches

__all__ = [
    "SMALL_SHORTFALL_PCT",
    "Check",
    "Criterion",
    "Evaluation",
    "NextStep",
    "PointResult",
    "Status",
    "Target",
    "evaluate",
]


class Criterion(TextEnum):
    """What a target bounds: floor share and speedup from below, time per call from above."""

    FLOOR_PCT = "floor_pct"
    MEDIAN = "median"
    SPEEDUP = "speedup"


class Status(TextEnum):
    """How a point (or one criterion at it) stands against the target."""

    MET = "met"
    SHORT = "short"  # measured, and short of the target
    MISSING = "missing"  # not measured: no row, no baseline row, or no floor in the row


class NextStep(TextEnum):
    """Where the loop goes after EVALUATE."""

    DONE = "done"
    # Every shortfall within SMALL_SHORTFALL_PCT of its target: the language and control
    # level are not what falls short; the next opportunity or tuning closes such a gap.
    TUNE = "tune"
    SELECT = "select"  # back to step 3: choose the language and control level again


# A shortfall at most this share of its target (1.58 pp of an 80 % floor is 2 %; 1 us of
# a 50 us time is 2 %) is small: a change of language and control level is for a gap
# that tuning within the current one is not expected to close.
SMALL_SHORTFALL_PCT = 5.0


def _positive(instance: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    finite(optional=True)(instance, attribute, value)
    # A bound of 0 is met (or missed) by every kernel; one below it names nothing. One
    # message for both: "a finite number >= 0" would invite the 0 refused next.
    if value is not None and value <= 0:
        raise InputError(
            expected("a number > 0 or None", repr(value), where=f"Target.{attribute.name}")
        )


def _percent(instance: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    finite(optional=True)(instance, attribute, value)
    if value is not None and not 0 < value <= 100:
        raise InputError(
            expected("a share of the floor in (0, 100] %", repr(value), where="Target.floor_pct")
        )


def _unit(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or value not in UNIT_SECONDS:
        raise InputError(
            expected(f"a unit in {tuple(UNIT_SECONDS)}", repr(value), where="Target.unit")
        )


def _points(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InputError(
            expected(
                "points as a list of point terms or trial names", repr(value), where="Target.points"
            )
        )
    found = tuple(value)
    for point in found:
        if not isinstance(point, str):
            raise InputError(
                expected("a point as text", type(point).__name__, where="Target.points")
            )
        # Refused under the argument's name: the point terms' own "point:" names no
        # argument of Target.
        _point_terms(point, where="Target.points")
    return found


# Significant digits a float holds at the most (digits_apart's limit too).
_MOST_DIGITS = 17


def _number(value: float) -> str:
    # Positional: a CPU run's 50 ms bound in us reads "50000 us", not "5e+04 us".
    return readable(value)


def _value(value: float, bound: float) -> str:
    """``value`` to 4 significant digits, or as many more as tell it from ``bound``: a
    speedup of 1.19999 shown as the bound's "1.2" would read as met beside "short"."""
    return readable(value, digits_apart(value, bound))


def _gap_text(check: Check) -> str:
    """The shortfall of ``check`` as the table shows it: the difference of the value and
    the bound as they are written, so that the cells agree (``72.73 %`` against
    ``>= 80 %`` falls short by ``7.27 pp``, not the ``7.271`` of the unrounded value).

    Parameters
    ----------
    check : Check
        A criterion at one point.

    Returns
    -------
    str
        ``-`` for a missing value, ``0`` for a met one, else the difference of the two
        written numbers, with the digits they hold.
    """
    if check.shortfall is None:
        return "-"
    if check.value is None or check.shortfall == 0:
        return _number(0.0)
    # Both written at the digits the value is shown with, which tell it from the bound.
    digits = digits_apart(check.value, check.bound)
    value, bound = (Decimal(readable(number, digits)) for number in (check.value, check.bound))
    gap = value - bound if check.criterion is Criterion.MEDIAN else bound - value
    if gap <= 0:
        return _number(0.0)
    # The exact difference of two written numbers holds no more digits than they do.
    shown = len(gap.normalize().as_tuple().digits)
    return readable(float(gap), min(max(shown, 1), _MOST_DIGITS))


@attrs.frozen(kw_only=True)
class Target:
    """What the kernel must reach, at every trial point (or at ``points``).

    Parameters
    ----------
    floor_pct : float, optional
        Least share of the roofline floor, % (the floor time over the measured time):
        ``80`` asks for a kernel within 1/0.8 of its floor.
    median : float, optional
        Most time per call, in ``unit``.
    unit : str
        Unit of ``median`` (``"us"``).
    speedup : float, optional
        Least speedup over ``baseline`` (its time over the kernel's, at the same point).
    baseline : str, optional
        The implementation the speedup is over (a row ``impl``); given exactly when
        ``speedup`` is.
    points : tuple of str
        The points to judge, as ``key=value`` terms (``"s=1,h=16"``) or trial names
        (``"decode"``); each selects every point of the rows it matches. Empty: every
        point the kernel's rows hold.

    Raises
    ------
    InputError
        When no criterion is given, a bound is not a number > 0 (a floor share above
        100 %), ``baseline`` and ``speedup`` are not given together, or a point does
        not read (``Target.points: Expected a point like 'b=32,s=1,t=4096' or a trial
        name (decode, speculative), got 'bogus'``).
    """

    # 80 and 80.0 are one target.
    floor_pct: float | None = attrs.field(default=None, converter=real_to_float, validator=_percent)
    median: float | None = attrs.field(default=None, converter=real_to_float, validator=_positive)
    unit: str = attrs.field(default="us", validator=_unit)
    speedup: float | None = attrs.field(default=None, converter=real_to_float, validator=_positive)
    baseline: str | None = None
    points: tuple[str, ...] = attrs.field(default=(), converter=_points)

    def __attrs_post_init__(self) -> None:
        if self.floor_pct is None and self.median is None and self.speedup is None:
            raise InputError(
                expected("at least one of floor_pct, median or speedup", "none", where="Target")
            )
        if (self.speedup is None) != (self.baseline is None):
            raise InputError(
                expected(
                    "speedup and baseline given together (the speedup is over the baseline)",
                    f"speedup={self.speedup!r}, baseline={self.baseline!r}",
                    where="Target",
                )
            )
        if self.baseline is not None and (not isinstance(self.baseline, str) or not self.baseline):
            raise InputError(
                expected("an implementation name", repr(self.baseline), where="Target.baseline")
            )

    def bounds(self) -> list[tuple[Criterion, float, str]]:
        """(criterion, bound, unit) of each criterion given, in a fixed order."""
        found = []
        if self.floor_pct is not None:
            found.append((Criterion.FLOOR_PCT, self.floor_pct, "%"))
        if self.median is not None:
            found.append((Criterion.MEDIAN, self.median, self.unit))
        if self.speedup is not None:
            found.append((Criterion.SPEEDUP, self.speedup, "x"))
        return found

    def describe(self) -> str:
        """``floor_pct >= 80 %, median <= 50 us at s=1`` in words."""
        parts = []
        for criterion, bound, unit in self.bounds():
            if criterion is Criterion.SPEEDUP:
                parts.append(f"speedup >= {_number(bound)}x over {self.baseline}")
            else:
                sign = "<=" if criterion is Criterion.MEDIAN else ">="
                parts.append(f"{criterion.value} {sign} {_number(bound)} {unit}")
        where = "; ".join(point_words(p) for p in self.points) if self.points else "every point"
        return f"{', '.join(parts)} at {where}"


@attrs.frozen(kw_only=True)
class Check:
    """One criterion at one point: the value measured against the bound.

    Parameters
    ----------
    criterion : Criterion
        What is bounded.
    bound : float
        The target's bound (a least floor share or speedup, a most time).
    value : float, optional
        What the rows give; None when they do not (see ``note``).
    unit : str
        ``"%"``, ``"x"`` or the target's time unit.
    note : str
        Why the value is missing, in words; empty otherwise.
    """

    criterion: Criterion
    bound: float
    value: float | None
    unit: str
    note: str = ""

    @property
    def status(self) -> Status:
        """MET, SHORT, or MISSING without a value."""
        if self.value is None:
            return Status.MISSING
        if self.criterion is Criterion.MEDIAN:
            return Status.MET if self.value <= self.bound else Status.SHORT
        return Status.MET if self.value >= self.bound else Status.SHORT

    @property
    def shortfall(self) -> float | None:
        """How far the value is from the bound, in ``unit`` (0 when met; None if missing)."""
        if self.value is None:
            return None
        gap = (
            self.value - self.bound
            if self.criterion is Criterion.MEDIAN
            else self.bound - self.value
        )
        return max(0.0, gap)

    @property
    def shortfall_pct(self) -> float | None:
        """The shortfall as a share of the bound, % (2.0 for 78.4 % against an 80 %
        floor); None if missing."""
        if self.shortfall is None:
            return None
        return self.shortfall / self.bound * 100.0


@attrs.frozen(kw_only=True)
class PointResult:
    """The target's criteria at one trial point.

    Parameters
    ----------
    point : str
        The point in ``key=value`` words (the rows' stated point, else their config);
        for a point the rows do not hold, the target's text for it.
    checks : tuple of Check
        One per criterion of the target.
    """

    point: str
    checks: tuple[Check, ...]

    @property
    def status(self) -> Status:
        """MET when every criterion is met; SHORT when one is short; else MISSING."""
        found = {check.status for check in self.checks}
        if found == {Status.MET}:
            return Status.MET
        return Status.SHORT if Status.SHORT in found else Status.MISSING


_COLUMNS = ("Point", "Criterion", "Value", "Target", "Shortfall", "Status")


@attrs.frozen(kw_only=True)
class Evaluation:
    """What :func:`evaluate` found: met or not, per point, and where the loop goes next.

    Parameters
    ----------
    target : Target
        The target judged.
    impl : str
        The implementation whose rows were judged.
    points : tuple of PointResult
        One per point judged, in the rows' (or the target's) order.
    """

    target: Target
    impl: str
    points: tuple[PointResult, ...]

    @property
    def met(self) -> bool:
        """Whether every point meets every criterion (never with no point judged)."""
        return bool(self.points) and all(p.status is Status.MET for p in self.points)

    @property
    def next_step(self) -> NextStep:
        """DONE when met; TUNE when some point is short and every shortfall is within
        :data:`SMALL_SHORTFALL_PCT` % of its target (stay in the current language); else
        SELECT (step 3). Points not measured do not decide it: they are measured first."""
        if self.met:
            return NextStep.DONE
        gaps = [
            check.shortfall_pct
            for point in self.points
            for check in point.checks
            if check.status is Status.SHORT and check.shortfall_pct is not None
        ]
        if gaps and max(gaps) <= SMALL_SHORTFALL_PCT:
            return NextStep.TUNE
        return NextStep.SELECT

    @property
    def short(self) -> tuple[str, ...]:
        """The points short of the target."""
        return tuple(p.point for p in self.points if p.status is Status.SHORT)

    @property
    def missing(self) -> tuple[str, ...]:
        """The points with a criterion the rows do not measure (and none short)."""
        return tuple(p.point for p in self.points if p.status is Status.MISSING)

    def render(self) -> str:
        """A verdict line, a table of every check and the next step (ends in a newline)."""
        verdict = "MET" if self.met else "NOT MET"
        lines = [
            f"Target {self.target.describe()}: {verdict} for {self.impl} "
            f"({sum(p.status is Status.MET for p in self.points)} of {len(self.points)} "
            "points met).",
            "",
            "| " + " | ".join(_COLUMNS) + " |",
            "|" + "|".join("-" * (len(c) + 2) for c in _COLUMNS) + "|",
        ]
        for point in self.points:
            for check in point.checks:
                sign = "<=" if check.criterion is Criterion.MEDIAN else ">="
                shown = None if check.value is None else _value(check.value, check.bound)
                value = "-" if shown is None else f"{shown} {check.unit}"
                # A floor share falls short by percentage points, not by a percentage of itself.
                gap_unit = "pp" if check.unit == "%" else check.unit
                gap = _gap_text(check)
                gap = gap if gap == "-" else f"{gap} {gap_unit}"
                status = check.status.value + (f" ({check.note})" if check.note else "")
                cells = (
                    point.point,
                    check.criterion.value,
                    value,
                    f"{sign} {_number(check.bound)} {check.unit}",
                    gap,
                    status,
                )
                lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        if self.met:
            lines.append("Next step: done.")
        else:
            why = []
            if self.short:
                why.append(f"short at {'; '.join(self.short)}")
            if self.missing:
                why.append(f"not measured at {'; '.join(self.missing)} (measure these first)")
            if self.next_step is NextStep.TUNE:
                lines.append(
                    "Next step: stay in this language and control level (step 4, STRATEGIZE): "
                    "take the profile's next opportunity or tune the configuration; every "
                    f"shortfall is within {_number(SMALL_SHORTFALL_PCT)} % of its target; "
                    f"{', '.join(why)}."
                )
            else:
                lines.append(
                    "Next step: back to SELECT (step 3): choose the language and control level "
                    f"again; {', '.join(why)}."
                )
        return "\n".join(lines) + "\n"


def _seconds(row: BenchRow) -> float | None:
    return row.median * UNIT_SECONDS[row.unit] if row.median > 0 else None


def _no_baseline(baseline: str | None, row: BenchRow, others: Sequence[BenchRow]) -> str:
    """Why a point has no baseline time: no row, or rows timed only another way."""
    if not others:
        return f"no {baseline} row"
    gpus = list(dict.fromkeys(r.gpu for r in others if r.gpu))
    if row.gpu and gpus and row.gpu not in gpus:
        return f"no {baseline} row on {row.gpu} (only {', '.join(gpus)})"
    caches = {r.cache for r in others} | {row.cache}

    def way(r: BenchRow) -> str:
        return r.mode if len(caches) == 1 else f"{r.mode}/{r.cache}"

    found = ", ".join(dict.fromkeys(way(r) for r in others))
    return f"no {baseline} row timed {way(row)} (only {found})"


def _unmatched(spec: str, impl: str, rows: Sequence[BenchRow]) -> str:
    """Why no row of ``impl`` answers the point ``spec``: for a trial name, the point it
    stands for and how to name the rows' own points.

    ``decode`` is MLA's ``b=32 s=1 t=4096``: on rows of other axes (``tokens=64``) it
    matched none, and "no v3 row" did not say what had been looked for.
    """
    named = {p.name: p for p in DEFAULT_POINTS}
    trial = named.get(spec.strip()) if "=" not in spec and "~" not in spec else None
    if trial is None:
        return f"no {impl} row"
    held = list(dict.fromkeys(point_of(row.config) for row in rows))
    shown = ", ".join(repr(p) for p in held[:3]) + (", ..." if len(held) > 3 else "")
    # One point in parentheses is that str, not a tuple of it, and Target refuses a str.
    shown += "," if len(held) == 1 else ""
    return (
        f"no {impl} row at {trial.name}, the trial point {point_words(trial.as_dict())}; "
        f"name the rows' own points by their terms instead: points=({shown})"
    )


def _checks(
    target: Target,
    row: BenchRow | None,
    base: BenchRow | None,
    impl: str,
    others: Sequence[BenchRow] = (),
    *,
    missing: str = "",
) -> tuple[Check, ...]:
    checks = []
    for criterion, bound, unit in target.bounds():
        value: float | None = None
        note = ""
        if row is None:
            note = missing or f"no {impl} row"
        elif criterion is Criterion.FLOOR_PCT:
            value = floor_pct(row)
            note = "" if value is not None else "the row states no floor"
        elif criterion is Criterion.MEDIAN:
            seconds = _seconds(row)
            value = None if seconds is None else seconds / UNIT_SECONDS[unit]
            note = "" if value is not None else "the row states no time"
        else:
            seconds = _seconds(row)
            before = None if base is None else _seconds(base)
            if before is None or seconds is None:
                note = (
                    _no_baseline(target.baseline, row, others)
                    if base is None
                    else "no time to compare"
                )
            else:
                value = before / seconds
        checks.append(Check(criterion=criterion, bound=bound, value=value, unit=unit, note=note))
    return tuple(checks)


def _timed_one_way(rows: Sequence[BenchRow], impl: str) -> None:
    ways = sorted({f"{row.mode}/{row.cache}" for row in rows})
    if len(ways) > 1:
        raise InputError(
            expected(
                f"rows of {impl} timed one way (choose the mode with mode=)",
                ", ".join(ways),
                where="rows",
            )
        )


def _passed_correctness(rows: Sequence[BenchRow], impl: str) -> None:
    """Refuse to judge ``impl`` where a row that counts (the last of a point) says its
    version failed correctness.

    A version that computes the wrong function meets no target however fast it is; its
    rows are kept as the attempt's record, and judged by nobody. A row without a verdict
    (``correctness`` None, as every row written before rows held one) or with PASS or
    UNKNOWN is judged as its time says. The baseline's rows are not checked: a speedup
    over a failing baseline is still a time against a time, as a BASELINE result with
    correctness FAIL is in the experiment log.

    Raises
    ------
    InputError
        ``rows: Expected rows of a version that passed correctness to judge a target, got
        rows of v3 with correctness FAIL (at hidden=512 rows=64)``.
    """
    failed = [
        point for point, row in by_point(rows).items() if row.correctness == Correctness.FAIL.value
    ]
    if failed:
        raise InputError(
            expected(
                "rows of a version that passed correctness to judge a target",
                f"rows of {impl} with correctness FAIL (at {'; '.join(failed)})",
                where="rows",
            )
        )


def evaluate(
    target: Target,
    rows: Sequence[BenchRow],
    *,
    impl: str | None = None,
    mode: str | None = None,
    allow_host_clock: bool = False,
) -> Evaluation:
    """Judge ``target`` against benchmark rows: met or not at each point, and the next step.

    Parameters
    ----------
    target : Target
        What to reach.
    rows : sequence of BenchRow
        Rows of the kernel (and of the target's baseline, for a speedup), as
        ``kernelopt.bench.read_rows`` gives them; keep the run you mean (filter by
        ``row.commit`` or ``row.timestamp``): at a repeated point the last row counts.
        Record each version's correctness in its rows
        (``row_from_measurement(..., correctness="PASS")``): a kernel whose row that
        counts says FAIL is refused; rows that do not say are judged by their times.
    impl : str, optional
        The kernel's implementation among the rows; default the only one besides the
        baseline.
    mode : str, optional
        Keep the rows timed in this mode (``"graph"``, ``"cold"``); needed when the
        kernel's rows were timed several ways, since the times differ by the method.
    allow_host_clock : bool
        Judge rows timed with the host clock (CPU, the Triton interpreter); they say
        nothing about a GPU, so they are refused without it.

    Returns
    -------
    Evaluation

    Raises
    ------
    InputError
        For anything but a Target and BenchRow rows, no rows (of ``impl``, the baseline or
        ``mode``), a kernel that is the target's baseline itself, rows timed several ways
        or on several GPUs, a kernel whose row of a point says correctness FAIL (no
        option judges it; the baseline's rows may say FAIL), or host-clock rows without
        ``allow_host_clock``. A speedup
        takes the baseline's rows of the kernel's GPU only (a row that names no GPU
        counts as any).

    Examples
    --------
    >>> from kernelopt.bench import BenchRow
    >>> from kernelopt.workflow import Target, evaluate
    >>> row = BenchRow(op="mla_decode", impl="v3", config={"b": 32, "s": 1, "t": 4096},
    ...                median=45.89, metrics={"floor_pct": 78.4})
    >>> result = evaluate(Target(floor_pct=80), [row])
    >>> result.met, result.next_step.value, round(result.points[0].checks[0].shortfall, 1)
    (False, 'select', 1.6)
    """
    require_instance(target, Target, "a Target", where="target")
    found = check_rows(rows, "rows")
    if mode is not None:
        modes = sorted({row.mode for row in found})
        # The baseline's rows of other modes stay: they say why a speedup is missing.
        found = [row for row in found if row.mode == mode or row.impl == target.baseline]
        if not any(row.mode == mode for row in found):
            raise InputError(expected(f"rows timed in mode {mode!r}", modes, where="rows"))
    if not found:
        raise InputError(expected("at least one benchmark row", "none", where="rows"))
    candidates = [row for row in found if row.impl != target.baseline]
    if target.baseline is not None and (impl == target.baseline or not candidates):
        # Its speedup over itself is 1.0, which would meet any bound up to 1.
        raise InputError(
            expected(
                f"rows of an implementation besides the baseline {target.baseline!r} "
                "to judge (impl=)",
                f"impl={impl!r}" if impl == target.baseline else f"only {target.baseline!r}",
                where="rows",
            )
        )
    chosen = one_impl(candidates, impl, None, "rows")
    mine = [row for row in found if row.impl == chosen]
    _timed_one_way(mine, chosen)
    _passed_correctness(mine, chosen)
    gpu = one_gpu(mine, chosen, "rows")
    base: dict[str, BenchRow] = {}
    elsewhere: dict[str, list[BenchRow]] = {}  # the baseline's rows timed another way
    used = list(mine)
    if target.baseline is not None:
        one_impl(found, target.baseline, None, "rows")  # refuses a baseline the rows lack
        # A speedup compares like with like: the baseline timed the way the kernel was,
        # on its GPU (another device's time would show the devices' difference).
        way = (mine[0].mode, mine[0].cache)

        def alike(r: BenchRow) -> bool:
            return (r.mode, r.cache) == way and same_gpu(r, gpu)

        theirs = [r for r in found if r.impl == target.baseline and alike(r)]
        base = by_point(theirs)
        used += theirs
        for r in found:
            if r.impl == target.baseline and not alike(r):
                elsewhere.setdefault(point_words(r.config), []).append(r)
    clocked = [row for row in used if row.host_clock]
    if clocked and not allow_host_clock:
        raise InputError(
            expected(
                "GPU timings (CUDA events) to judge a target (allow_host_clock=True judges "
                "host-clock ones)",
                f"rows of {clocked[0].impl} timed with the host clock",
                where="rows",
            )
        )
    keyed = by_point(mine)
    results: list[PointResult] = []
    if target.points:
        seen: set[str] = set()
        for spec in target.points:
            terms = _point_terms(spec)
            matched = [k for k, r in keyed.items() if config_matches(r.config, terms)]
            if not matched:
                missing = _unmatched(spec, chosen, mine)
                results.append(
                    PointResult(
                        point=point_words(spec),
                        checks=_checks(target, None, None, chosen, missing=missing),
                    )
                )
            for key in matched:
                if key not in seen:
                    seen.add(key)
                    row = keyed[key]
                    results.append(
                        PointResult(
                            point=point_of(row.config),
                            checks=_checks(
                                target, row, base.get(key), chosen, elsewhere.get(key, [])
                            ),
                        )
                    )
    else:
        results = [
            PointResult(
                point=point_of(row.config),
                checks=_checks(target, row, base.get(key), chosen, elsewhere.get(key, [])),
            )
            for key, row in keyed.items()
        ]
    return Evaluation(target=target, impl=chosen, points=tuple(results))
