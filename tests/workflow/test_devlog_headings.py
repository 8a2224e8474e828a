"""Headings a user annotated are still the devlog's Performance section and version tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import FormatError
from kernelopt.workflow import PerfRow, parse_performance, read_performance, update_devlog

HEADER = "| Version | Point | Time | TFLOP/s | GB/s | Of floor | GPU | Date |"
SEPARATOR = "|---|---|---|---|---|---|---|---|"
OLD = "| v2 | b=32 s=1 t=4096 h=16 | 99.3 us | - | - | - | NVIDIA H200 | 2026-12-01 |"
ROW = PerfRow(
    version="v2", point="b=32 s=1 t=4096 h=16", time=66.53, gpu="NVIDIA H200", date="2026-12-02"
)
NEW_POINT = PerfRow(version="v2", point="b=32 s=16 t=4096 h=16", time=616.0, gpu="NVIDIA H200")


def devlog(section: str, table: str = "### v2") -> str:
    return (
        "# mla_decode\n\nNotes.  \n\n"
        f"{section}\n\n{table}\n\n{HEADER}\n{SEPARATOR}\n{OLD}\n\n"
        "## Log\n\nEntries.\n"
    )


SECTIONS = [
    "## Performance (H200)",
    "## Performance — H200",
    "## Performance – H200",
    "## Performance - H200",
    "## Performance: H200",
    "## performance (H200, CUDA graphs) ##",
    "## PERFORMANCE",
]


@pytest.mark.parametrize("section", SECTIONS)
def test_an_annotated_section_heading_is_the_section(tmp_path: Path, section: str) -> None:
    path = tmp_path / "k.md"
    before = devlog(section)
    path.write_bytes(before.encode())
    assert [row.time for row in read_performance(path)] == [99.3]
    update = update_devlog(path, [ROW, NEW_POINT])
    assert update.replaced == (ROW,) and update.added == (NEW_POINT,)
    # The annotation and every other byte stay; only the rows change.
    expected = before.replace(OLD, ROW.render() + "\n" + NEW_POINT.render())
    assert path.read_bytes() == expected.encode()


TABLES = ["### v2 (split-KV)", "### v2 — split-KV", "### v2 - split-KV", "### v2: split-KV"]


@pytest.mark.parametrize("table", TABLES)
def test_an_annotated_version_heading_is_the_version_table(tmp_path: Path, table: str) -> None:
    path = tmp_path / "k.md"
    before = devlog("## Performance (H200)", table)
    path.write_bytes(before.encode())
    update = update_devlog(path, [ROW, NEW_POINT])
    assert update.replaced == (ROW,) and update.added == (NEW_POINT,)
    expected = before.replace(OLD, ROW.render() + "\n" + NEW_POINT.render())
    assert path.read_bytes() == expected.encode()
    assert [row.time for row in read_performance(path)] == [66.53, 616.0]


@pytest.mark.parametrize(
    "section", ["## Performance notes", "## Performances", "## Performance-H200", "## Perf"]
)
def test_a_section_that_only_starts_like_performance_is_another(
    tmp_path: Path, section: str
) -> None:
    path = tmp_path / "k.md"
    before = devlog(section)
    path.write_bytes(before.encode())
    assert read_performance(path) == []
    update_devlog(path, [ROW])
    after = path.read_bytes().decode()
    # Its table is left alone; the section is added at the end of the file.
    assert after.startswith(before)
    assert after[len(before) :] == f"\n## Performance\n\n### v2\n\n{HEADER}\n" + (
        f"|---------|-------|------|---------|------|----------|-----|------|\n{ROW.render()}\n"
    )


@pytest.mark.parametrize("table", ["### v2-fp8", "### v2fp8", "### v2 fp8", "### v2.1", "### V2"])
def test_a_version_that_only_starts_like_the_row_is_another(tmp_path: Path, table: str) -> None:
    path = tmp_path / "k.md"
    before = devlog("## Performance", table)
    path.write_bytes(before.encode())
    update = update_devlog(path, [ROW])
    assert update.added == (ROW,) and not update.replaced
    after = path.read_bytes().decode()
    assert after.count(OLD) == 1
    assert f"{table}\n\n{HEADER}\n{SEPARATOR}\n{OLD}\n\n### v2\n\n{HEADER}\n" in after


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("## Performance (H200)", "## Performance"),
        ("## Performance", "## Performance — H100"),
        ("## Performance (H200)", "## Performance: H100"),
        ("## Performance", "## performance"),
    ],
)
def test_two_performance_sections_are_refused_untouched(
    tmp_path: Path, first: str, second: str
) -> None:
    path = tmp_path / "k.md"
    text = devlog(first) + f"\n{second}\n\nMore numbers.\n"
    path.write_bytes(text.encode())
    message = (
        f"{path}:17 [Performance]: Expected one '## Performance' section, "
        f"got two: line 5 {first!r} and line 17 {second!r}"
    )
    for call in (lambda: update_devlog(path, [ROW]), lambda: read_performance(path)):
        with pytest.raises(FormatError) as caught:
            call()
        assert str(caught.value) == message
        assert caught.value.line == 17
    assert path.read_bytes() == text.encode()


@pytest.mark.parametrize(
    ("first", "second"),
    [("### v2 (split-KV)", "### v2"), ("### v2", "### v2 — split-KV"), ("### v2", "### v2")],
)
def test_two_tables_of_the_row_version_are_refused_untouched(
    tmp_path: Path, first: str, second: str
) -> None:
    path = tmp_path / "k.md"
    text = devlog("## Performance", first).replace(
        "\n## Log", f"\n{second}\n\n{HEADER}\n{SEPARATOR}\n\n## Log"
    )
    path.write_bytes(text.encode())
    with pytest.raises(FormatError) as caught:
        update_devlog(path, [ROW])
    assert str(caught.value) == (
        f"{path}:13 [Performance]: Expected one '### v2' table in the section, "
        f"got two: line 7 {first!r} and line 13 {second!r}"
    )
    assert caught.value.line == 13
    assert path.read_bytes() == text.encode()


def test_a_fenced_annotated_heading_is_no_second_section() -> None:
    text = devlog("## Performance (H200)") + "\n```markdown\n## Performance\n```\n"
    assert [row.time for row in parse_performance(text)] == [99.3]
