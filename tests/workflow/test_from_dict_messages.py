"""`from_dict` says what is wrong with the data in the library's words."""

from __future__ import annotations

from typing import Any

import pytest

from kernelopt import InputError
from kernelopt.workflow import OptimizationTask, from_dict

TASK: dict[str, Any] = {
    "kernel": "k", "current": "a", "new_version": "b", "bottleneck": "x",
    "optimizations": [{"what": "fuse"}],
}  # fmt: skip


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {**TASK, "extra": 1, "more": 2},
            "data: Expected only OptimizationTask fields, got unknown keys extra, more",
        ),
        (
            {**TASK, "constraints": {"language": "triton", "zz": 5}},
            "constraints: Expected only Constraints fields, got unknown keys zz",
        ),
        (
            {k: v for k, v in TASK.items() if k != "kernel"},
            "data: Expected a value for kernel, got none",
        ),
        (
            {**TASK, "constraints": [1]},
            "constraints: Expected a dict of a record's fields, got list",
        ),
        (
            "text",
            "data: Expected a dict of OptimizationTask fields (to_dict's output), got str",
        ),
    ],
    ids=["unknown keys", "nested unknown keys", "missing field", "list for a record", "text"],
)
def test_what_is_wrong_is_named_without_the_converters_words(data: Any, message: str) -> None:
    with pytest.raises(InputError) as refused:
        from_dict(data, OptimizationTask)
    assert str(refused.value) == message
    assert "Error" not in str(refused.value)


def test_the_record_class_and_the_data_given_in_the_wrong_order_are_named() -> None:
    with pytest.raises(InputError) as refused:
        from_dict(OptimizationTask, TASK)  # type: ignore[arg-type]
    assert str(refused.value) == (
        "cls: Expected a kernelopt record class (OptimizationTask, NewVersion, "
        "ProfileReport...), got dict"
    )
