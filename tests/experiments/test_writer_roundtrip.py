"""The canonical writer and its records: whatever a constructor accepts reads back the same.

Every ``ResultRecord`` the constructor accepts is written by :func:`render_result` /
:func:`write_result` and read back equal by :func:`parse_result` (also from text read with
universal newlines) and, for the facts an ``Experiment`` keeps, by :func:`read_log`; text
that cannot be represented is refused with ``Expected X, got Y``.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import TypeVar

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelopt._errors import InputError
from kernelopt.experiments import (
    Correctness,
    ResultRecord,
    ResultRow,
    SourceRef,
    Status,
    append_summary,
    parse_result,
    read_log,
    render_result,
    write_result,
)
from kernelopt.experiments.canonical import check_verdict
from kernelopt.experiments.readers._values import knob_name

# Free text of every kind: line breaks of all sorts, pipes, backticks, headings, spaces.
_ODD = ["|", "`", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"]
_ODD += [" ", "\t", "\xa0", "## ", "# ", "\x00", ",", ", ", "=", "(", ")", "é", "😀"]
_free = st.lists(st.sampled_from(_ODD) | st.text(max_size=4), max_size=6).map("".join)
T = TypeVar("T")
_number = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(10**30), 10**30)
    | st.sampled_from([0, 0.0, -0.0, 5e-324, 1.7976931348623157e308, 0.1 + 0.2])
    | st.fractions(max_denominator=10**6)
)


def _evolved(draw: st.DrawFn, item: T, fields: dict[str, st.SearchStrategy[object]]) -> T:
    # Field by field, so that one refused value does not lose the whole record: each
    # value drawn is kept when the constructor accepts it.
    for name, strategy in fields.items():
        with contextlib.suppress(InputError):
            item = attrs.evolve(item, **{name: draw(strategy)})  # type: ignore[misc]
    return item


@st.composite
def _rows(draw: st.DrawFn) -> ResultRow:
    row = ResultRow(point="p", impl="k", median=1.0, unit="us")
    return _evolved(
        draw,
        row,
        {
            "point": _free,
            "impl": _free,
            "median": _number,
            "p20": st.none() | _number,
            "p80": st.none() | _number,
            "unit": st.sampled_from(["ns", "us", "ms", "s"]),
            "floor": st.none() | _number,
            "speedup": st.none() | _number,
            "mode": _free,
        },
    )


@st.composite
def _records(draw: st.DrawFn) -> ResultRecord:
    record = ResultRecord(experiment=1, title="t", status="KEPT", correctness="PASS")
    return _evolved(
        draw,
        record,
        {
            "experiment": st.integers(-2, 10**6) | st.sampled_from([0, 1, 99_999]),
            "title": _free,
            "status": st.sampled_from(Status),
            "correctness": st.sampled_from(Correctness),
            "correctness_detail": _free,
            "date": _free,
            "kernel": st.none() | _free,
            "baseline": st.none() | _free,
            "gpu": st.none() | _free,
            "versions": st.dictionaries(_free, _free, max_size=2),
            "tags": st.none() | st.lists(_free, max_size=3),
            "knobs": st.dictionaries(_free, _free, max_size=2),
            "rows": st.lists(_rows(), max_size=3),
            "verdict": st.none() | _free,
            "notes": _free,
        },
    )


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(record=_records())
def test_every_accepted_record_reads_back_equal(record: ResultRecord) -> None:
    text = render_result(record)
    assert parse_result(text) == record
    # A user's ``Path.read_text()`` turns every CR into LF: nothing may hinge on one.
    assert parse_result(text.replace("\r\n", "\n").replace("\r", "\n")) == record


def _writable(record: ResultRecord) -> ResultRecord:
    """``record`` without a verdict where the writers refuse its verdict (one the readers
    would read as none, or FAST beside a failed check): the record takes any."""
    try:
        check_verdict(record.verdict, record.correctness)
    except InputError:
        return attrs.evolve(record, verdict=None)
    return record


@settings(max_examples=40, suppress_health_check=list(HealthCheck), deadline=None)
@given(record=_records())
def test_read_log_reads_the_written_facts(record: ResultRecord) -> None:
    record = _writable(record)
    folder = Path(tempfile.mkdtemp())
    try:
        write_result(folder / "experiments", record)
        log = read_log(folder, catalog=[])
        assert [e.number for e in log.experiments] == [record.experiment]
        (experiment,) = log.experiments
        # The status as written, REVERTED beside a FAIL included.
        assert experiment.status is record.status
        assert experiment.correctness is record.correctness
        assert experiment.tags == (record.tags or ())
        # The spellings of one knob (splits, n_splits) are read under its one name.
        assert experiment.knobs == {knob_name(key): value for key, value in record.knobs.items()}
        assert experiment.kernel == record.kernel
        if record.rows:
            head = record.rows[0]
            assert (experiment.latency, experiment.unit) == (head.median, head.unit)
            assert experiment.speedup == head.speedup
            assert experiment.headline_point == head.point
    finally:
        shutil.rmtree(folder)


def _row(**changes: object) -> ResultRow:
    base: dict[str, object] = dict(point="b=32 s=1", impl="split_kv", median=75.5, unit="us")
    base.update(changes)
    return ResultRow(**base)  # type: ignore[arg-type]


def _record(**changes: object) -> ResultRecord:
    base: dict[str, object] = dict(
        experiment=7, title="split-KV", status="KEPT", correctness="PASS", rows=(_row(),)
    )
    base.update(changes)
    return ResultRecord(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "two\rlines"),
        ("title", "two\u2028lines"),
        ("title", "nul\x00byte"),
        ("title", "lone \ud800 surrogate"),
        ("date", "2026-11-17\n"),
        ("date", "2026 | 11"),
        ("correctness_detail", "rel err\x0c1e-3"),
        ("kernel", ""),
        ("kernel", "a.py\r"),
        ("gpu", "H100\x85"),
        ("baseline", ""),
        ("verdict", ""),
        ("verdict", "FAST\n"),
        ("verdict", "FAST\n## Notes\nnot a note"),
        ("verdict", "FAST\r\nx"),
        ("notes", "windows\r\nline ends"),
        ("notes", "a NUL \x00"),
        ("tags", ("split-kv, fp8",)),
        ("tags", ("",)),
        ("tags", (" padded",)),
        ("tags", ("a|b",)),
        # A summary.md cell is read without inline markdown and with spaces squeezed.
        ("tags", ("`split-kv`",)),
        ("tags", ("**split-kv**",)),
        ("tags", ("split__kv",)),
        ("tags", ("[split-kv](x.md)",)),
        ("tags", ("split  kv",)),
        ("date", "`2026-11-17`"),
        ("date", "2026-11-17  10:00"),
        ("knobs", {"BLOCK_N": "64 "}),
        ("knobs", {" BLOCK_N": "64"}),
        ("versions", {"torch": "2.11\u2028"}),
        ("experiment", 100_000),
    ],
)
def test_text_that_would_read_back_differently_is_refused(field: str, value: object) -> None:
    with pytest.raises(InputError, match=f"{field}: Expected .*, got "):
        _record(**{field: value})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("point", " b=32"),
        ("impl", "split_kv\xa0"),
        ("mode", "cold\t"),
        ("point", "b=32\rs=1"),
        ("impl", "a\u2029b"),
        ("point", "x\x00"),
    ],
)
def test_row_text_that_would_read_back_differently_is_refused(field: str, value: str) -> None:
    with pytest.raises(InputError, match=f"{field}: Expected .*, got "):
        _row(**{field: value})


def test_numbers_are_stored_as_the_floats_written() -> None:
    # 10**20 + 1 and 1/3 have no exact float: the record holds the float the file holds.
    row = _row(median=10**20 + 1, p20=Fraction(1, 3), speedup=3)
    assert row.median == 1e20 and type(row.median) is float
    assert row.p20 == 1 / 3
    assert type(row.speedup) is float
    record = _record(rows=(row,))
    assert parse_result(render_result(record)) == record
    with pytest.raises(InputError, match="median: Expected a finite number"):
        _row(median=10**400)


def test_a_point_named_like_the_header_is_a_row() -> None:
    record = _record(rows=(_row(point="Point"), _row(point="b=1")))
    assert parse_result(render_result(record)) == record


def test_notes_keep_their_leading_and_trailing_newlines() -> None:
    record = _record(notes="\nFirst line\n\n## A heading in the notes\n| a | b |\n")
    assert parse_result(render_result(record)) == record


def test_notes_read_from_an_edited_file_without_final_newline() -> None:
    text = render_result(_record(notes="kept"))
    assert parse_result(text.rstrip("\n")).notes == "kept"


@settings(max_examples=150, suppress_health_check=list(HealthCheck), deadline=None)
@given(record=_records())
def test_read_log_reads_the_written_facts_beside_the_summary_row(record: ResultRecord) -> None:
    # Both files name the experiment's facts: the summary row's rendering of them may not
    # add to, or stand in for, what result.md states exactly.
    record = _writable(record)
    folder = Path(tempfile.mkdtemp())
    try:
        write_result(folder / "experiments", record)
        append_summary(folder / "experiments", record)
        log = read_log(folder, catalog=[])
        (experiment,) = log.experiments
        assert experiment.tags == (record.tags or ())
        assert experiment.correctness is record.correctness
        if record.rows:
            head = record.rows[0]
            assert (experiment.latency, experiment.unit) == (head.median, head.unit)
            assert experiment.speedup == head.speedup
    finally:
        shutil.rmtree(folder)


def test_a_tag_given_twice_is_kept_once() -> None:
    # The readers keep an experiment's tags once each: a record holding one twice would
    # not read back equal.
    record = _record(tags=("split-kv", "fp8-kv-cache", "split-kv"))
    assert record.tags == ("split-kv", "fp8-kv-cache")
    assert parse_result(render_result(record)) == record


_EDITS = {
    "a section of the user's own": lambda text: text + "\n## Remarks\nRe-run after a reboot.\n",
    "a field in bold": lambda text: text.replace("- Status: KEPT", "- **Status**: KEPT"),
    "a status in lower case": lambda text: text.replace("- Status: KEPT", "- Status: kept"),
}


@pytest.mark.parametrize("edit", list(_EDITS))
def test_a_result_edited_out_of_the_canonical_layout_keeps_its_measurements(
    tmp_path: Path, edit: str
) -> None:
    # The Measurements table is still kernelopt's: its median and unit are the headline,
    # not lost to a column that a hand-written table would be read by.
    rows = (
        _row(point="b=32 s=1", median=57.9, p20=57.4, p80=58.3, floor=40.0, speedup=1.2),
        _row(point="b=32 s=16", median=0.9, unit="ms", speedup=1.1),
    )
    text = render_result(_record(experiment=3, rows=rows))
    result = tmp_path / "experiments" / "exp_3" / "result.md"
    result.parent.mkdir(parents=True)
    result.write_text(_EDITS[edit](text), encoding="utf-8")

    log = read_log(tmp_path, catalog=[])

    (experiment,) = log.experiments
    assert (experiment.latency, experiment.unit, experiment.speedup) == (57.9, "us", 1.2)
    assert experiment.headline_point == "b=32 s=1"
    assert [(p.name, p.value, p.unit) for p in experiment.points] == [
        ("b=32 s=1 split_kv", 57.9, "us"),
        ("b=32 s=16 split_kv", 0.9, "ms"),
    ]
    assert experiment.refs["latency"] == SourceRef(path="experiments/exp_3/result.md", line=9)
    assert experiment.status is Status.KEPT
    assert any(
        w.startswith("experiments/exp_3/result.md: not in the canonical layout")
        for w in log.warnings
    ), log.warnings
