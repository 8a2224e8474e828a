"""A dominant shape without a size guard names the arguments that set it apart.

When no cheap test of sizes tells the dominant shape from the others (the report shows
``guard: -``), the finding says which arguments the other shapes differ in, written as the
report writes sources: ``x.dtype``, ``mode``, ``arg1``.
"""

from __future__ import annotations

from pathlib import Path

from kernelopt.workload import (
    Call,
    ScalarArg,
    Shortcut,
    TensorArg,
    WorkloadProfile,
    find_shortcuts,
    profile_calls,
    read_profile_md,
    write_profile_md,
)
from kernelopt.workload.report import render_report


def _dominant(profile: WorkloadProfile) -> Shortcut:
    (found,) = [s for s in find_shortcuts(profile) if s.rule == "dominant-shape"]
    return found


def _softmax(*, dtype: str = "float32", mode: str = "fast path") -> Call:
    return Call(
        op="softmax",
        args=(
            TensorArg(name="x", shape=(4, 4096), dtype=dtype),
            ScalarArg(name="dim", value=-1),
            ScalarArg(name="mode", value=mode),
        ),
    )


def _decode(causal: bool) -> Call:
    # Positional arguments, as a torch trace without argument names records them.
    return Call(
        op="mla_decode",
        args=(
            TensorArg(name="arg0", shape=(32, 1, 128, 576), dtype="float16"),
            ScalarArg(name="arg1", value=causal),
        ),
    )


def test_a_scalar_argument_that_differs_is_named() -> None:
    profile = profile_calls([_softmax()] * 8 + [_softmax(mode="exact path")] * 2)
    found = _dominant(profile)
    assert found.guard == ""
    assert found.message.endswith(
        "they differ from it only in mode. A kernel specialized for it needs a guard on mode"
    )
    report = render_report(profile, [found])
    assert "needs a guard on mode\n    guard: -   catalog: " in report


def test_a_dtype_that_differs_is_named_with_its_tensor() -> None:
    found = _dominant(profile_calls([_softmax()] * 8 + [_softmax(dtype="float16")] * 2))
    assert found.guard == ""
    assert "they differ from it only in x.dtype. " in found.message
    assert found.message.endswith("needs a guard on x.dtype")


def test_a_positional_argument_is_named_by_its_position() -> None:
    found = _dominant(profile_calls([_decode(True)] * 8 + [_decode(False)] * 2))
    assert found.guard == ""
    assert "they differ from it only in arg1. " in found.message


def test_each_argument_that_differs_is_named_once_in_argument_order() -> None:
    calls = [_softmax()] * 8 + [_softmax(mode="exact path")] + [_softmax(dtype="float16")] * 2
    found = _dominant(profile_calls(calls))
    assert "they differ from it only in x.dtype and mode. " in found.message


def test_shapes_not_listed_are_not_claimed_to_differ_in_the_same_arguments() -> None:
    calls = [_softmax()] * 800 + [_softmax(mode=f"path {i}") for i in range(100)]
    profile = profile_calls(calls)
    (op,) = profile.ops
    assert op.other is not None
    found = _dominant(profile)
    assert (
        f"the listed ones differ from it only in mode ({op.other.args} are not listed: they "
        "may differ in more). A kernel specialized for it needs a guard on what sets it apart"
    ) in found.message


def test_a_profile_read_back_names_the_same_argument(tmp_path: Path) -> None:
    profile = profile_calls([_softmax()] * 8 + [_softmax(mode="exact path")] * 2)
    write_profile_md(profile, tmp_path / "workload_profile.md")
    again = _dominant(read_profile_md(tmp_path / "workload_profile.md"))
    assert again == _dominant(profile)
    assert "only in mode. " in again.message
