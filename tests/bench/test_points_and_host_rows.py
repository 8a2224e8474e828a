"""Trial points given numpy numbers, point values written between double quotes, rows timed
with the host clock, and the Measurement fields the timer fills in.

- numpy integers and floats in a point are the Python numbers they equal: spelled, compared
  and recorded as those, while a 0-d array is refused with how to pass it.
- A point's value with a space (``{"kv": "fp8 e4m3"}``), and a benchmark config's whole
  point kept under ``"point"``, is written ``kv="fp8 e4m3"`` and read back whole; text
  without a double quote reads as it did before.
- A row of ``benchmarks/mla_host_cost.py`` (mode ``host``, backend ``host-perf-counter``)
  is a host-clock row, which target judgments refuse as device time unless asked.
- ``warmup_time_ms``, ``stop_reason`` and ``clocks_moved`` of a Measurement are checked.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelopt._errors import InputError
from kernelopt.bench import (
    BenchRow,
    Measurement,
    TrialPoint,
    TrialResult,
    read_rows,
    to_result_row,
    trial_matrix,
    write_experiment,
)
from kernelopt.bench._stats import COMPARE_STOP_REASONS, STOP_REASONS
from kernelopt.bench.records import HOST_CLOCK_BACKENDS, HOST_CLOCK_MODES, point_text
from kernelopt.experiments import read_log
from kernelopt.experiments.points import (
    point_terms,
    point_words,
    points_differ,
    split_terms,
    term_text,
)
from kernelopt.workflow import Target, evaluate

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
# buffers_overhead.py writes rows of its own, not BenchRows.
BENCH_ROW_FILES = sorted(p for p in RESULTS.glob("*.jsonl") if p.name != "buffers_overhead.jsonl")
M = Measurement(samples=[10.0, 11.0, 12.0])


# --- numpy numbers in trial points -------------------------------------------------------


def test_a_point_of_numpy_integers_is_the_point_of_the_ints_they_equal() -> None:
    made = TrialPoint(b=np.int64(32), s=np.int32(1), t=np.uint16(4096), extra={"h": np.int8(16)})
    plain = TrialPoint(b=32, s=1, t=4096, extra={"h": 16})
    assert made == plain
    assert str(made) == str(plain) == "b=32 s=1 t=4096 h=16"
    assert all(type(value) is int for value in made.as_dict().values())
    assert type(made.with_b(np.int64(16)).b) is int


def test_a_trial_matrix_takes_numpy_axes_and_values() -> None:
    from_numpy = trial_matrix(axes={"h": np.array([128, 16]), "b": [np.int64(8)]})
    from_ints = trial_matrix(axes={"h": (128, 16), "b": (8,)})
    assert from_numpy == from_ints
    assert [str(p) for p in from_numpy] == [str(p) for p in from_ints]


def test_a_numpy_axis_listing_a_value_twice_is_refused_as_a_list_of_ints_is() -> None:
    with pytest.raises(InputError, match=r"^axes: Expected each value of axis 'h' once, got "):
        trial_matrix(axes={"h": np.array([16, 16])})
    with pytest.raises(InputError, match=r"a sequence of ints for axis 'h'"):
        trial_matrix(axes={"h": np.array([[16]])})


@pytest.mark.parametrize(
    ("field", "value", "got"),
    [
        ("b", np.array(32), r"got array\(32\) \(a 0-d array: pass int\(value\)\)$"),
        ("b", np.float64(32.0), r"got np\.float64\(32\.0\)$"),
        ("b", np.bool_(True), r"got np\.True_$"),
        ("h", np.array(16), r"got array\(16\) \(a 0-d array: pass int\(value\)\)$"),
    ],
    ids=repr,
)
def test_a_0d_array_a_float_and_a_numpy_bool_are_no_axis_value(
    field: str, value: object, got: str
) -> None:
    with pytest.raises(InputError, match=got):
        if field == "h":
            TrialPoint(b=1, s=1, t=1, extra={"h": value})
        else:
            TrialPoint(b=value, s=1, t=1)  # type: ignore[arg-type]


def test_a_mapping_point_of_numpy_numbers_is_written_as_its_python_numbers() -> None:
    numpy_point = {"b": np.int64(32), "s": np.int32(1), "ratio": np.float32(0.1)}
    python_point = {"b": 32, "s": 1, "ratio": float(np.float32(0.1))}
    assert point_text(numpy_point) == point_text(python_point)
    assert (
        to_result_row(M, point=numpy_point, impl="k").point
        == to_result_row(M, point=python_point, impl="k").point
    )


def test_a_trial_of_numpy_integers_gives_the_row_of_the_ints(tmp_path: Path) -> None:
    made = TrialPoint(b=np.int64(32), s=1, t=np.int64(4096), extra={"h": np.int64(16)})
    rows = [
        TrialResult(requested=point, point=point, impl="k", measurement=M).bench_row(
            op="copy", directory=tmp_path
        )
        for point in (made, TrialPoint(b=32, s=1, t=4096, extra={"h": 16}))
    ]
    assert json.dumps(rows[0].config) == json.dumps(rows[1].config)


def test_the_point_modules_import_no_numpy() -> None:
    code = (
        "import sys, kernelopt.bench.trials, kernelopt.experiments.points; "
        "print('numpy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# --- quoted point values -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ('b=32 kv="fp8 e4m3"', [("b", "=", "32"), ("kv", "=", "fp8 e4m3")]),
        ('(b=32, kv="(fp8)")', [("b", "=", "32"), ("kv", "=", "(fp8)")]),
        ('kv = "fp8 e4m3"', [("kv", "=", "fp8 e4m3")]),
        (r'note="say \"hi\"" c=1', [("note", "=", 'say "hi"'), ("c", "=", "1")]),
        (r'p="a\\b"', [("p", "=", "a\\b")]),
        ('t=4,096 kv="4,096"', [("t", "=", "4096"), ("kv", "=", "4,096")]),
        ('kv="fp8; e4m3" decode', [("kv", "=", "fp8; e4m3"), ("decode", "", "")]),
        ('kv="open', [("kv", "=", '"open')]),  # no closing quote: an ordinary character
    ],
    ids=repr,
)
def test_a_quoted_value_reads_whole_without_its_quotes(
    text: str, terms: list[tuple[str, str, str]]
) -> None:
    assert split_terms(text) == terms


def _split_before_quoting(text: str) -> list[tuple[str, str, str]]:
    """split_terms as it read every point before quoting was known."""
    grouped = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    words: list[str] = []
    for word in re.split(r"[,;\s]+", grouped):
        word = word.strip("()[]{}")
        if not word:
            continue
        if words and (words[-1].endswith("=") or word.startswith("=")):
            words[-1] += word
        else:
            words.append(word)
    return [re.sub(r"^(\w+)~", r"\1=~", word).partition("=") for word in words]


UNQUOTED_TEXT = st.text(
    alphabet=st.sampled_from(list("bst=~,; \t()[]{}0123456789_xk'")), max_size=40
)


@given(UNQUOTED_TEXT)
def test_text_without_a_double_quote_reads_as_before(text: str) -> None:
    assert split_terms(text) == _split_before_quoting(text)


@pytest.mark.parametrize(
    "text",
    [
        "b=32, s_q=1, t=4096, h_q=128",
        "b=32 s=1 t~4096 h=16 kv=fp8",
        "(b = 32; s=1) decode",
        "t=4,096 rows=4",
        "k= b=2",
        "decode  large",
    ],
)
def test_unquoted_points_keep_their_spelling_and_terms(text: str) -> None:
    assert split_terms(text) == _split_before_quoting(text)
    pairs = _split_before_quoting(text)
    if pairs and all(sep and key for key, sep, _ in pairs):
        values = {key: value for key, _, value in pairs}
        keys = [k for k in "bst" if k in values] + sorted(k for k in values if k not in "bst")
        assert point_words(text) == " ".join(f"{k}={values[k]}" for k in keys)
    else:
        assert point_words(text) == " ".join(text.split())


VALUES = st.text(alphabet=st.sampled_from(list('ab 1=~,;()[]{}"\\\t-.')), min_size=1, max_size=16)


@given(VALUES, VALUES)
def test_every_value_written_reads_back_as_written(first: str, second: str) -> None:
    point = {"b": 2, "kv": first, "note": second}
    assert split_terms(term_text("kv", first)) == [("kv", "=", first)]
    assert {key: value for key, _, value in split_terms(point_words(point))} == {
        "b": "2",
        "kv": first,
        "note": second,
    }
    # Text already quoted is spelled again the same way.
    assert point_words(point_words(point)) == point_words(point)


def test_a_value_with_a_space_is_written_quoted_and_read_back_from_the_log(
    tmp_path: Path,
) -> None:
    row = to_result_row(M, point={"b": 2, "kv": "fp8 e4m3"}, impl="k")
    assert row.point == 'b=2 kv="fp8 e4m3"'
    write_experiment(
        tmp_path, experiment=0, title="v0", rows=[row], status="BASELINE", correctness="PASS"
    )
    (experiment,) = read_log(tmp_path).experiments
    assert point_terms(experiment.headline_point) == {"b": "2", "kv": "fp8 e4m3"}
    other = to_result_row(M, point={"b": 2, "kv": "fp8 e5m2"}, impl="k").point
    assert points_differ(experiment.headline_point, other)


def test_an_axis_name_with_a_space_is_refused_saying_how_a_value_is_spelled() -> None:
    with pytest.raises(
        InputError,
        match=r"^point: Expected .*\('head_dim', not 'head dim'; a value with them is written "
        r"quoted: kv=\"fp8 e4m3\"\), got 'head dim': '576'$",
    ):
        to_result_row(M, point={"b": 2, "head dim": 576}, impl="k")


def test_a_committed_config_holding_its_point_keeps_it_whole() -> None:
    (row, *_) = read_rows(RESULTS / "mla_decode_h100.jsonl")
    stated = row.config["point"]
    assert isinstance(stated, str) and " " in stated
    text = point_text(row.config)
    assert f'point="{stated}"' in text
    assert {key: value for key, _, value in split_terms(text)} == {
        key: str(value) for key, value in row.config.items()
    }
    result = to_result_row(M, point=row.config, impl=row.impl)
    assert point_terms(result.point)["point"] == stated


# --- host-clock rows ---------------------------------------------------------------------


@pytest.mark.parametrize("path", BENCH_ROW_FILES, ids=lambda p: p.name)
def test_every_committed_rows_file_reads(path: Path) -> None:
    rows = read_rows(path)
    assert rows
    assert {row.backend for row in rows} <= {"cuda-events", *HOST_CLOCK_BACKENDS}


def test_the_host_time_rows_of_mla_host_cost_are_host_clock_rows() -> None:
    rows = read_rows(RESULTS / "mla_host_cost.jsonl")
    host = [row for row in rows if row.backend == "host-perf-counter"]
    assert host and all(row.mode == "host" and row.host_clock for row in host)
    assert not any(row.host_clock for row in rows if row.backend == "cuda-events")


@pytest.mark.parametrize(
    ("mode", "backend"),
    [
        ("host", "host-perf-counter"),
        ("hot", "host-perf-counter"),
        ("host", "cuda-events"),
        ("cpu", "cuda-events"),
        ("cold", "cpu-perf-counter"),
    ],
)
def test_a_host_clock_mode_or_backend_makes_a_host_clock_row(mode: str, backend: str) -> None:
    assert mode in HOST_CLOCK_MODES or backend in HOST_CLOCK_BACKENDS
    assert BenchRow(op="o", impl="i", mode=mode, backend=backend).host_clock


def test_a_device_timed_row_is_no_host_clock_row() -> None:
    for mode in ("cold", "hot", "graph"):
        assert not BenchRow(op="o", impl="i", mode=mode, backend="cuda-events").host_clock


def test_an_unknown_backend_is_refused_naming_the_ones_known() -> None:
    with pytest.raises(
        InputError,
        match=r"^backend: Expected one of cuda-events, cpu-perf-counter, host-perf-counter, "
        r"got 'wall-clock'$",
    ):
        BenchRow(op="o", impl="i", backend="wall-clock")


def test_a_target_refuses_host_time_rows_as_device_times() -> None:
    (row, *_) = (r for r in read_rows(RESULTS / "mla_host_cost.jsonl") if r.mode == "host")
    with pytest.raises(InputError, match=r"Expected GPU timings \(CUDA events\)"):
        evaluate(Target(median=1e9), [row])
    assert evaluate(Target(median=1e9), [row], allow_host_clock=True).met


# --- Measurement fields the timer fills in ------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("warmup_time_ms", -1.0, "warmup_time_ms: Expected a finite number >= 0, got -1.0"),
        ("warmup_time_ms", math.nan, "warmup_time_ms: Expected a finite number >= 0, got nan"),
        ("warmup_time_ms", math.inf, "warmup_time_ms: Expected a finite number >= 0, got inf"),
        ("warmup_time_ms", "12", "warmup_time_ms: Expected a finite number >= 0, got '12'"),
        ("warmup_time_ms", True, "warmup_time_ms: Expected a finite number >= 0, got True"),
        ("clocks_moved", 0, "clocks_moved: Expected True or False, got 0"),
        ("clocks_moved", "no", "clocks_moved: Expected True or False, got 'no'"),
        ("clocks_moved", None, "clocks_moved: Expected True or False, got None"),
        (
            "stop_reason",
            "precison",
            "stop_reason: Expected one of 'precision', 'max_samples', 'time_cap', 'decided', "
            "'cap' or '' (none), got 'precison'",
        ),
        (
            "stop_reason",
            None,
            "stop_reason: Expected one of 'precision', 'max_samples', 'time_cap', 'decided', "
            "'cap' or '' (none), got None",
        ),
    ],
    ids=repr,
)
def test_a_field_the_timer_fills_in_is_checked(field: str, value: object, message: str) -> None:
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        Measurement(samples=[1.0], **{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("reason", ["", *STOP_REASONS, *COMPARE_STOP_REASONS])
def test_every_stop_reason_written_is_taken(reason: str) -> None:
    assert Measurement(samples=[1.0], stop_reason=reason).stop_reason == reason


@pytest.mark.parametrize("warmup", [0.0, 0, 312.5, np.float64(2.5)], ids=repr)
def test_a_finite_warmup_time_of_zero_or_more_is_taken(warmup: float) -> None:
    assert Measurement(samples=[1.0], warmup_time_ms=warmup, clocks_moved=True).clocks_moved
