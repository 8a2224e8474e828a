"""The devlog's Performance section is updated in place; every other byte survives."""

from __future__ import annotations

import codecs
import difflib
import threading
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings

from kernelopt import FormatError, InputError
from kernelopt.bench import Bottleneck, Ceilings, ProfileReport, Stage
from kernelopt.workflow import (
    PerfRow,
    parse_performance,
    perf_row_from_profile,
    perf_rows_from_bench,
    read_performance,
    update_devlog,
)

from .conftest import anchor_row, bench_row
from .strategies import perf_rows

H200 = Ceilings(  # /work/shared/anchors/h200-2026-12-02.json
    gpu="NVIDIA H200",
    copy_bytes_per_s=4.2497501013921815e12,
    matmul_flop_per_s=693.6596691456391e12,
)
HEADER = "| Version | Point | Time | TFLOP/s | GB/s | Of floor | GPU | Date |"

DEVLOG = (
    "# mla_decode devlog   \n"
    "\n"
    "Design notes with trailing spaces.  \t\n"
    "\n"
    "```markdown\n"
    "## Performance\n"
    "| Version | Point | fake table inside a fence |\n"
    "```\n"
    "\n"
    "## Performance\n"
    "\n"
    "Numbers below are CUDA-graph medians.\n"
    "\n"
    "### v1\n"
    "\n"
    f"{HEADER}\n"
    "|---|---|---|---|---|---|---|---|\n"
    "| v1 | b=32 s=1 t=4096 h=16 | 99.3 us | - | - | - | NVIDIA H200 | 2026-12-01 |\n"
    "| v1 | b=32 s=16 t=4096 h=16 | 616 us | - | - | - | NVIDIA H200 | 2026-12-01 |\n"
    "\n"
    "v1 was the first split-KV kernel.\n"
    "\n"
    "## Design\n"
    "\n"
    "~~~python\n"
    "## not a heading\n"
    "~~~\n"
    "Last line without a newline"
)

ROW = PerfRow(
    version="v1",
    point="b=32 s=1 t=4096 h=16",
    time=66.53,
    tflop_s=68.6,
    gb_s=2286,
    floor_pct=53.8,
    gpu="NVIDIA H200",
    date="2026-12-02",
)


def changed_lines(before: str, after: str) -> list[tuple[str, list[str], list[str]]]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    return [
        (op, a[i1:i2], b[j1:j2]) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"
    ]


def test_a_row_of_the_same_version_and_point_is_replaced_in_place(tmp_path: Path) -> None:
    path = tmp_path / "mla_decode.md"
    path.write_bytes(DEVLOG.encode())
    update = update_devlog(path, [ROW])
    assert update.replaced == (ROW,) and not update.added and not update.created
    after = path.read_bytes().decode()
    assert changed_lines(DEVLOG, after) == [
        (
            "replace",
            ["| v1 | b=32 s=1 t=4096 h=16 | 99.3 us | - | - | - | NVIDIA H200 | 2026-12-01 |\n"],
            [ROW.render() + "\n"],
        )
    ]


def test_a_new_point_is_appended_to_its_version_table(tmp_path: Path) -> None:
    path = tmp_path / "mla_decode.md"
    path.write_bytes(DEVLOG.encode())
    row = PerfRow(version="v1", point="b=32 s=1 t=4096 h=128", time=402.8, gpu="NVIDIA H200")
    update_devlog(path, [row])
    after = path.read_text(encoding="utf-8")
    [(op, removed, added)] = changed_lines(DEVLOG, after)
    assert op == "insert" and removed == [] and added == [row.render() + "\n"]
    assert after.index(row.render()) > after.index("| v1 | b=32 s=16 t=4096 h=16 |")


@pytest.mark.parametrize("mark", ["\u2028", "\x0c", "\x85", "\x1e"])
def test_only_newlines_end_a_devlog_line(tmp_path: Path, mark: str) -> None:
    # Markdown and editors end a line at CR or LF alone; a form feed or U+2028 pasted into
    # a hand-written row or prose is part of its line, so nothing is inserted inside it.
    last = "| v1 | b=32 s=16 t=4096 h=16 | 616 us | - | - | - | NVIDIA H200 | 2026-12-01 |"
    marked = last.replace("NVIDIA H200", f"NVIDIA{mark}H200")
    text = DEVLOG.replace(last, marked).replace("Numbers below", f"Numbers{mark}below")
    path = tmp_path / "mla_decode.md"
    path.write_bytes(text.encode())
    row = PerfRow(version="v1", point="b=32 s=1 t=4096 h=128", time=402.8, gpu="NVIDIA H200")
    update_devlog(path, [row])
    after = path.read_bytes().decode()
    assert after == text.replace(marked + "\n", marked + "\n" + row.render() + "\n")


def test_a_new_version_gets_its_table_at_the_end_of_the_section(tmp_path: Path) -> None:
    path = tmp_path / "mla_decode.md"
    path.write_bytes(DEVLOG.encode())
    row = PerfRow(version="v2", point="b=32 s=1 t=4096 h=16", time=60.0)
    update_devlog(path, [row])
    after = path.read_text(encoding="utf-8")
    block = (
        "\n### v2\n\n"
        + HEADER
        + "\n|---------|-------|------|---------|------|----------|-----|------|\n"
        "| v2 | b=32 s=1 t=4096 h=16 | 60 us | - | - | - | - | - |\n"
    )
    last = "v1 was the first split-KV kernel.\n"
    assert after == DEVLOG.replace(last, last + block)
    assert after.index("### v2") < after.index("## Design")
    assert after.index("v1 was the first split-KV kernel.") < after.index("### v2")


def test_crlf_files_stay_crlf_and_byte_identical_elsewhere(tmp_path: Path) -> None:
    path = tmp_path / "k.md"
    original = DEVLOG.replace("\n", "\r\n").encode()
    path.write_bytes(original)
    update_devlog(path, [ROW, PerfRow(version="v9", point="b=1 s=1 t=1", time=1.0)])
    after = path.read_bytes()
    assert b"\n" not in after.replace(b"\r\n", b"")  # no bare LF was introduced
    text = after.decode()
    assert text.startswith(DEVLOG.replace("\n", "\r\n").split("### v1")[0])
    assert text.endswith(
        "## Design\r\n\r\n~~~python\r\n## not a heading\r\n~~~\r\nLast line without a newline"
    )
    assert [r.version for r in read_performance(path)] == ["v1", "v1", "v9"]


def test_one_pasted_crlf_line_does_not_make_new_rows_crlf(tmp_path: Path) -> None:
    # Any CRLF in the file had made every row written after it CRLF in an LF file.
    path = tmp_path / "k.md"
    original = DEVLOG.replace("Design notes with trailing spaces.  \t\n", "Pasted.\r\n")
    path.write_bytes(original.encode())
    update_devlog(path, [ROW, PerfRow(version="v9", point="b=1 s=1 t=1", time=1.0)])
    after = path.read_bytes()
    assert after.count(b"\r\n") == 1
    assert [r.version for r in read_performance(path)] == ["v1", "v1", "v9"]


def test_a_devlog_without_the_section_gets_one_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "k.md"
    path.write_text("# k\n\nNotes.", encoding="utf-8")
    update_devlog(path, [ROW])
    assert path.read_text(encoding="utf-8") == (
        "# k\n\nNotes.\n\n## Performance\n\n### v1\n\n" + HEADER + "\n"
        "|---------|-------|------|---------|------|----------|-----|------|\n"
        + ROW.render()
        + "\n"
    )


def test_a_missing_devlog_is_created(tmp_path: Path) -> None:
    path = tmp_path / "docs" / "kernels" / "mla_decode.md"
    update = update_devlog(path, [ROW])
    assert update.created and path.read_text(encoding="utf-8").startswith(
        "# mla_decode\n\n## Performance\n"
    )
    assert read_performance(path) == [ROW]


def test_a_version_heading_without_a_table_gets_one(tmp_path: Path) -> None:
    path = tmp_path / "k.md"
    path.write_text("## Performance\n### v1\nProse right under the heading.\n", encoding="utf-8")
    update_devlog(path, [ROW])
    text = path.read_text(encoding="utf-8")
    assert text.endswith(ROW.render() + "\n\nProse right under the heading.\n")
    assert read_performance(path) == [ROW]


def test_foreign_tables_and_open_fences_are_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "k.md"
    path.write_text("## Performance\n### v1\n| Point | Time |\n|---|---|\n", encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(FormatError) as caught:
        update_devlog(path, [ROW])
    assert caught.value.line == 3 and caught.value.section == "Performance"
    assert path.read_bytes() == before
    path.write_text("# k\n```\n## Performance\n", encoding="utf-8")
    with pytest.raises(FormatError, match="line 2"):
        update_devlog(path, [ROW])


def test_concurrent_writers_lose_no_row(tmp_path: Path) -> None:
    path = tmp_path / "k.md"
    rows = [
        PerfRow(version=f"v{i % 3}", point=f"b={i} s=1 t=4096", time=float(i + 1))
        for i in range(24)
    ]
    threads = [threading.Thread(target=update_devlog, args=(path, [row])) for row in rows]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(read_performance(path), key=lambda r: r.time) == rows


@settings(max_examples=60)
@given(perf_rows)
def test_rows_round_trip_through_the_table(row: PerfRow) -> None:
    text = (
        "## Performance\n\n### " + row.version + "\n\n" + HEADER + "\n|---|\n" + row.render() + "\n"
    )
    assert parse_performance(text) == [row]


def test_rows_from_bench_rows() -> None:
    row = anchor_row("splits8", samples=0)
    [plain] = perf_rows_from_bench([row], version="v2")
    assert (
        plain.point == "b=32 s=1 t=4096 h=16" and plain.tflop_s is None and plain.floor_pct == 53.8
    )
    [rated] = perf_rows_from_bench([row], version="v2", ceilings=H200)
    # 9.89 % of 693.7 TFLOP/s and 53.8 % of 4.25 TB/s: the anchors' 68.6 TFLOP/s and 2286 GB/s.
    assert rated.tflop_s == pytest.approx(68.6, rel=2e-3)
    assert rated.gb_s == pytest.approx(2286.45, rel=2e-3)
    assert rated.date == "2026-12-02" and rated.gpu == "NVIDIA H200"
    stated = bench_row("v", 10.0, metrics={"flop_per_s": 2e12, "bytes_per_s": 3e11}, floor=4.0)
    [own] = perf_rows_from_bench([stated])
    assert (own.version, own.tflop_s, own.gb_s, own.floor_pct) == ("v", 2.0, 300.0, 40.0)
    other = Ceilings(gpu="X", copy_bytes_per_s=1e12, matmul_flop_per_s=1e12)
    with pytest.raises(InputError, match="ridge"):
        perf_rows_from_bench([row], ceilings=other)


def test_row_from_a_profile() -> None:
    report = ProfileReport(
        kernel="mla_decode",
        version="v2",
        point={"b": 32, "s": 1, "t": 4096, "h": 16},
        stages=[
            Stage(
                name="all",
                duration=66.53,
                tc_pct=9.89,
                dram_pct=53.8,
                key_issue="54% of roofline floor",
            )
        ],
        bottleneck=Bottleneck.MEMORY,
        root_cause="r",
    )
    row = perf_row_from_profile(report, gpu="NVIDIA H200", date="2026-12-02", ceilings=H200)
    assert (row.version, row.point, row.time, row.unit, row.floor_pct) == (
        "v2",
        "b=32 s=1 t=4096 h=16",
        66.53,
        "us",
        54.0,
    )
    assert row.gb_s == pytest.approx(2286.4, rel=1e-3)
    two = ProfileReport(
        kernel="k",
        version="v",
        point={"b": 1, "s": 1, "t": 1},
        stages=[Stage(name="a", duration=1.0, unit="ms"), Stage(name="b", duration=500.0)],
        bottleneck=Bottleneck.LATENCY,
        root_cause="r",
    )
    summed = perf_row_from_profile(two, floor_pct=10.0)
    assert (summed.time, summed.unit, summed.tflop_s, summed.floor_pct) == (1.5, "ms", None, 10.0)
    with pytest.raises(InputError, match="stage"):
        perf_row_from_profile(
            ProfileReport(
                kernel="k",
                version="v",
                point={"b": 1, "s": 1, "t": 1},
                stages=[],
                bottleneck="Memory-bound",
                root_cause="r",
            )
        )


def test_points_are_spelled_one_way() -> None:
    assert (
        PerfRow(version="v", point="h=16, t=4096 b=32 s=1", time=1).point == "b=32 s=1 t=4096 h=16"
    )
    assert PerfRow(version="v", point="decode  point", time=1).point == "decode point"
    with pytest.raises(InputError, match="cell"):
        PerfRow(version="v|2", point="p", time=1)


def test_rows_from_bench_rows_take_the_point_their_benchmark_named() -> None:
    # benchmarks/mla_decode.py names each point and keeps display entries in the config.
    config = {"b": 128, "s_q": 1, "h_q": 16, "t_max": 5094, "t_mean": 4096.375, "page": 64}
    named = bench_row("seesaw", 155.0, config=config | {"point": "b=128 s=1 h=16 t~4096"})
    [row] = perf_rows_from_bench([named])
    assert row.point == "b=128 s=1 t=~4096 h=16"  # the devlog's spelling, b s t first
    [plain] = perf_rows_from_bench([bench_row("seesaw", 155.0, config=config)])
    assert plain.point == "b=128 h_q=16 page=64 s_q=1 t_max=5094 t_mean=4096.375"


@pytest.mark.parametrize("time", ["66.53 µs", "66.53 μs", "66.53us", "66.53 usec"])
def test_a_time_in_microseconds_reads_however_it_is_spelled(time: str) -> None:
    # The devlog is written by people too, and kernelopt's own evidence rows write "µs".
    text = DEVLOG.replace("99.3 us", time)
    first = parse_performance(text)[0]
    assert (first.time, first.unit) == (66.53, "us")


@pytest.mark.parametrize(("unit", "seconds"), [("µs", 66.53e-6), ("sec", 66.53), ("ns", 66.53e-9)])
def test_a_profile_stage_in_any_time_unit_gives_its_row(unit: str, seconds: float) -> None:
    report = ProfileReport(
        kernel="k",
        version="v",
        point={"b": 1, "s": 1, "t": 1},
        stages=[Stage(name="all", duration=66.53, unit=unit)],
        bottleneck=Bottleneck.MEMORY,
        root_cause="r",
    )
    row = perf_row_from_profile(report, date="2026-12-02")
    assert row.time * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[row.unit] == pytest.approx(
        seconds
    )


def test_a_profile_stage_not_timed_in_seconds_is_refused() -> None:
    # 41 cycles summed as 41 us would be a row of made-up time.
    report = ProfileReport(
        kernel="k",
        version="v",
        point={"b": 1, "s": 1, "t": 1},
        stages=[Stage(name="a", duration=1.0), Stage(name="b", duration=41.0, unit="cycles")],
        bottleneck=Bottleneck.LATENCY,
        root_cause="r",
    )
    with pytest.raises(InputError, match="cycles"):
        perf_row_from_profile(report)


def test_a_row_without_a_timestamp_has_no_date() -> None:
    # The Date column is the measurement's; today's date would be a guess.
    row = attrs.evolve(bench_row("v2", 66.53), timestamp="")
    assert perf_rows_from_bench([row])[0].date == ""


def test_a_long_time_is_written_out_not_in_exponent_form() -> None:
    # A 69.9 ms interpreter call in us was written "6.993e+04 us", as LEARN no longer does.
    row = PerfRow(version="v2", point="b=4 n=4096", time=69932.79, unit="us", gpu="cpu")
    assert row.cells()[2] == "69933 us"
    assert PerfRow(version="v1", point="b=4", time=6498.89, unit="us").cells()[2] == "6499 us"
    text = "## Performance\n\n### v2\n\n" + HEADER + "\n|---|\n" + row.render() + "\n"
    assert parse_performance(text)[0].time == 69933.0


@pytest.mark.parametrize(
    ("mark", "codec"),
    [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")],
)
def test_a_utf16_devlog_stays_utf16(tmp_path: Path, mark: bytes, codec: str) -> None:
    # PowerShell's `>` saves UTF-16 with a byte-order mark; rewriting it as UTF-8 would
    # change every byte of a file the user keeps, not just the row.
    path = tmp_path / "mla_decode.md"
    path.write_bytes(mark + DEVLOG.encode(codec))
    update_devlog(path, [ROW])
    data = path.read_bytes()
    assert data.startswith(mark)
    after = data[len(mark) :].decode(codec)
    assert changed_lines(DEVLOG, after)[0][2] == [ROW.render() + "\n"]


def test_a_row_of_another_gpu_is_kept_beside_the_new_one(tmp_path: Path) -> None:
    # The H100 row of v1 at the point had been replaced by the H200 one: a measurement
    # the user kept in the table was gone without a word.
    path = tmp_path / "mla_decode.md"
    path.write_bytes(DEVLOG.replace("NVIDIA H200", "NVIDIA H100").encode())
    update = update_devlog(path, [ROW])
    assert update.added == (ROW,) and not update.replaced
    rows = read_performance(path)
    assert [(r.point, r.gpu) for r in rows if r.version == "v1"] == [
        ("b=32 s=1 t=4096 h=16", "NVIDIA H100"),
        ("b=32 s=16 t=4096 h=16", "NVIDIA H100"),
        ("b=32 s=1 t=4096 h=16", "NVIDIA H200"),
    ]
    again = attrs.evolve(ROW, time=40.0)
    assert update_devlog(path, [again]).replaced == (again,)
    assert [r.time for r in read_performance(path) if r.gpu == "NVIDIA H200"] == [40.0]


def test_a_read_only_devlog_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    # The atomic rename needs only the folder: a devlog its owner made read-only was
    # replaced all the same.
    path = tmp_path / "mla_decode.md"
    path.write_bytes(DEVLOG.encode())
    path.chmod(0o444)
    wanted = r"^path: Expected a devlog file that may be written, got .*read-only \(mode 444\)$"
    with pytest.raises(InputError, match=wanted):
        update_devlog(path, [ROW])
    assert path.read_bytes() == DEVLOG.encode()
    # Nothing to change is no write: reading a read-only devlog through an update is fine.
    [same] = [r for r in read_performance(path) if r.point == "b=32 s=16 t=4096 h=16"]
    assert update_devlog(path, [same]).replaced == (same,)


def test_a_bench_row_without_a_time_is_named() -> None:
    # "PerfRow.time: Expected a finite time > 0, got 0.0" did not say which row of the file.
    untimed = attrs.evolve(bench_row("v2", 1.0), median=0.0, p20=0.0, p80=0.0, n=0)
    with pytest.raises(
        InputError,
        match=r"^rows: Expected rows with a median time > 0, got 0.0 for v2 at b=32 s=1 t=4096 ",
    ):
        perf_rows_from_bench([bench_row("v2", 50.0), untimed])


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        (
            "| | a note | 1 us | - | - | - | - | - |",
            "Version: Expected a non-empty cell other than '-', not ending in '#', got ''",
        ),
        ("| v2 | b=1 | 0 us | - | - | - | - | - |", "Time: Expected a finite time > 0, got 0.0"),
        ("| v2 | b=1 | fast | - | - | - | - | - |", "Time: Expected a number and a unit"),
        (
            "| v2 | b=1 | 1 us | abc | - | - | - | - |",
            "TFLOP/s: Expected a number or '-', got 'abc'",
        ),
        ("| v2 | b=1 | 1 us | - | - | - | - | - | x |", "Expected a row of 8 cells"),
    ],
)
def test_a_hand_edited_row_that_does_not_read_names_its_column(cells: str, message: str) -> None:
    # The message had read "Expected a row of 8 cells (...), got PerfRow.version: Expected
    # a non-empty cell ...": two "Expected"s, a field name for a column, and for a word
    # in a number column Python's "could not convert string to float".
    text = f"## Performance\n### v2\n{HEADER}\n|---|---|---|---|---|---|---|---|\n{cells}\n"
    with pytest.raises(FormatError) as caught:
        parse_performance(text, path="k.md")
    shown = str(caught.value)
    assert shown.startswith(f"k.md:5 [Performance]: {message}")
    assert shown.count("Expected") == 1


def test_two_rows_of_one_point_are_refused_untouched(tmp_path: Path) -> None:
    # A merge that kept both sides' rows: the first was replaced and the second, older,
    # stayed after it, read back as the point's latest.
    path = tmp_path / "mla_decode.md"
    old = "| v1 | b=32 s=1 t=4096 h=16 | 99.3 us | - | - | - | NVIDIA H200 | 2026-12-01 |\n"
    text = DEVLOG.replace(old, old + old.replace("99.3", "98.1"))
    path.write_bytes(text.encode())
    with pytest.raises(FormatError) as caught:
        update_devlog(path, [ROW])
    assert str(caught.value).endswith(
        "Expected one row of v1 at b=32 s=1 t=4096 h=16 on NVIDIA H200 in its table, "
        "got rows at lines 18, 19"
    )
    assert caught.value.line == 19
    assert path.read_bytes() == text.encode()


def test_reading_a_folder_as_a_devlog_says_it_is_one(tmp_path: Path) -> None:
    # "no file at" would send the user looking for a path that is there.
    with pytest.raises(InputError, match=r"Expected a devlog file, got a directory at "):
        read_performance(tmp_path)
    with pytest.raises(InputError, match=r"Expected a devlog file, got no file at "):
        read_performance(tmp_path / "mla_decode.md")
