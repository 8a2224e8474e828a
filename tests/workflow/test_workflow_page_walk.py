"""What a user meets chaining the workflow tools on a benchmark's real files: a hand-off
heading the reader would not take, rows timed two ways, a selection no row matches, a
measurement file that is not there. Each message names what was there and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt import FormatError, InputError
from kernelopt.cli import main
from kernelopt.workflow import observe_files, parse_task, parse_version, select_row

from .conftest import bench_row, write_rows

_TASK_BODY = (
    "### Current Bottleneck: Memory-bound\n### Optimizations to Apply:\n1. fuse\n"
    "### Constraints\n- Language: triton\n"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("marks", ["#", "###"])
def test_a_task_heading_of_another_level_is_named_at_its_line(marks: str) -> None:
    text = f"notes\n{marks} Optimization Task: k v1 -> v2\n{_TASK_BODY}"
    with pytest.raises(FormatError) as caught:
        parse_task(text, path="t.md")
    message = str(caught.value)
    assert message.startswith("t.md:2 [Optimization Task]:")
    assert f"is a level-{len(marks)} heading: write it '## Optimization Task: ...'" in message


def test_a_task_heading_without_its_colon_is_named() -> None:
    with pytest.raises(FormatError) as caught:
        parse_task(f"## Optimization Task k v1 -> v2\n{_TASK_BODY}", path="t.md")
    assert "t.md:1" in str(caught.value)
    assert "has no ':' after 'Optimization Task'" in str(caught.value)


def test_a_heading_that_only_starts_like_the_label_is_not_named() -> None:
    # `## Optimization Tasks` is another section, not a heading missing its colon.
    with pytest.raises(FormatError) as caught:
        parse_task("## Optimization Tasks\n", path="t.md")
    assert str(caught.value).endswith("got none")


def test_another_hand_off_names_its_reader() -> None:
    profile = "## Profile: mla_decode v2 | b=32, s=1, t=4096\n### Stages\n"
    with pytest.raises(FormatError) as caught:
        parse_version(profile, path="p.md")
    assert "p.md:1 [New Version]" in str(caught.value)
    assert "starts a profile hand-off, read by parse_profile (kernelopt report profile)" in str(
        caught.value
    )


def test_report_task_of_a_profile_file_says_which_command_reads_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "profile.md"
    path.write_text("## Profile: mla_decode v2 | b=32, s=1, t=4096\n", encoding="utf-8")
    code, out, err = run(capsys, "report", "task", str(path))
    assert (code, out) == (1, "")
    assert "(kernelopt report profile)" in err


def test_files_whose_last_rows_are_timed_two_ways_name_each_file_and_mode(
    tmp_path: Path,
) -> None:
    # A benchmark writes a cold and a CUDA-graph row per point; the files end them in
    # another order, so without mode= one file's last row is cold and the other's graph.
    before = write_rows(
        tmp_path / "before.jsonl",
        bench_row("v1", 74.0, mode="graph"),
        bench_row("v1", 80.0, mode="cold"),
    )
    after = write_rows(
        tmp_path / "after.jsonl",
        bench_row("v2", 72.0, mode="cold"),
        bench_row("v2", 66.0, mode="graph"),
    )
    with pytest.raises(InputError) as caught:
        observe_files(before, after)
    message = str(caught.value)
    assert "(choose the mode with --mode (mode=))" in message
    assert f"'cold' in {before} and 'graph' in {after}" in message
    assert observe_files(before, after, mode="graph").after == 66.0


def test_an_impl_no_row_has_names_the_impls_the_rows_hold() -> None:
    rows = [bench_row("kernelopt_seesaw", 47.0), bench_row("torch_compile", 80.0)]
    with pytest.raises(InputError) as caught:
        select_row(rows, impl="seesaw")
    assert str(caught.value).endswith(
        "got none (the rows hold impls ['kernelopt_seesaw', 'torch_compile'])"
    )


def test_a_mode_no_row_has_names_the_modes_the_rows_hold() -> None:
    rows = [bench_row("v2", 47.0, mode="cold"), bench_row("v2", 45.0, mode="graph")]
    with pytest.raises(InputError) as caught:
        select_row(rows, mode="hot")
    assert str(caught.value).endswith("got none (the rows hold modes ['cold', 'graph'])")


def test_an_empty_rows_file_says_it_holds_no_rows(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    other = write_rows(tmp_path / "v2.jsonl", bench_row("v2", 66.0))
    with pytest.raises(InputError) as caught:
        observe_files(empty, other, mode="graph")
    assert str(caught.value).endswith("got none (no rows)")


@pytest.mark.parametrize("side", ["--before", "--after"])
def test_learn_names_the_option_of_a_missing_rows_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, side: str
) -> None:
    rows = write_rows(tmp_path / "v2.jsonl", bench_row("v2", 66.0))
    files = {"--before": str(rows), "--after": str(rows), side: str(tmp_path / "missing.jsonl")}
    code, out, err = run(
        capsys,
        "learn",
        *(part for option, path in files.items() for part in (option, path)),
        "--entry",
        "split-kv-flash-decoding",
        "--knowledge",
        str(tmp_path / "kb"),
        "--dry-run",
    )
    assert (code, out) == (2, "")
    assert f"error: {side}: Expected a BenchRow JSONL file, got no file at" in err


@pytest.mark.parametrize("option", ["--rows", "--baseline"])
def test_report_profile_names_the_option_of_a_missing_rows_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str
) -> None:
    rows = write_rows(tmp_path / "v2.jsonl", bench_row("v2", 66.0))
    files = {"--rows": str(rows), "--baseline": str(rows), option: str(tmp_path)}
    code, out, err = run(
        capsys,
        "report",
        "profile",
        *(part for flag, path in files.items() for part in (flag, path)),
        "--kernel",
        "mla_decode",
        "--version",
        "v2",
    )
    assert (code, out) == (2, "")
    assert f"error: {option}: Expected a BenchRow JSONL file, got a directory at" in err
