"""The seed layout: ``experiments/summary.md`` and ``experiments/exp_N/`` folders.

Each experiment folder (``exp_N``, ``exp-N``, ``step_N``, ``NN-slug``) contributes one
numbered draft: ``result.md`` (parsed exactly by
:func:`kernelopt.experiments.canonical.parse_result` when kernelopt wrote it, tolerantly
otherwise), ``plan.md``, ``hypothesis.md``, ``verifier.md``, and the kernel sources
snapshotted there, as full sources or as unified diffs (``.diff``, ``.patch``) against the
kernel the experiment started from. The rows of a result that state a roofline floor are
read with it (:func:`~kernelopt.experiments.readers.floors.result_floors`) and carried on
the experiment as :attr:`~kernelopt.experiments.Experiment.floors`. A result's own A/B
verdict (the first word of its ``## Verdict``, FAST, SLOW, SAME or UNCLEAR, or of a
hand-written ``Verdict:`` line, and the speedup it states:
:func:`~kernelopt.experiments.canonical.ab_verdict`) is carried as
:attr:`~kernelopt.experiments.Experiment.verdict` and ``verdict_speedup``. Summary tables are
read by :mod:`~kernelopt.experiments.readers.tables`.
"""

from __future__ import annotations

import re

from kernelopt._errors import FormatError, KernelOptError, expected
from kernelopt._words import and_list
from kernelopt.experiments.canonical import ab_verdict, measurement_rows, parse_result
from kernelopt.experiments.diffs import parse_diff
from kernelopt.experiments.log import (
    ABVerdict,
    Fact,
    KernelSource,
    MetricKind,
    Point,
    ProfileFacts,
    SourceRef,
)
from kernelopt.experiments.readers._draft import Draft
from kernelopt.experiments.readers._files import SNAPSHOT_SUFFIXES, LogFiles, TextFile, suffix_of
from kernelopt.experiments.readers._kinds import is_plan_output
from kernelopt.experiments.readers._markdown import code_mask, fields, headings, strip_md
from kernelopt.experiments.readers._metrics import prose_metrics
from kernelopt.experiments.readers._values import (
    MONTH_DAY,
    NOT_A_YEAR,
    RUN_TOGETHER_DATE,
    UNDERSCORED_DATE,
    knob_name,
    status_of,
)
from kernelopt.experiments.readers.context import read_profile
from kernelopt.experiments.readers.documents import (
    describe,
    profile_recommendations,
    recommendations_in,
)
from kernelopt.experiments.readers.floors import result_floors
from kernelopt.experiments.readers.kernels import language_of
from kernelopt.experiments.records import ResultRecord, ResultRow

__all__ = [
    "experiment_folders",
    "folder_clashes",
    "folder_number",
    "misnamed_folders",
    "read_folder",
    "separate_logs",
]

_EXP_NAME = r"^(?:exp|experiment|step|iter|iteration|run|trial)"
_EXP_WORD = rf"{_EXP_NAME}[-_ ]?"
# A number followed by a month and a day ("exp_2026-05-26", "exp_2026-05-26-tiles"), or a
# year of four digits with its month and day after underscores ("exp_2026_05_26") or run
# into it ("exp_20260526"), is a date: it numbers no experiment, as a date after "exp" in
# a heading numbers none. "exp_7_tiles" and "exp_7_2" are experiment 7.
_EXP_DIR = re.compile(
    rf"{_EXP_WORD}(?!{UNDERSCORED_DATE})(\d{{1,5}}){NOT_A_YEAR}(?:[-_ ].*)?$", re.IGNORECASE
)
# The name of such a dated folder, told apart from other misnamed ones.
_DATED_EXP_DIR = re.compile(
    rf"{_EXP_WORD}(?:\d{{1,5}}{MONTH_DAY}|{UNDERSCORED_DATE}|{RUN_TOGETHER_DATE})", re.IGNORECASE
)
_NUM_DIR = re.compile(r"^(\d{1,5})[-_][A-Za-z].*$")
# A name that starts like an experiment folder's but gives no number the readers take
# (``exp_1a``, ``exp_-1``, ``exp_9.bak``, ``exp_``, ``exp_2026-05-26``, ``exp_20260526``).
# Other runs of six digits and more are not named: they are no number the readers take,
# and no date either.
_ALMOST_EXP_DIR = re.compile(
    rf"{_EXP_NAME}(?:[-_ ]?[-+]?\d(?!\d{{5}})|[-_ ]?{RUN_TOGETHER_DATE}|[-_ ]+$)",
    re.IGNORECASE,
)
_FILE_ORDER = ("result", "results", "hypothesis", "plan", "verifier", "verify", "notes")


def folder_number(name: str) -> int | None:
    """The experiment number a folder name gives (``exp_7``, ``step-007``, ``12-slug``), or
    None when the name is no experiment folder's (``exp_2026-05-26``, ``exp_2026_05_26``
    and ``exp_20260526`` are a date's)."""
    match = _EXP_DIR.match(name) or _NUM_DIR.match(name)
    return int(match.group(1)) if match else None


def experiment_folders(files: LogFiles) -> dict[str, int]:
    """Map each experiment folder (relative path) to its number, from the paths walked: the
    innermost folder of each path whose name :func:`folder_number` reads."""
    folders: dict[str, int] = {}
    for path in files.paths:
        parts = path.split("/")[:-1]
        for depth in range(len(parts) - 1, -1, -1):
            number = folder_number(parts[depth])
            if number is not None:
                folders.setdefault("/".join(parts[: depth + 1]), number)
                break
    return folders


def separate_logs(folders: dict[str, int]) -> list[str]:
    """The roots of the separate experiment logs a directory holds, or ``[]`` for one log.

    Experiment folders under two or more parent folders (``softmax/experiments/exp_1/`` and
    ``gemm/experiments/exp_1/``) that number the same experiment are two efforts, not one:
    read together, their experiments would merge number by number into a history that
    never happened. Folders of one series split over parents with numbers of their own
    (``experiments/exp_1/``…``exp_5/`` and ``experiments/archive/exp_6/``…) are one log.

    Parameters
    ----------
    folders : dict of str to int
        Each experiment folder and its number (:func:`experiment_folders`).

    Returns
    -------
    list of str
        Each log's root (the folder holding its ``experiments/``, or the experiment
        folders' parent where it is named otherwise), in path order; empty where no
        number is given by folders under two parents.
    """
    parents: dict[str, set[int]] = {}
    for folder, number in folders.items():
        parent = folder.rpartition("/")[0]
        parents.setdefault(parent, set()).add(number)
    numbered_twice = any(a < b and parents[a] & parents[b] for a in parents for b in parents)
    if len(parents) < 2 or not numbered_twice:
        return []
    roots = set()
    for parent in parents:
        head, _, name = parent.rpartition("/")
        roots.add(head if name.lower() == "experiments" else parent)
    return sorted(root or "." for root in roots)


def misnamed_folders(files: LogFiles) -> list[tuple[str, str]]:
    """Folders holding log files whose names start like an experiment folder's but give
    no experiment number (``exp_1a/``, or a date: ``exp_2026-05-26/``, ``exp_2026_05_26/``,
    ``exp_20260526/``), each with what it should be named.

    Their files are still read, as loose notes; what they record is not read as the
    experiment their name seems to give, which the user should know.

    Parameters
    ----------
    files : LogFiles
        The files walked.

    Returns
    -------
    list of (str, str)
        Each such folder (relative path) and the reason, in path order.
    """
    found: dict[str, str] = {}
    for path in files.paths:
        parts = path.split("/")[:-1]
        for depth, name in enumerate(parts):
            if _ALMOST_EXP_DIR.match(name) and folder_number(name) is None:
                found.setdefault("/".join(parts[: depth + 1]), _misnamed_reason(name))
    return sorted(found.items())


def _misnamed_reason(name: str) -> str:
    """Why the folder ``name``, named almost like an experiment's, is read as none."""
    dated = " (a date numbers no experiment)" if _DATED_EXP_DIR.match(name) else ""
    return (
        expected("a folder named exp_N (N a number of up to five digits)", name)
        + f"{dated}; not read as an experiment"
    )


def folder_clashes(folders: dict[str, int], until: int | None = None) -> list[str]:
    """A warning for each experiment number that two or more folders give.

    ``exp_7/`` and ``exp_007/`` are read as one experiment, the first folder's values
    winning where both give one: the user should know.

    Parameters
    ----------
    folders : dict of str to int
        Each experiment folder and its number (:func:`experiment_folders`).
    until : int, optional
        Folders numbered from ``until`` on are not read, and not reported.

    Returns
    -------
    list of str
        One message per shared number, naming its folders, in number order.
    """
    by_number: dict[int, list[str]] = {}
    for folder, number in folders.items():
        if until is None or number < until:
            by_number.setdefault(number, []).append(folder)
    warnings = []
    for number, names in sorted(by_number.items()):
        if len(names) > 1:
            names.sort()
            listed = and_list([f"{name}/" for name in names])
            every = "both" if len(names) == 2 else "all"
            warnings.append(
                f"exp {number}: the folders {listed} {every} hold experiment {number}; they "
                f"were read as one experiment, {names[0]}/ first (its values win where two "
                "give one, unless the other says the change was dropped or failed)"
            )
    return warnings


def _from_record(
    draft: Draft, record: ResultRecord, file: TextFile, refused: list[FormatError]
) -> None:
    def ref(field: str) -> SourceRef:
        # Each field where it is written: its "- Field:" line (the title's is line 1).
        return SourceRef(path=file.path, line=_line_of(file, f"- {field}:"))

    draft.put("description", record.title, SourceRef(path=file.path, line=1))
    draft.put("status", record.status, ref("Status"))
    draft.status_written = True
    draft.put_correctness(record.correctness, record.correctness_detail, ref("Correctness"))
    draft.put("date", record.date, ref("Date"))
    draft.put("kernel", record.kernel, ref("Kernel"))
    draft.put("gpu", record.gpu, ref("GPU"))
    if record.verdict is not None:
        # write_experiment's compare verdict: the experiment's own A/B, which diagnose
        # weighs against a best timed in another run.
        read = ab_verdict(record.verdict)
        if read is not None:
            _put_verdict(draft, read, SourceRef(path=file.path, line=_verdict_line(file)))
    _from_rows(draft, record.rows, file, refused)
    for tag in record.tags or ():
        if tag not in draft.tags:
            draft.tags.append(tag)
    # "- Tags: none" declares that the experiment tried no catalog idea; a result.md
    # without a Tags line declares nothing (its tags are found in its words).
    if record.tags is not None:
        draft.tags_declared = True
    for key, value in record.knobs.items():
        draft.knobs.setdefault(knob_name(key), value)
    draft.text_parts.append(record.title)
    for name, measured in prose_metrics(record.notes, file.path, draft.warnings).items():
        draft.metrics.setdefault(name, measured)
    # A "Next steps:" list in the notes is advice for the experiments after this one.
    notes_line = _line_of(file, "## Notes")
    if notes_line > 1:
        mask = code_mask(file.lines)
        draft.recommendations.extend(
            recommendations_in(
                file, notes_line, len(file.lines), headings(file.lines, mask), mask, offset=1
            )
        )


def _put_verdict(draft: Draft, read: tuple[ABVerdict, float | None], ref: SourceRef) -> None:
    """Give ``draft`` the A/B verdict ``read`` and its speedup, read at ``ref``, unless it
    holds one already (first reader wins); the speedup only with its own verdict."""
    verdict, speedup = read
    draft.put("verdict", verdict, ref)
    if draft.verdict is verdict and draft.refs.get("verdict") == ref:
        draft.put("verdict_speedup", speedup, ref)


def _verdict_line(file: TextFile) -> int:
    """The line of a canonical result's verdict: the first non-blank line under its
    ``## Verdict`` heading (the heading's own line where none follows)."""
    heading = _line_of(file, "## Verdict")
    return next(
        (
            number
            for number in range(heading + 1, len(file.lines) + 1)
            if file.lines[number - 1].strip()
        ),
        heading,
    )


# A heading that gives a verdict, on it or under it: "## Verdict", "### Verdict: FAST".
_VERDICT_HEADING = re.compile(r"^verdict\b\s*:?\s*(.*)$", re.IGNORECASE)
# Lines under such a heading looked at for its first words: a blank line or two may come first.
_VERDICT_BODY_LINES = 3


def _hand_written_verdict(draft: Draft, file: TextFile) -> None:
    """Read the A/B verdict of a hand-written result: a ``Verdict: FAST`` field, or a
    ``Verdict`` heading with the verdict on it or on its first line, the first in the file
    that opens with a verdict word in capitals (``Verdict: Promote`` states none)."""
    mask = code_mask(file.lines)
    stated: list[tuple[int, str]] = []
    field = fields(file.lines, 1, None, mask).get("verdict")
    if field is not None:
        stated.append((field[1], field[0]))
    for head in headings(file.lines, mask):
        match = _VERDICT_HEADING.match(strip_md(head.title))
        if match is None:
            continue
        if match.group(1):
            stated.append((head.line, match.group(1)))
            continue
        last = min(head.line + _VERDICT_BODY_LINES, len(file.lines))
        body = [n for n in range(head.line + 1, last + 1) if file.lines[n - 1].strip()]
        if body and not mask[body[0] - 1]:
            stated.append((body[0], file.lines[body[0] - 1]))
    for line, text in sorted(stated):
        read = ab_verdict(text)
        if read is not None:
            _put_verdict(draft, read, SourceRef(path=file.path, line=line))
            return


def _from_rows(
    draft: Draft, rows: tuple[ResultRow, ...], file: TextFile, refused: list[FormatError]
) -> None:
    """The headline (first row) and points of a canonical Measurements table, whose
    ``refused`` rows were left out: each is named in the warnings, and the rows read keep
    their own lines."""
    first = _line_of(file, "## Measurements") + 3
    skipped: set[int | None] = set()
    for error in refused:
        skipped.add(error.line)
        draft.warnings.append(f"{error}; the row was not read")
    lines = []
    line = first
    for _ in rows:
        while line in skipped:
            line += 1
        lines.append(line)
        line += 1
    # The headline is the first row as written: refused, it is not replaced by the next
    # row's time, which is another point's or another implementation's.
    if rows and first not in skipped:
        head, row_ref = rows[0], SourceRef(path=file.path, line=first)
        draft.put("latency", head.median, row_ref)
        draft.put("unit", head.unit, row_ref)
        draft.put("speedup", head.speedup, row_ref)
        draft.put("headline_point", head.point, row_ref)
    for row, number in zip(rows, lines, strict=True):
        row_ref = SourceRef(path=file.path, line=number)
        draft.points.append(
            Point(
                name=f"{row.point} {row.impl}",
                value=row.median,
                unit=row.unit,
                kind=MetricKind.LATENCY,
                source=row_ref,
            )
        )
        # A row kernelopt.bench timed on the device (mode cold, hot or graph: CUDA events
        # around each call) is per-kernel timing; a "cpu" row is the host clock around
        # an interpreter, which times no kernel.
        if row.mode != "cpu" and len(draft.profiling) < 8:
            draft.profiling.append(
                Fact(
                    text=f"{row.point} {row.impl}: {row.median:g} {row.unit} "
                    f"(kernelopt.bench, {row.mode})",
                    source=row_ref,
                )
            )


def _from_measurements(
    draft: Draft, file: TextFile, error: KernelOptError
) -> tuple[ResultRow, ...]:
    """Read the canonical Measurements table of a result.md that ``error`` says is no
    longer canonical as a whole (a section or a field edited by hand): its times would
    otherwise be lost to a hand-written table's reading, which takes one column per
    table. The rows read are returned (empty where the file has no such table)."""
    refused: list[FormatError] = []
    try:
        rows = measurement_rows(file.text, path=file.path, refused=refused, warnings=draft.warnings)
    except KernelOptError:
        # A row of the canonical table with a cell too many or too few: no row of it is
        # read as written (named below as not read).
        rows, refused = (), []
    reason = getattr(error, "message", str(error))
    line = getattr(error, "line", None)
    at = f"line {line}: " if line else ""
    if not rows and not refused:
        if getattr(error, "section", None) == "Measurements":
            # Its table edited out of the canonical columns (moved, renamed or added
            # to): its rows, read by position, would be misread, and the hand-written
            # reading may find no time in them; the user should know why.
            draft.warnings.append(
                f"{file.path}: not in the canonical layout ({at}{reason}); its "
                "Measurements table was not read as written, the file was read as a "
                "hand-written result"
            )
        return ()
    draft.warnings.append(
        f"{file.path}: not in the canonical layout ({at}{reason}); its Measurements table "
        "was read as written, the rest as a hand-written result"
    )
    _from_rows(draft, rows, file, refused)
    return rows


def _check_heading(draft: Draft, path: str, heading: int, number: int) -> None:
    """Warn when a result's heading numbers another experiment than its folder does."""
    if heading != number:
        # A result copied or moved from another experiment's folder: the folder numbers
        # it, and the user should know the two disagree.
        draft.warnings.append(
            f"{path}: its heading says 'Experiment {heading}', its folder says {number}; "
            f"read as experiment {number}"
        )


# The heading that opens a hand-written result: "# Experiment 55: ...", "## Exp 7 — ...",
# "# Step 3". A number followed by more of a word ("# Exp 5b") numbers no experiment, nor
# does a date's year ("# Exp 2026-05-26").
_HEADING_NUMBER = re.compile(
    r"^(?:experiment|exp|step|iteration|iter|run|trial)[\s_#-]*(\d{1,5})(?![\w.])" + NOT_A_YEAR,
    re.IGNORECASE,
)


def _heading_number(file: TextFile) -> int | None:
    """The experiment number the first heading of a hand-written result names, or None."""
    heads = headings(file.lines, code_mask(file.lines))
    if not heads:
        return None
    match = _HEADING_NUMBER.match(strip_md(heads[0].title))
    return int(match.group(1)) if match else None


def _line_of(file: TextFile, text: str) -> int:
    for index, line in enumerate(file.lines):
        if line.startswith(text):
            return index + 1
    return 1


def _order(path: str) -> tuple[int, str]:
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    rank = _FILE_ORDER.index(stem) if stem in _FILE_ORDER else len(_FILE_ORDER)
    return (rank, path)


def _snapshot(
    files: LogFiles, path: str, number: int, unread: list[tuple[str, str]]
) -> KernelSource | None:
    """The kernel snapshot at ``path``; None (with the reason in ``unread``) when it cannot
    be read, or is a diff that is not a well-formed unified diff."""
    file = files.read(path)
    if file is None:
        return None
    language = language_of(path)
    if language == "diff":
        # Checked here, where unreadable files are reported, so every diff the log holds
        # is one the detectors can replay.
        try:
            parse_diff(file.text, path=path)
        except FormatError as error:
            where = f"line {error.line}: " if error.line else ""
            unread.append((path, f"not a unified diff ({where}{error.message}); not read"))
            return None
    return KernelSource(path=path, text=file.text, language=language, experiment=number)


def _read_result(draft: Draft, file: TextFile, number: int) -> None:
    """Read the result file ``file`` of experiment ``number`` into ``draft``: exactly where
    kernelopt wrote it, else its canonical Measurements table as written and the rest
    tolerantly."""
    path = file.path
    # A row of bad values (p20 above p80, a median at zero) is left out and named, as the
    # readers do with any value they cannot take: the rest of the file, its other rows
    # included, is still the record kernelopt wrote.
    refused: list[FormatError] = []
    try:
        record = parse_result(file.text, path=path, refused=refused, warnings=draft.warnings)
    except KernelOptError as error:
        rows = _from_measurements(draft, file, error)  # then read tolerantly below
        draft.result_floors.setdefault(path, result_floors(file, rows, warnings=draft.warnings))
    else:
        _check_heading(draft, path, record.experiment, number)
        _from_record(draft, record, file, refused)
        draft.result_floors.setdefault(
            path, result_floors(file, record.rows, warnings=draft.warnings)
        )
        return
    heading = _heading_number(file)
    if heading is not None:
        _check_heading(draft, path, heading, number)
    describe(file, draft, recommendation_offset=1)
    _hand_written_verdict(draft, file)


def read_folder(
    files: LogFiles,
    folder: str,
    number: int,
    *,
    unread: list[tuple[str, str]],
    kind: str = "experiment-folders",
    profiles: list[ProfileFacts] | None = None,
) -> tuple[Draft, list[KernelSource]]:
    """Read one experiment folder into a numbered draft and its kernel snapshots (full
    sources and diffs); malformed diffs are left out and reported in ``unread``. A
    ``profile.md`` in it is the profile of the experiment's kernel: its lines and metrics
    are the experiment's profiling data, and it is appended to ``profiles`` when given."""
    name = folder.rsplit("/", 1)[-1]
    draft = Draft(
        scope="numbered", key=str(number), kind=kind, number=number, label=name, order=("", number)
    )
    kernels: list[KernelSource] = []
    results_read = 0
    for path in sorted(files.under(folder), key=_order):
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
        suffix = suffix_of(path)
        if suffix in SNAPSHOT_SUFFIXES:
            snapshot = _snapshot(files, path, number, unread)
            if snapshot is not None:
                kernels.append(snapshot)
                draft.kernel_files.append(path)
            continue
        if suffix not in {".md", ".markdown"}:
            continue
        file = files.read(path)
        if file is None:
            continue
        draft.sources.append(SourceRef(path=path, line=1))
        if is_plan_output(file):
            # A diagnosis kept as the experiment's plan.md (``--write-plan``) lists every
            # remedy it found for the log: none is what this experiment changed.
            continue
        if stem in {"result", "results"}:
            if not results_read:
                _read_result(draft, file, number)
            else:
                # A second result of the experiment (results.md beside result.md, a
                # rerun): another source of its time and fate, merged as one so that a
                # time or an outcome it says otherwise is named, and a fate that drops
                # the change is used, as with a summary row and a result.
                second = Draft(scope=draft.scope, key=draft.key, kind=kind, number=number)
                _read_result(second, file, number)
                draft.warnings.extend(second.warnings)
                second.warnings.clear()
                draft.absorb(second)
            results_read += 1
            draft.own_result = True
        elif stem in {"plan", "hypothesis", "notes"}:
            # A plan's items are for this experiment and the ones after it.
            describe(
                file,
                draft,
                recommendation_offset=0 if stem == "plan" else 1,
                prose_outcome=stem == "notes",
            )
        elif stem == "profile":
            profile = read_profile(file, draft.warnings)
            draft.profiling.extend(f for f in profile.facts[:8] if f not in draft.profiling)
            for name, value in profile.metrics.items():
                draft.metrics.setdefault(name, value)
            # Its Recommendation(s) and next steps are for the experiments after this one.
            draft.recommendations.extend(profile_recommendations(file, profile.opportunities))
            if profiles is not None:
                profiles.append(profile)
        elif stem in {"verifier", "verify", "verification"}:
            first = next((line for line in file.lines if line.strip()), "")
            # A second source of the experiment's fate: merged as one, so that a verdict
            # that drops what result.md keeps (REFUTED) is used and named in the warnings.
            verdict = Draft(scope=draft.scope, key=draft.key, kind=kind, number=number)
            verdict.put(
                "status",
                status_of(strip_md(first), allow_baseline=False),
                SourceRef(path=path, line=1),
            )
            draft.absorb(verdict)
    return draft, kernels
