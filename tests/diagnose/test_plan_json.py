"""The plan form and the JSON form of a diagnosis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt._errors import FormatError, InputError
from kernelopt.diagnose import (
    Diagnosis,
    Finding,
    Pathology,
    diagnose,
    diagnosis_from_dict,
    diagnosis_from_json,
    render_plan,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "logs"


@pytest.fixture(scope="module")
def diagnosis() -> Diagnosis:
    return diagnose(EXAMPLES / "mla-decode-plateau")


def test_plan_has_the_seed_form(diagnosis: Diagnosis) -> None:
    plan = render_plan(diagnosis)
    assert plan == diagnosis.render_plan()
    checklist = [line for line in plan.splitlines() if line.startswith("- [")]
    assert [line[6:8] for line in checklist] == [f"{n}." for n in range(1, 10)]
    assert sum(line.startswith("- [x]") for line in checklist) == len(diagnosis.findings)
    assert "## Most likely root cause" in plan and "## Plan" in plan
    assert "(`split-kv-flash-decoding`)" in plan  # actions link catalog entries
    assert "[Split-KV Flash Decoding](optimizations/split-kv-flash-decoding.md)" in plan
    assert "(kernels/mla_decode.py:89)" in plan  # evidence keeps file:line


def test_json_round_trips(diagnosis: Diagnosis) -> None:
    text = diagnosis.to_json()
    assert diagnosis_from_json(text) == diagnosis
    data = json.loads(text)
    assert diagnosis_from_dict(data) == diagnosis
    data["findings"][0]["surprise"] = 1
    with pytest.raises(FormatError, match="Expected a diagnosis"):
        diagnosis_from_dict(data)
    with pytest.raises(FormatError):
        diagnosis_from_json("[1, 2]")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        # A string is no list of one-letter root causes.
        (lambda d: d.__setitem__("root_causes", "abc"), "root_causes"),
        (lambda d: d["findings"][0].__setitem__("missing", "abc"), "missing"),
        (lambda d: d["findings"][0].__setitem__("summary", 3), "a number as the summary"),
        (lambda d: d["findings"][0].__setitem__("experiments", [True]), "true as exp 1"),
        (lambda d: d["findings"][0].__setitem__("experiments", ["3"]), "'3' as exp 3"),
        (lambda d: d["findings"][0].__setitem__("experiments", [3.5]), "3.5 as exp 3"),
        (lambda d: d["summary"].__setitem__("experiments", "6"), "'6' experiments"),
        (lambda d: d["checks"][0].__setitem__("checked", 1), "1 as true"),
    ],
)
def test_json_values_are_not_coerced(diagnosis: Diagnosis, change: object, why: str) -> None:
    data = json.loads(diagnosis.to_json())
    change(data)  # type: ignore[operator]
    with pytest.raises(FormatError, match="Expected a diagnosis"):
        diagnosis_from_dict(data)


def test_json_numbers_keep_their_meaning(diagnosis: Diagnosis) -> None:
    # An integer where a float is stored (273 for 273.0) is the same number.
    data = json.loads(diagnosis.to_json())
    data["findings"][0]["confidence"] = 1
    assert diagnosis_from_dict(data).findings[0].confidence == 1.0


def test_records_refuse_a_string_for_a_list_and_a_non_integer_experiment() -> None:
    with pytest.raises(InputError, match="Expected a sequence of strings, got 'abc'"):
        Finding(pathology="local_minimum", summary="x", missing="abc")  # type: ignore[arg-type]
    for number in (3.5, "3", True):
        with pytest.raises(InputError, match="Expected experiment numbers"):
            Finding(pathology="local_minimum", summary="x", experiments=(number,))  # type: ignore[arg-type]
    assert Finding(pathology="local_minimum", summary="x", experiments=[3]).experiments == (3,)


def test_records_validate() -> None:
    with pytest.raises(InputError, match="confidence"):
        Finding(pathology="local_minimum", summary="x", confidence=1.5)
    with pytest.raises(ValueError):
        Finding(pathology="no_such_pathology", summary="x")
    assert (
        Pathology.OVERLOOKED_SHORTCUT.number == 9
        and Pathology.REPETITION_LOOP.label == "Repetition loop"
    )


def test_bad_arguments() -> None:
    with pytest.raises(InputError):
        diagnose(EXAMPLES / "healthy-run", params={"local_minimum": 3})  # type: ignore[arg-type]
    with pytest.raises(InputError):
        diagnose(EXAMPLES / "healthy-run", family="  ")
