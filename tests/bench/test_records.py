"""Records: JSONL rows and the canonical experiment result written from measurements."""

from __future__ import annotations

import json
import re
from pathlib import Path

import attrs
import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.bench import (
    BenchRow,
    Ceilings,
    Comparison,
    Cost,
    DeviceState,
    Measurement,
    Roofline,
    TrialPoint,
    Verdict,
    append_rows,
    environment,
    read_rows,
    row_from_measurement,
    to_result_row,
    write_experiment,
)
from kernelopt.experiments import ResultRow, parse_result

STATE = DeviceState(
    name="NVIDIA H200", sm_clock_mhz=1980, mem_clock_mhz=3201, throttle_reasons=("gpu_idle",)
)
M = Measurement(
    samples=[100.0, 102.0, 98.0, 101.0, 99.0],
    gpu="NVIDIA H200",
    device=STATE,
    notes=("one note",),
)


def test_row_from_measurement_carries_quantiles_clocks_and_versions() -> None:
    row = row_from_measurement(
        M, op="mla_decode", impl="split_kv", config={"b": 32, "s": 1}, floor=52.6, note="first"
    )
    assert (row.median, row.p20, row.p80, row.n) == (M.median, M.p20, M.p80, 5)
    assert (row.sm_clock_mhz, row.mem_clock_mhz) == (1980, 3201)
    assert row.throttle_reasons == ("gpu_idle",)
    assert row.gpu == "NVIDIA H200" and row.floor == 52.6
    assert row.note == "first; one note"
    assert row.torch == environment().torch and row.timestamp.endswith("+00:00")
    assert row.samples == ()
    assert row_from_measurement(M, op="x", impl="y", keep_samples=True).samples == M.samples


def test_jsonl_round_trip_appends(tmp_path: Path) -> None:
    path = tmp_path / "rows" / "bench.jsonl"
    first = row_from_measurement(M, op="copy", impl="a", config={"n": 1 << 30})
    second = row_from_measurement(M, op="copy", impl="b", metrics={"dram_pct": 81.5})
    append_rows(path, [first])
    append_rows(path, [second])
    assert read_rows(path) == [first, second]
    assert len(path.read_text().splitlines()) == 2
    assert json.loads(path.read_text().splitlines()[1])["metrics"] == {"dram_pct": 81.5}


def test_bad_lines_are_reported_with_their_number(tmp_path: Path) -> None:
    path = tmp_path / "bench.jsonl"
    good = json.dumps({"op": "copy", "impl": "a"})
    path.write_text(good + "\n\n{oops\n")
    with pytest.raises(FormatError, match=r"bench\.jsonl:3"):
        read_rows(path)
    path.write_text(good + "\n" + json.dumps({"op": "copy", "impl": "a", "speed": 3}) + "\n")
    with pytest.raises(FormatError, match=r"bench\.jsonl:2.*speed"):
        read_rows(path)
    path.write_text(good + "\n")
    assert read_rows(path) == [BenchRow(op="copy", impl="a")]


def test_to_result_row_converts_point_floor_and_speedup() -> None:
    line = Roofline(
        ceilings=Ceilings(gpu="g", copy_bytes_per_s=1e12, matmul_flop_per_s=1e15),
        cost=Cost(flops=0, bytes=5e7),
    )
    baseline = Measurement(samples=[200.0, 200.0, 200.0])
    row = to_result_row(
        M, point=TrialPoint(b=32, s=1, t=4096), impl="v2", floor=line, speedup=baseline
    )
    assert row.floor == pytest.approx(50.0)  # 5e7 B at 1e12 B/s
    assert row == ResultRow(
        point="b=32 s=1 t=4096",
        impl="v2",
        median=100.0,
        p20=M.p20,
        p80=M.p80,
        unit="us",
        floor=row.floor,
        speedup=2.0,
        mode="cold",
        bound="memory",
    )
    verdict = Comparison(
        verdict=Verdict.FAST, ratio=0.5, ratio_low=0.49, ratio_high=0.51, noise=0.01, threshold=0.01
    )
    assert to_result_row(M, point={"b": 1}, impl="x", speedup=verdict).speedup == 2.0
    assert to_result_row(M, point="p", impl="x", floor=10.0).floor == 10.0
    cpu = Measurement(samples=[1.0], backend="cpu-perf-counter")
    assert to_result_row(cpu, point="p", impl="x").mode == "cpu"


def test_write_experiment_is_the_canonical_result(tmp_path: Path) -> None:
    rows = [to_result_row(M, point="b=32 s=1 t=4096", impl="v2", floor=52.6)]
    record = write_experiment(
        tmp_path,
        experiment=3,
        title="split-KV with 8 splits",
        rows=rows,
        status="KEPT",
        correctness="PASS",
        correctness_detail="rel err 1.8e-03 vs float64",
        gpu=M,
        tags=["split-kv-flash-decoding"],
        knobs={"num_splits": 8},
        verdict="FAST 0.62x",
    )
    text = (tmp_path / "exp_3" / "result.md").read_text()
    assert parse_result(text) == record
    assert record.gpu == "NVIDIA H200" and record.knobs == {"num_splits": "8"}
    assert record.versions.get("torch") == environment().torch
    summary = (tmp_path / "summary.md").read_text()
    assert "| 3 |" in summary and "split-KV with 8 splits" in summary
    with pytest.raises(InputError, match="pass overwrite=True"):
        write_experiment(
            tmp_path, experiment=3, title="again", rows=rows, status="KEPT", correctness="PASS"
        )
    with pytest.raises(InputError, match="at least one ResultRow"):
        write_experiment(
            tmp_path, experiment=4, title="t", rows=[], status="KEPT", correctness="PASS"
        )


def test_write_experiment_keeps_a_lone_tag_whole_and_refuses_a_lone_row(tmp_path: Path) -> None:
    row = to_result_row(M, point="rows=64 n=1", impl="v7")
    record = write_experiment(
        tmp_path,
        experiment=1,
        title="n == 1 shortcut",
        rows=[row],
        status="KEPT",
        correctness="PASS",
        tags="size-1-axis-shortcut",  # one id, not its characters
    )
    assert record.tags == ("size-1-axis-shortcut",)
    assert "| size-1-axis-shortcut |" in (tmp_path / "summary.md").read_text()
    with pytest.raises(InputError, match=r"rows: Expected a sequence of ResultRow, got ResultRow"):
        write_experiment(
            tmp_path,
            experiment=2,
            title="t",
            rows=row,  # type: ignore[arg-type]
            status="KEPT",
            correctness="PASS",
        )


def test_environment_reads_versions_without_importing() -> None:
    env = environment()
    versions = env.versions()
    assert env.python.count(".") == 2
    assert set(versions) <= {"torch", "triton", "kernelopt", "commit"}
    if env.commit is not None:
        assert len(versions["commit"].removesuffix("-dirty")) == 12


def test_commit_says_dirty_when_tracked_files_changed(tmp_path: Path) -> None:
    import subprocess

    from kernelopt.bench.records import Environment, _commit

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "k.py").write_text("x = 1\n")
    git("add", "k.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "k")
    clean = _commit(tmp_path)
    assert clean is not None and len(clean) == 40
    (tmp_path / "notes.txt").write_text("untracked\n")
    assert _commit(tmp_path) == clean
    (tmp_path / "k.py").write_text("x = 2\n")
    assert _commit(tmp_path) == clean + "-dirty"
    assert Environment(python="3", commit=clean + "-dirty").versions()["commit"] == (
        clean[:12] + "-dirty"
    )


def test_a_row_that_would_not_read_back_is_refused_before_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    append_rows(path, [BenchRow(op="o", impl="a", config={"b": 32, "dtype": "bf16"}, median=1.0)])
    for bad in ({"shape": (1, 2)}, {"t": None}, {"ks": [1, 2]}, {"x": float("nan")}, {3: 1}):
        with pytest.raises(InputError, match="config"):
            BenchRow(op="o", impl="a", config=bad, median=1.0)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="Expected BenchRow rows, got dict"):
        append_rows(path, [{"op": "o"}])  # type: ignore[list-item]
    assert len(read_rows(path)) == 1  # the file still reads


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("median", "fast", "median: Expected a finite number >= 0, got 'fast'"),
        ("p80", float("nan"), "p80: Expected a finite number >= 0, got nan"),
        ("min", -1.0, "min: Expected a finite number >= 0, got -1.0"),
        ("n", 2.5, "n: Expected an integer >= 0, got 2.5"),
        ("floor", float("inf"), "floor: Expected a finite number > 0 or None, got inf"),
        ("metrics", {"dram_pct": "high"}, "metrics: Expected str keys to finite numbers"),
    ],
)
def test_a_number_field_holds_a_number(field: str, value: object, message: str) -> None:
    # Stored as given, such a value made a file that read_rows then refused as a whole.
    with pytest.raises(InputError, match=re.escape(message)):
        BenchRow(op="o", impl="a", **{field: value})  # type: ignore[arg-type]


def test_a_rows_file_that_is_not_utf8_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"op": "caf\xe9"}\n')
    with pytest.raises(FormatError, match="Expected a UTF-8 JSONL file of benchmark rows"):
        read_rows(path)


def test_write_experiment_and_devlog_refuse_what_they_cannot_write(tmp_path: Path) -> None:
    from kernelopt.bench import Measurement, launch_overhead_pct, write_experiment
    from kernelopt.workflow import update_devlog

    row = to_result_row(Measurement(samples=[1.0, 2.0]), point="b=1 s=1 t=8", impl="v")
    fate = {"status": "KEPT", "correctness": "PASS"}
    with pytest.raises(InputError, match="experiment: Expected an experiment number >= 0"):
        write_experiment(tmp_path, experiment=-1, title="t", rows=[row], **fate)
    with pytest.raises(InputError, match="rows: Expected ResultRow rows, got Measurement"):
        write_experiment(
            tmp_path, experiment=1, title="t", rows=[Measurement(samples=[1.0])], **fate
        )  # type: ignore[list-item]
    with pytest.raises(InputError, match="rows: Expected PerfRow rows, got dict"):
        update_devlog(tmp_path / "devlog.md", [{}])  # type: ignore[list-item]
    with pytest.raises(InputError, match="events: Expected a Measurement, got float"):
        launch_overhead_pct(10.0, 8.0)  # type: ignore[arg-type]


def test_numbers_and_nesting_json_allows_but_a_row_cannot_hold_are_format_errors(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"op": "o", "impl": "a", "median": ' + "9" * 400 + "}\n", encoding="utf-8")
    with pytest.raises(FormatError, match="median: Expected a number within the float range"):
        read_rows(path)
    path.write_text("[" * 10_000 + "]" * 10_000 + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match="nested too deep"):
        read_rows(path)


def test_an_append_to_a_file_without_a_final_newline_starts_a_new_line(tmp_path: Path) -> None:
    # A file saved by an editor that drops the last newline: the new row used to be glued
    # to the last one, and both (so the whole file) became unreadable.
    path = tmp_path / "rows.jsonl"
    first = BenchRow(op="o", impl="a", median=1.0)
    append_rows(path, [first])
    path.write_text(path.read_text().rstrip("\n"), encoding="utf-8")
    second = BenchRow(op="o", impl="b", median=2.0)
    append_rows(path, [second])
    assert read_rows(path) == [first, second]
    append_rows(tmp_path / "empty.jsonl", [])
    append_rows(tmp_path / "empty.jsonl", [first])
    assert (tmp_path / "empty.jsonl").read_text().count("\n") == 1


def test_a_rows_file_saved_with_a_byte_order_mark_reads_and_appends(tmp_path: Path) -> None:
    # Editors on Windows save UTF-8 with a BOM: the first line then read as no JSON.
    path = tmp_path / "rows.jsonl"
    first = BenchRow(op="o", impl="a", median=1.0)
    append_rows(path, [first])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert read_rows(path) == [first]
    second = BenchRow(op="o", impl="b", median=2.0)
    append_rows(path, [second])
    assert read_rows(path) == [first, second]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"op": 1}, "BenchRow.op: Expected a value of type str, got 1"),
        ({"sm_clock_mhz": 1.5}, "BenchRow.sm_clock_mhz: Expected a value of type int | None"),
        ({"note": None}, "BenchRow.note: Expected a value of type str, got None"),
        ({"gpu": 3}, "BenchRow.gpu: Expected a value of type str, got 3"),
        ({"mem_clock_mhz": float("nan")}, "Expected finite numbers (JSON has no NaN or inf)"),
    ],
)
def test_append_refuses_a_row_read_rows_would_refuse_and_keeps_the_file(
    tmp_path: Path, fields: dict[str, object], message: str
) -> None:
    path = tmp_path / "rows.jsonl"
    good = BenchRow(op="o", impl="a", median=1.0)
    append_rows(path, [good])
    before = path.read_text()
    # BenchRow refuses such fields when built: append_rows' own check is met by a row
    # built past them.
    with attrs.validators.disabled():
        bad = BenchRow(**{"op": "o", "impl": "a", **fields})  # type: ignore[arg-type]
    with pytest.raises(InputError, match=re.escape(message)):
        append_rows(path, [good, bad])
    assert path.read_text() == before and read_rows(path) == [good]


def test_a_row_of_a_call_that_moves_no_bytes_can_be_written(tmp_path: Path) -> None:
    # Its arithmetic intensity is infinite: RooflinePoint.metrics() says so, but a JSONL
    # row holds finite numbers; the row leaves it out instead of refusing the metrics.
    h200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.25e12, matmul_flop_per_s=694e12)
    line = Roofline(ceilings=h200, cost=Cost(flops=694e6, bytes=0))
    measured = Measurement(samples=[2.0, 2.0, 2.0])
    point = line.place(measured)
    assert point.metrics()["arith_intensity"] == float("inf")
    row = row_from_measurement(measured, op="o", impl="a", metrics=point.metrics())
    assert "arith_intensity" not in row.metrics
    assert row.metrics["tc_pct"] == pytest.approx(50.0) and row.metrics["floor_pct"] == 50.0
    append_rows(tmp_path / "rows.jsonl", [row])
    assert read_rows(tmp_path / "rows.jsonl") == [row]
    with pytest.raises(InputError, match="metrics: Expected str keys to finite numbers"):
        row_from_measurement(measured, op="o", impl="a", metrics={"dram_pct": float("nan")})


def test_an_experiment_written_by_bench_is_read_back_by_the_log_readers(tmp_path: Path) -> None:
    from kernelopt.experiments import Correctness, Status, read_log

    h200 = Ceilings(gpu="NVIDIA H200", copy_bytes_per_s=4.25e12, matmul_flop_per_s=694e12)
    line = Roofline(ceilings=h200, cost=Cost(flops=1e9, bytes=1e8))
    base = Measurement(samples=[100.0, 101.0, 103.0], gpu="NVIDIA H200")
    fast = Measurement(samples=[0.08, 0.081, 0.083], unit="ms", gpu="NVIDIA H200")
    point = TrialPoint(b=32, s=1, t=4096, extra={"h": 16})
    written = [
        write_experiment(
            tmp_path,
            experiment=0,
            title="eager baseline",
            rows=[to_result_row(base, point=point, impl="eager", floor=line)],
            status="BASELINE",
            correctness="PASS",
            gpu=base,
            tags=["split-kv-flash-decoding"],
        ),
        write_experiment(
            tmp_path,
            experiment=1,
            title="tiled loads",
            rows=[to_result_row(fast, point=point, impl="tiled", floor=line, speedup=base)],
            status="KEPT",
            correctness="PASS",
            correctness_detail="rel err 1e-03",
            knobs={"BLOCK_N": 64},
            notes="first line\n\nsecond line",
        ),
    ]
    for record in written:
        result = tmp_path / f"exp_{record.experiment}" / "result.md"
        assert parse_result(result.read_text(encoding="utf-8")) == record
    log = read_log(tmp_path)
    assert [e.number for e in log.experiments] == [0, 1]
    for experiment, record in zip(log.experiments, written, strict=True):
        head = record.rows[0]
        assert experiment.description == record.title
        assert (experiment.latency, experiment.unit) == (head.median, head.unit)
        assert experiment.speedup == head.speedup
        assert experiment.headline_point == head.point == "b=32 s=1 t=4096 h=16"
        assert experiment.correctness is Correctness.PASS
        assert experiment.knobs == record.knobs
    assert [e.status for e in log.experiments] == [Status.BASELINE, Status.KEPT]
    assert log.experiments[0].tags == ("split-kv-flash-decoding",)


@pytest.mark.parametrize("reasons", ["gpu_idle", ("gpu_idle", 3), ["gpu_idle"]])
def test_throttle_reasons_are_a_tuple_of_names(reasons) -> None:
    # A str would be written as one reason a character.
    with pytest.raises(InputError, match=r"throttle_reasons: Expected a tuple of str"):
        BenchRow(op="x", impl="y", throttle_reasons=reasons)


def test_an_experiment_written_again_keeps_one_summary_row(tmp_path: Path) -> None:
    rows = [ResultRow(point="b=32 s=1 t=4096", impl="k", median=50.0, unit="us")]
    common = dict(rows=rows, correctness="PASS", date="2026-12-05")
    write_experiment(tmp_path, experiment=3, title="first try", status="KEPT", **common)
    write_experiment(tmp_path, experiment=4, title="next", status="KEPT", **common)
    write_experiment(
        tmp_path, experiment=3, title="first try, rerun", status="REVERTED", overwrite=True,
        **common,
    )  # fmt: skip
    summary = (tmp_path / "summary.md").read_text()
    assert summary.count("| 3 |") == 1 and "first try, rerun" in summary
    assert summary.index("| 3 |") < summary.index("| 4 |")
    assert parse_result((tmp_path / "exp_3" / "result.md").read_text()).title == (
        "first try, rerun"
    )


RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
# buffers_overhead.jsonl holds that script's own rows, not BenchRows (its README says so).
BENCH_ROW_FILES = sorted(p for p in RESULTS.glob("*.jsonl") if p.name != "buffers_overhead.jsonl")


@pytest.mark.parametrize("path", BENCH_ROW_FILES, ids=lambda p: p.name)
def test_the_measured_rows_read_and_write_back_unchanged(path: Path, tmp_path: Path) -> None:
    rows = read_rows(path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) == len(lines) > 0
    copy = tmp_path / path.name
    append_rows(copy, rows)
    assert read_rows(copy) == rows
    # Written again, every row is the same JSON object as the one measured.
    assert [json.loads(line) for line in copy.read_text(encoding="utf-8").splitlines()] == lines


def test_the_buffer_overhead_rows_are_named_as_another_format() -> None:
    with pytest.raises(
        FormatError, match=r"buffers_overhead.jsonl:1: .*only the fields of BenchRow"
    ):
        read_rows(RESULTS / "buffers_overhead.jsonl")


@pytest.mark.parametrize(
    ("samples", "shown"),
    [("[NaN]", "nan"), ("[Infinity]", "inf"), ("[-1.5]", "-1.5"), ('["66.5"]', "'66.5'")],
)
def test_a_sample_no_timing_can_give_is_a_format_error(
    samples: str, shown: str, tmp_path: Path
) -> None:
    # json reads NaN and Infinity; a hand-edited or foreign line must not pass as a timing
    # that append_rows would then refuse to write again.
    path = tmp_path / "rows.jsonl"
    path.write_text('{"op": "copy", "impl": "torch", "samples": ' + samples + "}\n")
    with pytest.raises(FormatError, match=rf"rows.jsonl:1: .*samples.*{re.escape(shown)}"):
        read_rows(path)


def test_a_rows_samples_are_finite_non_negative_numbers() -> None:
    with pytest.raises(InputError, match=r"samples: Expected finite samples >= 0, got nan"):
        BenchRow(op="copy", impl="torch", samples=(1.0, float("nan")))
    with pytest.raises(InputError, match=r"samples: Expected numeric samples, got True"):
        BenchRow(op="copy", impl="torch", samples=(True,))  # type: ignore[arg-type]
    # A list is kept as the tuple read_rows gives back, so the two compare equal.
    assert BenchRow(op="copy", impl="torch", n=2, samples=[2, 1.5]).samples == (2.0, 1.5)  # type: ignore[arg-type]


def test_a_row_with_a_missing_or_unknown_field_names_it(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"impl": "torch"}\n')
    with pytest.raises(
        FormatError, match=r"rows.jsonl:1: .*required fields of BenchRow, got no \['op'\]"
    ):
        read_rows(path)
    path.write_text('{"op": "copy", "impl": "torch", "median_us": 3.0}\n')
    with pytest.raises(
        FormatError, match=r"rows.jsonl:1: .*only the fields of BenchRow, got \['median_us'\]"
    ):
        read_rows(path)


def test_a_speedup_against_a_time_of_zero_is_an_input_error() -> None:
    # It divided by zero; the host clock reads 0 us for a call under its resolution.
    zero = Measurement(samples=[0.0, 0.0, 0.0], backend="cpu-perf-counter")
    with pytest.raises(InputError, match=r"speedup: Expected a measurement with a median > 0"):
        to_result_row(zero, point="b=1 s=1 t=1", impl="v", speedup=M)
    with pytest.raises(InputError, match=r"speedup: Expected a number > 0, got 0.0"):
        to_result_row(M, point="b=1 s=1 t=1", impl="v", speedup=zero)


def test_a_result_row_shows_the_digits_a_timing_carries() -> None:
    # A host timing's median and a ratio of two of them come with every float digit; the
    # row result.md shows keeps six significant digits of a time and four of a speedup.
    measured = Measurement(
        samples=[192002.15720000002, 192002.15720000002, 200000.0], backend="cpu-perf-counter"
    )
    baseline = Measurement(samples=[28183.0, 28183.0, 28183.0], backend="cpu-perf-counter")
    row = to_result_row(
        measured, point="b=1 s=1 t=17", impl="v", floor=1234.56789, speedup=baseline
    )
    assert (row.median, row.floor, row.speedup) == (192002.0, 1234.57, 0.1468)
    assert "192002.15720000002" not in render_result_row_text(row)


def render_result_row_text(row: ResultRow) -> str:
    from kernelopt.experiments import ResultRecord, render_result

    record = ResultRecord(
        experiment=1, title="t", status="KEPT", correctness="PASS", date="2026-12-05", rows=(row,)
    )
    return render_result(record)


def test_a_row_made_after_an_edit_says_dirty_in_the_same_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A notebook times a kernel, edits its source, times it again: the second row must
    # not claim the clean commit that the first one read.
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "k.py").write_text("x = 1\n")
    git("add", "k.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "k")
    monkeypatch.chdir(tmp_path)
    m = Measurement(samples=[1.0, 2.0], backend="cpu-perf-counter")
    before = row_from_measurement(m, op="k", impl="v1")
    (tmp_path / "k.py").write_text("x = 2\n")
    after = row_from_measurement(m, op="k", impl="v2")
    assert before.commit is not None and not before.commit.endswith("-dirty")
    assert after.commit == before.commit + "-dirty"
    assert environment(tmp_path).commit == after.commit


def test_append_rows_given_one_row_says_it_wants_a_list(tmp_path: Path) -> None:
    # A lone row failed with "'BenchRow' object is not iterable".
    row = BenchRow(op="o", impl="a", median=1.0)
    with pytest.raises(InputError, match=r"rows: Expected a list of BenchRow, got BenchRow"):
        append_rows(tmp_path / "rows.jsonl", row)  # type: ignore[arg-type]
    assert not (tmp_path / "rows.jsonl").exists()


def test_a_version_that_fails_correctness_is_logged_without_timings(tmp_path: Path) -> None:
    from kernelopt.experiments import read_log

    record = write_experiment(
        tmp_path, experiment=2, title="bad", rows=[], status="REVERTED", correctness="FAIL",
        date="2026-12-05",
    )  # fmt: skip
    assert record.rows == ()
    written = parse_result((tmp_path / "exp_2" / "result.md").read_text())
    assert written.rows == () and written.correctness.value == "FAIL"
    row = next(
        line for line in (tmp_path / "summary.md").read_text().splitlines() if "| 2 |" in line
    )
    assert [cell.strip() for cell in row.strip("|").split("|")][3:7] == ["", "", "", "FAIL"]
    (experiment,) = read_log(tmp_path).experiments
    assert experiment.number == 2 and experiment.latency is None
    assert experiment.correctness is not None and experiment.correctness.value == "FAIL"


def test_an_experiment_that_did_not_run_is_logged_without_timings(tmp_path: Path) -> None:
    write_experiment(
        tmp_path, experiment=5, title="did not compile", rows=[], status="FAILED",
        correctness="UNKNOWN", date="2026-12-05",
    )  # fmt: skip
    assert parse_result((tmp_path / "exp_5" / "result.md").read_text()).rows == ()


def test_a_passing_experiment_still_needs_a_timing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="at least one ResultRow"):
        write_experiment(
            tmp_path, experiment=2, title="t", rows=[], status="KEPT", correctness="PASS"
        )
    assert not (tmp_path / "exp_2").exists()


def test_an_experiment_written_again_after_its_folder_went_is_refused(tmp_path: Path) -> None:
    import shutil

    rows = [ResultRow(point="b=32 s=1 t=4096", impl="k", median=50.0, unit="us")]
    common = dict(rows=rows, correctness="PASS", date="2026-12-05", status="KEPT")
    write_experiment(tmp_path, experiment=3, title="first try", **common)
    shutil.rmtree(tmp_path / "exp_3")
    before = (tmp_path / "summary.md").read_text()
    with pytest.raises(InputError, match=r"summary\.md row for experiment 3.*overwrite=True"):
        write_experiment(tmp_path, experiment=3, title="second try", **common)
    assert (tmp_path / "summary.md").read_text() == before
    assert not (tmp_path / "exp_3").exists()
    write_experiment(tmp_path, experiment=3, title="second try", overwrite=True, **common)
    summary = (tmp_path / "summary.md").read_text()
    assert summary.count("| 3 |") == 1 and "second try" in summary


def test_an_experiment_row_not_in_the_summary_leaves_the_summary_unread(tmp_path: Path) -> None:
    rows = [ResultRow(point="b=32 s=1 t=4096", impl="k", median=50.0, unit="us")]
    common = dict(rows=rows, correctness="PASS", date="2026-12-05", status="KEPT")
    # A summary holding exp 13 and a hand-written exp_1 row: neither is experiment 3.
    write_experiment(tmp_path, experiment=13, title="thirteen", **common)
    write_experiment(tmp_path, experiment=3, title="three", summary=False, **common)
    write_experiment(tmp_path, experiment=4, title="four", **common)
    assert "four" in (tmp_path / "summary.md").read_text()


def test_a_row_carries_the_commit_of_the_folder_it_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "k.py").write_text("x = 1\n")
    git("add", "k.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "k")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    elsewhere = tmp_path.parent
    monkeypatch.chdir(elsewhere)
    assert row_from_measurement(M, op="o", impl="i", directory=tmp_path).commit == head
    assert row_from_measurement(M, op="o", impl="i").commit == environment(elsewhere).commit
    record = write_experiment(
        tmp_path / "log", experiment=1, title="t", rows=[to_result_row(M, point="p", impl="i")],
        status="KEPT", correctness="PASS", directory=tmp_path,
    )  # fmt: skip
    assert record.versions["commit"] == head[:12]


def test_failed_versions_logged_without_timings_make_a_correctness_wall(tmp_path: Path) -> None:
    from kernelopt.diagnose import Pathology, diagnose

    timed = [ResultRow(point="b=32 s=1 t=4096", impl="k", median=60.0, unit="us")]
    write_experiment(
        tmp_path, experiment=1, title="baseline", rows=timed, status="BASELINE",
        correctness="PASS", date="2026-12-05",
    )  # fmt: skip
    for number, idea in enumerate(["swizzle the tiles", "fuse the merge", "pack fp8"], start=2):
        write_experiment(
            tmp_path, experiment=number, title=idea, rows=[], status="REVERTED",
            correctness="FAIL", correctness_detail="max abs err 0.4", date="2026-12-05",
        )  # fmt: skip
    wall = diagnose(tmp_path).finding(Pathology.CORRECTNESS_WALL)
    assert wall is not None and wall.experiments == (2, 3, 4)


def test_a_host_clock_timing_is_cpu_in_result_md_and_keeps_its_mode_in_the_jsonl(
    tmp_path: Path,
) -> None:
    from kernelopt.experiments import read_log

    host = Measurement(samples=[5.0, 6.0, 7.0], mode="graph", backend="cpu-perf-counter")
    bench = row_from_measurement(host, op="o", impl="k", keep_samples=True)
    assert (bench.mode, bench.backend, bench.host_clock) == ("graph", "cpu-perf-counter", True)
    # The row rebuilds the Measurement it was made of: Measurement has no "cpu" mode.
    assert Measurement(samples=bench.samples, mode=bench.mode, backend=bench.backend) == host
    result = to_result_row(host, point="b=1 s=1 t=64", impl="k")
    assert result.mode == "cpu"
    write_experiment(
        tmp_path, experiment=1, title="t", rows=[result], status="KEPT", correctness="PASS",
        date="2026-12-05",
    )  # fmt: skip
    assert "| cpu |" in (tmp_path / "exp_1" / "result.md").read_text()
    (experiment,) = read_log(tmp_path).experiments
    assert experiment.latency == 6.0
    assert not read_log(tmp_path).profiling  # the host clock times no kernel


def test_a_commit_asked_of_a_folder_that_is_not_there_is_an_input_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-checkout"
    with pytest.raises(InputError, match="no-such-checkout"):
        environment(missing)
    with pytest.raises(InputError, match="no-such-checkout"):
        row_from_measurement(M, op="o", impl="i", directory=missing)
    (tmp_path / "file.txt").write_text("x\n")
    with pytest.raises(InputError, match=r"file\.txt"):
        environment(tmp_path / "file.txt")


@pytest.mark.parametrize(
    "summary",
    ["# Experiments\n\nno table yet\n", "| id | change |\r\n|---|---|\r\n| 1 | x |\r\n"],
)
def test_an_experiment_the_summary_cannot_list_is_not_written(tmp_path: Path, summary: str) -> None:
    # result.md was written, then the row refused: an experiment no summary lists.
    rows = [ResultRow(point="b=32 s=1 t=4096", impl="k", median=50.0, unit="us")]
    common = dict(rows=rows, correctness="PASS", date="2026-12-05", status="KEPT")
    (tmp_path / "summary.md").write_bytes(summary.encode())
    with pytest.raises(FormatError, match=r"summary\.md(:\d+)? \[summary\]: Expected a table with"):
        write_experiment(tmp_path, experiment=3, title="first try", **common)
    assert (tmp_path / "summary.md").read_bytes() == summary.encode()
    assert not (tmp_path / "exp_3").exists()
    # Written again over a logged experiment whose summary lost its table: the old
    # result stays as it was.
    (tmp_path / "summary.md").unlink()
    write_experiment(tmp_path, experiment=3, title="first try", **common)
    result = (tmp_path / "exp_3" / "result.md").read_bytes()
    (tmp_path / "summary.md").write_bytes(summary.encode())
    with pytest.raises(FormatError, match="Expected a table with columns"):
        write_experiment(tmp_path, experiment=3, title="second try", overwrite=True, **common)
    assert (tmp_path / "exp_3" / "result.md").read_bytes() == result
    assert (tmp_path / "summary.md").read_bytes() == summary.encode()
    # A summary that is not text: the same.
    (tmp_path / "summary.md").write_bytes(b"| Exp |\xff\n")
    with pytest.raises(FormatError, match="Expected UTF-8 text"):
        write_experiment(tmp_path, experiment=3, title="second try", overwrite=True, **common)
    assert (tmp_path / "exp_3" / "result.md").read_bytes() == result
    # Without the summary row, the result alone is written as asked.
    write_experiment(tmp_path, experiment=4, title="no row", summary=False, **common)
    assert (tmp_path / "exp_4" / "result.md").is_file()


def test_rows_cut_short_by_a_full_disk_leave_the_rows_file_as_it_was(tmp_path: Path) -> None:
    # The write stopped inside a row (here at the file size limit, as on a full disk): the
    # half row left at the end made read_rows refuse every row of the file.
    import subprocess
    import sys

    path = tmp_path / "rows.jsonl"
    append_rows(path, [BenchRow(op="copy", impl="torch", median=1.0)])
    before = path.read_bytes()
    code = f"""
import resource
from kernelopt.bench import BenchRow, append_rows
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, ({len(before) + 100}, hard))
try:
    append_rows({str(path)!r}, [BenchRow(op="copy", impl="torch", note="x" * 400)])
except OSError as error:
    print(error.errno)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "27", done.stderr  # EFBIG: the write was cut short
    assert path.read_bytes() == before
    assert [row.op for row in read_rows(path)] == ["copy"]


def test_an_experiment_whose_summary_cannot_be_locked_is_not_written(tmp_path: Path) -> None:
    # The lock was taken only for the row, after result.md had been written.
    rows = [ResultRow(point="b=32 s=1 t=4096", impl="k", median=50.0, unit="us")]
    (tmp_path / "summary.md.lock").mkdir()
    with pytest.raises(InputError, match="Expected a lock file kernelopt may open"):
        write_experiment(
            tmp_path, experiment=3, title="t", rows=rows, status="KEPT", correctness="PASS"
        )
    assert not (tmp_path / "exp_3").exists()
