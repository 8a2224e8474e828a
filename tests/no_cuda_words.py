"""What ``kernelopt.bench.timer.no_cuda_reason`` says where torch sees no CUDA device, for
the tests of every refusal that ends with it (``got none: <reason>``); the ``why_no_cuda``
fixture (tests/conftest.py) sets up each case and gives its words."""

from __future__ import annotations

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
