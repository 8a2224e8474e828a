"""The plan form of a diagnosis: the seed's checklist, root cause and actions, in markdown.

Layout::

    # Plan: <log> — clean-context diagnosis
    <what was read, best so far, a kept regression, trajectory>
    ## Pathology checklist        all nine items, [x] or [ ], a sentence each
    ## Most likely root cause     a sentence or two
    ## Plan                       numbered actions, each said once, linking catalog entries
                                  (going back from a kept regression first)
    ## Evidence                   per finding: quotes with file:line
    ## Missing data / Not read    what would sharpen the diagnosis
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from kernelopt._errors import InputError, expected
from kernelopt._numbers_text import readable, significant
from kernelopt._words import and_list, count_text
from kernelopt.diagnose.model import (
    Action,
    CatalogLink,
    Diagnosis,
    Finding,
    KeptRegression,
    LogSummary,
    Pathology,
    TrajectoryPoint,
)
from kernelopt.diagnose.progress import within_noise
from kernelopt.experiments._validators import check_instance, check_path

__all__ = ["entry_links", "render_plan"]

# How many of the new bests the header lists (the latest ones).
_NEW_BESTS_SHOWN = 6
# What the header and the plan say where the log records no best: no experiment that can
# hold one (kept, or of unknown fate, not failing correctness) measured a number to
# compare, as where every attempt was reverted.
_NO_BEST = (
    "No best recorded: no experiment that can hold one (kept, or of unknown fate, and not "
    "failing correctness) measured a number to compare."
)
_NEXT_AGAINST_BEST = "Keep going: measure the next idea against the current best."
_NEXT_AGAINST_BASELINE = (
    "Keep going: the log records no best to measure against, so time the baseline first, "
    "then measure the next idea against it."
)


def value_text(value: float, unit: str, kind: str) -> str:
    """A number as the plan shows it: ``1.32x`` for a speedup, ``250 us`` otherwise."""
    # Positional, never 2.318e+05: a CPU log's times run to six digits of microseconds.
    if kind == "speedup":
        return f"{readable(value, 3)}x"
    return f"{readable(value)} {unit}".strip()


def slower_text(slower: float) -> str:
    """A slowdown as a reader takes it in: ``31.2% slower`` under twice the time,
    ``24.5x slower`` from there on (2350 % reads as a slip of the pen)."""
    return f"{slower:.1%} slower" if slower < 1.0 else f"{1.0 + slower:.3g}x slower"


def gain_text(gain: float) -> str:
    """A new best's gain as the header shows it: ``+5.4%``, with more digits where one
    decimal would read as no gain at all (``+0.043%`` for 0.00043, never ``+0.0%``)."""
    shown = f"{gain:+.1%}"
    if gain > 0.0 and float(shown.rstrip("%")) == 0.0:
        shown = f"+{significant(gain * 100.0, 2)}%"
    return shown


def _new_best_text(point: TrajectoryPoint, named: bool) -> str:
    """One new best as the header lists it: ``exp 13 +75.1% at causal_padded``, its point
    named where ``named``, with what qualifies its gain in one parenthesis: ``(in its own
    run)`` for a same-run A/B, ``(within noise)`` for a gain the log cannot resolve."""
    text = f"exp {point.experiment}"
    if point.gain is not None:
        text += f" {gain_text(point.gain)}"
    if named and point.point:
        text += f" at {point.point}"
    notes = [
        note
        for note, applies in (
            ("in its own run", point.same_run),
            ("within noise", within_noise(point.gain, point.verdict)),
        )
        if applies
    ]
    return text + (f" ({', '.join(notes)})" if notes else "")


def _best_name(experiment: int, label: str) -> str:
    """How the header names the best: as the new bests do (``exp 5``), with the log's own
    label when it is more than a number (``step 5``, or ``exp 28: <devlog title>`` when
    the label is not a word and the number)."""
    if label.isdigit() or label == f"exp {experiment}":
        return f"exp {experiment}"
    if re.fullmatch(rf"[A-Za-z]+[ _#-]*0*{experiment}", label):
        return label
    return f"exp {experiment}: {label}"


def _family_source(source: str) -> str:
    """Where the family came from, as the header says it: ``given`` (by the caller),
    else ``from`` its source (``from CLAUDE.md:1``, ``from --family``)."""
    return "given" if source == "given" else f"from {source}"


def _header(summary: LogSummary) -> list[str]:
    name = summary.root.rstrip("/").rsplit("/", 1)[-1] or summary.root
    if name in {".", ".."}:
        # `kernelopt diagnose .` inside the log: title the plan with the directory's name.
        name = Path(summary.root).resolve().name or name
    lines = [f"# Plan: {name} — clean-context diagnosis", ""]
    if summary.experiments == 0:
        lines.append(
            f"Read {summary.root}: no experiments found "
            f"({', '.join(summary.layouts) or 'no known layout'})."
        )
        return lines
    scope = (
        f"exp {summary.first}–{summary.last}"
        if summary.first != summary.last
        else f"exp {summary.first}"
    )
    cut = f", as it stood before exp {summary.until}" if summary.until is not None else ""
    lines.append(
        f"Read {count_text(summary.experiments, 'experiment')} "
        f"({scope}{cut}; {summary.attempted} attempted) "
        f"from {summary.root} [{', '.join(summary.layouts)}]."
    )
    if summary.other_series:
        lines.append(f"Also read, not judged: {'; '.join(summary.other_series)}.")
    if summary.best is not None:
        best = summary.best
        on = f" on {best.gpu}" if best.gpu else ""
        # One measurement is the best of nothing: the line says it is the only one.
        lead = "Only measurement so far" if best.only else "Best so far"
        if best.point:
            # The best at the point the latest attempt measured: not always a new best of
            # its own (a kept experiment opening a new point gains nothing over anything).
            lines.append(
                f"{lead} at {best.point}: {value_text(best.value, best.unit, best.kind)}{on} "
                f"({_best_name(best.experiment, best.label)})."
            )
        else:
            lines.append(
                f"{lead}: {value_text(best.value, best.unit, best.kind)}{on} "
                f"({_best_name(best.experiment, best.label)})."
            )
        there = summary.latest_gpu_best
        if there is not None:
            # The latest attempt ran on another GPU: its times there are no loss against
            # the best's, and the best on that GPU is said beside it.
            lines[-1] = (
                f"{lines[-1][:-1]}; on {there.gpu}, where the latest attempt ran: "
                f"{value_text(there.value, there.unit, there.kind)} "
                f"({_best_name(there.experiment, there.label)})."
            )
    elif summary.attempted:
        # Said outright: a header silent on the best reads as if one were known.
        lines.append(_NO_BEST)
    if summary.regression is not None:
        lines.append(_regression_line(summary.regression))
    if summary.trajectory:
        shown = summary.trajectory[-_NEW_BESTS_SHOWN:]
        # Gains at several points are different quantities: each says where it was made.
        named = len({p.point for p in summary.trajectory}) > 1
        steps = ", ".join(_new_best_text(p, named) for p in shown)
        # Cut without a word, the first one shown reads as the effort's first gain.
        left_out = len(summary.trajectory) - len(shown)
        which = f" (the latest {len(shown)} of {len(summary.trajectory)})" if left_out else ""
        lines.append(
            f"New bests{which}: {steps}; {count_text(summary.since_best, 'attempt')} since the "
            f"best last moved by {summary.stall_gain * 100:g}% or more."
        )
    if summary.family:
        lines.append(f"Kernel family: {summary.family} ({_family_source(summary.family_source)}).")
    if summary.kernel:
        lines.append(f"Kernel source read: {summary.kernel}.")
    return lines


def _regression_line(regression: KeptRegression) -> str:
    """The header's line on a kept regression: the kernel as it stands against the best
    of its own versions, at the point both were measured, on the GPUs where they differ."""
    now = value_text(regression.value, regression.unit, regression.kind)
    then = value_text(regression.best_value, regression.unit, regression.kind)
    at = f" at {regression.point}" if regression.point else ""
    on = f" (on {regression.gpu} against {regression.best_gpu})" if regression.other_gpus else ""
    return (
        f"Kept regression{at}: the kernel as it stands, exp {regression.experiment} ({now}), "
        f"is {slower_text(regression.slower)} than exp {regression.best} ({then}){on}."
    )


def regression_action(regression: KeptRegression) -> Action:
    """The plan's first step on a kept regression: go back to the faster version, or,
    where the two were timed on different GPUs, time both in one run first."""
    then = value_text(regression.best_value, regression.unit, regression.kind)
    at = f" at {regression.point}" if regression.point else ""
    if regression.other_gpus:
        return Action(
            text=(
                f"Time exp {regression.experiment}'s and exp {regression.best}'s versions in "
                f"one run on one GPU{at} (they were timed on {regression.gpu} and "
                f"{regression.best_gpu}); if exp {regression.best}'s is faster there, go "
                "back to it before the next experiment."
            )
        )
    kept = regression.kept or (regression.experiment,)
    return Action(
        text=(
            f"Go back to exp {regression.best}'s version ({then}{at}) and build the next "
            f"experiment on it: exp {regression.experiment}, the kernel as it stands, is "
            f"{slower_text(regression.slower)}; keep from "
            f"{'exp' if len(kept) == 1 else 'exps'} {', '.join(str(n) for n in kept)} only "
            f"what measures faster on top of exp {regression.best}."
        )
    )


def _link(link: CatalogLink, links: Mapping[str, str]) -> str:
    name = link.catalog_name or link.catalog_id
    target = links.get(link.catalog_id, link.path)
    return f"[{name}]({target})" if target else name


def _action(action: Action, links: Mapping[str, str]) -> str:
    """``text — catalog: [Name](path) (`id`)``; an action of several entries links each,
    in order, and names their ids together: ``[A](a) and [B](b) (`a`, `b`)``."""
    if not action.links:
        return action.text
    shown = and_list([_link(link, links) for link in action.links])
    ids = ", ".join(f"`{entry_id}`" for entry_id in action.catalog_ids)
    return f"{action.text} — catalog: {shown} ({ids})"


def _plan_actions(findings: Sequence[Finding]) -> list[Action]:
    """The findings' actions in rank order, correctness steps first, each said once: an
    action is left out when an earlier finding's actions already link every entry it links
    (two checks recommending one technique), or, linking none, already say its text. The
    actions of one finding are distinct (two shortcuts of one entry behind different
    guards are two paths)."""
    actions: list[Action] = []
    linked: set[str] = set()
    said: set[str] = set()
    # Wrong results come before any speed idea: correctness steps lead the plan, whatever
    # the rank of their finding (failures below a wall rank low, yet come first).
    first = [f for f in findings if f.pathology is Pathology.CORRECTNESS_WALL]
    for finding in first + [f for f in findings if f not in first]:
        linked_here: set[str] = set()
        for action in finding.actions:
            ids = set(action.catalog_ids)
            if ids and ids <= linked:
                continue
            if not ids and action.text in said:
                continue
            linked_here |= ids
            said.add(action.text)
            actions.append(action)
        linked |= linked_here
    return actions


def render_plan(diagnosis: Diagnosis, *, links: Mapping[str, str] | None = None) -> str:
    """Render ``diagnosis`` in the seed's plan form.

    Parameters
    ----------
    diagnosis : Diagnosis
        What :func:`kernelopt.diagnose.diagnose` returned.
    links : mapping of str to str, optional
        Link target per catalog id; by default an action links its entry's path inside a
        knowledge tree (``optimizations/split-kv-flash-decoding.md``). A plan written to a
        file passes paths relative to that file (:func:`entry_links`).

    Returns
    -------
    str
        Markdown ending in one newline.

    Raises
    ------
    InputError
        When ``diagnosis`` is not a Diagnosis or ``links`` not a mapping of strings.
    """
    check_instance(diagnosis, Diagnosis, "a Diagnosis (diagnose's result)", "diagnosis")
    if links is not None and not (
        isinstance(links, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in links.items())
    ):
        raise InputError(expected("links as a mapping of str to str", repr(links)[:80]))
    lines = _header(diagnosis.summary)
    lines += ["", "## Pathology checklist", ""]
    for check in diagnosis.checks:
        mark = "x" if check.checked else " "
        lines.append(f"- [{mark}] {check.number}. {check.title} — {check.sentence}")
    lines += ["", "## Most likely root cause", ""]
    empty = diagnosis.summary.experiments == 0 or diagnosis.summary.attempted == 0
    if diagnosis.root_causes:
        lines += [f"- {sentence}" for sentence in diagnosis.root_causes]
    elif empty:
        what = "experiments were" if diagnosis.summary.experiments == 0 else "attempts were"
        lines.append(f"Nothing to judge: no {what} read, so no check could fire.")
    else:
        lines.append("No pathology found: the effort is not stalled by any of the nine checks.")
    actions = _plan_actions(diagnosis.findings)
    if diagnosis.summary.regression is not None:
        actions.insert(0, regression_action(diagnosis.summary.regression))
    lines += ["", "## Plan", ""]
    if actions:
        lines += [
            f"{index}. {_action(action, links or {})}"
            for index, action in enumerate(actions, start=1)
        ]
    elif empty:
        lines.append(
            "Log each experiment (experiments/summary.md, exp_N/plan.md and result.md; "
            "docs/experiment-log.md) and diagnose again."
        )
    else:
        known = diagnosis.summary.best is not None
        lines.append(_NEXT_AGAINST_BEST if known else _NEXT_AGAINST_BASELINE)
    if diagnosis.findings:
        lines += ["", "## Evidence", ""]
        for finding in diagnosis.findings:
            lines.append(
                f"### {finding.title} ({finding.severity.value}, confidence "
                f"{finding.confidence:.2f})"
            )
            lines.append("")
            for item in finding.evidence:
                where = f" ({item.source})" if item.source else ""
                lines.append(f"- {item.quote}{where}")
            lines.append("")
        if lines[-1] == "":
            lines.pop()
    missing = sorted({m for check in diagnosis.checks for m in check.missing})
    if missing:
        lines += ["", "## Missing data", ""] + [f"- {item}" for item in missing]
    if diagnosis.warnings:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in diagnosis.warnings[:50]]
        if len(diagnosis.warnings) > 50:
            lines.append(f"- … and {len(diagnosis.warnings) - 50} more")
    if diagnosis.unread:
        lines += ["", "## Not read", ""] + [
            f"- {u.path}: {u.reason}" for u in diagnosis.unread[:50]
        ]
        if len(diagnosis.unread) > 50:
            lines.append(f"- … and {len(diagnosis.unread) - 50} more")
    return "\n".join(lines) + "\n"


def entry_links(
    diagnosis: Diagnosis,
    plan_path: str | os.PathLike[str],
    knowledge: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """Links from a plan written at ``plan_path`` to the entry files its actions name.

    An entry of the user's ``knowledge`` tree links there, any other the built-in file
    shipped with kernelopt; ids whose file is not found keep the tree-relative path.
    Pass the result as :func:`render_plan`'s ``links`` when the plan goes to a file:
    without it, links are relative to a knowledge tree's root and lead nowhere from
    anywhere else.

    Parameters
    ----------
    diagnosis : Diagnosis
        The diagnosis whose actions name catalog entries.
    plan_path : path-like
        Where the plan will be written (its folder is what links are relative to).
    knowledge : path-like, optional
        The user's knowledge tree, searched before the built-in entries.

    Returns
    -------
    dict of str to str
        Catalog id to a link relative to ``plan_path``'s folder.

    Raises
    ------
    InputError
        When ``diagnosis`` is not a Diagnosis, or ``plan_path`` or ``knowledge`` is not a
        path (bytes are not one).
    """
    check_instance(diagnosis, Diagnosis, "a Diagnosis (diagnose's result)", "diagnosis")
    check_path(plan_path, "plan_path")
    if knowledge is not None:
        check_path(knowledge, "knowledge")
    from kernelopt.catalog.catalog import BUILTIN_ROOT

    start = Path(plan_path).resolve().parent
    roots = ([Path(knowledge)] if knowledge else []) + [BUILTIN_ROOT]
    links: dict[str, str] = {}
    for finding in diagnosis.findings:
        for action in finding.actions:
            for link in action.links:
                if link.path:
                    _link_file(links, link.catalog_id, link.path, roots, start)
    return links


def _link_file(
    links: dict[str, str], entry_id: str, path: str, roots: Sequence[Path], start: Path
) -> None:
    """Set ``links[entry_id]`` to the first file ``path`` names under ``roots``, relative
    to ``start``; leave it unset where no root holds the file."""
    for root in roots:
        found = root / path
        if found.is_file():
            links[entry_id] = Path(os.path.relpath(found.resolve(), start)).as_posix()
            return
