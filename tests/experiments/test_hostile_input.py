"""Odd and hostile files on disk: each is read for what it holds or reported, never lost."""

from __future__ import annotations

import builtins
import errno
import os
from pathlib import Path
from typing import Any

import pytest

from kernelopt.experiments import (
    ResultRecord,
    ResultRow,
    append_lesson,
    append_summary,
    read_log,
    render_result,
    write_plan,
    write_result,
)
from kernelopt.experiments.readers import _files

_HEADER = (
    "| Exp | Date | Description | Latency | Unit | Speedup | Correct | Status | Tags |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
)
_BASELINE = "| 0 | 2026-01-01 | baseline | 100.0 | us |  | PASS | BASELINE |  |\n"


def _summary(tmp_path: Path, rows: str, *, encoding: str = "utf-8") -> Path:
    path = tmp_path / "experiments" / "summary.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("# Experiments Summary\n\n" + _HEADER + _BASELINE + rows).encode(encoding))
    return path


def _record(experiment: int, **changes: Any) -> ResultRecord:
    fields: dict[str, Any] = dict(
        experiment=experiment,
        title=f"try {experiment}",
        status="KEPT",
        correctness="PASS",
        rows=(ResultRow(point="b=1", impl="k", median=10.0 + experiment, unit="us"),),
    )
    fields.update(changes)
    return ResultRecord(**fields)


# --- tables -------------------------------------------------------------------------------


def test_an_escaped_pipe_reads_as_a_pipe(tmp_path: Path) -> None:
    _summary(tmp_path, r"| 1 | 2026-01-02 | a \| b | 90.0 | us |  | PASS | KEPT |  |" + "\n")
    log = read_log(tmp_path, catalog=())
    assert log.experiment(1).description == "a | b"  # type: ignore[union-attr]
    assert log.experiment(1).latency == 90.0  # type: ignore[union-attr]


def test_a_pipe_inside_backticks_keeps_the_row_whole(tmp_path: Path) -> None:
    _summary(tmp_path, "| 1 | 2026-01-02 | `x | y` mask | 90.0 | us |  | PASS | KEPT |  |\n")
    log = read_log(tmp_path, catalog=())
    one = log.experiment(1)
    assert one is not None
    assert one.description == "x | y mask"
    assert (one.latency, one.unit) == (90.0, "us")
    assert one.status is not None and one.status.value == "KEPT"


def test_a_row_as_wide_as_its_header_splits_at_every_bare_pipe(tmp_path: Path) -> None:
    # Without cells to spare, a code span does not hold a pipe back (as markdown renders it).
    text = "| Exp | Latency | Status |\n|---|---|---|\n| 1 | `3 us | KEPT` |\n"
    (tmp_path / "notes.md").write_text(text)
    log = read_log(tmp_path, catalog=())
    assert [e.latency for e in log.experiments] == [3.0]


# --- times that are no measurement ---------------------------------------------------------


@pytest.mark.parametrize("cell", ["-5", "-5 us", "0", "0.0"])
def test_a_time_not_above_zero_is_not_a_latency(tmp_path: Path, cell: str) -> None:
    _summary(tmp_path, f"| 1 | 2026-01-02 | x | {cell} | us |  | PASS | KEPT |  |\n")
    log = read_log(tmp_path, catalog=())
    one = log.experiment(1)
    assert one is not None and (one.latency, one.unit) == (None, None)
    assert all(p.value > 0 for p in one.points)
    assert any("Expected a latency > 0" in w and "summary.md:6" in w for w in log.warnings)


@pytest.mark.parametrize("cell", ["n/a", "nan", "NaN", "inf", "-inf", "1e400"])
def test_a_time_that_is_no_number_is_not_a_latency(tmp_path: Path, cell: str) -> None:
    _summary(tmp_path, f"| 1 | 2026-01-02 | x | {cell} | us |  | PASS | KEPT |  |\n")
    one = read_log(tmp_path, catalog=()).experiment(1)
    assert one is not None and one.latency is None and one.points == ()


@pytest.mark.parametrize(("cell", "value", "unit"), [("1.2ms", 1.2, "ms"), ("~40 us", 40.0, "us")])
def test_a_time_with_its_unit_in_the_cell(
    tmp_path: Path, cell: str, value: float, unit: str
) -> None:
    _summary(tmp_path, f"| 1 | 2026-01-02 | x | {cell} | us |  | PASS | KEPT |  |\n")
    one = read_log(tmp_path, catalog=()).experiment(1)
    assert one is not None and (one.latency, one.unit) == (value, unit)


def test_negative_times_in_a_devlog_and_a_csv_are_not_latencies(tmp_path: Path) -> None:
    (tmp_path / "devlog.md").write_text(
        "# Devlog\n\n## 2026-01-01 - baseline (ACCEPTED)\nResult: **100 us**\n\n"
        "## 2026-01-02 - idea (ACCEPTED)\nResult: **-3 us**\n"
    )
    log = read_log(tmp_path, catalog=())
    assert [e.latency for e in log.experiments] == [100.0, None]
    csv = tmp_path / "csv"
    csv.mkdir()
    (csv / "history.csv").write_text("step,mean_ms,status\n1,1.0,kept\n2,-1,kept\n")
    log = read_log(csv, catalog=())
    assert [e.latency for e in log.experiments] == [1.0, None]


def test_a_negative_speedup_in_jsonl_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "history.jsonl").write_text(
        '{"step": 1, "mean_latency_ms": 1.0, "speedup": 1.5}\n'
        '{"step": 2, "mean_latency_ms": 0.9, "speedup": -2.0}\n'
    )
    log = read_log(tmp_path, catalog=())
    assert [e.speedup for e in log.experiments] == [1.5, None]


# --- encodings and line endings --------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_text_with_a_byte_order_mark_is_read(tmp_path: Path, encoding: str) -> None:
    rows = "| 1 | 2026-01-02 | caf\xe9 | 90.0 | us |  | PASS | KEPT |  |\n"
    path = _summary(tmp_path, "", encoding="utf-8")
    text = path.read_text(encoding="utf-8") + rows
    mark = {"utf-16-be": "\ufeff"}.get(encoding, "")
    path.write_bytes((mark + text).encode(encoding))
    log = read_log(tmp_path, catalog=())
    assert [e.latency for e in log.experiments] == [100.0, 90.0]
    assert log.experiment(1).description == "caf\xe9"  # type: ignore[union-attr]
    assert log.unread == ()


def test_utf16_without_a_mark_is_named_as_such(tmp_path: Path) -> None:
    path = _summary(tmp_path, "", encoding="utf-16-le")
    log = read_log(tmp_path, catalog=())
    reasons = {u.path: u.reason for u in log.unread}
    assert "UTF-16" in reasons["experiments/summary.md"]
    assert path.exists()


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_lessons_keep_crlf_and_cr_endings(tmp_path: Path, ending: str) -> None:
    path = tmp_path / "LESSONS.md"
    path.write_bytes(f"# Lessons{ending}{ending}- a{ending}".encode())
    append_lesson(tmp_path, "b")
    assert path.read_bytes() == f"# Lessons{ending}{ending}- a{ending}- b{ending}".encode()


def test_a_summary_with_cr_endings_takes_a_row_in_them(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    text = "# Experiments Summary\r\r" + (_HEADER + _BASELINE).replace("\n", "\r")
    path.write_bytes(text.encode())
    append_summary(tmp_path, _record(1))
    written = path.read_bytes().decode()
    assert "\n" not in written
    assert written.startswith(text)
    assert written.endswith("| 1 |  | try 1 | 11.0 | us |  | PASS | KEPT |  |\r")


def test_a_summary_with_a_bom_keeps_one_mark(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_bytes(("\ufeff# Experiments Summary\n\n" + _HEADER + _BASELINE).encode())
    append_summary(tmp_path, _record(1))
    append_summary(tmp_path, _record(2))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf#") and data.count(b"\xef\xbb\xbf") == 1
    assert [e.number for e in read_log(tmp_path, catalog=()).experiments] == [0, 1, 2]


# --- folders ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["exp_1a", "exp_-1", "exp_9.bak", "exp_", "Step-2x"])
def test_a_folder_named_almost_like_an_experiment_is_reported(tmp_path: Path, name: str) -> None:
    _summary(tmp_path, "")
    folder = tmp_path / "experiments" / name
    folder.mkdir()
    (folder / "result.md").write_text(render_result(_record(1)))
    log = read_log(tmp_path, catalog=())
    reasons = {u.path: u.reason for u in log.unread}
    assert f"experiments/{name}" in reasons
    assert reasons[f"experiments/{name}"].startswith("Expected a folder named exp_N")


@pytest.mark.parametrize(("name", "number"), [("exp_007", 7), ("EXP_3", 3), ("Exp-12", 12)])
def test_folder_numbers_in_other_spellings(tmp_path: Path, name: str, number: int) -> None:
    _summary(tmp_path, "")
    folder = tmp_path / "experiments" / name
    folder.mkdir()
    (folder / "result.md").write_text(render_result(_record(number)))
    log = read_log(tmp_path, catalog=())
    assert [e.number for e in log.experiments] == [0, number]
    assert log.unread == ()


def test_a_file_that_cannot_be_opened_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run as root, a mode of 0 still reads: the refusal is made where the file is opened.
    _summary(tmp_path, "| 1 | 2026-01-02 | x | 90.0 | us |  | PASS | KEPT |  |\n")
    (tmp_path / "experiments" / "LESSONS.md").write_text("- [exp 1] a\n")

    def refuse(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("LESSONS.md"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(_files, "open", refuse, raising=False)
    log = read_log(tmp_path, catalog=())
    reasons = {u.path: u.reason for u in log.unread}
    assert reasons["experiments/LESSONS.md"] == "cannot read: Permission denied"
    assert [e.number for e in log.experiments] == [0, 1]


def test_repeated_rows_are_reported_in_a_bounded_list(tmp_path: Path) -> None:
    row = "| 1 | 2026-01-02 | x | 90.0 | us |  | PASS | KEPT |  |\n"
    _summary(tmp_path, row * 5000)
    log = read_log(tmp_path, catalog=())
    repeats = [u for u in log.unread if "repeat" in u.reason]
    assert len(repeats) <= 21
    assert any("4979 more rows repeat" in u.reason for u in repeats)


def test_nothing_in_the_log_is_imported(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    payload = f"open({str(marker)!r}, 'w').write('x')\n"
    for name in ("conftest.py", "__init__.py", "experiments/conftest.py", "experiments/exp_1/k.py"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(payload)
    _summary(tmp_path, "")
    log = read_log(tmp_path, catalog=())
    assert not marker.exists()
    assert any(k.path == "experiments/exp_1/k.py" for k in log.kernels)


# --- writes -----------------------------------------------------------------------------------


def _lessons_and_results(root: str, start: int, count: int, go: Any) -> None:
    go.wait(60)
    for experiment in range(start, start + count):
        append_lesson(root, f"lesson {experiment}", experiment=experiment)
        write_result(root, _record(experiment))
        append_summary(root, _record(experiment))


def test_two_processes_writing_one_log_lose_nothing(tmp_path: Path) -> None:
    import multiprocessing

    # A common start: spawned writers take most of a second to import, and one that ran
    # before the other was done let a log written without locks pass now and then.
    context = multiprocessing.get_context("spawn")
    go = context.Barrier(2)
    root = str(tmp_path / "experiments")
    writers = [
        context.Process(target=_lessons_and_results, args=(root, 1 + 15 * i, 15, go))
        for i in range(2)
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
        assert writer.exitcode == 0
    lessons = (tmp_path / "experiments" / "LESSONS.md").read_text().splitlines()
    assert sorted(lessons[2:]) == sorted(f"- [exp {n}] lesson {n}" for n in range(1, 31))
    log = read_log(tmp_path, catalog=())
    assert [e.number for e in log.experiments] == list(range(1, 31))
    assert [e.latency for e in log.experiments] == [10.0 + n for n in range(1, 31)]
    assert log.unread == () and log.warnings == ()


_AWKWARD = dict(
    title="  \u00e9t\u00e9 `code` \u2713 \U0001f680 " + "w" * 20_000,
    correctness_detail=" rel err `1e-3` ",
    kernel="k`e`rnel.py",
    notes="  leading\n| a | b |\n`tick` \\| back\n\ntrailing  \n",
    verdict="FAST `0.62x` \u00b11.1%",
    knobs={"BLOCK_N": "64", "note": "a`b`"},
)


def test_write_read_write_gives_the_same_bytes(tmp_path: Path) -> None:
    record = _record(3, **_AWKWARD)
    root = tmp_path / "experiments"
    path = write_result(root, record)
    append_summary(root, record)
    first = path.read_bytes(), (root / "summary.md").read_bytes()
    from kernelopt.experiments import parse_result

    again = parse_result(path.read_text(encoding="utf-8"))
    assert again == record
    write_result(root, again, overwrite=True)
    append_summary(root, again, replace=True)
    assert (path.read_bytes(), (root / "summary.md").read_bytes()) == first
    read = read_log(tmp_path, catalog=()).experiment(3)
    assert read is not None and read.latency == 13.0


@pytest.mark.parametrize("step", ["write", "fsync", "replace"])
def test_a_failed_write_leaves_the_old_files_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    root = tmp_path / "experiments"
    write_result(root, _record(1))
    append_summary(root, _record(1))
    append_lesson(root, "first")
    write_plan(root, 1, "plan")
    before = {p: p.read_bytes() for p in root.rglob("*.md")}

    def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    import kernelopt._fileio as fileio

    if step == "write":
        real_fdopen = os.fdopen

        class Broken:
            def __init__(self, fd: int, *args: Any, **kwargs: Any) -> None:
                self.handle = real_fdopen(fd, *args, **kwargs)

            def __enter__(self) -> Broken:
                return self

            def __exit__(self, *exc: object) -> None:
                self.handle.close()

            def write(self, data: bytes) -> None:
                self.handle.write(data[: len(data) // 2])
                self.handle.flush()
                fail()

        monkeypatch.setattr(fileio.os, "fdopen", Broken)
    else:
        monkeypatch.setattr(fileio.os, step, fail)
    attempts = (
        lambda: write_result(root, _record(1, title="new"), overwrite=True),
        lambda: append_summary(root, _record(2)),
        lambda: append_lesson(root, "second"),
        lambda: write_plan(root, 1, "new plan", overwrite=True),
    )
    for attempt in attempts:
        with pytest.raises(OSError):
            attempt()
    monkeypatch.undo()
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before
    assert not [p for p in root.rglob("*.tmp")]


@pytest.mark.parametrize("name", ["experiments_old", "run", "steps", "exp_123456", "exp_v2"])
def test_folders_that_name_no_experiment_are_not_reported(tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "notes.md").write_text("Some notes.\n")
    assert read_log(tmp_path, catalog=()).unread == ()


@pytest.mark.parametrize(
    ("field", "value"), [("median", 0.0), ("median", -1.0), ("speedup", 0.0), ("p20", -1.0)]
)
def test_a_row_refuses_a_time_no_reader_would_take(field: str, value: float) -> None:
    from kernelopt._errors import InputError

    fields: dict[str, Any] = dict(point="p", impl="k", median=1.0, unit="us")
    fields[field] = value
    with pytest.raises(InputError, match=f"{field}: Expected a"):
        ResultRow(**fields)


def test_a_name_that_is_not_utf8_is_reported(tmp_path: Path) -> None:
    root = os.fsencode(tmp_path)
    os.makedirs(root + b"/experiments/exp_2")
    with open(root + b"/experiments/summ\xffary.md", "wb") as handle:
        handle.write(b"| Exp | Latency | Status |\n|---|---|---|\n| 1 | 3 us | KEPT |\n")
    with open(root + b"/experiments/exp_2/k\xff.py", "wb") as handle:
        handle.write(b"x = 1\n")
    log = read_log(tmp_path, catalog=())
    shown = sorted(u.path for u in log.unread)
    assert shown == ["experiments/exp_2/k\ufffd.py", "experiments/summ\ufffdary.md"]
    assert all(u.reason.startswith("Expected a UTF-8 name") for u in log.unread)
    assert log.kernels == () and log.experiments == ()


def test_a_pipe_named_as_a_log_file_is_reported_not_opened(tmp_path: Path) -> None:
    _summary(tmp_path, "")
    os.mkfifo(tmp_path / "experiments" / "LESSONS.md")
    log = read_log(tmp_path, catalog=())
    reasons = {u.path: u.reason for u in log.unread}
    assert reasons["experiments/LESSONS.md"].startswith("Expected a regular file")


def test_a_file_swapped_for_a_pipe_after_the_walk_does_not_block(tmp_path: Path) -> None:
    import threading

    path = _summary(tmp_path, "")
    files = _files.LogFiles(tmp_path, _files.ReadLimits())
    path.unlink()
    os.mkfifo(path)
    found: list[object] = []
    reader = threading.Thread(target=lambda: found.append(files.read("experiments/summary.md")))
    reader.daemon = True
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # free the blocked reader before failing
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    assert found == [None]
    assert files.unread[-1].reason.startswith("Expected a regular file")


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text.replace("\n", "\r\n"),
        lambda text: text.replace("\n", "\r"),
        lambda text: "\ufeff" + text,
        lambda text: "\ufeff" + text.replace("\n", "\r\n"),
    ],
    ids=["crlf", "cr", "bom", "bom-crlf"],
)
def test_a_result_saved_by_another_editor_parses_the_same(edit: Any) -> None:
    from kernelopt.experiments import parse_result

    record = _record(3, notes="first\n\nlast", verdict="FAST")
    assert parse_result(edit(render_result(record))) == record


@pytest.mark.parametrize(
    ("folder", "write"),
    [
        ("summary.md", lambda root: append_summary(root, _record(1))),
        ("LESSONS.md", lambda root: append_lesson(root, "a")),
        ("exp_1/result.md", lambda root: write_result(root, _record(1))),
        ("exp_1/result.md", lambda root: write_result(root, _record(1), overwrite=True)),
        ("exp_1/plan.md", lambda root: write_plan(root, 1, "a")),
    ],
)
def test_a_folder_where_a_log_file_goes_is_named_as_one(
    tmp_path: Path, folder: str, write: Any
) -> None:
    from kernelopt._errors import InputError

    (tmp_path / folder).mkdir(parents=True)
    with pytest.raises(InputError, match=r"Expected a file, got a folder at .*" + folder):
        write(tmp_path)
    assert (tmp_path / folder).is_dir() and not any((tmp_path / folder).iterdir())


@pytest.mark.parametrize("field", ["latency", "speedup", "throughput"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0, -1.0, "5", True])
def test_an_experiment_holds_no_number_that_could_pass_for_a_best(
    field: str, value: object
) -> None:
    from kernelopt._errors import InputError
    from kernelopt.experiments import Experiment

    with pytest.raises(InputError, match=f"{field}: Expected None or a finite number > 0"):
        Experiment(number=1, label="exp 1", **{field: value})  # type: ignore[arg-type]
    assert Experiment(number=1, label="exp 1", **{field: 2.5}).__getattribute__(field) == 2.5


def test_a_huge_folder_is_listed_only_up_to_the_entry_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A folder of millions of files must not be listed whole before the limit applies.
    for index in range(300):
        (tmp_path / f"note_{index:03}.md").write_text(f"Note {index}.\n")
    real_scandir = os.scandir
    taken: list[int] = []

    class Counted:
        def __init__(self, path: str) -> None:
            self.scan = real_scandir(path)
            taken.append(0)

        def __enter__(self) -> Counted:
            return self

        def __exit__(self, *exc: object) -> None:
            self.scan.close()

        def __iter__(self) -> Counted:
            return self

        def __next__(self) -> os.DirEntry[str]:
            entry = next(self.scan)
            taken[-1] += 1
            return entry

    monkeypatch.setattr(_files.os, "scandir", Counted)
    log = read_log(tmp_path, catalog=(), limits=_files.ReadLimits(max_files=50))
    assert max(taken) <= 51
    assert any("stopped after 50 entries" in u.reason for u in log.unread)


def test_a_summary_whose_table_opens_the_file_after_a_bom_takes_a_row(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_bytes(("\ufeff" + _HEADER + _BASELINE).encode())
    append_summary(tmp_path, _record(1))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf| Exp |") and data.count(b"\xef\xbb\xbf") == 1
    assert [e.number for e in read_log(tmp_path, catalog=()).experiments] == [0, 1]


@pytest.mark.parametrize("target", ["result", "plan"])
def test_two_first_writes_of_one_file_keep_one_and_refuse_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    # The first write is held up while it writes: a second, started meanwhile, must not
    # be replaced by it (nor replace it): one is written, the other refused.
    import threading

    import kernelopt.experiments.canonical as canonical
    from kernelopt._errors import InputError

    real_write = canonical.atomic_write_text
    entered, go = threading.Event(), threading.Event()

    def slow_first(path: Any, text: str, **options: Any) -> None:
        if not entered.is_set():
            entered.set()
            go.wait(10)
        real_write(path, text, **options)

    monkeypatch.setattr(canonical, "atomic_write_text", slow_first)
    root = tmp_path / "experiments"

    def write(title: str) -> None:
        if target == "result":
            write_result(root, _record(1, title=title))
        else:
            write_plan(root, 1, title)

    outcomes: dict[str, str] = {}

    def attempt(title: str) -> None:
        try:
            write(title)
            outcomes[title] = "written"
        except InputError:
            outcomes[title] = "refused"

    first = threading.Thread(target=attempt, args=("first",))
    first.start()
    assert entered.wait(10)
    second = threading.Thread(target=attempt, args=("second",))
    second.start()
    second.join(1)
    go.set()
    first.join(10)
    second.join(10)
    assert sorted(outcomes.values()) == ["refused", "written"]
    (kept,) = (title for title, outcome in outcomes.items() if outcome == "written")
    assert kept in (root / "exp_1" / f"{target}.md").read_text()
    assert sorted(p.name for p in (root / "exp_1").iterdir()) == [f"{target}.md"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_a_line_cut_at_the_byte_limit_is_not_read(tmp_path: Path, encoding: str) -> None:
    # "| 7 | 2026-01-08 | x | 12" of "| 7 | ... | 123.5 | us |": a cut number is no value.
    rows = "".join(
        f"| {n} | 2026-01-0{n + 1} | x | 123.5 | us |  | PASS | KEPT |  |\n" for n in range(1, 8)
    )
    path = _summary(tmp_path, rows)
    text = path.read_text(encoding="utf-8")
    path.write_bytes(text.encode(encoding))
    cut = text.index("123.5", text.index("| 7 |")) + 2
    limit = len(text[:cut].encode(encoding))  # UTF-16's mark included, as in the file
    log = read_log(tmp_path, catalog=(), limits=_files.ReadLimits(max_file_bytes=limit))
    assert [e.number for e in log.experiments] == [0, 1, 2, 3, 4, 5, 6]
    assert all(e.latency in (100.0, 123.5) for e in log.experiments)
    assert any(u.reason.startswith("read the first") for u in log.unread)
