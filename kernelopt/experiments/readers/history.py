"""Machine-written histories: JSONL bench logs, TSV/CSV benchmark files, archive JSON.

* JSONL: one run per line (``{"timestamp", "mean_latency_ms", "mean_speedup", "status",
  "notes", ...}``); the latency key names its unit (``_ms``, ``_us``).
* TSV/CSV: either a table of experiments (one row each, recognized like a markdown summary)
  or one benchmark run per file (one row per workload; the file is one experiment whose
  time is the mean of its rows, failed when rows lack a time or the name says ``98of100``).
* JSON: a list of runs, or an archive ``{"elite": {...}, "log": [{"id", "speedup",
  "applied", "ts"}]}``.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from kernelopt._errors import FormatError, expected
from kernelopt._strict_json import loads
from kernelopt._words import count_text
from kernelopt.experiments.log import SourceRef
from kernelopt.experiments.readers._draft import Draft, measurable
from kernelopt.experiments.readers._files import TextFile
from kernelopt.experiments.readers._markdown import Row, Table
from kernelopt.experiments.readers._values import (
    correctness_note,
    correctness_of,
    date_of,
    first_stated,
    number_at,
    status_of,
)
from kernelopt.experiments.readers.tables import read_table, roles_of
from kernelopt.experiments.records import Correctness, Status

__all__ = ["read_json", "read_jsonl", "read_table_file"]

_LATENCY_KEY = re.compile(
    r"(?:^|_)(?:latency|time|duration|median|mean|p50|runtime)(?:_|$)", re.IGNORECASE
)
_UNIT_SUFFIX = re.compile(r"_(ns|us|ms|s)$", re.IGNORECASE)
_TEXT_KEYS = ("description", "notes", "note", "name", "change", "message", "title", "id", "tag")
_DATE_KEYS = ("timestamp", "ts", "date", "time_utc", "created", "started")
_STRONG_FAIL = re.compile(
    r"runtime_error|correctness fail|mismatch|\bnan\b|wrong result|illegal", re.IGNORECASE
)
_OF = re.compile(r"(\d+)of(\d+)", re.IGNORECASE)
# Where a sentence of a record's text ends: ". ", "! ", "? " or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")


def _latency_key(record: Mapping[str, Any]) -> tuple[str, str] | None:
    candidates = [
        k
        for k, v in record.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and _LATENCY_KEY.search(k)
    ]
    if not candidates:
        return None

    def rank(key: str) -> tuple[int, str]:
        lowered = key.lower()
        order = next(
            (i for i, w in enumerate(("latency", "median", "mean", "time")) if w in lowered), 9
        )
        return (order, key)

    key = min(candidates, key=rank)
    suffix = _UNIT_SUFFIX.search(key)
    return key, suffix.group(1).lower() if suffix else ""


class _UnreadableError(Exception):
    """A record holds a value no float can hold; ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _float(value: float, key: str) -> float | None:
    """``value`` as a float; None for ``NaN`` (no value, as a failed run writes it);
    :class:`_UnreadableError` beyond the float range (a 400-digit JSON integer, ``1e400``)."""
    try:
        result = float(value)
    except OverflowError:
        digits = len(str(abs(int(value))))
        raise _UnreadableError(
            expected(f"{key} within the float range", f"{digits} digits")
        ) from None
    if math.isinf(result):
        raise _UnreadableError(expected(f"{key} within the float range", str(value)))
    return None if math.isnan(result) else result


def _loads(text: str) -> Any:
    """``json.loads``, with JSON nested deeper than Python can follow, or an integer longer
    than it converts, refused like any other malformed JSON (as a plain ValueError, the
    class the unread reason names)."""
    try:
        return loads(text)
    except FormatError as error:
        raise ValueError(error.message) from None


def _record_draft(
    record: Mapping[str, Any],
    *,
    scope: str,
    kind: str,
    key: str,
    ref: SourceRef,
    order: tuple[Any, ...],
) -> Draft:
    draft = Draft(scope=scope, key=key, kind=kind, order=order)
    draft.sources.append(ref)
    text = next(
        (
            str(record[k])
            for k in _TEXT_KEYS
            if isinstance(record.get(k), (str, int)) and str(record[k]).strip()
        ),
        "",
    )
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0] if text else ""
    draft.put("description", first[:200], ref)
    draft.label = first[:60] or key
    if text:
        draft.text_parts.append(text[:1500])
    date = next((str(record[k]) for k in _DATE_KEYS if record.get(k)), "")
    draft.put("date", date_of(date) or date, ref)
    found = _latency_key(record)
    if found is not None:
        value = _float(record[found[0]], found[0])
        if value is not None:
            draft.put("latency", value, ref)
            draft.put("unit", found[1] or None, ref)
    for name, value in record.items():
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        preferred = name.lower() in {"speedup", "mean_speedup", "geomean_speedup", "geomean"}
        if "speedup" in name.lower() and numeric and (preferred or draft.speedup is None):
            speedup = _float(value, name)
            if preferred and speedup is not None and measurable(speedup):
                draft.speedup = None  # the preferred key's value replaces another key's
            draft.put("speedup", speedup, ref)
    tag = " ".join(str(record.get(k, "")) for k in ("git_hash", "commit", "tag", "label"))
    words = tag.replace("-", " ").replace("+", " ").replace("_", " ")
    draft.put("status", status_of(words, allow_baseline=False), ref)
    draft.put("status", status_of(text[:200], allow_baseline=False), ref)
    raw_status = record.get("status")
    if isinstance(raw_status, str):
        lowered = raw_status.lower()
        if lowered in {"profiling", "profile", "skipped", "not run"}:
            draft.put("attempted", False, ref)
        draft.put_correctness(correctness_of(raw_status), correctness_note(raw_status), ref)
        draft.put("status", status_of(raw_status, allow_baseline=False), ref)
    # A bench row's own verdict (``"correctness": "PASS"``, as kernelopt.bench writes it);
    # "UNKNOWN" states none, so a verdict from elsewhere in the row stands.
    raw_correctness = record.get("correctness")
    if isinstance(raw_correctness, str):
        draft.put_correctness(
            correctness_of(raw_correctness), correctness_note(raw_correctness), ref
        )
    for name in ("passed", "correct", "ok"):
        if isinstance(record.get(name), bool):
            draft.put("correctness", Correctness.PASS if record[name] else Correctness.FAIL, ref)
    # Negated, a failure word reports its absence ("100/100 pass, no RUNTIME_ERRORs").
    stated = first_stated(_STRONG_FAIL, text)
    if stated is not None:
        draft.overrule_correctness(Correctness.FAIL, _sentence_at(text, stated.start()), ref)
    if draft.latency is None and draft.speedup is None and draft.status is None:
        draft.put("attempted", False, ref)
    return draft


def _sentence_at(text: str, at: int) -> str:
    """The sentence (or line) of ``text`` that holds the character at ``at``."""
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if match.start() >= at:
            return text[start : match.start()].strip()
        start = match.end()
    return text[start:].strip()


def read_jsonl(file: TextFile, *, unread: list[tuple[str, str]]) -> list[Draft]:
    """One draft per JSON object line; unparsable lines are reported, not fatal."""
    drafts = []
    records: list[dict[str, Any]] = []
    bad = 0
    refused: list[str] = []
    for index, line in enumerate(file.lines):
        if not line.strip():
            continue
        try:
            record = _loads(line)
        except ValueError:
            bad += 1
            continue
        if not isinstance(record, dict):
            continue
        ref = SourceRef(path=file.path, line=index + 1)
        try:
            draft = _record_draft(
                record,
                scope=f"jsonl:{file.path}",
                kind="jsonl",
                key=str(index),
                ref=ref,
                order=("", index),
            )
        except _UnreadableError as error:
            refused.append(f"line {index + 1}: {error.reason}")
            continue
        records.append(record)
        drafts.append(draft)
    if bad:
        unread.append(
            (
                file.path,
                f"{count_text(bad, 'line')} {'is' if bad == 1 else 'are'} not JSON; skipped",
            )
        )
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        unread.append((file.path, f"{refused[0]}{more}; skipped"))
    if records and all(_is_call(r) for r in records):
        # A workload trace (``kernelopt.workload.Recorder``: op, args, duration) records the
        # calls a kernel served, not attempts to change it: a series of calls, never judged.
        for draft in drafts:
            draft.kind = "trace"
            draft.attempted = False
        return drafts
    matrix = _benchmark_matrix(records)
    if matrix:
        unread.append((file.path, f"{matrix}, not an experiment history; not read as one"))
        return []
    return drafts


def _is_call(record: Mapping[str, Any]) -> bool:
    """Whether ``record`` is one call of a workload trace: an op name and its arguments."""
    return isinstance(record.get("op"), str) and isinstance(record.get("args"), dict)


# Keys that say which implementation and which shape a benchmark row times, and keys that
# say which attempt of an effort a history row records.
_IMPL_KEYS = ("impl", "implementation", "kernel", "variant", "provider", "backend")
_POINT_KEYS = ("shape_name", "shape", "point", "config", "case", "workload", "size")
_ATTEMPT_KEYS = ("exp", "experiment", "step", "iteration", "iter", "version", "attempt", "commit")


def _numbers_attempts(records: list[dict[str, Any]], key: str) -> bool:
    """Whether ``key`` tells the rows' attempts apart: it holds two or more values among
    them. The rows of one benchmark run share their commit (``kernelopt.bench`` writes one,
    or null outside a repository); the rows of a history each name their own."""
    values = {json.dumps(r[key], sort_keys=True) for r in records if r.get(key) is not None}
    return len(values) >= 2


# The keys every row kernelopt.bench writes holds (BenchRow): what tells its rows apart
# from a history's, whatever their number of implementations and points.
_BENCH_ROW_KEYS = frozenset({"op", "impl", "config", "mode", "unit", "median"})


def _benchmark_matrix(records: list[dict[str, Any]]) -> str:
    """Describe ``records`` when they are benchmark rows, else ``""``: such rows compare
    kernels side by side, they are not attempts one after another.

    Rows ``kernelopt.bench`` writes (every :data:`_BENCH_ROW_KEYS` key) are benchmark rows
    however many implementations and points they hold: five implementations at one point
    were read as five experiments, and the same writer's rows at two points as benchmark
    rows. Other rows are benchmark rows when they time several implementations at several
    shapes (``impl`` and ``shape_name`` keys). Rows that number their attempts (an
    experiment or step number, a commit of their own) are a history either way.
    """
    if not records or any(_numbers_attempts(records, key) for key in _ATTEMPT_KEYS):
        return ""

    def distinct(keys: tuple[str, ...]) -> int:
        for key in keys:
            values = {json.dumps(r.get(key), sort_keys=True) for r in records if key in r}
            if len(values) >= 2:
                return len(values)
        return 0

    if all(record.keys() >= _BENCH_ROW_KEYS for record in records):
        impls = len({json.dumps(r["impl"]) for r in records})
        points = len({json.dumps(r["config"], sort_keys=True) for r in records})
        held = f"{count_text(impls, 'implementation')} at {count_text(points, 'point')}"
        return f"benchmark rows ({held})"
    if len(records) < 4:
        return ""
    impls, points = distinct(_IMPL_KEYS), distinct(_POINT_KEYS)
    if impls and points:
        return f"benchmark rows ({impls} implementations at {points} points)"
    return ""


def read_json(file: TextFile, *, unread: list[tuple[str, str]]) -> list[Draft]:
    """Runs from a JSON list of records or an archive ``{"log": [...]}``; other JSON is ignored."""
    try:
        data = _loads(file.text)
    except ValueError as error:
        unread.append(
            (file.path, f"not valid JSON ({error.__class__.__name__}: {str(error)[:80]})")
        )
        return []
    records: list[Any] = []
    if isinstance(data, list):
        records = data
    elif isinstance(data, dict):
        for key in ("log", "experiments", "history", "runs", "entries", "results"):
            if isinstance(data.get(key), list):
                records = data[key]
                break
    drafts = []
    refused: list[str] = []
    starts = _record_starts(file) if records else []
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            continue
        if _latency_key(record) is None and not any("speedup" in k.lower() for k in record):
            continue
        if (
            "applied" in record
            and isinstance(record["applied"], list)
            and "description" not in record
        ):
            record = {
                **record,
                "description": f"{record.get('id', '')}: {', '.join(map(str, record['applied']))}",
            }
        ref = SourceRef(path=file.path, line=_line_of_record(starts, index))
        try:
            drafts.append(
                _record_draft(
                    record,
                    scope=f"json:{file.path}",
                    kind="archive-json",
                    key=str(index),
                    ref=ref,
                    order=("", index),
                )
            )
        except _UnreadableError as error:
            refused.append(f"record {index + 1}: {error.reason}")
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        unread.append((file.path, f"{refused[0]}{more}; skipped"))
    return drafts


def _record_starts(file: TextFile) -> list[int]:
    """The lines records of pretty-printed JSON start at ("{" lines; best effort), found
    once per file: once per record was quadratic in a long archive."""
    return [
        n
        for n, line in enumerate(file.lines, start=1)
        if line.strip() in {"{", "{,"} or line.strip().startswith('{"')
    ]


def _line_of_record(starts: list[int], index: int) -> int:
    return starts[index + 1] if index + 1 < len(starts) else 1


def _split_line(line: str, tsv: bool) -> list[str]:
    """The cells of one line of a TSV (split at tabs) or a CSV (quoted as CSV quotes: a
    quoted cell such as ``"a, b"``, with ``""`` for a quote inside it, is one cell).

    Each line is parsed on its own, and a line that is not well-formed CSV (an unclosed
    quote) is split at every comma, as written, so it never swallows the lines after it.
    """
    if tsv:
        return line.split("\t")
    try:
        return next(csv.reader([line], strict=True), [])
    except csv.Error:
        # Quoting gone wrong, or a cell past the csv module's field limit (a line may be
        # as long as the file): split as written rather than lose the row.
        return line.split(",")


def read_table_file(file: TextFile, *, position: int) -> list[Draft]:
    """A TSV/CSV: a table of experiments, or one benchmark run (one row per workload)."""
    tsv = file.path.lower().endswith(".tsv")
    # Each line with its own number: blank lines still count when a fact cites its line.
    numbered = [
        (number, _split_line(line, tsv))
        for number, line in enumerate(file.lines, start=1)
        if line.strip()
    ]
    if len(numbered) < 2:
        return []
    header_line, header_cells = numbered[0]
    header = tuple(cell.strip() for cell in header_cells)
    table = Table(
        header=header,
        rows=tuple(
            Row(
                cells=tuple(([c.strip() for c in cells] + [""] * len(header))[: len(header)]),
                line=number,
                missing=max(len(header) - len(cells), 0),
            )
            for number, cells in numbered[1:]
        ),
        line=header_line,
    )
    roles = roles_of(table)
    folder = file.path.rsplit("/", 1)[0] if "/" in file.path else ""
    if roles is not None and (roles.id is not None or roles.status is not None):
        return read_table(
            file, table, roles, kind="tsv", slug_scope=f"slug:{folder}", position=position
        )
    column = next(
        (i for i, name in enumerate(header) if _LATENCY_KEY.search(name.lower().replace(" ", "_"))),
        None,
    )
    if column is None:
        return []
    refused: list[str] = []
    values = [
        number_at(row.cells[column], SourceRef(path=file.path, line=row.line), refused)
        for row in table.rows
    ]
    present = [v for v in values if v is not None]
    if not present and not refused:
        return []
    suffix = _UNIT_SUFFIX.search(header[column].lower())
    ref = SourceRef(path=file.path, line=1)
    date = date_of(file.stem) or ""
    draft = Draft(
        scope=f"tsv:{folder}",
        key=file.path,
        kind="tsv",
        order=(date, 0, file.stem),
        label=file.stem,
    )
    draft.sources.append(ref)
    draft.put("description", re.sub(r"[_-]+", " ", file.stem).strip(), ref)
    draft.put("date", date, ref)
    draft.warnings += refused
    draft.put("latency", sum(present) / len(present) if present else None, ref)
    draft.put("unit", suffix.group(1) if suffix else None, ref)
    of = _OF.search(file.stem)
    if of is not None:
        passed, total = int(of.group(1)), int(of.group(2))
        draft.put("correctness", Correctness.PASS if passed == total else Correctness.FAIL, ref)
    elif len(present) + len(refused) < len(values):  # a row with no time failed
        draft.put("correctness", Correctness.FAIL, ref)
    if "baseline" in file.stem.lower():
        draft.put("status", Status.BASELINE, ref)
    draft.text_parts.append(draft.description)
    return [draft]
