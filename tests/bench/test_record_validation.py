"""Every field of a Measurement and a BenchRow that says how a time was taken is checked when
the record is made: ``overhead``, ``warmup_calls`` and ``settled`` of a Measurement, and a
row's ``mode``, ``backend``, ``cache`` and ``n`` (against the samples it keeps) took any
value, which then went to a JSONL file as it was. The rows committed under
benchmarks/results still read back."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import attrs
import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.bench import BenchRow, Measurement, append_rows, read_rows

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
# buffers_overhead.py writes rows of its own, not BenchRows.
ROW_FILES = sorted(p for p in RESULTS.glob("*.jsonl") if p.name != "buffers_overhead.jsonl")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"overhead": -0.5}, "overhead: Expected a finite number >= 0 or None, got -0.5"),
        ({"overhead": float("nan")}, "overhead: Expected a finite number >= 0 or None, got nan"),
        ({"overhead": "2.0"}, "overhead: Expected a finite number >= 0 or None, got '2.0'"),
        ({"overhead": True}, "overhead: Expected a finite number >= 0 or None, got True"),
        ({"warmup_calls": -1}, "warmup_calls: Expected an integer >= 0, got -1"),
        ({"warmup_calls": 2.5}, "warmup_calls: Expected an integer >= 0, got 2.5"),
        ({"warmup_calls": "10"}, "warmup_calls: Expected an integer >= 0, got '10'"),
        ({"settled": 1}, "settled: Expected True, False or None, got 1"),
        ({"settled": "yes"}, "settled: Expected True, False or None, got 'yes'"),
    ],
    ids=repr,
)
def test_a_measurement_refuses_what_no_timing_gives(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError, match=f"^{message}$"):
        Measurement(samples=[1.0, 2.0], **fields)  # type: ignore[arg-type]


def test_a_measurement_takes_what_the_timer_gives() -> None:
    m = Measurement(samples=[1.0, 2.0], overhead=0.0, warmup_calls=0, settled=False)
    assert (m.overhead, m.warmup_calls, m.settled) == (0.0, 0, False)
    m = Measurement(samples=[1.0, 2.0], overhead=3.5, warmup_calls=120, settled=True)
    assert m.to_unit("ms").overhead == pytest.approx(0.0035)
    assert (
        Measurement(samples=[1.0]).settled is None and Measurement(samples=[1.0]).overhead is None
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"mode": "warm"}, "mode: Expected one of cold, hot, graph, cpu, host, got 'warm'"),
        ({"mode": ""}, "mode: Expected one of cold, hot, graph, cpu, host, got ''"),
        (
            {"backend": "cuda_events"},
            "backend: Expected one of cuda-events, cpu-perf-counter, host-perf-counter, got "
            "'cuda_events'",
        ),
        ({"cache": "flushed"}, "cache: Expected one of flush, rotate, none, got 'flushed'"),
        ({"cache": None}, "cache: Expected one of flush, rotate, none, got None"),
        (
            {"n": 5, "samples": (1.0, 2.0, 3.0)},
            "n: Expected n=3, the number of samples kept, got n=5",
        ),
        (
            {"samples": (1.0, 2.0, 3.0)},
            "n: Expected n=3, the number of samples kept, got n=0",
        ),
    ],
    ids=repr,
)
def test_a_row_refuses_a_field_no_timing_gives(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=f"^{message}$"):
        BenchRow(op="copy", impl="torch", **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "fields",
    [
        {"mode": "cpu", "backend": "cpu-perf-counter", "cache": "none"},
        {"mode": "host", "backend": "host-perf-counter", "cache": "none"},
        {"mode": "graph", "cache": "rotate"},
        {"n": 3, "samples": (1.0, 2.0, 3.0)},
        {"n": 15, "samples": ()},  # samples not kept: n counts those taken
    ],
    ids=repr,
)
def test_a_row_takes_every_way_rows_are_timed(fields: dict[str, object]) -> None:
    row = BenchRow(op="copy", impl="torch", **fields)  # type: ignore[arg-type]
    assert attrs.asdict(row).items() >= fields.items()


def test_a_line_with_a_count_its_samples_deny_is_refused_naming_file_and_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rows.jsonl"
    append_rows(path, [BenchRow(op="copy", impl="a", n=2, samples=(1.0, 2.0))])
    line = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(
        path.read_text(encoding="utf-8") + json.dumps({**line, "n": 3}) + "\n", encoding="utf-8"
    )
    with pytest.raises((FormatError, InputError), match=r"rows\.jsonl:2.*n=2, the number"):
        read_rows(path)


def test_a_line_with_a_mode_no_reader_knows_is_refused_naming_file_and_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(
        json.dumps({"op": "copy", "impl": "a", "mode": "Cold"}) + "\n", encoding="utf-8"
    )
    with pytest.raises((FormatError, InputError), match=r"rows\.jsonl:1.*mode: Expected one of"):
        read_rows(path)


@pytest.mark.parametrize("path", ROW_FILES, ids=lambda p: p.name)
def test_every_committed_row_still_reads_back(path: Path) -> None:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = read_rows(path)
    assert len(rows) == len(lines) > 0
    for row in rows:  # and each row is made again from its own fields
        assert BenchRow(**attrs.asdict(row, recurse=False)) == row
