"""4. Wrong bottleneck: optimizing compute on a memory-bound kernel (or the reverse), or
optimizing with no profile at all.

The kernel's bound comes from profile.md (``Bottleneck: Memory-bound``) or from metrics in
the profile and results (``dram_pct``, ``tc_pct``, ``arith_intensity`` against ``ridge``),
or from the latest result's roofline floor where its row says which ceiling sets it (a
``Bound`` column: bytes make it memory-bound, FLOPs compute-bound), or else from the
profiler notes of the results when they name one bound in words (a devlog's
"Diagnosis: Kernel is latency-bound"; a bound ruled out, "not memory-bound", names none);
under ``until``, only the notes that stood before the cut (see ``read_log``). Last, a
floor whose ceiling no row names still tells one thing: a headline row under
:data:`LATENCY_BELOW_FLOOR_PCT` % of its floor uses neither ceiling much, so it is
latency-bound (as ``kernelopt.bench.report.classify`` calls it); above that, its share
of the floor is quoted as the evidence there is, and no side is judged.
Recent attempts are classified by their catalog tags (worth two words each) and words:

- compute: MMA tiles, head grouping, dot precision, exp2 with the scale folded in, warp
  specialization and TMA tile loads (the catalog's remedies for a compute-bound kernel whose
  tensor cores wait), tensor cores, unrolling, instruction counts;
- memory: pipelining and prefetch depth, vectorized/coalesced loads, shared-memory tiles,
  paging, fusion, caching, bytes and bandwidth;
- latency: parallelism and launch work — split-KV and its combine, persistent grids,
  occupancy and waves, CUDA graphs, persistent buffers. Neither side's work, so never
  "the wrong side";
- both: software pipelining (``num_stages``, double buffering), which overlaps tile loads
  with the math on them and raises whichever of DRAM throughput and tensor-core use was
  starved: it serves a compute-bound GEMM as it serves a memory-bound kernel, so it is
  never "the wrong side" either. An attempt tagged with it, or titled in its words, is
  "both" unless its other words or tags name a side ("num_stages=3: deeper prefetch"
  frames the stages as memory work, and is judged so).

A latency-bound kernel is judged by what its attempts work on (:func:`_latency_aim`):
tuning inside the kernel (tile sizes, warps, tokens per program, loads and stores,
eviction hints) is the wrong side, launch work (CUDA graphs, fusion, kept buffers) never
is, and parallelism work (split-KV, a persistent grid) is counted with the tuning only
where the log says the time goes to the launch or the host (what CUDA graphs remove):
a persistent grid does not remove a launch. The plan then links ``cuda-graphs`` and
``kernel-fusion``. Trial points of the latest result that read another bound than the
one judged, or sit far under the headline's share of the floor, are named beside it.

An attempt that set a new best by ``min_gain`` or more is evidence the change fit the
kernel, not that it aimed at the wrong resource: it is not counted. Nor is one whose headline
was measured at another trial point than the one profile.md's heading names: the bound is a
property of the point (MLA decode is compute-bound at 128 heads, memory-bound at 16).
The actions are the catalog entries whose metric triggers fire on the profile, without
those on the wrong side and those the kernel source already shows (the presence check
missing-fundamental uses).
A DRAM% and TC% that decide no bound (each under its threshold, or too close to call) are
quoted with where they were read and the rule each misses, and not asked for again.
With no profiling data anywhere, the advice is the seed's: instrument with CUDA events first.
A log with no change in it yet (a baseline alone, or plans not run) chose nothing blind: the
item is not found, and names the profile as missing data.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence

import attrs

from kernelopt._words import and_list, count_text
from kernelopt.diagnose.context import Context, PointMove, experiments_text, quote
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.floors import FloorReading, HostClockFloors, host_clock_floors
from kernelopt.diagnose.model import Action, Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import WrongBottleneckParams
from kernelopt.diagnose.presence import names_entry, present_in
from kernelopt.diagnose.progress import Step
from kernelopt.diagnose.source import float32_dots
from kernelopt.experiments.log import Experiment, Fact, ProfileFacts
from kernelopt.experiments.points import points_differ
from kernelopt.experiments.readers import stated_bottleneck
from kernelopt.experiments.records import Status

__all__ = ["LATENCY_BELOW_FLOOR_PCT", "SIDES", "aim_of", "bound_of", "detect"]

_PATHOLOGY = Pathology.WRONG_BOTTLENECK
LATENCY_BELOW_FLOOR_PCT = 20.0
"""A row under this share (%) of its roofline floor is latency-bound: the share of the floor
reached is the share of the binding ceiling used, and ``kernelopt.bench.report.classify``
calls a kernel that uses its binding ceiling this little latency-bound."""
# Which resource each catalog technique works on. Split-KV raises parallelism (more CTAs
# over the same bytes and FLOPs), TMA and warp specialization keep tensor cores fed on
# compute-bound kernels (their catalog triggers: arith_intensity > ridge, tc_pct low).
# Pipelining hides load latency behind the math: its catalog entry raises "DRAM throughput
# or tensor-core utilization: whichever was starved", so it serves both sides.
SIDES: dict[str, str] = {
    "head-grouping-mma-tile": "compute",
    "dot-input-precision": "compute",
    "exp2-folded-scale": "compute",
    "warp-specialization": "compute",
    "block-pointers-tma": "compute",
    "paged-kv-cache": "memory",
    "kv-tile-shared-load": "memory",
    "vectorized-coalesced-loads": "memory",
    "software-pipelining": "both",
    "kernel-fusion": "memory",
    "split-kv-flash-decoding": "latency",
    "split-kv-lse-combine": "latency",
    "persistent-grid": "latency",
    "cuda-graphs": "latency",
    "buffer-persistence": "latency",
}
_WORDS: dict[str, re.Pattern[str]] = {
    "compute": re.compile(
        r"tensor[- ]?cores?|\bmma\b|\bwgmma\b|\btf32\b|\bfp8\b|\bint8\b|\bflops?\b"
        r"|\bcompute\b|\binstructions?\b|\bunroll\w*|\bfma\b|\bilp\b|\bexp2\b|\bmufu\b"
        r"|\barithmetic\b|\bdot product\b",
        re.IGNORECASE,
    ),
    "memory": re.compile(
        r"vectori[sz]\w*|coalesc\w*|bandwidth|\bdram\b|\bl2\b|\bcach\w+|prefetch\w*"
        r"|cp\.async|async copy|shared memory|\bsmem\b|\bpaged\b|\bloads?\b|\bstores?\b"
        r"|\bmemory\b|traffic|\bbytes\b",
        re.IGNORECASE,
    ),
    "latency": re.compile(
        r"split[- _]?kv|kv[- _]?splits?|\bsplits?\b|\boccupancy\b|\bwaves?\b|\bprograms\b"
        r"|\bctas?\b|persistent (?:grid|kernel|ctas?)|\blaunch\w*|cuda[- ]?graphs?",
        re.IGNORECASE,
    ),
    "both": re.compile(r"pipelin\w*|double[- ]?buffer\w*|multi-?stage\w*", re.IGNORECASE),
}


def _too_few(
    wrong: Sequence[Experiment], judged: Sequence[Experiment], params: WrongBottleneckParams
) -> bool:
    """Whether ``wrong`` is too few to call the effort's direction: under
    ``min_experiments``, or under ``min_share`` of every attempt judged (not only of those
    whose aim could be read: two memory attempts among six is a side trip)."""
    return len(wrong) < params.min_experiments or len(wrong) < params.min_share * max(
        1, len(judged)
    )


def _share_text(wrong: Sequence[Experiment], judged: Sequence[Experiment], aim: str) -> str:
    """``"1 of the 3 recent attempts judged <aim>"``, or that none is left to judge."""
    if not judged:
        return "no recent attempt is left to judge"
    return f"{len(wrong)} of the {len(judged)} recent attempts judged {aim}"


def aim_of(experiment: Experiment) -> str | None:
    """``"compute"``, ``"memory"``, ``"latency"``, ``"both"`` or None: what an experiment's
    change is aimed at, from its catalog tags (two points each) and the words of its title.
    ``"both"`` (software pipelining) and ``"latency"`` are never the wrong side."""
    scores = {side: len(words.findall(experiment.description)) for side, words in _WORDS.items()}
    for tag in experiment.tags:
        side = SIDES.get(tag)
        if side is not None:
            scores[side] += 2
    # Pipelining is both sides' work unless the title frames it as one side's ("deeper
    # prefetch" is about memory): the words that name a side decide.
    both = scores.pop("both")
    best = max(scores.values())
    if best == 0:
        return "both" if both > 0 else None
    winners = [side for side, score in scores.items() if score == best]
    return winners[0] if len(winners) == 1 else None


@attrs.frozen(kw_only=True)
class _Bound:
    """A bound, its evidence, and the trial point it was stated at (``""``: none named),
    with whose words that point is named (``"the profile's"``). ``shown``: what a sentence
    that judges no side shows of the evidence (its source where empty)."""

    kind: str
    evidence: Evidence
    point: str = ""
    of: str = ""
    shown: str = ""


def bound_of(ctx: Context, params: WrongBottleneckParams) -> tuple[str, Evidence] | None:
    """The kernel's bound (``"memory"``, ``"compute"``, ``"latency"``) and where it is stated."""
    bound = _bound(ctx, params, ctx.floors)
    return None if bound is None else (bound.kind, bound.evidence)


def _floor_bound(reading: FloorReading, named_only: bool) -> _Bound | None:
    """The bound a result row's roofline floor states: the ceiling the row names, or
    latency where the row reaches under :data:`LATENCY_BELOW_FLOOR_PCT` % of its floor;
    with ``named_only``, only the first."""
    if named_only and reading.ceiling is None:
        return None
    latency = reading.fraction * 100.0 < LATENCY_BELOW_FLOOR_PCT
    if not latency and reading.ceiling is None:
        return None
    said = quote(reading.text())
    return _Bound(
        kind="latency" if latency else str(reading.ceiling),
        evidence=Evidence(
            quote=said, source=str(reading.source), experiments=(reading.experiment.number,)
        ),
        point=reading.point,
        of="the floor row's",
        # The share of the floor is the whole reason for a latency bound: it is shown.
        shown=f"{said}: under {LATENCY_BELOW_FLOOR_PCT:g}% of it; {reading.source}",
    )


def _bound(
    ctx: Context, params: WrongBottleneckParams, floors: Sequence[FloorReading]
) -> _Bound | None:
    """:func:`bound_of`, with the trial point the bound holds at; ``floors`` are the
    latest result's rows with a roofline floor, its headline first."""
    profile = ctx.log.profile
    if profile is not None and profile.bottleneck is not None:
        fact = profile.facts[0] if profile.facts else None
        source = str(fact.source) if fact is not None else str(profile.source)
        return _Bound(
            kind=profile.bottleneck,
            evidence=Evidence(
                quote=quote(fact.text if fact else profile.bottleneck), source=source
            ),
            point=profile.point,
            of="the profile's",
        )
    measured = _measured_bound(ctx, params)
    if measured is not None:
        return _Bound(kind=measured[0], evidence=measured[1])
    headline = floors[0] if floors else None
    named = _floor_bound(headline, named_only=True) if headline is not None else None
    if named is not None:
        return named
    # Under ``until`` the log's profiler notes are those that stood before the cut (a note
    # in a later entry, or in no entry at all, is not among them).
    stated = _stated_bound(ctx.log.profiling)
    if stated is not None:
        return _Bound(kind=stated[0], evidence=stated[1])
    return _floor_bound(headline, named_only=False) if headline is not None else None


# A number as a profile line writes it ("59", "59%", "1.5e3"), not part of a word or of
# another number.
_WRITTEN_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


@attrs.frozen(kw_only=True)
class _Reading:
    """A metric's value and where it was read (``path:line`` where a cited line shows it)."""

    value: float
    where: str


def _profile_place(profile: ProfileFacts, value: float) -> str:
    """Where the profile states ``value``: the first line it was read from that shows the
    number (a table row, a profiler line), else the profile file."""
    for fact in profile.facts:
        numbers = (float(n) for n in _WRITTEN_NUMBER.findall(fact.text))
        if any(math.isclose(n, value, rel_tol=1e-9) for n in numbers):
            return str(fact.source)
    return str(profile.source)


def _metric_readings(ctx: Context) -> dict[str, _Reading]:
    """The metrics a bound is measured from, each with where it was read: the profile's,
    and over them the latest result's, cited at the file that holds the number quoted."""
    profile = ctx.log.profile
    readings = (
        {
            name: _Reading(value=value, where=_profile_place(profile, value))
            for name, value in profile.metrics.items()
        }
        if profile is not None
        else {}
    )
    latest = next((e for e in reversed(ctx.experiments) if e.metrics), None)
    if latest is not None:
        where = str(latest.ref("metrics") or latest.source or "")
        readings.update(
            {name: _Reading(value=value, where=where) for name, value in latest.metrics.items()}
        )
    return readings


def _measured_bound(ctx: Context, params: WrongBottleneckParams) -> tuple[str, Evidence] | None:
    """The bound the profile's and the latest result's metrics measure (DRAM%, TC%, the
    arithmetic intensity against the ridge), or None."""
    readings = _metric_readings(ctx)
    values = {name: reading.value for name, reading in readings.items()}
    dram, tc = values.get("dram_pct"), values.get("tc_pct")
    intensity, ridge = values.get("arith_intensity"), values.get("ridge")
    if dram is not None and dram >= params.memory_bound_dram_pct and (tc is None or tc < dram / 2):
        return "memory", Evidence(
            quote=f"dram_pct={dram:g}" + (f", tc_pct={tc:g}" if tc is not None else ""),
            source=readings["dram_pct"].where,
        )
    if tc is not None and tc >= params.compute_bound_tc_pct and (dram is None or dram < tc):
        return "compute", Evidence(
            quote=f"tc_pct={tc:g}" + (f", dram_pct={dram:g}" if dram is not None else ""),
            source=readings["tc_pct"].where,
        )
    if intensity is not None and ridge is not None and ridge > 0:
        bound = "memory" if intensity < ridge else "compute"
        return bound, Evidence(
            quote=f"arith_intensity={intensity:g} vs ridge={ridge:g}",
            source=readings["arith_intensity"].where,
        )
    return None


def _undecided_by_metrics(ctx: Context, params: WrongBottleneckParams) -> Outcome | None:
    """The item where the log measured DRAM% or TC% but :func:`_measured_bound` reads no
    bound from them: the numbers, where they were read, and the rule each one misses
    (under its threshold, or too close to the other to call). None when neither was
    measured."""
    readings = _metric_readings(ctx)
    dram, tc = readings.get("dram_pct"), readings.get("tc_pct")
    if dram is None and tc is None:
        return None
    measured = [
        (label, reading) for label, reading in (("DRAM%", dram), ("TC%", tc)) if reading is not None
    ]
    if len({reading.where for _, reading in measured}) == 1:
        shown = " and ".join(f"{label} {reading.value:g}" for label, reading in measured)
        shown += f" ({measured[0][1].where})" if measured[0][1].where else ""
    else:
        shown = " and ".join(
            f"{label} {reading.value:g}" + (f" ({reading.where})" if reading.where else "")
            for label, reading in measured
        )
    memory_at, compute_at = params.memory_bound_dram_pct, params.compute_bound_tc_pct
    # Each clause is the rule of _measured_bound the number misses. A DRAM% at the
    # threshold with no TC%, or a TC% at it with no DRAM%, would have decided a bound.
    reasons: list[str] = []
    if dram is None:
        reasons.append("no DRAM% was measured")
    elif dram.value < memory_at:
        reasons.append(f"DRAM% is under the {memory_at:g}% a memory bound needs")
    else:
        reasons.append(
            f"DRAM% reaches {memory_at:g}% but TC% is not under half of DRAM% "
            f"({dram.value / 2:g}), too close to call"
        )
    if tc is None:
        reasons.append("no TC% was measured")
    elif tc.value < compute_at:
        reasons.append(f"TC% is under the {compute_at:g}% a compute bound needs")
    else:
        reasons.append(f"TC% reaches {compute_at:g}% but DRAM% is not under it, too close to call")
    verb = "decide" if len(measured) == 2 else "decides"
    absent = [
        f"a {name} metric ({label})"
        for name, label, reading in (("dram_pct", "DRAM%", dram), ("tc_pct", "TC%", tc))
        if reading is None
    ]
    return not_found(
        _PATHOLOGY,
        f"Profiling data states no bound (memory/compute); its measured {shown} {verb} "
        f"none: {'; '.join(reasons)}.",
        [f"a bottleneck statement in profile.md or {absent[0]}"] if absent else [],
    )


def _stated_bounds(facts: Sequence[Fact]) -> dict[str, Fact]:
    """The bounds the log's profiling notes state, each with the first note stating it:
    those stated in words where any is, else those read from cues (a stall on the long
    scoreboard, an underfilled kernel), as the readers rank a stated bound above a cue."""
    explicit: dict[str, Fact] = {}
    cued: dict[str, Fact] = {}
    for fact in facts:
        # The readers' own ranking tells a cue from a bound stated in words.
        stated = stated_bottleneck(fact.text)
        if stated is not None:
            bound, _line, by_cue = stated
            (cued if by_cue else explicit).setdefault(bound, fact)
    return explicit or cued


def _stated_bound(facts: Sequence[Fact]) -> tuple[str, Evidence] | None:
    """The bound the log's profiling notes state (a devlog with no profile.md: "Diagnosis:
    Kernel is latency-bound"), read as the log readers read a bottleneck, when they state
    one bound (:func:`_stated_bounds`: a bound stated in words outranks a cue); None when
    they state none, or several (notes on different stages or points do not make one
    verdict: :func:`_disputed_bounds` names them)."""
    found = _stated_bounds(facts)
    if len(found) != 1:
        return None
    ((bound, fact),) = found.items()
    return bound, Evidence(quote=quote(fact.text, 100), source=str(fact.source))


def _disputed_bounds(facts: Sequence[Fact]) -> Outcome | None:
    """The item where the profiling notes state two bounds or more of equal rank (two
    "X-bound" lines that disagree): each bound with its line, and no side judged. None
    where they state one bound or none."""
    found = _stated_bounds(facts)
    if len(found) < 2:
        return None
    named = and_list(
        [
            f"{bound}-bound ({fact.source}: '{quote(fact.text, 80)}')"
            for bound, fact in found.items()
        ]
    )
    return not_found(
        _PATHOLOGY,
        f"The profiling notes state different bounds: {named}; recent work is not judged "
        "against either until one profile of the kernel as it stands settles which binds.",
        ["one bottleneck statement in profile.md for the kernel as it stands"],
    )


def _at_other_points(point: str, experiments: list[Experiment]) -> list[Experiment]:
    """The experiments whose headline was measured at another trial point than ``point``,
    the one the bound was stated at (profile.md's heading, or the floor row's point);
    none where the bound names no point."""
    if not point:
        return []
    return [e for e in experiments if e.headline_point and points_differ(point, e.headline_point)]


def _metrics(ctx: Context, floors: Sequence[FloorReading] = ()) -> Mapping[str, float]:
    """The metrics the catalog's triggers are matched on: the profile's, then the last
    three results' over them, and the share of the roofline floor the latest result's
    headline row reached (``floor_pct``) where none of them states one."""
    found: dict[str, float] = dict(ctx.log.profile.metrics) if ctx.log.profile is not None else {}
    for experiment in ctx.experiments[-3:]:
        found.update(experiment.metrics)
    if floors:
        found.setdefault("floor_pct", floors[0].fraction * 100.0)
    return found


# Remedies that only speed up float32 operands (a dot precision setting leaves bf16/fp16
# dots as they are).
_FP32_ONLY = frozenset({"dot-input-precision"})
# A tensor argument of a workload profile's call signatures, with its dtype
# (``a=[64,128]:float16``).
_SIGNATURE_DTYPE = re.compile(r"=\[[^\]]*\]:(\w+)")
_HALF = frozenset({"float16", "bfloat16", "half", "bf16", "fp16"})
_FLOATS = _HALF | {"float32", "float", "fp32", "tf32", "float64", "double"}


def _half_inputs_only(ctx: Context) -> bool:
    """Whether the workload profile's call signatures show floating-point tensors of 16-bit
    types only (``a=[64,128]:float16``): the calls the kernel serves feed it no float32
    operand. False where it shows none, or cannot be read."""
    if ctx.log.workload_profile is None:
        return False
    try:
        with open(os.path.join(ctx.log.root, ctx.log.workload_profile), encoding="utf-8") as f:
            text = f.read(1_000_000)
    except (OSError, UnicodeDecodeError):
        return False
    floats = {d.lower() for d in _SIGNATURE_DTYPE.findall(text)} & _FLOATS
    return bool(floats) and floats <= _HALF


def _float32_in_play(ctx: Context) -> bool:
    """Whether a dot precision remedy can apply: the kernel text shows a float32 product
    (:func:`float32_dots`); with no kernel text, unless the workload's calls pass 16-bit
    tensors only."""
    if ctx.kernels:
        return float32_dots(ctx.kernels)
    return not _half_inputs_only(ctx)


def _catalog_actions(
    ctx: Context,
    metrics: Mapping[str, float],
    fallback: tuple[tuple[str, str], ...],
    wrong_side: str,
    wrong: Sequence[Experiment] = (),
) -> list[Action]:
    """Up to three catalog remedies for ``metrics``: not on ``wrong_side``, not what the
    ``wrong`` attempts (those the finding counts on the wrong side) worked on, by tag or in
    words ("num_stages=3: deeper prefetch" is pipelining, if a both-sided technique), not
    anti-patterns, not for another kernel family than the log's, not already in the kernel
    source; the ones the log tried say so."""
    from kernelopt.catalog.vocabulary import family_ancestors

    kernels = ctx.kernels
    # A metric trigger describes a profile, not a kernel: online softmax's (DRAM busy,
    # tensor cores idle) also holds for a memory-bound RMSNorm, which has no scores to keep
    # on chip. An entry applies to the log's family, an ancestor (``any``) or a descendant.
    chain = family_ancestors(ctx.family) if ctx.family else ()
    fp32 = _float32_in_play(ctx)

    def usable(entry_id: str) -> bool:
        if SIDES.get(entry_id) == wrong_side:
            return False
        if entry_id in _FP32_ONLY and not fp32:
            return False  # a bf16/fp16 kernel's dots already run at the full tensor-core rate
        entry = ctx.entry(entry_id)
        if any(
            entry_id in e.tags or (entry is not None and names_entry(entry, e.description))
            for e in wrong
        ):
            return False  # the very work the finding calls aimed at the wrong resource
        families = tuple(getattr(entry, "families", ()) or ())
        if (
            chain
            and families
            and not any(f in chain or chain[0] in family_ancestors(f) for f in families)
        ):
            return False
        return not (kernels and entry is not None and present_in(entry, kernels) is not None)

    def tried_note(entry_id: str) -> str:
        return _tried_note(ctx, entry_id)

    actions: list[Action] = []
    match_metrics = getattr(ctx.catalog, "match_metrics", None)
    if callable(match_metrics) and metrics:
        try:
            matches = list(match_metrics(dict(metrics)))
        except Exception:  # a user catalog without metric triggers: fall back to the defaults
            matches = []
        for match in matches:
            entry = getattr(match, "entry", None)
            entry_id = getattr(entry, "id", None)
            kind = getattr(getattr(entry, "kind", None), "value", getattr(entry, "kind", ""))
            if not entry_id or kind == "anti-pattern" or not usable(entry_id):
                continue
            reasons = "; ".join(getattr(match, "reasons", ())[:2])
            actions.append(
                ctx.action(
                    f"{getattr(entry, 'name', entry_id)}"
                    + (f" ({reasons})" if reasons else "")
                    + tried_note(entry_id),
                    entry_id,
                )
            )
            if len(actions) == 3:
                break
    if not actions:
        actions = [
            ctx.action(text + tried_note(entry_id), entry_id)
            for entry_id, text in fallback
            if usable(entry_id)
        ]
    if not actions:
        actions = [
            ctx.action(
                "Re-profile the current best (time per stage, DRAM% and TC% against the "
                "roofline): the usual remedies for this bound are already in the kernel.",
                "roofline-analysis",
            )
        ]
    return actions


_NO_PROFILE = "experiments/profile.md or profiling metrics in result.md"


def _unprofiled_evidence(experiments: int, host_floors: HostClockFloors | None) -> Evidence:
    """What the log holds in place of profiling data: nothing, or roofline floors of rows
    timed on the host clock (a CPU or the Triton interpreter), which place no GPU kernel."""
    read = f"{count_text(experiments, 'experiment')} read"
    if host_floors is None:
        return Evidence(
            quote=f"{read}; no profiler output, metric, roofline floor or profile.md found"
        )
    stated = "Floor, Of floor and Bound" if host_floors.bounded else "Floor and Of floor"
    return Evidence(
        quote=(
            f"{read}; no profiler output, metric or profile.md found; roofline floors "
            f"found in {count_text(len(host_floors.results), 'result')} ({stated}), but "
            "each is of a row timed on the host clock (Mode cpu: a CPU or the Triton "
            "interpreter), not of a GPU kernel"
        ),
        source=host_floors.first,
    )


def _unnamed_ceiling(reading: FloorReading) -> Outcome:
    """The item where the only bound the log states is a result row's roofline floor and
    no row says which ceiling sets it: the share of the floor reached is the evidence,
    and no side is judged."""
    return not_found(
        _PATHOLOGY,
        f"The latest result places the kernel on the roofline ({quote(reading.text())}; "
        f"{reading.source}) but does not say which ceiling sets the floor (bytes or FLOPs), "
        "so recent work is not judged against compute/memory.",
        [
            "which ceiling sets the roofline floor (a Bound column in result.md: memory or "
            "compute), or a bottleneck statement in profile.md"
        ],
    )


def _not_counted(
    params: WrongBottleneckParams,
    bound: _Bound,
    gainers: Sequence[Step],
    elsewhere: Sequence[Experiment],
    moves: Sequence[PointMove] = (),
) -> str:
    """What the finding leaves out of the attempts judged, in words: the new bests, those
    that made another trial point of their result ``min_gain`` faster (``moves``), and
    those measured at another trial point than the bound's."""
    parts: list[str] = []
    if len(gainers) == 1:
        step = gainers[0]
        gain = step.gain or 0.0
        # A gain beyond a float (a rate from 5e-324 to 1e300) has no percentage to show.
        by = f"by {gain:.1%}" if math.isfinite(gain) else "by more than a number can hold"
        parts.append(f"{step.experiment.label}, a new best {by}, not counted")
    elif gainers:
        shown = experiments_text([s.experiment.number for s in gainers])
        parts.append(f"{shown}, new bests by {params.min_gain:.0%} or more, not counted")
    # A change that made another point of its result faster fit the kernel there.
    parts.extend(f"{move.text()}, not counted" for move in moves)
    not_counted = f" ({'; '.join(parts)})" if parts else ""
    if elsewhere:
        not_counted += (
            f"; {experiments_text([e.number for e in elsewhere])} measured at another trial "
            f"point than {bound.of} ({bound.point}), not judged"
        )
    return not_counted


def _point_bound(reading: FloorReading) -> str | None:
    """The bound a floor row reads by itself: latency under
    :data:`LATENCY_BELOW_FLOOR_PCT` % of its floor, else the ceiling it names (None where
    it names none)."""
    if reading.fraction * 100.0 < LATENCY_BELOW_FLOOR_PCT:
        return "latency"
    return reading.ceiling


def _other_points_text(floors: Sequence[FloorReading], kind: str) -> str:
    """A sentence naming the trial points of the latest result whose rows read another
    bound than ``kind`` (the one judged), or sit under half of the headline row's share of
    its floor, with their shares: a decode point at 5% of its floor beside a prefill at
    51% is two problems, and the headline names one. ``""`` where none differs.

    Only the headline implementation's rows count (a peer timed beside it is not the
    kernel)."""
    if not floors:
        return ""
    headline = floors[0]
    rows = [r for r in floors[1:] if r.impl == headline.impl or not headline.impl]
    if headline.point and _point_bound(headline) != kind:
        rows.insert(0, headline)
    named = []
    for reading in rows:
        bound = _point_bound(reading)
        far_below = reading is not headline and reading.fraction < headline.fraction / 2
        if bound == kind and not far_below:
            continue
        reads = f"{bound}-bound" if bound else "bound by no named ceiling"
        named.append(
            f"{reading.point or reading.impl} reads {reads} at {reading.fraction:.1%} of its "
            f"roofline floor ({reading.source})"
        )
    if not named:
        return ""
    return (
        f" Not every trial point of {headline.experiment.label} reads so: "
        f"{and_list(named[:4])}" + (f", and {len(named) - 4} more" if len(named) > 4 else "") + "."
    )


# A statement that the call's time goes to the launch or the host: what a CUDA graph
# removes ("CUDA graphs remove 47% of the time", as kernelopt's profile hand-off writes
# it), a launch overhead, a launch- or host-bound call.
_LAUNCH_COST = re.compile(
    r"cuda[- ]?graphs?\b[^.\n]{0,40}\b(?:remov|sav|cut|shav|hid)\w*|\bgraph share\b"
    r"|\blaunch[- ](?:overhead|cost|time|latency|bound)|\bhost[- ](?:overhead|bound|side cost)",
    re.IGNORECASE,
)
# Work that removes launches or host time: the remedies of a launch-bound call.
_LAUNCH_TAGS = frozenset({"cuda-graphs", "kernel-fusion", "buffer-persistence"})
_LAUNCH_WORDS = re.compile(
    r"cuda[- ]?graphs?|graph (?:capture|replay)|\bfus(?:e|ed|es|ing|ion)\b|\blaunch(?:es)?\b"
    r"|\bpersistent buffers?\b|\bpre-?allocat\w*",
    re.IGNORECASE,
)
# Work that raises the parallelism inside one launch: split-KV, a persistent grid, waves.
_PARALLEL_TAGS = frozenset({"split-kv-flash-decoding", "split-kv-lse-combine", "persistent-grid"})
_PARALLEL_WORDS = re.compile(
    r"split[- _]?kv|kv[- _]?splits?|\bsplit[- _]?k\b|\boccupancy\b|\bwaves?\b"
    r"|persistent (?:grid|kernel|ctas?)|\bmore (?:programs|ctas|blocks)\b",
    re.IGNORECASE,
)
# Tuning inside the kernel: tile and block sizes, warps, rows or tokens a program takes,
# eviction hints, autotuning.
_TUNING_WORDS = re.compile(
    r"\bBLOCK(?:_\w+)?\s*=|\bnum_warps\b|\bwarps\b|\b(?:tile|block) sizes?\b"
    r"|\b(?:tokens|rows|elements|items|heads) per (?:program|block|cta|thread|warp)\b"
    r"|\bevict\w*|\beviction\b|\bautotun\w*|\bunroll\w*",
    re.IGNORECASE,
)


def _launch_cost(ctx: Context) -> Fact | None:
    """The clause of the profile or the profiling notes that says the call's time goes to
    the launch or the host (what CUDA graphs remove, a launch overhead), with its line, or
    None. The clause, not its whole line: a profile's root cause runs on for sentences
    before it says what a graph removes."""
    profile = ctx.log.profile
    facts = [*(profile.facts if profile is not None else ()), *ctx.log.profiling]
    for fact in facts:
        match = _LAUNCH_COST.search(fact.text)
        if match is not None:
            start = max(fact.text.rfind(sep, 0, match.start()) for sep in (". ", "; ", ": "))
            ends = [i for i in (fact.text.find(sep, match.end()) for sep in (". ", "; ")) if i >= 0]
            clause = fact.text[start + 2 if start >= 0 else 0 : min(ends, default=len(fact.text))]
            return attrs.evolve(fact, text=clause.strip().rstrip("."))
    return None


def _latency_aim(experiment: Experiment) -> str | None:
    """What an attempt on a latency-bound kernel works on: ``"launch"`` (CUDA graphs,
    fusion, buffers kept across calls), ``"parallelism"`` (split-KV, a persistent grid,
    occupancy), ``"in-kernel"`` (tile sizes, warps, loads and stores, eviction hints,
    tokens per program: memory or compute tuning), ``"both"`` (software pipelining) or
    None. A title's words outrank its tags: "4 tokens per program" tagged persistent-grid
    is a token block, not a persistent grid."""
    title = experiment.description
    if _LAUNCH_TAGS & set(experiment.tags) or _LAUNCH_WORDS.search(title):
        return "launch"
    if _PARALLEL_WORDS.search(title):
        return "parallelism"
    aim = aim_of(experiment)
    if aim == "both":
        return "both"
    if _TUNING_WORDS.search(title) or aim in ("compute", "memory"):
        return "in-kernel"
    if _PARALLEL_TAGS & set(experiment.tags) or aim == "latency":
        return "parallelism"
    return None


def _tried_note(ctx: Context, entry_id: str) -> str:
    """``"; tried before (exp 3, 5.6 us, KEPT): change how, not whether"`` where the log
    tagged an attempt with ``entry_id``; else ``""``."""
    done = [e for e in ctx.experiments if entry_id in e.tags]
    if not done:
        return ""
    parts = []
    for e in done[:2]:
        fate = e.status.value if e.status is not None else "outcome not recorded"
        value = ctx.value_text(e)
        parts.append(f"{e.label}" + (f", {value}" if value else "") + f", {fate}")
    return "; tried before (" + "; ".join(parts) + "): change how, not whether"


def _latency_outcome(
    ctx: Context,
    params: WrongBottleneckParams,
    bound: _Bound,
    judged: Sequence[Experiment],
    gainers: Sequence[Step],
    elsewhere: Sequence[Experiment],
    others: str = "",
    moves: Sequence[PointMove] = (),
) -> Outcome:
    """The item for a latency-bound kernel: tuning inside the kernel (tiles, warps, loads
    and stores) shortens the bytes and FLOPs a latency-bound call barely spends time on,
    so it is the wrong side when most recent attempts do it. Where the log says the time
    goes to the launch or the host (what CUDA graphs remove), a persistent grid or split
    inside the kernel does not remove it either, and counts with the tuning."""
    shown = bound.shown or bound.evidence.source
    where = f" ({shown})" if shown else ""
    launch = _launch_cost(ctx)
    aims = {e.number: _latency_aim(e) for e in judged}
    inside = {"in-kernel", "parallelism"} if launch is not None else {"in-kernel"}
    wrong = [e for e in judged if aims[e.number] in inside]
    not_counted = _not_counted(params, bound, gainers, elsewhere, moves)
    said = (
        f", its time in the launch ('{quote(launch.text, 160)}', {launch.source})"
        if launch is not None
        else ""
    )
    if _too_few(wrong, judged, params):
        share = _share_text(wrong, judged, "tune inside the kernel")
        return not_found(
            _PATHOLOGY, f"The kernel is latency-bound{where}{said}; {share}{not_counted}.{others}"
        )
    numbers = [e.number for e in wrong]
    why = (
        "the log says the call's time goes to the launch and the host, which no change "
        "inside the kernel (a tile, a warp count, a persistent grid) removes"
        if launch is not None
        else "a call this far under its floor spends its time waiting (launches, too "
        "little work in flight), not moving bytes or doing FLOPs"
    )
    summary = (
        f"The kernel is latency-bound{where}{said}, but {len(wrong)} of the {len(judged)} "
        f"recent attempts judged ({experiments_text(numbers)}) tune inside the kernel "
        f"(tile sizes, warps, loads and stores){not_counted}: {why}.{others}"
    )
    evidence = [bound.evidence]
    if launch is not None:
        evidence.append(Evidence(quote=quote(launch.text, 160), source=str(launch.source)))
    # Without a stated launch cost, the wait may be too little work in flight: the
    # catalog's parallelism remedies whose metric triggers fire (split-KV where waves are
    # under one) come first.
    parallel = (
        []
        if launch is not None
        else [
            a
            for a in _catalog_actions(ctx, _metrics(ctx, ctx.floors), (), "in-kernel", wrong)
            if a.catalog_id in _PARALLEL_TAGS
        ]
    )
    actions = [
        *parallel[:1],
        ctx.action(
            "Capture the calls (a decode step, a layer) in a CUDA graph so their launches "
            "leave the host" + _tried_note(ctx, "cuda-graphs"),
            "cuda-graphs",
        ),
        ctx.action(
            "Fuse the kernel with the ops before or after it so one launch does their work"
            + _tried_note(ctx, "kernel-fusion"),
            "kernel-fusion",
        ),
    ]
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=numbers,
        severity=Severity.HIGH,
        confidence=0.7,
        evidence=[*evidence, *(ctx.evidence(e) for e in wrong[:5])],
        actions=actions,
    )
    return found(finding)


def detect(ctx: Context, params: WrongBottleneckParams) -> Outcome:
    """Report work aimed at the wrong resource, or the absence of any profile."""
    log = ctx.log
    profiled = ctx.profiled
    if not ctx.experiments:
        return not_found(_PATHOLOGY, "No experiments were read.", ["experiments"])
    if not profiled:
        # The changes made: a baseline measures the kernel as it was and chooses nothing.
        attempts = [s.experiment for s in ctx.progress.counted()] or [
            e for e in ctx.experiments if e.attempted and e.status is not Status.BASELINE
        ]
        if not attempts:
            why = (
                "only a baseline was run"
                if any(e.attempted for e in ctx.experiments)
                else "nothing was attempted yet"
            )
            return not_found(
                _PATHOLOGY,
                f"No profiling data in any result or profile.md, but no change was made "
                f"({why}), so none was chosen blind: profile the kernel before the first change.",
                [_NO_PROFILE],
            )
        on_cpu = ctx.host_clock_devices
        # Floors a result states on host-clock rows are set aside, not missed: said so.
        host_floors = host_clock_floors(log.root, ctx.experiments)
        finding = Finding(
            pathology=_PATHOLOGY,
            summary=(
                "No profiling data "
                + ("of a GPU kernel " if host_floors is not None else "")
                + f"in any result or profile.md across {count_text(len(attempts), 'attempt')}"
                + (
                    f" (the roofline floors in {count_text(len(host_floors.results), 'result')}"
                    " are of host-clock rows)"
                    if host_floors is not None
                    else ""
                )
                + ": "
                + (
                    f"every timing names a CPU as its device ({on_cpu}): host-clock "
                    "timings of a CPU or the Triton interpreter time no GPU kernel, so every "
                    "change so far was chosen without one. On a GPU, instrument with CUDA "
                    "events (time per stage) and a roofline before optimizing further."
                    if on_cpu
                    else "every change so far was chosen blind. Instrument with CUDA events "
                    "(time per stage) and a roofline before optimizing further."
                )
            ),
            experiments=[e.number for e in attempts[-5:]],
            severity=Severity.MEDIUM,
            confidence=0.75,
            evidence=[_unprofiled_evidence(len(log.experiments), host_floors)],
            actions=[
                ctx.action(
                    "Time each stage with CUDA events (L2 flushed, median of many runs) and "
                    "record it in result.md.",
                    "cuda-event-instrumentation",
                ),
                ctx.action(
                    "Place the kernel on the roofline (DRAM%, TC%) to know which resource bounds "
                    "it.",
                    "roofline-analysis",
                ),
            ],
            missing=[_NO_PROFILE],
        )
        return found(finding)
    floors = ctx.floors
    bound = _bound(ctx, params, floors)
    # Notes that state two bounds state more than none: both are named, with their lines.
    disputed = _disputed_bounds(log.profiling) if bound is None else None
    if disputed is not None:
        return disputed
    if bound is None and floors:
        return _unnamed_ceiling(floors[0])
    if bound is None:
        # Measured DRAM%/TC% that decide no bound are named, with the rule they miss.
        undecided = _undecided_by_metrics(ctx, params)
        if undecided is not None:
            return undecided
        return not_found(
            _PATHOLOGY,
            "Profiling data exists but states no bound (memory/compute) and no DRAM%/TC% to "
            "derive one.",
            ["a bottleneck statement in profile.md or dram_pct/tc_pct metrics"],
        )
    kind, stated = bound.kind, bound.evidence
    recent = [s for s in ctx.progress.counted()][-params.recent :]
    # A new best by min_gain or more says the change fit the kernel: not evidence of a
    # misdirected effort, whatever resource it names.
    gainers = [s for s in recent if s.gain is not None and s.gain >= params.min_gain]
    # Nor is a change that made another trial point of its result min_gain faster (a
    # prefill row beside a decode headline): it fit the kernel at that point.
    moved = {id(m.experiment): m for m in ctx.point_moves(params.min_gain)}
    moves = [
        moved[id(s.experiment)] for s in recent if s not in gainers and id(s.experiment) in moved
    ]
    judged = [s.experiment for s in recent if s not in gainers and id(s.experiment) not in moved]
    # A profile's bound holds at its own trial point: at h_q = 128 decode attention is
    # compute-bound, at h_q = 16 the same kernel is memory-bound.
    elsewhere = _at_other_points(bound.point, judged)
    judged = [e for e in judged if e not in elsewhere]
    aims = {e.number: aim_of(e) for e in judged}
    classified = [e for e in judged if aims[e.number] in ("compute", "memory")]
    opposite = {"memory": "compute", "compute": "memory"}.get(kind)
    # The headline point's bound is the one judged; other points that read otherwise are
    # named beside it.
    others = _other_points_text(floors, kind)
    if kind == "latency":
        return _latency_outcome(ctx, params, bound, judged, gainers, elsewhere, others, moves)
    if opposite is None:
        shown = bound.shown or stated.source
        where = f" ({shown})" if shown else ""
        return not_found(
            _PATHOLOGY,
            f"The kernel is {kind}-bound{where}; recent work is not judged against "
            f"compute/memory.{others}",
        )
    not_counted = _not_counted(params, bound, gainers, elsewhere, moves)
    overlapped = [e.number for e in judged if aims[e.number] == "both"]
    if overlapped:
        # Said, so a reader who counts the pipelining attempts knows why they are not wrong.
        not_counted += (
            f"; {experiments_text(overlapped)} pipeline loads under the math, which serves "
            "either side, not counted"
        )
    wrong = [e for e in classified if aims[e.number] == opposite]
    if _too_few(wrong, judged, params):
        share = _share_text(wrong, judged, f"aim at {opposite}")
        return not_found(
            _PATHOLOGY,
            f"The kernel is {kind}-bound ({stated.quote}); {share}{not_counted}.{others}",
        )
    numbers = [e.number for e in wrong]
    summary = (
        f"The kernel is {kind}-bound ({stated.quote}) but {len(wrong)} of the {len(judged)} "
        f"recent attempts judged ({experiments_text(numbers)}) optimize {opposite}{not_counted}."
        f"{others}"
    )
    fallback = (
        (
            (
                "vectorized-coalesced-loads",
                "Cut bytes moved: coalesced, vectorized loads of each tile.",
            ),
            ("kernel-fusion", "Fuse neighbouring kernels so intermediates stay on chip."),
        )
        if kind == "memory"
        else (
            ("head-grouping-mma-tile", "Feed the tensor cores bigger MMA tiles."),
            ("dot-input-precision", "Use the fastest dot precision correctness allows."),
        )
    )
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=numbers,
        severity=Severity.HIGH,
        confidence=0.7,
        evidence=[stated, *(ctx.evidence(e) for e in wrong[:5])],
        actions=_catalog_actions(ctx, _metrics(ctx, floors), fallback, opposite, wrong),
    )
    return found(finding)
