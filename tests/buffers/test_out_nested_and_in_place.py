"""resolve_out and check_out look inside lists, tuples and mappings of inputs, take an exact
alias of the one input named in_place, and say how to proceed with a strided out."""

from __future__ import annotations

import re

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.buffers import BufferPool, BufferScope, check_out, resolve_out

F32 = torch.float32
OVERLAP = "Expected out that shares no memory with the kernel's inputs, got a tensor overlapping "


@pytest.mark.parametrize(
    ("inputs", "label"),
    [
        (lambda k, v: [[k]], "input 0[0]"),
        (lambda k, v: ([k, v],), "input 0[1]"),
        (lambda k, v: {"pages": [k, v]}, "input 'pages'[1]"),
        (lambda k, v: {"pages": {"v": v}}, "input 'pages'['v']"),
    ],
    ids=["list-in-list", "list-in-tuple", "list-in-dict", "dict-in-dict"],
)
def test_a_tensor_nested_in_the_inputs_is_checked(inputs: object, label: str) -> None:
    # Nested tensors were skipped: out=v passed though the kernel reads v.
    k, v = torch.zeros(4, 8), torch.zeros(4, 8)
    out = k if label == "input 0[0]" else v
    given = inputs(k, v)  # type: ignore[operator]
    for check in (resolve_out, check_out):
        with pytest.raises(InputError, match=re.escape(OVERLAP + label)):
            check(out, (4, 8), F32, "cpu", inputs=given)


def test_an_exact_alias_of_the_in_place_input_is_taken() -> None:
    q, k = torch.randn(2, 3, 8), torch.randn(2, 3, 8)
    with pytest.raises(InputError, match=re.escape("(in_place='q' if the kernel updates it")):
        resolve_out(q, q.shape, F32, "cpu", inputs={"q": q, "k": k})
    assert resolve_out(q, q.shape, F32, "cpu", inputs={"q": q, "k": k}, in_place="q") is q
    assert check_out(q, q.shape, F32, "cpu", inputs=(q, k), in_place=0) is q
    scope = BufferScope("rope", pool=BufferPool())
    assert scope.resolve_out(q, q.shape, F32, "cpu", inputs={"q": q}, in_place="q") is q
    # Still refused: another input, or part of the in-place one.
    with pytest.raises(InputError, match=re.escape(OVERLAP + "input 'k'")):
        resolve_out(k, k.shape, F32, "cpu", inputs={"q": q, "k": k}, in_place="q")
    with pytest.raises(InputError, match=re.escape("Expected out that is input 'q' itself")):
        resolve_out(q[:1], (1, 3, 8), F32, "cpu", inputs={"q": q}, in_place="q")


def test_an_in_place_that_names_no_input_is_refused_without_an_out() -> None:
    why = "in_place: Expected the key or index of one input tensor of inputs ('q'), got 'x'"
    with pytest.raises(InputError, match=re.escape(why)):
        resolve_out(None, (2,), F32, "cpu", inputs={"q": torch.zeros(2)}, in_place="x")
    with pytest.raises(InputError, match=r"^in_place: .*\(0\), got 1$"):
        check_out(torch.zeros(2), (2,), F32, "cpu", inputs=torch.ones(2), in_place=1)


def test_a_strided_view_says_how_to_proceed() -> None:
    q = torch.randn(2, 3, 128)
    with pytest.raises(InputError, match="copy the result into the strided view"):
        resolve_out(q[..., 64:], (2, 3, 64), F32, "cpu", inputs={"q": q}, in_place="q")
