"""Axis names a written point reads back as themselves, and rows that can be written once built.

- A :class:`TrialPoint`'s ``extra`` names were checked for spaces and ``=`` alone: ``h,q``,
  ``h;q``, ``(h)``, ``h"q`` and ``h~q`` were taken, and the point's spelling then read back
  (``split_terms``, ``point_terms``) as other axes than the ones timed. They are refused by
  the one rule a mapping point of a result row is held to (``axis_name_reads_back``), as
  are b, s and t's other names (``s_q``, ``t_max``) and two names of one axis.
- A :class:`BenchRow` left fields unchecked that :func:`read_rows` checks strictly:
  ``clocks_moved=0``, a ``None`` op or note, a clock of 1980.0 MHz were built and refused
  only when :func:`append_rows` wrote them (a ``bytes`` version or a ``np.float32`` median
  failed there as no JSON at all). They are refused, or taken as the Python numbers they
  equal, when the row is built.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from kernelopt._errors import InputError
from kernelopt.bench import (
    BenchRow,
    Measurement,
    TrialPoint,
    append_rows,
    read_rows,
    records,
    to_result_row,
    trial_matrix,
)
from kernelopt.experiments.points import point_terms, split_terms

# Names that the point's spelling reads back as something else, with what it reads.
BROKEN_NAMES = ["h,q", "h;q", "(h)", "[h", 'h"q', "h~q", "h q", "h=q", "h\tq", ""]
# Names the old check let through, each read back as other axes.
ONCE_TAKEN = ["h,q", "h;q", "(h)", "[h", 'h"q', "h~q"]
KEPT_NAMES = ["h", "h_q", "kv_splits", "num-heads", "d.v", "page64"]
M = Measurement(samples=[10.0, 11.0, 12.0])
# An int of more digits than Python turns into text: json.dumps fails on it.
HUGE = 10**5000
TOO_LONG = f"integers of at most {sys.get_int_max_str_digits()} digits, got one of about 5001"


@pytest.mark.parametrize("name", ONCE_TAKEN)
def test_the_names_once_taken_read_back_as_other_axes(name: str) -> None:
    # Why they are refused: the label b=32 s=1 t=4096 <name>=16 kv="fp8 e4m3" does not
    # read back as its terms (a quote in a name pairs with the quotes of a later value).
    terms = point_terms(f'b=32 s=1 t=4096 {name}=16 kv="fp8 e4m3"')
    assert terms != {"b": "32", "s": "1", "t": "4096", name: "16", "kv": "fp8 e4m3"}


@pytest.mark.parametrize("name", BROKEN_NAMES)
def test_a_trial_point_refuses_an_axis_name_that_would_not_read_back(name: str) -> None:
    message = (
        "extra: Expected axis names that read back as written: not empty, without spaces, "
        "commas, semicolons, brackets, double quotes, '=' or '~' ('num_heads', not "
        f"'num heads'), got {name!r}"
    )
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        TrialPoint(b=32, s=1, t=4096, extra={name: 16})
    with pytest.raises(InputError, match=r"^extra: Expected axis names that read back"):
        trial_matrix(axes={name: (16,)})


@pytest.mark.parametrize("name", BROKEN_NAMES + KEPT_NAMES)
def test_a_trial_point_and_a_result_row_hold_axis_names_to_one_rule(name: str) -> None:
    reads_back = records.axis_name_reads_back(name)
    assert reads_back == (name in KEPT_NAMES)
    for make in (
        lambda: TrialPoint(b=32, s=1, t=4096, extra={name: 16}),
        lambda: to_result_row(M, point={"b": 32, name: 16}, impl="k"),
    ):
        if reads_back:
            make()
        else:
            with pytest.raises(InputError, match=re.escape(records.AXIS_NAME_CANNOT_HOLD)):
                make()


@pytest.mark.parametrize("name", KEPT_NAMES)
def test_a_name_taken_reads_back_as_itself(name: str) -> None:
    point = TrialPoint(b=32, s=1, t=4096, extra={name: 16})
    assert (name, "=", "16") in split_terms(str(point))
    row = to_result_row(M, point=point, impl="k")
    assert (name, "=", "16") in split_terms(row.point)


@pytest.mark.parametrize("name", ["s_q", "t_max"])
def test_another_name_of_the_points_own_fields_is_refused(name: str) -> None:
    # "b=32 s=1 t=4096 s_q=16" reads, through point_terms, as s=16: not the point timed.
    assert point_terms(f"b=32 s=1 t=4096 {name}=16")[name[0]] == "16"
    with pytest.raises(
        InputError,
        match=r"^extra: Expected extra axes other than b, s and t or their other names "
        rf"s_q, t_max \(set those fields\), got {name}$",
    ):
        TrialPoint(b=32, s=1, t=4096, extra={name: 16})


def test_two_names_of_one_axis_are_refused() -> None:
    # h=16 and h_q=128 read, through point_terms, as one axis h: one value is lost.
    assert point_terms("b=32 s=1 t=4096 h=16 h_q=128") == {
        "b": "32",
        "s": "1",
        "t": "4096",
        "h": "128",
    }
    message = "extra: Expected each axis once (h and h_q name one axis), got 'h' and 'h_q'"
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        TrialPoint(b=32, s=1, t=4096, extra={"h": 16, "h_q": 128})
    with pytest.raises(InputError, match=re.escape("got 'h' and 'h_q'")):
        trial_matrix(extra_points=[TrialPoint(b=8, s=1, t=64, extra={"h": 16})], axes={"h_q": (8,)})
    assert str(TrialPoint(b=32, s=1, t=4096, extra={"h_q": 128})) == "b=32 s=1 t=4096 h_q=128"


# -- BenchRow: refused when built, not when written ---------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("clocks_moved", 0, "clocks_moved: Expected True or False, got 0"),
        ("clocks_moved", "no", "clocks_moved: Expected True or False, got 'no'"),
        ("clocks_moved", None, "clocks_moved: Expected True or False, got None"),
        ("op", None, "op: Expected a str, got None"),
        ("impl", 5, "impl: Expected a str, got 5"),
        ("gpu", None, "gpu: Expected a str, got None"),
        ("timestamp", None, "timestamp: Expected a str, got None"),
        ("note", None, "note: Expected a str, got None"),
        ("torch", 2, "torch: Expected a str or None, got 2"),
        ("triton", b"3.6.0", "triton: Expected a str or None, got b'3.6.0'"),
        ("commit", 1, "commit: Expected a str or None, got 1"),
        ("sm_clock_mhz", 1980.0, "sm_clock_mhz: Expected an int (MHz) or None, got 1980.0"),
        ("mem_clock_mhz", True, "mem_clock_mhz: Expected an int (MHz) or None, got True"),
        ("n", HUGE, f"n: Expected {TOO_LONG}"),
        ("sm_clock_mhz", HUGE, f"sm_clock_mhz: Expected {TOO_LONG}"),
        ("config", {"b": HUGE}, f"config['b']: Expected {TOO_LONG}"),
        ("metrics", {"dram_pct": 10**400}, "metrics: Expected str keys to finite numbers"),
    ],
    # str() of HUGE, as a test id would take it, is what Python refuses.
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_row_that_could_not_be_written_is_refused_when_built(
    field: str, value: object, message: str
) -> None:
    fields: dict[str, object] = {"op": "o", "impl": "a", "median": 1.0, field: value}
    with pytest.raises(InputError, match=f"^{re.escape(message)}"):
        BenchRow(**fields)  # type: ignore[arg-type]


def test_numpy_times_are_the_python_floats_json_writes(tmp_path: Path) -> None:
    # A np.float32 median passed every check and failed append_rows as no JSON.
    row = BenchRow(
        op="o",
        impl="a",
        median=np.float32(2.5),
        p20=np.float32(2.0),
        p80=np.float64(3.0),
        iqr=np.float32(1.0),
        min=np.float32(1.5),
        floor=np.float32(1.25),
    )
    times = [getattr(row, name) for name in ("median", "p20", "p80", "iqr", "min", "floor")]
    assert all(isinstance(time, float) for time in times)  # np.float64 is a float
    assert (row.median, row.floor) == (2.5, 1.25)
    path = append_rows(tmp_path / "rows.jsonl", [row])
    assert read_rows(path) == [row]


def test_every_field_at_a_value_read_rows_takes_is_written_and_read_back(tmp_path: Path) -> None:
    row = BenchRow(
        op="mla_decode",
        impl="split_kv",
        config={"b": 32, "kv": "fp8 e4m3", "ratio": 0.5, "varlen": False},
        n=3,
        median=11.0,
        p20=10.5,
        p80=11.5,
        iqr=1.0,
        min=10.0,
        gpu="NVIDIA H200",
        sm_clock_mhz=1980,
        mem_clock_mhz=3201,
        clocks_moved=True,
        throttle_reasons=("sw_power_cap",),
        torch="2.11.0+cu130",
        triton="3.6.0",
        commit="5cf3dc74ba63",
        timestamp="2026-12-03T09:56:09+00:00",
        floor=9.0,
        metrics={"dram_pct": 80.0, "tc_pct": 3},
        note="b halved 64 -> 32 after CUDA OOM",
        samples=(10.0, 11.0, 12.0),
    )
    path = append_rows(tmp_path / "rows.jsonl", [row])
    assert read_rows(path) == [row]
