"""4. Wrong bottleneck: optimizing compute on a memory-bound kernel (or the reverse), or
optimizing with no profile at all.

The kernel's bound comes from profile.md (``Bottleneck: Memory-bound``) or from metrics in
the profile and results (``dram_pct``, ``tc_pct``, ``arith_intensity`` against ``ridge``).
Recent attempts are classified compute- or memory-aimed by their catalog tags and words
(tensor cores, MMA tiles, tf32/fp8, unrolling vs vectorized loads, caching, TMA, split-KV).
With no profiling data anywhere, the advice is the seed's: instrument with CUDA events first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kernelopt.diagnose.context import Context, experiments_text, quote
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Action, Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import WrongBottleneckParams
from kernelopt.experiments.log import Experiment

__all__ = ["aim_of", "bound_of", "detect"]

_PATHOLOGY = Pathology.WRONG_BOTTLENECK
_COMPUTE_IDS = frozenset({"head-grouping-mma-tile", "dot-input-precision", "exp2-folded-scale"})
_MEMORY_IDS = frozenset(
    {
        "split-kv-flash-decoding",
        "paged-kv-cache",
        "kv-tile-shared-load",
        "vectorized-coalesced-loads",
        "block-pointers-tma",
        "software-pipelining",
        "kernel-fusion",
    }
)
_COMPUTE_WORDS = re.compile(
    r"tensor[- ]?cores?|\bmma\b|\bwgmma\b|\btf32\b|\bfp8\b|\bint8\b|\bflops?\b|\bcompute\b"
    r"|\binstructions?\b|\bunroll\w*|\bfma\b|\bilp\b|\bexp2\b|\bmufu\b|\barithmetic\b"
    r"|\bdot product\b",
    re.IGNORECASE,
)
_MEMORY_WORDS = re.compile(
    r"vectori[sz]\w*|coalesc\w*|bandwidth|\bdram\b|\bl2\b|\bcach\w+|prefetch\w*|\btma\b"
    r"|cp\.async|async copy|shared memory|\bsmem\b|split[- _]?kv|\bpaged\b|\bloads?\b|\bstores?\b"
    r"|\bmemory\b|traffic|\bbytes\b",
    re.IGNORECASE,
)


def aim_of(experiment: Experiment) -> str | None:
    """``"compute"``, ``"memory"`` or None: what an experiment's change is aimed at."""
    tags = set(experiment.tags)
    compute = len(tags & _COMPUTE_IDS) * 2 + len(_COMPUTE_WORDS.findall(experiment.description))
    memory = len(tags & _MEMORY_IDS) * 2 + len(_MEMORY_WORDS.findall(experiment.description))
    if compute > memory:
        return "compute"
    if memory > compute:
        return "memory"
    return None


def bound_of(ctx: Context, params: WrongBottleneckParams) -> tuple[str, Evidence] | None:
    """The kernel's bound (``"memory"``, ``"compute"``, ``"latency"``) and where it is stated."""
    profile = ctx.log.profile
    if profile is not None and profile.bottleneck is not None:
        fact = profile.facts[0] if profile.facts else None
        source = str(fact.source) if fact is not None else str(profile.source)
        return profile.bottleneck, Evidence(
            quote=quote(fact.text if fact else profile.bottleneck), source=source
        )
    metrics: dict[str, float] = dict(profile.metrics) if profile is not None else {}
    latest = next((e for e in reversed(ctx.experiments) if e.metrics), None)
    if latest is not None:
        metrics = {**metrics, **latest.metrics}
    where = (
        str(profile.source)
        if profile is not None and profile.metrics
        else (str(latest.ref("metrics") or latest.source or "") if latest is not None else "")
    )
    dram, tc = metrics.get("dram_pct"), metrics.get("tc_pct")
    intensity, ridge = metrics.get("arith_intensity"), metrics.get("ridge")
    if dram is not None and dram >= params.memory_bound_dram_pct and (tc is None or tc < dram / 2):
        return "memory", Evidence(
            quote=f"dram_pct={dram:g}" + (f", tc_pct={tc:g}" if tc is not None else ""),
            source=where,
        )
    if tc is not None and tc >= params.compute_bound_tc_pct and (dram is None or dram < tc):
        return "compute", Evidence(
            quote=f"tc_pct={tc:g}" + (f", dram_pct={dram:g}" if dram is not None else ""),
            source=where,
        )
    if intensity is not None and ridge is not None and ridge > 0:
        bound = "memory" if intensity < ridge else "compute"
        return bound, Evidence(
            quote=f"arith_intensity={intensity:g} vs ridge={ridge:g}", source=where
        )
    return None


def _metrics(ctx: Context) -> Mapping[str, float]:
    found: dict[str, float] = dict(ctx.log.profile.metrics) if ctx.log.profile is not None else {}
    for experiment in ctx.experiments[-3:]:
        found.update(experiment.metrics)
    return found


def _catalog_actions(
    ctx: Context, metrics: Mapping[str, float], fallback: tuple[tuple[str, str], ...]
) -> list[Action]:
    actions: list[Action] = []
    match_metrics = getattr(ctx.catalog, "match_metrics", None)
    if callable(match_metrics) and metrics:
        try:
            matches = list(match_metrics(dict(metrics)))[:3]
        except Exception:  # a user catalog without metric triggers: fall back to the defaults
            matches = []
        for match in matches:
            entry = getattr(match, "entry", None)
            entry_id = getattr(entry, "id", None)
            reasons = "; ".join(getattr(match, "reasons", ())[:2])
            if entry_id:
                actions.append(
                    ctx.action(
                        f"{getattr(entry, 'name', entry_id)}"
                        + (f" ({reasons})" if reasons else ""),
                        entry_id,
                    )
                )
    if not actions:
        actions = [ctx.action(text, entry_id) for entry_id, text in fallback]
    return actions


def detect(ctx: Context, params: WrongBottleneckParams) -> Outcome:
    """Report work aimed at the wrong resource, or the absence of any profile."""
    log = ctx.log
    profiled = (
        bool(log.profiling) or log.profile is not None or any(e.metrics for e in ctx.experiments)
    )
    if not ctx.experiments:
        return not_found(_PATHOLOGY, "No experiments were read.", ["experiments"])
    if not profiled:
        attempts = [s.experiment for s in ctx.progress.counted()] or [
            e for e in ctx.experiments if e.attempted
        ]
        finding = Finding(
            pathology=_PATHOLOGY,
            summary=(
                f"No profiling data in any result or profile.md across {len(attempts)} attempts: "
                f"every change so far "
                "was chosen blind. Instrument with CUDA events (time per stage) and a roofline "
                "before optimizing further."
            ),
            experiments=[e.number for e in attempts[-5:]],
            severity=Severity.MEDIUM,
            confidence=0.75,
            evidence=[
                Evidence(
                    quote=f"{len(log.experiments)} experiments read; no profiler output, metric "
                    f"or profile.md found"
                )
            ],
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
            missing=["experiments/profile.md or profiling metrics in result.md"],
        )
        return found(finding)
    bound = bound_of(ctx, params)
    if bound is None:
        return not_found(
            _PATHOLOGY,
            "Profiling data exists but states no bound (memory/compute) and no DRAM%/TC% to "
            "derive one.",
            ["a bottleneck statement in profile.md or dram_pct/tc_pct metrics"],
        )
    kind, stated = bound
    recent = [s.experiment for s in ctx.progress.counted()][-params.recent :]
    aims = {e.number: aim_of(e) for e in recent}
    classified = [e for e in recent if aims[e.number] is not None]
    opposite = {"memory": "compute", "compute": "memory"}.get(kind)
    if opposite is None:
        return not_found(
            _PATHOLOGY,
            f"The kernel is {kind}-bound; recent work is not judged against compute/memory.",
        )
    wrong = [e for e in classified if aims[e.number] == opposite]
    if len(wrong) < params.min_experiments or len(wrong) < params.min_share * max(
        1, len(classified)
    ):
        return not_found(
            _PATHOLOGY,
            f"The kernel is {kind}-bound ({stated.quote}); {len(wrong)} of the last {len(recent)} "
            f"attempts aim at {opposite}.",
        )
    numbers = [e.number for e in wrong]
    summary = (
        f"The kernel is {kind}-bound ({stated.quote}) but {len(wrong)} of the last {len(recent)} "
        f"attempts "
        f"({experiments_text(numbers)}) optimize {opposite}."
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
        actions=_catalog_actions(ctx, _metrics(ctx), fallback),
    )
    return found(finding)
