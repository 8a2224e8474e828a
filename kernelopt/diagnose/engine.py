"""``diagnose``: read a log, run the nine detectors, rank the findings, name the root cause."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from kernelopt._errors import InputError, expected
from kernelopt._words import count_text
from kernelopt.diagnose.context import CatalogLike, Context, build_context, experiments_text
from kernelopt.diagnose.detectors import DETECTORS, Outcome
from kernelopt.diagnose.detectors._base import not_found
from kernelopt.diagnose.detectors.repetition_loop import NEXT_IDEA, next_idea
from kernelopt.diagnose.model import (
    Action,
    BestResult,
    Check,
    Diagnosis,
    Finding,
    KeptRegression,
    LogSummary,
    Pathology,
    TrajectoryPoint,
)
from kernelopt.diagnose.params import DiagnoseParams
from kernelopt.diagnose.plan import slower_text, value_text
from kernelopt.diagnose.progress import (
    HEADLINE,
    Regression,
    Step,
    contest_words,
    headline_key,
    own_ab_reading,
    point_key,
)
from kernelopt.experiments._validators import check_instance, check_path
from kernelopt.experiments.log import Experiment, ExperimentLog, MetricKind, Series, Unread
from kernelopt.experiments.readers import ReadLimits, read_log
from kernelopt.experiments.readers._values import CYCLES
from kernelopt.experiments.records import Correctness

if TYPE_CHECKING:  # the catalog is loaded on first use: importing diagnose stays cheap
    from kernelopt.catalog import Catalog

__all__ = ["diagnose", "diagnose_log", "load_catalog"]

# Causes before symptoms: a plateau is usually the symptom of one of the first five.
_CAUSE_ORDER = (
    Pathology.CORRECTNESS_WALL,
    Pathology.MISSING_FUNDAMENTAL,
    Pathology.WRONG_BOTTLENECK,
    Pathology.OVERLOOKED_SHORTCUT,
    Pathology.IGNORED_PRIOR_RESEARCH,
    Pathology.OVER_ENGINEERING,
    Pathology.BUFFER_PERSISTENCE,
    Pathology.LOCAL_MINIMUM,
    Pathology.REPETITION_LOOP,
)
_SYMPTOMS = frozenset({Pathology.LOCAL_MINIMUM, Pathology.REPETITION_LOOP})


def _check_catalog(catalog: object) -> None:
    """Raise InputError unless ``catalog`` offers what diagnose asks of a catalog."""
    if not (
        hasattr(catalog, "__iter__")
        and hasattr(catalog, "__contains__")
        and callable(getattr(catalog, "fundamentals", None))
    ) or isinstance(catalog, (str, bytes)):
        raise InputError(
            expected(
                "catalog as a Catalog, a knowledge directory or None",
                type(catalog).__name__,
                where="catalog",
            )
        )


def _check_listable(directory: str | os.PathLike[str], where: str = "catalog") -> None:
    """Refuse a knowledge directory whose root cannot be listed.

    The loader turns such a root into an error that costs the built-in entries too, and the
    diagnosis would go on without any catalog; the user named a tree that cannot be read,
    an input error as a missing one is. Unreadable files or subfolders inside are the
    loader's: left out and listed under "Not read".

    Parameters
    ----------
    directory : str or path-like
        The knowledge directory, as the caller gave it (the error names it so).
    where : str
        The argument or option it came from, named in the error.

    Raises
    ------
    InputError
        When listing the directory fails (``Permission denied``, an I/O error).
    """
    try:
        with os.scandir(directory) as entries:
            next(entries, None)
    except OSError as error:
        why = error.strerror or error.__class__.__name__
        raise InputError(
            expected(
                "a knowledge directory kernelopt can read",
                f"{os.fspath(directory)} ({why})",
                where=where,
            )
        ) from None


def load_catalog(
    catalog: Catalog | CatalogLike | str | os.PathLike[str] | None,
    *,
    where: str = "catalog",
) -> tuple[CatalogLike | None, str | None]:
    """The catalog to use, with a reason when none could be loaded.

    Parameters
    ----------
    catalog : Catalog, CatalogLike, path-like or None
        A catalog, used as given; a knowledge directory (``docs/knowledge/``), loaded
        over the built-in entries with entries that fail to read left out; or ``None``
        for the built-in catalog.
    where : str
        The argument or option ``catalog`` came from, named in errors (``"--knowledge"``
        on the command line). Keyword-only.

    Returns
    -------
    tuple of (CatalogLike or None, str or None)
        The catalog and ``None``; or ``None`` and why the catalog could not be loaded
        (the error's class and message), so a diagnosis can go on without it.

    Raises
    ------
    InputError
        When ``catalog`` is a path that is not a directory or whose directory cannot be
        listed, or neither a path nor a catalog.
    """
    if catalog is not None and not isinstance(catalog, (str, os.PathLike)):
        _check_catalog(catalog)
        return catalog, None
    try:
        from kernelopt.catalog import Catalog

        if catalog is None:
            return Catalog.builtin(), None
        path = Path(catalog)
        if not path.is_dir():
            why = "not a folder" if path.exists() else "no such folder"
            raise InputError(
                expected(
                    "a knowledge directory (docs/knowledge/)", f"{catalog} ({why})", where=where
                )
            )
        _check_listable(catalog, where)
        # One unfinished entry (a scaffold still holding <FILL: ...>) must not cost the
        # whole tree and the built-ins: it is left out and reported with the unread files.
        return Catalog.load(path, strict=False), None
    except InputError:
        raise
    except Exception as error:  # a broken catalog degrades the diagnosis, it does not stop it
        message = " ".join(str(error).split())
        return None, f"{error.__class__.__name__}: {message[:200]}"


def known_family(family: str, catalog: CatalogLike | None, *, where: str = "family") -> str:
    """``family`` spelled as the catalog spells it (``mla_decode`` is ``mla-decode``,
    ``matmul`` is ``gemm``).

    A name neither the vocabulary nor any entry uses would make the missing-fundamental
    check vacuous ("every fundamental of 'nonsense' is tried"), so it is refused, as
    ``kernelopt catalog list --family`` refuses it: naming ``where`` (the argument or
    option it came from), the families and their aliases.

    Parameters
    ----------
    family : str
        The family given.
    catalog : CatalogLike or None
        The catalog in use; a :class:`~kernelopt.catalog.Catalog` checks it with
        :meth:`~kernelopt.catalog.Catalog.canonical_family`, another by the vocabulary
        and the families its entries name.
    where : str
        What the error names (``"family"``, ``"--family"``). Keyword-only.

    Returns
    -------
    str
        The family in the catalog's spelling.

    Raises
    ------
    InputError
        ``family: Expected a kernel family among any, attention, ... (or matmul, ... for
        gemm), got 'bogus'``.
    """
    from kernelopt.catalog.vocabulary import FAMILIES, family_aliases_text, normalize_family

    canonical = getattr(catalog, "canonical_family", None)
    if callable(canonical):
        return str(canonical(family, where=where))
    name = normalize_family(family)
    known = set(FAMILIES)
    for entry in catalog or ():
        known.update(getattr(entry, "families", ()), getattr(entry, "fundamental_for", ()))
    if name not in known:
        raise InputError(
            expected(
                f"a kernel family among {', '.join(sorted(known))} (or {family_aliases_text()})",
                repr(family),
                where=where,
            )
        )
    return name


def _run(ctx: Context, params: DiagnoseParams) -> list[Outcome]:
    outcomes = []
    for detector in DETECTORS:
        detector_params = getattr(params, detector.params_field)
        try:
            outcomes.append(detector.detect(ctx, detector_params))
        except Exception as error:  # one detector's bug must not cost the user the other eight
            outcomes.append(
                not_found(
                    detector.pathology,
                    f"Could not be checked: internal error in the detector "
                    f"({error.__class__.__name__}: {error}).",
                    ["a working detector (please report this log)"],
                )
            )
    return outcomes


def _point_at_ideas(findings: list[Finding], ctx: Context) -> list[Finding]:
    """Let the "take the next idea from ..." action name only the items this plan has;
    where it has none of them, name the catalog's next idea for the kernel instead
    (:func:`~kernelopt.diagnose.detectors.repetition_loop.next_idea`), or drop it."""
    sources = [
        words
        for pathology, words in (
            (Pathology.MISSING_FUNDAMENTAL, "missing-fundamental"),
            (Pathology.IGNORED_PRIOR_RESEARCH, "prior-research"),
        )
        if any(f.pathology is pathology for f in findings)
    ]
    text = f"Take the next idea from the {' or '.join(sources)} items of this plan."
    out = []
    for finding in findings:
        if any(a.text == NEXT_IDEA for a in finding.actions):
            instead = None if sources else next_idea(ctx)
            actions: list[Action] = []
            for action in finding.actions:
                if action.text != NEXT_IDEA:
                    actions.append(action)
                elif sources:
                    actions.append(attrs.evolve(action, text=text))
                elif instead is not None:
                    actions.append(instead)
            finding = attrs.evolve(finding, actions=tuple(actions))
        out.append(finding)
    return out


def _rank(findings: list[Finding]) -> list[Finding]:
    return sorted(
        findings, key=lambda f: (f.severity.rank, _CAUSE_ORDER.index(f.pathology), -f.confidence)
    )


def _cause_key(finding: Finding) -> tuple[bool, int, int, float]:
    """Sort key of a root cause: any cause before any symptom, then the most severe, then
    the kind order of ``_CAUSE_ORDER``, then the most confident.

    Severity comes before kind: a HIGH shortcut that covers every call explains more of a
    plateau than a MEDIUM bottleneck guessed without profiling data.
    """
    return (
        finding.pathology in _SYMPTOMS,
        finding.severity.rank,
        _CAUSE_ORDER.index(finding.pathology),
        -finding.confidence,
    )


def _root_causes(findings: list[Finding]) -> tuple[str, ...]:
    if not findings:
        return ()
    causes = sorted(findings, key=_cause_key)
    first = causes[0]
    sentences = [f"{first.title}: {first.summary}"]
    second = next((f for f in causes[1:] if f.pathology not in _SYMPTOMS), None)
    # Wrong results block every other lever: a wall is named alone.
    alone = first.pathology in _SYMPTOMS or first.pathology is Pathology.CORRECTNESS_WALL
    if second is not None and not alone:
        sentences.append(f"{second.title}: {second.summary}")
    symptoms = [f for f in findings if f.pathology in _SYMPTOMS]
    if symptoms and first.pathology not in _SYMPTOMS:
        numbers = sorted({n for f in symptoms for n in f.experiments})
        shown = ", ".join(str(n) for n in numbers[:10]) + ("…" if len(numbers) > 10 else "")
        sentences.append(
            f"The plateau (exps {shown}) is a symptom: more tuning of the same design will not fix "
            f"{first.title.lower()}."
        )
    return tuple(sentences)


def _headline(experiment: Experiment, kind: str | None) -> tuple[float | None, str]:
    """The experiment's headline number of ``kind`` in its own unit (first point otherwise)."""
    if kind == "latency" and experiment.latency is not None:
        return experiment.latency, experiment.unit or ""
    if kind == "speedup" and experiment.speedup is not None:
        return experiment.speedup, "x"
    if kind == "throughput" and experiment.throughput is not None:
        return experiment.throughput, experiment.throughput_unit or ""
    if experiment.points:
        point = experiment.points[0]
        return point.value, point.unit
    return None, ""


def _gained_at(step: Step, kind: str | None) -> tuple[float | None, str, str]:
    """The number a new best's gain was measured on, its unit and its point's name.

    A step's gain is its largest over the numbers it shares with the bests before it
    (``Step.gains``): in a log of trial points or named regimes that may be another point
    than the experiment's first, so the value shown beside the gain is that point's, and
    the point is named. A log of one headline names none.
    """
    experiment = step.experiment
    if step.gains:
        key = max(step.gains, key=step.gains.__getitem__)
    else:
        # The first kept headline at its trial point gains what its own row states over
        # the kernel it started from: the number is that point's, and the point is named.
        key = next((k for k in step.values if headline_key(k)), HEADLINE)
    if headline_key(key):
        value, unit = _headline(experiment, kind)
        return value, unit, experiment.headline_point if key != HEADLINE else ""
    point = next(p for p in experiment.points if point_key(p) == key)
    return point.value, point.unit, point.name


def _unplaced_warnings(ctx: Context) -> list[str]:
    """A warning for each headline that names no trial point in a log whose headlines are
    compared point by point: its number meets only the others that name none (often
    nothing), so a large gain there moves no verdict, and the plan should say why."""
    progress = ctx.progress
    shown = ", ".join(progress.points[:4]) + (", …" if len(progress.points) > 4 else "")
    warnings = []
    for experiment in progress.unplaced:
        others = [e.number for e in progress.unplaced if e is not experiment]
        compared = (
            f"it was compared only with {experiments_text(others)}, which name none either"
            if others
            else "it was compared with nothing (no gain, no new best)"
        )
        value = ctx.value_text(experiment)
        warnings.append(
            f"{experiment.label}: its headline"
            + (f" ({value})" if value else "")
            + f" names no trial point, while the log compares headlines point by point "
            f"({shown}); {compared}"
        )
    return warnings


def _other_latency(experiment: Experiment, cycles: bool) -> str:
    """``experiment``'s first latency of the other sort than the log's, in words
    (``"1520 cycles"`` in a log of times, ``"98 us"`` in a log of cycle counts)."""
    stated = [(experiment.latency, experiment.unit or "")] if experiment.latency else []
    stated += [(p.value, p.unit) for p in experiment.points if p.kind is MetricKind.LATENCY]
    value, unit = next(((v, u) for v, u in stated if (u == CYCLES) != cycles and u), stated[0])
    return f"{value:g} {unit}"


def _unit_tie_warning(ctx: Context) -> list[str]:
    """A warning where the log states as many latencies in clock cycles as in time units:
    which sort was compared, and why, since either reading was a choice."""
    tie = ctx.progress.unit_tie
    if tie is None:
        return []
    chosen = "cycle counts" if ctx.progress.cycles else "times"
    other = "times" if ctx.progress.cycles else "cycle counts"
    stated = f"the log states as many latencies in clock cycles as in time units ({tie.each} each)"
    if tie.by_headline:
        return [
            f"{stated}; its headline latencies are mostly {chosen}, so its {chosen} are "
            f"compared and its {other} set aside"
        ]
    return [
        f"{stated}, its headline latencies too; no clock converts one into the other, so its "
        f"times are compared and its cycle counts set aside: give the headlines one unit "
        f"(a Unit column, or a header such as 'Latency (cycles)') to choose"
    ]


def _set_aside_warnings(ctx: Context) -> list[str]:
    """A warning for each experiment whose latency is a cycle count in a log of times (or a
    time in a log of cycle counts): it is compared with none of the others, and the plan
    should say why rather than leave it out unsaid. A log with as many of each sort says
    first which it compared."""
    cycles = ctx.progress.cycles
    others = "times" if not cycles else "cycle counts"
    warnings = _unit_tie_warning(ctx)
    for experiment in ctx.progress.set_aside:
        sort = "a time" if cycles else "a count of clock cycles, not a time"
        warnings.append(
            f"{experiment.label}: its latency, {_other_latency(experiment, cycles)}, is {sort}, "
            f"while the log's latencies are {others}; no clock converts one into the other "
            "here, so it is compared with none of them"
        )
    return warnings


def _gain_warnings(ctx: Context) -> list[str]:
    """A warning for each new best whose gain over the best before it is more than a float
    holds (a rate from 5e-324 to 1e300): the summary lists it without a gain."""
    warnings = []
    for step, gain in ctx.progress.trajectory():
        if math.isfinite(gain):
            continue
        value = ctx.value_text(step.experiment)
        warnings.append(
            f"{step.experiment.label}: a new best"
            + (f" ({value})" if value else "")
            + " whose gain over the best before it is more than a number can hold; it is "
            "listed without a gain"
        )
    return warnings


def _point_warnings(ctx: Context, min_gain: float) -> list[str]:
    """A warning for each kept experiment that made a trial point of its result other than
    its headline's ``min_gain`` or more faster while its headline moved less: gains, new
    bests and the plateau are read from the headline (a result's first row) alone, so the
    plan should say what they leave out."""
    gains = {id(s.experiment): s.gain for s in ctx.progress.steps}
    warnings = []
    for move in ctx.point_moves(min_gain):
        gain = gains.get(id(move.experiment))
        if gain is not None and gain >= min_gain:
            continue  # its headline moved too: the gain is in the header already
        said = [move.experiment.headline_point] if move.experiment.headline_point else []
        if gain is not None and math.isfinite(gain):
            said.append(f"{gain:.1%} gained there")
        aside = f" ({', '.join(said)})" if said else ""
        warnings.append(
            f"{move.text()}, a trial point other than its headline{aside}: gains and new "
            "bests are read from the headline (the first row of a result) alone"
        )
    return warnings


def _contested_warnings(ctx: Context) -> list[str]:
    """A warning for each kept experiment whose time beats the best, timed in another run,
    while its own A/B does not show it faster (:attr:`Step.contested`): the header claims
    no new best for it, and this says why, naming its verdict where it has one."""
    warnings = []
    for step in ctx.progress.steps:
        if step.contested is None:
            continue
        experiment = step.experiment
        value = ctx.value_text(experiment)
        saved = f"{step.contested:.1%}" if math.isfinite(step.contested) else "far"
        warnings.append(
            f"{experiment.label}: its time"
            + (f" ({value})" if value else "")
            + f" is {saved} below the best before it, timed in another run, but its own "
            f"A/B {own_ab_reading(experiment)} against the baseline it was timed with "
            f"({contest_words(experiment)}): not counted as a new best, and the attempts "
            "since the best last moved go on through it"
        )
    return warnings


def _only_best(ctx: Context) -> BestResult | None:
    """The log's one measurement as its best (``only``), where a single experiment measured
    anything: a gain needs two numbers, but the user still reads where the kernel stands.
    None where :meth:`Progress.only` finds no such number."""
    only = ctx.progress.only()
    if only is None:
        return None
    experiment, kind, point = only
    if point is None:
        value, unit = _headline(experiment, kind.value)
        name = experiment.headline_point or ""
    else:
        value, unit, name = point.value, point.unit, point.name
    if value is None:
        return None
    return _best_result(ctx, experiment, value, unit, kind.value, name, only=True)


def _best_result(
    ctx: Context,
    experiment: Experiment,
    value: float,
    unit: str,
    kind: str,
    point: str,
    *,
    only: bool = False,
) -> BestResult:
    """The best as the summary states it; its GPU named where the log's times come from
    more than one."""
    gpus = {e.gpu for e in ctx.experiments if e.gpu}
    return BestResult(
        experiment=experiment.number,
        label=experiment.label,
        value=value,
        unit=unit,
        kind=kind,
        point=point,
        gpu=(experiment.gpu or "") if len(gpus) > 1 else "",
        only=only,
    )


def _number_at(experiment: Experiment, key: str, kind: str | None) -> tuple[float | None, str]:
    """``experiment``'s number stored under value key ``key``, in the log's unit: its
    headline (at a trial point or without one), or the named point's."""
    if headline_key(key):
        return _headline(experiment, kind)
    point = next((p for p in experiment.points if point_key(p) == key), None)
    return (point.value, point.unit) if point is not None else (None, "")


def _kept_regression(ctx: Context, found: Regression | None) -> KeptRegression | None:
    """The summary's record of a kept regression :meth:`Progress.kept_regression` found:
    both numbers in the log's unit, where they were measured, and the GPUs where the two
    were timed on different ones."""
    if found is None:
        return None
    kind = ctx.progress.kind.value if ctx.progress.kind is not None else None
    latest, best = found.latest.experiment, found.best.experiment
    value, unit = _number_at(latest, found.key, kind)
    best_value, _ = _number_at(best, found.key, kind)
    if value is None or best_value is None:
        return None
    if headline_key(found.key):
        # One headline point for the whole log is still where both were measured.
        same = found.key != HEADLINE or latest.headline_point == best.headline_point
        point, what = latest.headline_point if same else "", kind or ""
    else:
        named = next(p for p in latest.points if point_key(p) == found.key)
        point, what = named.name, named.kind.value
    differ = bool(latest.gpu and best.gpu and latest.gpu != best.gpu)
    return KeptRegression(
        experiment=latest.number,
        label=latest.label,
        value=value,
        best=best.number,
        best_label=best.label,
        best_value=best_value,
        unit=unit,
        kind=what,
        slower=found.slower,
        kept=[s.experiment.number for s in found.kept],
        point=point,
        gpu=(latest.gpu or "") if differ else "",
        best_gpu=(best.gpu or "") if differ else "",
    )


def _latest_gpu_best(ctx: Context, best: BestResult | None) -> BestResult | None:
    """Where the latest attempt at the best's point was timed on another GPU than the
    best: the fastest time at that point on its GPU, of an experiment that can hold the
    best where one was timed there, else of the latest attempt itself; None otherwise.

    Times of two GPUs are no gain or loss over each other: the header names the best on
    each, so that a faster GPU's number does not read as a kernel falling behind."""
    progress = ctx.progress
    if best is None or best.only or not best.gpu or progress.kind is None:
        return None
    key = progress.best_key()
    if not headline_key(key):
        return None
    timed = [s for s in progress.steps if s.counted and key in s.values and s.experiment.gpu]
    if not timed or timed[-1].experiment.gpu == best.gpu:
        return None
    gpu = timed[-1].experiment.gpu
    there = [s for s in timed if s.experiment.gpu == gpu]
    chosen = max([s for s in there if s.eligible] or there, key=lambda s: s.values[key])
    kind = progress.kind.value
    value, unit = _headline(chosen.experiment, kind)
    if value is None:
        return None
    return _best_result(ctx, chosen.experiment, value, unit, kind, best.point)


def _regression_cause(regression: KeptRegression) -> str:
    """The root-cause sentence of a kept regression: which version stands, how much slower
    than which, and what was kept on top of it."""
    at = f" at {regression.point}" if regression.point else ""
    now = value_text(regression.value, regression.unit, regression.kind)
    then = value_text(regression.best_value, regression.unit, regression.kind)
    on = (
        f" (timed on {regression.gpu} and {regression.best_gpu}: other GPUs, no comparison "
        "until both are timed in one run)"
        if regression.other_gpus
        else ""
    )
    kept = regression.kept or (regression.experiment,)
    verb = "was" if len(kept) == 1 else "were"
    return (
        f"Kept regression: the kernel as it stands (exp {regression.experiment}, the latest "
        f"kept experiment, {now}) is {slower_text(regression.slower)} than exp "
        f"{regression.best} ({then}){at}{on}: {experiments_text(kept)} {verb} kept since, "
        f"and the next experiment would start from the slower version."
    )


def _summary(ctx: Context, params: DiagnoseParams) -> LogSummary:
    log = ctx.log
    progress = ctx.progress
    experiments = log.experiments
    best_step = progress.best()
    best = None
    if best_step is not None:
        experiment = best_step.experiment
        heads = [k for k in best_step.values if headline_key(k)]
        if heads and progress.kind is not None:
            kind = progress.kind.value
            value, unit = _headline(experiment, kind)
            name = experiment.headline_point if heads[0] != HEADLINE else ""
        else:
            # The point the best was chosen on (its first point when it names none).
            key = progress.best_key()
            point = next(
                (p for p in experiment.points if point_key(p) == key),
                experiment.points[0] if experiment.points else None,
            )
            kind, value, unit = (
                (point.kind.value, point.value, point.unit) if point else ("", None, "")
            )
            name = point.name if point is not None else ""
        if value is not None:
            best = _best_result(ctx, experiment, value, unit, kind, name)
    if best is None:
        best = _only_best(ctx)
    min_gain = params.local_minimum.min_gain
    trajectory = []
    for step, gain in progress.trajectory():
        experiment = step.experiment
        value, unit, where = _gained_at(step, progress.kind.value if progress.kind else None)
        if value is not None:
            trajectory.append(
                TrajectoryPoint(
                    experiment=experiment.number,
                    value=value,
                    unit=unit,
                    # JSON holds no infinity: a gain beyond a float is left out, and a
                    # warning (_gain_warnings) says why.
                    gain=gain if math.isfinite(gain) else None,
                    same_run=step.same_run,
                    point=where,
                    verdict=experiment.verdict,
                )
            )
    stall = progress.counted(progress.stall(min_gain))
    kernel = ctx.kernels[0].path if ctx.kernels else None
    return LogSummary(
        root=log.root,
        layouts=_judged_layouts(log),
        experiments=len(experiments),
        attempted=sum(1 for e in experiments if e.attempted),
        first=experiments[0].number if experiments else None,
        last=experiments[-1].number if experiments else None,
        best=best,
        latest_gpu_best=_latest_gpu_best(ctx, best),
        regression=_kept_regression(ctx, progress.kept_regression(params.local_minimum.min_gain)),
        trajectory=trajectory,
        since_best=len(stall),
        stall=[s.experiment.number for s in stall],
        stall_gain=min_gain,
        family=ctx.family,
        family_source=ctx.family_source,
        kernel=kernel,
        until=log.until,
        other_series=tuple(
            f"{series.name or _first_source(series.experiments)} [{series.kind}]: {_count(series)}"
            # Without a primary series (a trace of calls alone) every series is another one.
            for series in (log.series[1:] if log.experiments else log.series)
            if series.experiments
        ),
    )


# What the entries of a series are, by its kind: a workload trace holds calls.
_ENTRIES = {"trace": ("call", "calls")}
# The layouts read from a history file of their own (a JSONL, JSON or TSV file of rows),
# which may hold another series only, and the file suffixes each is read from; any other
# suffix not markdown is read as a table of rows.
_FILE_LAYOUTS = {"jsonl": (".jsonl",), "archive-json": (".json",), "tsv": ()}
_NOT_TABLES = (".jsonl", ".json", ".md", ".markdown", ".txt")


def _file_layout(path: str) -> str:
    """The file layout a history read from ``path`` has (``"jsonl"``, ``"archive-json"``,
    ``"tsv"``), or ``""`` for markdown."""
    suffix = os.path.splitext(path.rsplit("/", 1)[-1])[1].lower()
    for layout, suffixes in _FILE_LAYOUTS.items():
        if suffix in suffixes:
            return layout
    return "" if suffix in _NOT_TABLES else "tsv"


def _judged_layouts(log: ExperimentLog) -> tuple[str, ...]:
    """The layouts the judged series was read from: the reader's, less the history files
    (JSONL, JSON, TSV) that only other series came from. A workload trace or a benchmark's
    rows beside the log are named under "Also read, not judged", not as a layout of the
    experiments judged. With no experiment judged, every layout recognized is named: the
    header then says what was found instead."""
    if not log.experiments:
        return log.layouts
    judged = {_file_layout(source.path) for e in log.experiments for source in e.sources}
    return tuple(
        layout for layout in log.layouts if layout not in _FILE_LAYOUTS or layout in judged
    )


def _count(series: Series) -> str:
    """``"24 calls"``, ``"1 experiment"``: the series' length, named for what it holds. A
    history file whose rows record neither a status nor a correctness verdict (a
    benchmark's timings, ``kernelopt.bench``'s JSONL) holds rows, not attempts whose fate
    the log states: ``"2 rows, none with a status or correctness verdict"``."""
    count = len(series.experiments)
    if series.kind in _FILE_LAYOUTS and not any(
        e.status is not None or e.correctness is not Correctness.UNKNOWN for e in series.experiments
    ):
        return count_text(count, "row") + (
            ", none with a status or correctness verdict"
            if count > 1
            else ", with no status or correctness verdict"
        )
    one, many = _ENTRIES.get(series.kind, ("experiment", "experiments"))
    return count_text(count, one, many)


def _first_source(experiments: tuple[Experiment, ...]) -> str:
    """Where a series without a name was read (its first experiment's file)."""
    sources = experiments[0].sources if experiments else ()
    return sources[0].path if sources else "another file"


def diagnose_log(
    log: ExperimentLog,
    *,
    family: str | None = None,
    catalog: CatalogLike | None = None,
    params: DiagnoseParams | None = None,
    catalog_problem: str | None = None,
) -> Diagnosis:
    """Diagnose an :class:`ExperimentLog` already read (see :func:`diagnose`).

    Parameters
    ----------
    log : ExperimentLog
        What :func:`read_log` returned.
    family : str, optional
        The kernel family (``"mla-decode"``); inferred from the log when None.
    catalog : Catalog, optional
        The catalog linking actions and naming fundamentals (:func:`load_catalog` makes
        one from a path); without one, the missing-fundamental check says it had none.
    params : DiagnoseParams, optional
        Detector thresholds (defaults from the seed's checklist).
    catalog_problem : str, optional
        Why no catalog could be loaded, shown by the missing-fundamental check.

    Returns
    -------
    Diagnosis
        As for :func:`diagnose`, with the log's unread files and warnings.

    Raises
    ------
    InputError
        When an argument has the wrong type.
    """
    check_instance(log, ExperimentLog, "log as an ExperimentLog (read_log's result)", "log")
    if family is not None:
        check_instance(family, str, "family as a string such as 'mla-decode'", "family")
    if catalog is not None:
        _check_catalog(catalog)
    if catalog_problem is not None:
        check_instance(catalog_problem, str, "catalog_problem as a string", "catalog_problem")
    params = DiagnoseParams() if params is None else params
    if not isinstance(params, DiagnoseParams):
        raise InputError(expected("a DiagnoseParams", type(params).__name__, where="params"))
    chosen = family or params.missing_fundamental.family
    ctx = build_context(log, catalog, family=chosen, catalog_problem=catalog_problem)
    outcomes = _run(ctx, params)
    findings = _rank(_point_at_ideas([o.finding for o in outcomes if o.finding is not None], ctx))
    checks: tuple[Check, ...] = tuple(o.check for o in outcomes)
    summary = _summary(ctx, params)
    # A kept regression comes first: whatever the checks find, the next experiment would
    # start from a kernel slower than one the log already has.
    regressed = () if summary.regression is None else (_regression_cause(summary.regression),)
    # A finding whose item stays unchecked (failures below a wall) puts its step in the
    # plan; it is no pathology found, so it names no root cause.
    unchecked = {
        o.check.pathology for o in outcomes if o.finding is not None and not o.check.checked
    }
    return Diagnosis(
        findings=tuple(findings),
        checks=checks,
        summary=summary,
        root_causes=(
            *regressed,
            *_root_causes([f for f in findings if f.pathology not in unchecked]),
        ),
        unread=log.unread,
        warnings=(
            *log.warnings,
            *_unplaced_warnings(ctx),
            *_set_aside_warnings(ctx),
            *_gain_warnings(ctx),
            *_contested_warnings(ctx),
            *_point_warnings(ctx, params.local_minimum.min_gain),
        ),
    )


def diagnose(
    path: str | os.PathLike[str],
    *,
    until: int | None = None,
    family: str | None = None,
    catalog: Catalog | CatalogLike | str | os.PathLike[str] | None = None,
    params: DiagnoseParams | None = None,
    limits: ReadLimits | None = None,
) -> Diagnosis:
    """Diagnose a stalled optimization effort from what is on disk, ending in a plan.

    Reads the log under ``path`` (any layout :func:`kernelopt.experiments.read_log`
    recognizes), runs the nine detectors of the plateau checklist and ranks what they find.
    Nothing in the log is imported or executed.

    Parameters
    ----------
    path : path-like
        The log directory: a repository root, its ``experiments/``, ``docs/`` or ``logs/``.
    until : int, optional
        Diagnose the directory as it stood before experiment ``until`` (only experiments
        numbered below it count).
    family : str, optional
        The kernel family (``"mla-decode"``, ``"softmax"``, ...); inferred when None.
    catalog : Catalog or path-like, optional
        The catalog linking actions and naming fundamentals: a ``Catalog``, a user's
        knowledge directory (merged over the built-in entries), or None for the built-in one.
    params : DiagnoseParams, optional
        Detector thresholds (defaults from the seed's checklist).
    limits : ReadLimits, optional
        Bounds on what is read (bytes per file, files, depth).

    Returns
    -------
    Diagnosis
        Ranked findings, the nine checks, a summary of the log, the root cause(s) and the
        files that could not be read. Render it with ``render_plan()`` or ``to_json()``.

    Raises
    ------
    InputError
        When ``path`` is not a directory, or an argument has the wrong type or value.

    Examples
    --------
    >>> from kernelopt.diagnose import diagnose
    >>> diagnosis = diagnose("examples/logs/mla-decode-plateau")  # doctest: +SKIP
    >>> [f.pathology.value for f in diagnosis.findings]  # doctest: +SKIP
    ['missing_fundamental', 'overlooked_shortcut', ...]
    """
    check_path(path, "path")
    if params is not None and not isinstance(params, DiagnoseParams):
        raise InputError(expected("a DiagnoseParams", type(params).__name__, where="params"))
    if limits is not None:
        check_instance(limits, ReadLimits, "limits as a ReadLimits", "limits")
    if family is not None and (not isinstance(family, str) or not family.strip()):
        raise InputError(
            expected(
                "family as a non-empty string such as 'mla-decode'", repr(family), where="family"
            )
        )
    loaded, problem = load_catalog(catalog)
    if family is not None:
        family = known_family(family, loaded)
    log = read_log(path, until=until, catalog=loaded, limits=limits)
    diagnosis = diagnose_log(
        log, family=family, catalog=loaded, params=params, catalog_problem=problem
    )
    left_out = [
        Unread(path=p.path, reason=f"knowledge tree entry left out: {p.message}")
        for p in getattr(loaded, "problems", ())
        if getattr(p, "is_error", False)
    ]
    if left_out:
        diagnosis = attrs.evolve(diagnosis, unread=(*diagnosis.unread, *left_out))
    # A warning about the whole tree (it holds no entries): a mistyped --knowledge folder
    # would otherwise answer with the built-in entries and no word.
    # A tree-wide problem is a warning at no line whose path is the tree's folder.
    whole = [
        p.message
        for p in getattr(loaded, "problems", ())
        if not getattr(p, "is_error", True)
        and getattr(p, "line", 0) is None
        and os.path.isdir(getattr(p, "path", ""))
    ]
    if whole:
        diagnosis = attrs.evolve(diagnosis, warnings=(*diagnosis.warnings, *whole))
    return diagnosis
