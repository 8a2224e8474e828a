"""The devlog's Performance section as markdown shows it: a setext heading is one, and a
heading inside an HTML comment or a code fence is none."""

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
TABLE = f"### v2\n\n{HEADER}\n{SEPARATOR}\n{OLD}\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "k.md"
    path.write_bytes(text.encode())
    return path


@pytest.mark.parametrize("underline", ["-----------", "---", "-", "  ---  "])
def test_a_setext_performance_heading_is_the_section(tmp_path: Path, underline: str) -> None:
    before = f"# mla_decode\n\nNotes.\n\nPerformance\n{underline}\n\n{TABLE}\n## Log\n\nEntries.\n"
    path = write(tmp_path, before)
    assert [row.time for row in read_performance(path)] == [99.3]
    update = update_devlog(path, [ROW, NEW_POINT])
    assert update.replaced == (ROW,) and update.added == (NEW_POINT,)
    # The rows change in place; no second section is appended, and every other byte stays.
    expected = before.replace(OLD, ROW.render() + "\n" + NEW_POINT.render())
    assert path.read_bytes() == expected.encode()


def test_a_new_version_table_goes_under_the_setext_heading(tmp_path: Path) -> None:
    head = "# k\n\nPerformance\n===========\n\nPerformance\n-----------\n"
    path = write(tmp_path, head + "\n## Log\n\nEntries.\n")
    update_devlog(path, [ROW])
    text = path.read_text(encoding="utf-8")
    # "===" makes a level-1 heading, which is not the section; the "---" one is, and the
    # table goes under it, before the next section, with no second section appended.
    assert text.startswith(head + "\n### v2\n\n" + HEADER + "\n")
    assert text.endswith(ROW.render() + "\n\n## Log\n\nEntries.\n")
    assert text.count("Performance") == 2
    assert read_performance(path) == [ROW]


def test_a_setext_heading_ends_the_section(tmp_path: Path) -> None:
    before = f"# k\n\n## Performance\n\n{TABLE}\nLog\n---\n\n### v9\n\n{HEADER}\n{SEPARATOR}\n"
    before += "| v9 | b=1 s=1 t=1 | 5 us | - | - | - | - | - |\n"
    path = write(tmp_path, before)
    # "### v9" sits under the "Log" heading: another section's table.
    assert [row.version for row in read_performance(path)] == ["v2"]
    update_devlog(path, [PerfRow(version="v9", point="b=1 s=1 t=1", time=4.0)])
    text = path.read_text(encoding="utf-8")
    assert text.index("| v9 | b=1 s=1 t=1 | 4 us") < text.index("Log\n---")
    assert text.endswith("| v9 | b=1 s=1 t=1 | 5 us | - | - | - | - | - |\n")


@pytest.mark.parametrize(
    "line",
    [
        "- a list item",  # "---" under a list item is a thematic break
        "> a quote",
        OLD,  # under a table row too
    ],
)
def test_dashes_under_a_block_that_is_no_paragraph_make_no_heading(line: str) -> None:
    text = f"# k\n\n## Performance\n\n{line}\nPerformance\n---\n\n{TABLE}"
    assert [row.time for row in parse_performance(text)] == [99.3]


@pytest.mark.parametrize(
    "hidden",
    [
        "<!--\n## Performance\n\n" + TABLE.replace("99.3", "11.1") + "-->\n",
        "<!-- ## Performance -->\n",
        "  <!-- old numbers:\n## Performance\n\n" + TABLE.replace("99.3", "11.1") + "-->\n",
        "```markdown\n## Performance\n\n" + TABLE.replace("99.3", "11.1") + "```\n",
        "~~~\nPerformance\n-----------\n~~~\n",
    ],
)
def test_a_heading_in_a_comment_or_fence_is_not_the_section(tmp_path: Path, hidden: str) -> None:
    before = f"# k\n\n{hidden}\n## Performance\n\n{TABLE}\n## Log\n\nEntries.\n"
    path = write(tmp_path, before)
    assert [row.time for row in read_performance(path)] == [99.3]
    update_devlog(path, [ROW])
    assert path.read_bytes() == before.replace(OLD, ROW.render()).encode()


def test_a_commented_out_section_alone_gets_a_new_one_after_it(tmp_path: Path) -> None:
    before = "# k\n\n<!--\n## Performance\n\n" + TABLE + "-->\n\nNotes after it.\n"
    path = write(tmp_path, before)
    assert read_performance(path) == []
    update_devlog(path, [ROW])
    text = path.read_text(encoding="utf-8")
    # The user's text around the comment and inside it is kept; the section comes after.
    assert text.startswith(before)
    assert read_performance(path) == [ROW]


def test_a_table_in_a_comment_under_a_version_is_no_table(tmp_path: Path) -> None:
    before = (
        f"# k\n\n## Performance\n\n### v2\n\n<!--\n{HEADER}\n{SEPARATOR}\n{OLD}\n-->\n\n## Log\n"
    )
    path = write(tmp_path, before)
    assert read_performance(path) == []
    update_devlog(path, [ROW])
    assert read_performance(path) == [ROW]
    assert f"<!--\n{HEADER}\n{SEPARATOR}\n{OLD}\n-->" in path.read_text(encoding="utf-8")


def test_a_comment_left_open_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    before = f"# k\n\n<!-- draft\n\n## Performance\n\n{TABLE}"
    path = write(tmp_path, before)
    with pytest.raises(FormatError, match="comment '<!--' opened at line 3 left open"):
        update_devlog(path, [ROW])
    assert path.read_bytes() == before.encode()
    with pytest.raises(FormatError, match="HTML comments that close"):
        read_performance(path)


def test_a_fence_opened_inside_a_comment_opens_nothing(tmp_path: Path) -> None:
    before = f"# k\n\n<!--\n```\n-->\n\n## Performance\n\n{TABLE}"
    path = write(tmp_path, before)
    update_devlog(path, [ROW])
    assert path.read_bytes() == before.replace(OLD, ROW.render()).encode()
