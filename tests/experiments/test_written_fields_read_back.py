"""What a canonical result.md states is what the readers read back: tags declared as none,
the status given beside a failed check, each field's own line, a timestamp's time zone; a
kernel path that climbs out of the log is named; the spellings of one knob are one knob;
the canonical writers refuse a verdict the readers would not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt._errors import InputError
from kernelopt.experiments import (
    Correctness,
    Experiment,
    ResultRecord,
    ResultRow,
    SourceRef,
    Status,
    log_result,
    parse_result,
    read_log,
    render_result,
    write_result,
)
from kernelopt.experiments.canonical import check_verdict
from kernelopt.experiments.readers import knobs_of
from kernelopt.experiments.readers._values import date_of

ROW = ResultRow(point="b=32", impl="triton", median=50.0, unit="us")


def _record(**changes: object) -> ResultRecord:
    fields: dict[str, object] = {
        "experiment": 1,
        "title": "tl.dot over a 16-row padded batch",
        "status": "KEPT",
        "correctness": "PASS",
        "rows": (ROW,),
    }
    fields.update(changes)
    return ResultRecord(**fields)  # type: ignore[arg-type]


def _only(root: Path, record: ResultRecord, *, summary: bool = False) -> Experiment:
    experiments = root / "experiments"
    (log_result if summary else write_result)(experiments, record)
    (experiment,) = read_log(root).experiments
    return experiment


# --- 1. tags declared as none --------------------------------------------------------------


def test_a_result_that_declares_no_tags_is_tagged_with_none(tmp_path: Path) -> None:
    text = render_result(_record()).replace(
        "- Correctness: PASS\n", "- Correctness: PASS\n- Tags: none\n"
    )
    folder = tmp_path / "experiments" / "exp_1"
    folder.mkdir(parents=True)
    (folder / "result.md").write_text(text, encoding="utf-8")

    assert parse_result(text).tags == ()
    # Without the declaration the title's words would tag it bucket-padding-waste.
    (experiment,) = read_log(tmp_path).experiments
    assert experiment.tags == ()


@pytest.mark.parametrize(("tags", "found"), [([], False), (None, True)])
def test_write_experiment_declares_none_for_an_empty_list(
    tmp_path: Path, tags: list[str] | None, found: bool
) -> None:
    from kernelopt.bench import write_experiment

    row = ResultRow(point="m=8 n=4096 k=4096", impl="w4a16", median=30.0, unit="us")
    write_experiment(
        tmp_path / "experiments",
        experiment=1,
        title="tl.dot over a 16-row padded batch",
        rows=[row],
        status="KEPT",
        correctness="PASS",
        tags=tags,
    )
    text = (tmp_path / "experiments" / "exp_1" / "result.md").read_text(encoding="utf-8")
    assert ("- Tags: none\n" in text) is not found
    (experiment,) = read_log(tmp_path).experiments
    assert ("bucket-padding-waste" in experiment.tags) is found


def test_a_result_without_a_tags_line_still_has_its_tags_found(tmp_path: Path) -> None:
    experiment = _only(tmp_path, _record())

    assert "bucket-padding-waste" in experiment.tags


@pytest.mark.parametrize("tag", ["none", "None"])
def test_none_is_no_tag_a_record_takes(tag: str) -> None:
    with pytest.raises(InputError, match=r"^tags: Expected a catalog id"):
        _record(tags=(tag,))


# --- 2. the status given beside a failed check ---------------------------------------------


@pytest.mark.parametrize("summary", [False, True])
def test_a_reverted_version_that_failed_reads_back_reverted(tmp_path: Path, summary: bool) -> None:
    record = _record(status="REVERTED", correctness="FAIL")

    experiment = _only(tmp_path, record, summary=summary)

    assert experiment.status is Status.REVERTED
    assert experiment.correctness is Correctness.FAIL


def test_a_hand_written_reverted_failure_still_reads_as_failed(tmp_path: Path) -> None:
    folder = tmp_path / "experiments" / "exp_1"
    folder.mkdir(parents=True)
    (folder / "result.md").write_text(
        "# Exp 1: fused\n\nStatus: reverted\nCorrectness: FAIL (max abs err 3.1)\n",
        encoding="utf-8",
    )

    (experiment,) = read_log(tmp_path).experiments

    assert experiment.status is Status.FAILED


# --- 3. each field at its own line ---------------------------------------------------------


def test_each_field_of_a_result_is_cited_at_its_own_line(tmp_path: Path) -> None:
    record = _record(date="2026-12-07", kernel="kernels/k.py", gpu="NVIDIA H100")

    experiment = _only(tmp_path, record)

    lines = render_result(record).splitlines()
    path = "experiments/exp_1/result.md"
    for field, written in [
        ("status", "- Status: KEPT"),
        ("correctness", "- Correctness: PASS"),
        ("date", "- Date: 2026-12-07"),
        ("kernel", "- Kernel: kernels/k.py"),
        ("gpu", "- GPU: NVIDIA H100"),
    ]:
        assert experiment.refs[field] == SourceRef(path=path, line=lines.index(written) + 1)
    assert experiment.refs["description"] == SourceRef(path=path, line=1)


# --- 4. a timestamp's time zone ------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("2026-12-07T23:30:00-05:00", "2026-12-07T23:30:00-05:00"),
        ("2026-12-07T23:30:00Z", "2026-12-07T23:30:00Z"),
        ("2026-12-07T23:30:00.25+0530", "2026-12-07T23:30:00+05:30"),
        ("2026-12-07T23:30", "2026-12-07T23:30:00"),
        # A span of hours after a date and a space states no zone.
        ("2026-12-07 10:00-12:00", "2026-12-07T10:00:00"),
    ],
)
def test_a_timestamps_time_zone_is_kept(written: str, read: str) -> None:
    assert date_of(written) == read


def test_a_summary_rows_timestamp_keeps_its_zone(tmp_path: Path) -> None:
    experiment = _only(tmp_path, _record(date="2026-12-07T23:30:00-05:00"), summary=True)

    assert experiment.date == "2026-12-07T23:30:00-05:00"


# --- 5. a kernel path that climbs out of the log -------------------------------------------


def test_a_kernel_and_baseline_that_climb_out_are_kept_and_named(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text(
        "# Rules\n\nKernel: ../../../kernelopt/kernels/mla/seesaw.py\nBaseline: ../../ref.py\n",
        encoding="utf-8",
    )

    log = read_log(tmp_path)

    assert log.kernel_path is not None
    assert log.kernel_path.text == "../../../kernelopt/kernels/mla/seesaw.py"
    assert log.baseline_path is not None and log.baseline_path.text == "../../ref.py"
    assert not log.kernels
    assert [(u.path, u.reason) for u in log.unread] == [
        (
            "../../../kernelopt/kernels/mla/seesaw.py",
            "named as the kernel in CLAUDE.md:3, climbs out of the log with '..'; not followed",
        ),
        (
            "../../ref.py",
            "named as the baseline in CLAUDE.md:4, climbs out of the log with '..'; not followed",
        ),
    ]


def test_a_path_that_climbs_back_into_the_log_is_read(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "k.py").write_text("def k():\n    pass\n", encoding="utf-8")
    (tmp_path / "docs" / "CLAUDE.md").write_text("Kernel: ../kernels/k.py\n", encoding="utf-8")

    log = read_log(tmp_path)

    assert [k.path for k in log.kernels] == ["kernels/k.py"]
    assert log.unread == ()


# --- 6. the spellings of one knob ----------------------------------------------------------


@pytest.mark.parametrize(
    "title", ["splits=16", "num_splits=16", "n_splits=16", "kv_splits=16", "num_kv_splits 16"]
)
def test_the_spellings_of_the_split_count_are_one_knob(title: str) -> None:
    assert knobs_of(title) == {"num_splits": "16"}


def test_the_spellings_of_the_split_count_tag_alike(tmp_path: Path) -> None:
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "summary.md").write_text(
        "| Exp | Description | Latency | Status |\n|---|---|---|---|\n"
        "| 1 | num_splits=16 | 5 us | KEPT |\n| 2 | splits=16 | 5 us | KEPT |\n"
        "| 3 | num_splits=4 | 5 us | KEPT |\n| 4 | n_splits=4 | 5 us | KEPT |\n"
        "| 5 | 4 KV splits | 5 us | KEPT |\n",
        encoding="utf-8",
    )

    one, two, three, four, five = read_log(tmp_path).experiments

    assert one.tags == two.tags == ("too-many-kv-splits",)
    assert three.tags == four.tags == five.tags == ("split-kv-flash-decoding",)
    assert {e.knobs["num_splits"] for e in (three, four, five)} == {"4"}


# --- 7. the canonical writers refuse a verdict the readers would not read ------------------


@pytest.mark.parametrize("writer", [write_result, log_result])
def test_a_verdict_read_back_as_none_is_refused_before_writing(
    tmp_path: Path, writer: object
) -> None:
    root = tmp_path / "experiments"
    with pytest.raises(InputError, match=r"^verdict: Expected a verdict whose first word is FAST"):
        writer(root, _record(verdict="decode: FAST 0.6x"))  # type: ignore[operator]
    assert not root.exists()


@pytest.mark.parametrize("writer", [write_result, log_result])
def test_a_fast_verdict_on_a_failing_version_is_refused(tmp_path: Path, writer: object) -> None:
    root = tmp_path / "experiments"
    record = _record(status="REVERTED", correctness="FAIL", verdict="FAST 0.6x")
    with pytest.raises(InputError) as refused:
        writer(root, record)  # type: ignore[operator]
    assert str(refused.value).endswith("got verdict FAST with correctness FAIL")
    assert not root.exists()


def test_a_verdict_the_readers_read_is_written() -> None:
    check_verdict("SLOW 1.20x [1.10, 1.30]", Correctness.FAIL)
    check_verdict(None, "FAIL")
    check_verdict("FAST 0.620x [0.610, 0.630]", "PASS")
