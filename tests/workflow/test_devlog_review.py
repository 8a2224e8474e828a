"""The devlog updated as a profiler drives it: benchmark files timed several ways, the
same update run twice, and paths that are not a devlog file."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import InputError
from kernelopt.bench import BenchRow
from kernelopt.workflow import PerfRow, perf_rows_from_bench, read_performance, update_devlog

POINT = {"b": 32, "s": 1, "t": 4096, "h": 16}
USER_TEXT = "# mla_decode\r\n\r\nWhy split-KV:  \r\n\r\n## Performance\r\n\r\nmy notes\r\n"


def _row(mode: str, median: float, *, gpu: str = "NVIDIA H200", s: int = 1) -> BenchRow:
    return BenchRow(
        op="mla_decode",
        impl="seesaw",
        mode=mode,
        config={**POINT, "s": s},
        median=median,
        gpu=gpu,
        timestamp="2026-12-05T10:00:00+00:00",
    )


def _cold_then_graph() -> list[BenchRow]:
    # What benchmarks/mla_decode.py writes per point: an L2-flushed row, then a graph row.
    return [_row("cold", 50.0), _row("graph", 45.9), _row("cold", 130.0, s=16)]


def test_a_point_timed_two_ways_is_written_and_reported_once(tmp_path: Path) -> None:
    devlog = tmp_path / "mla_decode.md"
    update = update_devlog(devlog, perf_rows_from_bench(_cold_then_graph()))
    assert update.replaced == ()
    assert [(row.point, row.time) for row in update.added] == [
        ("b=32 s=1 t=4096 h=16", 45.9),
        ("b=32 s=16 t=4096 h=16", 130.0),
    ]
    assert list(update.added) == read_performance(devlog)


def test_the_same_update_twice_leaves_the_file_and_counts_each_row_once(tmp_path: Path) -> None:
    devlog = tmp_path / "mla_decode.md"
    devlog.write_bytes(USER_TEXT.encode())
    rows = perf_rows_from_bench(_cold_then_graph())
    update_devlog(devlog, rows)
    first = devlog.read_bytes()
    again = update_devlog(devlog, rows)
    assert devlog.read_bytes() == first
    assert first.startswith(USER_TEXT.encode())
    assert (len(again.replaced), len(again.added)) == (2, 0)
    assert [row.time for row in again.replaced] == [45.9, 130.0]


def test_repeated_rows_keep_the_last_at_the_first_ones_place(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    rows = [
        PerfRow(version="v2", point="b=1 s=1 t=1", time=3.0, gpu="G"),
        PerfRow(version="v2", point="b=2 s=1 t=1", time=5.0, gpu="G"),
        PerfRow(version="v2", point="b=1 s=1 t=1", time=4.0, gpu="G"),
    ]
    update = update_devlog(devlog, rows)
    assert [row.time for row in update.added] == [4.0, 5.0]
    assert [row.time for row in read_performance(devlog)] == [4.0, 5.0]


def test_rows_of_another_gpu_are_kept_apart_in_one_batch(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    rows = [_row("graph", 45.9), _row("graph", 59.5, gpu="NVIDIA H100 80GB HBM3")]
    update = update_devlog(devlog, perf_rows_from_bench(rows))
    assert [row.gpu for row in update.added] == ["NVIDIA H200", "NVIDIA H100 80GB HBM3"]
    assert update.replaced == ()


def test_a_folder_at_the_path_is_refused_before_the_lock(tmp_path: Path) -> None:
    folder = tmp_path / "mla_decode.md"
    folder.mkdir()
    row = PerfRow(version="v2", point="b=1 s=1 t=1", time=3.0)
    with pytest.raises(InputError, match="Expected a devlog file, got a directory at"):
        update_devlog(folder, [row])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mla_decode.md"]
    assert list(folder.iterdir()) == []


def test_a_missing_devlog_is_still_created(tmp_path: Path) -> None:
    devlog = tmp_path / "new.md"
    update = update_devlog(devlog, [PerfRow(version="v2", point="b=1 s=1 t=1", time=3.0)])
    assert update.created
    assert read_performance(devlog) == list(update.added)


@pytest.mark.parametrize("title", ["mla\n## Performance", "a\u2028b", "  ", "", 5])
def test_a_title_that_is_not_one_line_is_refused_before_anything_is_made(
    tmp_path: Path, title: object
) -> None:
    devlog = tmp_path / "k.md"
    row = PerfRow(version="v2", point="b=1 s=1 t=1", time=3.0)
    with pytest.raises(InputError, match="title: Expected a title of one non-blank line, or None"):
        update_devlog(devlog, [row], title=title)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_a_title_of_one_line_heads_the_new_file(tmp_path: Path) -> None:
    devlog = tmp_path / "k.md"
    update_devlog(devlog, [PerfRow(version="v2", point="b=1 s=1 t=1", time=3.0)], title="MLA")
    assert devlog.read_text(encoding="utf-8").startswith("# MLA\n\n## Performance\n")
