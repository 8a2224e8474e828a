"""kernelopt: composable primitives for optimizing GPU kernels.

Importing :mod:`kernelopt` is cheap and never imports torch or triton: the catalog,
diagnosis and workload tools work on machines without a GPU stack. Submodules load on
first access (``kernelopt.bench``) or by ``from kernelopt import bench``.
"""

import importlib

from kernelopt._errors import (
    CatalogError,
    DeviceError,
    FormatError,
    InputError,
    KernelOptError,
)

# Not ``from typing import TYPE_CHECKING``: ``python -m kernelopt`` imports this package
# before ``__main__`` drops the working directory from sys.path, so a ``typing.py`` in a
# log directory the tool runs in would be imported (and run) in place of the library's.
# Type checkers treat this name as True.
TYPE_CHECKING = False

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from typing import Any

    from kernelopt import (
        bench,
        buffers,
        catalog,
        diagnose,
        experiments,
        kernels,
        workflow,
        workload,
    )

__version__ = "0.1.0"

_SUBMODULES = (
    "bench",
    "buffers",
    "catalog",
    "diagnose",
    "experiments",
    "kernels",
    "workflow",
    "workload",
)

__all__ = [
    "CatalogError",
    "DeviceError",
    "FormatError",
    "InputError",
    "KernelOptError",
    "__version__",
    "bench",
    "buffers",
    "catalog",
    "diagnose",
    "experiments",
    "kernels",
    "workflow",
    "workload",
]


def __getattr__(name: str) -> "Any":
    # Lazy submodules keep `import kernelopt` free of torch and triton.
    if name in _SUBMODULES:
        return importlib.import_module(f"kernelopt.{name}")
    raise AttributeError(f"module 'kernelopt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))
