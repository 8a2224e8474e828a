"""6. Over-engineering: the kernel keeps growing while its gains shrink.

Measured on the kernel files snapshotted in ``exp_N/`` folders: code lines, branches,
compile-time knobs (the distinct names of ``tl.constexpr``/``gl.constexpr`` parameters), and
autotune configurations (sized statically from ``triton.autotune(configs=...)``, list
comprehensions and ``itertools.product``). Knobs grow by name: a helper that takes the
kernel's knobs or compile-time constants as parameters adds none. Growth across the
trailing stall (in lines, knobs, branches or configurations, each against its own
threshold), or an autotune space of ``max_autotune_configs`` or more (the seed's example:
10 000 configurations for no gain), is the finding.

A snapshot written as a diff (``exp_N/*.diff``, ``*.patch``) counts in two ways. When the
file it was made against is in the log, the diff is replayed on it and the result is
measured like a full snapshot. Either way its added and removed lines say how much it grew
the kernel: the changes kept during the stall (reverted ones are not the kernel any more)
that add ``min_new_constexprs`` knobs, ``min_new_branches`` branches, or
``min_line_growth`` of the code the stall started from, are the finding too.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import TypeVar

from kernelopt._words import count_text, noun
from kernelopt.diagnose.changes import SnapshotChange, file_name, kept
from kernelopt.diagnose.context import Context, experiments_text
from kernelopt.diagnose.detectors._base import Outcome, found, not_found
from kernelopt.diagnose.model import Evidence, Finding, Pathology, Severity
from kernelopt.diagnose.params import OverEngineeringParams
from kernelopt.diagnose.source import Complexity, complexity
from kernelopt.experiments.log import KernelSource
from kernelopt.experiments.readers.seed import folder_number
from kernelopt.experiments.records import Correctness, Status

__all__ = ["detect", "kernel_name", "total_complexity"]

_PATHOLOGY = Pathology.OVER_ENGINEERING
_Item = TypeVar("_Item", KernelSource, SnapshotChange)


def _folder(path: str, number: int) -> str | None:
    """The experiment folder of ``number`` that holds ``path`` (``experiments/exp_5``), or
    None when no folder on the path gives that number."""
    parts = path.split("/")[:-1]
    for depth in range(len(parts) - 1, -1, -1):
        if folder_number(parts[depth]) == number:
            return "/".join(parts[: depth + 1])
    return None


def _one_folder(
    items: Sequence[_Item], number: int, path: Callable[[_Item], str]
) -> Sequence[_Item]:
    """``items`` of experiment ``number`` from one folder: where two folders hold the
    experiment (``exp_5/`` and a copy in ``exp_005/``), the reader keeps the folder whose
    path sorts first, and so does the kernel's size: summing both copies doubles it."""
    folders = {_folder(path(item), number) for item in items}
    named = sorted(f for f in folders if f is not None)
    if len(named) < 2:
        return items
    return [item for item in items if _folder(path(item), number) in (named[0], None)]


def kernel_name(ctx: Context) -> str | None:
    """The file name of the kernel the log names (CLAUDE.md's kernel path: ``seesaw.py``
    for ``kernelopt/kernels/mla/seesaw.py``), where a snapshot carries it (a full snapshot
    of that name, or a diff that changes a file of that name) and another carries a file
    of another name. None otherwise, and every kernel file of an experiment folder is
    measured: a log that snapshots only its kernel reads as it always did.

    An experiment folder may hold, beside the kernel, a merge script or a variant it
    tried; where the log says which file is the kernel, only that file's snapshots are
    the kernel growing."""
    named = ctx.log.kernel_path
    if named is None:
        return None
    name = file_name(named.text.strip())
    full = (file_name(s.path) for items in ctx.snapshots.values() for s in items)
    changed = (c.name for items in ctx.changes.values() for c in items)
    names = set(itertools.chain(full, changed))
    return name if name in names and len(names) > 1 else None


def _snapshots(ctx: Context, number: int, name: str | None = None) -> Sequence[KernelSource]:
    """Experiment ``number``'s full kernel snapshots, from one folder (only the files
    named ``name`` when given: the kernel's)."""
    items = [s for s in ctx.snapshots.get(number, ()) if name is None or file_name(s.path) == name]
    return _one_folder(items, number, lambda s: s.path)


def _changes(ctx: Context, number: int, name: str | None = None) -> Sequence[SnapshotChange]:
    """Experiment ``number``'s diff changes, from one folder (only those of the files
    named ``name`` when given: the kernel's)."""
    items = [c for c in ctx.changes.get(number, ()) if name is None or c.name == name]
    return _one_folder(items, number, lambda c: c.path)


def _replayed(ctx: Context, number: int, name: str | None) -> Sequence[SnapshotChange]:
    """Experiment ``number``'s diff changes when every one was replayed on its base, else
    none: the files of a partly replayed diff (only the helper file it creates, say) are
    not the kernel, and a total over them would read as the kernel shrinking."""
    changes = _changes(ctx, number, name)
    return changes if all(c.after is not None for c in changes) else ()


# Each kernel file an experiment left, by file name, with its complexity.
_Parts = list[tuple[str, Complexity]]


def _files(
    ctx: Context, number: int, name: str | None
) -> tuple[list[KernelSource], list[SnapshotChange]]:
    """The kernel files experiment ``number`` left: its full snapshots, and the replayed
    changes of the files it holds no snapshot of (only the files named ``name`` when
    given)."""
    full = _snapshots(ctx, number, name)
    replayed = _replayed(ctx, number, name)
    # A full snapshot that reads as its own diff's base is its state before the change.
    # (The texts are mapped once per diagnosis: once per experiment was quadratic.)
    texts = ctx.kernel_texts
    before = {texts[c.base] for c in replayed if c.base in texts}
    own = [s for s in full if s.text not in before]
    # The experiment's own copy of a changed file is what it ran: it wins over a replay.
    names = {file_name(s.path) for s in own}
    return own, [c for c in replayed if c.after is not None and c.name not in names]


def _parts(
    ctx: Context,
    number: int,
    name: str | None,
    measure: Callable[[KernelSource], Complexity] = complexity,
) -> _Parts:
    """The complexity of each kernel file experiment ``number`` left, by file name: its full
    snapshots (measured by ``measure``), and the files its diffs were replayed into (only
    the files named ``name`` when given)."""
    own, replays = _files(ctx, number, name)
    return [(file_name(s.path), measure(s)) for s in own] + [
        (c.name, c.after) for c in replays if c.after is not None
    ]


class _Measured(Mapping[int, _Parts]):
    """Each measurable experiment's kernel files (:func:`_parts`), measured when first asked
    for.

    The detector reads a few kernels in full (either side of the stall, the latest) and
    only the autotune space of the rest: parsing every snapshot of a long log took most
    of a diagnosis. Snapshots with the same text (an experiment that left the kernel as
    it was) are measured once.
    """

    def __init__(self, ctx: Context, name: str | None) -> None:
        self._ctx = ctx
        self.name = name
        self._numbers = _measurable(ctx, name)
        self._known = set(self._numbers)
        self._parts: dict[int, _Parts] = {}
        self._sizes: dict[tuple[str, str], Complexity] = {}

    def __getitem__(self, number: int) -> _Parts:
        if number not in self._known:
            raise KeyError(number)
        if number not in self._parts:
            self._parts[number] = _parts(self._ctx, number, self.name, self._measure)
        return self._parts[number]

    def __contains__(self, number: object) -> bool:
        # Mapping's own test would look the item up, measuring it.
        return number in self._known

    def __iter__(self) -> Iterator[int]:
        return iter(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)

    def _measure(self, source: KernelSource) -> Complexity:
        key = (source.language, source.text)
        size = self._sizes.get(key)
        if size is None:
            size = self._sizes[key] = complexity(source)
        return size

    def autotune_configs(self, number: int) -> int | None:
        """Experiment ``number``'s autotune configurations, as :func:`_total` sums them:
        a file that names neither ``autotune`` nor ``Config(`` has none to size, so it is
        not parsed."""
        if number in self._parts:
            return _total(self._parts[number]).autotune_configs
        own, replays = _files(self._ctx, number, self.name)
        sizes = [
            self._measure(s).autotune_configs
            for s in own
            if "autotune" in s.text or "Config(" in s.text
        ] + [c.after.autotune_configs for c in replays if c.after is not None]
        counted = [size for size in sizes if size is not None]
        return sum(counted) if counted else None


def _total(parts: _Parts, files: Collection[str] | None = None) -> Complexity:
    """The summed complexity of ``parts`` (only the files named in ``files`` when given)."""
    sizes = [c for name, c in parts if files is None or name in files]
    configs = [p.autotune_configs for p in sizes if p.autotune_configs is not None]
    return Complexity(
        lines=sum(p.lines for p in sizes),
        branches=sum(p.branches for p in sizes),
        constexprs=sum(p.constexprs for p in sizes),
        autotune_configs=sum(configs) if configs else None,
        knobs=_names([p.knobs for p in sizes]),
        constexpr_names=_names([p.constexpr_names for p in sizes]),
    )


def _names(sets: Sequence[frozenset[str] | None]) -> frozenset[str] | None:
    """The names of every file, or None when a file counts its knobs as words."""
    if any(names is None for names in sets):
        return None
    return frozenset().union(*(names for names in sets if names is not None))


def _knob_growth(start: _Parts, end: _Parts, files: Collection[str]) -> int:
    """The knobs ``files`` gained from ``start`` to ``end``, by name and file by file: a
    name one file held already is no new knob of it, whatever the other files hold."""
    return sum(_total(end, {name}).knob_growth(_total(start, {name})) for name in files)


def total_complexity(ctx: Context, number: int, files: Collection[str] | None = None) -> Complexity:
    """The summed complexity of experiment ``number``'s kernel files: its full snapshots and
    the files its diff snapshots resolve to (only those named in ``files`` when given; only
    the kernel's, :func:`kernel_name`, where the log names it)."""
    return _total(_parts(ctx, number, kernel_name(ctx)), files)


def _measurable(ctx: Context, name: str | None) -> list[int]:
    """Experiments whose whole kernel files are known, full or replayed (the file named
    ``name`` when given)."""
    full = {n for n in ctx.snapshots if _snapshots(ctx, n, name)}
    return sorted(full | {n for n in ctx.changes if _replayed(ctx, n, name)})


def _where(ctx: Context, number: int, name: str | None) -> str:
    """The file to cite for experiment ``number``'s kernel: a snapshot, or a diff."""
    full = _snapshots(ctx, number, name)
    if full:
        return full[0].path
    change = next(iter(_changes(ctx, number, name)), None)
    return f"{change.path}:{change.line}" if change is not None else ""


def _counts_text(change: SnapshotChange) -> str:
    added, removed = change.added, change.removed
    text = (
        f"{change.name} +{added.lines}/−{removed.lines} code lines, "
        f"+{added.branches}/−{removed.branches} branches, "
        f"+{added.constexprs}/−{removed.constexprs} constexpr knobs"
    )
    # The lines a change adds may name knobs the file had already: say what is new.
    if change.net_constexprs != added.constexprs - removed.constexprs:
        text += f" ({change.net_constexprs:+d} by name)"
    if change.before is not None and change.after is not None:
        text += f" ({change.before.lines} → {change.after.lines} lines)"
    return text


def _snapshot_growth(
    ctx: Context,
    params: OverEngineeringParams,
    parts: _Measured,
    stall: Sequence[int],
) -> tuple[str, list[Evidence], list[int]] | None:
    """Growth from the last measured kernel before the stall to the last one inside it:
    (reason, evidence, experiments), or None when it stays under the thresholds.

    Only kept kernels count (a reverted variant is not the kernel any more), and only the
    files both kernels hold: a prototype in a file of its own is not the kernel growing."""
    standing = [n for n in parts if kept(ctx.log, n)]
    before = [n for n in standing if not stall or n < stall[0]]
    inside = [n for n in standing if stall and n >= stall[0]]
    if not (len(stall) >= 2 and inside and (before or len(inside) >= 2)):
        return None
    start = before[-1] if before else inside[0]
    end = inside[-1]
    common = {name for name, _ in parts[start]} & {name for name, _ in parts[end]}
    if not common:
        return None
    first, last = _total(parts[start], common), _total(parts[end], common)
    growth = (last.lines - first.lines) / first.lines if first.lines else 0.0
    knobs = _knob_growth(parts[start], parts[end], common)
    branches = last.branches - first.branches
    configs_growth = (
        (last.autotune_configs or 1) / (first.autotune_configs or 1)
        if last.autotune_configs is not None
        else 1.0
    )
    grew = []
    if growth >= params.min_line_growth:
        grew.append(f"code lines {first.lines} → {last.lines} ({growth:+.0%})")
    if knobs >= params.min_new_constexprs:
        renamed = knobs != last.constexprs - first.constexprs
        grew.append(
            f"constexpr knobs {first.constexprs} → {last.constexprs}"
            + (f" ({knobs} new names)" if renamed else "")
        )
    if branches >= params.min_new_branches:
        grew.append(f"branches {first.branches} → {last.branches}")
    if configs_growth >= params.min_config_growth:
        # A kernel without autotune counts as one config in the ratio, but is shown as the
        # evidence shows it: 0 configs searched.
        grew.append(f"autotune configs {first.autotune_configs or 0} → {last.autotune_configs}")
    if not grew:
        return None
    if branches < params.min_new_branches:
        grew.append(f"branches {first.branches} → {last.branches}")
    reason = f"from exp {start} to exp {end} {', '.join(grew)}"
    evidence = [
        Evidence(
            quote=f"exp {number}: {count_text(size.lines, 'code line')}, "
            f"{count_text(size.branches, 'branch', 'branches')}, {size.constexprs} constexpr, "
            f"{count_text(size.autotune_configs or 0, 'config')}",
            source=_where(ctx, number, parts.name),
            experiments=(number,),
        )
        for number, size in ((start, first), (end, last))
    ]
    return reason, evidence, [start, end]


def _base_lines(
    parts: Mapping[int, _Parts], landed: Sequence[SnapshotChange], before: Sequence[int]
) -> int | None:
    """Code lines of the files the ``landed`` changes touch, as the stall found them: from
    the latest kept kernel before the stall that holds any of them, else from the changes'
    own bases; None when neither is in the log (another file's size is no base)."""
    names = {c.name for c in landed}
    for number in reversed(before):
        sizes = {name: size.lines for name, size in parts[number] if name in names}
        if sizes:
            return sum(sizes.values())
    first: dict[str, int] = {}
    for change in landed:
        if change.before is not None:
            first.setdefault(change.name, change.before.lines)
    return sum(first.values()) or None


def _landed_growth(
    ctx: Context,
    params: OverEngineeringParams,
    stall: Sequence[int],
    parts: _Measured,
    before: Sequence[int],
) -> tuple[str, list[Evidence], list[int]] | None:
    """The growth the diffs kept during the stall add up to, when it crosses a threshold:
    (reason, evidence, experiments). ``before``: the kept, measured kernels before it."""
    landed = [c for n in stall if kept(ctx.log, n) for c in _changes(ctx, n, parts.name)]
    if not landed:
        return None
    base_lines = _base_lines(parts, landed, before)
    lines = sum(c.net_lines for c in landed)
    knobs = sum(c.net_constexprs for c in landed)
    branches = sum(c.net_branches for c in landed)
    # Lines are judged against the code the stall started from; knobs need no base.
    line_growth = lines / base_lines if base_lines else 0.0
    if (
        knobs < params.min_new_constexprs
        and branches < params.min_new_branches
        and line_growth < params.min_line_growth
    ):
        return None
    numbers = sorted({c.experiment for c in landed})
    of_base = f" ({line_growth:+.0%} of {base_lines})" if base_lines else ""
    reason = (
        f"the changes kept in {experiments_text(numbers)} add "
        f"{count_text(lines, 'code line', sign=True)}{of_base}, "
        f"{count_text(knobs, 'constexpr knob', sign=True)} and "
        f"{count_text(branches, 'branch', 'branches', sign=True)}"
    )
    # The six changes that grew the kernel most, in experiment order.
    largest = sorted(landed, key=lambda c: (-c.net_constexprs, -c.net_lines))[:6]
    evidence = [
        Evidence(
            quote=f"exp {c.experiment}: {_counts_text(c)}",
            source=f"{c.path}:{c.line}",
            experiments=(c.experiment,),
        )
        for c in landed
        if c in largest
    ]
    return reason, evidence, numbers


def _attempted(ctx: Context, number: int) -> bool:
    """Whether experiment ``number`` ran (a plan with a prototype and no result did not)."""
    experiment = ctx.log.experiment(number)
    return experiment is not None and experiment.attempted


# A version mark at the end of a file's stem: ``quant_v3``, ``moe_gemm-2``, ``attn3``.
_VERSION_MARK = re.compile(r"(?:[_\-.]?v?\d+)+$", re.IGNORECASE)


def _version_stem(name: str) -> str:
    """``name`` without its extension and version mark (``quant_v3.py``: ``quant``)."""
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return _VERSION_MARK.sub("", stem).lower() or stem.lower()


def _other_files_text(ctx: Context, latest: int, name: str) -> list[str]:
    """Where kept experiments after ``latest`` snapshot other versions of ``name`` (the
    file CLAUDE.md names: ``quant_v3.py`` beside ``quant_v1.py``) and not ``name`` itself,
    the words that say so: a log that keeps each version in a file of its own has moved
    on from the named file, and its later kernels were not measured as it. A file of
    another stem (a merge script) is no version of the kernel, and is not named."""
    stem = _version_stem(name)

    def versions(number: int) -> set[str]:
        found = {file_name(s.path) for s in _snapshots(ctx, number)}
        found |= {c.name for c in _changes(ctx, number)}
        return {f for f in found if f != name and _version_stem(f) == stem}

    later = sorted(
        n
        for n in set(ctx.snapshots) | set(ctx.changes)
        if n > latest
        and kept(ctx.log, n)
        and not _snapshots(ctx, n, name)
        and not _changes(ctx, n, name)
        and versions(n)
    )
    if not later:
        return []
    files = sorted({f for n in later for f in versions(n)})
    shown = ", ".join(files[:3]) + (", …" if len(files) > 3 else "")
    named = ctx.log.kernel_path
    by = named.source.path if named is not None and named.source.path else "the log"
    what = f"the later kept {experiments_text(later)}"
    verb = "snapshots" if len(later) == 1 else "snapshot"
    return [f"only {name}, the kernel {by} names, was measured: {what} {verb} {shown} instead"]


def _fates_text(ctx: Context, numbers: Sequence[int], what: str) -> str:
    """Why the ``what`` files (``"snapshot"``, ``"diff"``) of the experiments ``numbers``
    are not the kernel as it stands, in words: ``"exps 4, 5 were reverted, so their
    snapshots are not the current kernel"``. The files are on disk; the changes they hold
    were not kept."""
    words = []
    for number in numbers:
        experiment = ctx.log.experiment(number)
        status = experiment.status if experiment is not None else None
        if experiment is not None and experiment.correctness is Correctness.FAIL:
            word = "failed correctness"
        elif status in (Status.REVERTED, Status.NEUTRAL, Status.FAILED):
            word = status.value.lower()
        else:
            word = "not kept"
        if word not in words:
            words.append(word)
    one = len(numbers) == 1
    fate = " or ".join(words)
    files = f"its {what} is" if one else f"their {what}s are"
    verb = "was" if one else "were"
    return f"{experiments_text(numbers)} {verb} {fate}, so {files} not the current kernel"


def _detail(ctx: Context, measured: _Measured, stall: Sequence[int]) -> str:
    """What the detector saw, for the sentence of an unchecked item."""
    parts = []
    name = measured.name
    # Where the log names its kernel, the sentence says which file was measured.
    of = f" of {name}" if name is not None else ""
    if measured:
        standing = [n for n in measured if kept(ctx.log, n)]
        latest = max(standing or measured)
        fate = "" if standing else ", not kept"
        # The latest kept snapshot is the kernel as it stands; later snapshots of changes
        # not kept are said to exist, so "latest" does not read as the log's last one.
        dropped = [n for n in measured if n > latest and _attempted(ctx, n)]
        if standing and dropped:
            fate = f"; {_fates_text(ctx, dropped, 'snapshot')}"
        size = _total(measured[latest])
        parts.append(
            # Code lines (no blank or comment lines): another check's count of a file's
            # lines is of all of them, and the two must not read as one number.
            f"latest {'kept ' if standing and dropped else ''}snapshot{of} (exp {latest}"
            f"{fate}): "
            f"{count_text(size.lines, 'code line')}, "
            f"{count_text(size.branches, 'branch', 'branches')}, "
            f"{count_text(size.constexprs, 'constexpr knob')}, "
            f"{count_text(size.autotune_configs or 0, 'autotune config')}"
        )
        if name is not None:
            parts += _other_files_text(ctx, latest, name)
    diffed = [n for n in ctx.changes if _changes(ctx, n, name)]
    if diffed:
        latest = max(diffed)
        changes = "; ".join(_counts_text(c) for c in _changes(ctx, latest, name))
        parts.append(f"latest diff{of} (exp {latest}): {changes}")
    dropped = [n for n in stall if n in diffed and not kept(ctx.log, n)]
    if dropped:
        parts.append(_fates_text(ctx, dropped, "diff"))
    return "; ".join(parts) or "no snapshot"


def detect(ctx: Context, params: OverEngineeringParams) -> Outcome:
    """Report complexity growth without gains, or an autotune explosion."""
    snapshots = ctx.snapshots
    stated = [
        (e, e.metrics["autotune_configs"])
        for e in ctx.experiments
        if "autotune_configs" in e.metrics
    ]
    if not snapshots and not ctx.changes and not stated:
        return not_found(
            _PATHOLOGY,
            "No kernel snapshots in the experiment folders, so complexity over time cannot be "
            "measured.",
            ["kernel sources (or diffs of them) snapshotted in exp_N/ folders"],
        )
    stall = ctx.progress.stall(params.min_gain)
    stall_numbers = [s.experiment.number for s in ctx.progress.counted(stall)]
    # Each kernel's files are measured when a check first needs them, once (complexity
    # parses the source).
    parts = _Measured(ctx, kernel_name(ctx))
    evidence: list[Evidence] = []
    reasons: list[str] = []
    involved: list[int] = []
    # The seed's example is a search that brought no significant improvement: an
    # experiment whose own step gained min_gain or more was paid for by that gain.
    gains = {s.experiment.number: s.gain or 0.0 for s in ctx.progress.steps}

    # An autotune space that big is a finding on its own when it bought nothing.
    def judged(number: int) -> bool:
        return (not stall_numbers or number >= stall_numbers[0]) and gains.get(
            number, 0.0
        ) < params.min_gain

    # Sized lazily, and only for the experiments judged: the loop stops at the first.
    sized = ((n, parts.autotune_configs(n)) for n in parts if judged(n))
    given = ((e.number, v) for e, v in stated if judged(e.number))
    for number, value in itertools.chain(sized, given):
        if value is not None and value >= params.max_autotune_configs:
            where = _where(ctx, number, parts.name) or str(ctx.experiments[0].source or "")
            count = int(value)
            configs = f"{count:,} {noun(count, 'autotune configuration')}"
            evidence.append(
                Evidence(
                    quote=f"exp {number}: {configs}",
                    source=where,
                    experiments=(number,),
                )
            )
            reasons.append(f"exp {number} searches {configs}")
            involved.append(number)
            break
    growth = _snapshot_growth(ctx, params, parts, stall_numbers)
    if growth is None and len(stall_numbers) >= 2:
        before = [n for n in parts if n < stall_numbers[0] and kept(ctx.log, n)]
        growth = _landed_growth(ctx, params, stall_numbers, parts, before)
    if growth is not None:
        reason, growth_evidence, numbers = growth
        reasons.append(reason)
        evidence += growth_evidence
        involved += numbers
    if not reasons:
        detail = _detail(ctx, parts, stall_numbers)
        return not_found(_PATHOLOGY, f"Complexity did not grow while gains stalled ({detail}).")
    gain_text = (
        f"while the last {count_text(len(stall_numbers), 'attempt')} "
        f"({experiments_text(stall_numbers)}) gained "
        f"less than {params.min_gain:.0%}"
        if stall_numbers
        else "with no gain to show for it"
    )
    summary = f"The kernel grew more complex {gain_text}: {'; '.join(reasons)}."
    actions = [
        ctx.action(
            "Revert to the simplest version that holds the best result, then change the "
            "design, not the knobs.",
            "autotune-explosion",
        )
    ]
    if any("autotune" in reason for reason in reasons):
        # Pruning only answers growth in the search space, not in the code.
        actions.insert(
            0,
            ctx.action(
                "Prune the autotune space with domain knowledge (tile sizes that divide the "
                "shapes, warps per tile); keep the search under an hour per kernel version.",
                "pruned-autotuning",
            ),
        )
    finding = Finding(
        pathology=_PATHOLOGY,
        summary=summary,
        experiments=sorted(set(involved + stall_numbers)),
        severity=Severity.MEDIUM,
        confidence=0.7 if len(reasons) > 1 else 0.6,
        evidence=evidence,
        actions=actions,
    )
    return found(finding)
