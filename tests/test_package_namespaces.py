"""A public package shows its API, its modules and nothing it only imported for itself."""

from __future__ import annotations

import importlib
import types

import pytest

PACKAGES = [
    "kernelopt",
    "kernelopt.bench",
    "kernelopt.buffers",
    "kernelopt.catalog",
    "kernelopt.diagnose",
    "kernelopt.experiments",
    "kernelopt.kernels",
    "kernelopt.workflow",
    "kernelopt.workload",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_is_api_or_a_module(name: str) -> None:
    # `from __future__ import annotations` or `from typing import Any` in a package's
    # __init__ put `annotations` and `Any` among the names tab completion offers.
    package = importlib.import_module(name)
    api = set(getattr(package, "__all__", ()))
    stray = [
        attr
        for attr in dir(package)
        if not attr.startswith("_")
        and attr not in api
        and attr != "TYPE_CHECKING"
        and not isinstance(getattr(package, attr), types.ModuleType)
    ]
    assert stray == []
