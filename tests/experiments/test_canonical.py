"""Canonical result.md / summary.md / LESSONS.md: exact round-trips and clear errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelopt._errors import FormatError, InputError
from kernelopt.experiments import (
    Correctness,
    ResultRecord,
    ResultRow,
    Status,
    append_lesson,
    append_summary,
    parse_result,
    render_result,
    write_plan,
    write_result,
)


def _record(**changes: object) -> ResultRecord:
    base: dict[str, object] = dict(
        experiment=7,
        title="split-KV with 16 splits",
        status=Status.KEPT,
        correctness=Correctness.PASS,
        correctness_detail="rel err 1.8e-03 <= 1e-02 vs float64",
        date="2026-12-02T17:00:00Z",
        kernel="kernelopt/kernels/mla/split_kv.py",
        baseline="torch_eager",
        gpu="NVIDIA H200",
        versions={"torch": "2.11.0", "triton": "3.6.0"},
        tags=("split-kv-flash-decoding",),
        knobs={"BLOCK_N": "64", "num_warps": "8"},
        rows=(
            ResultRow(
                point="b=32 s=1 h=128 t=4096",
                impl="split_kv",
                median=75.776,
                p20=75.1,
                p80=76.4,
                unit="us",
                floor=53.2,
                speedup=3.4,
                mode="cold",
            ),
        ),
        verdict="FAST vs exp 6: 0.62x (spread 1.1%)",
        notes="Two lines\nof notes, with | pipes | kept.",
    )
    base.update(changes)
    return ResultRecord(**base)  # type: ignore[arg-type]


def test_render_parse_roundtrip() -> None:
    record = _record()
    text = render_result(record)
    assert parse_result(text) == record
    assert "| b=32 s=1 h=128 t=4096 | split_kv | 75.776 |" in text
    assert "70.2%" in text  # fraction of floor is shown, derived from floor / median


def test_minimal_record_roundtrip() -> None:
    record = ResultRecord(experiment=0, title="baseline", status="BASELINE", correctness="UNKNOWN")
    assert parse_result(render_result(record)) == record


_text = st.text(
    alphabet=st.characters(
        blacklist_characters="|\x00\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
        blacklist_categories=("Cs",),
    ),
    min_size=1,
    max_size=20,
).filter(lambda s: s.strip() == s and s.strip())
_word = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
# Times above zero: no reader takes a time at or below zero as measured.
_positive = st.floats(min_value=0.0, exclude_min=True, allow_infinity=False, width=64)


@given(
    experiment=st.integers(0, 10_000),
    title=_text,
    status=st.sampled_from(Status),
    correctness=st.sampled_from(Correctness),
    knobs=st.dictionaries(_word, _word, max_size=3),
    # A summary.md cell drops "__" as markdown: tags hold none.
    tags=st.lists(_word.filter(lambda word: "__" not in word), max_size=3),
    medians=st.lists(_positive, max_size=3),
    notes=st.text(st.characters(blacklist_characters="\r\x00", codec="utf-8"), max_size=40),
)
def test_roundtrip_property(
    experiment: int,
    title: str,
    status: Status,
    correctness: Correctness,
    knobs: dict[str, str],
    tags: list[str],
    medians: list[float],
    notes: str,
) -> None:
    rows = tuple(
        ResultRow(point=f"n={i}", impl="k", median=m, p20=m, p80=m, unit="us")
        for i, m in enumerate(medians)
    )
    record = ResultRecord(
        experiment=experiment,
        title=title,
        status=status,
        correctness=correctness,
        knobs=knobs,
        tags=tuple(tags),
        rows=rows,
        notes=notes.strip("\n"),
    )
    assert parse_result(render_result(record)) == record


def test_nan_is_refused() -> None:
    with pytest.raises(InputError, match="median: Expected a finite number"):
        ResultRow(point="p", impl="k", median=math.nan, p20=1.0, p80=1.0, unit="us")


@pytest.mark.parametrize(
    ("text", "line", "section"),
    [
        ("Experiment 1\n", 1, "title"),
        ("# Experiment 1: t\n\n- Status: MAYBE\n- Correctness: PASS\n", 3, "Status"),
        ("# Experiment 1: t\n\n- Status: KEPT\n- Correctness: PASS\n- Colour: red\n", 5, "fields"),
        (
            "# Experiment 1: t\n\n- Status: KEPT\n- Correctness: PASS\n\n## Measurements\n"
            "| Point | Impl |\n|---|---|\n| a | b |\n",
            9,
            "Measurements",
        ),
        ("# Experiment 1: t\n\n- Status: KEPT\n- Correctness: PASS\n\n## Extra\nx\n", 6, "Extra"),
    ],
)
def test_malformed_names_line_and_section(text: str, line: int, section: str) -> None:
    with pytest.raises(FormatError) as raised:
        parse_result(text, path="exp_1/result.md")
    assert raised.value.line == line
    assert raised.value.section == section
    assert str(raised.value).startswith(f"exp_1/result.md:{line} [{section}]: Expected")


def test_write_never_overwrites_by_accident(tmp_path: Path) -> None:
    path = write_result(tmp_path, _record())
    assert path == tmp_path / "exp_7" / "result.md"
    with pytest.raises(InputError, match="overwrite=True"):
        write_result(tmp_path, _record(title="other"))
    assert parse_result(path.read_text()).title == "split-KV with 16 splits"
    write_result(tmp_path, _record(title="other"), overwrite=True)
    assert parse_result(path.read_text()).title == "other"
    assert write_plan(tmp_path, 7, "Try 16 splits").read_text() == "Try 16 splits\n"


def test_summary_and_lessons_append(tmp_path: Path) -> None:
    append_summary(tmp_path, _record())
    append_summary(tmp_path, _record(experiment=8, status=Status.REVERTED, tags=()))
    lines = (tmp_path / "summary.md").read_text().splitlines()
    assert lines[2].startswith("| Exp | Date | Description | Latency |")
    assert lines[4].startswith("| 7 | 2026-12-02T17:00:00Z | split-KV with 16 splits | 75.776 | us")
    assert lines[5].split(" | ")[7] == "REVERTED"
    append_lesson(tmp_path, "Sixteen splits are too many at b=32.", experiment=8)
    assert (
        (tmp_path / "LESSONS.md")
        .read_text()
        .endswith("- [exp 8] Sixteen splits are too many at b=32.\n")
    )


def test_summary_refuses_foreign_table(tmp_path: Path) -> None:
    (tmp_path / "summary.md").write_text("| id | change |\n|---|---|\n| 1 | x |\n")
    with pytest.raises(FormatError, match="Expected a table with columns"):
        append_summary(tmp_path, _record())
    assert (tmp_path / "summary.md").read_text() == "| id | change |\n|---|---|\n| 1 | x |\n"


def test_median_only_rows_keep_unknown_quantiles_empty() -> None:
    # Sources that recorded only a median (e.g. do_bench) leave P20/P80 empty, not guessed.
    row = ResultRow(point="b=32 s=1", impl="k", median=151.3, unit="us", mode="graph")
    record = ResultRecord(experiment=1, title="t", status="KEPT", correctness="PASS", rows=(row,))
    text = render_result(record)
    assert "| b=32 s=1 | k | 151.3 |  |  | us |" in text
    assert parse_result(text) == record
    with pytest.raises(FormatError, match="Expected a number in column Median"):
        parse_result(text.replace("| 151.3 |", "|  |"))


def test_knob_values_that_would_not_read_back_are_refused() -> None:
    with pytest.raises(InputError, match="knobs: Expected keys and values"):
        ResultRecord(
            experiment=1,
            title="t",
            status="KEPT",
            correctness="PASS",
            knobs={"BLOCK_M": "min(64, rows)"},
        )
