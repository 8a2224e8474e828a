"""The compact text report ``kernelopt inspect`` prints: axes, size-1 axes, skew, shortcuts."""

from __future__ import annotations

from collections.abc import Sequence

from kernelopt._words import count_text
from kernelopt.workload._validators import positive_int, require
from kernelopt.workload.markdown import pct
from kernelopt.workload.profile import OpProfile, ShapeStat, WorkloadProfile, one_element_args
from kernelopt.workload.shortcuts import Shortcut

__all__ = ["render_report"]

_MAX_NOTES = 8


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"


def _time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} us"


def _skew(op: OpProfile, k: int) -> str:
    """``top-k`` shares of calls and of time, naming the time's shapes when they differ."""
    skew = op.skew(k)
    calls = f"top-{k} {pct(skew.call_share)} of calls"
    if skew.time_share is None:
        return calls
    time = f"{pct(skew.time_share)} of time"
    by_calls = {s.args for s in op.top_shapes(k, by="calls")}
    if by_calls == {s.args for s in op.top_shapes(k, by="time")}:
        return f"{calls} / {time}"
    # Another set of shapes holds the most time: "/" would give both shares to one set.
    return f"{calls}, top-{k} by time {time}"


def _op_lines(op: OpProfile, top: int) -> list[str]:
    head = f"op {op.op}"
    if op.signature is not None:
        # The normalization signature is of family normalization: named once.
        same = op.signature == op.family
        head += f" [{op.signature}]" if same else f" [{op.signature}, {op.family}]"
    elif op.family != "any":
        # A signature matched the op's name but fit none of its calls (see the notes).
        head += f" [no signature applied, {op.family}]"
    calls = "? calls" if op.calls is None else count_text(op.calls, "call")
    head += f": {calls}, {count_text(op.distinct_shapes or len(op.shapes), 'distinct shape')}"
    if op.timed and op.time_us is not None:
        # A hand-written profile gives a time without saying how many calls were timed.
        timed = "" if op.timed_calls is None else f" in {count_text(op.timed_calls, 'timed call')}"
        head += f", {_time(op.time_us)}{timed}"
    out = [head]
    if op.axes:
        rows = [("axis", "source", "min", "median", "max", "distinct", "size-1")]
        scalars = one_element_args(op.axes)
        for axis in op.axes:
            # A value of 1 is a size of 1 only for a size: top_p.max == 1.0 is a value.
            sized = op.is_size(axis, scalars)
            rows.append(
                (
                    axis.name,
                    axis.source or "-",
                    _num(axis.min),
                    _num(axis.median),
                    _num(axis.max),
                    "-" if axis.distinct is None else str(axis.distinct),
                    pct(axis.size1_share) if sized and axis.size1_share > 0 else "-",
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for row in rows:
            out.append(
                "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            )
    size1 = op.size1_axes(threshold=1e-12)
    if size1:
        parts = []
        for item in size1:
            time = "" if item.time_share is None else f" ({pct(item.time_share)} of time)"
            parts.append(f"{item.axis} = 1 in {pct(item.call_share)} of calls{time}")
        out.append("  size-1 axes: " + "; ".join(parts))
    else:
        out.append("  size-1 axes: none")
    if op.shapes:
        skews = [_skew(op, k) for k in sorted({1, min(top, len(op.shapes))})]
        out.append("  skew: " + "; ".join(skews))
        by = "time" if op.timed else "calls"
        out.append(f"  top shapes by {by}:")
        shown = op.top_shapes(top, by=by)
        for i, shape in enumerate(shown, 1):
            time = "" if shape.time_share is None else f", {pct(shape.time_share)} time"
            out.append(f"    {i}. {pct(shape.call_share)} calls{time}  {shape.args}")
        rest = _rest_line(op, shown)
        if rest is not None:
            out.append(rest)
    elif op.other is not None:
        out.append(f"    +  {pct(op.other.call_share)} calls in {op.other.args}")
    return out


def _rest_line(op: OpProfile, shown: Sequence[ShapeStat]) -> str | None:
    """The line for every call not in the ``shown`` shapes: the listed shapes past
    ``--top`` and the profile's ``other`` row together, or None when all are shown."""
    kept = {id(shape) for shape in shown}
    hidden = [shape for shape in op.shapes if id(shape) not in kept]
    if not hidden and op.other is None:
        return None
    parts = [*hidden, *([] if op.other is None else [op.other])]
    calls = min(sum(shape.call_share for shape in parts), 1.0)
    times = [shape.time_share for shape in parts]
    time = "" if None in times else f", {pct(min(sum(times), 1.0))} time"  # type: ignore[arg-type]
    if op.other is None:
        what = count_text(len(hidden), "more shape")
    elif op.distinct_shapes is not None and op.distinct_shapes > len(op.shapes):
        # The other row of a trace holds the shapes past those kept, counted.
        what = count_text(op.distinct_shapes - len(shown), "more shape")
    elif hidden:
        what = f"{count_text(len(hidden), 'more shape')} and {op.other.args}"
    else:
        what = op.other.args
    return f"    +  {pct(calls)} calls{time} in {what}"


def render_report(profile: WorkloadProfile, shortcuts: Sequence[Shortcut], *, top: int = 5) -> str:
    """The text report of ``profile`` and its ``shortcuts``.

    Parameters
    ----------
    top : int
        How many shapes to list per op (and the k of the top-k skew).
    """
    require(profile, WorkloadProfile, "a WorkloadProfile", where="profile")
    require(shortcuts, (tuple, list), "a sequence of Shortcut", where="shortcuts")
    for item in shortcuts:
        require(item, Shortcut, "a sequence of Shortcut", where="shortcuts")
    top = positive_int(top, where="top")
    head = (
        f"{profile.source} ({profile.format}): {count_text(profile.calls, 'call')}, "
        f"{count_text(len(profile.ops), 'op')}, "
        f"{count_text(profile.distinct_shapes, 'distinct shape')}"
    )
    if profile.records is not None:
        head += f"; {profile.skipped} of {count_text(profile.records, 'record')} skipped"
    out = [head]
    for note in profile.notes[:_MAX_NOTES]:
        out.append(f"  note: {note}")
    if len(profile.notes) > _MAX_NOTES:
        out.append(f"  note: ... {len(profile.notes) - _MAX_NOTES} more (see --json)")
    for op in profile.ops:
        out.append("")
        out += _op_lines(op, top)
    out.append("")
    if shortcuts:
        out.append(f"shortcuts ({len(shortcuts)}):")
        for item in shortcuts:
            ids = ", ".join(item.catalog_ids) or "-"
            out.append(f"  - [{item.rule}] {item.op}: {item.message}")
            # No guard (no size tells the shape apart) is a dash, as no catalog id is.
            out.append(f"    guard: {item.guard or '-'}   catalog: {ids}")
    else:
        out.append("shortcuts: none found")
    return "\n".join(out) + "\n"
