"""What docs/bench.md promises a user, walked as one: refusals made before a run, the
encoding a rows file is told it is in, times rescaled without a rounding slip, and
arguments named when refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernelopt import cli
from kernelopt._errors import FormatError, InputError
from kernelopt.bench import (
    Ceilings,
    Measurement,
    Roofline,
    Timer,
    append_rows,
    check_written,
    copy_cost,
    measure_ceilings,
    read_rows,
    row_from_measurement,
    to_result_row,
    tune,
    write_experiment,
)

_CUT_ROW = '{"op": "mla_decode", "impl": "split_kv", "med'


def _a_row_file(path: Path) -> bytes:
    """Write one whole row to ``path``; return the file's bytes."""
    row = row_from_measurement(Measurement(samples=[74.2, 74.0, 74.5]), op="mla", impl="v1")
    append_rows(path, [row])
    return path.read_bytes()


def _forbid_timing(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Make the MLA trial matrix record its calls and time nothing; return the calls."""
    import kernelopt.bench.mla

    calls: list[Any] = []

    def timed(points: Any) -> list[Any]:
        calls.append(points)
        return []

    monkeypatch.setattr(kernelopt.bench.mla, "mla_trial_matrix", timed)
    return calls


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "\ufeff".encode("utf-16-le") + b"{\x00}\x00\n\x00",
            "Expected a UTF-8 JSONL file of benchmark rows, got a UTF-16-LE file",
        ),
        (_CUT_ROW.encode(), ":1: Expected a whole row as the last line to append after"),
    ],
)
def test_bench_mla_refuses_an_out_file_it_cannot_append_to_before_timing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    content: bytes,
    message: str,
) -> None:
    # Found only when the rows were appended, such a file cost every row the run timed.
    out = tmp_path / "rows.jsonl"
    out.write_bytes(content)
    calls = _forbid_timing(monkeypatch)
    assert cli.main(["bench", "mla", "--trial-matrix", "--heads", "16", "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert calls == []
    assert out.read_bytes() == content


@pytest.mark.parametrize("existing", [True, False])
def test_bench_mla_times_with_an_out_file_it_can_append_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    out = tmp_path / "results" / "rows.jsonl"
    before = _a_row_file(out) if existing else None
    calls = _forbid_timing(monkeypatch)
    assert cli.main(["bench", "mla", "--trial-matrix", "--heads", "16", "--out", str(out)]) == 0
    assert len(calls) == 1
    if before is not None:
        assert out.read_bytes() == before


def test_read_rows_names_the_encoding_of_a_utf16_file(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"op": "a"}\n', encoding="utf-16")  # as PowerShell's > saves it
    with pytest.raises(FormatError, match=r"got a UTF-16-LE file .*; save it as UTF-8$"):
        read_rows(path)


def test_read_rows_still_names_the_first_byte_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\x89PNG\r\n")
    with pytest.raises(FormatError, match=r"got byte 0 not UTF-8$"):
        read_rows(path)


def test_to_unit_rescales_by_exact_powers_of_ten() -> None:
    # 1e-6 / 1e-9 is 999.9999999999999: 3 us read 2999.9999999999995 ns.
    m = Measurement(samples=[1.0, 3.0, 74.18], overhead=0.5)
    assert m.to_unit("ns").samples == (1000.0, 3000.0, 74180.0)
    assert m.to_unit("ns").overhead == 500.0
    assert Measurement(samples=[3.0], unit="ms").to_unit("us").samples == (3000.0,)
    assert Measurement(samples=[3.0], unit="s").to_unit("ns").samples == (3e9,)
    assert Measurement(samples=[5.0]).seconds == 5e-6


def test_the_roofline_rescales_by_exact_powers_of_ten() -> None:
    ceilings = Ceilings(gpu="g", copy_bytes_per_s=1e12, matmul_flop_per_s=1e15)
    line = Roofline(ceilings=ceilings, cost=copy_cost(3_500_000))  # 7 MB moved: 7 us
    assert line.floor("ns") == 7000.0  # not 6999.999999999999
    assert line.place(5.0).time_s == 5e-6  # not 4.9999999999999996e-06


@pytest.mark.parametrize("unit", [["us"], "sec"])
def test_a_unit_that_is_no_unit_of_time_is_refused_by_name(unit: Any) -> None:
    ceilings = Ceilings(gpu="g", copy_bytes_per_s=1e12, matmul_flop_per_s=1e15)
    line = Roofline(ceilings=ceilings, cost=copy_cost(1 << 20))
    message = r"^unit: Expected a unit in \('ns', 'us', 'ms', 's'\), got "
    for call in (
        lambda: Measurement(samples=[1.0]).to_unit(unit),
        lambda: line.floor(unit),
        lambda: line.place(1.0, unit=unit),
    ):
        with pytest.raises(InputError, match=message):
            call()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"status": "kept"}, "^status: Expected one of 'BASELINE'"),
        ({"correctness": "ok"}, "^correctness: Expected one of 'PASS'"),
    ],
)
def test_write_experiment_names_the_status_or_correctness_it_refuses(
    tmp_path: Path, option: dict[str, str], message: str
) -> None:
    row = to_result_row(Measurement(samples=[66.1, 66.5]), point="b=1 s=1 t=64", impl="v1")
    options = {"status": "KEPT", "correctness": "PASS", **option}
    with pytest.raises(InputError, match=message):
        write_experiment(tmp_path, experiment=1, title="t", rows=[row], **options)
    assert list(tmp_path.iterdir()) == []


def test_tune_refuses_a_start_with_a_key_of_another_type_by_name() -> None:
    built: list[Any] = []

    def build(config: Any) -> Any:
        built.append(config)
        return lambda: None

    with pytest.raises(InputError, match=r"^start: Expected a start config with knobs \['a'\]"):
        tune(build, {"a": [1, 2]}, start={1: 2, "a": 1}, timer=Timer(warmup_ms=1), budget_s=5)
    assert built == []


@pytest.mark.parametrize("refresh", [False, True])
def test_ceilings_under_a_file_are_refused_before_they_are_measured(
    fake_gpu: Any, tmp_path: Path, refresh: bool
) -> None:
    # Found when the result was saved: every second of the measurement was lost.
    gpu = fake_gpu()
    (tmp_path / "cache").write_text("a file, not a folder", encoding="utf-8")
    path = tmp_path / "cache" / "ceilings.json"
    message = r"Expected a ceilings cache file whose folder can be created, got .*, under the file"
    with pytest.raises(InputError, match=message):
        measure_ceilings(refresh=refresh, path=path, copy_bytes=1 << 20, matmul_n=256)
    assert gpu.clock_us == 0.0  # nothing ran on the device


def test_bench_ceilings_names_a_cache_folder_that_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cache").write_text("a file, not a folder", encoding="utf-8")
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path / "cache"))
    assert cli.main(["bench", "ceilings"]) == 2
    assert f"under the file {tmp_path / 'cache'}" in capsys.readouterr().err


@pytest.mark.parametrize("outputs", [[], (), {}, [[]]])
def test_check_written_refuses_outputs_that_hold_no_tensor(outputs: Any) -> None:
    # Nothing to poison passed every call: a kernel that wrote nothing passed the guard.
    calls: list[None] = []
    with pytest.raises(InputError, match=r"^outputs: Expected at least one output tensor"):
        check_written(lambda: calls.append(None), outputs)
    assert calls == []
