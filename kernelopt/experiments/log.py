"""The typed experiment log: everything an optimization effort left on disk, with provenance.

:func:`kernelopt.experiments.read_log` reads a directory (the seed layout or one of the real
variants: devlogs, numbered step logs, per-experiment folders, JSONL/TSV/JSON histories) into
one :class:`ExperimentLog`. Every fact keeps the file and line it came from
(:class:`SourceRef`), so a diagnosis built on it can quote its evidence, and every file that
could not be read is listed in :attr:`ExperimentLog.unread` with the reason.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, expected
from kernelopt.experiments._validators import (
    check_int,
    flag,
    instance_of,
    integer,
    items_of,
    number_mapping,
    optional_instance_of,
    optional_integer,
    optional_text,
    real_number,
    text,
    text_mapping,
)
from kernelopt.experiments.records import Correctness, Status

__all__ = [
    "ABVerdict",
    "DeclinedOption",
    "Experiment",
    "ExperimentLog",
    "Fact",
    "FloorRow",
    "KernelSource",
    "MetricKind",
    "Point",
    "ProfileFacts",
    "Recommendation",
    "Series",
    "SourceRef",
    "Unread",
]


# Fates after which a change is not in the kernel the next experiment starts from.
_DROPPED = (Status.REVERTED, Status.NEUTRAL, Status.FAILED)
# Where a kernel is defined: a decorator ending in ``jit`` on its own line (``@triton.jit``,
# ``@gluon.jit``, ``@cuda.jit``), ``__global__`` (CUDA) or ``kernel void`` (OpenCL, Metal).
_KERNEL_DEFINITION = re.compile(
    r"^[ \t]*@[\w.]*jit\b|\b__global__\b|\b(?:__)?kernel[ \t]+void\b", re.MULTILINE
)


def _measured(_instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    # min() over latencies holding a NaN answers by position, and a time at or below
    # zero beats every real one: neither may pass for the best of a log.
    if value is None:
        return
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    ok = real and math.isfinite(value) and float(value) > 0
    if not ok:
        raise InputError(expected("None or a finite number > 0", repr(value), where=attribute.name))


# Scalar fields: isinstance checks only, since the readers build these records by the
# thousand for one log and a diagnosis must stay under a second.
_text = text(nonempty=False)
_optional_text = optional_text()
_int = integer()
_optional_int = optional_integer()
_flag = flag()
_real = real_number()


# Sequence and mapping fields: one named converter per field, since attrs hands a converter
# the value alone and the message should name the field. Each refuses a value that is not
# iterable, a str where items are meant, and an item of another type.


def _tags(value: Iterable[str]) -> tuple[str, ...]:
    return items_of(value, str, "tags")


def _kernel_files(value: Iterable[str]) -> tuple[str, ...]:
    return items_of(value, str, "kernel_files")


def _catalog_ids(value: Iterable[str]) -> tuple[str, ...]:
    return items_of(value, str, "catalog_ids")


def _layouts(value: Iterable[str]) -> tuple[str, ...]:
    return items_of(value, str, "layouts")


def _warnings(value: Iterable[str]) -> tuple[str, ...]:
    return items_of(value, str, "warnings")


def _knobs(value: Mapping[str, str]) -> dict[str, str]:
    return text_mapping(value, "knobs")


def _metrics(value: Mapping[str, float]) -> dict[str, float]:
    return number_mapping(value, "metrics")


def _facts(value: Iterable[Fact]) -> tuple[Fact, ...]:
    return items_of(value, Fact, "facts")


def _profiling(value: Iterable[Fact]) -> tuple[Fact, ...]:
    return items_of(value, Fact, "profiling")


def _rules(value: Iterable[Fact]) -> tuple[Fact, ...]:
    return items_of(value, Fact, "rules")


def _project(value: Iterable[Fact]) -> tuple[Fact, ...]:
    return items_of(value, Fact, "project")


def _lessons(value: Iterable[Fact]) -> tuple[Fact, ...]:
    return items_of(value, Fact, "lessons")


def _floors(value: Iterable[FloorRow]) -> tuple[FloorRow, ...]:
    return items_of(value, FloorRow, "floors")


def _points(value: Iterable[Point]) -> tuple[Point, ...]:
    return items_of(value, Point, "points")


def _recommendations(value: Iterable[Recommendation]) -> tuple[Recommendation, ...]:
    return items_of(value, Recommendation, "recommendations")


def _declined(value: Iterable[DeclinedOption]) -> tuple[DeclinedOption, ...]:
    return items_of(value, DeclinedOption, "declined")


def _opportunities(value: Iterable[Recommendation]) -> tuple[Recommendation, ...]:
    return items_of(value, Recommendation, "opportunities")


def _sources(value: Iterable[SourceRef]) -> tuple[SourceRef, ...]:
    return items_of(value, SourceRef, "sources")


def _experiments(value: Iterable[Experiment]) -> tuple[Experiment, ...]:
    return items_of(value, Experiment, "experiments")


def _series(value: Iterable[Series]) -> tuple[Series, ...]:
    return items_of(value, Series, "series")


def _kernels(value: Iterable[KernelSource]) -> tuple[KernelSource, ...]:
    return items_of(value, KernelSource, "kernels")


def _unread(value: Iterable[Unread]) -> tuple[Unread, ...]:
    return items_of(value, Unread, "unread")


_STATUS_WORDS = frozenset(member.value for member in Status)
_STATUSES = ", ".join(repr(member.value) for member in Status)


def _status(value: Status | str | None) -> Status | None:
    # A Status, or its word ("KEPT"), as `correctness` takes its own; anything else would
    # pass for "not dropped" in `kept`.
    if value is None or isinstance(value, Status):
        return value
    if isinstance(value, str) and value in _STATUS_WORDS:
        return Status(value)
    raise InputError(expected(f"None or one of {_STATUSES}", repr(value), where="status"))


def _refs_by_field(_instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    # A validator, not a converter: the readers fill an experiment's refs as they read on.
    what = "a mapping of str to SourceRef"
    if not isinstance(value, (dict, Mapping)):  # a dict first: Mapping's check is slow
        raise InputError(expected(what, type(value).__name__, where=attribute.name))
    for key, ref in value.items():
        if not (isinstance(key, str) and isinstance(ref, SourceRef)):
            got = f"{key!r}: {ref!r:.60}"
            raise InputError(expected(what, got, where=attribute.name))


@attrs.frozen(kw_only=True, order=True)
class SourceRef:
    """Where a fact was read: a path relative to the log root and a 1-based line.

    Parameters
    ----------
    path : str
        POSIX path relative to the directory given to ``read_log``.
    line : int
        1-based line number; 0 when the fact is about the whole file.

    Raises
    ------
    InputError
        When ``path`` is not a str or ``line`` not an int >= 0 (a bool is no line).
    """

    path: str = attrs.field(validator=_text)
    line: int = attrs.field(default=0, validator=integer(minimum=0))

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@attrs.frozen(kw_only=True)
class Fact:
    """One line of text read from the log (a rule, a lesson, a profile remark) and its source.

    Parameters
    ----------
    text : str
        The text read, trimmed: most often with inline markdown (bold, code ticks,
        links) removed and a list item without its bullet; for
        :attr:`ExperimentLog.kernel_path` and ``baseline_path``, the path alone.
    source : SourceRef
        The file and line it was read from.
    """

    text: str = attrs.field(validator=_text)
    source: SourceRef = attrs.field(validator=instance_of(SourceRef, "a SourceRef"))


@attrs.frozen(kw_only=True)
class Unread:
    """A file (or tree) that was not read, or only partly read, and why.

    Parameters
    ----------
    path : str
        Path relative to the log root (``"."`` for the root itself).
    reason : str
        What went wrong, in words (``"binary file"``, ``"read the first 2.0 MiB of 100.0 MiB"``).
    """

    path: str = attrs.field(validator=_text)
    reason: str = attrs.field(validator=_text)


_source = instance_of(SourceRef, "a SourceRef")


class MetricKind(TextEnum):
    """What a measured number means, and so which direction is better."""

    LATENCY = "latency"  # time per call: lower is better
    SPEEDUP = "speedup"  # baseline time over this time: higher is better
    THROUGHPUT = "throughput"  # work per second (tokens/s, candidates/s): higher is better

    @property
    def higher_is_better(self) -> bool:
        """True for speedups and throughputs, False for latencies."""
        return self is not MetricKind.LATENCY


@attrs.frozen(kw_only=True)
class Point:
    """One measured number of an experiment at one trial point.

    Parameters
    ----------
    name : str
        The trial point or regime (``"320x240"``, ``"tiny"``, ``"b=32 s=1 t=4096"``);
        empty for an experiment's single headline number.
    value : float
        The measured number, in ``unit``.
    unit : str
        ``"ns"``, ``"us"``, ``"ms"``, ``"s"`` for latencies (``"cycles"`` for a count of
        clock cycles, which is no time), ``"x"`` for speedups, a rate (``"cand/s"``) for
        throughputs.
    kind : MetricKind
        Latency, speedup or throughput.
    source : SourceRef
        Where the number was read.
    """

    name: str = attrs.field(validator=_text)
    value: float = attrs.field(validator=_real)
    unit: str = attrs.field(validator=_text)
    kind: MetricKind = attrs.field(converter=MetricKind)
    source: SourceRef = attrs.field(validator=_source)


@attrs.frozen(kw_only=True)
class Recommendation:
    """A recommendation made in a plan or a research note, to be acted on later.

    Parameters
    ----------
    text : str
        The recommendation as written (one line, trimmed).
    source : SourceRef
        Where it was written.
    experiment : int or None
        The experiment whose plan or result made it (for an item of profile.md's Top 3, the
        experiment the profile followed); None for notes outside any experiment.
    after : int
        The first experiment number that could act on it (the plan's own experiment, or
        the next one for a recommendation written after a result or a profile).
    catalog_ids : tuple of str
        Catalog entries the recommendation names (through their keywords).
    """

    text: str = attrs.field(validator=_text)
    source: SourceRef = attrs.field(validator=_source)
    experiment: int | None = attrs.field(default=None, validator=_optional_int)
    after: int = attrs.field(default=0, validator=_int)
    catalog_ids: tuple[str, ...] = attrs.field(default=(), converter=_catalog_ids)


@attrs.frozen(kw_only=True)
class DeclinedOption:
    """An option a note of the log lists under a heading or lead line that declines it or
    scopes it out ("Rejected ideas", "Not pursued", "Remaining opportunities (not in
    kernel.cl scope)"): an idea the author weighed and answered, not advice to take up.

    Parameters
    ----------
    text : str
        The option as written (one list item, trimmed, without markdown).
    source : SourceRef
        Where it was written.
    heading : str
        The heading or lead line that declines it, without markdown.
    experiment : int or None
        The experiment whose ``exp_N/`` folder holds the note, or whose devlog or
        step-log entry holds its line; None for a note that cannot be placed.
    """

    text: str = attrs.field(validator=_text)
    source: SourceRef = attrs.field(validator=_source)
    heading: str = attrs.field(validator=_text)
    experiment: int | None = attrs.field(default=None, validator=_optional_int)


# The ceilings that set a roofline floor: bytes at the copy bandwidth, FLOPs at the matmul rate.
_CEILINGS = frozenset({"memory", "compute"})


def _share(_instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not (real and math.isfinite(value) and float(value) > 0):
        raise InputError(expected("a finite number > 0", repr(value), where=attribute.name))


def _floor_value(_instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if value is not None and not (real and math.isfinite(value)):
        raise InputError(expected("None or a finite number", repr(value), where=attribute.name))


def _ceiling(_instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    # The str test first: a list or a dict is unhashable, so no set member test for it.
    if value is not None and not (isinstance(value, str) and value in _CEILINGS):
        raise InputError(expected("None, 'memory' or 'compute'", repr(value), where=attribute.name))


@attrs.frozen(kw_only=True)
class FloorRow:
    """One timed row of an experiment's result that places the kernel on the roofline.

    The log readers read it from a result file (``result.md``, ``results.md``): a row of
    ``kernelopt.bench``'s Measurements table with its ``Floor``, or a row of a hand-written
    table with a floor column (``Floor``, ``Floor (us)``, ``Memory floor``), an of-floor
    column (``Of floor``, ``% of floor``) or both.

    Parameters
    ----------
    point : str
        The trial point (a canonical row's ``Point``; a hand-written row's first cell where
        the first column names the rows, else its time as written, ``49.8 us``, or
        ``the kernel``).
    impl : str
        The implementation timed; empty in a hand-written table.
    fraction : float
        The share of the floor reached, floor over the row's time, finite and above zero:
        1.0 is at the roofline, 0.784 is 78.4 % of it.
    floor : float or None
        The floor itself, in ``unit``, where the row gives it.
    unit : str
        The floor's unit (``"us"``), or ``""``.
    ceiling : {"memory", "compute"} or None
        Which ceiling sets the floor where the row or its header says so (bytes:
        ``"memory"``, FLOPs: ``"compute"``); None where it does not.
    source : SourceRef
        The row's file and line.

    Raises
    ------
    InputError
        When ``fraction`` is not a finite number above zero, ``floor`` neither None nor
        finite, ``ceiling`` another word, ``point``, ``impl`` or ``unit`` not a str, or
        ``source`` not a :class:`SourceRef`.
    """

    point: str = attrs.field(validator=_text)
    impl: str = attrs.field(default="", validator=_text)
    fraction: float = attrs.field(validator=_share)
    floor: float | None = attrs.field(default=None, validator=_floor_value)
    unit: str = attrs.field(default="", validator=_text)
    ceiling: str | None = attrs.field(default=None, validator=_ceiling)
    source: SourceRef = attrs.field(validator=_source)


class ABVerdict(TextEnum):
    """An experiment's own A/B verdict against the baseline it was timed with, in the
    words of :func:`kernelopt.bench.compare` (a ``## Verdict`` section of ``result.md``
    as :func:`kernelopt.bench.write_experiment` writes it)."""

    FAST = "FAST"  # faster by more than the same-version spread, with confidence
    SLOW = "SLOW"  # slower by more than the same-version spread, with confidence
    SAME = "SAME"  # any difference is within the threshold
    UNCLEAR = "UNCLEAR"  # the interval straddles the threshold: not shown faster or slower


def as_ab_verdict(value: ABVerdict | str | None) -> ABVerdict | None:
    """An ABVerdict, or its word (``"FAST"``, as JSON holds it), as an attrs converter
    takes it; anything else is refused."""
    if value is None or isinstance(value, ABVerdict):
        return value
    if isinstance(value, str) and value in ABVerdict.__members__:
        return ABVerdict(value)
    allowed = ", ".join(repr(member.value) for member in ABVerdict)
    raise InputError(expected(f"None or one of {allowed}", repr(value), where="verdict"))


@attrs.frozen(kw_only=True)
class Experiment:
    """One experiment (an attempted change) of an optimization effort.

    Parameters
    ----------
    number : int
        The experiment number: the log's own (``exp_7``, ``Step 13``) when it numbers
        experiments, otherwise the 1-based chronological position. ``until`` cuts on it.
    label : str
        How the log names it (``"exp_7"``, ``"2026-04-22 Warp-Cooperative Sequential Kernel"``).
    description : str
        One line saying what was tried.
    latency, unit : float or None, str or None
        The headline time per call (finite, above zero) and its unit (``"us"``, ``"ms"``;
        ``"cycles"`` for a count of clock cycles, which is no time).
    speedup : float or None
        The headline speedup over the log's baseline (finite, above zero; > 1 is faster).
    throughput, throughput_unit : float or None, str or None
        The headline rate (finite, above zero) when the log measures work per second
        instead of time.
    headline_point : str
        The trial point the headline number was measured at when the log names it (the
        first row of a canonical ``result.md``: ``"b=32 s=1 t=4096 h=16"``); empty when
        the log gives one number without a point. Headlines at different points are
        different quantities.
    correctness : Correctness
        PASS, FAIL or UNKNOWN.
    correctness_note : str
        The words the log states with that verdict, on one line and cut to 500 characters:
        what a correctness field or cell says after its PASS/FAIL word, without the
        parentheses around it (``Correctness: FAIL (variants are wrong by construction;
        timing only)`` gives ``"variants are wrong by construction; timing only"``), or
        the whole line when the verdict is read from its words (a devlog heading ``Cache
        keyed by shape (REVERTED — correctness failure)``, a sentence ``still fails strict
        parity``). Empty when the verdict stands alone (``PASS``, ``✓``) or is UNKNOWN for
        want of one. Where two sources state a verdict, the words are those of the verdict
        used; ``refs["correctness_note"]`` is where they were read.
    status : Status or None
        KEPT, REVERTED, NEUTRAL, FAILED or BASELINE; None when the log does not say. A
        canonical ``result.md``'s status as written (REVERTED beside correctness FAIL stays
        REVERTED); in a log written by hand, REVERTED, NEUTRAL or none beside correctness
        FAIL is FAILED.
    verdict : ABVerdict or None
        The experiment's own A/B verdict against the baseline it was timed with (FAST,
        SLOW, SAME or UNCLEAR), as its result states it: the first word of a ``## Verdict``
        section that :func:`kernelopt.bench.write_experiment` wrote (``UNCLEAR 1.195x
        [0.842, 1.512] the baseline's time, speedup 0.8367x, ...``), or of a hand-written
        ``Verdict: FAST`` line; None when the result states none (a verdict in other words,
        ``Promote``, is no A/B verdict). ``refs["verdict"]`` is where it was read.
    verdict_speedup : float or None
        The speedup that verdict states (the baseline's time over the experiment's:
        ``speedup 0.8367x``, or the inverse of the ratio of a verdict written as
        ``FAST 0.620x [0.610, 0.630]``, the baseline's time as 1); None when it states none.
        It may differ from :attr:`speedup`, which a result's first row states, against
        whatever that row was compared with.
    attempted : bool
        False for entries that changed nothing measurable (profiling-only notes,
        experiments superseded before measurement).
    tags : tuple of str
        Catalog entry ids of the ideas the experiment tries.
    knobs : dict of str to str
        Tuning knobs named in the description (``{"BLOCK_N": "64"}``).
    date : str
        The date (or timestamp) as written, ISO-8601 where the log gave one.
    points : tuple of Point
        Every measured number the readers found, per trial point.
    metrics : dict of str to float
        Profiling metrics found in the experiment (``dram_pct``, ``occupancy_pct``, ...).
    recommendations : tuple of Recommendation
        Recommendations this experiment's plan or result makes.
    kernel_files : tuple of str
        Kernel sources snapshotted with the experiment (paths relative to the log root).
    kernel : str or None
        The kernel the experiment's result names as what it ran (a canonical
        ``result.md``'s ``Kernel:`` field, as written: ``exp_24/tma_store.diff``); None when
        it names none. Other snapshots in the folder are then variants or instruments.
    gpu : str or None
        The GPU the experiment's result says it ran on (a canonical ``result.md``'s
        ``GPU:`` field: ``NVIDIA H100 80GB HBM3``); None when it names none. Times from
        different GPUs are different quantities: progress compares an A/B's baseline only
        with kernels timed on the same GPU.
    profiling : tuple of Fact
        Lines of the experiment's record that report profiling data (a profiler named, or
        a metric with its value).
    floors : tuple of FloorRow
        The rows of the experiment's result files (``result.md``, ``results.md``) that
        state a roofline floor or the share of it reached, in file order: a canonical
        result's rows timed on the device with a ``Floor``, else a hand-written table's
        rows. Empty when no result states one.
    text : str
        The experiment's own words (title, change, hypothesis), used to tag it; capped.
    refs : dict of str to SourceRef
        Where each field was read (``refs["latency"]``, ``refs["status"]``, ...).
    sources : tuple of SourceRef
        Every place the experiment is described.

    Raises
    ------
    InputError
        When ``latency``, ``speedup``, ``throughput`` or ``verdict_speedup`` is neither
        None nor a finite number above zero, or a field has the wrong type: ``number`` not
        an int (a bool is none), a text field not a str (``unit``, ``throughput_unit``,
        ``kernel`` and ``gpu`` may be None), ``status`` neither None nor a :class:`Status`
        or its word, ``verdict`` neither None nor an :class:`ABVerdict` or its word,
        ``attempted`` not a bool, a sequence field a str, not iterable or holding an item
        of another type, ``knobs`` or ``metrics`` not a mapping of str to str or to real
        numbers, or ``refs`` not one of str to :class:`SourceRef`.
    """

    number: int = attrs.field(validator=_int)
    label: str = attrs.field(validator=_text)
    description: str = attrs.field(default="", validator=_text)
    latency: float | None = attrs.field(default=None, validator=_measured)
    unit: str | None = attrs.field(default=None, validator=_optional_text)
    speedup: float | None = attrs.field(default=None, validator=_measured)
    throughput: float | None = attrs.field(default=None, validator=_measured)
    throughput_unit: str | None = attrs.field(default=None, validator=_optional_text)
    headline_point: str = attrs.field(default="", validator=_text)
    correctness: Correctness = attrs.field(default=Correctness.UNKNOWN, converter=Correctness)
    correctness_note: str = attrs.field(default="", validator=_text)
    status: Status | None = attrs.field(default=None, converter=_status)
    verdict: ABVerdict | None = attrs.field(default=None, converter=as_ab_verdict)
    verdict_speedup: float | None = attrs.field(default=None, validator=_measured)
    attempted: bool = attrs.field(default=True, validator=_flag)
    tags: tuple[str, ...] = attrs.field(default=(), converter=_tags)
    knobs: dict[str, str] = attrs.field(factory=dict, converter=_knobs)
    date: str = attrs.field(default="", validator=_text)
    points: tuple[Point, ...] = attrs.field(default=(), converter=_points)
    metrics: dict[str, float] = attrs.field(factory=dict, converter=_metrics)
    recommendations: tuple[Recommendation, ...] = attrs.field(
        default=(), converter=_recommendations
    )
    kernel_files: tuple[str, ...] = attrs.field(default=(), converter=_kernel_files)
    kernel: str | None = attrs.field(default=None, validator=_optional_text)
    gpu: str | None = attrs.field(default=None, validator=_optional_text)
    profiling: tuple[Fact, ...] = attrs.field(default=(), converter=_profiling)
    floors: tuple[FloorRow, ...] = attrs.field(default=(), converter=_floors)
    text: str = attrs.field(default="", validator=_text)
    refs: dict[str, SourceRef] = attrs.field(factory=dict, validator=_refs_by_field)
    sources: tuple[SourceRef, ...] = attrs.field(default=(), converter=_sources)

    @property
    def source(self) -> SourceRef | None:
        """The first place the experiment is described, or None."""
        return self.sources[0] if self.sources else None

    def ref(self, field: str) -> SourceRef | None:
        """Where ``field`` was read, falling back to the experiment's first source.

        Parameters
        ----------
        field : str
            A field name as the readers record it in ``refs`` (``"latency"``,
            ``"status"``, ...).

        Returns
        -------
        SourceRef or None
            ``refs[field]`` when the field's place was recorded, else :attr:`source`;
            None when the experiment has no source at all.
        """
        return self.refs.get(field, self.source)

    @property
    def kept(self) -> bool:
        """Whether its change stayed in the kernel the next experiment starts from.

        Not REVERTED, NEUTRAL or FAILED, and not failing correctness: a prototype measured
        and dropped is not the kernel. An experiment whose fate the log does not state
        counts as kept (the log gives no reason to think it was undone); a BASELINE is the
        kernel everything starts from.
        """
        return self.status not in _DROPPED and self.correctness is not Correctness.FAIL

    @property
    def mention(self) -> str:
        """How a sentence names it: its label, or ``exp N`` when the label is a bare number
        (histories that number their rows)."""
        return f"exp {self.label}" if self.label.isdigit() else self.label


@attrs.frozen(kw_only=True)
class Series:
    """A sequence of experiments read from one source family (one devlog, one history file).

    A directory can hold several records of the same effort (a devlog and the JSONL bench
    history beside it) or of different kernels; :attr:`ExperimentLog.experiments` is the
    primary series, the others stay here for reference. ``kind`` is the layout read
    (``"jsonl"``, ``"devlog"``, ...), or ``"trace"`` for the calls of a workload trace,
    which are no attempts and never the primary series.

    Parameters
    ----------
    name : str
        Where the series was read: ``"numbered experiments"`` for the experiments the log
        numbers itself (``exp_N/`` folders, numbered steps), otherwise the file (a devlog,
        a JSONL or JSON history) or folder (tables, notes) it came from, relative to the
        log root.
    kind : str
        The layout most of its experiments were read from: ``"summary"``,
        ``"experiment-folders"``, ``"devlog"``, ``"step-log"``, ``"notes"``, ``"jsonl"``,
        ``"tsv"``, ``"archive-json"``, or ``"trace"``.
    experiments : tuple of Experiment
        Its experiments, in order (numbers increasing).
    """

    name: str = attrs.field(validator=_text)
    kind: str = attrs.field(validator=_text)
    experiments: tuple[Experiment, ...] = attrs.field(converter=_experiments)


@attrs.frozen(kw_only=True)
class KernelSource:
    """A kernel source file found in the log, as text (never imported or run).

    Parameters
    ----------
    path : str
        Path relative to the log root.
    text : str
        The file's text (capped like every file read).
    language : str
        ``"python"``, ``"cuda"``, ``"opencl"``, ``"cpp"`` or ``"other"``; ``"diff"`` for a
        snapshot written as a unified diff (``exp_N/*.diff``, ``*.patch``): the change the
        experiment made to the kernel it started from, not a full source (read it with
        :func:`kernelopt.experiments.diffs.parse_diff`).
    experiment : int or None
        The experiment folder it was snapshotted in; None for the current kernel.
    role : str
        ``"kernel"`` (named by CLAUDE.md as the kernel), ``"baseline"``, or ``"snapshot"``.
    """

    path: str = attrs.field(validator=_text)
    text: str = attrs.field(validator=_text)
    language: str = attrs.field(validator=_text)
    experiment: int | None = attrs.field(default=None, validator=_optional_int)
    role: str = attrs.field(default="snapshot", validator=_text)

    @property
    def is_diff(self) -> bool:
        """True for a snapshot written as a unified diff rather than a full source."""
        return self.language == "diff"

    @property
    def defines_kernel(self) -> bool:
        """Whether the text defines a GPU kernel: a ``@…jit`` function (Triton, Gluon,
        Numba), a CUDA ``__global__`` function or an OpenCL/Metal ``kernel void``. A script
        that only sets up, checks or times a kernel defines none."""
        return not self.is_diff and _KERNEL_DEFINITION.search(self.text) is not None


@attrs.frozen(kw_only=True)
class ProfileFacts:
    """What ``profile.md`` (or a profile in a result) says about the bottleneck.

    Parameters
    ----------
    bottleneck : str or None
        ``"memory"``, ``"compute"`` or ``"latency"`` when the profile states one.
    metrics : dict of str to float
        Named metrics (``dram_pct``, ``tc_pct``, ``occupancy_pct``, ``arith_intensity``, ...).
    facts : tuple of Fact
        The lines the bottleneck and metrics were read from.
    source : SourceRef
        The profile file.
    point : str
        The trial point the profile's heading names (``## Profile: name | b=32, s=1,
        t=4096``), as written; empty when it names none.
    experiment : int or None
        The experiment the profile followed: the number of the ``exp_N`` folder holding
        it, else the latest experiment its first heading names (``## Profile: mla_decode
        exp 5 | ...``, ``... (exps 26, 30, 32), profiled in exp 35 | ...``); None when
        neither says.
    version : str
        The kernel version the heading names, its name's last word after the kernel
        (``v2`` of ``## Profile: mla_decode v2 | ...``, as ``kernelopt report profile
        --version`` writes it); empty when the name is one word.
    opportunities : tuple of Recommendation
        The items of its ``Top 3 Opportunities`` section, in rank order (at most three):
        each an opportunity's name, the catalog entry ids written in backticks beside it
        (``Kernel Fusion (`kernel-fusion`) -- est. 40% gain -- ...``), its line,
        ``experiment`` as above and ``after`` the experiment after it (0 when the profile
        names none).
    """

    bottleneck: str | None = attrs.field(validator=_optional_text)
    metrics: dict[str, float] = attrs.field(factory=dict, converter=_metrics)
    facts: tuple[Fact, ...] = attrs.field(default=(), converter=_facts)
    source: SourceRef = attrs.field(factory=lambda: SourceRef(path=""), validator=_source)
    point: str = attrs.field(default="", validator=_text)
    experiment: int | None = attrs.field(default=None, validator=_optional_int)
    version: str = attrs.field(default="", validator=_text)
    opportunities: tuple[Recommendation, ...] = attrs.field(default=(), converter=_opportunities)


@attrs.frozen(kw_only=True)
class ExperimentLog:
    """Everything read from one optimization effort's directory.

    Parameters
    ----------
    root : str
        The directory that was read.
    layouts : tuple of str
        The layouts recognized (``"seed"``, ``"devlog"``, ``"step-log"``, ``"notes"``,
        ``"jsonl"``, ``"tsv"``, ``"archive-json"``, ``"experiment-folders"``).
    experiments : tuple of Experiment
        The primary series, in order (numbers increasing).
    series : tuple of Series
        Every series found, the primary one first.
    rules : tuple of Fact
        Project rules from CLAUDE.md.
    project : tuple of Fact
        Every non-empty line of CLAUDE.md (what the project is: names, shapes, hardware).
    kernel_path, baseline_path : Fact or None
        The kernel and baseline paths CLAUDE.md names.
    lessons : tuple of Fact
        Lessons (LESSONS.md bullets and headings).
    profile : ProfileFacts or None
        What profile.md says.
    workload_profile : str or None
        Path (relative to root) of ``workload_profile.md`` when present.
    kernels : tuple of KernelSource
        Kernel sources found: the current kernel and baseline, and snapshots (full sources
        and diffs).
    recommendations : tuple of Recommendation
        Every recommendation found in plans and research notes, in experiment order
        (profile.md's Top 3 is ``profile.opportunities``).
    declined : tuple of DeclinedOption
        The options the log's notes list under a heading or lead line that declines them
        or scopes them out, in file and line order (empty when none does). Under
        ``until``, only those in an experiment folder before the cut.
    profiling : tuple of Fact
        Lines anywhere in the log that report profiling data (profile.md, results, notes).
        Under ``until``, only profile.md's and those in an experiment (or on a lesson
        citing one) before the cut: a note that cannot be placed does not count.
    unread : tuple of Unread
        What could not be read, and why.
    warnings : tuple of str
        Problems that are not about one file (the catalog could not be loaded for tagging).
    until : int or None
        When set, only experiments numbered below it were kept.
    """

    root: str = attrs.field(validator=_text)
    layouts: tuple[str, ...] = attrs.field(default=(), converter=_layouts)
    experiments: tuple[Experiment, ...] = attrs.field(default=(), converter=_experiments)
    series: tuple[Series, ...] = attrs.field(default=(), converter=_series)
    rules: tuple[Fact, ...] = attrs.field(default=(), converter=_rules)
    project: tuple[Fact, ...] = attrs.field(default=(), converter=_project)
    kernel_path: Fact | None = attrs.field(
        default=None, validator=optional_instance_of(Fact, "a Fact")
    )
    baseline_path: Fact | None = attrs.field(
        default=None, validator=optional_instance_of(Fact, "a Fact")
    )
    lessons: tuple[Fact, ...] = attrs.field(default=(), converter=_lessons)
    profile: ProfileFacts | None = attrs.field(
        default=None, validator=optional_instance_of(ProfileFacts, "a ProfileFacts")
    )
    workload_profile: str | None = attrs.field(default=None, validator=_optional_text)
    kernels: tuple[KernelSource, ...] = attrs.field(default=(), converter=_kernels)
    recommendations: tuple[Recommendation, ...] = attrs.field(
        default=(), converter=_recommendations
    )
    declined: tuple[DeclinedOption, ...] = attrs.field(default=(), converter=_declined)
    profiling: tuple[Fact, ...] = attrs.field(default=(), converter=_profiling)
    unread: tuple[Unread, ...] = attrs.field(default=(), converter=_unread)
    warnings: tuple[str, ...] = attrs.field(default=(), converter=_warnings)
    until: int | None = attrs.field(default=None, validator=_optional_int)
    # The primary series by number, filled on first use: detectors look experiments up by
    # number for each of thousands, and a scan per look-up is quadratic. Not data of the
    # log, so neither compared nor shown.
    _by_number: dict[int, Experiment] = attrs.field(
        factory=dict, init=False, eq=False, repr=False, hash=False
    )

    def experiment(self, number: int) -> Experiment | None:
        """The experiment numbered ``number`` in the primary series, or None.

        Only :attr:`experiments` (the primary series) is searched, not the other
        :attr:`series`; when the log was read with ``until``, experiments numbered
        ``until`` or above are not in it. The look-up table is built on the first call,
        so each later call takes constant time.

        Parameters
        ----------
        number : int
            The experiment number, as in :attr:`Experiment.number` (the log's own
            numbering, or the 1-based position when the log numbers nothing).

        Returns
        -------
        Experiment or None
            The first experiment of the primary series with that number (a log that
            repeats a number keeps its first), or None when there is none.

        Raises
        ------
        InputError
            When ``number`` is not an int: ``True`` would find experiment 1, ``5.0``
            experiment 5 and ``"5"`` none, each without a word.
        """
        check_int(number, "number")
        if not self._by_number and self.experiments:
            for item in self.experiments:
                self._by_number.setdefault(item.number, item)  # the first of a number wins
        return self._by_number.get(number)

    @property
    def current_kernels(self) -> tuple[KernelSource, ...]:
        """The kernel sources that describe the kernel as it stands.

        The kernel CLAUDE.md names when it was found (and no ``until`` cut applies),
        otherwise the full-source snapshots of the latest kept experiment that has any
        (:attr:`Experiment.kept`: a snapshot of a change that was reverted, neutral or
        failed is a prototype, not the kernel; a diff holds only the lines it changes, so
        it does not describe a kernel on its own). A snapshot of an experiment the primary
        series does not hold has no stated fate and counts; one of an experiment only
        planned (:attr:`Experiment.attempted` is false) does not. Where any snapshot
        defines a kernel (:attr:`KernelSource.defines_kernel`), only such snapshots count:
        the scripts beside them check or time the kernel. With no such snapshot, the
        named kernel (empty when there is none).
        """
        named = tuple(k for k in self.kernels if k.role == "kernel")
        if named and self.until is None:
            return named
        # A planned experiment (nothing measured, no verdict) has not changed the kernel yet.
        landed = {e.number for e in self.experiments if e.kept and e.attempted}
        snapshots = [
            k
            for k in self.kernels
            if k.role == "snapshot"
            and k.experiment is not None
            and not k.is_diff
            and (k.experiment in landed or self.experiment(k.experiment) is None)
        ]
        # A folder's scripts that check or time the kernel are not the kernel: where any
        # snapshot defines one, the latest folder that holds such a definition is read.
        defining = [k for k in snapshots if k.defines_kernel]
        if defining:
            snapshots = defining
        if not snapshots:
            return named
        latest = max(k.experiment for k in snapshots if k.experiment is not None)
        return tuple(k for k in snapshots if k.experiment == latest)
