"""Wrong arguments to kernelopt.buffers name the user's own mistake, in one line."""

from __future__ import annotations

import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.buffers import BufferPool, BufferScope, capture_graph, check_out, resolve_out

F32 = torch.float32


def test_check_out_says_it_takes_a_tensor() -> None:
    # None asks resolve_out for a buffer; check_out checks a given tensor, and says so.
    with pytest.raises(InputError, match=r"^Expected out to be a torch.Tensor, got NoneType$"):
        check_out(None, (2,), F32, "cpu")
    with pytest.raises(InputError, match=r"^Expected lse to be a torch.Tensor, got list$"):
        check_out([0.0, 0.0], (2,), F32, "cpu", name="lse")


def test_resolve_out_still_names_none_among_what_it_takes() -> None:
    with pytest.raises(InputError, match=r"^Expected out to be a torch.Tensor or None, got list$"):
        resolve_out([0.0, 0.0], (2,), F32, "cpu")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^Expected out to be a torch.Tensor or None, got list$"):
        BufferScope("review", pool=BufferPool()).resolve_out(
            [0.0, 0.0],  # type: ignore[arg-type]
            (2,),
            F32,
            "cpu",
        )


def test_capture_graph_names_a_launcher_that_is_not_callable() -> None:
    # A CPU tensor and, on most test machines, no CUDA: the launcher is still named first.
    with pytest.raises(InputError, match=r"^launcher: Expected a callable launcher, got int$"):
        capture_graph(5, torch.zeros(2))  # type: ignore[arg-type]


@pytest.mark.parametrize(("warmup", "shown"), [(True, "True"), (0, "0"), (1.5, "1.5")])
def test_capture_graph_names_a_wrong_warmup_before_the_device(warmup: object, shown: str) -> None:
    with pytest.raises(InputError, match=rf"^warmup: Expected warmup as an int >= 1, got {shown}$"):
        capture_graph(lambda x: x, torch.zeros(2), warmup=warmup)  # type: ignore[arg-type]
