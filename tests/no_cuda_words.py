"""What ``kernelopt.bench.timer.no_cuda_reason`` says where torch sees no CUDA device, for
the tests of every refusal that ends with it (``got none: <reason>``)."""

from __future__ import annotations

import pytest
import torch

BUILT_WITHOUT = (
    f"torch {torch.__version__} is built without CUDA; install a CUDA build of torch on a "
    "machine with an NVIDIA GPU"
)
SEES_NO_GPU = (
    f"torch {torch.__version__} (CUDA 12.8) sees no GPU (torch.cuda.is_available() is "
    "False); run it on a machine with an NVIDIA GPU, its driver loaded and the GPU visible "
    "to the process (nvidia-smi, CUDA_VISIBLE_DEVICES)"
)
NOT_INSTALLED = "torch is not installed; install a CUDA build of torch"

# Each case: the CUDA version torch reports (None for a CPU build) and the reason it gives;
# the test sets ``torch.version.cuda`` to the first.
WHY_NO_CUDA = pytest.mark.parametrize(
    ("cuda", "why"), [(None, BUILT_WITHOUT), ("12.8", SEES_NO_GPU)], ids=["cpu-build", "no-gpu"]
)
