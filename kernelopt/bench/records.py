"""Typed benchmark rows on disk (JSONL), and measurements turned into experiment results.

Two destinations:

- :class:`BenchRow` lines appended to a JSONL file (one long-format table: op, impl,
  config, quantiles, unit, GPU, clocks, versions, commit, timestamp), read back exactly
  by :func:`read_rows`.
- The canonical experiment log that :mod:`kernelopt.diagnose` reads:
  :func:`to_result_row` makes a :class:`~kernelopt.experiments.ResultRow` of a
  measurement, and :func:`write_experiment` writes ``exp_N/result.md`` and the
  ``summary.md`` row through :mod:`kernelopt.experiments.canonical`.
"""

from __future__ import annotations

import datetime
import functools
import io
import json
import math
import numbers
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Literal, TypeVar

import attrs

from kernelopt._checks import as_path, finite
from kernelopt._errors import FormatError, InputError, expected
from kernelopt._fileio import (
    atomic_write_bytes,
    encoding_of,
    locked,
    require_file,
    special_kind,
    unmade_folder,
)
from kernelopt._strict_json import TooDeepError, loads, once_each, syntax_error_text
from kernelopt.bench import _serde
from kernelopt.bench.compare import Comparison, Verdict
from kernelopt.bench.measurement import (
    BACKENDS,
    CACHE_STATES,
    MODES,
    UNIT_SECONDS,
    Measurement,
    as_samples,
    at_least,
    boolean,
    one_of,
)
from kernelopt.bench.roofline import Roofline, RooflinePoint, check_same_device
from kernelopt.experiments.canonical import (
    check_verdict,
    experiment_dir,
    log_result,
    write_result,
)
from kernelopt.experiments.points import plain_number, point_words, split_terms
from kernelopt.experiments.readers._files import SNAPSHOT_SUFFIXES, suffix_of
from kernelopt.experiments.records import Correctness, ResultRecord, ResultRow, Status

__all__ = [
    "BenchRow",
    "Environment",
    "KeptSlowerWarning",
    "append_rows",
    "environment",
    "point_text",
    "read_rows",
    "row_from_measurement",
    "to_result_row",
    "write_experiment",
]

ConfigValue = int | float | str | bool
EnumT = TypeVar("EnumT", Status, Correctness)

HOST_CLOCK_MODES = ("cpu", "host")
"""Row modes of a host-clock timing: ``"cpu"`` (as the experiment log writes one) and
``"host"`` (the host time of a call that launches GPU work, benchmarks/mla_host_cost.py)."""
HOST_CLOCK_BACKENDS = ("cpu-perf-counter", "host-perf-counter")
"""Row backends of a host-clock timing: the timer's ``"cpu-perf-counter"`` (no CUDA) and
``"host-perf-counter"`` (``time.perf_counter`` around each call of GPU work, unsynced)."""
ROW_MODES = (*MODES, *HOST_CLOCK_MODES)
"""Every mode a row may hold: the timer's and the host-clock ones."""
ROW_BACKENDS = (*BACKENDS, *(b for b in HOST_CLOCK_BACKENDS if b not in BACKENDS))
"""Every backend a row may hold: the timer's and the host-clock ones."""


class KeptSlowerWarning(UserWarning):
    """:func:`write_experiment` wrote a version as KEPT whose own verdict says it is slower
    than its baseline (a SLOW :class:`~kernelopt.bench.Comparison`).

    Not refused: a slower version may be kept on purpose (it is correct where the faster
    one was not, or it is faster at another point); filter this category where that is so.
    """


@attrs.frozen(kw_only=True)
class Environment:
    """Where a measurement ran: software versions and the source commit.

    Parameters
    ----------
    python, torch, triton, kernelopt : str, optional
        Versions; None when the package is not installed.
    commit : str, optional
        ``git rev-parse HEAD`` of the working directory, with ``-dirty`` appended when
        tracked files differ from it (the numbers then time code no commit holds); None
        outside a git checkout.
    """

    python: str
    torch: str | None = None
    triton: str | None = None
    kernelopt: str | None = None
    commit: str | None = None

    def versions(self) -> dict[str, str]:
        """The versions (and commit) known, as ResultRecord.versions wants them."""
        found = {
            "torch": self.torch,
            "triton": self.triton,
            "kernelopt": self.kernelopt,
            "commit": None if self.commit is None else _short(self.commit),
        }
        return {key: value for key, value in found.items() if value}


def _version(package: str) -> str | None:
    module = sys.modules.get(package)  # an imported module knows its exact build (+cu130)
    version = getattr(module, "__version__", None)
    if isinstance(version, str):
        return version
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _short(commit: str) -> str:
    """The first 12 hex digits, keeping a ``-dirty`` mark."""
    sha, dirty, _ = commit.partition("-dirty")
    return sha[:12] + dirty


def _git(directory: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _commit(directory: Path) -> str | None:
    head = (_git(directory, "rev-parse", "HEAD") or "").strip()
    if not head:
        return None
    # Untracked files (scratch scripts, results being written) do not change the code.
    changes = _git(directory, "status", "--porcelain", "--untracked-files=no")
    return head + "-dirty" if changes else head


@functools.cache
def _versions() -> Environment:
    return Environment(
        python=sys.version.split()[0],
        torch=_version("torch"),
        triton=_version("triton"),
        kernelopt=_version("kernelopt"),
    )


def environment(directory: str | os.PathLike[str] | None = None) -> Environment:
    """Versions, read once, and the git commit, read at each call (never imports torch
    or triton): a source edited since the last row makes the next one ``-dirty``.

    Parameters
    ----------
    directory : path-like, optional
        The folder whose git commit is read; the current working directory if ``None``.

    Returns
    -------
    Environment
        The Python, torch, triton and kernelopt versions and the commit.

    Raises
    ------
    InputError
        If ``directory`` is not a path (a str or path-like, not empty) or not a folder: a
        mistyped path would give a row with no commit.
    """
    folder = (Path.cwd() if directory is None else as_path(directory, "directory")).resolve()
    if not folder.is_dir():
        raise InputError(
            expected("a folder to read the git commit of", str(folder), where="directory")
        )
    return attrs.evolve(_versions(), commit=_commit(folder))


# A day written in full (2026-11-17): fromisoformat alone also takes 20261117 and 2026-W47-2.
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}(?![\d])")


def _utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _utc_today() -> str:
    """Today's UTC date, ``2026-11-17``: the Date of an experiment as summary.md and the
    devlog write it (a row's own time is its JSONL ``timestamp``)."""
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def _check_date(date: object) -> None:
    """Refuse a ``date`` that is not ISO-8601 (``2026-11-17``, or a timestamp that opens
    with one): summary.md sorts and the readers compare its Date column as written, so
    ``yesterday`` or ``20261117`` would stand apart from every other row."""
    if date is None or date == "":
        return
    if not isinstance(date, str):
        raise InputError(expected("an ISO date str or None", type(date).__name__, where="date"))
    try:
        datetime.datetime.fromisoformat(date)
        valid = bool(_ISO_DAY.match(date))
    except ValueError:
        valid = False
    if not valid:
        raise InputError(
            expected("an ISO date (2026-11-17) or timestamp", repr(date), where="date")
        )


def point_text(point: object) -> str:
    """A trial point in its one spelling, the one the devlog and ``evaluate`` write.

    Parameters
    ----------
    point : str, mapping or object
        The point: ``key=value`` words in any order, a mapping of axes, or anything whose
        ``str()`` is such words (a :class:`~kernelopt.bench.TrialPoint`). A mapping's
        numpy numbers are written as the Python numbers they equal, and a value that
        would not read back whole as one word between double quotes: a benchmark
        config's ``{"point": "b=32 s=1 h=128 t=4096", ...}`` is written
        ``point="b=32 s=1 h=128 t=4096"`` among its other terms.

    Returns
    -------
    str
        ``key=value`` words with b, s and t first and the other axes sorted
        (``"b=32 s=1 t=4096 h=16"``); text that is not all terms (a named point, a note)
        is kept as written, its spaces collapsed.

    Examples
    --------
    >>> point_text({"rows": 4, "t": 8, "cols": 4096, "b": 2, "s": 1})
    'b=2 s=1 t=8 cols=4096 rows=4'
    >>> point_text("rows=4 cols=4096")
    'cols=4096 rows=4'
    >>> point_text({"b": 2, "kv": "fp8 e4m3"})
    'b=2 kv="fp8 e4m3"'
    """
    if isinstance(point, Mapping):
        return point_words(point)
    return point_words(point if isinstance(point, str) else str(point))


# What an axis name cannot hold, in the words the errors give: a point is written
# ``b=32 kv=fp8`` and read split at spaces, commas and semicolons, with "=" ending the name,
# "t~4096" read as t=~4096, a double quote opening a quoted value and brackets around the
# point taken off; a value is quoted where it needs to be, a name never is.
AXIS_NAME_CANNOT_HOLD = "spaces, commas, semicolons, brackets, double quotes, '=' or '~'"
_AXIS_NAME_BREAKERS = frozenset(',;=~"()[]{}')


def axis_name_reads_back(name: str) -> bool:
    """Whether ``name`` is an axis name a written point reads back as itself.

    Not empty and holding none of :data:`AXIS_NAME_CANNOT_HOLD`; and, as the readers
    decide, ``name=1`` read by :func:`~kernelopt.experiments.points.split_terms` is that
    one term. The one rule for the axes of a :class:`~kernelopt.bench.TrialPoint` and of a
    mapping point a result row is given.

    Parameters
    ----------
    name : str
        The axis name as it would be written.

    Returns
    -------
    bool
        False for ``""``, ``"head dim"``, ``"h,q"``, ``"h;q"``, ``"(h)"``, ``'h"q'``,
        ``"h=q"`` or ``"h~q"``; True for ``"h"``, ``"h_q"``, ``"kv_splits"``.

    Examples
    --------
    >>> axis_name_reads_back("kv_splits"), axis_name_reads_back("h,q")
    (True, False)
    """
    if not name or any(char.isspace() or char in _AXIS_NAME_BREAKERS for char in name):
        return False
    # The characters above are those the readers treat apart today; the reading itself
    # has the last word, should it learn another.
    return split_terms(f"{name}=1") == [(name, "=", "1")]


def _row_point(point: object) -> str:
    """:func:`point_text` of the point of a result row, or InputError where a mapping's
    terms would read back as other terms.

    A result.md, the devlog and ``evaluate`` split a point at spaces, commas and
    semicolons outside double quotes, and take brackets around it for none of its terms.
    A mapping's value that would not read back whole as one word is written quoted
    (``{"kv": "fp8 e4m3"}`` as ``kv="fp8 e4m3"``); an axis name is never quoted, so one
    that would not read back as itself (:func:`axis_name_reads_back`: ``"head dim"``,
    ``"h,q"``), and an empty name or value, which no reader keeps as a term, are refused
    before anything is written.
    """
    text = point_text(point)
    if not isinstance(point, Mapping):
        return text  # words as the caller wrote them: they read back as written
    written = [(str(key), str(plain_number(value))) for key, value in point.items()]
    for key, value in written:
        if not value or not axis_name_reads_back(key):
            raise InputError(
                expected(
                    "point axes and values that read back as written: not empty, without "
                    f"{AXIS_NAME_CANNOT_HOLD} in an axis name ('head_dim', not 'head dim'; "
                    'a value with them is written quoted: kv="fp8 e4m3")',
                    f"{key!r}: {value!r}",
                    where="point",
                )
            )
    read = sorted((key, value) for key, _, value in split_terms(text))
    if read != sorted(written):  # a safety net: every term is written to read back
        raise InputError(
            expected("point terms that read back as written", f"{text!r}", where="point")
        )
    return text


def _config_items(value: object) -> object:
    """An attrs converter: a config's numpy (or other) integers and reals as the Python
    int and float JSON writes (:func:`~kernelopt.experiments.points.plain_number`);
    anything else as given, for the validator to refuse.

    A point swept with ``numpy.arange`` holds ``np.int64`` values, which were refused as
    "Expected an int, ..., got np.int64(4)"."""
    if not isinstance(value, Mapping):
        return value
    return {key: plain_number(item) for key, item in value.items()}


def _config_values(_instance: object, _attribute: object, value: object) -> None:
    """A config holds what a JSONL line reads back as the same value: str keys, and ints,
    finite floats, strs or bools (a shape goes in as text, ``"4x576"``)."""
    if not isinstance(value, dict):
        raise InputError(expected("config as a dict", type(value).__name__, where="config"))
    for key, item in value.items():
        if not isinstance(key, str):
            raise InputError(expected("str config keys", repr(key), where="config"))
        ok = isinstance(item, bool | int | str) or (isinstance(item, float) and math.isfinite(item))
        if not ok:
            raise InputError(
                expected("an int, finite float, str or bool", repr(item), where=f"config[{key!r}]")
            )
        if isinstance(item, int):
            _writable_int(item, f"config[{key!r}]")


def _metric_values(_instance: object, _attribute: object, value: object) -> None:
    if not isinstance(value, dict):
        raise InputError(expected("metrics as a dict", type(value).__name__, where="metrics"))
    for key, item in value.items():
        ok = isinstance(item, int | float) and not isinstance(item, bool) and _finite(item)
        if not isinstance(key, str) or not ok:
            raise InputError(
                expected("str keys to finite numbers", f"{key!r}: {item!r}", where="metrics")
            )


def _finite(number: float) -> bool:
    """``math.isfinite``, False for an int too large for a float (it raises there)."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def _timings(_instance: object, _attribute: object, value: tuple[float, ...]) -> None:
    # json.loads reads NaN and Infinity: a line holding them is no timing, and append_rows
    # could not write the row again.
    bad = [v for v in value if not math.isfinite(v) or v < 0]
    if bad:
        raise InputError(expected("finite samples >= 0", bad[0], where="samples"))


def _text(_instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    # read_rows takes text alone here: None or a number would be built, then refused by
    # append_rows, and bytes would fail there as no JSON at all.
    if not isinstance(value, str):
        raise InputError(expected("a str", repr(value), where=attribute.name))


def _name(_instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    # A row's op and impl are what every reader selects and groups it by: an empty one
    # would be written, read back and then match nothing a user can name.
    _text(_instance, attribute, value)
    if not str(value).strip():
        raise InputError(expected("a non-empty name", repr(value), where=attribute.name))


def _text_or_none(_instance: object, attribute: attrs.Attribute[str | None], value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise InputError(expected("a str or None", repr(value), where=attribute.name))


CORRECTNESS_WORDS = tuple(member.value for member in Correctness)
"""What a row's ``correctness`` may hold besides None: ``"PASS"``, ``"FAIL"``, ``"UNKNOWN"``,
the words of :class:`~kernelopt.experiments.Correctness` (and of result.md)."""


def _correctness_word(value: object) -> object:
    """A :class:`~kernelopt.experiments.Correctness` as its word, as JSON writes it and
    :func:`read_rows` reads it back; anything else as given, for the validator to judge."""
    return value.value if isinstance(value, Correctness) else value


def _check_correctness(value: object, where: str) -> None:
    """Refuse a correctness verdict other than None and :data:`CORRECTNESS_WORDS`."""
    # Upper case only, as Correctness and result.md spell it: a "pass" that one reader
    # took and another refused would split one file's rows into judged and unjudged.
    if value is not None and value not in CORRECTNESS_WORDS:
        words = ", ".join(CORRECTNESS_WORDS)
        raise InputError(expected(f"one of {words} or None", repr(value), where=where))


def _correctness(_instance: object, attribute: attrs.Attribute[str | None], value: object) -> None:
    _check_correctness(value, attribute.name)


def _clock(_instance: object, attribute: attrs.Attribute[int | None], value: object) -> None:
    # An NVML clock is a whole number of MHz: read_rows refuses 1980.0 and True.
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(expected("an int (MHz) or None", repr(value), where=attribute.name))
    _writable_int(value, attribute.name)


def _count(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    """After ``at_least``: an int JSON can write and read back."""
    _writable_int(value, attribute.name)


# Ints of fewer bits have fewer digits (616) than the least limit Python allows (640).
_ALWAYS_WRITABLE_BITS = 2048


def _writable_int(value: int, where: str) -> None:
    """Refuse an int with more digits than Python turns into text (or reads back from it):
    ``json.dumps`` fails on it and read_rows could not read the line."""
    if value.bit_length() < _ALWAYS_WRITABLE_BITS:
        return
    try:
        str(value)
    except ValueError:
        # Only a limit makes str() fail, and only Pythons that know one set it.
        limit: int = getattr(sys, "get_int_max_str_digits", lambda: 0)()
        digits = math.floor(value.bit_length() * math.log10(2)) + 1
        raise InputError(
            expected(f"integers of at most {limit} digits", f"one of about {digits}", where=where)
        ) from None


def _names(_instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: object) -> None:
    # A str is a sequence of str too: "gpu_idle" would be written as eight reasons.
    if not isinstance(value, tuple) or not all(isinstance(item, str) for item in value):
        raise InputError(expected("a tuple of str", repr(value), where=attribute.name))


@attrs.frozen(kw_only=True)
class BenchRow:
    """One timed configuration of one implementation: a line of a benchmark JSONL file.

    Each field is checked when the row is made as :func:`read_rows` checks it, so a row
    made is a row :func:`append_rows` writes (``clocks_moved: Expected True or False, got
    0``).

    Parameters
    ----------
    op : str
        The operation (``"mla_decode"``, ``"copy"``); not empty nor blank.
    impl : str
        The implementation (``"torch_eager"``, ``"split_kv"``); not empty nor blank.
    config : dict
        The point and knobs (``{"b": 32, "s": 1, "h": 128, "t": 4096}``); numpy integers
        and floats are stored as the int and float JSON writes.
    mode, cache, backend : str
        How it was timed (see :class:`Measurement`); ``mode`` may also be ``"cpu"`` (a
        host-clock timing, as the experiment log writes it) or ``"host"`` (the host time
        of a call that launches GPU work), and ``backend`` ``"host-perf-counter"`` (the
        clock of those ``"host"`` rows) besides the timer's ``"cuda-events"`` and
        ``"cpu-perf-counter"``; any other is refused. A row of a host-clock mode or
        backend is no device time (:attr:`host_clock`).
    unit : str
        Unit of every time in the row.
    n : int
        Number of samples; where ``samples`` are kept, their number.
    median, p20, p80, iqr, min : float
        Quantiles of the per-call time, in ``unit`` (numpy floats are stored as the
        Python floats they equal). Where the band was recorded
        (``p80 > 0``), ``min <= p20 <= median <= p80``; a row written with its median
        alone leaves the others at 0.
    gpu : str
        Device name.
    sm_clock_mhz, mem_clock_mhz : int, optional
        Clocks when sampling started (NVML), whole MHz.
    clocks_moved : bool
        A clock moved or a slowdown was active while sampling; True or False, never 0,
        1 or text.
    throttle_reasons : tuple of str
        Clocks-event reasons at the start.
    torch, triton, commit : str, optional
        Versions and source commit.
    timestamp : str
        ISO-8601 UTC time the row was made.
    floor : float, optional
        Roofline floor, in ``unit``: above 0 (None where the row has none).
    metrics : dict of str to float
        Roofline metrics (``dram_pct``, ``tc_pct``, ``floor_pct``, ...).
    note : str
        What else a reader must know (``"b halved 32 -> 16 after CUDA OOM"``).
    samples : tuple of float
        The raw samples, when kept.
    correctness : str, optional
        Whether the version timed computed the right function: ``"PASS"``, ``"FAIL"`` or
        ``"UNKNOWN"`` (a :class:`~kernelopt.experiments.Correctness` is stored as its
        word). None where the row does not say, as in every row written before rows held
        it: those lines, without the field, read back with None, and a row with None is
        written without it, the line it always was. A time of a version that fails is
        still a row (the attempt is kept); a tool judging speed leaves it out.
    """

    # Every field is checked as read_rows checks it, so that a row built is a row
    # append_rows writes: nothing is refused only once a file is being written.
    op: str = attrs.field(validator=_name)
    impl: str = attrs.field(validator=_name)
    config: dict[str, ConfigValue] = attrs.field(
        factory=dict, converter=_config_items, validator=_config_values
    )
    mode: str = attrs.field(default="cold", validator=one_of(*ROW_MODES))
    cache: str = attrs.field(default="flush", validator=one_of(*CACHE_STATES))
    backend: str = attrs.field(default="cuda-events", validator=one_of(*ROW_BACKENDS))
    unit: str = attrs.field(default="us", validator=one_of(*UNIT_SECONDS))
    n: int = attrs.field(default=0, validator=[at_least(0), _count])
    # numpy floats (np.float32 is no float) as the Python floats JSON writes.
    median: float = attrs.field(default=0.0, converter=plain_number, validator=finite(minimum=0))
    p20: float = attrs.field(default=0.0, converter=plain_number, validator=finite(minimum=0))
    p80: float = attrs.field(default=0.0, converter=plain_number, validator=finite(minimum=0))
    iqr: float = attrs.field(default=0.0, converter=plain_number, validator=finite(minimum=0))
    min: float = attrs.field(default=0.0, converter=plain_number, validator=finite(minimum=0))
    gpu: str = attrs.field(default="", validator=_text)
    sm_clock_mhz: int | None = attrs.field(default=None, validator=_clock)
    mem_clock_mhz: int | None = attrs.field(default=None, validator=_clock)
    clocks_moved: bool = attrs.field(default=False, validator=boolean)
    throttle_reasons: tuple[str, ...] = attrs.field(default=(), validator=_names)
    torch: str | None = attrs.field(default=None, validator=_text_or_none)
    triton: str | None = attrs.field(default=None, validator=_text_or_none)
    commit: str | None = attrs.field(default=None, validator=_text_or_none)
    timestamp: str = attrs.field(default="", validator=_text)
    # A floor of 0 would be a kernel that costs nothing: no roofline gives one, and every
    # share of it reads as 0 % ("no floor" is None).
    floor: float | None = attrs.field(
        default=None, converter=plain_number, validator=finite(above=0, optional=True)
    )
    metrics: dict[str, float] = attrs.field(factory=dict, validator=_metric_values)
    note: str = attrs.field(default="", validator=_text)
    samples: tuple[float, ...] = attrs.field(default=(), converter=as_samples, validator=_timings)
    correctness: str | None = attrs.field(
        default=None, converter=_correctness_word, validator=_correctness
    )

    def __attrs_post_init__(self) -> None:
        # The samples kept are the row's samples: a count that differs from them makes
        # every statistic over the row's samples disagree with its quantiles.
        if self.samples and self.n != len(self.samples):
            raise InputError(
                expected(
                    f"n={len(self.samples)}, the number of samples kept", f"n={self.n!r}", where="n"
                )
            )
        # An inverted band reads as a negative spread, which the verdicts took as their
        # smallest noise: a result UNCLEAR with the band in order was called FAST.
        if self.p20 > self.p80:
            raise InputError(
                expected("p20 <= p80", f"p20={self.p20!r} > p80={self.p80!r}", where="p20")
            )
        # The minimum sample is at or below every quantile; checked only where the band
        # was recorded (a row written with its median alone leaves p20 and p80 at 0).
        if self.p80 > 0 and self.min > self.p20:
            raise InputError(
                expected("min <= p20", f"min={self.min!r} > p20={self.p20!r}", where="min")
            )
        # The median lies inside its own band: a hand-edited median outside it (a digit
        # typed twice) was read, and a verdict against the band then judged a time no
        # sample of the row was near.
        if self.p80 > 0 and not self.p20 <= self.median <= self.p80:
            raise InputError(
                expected(
                    "p20 <= median <= p80",
                    f"median={self.median!r} outside [{self.p20!r}, {self.p80!r}]",
                    where="median",
                )
            )

    @property
    def host_clock(self) -> bool:
        """Whether the row was timed with the host clock, not CUDA events: a mode of
        :data:`HOST_CLOCK_MODES` (``"cpu"``, ``"host"``) or a backend of
        :data:`HOST_CLOCK_BACKENDS` (``"cpu-perf-counter"``, ``"host-perf-counter"``).

        Such a time is no device time: the host time of a call that launches GPU work
        (``mode="host"``) is what the caller's thread paid, not what the kernels took.
        """
        return self.mode in HOST_CLOCK_MODES or self.backend in HOST_CLOCK_BACKENDS


def row_from_measurement(
    measurement: Measurement,
    *,
    op: str,
    impl: str,
    config: Mapping[str, ConfigValue] | None = None,
    floor: FloorSpec = None,
    metrics: Mapping[str, float] | None = None,
    note: str = "",
    keep_samples: bool = False,
    directory: str | os.PathLike[str] | None = None,
    correctness: Correctness | str | None = None,
) -> BenchRow:
    """Make a :class:`BenchRow` of ``measurement`` with the current environment.

    Parameters
    ----------
    measurement : Measurement
        The timing.
    op, impl : str
        What was timed.
    config : mapping, optional
        Point and knobs.
    floor : float, Roofline or RooflinePoint, optional
        Roofline floor in the measurement's unit, the Roofline itself, or a timing placed
        on it (``line.place(m)``): the forms :func:`to_result_row` takes. A Roofline's
        floor is taken in the measurement's unit, for a measurement made on its
        ceilings' device only.
    metrics : mapping, optional
        Roofline metrics (``RooflinePoint.metrics()``); an infinite ``arith_intensity``
        (a call that moves no bytes) is left out. Without them, a ``floor`` Roofline (or
        placed Roofline) gives the measurement's own: ``line.place(measurement).metrics()``.
    note : str
        Free text; the measurement's own notes are appended.
    keep_samples : bool
        Store the raw samples too.
    directory : path-like, optional
        A folder of the checkout whose commit the row carries (a script run from
        elsewhere names the kernel's checkout); the current working directory if ``None``.
    correctness : Correctness or str, optional
        The correctness verdict of the version timed, ``"PASS"``, ``"FAIL"`` or
        ``"UNKNOWN"``, as :func:`write_experiment` takes it; None (the default) leaves the
        row without one.

    Raises
    ------
    InputError
        For a ``measurement`` that is no :class:`Measurement` (``measurement: Expected a
        Measurement, got int``), a ``config`` or ``metrics`` that is no mapping, a
        ``note`` that is no str, a ``keep_samples`` that is no bool, a ``directory``
        that is no path or a ``correctness`` other than PASS, FAIL, UNKNOWN or None
        (``correctness: Expected one of PASS, FAIL, UNKNOWN or None, got 'ok'``), before
        anything is read; for a ``floor`` that is neither a
        number, a Roofline, a placed Roofline nor None, or a Roofline of another device
        than the measurement's; and for a field the row refuses (see :class:`BenchRow`).
    """
    if not isinstance(measurement, Measurement):
        # A number or a BenchRow failed with "'int' object has no attribute 'device'".
        raise InputError(expected("a Measurement", type(measurement).__name__, where="measurement"))
    if metrics is not None and not isinstance(metrics, Mapping):
        # A RooflinePoint itself failed with "'RooflinePoint' object has no attribute 'items'".
        raise InputError(
            expected(
                "metrics as a mapping (RooflinePoint.metrics())",
                type(metrics).__name__,
                where="metrics",
            )
        )
    _check_row_options(config, note, keep_samples)
    _check_correctness(_correctness_word(correctness), "correctness")
    floor_value = _floor_in(measurement, floor)
    line = _roofline_of(floor)
    if metrics is None and line is not None:
        metrics = line.place(measurement).metrics()
    env = environment(directory)
    state = measurement.device
    notes = [text for text in (note, *measurement.notes) if text]
    # A call that moves no bytes has an infinite arithmetic intensity, which JSON cannot
    # hold: the row leaves it out (its bytes_per_s of 0 says the same), any other
    # non-finite metric is still refused.
    kept = {
        key: float(value)
        for key, value in (metrics or {}).items()
        if not (key == "arith_intensity" and value == math.inf)
    }
    return BenchRow(
        op=op,
        impl=impl,
        config=dict(config or {}),
        mode=measurement.mode,
        cache=measurement.cache,
        backend=measurement.backend,
        unit=measurement.unit,
        n=measurement.n,
        median=measurement.median,
        p20=measurement.p20,
        p80=measurement.p80,
        iqr=measurement.iqr,
        min=measurement.min,
        gpu=measurement.gpu,
        sm_clock_mhz=None if state is None else state.sm_clock_mhz,
        mem_clock_mhz=None if state is None else state.mem_clock_mhz,
        clocks_moved=measurement.clocks_moved,
        throttle_reasons=() if state is None else state.throttle_reasons,
        torch=env.torch,
        triton=env.triton,
        commit=env.commit,
        timestamp=_utc_now(),
        floor=floor_value,
        metrics=kept,
        note="; ".join(notes),
        samples=measurement.samples if keep_samples else (),
        correctness=_correctness_word(correctness),
    )


def _check_row_options(config: object, note: object, keep_samples: object) -> None:
    """Refuse, by name, the options of :func:`row_from_measurement` of the wrong type: a
    str config failed with "dictionary update sequence element #0 has length 1", a number
    note was joined into the notes' text, and ``keep_samples="no"`` kept the samples."""
    if config is not None and not isinstance(config, Mapping):
        raise InputError(
            expected("config as a mapping or None", type(config).__name__, where="config")
        )
    if not isinstance(note, str):
        raise InputError(expected("a str", type(note).__name__, where="note"))
    if not isinstance(keep_samples, bool):
        raise InputError(expected("a bool", repr(keep_samples), where="keep_samples"))


def append_rows(path: str | os.PathLike[str], rows: Iterable[BenchRow]) -> Path:
    """Append ``rows`` to the JSONL file ``path`` (one JSON object a line), under a lock.

    Every row is checked to read back through :func:`read_rows` before anything is
    written, so a refused batch leaves the file as it was; so does a write that fails
    part-way (a full disk), which is cut back to the rows the file held.

    Parameters
    ----------
    path : path-like
        The JSONL file; created (with its directory) when missing.
    rows : iterable of BenchRow
        The rows to append, in order.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    InputError
        For a ``path`` that is no path (a str or path-like, not empty), a lone BenchRow
        in place of a list of them, an item that is not a BenchRow,
        or a row whose fields read_rows would refuse
        (a str field holding a number, a NaN sample), naming the row and the field; for
        a folder at ``path``, or a file where its folder should be.
    FormatError
        For an existing file that is not UTF-8 (a UTF-16 or UTF-32 byte-order mark):
        it is refused, not appended to in its encoding, as read_rows reads UTF-8 alone.
    """
    target = as_path(path, "path")
    if isinstance(rows, BenchRow | str | bytes) or not isinstance(rows, Iterable):
        raise InputError(expected("a list of BenchRow", type(rows).__name__, where="rows"))
    lines = "".join(_line(index, row) for index, row in enumerate(rows))
    if target.is_dir():
        raise InputError(expected("a JSONL rows file", f"a directory at {target}"))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise unmade_folder(target, error, what="a folder for the rows file") from None
    # Unbuffered: what reached the file is known when a write fails, and nothing is left
    # in a buffer to be written after the file was cut back.
    with locked(target):
        # Under the lock: another writer may have created the file since.
        _check_utf8(target)
        with open(target, "a+b", buffering=0) as handle:
            _append(handle, lines, target)
    return target


def check_appendable(
    path: str | os.PathLike[str], *, rows: Literal["bench", "json"] = "bench"
) -> Path:
    """Refuse a rows file :func:`append_rows` would refuse, before any row exists.

    A run that times for minutes learned only at its end, when it appended, that its
    file was UTF-16 or ended in a cut line: every row it timed was lost. Checking the
    file first refuses it before anything is timed. A file that does not exist yet is
    taken (the append creates it).

    Parameters
    ----------
    path : path-like
        The JSONL rows file a run will append to.
    rows : {"bench", "json"}
        What the file holds: ``"bench"``, :class:`BenchRow` lines (its last line must
        read back as one); ``"json"``, a script's own records, one JSON object a line
        (its last line must be a whole JSON object).

    Returns
    -------
    pathlib.Path
        The file.

    Raises
    ------
    InputError
        For a ``path`` that is no path, a folder, or ``rows`` other than ``"bench"`` or
        ``"json"``.
    FormatError
        For a file that is not UTF-8, or whose last line is not a whole row, as
        :func:`append_rows` says it.
    """
    target = as_path(path, "path")
    if not isinstance(rows, str) or rows not in _LAST_LINE_READERS:
        raise InputError(expected("rows 'bench' or 'json'", repr(rows), where="rows"))
    if target.is_dir():
        raise InputError(expected("a JSONL rows file", f"a directory at {target}"))
    if target.is_file():
        _check_utf8(target)
        with open(target, "rb", buffering=0) as handle:
            size = handle.seek(0, os.SEEK_END)
            if size > 0:
                _check_last_line(handle, size, target, read=_LAST_LINE_READERS[rows])
    return target


def _check_utf8(target: Path) -> None:
    """Refuse a rows file in another encoding than UTF-8: rows appended as UTF-8 to a
    UTF-16 file (as PowerShell's ``>`` saves one) mix two encodings no reader can read."""
    encoding, _ = encoding_of(target)
    if encoding != "utf-8":
        raise _not_utf8(target, 0)


def _not_utf8(target: Path, start: int) -> FormatError:
    """The refusal of a rows file that is not UTF-8, whose byte ``start`` does not decode.

    A UTF-16 or UTF-32 file (PowerShell's ``>`` saves UTF-16) is told by its byte-order
    mark, for read_rows as for append_rows: "byte 0 not UTF-8" hid the encoding and what
    to do about it.
    """
    encoding, _ = encoding_of(target)
    if encoding != "utf-8":
        got = f"a {encoding.upper()} file (its byte-order mark); save it as UTF-8"
    else:
        got = f"byte {start} not UTF-8"
    return FormatError(expected("a UTF-8 JSONL file of benchmark rows", got), path=target)


def _append(handle: io.FileIO, lines: str, target: Path) -> None:
    """Append ``lines`` to the open file, or leave it as it was when the write fails."""
    size = handle.seek(0, os.SEEK_END)
    if lines and size > 0:
        _check_last_line(handle, size, target)
        handle.seek(-1, os.SEEK_END)
        # A file whose last line has no newline (saved by an editor) would glue the
        # first new row to it, and neither line would read back.
        if handle.read(1) != b"\n":
            lines = "\n" + lines
    try:
        data = memoryview(lines.encode("utf-8"))
        while data:
            data = data[handle.write(data) :]
        os.fsync(handle.fileno())
    except BaseException:
        # A write cut short (a full disk) leaves part of a row, and read_rows refuses
        # the whole file for it: the file goes back to the rows it held.
        os.ftruncate(handle.fileno(), size)
        raise


# Bytes read back from the end at a time to find the last line: a row, its samples kept,
# is a few kB; the rest of a large file is never read.
_TAIL_BYTES = 64 * 1024
_BOM = b"\xef\xbb\xbf"


def _check_last_line(
    handle: io.FileIO,
    size: int,
    target: Path,
    *,
    read: Callable[[str], object] | None = None,
) -> None:
    """Refuse to append after a last line that is not a whole row, before writing.

    A run killed while it appended leaves part of a row as the last line; rows appended
    after it put that line in the middle of the file, where every reader refuses the file
    and no later append can mend it. A whole row without its final newline (saved by an
    editor) is a whole row: the append starts a new line for it. ``read`` reads one line
    as a row, raising FormatError for one that is not (a :class:`BenchRow` by default).

    Raises
    ------
    FormatError
        Naming the file and the line, and saying to remove it.
    """
    last = _last_line(handle, size)
    if last is None:
        return
    try:
        (read or _row_of)(last.decode("utf-8"))
    except UnicodeDecodeError:
        # A write cut inside a character leaves its first bytes alone.
        what = "bytes that are not UTF-8 text"
    except FormatError as error:
        what = error.message
    else:
        return
    raise FormatError(
        expected(
            "a whole row as the last line to append after",
            f"a line that is not one ({what}); a run stopped while writing rows leaves "
            "part of one there, and rows appended after it would put it in the middle of "
            "the file, where read_rows refuses the whole file. Remove that line (the rows "
            "above it are whole) and append again; nothing was appended",
        ),
        path=target,
        line=_line_number_of_last(handle),
    )


def _last_line(handle: io.FileIO, size: int) -> bytes | None:
    """The last line of the open file that is not blank, as read_rows splits it, reading
    back from the end only as far as its start; None for a file of blank lines."""
    end = size
    tail = b""
    while True:
        # The text after the last newline before the last byte that is not blank holds
        # read_rows' last line whole; read further back while no such newline is in sight.
        body = tail.rstrip()
        newline = body.rfind(b"\n")
        if body and (newline >= 0 or end == 0):
            text = body[newline + 1 :].decode("utf-8", errors="surrogateescape")
            shown = [piece for piece in text.splitlines() if piece.strip()]
            if shown:
                return shown[-1].encode("utf-8", errors="surrogateescape")
            tail = body[: max(newline, 0)]  # blanks only read_rows splits on: look before
            continue
        if end == 0:
            return None
        start = max(0, end - _TAIL_BYTES)
        handle.seek(start)
        tail = handle.read(end - start) + tail
        end = start
        if start == 0 and tail.startswith(_BOM):
            tail = tail[len(_BOM) :]


def _line_number_of_last(handle: io.FileIO) -> int:
    """The number read_rows gives the last line that is not blank (reads the whole file:
    asked only when that line is refused)."""
    handle.seek(0)
    text = handle.read().decode("utf-8-sig", errors="replace")
    numbered = [n for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    return numbered[-1] if numbered else 1


def _line(index: int, row: object) -> str:
    """The JSONL line of ``row``, refused unless :func:`read_rows` reads it back."""
    # A line read_rows would refuse makes the whole file unreadable: refuse it here.
    if not isinstance(row, BenchRow):
        raise InputError(expected("BenchRow rows", type(row).__name__, where="rows"))
    data = _serde.unstructure(row)
    # A row that gives no correctness verdict is written as rows were before they could
    # hold one: files of such rows stay readable by every version that read them.
    if data.get("correctness") is None:
        data.pop("correctness", None)
    try:
        line = json.dumps(data, sort_keys=True, allow_nan=False)
    except ValueError:  # NaN or inf in a field without a validator (samples)
        bad = sorted(key for key, value in data.items() if not _all_finite(value))
        raise InputError(
            expected(
                "finite numbers (JSON has no NaN or inf)", f"one in {bad}", where=f"rows[{index}]"
            )
        ) from None
    try:
        _serde.structure(json.loads(line), BenchRow)
    except InputError as error:
        raise InputError(f"rows[{index}]: {error}") from None
    return line + "\n"


def _all_finite(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(item) for item in value.values())
    if isinstance(value, list | tuple):
        return all(_all_finite(item) for item in value)
    return True


def read_rows(path: str | os.PathLike[str]) -> list[BenchRow]:
    """Read every :class:`BenchRow` of a JSONL file written by :func:`append_rows`.

    Parameters
    ----------
    path : path-like
        The JSONL file, one row per line; blank lines are skipped.

    Returns
    -------
    list of BenchRow
        The rows, in file order.

    Raises
    ------
    FormatError
        Naming the line that is not JSON or not a BenchRow, or a file that is not UTF-8.
    InputError
        If ``path`` is no str or path-like, or empty (``path: Expected a file path (str
        or Path), got None``, as :func:`~kernelopt.workload.read_trace` says), or if the
        file cannot be read.
    """
    # Imported here: kernelopt.bench does not load kernelopt.workload at import time.
    from kernelopt.workload._validators import as_path

    target = as_path(path)
    try:
        # utf-8-sig: a byte-order mark an editor saved before the first row is no JSON.
        text = target.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise _not_utf8(target, error.start) from None
    except OSError as error:
        raise InputError(expected("a readable rows file", f"{target}: {error.strerror}")) from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(_row_of(line))
        except FormatError as error:
            raise FormatError(error.message, path=target, line=number) from None
    return rows


def _json_of(line: str) -> object:
    """The JSON value one JSONL line holds.

    Raises
    ------
    FormatError
        Saying what the line holds instead (no file or line number: the caller adds them).
    """
    try:
        # A key twice in a hand-edited row would keep its last value without a word.
        return loads(line, object_pairs_hook=once_each)
    except json.JSONDecodeError as error:
        raise FormatError(expected("a JSON object", syntax_error_text(error))) from None
    except TooDeepError:
        raise FormatError(expected("a JSON object", "structures nested too deep to read")) from None
    except FormatError as error:  # an integer longer than Python converts, a key twice
        raise FormatError(error.message) from None


def _row_of(line: str) -> BenchRow:
    """The :class:`BenchRow` one JSONL line holds.

    Raises
    ------
    FormatError
        Saying what the line holds instead (no file or line number: the caller adds them).
    """
    data = _json_of(line)
    try:
        return _serde.structure(data, BenchRow)
    except InputError as error:
        raise FormatError(str(error)) from None


def _json_object_of(line: str) -> dict[str, object]:
    """The JSON object one line of a script's own records holds (any fields).

    Raises
    ------
    FormatError
        Saying what the line holds instead, as :func:`_row_of` says it.
    """
    data = _json_of(line)
    if not isinstance(data, dict):
        raise FormatError(expected("a JSON object", type(data).__name__))
    return data


# How check_appendable reads the last line of each kind of rows file.
_LAST_LINE_READERS: dict[str, Callable[[str], object]] = {
    "bench": _row_of,
    "json": _json_object_of,
}


def _number(value: object, name: str) -> float:
    """``value`` as a float when it is a number: ``float("35.79")`` would read text as a
    time and ``float(True)`` a flag as 1, and the row shows them as measured numbers."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(expected("a number", repr(value), where=name))
    return float(value)


FloorSpec = Roofline | RooflinePoint | float | None
"""What ``floor=`` takes in :func:`row_from_measurement` and :func:`to_result_row`: the
floor in the measurement's unit, the :class:`Roofline` itself, or a timing placed on it
(``line.place(m)``), whose Roofline is taken; None for no floor."""


def _roofline_of(floor: object) -> Roofline | None:
    """The Roofline of a ``floor=`` argument: itself, a placed timing's, None for a number."""
    if isinstance(floor, RooflinePoint):
        return floor.roofline
    return floor if isinstance(floor, Roofline) else None


def _floor_in(measurement: Measurement, floor: FloorSpec) -> float | None:
    """The floor in the measurement's unit; a Roofline's only for a measurement made on
    its ceilings' device (a GPU's floor is no floor of a CPU timing)."""
    if floor is None:
        return None
    line = _roofline_of(floor)
    if line is not None:
        check_same_device(measurement, line.ceilings, where="floor")
        return line.floor(measurement.unit)
    return _number(floor, "floor")


# Digits a result.md shows: a timing's run-to-run noise is far above a part in 10^5, and a
# speedup is read to a part in 10^3; the JSONL rows keep every sample as measured.
_TIME_DIGITS = 6
_SPEEDUP_DIGITS = 4


def _shown(value: float | None, digits: int) -> float | None:
    """``value`` to ``digits`` significant digits (None stays None)."""
    return None if value is None else float(f"{value:.{digits}g}")


def _is_trial_point(point: object) -> bool:
    """Whether ``point`` is a :class:`~kernelopt.bench.TrialPoint` (whose ``str()`` is its
    ``key=value`` words)."""
    # Imported here: kernelopt.bench.trials imports this module.
    from kernelopt.bench.trials import TrialPoint

    return isinstance(point, TrialPoint)


def to_result_row(
    measurement: Measurement,
    *,
    point: object,
    impl: str,
    floor: FloorSpec = None,
    speedup: Comparison | Measurement | float | None = None,
) -> ResultRow:
    """The canonical :class:`~kernelopt.experiments.ResultRow` of one measurement.

    Parameters
    ----------
    measurement : Measurement
        The timing.
    point : str, mapping or TrialPoint
        The trial point (``"b=32 s=1 t=4096"``, ``{"b": 32, ...}``, a TrialPoint). A
        mapping's value with a space, comma, semicolon, bracket or quote is written
        quoted (``{"kv": "fp8 e4m3"}`` as ``kv="fp8 e4m3"``), numpy numbers as the Python
        numbers they equal; its axis names are never quoted.
    impl : str
        Implementation name.
    floor : float, Roofline or RooflinePoint, optional
        Roofline floor in the measurement's unit, the Roofline itself, or a timing placed
        on it (``line.place(m)``). A Roofline (placed or not) also gives the row's
        ``bound``, which result.md writes in its Bound column (``compute`` for a GEMM
        whose FLOPs set the floor); a bare number gives none.
    speedup : float, Measurement or Comparison, optional
        Baseline time over this time; a baseline Measurement or a Comparison (its
        ``speedup``) is converted.

    Returns
    -------
    ResultRow
        The row result.md shows: times to 6 significant digits, the speedup to 4 (the
        measurement's samples keep full precision in the benchmark rows).

    Raises
    ------
    InputError
        For no measurement, no point or a point of another type (``5`` would be
        written as the point ``"5"``), a mapping point with an empty value or an axis
        name that would not read back (``point: Expected point axes and values that read
        back as written: ..., got 'head dim': '576'``), a baseline measurement with
        no time, or a ``floor`` Roofline whose ceilings are of another device than the
        measurement's (a CPU timing against a GPU's floor).

    Examples
    --------
    >>> from kernelopt.bench import Measurement, to_result_row
    >>> m = Measurement(samples=[10.0, 11.0, 12.0], backend="cpu-perf-counter")
    >>> to_result_row(m, point="b=32 s=1 t=4096", impl="eager").median
    11.0
    """
    if not isinstance(measurement, Measurement):
        # A list of samples or a BenchRow failed with "'list' object has no attribute".
        raise InputError(expected("a Measurement", type(measurement).__name__, where="measurement"))
    if point is None:
        # str(None) would be written as the point "None".
        raise InputError(expected("a trial point", "None", where="point"))
    if not isinstance(point, str | Mapping) and not _is_trial_point(point):
        # str(5) would be written as the point "5", with no axis to read back.
        raise InputError(
            expected(
                "a trial point as a str, a mapping or a TrialPoint",
                type(point).__name__,
                where="point",
            )
        )
    if isinstance(speedup, Measurement):
        if measurement.seconds <= 0:
            raise InputError(
                expected(
                    "a measurement with a median > 0 to compare the baseline with",
                    measurement.median,
                    where="speedup",
                )
            )
        speedup = speedup.seconds / measurement.seconds
    elif isinstance(speedup, Comparison):
        speedup = speedup.speedup
    mode = "cpu" if measurement.backend == "cpu-perf-counter" else measurement.mode
    line = _roofline_of(floor)
    return ResultRow(
        point=_row_point(point),
        impl=impl,
        median=_shown(measurement.median, _TIME_DIGITS),
        p20=_shown(measurement.p20, _TIME_DIGITS),
        p80=_shown(measurement.p80, _TIME_DIGITS),
        unit=measurement.unit,
        floor=_shown(_floor_in(measurement, floor), _TIME_DIGITS),
        speedup=_shown(None if speedup is None else _number(speedup, "speedup"), _SPEEDUP_DIGITS),
        mode=mode,
        bound=None if line is None else line.bound,
    )


def write_experiment(
    root: str | os.PathLike[str],
    *,
    experiment: int,
    title: str,
    rows: Sequence[ResultRow],
    status: Status | str,
    correctness: Correctness | str,
    correctness_detail: str = "",
    gpu: str | Measurement | None = None,
    kernel: str | None = None,
    baseline: str | None = None,
    tags: Sequence[str] | None = None,
    knobs: Mapping[str, object] | None = None,
    verdict: Comparison | str | None = None,
    notes: str = "",
    date: str | None = None,
    overwrite: bool = False,
    summary: bool = True,
    directory: str | os.PathLike[str] | None = None,
    snapshot: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    versions: BenchRow | Mapping[str, str] | None = None,
) -> ResultRecord:
    """Write ``root/exp_N/result.md`` (and its ``summary.md`` row) in the canonical form,
    with copies of the kernel files it timed.

    Versions (torch, triton, kernelopt, commit) are filled in from the current
    environment unless ``versions`` gives those of the run that timed the rows, and the
    date from today's; the record goes through
    :func:`kernelopt.experiments.canonical.log_result` (``write_result`` alone without
    ``summary``): the result and its row are written both, or neither.

    Parameters
    ----------
    root : path-like
        The ``experiments/`` directory.
    experiment : int
        N of ``exp_N``.
    title : str
        One line saying what was tried.
    rows : sequence of ResultRow
        Timed points (:func:`to_result_row`); the first is the headline. Empty only for
        a version that failed correctness (``correctness="FAIL"``) or did not run
        (``status="FAILED"``): the log keeps the attempt, with no latency.
    status : Status or str
        BASELINE, KEPT, NEUTRAL, REVERTED or FAILED. KEPT is refused with
        ``correctness="FAIL"``.
    correctness : Correctness or str
        PASS, FAIL or UNKNOWN.
    correctness_detail : str
        How it was checked, written in parentheses after the verdict
        (``PASS (max abs err 2e-3 vs the float64 reference)``); empty for none.
    gpu : str or Measurement, optional
        Device name, or a measurement to take it from.
    kernel, baseline : str, optional
        Kernel path or name, and what it is compared with.
    tags : sequence of str, or str, optional
        Catalog ids of the ideas tried (a lone str is one id). An empty sequence declares
        that the experiment tried none (``- Tags: none``: the readers then find none in
        its title); None (the default) writes no Tags line, and the readers find the
        tags in the experiment's words.
    knobs : mapping, optional
        Tuning knobs (values written with ``str``).
    verdict : Comparison or str, optional
        A/B verdict against the previous best: a Comparison (written as its ``str``), or a
        str whose first word is FAST, SLOW, SAME or UNCLEAR in capitals, the word the log's
        readers take (one verdict: those of other points go in ``notes``). FAST is
        refused with ``correctness="FAIL"``. A SLOW Comparison with ``status="KEPT"``
        is written as given, with a :class:`KeptSlowerWarning` naming the ratio and the
        baseline it was measured against: a kept regression is recorded as REVERTED, or
        kept with the reason (correctness, another point) in ``notes``.
    notes : str
        Free text.
    date : str, optional
        ISO date (``2026-11-17``), written as given (a timestamp that opens with one
        too); default today's date (UTC), as summary.md's Date column holds it. Anything
        else (``yesterday``, ``20261117``) is refused before anything is written.
    overwrite : bool
        Replace an existing result.md (in its encoding: a UTF-16 file stays UTF-16) and,
        with ``summary``, the experiment's summary.md row. Without it, either one already
        there is refused and nothing is written.
    summary : bool
        Also append the row to ``summary.md``.
    directory : path-like, optional
        A folder of the checkout whose commit the record carries; the current working
        directory if ``None``.
    snapshot : path-like or sequence of path-like, optional
        Kernel file(s) of this version (full sources such as ``kernels/softmax.py``, or
        ``.diff``/``.patch`` files against the kernel it started from), copied into
        ``exp_N/`` under their own names, each atomically, once the record is written:
        the snapshots :mod:`kernelopt.diagnose` reads for the experiment. A lone path is
        one file. A file already in ``exp_N/`` under one of those names is replaced
        only with ``overwrite``; the file itself, given from there, stays as it is.
    versions : BenchRow or mapping, optional
        The versions of the run that timed the rows, where another host or checkout ran
        it: a row of that run (its torch, triton and commit) or a mapping
        (``{"torch": "2.11.0+cu130", "commit": "5017b82"}``). Without it, the versions
        are this host's and the commit ``directory``'s; where those cannot be the
        timing's (a CPU build of torch beside a ``gpu`` that names a GPU, a snapshot
        that git ignores in ``directory``, so the commit holds no version of it), a
        sentence at the end of ``notes`` says so.

    Returns
    -------
    ResultRecord
        What was written.

    Warns
    -----
    KeptSlowerWarning
        Once written, for ``status="KEPT"`` with a ``verdict`` Comparison that is SLOW.

    Raises
    ------
    InputError
        Before anything is written, for a ``root`` or ``directory`` that is no path,
        ``knobs`` that are no mapping, a ``verdict`` that is neither a Comparison nor a
        str, a verdict str that opens with no FAST, SLOW, SAME or UNCLEAR (``decode: FAST
        ...`` reads back as no verdict), a FAST verdict with ``correctness="FAIL"``, a
        ``summary`` that is no bool, or ``status="KEPT"`` with
        ``correctness="FAIL"`` (a version that computes the wrong function is REVERTED
        or FAILED; a failing reference kept to compare with is the BASELINE).
        For rows that are not ResultRows, two rows of one (point, impl, mode), no rows
        for a version that ran and passed, or,
        without ``overwrite``, an existing ``exp_N/result.md`` or ``summary.md`` row of
        experiment N (its folder removed by hand leaves the row). Nothing is written then.
        Also, before anything is written, for a snapshot that is no file (missing, a
        folder), no kernel source or diff the log readers take (``notes.txt``), two
        snapshots of one name, or, without ``overwrite``, one whose name ``exp_N/``
        already holds.
    FormatError
        With ``summary``, for a summary.md that cannot take the row: one with no table of
        the canonical columns (a blank one gets the table), or not text. Nothing is
        written then; an existing result.md stays as it was.
    """
    folder = as_path(root, "root")
    _check_experiment_options(knobs, verdict, summary=summary)
    if isinstance(rows, (str, ResultRow)) or not isinstance(rows, Sequence):
        # A lone row would fail below with "'ResultRow' object is not iterable".
        raise InputError(expected("a sequence of ResultRow", type(rows).__name__, where="rows"))
    if isinstance(experiment, bool) or not isinstance(experiment, int) or experiment < 0:
        raise InputError(
            expected("an experiment number >= 0", repr(experiment), where="experiment")
        )
    wrong = [row for row in rows if not isinstance(row, ResultRow)]
    if wrong:
        # A Measurement goes in through to_result_row(measurement, point=..., impl=...).
        raise InputError(expected("ResultRow rows", type(wrong[0]).__name__, where="rows"))
    seen: set[tuple[str, str, str]] = set()
    for row in rows:
        key = (row.point, row.impl, row.mode)
        if key in seen:
            # Two times of one kernel at one point: a reader keeps one, and no one can
            # tell which the experiment meant.
            raise InputError(
                expected("one row per (point, impl, mode)", f"{key!r} twice", where="rows")
            )
        seen.add(key)
    status, correctness = (
        _member(Status, status, "status"),
        _member(Correctness, correctness, "correctness"),
    )
    _check_date(date)
    _refuse_kept_failure(status, correctness)
    _refuse_unread_verdict(verdict, correctness)
    # A wrong kernel or one that never ran has no timing to give, and the log still
    # needs the attempt (diagnose reads failed attempts).
    if not rows and correctness is not Correctness.FAIL and status is not Status.FAILED:
        raise InputError(
            expected(
                "at least one ResultRow (none only with correctness FAIL or status FAILED)",
                "none",
                where="rows",
            )
        )
    if isinstance(gpu, Measurement):
        gpu = gpu.gpu or None
    written_with, caveat = _record_versions(versions, gpu, snapshot, directory)
    notes = f"{notes.rstrip()}\n\n{caveat}".lstrip("\n") if caveat else notes
    record = ResultRecord(
        experiment=experiment,
        title=title,
        status=status,
        correctness=correctness,
        correctness_detail=correctness_detail,
        date=date or _utc_today(),
        kernel=kernel,
        baseline=baseline,
        gpu=gpu,
        versions=written_with,
        # The record reads a lone str as one tag; tuple("a-b") would split it into letters.
        tags=tags,
        knobs={key: str(value) for key, value in (knobs or {}).items()},
        rows=tuple(rows),
        verdict=None if verdict is None else str(verdict),
        notes=notes,
    )
    # Read before anything is written: a snapshot refused after the record would leave an
    # experiment whose kernel the log does not hold.
    copies = _snapshot_copies(snapshot, experiment_dir(folder, experiment), overwrite=overwrite)
    if summary:
        # Both or neither: a summary that refuses the row (no table of its columns, not
        # text) refuses the result before it is written. Written again, the experiment
        # keeps one summary row: the new one.
        log_result(folder, record, overwrite=overwrite)
    else:
        write_result(folder, record, overwrite=overwrite)
    for target, data in copies:
        atomic_write_bytes(target, data)
    if status is Status.KEPT and isinstance(verdict, Comparison):
        _warn_kept_slower(experiment, verdict, baseline)
    return record


def _refuse_kept_failure(status: Status, correctness: Correctness) -> None:
    """Refuse a version written KEPT whose own correctness verdict is FAIL.

    KEPT says the change landed: later experiments build on it and the log's readers
    take it as the version to beat. A version that computes the wrong function is rolled
    back (REVERTED) or never worked (FAILED). Unlike a kept slower version (warned, see
    :class:`KeptSlowerWarning`), there is no reason to keep one that fails: a reference
    kept as it is although it fails the check is the BASELINE, which takes FAIL, and a
    version kept because the check itself was too strict has passed the check it is
    kept under (PASS, with that tolerance in ``correctness_detail``).
    """
    if status is Status.KEPT and correctness is Correctness.FAIL:
        raise InputError(
            expected(
                "status REVERTED or FAILED for a version that failed correctness (BASELINE "
                "for a failing reference kept as the point to compare with; KEPT only with "
                "correctness PASS or UNKNOWN)",
                "status KEPT with correctness FAIL",
                where="status",
            )
        )


def _record_versions(
    versions: BenchRow | Mapping[str, str] | None,
    gpu: str | None,
    snapshot: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None,
    directory: str | os.PathLike[str] | None,
) -> tuple[dict[str, str], str]:
    """The versions an experiment records, and what its notes must say of them (empty
    when nothing).

    Given, they are the timing run's. Read here, they are this host's and ``directory``'s
    commit: a result timed on a GPU elsewhere and written on a CPU-only host recorded
    ``torch=2.13.0+cpu`` beside an H100's name, and the commit of the repository around a
    kernel file it ignores, as if either were the timing's.
    """
    if isinstance(versions, BenchRow):
        stated = {"torch": versions.torch, "triton": versions.triton, "commit": versions.commit}
        return {key: _short(v) if key == "commit" else v for key, v in stated.items() if v}, ""
    if versions is not None:
        if not isinstance(versions, Mapping):
            raise InputError(
                expected(
                    "a BenchRow, a mapping of versions or None",
                    type(versions).__name__,
                    where="versions",
                )
            )
        return dict(versions), ""
    here = environment(directory)
    found = here.versions()
    said = []
    torch_build = found.get("torch", "")
    if gpu and gpu.lower() != "cpu" and torch_build.endswith("+cpu"):
        said.append(
            f"The versions are those of the host that wrote this record (torch "
            f"{torch_build}, a CPU build), not of the one that timed it on {gpu}."
        )
    folder = (Path.cwd() if directory is None else Path(directory)).resolve()
    ignored = [
        Path(path).name
        for _, path in _snapshot_paths(snapshot)
        if found.get("commit")
        and _git(folder, "check-ignore", "-q", str(Path(path).resolve())) is not None
    ]
    if ignored:
        said.append(
            f"The commit {found['commit']} holds no version of {', '.join(ignored)} (git "
            "ignores it there): the copy beside this result is the kernel timed."
        )
    return found, " ".join(said)


def _refuse_unread_verdict(verdict: Comparison | str | None, correctness: Correctness) -> None:
    """Refuse a verdict the log's readers would not read, and a FAST verdict on a version
    that failed correctness, as the log's own writers do
    (:func:`~kernelopt.experiments.canonical.check_verdict`): a Comparison is checked as
    the ``str`` it is written as, whose first word is its verdict."""
    check_verdict(None if verdict is None else str(verdict), correctness)


def _warn_kept_slower(experiment: int, verdict: Comparison, baseline: str | None) -> None:
    """Warn that experiment ``experiment`` is written KEPT although ``verdict`` is SLOW:
    the cheapest place to catch a kept regression is where it is recorded."""
    if verdict.verdict is not Verdict.SLOW:
        return
    against = f"the baseline {baseline!r}" if baseline else "its baseline"
    warnings.warn(
        f"exp_{experiment} is written KEPT although its own verdict says it is slower than "
        f"{against}: {verdict} (ratio = its time over the baseline's). Record it with "
        "status='REVERTED', or, if it is kept for another reason (correct where the "
        "faster one is not, faster at another point), say which in notes.",
        KeptSlowerWarning,
        stacklevel=3,
    )


def _member(kind: type[EnumT], value: object, where: str) -> EnumT:
    """``value`` as a member of ``kind``, refused naming the argument ``where``: "Expected
    one of 'PASS', 'FAIL', 'UNKNOWN', got 'ok'" did not say which argument held it."""
    try:
        return kind(value)
    except InputError as error:
        raise InputError(f"{where}: {error}{_other_verdict(kind, value)}") from None


def _other_verdict(kind: type[EnumT], value: object) -> str:
    """`` (FAILED for status; FAIL is a correctness verdict)`` where ``value`` is a word of
    the other of :class:`Status` and :class:`Correctness`, mixed up as their failures
    differ by two letters; ``""`` otherwise."""
    other: type[Status | Correctness] = Correctness if kind is Status else Status
    words = [member.value for member in other]
    if not isinstance(value, str) or value not in words:
        return ""
    what = "a correctness verdict" if other is Correctness else "a status"
    twin = {"FAIL": Status.FAILED, "FAILED": Correctness.FAIL}.get(str(value))
    name = "status" if kind is Status else "correctness"
    said = f"{twin.value} for {name}; " if twin is not None else ""
    return f" ({said}{value} is {what})"


def _check_experiment_options(knobs: object, verdict: object, *, summary: object) -> None:
    """Refuse, by name, options of :func:`write_experiment` of the wrong type, before
    anything is written: ``knobs=5`` failed with "'int' object has no attribute 'items'",
    a verdict of any other type was written as its ``str``, and ``summary="no"`` wrote
    the summary row."""
    if knobs is not None and not isinstance(knobs, Mapping):
        raise InputError(
            expected("knobs as a mapping or None", type(knobs).__name__, where="knobs")
        )
    if verdict is not None and not isinstance(verdict, Comparison | str):
        raise InputError(
            expected("a Comparison, a str or None", type(verdict).__name__, where="verdict")
        )
    if not isinstance(summary, bool):
        raise InputError(expected("a bool", repr(summary), where="summary"))


def _snapshot_paths(
    snapshot: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None,
) -> list[tuple[str, str | os.PathLike[str]]]:
    """The snapshot paths of ``write_experiment(snapshot=...)``, each with the name of
    the argument that gave it (``snapshot``, ``snapshot[1]``)."""
    if snapshot is None:
        return []
    if isinstance(snapshot, str | os.PathLike):
        return [("snapshot", snapshot)]
    if isinstance(snapshot, bytes) or not isinstance(snapshot, Sequence):
        raise InputError(
            expected(
                "a kernel file path or a list of them", type(snapshot).__name__, where="snapshot"
            )
        )
    paths: list[tuple[str, str | os.PathLike[str]]] = []
    for index, path in enumerate(snapshot):
        # A bytes path names no file this writer would name back in its messages.
        if not isinstance(path, str | os.PathLike) or not isinstance(os.fspath(path), str):
            raise InputError(
                expected("a kernel file path", type(path).__name__, where=f"snapshot[{index}]")
            )
        paths.append((f"snapshot[{index}]", path))
    return paths


def _snapshot_copies(
    snapshot: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None,
    folder: Path,
    *,
    overwrite: bool,
) -> list[tuple[Path, bytes]]:
    """Each snapshot's place in ``folder`` (``exp_N/``) and its bytes, every one checked.

    Parameters
    ----------
    snapshot : path-like, sequence of path-like, or None
        What ``write_experiment`` was given.
    folder : Path
        The experiment's folder (it need not exist yet).
    overwrite : bool
        Whether a file of the same name in ``folder`` may be replaced.

    Returns
    -------
    list of (Path, bytes)
        The files to write, in the order given; a snapshot given from its own place in
        ``folder`` is already there and is left out.

    Raises
    ------
    InputError
        For a path that is no regular file, no kernel source or diff the log readers
        take, a name given twice, or a name ``folder`` holds (unless ``overwrite``, and
        then only a regular file).
    """
    copies: list[tuple[Path, bytes]] = []
    names: dict[str, str | os.PathLike[str]] = {}
    for where, path in _snapshot_paths(snapshot):
        require_file(path, "a kernel file to snapshot", where=where)
        source = Path(path)
        if suffix_of(source.name) not in SNAPSHOT_SUFFIXES:
            # Any other file in exp_N/ is no kernel the readers see: diagnose would not
            # read it, and result.md or plan.md would be written over.
            taken = ", ".join(sorted(SNAPSHOT_SUFFIXES))
            raise InputError(
                expected(f"a kernel source or diff ({taken})", os.fspath(path), where=where)
            )
        # Case folded: on a file system that ignores case, Softmax.py is softmax.py.
        name = source.name.casefold()
        if name in names:
            raise InputError(
                expected(
                    "snapshots of distinct names (each is copied under its own name)",
                    f"{os.fspath(names[name])} and {os.fspath(path)}",
                    where=where,
                )
            )
        names[name] = path
        target = folder / source.name
        if _same_file(source, target):
            continue
        _refuse_snapshot_target(target, overwrite=overwrite, where=where)
        try:
            data = source.read_bytes()
        except OSError as error:
            raise InputError(
                expected("a readable kernel file", f"{path}: {error.strerror}", where=where)
            ) from None
        copies.append((target, data))
    return copies


def _same_file(source: Path, target: Path) -> bool:
    """Whether ``source`` is the file at ``target`` already (a snapshot given from its
    place in ``exp_N/``)."""
    try:
        return target.is_file() and source.samefile(target)
    except OSError:  # nothing to compare: not the same
        return False


def _refuse_snapshot_target(target: Path, *, overwrite: bool, where: str) -> None:
    """Refuse to copy a snapshot to ``target`` where something stands that it may not
    replace: any file without ``overwrite``, and a folder, FIFO or device with it."""
    other = "a folder" if target.is_dir() else special_kind(target)
    if other is not None:
        raise InputError(expected("a kernel file to replace", f"{other} at {target}", where=where))
    if target.exists() and not overwrite:
        raise InputError(
            expected(
                f"no existing {target} (pass overwrite=True to replace it)",
                "an existing file",
                where=where,
            )
        )
