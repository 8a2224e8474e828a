"""6. Over-engineering: the kernel keeps growing while its gains shrink.

Measured on the kernel files snapshotted in ``exp_N/`` folders: code lines, branches,
compile-time knobs (``tl.constexpr``), and autotune configurations (sized statically from
``triton.autotune(configs=...)``, list comprehensions and ``itertools.product``). Growth
across the trailing stall, or an autotune space of ``max_autotune_configs`` or more (the
seed's example: 10 000 configurations for no gain), is the finding.
"""

from __future__ import annotations

from kernelopt.diagnose.context import Context, experiments_text
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import OverEngineeringParams
from kernelopt.diagnose.source import Complexity, complexity

__all__ = ["detect", "total_complexity"]

_PATHOLOGY = Pathology.OVER_ENGINEERING


def total_complexity(ctx: Context, number: int) -> Complexity:
    """The summed complexity of experiment ``number``'s snapshots."""
    parts = [complexity(source) for source in ctx.snapshots.get(number, ())]
    configs = [p.autotune_configs for p in parts if p.autotune_configs is not None]
    return Complexity(
        lines=sum(p.lines for p in parts),
        branches=sum(p.branches for p in parts),
        constexprs=sum(p.constexprs for p in parts),
        autotune_configs=sum(configs) if configs else None,
    )


def detect(ctx: Context, params: OverEngineeringParams) -> Outcome:
    """Report complexity growth without gains, or an autotune explosion."""
    snapshots = ctx.snapshots
    stated = [
        (e, e.metrics["autotune_configs"])
        for e in ctx.experiments
        if "autotune_configs" in e.metrics
    ]
    if not snapshots and not stated:
        return not_found(
            _PATHOLOGY,
            "No kernel snapshots in the experiment folders, so complexity over time cannot be "
            "measured.",
            ["kernel sources snapshotted in exp_N/ folders"],
        )
    stall = ctx.progress.stall(params.min_gain)
    stall_numbers = [s.experiment.number for s in ctx.progress.counted(stall)]
    measured = {n: total_complexity(ctx, n) for n in snapshots}
    evidence: list[Evidence] = []
    reasons: list[str] = []
    involved: list[int] = []
    # An autotune space that big is a finding on its own when it bought nothing.
    for number, value in [(n, c.autotune_configs) for n, c in measured.items()] + [
        (e.number, v) for e, v in stated
    ]:
        if (
            value is not None
            and value >= params.max_autotune_configs
            and (not stall_numbers or number >= stall_numbers[0])
        ):
            source = snapshots.get(number, ())
            where = source[0].path if source else str(ctx.experiments[0].source or "")
            evidence.append(
                Evidence(
                    quote=f"exp {number}: {int(value):,} autotune configurations",
                    source=where,
                    experiments=(number,),
                )
            )
            reasons.append(f"exp {number} searches {int(value):,} autotune configurations")
            involved.append(number)
            break
    before = [n for n in measured if not stall_numbers or n < stall_numbers[0]]
    inside = [n for n in measured if stall_numbers and n >= stall_numbers[0]]
    if len(stall_numbers) >= 2 and inside and (before or len(inside) >= 2):
        start = before[-1] if before else inside[0]
        end = inside[-1]
        first, last = measured[start], measured[end]
        growth = (last.lines - first.lines) / first.lines if first.lines else 0.0
        knobs = last.constexprs - first.constexprs
        configs_growth = (
            (last.autotune_configs or 1) / (first.autotune_configs or 1)
            if last.autotune_configs is not None
            else 1.0
        )
        grew = []
        if growth >= params.min_line_growth:
            grew.append(f"code lines {first.lines} → {last.lines} ({growth:+.0%})")
        if knobs >= params.min_new_constexprs:
            grew.append(f"constexpr knobs {first.constexprs} → {last.constexprs}")
        if configs_growth >= params.min_config_growth:
            grew.append(f"autotune configs {first.autotune_configs or 1} → {last.autotune_configs}")
        if grew:
            reasons.append(
                f"from exp {start} to exp {end} {', '.join(grew)}, branches {first.branches} → "
                f"{last.branches}"
            )
            for number in (start, end):
                snapshot = snapshots[number][0]
                evidence.append(
                    Evidence(
                        quote=f"exp {number}: {measured[number].lines} lines, "
                        f"{measured[number].constexprs} constexpr, "
                        f"{measured[number].autotune_configs or 0} configs",
                        source=snapshot.path,
                        experiments=(number,),
                    )
                )
            involved += [start, end]
    if not reasons:
        latest = max(measured) if measured else None
        detail = (
            f"latest snapshot (exp {latest}): {measured[latest].lines} lines, "
            f"{measured[latest].constexprs} constexpr knobs, "
            f"{measured[latest].autotune_configs or 0} autotune configs"
            if latest is not None
            else "no snapshot"
        )
        return not_found(_PATHOLOGY, f"Complexity did not grow while gains stalled ({detail}).")
    gain_text = (
        f"while the last {len(stall_numbers)} attempts ({experiments_text(stall_numbers)}) gained "
        f"less than {params.min_gain:.0%}"
        if stall_numbers
        else "with no gain to show for it"
    )
    summary = f"The kernel grew more complex {gain_text}: {'; '.join(reasons)}."
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=sorted(set(involved + stall_numbers)),
        severity=Severity.MEDIUM,
        confidence=0.7 if len(reasons) > 1 else 0.6,
        evidence=evidence,
        actions=[
            ctx.action(
                "Prune the autotune space with domain knowledge (tile sizes that divide the "
                "shapes, warps per tile); "
                "keep the search under an hour per kernel version.",
                "pruned-autotuning",
            ),
            ctx.action(
                "Revert to the simplest version that holds the best result, then change the "
                "design, not the knobs.",
                "autotune-explosion",
            ),
        ],
    )
    return found(finding)
