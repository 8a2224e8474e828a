"""Reading values out of the words people write in logs.

Latencies with units (``0.2054ms``, ``3.699 us -> 3.789 us``), speedups (``1.307x``),
throughputs (``12.4 cand/s``), pass markers (``PASS``, ``✓``, ``Pass: 12/12``,
``100/100 pass``), outcome words (``ACCEPTED``, ``ROLLBACK``, ``NEW BEST``, ``DISCARDED``),
dates, and tuning knobs (``BLOCK_N=64``, ``num_warps 8``, ``WG size 128``). Every function
returns None (or an empty result) when the text says nothing, never raises.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable

from kernelopt._errors import expected
from kernelopt.experiments.readers._markdown import strip_md
from kernelopt.experiments.records import Correctness, Status

__all__ = [
    "CYCLES",
    "CYCLE_UNITS",
    "KNOB_ALIASES",
    "LATENCY_UNITS",
    "MONTH_DAY",
    "NOT_A_YEAR",
    "RUN_TOGETHER_DATE",
    "TO_US",
    "UNDERSCORED_DATE",
    "Quantity",
    "after_arrow",
    "arrow_speedup",
    "correctness_note",
    "correctness_of",
    "cycle_tokens",
    "date_of",
    "endless_number",
    "first_stated",
    "headline_latency",
    "is_range",
    "knob_name",
    "knobs_of",
    "latency_tokens",
    "not_attempted",
    "number",
    "number_at",
    "speedup_tokens",
    "states_accuracy_failure",
    "status_of",
    "tally_only",
    "throughput_tokens",
    "unclear_number",
    "unit_of_header",
]

# Canonical latency units and the spellings people use.
LATENCY_UNITS: dict[str, str] = {
    "ns": "ns",
    "us": "us",
    "µs": "us",
    "μs": "us",
    "usec": "us",
    "ms": "ms",
    "msec": "ms",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "seconds": "s",
}
# Microseconds per canonical latency unit.
TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
CYCLES = "cycles"
"""The unit of a latency counted in clock cycles: no time, and no time converts to it
without the clock it ran at."""
# The spellings of a cycle count, as the canonical unit.
CYCLE_UNITS: dict[str, str] = {"cycle": CYCLES, "cycles": CYCLES, "clk": CYCLES, "clks": CYCLES}

_NUM = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
# ``(?:~\s*)?`` rather than ``~?\s*``: two spans of spaces side by side split a long run
# of spaces every way before failing (quadratic).
_NUMBER = re.compile(rf"^\s*(?:~\s*)?({_NUM})")
# A number inside prose: digits grouped by commas (``1,024``, ``0,075``, read like
# :func:`number`), starting where a number starts: not inside a word, a decimal or a comma
# group (``1.234,5``: no "5"; from each group of a long "1,1,1,…" the rest would be
# scanned), nor at a group of three digits after a space-grouped one (``1 234,5``: no
# "234,5").
_TOKEN = (
    r"(?<![\w.,])(?!(?<=\d )\d{3}(?!\d))"
    r"([-+]?(?:\d[\d,]*\d(?:\.\d+)?|\d(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?)"
)
# ``s`` alone is too common in prose ("5 s" vs "5 sequences"): only the explicit spellings.
_LATENCY = re.compile(rf"{_TOKEN}\s*(ns|us|µs|μs|usec|ms|msec|sec|secs|seconds)(?![\w/])")
_LATENCY_S = re.compile(rf"{_TOKEN}\s*(s)(?![\w/])")
_CYCLE_COUNT = re.compile(rf"{_TOKEN}\s*(cycles?|clks?)(?![\w/])", re.IGNORECASE)
_SPEEDUP = re.compile(rf"{_TOKEN}\s*[x×](?![\w])")
_THROUGHPUT = re.compile(
    rf"{_TOKEN}\s*((?:cand|tok|token|tokens|sample|samples|img|images|it|req|seq|fps|frames)/s|fps)\b"
)
# Not from inside a run of spaces: from each of them, a long run was scanned to its end
# (quadratic), and the split from the run's first space is the same one.
_ARROW = re.compile(r"(?:(?<!\s)|(?!\s))\s*(?:->|→|=>|⟶|-->)\s*")


class Quantity:
    """A number with its unit and where it sits in the text (``start`` offset, bold or not)."""

    __slots__ = ("bold", "start", "unit", "value")

    def __init__(self, value: float, unit: str, start: int, bold: bool) -> None:
        self.value = value
        self.unit = unit
        self.start = start
        self.bold = bold

    def __repr__(self) -> str:
        return f"Quantity({self.value!r}, {self.unit!r})"

    @property
    def microseconds(self) -> float:
        """The value in microseconds (latencies only)."""
        return self.value * TO_US.get(self.unit, 1.0)


_COMMA_NUMBER = re.compile(r"^(\s*(?:~\s*)?[-+]?)(\d[\d,]*)(\.\d+)?")
_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:,\d{3})+")


def _without_commas(text: str) -> str:
    """``1,234.5`` -> ``1234.5`` (thousands); ``0,075`` or ``3,5`` -> ``0.075``, ``3.5``
    (a decimal comma, as a European locale writes it)."""
    match = _COMMA_NUMBER.match(text)
    if match is None or "," not in match.group(2):
        return text
    lead, digits, fraction = match.group(1), match.group(2), match.group(3) or ""
    groups = digits.split(",")
    if fraction or _THOUSANDS.fullmatch(digits) or (len(groups) > 2 and len(groups[-1]) == 3):
        plain = digits.replace(",", "") + fraction  # also 1,23,456 (lakh grouping)
    elif len(groups) == 2:
        plain = digits.replace(",", ".")
    else:
        return text  # "1,23,4": neither; the number stops at the first comma
    return lead + plain + text[match.end() :]


# What may follow a number read from the start of a text and make it part of a longer one
# that has no single sure reading: another decimal or comma group (``1.234,5``, ``1,2,3``,
# ``1.2.3``), a digit separator (``1_000``, ``1'000``), or a group of three digits after a
# space (``1 234,5``, ``10 000``: thousands, or two numbers).
_CONTINUED = re.compile(r"[.,_'’]\d| \d{3}(?!\d)")
# ``270-276``, ``270 – 276``: a range, no one value (a date's ``2026-12-01`` is none).
_RANGE = re.compile(r"\s?[-–—]\s?(?:\d+(?:\.\d+)?|\.\d+)(?![\d.,]|\s?[-–—/:]\s?\d)")
# ``0x10``, ``0b101``, ``0o17``: a number in another base.
_BASE_PREFIX = re.compile(r"[xX][0-9a-fA-F]|[bB][01]|[oO][0-7]")


def _leading(text: str) -> tuple[re.Match[str] | None, str]:
    clean = _without_commas(text.replace("*", "").replace("`", ""))
    return _NUMBER.match(clean), clean


def unclear_number(text: str) -> str | None:
    """The number ``text`` starts with, as written, when its form has no single sure reading.

    :func:`number` refuses these rather than read a prefix of them (``1.234,5`` is not 1.234).

    Parameters
    ----------
    text : str
        A table cell or field value.

    Returns
    -------
    str or None
        The number as written (``"1.234,5"``, ``"1 234,5"``, ``"10 000"``, ``"1_000"``,
        ``"0x10"``, ``"1,2,3"``, ``"1.2.3"``), cut to 40 characters; None when ``text``
        starts with a number of one reading (``"1,024"``, ``"0,075 ms"``) or with none.
    """
    match, clean = _leading(text)
    if match is None:
        return None
    rest = clean[match.end() :]
    digits = match.group(1).lstrip("+-")
    continued = _CONTINUED.match(rest) is not None
    if continued and rest[0] == " " and (not digits.isdigit() or len(digits) > 3):
        continued = False  # "0.5 100": a space-grouped number opens with 1-3 digits only
    continued = continued or _RANGE.match(rest) is not None
    if not continued and not (digits == "0" and _BASE_PREFIX.match(rest)):
        return None
    written = text.replace("*", "").replace("`", "").strip()
    return re.split(r"\s{2,}|[|;]", written, maxsplit=1)[0][:40].strip()


def number(text: str) -> float | None:
    """The leading number of ``text`` (``"0.411"``, ``"~5.47 us"``, ``"58.063500000000005"``,
    ``"1,024"``; ``"0,075"`` with a decimal comma is 0.075).

    None when there is none, when it is out of range, and when its form has no single sure
    reading (see :func:`unclear_number`): ``"1.234,5"`` is not read as 1.234.
    """
    match, _ = _leading(text)
    if not match or unclear_number(text) is not None:
        return None
    value = float(match.group(1))
    return value if math.isfinite(value) else None


# A number as written at the start of a text, its digits grouped by commas or not.
_WRITTEN_NUMBER = re.compile(r"^\s*(?:~\s*)?([-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?)")


def endless_number(text: str) -> str | None:
    """The number ``text`` starts with, as written, when it is too large for a float.

    :func:`number` reads such a number as none (``1e999`` is no latency); this names it,
    so that a reader can say why a value it holds goes missing.

    Parameters
    ----------
    text : str
        A table cell or field value.

    Returns
    -------
    str or None
        The number as written (``"1e999"``, ``"-1e400"``, a 1 with 400 zeros), cut to 40
        characters; None when ``text`` starts with a finite number, with one of no single
        sure reading (:func:`unclear_number`), or with none.
    """
    match, _ = _leading(text)
    if match is None or math.isfinite(float(match.group(1))):
        return None
    if unclear_number(text) is not None:
        return None
    # Shown from the text itself, not from its commas read (``1,000e999`` as written).
    written = _WRITTEN_NUMBER.match(text.replace("*", "").replace("`", ""))
    return (match.group(1) if written is None else written.group(1))[:40]


def number_at(
    text: str, where: object, warnings: list[str], *, finite: str | None = "a finite number"
) -> float | None:
    """:func:`number` of ``text``, saying so when it refuses a number for its form or size.

    Parameters
    ----------
    text : str
        A table cell or field value.
    where : object
        Where ``text`` was written, shown as text (a ``SourceRef``: ``path:line``).
    warnings : list of str
        Gets a message naming the number and ``where`` when :func:`unclear_number` finds
        one, or :func:`endless_number` (``Expected a finite number, got 1e999; not read``),
        so that no value goes missing unsaid.
    finite : str or None
        What a number too large for a float should have been, in words; the warning reads
        ``Expected <finite>, got <number>``. None: not said here, for a caller that names
        such a number in its own words (an ``Of floor`` cell's ``1e400 %``).

    Returns
    -------
    float or None
        What :func:`number` returns.
    """
    value = number(text)
    if value is None:
        said = _not_read_number(text, finite)
        if said is not None:
            warnings.append(expected(said[0], said[1], where=str(where)) + "; not read")
    return value


def _not_read_number(text: str, finite: str | None) -> tuple[str, str] | None:
    """What :func:`number` refused in ``text`` and what it expected instead, as the pair
    ``(expected, got)``; None where ``text`` starts with no number to refuse, or with one
    too large for a float and ``finite`` is None."""
    written = unclear_number(text)
    if written is not None:
        what = "a number such as 1234.5, 1,234.5 or 0,075"
        if is_range(text):
            what = "one number, not a range"
        return what, repr(written)
    endless = endless_number(text)
    if endless is None or finite is None:
        return None
    return finite, endless


def is_range(text: str) -> bool:
    """Whether ``text`` opens with a range of numbers (``"270-276"``, ``"1.2 – 1.3 ms"``),
    which states no one value."""
    match, clean = _leading(text)
    return match is not None and _RANGE.match(clean, match.end()) is not None


def _bold_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\*\*[^*]+\*\*", text)]


def _token_value(token: str) -> float | None:
    """A number of :data:`_TOKEN` as a float, its commas read like :func:`number` reads them."""
    plain = _without_commas(token)
    if "," in plain:
        return None  # "1,23,4": no reading
    value = float(plain)
    return value if math.isfinite(value) else None


_SPREAD = re.compile(r"(?:±|\+/-|\+-)\s*(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?:\s*%)?")


def _quantities(
    pattern: re.Pattern[str], text: str, units: dict[str, str] | None
) -> list[Quantity]:
    spans = _bold_spans(text)
    # "57.9 ± 0.4 us": the spread is blanked out (positions kept), so that the unit after
    # it is read as the measurement's and the spread is no quantity of its own.
    clean = _SPREAD.sub(lambda m: " " * len(m.group(0)), text.replace("`", " "))
    found = []
    for match in pattern.finditer(clean):
        value = _token_value(match.group(1))
        if value is None:
            continue
        raw = match.group(2) if match.lastindex and match.lastindex >= 2 else "x"
        unit = units.get(raw.lower(), raw) if units is not None else raw
        bold = any(a <= match.start() <= b for a, b in spans)
        found.append(Quantity(value, unit, match.start(), bold))
    return found


def latency_tokens(text: str, *, allow_seconds: bool = False) -> list[Quantity]:
    """Every ``<number> <time unit>`` in ``text``, in order of appearance.

    Parameters
    ----------
    text : str
        A line of prose or a table cell.
    allow_seconds : bool, default False
        Read a bare ``s`` as seconds too (``"1.5 s"``), for a cell of a column of times;
        in prose ``"5 s"`` may be five of anything, so only ``sec``, ``secs`` and
        ``seconds`` are seconds there.

    Returns
    -------
    list of Quantity
        The times, each with its canonical unit (``"ns"``, ``"us"``, ``"ms"``, ``"s"``).
    """
    found = _quantities(_LATENCY, text, LATENCY_UNITS)
    if allow_seconds:
        found += _quantities(_LATENCY_S, text, LATENCY_UNITS)
        found.sort(key=lambda q: q.start)
    return found


def cycle_tokens(text: str) -> list[Quantity]:
    """Every ``<number> cycles`` in ``text`` (``"1520 cycles"``, ``"1,520 clk"``): counts
    of clock cycles, in unit :data:`CYCLES`."""
    return _quantities(_CYCLE_COUNT, text, CYCLE_UNITS)


def speedup_tokens(text: str) -> list[Quantity]:
    """Every ``<number>x`` in ``text`` (``"1.307x"``, ``"4.65×"``)."""
    return [q for q in _quantities(_SPEEDUP, text, None) if q.value > 0]


def throughput_tokens(text: str) -> list[Quantity]:
    """Every ``<number> <thing>/s`` rate in ``text`` (``"12.422 cand/s"``)."""
    return _quantities(_THROUGHPUT, text, None)


def _latency_reader(text: str) -> Callable[[str], list[Quantity]]:
    """The reader of the latencies ``text`` reports: its times where it states any, else its
    counts of clock cycles. A count beside a time is an aside (``"warmed up for 3 cycles"``,
    ``"3550 cycles at 1970 MHz"``), wherever it stands on the line; a line of counts only
    (``"3550 cycles"``) reports a latency in cycles."""
    return latency_tokens if latency_tokens(text) else cycle_tokens


def headline_latency(text: str) -> Quantity | None:
    """The latency a ``Result:`` line reports: the first bold one, else the new one (after
    the arrow) of its first clause that states one; a time where the line states any, a
    count of clock cycles only where it states no time.

    ``"0.2054 -> **0.2471ms (+20%)**. Min latency 0.039 -> 0.062ms"`` -> 0.2471 ms;
    ``"4100 -> 3550 cycles a key tile"`` -> 3550 cycles (unit :data:`CYCLES`, no time);
    ``"Warmed up for 3 cycles, then 0.2054 -> 0.2471 ms"`` -> 0.2471 ms.
    """
    measured = _latency_reader(text)
    tokens = measured(text)
    bold = [token for token in tokens if token.bold]
    if bold:
        return bold[0]
    for clause in re.split(r";|\.\s|\(|,\s(?=[A-Za-z])", text):
        found = measured(after_arrow(clause))
        if found:
            return found[0]
    return tokens[0] if tokens else None


def arrow_speedup(text: str, headline: Quantity | None = None) -> float | None:
    """The speedup a ``Result:`` line's own before/after states (``0.2228ms -> 0.2098ms``:
    1.062), when its first clause with an arrow has a time on each side (and, given a
    ``headline``, the time after the arrow is that headline); else None.

    The two times were measured for the same entry, so their ratio is its A/B, not a
    difference between runs. A bare number before the arrow takes the unit after it.
    Without an arrow, ``"**0.1969ms (-3.1% vs 0.2031)**"`` right after the ``headline``
    states the same A/B. A ``headline`` counted in clock cycles is compared with cycle
    counts only (``"4100 -> 3550 cycles"``: 1.155): no time converts to a count.
    """
    counts = headline is not None and headline.unit == CYCLES
    tokens = cycle_tokens if counts else latency_tokens
    for clause in re.split(r";|\.\s|\(|,\s(?=[A-Za-z])", text.replace("*", "")):
        parts = _ARROW.split(clause)
        if len(parts) != 2:
            continue
        after = tokens(parts[1])
        if not after:
            continue
        before = tokens(parts[0])
        if before:
            old = before[-1].microseconds
        else:
            bare = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*$", parts[0])
            if bare is None:
                continue
            old = float(bare.group(1)) * TO_US.get(after[0].unit, 1.0)
        new = after[0].microseconds
        if headline is not None and abs(new - headline.microseconds) > 1e-9 * new:
            return None
        if old > 0 and new > 0:
            return old / new
    return None if headline is None else _versus_speedup(text, headline)


# The change a result states right after its time, against the time it started from:
# "**0.1969ms (-3.1% vs 0.2031)**". A bare reference takes the headline's unit.
_VERSUS = re.compile(
    r"[\d.]+\s*[a-zµμ]*\s*\**\s*\(\s*([+\-−]?\d+(?:\.\d+)?)\s*%\s*vs\.?\s+"
    r"(\d+(?:\.\d+)?)(?![\d.%=])\s*([a-zµμ]+)?",
    re.IGNORECASE,
)


def _versus_speedup(text: str, headline: Quantity) -> float | None:
    """The speedup of ``"B (-3.1% vs A)"`` right after the headline B: A / B, when the
    stated change agrees with the two times (so A is what B was measured against)."""
    match = _VERSUS.match(text, headline.start)
    if match is None:
        return None
    unit = LATENCY_UNITS.get((match.group(3) or "").lower(), headline.unit)
    old = float(match.group(2)) * TO_US.get(unit, 1.0)
    new = headline.microseconds
    if old <= 0 or new <= 0:
        return None
    stated = float(match.group(1).replace("−", "-"))
    # Rounding in the log ("-1.0%" for -1.12 %) is tolerated; another reference is not.
    if abs(stated - (new / old - 1.0) * 100.0) > max(0.5, 0.25 * abs(stated)):
        return None
    return old / new


def after_arrow(text: str) -> str:
    """The part after the last arrow of ``"A -> B"`` (the new value), else ``text``."""
    parts = _ARROW.split(text)
    return parts[-1] if len(parts) > 1 else text


def unit_of_header(header: str) -> str | None:
    """The latency unit a column header names (``"Kernel_ms"``, ``"Mean (ms)"``)."""
    lowered = header.lower()
    for word in re.findall(r"[a-zµμ]+", lowered):
        if word in LATENCY_UNITS and word != "s":
            return LATENCY_UNITS[word]
    if re.search(r"\(s\)|_s\b|\bsec\b|\bseconds\b", lowered):
        return "s"
    return None


# --- correctness -------------------------------------------------------------------------

# Counts start where a run of digits does (from each digit of a long run, the run was
# scanned to its end) and are at most 18 digits (``int`` refuses 4,300 and more).
_FRACTION = re.compile(r"(?<!\d)(\d{1,18})\s*(?:/|of)\s*(\d{1,18})(?!\d)")
_FAIL_WORDS = re.compile(
    r"\bfail(?:s|ed|ing|ure|ures)?\b|✗|❌|✘|\bmismatch(?:es|ed)?\b|\bnan\b|\bincorrect\b"
    r"|\bwrong\b|\bruntime_error\b|\billegal\b|\bbroken\b|\bgarbage\b",
    re.IGNORECASE,
)
_PASS_WORDS = re.compile(
    r"\bpass(?:es|ed|ing)?\b|✓|✔|✅|\bok\b|\bexact\b|\bcorrect\b|\bbit[- ](?:exact|identical)\b"
    r"|\bmatch(?:es|ed)?\b|\bverified\b|\byes\b",
    re.IGNORECASE,
)
# A negation right before an outcome or verdict word turns it around ("NOT KEPT", "did
# not pass", "no NaN"); at most an adverb stands between ("not yet merged"). Searched in
# the few characters before the word only, so a long line is not scanned once per word.
_NEGATION = re.compile(
    r"(?:\b(?:not|no|never|without|zero)|n't|(?<![\d.])\b0(?:/\d+)?)\s+"
    r"(?:(?:yet|fully|all|really|been|be|quite|entirely|true)\s+)?$",
    re.IGNORECASE,
)
_NEGATION_REACH = 40
# Pass words whose negation is a failure ("not correct"); the others, negated, only leave
# the verdict open ("not verified", "not bit-exact" may still be within tolerance).
_STRONG_PASS = re.compile(r"pass|correct|match|ok|yes", re.IGNORECASE)


def _negated(text: str, start: int) -> bool:
    """Whether the word of ``text`` at ``start`` is negated by the words just before it."""
    return _NEGATION.search(text[max(0, start - _NEGATION_REACH) : start]) is not None


def first_stated(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of ``pattern`` in ``text`` that no negation turns around."""
    return next((m for m in pattern.finditer(text) if not _negated(text, m.start())), None)


def correctness_of(text: str) -> Correctness | None:
    """PASS/FAIL from a correctness cell or field (``"PASS"``, ``"12/12"``, ``"✓"``).

    Of ``"A -> B"``, the new verdict B counts. Fractions decide first (``"98/100 pass"``
    is a failure); then a failure word wins over a pass word, because one failing check
    fails the experiment. A negated word states the opposite, or nothing: ``"did not
    pass"`` fails, ``"no NaN"`` and ``"not verified"`` state no verdict.
    """
    clean = re.sub(r"(?<=\d),(?=\d{3})", "", text.replace("`", "").replace("*", ""))
    new = after_arrow(clean)
    # "FAIL -> PASS": the verdict after the arrow; "PASS (err 1e-3 -> 2e-3)": none there,
    # the arrow is inside the detail.
    return (_verdict(new) if new != clean else None) or _verdict(clean)


def _verdict(clean: str) -> Correctness | None:
    """The verdict of ``clean`` (no code ticks, bold or thousands commas), or None."""
    if not clean.strip():
        return None
    for match in _FRACTION.finditer(clean):
        passed, total = int(match.group(1)), int(match.group(2))
        window = clean[max(0, match.start() - 20) : match.end() + 20].lower()
        if (
            total > 0
            and passed <= total
            and ("pass" in window or "ok" in window or len(clean) < 16)
        ):
            return Correctness.PASS if passed == total else Correctness.FAIL
    opening = _opening_verdict(clean)
    if opening is not None:
        return opening
    if first_stated(_FAIL_WORDS, clean) is not None:
        return Correctness.FAIL
    passes = list(_PASS_WORDS.finditer(clean))
    if any(_STRONG_PASS.search(m.group(0)) and _negated(clean, m.start()) for m in passes):
        return Correctness.FAIL
    if any(not _negated(clean, m.start()) for m in passes):
        return Correctness.PASS
    return None


# A verdict that opens a field or cell ("PASS (NaN-free)", "✓ — rel err 2e-3", "FAIL: NaN"):
# the words after it are its note.
_OPENING_PASS = re.compile(r"^\s*(?:(?:pass(?:es|ed)?|ok)\b|[✓✔✅])", re.IGNORECASE)
_OPENING_FAIL = re.compile(r"^\s*(?:fail(?:s|ed|ure)?\b|[✗❌✘])", re.IGNORECASE)
# A second verdict in a note: FAIL in capitals or a cross mark anywhere ("PASS (fp32) / FAIL
# (bf16)"), or a failure verb opening a clause outside parentheses ("PASS at fp32; fails at
# bf16"). Words that tell of a failure ("after fixing a failing mask", "the previous run
# failed", "NaN-free") are the note's story, not a verdict on this run.
_NOTE_VERDICT = re.compile(r"\bFAIL(?:S|ED)?\b|[✗❌✘]")
_CLAUSE_FAIL = re.compile(
    r"(?:^|[;,/.]|\bbut\b|\band\b|\bexcept\b)[\s—–:-]*(?:fail(?:s|ed)?)\b", re.IGNORECASE
)


def _opening_verdict(clean: str) -> Correctness | None:
    """The verdict that opens ``clean`` when it decides the text, else None.

    An opening FAIL decides. An opening PASS decides unless its note states a second
    verdict of its own (a mixed text, where the failure wins as in :func:`_verdict`).
    """
    if _OPENING_FAIL.match(clean):
        return Correctness.FAIL
    opening = _OPENING_PASS.match(clean)
    if opening is None:
        return None
    note = clean[opening.end() :]
    if first_stated(_NOTE_VERDICT, note) is not None:
        return None
    if first_stated(_CLAUSE_FAIL, _outside_parentheses(note)) is not None:
        return None
    return Correctness.PASS


def _outside_parentheses(text: str) -> str:
    """``text`` with what parentheses enclose blanked out (an unclosed one runs to the end)."""
    depth = 0
    kept = []
    for char in text:
        if char == "(":
            depth += 1
        kept.append(" " if depth else char)
        if char == ")" and depth:
            depth -= 1
    return "".join(kept)


# The verdict word (or mark) that opens a correctness field or cell, and the dash, colon or
# comma that parts it from its words ("FAIL — rel err 0.6", "✗ NaN", "PASS: 12/12").
_LEADING_VERDICT = re.compile(
    r"^(?:(?:pass(?:es|ed)?|fail(?:s|ed|ure)?|unknown|ok)\b|[✓✔✅✗❌✘])\s*[:—–,-]?\s*",
    re.IGNORECASE,
)


def correctness_note(text: str) -> str:
    """The words a correctness field or cell ``text`` states with its verdict, on one line.

    Inline markdown goes, then the verdict word that opens the text, then the parentheses
    around what is left: ``"**FAIL** (variants are wrong by construction; timing only)"``
    gives ``"variants are wrong by construction; timing only"``, ``"✓"`` gives ``""``. Of
    ``"A -> B"`` whose B states a verdict (:func:`correctness_of` reads B), only B's words
    count; a text that opens with no verdict word is its own words (``"12/12 pass"``).
    """
    clean = strip_md(text)
    new = after_arrow(clean).strip()
    if new != clean and _verdict(new) is not None:
        clean = new
    words = _LEADING_VERDICT.sub("", clean, count=1).strip()
    if words.startswith("(") and _closes_at_end(words):
        words = words[1:-1].strip()
    return words


def _closes_at_end(text: str) -> bool:
    """Whether the parenthesis opening ``text`` is closed by its last character."""
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return index == len(text) - 1
    return False


# A failure of the numbers themselves stated in prose ("still fails strict parity",
# "wrong results"), as opposed to the bare word "fail" (a job, a build, a probe that failed).
_ACCURACY_FAIL = re.compile(
    r"\b(?:failed|fails|failing) (?:the )?(?:(?:strict|exact|numeric(?:al)?|bitwise|full) )?"
    r"(?:accuracy|correctness|tolerance|atol|rtol|parity|all \d+ trials)\b"
    r"|\b(?:accuracy|correctness|parity) (?:check )?(?:failed|fails|failure)\b|\btrue[- ]failing\b"
    r"|\bwrong (?:results?|outputs?|values?)\b|\bproduces? nans?\b|\bnans? in the output\b"
    r"|\bmismatch(?:es)? (?:vs|against|with) (?:the )?(?:reference|baseline)|\bexceeds? (?:the "
    r")?(?:atol|rtol|tolerance)\b",
    re.IGNORECASE,
)
# A pytest tally: "26 passed", "31 passed in 2.97s".
_TALLY = re.compile(r"\b\d+ passed(?: in \d+(?:\.\d+)?\s*s)?\b", re.IGNORECASE)


def states_accuracy_failure(text: str) -> bool:
    """Whether ``text`` says the kernel's numbers are wrong (``"still fails strict parity"``,
    ``"accuracy check failed"``, ``"wrong results"``), not merely that something failed."""
    return _ACCURACY_FAIL.search(text) is not None


def tally_only(text: str) -> bool:
    """Whether the verdict of ``text`` rests on a pytest tally alone (```26 passed`; probes``):
    without its ``N passed`` counts, nothing in it reads as a pass or a failure.

    A tally says a test suite passed, not that the experiment's outputs match: a failure
    the same record states outright outweighs it.
    """
    return _TALLY.search(text) is not None and correctness_of(_TALLY.sub(" ", text)) is None


# --- outcome -----------------------------------------------------------------------------

_STATUS_WORDS: tuple[tuple[Status, re.Pattern[str]], ...] = (
    (
        Status.FAILED,
        re.compile(
            r"\bcorrectness failure\b|\bdead end\b|\bcrash(?:ed|es)?\b|\bcompile error\b"
            r"|\bdid not (?:build|compile)\b|\bruntime_error\b|\bbuild failed\b",
            re.IGNORECASE,
        ),
    ),
    (
        Status.REVERTED,
        re.compile(
            r"\breverted\b|\brevert\b|\brollback\b|\brolled back\b|\bdiscard(?:ed)?\b|\brejected?\b"
            r"|\brefuted\b|\bregress(?:ion|ed)\b|\bfalsified\b|\bnot merged\b"
            r"|\bno change merged\b|\bnot pursu(?:ed|ing)\b",
            re.IGNORECASE,
        ),
    ),
    (
        Status.KEPT,
        re.compile(
            r"\bkept\b|\bkeep\b|\baccept(?:ed)?\b|\bnew best\b|\bmerged\b|\bpromoted?\b|\blanded\b"
            r"|\bcommitted\b|\bshipped\b",
            re.IGNORECASE,
        ),
    ),
    (
        Status.NEUTRAL,
        re.compile(
            r"\bneutral\b|\bflat\b|\bwithin noise\b|\bno (?:measurable "
            r")?(?:gain|change|improvement)\b"
            r"|\bno net\b|\bnoise\b|\bunchanged\b|\bno benefit\b",
            re.IGNORECASE,
        ),
    ),
    (Status.BASELINE, re.compile(r"\bbaseline\b", re.IGNORECASE)),
)


_BARE_FAIL = re.compile(r"\bfail(?:ed|s)?\b")


def status_of(
    text: str,
    *,
    allow_baseline: bool = True,
    failed_means_slower: bool = False,
    bare_fail: bool = True,
) -> Status | None:
    """The outcome an outcome cell, heading or status line states.

    The first outcome word wins (``"NEUTRAL, reverted"`` is NEUTRAL); a bare ``PASS`` says
    nothing about the outcome.

    Parameters
    ----------
    text : str
        ``"ACCEPTED — SUB-0.2ms ACHIEVED"``, ``"NEUTRAL, reverted"``, ``"ROLLBACK: ... DEAD END"``.
    allow_baseline : bool
        Whether the word "baseline" makes it the baseline (off for prose that merely
        compares with the baseline).
    failed_means_slower : bool
        Read a bare ``Failed`` as "tried and slower" (REVERTED) rather than FAILED; used for
        outcome columns next to measured times.
    bare_fail : bool
        Whether a bare "fail"/"failed" counts at all (off for free-text notes, where it
        usually describes something else than the experiment's outcome).
    """
    clean = " ".join(text.replace("*", "").replace("`", "").split()).lower()
    if not clean:
        return None
    positions: list[tuple[int, Status]] = []
    for status, pattern in _STATUS_WORDS:
        if status is Status.BASELINE and not allow_baseline:
            continue
        if status is Status.KEPT:
            # "NOT KEPT" is as clear an outcome as "REVERTED".
            kept = pattern.search(clean)
            if kept:
                turned = _negated(clean, kept.start())
                positions.append((kept.start(), Status.REVERTED if turned else Status.KEPT))
            continue
        match = first_stated(pattern, clean)
        if match:
            positions.append((match.start(), status))
    failed = first_stated(_BARE_FAIL, clean) if bare_fail else None
    if failed:
        positions.append(
            (failed.start(), Status.REVERTED if failed_means_slower else Status.FAILED)
        )
    if not positions:
        return None
    positions.sort(key=lambda item: item[0])
    return positions[0][1]


_NOT_ATTEMPTED = re.compile(
    r"\bnot attempted\b|\bsuperseded before\b|\bnot (?:run|measured|implemented)\b"
    r"|\bno code change\b|\bblocked\b|\bskipped\b|\bno (?:latency|numerical|performance) claim\b",
    re.IGNORECASE,
)


def not_attempted(text: str) -> bool:
    """True when ``text`` says the experiment changed or measured nothing."""
    return bool(_NOT_ATTEMPTED.search(text))


# --- dates -------------------------------------------------------------------------------

_DATE = re.compile(r"(?<!\d)(20\d{2})([-/.]?)(0[1-9]|1[0-2])\2(0[1-9]|[12]\d|3[01])(?!\d)")
_MM = r"(?:0[1-9]|1[0-2])"
_DD = r"(?:0[1-9]|[12]\d|3[01])"
# The month and day that follow a date's year: "-05-26" (also with "/" or "." between its
# parts, as ``_DATE`` reads them).
MONTH_DAY = rf"(?:-{_MM}-{_DD}|/{_MM}/{_DD}|\.{_MM}\.{_DD})(?!\d)"
# Placed right after the digits of an experiment's number ("exp 7"): they are the whole
# number, and no date's year. In "exp 2026-05-26" the "-05-26" after 2026 makes it a date.
NOT_A_YEAR = rf"(?!\d|{MONTH_DAY})"
# A date in a name that holds no dashes (a folder's, ``exp_2026_05_26``, ``exp_20260526``):
# a year of four digits, then a month (01-12) and a day (01-31), written with underscores
# or run together. Without a plausible month and day the digits are no date: "12_tiles"
# and "7_2" stay numbers with words after them.
UNDERSCORED_DATE = rf"\d{{4}}_{_MM}_{_DD}(?!\d)"
RUN_TOGETHER_DATE = rf"\d{{4}}{_MM}{_DD}(?!\d)"
_TIME = re.compile(r"\b([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?")
# The time zone after an ISO timestamp's time (and its fraction of a second, not kept):
# ``Z``, or an offset ``-05:00`` / ``+0530`` of up to 14 hours.
_ZONE = re.compile(r"(?:\.\d{1,9})?(Z|([-+])(0\d|1[0-4]):?([0-5]\d))(?![\w:])")


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
# "Apr 21, 2026" and "21 April 2026", as people date devlog entries.
_MONTH_DATE = re.compile(
    rf"(?<![\w.])(?:{_MONTH}\s+{_DAY},?|{_DAY}\s+{_MONTH},?)\s+(20\d{{2}})(?!\d)",
    re.IGNORECASE,
)


def _iso_date(year: int, month: int, day: int) -> str | None:
    try:
        return datetime.date(year, month, day).isoformat()
    except ValueError:  # "Apr 31": no such day
        return None


def _first_date(text: str) -> tuple[str, int] | None:
    """The first date of ``text`` written in digits (``2026-04-21``) or, failing that, with
    a month name, as ISO ``YYYY-MM-DD``, and where it ends."""
    match = _DATE.search(text)
    if match:
        return f"{match.group(1)}-{match.group(3)}-{match.group(4)}", match.end()
    for named in _MONTH_DATE.finditer(text):
        month = named.group(1) or named.group(4)
        day = named.group(2) or named.group(3)
        date = _iso_date(int(named.group(5)), _MONTHS.index(month[:3].lower()) + 1, int(day))
        if date is not None:
            return date, named.end()
    return None


def date_of(text: str) -> str | None:
    """The first date in ``text`` as ISO ``YYYY-MM-DD`` (``THH:MM[:SS]`` when a time follows,
    and the time zone an ISO timestamp states after it, ``Z`` or ``-05:00``, as written):
    ``2026-04-21``, ``2026/04/21``, ``20260421``, or with a month name (``Apr 21, 2026``,
    ``21 April 2026``) when no date in digits is there."""
    found = _first_date(text)
    if found is None:
        return None
    date, end = found
    rest = text[end : end + 40]
    clock = rest.lstrip(" T")
    time = _TIME.match(clock)
    if time:
        seconds = time.group(3) or "00"
        date += f"T{time.group(1)}:{time.group(2)}:{seconds}"
        # Only a timestamp written as ISO's (date "T" time) states a zone: "10:00-12:00"
        # after a date and a space is a span of hours.
        zone = _ZONE.match(clock, time.end()) if rest.startswith("T") else None
        if zone:
            date += (
                "Z" if zone.group(1) == "Z" else f"{zone.group(2)}{zone.group(3)}:{zone.group(4)}"
            )
    return date


# --- knobs -------------------------------------------------------------------------------

# NAME=VALUE, NAME = VALUE, NAME: VALUE (a number, a {set}, a bool); arrows keep the last.
# A name may hyphenate words onto it ("split-K=8"): read whole, it is the knob split-K, where
# its last word alone is K, a GEMM's reduction size.
_ASSIGN = re.compile(
    r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]{0,31}(?:-[A-Za-z0-9_]{1,31}){0,3})\s*(?:=|:)\s*"
    r"(\{[^}]{1,60}\}|\[[^\]]{1,60}\]|[-+]?\d+(?:\.\d+)?(?:\s*(?:->|→)\s*[-+]?\d+(?:\.\d+)?)*|True|False|true|false)"
)
# CAPS_NAME 64 (a compile-time constant written without '=').
_CAPS_SPACE = re.compile(
    r"(?<![\w.])([A-Z][A-Z0-9]*_[A-Z0-9_]+)\s+(\d+\b|\{[^}]{1,60}\}|\[[^\]]{1,60}\])"
)
# snake_name 16 (``num_splits 16``): the number right after the identifier, not a measure.
_SNAKE_SPACE = re.compile(
    r"(?<![\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\s+(\d+)(?![\w.%])(?!\s*(?:x\b|us\b|ms\b|µs\b))"
)
# "4 KV splits: 256 programs": the word after a count is bound to that count already.
_COUNTED = re.compile(r"(?<!\d)\d+\s+(?:[A-Za-z][\w-]*\s+)?$")
# How far before a knob :data:`_COUNTED` looks: a count and its word are short, and searching
# the whole text before each knob of a long line is quadratic.
_COUNTED_REACH = 80
# Knobs written as words (underscore spellings are caught as assignments above). Each
# optional separator carries the spaces after it: two spans of spaces side by side split a
# long run of spaces every way before failing (quadratic).
_PHRASES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        (
            "wg_size",
            r"\b(?:wg|work[ -]?group)[ -]?size(?:\s+sweep)?\s*(?:(?:=|:|of)\s*)?"
            r"(\{[^}]{1,40}\}|\d+)",
        ),
        ("block_size", r"\bblock[ -]size\s*(?:(?:=|:|of)\s*)?(\{[^}]{1,40}\}|\d+)"),
        ("tile_size", r"\btile[ -]size\s*(?:(?:=|:|of)\s*)?(\{[^}]{1,40}\}|\d+(?:x\d+)*)"),
        ("chunk_size", r"\bchunk[ -]size\s*(?:(?:=|:|of)\s*)?(\d+)"),
        ("group_size", r"\bgroup[ -]size\s*(?:(?:=|:|of)\s*)?(\d+)"),
        ("num_warps", r"\b(\d+)\s+warps\b|\bnum warps\s*(?:[=:]\s*)?(\d+)"),
        ("num_stages", r"\b(\d+)\s+(?:pipeline\s+)?stages\b|\bnum stages\s*(?:[=:]\s*)?(\d+)"),
        ("num_splits", r"\b(\d+)\s+(?:kv[ -]?)?splits\b|\bnum splits\s*(?:[=:]\s*)?(\d+)"),
        ("unroll", r"#pragma\s+unroll\s+(\d+)|\bunroll(?: factor)?\s*(?:[=:]\s*)?(\d+)"),
    )
)
# Lower-case identifiers count as knobs only when they look like tuning parameters.
_KNOB_WORDS = re.compile(
    r"^(?:num_|n_)?(?:warps?|stages?|splits?|blocks?|tiles?|threads?|ctas?|groups?|chunks?|unroll|"
    r"threshold|bucket|waves?|occupancy|kv_splits|num_kv_splits|split_kv?|splitk|group_m|block_[a-z]+|"
    r"tile_[a-z]+|chunk_[a-z]+|[a-z]*_size|vec(?:tor)?_?[a-z]*|launch_bounds|maxnreg)$"
)
_NOT_KNOBS = frozenset(
    {
        "http",
        "https",
        "commit",
        "date",
        "status",
        "result",
        "correctness",
        "pass",
        "fail",
        "note",
        "notes",
    }
)


# Spellings of one knob, read under one name: the count of KV splits is written
# ``splits=16``, ``n_splits=16``, ``kv_splits=16`` as often as ``num_splits=16`` or
# "16 KV splits", and an attempt that changes it is one change whatever the spelling.
KNOB_ALIASES = {
    "splits": "num_splits",
    "n_splits": "num_splits",
    "kv_splits": "num_splits",
    "n_kv_splits": "num_splits",
    "num_kv_splits": "num_splits",
}


def knob_name(name: str) -> str:
    """The one name of the knob ``name`` spells (``splits`` -> ``num_splits``); other names,
    and constants in capitals (``NUM_SPLITS``, the kernel's own), as written."""
    return KNOB_ALIASES.get(name, name)


def _last_value(value: str) -> str:
    """The value after the last arrow of a change (``32->64`` -> ``64``); when the arrow leads
    to a number of another kind (``T=32→0.2191``: a setting and what it measured), the
    setting before it."""
    value = value.strip()
    if "->" in value or "→" in value:
        steps = [step.strip() for step in re.split(r"->|→", value)]
        kinds = {"." in step for step in steps}
        value = steps[-1] if len(kinds) == 1 else steps[0]
    return value


def _is_knob_name(name: str) -> bool:
    """Whether an assigned ``name`` is a tuning knob: a CAPS constant (``BLOCK_T``) or a
    lower-case word that looks like one (``num_warps``; ``split-K`` as ``split_k``)."""
    if name.lower() in _NOT_KNOBS:
        return False
    if name.upper() == name and any(c.isalpha() for c in name):
        return True
    return bool(_KNOB_WORDS.match(name.lower().replace("-", "_")))


def _assigned_name(name: str, assignment: str) -> str | None:
    """The knob the assignment ``assignment`` of ``name`` (``split-K=8``) sets, or None.

    A hyphenated name is read whole where it is a knob (``split-K``, ``tile-M``); a
    phrase reads it otherwise (``block-size``, ``work-group-size``); else its last word
    is the knob, as before hyphens were read (``v2-BLOCK_T`` sets ``BLOCK_T``).
    """
    if "-" not in name:
        return name if _is_knob_name(name) else None
    if any(pattern.match(assignment) for _, pattern in _PHRASES):
        return None
    if _is_knob_name(name):
        return name
    last = name.rsplit("-", 1)[1]
    return last if _is_knob_name(last) else None


def knobs_of(text: str) -> dict[str, str]:
    """Tuning knobs named in ``text``: ``{"BLOCK_T": "128", "num_warps": "8", "wg_size": "128"}``.

    Names keep their spelling, hyphens included (``split-K=8`` is the knob ``split-K``),
    except phrases (``WG size 128``) which get snake_case names, and the spellings of the
    count of KV splits (``splits``, ``n_splits``, ``kv_splits``, ``num_kv_splits``, "4 KV
    splits"), which are all ``num_splits`` (:data:`KNOB_ALIASES`).
    """
    found: dict[str, str] = {}
    clean = text.replace("`", "").replace("*", "")
    for match in _ASSIGN.finditer(clean):
        assigned, value = match.group(1), match.group(2)
        name = _assigned_name(assigned, match.group(0))
        if name is None:
            continue
        plain_word = name.isalpha() and name.islower()
        colon = ":" in clean[match.end(1) : match.start(2)]
        before = clean[max(0, match.start(1) - _COUNTED_REACH) : match.start(1)]
        if plain_word and colon and _COUNTED.search(before):
            continue  # "4 KV splits: 256 programs" sets 4 splits, not 256
        found.setdefault(knob_name(name), _last_value(value))
    for match in _CAPS_SPACE.finditer(clean):
        found.setdefault(match.group(1), match.group(2))
    for match in _SNAKE_SPACE.finditer(clean):
        name = match.group(1)
        if name not in _NOT_KNOBS and _KNOB_WORDS.match(name):
            found.setdefault(knob_name(name), match.group(2))
    for name, pattern in _PHRASES:
        phrase = pattern.search(clean)
        if phrase:
            value = next((g for g in phrase.groups() if g), None)
            if value is not None:
                found.setdefault(name, value.replace(" ", ""))
    return found
