"""Measurement reads its samples as judge does: a 1-D numpy array or CPU tensor is a list
of times, stored as a tuple of floats, and what is no list of times is refused in the same
words."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from kernelopt._errors import InputError
from kernelopt.bench import Measurement, judge


@pytest.mark.parametrize(
    "samples",
    [
        torch.tensor([1.0, 2.0, 3.0]),
        torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16),
        torch.tensor([1.0, 2.0, 3.0], requires_grad=True),
        torch.tensor([1, 2, 3]),
        np.array([1.0, 2.0, 3.0], dtype=np.float32),
        np.array([1, 2, 3]),
        [1, 2.0, np.float64(3.0)],
        (value for value in [1.0, 2.0, 3.0]),
    ],
    ids=[
        "float32 tensor",
        "bfloat16 tensor",
        "tensor with grad",
        "int tensor",
        "float32 array",
        "int array",
        "list",
        "generator",
    ],
)
def test_samples_are_stored_as_a_tuple_of_floats(samples: object) -> None:
    stored = Measurement(samples=samples).samples  # type: ignore[arg-type]
    assert stored == (1.0, 2.0, 3.0)
    assert type(stored) is tuple
    assert all(type(value) is float for value in stored)


@pytest.mark.parametrize(
    ("samples", "message"),
    [
        (np.ones((2, 2)), r"Expected a 1-D sequence of samples, got an array of shape \(2, 2\)"),
        (torch.ones(2, 3), r"Expected a 1-D sequence of samples, got an array of shape \(2, 3\)"),
        (
            [[1.0, 2.0]],
            r"Expected a 1-D sequence of samples, got a nested sequence \(\[1.0, 2.0\]\)",
        ),
        ([1.0, torch.tensor(2.0)], r"Expected numeric samples, got tensor\(2.\)"),
        (np.array([True, False]), r"Expected numeric samples, got np.True_"),
        (
            torch.tensor([1.0, 2.0]).to_sparse(),
            r"Expected a dense tensor \(tensor.to_dense\(\)\), got a tensor of layout "
            r"torch.sparse_coo",
        ),
    ],
    ids=["2-D array", "2-D tensor", "nested list", "tensor item", "bool array", "sparse tensor"],
)
def test_what_is_no_sample_list_is_refused_as_judge_refuses_it(
    samples: object, message: str
) -> None:
    with pytest.raises(InputError, match=f"^samples: {message}$"):
        Measurement(samples=samples)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=f"^baseline: {message}$"):
        judge(samples, [1.0, 2.0, 3.0])  # type: ignore[arg-type]


def test_an_int_no_float_holds_is_refused_in_words() -> None:
    # float(10**400) raised a bare OverflowError.
    with pytest.raises(
        InputError, match=r"^samples: Expected finite samples >= 0, got an int beyond the float"
    ):
        Measurement(samples=[1.0, 10**400])


def test_a_measurement_of_a_list_imports_no_numpy() -> None:
    code = (
        "import sys; from kernelopt.bench import Measurement; "
        "m = Measurement(samples=[1.0, 2.0]); print('numpy' in sys.modules, m.samples)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False (1.0, 2.0)"
