"""Wrong-type arguments to the timing, roofline and MLA scheduling API get ``Expected X, got Y``.

Each case hands one callable or record one wrong argument, the others valid, and expects an
InputError naming the argument (or a DeviceError where the machine lacks what the call
needs), raised before anything is called, timed or written.
"""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
import torch

from kernelopt._errors import DeviceError, InputError
from kernelopt.bench import (
    Ceilings,
    Cost,
    DeviceState,
    Measurement,
    Roofline,
    RooflinePoint,
    check_responds_to_inputs,
    check_timed_stream,
    clock_changes,
    load_ceilings,
    measure,
    mla_decode_cost,
    plot_roofline,
    read_device_state,
    roofline_layout,
)
from kernelopt.bench import device as device_module
from kernelopt.bench.roofline import save_ceilings
from kernelopt.kernels.mla import get_mla_metadata, mla_decode_flops
from kernelopt.kernels.mla.schedule import WorkUnit, build_schedule, plan_schedule

CEILINGS = Ceilings(gpu="g", copy_bytes_per_s=1e12, matmul_flop_per_s=1e14)
POINT = RooflinePoint(
    roofline=Roofline(ceilings=CEILINGS, cost=Cost(flops=1e9, bytes=1e6)), time_s=5e-5
)


def _refused(call: Callable[[], object], where: str) -> None:
    with pytest.raises(InputError, match=rf"{where}: Expected "):
        call()


# ------------------------------------------------------------------ device readings


def _state(sm: int = 1000) -> DeviceState:
    return DeviceState(name="g", sm_clock_mhz=sm)


@pytest.mark.parametrize("reading", [5, "x", {}])
def test_clock_changes_refuses_a_reading_that_is_no_device_state(reading: Any) -> None:
    _refused(lambda: clock_changes(reading, _state()), "before")
    _refused(lambda: clock_changes(_state(), reading), "after")


@pytest.mark.parametrize("tolerance", ["x", None, True, math.nan, math.inf, -0.1])
def test_clock_changes_refuses_a_tolerance_that_is_no_finite_number(tolerance: Any) -> None:
    _refused(lambda: clock_changes(_state(1000), _state(900), tolerance=tolerance), "tolerance")


def test_clock_changes_still_reads_steady_and_missing_states() -> None:
    assert clock_changes(None, None) == ()
    assert clock_changes(_state(1000), _state(990), tolerance=0) != ()


@pytest.mark.parametrize("reasons", [None, 5, "sw_power_cap", b"x", [5]])
def test_device_state_refuses_throttle_reasons_that_are_no_sequence_of_str(reasons: Any) -> None:
    _refused(lambda: DeviceState(name="g", throttle_reasons=reasons), "throttle_reasons")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", None),
        ("index", -1),
        ("index", True),
        ("sm_clock_mhz", 3.5),
        ("mem_clock_mhz", "1980"),
        ("temperature_c", True),
        ("power_w", math.nan),
        ("power_limit_w", "700"),
    ],
)
def test_device_state_refuses_fields_of_another_type(field: str, value: object) -> None:
    given: dict[str, Any] = {"name": "g", field: value}
    _refused(lambda: DeviceState(**given), field)


def test_device_state_takes_numpy_integers_and_integral_powers() -> None:
    state = DeviceState(name="g", sm_clock_mhz=np.int64(1980), power_w=500)
    assert state.sm_clock_mhz == 1980 and type(state.sm_clock_mhz) is int
    assert state.power_w == 500


@pytest.mark.parametrize(("index", "uuid"), [("0", None), (-1, None), (True, None), (0, 5)])
def test_read_device_state_refuses_wrong_arguments_with_or_without_nvml(
    index: Any, uuid: Any
) -> None:
    with pytest.raises(InputError, match="Expected "):
        read_device_state(index, uuid=uuid)


class _OddNVML(types.ModuleType):
    """A binding that hands back readings of unexpected types."""

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def __init__(self) -> None:
        super().__init__("pynvml")

    def nvmlInit(self) -> None:  # noqa: N802 - NVML names
        return None

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802 - NVML names
        return "handle"

    def nvmlDeviceGetName(self, handle: str) -> str:  # noqa: N802 - NVML names
        return "NVIDIA H200"

    def nvmlDeviceGetClockInfo(self, handle: str, kind: int) -> object:  # noqa: N802 - NVML names
        return 1980.0 if kind == 1 else "3201"

    def nvmlDeviceGetMaxClockInfo(self, handle: str, kind: int) -> int:  # noqa: N802 - NVML names
        return 1980

    def nvmlDeviceGetTemperature(self, handle: str, sensor: int) -> object:  # noqa: N802 - NVML names
        return None

    def nvmlDeviceGetPowerUsage(self, handle: str) -> float:  # noqa: N802 - NVML names
        return math.nan


@pytest.fixture
def odd_nvml(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(device_module, "_NVML_READY", [])
    monkeypatch.setitem(sys.modules, "pynvml", _OddNVML())
    yield


def test_read_device_state_keeps_only_integer_and_finite_readings(odd_nvml: None) -> None:
    state = read_device_state(0)
    assert state is not None
    assert (state.sm_clock_mhz, state.mem_clock_mhz, state.sm_clock_max_mhz) == (None, None, 1980)
    assert state.power_w is None


# ------------------------------------------------------------------ measurements


@pytest.mark.parametrize("notes", [None, 5, 3.5, b"x", object()])
def test_measurement_refuses_notes_that_are_no_str_or_sequence(notes: Any) -> None:
    _refused(lambda: Measurement(samples=[1.0, 2.0], notes=notes), "notes")


def test_measurement_still_takes_a_lone_note() -> None:
    assert Measurement(samples=[1.0], notes="one note").notes == ("one note",)


@pytest.mark.parametrize(
    ("field", "value"), [("label", 5), ("gpu", None), ("device", 5), ("device_after", "g")]
)
def test_measurement_refuses_fields_of_another_type(field: str, value: object) -> None:
    given: dict[str, Any] = {"samples": [1.0, 2.0], field: value}
    _refused(lambda: Measurement(**given), field)


@pytest.mark.parametrize("label", [object(), 5, None, b"x"])
def test_measure_refuses_a_label_before_calling_anything(label: Any) -> None:
    calls: list[int] = []
    with pytest.raises(InputError, match="label: Expected a str"):
        measure(lambda: calls.append(1), mode="hot", warmup_ms=1, max_time_ms=5, label=label)
    assert calls == []


# ------------------------------------------------------------------ guards


def test_check_responds_to_inputs_refuses_fn_that_is_no_callable() -> None:
    _refused(lambda: check_responds_to_inputs(None, [[torch.ones(3)], [torch.zeros(3)]]), "fn")


def test_check_timed_stream_refuses_fn_before_looking_for_a_device() -> None:
    _refused(lambda: check_timed_stream(5), "fn")  # type: ignore[arg-type]


# ------------------------------------------------------------------ MLA cost


@pytest.mark.parametrize("b", [None, {}, object(), True, 0, 2.0])
def test_mla_decode_cost_refuses_a_batch_that_is_no_positive_integer(b: Any) -> None:
    _refused(lambda: mla_decode_cost(b=b, s_q=1, h_q=16, seqlens=64), "b")


def test_mla_decode_flops_refuses_an_empty_sequence_of_lengths() -> None:
    _refused(lambda: mla_decode_flops([], s_q=1, h_q=16), "seqlens")
    assert mla_decode_flops(0, s_q=1, h_q=16) == 0  # one total of 0 keys stays a count


# ------------------------------------------------------------------ ceilings and roofline


@pytest.mark.parametrize("gpu", [[], {}, 5, None, b"g"])
def test_load_ceilings_refuses_a_gpu_name_that_is_no_str(gpu: Any, tmp_path: Path) -> None:
    _refused(lambda: load_ceilings(gpu, path=tmp_path / "c.json"), "gpu")


@pytest.mark.parametrize("path", [5, b"c.json", [], ""])
def test_the_ceilings_cache_refuses_a_path_that_is_no_path(
    path: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _refused(lambda: load_ceilings("g", path=path), "path")
    _refused(lambda: save_ceilings(CEILINGS, path=path), "path")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("gpu", None),
        ("gpu", 5),
        ("copy_bytes", "x"),
        ("copy_bytes", 1.07e9),
        ("copy_bytes", True),
        ("matmul_n", -1),
        ("measured_at", 5),
        ("torch", None),
        ("source", []),
    ],
)
def test_ceilings_refuse_fields_of_another_type(field: str, value: object) -> None:
    given: dict[str, Any] = {"gpu": "g", "copy_bytes_per_s": 1e12, "matmul_flop_per_s": 1e14}
    given[field] = value
    _refused(lambda: Ceilings(**given), field)


def test_ceilings_take_numpy_sizes_and_save_them(tmp_path: Path) -> None:
    ceilings = Ceilings(
        gpu="g", copy_bytes_per_s=1e12, matmul_flop_per_s=1e14, copy_bytes=np.int64(1 << 30)
    )
    assert ceilings.copy_bytes == 1 << 30 and type(ceilings.copy_bytes) is int
    save_ceilings(ceilings, path=tmp_path / "c.json")
    assert load_ceilings("g", path=tmp_path / "c.json") == ceilings


def test_cost_refuses_a_name_that_is_no_str() -> None:
    _refused(lambda: Cost(flops=1.0, bytes=1.0, name=5), "name")


@pytest.mark.parametrize("points", [5, "x", b"x", None, {"a": POINT}])
def test_roofline_layout_refuses_points_that_are_no_sequence(points: Any) -> None:
    _refused(lambda: roofline_layout(points), "points")


def test_roofline_layout_refuses_an_item_that_is_no_point() -> None:
    _refused(lambda: roofline_layout([POINT, 5]), r"points\[1\]")


@pytest.mark.parametrize(
    ("labels", "where"), [(5, "labels"), ("x", "labels"), ([5], r"labels\[0\]")]
)
def test_roofline_layout_refuses_labels_that_are_no_sequence_of_str(
    labels: Any, where: str
) -> None:
    _refused(lambda: roofline_layout([POINT], labels=labels), where)


def test_roofline_layout_still_names_the_points() -> None:
    assert roofline_layout([POINT], labels=("gemm",)).drawn[0][2].startswith("gemm ")
    assert roofline_layout((POINT,)).drawn[0][2].startswith("point 1 ")


def test_plot_roofline_without_matplotlib_is_a_device_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(DeviceError, match=r"Expected matplotlib to draw the roofline"):
        plot_roofline([POINT], tmp_path / "r.png")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("argument", "value"), [("path", 5), ("title", 5)])
def test_plot_roofline_refuses_a_path_or_title_of_another_type(
    argument: str, value: object, tmp_path: Path
) -> None:
    given: dict[str, Any] = {"path": tmp_path / "r.png", argument: value}
    _refused(lambda: plot_roofline([POINT], **given), argument)


# ------------------------------------------------------------------ MLA schedule


@pytest.mark.parametrize("seqlens", [None, 5, 3.5, b"x", "64", {64: 1}, {64}, object()])
def test_plan_schedule_refuses_lengths_that_are_no_sequence(seqlens: Any) -> None:
    _refused(lambda: plan_schedule(seqlens, block_n=32, m_tiles=1, num_slots=4), "seqlens")
    _refused(lambda: build_schedule(seqlens, 1, block_n=32), "seqlens")


@pytest.mark.parametrize("field", ["block_n", "m_tiles", "num_slots"])
@pytest.mark.parametrize("value", [None, "x", True, 3.5, math.nan, math.inf, 0])
def test_schedule_refuses_sizes_that_are_no_positive_integer(field: str, value: object) -> None:
    schedule = plan_schedule([64], block_n=32, m_tiles=1, num_slots=4)
    _refused(lambda: attrs.evolve(schedule, **{field: value}), field)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("batch", None),
        ("batch", -1),
        ("split", True),
        ("key_start", "0"),
        ("key_start", 1.0),
        ("key_end", math.inf),
    ],
)
def test_work_unit_refuses_fields_that_are_no_integer(field: str, value: object) -> None:
    given: dict[str, Any] = {"batch": 0, "split": 0, "key_start": 0, "key_end": 64}
    given[field] = value
    _refused(lambda: WorkUnit(**given), field)


def test_work_unit_refuses_an_empty_key_range() -> None:
    _refused(lambda: WorkUnit(batch=0, split=0, key_start=64, key_end=64), "key_end")


def test_work_unit_takes_numpy_integers() -> None:
    unit = WorkUnit(batch=np.int32(1), split=0, key_start=np.int64(0), key_end=64)
    assert unit.num_keys == 64


def test_pieces_are_dispatched_most_keys_first_then_by_sequence_and_piece() -> None:
    schedule = build_schedule([300, 64, 300], [3, 1, 2], block_n=64)
    assert [(u.batch, u.split, u.key_start, u.key_end) for u in schedule.units] == [
        (2, 1, 128, 300),
        (0, 1, 64, 192),
        (2, 0, 0, 128),
        (0, 2, 192, 300),
        (0, 0, 0, 64),
        (1, 0, 0, 64),
    ]


@pytest.mark.parametrize("heads", ["x", 0, True, 2.0])
def test_get_mla_metadata_refuses_num_heads_q_that_is_no_positive_integer(heads: Any) -> None:
    seqlens = torch.tensor([20, 7], dtype=torch.int32)
    _refused(lambda: get_mla_metadata(seqlens, 16, 1, num_heads_q=heads), "num_heads_q")


def test_get_mla_metadata_takes_num_heads_q() -> None:
    seqlens = torch.tensor([20, 7], dtype=torch.int32)
    meta, splits = get_mla_metadata(seqlens, 16, 1, num_heads_q=16)
    assert splits.shape == (3,) and meta.shape[1] == 4
