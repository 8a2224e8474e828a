"""Every reader of JSON or JSONL turns valid but hostile JSON into kernelopt's own error.

``json.loads`` lets out more than ``JSONDecodeError``: a ``ValueError`` for an integer longer
than ``int()`` converts (4300 digits by default) and a ``RecursionError`` for nesting deeper
than the interpreter follows. ``1e999``, ``NaN`` and ``Infinity`` load as floats that are
not finite. Each reader below gets each of them in one number field of a file it otherwise
reads, and must name what was wrong (and where: the file, the line of a JSONL file); the
tolerant readers skip the record with a note instead of raising.
"""

from __future__ import annotations

import functools
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import FormatError, InputError, KernelOptError
from kernelopt.bench import load_ceilings, read_rows
from kernelopt.catalog import Catalog, entry_from_json, entry_to_dict
from kernelopt.diagnose import diagnose, diagnosis_from_json, diagnosis_to_dict
from kernelopt.experiments import read_log
from kernelopt.workload import (
    parse_profile_md,
    profile_from_json,
    profile_to_json,
    profile_trace,
    read_flashinfer,
    read_jsonl,
    read_profile_md,
    read_torch_trace,
    read_trace,
    render_profile_md,
)

DATA = Path(__file__).resolve().parent / "workload" / "data"
HEALTHY_LOG = Path(__file__).resolve().parents[1] / "examples" / "logs" / "healthy-run"

HOSTILE = {
    "5000-digit integer": "1" + "0" * 4999,
    "nested 100000 deep": "[" * 100_000 + "]" * 100_000,
    "1e999": "1e999",
    "NaN": "NaN",
    "Infinity": "Infinity",
}
DIGITS = (
    f"Expected integers of at most {sys.get_int_max_str_digits()} digits, got one of 5000 digits"
)
TOO_DEEP = "Expected JSON nested less deeply, got structures too deep to read"
# What a field holding each literal reads as, in messages.
SHOWN = {"1e999": "inf", "NaN": "nan", "Infinity": "inf"}

# A stand-in string put where the hostile literal goes, then replaced in the JSON text.
MARK = "@@hostile@@"


def _put(data: Any, literal: str, **dump: Any) -> str:
    """``data`` as JSON text with the string MARK replaced by ``literal`` itself."""
    text = json.dumps(data, **dump)
    assert text.count(json.dumps(MARK)) == 1
    return text.replace(json.dumps(MARK), literal)


def _raised(error: type[KernelOptError], call: Callable[[], Any]) -> KernelOptError:
    with pytest.raises(error) as caught:
        call()
    return caught.value


# --- the files each reader reads, with one number field left to the hostile literal ----


def bench_rows(tmp_path: Path, literal: str) -> tuple[Path, str]:
    path = tmp_path / "rows.jsonl"
    good = json.dumps({"op": "copy", "impl": "a", "median": 1.0})
    path.write_text(good + "\n" + _put({"op": "copy", "impl": "b", "median": MARK}, literal))
    return path, f"{path}:2: "


def ceilings_cache(tmp_path: Path, literal: str) -> Path:
    path = tmp_path / "ceilings.json"
    entry = {"gpu": "G", "copy_bytes_per_s": MARK, "matmul_flop_per_s": 1e12}
    path.write_text(_put({"format": 1, "devices": {"G": entry}}, literal))
    return path


@functools.cache
def _entry() -> dict[str, Any]:
    data = (entry_to_dict(entry) for entry in Catalog.builtin())
    return next(d for d in data if any(t["comparisons"] for t in d["triggers"]))


def entry_text(literal: str) -> str:
    data = json.loads(json.dumps(_entry()))
    trigger = next(t for t in data["triggers"] if t["comparisons"])
    trigger["comparisons"][0]["value"] = MARK
    return _put(data, literal, indent=2)


@functools.cache
def _profile() -> Any:
    return profile_trace(DATA / "mla_decode_calls.jsonl")


def profile_text(literal: str) -> str:
    data = json.loads(profile_to_json(_profile()))
    data["profile"]["ops"][0]["time_us"] = MARK
    return _put(data, literal, indent=2)


def profile_md(literal: str) -> tuple[str, int]:
    """A workload_profile.md whose first shape row gives its axes as a JSON cell, and the
    number of that line."""
    lines = render_profile_md(_profile()).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| 1 | "))
    cells = lines[at].split(" | ")
    cells[5] = '{"b": ' + literal + "}"
    lines[at] = " | ".join(cells)
    return "\n".join(lines) + "\n", at + 1


def call_trace(tmp_path: Path, literal: str) -> Path:
    first = (DATA / "mla_decode_calls.jsonl").read_text().splitlines()[0]
    record = json.loads(first)
    record["duration_us"] = MARK
    path = tmp_path / "calls.jsonl"
    path.write_text(first + "\n" + _put(record, literal) + "\n")
    return path


def torch_trace(tmp_path: Path, literal: str) -> Path:
    events = json.loads((DATA / "sdpa_one_key_cpu.json").read_text())
    event = next(
        e
        for e in events["traceEvents"]
        if e.get("ph") == "X" and e.get("name") == "aten::scaled_dot_product_attention"
    )
    event["dur"] = MARK
    path = tmp_path / "trace.json"
    path.write_text(_put(events, literal, indent=1))
    return path


def flashinfer_lines(tmp_path: Path, literal: str) -> Path:
    root = tmp_path / "dataset"
    shutil.copytree(DATA / "flashinfer", root)
    path = next((root / "workloads").rglob("*.jsonl"))
    lines = path.read_text().splitlines()
    record = json.loads(lines[0])
    record["workload"]["inputs"]["sm_scale"]["value"] = MARK
    lines[0] = _put(record, literal)
    path.write_text("\n".join(lines) + "\n")
    return path


def flashinfer_bundle(tmp_path: Path, literal: str) -> Path:
    bundle = json.loads((DATA / "flashinfer" / "bundle.json").read_text())
    bundle["workloads"][0]["workload"]["axes"]["batch_size"] = MARK
    path = tmp_path / "bundle.json"
    path.write_text(_put(bundle, literal, indent=1))
    return path


@functools.cache
def _diagnosis() -> str:
    return json.dumps(diagnosis_to_dict(diagnose(HEALTHY_LOG)))


def diagnosis_text(literal: str) -> str:
    data = json.loads(_diagnosis())
    data["summary"]["experiments"] = MARK
    return _put(data, literal, indent=2)


def history(tmp_path: Path, literal: str, suffix: str) -> str:
    """What read_log makes of a history file: its unread reasons and the latencies read."""
    records = [
        {"exp": 1, "description": "base", "latency_us": 10},
        {"exp": 2, "description": "tiles", "latency_us": MARK},
    ]
    if suffix == "jsonl":
        text = json.dumps(records[0]) + "\n" + _put(records[1], literal) + "\n"
    else:
        text = _put({"log": records}, literal, indent=1)
    (tmp_path / f"history.{suffix}").write_text(text)
    log = read_log(tmp_path, catalog=())
    reasons = [f"{u.path}: {u.reason}" for u in log.unread]
    return f"unread {reasons}; latencies {[e.latency for e in log.experiments]}"


# --- the readers: each returns the message or note that must name the problem ----------


def _note(notes: tuple[str, ...], start: str) -> str:
    found = [note for note in notes if note.startswith(start)]
    assert found, notes
    return found[0]


def read_rows_case(tmp_path: Path, literal: str, kind: str) -> str:
    path, where = bench_rows(tmp_path, literal)
    message = str(_raised(FormatError, lambda: read_rows(path)))
    assert message.startswith(where)
    return message


def load_ceilings_case(tmp_path: Path, literal: str, kind: str) -> str:
    path = ceilings_cache(tmp_path, literal)
    message = str(_raised(FormatError, lambda: load_ceilings("G", path=path)))
    assert message.startswith(str(path))
    return message


def entry_from_json_case(tmp_path: Path, literal: str, kind: str) -> str:
    # A number out of the entry's range is an InputError, as entry_from_dict raises;
    # text that cannot be read as JSON at all is a FormatError.
    error = InputError if kind in SHOWN else FormatError
    return str(_raised(error, lambda: entry_from_json(entry_text(literal))))


def profile_from_json_case(tmp_path: Path, literal: str, kind: str) -> str:
    return str(_raised(FormatError, lambda: profile_from_json(profile_text(literal))))


def parse_profile_md_case(tmp_path: Path, literal: str, kind: str) -> str:
    text, line = profile_md(literal)
    error = _raised(FormatError, lambda: parse_profile_md(text))
    assert isinstance(error, FormatError) and error.line == line
    # The tolerant reader falls back, and says why in its first note.
    assert str(error) in read_profile_md(text).notes[0]
    return str(error)


def read_jsonl_case(tmp_path: Path, literal: str, kind: str) -> str:
    trace = read_jsonl(call_trace(tmp_path, literal))
    assert trace.skipped == 1
    return _note(trace.notes, "line 2: ")


def read_trace_jsonl_case(tmp_path: Path, literal: str, kind: str) -> str:
    trace = read_trace(call_trace(tmp_path, literal))
    assert trace.skipped == 1
    return _note(trace.notes, "line 2: ")


def read_torch_trace_case(tmp_path: Path, literal: str, kind: str) -> str:
    path = torch_trace(tmp_path, literal)
    if kind in SHOWN:  # the event is skipped, with a note
        return _note(read_torch_trace(path).notes, "event ")
    message = str(_raised(InputError, lambda: read_torch_trace(path)))
    assert str(path) in message
    return message


def read_trace_torch_case(tmp_path: Path, literal: str, kind: str) -> str:
    path = torch_trace(tmp_path, literal)
    if kind in SHOWN:
        return _note(read_trace(path).notes, "event ")
    # Format detection decodes the document whole: it names the problem, not
    # "unrecognized content".
    message = str(_raised(InputError, lambda: read_trace(path)))
    assert str(path) in message
    return message


def read_flashinfer_lines_case(tmp_path: Path, literal: str, kind: str) -> str:
    trace = read_flashinfer(flashinfer_lines(tmp_path, literal))
    assert trace.skipped == 1
    return _note(trace.notes, "line 1: ")


def read_flashinfer_bundle_case(tmp_path: Path, literal: str, kind: str) -> str:
    path = flashinfer_bundle(tmp_path, literal)
    if kind in SHOWN:
        trace = read_flashinfer(path)
        assert trace.skipped == 1
        return _note(trace.notes, "workload 0: ")
    message = str(_raised(InputError, lambda: read_flashinfer(path)))
    assert str(path) in message
    return message


def diagnosis_from_json_case(tmp_path: Path, literal: str, kind: str) -> str:
    return str(_raised(FormatError, lambda: diagnosis_from_json(diagnosis_text(literal))))


def history_jsonl_case(tmp_path: Path, literal: str, kind: str) -> str:
    return history(tmp_path, literal, "jsonl")


def history_json_case(tmp_path: Path, literal: str, kind: str) -> str:
    return history(tmp_path, literal, "json")


# For each reader: what its message says for an integer too long, for nesting too deep, and
# for a value that is not finite ({} is what the field reads as: inf or nan).
READERS: dict[str, tuple[Callable[[Path, str, str], str], str, str, str]] = {
    "bench.read_rows": (
        read_rows_case,
        DIGITS,
        "Expected a JSON object, got structures nested too deep to read",
        "median: Expected a finite number >= 0, got {}",
    ),
    "bench.load_ceilings": (
        load_ceilings_case,
        DIGITS,
        TOO_DEEP,
        "copy_bytes_per_s: Expected a finite number > 0, got {}",
    ),
    "catalog.entry_from_json": (
        entry_from_json_case,
        DIGITS,
        TOO_DEEP,
        "value: Expected a finite number, got {}",
    ),
    "workload.profile_from_json": (
        profile_from_json_case,
        DIGITS,
        TOO_DEEP,
        "time_us: Expected a finite number >= 0 or None, got {}",
    ),
    "workload.parse_profile_md": (
        parse_profile_md_case,
        DIGITS,
        "Expected JSON cells of a few levels, got one nested too deeply",
        "Expected a finite number, got {}",
    ),
    "workload.read_jsonl": (
        read_jsonl_case,
        "line 2: " + DIGITS,
        "line 2: Expected a JSON object, got JSON nested too deeply",
        "line 2: duration_us: Expected a duration in [0, 1e12] us, got {}",
    ),
    "workload.read_trace (jsonl)": (
        read_trace_jsonl_case,
        "line 2: " + DIGITS,
        "line 2: Expected a JSON object, got JSON nested too deeply",
        "line 2: duration_us: Expected a duration in [0, 1e12] us, got {}",
    ),
    "workload.read_torch_trace": (
        read_torch_trace_case,
        DIGITS,
        TOO_DEEP,
        "dur: Expected a duration in [0, 1e12] us, got {}",
    ),
    "workload.read_trace (profiler)": (
        read_trace_torch_case,
        DIGITS,
        TOO_DEEP,
        "dur: Expected a duration in [0, 1e12] us, got {}",
    ),
    "workload.read_flashinfer (jsonl)": (
        read_flashinfer_lines_case,
        "line 1: Expected a JSON object, got invalid JSON (" + DIGITS + ")",
        "line 1: Expected a JSON object, got invalid JSON (" + TOO_DEEP + ")",
        "line 1: sm_scale: Expected a finite number, got {}",
    ),
    "workload.read_flashinfer (bundle)": (
        read_flashinfer_bundle_case,
        "Expected a FlashInfer-Bench workload file, got {path}: " + DIGITS,
        "Expected a FlashInfer-Bench workload file, got {path}: " + TOO_DEEP,
        "workload 0: axes: Expected an integer for var axis batch_size, got {}",
    ),
    "diagnose.diagnosis_from_json": (
        diagnosis_from_json_case,
        DIGITS,
        TOO_DEEP,
        "Expected an integer, got {} @ $.summary.experiments",
    ),
    # The history readers skip what they cannot read and list it in log.unread; a JSONL
    # history counts its lines that are not JSON (a log may hold thousands).
    "experiments history (jsonl)": (
        history_jsonl_case,
        "history.jsonl: 1 line is not JSON; skipped",
        "history.jsonl: 1 line is not JSON; skipped",
        "history.jsonl: line 2: Expected latency_us within the float range, got {}; skipped",
    ),
    "experiments history (json)": (
        history_json_case,
        "history.json: not valid JSON (ValueError: " + DIGITS + ")",
        "history.json: not valid JSON (ValueError: " + TOO_DEEP,
        "history.json: record 2: Expected latency_us within the float range, got {}; skipped",
    ),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("reader", list(READERS))
def test_hostile_json_is_refused_with_kernelopt_words(
    tmp_path: Path, reader: str, kind: str
) -> None:
    case, digits, deep, not_finite = READERS[reader]
    if reader.startswith("experiments history") and kind == "NaN":
        # A history writes NaN for a run that measured nothing: read as no latency.
        summary = case(tmp_path, HOSTILE[kind], kind)
        assert summary.endswith("latencies [10.0, None]")
        assert "unread []" in summary
        return
    message = case(tmp_path, HOSTILE[kind], kind)
    if kind == "5000-digit integer":
        wanted = digits
    elif kind == "nested 100000 deep":
        wanted = deep
    else:
        wanted = not_finite.format(SHOWN[kind])
    wanted = wanted.replace("{path}", str(tmp_path / "bundle.json"))
    assert wanted in message
    # Python's own words never reach the user.
    assert "sys.set_int_max_str_digits" not in message
    assert "maximum recursion depth" not in message


def test_the_integer_limit_is_named_for_bytes_too() -> None:
    # profile_from_json and diagnosis_from_json take bytes as well as text.
    text = profile_text(HOSTILE["5000-digit integer"]).encode()
    with pytest.raises(FormatError, match=DIGITS):
        profile_from_json(text)


def test_a_row_cut_short_names_where_its_json_stops(tmp_path: Path) -> None:
    # A run killed mid-write leaves its last row cut: the message says where it stops.
    row = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "mla_decode.jsonl"
    first = row.read_text(encoding="utf-8").splitlines()[0]
    cut = tmp_path / "rows.jsonl"
    cut.write_text(first[:300] + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as error:
        read_rows(cut)
    assert str(error.value).startswith(f"{cut}:1: Expected a JSON object, got ")
    assert str(error.value).endswith("(column 301)")
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"op": "softmax", "args": {"x": {"shape": [4\n', encoding="utf-8")
    note = _note(read_jsonl(calls).notes, "line 1: ")
    assert "invalid JSON (" in note and "(column 45)" in note


def test_a_rows_file_refuses_a_key_given_twice(tmp_path: Path) -> None:
    # json keeps the last value of a key given twice; a hand-edited row may hold both.
    row = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "mla_decode.jsonl"
    first = row.read_text(encoding="utf-8").splitlines()[0]
    twice = tmp_path / "rows.jsonl"
    twice.write_text(first[:-1] + ', "median": 1.0}\n', encoding="utf-8")
    with pytest.raises(FormatError) as error:
        read_rows(twice)
    assert str(error.value) == (
        f"{twice}:1: Expected a JSON object with each key once, got 'median' twice"
    )
