"""A log written by the writers, then edited by hand as users edit it, read back.

Each case is an edit a user makes to ``summary.md`` or a ``result.md`` (columns moved, a
second table pasted, a spreadsheet's rows, a doubled ``|``, a second result file): what
was written is read, or named with its file and line, never lost unsaid.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kernelopt._errors import FormatError
from kernelopt.experiments import (
    ResultRecord,
    ResultRow,
    Status,
    log_result,
    parse_result,
    read_log,
    render_result,
)


def _record(number: int, title: str, median: float, status: str = "KEPT") -> ResultRecord:
    return ResultRecord(
        experiment=number,
        title=title,
        status=status,
        correctness="PASS",
        date=f"2026-11-{14 + number}",
        rows=(
            ResultRow(
                point="b=32",
                impl="triton",
                median=median,
                p20=median - 1,
                p80=median + 1,
                unit="us",
            ),
        ),
    )


@pytest.fixture
def log_root(tmp_path: Path) -> Path:
    """experiments/ with three experiments logged by log_result (summary rows at 5-7)."""
    root = tmp_path / "experiments"
    log_result(root, _record(1, "baseline", 100.0, "BASELINE"))
    log_result(root, _record(2, "BLOCK_N=64", 80.0))
    log_result(root, _record(3, "num_warps=8", 90.0, "REVERTED"))
    return root


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text().rstrip("\n") + "\n" + text)


def test_a_second_measurements_section_is_refused_naming_both() -> None:
    text = render_result(_record(2, "BLOCK_N=64", 80.0)) + (
        "\n## Measurements\n"
        "| Point | Impl | Median | P20 | P80 | Unit | Floor | Of floor | Speedup | Mode |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
        "| b=32 | triton | 60.0 | 59.0 | 61.0 | us |  |  |  | cold |\n"
    )
    # Read as one, the second table replaced the first's rows and no one was told.
    with pytest.raises(FormatError) as raised:
        parse_result(text, path="exp_2/result.md")
    assert raised.value.line == 12
    assert (
        "Expected one Measurements section (the first at line 7), got a second at line 12"
        in str(raised.value)
    )


def test_a_field_given_twice_is_refused() -> None:
    text = render_result(_record(2, "BLOCK_N=64", 80.0)).replace(
        "- Correctness: PASS\n", "- Correctness: PASS\n- Status: REVERTED\n"
    )
    with pytest.raises(FormatError) as raised:
        parse_result(text, path="exp_2/result.md")
    assert raised.value.line == 5
    assert "Expected one Status field (the first at line 3), got a second at line 5" in str(
        raised.value
    )


def test_measurement_columns_moved_by_hand_are_refused_at_the_header() -> None:
    text = (
        render_result(_record(2, "BLOCK_N=64", 80.0))
        .replace("| Point | Impl |", "| Impl | Point |")
        .replace("| b=32 | triton |", "| triton | b=32 |")
    )
    refused: list[FormatError] = []
    # Read by position, the header was named as a row and the row's point and impl swapped.
    with pytest.raises(FormatError) as raised:
        parse_result(text, path="exp_2/result.md", refused=refused)
    assert raised.value.line == 8
    assert "Expected the header '| Point | Impl | Median" in str(raised.value)
    assert "got '| Impl | Point | Median" in str(raised.value)


def test_read_log_names_a_measurements_table_it_could_not_read(log_root: Path) -> None:
    result = log_root / "exp_2" / "result.md"
    result.write_text(result.read_text().replace("| Point | Impl |", "| Impl | Point |"))
    log = read_log(log_root.parent)
    said = [w for w in log.warnings if w.startswith("experiments/exp_2/result.md")]
    assert len(said) == 1
    assert "line 8: Expected the header" in said[0]
    assert "its Measurements table was not read as written" in said[0]


def test_read_log_names_a_measurements_row_of_another_width(log_root: Path) -> None:
    result = log_root / "exp_2" / "result.md"
    _append(result, "|| b=64 | triton | 150.0 | 149.0 | 151.0 | us |  |  |  | cold ||\n")
    log = read_log(log_root.parent)
    assert any(
        w.startswith(
            "experiments/exp_2/result.md: not in the canonical layout (line 11: "
            "Expected 10 cells, got 12)"
        )
        for w in log.warnings
    )


def test_a_summary_row_with_a_doubled_leading_pipe_is_named(log_root: Path) -> None:
    summary = log_root / "summary.md"
    _append(summary, "|| 4 | 2026-11-18 | num_stages=3 | 70.0 | us |  | PASS | KEPT |  ||\n")
    log = read_log(log_root.parent)
    assert [e.number for e in log.experiments] == [1, 2, 3]
    assert any(
        w.startswith("experiments/summary.md:8: Expected an experiment number")
        and "got an empty cell in a row of 11" in w
        and w.endswith("the row was not read")
        for w in log.warnings
    )


def test_a_first_summary_row_with_a_doubled_leading_pipe_is_no_experiment_0(
    log_root: Path,
) -> None:
    summary = log_root / "summary.md"
    text = summary.read_text().replace("| 1 | 2026-11-15 |", "|| 1 | 2026-11-15 |")
    summary.write_text(text.replace("| BASELINE |  |\n", "| BASELINE |  ||\n"))
    log = read_log(log_root.parent)
    # Read as the unnumbered first row, it was experiment 0, its date its description.
    assert 0 not in [e.number for e in log.experiments]
    assert any(
        w.startswith("experiments/summary.md:5: Expected an experiment number")
        for w in log.warnings
    )


def test_rows_pasted_from_a_spreadsheet_under_the_summary_are_named(log_root: Path) -> None:
    summary = log_root / "summary.md"
    _append(
        summary,
        "4\t2026-11-18\tnum_stages=3\t70.0\tus\t\tPASS\tKEPT\t\n"
        "5\t2026-11-19\tnum_warps=4\t60.0\tus\t\tPASS\tKEPT\t\n",
    )
    log = read_log(log_root.parent)
    named = [w for w in log.warnings if "split by tabs" in w]
    assert [w.split(": ", 1)[0] for w in named] == [
        "experiments/summary.md:8",
        "experiments/summary.md:9",
    ]
    assert named[0].endswith(
        "Expected a table row led by '|' (the table of line 3), got 9 cells split by tabs "
        "(pasted from a spreadsheet?); the row was not read"
    )


def test_a_second_result_in_one_folder_is_read_and_its_fate_used(log_root: Path) -> None:
    rerun = _record(2, "BLOCK_N=64 rerun", 60.0, "REVERTED")
    (log_root / "exp_2" / "results.md").write_text(render_result(rerun))
    log = read_log(log_root.parent)
    experiment = log.experiment(2)
    assert experiment is not None
    # Passed over, the rerun that dropped the change left it counted as kept.
    assert experiment.status is Status.REVERTED
    assert any(
        "the latency is 80 us in experiments/exp_2/result.md:10 but 60 us in "
        "experiments/exp_2/results.md:10" in w
        for w in log.warnings
    )
    assert any(
        "KEPT in experiments/exp_2/result.md:3 but REVERTED in experiments/exp_2/results.md:3" in w
        for w in log.warnings
    )


@pytest.mark.parametrize(
    ("edit", "got", "line"),
    [
        (
            lambda text: text.replace("|---|---|---|---|---|---|---|---|---|\n", ""),
            "got its header at line 3 without a |---| row under it",
            3,
        ),
        (lambda text: "```\n" + text + "```\n", "got its header at line 4 inside a code block", 4),
        (
            lambda text: text.replace("| Date |", "| When |").replace("| Tags |", "| Labels |"),
            "got a table without Date, Tags at line 3",
            3,
        ),
    ],
    ids=["header-without-separator", "table-in-code-block", "columns-renamed"],
)
def test_a_summary_refused_names_what_it_holds_and_where(
    log_root: Path, edit: Callable[[str], str], got: str, line: int
) -> None:
    summary = log_root / "summary.md"
    summary.write_text(edit(summary.read_text()))
    before = summary.read_bytes()
    # Said as "got other columns", with no line, of a header whose columns were all there.
    with pytest.raises(FormatError) as raised:
        log_result(log_root, _record(4, "num_stages=3", 70.0))
    assert raised.value.line == line
    assert str(raised.value).endswith(got)
    assert summary.read_bytes() == before
    assert not (log_root / "exp_4").exists()
