"""What one before/after measurement showed: the input of the LEARN step.

An :class:`Observation` pairs a :class:`~kernelopt.bench.Comparison` (the verdict) with
the numbers a knowledge entry cites: both times, the trial point, the GPU, the date, the
metrics measured on each side and where the measurements are kept. It is built

- from two :class:`~kernelopt.bench.BenchRow` of the same point (:func:`observe_rows`),
  or two JSONL files of them (:func:`observe_files`): with raw samples on both sides the
  verdict is :func:`kernelopt.bench.judge`'s (paired bootstrap against the same-version
  spread); without them it compares the ratio of medians with the spread the rows state
  (half their p20–p80 band): a change smaller than that spread, or one whose two bands
  overlap, is never FAST or SLOW, and rows of fewer than 4 samples, or without a band,
  state no spread to judge against (UNCLEAR);
- from a :class:`~kernelopt.bench.Comparison` that :func:`kernelopt.bench.compare`
  returned (:func:`observe_comparison`).

A version that failed correctness (a row's ``correctness`` FAIL) is refused on either
side: its time says nothing about the change, since it computes another function.
"""

from __future__ import annotations

import datetime
import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import attrs

from kernelopt._errors import InputError, expected
from kernelopt._fileio import require_file
from kernelopt._numbers_text import significant
from kernelopt.bench.compare import Comparison, Verdict, _check_fraction, _interval_verdict
from kernelopt.bench.measurement import UNIT_SECONDS
from kernelopt.bench.records import CORRECTNESS_WORDS, BenchRow, point_text, read_rows
from kernelopt.bench.trials import DEFAULT_POINTS, TrialPoint
from kernelopt.experiments.points import (
    AXIS_ALIASES,
    canonical_axis,
    point_terms,
    quoted_values,
    split_terms,
)
from kernelopt.experiments.records import Correctness
from kernelopt.workflow._fields import LISTED, listed, require_instance, require_str, str_items
from kernelopt.workflow._points import point_of, point_words
from kernelopt.workflow._rows import check_rows, measured_on

__all__ = [
    "Observation",
    "observe_comparison",
    "observe_files",
    "observe_rows",
    "select_row",
]

# judge() estimates the same-version spread from the baseline's even and odd samples.
_MIN_BASELINE_SAMPLES = 4

# How a verdict reached without paired samples is named (Observation.method starts so).
ROWS_METHOD = "ratio of medians against the rows' stated spread"
# How a verdict on the samples of two rows is named (Observation.method starts so).
UNPAIRED_METHOD = "unpaired bootstrap"
# judge()'s confidence and bootstrap draws, for rows judged by their samples.
_CONFIDENCE = 0.95
_RESAMPLES = 2000
# The most draws one block of resamples holds (16 MB of int64 indices).
_BOOTSTRAP_VALUES = 2_000_000

# What a row's correctness says of a version that computes the wrong function.
_FAILED = Correctness.FAIL.value


def _metric_values(value: object, *, where: str) -> dict[str, float]:
    """``value`` as metrics by name, refusing by name anything but a mapping of real
    numbers (``float("x")`` and ``dict(5)`` would fail unnamed, ``float(True)`` pass)."""
    if not isinstance(value, Mapping):
        raise InputError(
            expected("a mapping of metric names to numbers", type(value).__name__, where=where)
        )
    for name, number in value.items():
        if isinstance(number, bool) or not isinstance(number, numbers.Real):
            raise InputError(
                expected("a number", type(number).__name__, where=f"{where}[{name!r}]")
            )
    return {str(k): float(v) for k, v in value.items()}


def _metrics_before(value: Mapping[str, float]) -> dict[str, float]:
    return _metric_values(value, where="Observation.metrics_before")


def _metrics_after(value: Mapping[str, float]) -> dict[str, float]:
    return _metric_values(value, where="Observation.metrics_after")


def _knob_changes(value: Sequence[str]) -> tuple[str, ...]:
    found = str_items(value, where="Observation.knob_changes")
    for index, item in enumerate(found):
        require_str(item, where=f"Observation.knob_changes[{index}]")
    return found


def _knob_keys(knobs: object) -> tuple[str, ...]:
    """The config keys ``knobs`` names, refusing a str (one key is not a list of them),
    a non-iterable and non-str keys by the argument's name."""
    if isinstance(knobs, str | bytes) or not isinstance(knobs, Iterable):
        raise InputError(expected("knobs as a list of config keys", repr(knobs), where="knobs"))
    keys = tuple(knobs)
    for index, key in enumerate(keys):
        require_str(key, where=f"knobs[{index}]")
    return keys


def _correctness_word(value: object, where: str) -> str | None:
    """A correctness verdict as its word (``"PASS"``, ``"FAIL"``, ``"UNKNOWN"``) or None,
    refusing anything else by ``where``, as a row's ``correctness`` is refused."""
    word = value.value if isinstance(value, Correctness) else value
    if word is not None and word not in CORRECTNESS_WORDS:
        words = ", ".join(CORRECTNESS_WORDS)
        raise InputError(expected(f"one of {words} or None", repr(value), where=where))
    return None if word is None else str(word)


def _before_correctness(value: object) -> str | None:
    return _correctness_word(value, "Observation.before_correctness")


def _after_correctness(value: object) -> str | None:
    return _correctness_word(value, "Observation.after_correctness")


def _modes(value: Sequence[str]) -> tuple[str, ...]:
    found = str_items(value, where="Observation.other_modes")
    for index, item in enumerate(found):
        require_str(item, where=f"Observation.other_modes[{index}]")
    return found


def _text(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    require_str(value, where=f"Observation.{attribute.name}")


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise InputError(
            expected("a finite time > 0", value, where=f"Observation.{attribute.name}")
        )


@attrs.frozen(kw_only=True)
class Observation:
    """A before/after timing of one change at one trial point, judged.

    Parameters
    ----------
    comparison : Comparison
        The verdict (FAST, SLOW, SAME, UNCLEAR) and the numbers behind it.
    before, after : float
        Median time per call of the version without and with the change, in ``unit``.
    unit : str
        Time unit of ``before`` and ``after``.
    point : str
        The trial point in ``key=value`` words.
    gpu : str
        Device name; ``"cpu"`` for host-clock timings (as :func:`observe_rows` names
        rows that name no device).
    date : str
        ISO date of the later measurement; empty when its row has no timestamp.
    source : str
        Where the measurements are kept (the JSONL files), cited in evidence.
    before_label, after_label : str
        The two versions: implementation names, with ``@<commit>`` after each when one
        implementation was timed at two commits.
    metrics_before, metrics_after : dict of str to float
        Roofline metrics of each side (``dram_pct``, ``floor_pct``...), when measured.
    method : str
        How the verdict was reached, in words.
    knob_changes : tuple of str
        Tuning knobs that differ between the two sides (``"num_splits 8 -> 16"``).
    host_clock : bool
        Either side was timed with the host clock (CPU, the Triton interpreter), not CUDA
        events: its numbers say nothing about a GPU, and :func:`~kernelopt.workflow.learn`
        does not record them unless asked to.
    mode : str
        How both sides were timed (``"cold"``, ``"graph"``); empty when not known.
    other_modes : tuple of str
        The other ways the files timed the point, when none was chosen (``mode=``,
        ``--mode``) and the rows written last were judged; empty otherwise.
    before_correctness, after_correctness : str, optional
        The correctness verdict each side's row states (``"PASS"``, ``"UNKNOWN"``), None
        where it states none; :func:`~kernelopt.workflow.learn` refuses a side that
        says ``"FAIL"``.
    caveat : str
        What kept the rows from a verdict, in words (too few samples, no band, bands that
        overlap), when they were judged without paired samples; empty otherwise.
    notes : str
        What the rows' own notes say (``BenchRow.note``: ``"INVENTED numbers: no GPU"``),
        which :func:`~kernelopt.workflow.learn` writes under the evidence: the note both
        rows share once, else each side's (``before: ...; after: ...``); empty when
        neither row has one.
    """

    comparison: Comparison
    before: float = attrs.field(validator=_positive)
    after: float = attrs.field(validator=_positive)
    unit: str = "us"
    point: str
    gpu: str = ""
    date: str = ""
    source: str
    before_label: str = ""
    after_label: str = ""
    metrics_before: dict[str, float] = attrs.field(factory=dict, converter=_metrics_before)
    metrics_after: dict[str, float] = attrs.field(factory=dict, converter=_metrics_after)
    method: str = ""
    knob_changes: tuple[str, ...] = attrs.field(default=(), converter=_knob_changes)
    host_clock: bool = False
    mode: str = attrs.field(default="", validator=_text)
    other_modes: tuple[str, ...] = attrs.field(default=(), converter=_modes)
    before_correctness: str | None = attrs.field(default=None, converter=_before_correctness)
    after_correctness: str | None = attrs.field(default=None, converter=_after_correctness)
    caveat: str = attrs.field(default="", validator=_text)
    notes: str = attrs.field(default="", validator=_text)

    @property
    def verdict(self) -> Verdict:
        """The comparison's verdict."""
        return self.comparison.verdict

    @property
    def change_pct(self) -> float:
        """Relative change of the time, % (negative is faster)."""
        return (self.after / self.before - 1.0) * 100.0

    def metric_changes(self, *, min_change: float = 0.01) -> list[tuple[str, float, float]]:
        """The metrics measured on both sides that moved.

        The ones that did not move (the ridge, the arithmetic intensity of the same
        work) say nothing about what the change did.

        Parameters
        ----------
        min_change : float
            A metric moved when it changed by more than this fraction of the larger of
            its two absolute values (0.01: by more than 1 %).

        Returns
        -------
        list of (str, float, float)
            ``(name, before, after)`` of each metric that moved, by name.
        """
        moved = []
        for name in sorted(set(self.metrics_before) & set(self.metrics_after)):
            a, b = self.metrics_before[name], self.metrics_after[name]
            if abs(b - a) > min_change * max(abs(a), abs(b)):
                moved.append((name, a, b))
        return moved


def _today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def _spread(row: BenchRow) -> float:
    """Half the p20–p80 band over the median: the spread a row states for one call."""
    if row.p80 > 0 and row.p20 > 0 and row.p80 >= row.p20:
        return (row.p80 - row.p20) / (2.0 * row.median)
    return 0.0


def _judge_rows(
    before: BenchRow, after: BenchRow, *, min_effect: float, max_noise: float
) -> tuple[Comparison, str, str]:
    """The verdict of two rows, how it was reached, and what kept the rows from one
    (empty when nothing did): paired samples where both kept enough, else the rows' bands.
    """
    scale = UNIT_SECONDS[after.unit] / UNIT_SECONDS[before.unit]
    if min(len(before.samples), len(after.samples)) >= _MIN_BASELINE_SAMPLES:
        # Two rows are two runs: judge() would pair sample i of each as if one round had
        # timed both (compare's alternating rounds), which no row records.
        after_samples = [s * scale for s in after.samples]
        result = _judge_unpaired(
            before.samples, after_samples, min_effect=min_effect, max_noise=max_noise
        )
        method = (
            f"{UNPAIRED_METHOD} of {len(before.samples)} before and {len(after.samples)} "
            "after samples (two rows timed in separate runs, not in compare's alternating "
            "rounds: no sample has a pair in the other row)"
        )
        return result, method, ""
    comparison, caveat = _judge_bands(
        before, after, scale, min_effect=min_effect, max_noise=max_noise
    )
    return comparison, f"{ROWS_METHOD} ({_why_no_pairs(before, after)})", caveat


def _resampled_medians(rng: Any, values: Any, resamples: int) -> Any:
    """``[resamples]`` medians of ``values`` drawn again with replacement, in blocks of
    whole resamples so that a large row does not hold resamples x n draws at once."""
    import numpy as np

    n = len(values)
    rows = max(1, _BOOTSTRAP_VALUES // n)
    parts = []
    for start in range(0, resamples, rows):
        index = rng.integers(0, n, size=(min(rows, resamples - start), n))
        parts.append(np.median(values[index], axis=1))
    return np.concatenate(parts)


def _judge_unpaired(
    before: Sequence[float], after: Sequence[float], *, min_effect: float, max_noise: float
) -> Comparison:
    """Judge the samples of two rows timed in separate runs by :func:`kernelopt.bench.judge`'s
    rule, each row resampled on its own (no pairs).

    The interval is of the ratio of the two medians, from independent bootstrap draws of
    each row; the same-version spread, as judge estimates it without a second baseline
    timing, is that of the before row's even-indexed samples against its odd-indexed
    ones. The thresholds and the four verdicts are judge's. A drift between the two runs
    (clocks, another process) is in neither estimate: rows timed in one compare call are
    the surer verdict.
    """
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    tail = (1.0 - _CONFIDENCE) / 2.0
    ratios = _resampled_medians(rng, b, _RESAMPLES) / _resampled_medians(rng, a, _RESAMPLES)
    low, high = (float(v) for v in np.quantile(ratios, [tail, 1.0 - tail]))
    half = len(a) // 2
    even, odd = a[0 : 2 * half : 2], a[1 : 2 * half : 2]
    same = _resampled_medians(rng, odd, _RESAMPLES) / _resampled_medians(rng, even, _RESAMPLES)
    same_low, same_high = (float(v) for v in np.quantile(same, [tail, 1.0 - tail]))
    noise = max(abs(same_low - 1.0), abs(same_high - 1.0))
    threshold = max(noise, min_effect)
    return Comparison(
        verdict=_interval_verdict(low, high, threshold=threshold, noise=noise, max_noise=max_noise),
        ratio=float(np.median(b) / np.median(a)),
        ratio_low=low,
        ratio_high=high,
        noise=noise,
        threshold=threshold,
        confidence=_CONFIDENCE,
    )


def _judge_bands(
    before: BenchRow, after: BenchRow, scale: float, *, min_effect: float, max_noise: float
) -> tuple[Comparison, str]:
    """Judge two rows by their medians and p20–p80 bands, never more surely than
    :func:`kernelopt.bench.compare` would on the samples behind them.

    The threshold is the larger half band (over its median), at least ``min_effect``. A
    change beyond it is FAST or SLOW only when the two bands lie apart: bands that
    overlap share times both versions took, a difference compare's same-version spread
    of such runs calls noise. A row of fewer than 4 samples (judge
    needs 4 to estimate a spread) or without a band states no spread: UNCLEAR. The
    interval ``ratio_low``–``ratio_high`` is the span of ratios the two bands allow.

    Returns
    -------
    (Comparison, str)
        The verdict with ``pairs`` 0, and why the rows could not decide (empty when
        they did).
    """
    ratio = after.median * scale / before.median
    noise = max(_spread(before), _spread(after))
    threshold = max(noise, min_effect)
    banded = _has_band(before) and _has_band(after)
    low, high = ratio, ratio
    if banded:
        low = after.p20 * scale / before.p80
        high = after.p80 * scale / before.p20
    caveat = _no_spread(before, after)
    if caveat:
        verdict = Verdict.UNCLEAR
    elif ratio < 1.0 - threshold:
        verdict = Verdict.FAST if high < 1.0 else Verdict.UNCLEAR
    elif ratio > 1.0 + threshold:
        verdict = Verdict.SLOW if low > 1.0 else Verdict.UNCLEAR
    elif noise <= max_noise:
        verdict = Verdict.SAME
    else:
        verdict = Verdict.UNCLEAR
    if not caveat and verdict is Verdict.UNCLEAR and abs(ratio - 1.0) > threshold:
        caveat = _bands_overlap(before, after, scale, ratio)
    comparison = Comparison(
        verdict=verdict,
        ratio=ratio,
        ratio_low=low,
        ratio_high=high,
        noise=noise,
        threshold=threshold,
        pairs=0,
    )
    return comparison, caveat


def _has_band(row: BenchRow) -> bool:
    """Whether a row states its p20–p80 band (one written with its median alone does not)."""
    return row.p80 > 0 and row.p20 > 0


def _no_spread(before: BenchRow, after: BenchRow) -> str:
    """Why two rows state no spread to judge a change against, in words; empty if they do.

    A row that counts fewer samples than judge() needs to estimate a spread (one sample
    has a band of width 0, which is no quiet run), or that states no band, cannot tell a
    change from noise.
    """
    counts = {"before": before.n, "after": after.n}
    few = {side: n for side, n in counts.items() if 0 < n < _MIN_BASELINE_SAMPLES}
    if few:
        (side, n), *rest = few.items()
        held = f"the {side} row holds {n} sample{'s' * (n != 1)}"
        held += "".join(f" and the {other} row {count}" for other, count in rest)
        return (
            f"{held}, too few to state a spread (at least {_MIN_BASELINE_SAMPLES} a side, as "
            "kernelopt.bench.judge needs); measure longer, to at least "
            f"{_MIN_BASELINE_SAMPLES} samples (measure's min_samples and max_time_ms), first."
        )
    bare = [side for side, row in (("before", before), ("after", after)) if not _has_band(row)]
    if bare:
        return (
            f"the {' and '.join(bare)} row{'s' * (len(bare) > 1)} state{'s' * (len(bare) == 1)} "
            "no p20–p80 band, so no spread to judge the change against; write rows with "
            "row_from_measurement, which records the band, first."
        )
    return ""


def _bands_overlap(before: BenchRow, after: BenchRow, scale: float, ratio: float) -> str:
    """Why a change beyond the threshold is not FAST or SLOW: the rows' bands overlap."""
    unit = "µs" if before.unit == "us" else before.unit  # as LEARN writes times

    def band(row: BenchRow, factor: float) -> str:
        return f"{significant(row.p20 * factor)}–{significant(row.p80 * factor)} {unit}"

    return (
        f"the two rows' p20–p80 bands overlap (before {band(before, 1.0)}, after "
        f"{band(after, scale)}), so a change of {(ratio - 1.0) * 100.0:+.1f}% may be the "
        "spread's; time the two versions in alternation (kernelopt.bench.compare) first."
    )


def _why_no_pairs(before: BenchRow, after: BenchRow) -> str:
    """Why two rows are judged by their medians: which side kept no raw samples, or too few
    to pair (a slow interpreter run keeps 3)."""
    counts = {"before": len(before.samples), "after": len(after.samples)}
    if not any(counts.values()):
        return "no raw samples kept"
    short = [f"{side} {count}" for side, count in counts.items() if count < _MIN_BASELINE_SAMPLES]
    return (
        f"raw samples kept: {', '.join(f'{side} {count}' for side, count in counts.items())}; "
        f"pairing needs at least {_MIN_BASELINE_SAMPLES} on each side ({', '.join(short)})"
    )


def _without(config: Mapping[str, Any], knobs: Sequence[str]) -> dict[str, Any]:
    return {key: value for key, value in config.items() if key not in knobs}


def _check_rows(before: BenchRow, after: BenchRow, knobs: Sequence[str]) -> None:
    for name, row in (("before", before), ("after", after)):
        if not isinstance(row, BenchRow):
            raise InputError(expected("a BenchRow (read_rows)", type(row).__name__, where=name))
        if not (math.isfinite(row.median) and row.median > 0):
            raise InputError(expected("a row with a median time > 0", row.median, where=name))
    if before.op and after.op and before.op != after.op:
        raise InputError(expected("rows of the same operation", f"{before.op!r} and {after.op!r}"))
    if before.gpu and after.gpu and before.gpu != after.gpu:
        raise InputError(
            expected("rows measured on the same GPU", f"{before.gpu!r} and {after.gpu!r}")
        )
    for field in ("mode", "cache", "backend"):
        # A cold time against a graph replay (or an L2-flushed one against a hot one) moves
        # by the method, not by the change.
        a, b = getattr(before, field), getattr(after, field)
        if a and b and a != b:
            raise InputError(
                expected(f"rows timed the same way (same {field})", f"{a!r} and {b!r}")
            )
    first, second = _without(before.config, knobs), _without(after.config, knobs)
    if first != second:
        raise InputError(
            expected(
                "rows of the same trial point (name the tuning knobs that may differ)",
                f"{point_text(first)!r} and {point_text(second)!r}",
            )
        )


def _labels(before: BenchRow, after: BenchRow) -> tuple[str, str]:
    """The two versions' names: their implementations, told apart by their commits when
    one implementation was timed at two commits (``seesaw@a4f12d6 -> seesaw@5cf3dc7``)."""
    if before.impl != after.impl or not (before.commit and after.commit):
        return before.impl, after.impl
    if before.commit == after.commit:
        return before.impl, after.impl

    def short(commit: str) -> str:
        sha, dirty, _ = commit.partition("-dirty")
        return sha[:7] + dirty

    return f"{before.impl}@{short(before.commit)}", f"{after.impl}@{short(after.commit)}"


def observe_rows(
    before: BenchRow,
    after: BenchRow,
    *,
    source: str,
    knobs: Sequence[str] = (),
    min_effect: float = 0.01,
    max_noise: float = 0.05,
) -> Observation:
    """Judge ``after`` against ``before``, two rows of the same operation, point and GPU.

    The observation's device is the one the rows name; host-clock rows that name none
    (``mode: "cpu"`` written by hand) are recorded as timed on ``"cpu"``, as
    ``kernelopt.bench`` names the CPU.

    Parameters
    ----------
    before, after : BenchRow
        The version without and with the change.
    source : str
        Where the rows are kept, cited in evidence (``"runs/v2.jsonl vs runs/v3.jsonl"``).
    knobs : sequence of str
        Config keys that are tuning knobs, allowed to differ (``["num_splits"]``); every
        other config key must be equal on both sides.
    min_effect, max_noise : float
        As for :func:`kernelopt.bench.judge`: the smallest change that counts (0.01;
        below 1) and the largest spread under which SAME may be declared (0.05).

    Raises
    ------
    InputError
        For anything but two BenchRow, rows of different operations, GPUs or points, or
        without a median time; for a row of a version that failed correctness
        (``after: Expected a row of a version that passed correctness to learn from, got
        v3 with correctness FAIL (source: runs/a.jsonl)``); for a ``min_effect`` or
        ``max_noise`` that is not a finite number >= 0, or a ``min_effect`` of 1 or more.
    """
    knobs = _knob_keys(knobs)
    # Checked here, not only by judge(): without raw samples max(spread, nan) would drop
    # a NaN threshold silently.
    _check_fraction(min_effect, "min_effect")
    if min_effect >= 1.0:
        # No time falls 100 % or more: FAST would be impossible and any speedup "noise".
        raise InputError(expected("a fraction in [0, 1)", min_effect, where="min_effect"))
    _check_fraction(max_noise, "max_noise")
    _check_rows(before, after, knobs)
    for side, row in (("before", before), ("after", after)):
        _refuse_failed(row.correctness, where=side, impl=row.impl, place=f"(source: {source})")
    comparison, method, caveat = _judge_rows(
        before, after, min_effect=min_effect, max_noise=max_noise
    )
    scale = UNIT_SECONDS[after.unit] / UNIT_SECONDS[before.unit]
    labels = _labels(before, after)
    host_clock = before.host_clock or after.host_clock
    # Host-clock rows written by hand may name no device: name it "cpu", as kernelopt.bench
    # does, so the evidence row says where it was timed instead of leaving it out.
    gpu = after.gpu or before.gpu or ("cpu" if host_clock else "")
    return Observation(
        comparison=comparison,
        before=before.median,
        after=after.median * scale,
        unit=before.unit,
        # The name a benchmark gave the point, else its config's terms (as the devlog).
        point=point_of(_without(before.config, knobs)),
        gpu=gpu,
        date=measured_on(after),
        source=source,
        before_label=labels[0],
        after_label=labels[1],
        metrics_before=before.metrics,
        metrics_after=after.metrics,
        method=method,
        knob_changes=tuple(
            f"{key} {before.config.get(key, '-')} -> {after.config.get(key, '-')}"
            for key in knobs
            if before.config.get(key) != after.config.get(key)
        ),
        host_clock=host_clock,
        mode=before.mode,
        before_correctness=before.correctness,
        after_correctness=after.correctness,
        caveat=caveat,
        notes=_row_notes(before, after),
    )


def _row_notes(before: BenchRow, after: BenchRow) -> str:
    """The notes of two rows as one text: the shared note once, else each side's by name.

    A note says what else a reader must know of the timing (``"SIMULATED timing"``, a
    halved batch): evidence recorded from the rows without it reads as a plain
    measurement.
    """
    first, second = before.note.strip(), after.note.strip()
    if first == second:
        return first
    return "; ".join(
        f"{side}: {note}" for side, note in (("before", first), ("after", second)) if note
    )


def _refuse_failed(correctness: str | None, *, where: str, impl: str, place: str = "") -> None:
    """Refuse a side whose version failed correctness, naming ``where`` (the argument, or
    the file), the implementation and ``place`` (the observation's source).

    A version that computes another function is no faster or slower version of the
    kernel: its time teaches nothing about the change, and an evidence row or an
    anti-pattern built on it would mislead every later reader.
    """
    if correctness == _FAILED:
        raise InputError(
            expected(
                "a row of a version that passed correctness to learn from",
                " ".join(filter(None, (impl, "with correctness FAIL", place))),
                where=where,
            )
        )


# Rows' configs may name the trial axes otherwise (AXIS_ALIASES): decode benchmarks
# (benchmarks/mla_decode.py) write the draft tokens as s_q, the longest cache as t_max and
# the query heads as h_q.


# What a row that leaves a key out holds: benchmarks/mla_decode.py writes kv=fp8 for the
# FP8 cache and no kv key for the dense bfloat16 one.
UNSTATED_DEFAULTS: dict[str, tuple[str, ...]] = {"kv": ("dense", "bf16", "bfloat16")}


def config_key(config: Mapping[str, object], key: str) -> str | None:
    """The key of ``config`` that holds ``key``: itself, else another name of its axis
    (``h`` for ``h_q`` and ``h_q`` for ``h``); None if absent."""
    axis = canonical_axis(key)
    names = (key, axis, *AXIS_ALIASES.get(axis, ()))
    return next((name for name in names if name in config), None)


def config_matches(config: Mapping[str, object], terms: Mapping[str, str]) -> bool:
    """Whether a row's config holds every ``key=value`` term (axis aliases count).

    A term the config's values do not hold may be in the trial point the row states
    (``config["point"]``): ``t=~4096`` (lengths around 4096) matches a varlen row whose
    point reads ``t~4096`` while its config records ``t_max=5094``."""
    words: dict[str, str] | None = None  # the stated point, read only when needed
    for key, value in terms.items():
        name = config_key(config, key)
        if name is not None and _holds(name, config[name], value):
            continue
        if name is None and value in UNSTATED_DEFAULTS.get(key, ()):
            continue  # kv=bf16 matches the rows that name no cache format
        if words is None:
            stated = config.get("point")
            words = point_terms(stated) if isinstance(stated, str) else {}
        if words.get(canonical_axis(key)) != value:
            return False
    return True


# The config key under which a benchmark keeps its whole trial point, as text.
_WHOLE_POINT = "point"


def _holds(name: str, stated: object, asked: str) -> bool:
    """Whether a config's value ``stated`` (under key ``name``) is the ``asked`` one.

    A whole point (``config["point"]``) is compared as the point grammar reads it
    (:func:`_point_reading`): ``point="b=32  s=1 h=128 "`` or ``point="b = 32 s=1
    h_q=128"`` is the point ``b=32 s=1 h=128``, while ``b=320`` is not ``b=32`` and a
    quoted value inside keeps its spaces. Any other value is compared as written
    (``kv="fp8  e4m3"`` is not ``kv="fp8 e4m3"``).
    """
    written = str(stated)
    if written == asked:
        return True
    if name != _WHOLE_POINT or not isinstance(stated, str):
        return False
    reading = _point_reading(asked)
    return bool(reading) and reading == _point_reading(written)


def _point_reading(text: str) -> list[tuple[str, str, str]]:
    """The terms of a whole trial point as :func:`split_terms` reads them, axes by their
    canonical names and in one order: what every spelling of that point shares.

    Spaces, commas and semicolons between terms, spaces around ``=``, brackets around the
    point and the order of its terms fall away; the characters of each value, a quoted
    one's inner spaces included, stay. A term written twice stays twice, so that
    ``b=32 b=64`` is not read as either point.

    Examples
    --------
    >>> _point_reading("b = 32  s=1 h_q=128 ") == _point_reading("b=32 s=1 h=128")
    True
    >>> _point_reading("b=320 s=1") == _point_reading("b=32 s=1")
    False
    """
    return sorted((canonical_axis(key), sep, value) for key, sep, value in split_terms(text))


def _point_terms(point: str, *, where: str | None = "point") -> dict[str, str]:
    """The ``key=value`` terms of a point as :func:`select_row` takes it, or those of a
    trial's name.

    Parameters
    ----------
    point : str
        ``key=value`` terms (``"s=1,h=16"``, ``"t=~4096"``) or a trial name (``"decode"``).
        A value between double quotes is read whole (``kv="fp8 e4m3"``,
        ``point="b=32 s=1"``); an ``=`` outside quotes in a value is refused.
    where : str, optional
        What the point is, named before the error's words; None for none (a command-line
        converter, whose parser names the option).

    Returns
    -------
    dict of str to str
        Each value by the key as written.

    Raises
    ------
    InputError
        For a term without a value, a value holding ``=`` outside quotes (``s=,h=16``
        reads as s = ``h=16``), or an axis written twice (``b=32 b=64``, or ``h`` and its
        other name ``h_q``).
    """
    named = {p.name: p for p in DEFAULT_POINTS}
    if not isinstance(point, str):
        raise InputError(
            expected(
                f"a point as text: key=value terms or a trial name ({', '.join(sorted(named))})",
                type(point).__name__,
                where=where,
            )
        )
    if "=" not in point and "~" not in point and point.strip() in named:
        return {k: str(v) for k, v in named[point.strip()].as_dict().items()}
    terms: dict[str, str] = {}
    spelled: dict[str, str] = {}  # canonical axis -> the key that first named it
    for (key, sep, value), quoted in zip(split_terms(point), quoted_values(point), strict=True):
        # "s=" has no value, and "s=,h=16" reads as s = "h=16": either would match no row
        # and be reported as a point the rows lack rather than one mistyped. A quoted
        # value is read whole, "=" and all: point="b=32 s=1", as a config's point is
        # written (term_text), is the one term point = "b=32 s=1". A key holding a quote
        # ('"a=b"=c') leaves a value that is not all quoted, and is refused with it.
        if not sep or not key or not value or ("=" in value and not quoted):
            raise InputError(
                expected(
                    f"a point like 'b=32,s=1,t=4096' or a trial name ({', '.join(sorted(named))})",
                    repr(point),
                    where=where,
                )
            )
        axis = canonical_axis(key)
        if axis in spelled:
            # The later value replaced the first ("b=32 b=64" looked for b=64 alone), and
            # both names of one axis had to hold: either read as a point the rows lack.
            # The words are a profile heading's (parse_point), whose integer-only syntax
            # is read apart.
            both = "" if spelled[axis] == key else f", as {spelled[axis]} and {key}"
            raise InputError(
                expected(
                    "each axis of a trial point once",
                    f"{point!r} ({axis} twice{both})",
                    where=where,
                )
            )
        spelled[axis] = key
        terms[key] = value
    return terms


def select_row(
    rows: Sequence[BenchRow],
    *,
    point: str | None = None,
    impl: str | None = None,
    mode: str | None = None,
    where: str = "rows",
) -> BenchRow:
    """The row of one trial point (and implementation) among ``rows``; the last one if repeated.

    Parameters
    ----------
    rows : sequence of BenchRow
        Rows of a JSONL file.
    point : str, optional
        ``key=value`` terms the row's config must hold (``"s=1,h=16"``), or a trial name
        (``"decode"``, ``"speculative"``); needed when the rows hold several points.
    impl : str, optional
        The implementation; needed when the rows hold several at the point.
    mode : str, optional
        Keep the rows timed in this mode (``"cold"``, ``"graph"``): a benchmark that
        times each point several ways writes a row per way, and without ``mode`` the last
        one counts.
    where : str
        Name of the rows in messages.

    Raises
    ------
    InputError
        When ``rows`` are not BenchRow, or no row, or rows of several points or
        implementations, match.
    """
    return _select_row(rows, point=point, impl=impl, mode=mode, where=where, choose="impl=")


def _select_row(
    rows: Sequence[BenchRow],
    *,
    point: str | None,
    impl: str | None,
    mode: str | None,
    where: str,
    choose: str,
    choose_point: str = "point=",
) -> BenchRow:
    """:func:`select_row`, whose messages on several implementations and on several points
    name ``choose`` and ``choose_point``: the Python argument, or the option typed."""
    terms = {} if point is None else _point_terms(point)
    timed = [
        row
        for row in check_rows(rows, where)
        if (impl is None or row.impl == impl) and (mode is None or row.mode == mode)
    ]
    found = [row for row in timed if config_matches(row.config, terms)]
    if not found:
        _refuse_unmatched(timed, point=point, impl=impl, mode=mode, where=where, every=rows)
    points = _known_points(found)
    if len(points) > 1:
        raise InputError(
            expected(
                f"rows of one trial point (choose one with {choose_point})",
                listed(points, limit=LISTED),
                where=where,
            )
        )
    impls = sorted({row.impl for row in found})
    if len(impls) > 1:
        raise InputError(
            expected(
                f"rows of one implementation (choose one with {choose})",
                listed(impls, limit=LISTED),
                where=where,
            )
        )
    return found[-1]


def _known_points(rows: Sequence[BenchRow]) -> list[str]:
    """The trial points of ``rows`` as ``--point`` takes them, sorted: the names their
    benchmark gave them when these tell the rows apart, else their configs' terms."""
    points = sorted({point_text(row.config) for row in rows})
    names = sorted({point_of(row.config) for row in rows})
    return names if len(names) == len(points) else points


def _refuse_unmatched(
    timed: Sequence[BenchRow],
    *,
    point: str | None,
    impl: str | None,
    mode: str | None,
    where: str,
    every: Sequence[BenchRow] | None = None,
) -> NoReturn:
    """Raise the InputError of a selection no row matches.

    Parameters
    ----------
    timed : sequence of BenchRow
        The rows of the implementation and mode asked for (all rows when neither was).
    point, impl, mode : str, optional
        What was asked for, as :func:`select_row` takes it.
    where : str
        Name of the rows in messages.
    every : sequence of BenchRow, optional
        All the rows, before the implementation and mode were kept (default ``timed``):
        the implementations and modes they hold are named to choose from.

    Raises
    ------
    InputError
        ``Expected one of <the points of those rows>, got point <point>`` when rows of
        that implementation and mode exist but none is at ``point``; else ``Expected a row
        matching <what was asked>, got none (the rows hold impls [...], modes [...])``.
    """
    all_rows = timed if every is None else every
    chosen = ", ".join(
        f"{name} {value!r}" for name, value in (("impl", impl), ("mode", mode)) if value
    )
    if point and timed:
        # The points these rows hold are the ones the selection could have named.
        among = f" (the points of the rows of {chosen})" if chosen else ""
        raise InputError(
            expected(
                f"one of {listed(_known_points(timed))}{among}", f"point {point!r}", where=where
            )
        )
    shown = ", ".join(part for part in (f"point {point!r}" if point else "", chosen) if part)
    raise InputError(
        expected(
            f"a row matching {shown}" if shown else "at least one row",
            f"none{_what_rows_hold(all_rows, impl=impl, mode=mode)}",
            where=where,
        )
    )


def _what_rows_hold(rows: Sequence[BenchRow], *, impl: str | None, mode: str | None) -> str:
    """What ``rows`` hold of the implementation or mode no row matched, to choose from:
    ``" (the rows hold impls ['a', 'b'], modes ['cold', 'graph'])"``, or ``" (no rows)"``."""
    if not rows:
        return " (no rows)"
    held = []
    if impl is not None:
        held.append(f"impls {listed(sorted({row.impl for row in rows}))}")
    if mode is not None:
        held.append(f"modes {listed(sorted({row.mode for row in rows}))}")
    return f" (the rows hold {', '.join(held)})" if held else ""


def _cited_path(path: str | os.PathLike[str]) -> str:
    """How a measurement file is cited: relative to the working directory when it lies
    under it, else absolute, with ``.`` and ``..`` steps and doubled slashes taken out.

    ``./runs/a.jsonl``, ``runs//a.jsonl`` and ``/home/me/project/runs/a.jsonl`` (run in
    ``/home/me/project``) are all cited ``runs/a.jsonl``.

    Parameters
    ----------
    path : path-like
        The file, as given.

    Returns
    -------
    str
        The citation.
    """
    try:
        here = Path.cwd()
    except OSError:  # a working directory removed under the process: nothing to be under
        return str(Path(path))
    given = Path(os.path.normpath(here / path))
    real = Path(os.path.realpath(here / path))
    if Path(os.path.realpath(given)) != real:
        given = real  # `link/..` is not the folder holding the link: take the file itself
    # The working directory is its physical path: a file reached through a link to it is
    # under it only once resolved.
    for candidate in (given, real):
        if candidate.is_relative_to(here):
            return str(candidate.relative_to(here))
    return str(given)


def observe_files(
    before: str | os.PathLike[str],
    after: str | os.PathLike[str],
    *,
    point: str | None = None,
    before_impl: str | None = None,
    after_impl: str | None = None,
    mode: str | None = None,
    knobs: Sequence[str] = (),
    min_effect: float = 0.01,
    max_noise: float = 0.05,
) -> Observation:
    """:func:`observe_rows` of the matching rows of two JSONL files.

    The citation is ``"<before> vs <after>"`` (one path when both are the same file), each
    path relative to the working directory when the file lies under it, else absolute:
    ``./runs/a.jsonl``, ``runs/../runs/a.jsonl`` and its absolute path are one citation.

    Parameters
    ----------
    before, after : path-like
        BenchRow JSONL files of the version without and with the change (may be one file).
    point : str, optional
        The trial point to compare, as for :func:`select_row`; needed when the files hold
        several.
    before_impl, after_impl : str, optional
        The implementation to take from each file, as for :func:`select_row`.
    mode : str, optional
        The timing mode of both rows (``"cold"``, ``"graph"``), as for
        :func:`select_row`; needed to judge a way other than the one written last.
    knobs, min_effect, max_noise
        As for :func:`observe_rows`.

    Returns
    -------
    Observation
        The verdict with both times, the point, GPU and citation.

    Raises
    ------
    InputError
        For a missing file (or a folder in its place), rows that do not select one point
        (see :func:`select_row`), or a row chosen of a version that failed correctness
        (``bench.jsonl: Expected a row of a version that passed correctness to learn
        from, got the after row, v3, with correctness FAIL``).
    FormatError
        For a file that is not BenchRow JSONL.
    """
    # Checked as given: Path("") is the working directory, and an empty path names no file.
    for given, side in ((before, "before"), (after, "after")):
        require_file(given, "a BenchRow JSONL file", where=side)
    # Refused before the files are read, not after (observe_rows checks knobs again).
    knobs = _knob_keys(knobs)
    if point is not None:
        _point_terms(point)
    paths = (Path(before), Path(after))
    files = [read_rows(path) for path in paths]
    first, second = (
        _select_row(
            rows,
            point=point,
            impl=impl,
            mode=mode,
            where=str(path),
            choose=f"--{side}-impl ({side}_impl=)",
            choose_point="--point (point=)",
        )
        for rows, path, impl, side in zip(
            files, paths, (before_impl, after_impl), ("before", "after"), strict=True
        )
    )
    # Named by its file, as a row the selection cannot find is: the message reads the
    # same from observe_files and from `kernelopt learn`.
    for row, path, side in zip((first, second), paths, ("before", "after"), strict=True):
        _refuse_failed(row.correctness, where=str(path), impl=f"the {side} row, {row.impl},")
    _check_same_mode(first, second, paths, mode)
    same = paths[0].resolve() == paths[1].resolve()
    # Cited in one spelling, so that LEARN run again with ./a.jsonl for a.jsonl, or with
    # an absolute path, finds the row it wrote from the same files.
    cited = [_cited_path(path) for path in paths]
    source = cited[0] if same else f"{cited[0]} vs {cited[1]}"
    seen = observe_rows(
        first, second, source=source, knobs=knobs, min_effect=min_effect, max_noise=max_noise
    )
    if mode is not None:
        return seen
    others = _other_modes(files[0], first) + _other_modes(files[1], second)
    return attrs.evolve(seen, other_modes=tuple(sorted(set(others) - {first.mode})))


def _other_modes(rows: Sequence[BenchRow], chosen: BenchRow) -> list[str]:
    """The ways ``rows`` also timed the chosen row's implementation at its point: the
    ones left out when the row written last was judged without a mode."""
    return [
        row.mode
        for row in rows
        if row.impl == chosen.impl and row.config == chosen.config and row.mode != chosen.mode
    ]


def _check_same_mode(
    first: BenchRow, second: BenchRow, paths: Sequence[Path], mode: str | None
) -> None:
    """Refuse the rows of two files timed two ways, naming each file's way and the option.

    Without ``mode`` each file's row of the point is the one written last, so a file that
    ends a point with its cold row and one that ends it with its CUDA-graph row would pit
    one timing method against the other; observe_rows refuses that too, but without
    naming the files or saying how to pick one way.
    """
    if mode is not None or not (first.mode and second.mode) or first.mode == second.mode:
        return
    raise InputError(
        expected(
            "rows timed the same way (choose the mode with --mode (mode=))",
            f"{first.mode!r} in {paths[0]} and {second.mode!r} in {paths[1]}, the rows of "
            "the point written last",
        )
    )


def observe_comparison(
    comparison: Comparison,
    *,
    point: str | Mapping[str, object] | TrialPoint,
    source: str,
    gpu: str | None = None,
    date: str | None = None,
    before_label: str = "",
    after_label: str = "",
    metrics_before: Mapping[str, float] | None = None,
    metrics_after: Mapping[str, float] | None = None,
    before_correctness: Correctness | str | None = None,
    after_correctness: Correctness | str | None = None,
) -> Observation:
    """An observation of what :func:`kernelopt.bench.compare` returned.

    Parameters
    ----------
    comparison : Comparison
        With its ``baseline`` and ``candidate`` measurements (``compare`` attaches them).
    point : str, mapping or TrialPoint
        Where it was measured.
    source : str
        Where the measurements are kept, cited in evidence.
    gpu : str, optional
        Default the measurements' GPU.
    date : str, optional
        Default today (UTC).
    before_label, after_label : str
        The two versions.
    metrics_before, metrics_after : mapping, optional
        Roofline metrics of each side.
    before_correctness, after_correctness : Correctness or str, optional
        The correctness verdict of each version (``"PASS"``, ``"FAIL"``, ``"UNKNOWN"``),
        as :func:`kernelopt.bench.write_experiment` takes it; None where not known.

    Raises
    ------
    InputError
        For anything but a Comparison, one that carries no measurements, a point that
        is none of a str, a mapping or a TrialPoint, a correctness other than PASS, FAIL,
        UNKNOWN or None, or a version that failed correctness (``after_correctness:
        Expected a row of a version that passed correctness to learn from, got split_kv
        with correctness FAIL (source: experiments/exp_1/result.md)``).
    """
    require_instance(
        comparison, Comparison, "a Comparison (kernelopt.bench.compare)", where="comparison"
    )
    if not isinstance(point, (str, Mapping, TrialPoint)):
        raise InputError(
            expected(
                "a point as a str, a mapping or a TrialPoint", type(point).__name__, where="point"
            )
        )
    for name, metrics in (("metrics_before", metrics_before), ("metrics_after", metrics_after)):
        if metrics is not None:
            _metric_values(metrics, where=name)
    verdicts = {
        name: _correctness_word(value, name)
        for name, value in (
            ("before_correctness", before_correctness),
            ("after_correctness", after_correctness),
        )
    }
    for (name, word), label in zip(verdicts.items(), (before_label, after_label), strict=True):
        version = label or f"the {name.partition('_')[0]} version"
        _refuse_failed(word, where=name, impl=version, place=f"(source: {source})")
    if comparison.baseline is None or comparison.candidate is None:
        raise InputError(
            expected(
                "a Comparison with its baseline and candidate measurements (as compare returns)",
                "one without",
                where="comparison",
            )
        )
    base = comparison.baseline
    cand = comparison.candidate.to_unit(base.unit)
    return Observation(
        comparison=comparison,
        before=base.median,
        after=cand.median,
        unit=base.unit,
        point=point_words(point.as_dict() if isinstance(point, TrialPoint) else point_text(point)),
        gpu=gpu if gpu is not None else (cand.gpu or base.gpu),
        date=date or _today(),
        source=source,
        before_label=before_label,
        after_label=after_label,
        metrics_before=dict(metrics_before or {}),
        metrics_after=dict(metrics_after or {}),
        method=f"kernelopt.bench.compare, {comparison.pairs} interleaved pairs",
        host_clock="cpu-perf-counter" in (base.backend, cand.backend),
        mode=base.mode,
        before_correctness=verdicts["before_correctness"],
        after_correctness=verdicts["after_correctness"],
    )
