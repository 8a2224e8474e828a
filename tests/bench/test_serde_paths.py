"""Reading records: every field of every record the bench package reads is checked as its
declared type says, by one reader a type, and a refusal names the field and that type.

The expected refusals come from the field tables (``attrs.fields`` and the annotations)
through :func:`_refusal`, so a field added to a record is checked here as it is added, and
a check changed in the reader without the spec below (or the spec without the reader)
fails these tests.
"""

from __future__ import annotations

import json
import random
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.bench import (
    BenchRow,
    Ceilings,
    DeviceState,
    Measurement,
    _serde,
    append_rows,
    read_rows,
)

RECORDS: tuple[type, ...] = (BenchRow, Ceilings, Measurement, DeviceState)
# The least data each record reads from; every field is changed on top of it.
BASES: dict[type, dict[str, Any]] = {
    BenchRow: {"op": "copy", "impl": "a"},
    Ceilings: {"gpu": "g", "copy_bytes_per_s": 1.0, "matmul_flop_per_s": 2.0},
    Measurement: {"samples": [1.0, 2.0]},
    DeviceState: {"name": "NVIDIA H200"},
}
# One value of every JSON kind, and the ones a lax reader would convert: a bool for a
# number, a number for a bool, digits as text, an integer past the float range.
POOL: tuple[object, ...] = (
    "x",
    "66.5",
    7,
    0,
    1.5,
    True,
    False,
    None,
    10**400,
    [],
    [1.0, 2.0],
    [1.0, "2"],
    ["a", 3],
    "abc",
    {},
    {"k": 1.0},
    {"k": None},
    {"k": [1]},
    {"name": 5},
    {"name": "g", "extra": 1},
)


def _refusal(value: object, kind: Any) -> tuple[str, str, str] | None:
    """What reading ``value`` as ``kind`` must refuse, from the declared type alone.

    Returns the path below the field (``"[]"``, ``".k"``), what was expected and what
    came, or None where every type in ``value`` is the declared one (a validator may still
    refuse the value: that is the record's check, not the reader's).
    """
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(kind):
            return None
        for option in typing.get_args(kind):
            if option is not type(None) and _same_kind(value, option):
                return _refusal(value, option)
        return ("", f"a value of type {kind}", repr(value))
    if origin is tuple:
        if not isinstance(value, list):
            return ("", "a list", repr(value))
        return _first(("[]", _refusal(item, typing.get_args(kind)[0])) for item in value)
    if origin is dict:
        if not isinstance(value, dict):
            return ("", "an object", repr(value))
        item_kind = typing.get_args(kind)[1]
        return _first((f".{key}", _refusal(item, item_kind)) for key, item in value.items())
    if attrs.has(kind):
        if not isinstance(value, dict):
            return ("", "an object", repr(value))
        names = [field.name for field in attrs.fields(kind)]
        extra = sorted(set(value) - set(names))
        if extra:
            return ("", f"only the fields of {kind.__name__}", repr(extra))
        required = [f.name for f in attrs.fields(kind) if f.default is attrs.NOTHING]
        missing = sorted(name for name in required if name not in value)
        if missing:
            return ("", f"the required fields of {kind.__name__}", f"no {missing}")
        hints = typing.get_type_hints(kind)
        return _first((f".{name}", _refusal(item, hints[name])) for name, item in value.items())
    if not _same_kind(value, kind):
        return ("", f"a value of type {kind.__name__}", repr(value))
    if kind is float and isinstance(value, int) and abs(value) > 2**1024:
        return ("", "a number within the float range", f"{len(str(value))} digits")
    return None


def _same_kind(value: object, kind: Any) -> bool:
    """Whether ``value`` is of the JSON kind ``kind`` stands for (a bool is no number)."""
    if kind is bool or kind is str:
        return isinstance(value, kind)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if typing.get_origin(kind) is tuple:
        return isinstance(value, list)
    return isinstance(value, dict)  # a dict or a record


def _first(
    found: Iterable[tuple[str, tuple[str, str, str] | None]],
) -> tuple[str, str, str] | None:
    for step, inner in found:
        if inner is not None:
            return (step + inner[0], inner[1], inner[2])
    return None


def _message(where: str, refusal: tuple[str, str, str]) -> str:
    path, what, got = refusal
    return f"{where}{path}: Expected {what}, got {got}"


def _read(data: dict[str, Any], cls: type) -> tuple[object | None, str | None]:
    """The record read from ``data``, or the InputError message it raised."""
    try:
        return _serde.structure(data, cls), None
    except InputError as error:
        return None, str(error)


FIELDS = [(cls, field.name) for cls in RECORDS for field in attrs.fields(cls)]


@pytest.mark.parametrize(
    ("cls", "name"), FIELDS, ids=[f"{cls.__name__}.{name}" for cls, name in FIELDS]
)
def test_every_wrong_type_of_every_field_is_refused_naming_the_field(cls: type, name: str) -> None:
    hint = typing.get_type_hints(cls)[name]
    refused = 0
    for value in POOL:
        read, message = _read({**BASES[cls], name: value}, cls)
        refusal = _refusal(value, hint)
        if refusal is not None:
            assert message == _message(f"{cls.__name__}.{name}", refusal), value
            refused += 1
        elif message is not None:
            # Right types and a refused value: the record's own check, which names the
            # field in its own words, never as a wrong type of this field.
            assert not message.startswith(f"{cls.__name__}.{name}"), message
        else:
            assert getattr(read, name) == _expected_value(value, hint)
    assert refused >= 4  # the pool holds wrong kinds for every declared type


def _expected_value(value: object, kind: Any) -> object:
    """``value`` as a record holds it: lists as tuples, numbers of a float field as floats."""
    origin = typing.get_origin(kind)
    if value is None:
        return None
    if origin in (typing.Union, types.UnionType):
        option = next(o for o in typing.get_args(kind) if o is not type(None))
        return _expected_value(value, option) if _same_kind(value, option) else value
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_expected_value(v, item) for v in typing.cast(list[object], value))
    if origin is dict:
        item = typing.get_args(kind)[1]
        items = typing.cast(dict[str, object], value).items()
        return {k: _expected_value(v, item) for k, v in items}
    if attrs.has(kind):
        return _serde.structure(value, kind)
    if kind is float:
        return float(typing.cast(float, value))
    return value


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__name__)
def test_unknown_and_missing_fields_are_named(cls: type) -> None:
    base = BASES[cls]
    assert _read({**base, "zz": 1, "aa": 2}, cls)[1] == (
        f"{cls.__name__}: Expected only the fields of {cls.__name__}, got ['aa', 'zz']"
    )
    required = sorted(f.name for f in attrs.fields(cls) if f.default is attrs.NOTHING)
    assert _read({}, cls)[1] == (
        f"{cls.__name__}: Expected the required fields of {cls.__name__}, got no {required}"
    )
    assert _read([base], cls)[1] == f"{cls.__name__}: Expected an object, got {[base]!r}"  # type: ignore[arg-type]


def _random_row(rng: random.Random) -> BenchRow:
    samples = sorted(rng.uniform(0.0, 100.0) for _ in range(rng.randrange(0, 6)))
    low, high = sorted(rng.uniform(0.0, 100.0) for _ in range(2))
    maybe = rng.random() < 0.5
    config_values: list[int | float | str | bool] = [
        rng.randrange(-(2**40), 2**40),
        rng.uniform(-1e6, 1e6),
        rng.choice(["fp16", "4x576", ""]),
        rng.random() < 0.5,
    ]
    return BenchRow(
        op=rng.choice(["copy", "mla_decode"]),
        impl=f"v{rng.randrange(10)}",
        config={f"k{i}": v for i, v in enumerate(rng.sample(config_values, rng.randrange(5)))},
        mode=rng.choice(["cold", "hot", "cpu"]),
        unit=rng.choice(["ns", "us", "ms", "s"]),
        n=len(samples) or rng.randrange(0, 1000),  # a row keeping samples counts them
        median=rng.uniform(low, high),
        p20=low,
        p80=high,
        iqr=high - low,
        min=rng.uniform(0.0, low),
        gpu=rng.choice(["", "NVIDIA H200"]),
        sm_clock_mhz=rng.randrange(2000) if maybe else None,
        mem_clock_mhz=None if maybe else rng.randrange(4000),
        clocks_moved=rng.random() < 0.5,
        throttle_reasons=tuple(rng.sample(["gpu_idle", "sw_power_cap", "hw_slowdown"], 2)),
        torch="2.5.0" if maybe else None,
        commit=None if maybe else "abc123",
        floor=rng.uniform(0.0, 10.0) if maybe else None,
        metrics={name: rng.uniform(0.0, 100.0) for name in rng.sample(["dram_pct", "tc_pct"], 1)},
        note=rng.choice(["", "b halved 32 -> 16"]),
        samples=tuple(samples),
    )


def test_generated_rows_read_back_as_written() -> None:
    rng = random.Random(20261206)
    for _ in range(300):
        row = _random_row(rng)
        back = _serde.structure(json.loads(json.dumps(_serde.unstructure(row))), BenchRow)
        assert back == row
        # 1 == 1.0 == True: equality alone would let a reader turn the one into the other.
        assert [type(v) for v in back.config.values()] == [type(v) for v in row.config.values()]


def test_one_field_changed_in_a_generated_row_is_read_as_its_type_says() -> None:
    rng = random.Random(7)
    hints = typing.get_type_hints(BenchRow)
    refused = 0
    for _ in range(1500):
        data = _serde.unstructure(_random_row(rng))
        name = rng.choice(sorted(hints))
        value = rng.choice(POOL)
        read, message = _read({**data, name: value}, BenchRow)
        refusal = _refusal(value, hints[name])
        if refusal is not None:
            assert message == _message(f"BenchRow.{name}", refusal), (name, value)
            refused += 1
        elif message is None:
            assert getattr(read, name) == _expected_value(value, hints[name])
        else:
            assert not message.startswith(f"BenchRow.{name}"), message
    assert refused > 500


def test_a_refusal_inside_a_nested_record_names_the_path() -> None:
    data = {**BASES[Measurement], "device": {"name": "g", "throttle_reasons": ["a", 1]}}
    assert _read(data, Measurement)[1] == (
        "Measurement.device.throttle_reasons[]: Expected a value of type str, got 1"
    )
    assert _serde.structure({"name": "g"}, DeviceState) == DeviceState(name="g")
    with pytest.raises(InputError, match=r"^DeviceState\.index: Expected a value of type"):
        _serde.structure({"name": "g", "index": "0"}, DeviceState)


def test_read_rows_names_the_line_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    append_rows(path, [_random_row(random.Random(1)) for _ in range(3)])
    lines = path.read_text().splitlines()
    data = json.loads(lines[1])
    data["metrics"] = {"dram_pct": "80"}
    lines[1] = json.dumps(data)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError) as error:
        read_rows(path)
    assert str(error.value) == (
        f"{path}:2: BenchRow.metrics.dram_pct: Expected a value of type float, got '80'"
    )
