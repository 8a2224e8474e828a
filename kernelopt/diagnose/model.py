"""The typed result of a diagnosis: findings, the nine-item checklist, the log summary.

A :class:`Diagnosis` renders to the seed's plan form (:func:`kernelopt.diagnose.render_plan`)
and to JSON (:meth:`Diagnosis.to_dict`); its records are frozen attrs classes so a
diagnosis can be compared, stored and read back.
"""

from __future__ import annotations

import math
import numbers
import typing
from collections.abc import Iterable
from typing import Any

import attrs

from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, expected
from kernelopt.experiments.log import ABVerdict, Unread, as_ab_verdict

__all__ = [
    "Action",
    "BestResult",
    "CatalogLink",
    "Check",
    "Diagnosis",
    "Evidence",
    "Finding",
    "KeptRegression",
    "LogSummary",
    "Pathology",
    "Severity",
    "TrajectoryPoint",
]


class Pathology(TextEnum):
    """The nine items of the plateau checklist, in the seed's order."""

    REPETITION_LOOP = "repetition_loop"
    LOCAL_MINIMUM = "local_minimum"
    CORRECTNESS_WALL = "correctness_wall"
    WRONG_BOTTLENECK = "wrong_bottleneck"
    MISSING_FUNDAMENTAL = "missing_fundamental"
    OVER_ENGINEERING = "over_engineering"
    IGNORED_PRIOR_RESEARCH = "ignored_prior_research"
    BUFFER_PERSISTENCE = "buffer_persistence"
    OVERLOOKED_SHORTCUT = "overlooked_shortcut"

    @property
    def number(self) -> int:
        """The item's number in the checklist (1–9)."""
        return list(Pathology).index(self) + 1

    @property
    def label(self) -> str:
        """The checklist title (``"Repetition loop"``)."""
        return _TITLES[self]


_TITLES = {
    Pathology.REPETITION_LOOP: "Repetition loop",
    Pathology.LOCAL_MINIMUM: "Local minimum",
    Pathology.CORRECTNESS_WALL: "Correctness wall",
    Pathology.WRONG_BOTTLENECK: "Wrong bottleneck",
    Pathology.MISSING_FUNDAMENTAL: "Missing fundamental",
    Pathology.OVER_ENGINEERING: "Over-engineering",
    Pathology.IGNORED_PRIOR_RESEARCH: "Ignored prior research",
    Pathology.BUFFER_PERSISTENCE: "Buffer persistence",
    Pathology.OVERLOOKED_SHORTCUT: "Overlooked shortcut",
}


class Severity(TextEnum):
    """How much a finding is likely to cost if left alone."""

    HIGH = "high"  # blocks progress: fix before any further tuning
    MEDIUM = "medium"  # wastes experiments or leaves a known gain on the table
    LOW = "low"  # worth a note

    @property
    def rank(self) -> int:
        """0 for HIGH, 1 for MEDIUM, 2 for LOW (sort key)."""
        return list(Severity).index(self)


def _confidence(_instance: object, _attribute: object, value: float) -> None:
    # True is an int to Python, but no detector means "1.0" by it.
    if not (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0.0 <= value <= 1.0
    ):
        raise InputError(expected("a confidence between 0 and 1", repr(value), where="confidence"))


# Scalar fields: isinstance checks only, since the engine builds a record per new best of a
# long log and a diagnosis must stay well under a second.


def _text(_instance: object, attribute: Any, value: Any) -> None:
    if not isinstance(value, str):
        raise InputError(expected("a str", repr(value), where=attribute.name))


def _optional_text(_instance: object, attribute: Any, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise InputError(expected("a str or None", repr(value), where=attribute.name))


def _flag(_instance: object, attribute: Any, value: Any) -> None:
    if not isinstance(value, bool):
        raise InputError(expected("a bool", repr(value), where=attribute.name))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(_instance: object, attribute: Any, value: Any) -> None:
    if not _is_int(value):
        raise InputError(expected("an integer", repr(value), where=attribute.name))


def _optional_int(_instance: object, attribute: Any, value: Any) -> None:
    if value is not None and not _is_int(value):
        raise InputError(expected("an integer or None", repr(value), where=attribute.name))


def _is_number(value: object) -> bool:
    # Not finite on purpose: diagnosis_from_dict names a NaN's place in the data itself.
    # float and int first: the abstract Real check (numpy scalars) costs several times more.
    if isinstance(value, float):
        return True
    return isinstance(value, (int, numbers.Real)) and not isinstance(value, bool)


def _number(_instance: object, attribute: Any, value: Any) -> None:
    if not _is_number(value):
        raise InputError(expected("a real number", repr(value), where=attribute.name))


def _optional_number(_instance: object, attribute: Any, value: Any) -> None:
    if value is not None and not _is_number(value):
        raise InputError(expected("a real number or None", repr(value), where=attribute.name))


def _sequence(value: object, what: str, where: str) -> tuple[object, ...]:
    # A string is iterable too, but "abc" is no list of three one-letter items.
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InputError(expected(what, repr(value), where=where))
    return tuple(value)


def _records(value: object, kind: type, where: str) -> tuple[object, ...]:
    """``value`` as a tuple of ``kind`` records; anything else is refused, naming ``where``."""
    what = f"a sequence of {kind.__name__}"
    items = _sequence(value, what, where)
    for item in items:
        if not isinstance(item, kind):
            raise InputError(expected(what, f"an item {item!r}", where=where))
    return items


def _ints(value: object, where: str) -> tuple[int, ...]:
    """Experiment numbers as a tuple: integers, not 3.5, "3" or True."""
    items = _sequence(value, "a sequence of experiment numbers", where)
    for item in items:
        if not _is_int(item):
            raise InputError(expected("experiment numbers (integers)", repr(item), where=where))
    return typing.cast("tuple[int, ...]", items)


def _strs(value: object, where: str) -> tuple[str, ...]:
    """Texts as a tuple (a string itself is refused, and so is an item that is no string)."""
    items = _sequence(value, "a sequence of strings", where)
    for item in items:
        if not isinstance(item, str):
            raise InputError(expected("a sequence of strings", f"an item {item!r}", where=where))
    return typing.cast("tuple[str, ...]", items)


# One named converter per field: attrs hands a converter the value alone, and the message
# should name the field.


def _experiments(value: Iterable[int]) -> tuple[int, ...]:
    return _ints(value, "experiments")


def _stall(value: Iterable[int]) -> tuple[int, ...]:
    return _ints(value, "stall")


def _missing(value: Iterable[str]) -> tuple[str, ...]:
    return _strs(value, "missing")


def _layouts(value: Iterable[str]) -> tuple[str, ...]:
    return _strs(value, "layouts")


def _other_series(value: Iterable[str]) -> tuple[str, ...]:
    return _strs(value, "other_series")


def _root_causes(value: Iterable[str]) -> tuple[str, ...]:
    return _strs(value, "root_causes")


def _warnings(value: Iterable[str]) -> tuple[str, ...]:
    return _strs(value, "warnings")


def _evidence(value: Iterable[Evidence]) -> tuple[Evidence, ...]:
    return typing.cast("tuple[Evidence, ...]", _records(value, Evidence, "evidence"))


def _actions(value: Iterable[Action]) -> tuple[Action, ...]:
    return typing.cast("tuple[Action, ...]", _records(value, Action, "actions"))


def _checks(value: Iterable[Check]) -> tuple[Check, ...]:
    return typing.cast("tuple[Check, ...]", _records(value, Check, "checks"))


def _trajectory(value: Iterable[TrajectoryPoint]) -> tuple[TrajectoryPoint, ...]:
    return typing.cast(
        "tuple[TrajectoryPoint, ...]", _records(value, TrajectoryPoint, "trajectory")
    )


def _unread(value: Iterable[Unread]) -> tuple[Unread, ...]:
    return typing.cast("tuple[Unread, ...]", _records(value, Unread, "unread"))


def _findings(value: Iterable[Finding]) -> tuple[Finding, ...]:
    return typing.cast("tuple[Finding, ...]", _records(value, Finding, "findings"))


def _kept(value: Iterable[int]) -> tuple[int, ...]:
    return _ints(value, "kept")


def _regression(_instance: object, _attribute: object, value: Any) -> None:
    if value is not None and not isinstance(value, KeptRegression):
        raise InputError(expected("a KeptRegression or None", repr(value), where="regression"))


def _best(_instance: object, _attribute: object, value: Any) -> None:
    if value is not None and not isinstance(value, BestResult):
        raise InputError(expected("a BestResult or None", repr(value), where="best"))


def _summary(_instance: object, _attribute: object, value: Any) -> None:
    if not isinstance(value, LogSummary):
        raise InputError(expected("a LogSummary", repr(value), where="summary"))


@attrs.frozen(kw_only=True)
class Evidence:
    """One piece of evidence: a short quote, where it was read, which experiments it is about.

    Parameters
    ----------
    quote : str
        A short quote or a measured fact (at most a line).
    source : str
        ``path:line`` relative to the log root; empty for derived facts.
    experiments : tuple of int
        The experiment numbers the evidence is about.
    """

    quote: str = attrs.field(validator=_text)
    source: str = attrs.field(default="", validator=_text)
    experiments: tuple[int, ...] = attrs.field(default=(), converter=_experiments)


@attrs.frozen(kw_only=True)
class CatalogLink:
    """A further catalog entry an :class:`Action` links, after its own ``catalog_id``.

    Parameters
    ----------
    catalog_id : str
        The entry's id (``"dominant-shape-specialization"``).
    catalog_name : str or None
        The entry's display name.
    path : str or None
        The entry's file in the knowledge tree
        (``optimizations/dominant-shape-specialization.md``).
    """

    catalog_id: str = attrs.field(validator=_text)
    catalog_name: str | None = attrs.field(default=None, validator=_optional_text)
    path: str | None = attrs.field(default=None, validator=_optional_text)


def _links(value: Iterable[CatalogLink]) -> tuple[CatalogLink, ...]:
    return typing.cast("tuple[CatalogLink, ...]", _records(value, CatalogLink, "also"))


def _also_with_own_entry(
    instance: Action, _attribute: object, value: tuple[CatalogLink, ...]
) -> None:
    """Further links follow the action's own entry, each entry once: the plan names the
    entries in order after the first, and dedupes actions by them."""
    if not value:
        return
    if instance.catalog_id is None:
        further = ", ".join(link.catalog_id for link in value)
        raise InputError(expected("a catalog_id before further links", f"none, and also {further}"))
    ids = [instance.catalog_id, *(link.catalog_id for link in value)]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise InputError(
            expected("the entries an action links once each", f"{', '.join(repeated)} twice")
        )


@attrs.frozen(kw_only=True)
class Action:
    """A recommended action, linked to a catalog entry when one applies.

    One action may link several entries: a shortcut path that both drops a size-1 axis and
    specializes the dominant shape is one guard in the kernel, and one action.

    Parameters
    ----------
    text : str
        What to do, in one or two sentences.
    catalog_id : str or None
        The catalog entry that explains how (``"split-kv-flash-decoding"``).
    catalog_name : str or None
        The entry's display name.
    path : str or None
        The entry's file in the knowledge tree (``optimizations/split-kv-flash-decoding.md``).
    also : tuple of CatalogLink
        Further entries the action links, in order after ``catalog_id``: none of them
        ``catalog_id``, none twice, and only with a ``catalog_id``. JSON holds the key
        only where it is not empty.
    """

    text: str = attrs.field(validator=_text)
    catalog_id: str | None = attrs.field(default=None, validator=_optional_text)
    catalog_name: str | None = attrs.field(default=None, validator=_optional_text)
    path: str | None = attrs.field(default=None, validator=_optional_text)
    also: tuple[CatalogLink, ...] = attrs.field(
        default=(), converter=_links, validator=_also_with_own_entry
    )

    @property
    def links(self) -> tuple[CatalogLink, ...]:
        """Every entry the action links, its own ``catalog_id`` first; empty without one."""
        if self.catalog_id is None:
            return ()
        own = CatalogLink(
            catalog_id=self.catalog_id, catalog_name=self.catalog_name, path=self.path
        )
        return (own, *self.also)

    @property
    def catalog_ids(self) -> tuple[str, ...]:
        """The ids of :attr:`links`, in order."""
        return tuple(link.catalog_id for link in self.links)


@attrs.frozen(kw_only=True)
class Finding:
    """One pathology found in the log.

    Parameters
    ----------
    pathology : Pathology
        Which checklist item.
    summary : str
        One or two sentences a reader can act on, citing experiment numbers.
    experiments : tuple of int
        The experiments involved.
    severity : Severity
        How much it costs.
    confidence : float
        0–1: how sure the detector is, given what it could read.
    evidence : tuple of Evidence
        Quotes with file:line.
    actions : tuple of Action
        What to do, linking catalog entries.
    missing : tuple of str
        Data the detector lacked (which would raise or lower its confidence).
    """

    pathology: Pathology = attrs.field(converter=Pathology)
    summary: str = attrs.field(validator=_text)
    experiments: tuple[int, ...] = attrs.field(default=(), converter=_experiments)
    severity: Severity = attrs.field(default=Severity.MEDIUM, converter=Severity)
    confidence: float = attrs.field(default=0.5, validator=_confidence)
    evidence: tuple[Evidence, ...] = attrs.field(default=(), converter=_evidence)
    actions: tuple[Action, ...] = attrs.field(default=(), converter=_actions)
    missing: tuple[str, ...] = attrs.field(default=(), converter=_missing)

    @property
    def title(self) -> str:
        """The checklist title of the pathology."""
        return self.pathology.label


@attrs.frozen(kw_only=True)
class Check:
    """One checklist item as answered for this log: checked or not, with its sentence.

    Parameters
    ----------
    pathology : Pathology
        The item.
    checked : bool
        True when the detector found the pathology.
    sentence : str
        A sentence or two on the item, whether checked or not.
    missing : tuple of str
        Data the detector lacked.
    """

    pathology: Pathology = attrs.field(converter=Pathology)
    checked: bool = attrs.field(validator=_flag)
    sentence: str = attrs.field(validator=_text)
    missing: tuple[str, ...] = attrs.field(default=(), converter=_missing)

    @property
    def number(self) -> int:
        """The item's number (1–9)."""
        return self.pathology.number

    @property
    def title(self) -> str:
        """The item's title."""
        return self.pathology.label


@attrs.frozen(kw_only=True)
class BestResult:
    """The best result so far: which experiment, its number in its unit, the trial point
    when the log compares named points (regimes) rather than one headline number, and the
    GPU it was timed on when the log's times come from more than one.

    ``only``: the log holds this one measurement and nothing to compare it with (one
    experiment measured anything): the best by default, not by comparison, with the trial
    point it was measured at. JSON holds the key only where it is true.
    """

    experiment: int = attrs.field(validator=_int)
    label: str = attrs.field(validator=_text)
    value: float = attrs.field(validator=_number)
    unit: str = attrs.field(validator=_text)
    kind: str = attrs.field(validator=_text)
    point: str = attrs.field(default="", validator=_text)
    gpu: str = attrs.field(default="", validator=_text)
    only: bool = attrs.field(default=False, validator=_flag)


@attrs.frozen(kw_only=True)
class TrajectoryPoint:
    """An experiment that set a new best: its number, its value and unit, and the gain over
    the best before it (a fraction); ``same_run`` when that gain is the experiment's own A/B
    against the best kernel, timed in its run.

    ``point`` names the trial point (``b=32 s=1 t=4096 h=16``) or named regime (``tiny``)
    the gain was measured at, where the log compares its numbers point by point; ``value``
    and ``unit`` are then that point's number. Empty where the log has one headline.

    ``verdict`` is the experiment's own A/B verdict against the baseline it was timed with
    (:attr:`Experiment.verdict <kernelopt.experiments.Experiment.verdict>`: FAST, SLOW,
    SAME or UNCLEAR), None where its result states none. A FAST verdict shows a gain under
    :data:`~kernelopt.diagnose.progress.NOISE_GAIN` measured, not noise. JSON holds the
    key only where it is set.
    """

    experiment: int = attrs.field(validator=_int)
    value: float = attrs.field(validator=_number)
    unit: str = attrs.field(default="", validator=_text)
    gain: float | None = attrs.field(default=None, validator=_optional_number)
    same_run: bool = attrs.field(default=False, validator=_flag)
    point: str = attrs.field(default="", validator=_text)
    verdict: ABVerdict | None = attrs.field(default=None, converter=as_ab_verdict)


@attrs.frozen(kw_only=True)
class KeptRegression:
    """The kernel as it stands, slower than the best of its own kept versions before it.

    Parameters
    ----------
    experiment : int
        The latest kept experiment (status ``KEPT``): the version the next experiment
        starts from.
    label : str
        Its label.
    value : float
        Its number, in ``unit``.
    best : int
        The fastest of the kernel's own kept experiments before it (baselines left out),
        on the same number.
    best_label : str
        That experiment's label.
    best_value : float
        Its number, in ``unit``.
    unit : str
        The unit of both (``"x"`` for speedups).
    kind : str
        What the number measures (``"latency"``, ``"speedup"``, ``"throughput"``).
    slower : float
        ``experiment``'s time over ``best``'s, less one (0.312: 31.2 % slower; for rates,
        ``best``'s over ``experiment``'s).
    kept : tuple of int
        The kept experiments after ``best`` up to ``experiment``: kept on top of the
        slower kernel.
    point : str
        The trial point or named regime both were measured at; empty for one headline.
    gpu, best_gpu : str
        The GPUs the two were timed on, where they differ (empty otherwise): the numbers
        are then no comparison, and both versions need timing in one run.
    """

    experiment: int = attrs.field(validator=_int)
    label: str = attrs.field(validator=_text)
    value: float = attrs.field(validator=_number)
    best: int = attrs.field(validator=_int)
    best_label: str = attrs.field(validator=_text)
    best_value: float = attrs.field(validator=_number)
    unit: str = attrs.field(validator=_text)
    kind: str = attrs.field(validator=_text)
    slower: float = attrs.field(validator=_number)
    kept: tuple[int, ...] = attrs.field(default=(), converter=_kept)
    point: str = attrs.field(default="", validator=_text)
    gpu: str = attrs.field(default="", validator=_text)
    best_gpu: str = attrs.field(default="", validator=_text)

    @property
    def other_gpus(self) -> bool:
        """Whether the two numbers were timed on different GPUs."""
        return bool(self.gpu and self.best_gpu and self.gpu != self.best_gpu)


@attrs.frozen(kw_only=True)
class LogSummary:
    """What was read and where the effort stands.

    Parameters
    ----------
    root : str
        The log directory.
    layouts : tuple of str
        The layouts recognized.
    experiments : int
        Experiments in the primary series.
    attempted : int
        Of those, experiments that changed or measured something.
    first, last : int or None
        The first and last experiment numbers.
    best : BestResult or None
        The best result so far (None when nothing was measured).
    latest_gpu_best : BestResult or None
        Where the latest attempt was timed on another GPU than ``best``: the fastest time
        at the best's point on that GPU (of a kept experiment where one was timed there,
        else of the latest attempt), since the two GPUs' times are no gain or loss over
        each other; None otherwise. JSON holds the key only where it is set.
    regression : KeptRegression or None
        The kernel as it stands (the latest kept experiment) where it is slower than the
        best of its own kept versions before it by the local-minimum gain or more; None
        otherwise. JSON holds the key only where it is set.
    trajectory : tuple of TrajectoryPoint
        Every new best, in order.
    since_best : int
        Attempts since the best last moved by at least the local-minimum gain (in one step
        or in total): the attempts of ``stall``, as the detectors count them.
    stall : tuple of int
        The trailing experiments over which the best improved by less than that gain.
    stall_gain : float
        That gain (the local-minimum ``min_gain``, a fraction: 0.05 is 5 %).
    family : str or None
        The kernel family used (inferred or given).
    family_source : str
        Where the family came from (``"given"`` by the caller, ``"--family"`` on the
        command line, ``"CLAUDE.md:3"``, ``"unknown"``).
    kernel : str or None
        The kernel source the source checks read.
    until : int or None
        The ``until`` cut, when set.
    other_series : tuple of str
        Other experiment series the log holds, not judged (``"runs/ [tsv]: 5 experiments"``,
        ``"runs/trace.jsonl [trace]: 24 calls"`` for a workload trace): only the primary
        one is, and the user should know the rest was seen.
    """

    root: str = attrs.field(validator=_text)
    layouts: tuple[str, ...] = attrs.field(default=(), converter=_layouts)
    experiments: int = attrs.field(default=0, validator=_int)
    attempted: int = attrs.field(default=0, validator=_int)
    first: int | None = attrs.field(default=None, validator=_optional_int)
    last: int | None = attrs.field(default=None, validator=_optional_int)
    best: BestResult | None = attrs.field(default=None, validator=_best)
    latest_gpu_best: BestResult | None = attrs.field(default=None, validator=_best)
    regression: KeptRegression | None = attrs.field(default=None, validator=_regression)
    trajectory: tuple[TrajectoryPoint, ...] = attrs.field(default=(), converter=_trajectory)
    since_best: int = attrs.field(default=0, validator=_int)
    stall: tuple[int, ...] = attrs.field(default=(), converter=_stall)
    stall_gain: float = attrs.field(default=0.05, validator=_number)
    family: str | None = attrs.field(default=None, validator=_optional_text)
    family_source: str = attrs.field(default="unknown", validator=_text)
    kernel: str | None = attrs.field(default=None, validator=_optional_text)
    until: int | None = attrs.field(default=None, validator=_optional_int)
    other_series: tuple[str, ...] = attrs.field(default=(), converter=_other_series)


@attrs.frozen(kw_only=True)
class Diagnosis:
    """The diagnosis of one log: ranked findings, the nine checks, the summary, the unread.

    Parameters
    ----------
    findings : tuple of Finding
        Ranked: severity first, then confidence.
    checks : tuple of Check
        All nine checklist items in order.
    summary : LogSummary
        What was read and where the effort stands.
    root_causes : tuple of str
        The most likely root cause(s), a sentence each.
    unread : tuple of Unread
        Files that could not be read, and why.
    warnings : tuple of str
        What was read but may not say what the log meant: sources that disagree on a value
        (and which one was used), folders that give one experiment twice, numbers whose
        form has no single sure reading (not read). The log's warnings.
    """

    findings: tuple[Finding, ...] = attrs.field(default=(), converter=_findings)
    checks: tuple[Check, ...] = attrs.field(default=(), converter=_checks)
    summary: LogSummary = attrs.field(factory=lambda: LogSummary(root=""), validator=_summary)
    root_causes: tuple[str, ...] = attrs.field(default=(), converter=_root_causes)
    unread: tuple[Unread, ...] = attrs.field(default=(), converter=_unread)
    warnings: tuple[str, ...] = attrs.field(default=(), converter=_warnings)

    def finding(self, pathology: Pathology | str) -> Finding | None:
        """The finding of one pathology.

        Parameters
        ----------
        pathology : Pathology or str
            The pathology, or its value.

        Returns
        -------
        Finding or None
            Its finding; ``None`` when it was not found.

        Raises
        ------
        InputError
            If ``pathology`` is not one of :class:`Pathology`'s values.
        """
        wanted = Pathology(pathology)
        return next((f for f in self.findings if f.pathology is wanted), None)

    @property
    def pathologies(self) -> tuple[Pathology, ...]:
        """The pathologies found, in rank order."""
        return tuple(f.pathology for f in self.findings)

    def to_dict(self) -> dict[str, object]:
        """The diagnosis as plain JSON-ready data (see :mod:`kernelopt.diagnose.jsonio`)."""
        from kernelopt.diagnose.jsonio import diagnosis_to_dict

        return diagnosis_to_dict(self)

    def to_json(self) -> str:
        """The diagnosis as indented JSON."""
        from kernelopt.diagnose.jsonio import diagnosis_to_json

        return diagnosis_to_json(self)

    def render_plan(self) -> str:
        """The diagnosis in the seed's plan form (markdown)."""
        from kernelopt.diagnose.plan import render_plan

        return render_plan(self)
