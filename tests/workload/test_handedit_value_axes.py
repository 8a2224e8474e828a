"""A workload_profile.md edited by hand keeps every axis kernelopt wrote into it.

An edit that breaks the exact layout (a count corrected in the Shapes table) sends the file
to the tolerant reader, which takes its shapes from the Shapes table. Axes that no shape row
lists (the lengths of a values summary, per-call conditions, padding ratios) are known only
from the Axes table: they must come back from there, or the uniform-lengths and
bucket-padding findings of the edited profile vanish.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kernelopt.workload import (
    Call,
    ScalarArg,
    TensorArg,
    WorkloadProfile,
    find_shortcuts,
    profile_calls,
    read_profile_md,
    write_profile_md,
)
from kernelopt.workload.calls import ValuesSummary

# Axes whose values come from something else than a shape size.
_NOT_SIZES = ("values", "flag", "ratio")


def _decode_profile() -> WorkloadProfile:
    """MLA decode calls with sequence lengths recorded as values summaries, timed."""
    calls = []
    for step in range(20):
        s_q = 1 if step % 5 else 4
        low = 1000 if step % 4 else 990  # equal lengths in 3 calls of 4
        calls.append(
            Call(
                op="mla_decode",
                args=(
                    TensorArg(name="q", shape=(8, s_q, 16, 576), dtype="bfloat16"),
                    TensorArg(name="kv_cache", shape=(64, 64, 1, 576), dtype="bfloat16"),
                    TensorArg(
                        name="cache_seqlens",
                        shape=(8,),
                        dtype="int32",
                        values=ValuesSummary(min=low, max=1000, mean=(low + 1000) / 2, std=0.0)
                        if low == 1000
                        else ValuesSummary(min=low, max=1000, mean=995, std=5.0),
                    ),
                ),
                duration_us=40.0 + step,
            )
        )
    return profile_calls(calls)


def _padded_attention_profile() -> WorkloadProfile:
    """SDPA calls over keys padded to 512, real lengths in a values summary."""
    calls = [
        Call(
            op="sdpa",
            args=(
                TensorArg(name="q", shape=(4, 8, 1, 64), dtype="float16"),
                TensorArg(name="k", shape=(4, 8, 512, 64), dtype="float16"),
                TensorArg(name="v", shape=(4, 8, 512, 64), dtype="float16"),
                TensorArg(
                    name="kv_lens",
                    shape=(4,),
                    dtype="int32",
                    values=ValuesSummary(min=100 + i, max=300, mean=200 + i),
                ),
            ),
        )
        for i in range(6)
    ]
    return profile_calls(calls)


def _gather_profile() -> WorkloadProfile:
    """Gathers of an expanded index (strides recorded): flags k_le_n and shared_index."""
    calls = [
        Call(
            op="gather",
            args=(
                TensorArg(name="x", shape=(rows, 4096), dtype="float32"),
                ScalarArg(name="dim", value=1),
                TensorArg(name="index", shape=(rows, 64), dtype="int64", stride=(0, 1)),
            ),
        )
        for rows in (32, 32, 32, 16)
    ]
    return profile_calls(calls)


def _edit_count(text: str) -> str:
    """One more call in the first shape row: the Axes table then disagrees with it."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| 1 | "))
    cells = lines[at].split(" | ")
    cells[1] = str(int(cells[1]) + 1)
    lines[at] = " | ".join(cells)
    return "\n".join(lines) + "\n"


def _edit_axis_min(text: str) -> str:
    """A Min cell of the Axes table overwritten by a word."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| Axis | Kind |")) + 2
    cells = lines[at].split(" | ")
    cells[3] = "small"
    lines[at] = " | ".join(cells)
    return "\n".join(lines) + "\n"


def _write_edit_read(
    profile: WorkloadProfile, edit: Callable[[str], str], tmp_path: Path
) -> WorkloadProfile:
    path = write_profile_md(profile, tmp_path / "workload_profile.md")
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    read = read_profile_md(path)
    assert "read tolerantly" in read.notes[0], read.notes  # the edit left the exact layout
    return read


@pytest.mark.parametrize("edit", [_edit_count, _edit_axis_min])
@pytest.mark.parametrize("build", [_decode_profile, _padded_attention_profile, _gather_profile])
def test_every_written_axis_comes_back(
    build: Callable[[], WorkloadProfile], edit: Callable[[str], str], tmp_path: Path
) -> None:
    written = build()
    read = _write_edit_read(written, edit, tmp_path)
    before, after = written.op(), read.op()
    assert [a.name for a in after.axes] == [a.name for a in before.axes]
    for axis in before.axes:
        again = after.axis(axis.name)
        assert (again.kind, again.source) == (axis.kind, axis.source)
        if axis.kind in _NOT_SIZES:
            assert again == axis  # as written: no shape row holds it


def test_findings_of_lengths_survive_the_edit(tmp_path: Path) -> None:
    written = _decode_profile()
    rules = {s.rule for s in find_shortcuts(written)}
    assert "uniform-lengths" in rules
    read = _write_edit_read(written, _edit_count, tmp_path)
    assert "uniform-lengths" in {s.rule for s in find_shortcuts(read)}
    assert any(
        note.startswith("axes seqlen, seqlen_min, seqlen_mean, seqlen_uniform, seqlen_cv ")
        for note in read.notes
    ), read.notes
    padded = _padded_attention_profile()
    assert "bucket-padding" in {s.rule for s in find_shortcuts(padded)}
    read = _write_edit_read(padded, _edit_count, tmp_path)
    assert "bucket-padding" in {s.rule for s in find_shortcuts(read)}


def test_a_values_entry_that_does_not_read_is_noted(tmp_path: Path) -> None:
    written = _decode_profile()
    path = write_profile_md(written, tmp_path / "workload_profile.md")
    lines = _edit_count(path.read_text(encoding="utf-8")).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| seqlen_min |"))
    lines[at] = lines[at].replace("990: ", "990 about ")
    read = read_profile_md("\n".join(lines) + "\n")
    seqlen_min = read.op().axis("seqlen_min")
    assert seqlen_min is not None
    assert [v.value for v in seqlen_min.values] == [1000]
    assert any(
        note.startswith(f"line {at + 1}: not read: values 990 about ") for note in read.notes
    ), read.notes
