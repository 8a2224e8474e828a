"""Serialization: the private cattrs converter, and the fallback used where cattrs is absent."""

from __future__ import annotations

import json

import pytest

from kernelopt._errors import InputError
from kernelopt.bench import _serde
from kernelopt.bench.device import DeviceState
from kernelopt.bench.measurement import Measurement
from kernelopt.bench.records import BenchRow
from kernelopt.bench.roofline import Ceilings

ROW = BenchRow(
    op="copy",
    impl="torch",
    config={"b": 32, "scale": 0.5, "layout": "paged", "causal": True},
    n=3,
    median=1.5,
    p20=1.0,
    p80=2.0,
    throttle_reasons=("gpu_idle",),
    metrics={"dram_pct": 80.0},
    samples=(1.0, 1.5, 2.0),
)
MEASUREMENT = Measurement(
    samples=[1.0, 2.0],
    device=DeviceState(
        name="NVIDIA H200",
        sm_clock_mhz=1980,
        power_instant_w=698.5,
        power_limit_w=700.0,
        throttle_reasons=("sw_power_cap",),
    ),
    warmup_time_ms=312.5,
    settled=True,
    notes=("a", "b"),
)
RECORDS = [ROW, MEASUREMENT, Ceilings(gpu="g", copy_bytes_per_s=1.0, matmul_flop_per_s=2.0)]


@pytest.fixture
def without_cattrs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_serde, "_converter", lambda: None)


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_round_trip_through_json(record: object) -> None:
    data = _serde.unstructure(record)
    assert _serde.structure(json.loads(json.dumps(data)), type(record)) == record


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_fallback_writes_what_cattrs_writes(
    record: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_cattrs = _serde.unstructure(record)
    monkeypatch.setattr(_serde, "_converter", lambda: None)
    assert _serde.unstructure(record) == with_cattrs
    assert _serde.structure(json.loads(json.dumps(with_cattrs)), type(record)) == record


def test_config_values_keep_their_types() -> None:
    back = _serde.structure(json.loads(json.dumps(_serde.unstructure(ROW))), BenchRow)
    assert [type(v) for v in back.config.values()] == [int, float, str, bool]


@pytest.mark.parametrize("cattrs_present", [True, False])
def test_unknown_keys_and_wrong_types_are_refused(
    cattrs_present: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not cattrs_present:
        monkeypatch.setattr(_serde, "_converter", lambda: None)
    data = _serde.unstructure(ROW)
    with pytest.raises(InputError, match="extra"):
        _serde.structure({**data, "extra": 1}, BenchRow)
    with pytest.raises(InputError, match="BenchRow"):
        _serde.structure({**data, "n": "three"}, BenchRow)
    with pytest.raises(InputError):
        _serde.structure({**data, "config": {"b": [1, 2]}}, BenchRow)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("clocks_moved", "no"),  # cattrs would read True
        ("sm_clock_mhz", 1.9),  # cattrs would read 1
        ("n", 3.7),
        ("median", "66.5"),
        ("throttle_reasons", "abc"),  # cattrs would read ('a', 'b', 'c')
    ],
)
def test_reading_refuses_what_it_would_have_to_convert(field: str, value: object) -> None:
    data = {**_serde.unstructure(ROW), field: value}
    with pytest.raises(InputError, match=field):
        _serde.structure(data, BenchRow)
