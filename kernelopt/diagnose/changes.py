"""Diff snapshots: what an experiment's change does to the kernel's complexity.

An experiment snapshotted as a unified diff (``exp_14/tile_rows_32.diff``) shows only the
lines it changed. For each kernel file a diff touches, :func:`snapshot_changes` counts code
lines, branches and compile-time knobs in the added and the removed lines: the change in
complexity the experiment made, whatever the file looked like. A knob is a name, so the
knobs a change adds are the knob names of the file after it that the file before it did
not hold (without that file, those of its added lines that neither its removed nor its
context lines hold).

When the text the diff was made against is in the log too, the diff is replayed on it and
the file before and after is measured like any full source. Candidates are full snapshots
of earlier experiments or of the experiment itself, the kernel and baseline CLAUDE.md
names, and the replayed results of earlier diffs (a diff made against the kernel after a
kept change). When the diff carries git's ``index`` line, only the text with the blob id
it names is its base. Without one, the fit is the evidence: the first candidate in which
every hunk's context and removed lines read exactly as the diff says (trailing blanks
aside) is the base, and none is guessed when no candidate fits.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import attrs

from kernelopt._errors import FormatError
from kernelopt.diagnose.source import Complexity, LineCounts, complexity, line_counts
from kernelopt.experiments.diffs import FileDiff, apply_diff, blob_id, parse_diff
from kernelopt.experiments.log import Experiment, ExperimentLog, KernelSource
from kernelopt.experiments.readers import is_source, language_of

__all__ = ["NEW_FILE", "SnapshotChange", "file_name", "kept", "snapshot_changes"]

NEW_FILE = "/dev/null"
"""The ``base`` of a change that creates its file: nothing before it."""

_EMPTY = Complexity(lines=0, branches=0, constexprs=0, autotune_configs=None)


@attrs.frozen(kw_only=True)
class SnapshotChange:
    """One kernel file's change in an experiment's diff snapshot.

    Parameters
    ----------
    experiment : int
        The experiment whose folder holds the diff.
    path : str
        The diff, relative to the log root.
    line : int
        The 1-based line of the diff where this file's section starts.
    target : str
        The file the diff changes, as the diff names it (``kernelopt/kernels/mla/ring.py``).
    added, removed : LineCounts
        Code lines, branches and compile-time knobs in the added and the removed lines.
    context : LineCounts or None
        The same in the hunks' context lines, which the file holds before and after.
    base : str or None
        What the diff was replayed on: a full source in the log, or the earlier diff whose
        result it was made against; ``NEW_FILE`` when the diff creates the file, None when
        nothing in the log fits it.
    before, after : Complexity or None
        The complexity of the file before and after the change, when ``base`` is known.
    """

    experiment: int
    path: str
    line: int
    target: str
    added: LineCounts
    removed: LineCounts
    context: LineCounts | None = None
    base: str | None = None
    before: Complexity | None = None
    after: Complexity | None = None

    @property
    def name(self) -> str:
        """The changed file's name without folders (``ring.py``)."""
        return file_name(self.target)

    @property
    def net_lines(self) -> int:
        """Code lines added minus code lines removed."""
        return self.added.lines - self.removed.lines

    @property
    def net_branches(self) -> int:
        """Branches added minus branches removed."""
        return self.added.branches - self.removed.branches

    @property
    def net_constexprs(self) -> int:
        """Compile-time knobs added minus knobs removed.

        A knob is a name (:class:`~kernelopt.diagnose.source.Complexity`): with the file
        before and after known, the knob names it gained minus those it lost; otherwise
        the same read from the added, removed and context lines. Either way a helper that
        takes the kernel's own knobs or constants as parameters adds none.
        """
        if self.before is not None and self.after is not None:
            return self.after.knob_growth(self.before)
        return self.added.knob_growth(self.removed, self.context)


def file_name(path: str) -> str:
    """``path``'s file name without its folders (``ring.py``)."""
    return path.rsplit("/", 1)[-1]


@attrs.frozen(kw_only=True, slots=False)
class _Base:
    """A text a diff could have been made against: a full source in the log, or the result
    of an earlier experiment's diff, replayed."""

    path: str  # what to cite: the source, or the diff whose replay this is
    name: str  # the name of the file it holds (``ring.py``)
    text: str
    language: str
    experiment: int | None  # None for the kernel and baseline CLAUDE.md names
    replay: bool = False
    known: Complexity | None = None  # its complexity, when already measured

    @functools.cached_property
    def size(self) -> Complexity:
        """Its complexity, measured once however many diffs it is the base of."""
        if self.known is not None:
            return self.known
        return complexity(KernelSource(path=self.path, text=self.text, language=self.language))

    @functools.cached_property
    def lines(self) -> frozenset[str]:
        """Its distinct lines, trailing blanks removed: a base holds every line a hunk
        needs, which rules most candidates out before any hunk is placed."""
        return frozenset(line.rstrip() for line in self.text.split("\n"))

    @functools.cached_property
    def blob(self) -> str:
        """Its git blob id."""
        return blob_id(self.text)


def _kept(experiment: Experiment | None) -> bool:
    # A planned experiment (a plan and its prototype, not run yet) has no fate to state:
    # its snapshot is not in the kernel either.
    return experiment is not None and experiment.attempted and experiment.kept


def kept(log: ExperimentLog, number: int) -> bool:
    """Whether experiment ``number``'s change stayed in the kernel: attempted, kept or its
    fate not stated, and not failing correctness (a reverted change is not the kernel the
    next experiment starts from, and a planned one that has not run is not in it yet)."""
    return _kept(log.experiment(number))


def _sources(log: ExperimentLog) -> list[_Base]:
    return [
        _Base(
            path=k.path,
            name=file_name(k.path),
            text=k.text,
            language=k.language,
            experiment=k.experiment if k.role == "snapshot" else None,
        )
        for k in log.kernels
        if not k.is_diff and (k.role != "snapshot" or k.experiment is not None)
    ]


def _candidates(bases: Sequence[_Base], number: int, file: FileDiff) -> list[tuple[_Base, bool]]:
    """Texts that could be the file ``file`` was made against, most likely first, each with
    whether its hunks must sit exactly at the lines they name.

    Same-named files of earlier experiments (newest first) come before the named kernel
    and baseline, then same-named snapshots of the experiment itself, which more often hold
    its result than its base. A snapshot under another name (``v2.py`` for ``kernel.py``)
    is tried last, and only at the exact lines, since a short hunk of common lines could
    otherwise fit a file that is not the base.
    """
    name = file_name(file.old_path or "")
    language = language_of(name)
    earlier = sorted(
        (b for b in bases if b.experiment is not None and b.experiment < number),
        key=lambda b: (-(b.experiment or 0), b.replay, b.path),
    )
    named = [b for b in bases if b.experiment is None]
    own = [b for b in bases if b.experiment == number and not b.replay]
    same = [b for b in earlier + named + own if b.name == name]
    other = [
        b
        for b in earlier + own
        if b.name != name and not b.replay and b.language == language != "other"
    ]
    return [(b, False) for b in same] + [(b, True) for b in other]


def _resolve(
    bases: Sequence[_Base], landed: frozenset[int], number: int, file: FileDiff
) -> tuple[_Base | None, str] | None:
    """The base ``file`` fits (None for a file it creates) and the text after the change;
    None when no text in the log fits. ``landed`` are the experiments whose change was
    kept."""
    if file.old_path is None:
        created = apply_diff("", file)  # None when the "new" file has context lines
        return None if created is None else (None, created)
    needed = {line.rstrip() for hunk in file.hunks for line in hunk.old}
    candidates = [
        (b, strict) for b, strict in _candidates(bases, number, file) if needed <= b.lines
    ]
    if file.old_id:
        # git's index line names the base's exact contents: only that text is the base,
        # whatever its name, and the replay of a reverted change can be it too.
        candidates = [(b, False) for b, _ in candidates if b.blob.startswith(file.old_id)]
    else:
        candidates = [
            (b, strict) for b, strict in candidates if not b.replay or b.experiment in landed
        ]
    for base, strict in candidates:
        after = apply_diff(base.text, file, exact=strict)
        if after is not None:
            return base, after
    return None


def _change(
    bases: Sequence[_Base], landed: frozenset[int], diff: KernelSource, number: int, file: FileDiff
) -> tuple[SnapshotChange, _Base | None]:
    """The change ``file`` makes, and its result as a base for later diffs when it was
    replayed."""
    language = language_of(file.path)
    change = SnapshotChange(
        experiment=number,
        path=diff.path,
        line=file.line,
        target=file.path,
        added=line_counts(file.added, language),
        removed=line_counts(file.removed, language),
        context=line_counts(_context_lines(file), language),
    )
    resolved = _resolve(bases, landed, number, file)
    if resolved is None:
        return change, None
    base, text = resolved
    before = base.size if base is not None else _EMPTY
    after = (
        complexity(KernelSource(path=file.path, text=text, language=language))
        if file.new_path is not None
        else _EMPTY
    )
    base_path = base.path if base is not None else NEW_FILE
    changed = attrs.evolve(change, base=base_path, before=before, after=after)
    if file.new_path is None:
        return changed, None  # a deleted file is nobody's base
    result = _Base(
        path=diff.path,
        name=change.name,
        text=text,
        language=language,
        experiment=number,
        replay=True,
        known=after,
    )
    return changed, result


def _context_lines(file: FileDiff) -> list[str]:
    """The lines ``file``'s hunks show unchanged, without their marker."""
    return [line[1:] for hunk in file.hunks for line in hunk.lines if line[:1] == " "]


def _diff_files(diff: KernelSource) -> Sequence[FileDiff]:
    try:
        return parse_diff(diff.text, path=diff.path)
    except FormatError:
        return ()  # reported as unread when the log was read


def _names(path: str, named: str) -> bool:
    """Whether ``named`` (a result's ``Kernel:`` field, relative to some folder of the log)
    is the snapshot at ``path`` (relative to the log root)."""
    named = named.strip().strip("`").removeprefix("./")
    return bool(named) and (path == named or path.endswith("/" + named))


def _changes_made(log: ExperimentLog, diffs: Sequence[KernelSource]) -> list[KernelSource]:
    """The diffs that are their experiments' changes: where a result names one of its
    folder's diffs as its kernel, that one alone; the others there are variants it timed or
    instruments it measured with, not what it changed."""
    chosen: dict[int | None, str] = {}
    for diff in diffs:
        experiment = log.experiment(diff.experiment or 0)
        if experiment is not None and experiment.kernel and _names(diff.path, experiment.kernel):
            chosen[diff.experiment] = diff.path
    return [d for d in diffs if chosen.get(d.experiment, d.path) == d.path]


def snapshot_changes(log: ExperimentLog) -> dict[int, tuple[SnapshotChange, ...]]:
    """The kernel-file changes of every diff snapshot in ``log``, by experiment number.

    Diffs are read in experiment order, so a diff made against the result of an earlier
    one (the kernel after a kept change) is replayed on that result.

    Parameters
    ----------
    log : ExperimentLog
        The log; its diff snapshots are ``KernelSource`` items with ``language == "diff"``.

    Returns
    -------
    dict of int to tuple of SnapshotChange
        Experiments in increasing order, each with one change per kernel file its diffs
        touch (files that are not kernel sources, such as docs, are left out).
    """
    bases = _sources(log)
    landed = frozenset(e.number for e in log.experiments if _kept(e))
    found: dict[int, list[SnapshotChange]] = {}
    diffs = _changes_made(
        log,
        sorted(
            (
                k
                for k in log.kernels
                if k.is_diff and k.role == "snapshot" and k.experiment is not None
            ),
            key=lambda k: (k.experiment or 0, k.path),
        ),
    )
    for diff in diffs:
        number = diff.experiment or 0
        for file in _diff_files(diff):
            # A diff also touches docs and configuration; only source files are kernel code.
            if not is_source(file.path):
                continue
            change, result = _change(bases, landed, diff, number, file)
            found.setdefault(number, []).append(change)
            if result is not None:
                bases.append(result)
    return {number: tuple(items) for number, items in sorted(found.items())}
