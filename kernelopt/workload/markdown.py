"""``workload_profile.md``: the profile as markdown people read and kernelopt reads back.

:func:`render_profile_md` writes a stable layout (below); :func:`read_profile_md` parses it
back exactly (``read_profile_md(render_profile_md(p)) == p``) and falls back to a tolerant
reader for workload profiles written by hand. Layout::

    <!-- kernelopt workload-profile v1 -->
    # Workload profile

    - Source: traces/decode.jsonl
    - Format: jsonl
    - Records: 1000
    - Skipped: 0

    ## Op: mla_decode

    - Signature: mla_decode
    - Family: mla-decode
    - Calls: 1000
    ...

    ### Shapes            (table: calls, % calls, time, % time, axes, args)
    ### Axes              (table: min, median, max, time median, distinct, size-1, values)
    ### Size-1 axes       (derived: "s_q = 1 in 100% of calls")
    ### Skew              (derived)
    ### Shortcuts         (derived: find_shortcuts)

    ## Notes

Derived sections are for readers; the parser recomputes them from the data and ignores
them, but for the findings of rules of the user's (:func:`register_rule`): a process
that reads the file may not have registered them, so their lines carry the axis and the
shares, and the parser keeps them as written (``WorkloadProfile.written_shortcuts``).
Shares are shown as percentages; the exact numbers come from the counts and times (or are
written as ``p=``/``tp=`` when there are no counts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from kernelopt._errors import FormatError, InputError, expected
from kernelopt._fileio import atomic_write_text, text_of_bytes
from kernelopt._strict_json import TooDeepError, loads
from kernelopt._table_cells import escape_cell, split_row
from kernelopt._words import count_text
from kernelopt.workload._validators import as_path, is_file, no_file, require
from kernelopt.workload.calls import exact_number_text
from kernelopt.workload.profile import (
    AxisStat,
    OpProfile,
    ShapeStat,
    ValueShare,
    WorkloadProfile,
    share,
)
from kernelopt.workload.shortcuts import BUILTIN_RULES, Shortcut, find_shortcuts

__all__ = ["MARKER", "parse_profile_md", "read_profile_md", "render_profile_md", "write_profile_md"]

MARKER = "<!-- kernelopt workload-profile v1 -->"
_SHAPE_COLUMNS = ("#", "Calls", "% calls", "Time (us)", "% time", "Axes", "Args")
_AXIS_COLUMNS = (
    "Axis",
    "Kind",
    "Source",
    "Min",
    "Median",
    "Max",
    "Mean",
    "Time median",
    "Distinct",
    "Size-1",
    "Values",
)
_DERIVED = ("Size-1 axes", "Skew", "Shortcuts")
# The rules whose findings a reader finds again from the tables.
_BUILTIN_IDS = frozenset(rule.id for rule in BUILTIN_RULES)
_SKEW_KS = (1, 3, 5)


# --------------------------------------------------------------------------------------
# Rendering


def _opt(value: float | None) -> str:
    return "-" if value is None else exact_number_text(value)


def pct(value: float) -> str:
    """A share as a percentage for people: ``"100%"``, ``"62.5%"``."""
    if value >= 1.0 - 1e-12:
        return "100%"
    return f"{100 * value:.1f}%"


def _cell(text: str) -> str:
    # Markdown's escapes, as GitHub shows them: a backslash doubled, a pipe escaped.
    return escape_cell(text, backslash_escapes=True)


def _names(items: Sequence[str]) -> str:
    if not items:
        return "-"
    if any("," in n or n.startswith("[") or n == "-" for n in items):
        return json.dumps(list(items), ensure_ascii=False)
    return ", ".join(items)


def _share_cell(part: float | None, total: float | None, exact: float | None) -> str:
    """Percentage, plus the exact fraction when it cannot be recomputed from counts."""
    text = "-" if exact is None else pct(exact)
    return text if share(part, total) == exact else f"{text} (p={exact!r})"


def _axes_cell(axes: Sequence[tuple[str, float]]) -> str:
    if any(" " in n or "=" in n or n.startswith("{") for n, _ in axes):
        return json.dumps({n: v for n, v in axes}, ensure_ascii=False)
    return " ".join(f"{n}={exact_number_text(v)}" for n, v in axes)


def _value_entry(item: ValueShare, op: OpProfile) -> str:
    fields = []
    if item.calls is not None:
        fields.append(f"n={item.calls}")
    if item.time_us is not None:
        fields.append(f"t={exact_number_text(item.time_us)}")
    if share(item.calls, op.calls) != item.call_share:
        fields.append(f"p={item.call_share!r}")
    if share(item.time_us, op.time_us) != item.time_share:
        fields.append(f"tp={'-' if item.time_share is None else repr(item.time_share)}")
    return f"{exact_number_text(item.value)}: {pct(item.call_share)} [{' '.join(fields)}]"


def _shape_row(label: str, shape: ShapeStat, op: OpProfile) -> str:
    cells = [
        label,
        "-" if shape.calls is None else str(shape.calls),
        _share_cell(shape.calls, op.calls, shape.call_share),
        _opt(shape.time_us),
        _share_cell(shape.time_us, op.time_us, shape.time_share),
        _axes_cell(shape.axes),
        shape.args,
    ]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _axis_row(axis: AxisStat, op: OpProfile) -> str:
    cells = [
        axis.name,
        axis.kind,
        axis.source,
        _opt(axis.min),
        _opt(axis.median),
        _opt(axis.max),
        _opt(axis.mean),
        _opt(axis.time_median),
        "-" if axis.distinct is None else str(axis.distinct),
        pct(axis.size1_share) if axis.share_of(1) is not None else "0%",
        "; ".join(_value_entry(v, op) for v in axis.values) or "-",
    ]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _table(columns: Sequence[str], rows: list[str]) -> list[str]:
    align = [
        "---:"
        if c
        in (
            "Calls",
            "% calls",
            "Time (us)",
            "% time",
            "Min",
            "Median",
            "Max",
            "Mean",
            "Time median",
            "Distinct",
            "Size-1",
        )
        else "---"
        for c in columns
    ]
    return ["| " + " | ".join(columns) + " |", "|" + "|".join(align) + "|", *rows]


def _hint_scope(op: OpProfile, axis: str) -> str:
    """The calls a size-1 hint speaks of: ``"b = 1 in 25.0% of calls"``."""
    stat = op.axis(axis)
    if stat is None:
        return f"{axis} not recorded"
    share_text = f"{axis} = 1 in {pct(stat.size1_share)} of calls"
    time = stat.size1_time_share
    return share_text if time is None else f"{share_text} ({pct(time)} of time)"


def _render_op(op: OpProfile, shortcuts: Sequence[Shortcut]) -> list[str]:
    out = [f"## Op: {op.op}", ""]
    out.append(f"- Signature: {op.signature if op.signature is not None else '-'}")
    out.append(f"- Family: {op.family}")
    out.append(f"- Calls: {'-' if op.calls is None else op.calls}")
    out.append(f"- Timed calls: {'-' if op.timed_calls is None else op.timed_calls}")
    out.append(f"- Time (us): {_opt(op.time_us)}")
    out.append(f"- Distinct shapes: {'-' if op.distinct_shapes is None else op.distinct_shapes}")
    out.append(f"- Reduced axes: {_names(op.reduced)}")
    out.append(f"- Fixed axes: {_names(op.fixed)}")
    out.append(f"- Select: {'-' if op.select is None else json.dumps(list(op.select))}")
    out.append(f"- Lengths: {'-' if op.lengths is None else op.lengths}")
    out.append(f"- Padded: {json.dumps([list(p) for p in op.padded]) if op.padded else '-'}")
    for axis, text in op.hints:
        out.append(f"- Hint {axis}: {_hint_scope(op, axis)}: {text}")
    out += ["", "### Shapes", ""]
    rows = [_shape_row(str(i), s, op) for i, s in enumerate(op.shapes, 1)]
    if op.other is not None:
        rows.append(_shape_row("other", op.other, op))
    out += _table(_SHAPE_COLUMNS, rows)
    out += ["", "### Axes", ""]
    out += _table(_AXIS_COLUMNS, [_axis_row(a, op) for a in op.axes])
    out += ["", "### Size-1 axes", ""]
    size1 = op.size1_axes(threshold=1e-12)
    for item in size1:
        time = "" if item.time_share is None else f" ({pct(item.time_share)} of time)"
        out.append(f"- {item.axis} = 1 in {pct(item.call_share)} of calls{time}")
    if not size1:
        out.append("- none")
    out += ["", "### Skew", ""]
    for k in _SKEW_KS:
        if k > 1 and k >= len(op.shapes) + (op.other is not None):
            break
        skew = op.skew(k)
        time = (
            "" if skew.time_share is None else f"; top-{k} by time: {pct(skew.time_share)} of time"
        )
        out.append(f"- top-{k} shape{'s' if k > 1 else ''}: {pct(skew.call_share)} of calls{time}")
    out += ["", "### Shortcuts", ""]
    mine = [s for s in shortcuts if s.op == op.op]
    for finding in mine:
        ids = ", ".join(finding.catalog_ids) or "-"
        out.append(
            f"- {finding.rule} [{finding.guard}]: {finding.message} (catalog: {ids}"
            f"{_written_fields(finding)})"
        )
    if not mine:
        out.append("- none found")
    return [*out, ""]


def _exact_pct(value: float | None) -> str:
    """A share as :func:`pct` writes it, with the exact number after it (``(p=...)``)
    where the percentage does not give it back; ``-`` for None."""
    if value is None:
        return "-"
    text = pct(value)
    return text if float(text[:-1]) / 100 == value else f"{text} (p={value!r})"


def _written_fields(finding: Shortcut) -> str:
    """What a finding of a rule of the user's needs to be read back, after its catalog
    ids: ``; axis: x[0]; calls: 57.1% (p=0.5714285714285714); time: -``. A process that
    reads the file may not have the rule (:func:`register_rule`), so the file keeps the
    finding whole; a built-in rule's finding is found again from the tables."""
    if finding.rule in _BUILTIN_IDS:
        return ""
    return (
        f"; axis: {finding.axis if finding.axis is not None else '-'}; "
        f"calls: {_exact_pct(finding.call_share)}; time: {_exact_pct(finding.time_share)}"
    )


# A finding of a rule of the user's, as _render_op writes it.
_WRITTEN_FINDING = re.compile(
    r"- (?P<rule>\S+) \[(?P<guard>.*?)\]: (?P<message>.*) \(catalog: (?P<ids>[^;]*); "
    r"axis: (?P<axis>.*); calls: (?P<calls>.+?); time: (?P<time>.+?)\)"
)


def _parse_written_share(text: str) -> float | None:
    """A share as :func:`_exact_pct` writes it."""
    if text == "-":
        return None
    start = text.find("(p=")
    if start >= 0 and text.endswith(")"):
        return float(text[start + 3 : -1])
    if not text.endswith("%"):
        raise ValueError(expected("a share such as 50.0%", text))
    return float(text[:-1]) / 100


def _parse_written_finding(line: str, op: str) -> Shortcut | None:
    """The finding of a rule of the user's on a line of an op's Shortcuts section; None
    for a built-in rule's (found again from the tables) and any other line."""
    match = _WRITTEN_FINDING.fullmatch(line)
    if match is None or match["rule"] in _BUILTIN_IDS:
        return None
    ids = match["ids"]
    return Shortcut(
        rule=match["rule"],
        op=op,
        axis=None if match["axis"] == "-" else match["axis"],
        message=match["message"],
        call_share=_parse_written_share(match["calls"]) or 0.0,
        time_share=_parse_written_share(match["time"]),
        catalog_ids=() if ids == "-" else tuple(ids.split(", ")),
        guard=match["guard"],
    )


def _findings(profile: WorkloadProfile, shortcuts: Sequence[Shortcut] | None) -> list[Shortcut]:
    """``shortcuts`` as a list (``find_shortcuts(profile)`` when None), types checked."""
    require(profile, WorkloadProfile, "a WorkloadProfile", where="profile")
    if shortcuts is None:
        return find_shortcuts(profile)
    require(shortcuts, (tuple, list), "a sequence of Shortcut or None", where="shortcuts")
    for item in shortcuts:
        require(item, Shortcut, "a sequence of Shortcut", where="shortcuts")
    return list(shortcuts)


def render_profile_md(profile: WorkloadProfile, shortcuts: Sequence[Shortcut] | None = None) -> str:
    """Render ``profile`` as ``workload_profile.md`` text.

    Parameters
    ----------
    profile : WorkloadProfile
    shortcuts : sequence of Shortcut, optional
        Findings to list per op (default: ``find_shortcuts(profile)``).

    Raises
    ------
    InputError
        When an argument is of the wrong type.
    """
    found = _findings(profile, shortcuts)
    out = [MARKER, "# Workload profile", ""]
    out.append(f"- Source: {profile.source}")
    out.append(f"- Format: {profile.format}")
    out.append(f"- Records: {'-' if profile.records is None else profile.records}")
    out.append(f"- Skipped: {profile.skipped}")
    out.append(f"- Calls: {profile.calls}")
    out.append(f"- Ops: {', '.join(op.op for op in profile.ops) or '-'}")
    out.append("")
    if not profile.ops:
        out += ["No calls were read.", ""]
    for op in profile.ops:
        out += _render_op(op, found)
    out += ["## Notes", ""]
    out += [f"- {note}" for note in profile.notes] or ["No notes."]
    return "\n".join(out) + "\n"


def _refuse_own_source(profile: WorkloadProfile, target: Path) -> None:
    """Refuse to write over the file ``profile`` was read from: a trace, or a profile
    written by hand, would be replaced by the profile, and its calls or text lost."""
    if profile.format == "calls":  # built from Call objects: the source names no file
        return
    source = Path(profile.source)
    try:
        same = is_file(target) and is_file(source) and source.samefile(target)
    except OSError:
        return
    if same:
        raise InputError(
            expected(
                "a path other than the file the profile was read from",
                f"{target}, the {profile.format} source (writing would replace it)",
                where="path",
            )
        )


def write_profile_md(
    profile: WorkloadProfile, path: str | Path, shortcuts: Sequence[Shortcut] | None = None
) -> Path:
    """Write ``workload_profile.md`` atomically (JSON instead when ``path`` ends in .json).

    Parameters
    ----------
    profile : WorkloadProfile
        The profile to write.
    path : path-like
        The file to write (replaced whole); ``.json`` writes :func:`profile_to_json`.
    shortcuts : sequence of Shortcut, optional
        Findings to list per op (default: ``find_shortcuts(profile)``).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    InputError
        When an argument is of the wrong type, or ``path`` is the trace or hand-written
        profile that ``profile`` was read from (writing would replace it).
    """
    target = as_path(path)
    found = _findings(profile, shortcuts)
    _refuse_own_source(profile, target)
    # The suffix in any case, as `kernelopt inspect` reads one: "x.JSON" is JSON too.
    if target.suffix.lower() == ".json":
        from kernelopt.workload.serialize import profile_to_json

        atomic_write_text(target, profile_to_json(profile, found))
    else:
        atomic_write_text(target, render_profile_md(profile, found))
    return target


# --------------------------------------------------------------------------------------
# Exact parsing


class _Lines:
    def __init__(self, text: str) -> None:
        # Split on "\n" only: str.splitlines() also breaks at characters such as U+0085 or
        # U+2028 that may sit inside a value.
        self.lines = [line.removesuffix("\r") for line in text.split("\n")]
        self.i = 0

    def fail(self, what: str) -> FormatError:
        got = repr(self.lines[self.i]) if self.i < len(self.lines) else "end of file"
        return FormatError(expected(what, got), line=self.i + 1)

    def skip_blank(self) -> None:
        while self.i < len(self.lines) and not self.lines[self.i].strip():
            self.i += 1

    def peek(self) -> str | None:
        self.skip_blank()
        return self.lines[self.i] if self.i < len(self.lines) else None

    def take(self, exact: str) -> None:
        if self.peek() != exact:
            raise self.fail(repr(exact))
        self.i += 1

    def field(self, key: str) -> str:
        line = self.peek()
        prefix = f"- {key}: "
        if line is None or not (line.startswith(prefix) or line == prefix.rstrip()):
            raise self.fail(f"'- {key}: ...'")
        self.i += 1
        return line[len(prefix) :] if line.startswith(prefix) else ""

    def table(self, columns: Sequence[str]) -> Iterator[list[str]]:
        # Rows are handed out one at a time, the position still at the row: a cell the
        # caller refuses is reported at its own line, not at the end of the table.
        header = self.peek()
        if header is None or _split_row(header) != list(columns):
            raise self.fail(f"a table with columns {' | '.join(columns)}")
        self.i += 2  # header and alignment row
        while self.i < len(self.lines) and self.lines[self.i].startswith("|"):
            cells = _split_row(self.lines[self.i])
            if len(cells) != len(columns):
                raise self.fail(f"{len(columns)} cells")
            yield cells
            self.i += 1

    def skip_section(self) -> None:
        self.i += 1
        while self.i < len(self.lines) and not self.lines[self.i].startswith("#"):
            self.i += 1


def _split_row(line: str) -> list[str]:
    """Cells of a markdown table row, ``\\|`` a pipe and ``\\\\`` a backslash inside one."""
    return split_row(line, backslash_escapes=True)


def _parse_num(text: str) -> float:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(expected("a finite number", text))
    return value


def _parse_opt(text: str) -> float | None:
    return None if text == "-" else _parse_num(text)


def _parse_int(text: str) -> int | None:
    return None if text == "-" else int(text)


def _parse_names(text: str) -> tuple[str, ...]:
    if text == "-":
        return ()
    if text.startswith("["):
        return tuple(loads(text))
    return tuple(text.split(", "))


def _parse_share(text: str, part: float | None, total: float | None) -> float | None:
    # "62.5% (p=0.625)": the exact share after the first "(p=", up to the closing ")".
    # Found with str methods: a regex searched from every "(p=" rescans the rest each time.
    start = text.find("(p=")
    if start >= 0 and text.endswith(")"):
        exact_text = text[start + 3 : -1]
        return None if exact_text == "None" else float(exact_text)
    exact = share(part, total)
    if (exact is None) != (text == "-"):
        raise ValueError(f"share {text!r} does not match its counts")
    return exact


def _parse_axes_cell(text: str) -> tuple[tuple[str, float], ...]:
    if not text:
        return ()
    if text.startswith("{"):
        return tuple((k, _parse_num(str(v))) for k, v in loads(text).items())
    out = []
    for part in text.split(" "):
        name, _, value = part.rpartition("=")
        out.append((name, _parse_num(value)))
    return tuple(out)


_ENTRY = re.compile(r"^(?P<value>[^:]+): [^\[]*\[(?P<fields>[^\]]*)\]$")


def _parse_values(text: str, calls: int | None, time: float | None) -> tuple[ValueShare, ...]:
    if text == "-":
        return ()
    out = []
    for entry in text.split("; "):
        match = _ENTRY.match(entry)
        if match is None:
            raise ValueError(f"value entry {entry!r}")
        fields = dict(f.split("=", 1) for f in match.group("fields").split())
        n = int(fields["n"]) if "n" in fields else None
        t = float(fields["t"]) if "t" in fields else None
        p = float(fields["p"]) if "p" in fields else share(n, calls)
        if "tp" in fields:
            tp = None if fields["tp"] == "-" else float(fields["tp"])
        else:
            tp = share(t, time)
        out.append(
            ValueShare(
                value=_parse_num(match.group("value")),
                calls=n,
                call_share=0.0 if p is None else p,
                time_us=t,
                time_share=tp,
            )
        )
    return tuple(out)


def _tables_disagree(
    axis: AxisStat, shapes: Sequence[ShapeStat], other: ShapeStat | None
) -> str | None:
    """What the Axes table row of ``axis`` should say, where the Shapes table says
    otherwise; None where they agree or the Shapes table cannot tell.

    kernelopt writes both tables from the same calls, so they differ only where one was
    edited by hand: read exactly, the Axes table would then set the size-1 shares and the
    Shapes table the dominant shape, each finding contradicting the other. The Shapes
    table tells only where it lists every call (no ``other`` row, every count given) and
    every shape has the axis (values summaries and per-call conditions are no shape size).
    """
    if other is not None or not shapes or any(s.calls is None for s in shapes):
        return None
    if any(shape.axis(axis.name) is None for shape in shapes):
        return None
    for value in axis.values:
        listed = sum(s.calls or 0 for s in shapes if s.axis(axis.name) == value.value)
        if value.calls is not None and value.calls != listed:
            return expected(
                f"{axis.name} = {exact_number_text(value.value)} in "
                f"{count_text(listed, 'call')}, as the Shapes table lists it",
                f"{count_text(value.calls, 'call')} in the Axes table",
            )
    return None


def _parse_op(lines: _Lines, name: str, written: list[Shortcut]) -> OpProfile:
    signature = lines.field("Signature")
    family = lines.field("Family")
    calls = _parse_int(lines.field("Calls"))
    timed = _parse_int(lines.field("Timed calls"))
    time = _parse_opt(lines.field("Time (us)"))
    distinct = _parse_int(lines.field("Distinct shapes"))
    reduced = _parse_names(lines.field("Reduced axes"))
    fixed = _parse_names(lines.field("Fixed axes"))
    select_text = lines.field("Select")
    lengths = lines.field("Lengths")
    padded_text = lines.field("Padded")
    hints = []
    while (line := lines.peek()) is not None and line.startswith("- Hint "):
        key, sep, text = line[len("- Hint ") :].partition(": ")
        if not sep:
            raise lines.fail("'- Hint <axis>: <text>'")
        scope = re.match(
            rf"^(?:{re.escape(key)} = 1 in \S+ of calls(?: \(\S+ of time\))?"
            rf"|{re.escape(key)} not recorded):(?: |$)",
            text,
        )
        hints.append((key, text[scope.end() :] if scope else text))
        lines.i += 1
    lines.take("### Shapes")
    shapes: list[ShapeStat] = []
    other = None
    for cells in lines.table(_SHAPE_COLUMNS):
        n = _parse_int(cells[1])
        t = _parse_opt(cells[3])
        stat = ShapeStat(
            args=cells[6],
            axes=_parse_axes_cell(cells[5]),
            calls=n,
            call_share=_parse_share(cells[2], n, calls) or 0.0,
            time_us=t,
            time_share=_parse_share(cells[4], t, time),
        )
        if cells[0] == "other":
            other = stat
        else:
            shapes.append(stat)
    lines.take("### Axes")
    axes = []
    for cells in lines.table(_AXIS_COLUMNS):
        axis = AxisStat(
            name=cells[0],
            kind=cells[1],
            source=cells[2],
            min=_parse_opt(cells[3]),
            median=_parse_opt(cells[4]),
            max=_parse_opt(cells[5]),
            mean=_parse_opt(cells[6]),
            time_median=_parse_opt(cells[7]),
            distinct=_parse_int(cells[8]),
            values=_parse_values(cells[10], calls, time),
        )
        disagreement = _tables_disagree(axis, shapes, other)
        if disagreement is not None:
            raise FormatError(disagreement, line=lines.i + 1)
        axes.append(axis)
    while (line := lines.peek()) is not None and line[4:] in _DERIVED and line.startswith("### "):
        start = lines.i
        lines.skip_section()
        if line == "### Shortcuts":
            # Derived, but a rule of the user's may be unknown to this process: its
            # findings are kept as written.
            found = (_parse_written_finding(text, name) for text in lines.lines[start : lines.i])
            written += [item for item in found if item is not None]
    select = None if select_text == "-" else tuple(loads(select_text))
    return OpProfile(
        op=name,
        signature=None if signature == "-" else signature,
        family=family,
        calls=calls,
        timed_calls=timed,
        time_us=time,
        distinct_shapes=distinct,
        shapes=tuple(shapes),
        other=other,
        axes=tuple(axes),
        reduced=reduced,
        fixed=fixed,
        select=select,  # type: ignore[arg-type]
        lengths=None if lengths == "-" else lengths,
        padded=tuple(tuple(p) for p in loads(padded_text)) if padded_text != "-" else (),
        hints=tuple(hints),
    )


def parse_profile_md(text: str) -> WorkloadProfile:
    """Parse markdown written by :func:`render_profile_md`, exactly.

    Parameters
    ----------
    text : str
        The markdown.

    Returns
    -------
    WorkloadProfile
        The profile.

    Raises
    ------
    FormatError
        On any deviation from the layout (with the line number).
    InputError
        When ``text`` is not a string.
    """
    require(text, str, "markdown text (str)", where="text")
    lines = _Lines(text.removeprefix("\ufeff"))  # a byte-order mark is no deviation
    try:
        lines.take(MARKER)
        lines.take("# Workload profile")
        source = lines.field("Source")
        fmt = lines.field("Format")
        records = _parse_int(lines.field("Records"))
        skipped = int(lines.field("Skipped"))
        lines.field("Calls")
        lines.field("Ops")
        if lines.peek() == "No calls were read.":
            lines.i += 1
        ops = []
        written: list[Shortcut] = []
        while (line := lines.peek()) is not None and line.startswith("## Op: "):
            lines.i += 1
            ops.append(_parse_op(lines, line[len("## Op: ") :], written))
        lines.take("## Notes")
        notes = []
        if lines.peek() == "No notes.":
            lines.i += 1
        while (line := lines.peek()) is not None:
            if not line.startswith("- "):
                raise lines.fail("'- <note>'")
            notes.append(line[2:])
            lines.i += 1
        return WorkloadProfile(
            source=source,
            format=fmt,
            ops=tuple(ops),
            records=records,
            skipped=skipped,
            notes=tuple(notes),
            written_shortcuts=tuple(written),
        )
    except (RecursionError, TooDeepError):
        # A JSON cell (Select, Padded, Axes) nested thousands deep.
        raise FormatError(
            expected("JSON cells of a few levels", "one nested too deeply"), line=lines.i + 1
        ) from None
    except FormatError as error:
        if error.line is not None:
            raise
        # A JSON cell's own refusal (an integer longer than Python converts): at its line.
        raise FormatError(error.message, line=lines.i + 1) from None
    except (ValueError, KeyError, IndexError, TypeError, InputError) as error:
        raise FormatError(str(error), line=lines.i + 1) from None
    except OverflowError:
        # A number beyond the float range (a share of a 400-digit count).
        raise FormatError(
            expected("numbers within the float range", "a larger one"), line=lines.i + 1
        ) from None


def _json_profile(text: str, source: str) -> WorkloadProfile | None:
    """The profile in ``text`` when it is one written as JSON (:func:`profile_to_json`),
    else None: any other text is read as markdown.

    A file of that schema that :func:`profile_from_json` refuses reads as a profile of no
    ops whose one note says why, rather than as markdown, which it is not.
    """
    from kernelopt.workload.serialize import SCHEMA, profile_from_json

    try:
        data = loads(text)
    except (ValueError, RecursionError):  # no JSON (FormatError is one too): markdown
        return None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return None
    try:
        return profile_from_json(text)
    except FormatError as error:
        note = f"a workload profile written as JSON that does not parse ({error}); nothing read"
        return WorkloadProfile(
            source=source, format="json", ops=(), records=None, skipped=0, notes=(note,)
        )


def read_profile_md(path_or_text: str | Path) -> WorkloadProfile:
    """Read a ``workload_profile.md``: exactly if kernelopt wrote it, tolerantly otherwise.

    Parameters
    ----------
    path_or_text : str or Path
        A path to the file, or its text (a string containing a line break, newline or
        carriage return, is taken as text).

    Returns
    -------
    WorkloadProfile
        For a profile written as JSON (``write_profile_md(p, "x.json")``), the profile it
        holds, as :func:`~kernelopt.workload.serialize.profile_from_json` reads it.
        For hand-written files, whatever could be extracted (shape tables with counts or
        percentages, lines like ``s_q = 1 in 100% of calls``); ``notes`` lists what could
        not be read. Never raises on content: a file is read as UTF-8, or as UTF-16/32
        after a byte-order mark, and bytes that do not decode read as U+FFFD.

    Raises
    ------
    InputError
        When ``path_or_text`` is neither a path nor text, or a path that does not exist.
    """
    from kernelopt.workload.handwritten import read_handwritten_md

    if not isinstance(path_or_text, str):
        path_or_text = as_path(path_or_text, where="path_or_text")
    # A line break of any kind makes text: "\r" alone too, a name no path holds.
    if isinstance(path_or_text, Path) or not any(ch in path_or_text for ch in "\n\r"):
        target = Path(path_or_text)
        if not is_file(target):
            raise InputError(expected("an existing workload_profile.md", no_file(path_or_text)))
        # By its byte-order mark, as every reader of the logs: a UTF-16 file (PowerShell's
        # `>`) read as UTF-8 was all NULs, its shortcuts lost without a note.
        text = text_of_bytes(target.read_bytes())
        source = str(target)
    else:
        text, source = path_or_text, "<text>"
    # The byte-order mark a Windows editor saves: before the marker, it sent kernelopt's
    # own file to the tolerant reader; before a '# Workload profile: op' title, it hid the op.
    text = text.removeprefix("\ufeff")
    if text.lstrip().startswith("{"):
        # What write_profile_md writes for a .json path: read as markdown, its message
        # texts made an op "unknown" with axes of no size, and no word said why.
        written = _json_profile(text, source)
        if written is not None:
            return written
    if text.lstrip().startswith(MARKER):
        try:
            return parse_profile_md(text)
        except FormatError as error:
            note = f"not in kernelopt's exact layout ({error}); read tolerantly"
            profile = read_handwritten_md(text, source=source, kernelopt_layout=True)
            return WorkloadProfile(
                source=profile.source,
                format=profile.format,
                ops=profile.ops,
                records=profile.records,
                skipped=profile.skipped,
                notes=(note, *profile.notes),
            )
    return read_handwritten_md(text, source=source)
