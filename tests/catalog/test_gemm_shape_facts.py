"""A GEMM's m, n and k are shape facts the catalog takes, as the workload profile gives them."""

from __future__ import annotations

import pytest

from kernelopt.catalog import SHAPE_FACTS
from kernelopt.cli import main
from kernelopt.workload import Call, TensorArg, profile_calls, shape_facts


def _mm(m: int) -> Call:
    return Call(
        op="mm",
        args=(
            TensorArg(name="self", shape=(m, 64), dtype="float16"),
            TensorArg(name="mat2", shape=(64, 96), dtype="float16"),
        ),
    )


def test_the_facts_of_a_gemm_profile_are_catalog_shape_facts() -> None:
    facts = shape_facts(profile_calls([_mm(1)] * 4 + [_mm(4097)]))
    assert {"m", "n", "k"} <= set(facts)
    assert set(facts) <= set(SHAPE_FACTS)


def test_match_takes_a_gemv_stated_as_m_equal_to_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "match", "--shape", "m=1", "--family", "gemm"]) == 0
    assert "Expected a shape fact name" not in capsys.readouterr().err
