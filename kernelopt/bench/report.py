"""The profiler's compact hand-off: ``## Profile: kernel version | b=X, s=X, t=X``.

:class:`ProfileReport` is the typed record and :meth:`ProfileReport.render` writes the
exact text form of the workflow's profiler contract::

    ## Profile: [kernel] [version] | b=X, s=X, t=X   # or the kernel's own axes: tokens=X, hidden=X
    ### Stages
    | Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
    ### Bottleneck: [Memory/Compute/Latency]-bound
    Root cause: [2 sentences]
    ### Top 3 Opportunities (ranked by estimated impact)
    1. [name] -- est. X% gain -- trigger: [metric=value]

    (gains 1 and 2 overlap: ...)   # only where two listed gains are one share

    (note: ...)   # only where the entries offered were not scoped to the kernel's family

    ### vs Baseline (if applicable)
    | Metric | Previous | Current | Change |

:func:`profile_report` builds one from a measurement and its roofline: TC% and DRAM% are
achieved rates over the measured ceilings, not hardware counters, and fields that need
counters (occupancy) read ``n/a (no counters)`` unless the caller supplies them. The
opportunities are the catalog entries whose triggers fire on the roofline metrics; each
estimated gain is computed, never invented: the time above the roofline floor as a share
of the measured time (the most any change doing the same work can save), less the launch
overhead when a graph measurement gave it (a change inside the kernel cannot save time
spent launching it), or, for launch-overhead remedies, the share of time CUDA graphs
removed in a measurement; each trigger says which of the two its gain is. They are ranked
by that gain, except that a latency-bound kernel's measured launch savings rank ahead of
every upper bound. Catalog entries that say how to measure (:data:`METHODS`) are no
opportunities. Given no family, the kernel's name gives it where a word of the name is a
family's or an alias's (``mla_decode`` is ``mla-decode``, ``top_k_gating`` is ``topk``);
where none is, only entries for every kernel family are offered, and the hand-off's note
line says so (see :func:`offered_catalog`). An ``experiment=`` number is written in the
heading, ``## Profile: mla_decode v2 exp 5 | ...``, the form the experiment-log readers
date a profile by. Two gains on the same side
that print the same are one share claimed twice, and a line under the list says that
they overlap (see :func:`_overlap_notes`).

Shares and rates are written to their usual decimals, or to two significant digits where
those decimals would write a value above 0 as 0 (:func:`small_kept`): a tiny kernel's
``0.0037% of roofline floor`` must not read as a floor computed wrong.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import attrs

from kernelopt._checks import breaks_lines, finite
from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, KernelOptError, expected
from kernelopt._numbers_text import significant
from kernelopt._words import and_list, count_text
from kernelopt.bench.measurement import UNIT_SECONDS, Measurement, number_text
from kernelopt.bench.records import AXIS_NAME_CANNOT_HOLD, axis_name_reads_back, point_text
from kernelopt.bench.roofline import (
    Roofline,
    RooflinePoint,
    check_same_device,
    launch_overhead_pct,
    measured_on,
)
from kernelopt.bench.trials import TrialPoint
from kernelopt.catalog.vocabulary import (
    FAMILIES,
    FAMILY_ALIASES,
    canonical_family_name,
    family_ancestors,
)
from kernelopt.experiments._validators import items_of, number_mapping, text
from kernelopt.experiments.points import split_terms

__all__ = [
    "NOTE_LEAD",
    "NO_COUNTERS",
    "UNREAD_TOP3",
    "BaselineMetric",
    "Bottleneck",
    "MetricMatcher",
    "Opportunity",
    "ProfileReport",
    "Stage",
    "classify",
    "kernel_family",
    "offered_catalog",
    "profile_report",
    "small_kept",
]

NO_COUNTERS = "n/a (no counters)"
# What a report read from a hand-off whose Top 3 no opportunity could be read from says in
# its place, "(the Top 3 could not be read: Expected ..., got ...)": "none fired" would
# say the catalog was asked and found nothing, when the table was only unreadable.
UNREAD_TOP3 = "the Top 3 could not be read"
# The number of the experiment a heading names after its version: "mla_decode v2 exp 5".
EXPERIMENT_NUMBER = re.compile(r"[0-9]+")
# Opens the note line under the Top 3: "(note: only entries for every kernel family ...)".
NOTE_LEAD = "note:"
# Catalog entries whose remedy is removing per-launch host work: their gain is the measured
# launch overhead, not the roofline gap.
_LAUNCH_REMEDIES = frozenset({"cuda-graphs", "buffer-persistence"})
# Catalog entries that say how to measure, not what to change: a hand-off has measured
# already, and "est. 52% gain" for drawing a roofline would rank a method as a remedy.
METHODS = frozenset({"roofline-analysis", "cuda-event-instrumentation"})
# What each gain is, after its trigger: the launch overhead a graph timing measured, or
# the time above the roofline floor, which every change inside the kernel shares.
UPPER_BOUND = "upper bound: the time above the roofline floor"
MEASURED = "measured: the share of time CUDA graphs removed"


class Bottleneck(TextEnum):
    """What limits the kernel, as the report's ``### Bottleneck:`` line says it."""

    MEMORY = "Memory-bound"
    COMPUTE = "Compute-bound"
    LATENCY = "Latency-bound"


def _cell(text: str) -> str:
    # Surrounding spaces would be read back as padding: strip them so the text round-trips.
    # Every line break the reader splits on (CR, form feed, U+2028...) becomes a space.
    return " ".join(text.replace("|", "/").splitlines()).strip()


def _one_line_text(value: object) -> bool:
    """Whether ``value`` is a str that reads back as itself at a line's end: no line break
    of any kind, no surrounding whitespace (the reader strips it)."""
    return isinstance(value, str) and not breaks_lines(value) and value == value.strip()


def _digits(value: float) -> str:
    """``value`` to 4 significant digits, but with all its integer digits (``69933``, not
    ``6.993e+04``), as the devlog's tables write numbers."""
    return number_text(value)


def _shown(value: float) -> float:
    """A baseline value as the table prints it (see :func:`_digits`)."""
    return float(_digits(value))


_UNIT_SUFFIX = re.compile(r"\(([^()]+)\)\s*$")


def _token(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    """A heading word: the heading ``## Profile: <kernel> <version> | ...`` splits on spaces."""
    if not isinstance(value, str) or not value or any(c.isspace() for c in value) or "|" in value:
        raise InputError(
            expected("a non-empty name without spaces or '|'", repr(value), where=attribute.name)
        )


def _kernel_name(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not _one_line_text(value) or not value or "|" in value:
        raise InputError(
            expected(
                "a non-empty one-line name without '|' or surrounding spaces",
                repr(value),
                where=attribute.name,
            )
        )


def _one_line(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not _one_line_text(value):
        raise InputError(
            expected(
                "one line of text without surrounding spaces", repr(value), where=attribute.name
            )
        )


def _entry_id(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    # Printed between backticks: "name (`entry-id`)"; empty where no entry is linked.
    if not isinstance(value, str) or "`" in value or any(c.isspace() for c in value):
        raise InputError(
            expected("an entry id without spaces or backticks", repr(value), where=attribute.name)
        )


def _opportunity_label(item: Opportunity) -> str:
    """``name (`entry-id`)``, or the contract's bare ``name`` for an item without an entry.

    An empty name, or one holding a backtick or `` -- ``, keeps the empty marker
    ``(``)``: without it a reader would find no name, or take part of it for an id or
    for the gain.
    """
    if item.entry_id or not item.name or "`" in item.name or " -- " in item.name:
        return f"{item.name} (`{item.entry_id}`)"
    return item.name


# The metric a launch-overhead remedy's trigger names: its gain is the time CUDA graphs remove.
_LAUNCH_METRIC = "launch_overhead_pct"


def _launch_side(item: Opportunity) -> bool:
    """Whether ``item``'s gain is the launch overhead, as :func:`profile_report` gives a
    launch remedy or an entry its ``launch_overhead_pct`` triggered."""
    return item.entry_id in _LAUNCH_REMEDIES or item.trigger.startswith(f"{_LAUNCH_METRIC}=")


def _overlap_notes(shown: Sequence[Opportunity]) -> list[str]:
    """The lines under the Top 3 that say which estimated gains are one share claimed twice.

    Each launch remedy's gain is the whole launch overhead, and each change inside the
    kernel's the whole time above the floor: two of them are the same time, not parts of
    it, and a reader adding ``est. 85% gain`` three times would expect 255 %. Opportunities
    on the same side whose gains print the same are named together; the note is made from
    the printed text alone, so a report read back from its rendering writes it again.

    Parameters
    ----------
    shown : sequence of Opportunity
        The opportunities as ranked and printed (the first three).

    Returns
    -------
    list of str
        One line per such group of two or more with a gain above 0, ``(gains 1, 2 and 3
        overlap: each is the same launch-overhead share, 85% of the time, not a separate part
        of it; together they save at most 85%)``; empty when no two claim the same share.
    """
    groups: dict[tuple[str, bool], list[int]] = {}
    for rank, item in enumerate(shown, start=1):
        key = (small_kept(item.gain_pct, 0), _launch_side(item))
        groups.setdefault(key, []).append(rank)
    notes = []
    for (gain, _side), ranks in groups.items():
        if len(ranks) < 2 or float(gain) <= 0:
            continue  # a 0 % gain claims no share to overlap
        named = all(shown[rank - 1].trigger.startswith(f"{_LAUNCH_METRIC}=") for rank in ranks)
        share = f"launch-overhead share, {gain}%" if named else f"{gain}%"
        notes.append(
            f"(gains {and_list([str(rank) for rank in ranks])} overlap: each is the same "
            f"{share} of the time, not a separate part of it; together they save at most "
            f"{gain}%)"
        )
    return notes


def _share(*, most: float = math.inf) -> Callable[[Any, Any, Any], None]:
    """An attrs validator: None, or a percentage in [0, ``most``].

    TC% and DRAM% are shares of measured ceilings, which a call may pass (a read-only
    kernel can beat a copy's bandwidth), so they have no most; no share is below 0.
    """
    numbers_only = finite(optional=True)
    shown = "a percentage >= 0" if math.isinf(most) else f"a percentage in [0, {most:g}]"

    def check(instance: Any, attribute: Any, value: Any) -> None:
        numbers_only(instance, attribute, value)
        if value is not None and not 0 <= value <= most:
            raise InputError(expected(shown, repr(value), where=attribute.name))

    return check


# Significant digits of a value that its usual decimals would write as 0.
_SMALL_DIGITS = 2


def small_kept(value: float, decimals: int) -> str:
    """``value`` to ``decimals`` decimals, or to two significant digits where those decimals
    would write a value other than 0 as 0.

    A tiny kernel reaches 0.11 GB/s and 0.0037 % of its roofline floor: written to the usual
    decimals both read ``0``, which a reader cannot tell from a count that is broken. The
    text is written positionally (``0.0037``, never ``3.7e-03``), as the devlog reads a
    floor share back, and reads back as itself: a value whose two digits round up to the
    usual decimals' step (``0.0496`` to ``0.05``, shown at one decimal) is written at those
    decimals (``0.1``), which a reader gets back unchanged.

    Parameters
    ----------
    value : float
        The number (a percentage, a rate); finite.
    decimals : int
        Decimals it is usually written with, >= 0.

    Returns
    -------
    str
        ``f"{value:.{decimals}f}"`` (``"48.3"``, ``"0.0"`` for 0), or ``"0.0037"``.

    Examples
    --------
    >>> small_kept(48.31, 1), small_kept(0.003712, 0), small_kept(0.0, 1), small_kept(0.0496, 1)
    ('48.3', '0.0037', '0.0', '0.1')
    """
    fixed = f"{value:.{decimals}f}"
    if value == 0 or float(fixed) != 0:
        return fixed
    small = significant(value, _SMALL_DIGITS)
    stepped = f"{float(small):.{decimals}f}"
    return small if float(stepped) == 0 else stepped


def _signed_kept(value: float, decimals: int) -> str:
    """:func:`small_kept` with its sign always written (``+0.0037``, ``-36.3``, ``+0.0``)."""
    text = small_kept(value, decimals)
    return text if text.startswith("-") else f"+{text}"


def _pct(value: float | None) -> str:
    return NO_COUNTERS if value is None else small_kept(value, 1)


@attrs.frozen(kw_only=True)
class Stage:
    """One row of the Stages table.

    Parameters
    ----------
    name : str
        The stage (a kernel, or a part timed by leaving the rest out).
    duration : float
        Time of the stage, in ``unit``.
    unit : str
        ``"us"`` by default.
    tc_pct, dram_pct : float, optional
        Achieved FLOP/s and bytes/s over the measured ceilings, % (>= 0; above 100 when
        the call beats a measured ceiling).
    occupancy_pct : float, optional
        Achieved occupancy from a profiler, % in [0, 100]; None renders
        ``n/a (no counters)``.
    bottleneck : str
        ``Memory-bound``, ``Compute-bound`` or ``Latency-bound``.
    key_issue : str
        One phrase.
    """

    name: str = attrs.field(validator=text(nonempty=False))
    duration: float = attrs.field(validator=finite(minimum=0))
    unit: str = attrs.field(default="us", validator=_token)
    tc_pct: float | None = attrs.field(default=None, validator=_share())
    dram_pct: float | None = attrs.field(default=None, validator=_share())
    occupancy_pct: float | None = attrs.field(default=None, validator=_share(most=100.0))
    bottleneck: str = attrs.field(default="", validator=text(nonempty=False))
    key_issue: str = attrs.field(default="", validator=text(nonempty=False))


@attrs.frozen(kw_only=True)
class Opportunity:
    """One ranked opportunity, linked to its catalog entry.

    Parameters
    ----------
    name : str
        The catalog entry's name.
    entry_id : str
        The catalog entry's id.
    gain_pct : float
        Estimated share of the time it could save, % (see the module docstring).
    trigger : str
        The metric that fired, as ``metric=value``.
    """

    name: str = attrs.field(validator=_one_line)
    entry_id: str = attrs.field(validator=_entry_id)
    gain_pct: float = attrs.field(validator=finite())
    trigger: str = attrs.field(validator=_one_line)


# The micro sign and the Greek mu both spell microseconds; the table writes "us".
_MICRO = {"\u00b5s": "us", "\u03bcs": "us"}


def _time_unit(unit: object) -> str:
    # Refused here, as the converter runs first: a list failed with "unhashable type".
    if not isinstance(unit, str):
        raise InputError(expected("a str", type(unit).__name__, where="unit"))
    return _MICRO.get(unit, unit)


@attrs.frozen(kw_only=True)
class BaselineMetric:
    """One row of the vs-Baseline table.

    ``unit`` ``"%"`` marks a percentage: its change is in percentage points; other
    metrics change by a relative percentage. A time unit (``"us"``, ``"ms"``...) is
    printed after the metric's name (``Median (us)``) unless the name already ends so;
    ``µs`` is stored as ``us``.
    """

    metric: str = attrs.field(validator=text(nonempty=False))
    previous: float = attrs.field(validator=finite())
    current: float = attrs.field(validator=finite())
    unit: str = attrs.field(default="", converter=_time_unit)

    @property
    def change(self) -> str:
        """``-36.8%`` (relative) or ``+12.3 pp`` (for percentages).

        Computed from Previous and Current as the table prints them (4 significant
        digits), so a reader recomputing it from the text gets the same cell.
        """
        previous, current = _shown(self.previous), _shown(self.current)
        if self.unit == "%":
            return f"{_signed_kept(current - previous, 1)} pp"
        if previous == 0:
            return "n/a"
        return f"{_signed_kept((current / previous - 1.0) * 100.0, 1)}%"

    @property
    def label(self) -> str:
        """The Metric cell: the name, with ``(unit)`` after it for a time unit."""
        name = _cell(self.metric)
        if self.unit not in UNIT_SECONDS:
            return name
        found = _UNIT_SUFFIX.search(name)
        if found is not None and found.group(1).strip() == self.unit:
            return name
        return f"{name} ({self.unit})".strip()


def profile_point(value: object, *, where: str = "point") -> TrialPoint | str:
    """The trial point of a profile hand-off: a TrialPoint where b, s and t are given, else
    the point's ``name=int`` terms in their one spelling (``point_text``: sorted by name),
    as the devlog, ``evaluate`` and ``learn`` keep a point of a kernel's own axes
    (``hidden=7168 tokens=4096``, ``e=8 m=512 topk=2``).

    Parameters
    ----------
    value : TrialPoint, mapping or str
        A TrialPoint, a mapping of axis names to integers (``{"tokens": 4096}``; a
        TrialPoint as :func:`kernelopt.workflow.to_dict` writes it too), or ``name=int``
        terms (``"tokens=4096, hidden=7168"``).
    where : str
        The argument named in errors.

    Returns
    -------
    TrialPoint or str
        A TrialPoint for a point with b, s and t (so an attention point is recorded and
        spelled as it always was); otherwise ``name=int`` words, sorted by name.

    Raises
    ------
    InputError
        For anything else, a point of no axis, an axis name a written point would not
        read back as itself, or a value that is not an integer >= 1.
    """
    if isinstance(value, TrialPoint):
        return value
    if isinstance(value, str):
        terms = split_terms(value)
        if any(not sep or not key for key, sep, _ in terms):
            raise InputError(
                expected(
                    "a point of name=integer terms ('tokens=4096, hidden=7168')",
                    repr(value),
                    where=where,
                )
            )
        axes: dict[str, Any] = {}
        for key, _, text_value in terms:
            if key in axes:
                # The later value silently won: the report then named another point.
                raise InputError(
                    expected("each axis of a point once", f"{value!r} ({key} twice)", where=where)
                )
            axes[key] = int(text_value) if re.fullmatch(r"[-+]?\d+", text_value) else text_value
    elif isinstance(value, Mapping):
        if _written_trial_point(value):
            extra = value["extra"]
            return TrialPoint(
                b=value["b"], s=value["s"], t=value["t"], name=value["name"], extra=dict(extra)
            )
        axes = {key: _axis_value(axis) for key, axis in value.items()}
    else:
        # A str failed with "'str' object has no attribute 'items'".
        raise InputError(
            expected(
                "a TrialPoint, a mapping of axes to integers ({'b': 32, 's': 1, 't': 4096}, "
                "{'tokens': 4096}) or name=integer terms",
                repr(value),
                where=where,
            )
        )
    if all(axis in axes for axis in _TRIAL_AXES):
        # TrialPoint checks its axes, in the words it always used (``b: Expected ...``).
        extra = {k: v for k, v in axes.items() if k not in _TRIAL_AXES}
        return TrialPoint(b=axes["b"], s=axes["s"], t=axes["t"], extra=extra)
    if not axes:
        raise InputError(expected("a point with at least one axis", repr(value), where=where))
    for key, axis in axes.items():
        if not isinstance(key, str) or not axis_name_reads_back(key):
            raise InputError(
                expected(f"axis names without {AXIS_NAME_CANNOT_HOLD}", repr(key), where=where)
            )
        if not isinstance(axis, int) or isinstance(axis, bool) or axis < 1:
            raise InputError(expected("each axis an integer >= 1", f"{key}={axis!r}", where=where))
    return point_text(axes)


# The axes of a TrialPoint: a point holding all three is one, as it always was.
_TRIAL_AXES = ("b", "s", "t")


def _written_trial_point(value: Mapping[Any, Any]) -> bool:
    """Whether ``value`` is a TrialPoint as ``to_dict`` writes it (b, s, t, its name and
    a mapping of extra axes), which ``from_dict`` gives back to be read as one."""
    return (
        set(value) == {*_TRIAL_AXES, "name", "extra"}
        and isinstance(value["name"], str)
        and isinstance(value["extra"], Mapping)
    )


def _axis_value(value: object) -> Any:
    """A numpy or other integer as an int; anything else as given, for TrialPoint to refuse
    by name (``int()`` would read 32.7 as 32 and a flag as 1)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return value


def _stages(value: Iterable[Stage]) -> tuple[Stage, ...]:
    return items_of(value, Stage, "stages")


def _some_stage(_instance: object, _attribute: object, value: tuple[Stage, ...]) -> None:
    # A profile that timed nothing has no Stages row; its hand-off would not read back,
    # and a devlog row made from it would have no time.
    if not value:
        raise InputError(expected("at least one stage", "none", where="stages"))


def _opportunities(value: Iterable[Opportunity]) -> tuple[Opportunity, ...]:
    return items_of(value, Opportunity, "opportunities")


def _baseline_rows(value: Iterable[BaselineMetric]) -> tuple[BaselineMetric, ...]:
    return items_of(value, BaselineMetric, "baseline")


def _experiment(_instance: object, _attribute: object, value: int | None) -> None:
    check_experiment(value)


def check_experiment(value: object) -> None:
    """Refuse, before anything is computed, an experiment number that is not an int >= 0."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise InputError(
            expected("an experiment number (an int >= 0) or None", repr(value), where="experiment")
        )


def _unambiguous_heading(instance: ProfileReport) -> None:
    """Refuse a kernel and version whose heading would read as naming an experiment: a
    kernel ``"my fast exp"`` of version ``"2"`` writes ``my fast exp 2``, which the reader
    takes for kernel ``my``, version ``fast`` and experiment 2 (two words at least before
    ``exp N``, so ``mla_decode exp 5`` stays a kernel and a version)."""
    words = instance.kernel.split()
    if (
        instance.experiment is None
        and len(words) >= 3
        and words[-1].lower() == "exp"
        and EXPERIMENT_NUMBER.fullmatch(instance.version) is not None
    ):
        raise InputError(
            expected(
                "a kernel and version that do not end the heading in 'exp N' (its experiment)",
                repr(f"{instance.kernel} {instance.version}"),
                where="version",
            )
        )


def _read_or_unread(instance: ProfileReport, attribute: attrs.Attribute[str], value: str) -> None:
    """A Top 3 that could not be read holds no opportunities: its rendering prints one of
    the two, and a reader would take the other for all there is."""
    if value and instance.opportunities:
        raise InputError(
            expected(
                "no opportunities with a Top 3 that could not be read",
                count_text(len(instance.opportunities), "opportunity", "opportunities"),
                where=attribute.name,
            )
        )


@attrs.frozen(kw_only=True)
class ProfileReport:
    """The profiler's compact summary of one kernel version at one trial point.

    Parameters
    ----------
    kernel, version : str
        What was profiled.
    point : TrialPoint or str
        Where: a TrialPoint for a point with b, s and t, else the point's ``name=int``
        terms in their one spelling (``hidden=7168 tokens=4096``); given as a TrialPoint,
        a mapping of axes to integers or such terms (see :func:`profile_point`).
    stages : tuple of Stage
        The Stages table: at least one stage (``stages: Expected at least one stage, got
        none``).
    bottleneck : Bottleneck
        The verdict line.
    root_cause : str
        Two sentences.
    opportunities : tuple of Opportunity
        Ranked, at most three rendered.
    baseline : tuple of BaselineMetric
        The vs-Baseline table; empty when there is no baseline.
    top3_unread : str
        Why the Top 3 could not be read (``Expected ..., got ...``), for a report read from
        a hand-off whose Top 3 no opportunity could be read from; it then holds no
        opportunities and renders ``(the Top 3 could not be read: <why>)`` where a report
        without opportunities says that no catalog trigger fired. Empty when the Top 3
        was read, or said there is none.
    experiment : int, optional
        The experiment whose version was profiled: the heading then reads ``## Profile:
        <kernel> <version> exp <N> | ...``, the form the experiment-log readers date a
        profile by. None (the default) writes no number.
    note : str
        One line on which catalog entries the opportunities were chosen from, written
        under the Top 3 as ``(note: ...)``; :func:`profile_report` says there when the
        kernel's family was neither given nor read from its name, so that only entries
        for every kernel family were offered. Empty for none.
    """

    kernel: str = attrs.field(validator=_kernel_name)
    version: str = attrs.field(validator=_token)
    point: TrialPoint | str = attrs.field(converter=profile_point)
    stages: tuple[Stage, ...] = attrs.field(converter=_stages, validator=_some_stage)
    bottleneck: Bottleneck = attrs.field(converter=Bottleneck)
    root_cause: str = attrs.field(validator=text(nonempty=False))
    opportunities: tuple[Opportunity, ...] = attrs.field(default=(), converter=_opportunities)
    baseline: tuple[BaselineMetric, ...] = attrs.field(default=(), converter=_baseline_rows)
    top3_unread: str = attrs.field(default="", validator=[_one_line, _read_or_unread])
    experiment: int | None = attrs.field(default=None, validator=_experiment)
    note: str = attrs.field(default="", validator=_one_line)

    def __attrs_post_init__(self) -> None:
        _unambiguous_heading(self)

    def render(self) -> str:
        """The report as markdown text in the contract's exact form (ends in a newline)."""
        # The point's one spelling (b, s, t, then the other axes sorted), comma-separated
        # as the contract writes it.
        where = ", ".join(str(self.point).split())
        name = f"{self.kernel} {self.version}"
        if self.experiment is not None:
            name += f" exp {self.experiment}"
        lines = [
            f"## Profile: {name} | {where}",
            "### Stages",
            "| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |",
            "|-------|----------|-----|-------|------|------------|-----------|",
        ]
        for stage in self.stages:
            cells = (
                _cell(stage.name),
                f"{_digits(stage.duration)} {stage.unit}",
                _pct(stage.tc_pct),
                _pct(stage.dram_pct),
                _pct(stage.occupancy_pct),
                _cell(stage.bottleneck),
                _cell(stage.key_issue),
            )
            lines.append("| " + " | ".join(cells) + " |")
        lines += [
            f"### Bottleneck: {self.bottleneck.value}",
            f"Root cause: {' '.join(self.root_cause.split())}",
            "### Top 3 Opportunities (ranked by estimated impact)",
        ]
        if self.top3_unread:
            lines.append(f"({UNREAD_TOP3}: {self.top3_unread})")
        elif not self.opportunities:
            lines.append("(none: no catalog trigger fired on these metrics)")
        for rank, item in enumerate(self.opportunities[:3], start=1):
            lines.append(
                f"{rank}. {_opportunity_label(item)} -- est. {small_kept(item.gain_pct, 0)}% "
                f"gain -- trigger: {item.trigger}"
            )
        lines += [line for note in _overlap_notes(self.opportunities[:3]) for line in ("", note)]
        if self.note:
            lines += ["", f"({NOTE_LEAD} {self.note})"]
        if self.baseline:
            lines += [
                "",
                "### vs Baseline",
                "| Metric | Previous | Current | Change |",
                "|--------|----------|---------|--------|",
            ]
            for row in self.baseline:
                shown = (row.label, _digits(row.previous), _digits(row.current), row.change)
                lines.append("| " + " | ".join(shown) + " |")
        return "\n".join(lines) + "\n"


class MetricMatcher(Protocol):
    """What :func:`profile_report` needs of a catalog: ``Catalog.match_metrics``."""

    def match_metrics(self, metrics: Mapping[str, float]) -> Sequence[Any]: ...


def classify(point: RooflinePoint, *, latency_below_pct: float = 20.0) -> Bottleneck:
    """Memory- or compute-bound by the roofline, latency-bound when the binding ceiling is
    used below ``latency_below_pct`` % (neither bytes nor FLOPs are what the time waits on)."""
    used = point.dram_pct if point.roofline.bound == "memory" else point.tc_pct
    if used < latency_below_pct:
        return Bottleneck.LATENCY
    return Bottleneck.MEMORY if point.roofline.bound == "memory" else Bottleneck.COMPUTE


# Digits past which two numbers that still read the same are taken as one: the intensity
# (flops / bytes) and the ridge (peak / bandwidth) of a balanced call differ by rounding.
_MOST_DIGITS = 12


def _told_apart(first: float, second: float) -> tuple[str, str]:
    """``first`` and ``second`` to 3 significant digits, or to as many more (up to 12) as
    it takes for two different numbers to read differently: "163 is above the ridge 163"
    says nothing, "163.3 is above the ridge 163.2" does."""
    for digits in range(3, _MOST_DIGITS + 1):
        texts = f"{first:.{digits}g}", f"{second:.{digits}g}"
        if texts[0] != texts[1]:
            return texts
    return texts


def reads_as_ridge(arith_intensity: float, ridge: float) -> bool:
    """Whether an arithmetic intensity is at the ridge: the two read the same to 12
    significant digits (a balanced call's two differ by floating-point rounding alone).

    Parameters
    ----------
    arith_intensity, ridge : float
        FLOP per byte of the call, and where the device's ceilings meet.

    Returns
    -------
    bool
        True when no printed digit tells them apart.
    """
    first, second = _told_apart(arith_intensity, ridge)
    return first == second


def ridge_clause(arith_intensity: float, ridge: float, *, bound: str) -> str:
    """Where a call's arithmetic intensity sits against the ridge, and which ceiling sets
    the floor, as the report's root cause says it (the profile from benchmark rows too).

    Parameters
    ----------
    arith_intensity, ridge : float
        FLOP per byte of the call, and where the device's ceilings meet.
    bound : {"memory", "compute", "balanced"}
        The ceiling that sets the floor; ``"balanced"`` for a call at the ridge (see
        :func:`reads_as_ridge`).

    Returns
    -------
    str
        ``"Arithmetic intensity 100 FLOP/B is at the ridge, so bytes and FLOPs set the same
        floor"`` for a balanced call; otherwise ``"... is below the ridge ... FLOP/B, so
        bytes set the floor"`` or ``"... is above ..., so FLOPs set the floor"``, the two
        numbers to as many digits as it takes them to read differently (``163.3`` and
        ``163.2``, not ``163`` twice).

    Raises
    ------
    InputError
        For a ``bound`` other than the three.
    """
    if bound == "balanced":
        # "100 is below the ridge 100" was written for a call at the ridge.
        return (
            f"Arithmetic intensity {arith_intensity:.3g} FLOP/B is at the ridge, so bytes "
            "and FLOPs set the same floor"
        )
    intensity, shown_ridge = _told_apart(arith_intensity, ridge)
    if bound == "memory":
        return (
            f"Arithmetic intensity {intensity} FLOP/B is below the ridge {shown_ridge} "
            "FLOP/B, so bytes set the floor"
        )
    if bound == "compute":
        return (
            f"Arithmetic intensity {intensity} FLOP/B is above the ridge {shown_ridge} "
            "FLOP/B, so FLOPs set the floor"
        )
    raise InputError(expected("'memory', 'compute' or 'balanced'", repr(bound), where="bound"))


def _intensity_side(line: Roofline) -> str:
    """The root cause's first clause: where the intensity sits against the ridge, and
    which ceiling sets the floor, at what time and rate."""
    ceilings = line.ceilings
    floor_us = _digits(line.floor_s * 1e6)
    balanced = line.memory_s == line.compute_s or reads_as_ridge(line.arith_intensity, line.ridge)
    bound = "balanced" if balanced else line.bound
    rates = {
        "balanced": f"{ceilings.copy_tb_s:.2f} TB/s and {ceilings.matmul_tflop_s:.0f} TFLOP/s",
        "memory": f"{ceilings.copy_tb_s:.2f} TB/s",
        "compute": f"{ceilings.matmul_tflop_s:.0f} TFLOP/s",
    }
    clause = ridge_clause(line.arith_intensity, line.ridge, bound=bound)
    return f"{clause} ({floor_us} us at {rates[bound]})"


def _root_cause(point: RooflinePoint, bottleneck: Bottleneck) -> str:
    line = point.roofline
    side = _intensity_side(line)
    first = f"{side}, {small_kept(point.floor_pct, 0)}% of the measured time."
    achieved = (
        f"{small_kept(point.bytes_per_s / 1e9, 0)} GB/s "
        f"({small_kept(point.dram_pct, 0)}% of the copy bandwidth) and "
        f"{significant(point.flop_per_s / 1e12, 3)} TFLOP/s "
        f"({small_kept(point.tc_pct, 0)}% of the matmul rate)"
    )
    if bottleneck is Bottleneck.LATENCY:
        launch = ""
        if point.launch_overhead_pct is not None:
            removed = small_kept(point.launch_overhead_pct, 0)
            launch = f"; CUDA graphs remove {removed}% of the time"
        second = (
            f"It reaches only {achieved}, so it waits on latency (too little work in flight, "
            f"serial dependences or launches){launch}."
        )
    else:
        second = f"It reaches {achieved}."
    return f"{first} {second}"


def _trigger(match: Any, metrics: Mapping[str, float]) -> tuple[str, str | None]:
    """``metric=value`` for each metric the match's first metric reason names, in order."""
    reasons = [str(reason) for reason in getattr(match, "reasons", ())]
    for reason in reasons:
        found = sorted(
            (hit.start(), name)
            for name in metrics
            if (hit := re.search(rf"\b{re.escape(name)}\b", reason)) is not None
        )
        if found:
            names = [name for _, name in found][:3]
            return ", ".join(f"{n}={metrics[n]:.3g}" for n in names), names[0]
    return (reasons[0] if reasons else "-"), None


def profile_report(
    *,
    kernel: str,
    version: str,
    point: TrialPoint | Mapping[str, int] | str,
    measurement: Measurement,
    roofline: Roofline,
    graph: Measurement | None = None,
    baseline: Measurement | None = None,
    stages: Sequence[Stage] | None = None,
    extra_metrics: Mapping[str, float] | None = None,
    catalog: MetricMatcher | None = None,
    latency_below_pct: float = 20.0,
    family: str | None = None,
    language: str | None = None,
    experiment: int | None = None,
) -> ProfileReport:
    """Build the profile hand-off of one kernel version from its timing and roofline.

    Parameters
    ----------
    kernel, version : str
        What was profiled.
    point : TrialPoint, mapping or str
        The trial point: ``b``, ``s``, ``t`` and extra axes, or a kernel's own integer
        axes (``{"tokens": 4096, "hidden": 7168}``, ``"e=8, m=512, topk=2"``); see
        :func:`profile_point`.
    measurement : Measurement
        The kernel's timing at ``point`` (events; cold by default).
    roofline : Roofline
        Its cost against the device's ceilings.
    graph : Measurement, optional
        The same call timed in graph mode: gives ``launch_overhead_pct``.
    baseline : Measurement, optional
        The previous version at the same point, timed in the same mode (cold, hot or
        graph) as ``measurement``: fills the vs-Baseline table.
    stages : sequence of Stage, optional
        The Stages table; default one row for the whole kernel.
    extra_metrics : mapping, optional
        More trigger metrics the caller measured (``occupancy_pct``, ``kv_splits``,
        ``waves``, ``regs_per_thread``...). A ``launch_overhead_pct`` given here sets the
        gains as a ``graph`` timing would (it takes the place of one).
    catalog : object with ``match_metrics``, optional
        Default ``kernelopt.catalog.Catalog.builtin()``.
    latency_below_pct : float
        See :func:`classify`; a percentage in [0, 100].
    family : str, optional
        The kernel's family (``"softmax"``, ``"mla-decode"``): opportunities are then only
        entries for it or its ancestors (``Catalog.query(family=...)``). Without it, the
        family a word of ``kernel`` names (``mla_decode`` is ``mla-decode``; see
        :func:`kernel_family`), else only entries for every kernel family, which the
        hand-off's note line says: an MLA tile load is never offered to a sampler. A
        catalog without ``query`` is asked as it is.
    language : str, optional
        The kernel's language (``"triton"``, ``"cuda"``): opportunities are then only
        shared entries and that language's (``Catalog.query(language=...)``, as
        ``kernelopt catalog match --language``), so a Triton kernel is not offered
        warp specialization written for CUDA.
    experiment : int, optional
        The experiment whose version this is: the heading reads ``## Profile: <kernel>
        <version> exp <N> | ...``, as the experiment-log readers date a profile.

    Raises
    ------
    KernelOptError
        When no catalog is given and the built-in catalog cannot be loaded.
    InputError
        For a family or language the catalog does not know, a catalog without ``query``
        (with ``family`` or ``language``), a
        baseline timed in another mode than ``measurement``, or a ``graph`` timing not
        in graph mode or made on another device than ``measurement``; before anything
        is computed, for a ``measurement``, ``graph`` or
        ``baseline`` that is no Measurement, a ``roofline`` that is no Roofline, a
        ``point`` that is neither a TrialPoint nor a mapping, ``stages`` that are not a
        sequence of Stage, ``extra_metrics`` that are not a mapping of str to numbers, a
        ``catalog`` without ``match_metrics``, a ``latency_below_pct`` outside [0, 100]
        (NaN included), an ``extra_metrics["launch_overhead_pct"]`` outside [0, 100], an
        ``experiment`` that is not an int >= 0, or
        a ``measurement`` or ``baseline`` made on another device than the roofline's
        ceilings (a CPU timing on a GPU's roofline).
    """
    _check_arguments(measurement, roofline, graph, baseline, latency_below_pct)
    given_metrics = {} if extra_metrics is None else number_mapping(extra_metrics, "extra_metrics")
    given_stages = None if stages is None else items_of(stages, Stage, "stages")
    check_catalog(catalog)
    check_experiment(experiment)
    overhead = _launch_overhead(measurement, graph, given_metrics)
    placed = roofline.place(measurement, launch_overhead_pct=overhead)
    metrics = {**placed.metrics(), **given_metrics}
    bottleneck = classify(placed, latency_below_pct=latency_below_pct)
    if catalog is None:
        catalog = _builtin_catalog()
    catalog, note = offered_catalog(catalog, kernel, family=family, language=language)
    opportunities = []
    for match in catalog.match_metrics(metrics):
        entry = match.entry
        kind = getattr(getattr(entry, "kind", None), "value", getattr(entry, "kind", ""))
        if kind == "anti-pattern" or str(entry.id) in METHODS:
            continue  # what to stop doing, or how to measure: not opportunities
        trigger, metric = _trigger(match, metrics)
        launch_side = entry.id in _LAUNCH_REMEDIES or metric == "launch_overhead_pct"
        measured = launch_side and overhead is not None
        if overhead is None:
            gain = placed.gap_pct
        elif launch_side:
            gain = overhead
        else:
            gain = max(0.0, placed.gap_pct - overhead)
        opportunities.append(
            (
                measured_first(bottleneck, measured, overhead),
                -gain,
                -float(getattr(match, "score", 0.0)),
                Opportunity(
                    name=str(entry.name),
                    entry_id=str(entry.id),
                    gain_pct=gain,
                    trigger=f"{trigger} ({MEASURED if measured else UPPER_BOUND})",
                ),
            )
        )
    opportunities.sort(key=lambda item: (*item[:3], item[3].entry_id))
    occupancy = metrics.get("occupancy_pct")
    if given_stages is None:
        given_stages = (
            Stage(
                name=kernel,
                duration=measurement.median,
                unit=measurement.unit,
                tc_pct=placed.tc_pct,
                dram_pct=placed.dram_pct,
                occupancy_pct=occupancy,
                bottleneck=bottleneck.value,
                key_issue=f"{small_kept(placed.floor_pct, 0)}% of roofline floor",
            ),
        )
    rows: list[BaselineMetric] = []
    if baseline is not None:
        if baseline.mode != measurement.mode:
            raise InputError(
                expected(
                    f"a baseline timed in mode {measurement.mode!r}, as the measurement",
                    repr(baseline.mode),
                    where="baseline",
                )
            )
        before = roofline.place(baseline)
        now = measurement.to_unit(baseline.unit)
        rows = [
            BaselineMetric(
                metric=f"Median ({baseline.unit})",
                previous=baseline.median,
                current=now.median,
                unit=baseline.unit,
            ),
            BaselineMetric(
                metric=f"P80 ({baseline.unit})",
                previous=baseline.p80,
                current=now.p80,
                unit=baseline.unit,
            ),
            BaselineMetric(
                metric="Floor %", previous=before.floor_pct, current=placed.floor_pct, unit="%"
            ),
            BaselineMetric(
                metric="DRAM %", previous=before.dram_pct, current=placed.dram_pct, unit="%"
            ),
            BaselineMetric(metric="TC %", previous=before.tc_pct, current=placed.tc_pct, unit="%"),
        ]
    if not math.isfinite(placed.floor_pct):
        raise InputError(expected("a finite roofline", placed.floor_pct))
    root_cause = _root_cause(placed, bottleneck)
    if measurement.backend == "cpu-perf-counter":
        root_cause = HOST_CLOCK_WARNING + root_cause
    return ProfileReport(
        kernel=kernel,
        version=version,
        point=point,
        stages=given_stages,
        bottleneck=bottleneck,
        root_cause=root_cause,
        opportunities=[item for *_, item in opportunities],
        baseline=rows,
        experiment=experiment,
        note=note,
    )


def _check_arguments(
    measurement: object,
    roofline: object,
    graph: object,
    baseline: object,
    latency_below_pct: object,
) -> None:
    """Refuse, by name, arguments of the wrong kind before anything is computed: a Cost
    for the roofline failed with "'Cost' object has no attribute 'place'", and a
    ``latency_below_pct`` of ``"20"`` with a TypeError naming neither."""
    given = {"measurement": measurement, "graph": graph, "baseline": baseline}
    for name, value in given.items():
        if not (isinstance(value, Measurement) or (value is None and name != "measurement")):
            raise InputError(expected("a Measurement", type(value).__name__, where=name))
    if not isinstance(roofline, Roofline):
        raise InputError(
            expected(
                "a Roofline (Roofline(ceilings=..., cost=...))",
                type(roofline).__name__,
                where="roofline",
            )
        )
    if (
        isinstance(latency_below_pct, bool)
        or not isinstance(latency_below_pct, int | float)
        or not 0 <= latency_below_pct <= 100
    ):
        # NaN compared false everywhere: no kernel was ever called latency-bound.
        raise InputError(
            expected("a percentage in [0, 100]", repr(latency_below_pct), where="latency_below_pct")
        )
    # Named as given, before anything is computed: both are placed on the roofline.
    for name in ("measurement", "baseline"):
        value = given[name]
        if isinstance(value, Measurement):
            check_same_device(value, roofline.ceilings, where=name)


def measured_first(bottleneck: Bottleneck, measured: bool, launch: float | None) -> int:
    """The first sort key of an opportunity: 0 for a measured launch saving of a
    latency-bound kernel, 1 otherwise.

    A latency-bound kernel waits on launches and serial work, not on its ceilings: the time
    above its roofline floor bounds what a change inside it could save, and is no estimate.
    Where a graph timing measured what launches cost, that measured saving ranks ahead of
    every upper bound, however large the bound (3.63 us cold, 1.94 us in a graph: 46.6 %
    measured before a 52 % bound).
    """
    return 0 if bottleneck is Bottleneck.LATENCY and launch is not None and measured else 1


def check_catalog(catalog: object) -> None:
    """Refuse, before anything is computed, a catalog that cannot match metrics: ``5``
    failed with "'int' object has no attribute 'match_metrics'" after the roofline ran.
    The profile builders from a measurement and from benchmark rows both ask it."""
    if catalog is not None and not callable(getattr(catalog, "match_metrics", None)):
        raise InputError(
            expected(
                "a catalog with match_metrics (kernelopt.catalog.Catalog) or None",
                type(catalog).__name__,
                where="catalog",
            )
        )


def _launch_overhead(
    measurement: Measurement, graph: Measurement | None, extra_metrics: Mapping[str, float]
) -> float | None:
    """The share of the time CUDA graphs remove, %: the caller's ``launch_overhead_pct``
    metric where given (the triggers read that one), else from the graph timing."""
    if graph is not None and graph.mode != "graph":
        # Cold or hot against the events timing measures the L2, not the launches.
        raise InputError(expected("a timing in mode 'graph'", repr(graph.mode), where="graph"))
    if graph is not None:
        events_on, graph_on = measured_on(measurement), measured_on(graph)
        if events_on and graph_on and events_on != graph_on:
            # Graph replays on one GPU against events on another compare the GPUs, not
            # the launches: the "launch overhead" would be their speed difference.
            raise InputError(
                expected(
                    f"a graph timing of the same call on {events_on!r}, as the measurement",
                    f"one made on {graph_on!r}",
                    where="graph",
                )
            )
    given = extra_metrics.get("launch_overhead_pct")
    if given is None:
        return None if graph is None else launch_overhead_pct(measurement, graph)
    if isinstance(given, bool) or not isinstance(given, int | float) or not 0 <= given <= 100:
        # A share of the time: over 100 % it was printed as an "est. 150% gain".
        raise InputError(
            expected(
                "a share of the time in [0, 100]",
                repr(given),
                where="extra_metrics['launch_overhead_pct']",
            )
        )
    return float(given)


# Opens the root cause of a hand-off timed on the CPU: read later, it must not pass an
# interpreter timing off as a GPU profile.
HOST_CLOCK_WARNING = (
    "Timed with the host clock (CPU), not CUDA events: the shares of the roofline below say "
    "nothing about a GPU. "
)


class _FamilyMatcher:
    """A catalog's metric matches restricted to one kernel family (and its ancestors) and
    to one language's entries and the shared ones, where given."""

    def __init__(self, catalog: Any, family: str | None, language: str | None = None) -> None:
        self.catalog = catalog
        self.family = family
        self.language = language

    def match_metrics(self, metrics: Mapping[str, float]) -> Sequence[Any]:
        return self.catalog.query(  # type: ignore[no-any-return]
            metrics=metrics, family=self.family, language=self.language
        )

    def __iter__(self) -> Iterator[Any]:
        # profile_from_rows reads the entries of an iterable catalog by id.
        return iter(self.catalog) if isinstance(self.catalog, Iterable) else iter(())


def for_family(
    catalog: MetricMatcher, family: str | None, *, language: str | None = None
) -> MetricMatcher:
    """``catalog`` whose ``match_metrics`` keeps the entries of ``family`` and its ancestors
    (every family for None), and with ``language`` only the shared entries and that
    language's (``Catalog.query(language=...)``, as ``catalog match --language``).

    Raises
    ------
    InputError
        When ``catalog`` has no ``query`` (``Catalog.query``), or does not know ``family``
        or ``language``.
    """
    if not callable(getattr(catalog, "query", None)):
        raise InputError(
            expected(
                "a catalog with query(family=..., language=...)",
                type(catalog).__name__,
                where="catalog",
            )
        )
    matcher = _FamilyMatcher(catalog, family, language)
    matcher.match_metrics({})  # an unknown family or language is refused now, by name
    return matcher


def _builtin_catalog() -> MetricMatcher:
    try:
        from kernelopt.catalog import Catalog  # type: ignore[attr-defined]

        return Catalog.builtin()  # type: ignore[no-any-return]
    except (ImportError, AttributeError) as error:
        raise KernelOptError(
            expected(
                "the built-in catalog (kernelopt.catalog.Catalog.builtin()) or a catalog= argument",
                f"{type(error).__name__}: {error}",
            )
        ) from None


def kernel_family(kernel: str, families: Iterable[str] = FAMILIES) -> str | list[str] | None:
    """The kernel family a kernel's name names, where a run of its words is a family's
    name or an alias's (:data:`~kernelopt.catalog.vocabulary.FAMILY_ALIASES`).

    The name is read in lower case, its words split at anything but a letter
    (``mla_decode`` is ``mla decode``, ``int4gemv`` is ``int gemv``); the longest names
    found win (``linear_attention`` is ``linear-attention``, not ``linear``'s gemm), and of
    two families where one is the other's ancestor, the descendant.

    Parameters
    ----------
    kernel : str
        The kernel's name.
    families : iterable of str
        The families to look for (a catalog's ``families()``); ``any`` is none.

    Returns
    -------
    str, list of str or None
        The family; the families found, sorted, where the name names several that are
        not one line of descent (``attention_softmax``); None where it names none.

    Raises
    ------
    InputError
        For a ``kernel`` that is not a str.
    """
    if not isinstance(kernel, str):
        raise InputError(expected("a kernel name (a str)", type(kernel).__name__, where="kernel"))
    words = re.split(r"[^a-z]+", kernel.lower())
    names = {name: name for name in families if name != "any"}
    names.update({alias: canonical_family_name(alias) for alias in FAMILY_ALIASES})
    spans: list[tuple[int, int, str]] = []
    for name, family in names.items():
        parts = name.split("-")
        for start in range(len(words) - len(parts) + 1):
            if words[start : start + len(parts)] == parts:
                spans.append((start, start + len(parts), family))
    # A name inside a longer one found ("linear" in "linear-attention") is not read alone.
    kept = {
        family
        for start, end, family in spans
        if not any(s <= start and end <= e and (s, e) != (start, end) for s, e, _ in spans)
    }
    # Of a family and its ancestor ("mla-decode" and "attention"), the descendant.
    found = sorted(
        family
        for family in kept
        if not any(other != family and family in family_ancestors(other) for other in kept)
    )
    if not found:
        return None
    return found[0] if len(found) == 1 else found


def offered_catalog(
    catalog: MetricMatcher, kernel: str, *, family: str | None, language: str | None = None
) -> tuple[MetricMatcher, str]:
    """The catalog a kernel's opportunities are chosen from, and the hand-off's note on it.

    ``family`` where given; else the family the kernel's name names
    (:func:`kernel_family`); else only entries for every kernel family (``any``), and the
    note says so: the metric triggers alone offered a top-p sampler an MLA tile load and
    split-KV decoding. ``language`` keeps the shared entries and its own. A catalog
    without ``query`` (a caller's own matcher) is kept as it is, unless ``family`` or
    ``language`` is given (refused by :func:`for_family`); one already scoped is kept too.

    Returns
    -------
    tuple of (MetricMatcher, str)
        The catalog to match, and the note (empty unless no family was found).
    """
    if isinstance(catalog, _FamilyMatcher | _WithinFamily) or not callable(
        getattr(catalog, "query", None)
    ):
        if family is None and language is None:
            return catalog, ""
        return for_family(catalog, family, language=language), ""  # refuses it by name
    if family is not None:
        return for_family(catalog, family, language=language), ""
    listed = getattr(catalog, "families", None)
    named = kernel_family(kernel, listed() if callable(listed) else FAMILIES)
    note = ""
    if not isinstance(named, str):
        why = (
            f"names several ({and_list(named)})"
            if named
            else "names none of the catalog's families"
        )
        note = (
            f"only entries for every kernel family were offered: no family was given and "
            f"the kernel's name {kernel!r} {why}; give its family (family=, --family) "
            "for its family's entries"
        )
    ranked = catalog if language is None else for_family(catalog, None, language=language)
    return _WithinFamily(ranked, catalog, named if isinstance(named, str) else "any"), note


class _WithinFamily:
    """A catalog's matches, ranked as it ranks them, kept to the entries of a family read
    from the kernel's name (``any``: the entries for every family).

    Only kept, not ranked anew: a family given by name ranks its own entries first (the
    catalog's family score), but one read from the name must leave the opportunities of a
    kernel that always had it, the MLA decode benchmark's, as they were.
    """

    def __init__(self, ranked: MetricMatcher, catalog: Any, family: str) -> None:
        self.ranked = ranked
        self.catalog = catalog
        self.kept = {str(match.entry.id) for match in catalog.query(family=family)}

    def match_metrics(self, metrics: Mapping[str, float]) -> Sequence[Any]:
        return [m for m in self.ranked.match_metrics(metrics) if str(m.entry.id) in self.kept]

    def __iter__(self) -> Iterator[Any]:
        # profile_from_rows reads the entries of an iterable catalog by id.
        return iter(self.catalog) if isinstance(self.catalog, Iterable) else iter(())
