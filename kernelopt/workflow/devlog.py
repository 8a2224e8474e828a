"""The kernel devlog's ``## Performance`` section, updated in place.

A devlog (``docs/kernels/<kernel>.md``) is a human document: notes, design decisions,
code. Its ``## Performance`` section holds one table per version, one row per trial point::

    ## Performance

    ### v2

    | Version | Point | Time | TFLOP/s | GB/s | Of floor | GPU | Date |
    |---------|-------|------|---------|------|----------|-----|------|
    | v2 | b=32 s=1 t=4096 h=16 | 66.53 us | 68.6 | 2286 | 53.8% | NVIDIA H200 | 2026-12-02 |

:func:`update_devlog` writes :class:`PerfRow` records into it: a row with the same
(version, point, GPU) is replaced, any other is appended to its version's table (a new
``### <version>`` table is added at the end of the section, and the section at the end of
the file, when missing). A heading a user annotated is still the section or the table:
``## Performance (H200)``, ``## Performance(H200)``, ``## Performance — H200``,
``### v2: split-KV`` (the note in parentheses, or after a spaced dash or a colon, is kept
as written); ``## Performance
notes`` or ``### v2-fp8`` is another section or version, and two headings that both
name the section (or a row's version table) are refused, never merged. The section is
found as markdown shows it: a setext heading (``Performance`` over ``---``) is one, and a
heading in a code fence or an HTML comment (``<!-- ... -->``) is none. A ``|`` in a cell
is written ``\\|``. Every other byte of the file (other sections, code blocks and comments
holding ``## `` lines, trailing spaces, CRLF line ends) is left exactly as it was. The
write is atomic and holds a lock on the file, so concurrent profilers do not lose rows.
"""

from __future__ import annotations

import contextvars
import datetime
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from kernelopt._checks import as_path, breaks_lines
from kernelopt._errors import FormatError, InputError, expected
from kernelopt._fileio import (
    atomic_write_text,
    locked,
    read_text,
    read_text_and_encoding,
    require_file,
)
from kernelopt._numbers_text import significant
from kernelopt._table_cells import escape_cell, share_cell
from kernelopt._words import count_text
from kernelopt.bench.measurement import UNIT_SECONDS
from kernelopt.bench.records import BenchRow
from kernelopt.bench.report import ProfileReport
from kernelopt.bench.roofline import Ceilings
from kernelopt.experiments.readers._values import LATENCY_UNITS
from kernelopt.workflow._fields import (
    path_label,
    real_to_float,
    require_instance,
    require_optional_instance,
    require_text,
)
from kernelopt.workflow._markdown import BOM, heading_of, split_row
from kernelopt.workflow._points import point_of, point_words
from kernelopt.workflow._rows import check_rows, measured_on

__all__ = [
    "COLUMNS",
    "DevlogUpdate",
    "PerfRow",
    "parse_performance",
    "perf_row_from_profile",
    "perf_rows_from_bench",
    "read_performance",
    "update_devlog",
]

COLUMNS = ("Version", "Point", "Time", "TFLOP/s", "GB/s", "Of floor", "GPU", "Date")
SECTION = "Performance"
_MISSING = "-"
# What may follow a section's name or a version in its heading and leave it that section
# or table: a note in parentheses (a space before it or none: "Performance(H200)" is the
# section, as no version holds a '('), or after a dash with spaces around it or a colon.
# Anything else ("Performance notes", "v2-fp8", "v2.1") names something else.
_NOTE = re.compile(r"(?:\s*\(.*\)|\s+[-\u2013\u2014]\s+\S.*|:(?:\s.*)?)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"^ {0,3}<!--")
# A setext heading's underline, and what ends a paragraph or starts a block whose lines
# start no paragraph of their own (a thematic break; a list item, block quote or table).
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_BLOCK_START = re.compile(r"^ {0,3}(?:[>|]|[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))")
# The number as profile.py reads it, a run of digits split one way only, and a unit that
# starts with a letter (every unit does): a unit that could start with a digit could also
# take any tail of the number, and a cell that does not read would take quadratic time.
_TIME = re.compile(
    r"^(?P<value>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>[^\W\d_]\S*)$"
)
_SEPARATOR_CELL = re.compile(r"^:?-+:?$")
_ISSUE_FLOOR = re.compile(r"^(?P<pct>\d+(?:\.\d+)?)% of roofline floor$")
# True while parse_performance builds the rows of a file: a Date cell is then kept as the
# file has it (an older devlog or a hand edit may spell it otherwise), where a row a
# caller builds must hold an ISO date. A context variable, so a thread or task reading a
# devlog does not lift the check for another building rows at the same time.
_READING_FILE: contextvars.ContextVar[bool] = contextvars.ContextVar("_READING_FILE", default=False)


def _cell(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    # Written by kernelopt: no break of any kind str.splitlines knows (form feed, U+2028...),
    # which other readers of the file may take for a line end. A '|' is written escaped
    # ('\|') and read back as itself.
    if not isinstance(value, str) or breaks_lines(value) or value != value.strip():
        raise InputError(
            expected(
                "a table cell: one line without surrounding spaces",
                repr(value),
                where=f"PerfRow.{attribute.name}",
            )
        )


def _key_cell(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    _cell(instance, attribute, value)
    # The version is also a "### <version>" heading, where a trailing '#' would be dropped.
    if not value or value == _MISSING or value.endswith("#"):
        raise InputError(
            expected(
                "a non-empty cell other than '-', not ending in '#'",
                repr(value),
                where=f"PerfRow.{attribute.name}",
            )
        )
    # Version and point name the measurement as the profile hand-off's heading names it
    # (``## Profile: <kernel> <version> | <point>``), which holds no '|' in either.
    if "|" in value:
        raise InputError(
            expected("a table cell without '|'", repr(value), where=f"PerfRow.{attribute.name}")
        )


def _version_name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    # The version is also its table's "### <version>" heading, where a space, ':' or '('
    # starts a note (:data:`_NOTE`): "v2 (fast)" would be read as the table of "v2" and the
    # two versions' rows merged (the profile heading's version holds no space or '|').
    if any(char.isspace() or char in "|:(" for char in value):
        raise InputError(
            expected(
                "a non-empty name without spaces, '|', ':' or '('",
                repr(value),
                where=f"PerfRow.{attribute.name}",
            )
        )


def _text_cell(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    _cell(instance, attribute, value)
    if value == _MISSING:
        raise InputError(
            expected(
                "text other than '-' (leave it empty)",
                repr(value),
                where=f"PerfRow.{attribute.name}",
            )
        )


def _iso_date_or_none(text: str) -> str | None:
    """``text`` if it is a date as the Date column writes it (``2026-12-02``), else None.

    ``date.fromisoformat`` alone would also take ``20261202`` and ``2026-W49-3``, which
    would sort and read apart from the other rows.
    """
    try:
        written = datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        return None
    return text if written == text else None


def _iso_date(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value and not _READING_FILE.get() and _iso_date_or_none(value) is None:
        raise InputError(
            expected("an ISO date (2026-12-02)", repr(value), where=f"PerfRow.{attribute.name}")
        )


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (isinstance(value, float) and math.isfinite(value) and value > 0):
        raise InputError(
            expected("a finite time > 0", repr(value), where=f"PerfRow.{attribute.name}")
        )


def _optional(instance: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not (isinstance(value, float) and math.isfinite(value) and value >= 0):
        raise InputError(
            expected("a finite number >= 0 or None", repr(value), where=f"PerfRow.{attribute.name}")
        )


def _unit(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or value not in UNIT_SECONDS:
        raise InputError(
            expected(f"a unit in {tuple(UNIT_SECONDS)}", repr(value), where="PerfRow.unit")
        )


# Past these a cell's positional digits would outnumber its 4 significant ones by more
# than two (a time of 1e300 us ran to 301 digits): its exponent is then the news, written
# with the same 4 significant digits ("1.235e+07"). float() reads either form back.
_POSITIONAL_LARGEST = 1e6
_POSITIONAL_SMALLEST = 1e-6


def _table_number(value: float) -> str:
    """A number of a Performance table: 4 significant digits, written positionally from a
    millionth up to a million, in exponent form beyond.

    Parameters
    ----------
    value : float
        The time, rate or share to write.

    Returns
    -------
    str
        The cell's number.

    Examples
    --------
    >>> _table_number(66.53), _table_number(69932.79), _table_number(1.2345e-05)
    ('66.53', '69933', '0.00001234')
    >>> _table_number(12345678.9), _table_number(999999.6), _table_number(1e300)
    ('1.235e+07', '1e+06', '1e+300')
    """
    # Rounded to whole units before the form is picked: 999999.6 is "1e+06", never a
    # seven-digit "1000000"; 9999.95 stays "10000", not "1e+04".
    size = abs(value)
    if round(size) >= _POSITIONAL_LARGEST or 0 < size < _POSITIONAL_SMALLEST:
        return f"{value:.4g}"
    return significant(value)


def _share_number(percent: float) -> str:
    """The Of floor cell: :func:`~kernelopt._table_cells.share_cell`, or the exponent form
    of :func:`_table_number` (with its ``%``) for a share of a million percent or more."""
    if round(abs(percent)) >= _POSITIONAL_LARGEST:
        return f"{_table_number(percent)}%"
    return share_cell(percent)


@attrs.frozen(kw_only=True)
class PerfRow:
    """One row of a devlog's performance table: a version timed at a trial point.

    Parameters
    ----------
    version : str
        The kernel version (the table it belongs to): one word, without ``|``, ``:`` or
        ``(``, which in its ``### <version>`` heading would start a note.
    point : str
        The trial point in ``key=value`` words, kept as ``b=32 s=1 t=4096 h=16`` (b, s, t
        first, other axes sorted) so that every writer spells a point the same way.
    time : float
        Median time per call, in ``unit``.
    unit : str
        ``"us"`` by default.
    tflop_s, gb_s : float, optional
        Achieved TFLOP/s and GB/s (10⁹ B/s); None when unknown.
    floor_pct : float, optional
        Roofline floor over measured time, %.
    gpu : str
        Device name; a ``|`` in it is written ``\\|`` and read back as ``|`` (the version
        and point hold none).
    date : str
        ISO date of the measurement (``2026-12-02``); empty (``-``) when not known. A row
        read back from a devlog keeps the Date cell as the file has it.
    """

    version: str = attrs.field(validator=[_key_cell, _version_name])
    point: str = attrs.field(converter=point_words, validator=_key_cell)
    time: float = attrs.field(converter=real_to_float, validator=_positive)
    unit: str = attrs.field(default="us", validator=_unit)
    tflop_s: float | None = attrs.field(default=None, converter=real_to_float, validator=_optional)
    gb_s: float | None = attrs.field(default=None, converter=real_to_float, validator=_optional)
    floor_pct: float | None = attrs.field(
        default=None, converter=real_to_float, validator=_optional
    )
    gpu: str = attrs.field(default="", validator=_text_cell)
    date: str = attrs.field(default="", validator=[_text_cell, _iso_date])

    @property
    def key(self) -> tuple[str, str, str]:
        """(version, point, gpu): what a newer row of the same measurement replaces (a
        row of another GPU is another measurement, kept beside it)."""
        return self.version, self.point, self.gpu

    def cells(self) -> tuple[str, ...]:
        """The row's cells as the table shows them: numbers as :func:`_table_number` writes
        them (4 significant digits, trailing zeros dropped; every integer digit from 10 000
        up to a million; exponent form from a million on and below a millionth)."""

        def num(value: float | None) -> str:
            return _MISSING if value is None else _table_number(value)

        return (
            self.version,
            self.point,
            f"{num(self.time)} {self.unit}",
            num(self.tflop_s),
            num(self.gb_s),
            _MISSING if self.floor_pct is None else _share_number(self.floor_pct),
            self.gpu or _MISSING,
            self.date or _MISSING,
        )

    def render(self) -> str:
        """The markdown table row (no line end); a ``|`` in a cell is written ``\\|``."""
        return "| " + " | ".join(escape_cell(cell) for cell in self.cells()) + " |"


@attrs.frozen(kw_only=True)
class DevlogUpdate:
    """What :func:`update_devlog` did.

    Parameters
    ----------
    path : Path
        The devlog.
    replaced, added : tuple of PerfRow
        Rows that replaced a row of the same (version, point, GPU) in the file, and rows
        appended; each row written once (the last of an update's rows of one key).
    created : bool
        True when the file did not exist.
    unchanged : bool
        True when every row was already in the file as written, so nothing was written
        (a read-only devlog is then left as it is, not refused); its rows are in
        ``replaced``.
    """

    path: Path
    replaced: tuple[PerfRow, ...] = ()
    added: tuple[PerfRow, ...] = ()
    created: bool = False
    unchanged: bool = False

    def summary(self) -> str:
        """What the update did, in one line: ``devlog docs/kernels/k.md: 1 replaced, 2
        added``, or ``devlog docs/kernels/k.md: 6 rows already there, nothing written``."""
        if self.unchanged:
            rows = count_text(len(self.replaced), "row")
            return f"devlog {self.path}: {rows} already there, nothing written"
        return f"devlog {self.path}: {len(self.replaced)} replaced, {len(self.added)} added"


# --- building rows ----------------------------------------------------------------------


def _today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def _check_ridge(metrics: Mapping[str, float], ceilings: Ceilings | None) -> None:
    ridge = metrics.get("ridge")
    if ceilings is not None and ridge and abs(ceilings.ridge / ridge - 1.0) > 0.01:
        raise InputError(
            expected(
                f"ceilings with the ridge the row was placed with ({ridge:.4g} FLOP/B)",
                f"{ceilings.ridge:.4g} FLOP/B from {ceilings.gpu or 'the given ceilings'}",
                where="ceilings",
            )
        )


def _rates(
    metrics: Mapping[str, float], ceilings: Ceilings | None
) -> tuple[float | None, float | None]:
    """Achieved FLOP/s and bytes/s: stated in the metrics, or their % of known ceilings."""
    _check_ridge(metrics, ceilings)
    flops = metrics.get("flop_per_s")
    moved = metrics.get("bytes_per_s")
    if flops is None and ceilings is not None and "tc_pct" in metrics:
        flops = metrics["tc_pct"] / 100.0 * ceilings.matmul_flop_per_s
    if moved is None and ceilings is not None and "dram_pct" in metrics:
        moved = metrics["dram_pct"] / 100.0 * ceilings.copy_bytes_per_s
    return flops, moved


def perf_rows_from_bench(
    rows: Iterable[BenchRow], *, version: str | None = None, ceilings: Ceilings | None = None
) -> list[PerfRow]:
    """Devlog rows from benchmark rows (one per row; later rows of a point win on update).

    Parameters
    ----------
    rows : iterable of BenchRow
        Timed configurations (``kernelopt.bench.read_rows``).
    version : str, optional
        The version the rows time; default each row's ``impl``. Given, the rows must be
        of one implementation: two would share one table, each point keeping only the
        last row.
    ceilings : Ceilings, optional
        The device's ceilings, to turn ``tc_pct``/``dram_pct`` into TFLOP/s and GB/s
        when the row does not state ``flop_per_s``/``bytes_per_s``; without either the
        cells read ``-``.

    Raises
    ------
    InputError
        For rows that are not BenchRow, a row without a time (median 0), one whose
        timestamp starts with a date that is not one (``2026-13-45``), or a ``version``
        given for rows of several implementations.

    Examples
    --------
    >>> from kernelopt.bench import BenchRow
    >>> row = BenchRow(op="mla_decode", impl="v2", config={"b": 32, "s": 1, "t": 4096},
    ...                median=66.53, gpu="NVIDIA H200", timestamp="2026-12-02T10:00:00+00:00",
    ...                floor=35.79)
    >>> print(perf_rows_from_bench([row])[0].render())
    | v2 | b=32 s=1 t=4096 | 66.53 us | - | - | 53.8% | NVIDIA H200 | 2026-12-02 |
    """
    require_optional_instance(
        ceilings, Ceilings, "Ceilings (kernelopt.bench.load_ceilings) or None", where="ceilings"
    )
    checked = list(check_rows(rows, "rows"))
    impls = list(dict.fromkeys(row.impl for row in checked))
    if version is not None and len(impls) > 1:
        # One version for rows of several implementations writes them into one table,
        # where each point keeps only the last: the others would go without a word.
        raise InputError(
            expected(
                f"rows of one implementation for version={version!r}",
                f"{len(impls)} ({', '.join(impls)}): pass the rows of one, or no version "
                "to name each row's table after its impl",
                where="rows",
            )
        )
    out = []
    for row in checked:
        if not row.median > 0:
            # A row without a time (an attempt that was not timed) has no devlog row; named
            # here, since "PerfRow.time" would not say which row of a file it was.
            raise InputError(
                expected(
                    "rows with a median time > 0",
                    f"{row.median!r} for {row.impl} at {point_of(row.config)}",
                    where="rows",
                )
            )
        date = measured_on(row)
        if date and _iso_date_or_none(date) is None:
            # "PerfRow.date" would not say which row of a file holds the timestamp.
            raise InputError(
                expected(
                    "rows whose timestamp starts with an ISO date (2026-12-02)",
                    f"{row.timestamp!r} for {row.impl} at {point_of(row.config)}",
                    where="rows",
                )
            )
        flops, moved = _rates(row.metrics, ceilings)
        floor_pct = row.metrics.get("floor_pct")
        if floor_pct is None and row.floor and row.median > 0:
            floor_pct = 100.0 * row.floor / row.median
        out.append(
            PerfRow(
                version=version or row.impl,
                point=point_of(row.config),
                time=row.median,
                unit=row.unit,
                tflop_s=None if flops is None else flops / 1e12,
                gb_s=None if moved is None else moved / 1e9,
                floor_pct=floor_pct,
                gpu=row.gpu,
                date=date,
            )
        )
    return out


def perf_row_from_profile(
    report: ProfileReport,
    *,
    gpu: str = "",
    date: str | None = None,
    ceilings: Ceilings | None = None,
    floor_pct: float | None = None,
) -> PerfRow:
    """The devlog row of a profile hand-off (:class:`~kernelopt.bench.ProfileReport`).

    Time is the sum of the stage durations (in the first stage's unit; ``µs`` is ``us``,
    ``sec`` is ``s``). TFLOP/s and GB/s need ``ceilings`` (the stages carry TC% and DRAM%
    of them). The profile does not carry the floor share as a number: pass ``floor_pct``,
    or it is read from the key issue ``N% of roofline floor`` that
    :func:`~kernelopt.bench.profile_report` writes for a single stage.

    Parameters
    ----------
    report : ProfileReport
        The profile hand-off, with at least one stage.
    gpu : str
        The device's name for the row.
    date : str, optional
        ISO date of the measurement; today when None.
    ceilings : Ceilings, optional
        The device's measured ceilings, to turn TC% and DRAM% into TFLOP/s and GB/s.
    floor_pct : float, optional
        Share of the roofline floor reached, when the report does not state it.

    Returns
    -------
    PerfRow
        The row :func:`update_devlog` writes.

    Raises
    ------
    InputError
        For anything but a ProfileReport, a report without stages, a stage whose
        duration is not in a unit of time (``41 cycles``), or a ``date`` that is not an
        ISO date (``2026-12-02``).
    """
    require_instance(
        report, ProfileReport, "a ProfileReport (parse_profile, profile_from_rows)", where="report"
    )
    require_optional_instance(
        ceilings, Ceilings, "Ceilings (kernelopt.bench.load_ceilings) or None", where="ceilings"
    )
    stages = tuple(report.stages)
    if not stages:
        raise InputError(expected("a profile with at least one stage", "none", where="report"))
    units = [LATENCY_UNITS.get(stage.unit) for stage in stages]
    untimed = [stage for stage, unit in zip(stages, units, strict=True) if unit is None]
    if untimed:
        # Summed as microseconds, a duration in cycles would make up the row's time.
        raise InputError(
            expected(
                f"stage durations in a unit of time ({', '.join(UNIT_SECONDS)})",
                f"{untimed[0].name!r} in {untimed[0].unit!r}",
                where="report",
            )
        )
    unit = str(units[0])
    seconds = [s.duration * UNIT_SECONDS[str(u)] for s, u in zip(stages, units, strict=True)]
    total = sum(seconds)
    flops = moved = None
    if ceilings is not None and total > 0:
        # Time-weighted means of the stages' shares of the ceilings.
        tc = [s.tc_pct for s in stages]
        dram = [s.dram_pct for s in stages]
        if all(v is not None for v in tc):
            share = sum(float(v or 0.0) * t for v, t in zip(tc, seconds, strict=True)) / total
            flops = share / 100.0 * ceilings.matmul_flop_per_s
        if all(v is not None for v in dram):
            share = sum(float(v or 0.0) * t for v, t in zip(dram, seconds, strict=True)) / total
            moved = share / 100.0 * ceilings.copy_bytes_per_s
    if floor_pct is None and len(stages) == 1:
        match = _ISSUE_FLOOR.match(stages[0].key_issue.strip())
        floor_pct = None if match is None else float(match.group("pct"))
    return PerfRow(
        version=report.version,
        point=str(report.point),
        time=total / UNIT_SECONDS[unit],
        unit=unit,
        tflop_s=None if flops is None else flops / 1e12,
        gb_s=None if moved is None else moved / 1e9,
        floor_pct=floor_pct,
        gpu=gpu,
        date=date or _today(),
    )


# --- the file ---------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Heading:
    index: int
    level: int
    title: str


def _lines(text: str) -> list[str]:
    """``text``'s lines with their ends, split where markdown ends a line: CR LF, LF or CR.

    ``str.splitlines`` also ends a line at a form feed, U+2028 and the like, which an
    editor shows inside the line: a row inserted there would land in the middle of it.
    """
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


class _Blocks:
    """The markdown blocks :func:`_scan` walks: which lines are hidden (in a code fence or
    an HTML comment, as a renderer shows them: code, or nothing), and the paragraph open
    at the current line, whose lines a setext underline (``===``, ``---``) makes a heading.
    """

    def __init__(self) -> None:
        self.hidden: list[bool] = []
        self.paragraph: list[int] = []  # the open paragraph's line indices
        # True inside a list item, block quote or table, up to the next blank line: its
        # lines continue that block (as markdown reads lazy lines) and start no paragraph.
        self.in_block = False

    def close(self) -> None:
        self.paragraph = []
        self.in_block = False


def _setext_level(line: str) -> int | None:
    """1 for a ``===`` underline, 2 for a ``---`` one; None for any other line."""
    match = _SETEXT.match(line)
    if match is None:
        return None
    return 1 if match.group(1).startswith("=") else 2


def _read_line(blocks: _Blocks, headings: list[_Heading], lines: list[str], index: int) -> None:
    """Take line ``index`` (outside fences and comments) into ``blocks`` and ``headings``."""
    line = _shown(lines, index)
    found = heading_of(line)
    level = _setext_level(line)
    if found:
        headings.append(_Heading(index=index, level=found[0], title=found[1]))
        blocks.close()
    elif level is not None and blocks.paragraph:
        # The heading starts where its paragraph does: its lines are its title.
        title = " ".join(_shown(lines, i).strip() for i in blocks.paragraph)
        headings.append(_Heading(index=blocks.paragraph[0], level=level, title=title))
        blocks.close()
    elif not line.strip() or _BREAK.match(line):
        blocks.close()
    elif _BLOCK_START.match(line):
        blocks.paragraph, blocks.in_block = [], True
    elif blocks.paragraph:
        blocks.paragraph.append(index)
    elif not blocks.in_block and not line.startswith((" " * 4, "\t")):
        blocks.paragraph = [index]  # a line indented four spaces is code, not a paragraph


def _scan(lines: list[str], path: str | None) -> tuple[list[_Heading], list[bool]]:
    """The headings, ATX (``## Title``) and setext (``Title`` over ``---`` or ``===``),
    outside code fences and HTML comments (``<!-- ... -->``), and which lines are hidden
    inside one of those: a heading or table there is code or a note to the file's
    editors, not the file's section."""
    headings: list[_Heading] = []
    blocks = _Blocks()
    fence: str | None = None
    in_comment = False
    opened = 0
    for index in range(len(lines)):
        line = _shown(lines, index)
        if fence is not None:
            blocks.hidden.append(True)
            closing = re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", line)
            if closing:
                fence = None
            continue
        if in_comment:
            blocks.hidden.append(True)
            in_comment = "-->" not in line
            continue
        match = _FENCE.match(line)
        if match or _COMMENT.match(line):
            # Either interrupts a paragraph; a comment ends on the line holding "-->",
            # which may be the line that opens it.
            blocks.hidden.append(True)
            blocks.close()
            opened = index + 1
            if match:
                fence = match.group(1)
            else:
                in_comment = "-->" not in line
            continue
        blocks.hidden.append(False)
        _read_line(blocks, headings, lines, index)
    if fence is not None or in_comment:
        # Appending after an unclosed fence would put the table inside the code block, and
        # after an unclosed comment out of sight.
        what = "code fences" if fence is not None else "HTML comments"
        opener = "a fence" if fence is not None else "a comment '<!--'"
        raise FormatError(
            expected(f"{what} that close", f"{opener} opened at line {opened} left open"),
            path=path,
            line=opened,
        )
    return headings, blocks.hidden


def _end(headings: list[_Heading], after: int, level: int, limit: int) -> int:
    for heading in headings:
        if after < heading.index < limit and heading.level <= level:
            return heading.index
    return limit


def _names(title: str, name: str, *, fold: bool) -> bool:
    """Whether a heading's ``title`` is ``name``, bare or with a note (:data:`_NOTE`)."""
    title = title.strip()
    lead = title[: len(name)]
    if (lead.lower() == name.lower()) if fold else (lead == name):
        return title == lead or _NOTE.fullmatch(title[len(name) :]) is not None
    return False


def _shown(lines: list[str], index: int) -> str:
    """Line ``index`` as a user sees it in the file (no line end, no byte-order mark)."""
    return lines[index].rstrip("\r\n").removeprefix(BOM if index == 0 else "")


def _one(lines: list[str], found: list[_Heading], what: str, path: str | None) -> _Heading | None:
    """The one heading of ``found``; two are refused, since which of them holds the
    current numbers (or whether both should be one) is the user's call."""
    if len(found) > 1:
        first, second = found[0].index, found[1].index
        raise FormatError(
            expected(
                f"one {what}",
                f"two: line {first + 1} {_shown(lines, first)!r} "
                f"and line {second + 1} {_shown(lines, second)!r}",
            ),
            path=path,
            line=second + 1,
            section=SECTION,
        )
    return found[0] if found else None


def _section(
    lines: list[str], headings: list[_Heading], path: str | None
) -> tuple[int, int] | None:
    found = [h for h in headings if h.level == 2 and _names(h.title, SECTION, fold=True)]
    heading = _one(lines, found, f"'## {SECTION}' section", path)
    if heading is None:
        return None
    return heading.index, _end(headings, heading.index, 2, len(lines))


def _header_ok(line: str) -> bool:
    normal = [re.sub(r"\s+", "", c).lower() for c in split_row(line)]
    return normal == [re.sub(r"\s+", "", c).lower() for c in COLUMNS]


def _table(
    lines: list[str], hidden: list[bool], start: int, end: int, path: str | None
) -> tuple[int, int] | None:
    """(first, last) line index of the version's table within [start, end), if any."""
    first = next(
        (i for i in range(start, end) if not hidden[i] and lines[i].lstrip().startswith("|")), None
    )
    if first is None:
        return None
    if not _header_ok(lines[first]):
        raise FormatError(
            expected(
                "the devlog table header | " + " | ".join(COLUMNS) + " |",
                repr(lines[first].strip()),
            ),
            path=path,
            line=first + 1,
            section=SECTION,
        )
    last = first
    while last + 1 < end and not hidden[last + 1] and lines[last + 1].lstrip().startswith("|"):
        last += 1
    return first, last


def _usual_line_end(text: str) -> str:
    """The line end most of ``text``'s lines take: LF, CRLF or a lone CR (LF on a tie).

    One pasted CRLF line does not make an LF file's new rows CRLF (nor one LF line a CRLF
    file's LF), and a file of lone CRs (as old Mac editors save) gets lone CRs.
    """
    crlf = text.count("\r\n")
    counts = {"\n": text.count("\n") - crlf, "\r\n": crlf, "\r": text.count("\r") - crlf}
    return max(counts, key=counts.__getitem__)  # the first of equals: LF, then CRLF


def _new_table(row: PerfRow, eol: str) -> list[str]:
    separator = "|" + "|".join("-" * (len(c) + 2) for c in COLUMNS) + "|"
    header = "| " + " | ".join(COLUMNS) + " |"
    return [header + eol, separator + eol, row.render() + eol]


def _terminate(lines: list[str], index: int, eol: str) -> None:
    if not lines[index].endswith(("\n", "\r")):
        lines[index] += eol


def _upsert(lines: list[str], row: PerfRow, eol: str, path: str | None) -> bool:
    """Put ``row`` into ``lines``; True when it replaced a row."""
    headings, hidden = _scan(lines, path)
    found = _section(lines, headings, path)
    if found is None:
        if lines:
            _terminate(lines, len(lines) - 1, eol)
            if lines[-1].strip():
                lines.append(eol)
        lines.append(f"## {SECTION}{eol}")
        headings, hidden = _scan(lines, path)
        found = _section(lines, headings, path)
        assert found is not None
    start, end = found
    # A version is matched as written: v2 and V2 are two versions, as in the rows' keys.
    sub = _one(
        lines,
        [
            h
            for h in headings
            if start < h.index < end and h.level == 3 and _names(h.title, row.version, fold=False)
        ],
        f"'### {row.version}' table in the section",
        path,
    )
    if sub is not None:
        sub_end = _end(headings, sub.index, 3, end)
        table = _table(lines, hidden, sub.index + 1, sub_end, path)
        if table is None:
            block = [eol, *_new_table(row, eol)]
            if sub.index + 1 < len(lines) and lines[sub.index + 1].strip():
                block.append(eol)  # prose right under a table would join it as a row
            _terminate(lines, sub.index, eol)
            lines[sub.index + 1 : sub.index + 1] = block
            return False
        first, last = table
        _check_cells(lines, first, last, path)
        same = [i for i in range(first + 1, last + 1) if _row_key(split_row(lines[i])) == row.key]
        if len(same) > 1:
            # Replacing one would leave the other, older or newer, to be read as current.
            raise FormatError(
                expected(
                    f"one row of {row.version} at {row.point} on {row.gpu or '-'} in its table",
                    f"rows at lines {', '.join(str(i + 1) for i in same)}",
                ),
                path=path,
                line=same[1] + 1,
                section=SECTION,
            )
        if same:
            index = same[0]
            ending = lines[index][len(lines[index].rstrip("\r\n")) :]
            lines[index] = row.render() + (ending or "")
            return True
        _terminate(lines, last, eol)
        lines.insert(last + 1, row.render() + eol)
        return False
    # A new version table goes after the section's last non-blank line.
    at = end
    while at - 1 > start and not lines[at - 1].strip():
        at -= 1
    _terminate(lines, at - 1, eol)
    block = [eol, f"### {row.version}{eol}", eol, *_new_table(row, eol)]
    if at < len(lines) and lines[at].strip():
        block.append(eol)  # keep a blank line before the next heading
    lines[at:at] = block
    return False


def _is_separator(cells: list[str]) -> bool:
    """Whether a table row's ``cells`` are its ``---`` separator."""
    return all(_SEPARATOR_CELL.match(cell) for cell in cells)


def _check_cells(lines: list[str], first: int, last: int, path: str | None) -> None:
    """Refuse a row of the table at lines ``first`` (its header) to ``last`` that has not
    one cell per column, as :func:`parse_performance` does.

    A row cut short (its Date cell lost in an edit) would not be found as the row to
    replace, and the new one would join it: two rows of one point, and a devlog that no
    longer reads. A row with a cell too many would be replaced without it.
    """
    for index in range(first + 1, last + 1):
        cells = split_row(lines[index])
        if len(cells) != len(COLUMNS) and not _is_separator(cells):
            raise FormatError(
                expected(
                    f"a row of {len(COLUMNS)} cells ({', '.join(COLUMNS)})", f"{len(cells)} cells"
                ),
                path=path,
                line=index + 1,
                section=SECTION,
            )


def _row_key(cells: list[str]) -> tuple[str, str, str] | None:
    """The (version, point, gpu) of a table row's cells; None for a row too short to
    have them (a separator, a stray line)."""
    if len(cells) < len(COLUMNS):
        return None
    return cells[0], point_words(cells[1]), "" if cells[6] == _MISSING else cells[6]


def _refuse_read_only(target: Path) -> None:
    """Refuse to replace a devlog its owner made read-only: the rename that writes it
    atomically would succeed anyway (it needs only the folder), where an editor refuses."""
    mode = target.stat().st_mode
    if not os.access(target, os.W_OK) or not mode & 0o222:
        raise InputError(
            expected(
                "a devlog file that may be written",
                f"{target}, read-only (mode {mode & 0o777:o})",
                where="path",
            )
        )


def _check_title(title: object) -> None:
    """Refuse a title that is not one line of text: a line break in it would write a
    heading of its own (a second ``## Performance``, say) into the new file."""
    if title is not None and (
        not isinstance(title, str) or not title.strip() or breaks_lines(title)
    ):
        raise InputError(
            expected("a title of one non-blank line, or None", repr(title), where="title")
        )


def _perf_rows(rows: object) -> list[PerfRow]:
    """``rows`` as a list of at least one PerfRow; anything else is refused, before the
    devlog or its lock is touched."""
    if isinstance(rows, PerfRow):
        # One row, not a list of them: said as such, not as "not iterable".
        raise InputError(expected("an iterable of PerfRow rows", "one PerfRow", where="rows"))
    if not isinstance(rows, Iterable):
        raise InputError(expected("an iterable of PerfRow rows", type(rows).__name__, where="rows"))
    wanted = list(rows)
    wrong = [row for row in wanted if not isinstance(row, PerfRow)]
    if wrong:
        raise InputError(expected("PerfRow rows", type(wrong[0]).__name__, where="rows"))
    if not wanted:
        # A new devlog of a title and an empty section would record no measurement, as
        # `report profile --rows` of an empty file refuses to.
        raise InputError(expected("at least one PerfRow", "none", where="rows"))
    return wanted


def update_devlog(
    path: str | os.PathLike[str], rows: Iterable[PerfRow], *, title: str | None = None
) -> DevlogUpdate:
    """Write ``rows`` into the ``## Performance`` section of the devlog at ``path``.

    Parameters
    ----------
    path : path-like
        The devlog (``docs/kernels/<kernel>.md``); created when missing.
    rows : iterable of PerfRow
        Rows to write; a row replaces the row of the same version and point measured on
        the same GPU (the GPU cell as written; ``-`` for none), and is appended beside
        the rows of other GPUs. Of several rows of one version, point and GPU, the last
        is written, where the first would stand, and reported once.
    title : str, optional
        The ``#`` title of a new file, one line; default the file name without ``.md``.

    Returns
    -------
    DevlogUpdate

    Raises
    ------
    InputError
        For a ``path`` that is not a str or path-like (or is empty), ``rows`` that are
        not an iterable of PerfRow (one PerfRow alone is refused too) or hold none, a
        ``title`` that is not one line of text, or a folder (or FIFO) at ``path``: all
        refused before anything is written or locked. Also for a devlog that is
        read-only (no write bit set, or none this user holds), which is left as it was,
        when the rows would change it (rows all there as written change nothing: the
        update is ``unchanged``).
    FormatError
        When a version's table has another header, holds two rows of a row's version,
        point and GPU (which one is current is the user's call), the file has two
        Performance section headings or the section two headings of a row's version
        (``## Performance (H200)`` and ``## Performance``: both lines are named), or a
        code fence or an HTML comment is left open (the file is left untouched).
    """
    # As Catalog.load checks its root: 3 or None would be a TypeError from pathlib.
    target = as_path(path, "path")
    where = str(target)
    wanted = _perf_rows(rows)
    _check_title(title)
    # The last of several rows of one (version, point, GPU) is the one the file keeps (a
    # benchmark's cold row, then its CUDA-graph row): only it is written and reported, at
    # the place the first held, so the update names each row of the file once, as it is.
    wanted = list({row.key: row for row in wanted}.values())
    if target.exists():
        # Refused before the lock is taken: a folder (or FIFO) there would otherwise get a
        # `<path>.lock` beside it from a run that writes nothing.
        require_file(target, "a devlog file", where="path")
    replaced: list[PerfRow] = []
    added: list[PerfRow] = []
    with locked(target):
        created = not target.exists()
        encoding = "utf-8"
        if created:
            text = f"# {title or target.stem}\n\n## {SECTION}\n"
        else:
            # Written back in the encoding it was read in (a UTF-16 devlog stays UTF-16).
            text, encoding = read_text_and_encoding(target, what="a devlog file")
        eol = _usual_line_end(text)
        lines = _lines(text)
        for row in wanted:
            (replaced if _upsert(lines, row, eol, where) else added).append(row)
        new = "".join(lines)
        if created or new != text:
            if not created:
                _refuse_read_only(target)
            atomic_write_text(target, new, encoding=encoding)
    return DevlogUpdate(
        path=target,
        replaced=tuple(replaced),
        added=tuple(added),
        created=created,
        unchanged=not created and new == text,
    )


def _number(cell: str, field: str) -> float | None:
    text = cell.strip().rstrip("%").strip()
    if text in (_MISSING, "", "—", "n/a"):
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(expected("a number or '-'", repr(cell), where=field)) from None


# The column of the table each PerfRow field is read from.
_COLUMN_OF = {
    "version": "Version",
    "point": "Point",
    "time": "Time",
    "unit": "Time",
    "tflop_s": "TFLOP/s",
    "gb_s": "GB/s",
    "floor_pct": "Of floor",
    "gpu": "GPU",
    "date": "Date",
}


def _parsed_row(cells: list[str]) -> PerfRow:
    """The PerfRow of a table row's cells; InputError naming the field that does not read."""
    if len(cells) != len(COLUMNS):
        raise InputError(
            expected(f"a row of {len(COLUMNS)} cells ({', '.join(COLUMNS)})", f"{len(cells)} cells")
        )
    time = _TIME.match(cells[2])
    if time is None:
        raise InputError(expected("a number and a unit (66.53 us)", repr(cells[2]), where="time"))
    return PerfRow(
        version=cells[0],
        point=cells[1],
        time=float(time.group("value")),
        unit=LATENCY_UNITS.get(time.group("unit"), time.group("unit")),
        tflop_s=_number(cells[3], "tflop_s"),
        gb_s=_number(cells[4], "gb_s"),
        floor_pct=_number(cells[5], "floor_pct"),
        gpu="" if cells[6] == _MISSING else cells[6],
        date="" if cells[7] == _MISSING else cells[7],
    )


def parse_performance(text: str, *, path: str | os.PathLike[str] | None = None) -> list[PerfRow]:
    """The rows of every version table in the ``## Performance`` section of ``text``.

    The section's heading may carry a note: ``## Performance (H200)``,
    ``## Performance — H200``, ``## Performance: H200``; it may be a setext heading
    (``Performance`` over a line of ``-``). Headings and tables in code fences and HTML
    comments are not read.

    Parameters
    ----------
    text : str
        A devlog's markdown.
    path : path-like, optional
        Where ``text`` came from, named in errors.

    Returns
    -------
    list of PerfRow
        In the order of the tables and their rows; empty without a Performance section.

    Raises
    ------
    InputError
        When ``text`` is not a str.
    FormatError
        For a table with another header, a cell that does not read, two Performance
        section headings (an annotated one such as ``## Performance (H200)`` counts), or
        a code fence or HTML comment left open.
    """
    require_text(text)
    where = path_label(path)
    lines = _lines(text)
    headings, hidden = _scan(lines, where)
    found = _section(lines, headings, where)
    if found is None:
        return []
    start, end = found
    rows = []
    for heading in headings:
        if not (start < heading.index < end and heading.level == 3):
            continue
        table = _table(
            lines, hidden, heading.index + 1, _end(headings, heading.index, 3, end), where
        )
        if table is None:
            continue
        for index in range(table[0] + 1, table[1] + 1):
            cells = split_row(lines[index])
            if _is_separator(cells):
                continue
            reading = _READING_FILE.set(True)
            try:
                rows.append(_parsed_row(cells))
            except InputError as error:
                # One "Expected X, got Y", naming the column a user edits, not the field.
                text = str(error)
                field, sep, message = text.partition(": ")
                column = _COLUMN_OF.get(field.removeprefix("PerfRow.")) if sep else None
                raise FormatError(
                    f"{column}: {message}" if column else text,
                    path=where,
                    line=index + 1,
                    section=SECTION,
                ) from None
            finally:
                _READING_FILE.reset(reading)
    return rows


def read_performance(path: str | os.PathLike[str]) -> list[PerfRow]:
    """:func:`parse_performance` of a devlog file.

    Parameters
    ----------
    path : path-like
        The devlog's markdown file.

    Returns
    -------
    list of PerfRow
        The rows of its Performance section's tables, in order; empty without one.

    Raises
    ------
    InputError
        When ``path`` is not a str or path-like, or there is no file at ``path``, a folder
        included (a devlog with no performance section reads as no rows).
    FormatError
        As :func:`parse_performance`, naming ``path``.
    """
    if not isinstance(path, str) or path:
        # As Catalog.load checks its root; an empty path is left to require_file, which
        # names the file it expected there.
        as_path(path, "path")
    require_file(path, "a devlog file", where="path")
    return parse_performance(read_text(path, what="a devlog file"), path=path)
