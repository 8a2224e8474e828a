"""A kernel devlog records versions, not experiments; and three refusals that name the problem.

``kernelopt.workflow.update_devlog`` writes ``docs/kernels/<kernel>.md`` with one table per
kernel version under ``## Performance``: its ``v5`` is the fifth version, not experiment 5.
Read as experiments, it made phantom attempts and latencies that disagreed with the real
ones. A ``Version`` column outside a devlog still numbers experiments.

Also: a lock on a link that loops is refused by name (not a bare RuntimeError), a
``Decimal`` in a number field is refused by its type (not as not finite), and a plan with a
lone surrogate names the ``text`` argument.
"""

from __future__ import annotations

import decimal
import fractions
from pathlib import Path

import numpy
import pytest

from kernelopt import FormatError, InputError
from kernelopt._fileio import check_encodable, locked
from kernelopt.diagnose import diagnose
from kernelopt.experiments import (
    ResultRecord,
    ResultRow,
    Status,
    append_summary,
    log_result,
    read_log,
    write_plan,
)
from kernelopt.experiments.readers._kinds import PERFORMANCE_HEADER, is_performance_table
from kernelopt.workflow import PerfRow, update_devlog
from kernelopt.workflow.devlog import COLUMNS

from ..conftest import REPO, write_files

DEVLOG = "docs/kernels/rmsnorm.md"
LOOP = "Expected a file or a link to one, got a loop of symbolic links at "


def _log_two_experiments(root: Path) -> None:
    """experiments/ with exp 1 (100 us, BASELINE) and exp 2 (80 us, KEPT), as kernelopt
    writes them."""
    for number, median, status in ((1, 100.0, "BASELINE"), (2, 80.0, "KEPT")):
        row = ResultRow(point="rows=4 hidden=4097", impl="triton", median=median, unit="us")
        record = ResultRecord(
            experiment=number,
            title=f"step {number}",
            status=status,
            correctness="PASS",
            rows=(row,),
        )
        log_result(root / "experiments", record)


def _devlog_rows(*versions: tuple[str, float]) -> list[PerfRow]:
    return [
        PerfRow(version=version, point="rows=4 hidden=4097", time=time, gpu="NVIDIA H200")
        for version, time in versions
    ]


def _devlog_sources(log_sources: list[str]) -> list[str]:
    return [source for source in log_sources if source.startswith(DEVLOG)]


# --- 1. the devlog's version tables ------------------------------------------------------


def test_a_devlog_version_is_no_new_experiment(tmp_path: Path) -> None:
    _log_two_experiments(tmp_path)
    update_devlog(tmp_path / DEVLOG, _devlog_rows(("v5", 80.0)))
    log = read_log(tmp_path, catalog=())
    # v5 was read as a third experiment, exp 5, attempted.
    assert [e.number for e in log.experiments] == [1, 2]
    assert "notes" not in log.layouts
    unread = {u.path: u.reason for u in log.unread}
    assert unread[DEVLOG] == (
        "table of kernel versions at line 7: a kernel devlog (its Performance section, as "
        "kernelopt.workflow.update_devlog writes it, times each version at trial points) "
        "numbers versions, not experiments; not read as experiments"
    )


def test_a_devlog_version_of_an_experiments_number_leaves_it_as_it_was(tmp_path: Path) -> None:
    _log_two_experiments(tmp_path)
    # v2 was read as exp 2 with a second latency (and its fate dropped to "unknown").
    update_devlog(tmp_path / DEVLOG, _devlog_rows(("v1", 400.0), ("v2", 300.0)))
    log = read_log(tmp_path, catalog=())
    second = log.experiment(2)
    assert second is not None
    assert (second.latency, second.status) == (80.0, Status.KEPT)
    assert not _devlog_sources([str(s) for e in log.experiments for s in e.sources])
    assert log.warnings == ()
    assert (
        "tables of kernel versions at lines 7, 13:"
        in {u.path: u.reason for u in log.unread}[DEVLOG]
    )


def test_devlog_versions_make_no_attempts_since_the_best(tmp_path: Path) -> None:
    _log_two_experiments(tmp_path)
    update_devlog(tmp_path / DEVLOG, _devlog_rows(("v9", 80.0)))
    diagnosis = diagnose(tmp_path)
    assert diagnosis.summary.experiments == 2
    assert DEVLOG in {u.path for u in diagnosis.unread}


HAND_VERSIONS = """\
# rmsnorm

## What the measurements showed

| version | change | result |
|---|---|---|
| v1 | one barrier per tile | 158 us |
| v2 | a barrier pair per group | wrong (rel err 5e-2) |
| v3 | arrival counts fixed | 86.0 us |

| Exp | Description | Latency | Unit | Status |
|---|---|---|---|---|
| 7 | split-K sweep | 90.0 | us | KEPT |

## Performance

### v3

{header}
|---------|-------|------|---------|------|----------|-----|------|
| v3 | hidden=4097 rows=4 | 86 us | - | - | - | NVIDIA H200 | 2026-12-02 |
"""
HEADER = "| Version | Point | Time | TFLOP/s | GB/s | Of floor | GPU | Date |"


def test_a_devlogs_own_version_table_is_no_experiment_table_but_its_exp_table_is(
    tmp_path: Path,
) -> None:
    write_files(tmp_path, {DEVLOG: HAND_VERSIONS.format(header=HEADER)})
    log = read_log(tmp_path, catalog=())
    # v1..v3 of the hand-written table were experiments 1-3 (v2 failing).
    assert [e.number for e in log.experiments] == [7]
    assert log.experiments[0].latency == 90.0
    assert "at lines 5, 19:" in {u.path: u.reason for u in log.unread}[DEVLOG]


def test_a_devlog_header_is_known_in_any_case_and_spacing(tmp_path: Path) -> None:
    header = "| **version** |  point | TIME | tflop/s | GB/s | of floor | gpu | date |"
    write_files(tmp_path, {DEVLOG: HAND_VERSIONS.format(header=header)})
    assert [e.number for e in read_log(tmp_path, catalog=()).experiments] == [7]


def test_a_devlogs_version_table_without_a_separator_is_passed_over_too(tmp_path: Path) -> None:
    text = HAND_VERSIONS.format(header=HEADER).replace(
        "| version | change | result |\n|---|---|---|\n", "| version | change | result |\n"
    )
    write_files(tmp_path, {DEVLOG: text})
    assert [e.number for e in read_log(tmp_path, catalog=()).experiments] == [7]


def test_a_devlog_is_never_the_note_of_one_experiment(tmp_path: Path) -> None:
    # "## Hypothesis" and "## Performance" are two sections a one-experiment note has.
    text = (
        "# rmsnorm\n\n## Hypothesis\n\nOne pass over the rows.\n\n## Performance\n\n### v2\n\n"
        f"{HEADER}\n|---|---|---|---|---|---|---|---|\n"
        "| v2 | hidden=4097 rows=4 | 80 us | - | - | - | NVIDIA H200 | 2026-12-02 |\n"
    )
    write_files(tmp_path, {DEVLOG: text})
    assert read_log(tmp_path, catalog=()).experiments == ()


def test_a_version_column_outside_a_devlog_still_numbers_experiments(tmp_path: Path) -> None:
    summary = (
        "| Version | Change | Latency | Status |\n|---|---|---|---|\n"
        "| v1 | baseline | 100 us | BASELINE |\n"
        "| v2 | split-K | 80 us | KEPT |\n"
        "| v3 | bigger tiles | 85 us | REVERTED |\n"
    )
    write_files(tmp_path, {"experiments/summary.md": summary, "notes/rmsnorm.md": summary})
    log = read_log(tmp_path, catalog=())
    assert [(e.number, e.latency, e.status) for e in log.experiments] == [
        (1, 100.0, Status.BASELINE),
        (2, 80.0, Status.KEPT),
        (3, 85.0, Status.REVERTED),
    ]
    assert log.unread == ()


def test_the_readers_know_the_header_the_devlog_writes() -> None:
    assert tuple(column.lower() for column in COLUMNS) == PERFORMANCE_HEADER
    assert is_performance_table(COLUMNS)
    assert not is_performance_table(COLUMNS[:-1])


def test_the_repositorys_devlog_gives_no_experiment() -> None:
    log = read_log(REPO / "docs", catalog=())
    devlog = "kernels/mla_decode.md"
    # Its v1-v5 table was read as experiments 1-5; v5 "reverted" overrode exp 5's KEPT.
    assert not [s for e in log.experiments for s in e.sources if s.path == devlog]
    assert not [w for w in log.warnings if f"{devlog}:" in w]
    assert devlog in {u.path for u in log.unread}


# --- 2. a lock on a loop of links ---------------------------------------------------------


def test_a_lock_on_a_link_to_itself_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "L").mkdir()
    (tmp_path / "L" / "summary.md").symlink_to("summary.md")
    with pytest.raises(InputError) as refused, locked("L/summary.md"):
        pass
    assert str(refused.value) == LOOP + "L/summary.md"
    assert not (tmp_path / "L" / "summary.md.lock").exists()


def test_a_lock_below_a_folder_loop_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    target = tmp_path / "a" / "summary.md"
    with pytest.raises(InputError) as refused, locked(target):
        pass
    assert str(refused.value) == LOOP + str(target)


def test_an_append_to_a_looping_summary_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "summary.md").symlink_to("summary.md")
    record = ResultRecord(experiment=1, title="t", status="KEPT", correctness="PASS")
    with pytest.raises(InputError, match=LOOP):
        append_summary(tmp_path, record)


# --- 3. a number of a type no number field takes -----------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [(decimal.Decimal("1.1"), "Decimal('1.1'), a Decimal"), (1 + 2j, "(1+2j), a complex")],
)
def test_a_number_of_another_type_is_refused_by_its_type(value: object, shown: str) -> None:
    with pytest.raises(InputError) as refused:
        ResultRow(point="p", impl="i", median=value, unit="us")  # type: ignore[arg-type]
    assert str(refused.value) == (
        f"median: Expected a finite number, got {shown}; an int, a float or another "
        "numbers.Real (a Fraction, a NumPy number) is taken"
    )


@pytest.mark.parametrize(
    "value", [fractions.Fraction(11, 10), numpy.float32(1.5), numpy.int64(2), 3]
)
def test_real_numbers_of_other_types_are_taken(value: object) -> None:
    row = ResultRow(point="p", impl="i", median=value, unit="us")  # type: ignore[arg-type]
    assert row.median == float(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "shown"), [(True, "True"), ("1.1", "'1.1'"), (float("nan"), "nan")]
)
def test_other_refusals_read_as_before(value: object, shown: str) -> None:
    with pytest.raises(InputError) as refused:
        ResultRow(point="p", impl="i", median=value, unit="us")  # type: ignore[arg-type]
    assert str(refused.value) == f"median: Expected a finite number, got {shown}"


# --- 4. a plan text no encoding holds ------------------------------------------------------


def test_a_plan_with_a_lone_surrogate_names_its_argument(tmp_path: Path) -> None:
    root = tmp_path / "experiments"
    with pytest.raises(InputError) as refused:
        write_plan(root, 8, "a\ud800b")
    assert (
        str(refused.value) == "text: Expected text utf-8 can encode, got '\\ud800' at character 1"
    )
    assert not root.exists()


def test_a_replaced_plan_counts_the_character_in_the_argument(tmp_path: Path) -> None:
    # A UTF-16 plan is rewritten after its byte-order mark: the index is the argument's.
    root = tmp_path / "experiments"
    plan = root / "exp_8" / "plan.md"
    plan.parent.mkdir(parents=True)
    plan.write_bytes("# Plan\n".encode("utf-16"))
    with pytest.raises(InputError, match=r"^text: .* at character 2$"):
        write_plan(root, 8, "ab\udc80", overwrite=True)
    assert plan.read_bytes() == "# Plan\n".encode("utf-16")


def test_the_shared_writer_names_no_argument_it_does_not_know() -> None:
    with pytest.raises(InputError) as refused:
        check_encodable("x\udc80", "utf-16-le")
    assert str(refused.value) == "Expected text utf-16-le can encode, got '\\udc80' at character 1"


def test_a_summary_that_is_not_utf8_is_refused_naming_the_byte(tmp_path: Path) -> None:
    # The byte's value and offset, as the readers name it: "not all UTF-8 (byte 0xe9 ...".
    root = tmp_path / "experiments"
    root.mkdir()
    summary = root / "summary.md"
    before = b"# Summary\n\ncaf\xe9 latin-1\n"
    summary.write_bytes(before)
    record = ResultRecord(
        experiment=1, title="baseline", status="BASELINE", correctness="PASS", date="2026-12-07"
    )
    with pytest.raises(FormatError, match=r"\(byte 0xe9 at offset 14: invalid continuation byte\)"):
        append_summary(root, record)
    assert summary.read_bytes() == before
