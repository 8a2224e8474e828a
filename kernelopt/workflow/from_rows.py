"""The profile hand-off built from benchmark rows (JSONL), one report per trial point.

Where the rows carry what :func:`kernelopt.bench.profile_report` needs (raw samples, and
absolute rates: ``flop_per_s``/``bytes_per_s`` in the metrics or the device's ceilings),
the report is that function's, on a measurement and roofline rebuilt from the row. Rows
usually keep quantiles and roofline *shares* only (``dram_pct``, ``tc_pct``,
``arith_intensity``, ``ridge``, ``floor_pct``); the report is then built from those
shares with the same rules: memory- or compute-bound by the side of the ridge,
latency-bound when the binding ceiling is used below 20 %, opportunities from the
catalog triggers that fire, never a guess.

They are ranked by estimated gain, as the contract asks (a latency-bound kernel's
measured launch savings first, as :func:`kernelopt.bench.profile_report` ranks them); equal
gains by the catalog's
match score, then by how directly the metrics of the trigger measure the bound
(``dram_pct`` and the side of the ridge for a memory-bound kernel, ``tc_pct`` and the side
for a compute-bound one; launch overhead, occupancy or waves for a latency-bound one). A
launch remedy's gain is the measured launch overhead; any other remedy's is an upper
bound every such remedy shares (its trigger says so): the time above the roofline floor,
less the launch overhead when that was measured, since a change inside the kernel cannot
save time spent launching it. Techniques the kernel already has (its source text, or entry ids the
caller names) are left out, by the presence check :mod:`kernelopt.diagnose` uses.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import attrs

from kernelopt._errors import InputError, expected
from kernelopt.bench.measurement import MODES, Measurement
from kernelopt.bench.records import BenchRow, point_text
from kernelopt.bench.report import (
    HOST_CLOCK_WARNING,
    MEASURED,
    METHODS,
    UPPER_BOUND,
    BaselineMetric,
    Bottleneck,
    MetricMatcher,
    Opportunity,
    ProfileReport,
    Stage,
    check_catalog,
    check_experiment,
    measured_first,
    offered_catalog,
    profile_point,
    profile_report,
    reads_as_ridge,
    ridge_clause,
    small_kept,
)
from kernelopt.bench.roofline import Ceilings, Cost, Roofline
from kernelopt.bench.trials import TrialPoint
from kernelopt.diagnose.presence import present_in
from kernelopt.experiments.log import KernelSource
from kernelopt.workflow._fields import require_optional_instance
from kernelopt.workflow._points import point_words
from kernelopt.workflow._rows import by_point as _by_point
from kernelopt.workflow._rows import check_rows, one_gpu, same_gpu
from kernelopt.workflow._rows import floor_pct as _floor_pct
from kernelopt.workflow._rows import one_impl as _one_impl
from kernelopt.workflow.observe import _point_terms, config_key, config_matches

__all__ = ["profile_from_rows"]

_SHARES = ("dram_pct", "tc_pct", "arith_intensity", "ridge")
# Remedies of per-launch host work: their gain is the launch overhead, not the roofline gap.
_LAUNCH_REMEDIES = frozenset({"cuda-graphs", "buffer-persistence"})
# The metrics that measure each bound directly (2) or through the roofline's side (1).
_BOUND_METRICS: dict[Bottleneck, dict[str, int]] = {
    Bottleneck.MEMORY: {"dram_pct": 2, "arith_intensity": 1, "ridge": 1},
    Bottleneck.COMPUTE: {"tc_pct": 2, "arith_intensity": 1, "ridge": 1},
    Bottleneck.LATENCY: {
        "launch_overhead_pct": 2,
        "occupancy_pct": 2,
        "waves": 2,
        "kv_splits": 2,
        "dram_pct": 1,
        "tc_pct": 1,
    },
}


# Config keys that name a data format rather than a size (benchmarks/mla_decode.py writes
# kv=fp8 for FlashMLA's 656-byte cache and nothing for the bfloat16 one).
_FORMAT_KEYS = ("kv",)


def _trial_point(row: BenchRow) -> TrialPoint | str:
    """The row's point: a TrialPoint where its config holds integer b, s (or s_q) and t (or
    t_max), as always; else the config's integer axes (``hidden=7168 tokens=4096``), as
    evaluate and the devlog take a kernel's own axes. Text and other entries (``dtype``,
    ``kv=fp8``) are no size of the point."""
    config = row.config
    found = {axis: config_key(config, axis) for axis in ("b", "s", "t")}
    if all(key is not None and _is_int(config[key]) for key in found.values()):
        b, s, t = (str(found[axis]) for axis in ("b", "s", "t"))
        extra = {
            key: int(value)
            for key, value in config.items()
            if key not in (b, s, t) and _is_int(value)
        }
        return TrialPoint(b=int(config[b]), s=int(config[s]), t=int(config[t]), extra=extra)
    axes = {key: int(value) for key, value in config.items() if _is_int(value)}
    if not axes:
        raise InputError(
            expected(
                "rows whose config holds integer axes (b, s and t, or the kernel's own: "
                "tokens=4096)",
                f"{point_text(config)!r} (none)",
            )
        )
    return profile_point(axes, where="rows")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _one_way_per_point(rows: Sequence[BenchRow], impl: str) -> None:
    """Refuse a point timed several ways when no mode was chosen, as ``evaluate`` does: the
    last row of the point counted, a CUDA-graph time reported as if it were the cold one."""
    ways: dict[str, set[str]] = {}
    for row in rows:
        ways.setdefault(point_words(row.config), set()).add(f"{row.mode}/{row.cache}")
    several = next((sorted(found) for found in ways.values() if len(found) > 1), None)
    if several is not None:
        raise InputError(
            expected(
                f"rows of {impl} timed one way (choose the mode with mode=, --mode on the "
                "command line)",
                ", ".join(several),
                where="rows",
            )
        )


def _graph_rows(rows: Sequence[BenchRow]) -> dict[str, BenchRow]:
    """The graph-replay row of each point timed so once (a point of two graph rows has no
    one graph timing, and none is taken)."""
    found: dict[str, list[BenchRow]] = {}
    for row in rows:
        if row.mode == "graph":
            found.setdefault(point_words(row.config), []).append(row)
    return {key: timed[0] for key, timed in found.items() if len(timed) == 1}


def _with_launch_overhead(row: BenchRow, graph: BenchRow | None) -> BenchRow:
    """``row`` with ``launch_overhead_pct``, the share of its time the graph replays of the
    same point removed, where it holds none and ``graph`` was timed on its GPU: the report
    then ranks the launch remedies by a measured gain, as ``profile_report(graph=...)``."""
    if graph is None or "launch_overhead_pct" in row.metrics or not same_gpu(graph, row.gpu):
        return row
    from kernelopt.bench.measurement import UNIT_SECONDS

    seconds = row.median * UNIT_SECONDS[row.unit]
    replayed = graph.median * UNIT_SECONDS[graph.unit]
    if seconds <= 0:
        return row
    share = max(0.0, 100.0 * (seconds - replayed) / seconds)
    return attrs.evolve(row, metrics={**row.metrics, "launch_overhead_pct": share})


def _rates(row: BenchRow, ceilings: Ceilings | None) -> tuple[float, float] | None:
    m = row.metrics
    if "flop_per_s" in m and "bytes_per_s" in m:
        return m["flop_per_s"], m["bytes_per_s"]
    if ceilings is None or "tc_pct" not in m or "dram_pct" not in m:
        return None
    ridge = m.get("ridge")
    if ridge and abs(ceilings.ridge / ridge - 1.0) > 0.01:
        return None  # other ceilings than the row was placed with
    return (
        m["tc_pct"] / 100.0 * ceilings.matmul_flop_per_s,
        m["dram_pct"] / 100.0 * ceilings.copy_bytes_per_s,
    )


def _measurement(row: BenchRow) -> Measurement:
    # A row may say "cpu" or "host" for a host-clock timing (the log format's modes, or a
    # launch's host time); a Measurement keeps the timer's modes and says the host clock by
    # its backend.
    host = row.host_clock
    return Measurement(
        samples=row.samples,
        unit=row.unit,
        mode=row.mode if row.mode in MODES else "cold",
        cache=row.cache,
        backend="cpu-perf-counter" if host else row.backend,
        gpu=row.gpu,
        label=row.impl,
    )


def _exact(
    row: BenchRow,
    baseline: BenchRow | None,
    *,
    kernel: str,
    version: str,
    point: TrialPoint | str,
    ceilings: Ceilings | None,
    catalog: MetricMatcher | None,
    latency_below_pct: float,
) -> ProfileReport | None:
    """profile_report on the row, when the row holds samples and absolute rates."""
    rates = _rates(row, ceilings)
    if not row.samples or rates is None or (baseline is not None and not baseline.samples):
        return None
    flop_per_s, bytes_per_s = rates
    measured = _measurement(row)
    m = row.metrics
    if ceilings is None:
        if m.get("tc_pct", 0.0) <= 0 or m.get("dram_pct", 0.0) <= 0:
            return None
        ceilings = Ceilings(
            gpu=row.gpu or "device",
            copy_bytes_per_s=bytes_per_s / (m["dram_pct"] / 100.0),
            matmul_flop_per_s=flop_per_s / (m["tc_pct"] / 100.0),
            source="derived from the row's rates and shares",
        )
    cost = Cost(flops=flop_per_s * measured.seconds, bytes=bytes_per_s * measured.seconds)
    extra = {k: v for k, v in m.items() if k not in (*_SHARES, "floor_pct")}
    return profile_report(
        kernel=kernel,
        version=version,
        point=point,
        measurement=measured,
        roofline=Roofline(ceilings=ceilings, cost=cost),
        baseline=None if baseline is None else _measurement(baseline),
        extra_metrics=extra,
        catalog=catalog,
        latency_below_pct=latency_below_pct,
    )


def _classify(m: Mapping[str, float], latency_below_pct: float) -> tuple[Bottleneck, bool]:
    memory = m["arith_intensity"] <= m["ridge"]  # the roofline's bound: bytes set the floor
    used = m["dram_pct"] if memory else m["tc_pct"]
    if used < latency_below_pct:
        return Bottleneck.LATENCY, memory
    return (Bottleneck.MEMORY if memory else Bottleneck.COMPUTE), memory


def _root_cause(
    m: Mapping[str, float], floor: float | None, bottleneck: Bottleneck, memory: bool
) -> str:
    ai, ridge = m["arith_intensity"], m["ridge"]
    # The report's own words: "100 is below the ridge 100" was written for a call at the
    # ridge, and "163 is below the ridge 163" for one just under it.
    bound = "balanced" if reads_as_ridge(ai, ridge) else "memory" if memory else "compute"
    side = ridge_clause(ai, ridge, bound=bound)
    first = f"{side}."
    if floor is not None:
        first = f"{side}, {small_kept(floor, 0)}% of the measured time."
    # A tiny kernel's shares keep their digits: "0%" reads as a broken count.
    reach = (
        f"{small_kept(m['dram_pct'], 0)}% of the copy bandwidth and "
        f"{small_kept(m['tc_pct'], 0)}% of the matmul rate"
    )
    if bottleneck is Bottleneck.LATENCY:
        launch = ""
        if "launch_overhead_pct" in m:
            launch = f"; CUDA graphs remove {small_kept(m['launch_overhead_pct'], 0)}% of the time"
        second = (
            f"It reaches only {reach}, so it waits on latency (too little work in flight, "
            f"serial dependences or launches){launch}."
        )
    else:
        second = f"It reaches {reach}."
    return f"{first} {second}"


def _trigger_names(match: Any, metrics: Mapping[str, float]) -> list[str]:
    """The metrics the first matching reason names, in the order it names them."""
    for reason in (str(r) for r in getattr(match, "reasons", ())):
        found = sorted(
            (hit.start(), name)
            for name in metrics
            if (hit := re.search(rf"\b{re.escape(name)}\b", reason)) is not None
        )
        if found:
            return [name for _, name in found]
    return []


def _trigger(match: Any, metrics: Mapping[str, float]) -> tuple[str, str | None]:
    names = _trigger_names(match, metrics)[:3]
    if not names:
        return "-", None
    return ", ".join(f"{n}={metrics[n]:.3g}" for n in names), names[0]


def _kernel_side(gap: float | None, launch: float | None) -> float | None:
    """The most a change inside the kernel can save, % of the time (None: unknown)."""
    if gap is None or launch is None:
        return gap
    return max(0.0, gap - launch)


def _opportunities(
    metrics: Mapping[str, float],
    floor: float | None,
    catalog: MetricMatcher,
    bottleneck: Bottleneck,
    present: _Present,
) -> list[Opportunity]:
    gap = None if floor is None else max(0.0, 100.0 - floor)
    launch = metrics.get("launch_overhead_pct")
    relevance = _BOUND_METRICS.get(bottleneck, {})
    ranked = []
    for match in catalog.match_metrics(metrics):
        entry = match.entry
        kind = getattr(getattr(entry, "kind", None), "value", getattr(entry, "kind", ""))
        if kind == "anti-pattern" or str(entry.id) in METHODS:
            continue  # what to stop doing, or how to measure: not an opportunity
        if present.has(entry):
            continue  # the kernel already does it
        trigger, metric = _trigger(match, metrics)
        launch_side = entry.id in _LAUNCH_REMEDIES or metric == "launch_overhead_pct"
        measured = launch_side and launch is not None
        gain = launch if measured else _kernel_side(gap, launch)
        if gain is None:
            continue  # no measured bound on what it could save: no number to state
        item = Opportunity(
            name=str(entry.name),
            entry_id=str(entry.id),
            gain_pct=gain,
            trigger=f"{trigger} ({MEASURED if measured else UPPER_BOUND})",
        )
        score = float(getattr(match, "score", 0.0))
        # A trigger that tests the bound's own side and ceiling is the most direct evidence.
        direct = sum(relevance.get(name, 0) for name in set(_trigger_names(match, metrics)))
        first = measured_first(bottleneck, measured, launch)
        ranked.append((first, -round(gain, 6), -score, -direct, item.entry_id, item))
    ranked.sort(key=lambda item: item[:5])
    return [item for *_, item in ranked]


@attrs.frozen(kw_only=True)
class _Present:
    """What the kernel already has: entry ids named by the caller, and its source text."""

    ids: frozenset[str] = frozenset()
    sources: tuple[KernelSource, ...] = ()

    def has(self, entry: Any) -> bool:
        entry_id = str(getattr(entry, "id", ""))
        if entry_id in self.ids:
            return True
        return bool(self.sources) and present_in(entry, self.sources) is not None

    def drop(self, report: ProfileReport, catalog: MetricMatcher) -> ProfileReport:
        """``report`` without the opportunities the kernel already has."""
        if not self.ids and not self.sources:
            return report
        listed: Iterable[Any] = catalog if isinstance(catalog, Iterable) else ()
        entries = {str(getattr(e, "id", "")): e for e in listed}
        kept = [
            o
            for o in report.opportunities
            if not self.has(entries.get(o.entry_id, _Named(id=o.entry_id)))
        ]
        return attrs.evolve(report, opportunities=kept)


@attrs.frozen(kw_only=True)
class _Named:
    """An entry known by id only (a report's opportunity the catalog does not list)."""

    id: str


def _present(kernel_source: str | Sequence[str] | None, present: Collection[str]) -> _Present:
    if isinstance(present, str | bytes) or not isinstance(present, Iterable):
        raise InputError(
            expected("present as a collection of entry ids", repr(present), where="present")
        )
    texts: Sequence[str]
    if kernel_source is None:
        texts = ()
    elif isinstance(kernel_source, str):
        texts = (kernel_source,)
    elif isinstance(kernel_source, Iterable) and not isinstance(kernel_source, bytes):
        texts = tuple(kernel_source)
    else:
        texts = (kernel_source,)  # refused below, by the name of the argument
    if any(not isinstance(text, str) for text in texts):
        raise InputError(
            expected(
                "kernel_source as text (or a list of texts)",
                type(kernel_source).__name__,
                where="kernel_source",
            )
        )
    sources = tuple(
        KernelSource(path=f"kernel source {i}", text=text, language="python")
        for i, text in enumerate(texts, start=1)
    )
    return _Present(ids=frozenset(str(i) for i in present), sources=sources)


def _check_options(ceilings: object, catalog: object, latency_below_pct: object) -> None:
    """Refuse, by the argument's name, what :func:`profile_from_rows` would fail on unnamed
    when a row reads it (``ceilings.ridge``, ``catalog.match_metrics``, ``used < None``)."""
    require_optional_instance(
        ceilings, Ceilings, "Ceilings (kernelopt.bench.load_ceilings) or None", where="ceilings"
    )
    check_catalog(catalog)
    if (
        isinstance(latency_below_pct, bool)
        or not isinstance(latency_below_pct, numbers.Real)
        or not math.isfinite(latency_below_pct)
    ):
        raise InputError(
            expected("a finite number", repr(latency_below_pct), where="latency_below_pct")
        )


def _baseline_rows(row: BenchRow, before: BenchRow) -> list[BaselineMetric]:
    scale = 1.0
    if before.unit != row.unit:
        from kernelopt.bench.measurement import UNIT_SECONDS

        scale = UNIT_SECONDS[row.unit] / UNIT_SECONDS[before.unit]
    unit = before.unit
    rows = [
        BaselineMetric(
            metric=f"Median ({unit})", previous=before.median, current=row.median * scale, unit=unit
        ),
        BaselineMetric(
            metric=f"P80 ({unit})", previous=before.p80, current=row.p80 * scale, unit=unit
        ),
    ]
    previous, current = _floor_pct(before), _floor_pct(row)
    if previous is not None and current is not None:
        rows.append(BaselineMetric(metric="Floor %", previous=previous, current=current, unit="%"))
    for name, label in (("dram_pct", "DRAM %"), ("tc_pct", "TC %")):
        if name in before.metrics and name in row.metrics:
            rows.append(
                BaselineMetric(
                    metric=label, previous=before.metrics[name], current=row.metrics[name], unit="%"
                )
            )
    return rows


def _from_shares(
    row: BenchRow,
    baseline: BenchRow | None,
    *,
    kernel: str,
    version: str,
    point: TrialPoint | str,
    catalog: MetricMatcher,
    latency_below_pct: float,
    present: _Present,
) -> ProfileReport:
    m = row.metrics
    if "arith_intensity" not in m and m.get("bytes_per_s") == 0 and m.get("flop_per_s"):
        # A call that moves no bytes: row_from_measurement leaves its infinite intensity
        # out (JSON has no inf), and it lies above any ridge.
        m = {**m, "arith_intensity": math.inf}
    missing = [name for name in _SHARES if name not in m]
    if missing:
        raise InputError(
            expected(
                "rows with roofline metrics (dram_pct, tc_pct, arith_intensity, ridge)",
                f"none of {', '.join(missing)} at {point_text(row.config)}",
            )
        )
    floor = _floor_pct(row)
    bottleneck, memory = _classify(m, latency_below_pct)
    stage = Stage(
        name=kernel,
        duration=row.median,
        unit=row.unit,
        tc_pct=m["tc_pct"],
        dram_pct=m["dram_pct"],
        occupancy_pct=m.get("occupancy_pct"),
        bottleneck=bottleneck.value,
        key_issue="" if floor is None else f"{small_kept(floor, 0)}% of roofline floor",
    )
    return ProfileReport(
        kernel=kernel,
        version=version,
        point=point,
        stages=[stage],
        bottleneck=bottleneck,
        root_cause=(HOST_CLOCK_WARNING if row.host_clock else "")
        + _root_cause(m, floor, bottleneck, memory),
        opportunities=_opportunities(m, floor, catalog, bottleneck, present),
        baseline=[] if baseline is None else _baseline_rows(row, baseline),
    )


def profile_from_rows(
    rows: Sequence[BenchRow],
    *,
    kernel: str,
    version: str,
    impl: str | None = None,
    baseline: Sequence[BenchRow] = (),
    baseline_impl: str | None = None,
    point: str | None = None,
    mode: str | None = None,
    ceilings: Ceilings | None = None,
    catalog: MetricMatcher | None = None,
    latency_below_pct: float = 20.0,
    kernel_source: str | Sequence[str] | None = None,
    present: Collection[str] = (),
    family: str | None = None,
    language: str | None = None,
    experiment: int | None = None,
) -> list[ProfileReport]:
    """The profile hand-off of ``version`` at each trial point its rows hold.

    Parameters
    ----------
    rows : sequence of BenchRow
        Benchmark rows (``kernelopt.bench.read_rows``); their configs' integer entries are
        the trial point: b, s (or s_q) and t (or t_max) with other axes, or a kernel's
        own axes (``{"tokens": 4096, "hidden": 7168}``).
    kernel, version : str
        What was profiled.
    impl : str, optional
        The rows' implementation to report; default the one named ``version``, or the
        only one present.
    baseline : sequence of BenchRow
        Rows of the previous version: fill the vs-Baseline table at the same points,
        from the rows timed the same way (``mode``) as the version's.
    baseline_impl : str, optional
        Which implementation of ``baseline``, when it holds several.
    point : str, optional
        Keep only rows whose config holds these ``key=value`` terms (or a trial name).
    mode : str, optional
        Keep only rows timed in this mode (``"cold"``, ``"graph"``). A benchmark that times
        each point several ways writes a row per way: without ``mode`` such a point is
        refused, as ``evaluate`` refuses it. With a mode other than ``"graph"``, the one
        graph-replay row of the same point and GPU, where there is one, gives the
        ``launch_overhead_pct`` (the share of the time the replays removed) that ranks
        the launch remedies by a measured gain.
    ceilings : Ceilings, optional
        The device's ceilings; with raw samples in the rows, the report is
        :func:`kernelopt.bench.profile_report`'s.
    catalog : object with ``match_metrics``, optional
        Default the built-in catalog.
    latency_below_pct : float
        Latency-bound when the binding ceiling is used below this share.
    kernel_source : str or sequence of str, optional
        The kernel's source text (read as text, never run): techniques it already shows
        (code patterns or catalog keywords, see
        :func:`kernelopt.diagnose.presence.present_in`) are not suggested.
    present : collection of str
        Catalog entry ids the kernel already has; not suggested either.
    family : str, optional
        The kernel's family: only entries for it or its ancestors are suggested. Default
        the family a word of ``kernel`` names, else only entries for every kernel family,
        which each hand-off's note line says (see :func:`kernelopt.bench.profile_report`).
    language : str, optional
        The kernel's language: only shared entries and that language's are suggested
        (``Catalog.query(language=...)``, as ``kernelopt catalog match --language``).
    experiment : int, optional
        The experiment whose version this is: each heading reads ``## Profile: <kernel>
        <version> exp <N> | ...``, as the experiment-log readers date a profile.

    Returns
    -------
    list of ProfileReport
        One per trial point, in the rows' order.

    Raises
    ------
    InputError
        For rows that are not BenchRow, rows whose config holds no integer axis or no
        roofline metrics, a point timed several ways without ``mode``,
        an ambiguous choice of implementation, or the version's rows from several GPUs
        (the baseline's rows of another GPU are left out of the vs-Baseline table).
    """
    rows = check_rows(rows, "rows")
    baseline = check_rows(baseline, "baseline")
    if not rows:
        raise InputError(expected("at least one benchmark row", "none", where="rows"))
    chosen = _one_impl(rows, impl, version, "rows", choose="--impl (impl=)")
    terms = {} if point is None else _point_terms(point)
    mine = [row for row in rows if row.impl == chosen and config_matches(row.config, terms)]
    if not mine:
        raise InputError(expected(f"rows of {chosen!r} at point {point!r}", "none"))
    graphs: dict[str, BenchRow] = {}
    if mode is None:
        _one_way_per_point(mine, chosen)
    else:
        modes = sorted({row.mode for row in mine})
        # The graph replays of each point, for the launch overhead of a cold or hot timing.
        graphs = _graph_rows(mine) if mode != "graph" else {}
        mine = [row for row in mine if row.mode == mode]
        if not mine:
            raise InputError(
                expected(f"rows of {chosen!r} timed in mode {mode!r}", f"only {modes}")
            )
    gpu = one_gpu(mine, chosen, "rows")
    previous_rows: list[BenchRow] = []
    if baseline:
        which = _one_impl(
            baseline, baseline_impl, None, "baseline", choose="--baseline-impl (baseline_impl=)"
        )
        # Another device's time would show the devices' difference as the version's.
        previous_rows = [row for row in baseline if row.impl == which and same_gpu(row, gpu)]
    has = _present(kernel_source, present)
    _check_options(ceilings, catalog, latency_below_pct)
    check_experiment(experiment)
    if catalog is None:
        from kernelopt.catalog import Catalog

        catalog = Catalog.builtin()
    catalog, note = offered_catalog(catalog, kernel, family=family, language=language)
    reports = []
    for key, row in _by_point(mine).items():
        trial = _trial_point(row)
        row = _with_launch_overhead(row, graphs.get(key))
        # The baseline timed the same way: a CUDA-graph time against a cold one (a benchmark
        # writes both per point) would show the mode's difference as the version's.
        previous = _by_point([r for r in previous_rows if r.mode == row.mode]).get(key)
        # A point's sizes are integers; a format axis (kv=fp8) would vanish from the
        # heading and two formats would read as one point, so the version names it.
        formats = [f"{k}={v}" for k, v in sorted(row.config.items()) if k in _FORMAT_KEYS]
        label = f"{version}[{','.join(formats)}]" if formats else version
        exact = _exact(
            row,
            previous,
            kernel=kernel,
            version=label,
            point=trial,
            ceilings=ceilings,
            catalog=catalog,
            latency_below_pct=latency_below_pct,
        )
        if exact is not None:
            reports.append(has.drop(exact, catalog))
        else:
            reports.append(
                _from_shares(
                    row,
                    previous,
                    kernel=kernel,
                    version=label,
                    point=trial,
                    catalog=catalog,
                    latency_below_pct=latency_below_pct,
                    present=has,
                )
            )
    return [attrs.evolve(report, experiment=experiment, note=note) for report in reports]
