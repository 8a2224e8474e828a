"""``read_log``: find the layout under a directory and read it into one ExperimentLog."""

from __future__ import annotations

import bisect
import os
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from kernelopt._errors import InputError, expected
from kernelopt._words import and_list
from kernelopt.experiments._validators import check_instance, check_path
from kernelopt.experiments.log import (
    DeclinedOption,
    ExperimentLog,
    Fact,
    FloorRow,
    KernelSource,
    ProfileFacts,
    Recommendation,
    Series,
    SourceRef,
    Unread,
)
from kernelopt.experiments.readers._assemble import NOT_ATTEMPTS, assemble, choose_primary
from kernelopt.experiments.readers._draft import Draft
from kernelopt.experiments.readers._files import (
    SNAPSHOT_SUFFIXES,
    LogFiles,
    ReadLimits,
    TextFile,
    repository_path,
    suffix_of,
)
from kernelopt.experiments.readers._kinds import (
    is_knowledge_entry,
    is_plan_output,
    is_rule_file,
    is_workload_profile,
)
from kernelopt.experiments.readers._markdown import code_mask, headings
from kernelopt.experiments.readers._metrics import is_profiling_line
from kernelopt.experiments.readers.context import (
    lesson_experiment,
    read_lessons,
    read_profile,
    read_rules,
)
from kernelopt.experiments.readers.devlog import dated_headings, read_devlog
from kernelopt.experiments.readers.documents import (
    declined_options,
    profile_recommendations,
    recommendations_in,
)
from kernelopt.experiments.readers.floors import is_result_file, result_floors
from kernelopt.experiments.readers.history import read_json, read_jsonl, read_table_file
from kernelopt.experiments.readers.kernels import named_paths, source
from kernelopt.experiments.readers.notes import is_single_note, read_note, read_table_note
from kernelopt.experiments.readers.seed import (
    experiment_folders,
    folder_clashes,
    misnamed_folders,
    read_folder,
    separate_logs,
)
from kernelopt.experiments.readers.steplog import read_steps, step_headings
from kernelopt.experiments.tagging import EntryLike, Tagger, default_tagger

if TYPE_CHECKING:  # the catalog is imported on first use only: reading a log stays cheap
    from kernelopt.catalog import Catalog

__all__ = ["read_log"]

_RESEARCH = re.compile(r"plan|research|diagnos|next|todo|roadmap|ideas", re.IGNORECASE)
_MARKDOWN = (".md", ".markdown", ".txt")
_LAYOUT_OF_KIND = {
    "summary": "seed",
    "experiment-folders": "experiment-folders",
    "devlog": "devlog",
    "step-log": "step-log",
    "notes": "notes",
    "jsonl": "jsonl",
    "tsv": "tsv",
    "archive-json": "archive-json",
}


class _Reading:
    """The state of one ``read_log`` call: files, drafts and context found so far."""

    def __init__(self, root: Path, limits: ReadLimits, tagger: Tagger) -> None:
        self.root = root
        self.files = LogFiles(root, limits)
        self.tagger = tagger
        self.drafts: list[Draft] = []
        self.kernels: list[KernelSource] = []
        self.rules: list[Fact] = []
        self.project: list[Fact] = []
        self.lessons: list[Fact] = []
        self.profile: ProfileFacts | None = None
        self.workload: str | None = None
        self.kernel_path: Fact | None = None
        self.baseline_path: Fact | None = None
        self.notes: list[Recommendation] = []
        # The recommendations profile.md makes besides its Top 3, for the experiments
        # after the one it followed (all of them when it names none).
        self.profile_advice: list[Recommendation] = []
        # The options the notes decline or scope out: those of the loose notes, placed
        # once the experiments are known, and those of the experiment folders' notes.
        self.declined_loose: list[DeclinedOption] = []
        self.declined_in_folders: list[DeclinedOption] = []
        self.profiling: list[Fact] = []
        self.problems: list[tuple[str, str]] = []
        self.warnings: list[str] = []
        self.layouts: set[str] = set()
        self.cut_folders = 0

    # --- one file --------------------------------------------------------------------------

    def markdown(self, file: TextFile, position: int) -> None:
        first = len(self.drafts)
        self._markdown(file, position)
        if is_result_file(file.path):
            _carry_floors(file, self.drafts[first:], self.warnings)

    def _markdown(self, file: TextFile, position: int) -> None:
        name = file.name.lower()
        folder = file.path.rsplit("/", 1)[0] if "/" in file.path else ""
        if is_plan_output(file) or is_knowledge_entry(file):
            # A diagnosis kernelopt wrote is a verdict on this log, and its actions come
            # from checks that run again on the log as it is now: an action still open is
            # found again by the item that made it. Knowledge entries describe techniques
            # in general. Neither is an experiment or advice for this one.
            return
        if name in {"claude.md", "agents.md"}:
            if self.kernel_path is None and self.baseline_path is None and not self.rules:
                self.rules = read_rules(file)
                self.project = [
                    Fact(text=line.strip(), source=SourceRef(path=file.path, line=n))
                    for n, line in enumerate(file.lines, start=1)
                    if line.strip()
                ][:400]
                self.kernel_path, self.baseline_path = named_paths(file)
                self.layouts.add("seed")
            return
        if name.startswith("lessons"):
            self.lessons += read_lessons(file, warnings=self.warnings)
            return
        if is_workload_profile(name):
            self.workload = self.workload or file.path
            return
        if name == "profile.md" or (name.startswith("profile") and name.endswith(".md")):
            if self.profile is None:
                self.profile = read_profile(file, self.warnings)
                self.profile_advice = self._profile_advice(file, self.profile)
            return
        if len(dated_headings(file)) >= 2:
            found = read_devlog(file)
            if found:
                self.drafts += found
                self.layouts.add("devlog")
                return
        if step_headings(file):
            self.drafts += read_table_note(
                file,
                kind="step-log",
                slug_scope=f"slug:{folder}",
                position=position,
                attach_sections=False,
                passed_over=self.problems,
            )
            self.drafts += read_steps(file)
            self.layouts.add("step-log")
            return
        kind = "summary" if name.startswith("summary") else "notes"
        found = read_table_note(
            file,
            kind=kind,
            slug_scope=f"slug:{folder}",
            position=position,
            passed_over=self.problems,
        )
        if found:
            self.drafts += found
            self.layouts.add(_LAYOUT_OF_KIND[kind])
            return
        if is_single_note(file):
            self.drafts.append(read_note(file, kind="notes", scope=f"slug:{folder}"))
            self.layouts.add("notes")
            return
        if _RESEARCH.search(file.stem):
            mask = code_mask(file.lines)
            heads = headings(file.lines, mask)
            for item in recommendations_in(file, 1, len(file.lines), heads, mask, offset=0):
                self.notes.append(
                    Recommendation(
                        text=item.text,
                        source=item.source,
                        experiment=None,
                        after=0,
                        catalog_ids=item.catalog_ids or self.tagger.tags(item.text),
                    )
                )

    def _profile_advice(self, file: TextFile, profile: ProfileFacts) -> list[Recommendation]:
        """The recommendations of ``file``, the log's profile read as ``profile``, besides
        its Top 3: made by the experiment it followed for the ones after it, or, where it
        names none, undated (``after`` 0), as a loose note's are."""
        followed = profile.experiment
        return [
            Recommendation(
                text=item.text,
                source=item.source,
                experiment=followed,
                after=followed + item.offset if followed is not None else 0,
                catalog_ids=item.catalog_ids or self.tagger.tags(item.text),
            )
            for item in profile_recommendations(file, profile.opportunities)
        ]

    def other(self, file: TextFile, position: int) -> None:
        suffix = file.path.rsplit(".", 1)[-1].lower()
        if suffix == "jsonl":
            found = read_jsonl(file, unread=self.problems)
            kind = "jsonl"
        elif suffix == "json":
            found = read_json(file, unread=self.problems) if self._json_candidate(file) else []
            kind = "archive-json"
        else:
            found = read_table_file(file, position=position)
            kind = "tsv"
        if found:
            self.drafts += found
            self.layouts.add(kind)

    @staticmethod
    def _json_candidate(file: TextFile) -> bool:
        # Arbitrary JSON in a repository (package.json, configs) is not a log: only files
        # that sit in log-like folders or are named like histories.
        words = file.path.lower()
        return bool(re.search(r"archive|history|bench|result|experiment|log|runs|track", words))

    # --- the walk --------------------------------------------------------------------------

    def run(self, until: int | None) -> None:
        folders = experiment_folders(self.files)
        logs = separate_logs(folders)
        if logs:
            shown = [f"{log}/" for log in logs]
            raise InputError(
                expected(
                    f"one experiment log in {self.root}",
                    f"{len(logs)}, whose exp_N folders give the same numbers: "
                    f"{and_list(shown)}; read each on its own",
                )
            )
        self.warnings += folder_clashes(folders, until)
        self.problems += misnamed_folders(self.files)
        in_folder = {p for folder in folders for p in self.files.under(folder)}
        loose = [p for p in self.files.paths if p not in in_folder]
        loose.sort(
            key=lambda p: (0 if p.rsplit("/", 1)[-1].lower().startswith("summary") else 1, p)
        )
        for position, path in enumerate(loose):
            suffix = suffix_of(path)
            if suffix in SNAPSHOT_SUFFIXES:
                continue  # kernel text counts when CLAUDE.md names it or an exp_N/ holds it
            file = self.files.read(path)
            if file is None:
                continue
            if suffix in _MARKDOWN:
                self.markdown(file, position)
                # Every file is scanned; read_log keeps, under ``until``, only the notes
                # that sit in an experiment still standing.
                if self._measures(file):
                    self._profiling_lines(file)
                    self.declined_loose += declined_options(file)
            else:
                self.other(file, position)
        profiles: list[ProfileFacts] = []
        for folder, number in sorted(folders.items(), key=lambda item: (item[1], item[0])):
            if until is not None and number >= until:
                self.cut_folders += 1
                continue
            draft, snapshots = read_folder(
                self.files, folder, number, unread=self.problems, profiles=profiles
            )
            self._folder_declined(folder, number)
            self.drafts.append(draft)
            self.kernels += snapshots
            self.layouts.add("experiment-folders")
        if self.profile is None and profiles:
            # No experiments/profile.md: the latest experiment's profile stands in for it.
            self.profile = profiles[-1]
        self._named_kernels(in_folder)

    def _folder_declined(self, folder: str, number: int) -> None:
        """Record the options the notes of experiment ``number``'s ``folder`` decline."""
        for path in self.files.under(folder):
            if suffix_of(path) not in _MARKDOWN:
                continue
            file = self.files.read(path)
            if file is not None and self._measures(file):
                self.declined_in_folders += [
                    attrs.evolve(option, experiment=number) for option in declined_options(file)
                ]

    @staticmethod
    def _measures(file: TextFile) -> bool:
        """Whether ``file`` can hold profiling data of this log: not a rule file (which
        says how to time, not what was timed), a workload profile (call shares, not
        kernel metrics), a knowledge entry or a plan kernelopt wrote."""
        return not (
            is_rule_file(file.name)
            or is_workload_profile(file.name)
            or is_knowledge_entry(file)
            or is_plan_output(file)
        )

    def _profiling_lines(self, file: TextFile) -> None:
        mask = code_mask(file.lines)
        for index, line in enumerate(file.lines):
            if len(self.profiling) >= 200:
                return
            if not mask[index] and is_profiling_line(line):
                self.profiling.append(
                    Fact(
                        text=" ".join(line.split())[:200],
                        source=SourceRef(path=file.path, line=index + 1),
                    )
                )

    def _named_kernels(self, in_folder: set[str]) -> None:
        """Read the kernel and baseline CLAUDE.md names; ``in_folder``: the files of the
        experiment folders, whose sources are snapshots."""
        for fact, role in ((self.kernel_path, "kernel"), (self.baseline_path, "baseline")):
            if fact is None:
                continue
            base = fact.source.path.rsplit("/", 1)[0] if "/" in fact.source.path else ""
            if _climbs(f"{base}/{fact.text}" if base else fact.text):
                # Nothing outside the log directory is read but through its repository's
                # root (a path written from there); the user should know why the kernel
                # was not.
                self.problems.append(
                    (
                        fact.text,
                        f"named as the {role} in {fact.source}, climbs out of the log with "
                        "'..'; not followed",
                    )
                )
                continue
            candidates = [fact.text, f"{base}/{fact.text}" if base else fact.text]
            if "/../" in f"/{fact.text}":  # "kernels/../k.py", "../k.py" from docs/
                candidates = [posixpath.normpath(c) for c in candidates]
            found = next((c for c in candidates if c in self.files.paths), None)
            if found is None:
                # A bare file name, or a path given from a folder above the log: the working
                # file outside the experiment folders. A copy in an exp_N/ folder is a
                # snapshot of one experiment (a reverted prototype, maybe), not the kernel.
                ending = [p for p in self.files.paths if p.endswith("/" + fact.text)]
                found = next((p for p in ending if p not in in_folder), None)
                if found is None and ending:
                    self.problems.append(
                        (
                            fact.text,
                            f"named as the {role} in {fact.source}, but only experiment "
                            f"snapshots hold a file of that name ({', '.join(ending[:3])}"
                            f"{', …' if len(ending) > 3 else ''}); none is read as the {role}",
                        )
                    )
                    continue
            if found is None:
                # A path from the repository's root, the log living further down in it.
                found = repository_path(self.root, fact.text)
            if found is None:
                self.problems.append(
                    (
                        fact.text,
                        f"named as the {role} in {fact.source} but not found under the log "
                        f"directory or in the repository around it",
                    )
                )
                continue
            file = self.files.read(found)
            if file is not None:
                self.kernels.append(source(found, file.text, role=role))


# The layouts whose experiments are sections of one file, each running to the next.
_ENTRY_LAYOUTS = frozenset({"devlog", "step-log"})


def _climbs(path: str) -> bool:
    """Whether ``path`` (relative to the log directory) leads out of it with ``..``."""
    normal = posixpath.normpath(path)
    return normal == ".." or normal.startswith("../")


def _placed(options: list[DeclinedOption], primary: Series | None) -> list[DeclinedOption]:
    """``options`` of loose notes, each placed in the experiment whose devlog or step-log
    entry holds its line (the entry of that file starting last at or before it); the
    others stay unplaced (``experiment`` None).

    A table row of a summary is no entry: the lines under a table belong to no row.
    """
    if primary is None or primary.kind not in _ENTRY_LAYOUTS:
        return options
    starts: dict[str, list[tuple[int, int]]] = {}
    for experiment in primary.experiments:
        for ref in experiment.sources:
            if ref.line > 0:
                starts.setdefault(ref.path, []).append((ref.line, experiment.number))
    placed: list[DeclinedOption] = []
    for option in options:
        entries = sorted(starts.get(option.source.path, ()))
        at = bisect.bisect_right(entries, (option.source.line, float("inf"))) - 1
        placed.append(attrs.evolve(option, experiment=entries[at][1]) if at >= 0 else option)
    return placed


def _carry_floors(file: TextFile, drafts: list[Draft], warnings: list[str]) -> None:
    """Give each of ``drafts`` that was read from the loose result ``file`` (a
    ``results.md`` outside the experiment folders, read as a note, a devlog or a table)
    the rows of ``file`` that state a roofline floor, as a folder's result gives them.

    Where one experiment was read from the file, the file is its result and all its rows
    are its own. Where several were (the entries of a devlog, the rows of a table), a row
    belongs to the experiment whose lines hold it (:func:`_owners`), so the latest
    experiment's floor is never an earlier one's row; a row in no experiment's lines (the
    text around the entries) cannot be told apart and belongs to none.

    A share the floor reader cannot read (``1.234,5``, a share of 0) is named in the one
    experiment's warnings, or, where several share the file, in ``warnings``, the log's.
    """
    readers = [d for d in drafts if any(ref.path == file.path for ref in d.sources)]
    if not readers:
        return
    said: list[str] = []
    floors = result_floors(file, warnings=said)
    if len(readers) == 1:
        readers[0].result_floors.setdefault(file.path, floors)
        readers[0].warnings.extend(said)
        return
    warnings.extend(said)
    owners = _owners(file.path, [row.source.line for row in floors], readers)
    owned: list[list[FloorRow]] = [[] for _ in readers]
    for row in floors:
        owner = owners.get(row.source.line)
        if owner is not None:
            owned[owner].append(row)
    for draft, rows in zip(readers, owned, strict=True):
        draft.result_floors.setdefault(file.path, tuple(rows))


def _owners(path: str, lines: list[int], drafts: list[Draft]) -> dict[int, int]:
    """The index in ``drafts`` of the draft whose lines of ``path`` hold each of ``lines``:
    its own table row, or the narrowest entry or section that holds it (a row of a section
    attached to a table row is that row's experiment's). A line no draft holds is left out.

    Each span looks only at the lines it holds (found by bisection), so a table of
    thousands of rows, each an experiment, is not read row by row for every experiment.
    """
    ordered = sorted(set(lines))
    best: dict[int, tuple[int, int]] = {}  # line -> (span width, draft index)
    for index, draft in enumerate(drafts):
        for span_path, first, last in draft.spans:
            if span_path != path:
                continue
            held = ordered[bisect.bisect_left(ordered, first) : bisect.bisect_right(ordered, last)]
            for line in held:
                candidate = (last - first, index)
                if line not in best or candidate < best[line]:
                    best[line] = candidate
    return {line: index for line, (_, index) in best.items()}


def _cut(series: Series, until: int | None, cutoff_date: str | None, primary: bool) -> Series:
    if until is None:
        return series
    if primary:
        kept = tuple(e for e in series.experiments if e.number < until)
    elif cutoff_date:
        kept = tuple(e for e in series.experiments if e.date and e.date[:10] < cutoff_date[:10])
    else:
        kept = ()
    return Series(name=series.name, kind=series.kind, experiments=kept)


def _standing(
    facts: list[Fact], drafts: list[Draft], series: list[Series], lessons: list[Fact], until: int
) -> list[Fact]:
    """The ``facts`` that stood before experiment ``until``: those in the lines of an
    experiment still in ``series`` (already cut), and those on a lesson that cites an
    experiment before ``until`` (``- [exp 5] ...``). A note in a later entry is cut with it;
    a note in no entry (a loose file, the text around a devlog's entries, a lesson citing no
    experiment) cannot be dated against the experiments and does not count."""
    standing = {ref for item in series for e in item.experiments for ref in e.sources}
    spans: dict[str, list[tuple[int, int, SourceRef]]] = {}
    for draft in drafts:
        if draft.sources:
            for path, first, last in draft.spans:
                spans.setdefault(path, []).append((first, last, draft.sources[0]))
    cited = {lesson.source: lesson_experiment(lesson) for lesson in lessons}
    kept = []
    for fact in facts:
        line = fact.source.line
        holders = [
            (last - first, entry)
            for first, last, entry in spans.get(fact.source.path, ())
            if first <= line <= last
        ]
        if holders:
            # The narrowest range is the fact's own entry (a row inside a table note's section).
            if min(holders, key=lambda h: h[0])[1] in standing:
                kept.append(fact)
            continue
        number = cited.get(fact.source)
        if number is not None and number < until:
            kept.append(fact)
    return kept


def _before(draft: Draft, until: int) -> bool:
    """Whether ``draft`` may be an experiment before ``until`` (an unnumbered one may)."""
    return draft.number is None or draft.number < until


_REPEATS_NAMED = 20


def _used_from_repeat(merged: Draft, line: int, path: str) -> str:
    """What the experiment ``merged`` (every source of it absorbed) took from the repeated
    row at ``path``:``line``, as the end of the Not read line that names the row: the
    values it gave (a dropped or failing verdict of a later row wins, a value the first
    row left empty is filled), or that only the first row's values were read."""
    fields = [field for field, ref in merged.refs.items() if ref.path == path and ref.line == line]
    if not fields:
        return "only the first row's values were read"
    shown = []
    for field in fields:
        value = getattr(merged, field, None)
        word = getattr(value, "value", value)
        shown.append(f"{field} {word}" if field in _VERDICT_FIELDS and word else field)
    verb = "was" if len(shown) == 1 else "were"
    return f"its {and_list(shown)} {verb} used; its other values were not read"


# Values of a repeated row named with the value used: a verdict read from the later row
# changes what the experiment is taken to be (a kept change read as dropped).
_VERDICT_FIELDS = frozenset({"status", "correctness"})


def _repeated_rows(drafts: list[Draft]) -> list[tuple[str, str]]:
    """Rows of one file that give the same experiment twice, each named with what was used
    of it. Called once the drafts are assembled (each experiment's first draft holding every
    source of it), so that what a later row gave (a dropped verdict, which wins; a value
    the first row left empty) is named."""
    first: dict[tuple[str, str, str], int] = {}
    merged: dict[tuple[str, str], Draft] = {}
    found = []
    # A file of thousands of repeated rows is named with its first few, not row by row.
    per_file: dict[str, int] = {}
    for draft in drafts:
        merged.setdefault((draft.scope, draft.key), draft)
        if not draft.table_row or not draft.sources:
            continue
        ref = draft.sources[0]
        if ref.line is None:
            continue
        key = (draft.scope, draft.key, ref.path)
        if key not in first:
            first[key] = ref.line
        elif first[key] != ref.line:
            per_file[ref.path] = per_file.get(ref.path, 0) + 1
            if per_file[ref.path] > _REPEATS_NAMED:
                continue
            used = _used_from_repeat(merged[draft.scope, draft.key], ref.line, ref.path)
            found.append(
                (ref.path, f"line {ref.line} repeats {draft.label} of line {first[key]}: {used}")
            )
    for path, count in per_file.items():
        if count > _REPEATS_NAMED:
            found.append(
                (
                    path,
                    f"{count - _REPEATS_NAMED} more rows repeat an experiment of an earlier "
                    "row: their values were read only where the first row left one "
                    "empty or they say the change was dropped or failed",
                )
            )
    return found


def read_log(
    path: str | os.PathLike[str],
    *,
    until: int | None = None,
    catalog: Catalog | Iterable[EntryLike] | None = None,
    limits: ReadLimits | None = None,
) -> ExperimentLog:
    """Read the optimization log under ``path`` into an :class:`ExperimentLog`.

    The layout is detected from what is there: the seed layout (CLAUDE.md,
    experiments/summary.md, exp_N/ folders), devlogs with dated ACCEPTED/REVERTED entries,
    numbered step logs, per-experiment folders, single-experiment notes, JSONL/TSV/JSON
    histories — in ``path`` itself or anywhere below (a repository root, ``docs/``,
    ``logs/``). Nothing read is imported or executed.

    Parameters
    ----------
    path : str or path-like
        The log directory.
    until : int, optional
        Read the directory as it stood before experiment ``until``: only experiments
        numbered below it are kept (folders ``exp_N`` with N >= until are not read), and
        the profiling notes of the experiments kept (or of lessons citing them); a note
        that sits in no experiment cannot be dated and is left out. An
        ``until`` past every experiment cuts nothing: the log reads as without it (its
        ``until`` is then None). Keyword-only, like the parameters below.
    catalog : Catalog, optional
        The catalog whose keywords tag experiments (any iterable of entries with ``id``,
        ``name`` and ``keywords``); the built-in one when None. When the built-in one
        cannot be loaded, experiments keep only the tags their records name and the
        reason is in ``warnings``.
    limits : ReadLimits, optional
        Bounds on bytes per file, entries walked and depth; ``ReadLimits()`` (2 MiB per
        file, 20000 entries, depth 8) when None.

    Returns
    -------
    ExperimentLog
        Never raises on file contents: unreadable files are listed in ``unread``.

    Raises
    ------
    InputError
        When ``path`` does not exist or is not a directory, holds several experiment logs
        (:func:`~kernelopt.experiments.readers.seed.separate_logs`: exp_N folders under two
        parents that number the same experiments), ``until`` is negative, or an argument
        has the wrong type.
    """
    check_path(path, "path")
    if limits is not None:
        check_instance(limits, ReadLimits, "limits as a ReadLimits", "limits")
    root = Path(path)
    if not root.exists():
        raise InputError(expected("an existing log directory", str(path), where="path"))
    if not root.is_dir():
        raise InputError(
            expected("a directory holding an experiment log", f"the file {path}", where="path")
        )
    if until is not None and (isinstance(until, bool) or not isinstance(until, int) or until < 0):
        raise InputError(expected("until as an experiment number >= 0", repr(until), where="until"))
    tagger, warning = default_tagger(catalog)
    reading = _Reading(root, limits or ReadLimits(), tagger)
    reading.run(until)
    ordered = choose_primary(assemble(reading.drafts, tagger))
    # After assembly: each experiment's first draft then holds what its repeated rows gave.
    reading.problems += _repeated_rows(reading.drafts)
    # A trace of calls is no record of attempts: with nothing else, there is no primary.
    primary = ordered[0] if ordered and ordered[0].kind not in NOT_ATTEMPTS else None
    if (
        until is not None
        and not reading.cut_folders
        and not any(e.number >= until for e in (primary.experiments if primary else ()))
    ):
        # Nothing stood at or after experiment ``until``: the directory as it stood before
        # it is the directory as it is, other histories and loose notes included.
        until = None
    cutoff = None
    if primary is not None and until is not None:
        cut_at = next((e for e in primary.experiments if e.number >= until), None)
        cutoff = cut_at.date if cut_at is not None else None
    series = [_cut(s, until, cutoff, s is primary) for s in ordered]
    experiments = series[0].experiments if primary is not None else ()
    recommendations = [r for e in experiments for r in e.recommendations]
    if until is None or not experiments:
        recommendations += reading.notes
    # A profile that names the experiment it followed stood before ``until`` when that
    # experiment did; one that names none cannot be dated, as a loose note cannot.
    recommendations += [
        r
        for r in reading.profile_advice
        if until is None or not experiments or (r.experiment is not None and r.experiment < until)
    ]
    # A loose note is placed by the devlog entries as written, the cut ones too: a line of
    # an entry after the cut is no line of the entry before it. Under ``until``, one that
    # cannot be placed may have been written after the cut, as its recommendations may.
    declined = list(reading.declined_in_folders)
    declined += _placed(reading.declined_loose, primary)
    if until is not None and experiments:
        declined = [o for o in declined if o.experiment is not None and o.experiment < until]
    declined.sort(key=lambda option: option.source)
    lessons = [f for f in reading.lessons if until is None or (lesson_experiment(f) or 0) < until]
    profiling = list(reading.profile.facts) if reading.profile is not None else []
    # An experiment's own profile.md may be the log's profile too: each line cited once.
    profiling = list(dict.fromkeys([*profiling, *(f for e in experiments for f in e.profiling)]))
    notes = (
        reading.profiling
        if until is None
        else _standing(reading.profiling, reading.drafts, series, reading.lessons, until)
    )
    profiling += [f for f in notes if f not in profiling]
    unread = list(reading.files.unread) + [Unread(path=p, reason=r) for p, r in reading.problems]
    layouts = sorted(reading.layouts)
    warnings = [warning] if warning else []
    warnings += reading.warnings
    warnings += [
        w for d in reading.drafts if until is None or _before(d, until) for w in d.warnings
    ]
    return ExperimentLog(
        root=str(root),
        layouts=tuple(layouts),
        experiments=experiments,
        series=tuple(series),
        rules=tuple(reading.rules),
        project=tuple(reading.project),
        kernel_path=reading.kernel_path,
        baseline_path=reading.baseline_path,
        lessons=tuple(lessons),
        profile=reading.profile,
        workload_profile=reading.workload,
        kernels=tuple(reading.kernels),
        recommendations=tuple(recommendations),
        declined=tuple(declined),
        profiling=tuple(profiling[:400]),
        unread=tuple(unread),
        warnings=tuple(dict.fromkeys(warnings)),
        until=until,
    )
