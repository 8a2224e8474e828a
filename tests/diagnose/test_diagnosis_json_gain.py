"""A new best's gain read back from diagnosis JSON: a finite number or null, never NaN or
Infinity (which Python's json reads as floats)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernelopt._errors import FormatError
from kernelopt.diagnose import diagnose, diagnosis_from_dict, diagnosis_from_json
from kernelopt.diagnose.jsonio import diagnosis_to_dict

HEALTHY = Path(__file__).resolve().parents[2] / "examples" / "logs" / "healthy-run"


@pytest.fixture(scope="module")
def written() -> dict[str, Any]:
    data = diagnosis_to_dict(diagnose(HEALTHY))
    assert len(data["summary"]["trajectory"]) >= 2
    return data


def _with_gain(data: dict[str, Any], index: int, gain: object) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(data))
    copy["summary"]["trajectory"][index]["gain"] = gain
    return copy


@pytest.mark.parametrize(
    ("literal", "shown"),
    [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf"), ("1e999", "inf")],
)
def test_a_gain_that_is_not_finite_is_refused(
    written: dict[str, Any], literal: str, shown: str
) -> None:
    text = json.dumps(_with_gain(written, 1, "GAIN")).replace('"GAIN"', literal)
    with pytest.raises(FormatError) as raised:
        diagnosis_from_json(text)
    assert str(raised.value) == (
        "Expected a diagnosis as written by diagnosis_to_dict, got Expected a finite gain or "
        f"null, got {shown} @ $.summary.trajectory[1].gain"
    )
    with pytest.raises(FormatError, match=r"trajectory\[1\]\.gain"):
        diagnosis_from_dict(json.loads(text))


@pytest.mark.parametrize("gain", [None, 0.0, 0.25, 3])
def test_a_finite_gain_or_none_reads_back(written: dict[str, Any], gain: float | None) -> None:
    data = _with_gain(written, 0, gain)
    read = diagnosis_from_json(json.dumps(data))
    assert read.summary.trajectory[0].gain == gain
    assert diagnosis_to_dict(read) == data
