"""A benchmark row's op and impl are names every reader selects by: empty ones are refused
when the row is made (and so when a file holding one is read), not written."""

from __future__ import annotations

import attrs
import pytest

from kernelopt._errors import InputError
from kernelopt.bench import BenchRow


def _row(**change: object) -> BenchRow:
    base = dict(
        op="copy",
        impl="v1",
        config={"n": 1},
        mode="cold",
        cache="flush",
        backend="cuda-events",
        unit="us",
        n=10,
        median=1.0,
        p20=0.9,
        p80=1.1,
        iqr=0.2,
        min=0.8,
    )
    base.update(change)
    return BenchRow(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["op", "impl"])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_or_blank_name_is_refused(field: str, value: str) -> None:
    with pytest.raises(InputError, match=rf"{field}: Expected a non-empty name, got '{value}'"):
        _row(**{field: value})


def test_a_named_row_is_made() -> None:
    row = _row()
    assert (row.op, row.impl) == ("copy", "v1")
    with pytest.raises(InputError, match="impl: Expected a non-empty name"):
        attrs.evolve(row, impl="")
