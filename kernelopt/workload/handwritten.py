"""Read a hand-written ``workload_profile.md`` tolerantly: extract what it states.

People (and agents) write workload profiles as they see fit: a title naming the op, a table
of shapes with counts or percentages, a few lines like ``s_q = 1 in 100% of calls``. This
reader extracts:

- the op name, from a heading (``# Workload profile: mla_decode``, ``## Op: softmax``) or a
  ``Kernel:``/``Op:`` line;
- shape tables: a column of counts and/or percentages and/or times, plus either one column
  per axis (``| b | s_q | seqlen | Count | % |``) or a shape column (``(32, 1, 128)``,
  ``[32,1,128]``, ``32x1x128``, ``b=32 s_q=1``; axis names may come from the header:
  ``Shape (b, s_q, h_q)``); a row labelled ``other`` or ``rest`` becomes the profile's
  ``other`` row, so the listed shapes' shares count the calls it holds;
- statements ``<axis> = <value> in <p>% of calls`` (optionally ``(<q>% of time)``),
  ``<axis> is always <value>``, ``<axis> = <value> in all calls``;
- a call count from prose (``48,213 calls``).

Table cells are read with markdown's escapes, as kernelopt writes them
(:mod:`kernelopt._table_cells`): ``\\|`` is a pipe, ``\\\\`` a backslash, ``\\_`` an
underscore (a header ``s\\_q`` names the axis ``s_q``); a pipe inside a code span stays in
its cell when the row would otherwise have more cells than its header.

Axis values are shape sizes: one that reads as a number but is negative or fractional
(``b = -3``, ``(32, 1.5)``) is not read, and its note says why; the row keeps its other
sizes and its calls, and a row whose shape gives no size counts its calls as ``other``, so
the other shapes' shares stay shares of every call. A column headed ``n`` is the axis
``n`` beside other axis columns or where the op's signature names an axis ``n``, else
counts of calls, with a note. Everything else is listed in ``notes`` ("not read: ...");
nothing raises.
"""

from __future__ import annotations

import math
import re
from typing import Any

from kernelopt._errors import KernelOptError
from kernelopt._table_cells import split_row
from kernelopt.workload.profile import (
    AxisStat,
    OpProfile,
    ShapeStat,
    ValueShare,
    WorkloadProfile,
    share,
    size1_hints,
)
from kernelopt.workload.signatures import (
    AXIS_KINDS,
    _excludes_name,
    declared_axes,
    find_signature,
    registered_signatures,
)

__all__ = ["read_handwritten_md"]

# Lines run to megabytes (a pasted log, one long word), so every pattern below that is
# searched along a line starts only where its first token starts: a match tried at every
# character of a long word, each reading to the word's end, takes time quadratic in it.
_NUM = r"-?\d[\d,_]*(?:\.\d+)?(?:[eE][+-]?\d+)?"
_NUM_START = r"(?<![\d,_])"
_AXIS = r"[A-Za-z_][\w.\[\]]*"
_AXIS_START = r"(?<![\w.\[\]])"
_STATEMENT = re.compile(
    rf"{_AXIS_START}(?P<axis>{_AXIS})\s*(?:=|==|:|is)\s*(?P<value>{_NUM})\s+(?:in|for|on)\s+"
    rf"(?P<pct>{_NUM})\s*%\s+of\s+(?:all\s+|the\s+)?(?:calls|invocations|launches)"
    rf"(?:\s*\(\s*(?P<tpct>{_NUM})\s*%\s+of\s+(?:the\s+)?time\s*\))?",
    re.IGNORECASE,
)
_ALWAYS = re.compile(
    rf"{_AXIS_START}(?:"
    rf"(?:(?P<axis1>{_AXIS})\s+is\s+always\s+(?P<value1>{_NUM})\b)|"
    rf"(?:(?P<axis2>{_AXIS})\s*(?:=|==)\s*(?P<value2>{_NUM})\s+(?:in\s+)?(?:all|every|each)\s+calls?)|"
    rf"(?:(?P<axis3>{_AXIS})\s*(?:=|==)\s*(?P<value3>{_NUM})\s*\(\s*always\s*\)))",
    re.IGNORECASE,
)
# The suffix group takes its own whitespace: "\s*K?\s+" would try every split of a long
# run of spaces between the two.
_TOTAL = re.compile(rf"{_NUM_START}(?P<n>{_NUM})(?:\s*(?P<suffix>[kKmM]))?\s+(?:total\s+)?calls\b")
# Matched against stripped lines; the name runs to the end of the line, taken greedily (a
# lazy name before "\s*$" rescans every run of spaces inside it).
_HEADING_OP = re.compile(
    r"^#+\s*(?:op|kernel|workload\s+profile)\s*(?::|—|–|-|for)\s*(?P<op>.+)$", re.IGNORECASE
)
_LINE_OP = re.compile(
    r"^[-*\s]*(?:op|kernel)\**\s*:\s*(?:`\s*)?(?P<op>[^`\s][^`]*)`?$", re.IGNORECASE
)
_DIGIT = re.compile(r"\d")


def _number(text: str) -> float | None:
    """Parse ``41,000``, ``1.5k``, ``85%`` (as 85), ``3e3``; None when not a number."""
    cleaned = text.strip().strip("`*_ ").replace(",", "").replace("_", "")
    cleaned = cleaned.rstrip("%").strip()
    scale = 1.0
    if cleaned[-1:] in ("k", "K", "m", "M") and cleaned[:-1]:
        scale = 1e3 if cleaned[-1] in "kK" else 1e6
        cleaned = cleaned[:-1]
    try:
        value = float(cleaned) * scale
    except ValueError:
        return None
    return value if math.isfinite(value) else None


# Why an axis value that reads as a number is not read: every axis is a shape size.
_NOT_A_SIZE = "a shape size is a non-negative integer"
_NOT_A_COUNT = "a count of calls is a non-negative integer"


def _is_size(value: float) -> bool:
    """Whether ``value`` (finite, from :func:`_number`) is a shape size: 0, 1, 2..."""
    return value >= 0 and value.is_integer()


def _split_row(line: str, width: int | None = None) -> list[str]:
    """The cells of a table row, read with markdown's escapes as kernelopt writes them
    (``\\|`` a pipe, ``\\\\`` a backslash); given the header's ``width``, a row too wide
    keeps the pipes of its code spans (`` `a | b` ``) in their cells."""
    return split_row(line, width, backslash_escapes=True)


def _is_separator(cells: list[str]) -> bool:
    return bool(cells) and all(re.fullmatch(r":?-{2,}:?", c.replace(" ", "")) for c in cells if c)


class _Column:
    def __init__(self, header: str) -> None:
        self.header = header
        h = header.lower().strip("`* ")
        self.names: list[str] = []
        self.scale = 1.0
        self.per_call = False
        # A unit is a word of its own ("kernel ms"), not letters inside one ("items").
        timeish = any(w in h for w in ("time", "latency", "duration", "µs", "(us)", "(ms)")) or (
            re.search(r"\b(?:us|ms|ns)\b", h) is not None
        )
        if "%" in h or "share" in h or "pct" in h or "percent" in h or "fraction" in h:
            self.kind = "time_pct" if timeish else "pct"
        elif timeish:
            self.kind = "time"
            if "ms" in h.replace("ms)", "ms"):
                self.scale = 1000.0
            if re.search(r"\bns\b|\(ns\)", h):
                self.scale = 1e-3
            self.per_call = any(
                w in h for w in ("avg", "mean", "median", "per call", "per-call", "p50")
            )
        elif (
            h
            in (
                "calls",
                "count",
                "n",
                "#calls",
                "num calls",
                "occurrences",
                "freq",
                "frequency",
                "hits",
                "instances",
                "invocations",
            )
            # "call count", "count (calls)"; not "counter ..." (a benchmark's column).
            or re.search(r"\bcounts?\b", h) is not None
            or (h.startswith("calls") and "%" not in h)
        ):
            self.kind = "count"
        elif h == "axes":
            # kernelopt's own shape table names each shape's axes here (``n=1 rows=64``),
            # beside the arguments they were read from.
            self.kind = "named"
        elif any(w in h for w in ("shape", "args", "dims", "config", "signature", "sizes")):
            self.kind = "shape"
            # The first "(...)" of the header, found without a regex that would rescan the
            # rest of the header from every "(".
            start = header.find("(")
            end = header.find(")", start + 1) if start >= 0 else -1
            if end >= 0:
                inner = header[start + 1 : end]
                self.names = [n.strip(" `") for n in inner.split(",") if n.strip()]
        elif h in ("#", "rank", "id", "idx", "no", "no."):
            self.kind = "index"
        elif re.fullmatch(_AXIS, header.strip("` ")):
            self.kind = "axis"
            self.names = [header.strip("` ")]
        else:
            self.kind = "unknown"


def _shape_cell(text: str, names: list[str], not_sizes: list[str]) -> dict[str, float] | None:
    """The axes a shape cell spells, or None when a dim is not a number. A dim that is a
    number but no size (``-1``, ``2.5``) is listed in ``not_sizes`` (``"dim1 = -1"``)."""
    found = _shape_dims(text, names)
    if found is None:
        return None
    for name, (value, spelled) in found.items():
        if not _is_size(value):
            not_sizes.append(f"{name} = {spelled}")
    return {name: value for name, (value, _spelled) in found.items()}


def _shape_dims(text: str, names: list[str]) -> dict[str, tuple[float, str]] | None:
    """Each axis of a shape cell with its value and its spelling; None for a non-number."""
    cell = text.strip().strip("`")
    pairs = re.findall(rf"{_AXIS_START}({_AXIS})\s*=\s*({_NUM})(?![\d\[])", cell)
    # Dims hold no bracket: each match reads to the next bracket, not to the cell's end.
    tensors = re.findall(rf"{_AXIS_START}({_AXIS})\s*=\s*[\[(]([^\[\]()]*)[\])]", cell)
    out: dict[str, tuple[float, str]] = {}
    if tensors:
        for name, dims in tensors:
            for i, dim in enumerate(d for d in re.split(r"[,\s]+", dims) if d):
                value = _number(dim)
                if value is None:
                    return None
                out[f"{name}[{i}]"] = (value, dim)
        return out
    if pairs:
        for name, spelled in pairs:
            number = _number(spelled)
            if number is None:
                return None
            out[name] = (number, spelled)
        return out
    inner = re.sub(r"^[\[(]|[\])]$", "", cell)
    parts = [p for p in re.split(r"\s*[,x×]\s*|\s+", inner) if p]
    values = [_number(p) for p in parts]
    if not values or any(v is None for v in values):
        return None
    labels = names if len(names) == len(values) else [f"dim{i}" for i in range(len(values))]
    return {
        label: (v, part)
        for label, v, part in zip(labels, values, parts, strict=True)
        if v is not None
    }


class _ValueAcc:
    """Shares, counts and times of one axis value summed over table rows."""

    def __init__(self) -> None:
        self.call_share = 0.0
        self.calls: int | None = 0
        self.time_share: float | None = None
        self.time_us: float | None = None

    def add(self, shape: ShapeStat) -> None:
        self.call_share += shape.call_share
        self.calls = None if self.calls is None or shape.calls is None else self.calls + shape.calls
        if shape.time_share is not None:
            self.time_share = (self.time_share or 0.0) + shape.time_share
        if shape.time_us is not None:
            self.time_us = round((self.time_us or 0.0) + shape.time_us, 3)

    def share(self, value: float) -> ValueShare:
        return ValueShare(
            value=value,
            calls=self.calls,
            call_share=min(self.call_share, 1.0),
            time_us=self.time_us,
            time_share=None if self.time_share is None else min(self.time_share, 1.0),
        )


def _signature_axes(name: str) -> set[str]:
    """The axis names the signature of the op named ``name`` gives, empty without one."""
    sig = _signature_for(name)
    if sig is None:
        return set()
    return {*declared_axes(sig), *sig.reduced, *sig.fixed, *(sig.select or ())}


def _signature_for(name: str) -> Any:
    """The registered signature an op named in prose refers to ("MLA decode" → mla_decode)."""
    normalized = re.sub(r"[\s-]+", "_", name.strip().lower())
    sig = find_signature(name) or find_signature(normalized)
    if sig is not None:
        return sig
    best = None
    for candidate in registered_signatures():
        # "MLA prefill attention" contains "attention", but that signature excludes it.
        if _excludes_name(candidate, normalized):
            continue
        for op in candidate.ops:
            plain = len(op) >= 4 and not any(c in op for c in "*?[")
            if plain and op.lower() in normalized and (best is None or len(op) > best[0]):
                best = (len(op), candidate)
    return None if best is None else best[1]


# Labels of a table row that sums the others, normalized to lower case: its calls are
# no shape's.
_TOTAL_LABELS = frozenset(("total", "sum", "all", "overall", "all calls", "all shapes"))
# Labels of a table row that stands for the shapes not listed, normalized to lower case.
_OTHER_LABELS = frozenset(
    ("other", "others", "other shapes", "rest", "the rest", "remaining", "remainder")
)


class _OpDraft:
    def __init__(self, name: str, *, verbatim: bool = False) -> None:
        self.name = name
        # kernelopt's own layout: its cells are the values as they were (read back whole by
        # the exact reader), backticks included, not text a person put in code marks.
        self.verbatim = verbatim
        self.rows: list[dict[str, Any]] = []
        self.statements: list[tuple[str, float, float, float | None]] = []
        self.total_calls: float | None = None
        # Axis name -> (kind, source), from an axis-statistics table that gives them.
        self.sources: dict[str, tuple[str, str]] = {}
        # Axis name -> its row of such a table with a Values column, read whole: the axes
        # no shape row lists (lengths from values summaries, per-call conditions, ratios)
        # are known only from there.
        self.written: dict[str, AxisStat] = {}
        # The op's "- Calls:" and "- Time (us):" fields in kernelopt's layout: what the
        # counts and times of the Values column are shares of.
        self.written_calls: float | None = None
        self.written_time: float | None = None


def _text_cell(cell: str, draft: _OpDraft) -> str:
    """A cell's text: whole in kernelopt's layout, else without the backticks and blanks
    around it (`` `x.shape[0]` `` is code marked as such, not a name with backticks)."""
    return cell if draft.verbatim else cell.strip("` ")


def _read_axis_sources(
    header: list[str], rows: list[tuple[int, list[str]]], draft: _OpDraft, notes: list[str]
) -> None:
    """Keep what an axis-statistics table with ``Kind`` and ``Source`` columns (kernelopt's
    own) says each axis is read from, so that guards stay code (``x.shape[dim] == 1``, not
    ``n == 1``) when an edited profile is read tolerantly; with a ``Values`` column, keep
    each row whole too, for the axes no shape row lists."""
    names = [cell.strip("`* ").lower() for cell in header]
    if "kind" not in names or "source" not in names:
        return
    kind_at, source_at = names.index("kind"), names.index("source")
    for number, cells in rows:
        if len(cells) <= max(kind_at, source_at) or not cells[0]:
            continue
        kind, source = _text_cell(cells[kind_at], draft), _text_cell(cells[source_at], draft)
        if kind in AXIS_KINDS and source not in ("", "-"):
            draft.sources[_text_cell(cells[0], draft)] = (kind, source)
        if kind in AXIS_KINDS and "values" in names:
            _read_axis_row(number, names, cells, draft, notes)


# A value of the Values column as kernelopt writes it: ``1000: 10.0% [n=1 t=41.3]``, the
# bracket optional (``p=``/``tp=`` give exact shares where counts do not).
_VALUE_ENTRY = re.compile(
    rf"^\s*(?P<value>{_NUM})\s*:\s*(?P<pct>{_NUM})\s*%\s*(?:\[(?P<fields>[^\[\]]*)\])?\s*$"
)
# The statistics columns of kernelopt's Axes table, by header, and the AxisStat field each
# fills.
_AXIS_NUMBERS = {
    "min": "min",
    "median": "median",
    "max": "max",
    "mean": "mean",
    "time median": "time_median",
}


def _read_axis_row(
    number: int, names: list[str], cells: list[str], draft: _OpDraft, notes: list[str]
) -> None:
    """Read one row of an Axes table with a Values column into ``draft.written``; entries
    and cells that do not read are noted and left out."""
    name = _text_cell(cells[0], draft)
    raw = dict(zip(names, cells, strict=False))
    cell = {header: text.strip("` ") for header, text in raw.items()}
    fields: dict[str, Any] = {}
    for header, field in _AXIS_NUMBERS.items():
        value = _number(cell.get(header, "-")) if cell.get(header, "-") not in ("", "-") else None
        fields[field] = value
    distinct = cell.get("distinct", "-")
    count = _number(distinct) if distinct not in ("", "-") else None
    fields["distinct"] = int(count) if count is not None and _is_size(count) else None
    values: list[ValueShare] = []
    bad: list[str] = []
    for entry in (e for e in cell.get("values", "-").split(";") if e.strip() not in ("", "-")):
        share_of = _value_share(entry, draft)
        if share_of is None:
            bad.append(entry.strip())
        else:
            values.append(share_of)
    if bad:
        notes.append(f"line {number}: not read: values {'; '.join(bad)} of axis {name}")
    kind, source = (
        _text_cell(raw.get("kind", "shape"), draft),
        _text_cell(raw.get("source", ""), draft),
    )
    try:
        draft.written[name] = AxisStat(
            name=name,
            kind=kind,
            source="" if source == "-" else source,
            values=tuple(values),
            **fields,
        )
    except KernelOptError as error:
        notes.append(f"line {number}: not read: axis {name}: {error}")


def _value_share(entry: str, draft: _OpDraft) -> ValueShare | None:
    """One entry of a Values cell; None when it does not read."""
    match = _VALUE_ENTRY.match(entry)
    if match is None:
        return None
    value, pct = _number(match["value"]), _number(match["pct"])
    given = dict(f.split("=", 1) for f in (match["fields"] or "").split() if "=" in f)
    calls, time = _number(given.get("n", "-")), _number(given.get("t", "-"))
    exact, time_exact = _number(given.get("p", "-")), _number(given.get("tp", "-"))
    if value is None or pct is None or (calls is not None and not _is_size(calls)):
        return None
    # The exact share where written, else the count over the op's calls as written, else
    # the percentage shown (rounded to 0.1 %).
    call_share = exact if exact is not None else share(calls, draft.written_calls)
    time_share = time_exact if time_exact is not None else share(time, draft.written_time)
    try:
        return ValueShare(
            value=value,
            calls=None if calls is None else int(calls),
            call_share=min(pct / 100 if call_share is None else call_share, 1.0),
            time_us=time,
            time_share=None if time_share is None else min(time_share, 1.0),
        )
    except KernelOptError:
        return None


# What a column of each kind of number holds, in the note of a table with several.
_NUMBER_KINDS = {
    "count": "counts of calls",
    "pct": "shares of calls",
    "time": "times",
    "time_pct": "shares of time",
}


def _one_column_per_number(columns: list[_Column], start: int, notes: list[str]) -> None:
    """Read each kind of number (a count, a time, ...) from the first column of its kind.

    A table with two time columns (``Host time (us)``, ``Kernel time (us)``) gives two
    times per row, and each row kept the last one read without a word. The first is read,
    as a reader reads the table, and a note names it and the columns left unread.
    """
    for kind, what in _NUMBER_KINDS.items():
        same = [column for column in columns if column.kind == kind]
        if len(same) < 2:
            continue
        for column in same[1:]:
            column.kind = "unknown"
        names = [column.header.strip() for column in same]
        notes.append(
            f"line {start + 1}: {what} read from {names[0]}, the first of "
            f"{len(names)} such columns; not read: {', '.join(names[1:])}"
        )


def _read_table(lines: list[str], start: int, draft: _OpDraft, notes: list[str]) -> int:
    """Read the table starting at ``start``; return the index after it."""
    end = start
    while end < len(lines) and lines[end].strip().startswith("|"):
        end += 1
    header = _split_row(lines[start])
    # Each row with its line number: the separator row is dropped from the body, so the
    # position in the body is no line number.
    body = [(index + 1, _split_row(lines[index], len(header))) for index in range(start + 1, end)]
    body = [(number, row) for number, row in body if not _is_separator(row)]
    columns = [_Column(h) for h in header]
    if any(c.kind == "named" for c in columns):
        # The axes are named already: the arguments they were read from only label the
        # shape, as kernelopt writes it (their dims would read as x[0], x[1] beside n).
        for column in columns:
            if column.kind == "shape":
                column.kind = "label"
    counts = [c for c in columns if c.kind == "count"]
    shaped = any(c.kind in ("axis", "shape") for c in columns)
    for column in counts:
        if column.header.strip("`* ").lower() != "n":
            continue
        # "n" is a count or an axis (the length of softmax, GEMM, top-k rows): an axis
        # beside another count column, beside other axis columns (`| m | n | k |`), with
        # no other column for the shape (`| n | % |`), or where the op's signature names
        # an axis n; else a count, said in a note.
        if (
            len(counts) > 1
            or not shaped
            or any(c.kind == "axis" for c in columns)
            or column.header.strip("`* ") in _signature_axes(draft.name)
        ):
            column.kind, column.names = "axis", [column.header.strip("`* ")]
        else:
            notes.append(
                f"line {start + 1}: column {column.header.strip()} read as counts of calls "
                "(no axis column beside it, and the op's signature names no axis n)"
            )
    _one_column_per_number(columns, start, notes)
    kinds = {c.kind for c in columns}
    if header and header[0].strip("` *").lower() in (
        "axis",
        "dim",
        "dimension",
        "name",
        "parameter",
    ):
        written = len(draft.written)
        _read_axis_sources(header, body, draft, notes)
        what = (
            "its shape data only"
            if len(draft.written) == written
            else "the kinds and sources of its axes, and the rows of those no shape row lists"
        )
        notes.append(f"line {start + 1}: axis-statistics table read for {what}")
        return end
    if not kinds & {"count", "pct", "time", "time_pct"} or not kinds & {"axis", "shape", "named"}:
        notes.append(
            f"line {start + 1}: not read: table with columns {', '.join(header)} "
            "(no shape and count/percent columns recognized)"
        )
        return end
    for number, cells in body:
        row: dict[str, Any] = {"axes": {}, "label": []}
        bad = []
        # Numbers that are no shape size ("-3", "1.5"): not read, as malformed cells are.
        not_sizes: list[str] = []
        not_counts: list[str] = []
        # A row of the remaining shapes ("| other | - | 1000 |") holds calls the shares
        # are taken of; its shape cells name it instead of giving sizes.
        other = any(
            column.kind in ("axis", "shape", "named", "label", "index")
            and cell.strip("`*_ ").lower() in _OTHER_LABELS
            for column, cell in zip(columns, cells, strict=False)
        )
        if other:
            row["other"] = True
        total = any(
            column.kind in ("axis", "shape", "named", "label", "index")
            and cell.strip("`*_ :").lower() in _TOTAL_LABELS
            for column, cell in zip(columns, cells, strict=False)
        )
        for column, cell in zip(columns, cells, strict=False):  # rows may be short
            if column.kind in ("index", "unknown") or cell in ("", "-", "—"):
                continue
            if other and column.kind in ("axis", "shape", "named", "label"):
                continue
            if column.kind == "label":
                row["args"] = _text_cell(cell, draft)
                continue
            if column.kind == "axis":
                value = _number(cell)
                if value is None:
                    bad.append(column.header)
                    continue
                if not _is_size(value):
                    not_sizes.append(f"{column.names[0]} = {cell.strip('`*_ ')}")
                    continue
                row["axes"][column.names[0]] = value
                row["label"].append(f"{column.names[0]}={cell.strip('` ')}")
            elif column.kind in ("shape", "named"):
                wrong: list[str] = []
                parsed = _shape_cell(cell, column.names, wrong)
                if parsed is None:
                    bad.append(column.header)
                    continue
                # The dims that are sizes are kept, as a row of axis columns keeps its
                # other cells: a row dropped whole took its calls out of the shares.
                not_sizes += wrong
                kept = {name: v for name, v in parsed.items() if _is_size(v)}
                row["axes"].update(kept)
                if kept:
                    row["label"].append(
                        cell.strip("` ")
                        if not wrong
                        else " ".join(f"{name}={v:g}" for name, v in kept.items())
                    )
            else:
                # The unit is cut from the start of its run of spaces only: tried inside
                # the run, the match would rescan the rest of the run from every space.
                value = _number(re.sub(r"(?<!\s)\s*(us|µs|ms|ns|s)$", "", cell.strip()))
                if value is None:
                    bad.append(column.header)
                    continue
                if column.kind == "pct":
                    row["pct"] = value / 100 if "%" in cell or "%" in column.header else value
                elif column.kind == "time_pct":
                    row["tpct"] = value / 100 if "%" in cell or "%" in column.header else value
                elif column.kind == "count":
                    if not _is_size(value):
                        # A count of 0.0438 (a column of times read as counts) was cut
                        # to 0 calls, its row kept.
                        not_counts.append(f"{column.header.strip('`* ')} = {cell.strip('`*_ ')}")
                        continue
                    row["calls"] = value
                else:
                    scale = column.scale
                    if cell.strip().endswith("ms"):
                        scale = 1000.0
                    row["time"] = value * scale
                    row["per_call"] = column.per_call
        if bad:
            notes.append(f"line {number}: not read: cells under {', '.join(bad)}")
        if not_sizes:
            notes.append(f"line {number}: not read: {', '.join(not_sizes)} ({_NOT_A_SIZE})")
        if not_counts:
            notes.append(f"line {number}: not read: {', '.join(not_counts)} ({_NOT_A_COUNT})")
        counted = "calls" in row or "pct" in row
        if (row["axes"] or other) and (counted or "time" in row or "tpct" in row):
            draft.rows.append(row)
        elif counted and (bad or not_sizes) and not total:
            # Calls of a shape that does not read are still calls: left out, they would
            # raise the shares of every other shape (40 of 100 calls read as 100 %).
            row["other"] = True
            draft.rows.append(row)
            notes.append(f"line {number}: {_calls_of(row)} of a shape not read counted as other")
        elif not bad and not not_sizes and not not_counts:
            notes.append(f"line {number}: not read: row without shape or count")
        elif row["axes"]:
            notes.append(
                f"line {number}: shape {' '.join(row['label'])} left out: its calls are not "
                "known, so the shares are of the other rows' calls"
            )
    return end


def _calls_of(row: dict[str, Any]) -> str:
    """What a row's calls are, in words: ``"its 60 calls"``, ``"its 12.0% of calls"``."""
    if "calls" in row:
        return f"its {int(row['calls'])} calls"
    return f"its {row['pct'] * 100:.1f}% of calls"


def _total(rows: list[dict[str, Any]], key: str) -> float | None:
    """The sum of ``key`` over ``rows``; None unless every row gives it."""
    values: list[float] = [r[key] for r in rows if r.get(key) is not None]
    return sum(values) if len(values) == len(rows) else None


def _other_shape(
    rows: list[dict[str, Any]], calls_total: float | None, time_total: float | None
) -> ShapeStat | None:
    """The rows of the shapes not listed (``| other | ... |``) as one ``other`` row, when
    their share of calls is known."""
    if not rows:
        return None
    calls = _total(rows, "calls")
    call_share = _total(rows, "pct")
    if call_share is None and calls is not None:
        call_share = share(calls, calls_total)
    if call_share is None or not 0 <= call_share <= 1.0 + 1e-9:
        return None
    time = _total(rows, "time")
    time_share = _total(rows, "tpct")
    if time_share is None:
        time_share = share(time, time_total)
    try:
        return ShapeStat(
            args="other",
            calls=None if calls is None else int(calls),
            call_share=min(call_share, 1.0),
            time_us=None if time is None else round(time, 3),
            time_share=None if time_share is None else min(time_share, 1.0),
        )
    except KernelOptError:
        return None


def _drop_overfull_shares(
    rows: list[dict[str, Any]], share_key: str, basis_key: str, what: str, notes: list[str]
) -> None:
    """Take the shares of ``what`` (``"calls"``, ``"time"``) from the rows' ``basis_key``
    (their counts, their times) where the percent column sums to more than 100 %.

    Shares of one set of calls never do: the column was left as it was when a row was
    added or a count corrected by hand. Where a row lacks its count, the shares stay, with
    a note saying they cannot all be right (a share of more than 100 % is then refused row
    by row).
    """
    given = [row[share_key] for row in rows if row.get(share_key) is not None]
    if not given or sum(given) <= 1.0 + 1e-6:
        return
    basis = "counts" if basis_key == "calls" else "times"
    if any(row.get(basis_key) is None for row in rows):
        # Kept, as nothing tells which rows are stale; but the shortcuts found from them
        # (a "dominant" shape of 90% beside another of 90%) need the reader's doubt.
        notes.append(
            f"the % of {what} column sums to {sum(given) * 100:.1f}%: shares of {what} kept "
            f"as written, as not every row gives its {basis[:-1]}; they cannot all be right"
        )
        return
    for row in rows:
        row.pop(share_key, None)
    notes.append(
        f"the % of {what} column sums to {sum(given) * 100:.1f}%: shares of {what} taken "
        f"from the {basis} instead"
    )


def _finish(draft: _OpDraft, notes: list[str]) -> OpProfile | None:
    rows = draft.rows
    counts = [r.get("calls") for r in rows]
    all_counts = bool(rows) and all(c is not None for c in counts)
    calls_total: float | None = sum(counts) if all_counts else draft.total_calls  # type: ignore[arg-type]
    for row in rows:
        if row.get("per_call") and row.get("time") is not None:
            row["time"] = row["time"] * row["calls"] if row.get("calls") is not None else None
    times = [r.get("time") for r in rows]
    time_total = sum(times) if rows and all(t is not None for t in times) else None  # type: ignore[arg-type]
    _drop_overfull_shares(rows, "pct", "calls", "calls", notes)
    _drop_overfull_shares(rows, "tpct", "time", "time", notes)
    shapes = []
    other = _other_shape([row for row in rows if row.get("other")], calls_total, time_total)
    for row in rows:
        if row.get("other"):
            continue
        n = row.get("calls")
        call_share = row.get("pct")
        if call_share is None:
            call_share = share(n, calls_total) if n is not None else None
        if call_share is None:
            # A table of times alone (a benchmark's) gives no share of calls to rank by.
            why = (
                "no count or % of calls (a time alone gives no share of calls)"
                if n is None
                else "a count of calls but no total (0, or rows without a count)"
            )
            notes.append(f"not read: shape {' '.join(row['label'])}: {why}")
            continue
        if not 0 <= call_share <= 1.0 + 1e-9:
            notes.append(f"not read: shape {' '.join(row['label'])}: no share of calls in [0, 1]")
            continue
        time = row.get("time")
        time_share = row.get("tpct", share(time, time_total))
        try:
            shapes.append(
                ShapeStat(
                    args=row.get("args") or " ".join(row["label"]),
                    axes=tuple(row["axes"].items()),
                    calls=None if n is None else int(n),
                    call_share=min(call_share, 1.0),
                    time_us=None if time is None else round(time, 3),
                    time_share=None if time_share is None else min(time_share, 1.0),
                )
            )
        except KernelOptError as error:
            notes.append(f"not read: shape {' '.join(row['label'])}: {error}")
    # Axis statistics from the shapes, then the explicit statements.
    dist: dict[str, dict[float, _ValueAcc]] = {}
    for shape in shapes:
        for name, value in shape.axes:
            acc = dist.setdefault(name, {}).setdefault(value, _ValueAcc())
            acc.add(shape)
    stated: dict[str, dict[float, tuple[float, float | None]]] = {}
    for axis, value, p, tp in draft.statements:
        stated.setdefault(axis, {})[value] = (p, tp)
    axes = []
    for name in [*dist, *(a for a in stated if a not in dist)]:
        values: dict[float, ValueShare] = {
            value: acc.share(value) for value, acc in dist.get(name, {}).items()
        }
        for value, (p, tp) in stated.get(name, {}).items():
            values[value] = ValueShare(
                value=value, call_share=min(p, 1.0), time_share=None if tp is None else min(tp, 1.0)
            )
        ordered = sorted(values.values(), key=lambda v: (-v.call_share, v.value))
        # min/median/max only when the listed values cover every call.
        complete = sum(v.call_share for v in ordered) >= 1.0 - 1e-6
        keys = sorted(values)
        median = None
        if complete:
            running = 0.0
            for key in keys:
                running += values[key].call_share
                if running >= 0.5 - 1e-9:
                    median = key
                    break
        kind, source = draft.sources.get(name, ("shape", ""))
        axes.append(
            AxisStat(
                name=name,
                kind=kind,
                source=source,
                min=keys[0] if complete else None,
                median=median,
                max=keys[-1] if complete else None,
                distinct=len(keys) if complete else None,
                values=tuple(ordered),
            )
        )
    # The axes the writer listed that no shape row gives (a length from a values summary,
    # a per-call condition): as written, their shares of the calls counted then.
    kept = [axis for name, axis in draft.written.items() if name not in dist and name not in stated]
    if kept:
        axes += kept
        notes.append(
            f"axes {', '.join(a.name for a in kept)} read from the Axes table as written "
            "(no shape row lists them)"
        )
    if not shapes and not axes:
        return None
    sig = _signature_for(draft.name)
    return OpProfile(
        op=draft.name,
        signature=None if sig is None else sig.name,
        family="any" if sig is None else sig.family,
        calls=None if calls_total is None else int(calls_total),
        timed_calls=None,
        time_us=None if time_total is None else round(time_total, 3),
        distinct_shapes=len(shapes) if shapes else None,
        shapes=tuple(sorted(shapes, key=lambda s: -s.call_share)),
        other=other,
        axes=tuple(axes),
        reduced=() if sig is None else sig.reduced,
        fixed=() if sig is None else sig.fixed,
        select=None if sig is None else sig.select,
        lengths=None if sig is None else sig.lengths,
        padded=() if sig is None else sig.padded,
        hints=() if sig is None else size1_hints(sig.hints, axes),
    )


def _statement(line: str, draft: _OpDraft, not_sizes: list[str]) -> bool:
    """Read the axis statements of ``line`` into ``draft``; whether any was read. A value
    that is a number but no shape size is listed in ``not_sizes`` (``"s_q = -1"``)."""
    found = False
    for match in _STATEMENT.finditer(line):
        value, p = _number(match.group("value")), _number(match.group("pct"))
        tp = _number(match.group("tpct")) if match.group("tpct") else None
        if value is None or p is None or not 0 <= p <= 100:
            continue
        if not _is_size(value):
            not_sizes.append(f"{match.group('axis')} = {match.group('value')}")
            continue
        draft.statements.append(
            (match.group("axis"), value, p / 100, None if tp is None else tp / 100)
        )
        found = True
    for match in _ALWAYS.finditer(line):
        axis = match.group("axis1") or match.group("axis2") or match.group("axis3")
        raw = match.group("value1") or match.group("value2") or match.group("value3")
        value = _number(raw)
        if value is not None and not _is_size(value):
            not_sizes.append(f"{axis} = {raw}")
        elif value is not None:
            draft.statements.append((axis, value, 1.0, None))
            found = True
    return found


# The sections kernelopt writes for readers of its own layout: findings recomputed from the
# shape and axis tables, never data of their own.
_DERIVED_SECTION = re.compile(r"^###\s+(?P<name>Size-1 axes|Skew|Shortcuts)\s*$")
# An op's totals in kernelopt's layout, what the counts and times of its Axes table are of.
_WRITTEN_TOTAL = re.compile(r"^- (?P<field>Calls|Time \(us\)): (?P<value>\S+)$")


def _read(text: str, source: str, *, kernelopt_layout: bool = False) -> WorkloadProfile:
    notes: list[str] = []
    lines = text.splitlines()
    drafts: list[_OpDraft] = []
    current: _OpDraft | None = None
    i = 0
    while i < len(lines):
        raw = lines[i]
        line = raw.strip()
        if not line or line.startswith("<!--"):
            i += 1
            continue
        derived = _DERIVED_SECTION.match(line) if kernelopt_layout else None
        if derived is not None:
            # Written from the tables before they were edited: read as statements, their
            # stale shares would stand beside (and override) the edited rows.
            notes.append(
                f"line {i + 1}: not read: the section {derived['name']} (recomputed from "
                "the shape table)"
            )
            i += 1
            while i < len(lines) and not lines[i].lstrip().startswith("#"):
                i += 1
            continue
        heading = _HEADING_OP.match(line)
        named = None
        if current is None or current.name == "unknown":
            named = _LINE_OP.match(line) if not line.startswith("|") else None
        found = heading or named
        if found is not None:
            name = found.group("op").strip("`* ")
            if current is None:
                current = _OpDraft(name, verbatim=kernelopt_layout)
                drafts.append(current)
            elif current.name == "unknown":
                current.name = name  # the first op heading names what was read so far
            elif heading is not None:
                current = _OpDraft(name, verbatim=kernelopt_layout)
                drafts.append(current)
            i += 1
            continue
        if current is None:
            current = _OpDraft("unknown", verbatim=kernelopt_layout)
            drafts.append(current)
        total = _WRITTEN_TOTAL.match(line) if kernelopt_layout else None
        if total is not None:
            # The profile's own "- Calls:" comes first and each op's replaces it.
            value = _number(total["value"]) if total["value"] != "-" else None
            if total["field"] == "Calls":
                current.written_calls = value
            else:
                current.written_time = value
            i += 1
            continue
        if line.startswith("|"):
            i = _read_table(lines, i, current, notes)
            continue
        if line.startswith("#"):
            i += 1
            continue
        plain = re.sub(r"[`*]", "", line)
        not_sizes: list[str] = []
        read = _statement(plain, current, not_sizes)
        if not_sizes:
            notes.append(f"line {i + 1}: not read: {', '.join(not_sizes)} ({_NOT_A_SIZE})")
        total = _TOTAL.search(plain)
        if total and current.total_calls is None:
            n = _number(total.group("n"))
            if n is not None and n >= 0:
                suffix = total.group("suffix") or ""
                current.total_calls = n * (
                    1e3 if suffix in "kK" and suffix else 1e6 if suffix else 1
                )
                read = True
        # A claim is a digit and a "%", "=" or "calls" on one line (in either order).
        claim = ("%" in plain or "=" in plain or "calls" in plain) and _DIGIT.search(plain)
        if not read and claim and not not_sizes:
            notes.append(f"line {i + 1}: not read: {line[:100]}")
        i += 1
    ops = []
    for draft in drafts:
        op = _finish(draft, notes)
        if op is not None:
            ops.append(op)
    if not ops:
        notes.append("no shape table or axis statement found")
    return WorkloadProfile(
        source=source,
        format="markdown",
        ops=tuple(ops),
        records=None,
        skipped=0,
        notes=("read tolerantly (hand-written layout)", *notes),
    )


def read_handwritten_md(
    text: str, *, source: str = "<text>", kernelopt_layout: bool = False
) -> WorkloadProfile:
    """Extract a :class:`WorkloadProfile` from a hand-written ``workload_profile.md``.

    Never raises on content: what cannot be read is listed in ``notes``.

    Parameters
    ----------
    text : str
        The markdown.
    source : str, optional
        Name recorded as the profile's source.
    kernelopt_layout : bool, optional
        The text is kernelopt's own layout edited by hand (it starts with the marker but
        does not parse exactly): its Size-1 axes, Skew and Shortcuts sections, written from
        the tables before the edit, are skipped, not read as statements.
    """
    try:
        return _read(text, source, kernelopt_layout=kernelopt_layout)
    except (
        KernelOptError,
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        ZeroDivisionError,
        OverflowError,
        RecursionError,
    ) as error:
        # A reader of hand-written text must not take the caller down with it.
        return WorkloadProfile(
            source=source,
            format="markdown",
            ops=(),
            records=None,
            skipped=0,
            notes=(f"could not read the profile: {error}",),
        )
