"""A result row's times in the order quantiles come in, and a result whose row never got
its summary row.

``p20 <= median <= p80`` holds for any three quantiles of one set of samples: a row out
of that order (typed or copied wrong, by hand) is refused by :class:`ResultRow`, and a
``result.md`` holding one has that row named in the log's warnings and left out, the rest
of the file and of the log still read. A ``log_result`` killed between its two writes
leaves the result without its summary row: the experiment is still read, from the result.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kernelopt import cli
from kernelopt._errors import FormatError, InputError
from kernelopt.experiments import (
    ResultRecord,
    ResultRow,
    log_result,
    parse_result,
    read_log,
    render_result,
)
from kernelopt.experiments.canonical import measurement_rows
from kernelopt.experiments.log import SourceRef
from kernelopt.experiments.records import Status

# The line of a result.md's first Measurements row: title, blank, two fields, blank,
# heading, header, separator.
_FIRST_ROW = 9


def _row(**changes: Any) -> ResultRow:
    fields: dict[str, Any] = dict(
        point="b=32 s=1", impl="split_kv", median=10.0, p20=9.0, p80=11.0, unit="us"
    )
    fields.update(changes)
    return ResultRow(**fields)


def _record(experiment: int, *rows: ResultRow, status: str = "KEPT") -> ResultRecord:
    return ResultRecord(
        experiment=experiment,
        title=f"try {experiment}",
        status=status,
        correctness="PASS",
        rows=rows,
    )


def _log(root: Path) -> Path:
    """Three experiments logged by kernelopt, each with two timed points."""
    experiments = root / "experiments"
    for number, median in ((1, 20.0), (2, 10.0), (3, 8.0)):
        rows = (
            _row(median=median, p20=median - 1, p80=median + 1),
            _row(point="b=32 s=16", median=median * 4, p20=median * 4 - 1, p80=median * 4 + 1),
        )
        log_result(
            experiments, _record(number, *rows, status="BASELINE" if number == 1 else "KEPT")
        )
    return experiments


def _edit_row(result: Path, row: int, cells: str) -> None:
    """Put ``cells`` (``"median | p20 | p80"``) in Measurements row ``row`` (0 the first)."""
    lines = result.read_text(encoding="utf-8").split("\n")
    index = _FIRST_ROW - 1 + row
    parts = lines[index].split(" | ")
    parts[2:5] = cells.split(" | ")
    lines[index] = " | ".join(parts)
    result.write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.parametrize(
    ("times", "message"),
    [
        ((10.0, 12.0, 8.0), "p20: Expected p20 <= p80, got p20=12.0 > p80=8.0"),
        ((10.0, 11.0, 12.0), "median: Expected p20 <= median, got median=10.0 < p20=11.0"),
        ((10.0, None, 9.0), "median: Expected median <= p80, got median=10.0 > p80=9.0"),
        ((10.0, 10.5, None), "median: Expected p20 <= median, got median=10.0 < p20=10.5"),
    ],
)
def test_a_row_refuses_times_out_of_their_order(
    times: tuple[float, float | None, float | None], message: str
) -> None:
    median, p20, p80 = times
    with pytest.raises(InputError) as raised:
        _row(median=median, p20=p20, p80=p80)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    "times", [(10.0, 10.0, 10.0), (10.0, None, None), (10.0, 0.0, None), (10.0, None, 1e9)]
)
def test_a_row_takes_times_in_their_order(times: tuple[float, float | None, float | None]) -> None:
    median, p20, p80 = times
    row = _row(median=median, p20=p20, p80=p80)
    assert (row.median, row.p20, row.p80) == times
    record = _record(4, row)
    assert parse_result(render_result(record)) == record


def test_parse_result_raises_on_such_a_row_or_gives_it_back_refused() -> None:
    second = _row(point="b=32 s=16", median=40.0, p20=39.0, p80=42.0)
    text = render_result(_record(4, _row(), second))
    text = text.replace("| 40.0 | 39.0 | 42.0 |", "| 40.0 | 41.0 | 42.0 |")
    with pytest.raises(FormatError) as raised:
        parse_result(text, path="exp_4/result.md")
    assert raised.value.line == _FIRST_ROW + 1
    assert str(raised.value) == (
        "exp_4/result.md:10 [Measurements]: median: Expected p20 <= median, got median=40.0 "
        "< p20=41.0"
    )
    refused: list[FormatError] = []
    record = parse_result(text, path="exp_4/result.md", refused=refused)
    assert record.rows == (_row(),)
    assert [str(error) for error in refused] == [str(raised.value)]
    refused.clear()
    assert measurement_rows(text, path="exp_4/result.md", refused=refused) == (_row(),)
    assert [error.line for error in refused] == [_FIRST_ROW + 1]


def test_a_result_row_out_of_order_is_named_and_the_rest_still_read(tmp_path: Path) -> None:
    experiments = _log(tmp_path)
    _edit_row(experiments / "exp_2" / "result.md", 1, "40.0 | 42.0 | 38.0")

    log = read_log(tmp_path, catalog=())

    assert log.warnings == (
        "experiments/exp_2/result.md:10 [Measurements]: p20: Expected p20 <= p80, got "
        "p20=42.0 > p80=38.0; the row was not read",
    )
    assert [(e.number, e.latency, e.status) for e in log.experiments] == [
        (1, 20.0, Status.BASELINE),
        (2, 10.0, Status.KEPT),
        (3, 8.0, Status.KEPT),
    ]
    second = log.experiment(2)
    assert second is not None and second.headline_point == "b=32 s=1"
    # Without the summary rows, the points are the results': the headline row is still
    # read, at its own line, and the refused point is not.
    (experiments / "summary.md").unlink()
    log = read_log(tmp_path, catalog=())
    second, third = log.experiment(2), log.experiment(3)
    assert second is not None and third is not None
    assert [(p.name, p.value, p.source) for p in second.points] == [
        ("b=32 s=1 split_kv", 10.0, SourceRef(path="experiments/exp_2/result.md", line=9))
    ]
    assert [p.name for p in third.points] == ["b=32 s=1 split_kv", "b=32 s=16 split_kv"]


def test_a_refused_first_row_gives_no_headline_from_its_result(tmp_path: Path) -> None:
    experiments = _log(tmp_path)
    result = experiments / "exp_2" / "result.md"
    _edit_row(result, 0, "10.0 | 9.0 | 9.5")
    (experiments / "summary.md").unlink()

    log = read_log(tmp_path, catalog=())

    assert log.warnings == (
        "experiments/exp_2/result.md:9 [Measurements]: median: Expected median <= p80, got "
        "median=10.0 > p80=9.5; the row was not read",
    )
    second = log.experiment(2)
    assert second is not None
    # The next row is another point: its time is not the experiment's headline.
    assert (second.latency, second.headline_point) == (None, "")
    assert [(p.name, p.value, p.source.line) for p in second.points] == [
        ("b=32 s=16 split_kv", 40.0, 10)
    ]
    # The rest of the canonical result is still read as kernelopt wrote it.
    assert (second.description, second.status) == ("try 2", Status.KEPT)


def test_a_result_out_of_the_layout_has_its_bad_row_named_too(tmp_path: Path) -> None:
    experiments = _log(tmp_path)
    result = experiments / "exp_3" / "result.md"
    _edit_row(result, 1, "32.0 | 33.0 | 34.0")
    result.write_text(result.read_text(encoding="utf-8") + "\n## Remarks\nRerun.\n")
    (experiments / "summary.md").unlink()

    log = read_log(tmp_path, catalog=())

    assert (
        "experiments/exp_3/result.md:10 [Measurements]: median: Expected p20 <= median, got "
        "median=32.0 < p20=33.0; the row was not read"
    ) in log.warnings
    third = log.experiment(3)
    assert third is not None
    assert [(p.name, p.source.line) for p in third.points] == [("b=32 s=1 split_kv", 9)]
    assert third.latency == 8.0


def test_diagnose_prints_the_refused_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    experiments = _log(tmp_path)
    _edit_row(experiments / "exp_2" / "result.md", 1, "40.0 | 42.0 | 38.0")

    cli.main(["diagnose", str(tmp_path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["experiments"] == 3
    assert data["warnings"] == [
        "experiments/exp_2/result.md:10 [Measurements]: p20: Expected p20 <= p80, got "
        "p20=42.0 > p80=38.0; the row was not read"
    ]
    cli.main(["diagnose", str(tmp_path)])
    assert "p20: Expected p20 <= p80, got p20=42.0 > p80=38.0" in capsys.readouterr().out


# Logs experiment 4 with the summary write replaced by a SIGKILL of the process: killed
# there, no take-back runs, as when the machine or the user stops it between the writes.
_KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from kernelopt.experiments import ResultRecord, ResultRow, canonical, log_result

    write = canonical.atomic_write_text

    def killed_at_the_summary(path, text, **options):
        if str(path).endswith("summary.md"):
            os.kill(os.getpid(), signal.SIGKILL)
        write(path, text, **options)

    canonical.atomic_write_text = killed_at_the_summary
    rows = (
        ResultRow(point="b=32 s=1", impl="split_kv", median=7.0, p20=6.5, p80=7.5, unit="us"),
        ResultRow(point="b=32 s=16", impl="split_kv", median=30.0, unit="us"),
    )
    log_result(sys.argv[1], ResultRecord(
        experiment=4, title="try 4", status="KEPT", correctness="PASS", rows=rows,
        notes="Next steps:\\n- try a persistent grid",
    ))
    """
)


def test_a_result_whose_write_was_killed_before_its_row_is_still_read(tmp_path: Path) -> None:
    experiments = _log(tmp_path)
    summary = (experiments / "summary.md").read_bytes()

    done = subprocess.run(
        [sys.executable, "-c", _KILLED, str(experiments)], capture_output=True, check=False
    )

    assert done.returncode == -9, done.stderr
    assert (experiments / "summary.md").read_bytes() == summary
    assert (experiments / "exp_4" / "result.md").is_file()
    log = read_log(tmp_path, catalog=())
    fourth = log.experiment(4)
    assert fourth is not None
    assert (fourth.description, fourth.status, fourth.latency) == ("try 4", Status.KEPT, 7.0)
    assert [p.value for p in fourth.points] == [7.0, 30.0]
    assert [r.text for r in fourth.recommendations] == ["try a persistent grid"]
    assert log.warnings == ()
