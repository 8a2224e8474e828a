"""The gather-index-select entry's code does what it says: the same values as torch.gather."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import torch

from kernelopt.catalog import Catalog


def _pick() -> Callable[..., Any]:
    code = Catalog.builtin().get("gather-index-select").implementation
    block = re.search(r"```python\n(.*?)```", code, re.DOTALL)
    namespace: dict[str, Any] = {"torch": torch}
    exec(block.group(1) if block else code, namespace)  # the entry's own text, a module we ship
    return namespace["pick"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("shape", "dim", "index_shape"),
    [
        ((8, 50), 1, (8, 5)),
        ((8, 50), 1, (3, 5)),  # fewer index rows than input rows: the input is cut first
        ((40, 6), 0, (7, 6)),
        ((4, 5, 30), 2, (4, 2, 9)),
        ((4, 5, 30), 1, (1, 3, 30)),
    ],
)
def test_pick_equals_gather_for_shared_and_materialized_indices(
    shape: tuple[int, ...], dim: int, index_shape: tuple[int, ...]
) -> None:
    pick = _pick()
    gen = torch.Generator().manual_seed(len(shape) * 100 + dim)
    x = torch.randn(*shape, generator=gen)
    view = [1] * len(shape)
    view[dim] = index_shape[dim]
    v = torch.randint(0, shape[dim], (index_shape[dim],), generator=gen)
    shared = v.view(view).expand(index_shape)
    assert torch.equal(pick(x, dim, shared), torch.gather(x, dim, shared))
    materialized = shared.contiguous()
    assert torch.equal(pick(x, dim, materialized), torch.gather(x, dim, materialized))
    rows_differ = torch.randint(0, shape[dim], index_shape, generator=gen)
    assert torch.equal(pick(x, dim, rows_differ), torch.gather(x, dim, rows_differ))
