"""The public entry points of kernelopt.diagnose: typed errors for wrong arguments, thresholds
checked at construction, and an ``__all__`` that lists what the package offers."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

import kernelopt.diagnose as diagnose_pkg
from kernelopt._errors import FormatError, InputError
from kernelopt.diagnose import (
    CorrectnessWallParams,
    DiagnoseParams,
    LocalMinimumParams,
    MissingFundamentalParams,
    OverEngineeringParams,
    WrongBottleneckParams,
    diagnose,
    diagnose_log,
    diagnosis_from_dict,
    diagnosis_from_json,
    diagnosis_to_dict,
    load_catalog,
    render_plan,
)
from kernelopt.diagnose.plan import entry_links

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "logs" / "healthy-run"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: diagnose(EXAMPLE, catalog=42), "catalog: Expected catalog as a Catalog"),
        (lambda: diagnose(EXAMPLE, limits={}), "limits: Expected limits as a ReadLimits"),
        (lambda: diagnose(EXAMPLE, limits={"max_files": 1}), "limits: Expected limits"),
        (lambda: diagnose(123), "path: Expected a path"),
        (lambda: diagnose(EXAMPLE, until="3"), "Expected until as an experiment number"),
        (lambda: load_catalog(3.5), "catalog: Expected catalog as a Catalog"),
        (lambda: diagnose_log("log"), "log: Expected log as an ExperimentLog"),
        (lambda: render_plan(None), "diagnosis: Expected a Diagnosis"),
        (lambda: render_plan(diagnose(EXAMPLE), links=[1]), "Expected links as a mapping"),
        (lambda: diagnosis_to_dict({}), "diagnosis: Expected a Diagnosis"),
        (lambda: diagnosis_from_json(None), "text: Expected JSON text"),
        (lambda: entry_links(None, "plan.md"), "diagnosis: Expected a Diagnosis"),
    ],
)
def test_wrong_arguments_raise_input_error(call: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        call()


@pytest.mark.parametrize("data", ["{}", '{"findings": [], "checks": []}'])
def test_json_missing_the_diagnosis_keys_is_a_format_error(data: str) -> None:
    with pytest.raises(FormatError, match="Expected a diagnosis as written by diagnosis_to_dict"):
        diagnosis_from_json(data)


def test_json_written_by_diagnose_still_reads_back() -> None:
    diagnosis = diagnose(EXAMPLE)
    assert diagnosis_from_dict(diagnosis_to_dict(diagnosis)) == diagnosis


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: LocalMinimumParams(min_experiments=0), "min_experiments"),
        (lambda: LocalMinimumParams(min_gain=1.5), "min_gain"),
        (lambda: LocalMinimumParams(min_gain="5%"), "min_gain"),
        (lambda: CorrectnessWallParams(min_failures=True), "min_failures"),
        (lambda: WrongBottleneckParams(memory_bound_dram_pct=float("nan")), "memory_bound"),
        (lambda: OverEngineeringParams(min_new_branches=0), "min_new_branches"),
        (lambda: OverEngineeringParams(min_line_growth=-1.0), "min_line_growth"),
        (lambda: MissingFundamentalParams(family=3), "family"),
        (lambda: DiagnoseParams(local_minimum=5), "local_minimum"),
    ],
)
def test_thresholds_are_checked_with_input_error(build: Any, field: str) -> None:
    with pytest.raises(InputError, match=rf"^{field}\w*: Expected "):
        build()


def test_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(diagnose_pkg).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and type(value).__name__ != "_Feature"  # ``from __future__ import annotations``
    }
    assert public == set(diagnose_pkg.__all__)
    assert all(getattr(diagnose_pkg, name) is not None for name in diagnose_pkg.__all__)
