"""The canonical markdown kernelopt writes into an experiment log, and its exact parser.

Layout written (the seed layout)::

    experiments/
      summary.md          one row per experiment (canonical columns, see SUMMARY_COLUMNS)
      LESSONS.md          one bullet per lesson
      exp_N/plan.md       free text
      exp_N/result.md     render_result(record)

:func:`parse_result` reads exactly what :func:`render_result` writes
(``parse_result(render_result(r)) == r`` for every valid record). Logs written by hand are
read by the tolerant readers of :mod:`kernelopt.experiments`, which try this parser first.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path

from kernelopt._checks import ascii_digits
from kernelopt._errors import FormatError, InputError, expected
from kernelopt._fileio import (
    atomic_write_bytes,
    atomic_write_text,
    check_encodable,
    encoding_of,
    locked,
    read_text_and_encoding,
    refuse_link_loop,
)
from kernelopt._table_cells import escape_cell, share_cell, split_row
from kernelopt.experiments._validators import check_instance, check_int, check_path
from kernelopt.experiments.log import ABVerdict
from kernelopt.experiments.records import (
    MAX_EXPERIMENT,
    Correctness,
    ResultRecord,
    ResultRow,
    Status,
    _text_problem,
)

__all__ = [
    "BOUND_COLUMN",
    "MEASUREMENT_COLUMNS",
    "NO_TAGS",
    "SUMMARY_COLUMNS",
    "RepeatedRowWarning",
    "ab_verdict",
    "append_lesson",
    "append_summary",
    "check_verdict",
    "experiment_dir",
    "log_result",
    "measurement_rows",
    "parse_result",
    "render_result",
    "render_summary_row",
    "write_plan",
    "write_result",
]


class RepeatedRowWarning(UserWarning):
    """:func:`append_summary` (without ``replace=True``) wrote a row for an experiment that
    summary.md already holds a row of.

    Not refused: the row is written (a write is never lost). The readers read the two rows
    as one experiment, from the first row's values, except that a status or correctness
    verdict of either row saying the change was dropped or failed wins; ``replace=True``
    writes the row in place of the existing one.
    """


MEASUREMENT_COLUMNS = (
    "Point",
    "Impl",
    "Median",
    "P20",
    "P80",
    "Unit",
    "Floor",
    "Of floor",
    "Speedup",
    "Mode",
)
BOUND_COLUMN = "Bound"
"""The column after ``Mode`` that says which ceiling sets each row's floor (``memory`` or
``compute``): written only where a row knows it, so a table without it is canonical too."""
_BOUND_COLUMNS = (*MEASUREMENT_COLUMNS, BOUND_COLUMN)
SUMMARY_COLUMNS = (
    "Exp",
    "Date",
    "Description",
    "Latency",
    "Unit",
    "Speedup",
    "Correct",
    "Status",
    "Tags",
)
_TITLE = re.compile(r"^# Experiment (\d+): (.+)$")
_FIELD = re.compile(r"^- ([A-Za-z]+): (.*)$")
_DIGITS = re.compile(r"\d+")
# The Tags value that declares no tags (``- Tags: none``): the readers then take none,
# where a result.md without a Tags line has its tags found from its words.
NO_TAGS = "none"
_FIELD_ORDER = (
    "Status",
    "Correctness",
    "Date",
    "Kernel",
    "Baseline",
    "GPU",
    "Versions",
    "Tags",
    "Knobs",
)


def experiment_dir(root: str | Path, experiment: int) -> Path:
    """Return ``root/exp_<experiment>``, the folder of one experiment.

    Only builds the path: nothing is created, and the folder need not exist.

    Parameters
    ----------
    root : str or path-like
        The ``experiments/`` directory.
    experiment : int
        The experiment number, 0 to 99999 (the largest the readers find as ``exp_N/``);
        written without leading zeros.

    Returns
    -------
    Path
        ``Path(root) / f"exp_{experiment}"``.

    Raises
    ------
    InputError
        When ``root`` is not a str or ``os.PathLike``, or ``experiment`` is not an int
        (a bool is refused) in 0..99999.

    Examples
    --------
    >>> experiment_dir("experiments", 7).as_posix()
    'experiments/exp_7'
    """
    check_path(root, "root")
    if (
        isinstance(experiment, bool)
        or not isinstance(experiment, int)
        or not 0 <= experiment <= MAX_EXPERIMENT
    ):
        raise InputError(expected(f"an experiment number in 0..{MAX_EXPERIMENT}", repr(experiment)))
    return Path(root) / f"exp_{experiment}"


def _refuse_folder_or_loop(path: Path) -> None:
    # A folder where the file goes (``summary.md/``) would otherwise read as "no file" or
    # as "an existing file", and neither says what to fix.
    if path.is_dir():
        raise InputError(expected("a file", f"a folder at {path}"))
    # A link that leads back to itself is neither a file nor a missing one: a first
    # write, which takes no lock, would call it "an existing file".
    refuse_link_loop(path)


def _check_record(record: object) -> None:
    check_instance(record, ResultRecord, "a ResultRecord", "record")


def _check_sinks(path: object, refused: object, warnings: object) -> None:
    # Checked before the text is read: a wrong `refused` would otherwise fail only at the
    # first bad row, and a wrong `warnings` only once the whole text is read.
    if path is not None and not isinstance(path, (str, os.PathLike)):
        what = "None or a path (str or os.PathLike)"
        raise InputError(expected(what, type(path).__name__, where="path"))
    if refused is not None and not isinstance(refused, list):
        raise InputError(expected("None or a list", type(refused).__name__, where="refused"))
    if warnings is not None and not isinstance(warnings, list):
        raise InputError(expected("None or a list", type(warnings).__name__, where="warnings"))


def _check_flag(value: object, name: str) -> None:
    # A truthy non-bool (overwrite="no", read from a config file) would replace evidence.
    if not isinstance(value, bool):
        raise InputError(expected("a bool", repr(value), where=name))


def _num(value: float | None) -> str:
    # repr() is the shortest text that reads back to the same float: lossless.
    return "" if value is None else repr(float(value))


def _share(fraction: float | None) -> str:
    """The Of floor cell of a row whose floor is ``fraction`` of its median ("" without
    a floor): a percent to one decimal, or to two significant digits where one decimal
    would show a share above 0 as ``0.0%`` (a floor 0.02 % of the time), which reads as a
    floor of zero, the mark of a roofline computed wrong."""
    return "" if fraction is None else share_cell(fraction * 100)


def _pairs(mapping: dict[str, str]) -> str:
    return ", ".join(f"{key}={value}" for key, value in mapping.items())


def render_result(record: ResultRecord) -> str:
    """Render ``record`` as canonical ``result.md`` text.

    Parameters
    ----------
    record : ResultRecord
        The outcome to write.

    Returns
    -------
    str
        Markdown ending in one newline: the ``# Experiment N: title`` heading, one
        ``- Field: value`` line per non-empty field (Status, Correctness, Date, Kernel,
        Baseline, GPU, Versions, Tags, Knobs, in that order), then the ``## Measurements``
        table (with a last ``Bound`` column where a row says which ceiling sets its
        floor), ``## Verdict`` and ``## Notes`` sections when the record has them. Numbers
        are written as ``repr(float)``, so they read back exactly; a row's Of floor cell
        is its floor over its median in percent, to one decimal (``61.2%``), or to two
        significant digits where one decimal would show ``0.0%`` (``0.021%``), and empty
        without a floor. A row's floor is above zero with a finite share of its median
        (the :class:`ResultRow` refuses any other), so no cell reads as a floor of zero.

    Raises
    ------
    InputError
        When ``record`` is not a :class:`ResultRecord`.

    Examples
    --------
    >>> record = ResultRecord(experiment=3, title="BLOCK_N=64", status="KEPT", correctness="PASS")
    >>> print(render_result(record), end="")
    # Experiment 3: BLOCK_N=64
    <BLANKLINE>
    - Status: KEPT
    - Correctness: PASS
    >>> parse_result(render_result(record)) == record
    True
    """
    _check_record(record)
    lines = [f"# Experiment {record.experiment}: {record.title}", ""]
    correctness = record.correctness.value
    if record.correctness_detail:
        correctness += f" ({record.correctness_detail})"
    fields = {
        "Status": record.status.value,
        "Correctness": correctness,
        "Date": record.date,
        "Kernel": record.kernel or "",
        "Baseline": record.baseline or "",
        "GPU": record.gpu or "",
        "Versions": _pairs(record.versions),
        "Tags": NO_TAGS if record.tags == () else ", ".join(record.tags or ()),
        "Knobs": _pairs(record.knobs),
    }
    lines += [f"- {name}: {value}" for name, value in fields.items() if value]
    if record.rows:
        # The Bound column only where a row has a bound: a table without one stays as
        # every earlier result.md wrote it.
        columns = _BOUND_COLUMNS if any(row.bound for row in record.rows) else MEASUREMENT_COLUMNS
        lines += ["", "## Measurements", "| " + " | ".join(columns) + " |"]
        lines.append("|" + "---|" * len(columns))
        for row in record.rows:
            cells: tuple[str, ...] = (
                row.point,
                row.impl,
                _num(row.median),
                _num(row.p20),
                _num(row.p80),
                row.unit,
                _num(row.floor),
                _share(row.fraction_of_floor),
                _num(row.speedup),
                row.mode,
            )
            if len(columns) == len(_BOUND_COLUMNS):
                cells += (row.bound or "",)
            lines.append("| " + " | ".join(cells) + " |")
    if record.verdict:
        lines += ["", "## Verdict", record.verdict]
    if record.notes:
        # Verbatim, newlines at either end included: parse_result takes back only the
        # file's final newline.
        lines += ["", "## Notes", record.notes]
    return "\n".join(lines) + "\n"


def _tags_of(text: str) -> tuple[str, ...]:
    """The tags a Tags field's ``text`` names: none for ``none`` (:data:`NO_TAGS`, in any
    case), which declares that the experiment tried none."""
    if text.strip().lower() == NO_TAGS:
        return ()
    return tuple(tag.strip() for tag in text.split(",") if tag.strip())


def _split_pairs(text: str, path: str | None, line: int, field: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(", "))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise FormatError(
                expected("key=value pairs", repr(item)), path=path, line=line, section=field
            )
        result[key] = value
    return result


def _float(text: str, path: str | None, line: int, column: str) -> float | None:
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise FormatError(
            expected(f"a number in column {column}", repr(text)),
            path=path,
            line=line,
            section="Measurements",
        ) from None


def parse_result(
    text: str,
    *,
    path: str | Path | None = None,
    refused: list[FormatError] | None = None,
    warnings: list[str] | None = None,
) -> ResultRecord:
    """Parse canonical ``result.md`` text back into a :class:`ResultRecord`.

    Parameters
    ----------
    text : str
        Text written by :func:`render_result` (possibly edited by hand, same layout); CRLF
        or CR line endings and a leading byte-order mark read as the text without them.
    path : str or path-like, optional
        Where the text came from, named in error messages; nothing is read from it.
        Keyword-only; None (the default) names no file.
    refused : list of FormatError, optional
        Given, a Measurements row whose values a :class:`ResultRow` refuses (a number that
        does not parse, a median at or below zero, ``p20 <= median <= p80`` broken, a
        floor of 0 or one whose share of the median is not finite), or whose Of floor
        cell states a share at or below 0, NaN or infinite (``0%``, ``nan%``: the floor or
        the share was typed wrong), is left out of the record and its error appended
        here, naming its line, point and implementation; the rest of the file is still
        read. None (the default) raises it. Keyword-only.
    warnings : list of str, optional
        Given, appended to once the whole text is read (nothing where it is refused): each
        row read whose Of floor cell, edited by hand, states a share with a ``%`` sign
        above 0 that no rounding of its written digits makes the row's floor over its
        median (``90.0%`` beside a floor of 35.76 and a median of 45.6, 78.42 %). The
        record keeps no share: the row's floor over its median is read, and the warning
        says so (``exp_2/result.md:9 [Measurements]: Expected Of floor near the row's
        floor over its median, 78.42%, got '90.0%' for point 'b=32', impl 'triton'; the
        floor over median is read``). A row :func:`render_result` wrote is never named.
        None (the default) says nothing. Keyword-only.

    Returns
    -------
    ResultRecord
        The record the text describes; equal to ``r`` when the text is
        ``render_result(r)``.

    Raises
    ------
    InputError
        When ``text`` is not a str, ``path`` neither None nor a str or path-like,
        ``refused`` or ``warnings`` neither None nor a list, or a value read is one a
        :class:`ResultRecord` refuses (an experiment number past 99999, a title holding
        ``"|"``, ...).
    FormatError
        When the text is not in the canonical layout: no ``# Experiment N: title`` first
        line, an unknown field or section, a field or section given twice, a missing or
        unknown Status or Correctness, a malformed ``key=value`` list, a Measurements
        header of the canonical width in another order or other words, or a Measurements
        row whose cell count or numbers are wrong (its numbers only without ``refused``).
        The message names the line and the section.
    """
    check_instance(text, str, "result.md text as a string", "text")
    _check_sinks(path, refused, warnings)
    where = None if path is None else str(path)
    # As another editor may save it: no field holds a "\r" or starts the file with a
    # byte-order mark, so neither changes what the text says.
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    # Blanks at the end of a line (a markdown hard break, an editor's leftovers) change
    # nothing the file says: no one-line field ends in one (the records refuse them), so
    # only the notes, kept verbatim, keep theirs.
    raw_lines = text.split("\n")
    lines = [line.rstrip(" \t") for line in raw_lines]
    title = _TITLE.match(lines[0]) if lines else None
    if title is None:
        raise FormatError(
            expected("'# Experiment N: title'", repr(lines[0][:60] if lines else "")),
            path=where,
            line=1,
            section="title",
        )
    fields: dict[str, tuple[str, int]] = {}
    sections: dict[str, tuple[list[str], int]] = {}
    current: str | None = None
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith("## ") and current != "Notes":
            current = line[3:].strip()
            _refuse_second(sections, current, number, where, "section")
            sections[current] = ([], number)
            continue
        if current is not None:
            sections[current][0].append(raw_lines[number - 1] if current == "Notes" else line)
            continue
        match = _FIELD.match(line)
        if match:
            if match.group(1) not in _FIELD_ORDER:
                raise FormatError(
                    expected(f"one of the fields {', '.join(_FIELD_ORDER)}", repr(match.group(1))),
                    path=where,
                    line=number,
                    section="fields",
                )
            _refuse_second(fields, match.group(1), number, where, "field")
            fields[match.group(1)] = (match.group(2), number)
        elif line.strip():
            raise FormatError(
                expected("'- Field: value'", repr(line[:60])),
                path=where,
                line=number,
                section="fields",
            )
    unknown = set(sections) - {"Measurements", "Verdict", "Notes"}
    if unknown:
        name = sorted(unknown)[0]
        raise FormatError(
            expected("sections Measurements, Verdict, Notes", repr(name)),
            path=where,
            line=sections[name][1],
            section=name,
        )

    def field(name: str) -> tuple[str, int]:
        return fields.get(name, ("", 0))

    status_text, status_line = field("Status")
    try:
        status = Status(status_text)
    except ValueError:
        raise FormatError(
            expected("a status in " + ", ".join(s.value for s in Status), repr(status_text)),
            path=where,
            line=status_line or 1,
            section="Status",
        ) from None
    correctness_text, correctness_line = field("Correctness")
    verdict_word, _, detail = correctness_text.partition(" ")
    try:
        correctness = Correctness(verdict_word)
    except ValueError:
        raise FormatError(
            expected("PASS, FAIL or UNKNOWN", repr(correctness_text)),
            path=where,
            line=correctness_line or 1,
            section="Correctness",
        ) from None
    if detail and not (detail.startswith("(") and detail.endswith(")")):
        raise FormatError(
            expected("'PASS (detail)'", repr(correctness_text)),
            path=where,
            line=correctness_line,
            section="Correctness",
        )
    # Said only of a text read whole: one refused after its rows names none of them, and
    # a caller that then reads its Measurements table alone names each row once.
    said: list[str] = []
    rows = _parse_rows(sections.get("Measurements"), where, refused, said)
    verdict_lines = sections.get("Verdict", ([], 0))[0]
    notes_lines = sections.get("Notes", ([], 0))[0]
    versions_text, versions_line = field("Versions")
    knobs_text, knobs_line = field("Knobs")
    tags_text, _ = field("Tags")
    record = ResultRecord(
        experiment=int(title.group(1)),
        title=title.group(2),
        status=status,
        correctness=correctness,
        correctness_detail=detail[1:-1] if detail else "",
        date=field("Date")[0],
        kernel=field("Kernel")[0] or None,
        baseline=field("Baseline")[0] or None,
        gpu=field("GPU")[0] or None,
        versions=_split_pairs(versions_text, where, versions_line, "Versions"),
        tags=_tags_of(tags_text) if tags_text.strip() else None,
        knobs=_split_pairs(knobs_text, where, knobs_line, "Knobs"),
        rows=rows,
        verdict="\n".join(verdict_lines).strip("\n") or None,
        notes=_notes_text(notes_lines),
    )
    if warnings is not None:
        warnings.extend(said)
    return record


# The A/B verdict word that opens a verdict, in capitals as compare writes it, and no
# longer word ("FAST-PATH kept", "SAMEs") nor one of the prose ("Same as exp 3").
_AB_WORD = re.compile(r"^(FAST|SLOW|SAME|UNCLEAR)(?![\w-])")
# A number as compare writes a ratio or a speedup: positional, or in exponent form.
_AB_NUMBER = r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
# ``speedup 0.8367x``: the baseline's time over the experiment's, as str(Comparison) says.
_AB_SPEEDUP = re.compile(rf"\bspeedup {_AB_NUMBER}x")
# ``FAST 0.620x [0.610, 0.630]``: Comparison.summary()'s ratio (the experiment's time over
# the baseline's) and its interval; a bare ``FAST 1.19x`` does not say which ratio it is.
_AB_RATIO = re.compile(rf"^\w+ {_AB_NUMBER}x \[")


def ab_verdict(text: str) -> tuple[ABVerdict, float | None] | None:
    """The A/B verdict a ``## Verdict`` section (or a ``Verdict:`` field) states, and the
    speedup it states with it.

    :func:`kernelopt.bench.write_experiment` writes a Comparison's verdict as its ``str``:
    ``UNCLEAR 1.195x [0.842, 1.512] the baseline's time, speedup 0.8367x, same-version
    spread ±48.9%, threshold ±48.9%``. Its first word is the verdict; its ``speedup``, the
    baseline's time over the experiment's, the speedup. A verdict written as
    ``Comparison.summary()`` writes it (``FAST 0.620x [0.610, 0.630], ...``) states the
    ratio the other way round, and its inverse is the speedup.

    Parameters
    ----------
    text : str
        The section's text, or a field's value; inline markdown (``**FAST**``) is read as
        the words it marks.

    Returns
    -------
    tuple of (ABVerdict, float or None), or None
        The verdict and its speedup (None where the text states none, or an infinite one:
        ``speedup infinite``); None where the first line opens with no verdict word in
        capitals (``FAST``, ``SLOW``, ``SAME``, ``UNCLEAR``): a verdict in other words
        (``Promote``, ``vs exp 1: 151.3 -> 114.7 us``) states no A/B verdict.

    Examples
    --------
    >>> ab_verdict("UNCLEAR 1.195x [0.842, 1.512] the baseline's time, speedup 0.8367x")
    (<ABVerdict.UNCLEAR: 'UNCLEAR'>, 0.8367)
    >>> ab_verdict("FAST 0.500x [0.490, 0.510], same-version spread ±0.4%")
    (<ABVerdict.FAST: 'FAST'>, 2.0)
    >>> ab_verdict("SAME"), ab_verdict("Same as exp 3")
    ((<ABVerdict.SAME: 'SAME'>, None), None)
    """
    check_instance(text, str, "a verdict as a string", "text")
    first = next((line for line in text.splitlines() if line.strip()), "")
    clean = first.replace("**", "").replace("__", "").replace("`", "").strip()
    word = _AB_WORD.match(clean)
    if word is None:
        return None
    stated = _AB_SPEEDUP.search(clean)
    if stated is not None:
        speedup = float(stated.group(1))
    else:
        ratio = _AB_RATIO.match(clean)
        speedup = 1.0 / float(ratio.group(1)) if ratio and float(ratio.group(1)) > 0 else 0.0
    # A speedup of 0 or past a float (a ratio of 0, "speedup 1e999x") measures nothing.
    usable = 0.0 < speedup < math.inf
    return ABVerdict(word.group(1)), speedup if usable else None


def check_verdict(verdict: str | None, correctness: Correctness | str) -> None:
    """Refuse a verdict the log's readers would not read, and a FAST verdict on a version
    that failed correctness, before either is written.

    The readers take an experiment's A/B verdict from the first word of its ``## Verdict``
    section (:func:`ab_verdict`): a verdict opening with other words (``decode: FAST ...``,
    one line per point) would be written and read back as none, without a word. A kernel
    that computes the wrong function has no speed to claim.

    Parameters
    ----------
    verdict : str or None
        The verdict as it is written (``str(Comparison)`` for a comparison); None for none.
    correctness : Correctness or str
        The experiment's correctness verdict.

    Raises
    ------
    InputError
        When ``verdict`` opens with no FAST, SLOW, SAME or UNCLEAR in capitals, or is FAST
        beside a correctness of FAIL.

    Examples
    --------
    >>> check_verdict("FAST 0.620x [0.610, 0.630]", "PASS")
    >>> check_verdict("decode: FAST 0.6x", "PASS")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kernelopt._errors.InputError: verdict: Expected a verdict whose first word is FAST, ...
    """
    if verdict is None:
        return
    read = ab_verdict(verdict)
    if read is None:
        first = next((line for line in verdict.splitlines() if line.strip()), "")
        raise InputError(
            expected(
                "a verdict whose first word is FAST, SLOW, SAME or UNCLEAR, in capitals, as "
                "str(Comparison) writes it (the log reads that word; put the verdicts of "
                "other points in notes)",
                repr(first[:80]),
                where="verdict",
            )
        )
    if read[0] is ABVerdict.FAST and Correctness(correctness) is Correctness.FAIL:
        raise InputError(
            expected(
                "no FAST verdict for a version that failed correctness (a wrong kernel has no "
                "speed to claim: leave verdict out, or give correctness PASS once it passes)",
                "verdict FAST with correctness FAIL",
                where="verdict",
            )
        )


def _refuse_second(
    seen: Mapping[str, tuple[object, int]], name: str, number: int, where: str | None, kind: str
) -> None:
    """Refuse a field or section ``name`` that ``seen`` already holds: read as one, the
    later would replace the earlier (a second Measurements table pasted under the first
    would drop the first's rows), and nothing tells which of the two the writer meant."""
    if name in seen:
        raise FormatError(
            expected(
                f"one {name} {kind} (the first at line {seen[name][1]})",
                f"a second at line {number}",
            ),
            path=where,
            line=number,
            section=name,
        )


def measurement_rows(
    text: str,
    *,
    path: str | Path | None = None,
    refused: list[FormatError] | None = None,
    warnings: list[str] | None = None,
) -> tuple[ResultRow, ...]:
    """The rows of the canonical ``## Measurements`` table in ``text``, read exactly.

    For a ``result.md`` kernelopt wrote and a person then edited out of the canonical
    layout (a section of their own, a field in bold): :func:`parse_result` refuses the
    whole file, but its measurements still read as written.

    Parameters
    ----------
    text : str
        ``result.md`` text; CRLF or CR line endings and a leading byte-order mark read as
        the text without them.
    path : str or path-like, optional
        Where the text came from, named in error messages. Keyword-only.
    refused : list of FormatError, optional
        As :func:`parse_result` takes it: a row whose values are refused (an Of floor
        cell at or below 0, NaN or infinite among them) is left out and its error
        appended here. Keyword-only.
    warnings : list of str, optional
        As :func:`parse_result` takes it: each row read whose ``%`` Of floor cell its
        floor over its median contradicts is named, once the table is read. Keyword-only.

    Returns
    -------
    tuple of ResultRow
        The table's rows in order; empty when the text has no ``## Measurements`` section
        whose table has the columns of ``MEASUREMENT_COLUMNS`` (and maybe, last,
        ``BOUND_COLUMN``).

    Raises
    ------
    InputError
        When ``text`` is not a str, ``path`` neither None nor a str or path-like, or
        ``refused`` or ``warnings`` neither None nor a list.
    FormatError
        When such a table has a row whose cell count is wrong, or (without ``refused``)
        whose numbers are.
    """
    check_instance(text, str, "result.md text as a string", "text")
    _check_sinks(path, refused, warnings)
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = next((i for i, line in enumerate(lines) if line.rstrip() == "## Measurements"), None)
    if start is None:
        return ()
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    body = lines[start + 1 : end]
    header = next((line for line in body if line.strip()), "")
    if tuple(split_row(header)) not in (MEASUREMENT_COLUMNS, _BOUND_COLUMNS):
        return ()
    said: list[str] = []
    rows = _parse_rows((body, start + 1), None if path is None else str(path), refused, said)
    if warnings is not None:
        warnings.extend(said)
    return rows


def _notes_text(lines: list[str]) -> str:
    # The notes are the last section, written verbatim and followed by the file's final
    # newline: only that one newline is not theirs (a file edited without it keeps all).
    text = "\n".join(lines)
    return text[:-1] if text.endswith("\n") else text


def _parse_rows(
    section: tuple[list[str], int] | None,
    where: str | None,
    refused: list[FormatError] | None,
    warnings: list[str],
) -> tuple[ResultRow, ...]:
    """The rows of a Measurements ``section`` (its lines and its heading's line number);
    with ``refused``, a row of bad values is left out and its error put there. A wrong
    cell count is raised either way: the table is then no longer the canonical one. A row
    read whose Of floor cell its floor over its median contradicts is named in
    ``warnings``."""
    if section is None:
        return ()
    body, start = section
    columns = _columns_of(body)
    rows = []
    header_seen = False
    for offset, line in enumerate(body):
        number = start + 1 + offset
        if not line.strip():
            continue
        # Split as the tolerant readers split it (``\|`` is a pipe inside its cell), so
        # that both read the same columns of a row edited by hand.
        cells = split_row(line, len(columns))
        # Only the first row is the header: a point named "Point" is a measurement.
        if not header_seen:
            _check_header(cells, columns, line, where, number)
            header_seen = True
            if cells[0] == MEASUREMENT_COLUMNS[0]:
                continue
        if set(line.strip()) <= set("|-: "):
            continue
        if len(cells) != len(columns):
            raise FormatError(
                expected(f"{len(columns)} cells", len(cells)),
                path=where,
                line=number,
                section="Measurements",
            )
        try:
            rows.append(_row(cells, where, number, warnings))
        except FormatError as error:
            if refused is None:
                raise
            refused.append(error)
    return tuple(rows)


def _check_header(
    cells: list[str], columns: tuple[str, ...], line: str, where: str | None, number: int
) -> None:
    """Refuse a Measurements table whose first line is not its canonical header: its rows
    are read by position, so columns moved or renamed by hand (Impl before Point, P80
    before P20) would put each value in another field, or name the header as a row. A
    header of another width is left to the rows' cell count, which names the row."""
    if len(cells) == len(columns) and tuple(cells) != columns:
        raise FormatError(
            expected("the header '| " + " | ".join(columns) + " |'", repr(line.strip()[:120])),
            path=where,
            line=number,
            section="Measurements",
        )


def _columns_of(body: list[str]) -> tuple[str, ...]:
    """The columns of a Measurements table whose lines are ``body``: with the Bound column
    where its header has it, else the columns every result.md has."""
    header = next((line for line in body if line.strip()), "")
    # Most results have no Bound column: a substring test spares splitting every header.
    if "Bound" not in header:
        return MEASUREMENT_COLUMNS
    return _BOUND_COLUMNS if tuple(split_row(header)) == _BOUND_COLUMNS else MEASUREMENT_COLUMNS


def _row(cells: list[str], where: str | None, number: int, warnings: list[str]) -> ResultRow:
    """The :class:`ResultRow` of one Measurements row's ``cells``, at line ``number``; its
    Of floor cell, where its floor over its median contradicts it, named in ``warnings``."""
    point, impl, median, p20, p80, unit, floor, share, speedup, mode = cells[:10]
    bound = cells[10] if len(cells) > 10 else ""
    median_value = _float(median, where, number, "Median")
    if median_value is None:
        raise FormatError(
            expected("a number in column Median", "an empty cell"),
            path=where,
            line=number,
            section="Measurements",
        )
    try:
        row = ResultRow(
            point=point,
            impl=impl,
            median=median_value,
            p20=_float(p20, where, number, "P20"),
            p80=_float(p80, where, number, "P80"),
            unit=unit,
            floor=_float(floor, where, number, "Floor"),
            speedup=_float(speedup, where, number, "Speedup"),
            mode=mode,
            bound=bound or None,
        )
    except (InputError, ValueError, TypeError) as error:
        if isinstance(error, FormatError):  # _float's, already naming the line
            raise
        raise FormatError(str(error), path=where, line=number, section="Measurements") from None
    _check_share(share, row, where, number)
    said = _share_disagreement(share, row, where, number)
    if said is not None:
        warnings.append(said)
    return row


def _check_share(cell: str, row: ResultRow, where: str | None, number: int) -> None:
    """Refuse the Of floor ``cell`` of ``row`` (at line ``number``) where it states a
    share no row reaches: at or below 0, NaN or infinite.

    The record keeps no share (it is the row's floor over its median), so such a cell,
    edited by hand, would otherwise be dropped without a word, and the floor or the share
    was typed wrong: no one can tell which, as with a P20 above its P80. A cell that
    holds no number is left as before. ``0.0%`` beside a floor under 0.05 % of the median
    is what kernelopt wrote for such a share before it gave it two significant digits:
    that one reads as written.
    """
    try:
        share = float(cell.removesuffix("%").strip())
    except ValueError:
        return
    fraction = row.fraction_of_floor
    reachable = math.isfinite(share) and share > 0
    written_before = fraction is not None and cell == f"{fraction:.1%}"
    if reachable or written_before:
        return
    raise FormatError(
        expected(
            "Of floor as a finite share above 0",
            f"{cell!r} for point {row.point!r}, impl {row.impl!r}",
        ),
        path=where,
        line=number,
        section="Measurements",
    )


def _share_disagreement(cell: str, row: ResultRow, where: str | None, number: int) -> str | None:
    """The warning for the Of floor ``cell`` of ``row`` (at line ``number``) where it
    states a share above 0 with a ``%`` sign that the row's floor over its median
    contradicts beyond the rounding of the cell's digits; None where they agree.

    The record keeps no share, so such a cell, edited by hand, would be dropped without a
    word while the floors read floor over median. The rule is the tolerant readers' for a
    hand-written table (:meth:`FloorOverTime.allows
    <kernelopt.experiments.readers._metrics.FloorOverTime.allows>`): only a ``%`` cell
    states its scale (a bare ``7.8`` is read by the row's own numbers there, too). The
    floor and the median are written as ``repr(float)``, exact: the cell's own last digit
    is the only rounding (``78.4%`` allows 78.35 % to 78.45 %, ``0.021%`` 0.0205 % to
    0.0215 %).
    """
    # Imported here: the readers import this module.
    from kernelopt.experiments.readers._metrics import FloorOverTime, written_half_unit

    fraction = row.fraction_of_floor
    if fraction is None or "%" not in cell:
        return None
    try:
        share = float(cell.removesuffix("%").strip())
    except ValueError:
        return None
    if not (math.isfinite(share) and share > 0):
        return None  # refused or written before as 0.0% (_check_share)
    half_unit = written_half_unit(cell, share)
    measured = FloorOverTime(fraction=fraction, low=fraction, high=fraction)
    if half_unit is None or measured.allows(share, half_unit):
        return None
    at = f"line {number}" if where is None else f"{where}:{number}"
    said = expected(
        f"Of floor near the row's floor over its median, {measured.percent_range()}",
        f"{cell!r} for point {row.point!r}, impl {row.impl!r}",
    )
    return f"{at} [Measurements]: {said}; the floor over median is read"


def write_result(root: str | Path, record: ResultRecord, *, overwrite: bool = False) -> Path:
    """Write ``record`` to ``root/exp_N/result.md`` atomically and return the path.

    Parameters
    ----------
    root : path-like
        The ``experiments/`` directory.
    record : ResultRecord
        The outcome; ``record.experiment`` names the folder.
    overwrite : bool, default False
        Replace an existing result.md, in its encoding (a UTF-16 or UTF-32 file after its
        byte-order mark, or UTF-8 after one, stays so). Off by default: a logged result is
        evidence and is never overwritten by accident. Keyword-only.

    Returns
    -------
    Path
        The result.md written (``root/exp_N/result.md``); the folder is created if missing.

    Raises
    ------
    InputError
        When ``record`` is not a :class:`ResultRecord`, ``root`` not a path or
        ``overwrite`` not a bool; when the record's verdict is one :func:`check_verdict`
        refuses (one that opens with no FAST, SLOW, SAME or UNCLEAR, which the readers
        would read as no verdict, or FAST with correctness FAIL); when another folder of
        ``root`` that the readers take as the same experiment (``exp_007/`` for 7) already
        exists, whatever it holds; when
        result.md exists and ``overwrite`` is False or is a folder; or when the folder
        cannot be created or written. Nothing is written then.

    Notes
    -----
    The summary row is not written here: see :func:`append_summary`, or
    :func:`log_result` for both.
    """
    _check_record(record)
    _check_flag(overwrite, "overwrite")
    check_verdict(record.verdict, record.correctness)
    path = experiment_dir(root, record.experiment) / "result.md"
    _refuse_other_folder(path, record.experiment, where="record.experiment")
    _write_new(path, render_result(record), overwrite=overwrite)
    return path


def _refuse_other_folder(path: Path, experiment: int, *, where: str) -> None:
    """Refuse to write ``path`` (in ``exp_N/``) while another folder of its root is the
    readers' experiment ``experiment`` (``exp_007/`` for 7), whatever that folder holds.

    exp_7/ beside exp_007/ is read as one experiment, one folder's values hiding the
    other's: a plan in exp_007/ and a result in a new exp_7/ would split one experiment in
    two, and overwrite=True replaces exp_7/'s file, never another folder's.
    """
    other = _other_folder(path.parent, experiment)
    if other is not None:
        raise InputError(
            expected(
                f"no other folder holding experiment {experiment}",
                f"{other} (rename it, or write that folder's {path.name} by hand)",
                where=where,
            )
        )


def _other_folder(folder: Path, experiment: int) -> Path | None:
    """Another folder beside ``folder`` that the readers take as experiment ``experiment``
    (``exp_007/`` beside ``exp_7/``), or None."""
    from kernelopt.experiments.readers.seed import folder_number  # the readers' rule

    root = folder.parent
    if not root.is_dir():
        return None
    for child in sorted(root.iterdir()):
        if folder_number(child.name) != experiment or not child.is_dir():
            continue
        # A file system that ignores case lists exp_7/ as EXP_7/ when so created.
        same = child.name == folder.name or (folder.exists() and child.samefile(folder))
        if not same:
            return child
    return None


def write_plan(root: str | Path, experiment: int, text: str, *, overwrite: bool = False) -> Path:
    """Write free-text ``text`` to ``root/exp_N/plan.md`` atomically and return the path.

    Parameters
    ----------
    root : str or path-like
        The ``experiments/`` directory.
    experiment : int
        The experiment number N, 0 to 99999.
    text : str
        The plan, any markdown; written as given, with a final newline added when it
        has none.
    overwrite : bool, default False
        Replace an existing plan.md, in its encoding (as :func:`write_result` does).
        Keyword-only.

    Returns
    -------
    Path
        The plan.md written; the experiment's folder is created if missing.

    Raises
    ------
    InputError
        When ``text`` is not a str, holds a NUL (the readers would skip the whole file
        as binary) or a lone surrogate (no encoding holds one), or is blank (the readers
        would skip it as empty), ``root`` is not a path,
        ``experiment`` not an int in 0..99999, ``overwrite`` not a bool, another folder
        of ``root`` that the readers take as the same experiment (``exp_007/`` for 7)
        already exists, plan.md exists and ``overwrite`` is False, plan.md is a folder or
        a link loop, or the folder cannot be created or written. Nothing is written then.
    """
    check_instance(text, str, "plan text as a string", "text")
    _check_flag(overwrite, "overwrite")
    # A NUL makes the readers skip the whole plan as a binary file.
    if "\x00" in text:
        raise InputError(
            expected(
                "text without NUL characters",
                f"one at character {text.index(chr(0))}",
                where="text",
            )
        )
    # A lone surrogate has no encoding: refused here, naming the argument and counting in
    # it, not in the file the shared writer would have encoded.
    check_encodable(text, where="text")
    # A blank plan (spaces, line breaks, a byte-order mark) is skipped as an empty file.
    if not text.lstrip("\ufeff").strip():
        raise InputError(expected("plan text that is not blank", repr(text), where="text"))
    path = experiment_dir(root, experiment) / "plan.md"
    _refuse_other_folder(path, experiment, where="experiment")
    _write_new(path, text if text.endswith("\n") else text + "\n", overwrite=overwrite)
    return path


def _write_new(path: Path, text: str, *, overwrite: bool) -> None:
    """Write ``text`` to ``path`` atomically; unless ``overwrite``, only when no file is
    there, so that of two first writes started together one is written and the other
    refused, never one replacing the other."""
    _refuse_folder_or_loop(path)
    if overwrite:
        # Written in the encoding of the file it replaces, byte-order mark included, as
        # the appends keep theirs: a UTF-16 result.md saved by PowerShell stays UTF-16.
        encoding, start = encoding_of(path)
        atomic_write_text(path, start + text, encoding=encoding)
        return
    if path.exists():
        raise _exists(path)
    try:
        atomic_write_text(path, text, exclusive=True)
    except FileExistsError:
        raise _exists(path) from None


def _exists(path: Path) -> InputError:
    return InputError(
        expected(f"no existing {path} (pass overwrite=True to replace it)", "an existing file")
    )


def render_summary_row(record: ResultRecord) -> str:
    """Render the canonical ``summary.md`` table row of ``record``.

    Parameters
    ----------
    record : ResultRecord
        The experiment whose row is rendered.

    Returns
    -------
    str
        One table row without a newline, its cells in the order of ``SUMMARY_COLUMNS``:
        number, date, title, the headline row's median latency and unit, its speedup,
        correctness, status and the tags joined by ``", "``. Cells the record lacks (no
        timed row, no speedup) are empty.

    Raises
    ------
    InputError
        When ``record`` is not a :class:`ResultRecord`.

    Examples
    --------
    >>> record = ResultRecord(experiment=3, title="BLOCK_N=64", status="KEPT", correctness="PASS")
    >>> render_summary_row(record)
    '| 3 |  | BLOCK_N=64 |  |  |  | PASS | KEPT |  |'
    """
    _check_record(record)
    head = record.headline
    description = record.title.replace("|", "/")
    cells = (
        str(record.experiment),
        record.date,
        description,
        "" if head is None else _num(head.median),
        "" if head is None else head.unit,
        "" if head is None or head.speedup is None else _num(head.speedup),
        record.correctness.value,
        record.status.value,
        ", ".join(record.tags or ()),
    )
    return "| " + " | ".join(cells) + " |"


_SUMMARY_HEADER = (
    "# Experiments Summary\n\n| "
    + " | ".join(SUMMARY_COLUMNS)
    + " |\n|"
    + "---|" * len(SUMMARY_COLUMNS)
    + "\n"
)


def _with_row(text: str, record: ResultRecord, path: Path, *, replace: bool = False) -> str:
    """``text`` (a summary.md) with ``record``'s row added at the end of its table.

    The table is the last one whose header names every canonical column, in any order
    and case, beside columns of the user's own (left empty in the new row). Every other
    line is kept byte for byte, its line endings (CRLF, CR or LF) included. With ``replace``,
    the row takes the place of the rows of the same experiment in any such table, if there
    are any, keeping the first one's cells in the user's own columns.
    """
    # A byte-order mark is no part of the first line's first cell: it is put back as is.
    mark = "\ufeff" if text.startswith("\ufeff") else ""
    text = text[len(mark) :]
    ending = _line_ending(text)
    # Split at the ending's last character: a CRLF line keeps its "\r".
    lines = text.split(ending[-1])
    found = _summary_tables(lines)
    if not found:
        got, line = _no_summary_table(lines)
        raise FormatError(
            expected(f"a table with columns {' | '.join(SUMMARY_COLUMNS)} (any order)", got),
            path=path,
            line=line,
            section="summary",
        )
    _, end, names = found[-1]
    values = dict(
        zip(
            (name.lower() for name in SUMMARY_COLUMNS),
            split_row(render_summary_row(record)),
            strict=True,
        )
    )
    # Rows of the experiment in any such table (one per phase, say): the readers take the
    # first they meet, so one left in an earlier table would hide the row written again.
    held = [
        (index, table[2])
        for table in (found if replace else [])
        for index in _rows_of(lines, *table, record.experiment)
    ]
    same = [index for index, _ in held]
    kept = [""] * len(names)
    if held:
        names = held[0][1]  # written in the columns of the table that holds it
        # A row written again keeps what the user wrote in columns of their own: only
        # kernelopt's cells are its to replace. A pipe in a kept cell stays escaped.
        old = split_row(lines[same[0]], len(names))
        kept = [escape_cell(cell) for cell in old[: len(names)]]
        kept += [""] * (len(names) - len(kept))
    cells = (values.get(name, own) for name, own in zip(names, kept, strict=True))
    row = "| " + " | ".join(cells) + " |"
    row += ending[:-1]  # the "\r" of a CRLF file; the last character comes from the join
    if same:
        # A result written again (overwrite=True): its row, not a second one beside it.
        lines[same[0]] = row
        for index in reversed(same[1:]):
            del lines[index]
        if same[0] == len(lines) - 1:
            # It was the file's last line, without a final newline: the row's "\r" alone
            # there would take the next row's "\r\n" to a blank line that ends the table.
            lines.append("")
    elif end == len(lines):  # the table ends the file, without a final newline
        if not lines[-1].endswith(ending[:-1]):
            lines[-1] += ending[:-1]
        lines += [row, ""]
    else:
        lines.insert(end, row)
    return mark + ending[-1].join(lines)


def _no_summary_table(lines: list[str]) -> tuple[str, int | None]:
    """What ``lines``, a summary.md without a summary table, hold instead, and the line
    (1-based) to look at: the user can then mend the header they wrote, not guess."""
    from kernelopt.experiments.readers._markdown import code_mask, is_separator

    mask = code_mask(lines)
    wanted = {name.lower() for name in SUMMARY_COLUMNS}
    first_table = None
    for index, line in enumerate(lines):
        if "|" not in line:
            continue
        names = {name.strip("*` ").lower() for name in split_row(line)}
        below = index + 1 < len(lines) and is_separator(lines[index + 1])
        if wanted <= names:
            if mask[index]:
                return f"its header at line {index + 1} inside a code block", index + 1
            if not below:
                return f"its header at line {index + 1} without a |---| row under it", index + 1
        if below and first_table is None and not mask[index]:
            missing = [name for name in SUMMARY_COLUMNS if name.lower() not in names]
            first_table = (f"a table without {', '.join(missing)} at line {index + 1}", index + 1)
    if first_table is not None:
        return first_table
    if any("|" in line for line in lines):
        return "no |---| row under any line of cells", None
    return "no table", None


def _summary_tables(lines: list[str]) -> list[tuple[int, int, list[str]]]:
    """The summary tables of ``lines``, in file order: each one's header line, the line
    after its last row and its column names (lowercase). A new row goes in the last.

    Tables whose header names every canonical column, by the readers' rules of what is a
    table: a row written where they see none (in a code block, under a header line
    without its |---| row) would be on disk and never read.
    """
    from kernelopt.experiments.readers._markdown import code_mask, is_separator

    mask = code_mask(lines)
    wanted = {name.lower() for name in SUMMARY_COLUMNS}
    found = []
    index = 0
    while index < len(lines) - 1:
        # Split as the readers split it, so that column N of a row is theirs too.
        names = [name.strip("*` ").lower() for name in split_row(lines[index])]
        table = not mask[index] and not mask[index + 1] and is_separator(lines[index + 1])
        if not (table and wanted <= set(names)):
            index += 1
            continue
        end = index + 2
        while end < len(lines) and lines[end].strip() and "|" in lines[end] and not mask[end]:
            end += 1
        found.append((index, end, names))
        index = end
    return found


def _rows_of(
    lines: list[str], start: int, end: int, names: list[str], experiment: int
) -> list[int]:
    """Indices of the summary table's rows of ``experiment``, found as the readers find
    them: a row they read as the experiment's and the writer missed would stay, read
    before a row written again, or beside one a second time."""
    column = names.index(SUMMARY_COLUMNS[0].lower())
    return [
        index
        for index in range(start + 2, end)
        if _experiment_cell(split_row(lines[index], len(names)), column) == experiment
    ]


def _row_lines(text: str, experiment: int) -> list[int]:
    """The line numbers (from 1, as the readers name lines) of the rows of ``experiment``
    in the summary tables of ``text`` (a summary.md), in file order."""
    text = text.removeprefix("\ufeff")
    lines = text.split(_line_ending(text)[-1])
    return sorted(
        index + 1
        for table in _summary_tables(lines)
        for index in _rows_of(lines, *table, experiment)
    )


def _has_row(text: str, experiment: int) -> bool:
    """Whether the summary table of ``text`` (a summary.md) holds a row of ``experiment``."""
    return bool(_row_lines(text, experiment))


def _warn_repeated_row(path: Path, experiment: int, held: list[int], written: list[int]) -> None:
    """Warn that the row of ``experiment`` just written at a line of ``written`` (the
    file's rows of it after the write) repeats the rows at ``held`` (those before it)."""
    added = [line for line in written if line not in held]
    at = f" at line {added[0]}" if added else ""
    lines = ", ".join(str(line) for line in held)
    warnings.warn(
        f"{path}: experiment {experiment} already has a row (line{'s' if len(held) > 1 else ''} "
        f"{lines}); the new row was written beside it{at}, and a reader takes the first "
        "row's values (a status or correctness verdict of either row that says the change "
        "was dropped or failed wins). Pass replace=True to write the row in place of the "
        "existing one.",
        RepeatedRowWarning,
        stacklevel=3,
    )


def _line_ending(text: str) -> str:
    """The line ending ``text`` is written with: CRLF, a lone CR (as old Mac editors
    write) or LF, the one a new file gets."""
    if "\r\n" in text:
        return "\r\n"
    return "\r" if "\r" in text and "\n" not in text else "\n"


def _experiment_cell(cells: list[str], column: int) -> int | None:
    """The experiment number a summary row's Exp cell holds, by the readers' rule (``7``,
    ``exp_7``, ``7 (rerun)``, ``exp 7 ✓``), or None."""
    from kernelopt.experiments.readers.tables import experiment_number

    if column >= len(cells):
        return None
    number = experiment_number(cells[column])
    # Only ASCII digits number an experiment here: "２" (a full-width 2) is no row of 2.
    digits = _DIGITS.search(cells[column])
    return number if digits is not None and ascii_digits(digits.group()) else None


def append_summary(root: str | Path, record: ResultRecord, *, replace: bool = False) -> Path:
    """Add ``record``'s row to ``root/summary.md``, creating it with the canonical header
    (a blank summary.md, as ``touch`` leaves one, gets it too).

    A summary.md written by hand keeps every line as written: the row goes at the end of
    its table, in the table's own column order (columns of the user's own left empty),
    with the file's line endings.

    Parameters
    ----------
    root : str or path-like
        The ``experiments/`` directory; created if missing.
    record : ResultRecord
        The experiment whose row is written.
    replace : bool, default False
        Put the row in place of the rows of the same experiment, if any, in every table
        of the canonical columns (for a result written again with ``overwrite=True``),
        where the first one stood, keeping its cells in columns of the user's own;
        otherwise, and when there are none, add it at the end of the last such table.
        A row is the experiment's when the readers take it so (``7``, ``exp_7``,
        ``7 (rerun)``, ``exp 7 ✓``; cells split at ``|`` as they split them, ``\\|`` and
        code spans kept in their cell). Keyword-only.

    Returns
    -------
    Path
        The summary.md written.

    Raises
    ------
    InputError
        When ``root`` is not a path, ``record`` is not a :class:`ResultRecord`,
        ``replace`` is not a bool, summary.md is a folder, or the file cannot be written.
    FormatError
        When an existing summary.md has no table with every canonical column (a row of
        other columns would corrupt the user's table), or is not UTF-8 (nor UTF-16 or
        UTF-32 after a byte-order mark). The file is left as it was.

    Notes
    -----
    The file is read and rewritten under an exclusive lock on ``summary.md.lock``, so
    concurrent writers add their rows one after the other, and in the encoding it was
    read in (a UTF-16 file with its byte-order mark stays one); a new file is UTF-8.
    """
    check_path(root, "root")
    _check_record(record)
    _check_flag(replace, "replace")
    path = Path(root) / "summary.md"
    _refuse_folder_or_loop(path)
    with locked(path):
        text, encoding = _summary_text(path)
        written = _with_row(text, record, path, replace=replace)
        atomic_write_text(path, written, encoding=encoding)
    # Written all the same (a write is never lost), but a second row of one experiment is
    # read as one experiment: the user should know which row's values a reader takes.
    held = [] if replace else _row_lines(text, record.experiment)
    if held:
        _warn_repeated_row(path, record.experiment, held, _row_lines(written, record.experiment))
    return path


def _summary_text(path: Path) -> tuple[str, str]:
    """The text of summary.md at ``path`` that a row is added to, and the encoding to
    write it back in (the one it was read in: a UTF-16 file stays one)."""
    text, encoding = (
        read_text_and_encoding(path, what="summary.md") if path.exists() else ("", "utf-8")
    )
    if not text.lstrip("\ufeff").strip():
        # A file created empty (``touch``) holds nothing a new table could hurt.
        text = ("\ufeff" if text.startswith("\ufeff") else "") + _SUMMARY_HEADER
    return text, encoding


def log_result(root: str | Path, record: ResultRecord, *, overwrite: bool = False) -> Path:
    """Write ``record`` to ``root/exp_N/result.md`` and its row to ``root/summary.md``:
    both, or neither.

    :func:`write_result` then :func:`append_summary`, with everything that could refuse
    the row settled before the result is written: an experiment is never left with a
    result that no summary row lists, nor a result written again over its old one and
    then refused its row.

    Parameters
    ----------
    root : str or path-like
        The ``experiments/`` directory; created if missing.
    record : ResultRecord
        The outcome; ``record.experiment`` names the folder and the row.
    overwrite : bool, default False
        Replace an existing result.md (in its encoding) and put the row in place of the
        summary table's rows of the experiment. Without it, a result.md or a summary row
        of the experiment already there is refused. Keyword-only.

    Returns
    -------
    Path
        The result.md written.

    Raises
    ------
    InputError
        As :func:`write_result` and :func:`append_summary` do, and, without
        ``overwrite``, when the summary table already holds a row of the experiment (its
        folder removed by hand leaves the row). Nothing has been written then.
    FormatError
        When an existing summary.md has no table with every canonical column, or is not
        text :func:`append_summary` reads. Nothing has been written then.

    Notes
    -----
    The whole write holds the lock :func:`append_summary` takes, so no other writer of
    the summary changes it between the check and the row. Should the summary write itself
    fail (a full disk), the result is taken back: a new result.md is removed (with the
    experiment's folder, where this call made it and nothing else is in it), and one
    written again gets its old bytes back.
    """
    check_path(root, "root")
    _check_record(record)
    _check_flag(overwrite, "overwrite")
    check_verdict(record.verdict, record.correctness)
    summary = Path(root) / "summary.md"
    result = experiment_dir(root, record.experiment) / "result.md"
    _refuse_folder_or_loop(summary)
    # Settled before the summary is locked: this refusal creates nothing, not even the lock.
    _refuse_other_folder(result, record.experiment, where="record.experiment")
    with locked(summary):
        current, encoding = _summary_text(summary)
        if not overwrite and _has_row(current, record.experiment):
            raise InputError(
                expected(
                    f"no summary.md row for experiment {record.experiment} "
                    "(pass overwrite=True to replace it)",
                    "an existing row",
                    where=str(summary),
                )
            )
        # Refused here (no table, another table's columns), the row refuses the result.
        text = _with_row(current, record, summary, replace=overwrite)
        folder_made = not result.parent.exists()
        before = result.read_bytes() if overwrite and result.is_file() else None
        # The result goes first. A process killed between the two writes runs no take-back;
        # it leaves a result.md without its row, which the readers still read as the
        # experiment, every row and note of it. Row first, a kill would leave the row
        # alone: one headline, the other measurements and the notes never written.
        write_result(root, record, overwrite=overwrite)
        try:
            atomic_write_text(summary, text, encoding=encoding)
        except BaseException:
            _take_back(result, before, folder_made=folder_made)
            raise
    return result


def _take_back(result: Path, before: bytes | None, *, folder_made: bool) -> None:
    """Undo a write of ``result``: put back its ``before`` bytes, or remove the file (and
    its folder, where ``folder_made`` and nothing else was put in it since)."""
    if before is not None:
        atomic_write_bytes(result, before)
        return
    result.unlink(missing_ok=True)
    if folder_made:
        with contextlib.suppress(OSError):  # not empty: another file went in meanwhile
            result.parent.rmdir()


def append_lesson(root: str | Path, text: str, *, experiment: int | None = None) -> Path:
    """Append one lesson bullet to ``root/LESSONS.md`` (created if missing).

    A new file starts with a ``# Lessons`` heading and is UTF-8; an existing one keeps its
    text, line endings (CRLF, CR or LF) and encoding (UTF-16 or UTF-32 after a byte-order
    mark), and is read and rewritten under an exclusive lock on ``LESSONS.md.lock``.

    Parameters
    ----------
    root : str or path-like
        The ``experiments/`` directory; created if missing.
    text : str
        The lesson, one line; surrounding spaces are stripped. Written as ``- text``.
    experiment : int, optional
        The experiment it was learned from (0 to 99999), written before the lesson as
        ``[exp N]``. Keyword-only; None (the default) writes no prefix.

    Returns
    -------
    Path
        The LESSONS.md written.

    Raises
    ------
    InputError
        When ``root`` is not a path; ``text`` is not a str, is blank, or holds a line
        break, a NUL or a lone surrogate; ``experiment`` is not an int in 0..99999;
        LESSONS.md is a folder; or the file cannot be written.
    FormatError
        When an existing LESSONS.md is not UTF-8 (nor UTF-16 or UTF-32 after a byte-order
        mark), or ends inside a code block (a ```` ``` ```` fence never closed), where the
        readers would take the bullet as code. The file is left as it was.
    """
    check_path(root, "root")
    # A number or None is no lesson of the wrong form but of the wrong type: say so.
    if not isinstance(text, str):
        raise InputError(expected("the lesson as a str", type(text).__name__, where="text"))
    if not text.strip() or _text_problem(text.strip(), one_line=True) is not None:
        raise InputError(expected("a one-line lesson", repr(text), where="text"))
    if experiment is not None:
        check_int(experiment, "experiment", minimum=0, maximum=MAX_EXPERIMENT)
    path = Path(root) / "LESSONS.md"
    _refuse_folder_or_loop(path)
    prefix = "" if experiment is None else f"[exp {experiment}] "
    with locked(path):
        # Read and written with the file's own line endings and encoding, so a CRLF or a
        # UTF-16 file stays one.
        current, encoding = (
            read_text_and_encoding(path, what="LESSONS.md")
            if path.exists()
            else ("# Lessons\n\n", "utf-8")
        )
        ending = _line_ending(current)
        if not current.endswith(ending[-1]):
            current += ending
        _refuse_open_code_block(current, ending, path)
        atomic_write_text(path, current + f"- {prefix}{text.strip()}{ending}", encoding=encoding)
    return path


def _refuse_open_code_block(text: str, ending: str, path: Path) -> None:
    """Refuse to add a line after ``text`` while a code block it opens is still open: the
    readers take a line there as code, never as a lesson, so it would be written and lost.
    """
    from kernelopt.experiments.readers._markdown import _FENCE, code_mask

    # ``text`` ends with a line ending: its last line, empty, is where the bullet goes.
    lines = [line.removesuffix("\r") for line in text.removeprefix("\ufeff").split(ending[-1])]
    if code_mask(lines)[-1]:
        opened = max(i for i, line in enumerate(lines) if _FENCE.match(line))
        raise FormatError(
            expected(
                "a file whose code blocks are closed (add the closing fence)",
                f"a code block opened at line {opened + 1} and never closed",
            ),
            path=path,
        )
