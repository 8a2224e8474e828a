"""resolve_out / check_out: the caller's out= is checked; otherwise a buffer is provided."""

from __future__ import annotations

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.buffers import BufferPool, BufferScope, check_out, resolve_out

BF16 = torch.bfloat16


def test_a_fitting_out_is_returned_as_is() -> None:
    out = torch.empty(2, 3, dtype=BF16)
    assert resolve_out(out, (2, 3), BF16, "cpu") is out
    assert check_out(out, torch.Size([2, 3]), BF16, torch.device("cpu")) is out


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (
            torch.empty(2, 3, dtype=torch.float16),
            "Expected out of dtype torch.bfloat16, got torch.float16",
        ),
        (torch.empty(2, 4, dtype=BF16), "Expected out of shape (2, 3), got (2, 4)"),
        (torch.empty(2, 3, dtype=BF16, device="meta"), "Expected out on device cpu, got meta"),
        (
            torch.empty(3, 2, dtype=BF16).t(),
            "Expected out to be contiguous, got strides (1, 2): kernels write contiguous rows; "
            "pass a contiguous out (or None) and copy the result into the strided view",
        ),
        ([[0.0] * 3] * 2, "Expected out to be a torch.Tensor or None, got list"),
    ],
    ids=["dtype", "shape", "device", "layout", "type"],
)
def test_a_mismatched_out_is_refused(out: object, message: str) -> None:
    with pytest.raises(InputError) as raised:
        resolve_out(out, (2, 3), BF16, "cpu")  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_the_name_appears_in_the_message() -> None:
    lse = torch.empty(4, dtype=torch.float16)
    with pytest.raises(
        InputError, match=r"^Expected lse of dtype torch.float32, got torch.float16$"
    ):
        resolve_out(lse, (4,), torch.float32, "cpu", name="lse")


def test_without_out_a_scope_gives_its_persistent_buffer() -> None:
    scope = BufferScope("k", pool=BufferPool())
    a = resolve_out(None, (2, 3), BF16, "cpu", scope=scope)
    assert resolve_out(None, (2, 3), BF16, "cpu", scope=scope) is a
    assert scope.resolve_out(None, (2, 3), BF16, "cpu") is a
    assert scope.resolve_out(None, (4,), torch.float32, "cpu", name="lse").shape == (4,)
    assert [h.name for h in scope.buffers()] == ["out", "lse"]


def test_without_out_or_scope_each_call_gets_its_own_tensor() -> None:
    a = resolve_out(None, (2, 3), BF16, "cpu")
    b = resolve_out(None, (2, 3), BF16, "cpu")
    assert a.shape == (2, 3) and a.dtype == BF16 and a.data_ptr() != b.data_ptr()
    with pytest.raises(InputError, match="Expected a shape of non-negative ints"):
        resolve_out(None, (2, -3), BF16, "cpu")


def test_a_fresh_buffer_larger_than_torch_can_address_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"shape: Expected a shape of at most 2\*\*63 - 1 bytes"):
        resolve_out(None, (1 << 40, 1 << 40), torch.float32, "cpu")
    with pytest.raises(InputError, match=r"^shape: Expected dims of at most 2\*\*63 - 1, got"):
        resolve_out(None, (0, 1 << 63), torch.float32, "cpu")
