"""The inspector used end to end as a user drives it: a written profile edited by hand
afterwards, an empty reduced axis, a report of a profile that gives a time without its
count of timed calls, traces written with ``json.dumps``'s default spacing, and a
FlashInfer-Bench workload that leaves out a var axis."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from kernelopt import cli
from kernelopt.workload import (
    Call,
    ScalarArg,
    TensorArg,
    find_shortcuts,
    profile_calls,
    profile_trace,
    read_profile_md,
    read_trace,
    render_profile_md,
)
from kernelopt.workload import jsonl as jsonl_module


def _softmax(shape: tuple[int, ...], duration_us: float | None = None, op: str = "softmax") -> Call:
    return Call(
        op=op,
        args=(
            TensorArg(name="x", shape=shape, dtype="float16"),
            ScalarArg(name="dim", value=-1),
        ),
        duration_us=duration_us,
    )


def _mostly_size1_profile() -> str:
    """kernelopt's markdown of 90 softmax calls over one element and 10 over 512."""
    calls = [_softmax((64, 1), 3.0)] * 90 + [_softmax((64, 512), 9.0)] * 10
    return render_profile_md(profile_calls(calls))


SIZE1_ROW = "| 1 | 90 | 90.0% | 270 | 75.0% | n=1 rows=64 |"
WIDE_ROW = "| 2 | 10 | 10.0% | 90 | 25.0% | n=512 rows=64 |"


def _edited(text: str, size1_row: str, wide_row: str) -> str:
    assert SIZE1_ROW in text and WIDE_ROW in text
    return text.replace(SIZE1_ROW, size1_row).replace(WIDE_ROW, wide_row)


def test_an_edited_shape_table_is_not_overridden_by_its_stale_size1_section() -> None:
    # The user corrects the counts after the trace turned out to be a warm-up: n = 1 is
    # rare. The totals no longer match the header, so the file is read tolerantly, and the
    # "Size-1 axes" and "Shortcuts" sections still say 90 %.
    text = _edited(
        _mostly_size1_profile(),
        "| 1 | 10 | 10.0% | 30 | 3.2% | n=1 rows=64 |",
        "| 2 | 90 | 90.0% | 900 | 96.8% | n=512 rows=64 |",
    )
    profile = read_profile_md(text)
    op = profile.op()
    n = op.axis("n")
    assert n is not None and n.size1_share == pytest.approx(0.1)
    assert [s.rule for s in find_shortcuts(op)] == ["dominant-shape"]
    assert any(
        "the section Size-1 axes (recomputed from the shape table)" in x for x in profile.notes
    )


def test_the_axes_column_of_an_edited_profile_names_the_axes_and_keeps_its_sources() -> None:
    text = _edited(
        _mostly_size1_profile(),
        "| 1 | 10 | 10.0% | 30 | 3.2% | n=1 rows=64 |",
        "| 2 | 90 | 90.0% | 900 | 96.8% | n=512 rows=64 |",
    )
    op = read_profile_md(text).op()
    # The named axes, not x[0] and x[1] read from the arguments beside them.
    assert [a.name for a in op.axes] == ["n", "rows"]
    assert op.shapes[0].args == "x=[64,512]:float16 dim=-1"
    # Sources from the axis table: the guard is code a kernel can test.
    (dominant,) = find_shortcuts(op)
    assert dominant.guard == "x.shape[dim] == 512"
    assert not any("cells under Axes" in note for note in read_profile_md(text).notes)


def test_shape_and_axis_tables_that_disagree_are_not_read_exactly() -> None:
    # Counts and times edited consistently: the exact reader would take the Axes table's
    # 90 % for the size-1 share and the Shapes table's 90 % for the wide shape.
    text = _edited(
        _mostly_size1_profile(),
        "| 1 | 10 | 10.0% | 30 | 8.3% | n=1 rows=64 |",
        "| 2 | 90 | 90.0% | 330 | 91.7% | n=512 rows=64 |",
    )
    profile = read_profile_md(text)
    assert profile.format == "markdown"
    assert (
        "Expected n = 1 in 10 calls, as the Shapes table lists it, got 90 calls in the Axes table"
        in profile.notes[0]
    )
    rules = {s.rule: s for s in find_shortcuts(profile.op())}
    assert "size1-reduction" not in rules
    assert rules["dominant-shape"].guard == "x.shape[dim] == 512"


@pytest.mark.parametrize("max_shapes", [1, 2, 32])
def test_profiles_kernelopt_writes_still_read_back_exactly(max_shapes: int) -> None:
    calls = (
        [_softmax((64, 1), 3.0)] * 5
        + [_softmax((64, 512), 9.0)] * 3
        + [_softmax((8, 0))] * 2
        + [_softmax((4, 1, 7), 1.0, op="sum")] * 4
    )
    profile = profile_calls(calls, max_shapes=max_shapes)
    assert read_profile_md(render_profile_md(profile)) == profile


def test_an_empty_reduced_axis_keeps_its_rows() -> None:
    op = profile_calls([_softmax((4, 0))] * 3 + [_softmax((8, 5))]).op()
    rows = op.axis("rows")
    assert rows is not None and (rows.min, rows.max) == (4, 8)


def test_a_gather_over_an_empty_axis_keeps_its_rows() -> None:
    call = Call(
        op="gather",
        args=(
            TensorArg(name="x", shape=(6, 0), dtype="float32"),
            ScalarArg(name="dim", value=1),
            TensorArg(name="index", shape=(6, 0), dtype="int64"),
        ),
    )
    rows = profile_calls([call]).op().axis("rows")
    assert rows is not None and rows.min == 6


class _Shaped:
    """What a guard reads of a tensor: ``shape`` and ``numel()``."""

    def __init__(self, *shape: int) -> None:
        self.shape = shape

    def numel(self) -> int:
        return math.prod(self.shape)


def _passes(guard: str, x: _Shaped) -> Any:
    return eval(guard, {}, {"x": x, "dim": -1})  # the guard is Python a wrapper pastes


def test_the_dominant_shape_guard_of_an_empty_reduction_does_not_divide_by_zero() -> None:
    # Softmax over an empty last axis dominates; the shapes differ in rows too. Testing
    # rows as x.numel() // x.shape[dim] divides by zero on exactly the calls it takes.
    op = profile_calls(
        [_softmax((4, 0))] * 6 + [_softmax((8, 0))] * 2 + [_softmax((8, 5))] * 2
    ).op()
    (dominant,) = [s for s in find_shortcuts(op) if s.rule == "dominant-shape"]
    assert _passes(dominant.guard, _Shaped(4, 0))
    assert not _passes(dominant.guard, _Shaped(8, 5))
    # It cannot tell the 8-row empty calls apart, and says so.
    assert "its guard also admits 1 other shape" in dominant.message


def test_a_report_of_a_profile_without_a_count_of_timed_calls_does_not_print_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    profile = tmp_path / "workload_profile.md"
    profile.write_text(
        "# Workload profile: softmax\n\n"
        "| n | Count | Time (us) |\n|---|---|---|\n| 1 | 90 | 270 |\n| 512 | 10 | 90 |\n",
        encoding="utf-8",
    )
    assert cli.main(["inspect", str(profile)]) == 1
    out = capsys.readouterr().out
    assert "op softmax [softmax]: 100 calls, 2 distinct shapes, 360 us\n" in out
    assert "None" not in out


def _ragged_decode_lines(count: int, **dumps: Any) -> str:
    """MLA decode calls whose lengths change on every call, as json.dumps writes them."""
    lines = []
    for i in range(count):
        record = {
            "op": "mla_decode",
            "args": {
                "q": {"shape": [8, 1, 16, 576], "dtype": "bfloat16"},
                "cache_seqlens": {
                    "shape": [8],
                    "dtype": "int32",
                    "values": {"min": 100 + i, "max": 300 + 2 * i, "mean": 200 + i, "std": 50},
                },
            },
            "duration_us": 10.0 + i,
        }
        lines.append(json.dumps(record, **dumps))
    return "\n".join(lines) + "\n"


def test_json_dumps_default_spacing_is_read_as_fast_as_compact_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[bytes] = []
    full_decode = jsonl_module._Reader.decode

    def counting(self: Any, line: bytes) -> Any:
        decoded.append(line)
        return full_decode(self, line)

    monkeypatch.setattr(jsonl_module._Reader, "decode", counting)
    spaced, compact = tmp_path / "spaced.jsonl", tmp_path / "compact.jsonl"
    spaced.write_text(_ragged_decode_lines(500), encoding="utf-8")
    compact.write_text(_ragged_decode_lines(500, separators=(",", ":")), encoding="utf-8")
    from_spaced = profile_trace(spaced)
    # One JSON decode for the line shape, not one per line.
    assert len(decoded) == 1
    from_compact = profile_trace(compact)
    assert from_spaced.op().axes == from_compact.op().axes
    assert from_spaced.op().time_us == from_compact.op().time_us


def test_a_workload_without_a_var_axis_says_it_is_missing(tmp_path: Path, data: Path) -> None:
    bundle = json.loads((data / "flashinfer" / "bundle.json").read_text(encoding="utf-8"))
    del bundle["workloads"][0]["workload"]["axes"]["batch_size"]
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    trace = read_trace(path)
    assert trace.skipped == 1
    (note,) = [n for n in trace.notes if "batch_size" in n]
    assert note.endswith("Expected an integer for var axis batch_size, got nothing")


def test_percentages_left_stale_by_an_added_row_give_way_to_the_counts() -> None:
    # A row of 300 calls added by hand, the other rows' percentages left as they were:
    # they now sum to 175 %, and n = 1 holds 90 of 400 calls, not 90 %.
    text = _mostly_size1_profile().replace(
        WIDE_ROW, WIDE_ROW + "\n| 3 | 300 | 75.0% | 900 | 71.4% | n=4096 rows=64 |"
    )
    profile = read_profile_md(text)
    assert (
        "the % of calls column sums to 175.0%: shares of calls taken from the counts instead"
        in (profile.notes)
    )
    op = profile.op()
    n = op.axis("n")
    assert n is not None and n.size1_share == pytest.approx(90 / 400)
    (dominant,) = find_shortcuts(op)
    assert (dominant.call_share, dominant.time_share) == pytest.approx((0.75, 900 / 1260))


def test_percentages_of_a_top_few_table_still_count_the_calls_not_listed() -> None:
    # Counts and percentages of the listed shapes only: the percentages are of every call.
    text = (
        "# Workload profile: softmax\n\n| n | Count | % calls |\n|---|---|---|\n| 1 | 45 | 45% |\n"
    )
    text += "| 512 | 5 | 5% |\n"
    n = read_profile_md(text).op().axis("n")
    assert n is not None and n.size1_share == pytest.approx(0.45)
