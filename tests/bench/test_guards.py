"""Guards: poisoned outputs, cached results, work on the timed stream."""

from __future__ import annotations

import math

import pytest
import torch

from kernelopt._errors import DeviceError, InputError
from kernelopt.bench.guards import (
    check_responds_to_inputs,
    check_timed_stream,
    check_written,
    poison,
    poison_value,
    unwritten_count,
)
from kernelopt.bench.timer import cuda_available


@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        (torch.float32, math.nan),
        (torch.bfloat16, math.nan),
        (torch.int32, -(2**31)),
        (torch.int64, -(2**63)),
        (torch.uint8, 255),
    ],
)
def test_poison_values(dtype: torch.dtype, value: float) -> None:
    got = poison_value(dtype)
    if math.isnan(value):
        assert math.isnan(got)
    else:
        assert got == value


def test_bool_outputs_cannot_be_poisoned() -> None:
    with pytest.raises(InputError, match="floating or integer output dtype"):
        poison_value(torch.bool)


def test_poison_then_count_across_several_tensors() -> None:
    a, b = torch.zeros(10), torch.zeros(4, dtype=torch.int32)
    poison([a, b])
    assert unwritten_count({"a": a, "b": b}) == 14
    a[:6] = 1.0
    b[0] = 0
    assert unwritten_count([a, b]) == 4 + 3


def test_check_written_passes_a_complete_write() -> None:
    out = torch.zeros(8, 8)
    check_written(lambda: out.copy_(torch.randn(8, 8)), out)


def test_check_written_catches_a_partial_write() -> None:
    out = torch.zeros(8, 8)

    def half() -> None:
        out[:4] = 1.0

    with pytest.raises(InputError, match="Expected every output element written, got 32 of 64"):
        check_written(half, out)


def test_check_written_rejects_non_tensors() -> None:
    with pytest.raises(InputError, match="a tensor or a sequence of tensors"):
        check_written(lambda: None, "out")


def test_honest_function_responds_to_inputs() -> None:
    sets = [(torch.randn(16),), (torch.randn(16),)]
    check_responds_to_inputs(lambda x: x * 2, sets)


def test_cached_result_is_caught() -> None:
    cache: dict[str, torch.Tensor] = {}

    def cached(x: torch.Tensor) -> torch.Tensor:
        if "y" not in cache:
            cache["y"] = x * 2
        return cache["y"]

    sets = [(torch.randn(16),), (torch.randn(16),)]
    with pytest.raises(InputError, match="identical outputs for input sets 0 and 1"):
        check_responds_to_inputs(cached, sets)


def test_cached_result_written_into_outputs_is_caught() -> None:
    out = torch.empty(16)
    fixed = torch.randn(16)
    sets = [(torch.randn(16),), (torch.randn(16),)]
    with pytest.raises(InputError, match="a cached result"):
        check_responds_to_inputs(lambda x: out.copy_(fixed), sets, outputs=out)


def test_equal_input_sets_prove_nothing() -> None:
    x = torch.randn(16)
    with pytest.raises(InputError, match="input sets that differ"):
        check_responds_to_inputs(lambda v: v + 1, [(x,), (x.clone(),)])
    with pytest.raises(InputError, match="at least 2 input sets"):
        check_responds_to_inputs(lambda v: v, [(x,)])


def test_input_sets_may_hold_scalar_arguments() -> None:
    # A kernel takes a scale or a flag beside its tensors: the sets still compare.
    x = torch.randn(16)
    check_responds_to_inputs(lambda v, scale: v * scale, [(x, 0.5), (torch.randn(16), 0.5)])
    check_responds_to_inputs(lambda v, scale: v * scale, [(x, 0.5), (x.clone(), 2.0)])
    with pytest.raises(InputError, match="input set 1 equal to input set 0"):
        check_responds_to_inputs(lambda v, scale: v * scale, [(x, 0.5), (x.clone(), 0.5)])
    with pytest.raises(InputError, match="a cached result"):
        check_responds_to_inputs(lambda v, causal: v.sum() * 0, [(x, True), (x + 1, True)])


def test_stream_check_needs_cuda() -> None:
    if cuda_available():
        check_timed_stream(lambda: torch.ones(1024, device="cuda").sum())
    else:
        with pytest.raises(DeviceError, match="CUDA device"):
            check_timed_stream(lambda: None)


def test_an_output_left_poisoned_is_caught_as_unchanged() -> None:
    # NaN != NaN: a buffer never written, still NaN from its poisoning, read as an output
    # that changed with every input set.
    out = torch.full((4,), float("nan"))
    sets = [(torch.randn(4),), (torch.randn(4),)]
    with pytest.raises(InputError, match="identical outputs for input sets 0 and 1"):
        check_responds_to_inputs(lambda x: None, sets, outputs=out)
    # Values, NaN equal to NaN: one NaN moved is a different output.
    values = iter([torch.tensor([float("nan"), 1.0]), torch.tensor([1.0, float("nan")])])
    check_responds_to_inputs(lambda x: next(values), sets)


def test_an_int8_view_of_fp8_bytes_says_that_its_poison_is_fp8_minus_zero() -> None:
    # A quantizer writes -0.0 (0x80) for tiny negatives: the int8 poison, -128.
    y = torch.empty(2, 8, dtype=torch.float8_e4m3fn)
    values = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))
    values[0, 3] = -1e-6

    def quantize() -> None:
        y.copy_(values.to(torch.float8_e4m3fn))

    check_written(quantize, y)  # the fp8 tensor itself: poisoned with NaN, passes
    check_written(quantize, y.view(torch.uint8))  # 255 is a NaN of e4m3fn: passes
    with pytest.raises(InputError) as caught:
        check_written(quantize, y.view(torch.int8))
    message = str(caught.value)
    assert "got 1 of 16 still poisoned (-128, the poison of torch.int8: " in message
    assert "where these are the bytes of an fp8 output, written as -0.0 (0x80 in e4m3fn" in message
    assert "check the fp8 tensor itself, poisoned with NaN, or its bytes as uint8" in message
    assert message.endswith("the first at outputs[0, 3]")
