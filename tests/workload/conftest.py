"""Shared fixtures of the workload tests: the data folder and clean registries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelopt.workload import shortcuts, signatures

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def data() -> Path:
    """tests/workload/data."""
    return DATA


@pytest.fixture(autouse=True)
def clean_registries() -> Iterator[None]:
    """Tests that register signatures or rules do not leak them into other tests."""
    saved_signatures = list(signatures._USER)
    saved_rules = list(shortcuts._USER)
    yield
    signatures._USER[:] = saved_signatures
    shortcuts._USER[:] = saved_rules


def mla_call_record(
    bound: int | None,
    lengths: list[int] | None,
    *,
    batch: int | None = None,
    duration_us: float = 10.0,
) -> str:
    """One JSONL record of an MLA decode call: ``q`` of ``batch`` sequences (``len(lengths)``,
    or 4 without lengths), ``cache_seqlens`` with its values summary where ``lengths`` is
    given, and ``max_seqlen`` where ``bound`` is."""
    if batch is None:
        batch = 4 if lengths is None else len(lengths)
    seqlens: dict[str, object] = {"shape": [batch], "dtype": "int32"}
    if lengths is not None:
        seqlens["values"] = {
            "min": min(lengths),
            "max": max(lengths),
            "mean": sum(lengths) / len(lengths),
        }
    args: dict[str, object] = {
        "q": {"shape": [batch, 1, 16, 576], "dtype": "bfloat16"},
        "cache_seqlens": seqlens,
    }
    if bound is not None:
        args["max_seqlen"] = bound
    return json.dumps({"op": "mla_decode", "args": args, "duration_us": duration_us})
