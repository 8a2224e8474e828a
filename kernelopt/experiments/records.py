"""Typed records of one experiment's outcome, as kernelopt writes and reads ``result.md``.

A :class:`ResultRecord` is what ``kernelopt.bench`` produces from its measurements and
what ``kernelopt.diagnose`` reads back; :mod:`kernelopt.experiments.canonical` turns it into
the canonical markdown and parses that markdown back exactly.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import attrs

from kernelopt._checks import breaks_lines, finite
from kernelopt._enum import TextEnum
from kernelopt._errors import InputError, expected
from kernelopt.experiments._validators import integer, mapping_of_text, one_of
from kernelopt.experiments._validators import text as _text

__all__ = ["MAX_EXPERIMENT", "Correctness", "ResultRecord", "ResultRow", "Status"]

MAX_EXPERIMENT = 99_999  # the largest experiment number the readers find as exp_N/
BOUNDS = ("memory", "compute")  # the ceilings a roofline floor is set by (Roofline.bound)


class Status(TextEnum):
    """What happened to the change an experiment tried."""

    BASELINE = "BASELINE"  # the reference point later experiments compare with
    KEPT = "KEPT"  # landed: a new best or a change worth keeping
    NEUTRAL = "NEUTRAL"  # within noise; kept or dropped without effect
    REVERTED = "REVERTED"  # measured, slower or not worth it, rolled back
    FAILED = "FAILED"  # did not build, crashed, or produced wrong results


class Correctness(TextEnum):
    """Whether the experiment's kernel computed the right function."""

    PASS = "PASS"
    FAIL = "FAIL"
    UNKNOWN = "UNKNOWN"


def _text_problem(
    value: str,
    *,
    one_line: bool = True,
    trimmed: bool = False,
    line_ends: bool = False,
    banned: tuple[str, ...] = (),
) -> str | None:
    """What ``value`` must be instead to be written and read back the same, or None.

    ``one_line``: the field is written on one line; otherwise only ``"\\r"`` is refused (a
    reader, and ``Path.read_text()``, turns it into ``"\\n"``). ``trimmed``: the field is read
    from a table cell or a list item, whose surrounding spaces are not kept. ``line_ends``:
    the field ends a line of the file, whose trailing spaces and tabs (a markdown hard
    break) the parser drops. ``banned``: substrings that separate fields where it is
    written.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "text that UTF-8 can encode (no lone surrogates)"
    if "\x00" in value:  # a NUL makes the readers skip the whole file as binary
        return "text without NUL characters"
    # The readers end lines at "\n" and "\r" (as Path.read_text() does), editors and
    # viewers at the other breaks str.splitlines() knows: none can sit in a one-line field.
    if one_line and breaks_lines(value):
        return "one line (no \\n, \\r, form feed, U+2028 or other line break)"
    if not one_line and "\r" in value:
        return "'\\n' line breaks only (a '\\r' reads back as '\\n')"
    if trimmed and value != value.strip():
        return "no leading or trailing spaces"
    if line_ends and any(line != line.rstrip(" \t") for line in value.split("\n")):
        return "no space or tab at the end of a line"
    if any(item in value for item in banned):
        return "no " + " or ".join(repr(item) for item in banned)
    return None


def _check_text(value: str, name: str, **rules: Any) -> None:
    problem = _text_problem(value, **rules)
    if problem is not None:
        raise InputError(expected(problem, repr(value)[:80], where=name))


def _str_tuple(value: Iterable[str]) -> tuple[str, ...]:
    # A lone string would become a tuple of its characters: ("s", "p", "l", ...).
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Iterable):
        raise InputError(expected("an iterable of strings", repr(value), where="tags"))
    items = tuple(value)
    # The readers keep each tag of an experiment once, so a repeat would not read back.
    return tuple(dict.fromkeys(items)) if all(isinstance(i, str) for i in items) else items


def _check_cell_text(value: str, name: str) -> None:
    """Refuse ``value`` unless a summary.md cell holding it reads back as ``value``: the
    readers drop inline markdown (code ticks, ``**``, ``__``, links) and squeeze spaces."""
    from kernelopt.experiments.readers._markdown import strip_md  # imports the records

    if strip_md(value) != value:
        raise InputError(
            expected(
                "text without inline markdown (`, **, __, [text](link)) or runs of spaces",
                repr(value)[:80],
                where=name,
            )
        )


def _optional_str_tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    # None: the record says nothing of the ideas tried (the readers find tags in its words).
    return None if value is None else _str_tuple(value)


def _tags(
    _instance: object, attribute: attrs.Attribute[tuple[str, ...] | None], value: Any
) -> None:
    if value is None:
        return
    if not all(isinstance(item, str) for item in value):
        raise InputError(expected("strings", repr(value), where=attribute.name))
    # Written as "a, b" in result.md and in a summary.md cell, read back split at commas.
    for item in value:
        if not item:
            raise InputError(expected("non-empty tags", repr(value)[:80], where=attribute.name))
        _check_text(item, attribute.name, trimmed=True, banned=(",", "|"))
        _check_cell_text(item, attribute.name)
        # "- Tags: none" in result.md declares no tags: as a tag, "none" would read back as
        # no tag at all.
        if item.lower() == "none":
            raise InputError(
                expected("a catalog id (no tags: an empty tuple)", repr(item), where=attribute.name)
            )


def _row_tuple(value: Iterable[ResultRow]) -> tuple[ResultRow, ...]:
    if not isinstance(value, Iterable) or isinstance(value, (str, ResultRow)):
        raise InputError(expected("an iterable of ResultRow", repr(value)[:80], where="rows"))
    return tuple(value)


def _rows(_instance: object, attribute: attrs.Attribute[tuple[ResultRow, ...]], value: Any) -> None:
    bad = next((row for row in value if not isinstance(row, ResultRow)), None)
    if bad is not None:
        raise InputError(expected("ResultRow items", type(bad).__name__, where=attribute.name))


def _nonempty(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InputError(expected("a non-empty string", repr(value), where=attribute.name))
    _check_text(value, attribute.name, banned=("|",))


def _title(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    # The "# Experiment N: title" line: its trailing blanks are read as none.
    _nonempty(_instance, attribute, value)
    _check_text(value, attribute.name, line_ends=True)


def _cell(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    # A Measurements table cell: read back stripped of its surrounding spaces.
    _nonempty(_instance, attribute, value)
    _check_text(value, attribute.name, trimmed=True)


def _line(_instance: object, attribute: attrs.Attribute[str], value: Any) -> None:
    # "- Date: ..." and "- Correctness: PASS (...)" lines; the date is a summary.md cell too.
    _text(nonempty=False)(_instance, attribute, value)
    _check_text(value, attribute.name)
    if attribute.name == "date":
        _check_text(value, attribute.name, trimmed=True, banned=("|",))
        _check_cell_text(value, attribute.name)


def _optional_text(_instance: object, attribute: attrs.Attribute[str | None], value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise InputError(expected("a string or None", repr(value), where=attribute.name))
    if value is not None:
        # An empty field is not written, so it would read back as None.
        if not value:
            raise InputError(expected("a non-empty string or None", "''", where=attribute.name))
        # A "- Kernel: ..." line: its trailing blanks are read as none.
        _check_text(value, attribute.name, line_ends=True)


def _verdict(_instance: object, attribute: attrs.Attribute[str | None], value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise InputError(expected("a string or None", repr(value), where=attribute.name))
    if value is None:
        return
    if not value or value != value.strip("\n"):
        # Written under "## Verdict", whose blank lines around it are not kept.
        raise InputError(
            expected(
                "a non-empty verdict without leading or trailing newlines",
                repr(value)[:80],
                where=attribute.name,
            )
        )
    # Its lines' trailing blanks are read as none.
    _check_text(value, attribute.name, one_line=False, line_ends=True)
    if any(line.startswith("## ") for line in value.split("\n")):
        raise InputError(
            expected(
                "no line starting with '## ' (it would start a new section)",
                repr(value)[:80],
                where=attribute.name,
            )
        )


def _notes(_instance: object, attribute: attrs.Attribute[str], value: Any) -> None:
    _text(nonempty=False)(_instance, attribute, value)
    _check_text(value, attribute.name, one_line=False)


def _number(value: Any) -> Any:
    # Written as repr(float(value)), so the record holds that float: 10**20 + 1 or
    # Fraction(1, 3) would otherwise read back as another number. What is no real number,
    # or too large for a float, is left for the validator to refuse.
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            return float(value)
        except (OverflowError, ValueError):
            return value
    return value


def _pairs_text(
    _instance: object, attribute: attrs.Attribute[dict[str, str]], value: dict[str, str]
) -> None:
    mapping_of_text()(_instance, attribute, value)
    # Rendered as "k=v, k=v" on one line: these characters would not read back.
    for key, text in value.items():
        bad = not key or "=" in key or any(sep in f"{key}{text}" for sep in (", ", "\n", "|"))
        if bad:
            raise InputError(
                expected(
                    "keys and values without '=' in keys, ', ', '|' or newlines",
                    repr(f"{key}={text}"),
                    where=attribute.name,
                )
            )
        # Each pair is read back stripped of its surrounding spaces.
        _check_text(key, attribute.name, trimmed=True)
        _check_text(text, attribute.name, trimmed=True)


def _above_zero(_instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    # The readers take no time or speedup at or below zero as measured (it would be the
    # best of every log), so a record holding one would not read back.
    if value is not None and not value > 0:
        raise InputError(expected("a number > 0", repr(value), where=attribute.name))


@attrs.frozen(kw_only=True)
class ResultRow:
    """One timed point of one implementation.

    Parameters
    ----------
    point : str
        The trial point in ``key=value`` words, e.g. ``"b=32 s=1 h=128 t=4096"``.
    impl : str
        Which implementation was timed (``"split_kv"``, ``"torch_eager"``).
    median : float
        Median per-call time, in ``unit``; above zero.
    p20, p80 : float, optional
        20th and 80th percentiles of the per-call time, at least zero, with
        ``p20 <= median <= p80``; None when the source recorded only a median (never
        filled in with a guess).
    unit : str
        ``"us"``, ``"ms"`` or ``"s"``.
    floor : float, optional
        The roofline floor of this point, in ``unit``: above zero, with ``floor / median``
        (:attr:`fraction_of_floor`) finite and above zero. A floor of 0 is refused, as is
        one whose share of the median overflows or underflows, naming the row's point and
        implementation (``floor: Expected a floor above 0 whose share of the median (floor
        / median) is finite, got floor=0.0 over median=10.0 (0.0) for point 'b=1', impl
        'triton'``).
    speedup : float, optional
        Baseline time over this time, above zero (> 1 is faster than the baseline).
    mode : str
        How it was timed: ``"cold"``, ``"hot"``, ``"graph"`` or ``"cpu"``.
    bound : str, optional
        Which ceiling sets ``floor``: ``"memory"`` (bytes at the copy bandwidth) or
        ``"compute"`` (FLOPs at the matmul rate), as ``Roofline.bound`` says; None where
        it is not known. Only with a floor.
    """

    point: str = attrs.field(validator=_cell)
    impl: str = attrs.field(validator=_cell)
    median: float = attrs.field(converter=_number, validator=[finite(), _above_zero])
    p20: float | None = attrs.field(
        default=None, converter=_number, validator=finite(minimum=0, optional=True)
    )
    p80: float | None = attrs.field(
        default=None, converter=_number, validator=finite(minimum=0, optional=True)
    )
    unit: str = attrs.field(validator=one_of(("ns", "us", "ms", "s")))
    floor: float | None = attrs.field(
        default=None, converter=_number, validator=finite(minimum=0, optional=True)
    )
    speedup: float | None = attrs.field(
        default=None, converter=_number, validator=[finite(optional=True), _above_zero]
    )
    mode: str = attrs.field(default="cold", validator=_cell)
    bound: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(one_of(BOUNDS))
    )

    def __attrs_post_init__(self) -> None:
        # The three are quantiles of one set of samples, so they come in this order; out
        # of it, one of them was typed or copied wrong, and no one can tell which.
        if self.p20 is not None and self.p80 is not None and self.p20 > self.p80:
            raise InputError(
                expected("p20 <= p80", f"p20={self.p20!r} > p80={self.p80!r}", where="p20")
            )
        if self.p20 is not None and self.median < self.p20:
            raise InputError(
                expected(
                    "p20 <= median", f"median={self.median!r} < p20={self.p20!r}", where="median"
                )
            )
        if self.p80 is not None and self.median > self.p80:
            raise InputError(
                expected(
                    "median <= p80", f"median={self.median!r} > p80={self.p80!r}", where="median"
                )
            )
        self._check_floor_share()
        # A ceiling names what sets a floor: with no floor, it would be read as the
        # kernel's bound with nothing measured against it.
        if self.bound is not None and self.floor is None:
            raise InputError(
                expected(
                    "a floor with the bound", f"bound={self.bound!r} without a floor", where="bound"
                )
            )

    def _check_floor_share(self) -> None:
        """Refuse a floor whose share of the median places the row nowhere on the roofline.

        A floor of 0 (worked out from bytes or FLOPs that came out 0), or one so far from
        the median that floor over median overflows to infinity or underflows to 0, is a
        roofline computed wrong: written, its row read as one with no floor, unsaid.
        """
        if self.floor is None:
            return
        share = self.floor / self.median
        if math.isfinite(share) and share > 0:
            return
        raise InputError(
            expected(
                "a floor above 0 whose share of the median (floor / median) is finite",
                f"floor={self.floor!r} over median={self.median!r} ({share!r}) "
                f"for point {self.point!r}, impl {self.impl!r}",
                where="floor",
            )
        )

    @property
    def fraction_of_floor(self) -> float | None:
        """Floor over median time: 1.0 means the kernel runs at the roofline; finite and
        above 0 (the row refuses any other floor), None for a row without a floor."""
        if self.floor is None or self.median <= 0:
            return None
        return self.floor / self.median


@attrs.frozen(kw_only=True)
class ResultRecord:
    """The outcome of experiment ``experiment``, the content of its ``result.md``.

    Parameters
    ----------
    experiment : int
        The experiment number N of ``exp_N/``.
    title : str
        One line saying what was tried.
    status : Status
        Whether the change was kept, reverted, neutral, failed, or is the baseline.
    correctness : Correctness
        PASS, FAIL or UNKNOWN.
    correctness_detail : str
        How correctness was established (``"rel err 1.8e-03 <= 1e-02 vs float64"``).
    date : str
        ISO-8601 date or timestamp of the measurement.
    kernel, baseline, gpu : str, optional
        The kernel (path or name), the baseline it is compared with, and the GPU name.
    versions : dict of str to str
        Software versions (``{"torch": "2.11.0", "triton": "3.6.0"}``).
    tags : tuple of str or None
        Catalog entry ids of the ideas the experiment tried, each kept once; no inline
        markdown (they are a summary.md cell too), and not ``none``. An empty tuple
        declares that the experiment tried none (written ``- Tags: none`` in result.md,
        and read back as such); None (the default) says nothing, writes no Tags line,
        and the log's readers find the tags in the experiment's words.
    knobs : dict of str to str
        Tuning knobs as written (``{"BLOCK_N": "64", "num_warps": "8"}``).
    rows : tuple of ResultRow
        The timed points; the first row is the headline number.
    verdict : str, optional
        The A/B verdict against the previous best, in words (``"FAST 0.62x ±1.1%"``).
    notes : str
        Free text; kept verbatim.
    """

    # The readers take exp_N folders of up to five digits (longer numbers are dates).
    experiment: int = attrs.field(validator=integer(minimum=0, maximum=MAX_EXPERIMENT))
    title: str = attrs.field(validator=_title)
    status: Status = attrs.field(converter=Status)
    correctness: Correctness = attrs.field(converter=Correctness)
    correctness_detail: str = attrs.field(default="", validator=_line)
    date: str = attrs.field(default="", validator=_line)
    kernel: str | None = attrs.field(default=None, validator=_optional_text)
    baseline: str | None = attrs.field(default=None, validator=_optional_text)
    gpu: str | None = attrs.field(default=None, validator=_optional_text)
    versions: dict[str, str] = attrs.field(factory=dict, validator=_pairs_text)
    tags: tuple[str, ...] | None = attrs.field(
        default=None, converter=_optional_str_tuple, validator=_tags
    )
    knobs: dict[str, str] = attrs.field(factory=dict, validator=_pairs_text)
    rows: tuple[ResultRow, ...] = attrs.field(default=(), converter=_row_tuple, validator=_rows)
    verdict: str | None = attrs.field(default=None, validator=_verdict)
    notes: str = attrs.field(default="", validator=_notes)

    @property
    def headline(self) -> ResultRow | None:
        """The first timed row, or None when nothing was timed."""
        return self.rows[0] if self.rows else None
