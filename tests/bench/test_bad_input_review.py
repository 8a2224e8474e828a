"""Wrong arguments to kernelopt.bench's helpers read as one ``Expected X, got Y`` line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import (
    Measurement,
    TrialPoint,
    check_written,
    evicting_bytes,
    measure,
    read_rows,
    row_from_measurement,
    to_result_row,
)

TIMING = Measurement(samples=[10.0, 11.0, 12.0], backend="cpu-perf-counter")


def test_check_written_refuses_a_launcher_that_is_not_callable() -> None:
    out = torch.zeros(3)
    with pytest.raises(InputError, match=r"^fn: Expected a callable writing the outputs, got int$"):
        check_written(5, out)  # type: ignore[arg-type]
    # Refused before the outputs were poisoned: the caller's buffer is as it was.
    assert torch.equal(out, torch.zeros(3))


@pytest.mark.parametrize(
    ("inputs", "got"),
    [
        (5, "int"),
        (torch.zeros(3), "Tensor"),
        ({"x": torch.zeros(3)}, "dict"),
        ("x", "str"),
        ([torch.zeros(3)], "Tensor"),
    ],
    ids=["number", "lone-tensor", "mapping", "string", "set-of-a-tensor"],
)
def test_evicting_bytes_refuses_what_measure_refuses(inputs: Any, got: str) -> None:
    message = rf"^inputs: Expected input sets as tuples or mappings, got {got}$"
    with pytest.raises(InputError, match=message):
        evicting_bytes(inputs)
    with pytest.raises(InputError, match=message):
        measure(lambda *args, **kwargs: None, inputs=inputs, max_time_ms=5)


def test_evicting_bytes_refuses_no_input_set() -> None:
    with pytest.raises(
        InputError, match=r"^inputs: Expected at least one input set, got an empty sequence$"
    ):
        evicting_bytes([])


def test_evicting_bytes_still_counts_sets_of_tensors() -> None:
    sets = [(torch.zeros(4),), (torch.zeros(4),)]
    assert evicting_bytes(sets) == (16, 0)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (None, r"^path: Expected a file path \(str or Path\), got None$"),
        (5, r"^path: Expected a file path \(str or Path\), got 5$"),
        ("", r"^path: Expected a file path, got an empty path$"),
    ],
    ids=["none", "number", "empty"],
)
def test_read_rows_refuses_what_is_no_path(path: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        read_rows(path)


def test_read_rows_still_takes_a_path(tmp_path: Path) -> None:
    target = tmp_path / "rows.jsonl"
    target.write_text("", encoding="utf-8")
    assert read_rows(target) == []
    assert read_rows(str(target)) == []


def test_row_from_measurement_refuses_what_is_no_measurement() -> None:
    with pytest.raises(InputError, match=r"^measurement: Expected a Measurement, got int$"):
        row_from_measurement(5, op="a", impl="b")  # type: ignore[arg-type]


@pytest.mark.parametrize(("point", "got"), [(5, "int"), ((32, 1), "tuple"), (1.5, "float")])
def test_to_result_row_refuses_a_point_of_another_type(point: object, got: str) -> None:
    with pytest.raises(
        InputError,
        match=rf"^point: Expected a trial point as a str, a mapping or a TrialPoint, got {got}$",
    ):
        to_result_row(TIMING, point=point, impl="v1")


def test_to_result_row_still_takes_each_documented_point() -> None:
    assert to_result_row(TIMING, point="b=32 s=1", impl="v1").point == "b=32 s=1"
    assert to_result_row(TIMING, point={"s": 1, "b": 32}, impl="v1").point == "b=32 s=1"
    trial_point = TrialPoint(b=32, s=1, t=4096)
    assert to_result_row(TIMING, point=trial_point, impl="v1").point == "b=32 s=1 t=4096"
