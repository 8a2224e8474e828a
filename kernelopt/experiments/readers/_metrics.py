"""Profiling facts in prose and tables: metric values, bottleneck statements, tool output.

The names match the metric vocabulary of :mod:`kernelopt.catalog` and :mod:`kernelopt.bench`
(``dram_pct``, ``tc_pct``, ``occupancy_pct``, ``arith_intensity``, ``ridge``, ``floor_pct``,
``l2_hit_pct``, ``regs_per_thread``, ``spill_bytes``, ``autotune_configs``, ``waves``) plus
two raw rates people write (``bandwidth_gbps``, ``tflops``). Each is read under its own name
(``dram_pct=85``, ``- tc_pct: 10``, ``| dram_pct | 85 |``) and in the words people use
(``DRAM: 85%``, ``DRAM%: 85``, ``TC%: 10``); ncu's ``DRAM Throughput`` share is ``dram_pct``,
and a result table's ``Of floor`` column (the share of the roofline floor reached, as
``kernelopt.bench`` writes it) is ``floor_pct``, in percent: a bare share up to
:data:`LARGEST_FLOOR_FRACTION` is a fraction (``0.78`` is 78 %), one with a ``%`` sign or
above it a percent (:func:`of_floor_is_percent`, the rule the floor readers share).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

import attrs

from kernelopt._errors import expected
from kernelopt._table_cells import split_row
from kernelopt.experiments.readers._markdown import strip_md
from kernelopt.experiments.readers._values import endless_number, number_at

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from collections.abc import Collection

    from kernelopt.experiments.log import SourceRef

__all__ = [
    "LARGEST_FLOOR_FRACTION",
    "FloorOverTime",
    "FloorShare",
    "bottleneck_of",
    "floor_share",
    "is_profiling_line",
    "metric_of_header",
    "metrics_of",
    "of_floor_is_percent",
    "prose_metrics",
    "read_floor_share",
    "share_expected",
    "stated_bottleneck",
    "table_metric",
    "tool_metrics",
    "written_half_unit",
]

# The shares a log states in percent, and the most each can be. TC% and DRAM% are shares of
# measured ceilings, which a call may pass (a read-only kernel can beat a copy's bandwidth),
# and a kernel may pass a loose roofline floor; occupancy and a hit rate cannot pass 100.
# No share is below 0.
_SHARE_MOST = {
    "tc_pct": math.inf,
    "dram_pct": math.inf,
    "floor_pct": math.inf,
    "occupancy_pct": 100.0,
    "l2_hit_pct": 100.0,
}


def share_expected(name: str, value: float) -> str | None:
    """What a value of the share ``name`` must be, when ``value`` is not that; else None.

    A share of the roofline floor must be above 0 and finite: a row at 0 % of its floor
    measured nothing of it, and the floor readers place no row for it (nor for an endless
    share, a floor of 1e308 over a time of 1e-308).
    """
    if name == "floor_pct":
        if 0 < value < math.inf:
            return None
        return "a finite share" if value > 0 or math.isnan(value) else "a share above 0"
    most = _SHARE_MOST.get(name)
    if most is None or 0 <= value <= most:
        return None
    return "a percentage >= 0" if math.isinf(most) else f"a percentage in [0, {most:g}]"


# A bare of-floor share up to this is a fraction (0.78, or 1.2 past a loose floor), above
# it a percent (78): a kernel runs near its floor or under it, never at 150 % of it.
LARGEST_FLOOR_FRACTION = 1.5


def of_floor_is_percent(value: float, cell: str) -> bool:
    """Whether the share of the roofline floor ``cell`` states (an ``Of floor`` cell) is a
    percent rather than a fraction.

    One rule for every reader of such a cell: with a ``%`` sign (``78.4%``, ``0.5 %``) it is
    a percent; a bare number above :data:`LARGEST_FLOOR_FRACTION` (``78``) is a percent
    too; a bare number up to it (``0.78``, ``1.2``) is a fraction of the floor.

    Parameters
    ----------
    value : float
        The number read from ``cell``.
    cell : str
        The cell as written.

    Returns
    -------
    bool
        True where ``value`` is in percent, False where it is a fraction.
    """
    return "%" in cell or value > LARGEST_FLOOR_FRACTION


@attrs.frozen
class FloorShare:
    """The share of its roofline floor one row reached, as :func:`floor_share` read it.

    Parameters
    ----------
    value : float
        The share as read: a percent where ``in_percent``, else a fraction of the floor.
    in_percent : bool
        Whether ``value`` is a percent (``78.4``) rather than a fraction (``0.784``).
    """

    value: float
    in_percent: bool

    @property
    def fraction(self) -> float:
        """The share as a fraction of the floor (0.784), as ``Experiment.floors`` hold it."""
        return self.value / 100.0 if self.in_percent else self.value

    @property
    def percent(self) -> float:
        """The share in percent (78.4), as ``floor_pct`` holds it."""
        if self.in_percent:
            return self.value
        # Scaled in decimal, as written: 0.57 * 100.0 is 56.99999999999999.
        return float(Decimal(repr(self.value)).scaleb(2))


# Float noise between a share worked out twice (``100 * floor / time`` against the digits
# of ``f"{floor / time:.1%}"``): far below any digit a table writes.
_FLOAT_SLACK = 1e-9


@attrs.frozen
class FloorOverTime:
    """A result row's floor over its time, as the row's floor and time cells state them.

    Parameters
    ----------
    fraction : float
        Floor over time as read (0.7842 for a floor of 35.76 us beside a time of 45.60 us).
    low, high : float
        The least and the most floor over time the two cells' written digits allow, each
        cell half a unit in its last digit off (0.7840 and 0.7844 for those cells); 0 and
        endless where a cell's digits are not known.
    """

    fraction: float
    low: float
    high: float

    def allows(self, percent: float, half_unit: float) -> bool:
        """Whether a share written as ``percent``, rounded to ``half_unit``, can be this
        floor over time: the two ranges the written digits allow meet.

        Parameters
        ----------
        percent : float
            The share an ``Of floor`` cell writes, in percent (``78.4``).
        half_unit : float
            Half a unit in the cell's last digit (0.05 for ``78.4``;
            :func:`written_half_unit`).

        Returns
        -------
        bool
            False only where no rounding of the three cells explains the difference.
        """
        least = 100.0 * self.low * (1.0 - _FLOAT_SLACK)
        most = 100.0 * self.high * (1.0 + _FLOAT_SLACK)
        slack = _FLOAT_SLACK * abs(percent)
        return percent + half_unit + slack >= least and percent - half_unit - slack <= most

    def percent_range(self) -> str:
        """The shares in percent the row's floor and time allow, to four significant
        digits: ``78.42%``, ``78.4% to 78.44%``, ``76.34% or more``."""
        low, high = f"{100.0 * self.low:.4g}%", f"{100.0 * self.high:.4g}%"
        if not math.isfinite(self.high):
            return f"{low} or more"
        return low if low == high else f"{low} to {high}"


# A number as a cell writes it (``35.76``, ``1,024``, ``0,075``, ``1.2e-05``), not inside a
# word or another number; its sign is left out (the unit of its last digit is the same).
_WRITTEN_NUMBER = re.compile(r"(?<![\w.,])(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")


def _plain_readings(written: str) -> tuple[str, ...]:
    """The decimal numbers ``written`` may be: its commas group thousands (``1,024``), or
    one is a decimal comma (``0,075``), as the cell readers take either."""
    if "," not in written:
        return (written,)
    if "." in written:
        return (written.replace(",", ""),)
    return (written.replace(",", ""), written.replace(",", "."))


def written_half_unit(text: str, value: float) -> float | None:
    """Half a unit in the last digit with which ``text`` writes ``value``: how far the
    number measured may be from the one written (``78.4`` stands for 78.35 to 78.45).

    Parameters
    ----------
    text : str
        A table cell as written (``"78.4 %"``, ``"35.76 us"``, ``"0.021%"``, ``"1.2e-05%"``).
    value : float
        The number read from it.

    Returns
    -------
    float or None
        0.05 for ``78.4``, 0.5 for ``78``, 5e-07 for ``1.2e-05``; None where ``text`` writes
        no number that reads as ``value``.
    """
    for match in _WRITTEN_NUMBER.finditer(text):
        for plain in _plain_readings(match.group(0)):
            try:
                written = Decimal(plain)
            except InvalidOperation:
                continue
            if written.is_finite() and float(written) == abs(value):
                return float(Decimal(5).scaleb(int(written.as_tuple().exponent) - 1))
    return None


def floor_share(
    value: float | None, cell: str, floor_over_time: FloorOverTime | None = None
) -> FloorShare | None:
    """The share of its roofline floor a result row reached: the one reading of an
    ``Of floor`` cell that the floor readers (``Experiment.floors``) and the metric readers
    (``floor_pct``) both take, so that they never disagree about one row.

    A share above 0 written with a ``%`` sign (``78.4%``) is a percent, as written, even
    where the row's floor over its time says another (a cell edited by hand, ``90 %``
    beside a floor of 35.76 us and a time of 45.60 us): the cell is what the row states
    as its share; :func:`read_floor_share` names the disagreement. Otherwise, where the row
    states a floor and a time in one unit, the share is floor over time: the row's own
    numbers say what a bare ``7.8``, ``0.78`` or ``78`` meant. Otherwise the cell is read
    by :func:`of_floor_is_percent`: a bare share up to :data:`LARGEST_FLOOR_FRACTION` is a
    fraction, above it a percent.

    Parameters
    ----------
    value : float or None
        The number read from ``cell``; None where it holds none (empty, or no sure reading).
    cell : str
        The ``Of floor`` cell as written (empty where the row or table has none).
    floor_over_time : FloorOverTime, optional
        The row's floor over its time, where it states both in one unit (see
        :func:`kernelopt.experiments.readers.floors.row_floor_over_time`).

    Returns
    -------
    FloorShare or None
        The share; None where the cell holds no number and the row no floor over a time. A
        share at or below 0 is returned as read, for the caller to refuse
        (:func:`read_floor_share` does).
    """
    if value is not None and value > 0 and "%" in cell:
        return FloorShare(value, in_percent=True)
    if floor_over_time is not None:
        return FloorShare(floor_over_time.fraction, in_percent=False)
    if value is None:
        return None
    return FloorShare(value, in_percent=of_floor_is_percent(value, cell))


def read_floor_share(
    header: str,
    cell: str,
    where: SourceRef,
    warnings: list[str],
    floor_over_time: FloorOverTime | None = None,
) -> FloorShare | None:
    """The share of its roofline floor one result row reached, or None, with the same
    warnings for the metric readers (``floor_pct``) and the floor readers
    (``Experiment.floors``): both read a row's ``Of floor`` cell here.

    Parameters
    ----------
    header, cell : str
        The ``Of floor`` column's header and the row's cell, as written (``""`` where the
        table has no such column).
    where : SourceRef
        The row's file and line, for the warnings.
    warnings : list of str
        Appended to, each "not read": a number of no sure reading (``1.234,5``), and a
        share no row can reach (at or below 0: ``Expected Of floor as a share above 0, got
        0``; or endless, in the cell, ``1e400 %``, or as the row's floor over its time).
        Appended to as well, the share still read: a cell with a ``%`` sign that no
        rounding of its digits, the floor's and the time's explains beside the row's floor
        over its time (``Expected Of floor near the row's floor over its time, 78.4% to
        78.44%, got 90 %; read as written``). A cell above 0 is read as written; one at or
        below 0 is no share, and the row's floor over its time is read instead.
    floor_over_time : FloorOverTime, optional
        The row's floor over its time, where it states both in one unit.

    Returns
    -------
    FloorShare or None
        The share (:func:`floor_share`); None where the row states none, or one refused.
    """
    written = strip_md(cell)
    # A number too large for a float is named here, with the cell as written ("1e400 %").
    value = number_at(written.rstrip("%"), where, warnings, finite=None)
    if value is None and endless_number(written.rstrip("%")) is not None:
        warnings.append(_not_read(header or "Of floor", "a finite share", written, where))
    share = floor_share(value, cell, floor_over_time)
    if share is None:
        return None
    unfit = share_expected("floor_pct", share.percent)
    if unfit is not None:
        # A cell left empty beside a floor and a time: the share is theirs.
        shown = written or f"a floor over time of {share.fraction:g}"
        warnings.append(_not_read(header or "Of floor", unfit, shown, where))
        return None
    if floor_over_time is not None and value is not None and "%" in written:
        said = _disagreement(header or "Of floor", written, value, floor_over_time, where)
        if said is not None:
            warnings.append(said)
    return share


def _disagreement(
    header: str, written: str, value: float, floor_over_time: FloorOverTime, where: SourceRef
) -> str | None:
    """The warning for a ``%`` cell that its row's floor over its time contradicts beyond
    the rounding of the digits written, or None where they agree."""
    half_unit = written_half_unit(written, value)
    if half_unit is None or floor_over_time.allows(value, half_unit):
        return None
    # A share at or below 0 is no share (floor_share): the row's floor over its time is.
    kept = "read as written" if value > 0 else "the floor over time is read instead"
    stated = f"{strip_md(header)} near the row's floor over its time, "
    return expected(stated + floor_over_time.percent_range(), written, where=str(where)) + (
        f"; {kept}"
    )


def _not_read(header: str, unfit: str, shown: str, where: SourceRef) -> str:
    """The warning for a share a table cell states that no row can reach."""
    return expected(f"{strip_md(header)} as {unfit}", shown, where=str(where)) + "; not read"


def table_metric(
    name: str,
    header: str,
    cell: str,
    where: SourceRef,
    warnings: list[str],
    *,
    floor_over_time: FloorOverTime | None = None,
) -> float | None:
    """The value of metric ``name`` in one table cell, or None where it has none to read.

    Parameters
    ----------
    name : str
        The metric the column holds (:func:`metric_of_header` of ``header``).
    header, cell : str
        The column's header and the row's cell, as written.
    where : SourceRef
        The row's file and line, for the warnings.
    warnings : list of str
        Appended to: a number of no sure reading (``1.234,5``), and a share no percentage
        can be (a TC%, DRAM%, Occ% or L2 hit rate below 0, an Of floor at or below 0, an
        occupancy or hit rate above 100), each "not read".
    floor_over_time : FloorOverTime, optional
        For a ``floor_pct``: the row's floor over its time, where it states both in one
        unit; the share is then read as the floor readers read it (:func:`floor_share`),
        and a ``%`` cell it contradicts is named (:func:`read_floor_share`).

    Returns
    -------
    float or None
        The value; None for an empty cell, one of no sure reading, or an impossible share.
        A ``floor_pct`` is in percent, read by :func:`read_floor_share` as the floor readers
        read it: a bare ``0.78`` is 78,
        and beside a floor of 35.7 us and a time of 45.6 us a bare ``7.8`` is 78.3.
    """
    if name == "floor_pct":
        share = read_floor_share(header, cell, where, warnings, floor_over_time)
        return None if share is None else share.percent
    value = number_at(strip_md(cell).rstrip("%"), where, warnings)
    unfit = None if value is None else share_expected(name, value)
    if unfit is None:
        return value
    # A share below 0 is a typo or a broken counter, not a reading: said and skipped, as a
    # number of no sure reading is.
    warnings.append(_not_read(header, unfit, strip_md(cell), where))
    return None


# A value may carry an exponent (``floor_pct: 7.8e1``, ``DRAM%: 1e400``, ``1e400% of the
# floor``): read whole, not as its mantissa (``1e400`` is no 1, ``1e-3%`` no 3 %), so that
# one past the largest float is named as endless rather than read small or passed over.
_N = r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
# Where a value ends: no digit follows, nor a decimal point and a digit (``1.2.3`` is no
# value), but a sentence's full stop may (``floor_pct=78.`` is 78, ``floor_pct=0.`` is 0).
_END = r"(?!\.?\d)"
# A value that opens a pattern starts a number, not the tail of a name ("FP16 TFLOPS" is no
# 16 TFLOP/s).
_V = rf"(?<![\w.]){_N}"
# The names this module reads, written as such with their value: "dram_pct=85",
# "- tc_pct: 10", "| occupancy_pct | 41 |" (a percentage's "%" may follow).
_OWN_NAMES = (
    "dram_pct",
    "tc_pct",
    "occupancy_pct",
    "l2_hit_pct",
    "floor_pct",
    "arith_intensity",
    "ridge",
    "regs_per_thread",
    "spill_bytes",
    "autotune_configs",
    "waves",
)
# ncu's DRAM share of peak, as its Speed-of-Light section prints it ("DRAM Throughput  %
# 85.21") or by its metric name. ncu's "Memory Throughput" (the busiest memory unit) and
# "Compute (SM) Throughput" (the busiest SM pipe) are other metrics, not read: neither is
# the DRAM share or the tensor-core share.
_NCU_DRAM = (
    r"(?:^[ \t]*DRAM Throughput[ \t]+%[ \t]+"
    r"|\b(?:gpu__dram_throughput|dram__throughput)\.avg\.pct_of_peak_sustained_(?:elapsed|active)"
    rf"`?[ \t]*(?:[:=|][ \t]*)?(?:%[ \t]*)?){_N}{_END}"
)
_METRICS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for name, pattern in (
        *((name, rf"(?<![\w.]){name}`?\s*(?:[:=|]\s*|\s+){_N}{_END}") for name in _OWN_NAMES),
        ("dram_pct", rf"\bdram\s*%\s*(?:[:=|]\s*)?{_N}{_END}"),
        ("tc_pct", rf"\btc\s*%\s*(?:[:=|]\s*)?{_N}{_END}"),
        ("dram_pct", _NCU_DRAM),
        (
            "dram_pct",
            rf"\bdram\s*(?:(?:%|throughput|util\w*|bandwidth|bw)\s*)?(?:[:=|]\s*)?(?:(?:about|~|≈)\s*)?"
            rf"{_N}\s*%",
        ),
        ("dram_pct", rf"{_V}\s*%\s*(?:of\s+)?(?:peak\s+)?dram\b"),
        (
            "tc_pct",
            rf"\b(?:tc|tensor[- "
            rf"]cores?)\s*(?:(?:%|util\w*|throughput)\s*)?(?:[:=|]\s*)?(?:(?:about|~|≈)\s*)?{_N}\s*%",
        ),
        ("tc_pct", rf"\bpct_of_peak\b[^\d\n]{{0,20}}{_N}\s*%"),
        ("occupancy_pct", rf"\boccupancy\b[^\d\n%]{{0,30}}{_N}\s*%"),
        ("occupancy_pct", rf"\bocc(?:%|\.)\s*(?:[:=|]\s*)?{_N}"),
        ("l2_hit_pct", rf"\bl2 hit(?: rate)?\b[^\d\n]{{0,20}}{_N}\s*%"),
        ("arith_intensity", rf"\barith(?:metic)?[ _-]intensity\b[^\d\n]{{0,20}}{_N}"),
        ("ridge", rf"\bridge(?: point)?\b[^\d\n]{{0,20}}{_N}"),
        ("floor_pct", rf"{_V}\s*%\s*of\s+(?:the\s+)?(?:roofline|floor)"),
        ("regs_per_thread", rf"{_V}\s*(?:regs?|registers)\s*(?:/|per)\s*thread"),
        ("spill_bytes", rf"{_V}\s*bytes?\s+(?:of\s+)?spill"),
        ("waves", rf"\bwaves?\s*[:=]\s*{_N}"),
        ("bandwidth_gbps", rf"{_V}\s*GB/s"),
        ("tflops", rf"{_V}\s*TFLOP(?:S|/s)\b"),
    )
)
_OWN_NAME_PATTERNS = frozenset(pattern for _, pattern in _METRICS[: len(_OWN_NAMES)])
# A value wanted, not measured: "target: dram_pct=90", "if tc_pct: 60".
_WANTED = re.compile(
    r"\b(?:target|goal|aim|expect\w*|want\w*|should|if|when|unless|trigger)\b", re.IGNORECASE
)
_NCU_PATTERN = re.compile(_NCU_DRAM, re.IGNORECASE | re.MULTILINE)
# A count is at most a few groups of digits long: an unbounded ``[\d,'’ ]*`` scanned a long
# run of "1 1 1 …" to its end from each of its digits.
_AUTOTUNE = re.compile(
    r"(\d[\d,'’ ]{0,24}\d|\d)\s+(?:[\w-]+\s+){0,3}?config(?:uration)?s\b", re.IGNORECASE
)
_HEADER_METRICS = (
    ("dram_pct", re.compile(r"^dram\s*%?$|^dram[_ ]pct$|^dram[_ ]util", re.IGNORECASE)),
    ("tc_pct", re.compile(r"^tc\s*%?$|^tc[_ ]pct$|^tensor[_ ]core", re.IGNORECASE)),
    ("occupancy_pct", re.compile(r"^occ(?:upancy)?\s*%?$|^occupancy[_ ]pct$", re.IGNORECASE)),
    ("l2_hit_pct", re.compile(r"^l2[_ ]hit", re.IGNORECASE)),
    ("arith_intensity", re.compile(r"^(?:ai|arith(?:metic)?[_ ]intensity)$", re.IGNORECASE)),
    # The share of the roofline floor reached, as kernelopt.bench heads it ("Of floor").
    (
        "floor_pct",
        re.compile(
            r"^(?:%\s*)?of\s+(?:the\s+)?(?:roofline\s+)?(?:floor|roofline)$"
            r"|^(?:roofline\s+)?floor\s*%$|^%\s*floor$|^floor[_ ]pct$",
            re.IGNORECASE,
        ),
    ),
)
# Triton's ``do_bench`` and torch's ``Event.elapsed_time`` time with CUDA events: a number
# they measured is as much a timing as one next to "CUDA events".
_TOOLS = re.compile(
    r"\bncu\b|\bnsight\b|\bnsys\b|\bprofil(?:e|er|ed|ing)\b|\broofline\b|\bcuda[- ]?events?\b"
    r"|\bdo_bench\b|\belapsed_time\b"
    r"|\bcudaEvent|\btorch\.cuda\.Event\b|\bclGetEventProfilingInfo\b|\bscoreboard\b|\bstall\b"
    r"|\bSpeedOfLight\b|\bsm__|\bl1tex__|\bdram__",
    re.IGNORECASE,
)
_BOUND = re.compile(
    r"\b(memory|compute|latency|bandwidth|launch|overhead)[- ]bound\b", re.IGNORECASE
)
_HEDGE = re.compile(
    r"\b(?:or|if|not|whether|maybe|possibly|might|could|unless|nor)\b[^.\n]{0,25}$", re.IGNORECASE
)
# What a profile says of a kernel that waits rather than streams, when it names no bound:
# too few CTAs or warps to fill the GPU ("The kernel is underfilled at the GPU level"),
# or warps stalled most on a scoreboard, waiting for loads to return ("Dominant stall
# reason: long scoreboard", ncu's warp-state sampling). A stated bound outranks them.
_LATENCY_CUE = re.compile(
    r"\bunder-?(?:filled|occupied)\b|\blatency[- ](?:limited|dominated)\b|"
    r"\bstall(?:[ _-]?reasons?)?\b[^\n]{0,12}?(?:long|short)[ _-]?scoreboard\b",
    re.IGNORECASE,
)
# A line that states the warp stall reason ncu sampled most: profiler output, as a metric's
# value is ("Dominant stall reason: `long scoreboard`").
_STALL_REASON = re.compile(
    r"\bstall(?:[ _-]?reasons?)?\s*(?:[:=|]|\bis\b|\bwas\b)\s*[`*]*\s*"
    r"(?:long|short)[ _-]?scoreboard\b",
    re.IGNORECASE,
)
_BOUND_CLASS = {
    "memory": "memory",
    "bandwidth": "memory",
    "compute": "compute",
    "latency": "latency",
    "launch": "latency",
    "overhead": "latency",
}


def _value(text: str) -> float:
    return float(re.sub(r"[,'’ ]", "", text))


# A rate stated as a device's limit, not a measurement: "Theoretical Adreno 663: ~30 GB/s",
# "peak 989 TFLOP/s", "the denominator (989 TFLOP/s)".
_LIMIT = re.compile(
    r"\b(?:peak|theoretical|spec(?:ified|s)?|max(?:imum)?|ceiling|denominator|nominal|rated)\b"
    r"[^\n]{0,40}$",
    re.IGNORECASE,
)
_RATES = frozenset({"bandwidth_gbps", "tflops"})
_CLAUSE = re.compile(r"[;,()\n]|\.\s")
_SENTENCE = re.compile(r"[;\n]|\.\s")


def _measured(name: str, pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first value ``pattern`` finds for metric ``name`` in ``text`` that states a
    measurement: not a device's limit for a rate, not a value wanted under its own name."""
    for match in pattern.finditer(text):
        # The words before the value in its own clause ("peak 989; we reach 412").
        before = text[max(0, match.start() - 60) : match.start()]
        clause = _CLAUSE.split(before)[-1]
        if name in _RATES and _LIMIT.search(clause):
            continue
        # "target: dram_pct=90, tc_pct=60": the wish governs its whole sentence.
        if pattern in _OWN_NAME_PATTERNS and _WANTED.search(_SENTENCE.split(before)[-1]):
            continue
        return match
    return None


def metrics_of(text: str) -> dict[str, float]:
    """Named metric values stated in ``text`` (the first value of each name wins); a rate
    stated as a device's limit (peak, theoretical) is not a measurement and is skipped."""
    found: dict[str, float] = {}
    for name, pattern in _METRICS:
        if name in found:
            continue
        match = _measured(name, pattern, text)
        if match is not None:
            found[name] = float(match.group(1))
    for line in text.split("\n"):
        if "autotun" in line.lower() and "autotune_configs" not in found:
            configs = _AUTOTUNE.search(line)
            if configs:
                found["autotune_configs"] = _value(configs.group(1))
    return found


def prose_metrics(
    text: str, where: str, warnings: list[str], known: Collection[str] = ()
) -> dict[str, float]:
    """:func:`metrics_of` ``text``, less the shares no percentage can be.

    A share read from prose is held to the rule a table's is (:func:`share_expected`): "0%
    of the floor" or "occupancy 140%" is no reading of the kernel, and is named in
    ``warnings`` ("not read") unless a table already gave that metric (``known``), whose
    value stands. So is any value past the largest float (``floor_pct: 1e400``,
    ``1e400% of the floor``, ``arith_intensity: 1e400``): no measurement is endless.

    Parameters
    ----------
    text : str
        The prose (a result's body or notes, profile.md outside its code blocks).
    where : str
        The file, named before each warning.
    warnings : list of str
        Appended to: each share left out.
    known : collection of str
        The metrics already read from a table.

    Returns
    -------
    dict of str to float
        The metrics the prose states that can be what they say.
    """
    return _readable(metrics_of(text), where, warnings, known)


def _readable(
    found: dict[str, float], where: str, warnings: list[str] | None, known: Collection[str]
) -> dict[str, float]:
    """``found`` less the values no measurement of their metric can be: a share out of its
    bounds (:func:`share_expected`) or a number past the largest float. Each left out is
    named in ``warnings`` ("not read"), unless ``known`` holds its metric (a table gave it)
    or ``warnings`` is None."""
    kept: dict[str, float] = {}
    for name, value in found.items():
        unfit = share_expected(name, value) or (None if math.isfinite(value) else "a finite number")
        if unfit is None:
            kept[name] = value
        elif warnings is not None and name not in known:
            said = expected(f"{name} as {unfit}", f"{value:g}", where=where)
            warnings.append(f"{said}; not read")
    return kept


def tool_metrics(
    text: str, where: str = "", warnings: list[str] | None = None, known: Collection[str] = ()
) -> dict[str, float]:
    """The metrics ``text`` states in a profiler's own output (ncu's ``DRAM Throughput  %
    85.21``), which is read inside code blocks too: that is where such output is pasted.

    Each value is held to the rules :func:`prose_metrics` holds prose to: a share out of its
    bounds or a number past the largest float (a ``DRAM Throughput`` of 309 digits) is left
    out.

    Parameters
    ----------
    text : str
        The file's text, code blocks included, or one line of it.
    where : str, optional
        The file, named before each warning.
    warnings : list of str, optional
        Appended to: each value left out, "not read", in the words :func:`prose_metrics`
        uses for the same value in the same file. None: left out unsaid.
    known : collection of str
        The metrics already read from a table: one of these left out is not named.

    Returns
    -------
    dict of str to float
        The metrics the output states that can be what they say.
    """
    match = _NCU_PATTERN.search(text)
    found = {"dram_pct": float(match.group(1))} if match else {}
    return _readable(found, where, warnings, known)


def metric_of_header(header: str) -> str | None:
    """The metric a table column header names (``"DRAM%"`` -> ``"dram_pct"``)."""
    clean = header.strip().strip("*").strip()
    for name, pattern in _HEADER_METRICS:
        if pattern.search(clean):
            return name
    return None


# A measurement: a number with a unit of time, share, rate, size or count, or a value given
# to a named metric (``achieved_occupancy=0.41``, ``sm__throughput.avg.pct 45.2``). A
# profiler named next to a version or a cache level ("workload-profile v1", "CUDA events,
# L2 flushed") measures nothing.
_MEASURED = re.compile(
    rf"{_V}\s*(?:[µu]s|ns|ms|s|%|[GT]i?B/s|[GT]FLOP/?s|[GT]FLOPS|cycles?|bytes?|[KMG]i?B"
    r"|regs?|registers|warps?|waves?|(?:(?:spill|bank|shared|global)\s*)?(?:requests?|stalls?"
    r"|conflicts?|transactions?|sectors?|instructions?|spills?))(?![A-Za-z_=])"
    # A value given to a named metric; trial-point axes (b=32, h_q=16), file:line references
    # (profile.md:12) and bookkeeping fields (Date: 2026-04-21, Step: 3) are not metrics.
    r"|(?<![\w.])(?!(?i:h_q|s_q|d_qk|t_max|seqlen|batch|date|step|exp|experiment|version"
    r"|commit|run|seed|line|page)\b)[A-Za-z_]\w{2,}\s*[=:]\s*[-+]?\d"
    # Metric names are bounded (the longest are about 80 characters): each "sm__" of a long
    # dotted run would otherwise scan to the run's end.
    r"|\b(?:sm|smsp|l1tex|lts|dram|gpu|gpc)__[\w.]{1,128}`?\s*(?:[=:]\s*)?[-+]?\d",
)


_NUMBER_CELL = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?%?$", re.IGNORECASE)


def _numeric_cells(line: str) -> int:
    """How many cells of a markdown table row are numbers (``| cuda-events | `2.54` |``)."""
    if not line.lstrip().startswith("|"):
        return 0
    # Split as the table readers split a row: an escaped pipe (``\|``) stays in its cell.
    cells = [c.strip("`*").strip() for c in split_row(line)]
    return sum(1 for cell in cells if _NUMBER_CELL.match(cell))


def is_profiling_line(line: str) -> bool:
    """True when ``line`` reports profiling data: a profiler or timer named next to a
    measurement (a number with a unit, a metric's value, or a table row of numbers whose
    header holds the units), or a metric with its value."""
    if _TOOLS.search(line) and (_MEASURED.search(line) or _numeric_cells(line) >= 2):
        return True
    if _STALL_REASON.search(line):
        return True
    return any(
        pattern.search(line)
        if pattern not in _OWN_NAME_PATTERNS
        else _measured(name, pattern, line) is not None
        for name, pattern in _METRICS
        if name not in {"bandwidth_gbps", "tflops"}
    )


# A cue ranks below any bound stated in words (a ``Bottleneck:`` line 0, prose 1).
_CUE_PRIORITY = 2


def bottleneck_of(text: str) -> tuple[str, int] | None:
    """The bottleneck ``text`` states (``"memory"``, ``"compute"``, ``"latency"``) and the
    0-based line it is on; hedged mentions ("or compute-bound") are skipped, and a
    ``Bottleneck:`` line wins over prose.

    Where no line names a bound, a kernel the text calls underfilled or under-occupied,
    or whose dominant warp stall is a scoreboard wait (``Dominant stall reason: long
    scoreboard``), is latency-bound: it waits on loads that too few warps hide.
    """
    stated = stated_bottleneck(text)
    return None if stated is None else (stated[0], stated[1])


def stated_bottleneck(text: str) -> tuple[str, int, bool] | None:
    """:func:`bottleneck_of`'s answer and whether it was read from a cue alone (an
    underfilled kernel, a scoreboard stall) rather than a bound stated in words."""
    candidates: list[tuple[int, int, str]] = []
    for number, line in enumerate(text.split("\n")):
        for match in _BOUND.finditer(line):
            if _HEDGE.search(line[: match.start()]):
                continue
            kind = _BOUND_CLASS[match.group(1).lower()]
            priority = 0 if "bottleneck" in line.lower() else 1
            candidates.append((priority, number, kind))
        cue = _LATENCY_CUE.search(line)
        if cue is not None and not _HEDGE.search(line[: cue.start()]):
            candidates.append((_CUE_PRIORITY, number, "latency"))
    if not candidates:
        return None
    candidates.sort()
    priority, number, kind = candidates[0]
    return kind, number, priority == _CUE_PRIORITY
