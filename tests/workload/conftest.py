"""Shared fixtures of the workload tests: the data folder and clean registries."""

from __future__ import annotations

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
